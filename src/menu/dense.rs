//! Dense vectors in the menu and their fusion with the built-in embedder (RUNTIME.md §1,
//! "Embedders and the threshold").
//!
//! A dense [`crate::embed::Embedder`] turns texts into L2-normalised vectors: the external
//! OpenAI-compatible endpoint (`embed::openai`) or the local model (`embed::local`).
//! The build embeds each skill's [`super::doc::IndexDoc::dense_text`] once per content hash
//! and writes the vectors beside the index (`out/menu.vec`, [`render_vectors`]); a turn is
//! embedded when it is asked. A skill's dense score is the mean of its parts' cosines with the
//! turn ([`combine`]), and scores are fused by a fixed weight ([`DENSE_WEIGHT`]) with a bonus
//! where the two halves agree ([`fuse`]): `s = (1 − β) · s_lexical + β · s_dense (+ bonus)`,
//! under the embedder id `lexical/4+<dense id>+fuse/4` ([`fused_id`]), which is what
//! thresholds are recorded for.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::OnceLock;

use super::doc::DensePart;

/// The fusion weight β of the dense score (part of the fused embedder's recipe, [`FUSION`]).
/// Chosen with [`AGREEMENT_BONUS`] and [`AGREEMENT_TOP`] on the tuning part of the menu
/// battery with all-MiniLM-L6-v2 (`benches/menu_fusion_rules.py --agreement` on the scores
/// `benches/menu_fusion.rs` dumps; BENCHMARKS.md "Menu with the local model"): of β 0.5–0.9,
/// bonus 0–0.15 and top 3–20, the rules within one tuning turn of the most recall@3 at τ,
/// then the best tuning ranking. Under `lexical/4` the dense half wants more weight than
/// `fuse/3`'s 0.5. Weighted sums beat taking the turn's mean cosine off and per-turn z-scores
/// (which lose the absolute scale τ gates on).
pub const DENSE_WEIGHT: f32 = 0.8;

/// What a skill in both the lexical and the dense top [`AGREEMENT_TOP`] of a turn gains on its
/// fused score ([`fuse`]): the two halves agreeing is evidence neither gives alone (a vote of
/// two rankers, as CombMNZ rewards documents several systems retrieve: Fox & Shaw 1994,
/// "Combination of Multiple Searches"); it lifts the wanted skill above τ where the weighted
/// sum leaves it just under (τ is calibrated for the fused id, which names this recipe).
pub const AGREEMENT_BONUS: f64 = 0.08;

/// How deep in each half's ranking a skill must be for [`AGREEMENT_BONUS`].
pub const AGREEMENT_TOP: usize = 20;

/// The fusion recipe's id and version, part of the fused embedder's id: the weight
/// [`DENSE_WEIGHT`], the weighted sum of the two scores with the agreement bonus ([`fuse`]),
/// how a skill's part cosines make its dense score ([`combine`] over [`FUSED_PARTS`]), and
/// what the dense embedder reads of a turn ([`turn_text`]). `fuse/1` (no id suffix) embedded
/// the turn as typed; `fuse/2` scored the whole document alone, at β 0.6; `fuse/3` meant
/// [`FUSED_PARTS`] at β 0.5 with no bonus.
#[cfg(not(feature = "dense-parts"))]
pub const FUSION: &str = "fuse/4";
/// Under the measurement-only feature `dense-parts` the build stores every dense part
/// (`doc::EMBEDDED`); [`combine`] still reads only [`FUSED_PARTS`], so the scores are
/// `fuse/4`'s, but the id differs so that no threshold crosses between the two builds.
#[cfg(feature = "dense-parts")]
pub const FUSION: &str = "fuse/4+parts";

/// The fused score of a skill from its lexical score `lexical` and dense score `dense`
/// (recipe [`FUSION`]): `(1 − β) · lexical + β · dense`, plus [`AGREEMENT_BONUS`] when both
/// reach the turn's agreement floors `agree` (the [`AGREEMENT_TOP`]-th best of each half over
/// the skills that may be offered; `None`: no bonus).
pub fn fuse(lexical: f64, dense: f64, agree: Option<(f64, f64)>) -> f64 {
    let beta = f64::from(DENSE_WEIGHT);
    let both = agree.is_some_and(|(l, d)| lexical >= l && dense >= d);
    (1.0 - beta) * lexical + beta * dense + if both { AGREEMENT_BONUS } else { 0.0 }
}

/// The dense parts [`combine`] reads (and so the parts `doc::EMBEDDED` stores): the whole
/// document, the head (title, description, triggers, tags: what the skill is) and the body's
/// opening prose. Chosen on the tuning part of the battery among every rule over at most three
/// parts (BENCHMARKS.md "Menu with the local model"): the when-to-use, example, heading and
/// executor parts are missing from most skills, and the largest cosine over many parts lifts
/// every skill near a turn that needs none.
pub const FUSED_PARTS: [DensePart; 3] = [DensePart::Whole, DensePart::Head, DensePart::Opening];

/// Italian words that mark a turn as Italian though the glossary has no entry for them.
const ITALIAN_MARKERS: &[&str] = &[
    "il", "lo", "la", "gli", "le", "un", "una", "di", "del", "della", "dei", "delle", "che", "per", "con", "non", "mi",
    "ci", "questo", "questa", "questi", "quello", "quella", "sono", "come", "cosa", "perché", "anche", "mio", "mia",
    "miei", "nel", "nella", "sul", "sulla", "ho", "hai", "è", "vorrei", "puoi",
];

/// The glossary's Italian words by stem, with their English meaning.
fn italian() -> &'static BTreeMap<String, String> {
    static MAP: OnceLock<BTreeMap<String, String>> = OnceLock::new();
    MAP.get_or_init(|| {
        let mut out = BTreeMap::new();
        // The glossary is part of the binary (its parse is tested in `lexical`).
        let table: toml::Table = toml::from_str(super::lexical::GLOSSARY).unwrap_or_default();
        if let Some(it) = table.get("italian").and_then(toml::Value::as_table) {
            for (word, en) in it {
                if let Some(en) = en.as_str() {
                    out.entry(super::lexical::stem(word)).or_insert_with(|| en.to_owned());
                }
            }
        }
        out
    })
}

/// What a dense embedder reads of a turn (recipe [`TURN_RECIPE`]): the turn as typed, and —
/// when it reads as Italian (a word of [`ITALIAN_MARKERS`] or two of the glossary) — the
/// English meaning of its glossary words after it, in parentheses. Small sentence models
/// (all-MiniLM-L6-v2) were trained on English: an Italian turn alone lands near unrelated
/// skills, the built-in glossary's English words bring it to the catalog's language.
pub fn turn_text(turn: &str) -> String {
    let tokens = super::lexical::tokens(turn);
    let lower = turn.to_lowercase();
    let marked = lower
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| ITALIAN_MARKERS.contains(&w));
    let mut english: Vec<&str> = Vec::new();
    let mut glossed = 0;
    for t in &tokens {
        if let Some(en) = italian().get(&t.stem) {
            glossed += 1;
            for w in en.split_whitespace() {
                if w != t.word && !english.contains(&w) && !tokens.iter().any(|t| t.word == w) {
                    english.push(w);
                }
            }
        }
    }
    if english.is_empty() || !(marked || glossed >= 2) {
        return turn.to_owned();
    }
    format!("{turn} ({})", english.join(" "))
}

/// First bytes of the vectors file.
pub const VECTORS_MAGIC: &[u8; 12] = b"skillc-vecs\n";

/// The dense part of the menu index header.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DenseHeader {
    /// The dense embedder's id.
    pub embedder: String,
    /// Vector length.
    pub dims: usize,
    /// The vectors file in `out/` (`menu.vec`).
    pub file: String,
    /// Hex SHA-256 of that file: the index's signature covers the vectors through it.
    pub sha256: String,
}

/// The id of the fusion of the built-in embedder with a dense one:
/// `lexical/4+<dense id>+fuse/4` (a threshold is recorded for it, so any change of the fusion
/// changes it).
pub fn fused_id(dense: &str) -> String {
    format!("{}+{dense}+{FUSION}", super::lexical::EMBEDDER)
}

/// Quantizes one unit vector: `f32 scale`, then `dims` signed bytes (`x ≈ byte × scale`).
fn push_vector(out: &mut Vec<u8>, v: &[f32]) {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 { max / 127.0 } else { 0.0 };
    out.extend_from_slice(&scale.to_le_bytes());
    for x in v {
        let q = if scale > 0.0 {
            (x / scale).round().clamp(-127.0, 127.0)
        } else {
            0.0
        };
        out.push(q as i8 as u8);
    }
}

/// Renders `out/menu.vec` (format 2): `magic, u32 format (2), u32 dims, u32 n (skills),
/// u32 m (vectors)`; then `n + 1` u32, the first vector of each skill of the index in its order
/// (the last is `m`); then `m` bytes, each vector's [`DensePart`] tag; then per vector
/// `f32 scale` and `dims` signed bytes (`x ≈ byte × scale`). Vectors of another length than
/// `dims` are left out (a skill may have none).
pub fn render_vectors(dims: usize, skills: &[Vec<(DensePart, &[f32])>]) -> Vec<u8> {
    let u32_of = |v: usize| u32::try_from(v).unwrap_or(u32::MAX).to_le_bytes();
    let kept: Vec<Vec<(DensePart, &[f32])>> = skills
        .iter()
        .map(|s| s.iter().filter(|(_, v)| v.len() == dims).copied().collect())
        .collect();
    let m: usize = kept.iter().map(Vec::len).sum();
    let mut out = Vec::with_capacity(28 + 4 * (kept.len() + 1) + m * (dims + 5));
    out.extend_from_slice(VECTORS_MAGIC);
    for v in [VECTORS_FORMAT as usize, dims, kept.len(), m] {
        out.extend_from_slice(&u32_of(v));
    }
    let mut first = 0;
    for s in &kept {
        out.extend_from_slice(&u32_of(first));
        first += s.len();
    }
    out.extend_from_slice(&u32_of(first));
    out.extend(kept.iter().flatten().map(|(p, _)| *p as u8));
    for (_, v) in kept.iter().flatten() {
        push_vector(&mut out, v);
    }
    out
}

/// The layout version of `menu.vec`.
pub const VECTORS_FORMAT: u32 = 2;

/// Loaded dense vectors: each skill of the index has zero or more, each of a [`DensePart`].
#[derive(Clone)]
pub struct Vectors {
    dims: usize,
    /// Per skill, its first vector; `n + 1` entries.
    first: Vec<u32>,
    /// Per vector, its part.
    parts: Vec<DensePart>,
    /// Where the vectors start in `bytes`.
    at: usize,
    bytes: Vec<u8>,
}

impl fmt::Debug for Vectors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Vectors({} skills, {} × {})",
            self.first.len().saturating_sub(1),
            self.parts.len(),
            self.dims
        )
    }
}

impl Vectors {
    /// Reads a vectors file for an index of `n` skills with `dims`-long vectors.
    ///
    /// # Errors
    /// A message when the file is not such a file.
    pub fn parse(bytes: Vec<u8>, n: usize, dims: usize) -> Result<Vectors, String> {
        let le = |at: usize| {
            bytes
                .get(at..at + 4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        };
        if bytes.get(..12) != Some(VECTORS_MAGIC.as_slice()) {
            return Err("not a menu vectors file".into());
        }
        if (le(12), le(16), le(20)) != (Some(VECTORS_FORMAT as usize), Some(dims), Some(n)) {
            return Err("its format, length or count disagrees with the menu index".into());
        }
        let m = le(24).ok_or("truncated")?;
        let tags_at = 28 + 4 * (n + 1);
        let at = tags_at + m;
        if Some(bytes.len()) != m.checked_mul(dims + 4).and_then(|v| v.checked_add(at)) {
            return Err("wrong size".into());
        }
        let first: Vec<u32> = (0..=n).filter_map(|i| le(28 + 4 * i)).map(|v| v as u32).collect();
        if first.first() != Some(&0) || first.last() != Some(&(m as u32)) || first.windows(2).any(|w| w[0] > w[1]) {
            return Err("its table of vectors per skill is not in order".into());
        }
        let parts = bytes[tags_at..at]
            .iter()
            .map(|&t| DensePart::from_tag(t).ok_or_else(|| format!("unknown part tag {t}")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Vectors {
            dims,
            first,
            parts,
            at,
            bytes,
        })
    }

    /// Cosine of vector `k` (of every skill's) with a unit vector `q`.
    fn cosine_of(&self, k: usize, q: &[f32]) -> f32 {
        let at = self.at + k * (self.dims + 4);
        let b = &self.bytes[at..at + 4 + self.dims];
        let scale = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let dot: f32 = b[4..].iter().zip(q).map(|(&x, y)| f32::from(x as i8) * y).sum();
        dot * scale
    }

    /// The cosines of skill `i`'s vectors with a unit vector `q`, with their parts (none for
    /// a skill without vectors, or a `q` of another length). Allocates nothing.
    fn part_cosines_of<'a>(&'a self, i: usize, q: &'a [f32]) -> impl Iterator<Item = (DensePart, f32)> + 'a {
        let range = match (self.first.get(i), self.first.get(i + 1)) {
            (Some(&a), Some(&b)) if q.len() == self.dims => a as usize..b as usize,
            _ => 0..0,
        };
        range.map(move |k| (self.parts[k], self.cosine_of(k, q)))
    }

    /// [`Self::part_cosines_of`], collected. For tests and a future `--explain` of the dense
    /// part.
    #[cfg(test)]
    pub fn part_cosines(&self, i: usize, q: &[f32]) -> Vec<(DensePart, f32)> {
        self.part_cosines_of(i, q).collect()
    }

    /// The dense score of skill `i` for a unit vector `q`: [`combine`] of its part cosines
    /// (0 for a skill without vectors). Allocates nothing: it runs for every skill each turn.
    pub fn cosine(&self, i: usize, q: &[f32]) -> f32 {
        combine(self.part_cosines_of(i, q))
    }
}

/// A skill's dense score from the cosines of its vectors with the turn (recipe [`FUSION`]):
/// per kind of [`FUSED_PARTS`] the largest cosine over that kind's chunks (max-passage, MaxP:
/// Dai & Callan 2019, "Deeper Text Understanding for IR with Contextual Neural Language
/// Modeling"), then the mean over the kinds the skill has (CombSUM over representations,
/// normalised by their number: Fox & Shaw 1994, "Combination of Multiple Searches"). A part
/// the skill lacks (no body prose) is left out of the mean, not counted as 0, so a short skill
/// is not penalised for it. Vectors of other kinds are ignored. 0 for a skill without vectors.
/// A value in `[-1, 1]`; allocates nothing.
pub fn combine(cosines: impl IntoIterator<Item = (DensePart, f32)>) -> f32 {
    let mut best = [f32::NEG_INFINITY; FUSED_PARTS.len()];
    for (part, c) in cosines {
        if let Some(k) = FUSED_PARTS.iter().position(|p| *p == part) {
            best[k] = best[k].max(c);
        }
    }
    let (sum, n) = best
        .iter()
        .filter(|c| c.is_finite())
        .fold((0f32, 0u8), |(s, n), c| (s + c, n + 1));
    if n == 0 { 0.0 } else { sum / f32::from(n) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn italian_turns_get_their_english_words() {
        // Words of one stem share the first entry's meaning (`documenti` before `documento`).
        assert_eq!(
            turn_text("riassumi questo documento"),
            "riassumi questo documento (summarize summary documents)"
        );
        // English turns, and an Italian-looking word alone, are left as typed.
        assert_eq!(turn_text("summarize this document"), "summarize this document");
        assert_eq!(turn_text("play the piano"), "play the piano");
        assert_eq!(turn_text(""), "");
    }

    #[test]
    fn vectors_round_trip_with_small_error() {
        let mut a = vec![0.3, -0.4, 0.5, 0.1];
        crate::embed::normalize(&mut a);
        let mut b = vec![-0.3, 0.4, 0.5, 0.1];
        crate::embed::normalize(&mut b);
        let file = render_vectors(
            4,
            &[
                vec![(DensePart::Whole, b.as_slice()), (DensePart::Head, a.as_slice())],
                vec![],
                vec![(DensePart::When, b.as_slice()), (DensePart::Opening, &[1.0, 0.0][..])],
            ],
        );
        let v = Vectors::parse(file.clone(), 3, 4).unwrap();
        let parts = v.part_cosines(0, &a);
        assert_eq!(
            parts.iter().map(|p| p.0).collect::<Vec<_>>(),
            [DensePart::Whole, DensePart::Head]
        );
        let ab: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((parts[0].1 - ab).abs() < 0.02, "{parts:?}");
        assert!((parts[1].1 - 1.0).abs() < 0.02, "{parts:?}");
        // The skill's score: the mean of its whole and head cosines (`combine`).
        assert!((v.cosine(0, &a) - (ab + 1.0) / 2.0).abs() < 0.02);
        assert_eq!(v.cosine(1, &a), 0.0);
        // The vector of another length was left out.
        assert_eq!(v.part_cosines(2, &a).len(), 1);
        assert_eq!(v.cosine(5, &a), 0.0);
        assert!(Vectors::parse(file.clone(), 2, 4).is_err());
        assert!(Vectors::parse(file[..file.len() - 1].to_vec(), 3, 4).is_err());
        let mut bad = file;
        bad[28 + 4 * 4] = 9;
        assert!(Vectors::parse(bad, 3, 4).is_err(), "an unknown part tag");
    }

    #[test]
    fn fuse_weighs_the_halves_and_rewards_agreement() {
        let beta = f64::from(DENSE_WEIGHT);
        let plain = (1.0 - beta) * 0.4 + beta * 0.3;
        assert!((fuse(0.4, 0.3, None) - plain).abs() < 1e-12);
        // In both top lists (at the floors, ties included): the bonus.
        assert!((fuse(0.4, 0.3, Some((0.4, 0.3))) - plain - AGREEMENT_BONUS).abs() < 1e-12);
        // Below either floor: none.
        assert!((fuse(0.4, 0.3, Some((0.5, 0.3))) - plain).abs() < 1e-12);
        assert!((fuse(0.4, 0.3, Some((0.4, 0.31))) - plain).abs() < 1e-12);
    }

    #[test]
    fn combine_means_each_fused_part_s_best_chunk() {
        use DensePart::*;
        let close = |a: f32, b: f32| (a - b).abs() < 1e-6;
        // The opening's best chunk (0.5) counts once; the part that is not fused (headings)
        // is ignored: (0.2 + 0.3 + 0.5) / 3.
        let c = combine([
            (Whole, 0.2),
            (Head, 0.3),
            (Opening, 0.1),
            (Opening, 0.5),
            (Headings, 0.9),
        ]);
        assert!(close(c, 1.0 / 3.0), "{c}");
        // A missing part is left out of the mean, not counted as 0.
        assert!(close(combine([(Whole, 0.2), (Head, 0.4)]), 0.3));
        assert!(close(combine([(Whole, -0.2)]), -0.2));
        assert_eq!(combine([]), 0.0);
        assert_eq!(combine([(Headings, 0.9)]), 0.0);
    }
}

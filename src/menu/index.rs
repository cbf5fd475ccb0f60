//! The menu index: one entry per catalog skill (memoized per skill by the build) and the file
//! `out/menu.idx` that aggregates them (FORMATS.md, "menu.idx"). Rendering and reading are
//! pure; the file is vouched for by the signed catalog like every other file of `out/`.
//!
//! The file is binary and little-endian, so that loading it costs reading and hashing it and
//! little more: the header is JSON, the skill table is walked once, and the feature table and
//! postings are read in place when a turn is scored.
//!
//! ```text
//! "skillc-menu\n"  u32 format (2)  u32 header length  header (JSON, keys sorted)
//! skills    × N: str slug, str title, str line, u8 flags (1 = enabled), u8 triggers,
//!                str × triggers, [u8; 32] SHA-256 of SKILL.md, u32 body offset, f32 norm,
//!                u32 offset, u32 length and [u8; 32] SHA-256 of its block of `menu.files`
//! lexicon       : u32 concepts, str × concepts, u32 words, (u32 stem hash, u8 n, u16 × n) × words
//! features × F  : u32 feature hash, u32 postings offset, u32 df       (sorted by hash)
//! postings      : per feature, df × (varint skill delta, u8 weight × 16)
//! ```
//!
//! `str` is a u16 byte length and UTF-8 bytes. A weight is stored as `round(w × 16)` (1–255);
//! `norm` is the Euclidean norm of the skill's idf-weighted stored weights, so a score needs
//! nothing but the postings of the turn's features.

use std::collections::BTreeMap;

use super::lexical::{self, Lexicon};
use super::settings::MenuSettings;

/// First bytes of the file.
pub const MAGIC: &[u8; 12] = b"skillc-menu\n";
/// The layout's version.
pub const FORMAT: u32 = 2;
/// Stored weights are multiples of `1 / WEIGHT_SCALE`.
pub const WEIGHT_SCALE: f32 = 16.0;

/// One skill's menu entry, as the build memoizes it: nothing in it depends on other skills.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The skill name (`load_playbook`'s argument).
    pub slug: String,
    /// The title ([`super::text::title`]).
    pub title: String,
    /// The one-line description ([`super::text::one_line`]).
    pub line: String,
    /// Folded triggers, in first-seen order.
    pub triggers: Vec<String>,
    /// Not `metadata.disabled`.
    pub enabled: bool,
    /// SHA-256 of the retained SKILL.md (what `skillc playbook` checks before printing).
    pub skill_md_sha256: [u8; 32],
    /// Byte offset of the body in SKILL.md.
    pub body_offset: u32,
    /// The built-in embedder's features: `(hash, weight)` sorted by hash.
    pub features: Vec<(u32, f32)>,
    /// The dense texts of the skill ([`super::doc::IndexDoc::embedded_parts`]): their kinds and the
    /// hex SHA-256 of each text, the key of the dense vectors' caches. Not written to the index.
    pub dense_keys: Vec<(super::doc::DensePart, String)>,
}

/// Where a skill's block of `menu.files` is (what the signed catalog lists for the skill:
/// its files and executors), and the SHA-256 that vouches for the block's bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FilesRef {
    /// Byte offset of the block in `menu.files`.
    pub offset: u32,
    /// Its length in bytes.
    pub len: u32,
    /// SHA-256 of the block.
    pub sha256: [u8; 32],
}

/// The quantized form of a stored weight.
pub fn quantize(w: f32) -> u8 {
    (w * WEIGHT_SCALE).round().clamp(1.0, 255.0) as u8
}

/// The weight a quantized byte stands for.
pub fn dequantize(q: u8) -> f32 {
    f32::from(q) / WEIGHT_SCALE
}

/// The JSON header of the file.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// The built-in embedder (`lexical/4`).
    pub embedder: String,
    /// The document recipe (`doc/1`).
    pub recipe: String,
    /// Skills in the file.
    pub skills: usize,
    /// Distinct features.
    pub features: usize,
    /// The menu settings of `pipeline.toml` at build time.
    pub settings: MenuSettings,
    /// The dense vectors file, when an external or local embedder is configured.
    pub dense: Option<super::dense::DenseHeader>,
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    // Strings are bounded by the index's own rules (slug ≤ 64, line ≤ 160 characters);
    // a longer one (a trigger) is cut on a character boundary.
    let mut end = s.len().min(usize::from(u16::MAX));
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    out.extend_from_slice(&(end as u16).to_le_bytes());
    out.extend_from_slice(&s.as_bytes()[..end]);
}

fn put_u32(out: &mut Vec<u8>, v: usize) {
    out.extend_from_slice(&u32::try_from(v).unwrap_or(u32::MAX).to_le_bytes());
}

fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Renders the file from the entries (in catalog order, sorted by slug), the lexicon, the
/// header's settings and each skill's block of `menu.files` by slug (a skill without one gets
/// an empty block, which no reader accepts). Catalog-wide statistics (df, idf, norms) are
/// computed here.
pub fn render(
    entries: &[&Entry],
    lexicon: &Lexicon,
    mut header: Header,
    files: &BTreeMap<String, FilesRef>,
) -> Vec<u8> {
    let n = entries.len();
    // Postings per feature, in skill order.
    let mut postings: BTreeMap<u32, Vec<(u32, u8)>> = BTreeMap::new();
    for (i, e) in entries.iter().enumerate() {
        for &(f, w) in &e.features {
            postings
                .entry(f)
                .or_default()
                .push((u32::try_from(i).unwrap_or(u32::MAX), quantize(w)));
        }
    }
    let mut norms = vec![0f64; n];
    // Summed in feature order: the same on every machine.
    for p in postings.values() {
        let idf = f64::from(lexical::idf(n, p.len()));
        for &(i, q) in p {
            let x = f64::from(dequantize(q)) * idf;
            norms[i as usize] += x * x;
        }
    }
    header.embedder = lexical::EMBEDDER.into();
    header.recipe = super::doc::RECIPE.into();
    header.skills = n;
    header.features = postings.len();
    let json = serde_json::to_string(&crate::util::sorted_json(
        serde_json::to_value(&header).unwrap_or_default(),
    ))
    .unwrap_or_default();
    let mut out = Vec::with_capacity(64 + n * 256 + postings.len() * 16);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    put_u32(&mut out, json.len());
    out.extend_from_slice(json.as_bytes());
    for (e, norm) in entries.iter().zip(&norms) {
        put_str(&mut out, &e.slug);
        put_str(&mut out, &e.title);
        put_str(&mut out, &e.line);
        out.push(u8::from(e.enabled));
        let triggers = &e.triggers[..e.triggers.len().min(255)];
        out.push(triggers.len() as u8);
        for t in triggers {
            put_str(&mut out, t);
        }
        out.extend_from_slice(&e.skill_md_sha256);
        out.extend_from_slice(&e.body_offset.to_le_bytes());
        out.extend_from_slice(&(norm.sqrt() as f32).to_le_bytes());
        let f = files.get(&e.slug).copied().unwrap_or_default();
        out.extend_from_slice(&f.offset.to_le_bytes());
        out.extend_from_slice(&f.len.to_le_bytes());
        out.extend_from_slice(&f.sha256);
    }
    put_u32(&mut out, lexicon.concepts.len());
    for c in &lexicon.concepts {
        put_str(&mut out, c);
    }
    put_u32(&mut out, lexicon.words.len());
    for (h, cs) in &lexicon.words {
        out.extend_from_slice(&h.to_le_bytes());
        let cs = &cs[..cs.len().min(255)];
        out.push(cs.len() as u8);
        for c in cs {
            out.extend_from_slice(&c.to_le_bytes());
        }
    }
    let mut blob = Vec::new();
    put_u32(&mut out, postings.len());
    for (f, p) in &postings {
        out.extend_from_slice(&f.to_le_bytes());
        put_u32(&mut out, blob.len());
        put_u32(&mut out, p.len());
        let mut prev = 0u32;
        for &(i, q) in p {
            put_varint(&mut blob, i - prev);
            blob.push(q);
            prev = i;
        }
    }
    out.extend_from_slice(&blob);
    out
}

/// Why a menu index cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed menu index: {0}")]
pub struct Malformed(pub String);

/// A skill of a loaded index (strings borrowed from the file).
#[derive(Clone, Debug, PartialEq)]
pub struct Skill {
    /// Name.
    pub slug: String,
    /// Title.
    pub title: String,
    /// One-line description.
    pub line: String,
    /// Enabled.
    pub enabled: bool,
    /// Folded triggers.
    pub triggers: Vec<String>,
    /// SHA-256 of SKILL.md.
    pub skill_md_sha256: [u8; 32],
    /// Where the body starts in SKILL.md.
    pub body_offset: u32,
    /// Norm of the idf-weighted features.
    pub norm: f32,
    /// Its block of `menu.files`.
    pub files: FilesRef,
}

/// One feature's postings decoded: `(skill, stored weight)` in skill order.
type KeptPostings = Box<[(u32, f32)]>;

/// A parsed index: the header and skill table decoded, features and postings in place.
#[derive(Clone, Debug)]
pub struct Index {
    /// The header.
    pub header: Header,
    /// The skills, in file order (sorted by slug).
    pub skills: Vec<Skill>,
    /// The catalog's vocabulary concepts.
    pub lexicon: Lexicon,
    bytes: Vec<u8>,
    /// Start of the feature table and of the postings in `bytes`.
    features_at: usize,
    postings_at: usize,
    features: usize,
    /// Postings decoded on first use, one slot per feature of the table: a long-lived
    /// reader (`serve`, a program embedding skillc) decodes each list once, a one-shot
    /// `skillc menu` only the lists of its turn.
    decoded: std::sync::OnceLock<Vec<std::sync::OnceLock<KeptPostings>>>,
    /// Set by the first turn scored: from the second on, postings are decoded and kept.
    scored: std::sync::OnceLock<()>,
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or_else(|| Malformed(format!("truncated at byte {}", self.at)))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, Malformed> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, Malformed> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Result<u32, Malformed> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn len(&mut self) -> Result<usize, Malformed> {
        Ok(self.u32()? as usize)
    }
    fn str(&mut self) -> Result<String, Malformed> {
        let n = usize::from(self.u16()?);
        let at = self.at;
        std::str::from_utf8(self.take(n)?)
            .map(str::to_owned)
            .map_err(|_| Malformed(format!("a string at byte {at} is not UTF-8")))
    }
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// The decoded part of an index file, read from borrowed bytes: [`Table::into_index`] joins it
/// to the same bytes (the only way one is made, so offsets always lie inside them).
struct Table {
    header: Header,
    skills: Vec<Skill>,
    lexicon: Lexicon,
    features_at: usize,
    postings_at: usize,
    features: usize,
}

impl Table {
    fn read(bytes: &[u8]) -> Result<Table, Malformed> {
        let mut r = Reader { b: bytes, at: 0 };
        if r.take(MAGIC.len())? != MAGIC {
            return Err(Malformed("not a menu index (bad magic)".into()));
        }
        let format = r.u32()?;
        if format != FORMAT {
            return Err(Malformed(format!(
                "format {format}; this skillc reads format {FORMAT} (rebuild the catalog)"
            )));
        }
        let hlen = r.len()?;
        let header: Header = serde_json::from_slice(r.take(hlen)?).map_err(|e| Malformed(format!("header: {e}")))?;
        let mut skills = Vec::with_capacity(header.skills.min(1 << 20));
        for _ in 0..header.skills {
            let slug = r.str()?;
            let title = r.str()?;
            let line = r.str()?;
            let enabled = r.u8()? & 1 == 1;
            let nt = r.u8()?;
            let triggers = (0..nt).map(|_| r.str()).collect::<Result<Vec<_>, _>>()?;
            let mut sha = [0u8; 32];
            sha.copy_from_slice(r.take(32)?);
            let body_offset = r.u32()?;
            let norm = f32::from_bits(r.u32()?);
            let (offset, len) = (r.u32()?, r.u32()?);
            let mut files = FilesRef {
                offset,
                len,
                sha256: [0; 32],
            };
            files.sha256.copy_from_slice(r.take(32)?);
            skills.push(Skill {
                slug,
                title,
                line,
                enabled,
                triggers,
                skill_md_sha256: sha,
                body_offset,
                norm,
                files,
            });
        }
        let nc = r.len()?;
        let concepts = (0..nc).map(|_| r.str()).collect::<Result<Vec<_>, _>>()?;
        let nw = r.len()?;
        let mut words = Vec::with_capacity(nw.min(1 << 20));
        for _ in 0..nw {
            let h = r.u32()?;
            let k = r.u8()?;
            let cs = (0..k).map(|_| r.u16()).collect::<Result<Vec<_>, _>>()?;
            words.push((h, cs));
        }
        let features = r.len()?;
        let features_at = r.at;
        r.take(
            features
                .checked_mul(12)
                .ok_or_else(|| Malformed("feature count".into()))?,
        )?;
        let table = Table {
            header,
            skills,
            lexicon: Lexicon { concepts, words },
            features_at,
            postings_at: r.at,
            features,
        };
        table.check_postings(bytes)?;
        Ok(table)
    }

    /// Every postings range lies inside the file and skill numbers stay in range: checked
    /// once, so scoring never reads out of bounds.
    fn check_postings(&self, bytes: &[u8]) -> Result<(), Malformed> {
        let blob = bytes.len() - self.postings_at;
        let mut prev_hash = None;
        for k in 0..self.features {
            let at = self.features_at + k * 12;
            let (h, off, df) = (
                le32(bytes, at),
                le32(bytes, at + 4) as usize,
                le32(bytes, at + 8) as usize,
            );
            if prev_hash.is_some_and(|p| p >= h) || off > blob || df == 0 || df > self.skills.len() {
                return Err(Malformed(format!("feature table entry {k}")));
            }
            prev_hash = Some(h);
        }
        Ok(())
    }

    /// The index of these bytes — the ones [`Table::read`] read.
    fn into_index(self, bytes: Vec<u8>) -> Index {
        Index {
            header: self.header,
            skills: self.skills,
            lexicon: self.lexicon,
            features_at: self.features_at,
            postings_at: self.postings_at,
            features: self.features,
            bytes,
            decoded: std::sync::OnceLock::new(),
            scored: std::sync::OnceLock::new(),
        }
    }
}

impl Index {
    /// Reads the header of an index file only.
    ///
    /// # Errors
    /// [`Malformed`] when the bytes do not start like an index of this format.
    pub fn parse_header(bytes: &[u8]) -> Result<Header, Malformed> {
        let mut r = Reader { b: bytes, at: 0 };
        if r.take(MAGIC.len())? != MAGIC || r.u32()? != FORMAT {
            return Err(Malformed("not a menu index of this format".into()));
        }
        let hlen = r.len()?;
        serde_json::from_slice(r.take(hlen)?).map_err(|e| Malformed(format!("header: {e}")))
    }

    /// Reads an index file.
    ///
    /// # Errors
    /// [`Malformed`] when the bytes are not an index of this format.
    pub fn parse(bytes: Vec<u8>) -> Result<Index, Malformed> {
        let table = Table::read(&bytes)?;
        Ok(table.into_index(bytes))
    }

    /// Reads an index file while `beside` runs on the same bytes — on another thread of the
    /// rayon pool when one is free, else after the parse on this one. What a reader uses to
    /// hash the file for its signature while it is parsed: the two only read the bytes, so on
    /// two cores the wall time is the longer of them rather than their sum. Returns the parse
    /// (exactly [`Index::parse`]'s) and what `beside` returned.
    pub fn parse_beside<R: Send>(
        bytes: Vec<u8>,
        beside: impl FnOnce(&[u8]) -> R + Send,
    ) -> (Result<Index, Malformed>, R) {
        // `beside` first: `rayon::join` runs its first closure here and offers the second to
        // an idle thread, and the caller's hash is the longer task (on gen10k, BLAKE2b of the
        // 6.7 MB file ≈ 37 M instructions, the parse ≈ 22 M), so the idle thread takes the
        // parse.
        let (r, table) = rayon::join(|| beside(&bytes), || Table::read(&bytes));
        (table.map(|t| t.into_index(bytes)), r)
    }

    /// The slot of `feature` in the feature table.
    fn slot(&self, feature: u32) -> Option<usize> {
        let (mut lo, mut hi) = (0usize, self.features);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match le32(&self.bytes, self.features_at + mid * 12).cmp(&feature) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// The df and the postings of the feature in table slot `k`.
    fn postings_of_slot(&self, k: usize) -> (usize, Postings<'_>) {
        let at = self.features_at + k * 12;
        let off = le32(&self.bytes, at + 4) as usize;
        let df = le32(&self.bytes, at + 8) as usize;
        let postings = Postings {
            b: &self.bytes[self.postings_at + off..],
            left: df,
            skill: 0,
            n: self.skills.len() as u32,
        };
        (df, postings)
    }

    /// The postings of a feature: its df and an iterator of `(skill, stored weight)`.
    pub fn postings(&self, feature: u32) -> Option<(usize, Postings<'_>)> {
        self.slot(feature).map(|k| self.postings_of_slot(k))
    }

    /// Whether this turn should read [`Index::decoded_postings`]: false for the first turn an
    /// index scores (a one-shot `skillc menu` streams its few lists and allocates nothing),
    /// true from the second on (a long-lived reader decodes each list once).
    pub fn keeps_decoded(&self) -> bool {
        self.scored.set(()).is_err()
    }

    /// The postings of a feature decoded, `(skill, stored weight)` in skill order: the same
    /// items as [`Index::postings`], decoded once per index and kept.
    pub fn decoded_postings(&self, feature: u32) -> Option<(usize, &[(u32, f32)])> {
        let k = self.slot(feature)?;
        let slots = self
            .decoded
            .get_or_init(|| (0..self.features).map(|_| std::sync::OnceLock::new()).collect());
        let (df, postings) = self.postings_of_slot(k);
        let list = slots[k].get_or_init(|| postings.map(|(i, w)| (i as u32, w)).collect());
        Some((df, list))
    }

    /// The skill named `slug`.
    pub fn find(&self, slug: &str) -> Option<usize> {
        self.skills.binary_search_by(|s| s.slug.as_str().cmp(slug)).ok()
    }
}

/// The postings of one feature, decoded as they are read. A malformed tail ends the list.
pub struct Postings<'a> {
    b: &'a [u8],
    left: usize,
    skill: u32,
    n: u32,
}

impl Iterator for Postings<'_> {
    type Item = (usize, f32);
    fn next(&mut self) -> Option<(usize, f32)> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let mut delta = 0u32;
        let mut shift = 0;
        loop {
            let (&byte, rest) = self.b.split_first()?;
            self.b = rest;
            delta |= u32::from(byte & 0x7f).checked_shl(shift)?;
            if byte & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
        let (&q, rest) = self.b.split_first()?;
        self.b = rest;
        self.skill = self.skill.checked_add(delta)?;
        if self.skill >= self.n {
            self.left = 0;
            return None;
        }
        Some((self.skill as usize, dequantize(q)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn entry(slug: &str, features: &[(u32, f32)]) -> Entry {
        Entry {
            slug: slug.into(),
            title: slug.replace('-', " "),
            line: format!("The {slug} skill."),
            triggers: vec![],
            enabled: true,
            skill_md_sha256: [7; 32],
            body_offset: 10,
            features: features.to_vec(),
            dense_keys: Vec::new(),
        }
    }

    #[test]
    fn render_and_parse_round_trip() {
        let a = Entry {
            triggers: vec!["deploy".into(), "ship it".into()],
            ..entry("alpha", &[(1, 1.0), (5, 2.0)])
        };
        let b = Entry {
            enabled: false,
            ..entry("beta", &[(5, 0.5), (9, 1.5)])
        };
        let lex = Lexicon {
            concepts: vec!["a:list".into()],
            words: vec![(42, vec![0])],
        };
        let files = FilesRef {
            offset: 3,
            len: 9,
            sha256: [5; 32],
        };
        let refs = BTreeMap::from([("alpha".to_owned(), files)]);
        let bytes = render(&[&a, &b], &lex, Header::default(), &refs);
        assert_eq!(bytes, render(&[&a, &b], &lex, Header::default(), &refs));
        let ix = Index::parse(bytes.clone()).unwrap();
        // A skill without a block gets the empty one, which no reader accepts.
        assert_eq!((ix.skills[0].files, ix.skills[1].files), (files, FilesRef::default()));
        assert_eq!(ix.header.embedder, lexical::EMBEDDER);
        assert_eq!(ix.skills.len(), 2);
        assert_eq!(ix.skills[0].triggers, ["deploy", "ship it"]);
        assert!(!ix.skills[1].enabled);
        assert_eq!(ix.lexicon, lex);
        let (df, p) = ix.postings(5).unwrap();
        assert_eq!(df, 2);
        assert_eq!(p.collect::<Vec<_>>(), vec![(0, 2.0), (1, 0.5)]);
        assert!(ix.postings(2).is_none());
        // The kept lists are the streamed ones; the first turn streams, the next ones keep.
        for f in [1, 5, 9] {
            let (df, streamed) = ix.postings(f).unwrap();
            let (kept_df, kept) = ix.decoded_postings(f).unwrap();
            assert_eq!(df, kept_df);
            let kept: Vec<(usize, f32)> = kept.iter().map(|&(i, w)| (i as usize, w)).collect();
            assert_eq!(streamed.collect::<Vec<_>>(), kept);
        }
        assert!(ix.decoded_postings(2).is_none());
        assert!(!ix.keeps_decoded() && ix.keeps_decoded() && ix.keeps_decoded());
        assert_eq!(ix.find("beta"), Some(1));
        // Parsed beside another reader of the same bytes (a signature's hash): the same index,
        // and what the other returned.
        let (beside, len) = Index::parse_beside(bytes.clone(), <[u8]>::len);
        let beside = beside.unwrap();
        assert_eq!(len, bytes.len());
        assert_eq!(
            (&beside.header, &beside.skills, &beside.lexicon),
            (&ix.header, &ix.skills, &ix.lexicon)
        );
        assert_eq!(
            beside.postings(5).unwrap().1.collect::<Vec<_>>(),
            vec![(0, 2.0), (1, 0.5)]
        );
        // A truncation is an error or a shorter list, never a panic, beside or not.
        for cut in 0..bytes.len() {
            let _ = Index::parse(bytes[..cut].to_vec());
            let _ = Index::parse_beside(bytes[..cut].to_vec(), |_| ());
        }
        let mut bad = bytes.clone();
        bad[0] = b'x';
        assert!(Index::parse(bad).is_err());
    }
}

//! The built-in embedder (`lexical/4`): deterministic hashed features, no model, no network
//! (RUNTIME.md §1, "Embedders and the threshold").
//!
//! # Features
//!
//! Text is split into words by [`tokens`]: NFKC, full case folding, NFKD with combining marks
//! dropped (`Città` → `citta`), split on anything not a letter or digit, one-letter words,
//! numbers and English/Italian stop words dropped. Each word gives:
//!
//! - `w:<stem>` — the word after a light English + Italian suffix stemmer ([`stem`]):
//!   `deploying`, `deployment`, `deployed` → `deploy`; `documenti`, `documents` → `document`;
//! - `p:<prefix>` — the first [`PREFIX`] letters of a long stem: one morphological family,
//!   and the Latin cognates English and Italian share (`presentation` / `presentazione`);
//! - `g:<trigram>` — the letter trigrams of the word with `^`/`$` at its ends (typos:
//!   `depolyment` still shares `^de`, `dep`, `ent`, `nt$` …), in the head fields of a document
//!   (name, title, triggers, description, tags, executors) and in every turn;
//! - `c:<concept>` — the vocabulary's concepts: canonical names, synonyms and English/Italian
//!   labels of actions, objects and qualifiers ([`Lexicon`]), so that `elenca`, `ls` and
//!   `list` are one feature and an Italian turn meets an English skill; and the built-in
//!   glossary's synonym groups (`photo`, `picture`, `image` → `c:s:image`);
//! - `w:<English stem>` for an Italian word of the glossary (`meteo` → `w:weather`).
//!
//! Features are hashed to 32 bits (FNV-1a of `kind:text`); a collision only adds noise.
//!
//! # Weights
//!
//! A document's stored weight of a feature is `ln(1 + Σ field weight × kind weight)` over its
//! occurrences (sublinear, so a word repeated in a long body does not drown the name), keeping
//! the [`MAX_FEATURES`] heaviest. The catalog-wide part — `idf = ln(1 + N / df)` and each
//! document's norm — is applied when the index is loaded or rendered, never stored in an
//! entry, so that an edit of one skill recomputes one entry. The score of a turn is the cosine
//! of the idf-weighted vectors (each word of the turn counted once per skill, by its best
//! feature; the turn's norm over the features some skill has), times the coordination factor
//! ([`coverage`]: the share of the turn's words the skill has by a word, prefix or concept
//! feature), times the name bonus ([`name_bonus`]: the share of the turn's words the skill's
//! name or title has).
//!
//! A document also stores, at the smallest weight, a *name twin* ([`name_twin`]) of every word,
//! prefix and concept feature of its name and title: it tells the scorer which of the turn's
//! words the name matches (a fielded term, like `title:deploy` in a multi-field query), and
//! adds almost nothing to the norm.
//!
//! `lexical/3` (from `lexical/2`): the coordination factor. On the battery (BENCHMARKS.md,
//! "Menu") a turn's word that the vocabulary expands into four or five concepts made the
//! skills about that word alone outrank the skill that had most of the turn's words.
//!
//! `lexical/4` (from `lexical/3`), three rules measured together on the battery (BENCHMARKS.md,
//! "Menu"; each alone loses elsewhere):
//!
//! - *a word counts once*: per skill only the best product among one word's stem, prefix and
//!   concept features enters the cosine (Lucene's `DisjunctionMaxQuery` with tie-breaker 0,
//!   the treatment Lucene's `SynonymQuery` and Indri's `#syn` give a word's synonyms); letter
//!   trigrams are still summed. Why: a word the vocabulary expands into six features
//!   (`release`) outweighed three plain words (`create a new skill`);
//! - *the turn's norm counts only features some skill has*: a feature no document has cannot
//!   be matched, and counting it at the largest idf lowered every score of a turn with words
//!   the catalog does not know (an Italian turn before an English catalog) against the
//!   threshold; rankings within a turn do not change (the standard treatment of query terms
//!   outside the collection's vocabulary, which have no idf);
//! - *the name bonus*: × (1 + [`NAME_BONUS`] × the share of the turn's words the name or title
//!   matches), the field-match evidence of learning-to-rank feature sets (LETOR's per-field
//!   features: the title scored apart from the body). Why: a long body's incidental words
//!   (a company name in an example) outweighed the turn's word in the skill's own name.

use std::collections::BTreeMap;

use unicode_normalization::UnicodeNormalization;

use crate::vocab::Vocabulary;

/// The built-in embedder's id and version, recorded in every output.
pub const EMBEDDER: &str = "lexical/4";

/// τ shipped with this embedder and recipe (`doc/1`), from `skillc menu calibrate` on the
/// labelled battery over the shared corpus (BENCHMARKS.md, "Menu"); a project's own
/// calibration replaces it.
pub const CALIBRATED: f64 = 0.085;

/// Letters kept by a `p:` prefix feature.
pub const PREFIX: usize = 5;
/// Most features stored per document.
pub const MAX_FEATURES: usize = 384;

/// Weight of each feature kind (turns and documents alike).
pub const W_WORD: f32 = 1.0;
/// A stem's prefix.
pub const W_PREFIX: f32 = 0.5;
/// One letter trigram.
pub const W_GRAM: f32 = 0.12;
/// A vocabulary concept.
pub const W_CONCEPT: f32 = 0.8;
/// Exponent of the coordination factor ([`coverage`]): 1, the classic `coord`, not tuned.
pub const COORDINATION: f32 = 1.0;
/// Weight of the name bonus ([`name_bonus`]): a skill whose name or title has every word of
/// the turn scores double. Chosen on the battery's tuning part among 0.25–2 (BENCHMARKS.md,
/// "Menu"); the held-out part confirmed it.
pub const NAME_BONUS: f32 = 1.0;
/// Stored weight of a name twin ([`name_twin`]): the smallest a posting can carry, so that
/// twins hardly move a document's norm.
pub const W_TWIN: f32 = 1.0 / 16.0;

/// Words that carry no meaning for the menu (English and Italian).
const STOP_WORDS: &[&str] = &[
    // English
    "about",
    "after",
    "again",
    "all",
    "also",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "been",
    "before",
    "being",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "done",
    "for",
    "from",
    "get",
    "got",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "him",
    "his",
    "how",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "just",
    "let",
    "like",
    "me",
    "more",
    "most",
    "my",
    "need",
    "needs",
    "no",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "out",
    "over",
    "own",
    "please",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "us",
    "very",
    "via",
    "want",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "i'm",
    "im",
    "am",
    "one",
    "each",
    "every",
    "use",
    "used",
    "using",
    "uses",
    "help",
    "make",
    "may",
    "might",
    "must",
    "way",
    "thing",
    "things",
    "something",
    // Italian
    "al",
    "alla",
    "alle",
    "allo",
    "agli",
    "ai",
    "anche",
    "come",
    "che",
    "chi",
    "ci",
    "con",
    "cosa",
    "da",
    "dai",
    "dal",
    "dalla",
    "dalle",
    "degli",
    "dei",
    "del",
    "della",
    "delle",
    "dello",
    "di",
    "dove",
    "ed",
    "era",
    "gli",
    "ha",
    "hai",
    "hanno",
    "ho",
    "il",
    "in",
    "io",
    "la",
    "le",
    "lo",
    "loro",
    "ma",
    "mi",
    "mia",
    "mie",
    "miei",
    "mio",
    "ne",
    "nei",
    "nel",
    "nella",
    "nelle",
    "nello",
    "noi",
    "non",
    "per",
    "perché",
    "perche",
    "più",
    "piu",
    "poi",
    "puoi",
    "può",
    "puo",
    "quale",
    "quali",
    "quando",
    "quella",
    "quelle",
    "quello",
    "questa",
    "queste",
    "questi",
    "questo",
    "se",
    "sei",
    "si",
    "sia",
    "sono",
    "su",
    "sua",
    "sue",
    "sui",
    "sul",
    "sulla",
    "suo",
    "suoi",
    "ti",
    "tra",
    "tu",
    "tua",
    "tuo",
    "tutti",
    "tutto",
    "tutte",
    "un",
    "una",
    "uno",
    "vorrei",
    "voglio",
    "fammi",
    "favore",
    "mio",
    "miei",
    "essere",
    "fare",
    "devo",
    "serve",
    "aiutami",
    "aiuto",
    "ciao",
    "grazie",
];

fn is_stop(w: &str) -> bool {
    STOP_WORDS.contains(&w)
}

/// Suffixes the stemmer strips, longest first (English and Italian).
const SUFFIXES: &[&str] = &[
    "izations", "ization", "isation", "azioni", "azione", "ations", "ation", "amenti", "amento", "zioni", "zione",
    "mente", "ments", "ment", "ness", "ings", "ando", "endo", "ing", "ies", "ied", "ers", "ed", "es", "er", "ly", "s",
    "i", "e", "o", "a",
];

/// The light stemmer: strips the first listed suffix that leaves at least four letters (five
/// for suffixes of four letters or more; `ies`/`ied` become `y`). Words that are not ASCII are kept.
pub fn stem(word: &str) -> String {
    if !word.is_ascii() || word.len() <= 4 {
        return word.to_owned();
    }
    for s in SUFFIXES {
        // A long suffix needs a longer base (`documents` is not `docu` + `ments`).
        let min = if s.len() >= 4 { 5 } else { 4 };
        if let Some(base) = word.strip_suffix(s)
            && base.len() >= min
        {
            return if matches!(*s, "ies" | "ied") {
                format!("{base}y")
            } else {
                base.to_owned()
            };
        }
    }
    word.to_owned()
}

/// One word of a text: as folded, and its stem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// The folded word (`città` → `citta`).
    pub word: String,
    /// Its [`stem`].
    pub stem: String,
}

/// The words of a text (see the module documentation).
pub fn tokens(text: &str) -> Vec<Token> {
    let folded: String = caseless::default_case_fold_str(&text.nfkc().collect::<String>())
        .nfkd()
        .filter(|c| !unicode_normalization::char::is_combining_mark(*c))
        .collect();
    folded
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() > 1 && !w.chars().all(|c| c.is_ascii_digit()) && !is_stop(w))
        .map(|w| Token {
            word: w.to_owned(),
            stem: stem(w),
        })
        .collect()
}

/// FNV-1a (32 bits) of `kind` `:` `text`: the id of a feature.
pub fn hash(kind: &str, text: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in kind.bytes().chain([b':']).chain(text.bytes()) {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// The built-in glossary (`src/menu/glossary.toml`): Italian words with their English
/// meaning, and groups of English synonyms.
pub const GLOSSARY: &str = include_str!("glossary.toml");

#[derive(serde::Deserialize)]
struct Glossary {
    #[allow(dead_code)]
    version: u32,
    italian: BTreeMap<String, String>,
    synonyms: Synonyms,
}

#[derive(serde::Deserialize)]
struct Synonyms {
    groups: Vec<Vec<String>>,
}

/// Word → the features it also means, carried in the menu index so that turns are read with
/// the catalog's vocabulary: the vocabulary's concepts (`c:a:list`, `c:o:files`), the
/// glossary's synonym groups (`c:s:image`) and the English words an Italian word means
/// (`meteo` → `w:weather`). Words are looked up by the hash of their stem.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lexicon {
    /// Feature names (`c:a:list`, `w:weather`), sorted.
    pub concepts: Vec<String>,
    /// `(hash("w", stem), indexes into concepts)`, sorted by hash.
    pub words: Vec<(u32, Vec<u16>)>,
}

impl Lexicon {
    /// Builds the lexicon of a vocabulary and the built-in glossary: every canonical name,
    /// synonym and label (the content words of a multi-word label) of every action, object
    /// and qualifier; every synonym group; every Italian word of the glossary.
    pub fn new(vocab: &Vocabulary) -> Lexicon {
        let mut map: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
        let mut add = |text: &str, concept: String| {
            for t in tokens(&text.replace('-', " ")) {
                map.entry(t.stem).or_default().insert(concept.clone());
            }
        };
        for (name, a) in &vocab.actions {
            for s in std::iter::once(name).chain(&a.synonyms).chain([&a.en, &a.it]) {
                add(s, format!("c:a:{name}"));
            }
        }
        for (name, o) in &vocab.objects {
            for s in std::iter::once(name).chain(&o.synonyms).chain([&o.en, &o.it]) {
                add(s, format!("c:o:{name}"));
            }
        }
        for (name, q) in &vocab.qualifiers {
            for s in std::iter::once(name).chain(&q.synonyms).chain([&q.en, &q.it]) {
                add(s, format!("c:q:{name}"));
            }
        }
        // The glossary is part of the binary: a parse failure is a bug, caught by the tests.
        if let Ok(g) = toml::from_str::<Glossary>(GLOSSARY) {
            let mut group_of: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for group in &g.synonyms.groups {
                let Some(head) = group.first() else { continue };
                let concept = format!("c:s:{}", head.replace('-', "_"));
                for w in group {
                    add(w, concept.clone());
                    for t in tokens(&w.replace('-', " ")) {
                        group_of.entry(t.stem).or_default().push(concept.clone());
                    }
                }
            }
            for (it, en) in &g.italian {
                for e in tokens(en) {
                    add(it, format!("w:{}", e.stem));
                    for c in group_of.get(&e.stem).into_iter().flatten() {
                        add(it, c.clone());
                    }
                }
            }
        }
        let concepts: Vec<String> = map
            .values()
            .flatten()
            .cloned()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let index = |c: &String| concepts.binary_search(c).ok().and_then(|i| u16::try_from(i).ok());
        let mut words: Vec<(u32, Vec<u16>)> = map
            .iter()
            .map(|(w, cs)| (hash("w", w), cs.iter().filter_map(index).collect()))
            .collect();
        words.sort();
        // Two stems with one hash: keep the first (sorted), deterministically.
        words.dedup_by_key(|w| w.0);
        Lexicon { concepts, words }
    }

    /// The concepts a stem means (by its `w:` hash).
    pub fn concepts_of(&self, stem_hash: u32) -> impl Iterator<Item = &str> {
        let found = self
            .words
            .binary_search_by_key(&stem_hash, |w| w.0)
            .ok()
            .map(|i| &self.words[i].1);
        found
            .into_iter()
            .flatten()
            .filter_map(|&c| self.concepts.get(usize::from(c)).map(String::as_str))
    }
}

/// A feature of a turn, with its name for `--explain`.
#[derive(Clone, Debug, PartialEq)]
pub struct Feature {
    /// Its hash ([`hash`]).
    pub id: u32,
    /// `w:deploy`, `c:o:files`, `g:^de`, …
    pub name: String,
    /// Its weight in the turn (before idf).
    pub weight: f32,
    /// The turn's words it stands for, as a bit set ([`word_bit`]); 0 for a letter trigram,
    /// which is evidence of spelling, not of a word (see [`coverage`]).
    pub words: u64,
}

/// The bit of the `k`-th distinct word of a turn (words past the 64th share the last bit).
pub fn word_bit(k: usize) -> u64 {
    1u64 << k.min(63)
}

/// The coordination factor of a skill: the share of the turn's words (`turn_words`, the
/// union of its features' [`Feature::words`]) that the skill matched by a word, prefix or
/// concept feature (`matched`), raised to [`COORDINATION`]. 1 for a turn without words.
///
/// Why: the cosine alone lets one word of the turn that the vocabulary expands into several
/// concepts (`release` → `w:releas`, `p:relea`, `c:o:releases`, `c:a:publish`, `c:s:deploy`)
/// outweigh all the others, so a skill about that one word beats the skill that has most of
/// the turn's words. Rule: Lucene's classic `coord` (overlap / query terms).
pub fn coverage(matched: u64, turn_words: u64) -> f32 {
    let n = turn_words.count_ones();
    if n == 0 {
        return 1.0;
    }
    ((matched & turn_words).count_ones() as f32 / n as f32).powf(COORDINATION)
}

/// The name twin of feature `id`: the feature a document stores, at [`W_TWIN`], for each word,
/// prefix and concept feature of its name and title (FNV-1a of `n:` and the id's eight hex
/// digits).
pub fn name_twin(id: u32) -> u32 {
    hash("n", &format!("{id:08x}"))
}

/// The name bonus of a skill: `1 + NAME_BONUS × s`, `s` the share of the turn's words
/// (`turn_words`) that its name twins matched (`named`); 1 for a turn without words.
pub fn name_bonus(named: u64, turn_words: u64) -> f32 {
    let n = turn_words.count_ones();
    if n == 0 {
        return 1.0;
    }
    1.0 + NAME_BONUS * (named & turn_words).count_ones() as f32 / n as f32
}

/// Calls `f(kind, text, kind weight)` for each feature of one word.
fn word_features(t: &Token, grams: bool, lexicon: &Lexicon, f: &mut impl FnMut(&str, &str, f32)) {
    f("w", &t.stem, W_WORD);
    if t.stem.chars().count() > PREFIX {
        let p: String = t.stem.chars().take(PREFIX).collect();
        f("p", &p, W_PREFIX);
    }
    for c in lexicon.concepts_of(hash("w", &t.stem)) {
        // A word meaning itself (an Italian word that is also English) adds nothing.
        if let Some((kind, text)) = c.split_once(':')
            && !(kind == "w" && text == t.stem)
        {
            f(kind, text, W_CONCEPT);
        }
    }
    if grams && t.word.chars().count() >= 4 {
        let padded: Vec<char> = std::iter::once('^')
            .chain(t.word.chars())
            .chain(std::iter::once('$'))
            .collect();
        for g in padded.windows(3) {
            let g: String = g.iter().collect();
            f("g", &g, W_GRAM);
        }
    }
}

/// The features of a turn, merged by id (weights added, saturated like a document's; the
/// words they stand for joined), sorted by id. Words are told apart by their stem, in order
/// of first appearance.
pub fn turn_features(turn: &str, lexicon: &Lexicon) -> Vec<Feature> {
    let mut acc: BTreeMap<u32, (String, f32, u64)> = BTreeMap::new();
    let mut stems: Vec<String> = Vec::new();
    for t in tokens(turn) {
        let k = stems.iter().position(|s| *s == t.stem).unwrap_or_else(|| {
            stems.push(t.stem.clone());
            stems.len() - 1
        });
        word_features(&t, true, lexicon, &mut |kind, text, w| {
            let e = acc
                .entry(hash(kind, text))
                .or_insert_with(|| (format!("{kind}:{text}"), 0.0, 0));
            e.1 += w;
            if kind != "g" {
                e.2 |= word_bit(k);
            }
        });
    }
    acc.into_iter()
        .map(|(id, (name, w, words))| Feature {
            id,
            name,
            weight: w.ln_1p(),
            words,
        })
        .collect()
}

/// One field of an index document: its text, its weight, whether it is a head field
/// (letter trigrams are taken from head fields only) and whether it names the skill (its
/// features get name twins).
#[derive(Clone, Copy, Debug)]
pub struct Field<'a> {
    /// The text.
    pub text: &'a str,
    /// Its weight.
    pub weight: f32,
    /// Whether letter trigrams are taken from it.
    pub head: bool,
    /// Whether it is the skill's name or title ([`name_twin`]).
    pub name: bool,
}

/// A document's stored features: `(id, weight)` sorted by id, at most [`MAX_FEATURES`] (the
/// heaviest; ties by id), then the name twins of its name fields at [`W_TWIN`] (not counted
/// against the cap; a twin whose id is already a feature is left out). No catalog statistics
/// enter them.
pub fn doc_features(fields: &[Field<'_>], lexicon: &Lexicon) -> Vec<(u32, f32)> {
    let mut acc: BTreeMap<u32, f32> = BTreeMap::new();
    let mut twins: std::collections::BTreeSet<u32> = Default::default();
    for field in fields {
        for t in tokens(field.text) {
            word_features(&t, field.head, lexicon, &mut |kind, text, w| {
                let id = hash(kind, text);
                *acc.entry(id).or_insert(0.0) += w * field.weight;
                if field.name && kind != "g" {
                    twins.insert(name_twin(id));
                }
            });
        }
    }
    let mut v: Vec<(u32, f32)> = acc.into_iter().map(|(id, w)| (id, w.ln_1p())).collect();
    if v.len() > MAX_FEATURES {
        v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        v.truncate(MAX_FEATURES);
        v.sort_by_key(|f| f.0);
    }
    for t in twins {
        if let Err(at) = v.binary_search_by_key(&t, |f| f.0) {
            v.insert(at, (t, W_TWIN));
        }
    }
    v
}

/// The inverse document frequency of a feature found in `df` of `n` documents.
pub fn idf(n: usize, df: usize) -> f32 {
    (1.0 + n as f32 / df.max(1) as f32).ln()
}

#[cfg(test)]
mod tests;

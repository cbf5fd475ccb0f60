//! Routing: a deterministic lexical router from a request in English or Italian to ranked
//! executors (PRODUCT.md, "Admission levels", L4). Admission uses it to run the routing
//! battery; a `menu` command is meant to use the same one. Pure: no IO, no model.
//!
//! # Scoring (router `lexical/1`)
//!
//! Text is normalized by [`tokens`]: Unicode NFKD with combining marks dropped (`città` →
//! `citta`), lowercase, split on anything not a letter or digit, one-letter words and
//! English/Italian stop words dropped, then a light English plural stem (`files` → `file`,
//! `searches` → `search`, `entries` → `entry`). Each word of a request yields features:
//!
//! - a **concept** when the vocabulary gives it a meaning: `a:<action>`, `o:<object>`,
//!   `q:<qualifier>`, through canonical names, synonyms and the `en`/`it` labels (so `elenca`
//!   and `ls` both mean `a:list`);
//!   A word meaning both an action and an object (`labels`) is the object unless it is the
//!   first word of the request;
//! - a **term**: the normalized word itself.
//!
//! - a **provider** `p:<provider>` when the request holds every word of an executor's
//!   provider (`google_workspace` needs `google` and `workspace`).
//!
//! An executor carries the concepts of its name (weights: action 3, object 3, qualifier 2),
//! its provider (4), the terms of its provider (2), and of its labels, description and
//! affinity terms (1). Every feature is weighted by its rarity over the indexed executors,
//! `idf = ln(1 + N / df)`. The score of an executor for a request is the sum of `weight × idf`
//! over the distinct features both share, minus half of `weight × idf` of each concept of the
//! executor the request does not mention (so `list files` prefers `list_files_x` over
//! `list_files_xlsx_x`). Executors are ranked by score, then by name; an executor with no
//! positive score is never proposed. Sums run in a fixed order, so the ranking is the same on
//! every machine.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use unicode_normalization::UnicodeNormalization;

use crate::vocab::Vocabulary;

/// The router's name and version, recorded in `routing.toml`.
pub const ROUTER: &str = "lexical/1";

const W_ACTION: f64 = 3.0;
const W_OBJECT: f64 = 3.0;
const W_QUALIFIER: f64 = 2.0;
const W_PROVIDER: f64 = 2.0;
/// A request that names the provider (all its words) strongly prefers its executors.
const W_PROVIDER_NAMED: f64 = 4.0;
const W_TERM: f64 = 1.0;
/// Share of the weight of an executor concept the request does not mention, subtracted.
const MISSING: f64 = 0.5;
/// Two scores closer than this are a tie.
pub const EPSILON: f64 = 1e-9;

/// English and Italian words that carry no meaning for routing.
const STOP_WORDS: &[&str] = &[
    // English
    "a", "about", "all", "an", "and", "any", "are", "as", "at", "be", "by", "can", "do", "for", "from", "how", "i",
    "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "please", "should", "so", "some", "that",
    "the", "their", "them", "then", "there", "these", "this", "those", "to", "us", "using", "via", "want", "was", "we",
    "what", "when", "which", "will", "with", "would", "you", "your", // Italian
    "al", "alla", "alle", "agli", "ai", "che", "ci", "con", "da", "dai", "dal", "dalla", "degli", "dei", "del",
    "della", "delle", "di", "e", "gli", "il", "in", "la", "le", "lo", "mi", "nei", "nel", "nella", "o", "per", "su",
    "sul", "sulla", "tra", "tutti", "tutte", "un", "una", "uno",
];

/// The light English plural stem: `files` → `file`, `searches` → `search`, `entries` →
/// `entry`; words of four letters or fewer, and `-ss`, `-us`, `-is` words, are kept.
pub fn stem(word: &str) -> String {
    let n = word.len();
    if n <= 4 || !word.is_ascii() {
        return word.to_owned();
    }
    if let Some(base) = word.strip_suffix("ies") {
        return format!("{base}y");
    }
    for suffix in ["ches", "shes", "sses", "xes"] {
        if word.ends_with(suffix) {
            return word[..n - 2].to_owned();
        }
    }
    if word.ends_with('s') && !word.ends_with("ss") && !word.ends_with("us") && !word.ends_with("is") {
        return word[..n - 1].to_owned();
    }
    word.to_owned()
}

/// Normalized words without stemming: NFKD without combining marks, lowercase, split on
/// anything not alphanumeric, one-letter words dropped.
pub fn words(text: &str) -> Vec<String> {
    let folded: String = text
        .nfkd()
        .filter(|c| !unicode_normalization::char::is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect();
    folded
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() > 1)
        .map(str::to_owned)
        .collect()
}

/// The routing tokens of a text: [`words`] without stop words, stemmed ([`stem`]).
pub fn tokens(text: &str) -> Vec<String> {
    words(text)
        .into_iter()
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .map(|w| stem(&w))
        .collect()
}

/// Word → concepts (`a:list`, `o:files`, `q:xlsx`), from the vocabulary's canonical names,
/// synonyms and labels in both languages.
#[derive(Clone, Debug, Default)]
pub struct Concepts {
    map: HashMap<String, BTreeSet<String>>,
}

impl Concepts {
    /// Builds the map from a vocabulary.
    pub fn new(vocab: &Vocabulary) -> Concepts {
        let mut map: HashMap<String, BTreeSet<String>> = HashMap::new();
        let mut add = |text: &str, concept: String, whole: bool| {
            let ws = words(text);
            // A multi-word label (`foglio di calcolo`) gives its content words; a one-word
            // name or synonym gives itself.
            for w in ws.iter().filter(|w| whole || !STOP_WORDS.contains(&w.as_str())) {
                map.entry(w.clone()).or_default().insert(concept.clone());
                map.entry(stem(w)).or_default().insert(concept.clone());
            }
        };
        for (name, a) in &vocab.actions {
            let c = format!("a:{name}");
            for s in std::iter::once(name).chain(&a.synonyms).chain([&a.en, &a.it]) {
                add(s, c.clone(), false);
            }
        }
        for (name, o) in &vocab.objects {
            let c = format!("o:{name}");
            for s in std::iter::once(name).chain(&o.synonyms).chain([&o.en, &o.it]) {
                add(s, c.clone(), false);
            }
        }
        for (name, q) in &vocab.qualifiers {
            let c = format!("q:{name}");
            for s in std::iter::once(name).chain(&q.synonyms).chain([&q.en, &q.it]) {
                add(s, c.clone(), false);
            }
        }
        Concepts { map }
    }

    /// The concepts a normalized word means (none for most words).
    pub fn of(&self, word: &str) -> impl Iterator<Item = &String> {
        self.map.get(word).into_iter().flatten()
    }
}

/// What the router knows about one executor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Doc {
    /// The executor's canonical name.
    pub name: String,
    /// Canonical action.
    pub action: String,
    /// Canonical object.
    pub object: String,
    /// Canonical qualifiers.
    pub qualifiers: Vec<String>,
    /// Provider words (`google_workspace` → `google`, `workspace`).
    pub provider: String,
    /// Free text: labels, description, affinity terms.
    pub text: Vec<String>,
}

/// A router over a set of executors.
///
/// Features are interned; each feature's posting list holds `(executor, weight × idf)`, so a
/// request is scored by accumulating its features' postings (work proportional to the
/// executors sharing a feature with it, not to the catalog).
#[derive(Clone, Debug)]
pub struct Router {
    names: Vec<String>,
    ids: HashMap<String, u32>,
    /// Feature id → (executor, weight × idf).
    postings: Vec<Vec<(u32, f64)>>,
    /// Feature id → whether it is a concept (an unmatched concept costs [`MISSING`]).
    concept: Vec<bool>,
    /// Executor → the penalty when the request matches none of its concepts.
    penalty: Vec<f64>,
    /// Provider → its words (`google_workspace` → `google`, `workspace`).
    providers: BTreeMap<String, Vec<String>>,
    concepts: Concepts,
}

/// Reusable scores for [`Router::routes_to_with`] (one per thread).
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    score: Vec<f64>,
    touched: Vec<u32>,
}

impl Router {
    /// Indexes executors.
    pub fn new(docs: &[Doc], vocab: &Vocabulary) -> Router {
        let concepts = Concepts::new(vocab);
        // Each executor's features: feature → weight (the highest when given twice).
        let features: Vec<BTreeMap<String, f64>> = docs
            .iter()
            .map(|d| {
                let mut f = BTreeMap::new();
                let mut put = |k: String, w: f64| {
                    let e = f.entry(k).or_insert(0.0);
                    if w > *e {
                        *e = w;
                    }
                };
                put(format!("a:{}", d.action), W_ACTION);
                put(format!("o:{}", d.object), W_OBJECT);
                for q in &d.qualifiers {
                    put(format!("q:{q}"), W_QUALIFIER);
                }
                for t in d.text.iter().flat_map(|t| tokens(t)) {
                    put(format!("t:{t}"), W_TERM);
                }
                for t in tokens(&d.provider.replace('_', " ")) {
                    put(format!("t:{t}"), W_PROVIDER);
                }
                put(format!("p:{}", d.provider), W_PROVIDER_NAMED);
                f
            })
            .collect();
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut raw: Vec<Vec<(u32, f64)>> = Vec::new();
        let mut concept: Vec<bool> = Vec::new();
        for (e, f) in features.iter().enumerate() {
            for (k, w) in f {
                let id = *ids.entry(k.clone()).or_insert_with(|| {
                    raw.push(Vec::new());
                    concept.push(!k.starts_with("t:") && !k.starts_with("p:"));
                    u32::try_from(raw.len() - 1).unwrap_or(u32::MAX)
                });
                raw[id as usize].push((u32::try_from(e).unwrap_or(u32::MAX), *w));
            }
        }
        let n = docs.len().max(1) as f64;
        let postings: Vec<Vec<(u32, f64)>> = raw
            .into_iter()
            .map(|p| {
                let idf = (1.0 + n / p.len().max(1) as f64).ln();
                p.into_iter().map(|(e, w)| (e, w * idf)).collect()
            })
            .collect();
        let mut penalty = vec![0.0; docs.len()];
        // Summed in feature-id order for every executor: a fixed order, the same everywhere.
        for (id, p) in postings.iter().enumerate() {
            if concept[id] {
                for &(e, wi) in p {
                    penalty[e as usize] += MISSING * wi;
                }
            }
        }
        let providers = docs
            .iter()
            .map(|d| (d.provider.clone(), d.provider.split('_').map(str::to_owned).collect()))
            .collect();
        Router {
            names: docs.iter().map(|d| d.name.clone()).collect(),
            ids,
            postings,
            concept,
            penalty,
            providers,
            concepts,
        }
    }

    /// The features of a request: its concepts, its terms, and the providers it names (every
    /// word of the provider present).
    pub fn request_features(&self, request: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let all: BTreeSet<String> = words(request).into_iter().collect();
        for (p, ws) in &self.providers {
            if !ws.is_empty() && ws.iter().all(|w| all.contains(w)) {
                out.insert(format!("p:{p}"));
            }
        }
        for (n, w) in words(request)
            .into_iter()
            .filter(|w| !STOP_WORDS.contains(&w.as_str()))
            .enumerate()
        {
            let s = stem(&w);
            let meant: BTreeSet<&String> = self.concepts.of(&w).chain(self.concepts.of(&s)).collect();
            // A word meaning both an action and an object (`labels`: set, labels) is the
            // object unless it leads the request (`label the message`).
            let noun = n > 0 && meant.iter().any(|c| c.starts_with("o:"));
            for c in meant {
                if !(noun && c.starts_with("a:")) {
                    out.insert(c.clone());
                }
            }
            out.insert(format!("t:{s}"));
        }
        out
    }

    /// Scores every executor sharing a feature with the request into `scratch`: the sum of
    /// `weight × idf` of the shared features, minus [`MISSING`] of each unmatched concept.
    fn accumulate(&self, request: &str, scratch: &mut Scratch) {
        if scratch.score.len() != self.names.len() {
            scratch.score = vec![f64::NAN; self.names.len()];
        }
        for &e in &scratch.touched {
            scratch.score[e as usize] = f64::NAN;
        }
        scratch.touched.clear();
        let mut ids: Vec<u32> = self
            .request_features(request)
            .iter()
            .filter_map(|k| self.ids.get(k).copied())
            .collect();
        ids.sort_unstable();
        for id in ids {
            let matched = if self.concept[id as usize] { 1.0 + MISSING } else { 1.0 };
            for &(e, wi) in &self.postings[id as usize] {
                let slot = &mut scratch.score[e as usize];
                if slot.is_nan() {
                    *slot = -self.penalty[e as usize];
                    scratch.touched.push(e);
                }
                *slot += matched * wi;
            }
        }
    }

    /// Where a request goes: `Ok(())` when executor `expected` ranks first with a score
    /// strictly above every other's, else `Err(Some(name))` naming the executor that ranks
    /// first or ties, or `Err(None)` when nothing matches at all. `scratch` is reusable space
    /// (one per thread).
    pub fn routes_to_with(&self, request: &str, expected: usize, scratch: &mut Scratch) -> Result<(), Option<String>> {
        self.accumulate(request, scratch);
        let mine = match scratch.score.get(expected) {
            Some(s) if !s.is_nan() => *s,
            _ => self.penalty.get(expected).map_or(0.0, |p| -p),
        };
        let mut best: Option<(f64, &str)> = None;
        for &e in &scratch.touched {
            let i = e as usize;
            if i == expected {
                continue;
            }
            let s = scratch.score[i];
            let better = match best {
                None => true,
                Some((bs, bn)) => s > bs + EPSILON || ((s - bs).abs() <= EPSILON && self.names[i].as_str() < bn),
            };
            if better {
                best = Some((s, &self.names[i]));
            }
        }
        if mine <= EPSILON {
            return Err(best.filter(|b| b.0 > EPSILON).map(|b| b.1.to_owned()));
        }
        match best {
            Some((s, n)) if s + EPSILON >= mine => Err(Some(n.to_owned())),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One ranked executor.
    #[derive(Clone, Debug, PartialEq)]
    struct Ranked {
        /// Index of the executor in the documents given to [`Router::new`].
        index: usize,
        /// Its canonical name.
        name: String,
        /// Its score (higher is better).
        score: f64,
    }

    impl Router {
        /// Executors ranked for a request, best first (score, then name); only positive scores.
        fn rank(&self, request: &str) -> Vec<Ranked> {
            let mut scratch = Scratch::default();
            self.accumulate(request, &mut scratch);
            let mut out: Vec<Ranked> = scratch
                .touched
                .iter()
                .map(|&e| Ranked {
                    index: e as usize,
                    name: self.names[e as usize].clone(),
                    score: scratch.score[e as usize],
                })
                .filter(|r| r.score > EPSILON)
                .collect();
            out.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.name.cmp(&b.name)));
            out
        }

        /// Where a request goes: `Ok(())` when executor `expected` ranks first with a score
        /// strictly above every other's, else `Err(Some(name))` naming the executor that ranks
        /// first or ties, or `Err(None)` when nothing matches at all.
        fn routes_to(&self, request: &str, expected: usize) -> Result<(), Option<String>> {
            self.routes_to_with(request, expected, &mut Scratch::default())
        }
    }
    use crate::vocab;

    fn doc(name: &str, a: &str, o: &str, q: &[&str], p: &str, text: &[&str]) -> Doc {
        Doc {
            name: name.into(),
            action: a.into(),
            object: o.into(),
            qualifiers: q.iter().map(|s| s.to_string()).collect(),
            provider: p.into(),
            text: text.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn router() -> Router {
        let v = vocab::parse(vocab::DEFAULT_PATH, vocab::DEFAULT_TEXT).vocabulary;
        Router::new(
            &[
                doc(
                    "list_files_drive",
                    "list",
                    "files",
                    &[],
                    "drive",
                    &["list files (Drive)", "elenca file (Drive)"],
                ),
                doc(
                    "list_files_xlsx_drive",
                    "list",
                    "files",
                    &["xlsx"],
                    "drive",
                    &["list files spreadsheet (Drive)"],
                ),
                doc(
                    "delete_files_drive",
                    "delete",
                    "files",
                    &[],
                    "drive",
                    &["delete files (Drive)", "elimina file (Drive)"],
                ),
                doc(
                    "list_files_dropbox",
                    "list",
                    "files",
                    &[],
                    "dropbox",
                    &["list files (Dropbox)"],
                ),
                doc(
                    "send_messages_slack",
                    "send",
                    "messages",
                    &[],
                    "slack",
                    &["Post a message to a channel."],
                ),
            ],
            &v,
        )
    }

    #[test]
    fn normalization_folds_accents_case_plurals_and_stop_words() {
        assert_eq!(tokens("Elenca i FILE della città"), ["elenca", "file", "citta"]);
        assert_eq!(tokens("list the files and searches"), ["list", "file", "search"]);
        assert_eq!(tokens("entries status class"), ["entry", "status", "class"]);
    }

    #[test]
    fn the_provider_and_the_qualifier_decide_between_similar_executors() {
        let r = router();
        let first = |q: &str| r.rank(q).first().map(|x| x.name.clone());
        assert_eq!(first("list files on Dropbox").as_deref(), Some("list_files_dropbox"));
        assert_eq!(first("list files drive").as_deref(), Some("list_files_drive"));
        assert_eq!(
            first("list spreadsheet files in drive").as_deref(),
            Some("list_files_xlsx_drive")
        );
        // Italian labels and synonyms mean the same concepts.
        assert_eq!(first("elimina i file di drive").as_deref(), Some("delete_files_drive"));
        assert_eq!(first("remove drive files").as_deref(), Some("delete_files_drive"));
        assert_eq!(
            first("invia un messaggio su slack").as_deref(),
            Some("send_messages_slack")
        );
        assert!(r.rank("weather tomorrow").is_empty());
    }

    #[test]
    fn routes_to_requires_a_strict_first_place() {
        let r = router();
        assert_eq!(r.routes_to("list files drive", 0), Ok(()));
        assert_eq!(r.routes_to("list files drive", 1), Err(Some("list_files_drive".into())));
        // Without a provider, two providers tie: neither ranks first.
        assert_eq!(r.routes_to("list files", 0), Err(Some("list_files_dropbox".into())));
        assert_eq!(r.routes_to("list files", 3), Err(Some("list_files_drive".into())));
        assert_eq!(r.routes_to("weather", 0), Err(None));
        // The ranking is deterministic.
        assert_eq!(r.rank("files"), r.rank("files"));
    }
}

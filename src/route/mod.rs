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
/// Room left on every comparison of a bound with a score, so that rounding (a bound summed
/// in another order than a score) never prunes an executor that could tie.
pub const SLACK: f64 = 1e-8;

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
    /// Executor → its features with `weight × idf`, by feature id (scores one executor
    /// without a pass over the postings).
    features: Vec<Vec<(u32, f64)>>,
    /// Feature id → the most any executor gains from it in a score (`multiplier × weight ×
    /// idf`, the largest of its postings): the bound [`Router::routes_to_with`] prunes with.
    bound: Vec<f64>,
    /// Provider word → the providers whose first word it is, each with all its words
    /// (`google` → `google_workspace`: `google`, `workspace`). A request names a provider
    /// only when it holds every word, so the first one is a key to look it up by: a request
    /// costs its own words, not a pass over every provider of the catalog (which made L4
    /// quadratic in the number of skills).
    providers: HashMap<String, Vec<(String, Vec<String>)>>,
    concepts: Concepts,
}

/// Reusable scores for [`Router::routes_to_with`] (one per thread).
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    score: Vec<f64>,
    touched: Vec<u32>,
    /// Executor → the stamp of the last request that collected it as a candidate.
    seen: Vec<u32>,
    stamp: u32,
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
        // Feature ids in the order of the features' names, not of the executors: every sum
        // below runs in id order, so a score does not depend on which executors came first
        // (floating-point addition is not associative).
        let names: BTreeSet<&String> = features.iter().flat_map(|f| f.keys()).collect();
        let ids: HashMap<String, u32> = names
            .iter()
            .enumerate()
            .map(|(i, k)| ((*k).clone(), u32::try_from(i).unwrap_or(u32::MAX)))
            .collect();
        let concept: Vec<bool> = names
            .iter()
            .map(|k| !k.starts_with("t:") && !k.starts_with("p:"))
            .collect();
        let mut raw: Vec<Vec<(u32, f64)>> = vec![Vec::new(); names.len()];
        for (e, f) in features.iter().enumerate() {
            for (k, w) in f {
                if let Some(id) = ids.get(k) {
                    raw[*id as usize].push((u32::try_from(e).unwrap_or(u32::MAX), *w));
                }
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
        let distinct: BTreeSet<&String> = docs.iter().map(|d| &d.provider).collect();
        let mut providers: HashMap<String, Vec<(String, Vec<String>)>> = HashMap::new();
        for p in distinct {
            let ws: Vec<String> = p.split('_').map(str::to_owned).collect();
            if let Some(first) = ws.first().cloned() {
                providers.entry(first).or_default().push((p.clone(), ws));
            }
        }
        // Postings are visited in feature-id order, so every executor's list comes out sorted.
        let mut features: Vec<Vec<(u32, f64)>> = vec![Vec::new(); docs.len()];
        let mut bound = vec![0.0; postings.len()];
        for (id, p) in postings.iter().enumerate() {
            let matched = if concept[id] { 1.0 + MISSING } else { 1.0 };
            let fid = u32::try_from(id).unwrap_or(u32::MAX);
            for &(e, wi) in p {
                features[e as usize].push((fid, wi));
                bound[id] = f64::max(bound[id], matched * wi);
            }
        }
        Router {
            names: docs.iter().map(|d| d.name.clone()).collect(),
            ids,
            postings,
            concept,
            penalty,
            features,
            bound,
            providers,
            concepts,
        }
    }

    /// The interned features of a request, sorted by id (the order every score sums in).
    fn request_ids(&self, request: &str) -> Vec<u32> {
        let mut ids: Vec<u32> = self
            .request_features(request)
            .iter()
            .filter_map(|k| self.ids.get(k).copied())
            .collect();
        ids.sort_unstable();
        ids
    }

    /// The score of executor `e` for a request's features (sorted by id) — the same sum, in
    /// the same order, as [`Router::accumulate`] makes, so the same bits — and the first of
    /// those features it shares (`None` when it shares none).
    fn score_one(&self, ids: &[u32], e: usize) -> (f64, Option<u32>) {
        let mut s = -self.penalty[e];
        let mut first = None;
        let mine = &self.features[e];
        let mut k = 0;
        for &id in ids {
            while k < mine.len() && mine[k].0 < id {
                k += 1;
            }
            if let Some(&(f, wi)) = mine.get(k)
                && f == id
            {
                let matched = if self.concept[id as usize] { 1.0 + MISSING } else { 1.0 };
                s += matched * wi;
                first.get_or_insert(id);
            }
        }
        (s, first)
    }

    /// The features of a request: its concepts, its terms, and the providers it names (every
    /// word of the provider present).
    pub fn request_features(&self, request: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let all: BTreeSet<String> = words(request).into_iter().collect();
        for w in &all {
            for (p, ws) in self.providers.get(w).into_iter().flatten() {
                if ws.iter().all(|w| all.contains(w)) {
                    out.insert(format!("p:{p}"));
                }
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
    fn accumulate(&self, ids: &[u32], scratch: &mut Scratch) {
        if scratch.score.len() != self.names.len() {
            scratch.score = vec![f64::NAN; self.names.len()];
        }
        for &e in &scratch.touched {
            scratch.score[e as usize] = f64::NAN;
        }
        scratch.touched.clear();
        for &id in ids {
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

    /// Is `(s, i)` a better first place than `best`? A higher score by more than
    /// [`EPSILON`], or a tie and the smaller name.
    fn better(&self, best: Option<(f64, usize)>, s: f64, i: usize) -> bool {
        match best {
            None => true,
            Some((bs, bi)) => s > bs + EPSILON || ((s - bs).abs() <= EPSILON && self.names[i] < self.names[bi]),
        }
    }

    /// Where a request goes: `Ok(())` when executor `expected` ranks first with a score
    /// strictly above every other's, else `Err(Some(name))` naming the executor that ranks
    /// first or ties, or `Err(None)` when nothing matches at all. `scratch` is reusable space
    /// (one per thread).
    ///
    /// The question is only whether `expected` ranks first, so most executors need no score
    /// (MaxScore pruning): the request's features are taken by [`Router::bound`], smallest
    /// first, and while their bounds sum below `expected`'s score (less [`EPSILON`] and
    /// [`SLACK`]), an executor sharing only those cannot reach a tie and is never visited. The
    /// common features (`a:list`, `t:file`) have the longest posting lists and the smallest
    /// bounds, so they are the ones skipped. The answer is the one of scoring every executor
    /// (a property test compares them): candidates are judged in the order a full pass
    /// would meet them, with the same scores bit for bit.
    pub fn routes_to_with(&self, request: &str, expected: usize, scratch: &mut Scratch) -> Result<(), Option<String>> {
        let ids = self.request_ids(request);
        let mine = if expected < self.names.len() {
            self.score_one(&ids, expected).0
        } else {
            0.0
        };
        if mine <= EPSILON {
            return Err(self.full_winner(&ids, expected, scratch));
        }
        let mut order: Vec<(f64, u32)> = ids.iter().map(|&f| (self.bound[f as usize], f)).collect();
        order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut skipped = 0.0;
        let mut first = 0;
        while first < order.len() && skipped + order[first].0 < mine - EPSILON - SLACK {
            skipped += order[first].0;
            first += 1;
        }
        if scratch.seen.len() != self.names.len() {
            scratch.seen = vec![0; self.names.len()];
            scratch.stamp = 0;
        }
        scratch.stamp = scratch.stamp.wrapping_add(1);
        if scratch.stamp == 0 {
            scratch.seen.iter_mut().for_each(|s| *s = 0);
            scratch.stamp = 1;
        }
        let stamp = scratch.stamp;
        // Those that could tie, keyed by where a full pass meets them first: their first
        // shared feature, then their place in its posting list (executor order).
        let mut ties: Vec<(u32, u32, f64)> = Vec::new();
        for &(_, f) in &order[first..] {
            for &(e, _) in &self.postings[f as usize] {
                if e as usize == expected || scratch.seen[e as usize] == stamp {
                    continue;
                }
                scratch.seen[e as usize] = stamp;
                let (s, met) = self.score_one(&ids, e as usize);
                if s + EPSILON >= mine {
                    ties.push((met.unwrap_or(f), e, s));
                }
            }
        }
        ties.sort_unstable_by_key(|t| (t.0, t.1));
        let mut best: Option<(f64, usize)> = None;
        for &(_, e, s) in &ties {
            if self.better(best, s, e as usize) {
                best = Some((s, e as usize));
            }
        }
        match best {
            Some((_, i)) => Err(Some(self.names[i].clone())),
            None => Ok(()),
        }
    }

    /// When `expected` scores nothing: the executor ranking first with a positive score,
    /// found by scoring every executor sharing a feature with the request.
    fn full_winner(&self, ids: &[u32], expected: usize, scratch: &mut Scratch) -> Option<String> {
        self.accumulate(ids, scratch);
        let mut best: Option<(f64, usize)> = None;
        for &e in &scratch.touched {
            let i = e as usize;
            if i != expected && self.better(best, scratch.score[i], i) {
                best = Some((scratch.score[i], i));
            }
        }
        best.filter(|b| b.0 > EPSILON).map(|b| self.names[b.1].clone())
    }
}

#[cfg(test)]
mod tests;

//! Selection (RUNTIME.md §1, "Selection (decided rules)") over a loaded menu index: the
//! trigger pass, the semantic pass, always-on skills, ordering and the cut.
//!
//! Scores are cosines rounded to four decimals before anything compares them, so that the
//! score printed is the score compared with τ and ties (broken by slug) are visible.

use aho_corasick::AhoCorasick;

use super::dense::{self, Vectors};
use super::index::{Index, Malformed};
use super::lexical::{self, Feature};
use super::score::{Scratch, TopK, add_best, add_products, fold_best, with_scratch};
use super::settings::MAX_SIZE;
use super::text::fold;

mod explain;
mod turn;
use turn::Turn;

/// How a skill got into the menu.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pass {
    /// A trigger is a substring of the folded turn.
    Trigger,
    /// Its score reached τ (a skill with triggers none of which matched, a skill under
    /// `gate_triggerless`, or an always-on skill that the semantic pass would have chosen).
    Semantic,
    /// A skill without triggers offered because it is always on (no `gate_triggerless`), its
    /// score below τ.
    Always,
}

impl Pass {
    /// `trigger`, `semantic` or `always`.
    pub fn as_str(self) -> &'static str {
        match self {
            Pass::Trigger => "trigger",
            Pass::Semantic => "semantic",
            Pass::Always => "always",
        }
    }
}

/// The dense half of a turn, when the catalog has a dense embedder.
#[derive(Clone, Debug, PartialEq)]
pub enum DenseTurn {
    /// The catalog has no dense embedder, or the caller does not use it.
    None,
    /// The turn's unit vector.
    Vector(Vec<f32>),
    /// The embedder could not embed the turn: the menu has trigger hits and always-on skills
    /// only (RUNTIME.md §1), and this message becomes a warning.
    Unavailable(String),
}

/// One question to the menu.
#[derive(Clone, Debug)]
pub struct Query<'a> {
    /// The turn's text.
    pub turn: &'a str,
    /// Restrict to an agent's skills (and its menu size).
    pub agent: Option<&'a str>,
    /// Menu size (1–6); default: the agent's, else `[menu] size`.
    pub size: Option<usize>,
    /// The turn's dense vector.
    pub dense: DenseTurn,
}

impl<'a> Query<'a> {
    /// A query over the whole catalog with the default size.
    pub fn new(turn: &'a str) -> Query<'a> {
        Query {
            turn,
            agent: None,
            size: None,
            dense: DenseTurn::None,
        }
    }
}

/// A feature both the turn and a skill have, with its share of the score.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Matched {
    /// `w:deploy`, `c:o:files`, `g:^de`, or `trigger:deploy`.
    pub feature: String,
    /// Its contribution to the lexical cosine.
    pub contribution: f64,
}

/// A skill offered.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Item {
    /// Index of the skill in the menu index.
    #[serde(skip)]
    pub index: usize,
    /// Its name: `load_playbook`'s argument.
    pub slug: String,
    /// Title.
    pub title: String,
    /// One-line description.
    pub description: String,
    /// How it got in.
    pub pass: Pass,
    /// Its score `s` (four decimals).
    pub score: f64,
    /// Triggers that matched.
    #[serde(skip)]
    pub triggers: Vec<String>,
}

/// The menu of one turn.
#[derive(Clone, Debug, PartialEq)]
pub struct Selection {
    /// The skills offered, in order.
    pub items: Vec<Item>,
    /// Embedder id used for `s`.
    pub embedder: String,
    /// The document recipe.
    pub recipe: String,
    /// τ in force for the embedder (applied only where the rules apply it), when known.
    pub threshold: Option<f64>,
    /// Problems that did not stop the menu (an unavailable embedder).
    pub warnings: Vec<String>,
}

/// The longest turn a menu is given for, in bytes (`skillc menu --turn`, `POST /api/menu`,
/// search queries): one limit for every caller.
pub const MAX_TURN: usize = 16 * 1024;

/// Refuses a turn that is blank or longer than [`MAX_TURN`] bytes.
///
/// # Errors
/// [`MenuError::Turn`].
pub fn check_turn(turn: &str) -> Result<(), MenuError> {
    // Blank: nothing but white space, controls and the characters that render as nothing or
    // reorder text (zero-width and bidirectional marks, the BOM: `skill::validate::is_hidden`).
    let invisible = |c: char| c.is_whitespace() || c.is_control() || crate::skill::validate::is_hidden(c);
    if turn.chars().all(invisible) || turn.len() > MAX_TURN {
        return Err(MenuError::Turn { bytes: turn.len() });
    }
    Ok(())
}

/// Why a menu cannot be given.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MenuError {
    /// The turn is blank or too long.
    #[error("the turn must be 1 to {MAX_TURN} bytes of text, not blank (this one has {bytes} bytes)")]
    Turn {
        /// Its length in bytes.
        bytes: usize,
    },
    /// `--agent` names no agent of the catalog.
    #[error(
        "no agent `{}` in this catalog (agents come from `[agents.<id>]` in pipeline.toml)",
        crate::diag::printable(.0)
    )]
    UnknownAgent(String),
    /// The size is out of range.
    #[error("menu size {0} is out of range: a menu has 1 to 6 skills")]
    Size(usize),
    /// τ is needed and none is recorded for this embedder.
    #[error(
        "no threshold is recorded for embedder `{embedder}` with recipe `{recipe}`: run `skillc menu calibrate BATTERY` \
         (a threshold calibrated for another embedder is never used)"
    )]
    NoThreshold {
        /// Embedder id.
        embedder: String,
        /// Recipe.
        recipe: String,
    },
}

impl MenuError {
    /// The error's code, the same on the command line (`error[CODE]`) and over HTTP
    /// (`{"error": {"code"}}`).
    pub fn code(&self) -> &'static str {
        match self {
            MenuError::Turn { .. } => "invalid_turn",
            MenuError::UnknownAgent(_) => "unknown_agent",
            MenuError::Size(_) => "invalid_size",
            MenuError::NoThreshold { .. } => "no_threshold",
        }
    }
}

/// A candidate before τ: its skill, how many triggers matched, and its score.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// Index in the menu index.
    pub index: usize,
    /// Triggers of the skill that matched the turn.
    pub hits: Vec<String>,
    /// Whether the skill has triggers at all.
    pub triggered: bool,
    /// Score `s`, four decimals.
    pub score: f64,
}

/// A verified catalog's menu, loaded once and asked many times (`serve`, embedders).
#[derive(Debug)]
pub struct Menu {
    index: Index,
    vectors: Option<Vectors>,
    /// All distinct triggers, and for each the skills that have it.
    automaton: Option<AhoCorasick>,
    trigger_skills: Vec<Vec<usize>>,
    /// Whether any skill has triggers (then τ is needed every turn).
    has_triggers: bool,
    /// Enabled skills without triggers, in index order: the fill of a short menu.
    always_on: Vec<usize>,
    /// Each agent's skills, as sorted indexes.
    agents: std::collections::BTreeMap<String, Vec<usize>>,
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// The pass that offers a candidate no trigger hit (RUNTIME.md §1, rules 2 and 3), or
/// `None`: a skill with triggers, or any skill under `gate_triggerless`, needs `s ≥ τ`; an
/// always-on skill is offered anyway, and was chosen by the semantic pass when `s ≥ τ` (τ in
/// force for the embedder, even where no rule applies it). `semantic` is false when the
/// embedder is down; `always` false when always-on skills are gated and τ cannot be applied.
fn rule(triggered: bool, gate: bool, always: bool, semantic: bool, tau: Option<f64>, score: f64) -> Option<Pass> {
    let passes = semantic && tau.is_some_and(|t| score >= t);
    match (triggered, gate) {
        (true, _) | (false, true) => passes.then_some(Pass::Semantic),
        (false, false) if always => Some(if passes { Pass::Semantic } else { Pass::Always }),
        (false, false) => None,
    }
}

impl Menu {
    /// Loads an index (and the dense vectors, when the index names them and they are given).
    ///
    /// # Errors
    /// `Malformed` when the bytes are not a menu index, or the vectors do not fit it.
    pub fn load(index: Vec<u8>, vectors: Option<Vec<u8>>) -> Result<Menu, Malformed> {
        Menu::from_index(Index::parse(index)?, vectors)
    }

    /// The menu of a parsed index (and its dense vectors, when the index names them and they
    /// are given): [`Menu::load`] after `Index::parse`, for a reader that parsed the index
    /// itself (beside its signature's hash, `Index::parse_beside`).
    ///
    /// # Errors
    /// `Malformed` when the vectors do not fit the index, or its triggers cannot be matched.
    pub fn from_index(index: Index, vectors: Option<Vec<u8>>) -> Result<Menu, Malformed> {
        let vectors = match (&index.header.dense, vectors) {
            (Some(d), Some(v)) => Some(Vectors::parse(v, index.skills.len(), d.dims).map_err(Malformed)?),
            _ => None,
        };
        let mut patterns: Vec<&str> = Vec::new();
        let mut trigger_skills: Vec<Vec<usize>> = Vec::new();
        let mut by_text: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for (i, s) in index.skills.iter().enumerate() {
            for t in &s.triggers {
                let id = *by_text.entry(t.as_str()).or_insert_with(|| {
                    patterns.push(t);
                    trigger_skills.push(Vec::new());
                    patterns.len() - 1
                });
                trigger_skills[id].push(i);
            }
        }
        let automaton = if patterns.is_empty() {
            None
        } else {
            Some(AhoCorasick::new(&patterns).map_err(|e| Malformed(format!("triggers: {e}")))?)
        };
        let has_triggers = !patterns.is_empty();
        let always_on = (0..index.skills.len())
            .filter(|&i| index.skills[i].enabled && index.skills[i].triggers.is_empty())
            .collect();
        let agents = index
            .header
            .settings
            .agents
            .iter()
            .map(|(id, a)| {
                let mut v: Vec<usize> = a.skills.iter().filter_map(|s| index.find(s)).collect();
                v.sort_unstable();
                v.dedup();
                (id.clone(), v)
            })
            .collect();
        Ok(Menu {
            has_triggers,
            always_on,
            agents,
            index,
            vectors,
            automaton,
            trigger_skills,
        })
    }

    /// The loaded index.
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// The dense embedder the catalog's vectors come from, when they were loaded.
    pub fn dense_embedder(&self) -> Option<&dense::DenseHeader> {
        self.vectors.as_ref().and(self.index.header.dense.as_ref())
    }

    /// The embedder id scores are given under for this query's dense turn.
    fn embedder_for(&self, dense: &DenseTurn) -> String {
        match (dense, self.dense_embedder()) {
            (DenseTurn::Vector(_), Some(d)) => dense::fused_id(&d.embedder),
            _ => lexical::EMBEDDER.to_owned(),
        }
    }

    /// τ for the embedder in use: the recorded one, or for the built-in embedder its shipped
    /// calibration (`lexical::CALIBRATED`).
    pub fn threshold_for(&self, embedder: &str) -> Option<f64> {
        let recipe = &self.index.header.recipe;
        match &self.index.header.settings.threshold {
            Some(t) if t.embedder == embedder && &t.recipe == recipe => Some(t.tau),
            _ if embedder == lexical::EMBEDDER && recipe == super::doc::RECIPE => Some(lexical::CALIBRATED),
            _ => None,
        }
    }

    /// Sums the turn's lexical products into `acc` (every skill a feature touches is marked in
    /// `scratch`), records which of the turn's words each touched skill's name twins match
    /// (`names`), and returns the turn's norm.
    ///
    /// A word of the turn counts once per skill: its features (stem, prefix, concepts; a
    /// feature two words share goes with the first) are alternatives, and only the best
    /// product enters the skill's sum (`lexical` module, `lexical/4`); letter trigrams are
    /// summed. The norm counts the features some skill has. The summation order (words in
    /// order, features by id, postings by skill, trigrams last) is fixed: the same sums on
    /// every call.
    fn accumulate(&self, features: &[Feature], s: &mut Scratch) -> f32 {
        let n = self.index.skills.len();
        let kept = self.index.keeps_decoded();
        // The word a feature stands for (its lowest word bit); trigrams (no word) last.
        let word = |f: &Feature| f.words.trailing_zeros();
        let mut order: Vec<&Feature> = features.iter().collect();
        order.sort_by_key(|f| (word(f), f.id));
        let mut qnorm = 0f32;
        let mut current = None;
        for f in order {
            let w = word(f);
            if current != Some(w) {
                fold_best(s);
                current = Some(w);
            }
            let gram = f.words == 0;
            // The same items in the same order either way: the sums do not depend on it.
            let (df, decoded, streamed) = if kept {
                match self.index.decoded_postings(f.id) {
                    Some((df, p)) => (df, Some(p), None),
                    None => continue,
                }
            } else {
                match self.index.postings(f.id) {
                    Some((df, p)) => (df, None, Some(p)),
                    None => continue,
                }
            };
            let q = f.weight * lexical::idf(n, df);
            qnorm += q * q;
            let qi = q * lexical::idf(n, df);
            match (decoded, streamed, gram) {
                (Some(p), _, true) => add_products(p.iter().map(|&(i, w)| (i as usize, w)), qi, f.words, s),
                (Some(p), _, false) => add_best(p.iter().map(|&(i, w)| (i as usize, w)), qi, f.words, s),
                (None, Some(p), true) => add_products(p, qi, f.words, s),
                (None, Some(p), false) => add_best(p, qi, f.words, s),
                (None, None, _) => {}
            }
        }
        fold_best(s);
        // Name twins: short lists (a few names each), read in place.
        for f in features.iter().filter(|f| f.words != 0) {
            if let Some((_, p)) = self.index.postings(lexical::name_twin(f.id)) {
                for (i, _) in p {
                    if s.seen[i] {
                        s.names[i] |= f.words;
                    }
                }
            }
        }
        qnorm.sqrt()
    }

    /// The lexical cosine of skill `i` from its accumulated sum.
    fn lexical_score(&self, acc: f32, qnorm: f32, i: usize) -> f32 {
        let norm = self.index.skills[i].norm;
        if qnorm > 0.0 && norm > 0.0 {
            acc / (qnorm * norm)
        } else {
            0.0
        }
    }

    /// The skills an agent may be offered (sorted indexes), `None` for the whole catalog.
    fn agent_skills(&self, agent: Option<&str>) -> Result<Option<&[usize]>, MenuError> {
        match agent {
            None => Ok(None),
            Some(id) => self
                .agents
                .get(id)
                .map(|v| Some(v.as_slice()))
                .ok_or_else(|| MenuError::UnknownAgent(id.to_owned())),
        }
    }

    /// Scores a turn into this thread's buffers and calls `f` with them: every enabled skill
    /// of the agent (or of the catalog) that a trigger hits, that shares a feature with the
    /// turn, or — with a dense turn — every such skill, is a candidate (`seen`), with its
    /// trigger hits (sorted, deduplicated) and its score `s` (four decimals, ≥ 0).
    fn with_turn<T>(
        &self,
        turn: &str,
        agent: Option<&str>,
        dense: &DenseTurn,
        f: impl FnOnce(&Turn<'_>) -> T,
    ) -> Result<T, MenuError> {
        let n = self.index.skills.len();
        let allowed = self.agent_skills(agent)?;
        let ok = |i: usize| self.index.skills[i].enabled && allowed.is_none_or(|a| a.binary_search(&i).is_ok());
        let mut hits: std::collections::BTreeMap<usize, Vec<String>> = Default::default();
        if let Some(ac) = &self.automaton {
            let folded = fold(turn);
            let mut seen = std::collections::BTreeSet::new();
            for m in ac.find_overlapping_iter(&folded) {
                if seen.insert(m.pattern().as_usize()) {
                    for &i in &self.trigger_skills[m.pattern().as_usize()] {
                        if ok(i) {
                            hits.entry(i).or_default().push(folded[m.start()..m.end()].to_owned());
                        }
                    }
                }
            }
        }
        for h in hits.values_mut() {
            h.sort();
            h.dedup();
        }
        let features = lexical::turn_features(turn, &self.index.lexicon);
        let words = features.iter().fold(0, |a, f| a | f.words);
        Ok(with_scratch(n, |s| {
            let qnorm = self.accumulate(&features, s);
            // Touched skills that may not be offered are no candidates (their sums are still
            // cleared with the buffers).
            for c in &mut s.cands {
                if !ok(*c as usize) {
                    s.seen[*c as usize] = false;
                }
            }
            for &i in hits.keys() {
                s.mark(i);
            }
            // The dense score of every skill that may be offered, computed once: the agreement
            // floors and each candidate's fused score read it.
            let dense: Option<Vec<f32>> = match (dense, &self.vectors) {
                (DenseTurn::Vector(q), Some(v)) => Some(
                    (0..n)
                        .map(|i| {
                            if ok(i) {
                                s.mark(i);
                                v.cosine(i, q)
                            } else {
                                0.0
                            }
                        })
                        .collect(),
                ),
                _ => None,
            };
            let agree = dense
                .as_deref()
                .and_then(|d| turn::agreement_floors(self, s, qnorm, words, d, (0..n).filter(|&i| ok(i))));
            f(&Turn {
                menu: self,
                scratch: s,
                qnorm,
                words,
                dense: dense.as_deref(),
                agree,
                hits: &hits,
                allowed,
            })
        }))
    }

    /// Every enabled candidate skill of the turn (the agent's, or the whole catalog's) that a
    /// trigger hits or that has a score above zero, with its score; ordered by skill.
    ///
    /// # Errors
    /// [`MenuError::UnknownAgent`].
    pub fn candidates(&self, turn: &str, agent: Option<&str>, dense: &DenseTurn) -> Result<Vec<Candidate>, MenuError> {
        self.with_turn(turn, agent, dense, |t| {
            let mut idx: Vec<usize> = t.candidates().collect();
            idx.sort_unstable();
            idx.into_iter().map(|i| t.candidate(i)).collect()
        })
    }

    /// The menu of a turn.
    ///
    /// # Errors
    /// [`MenuError`]: a blank or oversized turn, an unknown agent, a size out of range, or no
    /// threshold recorded for the embedder when one is needed.
    pub fn select(&self, q: &Query<'_>) -> Result<Selection, MenuError> {
        check_turn(q.turn)?;
        let settings = &self.index.header.settings;
        let size = match (q.size, q.agent) {
            (Some(s), _) => s,
            (None, Some(a)) => settings.agents.get(a).map_or(settings.size, |a| a.menu_size),
            (None, None) => settings.size,
        };
        if !(1..=MAX_SIZE).contains(&size) {
            return Err(MenuError::Size(size));
        }
        let mut warnings = Vec::new();
        let embedder = self.embedder_for(&q.dense);
        let dense_down = match &q.dense {
            DenseTurn::Unavailable(why) => {
                warnings.push(format!(
                    "the embedder is unavailable ({why}): this menu has trigger hits and always-on skills only"
                ));
                true
            }
            _ => false,
        };
        let gate = settings.gate_triggerless;
        let needs_tau = !dense_down && (gate || self.has_triggers);
        let tau = if needs_tau {
            Some(self.threshold_for(&embedder).ok_or_else(|| MenuError::NoThreshold {
                embedder: embedder.clone(),
                recipe: self.index.header.recipe.clone(),
            })?)
        } else {
            None
        };
        // τ in force, also where no rule applies it: an always-on skill whose score reaches it
        // was chosen by the semantic pass, and says so.
        let known = tau.or_else(|| (!dense_down).then(|| self.threshold_for(&embedder)).flatten());
        let always_ok = !(gate && dense_down);
        let slug = |i: usize| self.index.skills[i].slug.as_str();
        let items = self.with_turn(q.turn, q.agent, &q.dense, |t| {
            let mut hits: Vec<(usize, Pass, f64, Vec<String>)> = t
                .hits
                .iter()
                .map(|(&i, h)| (i, Pass::Trigger, t.score(i), h.clone()))
                .collect();
            hits.sort_by(|a, b| {
                b.3.len()
                    .cmp(&a.3.len())
                    .then(b.2.total_cmp(&a.2))
                    .then(slug(a.0).cmp(slug(b.0)))
            });
            let by_score = |a: &(usize, Pass, f64), b: &(usize, Pass, f64)| {
                b.2.total_cmp(&a.2).then_with(|| slug(a.0).cmp(slug(b.0)))
            };
            let mut rest = TopK::new(size.saturating_sub(hits.len()));
            for i in t.candidates().filter(|i| !t.hits.contains_key(i)) {
                let score = t.score(i);
                let triggered = !self.index.skills[i].triggers.is_empty();
                if let Some(pass) = rule(triggered, gate, always_ok, !dense_down, known, score) {
                    rest.push((i, pass, score), by_score);
                }
            }
            let counted = hits.len() + rest.seen;
            hits.truncate(size);
            hits.extend(rest.into_sorted().into_iter().map(|(i, p, s)| (i, p, s, Vec::new())));
            if counted < size && !gate && always_ok {
                // Always-on skills that share nothing with the turn (score 0), by slug.
                let allowed = t.allowed;
                let zero = self
                    .always_on
                    .iter()
                    .copied()
                    .filter(|&i| !t.is_candidate(i) && allowed.is_none_or(|a| a.binary_search(&i).is_ok()))
                    .take(size - counted)
                    .map(|i| (i, Pass::Always, 0.0, Vec::new()));
                hits.extend(zero);
            }
            hits.truncate(size);
            hits
        })?;
        Ok(Selection {
            items: items
                .into_iter()
                .map(|(i, pass, score, triggers)| {
                    let s = &self.index.skills[i];
                    Item {
                        index: i,
                        slug: s.slug.clone(),
                        title: s.title.clone(),
                        description: s.line.clone(),
                        pass,
                        score,
                        triggers,
                    }
                })
                .collect(),
            threshold: known,
            embedder,
            recipe: self.index.header.recipe.clone(),
            warnings,
        })
    }

    /// Applies the rules to candidates: trigger hits (more triggers first, then score,
    /// then slug), then the rest by score and slug. `semantic` is false when the embedder is
    /// down (no semantic pass); `always` false when always-on skills are gated and τ cannot
    /// be applied.
    pub fn order(
        &self,
        cands: &[Candidate],
        tau: Option<f64>,
        gate: bool,
        always: bool,
        semantic: bool,
    ) -> Vec<(usize, Pass, f64, Vec<String>)> {
        let slug = |i: usize| self.index.skills[i].slug.as_str();
        let mut hits: Vec<&Candidate> = cands.iter().filter(|c| !c.hits.is_empty()).collect();
        hits.sort_by(|a, b| {
            b.hits
                .len()
                .cmp(&a.hits.len())
                .then(b.score.total_cmp(&a.score))
                .then(slug(a.index).cmp(slug(b.index)))
        });
        let mut rest: Vec<(&Candidate, Pass)> = cands
            .iter()
            .filter(|c| c.hits.is_empty())
            .filter_map(|c| rule(c.triggered, gate, always, semantic, tau, c.score).map(|p| (c, p)))
            .collect();
        rest.sort_by(|a, b| {
            b.0.score
                .total_cmp(&a.0.score)
                .then(slug(a.0.index).cmp(slug(b.0.index)))
        });
        hits.into_iter()
            .map(|c| (c.index, Pass::Trigger, c.score, c.hits.clone()))
            .chain(rest.into_iter().map(|(c, p)| (c.index, p, c.score, Vec::new())))
            .collect()
    }

    /// The catalog ranked for a query, best first, at most `limit` (search, calibration):
    /// every enabled skill with a positive score or a trigger hit, no threshold.
    ///
    /// # Errors
    /// [`MenuError::Turn`], [`MenuError::UnknownAgent`].
    pub fn rank(&self, turn: &str, agent: Option<&str>, limit: usize) -> Result<Vec<Candidate>, MenuError> {
        check_turn(turn)?;
        let mut c = self.candidates(turn, agent, &DenseTurn::None)?;
        c.retain(|c| c.score > 0.0 || !c.hits.is_empty());
        let slug = |i: usize| self.index.skills[i].slug.as_str();
        c.sort_by(|a, b| {
            b.hits
                .len()
                .cmp(&a.hits.len())
                .then(b.score.total_cmp(&a.score))
                .then(slug(a.index).cmp(slug(b.index)))
        });
        c.truncate(limit);
        Ok(c)
    }
}

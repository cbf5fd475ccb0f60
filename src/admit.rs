//! Admission: the verdict of each translated plan, level by level (PRODUCT.md, "Admission
//! levels"). Translation is not admission: a plan that translates can still be rejected here.
//!
//! - **L1 vocabulary**: the name's parts belong to the closed vocabulary and the name follows
//!   the grammar (`AD001`).
//! - **L2 catalog**: the name is unique across the catalog; a collision rejects every skill
//!   involved, since a batch build has no "first" skill (`AD002`).
//! - **L3 affinity**: the Jaccard overlap of the plan's affinity terms with every other
//!   executor's stays below the threshold (`AD004`). The confusion is a property of the pair,
//!   so *both* plans are rejected, each naming the executor it is most confused with (ties: the
//!   smallest name). Like L2, the verdict does not depend on the order skills are found in.
//! - **L4 routing**: the plan's prototype requests (English and Italian labels, and the
//!   sub-command's own description when it has one) must route to it first with the
//!   [`route`] router, over the executors that passed L1–L3 and L5–L6 (`AD005`). There is no
//!   history (`out/` is never read, and the previous catalog does not decide anything): when
//!   one plan's label request routes to another executor, the victim and the executor that
//!   steals it are both rejected, each naming the other (a description request that routes
//!   elsewhere rejects only its own plan: the description asks for another executor's job). The battery is re-run on the survivors until
//!   it holds, so [`Admission::battery`] passes on exactly the admitted catalog.
//! - **L5 executable**: the referenced program is a file of the skill or a declared binary, the
//!   wrapper compiles and its `--describe` equals the contract (`AD006`). Admission runs no
//!   process: it asks a [`Runner`], and the build hands it the answers its IO layer recorded
//!   beforehand ([`Recorded`]; `build::exec` runs `python3`). No `python3` ⇒ L5 is `not-run`.
//! - **L6 semantic**: the sub-command's own wording (its description and the section heading
//!   it was found under) must not contradict the action class of its name (`AD007`), and a
//!   configured external verifier must accept it (`AD008`, fail closed).
//!
//! Evaluation order: L1, L2, then the per-plan L5 and L6, then the catalog-wide L3 and L4 over
//! the plans still in, so the routing battery is that of the admitted catalog. A plan is
//! reported at the first level that rejected it in that order.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use rayon::prelude::*;
use serde_json::json;

use crate::diag::Rule;
use crate::extract::Program;
use crate::generate::{Executor, SkillInfo};
use crate::model::{
    AdmissionSettings, DescribeResult, Lang, Level, LevelStatus, Prototype, PrototypeKind, Recorded, SkillFile,
    WRAPPER_DIGEST,
};
use crate::route::{self, Doc, Router};
use crate::rules;
use crate::translate::{ExecutorName, Plan};
use crate::vocab::{self, ActionClass, Vocabulary};

/// One translated plan, with what admission needs to judge it.
#[derive(Clone, Copy, Debug)]
pub struct Candidate<'a> {
    /// The canonical name.
    pub name: &'a ExecutorName,
    /// The plan (sub-command, wording, program).
    pub plan: &'a Plan,
    /// The generated executor (wrapper, contract, labels, affinity terms, provisional
    /// manifest). `None` only in tests of L1/L2.
    pub executor: Option<&'a Executor>,
}

/// The plans of one skill, as admission sees them.
#[derive(Clone, Debug)]
pub struct SkillPlans<'a> {
    /// The skill name.
    pub skill: &'a str,
    /// One entry per plan: a candidate when translated, `None` when translation rejected it.
    pub plans: Vec<Option<Candidate<'a>>>,
    /// The skill (retained files, for L5's program check), when known.
    pub info: Option<&'a SkillInfo>,
    /// The retained files, for the external verifier.
    pub files: &'a [SkillFile],
}

/// How admission runs: the build's configuration (`pipeline.toml` `[admission]`, `--skip`)
/// and the process runner used by L5 and the external L6 verifier.
pub struct Options<'a> {
    /// Levels skipped on request.
    pub skip: &'a [Level],
    /// The `[admission]` thresholds and external verifier.
    pub settings: &'a AdmissionSettings,
    /// Answers L5's and the external verifier's questions.
    pub runner: &'a dyn Runner,
}

/// The processes admission asks about, as questions and answers: the build gives it
/// [`Recorded`] answers (its IO layer, `build::exec`, ran the processes beforehand); tests
/// give a fake.
pub trait Runner: Sync {
    /// Compiles each wrapper `(file name, source)` and runs its `--describe`, returning one
    /// result per wrapper in order; `None` when Python is not available (L5 is then
    /// `not-run`).
    fn describe(&self, wrappers: &[(String, String)]) -> Option<Vec<DescribeResult>>;

    /// Runs the external verifier `command` with `input` on standard input and returns its
    /// standard output, or why it could not be run (missing, crashed, timed out, non-zero
    /// exit).
    fn verify(&self, command: &str, input: &str) -> Result<String, String>;
}

impl Runner for Recorded {
    fn describe(&self, wrappers: &[(String, String)]) -> Option<Vec<DescribeResult>> {
        if !self.python {
            return None;
        }
        Some(
            wrappers
                .iter()
                .map(|(_, source)| {
                    // The build hands admission a wrapper's digest rather than its text
                    // (`sha256:<hex>`), to keep one copy of every wrapper in memory.
                    let key = match source.strip_prefix(WRAPPER_DIGEST) {
                        Some(hex) => hex.to_owned(),
                        None => crate::util::sha256(source.as_bytes()),
                    };
                    self.described
                        .get(&key)
                        .cloned()
                        .unwrap_or_else(|| Err("the wrapper was not checked (no recorded result)".into()))
                })
                .collect(),
        )
    }

    fn verify(&self, _command: &str, input: &str) -> Result<String, String> {
        self.verified
            .get(&crate::util::sha256(input.as_bytes()))
            .cloned()
            .unwrap_or_else(|| Err("the verifier was not run for this executor (no recorded answer)".into()))
    }
}

/// The verdict of one plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Admitted, with the status of every level.
    Admitted(BTreeMap<Level, LevelStatus>),
    /// Rejected at a level.
    Rejected {
        /// The level that rejected it.
        level: Level,
        /// The rule.
        rule: &'static Rule,
        /// Why.
        reason: String,
    },
    /// Rejected earlier, at translation.
    NotTranslated,
}

/// The verdict of one skill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillVerdict {
    /// Set when the whole skill is rejected (L2 collision with another skill).
    pub rejected: Option<(&'static Rule, String)>,
    /// One verdict per plan.
    pub plans: Vec<Verdict>,
}

/// The result of admitting a catalog.
#[derive(Clone, Debug, PartialEq)]
pub struct Admission {
    /// One verdict per skill, in the order given.
    pub skills: Vec<SkillVerdict>,
    /// Catalog-wide status of each level: `run`, `skipped` or `not-run`.
    pub levels: BTreeMap<Level, LevelStatus>,
    /// The routing battery of the admitted executors, sorted (empty when L4 is skipped).
    pub battery: Vec<Prototype>,
}

/// Checks the L1 grammar: `action_object[_qualifier]*_provider`, lowercase `[a-z0-9]` words.
pub fn check_l1(name: &ExecutorName, vocab: &Vocabulary) -> Result<(), String> {
    let full = name.full();
    if !full.split('_').all(vocab::is_name_word) || full.split('_').count() < 3 {
        return Err(format!(
            "`{full}` does not follow the grammar action_object[_qualifier]_provider"
        ));
    }
    if !vocab.actions.contains_key(&name.action) {
        return Err(format!("action `{}` is not in the vocabulary", name.action));
    }
    if !vocab.objects.contains_key(&name.object) {
        return Err(format!("object `{}` is not in the vocabulary", name.object));
    }
    for q in &name.qualifiers {
        match vocab.qualifiers.get(q) {
            None => return Err(format!("qualifier `{q}` is not in the vocabulary")),
            Some(def) if !def.objects.contains(&name.object) => {
                return Err(format!("qualifier `{q}` cannot qualify `{}`", name.object));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// One plan still in the running, by (skill index, plan index).
type Key = (usize, usize);

/// Admits the plans of every skill of a catalog.
pub fn admit(skills: &[SkillPlans<'_>], vocab: &Vocabulary, opts: &Options<'_>) -> Admission {
    let skip = opts.skip;
    let mut levels: BTreeMap<Level, LevelStatus> = Level::ALL
        .into_iter()
        .map(|l| {
            (
                l,
                if skip.contains(&l) {
                    LevelStatus::Skipped
                } else {
                    LevelStatus::Run
                },
            )
        })
        .collect();
    // L1, per plan.
    let mut out: Vec<SkillVerdict> = skills
        .iter()
        .map(|s| SkillVerdict {
            rejected: None,
            plans: s
                .plans
                .iter()
                .map(|c| match c {
                    None => Verdict::NotTranslated,
                    Some(c) => match check_l1(c.name, vocab) {
                        Err(reason) => Verdict::Rejected {
                            level: Level::L1,
                            rule: &rules::AD001,
                            reason,
                        },
                        Ok(()) => Verdict::Admitted(BTreeMap::new()),
                    },
                })
                .collect(),
        })
        .collect();
    if !skip.contains(&Level::L2) {
        check_l2(skills, &mut out);
    }
    let alive = |out: &[SkillVerdict]| -> Vec<Key> {
        let mut v = Vec::new();
        for (i, s) in out.iter().enumerate() {
            if s.rejected.is_some() {
                continue;
            }
            for (j, p) in s.plans.iter().enumerate() {
                if matches!(p, Verdict::Admitted(_)) {
                    v.push((i, j));
                }
            }
        }
        v
    };
    let reject = |out: &mut Vec<SkillVerdict>, k: Key, level: Level, rule: &'static Rule, reason: String| {
        out[k.0].plans[k.1] = Verdict::Rejected { level, rule, reason };
    };
    let cand = |k: Key| skills[k.0].plans[k.1].as_ref();

    // L5 (per plan, one batch of processes).
    let mut l5_ran = false;
    if !skip.contains(&Level::L5) {
        let keys = alive(&out);
        let (ran, results) = check_l5(skills, &keys, opts.runner);
        l5_ran = ran;
        if !ran {
            levels.insert(Level::L5, LevelStatus::NotRun);
        }
        for (k, r) in keys.into_iter().zip(results) {
            if let Err(reason) = r {
                reject(&mut out, k, Level::L5, &rules::AD006, reason);
            }
        }
    }
    // L6 (per plan): the built-in verifier, then the external one.
    if !skip.contains(&Level::L6) {
        let keys = alive(&out);
        let verdicts: Vec<(Key, Option<(&'static Rule, String)>)> = keys
            .par_iter()
            .map(|&k| {
                let Some(c) = cand(k) else { return (k, None) };
                if let Err(reason) = check_l6_builtin(c, vocab) {
                    return (k, Some((&rules::AD007, reason)));
                }
                if opts.settings.has_verifier()
                    && let Err(reason) = check_l6_external(&skills[k.0], c, &opts.settings.verifier, opts.runner)
                {
                    return (k, Some((&rules::AD008, reason)));
                }
                (k, None)
            })
            .collect();
        for (k, v) in verdicts {
            if let Some((rule, reason)) = v {
                reject(&mut out, k, Level::L6, rule, reason);
            }
        }
    }
    // L3 (catalog-wide).
    if !skip.contains(&Level::L3) {
        let keys = alive(&out);
        let terms: Vec<&[String]> = keys
            .iter()
            .map(|&k| {
                cand(k)
                    .and_then(|c| c.executor)
                    .map_or(&[][..], |e| e.affinity.as_slice())
            })
            .collect();
        let names: Vec<(String, &str)> = keys
            .iter()
            .map(|&k| cand(k).map_or((String::new(), ""), |c| (c.name.full(), c.name.provider.as_str())))
            .collect();
        for (idx, (other, overlap)) in check_l3(&terms, &names, opts.settings) {
            let k = keys[idx];
            let threshold = if names[idx].1 == names[other].1 {
                opts.settings.affinity_threshold_same_provider
            } else {
                opts.settings.affinity_threshold
            };
            reject(
                &mut out,
                k,
                Level::L3,
                &rules::AD004,
                format!(
                    "its affinity terms overlap {:.2} with those of `{}` (threshold {threshold}): a request could mean either",
                    overlap, names[other].0
                ),
            );
        }
    }
    // L4 (catalog-wide), repeated until the battery holds on the survivors.
    let mut battery = Vec::new();
    if !skip.contains(&Level::L4) {
        loop {
            let keys = alive(&out);
            let (failures, protos) = check_l4(skills, &keys, vocab);
            if failures.is_empty() {
                battery = protos;
                break;
            }
            for (idx, reason) in failures {
                reject(&mut out, keys[idx], Level::L4, &rules::AD005, reason);
            }
        }
    }
    // Admitted: the status of every level.
    for k in alive(&out) {
        let status: BTreeMap<Level, LevelStatus> = Level::ALL
            .into_iter()
            .map(|l| {
                let s = if skip.contains(&l) {
                    LevelStatus::Skipped
                } else if l == Level::L5 && !l5_ran {
                    LevelStatus::NotRun
                } else {
                    LevelStatus::Pass
                };
                (l, s)
            })
            .collect();
        out[k.0].plans[k.1] = Verdict::Admitted(status);
    }
    battery.sort();
    Admission {
        skills: out,
        levels,
        battery,
    }
}

/// L2: which skills use each admitted name; a name used by two skills rejects both whole.
fn check_l2(skills: &[SkillPlans<'_>], out: &mut [SkillVerdict]) {
    let mut owners: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    for (i, s) in skills.iter().enumerate() {
        for (j, c) in s.plans.iter().enumerate() {
            if let (Some(c), Verdict::Admitted(_)) = (c, &out[i].plans[j]) {
                owners.entry(c.name.full()).or_default().insert(i);
            }
        }
    }
    for (name, set) in owners {
        if set.len() < 2 {
            continue;
        }
        for &i in &set {
            if out[i].rejected.is_some() {
                continue;
            }
            let others: Vec<String> = set
                .iter()
                .filter(|&&k| k != i)
                .map(|&k| format!("`{}`", skills[k].skill))
                .collect();
            out[i].rejected = Some((
                &rules::AD002,
                format!("executor `{name}` is also produced by skill {}", others.join(", ")),
            ));
        }
    }
    for v in out.iter_mut() {
        if let Some((rule, reason)) = &v.rejected {
            for p in &mut v.plans {
                if matches!(p, Verdict::Admitted(_)) {
                    *p = Verdict::Rejected {
                        level: Level::L2,
                        rule,
                        reason: reason.clone(),
                    };
                }
            }
        }
    }
}

/// L3 over executors `terms[i]` (sorted affinity terms) named `names[i]` = (full name,
/// provider): for every executor whose overlap with another reaches the threshold, the other
/// executor it overlaps most with (ties: the smallest name) and the overlap.
///
/// Uses prefix filtering: terms are interned and ranked by rarity, and two sets with Jaccard
/// ≥ t share a term among the first `|a| - ceil(t·|a|) + 1` rarest of each, so only those
/// terms are indexed; the result is exactly that of comparing every pair (a unit test checks
/// it against the quadratic scan). Memory stays linear: each executor keeps only its best
/// match.
pub fn check_l3(
    terms: &[&[String]],
    names: &[(String, &str)],
    settings: &AdmissionSettings,
) -> BTreeMap<usize, (usize, f64)> {
    let t_min = settings
        .affinity_threshold
        .min(settings.affinity_threshold_same_provider)
        .clamp(0.0, 1.0);
    let mut df: HashMap<&str, u32> = HashMap::new();
    for ts in terms {
        for t in ts.iter() {
            *df.entry(t.as_str()).or_default() += 1;
        }
    }
    // Term id = rank by rarity (then by the term), so sorting ids sorts by rarity.
    let mut vocab_terms: Vec<(&str, u32)> = df.iter().map(|(t, n)| (*t, *n)).collect();
    vocab_terms.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(b.0)));
    let id: HashMap<&str, u32> = vocab_terms
        .iter()
        .enumerate()
        .map(|(i, (t, _))| (*t, u32::try_from(i).unwrap_or(u32::MAX)))
        .collect();
    let sets: Vec<Vec<u32>> = terms
        .iter()
        .map(|ts| {
            let mut v: Vec<u32> = ts.iter().filter_map(|t| id.get(t.as_str()).copied()).collect();
            v.sort_unstable();
            v.dedup();
            v
        })
        .collect();
    let prefix = |n: usize| -> usize {
        if n == 0 {
            return 0;
        }
        let need = (t_min * n as f64).ceil() as usize;
        (n + 1).saturating_sub(need.max(1)).min(n)
    };
    let mut index: Vec<Vec<u32>> = vec![Vec::new(); vocab_terms.len()];
    for (i, set) in sets.iter().enumerate() {
        for &t in &set[..prefix(set.len())] {
            index[t as usize].push(u32::try_from(i).unwrap_or(u32::MAX));
        }
    }
    let overlap = |a: &[u32], b: &[u32]| -> f64 {
        let (mut i, mut j, mut both) = (0, 0, 0usize);
        while i < a.len() && j < b.len() {
            match a[i].cmp(&b[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    both += 1;
                    i += 1;
                    j += 1;
                }
            }
        }
        let union = a.len() + b.len() - both;
        if union == 0 { 0.0 } else { both as f64 / union as f64 }
    };
    let n = sets.len();
    let mut provider_ids: HashMap<&str, u32> = HashMap::new();
    let provider: Vec<u32> = names
        .iter()
        .map(|(_, p)| {
            let next = u32::try_from(provider_ids.len()).unwrap_or(u32::MAX);
            *provider_ids.entry(p).or_insert(next)
        })
        .collect();
    type Best = Vec<Option<(usize, f64)>>;
    // Is `(j, o)` a better partner than `current`? Higher overlap, then the smaller name: a
    // total order, so merging the threads' results in any order gives the same answer.
    let better = |current: Option<(usize, f64)>, j: usize, o: f64| match current {
        None => true,
        Some((bj, bo)) => o > bo || (o == bo && names[j].0 < names[bj].0),
    };
    // Each pair is compared once (j > i) and noted for both; every thread keeps its own best
    // partners, merged at the end.
    let best: Best = (0..n)
        .into_par_iter()
        .fold(
            || (vec![None; n], vec![u32::MAX; n]),
            |(mut best, mut seen): (Best, Vec<u32>), i| {
                let a = &sets[i];
                let stamp = u32::try_from(i).unwrap_or(u32::MAX);
                for &t in &a[..prefix(a.len())] {
                    for &j in &index[t as usize] {
                        let j = j as usize;
                        if j <= i || seen[j] == stamp {
                            continue;
                        }
                        seen[j] = stamp;
                        let b = &sets[j];
                        let threshold = if provider[i] == provider[j] {
                            settings.affinity_threshold_same_provider
                        } else {
                            settings.affinity_threshold
                        };
                        // Length filter: |a ∩ b| ≤ min, so J ≤ min / max.
                        let (lo, hi) = (a.len().min(b.len()), a.len().max(b.len()));
                        if (lo as f64) < threshold * hi as f64 {
                            continue;
                        }
                        let o = overlap(a, b);
                        if o < threshold {
                            continue;
                        }
                        if better(best[i], j, o) {
                            best[i] = Some((j, o));
                        }
                        if better(best[j], i, o) {
                            best[j] = Some((i, o));
                        }
                    }
                }
                (best, seen)
            },
        )
        .map(|(best, _)| best)
        .reduce(
            || vec![None; n],
            |mut x, y| {
                for (k, b) in y.into_iter().enumerate() {
                    if let Some((j, o)) = b
                        && better(x[k], j, o)
                    {
                        x[k] = Some((j, o));
                    }
                }
                x
            },
        );
    best.into_iter()
        .enumerate()
        .filter_map(|(i, b)| b.map(|b| (i, b)))
        .collect()
}

/// The prototype requests of one executor: its English and Italian labels (provider
/// included, parentheses dropped) and, when the source describes the sub-command in three
/// words or more, the English label followed by that description (`list labels Workspace:
/// Labels with message and unread counts`), the way a user asking for it would word it.
pub fn prototypes(c: &Candidate<'_>) -> Vec<(Lang, String, PrototypeKind)> {
    let Some(e) = c.executor else { return Vec::new() };
    let plain = |s: &str| s.replace(['(', ')'], "");
    let mut v = vec![
        (Lang::En, plain(&e.labels.en), PrototypeKind::Label),
        (Lang::It, plain(&e.labels.it), PrototypeKind::Label),
    ];
    if let Some(d) = &c.plan.subcommand.description
        && d.split_whitespace().count() >= 3
    {
        let d: String = d.split_whitespace().collect::<Vec<_>>().join(" ");
        v.push((
            Lang::En,
            format!("{}: {d}", plain(&e.labels.en)),
            PrototypeKind::Description,
        ));
    }
    v.sort();
    v.dedup();
    v
}

/// The router's view of an executor.
pub fn doc(c: &Candidate<'_>) -> Doc {
    let mut text = Vec::new();
    if let Some(e) = c.executor {
        text.push(e.labels.en.clone());
        text.push(e.labels.it.clone());
        text.push(e.description.clone());
        text.extend(e.affinity.iter().cloned());
    }
    Doc {
        name: c.name.full(),
        action: c.name.action.clone(),
        object: c.name.object.clone(),
        qualifiers: c.name.qualifiers.clone(),
        provider: c.name.provider.clone(),
        text,
    }
}

/// L4 over the plans `keys`: the failures (index into `keys`, reason) and, when there are
/// none, the battery.
fn check_l4(skills: &[SkillPlans<'_>], keys: &[Key], vocab: &Vocabulary) -> (BTreeMap<usize, String>, Vec<Prototype>) {
    let cands: Vec<Candidate<'_>> = keys.iter().filter_map(|&(i, j)| skills[i].plans[j]).collect();
    if cands.len() != keys.len() {
        return (BTreeMap::new(), Vec::new());
    }
    let docs: Vec<Doc> = cands.iter().map(doc).collect();
    let router = Router::new(&docs, vocab);
    let index: HashMap<&str, usize> = docs.iter().enumerate().map(|(i, d)| (d.name.as_str(), i)).collect();
    type Miss = (String, Lang, Option<String>, PrototypeKind);
    let results: Vec<(usize, Vec<Prototype>, Vec<Miss>)> = cands
        .par_iter()
        .enumerate()
        .map_init(route::Scratch::default, |scratch, (i, c)| {
            let mut protos = Vec::new();
            let mut misses = Vec::new();
            for (lang, request, kind) in prototypes(c) {
                if let Err(winner) = router.routes_to_with(&request, i, scratch) {
                    misses.push((request.clone(), lang, winner, kind));
                }
                protos.push(Prototype {
                    expected: docs[i].name.clone(),
                    lang,
                    request,
                    kind,
                });
            }
            (i, protos, misses)
        })
        .collect();
    let mut failures: BTreeMap<usize, String> = BTreeMap::new();
    let mut battery = Vec::new();
    for (i, protos, misses) in results {
        battery.extend(protos);
        // The victim's first miss (in prototype order) names the executor that took it; that
        // executor is rejected too, for stealing the request.
        if let Some((request, lang, winner, kind)) = misses.into_iter().next() {
            let reason = match &winner {
                Some(w) => format!(
                    "its prototype request \"{request}\" ({}) routes to `{w}` first, not to it",
                    lang.as_str()
                ),
                None => format!(
                    "its prototype request \"{request}\" ({}) routes to no executor",
                    lang.as_str()
                ),
            };
            failures.entry(i).or_insert(reason);
            // Only the labels are an executor's own requests: a description that also asks for
            // another executor's job rejects its own plan, not the other one.
            let label = kind == PrototypeKind::Label;
            if let Some(w) = winner.as_deref().and_then(|w| index.get(w)).filter(|_| label) {
                failures.entry(*w).or_insert(format!(
                    "it takes the prototype request \"{request}\" ({}) of `{}`",
                    lang.as_str(),
                    docs[i].name
                ));
            }
        }
    }
    (failures, battery)
}

/// L5 for the plans `keys`: whether Python ran, and one result per key. Without Python, a
/// missing program still rejects (that check needs no Python); the rest is not run.
fn check_l5(skills: &[SkillPlans<'_>], keys: &[Key], runner: &dyn Runner) -> (bool, Vec<Result<(), String>>) {
    let mut wrappers: Vec<(String, String)> = Vec::new();
    let mut slot: Vec<Option<usize>> = Vec::new();
    let mut pre: Vec<Result<(), String>> = Vec::new();
    for &(i, j) in keys {
        let c = skills[i].plans[j].as_ref();
        let program = c.map(|c| check_program(&c.plan.subcommand.program, skills[i].info));
        match (c.and_then(|c| c.executor), program) {
            (Some(e), Some(Ok(()))) => {
                slot.push(Some(wrappers.len()));
                wrappers.push((format!("{}.py", e.name), e.wrapper.clone()));
                pre.push(Ok(()));
            }
            (_, Some(Err(why))) => {
                slot.push(None);
                pre.push(Err(why));
            }
            _ => {
                slot.push(None);
                pre.push(Err("no wrapper was generated".into()));
            }
        }
    }
    let described = if wrappers.is_empty() {
        Vec::new()
    } else {
        match runner.describe(&wrappers) {
            Some(d) => d,
            None => return (false, pre),
        }
    };
    (
        true,
        keys.iter()
            .enumerate()
            .map(|(n, &(i, j))| {
                pre[n].clone()?;
                let (Some(w), Some(e)) = (slot[n], skills[i].plans[j].and_then(|c| c.executor)) else {
                    return Err("no wrapper was generated".into());
                };
                let text = described
                    .get(w)
                    .cloned()
                    .unwrap_or_else(|| Err("the wrapper check returned no result".into()))?;
                let printed: serde_json::Value = serde_json::from_str(&text)
                    .map_err(|err| format!("the wrapper's --describe does not print JSON ({err})"))?;
                if printed == e.contract {
                    Ok(())
                } else {
                    Err("the wrapper's --describe differs from the manifest's contract".into())
                }
            })
            .collect(),
    )
}

/// The program an executor runs exists: a file of the skill (scripts, GAIA tool modules) or
/// a declared binary (extraction only makes binaries of declared ones; the name must be a bare
/// command name).
pub fn check_program(program: &Program, info: Option<&SkillInfo>) -> Result<(), String> {
    match program {
        Program::Script { path, .. } | Program::Tool { module: path, .. } => {
            if info.is_some_and(|i| i.file_hashes.contains_key(path)) {
                Ok(())
            } else {
                Err(format!("the program `{path}` is not a file of the skill"))
            }
        }
        Program::Binary { name } => {
            if !name.is_empty() && !name.contains(['/', '\\']) && !name.starts_with('-') {
                Ok(())
            } else {
                Err(format!("the binary `{name}` is not a bare command name"))
            }
        }
    }
}

/// The wording L6 reads: the sub-command's description and the heading it was found under.
fn wording(c: &Candidate<'_>) -> Vec<(&'static str, String)> {
    let sc = &c.plan.subcommand;
    let mut v = Vec::new();
    if let Some(d) = &sc.description {
        v.push(("description", d.clone()));
    }
    if !sc.source_section.is_empty() && sc.source_section != "metadata.gaia.tools" {
        v.push(("section", sc.source_section.clone()));
    }
    v
}

/// The action a word means, as a verb: the word, its plural stem, or the word without a
/// third-person `s` (`gets`, `lists`, `removes`).
fn action_of<'v>(word: &str, vocab: &'v Vocabulary) -> Option<&'v vocab::Action> {
    let m = vocab
        .action(word)
        .or_else(|| vocab.action(&route::stem(word)))
        .or_else(|| word.strip_suffix('s').and_then(|w| vocab.action(w)))?;
    vocab.actions.get(m.name())
}

/// Whether wording of class `said` contradicts a name of class `own`: the name understates
/// what the command does (a `safe` name for a command that changes or removes things, a
/// `producer` name for one that removes things), or a `destructive` name for a command
/// described as only reading. A `producer` described as reading ("run … Get the result") is
/// not a contradiction: producers often answer with data.
pub fn contradicts(own: ActionClass, said: ActionClass) -> bool {
    use ActionClass::{Destructive, Producer, Safe};
    matches!(
        (own, said),
        (Safe, Producer | Destructive) | (Producer, Destructive) | (Destructive, Safe)
    )
}

/// The built-in L6 verifier: the sub-command's own wording must not contradict the class of
/// its action. It rejects only a clear contradiction ([`contradicts`]): the description's
/// leading verb (its first word: "List every file…", "Removes…") means an action of a
/// contradicting class, and no word of the description or of the section heading means the
/// executor's action or one of its class, e.g. a `delete` described as "List every file in
/// the folder", or a `read` described as "Create a note". A description that
/// does not start with an action word (or no description) passes: headings group several
/// commands and nouns such as "share" or "status" are not verbs.
pub fn check_l6_builtin(c: &Candidate<'_>, vocab: &Vocabulary) -> Result<(), String> {
    let Some(own) = vocab.actions.get(&c.name.action) else {
        return Ok(());
    };
    let Some(description) = &c.plan.subcommand.description else {
        return Ok(());
    };
    let Some(lead) = route::words(description).into_iter().next() else {
        return Ok(());
    };
    let Some(said) = action_of(&lead, vocab) else {
        return Ok(());
    };
    // A leading word that is also an object ("Labels with…", "Tags…") is a noun.
    if vocab.object(&lead).is_some() || vocab.object(&route::stem(&lead)).is_some() {
        return Ok(());
    }
    if !contradicts(own.class, said.class) {
        return Ok(());
    }
    let agrees = wording(c).iter().any(|(_, text)| {
        route::words(text)
            .iter()
            .filter_map(|w| action_of(w, vocab))
            .any(|a| a.name == own.name || a.class == own.class)
    });
    if agrees {
        return Ok(());
    }
    Err(format!(
        "its description starts with \"{lead}\" ({}, {}) but the executor's action `{}` is {}, and nothing in its wording means {}",
        said.name,
        said.class.as_str(),
        own.name,
        own.class.as_str(),
        own.name,
    ))
}

/// The JSON the external verifier receives on standard input (`skillc.verifier/1`,
/// docs/json.md).
pub fn verifier_input(skill: &SkillPlans<'_>, c: &Candidate<'_>) -> serde_json::Value {
    let sc = &c.plan.subcommand;
    let program_path = match &sc.program {
        Program::Script { path, .. } | Program::Tool { module: path, .. } => Some(path.clone()),
        Program::Binary { .. } => None,
    };
    let program_text = program_path.as_ref().and_then(|p| {
        skill
            .files
            .iter()
            .find(|f| f.path == *p)
            .map(|f| String::from_utf8_lossy(&f.bytes).into_owned())
    });
    let e = c.executor;
    json!({
        "schema": "skillc.verifier/1",
        "executor": c.name.full(),
        "skill": skill.skill,
        "action": c.name.action,
        "object": c.name.object,
        "qualifiers": c.name.qualifiers,
        "subcommand": sc.display(),
        "wording": {"description": sc.description, "section": sc.source_section},
        "manifest": e.map(|e| e.manifest.clone()),
        "contract": e.map(|e| e.contract.clone()),
        "wrapper": e.map(|e| e.wrapper.clone()),
        "program": {"kind": match sc.program { Program::Script { .. } => "script", Program::Binary { .. } => "binary", Program::Tool { .. } => "tool" },
                    "path": program_path, "name": sc.program.describe(), "text": program_text},
    })
}

/// The exact text the external verifier receives on standard input for `c` (keys sorted).
pub fn verifier_request(skill: &SkillPlans<'_>, c: &Candidate<'_>) -> String {
    crate::util::sorted_json_line(&verifier_input(skill, c))
}

/// The external L6 verifier: `accept`, or the rejection with its reason. Fail closed: a
/// verifier that cannot be run, crashes, times out or answers anything but
/// `{"verdict": "accept"}` / `{"verdict": "reject", "reason": "…"}` rejects.
pub fn check_l6_external(
    skill: &SkillPlans<'_>,
    c: &Candidate<'_>,
    command: &str,
    runner: &dyn Runner,
) -> Result<(), String> {
    let input = verifier_request(skill, c);
    let answer = runner
        .verify(command, &input)
        .map_err(|why| format!("the verifier `{command}` failed: {why}"))?;
    let v: serde_json::Value =
        serde_json::from_str(answer.trim()).map_err(|_| format!("the verifier `{command}` did not answer JSON"))?;
    match v.get("verdict").and_then(|x| x.as_str()) {
        Some("accept") => Ok(()),
        Some("reject") => Err(format!(
            "the verifier `{command}` rejected it: {}",
            v.get("reason").and_then(|x| x.as_str()).unwrap_or("no reason given")
        )),
        _ => Err(format!("the verifier `{command}` answered neither accept nor reject")),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::extract::SubCommand;
    use crate::generate::{self, Stamp};
    use crate::translate::Outcome;

    pub(crate) fn name(a: &str, o: &str, p: &str) -> ExecutorName {
        ExecutorName {
            action: a.into(),
            object: o.into(),
            qualifiers: vec![],
            provider: p.into(),
        }
    }

    pub(crate) fn plan(n: &ExecutorName, words: &[&str], description: Option<&str>) -> Plan {
        Plan {
            subcommand: SubCommand {
                words: words.iter().map(|s| s.to_string()).collect(),
                program: Program::Script {
                    path: "scripts/tool.py".into(),
                    interpreter: "python3".into(),
                },
                args: vec![],
                source_section: "Commands".into(),
                line: 1,
                invocations: 1,
                description: description.map(str::to_owned),
            },
            outcome: Outcome::Translated(n.clone()),
            steps: vec![],
        }
    }

    pub(crate) fn info(skill: &str) -> SkillInfo {
        SkillInfo {
            name: skill.into(),
            imported_from: format!("skills/{skill}"),
            version: "0.0.0".into(),
            skill_md_sha256: String::new(),
            file_hashes: [("scripts/tool.py".to_owned(), String::new())].into(),
            credentials: vec![],
            permissions: vec![],
            tier: Default::default(),
            description: format!("Test skill {skill}."),
        }
    }

    /// A runner that never finds Python and runs a canned verifier.
    struct Fake {
        python: bool,
        verifier: Result<String, String>,
    }

    impl Runner for Fake {
        fn describe(&self, wrappers: &[(String, String)]) -> Option<Vec<DescribeResult>> {
            self.python.then(|| {
                wrappers
                    .iter()
                    .map(|(_, src)| {
                        // The contract is embedded; a wrapper marked BROKEN does not compile.
                        if src.contains("BROKEN") {
                            Err("does not compile".into())
                        } else {
                            Ok("{}".into())
                        }
                    })
                    .collect()
            })
        }
        fn verify(&self, _: &str, _: &str) -> Result<String, String> {
            self.verifier.clone()
        }
    }

    pub(crate) fn opts<'a>(skip: &'a [Level], runner: &'a dyn Runner, settings: &'a AdmissionSettings) -> Options<'a> {
        Options { skip, settings, runner }
    }

    /// Jaccard similarity `|a ∩ b| / |a ∪ b|` of two sorted, de-duplicated term lists; 0 when
    /// both are empty (what [`check_l3`] computes faster).
    fn jaccard(a: &[String], b: &[String]) -> f64 {
        let (mut i, mut j, mut both) = (0, 0, 0usize);
        while i < a.len() && j < b.len() {
            match a[i].cmp(&b[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    both += 1;
                    i += 1;
                    j += 1;
                }
            }
        }
        let union = a.len() + b.len() - both;
        if union == 0 { 0.0 } else { both as f64 / union as f64 }
    }

    fn with_verifier(verifier: &str) -> AdmissionSettings {
        AdmissionSettings {
            verifier: verifier.to_owned(),
            ..AdmissionSettings::default()
        }
    }

    pub(crate) fn v() -> Vocabulary {
        vocab::parse(vocab::DEFAULT_PATH, vocab::DEFAULT_TEXT).vocabulary
    }

    #[test]
    fn global_collision_rejects_every_skill_involved() {
        let v = v();
        let (a, b, c) = (
            name("read", "files", "x"),
            name("read", "files", "x"),
            name("list", "files", "y"),
        );
        let (pa, pb, pc) = (
            plan(&a, &["read"], None),
            plan(&b, &["read"], None),
            plan(&c, &["ls"], None),
        );
        let cand = |n, p| {
            Some(Candidate {
                name: n,
                plan: p,
                executor: None,
            })
        };
        let skills = [
            SkillPlans {
                skill: "x",
                plans: vec![cand(&a, &pa)],
                info: None,
                files: &[],
            },
            SkillPlans {
                skill: "x-copy",
                plans: vec![cand(&b, &pb), None],
                info: None,
                files: &[],
            },
            SkillPlans {
                skill: "y",
                plans: vec![cand(&c, &pc)],
                info: None,
                files: &[],
            },
        ];
        let fake = Fake {
            python: false,
            verifier: Ok(String::new()),
        };
        let skip = [Level::L3, Level::L4, Level::L5];
        let out = admit(&skills, &v, &opts(&skip, &fake, &AdmissionSettings::default())).skills;
        assert_eq!(out[0].rejected.as_ref().map(|r| r.0.code), Some("AD002"));
        assert_eq!(out[1].rejected.as_ref().map(|r| r.0.code), Some("AD002"));
        assert_eq!(out[1].plans[1], Verdict::NotTranslated);
        assert!(out[2].rejected.is_none());
        let Verdict::Admitted(levels) = &out[2].plans[0] else {
            panic!("admitted: {:?}", out[2].plans[0])
        };
        assert_eq!(levels[&Level::L2], LevelStatus::Pass);
        assert_eq!(levels[&Level::L3], LevelStatus::Skipped);
        assert_eq!(levels[&Level::L6], LevelStatus::Pass);
        // Skipping L2 is recorded and lets both through.
        let skip = [Level::L2, Level::L3, Level::L4, Level::L5];
        let out = admit(&skills, &v, &opts(&skip, &fake, &AdmissionSettings::default())).skills;
        assert!(out.iter().all(|s| s.rejected.is_none()));
    }

    #[test]
    fn l1_refuses_words_outside_the_vocabulary() {
        let v = v();
        assert!(check_l1(&name("read", "files", "x"), &v).is_ok());
        assert!(check_l1(&name("append", "rowz", "x"), &v).is_err());
        assert!(check_l1(&name("read", "files", "X-y"), &v).is_err());
    }

    #[test]
    fn jaccard_is_the_shared_share_of_the_union() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(jaccard(&s(&["a", "b", "c"]), &s(&["b", "c", "d"])), 0.5);
        assert_eq!(jaccard(&s(&["a"]), &s(&["a"])), 1.0);
        assert_eq!(jaccard(&s(&["a"]), &s(&["b"])), 0.0);
        assert_eq!(jaccard(&[], &[]), 0.0);
    }

    #[test]
    fn l3_prefix_filtering_finds_exactly_the_pairs_of_the_quadratic_scan() {
        let o = AdmissionSettings::default();
        // Deterministic pseudo-random sets over a small alphabet.
        let mut seed = 7u64;
        let mut sets: Vec<Vec<String>> = Vec::new();
        for _ in 0..200 {
            let mut s = Vec::new();
            for _ in 0..6 {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                s.push(format!("w{}", (seed >> 33) % 14));
            }
            s.sort();
            s.dedup();
            sets.push(s);
        }
        let names: Vec<(String, &str)> = (0..sets.len())
            .map(|i| (format!("e{i:03}"), if i % 3 == 0 { "p" } else { "q" }))
            .collect();
        let refs: Vec<&[String]> = sets.iter().map(Vec::as_slice).collect();
        let fast = check_l3(&refs, &names, &o);
        let mut slow: BTreeMap<usize, (usize, f64)> = BTreeMap::new();
        for i in 0..sets.len() {
            for j in 0..sets.len() {
                if i == j {
                    continue;
                }
                let t = if names[i].1 == names[j].1 { 0.85 } else { 0.5 };
                let x = jaccard(&sets[i], &sets[j]);
                if x >= t {
                    let e = slow.entry(i).or_insert((j, x));
                    if x > e.1 {
                        *e = (j, x);
                    }
                }
            }
        }
        assert!(!slow.is_empty());
        assert_eq!(fast, slow);
    }

    /// (action, object, skill, sub-command words, description).
    pub(crate) type Def<'a> = (&'a str, &'a str, &'a str, &'a [&'a str], Option<&'a str>);

    /// Candidates with generated executors, for L3–L6.
    pub(crate) fn catalog(defs: &[Def<'_>]) -> (Vec<ExecutorName>, Vec<Plan>, Vec<SkillInfo>) {
        let names: Vec<ExecutorName> = defs.iter().map(|d| name(d.0, d.1, &d.2.replace('-', "_"))).collect();
        let plans = defs.iter().zip(&names).map(|(d, n)| plan(n, d.3, d.4)).collect();
        let infos = defs.iter().map(|d| info(d.2)).collect();
        (names, plans, infos)
    }

    fn run(defs: &[Def<'_>], skip: &[Level], fake: &Fake, verifier: &str) -> Vec<Verdict> {
        let v = v();
        let (names, plans, infos) = catalog(defs);
        let stamp = Stamp {
            levels: BTreeMap::new(),
            skipped: vec![],
            imported_at: String::new(),
        };
        let execs: Vec<Executor> = (0..names.len())
            .map(|i| generate::executor(&plans[i], &names[i], &infos[i], &v, &stamp))
            .collect();
        let skills: Vec<SkillPlans<'_>> = (0..names.len())
            .map(|i| SkillPlans {
                skill: &infos[i].name,
                plans: vec![Some(Candidate {
                    name: &names[i],
                    plan: &plans[i],
                    executor: Some(&execs[i]),
                })],
                info: Some(&infos[i]),
                files: &[],
            })
            .collect();
        admit(&skills, &v, &opts(skip, fake, &with_verifier(verifier)))
            .skills
            .into_iter()
            .map(|s| s.plans[0].clone())
            .collect()
    }

    fn level(v: &Verdict) -> Option<(Level, &str)> {
        match v {
            Verdict::Rejected { level, rule, .. } => Some((*level, rule.code)),
            _ => None,
        }
    }

    #[test]
    fn l3_rejects_both_executors_of_a_confusable_pair() {
        let fake = Fake {
            python: false,
            verifier: Ok(String::new()),
        };
        let skip = [Level::L4];
        // Same action, object and provider words: only the provider differs.
        let out = run(
            &[
                ("list", "files", "box", &["files", "list"], None),
                ("list", "files", "box-two", &["files", "list"], None),
                ("send", "messages", "chat", &["send"], None),
            ],
            &skip,
            &fake,
            "",
        );
        assert_eq!(level(&out[0]), Some((Level::L3, "AD004")));
        assert_eq!(level(&out[1]), Some((Level::L3, "AD004")));
        assert_eq!(level(&out[2]), None, "{:?}", out[2]);
        let Verdict::Rejected { reason, .. } = &out[0] else {
            panic!()
        };
        assert!(reason.contains("`list_files_box_two`"), "{reason}");
    }

    #[test]
    fn l6_rejects_a_delete_described_as_a_listing_and_a_failing_verifier() {
        let ok = Fake {
            python: false,
            verifier: Ok("{\"verdict\": \"accept\"}".into()),
        };
        let skip = [Level::L3, Level::L4];
        let defs: &[Def<'_>] = &[
            ("delete", "files", "a", &["rm"], Some("List every file in the folder.")),
            (
                "delete",
                "files",
                "b",
                &["rm"],
                Some("Removes the files, then lists what is left."),
            ),
            ("list", "files", "c", &["ls"], Some("Shows the files.")),
            (
                "describe",
                "payments",
                "d",
                &["summary"],
                Some("This month, with each category's share"),
            ),
        ];
        let out = run(defs, &skip, &ok, "");
        assert_eq!(level(&out[0]), Some((Level::L6, "AD007")));
        let Verdict::Rejected { reason, .. } = &out[0] else {
            panic!()
        };
        assert_eq!(
            reason,
            "its description starts with \"list\" (list, safe) but the executor's action `delete` is destructive, and nothing in its wording means delete"
        );
        assert_eq!(level(&out[1]), None, "a word meaning delete is there");
        assert_eq!(level(&out[2]), None, "show and list are both safe");
        assert_eq!(
            level(&out[3]),
            None,
            "a noun that could be a verb is not a leading verb"
        );
        // An external verifier that rejects, crashes or is missing rejects (fail closed).
        let out = run(&defs[2..3], &skip, &ok, "check");
        assert_eq!(level(&out[0]), None);
        for answer in [
            Ok("{\"verdict\": \"reject\", \"reason\": \"nope\"}".to_owned()),
            Ok("yes".to_owned()),
            Err("not found".to_owned()),
        ] {
            let f = Fake {
                python: false,
                verifier: answer,
            };
            let out = run(&defs[2..3], &skip, &f, "check");
            assert_eq!(level(&out[0]), Some((Level::L6, "AD008")), "{:?}", f.verifier);
        }
    }

    #[test]
    fn l5_compares_describe_with_the_contract_and_checks_the_program() {
        let fake = Fake {
            python: true,
            verifier: Ok(String::new()),
        };
        let skip = [Level::L3, Level::L4, Level::L6];
        // The fake prints `{}`, which is not the contract.
        let out = run(&[("list", "files", "a", &["ls"], None)], &skip, &fake, "");
        assert_eq!(level(&out[0]), Some((Level::L5, "AD006")));
        let Verdict::Rejected { reason, .. } = &out[0] else {
            panic!()
        };
        assert!(reason.contains("differs from the manifest's contract"), "{reason}");
        let missing = Program::Script {
            path: "scripts/gone.py".into(),
            interpreter: "python3".into(),
        };
        assert!(check_program(&missing, Some(&info("a"))).is_err());
        // No Python: L5 did not run, which is not a pass.
        let none = Fake {
            python: false,
            verifier: Ok(String::new()),
        };
        let out = run(&[("list", "files", "a", &["ls"], None)], &skip, &none, "");
        let Verdict::Admitted(levels) = &out[0] else {
            panic!("{out:?}")
        };
        assert_eq!(levels[&Level::L5], LevelStatus::NotRun);
        assert!(check_program(&Program::Binary { name: "gog".into() }, None).is_ok());
    }

    #[test]
    fn l4_rejects_a_plan_whose_request_routes_elsewhere_and_writes_the_battery() {
        let fake = Fake {
            python: false,
            verifier: Ok(String::new()),
        };
        // L6 would see that a listing described as a deletion contradicts itself.
        let skip = [Level::L3, Level::L6];
        let defs: &[Def<'_>] = &[
            ("list", "files", "alpha", &["ls"], None),
            ("list", "events", "alpha", &["events"], None),
            ("delete", "files", "beta", &["rm"], None),
        ];
        let out = run(defs, &skip, &fake, "");
        assert!(out.iter().all(|v| matches!(v, Verdict::Admitted(_))), "{out:?}");
        // Two names for one job (qualifiers in another order): each one's requests route to
        // the other as much as to itself, so both go, each naming the other.
        let mut defs = defs.to_vec();
        defs.push(("list", "files", "alpha", &["ls"], None));
        let out = {
            let v = v();
            let mut names: Vec<ExecutorName> = defs.iter().map(|d| name(d.0, d.1, d.2)).collect();
            names[0].qualifiers = vec!["xlsx".into(), "csv".into()];
            names[3].qualifiers = vec!["csv".into(), "xlsx".into()];
            let plans: Vec<Plan> = names.iter().map(|n| plan(n, &["ls"], None)).collect();
            let infos: Vec<SkillInfo> = defs.iter().map(|d| info(d.2)).collect();
            let stamp = Stamp {
                levels: BTreeMap::new(),
                skipped: vec![],
                imported_at: String::new(),
            };
            let execs: Vec<Executor> = (0..4)
                .map(|i| generate::executor(&plans[i], &names[i], &infos[i], &v, &stamp))
                .collect();
            let skills: Vec<SkillPlans<'_>> = (0..4)
                .map(|i| SkillPlans {
                    skill: &infos[i].name,
                    plans: vec![Some(Candidate {
                        name: &names[i],
                        plan: &plans[i],
                        executor: Some(&execs[i]),
                    })],
                    info: Some(&infos[i]),
                    files: &[],
                })
                .collect();
            let a = admit(&skills, &v, &opts(&skip, &fake, &AdmissionSettings::default()));
            // The battery holds the requests of the admitted executors only.
            assert!(a.battery.iter().all(|p| p.expected != "list_files_csv_xlsx_alpha"));
            assert!(a.battery.contains(&Prototype {
                expected: "delete_files_beta".into(),
                lang: Lang::It,
                request: "elimina file Beta".into(),
                kind: PrototypeKind::Label,
            }));
            a.skills.into_iter().map(|s| s.plans[0].clone()).collect::<Vec<_>>()
        };
        assert_eq!(level(&out[1]), None);
        assert_eq!(level(&out[2]), None);
        assert_eq!(level(&out[0]), Some((Level::L4, "AD005")));
        assert_eq!(level(&out[3]), Some((Level::L4, "AD005")));
        let Verdict::Rejected { reason, .. } = &out[0] else {
            panic!()
        };
        assert_eq!(
            reason,
            "its prototype request \"list files spreadsheet CSV Alpha\" (en) routes to `list_files_csv_xlsx_alpha` first, not to it"
        );
    }
}

//! L4 routing: a plan's prototype requests (English and Italian labels, and the sub-command's
//! own description when it has one) must route to it first with the [`route`] router, over
//! the executors still in (`AD005`). When one plan's label request routes to another
//! executor, the victim and the executor that steals it are both rejected, each naming the
//! other; a description request that routes elsewhere rejects only its own plan. The battery
//! is re-run on the survivors until it holds, so it passes on exactly the admitted catalog.

use std::collections::{BTreeMap, HashMap};

use rayon::prelude::*;

use super::{Candidate, Judging, Key, SkillPlans};
use crate::model::{Lang, Level, Prototype, PrototypeKind};
use crate::route::{self, Doc, Router};
use crate::rules;
use crate::vocab::Vocabulary;

/// Rejects the plans whose requests route elsewhere (and those that take them) until the
/// battery holds; returns the battery of the survivors.
pub(super) fn judge(run: &mut Judging<'_, '_>, vocab: &Vocabulary) -> Vec<Prototype> {
    loop {
        let keys = run.alive();
        let (failures, protos) = check_l4(run.skills, &keys, vocab);
        if failures.is_empty() {
            return protos;
        }
        for (idx, reason) in failures {
            run.reject(keys[idx], Level::L4, &rules::AD005, reason);
        }
    }
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

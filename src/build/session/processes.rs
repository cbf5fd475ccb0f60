//! The processes admission needs (IO layer): L5's `python3` over every new draft wrapper and
//! the external L6 verifier over every new request, run before the `admission` query and
//! recorded as its `recorded` input ([`Recorded`]), so that admission itself stays pure.

use std::collections::HashSet;

use rayon::prelude::*;

use super::{Options, Session};
use crate::admit::Runner as _;
use crate::build::exec::{System, Wrappers};
use crate::build::{AdmissionInput, admission_input, full_draft, skill_drafts, skill_plans, skill_unit, store};
use crate::db::{BuildInputs, Db, SkillSource};
use crate::model::{Level, Recorded};
use crate::util::sha256;

/// A draft wrapper's digest, and whether Python has yet to describe it.
type Draft = (String, bool);

/// L5's answers kept between processes, in the state folder ([`store::L5Cache`]).
const L5_CACHE: &str = "l5.json";

impl Session {
    /// L5's answers from `.skillc/l5.json`, when the same tool and interpreter wrote them.
    pub(super) fn cached_l5(opts: &Options, python: &str) -> Recorded {
        match store::read::<store::L5Cache>(&opts.state_dir.join(L5_CACHE)) {
            Some(c) if c.python == python && c.skillc == env!("CARGO_PKG_VERSION") && !c.described.is_empty() => {
                Recorded {
                    python: true,
                    described: c.described,
                    verified: Default::default(),
                }
            }
            _ => Recorded::default(),
        }
    }

    /// Runs what admission will ask about and has not been asked before, and sets the
    /// answers as the `recorded` input when they changed. Answers are kept for the session's
    /// life: a watch rebuild only runs what it has not seen.
    pub(super) fn run_admission_processes(&mut self) {
        let inputs = self.inputs;
        let skip = inputs.skip(&self.db).clone();
        let mut recorded = inputs.recorded(&self.db).clone();
        let runner = System::new(self.opts.root.clone());
        let mut changed = false;
        if !skip.contains(&Level::L5) {
            changed |= self.describe_new_wrappers(&runner, &mut recorded, None);
        }
        if inputs.admission(&self.db).has_verifier() && !skip.contains(&Level::L6) {
            changed |= verify_new_requests(&self.db, inputs, &runner, &mut recorded);
        }
        if changed {
            use salsa::Setter as _;
            self.inputs.set_recorded(&mut self.db).to(recorded);
        }
    }

    /// L5: compiles and describes every draft wrapper not yet described (of the skills
    /// `only` lists, when given: a shard's), records the answers and caches them for the next
    /// process. Says whether `recorded` changed.
    pub(super) fn describe_new_wrappers(
        &mut self,
        runner: &System,
        recorded: &mut Recorded,
        only: Option<&HashSet<SkillSource>>,
    ) -> bool {
        let inputs = self.inputs;
        let mut wrappers = Wrappers::default();
        // Each wrapper's digest (the draft's, `sha256` of its text), beside it.
        let mut digests: Vec<String> = Vec::new();
        let mut seen = HashSet::new();
        let mut seen_all = HashSet::new();
        let skills: Vec<SkillSource> = inputs
            .skills(&self.db)
            .iter()
            .filter(|s| only.is_none_or(|o| o.contains(*s)))
            .copied()
            .collect();
        // The wrappers' texts are in the drafts (admission sees their digests); a draft taken
        // from the build cache renders its wrapper again, only when Python must see it. Each
        // skill's drafts (and the rendering) on the rayon workers, one database handle per
        // job, each job keeping only what Python is sent ([`Wrappers`]); collected in the
        // skills' order.
        let described = &recorded.described;
        let drafts: Vec<(Vec<Draft>, Wrappers)> = skills
            .par_chunks(64)
            .map_with(self.db.clone(), |db, chunk| {
                let skip = inputs.skip(db);
                let mut sent = Wrappers::default();
                let mut v = Vec::new();
                for s in chunk {
                    for (j, e) in skill_drafts(db, inputs, *s).iter().enumerate() {
                        let Some(e) = e else { continue };
                        let sha = e.digests().wrapper.clone();
                        let new = !described.contains_key(&sha);
                        if new {
                            let full = full_draft(skill_unit(db, inputs, *s), j, e, skip);
                            sent.push(format!("{}.py", e.name), &full.wrapper);
                        }
                        v.push((sha, new));
                    }
                }
                (v, sent)
            })
            .collect();
        for (chunk, sent) in drafts {
            let mut keep = Vec::new();
            for (sha, new) in chunk {
                seen_all.insert(sha.clone());
                if new {
                    let first = seen.insert(sha.clone());
                    if first {
                        digests.push(sha);
                    }
                    keep.push(first);
                }
            }
            wrappers.append(sent, |i| keep[i]);
        }
        if wrappers.is_empty() {
            return false;
        }
        self.checked.l5_described += wrappers.len();
        let Some(results) = runner.describe_wrappers(&wrappers) else {
            let changed = recorded.python;
            recorded.python = false;
            return changed;
        };
        drop(wrappers);
        let changed = !recorded.python || !results.is_empty();
        recorded.python = true;
        for (sha, r) in digests.into_iter().zip(results) {
            recorded.described.insert(sha, r);
        }
        // For the next process: the answers about the current wrappers.
        let cache = store::L5Cache {
            skillc: env!("CARGO_PKG_VERSION").into(),
            python: self.python.clone(),
            described: recorded
                .described
                .iter()
                .filter(|(sha, _)| seen_all.contains(*sha))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        };
        // Only a cache: when it cannot be written, the next process runs Python again (a
        // failing `.skillc/` fails the store write at the end of the build).
        let _ = std::fs::create_dir_all(&self.opts.state_dir);
        let _ = store::write(&self.opts.state_dir.join(L5_CACHE), &cache);
        changed
    }
}

/// L6: runs the external verifier over every request of the skills still in that it has not
/// answered yet, in parallel. Says whether `recorded` changed.
fn verify_new_requests(db: &Db, inputs: BuildInputs, runner: &System, recorded: &mut Recorded) -> bool {
    let verifier = inputs.admission(db).verifier.clone();
    let skills: &[SkillSource] = inputs.skills(db);
    let units: Vec<&AdmissionInput> = skills
        .iter()
        .map(|s| admission_input(db, inputs, *s))
        .filter(|u| u.rejected.is_none())
        .collect();
    let requests: Vec<String> = units
        .iter()
        .flat_map(|u| {
            let sp = skill_plans(u);
            sp.plans
                .iter()
                .flatten()
                .map(|c| crate::admit::verifier_request(&sp, c))
                .collect::<Vec<_>>()
        })
        .filter(|r| !recorded.verified.contains_key(&sha256(r.as_bytes())))
        .collect();
    let answers: Vec<(String, Result<String, String>)> = requests
        .par_iter()
        .map(|r| (sha256(r.as_bytes()), runner.verify(&verifier, r)))
        .collect();
    let changed = !answers.is_empty();
    recorded.verified.extend(answers);
    changed
}

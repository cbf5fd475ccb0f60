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
//! reported at the first level that rejected it in that order. Each level is a file
//! ([`l1`] … [`l6`]); this one holds the types and runs the levels in that order.

mod l1;
mod l2;
mod l3;
mod l4;
mod l5;
mod l6;
#[cfg(test)]
pub(crate) mod tests;

use std::collections::BTreeMap;

use crate::diag::Rule;
use crate::generate::{Executor, SkillInfo};
use crate::model::{
    AdmissionSettings, DescribeResult, Level, LevelStatus, Prototype, Recorded, SkillFile, WRAPPER_DIGEST,
};
use crate::translate::{ExecutorName, Plan};
use crate::vocab::Vocabulary;

pub use l6::verifier_request;

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

/// One plan still in the running, by (skill index, plan index).
type Key = (usize, usize);

/// The verdicts so far, over the candidates they judge.
struct Judging<'s, 'a> {
    skills: &'s [SkillPlans<'a>],
    verdicts: Vec<SkillVerdict>,
}

impl<'a> Judging<'_, 'a> {
    /// The plans still admitted, of skills still in.
    fn alive(&self) -> Vec<Key> {
        let mut v = Vec::new();
        for (i, s) in self.verdicts.iter().enumerate() {
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
    }

    /// Rejects plan `k` at `level`.
    fn reject(&mut self, k: Key, level: Level, rule: &'static Rule, reason: String) {
        self.verdicts[k.0].plans[k.1] = Verdict::Rejected { level, rule, reason };
    }

    /// The candidate of plan `k`.
    fn candidate(&self, k: Key) -> Option<&Candidate<'a>> {
        self.skills[k.0].plans[k.1].as_ref()
    }
}

/// Admits the plans of every skill of a catalog: L1, L2, L5, L6, L3, L4 in that order over
/// the plans still in, then the status of every level for the admitted ones.
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
    let mut run = Judging {
        skills,
        verdicts: l1::judge(skills, vocab),
    };
    if !skip.contains(&Level::L2) {
        l2::judge(skills, &mut run.verdicts);
    }
    let mut l5_ran = false;
    if !skip.contains(&Level::L5) {
        l5_ran = l5::judge(&mut run, opts.runner);
        if !l5_ran {
            levels.insert(Level::L5, LevelStatus::NotRun);
        }
    }
    if !skip.contains(&Level::L6) {
        l6::judge(&mut run, vocab, opts);
    }
    if !skip.contains(&Level::L3) {
        l3::judge(&mut run, opts.settings);
    }
    let mut battery = if skip.contains(&Level::L4) {
        Vec::new()
    } else {
        l4::judge(&mut run, vocab)
    };
    // Admitted: the status of every level.
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
    for k in run.alive() {
        run.verdicts[k.0].plans[k.1] = Verdict::Admitted(status.clone());
    }
    battery.sort();
    Admission {
        skills: run.verdicts,
        levels,
        battery,
    }
}

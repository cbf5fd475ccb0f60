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
//!   it holds, so the battery ([`CatalogVerdicts::battery`] of [`Admission::catalog`]) passes on exactly the admitted catalog.
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
    AdmissionSettings, CatalogVerdicts, DescribeResult, Level, LevelStatus, Recorded, SkillFile, WRAPPER_DIGEST,
};
use crate::rules;
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
    /// The SHA-256 of what the catalog-wide levels read besides the candidates and the
    /// settings: the vocabulary's text and the tool version (the caller's; part of
    /// [`catalog_key`]).
    pub context: [u8; 32],
    /// The catalog-wide verdicts an earlier build recorded ([`CatalogVerdicts`]): taken
    /// instead of running L3 and L4 when their key is this catalog's, ignored otherwise.
    pub earlier: Option<&'a CatalogVerdicts>,
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
    /// The verdicts of L3 and L4, to record for a later build ([`Options::earlier`]), with
    /// the routing battery of the admitted executors (`catalog.battery`).
    pub catalog: CatalogVerdicts,
    /// Whether those were taken from [`Options::earlier`] rather than computed.
    pub catalog_reused: bool,
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
    // The catalog-wide levels, over the plans still in: the costly part of admission, and
    // a pure function of what `catalog_key` hashes, so an earlier build's answer to the same
    // question is taken as it is.
    let judged = run.alive();
    let key = catalog_key(&run, &judged, opts);
    let earlier = opts.earlier.filter(|e| e.key == key && applies(e, judged.len()));
    let catalog_reused = earlier.is_some();
    let catalog = match earlier {
        Some(e) => {
            for (pos, level, reason) in &e.rejected {
                if let Some(&k) = usize::try_from(*pos).ok().and_then(|p| judged.get(p)) {
                    let rule = if *level == Level::L3 {
                        &rules::AD004
                    } else {
                        &rules::AD005
                    };
                    run.reject(k, *level, rule, reason.clone());
                }
            }
            e.clone()
        }
        None => {
            if !skip.contains(&Level::L3) {
                l3::judge(&mut run, opts.settings);
            }
            let mut battery = if skip.contains(&Level::L4) {
                Vec::new()
            } else {
                l4::judge(&mut run, vocab)
            };
            battery.sort();
            let rejected = judged
                .iter()
                .enumerate()
                .filter_map(|(pos, k)| match &run.verdicts[k.0].plans[k.1] {
                    Verdict::Rejected { level, reason, .. } if matches!(level, Level::L3 | Level::L4) => {
                        Some((u32::try_from(pos).ok()?, *level, reason.clone()))
                    }
                    _ => None,
                })
                .collect();
            CatalogVerdicts { key, rejected, battery }
        }
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
    Admission {
        skills: run.verdicts,
        levels,
        catalog,
        catalog_reused,
    }
}

/// Version of what [`catalog_key`] hashes: bump it whenever L3 or L4 come to read anything
/// of a candidate, the settings or the vocabulary that the key does not hash yet.
const CATALOG_KEY_FORMAT: &str = "skillc admission L3+L4 1";

/// The SHA-256 of everything L3 and L4 read: [`Options::context`] (vocabulary, tool), which of
/// the two levels are skipped, the L3 thresholds and, for each plan they judge in order (`keys`),
/// its affinity terms and name as L3 reads them, and its router document ([`l4::doc`]) and
/// prototype requests ([`l4::prototypes`]) as L4 reads them. Every string is
/// length-prefixed and each plan hashed apart (then the plans' digests in order), so two
/// different questions never hash the same bytes.
fn catalog_key(run: &Judging<'_, '_>, keys: &[Key], opts: &Options<'_>) -> [u8; 32] {
    use rayon::prelude::*;
    use sha2::Digest as _;
    fn put(h: &mut sha2::Sha256, text: &str) {
        h.update((text.len() as u64).to_le_bytes());
        h.update(text.as_bytes());
    }
    // Each plan's part, on the workers; then the digests in order.
    let plans: Vec<[u8; 32]> = keys
        .par_iter()
        .map(|&k| {
            let mut h = sha2::Sha256::new();
            let Some(c) = run.candidate(k) else {
                put(&mut h, "no candidate");
                return h.finalize().into();
            };
            put(&mut h, &c.name.full());
            let affinity = c.executor.map_or(&[][..], |e| e.affinity.as_slice());
            put(&mut h, &affinity.len().to_string());
            for t in affinity {
                put(&mut h, t);
            }
            let d = l4::doc(c);
            for part in [&d.name, &d.action, &d.object, &d.provider] {
                put(&mut h, part);
            }
            put(&mut h, &d.qualifiers.len().to_string());
            for q in &d.qualifiers {
                put(&mut h, q);
            }
            put(&mut h, &d.text.len().to_string());
            for t in &d.text {
                put(&mut h, t);
            }
            let protos = l4::prototypes(c);
            put(&mut h, &protos.len().to_string());
            for (lang, request, kind) in &protos {
                put(&mut h, lang.as_str());
                put(&mut h, kind.as_str());
                put(&mut h, request);
            }
            h.finalize().into()
        })
        .collect();
    let mut h = sha2::Sha256::new();
    put(&mut h, CATALOG_KEY_FORMAT);
    put(&mut h, &crate::util::hex(&opts.context));
    put(
        &mut h,
        &format!(
            "skip L3 {} L4 {}; thresholds {} {}; {} plans",
            opts.skip.contains(&Level::L3),
            opts.skip.contains(&Level::L4),
            opts.settings.affinity_threshold.to_bits(),
            opts.settings.affinity_threshold_same_provider.to_bits(),
            keys.len()
        ),
    );
    for p in &plans {
        h.update(p);
    }
    h.finalize().into()
}

/// Whether an earlier answer can stand for `judged` plans: every position among them, and
/// only L3 and L4 verdicts (a recorded file that says otherwise is not taken).
fn applies(e: &CatalogVerdicts, judged: usize) -> bool {
    e.rejected.iter().all(|(pos, level, _)| {
        usize::try_from(*pos).is_ok_and(|p| p < judged) && matches!(level, Level::L3 | Level::L4)
    })
}

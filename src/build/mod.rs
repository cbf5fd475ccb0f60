//! The build pipeline as salsa queries: per skill check → translate → (scan) → unit, then the
//! catalog-wide admission, then per skill generation and the report entry (PRODUCT.md,
//! "Pipeline"; ARCHITECTURE.md, "Bird's-eye view").
//!
//! Everything in this file (and [`report`], the report's entries) is pure: it reads database
//! inputs ([`BuildInputs`], [`SkillSource`]) and returns values. Stamping times, signing and writing happen in [`session`], the IO layer
//! of the build (with [`store`], the `.skillc/` fingerprint store).
//!
//! The query graph, and what re-runs after an edit:
//!
//! ```text
//!  SkillSource ─► skill_files ─┐
//!       │                      ├─► skill_unit ─┬─► admission_input ─► admission ─► decision ─┐
//!       └─► check/translate ───┘   (per skill) │    (per skill)    (catalog-wide) (per skill) │
//!                                              └────────────────────► skill_output ◄─────────┤
//!                                                                     report_entry ◄─────────┘
//! ```
//!
//! - one skill edited: its `skill_files`/`skill_unit`/`skill_output`/`report_entry` re-run,
//!   `admission` re-runs once, `decision` re-runs per skill but is backdated (equal value) for
//!   every other skill, so nothing downstream of them re-runs;
//! - vocabulary edited: every `translate_skill` and `skill_unit` re-runs, no file is re-read
//!   or re-parsed (`analyze_skill`, `extract_skill` and `skill_files` are untouched);
//! - an edit that changes no name stops at `admission_input` (backdating): admission and the
//!   other skills' decisions do not re-run; an edit that changes no manifest (a support file
//!   no executor runs) re-signs no manifest.
//!
//! Extension points: a per-skill security scan slots into [`skill_unit`] (a finding at or
//! above `scan.fail_on` sets `rejected`); new admission levels extend [`admission`], which
//! sees the whole catalog through [`admit::admit`].

pub mod cache;
pub mod dense;
pub mod exec;
pub mod menu;
pub mod report;
pub mod session;
pub mod store;

use std::collections::{BTreeMap, HashMap};

use crate::admit::{self, SkillPlans, Verdict};
use crate::db::{BuildInputs, Contents, SkillSource};
use crate::diag::Rule;
use crate::diag::{Diagnostic, Pos, Severity, Span};
use crate::generate::{self, SkillInfo, Stamp};
use crate::model::{CatalogVerdicts, Level, LevelStatus, SkillFile, WRAPPER_DIGEST};
use crate::rules;
use crate::skill::{self, SkillCheck};
use crate::translate::{self, Translation};
use crate::util::sha256;
use crate::vocab;

/// The files of a skill kept in the catalog (`out/skills/<name>/`), sorted by path. Files
/// that could not be read are left out (they are diagnostics of `check_skill`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkillFiles {
    /// Every readable file, SKILL.md included.
    pub files: Vec<SkillFile>,
}

/// Hashes the readable files of a skill (SKILL.md and support files).
#[salsa::tracked(returns(ref))]
pub fn skill_files(db: &dyn salsa::Database, skill: SkillSource) -> SkillFiles {
    let mut files = Vec::new();
    for f in skill.skill_md(db).into_iter().chain(skill.files(db).iter().copied()) {
        if let Contents::Bytes(b) = f.contents(db) {
            files.push(SkillFile {
                path: f.rel_path(db).clone(),
                bytes: b.clone(),
                sha256: sha256(b),
            });
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    SkillFiles { files }
}

/// Everything known of one skill before catalog-wide admission.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillUnit {
    /// The folder as shown to the user.
    pub display: String,
    /// What `skillc check` says.
    pub check: SkillCheck,
    /// The plans.
    pub translation: Translation,
    /// What generation needs; `None` when the skill has no readable name.
    pub info: Option<SkillInfo>,
    /// Why the whole skill is rejected before admission (an error diagnostic, a name unfit for
    /// the catalog): the rule and `CODE: message`.
    pub rejected: Option<(&'static Rule, String)>,
    /// Diagnostics found by the build beyond `check` (SK057).
    pub extra: Vec<Diagnostic>,
    /// The security scan's findings (`report.json` `findings`).
    pub findings: Vec<crate::scan::Finding>,
}

/// One skill's unit: check, translation, generation info and skill-level rejection. Taken
/// from the skill's persistent cache entry when the session found one ([`SkillSource::warm`]).
#[salsa::tracked(returns(ref))]
pub fn skill_unit(db: &dyn salsa::Database, inputs: BuildInputs, skill: SkillSource) -> SkillUnit {
    if let Some(unit) = warm(db, skill, cache::Section::Unit) {
        return unit;
    }
    let settings = inputs.settings(db);
    let check = skill::check_skill(db, skill, settings).clone();
    let translation =
        translate::translate_skill(db, skill, settings, inputs.vocabulary(db), inputs.translations(db)).clone();
    let display = skill.display(db).clone();
    let info = check.name.as_ref().map(|name| {
        let model = &skill::analyze_skill(db, skill, settings).model;
        let file_hashes: BTreeMap<String, String> = skill_files(db, skill)
            .files
            .iter()
            .map(|f| (f.path.clone(), f.sha256.clone()))
            .collect();
        SkillInfo {
            name: name.clone(),
            imported_from: inputs
                .imported_from(db)
                .get(name)
                .cloned()
                .unwrap_or_else(|| display.clone()),
            description: model.description.as_ref().map(|d| d.value.clone()).unwrap_or_default(),
            version: model.version.clone().unwrap_or_else(|| "0.0.0".into()),
            skill_md_sha256: file_hashes
                .get("SKILL.md")
                .or_else(|| file_hashes.get("skill.md"))
                .cloned()
                .unwrap_or_default(),
            file_hashes,
            credentials: model.credentials.clone(),
            permissions: model.gaia.as_ref().map(|g| g.permissions.clone()).unwrap_or_default(),
            tier: model.gaia.as_ref().map(|g| g.tier).unwrap_or_default(),
        }
    });
    let mut extra = Vec::new();
    let rejected = if let Some(d) = check.diagnostics.iter().find(|d| d.severity == Severity::Error) {
        Some((d.rule, format!("{}: {}", d.code(), d.message)))
    } else {
        match info.as_ref().map(|i| i.name.as_str()) {
            None => Some((&rules::SK020, "the skill has no readable name".into())),
            Some(n) if translate::provider_of(n).is_none() => {
                let message = format!("skill name `{n}` cannot name catalog folders and executors");
                extra.push(
                    Diagnostic::new(&rules::SK057, format!("{display}/SKILL.md"), Span::at(Pos::START), message.clone())
                        .help("catalog names must be ASCII `[a-z0-9-]` words and not a Windows device name (`con`, `nul`, `com1`…); rename the skill and its folder"),
                );
                Some((&rules::SK057, format!("SK057: {message}")))
            }
            Some(_) => None,
        }
    };
    // The security scan: a finding at or above `[scan] fail_on` rejects a skill not already
    // rejected (SC000); every finding goes to the report.
    let scan = crate::scan::scan_skill(db, skill, settings);
    let rejected = rejected.or_else(|| {
        crate::scan::rejection(scan, inputs.fail_on(db)).map(|reason| (&rules::SC000, format!("SC000: {reason}")))
    });
    SkillUnit {
        display,
        check,
        translation,
        info,
        rejected,
        extra,
        findings: scan.findings.clone(),
    }
}

/// A section of the skill's verified cache entry, decoded; `None` when the skill has no entry
/// (or, never for bytes the session verified, when the section does not decode).
fn warm<T: cache::codec::Code>(db: &dyn salsa::Database, skill: SkillSource, which: cache::Section) -> Option<T> {
    cache::take(skill.warm(db).as_deref()?, which)
}

/// Every translated plan of a skill still in, generated with a draft stamp (no levels, no
/// time): admission judges them (L3 affinity terms, L4 labels, L5 wrapper and contract, the
/// external verifier's manifest) and [`skill_output`] re-stamps the admitted ones. One entry
/// per plan; empty when the skill is rejected before admission. Drafts taken from the cache
/// have an empty wrapper and manifest ([`full_draft`] renders them again).
#[salsa::tracked(returns(ref))]
pub fn skill_drafts(
    db: &dyn salsa::Database,
    inputs: BuildInputs,
    skill: SkillSource,
) -> Vec<Option<generate::Executor>> {
    if let Some(drafts) = warm(db, skill, cache::Section::Drafts) {
        return drafts;
    }
    let unit = skill_unit(db, inputs, skill);
    let Some(info) = unit.info.as_ref().filter(|_| unit.rejected.is_none()) else {
        return Vec::new();
    };
    let vocab = &vocab::vocabulary(db, inputs.vocabulary(db)).vocabulary;
    let stamp = Stamp {
        levels: BTreeMap::new(),
        skipped: inputs.skip(db).clone(),
        imported_at: String::new(),
    };
    unit.translation
        .plans
        .iter()
        .map(|p| p.name().map(|name| generate::executor(p, name, info, vocab, &stamp)))
        .collect()
}

/// Draft `j` of a skill with its wrapper and manifest: as generated, or rendered again from
/// the plan when the draft came from the cache, which keeps neither (a generated wrapper is
/// never empty: the template is not). The same bytes either way: both are pure functions of
/// the plan, the name, the skill's info and the draft stamp.
pub fn full_draft<'e>(
    unit: &SkillUnit,
    j: usize,
    e: &'e generate::Executor,
    skip: &[Level],
) -> std::borrow::Cow<'e, generate::Executor> {
    let plan = unit.translation.plans.get(j);
    let (Some(plan), Some(name), Some(info)) = (plan, plan.and_then(|p| p.name()), unit.info.as_ref()) else {
        return std::borrow::Cow::Borrowed(e);
    };
    if !e.wrapper.is_empty() {
        return std::borrow::Cow::Borrowed(e);
    }
    let mut full = e.clone();
    full.wrapper = e.render_wrapper(plan, name, info);
    let stamp = Stamp {
        levels: BTreeMap::new(),
        skipped: skip.to_vec(),
        imported_at: String::new(),
    };
    full.restamp(plan, name, info, &stamp);
    std::borrow::Cow::Owned(full)
}

/// What admission sees of one skill: its name, its skill-level rejection, its plans and their
/// drafts. Narrower than [`SkillUnit`], so that an edit that changes nothing admission reads
/// (a SKILL.md whitespace edit, a support file no executor runs) stops here and admission
/// does not re-run: file hashes are left out, and so are the draft manifests (which record
/// them) unless an external verifier, which receives them, is configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdmissionInput {
    /// The folder as shown to the user.
    pub display: String,
    /// The skill name, when readable.
    pub name: Option<String>,
    /// Rejected before admission: the rule and `CODE: message`.
    pub rejected: Option<(&'static Rule, String)>,
    /// One entry per plan: its name, the plan and its draft executor, when translated.
    pub plans: Vec<Option<(crate::translate::ExecutorName, translate::Plan, generate::Executor)>>,
    /// The skill's generation info, file hashes blanked (L5 checks that programs exist).
    pub info: Option<SkillInfo>,
    /// The skill's files, for the external verifier (empty when none is configured).
    pub files: Vec<SkillFile>,
}

/// One skill's [`AdmissionInput`].
#[salsa::tracked(returns(ref))]
pub fn admission_input(db: &dyn salsa::Database, inputs: BuildInputs, skill: SkillSource) -> AdmissionInput {
    let u = skill_unit(db, inputs, skill);
    let drafts = skill_drafts(db, inputs, skill);
    let verifier = inputs.admission(db).has_verifier();
    let plans = u
        .translation
        .plans
        .iter()
        .enumerate()
        .map(|(j, p)| {
            let name = p.name()?;
            let d = drafts.get(j)?.as_ref()?;
            let mut e = if verifier {
                // The verifier receives the wrapper and the manifest.
                full_draft(u, j, d, inputs.skip(db)).into_owned()
            } else {
                d.clone()
            };
            // Admission does not read the language state; the texts are big.
            e.lang_state = String::new();
            if !verifier {
                // The external verifier receives the manifest; nothing else reads it here.
                e.manifest = String::new();
                // L5's answers are recorded by digest (`model::Recorded`).
                e.wrapper = format!("{WRAPPER_DIGEST}{}", d.digests().wrapper);
            }
            Some((name.clone(), p.clone(), e))
        })
        .collect();
    let info = u.info.as_ref().map(|i| {
        let mut i = i.clone();
        i.file_hashes.values_mut().for_each(String::clear);
        i.skill_md_sha256.clear();
        i
    });
    let files = if verifier {
        skill_files(db, skill).files.clone()
    } else {
        Vec::new()
    };
    AdmissionInput {
        display: u.display.clone(),
        name: u.info.as_ref().map(|i| i.name.clone()),
        rejected: u.rejected.clone(),
        plans,
        info,
        files,
    }
}

/// The admission candidates of one skill, as [`admit::admit`] takes them.
pub fn skill_plans(u: &AdmissionInput) -> SkillPlans<'_> {
    SkillPlans {
        skill: u.name.as_deref().unwrap_or_default(),
        plans: u
            .plans
            .iter()
            .map(|p| {
                p.as_ref().map(|(name, plan, e)| admit::Candidate {
                    name,
                    plan,
                    executor: Some(e),
                })
            })
            .collect(),
        info: u.info.as_ref(),
        files: &u.files,
    }
}

/// The catalog-wide verdict of one skill.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    /// Why the whole skill is rejected: its own problem, a shared name (AD003) or an L2
    /// collision (AD002); the rule and `CODE: reason`.
    pub rejected: Option<(&'static Rule, String)>,
    /// One verdict per plan; empty when the skill did not reach admission.
    pub plans: Vec<Verdict>,
}

/// The decisions of the whole catalog (admission over every skill at once).
#[derive(Debug, Default, PartialEq)]
pub struct Decisions {
    /// The decision of each skill of [`BuildInputs::skills`].
    pub decisions: HashMap<SkillSource, Decision>,
    /// Catalog-wide status of each level: `run`, `skipped` or `not-run`.
    pub levels: BTreeMap<Level, LevelStatus>,
    /// The verdicts of the catalog-wide levels, which the session records for the next build
    /// ([`crate::db::BuildInputs::earlier_catalog`]), with the routing battery of the admitted
    /// executors (`catalog.battery`, `out/routing.toml`).
    pub catalog: CatalogVerdicts,
    /// Whether those were the earlier build's, taken rather than computed.
    pub catalog_reused: bool,
}

/// Admission over the whole catalog: duplicate names (AD003), then [`admit::admit`] (L1, L2,
/// and the levels to come) over the skills still in.
#[salsa::tracked(returns(ref))]
pub fn admission(db: &dyn salsa::Database, inputs: BuildInputs) -> Decisions {
    let skills = inputs.skills(db);
    let units: Vec<(SkillSource, &AdmissionInput)> =
        skills.iter().map(|s| (*s, admission_input(db, inputs, *s))).collect();
    let mut decisions: HashMap<SkillSource, Decision> = units
        .iter()
        .map(|(s, u)| {
            (
                *s,
                Decision {
                    rejected: u.rejected.clone(),
                    plans: Vec::new(),
                },
            )
        })
        .collect();
    let mut by_name: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, (_, u)) in units.iter().enumerate() {
        if u.rejected.is_none()
            && let Some(name) = &u.name
        {
            by_name.entry(name.as_str()).or_default().push(i);
        }
    }
    let mut entries: Vec<usize> = Vec::new();
    for (name, idx) in &by_name {
        if idx.len() > 1 {
            let paths: Vec<&str> = idx.iter().map(|&i| units[i].1.display.as_str()).collect();
            for &i in idx {
                if let Some(d) = decisions.get_mut(&units[i].0) {
                    d.rejected = Some((
                        &rules::AD003,
                        format!("AD003: skill name `{name}` is used by {}", paths.join(", ")),
                    ));
                }
            }
        } else {
            entries.extend(idx);
        }
    }
    entries.sort_unstable();
    let plans: Vec<SkillPlans<'_>> = entries.iter().map(|&i| skill_plans(units[i].1)).collect();
    let vocab_input = inputs.vocabulary(db);
    let vocab = &vocab::vocabulary(db, vocab_input).vocabulary;
    // What the catalog-wide levels read besides the candidates and the settings.
    let context = {
        use sha2::Digest as _;
        let mut h = sha2::Sha256::new();
        for part in [cache::TOOL, vocab_input.text(db).as_str()] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        h.finalize().into()
    };
    let result = admit::admit(
        &plans,
        vocab,
        &admit::Options {
            skip: inputs.skip(db),
            settings: inputs.admission(db),
            runner: inputs.recorded(db),
            context,
            earlier: inputs.earlier_catalog(db).as_deref(),
        },
    );
    for (&i, v) in entries.iter().zip(result.skills) {
        if let Some(d) = decisions.get_mut(&units[i].0) {
            if let Some((rule, reason)) = &v.rejected {
                d.rejected = Some((rule, format!("{}: {reason}", rule.code)));
            }
            d.plans = v.plans;
        }
    }
    Decisions {
        decisions,
        levels: result.levels,
        catalog: result.catalog,
        catalog_reused: result.catalog_reused,
    }
}

/// One skill's decision, taken out of [`admission`]. It re-runs for every skill when admission
/// re-runs, and comes out equal (backdated) for the skills an edit did not affect: their
/// generation and report entries are not re-run.
#[salsa::tracked(returns(ref))]
pub fn decision(db: &dyn salsa::Database, inputs: BuildInputs, skill: SkillSource) -> Decision {
    admission(db, inputs).decisions.get(&skill).cloned().unwrap_or_default()
}

/// An executor generated by the build, before its time stamp and signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generated {
    /// Index of its plan in the skill's translation.
    pub plan: usize,
    /// The admission levels it passed.
    pub levels: BTreeMap<Level, LevelStatus>,
    /// The executor. Its `wrapper` and `manifest` are left empty to save memory (the wrapper
    /// is re-rendered when written, the manifest when stamped); `lang_state` is kept.
    pub executor: generate::Executor,
    /// Hex SHA-256 of that manifest: equal fingerprints mean equal manifests but for the time.
    pub fingerprint: String,
    /// Hex SHA-256 of the wrapper and of the language state.
    pub digests: generate::Digests,
}

/// What one skill contributes to `out/`, all but times and signatures.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkillOutput {
    /// The skill is in the catalog (not rejected).
    pub accepted: bool,
    /// Its admitted executors, in plan order.
    pub executors: Vec<Generated>,
    /// The retained files (`out/skills/<name>/…`), when accepted.
    pub files: Vec<SkillFile>,
}

/// Generates a skill's admitted executors.
#[salsa::tracked(returns(ref))]
pub fn skill_output(db: &dyn salsa::Database, inputs: BuildInputs, skill: SkillSource) -> SkillOutput {
    let unit = skill_unit(db, inputs, skill);
    let decision = decision(db, inputs, skill);
    let Some(info) = unit.info.as_ref().filter(|_| decision.rejected.is_none()) else {
        return SkillOutput::default();
    };
    let drafts = skill_drafts(db, inputs, skill);
    let mut executors = Vec::new();
    for (j, (plan, verdict)) in unit.translation.plans.iter().zip(&decision.plans).enumerate() {
        let (Some(name), Verdict::Admitted(levels)) = (plan.name(), verdict) else {
            continue;
        };
        let stamp = Stamp {
            levels: levels.clone(),
            skipped: inputs.skip(db).clone(),
            imported_at: String::new(),
        };
        // The draft admission judged, stamped with its levels.
        let Some(mut executor) = drafts.get(j).cloned().flatten() else {
            continue;
        };
        executor.restamp(plan, name, info, &stamp);
        let fingerprint = sha256(executor.manifest.as_bytes());
        // Re-stamping changes only the manifest: the draft's digests still hold.
        let digests = executor.digests().clone();
        // Most of a catalog's bytes: rendered again when written or stamped.
        executor.wrapper = String::new();
        executor.manifest = String::new();
        executors.push(Generated {
            plan: j,
            levels: levels.clone(),
            fingerprint,
            digests,
            executor,
        });
    }
    SkillOutput {
        accepted: true,
        executors,
        files: skill_files(db, skill).files.clone(),
    }
}

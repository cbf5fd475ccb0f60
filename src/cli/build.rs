//! `skillc build`: the main job. Loads the skills, runs check → extract → translate →
//! generate → admit → sign, and emits the catalog into `out/` (FORMATS.md, "out/").
//!
//! Times come from `SOURCE_DATE_EPOCH` when set (the build is then reproducible byte for
//! byte); otherwise from the clock, with `.skillc/state.json` remembering fingerprints so that
//! outputs whose inputs did not change keep their `imported_at` and the catalog keeps its
//! version: a build that changes nothing writes nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::check::load_skills;
use super::keys::{self, KeySource};
use super::{Printer, ReportFormat, Status, project};
use crate::admit::{self, SkillPlans, Verdict};
use crate::config::Level;
use crate::db::{Contents, TextInput};
use crate::diag::{Diagnostic, Pos, Severity, Span};
use crate::emit::{self, CatalogExecutor, CatalogHeader, CatalogSkill, OutTree, write};
use crate::generate::{self, SkillInfo, Stamp, sha256};
use crate::rules;
use crate::skill::validate::Mode;
use crate::skill::{self, SkillCheck};
use crate::translate::{self, Outcome, Translation};
use crate::vocab;

/// Arguments of `skillc build`.
#[derive(Debug, clap::Args)]
pub struct BuildArgs {
    /// Folders searched for skills (repeatable; default: `[pipeline] skills`, i.e. `skills`).
    #[arg(long = "skills", value_name = "DIR")]
    pub skills: Vec<PathBuf>,
    /// Output folder (default: `[pipeline] out`, i.e. `out`).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Vocabulary file (default: `[pipeline] vocabulary` when present, else the built-in one).
    #[arg(long, value_name = "FILE")]
    pub vocabulary: Option<PathBuf>,
    /// Skip admission levels, for development and CI only (e.g. `--skip L2,L5`); recorded in
    /// every manifest and refused by `skillc verify --production`.
    #[arg(long, value_delimiter = ',', value_name = "LEVELS")]
    pub skip: Vec<String>,
    /// Secret key file (default: `SKILLC_SIGNING_KEY`, else `[signing] key`, else a
    /// development key created under `.skillc/`).
    #[arg(long, value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// Output format of the summary (`json` prints report.json).
    #[arg(long, visible_alias = "message-format", value_enum, default_value_t = ReportFormat::Human)]
    pub format: ReportFormat,
    /// Print only the summary line.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Fingerprints remembered between builds (`.skillc/state.json`).
#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    #[serde(default)]
    executors: BTreeMap<String, ExecutorState>,
    #[serde(default)]
    catalog: Option<CatalogState>,
    /// Every file of `out/` the last build wrote: only these are ever removed.
    #[serde(default)]
    outputs: Option<BTreeSet<String>>,
}

#[derive(Debug, Serialize, Deserialize)]
struct ExecutorState {
    fingerprint: String,
    imported_at: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct CatalogState {
    fingerprint: String,
    version: i64,
    expires: String,
}

/// Everything computed for one skill.
struct SkillResult {
    display: String,
    check: SkillCheck,
    translation: Translation,
    info: Option<SkillInfo>,
    files: Vec<(String, Arc<[u8]>)>,
    rejected: Option<(&'static rules::Rule, String)>,
    extra: Vec<Diagnostic>,
    /// Security findings (issue-6 scan hook), reported in report.json.
    findings: Vec<crate::scan::Finding>,
}

fn rfc3339(secs: i64) -> String {
    jiff::Timestamp::from_second(secs)
        .map(|t| t.to_string())
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".into())
}

fn relative_to(path: &Path, root: &Path) -> PathBuf {
    if path.is_absolute() {
        path.strip_prefix(root)
            .map(Path::to_path_buf)
            .unwrap_or_else(|_| path.to_path_buf())
    } else {
        path.to_path_buf()
    }
}

pub(crate) fn run(args: &BuildArgs, out: &mut Printer) -> anyhow::Result<Status> {
    let started = Instant::now();
    let cwd = std::env::current_dir()?;
    let project = project::load(&cwd, out)?;
    let cfg = &project.config;
    let root = &project.root;
    // Paths given on the command line are relative to the current folder; inside the build
    // they are shown relative to the project root, so that outputs do not depend on where
    // the project lives.
    let roots: Vec<PathBuf> = if args.skills.is_empty() {
        cfg.skills.clone()
    } else {
        args.skills.iter().map(|p| relative_to(&cwd.join(p), root)).collect()
    };
    let out_dir = args
        .out
        .as_ref()
        .map(|o| cwd.join(o))
        .unwrap_or_else(|| root.join(&cfg.out));
    let state_dir = root.join(".skillc");
    let mut skip = cfg.skip.clone();
    for s in &args.skip {
        match Level::parse(s) {
            Some(Level::L1) | None => anyhow::bail!("cannot skip `{s}`: levels L2 to L6 may be skipped, L1 never"),
            Some(l) if !skip.contains(&l) => skip.push(l),
            Some(_) => {}
        }
    }
    skip.sort();
    for r in &roots {
        let dir = root.join(r);
        anyhow::ensure!(
            dir.exists(),
            "skills folder {} does not exist (set `[pipeline] skills` or pass --skills)",
            dir.display()
        );
        anyhow::ensure!(
            dir.is_dir(),
            "{} is not a folder: --skills takes folders that contain skills",
            dir.display()
        );
    }
    write::guard(
        &out_dir,
        root,
        &roots.iter().map(|r| root.join(r)).collect::<Vec<_>>(),
        &state_dir,
    )?;
    keys::ignore_state_dir(&state_dir)?;
    // One build at a time per project: two would race on `out/`, the key and the state.
    let lock_path = state_dir.join("build.lock");
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| anyhow::anyhow!("{}: {e}", lock_path.display()))?;
    if let Err(std::fs::TryLockError::WouldBlock) = lock.try_lock() {
        anyhow::bail!(
            "another skillc build is running in this project ({} is locked); wait for it to finish",
            lock_path.display()
        );
    }
    let (key, key_source) = keys::signing_key(
        args.key.as_deref(),
        &root.join(&cfg.signing_key),
        cfg.signing_key == crate::config::Config::default().signing_key,
    )?;
    if let KeySource::Created(p) = &key_source {
        out.note(&format!("note: created a development signing key at {} (mode 0600, ignored by git); use `skillc keygen` or {} for releases", p.display(), keys::KEY_ENV));
    }
    let build_id = format!("{:016x}", {
        let mut b = [0u8; 8];
        let _ = getrandom::fill(&mut b);
        u64::from_le_bytes(b)
    });
    let wall = jiff::Timestamp::now();
    let mut audit = vec![audit_line(
        &wall,
        &build_id,
        "build.started",
        json!({"roots": roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>()}),
    )];

    // Relative roots keep display paths relative to the project (reproducible).
    let loaded = load_skills(
        root,
        &roots,
        Mode::Default,
        cfg.limits,
        true,
        &[out_dir.clone(), state_dir.clone()],
    )?;
    let (vpath, vtext) = project::vocabulary_source(&project, args.vocabulary.as_deref())?;
    let db = &loaded.db;
    let vocab_input = TextInput::new(db, vpath.clone(), vtext.clone());
    let lv = vocab::vocabulary(db, vocab_input);
    project::print_file_diagnostics(out, &lv.diagnostics, &vtext);
    if lv.diagnostics.iter().any(|d| d.severity == Severity::Error) {
        anyhow::bail!("the vocabulary {vpath} has errors (see above)");
    }
    let vocab = &lv.vocabulary;
    let settings = loaded.settings;
    // Import hook (issue 7): skillc.lock is a build input; an imported skill's manifest
    // records its original source as `imported_from` (its path otherwise).
    let import_lock = crate::import::lock::read(root)?;

    // Per skill, in parallel: check, translate, hash the retained files.
    let mut results: Vec<SkillResult> = loaded
        .skills
        .par_iter()
        .map_with(db.clone(), |db, s| {
            let check = skill::check_skill(db, *s, settings).clone();
            let translation = translate::translate_skill(db, *s, settings, vocab_input).clone();
            let analysis = skill::analyze_skill(db, *s, settings);
            let mut files: Vec<(String, Arc<[u8]>)> = Vec::new();
            if let Some(f) = s.skill_md(db)
                && let Contents::Bytes(b) = f.contents(db)
            {
                files.push((f.rel_path(db).clone(), b.clone()));
            }
            for f in s.files(db) {
                if let Contents::Bytes(b) = f.contents(db) {
                    files.push((f.rel_path(db).clone(), b.clone()));
                }
            }
            files.sort_by(|a, b| a.0.cmp(&b.0));
            let file_hashes: BTreeMap<String, String> = files.iter().map(|(p, b)| (p.clone(), sha256(b))).collect();
            let info = check.name.as_ref().map(|name| SkillInfo {
                name: name.clone(),
                imported_from: crate::import::lock::imported_from(&import_lock, name)
                    .unwrap_or_else(|| s.display(db).clone()),
                version: analysis.model.version.clone().unwrap_or_else(|| "0.0.0".into()),
                skill_md_sha256: file_hashes
                    .get("SKILL.md")
                    .or_else(|| file_hashes.get("skill.md"))
                    .cloned()
                    .unwrap_or_default(),
                file_hashes,
                credentials: analysis.model.credentials.clone(),
                permissions: analysis
                    .model
                    .gaia
                    .as_ref()
                    .map(|g| g.permissions.clone())
                    .unwrap_or_default(),
                tier: analysis.model.gaia.as_ref().map(|g| g.tier).unwrap_or_default(),
                description: analysis
                    .model
                    .description
                    .as_ref()
                    .map(|d| d.value.clone())
                    .unwrap_or_default(),
            });
            SkillResult {
                display: s.display(db).clone(),
                check,
                translation,
                info,
                files,
                rejected: None,
                extra: Vec::new(),
                findings: Vec::new(),
            }
        })
        .collect();

    // Skill-level rejections: errors, names unfit for paths, duplicate names.
    let mut by_name: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, r) in results.iter_mut().enumerate() {
        if let Some(d) = r.check.diagnostics.iter().find(|d| d.severity == Severity::Error) {
            r.rejected = Some((d.rule, format!("{}: {}", d.code(), d.message)));
            continue;
        }
        match r.info.as_ref().map(|i| i.name.clone()) {
            None => r.rejected = Some((&rules::SK020, "the skill has no readable name".into())),
            Some(n) if translate::provider_of(&n).is_none() => {
                let file = format!("{}/SKILL.md", r.display);
                r.extra.push(
                    Diagnostic::new(
                        &rules::SK057,
                        file,
                        Span::at(Pos::START),
                        format!("skill name `{n}` cannot name catalog folders and executors"),
                    )
                    .help("catalog names must be ASCII `[a-z0-9-]` words and not a Windows device name (`con`, `nul`, `com1`…); rename the skill and its folder"),
                );
                r.rejected = Some((
                    &rules::SK057,
                    format!("SK057: skill name `{n}` cannot name catalog folders and executors"),
                ));
            }
            Some(n) => by_name.entry(n).or_default().push(i),
        }
    }
    for (name, idx) in &by_name {
        if idx.len() > 1 {
            let paths: Vec<String> = idx.iter().map(|&i| results[i].display.clone()).collect();
            for &i in idx {
                results[i].rejected = Some((
                    &rules::AD003,
                    format!("AD003: skill name `{name}` is used by {}", paths.join(", ")),
                ));
            }
        }
    }

    // ── issue-6 scan hook: the security scan of every skill; findings go to report.json and
    // a finding at or above `[scan] fail_on` rejects a skill not already rejected (SC000).
    let scans: Vec<crate::scan::ScanReport> = loaded
        .skills
        .par_iter()
        .map_with(db.clone(), |db, s| crate::scan::scan_skill(db, *s, settings).clone())
        .collect();
    for (r, scan) in results.iter_mut().zip(scans) {
        if r.rejected.is_none()
            && let Some(reason) = crate::scan::rejection(&scan, cfg.fail_on)
        {
            r.rejected = Some((&rules::SC000, format!("SC000: {reason}")));
        }
        r.findings = scan.findings;
    }
    // ── end of the issue-6 scan hook.

    // Admission over the skills still in.

    // Admission over the skills still in (issue 6). Every translated plan is generated first
    // (wrapper, contract and language state do not depend on the verdict; L5 checks them),
    // then the whole catalog is admitted in one call; admitted executors are re-stamped below.
    let draft_stamp = Stamp {
        levels: BTreeMap::new(),
        skipped: skip.clone(),
        imported_at: String::new(),
    };
    let drafts: BTreeMap<(usize, usize), generate::Executor> = results
        .par_iter()
        .enumerate()
        .filter(|(_, r)| r.rejected.is_none())
        .flat_map_iter(|(i, r)| {
            let draft_stamp = &draft_stamp;
            r.translation.plans.iter().enumerate().filter_map(move |(j, p)| {
                let (name, info) = (p.name()?, r.info.as_ref()?);
                Some(((i, j), generate::executor(p, name, info, vocab, draft_stamp)))
            })
        })
        .collect();
    let entries: Vec<(usize, SkillPlans<'_>)> = results
        .iter()
        .enumerate()
        .filter(|(_, r)| r.rejected.is_none())
        .map(|(i, r)| {
            let skill = r.info.as_ref().map(|x| x.name.as_str()).unwrap_or_default();
            let plans = r
                .translation
                .plans
                .iter()
                .enumerate()
                .map(|(j, p)| {
                    p.name().map(|name| admit::Candidate {
                        name,
                        plan: p,
                        executor: drafts.get(&(i, j)),
                    })
                })
                .collect();
            (
                i,
                SkillPlans {
                    skill,
                    plans,
                    info: r.info.as_ref(),
                    files: &r.files,
                },
            )
        })
        .collect();
    let plans: Vec<SkillPlans<'_>> = entries.iter().map(|(_, p)| p.clone()).collect();
    let runner = admit::exec::System::new(root.clone());
    let admission = admit::admit(
        &plans,
        vocab,
        &admit::Options {
            skip: &skip,
            affinity_threshold: cfg.affinity_threshold,
            affinity_threshold_same_provider: cfg.affinity_threshold_same_provider,
            verifier: &cfg.verifier,
            runner: &runner,
        },
    );
    let mut verdict_of: BTreeMap<usize, admit::SkillVerdict> = BTreeMap::new();
    for ((i, _), v) in entries.iter().zip(admission.skills) {
        verdict_of.insert(*i, v);
    }
    drop(plans);
    drop(entries);
    for (i, v) in &verdict_of {
        if let Some((rule, reason)) = &v.rejected {
            results[*i].rejected = Some((rule, format!("{}: {reason}", rule.code)));
        }
    }

    // Times.
    let sde = source_date_epoch()?;
    let now = sde.unwrap_or_else(|| wall.as_second());
    let state_path = state_dir.join("state.json");
    let state: State = std::fs::read(&state_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();

    // Generate the admitted executors (in parallel).
    let jobs: Vec<(usize, usize)> = verdict_of
        .iter()
        .filter(|(i, v)| v.rejected.is_none() && results[**i].rejected.is_none())
        .flat_map(|(i, v)| {
            v.plans
                .iter()
                .enumerate()
                .filter(|(_, p)| matches!(p, Verdict::Admitted(_)))
                .map(move |(j, _)| (*i, j))
        })
        .collect();
    // Each executor is generated once, stamped, and its manifest signed, in parallel.
    // Each result carries what the next build needs to keep `imported_at` (its state entry).
    let generated: Vec<(usize, generate::Executor, String, ExecutorState)> = jobs
        .par_iter()
        .filter_map(|&(i, j)| {
            let r = &results[i];
            let info = r.info.as_ref()?;
            let plan = &r.translation.plans[j];
            let name = plan.name()?;
            let Verdict::Admitted(levels) = &verdict_of[&i].plans[j] else {
                return None;
            };
            let mut stamp = Stamp {
                levels: levels.clone(),
                skipped: skip.clone(),
                imported_at: String::new(),
            };
            let mut exec = drafts.get(&(i, j))?.clone();
            exec.restamp(plan, name, info, &stamp);
            let fingerprint = sha256(exec.manifest.as_bytes());
            stamp.imported_at = match (sde, state.executors.get(&exec.name)) {
                (Some(t), _) => rfc3339(t),
                (None, Some(s)) if s.fingerprint == fingerprint => s.imported_at.clone(),
                (None, _) => rfc3339(now),
            };
            exec.restamp(plan, name, info, &stamp);
            let sig = key.sign(exec.manifest.as_bytes(), &emit::manifest_trusted_comment(&exec.name));
            Some((
                i,
                exec,
                sig,
                ExecutorState {
                    fingerprint,
                    imported_at: stamp.imported_at,
                },
            ))
        })
        .collect();

    // The tree, without report and catalog.
    let mut tree = OutTree::default();
    tree.add(emit::PUBLIC_KEY, key.public().to_file(), false);
    tree.add(
        emit::ROUTING,
        emit::render_routing(
            &admission.battery,
            admission.levels.get(&Level::L4).copied().unwrap_or(admit::NOT_RUN),
        ),
        false,
    );
    let mut catalog_execs = Vec::new();
    let mut admitted_per_skill: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, e, sig, _) in &generated {
        let dir = emit::executor_dir(&e.skill, &e.name);
        tree.add(format!("{dir}/{}.py", e.name), e.wrapper.clone(), true);
        tree.add(format!("{dir}/manifest.toml"), e.manifest.clone(), false);
        tree.add(format!("{dir}/manifest.toml.sig"), sig.clone(), false);
        tree.add(format!("{dir}/manifest.lang_state.json"), e.lang_state.clone(), false);
        catalog_execs.push(CatalogExecutor {
            name: e.name.clone(),
            skill: e.skill.clone(),
            manifest_sha256: sha256(e.manifest.as_bytes()),
        });
        *admitted_per_skill.entry(*i).or_default() += 1;
    }
    let mut catalog_skills = Vec::new();
    for (i, r) in results.iter().enumerate() {
        let (Some(info), None) = (&r.info, &r.rejected) else {
            continue;
        };
        for (rel, bytes) in &r.files {
            tree.add(format!("skills/{}/{rel}", info.name), bytes.to_vec(), is_script(rel));
        }
        let n = admitted_per_skill.get(&i).copied().unwrap_or(0);
        catalog_skills.push(CatalogSkill {
            name: info.name.clone(),
            status: if r.translation.plans.is_empty() {
                "instruction-only".into()
            } else {
                "ok".into()
            },
            executors: n,
            files: info.file_hashes.clone(),
        });
    }

    // The report and the catalog, which vouches for everything else.
    let report = report_json(
        &results,
        &verdict_of,
        sha256(vtext.as_bytes()),
        &vpath,
        &skip,
        &admission.levels,
        sde.is_some(),
    );
    tree.add(emit::REPORT, report.clone(), false);
    let mut files_vouched = BTreeMap::new();
    for f in [emit::REPORT, emit::ROUTING, emit::PUBLIC_KEY] {
        if let Some(file) = tree.files.get(f) {
            files_vouched.insert(f.to_owned(), sha256(&file.bytes));
        }
    }
    let skipped: Vec<String> = skip.iter().map(|l| l.as_str().to_owned()).collect();
    let body = |version: i64, expires: &str| {
        emit::render_catalog(
            &CatalogHeader {
                version,
                expires: expires.to_owned(),
                key_id: key.public().key_id_hex(),
                skipped: skipped.clone(),
            },
            &files_vouched,
            &catalog_execs,
            &catalog_skills,
        )
    };
    let days = i64::from(cfg.expires_days) * 86_400;
    // The version and expiry are kept while nothing the catalog says (nor its lifetime) changes.
    let catalog_fp = sha256(format!("{}\n{days}", body(0, "")).as_bytes());
    let (version, expires) = match (sde, &state.catalog) {
        (Some(t), _) => (t, rfc3339(t + days)),
        (None, Some(c)) if c.fingerprint == catalog_fp => (c.version, c.expires.clone()),
        (None, prev) => {
            let v = prev.as_ref().map_or(now, |c| now.max(c.version + 1));
            (v, rfc3339(v + days))
        }
    };
    if version + days <= wall.as_second() {
        out.note(&format!(
            "warning: the catalog expires at {expires}, which is already past: `skillc verify` will refuse it \
             (SOURCE_DATE_EPOCH is old; raise `[signing] expires_days` or use a recent time)"
        ));
    }
    let catalog = body(version, &expires);
    tree.add(emit::CATALOG, catalog.clone(), false);
    tree.add(
        emit::CATALOG_SIG,
        key.sign(catalog.as_bytes(), &emit::catalog_trusted_comment(version, &expires)),
        false,
    );

    // Write what differs; a build that changes nothing writes nothing.
    let changes = write::changes(&out_dir, &tree, state.outputs.as_ref())?;
    write::apply(&out_dir, &tree, &changes)?;
    for f in &changes.foreign {
        out.note(&format!(
            "warning: {} is not part of the catalog; skillc leaves it alone, but `skillc verify` refuses the folder until it is removed",
            out_dir.join(f).display()
        ));
    }
    let touched: BTreeSet<String> = changes
        .written
        .iter()
        .chain(&changes.removed)
        .filter_map(|p| {
            p.strip_prefix("executors/")
                .map(|x| x.split('/').take(2).collect::<Vec<_>>().join("/"))
        })
        .collect();
    let totals = Totals::of(&results, &verdict_of);

    // State and audit.
    let new_state = State {
        executors: generated.into_iter().map(|(_, e, _, st)| (e.name, st)).collect(),
        catalog: Some(CatalogState {
            fingerprint: catalog_fp,
            version,
            expires: expires.clone(),
        }),
        outputs: Some(tree.files.keys().cloned().collect()),
    };
    if !changes.is_empty() || state.outputs.is_none() {
        write::write_atomic(
            &state_path,
            serde_json::to_string_pretty(&new_state)?.as_bytes(),
            Some(0o644),
        )?;
    }
    for r in &results {
        if let Some((rule, reason)) = &r.rejected {
            audit.push(audit_line(
                &wall,
                &build_id,
                "skill.rejected",
                json!({"skill": r.display, "code": rule.code, "reason": reason}),
            ));
        }
    }
    for (i, r) in results.iter().enumerate() {
        for (j, p) in r.translation.plans.iter().enumerate() {
            let (event, detail) = plan_status(r, verdict_of.get(&i).map(|v| &v.plans[j]), p);
            audit.push(audit_line(
                &wall,
                &build_id,
                event,
                json!({"skill": r.display, "subcommand": p.subcommand.display(), "detail": detail}),
            ));
        }
    }
    audit.push(audit_line(
        &wall,
        &build_id,
        "build.finished",
        json!({"catalog_version": version, "changed": touched.len(), "written": changes.written.len(), "removed": changes.removed.len(), "summary": totals.json()}),
    ));
    write::append_lines(&state_dir.join("audit.jsonl"), &audit)?;
    finish(
        args,
        out,
        &totals,
        touched.len(),
        changes.written.len() + changes.removed.len(),
        &out_dir,
        started,
        &results,
        &report,
    )
}

/// `SOURCE_DATE_EPOCH`, validated: a non-negative number of seconds before year 9000.
fn source_date_epoch() -> anyhow::Result<Option<i64>> {
    let Some(raw) = std::env::var_os("SOURCE_DATE_EPOCH") else {
        return Ok(None);
    };
    let text = raw.to_string_lossy();
    match text.trim().parse::<i64>() {
        // Before 9000-01-01, so that the expiry (at most 100 years later) stays a valid date.
        Ok(t) if (0..=221_845_392_000).contains(&t) => Ok(Some(t)),
        _ => anyhow::bail!(
            "SOURCE_DATE_EPOCH must be a Unix time in seconds (a non-negative integer), not `{text}`; unset it to use the clock"
        ),
    }
}

fn is_script(rel: &str) -> bool {
    rel.starts_with("scripts/") && (rel.ends_with(".py") || rel.ends_with(".sh") || !rel.contains('.'))
}

fn audit_line(time: &jiff::Timestamp, build: &str, event: &str, detail: serde_json::Value) -> String {
    let v = json!({"time": time.to_string(), "build": build, "event": event, "detail": detail});
    serde_json::to_string(&emit::sorted_json(v)).unwrap_or_default()
}

/// The audit event and detail of one plan.
fn plan_status(r: &SkillResult, verdict: Option<&Verdict>, p: &translate::Plan) -> (&'static str, serde_json::Value) {
    match (&p.outcome, verdict, &r.rejected) {
        (Outcome::Rejected { rule, reason, .. }, _, _) => (
            "executor.rejected",
            json!({"stage": "translate", "code": rule.code, "reason": reason}),
        ),
        (_, Some(Verdict::Rejected { level, rule, reason }), _) => (
            "executor.rejected",
            json!({"stage": level.as_str(), "code": rule.code, "reason": reason}),
        ),
        (_, _, Some((rule, reason))) => (
            "executor.rejected",
            json!({"stage": "skill", "code": rule.code, "reason": reason}),
        ),
        (Outcome::Translated(n), _, _) => ("executor.admitted", json!({"name": n.full()})),
    }
}

/// Counts over the build.
struct Totals {
    skills: usize,
    plans: usize,
    admitted: usize,
    rejected: usize,
    skills_rejected: usize,
}

impl Totals {
    fn of(results: &[SkillResult], verdicts: &BTreeMap<usize, admit::SkillVerdict>) -> Totals {
        let mut t = Totals {
            skills: results.len(),
            plans: 0,
            admitted: 0,
            rejected: 0,
            skills_rejected: 0,
        };
        for (i, r) in results.iter().enumerate() {
            t.plans += r.translation.plans.len();
            if r.rejected.is_some() {
                t.skills_rejected += 1;
                t.rejected += r.translation.plans.len();
                continue;
            }
            for v in verdicts.get(&i).map(|v| v.plans.as_slice()).unwrap_or_default() {
                if matches!(v, Verdict::Admitted(_)) {
                    t.admitted += 1;
                } else {
                    t.rejected += 1;
                }
            }
        }
        t
    }

    fn json(&self) -> serde_json::Value {
        json!({"skills": self.skills, "skills_rejected": self.skills_rejected, "plans": self.plans, "admitted": self.admitted, "rejected": self.rejected})
    }
}

#[allow(clippy::too_many_arguments)]
fn report_json(
    results: &[SkillResult],
    verdicts: &BTreeMap<usize, admit::SkillVerdict>,
    vocab_sha: String,
    vocab_path: &str,
    skip: &[Level],
    admission_levels: &BTreeMap<Level, &'static str>,
    reproducible: bool,
) -> String {
    let totals = Totals::of(results, verdicts);
    let mut levels = serde_json::Map::new();
    for (l, s) in admission_levels {
        levels.insert(l.as_str().into(), (*s).into());
    }
    let skills: Vec<serde_json::Value> = results
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let status = if r.rejected.is_some() {
                "rejected"
            } else if r.translation.plans.is_empty() {
                "instruction-only"
            } else {
                "ok"
            };
            let plans: Vec<serde_json::Value> = r
                .translation
                .plans
                .iter()
                .enumerate()
                .map(|(j, p)| {
                    let name = p.name().map(|n| n.full());
                    let (status, level, code, reason) = match (&p.outcome, verdicts.get(&i).map(|v| &v.plans[j]), &r.rejected) {
                        (Outcome::Rejected { rule, reason, .. }, _, _) => ("rejected", Some("translate"), Some(rule.code), Some(reason.clone())),
                        (_, _, Some((rule, reason))) => ("rejected", Some("skill"), Some(rule.code), Some(reason.clone())),
                        (_, Some(Verdict::Rejected { level, rule, reason }), _) => ("rejected", Some(level.as_str()), Some(rule.code), Some(reason.clone())),
                        _ => ("admitted", None, None, None),
                    };
                    json!({"subcommand": p.subcommand.display(), "name": name, "status": status, "level": level, "code": code, "reason": reason})
                })
                .collect();
            let mut diags: Vec<&Diagnostic> = r.check.diagnostics.iter().chain(&r.extra).collect();
            diags.sort_by(|a, b| (&a.file, a.span.start.offset).cmp(&(&b.file, b.span.start.offset)));
            json!({
                "name": r.info.as_ref().map(|i| i.name.clone()),
                "path": r.display,
                "status": status,
                "reason": r.rejected.as_ref().map(|(_, reason)| reason.clone()),
                "diagnostics": diags,
                "findings": r.findings,
                "plans": plans,
            })
        })
        .collect();
    let report = json!({
        "schema": "skillc.report/1",
        "skillc": env!("CARGO_PKG_VERSION"),
        "reproducible": reproducible,
        "inputs": {"skills": results.len(), "vocabulary": vocab_path, "vocabulary_sha256": vocab_sha},
        "summary": {"skills": totals.skills, "skills_rejected": totals.skills_rejected, "plans": totals.plans,
                    "admitted": totals.admitted, "rejected": totals.rejected},
        "admission": {"levels": levels, "skipped": skip.iter().map(|l| l.as_str()).collect::<Vec<_>>()},
        "skills": skills,
    });
    format!(
        "{}\n",
        serde_json::to_string_pretty(&emit::sorted_json(report)).unwrap_or_default()
    )
}

#[allow(clippy::too_many_arguments)]
fn finish(
    args: &BuildArgs,
    out: &mut Printer,
    totals: &Totals,
    changed: usize,
    files: usize,
    out_dir: &Path,
    started: Instant,
    results: &[SkillResult],
    report: &str,
) -> anyhow::Result<Status> {
    if args.format == ReportFormat::Json {
        out.write(report)?;
    } else {
        let rejected: Vec<&SkillResult> = results.iter().filter(|r| r.rejected.is_some()).collect();
        if !args.quiet {
            for r in &rejected {
                if let Some((_, reason)) = &r.rejected {
                    out.line(&format!("rejected skill {}: {reason}", r.display))?;
                }
            }
        }
        if !rejected.is_empty() || totals.rejected > 0 {
            out.line(&format!(
                "details: {} (every skill, plan and diagnostic), `skillc check` and `skillc plan --explain`",
                out_dir.join(emit::REPORT).display()
            ))?;
        }
        let secs = started.elapsed().as_secs_f64();
        out.line(&format!(
            "built {} into {}: {}, {} admitted, {} rejected{}; {changed} executors changed, {files} files written or removed in {secs:.2} s",
            super::output::count(totals.skills, "skill"),
            out_dir.display(),
            super::output::count(totals.plans, "plan"),
            totals.admitted,
            totals.rejected,
            if totals.skills_rejected > 0 { format!(" ({} rejected)", super::output::count(totals.skills_rejected, "skill")) } else { String::new() },
        ))?;
    }
    out.flush()?;
    Ok(if totals.rejected > 0 || totals.skills_rejected > 0 {
        Status::Failure
    } else {
        Status::Success
    })
}

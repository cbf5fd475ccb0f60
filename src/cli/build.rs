//! `skillc build`: resolves the project (configuration, folders, key, lock), then runs one
//! build of a [`Session`] (`src/build/`) and prints its summary. The pipeline itself — the
//! queries, stamping, signing, writing and the `.skillc/` store — lives in the library.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::keys::{self, KeySource};
use super::progress::MessageFormat;
use super::{Printer, ReportFormat, Status, project};
use crate::build::session::{BuildError, Options, Outcome, Session};
use crate::emit::{self, write};
use crate::model::Level;

/// What a build reads and where it writes: the flags `skillc build` and `skillc watch` share.
#[derive(Clone, Debug, clap::Args)]
pub struct ProjectArgs {
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
}

/// Arguments of `skillc build`.
#[derive(Debug, clap::Args)]
pub struct BuildArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Output format of the summary (`json` prints report.json; with `--shard`, the shard's summary).
    #[arg(long, value_enum, default_value_t = ReportFormat::Human)]
    pub format: ReportFormat,
    /// Progress messages: `human` (a progress bar on a terminal) or `json` (one JSON object
    /// per event on standard output, docs/json.md).
    #[arg(long, value_enum, default_value_t = MessageFormat::Human)]
    pub message_format: MessageFormat,
    /// Print only the summary line.
    #[arg(short, long)]
    pub quiet: bool,
    /// Build even when the inputs are unchanged, checking every file of `out/` (and of its
    /// spare generation) and rewriting what differs. Without it, a build whose inputs did
    /// not change checks only the top of `out/`; `skillc verify` checks every byte.
    #[arg(long)]
    pub force: bool,
    /// Compute the per-skill stages (analysis, scan, drafts, L5) of one N-th of the skills
    /// (`I/N`, 1 ≤ I ≤ N; skill k of the sorted folders goes to shard k mod N + 1) and push
    /// their entries to `[cache] remote`, which must be set. Writes no catalog and leaves
    /// `out/` alone: after the N shards, a plain `skillc build` pulls every entry and runs only
    /// the catalog-wide stages and signing. Exit 0 when the shard is done (a remote that
    /// failed is a warning: the final build then computes those skills), 2 on bad usage.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<crate::build::session::Shard>,
}

fn parse_shard(text: &str) -> Result<crate::build::session::Shard, String> {
    crate::build::session::Shard::parse(text)
}

/// `path` (absolute, or relative to the project root) relative to the project `root`, with
/// `..` when outside it: what the build shows and records (`imported_from`) never names a
/// folder of this machine.
fn relative_to(path: &Path, root: &Path) -> PathBuf {
    if path.is_relative() && !path.components().any(|c| c == std::path::Component::ParentDir) {
        return path.to_path_buf();
    }
    if let Ok(inside) = path.strip_prefix(root)
        && !inside.components().any(|c| c == std::path::Component::ParentDir)
    {
        return inside.to_path_buf();
    }
    let abs = root.join(path);
    let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let rel = crate::util::relative_path(&canon(&abs), &canon(root));
    if rel.is_absolute() { path.to_path_buf() } else { rel }
}

/// A project ready to build: the session options and the held build lock.
pub(crate) struct Prepared {
    pub options: Options,
    pub vocab_text: String,
    /// Held for the whole run: one build at a time per project.
    pub _lock: std::fs::File,
    /// Files whose change (creation included) restarts a watch: `pipeline.toml`,
    /// `skillc.lock`, `translations.toml`, and the configured vocabulary file while it does
    /// not exist.
    pub config_files: Vec<PathBuf>,
    /// The vocabulary file, when it is not the built-in one (watched).
    pub vocab_file: Option<PathBuf>,
}

/// No skill in the build's inputs (the folders listed): `SK001`, exit status 1, as `check`,
/// `scan` and `plan` report a folder without skills.
#[derive(Debug)]
pub(crate) struct NoSkills(pub Vec<String>);

impl std::fmt::Display for NoSkills {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "no skill found in {}", self.0.join(", "))
    }
}

impl std::error::Error for NoSkills {}

impl NoSkills {
    /// Prints one `SK001` per folder, as `check` does.
    pub(crate) fn print(&self, out: &mut Printer) {
        for folder in &self.0 {
            let d = crate::diag::Diagnostic::new(
                &crate::rules::SK001,
                folder.as_str(),
                crate::diag::Span::at(crate::diag::Pos::START),
                "missing SKILL.md: no skill found in this folder",
            )
            .help("a skill is a folder with a SKILL.md file; create one, or pass --skills DIR");
            out.note(&crate::diag::render_human(
                &d,
                None,
                crate::diag::RenderOptions { color: out.color },
            ));
        }
    }
}

/// Resolves the configuration, checks the folders, takes the lock and finds the key.
pub(crate) fn prepare(args: &ProjectArgs, out: &mut Printer) -> anyhow::Result<Prepared> {
    let cwd = std::env::current_dir()?;
    let project = project::load(&cwd, out)?;
    let cfg = &project.config;
    let root = &project.root;
    // Paths given on the command line are relative to the current folder; inside the build
    // they are shown relative to the project root, so that outputs do not depend on where
    // the project lives.
    // A folder given that is not there is named as given (`/nope`), before it is made
    // relative to the project (which would show it as `../../nope`).
    for p in &args.skills {
        let full = cwd.join(p);
        let shown = p.to_string_lossy();
        let shown = crate::diag::printable(&shown);
        anyhow::ensure!(full.exists(), "the skills folder {shown} does not exist");
        anyhow::ensure!(
            full.is_dir(),
            "{shown} is not a folder: --skills takes folders that contain skills"
        );
    }
    let roots: Vec<PathBuf> = if args.skills.is_empty() {
        cfg.skills.iter().map(|p| relative_to(p, root)).collect()
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
        // The default root missing from a folder that is no project: no skill at all, as
        // `check`, `scan` and `plan` say of such a folder (SK001, exit status 1).
        if !dir.exists() && args.skills.is_empty() && !root.join(crate::config::FILE_NAME).is_file() {
            return Err(NoSkills(vec![".".into()]).into());
        }
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
    let (vpath, vtext) = project::vocabulary_source(&project, args.vocabulary.as_deref(), out)?;
    let vocab_file = (vpath != crate::vocab::DEFAULT_PATH).then(|| PathBuf::from(&vpath));
    // Watched even before they exist: creating one changes the build.
    let mut config_files = vec![
        root.join(crate::config::FILE_NAME),
        root.join(crate::import::lock::FILE_NAME),
        root.join(project::TRANSLATIONS),
        // The thresholds `skillc menu calibrate` records go into the menu index.
        root.join(crate::menu::settings::CALIBRATION_FILE),
    ];
    if vocab_file.is_none()
        && args.vocabulary.is_none()
        && let Some(v) = &cfg.vocabulary
    {
        config_files.push(root.join(v));
    }
    Ok(Prepared {
        options: Options {
            root: root.clone(),
            roots,
            out_dir,
            state_dir,
            limits: cfg.limits,
            skip,
            expires_days: cfg.expires_days,
            key,
            sde: source_date_epoch()?,
            vocab_path: vpath,
            translations: project::translations_source(&project, out)?.1,
            admission: cfg.admission.clone(),
            fail_on: cfg.fail_on,
            // A project's imports (`skillc import`) record their sources as `imported_from`.
            imported_from: project::read_lock(root, out)?
                .entries
                .into_values()
                .map(|e| (e.name, e.source))
                .collect(),
            menu: super::menu::build_settings(root, &project.menu)?,
            remote: cfg.cache_remote.clone(),
        },
        vocab_text: vtext,
        _lock: lock,
        config_files,
        vocab_file,
    })
}

/// Turns a build error into the CLI's error, printing vocabulary and translations diagnostics.
pub(crate) fn report_error(e: BuildError, vocab_text: &str, out: &mut Printer) -> anyhow::Error {
    match e {
        BuildError::Vocabulary(path, diags) => {
            project::print_file_diagnostics(out, &diags, vocab_text);
            anyhow::anyhow!("the vocabulary {path} has errors (see above)")
        }
        BuildError::Translations {
            path,
            diagnostics,
            text,
        } => {
            project::print_file_diagnostics(out, &diagnostics, &text);
            anyhow::anyhow!("{path} has errors (see above); fix them, or remove the entries in question")
        }
        other => other.into(),
    }
}

pub(crate) fn run(args: &BuildArgs, out: &mut Printer) -> anyhow::Result<Status> {
    let started = Instant::now();
    anyhow::ensure!(
        !(args.format == ReportFormat::Json && args.message_format == MessageFormat::Json),
        "--format json and --message-format json would both print JSON on standard output: choose one \
         (--message-format json streams progress events; --format json prints report.json)"
    );
    let prepared = match prepare(&args.project, out) {
        Err(e) => match e.downcast_ref::<NoSkills>() {
            Some(none) => {
                none.print(out);
                return Ok(Status::Failure);
            }
            None => return Err(e),
        },
        Ok(p) => p,
    };
    if let Some(shard) = args.shard {
        return run_shard(args, shard, prepared, out, started);
    }
    let mut events =
        super::progress::Reporter::new(args.message_format, args.quiet || args.format == ReportFormat::Json);
    events.started(prepared.options.roots.len());
    let vocab_text = prepared.vocab_text.clone();
    let previous_signer = signer_of(&prepared.options.out_dir);
    let signer = prepared.options.key.public().key_id_hex();
    let mut session =
        Session::open(prepared.options, prepared.vocab_text).map_err(|e| report_error(e, &vocab_text, out))?;
    // `--format json` prints the report: a build that is up to date computes it again.
    if args.format == ReportFormat::Json || args.force {
        session.forget_fingerprint();
    }
    let now = jiff::Timestamp::now().as_second();
    let outcome = match session.build(now, &mut |e| events.event(&e)) {
        Ok(outcome) => outcome,
        Err(BuildError::NoSkills(roots)) => {
            NoSkills(roots).print(out);
            out.note(&format!(
                "note: nothing was written: {} keeps its last catalog (remove the folder to clear it)",
                session.options().out_dir.display()
            ));
            return Ok(Status::Failure);
        }
        Err(e) => return Err(report_error(e, &vocab_text, out)),
    };
    events.finished(&outcome, started.elapsed());
    if let Some(old) = previous_signer.filter(|old| *old != signer && !outcome.up_to_date) {
        out.note(&format!(
            "warning: {} was signed by key {old}; this build re-signed it with key {signer}: a consumer that pinned key {old} refuses it until it checks the new key and runs `skillc verify --accept-key {signer}` (README, \"Security model\")",
            session.options().out_dir.display()
        ));
    }
    if let Some(remote) = &session.options().remote {
        out.note(&cache_line(&outcome.checked, &remote.shown()));
    }
    let status = finish(args, out, &outcome, &session.options().out_dir, started)?;
    Ok(status)
}

/// `build cache: …`: where each skill's per-skill results came from, with a remote cache.
fn cache_line(c: &crate::build::session::Checked, remote: &str) -> String {
    format!(
        "build cache: {} from {remote}, {} from .skillc/cache, {} computed; {} L5 answers from the remote, {} wrappers sent to python3; {} objects pushed",
        super::output::count(c.remote_hits, "skill"),
        c.cache_hits,
        c.cache_misses,
        c.l5_remote,
        c.l5_described,
        c.remote_pushed,
    )
}

/// `skillc build --shard I/N`: this shard's per-skill stages, pushed; no catalog. With
/// `--format json`, the summary as one JSON object (schema `skillc.shard/1`, docs/json.md);
/// with `--force`, every folder of the skill roots is listed again.
fn run_shard(
    args: &BuildArgs,
    shard: crate::build::session::Shard,
    prepared: Prepared,
    out: &mut Printer,
    started: Instant,
) -> anyhow::Result<Status> {
    let Some(remote) = prepared.options.remote.clone() else {
        anyhow::bail!(
            "--shard pushes its results to the remote build cache, and pipeline.toml has no `[cache] remote`: set one (README, \"A build cache shared by machines\")"
        );
    };
    let vocab_text = prepared.vocab_text.clone();
    let mut session =
        Session::open(prepared.options, prepared.vocab_text).map_err(|e| report_error(e, &vocab_text, out))?;
    if args.force {
        session.forget_fingerprint();
    }
    let done = match session.build_shard(shard) {
        Ok(done) => done,
        Err(BuildError::NoSkills(roots)) => {
            NoSkills(roots).print(out);
            return Ok(Status::Failure);
        }
        Err(e) => return Err(report_error(e, &vocab_text, out)),
    };
    for w in &done.warnings {
        out.note(w);
    }
    let c = &done.checked;
    if args.format == ReportFormat::Json {
        use crate::messages::shard as msg;
        let shown = remote.shown();
        let report = msg::Report {
            schema: msg::SCHEMA,
            shard: msg::Which {
                index: shard.index,
                count: shard.count,
            },
            skills: done.skills,
            mine: done.mine,
            computed: c.cache_misses,
            cached_here: c.cache_hits,
            cached_remote: c.remote_hits,
            pushed: c.remote_pushed,
            remote: &shown,
            seconds: started.elapsed().as_secs_f64(),
            warnings: &done.warnings,
            catalog_written: false,
        };
        out.line(&serde_json::to_string_pretty(&report)?)?;
        out.flush()?;
        return Ok(Status::Success);
    }
    out.line(&format!(
        "shard {}/{}: {} of {}: {} computed, {} already cached ({} here, {} on the remote); {} objects pushed to {} in {:.2} s; no catalog written: run `skillc build` without --shard to assemble and sign it",
        shard.index,
        shard.count,
        done.mine,
        super::output::count(done.skills, "skill"),
        c.cache_misses,
        c.cache_hits + c.remote_hits,
        c.cache_hits,
        c.remote_hits,
        c.remote_pushed,
        remote.shown(),
        started.elapsed().as_secs_f64(),
    ))?;
    out.flush()?;
    Ok(Status::Success)
}

/// The key id of the public key in `out/` (the last catalog's signer), when one is readable.
fn signer_of(out_dir: &Path) -> Option<String> {
    let text = crate::catalog::read::read_key_text(&out_dir.join(emit::PUBLIC_KEY)).ok()?;
    crate::sign::PublicKey::from_file(&text).ok().map(|k| k.key_id_hex())
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

fn finish(
    args: &BuildArgs,
    out: &mut Printer,
    o: &Outcome,
    out_dir: &Path,
    started: Instant,
) -> anyhow::Result<Status> {
    if let Some(expires) = &o.expired {
        out.note(&expired_warning(expires));
    }
    for w in &o.warnings {
        out.note(w);
    }
    for f in &o.foreign {
        out.note(&format!(
            "warning: {} is not part of the catalog; skillc leaves it alone, but `skillc verify` refuses the folder until it is removed",
            crate::diag::printable(&out_dir.join(f).display().to_string())
        ));
    }
    if args.format == ReportFormat::Json {
        out.write(&o.report)?;
    } else if args.message_format == MessageFormat::Human {
        if !args.quiet {
            for line in rejected_skills(o, |_| true, REJECTED_SKILLS_SHOWN) {
                out.line(&line)?;
            }
            for line in rejected_plans(&o.report, REJECTED_PLANS_SHOWN) {
                out.line(&line)?;
            }
            if !o.rejected.is_empty() || o.totals.rejected > 0 {
                out.line(&format!(
                    "details: {} (every skill, plan and diagnostic), `skillc check` and `skillc plan --explain`",
                    out_dir.join(emit::REPORT).display()
                ))?;
            }
        }
        out.line(&summary_line(o, out_dir, started.elapsed().as_secs_f64()))?;
    }
    out.flush()?;
    Ok(if o.totals.rejected > 0 || o.totals.skills_rejected > 0 {
        Status::Failure
    } else {
        Status::Success
    })
}

/// The warning of a build whose catalog is already expired when written (only an old
/// `SOURCE_DATE_EPOCH` does that: without it an expired catalog is renewed). `build` and
/// `watch` print it on every build, up-to-date ones included.
pub(crate) fn expired_warning(expires: &str) -> String {
    format!(
        "warning: the catalog expires at {expires}, which is already past: `skillc verify` will refuse it \
         (SOURCE_DATE_EPOCH is old; raise `[signing] expires_days` or use a recent time)"
    )
}

/// The summary line of a build.
pub(crate) fn summary_line(o: &Outcome, out_dir: &Path, secs: f64) -> String {
    let t = &o.totals;
    let changed = o.added.len() + o.updated.len() + o.removed.len();
    format!(
        "{} {} {} {}{}: {}, {} admitted, {} rejected; {} changed, {} written or removed in {secs:.2} s",
        if o.up_to_date { "up to date:" } else { "built" },
        skills_built(t),
        if o.up_to_date { "in" } else { "into" },
        out_dir.display(),
        skills_rejected(t),
        super::output::count(t.plans, "plan"),
        t.admitted,
        t.rejected,
        super::output::count(changed, "executor"),
        super::output::count(o.files_written + o.files_removed, "file"),
    )
}

/// The skills a build put in its catalog, out of those it read: `12 skills`, or `5 of 12
/// skills` when some were rejected (a rejected skill is not built).
pub(crate) fn skills_built(t: &crate::messages::report::Totals) -> String {
    if t.skills_rejected == 0 {
        return super::output::count(t.skills, "skill");
    }
    format!(
        "{} of {}",
        t.skills.saturating_sub(t.skills_rejected),
        super::output::count(t.skills, "skill")
    )
}

/// ` (7 skills rejected)` when some were, else nothing.
pub(crate) fn skills_rejected(t: &crate::messages::report::Totals) -> String {
    if t.skills_rejected == 0 {
        return String::new();
    }
    format!(" ({} rejected)", super::output::count(t.skills_rejected, "skill"))
}

/// How many rejected plans a human summary lists before pointing at `report.json`.
const REJECTED_PLANS_SHOWN: usize = 20;

/// How many rejected skills a human summary lists before pointing at `report.json`.
pub(crate) const REJECTED_SKILLS_SHOWN: usize = 20;

/// Where the diagnostic that rejected each skill is: skill folder → `file:line:column`, read
/// from the build's report (the first error with the code its reason starts with). Empty when
/// the build computed no report (up to date).
pub(crate) fn rejection_sites(o: &Outcome) -> std::collections::HashMap<String, String> {
    let mut sites = std::collections::HashMap::new();
    let Ok(report) = serde_json::from_str::<serde_json::Value>(&o.report) else {
        return sites;
    };
    for (path, reason) in &o.rejected {
        let code = reason.split(':').next().unwrap_or_default();
        let skill = report["skills"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|s| s["path"].as_str() == Some(path.as_str()));
        let site = skill
            .and_then(|s| s["diagnostics"].as_array())
            .into_iter()
            .flatten()
            .find(|d| d["severity"] == "error" && d["code"] == code)
            .and_then(|d| {
                Some(format!(
                    "{}:{}:{}",
                    d["file"].as_str()?,
                    d["line"].as_u64()?,
                    d["column"].as_u64()?
                ))
            });
        if let Some(site) = site {
            sites.insert(path.clone(), site);
        }
    }
    sites
}

/// `rejected skill PATH: CODE: reason (at FILE:LINE:COL)` for the rejected skills whose
/// folder `keep` selects: the first `max`, then a count of the rest.
pub(crate) fn rejected_skills(o: &Outcome, keep: impl Fn(&str) -> bool, max: usize) -> Vec<String> {
    let sites = rejection_sites(o);
    let mut lines: Vec<String> = o
        .rejected
        .iter()
        .filter(|(path, _)| keep(path))
        .map(|(path, reason)| match sites.get(path) {
            Some(site) => format!("rejected skill {path}: {reason} (at {site})"),
            None => format!("rejected skill {path}: {reason}"),
        })
        .collect();
    if lines.len() > max {
        let more = lines.len() - max;
        lines.truncate(max);
        lines.push(format!(
            "… and {more} more rejected {}",
            if more == 1 { "skill" } else { "skills" }
        ));
    }
    lines
}

/// `rejected plan SKILL `SUBCOMMAND` → NAME [CODE at LEVEL]: reason` for the plans of skills
/// still in the catalog that admission or translation rejected (the first `max`, then a count
/// of the rest), read from the build's report. Empty when the build computed no report (up to
/// date).
fn rejected_plans(report: &str, max: usize) -> Vec<String> {
    let Ok(report) = serde_json::from_str::<serde_json::Value>(report) else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    let skills = report["skills"].as_array().map(Vec::as_slice).unwrap_or_default();
    for skill in skills.iter().filter(|s| s["status"] != "rejected") {
        for p in skill["plans"].as_array().map(Vec::as_slice).unwrap_or_default() {
            if p["status"] == "rejected" {
                lines.push(format!(
                    "rejected plan {} `{}`{} [{} at {}]: {}",
                    skill["name"].as_str().unwrap_or("?"),
                    p["subcommand"].as_str().unwrap_or_default(),
                    p["name"].as_str().map(|n| format!(" → {n}")).unwrap_or_default(),
                    p["code"].as_str().unwrap_or_default(),
                    p["level"].as_str().unwrap_or_default(),
                    p["reason"].as_str().unwrap_or_default(),
                ));
            }
        }
    }
    if lines.len() > max {
        let more = lines.len() - max;
        lines.truncate(max);
        lines.push(format!(
            "… and {more} more rejected {}",
            if more == 1 { "plan" } else { "plans" }
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::rejected_plans;

    #[test]
    fn rejected_plans_of_skills_still_in_are_listed_then_counted() {
        let plan = |sc: &str, name: Option<&str>, status: &str| serde_json::json!({"subcommand": sc, "name": name, "status": status, "level": "L3", "code": "AD004", "reason": "overlaps"});
        let report = serde_json::json!({"skills": [
            {"name": "a", "status": "ok", "plans": [plan("x list", Some("list_x_a"), "rejected"), plan("x get", Some("read_x_a"), "admitted"), plan("y", None, "rejected")]},
            {"name": "b", "status": "rejected", "plans": [plan("z list", Some("list_z_b"), "rejected")]},
        ]})
        .to_string();
        assert_eq!(
            rejected_plans(&report, 20),
            [
                "rejected plan a `x list` → list_x_a [AD004 at L3]: overlaps",
                "rejected plan a `y` [AD004 at L3]: overlaps"
            ]
        );
        assert_eq!(
            rejected_plans(&report, 1),
            [
                "rejected plan a `x list` → list_x_a [AD004 at L3]: overlaps",
                "… and 1 more rejected plan"
            ]
        );
        assert!(rejected_plans("", 20).is_empty());
    }
}

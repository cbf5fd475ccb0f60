//! `skillc import`: bring skills in from folders, git repositories, raw URLs,
//! agentskills.io addresses and zip archives (the work is done by the `import` module; this
//! file resolves the options and prints the summary).

use std::path::PathBuf;

use crate::messages;
use anyhow::Context as _;

use super::{Printer, ReportFormat, Status, project};
use crate::diag;
use crate::import::{self, Options, Outcome, fetch, spec};

/// Arguments of `skillc import`.
#[derive(Debug, clap::Args)]
#[command(after_help = "SOURCE forms:\n  \
  ./path/to/skill            a skill folder (with scripts/, references/, assets/)\n  \
  ./path/SKILL.md            a lone SKILL.md\n  \
  ./skill.zip                a zip (`<name>/SKILL.md` as `skillc export` writes, or SKILL.md at the root)\n  \
  URL[#REF[:PATH]]           a git repository (any URL git accepts, file:// included), shallow\n  \
  https://github.com/O/R/tree/REF/PATH\n  \
  https://host/…/SKILL.md    one SKILL.md over HTTP(S)\n  \
  agentskills.io/AUTHOR/SKILL  the repository https://github.com/AUTHOR/SKILL\n\n\
Remote sources are cached in $XDG_CACHE_HOME/skillc (else ~/.cache/skillc) for `[import] max_age_days` (7).\n\
Exit status: 0 every source imported or skipped, 1 a source failed (or drifted with --locked), 2 the command could not run\n\
or a source could not be fetched for want of the network, git or the cache (IM002).")]
pub struct ImportArgs {
    /// Where to import from (see the forms below).
    #[arg(value_name = "SOURCE", required_unless_present = "locked", conflicts_with = "locked")]
    pub sources: Vec<String>,
    /// The skills root to write into (default: the first `[pipeline] skills` root, i.e. `skills`).
    #[arg(long, value_name = "DIR")]
    pub into: Option<PathBuf>,
    /// Fetch remote sources again even when the cache holds a fresh copy.
    #[arg(long)]
    pub refresh: bool,
    /// Fetch every source of `skillc.lock` again and fail, writing nothing, on any content drift.
    #[arg(long)]
    pub locked: bool,
    /// Output format of the summary.
    #[arg(long, visible_alias = "message-format", value_enum, default_value_t = ReportFormat::Human)]
    pub format: ReportFormat,
}

/// `SOURCE_DATE_EPOCH` as RFC 3339, else the current time.
fn import_time() -> anyhow::Result<String> {
    let now = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(raw) => {
            let secs: i64 = raw
                .trim()
                .parse()
                .ok()
                .filter(|t| *t >= 0)
                .with_context(|| format!("SOURCE_DATE_EPOCH must be a Unix time in seconds, not `{raw}`"))?;
            jiff::Timestamp::from_second(secs).context("SOURCE_DATE_EPOCH is out of range")?
        }
        Err(_) => {
            jiff::Timestamp::from_second(jiff::Timestamp::now().as_second()).unwrap_or_else(|_| jiff::Timestamp::now())
        }
    };
    Ok(now.to_string())
}

pub(crate) fn run(args: &ImportArgs, out: &mut Printer) -> anyhow::Result<Status> {
    let cwd = std::env::current_dir()?;
    let project = project::load(&cwd, out)?;
    let default_into = project.root.join(
        project
            .config
            .skills
            .first()
            .cloned()
            .unwrap_or_else(|| PathBuf::from("skills")),
    );
    let into = match &args.into {
        Some(p) => cwd.join(p),
        None => default_into.clone(),
    };
    std::fs::create_dir_all(&into).with_context(|| format!("creating the skills root {}", into.display()))?;
    // One import at a time per project: two would race on skillc.lock.
    let state_dir = project.root.join(".skillc");
    super::keys::ignore_state_dir(&state_dir)?;
    let lock_path = state_dir.join("import.lock");
    let guard = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .with_context(|| lock_path.display().to_string())?;
    if let Err(std::fs::TryLockError::WouldBlock) = guard.try_lock() {
        anyhow::bail!(
            "another skillc import is running in this project ({} is locked); wait for it to finish",
            lock_path.display()
        );
    }
    let options = options_for(&project, into.clone(), args.refresh)?;
    let outcomes = if args.locked {
        import::import_locked(&options)
    } else {
        import::import(&args.sources, &options)
    }
    .map_err(|e| match e {
        import::ImportError::Lock(e) => project::lock_error(e, out),
    })?;
    record_created(&project.root, &outcomes, out);
    let count = |s: import::Status| outcomes.iter().filter(|o| o.status == s).count();
    let (imported, skipped, failed) = (
        count(import::Status::Imported),
        count(import::Status::Skipped),
        count(import::Status::Failed),
    );
    match args.format {
        ReportFormat::Json => {
            let into_shown = into
                .strip_prefix(&project.root)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| into.display().to_string());
            let report = messages::import::Report {
                schema: messages::import::SCHEMA,
                into: into_shown,
                locked: args.locked,
                summary: messages::import::Summary {
                    imported,
                    skipped,
                    failed,
                },
                sources: &outcomes,
            };
            out.line(&serde_json::to_string_pretty(&report)?)?;
        }
        ReportFormat::Human => {
            for o in &outcomes {
                for line in human(o) {
                    out.line(&line)?;
                }
            }
            out.line(&format!(
                "import: {imported} imported, {skipped} skipped, {failed} failed"
            ))?;
        }
    }
    out.flush()?;
    // A source that could not be fetched (no network, git missing, the cache unwritable) is
    // the machine failing, not the input: exit 2, as for any IO error (README, "Exit status").
    let io_failed = outcomes
        .iter()
        .any(|o| o.status == import::Status::Failed && o.code == Some(crate::rules::IM002.code));
    Ok(if io_failed {
        Status::Error
    } else if failed > 0 {
        Status::Failure
    } else {
        Status::Success
    })
}

/// The import settings of `project` writing into `into` (shared with `serve` and `update`).
pub(crate) fn options_for(project: &project::Project, into: PathBuf, refresh: bool) -> anyhow::Result<Options> {
    let default_into = project.root.join(
        project
            .config
            .skills
            .first()
            .cloned()
            .unwrap_or_else(|| PathBuf::from("skills")),
    );
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let cache = fetch::default_cache_dir().map(|dir| fetch::Cache {
        dir,
        max_age_secs: u64::from(project.config.import_max_age_days) * 86_400,
        refresh,
        now: wall,
    });
    // A folder other than the project's skills root is recorded in skillc.lock, so that
    // `--locked` installs there again.
    let same = |a: &std::path::Path, b: &std::path::Path| {
        std::fs::canonicalize(a)
            .ok()
            .is_some_and(|a| std::fs::canonicalize(b).is_ok_and(|b| a == b))
    };
    let into_recorded = (!same(&into, &default_into)).then(|| {
        let abs = std::fs::canonicalize(&into).unwrap_or_else(|_| into.clone());
        let root = std::fs::canonicalize(&project.root).unwrap_or_else(|_| project.root.clone());
        crate::util::relative_slashed(&abs, &root)
    });
    let options = Options {
        into: into.clone(),
        into_recorded,
        root: project.root.clone(),
        skills_roots: project.config.skills.iter().map(|r| project.root.join(r)).collect(),
        limits: project.config.limits,
        fail_on: project.config.fail_on,
        cache,
        git_bounds: fetch::Bounds {
            max_bytes: project.config.import_max_repository_bytes,
            max_files: project.config.import_max_repository_files,
            timeout: std::time::Duration::from_secs(project.config.import_timeout_seconds),
        },
        agentskills_base: std::env::var("SKILLC_AGENTSKILLS_BASE")
            .ok()
            .filter(|b| !b.is_empty())
            .unwrap_or_else(|| spec::AGENTSKILLS_DEFAULT_BASE.to_owned()),
        imported_at: import_time()?,
    };
    Ok(options)
}

/// Records `skill.created {source: imported}` for every skill written (the curator never
/// touches them); a log that cannot be written is a warning, the import stands.
fn record_created(root: &std::path::Path, outcomes: &[Outcome], out: &mut Printer) {
    let Ok(now) = super::curate::now() else { return };
    for o in outcomes.iter().filter(|o| o.status == import::Status::Imported) {
        let Some(name) = &o.name else { continue };
        let event = crate::events::Event::new(
            now,
            crate::events::Kind::Created {
                skill: name.clone(),
                source: crate::events::Origin::Imported,
            },
        );
        if let Err(e) = crate::events::record(root, &event) {
            out.note(&format!("warning: skill.created of {name} not recorded: {e}"));
        }
    }
}

/// The lines of one outcome in the human summary.
fn human(o: &Outcome) -> Vec<String> {
    let mut lines = Vec::new();
    let name = o.name.as_deref().unwrap_or("-");
    let code = o.code.map(|c| format!(" [{c}]")).unwrap_or_default();
    let reason = o.reason.as_deref().unwrap_or_default();
    let mut extra = Vec::new();
    if let Some(r) = &o.resolved {
        extra.push(format!("at {r}"));
    }
    if let Some(c) = o.cache {
        extra.push(format!("cache {}", c.as_str()));
    }
    let extra = if extra.is_empty() {
        String::new()
    } else {
        format!(" ({})", extra.join(", "))
    };
    lines.push(match o.status {
        import::Status::Imported => format!(
            "imported {name} from {} -> {}{extra}",
            o.source,
            o.path.as_deref().unwrap_or_default()
        ),
        import::Status::Skipped => format!("skipped  {name} from {}: {reason}{code}", o.source),
        import::Status::Failed => format!("failed   {}: {reason}{code}", o.source),
    });
    for n in &o.notes {
        let sev = crate::rules::find(n.code)
            .map(|r| r.severity.to_string())
            .unwrap_or_default();
        lines.push(format!("  {sev}[{}]: {}", n.code, n.message));
    }
    for d in &o.diagnostics {
        lines.push(format!("  {}", diag::render_short(d)));
    }
    lines
}

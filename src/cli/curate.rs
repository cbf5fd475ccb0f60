//! `skillc curate`: the curator's commands (the work is in `crate::curate`; this file reads
//! the arguments, prints the reports and picks the exit status).

use clap::Subcommand;
use jiff::Timestamp;

use super::{Printer, ReportFormat, Status, project};
use crate::curate::{self, CurateError, RunOptions, RunReport, StatusReport};
use crate::events::{Reason, Trigger};

/// The environment variable that fixes the curator's clock (RFC 3339), for tests and replays.
pub const NOW_ENV: &str = "SKILLC_NOW";

/// Arguments of `skillc curate`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 done (a run that ends on a cost cap included; `maybe` also when disabled, \
not due or busy), 1 the model was unavailable, or a skill was not found or an action refused, 2 the command could \
not run (disabled, busy, IO, configuration).\n\
The clock is SKILLC_NOW (RFC 3339) when set, else the system's."
)]
pub struct CurateArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: CurateCommand,
    /// Output format.
    #[arg(long, global = true, value_enum, default_value_t = ReportFormat::Human)]
    pub format: ReportFormat,
}

/// The `curate` sub-commands.
#[derive(Debug, Subcommand)]
pub enum CurateCommand {
    /// Show the last run, pinned, stale and archived skills, today's spend and what a run now
    /// would consider.
    Status,
    /// Run once now: archive, consolidate and edit agent-written skills, each confirmed by one
    /// model call within the cost caps.
    Run {
        /// Print the plan only: no model call, no event, no state change, no file moved.
        #[arg(long)]
        dry_run: bool,
    },
    /// Run only when `[curator] interval` has passed since the last run (for a runtime's
    /// session end); otherwise record nothing.
    Maybe,
    /// Pin a skill: no run touches it.
    Pin {
        /// The skill's name.
        name: String,
    },
    /// Unpin a skill.
    Unpin {
        /// The skill's name.
        name: String,
    },
    /// Archive a skill now (moved to `<skills root>-archive/`, never deleted).
    Archive {
        /// The skill's name.
        name: String,
    },
    /// Move an archived skill back, or with --before bring back an earlier body.
    Restore {
        /// The skill's name.
        name: String,
        /// Bring back the body the skill had before TIME (RFC 3339, `20260514T183000Z` or a
        /// date): the earliest snapshot taken at or after it.
        #[arg(long, value_name = "TIME")]
        before: Option<String>,
    },
    /// List every archive and body snapshot the curator recorded.
    ListArchived,
}

/// The curator's view of a loaded project.
pub(crate) fn curate_project(p: &project::Project) -> curate::Project {
    curate::Project {
        root: p.root.clone(),
        skills: p.config.skills.clone(),
        out: p.config.out.clone(),
        skill_md_bytes: p.config.limits.skill_md_bytes,
        curator: p.curator.clone(),
    }
}

/// The curator's clock: `SKILLC_NOW` when set, else now (whole seconds).
pub(crate) fn now() -> anyhow::Result<Timestamp> {
    match std::env::var(NOW_ENV) {
        Ok(raw) if !raw.trim().is_empty() => curate::store::parse_time(&raw)
            .map(crate::events::whole_seconds)
            .ok_or_else(|| anyhow::anyhow!("{NOW_ENV} must be an RFC 3339 time, not `{raw}`")),
        _ => Ok(crate::events::whole_seconds(Timestamp::now())),
    }
}

pub(crate) fn run(args: &CurateArgs, out: &mut Printer) -> anyhow::Result<Status> {
    let loaded = project::load(&std::env::current_dir()?, out)?;
    let project = curate_project(&loaded);
    let now = now()?;
    let json = args.format == ReportFormat::Json;
    let result = match &args.command {
        CurateCommand::Status => {
            let s = curate::status(&project, now)?;
            emit(out, json, &s, human_status)?;
            return Ok(Status::Success);
        }
        CurateCommand::Run { dry_run } => return run_once(&project, *dry_run, Trigger::Cli, now, json, out),
        CurateCommand::Maybe => return run_once(&project, false, Trigger::Maybe, now, json, out),
        CurateCommand::ListArchived => {
            let l = curate::list_archived(&project)?;
            emit(out, json, &l, |l| {
                let mut lines: Vec<String> = l
                    .entries
                    .iter()
                    .map(|e| {
                        let state = match (e.exists, e.current, &e.restored_at) {
                            (false, _, _) => " (missing)".to_owned(),
                            (true, true, _) => " (current)".to_owned(),
                            (true, false, Some(t)) => format!(" (restored {t})"),
                            _ => String::new(),
                        };
                        let at = e.at.as_deref().unwrap_or("-");
                        format!("{:<24} {:<8} {at}  {}{state}", e.skill, e.kind, e.path)
                    })
                    .collect();
                lines.push(format!(
                    "curate: {} archived folder(s) and snapshot(s)",
                    l.entries.len()
                ));
                lines
            })?;
            return Ok(Status::Success);
        }
        CurateCommand::Pin { name } => curate::pin(&project, name, now),
        CurateCommand::Unpin { name } => curate::unpin(&project, name, now),
        CurateCommand::Archive { name } => curate::archive(&project, name, now),
        CurateCommand::Restore { name, before } => {
            let before = match before {
                Some(t) => Some(curate::store::parse_time(t).ok_or_else(|| {
                    anyhow::anyhow!("--before `{t}` is not a time (RFC 3339, 20260514T183000Z or 2026-05-14)")
                })?),
                None => None,
            };
            curate::restore(&project, name, before, now)
        }
    };
    match result {
        Ok(report) => {
            keep_state_out_of_git(&project)?;
            for w in &report.warnings {
                out.note(&format!("warning: {w}"));
            }
            emit(out, json, &report, |r| {
                let mut lines: Vec<String> = r
                    .reconciled
                    .iter()
                    .map(|c| {
                        format!(
                            "reconciled {} {}: {} ({})",
                            c.action.as_str(),
                            c.skill,
                            c.outcome,
                            c.detail
                        )
                    })
                    .collect();
                let what = match (r.changed, &r.archive_path, &r.restored_to, &r.snapshot) {
                    (false, ..) => format!("{} is already {}", r.skill, past(r.action)),
                    (true, Some(a), Some(to), _) => format!("restored {} from {a} to {to}", r.skill),
                    (true, Some(a), None, Some(s)) => {
                        format!(
                            "restored the body of {} from {a} (the replaced body is kept in {s})",
                            r.skill
                        )
                    }
                    (true, Some(a), None, None) => format!("archived {} -> {a}", r.skill),
                    _ => format!("{} {}", past(r.action), r.skill),
                };
                lines.push(format!("curate: {what}"));
                lines
            })?;
            Ok(Status::Success)
        }
        Err(CurateError::NotFound(m) | CurateError::Refused(m)) => {
            out.note(&format!("error: {m}"));
            Ok(Status::Failure)
        }
        Err(e) => Err(e.into()),
    }
}

/// `.skillc/` is never committed: once a command wrote into it, it gets its `.gitignore`.
fn keep_state_out_of_git(project: &curate::Project) -> anyhow::Result<()> {
    let dir = project.root.join(".skillc");
    if dir.is_dir() {
        super::keys::ignore_state_dir(&dir)?;
    }
    Ok(())
}

fn past(a: crate::events::Action) -> &'static str {
    match a {
        crate::events::Action::Pin => "pinned",
        crate::events::Action::Unpin => "unpinned",
        crate::events::Action::Archive => "archived",
        crate::events::Action::Restore => "restored",
        crate::events::Action::Consolidate => "consolidated",
        crate::events::Action::Edit => "edited",
    }
}

fn emit<T: serde::Serialize>(
    out: &mut Printer,
    json: bool,
    value: &T,
    human: impl Fn(&T) -> Vec<String>,
) -> anyhow::Result<()> {
    if json {
        out.line(&serde_json::to_string_pretty(value)?)?;
    } else {
        for l in human(value) {
            out.line(&l)?;
        }
    }
    out.flush()?;
    Ok(())
}

fn run_once(
    project: &curate::Project,
    dry_run: bool,
    trigger: Trigger,
    now: Timestamp,
    json: bool,
    out: &mut Printer,
) -> anyhow::Result<Status> {
    let report = curate::run(project, RunOptions { dry_run, trigger }, now)?;
    if report.run_id.is_some() {
        keep_state_out_of_git(project)?;
    }
    for w in &report.warnings {
        out.note(&format!("warning: {w}"));
    }
    emit(out, json, &report, human_run)?;
    Ok(match (report.reason, trigger) {
        (Reason::Disabled | Reason::IntervalNotElapsed | Reason::Busy, Trigger::Maybe) => Status::Success,
        (Reason::Disabled | Reason::Busy, _) => Status::Error,
        (Reason::ModelUnavailable, _) => Status::Failure,
        _ => Status::Success,
    })
}

fn describe(c: &curate::select::Candidate) -> String {
    use curate::select::Candidate;
    match c {
        Candidate::Archive {
            skill,
            inactive_days,
            never_loaded,
            ..
        } => format!(
            "archive      {skill} (inactive {inactive_days} days{})",
            if *never_loaded { ", never loaded" } else { "" }
        ),
        Candidate::Consolidate { skills, .. } => format!("consolidate  {}", skills.join(", ")),
        Candidate::Edit {
            skill,
            loads,
            failed_loads,
            failed_tools,
            ..
        } => {
            let tools: Vec<String> = failed_tools
                .iter()
                .map(|t| format!("{} ×{}", t.tool, t.count))
                .collect();
            format!(
                "edit         {skill} ({failed_loads} of {loads} loads failed: {})",
                tools.join(", ")
            )
        }
    }
}

/// The end-of-run report: what was archived, merged into what, edited, skipped and why.
pub(crate) fn human_run(r: &RunReport) -> Vec<String> {
    let mut lines = Vec::new();
    if r.dry_run {
        lines.push("curate: dry run, the plan (no model call, no event, no state change, no file moved)".into());
        lines.extend(r.candidates.iter().map(|c| format!("  {}", describe(c))));
        lines.push(format!("curate: {} candidate(s)", r.candidates.len()));
        return lines;
    }
    match r.reason {
        Reason::Disabled => return vec!["curate: disabled ([curator] enabled = false); nothing done".into()],
        Reason::IntervalNotElapsed => return vec!["curate: not due yet ([curator] interval); nothing done".into()],
        Reason::Busy => return vec!["curate: busy, another run holds the lock; nothing done".into()],
        _ => {}
    }
    if let Some(id) = &r.run_id {
        lines.push(format!("curate: run {id}"));
    }
    for c in &r.reconciled {
        lines.push(format!(
            "  reconciled {} {}: {} ({})",
            c.action.as_str(),
            c.skill,
            c.outcome,
            c.detail
        ));
    }
    for d in &r.actions {
        let why = d.rationale.as_deref().map(|w| format!(": {w}")).unwrap_or_default();
        lines.push(match (d.action, &d.into) {
            (crate::events::Action::Archive, Some(into)) => {
                format!("  archived  {} -> {} (merged into {into})", d.skill, d.archive_path)
            }
            (crate::events::Action::Archive, None) => format!("  archived  {} -> {}{why}", d.skill, d.archive_path),
            (crate::events::Action::Consolidate, _) => format!(
                "  merged    {} into {} (previous body kept in {}){why}",
                d.consolidated_from.join(", "),
                d.skill,
                d.archive_path
            ),
            (_, _) => {
                let (add, del) = d.lines.unwrap_or_default();
                format!(
                    "  edited    {} (+{add} -{del}; previous body kept in {}){why}",
                    d.skill, d.archive_path
                )
            }
        });
    }
    for s in &r.skipped {
        lines.push(format!(
            "  skipped   {} ({}): {}",
            s.skills.join(", "),
            s.action,
            s.reason
        ));
    }
    if !r.not_reached.is_empty() {
        lines.push(format!(
            "  not reached: {} candidate(s), the run stopped ({})",
            r.not_reached.len(),
            r.reason.as_str()
        ));
    }
    lines.push(format!(
        "curate: {}; {} action(s), {} skipped, {} model call(s); spent ${} (today ${} of ${})",
        r.reason.as_str(),
        r.actions.len(),
        r.skipped.len(),
        r.calls,
        r.spend_usd,
        r.spend_today_usd,
        r.per_day_max_usd
    ));
    lines
}

fn human_status(s: &StatusReport) -> Vec<String> {
    let mut lines = vec![format!(
        "curator: {}, model {}",
        if s.enabled { "enabled" } else { "disabled" },
        s.model.as_deref().unwrap_or("(none configured)")
    )];
    match &s.last_run {
        Some(r) => lines.push(format!(
            "last run: {} finished {}: {}, {} action(s), {} call(s), ${}",
            r.run_id,
            r.finished_at,
            r.reason.as_str(),
            r.actions,
            r.calls,
            r.spend_usd
        )),
        None => lines.push("last run: none".into()),
    }
    lines.push(format!(
        "spend today: ${} of ${} (per run ${})",
        s.spend_today_usd, s.per_day_max_usd, s.per_run_max_usd
    ));
    lines.push(format!("next `curate maybe` run: {}", s.next_maybe_at));
    if s.fail_closed {
        lines.push("state: corrupt or kept aside, every skill is treated as pinned".into());
    }
    if s.pending > 0 {
        lines.push(format!(
            "state: {} action(s) in flight, reconciled by the next run",
            s.pending
        ));
    }
    lines.push(format!("skills: {} ({} agent-written)", s.skills, s.touchable));
    lines.push(format!("pinned ({}): {}", s.pinned.len(), s.pinned.join(", ")));
    let stale: Vec<String> = s
        .stale
        .iter()
        .map(|t| format!("{} ({} days)", t.skill, t.inactive_days))
        .collect();
    lines.push(format!("stale ({}): {}", stale.len(), stale.join(", ")));
    let archived: Vec<String> = s
        .archived
        .iter()
        .map(|a| {
            format!(
                "{} -> {}{}",
                a.skill,
                a.archive_path,
                if a.exists { "" } else { " (missing)" }
            )
        })
        .collect();
    lines.push(format!("archived ({}): {}", archived.len(), archived.join(", ")));
    lines.push(format!("a run now would consider {} candidate(s)", s.candidates.len()));
    lines.extend(s.candidates.iter().map(|c| format!("  {}", describe(c))));
    lines
}

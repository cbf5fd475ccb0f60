//! The catalog commands that change the project (RUNTIME.md §2): `skillc remove NAME`
//! (archives, never deletes; refuses a pinned skill) and `skillc update [NAME|--all]`
//! (re-fetches locked sources; refuses to replace a skill edited since import unless
//! `--force`, which archives the local copy first). `skillc serve`'s `DELETE
//! /api/skills/{name}` goes through the same `serve::project::remove`.

use serde_json::json;

use super::{Printer, ReportFormat, Status, project};
use crate::import::update::{self, UpdateStatus};
use crate::serve::project::{self as sp, RemoveError};

/// Arguments of `skillc remove`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "The skill folder moves to `<skills root>-archive/<name>-<UTC time>/`; nothing is deleted.\n\
Exit status: 0 archived, 1 no such skill or it is pinned, 2 the command could not run."
)]
pub struct RemoveArgs {
    /// The skill name.
    pub name: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Human)]
    pub format: ReportFormat,
}

/// Arguments of `skillc update`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "A replaced skill is first moved to `<skills root>-archive/<name>-<UTC time>/`.\n\
Exit status: 0 every skill up to date or updated, 1 one was refused (edited, IM010) or failed, 2 the command could not run."
)]
pub struct UpdateArgs {
    /// The skill to update (an entry of skillc.lock).
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub name: Option<String>,
    /// Every skill of skillc.lock, except archived ones (`skillc remove`, the curator): those
    /// are updated only when named.
    #[arg(long)]
    pub all: bool,
    /// Replace skills edited since they were imported (the local copy is archived first).
    #[arg(long)]
    pub force: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Human)]
    pub format: ReportFormat,
}

fn serve_project(out: &mut Printer) -> anyhow::Result<sp::Project> {
    let cwd = std::env::current_dir()?;
    let p = project::load(&cwd, out)?;
    super::serve::serve_project(&p)
}

pub(crate) fn remove(args: &RemoveArgs, out: &mut Printer) -> anyhow::Result<Status> {
    let p = serve_project(out)?;
    match sp::remove(&p, &args.name, jiff::Timestamp::now()) {
        Ok(a) => {
            match args.format {
                ReportFormat::Json => out.line(&serde_json::to_string_pretty(&json!({
                    "schema": "skillc.remove/1", "name": a.name, "from": a.from, "archived_to": a.archived_to
                }))?)?,
                ReportFormat::Human => out.line(&format!(
                    "archived {} ({} -> {}); rebuild the catalog to drop it",
                    a.name, a.from, a.archived_to
                ))?,
            }
            out.flush()?;
            Ok(Status::Success)
        }
        Err(e @ (RemoveError::NotFound(_) | RemoveError::Pinned(_) | RemoveError::State(_))) => {
            if args.format == ReportFormat::Json {
                let code = match e {
                    RemoveError::NotFound(_) => "not_found",
                    _ => "pinned",
                };
                out.line(&serde_json::to_string_pretty(&json!({
                    "schema": "skillc.remove/1", "name": args.name, "error": {"code": code, "message": e.to_string()}
                }))?)?;
                out.flush()?;
            }
            out.note(&format!("error: {e}"));
            Ok(Status::Failure)
        }
        Err(e) => Err(e.into()),
    }
}

/// The skills the curator's state records as archived whose folder is gone from the skills
/// roots (a skill archived and then imported or restored again is not): name → archive.
fn archived_skills(p: &sp::Project) -> anyhow::Result<std::collections::BTreeMap<String, String>> {
    let listed = crate::curate::list_archived(&p.curate)?;
    let present = |name: &str| p.skills_roots.iter().any(|r| r.join(name).symlink_metadata().is_ok());
    Ok(listed
        .entries
        .into_iter()
        .filter(|e| e.kind == "archive" && e.current && !present(&e.skill))
        .map(|e| (e.skill, e.path))
        .collect())
}

pub(crate) fn update(args: &UpdateArgs, out: &mut Printer) -> anyhow::Result<Status> {
    let p = serve_project(out)?;
    let mut options = p.import.clone();
    options.imported_at = jiff::Timestamp::from_second(jiff::Timestamp::now().as_second())?.to_string();
    let names: Vec<String> = args.name.iter().cloned().collect();
    let now = jiff::Timestamp::now();
    let root = p.root.clone();
    // The curator's archive: recorded in its state, so `skillc curate restore` brings the
    // replaced copy back (once the name is free); a pinned skill is not replaced.
    let curate_project = p.curate.clone();
    let mut archive = |_: &std::path::Path, _: &std::path::Path, name: &str| {
        let report = crate::curate::archive(&curate_project, name, now).map_err(|e| e.to_string())?;
        let shown = report.archive_path.unwrap_or_default();
        Ok((shown.clone(), root.join(&shown)))
    };
    let archived = archived_skills(&p)?;
    let outcomes = update::update(&names, &options, args.force, &archived, &mut archive)?;
    let failed = outcomes
        .iter()
        .filter(|o| matches!(o.status, UpdateStatus::Refused | UpdateStatus::Failed))
        .count();
    match args.format {
        ReportFormat::Json => {
            let count = |s: UpdateStatus| outcomes.iter().filter(|o| o.status == s).count();
            out.line(&serde_json::to_string_pretty(&json!({
                "schema": "skillc.update/1",
                "summary": {"up_to_date": count(UpdateStatus::UpToDate), "updated": count(UpdateStatus::Updated),
                            "archived": count(UpdateStatus::Archived),
                            "refused": count(UpdateStatus::Refused), "failed": count(UpdateStatus::Failed)},
                "skills": outcomes,
            }))?)?;
        }
        ReportFormat::Human => {
            for o in &outcomes {
                let code = o.code.map(|c| format!(" [{c}]")).unwrap_or_default();
                let reason = o.reason.as_deref().unwrap_or_default();
                out.line(&match o.status {
                    UpdateStatus::UpToDate => format!(
                        "up to date  {}{}",
                        o.name,
                        if o.edited {
                            " (edited locally; the source did not change)"
                        } else {
                            ""
                        }
                    ),
                    UpdateStatus::Updated => format!(
                        "updated     {} from {}{}{}",
                        o.name,
                        o.source,
                        o.archived_to
                            .as_ref()
                            .map(|a| format!(" (previous copy archived to {a})"))
                            .unwrap_or_default(),
                        o.archived
                            .as_ref()
                            .map(|a| format!(" (it was archived: the archived copy stays in {a})"))
                            .unwrap_or_default()
                    ),
                    UpdateStatus::Archived => format!("archived    {}: {reason}", o.name),
                    UpdateStatus::Refused => format!("refused     {}: {reason}{code}", o.name),
                    UpdateStatus::Failed => format!("failed      {}: {reason}{code}", o.name),
                })?;
                let c = &o.changes;
                for (label, files) in [("added", &c.added), ("modified", &c.modified), ("removed", &c.removed)] {
                    if !files.is_empty() && o.status != UpdateStatus::UpToDate {
                        out.line(&format!("  {label}: {}", files.join(", ")))?;
                    }
                }
            }
            let archived = outcomes.iter().filter(|o| o.status == UpdateStatus::Archived).count();
            out.line(&format!(
                "update: {}, {} updated, {failed} refused or failed{}",
                super::output::count(outcomes.len(), "skill"),
                outcomes.iter().filter(|o| o.status == UpdateStatus::Updated).count(),
                if archived > 0 {
                    format!(", {archived} archived (not updated)")
                } else {
                    String::new()
                }
            ))?;
        }
    }
    out.flush()?;
    Ok(if failed > 0 { Status::Failure } else { Status::Success })
}

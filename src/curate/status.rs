//! `skillc curate status`: the last run, pinned, stale and archived skills, today's spend and
//! what the next run would consider. Read-only.

use jiff::Timestamp;
use serde::Serialize;

use super::run::make_plan;
use super::select::Candidate;
use super::{CurateError, Project, discover, peek, read_events, roots, store};
use crate::events::{Kind, Reason, rfc3339};

/// The last `curator.run_finished` of the project's log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LastRun {
    /// Its id.
    pub run_id: String,
    /// When it ended.
    pub finished_at: String,
    /// How.
    pub reason: Reason,
    /// What it spent (USD).
    pub spend_usd: String,
    /// Actions taken.
    pub actions: u32,
    /// Model calls.
    pub calls: u32,
}

/// A stale skill (shown, never acted on alone).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Stale {
    /// Its name.
    pub skill: String,
    /// Whole days without activity.
    pub inactive_days: i64,
    /// Its last load.
    pub last_loaded_at: Option<String>,
}

/// An archived skill.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Archived {
    /// Its name.
    pub skill: String,
    /// Where it is.
    pub archive_path: String,
    /// Since when.
    pub archived_at: Option<String>,
    /// Whether the folder is still there.
    pub exists: bool,
}

/// `skillc.curate.status/1` (docs/json.md).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StatusReport {
    /// `skillc.curate.status/1`.
    pub schema: &'static str,
    /// The time of the status.
    pub now: String,
    /// `[curator] enabled`.
    pub enabled: bool,
    /// The model's name, when one is configured.
    pub model: Option<String>,
    /// When the last run ended.
    pub last_curation_at: Option<String>,
    /// When `maybe` will run next (now or later).
    pub next_maybe_at: String,
    /// The last run of the log.
    pub last_run: Option<LastRun>,
    /// Today's spend (USD).
    pub spend_today_usd: String,
    /// `per_day_max_usd`.
    pub per_day_max_usd: String,
    /// `per_run_max_usd`.
    pub per_run_max_usd: String,
    /// The state is corrupt or kept aside: every skill is treated as pinned.
    pub fail_closed: bool,
    /// Journal entries of an interrupted run (the next run reconciles them).
    pub pending: usize,
    /// Skills found in the skills roots.
    pub skills: usize,
    /// Of those, the ones the curator may touch (agent- or curator-written).
    pub touchable: usize,
    /// Pinned skills.
    pub pinned: Vec<String>,
    /// Stale skills, stalest first.
    pub stale: Vec<Stale>,
    /// Archived skills.
    pub archived: Vec<Archived>,
    /// What a run now would consider, in order.
    pub candidates: Vec<Candidate>,
    /// Warnings.
    pub warnings: Vec<String>,
}

/// The curator's status as of `now` (read-only).
///
/// # Errors
/// [`CurateError`] when the state, the skills roots or the log cannot be read.
pub fn status(project: &Project, now: Timestamp) -> Result<StatusReport, CurateError> {
    let mut warnings = Vec::new();
    let (state, fail_closed) = peek(project, &mut warnings)?;
    let roots = roots(project);
    let found = discover(project, &roots)?;
    let events = read_events(project, &mut warnings)?;
    let plan = make_plan(project, &found, &events, &state, fail_closed, now);
    let last_run = events
        .iter()
        .filter_map(|e| match &e.kind {
            Kind::RunFinished {
                run_id,
                reason,
                spend,
                actions,
                calls,
            } => Some(LastRun {
                run_id: run_id.clone(),
                finished_at: rfc3339(e.time),
                reason: *reason,
                spend_usd: spend.clone(),
                actions: *actions,
                calls: *calls,
            }),
            _ => None,
        })
        .next_back();
    let last = state
        .last_curation_at
        .as_deref()
        .and_then(|t| t.parse::<Timestamp>().ok());
    let next = last
        .and_then(|t| Timestamp::from_second(t.as_second() + project.curator.interval_secs).ok())
        .filter(|t| *t > now)
        .unwrap_or(now);
    let mut stale: Vec<Stale> = plan
        .skills
        .iter()
        .filter(|s| s.stale)
        .map(|s| Stale {
            skill: s.name.clone(),
            inactive_days: s.inactive_days.unwrap_or(0),
            last_loaded_at: s.last_loaded_at.clone(),
        })
        .collect();
    stale.sort_by(|a, b| {
        b.inactive_days
            .cmp(&a.inactive_days)
            .then_with(|| a.skill.cmp(&b.skill))
    });
    let archived = state
        .skills
        .iter()
        .filter_map(|(name, k)| {
            k.archive_path.as_ref().map(|p| Archived {
                skill: name.clone(),
                archive_path: p.clone(),
                archived_at: k.archived_at.clone(),
                exists: store::resolve(&project.root, p).is_dir(),
            })
        })
        .collect();
    Ok(StatusReport {
        schema: "skillc.curate.status/1",
        now: rfc3339(now),
        enabled: project.curator.enabled,
        model: project.curator.model.as_ref().map(|m| m.name.clone()),
        last_curation_at: state.last_curation_at.clone(),
        next_maybe_at: rfc3339(next),
        last_run,
        spend_today_usd: state.spent_today(now).to_string(),
        per_day_max_usd: project.curator.per_day_max.to_string(),
        per_run_max_usd: project.curator.per_run_max.to_string(),
        fail_closed,
        pending: state.pending.len(),
        skills: plan.skills.len(),
        touchable: plan.skills.iter().filter(|s| s.touchable).count(),
        pinned: state.pinned().into_iter().collect(),
        stale,
        archived,
        candidates: plan.candidates,
        warnings,
    })
}

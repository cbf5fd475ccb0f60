//! A curator run (`skillc curate run | maybe`): the plan, then one model call per candidate
//! within the caps, every verdict validated before anything is written, and the end-of-run
//! report. IO (through the journal); the decisions are [`super::select::plan`] and [`decide`].

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Serialize;

use super::budget::{Usd, would_pass};
use super::manual::{Meta, archive_skill, change_body};
use super::model::{self, Request, RequestSkill, Verdict};
use super::select::{self, Candidate, Marks, Plan, SkillStatus};
use super::{CurateError, Found, Project, Session, diff, discover, peek, read_events, roots};
use crate::events::{self, Action, CuratorKind, Event, Kind, Reason, Trigger, rfc3339};
use crate::model::Mode;
use crate::skill::validate::{self, Context};

pub use super::status::{StatusReport, status};

/// How a run was asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Plan only: no model call, no event, no state change, no file moved.
    pub dry_run: bool,
    /// What started it (`maybe` also checks the interval).
    pub trigger: Trigger,
}

/// An action a run took.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Done {
    /// `archive`, `consolidate` or `edit` (a consolidation's archived members are `archive`
    /// with `into`).
    pub action: Action,
    /// The skill.
    pub skill: String,
    /// Archive: the folder written; edit, consolidate: the previous body's snapshot.
    pub archive_path: String,
    /// A consolidated member: the survivor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub into: Option<String>,
    /// Consolidate: the members merged in.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub consolidated_from: Vec<String>,
    /// Edit: lines added and removed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<(usize, usize)>,
    /// What the confirming call cost (USD).
    pub cost_usd: String,
    /// The model's rationale (first 200 characters; shown, never logged).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rationale: Option<String>,
}

/// A candidate that was considered and left alone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// The candidate's action.
    pub action: &'static str,
    /// Its skills.
    pub skills: Vec<String>,
    /// Why: the model's reason, or what was wrong with its verdict.
    pub reason: String,
    /// What the call cost (USD; `0` when none was made).
    pub cost_usd: String,
}

/// The report of a run (`skillc.curate.run/1`, docs/json.md).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunReport {
    /// `skillc.curate.run/1`.
    pub schema: &'static str,
    /// Shared with the run's events; absent when nothing was recorded.
    pub run_id: Option<String>,
    /// What started it.
    pub trigger: Trigger,
    /// A dry run.
    pub dry_run: bool,
    /// How it ended.
    pub reason: Reason,
    /// The run's spend (USD).
    pub spend_usd: String,
    /// Today's spend, this run included (USD).
    pub spend_today_usd: String,
    /// `per_run_max_usd`.
    pub per_run_max_usd: String,
    /// `per_day_max_usd`.
    pub per_day_max_usd: String,
    /// Model calls attempted.
    pub calls: u32,
    /// The plan's candidates, in order.
    pub candidates: Vec<Candidate>,
    /// What was done.
    pub actions: Vec<Done>,
    /// What was considered and left alone.
    pub skipped: Vec<Skipped>,
    /// Candidates not considered because the run stopped (`reason`).
    pub not_reached: Vec<Candidate>,
    /// Journal entries of an interrupted run, finished or dropped first.
    pub reconciled: Vec<super::journal::Reconciled>,
    /// Warnings (bad event lines, a corrupt state, the model's failure).
    pub warnings: Vec<String>,
}

impl RunReport {
    fn new(project: &Project, options: RunOptions) -> RunReport {
        let cfg = &project.curator;
        RunReport {
            schema: "skillc.curate.run/1",
            run_id: None,
            trigger: options.trigger,
            dry_run: options.dry_run,
            reason: Reason::NoCandidates,
            spend_usd: Usd::ZERO.to_string(),
            spend_today_usd: Usd::ZERO.to_string(),
            per_run_max_usd: cfg.per_run_max.to_string(),
            per_day_max_usd: cfg.per_day_max.to_string(),
            calls: 0,
            candidates: Vec::new(),
            actions: Vec::new(),
            skipped: Vec::new(),
            not_reached: Vec::new(),
            reconciled: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

/// The plan of the project as of `now`.
pub(super) fn make_plan(
    project: &Project,
    found: &[Found],
    events: &[Event],
    state: &super::state::State,
    fail_closed: bool,
    now: Timestamp,
) -> Plan {
    let pinned = state.pinned();
    let curator_generated = state.curator_generated();
    let marks = Marks {
        pinned: &pinned,
        curator_generated: &curator_generated,
        fail_closed,
    };
    let views: Vec<select::SkillView> = found.iter().map(|f| f.view.clone()).collect();
    select::plan(
        &super::observations(events),
        &views,
        &marks,
        &project.curator.policy(),
        now,
    )
}

fn interval_elapsed(project: &Project, now: Timestamp) -> Result<bool, CurateError> {
    let (state, _) = peek(project, &mut Vec::new())?;
    let last = state
        .last_curation_at
        .as_deref()
        .and_then(|t| t.parse::<Timestamp>().ok());
    Ok(last.is_none_or(|t| now.as_second() - t.as_second() >= project.curator.interval_secs))
}

/// Runs the curator once (see [`RunOptions`]): `disabled`, `interval_not_elapsed` (maybe)
/// and `busy` end it before anything is written.
///
/// # Errors
/// [`CurateError`] when the state, the skills roots or the log cannot be read or written.
pub fn run(project: &Project, options: RunOptions, now: Timestamp) -> Result<RunReport, CurateError> {
    let mut report = RunReport::new(project, options);
    if !project.curator.enabled {
        report.reason = Reason::Disabled;
        return Ok(report);
    }
    if options.trigger == Trigger::Maybe && !interval_elapsed(project, now)? {
        report.reason = Reason::IntervalNotElapsed;
        return Ok(report);
    }
    let roots = roots(project);
    if options.dry_run {
        let (state, fail_closed) = peek(project, &mut report.warnings)?;
        let found = discover(project, &roots)?;
        let events = read_events(project, &mut report.warnings)?;
        report.candidates = make_plan(project, &found, &events, &state, fail_closed, now).candidates;
        report.spend_today_usd = state.spent_today(now).to_string();
        report.reason = if report.candidates.is_empty() {
            Reason::NoCandidates
        } else {
            Reason::Completed
        };
        return Ok(report);
    }
    let session = match Session::open(project, &roots, now) {
        Err(CurateError::Busy(why)) => {
            report.reason = Reason::Busy;
            report.warnings.push(why);
            return Ok(report);
        }
        other => other?,
    };
    let found = discover(project, &roots)?;
    let mut warnings = session.warnings.clone();
    let events = read_events(project, &mut warnings)?;
    let plan = make_plan(project, &found, &events, &session.state, session.fail_closed, now);
    let started = events
        .iter()
        .filter(|e| matches!(e.kind, Kind::RunStarted { .. }))
        .count();
    let run_id = format!("{}-{}", super::store::compact(now), started + 1);
    report.run_id = Some(run_id.clone());
    report.reconciled = session.reconciled.clone();
    report.warnings = warnings;
    report.candidates = plan.candidates.clone();
    let record =
        |kind: Kind| events::record(&project.root, &Event::new(now, kind)).map_err(|e| CurateError::Io(e.to_string()));
    record(Kind::RunStarted {
        run_id: run_id.clone(),
        trigger: options.trigger,
        candidates: u32::try_from(plan.candidates.len()).unwrap_or(u32::MAX),
    })?;
    let mut r = Runner {
        s: session,
        found: &found,
        status: plan.skills.iter().map(|s| (s.name.clone(), s)).collect(),
        now,
        run_id: run_id.clone(),
        spend: Usd::ZERO,
        stopped: None,
        report,
    };
    for c in &plan.candidates {
        r.consider(c)?;
    }
    let Runner {
        mut s,
        mut report,
        spend,
        stopped,
        ..
    } = r;
    report.reason = stopped.unwrap_or(if plan.candidates.is_empty() {
        Reason::NoCandidates
    } else {
        Reason::Completed
    });
    report.spend_usd = spend.to_string();
    report.spend_today_usd = s.state.spent_today(now).to_string();
    record(Kind::RunFinished {
        run_id,
        reason: report.reason,
        spend: spend.to_string(),
        actions: u32::try_from(report.actions.len()).unwrap_or(u32::MAX),
        calls: report.calls,
    })?;
    s.state.last_curation_at = Some(rfc3339(now));
    s.save()?;
    Ok(report)
}

/// What a valid verdict asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Decision {
    Skip(String),
    Archive,
    Consolidate {
        survivor: String,
        archive: Vec<String>,
        text: String,
    },
    Edit {
        text: String,
        lines: (usize, usize),
    },
}

struct Runner<'a, 'p> {
    s: Session<'p>,
    found: &'a [Found],
    status: BTreeMap<String, &'a SkillStatus>,
    now: Timestamp,
    run_id: String,
    spend: Usd,
    stopped: Option<Reason>,
    report: RunReport,
}

impl Runner<'_, '_> {
    fn find(&self, name: &str) -> Option<&Found> {
        self.found
            .iter()
            .find(|f| f.view.name == name && f.view.blocked.is_none())
    }

    fn skip(&mut self, c: &Candidate, reason: String, cost: Usd) {
        self.report.skipped.push(Skipped {
            action: c.action(),
            skills: c.skills().into_iter().map(str::to_owned).collect(),
            reason,
            cost_usd: cost.to_string(),
        });
    }

    fn consider(&mut self, c: &Candidate) -> Result<(), CurateError> {
        if self.stopped.is_some() {
            self.report.not_reached.push(c.clone());
            return Ok(());
        }
        let project = self.s.project;
        let Some(model_cfg) = &project.curator.model else {
            self.stopped = Some(Reason::ModelUnavailable);
            self.report.warnings.push("no `[curator] model` is configured".into());
            self.report.not_reached.push(c.clone());
            return Ok(());
        };
        let request = match self.request(c, model_cfg.max_output_tokens) {
            Ok(r) => r,
            Err(why) => {
                self.skip(c, why, Usd::ZERO);
                return Ok(());
            }
        };
        let payload = model::payload(model_cfg, &request);
        let estimate = model::estimate(model_cfg, &project.curator.pricing, &payload);
        let cfg = &project.curator;
        let day = self.s.state.spent_today(self.now);
        if let Some(cap) = would_pass(estimate, self.spend, day, cfg.per_run_max, cfg.per_day_max) {
            self.stopped = Some(cap);
            self.report.not_reached.push(c.clone());
            return Ok(());
        }
        self.report.calls += 1;
        let answer = match model::call(model_cfg, &cfg.pricing, &project.root, &payload) {
            Ok(a) => a,
            Err(e) => {
                self.stopped = Some(Reason::ModelUnavailable);
                self.report.warnings.push(e.0);
                self.report.not_reached.push(c.clone());
                return Ok(());
            }
        };
        self.spend = self.spend.plus(answer.cost);
        self.s.state.add_spend(self.now, answer.cost);
        self.s.save()?;
        let verdict = answer.verdict.clone();
        let rationale = verdict.as_ref().ok().and_then(|v| v.rationale.clone());
        let limit = project.skill_md_bytes;
        match verdict.and_then(|v| decide(c, &v, self.found, limit)) {
            Err(why) => self.skip(c, format!("invalid verdict: {why}"), answer.cost),
            Ok(Decision::Skip(why)) => self.skip(c, format!("the model skipped it: {why}"), answer.cost),
            Ok(d) => {
                let meta = Meta {
                    run_id: Some(self.run_id.clone()),
                    kind: CuratorKind::Llm,
                    model: Some(model_cfg.name.clone()),
                    cost: answer.cost,
                    origin: None,
                    now: self.now,
                };
                self.apply(c, d, meta, rationale)?;
            }
        }
        Ok(())
    }

    fn apply(
        &mut self,
        c: &Candidate,
        d: Decision,
        mut meta: Meta,
        rationale: Option<String>,
    ) -> Result<(), CurateError> {
        let rationale = rationale.map(|r| r.chars().take(200).collect::<String>());
        let done = |action, skill: &str, archive_path: String, cost: Usd| Done {
            action,
            skill: skill.to_owned(),
            archive_path,
            into: None,
            consolidated_from: Vec::new(),
            lines: None,
            cost_usd: cost.to_string(),
            rationale: rationale.clone(),
        };
        let origin = |r: &Self, name: &str| r.status.get(name).map(|s| s.origin);
        match d {
            Decision::Skip(_) => {}
            Decision::Archive => {
                let Some(f) = c.skills().first().and_then(|n| self.find(n)).cloned() else {
                    return Ok(());
                };
                meta.origin = origin(self, &f.view.name);
                match archive_skill(&mut self.s, &f, &meta, None) {
                    Ok(path) => self
                        .report
                        .actions
                        .push(done(Action::Archive, &f.view.name, path, meta.cost)),
                    Err(e) => self.skip(c, format!("could not archive: {e}"), meta.cost),
                }
            }
            Decision::Edit { text, lines } => {
                let Some(f) = c.skills().first().and_then(|n| self.find(n)).cloned() else {
                    return Ok(());
                };
                meta.origin = origin(self, &f.view.name);
                match change_body(&mut self.s, &f, &text, &meta, Action::Edit, Vec::new()) {
                    Ok(path) => {
                        let mut d = done(Action::Edit, &f.view.name, path, meta.cost);
                        d.lines = Some(lines);
                        self.report.actions.push(d);
                    }
                    Err(e) => self.skip(c, format!("could not edit: {e}"), meta.cost),
                }
            }
            Decision::Consolidate {
                survivor,
                archive,
                text,
            } => {
                let Some(f) = self.find(&survivor).cloned() else {
                    return Ok(());
                };
                meta.origin = Some(events::Origin::CuratorGenerated);
                let path = match change_body(&mut self.s, &f, &text, &meta, Action::Consolidate, archive.clone()) {
                    Ok(p) => p,
                    Err(e) => {
                        self.skip(
                            c,
                            format!("could not rewrite the survivor `{survivor}`: {e}"),
                            meta.cost,
                        );
                        return Ok(());
                    }
                };
                let mut d = done(Action::Consolidate, &survivor, path, meta.cost);
                d.consolidated_from = archive.clone();
                self.report.actions.push(d);
                // The call's cost is on the survivor's event; the archived members cost nothing more.
                meta.cost = Usd::ZERO;
                for m in &archive {
                    let Some(g) = self.find(m).cloned() else { continue };
                    meta.origin = origin(self, m);
                    match archive_skill(&mut self.s, &g, &meta, Some(survivor.clone())) {
                        Ok(p) => {
                            let mut d = done(Action::Archive, m, p, Usd::ZERO);
                            d.into = Some(survivor.clone());
                            self.report.actions.push(d);
                        }
                        Err(e) => self.skip(c, format!("could not archive `{m}` into `{survivor}`: {e}"), Usd::ZERO),
                    }
                }
            }
        }
        Ok(())
    }

    fn request(&self, c: &Candidate, max_output_tokens: u32) -> Result<Request, String> {
        let mut skills = Vec::new();
        let whole = !matches!(c, Candidate::Archive { .. });
        for name in c.skills() {
            let f = self
                .find(name)
                .ok_or_else(|| format!("`{name}` is no longer in its skills root"))?;
            let st = self.status.get(name);
            let text = f.text.clone().unwrap_or_default();
            skills.push(RequestSkill {
                name: name.to_owned(),
                description: f.view.description.clone(),
                body_excerpt: (!whole).then(|| f.body().trim_start().chars().take(500).collect()),
                body_first_line: whole.then(|| body_line(f) + 1),
                skill_md: whole.then_some(text),
                last_loaded_at: st.and_then(|s| s.last_loaded_at.clone()),
                inactive_days: st.and_then(|s| s.inactive_days),
                loads_in_window: st.map_or(0, |s| s.loads_in_window),
            });
        }
        let (task, instructions, answer) = super::prompts::task(c);
        let failures = match c {
            Candidate::Edit {
                loads,
                failed_loads,
                failure_rate,
                failed_tools,
                ..
            } => Some(serde_json::json!({
                "loads": loads, "failed_loads": failed_loads, "failure_rate": failure_rate, "tools": failed_tools,
            })),
            _ => None,
        };
        Ok(Request {
            schema: model::REQUEST_SCHEMA,
            task,
            instructions,
            answer,
            max_output_tokens,
            skills,
            failures,
        })
    }
}

/// Lines before the body (the frontmatter and its fences).
fn body_line(f: &Found) -> usize {
    let t = f.text.as_deref().unwrap_or("");
    t.get(..f.body_start.unwrap_or(0)).unwrap_or("").matches('\n').count()
}

/// Checks that `new` (a whole SKILL.md replacing `f`'s) keeps the frontmatter byte for byte,
/// stays under `limit` bytes and adds no error `skillc check` would report.
fn check_text(f: &Found, new: &str, limit: u64) -> Result<(), String> {
    if new.len() as u64 > limit {
        return Err(format!("the new SKILL.md is {} bytes; the limit is {limit}", new.len()));
    }
    let old = f.text.as_deref().unwrap_or("");
    let start = f.body_start.unwrap_or(0);
    if old.get(..start) != new.get(..start) {
        return Err("it changes the frontmatter".into());
    }
    let folder = f
        .dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ctx = Context {
        dir_name: &folder,
        mode: Mode::Default,
    };
    let errors = |text: &str| -> BTreeMap<&'static str, String> {
        validate::analyze("SKILL.md", text.as_bytes(), &ctx)
            .diagnostics
            .into_iter()
            .filter(|d| d.severity == crate::diag::Severity::Error)
            .map(|d| (d.rule.code, d.message))
            .collect()
    };
    let before = errors(old);
    let after = validate::analyze("SKILL.md", new.as_bytes(), &ctx);
    if after.body.map(|b| b.start) != f.body_start {
        return Err("it changes where the frontmatter ends".into());
    }
    if let Some((code, message)) = errors(new).into_iter().find(|(c, _)| !before.contains_key(c)) {
        return Err(format!("the new SKILL.md fails `skillc check` ({code}: {message})"));
    }
    Ok(())
}

/// Validates a verdict against its candidate (RUNTIME.md §3): the action matches the task
/// (or is `skip`); a consolidation's survivor is a member, its archived members are other
/// members, at least one, each once, and its new body keeps the frontmatter; an edit's diff is
/// one hunk that applies to the body only. Anything else is an error: the candidate is
/// skipped and nothing is written.
///
/// # Errors
/// What is wrong with the verdict.
pub(super) fn decide(c: &Candidate, v: &Verdict, found: &[Found], limit: u64) -> Result<Decision, String> {
    let find = |n: &str| found.iter().find(|f| f.view.name == n && f.view.blocked.is_none());
    match (c, v.action.as_str()) {
        (_, "skip") => Ok(Decision::Skip(
            v.reason
                .clone()
                .or_else(|| v.rationale.clone())
                .unwrap_or_else(|| "no reason given".into()),
        )),
        (Candidate::Archive { .. }, "archive") => Ok(Decision::Archive),
        (Candidate::Consolidate { skills, .. }, "consolidate") => {
            let survivor = v.survivor.clone().ok_or("no `survivor`")?;
            if !skills.contains(&survivor) {
                return Err(format!("the survivor `{survivor}` is not in the cluster"));
            }
            let archive = v.archive.clone().unwrap_or_default();
            if archive.is_empty() {
                return Err("`archive` lists no member".into());
            }
            let mut seen = std::collections::BTreeSet::new();
            for m in &archive {
                if m == &survivor {
                    return Err(format!("`{m}` is both the survivor and archived"));
                }
                if !skills.contains(m) {
                    return Err(format!("`{m}` is archived but not in the cluster"));
                }
                if !seen.insert(m) {
                    return Err(format!("`{m}` is listed twice"));
                }
            }
            let f = find(&survivor).ok_or("the survivor is gone")?;
            let body = v
                .body
                .clone()
                .filter(|b| !b.trim().is_empty())
                .ok_or("no new `body` for the survivor")?;
            let text = format!(
                "{}{}{}",
                f.text
                    .as_deref()
                    .unwrap_or("")
                    .get(..f.body_start.unwrap_or(0))
                    .unwrap_or(""),
                body,
                if body.ends_with('\n') { "" } else { "\n" }
            );
            check_text(f, &text, limit)?;
            Ok(Decision::Consolidate {
                survivor,
                archive,
                text,
            })
        }
        (Candidate::Edit { skill, .. }, "edit") => {
            let f = find(skill).ok_or("the skill is gone")?;
            let hunk = diff::parse(v.diff.as_deref().ok_or("no `diff`")?)?;
            let text = diff::apply(f.text.as_deref().unwrap_or(""), body_line(f), &hunk)?;
            check_text(f, &text, limit)?;
            Ok(Decision::Edit {
                text,
                lines: hunk.counts(),
            })
        }
        (c, other) => Err(format!(
            "`action` is `{other}`; a {} request answers `{}` or `skip`",
            c.action(),
            c.action()
        )),
    }
}

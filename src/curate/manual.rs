//! The manual actions — `pin`, `unpin`, `archive`, `restore [--before]`, `list-archived` —
//! and the two file actions runs share with them: [`archive_skill`] (also what `skillc
//! remove` needs) and [`change_body`]. IO, through the journal.
//!
//! Restore never guesses: it uses the archive path (or snapshot) recorded in state.json, never
//! a name prefix, and refuses — changing nothing — when that folder was removed by hand or the
//! name is taken again.

use jiff::Timestamp;
use serde::Serialize;

use super::budget::Usd;
use super::journal::Reconciled;
use super::state::{Op, Pending};
use super::{CurateError, Found, Project, Session, discover, peek, roots, store};
use crate::events::{Action, Curated, CuratorKind, Origin, rfc3339};
use crate::model::Mode;
use crate::skill::validate::{self, Context};

/// Who asks for an action, and what its event records.
#[derive(Clone, Debug)]
pub(super) struct Meta {
    pub run_id: Option<String>,
    pub kind: CuratorKind,
    pub model: Option<String>,
    pub cost: Usd,
    pub origin: Option<Origin>,
    pub now: Timestamp,
}

impl Meta {
    fn manual(now: Timestamp) -> Meta {
        Meta {
            run_id: None,
            kind: CuratorKind::Manual,
            model: None,
            cost: Usd::ZERO,
            origin: None,
            now,
        }
    }

    fn event(&self, skill: &str, action: Action) -> Curated {
        Curated {
            run_id: self.run_id.clone(),
            skill: skill.to_owned(),
            action,
            kind: self.kind,
            model: self.model.clone(),
            cost_usd: self.cost.to_string(),
            version_before: None,
            version_after: None,
            archive_path: None,
            consolidated_from: Vec::new(),
            into: None,
        }
    }
}

/// Moves a skill's folder into its root's archive root as `<name>-<time>` (another name when
/// taken), records the path, and appends its `skill.curated` (`into`: the survivor of a
/// consolidation). Returns the archive path as recorded.
///
/// # Errors
/// [`CurateError`] when the skill has no archive root or the move or a record fails.
pub(super) fn archive_skill(
    s: &mut Session<'_>,
    f: &Found,
    meta: &Meta,
    into: Option<String>,
) -> Result<String, CurateError> {
    let archive_root = s.roots[f.root].archive.clone().map_err(CurateError::Refused)?;
    let name = &f.view.name;
    let to = store::unique_in(&archive_root, &format!("{name}-{}", store::compact(meta.now)));
    let root = &s.project.root;
    let to_shown = store::shown(root, &to);
    let mut event = meta.event(name, Action::Archive);
    event.version_before = Some(Found::version(f.body()));
    event.archive_path = Some(to_shown.clone());
    event.into = into;
    let p = Pending {
        at: rfc3339(meta.now),
        origin: meta.origin,
        op: Op::Move {
            from: store::shown(root, &f.dir),
            to: to_shown.clone(),
        },
        event,
    };
    s.execute(p, || store::move_dir(&f.dir, &to))?;
    Ok(to_shown)
}

/// Replaces a skill's SKILL.md with `new_text` (its frontmatter unchanged, checked by the
/// caller), keeping the previous file as `<archive root>/<name>-edit-<time>/SKILL.md`.
/// Returns the snapshot's path as recorded.
///
/// # Errors
/// [`CurateError`] when the skill has no archive root or a write fails.
pub(super) fn change_body(
    s: &mut Session<'_>,
    f: &Found,
    new_text: &str,
    meta: &Meta,
    action: Action,
    consolidated_from: Vec<String>,
) -> Result<String, CurateError> {
    let archive_root = s.roots[f.root].archive.clone().map_err(CurateError::Refused)?;
    let old = f.text.clone().unwrap_or_default();
    let name = &f.view.name;
    let snapshot = store::unique_in(&archive_root, &format!("{name}-edit-{}", store::compact(meta.now)));
    let root = &s.project.root;
    let shown = store::shown(root, &snapshot);
    let new_body = new_text.get(f.body_start.unwrap_or(0)..).unwrap_or("");
    let mut event = meta.event(name, action);
    event.version_before = Some(Found::version(f.body()));
    event.version_after = Some(Found::version(new_body));
    event.archive_path = Some(shown.clone());
    event.consolidated_from = consolidated_from;
    let p = Pending {
        at: rfc3339(meta.now),
        origin: meta.origin,
        op: Op::Body {
            file: store::shown(root, &f.md),
            snapshot: shown.clone(),
            sha256_after: crate::util::sha256(new_text.as_bytes()),
        },
        event,
    };
    s.execute(p, || {
        store::write_snapshot(&snapshot, old.as_bytes())?;
        store::write_durable(&f.md, new_text.as_bytes())
    })?;
    Ok(shown)
}

/// What a manual action did.
#[derive(Clone, Debug, Serialize)]
pub struct ActionReport {
    /// `skillc.curate.action/1`.
    pub schema: &'static str,
    /// The action.
    pub action: Action,
    /// The skill.
    pub skill: String,
    /// Whether anything changed (pinning a pinned skill changes nothing).
    pub changed: bool,
    /// Archive: where the folder went; restore: where it came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archive_path: Option<String>,
    /// Restore: where the folder is again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restored_to: Option<String>,
    /// Restore --before: the snapshot of the body that was replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
    /// Journal entries of an interrupted run finished or dropped first.
    pub reconciled: Vec<Reconciled>,
    /// Warnings.
    pub warnings: Vec<String>,
}

impl ActionReport {
    fn new(action: Action, skill: &str, s: &Session<'_>) -> ActionReport {
        ActionReport {
            schema: "skillc.curate.action/1",
            action,
            skill: skill.to_owned(),
            changed: true,
            archive_path: None,
            restored_to: None,
            snapshot: None,
            reconciled: s.reconciled.clone(),
            warnings: s.warnings.clone(),
        }
    }
}

fn open<'a>(project: &'a Project, roots: &[super::Root], now: Timestamp) -> Result<Session<'a>, CurateError> {
    let s = Session::open(project, roots, now)?;
    if s.fail_closed {
        return Err(CurateError::Refused(s.warnings.join("; ")));
    }
    Ok(s)
}

fn not_found(name: &str) -> CurateError {
    CurateError::NotFound(format!("no skill named `{name}` in the skills roots"))
}

fn find<'f>(found: &'f [Found], name: &str) -> Result<&'f Found, CurateError> {
    let f = found
        .iter()
        .find(|f| f.view.name == name)
        .ok_or_else(|| not_found(name))?;
    match &f.view.blocked {
        Some(why) => Err(CurateError::Refused(format!("cannot act on `{name}`: {why}"))),
        None => Ok(f),
    }
}

fn mark(project: &Project, name: &str, now: Timestamp, pinned: bool) -> Result<ActionReport, CurateError> {
    let roots = roots(project);
    let mut s = open(project, &roots, now)?;
    let found = discover(project, &roots)?;
    if !found.iter().any(|f| f.view.name == name) && !s.state.skills.contains_key(name) {
        return Err(not_found(name));
    }
    let action = if pinned { Action::Pin } else { Action::Unpin };
    let mut report = ActionReport::new(action, name, &s);
    if s.state.skills.get(name).is_some_and(|k| k.pinned) == pinned {
        report.changed = false;
        return Ok(report);
    }
    let meta = Meta::manual(now);
    let p = Pending {
        at: rfc3339(now),
        origin: None,
        op: Op::Mark,
        event: meta.event(name, action),
    };
    s.execute(p, || Ok(()))?;
    Ok(report)
}

/// Pins a skill: no run touches it until it is unpinned.
///
/// # Errors
/// [`CurateError`]: no such skill, busy, state kept aside, IO.
pub fn pin(project: &Project, name: &str, now: Timestamp) -> Result<ActionReport, CurateError> {
    mark(project, name, now, true)
}

/// Unpins a skill.
///
/// # Errors
/// As [`pin`].
pub fn unpin(project: &Project, name: &str, now: Timestamp) -> Result<ActionReport, CurateError> {
    mark(project, name, now, false)
}

/// Archives a skill now, whoever wrote it (an explicit decision: no model call); refused for
/// a pinned skill. What `skillc remove` does.
///
/// # Errors
/// [`CurateError`]: no such skill, pinned, busy, state kept aside, IO.
pub fn archive(project: &Project, name: &str, now: Timestamp) -> Result<ActionReport, CurateError> {
    let roots = roots(project);
    let mut s = open(project, &roots, now)?;
    let found = discover(project, &roots)?;
    let f = find(&found, name)?;
    if s.state.skills.get(name).is_some_and(|k| k.pinned) {
        return Err(CurateError::Refused(format!(
            "`{name}` is pinned; unpin it first (skillc curate unpin {name})"
        )));
    }
    let mut report = ActionReport::new(Action::Archive, name, &s);
    report.archive_path = Some(archive_skill(&mut s, f, &Meta::manual(now), None)?);
    Ok(report)
}

/// Restores an archived skill to the folder it was archived from (`before: None`), or its
/// body as it was before `before` (the earliest snapshot taken at or after that time).
///
/// # Errors
/// [`CurateError`]: not archived / no such snapshot, the archive removed by hand, the name
/// taken again, busy, state kept aside, IO. A refusal changes nothing.
pub fn restore(
    project: &Project,
    name: &str,
    before: Option<Timestamp>,
    now: Timestamp,
) -> Result<ActionReport, CurateError> {
    let roots = roots(project);
    let mut s = open(project, &roots, now)?;
    let found = discover(project, &roots)?;
    match before {
        None => restore_folder(&mut s, &found, name, now),
        Some(t) => restore_body(&mut s, &found, name, t, now),
    }
}

fn restore_folder(
    s: &mut Session<'_>,
    found: &[Found],
    name: &str,
    now: Timestamp,
) -> Result<ActionReport, CurateError> {
    let root = s.project.root.clone();
    let entry = s.state.skills.get(name).cloned().unwrap_or_default();
    let Some(archive_path) = entry.archive_path.clone() else {
        return Err(CurateError::NotFound(format!(
            "`{name}` is not archived (skillc curate list-archived lists what is)"
        )));
    };
    let from = store::resolve(&root, &archive_path);
    if !from.join("SKILL.md").is_file() && !from.join("skill.md").is_file() {
        return Err(CurateError::Refused(format!(
            "cannot restore `{name}`: its archive {archive_path} no longer exists (removed by hand?); nothing was changed"
        )));
    }
    let to = match &entry.path {
        Some(p) => store::resolve(&root, p),
        None => s
            .roots
            .first()
            .map(|r| r.dir.join(name))
            .ok_or_else(|| not_found(name))?,
    };
    let taken = found.iter().find(|f| f.view.name == name).map(|f| f.view.path.clone());
    if let Some(by) = taken.or_else(|| to.symlink_metadata().is_ok().then(|| store::shown(&root, &to))) {
        return Err(CurateError::Refused(format!(
            "cannot restore `{name}`: the name is taken again by {by}; rename or archive that skill first"
        )));
    }
    let mut report = ActionReport::new(Action::Restore, name, s);
    let mut event = Meta::manual(now).event(name, Action::Restore);
    event.archive_path = Some(archive_path.clone());
    let to_shown = store::shown(&root, &to);
    let p = Pending {
        at: rfc3339(now),
        origin: None,
        op: Op::Move {
            from: archive_path.clone(),
            to: to_shown.clone(),
        },
        event,
    };
    s.execute(p, || store::move_dir(&from, &to))?;
    report.archive_path = Some(archive_path);
    report.restored_to = Some(to_shown);
    Ok(report)
}

fn restore_body(
    s: &mut Session<'_>,
    found: &[Found],
    name: &str,
    before: Timestamp,
    now: Timestamp,
) -> Result<ActionReport, CurateError> {
    let f = find(found, name)?;
    let snapshots = s
        .state
        .skills
        .get(name)
        .map(|k| k.snapshots.clone())
        .unwrap_or_default();
    let chosen = snapshots
        .iter()
        .filter_map(|snap| snap.at.parse::<Timestamp>().ok().map(|t| (t, snap)))
        .filter(|(t, _)| *t >= before)
        .min_by_key(|(t, _)| *t)
        .map(|(_, snap)| snap.clone())
        .ok_or_else(|| {
            CurateError::NotFound(format!(
                "`{name}` has no body snapshot taken at or after {} (skillc curate list-archived lists them)",
                rfc3339(before)
            ))
        })?;
    let file = store::resolve(&s.project.root, &chosen.path).join("SKILL.md");
    let Ok(old) = std::fs::read_to_string(&file) else {
        return Err(CurateError::Refused(format!(
            "cannot restore `{name}`: its snapshot {} no longer exists (removed by hand?); nothing was changed",
            chosen.path
        )));
    };
    let ctx = Context {
        dir_name: name,
        mode: Mode::Default,
    };
    let old_body_start = validate::analyze("SKILL.md", old.as_bytes(), &ctx)
        .body
        .map_or(0, |b| b.start);
    let current = f.text.as_deref().unwrap_or("");
    let front = current.get(..f.body_start.unwrap_or(0)).unwrap_or("");
    let new_text = format!("{front}{}", old.get(old_body_start..).unwrap_or(""));
    let mut report = ActionReport::new(Action::Restore, name, s);
    if new_text == current {
        report.changed = false;
        return Ok(report);
    }
    report.snapshot = Some(change_body(
        s,
        f,
        &new_text,
        &Meta::manual(now),
        Action::Restore,
        Vec::new(),
    )?);
    report.archive_path = Some(chosen.path);
    Ok(report)
}

/// One archived folder or body snapshot the state records.
#[derive(Clone, Debug, Serialize)]
pub struct ArchivedEntry {
    /// The skill.
    pub skill: String,
    /// `archive` (the whole folder) or `snapshot` (a previous SKILL.md).
    pub kind: &'static str,
    /// The folder.
    pub path: String,
    /// When it was archived, or when the body was changed.
    pub at: Option<String>,
    /// An archive: `restore NAME` would bring this one back.
    pub current: bool,
    /// An earlier archive: when it was restored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restored_at: Option<String>,
    /// Whether the folder is still there.
    pub exists: bool,
}

/// `skillc curate list-archived`.
#[derive(Clone, Debug, Serialize)]
pub struct ArchivedList {
    /// `skillc.curate.archived/1`.
    pub schema: &'static str,
    /// By skill, then time.
    pub entries: Vec<ArchivedEntry>,
    /// Warnings (a corrupt state).
    pub warnings: Vec<String>,
}

/// Every archive and snapshot the state records (read-only).
///
/// # Errors
/// [`CurateError::State`] when the state cannot be read.
pub fn list_archived(project: &Project) -> Result<ArchivedList, CurateError> {
    let mut warnings = Vec::new();
    let (state, _) = peek(project, &mut warnings)?;
    let exists = |p: &str| store::resolve(&project.root, p).is_dir();
    let mut entries = Vec::new();
    for (name, k) in &state.skills {
        let mut mine = Vec::new();
        for e in &k.earlier_archives {
            mine.push(ArchivedEntry {
                skill: name.clone(),
                kind: "archive",
                path: e.archive_path.clone(),
                at: e.archived_at.clone(),
                current: false,
                restored_at: e.restored_at.clone(),
                exists: exists(&e.archive_path),
            });
        }
        if let Some(p) = &k.archive_path {
            mine.push(ArchivedEntry {
                skill: name.clone(),
                kind: "archive",
                path: p.clone(),
                at: k.archived_at.clone(),
                current: true,
                restored_at: None,
                exists: exists(p),
            });
        }
        for snap in &k.snapshots {
            mine.push(ArchivedEntry {
                skill: name.clone(),
                kind: "snapshot",
                path: snap.path.clone(),
                at: Some(snap.at.clone()),
                current: false,
                restored_at: None,
                exists: exists(&snap.path),
            });
        }
        mine.sort_by(|a, b| (&a.at, a.kind, &a.path).cmp(&(&b.at, b.kind, &b.path)));
        entries.extend(mine);
    }
    Ok(ArchivedList {
        schema: "skillc.curate.archived/1",
        entries,
        warnings,
    })
}

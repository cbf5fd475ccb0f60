//! Crash safety: every action is written ahead into state.json's `pending` journal before its
//! file operation, then the operation is done, then its `skill.curated` event appended, then
//! the state changed and the entry removed (seed 002 §11.8: "the sidecar JSON is the last
//! thing updated"). A run killed anywhere in between leaves an entry the next run (or
//! mutating command) reconciles from what is on disk: a move whose destination exists, or a
//! body whose hash is the new one, is finished (its event appended unless the log already
//! has it, its state changed); anything else is dropped, and nothing is done twice. IO.

use std::path::Path;

use jiff::Timestamp;
use serde::Serialize;

use super::state::{ArchiveRecord, Op, Pending, Snapshot, State};
use super::store;
use super::{CurateError, Session};
use crate::events::{self, Action, Event, Kind, Origin};

/// Environment variable of the crash-test hook: `after-move` (or `after-event`) aborts the
/// process right after the first action's file operation (or its event), as a kill would.
/// Documented for tests only; it does nothing unless set to one of those values.
pub const FAULT_ENV: &str = "SKILLC_CURATOR_FAULT";

fn fault(point: &str) {
    if std::env::var(FAULT_ENV).is_ok_and(|v| v == point) {
        std::process::abort();
    }
}

/// What reconciling one journal entry did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Reconciled {
    /// The action.
    pub action: Action,
    /// The skill.
    pub skill: String,
    /// `finished` (the file operation had happened) or `dropped` (it had not).
    pub outcome: &'static str,
    /// What was found.
    pub detail: String,
}

/// The time of a journal entry.
pub fn at(p: &Pending) -> Timestamp {
    p.at.parse().unwrap_or(Timestamp::UNIX_EPOCH)
}

/// Applies a finished action to the state.
pub fn settle(state: &mut State, p: &Pending) {
    let e = &p.event;
    let s = state.skills.entry(e.skill.clone()).or_default();
    if let Some(o) = p.origin {
        s.origin = Some(o);
    }
    match (&p.op, e.action) {
        (_, Action::Pin) => {
            s.pinned = true;
            s.pinned_at = Some(p.at.clone());
        }
        (_, Action::Unpin) => {
            s.pinned = false;
            s.pinned_at = None;
        }
        (Op::Move { from, to }, Action::Archive) => {
            if let Some(old) = s.archive_path.take() {
                s.earlier_archives.push(ArchiveRecord {
                    archive_path: old,
                    archived_at: s.archived_at.take(),
                    restored_at: None,
                });
            }
            s.archive_path = Some(to.clone());
            s.archived_at = Some(p.at.clone());
            s.path = Some(from.clone());
        }
        (Op::Move { .. }, Action::Restore) => {
            if let Some(old) = s.archive_path.take() {
                s.earlier_archives.push(ArchiveRecord {
                    archive_path: old,
                    archived_at: s.archived_at.take(),
                    restored_at: Some(p.at.clone()),
                });
            }
        }
        (Op::Body { snapshot, .. }, action) => {
            s.snapshots.push(Snapshot {
                at: p.at.clone(),
                path: snapshot.clone(),
            });
            if action == Action::Consolidate {
                for m in &e.consolidated_from {
                    if !s.consolidated_from.contains(m) {
                        s.consolidated_from.push(m.clone());
                    }
                }
                s.origin = Some(Origin::CuratorGenerated);
            }
        }
        _ => {}
    }
}

impl Session<'_> {
    /// Runs one action through the journal: records `p`, does `op`, appends the event,
    /// changes the state. When `op` fails the entry is removed and nothing else happens.
    ///
    /// # Errors
    /// [`CurateError`] when `op`, the event or a state write fails.
    pub(super) fn execute(&mut self, p: Pending, op: impl FnOnce() -> std::io::Result<()>) -> Result<(), CurateError> {
        self.state.pending.push(p.clone());
        self.save()?;
        if let Err(e) = op() {
            self.state.pending.retain(|q| q != &p);
            self.save()?;
            return Err(CurateError::Io(e.to_string()));
        }
        fault("after-move");
        events::record(&self.project.root, &Event::new(at(&p), Kind::Curated(p.event.clone())))
            .map_err(|e| CurateError::Io(e.to_string()))?;
        fault("after-event");
        settle(&mut self.state, &p);
        self.state.pending.retain(|q| q != &p);
        self.save()
    }

    /// Finishes or drops every journal entry left by an interrupted run.
    ///
    /// # Errors
    /// [`CurateError`] when the log or the state cannot be written.
    pub(super) fn reconcile(&mut self) -> Result<Vec<Reconciled>, CurateError> {
        if self.state.pending.is_empty() {
            return Ok(Vec::new());
        }
        let root = self.project.root.clone();
        let logged: Vec<events::Curated> = events::read(&events::log_path(&root), events::LOG)
            .map_err(|e| CurateError::Io(e.to_string()))?
            .events
            .into_iter()
            .filter_map(|e| match e.kind {
                Kind::Curated(c) => Some(c),
                _ => None,
            })
            .collect();
        let mut out = Vec::new();
        for p in std::mem::take(&mut self.state.pending) {
            let (done, detail) = happened(&root, &p.op);
            if done {
                if !logged.contains(&p.event) {
                    events::record(&root, &Event::new(at(&p), Kind::Curated(p.event.clone())))
                        .map_err(|e| CurateError::Io(e.to_string()))?;
                }
                settle(&mut self.state, &p);
            } else if let Op::Body { file, snapshot, .. } = &p.op {
                remove_redundant_snapshot(&store::resolve(&root, file), &store::resolve(&root, snapshot));
            }
            out.push(Reconciled {
                action: p.event.action,
                skill: p.event.skill.clone(),
                outcome: if done { "finished" } else { "dropped" },
                detail,
            });
        }
        self.save()?;
        Ok(out)
    }
}

/// Whether a file operation had happened, and what was found.
fn happened(root: &Path, op: &Op) -> (bool, String) {
    match op {
        Op::Mark => (true, "no file operation".into()),
        Op::Move { from, to } => {
            let (f, t) = (store::resolve(root, from), store::resolve(root, to));
            match (t.exists(), f.exists()) {
                (true, _) => (true, format!("{to} exists: the move was done")),
                (false, true) => (false, format!("{from} is still there: the move was not done")),
                (false, false) => (false, format!("neither {from} nor {to} exists")),
            }
        }
        Op::Body { file, sha256_after, .. } => {
            let now = std::fs::read(store::resolve(root, file)).map(|b| crate::util::sha256(&b));
            if now.as_deref().is_ok_and(|h| h == sha256_after) {
                (true, format!("{file} has the new body"))
            } else {
                (false, format!("{file} still has its previous body"))
            }
        }
    }
}

/// Removes a snapshot folder written before a body change that did not happen, when it only
/// holds a copy of the current SKILL.md (nothing of value is lost).
fn remove_redundant_snapshot(file: &Path, snapshot: &Path) {
    let copy = snapshot.join("SKILL.md");
    let only_copy = std::fs::read_dir(snapshot).is_ok_and(|d| d.count() == 1);
    if only_copy && std::fs::read(&copy).ok() == std::fs::read(file).ok() && copy.exists() {
        let _ = std::fs::remove_file(&copy);
        let _ = std::fs::remove_dir(snapshot);
    }
}

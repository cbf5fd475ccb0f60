//! `.skillc/curator/state.json`: the curator's sidecar state (RUNTIME.md §3, "State";
//! FORMATS.md, "Curator state"). Pins, origins, lineage, where each archive went, the edit
//! snapshots, today's spend, and the journal of actions in flight. The types are plain data;
//! [`load`], [`keep_aside`] and [`save`] are the IO.
//!
//! Written atomically and durably (temporary file, `fsync`, rename) on every change. A file
//! that cannot be read as this schema is **corrupt**: a run keeps it aside as
//! `state.json.corrupt-<time>` and treats every skill as pinned (fail closed) for as long as
//! a kept-aside copy is there — removing it (or moving a repaired copy back as `state.json`)
//! lets the curator act again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::budget::Usd;
use crate::events::{Curated, Origin};

/// The folder of the curator's files, relative to the project root.
pub const DIR: &str = ".skillc/curator";

/// The state file's name inside [`DIR`].
pub const FILE: &str = "state.json";

/// The schema this version reads and writes.
pub const SCHEMA_VERSION: u32 = 1;

/// What the curator knows about one skill.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkillState {
    /// Pinned: untouched by every run.
    #[serde(default)]
    pub pinned: bool,
    /// When it was pinned.
    #[serde(default)]
    pub pinned_at: Option<String>,
    /// Its origin when the curator last acted on it.
    #[serde(default)]
    pub origin: Option<Origin>,
    /// The skills merged into it.
    #[serde(default)]
    pub consolidated_from: Vec<String>,
    /// Where it is archived now (`None`: not archived).
    #[serde(default)]
    pub archive_path: Option<String>,
    /// When it was archived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived_at: Option<String>,
    /// The folder it was archived from: where `restore` puts it back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Earlier archives of the same name (restored since, or archived again after a new
    /// skill took the name), oldest first: never forgotten.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier_archives: Vec<ArchiveRecord>,
    /// Previous bodies kept by edits, consolidations and body restores, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub snapshots: Vec<Snapshot>,
}

/// An archive of a skill that is no longer its current one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArchiveRecord {
    /// The archive folder.
    pub archive_path: String,
    /// When it was archived.
    pub archived_at: Option<String>,
    /// When it was restored, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restored_at: Option<String>,
}

/// A previous SKILL.md kept before a body change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    /// When the body was changed (the snapshot holds the body from before this time).
    pub at: String,
    /// The snapshot folder (holding `SKILL.md`).
    pub path: String,
}

/// What one UTC day's model calls cost.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spend {
    /// The UTC day, `2026-05-14`.
    pub day: String,
    /// Dollars, as a decimal string.
    pub usd: String,
}

/// A file operation of an action in flight.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Op {
    /// No file changes (pin, unpin).
    Mark,
    /// A folder renamed from `from` to `to` (archive, restore).
    Move {
        /// The folder before.
        from: String,
        /// The folder after.
        to: String,
    },
    /// `file` rewritten to content of SHA-256 `sha256_after`, its previous content kept in
    /// the snapshot folder `snapshot` (edit, consolidate, restore --before).
    Body {
        /// The SKILL.md.
        file: String,
        /// The snapshot folder.
        snapshot: String,
        /// Hex SHA-256 of the new content.
        sha256_after: String,
    },
}

/// An action in flight: recorded before its file operation, removed once the operation, its
/// event and its state change are all done. The next run (or command) finishes or drops it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pending {
    /// When the action was taken.
    pub at: String,
    /// The skill's origin, recorded in its state.
    #[serde(default)]
    pub origin: Option<Origin>,
    /// The file operation.
    pub op: Op,
    /// The `skill.curated` event that records it.
    pub event: Curated,
}

/// The whole state file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct State {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// When the last run ended.
    #[serde(default)]
    pub last_curation_at: Option<String>,
    /// What today's calls cost (absent: nothing yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spend: Option<Spend>,
    /// Per skill, by name.
    #[serde(default)]
    pub skills: BTreeMap<String, SkillState>,
    /// Actions in flight.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<Pending>,
}

impl Default for State {
    fn default() -> Self {
        State {
            schema_version: SCHEMA_VERSION,
            last_curation_at: None,
            spend: None,
            skills: BTreeMap::new(),
            pending: Vec::new(),
        }
    }
}

/// `2026-05-14`: the UTC day of a time.
pub fn utc_day(now: Timestamp) -> String {
    now.strftime("%Y-%m-%d").to_string()
}

impl State {
    /// What was spent on the UTC day of `now`.
    pub fn spent_today(&self, now: Timestamp) -> Usd {
        match &self.spend {
            Some(s) if s.day == utc_day(now) => Usd::parse(&s.usd).unwrap_or(Usd::ZERO),
            _ => Usd::ZERO,
        }
    }

    /// Adds a call's cost to the day of `now`.
    pub fn add_spend(&mut self, now: Timestamp, cost: Usd) {
        let total = self.spent_today(now).plus(cost);
        self.spend = Some(Spend {
            day: utc_day(now),
            usd: total.to_string(),
        });
    }

    /// Names of pinned skills.
    pub fn pinned(&self) -> std::collections::BTreeSet<String> {
        self.skills
            .iter()
            .filter(|(_, s)| s.pinned)
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// Names the state records as `curator_generated`.
    pub fn curator_generated(&self) -> std::collections::BTreeSet<String> {
        self.skills
            .iter()
            .filter(|(_, s)| s.origin == Some(Origin::CuratorGenerated))
            .map(|(n, _)| n.clone())
            .collect()
    }
}

/// What reading the state found.
#[derive(Clone, Debug)]
pub enum Loaded {
    /// A valid state (absent file: the default).
    Valid(State),
    /// `state.json` is there and corrupt (why).
    Corrupt(String),
    /// A corrupt copy was kept aside earlier and is still there: fail closed.
    KeptAside(PathBuf),
}

/// A state that cannot be used at all.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// Written by a newer skillc.
    #[error("{path} has schema_version {found}; this skillc reads {SCHEMA_VERSION} (upgrade skillc)")]
    Newer {
        /// The file.
        path: String,
        /// Its version.
        found: u64,
    },
    /// The file system failed.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The operating system's message.
        message: String,
    },
}

/// The state file of the project at `root`.
pub fn path(root: &Path) -> PathBuf {
    root.join(DIR).join(FILE)
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> StateError + '_ {
    move |e| StateError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Copies of a corrupt state kept aside, sorted.
pub fn kept_aside(root: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root.join(DIR))
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("state.json.corrupt-"))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Reads the state of the project at `root` (read-only).
///
/// # Errors
/// [`StateError`] when the file cannot be read, or has a newer schema version.
pub fn load(root: &Path) -> Result<Loaded, StateError> {
    let p = path(root);
    let text = match std::fs::read(&p) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(match kept_aside(root).pop() {
                Some(copy) => Loaded::KeptAside(copy),
                None => Loaded::Valid(State::default()),
            });
        }
        Err(e) => return Err(io(&p)(e)),
    };
    let value: serde_json::Value = match serde_json::from_slice(&text) {
        Ok(v) => v,
        Err(e) => return Ok(Loaded::Corrupt(format!("not JSON: {e}"))),
    };
    if let Some(found) = value.get("schema_version").and_then(serde_json::Value::as_u64)
        && found > u64::from(SCHEMA_VERSION)
    {
        return Err(StateError::Newer {
            path: p.display().to_string(),
            found,
        });
    }
    match serde_json::from_value::<State>(value) {
        Ok(s) if s.schema_version == SCHEMA_VERSION => Ok(match kept_aside(root).pop() {
            Some(copy) => Loaded::KeptAside(copy),
            None => Loaded::Valid(s),
        }),
        Ok(s) => Ok(Loaded::Corrupt(format!("unknown schema_version {}", s.schema_version))),
        Err(e) => Ok(Loaded::Corrupt(e.to_string())),
    }
}

/// Renames a corrupt `state.json` to `state.json.corrupt-<time>` and returns the new path.
///
/// # Errors
/// [`StateError::Io`] when the rename fails.
pub fn keep_aside(root: &Path, now: Timestamp) -> Result<PathBuf, StateError> {
    let p = path(root);
    let dir = root.join(DIR);
    let dest = super::store::unique_in(&dir, &format!("{FILE}.corrupt-{}", super::store::compact(now)));
    std::fs::rename(&p, &dest).map_err(io(&p))?;
    super::store::sync_dir(&dir);
    Ok(dest)
}

/// Writes the state atomically and durably.
///
/// # Errors
/// [`StateError::Io`] when the write fails.
pub fn save(root: &Path, state: &State) -> Result<(), StateError> {
    let p = path(root);
    let mut text = serde_json::to_string_pretty(state).map_err(|e| StateError::Io {
        path: p.display().to_string(),
        message: e.to_string(),
    })?;
    text.push('\n');
    super::store::write_durable(&p, text.as_bytes()).map_err(io(&p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_missing_corrupt_and_newer() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert!(matches!(load(root).unwrap(), Loaded::Valid(s) if s == State::default()));
        let mut s = State::default();
        s.skills.entry("a".into()).or_default().pinned = true;
        let now: Timestamp = "2026-05-14T18:30:00Z".parse().unwrap();
        s.add_spend(now, Usd(1500));
        s.add_spend(now, Usd(500));
        save(root, &s).unwrap();
        assert!(matches!(load(root).unwrap(), Loaded::Valid(l) if l == s));
        assert_eq!(s.spent_today(now), Usd(2000));
        assert_eq!(s.spent_today("2026-05-15T00:00:00Z".parse().unwrap()), Usd::ZERO);

        std::fs::write(
            path(root),
            "{\"schema_version\": 1, \"skills\": {\"a\": {\"pinned\": 3}}}",
        )
        .unwrap();
        assert!(matches!(load(root).unwrap(), Loaded::Corrupt(_)));
        let aside = keep_aside(root, now).unwrap();
        assert!(aside.ends_with("state.json.corrupt-20260514T183000Z"));
        assert!(matches!(load(root).unwrap(), Loaded::KeptAside(p) if p == aside));
        std::fs::remove_file(&aside).unwrap();
        std::fs::write(path(root), "{\"schema_version\": 7}").unwrap();
        assert!(matches!(load(root), Err(StateError::Newer { found: 7, .. })));
    }
}

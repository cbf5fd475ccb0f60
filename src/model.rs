//! The bottom layer's plain types: what every stage and IO layer of the pipeline speaks, so
//! that no lower layer has to import a higher one to name them (ARCHITECTURE.md, "Layers").
//!
//! Nothing here computes anything beyond parsing and naming its own values; nothing here
//! depends on another module of the crate.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Folders never searched for skills (version control, dependencies, skillc's own state);
/// imports and exports leave them out too.
pub const SKIPPED_DIRS: &[&str] = &[".git", ".hg", ".svn", "node_modules", ".skillc", "__pycache__"];

/// A readable file of a skill, as the catalog keeps it (`out/skills/<name>/…`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillFile {
    /// Path relative to the skill folder, `/`-separated (`SKILL.md`, `scripts/run.py`).
    pub path: String,
    /// Its bytes.
    pub bytes: Arc<[u8]>,
    /// Hex SHA-256 of the bytes.
    pub sha256: String,
}

/// What became of a skill in a build (`report.json` `skills[].status`, `catalog.toml`
/// `[[skill]] status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SkillStatus {
    /// In the catalog, with executors.
    Ok,
    /// In the catalog, with no sub-command (instructions only).
    InstructionOnly,
    /// Rejected as a whole: not in the catalog.
    Rejected,
}

impl SkillStatus {
    /// `ok`, `instruction-only` or `rejected`.
    pub fn as_str(self) -> &'static str {
        match self {
            SkillStatus::Ok => "ok",
            SkillStatus::InstructionOnly => "instruction-only",
            SkillStatus::Rejected => "rejected",
        }
    }
}

impl Serialize for SkillStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// The limits PRODUCT.md sets on what a skill may contain (`pipeline.toml` `[limits]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Limits {
    /// Largest accepted SKILL.md, in bytes (default 64 KiB).
    pub skill_md_bytes: u64,
    /// Largest accepted support file, in bytes (default 1 MiB).
    pub support_file_bytes: u64,
    /// Most files a skill folder may hold, SKILL.md included (default 500).
    pub files_per_skill: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            skill_md_bytes: 64 * 1024,
            support_file_bytes: 1024 * 1024,
            files_per_skill: 500,
        }
    }
}

/// Which rule set validation applies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Errors for specification violations, warnings for the rest, superset formats understood.
    #[default]
    Default,
    /// The agentskills.io standard exactly (`--strict`).
    Strict,
}

/// An admission level (PRODUCT.md, "Admission levels").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Vocabulary and name grammar.
    L1,
    /// Name unique across the catalog.
    L2,
    /// Affinity overlap below the threshold.
    L3,
    /// Routing of prototype requests.
    L4,
    /// The wrapper is executable and matches the manifest.
    L5,
    /// Semantic agreement of wording and name.
    L6,
}

impl Level {
    /// All levels in order.
    pub const ALL: [Level; 6] = [Level::L1, Level::L2, Level::L3, Level::L4, Level::L5, Level::L6];

    /// `L1` … `L6`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::L1 => "L1",
            Level::L2 => "L2",
            Level::L3 => "L3",
            Level::L4 => "L4",
            Level::L5 => "L5",
            Level::L6 => "L6",
        }
    }

    /// Parses `L1`…`L6` (case-insensitive, surrounding blanks ignored).
    pub fn parse(s: &str) -> Option<Level> {
        Level::ALL
            .into_iter()
            .find(|l| l.as_str().eq_ignore_ascii_case(s.trim()))
    }
}

/// The status of an admission level: per executor (`pass`, `skipped`, `not-run`; the
/// manifest's `[admission] levels`) or for the whole catalog (`run`, `skipped`, `not-run`;
/// `report.json` `admission.levels` and `routing.toml` `l4`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LevelStatus {
    /// The executor passed the level.
    Pass,
    /// The level ran over the catalog.
    Run,
    /// The level was skipped on request (`--skip`, `[admission] skip`).
    Skipped,
    /// The level could not run (L5 without `python3`).
    NotRun,
}

impl LevelStatus {
    /// `pass`, `run`, `skipped` or `not-run`, as written in every output.
    pub fn as_str(self) -> &'static str {
        match self {
            LevelStatus::Pass => "pass",
            LevelStatus::Run => "run",
            LevelStatus::Skipped => "skipped",
            LevelStatus::NotRun => "not-run",
        }
    }
}

impl fmt::Display for LevelStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl Serialize for LevelStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// The severity of a security finding, lowest first; `[scan] fail_on` is one of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FindingSeverity {
    /// Informational.
    Info,
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High (the default threshold).
    #[default]
    High,
    /// Critical.
    Critical,
}

impl FindingSeverity {
    /// Every severity, lowest first.
    pub const ALL: [FindingSeverity; 5] = [
        FindingSeverity::Info,
        FindingSeverity::Low,
        FindingSeverity::Medium,
        FindingSeverity::High,
        FindingSeverity::Critical,
    ];

    /// `info`, `low`, `medium`, `high` or `critical`.
    pub fn as_str(self) -> &'static str {
        match self {
            FindingSeverity::Info => "info",
            FindingSeverity::Low => "low",
            FindingSeverity::Medium => "medium",
            FindingSeverity::High => "high",
            FindingSeverity::Critical => "critical",
        }
    }

    /// Parses `info` … `critical` (exactly as written in `pipeline.toml`).
    pub fn parse(s: &str) -> Option<FindingSeverity> {
        FindingSeverity::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// `steps` levels lower, never below `info`.
    pub fn lowered(self, steps: usize) -> FindingSeverity {
        let i = FindingSeverity::ALL.iter().position(|s| *s == self).unwrap_or(0);
        FindingSeverity::ALL[i.saturating_sub(steps)]
    }
}

impl fmt::Display for FindingSeverity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl Serialize for FindingSeverity {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// The `[admission]` settings of `pipeline.toml` (FORMATS.md): the one place their defaults
/// are written.
#[derive(Clone, Debug, PartialEq)]
pub struct AdmissionSettings {
    /// L3 threshold between executors of different providers (default 0.5).
    pub affinity_threshold: f64,
    /// L3 threshold between executors of the same provider (default 0.85).
    pub affinity_threshold_same_provider: f64,
    /// External L6 verifier command (`sh -c`); empty means the built-in verifier alone.
    pub verifier: String,
}

impl AdmissionSettings {
    /// Whether an external L6 verifier is configured.
    pub fn has_verifier(&self) -> bool {
        !self.verifier.trim().is_empty()
    }
}

impl Default for AdmissionSettings {
    /// The defaults of `pipeline.toml`: 0.5, 0.85, no external verifier.
    fn default() -> AdmissionSettings {
        AdmissionSettings {
            affinity_threshold: 0.5,
            affinity_threshold_same_provider: 0.85,
            verifier: String::new(),
        }
    }
}

/// What a wrapper check produced: the `--describe` output, or why it failed.
pub type DescribeResult = Result<String, String>;

/// The prefix of a wrapper given by digest (`sha256:<hex>`) instead of by text, which
/// [`Recorded`] understands.
pub const WRAPPER_DIGEST: &str = "sha256:";

/// The answers of the processes admission needs (L5's `python3`, the external L6 verifier),
/// recorded ahead of time and keyed by the SHA-256 of what was asked (a wrapper's source for
/// `describe`, the verifier's input for `verify`).
///
/// The build's `admission` query is pure: the build session runs the processes first,
/// records their answers here as a database input, and admission reads them (`admit`
/// implements its process runner over this record). A question that was not recorded is
/// answered with an error, so a missing record rejects rather than passes (fail closed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recorded {
    /// Whether Python was available (L5 is `not-run` otherwise).
    pub python: bool,
    /// Wrapper source SHA-256 → `--describe` output or why it failed.
    pub described: HashMap<String, DescribeResult>,
    /// Verifier input SHA-256 → its standard output or why it could not be run.
    pub verified: HashMap<String, Result<String, String>>,
}

/// The verdicts of admission's catalog-wide levels (L3 affinity, L4 routing) for one exact
/// set of candidates, as a build computed them: what a later build may reuse instead of
/// judging the whole catalog again (issue 16; ARCHITECTURE.md, "The persistent per-skill
/// cache").
///
/// Both levels are a pure function of the plans still in when they start (in order), the
/// `[admission]` thresholds, the skipped levels, the vocabulary and the tool; `key` is the
/// SHA-256 of all of that (`admit::catalog_key`), so an answer is taken only for exactly the
/// question it answers, and a build whose candidates differ in anything those levels read
/// judges them again.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CatalogVerdicts {
    /// The digest of the question (`admit::catalog_key`).
    pub key: [u8; 32],
    /// The plans these levels rejected: position among the plans they judged (in order), the
    /// level that rejected it (L3 or L4) and why.
    pub rejected: Vec<(u32, Level, String)>,
    /// The routing battery of the survivors, sorted (empty when L4 is skipped).
    pub battery: Vec<Prototype>,
}

/// The language of a prototype request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lang {
    /// English (`en`).
    En,
    /// Italian (`it`).
    It,
}

impl Lang {
    /// `en` or `it`.
    pub fn as_str(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::It => "it",
        }
    }
}

/// Where a prototype request comes from. Ordered as its name sorts (`description` before
/// `label`), so that sorting prototypes sorts as their text in `routing.toml`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PrototypeKind {
    /// The English label followed by the sub-command's own description.
    Description,
    /// An executor's label (built from the vocabulary labels).
    Label,
}

impl PrototypeKind {
    /// `description` or `label`.
    pub fn as_str(self) -> &'static str {
        match self {
            PrototypeKind::Description => "description",
            PrototypeKind::Label => "label",
        }
    }
}

/// One entry of the routing battery (`out/routing.toml`): a request that must route to an
/// executor first (admission level L4).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Prototype {
    /// The executor the request must route to.
    pub expected: String,
    /// The request's language.
    pub lang: Lang,
    /// The request text.
    pub request: String,
    /// Where the request comes from.
    pub kind: PrototypeKind,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for l in Level::ALL {
            assert_eq!(Level::parse(&format!(" {} ", l.as_str().to_lowercase())), Some(l));
        }
        for s in FindingSeverity::ALL {
            assert_eq!(FindingSeverity::parse(s.as_str()), Some(s));
        }
        assert_eq!(FindingSeverity::parse("High"), None);
        assert_eq!(FindingSeverity::Medium.lowered(5), FindingSeverity::Info);
    }

    #[test]
    fn enums_sort_as_their_names() {
        assert!(Lang::En.as_str() < Lang::It.as_str() && Lang::En < Lang::It);
        assert!(
            PrototypeKind::Description.as_str() < PrototypeKind::Label.as_str()
                && PrototypeKind::Description < PrototypeKind::Label
        );
    }
}

/// Who wrote a skill: `skill.created`'s `source` in the event log (RUNTIME.md §3; seed 002
/// §3). The curator may change only `auto_generated` and `curator_generated` skills.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// A person wrote it (also the meaning of no `skill.created` event at all).
    Manual,
    /// An agent wrote it.
    AutoGenerated,
    /// `skillc import` brought it in (a third party's: read-only).
    Imported,
    /// The curator made it (a consolidation's survivor).
    CuratorGenerated,
}

impl Origin {
    /// Whether the curator may change a skill of this origin.
    pub fn touchable(self) -> bool {
        matches!(self, Origin::AutoGenerated | Origin::CuratorGenerated)
    }
}

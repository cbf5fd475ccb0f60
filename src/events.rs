//! The event log `.skillc/events.jsonl` (RUNTIME.md §3; FORMATS.md, "Event log"): one JSON
//! object per line, `{"event": KIND, "time": RFC 3339 UTC, …fields}`, appended and never
//! rewritten. It is what the curator reads to know who wrote a skill (`skill.created`), how
//! often it is used (`skill.loaded`) and whether its use goes wrong (`tool.failed`), and where
//! it writes what it did (`skill.curated`, `curator.run_started`, `curator.run_finished`).
//!
//! **An IO layer** with a pure half: [`render`] and [`parse_log`] do no IO; [`append`],
//! [`record`] and [`read`] are the only file access. Payloads carry names, identifiers, times
//! and amounts only — never a skill body or user text: every field is a closed enum, a number,
//! or an identifier checked by [`check_id`] / [`check_skill_name`] (no spaces, bounded length).
//!
//! Appends are atomic: the whole line (newline included) is one `write` on a file opened with
//! `O_APPEND`, at most [`MAX_LINE_BYTES`] long, so concurrent writers (a runtime recording
//! loads while the curator runs) never interleave within a line.

use std::io::Write;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The project's event log, relative to the project root.
pub const LOG: &str = ".skillc/events.jsonl";

/// Longest line written, in bytes (Linux's `PIPE_BUF`; an event is far shorter).
pub const MAX_LINE_BYTES: usize = 4096;

/// Longest identifier (session, tool, run id), in characters.
pub const MAX_ID_CHARS: usize = 128;

/// Longest skill name, in characters (agentskills.io `name`).
pub const MAX_SKILL_CHARS: usize = 64;

pub use crate::model::Origin;

/// What the curator did to a skill (`skill.curated`'s `action`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Pinned (manual).
    Pin,
    /// Unpinned (manual).
    Unpin,
    /// Moved to the archive root.
    Archive,
    /// Moved back from the archive root, or its body brought back (`--before`).
    Restore,
    /// Survived a consolidation: its body was rewritten, the others archived.
    Consolidate,
    /// Its body was patched.
    Edit,
}

impl Action {
    /// The JSON name.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Pin => "pin",
            Action::Unpin => "unpin",
            Action::Archive => "archive",
            Action::Restore => "restore",
            Action::Consolidate => "consolidate",
            Action::Edit => "edit",
        }
    }
}

/// Whether an action was confirmed by the auxiliary model or asked for by a person.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CuratorKind {
    /// Confirmed or proposed by one auxiliary-model call.
    Llm,
    /// An explicit command (`skillc curate pin|unpin|archive|restore`, `skillc remove`).
    Manual,
}

/// What started a curator run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// `skillc curate run`.
    Cli,
    /// `skillc curate maybe` (a runtime's session boundary), once the interval elapsed.
    Maybe,
    /// The serve API.
    Api,
}

/// How a curator run ended (`curator.run_finished`'s `reason`; RUNTIME.md §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Every candidate was considered.
    Completed,
    /// Nothing to do.
    NoCandidates,
    /// The next call would have passed `per_run_max_usd`.
    PerRunCap,
    /// The next call would have passed `per_day_max_usd`.
    PerDayCap,
    /// The auxiliary model failed or timed out: no model-confirmed action after that.
    ModelUnavailable,
    /// Another run holds a skills root's lock (nothing written; never in the log).
    Busy,
    /// `[curator] enabled = false` (nothing written; never in the log).
    Disabled,
    /// `maybe` before the interval elapsed (nothing written; never in the log).
    IntervalNotElapsed,
}

impl Reason {
    /// The JSON name.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Completed => "completed",
            Reason::NoCandidates => "no_candidates",
            Reason::PerRunCap => "per_run_cap",
            Reason::PerDayCap => "per_day_cap",
            Reason::ModelUnavailable => "model_unavailable",
            Reason::Busy => "busy",
            Reason::Disabled => "disabled",
            Reason::IntervalNotElapsed => "interval_not_elapsed",
        }
    }
}

/// The payload of `skill.curated`: one per action.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Curated {
    /// The run it belongs to; absent for manual actions outside a run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The skill acted on.
    pub skill: String,
    /// What was done.
    pub action: Action,
    /// Model-confirmed or manual.
    pub kind: CuratorKind,
    /// The auxiliary model's name (`llm` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// What the confirming call cost, in USD as a decimal string (`"0"` for manual actions).
    pub cost_usd: String,
    /// First 16 hex digits of the SHA-256 of the body before the action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_before: Option<String>,
    /// The same after the action (absent when the skill left the skills root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_after: Option<String>,
    /// The archive folder written (archive) or the previous body's snapshot (edit, consolidate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archive_path: Option<String>,
    /// The skills merged into this one (consolidate).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub consolidated_from: Vec<String>,
    /// The survivor a consolidated sibling was merged into (archive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub into: Option<String>,
}

/// One event's kind and fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event")]
pub enum Kind {
    /// A skill was written into a skills root.
    #[serde(rename = "skill.created")]
    Created {
        /// The skill's name.
        skill: String,
        /// Who wrote it.
        source: Origin,
    },
    /// A runtime loaded a skill's body (a playbook).
    #[serde(rename = "skill.loaded")]
    Loaded {
        /// The skill's name.
        skill: String,
        /// The agent session it was loaded in.
        session: String,
    },
    /// A tool call failed in a session.
    #[serde(rename = "tool.failed")]
    ToolFailed {
        /// The agent session.
        session: String,
        /// The tool's name (no arguments, no output).
        tool: String,
    },
    /// The curator acted on a skill.
    #[serde(rename = "skill.curated")]
    Curated(Curated),
    /// A curator run began (after its plan was made).
    #[serde(rename = "curator.run_started")]
    RunStarted {
        /// The run's id, shared with its `curator.run_finished` and `skill.curated` events.
        run_id: String,
        /// What started it.
        trigger: Trigger,
        /// How many candidates the plan holds.
        candidates: u32,
    },
    /// A curator run ended.
    #[serde(rename = "curator.run_finished")]
    RunFinished {
        /// The run's id.
        run_id: String,
        /// Why it ended.
        reason: Reason,
        /// What its model calls cost, in USD as a decimal string.
        spend: String,
        /// How many `skill.curated` events it wrote.
        actions: u32,
        /// How many model calls it made.
        calls: u32,
    },
}

/// The event names this version reads; lines with other names (another runtime's events) are
/// skipped silently.
pub const KINDS: &[&str] = &[
    "skill.created",
    "skill.loaded",
    "tool.failed",
    "skill.curated",
    "curator.run_started",
    "curator.run_finished",
];

/// One line of the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// When it happened (whole seconds, UTC).
    pub time: Timestamp,
    /// What happened.
    pub kind: Kind,
}

impl Event {
    /// An event at `time` (truncated to whole seconds).
    pub fn new(time: Timestamp, kind: Kind) -> Event {
        Event {
            time: whole_seconds(time),
            kind,
        }
    }
}

/// A failure to write or read the log.
#[derive(Debug, thiserror::Error)]
pub enum EventError {
    /// A field is not an identifier (see [`check_id`]).
    #[error("{0}")]
    Invalid(String),
    /// The file system failed.
    #[error("{path}: {message}")]
    Io {
        /// The log file.
        path: String,
        /// The operating system's message.
        message: String,
    },
}

/// A line of the log that was skipped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The log file as shown.
    pub file: String,
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// The readable events of a log, in file order, and the lines skipped.
#[derive(Clone, Debug, Default)]
pub struct Log {
    /// The events.
    pub events: Vec<Event>,
    /// Lines that are not events of this schema (syntax, a bad field, a bad time).
    pub problems: Vec<Problem>,
}

/// `time` truncated to whole seconds.
pub fn whole_seconds(time: Timestamp) -> Timestamp {
    Timestamp::from_second(time.as_second()).unwrap_or(time)
}

/// RFC 3339 UTC with whole seconds: `2026-05-14T18:30:00Z`.
pub fn rfc3339(time: Timestamp) -> String {
    whole_seconds(time).to_string()
}

/// Checks an identifier (session, tool, run id): 1 to [`MAX_ID_CHARS`] ASCII characters,
/// letters, digits and `._:/@+=#-` — no spaces, quotes or other text.
///
/// # Errors
/// A message naming `what` and the rule.
pub fn check_id(what: &str, value: &str) -> Result<(), String> {
    let ok = !value.is_empty()
        && value.len() <= MAX_ID_CHARS
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._:/@+=#-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{what}` must be 1 to {MAX_ID_CHARS} characters of ASCII letters, digits and ._:/@+=#- (an identifier, never text)"
        ))
    }
}

/// Checks a skill name: 1 to [`MAX_SKILL_CHARS`] characters of `[a-z0-9-]` (agentskills.io).
///
/// # Errors
/// A message saying the rule.
pub fn check_skill_name(value: &str) -> Result<(), String> {
    let ok = !value.is_empty()
        && value.len() <= MAX_SKILL_CHARS
        && value
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`skill` must be a skill name: 1 to {MAX_SKILL_CHARS} characters of a-z, 0-9 and -"
        ))
    }
}

impl Kind {
    /// Checks every identifier of the payload.
    ///
    /// # Errors
    /// The first field that is not an identifier.
    pub fn check(&self) -> Result<(), String> {
        match self {
            Kind::Created { skill, .. } => check_skill_name(skill),
            Kind::Loaded { skill, session } => check_skill_name(skill).and_then(|()| check_id("session", session)),
            Kind::ToolFailed { session, tool } => check_id("session", session).and_then(|()| check_id("tool", tool)),
            Kind::Curated(c) => {
                check_skill_name(&c.skill)?;
                for s in c.consolidated_from.iter().chain(&c.into) {
                    check_skill_name(s)?;
                }
                for id in c.run_id.iter().chain(&c.model) {
                    check_id("run_id/model", id)?;
                }
                Ok(())
            }
            Kind::RunStarted { run_id, .. } | Kind::RunFinished { run_id, .. } => check_id("run_id", run_id),
        }
    }
}

/// Renders one event as a log line (`\n` included): `event`, then `time`, then the fields.
///
/// # Errors
/// [`EventError::Invalid`] when a field is not an identifier or the line is too long.
pub fn render(event: &Event) -> Result<String, EventError> {
    event.kind.check().map_err(EventError::Invalid)?;
    let Ok(Value::Object(mut fields)) = serde_json::to_value(&event.kind) else {
        return Err(EventError::Invalid("an event is a JSON object".into()));
    };
    let mut line = Map::new();
    if let Some(name) = fields.shift_remove("event") {
        line.insert("event".into(), name);
    }
    line.insert("time".into(), Value::String(rfc3339(event.time)));
    line.extend(fields);
    let mut text = Value::Object(line).to_string();
    text.push('\n');
    if text.len() > MAX_LINE_BYTES {
        return Err(EventError::Invalid(format!(
            "an event line is at most {MAX_LINE_BYTES} bytes"
        )));
    }
    Ok(text)
}

/// Parses one line: `Ok(None)` for an event of another kind (another runtime's).
///
/// # Errors
/// What is wrong with the line.
pub fn parse_line(line: &str) -> Result<Option<Event>, String> {
    let Value::Object(mut fields) = serde_json::from_str::<Value>(line).map_err(|e| format!("not JSON: {e}"))? else {
        return Err("not a JSON object".into());
    };
    let name = fields
        .get("event")
        .and_then(Value::as_str)
        .ok_or("no `event` name")?
        .to_owned();
    if !KINDS.contains(&name.as_str()) {
        return Ok(None);
    }
    let time = match fields.remove("time") {
        Some(Value::String(t)) => t
            .parse::<Timestamp>()
            .map_err(|e| format!("`time` is not an RFC 3339 time: {e}"))?,
        _ => return Err("no `time`".into()),
    };
    let kind: Kind = serde_json::from_value(Value::Object(fields)).map_err(|e| format!("bad `{name}` event: {e}"))?;
    kind.check()?;
    Ok(Some(Event::new(time, kind)))
}

/// Parses a whole log shown as `file`; blank lines are ignored, bad lines reported.
pub fn parse_log(file: &str, text: &str) -> Log {
    let mut log = Log::default();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match parse_line(line) {
            Ok(Some(e)) => log.events.push(e),
            Ok(None) => {}
            Err(message) => log.problems.push(Problem {
                file: file.to_owned(),
                line: i + 1,
                message,
            }),
        }
    }
    log
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> EventError + '_ {
    move |e| EventError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Appends one event to the log at `path` (created with its folder when missing) in one
/// `write` on an `O_APPEND` file, then `fdatasync`. A previous line left without its line
/// break (a writer that crashed) gets one first, in the same write.
///
/// The check for that line break and the write happen under an exclusive advisory lock
/// (`flock`) on the log: without it, a writer could read the size while another's write is
/// half copied (Linux grows the size page by page), see a torn line that is not one, and
/// add a stray blank line. Readers take no lock; the lock goes when the file is closed.
///
/// # Errors
/// [`EventError`] for an invalid event or a file-system failure.
pub fn append(path: &Path, event: &Event) -> Result<(), EventError> {
    let line = render(event)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .open(path)
        .map_err(io_err(path))?;
    file.lock().map_err(io_err(path))?;
    let mut bytes = Vec::with_capacity(line.len() + 1);
    if !ends_with_newline(&file) {
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(line.as_bytes());
    let written = file.write(&bytes).map_err(io_err(path))?;
    if written != bytes.len() {
        return Err(EventError::Io {
            path: path.display().to_string(),
            message: format!("short write ({written} of {} bytes)", bytes.len()),
        });
    }
    file.sync_data().map_err(io_err(path))
}

/// Whether a file is empty or ends with `\n`.
#[cfg(unix)]
fn ends_with_newline(file: &std::fs::File) -> bool {
    use std::os::unix::fs::FileExt;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut last = [b'\n'];
    len == 0 || file.read_at(&mut last, len - 1).is_err() || last[0] == b'\n'
}

#[cfg(not(unix))]
fn ends_with_newline(_: &std::fs::File) -> bool {
    true
}

/// The log of the project at `root`.
pub fn log_path(root: &Path) -> PathBuf {
    root.join(LOG)
}

/// Appends one event to the project's log (`<root>/.skillc/events.jsonl`): the entry point
/// for runtimes (`skillc playbook`, `skillc serve`, `skillc events record`).
///
/// # Errors
/// As [`append`].
pub fn record(root: &Path, event: &Event) -> Result<(), EventError> {
    append(&log_path(root), event)
}

/// Reads a log; a missing file is an empty log. `shown` is the name used in problems.
///
/// # Errors
/// [`EventError::Io`] when the file exists and cannot be read.
pub fn read(path: &Path, shown: &str) -> Result<Log, EventError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(parse_log(shown, &String::from_utf8_lossy(&bytes))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Log::default()),
        Err(e) => Err(io_err(path)(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn lines_put_event_and_time_first_and_parse_back() {
        let e = Event::new(
            t("2026-05-14T18:30:00.75Z"),
            Kind::Loaded {
                skill: "pdf-tools".into(),
                session: "s-1".into(),
            },
        );
        let line = render(&e).unwrap();
        assert_eq!(
            line,
            "{\"event\":\"skill.loaded\",\"time\":\"2026-05-14T18:30:00Z\",\"skill\":\"pdf-tools\",\"session\":\"s-1\"}\n"
        );
        assert_eq!(parse_line(line.trim_end()).unwrap(), Some(e));
    }

    #[test]
    fn text_never_enters_a_payload() {
        let bad = Kind::ToolFailed {
            session: "s 1".into(),
            tool: "x".into(),
        };
        assert!(render(&Event::new(t("2026-01-01T00:00:00Z"), bad)).is_err());
        let bad = Kind::Created {
            skill: "Has Spaces".into(),
            source: Origin::Manual,
        };
        assert!(render(&Event::new(t("2026-01-01T00:00:00Z"), bad)).is_err());
    }

    #[test]
    fn logs_skip_other_kinds_and_report_bad_lines() {
        let text = "{\"event\":\"session.ended\",\"time\":\"2026-01-01T00:00:00Z\"}\n\
                    \n\
                    {\"event\":\"skill.created\",\"time\":\"2026-01-01T00:00:00+02:00\",\"skill\":\"a\",\"source\":\"imported\"}\n\
                    {\"event\":\"skill.created\",\"time\":\"yesterday\",\"skill\":\"a\",\"source\":\"imported\"}\n\
                    {\"event\":\"skill.loaded\",\"time\":\"2026-01-01T00:00:00Z\",\"skill\":\"a\"}\n\
                    {\"event\":\"skill.lo";
        let log = parse_log("events.jsonl", text);
        assert_eq!(log.events.len(), 1);
        assert_eq!(log.events[0].time, t("2025-12-31T22:00:00Z"));
        let lines: Vec<usize> = log.problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, vec![4, 5, 6]);
    }

    #[test]
    fn appends_are_whole_lines_even_after_a_torn_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".skillc/events.jsonl");
        let e = Event::new(
            t("2026-01-01T00:00:00Z"),
            Kind::ToolFailed {
                session: "s".into(),
                tool: "mcp__gh__create_issue".into(),
            },
        );
        append(&path, &e).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"event\":\"skill.lo")
            .unwrap();
        append(&path, &e).unwrap();
        let log = read(&path, "events.jsonl").unwrap();
        assert_eq!(log.events, vec![e.clone(), e]);
        assert_eq!(log.problems.len(), 1);
        assert_eq!(read(&dir.path().join("none"), "none").unwrap().events.len(), 0);
    }
}

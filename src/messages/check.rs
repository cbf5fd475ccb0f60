//! `skillc check --format json` (schema `skillc.check/1`).

use serde::Serialize;

use crate::diag::{Counts, Diagnostic};

/// The schema id.
pub const SCHEMA: &str = "skillc.check/1";

/// The report.
#[derive(Serialize)]
pub struct Report<'a> {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// `default` or `strict`.
    pub mode: &'static str,
    /// Counts of entries by status.
    pub summary: Summary,
    /// One entry per path problem, then one per skill.
    pub skills: Vec<Entry<'a>>,
}

/// Counts of entries by status; `ok + warnings + errors == skills`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Entries.
    pub skills: usize,
    /// Entries whose status is `ok`.
    pub ok: usize,
    /// Entries whose status is `warnings`.
    pub warnings: usize,
    /// Entries whose status is `errors`.
    pub errors: usize,
    /// Diagnostics `check --fix` would fix.
    pub fixable: usize,
}

impl Summary {
    /// Counts one entry.
    pub fn add(&mut self, status: Status) {
        self.skills += 1;
        match status {
            Status::Ok => self.ok += 1,
            Status::Warnings => self.warnings += 1,
            Status::Errors => self.errors += 1,
        }
    }
}

/// A checked skill, or a path problem.
#[derive(Serialize)]
pub struct Entry<'a> {
    /// The folder (or the path given).
    pub path: &'a str,
    /// The skill's `name`, when it could be read.
    pub name: Option<&'a str>,
    /// The worst severity found.
    pub status: Status,
    /// Every problem found.
    pub diagnostics: Vec<Diag<'a>>,
}

/// A diagnostic of the report: its fields and whether `check --fix` fixes it.
#[derive(Serialize)]
pub struct Diag<'a> {
    /// The diagnostic (`code`, `severity`, `file`, positions, `message`, `help`).
    #[serde(flatten)]
    pub diagnostic: &'a Diagnostic,
    /// `check --fix` fixes it.
    pub fixable: bool,
}

/// What an entry's diagnostics add up to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// No error, no warning.
    Ok,
    /// Warnings, no error.
    Warnings,
    /// At least one error.
    Errors,
}

impl Status {
    /// The status of diagnostics counted.
    pub fn of(c: Counts) -> Status {
        if c.errors > 0 {
            Status::Errors
        } else if c.warnings > 0 {
            Status::Warnings
        } else {
            Status::Ok
        }
    }
}

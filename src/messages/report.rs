//! The build report, `out/report.json` (schema `skillc.report/1`; keys sorted when rendered).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::diag::Diagnostic;
use crate::model::SkillStatus;
use crate::scan::Finding;

/// The schema id.
pub const SCHEMA: &str = "skillc.report/1";

/// The report, its `skills` given as a placeholder the build fills with the skills' entries
/// (rendered one by one, each memoized).
#[derive(Serialize)]
pub struct Report<'a> {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// The tool version.
    pub skillc: &'static str,
    /// `SOURCE_DATE_EPOCH` was set.
    pub reproducible: bool,
    /// What was read.
    pub inputs: Inputs<'a>,
    /// Counts.
    pub summary: Totals,
    /// Catalog-wide level statuses.
    pub admission: Admission<'a>,
    /// The skills' entries (a placeholder, see above).
    pub skills: &'a str,
}

/// What the build read.
#[derive(Serialize)]
pub struct Inputs<'a> {
    /// Skills found.
    pub skills: usize,
    /// The vocabulary's path, or `<built-in vocabulary>`.
    pub vocabulary: &'a str,
    /// Hex SHA-256 of its text.
    pub vocabulary_sha256: &'a str,
}

/// Counts over a build (the report's `summary`; also the audit log's and the build store's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    /// Skills found.
    pub skills: usize,
    /// Skills rejected as a whole.
    pub skills_rejected: usize,
    /// Plans.
    pub plans: usize,
    /// Plans admitted.
    pub admitted: usize,
    /// Plans rejected.
    pub rejected: usize,
}

/// The admission levels of the catalog.
#[derive(Serialize)]
pub struct Admission<'a> {
    /// `L1`…`L6` → `run`, `skipped` or `not-run`.
    pub levels: BTreeMap<&'static str, &'static str>,
    /// Levels skipped on request.
    pub skipped: Vec<&'a str>,
}

/// One skill of the report.
#[derive(Serialize)]
pub struct Skill<'a> {
    /// Its `name`.
    pub name: Option<&'a str>,
    /// Its folder.
    pub path: &'a str,
    /// What became of it.
    pub status: SkillStatus,
    /// Why it was rejected (`SK027: …`).
    pub reason: Option<&'a str>,
    /// `skillc check`'s diagnostics and the build's own.
    pub diagnostics: Vec<&'a Diagnostic>,
    /// The scan's findings.
    pub findings: &'a [Finding],
    /// One per sub-command.
    pub plans: Vec<Plan>,
}

/// One plan of the report.
#[derive(Serialize)]
pub struct Plan {
    /// The sub-command.
    pub subcommand: String,
    /// The executor name, when translated.
    pub name: Option<String>,
    /// `admitted` or `rejected`.
    pub status: &'static str,
    /// Where it was rejected: `translate`, `skill` or `L1`…`L6`.
    pub level: Option<&'static str>,
    /// The rule.
    pub code: Option<&'static str>,
    /// Why.
    pub reason: Option<String>,
}

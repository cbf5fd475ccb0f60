//! `skillc scan --format json` (schema `skillc.scan/1`).

use serde::Serialize;

use super::OrderedCounts;
use crate::scan::Finding;

/// The schema id.
pub const SCHEMA: &str = "skillc.scan/1";

/// The report.
#[derive(Serialize)]
pub struct Report<'a> {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// The threshold in effect.
    pub fail_on: &'static str,
    /// Counts.
    pub summary: Summary,
    /// One entry per skill, sorted by path.
    pub skills: Vec<Skill<'a>>,
}

/// Counts.
#[derive(Serialize)]
pub struct Summary {
    /// Skills scanned.
    pub skills: usize,
    /// Skills with a finding at or above `fail_on`.
    pub failed: usize,
    /// Findings listed.
    pub findings: usize,
    /// Severity → findings listed.
    pub by_severity: OrderedCounts,
    /// Highest severity (or `none`) → skills.
    pub skills_by_highest: OrderedCounts,
    /// With a baseline: findings listed that it knows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub known: Option<usize>,
    /// With a baseline: its entries no finding matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline_unmatched: Option<usize>,
}

/// One skill.
#[derive(Serialize)]
pub struct Skill<'a> {
    /// Its folder.
    pub path: &'a str,
    /// Its `name`.
    pub name: Option<&'a str>,
    /// Its highest finding, `None` when clean.
    pub highest: Option<&'static str>,
    /// A finding at or above `fail_on`.
    pub failed: bool,
    /// The findings listed.
    pub findings: Vec<Listed<'a>>,
}

/// A finding of the report.
#[derive(Serialize)]
pub struct Listed<'a> {
    /// The finding (`code`, `name`, `severity`, `file`, `line`, `column`, `reason`, `context`).
    #[serde(flatten)]
    pub finding: &'a Finding,
    /// With a baseline: whether it knows the finding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub known: Option<bool>,
}

//! `skillc migrate --format json` (schema `skillc.migrate/1`).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::diag::Diagnostic;
use crate::migrate::{FieldReport, Outcome, Vendor};

/// The schema id.
pub const SCHEMA: &str = "skillc.migrate/1";

/// The report.
#[derive(Serialize)]
pub struct Report<'a> {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// `dry-run`, `write` or `out`.
    pub mode: &'static str,
    /// Counts.
    pub summary: &'a Summary,
    /// One entry per skill, sorted by path.
    pub skills: Vec<Skill<'a>>,
}

/// Counts over all skills.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Skills found.
    pub skills: usize,
    /// Migrated.
    pub migrated: usize,
    /// Migrated, a capability not granted.
    pub blocked: usize,
    /// Not migrated.
    pub failed: usize,
    /// Nothing to migrate.
    pub skipped: usize,
    /// Blocked skills per blocker reason (a skill counts once per distinct reason).
    pub blocked_by_reason: BTreeMap<String, usize>,
    /// Failed skills per reason.
    pub failed_by_reason: BTreeMap<String, usize>,
    /// Results written.
    pub written: usize,
}

/// One skill.
#[derive(Serialize)]
pub struct Skill<'a> {
    /// Its folder.
    pub path: &'a str,
    /// What became of it.
    pub outcome: Outcome,
    /// The formats migrated.
    pub from: &'a [Vendor],
    /// Where the result was written.
    pub written: Option<String>,
    /// Distinct blocker reasons.
    pub blocked_reasons: Vec<String>,
    /// Why it failed.
    pub failure: Option<&'static str>,
    /// The review report.
    pub fields: &'a [FieldReport],
    /// `MG003`/`MG004` and the check errors that stopped it.
    pub diagnostics: &'a [Diagnostic],
}

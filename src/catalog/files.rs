//! The typed shapes of the verified files the catalog layer reads: `catalog.toml`'s skill
//! and executor entries, `report.json` (schema `skillc.report/1`, docs/json.md) and
//! `manifest.toml` (FORMATS.md). Pure deserialisation of bytes already verified; unknown
//! fields are ignored, as docs/json.md asks of consumers.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// `catalog.toml`, the parts read here.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct CatalogFile {
    /// `[[executor]]`.
    #[serde(default)]
    pub executor: Vec<CatalogExecutor>,
    /// `[[skill]]`.
    #[serde(default)]
    pub skill: Vec<CatalogSkill>,
    /// Levels skipped on request for the whole catalog.
    #[serde(default)]
    pub skipped: Vec<String>,
}

/// One `[[executor]]` of `catalog.toml`.
#[derive(Clone, Debug, Deserialize)]
pub struct CatalogExecutor {
    /// Canonical name.
    pub name: String,
    /// Its skill.
    pub skill: String,
    /// Path of its manifest inside `out/`.
    pub manifest: String,
}

/// One `[[skill]]` of `catalog.toml`.
#[derive(Clone, Debug, Deserialize)]
pub struct CatalogSkill {
    /// The skill name (its folder under `out/skills/`).
    pub name: String,
    /// `ok` or `instruction-only`.
    #[serde(default)]
    pub status: String,
    /// Retained files (path relative to the skill folder → `sha256:…`).
    #[serde(default)]
    pub files: BTreeMap<String, String>,
}

/// `report.json`, the parts read here.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Report {
    /// Per skill, sorted by path.
    #[serde(default)]
    pub skills: Vec<ReportSkill>,
    /// `admission.levels`: level → `run`, `not-run`, `skipped`.
    #[serde(default)]
    pub admission: ReportAdmission,
}

/// `report.json` `admission`.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct ReportAdmission {
    /// Level → status for the whole catalog.
    #[serde(default)]
    pub levels: BTreeMap<String, String>,
}

/// One skill of `report.json`.
#[derive(Clone, Debug, Deserialize)]
pub struct ReportSkill {
    /// Its name, when it could be read.
    pub name: Option<String>,
    /// The skill folder relative to the project root.
    pub path: String,
    /// `ok`, `instruction-only` or `rejected`.
    pub status: String,
    /// Why it was rejected.
    pub reason: Option<String>,
    /// `skillc check` diagnostics, as in `skillc.check/1`.
    #[serde(default)]
    pub diagnostics: Vec<serde_json::Value>,
    /// Security findings.
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// Plans and their admission.
    #[serde(default)]
    pub plans: Vec<serde_json::Value>,
}

/// A security finding (`skillc.scan/1`).
#[derive(Clone, Debug, Deserialize, Serialize, utoipa::ToSchema)]
pub struct Finding {
    /// `SC001` …
    pub code: String,
    /// The rule's name.
    #[serde(default)]
    pub name: String,
    /// `info`, `low`, `medium`, `high` or `critical`.
    pub severity: String,
    /// The file, as the build showed it (`skills/x/SKILL.md`).
    pub file: String,
    /// 1-based line.
    pub line: u64,
    /// 1-based column (characters).
    pub column: u64,
    /// What was found.
    #[serde(default)]
    pub reason: String,
    /// Context rules that lowered the severity.
    #[serde(default)]
    pub context: Option<String>,
}

/// The severities of findings, lowest first.
pub const SEVERITIES: [&str; 5] = ["info", "low", "medium", "high", "critical"];

/// The rank of a severity in [`SEVERITIES`] (unknown ones rank lowest).
pub fn severity_rank(s: &str) -> usize {
    SEVERITIES.iter().position(|x| *x == s).unwrap_or(0)
}

/// `manifest.toml`, the parts summarised here (the whole table is kept as well).
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Manifest {
    /// English description.
    #[serde(default)]
    pub description: String,
    /// `[capabilities]`.
    #[serde(default)]
    pub capabilities: Capabilities,
    /// `[admission]`.
    #[serde(default)]
    pub admission: Admission,
    /// `[provenance]`.
    #[serde(default)]
    pub provenance: BTreeMap<String, toml::Value>,
}

/// `[capabilities]` of a manifest.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Capabilities {
    /// GAIA permissions.
    #[serde(default)]
    pub permissions: Vec<String>,
}

/// `[admission]` of a manifest.
#[derive(Clone, Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
pub struct Admission {
    /// Level → `pass`, `skipped`, `not-run`.
    #[serde(default)]
    pub levels: BTreeMap<String, String>,
    /// Levels skipped on request.
    #[serde(default)]
    pub skipped: Vec<String>,
}

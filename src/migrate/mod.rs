//! `skillc migrate`: rewrites a Hermes or OpenClaw skill's frontmatter into the GAIA format
//! (a `metadata.gaia` block), as a pure function of the SKILL.md text.
//!
//! Contract (issue 7; seed 001, "Cross-format compatibility & migration"):
//! - what GAIA models is written under `metadata.gaia` (`requirements.env_vars`,
//!   `requirements.dependencies`, `requirements.node_dependencies`, `permissions`,
//!   `tools_required`); the tier is reset to `experimental`;
//! - everything else of the vendor is kept under `metadata.hermes` / `metadata.<openclaw
//!   namespace>` — Hermes' top-level keys move there — so nothing is lost; a field whose GAIA
//!   form carries less than the original (prompts, install labels) is kept whole as well;
//! - a capability GAIA cannot grant at the `experimental` tier (running binaries, reading
//!   credential files, …) is a blocker: reported, kept under the vendor namespace, never
//!   dropped; fields a person must decide on are "needs review";
//! - the Markdown body is copied byte for byte; comments in the frontmatter are not kept
//!   (the frontmatter is written anew, block style, see [`crate::skill::yaml_out`]);
//! - the result is checked with the default rules; a result with errors is not produced.
//!
//! What each vendor field becomes is a table ([`fields`]); [`rewrite`] builds the new
//! frontmatter's entries with it, and `skill::writer` (the one frontmatter writer) writes them. Architecture invariant: no IO here; the CLI (`cli/migrate.rs`) reads
//! and writes files.

mod fields;
mod rewrite;

use std::ops::Range;

use serde::Serialize;

use crate::diag::{Diagnostic, Pos, Severity, Source, Span};
use crate::model::Mode;
use crate::rules;
use crate::skill::frontmatter;
use crate::skill::gaia::SecurityTier;
use crate::skill::model::OPENCLAW_NAMESPACES;
use crate::skill::validate::{self, Analysis, Context};
use crate::skill::writer::{self, Layout};
use crate::skill::yaml::{self, Node};
use rewrite::Rewriter;

/// Which vendor format to migrate from (`--from`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FromFormat {
    /// Hermes Agent: top-level `required_environment_variables`, `prerequisites`,
    /// `required_credential_files`, `platforms`, `setup`, `author`, and `metadata.hermes`.
    Hermes,
    /// OpenClaw: `metadata.openclaw` (or `clawdbot`, `clawdis`, `moltbot`).
    OpenClaw,
    /// Whichever of the two the skill uses (both when it uses both).
    Auto,
}

/// A vendor namespace found in a skill.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    /// Hermes Agent.
    Hermes,
    /// OpenClaw and its former names.
    OpenClaw,
}

/// What happened to one field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FieldStatus {
    /// Written into `metadata.gaia` (the original may be kept too, see the message).
    Mapped,
    /// No GAIA equivalent and no capability: kept under the vendor namespace.
    Preserved,
    /// Kept under the vendor namespace; a person must decide what it means for GAIA.
    NeedsReview,
    /// A capability GAIA cannot grant at the `experimental` tier: kept, reported, not granted.
    Blocked,
    /// Set by the migration itself (the tier).
    Reset,
}

impl FieldStatus {
    /// The report word: `mapped`, `preserved`, `needs review`, `blocked`, `reset`.
    pub fn label(self) -> &'static str {
        match self {
            FieldStatus::Mapped => "mapped",
            FieldStatus::Preserved => "preserved",
            FieldStatus::NeedsReview => "needs review",
            FieldStatus::Blocked => "blocked",
            FieldStatus::Reset => "reset",
        }
    }
}

/// One line of the review report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldReport {
    /// The field in the original frontmatter (`metadata.openclaw.requires.bins`,
    /// `required_environment_variables`).
    pub field: String,
    /// What happened to it.
    pub status: FieldStatus,
    /// Where it went in `metadata.gaia`, when mapped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// For blockers, a stable reason key (`tier-ceiling:shell`, `tier-ceiling:filesystem`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What a reviewer needs to know.
    pub message: String,
    /// 1-based line of the field in the original SKILL.md.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// `MG001` (blocked) or `MG002` (needs review).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'static str>,
    /// Where the field's value is in the original SKILL.md.
    #[serde(skip)]
    pub span: Span,
}

impl FieldReport {
    /// The line as a diagnostic (`MG001` blocked, `MG002` needs review) in `file`, for
    /// renderers that show file:line:col; `None` for the other statuses.
    pub fn diagnostic(&self, file: &str) -> Option<Diagnostic> {
        let rule = match self.status {
            FieldStatus::Blocked => &rules::MG001,
            FieldStatus::NeedsReview => &rules::MG002,
            _ => return None,
        };
        Some(Diagnostic::new(
            rule,
            file,
            self.span,
            format!("`{}`: {}", self.field, self.message),
        ))
    }
}

/// The overall outcome for one skill.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Migrated, nothing blocked.
    Migrated,
    /// Migrated and written, but at least one capability is blocked.
    Blocked,
    /// Nothing to migrate (no metadata of the requested format).
    Skipped,
    /// No result: the input cannot be read, or the result would not pass `skillc check`.
    Failed,
}

/// The result of migrating one SKILL.md.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Migration {
    /// The vendor formats migrated.
    pub vendors: Vec<Vendor>,
    /// The new SKILL.md, when the outcome is `Migrated` or `Blocked`.
    pub output: Option<String>,
    /// The review report, in field order.
    pub fields: Vec<FieldReport>,
    /// Why the skill failed or was skipped (`MG003`, `MG004`), and the errors `skillc check`
    /// finds in the result or the input.
    pub diagnostics: Vec<Diagnostic>,
    /// The outcome.
    pub outcome: Outcome,
    /// Why the outcome is `Failed`: `unreadable` (no readable frontmatter), `fails-check`
    /// (the skill fails `skillc check` already), `vendor-shape` (`metadata` or a vendor
    /// namespace is not a mapping), `gaia-ceiling` (an existing `metadata.gaia` grants more
    /// than `experimental` allows), `bug` (the result fails `skillc check`, the input did not).
    pub failure: Option<&'static str>,
}

impl Migration {
    /// The distinct blocker reasons, sorted.
    pub fn blocked_reasons(&self) -> Vec<String> {
        let mut r: Vec<String> = self.fields.iter().filter_map(|f| f.reason.clone()).collect();
        r.sort();
        r.dedup();
        r
    }
}

/// Hermes keys written at the top level of SKILL.md, moved under `metadata.hermes`.
pub const HERMES_TOP_LEVEL: &[&str] = &[
    "required_environment_variables",
    "prerequisites",
    "required_credential_files",
    "platforms",
    "setup",
    "author",
];

/// OpenClaw keys written at the top level, moved under the OpenClaw namespace.
pub const OPENCLAW_TOP_LEVEL: &[&str] = &["homepage", "user-invocable"];

/// The GAIA tier every migrated skill lands in (seed 001: "Every migrated skill lands
/// `experimental`").
const TIER: SecurityTier = SecurityTier::Experimental;

/// The detected vendor formats of a frontmatter root.
pub fn detect(root: &Node) -> Vec<Vendor> {
    let mut v = Vec::new();
    let md = root.get_value("metadata");
    if HERMES_TOP_LEVEL
        .iter()
        .filter(|k| **k != "author")
        .any(|k| root.get(k).is_some())
        || md.and_then(|m| m.get("hermes")).is_some()
    {
        v.push(Vendor::Hermes);
    }
    if md.is_some_and(|m| OPENCLAW_NAMESPACES.iter().any(|ns| m.get(ns).is_some())) {
        v.push(Vendor::OpenClaw);
    }
    v
}

/// Migrates the SKILL.md `text` of the folder `dir_name`, shown as `file` in diagnostics.
pub fn migrate(file: &str, dir_name: &str, text: &str, from: FromFormat) -> Migration {
    let ctx = Context {
        dir_name,
        mode: Mode::Default,
    };
    let before = validate::analyze(file, text.as_bytes(), &ctx);
    let (root, body) = match readable(file, &before) {
        Ok(found) => found,
        Err(m) => return m,
    };
    let mut m = Migration {
        vendors: chosen(detect(root), from),
        output: None,
        fields: Vec::new(),
        diagnostics: Vec::new(),
        outcome: Outcome::Failed,
        failure: Some("unreadable"),
    };
    if m.vendors.is_empty() {
        m.outcome = Outcome::Skipped;
        m.failure = None;
        let message = match from {
            FromFormat::Hermes => "no Hermes metadata to migrate",
            FromFormat::OpenClaw => "no OpenClaw metadata to migrate",
            FromFormat::Auto => "no Hermes or OpenClaw metadata to migrate",
        };
        m.diagnostics
            .push(Diagnostic::new(&rules::MG004, file, Span::at(Pos::START), message).severity(Severity::Warning));
        return m;
    }
    let src = Source::new(file, text);
    let mut w = Rewriter::new(&src);
    let rewritten = w.rewrite(root, &m.vendors);
    if let Some(split) = frontmatter::split(&src).0 {
        w.comments(split.frontmatter);
    }
    m.fields = w.fields;
    m.diagnostics = w.failures;
    m.failure = w.failure;
    let Some(entries) = rewritten else {
        return m;
    };
    // The frontmatter writer shared with `export` and `check --fix`; the BOM is kept.
    let Some(layout) = Layout::of_text(text) else {
        return m;
    };
    let new = writer::replace_head(text, body, &entries, layout);
    // The result must pass `skillc check` (default rules) before anything is written.
    let after = validate::analyze(file, new.as_bytes(), &ctx);
    let errs: Vec<Diagnostic> = errors(&after.diagnostics);
    if !errs.is_empty() {
        let had_before = !errors(&before.diagnostics).is_empty();
        m.failure = Some(if had_before { "fails-check" } else { "bug" });
        m.diagnostics.push(
            Diagnostic::new(
                &rules::MG003,
                file,
                Span::at(Pos::START),
                if had_before {
                    "the skill fails `skillc check` before migration; the migrated skill would too"
                } else {
                    "the migrated frontmatter fails `skillc check` (a skillc bug: please report it)"
                },
            )
            .help("run `skillc check` on the skill and fix its errors, then migrate again"),
        );
        m.diagnostics
            .extend(if had_before { errors(&before.diagnostics) } else { errs });
        return m;
    }
    m.outcome = if m.fields.iter().any(|f| f.status == FieldStatus::Blocked) {
        Outcome::Blocked
    } else {
        Outcome::Migrated
    };
    m.output = Some(new);
    m.failure = None;
    m
}

/// The frontmatter root and the body's range, or the failed migration of a skill whose
/// frontmatter cannot be read or is ambiguous.
fn readable<'a>(file: &str, before: &'a Analysis) -> Result<(&'a Node, Range<usize>), Migration> {
    let failed = |message: &str, help: Option<&str>| {
        let mut d = Diagnostic::new(&rules::MG003, file, Span::at(Pos::START), message);
        if let Some(h) = help {
            d = d.help(h);
        }
        let mut diagnostics = vec![d];
        diagnostics.extend(errors(&before.diagnostics));
        Migration {
            vendors: Vec::new(),
            output: None,
            fields: Vec::new(),
            diagnostics,
            outcome: Outcome::Failed,
            failure: Some("unreadable"),
        }
    };
    let (Some(root), Some(body)) = (before.frontmatter.as_ref(), before.body.clone()) else {
        return Err(failed(
            "the frontmatter cannot be read, so there is nothing to migrate",
            Some("run `skillc check` on the skill and fix its errors first"),
        ));
    };
    if before.read_errors().next().is_some() {
        return Err(failed(
            "the frontmatter is ambiguous (duplicate keys, anchors, tags or merge keys)",
            None,
        ));
    }
    Ok((root, body))
}

/// The vendor formats migrated: those detected, of the kind asked for.
fn chosen(detected: Vec<Vendor>, from: FromFormat) -> Vec<Vendor> {
    match from {
        FromFormat::Auto => detected,
        FromFormat::Hermes => detected.into_iter().filter(|v| *v == Vendor::Hermes).collect(),
        FromFormat::OpenClaw => detected.into_iter().filter(|v| *v == Vendor::OpenClaw).collect(),
    }
}

fn errors(diags: &[Diagnostic]) -> Vec<Diagnostic> {
    diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .cloned()
        .collect()
}

/// The vendor formats a SKILL.md text uses (empty when its frontmatter cannot be read).
pub fn vendor_formats(text: &str) -> Vec<Vendor> {
    let src = Source::new("SKILL.md", text);
    let (split, _) = frontmatter::split(&src);
    let Some(split) = split else { return Vec::new() };
    yaml::load(&src, split.frontmatter)
        .root
        .map(|r| detect(&r))
        .unwrap_or_default()
}

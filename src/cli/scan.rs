//! `skillc scan`: the security scan alone, over skills on disk, as readable lines, JSON
//! (`skillc.scan/1`) or SARIF 2.1.0 (for code-scanning dashboards).

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Context as _;
use rayon::prelude::*;
use serde_json::json;

use super::check::load_skills;
use super::{Printer, Status, project};
use crate::diag;
use crate::model::FindingSeverity;
use crate::model::Mode;
use crate::scan::unicode::{escape_invisible, escape_name};
use crate::scan::{self, Finding, ScanReport};

/// Output formats of `skillc scan`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ScanFormat {
    /// `file:line:col: severity[CODE]: reason`, then a summary.
    Human,
    /// One JSON document, schema `skillc.scan/1` (docs/json.md).
    Json,
    /// SARIF 2.1.0, for code-scanning tools.
    Sarif,
}

/// A finding severity on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SeverityArg {
    /// Informational.
    Info,
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
    /// Critical.
    Critical,
}

impl From<SeverityArg> for FindingSeverity {
    fn from(s: SeverityArg) -> FindingSeverity {
        match s {
            SeverityArg::Info => FindingSeverity::Info,
            SeverityArg::Low => FindingSeverity::Low,
            SeverityArg::Medium => FindingSeverity::Medium,
            SeverityArg::High => FindingSeverity::High,
            SeverityArg::Critical => FindingSeverity::Critical,
        }
    }
}

/// Arguments of `skillc scan`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 no finding at or above --fail-on, 1 at least one, 2 the scan could not run.\n\
Run `skillc explain SC011` for what a rule finds and how context lowers its severity."
)]
pub struct ScanArgs {
    /// Skill folders, SKILL.md files, or folders to search (default: `[pipeline] skills`
    /// when there is a pipeline.toml, else `skills/` when it exists, else the current folder).
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, visible_alias = "message-format", value_enum, default_value_t = ScanFormat::Human)]
    pub format: ScanFormat,
    /// Exit with status 1 when a finding is at or above this severity (default: `[scan]
    /// fail_on` of pipeline.toml, else `high`).
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub fail_on: Option<SeverityArg>,
    /// Show only findings at or above this severity (all formats; the exit status still
    /// counts every finding).
    #[arg(long, value_enum, value_name = "SEVERITY", default_value_t = SeverityArg::Info)]
    pub min_severity: SeverityArg,
    /// Print only the summary line (human format).
    #[arg(short, long)]
    pub quiet: bool,
}

struct Scanned {
    path: String,
    name: Option<String>,
    report: ScanReport,
}

pub(crate) fn run(args: &ScanArgs, out: &mut Printer) -> anyhow::Result<Status> {
    let cwd = std::env::current_dir()?;
    let project = project::load(&cwd, out)?;
    let fail_on: FindingSeverity = args.fail_on.map_or(project.config.fail_on, Into::into);
    let min: FindingSeverity = args.min_severity.into();
    let (base, paths) = project.inputs(&args.paths);
    let loaded = load_skills(&base, &paths, Mode::Default, project.config.limits, true, &[])?;
    for p in &loaded.problems {
        out.note(&diag::render_short(p));
    }
    let db = &loaded.db;
    let settings = loaded.settings;
    let scanned: Vec<Scanned> = loaded
        .skills
        .par_iter()
        .map_with(db.clone(), |db, s| {
            let report = scan::scan_skill(db, *s, settings).clone();
            let name = crate::skill::analyze_skill(db, *s, settings)
                .model
                .name
                .as_ref()
                .map(|n| n.value.clone());
            Scanned {
                path: s.display(db).clone(),
                name,
                report,
            }
        })
        .collect();
    let failed = scanned
        .iter()
        .filter(|s| s.report.highest().is_some_and(|h| h >= fail_on))
        .count();
    match args.format {
        ScanFormat::Human => human(out, &scanned, fail_on, min, args.quiet, failed)?,
        ScanFormat::Json => out.line(
            &serde_json::to_string_pretty(&json_report(&scanned, fail_on, min, failed))
                .context("serializing the report")?,
        )?,
        ScanFormat::Sarif => {
            out.line(&serde_json::to_string_pretty(&sarif(&scanned, min)).context("serializing SARIF")?)?
        }
    }
    out.flush()?;
    Ok(if failed > 0 || !loaded.problems.is_empty() {
        Status::Failure
    } else {
        Status::Success
    })
}

fn shown(s: &Scanned, min: FindingSeverity) -> impl Iterator<Item = &Finding> {
    s.report.findings.iter().filter(move |f| f.severity >= min)
}

/// Counts of skills by their highest finding (`none` when clean).
fn by_highest(scanned: &[Scanned]) -> BTreeMap<&'static str, usize> {
    let mut m: BTreeMap<&'static str, usize> = BTreeMap::new();
    for s in scanned {
        *m.entry(s.report.highest().map_or("none", FindingSeverity::as_str))
            .or_default() += 1;
    }
    m
}

fn severity_counts(scanned: &[Scanned], min: FindingSeverity) -> [usize; 5] {
    let mut c = [0; 5];
    for f in scanned.iter().flat_map(|s| shown(s, min)) {
        c[f.severity as usize] += 1;
    }
    c
}

fn human(
    out: &mut Printer,
    scanned: &[Scanned],
    fail_on: FindingSeverity,
    min: FindingSeverity,
    quiet: bool,
    failed: usize,
) -> anyhow::Result<()> {
    if !quiet {
        for f in scanned.iter().flat_map(|s| shown(s, min)) {
            let context = if f.context.is_empty() {
                String::new()
            } else {
                format!(" (lowered: {})", f.context)
            };
            let severity = if out.color {
                // Red for what fails the default threshold, yellow for medium, dim below.
                let code = match f.severity {
                    FindingSeverity::Critical | FindingSeverity::High => "1;31",
                    FindingSeverity::Medium => "33",
                    FindingSeverity::Low | FindingSeverity::Info => "2",
                };
                format!("\x1b[{code}m{}[{}]\x1b[0m", f.severity, f.rule.code)
            } else {
                format!("{}[{}]", f.severity, f.rule.code)
            };
            out.line(&format!(
                "{}:{}:{}: {severity}: {}{context}",
                escape_name(&f.file),
                f.line,
                f.column,
                escape_invisible(&f.reason)
            ))?;
        }
    }
    let c = severity_counts(scanned, min);
    let total: usize = c.iter().sum();
    let parts: Vec<String> = FindingSeverity::ALL
        .iter()
        .rev()
        .filter(|s| c[**s as usize] > 0)
        .map(|s| format!("{} {s}", c[*s as usize]))
        .collect();
    out.line(&format!(
        "scanned {}: {}{}; {} at or above `{fail_on}`",
        super::output::count(scanned.len(), "skill"),
        super::output::count(total, "finding"),
        if parts.is_empty() {
            String::new()
        } else {
            format!(" ({})", parts.join(", "))
        },
        super::output::count(failed, "skill"),
    ))?;
    Ok(())
}

fn json_report(
    scanned: &[Scanned],
    fail_on: FindingSeverity,
    min: FindingSeverity,
    failed: usize,
) -> serde_json::Value {
    let c = severity_counts(scanned, min);
    let by_severity: serde_json::Map<String, serde_json::Value> = FindingSeverity::ALL
        .iter()
        .map(|s| (s.as_str().to_owned(), c[*s as usize].into()))
        .collect();
    let highest = by_highest(scanned);
    let skills_by_highest: serde_json::Map<String, serde_json::Value> =
        ["none", "info", "low", "medium", "high", "critical"]
            .iter()
            .map(|k| ((*k).to_owned(), highest.get(k).copied().unwrap_or(0).into()))
            .collect();
    json!({
        "schema": "skillc.scan/1",
        "fail_on": fail_on.as_str(),
        "summary": {
            "skills": scanned.len(),
            "failed": failed,
            "findings": c.iter().sum::<usize>(),
            "by_severity": by_severity,
            "skills_by_highest": skills_by_highest,
        },
        "skills": scanned.iter().map(|s| json!({
            "path": s.path,
            "name": s.name,
            "highest": s.report.highest().map(FindingSeverity::as_str),
            "failed": s.report.highest().is_some_and(|h| h >= fail_on),
            "findings": shown(s, min).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// SARIF level of a severity: `error` for high and critical, `warning` for medium, `note`
/// below.
fn sarif_level(s: FindingSeverity) -> &'static str {
    match s {
        FindingSeverity::Critical | FindingSeverity::High => "error",
        FindingSeverity::Medium => "warning",
        FindingSeverity::Low | FindingSeverity::Info => "note",
    }
}

/// GitHub code scanning's `security-severity` scale (0–10).
fn security_severity(s: FindingSeverity) -> &'static str {
    match s {
        FindingSeverity::Critical => "9.5",
        FindingSeverity::High => "8.0",
        FindingSeverity::Medium => "5.5",
        FindingSeverity::Low => "3.0",
        FindingSeverity::Info => "0.0",
    }
}

/// A relative path as a URI reference: unreserved characters and `/` kept, the rest
/// percent-encoded (UTF-8).
fn uri(path: &str) -> String {
    let mut s = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            s.push(char::from(b));
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// A SARIF 2.1.0 log: one run, every scan rule in the driver, one result per finding.
fn sarif(scanned: &[Scanned], min: FindingSeverity) -> serde_json::Value {
    let rules: Vec<serde_json::Value> = crate::rules::scan_rules()
        .map(|r| {
            let severity = r.finding_severity().unwrap_or_default();
            json!({
                "id": r.code,
                "name": r.name,
                "shortDescription": {"text": r.summary},
                "fullDescription": {"text": r.summary},
                "help": {"text": r.explanation, "markdown": r.explanation},
                "defaultConfiguration": {"level": sarif_level(severity)},
                "properties": {"security-severity": security_severity(severity), "tags": ["security"]},
            })
        })
        .collect();
    let index: BTreeMap<&str, usize> = crate::rules::scan_rules()
        .enumerate()
        .map(|(i, r)| (r.code, i))
        .collect();
    let results: Vec<serde_json::Value> = scanned
        .iter()
        .flat_map(|s| shown(s, min))
        .map(|f| {
            json!({
                "ruleId": f.rule.code,
                "ruleIndex": index.get(f.rule.code).copied().unwrap_or(0),
                "level": sarif_level(f.severity),
                "message": {"text": f.reason},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": uri(&f.file)},
                    "region": {"startLine": f.line, "startColumn": f.column},
                }}],
                "properties": {
                    "severity": f.severity.as_str(),
                    "security-severity": security_severity(f.severity),
                    "context": f.context,
                },
            })
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "skillc",
                "version": env!("CARGO_PKG_VERSION"),
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

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
use crate::messages::{self, OrderedCounts};
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
    /// GitHub Actions workflow commands: one annotation per finding.
    Github,
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
    /// Accept the findings of this run: write them to FILE (default: `[scan] baseline`, else
    /// `skillc-scan-baseline.json` at the project root). Later scans report them as known and
    /// fail only on new ones.
    #[arg(long, value_name = "FILE", num_args = 0..=1, conflicts_with = "no_baseline")]
    pub write_baseline: Option<Option<PathBuf>>,
    /// The baseline to compare with (default: `[scan] baseline`, else
    /// `skillc-scan-baseline.json` at the project root when it exists).
    #[arg(long, value_name = "FILE", conflicts_with = "no_baseline")]
    pub baseline: Option<PathBuf>,
    /// Ignore any baseline: every finding counts.
    #[arg(long)]
    pub no_baseline: bool,
    /// The PATHs are changed files (as pre-commit passes them): scan the skills they belong to
    /// (the nearest folder upwards with a SKILL.md); files outside every skill are ignored.
    #[arg(long)]
    pub files: bool,
}

struct Scanned {
    path: String,
    name: Option<String>,
    report: ScanReport,
    /// Per finding: in the baseline.
    known: Vec<bool>,
}

pub(crate) fn run(args: &ScanArgs, out: &mut Printer) -> anyhow::Result<Status> {
    let cwd = std::env::current_dir()?;
    let project = project::load(&cwd, out)?;
    let fail_on: FindingSeverity = args.fail_on.map_or(project.config.fail_on, Into::into);
    let min: FindingSeverity = args.min_severity.into();
    let given = if args.files {
        let owning = project::owning_skills(&args.paths);
        if owning.is_empty() {
            out.note("no skill among the files given");
            return Ok(Status::Success);
        }
        owning
    } else {
        args.paths.clone()
    };
    let (base, paths) = project.inputs(&given);
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
            let known = vec![false; report.findings.len()];
            Scanned {
                path: s.display(db).clone(),
                name,
                report,
                known,
            }
        })
        .collect();
    let mut scanned = scanned;
    let unmatched = apply_baseline(args, &project, &cwd.join(&base), &loaded, &mut scanned, out)?;
    let failed = scanned.iter().filter(|s| fails(s, fail_on)).count();
    match args.format {
        ScanFormat::Human => human(out, &scanned, (fail_on, min), args.quiet, failed, unmatched)?,
        ScanFormat::Json => out.line(
            &serde_json::to_string_pretty(&json_report(&scanned, fail_on, min, failed, unmatched))
                .context("serializing the report")?,
        )?,
        ScanFormat::Sarif => out.line(
            &serde_json::to_string_pretty(&sarif(&scanned, min, unmatched.is_some())).context("serializing SARIF")?,
        )?,
        ScanFormat::Github => {
            for s in &scanned {
                for (f, known) in s
                    .report
                    .findings
                    .iter()
                    .zip(&s.known)
                    .filter(|(f, _)| f.severity >= min)
                {
                    out.line(&super::github::finding(f, *known))?;
                }
            }
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

/// The shown findings with whether each is in the baseline.
fn shown_known(s: &Scanned, min: FindingSeverity) -> impl Iterator<Item = (&Finding, bool)> {
    s.report
        .findings
        .iter()
        .zip(s.known.iter().copied())
        .filter(move |(f, _)| f.severity >= min)
}

/// Whether a skill fails: a finding at or above the threshold that the baseline does not know.
fn fails(s: &Scanned, fail_on: FindingSeverity) -> bool {
    s.report
        .findings
        .iter()
        .zip(&s.known)
        .any(|(f, known)| !known && f.severity >= fail_on)
}

/// Writes the baseline (`--write-baseline`) or reads it, and marks the known findings.
/// Returns how many baseline entries matched nothing, `None` when no baseline is in use.
fn apply_baseline(
    args: &ScanArgs,
    project: &project::Project,
    base: &std::path::Path,
    loaded: &super::check::Loaded,
    scanned: &mut [Scanned],
    out: &mut Printer,
) -> anyhow::Result<Option<usize>> {
    use super::baseline;
    if args.no_baseline {
        return Ok(None);
    }
    let configured = project.config.scan_baseline.as_deref();
    let texts = baseline::texts(&loaded.db, &loaded.skills);
    let keys: Vec<Vec<crate::scan::baseline::Key>> = scanned
        .iter()
        .map(|s| {
            s.report
                .findings
                .iter()
                .map(|f| baseline::key(f, &texts, &project.root, base))
                .collect()
        })
        .collect();
    if let Some(target) = &args.write_baseline {
        let path = match (target, configured) {
            (Some(p), _) => p.clone(),
            (None, Some(c)) => project.root.join(c),
            (None, None) => project.root.join(crate::scan::baseline::DEFAULT_FILE),
        };
        let all: Vec<_> = keys
            .iter()
            .zip(scanned.iter())
            .flat_map(|(k, s)| k.iter().cloned().zip(s.report.findings.iter()))
            .collect();
        let n = baseline::write(&path, &all)?;
        out.note(&format!(
            "wrote {} to {}",
            super::output::count(n, "finding"),
            path.display()
        ));
        for s in scanned.iter_mut() {
            s.known = vec![true; s.report.findings.len()];
        }
        return Ok(Some(0));
    }
    let Some(path) = baseline::resolve(&project.root, args.baseline.as_deref(), configured)? else {
        return Ok(None);
    };
    let mut matcher = baseline::read(&path)?.matcher();
    for (s, k) in scanned.iter_mut().zip(&keys) {
        s.known = k.iter().map(|k| matcher.known(k)).collect();
    }
    Ok(Some(matcher.unmatched()))
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
    (fail_on, min): (FindingSeverity, FindingSeverity),
    quiet: bool,
    failed: usize,
    baseline: Option<usize>,
) -> anyhow::Result<()> {
    if !quiet {
        for (f, known) in scanned.iter().flat_map(|s| shown_known(s, min)) {
            let mut context = if f.context.is_empty() {
                String::new()
            } else {
                format!(" (lowered: {})", f.context)
            };
            if known {
                context.push_str(" (known: in the baseline)");
            }
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
    let known = match baseline {
        Some(0) => format!("; {} known (baseline)", known_count(scanned, min)),
        Some(n) => format!(
            "; {} known (baseline; {n} baseline entries match nothing, `--write-baseline` prunes them)",
            known_count(scanned, min)
        ),
        None => String::new(),
    };
    out.line(&format!(
        "scanned {}: {}{}{known}; {} at or above `{fail_on}`",
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
    scanned: &'_ [Scanned],
    fail_on: FindingSeverity,
    min: FindingSeverity,
    failed: usize,
    baseline: Option<usize>,
) -> messages::scan::Report<'_> {
    let c = severity_counts(scanned, min);
    let by_severity = FindingSeverity::ALL
        .iter()
        .map(|s| (s.as_str(), c[*s as usize]))
        .collect();
    let highest = by_highest(scanned);
    let skills_by_highest = ["none", "info", "low", "medium", "high", "critical"]
        .iter()
        .map(|k| (*k, highest.get(k).copied().unwrap_or(0)))
        .collect();
    messages::scan::Report {
        schema: messages::scan::SCHEMA,
        fail_on: fail_on.as_str(),
        summary: messages::scan::Summary {
            skills: scanned.len(),
            failed,
            findings: c.iter().sum::<usize>(),
            by_severity: OrderedCounts(by_severity),
            skills_by_highest: OrderedCounts(skills_by_highest),
            // With a baseline: the counts of known findings and of unmatched entries.
            known: baseline.map(|_| known_count(scanned, min)),
            baseline_unmatched: baseline,
        },
        skills: scanned
            .iter()
            .map(|s| messages::scan::Skill {
                path: &s.path,
                name: s.name.as_deref(),
                highest: s.report.highest().map(FindingSeverity::as_str),
                failed: fails(s, fail_on),
                findings: shown_known(s, min)
                    .map(|(finding, known)| messages::scan::Listed {
                        finding,
                        known: baseline.map(|_| known),
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// Shown findings that the baseline knows.
fn known_count(scanned: &[Scanned], min: FindingSeverity) -> usize {
    scanned
        .iter()
        .flat_map(|s| shown_known(s, min))
        .filter(|(_, k)| *k)
        .count()
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

/// A SARIF 2.1.0 log: one run, every scan rule in the driver, one result per finding (with a
/// baseline, its `baselineState`: `unchanged` when known, else `new`).
fn sarif(scanned: &[Scanned], min: FindingSeverity, with_baseline: bool) -> serde_json::Value {
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
        .flat_map(|s| shown_known(s, min))
        .map(|(f, known)| {
            let mut result = json!({
                "ruleId": f.rule.code,
                "ruleIndex": index.get(f.rule.code).copied().unwrap_or(0),
                "level": sarif_level(f.severity),
                "message": {"text": f.reason},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": super::sarif::uri(&f.file)},
                    "region": {"startLine": f.line, "startColumn": f.column},
                }}],
                "properties": {
                    "severity": f.severity.as_str(),
                    "security-severity": security_severity(f.severity),
                    "context": f.context,
                },
            });
            if with_baseline {
                result["baselineState"] = (if known { "unchanged" } else { "new" }).into();
            }
            result
        })
        .collect();
    super::sarif::log(rules, results)
}

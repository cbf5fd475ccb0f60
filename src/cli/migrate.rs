//! `skillc migrate`: the IO around [`crate::migrate`] — find the skills, read each SKILL.md,
//! print the review report, and (with `--write` / `--out`) write the results atomically.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use super::check::load_skills;
use super::output::count;
use super::{Printer, ReportFormat, Status};
use crate::db::{Contents, Db, Settings, SkillSource, load};
use crate::diag::{self, Diagnostic, Severity};
use crate::emit::write::write_atomic;
use crate::messages::migrate as migrate_json;
use crate::migrate::{self, FromFormat, Migration, Outcome, Vendor};
use crate::model::Limits;
use crate::model::Mode;
use crate::skill;

/// The format `--from` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FromArg {
    /// Hermes Agent skills.
    Hermes,
    /// OpenClaw / ClawHub skills (`metadata.openclaw`, `clawdbot`, `clawdis`, `moltbot`).
    Openclaw,
    /// Detect per skill (both when a skill has both).
    Auto,
}

/// Arguments of `skillc migrate`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Without --write or --out nothing is written: the review report says what would change.\n\
Exit status: 0 every skill migrated (or had nothing to migrate), 1 a skill is blocked or failed, 2 the command could not run."
)]
pub struct MigrateArgs {
    /// Skill folders, SKILL.md files, or folders to search recursively.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The format to migrate from.
    #[arg(long, value_enum, default_value_t = FromArg::Auto)]
    pub from: FromArg,
    /// Rewrite each SKILL.md in place (atomically; the body is kept byte for byte).
    #[arg(long, conflicts_with = "out")]
    pub write: bool,
    /// Write migrated copies of the skill folders into DIR (`DIR/<folder>/`), never overwriting.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Output format of the report.
    #[arg(long, visible_alias = "message-format", value_enum, default_value_t = ReportFormat::Human)]
    pub format: ReportFormat,
}

struct Done {
    display: String,
    /// The SKILL.md, as shown in diagnostics.
    file: String,
    migration: Migration,
    written: Option<String>,
}

/// Migrates one skill and writes the result when asked (`--write`, `--out`); `None` for a
/// skill without SKILL.md.
fn migrate_one(
    db: &Db,
    skill: SkillSource,
    settings: Settings,
    from: FromFormat,
    args: &MigrateArgs,
) -> anyhow::Result<Option<Done>> {
    let display = skill.display(db).clone();
    let dir = PathBuf::from(&display);
    let dir_name = skill.dir_name(db).clone();
    let Some(md) = skill.skill_md(db) else { return Ok(None) };
    let md_name = md.rel_path(db).clone();
    let file = format!("{display}/{md_name}");
    // Folder-level errors (limits, links) are not the frontmatter's: migration cannot fix
    // them, so such a skill is not migrated.
    let check = skill::check_skill(db, skill, settings);
    let folder_errors: Vec<Diagnostic> = check
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error && d.file != file)
        .cloned()
        .collect();
    let migration = match md.contents(db) {
        _ if !folder_errors.is_empty() => {
            let mut m = failed(&file, "the skill folder fails `skillc check`", "fails-check");
            m.diagnostics.extend(folder_errors);
            m
        }
        Contents::Bytes(b) => match std::str::from_utf8(&b[..]) {
            Ok(text) => migrate::migrate(&file, &dir_name, text, from),
            Err(_) => failed(&file, "SKILL.md is not valid UTF-8", "unreadable"),
        },
        Contents::TooLarge { size } => failed(
            &file,
            &format!("SKILL.md is {size} bytes, over the limit"),
            "unreadable",
        ),
        other => failed(&file, &format!("SKILL.md cannot be read ({other:?})"), "unreadable"),
    };
    let md_path = dir.join(&md_name);
    let written = match (&migration.output, args.write, &args.out) {
        (Some(text), true, _) => {
            let mode = file_mode(&md_path);
            write_atomic(&md_path, text.as_bytes(), mode).with_context(|| format!("writing {}", md_path.display()))?;
            Some(md_path.display().to_string())
        }
        (Some(text), false, Some(out_dir)) => {
            let files: Vec<String> = skill.files(db).iter().map(|f| f.rel_path(db).clone()).collect();
            copy_skill(&dir, &files, &md_name, text, out_dir, &dir_name)?
        }
        _ => None,
    };
    Ok(Some(Done {
        display,
        file,
        migration,
        written,
    }))
}

/// The counts of every outcome and reason.
fn summarize(done: &[Done]) -> migrate_json::Summary {
    let mut summary = migrate_json::Summary {
        skills: done.len(),
        ..migrate_json::Summary::default()
    };
    for d in done {
        match d.migration.outcome {
            Outcome::Migrated => summary.migrated += 1,
            Outcome::Blocked => summary.blocked += 1,
            Outcome::Failed => summary.failed += 1,
            Outcome::Skipped => summary.skipped += 1,
        }
        if d.migration.outcome == Outcome::Blocked {
            for r in d.migration.blocked_reasons() {
                *summary.blocked_by_reason.entry(r).or_default() += 1;
            }
        }
        if let Some(r) = d.migration.failure {
            *summary.failed_by_reason.entry(r.to_owned()).or_default() += 1;
        }
        summary.written += usize::from(d.written.is_some());
    }
    summary
}

pub(crate) fn run(args: &MigrateArgs, out: &mut Printer) -> anyhow::Result<Status> {
    let from = match args.from {
        FromArg::Hermes => FromFormat::Hermes,
        FromArg::Openclaw => FromFormat::OpenClaw,
        FromArg::Auto => FromFormat::Auto,
    };
    let loaded = load_skills(Path::new(""), &args.paths, Mode::Default, Limits::default(), false, &[])?;
    let db = &loaded.db;
    let mut done: Vec<Done> = Vec::new();
    for &skill in &loaded.skills {
        if let Some(d) = migrate_one(db, skill, loaded.settings, from, args)? {
            done.push(d);
        }
    }
    // `--out`: a migrated skill whose copy could not be written (its folder exists) fails.
    let unwritten = done
        .iter()
        .filter(|d| args.out.is_some() && d.migration.output.is_some() && d.written.is_none())
        .count();
    let summary = summarize(&done);
    for p in &loaded.problems {
        out.note(&diag::render_short(p));
    }

    match args.format {
        ReportFormat::Json => {
            let skills: Vec<migrate_json::Skill> = done
                .iter()
                .map(|d| migrate_json::Skill {
                    path: &d.display,
                    outcome: d.migration.outcome,
                    from: &d.migration.vendors,
                    written: d.written.clone(),
                    blocked_reasons: d.migration.blocked_reasons(),
                    failure: d.migration.failure,
                    fields: &d.migration.fields,
                    diagnostics: &d.migration.diagnostics,
                })
                .collect();
            let report = migrate_json::Report {
                schema: migrate_json::SCHEMA,
                mode: if args.write {
                    "write"
                } else if args.out.is_some() {
                    "out"
                } else {
                    "dry-run"
                },
                summary: &summary,
                skills,
            };
            out.line(&serde_json::to_string_pretty(&report)?)?;
        }
        ReportFormat::Human => {
            for d in &done {
                print_human(out, d)?;
            }
            out.line(&summary_line(&summary))?;
            if !summary.blocked_by_reason.is_empty() {
                let reasons: Vec<String> = summary
                    .blocked_by_reason
                    .iter()
                    .map(|(r, n)| format!("{r} {n}"))
                    .collect();
                out.line(&format!("blocked by reason: {}", reasons.join(", ")))?;
            }
            if !summary.failed_by_reason.is_empty() {
                let reasons: Vec<String> = summary
                    .failed_by_reason
                    .iter()
                    .map(|(r, n)| format!("{r} {n}"))
                    .collect();
                out.line(&format!("not migrated by reason: {}", reasons.join(", ")))?;
            }
            if !args.write && args.out.is_none() && summary.migrated + summary.blocked > 0 {
                out.line("dry run: nothing written; pass --write to rewrite in place, or --out DIR for copies")?;
            }
        }
    }
    out.flush()?;
    Ok(
        if summary.blocked > 0 || summary.failed > 0 || unwritten > 0 || !loaded.problems.is_empty() {
            Status::Failure
        } else {
            Status::Success
        },
    )
}

fn failed(file: &str, why: &str, reason: &'static str) -> Migration {
    Migration {
        vendors: Vec::new(),
        output: None,
        fields: Vec::new(),
        diagnostics: vec![Diagnostic::new(
            &crate::rules::MG003,
            file,
            diag::Span::at(diag::Pos::START),
            why.to_owned(),
        )],
        outcome: Outcome::Failed,
        failure: Some(reason),
    }
}

fn print_human(out: &mut Printer, d: &Done) -> anyhow::Result<()> {
    let m = &d.migration;
    let from: Vec<&str> = m
        .vendors
        .iter()
        .map(|v| match v {
            Vendor::Hermes => "hermes",
            Vendor::OpenClaw => "openclaw",
        })
        .collect();
    let outcome = match m.outcome {
        Outcome::Migrated => "migrated",
        Outcome::Blocked => "migrated, with blockers",
        Outcome::Failed => "not migrated",
        Outcome::Skipped => "nothing to migrate",
    };
    let from = if from.is_empty() {
        String::new()
    } else {
        format!(" (from {})", from.join(" + "))
    };
    let written = d.written.as_ref().map(|w| format!(" → {w}")).unwrap_or_default();
    out.line(&format!("{}: {outcome}{from}{written}", d.display))?;
    for f in &m.fields {
        let target = f.target.as_ref().map(|t| format!(" → {t}")).unwrap_or_default();
        match f.diagnostic(&d.file) {
            // Problems as `file:line:col: severity[CODE]: message`, like `check --format short`.
            Some(diag) => out.line(&format!("  {:<12} {}", f.status.label(), diag::render_short(&diag)))?,
            None => out.line(&format!(
                "  {:<12} {}{target}: {}",
                f.status.label(),
                f.field,
                f.message
            ))?,
        }
    }
    for diag in m
        .diagnostics
        .iter()
        .filter(|x| x.severity == Severity::Error || m.outcome != Outcome::Skipped)
    {
        out.line(&format!("  {}", diag::render_short(diag)))?;
    }
    Ok(())
}

fn summary_line(s: &migrate_json::Summary) -> String {
    format!(
        "{}: {} migrated, {} migrated with blockers, {} not migrated, {} with nothing to migrate; {} written",
        count(s.skills, "skill"),
        s.migrated,
        s.blocked,
        s.failed,
        s.skipped,
        s.written
    )
}

#[cfg(unix)]
fn file_mode(p: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).ok().map(|m| m.permissions().mode() & 0o7777)
}

#[cfg(not(unix))]
fn file_mode(_: &Path) -> Option<u32> {
    None
}

/// Copies the skill folder into `out/<dir_name>/` with the migrated SKILL.md: built in a
/// temporary folder inside `out`, then renamed, so a copy is complete or absent. An existing
/// `out/<dir_name>` is never overwritten (the skill is reported as not written).
fn copy_skill(
    dir: &Path,
    files: &[String],
    md_name: &str,
    text: &str,
    out: &Path,
    dir_name: &str,
) -> anyhow::Result<Option<String>> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let target = out.join(dir_name);
    if target.exists() {
        super::output::eprint_line(format_args!(
            "warning: {} exists; the migrated copy of {} is not written",
            target.display(),
            dir.display()
        ));
        return Ok(None);
    }
    let tmp = tempfile::Builder::new()
        .prefix(".skillc-migrate-")
        .tempdir_in(out)
        .with_context(|| format!("creating a temporary folder in {}", out.display()))?;
    std::fs::write(tmp.path().join(md_name), text).with_context(|| format!("writing into {}", tmp.path().display()))?;
    for rel in files {
        let path = &dir.join(rel);
        let dest = tmp.path().join(rel);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        }
        match load::read_file(path, dir, u64::MAX, true) {
            Contents::Bytes(b) => {
                std::fs::write(&dest, &b).with_context(|| format!("writing {}", dest.display()))?;
                if let Some(mode) = file_mode(path) {
                    set_mode(&dest, mode)?;
                }
            }
            // Folders listed as entries, links out of the skill, unreadable files: not copied.
            Contents::Unread { .. } => {}
            other => super::output::eprint_line(format_args!(
                "warning: {}/{rel} is not copied ({other:?})",
                dir.display()
            )),
        }
    }
    let kept = tmp.keep();
    std::fs::rename(&kept, &target).with_context(|| format!("renaming {} to {}", kept.display(), target.display()))?;
    Ok(Some(target.display().to_string()))
}

#[cfg(unix)]
fn set_mode(p: &Path, mode: u32) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("setting the mode of {}", p.display()))
}

#[cfg(not(unix))]
fn set_mode(_: &Path, _: u32) -> anyhow::Result<()> {
    Ok(())
}

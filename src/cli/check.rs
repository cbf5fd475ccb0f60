//! `skillc check`: validate skills and report diagnostics.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use rayon::prelude::*;
use serde::Serialize;

use super::{CheckArgs, Format, Printer, Status};
use crate::db::{Contents, Db, Settings, SkillSource, load};
use crate::diag::{self, Counts, Diagnostic, RenderOptions, Severity};
use crate::model::Limits;
use crate::model::Mode;
use crate::skill;

/// Skills loaded into a fresh database.
pub(crate) struct Loaded {
    pub db: Db,
    pub settings: Settings,
    pub skills: Vec<SkillSource>,
    /// Path-level problems (a folder without skills, a file that is not SKILL.md).
    pub problems: Vec<Diagnostic>,
}

/// Finds and reads skills under `paths` (relative to `base`) into a new database.
pub(crate) fn load_skills(
    base: &Path,
    paths: &[PathBuf],
    mode: Mode,
    limits: Limits,
    read_support: bool,
    exclude: &[PathBuf],
) -> anyhow::Result<Loaded> {
    let found = load::discover(base, paths, exclude)?;
    let read = load::read(found.skills, limits, read_support);
    let db = Db::default();
    let settings = Settings::new(&db, mode, limits);
    let skills = load::to_inputs(&db, read);
    Ok(Loaded {
        db,
        settings,
        skills,
        problems: found.problems,
    })
}

/// One checked path: display path, skill name, diagnostics, and the skill input (absent for
/// path-level problems).
type Entry = (String, Option<String>, Vec<Diagnostic>, Option<SkillSource>);

/// The verdict of one checked path.
#[derive(Serialize)]
struct SkillReport<'a> {
    path: &'a str,
    name: Option<&'a str>,
    status: &'static str,
    diagnostics: &'a [Diagnostic],
}

#[derive(Serialize)]
struct Summary {
    skills: usize,
    ok: usize,
    warnings: usize,
    errors: usize,
}

#[derive(Serialize)]
struct Report<'a> {
    schema: &'static str,
    mode: &'static str,
    summary: Summary,
    skills: Vec<SkillReport<'a>>,
}

fn status_of(c: Counts) -> &'static str {
    if c.errors > 0 {
        "errors"
    } else if c.warnings > 0 {
        "warnings"
    } else {
        "ok"
    }
}

pub(crate) fn run(args: &CheckArgs, out: &mut Printer) -> anyhow::Result<Status> {
    let mode = if args.strict { Mode::Strict } else { Mode::Default };
    // Limits come from the project's pipeline.toml, found upwards from the current folder as
    // `plan` and `build` find it (and as ruff finds its configuration). Without paths, the
    // project's roots are checked at its root; below it, the current folder (as ruff does).
    let cwd = std::env::current_dir()?;
    let project = super::project::load(&cwd, out)?;
    let (base, paths) = if project.root == cwd {
        project.inputs(&args.paths)
    } else {
        (PathBuf::new(), super::project::default_paths(&args.paths))
    };
    let loaded = load_skills(&base, &paths, mode, project.config.limits, false, &[])?;
    let db = &loaded.db;
    let settings = loaded.settings;
    let results: Vec<skill::SkillCheck> = loaded
        .skills
        .par_iter()
        .map_with(db.clone(), |db, s| skill::check_skill(db, *s, settings).clone())
        .collect();

    // One entry per path problem, then one per skill, in path order.
    let mut entries: Vec<Entry> = loaded
        .problems
        .iter()
        .map(|p| (p.file.clone(), None, vec![p.clone()], None))
        .collect();
    for (s, r) in loaded.skills.iter().zip(results) {
        entries.push((s.display(db).clone(), r.name, r.diagnostics, Some(*s)));
    }
    let mut summary = Summary {
        skills: entries.len(),
        ok: 0,
        warnings: 0,
        errors: 0,
    };
    let mut any_error = false;
    let mut any_warning = false;
    for (_, _, diags, _) in &entries {
        let c = Counts::of(diags);
        any_error |= c.errors > 0;
        any_warning |= c.warnings > 0;
        match status_of(c) {
            "errors" => summary.errors += 1,
            "warnings" => summary.warnings += 1,
            _ => summary.ok += 1,
        }
    }

    match args.format {
        Format::Json => {
            let report = Report {
                schema: "skillc.check/1",
                mode: if args.strict { "strict" } else { "default" },
                skills: entries
                    .iter()
                    .map(|(path, name, diags, _)| SkillReport {
                        path,
                        name: name.as_deref(),
                        status: status_of(Counts::of(diags)),
                        diagnostics: diags,
                    })
                    .collect(),
                summary,
            };
            out.line(&serde_json::to_string_pretty(&report).context("serializing the report")?)?;
        }
        Format::Short => {
            for (_, _, diags, _) in &entries {
                for d in diags.iter().filter(|d| !args.quiet || d.severity == Severity::Error) {
                    out.line(&diag::render_short(d))?;
                }
            }
            out.line(&summary_line(&summary))?;
        }
        Format::Human => {
            let options = RenderOptions { color: out.color };
            {
                for (_, _, diags, skill) in &entries {
                    let text = skill.and_then(|s| skill_md_text(db, s));
                    let indexed = text.as_ref().map(|(path, t)| (path, diag::SourceText::new(t)));
                    for d in diags.iter().filter(|d| !args.quiet || d.severity == Severity::Error) {
                        let source = indexed.as_ref().filter(|(path, _)| **path == d.file).map(|(_, t)| t);
                        out.write(&diag::render_human(d, source, options))?;
                        out.write("\n\n")?;
                    }
                }
            }
            out.line(&summary_line(&summary))?;
        }
    }
    out.flush()?;
    Ok(if any_error || (args.deny_warnings && any_warning) {
        Status::Failure
    } else {
        Status::Success
    })
}

/// The display path and UTF-8 text of a skill's SKILL.md, for snippets.
pub(crate) fn skill_md_text(db: &Db, skill: SkillSource) -> Option<(String, String)> {
    let file = skill.skill_md(db)?;
    let Contents::Bytes(b) = file.contents(db) else {
        return None;
    };
    let text = std::str::from_utf8(b).ok()?;
    Some((format!("{}/{}", skill.display(db), file.rel_path(db)), text.to_owned()))
}

fn summary_line(s: &Summary) -> String {
    let noun = if s.skills == 1 { "skill" } else { "skills" };
    format!(
        "checked {} {noun}: {} ok, {} warnings, {} errors",
        s.skills, s.ok, s.warnings, s.errors
    )
}

//! `skillc check`: validate skills and report diagnostics; `--fix` and `--diff` first run the
//! fix engine (`cli::fix`).

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use rayon::prelude::*;

use super::{CheckArgs, Format, Printer, Status};
use crate::db::{Contents, Db, Settings, SkillSource, load};
use crate::diag::{self, Counts, Diagnostic, RenderOptions, Severity};
use crate::fix;
use crate::messages::check;
use crate::model::{Limits, Mode};
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

/// One checked path: display path, skill name, diagnostics with whether `--fix` fixes each,
/// and the skill input (absent for path-level problems).
struct Entry {
    path: String,
    name: Option<String>,
    diagnostics: Vec<Diagnostic>,
    fixable: Vec<bool>,
    skill: Option<SkillSource>,
}

pub(crate) fn run(args: &CheckArgs, out: &mut Printer) -> anyhow::Result<Status> {
    let mode = if args.strict { Mode::Strict } else { Mode::Default };
    // Limits come from the project's pipeline.toml, found upwards from the current folder as
    // `plan` and `build` find it (and as ruff finds its configuration). Without paths, the
    // project's roots are checked at its root; below it, the current folder (as ruff does).
    let cwd = std::env::current_dir()?;
    let project = super::project::load(&cwd, out)?;
    let given = if args.files {
        let owning = super::project::owning_skills(&args.paths);
        if owning.is_empty() {
            out.note("no skill among the files given");
            return Ok(Status::Success);
        }
        owning
    } else {
        args.paths.clone()
    };
    let (base, paths) = if project.root == cwd {
        project.inputs(&given)
    } else {
        (PathBuf::new(), super::project::default_paths(&given))
    };
    let suppress = project.config.check.matcher(&project.root, &cwd.join(&base));
    let ignored = |file: &str, code: &str| suppress.ignores(file, code);
    let options = fix::Options {
        mode,
        rename_folder: args.rename_folder,
    };
    if args.fix || args.diff {
        let totals = super::fix::run(&base, &paths, project.config.limits, options, args.diff, &ignored, out)?;
        if args.diff {
            out.flush()?;
            // As `cargo fmt --check`: 1 when something would change; and, as `check`, 1
            // when an error would remain that `--fix` cannot fix.
            let loaded = load_skills(&base, &paths, mode, project.config.limits, false, &[])?;
            let unfixable = entries(&loaded, options, &ignored)
                .iter()
                .flat_map(|e| e.diagnostics.iter().zip(&e.fixable))
                .filter(|(d, fixable)| d.severity == Severity::Error && !**fixable)
                .count();
            if unfixable > 0 {
                out.note(&format!(
                    "error: {} that `--fix` cannot fix; `skillc check` shows where",
                    super::output::count(unfixable, "error")
                ));
            }
            return Ok(if totals.skills > 0 || unfixable > 0 {
                Status::Failure
            } else {
                Status::Success
            });
        }
        out.note(&if totals.edits == 0 {
            "nothing to fix".to_owned()
        } else {
            format!(
                "fixed {} in {}",
                super::output::count(totals.edits, "problem"),
                super::output::count(totals.skills, "skill")
            )
        });
    }
    let loaded = load_skills(&base, &paths, mode, project.config.limits, false, &[])?;
    let entries = entries(&loaded, options, &ignored);
    let summary = summarize(&entries);
    let any_error = summary.errors > 0;
    let any_warning = summary.warnings > 0;
    render(args, out, &loaded.db, &entries, summary)?;
    out.flush()?;
    Ok(if any_error || (args.deny_warnings && any_warning) {
        Status::Failure
    } else {
        Status::Success
    })
}

/// Checks every loaded skill: one entry per path problem, then one per skill, in path order;
/// suppressed diagnostics are left out.
fn entries(loaded: &Loaded, options: fix::Options, ignored: &(dyn Fn(&str, &str) -> bool + Sync)) -> Vec<Entry> {
    let db = &loaded.db;
    let settings = loaded.settings;
    let mut entries: Vec<Entry> = loaded
        .problems
        .iter()
        .filter(|p| !ignored(&p.file, p.rule.code))
        .map(|p| Entry {
            path: p.file.clone(),
            name: None,
            diagnostics: vec![p.clone()],
            fixable: vec![false],
            skill: None,
        })
        .collect();
    let checked: Vec<Entry> = loaded
        .skills
        .par_iter()
        .map_with(db.clone(), |db, s| {
            let r = skill::check_skill(db, *s, settings).clone();
            let fixable = fixable(db, *s, &r.diagnostics, options, ignored);
            let (diagnostics, fixable): (Vec<Diagnostic>, Vec<bool>) = r
                .diagnostics
                .into_iter()
                .zip(fixable)
                .filter(|(d, _)| !ignored(&d.file, d.rule.code))
                .unzip();
            Entry {
                path: s.display(db).clone(),
                name: r.name,
                diagnostics,
                fixable,
                skill: Some(*s),
            }
        })
        .collect();
    entries.extend(checked);
    entries
}

/// Which of a skill's diagnostics `check --fix` fixes: those of SKILL.md's text by asking the
/// fix engine (only when a fixable rule fired), `SK015` by renaming the file.
fn fixable(
    db: &Db,
    skill: SkillSource,
    diags: &[Diagnostic],
    options: fix::Options,
    ignored: &(dyn Fn(&str, &str) -> bool + Sync),
) -> Vec<bool> {
    let mut marks = vec![false; diags.len()];
    if !diags.iter().any(|d| fix::rule_fix(d.rule.code).is_some()) {
        return marks;
    }
    let Some(file) = skill.skill_md(db) else {
        return marks;
    };
    let shown = format!("{}/{}", skill.display(db), file.rel_path(db));
    if let Contents::Bytes(bytes) = file.contents(db) {
        let target = fix::Target {
            file: &shown,
            dir_name: skill.dir_name(db),
            lowercase_file: file.rel_path(db) == "skill.md",
        };
        let text_marks = fix::fixable_in(&target, bytes, options, &|code| ignored(&shown, code));
        for (m, t) in marks.iter_mut().zip(text_marks) {
            *m = t;
        }
    }
    for (m, d) in marks.iter_mut().zip(diags) {
        if d.rule.code == "SK015" {
            *m = true;
        }
    }
    marks
}

fn summarize(entries: &[Entry]) -> check::Summary {
    let mut summary = check::Summary::default();
    for e in entries {
        summary.add(check::Status::of(Counts::of(&e.diagnostics)));
        summary.fixable += e.fixable.iter().filter(|f| **f).count();
    }
    summary
}

/// The diagnostics shown: with `--quiet`, errors only.
fn shown<'a>(args: &'a CheckArgs, e: &'a Entry) -> impl Iterator<Item = &'a Diagnostic> + 'a {
    e.diagnostics
        .iter()
        .filter(move |d| !args.quiet || d.severity == Severity::Error)
}

fn render(
    args: &CheckArgs,
    out: &mut Printer,
    db: &Db,
    entries: &[Entry],
    summary: check::Summary,
) -> anyhow::Result<()> {
    match args.format {
        Format::Json => {
            let report = check::Report {
                schema: check::SCHEMA,
                mode: if args.strict { "strict" } else { "default" },
                skills: entries
                    .iter()
                    .map(|e| check::Entry {
                        path: &e.path,
                        name: e.name.as_deref(),
                        status: check::Status::of(Counts::of(&e.diagnostics)),
                        diagnostics: e
                            .diagnostics
                            .iter()
                            .zip(&e.fixable)
                            .map(|(diagnostic, f)| check::Diag {
                                diagnostic,
                                fixable: *f,
                            })
                            .collect(),
                    })
                    .collect(),
                summary,
            };
            out.line(&serde_json::to_string_pretty(&report).context("serializing the report")?)?;
        }
        Format::Sarif => {
            let log = super::sarif::check_log(entries.iter().flat_map(|e| shown(args, e)));
            out.line(&serde_json::to_string_pretty(&log).context("serializing SARIF")?)?;
        }
        Format::Github => {
            for d in entries.iter().flat_map(|e| shown(args, e)) {
                out.line(&super::github::diagnostic(d))?;
            }
        }
        Format::Short => {
            for d in entries.iter().flat_map(|e| shown(args, e)) {
                out.line(&diag::render_short(d))?;
            }
            out.line(&summary_line(&summary, entries, args))?;
        }
        Format::Human => {
            let options = RenderOptions { color: out.color };
            for e in entries {
                let text = e.skill.and_then(|s| skill_md_text(db, s));
                let indexed = text.as_ref().map(|(path, t)| (path, diag::SourceText::new(t)));
                for d in shown(args, e) {
                    let source = indexed.as_ref().filter(|(path, _)| **path == d.file).map(|(_, t)| t);
                    out.write(&diag::render_human(d, source, options))?;
                    out.write("\n\n")?;
                }
            }
            out.line(&summary_line(&summary, entries, args))?;
        }
    }
    Ok(())
}

/// The display path and text of a skill's SKILL.md, for snippets (bytes that are not UTF-8
/// shown as `?`, at their offsets: `SK002`'s snippet shows the line of the bad byte).
pub(crate) fn skill_md_text(db: &Db, skill: SkillSource) -> Option<(String, String)> {
    let file = skill.skill_md(db)?;
    let Contents::Bytes(b) = file.contents(db) else {
        return None;
    };
    Some((
        format!("{}/{}", skill.display(db), file.rel_path(db)),
        diag::lossy_same_offsets(b),
    ))
}

/// `checked 3 skills: 1 ok, 1 with warnings, 1 with errors (2 errors, 3 warnings)`: skills by
/// their worst diagnostic, then every diagnostic counted (a skill with errors may have
/// warnings too, and they are printed above).
fn summary_line(s: &check::Summary, entries: &[Entry], args: &CheckArgs) -> String {
    use super::output::count;
    let (mut errors, mut warnings) = (0, 0);
    for d in entries.iter().flat_map(|e| &e.diagnostics) {
        match d.severity {
            Severity::Error => errors += 1,
            Severity::Warning => warnings += 1,
            _ => {}
        }
    }
    let mut line = format!(
        "checked {}: {} ok, {} with warnings, {} with errors",
        count(s.skills, "skill"),
        s.ok,
        s.warnings,
        s.errors
    );
    if errors + warnings > 0 {
        line.push_str(&format!(
            " ({}, {})",
            count(errors, "error"),
            count(warnings, "warning")
        ));
    }
    if s.fixable > 0 && !args.fix {
        let strict = if args.strict { " --strict" } else { "" };
        line.push_str(&format!("; {} fixable with `skillc check --fix{strict}`", s.fixable));
    }
    line
}

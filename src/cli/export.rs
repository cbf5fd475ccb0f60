//! `skillc export`: the IO around [`crate::export`] — resolve the skill (a path, or a name in
//! the project's skills roots), check it, and write the zip or the bare SKILL.md atomically.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use super::check::{Loaded, load_skills};
use super::{Printer, Status, project};
use crate::db::{Contents, Db, SkillSource};
use crate::diag::{self, Diagnostic, RenderOptions, Severity};
use crate::emit::write::write_atomic;
use crate::export::{self, ZipFile};
use crate::model::Limits;
use crate::model::Mode;
use crate::skill;

/// What `export` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// A zip holding `<name>/SKILL.md` and the support files.
    Zip,
    /// The bare SKILL.md.
    Md,
}

/// Arguments of `skillc export`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "The export's frontmatter has only the six standard keys; every other key is moved under \
`metadata` as a string, so the reference validator (`agentskills validate`) accepts it.\n\
Exit status: 0 exported, 1 the skill fails `skillc check` (see --force), 2 the command could not run."
)]
pub struct ExportArgs {
    /// A skill folder or SKILL.md, or the `name` of a skill in the project's skills roots.
    pub skill: String,
    /// Where to write (default `<name>.zip`, or `<name>.md` with `--format md`); `-` writes to
    /// standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// A zip of the skill folder, or the bare SKILL.md.
    #[arg(long, value_enum, default_value_t = ExportFormat::Zip)]
    pub format: ExportFormat,
    /// Export even when the skill fails `skillc check`.
    #[arg(long)]
    pub force: bool,
}

pub(crate) fn run(args: &ExportArgs, out: &mut Printer) -> anyhow::Result<Status> {
    let cwd = std::env::current_dir()?;
    let (loaded, skill) = resolve(args, &cwd, out)?;
    let db = &loaded.db;
    let settings = loaded.settings;
    let check = skill::check_skill(db, skill, settings);
    let errors: Vec<&Diagnostic> = check
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    let display = skill.display(db).clone();
    if !errors.is_empty() {
        print_diags(out, db, skill, errors.iter().copied());
        let d = Diagnostic::new(
            &crate::rules::EX001,
            display.clone(),
            diag::Span::at(diag::Pos::START),
            format!(
                "the skill fails `skillc check` ({})",
                super::output::count(errors.len(), "error")
            ),
        )
        .help("fix the errors above, or pass --force to export anyway");
        if !args.force {
            out.note(&diag::render_short(&d));
            return Ok(Status::Failure);
        }
        out.note(&diag::render_short(&d.severity(Severity::Warning)));
    }

    let Some(md_file) = skill.skill_md(db) else {
        anyhow::bail!("{display} has no SKILL.md");
    };
    let Some(bytes) = md_file.contents(db).bytes() else {
        anyhow::bail!("{display}/SKILL.md cannot be read");
    };
    let text = std::str::from_utf8(bytes).with_context(|| format!("{display}/SKILL.md is not UTF-8"))?;
    let name = check.name.clone().unwrap_or_else(|| skill.dir_name(db).clone());
    let exported = export::standard_skill_md(&format!("{display}/{}", md_file.rel_path(db)), text, &name);
    let Some(new_md) = exported.text else {
        print_diags(out, db, skill, exported.diagnostics.iter());
        anyhow::bail!("{display}: the frontmatter cannot be read, so it cannot be exported");
    };
    // The result must be valid as it stands (e.g. a skill's own `metadata.skillc-export`,
    // the key the export records itself under, would be repeated).
    let invalid: Vec<&Diagnostic> = exported
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    if !invalid.is_empty() && !args.force {
        for d in &invalid {
            out.note(&diag::render_short(d));
        }
        out.note(&format!(
            "error: the exported SKILL.md of {display} would not be valid (above); nothing written (`metadata.{}` is reserved by skillc export); --force exports it anyway",
            export::MARKER
        ));
        return Ok(Status::Failure);
    }
    let mut notes: Vec<Diagnostic> = exported.diagnostics;

    // The skill's folder: the zip's files, and what `-o` must never overwrite.
    let dir = find_dir(skill, db, &cwd, &args.skill);
    let bytes = match args.format {
        ExportFormat::Md => new_md.into_bytes(),
        ExportFormat::Zip => {
            let files = zip_entries(skill, db, new_md, &dir, &mut notes);
            export::zip(&name, &files).context("building the zip")?
        }
    };
    for n in &notes {
        out.note(&diag::render_short(n));
    }
    write_target(args, &name, &display, &bytes, dir.as_deref(), out)?;
    out.flush()?;
    Ok(Status::Success)
}

/// The skill asked for: a folder or SKILL.md given as a path (the outermost skill of a folder
/// holding nested ones), or a skill of the project's roots by name.
fn resolve(args: &ExportArgs, cwd: &Path, out: &mut Printer) -> anyhow::Result<(Loaded, SkillSource)> {
    let as_path = PathBuf::from(&args.skill);
    let loaded = if as_path.exists() {
        load_skills(Path::new(""), &[as_path], Mode::Default, Limits::default(), true, &[])?
    } else {
        let project = project::load(cwd, out)?;
        let (base, paths) = project.inputs(&[]);
        let paths: Vec<PathBuf> = paths.into_iter().filter(|p| base.join(p).exists()).collect();
        anyhow::ensure!(
            !paths.is_empty(),
            "`{}` is not a path, and the project has no skills folder to look it up in",
            args.skill
        );
        let limits = project.config.limits;
        load_skills(&base, &paths, Mode::Default, limits, true, &[])?
    };
    let (db, settings) = (&loaded.db, loaded.settings);
    let mut candidates: Vec<SkillSource> = loaded.skills.clone();
    if Path::new(&args.skill).exists() {
        // A folder holding nested skills: the outermost one is the skill asked for.
        let displays: Vec<String> = candidates.iter().map(|s| s.display(db).clone()).collect();
        candidates.retain(|s| {
            let d = s.display(db);
            !displays.iter().any(|o| d.starts_with(&format!("{o}/")))
        });
    } else {
        candidates.retain(|s| {
            let name = skill::check_skill(db, *s, settings).name.clone();
            name.as_deref() == Some(args.skill.as_str()) || (name.is_none() && s.dir_name(db) == &args.skill)
        });
    }
    let skill = match candidates.as_slice() {
        [one] => *one,
        [] => anyhow::bail!(
            "no skill named `{}` found; give a skill folder, or a name from `skillc check`",
            args.skill
        ),
        many => {
            let list: Vec<String> = many.iter().map(|s| s.display(db).clone()).collect();
            anyhow::bail!(
                "`{}` names {} skills ({}); give one folder instead",
                args.skill,
                many.len(),
                list.join(", ")
            );
        }
    };

    Ok((loaded, skill))
}

/// The entries of the zip: the exported SKILL.md, then every support file that is exported
/// (the others are noted as skipped), with its mode from `dir` on disk.
fn zip_entries(
    skill: SkillSource,
    db: &Db,
    skill_md: String,
    dir: &Option<PathBuf>,
    notes: &mut Vec<Diagnostic>,
) -> Vec<ZipFile> {
    let display = skill.display(db);
    let mut files = vec![ZipFile {
        rel_path: "SKILL.md".into(),
        bytes: skill_md.into_bytes(),
        executable: false,
    }];
    for f in skill.files(db) {
        let rel = f.rel_path(db);
        let shown = format!("{display}/{rel}");
        if !export::is_exported(rel) {
            notes.push(export::skipped(&shown, "hidden file or folder"));
            continue;
        }
        match f.contents(db) {
            Contents::Bytes(b) => files.push(ZipFile {
                rel_path: rel.clone(),
                bytes: b.to_vec(),
                executable: dir.as_ref().is_some_and(|d| is_executable(&d.join(rel))),
            }),
            Contents::TooLarge { size } => {
                notes.push(export::skipped(&shown, &format!("{size} bytes, over the size limit")))
            }
            Contents::SymlinkEscape { target } => notes.push(export::skipped(
                &shown,
                &format!("a link to `{target}`, outside the skill"),
            )),
            Contents::Unreadable { error } => notes.push(export::skipped(&shown, error)),
            Contents::Unread { .. } => {}
        }
    }
    files
}

/// Writes the export to `-o` (default `<name>.zip` or `<name>.md`; `-` is standard output),
/// atomically; never over anything but a regular file, and never over a file of the skill's
/// own folder `dir` (`-o SKILL.md --format md` there would replace the source being exported).
fn write_target(
    args: &ExportArgs,
    name: &str,
    display: &str,
    bytes: &[u8],
    dir: Option<&Path>,
    out: &mut Printer,
) -> anyhow::Result<()> {
    let target = args.output.clone().unwrap_or_else(|| {
        PathBuf::from(match args.format {
            ExportFormat::Zip => format!("{name}.zip"),
            ExportFormat::Md => format!("{name}.md"),
        })
    });
    if target == Path::new("-") {
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(bytes)?;
        stdout.flush()?;
    } else {
        // An existing file is replaced; never a device, a FIFO, a folder or a symbolic link.
        if let Ok(m) = std::fs::symlink_metadata(&target)
            && !m.is_file()
        {
            anyhow::bail!(
                "{} exists and is not a regular file; choose another -o (or `-o -` for standard output)",
                target.display()
            );
        }
        if target.exists()
            && let Some(dir) = dir.and_then(|d| d.canonicalize().ok())
            && let Some(parent) = absolute_parent(&target)
            && parent.starts_with(&dir)
        {
            anyhow::bail!(
                "{} is a file of the skill being exported, and would be replaced; choose another -o (or `-o -` for standard output)",
                target.display()
            );
        }
        write_atomic(&target, bytes, Some(0o644)).with_context(|| format!("writing {}", target.display()))?;
        out.note(&format!("exported {display} as {}", target.display()));
    }
    Ok(())
}

/// The canonical folder `target` would be written into, when it exists.
fn absolute_parent(target: &Path) -> Option<PathBuf> {
    let parent = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    parent.canonicalize().ok()
}

fn print_diags<'a>(out: &mut Printer, db: &Db, skill: SkillSource, diags: impl Iterator<Item = &'a Diagnostic>) {
    let text = super::check::skill_md_text(db, skill);
    let source = text.as_ref().map(|(p, t)| (p, diag::SourceText::new(t)));
    for d in diags {
        let src = source.as_ref().filter(|(p, _)| **p == d.file).map(|(_, t)| t);
        out.note(&diag::render_human(d, src, RenderOptions { color: out.color }));
    }
}

/// The skill's folder on disk (for file modes): the path given, or the root-relative display.
fn find_dir(skill: SkillSource, db: &Db, cwd: &Path, given: &str) -> Option<PathBuf> {
    let given = Path::new(given);
    if given.is_dir() {
        return Some(given.to_path_buf());
    }
    if given.is_file() {
        return given.parent().map(Path::to_path_buf);
    }
    let root = project::find_root(cwd);
    Some(root.join(skill.display(db)))
}

/// A regular file (not a link) with an execute bit.
fn is_executable(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file() && crate::emit::write::is_executable(&m))
}

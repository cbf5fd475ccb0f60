//! `skillc check --fix` and `--diff`: runs the fix engine ([`crate::fix`]) over every skill
//! found, then writes each changed SKILL.md atomically (a temporary file renamed over it,
//! its permissions kept) and makes the renames — or, with `--diff`, prints what would change
//! as a unified diff and writes nothing.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use rayon::prelude::*;

use super::Printer;
use crate::db::{Contents, load};
use crate::emit::write::write_atomic;
use crate::fix::{self, Applied, FolderChange, Options, Target};
use crate::model::Limits;

/// What `--fix` (or `--diff`) found to do for one skill.
struct Planned {
    /// The SKILL.md on disk.
    path: PathBuf,
    /// Its path as shown.
    shown: String,
    dir: PathBuf,
    old: String,
    fixed: fix::Fixed,
}

/// The totals of a fix run.
#[derive(Debug, Default)]
pub(crate) struct Totals {
    /// Skills changed (or, with `--diff`, that would be).
    pub skills: usize,
    /// Edits and renames made.
    pub edits: usize,
}

/// The skills found under `paths` and what fixing them would do. `ignored(file, code)` says
/// which codes are suppressed for a file (they are not fixed).
fn plan(
    base: &Path,
    paths: &[PathBuf],
    limits: Limits,
    options: Options,
    ignored: &(dyn Fn(&str, &str) -> bool + Sync),
) -> anyhow::Result<Vec<Planned>> {
    let found = load::discover(base, paths, &[])?;
    let planned = found
        .skills
        .par_iter()
        .filter_map(|f| {
            let name = f.skill_md.as_ref()?;
            let path = f.dir.join(name);
            // A linked SKILL.md is not replaced by a file: the link is the author's choice.
            if std::fs::symlink_metadata(&path).ok()?.file_type().is_symlink() {
                return None;
            }
            let Contents::Bytes(bytes) = load::read_file(&path, &f.dir, limits.skill_md_bytes, true) else {
                return None;
            };
            let dir_name = f
                .dir
                .canonicalize()
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_default();
            let shown = format!("{}/{name}", f.display);
            let target = Target {
                file: &shown,
                dir_name: &dir_name,
                lowercase_file: name == "skill.md",
            };
            let fixed = fix::fix_skill_md(&target, &bytes, options, &|code| ignored(&shown, code));
            if fixed.applied.is_empty() {
                return None;
            }
            Some(Planned {
                path,
                dir: f.dir.clone(),
                old: String::from_utf8_lossy(&bytes).into_owned(),
                shown,
                fixed,
            })
        })
        .collect();
    Ok(planned)
}

/// The unified diff of one skill's changes, `git diff` style (`a/` and `b/` paths, renames as
/// `rename from`/`rename to`).
fn diff(p: &Planned) -> String {
    let new_shown = renamed_shown(p);
    let mut out = format!("diff --git a/{} b/{new_shown}\n", p.shown);
    if new_shown != p.shown {
        out.push_str(&format!("rename from {}\nrename to {new_shown}\n", p.shown));
    }
    if let Some(new) = &p.fixed.text {
        let text = similar::TextDiff::from_lines(p.old.as_str(), new.as_str())
            .unified_diff()
            .context_radius(3)
            .header(&format!("a/{}", p.shown), &format!("b/{new_shown}"))
            .to_string();
        out.push_str(&text);
    }
    out
}

/// The SKILL.md's shown path after the renames.
fn renamed_shown(p: &Planned) -> String {
    let mut shown = p.shown.clone();
    for c in &p.fixed.changes {
        match c {
            FolderChange::RenameSkillMd => {
                if let Some(dir) = shown.strip_suffix("skill.md") {
                    shown = format!("{dir}SKILL.md");
                }
            }
            FolderChange::RenameFolder(name) => {
                let file = shown.rsplit('/').next().unwrap_or("SKILL.md").to_owned();
                let mut parts: Vec<&str> = shown.split('/').collect();
                parts.pop();
                parts.pop();
                parts.push(name);
                parts.push(&file);
                shown = parts.join("/");
            }
        }
    }
    shown
}

/// Writes one skill's changes: the text atomically, then the renames. A rename that cannot be
/// made (its target exists) is reported and skipped; nothing else is undone.
fn apply(p: &Planned, out: &mut Printer) -> anyhow::Result<usize> {
    let mut made = 0;
    let mut path = p.path.clone();
    if let Some(text) = &p.fixed.text {
        let mode = file_mode(&path);
        write_atomic(&path, text.as_bytes(), mode).with_context(|| format!("writing {}", path.display()))?;
        made += p.fixed.applied.iter().filter(|a| !is_rename(a)).count();
    }
    for c in &p.fixed.changes {
        match c {
            FolderChange::RenameSkillMd => {
                let to = path.with_file_name("SKILL.md");
                // Through a temporary name: on a case-insensitive file system `skill.md` and
                // `SKILL.md` are one file.
                let tmp = path.with_file_name(".skillc-rename-SKILL.md");
                std::fs::rename(&path, &tmp).with_context(|| format!("renaming {}", path.display()))?;
                std::fs::rename(&tmp, &to).with_context(|| format!("renaming {}", tmp.display()))?;
                path = to;
                made += 1;
            }
            FolderChange::RenameFolder(name) => {
                let to = p.dir.with_file_name(name);
                let cwd = std::env::current_dir()?;
                let inside_cwd = p.dir.canonicalize().is_ok_and(|d| cwd.starts_with(d));
                if to.exists() || inside_cwd || p.dir.file_name().is_none() {
                    out.note(&format!(
                        "{}: not renamed to `{name}`: {}",
                        p.dir.display(),
                        if inside_cwd {
                            "it holds the current folder"
                        } else {
                            "that name is taken"
                        }
                    ));
                    continue;
                }
                std::fs::rename(&p.dir, &to).with_context(|| format!("renaming {}", p.dir.display()))?;
                made += 1;
            }
        }
    }
    Ok(made)
}

fn is_rename(a: &Applied) -> bool {
    a.code == "SK015" || a.what.starts_with("renamed the folder")
}

#[cfg(unix)]
fn file_mode(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).ok().map(|m| m.permissions().mode() & 0o7777)
}

#[cfg(not(unix))]
fn file_mode(_: &Path) -> Option<u32> {
    None
}

/// Runs `--fix` (`diff_only` false) or `--diff` (true) and prints what was (or would be) done:
/// one `fixed` line per edit on standard error, or the diffs on standard output.
pub(crate) fn run(
    base: &Path,
    paths: &[PathBuf],
    limits: Limits,
    options: Options,
    diff_only: bool,
    ignored: &(dyn Fn(&str, &str) -> bool + Sync),
    out: &mut Printer,
) -> anyhow::Result<Totals> {
    let planned = plan(base, paths, limits, options, ignored)?;
    let mut totals = Totals::default();
    for p in &planned {
        totals.skills += 1;
        if diff_only {
            // On a terminal, control and bidirectional characters are escaped so that the diff
            // shows what the file holds; piped, it stays a patch that applies.
            let text = diff(p);
            if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
                out.write(&crate::diag::printable_lines(&text))?;
            } else {
                out.write(&text)?;
            }
            totals.edits += p.fixed.applied.len();
            continue;
        }
        totals.edits += apply(p, out)?;
        for a in &p.fixed.applied {
            out.note(&format!("fixed {}: {} {}", p.shown, a.code, a.what));
        }
    }
    Ok(totals)
}

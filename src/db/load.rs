//! Finding skills on disk and reading them into database inputs. The only place (with `emit`,
//! `watch` and `cli`) that touches the file system.
//!
//! A path may be a skill folder, a SKILL.md file, or any folder, searched recursively: every
//! folder holding a `SKILL.md` (or `skill.md`) is a skill, nested skills included. A skill's
//! support files are the files under its folder that do not belong to a nested skill.
//! Symbolic links are never followed out of a skill folder.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use crate::db::{Contents, Db, SkillSource, SourceFile};
use crate::diag::{Diagnostic, Pos, Span};
use crate::model::{Limits, SKIPPED_DIRS};
use crate::rules;
pub use listing::{Disk, Lister};

pub mod listing;

/// A failure of the machine rather than of the input: exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A path given by the user does not exist.
    #[error("{0}: no such file or directory")]
    NotFound(String),
    /// Listing a folder failed.
    #[error("cannot read {path}: {message}")]
    Io {
        /// The path that failed.
        path: String,
        /// The OS error.
        message: String,
    },
}

/// A skill folder found on disk, not yet read.
#[derive(Clone, Debug)]
pub struct FoundSkill {
    /// Absolute or user-relative path of the folder.
    pub dir: PathBuf,
    /// The folder as shown to the user.
    pub display: String,
    /// File name of the skill file (`SKILL.md` or `skill.md`), when present.
    pub skill_md: Option<String>,
    /// Support files: path relative to the folder (`/`-separated) and path on disk.
    pub files: Vec<(String, PathBuf)>,
    /// Entries under the folder that could not be listed, with the error.
    pub unreadable: Vec<(String, String)>,
}

/// What a search found.
#[derive(Debug, Default)]
pub struct Discovered {
    /// The skills, sorted by display path, each once.
    pub skills: Vec<FoundSkill>,
    /// Problems with the paths themselves (`SK001` no skill in a folder, `SK016` not a skill).
    pub problems: Vec<Diagnostic>,
}

fn display_of(path: &Path) -> String {
    let mut s = String::new();
    for c in path.components() {
        let part = match c {
            Component::CurDir => continue,
            Component::RootDir => {
                s.push('/');
                continue;
            }
            other => other.as_os_str().to_string_lossy(),
        };
        if !s.is_empty() && !s.ends_with('/') {
            s.push('/');
        }
        s.push_str(&part);
    }
    if s.is_empty() { ".".to_owned() } else { s }
}

fn is_skill_file_name(name: &str) -> bool {
    name == "SKILL.md" || name == "skill.md"
}

/// Finds the skills under `paths`, which are relative to `base` (or absolute); paths are
/// displayed as given. `exclude` lists folders never searched (the `out/` folder).
///
/// # Errors
/// [`LoadError::NotFound`] when a path does not exist; [`LoadError::Io`] when a folder cannot
/// be listed.
pub fn discover(base: &Path, paths: &[PathBuf], exclude: &[PathBuf]) -> Result<Discovered, LoadError> {
    discover_with(base, paths, exclude, &Disk)
}

/// Like [`discover`], listing folders with `lister` (a build passes one that trusts the
/// record of the last listing of each unchanged folder: [`listing::Cached`]).
///
/// # Errors
/// As [`discover`].
pub fn discover_with(
    base: &Path,
    paths: &[PathBuf],
    exclude: &[PathBuf],
    lister: &dyn Lister,
) -> Result<Discovered, LoadError> {
    let mut found = Discovered::default();
    // Point lookups only (the result is sorted below): hashing a path reads its bytes once,
    // while an ordered map compares paths component by component at every level.
    let mut seen = HashSet::new();
    let excluded: Vec<PathBuf> = exclude.iter().filter_map(|p| p.canonicalize().ok()).collect();
    for given in paths {
        let path = &base.join(given);
        let meta = std::fs::metadata(path).map_err(|_| LoadError::NotFound(display_of(given)))?;
        let display = display_of(given);
        if meta.is_file() {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if name.eq_ignore_ascii_case("skill.md") {
                let dir = path
                    .parent()
                    .map(Path::to_path_buf)
                    .filter(|p| !p.as_os_str().is_empty())
                    .unwrap_or_else(|| PathBuf::from("."));
                for skill in walk(&dir, &display_of(&dir), &excluded, true, lister)? {
                    if seen.insert(skill.dir.canonicalize().unwrap_or_else(|_| skill.dir.clone())) {
                        found.skills.push(skill);
                    }
                }
            } else {
                found.problems.push(
                    Diagnostic::new(
                        &rules::SK016,
                        display,
                        Span::at(Pos::START),
                        "not a skill: a file that is not SKILL.md",
                    )
                    .help("pass a skill folder, its SKILL.md, or a folder to search"),
                );
            }
            continue;
        }
        let skills = walk(path, &display, &excluded, false, lister)?;
        // Folders found by the walk are real folders (links are not followed): their canonical
        // path is the canonical root joined with the rest, without a system call per skill.
        let canon_root = path.canonicalize().unwrap_or_else(|_| path.clone());
        if skills.is_empty() {
            found.problems.push(
                Diagnostic::new(
                    &rules::SK001,
                    display,
                    Span::at(Pos::START),
                    "missing SKILL.md: no skill found in this folder",
                )
                .help("a skill is a folder with a SKILL.md file; create one or pass another path"),
            );
        }
        for skill in skills {
            let canon = match skill.dir.strip_prefix(path) {
                Ok(rel) => canon_root.join(rel),
                Err(_) => skill.dir.canonicalize().unwrap_or_else(|_| skill.dir.clone()),
            };
            if seen.insert(canon) {
                found.skills.push(skill);
            }
        }
    }
    found.skills.sort_by(|a, b| a.display.cmp(&b.display));
    Ok(found)
}

/// The folders holding a skill file among `files`, with the file's name (SKILL.md wins over
/// skill.md, as the reference's `find_skill_md` decides).
fn skill_folders(files: &[PathBuf]) -> HashMap<PathBuf, String> {
    let mut skill_dirs: HashMap<PathBuf, String> = HashMap::new();
    for file in files {
        let name = file.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        if is_skill_file_name(&name)
            && let Some(parent) = file.parent()
        {
            // SKILL.md wins over skill.md (the reference's `find_skill_md`).
            let slot = skill_dirs
                .entry(parent.to_path_buf())
                .or_insert_with(|| name.to_string());
            if name == "SKILL.md" {
                *slot = name.to_string();
            }
        }
    }
    skill_dirs
}

/// A skill found for each folder of `skill_dirs` under `root` (shown as `display`), its
/// files not yet assigned.
fn found_skills(root: &Path, display: &str, skill_dirs: &HashMap<PathBuf, String>) -> HashMap<PathBuf, FoundSkill> {
    skill_dirs
        .iter()
        .map(|(dir, md)| {
            let rel = dir.strip_prefix(root).unwrap_or(Path::new(""));
            let disp = if rel.as_os_str().is_empty() {
                display.to_owned()
            } else {
                format!("{display}/{}", display_of(rel))
            };
            let disp = disp.strip_prefix("./").map(str::to_owned).unwrap_or(disp);
            (
                dir.clone(),
                FoundSkill {
                    dir: dir.clone(),
                    display: disp,
                    skill_md: (!md.is_empty()).then(|| md.clone()),
                    files: Vec::new(),
                    unreadable: Vec::new(),
                },
            )
        })
        .collect()
}

/// Entries that could not be listed: path and the OS error.
type Unreadable = Vec<(PathBuf, String)>;

/// Walks `dir` depth-first, entries in name order (as `walkdir` with `sort_by_file_name`
/// yields them), never into a folder `keep` refuses; files (and links) go to `files`.
fn walk_dir(
    dir: &Path,
    lister: &dyn Lister,
    keep: &(dyn Fn(&Path, &std::ffi::OsStr) -> bool + Sync),
    files: &mut Vec<PathBuf>,
    unreadable: &mut Unreadable,
) {
    let entries = match lister.list(dir) {
        Ok(e) => e,
        Err(e) => {
            unreadable.push((dir.to_path_buf(), e.to_string()));
            return;
        }
    };
    for e in entries {
        if let Some(sub) = place(listing::child(dir, &e), e.dir, &e.name, keep, files) {
            walk_dir(&sub, lister, keep, files, unreadable);
        }
    }
}

/// Sorts one listed entry: a file goes to `files`; a folder `keep` accepts is returned to be
/// walked, and one named SKILL.md also goes to `files`, so it makes a skill rejected with
/// SK044 rather than one skipped without a word.
fn place(
    path: PathBuf,
    dir: bool,
    name: &std::ffi::OsStr,
    keep: &(dyn Fn(&Path, &std::ffi::OsStr) -> bool + Sync),
    files: &mut Vec<PathBuf>,
) -> Option<PathBuf> {
    if !dir {
        files.push(path);
        return None;
    }
    if !keep(&path, name) {
        return None;
    }
    if is_skill_file_name(&name.to_string_lossy()) {
        files.push(path.clone());
    }
    Some(path)
}

/// Walks `root`. With `only_root`, `root` is the skill (its nested skills are still excluded
/// from its files but not reported).
fn walk(
    root: &Path,
    display: &str,
    excluded: &[PathBuf],
    only_root: bool,
    lister: &dyn Lister,
) -> Result<Vec<FoundSkill>, LoadError> {
    // Entries that could not be listed (a folder without permission, a path too long): they
    // become errors of the skill that holds them, and the rest of the run goes on.
    let mut unreadable: Unreadable = Vec::new();
    // Keyed by folder for the per-file lookups below (hashed: see `discover_with`).
    let mut skill_dirs: HashMap<PathBuf, String> = HashMap::new();
    // Entries below the root are never links followed, so their canonical path is the
    // canonical root joined with the rest: no system call per folder.
    let canon_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let keep = |path: &Path, name: &std::ffi::OsStr| {
        if SKIPPED_DIRS.contains(&name.to_string_lossy().as_ref()) {
            return false;
        }
        // Only a folder named like an excluded one can be it: the others need no path built.
        if !excluded.iter().any(|x| x.file_name() == Some(name)) {
            return true;
        }
        let canon = path
            .strip_prefix(root)
            .map(|rel| canon_root.join(rel))
            .unwrap_or_else(|_| path.to_path_buf());
        !excluded.contains(&canon)
    };
    // The root's own entries, then each sub-folder walked in parallel (in name order, as one
    // walk would list them).
    let mut files: Vec<PathBuf> = Vec::new();
    let mut subdirs: Vec<PathBuf> = Vec::new();
    let entries = lister.list(root).map_err(|e| LoadError::Io {
        path: display.to_owned(),
        message: e.to_string(),
    })?;
    for e in entries {
        subdirs.extend(place(listing::child(root, &e), e.dir, &e.name, &keep, &mut files));
    }
    let walked: Vec<(Vec<PathBuf>, Unreadable)> = subdirs
        .par_iter()
        .map(|dir| {
            let mut files = Vec::new();
            let mut unreadable = Vec::new();
            walk_dir(dir, lister, &keep, &mut files, &mut unreadable);
            (files, unreadable)
        })
        .collect();
    for (f, u) in walked {
        files.extend(f);
        unreadable.extend(u);
    }
    skill_dirs.extend(skill_folders(&files));
    if only_root {
        skill_dirs.retain(|d, _| d == root);
        if skill_dirs.is_empty() {
            skill_dirs.insert(root.to_path_buf(), String::new());
        }
    }
    let mut skills = found_skills(root, display, &skill_dirs);
    for file in files {
        // The nearest enclosing skill folder owns the file.
        let owner = file
            .ancestors()
            .skip(1)
            .find(|a| skills.contains_key(*a))
            .map(Path::to_path_buf);
        let Some(owner) = owner else { continue };
        let Some(skill) = skills.get_mut(&owner) else { continue };
        let rel = display_of(file.strip_prefix(&owner).unwrap_or(&file));
        if skill.skill_md.as_deref() == Some(rel.as_str()) {
            continue;
        }
        if !only_root || owner == root {
            skill.files.push((rel, file));
        }
    }
    for (path, message) in unreadable {
        let owner = path
            .ancestors()
            .skip(1)
            .find(|a| skills.contains_key(*a))
            .map(Path::to_path_buf);
        if let Some(skill) = owner.as_ref().and_then(|o| skills.get_mut(o)) {
            let rel = display_of(path.strip_prefix(&skill.dir).unwrap_or(&path));
            skill.unreadable.push((rel, message));
        }
    }
    let mut skills: Vec<FoundSkill> = skills.into_values().collect();
    // Sorted so that the result never depends on the map's hash order (any total order does:
    // `discover_with` sorts the skills by display path in the end).
    skills.sort_unstable_by(|a, b| a.dir.as_os_str().cmp(b.dir.as_os_str()));
    Ok(skills)
}

/// A skill read from disk, ready to become database inputs.
#[derive(Debug)]
pub struct ReadSkill {
    /// Where it was found.
    pub found: FoundSkill,
    /// The SKILL.md contents.
    pub skill_md: Option<Contents>,
    /// Support files and what was read of them.
    pub files: Vec<(String, Contents)>,
}

/// Reads one file of a skill, enforcing the size limit and the symlink rule.
pub fn read_file(path: &Path, skill_dir: &Path, limit: u64, read_contents: bool) -> Contents {
    let lmeta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) => return Contents::Unreadable { error: e.to_string() },
    };
    let link = lmeta.file_type().is_symlink();
    if link {
        let target = std::fs::read_link(path)
            .map(|t| t.to_string_lossy().into_owned())
            .unwrap_or_default();
        let inside = match (path.canonicalize(), skill_dir.canonicalize()) {
            (Ok(t), Ok(d)) => t.starts_with(&d),
            // A link that leads back to itself (or round a cycle) is not broken: say which.
            (Err(e), _) if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
                return Contents::Unreadable {
                    error: format!("symbolic link to `{target}` that leads round a loop of links"),
                };
            }
            (Err(_), _) => {
                return Contents::Unreadable {
                    error: format!("broken symbolic link to `{target}`"),
                };
            }
            _ => false,
        };
        if !inside {
            return Contents::SymlinkEscape { target };
        }
    }
    if path.file_name().is_some_and(|n| n.to_str().is_none()) {
        return Contents::Unreadable {
            error: "its name is not valid UTF-8".into(),
        };
    }
    let meta = if link { std::fs::metadata(path) } else { Ok(lmeta) };
    let size = match meta {
        Ok(m) if m.is_dir() => return Contents::Unread { size: 0 },
        // FIFOs, sockets and devices could block or never end: never read them.
        Ok(m) if !m.is_file() => {
            return Contents::Unreadable {
                error: "not a regular file".into(),
            };
        }
        Ok(m) => m.len(),
        Err(e) => return Contents::Unreadable { error: e.to_string() },
    };
    if size > limit {
        return Contents::TooLarge { size };
    }
    if !read_contents {
        // `check` needs no contents, but should agree with `build` on what can be read.
        return match std::fs::File::open(path) {
            Ok(_) => Contents::Unread { size },
            Err(e) => Contents::Unreadable { error: e.to_string() },
        };
    }
    match std::fs::read(path) {
        Ok(b) => Contents::Bytes(Arc::from(b)),
        Err(e) => Contents::Unreadable { error: e.to_string() },
    }
}

/// Reads the skills in parallel. Support file contents are read only when `read_support`
/// (a build needs them; `check` needs only their sizes).
pub fn read(found: Vec<FoundSkill>, limits: Limits, read_support: bool) -> Vec<ReadSkill> {
    found
        .into_par_iter()
        .map(|f| {
            let skill_md = f.skill_md.as_ref().map(|name| {
                let path = f.dir.join(name);
                if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
                    return Contents::Unreadable {
                        error: "it is a folder, not a file".into(),
                    };
                }
                read_file(&path, &f.dir, limits.skill_md_bytes, true)
            });
            // Over the file-count limit the skill is rejected anyway: do not read its files.
            let read_contents = read_support && f.files.len() < limits.files_per_skill;
            let mut files: Vec<(String, Contents)> = f
                .files
                .iter()
                .map(|(rel, p)| {
                    (
                        rel.clone(),
                        read_file(p, &f.dir, limits.support_file_bytes, read_contents),
                    )
                })
                .collect();
            files.extend(
                f.unreadable
                    .iter()
                    .map(|(rel, e)| (rel.clone(), Contents::Unreadable { error: e.clone() })),
            );
            files.sort_by(|a, b| a.0.cmp(&b.0));
            ReadSkill {
                found: f,
                skill_md,
                files,
            }
        })
        .collect()
}

/// Creates the database inputs for skills read from disk.
pub fn to_inputs(db: &Db, skills: Vec<ReadSkill>) -> Vec<SkillSource> {
    skills
        .into_iter()
        .map(|s| {
            let dir_name = s
                .found
                .dir
                .canonicalize()
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .or_else(|| s.found.dir.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_default();
            let skill_md = match (s.found.skill_md.as_ref(), s.skill_md) {
                (Some(name), Some(c)) => Some(SourceFile::new(db, name.clone(), c)),
                _ => None,
            };
            let files = s
                .files
                .into_iter()
                .map(|(rel, c)| SourceFile::new(db, rel, c))
                .collect();
            SkillSource::new(db, s.found.display.clone(), dir_name, skill_md, files, None)
        })
        .collect()
}

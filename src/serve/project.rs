//! The project around a served catalog: its skills roots, what `skillc.lock` says of where a
//! skill came from, the curator's pins, and the one way a skill leaves the skills root — the
//! archive move (RUNTIME.md §3: `<skills root>-archive/<name>-<UTC time>/`, never a deletion).
//! Shared by `skillc serve` (`DELETE /api/skills/{name}`) and `skillc remove`. IO.
//!
//! The curator (issue 14) owns the archive root and `state.json`; until its module is on
//! main, the move and the pin lookup live here with the same layout and the same fail-closed
//! rule (a `state.json` that cannot be read pins every skill).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::catalog::{Annotation, Annotations, Catalog};
use crate::import::{self, lock};

/// The project of a served catalog.
#[derive(Clone, Debug)]
pub struct Project {
    /// The project root (`pipeline.toml`, `skillc.lock`).
    pub root: PathBuf,
    /// Its state folder (`.skillc/`).
    pub state_dir: PathBuf,
    /// Its skills roots, absolute; imports go into the first.
    pub skills_roots: Vec<PathBuf>,
    /// The import settings (`imported_at` is set per request).
    pub import: import::Options,
}

/// The curator's state file, relative to the state folder.
pub const CURATOR_STATE: &str = "curator/state.json";

/// Pinned skills, from the curator's state. `Err` when the state exists but cannot be read:
/// then every skill counts as pinned (fail closed, RUNTIME.md §3).
pub fn pins(state_dir: &Path) -> Result<BTreeSet<String>, String> {
    let path = state_dir.join(CURATOR_STATE);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeSet::new()),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let v: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| format!("{} is not valid JSON: {e}", path.display()))?;
    let skills = v
        .get("skills")
        .and_then(serde_json::Value::as_object)
        .ok_or_else(|| format!("{} has no `skills` object", path.display()))?;
    Ok(skills
        .iter()
        .filter(|(_, s)| s.get("pinned").and_then(serde_json::Value::as_bool) == Some(true))
        .map(|(n, _)| n.clone())
        .collect())
}

/// What the project says of each skill of `catalog`: origin (from `skillc.lock`) and pins.
pub fn annotations(project: Option<&Project>, catalog: &Catalog) -> Annotations {
    let Some(p) = project else {
        return Annotations::new();
    };
    let locked = lock::read(&p.root).unwrap_or_default();
    let pins = pins(&p.state_dir);
    catalog
        .skills()
        .iter()
        .map(|s| {
            let mut a = Annotation::default();
            if let Some(e) = locked.entries.get(&s.name) {
                a.origin = "imported";
                a.source = Some(e.source.clone());
                a.resolved = e.resolved.clone();
                a.imported_at = Some(e.imported_at.clone());
            }
            a.curator.pinned = pins.as_ref().map_or(true, |p| p.contains(&s.name));
            (s.name.clone(), a)
        })
        .collect()
}

/// Whether `name` is a skill name (agentskills.io: lowercase letters, digits and single
/// hyphens, at most 64 characters), hence safe as one path component.
pub fn is_skill_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .split('-')
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()))
}

/// The folder of skill `name` in the project's skills roots (`<root>/<name>` holding a
/// SKILL.md), when there is one.
pub fn find(project: &Project, name: &str) -> Option<(PathBuf, PathBuf)> {
    if !is_skill_name(name) {
        return None;
    }
    project.skills_roots.iter().find_map(|root| {
        let dir = root.join(name);
        let real = dir.symlink_metadata().is_ok_and(|m| m.is_dir());
        (real && (dir.join("SKILL.md").is_file() || dir.join("skill.md").is_file())).then(|| (root.clone(), dir))
    })
}

/// The archive root of a skills root: `<dir>/skills` → `<dir>/skills-archive`.
pub fn archive_root(skills_root: &Path) -> PathBuf {
    let name = skills_root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "skills".into());
    skills_root.with_file_name(format!("{name}-archive"))
}

/// Why a skill was not removed.
#[derive(Debug, thiserror::Error)]
pub enum RemoveError {
    /// No such skill in the skills roots.
    #[error("no skill named `{0}` in the project's skills roots")]
    NotFound(String),
    /// The curator pins it.
    #[error("`{0}` is pinned; unpin it first (`skillc curate unpin {0}`)")]
    Pinned(String),
    /// The curator's state cannot be read, so every skill counts as pinned.
    #[error("the curator's state cannot be read, so every skill counts as pinned: {0}")]
    State(String),
    /// Moving failed.
    #[error("moving {from} to {to}: {message}")]
    Io {
        /// The skill folder.
        from: String,
        /// The archive folder.
        to: String,
        /// The operating system's message.
        message: String,
    },
}

/// A skill moved to the archive.
#[derive(Clone, Debug, serde::Serialize, utoipa::ToSchema)]
pub struct Archived {
    /// The skill name.
    pub name: String,
    /// Where it was (relative to the project root when inside it).
    pub from: String,
    /// Where it is now.
    pub archived_to: String,
}

/// A path relative to the project root when inside it.
pub fn shown(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// Moves a skill folder into its archive root as `<name>-<UTC time>` (`-2`, `-3`, … when
/// taken; nothing in the archive is ever replaced).
///
/// # Errors
/// [`RemoveError::Io`] when the archive folder cannot be made or the move fails.
pub fn archive_folder(
    root: &Path,
    skills_root: &Path,
    dir: &Path,
    name: &str,
    now: jiff::Timestamp,
) -> Result<Archived, RemoveError> {
    let archive = archive_root(skills_root);
    let stamp = now.strftime("%Y%m%dT%H%M%SZ").to_string();
    let io = |to: &Path, e: std::io::Error| RemoveError::Io {
        from: dir.display().to_string(),
        to: to.display().to_string(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(&archive).map_err(|e| io(&archive, e))?;
    let mut n = 1;
    loop {
        let to = if n == 1 {
            archive.join(format!("{name}-{stamp}"))
        } else {
            archive.join(format!("{name}-{stamp}-{n}"))
        };
        if to.symlink_metadata().is_ok() {
            n += 1;
            continue;
        }
        std::fs::rename(dir, &to).map_err(|e| io(&to, e))?;
        return Ok(Archived {
            name: name.to_owned(),
            from: shown(root, dir),
            archived_to: shown(root, &to),
        });
    }
}

/// `skillc remove NAME` / `DELETE /api/skills/{name}`: archives a skill, refusing a pinned one.
///
/// # Errors
/// [`RemoveError`]: not found, pinned (or the pins unreadable), or the move failed.
pub fn remove(project: &Project, name: &str, now: jiff::Timestamp) -> Result<Archived, RemoveError> {
    let (skills_root, dir) = find(project, name).ok_or_else(|| RemoveError::NotFound(name.to_owned()))?;
    match pins(&project.state_dir) {
        Err(e) => return Err(RemoveError::State(e)),
        Ok(p) if p.contains(name) => return Err(RemoveError::Pinned(name.to_owned())),
        Ok(_) => {}
    }
    archive_folder(&project.root, &skills_root, &dir, name, now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skill_names_are_one_safe_component() {
        for ok in ["todo", "a", "web-research", "x1-2"] {
            assert!(is_skill_name(ok), "{ok}");
        }
        for bad in [
            "",
            "..",
            "../x",
            "a/b",
            "A",
            "a--b",
            "-a",
            "a-",
            "a\0b",
            &"a".repeat(65),
            "é",
        ] {
            assert!(!is_skill_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn archive_root_is_beside_the_skills_root() {
        assert_eq!(archive_root(Path::new("/p/skills")), PathBuf::from("/p/skills-archive"));
    }
}

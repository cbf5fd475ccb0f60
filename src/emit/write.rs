//! Writing an [`OutTree`] to disk: atomically, only what changed, removing what is gone.

use std::collections::BTreeSet;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use super::{CATALOG, OutTree, REPORT};

/// Failures while emitting.
#[derive(Debug, thiserror::Error)]
pub enum EmitError {
    /// The output folder holds files skillc did not write; refusing protects the user's data.
    #[error(
        "{0} is not empty and holds no catalog.toml: refusing to write a catalog there (choose another --out, or empty it)"
    )]
    NotOwned(String),
    /// The output folder would contain the project or a skills root.
    #[error("the output folder {0} contains the project or its skills; choose a separate --out")]
    Overlaps(String),
    /// An IO failure.
    #[error("{path}: {source}")]
    Io {
        /// The path involved.
        path: String,
        /// The error.
        #[source]
        source: io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> EmitError + '_ {
    move |source| EmitError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// What a write would change.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// Paths written (new or different bytes).
    pub written: Vec<String>,
    /// Paths removed (no longer in the tree).
    pub removed: Vec<String>,
}

impl Changes {
    /// Nothing to do.
    pub fn is_empty(&self) -> bool {
        self.written.is_empty() && self.removed.is_empty()
    }
}

/// Refuses an output folder that holds the project or a skills root, or foreign files.
///
/// # Errors
/// [`EmitError::Overlaps`] or [`EmitError::NotOwned`].
pub fn guard(out: &Path, protected: &[PathBuf]) -> Result<(), EmitError> {
    let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let out_c = canon(out);
    for p in protected {
        if canon(p).starts_with(&out_c) {
            return Err(EmitError::Overlaps(out.display().to_string()));
        }
    }
    if out.is_dir() {
        let mut entries = std::fs::read_dir(out).map_err(io_err(out))?;
        let empty = entries.next().is_none();
        if !empty && !out.join(CATALOG).is_file() && !out.join(REPORT).is_file() {
            return Err(EmitError::NotOwned(out.display().to_string()));
        }
    }
    Ok(())
}

/// Every file under `dir`, as `/`-separated relative paths.
pub fn list_files(dir: &Path) -> io::Result<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    if !dir.is_dir() {
        return Ok(out);
    }
    for entry in walkdir::WalkDir::new(dir).follow_links(false) {
        let entry = entry.map_err(io::Error::other)?;
        if entry.file_type().is_dir() {
            continue;
        }
        if let Ok(rel) = entry.path().strip_prefix(dir) {
            out.insert(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    Ok(out)
}

/// Compares `tree` with `dir` (bytes and executable bit), ignoring paths in `ignore`.
pub fn changes(dir: &Path, tree: &OutTree, ignore: &[&str]) -> Result<Changes, EmitError> {
    let existing = list_files(dir).map_err(io_err(dir))?;
    let mut c = Changes::default();
    for (path, file) in &tree.files {
        if ignore.contains(&path.as_str()) {
            continue;
        }
        let full = dir.join(path);
        let same = existing.contains(path)
            && std::fs::read(&full).is_ok_and(|b| b == file.bytes)
            && executable(&full) == file.executable;
        if !same {
            c.written.push(path.clone());
        }
    }
    for path in existing {
        if !tree.files.contains_key(&path) && !ignore.contains(&path.as_str()) {
            c.removed.push(path);
        }
    }
    Ok(c)
}

#[cfg(unix)]
fn executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn executable(_: &Path) -> bool {
    false
}

/// Writes `bytes` to `path` atomically (temporary file in the same folder, then rename).
///
/// # Errors
/// Any IO failure, with the path.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: Option<u32>) -> Result<(), EmitError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".skillc-")
        .tempfile_in(dir)
        .map_err(io_err(dir))?;
    tmp.write_all(bytes).map_err(io_err(path))?;
    tmp.as_file().sync_all().map_err(io_err(path))?;
    #[cfg(unix)]
    if let Some(m) = mode {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(m)).map_err(io_err(path))?;
    }
    #[cfg(not(unix))]
    let _ = mode;
    tmp.persist(path).map_err(|e| EmitError::Io {
        path: path.display().to_string(),
        source: e.error,
    })?;
    Ok(())
}

/// Applies `changes` for `tree` to `dir`, then removes folders left empty.
///
/// # Errors
/// Any IO failure, with the path.
pub fn apply(dir: &Path, tree: &OutTree, changes: &Changes) -> Result<(), EmitError> {
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    for path in &changes.written {
        let Some(file) = tree.files.get(path) else { continue };
        let mode = if file.executable { 0o755 } else { 0o644 };
        write_atomic(&dir.join(path), &file.bytes, Some(mode))?;
    }
    for path in &changes.removed {
        let full = dir.join(path);
        std::fs::remove_file(&full).map_err(io_err(&full))?;
        // Remove the folders the file leaves empty, up to `dir`.
        let mut parent = full.parent();
        while let Some(p) = parent {
            if p == dir || std::fs::remove_dir(p).is_err() {
                break;
            }
            parent = p.parent();
        }
    }
    Ok(())
}

/// Appends lines to a file (the audit log), creating it and its folder.
///
/// # Errors
/// Any IO failure, with the path.
pub fn append_lines(path: &Path, lines: &[String]) -> Result<(), EmitError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io_err(path))?;
    let mut buf = String::new();
    for l in lines {
        buf.push_str(l);
        buf.push('\n');
    }
    f.write_all(buf.as_bytes()).map_err(io_err(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_only_changes_and_removes_stale_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut tree = OutTree::default();
        tree.add("catalog.toml", "a", false);
        tree.add("executors/s/x/x.py", "print()", true);
        let c = changes(dir.path(), &tree, &[]).expect("changes");
        assert_eq!(c.written.len(), 2);
        apply(dir.path(), &tree, &c).expect("apply");
        assert!(changes(dir.path(), &tree, &[]).expect("changes").is_empty());
        let mut smaller = OutTree::default();
        smaller.add("catalog.toml", "a", false);
        let c = changes(dir.path(), &smaller, &[]).expect("changes");
        assert_eq!(c.removed, vec!["executors/s/x/x.py".to_owned()]);
        apply(dir.path(), &smaller, &c).expect("apply");
        assert!(!dir.path().join("executors").exists(), "empty folders are removed");
    }

    #[test]
    fn refuses_foreign_folders() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("notes.txt"), "mine").expect("write");
        assert!(matches!(guard(dir.path(), &[]), Err(EmitError::NotOwned(_))));
        let project = dir.path().join("project");
        assert!(matches!(guard(dir.path(), &[project]), Err(EmitError::Overlaps(_))));
    }
}

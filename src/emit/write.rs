//! Writing `out/` to disk: the ownership guard, atomic writes, removals and the audit log.
//! What to write and remove is decided by the build session (`build::session`).

use std::collections::BTreeSet;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::{CATALOG, CATALOG_SIG, REPORT};

/// Failures while emitting.
#[derive(Debug, thiserror::Error)]
pub enum EmitError {
    /// The output folder holds files skillc did not write; refusing protects the user's data.
    #[error(
        "{0} is not empty and is not a skillc catalog (no catalog.toml and catalog.toml.sig): refusing to write there (choose another --out, or empty it)"
    )]
    NotOwned(String),
    /// The output folder holds a catalog this build has no record of writing, signed by
    /// another key: replacing it would delete someone else's catalog.
    #[error(
        "{0} holds a catalog not signed by this build's key ({1}) and skillc has no record of writing it: refusing to replace it (choose another --out, remove the folder, or build with the key that signed it)"
    )]
    NotOurs(String, String),
    /// The output folder would contain the project or a skills root, or lie inside one.
    #[error("the output folder {0} overlaps {1}; choose a separate --out")]
    Overlaps(String, String),
    /// The output folder's path names something that is not a folder (a file, a link): the
    /// build would replace it (the previous `out/` becomes the spare generation).
    #[error("{0} is {1}, not a folder: skillc writes the catalog into a folder it owns there; choose another --out")]
    NotAFolder(String, &'static str),
    /// A symbolic link inside the output folder: writing through it could reach any file.
    #[error("{0} is a symbolic link inside the output folder; skillc never writes through links: remove it")]
    Symlink(String),
    /// An IO failure (the message already includes the OS error).
    #[error("{path}: {message}")]
    Io {
        /// The path involved.
        path: String,
        /// The error.
        message: String,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> EmitError + '_ {
    move |e| EmitError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Refuses an output folder that overlaps the project, a skills root or the state folder,
/// or that holds files but is not a catalog.
///
/// # Errors
/// [`EmitError::Overlaps`] or [`EmitError::NotOwned`].
pub fn guard(out: &Path, project: &Path, skill_roots: &[PathBuf], state: &Path) -> Result<(), EmitError> {
    let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    // `out` may not exist yet: compare its nearest existing ancestor, then the rest.
    let out_c = match out.parent().map(canon) {
        Some(parent) => parent.join(out.file_name().unwrap_or_default()),
        None => canon(out),
    };
    let overlap = |what: &Path| EmitError::Overlaps(out.display().to_string(), what.display().to_string());
    for p in std::iter::once(project).chain(skill_roots.iter().map(PathBuf::as_path)) {
        if canon(p).starts_with(&out_c) {
            return Err(overlap(p));
        }
    }
    for inside in skill_roots.iter().map(PathBuf::as_path).chain(std::iter::once(state)) {
        if out_c.starts_with(canon(inside)) {
            return Err(overlap(inside));
        }
    }
    match std::fs::symlink_metadata(out) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(EmitError::NotAFolder(
                out.display().to_string(),
                "a symbolic link (skillc never writes through links: give the folder it points to)",
            ));
        }
        Ok(m) if !m.is_dir() => return Err(EmitError::NotAFolder(out.display().to_string(), "a file")),
        _ => {}
    }
    if out.is_dir() {
        let mut entries = std::fs::read_dir(out).map_err(io_err(out))?;
        let empty = entries.next().is_none();
        let catalog = out.join(CATALOG).is_file() && out.join(CATALOG_SIG).is_file();
        if !empty && !catalog {
            return Err(EmitError::NotOwned(out.display().to_string()));
        }
    }
    Ok(())
}

/// A file found in a folder: its `/`-separated relative path and whether it is a symbolic link
/// (links are listed, never followed).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Listed {
    /// Relative path.
    pub path: String,
    /// The entry is a symbolic link.
    pub symlink: bool,
    /// The entry's path on disk.
    pub full: PathBuf,
    /// Every component of the name is valid UTF-8 (otherwise `path` is lossy).
    pub utf8: bool,
}

/// Every non-folder entry under `dir`, as `/`-separated relative paths (names that are not
/// UTF-8 are shown lossily).
pub fn list_files(dir: &Path) -> io::Result<Vec<Listed>> {
    let mut out = Vec::new();
    if !dir.is_dir() {
        return Ok(out);
    }
    for entry in walkdir::WalkDir::new(dir).follow_links(false).sort_by_file_name() {
        let entry = entry.map_err(io::Error::other)?;
        if entry.file_type().is_dir() {
            continue;
        }
        if let Ok(rel) = entry.path().strip_prefix(dir) {
            let parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let utf8 = rel.to_str().is_some();
            out.push(Listed {
                path: parts.join("/"),
                symlink: entry.file_type().is_symlink(),
                full: entry.path().to_path_buf(),
                utf8,
            });
        }
    }
    Ok(out)
}

/// Whether a path has the shape of a file skillc writes (FORMATS.md, "out/").
pub fn in_contract(path: &str) -> bool {
    [
        CATALOG,
        CATALOG_SIG,
        super::PUBLIC_KEY,
        REPORT,
        super::ROUTING,
        super::MENU_INDEX,
        super::MENU_INDEX_SIG,
        super::MENU_VECTORS,
        super::MENU_FILES,
    ]
    .contains(&path)
        || path.starts_with("executors/")
        || path.starts_with("skills/")
}

/// Reads a file of skillc's own state (`.skillc/`): only a regular file (a link is followed),
/// and at most the size it had when opened. A FIFO, a device such as `/dev/zero` or a folder
/// put in its place is an error (`InvalidInput`), never a read that blocks or never ends.
///
/// # Errors
/// Any IO failure, and `InvalidInput` for anything but a regular file.
pub fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    // Checked before opening: opening a FIFO for reading blocks until a writer comes.
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(len).read_to_end(&mut bytes)?;
    Ok(bytes)
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
    #[cfg(unix)]
    if let Some(m) = mode {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(m)).map_err(io_err(path))?;
    }
    #[cfg(not(unix))]
    let _ = mode;
    tmp.persist(path).map_err(|e| EmitError::Io {
        path: path.display().to_string(),
        message: e.error.to_string(),
    })?;
    Ok(())
}

/// Writes `bytes` to `path` with `mode`, the folder already existing, never leaving a
/// half-written file where a complete one was: a file that does not exist yet is created
/// exclusively in place (no reader can rely on it before the catalog that lists it is renamed
/// in, and a file left incomplete by a crash is not in the store, so the next build rewrites
/// it); an existing file is replaced by a temporary file renamed over it. Cheaper than
/// [`write_atomic`] for the many files of a build (no folder creation, no random name, one
/// rename only where a file is replaced).
///
/// # Errors
/// Any IO failure, with the path.
pub fn write_file(path: &Path, bytes: &[u8], mode: u32) -> Result<(), EmitError> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let err = |e: io::Error| EmitError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    match create_exclusive(path, bytes, mode) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => {
            let _ = std::fs::remove_file(path);
            return Err(err(e));
        }
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".skillc-{}-{n}-{name}", std::process::id()));
    create_exclusive(&tmp, bytes, mode)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            err(e)
        })
}

/// Creates `path` (which must not exist) with `bytes` and exactly `mode`.
fn create_exclusive(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    use std::sync::OnceLock;
    // Whether the process umask narrows the two modes skillc gives (checked on the first file
    // of each; other modes are always checked).
    static UMASK_NARROWS: [OnceLock<bool>; 2] = [OnceLock::new(), OnceLock::new()];
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(mode);
    }
    let mut f = options.open(path)?;
    f.write_all(bytes)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let slot = match mode {
            0o644 => UMASK_NARROWS.first(),
            0o755 => UMASK_NARROWS.get(1),
            _ => None,
        };
        let narrows = match slot.and_then(|s| s.get()) {
            Some(n) => *n,
            None => {
                let n = f.metadata()?.permissions().mode() & 0o777 != mode;
                slot.map_or(n, |s| *s.get_or_init(|| n))
            }
        };
        if narrows {
            f.set_permissions(std::fs::Permissions::from_mode(mode))?;
        }
    }
    #[cfg(not(unix))]
    let _ = mode;
    Ok(())
}

/// Creates folders under `root` (each with its parents), in parallel, skipping those that exist.
///
/// # Errors
/// Any IO failure, with the path.
pub fn create_dirs(root: &Path, dirs: &BTreeSet<PathBuf>) -> Result<(), EmitError> {
    std::fs::create_dir_all(root).map_err(io_err(root))?;
    // Only the deepest folders need creating: create_dir_all makes their parents.
    let sorted: Vec<&PathBuf> = dirs.iter().collect();
    let leaves: Vec<&PathBuf> = sorted
        .iter()
        .enumerate()
        .filter(|(i, d)| sorted.get(i + 1).is_none_or(|next| !next.starts_with(d)))
        .map(|(_, d)| *d)
        .collect();
    leaves
        .par_iter()
        .try_for_each(|d| std::fs::create_dir_all(d).map_err(io_err(d)))
}

/// Removes files (paths relative to `dir`) and the folders they leave empty, up to `dir`.
///
/// # Errors
/// Any IO failure other than the file being gone already, with the path.
pub fn remove_files(dir: &Path, paths: &[String]) -> Result<(), EmitError> {
    for path in paths {
        let full = dir.join(path);
        match std::fs::remove_file(&full) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err(&full)(e)),
        }
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

/// Whether a file's mode has an execute bit (user, group or other); always `false` where
/// there are no modes. One rule for what `out/`, import, export and the catalog readers call
/// executable.
#[cfg(unix)]
pub(crate) fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

/// Whether a file's mode has an execute bit: never, where there are no modes.
#[cfg(not(unix))]
pub(crate) fn is_executable(_: &std::fs::Metadata) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only regular files are read: a folder, a device or a FIFO in a state file's place is an
    /// `InvalidInput` error at once (the FIFO is refused before it is opened, so the read
    /// never blocks; `/dev/zero` never ends).
    #[test]
    fn only_regular_files_are_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("state.json");
        std::fs::write(&file, b"{}").expect("write");
        assert_eq!(read_regular(&file).expect("read"), b"{}");
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo runs");
        assert!(made.success(), "mkfifo {}", fifo.display());
        for path in [dir.path(), Path::new("/dev/zero"), Path::new("/dev/null"), &fifo] {
            let e = read_regular(path).expect_err("not a regular file");
            assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{}", path.display());
        }
        let link = dir.path().join("link");
        std::os::unix::fs::symlink("/dev/zero", &link).expect("symlink");
        assert_eq!(
            read_regular(&link).map_err(|e| e.kind()),
            Err(std::io::ErrorKind::InvalidInput)
        );
        assert_eq!(
            read_regular(&dir.path().join("missing")).map_err(|e| e.kind()),
            Err(std::io::ErrorKind::NotFound)
        );
    }

    #[test]
    fn refuses_foreign_folders() {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("out");
        std::fs::create_dir(&out).expect("mkdir");
        std::fs::write(out.join("report.json"), "{}").expect("write");
        let (project, state) = (dir.path().join("p"), dir.path().join("p/.skillc"));
        assert!(
            matches!(guard(&out, &project, &[], &state), Err(EmitError::NotOwned(_))),
            "a report alone is not a catalog"
        );
        assert!(matches!(
            guard(dir.path(), &project, &[], &state),
            Err(EmitError::Overlaps(..))
        ));
        let skills = dir.path().join("skills");
        assert!(matches!(
            guard(&skills.join("a/dist"), &project, &[skills], &state),
            Err(EmitError::Overlaps(..))
        ));
        assert!(matches!(
            guard(&state.join("x"), &project, &[], &state),
            Err(EmitError::Overlaps(..))
        ));
        // A file where the folder would be is the user's: refused, never replaced.
        let notes = dir.path().join("notes.txt");
        std::fs::write(&notes, "my notes").expect("write");
        assert!(matches!(
            guard(&notes, &project, &[], &state),
            Err(EmitError::NotAFolder(..))
        ));
        #[cfg(unix)]
        {
            let link = dir.path().join("link");
            std::os::unix::fs::symlink(&out, &link).expect("symlink");
            assert!(matches!(
                guard(&link, &project, &[], &state),
                Err(EmitError::NotAFolder(..))
            ));
        }
    }
}

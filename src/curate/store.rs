//! The curator's file-system primitives: durable atomic writes, the archive root beside each
//! skills root and its unique folder names, folder moves, and the per-root run lock. IO.
//!
//! The archive root of `<dir>/skills` is `<dir>/skills-archive` (RUNTIME.md §3): outside every
//! skills root, so no build reads it. Archived folders are `<name>-<UTC time>` with the time as
//! `20260514T183000Z` (no colons); a name already taken gets `-2`, `-3`, … — nothing in the
//! archive root is ever replaced. The run lock is `<archive root>/.curator.lock`, held with an
//! advisory `flock` for the whole run: the operating system releases it when the holder dies,
//! so a lock left by a killed run is stale by construction and the next run takes it (the pid
//! and time written inside only explain a `busy`).

use std::fs::File;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

use jiff::Timestamp;

/// File name of the run lock inside an archive root.
pub const LOCK_FILE: &str = ".curator.lock";

/// `20260514T183000Z`: a UTC time with no colons, for folder names.
pub fn compact(time: Timestamp) -> String {
    time.strftime("%Y%m%dT%H%M%SZ").to_string()
}

/// Parses a time given on the command line: RFC 3339 (`2026-05-14T18:30:00Z`), the compact
/// form of folder names (`20260514T183000Z`), or a date (`2026-05-14`, midnight UTC).
pub fn parse_time(s: &str) -> Option<Timestamp> {
    let s = s.trim();
    if let Ok(t) = s.parse::<Timestamp>() {
        return Some(t);
    }
    let utc = |dt: jiff::civil::DateTime| jiff::tz::Offset::UTC.to_timestamp(dt).ok();
    if let Ok(dt) = jiff::fmt::strtime::parse("%Y%m%dT%H%M%SZ", s).and_then(|p| p.to_datetime()) {
        return utc(dt);
    }
    s.parse::<jiff::civil::Date>().ok().and_then(|d| utc(d.at(0, 0, 0, 0)))
}

/// A path as recorded in state.json and events: relative to the project `root` (with `/`)
/// when inside it, else absolute.
pub fn shown(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<String> = rel
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let joined = parts.join("/");
    if rel.is_absolute() {
        format!("/{}", joined.trim_start_matches('/'))
    } else {
        joined
    }
}

/// The path a recorded path names.
pub fn resolve(root: &Path, recorded: &str) -> PathBuf {
    let p = Path::new(recorded);
    if p.is_absolute() { p.to_path_buf() } else { root.join(p) }
}

/// The archive root beside a skills root: `<parent>/<name>-archive`. `None` when the skills
/// root has no name even once made absolute (the file-system root).
pub fn archive_root(skills_root: &Path) -> Option<PathBuf> {
    let abs = if skills_root.file_name().is_some() {
        skills_root.to_path_buf()
    } else {
        std::fs::canonicalize(skills_root).ok()?
    };
    let name = abs.file_name()?.to_string_lossy().into_owned();
    Some(abs.with_file_name(format!("{name}-archive")))
}

/// A folder name in `dir` not yet taken: `<stem>`, else `<stem>-2`, `<stem>-3`, …
pub fn unique_in(dir: &Path, stem: &str) -> PathBuf {
    let first = dir.join(stem);
    if first.symlink_metadata().is_err() {
        return first;
    }
    (2u32..)
        .map(|n| dir.join(format!("{stem}-{n}")))
        .find(|p| p.symlink_metadata().is_err())
        .unwrap_or(first)
}

/// Flushes a folder's entries to disk (after a rename in it).
pub fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// Writes `bytes` to `path` durably and atomically: a temporary file in the same folder,
/// written and `fsync`ed, renamed over `path`, then the folder synced. A crash leaves the old
/// file or the new one, never a mix.
///
/// # Errors
/// Any IO failure.
pub fn write_durable(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new().prefix(".skillc-").tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    #[cfg(unix)]
    if let Ok(meta) = std::fs::metadata(path) {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(meta.permissions().mode()));
    }
    tmp.persist(path).map_err(|e| e.error)?;
    sync_dir(dir);
    Ok(())
}

/// Moves a folder (one `rename`, the whole tree), creating the destination's parent, then
/// syncs both parents. Refuses to replace anything.
///
/// # Errors
/// The destination exists, or the rename failed (another file system: `EXDEV`).
pub fn move_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    if to.symlink_metadata().is_ok() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!("{} already exists", to.display()),
        ));
    }
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::rename(from, to)?;
    for dir in [from.parent(), to.parent()].into_iter().flatten() {
        sync_dir(dir);
    }
    Ok(())
}

/// Writes `bytes` as `SKILL.md` into the new snapshot folder `dest`, atomically (a temporary
/// folder beside it, renamed into place). Refuses when `dest` exists.
///
/// # Errors
/// `dest` exists, or any IO failure.
pub fn write_snapshot(dest: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = dest.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    if dest.symlink_metadata().is_ok() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!("{} already exists", dest.display()),
        ));
    }
    let tmp = tempfile::Builder::new().prefix(".skillc-").tempdir_in(dir)?;
    let mut f = File::create(tmp.path().join("SKILL.md"))?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(tmp.path(), dest)?;
    // The temporary folder is gone (renamed): its guard must not remove anything.
    let _ = tmp.keep();
    sync_dir(dir);
    Ok(())
}

/// A held run lock; released when dropped (or when the process ends, however it ends).
#[derive(Debug)]
pub struct RunLock {
    _file: File,
}

/// Takes the run lock of an archive root, creating the folder. `Ok(Err(holder))` when another
/// process holds it (`holder` is what it wrote: its pid and since when).
///
/// # Errors
/// The lock file cannot be created.
pub fn try_lock(archive_root: &Path, now: Timestamp) -> std::io::Result<Result<RunLock, String>> {
    std::fs::create_dir_all(archive_root)?;
    let path = archive_root.join(LOCK_FILE);
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)?;
    match file.try_lock() {
        Ok(()) => {
            // A stale lock (its holder died) is simply taken over: flock died with it.
            file.set_len(0)?;
            let note = format!(
                "{{\"pid\":{},\"since\":\"{}\"}}\n",
                std::process::id(),
                crate::events::rfc3339(now)
            );
            file.write_all(note.as_bytes())?;
            Ok(Ok(RunLock { _file: file }))
        }
        Err(std::fs::TryLockError::WouldBlock) => {
            let holder = std::fs::read_to_string(&path).unwrap_or_default();
            Ok(Err(holder.trim().to_owned()))
        }
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_paths_and_names() {
        let t: Timestamp = "2026-05-14T18:30:00Z".parse().unwrap();
        assert_eq!(compact(t), "20260514T183000Z");
        assert_eq!(parse_time("20260514T183000Z"), Some(t));
        assert_eq!(parse_time("2026-05-14T20:30:00+02:00"), Some(t));
        assert_eq!(
            parse_time("2026-05-14").map(compact).as_deref(),
            Some("20260514T000000Z")
        );
        assert_eq!(parse_time("soon"), None);
        let root = Path::new("/p");
        assert_eq!(shown(root, Path::new("/p/skills-archive/x")), "skills-archive/x");
        assert_eq!(shown(root, Path::new("/q/x")), "/q/x");
        assert_eq!(resolve(root, "skills/x"), PathBuf::from("/p/skills/x"));
        assert_eq!(
            archive_root(Path::new("/p/skills")),
            Some(PathBuf::from("/p/skills-archive"))
        );
    }

    #[test]
    fn taken_names_get_a_suffix_and_locks_exclude() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("a")).unwrap();
        std::fs::create_dir(dir.path().join("a-2")).unwrap();
        assert_eq!(unique_in(dir.path(), "a"), dir.path().join("a-3"));
        let t: Timestamp = "2026-05-14T18:30:00Z".parse().unwrap();
        let held = try_lock(dir.path(), t).unwrap().unwrap();
        let busy = try_lock(dir.path(), t).unwrap().unwrap_err();
        assert!(busy.contains("\"pid\""), "{busy}");
        drop(held);
        // flock belongs to the open file description: a process another test thread forks
        // at this moment holds a copy of it until its `exec` closes it (close-on-exec), so
        // the release can lag by that window. Bounded: 5 s.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while try_lock(dir.path(), t).unwrap().is_err() {
            assert!(std::time::Instant::now() < deadline, "the lock was never released");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

//! Publishing `out/` atomically (IO layer): a build never writes into `out/`. It brings the
//! *spare* generation — a sibling folder `.<out>.skillc-next` holding the catalog before the
//! current one — up to date, then switches the two folders in one `renameat2(RENAME_EXCHANGE)`
//! (Linux; elsewhere, or on a file system without it, two renames). A reader of `out/` sees
//! the previous complete catalog or the new one at every instant; a build killed at any moment
//! leaves `out/` as it was, and what it left in the spare is cleaned by the next build.
//!
//! Why a second generation rather than a temporary copy: a copy of a 10k-skill catalog is
//! 60,000 files, while bringing the spare up to date writes only what changed in the last two
//! builds, so one edit stays cheap. Files are never written in place (a changed file is a new
//! file renamed over the old one, `write::write_file`), so the two generations may share
//! unchanged files as hard links: a spare the build knows nothing about is filled that way
//! from `out/` ([`link_tree`]) instead of being written whole.

use std::io;
use std::path::{Path, PathBuf};

use super::write::EmitError;

/// The name prefix of every temporary file skillc creates (`write::write_file`,
/// `write::write_atomic`): such a file in the spare is left by an interrupted build.
pub const TEMP_PREFIX: &str = ".skillc-";

/// The spare generation of an output folder: `.<name>.skillc-next` beside it (the same file
/// system, which an atomic switch needs).
pub fn spare_of(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    out.with_file_name(format!(".{name}.skillc-next"))
}

/// Whether a `/`-separated path inside a generation is a temporary file of skillc's.
pub fn is_temp(path: &str) -> bool {
    path.rsplit('/').next().is_some_and(|n| n.starts_with(TEMP_PREFIX))
}

fn io_err(path: &Path, e: &io::Error) -> EmitError {
    EmitError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Makes `spare` the published `out`: switched with it atomically when `out` exists (the old
/// generation becomes the spare), renamed into place when it does not.
///
/// # Errors
/// Any IO failure, with the path.
pub fn publish(spare: &Path, out: &Path) -> Result<(), EmitError> {
    if std::fs::symlink_metadata(out).is_err() {
        return std::fs::rename(spare, out).map_err(|e| io_err(out, &e));
    }
    match exchange(spare, out) {
        Ok(()) => Ok(()),
        // No atomic exchange here (another OS, or a file system without it): the old
        // generation is moved aside, then the new one in. A reader may find no `out/` for
        // the instant between the two renames, never a mixed one.
        Err(e) if e.kind() == io::ErrorKind::Unsupported || e.raw_os_error() == Some(22) => {
            let aside = out.with_file_name(format!(
                ".{}.skillc-old",
                out.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            ));
            let _ = std::fs::remove_dir_all(&aside);
            std::fs::rename(out, &aside).map_err(|e| io_err(out, &e))?;
            std::fs::rename(spare, out).map_err(|e| io_err(out, &e))?;
            std::fs::rename(&aside, spare).map_err(|e| io_err(spare, &e))
        }
        Err(e) => Err(io_err(out, &e)),
    }
}

#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).map_err(|e| match e {
        rustix::io::Errno::NOSYS | rustix::io::Errno::INVAL => io::Error::from(io::ErrorKind::Unsupported),
        e => io::Error::from_raw_os_error(e.raw_os_error()),
    })
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// Fills `spare` with hard links to `files` of `out` (folders created as needed; a file that
/// cannot be linked is skipped — the build then writes it). Returns the files not linked.
///
/// # Errors
/// When `spare` or a folder in it cannot be created.
pub fn link_tree(out: &Path, spare: &Path, files: &[&str]) -> Result<Vec<String>, EmitError> {
    use rayon::prelude::*;
    // The folders first, each once (a catalog has about one folder per six files): a
    // `create_dir_all` per file costs two more system calls for each of tens of thousands.
    let dirs: std::collections::BTreeSet<PathBuf> = files
        .iter()
        .filter_map(|rel| Path::new(rel).parent())
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| spare.join(d))
        .collect();
    super::write::create_dirs(spare, &dirs)?;
    Ok(files
        .par_iter()
        .filter(|rel| std::fs::hard_link(out.join(rel), spare.join(rel)).is_err())
        .map(|rel| (*rel).to_owned())
        .collect())
}

/// Removes a spare generation the build cannot account for (no record of it).
///
/// # Errors
/// Any IO failure other than it being absent.
pub fn discard(spare: &Path) -> Result<(), EmitError> {
    match std::fs::remove_dir_all(spare) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_err(spare, &e)),
        _ => Ok(()),
    }
}

/// Identity of a published folder (device, inode, change time): a reader that finds it
/// different after reading knows a build switched generations under it.
pub fn identity(dir: &Path) -> Option<(u64, u64, i64, i64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let m = std::fs::symlink_metadata(dir).ok()?;
        Some((m.dev(), m.ino(), m.ctime(), m.ctime_nsec()))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spare_sits_beside_out_and_temp_files_are_recognised() {
        assert_eq!(spare_of(Path::new("/p/out")), PathBuf::from("/p/.out.skillc-next"));
        assert_eq!(spare_of(Path::new("dist")), PathBuf::from(".dist.skillc-next"));
        assert!(is_temp(".skillc-12-3-manifest.toml") && is_temp("executors/s/e/.skillc-1-2-x.py"));
        assert!(!is_temp("executors/s/e/manifest.toml") && !is_temp("skills/.skillc-x/SKILL.md"));
    }

    #[test]
    fn publishing_switches_the_generations_in_one_step() {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("out");
        let spare = spare_of(&out);
        std::fs::create_dir(&spare).expect("mkdir");
        std::fs::write(spare.join("catalog.toml"), "one").expect("write");
        publish(&spare, &out).expect("first publish renames");
        assert!(!spare.exists());
        std::fs::create_dir(&spare).expect("mkdir");
        std::fs::write(spare.join("catalog.toml"), "two").expect("write");
        let before = identity(&out);
        publish(&spare, &out).expect("second publish exchanges");
        assert_eq!(std::fs::read_to_string(out.join("catalog.toml")).expect("read"), "two");
        assert_eq!(
            std::fs::read_to_string(spare.join("catalog.toml")).expect("read"),
            "one"
        );
        assert_ne!(before, identity(&out));
    }
}

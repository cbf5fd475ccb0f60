//! The metadata record of a session's inputs (`.skillc/out/<id>/inputs.json`): for each skill,
//! the size, modification and change times, inode and device of every file when it was last
//! read, and the digest of what was read. A new process compares what it finds on disk with
//! the record and reads and hashes only the skills whose files differ — as git's index and
//! cargo's fingerprints trust file metadata.
//!
//! The limit, as git's: a file edited so that its size, both times and its inode are what
//! they were is taken as unchanged. The change time cannot be set back by a user (only the
//! clock can), so a file edited and then given its old size and modification time (`touch
//! -d`) is still seen. A file whose times are within [`RACY_NS`] of the moment it was
//! recorded is never trusted ("racily clean" in git's terms): it could have changed again
//! within the same tick of the file system's clock.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::db::load::FoundSkill;
use crate::db::load::listing::Listings;
use crate::model::Limits;

/// Version of the record's format.
const FORMAT: u32 = 1;

/// A file whose modification or change time is this close to (or after) the moment its
/// metadata was taken is read again next time: 1 s, above every file system's time tick.
pub(super) const RACY_NS: i128 = 1_000_000_000;

/// The record's file name in the output folder's store.
pub(super) const FILE: &str = "inputs.json";

/// The record of the folder listings under the skill roots, in the output folder's store
/// (`db::load::listing`).
pub(super) const DIRS_FILE: &str = "dirs.json";

/// `dirs.json`.
#[derive(Debug, Default, Serialize, Deserialize)]
struct DirsRecord {
    /// [`FORMAT`].
    format: u32,
    /// The tool version that wrote it.
    skillc: String,
    /// Folder → its last listing.
    dirs: Listings,
}

/// The folder listings recorded by the last build; empty when missing, unreadable or written
/// by another version.
pub(super) fn read_listings(path: &Path) -> Listings {
    crate::build::store::read::<DirsRecord>(path)
        .filter(|r| r.format == FORMAT && r.skillc == env!("CARGO_PKG_VERSION"))
        .map(|r| r.dirs)
        .unwrap_or_default()
}

/// Writes the folder listings (atomically).
///
/// # Errors
/// Writing the file failed.
pub(super) fn write_listings(path: &Path, dirs: Listings) -> Result<(), crate::emit::write::EmitError> {
    let record = DirsRecord {
        format: FORMAT,
        skillc: env!("CARGO_PKG_VERSION").into(),
        dirs,
    };
    crate::build::store::write(path, &record)
}

/// What `lstat` says of a regular file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct FileMeta {
    /// Bytes.
    pub size: u64,
    /// Modification time, ns since the epoch.
    pub mtime_ns: i128,
    /// Change time (of the inode), ns since the epoch.
    pub ctime_ns: i128,
    /// Inode.
    pub ino: u64,
    /// Device.
    pub dev: u64,
}

/// The metadata of every file of a skill, SKILL.md first: `(path relative to the folder,
/// metadata)`.
pub(super) type SkillMeta = Vec<(String, FileMeta)>;

/// One skill as last read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct SkillRecord {
    /// Its files' metadata, as [`stat_skill`] gives it.
    pub files: SkillMeta,
    /// Hex digest of what was read (`inputs::fingerprint_skill`).
    pub fingerprint: String,
}

/// `inputs.json`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct Record {
    /// [`FORMAT`].
    pub format: u32,
    /// The tool version that wrote it.
    pub skillc: String,
    /// The limits the skills were read with (what is read of a file depends on them).
    pub limits: String,
    /// Skill display path → record.
    pub skills: BTreeMap<String, SkillRecord>,
}

impl Record {
    /// A record for skills read with `limits`.
    pub fn new(limits: Limits) -> Record {
        Record {
            format: FORMAT,
            skillc: env!("CARGO_PKG_VERSION").into(),
            limits: format!("{limits:?}"),
            skills: BTreeMap::new(),
        }
    }

    /// Reads the record; `None` when missing, unreadable, or written by another version or
    /// with other limits.
    pub fn read(path: &Path, limits: Limits) -> Option<Record> {
        crate::build::store::read::<Record>(path).filter(|r| {
            r.format == FORMAT && r.skillc == env!("CARGO_PKG_VERSION") && r.limits == format!("{limits:?}")
        })
    }
}

/// The metadata of a regular file, `None` for anything else (a link, a folder, a FIFO) or
/// when it cannot be read.
fn meta(path: &Path) -> Option<FileMeta> {
    let m = std::fs::symlink_metadata(path).ok()?;
    if !m.is_file() {
        return None;
    }
    let s = crate::db::load::listing::stat_of(&m)?;
    Some(FileMeta {
        size: s.size,
        mtime_ns: s.mtime_ns,
        ctime_ns: s.ctime_ns,
        ino: s.ino,
        dev: s.dev,
    })
}

/// The metadata of every file of a found skill, SKILL.md first; `None` when the skill cannot
/// be judged by metadata alone: an entry that is not a regular file (links are resolved by
/// reading), a name that is not UTF-8, an entry that could not be listed, or more files than
/// the limit (what is read then depends on more than each file).
pub(super) fn stat_skill(found: &FoundSkill, limits: Limits) -> Option<SkillMeta> {
    if !found.unreadable.is_empty() || found.files.len() >= limits.files_per_skill {
        return None;
    }
    let mut v = Vec::with_capacity(found.files.len() + 1);
    if let Some(md) = &found.skill_md {
        v.push((md.clone(), meta(&found.dir.join(md))?));
    }
    for (rel, path) in &found.files {
        path.file_name()?.to_str()?;
        v.push((rel.clone(), meta(path)?));
    }
    Some(v)
}

/// Whether every file's times are settled before `since` (ns since the epoch): the metadata
/// can be trusted next time.
pub(super) fn settled(files: &SkillMeta, since: i128) -> bool {
    files
        .iter()
        .all(|(_, m)| m.mtime_ns < since - RACY_NS && m.ctime_ns < since - RACY_NS)
}

/// The 32 bytes of a 64-digit hex digest.
pub(super) fn unhex32(s: &str) -> Option<[u8; 32]> {
    let b = s.as_bytes();
    if b.len() != 64 {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).and_then(|d| u8::try_from(d).ok());
    let mut out = [0u8; 32];
    for (i, o) in out.iter_mut().enumerate() {
        *o = digit(*b.get(2 * i)?)? << 4 | digit(*b.get(2 * i + 1)?)?;
    }
    Some(out)
}

/// Now, in ns since the epoch.
pub(super) fn now_ns() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i128::try_from(d.as_nanos()).unwrap_or(i128::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(mtime_ns: i128, ctime_ns: i128) -> (String, FileMeta) {
        (
            "SKILL.md".into(),
            FileMeta {
                size: 1,
                mtime_ns,
                ctime_ns,
                ino: 1,
                dev: 1,
            },
        )
    }

    #[test]
    fn digests_read_back() {
        let d = [0xa5u8; 32];
        assert_eq!(unhex32(&crate::util::hex(&d)), Some(d));
        assert_eq!(unhex32("zz"), None);
    }

    #[test]
    fn files_changed_within_a_tick_of_the_record_are_not_trusted() {
        let since = 10 * RACY_NS;
        assert!(settled(&vec![file(since - 2 * RACY_NS, since - 2 * RACY_NS)], since));
        assert!(!settled(&vec![file(since - RACY_NS / 2, since - 2 * RACY_NS)], since));
        assert!(!settled(&vec![file(since - 2 * RACY_NS, since)], since));
    }

    #[test]
    fn a_link_or_a_missing_file_is_never_judged_by_metadata() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("SKILL.md"), "x").expect("write");
        let found = |files: Vec<(String, std::path::PathBuf)>| FoundSkill {
            dir: dir.path().to_path_buf(),
            display: "s".into(),
            skill_md: Some("SKILL.md".into()),
            files,
            unreadable: Vec::new(),
        };
        assert_eq!(stat_skill(&found(vec![]), Limits::default()).map(|v| v.len()), Some(1));
        assert!(
            stat_skill(
                &found(vec![("gone".into(), dir.path().join("gone"))]),
                Limits::default()
            )
            .is_none()
        );
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("SKILL.md", dir.path().join("link")).expect("symlink");
            assert!(
                stat_skill(
                    &found(vec![("link".into(), dir.path().join("link"))]),
                    Limits::default()
                )
                .is_none()
            );
        }
    }
}

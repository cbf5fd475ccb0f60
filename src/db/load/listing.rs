//! How the search for skills lists a folder: straight from the disk ([`Disk`]), or from a
//! record of the last listing, trusted while the folder's identity and times are the ones
//! recorded ([`Cached`]) — git's "untracked cache". Adding, removing or renaming an entry
//! changes its folder's modification time, so an unchanged folder costs one `lstat` instead
//! of an open, a read of its entries and a close; a changed folder is listed again.
//!
//! The limit, as git's: a folder whose entries changed while its size, modification and change
//! times, inode and device stayed the same is taken as unchanged. The change time cannot be
//! set back by a user, so only a clock moving backwards hides a change. A folder whose times
//! are within [`RACY_NS`] of the moment it was listed is never recorded ("racily clean"): an
//! entry could have been added within the same tick of the file system's clock.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};

/// A folder whose modification or change time is this close to (or after) the moment it was
/// listed is listed again next time: 1 s, above every file system's time tick.
pub const RACY_NS: i128 = 1_000_000_000;

/// One entry of a folder, as listing it says (links are not followed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Its name.
    pub name: OsString,
    /// It is a folder (not a link to one).
    pub dir: bool,
}

/// A way to list folders; shared by the threads of a parallel search.
pub trait Lister: Sync {
    /// The entries of `dir`, sorted by name.
    ///
    /// # Errors
    /// The OS error of opening or reading the folder.
    fn list(&self, dir: &Path) -> std::io::Result<Vec<Entry>>;
}

/// Lists every folder from the disk.
pub struct Disk;

impl Lister for Disk {
    fn list(&self, dir: &Path) -> std::io::Result<Vec<Entry>> {
        read_dir(dir)
    }
}

fn read_dir(dir: &Path) -> std::io::Result<Vec<Entry>> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        // `file_type` comes from the listing itself where the file system gives it (d_type);
        // a link is never a folder here.
        let dir = e.file_type()?.is_dir();
        v.push(Entry {
            name: e.file_name(),
            dir,
        });
    }
    v.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(v)
}

/// What `lstat` says of a folder (or a file): device, inode, size, modification and change
/// times (ns). Recorded as an array `[dev, ino, size, mtime_ns, ctime_ns]` (a 10k-skill tree
/// has 23,000 folders: field names would be most of the record).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "MetaArray", into = "MetaArray")]
pub struct DirMeta {
    /// Device.
    pub dev: u64,
    /// Inode.
    pub ino: u64,
    /// Size (on most file systems it grows with the entries).
    pub size: u64,
    /// Modification time, ns since the epoch.
    pub mtime_ns: i128,
    /// Change time, ns since the epoch.
    pub ctime_ns: i128,
}

/// [`DirMeta`] as recorded.
type MetaArray = (u64, u64, u64, i128, i128);

impl From<MetaArray> for DirMeta {
    fn from((dev, ino, size, mtime_ns, ctime_ns): MetaArray) -> DirMeta {
        DirMeta {
            dev,
            ino,
            size,
            mtime_ns,
            ctime_ns,
        }
    }
}

impl From<DirMeta> for MetaArray {
    fn from(m: DirMeta) -> MetaArray {
        (m.dev, m.ino, m.size, m.mtime_ns, m.ctime_ns)
    }
}

/// One folder as last listed: its sub-folders and its other entries, each a sorted list of
/// names joined by `/` (the one byte no name holds), so that a record is three values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirRecord {
    /// Its metadata when it was listed.
    #[serde(rename = "m")]
    pub meta: DirMeta,
    /// Its sub-folders.
    #[serde(rename = "d")]
    pub dirs: String,
    /// Its other entries (files, links).
    #[serde(rename = "f")]
    pub files: String,
}

impl DirRecord {
    /// The record of `entries` (sorted by name); `None` when a name is not UTF-8.
    fn of(meta: DirMeta, entries: &[Entry]) -> Option<DirRecord> {
        let mut dirs: Vec<&str> = Vec::new();
        let mut files: Vec<&str> = Vec::new();
        for e in entries {
            let name = e.name.to_str()?;
            if e.dir { &mut dirs } else { &mut files }.push(name);
        }
        Some(DirRecord {
            meta,
            dirs: dirs.join("/"),
            files: files.join("/"),
        })
    }

    /// The entries, sorted by name (the two lists merged).
    fn entries(&self) -> Vec<Entry> {
        let split = |s: &str| -> Vec<String> {
            if s.is_empty() {
                Vec::new()
            } else {
                s.split('/').map(str::to_owned).collect()
            }
        };
        let mut v: Vec<Entry> = split(&self.dirs)
            .into_iter()
            .map(|n| Entry {
                name: n.into(),
                dir: true,
            })
            .chain(split(&self.files).into_iter().map(|n| Entry {
                name: n.into(),
                dir: false,
            }))
            .collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }
}

/// The record of every folder a search listed: folder path (as the search named it) → record.
pub type Listings = HashMap<String, DirRecord>;

/// Device, inode, size and times of `m`; `None` where the platform gives no change time nor
/// inode (never trusted then: everything is listed and read, as without a record).
pub fn stat_of(m: &std::fs::Metadata) -> Option<DirMeta> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        Some(DirMeta {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime_ns: ns(m.mtime(), m.mtime_nsec()),
            ctime_ns: ns(m.ctime(), m.ctime_nsec()),
        })
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        None
    }
}

fn dir_meta(dir: &Path) -> Option<DirMeta> {
    std::fs::symlink_metadata(dir)
        .ok()
        .filter(std::fs::Metadata::is_dir)
        .as_ref()
        .and_then(stat_of)
}

/// Lists folders from a record of the last listing where the folder is unchanged, from the
/// disk elsewhere, and keeps the record of this search ([`Cached::finish`]).
pub struct Cached {
    old: Listings,
    /// ns since the epoch when the search started: folders changed since `since - RACY_NS`
    /// are not recorded.
    since: i128,
    /// Folders of `old` answered from it (their record is kept as it is).
    kept: Mutex<Vec<String>>,
    /// Folders listed from the disk and settled: their new record.
    new: Mutex<Listings>,
    listed: AtomicUsize,
    reused: AtomicUsize,
}

/// What a [`Cached`] search did.
#[derive(Debug, Default)]
pub struct Finished {
    /// The record of this search's folders (those settled).
    pub listings: Listings,
    /// Folders listed from the disk.
    pub listed: usize,
    /// Folders answered from the record (one `lstat` each).
    pub reused: usize,
    /// The record differs from the one given to [`Cached::new`].
    pub changed: bool,
}

impl Cached {
    /// A lister trusting `old`; `since` is now, in ns since the epoch.
    pub fn new(old: Listings, since: i128) -> Cached {
        Cached {
            old,
            since,
            kept: Mutex::new(Vec::new()),
            new: Mutex::new(HashMap::new()),
            listed: AtomicUsize::new(0),
            reused: AtomicUsize::new(0),
        }
    }

    /// The record of this search and its counts.
    pub fn finish(self) -> Finished {
        let new = self.new.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        let kept = self
            .kept
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let listed = self.listed.into_inner();
        let reused = self.reused.into_inner();
        // The record is unchanged when every old folder was answered from it and nothing new
        // was recorded.
        let changed = !new.is_empty() || kept.len() != self.old.len();
        let mut listings = self.old;
        if changed {
            let kept: std::collections::HashSet<String> = kept.into_iter().collect();
            listings.retain(|k, _| kept.contains(k));
            listings.extend(new);
        }
        Finished {
            listings,
            listed,
            reused,
            changed,
        }
    }
}

impl Lister for Cached {
    fn list(&self, dir: &Path) -> std::io::Result<Vec<Entry>> {
        let meta = dir_meta(dir);
        let key = dir.to_str();
        if let (Some(meta), Some(key)) = (meta, key)
            && let Some(r) = self.old.get(key).filter(|r| r.meta == meta)
        {
            self.reused.fetch_add(1, Ordering::Relaxed);
            if let Ok(mut k) = self.kept.lock() {
                k.push(key.to_owned());
            }
            return Ok(r.entries());
        }
        let entries = read_dir(dir)?;
        self.listed.fetch_add(1, Ordering::Relaxed);
        let settled = |m: &DirMeta| m.mtime_ns < self.since - RACY_NS && m.ctime_ns < self.since - RACY_NS;
        // Recorded only when settled, every name is UTF-8, and the folder did not change while
        // it was listed (its metadata after the listing is the one before).
        if let (Some(meta), Some(key)) = (meta, key)
            && settled(&meta)
            && dir_meta(dir) == Some(meta)
            && let Some(record) = DirRecord::of(meta, &entries)
            && let Ok(mut m) = self.new.lock()
        {
            m.insert(key.to_owned(), record);
        }
        Ok(entries)
    }
}

/// The path of `dir`'s entry `e`.
pub fn child(dir: &Path, e: &Entry) -> PathBuf {
    dir.join(&e.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now_ns() -> i128 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i128::try_from(d.as_nanos()).unwrap_or(i128::MAX))
    }

    #[test]
    fn a_recent_folder_is_listed_but_not_recorded() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("b"), "").expect("write");
        std::fs::create_dir(dir.path().join("a")).expect("mkdir");
        let c = Cached::new(Listings::new(), now_ns());
        let e = c.list(dir.path()).expect("list");
        assert_eq!(
            e,
            vec![
                Entry {
                    name: "a".into(),
                    dir: true
                },
                Entry {
                    name: "b".into(),
                    dir: false
                }
            ]
        );
        let f = c.finish();
        assert_eq!((f.listed, f.reused, f.listings.len()), (1, 0, 0));
    }

    #[test]
    fn a_settled_folder_is_recorded_then_reused_until_it_changes() {
        let dir = tempfile::tempdir().expect("tempdir");
        for f in ["b", "a.txt", "z"] {
            std::fs::write(dir.path().join(f), "").expect("write");
        }
        for d in ["a", "c", "y"] {
            std::fs::create_dir(dir.path().join(d)).expect("mkdir");
        }
        // As if listed 10 s from now: the folder is settled.
        let later = now_ns() + 10 * RACY_NS;
        let c = Cached::new(Listings::new(), later);
        c.list(dir.path()).expect("list");
        let f = c.finish();
        assert_eq!((f.listed, f.listings.len(), f.changed), (1, 1, true));
        let c = Cached::new(f.listings, later);
        assert_eq!(
            c.list(dir.path()).expect("list"),
            read_dir(dir.path()).expect("list"),
            "the recorded listing is the disk's"
        );
        let f = c.finish();
        assert_eq!((f.listed, f.reused, f.changed), (0, 1, false));
        // The folder's metadata no longer the recorded one (as after an entry is added; the
        // record is aged instead of waiting for the clock to tick): listed again.
        std::fs::write(dir.path().join("new"), "").expect("write");
        let mut old = f.listings;
        for r in old.values_mut() {
            r.meta.mtime_ns -= 1;
        }
        let c = Cached::new(old, later);
        assert_eq!(c.list(dir.path()).expect("list").len(), 7, "a new entry is seen");
        let f = c.finish();
        assert_eq!((f.listed, f.reused, f.changed), (1, 0, true));
    }
}

//! Reading a skill out of a zip archive held in memory: every entry is validated before
//! anything is kept, and a single bad entry refuses the whole archive (nothing is written by
//! this module; the caller stages what it returns). No IO.
//!
//! Accepted layouts: `<name>/SKILL.md` plus support files (what `skillc export` writes, and
//! the folder form of the agentskills.io specification), SKILL.md at the archive root, or any
//! single top folder holding SKILL.md. `__MACOSX/` metadata entries are ignored.

use std::collections::BTreeSet;
use std::io::{Cursor, Read};

/// Caps on what an archive may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArchiveLimits {
    /// Most file entries (folders not counted).
    pub entries: usize,
    /// Largest uncompressed entry, in bytes.
    pub entry_bytes: u64,
    /// Largest uncompressed total, in bytes.
    pub total_bytes: u64,
}

/// The largest uncompressed total of an imported archive, in bytes (32 MiB).
pub const MAX_TOTAL_BYTES: u64 = 32 * 1024 * 1024;

/// Why an archive is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The bytes are not a readable zip archive.
    #[error("not a readable zip archive: {0}")]
    NotZip(String),
    /// An entry name climbs out of the destination (`../x`).
    #[error("entry `{0}` climbs out of the skill folder (`..`): zip-slip refused")]
    ZipSlip(String),
    /// An entry name is absolute (`/etc/x`, `C:\x`).
    #[error("entry `{0}` has an absolute path")]
    Absolute(String),
    /// An entry name holds a NUL byte or a backslash.
    #[error("entry `{0}` has a NUL byte or a backslash in its name")]
    BadName(String),
    /// An entry name holds a newline or another control character (`SK045`).
    #[error("entry `{0}` has a newline or another control character in its name")]
    ControlName(String),
    /// A symbolic link entry.
    #[error("entry `{0}` is a symbolic link; archives may hold only files and folders")]
    Symlink(String),
    /// An encrypted entry.
    #[error("entry `{0}` is encrypted")]
    Encrypted(String),
    /// An entry larger than the limit.
    #[error("entry `{name}` is larger than {limit} bytes")]
    TooLarge {
        /// The entry.
        name: String,
        /// The limit, in bytes.
        limit: u64,
    },
    /// More entries than the limit.
    #[error("the archive holds more than {0} files")]
    TooManyEntries(usize),
    /// More uncompressed bytes than the limit.
    #[error("the archive expands to more than {0} bytes")]
    TooLargeTotal(u64),
    /// Two entries with the same path.
    #[error("entry `{0}` appears twice")]
    Duplicate(String),
    /// Entries with exactly the same name (only one of them would be read).
    #[error("entries share a name: the archive lists {declared} entries but {distinct} distinct names")]
    SameNames {
        /// Entries the central directory declares.
        declared: u64,
        /// Distinct names.
        distinct: u64,
    },
    /// An entry is both a file and the folder of another entry (`a` and `a/b`): one of the
    /// two could not be written.
    #[error("entry `{0}` is a file and also the folder of another entry")]
    Conflict(String),
    /// An entry name too long to write on common file systems: a segment over
    /// [`MAX_SEGMENT_BYTES`] or a path over [`MAX_PATH_BYTES`].
    #[error("entry `{0}` has a name too long to write ({1})")]
    NameTooLong(String, String),
    /// No SKILL.md at the root or in a single top folder.
    #[error("no SKILL.md at the archive root or in a single top folder")]
    NoSkill,
}

/// The longest segment (file or folder name) of an entry, in bytes: `NAME_MAX` of Linux,
/// macOS and Windows file systems.
pub const MAX_SEGMENT_BYTES: usize = 255;

/// The longest entry path, in bytes: well under `PATH_MAX` (4096) once the skills root and
/// the staging folder are put in front of it.
pub const MAX_PATH_BYTES: usize = 1024;

/// The number of entries the end-of-central-directory record declares (APPNOTE 4.3.16 and,
/// for ZIP64, 4.3.14), or `None` when the record cannot be found.
fn declared_entries(bytes: &[u8]) -> Option<u64> {
    const EOCD: &[u8] = b"PK\x05\x06";
    const ZIP64_LOCATOR: &[u8] = b"PK\x06\x07";
    const ZIP64_EOCD: &[u8] = b"PK\x06\x06";
    let from = bytes.len().saturating_sub(22 + 0xFFFF);
    let at = from + bytes.get(from..)?.windows(4).rposition(|w| w == EOCD)?;
    let u16_at = |o: usize| bytes.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let u64_at = |o: usize| {
        bytes
            .get(o..o + 8)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map(u64::from_le_bytes)
    };
    let total = u16_at(at + 10)?;
    if total != 0xFFFF {
        return Some(u64::from(total));
    }
    // ZIP64: the locator sits just before the record and points at the ZIP64 record.
    let locator = at.checked_sub(20)?;
    if bytes.get(locator..locator + 4)? != ZIP64_LOCATOR {
        return None;
    }
    let record = usize::try_from(u64_at(locator + 8)?).ok()?;
    if bytes.get(record..record + 4)? != ZIP64_EOCD {
        return None;
    }
    u64_at(record + 32)
}

/// Validates one entry name and returns its normalized `/`-separated relative path (`.` and
/// empty segments dropped; empty for the root itself).
///
/// # Errors
/// [`Refusal::BadName`], [`Refusal::ControlName`], [`Refusal::Absolute`] or [`Refusal::ZipSlip`].
pub fn entry_path(name: &str) -> Result<String, Refusal> {
    if name.contains('\0') || name.contains('\\') {
        return Err(Refusal::BadName(name.escape_debug().to_string()));
    }
    if crate::skill::control_character(name).is_some() {
        return Err(Refusal::ControlName(name.escape_debug().to_string()));
    }
    let b = name.as_bytes();
    if name.starts_with('/') || (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':') {
        return Err(Refusal::Absolute(name.to_owned()));
    }
    let mut parts = Vec::new();
    for seg in name.split('/') {
        match seg {
            "" | "." => {}
            ".." => return Err(Refusal::ZipSlip(name.to_owned())),
            s if s.len() > MAX_SEGMENT_BYTES => {
                let why = format!("a name of {} bytes; the limit is {MAX_SEGMENT_BYTES}", s.len());
                return Err(Refusal::NameTooLong(shorten(name), why));
            }
            s => parts.push(s),
        }
    }
    let path = parts.join("/");
    if path.len() > MAX_PATH_BYTES {
        let why = format!("a path of {} bytes; the limit is {MAX_PATH_BYTES}", path.len());
        return Err(Refusal::NameTooLong(shorten(name), why));
    }
    Ok(path)
}

/// A long entry name as shown in a message: its first 60 characters and its length.
fn shorten(name: &str) -> String {
    match name.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &name[..at]),
        None => name.to_owned(),
    }
}

/// The first entry that is a file and also a folder of another entry (`a` and `a/b`).
fn conflict(files: &[(String, Vec<u8>)]) -> Option<String> {
    let paths: BTreeSet<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
    files.iter().find_map(|(p, _)| {
        p.char_indices()
            .filter(|(_, c)| *c == '/')
            .map(|(i, _)| &p[..i])
            .find(|folder| paths.contains(folder))
            .map(str::to_owned)
    })
}

/// A skill read out of an archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extracted {
    /// (path relative to the skill folder, bytes), sorted by path.
    pub files: Vec<(String, Vec<u8>)>,
    /// The paths whose Unix mode has an execute bit.
    pub executable: BTreeSet<String>,
}

/// Reads every file of the archive `bytes`, validating each entry, and returns the skill.
///
/// # Errors
/// The first [`Refusal`]: nothing is returned for an archive with any bad entry.
pub fn read_skill(bytes: &[u8], limits: ArchiveLimits) -> Result<Extracted, Refusal> {
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| Refusal::NotZip(e.to_string()))?;
    // The zip crate keeps one entry per name: entries of the same name (what a reviewer sees
    // is not what would be installed) show as fewer entries than the directory declares.
    if let Some(declared) = declared_entries(bytes).filter(|n| *n != zip.len() as u64) {
        return Err(Refusal::SameNames {
            declared,
            distinct: zip.len() as u64,
        });
    }
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut executable = BTreeSet::new();
    let mut total: u64 = 0;
    for i in 0..zip.len() {
        let entry = zip.by_index_raw(i).map_err(|e| Refusal::NotZip(e.to_string()))?;
        let raw = String::from_utf8_lossy(entry.name_raw()).into_owned();
        let path = entry_path(&raw)?;
        if entry.is_symlink() {
            return Err(Refusal::Symlink(raw));
        }
        if entry.is_dir() || path.is_empty() || path == "__MACOSX" || path.starts_with("__MACOSX/") {
            continue;
        }
        // The folders a skill folder's import (and `db::load`) skips: VCS data, caches.
        if path.split('/').any(|c| crate::model::SKIPPED_DIRS.contains(&c)) {
            continue;
        }
        if entry.encrypted() {
            return Err(Refusal::Encrypted(raw));
        }
        if files.len() >= limits.entries {
            return Err(Refusal::TooManyEntries(limits.entries));
        }
        if entry.size() > limits.entry_bytes {
            return Err(Refusal::TooLarge {
                name: raw,
                limit: limits.entry_bytes,
            });
        }
        let exec = entry.unix_mode().is_some_and(|m| m & 0o111 != 0);
        drop(entry);
        // The declared size is not trusted: read at most one byte past the limit.
        let entry = zip.by_index(i).map_err(|e| Refusal::NotZip(e.to_string()))?;
        let mut data = Vec::new();
        entry
            .take(limits.entry_bytes + 1)
            .read_to_end(&mut data)
            .map_err(|e| Refusal::NotZip(format!("entry `{raw}`: {e}")))?;
        if data.len() as u64 > limits.entry_bytes {
            return Err(Refusal::TooLarge {
                name: raw,
                limit: limits.entry_bytes,
            });
        }
        total += data.len() as u64;
        if total > limits.total_bytes {
            return Err(Refusal::TooLargeTotal(limits.total_bytes));
        }
        if files.iter().any(|(p, _)| *p == path) {
            return Err(Refusal::Duplicate(raw));
        }
        if exec {
            executable.insert(path.clone());
        }
        files.push((path, data));
    }
    if let Some(both) = conflict(&files) {
        return Err(Refusal::Conflict(both));
    }
    skill_root(files, executable)
}

/// Picks the skill out of an archive's files: SKILL.md at the root, else the files of the
/// single top folder when it holds SKILL.md.
fn skill_root(mut files: Vec<(String, Vec<u8>)>, executable: BTreeSet<String>) -> Result<Extracted, Refusal> {
    files.sort_by(|a, b| a.0.cmp(&b.0));
    if files.iter().any(|(p, _)| p == "SKILL.md") {
        return Ok(Extracted { files, executable });
    }
    let top = |p: &str| p.split_once('/').map(|(t, _)| t.to_owned());
    let Some(first) = files.first().and_then(|(p, _)| top(p)) else {
        return Err(Refusal::NoSkill);
    };
    if !files.iter().all(|(p, _)| top(p).as_deref() == Some(first.as_str())) {
        return Err(Refusal::NoSkill);
    }
    let prefix = format!("{first}/");
    let inner: Vec<(String, Vec<u8>)> = files
        .into_iter()
        .map(|(p, b)| (p[prefix.len()..].to_owned(), b))
        .collect();
    if inner.iter().any(|(p, _)| p == "SKILL.md") {
        let executable = executable
            .iter()
            .filter_map(|p| p.strip_prefix(&prefix).map(str::to_owned))
            .collect();
        Ok(Extracted {
            files: inner,
            executable,
        })
    } else {
        Err(Refusal::NoSkill)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use zip::write::SimpleFileOptions;

    const LIMITS: ArchiveLimits = ArchiveLimits {
        entries: 10,
        entry_bytes: 1000,
        total_bytes: 2500,
    };

    fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, bytes) in entries {
            if name.ends_with('/') {
                w.add_directory(*name, SimpleFileOptions::default()).unwrap();
            } else {
                w.start_file(*name, SimpleFileOptions::default()).unwrap();
                w.write_all(bytes).unwrap();
            }
        }
        w.finish().unwrap().into_inner()
    }

    #[test]
    fn entry_names() {
        assert_eq!(entry_path("a/./b//c").unwrap(), "a/b/c");
        assert_eq!(entry_path("../x"), Err(Refusal::ZipSlip("../x".into())));
        assert_eq!(entry_path("a/../../x"), Err(Refusal::ZipSlip("a/../../x".into())));
        assert_eq!(entry_path("/etc/passwd"), Err(Refusal::Absolute("/etc/passwd".into())));
        assert_eq!(entry_path("C:/x"), Err(Refusal::Absolute("C:/x".into())));
        assert!(matches!(entry_path("a\\..\\x"), Err(Refusal::BadName(_))));
    }

    #[test]
    fn conflicting_and_overlong_entries_are_refused() {
        let both = zip_of(&[("s/SKILL.md", b"s"), ("s/notes", b"n"), ("s/notes/a.md", b"a")]);
        assert_eq!(read_skill(&both, LIMITS), Err(Refusal::Conflict("s/notes".into())));
        let long = format!("s/{}.md", "n".repeat(MAX_SEGMENT_BYTES));
        let z = zip_of(&[("s/SKILL.md", b"s"), (&long, b"x")]);
        assert!(matches!(read_skill(&z, LIMITS), Err(Refusal::NameTooLong(n, _)) if n.ends_with('…')));
        let deep = format!("s/{}x.md", "abcdefgh/".repeat(MAX_PATH_BYTES / 9 + 1));
        assert!(matches!(entry_path(&deep), Err(Refusal::NameTooLong(..))));
        let fits = format!("s/{}.md", "n".repeat(MAX_SEGMENT_BYTES - 3));
        assert!(entry_path(&fits).is_ok());
    }

    #[test]
    fn vcs_and_cache_folders_are_left_out_as_in_folder_imports() {
        let z = zip_of(&[
            ("s/SKILL.md", b"s"),
            ("s/.git/config", b"c"),
            ("s/.skillc/state.json", b"{}"),
            ("s/scripts/__pycache__/a.pyc", b"x"),
            ("s/scripts/a.py", b"p"),
        ]);
        let got = read_skill(&z, LIMITS).unwrap();
        let paths: Vec<&str> = got.files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["SKILL.md", "scripts/a.py"]);
    }

    #[test]
    fn layouts() {
        let export = zip_of(&[("pdf/", b""), ("pdf/SKILL.md", b"s"), ("pdf/scripts/a.py", b"p")]);
        let got = read_skill(&export, LIMITS).unwrap();
        let paths: Vec<&str> = got.files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["SKILL.md", "scripts/a.py"]);
        let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
        w.start_file("s/SKILL.md", SimpleFileOptions::default()).unwrap();
        w.start_file("s/run.sh", SimpleFileOptions::default().unix_permissions(0o755))
            .unwrap();
        let got = read_skill(&w.finish().unwrap().into_inner(), LIMITS).unwrap();
        assert_eq!(got.executable, BTreeSet::from(["run.sh".to_owned()]));
        let flat = zip_of(&[
            ("SKILL.md", b"s"),
            ("references/r.md", b"r"),
            ("__MACOSX/._SKILL.md", b"x"),
        ]);
        assert_eq!(read_skill(&flat, LIMITS).unwrap().files.len(), 2);
        let two = zip_of(&[("a/SKILL.md", b"s"), ("b/SKILL.md", b"s")]);
        assert_eq!(read_skill(&two, LIMITS), Err(Refusal::NoSkill));
        assert!(matches!(read_skill(b"not a zip", LIMITS), Err(Refusal::NotZip(_))));
    }

    #[test]
    fn limits_and_links() {
        let big = vec![b'x'; 1001];
        assert!(matches!(
            read_skill(&zip_of(&[("SKILL.md", &big)]), LIMITS),
            Err(Refusal::TooLarge { .. })
        ));
        let many: Vec<(String, Vec<u8>)> = (0..11).map(|i| (format!("f{i}"), vec![])).collect();
        let refs: Vec<(&str, &[u8])> = many.iter().map(|(n, b)| (n.as_str(), b.as_slice())).collect();
        assert_eq!(read_skill(&zip_of(&refs), LIMITS), Err(Refusal::TooManyEntries(10)));
        let k = vec![b'x'; 900];
        assert_eq!(
            read_skill(&zip_of(&[("a", &k), ("b", &k), ("c", &k)]), LIMITS),
            Err(Refusal::TooLargeTotal(2500))
        );
        let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
        w.start_file("SKILL.md", SimpleFileOptions::default()).unwrap();
        w.add_symlink("link", "/etc/passwd", SimpleFileOptions::default())
            .unwrap();
        let linked = w.finish().unwrap().into_inner();
        assert_eq!(read_skill(&linked, LIMITS), Err(Refusal::Symlink("link".into())));
        let slip = zip_of(&[("SKILL.md", b"s"), ("../evil", b"x")]);
        assert_eq!(read_skill(&slip, LIMITS), Err(Refusal::ZipSlip("../evil".into())));
    }
}

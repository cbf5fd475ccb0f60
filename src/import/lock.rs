//! `skillc.lock`: what `skillc import` brought into the project, where from, and the hash of
//! what it got (FORMATS.md, "skillc.lock"). Rendering, parsing and hashing are pure;
//! [`read`] and [`write`] are the only IO.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::diag::{Diagnostic, Source, toml_error};
use crate::rules;

/// File name of the lock file, at the project root.
pub const FILE_NAME: &str = "skillc.lock";

/// The lock file's format version.
pub const VERSION: u32 = 1;

/// One imported skill.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The skill name (its folder in the skills root).
    pub name: String,
    /// The SOURCE as given to `skillc import` (local paths: relative to the project root when
    /// inside it, else absolute).
    pub source: String,
    /// What the source resolved to: the git commit, the final URL, or the agentskills.io
    /// repository and commit; absent for local sources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved: Option<String>,
    /// [`content_sha256`] of the skill's files as fetched (before the tier reset).
    pub sha256: String,
    /// RFC 3339 UTC time of the import (`SOURCE_DATE_EPOCH` when set).
    pub imported_at: String,
    /// The folder it was imported into (`--into`), relative to the project root when inside
    /// it; absent for the project's skills root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub into: Option<String>,
    /// [`content_sha256`] of the skill's files as written into the skills root (after the
    /// tier reset): what `skillc update` compares the folder with to tell a local edit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub installed_sha256: Option<String>,
}

/// The whole lock file: entries by skill name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lock {
    /// Entries by name (sorted).
    pub entries: BTreeMap<String, Entry>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    version: u32,
    #[serde(default)]
    skill: Vec<Entry>,
}

/// A lock file that cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The file is not a valid lock file.
    #[error("{path} is not a valid skillc.lock: {}", .diagnostic.message)]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong, where (`IM011`, file:line:column).
        diagnostic: Box<Diagnostic>,
        /// The file's text, for the diagnostic's snippet (up to the first invalid byte when
        /// it is not UTF-8).
        text: String,
    },
    /// Reading or writing failed.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The operating system's message.
        message: String,
    },
}

/// Renders the lock file: a header comment, `version`, then one `[[skill]]` per entry sorted
/// by name. Same lock, same bytes.
pub fn render(lock: &Lock) -> String {
    let file = File {
        version: VERSION,
        skill: lock.entries.values().cloned().collect(),
    };
    let body = toml::to_string(&file).unwrap_or_default();
    format!("# skillc.lock: written by `skillc import`; do not edit by hand.\n{body}")
}

/// The lock file as read, with the positions of what [`parse`] checks beyond TOML.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SpannedFile {
    version: toml::Spanned<u32>,
    #[serde(default)]
    skill: Vec<toml::Spanned<Entry>>,
}

/// Parses the text of a lock file shown as `file`.
///
/// # Errors
/// An `IM011` diagnostic with the position of what is wrong (TOML syntax, unknown keys, a
/// value of the wrong type, an unsupported version, a name listed twice).
pub fn parse(file: &str, text: &str) -> Result<Lock, Box<Diagnostic>> {
    let src = Source::new(file, text);
    let parsed: SpannedFile =
        toml::from_str(text).map_err(|e| Box::new(toml_error(&src, &e, &rules::IM011, &rules::IM011)))?;
    if *parsed.version.get_ref() != VERSION {
        return Err(Box::new(
            Diagnostic::new(
                &rules::IM011,
                file,
                src.span(parsed.version.span()),
                format!(
                    "unsupported version {} (this skillc writes {VERSION})",
                    parsed.version.get_ref()
                ),
            )
            .help("a newer skillc wrote this lock; upgrade skillc"),
        ));
    }
    let mut lock = Lock::default();
    for e in parsed.skill {
        let span = e.span();
        let e = e.into_inner();
        let name = e.name.clone();
        if lock.entries.insert(name.clone(), e).is_some() {
            return Err(Box::new(
                Diagnostic::new(
                    &rules::IM011,
                    file,
                    src.span(span),
                    format!("skill `{name}` is listed twice"),
                )
                .help("keep one `[[skill]]` table per name"),
            ));
        }
    }
    Ok(lock)
}

/// The canonical content hash of a skill: hex SHA-256 over, for each file in byte-wise order
/// of its `/`-separated path relative to the skill folder, the path's UTF-8 bytes, a NUL
/// byte, the file's length as 8 big-endian bytes, then its bytes. Folders, times and modes do
/// not count. Paths must be unique.
pub fn content_sha256<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> String {
    let mut sorted: Vec<(&str, &[u8])> = files.into_iter().collect();
    sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut h = Sha256::new();
    for (path, bytes) in sorted {
        h.update(path.as_bytes());
        h.update([0u8]);
        h.update((bytes.len() as u64).to_be_bytes());
        h.update(bytes);
    }
    crate::util::hex(&h.finalize())
}

/// Reads `skillc.lock` at the project `root`; an absent file is an empty lock.
///
/// # Errors
/// [`LockError`] when the file exists and cannot be read or parsed.
pub fn read(root: &Path) -> Result<Lock, LockError> {
    let path = root.join(FILE_NAME);
    match std::fs::read(&path) {
        Ok(bytes) => {
            let invalid = |diagnostic, text: &str| LockError::Invalid {
                path: path.display().to_string(),
                diagnostic,
                text: text.to_owned(),
            };
            let text = crate::diag::decode_utf8(&bytes, FILE_NAME, FILE_NAME, &rules::IM011)
                .map_err(|d| invalid(d, crate::diag::valid_utf8_prefix(&bytes)))?;
            parse(FILE_NAME, text).map_err(|d| invalid(d, text))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Lock::default()),
        Err(e) => Err(LockError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        }),
    }
}

/// Writes `skillc.lock` at the project `root` atomically (temporary file, then rename).
///
/// # Errors
/// [`LockError::Io`] when the write fails.
pub fn write(root: &Path, lock: &Lock) -> Result<(), LockError> {
    let path = root.join(FILE_NAME);
    crate::emit::write::write_atomic(&path, render(lock).as_bytes(), Some(0o644)).map_err(|e| LockError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str) -> Entry {
        Entry {
            name: name.into(),
            source: format!("file:///r#main:{name}"),
            resolved: Some("0123abcd".into()),
            sha256: "ff".into(),
            imported_at: "2026-11-30T00:00:00Z".into(),
            into: None,
            installed_sha256: None,
        }
    }

    #[test]
    fn render_is_sorted_and_parses_back() {
        let mut lock = Lock::default();
        for n in ["zeta", "alpha"] {
            lock.entries.insert(n.into(), entry(n));
        }
        let text = render(&lock);
        assert!(text.find("alpha").unwrap() < text.find("zeta").unwrap());
        assert!(text.starts_with("# skillc.lock"));
        assert_eq!(parse(FILE_NAME, &text).unwrap(), lock);
        assert_eq!(lock.entries["alpha"].source, "file:///r#main:alpha");
    }

    /// Issue 18, item 13: every malformed lock is an `IM011` diagnostic with its line.
    #[test]
    fn parse_refuses_bad_files_with_a_position() {
        let at = |text: &str| {
            let d = parse(FILE_NAME, text).unwrap_err();
            assert_eq!((d.rule.code, d.file.as_str()), ("IM011", FILE_NAME), "{d:?}");
            (d.span.start.line, d.message)
        };
        let (line, m) = at("# c\nversion = 2\n");
        assert_eq!(line, 2);
        assert!(m.contains("unsupported version"), "{m}");
        assert_eq!(at("version = 1\nextra = 1\n").0, 2);
        assert_eq!(at("version = 1\n[[skill]]\nname = 'a'\nsource = \n").0, 4);
        let twice = "version = 1\n[[skill]]\nname='a'\nsource='s'\nsha256='x'\nimported_at='t'\n\
                     [[skill]]\nname='a'\nsource='s'\nsha256='x'\nimported_at='t'\n";
        let (line, m) = at(twice);
        assert!(m.contains("twice"), "{m}");
        assert_eq!(line, 7);
        assert_eq!(parse(FILE_NAME, "version = 1\n").unwrap(), Lock::default());
    }

    #[test]
    fn content_hash_is_order_independent_and_unambiguous() {
        let a = content_sha256([("SKILL.md", &b"x"[..]), ("scripts/a.py", b"y")]);
        let b = content_sha256([("scripts/a.py", &b"y"[..]), ("SKILL.md", b"x")]);
        assert_eq!(a, b);
        // Moving a byte from the path into the contents changes the hash.
        assert_ne!(content_sha256([("ab", &b"c"[..])]), content_sha256([("a", &b"bc"[..])]));
        assert_eq!(a.len(), 64);
    }
}

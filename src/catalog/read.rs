//! Reading an `out/` folder into memory for verification: every file as bytes (or why it
//! cannot be vouched for), without following links, and the public key to trust. IO.
//!
//! `skillc verify` and [`super::Catalog::open`] read through here, so the bytes a catalog
//! serves are exactly the bytes that were verified (no second read after the check).

use crate::emit::write::is_executable;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::emit::write;
use crate::sign::PublicKey;
use crate::verify::Entry;

/// Files larger than this are not read: nothing skillc writes comes close.
pub const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// A failure to read the folder (the machine failing, not the catalog).
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ReadError {
    /// The file or folder.
    pub path: String,
    /// What went wrong.
    pub message: String,
}

fn err(path: &Path, e: impl std::fmt::Display) -> ReadError {
    ReadError {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// The files of a folder: relative `/`-separated path → bytes, or why it is irregular (a
/// symbolic link, a FIFO, a name that is not UTF-8, too large), and the paths of regular files
/// with an execute bit (for exports).
///
/// # Errors
/// [`ReadError`] when the folder cannot be listed or a file read.
pub fn read_tree(dir: &Path) -> Result<(BTreeMap<String, Entry>, BTreeSet<String>), ReadError> {
    let mut files = BTreeMap::new();
    let mut executable = BTreeSet::new();
    for listed in write::list_files(dir).map_err(|e| err(dir, e))? {
        let meta = std::fs::symlink_metadata(&listed.full).map_err(|e| err(&listed.full, e))?;
        let entry = if !listed.utf8 {
            Entry::Irregular("a file name that is not UTF-8".into())
        } else if listed.symlink {
            Entry::Irregular("a symbolic link".into())
        } else if !meta.is_file() {
            Entry::Irregular("not a regular file".into())
        } else if meta.len() > MAX_FILE_BYTES {
            Entry::Irregular(format!("{} bytes, larger than anything skillc writes", meta.len()))
        } else {
            if is_executable(&meta) {
                executable.insert(listed.path.clone());
            }
            Entry::Bytes(std::fs::read(&listed.full).map_err(|e| err(&listed.full, e))?)
        };
        files.insert(listed.path, entry);
    }
    Ok((files, executable))
}

/// Why a public key cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The file cannot be read.
    #[error("reading public key {path}: {message}")]
    Io {
        /// The key file.
        path: String,
        /// The operating system's message.
        message: String,
    },
    /// A secret key was given where the public one is expected.
    #[error("{0} is a secret key: pass the public key (`skillc.pub`) with --key, and keep the secret one private")]
    Secret(String),
    /// Not a minisign public key.
    #[error("public key {path}: {message}")]
    Invalid {
        /// The key file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// Reads a minisign public key file.
///
/// # Errors
/// [`KeyError`] when it cannot be read, is a secret key, or is not a public key.
pub fn read_key(path: &Path) -> Result<PublicKey, KeyError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| KeyError::Io {
        path: shown.clone(),
        message: e.to_string(),
    })?;
    if text.contains("secret key") {
        return Err(KeyError::Secret(shown));
    }
    PublicKey::from_file(&text).map_err(|e| KeyError::Invalid {
        path: shown,
        message: e.to_string(),
    })
}

/// The default rollback state `skillc verify` writes: `$XDG_STATE_HOME/skillc/verify-state.json`,
/// else `~/.local/state/skillc/verify-state.json`.
pub fn default_state() -> PathBuf {
    let base = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .unwrap_or_else(|| PathBuf::from("."));
    base.join("skillc").join("verify-state.json")
}

/// The last `catalog_version` accepted for `key_id` in `skillc verify`'s state file (read as
/// [`crate::trust::TrustState`], either version); `None` when the file is absent or has no
/// entry for the key.
///
/// # Errors
/// [`ReadError`] when the file exists but is damaged: a catalog is never used without the
/// rollback protection its user set up.
pub fn accepted(state: &Path, key_id: &str) -> Result<Option<i64>, ReadError> {
    match std::fs::read(state) {
        Err(_) => Ok(None),
        Ok(b) => {
            let s = crate::trust::TrustState::parse(&b).map_err(|_| {
                err(
                    state,
                    "damaged; refusing the catalog without rollback protection (repair or remove it)",
                )
            })?;
            Ok(s.keys.get(key_id).copied())
        }
    }
}

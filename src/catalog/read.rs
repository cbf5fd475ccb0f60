//! Reading an `out/` folder into memory for verification: every file as bytes (or why it
//! cannot be vouched for), without following links, and whom to trust — the one read-only
//! decision ([`Trust::decide`]) every reader of a catalog makes as `skillc verify` does. IO.
//!
//! `skillc verify` and [`super::Catalog::open`] read through here, so the bytes a catalog
//! serves are exactly the bytes that were verified (no second read after the check).

use crate::emit::write::is_executable;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::emit::PUBLIC_KEY;
use crate::emit::write;
use crate::sign::PublicKey;
use crate::trust::{Anchor, Ask, Refusal, TrustState, Trusted};
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

/// Key files larger than this are not read: a minisign key file is under 400 bytes, and a
/// bounded read keeps `--public-key /dev/zero` from hanging.
pub const MAX_KEY_BYTES: u64 = 4096;

/// Why [`read_bounded`] read nothing.
#[derive(Debug)]
pub enum Unread {
    /// Opening or reading failed (`NotFound` among them).
    Io(std::io::Error),
    /// A folder.
    Folder,
    /// A FIFO or a socket.
    Special,
    /// Longer than the bound.
    TooLarge,
}

/// Reads a file of at most `max` bytes: a device, an endless pipe or a large file is refused
/// instead of being read to the end, and a FIFO nobody writes to is refused at once instead of
/// blocking (it is opened non-blocking, and its type checked on the open handle).
///
/// # Errors
/// [`Unread`]: what the path is instead, or the IO error.
pub fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>, Unread> {
    use std::io::Read as _;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    // Non-blocking: opening a FIFO nobody writes to returns at once (and is refused below)
    // instead of waiting for a writer forever. Reads of a regular file never block anyway.
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits().cast_signed());
    }
    let file = options.open(path).map_err(Unread::Io)?;
    let meta = file.metadata().map_err(Unread::Io)?;
    if meta.is_dir() {
        return Err(Unread::Folder);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if meta.file_type().is_fifo() || meta.file_type().is_socket() {
            return Err(Unread::Special);
        }
    }
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes).map_err(Unread::Io)?;
    if bytes.len() as u64 > max {
        return Err(Unread::TooLarge);
    }
    Ok(bytes)
}

/// Reads a key file (public or secret) as text, at most [`MAX_KEY_BYTES`] ([`read_bounded`]).
/// Every reader of a key file goes through here.
///
/// # Errors
/// A message (without the path) when the file cannot be opened or read, is larger than a key
/// file, or is not UTF-8.
pub fn read_key_text(path: &Path) -> Result<String, String> {
    let bytes = read_bounded(path, MAX_KEY_BYTES).map_err(|e| match e {
        Unread::Io(e) => e.to_string(),
        Unread::Folder => "a folder, not a key file".into(),
        Unread::Special => "a FIFO or socket, not a key file".into(),
        Unread::TooLarge => format!("more than {MAX_KEY_BYTES} bytes: not a minisign key file (those are two lines)"),
    })?;
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text: not a minisign key file".into())
}

/// The default state `skillc verify` writes: `$XDG_STATE_HOME/skillc/verify-state.json`,
/// else `~/.local/state/skillc/verify-state.json`.
pub fn default_state() -> PathBuf {
    let base = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .unwrap_or_else(|| PathBuf::from("."));
    base.join("skillc").join("verify-state.json")
}

/// Reads `skillc verify`'s state file ([`TrustState`], either version); an absent file is
/// empty. Only read here: `skillc verify` alone writes it, under its lock.
///
/// # Errors
/// [`ReadError`] when the file exists but cannot be read or is damaged: a catalog is never
/// used without the pins and rollback protection its user set up.
pub fn read_state(path: &Path) -> Result<TrustState, ReadError> {
    match std::fs::read(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TrustState::default()),
        Err(e) => Err(err(path, e)),
        Ok(b) => TrustState::parse(&b).map_err(|e| {
            err(
                path,
                format!("damaged ({e}); refusing to verify without its pinned keys and rollback protection (repair or remove it)"),
            )
        }),
    }
}

/// The location a pin is kept for: the catalog folder's canonical path.
pub fn location(out: &Path) -> String {
    out.canonicalize()
        .unwrap_or_else(|_| out.to_path_buf())
        .display()
        .to_string()
}

/// Who a catalog folder says signed it: its `skillc.pub` (a regular file, never through a
/// link, read bounded), when readable. Whether to believe it is the anchor's call.
pub fn folder_signer(dir: &Path) -> Option<PublicKey> {
    let path = dir.join(PUBLIC_KEY);
    if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    PublicKey::from_file(&read_key_text(&path).ok()?).ok()
}

/// Who the files of a folder read with [`read_tree`] say signed them (its `skillc.pub`).
pub fn tree_signer(files: &BTreeMap<String, Entry>) -> Option<PublicKey> {
    match files.get(PUBLIC_KEY) {
        Some(Entry::Bytes(b)) => PublicKey::from_file(&String::from_utf8_lossy(b)).ok(),
        _ => None,
    }
}

/// Whom a reader of a catalog trusts — exactly what `skillc verify` decides, read-only:
/// the anchor (`--public-key`, `[verify] keys`, else the location's pin), and `skillc verify`'s
/// state file for pins and rollback floors.
#[derive(Clone, Debug)]
pub struct Trust {
    /// The key given, the keys configured, or first use (the location's pin).
    pub anchor: Anchor,
    /// `skillc verify`'s state file (pins, rollback floors); `None` keeps none: the folder's
    /// own key is trusted as on first use, and no floor applies.
    pub state: Option<PathBuf>,
    /// The folder as messages name it (as `skillc verify` shows it); empty: its path.
    pub shown: String,
}

impl Default for Trust {
    fn default() -> Trust {
        Trust {
            anchor: Anchor::FirstUse,
            state: None,
            shown: String::new(),
        }
    }
}

/// Why a reader does not trust a catalog's signer.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// Refused as `skillc verify` refuses it (another key than the one given, configured or
    /// pinned).
    #[error("{0}")]
    Refused(Refusal),
    /// The state file cannot be read.
    #[error(transparent)]
    State(#[from] ReadError),
    /// No readable `skillc.pub` and no key given.
    #[error("{0} has no readable skillc.pub: name the signer's public key with --public-key")]
    NoSigner(String),
}

impl Trust {
    /// The folder as shown.
    pub fn shown(&self, dir: &Path) -> String {
        if self.shown.is_empty() {
            dir.display().to_string()
        } else {
            self.shown.clone()
        }
    }

    /// Decides, as `skillc verify` does and without writing anything, which key the catalog
    /// in `dir` is checked against and with which rollback floor; `signer` is the key the
    /// folder names (its `skillc.pub`, when readable).
    ///
    /// # Errors
    /// A `TrustError`: a refused signer, a damaged state file, no key to check with.
    pub fn decide(&self, dir: &Path, signer: Option<&PublicKey>) -> Result<Trusted, TrustError> {
        let state = match &self.state {
            Some(p) => read_state(p)?,
            None => TrustState::default(),
        };
        let shown = self.shown(dir);
        state
            .decide_folder((&location(dir), &shown), signer, &self.anchor, &Ask::default())
            .map_err(TrustError::Refused)?
            .ok_or(TrustError::NoSigner(shown))
    }
}

//! The build's memory between processes, under `.skillc/` (IO layer): `state.json` (what the
//! last build stamped, signed and wrote) and `fingerprint.json` (a digest of every input, to
//! answer "up to date" without computing anything).
//!
//! Neither file is an input of the outputs' *contents*: they only let a build keep times
//! (`imported_at`, catalog version) that the previous build chose, reuse signatures of
//! unchanged manifests (Ed25519 is deterministic, so a reused signature is the one signing
//! would produce) and skip writes of unchanged files. A missing or unreadable store means a
//! full build.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};

use serde::{Deserialize, Serialize};

use crate::emit::write::{EmitError, write_atomic};
use crate::messages::report::Totals;

/// Version of the store's format; a store of another format (or another skillc) is ignored.
/// 4: `state.json` and `fingerprint.json` live per output folder ([`out_store`]) and the
/// state records the spare generation (`emit::publish`).
pub const FORMAT: u32 = 4;

/// The store folder of one output folder: `.skillc/out/<id>/`, where `<id>` is the first 16
/// hex digits of the SHA-256 of the output folder's absolute path (its nearest existing
/// ancestor canonicalized). Each `--out` has its own memory of what skillc wrote there, so
/// alternating output folders never leaves stale files in either (issue 18, item 7).
pub fn out_store(state_dir: &Path, out: &Path) -> PathBuf {
    let abs = match (out.parent(), out.file_name()) {
        (Some(parent), Some(name)) => parent
            .canonicalize()
            .map_or_else(|_| out.to_path_buf(), |p| p.join(name)),
        _ => out.canonicalize().unwrap_or_else(|_| out.to_path_buf()),
    };
    let id = crate::util::sha256(abs.as_os_str().as_encoded_bytes());
    state_dir.join("out").join(&id[..16])
}

/// `state.json`: what the last build produced.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct State {
    /// [`FORMAT`].
    pub format: u32,
    /// The skillc version that wrote it.
    pub skillc: String,
    /// Key id (hex) of the key that made the signatures below.
    pub key_id: String,
    /// Per executor (by name): how its manifest was stamped and signed.
    pub executors: BTreeMap<String, ExecutorState>,
    /// The catalog's version, expiry and the digest of what it says.
    pub catalog: Option<CatalogState>,
    /// Every file of `out/` the last build wrote, with its digest: only these are ever
    /// removed, and a file whose digest is unchanged and whose size on disk matches is not
    /// rewritten.
    pub outputs: BTreeMap<String, OutputState>,
    /// The files of the spare generation (`emit::publish`), the catalog before the current
    /// one; `None` when the build knows nothing of a spare (it is then discarded, or filled
    /// with hard links to `out/`).
    #[serde(default)]
    pub spare: Option<BTreeMap<String, OutputState>>,
    /// The output folder this state describes (for people reading `.skillc/`).
    #[serde(default)]
    pub out: String,
    /// How many times `out/` was switched by builds with this store (ties `spare.json` to
    /// this state).
    #[serde(default)]
    pub generation: u64,
}

/// `spare.json` beside `state.json`: the identity of the spare generation's folder right after
/// the build that made it the spare, so that the next build in a new process can trust the
/// spare's record in `state.json` (one `stat`) instead of listing its 60,000 files. Removed
/// before a build writes into the spare and written again only once `state.json` describes it:
/// a build killed in between leaves no record, and the next build lists the spare.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpareRecord {
    /// [`State::generation`] of the state this record belongs to.
    pub generation: u64,
    /// Device, inode and change time (s, ns) of the spare folder (`emit::publish::identity`).
    pub identity: (u64, u64, i64, i64),
    /// Files of the spare skillc did not write (carried from `out/`): removed from the spare when
    /// they are no longer in `out/`.
    pub foreign: Vec<String>,
}

/// The name of [`SpareRecord`]'s file in the output folder's store.
pub const SPARE_RECORD: &str = "spare.json";

/// One executor of the last build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutorState {
    /// SHA-256 of the manifest rendered with an empty `imported_at`.
    pub fingerprint: String,
    /// The `imported_at` it was stamped with.
    pub imported_at: String,
    /// SHA-256 of the stamped manifest.
    pub manifest_sha256: String,
    /// Its signature file (`manifest.toml.sig`).
    pub sig: String,
}

/// The catalog of the last build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogState {
    /// SHA-256 of the catalog rendered without version and expiry, plus its lifetime.
    pub fingerprint: String,
    /// `catalog_version`.
    pub version: i64,
    /// `expires`.
    pub expires: String,
}

/// One file of `out/` as last written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputState {
    /// Hex SHA-256 of its bytes.
    pub sha256: String,
    /// Its size in bytes.
    pub size: u64,
    /// Written with the executable bit.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub executable: bool,
    /// Its modification time right after skillc wrote it (ns since the epoch; 0 unknown).
    #[serde(default)]
    pub mtime_ns: i128,
}

/// `fingerprint.json`: the digest of every input of the last completed build and what it
/// reported, so that an unchanged project is answered without computing anything.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// [`FORMAT`].
    pub format: u32,
    /// Digest of the tool version, the settings, the vocabulary, the key and every skill's
    /// files (see `session::Session::fingerprint`).
    pub inputs: String,
    /// Digest of the metadata of `out/`'s top after the build ([`out_stat`]): a stat-level
    /// check that `out/` is still the one built (what it does and does not see: there).
    /// Empty when not recorded.
    pub out: String,
    /// The counts the build reported.
    pub totals: Totals,
    /// Executors in the catalog.
    pub executors: usize,
    /// The rejected skills: display path and reason.
    pub rejected: Vec<(String, String)>,
    /// When the catalog written expires (Unix seconds): past it, the project is not up to
    /// date, however unchanged its inputs. `None` in fingerprints of earlier versions.
    #[serde(default)]
    pub expires_at: Option<i64>,
}

/// Reads a JSON store file; `None` when it is missing, unreadable, not a regular file or of
/// another format.
pub fn read<T: for<'de> Deserialize<'de>>(path: &Path) -> Option<T> {
    let bytes = crate::emit::write::read_regular(path).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Reads `state.json`, keeping it only when this skillc wrote it.
pub fn read_state(path: &Path) -> Option<State> {
    read::<State>(path).filter(|s| s.format == FORMAT && s.skillc == env!("CARGO_PKG_VERSION"))
}

/// Writes a store file atomically.
///
/// # Errors
/// Any IO failure.
pub fn write<T: Serialize>(path: &Path, value: &T) -> Result<(), EmitError> {
    let text = serde_json::to_vec(value).map_err(|e| EmitError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    write_atomic(path, &text, Some(0o644))
}

/// The stat-level picture of an output folder recorded in [`Fingerprint::out`]: a hex
/// SHA-256 over the folder itself and each of its top-level entries (path, kind, size,
/// modification and change time, inode; symbolic links not followed). `None` when `out` has
/// no signed catalog.
///
/// What it sees: `out/` switched or replaced (another inode), a file added, removed or
/// edited at the top (the catalog, its signature, the report, the menu index), a skill's
/// folder added to or removed from `executors/` or `skills/` (their times change). What it
/// does not see, by design (a no-op build reads about ten entries instead of the ~60,000
/// files of a 10k-skill catalog): an edit deeper inside `executors/` or `skills/`.
/// `skillc verify` catches those (every byte is covered by a signature), and the next build
/// with something to do, or `skillc build --force`, checks every file and repairs them.
pub fn out_stat(out: &Path) -> Option<String> {
    use sha2::Digest as _;
    stat(&out.join(crate::emit::CATALOG))?;
    stat(&out.join(crate::emit::CATALOG_SIG))?;
    let mut h = sha2::Sha256::new();
    let mut line = |rel: &Path, m: &std::fs::Metadata| {
        let kind = if m.is_symlink() {
            'l'
        } else if m.is_dir() {
            'd'
        } else {
            'f'
        };
        let t = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        #[cfg(unix)]
        let (ino, ctime) = {
            use std::os::unix::fs::MetadataExt as _;
            (m.ino(), (m.ctime(), m.ctime_nsec()))
        };
        #[cfg(not(unix))]
        let (ino, ctime) = (0u64, (0i64, 0i64));
        h.update(rel.as_os_str().as_encoded_bytes());
        h.update(
            format!(
                "\0{kind} {} {t} {ctime:?} {ino}\n",
                if m.is_dir() { 0 } else { m.len() }
            )
            .as_bytes(),
        );
    };
    line(Path::new(""), &std::fs::symlink_metadata(out).ok()?);
    let mut entries: Vec<std::fs::DirEntry> = std::fs::read_dir(out).ok()?.filter_map(Result::ok).collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for e in entries {
        let m = e.metadata().ok()?;
        line(Path::new(&e.file_name()), &m);
    }
    Some(crate::util::hex(&h.finalize()))
}

/// Size (0 for folders) and modification time (ns since the epoch) of a file or folder,
/// `None` when it is missing or a symbolic link.
pub fn stat(path: &Path) -> Option<(u64, i128)> {
    let m = std::fs::symlink_metadata(path).ok()?;
    if m.is_symlink() {
        return None;
    }
    let t = m.modified().ok()?;
    let ns = match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => i128::try_from(d.as_nanos()).unwrap_or(i128::MAX),
        Err(e) => -i128::try_from(e.duration().as_nanos()).unwrap_or(i128::MAX),
    };
    Some((if m.is_dir() { 0 } else { m.len() }, ns))
}

/// One update of the store: written in this order (state, audit lines, fingerprint), so that
/// a fingerprint on disk always describes a state on disk.
#[derive(Debug, Default)]
pub struct Update {
    /// The new `state.json`, when it changed.
    pub state: Option<Arc<State>>,
    /// Lines to append to `audit.jsonl`.
    pub audit: Vec<String>,
    /// The new `fingerprint.json`, when it changed.
    pub fingerprint: Option<Fingerprint>,
}

/// Where a store update goes: the project's `.skillc/` (the audit log) and the output
/// folder's store ([`out_store`]: state and fingerprint).
#[derive(Clone, Debug)]
pub struct Dirs {
    /// `.skillc/`.
    pub project: PathBuf,
    /// `.skillc/out/<id>/`.
    pub out: PathBuf,
}

/// Applies an update to the store.
///
/// # Errors
/// Any IO failure.
pub fn apply(dirs: &Dirs, u: &Update) -> Result<(), EmitError> {
    if let Some(state) = &u.state {
        write(&dirs.out.join("state.json"), state.as_ref())?;
    }
    if !u.audit.is_empty() {
        crate::emit::write::append_lines(&dirs.project.join("audit.jsonl"), &u.audit)?;
    }
    if let Some(fp) = &u.fingerprint {
        write(&dirs.out.join("fingerprint.json"), fp)?;
    }
    Ok(())
}

/// Writes store updates on a background thread, merging those that queue up (`skillc watch`:
/// the rebuilt catalog is reported without waiting for `state.json`). [`Background::finish`]
/// (or dropping it) waits for the last update.
pub struct Background {
    tx: Option<mpsc::Sender<Update>>,
    thread: Option<std::thread::JoinHandle<()>>,
    error: Arc<Mutex<Option<String>>>,
}

impl Background {
    /// Starts the writer for the store folders `dirs`.
    pub fn start(dirs: Dirs) -> Background {
        let (tx, rx) = mpsc::channel::<Update>();
        let error = Arc::new(Mutex::new(None));
        let err = error.clone();
        let thread = std::thread::spawn(move || {
            while let Ok(mut u) = rx.recv() {
                while let Ok(more) = rx.try_recv() {
                    u.state = more.state.or(u.state);
                    u.audit.extend(more.audit);
                    u.fingerprint = more.fingerprint.or(u.fingerprint);
                }
                if let Err(e) = apply(&dirs, &u)
                    && let Ok(mut slot) = err.lock()
                {
                    *slot = Some(e.to_string());
                }
            }
        });
        Background {
            tx: Some(tx),
            thread: Some(thread),
            error,
        }
    }

    /// Queues an update.
    pub fn send(&self, u: Update) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(u);
        }
    }

    /// The last write error, if any (taken).
    pub fn take_error(&self) -> Option<String> {
        self.error.lock().ok().and_then(|mut e| e.take())
    }

    /// Waits until every queued update is written.
    ///
    /// # Errors
    /// The last write failure.
    pub fn finish(&mut self) -> Result<(), EmitError> {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        match self.take_error() {
            Some(message) => Err(EmitError::Io {
                path: "the .skillc store".into(),
                message,
            }),
            None => Ok(()),
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// `.skillc/l5.json`: what L5's `python3` answered for each wrapper (by the wrapper's SHA-256),
/// so that a build in a new process runs Python only over wrappers it has not seen. Kept only
/// while the interpreter is the same one (`python` is its fingerprint) and the tool too.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct L5Cache {
    /// The tool version that wrote it.
    pub skillc: String,
    /// `admit::exec::System::python_fingerprint` of the interpreter that answered.
    pub python: String,
    /// Wrapper SHA-256 → its `--describe` output, or why the check failed.
    pub described: std::collections::HashMap<String, Result<String, String>>,
}

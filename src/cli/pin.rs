//! The consumer's side of trust for `skillc verify` (README, "Security model"): which key a
//! catalog is checked against (`--public-key`, else the project's `[verify] keys`, else the key
//! pinned for the location on first use), read from disk, and the state file that remembers
//! pins and rollback floors. The decisions themselves are `crate::trust`'s.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use super::keys::DEVELOPMENT_MARK;
use super::project::Project;
use crate::catalog::read::{Trust, read_key_text};
use crate::sign::{PublicKey, SecretKey};
use crate::trust::{Anchor, Candidate, TrustState};

/// The default state file: `$XDG_STATE_HOME/skillc/verify-state.json`, else
/// `~/.local/state/skillc/verify-state.json`.
pub(crate) fn default_state() -> PathBuf {
    crate::catalog::read::default_state()
}

/// Takes the state file's lock (`verify-state.json.lock` beside it, created with its folder):
/// verifications running at once read, decide and write the state one after another, so
/// none loses another's pin or rollback floor. Released when the returned file is dropped.
///
/// # Errors
/// The folder or the lock file cannot be created, or the lock cannot be taken.
pub(crate) fn lock_state(path: &Path) -> anyhow::Result<std::fs::File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    let lock = PathBuf::from(name);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock)
        .with_context(|| format!("opening {}", lock.display()))?;
    file.lock().with_context(|| format!("locking {}", lock.display()))?;
    Ok(file)
}

/// Reads the state file; an absent one is empty (the one reader of it:
/// `catalog::read::read_state`).
///
/// # Errors
/// A damaged state: refusing is safer than verifying without rollback protection or pins.
pub(crate) fn read_state(path: &Path) -> anyhow::Result<TrustState> {
    Ok(crate::catalog::read::read_state(path)?)
}

/// Writes the state file atomically.
pub(crate) fn write_state(path: &Path, state: &TrustState) -> anyhow::Result<()> {
    crate::emit::write::write_atomic(path, state.render().as_bytes(), Some(0o644))
        .with_context(|| format!("recording the verification in {}", path.display()))
}

/// The location a pin is kept for: the catalog folder's canonical path.
pub(crate) fn location(out: &Path) -> String {
    crate::catalog::read::location(out)
}

/// The folder as messages show it: relative to the current folder when inside it.
pub(crate) fn shown(out: &Path, cwd: &Path) -> String {
    match out.strip_prefix(cwd) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => out.display().to_string(),
    }
}

/// The public key of the project's development key (`.skillc/signing.key`), when there is one.
fn development_key(project: &Project) -> Option<PublicKey> {
    let text = read_key_text(&project.root.join(".skillc/signing.key")).ok()?;
    SecretKey::from_file(&text).ok().map(|k| k.public())
}

/// Reads a public key file the consumer named, and what is known about it.
fn candidate(path: &Path, out: &Path, dev: Option<&PublicKey>) -> anyhow::Result<Candidate> {
    let text = read_key_text(path).map_err(|e| anyhow::anyhow!("reading public key {}: {e}", path.display()))?;
    anyhow::ensure!(
        !text.contains("secret key"),
        "{} is a secret key: pass the public key (`skillc.pub`) with --public-key, and keep the secret one private",
        path.display()
    );
    let key = PublicKey::from_file(&text).with_context(|| format!("public key {}", path.display()))?;
    let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let in_folder = canon(path).starts_with(canon(out));
    let development = text.lines().next().is_some_and(|l| l.contains(DEVELOPMENT_MARK))
        || path.components().any(|c| c.as_os_str() == ".skillc")
        || dev == Some(&key);
    Ok(Candidate {
        key,
        shown: path.display().to_string(),
        in_folder,
        development,
    })
}

/// The anchor of a verification of `out`: `--public-key FILE`, else the keys `[verify] keys` of the
/// project around the current folder names (relative to its root), else first use.
///
/// # Errors
/// A key file that cannot be read, is a secret key or is not a minisign public key.
pub(crate) fn anchor(flag: Option<&Path>, out: &Path, project: &Project) -> anyhow::Result<Anchor> {
    if flag.is_none() && project.config.verify_keys.is_empty() {
        return Ok(Anchor::FirstUse);
    }
    let dev = development_key(project);
    if let Some(p) = flag {
        return Ok(Anchor::Given(Box::new(candidate(p, out, dev.as_ref())?)));
    }
    let keys = project
        .config
        .verify_keys
        .iter()
        .map(|k| candidate(&project.root.join(k), out, dev.as_ref()))
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(Anchor::Configured(keys))
}

/// The trust of a reader of `out` (`list`, `info`, `search`, `serve`, `menu`, `playbook`):
/// the same anchor and state file as `skillc verify` (`--public-key`, else `[verify] keys`, else the
/// folder's pin; `--state`, else verify's default), decided without writing anything — a
/// catalog `verify` refuses is refused by every reader, with the same message.
///
/// # Errors
/// A key file that cannot be read, is a secret key or is not a minisign public key.
pub(crate) fn reader_trust(
    key: Option<&Path>,
    state: Option<&Path>,
    out: &Path,
    project: &Project,
    cwd: &Path,
) -> anyhow::Result<Trust> {
    Ok(Trust {
        anchor: anchor(key.map(|k| cwd.join(k)).as_deref(), out, project)?,
        state: Some(state.map_or_else(default_state, |s| cwd.join(s))),
        shown: shown(out, cwd),
    })
}

//! Signing keys on disk: `skillc keygen`, and finding the key a build signs with.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use super::{Printer, Status, project};
use crate::emit::write::write_atomic;
use crate::sign::SecretKey;

/// The environment variable holding the signing key (its file contents, or a path to it).
pub const KEY_ENV: &str = "SKILLC_SIGNING_KEY";

/// Arguments of `skillc keygen`.
#[derive(Debug, clap::Args)]
pub struct KeygenArgs {
    /// Where to write the secret key (default: `[signing] key` of pipeline.toml, else
    /// `.skillc/signing.key`). The public key is written beside it: `skillc.pub` for
    /// `signing.key`, else `<stem>.pub`.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Replace an existing key.
    #[arg(long)]
    pub force: bool,
}

/// A new random key.
pub(crate) fn generate() -> anyhow::Result<SecretKey> {
    let mut seed = [0u8; 32];
    let mut id = [0u8; 8];
    getrandom::fill(&mut seed).map_err(|e| anyhow::anyhow!("no randomness available: {e}"))?;
    getrandom::fill(&mut id).map_err(|e| anyhow::anyhow!("no randomness available: {e}"))?;
    Ok(SecretKey::from_seed(seed, id))
}

/// The public key file beside a secret key: `skillc.pub` for the default `signing.key`,
/// else `<stem>.pub` (`release.key` → `release.pub`), so two keys never share one.
pub(crate) fn public_path(secret: &Path) -> PathBuf {
    match secret.file_stem().map(|s| s.to_string_lossy().into_owned()) {
        Some(stem) if stem != "signing" && secret.file_name() != Some(std::ffi::OsStr::new(&format!("{stem}.pub"))) => {
            secret.with_file_name(format!("{stem}.pub"))
        }
        _ => secret.with_file_name("skillc.pub"),
    }
}

/// Writes a key pair: the secret key (mode 0600) and its public key beside it.
pub(crate) fn write_pair(path: &Path, key: &SecretKey) -> anyhow::Result<PathBuf> {
    write_atomic(path, key.to_file().as_bytes(), Some(0o600))?;
    let public = public_path(path);
    write_atomic(&public, key.public().to_file().as_bytes(), Some(0o644))?;
    if let Some(dir) = path.parent()
        && dir.file_name().is_some_and(|n| n == ".skillc")
    {
        ignore_state_dir(dir)?;
    }
    Ok(public)
}

/// Makes sure `.skillc/` is never committed, whatever the project's `.gitignore` says.
pub(crate) fn ignore_state_dir(dir: &Path) -> anyhow::Result<()> {
    let gi = dir.join(".gitignore");
    if !gi.exists() {
        write_atomic(
            &gi,
            b"# skillc state: signing keys, fingerprints, audit log. Never commit.\n*\n",
            Some(0o644),
        )?;
    }
    Ok(())
}

pub(crate) fn keygen(args: &KeygenArgs, out: &mut Printer) -> anyhow::Result<Status> {
    let project = project::load(&std::env::current_dir()?, out)?;
    let path = args
        .output
        .clone()
        .unwrap_or_else(|| project.root.join(&project.config.signing_key));
    anyhow::ensure!(
        public_path(&path) != path,
        "{} is where the public key goes; name the secret key differently (e.g. `signing.key`)",
        path.display()
    );
    // A folder named with -o is never made up: a typo would put the secret key somewhere
    // nobody looks (the default `.skillc/` is the project's own, and made when missing).
    if args.output.is_some()
        && let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        anyhow::bail!(
            "{} is not a folder; create it first (`mkdir -p {}`), or name a key file in an existing folder",
            dir.display(),
            dir.display()
        );
    }
    for existing in [path.clone(), public_path(&path)] {
        let meta = match std::fs::symlink_metadata(&existing) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("reading {}", existing.display())),
            Ok(m) => m,
        };
        // Only a key file is ever replaced: never a link (whose target would be left
        // behind), a FIFO, a device or a folder, even with --force.
        anyhow::ensure!(
            meta.is_file(),
            "{} is {}, not a key file; refusing to replace it (remove it, or write the key elsewhere with -o)",
            existing.display(),
            file_kind(&meta)
        );
        anyhow::ensure!(
            args.force,
            "{} already exists; pass --force to replace it (catalogs signed with the old key will no longer verify)",
            existing.display()
        );
    }
    let key = generate()?;
    let public = write_pair(&path, &key)?;
    out.line(&format!(
        "wrote secret key {} (mode 0600) and public key {}",
        path.display(),
        public.display()
    ))?;
    out.line(&format!("key id {}", key.public().key_id_hex()))?;
    Ok(Status::Success)
}

/// What a file that is not a regular file is, in words.
fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_symlink() {
        "a symbolic link"
    } else if t.is_dir() {
        "a folder"
    } else {
        "not a regular file"
    }
}

/// Where the signing key came from.
pub(crate) enum KeySource {
    /// `--key`, the environment, or the configured file.
    Existing,
    /// A development key created by this build.
    Created(PathBuf),
}

/// Finds the signing key: `--key`, else `SKILLC_SIGNING_KEY` (contents or path), else the
/// configured file; when the configured file is the default and missing, creates a
/// development key there.
pub(crate) fn signing_key(
    flag: Option<&Path>,
    configured: &Path,
    is_default: bool,
) -> anyhow::Result<(SecretKey, KeySource)> {
    let read = |p: &Path| -> anyhow::Result<SecretKey> {
        let text = crate::catalog::read::read_key_text(p)
            .map_err(|e| anyhow::anyhow!("reading signing key {}: {e}", p.display()))?;
        SecretKey::from_file(&text).with_context(|| format!("signing key {}", p.display()))
    };
    if let Some(p) = flag {
        return Ok((read(p)?, KeySource::Existing));
    }
    if let Some(raw) = std::env::var_os(KEY_ENV) {
        // Set but empty is a mistake (a CI secret that did not expand), never "no key".
        let v = raw.to_string_lossy().into_owned();
        anyhow::ensure!(
            !v.trim().is_empty(),
            "{KEY_ENV} is set but empty; unset it to use the configured key"
        );
        let path = Path::new(v.trim());
        if !v.contains('\n') && path.is_file() {
            return Ok((read(path)?, KeySource::Existing));
        }
        // The key itself (a whole key file, or just its base64 line). Never echo the value.
        let key = SecretKey::from_file(&v).map_err(|e| {
            anyhow::anyhow!("{KEY_ENV} holds neither the path of a key file nor a minisign secret key ({e})")
        })?;
        return Ok((key, KeySource::Existing));
    }
    if configured.exists() {
        return Ok((read(configured)?, KeySource::Existing));
    }
    anyhow::ensure!(
        is_default,
        "signing key {} not found; create it with `skillc keygen -o {}` or set {KEY_ENV}",
        configured.display(),
        configured.display()
    );
    let key = generate()?;
    let public = write_pair(configured, &key)?;
    // Marked, so that `verify --production` knows it even when copied out of `.skillc/`.
    write_atomic(&public, development_public(&key).as_bytes(), Some(0o644))?;
    Ok((key, KeySource::Created(configured.to_path_buf())))
}

/// The untrusted comment that marks the public key of a development key (`verify
/// --production` refuses such a key).
pub(crate) const DEVELOPMENT_MARK: &str = "skillc development key";

/// The public key file of a development key: minisign's layout, with [`DEVELOPMENT_MARK`] in
/// its comment.
fn development_public(key: &SecretKey) -> String {
    let public = key.public();
    let line = crate::trust::key_line(&public);
    format!(
        "untrusted comment: {DEVELOPMENT_MARK} {} (made by skillc build; not for releases)\n{line}\n",
        public.key_id_hex()
    )
}

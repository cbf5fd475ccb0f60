//! The catalog in use (IO layer): opening a built `out/` for what runs after the build —
//! `skillc menu`, `skillc playbook`, and `serve` — and nothing from a catalog that does not
//! verify (RUNTIME.md: "nothing is offered, loaded, listed or served from an `out/` that
//! `skillc verify` would refuse").
//!
//! What is verified on [`MenuCatalog::open`] is the chain of trust of what the menu reads, so
//! that a fresh process answers in milliseconds on a catalog of 10,000 skills: the catalog's
//! signature and trusted comment, its expiry, rollback (against the state `skillc verify`
//! records, read-only here), and the hashes of the menu index (and dense vectors) that the
//! signed catalog vouches for. The index in turn records each SKILL.md's hash, checked by
//! [`MenuCatalog::playbook`] before a body is returned. [`Depth::Full`] runs every check of
//! `skillc verify` first (what `serve` does once at start).
//!
//! Catalog values are read from the part of `catalog.toml` before its first `[[` table
//! (header and `[files]`, written first by `emit::render_catalog`) — with the same TOML
//! parser as `verify`, after the signature over the whole file has been checked.


use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::openai;
use crate::emit::{self, write};
use crate::util::sha256;
use crate::menu::embed::{Embedder as _, VECTORS_FILE};
use crate::menu::{DenseTurn, Menu, index};
use crate::sign::PublicKey;
use crate::verify::{self, Entry, Failure};

/// How much of the catalog [`MenuCatalog::open`] verifies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// The chain of what the menu reads (see the module documentation).
    Menu,
    /// Everything `skillc verify` checks.
    Full,
}

/// How to open a catalog.
#[derive(Clone, Debug)]
pub struct OpenOptions {
    /// The public key to trust (default: the folder's `skillc.pub`).
    pub key: Option<PathBuf>,
    /// The rollback state `skillc verify` writes (read only here); `None` skips the check.
    pub state: Option<PathBuf>,
    /// Current time, Unix seconds.
    pub now: i64,
    /// What to verify.
    pub depth: Depth,
}

/// Why a catalog cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The folder is not a catalog.
    #[error("{0} is not a catalog (it has no catalog.toml); build one with `skillc build`")]
    NotACatalog(String),
    /// Reading failed.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        message: String,
    },
    /// Verification failed: the catalog is refused.
    #[error("the catalog in {dir} does not verify: {}", .failures.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Refused {
        /// The folder.
        dir: String,
        /// Every failure found.
        failures: Vec<Failure>,
    },
    /// A skill not in the catalog, or disabled.
    #[error("{0}")]
    Skill(String),
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> CatalogError + '_ {
    move |e| CatalogError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Reads a regular file (never through a symbolic link).
fn read_regular(path: &Path) -> Result<Vec<u8>, CatalogError> {
    let meta = std::fs::symlink_metadata(path).map_err(io(path))?;
    if !meta.is_file() {
        return Err(CatalogError::Io {
            path: path.display().to_string(),
            message: "not a regular file".into(),
        });
    }
    std::fs::read(path).map_err(io(path))
}

/// The default rollback state: `$XDG_STATE_HOME/skillc/verify-state.json`, else
/// `~/.local/state/skillc/verify-state.json` (what `skillc verify` writes).
pub fn default_state() -> PathBuf {
    let base = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .unwrap_or_else(|| PathBuf::from("."));
    base.join("skillc").join("verify-state.json")
}

/// Files larger than this are not read: nothing skillc writes comes close.
const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// Reads a whole `out/` folder for [`verify::verify`], without following links or reading
/// anything that is not a regular file.
///
/// # Errors
/// IO failures, with the path.
pub fn read_tree(dir: &Path) -> Result<BTreeMap<String, Entry>, CatalogError> {
    let mut files = BTreeMap::new();
    let listed = write::list_files(dir).map_err(|e| CatalogError::Io {
        path: dir.display().to_string(),
        message: e.to_string(),
    })?;
    for listed in listed {
        let meta = std::fs::symlink_metadata(&listed.full).map_err(io(&listed.full))?;
        let entry = if !listed.utf8 {
            Entry::Irregular("a file name that is not UTF-8".into())
        } else if listed.symlink {
            Entry::Irregular("a symbolic link".into())
        } else if !meta.is_file() {
            Entry::Irregular("not a regular file".into())
        } else if meta.len() > MAX_FILE_BYTES {
            Entry::Irregular(format!("{} bytes, larger than anything skillc writes", meta.len()))
        } else {
            Entry::Bytes(std::fs::read(&listed.full).map_err(io(&listed.full))?)
        };
        files.insert(listed.path, entry);
    }
    Ok(files)
}

/// Reads the public key file, refusing a secret key.
///
/// # Errors
/// IO and format failures, with the path.
pub fn read_key(path: &Path) -> Result<PublicKey, CatalogError> {
    let text = std::fs::read_to_string(path).map_err(io(path))?;
    if text.contains("secret key") {
        return Err(CatalogError::Io {
            path: path.display().to_string(),
            message: "a secret key: pass the public key (`skillc.pub`), and keep the secret one private".into(),
        });
    }
    PublicKey::from_file(&text).map_err(|e| CatalogError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

/// The last accepted version for `key_id` in a rollback state file (absent: none).
fn accepted(state: Option<&Path>, key_id: &str) -> Result<Option<i64>, CatalogError> {
    let Some(path) = state else { return Ok(None) };
    match std::fs::read(path) {
        Err(_) => Ok(None),
        Ok(b) => {
            let m: BTreeMap<String, i64> = serde_json::from_slice(&b).map_err(|_| CatalogError::Io {
                path: path.display().to_string(),
                message: "damaged; refusing the catalog without rollback protection (repair or remove it)".into(),
            })?;
            Ok(m.get(key_id).copied())
        }
    }
}

/// A verified catalog and its menu.
#[derive(Debug)]
pub struct MenuCatalog {
    dir: PathBuf,
    /// `catalog_version`.
    pub version: i64,
    /// Expiry (RFC 3339).
    pub expires: String,
    /// Signer's key id.
    pub key_id: String,
    /// The menu, loaded.
    pub menu: Menu,
    embedder: Option<openai::OpenAi>,
}

impl MenuCatalog {
    /// Opens and verifies a catalog folder.
    ///
    /// # Errors
    /// [`CatalogError::Refused`] with every failure when it does not verify; IO errors.
    pub fn open(dir: &Path, opts: &OpenOptions) -> Result<MenuCatalog, CatalogError> {
        if !dir.join(emit::CATALOG).is_file() {
            return Err(CatalogError::NotACatalog(dir.display().to_string()));
        }
        let key = read_key(&opts.key.clone().unwrap_or_else(|| dir.join(emit::PUBLIC_KEY)))?;
        let accepted = accepted(opts.state.as_deref(), &key.key_id_hex())?;
        let refused = |failures: Vec<Failure>| CatalogError::Refused {
            dir: dir.display().to_string(),
            failures,
        };
        if opts.depth == Depth::Full {
            let files = read_tree(dir)?;
            let v = verify::verify(
                &files,
                &key,
                &verify::Options {
                    now: opts.now,
                    accepted,
                    production: false,
                },
            );
            if !v.failures.is_empty() {
                return Err(refused(v.failures));
            }
        }
        let catalog = read_regular(&dir.join(emit::CATALOG))?;
        let sig = read_regular(&dir.join(emit::CATALOG_SIG))
            .map_err(|_| refused(vec![Failure::Missing(emit::CATALOG_SIG.into())]))?;
        let trusted = key.verify(&catalog, &String::from_utf8_lossy(&sig)).map_err(|e| {
            refused(vec![Failure::BadSignature {
                file: emit::CATALOG.into(),
                why: e.to_string(),
            }])
        })?;
        let head = header_of(&catalog).map_err(|why| {
            refused(vec![Failure::Malformed {
                file: emit::CATALOG.into(),
                why,
            }])
        })?;
        let mut failures = Vec::new();
        if trusted != emit::catalog_trusted_comment(head.version, &head.expires) {
            failures.push(Failure::Malformed {
                file: emit::CATALOG_SIG.into(),
                why: format!("the trusted comment `{trusted}` disagrees with catalog.toml"),
            });
        }
        match head.expires.parse::<jiff::Timestamp>() {
            Ok(t) if t.as_second() <= opts.now => failures.push(Failure::Expired {
                expires: head.expires.clone(),
            }),
            Ok(_) => {}
            Err(e) => failures.push(Failure::Malformed {
                file: emit::CATALOG.into(),
                why: format!("expires: {e}"),
            }),
        }
        if let Some(a) = accepted
            && head.version < a
        {
            failures.push(Failure::Rollback {
                version: head.version,
                accepted: a,
            });
        }
        let vouched = |name: &str, failures: &mut Vec<Failure>| -> Option<Vec<u8>> {
            let Some(hash) = head.files.get(name) else {
                failures.push(Failure::Malformed {
                    file: emit::CATALOG.into(),
                    why: format!("does not vouch for {name} (built by an older skillc? rebuild the catalog)"),
                });
                return None;
            };
            match read_regular(&dir.join(name)) {
                Err(_) => {
                    failures.push(Failure::Missing(name.into()));
                    None
                }
                Ok(b) if hash.strip_prefix("sha256:").unwrap_or(hash) != sha256(&b) => {
                    failures.push(Failure::HashMismatch {
                        file: name.into(),
                        recorded_in: emit::CATALOG.into(),
                    });
                    None
                }
                Ok(b) => Some(b),
            }
        };
        let index_bytes = vouched(index::FILE, &mut failures);
        if !failures.is_empty() {
            return Err(refused(failures));
        }
        let index_bytes = index_bytes.unwrap_or_default();
        // The dense vectors are read only when the index names them.
        let dense = index::Index::parse_header(&index_bytes).ok().and_then(|h| h.dense);
        let vectors = match &dense {
            Some(_) => vouched(VECTORS_FILE, &mut failures),
            None => None,
        };
        if !failures.is_empty() {
            return Err(refused(failures));
        }
        let menu = Menu::load(index_bytes, vectors).map_err(|e| {
            refused(vec![Failure::Malformed {
                file: index::FILE.into(),
                why: e.0,
            }])
        })?;
        let embedder = menu
            .index()
            .header
            .settings
            .embedder
            .as_ref()
            .filter(|_| menu.dense_embedder().is_some())
            .map(openai::OpenAi::new);
        Ok(MenuCatalog {
            dir: dir.to_path_buf(),
            version: head.version,
            expires: head.expires,
            key_id: key.key_id_hex(),
            menu,
            embedder,
        })
    }

    /// The catalog folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The retained SKILL.md of a skill.
    pub fn skill_md_path(&self, slug: &str) -> PathBuf {
        self.dir.join("skills").join(slug).join("SKILL.md")
    }

    /// The dense half of a turn: embedded by the catalog's external embedder, or
    /// [`DenseTurn::Unavailable`] when it cannot be reached (never an error), or
    /// [`DenseTurn::None`] when the catalog has no dense vectors.
    pub fn embed_turn(&self, turn: &str) -> DenseTurn {
        let Some(e) = &self.embedder else {
            return DenseTurn::None;
        };
        match e.embed_batch(&[turn]) {
            Ok(mut v) if v.len() == 1 => DenseTurn::Vector(v.remove(0)),
            Ok(_) => DenseTurn::Unavailable("no vector for the turn".into()),
            Err(err) => DenseTurn::Unavailable(err.to_string()),
        }
    }

    /// The playbook of a skill: its SKILL.md body, verbatim, after checking the file against
    /// the hash the verified index records.
    ///
    /// # Errors
    /// [`CatalogError::Skill`] for a skill not in the catalog or disabled;
    /// [`CatalogError::Refused`] when SKILL.md differs from its recorded hash.
    pub fn playbook(&self, slug: &str) -> Result<String, CatalogError> {
        let index = self.menu.index();
        let Some(i) = index.find(slug) else {
            return Err(CatalogError::Skill(format!(
                "no skill `{slug}` in this catalog (`skillc menu --turn TEXT` lists the skills that fit a turn)"
            )));
        };
        let s = &index.skills[i];
        if !s.enabled {
            return Err(CatalogError::Skill(format!(
                "skill `{slug}` is disabled (`metadata.disabled`): it is never offered or loaded"
            )));
        }
        let rel = format!("skills/{slug}/SKILL.md");
        let path = self.dir.join(&rel);
        let bytes = read_regular(&path)?;
        use sha2::Digest as _;
        if sha2::Sha256::digest(&bytes).as_slice() != s.skill_md_sha256 {
            return Err(CatalogError::Refused {
                dir: self.dir.display().to_string(),
                failures: vec![Failure::HashMismatch {
                    file: rel,
                    recorded_in: index::FILE.into(),
                }],
            });
        }
        let body = bytes.get(s.body_offset as usize..).unwrap_or_default();
        Ok(String::from_utf8_lossy(body).into_owned())
    }
}

/// The header values of `catalog.toml`.
struct Head {
    version: i64,
    expires: String,
    files: BTreeMap<String, String>,
}

/// Reads the header and `[files]` of a catalog: the text before its first array of tables.
fn header_of(catalog: &[u8]) -> Result<Head, String> {
    let text = std::str::from_utf8(catalog).map_err(|_| "not UTF-8".to_owned())?;
    let end = text.find("\n[[").map_or(text.len(), |i| i + 1);
    let t: toml::Table = toml::from_str(&text[..end]).map_err(|e| e.message().to_owned())?;
    let version = t.get("catalog_version").and_then(toml::Value::as_integer);
    let expires = t.get("expires").and_then(toml::Value::as_str);
    let (Some(version), Some(expires)) = (version, expires) else {
        return Err("no catalog_version or expires".into());
    };
    let files = t
        .get("files")
        .and_then(toml::Value::as_table)
        .map(|f| {
            f.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
                .collect()
        })
        .unwrap_or_default();
    Ok(Head {
        version,
        expires: expires.to_owned(),
        files,
    })
}

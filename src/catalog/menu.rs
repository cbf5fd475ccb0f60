//! The menu and playbooks of a built catalog (IO layer): what `skillc menu`, `skillc
//! playbook`, `serve` and programs embedding skillc read after the build — and nothing from a
//! catalog that does not verify (RUNTIME.md: "nothing is offered, loaded, listed or served
//! from an `out/` that `skillc verify` would refuse").
//!
//! What [`MenuCatalog::open`] verifies is the chain of trust of what the menu reads, so that a
//! fresh process answers in milliseconds on a catalog of 10,000 skills without parsing its
//! 5 MB `catalog.toml`:
//!
//! 1. `menu.idx.sig`, a minisign signature of `menu.idx` by the catalog's key (the trusted key
//!    given, else the folder's `skillc.pub`), whose trusted comment names the catalog it belongs
//!    to (`catalog_version`, `expires`, `file:menu.idx`, as the catalog's own);
//! 2. `catalog.toml` against `catalog.toml.sig` (streamed through BLAKE2b on a second thread
//!    while the index is loaded, never held, no TOML parse): a genuine signature of these
//!    bytes by the same key, whose trusted comment is that same catalog version and expiry;
//! 3. that catalog's expiry, and rollback against the versions `skillc verify` accepted for
//!    the folder and the key (its state file, read only here);
//! 4. `menu.vec` (dense vectors), when the index names it, against the SHA-256 the signed
//!    index records;
//! 5. before a skill is offered (every item of a turn's menu) or its playbook loaded, the
//!    files of that skill — each executor's manifest (hash and signature), wrapper and
//!    language state, the retained SKILL.md, scripts, references and assets — against what the
//!    signed catalog lists for it, read from its block of `menu.files` (the block's SHA-256 is
//!    in the signed index; `verify::verify_skill` runs `skillc verify`'s checks on
//!    it), and that the skill's folders hold nothing the catalog does not list; for a
//!    playbook also the SKILL.md against the hash the index records, before a byte of it is
//!    returned. An open catalog remembers which skills passed: a long-lived reader checks a
//!    skill once, at the first turn that offers it or its first playbook (what that
//!    guarantees: [`MenuCatalog::select`]); the SKILL.md a playbook returns is checked on
//!    every call.
//!
//! A skill that fails is never offered or loaded, and since a failing file means `skillc
//! verify` refuses the folder, nothing is (RUNTIME.md): the turn's menu is refused with
//! verify's message naming the file ([`CatalogError::NotOffered`]; exit 1 on the command
//! line), and so is the playbook ([`CatalogError::Refused`]). What this does not check is the rest of the tree — the skills this
//! turn does not offer, `report.json`, that `catalog.toml` vouches for `menu.idx` —
//! which the menu never reads: [`Depth::Full`] (`--full-verify`) runs all of `skillc verify`
//! first, and `serve` and the catalog commands always do.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use sha2::Digest as _;

mod checked;
use checked::Checked;

use super::read::{ReadError, Trust, TrustError, folder_signer, read_tree, tree_signer};
use crate::embed::Embedder;
use crate::embed::openai::OpenAi;
use crate::emit;
use crate::menu::settings::DenseEmbedder;
use crate::menu::{DenseTurn, Menu, MenuError, Query, Selection, index};
use crate::sign::{self, PublicKey};
use crate::util::sha256;
use crate::verify::{self, Entry, Failure};
use std::collections::BTreeMap;

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
    /// Whom to trust: the same read-only decision as `skillc verify`'s — the key given, the
    /// keys configured or the location's pin, and verify's state file for rollback floors
    /// (read only here). The default trusts the folder's `skillc.pub` with no floor.
    pub trust: Trust,
    /// Current time, Unix seconds.
    pub now: i64,
    /// What to verify.
    pub depth: Depth,
    /// The local model folder for turns, when the catalog's vectors come from one (default:
    /// the folder configured at build time, relative to the catalog folder's parent).
    pub model: Option<PathBuf>,
}

/// Why a catalog cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The folder is not a catalog.
    #[error("{0} is not a catalog (it has no catalog.toml); build one with `skillc build`")]
    NotACatalog(String),
    /// Reading the folder failed.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The signer is not trusted, as `skillc verify` decides.
    #[error(transparent)]
    Trust(#[from] TrustError),
    /// Reading a file failed.
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
    /// A skill the turn's menu would offer does not verify, so the folder is one `skillc
    /// verify` refuses: nothing is offered (RUNTIME.md).
    #[error("the catalog in {dir} does not verify: {}", .skills.iter().map(|(s, f)| format!("`{s}`: {}", f.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))).collect::<Vec<_>>().join("; "))]
    NotOffered {
        /// The folder.
        dir: String,
        /// Each failing skill of the menu, with its failures.
        skills: Vec<(String, Vec<Failure>)>,
        /// The turn's selection with nothing in it (embedder, recipe, τ and warnings kept).
        empty: Box<Selection>,
    },
    /// The turn's menu cannot be given (a blank or oversized turn, an unknown agent, a size
    /// out of range, no threshold).
    #[error(transparent)]
    Menu(#[from] MenuError),
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> CatalogError + '_ {
    move |e| CatalogError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Opens a regular file (never through a symbolic link).
fn open_regular(path: &Path) -> Result<std::fs::File, CatalogError> {
    let meta = std::fs::symlink_metadata(path).map_err(io(path))?;
    if !meta.is_file() {
        return Err(CatalogError::Io {
            path: path.display().to_string(),
            message: "not a regular file".into(),
        });
    }
    std::fs::File::open(path).map_err(io(path))
}

/// Reads a regular file (never through a symbolic link).
fn read_regular(path: &Path) -> Result<Vec<u8>, CatalogError> {
    use std::io::Read as _;
    let mut f = open_regular(path)?;
    let mut b = Vec::new();
    f.read_to_end(&mut b).map_err(io(path))?;
    Ok(b)
}

/// The dense half of turns: the catalog's embedder, reached when a turn is first embedded
/// (a local model is loaded then, an endpoint called then).
pub struct TurnEmbedder {
    /// The id the catalog's vectors were made by.
    expected: String,
    make: Box<dyn Fn() -> Result<Box<dyn Embedder>, String> + Send + Sync>,
    made: OnceLock<Result<Box<dyn Embedder>, String>>,
}

impl fmt::Debug for TurnEmbedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TurnEmbedder({})", self.expected)
    }
}

impl TurnEmbedder {
    /// The embedder of a menu's dense vectors, or `None` when it has none. `dir` is the
    /// catalog folder: a local model's configured folder is resolved against its parent (the
    /// project root, where `out/` lives), unless `model` names the folder.
    pub fn for_menu(menu: &Menu, dir: &Path, model: Option<&Path>) -> Option<TurnEmbedder> {
        let expected = menu.dense_embedder()?.embedder.clone();
        let make: Box<dyn Fn() -> Result<Box<dyn Embedder>, String> + Send + Sync> =
            match menu.index().header.settings.embedder.clone()? {
                DenseEmbedder::External(e) => {
                    Box::new(move || Ok(Box::new(OpenAi::new(&e.url, &e.model, e.timeout_ms)) as Box<dyn Embedder>))
                }
                DenseEmbedder::Local(folder) => {
                    let base = dir.parent().unwrap_or(Path::new("."));
                    let folder = model.map_or_else(|| base.join(folder), Path::to_path_buf);
                    Box::new(move || local(&folder))
                }
            };
        Some(TurnEmbedder {
            expected,
            make,
            made: OnceLock::new(),
        })
    }

    /// The turn's vector, or [`DenseTurn::Unavailable`] (never an error: the menu then has
    /// trigger hits and always-on skills, with a warning) when the embedder cannot be
    /// reached, loaded, or is not the one the catalog's vectors come from.
    pub fn embed(&self, turn: &str) -> DenseTurn {
        let e = match self.made.get_or_init(&self.make) {
            Ok(e) => e,
            Err(why) => return DenseTurn::Unavailable(why.clone()),
        };
        if e.id() != self.expected {
            return DenseTurn::Unavailable(format!(
                "the embedder is `{}`, but the catalog's vectors were made by `{}` (rebuild the catalog, or give the model it was built with)",
                e.id(),
                self.expected
            ));
        }
        match e.embed_batch(&[&crate::menu::dense::turn_text(turn)]) {
            Ok(mut v) if v.len() == 1 && !v[0].is_empty() => DenseTurn::Vector(v.remove(0)),
            Ok(_) => DenseTurn::Unavailable("no vector for the turn".into()),
            Err(err) => DenseTurn::Unavailable(err.to_string()),
        }
    }
}

#[cfg(feature = "local-model")]
fn local(folder: &Path) -> Result<Box<dyn Embedder>, String> {
    crate::embed::local::LocalModel::load(folder)
        .map(|m| Box::new(m) as Box<dyn Embedder>)
        .map_err(|e| e.to_string())
}

#[cfg(not(feature = "local-model"))]
fn local(folder: &Path) -> Result<Box<dyn Embedder>, String> {
    Err(format!(
        "the catalog's vectors come from a local model ({}), but this skillc was built without the `local-model` feature",
        folder.display()
    ))
}

/// A verified catalog's menu, and the playbooks of its skills.
#[derive(Debug)]
pub struct MenuCatalog {
    dir: PathBuf,
    /// `catalog_version` of the catalog the index belongs to.
    pub version: i64,
    /// Its expiry (RFC 3339).
    pub expires: String,
    /// Signer's key id (hex).
    pub key_id: String,
    /// The menu, loaded.
    pub menu: Menu,
    embedder: Option<TurnEmbedder>,
    key: PublicKey,
    /// The skills whose files this reader has checked and found as the catalog lists them.
    checked: Checked,
}

fn refused(dir: &Path, failures: Vec<Failure>) -> CatalogError {
    CatalogError::Refused {
        dir: dir.display().to_string(),
        failures,
    }
}

/// Reads `menu.idx`, parses it while it is hashed for its signature ([`Index::parse_beside`]:
/// on two cores, the longer of the two rather than their sum), and checks the signature: the
/// index, its dense vectors (read only when it names them, after the signature holds) and the
/// catalog's `(version, expires)` from the trusted comment. The parse is returned as a result
/// of its own, used only when everything the caller checks holds; a signature that fails is
/// the error, whatever the parse said.
fn signed_menu(dir: &Path, key: &PublicKey) -> Result<(Result<Menu, CatalogError>, i64, String), CatalogError> {
    let index = read_regular(&dir.join(emit::MENU_INDEX))
        .map_err(|_| refused(dir, vec![Failure::Missing(emit::MENU_INDEX.into())]))?;
    let sig = read_regular(&dir.join(emit::MENU_INDEX_SIG)).map_err(|_| {
        refused(
            dir,
            vec![Failure::Missing(format!(
                "{} (built by an older skillc? rebuild the catalog)",
                emit::MENU_INDEX_SIG
            ))],
        )
    })?;
    // Parsing bytes not yet verified is safe: the parse never fails but by `Malformed`
    // (truncations and bad offsets included), and nothing of it is used unless they verify.
    let (parsed, hash) = index::Index::parse_beside(index, sign::prehash);
    let trusted = key
        .verify_prehashed(&hash, &String::from_utf8_lossy(&sig))
        .map_err(|e| {
            refused(
                dir,
                vec![Failure::BadSignature {
                    file: emit::MENU_INDEX.into(),
                    why: e.to_string(),
                }],
            )
        })?;
    match emit::parse_trusted_comment(&trusted) {
        Some((version, expires, file)) if file == emit::MENU_INDEX => {
            let expires = expires.to_owned();
            Ok((load(dir, parsed), version, expires))
        }
        _ => Err(refused(
            dir,
            vec![Failure::Malformed {
                file: emit::MENU_INDEX_SIG.into(),
                why: format!("the trusted comment `{trusted}` is not a menu index's"),
            }],
        )),
    }
}

/// The menu of a signed index, with the dense vectors it names: read only when it names them,
/// and checked against the SHA-256 it records.
fn load(dir: &Path, parsed: Result<index::Index, index::Malformed>) -> Result<Menu, CatalogError> {
    let malformed = |why: String| {
        refused(
            dir,
            vec![Failure::Malformed {
                file: emit::MENU_INDEX.into(),
                why,
            }],
        )
    };
    let parsed = parsed.map_err(|e| malformed(e.0))?;
    let vectors = match &parsed.header.dense {
        None => None,
        Some(d) => {
            let b = read_regular(&dir.join(emit::MENU_VECTORS))
                .map_err(|_| refused(dir, vec![Failure::Missing(emit::MENU_VECTORS.into())]))?;
            if sha256(&b) != d.sha256 {
                return Err(refused(
                    dir,
                    vec![Failure::HashMismatch {
                        file: emit::MENU_VECTORS.into(),
                        recorded_in: emit::MENU_INDEX.into(),
                    }],
                ));
            }
            Some(b)
        }
    };
    Menu::from_index(parsed, vectors).map_err(|e| malformed(e.0))
}

/// Bytes read at a time by [`prehash_regular`]: small enough to stay in the L2 cache, large
/// enough that the read calls cost nothing next to the hash.
const STREAM_PIECE: usize = 128 * 1024;

/// minisign's prehash (BLAKE2b-512) of a regular file (never through a symbolic link),
/// streamed in pieces of [`STREAM_PIECE`] bytes: a file that is checked and not used is never
/// held, so a 5 MB `catalog.toml` costs its hash and no 5 MB buffer.
fn prehash_regular(path: &Path) -> Result<[u8; sign::PREHASH_LEN], CatalogError> {
    use std::io::Read as _;
    let mut f = open_regular(path)?;
    let mut h = sign::Prehash::new();
    let mut buf = vec![0u8; STREAM_PIECE];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => h.update(buf.get(..n).unwrap_or_default()),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io(path)(e)),
        }
    }
    Ok(h.finalize())
}

impl MenuCatalog {
    /// Opens a catalog folder and verifies what the menu reads (see the module
    /// documentation), or everything with [`Depth::Full`].
    ///
    /// # Errors
    /// [`CatalogError::Refused`] with every failure when it does not verify; IO errors.
    pub fn open(dir: &Path, opts: &OpenOptions) -> Result<MenuCatalog, CatalogError> {
        if !dir.join(emit::CATALOG).is_file() {
            return Err(CatalogError::NotACatalog(dir.display().to_string()));
        }
        // The same decision as `skillc verify`'s (pins, `[verify] keys`, floors), from the
        // folder's small `skillc.pub` — or from the tree when everything is verified.
        let full = match opts.depth {
            Depth::Full => Some(read_tree(dir)?.0),
            Depth::Menu => None,
        };
        let signer = full.as_ref().map_or_else(|| folder_signer(dir), tree_signer);
        let trusted = opts.trust.decide(dir, signer.as_ref())?;
        let (key, accepted) = (trusted.key, trusted.floor);
        if let Some(files) = &full {
            let v = verify::verify(
                files,
                &key,
                &verify::Options {
                    now: opts.now,
                    accepted,
                    production: false,
                },
            );
            if !v.failures.is_empty() {
                return Err(refused(dir, v.failures));
            }
        }
        // `catalog.toml` is hashed on a second thread (of the rayon pool the CLI runs in) while
        // this one reads, verifies and loads the index: the two are independent, and on a
        // machine with two cores the wall time is the longer of them rather than their sum
        // (with `--jobs 1`, one after the other). Nothing loaded is used unless everything
        // below verifies.
        let catalog_path = dir.join(emit::CATALOG);
        let (signed, catalog_hash) = rayon::join(|| signed_menu(dir, &key), || prehash_regular(&catalog_path));
        let (menu, version, expires) = signed?;
        let mut failures = Vec::new();
        // The catalog's signature is checked for its trusted part (which needs not read the
        // catalog): genuine, by this key, for the catalog the index names.
        let catalog_sig = read_regular(&dir.join(emit::CATALOG_SIG))
            .map_err(|_| refused(dir, vec![Failure::Missing(emit::CATALOG_SIG.into())]))?;
        // And the catalog's bytes against it, as `skillc verify` does: a catalog.toml edited
        // or replaced (the menu reads none of it) is still a catalog that does not verify.
        // Streamed through BLAKE2b (a few ms at 10k skills), never held, no TOML parse.
        let catalog_hash = catalog_hash?;
        match key.verify_prehashed(&catalog_hash, &String::from_utf8_lossy(&catalog_sig)) {
            Ok(t) if t == emit::catalog_trusted_comment(version, &expires) => {}
            Ok(t) => failures.push(Failure::Malformed {
                file: emit::CATALOG_SIG.into(),
                why: format!(
                    "the trusted comment `{t}` is not that of the catalog {} names",
                    emit::MENU_INDEX_SIG
                ),
            }),
            Err(e) => failures.push(Failure::BadSignature {
                file: emit::CATALOG.into(),
                why: e.to_string(),
            }),
        }
        match expires.parse::<jiff::Timestamp>() {
            Ok(t) if t.as_second() <= opts.now => failures.push(Failure::Expired {
                expires: expires.clone(),
            }),
            Ok(_) => {}
            Err(e) => failures.push(Failure::Malformed {
                file: emit::MENU_INDEX_SIG.into(),
                why: format!("expires: {e}"),
            }),
        }
        if let Some(a) = accepted
            && version < a
        {
            failures.push(Failure::Rollback { version, accepted: a });
        }
        if !failures.is_empty() {
            return Err(refused(dir, failures));
        }
        let menu = menu?;
        let embedder = TurnEmbedder::for_menu(&menu, dir, opts.model.as_deref());
        let checked = Checked::new(menu.index().skills.len());
        Ok(MenuCatalog {
            dir: dir.to_path_buf(),
            version,
            expires,
            key_id: key.key_id_hex(),
            menu,
            embedder,
            key,
            checked,
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

    /// The dense half of a turn: embedded by the catalog's dense embedder, or
    /// [`DenseTurn::Unavailable`] when it cannot be reached (never an error), or
    /// [`DenseTurn::None`] when the catalog has no dense vectors.
    pub fn embed_turn(&self, turn: &str) -> DenseTurn {
        self.embedder.as_ref().map_or(DenseTurn::None, |e| e.embed(turn))
    }

    /// The menu of a turn, its dense half embedded by the catalog's embedder, after checking
    /// the files of every skill it offers ([`MenuCatalog::skill_failures`]) — those this open
    /// catalog has not yet found verified, in parallel on the rayon pool.
    ///
    /// What a long-lived reader guarantees: each skill it offers had its files checked, and
    /// verified, by this open catalog, at the first turn that offered it (or at its first
    /// playbook); a skill that failed is checked again each time. Files changed after that
    /// check are not seen until the catalog is opened again ([`MenuCatalog::recheck`] forgets
    /// the checks): the same snapshot as `serve`'s, which verifies the whole catalog when it
    /// opens it and answers from that. A fresh `skillc menu` opens the catalog each time, so
    /// a skill whose files were tampered with is never offered by one.
    ///
    /// # Errors
    /// [`CatalogError::Menu`] as [`Menu::select`]; [`CatalogError::NotOffered`], naming every
    /// failing file, when a skill the menu would offer does not verify: nothing is offered.
    pub fn select(&self, turn: &str, agent: Option<&str>, size: Option<usize>) -> Result<Selection, CatalogError> {
        use rayon::prelude::*;
        let sel = self.menu.select(&Query {
            turn,
            agent,
            size,
            dense: self.embed_turn(turn),
        })?;
        let unchecked: Vec<(usize, &str)> = sel
            .items
            .iter()
            .filter(|item| !self.checked.get(item.index))
            .map(|item| (item.index, item.slug.as_str()))
            .collect();
        // Each check reads and hashes the skill's files and verifies its manifests' signatures
        // (most of a fresh `skillc menu` after the catalog's own hashes): independent of each
        // other, so they run side by side. Collected in menu order, so the first IO error and
        // the failures are reported as a loop over the menu would.
        let checks: Vec<Result<Vec<Failure>, CatalogError>> =
            unchecked.par_iter().map(|&(i, _)| self.check(i)).collect();
        let mut skills = Vec::new();
        for (&(_, slug), failures) in unchecked.iter().zip(checks) {
            let failures = failures?;
            if !failures.is_empty() {
                skills.push((slug.to_owned(), failures));
            }
        }
        if skills.is_empty() {
            return Ok(sel);
        }
        let mut empty = sel;
        empty.items.clear();
        Err(CatalogError::NotOffered {
            dir: self.dir.display().to_string(),
            skills,
            empty: Box::new(empty),
        })
    }

    /// [`MenuCatalog::skill_failures`], remembering a pass (see [`MenuCatalog::select`]).
    fn check(&self, index: usize) -> Result<Vec<Failure>, CatalogError> {
        let failures = self.skill_failures(index)?;
        if failures.is_empty() {
            self.checked.set(index);
        }
        Ok(failures)
    }

    /// Forgets which skills this open catalog found verified: each is checked again the next
    /// time a turn offers it or its playbook is loaded (for a long-lived reader that wants to
    /// see files changed since it opened the catalog, short of opening it again — which also
    /// re-checks `menu.idx`, `catalog.toml` and their signatures).
    pub fn recheck(&self) {
        self.checked.forget();
    }

    /// Checks the files of the skill at `index` of the menu against what the signed catalog
    /// lists for it (see the module documentation): every failure, empty when it verifies.
    ///
    /// # Errors
    /// [`CatalogError::Io`] when a file cannot be read for another reason than being absent.
    pub fn skill_failures(&self, index: usize) -> Result<Vec<Failure>, CatalogError> {
        let Some(s) = self.menu.index().skills.get(index) else {
            return Ok(vec![Failure::Malformed {
                file: emit::MENU_INDEX.into(),
                why: format!("no skill {index}"),
            }]);
        };
        if !is_slug(&s.slug) {
            return Ok(vec![Failure::Malformed {
                file: emit::MENU_INDEX.into(),
                why: format!("`{}` is not a skill name", s.slug.escape_debug()),
            }]);
        }
        let block = match read_block(&self.dir.join(emit::MENU_FILES), s.files.offset, s.files.len) {
            Ok(b) => b,
            Err(_) => return Ok(vec![verify::ListingError::Mismatch.failure()]),
        };
        let listing = match verify::parse_block(&block, &s.files) {
            Ok(l) if l.skill.name == s.slug => l,
            Ok(_) => {
                return Ok(vec![
                    verify::ListingError::Malformed(format!("the block of `{}` is another skill's", s.slug)).failure(),
                ]);
            }
            Err(e) => return Ok(vec![e.failure()]),
        };
        let files = skill_tree(&self.dir, &s.slug)?;
        Ok(verify::verify_skill(&listing, &self.key, &files))
    }

    /// The playbook of a skill: its SKILL.md body, verbatim, after checking the skill's files
    /// against what the signed catalog lists ([`MenuCatalog::skill_failures`], once per open
    /// catalog as [`MenuCatalog::select`] says) and, on every call, the SKILL.md it returns
    /// against the hash the verified index records.
    ///
    /// # Errors
    /// [`CatalogError::Skill`] for a skill not in the catalog or disabled;
    /// [`CatalogError::Refused`] naming every failing file when the skill does not verify.
    pub fn playbook(&self, slug: &str) -> Result<String, CatalogError> {
        let index = self.menu.index();
        let Some(i) = index.find(slug) else {
            return Err(CatalogError::Skill(format!(
                "no skill `{}` in this catalog (`skillc menu --turn TEXT` lists the skills that fit a turn)",
                // Escaped: a requested name never reaches a terminal or a log raw.
                slug.escape_debug()
            )));
        };
        let s = &index.skills[i];
        if !s.enabled {
            return Err(CatalogError::Skill(format!(
                "skill `{slug}` is disabled (`metadata.disabled`): it is never offered or loaded"
            )));
        }
        // The skill's other files as the menu checks them (once per open catalog); the
        // SKILL.md returned, below, on every call: its bytes are read now and never returned
        // unless they match the signed index.
        if !self.checked.get(i) {
            let failures = self.check(i)?;
            if !failures.is_empty() {
                return Err(refused(&self.dir, failures));
            }
        }
        let rel = format!("skills/{slug}/SKILL.md");
        let bytes = read_regular(&self.dir.join(&rel))?;
        if sha2::Sha256::digest(&bytes).as_slice() != s.skill_md_sha256 {
            return Err(refused(
                &self.dir,
                vec![Failure::HashMismatch {
                    file: rel,
                    recorded_in: emit::MENU_INDEX.into(),
                }],
            ));
        }
        let body = bytes.get(s.body_offset as usize..).unwrap_or_default();
        Ok(String::from_utf8_lossy(body).into_owned())
    }
}

/// A skill name as the build writes them (`[a-z0-9]` words and `-`, `_` or `.` inside): a
/// name from the index never reaches outside the catalog's folders.
fn is_slug(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// `len` bytes at `offset` of a regular file (never through a symbolic link).
fn read_block(path: &Path, offset: u32, len: u32) -> std::io::Result<Vec<u8>> {
    use std::io::{Read as _, Seek as _};
    if !std::fs::symlink_metadata(path)?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut f = std::fs::File::open(path)?;
    f.seek(std::io::SeekFrom::Start(u64::from(offset)))?;
    let mut b = vec![0; len as usize];
    f.read_exact(&mut b)?;
    Ok(b)
}

/// The files of one skill's folders, `skills/<slug>/` and `executors/<slug>/`, keyed by their
/// path in `out/` as `skillc verify` reads them (a folder that is a link or a file is one
/// irregular entry; an absent one has no files).
fn skill_tree(dir: &Path, slug: &str) -> Result<BTreeMap<String, Entry>, CatalogError> {
    let mut files = BTreeMap::new();
    for top in ["skills", "executors"] {
        let rel = format!("{top}/{slug}");
        let full = dir.join(top).join(slug);
        match std::fs::symlink_metadata(&full) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io(&full)(e)),
            Ok(m) if m.file_type().is_symlink() => {
                files.insert(rel, Entry::Irregular("a symbolic link".into()));
                continue;
            }
            Ok(m) if !m.is_dir() => {
                files.insert(rel, Entry::Irregular("not a folder".into()));
                continue;
            }
            Ok(_) => {}
        }
        for (p, e) in read_tree(&full)?.0 {
            files.insert(format!("{rel}/{p}"), e);
        }
    }
    Ok(files)
}

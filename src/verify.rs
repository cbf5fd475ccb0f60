//! Verification of a catalog: what a consuming runtime checks before it trusts `out/`
//! (FORMATS.md, "catalog.toml": what `skillc verify` refuses).
//!
//! Checked: the catalog signature and its trusted comment; every manifest's hash and
//! signature; every `[integrity]` hash; every retained skill file; that every file of the
//! folder is one the signed catalog vouches for (an unsigned executor folder is refused);
//! expiry; rollback (a `catalog_version` lower than the last one accepted for the key); with
//! `production`, any skipped or not-run admission level. Every failure is collected and named.
//! The catalog and manifests are read as their types (`emit::format`), which refuse unknown
//! keys. Pure: the caller reads the folder into a map.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::emit::format::{self, Catalog, CatalogExecutor, Manifest};
use crate::emit::{self, CATALOG, CATALOG_SIG, PUBLIC_KEY, REPORT, ROUTING};
use crate::sign::PublicKey;
use crate::util::sha256;

/// One reason a catalog is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// A file the catalog needs is absent.
    Missing(String),
    /// A signature does not verify.
    BadSignature {
        /// The signed file.
        file: String,
        /// What failed.
        why: String,
    },
    /// A file's bytes differ from the hash that vouches for them.
    HashMismatch {
        /// The file.
        file: String,
        /// Where the expected hash is recorded.
        recorded_in: String,
    },
    /// A file (or folder) present on disk that the catalog does not list.
    Unlisted(String),
    /// The catalog has expired.
    Expired {
        /// Its expiry time.
        expires: String,
    },
    /// The catalog is older than one already accepted for this folder or key.
    Rollback {
        /// This catalog's version.
        version: i64,
        /// The last accepted version.
        accepted: i64,
    },
    /// A file is not what the format says.
    Malformed {
        /// The file.
        file: String,
        /// What is wrong.
        why: String,
    },
    /// `--production` refuses weakened evidence.
    NotProduction(String),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Paths come from the folder or the catalog being checked: a name holding an escape
        // sequence or a bidirectional control is shown escaped, never sent raw to a terminal.
        let shown = |p: &str| crate::diag::printable(p).into_owned();
        match self {
            Failure::Missing(p) => write!(f, "missing file: {}", shown(p)),
            Failure::BadSignature { file, why } => write!(f, "bad signature: {}: {why}", shown(file)),
            Failure::HashMismatch { file, recorded_in } => {
                write!(
                    f,
                    "hash mismatch: {} differs from the hash in {}",
                    shown(file),
                    shown(recorded_in)
                )
            }
            Failure::Unlisted(p) => write!(f, "not in the signed catalog: {}", shown(p)),
            Failure::Expired { expires } => write!(f, "expired: the catalog expired at {expires}"),
            Failure::Rollback { version, accepted } => {
                write!(
                    f,
                    "rollback: catalog_version {version} is lower than {accepted}, already accepted for this folder or key"
                )
            }
            Failure::Malformed { file, why } => write!(f, "malformed: {}: {why}", shown(file)),
            Failure::NotProduction(why) => write!(f, "not a production catalog: {why}"),
        }
    }
}

impl Failure {
    /// A short kebab-case kind for JSON output (`bad-signature`, `hash-mismatch`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            Failure::Missing(_) => "missing",
            Failure::BadSignature { .. } => "bad-signature",
            Failure::HashMismatch { .. } => "hash-mismatch",
            Failure::Unlisted(_) => "unlisted",
            Failure::Expired { .. } => "expired",
            Failure::Rollback { .. } => "rollback",
            Failure::Malformed { .. } => "malformed",
            Failure::NotProduction(_) => "not-production",
        }
    }
}

/// What verification found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verification {
    /// Catalog version, when the catalog could be read.
    pub catalog_version: Option<i64>,
    /// Expiry, when the catalog could be read.
    pub expires: Option<String>,
    /// Key id of the signer.
    pub key_id: String,
    /// Executors listed.
    pub executors: usize,
    /// Every failure; empty means the catalog verifies.
    pub failures: Vec<Failure>,
}

/// One entry of the folder being verified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A regular file and its bytes.
    Bytes(Vec<u8>),
    /// Something that cannot be vouched for: a symbolic link, a FIFO or device, a file too
    /// large to read, a name that is not UTF-8. Says which.
    Irregular(String),
}

/// Options of a verification.
#[derive(Clone, Debug)]
pub struct Options {
    /// Current time, Unix seconds.
    pub now: i64,
    /// Last accepted `catalog_version` for this key, when known.
    pub accepted: Option<i64>,
    /// Refuse skipped and not-run admission levels.
    pub production: bool,
}

fn get<'a>(files: &'a BTreeMap<String, Entry>, path: &str, v: &mut Verification) -> Option<&'a [u8]> {
    match files.get(path) {
        Some(Entry::Bytes(b)) => Some(b),
        Some(Entry::Irregular(why)) => {
            v.failures.push(Failure::Malformed {
                file: path.to_owned(),
                why: why.clone(),
            });
            None
        }
        None => {
            v.failures.push(Failure::Missing(path.to_owned()));
            None
        }
    }
}

fn check_sig(key: &PublicKey, files: &BTreeMap<String, Entry>, path: &str, v: &mut Verification) -> Option<String> {
    let data = get(files, path, v)?;
    let sig_path = format!("{path}.sig");
    let sig = get(files, &sig_path, v)?;
    let sig = String::from_utf8_lossy(sig);
    match key.verify(data, &sig) {
        Ok(trusted) => Some(trusted),
        Err(e) => {
            v.failures.push(Failure::BadSignature {
                file: path.to_owned(),
                why: e.to_string(),
            });
            None
        }
    }
}

fn hash_ok(expected: &str, bytes: &[u8]) -> bool {
    expected.strip_prefix("sha256:").unwrap_or(expected) == sha256(bytes)
}

/// Parses a signed file as its type; a file that is not one is malformed.
fn parse<T: for<'de> serde::Deserialize<'de>>(file: &str, bytes: &[u8], v: &mut Verification) -> Option<T> {
    match format::parse(bytes) {
        Ok(t) => Some(t),
        Err(why) => {
            v.failures.push(Failure::Malformed {
                file: file.to_owned(),
                why,
            });
            None
        }
    }
}

/// Verifies the files of an `out/` folder (relative path → bytes) with `key`.
pub fn verify(files: &BTreeMap<String, Entry>, key: &PublicKey, opts: &Options) -> Verification {
    let mut v = Verification {
        key_id: key.key_id_hex(),
        ..Verification::default()
    };
    // The public key is vouched for by the catalog's `[files]`, like every other file.
    let mut vouched: BTreeSet<String> = [CATALOG, CATALOG_SIG].iter().map(|s| s.to_string()).collect();
    // Without a valid catalog nothing is vouched for: listing every file as unlisted would
    // only bury the cause.
    let Some(trusted) = check_sig(key, files, CATALOG, &mut v) else {
        return v;
    };
    let Some(catalog) = get(files, CATALOG, &mut v).and_then(|b| parse::<Catalog>(CATALOG, b, &mut v)) else {
        return finish(v, files, &vouched);
    };
    v.catalog_version = Some(catalog.catalog_version);
    v.expires = Some(catalog.expires.clone());
    check_header(&catalog, &trusted, opts, &mut v);
    // Top-level files the catalog vouches for.
    for (path, hash) in &catalog.files {
        vouched.insert(path.clone());
        if let Some(bytes) = get(files, path, &mut v)
            && !hash_ok(hash, bytes)
        {
            v.failures.push(Failure::HashMismatch {
                file: path.clone(),
                recorded_in: CATALOG.into(),
            });
        }
    }
    for required in [REPORT, ROUTING, PUBLIC_KEY, emit::MENU_INDEX] {
        if !vouched.contains(required) {
            v.failures.push(Failure::Malformed {
                file: CATALOG.into(),
                why: format!("does not vouch for {required}"),
            });
        }
    }
    // The menu index is signed too (the menu reads it without the catalog), for this catalog.
    vouched.insert(emit::MENU_INDEX_SIG.into());
    if let Some(t) = check_sig(key, files, emit::MENU_INDEX, &mut v)
        && t != emit::menu_trusted_comment(catalog.catalog_version, &catalog.expires)
    {
        v.failures.push(Failure::Malformed {
            file: emit::MENU_INDEX_SIG.into(),
            why: format!("the trusted comment `{t}` disagrees with catalog.toml"),
        });
    }
    v.executors = catalog.executors.len();
    let mut weak: BTreeMap<String, usize> = BTreeMap::new();
    for e in &catalog.executors {
        verify_executor(e, key, files, opts, &mut vouched, &mut v, &mut weak);
    }
    if opts.production && !weak.is_empty() {
        let levels: Vec<String> = weak.iter().map(|(l, n)| format!("{l} ({n} executors)")).collect();
        v.failures.push(Failure::NotProduction(format!(
            "admission levels not passed: {}; build where every level runs (`python3` for L5, the verifier for L6) and none is skipped",
            levels.join(", ")
        )));
    }
    for s in &catalog.skills {
        verify_retained(s, files, &mut vouched, &mut v);
    }
    if vouched.contains(emit::MENU_FILES) {
        check_listings(&catalog, files, &mut v);
    } else {
        v.failures.push(Failure::Malformed {
            file: CATALOG.into(),
            why: format!("does not vouch for {}", emit::MENU_FILES),
        });
    }
    finish(v, files, &vouched)
}

/// The retained files of a skill against the hashes its `[[skill]]` entry records.
fn verify_retained(
    s: &format::CatalogSkill,
    files: &BTreeMap<String, Entry>,
    vouched: &mut BTreeSet<String>,
    v: &mut Verification,
) {
    for (rel, hash) in &s.files {
        vouched_hash(files, format!("skills/{}/{rel}", s.name), hash, CATALOG, vouched, v);
    }
}

/// A file vouched for by `hash`, recorded in `recorded_in`: present, regular, and equal.
fn vouched_hash(
    files: &BTreeMap<String, Entry>,
    path: String,
    hash: &str,
    recorded_in: &str,
    vouched: &mut BTreeSet<String>,
    v: &mut Verification,
) {
    vouched.insert(path.clone());
    if let Some(b) = get(files, &path, v)
        && !hash_ok(hash, b)
    {
        v.failures.push(Failure::HashMismatch {
            file: path,
            recorded_in: recorded_in.to_owned(),
        });
    }
}

/// `menu.files` says for every skill what `catalog.toml` lists for it, and the signed
/// `menu.idx` points at each block with its digest: what a menu checks per skill is then
/// what the catalog vouches for.
fn check_listings(catalog: &Catalog, files: &BTreeMap<String, Entry>, v: &mut Verification) {
    let (Some(Entry::Bytes(index)), Some(Entry::Bytes(listings))) =
        (files.get(emit::MENU_INDEX), files.get(emit::MENU_FILES))
    else {
        return; // Missing or irregular: already a failure of `[files]`.
    };
    let mut bad = |why: String| {
        v.failures.push(Failure::Malformed {
            file: emit::MENU_FILES.into(),
            why,
        });
    };
    let index = match crate::menu::index::Index::parse(index.clone()) {
        Ok(i) => i,
        Err(e) => return bad(format!("{}: {e}", emit::MENU_INDEX)),
    };
    let expected = format::SkillListing::of_catalog(catalog);
    if index.skills.len() != expected.len() {
        return bad(format!(
            "{} lists {} skills, the catalog {}",
            emit::MENU_INDEX,
            index.skills.len(),
            expected.len()
        ));
    }
    for s in &index.skills {
        let ok = match (listing_at(listings, &s.files), expected.get(s.slug.as_str())) {
            (Ok(got), Some(want)) => got == *want,
            _ => false,
        };
        if !ok {
            bad(format!(
                "the block of `{}` is not what catalog.toml lists for it",
                s.slug
            ));
        }
    }
}

/// Why a skill's block of `menu.files` cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListingError {
    /// The block is out of the file, or its bytes differ from the digest in `menu.idx`.
    Mismatch,
    /// It is not a listing.
    Malformed(String),
}

impl ListingError {
    /// As a verification failure.
    pub fn failure(&self) -> Failure {
        match self {
            ListingError::Mismatch => Failure::HashMismatch {
                file: emit::MENU_FILES.into(),
                recorded_in: emit::MENU_INDEX.into(),
            },
            ListingError::Malformed(why) => Failure::Malformed {
                file: emit::MENU_FILES.into(),
                why: why.clone(),
            },
        }
    }
}

/// A skill's listing from `menu.files` (all of it, or the block alone at offset 0), checked
/// against the digest the signed index records.
///
/// # Errors
/// [`ListingError`] when the block is not there, differs from its digest or does not parse.
pub fn listing_at(bytes: &[u8], at: &crate::menu::index::FilesRef) -> Result<format::SkillListing, ListingError> {
    let block = bytes
        .get(at.offset as usize..)
        .and_then(|b| b.get(..at.len as usize))
        .ok_or(ListingError::Mismatch)?;
    parse_block(block, at)
}

/// A block read on its own, checked against its digest.
///
/// # Errors
/// As [`listing_at`].
pub fn parse_block(block: &[u8], at: &crate::menu::index::FilesRef) -> Result<format::SkillListing, ListingError> {
    use sha2::Digest as _;
    if block.len() != at.len as usize || sha2::Sha256::digest(block).as_slice() != at.sha256 {
        return Err(ListingError::Mismatch);
    }
    serde_json::from_slice(block).map_err(|e| ListingError::Malformed(e.to_string()))
}

/// Verifies one skill as [`verify`] verifies it, against its listing: each executor's
/// manifest (hash, signature, `[integrity]`: wrapper, language state, the skill's files), the
/// retained files, and that its folders (`skills/<name>/`, `executors/<name>/`, the only
/// paths `files` holds) have nothing the listing does not vouch for. What a menu runs before
/// it offers a skill and a playbook before it loads one.
pub fn verify_skill(listing: &format::SkillListing, key: &PublicKey, files: &BTreeMap<String, Entry>) -> Vec<Failure> {
    let mut v = Verification::default();
    let mut vouched = BTreeSet::new();
    let opts = Options {
        now: 0,
        accepted: None,
        production: false,
    };
    let mut weak = BTreeMap::new();
    for e in &listing.executor {
        if e.skill != listing.skill.name {
            v.failures.push(Failure::Malformed {
                file: emit::MENU_FILES.into(),
                why: format!("executor `{}` is not of skill `{}`", e.name, listing.skill.name),
            });
            continue;
        }
        verify_executor(e, key, files, &opts, &mut vouched, &mut v, &mut weak);
    }
    verify_retained(&listing.skill, files, &mut vouched, &mut v);
    finish(v, files, &vouched).failures
}

/// The catalog's header: its signature's trusted comment agrees with it, it has not expired,
/// it is not older than one accepted before (rollback), and with `production` nothing was
/// skipped.
fn check_header(catalog: &Catalog, trusted: &str, opts: &Options, v: &mut Verification) {
    let (version, expires) = (catalog.catalog_version, &catalog.expires);
    if trusted != emit::catalog_trusted_comment(version, expires) {
        v.failures.push(Failure::Malformed {
            file: CATALOG_SIG.into(),
            why: format!("the trusted comment `{trusted}` disagrees with catalog.toml"),
        });
    }
    match expires.parse::<jiff::Timestamp>() {
        Ok(t) if t.as_second() <= opts.now => v.failures.push(Failure::Expired {
            expires: expires.clone(),
        }),
        Ok(_) => {}
        Err(e) => v.failures.push(Failure::Malformed {
            file: CATALOG.into(),
            why: format!("expires: {e}"),
        }),
    }
    if let Some(accepted) = opts.accepted
        && version < accepted
    {
        v.failures.push(Failure::Rollback { version, accepted });
    }
    if opts.production && !catalog.skipped.is_empty() {
        v.failures.push(Failure::NotProduction(
            "admission levels were skipped for this catalog".into(),
        ));
    }
}

fn verify_executor(
    e: &CatalogExecutor,
    key: &PublicKey,
    files: &BTreeMap<String, Entry>,
    opts: &Options,
    vouched: &mut BTreeSet<String>,
    v: &mut Verification,
    weak: &mut BTreeMap<String, usize>,
) {
    let name = &e.name;
    let dir = emit::executor_dir(&e.skill, name);
    let manifest_path = format!("{dir}/manifest.toml");
    if e.manifest != manifest_path {
        v.failures.push(Failure::Malformed {
            file: CATALOG.into(),
            why: format!("executor `{name}` has an unexpected manifest path"),
        });
        return;
    }
    for f in [manifest_path.clone(), format!("{manifest_path}.sig")] {
        vouched.insert(f);
    }
    let Some(bytes) = get(files, &manifest_path, v) else {
        return;
    };
    if !hash_ok(&e.manifest_sha256, bytes) {
        v.failures.push(Failure::HashMismatch {
            file: manifest_path.clone(),
            recorded_in: CATALOG.into(),
        });
    }
    if check_sig(key, files, &manifest_path, v).is_none() {
        return;
    }
    let Some(manifest) = parse::<Manifest>(&manifest_path, bytes, v) else {
        return;
    };
    if manifest.name != *name {
        v.failures.push(Failure::Malformed {
            file: manifest_path.clone(),
            why: format!("its name is not `{name}`"),
        });
    }
    for (k, hash) in &manifest.integrity {
        let path = match k.as_str() {
            "wrapper" => format!("{dir}/{name}.py"),
            "lang_state" => format!("{dir}/manifest.lang_state.json"),
            other => other.to_owned(),
        };
        vouched_hash(files, path, hash, &manifest_path, vouched, v);
    }
    for k in ["wrapper", "lang_state"] {
        if !manifest.integrity.contains_key(k) {
            v.failures.push(Failure::Malformed {
                file: manifest_path.clone(),
                why: format!("[integrity] has no `{k}`"),
            });
        }
    }
    if opts.production {
        for (level, status) in &manifest.admission.levels {
            if status != "pass" {
                *weak.entry(format!("{level} {status}")).or_default() += 1;
            }
        }
    }
}

fn finish(mut v: Verification, files: &BTreeMap<String, Entry>, vouched: &BTreeSet<String>) -> Verification {
    // Anything on disk the signed catalog does not vouch for is refused; an executor folder
    // is reported once, as a folder.
    let mut folders = BTreeSet::new();
    for path in files.keys().filter(|p| !vouched.contains(*p)) {
        let parts: Vec<&str> = path.split('/').collect();
        if parts.len() >= 4 && parts[0] == "executors" {
            let folder = parts[..3].join("/");
            if !vouched.iter().any(|x| x.starts_with(&format!("{folder}/"))) {
                if folders.insert(folder.clone()) {
                    v.failures.push(Failure::Unlisted(format!("{folder}/")));
                }
                continue;
            }
        }
        match files.get(path) {
            Some(Entry::Irregular(why)) => v.failures.push(Failure::Unlisted(format!("{path} ({why})"))),
            _ => v.failures.push(Failure::Unlisted(path.clone())),
        }
    }
    v
}

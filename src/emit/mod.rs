//! Emission: the exact `out/` tree of a build (FORMATS.md, "out/") and writing it to disk.
//!
//! This module renders the files of the contract (catalog, routing battery, paths) as pure
//! functions of the build; [`write`] holds the disk side (ownership guard, atomic writes,
//! removals). The build session decides what to write by comparing digests with its store;
//! `out/` is never read as an input.

pub mod format;
pub mod publish;
pub mod write;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::model::{LevelStatus, Prototype, SkillStatus};
use crate::util::toml_str;

/// The top-level files of the contract.
pub const CATALOG: &str = "catalog.toml";
/// Signature of the catalog.
pub const CATALOG_SIG: &str = "catalog.toml.sig";
/// Public key of the signer.
pub const PUBLIC_KEY: &str = "skillc.pub";
/// The build report.
pub const REPORT: &str = "report.json";
/// The routing battery.
pub const ROUTING: &str = "routing.toml";
/// The menu index (RUNTIME.md §1; FORMATS.md, "menu.idx").
pub const MENU_INDEX: &str = "menu.idx";
/// Signature of the menu index, so that a menu needs not read the whole catalog.
pub const MENU_INDEX_SIG: &str = "menu.idx.sig";
/// The skills' dense vectors, when a dense embedder is configured (FORMATS.md, "menu.vec").
pub const MENU_VECTORS: &str = "menu.vec";
/// Per skill, what the catalog lists for it (FORMATS.md, "menu.files"): the blocks `menu.idx`
/// points at, each vouched for by a SHA-256 in the signed index.
pub const MENU_FILES: &str = "menu.files";

/// The folder of an executor, relative to `out/`.
pub fn executor_dir(skill: &str, executor: &str) -> String {
    format!("executors/{skill}/{executor}")
}

/// An executor entry of the catalog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogExecutor {
    /// Canonical name.
    pub name: String,
    /// Skill name.
    pub skill: String,
    /// Hex SHA-256 of its manifest.
    pub manifest_sha256: String,
}

/// A skill entry of the catalog (its retained source).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogSkill {
    /// Skill name.
    pub name: String,
    /// `ok` or `instruction-only`.
    pub status: SkillStatus,
    /// Number of executors admitted.
    pub executors: usize,
    /// Retained files: path relative to the skill folder → hex SHA-256.
    pub files: BTreeMap<String, String>,
}

/// Header values of the catalog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogHeader {
    /// Monotonic version (`SOURCE_DATE_EPOCH` or the build time).
    pub version: i64,
    /// RFC 3339 expiry time.
    pub expires: String,
    /// Signer's key id (hex).
    pub key_id: String,
    /// Levels skipped on request.
    pub skipped: Vec<String>,
}

/// Renders `catalog.toml`. `files` holds the SHA-256 of the other top-level files it vouches
/// for (report, routing battery), so every byte of `out/` is covered by a signature.
pub fn render_catalog(
    header: &CatalogHeader,
    files: &BTreeMap<String, String>,
    executors: &[CatalogExecutor],
    skills: &[CatalogSkill],
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "catalog_format = \"1\"");
    let _ = writeln!(s, "catalog_version = {}", header.version);
    let _ = writeln!(s, "expires = {}", toml_str(&header.expires));
    let _ = writeln!(s, "key_id = {}", toml_str(&header.key_id));
    let _ = writeln!(s, "skillc = {}", toml_str(env!("CARGO_PKG_VERSION")));
    let skipped: Vec<String> = header.skipped.iter().map(|x| toml_str(x)).collect();
    let _ = writeln!(s, "skipped = [{}]", skipped.join(", "));
    let _ = writeln!(s, "\n[files]");
    for (k, v) in files {
        let _ = writeln!(s, "{} = {}", toml_str(k), toml_str(&format!("sha256:{v}")));
    }
    let mut execs: Vec<&CatalogExecutor> = executors.iter().collect();
    execs.sort_by(|a, b| a.name.cmp(&b.name));
    for e in execs {
        let _ = writeln!(s, "\n[[executor]]");
        let _ = writeln!(s, "name = {}", toml_str(&e.name));
        let _ = writeln!(s, "skill = {}", toml_str(&e.skill));
        let _ = writeln!(
            s,
            "manifest = {}",
            toml_str(&format!("{}/manifest.toml", executor_dir(&e.skill, &e.name)))
        );
        let _ = writeln!(s, "manifest_sha256 = {}", toml_str(&e.manifest_sha256));
    }
    let mut sk: Vec<&CatalogSkill> = skills.iter().collect();
    sk.sort_by(|a, b| a.name.cmp(&b.name));
    for k in sk {
        let _ = writeln!(s, "\n[[skill]]");
        let _ = writeln!(s, "name = {}", toml_str(&k.name));
        let _ = writeln!(s, "status = {}", toml_str(k.status.as_str()));
        let _ = writeln!(s, "executors = {}", k.executors);
        let _ = writeln!(s, "\n[skill.files]");
        for (p, h) in &k.files {
            let _ = writeln!(s, "{} = {}", toml_str(p), toml_str(&format!("sha256:{h}")));
        }
    }
    s
}

/// What `catalog.toml` lists for one skill, as [`render_catalog`] writes it: the skill's
/// entry and its executors' (sorted by name) — one block of `menu.files`.
pub fn skill_listing(skill: &CatalogSkill, executors: &[&CatalogExecutor]) -> format::SkillListing {
    let mut executor: Vec<format::CatalogExecutor> = executors
        .iter()
        .map(|e| format::CatalogExecutor {
            name: e.name.clone(),
            skill: e.skill.clone(),
            manifest: format!("{}/manifest.toml", executor_dir(&e.skill, &e.name)),
            manifest_sha256: e.manifest_sha256.clone(),
        })
        .collect();
    executor.sort_by(|a, b| a.name.cmp(&b.name));
    format::SkillListing {
        skill: format::CatalogSkill {
            name: skill.name.clone(),
            status: skill.status.as_str().to_owned(),
            executors: skill.executors as u64,
            files: skill
                .files
                .iter()
                .map(|(p, h)| (p.clone(), format!("sha256:{h}")))
                .collect(),
        },
        executor,
    }
}

/// One block of `menu.files`: the listing as one line of JSON (fields in declaration order,
/// files sorted), so equal listings are equal bytes.
pub fn render_listing(listing: &format::SkillListing) -> Vec<u8> {
    let mut b = serde_json::to_vec(listing).unwrap_or_default();
    b.push(b'\n');
    b
}

/// The trusted comment of the catalog signature (FORMATS.md).
pub fn catalog_trusted_comment(version: i64, expires: &str) -> String {
    format!("catalog_version:{version}\texpires:{expires}\tfile:{CATALOG}")
}

/// The trusted comment of the menu index's signature: the catalog it belongs to, so that a
/// menu reading only `menu.idx` checks the same expiry and rollback as the catalog.
pub fn menu_trusted_comment(version: i64, expires: &str) -> String {
    format!("catalog_version:{version}\texpires:{expires}\tfile:{MENU_INDEX}")
}

/// Reads a catalog or menu trusted comment back: `(catalog_version, expires, file)`.
pub fn parse_trusted_comment(comment: &str) -> Option<(i64, &str, &str)> {
    let mut it = comment.split('\t');
    let version = it.next()?.strip_prefix("catalog_version:")?.parse().ok()?;
    let expires = it.next()?.strip_prefix("expires:")?;
    let file = it.next()?.strip_prefix("file:")?;
    it.next().is_none().then_some((version, expires, file))
}

/// The trusted comment of a manifest signature.
pub fn manifest_trusted_comment(executor: &str) -> String {
    format!("executor:{executor}\tfile:manifest.toml")
}

/// The routing battery (FORMATS.md, "routing.toml"): every prototype request of the admitted
/// executors and the executor it must route to, sorted by executor, language and request.
/// `l4` is the catalog-wide status of level L4 (`run` or `skipped`); when it is skipped the
/// battery is empty.
pub fn render_routing(battery: &[Prototype], l4: LevelStatus) -> String {
    let mut s = String::from(
        "# skillc routing battery: prototype requests and the executor each must route to first.\n\
         # Admission level L4 runs it on every build with the router named below.\n",
    );
    let _ = writeln!(s, "routing_format = \"1\"");
    let _ = writeln!(s, "router = {}", toml_str(crate::route::ROUTER));
    let _ = writeln!(s, "l4 = {}", toml_str(l4.as_str()));
    let mut sorted: Vec<&Prototype> = battery.iter().collect();
    sorted.sort();
    for p in sorted {
        let _ = writeln!(s, "\n[[request]]");
        let _ = writeln!(s, "expected = {}", toml_str(&p.expected));
        let _ = writeln!(s, "kind = {}", toml_str(p.kind.as_str()));
        let _ = writeln!(s, "lang = {}", toml_str(p.lang.as_str()));
        let _ = writeln!(s, "text = {}", toml_str(&p.request));
    }
    s
}

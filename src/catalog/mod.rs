//! The catalog in use: a **verified** `out/` read once into memory, and the views the catalog
//! commands (`list`, `info`, `search`) and `skillc serve` give of it (RUNTIME.md §2). IO
//! layer: [`Catalog::open`] reads the folder, verifies it (`crate::verify`) and parses what it
//! verified; everything after that is lookups in memory, so a catalog tampered with after it
//! was opened changes nothing that is served, and a request never reads a file.
//!
//! Architecture invariant: nothing is listed, shown or served from a folder that `skillc
//! verify` would refuse — [`Catalog::open`] returns [`OpenError::Refused`] instead.
//!
//! API boundary: this is the only reader of `out/` besides `skillc verify`; the CLI and
//! `serve` get skills, executors, files, the body and the menu from here.
//!
//! - [`menu`]: the menu and playbooks alone — `skillc menu`, `skillc playbook` and programs
//!   embedding skillc open a catalog with [`menu::MenuCatalog::open`], which verifies the chain
//!   of trust of what the menu reads (not the 5 MB `catalog.toml` of a 10k catalog), then ask
//!   it per turn with no file read.
//! - [`Catalog`] holds the same menu, loaded from the bytes it verified, for `serve` and
//!   `skillc search`.

pub mod export;
pub mod files;
pub mod menu;
pub mod read;
mod skills;
pub mod view;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::emit::{CATALOG, MENU_INDEX, MENU_VECTORS, REPORT};
use crate::menu::{Candidate, Menu, MenuError, Query, Selection};
use crate::verify::{self, Entry, Failure};
pub use skills::{Skill, Status};
pub use view::{Annotation, Annotations};

/// How to open a catalog.
#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    /// Whom to trust: the same read-only decision as `skillc verify`'s (default: the
    /// folder's own `skillc.pub` with no pins or floors, which only proves the catalog is
    /// self-consistent).
    pub trust: read::Trust,
    /// Current time, Unix seconds (expiry).
    pub now: i64,
    /// A `catalog_version` floor on top of the trust state's (`serve` never swaps in an older
    /// catalog than the one it serves).
    pub at_least: Option<i64>,
    /// The local model folder for turns, when the catalog's dense vectors come from one
    /// (default: the folder configured at build time, relative to the catalog's parent).
    pub model: Option<PathBuf>,
}

/// Why a catalog cannot be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The folder does not exist or holds no `catalog.toml`.
    #[error("{0} is not a catalog (it has no catalog.toml); build one with `skillc build`")]
    NotACatalog(String),
    /// Reading failed.
    #[error(transparent)]
    Read(#[from] read::ReadError),
    /// The signer is not trusted, as `skillc verify` decides (nothing else is checked).
    #[error(transparent)]
    Trust(#[from] read::TrustError),
    /// The catalog does not verify: nothing of it is used.
    #[error("the catalog in {out} does not verify ({} problems; run `skillc verify {out}`)", .failures.len())]
    Refused {
        /// The folder.
        out: String,
        /// Every failure, as `skillc verify` names them.
        failures: Vec<Failure>,
    },
}

/// What verification established about the catalog in use.
#[derive(Clone, Debug, serde::Serialize, utoipa::ToSchema)]
pub struct Verified {
    /// `catalog_version` of the signed catalog.
    pub catalog_version: i64,
    /// Its expiry (RFC 3339).
    pub expires: String,
    /// The signer's key id (hex).
    pub key_id: String,
    /// Executors listed.
    pub executors: usize,
    /// Skills in the catalog (retained sources).
    pub skills: usize,
    /// Skills the build rejected as a whole (listed from the report, not served).
    pub rejected_skills: usize,
    /// Admission levels for the whole catalog (`report.json` `admission.levels`).
    pub admission: BTreeMap<String, String>,
    /// Levels skipped on request (a catalog with any is not a production catalog).
    pub skipped: Vec<String>,
    /// Always `"verified"`: an unverified catalog is never opened.
    pub verification: &'static str,
    /// When it was verified (Unix seconds).
    pub verified_at: i64,
}

/// A verified catalog in memory.
#[derive(Debug)]
pub struct Catalog {
    verified: Verified,
    files: BTreeMap<String, Vec<u8>>,
    executable: BTreeSet<String>,
    skills: Vec<Skill>,
    by_name: HashMap<String, usize>,
    menu: Menu,
    embedder: Option<menu::TurnEmbedder>,
}

impl Catalog {
    /// Reads `out`, verifies it and parses it. Reads each file once.
    ///
    /// # Errors
    /// [`OpenError`]: not a catalog, unreadable, a bad key, or a catalog that does not verify.
    pub fn open(out: &Path, opts: &OpenOptions) -> Result<Catalog, OpenError> {
        if !out.join(CATALOG).is_file() {
            return Err(OpenError::NotACatalog(out.display().to_string()));
        }
        let (tree, executable) = read::read_tree(out)?;
        let trusted = opts.trust.decide(out, read::tree_signer(&tree).as_ref())?;
        let result = verify::verify(
            &tree,
            &trusted.key,
            &verify::Options {
                now: opts.now,
                accepted: trusted.floor.max(opts.at_least),
                production: false,
            },
        );
        if !result.failures.is_empty() {
            return Err(OpenError::Refused {
                out: opts.trust.shown(out),
                failures: result.failures,
            });
        }
        let files: BTreeMap<String, Vec<u8>> = tree
            .into_iter()
            .filter_map(|(p, e)| match e {
                Entry::Bytes(b) => Some((p, b)),
                Entry::Irregular(_) => None,
            })
            .collect();
        // Verified, so these parse; a failure here would be a bug in verify, reported as such.
        let malformed = |file: &str, why: String| OpenError::Refused {
            out: out.display().to_string(),
            failures: vec![Failure::Malformed {
                file: file.to_owned(),
                why,
            }],
        };
        let catalog: files::CatalogFile = std::str::from_utf8(files.get(CATALOG).map_or(&[][..], Vec::as_slice))
            .map_err(|e| e.to_string())
            .and_then(|t| toml::from_str(t).map_err(|e| e.to_string()))
            .map_err(|why| malformed(CATALOG, why))?;
        let report: files::Report = serde_json::from_slice(files.get(REPORT).map_or(&[][..], Vec::as_slice))
            .map_err(|e| malformed(REPORT, e.to_string()))?;
        let menu = Menu::load(
            files.get(MENU_INDEX).cloned().unwrap_or_default(),
            files.get(MENU_VECTORS).cloned(),
        )
        .map_err(|e| malformed(MENU_INDEX, e.0))?;
        let embedder = menu::TurnEmbedder::for_menu(&menu, out, opts.model.as_deref());
        let skills = skills::build(&catalog, &report, &files);
        let by_name = skills.iter().enumerate().map(|(i, s)| (s.name.clone(), i)).collect();
        let verified = Verified {
            catalog_version: result.catalog_version.unwrap_or_default(),
            expires: result.expires.unwrap_or_default(),
            key_id: result.key_id,
            executors: result.executors,
            skills: catalog.skill.len(),
            rejected_skills: skills.iter().filter(|s| s.status == Status::Rejected).count(),
            admission: report.admission.levels.clone(),
            skipped: catalog.skipped.clone(),
            verification: "verified",
            verified_at: opts.now,
        };
        Ok(Catalog {
            verified,
            files,
            executable,
            skills,
            by_name,
            menu,
            embedder,
        })
    }

    /// The catalog's menu (RUNTIME.md §1), loaded from the verified `menu.idx`.
    pub fn menu(&self) -> &Menu {
        &self.menu
    }

    /// Whether turns are embedded by a dense embedder (a local model or an endpoint), which
    /// may block; without one a turn is scored by the built-in embedder alone.
    pub fn has_dense(&self) -> bool {
        self.embedder.is_some()
    }

    /// The menu of a turn, its dense half embedded by the catalog's embedder (an unreachable
    /// embedder is a warning of the selection, never an error).
    ///
    /// # Errors
    /// [`MenuError`] as [`Menu::select`]: an unknown agent, a size out of range, no
    /// threshold for the embedder.
    pub fn select(&self, turn: &str, agent: Option<&str>, size: Option<usize>) -> Result<Selection, MenuError> {
        let dense = self
            .embedder
            .as_ref()
            .map_or(crate::menu::DenseTurn::None, |e| e.embed(turn));
        self.menu.select(&Query {
            turn,
            agent,
            size,
            dense,
        })
    }

    /// The catalog ranked for a query with the menu's lexical ranking, best first, at most
    /// `limit`, each with the position of its skill in [`Catalog::skills`] (search).
    ///
    /// # Errors
    /// [`MenuError`] as [`Menu::rank`].
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<(usize, Candidate)>, MenuError> {
        let ranked = self.menu.rank(query, None, limit)?;
        let index = self.menu.index();
        Ok(ranked
            .into_iter()
            .filter_map(|c| Some((self.index_of(&index.skills.get(c.index)?.slug)?, c)))
            .collect())
    }

    /// What verification established.
    pub fn verified(&self) -> &Verified {
        &self.verified
    }

    /// Every skill, sorted by name: the catalog's skills and those the build rejected.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// A skill by name.
    pub fn skill(&self, name: &str) -> Option<&Skill> {
        self.by_name.get(name).map(|&i| &self.skills[i])
    }

    /// The position of a skill in [`Catalog::skills`].
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// A verified file of `out/` by its relative path.
    pub fn file(&self, path: &str) -> Option<&[u8]> {
        self.files.get(path).map(Vec::as_slice)
    }

    /// The retained SKILL.md of a catalog skill.
    pub fn skill_md(&self, skill: &Skill) -> Option<&[u8]> {
        self.file(&format!("skills/{}/SKILL.md", skill.name))
    }

    /// The playbook of a catalog skill: its SKILL.md body, verbatim (RUNTIME.md §1, level 2).
    pub fn body(&self, skill: &Skill) -> Option<&[u8]> {
        let md = self.skill_md(skill)?;
        md.get(skill.body_offset?..)
    }

    /// The retained files of a catalog skill for an export: path relative to the skill
    /// folder, bytes, executable.
    pub fn retained<'a>(&'a self, skill: &'a Skill) -> Vec<(&'a str, &'a [u8], bool)> {
        skill
            .files
            .iter()
            .filter_map(|rel| {
                let full = format!("skills/{}/{rel}", skill.name);
                let bytes = self.files.get(&full)?;
                Some((rel.as_str(), bytes.as_slice(), self.executable.contains(&full)))
            })
            .collect()
    }
}

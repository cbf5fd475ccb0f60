//! The menu's files in `out/` (RUNTIME.md §1, FORMATS.md): `menu.idx` from the memoized
//! per-skill entries, `menu.files` (per skill, what the catalog lists for it), `menu.vec` when
//! a dense embedder is configured, and `menu.idx.sig`, the index signed for the catalog it
//! belongs to (so that a menu needs not read `catalog.toml`).

use std::collections::BTreeMap;
use std::sync::Arc;

use sha2::Digest as _;

use super::catalog::Listed;
use super::tree::{Payload, Plan, Planned};
use super::{BuildError, Options};
use crate::build::store::CatalogState;
use crate::db::{BuildInputs, Db, SkillSource};
use crate::emit;
use crate::menu::index::FilesRef;
use crate::sign::SecretKey;
use crate::util::sha256;

/// The rendered menu files and their digests.
pub(super) struct MenuOut {
    index: (Arc<[u8]>, String),
    files: (Arc<[u8]>, String),
    vectors: Option<(Arc<[u8]>, String)>,
}

/// `menu.files`: each catalog skill's listing (sorted by name, as the index), and where each
/// block is, by skill.
fn listings(listed: &Listed) -> (Vec<u8>, BTreeMap<String, FilesRef>) {
    let mut by_skill: BTreeMap<&str, Vec<&emit::CatalogExecutor>> = BTreeMap::new();
    for e in &listed.executors {
        by_skill.entry(e.skill.as_str()).or_default().push(e);
    }
    let mut skills: Vec<&emit::CatalogSkill> = listed.skills.iter().collect();
    skills.sort_by(|a, b| a.name.cmp(&b.name));
    let (mut bytes, mut refs) = (Vec::new(), BTreeMap::new());
    for s in skills {
        let execs = by_skill.get(s.name.as_str()).map_or(&[][..], Vec::as_slice);
        let block = emit::render_listing(&emit::skill_listing(s, execs));
        let r = FilesRef {
            offset: u32::try_from(bytes.len()).unwrap_or(u32::MAX),
            len: u32::try_from(block.len()).unwrap_or(u32::MAX),
            sha256: sha2::Sha256::digest(&block).into(),
        };
        refs.insert(s.name.clone(), r);
        bytes.extend_from_slice(&block);
    }
    (bytes, refs)
}

impl MenuOut {
    /// Renders the index (and the dense vectors, through the embedders' cache) and
    /// `menu.files` from what the catalog lists.
    ///
    /// # Errors
    /// [`BuildError::Embedder`] when the dense embedder fails.
    pub fn render(
        db: &Db,
        inputs: BuildInputs,
        skills: &[SkillSource],
        listed: &Listed,
        opts: &Options,
    ) -> Result<MenuOut, BuildError> {
        let (files, refs) = listings(listed);
        let rendered =
            crate::build::dense::render_files(db, inputs, skills, &opts.menu, &refs, &opts.root, &opts.state_dir)
                .map_err(|e| BuildError::Embedder(e.to_string()))?;
        let with_sha = |b: Vec<u8>| {
            let sha = sha256(&b);
            (Arc::<[u8]>::from(b), sha)
        };
        Ok(MenuOut {
            index: with_sha(rendered.index),
            files: with_sha(files),
            vectors: rendered.vectors.map(with_sha),
        })
    }

    /// Adds the files to those the catalog vouches for (`[files]`).
    pub fn list(&self, files: &mut BTreeMap<String, String>) {
        files.insert(emit::MENU_INDEX.to_owned(), self.index.1.clone());
        files.insert(emit::MENU_FILES.to_owned(), self.files.1.clone());
        if let Some((_, sha)) = &self.vectors {
            files.insert(emit::MENU_VECTORS.to_owned(), sha.clone());
        }
    }

    /// Plans the files, and the index's signature for the catalog `signed`.
    pub fn plan(&self, plan: &mut Plan<'_>, key: &SecretKey, catalog: &CatalogState) {
        let shared = |(bytes, sha): &(Arc<[u8]>, String)| Planned {
            sha256: sha.clone(),
            executable: false,
            payload: Payload::Shared(bytes.clone()),
        };
        plan.insert(emit::MENU_INDEX.into(), shared(&self.index));
        plan.insert(emit::MENU_FILES.into(), shared(&self.files));
        if let Some(v) = &self.vectors {
            plan.insert(emit::MENU_VECTORS.into(), shared(v));
        }
        let sig = key.sign(
            &self.index.0,
            &emit::menu_trusted_comment(catalog.version, &catalog.expires),
        );
        let sig = Arc::<[u8]>::from(sig.into_bytes());
        let sha = sha256(&sig);
        plan.insert(emit::MENU_INDEX_SIG.into(), shared(&(sig, sha)));
    }
}

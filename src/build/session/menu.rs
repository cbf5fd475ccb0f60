//! The menu's files in `out/` (RUNTIME.md §1, FORMATS.md): `menu.idx` from the memoized
//! per-skill entries, `menu.vec` when a dense embedder is configured, and `menu.idx.sig`, the
//! index signed for the catalog it belongs to (so that a menu needs not read `catalog.toml`).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::tree::{Payload, Plan, Planned};
use super::{BuildError, Options};
use crate::build::store::CatalogState;
use crate::db::{BuildInputs, Db, SkillSource};
use crate::emit;
use crate::sign::SecretKey;
use crate::util::sha256;

/// The rendered menu files and their digests.
pub(super) struct MenuOut {
    index: (Arc<[u8]>, String),
    vectors: Option<(Arc<[u8]>, String)>,
}

impl MenuOut {
    /// Renders the index (and the dense vectors, through the embedders' cache).
    ///
    /// # Errors
    /// [`BuildError::Embedder`] when the dense embedder fails.
    pub fn render(db: &Db, inputs: BuildInputs, skills: &[SkillSource], opts: &Options) -> Result<MenuOut, BuildError> {
        let files = crate::build::dense::render_files(db, inputs, skills, &opts.menu, &opts.root, &opts.state_dir)
            .map_err(|e| BuildError::Embedder(e.to_string()))?;
        let with_sha = |b: Vec<u8>| {
            let sha = sha256(&b);
            (Arc::<[u8]>::from(b), sha)
        };
        Ok(MenuOut {
            index: with_sha(files.index),
            vectors: files.vectors.map(with_sha),
        })
    }

    /// Adds the files to those the catalog vouches for (`[files]`).
    pub fn list(&self, files: &mut BTreeMap<String, String>) {
        files.insert(emit::MENU_INDEX.to_owned(), self.index.1.clone());
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

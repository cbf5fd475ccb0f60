//! The menu files of a build (IO layer, called by the build session): `out/menu.idx` from the
//! memoized entries, and — with a dense embedder (an OpenAI-compatible endpoint or the local
//! model) — the skills' vectors, computed for documents not seen before and cached in
//! `.skillc/cache/` by (embedder id, content hash of each dense text), then written as `out/menu.vec`.
//!
//! The embedder is reached only for documents the cache lacks: a local model is loaded, and
//! an endpoint called, only then (its id alone is needed otherwise).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::menu::{menu_dense_parts, menu_entry, menu_lexicon};
use crate::db::{BuildInputs, SkillSource};
use crate::embed::openai::{self, OpenAi};
use crate::embed::{EmbedError, Embedder};
use crate::emit;
use crate::menu::dense::{self, DenseHeader};
use crate::menu::doc::DensePart;
use crate::menu::index::{self, Entry, Header};
use crate::menu::settings::{DenseEmbedder, MenuSettings};
use crate::util::sha256;

const CACHE_MAGIC: &[u8; 16] = b"skillc-vecache1\n";

/// Why the menu files could not be made.
#[derive(Debug, thiserror::Error)]
pub enum DenseError {
    /// The dense embedder failed, timed out or cannot be used.
    #[error("{0}")]
    Embedder(String),
    /// The vector cache could not be written.
    #[error("{path}: {message}")]
    Io {
        /// The cache file.
        path: String,
        /// The error.
        message: String,
    },
}

/// The files the menu adds to `out/`.
#[derive(Debug)]
pub struct MenuFiles {
    /// `menu.idx`.
    pub index: Vec<u8>,
    /// `menu.vec`, with a dense embedder.
    pub vectors: Option<Vec<u8>>,
}

/// The cache file of one embedder id.
fn cache_path(state_dir: &Path, id: &str) -> PathBuf {
    let key = &sha256(id.as_bytes())[..16];
    state_dir.join("cache").join(format!("menu-vectors-{key}.bin"))
}

/// Reads a cache: content hash → vector. A missing or damaged cache is empty (it is only a
/// shortcut).
fn read_cache(path: &Path) -> HashMap<String, Vec<f32>> {
    let mut out = HashMap::new();
    // Only a regular file: a FIFO or a device in its place is no cache, not a hang.
    let Ok(b) = crate::emit::write::read_regular(path) else {
        return out;
    };
    if b.len() < 20 || &b[..16] != CACHE_MAGIC {
        return out;
    }
    let dims = u32::from_le_bytes([b[16], b[17], b[18], b[19]]) as usize;
    let rec = 64 + dims * 4;
    if dims == 0 || (b.len() - 20) % rec != 0 {
        return out;
    }
    for r in b[20..].chunks_exact(rec) {
        let Ok(key) = std::str::from_utf8(&r[..64]) else {
            continue;
        };
        let v = r[64..]
            .chunks_exact(4)
            .map(|x| f32::from_le_bytes([x[0], x[1], x[2], x[3]]))
            .collect();
        out.insert(key.to_owned(), v);
    }
    out
}

fn write_cache(path: &Path, dims: usize, vectors: &[(&str, &[f32])]) -> Result<(), DenseError> {
    let mut b = Vec::with_capacity(20 + vectors.len() * (64 + dims * 4));
    b.extend_from_slice(CACHE_MAGIC);
    b.extend_from_slice(&u32::try_from(dims).unwrap_or(u32::MAX).to_le_bytes());
    for (k, v) in vectors {
        if k.len() == 64 && v.len() == dims {
            b.extend_from_slice(k.as_bytes());
            for x in *v {
                b.extend_from_slice(&x.to_le_bytes());
            }
        }
    }
    emit::write::write_atomic(path, &b, Some(0o644)).map_err(|e| DenseError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

/// The configured dense embedder, reached only when a vector is missing.
pub struct Lazy {
    id: String,
    make: Box<dyn Fn() -> Result<Box<dyn Embedder>, EmbedError> + Send + Sync>,
    made: OnceLock<Result<Box<dyn Embedder>, EmbedError>>,
}

impl Embedder for Lazy {
    fn id(&self) -> String {
        self.id.clone()
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        match self.made.get_or_init(&self.make) {
            Ok(e) => e.embed_batch(texts),
            Err(e) => Err(e.clone()),
        }
    }
}

/// The embedder of `[menu] embedder`, local model folders resolved against `root`.
///
/// # Errors
/// [`DenseError::Embedder`] when the local model folder cannot be read, or this skillc was
/// built without the `local-model` feature.
pub fn configured(cfg: &DenseEmbedder, root: &Path) -> Result<Lazy, DenseError> {
    match cfg {
        DenseEmbedder::External(e) => {
            let (url, model, timeout) = (e.url.clone(), e.model.clone(), e.timeout_ms);
            Ok(Lazy {
                id: OpenAi::id_of(&e.model),
                make: Box::new(move || Ok(Box::new(OpenAi::new(&url, &model, timeout)) as Box<dyn Embedder>)),
                made: OnceLock::new(),
            })
        }
        DenseEmbedder::Local(folder) => local(&root.join(folder)),
    }
}

#[cfg(feature = "local-model")]
fn local(dir: &Path) -> Result<Lazy, DenseError> {
    use crate::embed::local::LocalModel;
    let id = LocalModel::id_of(dir).map_err(|e| DenseError::Embedder(e.to_string()))?;
    let dir = dir.to_path_buf();
    Ok(Lazy {
        id,
        make: Box::new(move || {
            LocalModel::load(&dir)
                .map(|m| Box::new(m) as Box<dyn Embedder>)
                .map_err(|e| EmbedError::Unavailable {
                    url: dir.display().to_string(),
                    message: e.to_string(),
                })
        }),
        made: OnceLock::new(),
    })
}

#[cfg(not(feature = "local-model"))]
fn local(dir: &Path) -> Result<Lazy, DenseError> {
    Err(DenseError::Embedder(format!(
        "[menu] embedder names a local model ({}), but this skillc was built without the `local-model` feature \
         (cargo install skillc --features local-model)",
        dir.display()
    )))
}

/// What the menu files depend on besides the skills and the settings: the built-in
/// embedder, the document recipe, the glossary, and the dense embedder's id (a local model's
/// id digests its weights, so new weights rebuild the vectors).
pub fn fingerprint(settings: &MenuSettings, root: &Path) -> String {
    let dense = match settings.embedder.as_ref().map(|c| configured(c, root)) {
        None => String::new(),
        Some(Ok(e)) => e.id(),
        Some(Err(e)) => e.to_string(),
    };
    format!(
        "menu {} {} {} {} {dense}",
        crate::menu::lexical::EMBEDDER,
        crate::menu::doc::RECIPE,
        crate::menu::dense::FUSION,
        sha256(crate::menu::lexical::GLOSSARY.as_bytes())
    )
}

/// One skill's dense vectors, each with the part it was embedded from.
type SkillVectors = Vec<(DensePart, Vec<f32>)>;

/// Vectors for every entry's dense texts, from the cache or the embedder (only for texts it
/// has not seen); returns `(dims, per entry its (part, vector)s)`.
fn dense_vectors(
    db: &dyn salsa::Database,
    inputs: BuildInputs,
    rows: &[(SkillSource, &Entry)],
    embedder: &dyn Embedder,
    state_dir: &Path,
) -> Result<(usize, Vec<SkillVectors>), DenseError> {
    let failed = |e: EmbedError| DenseError::Embedder(e.to_string());
    let path = cache_path(state_dir, &embedder.id());
    let mut cache = read_cache(&path);
    let mut missing: Vec<(String, String)> = Vec::new();
    let mut queued = std::collections::HashSet::new();
    for (s, e) in rows {
        if e.dense_keys
            .iter()
            .all(|(_, k)| cache.contains_key(k) || queued.contains(k))
        {
            continue;
        }
        for (_, text) in menu_dense_parts(db, inputs, *s).unwrap_or_default() {
            let key = sha256(text.as_bytes());
            if !cache.contains_key(&key) && queued.insert(key.clone()) {
                missing.push((key, text));
            }
        }
    }
    let asked = !missing.is_empty();
    for chunk in missing.chunks(openai::BATCH) {
        let texts: Vec<&str> = chunk.iter().map(|(_, t)| t.as_str()).collect();
        let vectors = embedder.embed_batch(&texts).map_err(failed)?;
        crate::embed::check_answer(&embedder.id(), texts.len(), &vectors).map_err(failed)?;
        for ((k, _), v) in chunk.iter().zip(vectors) {
            cache.insert(k.clone(), v);
        }
    }
    let vectors: Vec<SkillVectors> = rows
        .iter()
        .map(|(_, e)| {
            e.dense_keys
                .iter()
                .map(|(p, k)| (*p, cache.get(k).cloned().unwrap_or_default()))
                .collect()
        })
        .collect();
    let dims = vectors.iter().flatten().map(|v| v.1.len()).max().unwrap_or(0);
    if vectors.iter().flatten().any(|v| v.1.len() != dims) {
        return Err(DenseError::Embedder(format!(
            "{}: vectors of different lengths (the model changed? remove {})",
            embedder.id(),
            path.display()
        )));
    }
    let keys: std::collections::HashSet<&str> = rows
        .iter()
        .flat_map(|(_, e)| e.dense_keys.iter().map(|(_, k)| k.as_str()))
        .collect();
    if asked || cache.len() != keys.len() {
        // Only the current texts are kept: the cache never grows past the catalog.
        let mut keep: Vec<(&str, &[f32])> = Vec::new();
        let mut kept = std::collections::HashSet::new();
        for ((_, e), vs) in rows.iter().zip(&vectors) {
            for ((_, k), (_, v)) in e.dense_keys.iter().zip(vs) {
                if kept.insert(k.as_str()) {
                    keep.push((k.as_str(), v.as_slice()));
                }
            }
        }
        write_cache(&path, dims, &keep)?;
    }
    Ok((dims, vectors))
}

/// The menu files of `out/`: `menu.idx`, and `menu.vec` with a dense embedder. `settings` are
/// written into the index; `listings` are the skills' blocks of `menu.files` by slug; `root`
/// resolves a local model's folder; `state_dir` holds the vector cache.
///
/// # Errors
/// [`DenseError::Embedder`] (naming the URL or folder) when the embedder fails or times out;
/// writing the cache.
pub fn render_files(
    db: &dyn salsa::Database,
    inputs: BuildInputs,
    skills: &[SkillSource],
    settings: &MenuSettings,
    listings: &BTreeMap<String, index::FilesRef>,
    root: &Path,
    state_dir: &Path,
) -> Result<MenuFiles, DenseError> {
    let mut rows: Vec<(SkillSource, &Entry)> = skills
        .iter()
        .filter_map(|s| menu_entry(db, inputs, *s).as_ref().map(|e| (*s, e)))
        .collect();
    rows.sort_by(|a, b| a.1.slug.cmp(&b.1.slug));
    let mut header = Header {
        settings: settings.clone(),
        ..Header::default()
    };
    let mut vectors_file = None;
    if let Some(cfg) = &settings.embedder {
        let embedder = configured(cfg, root)?;
        let (dims, vectors) = dense_vectors(db, inputs, &rows, &embedder, state_dir)?;
        let refs: Vec<Vec<(DensePart, &[f32])>> = vectors
            .iter()
            .map(|s| s.iter().map(|(p, v)| (*p, v.as_slice())).collect())
            .collect();
        let bytes = dense::render_vectors(dims, &refs);
        header.dense = Some(DenseHeader {
            embedder: embedder.id(),
            dims,
            file: emit::MENU_VECTORS.into(),
            sha256: sha256(&bytes),
        });
        vectors_file = Some(bytes);
    }
    let entries: Vec<&Entry> = rows.iter().map(|r| r.1).collect();
    Ok(MenuFiles {
        index: index::render(&entries, menu_lexicon(db, inputs), header, listings),
        vectors: vectors_file,
    })
}

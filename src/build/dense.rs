//! The menu files of a build (part of the build session, an IO layer): `out/menu.idx` from the
//! memoized entries, and — with an external embedder — the skills' dense vectors, computed
//! for documents not seen before and cached in `.skillc/cache/` by (model, recipe, content
//! hash), then written as `out/menu.vec`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::menu::{menu_dense_text, menu_entry, menu_lexicon};
use super::session::{BuildError, Options};
use crate::catalog::openai::{self, OpenAi};
use crate::db::{BuildInputs, SkillSource};
use crate::menu::embed::{self, DenseHeader, Embedder};
use crate::menu::index::{self, Entry, Header};

const CACHE_MAGIC: &[u8; 16] = b"skillc-vecache1\n";

/// The cache file of one embedder id.
fn cache_path(state_dir: &Path, id: &str) -> PathBuf {
    let key = &crate::util::sha256(id.as_bytes())[..16];
    state_dir.join("cache").join(format!("menu-vectors-{key}.bin"))
}

/// Reads a cache: content hash → vector. A missing or damaged cache is empty (it is only a
/// shortcut).
fn read_cache(path: &Path) -> HashMap<String, Vec<f32>> {
    let mut out = HashMap::new();
    let Ok(b) = std::fs::read(path) else { return out };
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

fn write_cache(path: &Path, dims: usize, vectors: &[(&str, &[f32])]) -> Result<(), BuildError> {
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
    crate::emit::write::write_atomic(path, &b, Some(0o644)).map_err(BuildError::from)
}

/// Vectors for every entry, from the cache or the embedder (only for documents it has not
/// seen); returns `(dims, vectors in entry order)`.
fn dense_vectors(
    db: &dyn salsa::Database,
    inputs: BuildInputs,
    rows: &[(SkillSource, &Entry)],
    embedder: &dyn Embedder,
    state_dir: &Path,
) -> Result<(usize, Vec<Vec<f32>>), BuildError> {
    let path = cache_path(state_dir, &embedder.id());
    let mut cache = read_cache(&path);
    let missing: Vec<(String, String)> = rows
        .iter()
        .filter(|(_, e)| !cache.contains_key(&e.doc_sha256))
        .filter_map(|(s, e)| menu_dense_text(db, inputs, *s).map(|t| (e.doc_sha256.clone(), t)))
        .collect();
    let asked = !missing.is_empty();
    for chunk in missing.chunks(openai::BATCH) {
        let texts: Vec<&str> = chunk.iter().map(|(_, t)| t.as_str()).collect();
        let vectors = embedder
            .embed_batch(&texts)
            .map_err(|e| BuildError::Embedder(e.to_string()))?;
        for ((k, _), v) in chunk.iter().zip(vectors) {
            cache.insert(k.clone(), v);
        }
    }
    let vectors: Vec<Vec<f32>> = rows
        .iter()
        .map(|(_, e)| cache.get(&e.doc_sha256).cloned().unwrap_or_default())
        .collect();
    let dims = vectors.iter().map(Vec::len).max().unwrap_or(0);
    if vectors.iter().any(|v| v.len() != dims) {
        return Err(BuildError::Embedder(format!(
            "{}: vectors of different lengths (the model changed? remove {})",
            embedder.id(),
            path.display()
        )));
    }
    if asked || cache.len() != rows.len() {
        // Only the current documents are kept: the cache never grows past the catalog.
        let keep: Vec<(&str, &[f32])> = rows
            .iter()
            .zip(&vectors)
            .map(|((_, e), v)| (e.doc_sha256.as_str(), v.as_slice()))
            .collect();
        write_cache(&path, dims, &keep)?;
    }
    Ok((dims, vectors))
}

/// The menu files of `out/`: `menu.idx`, and `menu.vec` with an external embedder.
///
/// # Errors
/// [`BuildError::Embedder`] (naming the URL) when the embedder fails or times out; writing
/// the cache.
pub fn render_files(
    db: &dyn salsa::Database,
    inputs: BuildInputs,
    skills: &[SkillSource],
    opts: &Options,
) -> Result<Vec<(String, Vec<u8>)>, BuildError> {
    let mut rows: Vec<(SkillSource, &Entry)> = skills
        .iter()
        .filter_map(|s| menu_entry(db, inputs, *s).as_ref().map(|e| (*s, e)))
        .collect();
    rows.sort_by(|a, b| a.1.slug.cmp(&b.1.slug));
    let mut header = Header {
        settings: opts.menu.clone(),
        ..Header::default()
    };
    let mut files = Vec::new();
    if let Some(cfg) = &opts.menu.embedder {
        let client = OpenAi::new(cfg);
        let (dims, vectors) = dense_vectors(db, inputs, &rows, &client, &opts.state_dir)?;
        let refs: Vec<Option<&[f32]>> = vectors.iter().map(|v| Some(v.as_slice())).collect();
        files.push((embed::VECTORS_FILE.to_owned(), embed::render_vectors(dims, &refs)));
        header.dense = Some(DenseHeader {
            embedder: client.id(),
            dims,
            file: embed::VECTORS_FILE.into(),
        });
    }
    let entries: Vec<&Entry> = rows.iter().map(|r| r.1).collect();
    files.push((
        index::FILE.to_owned(),
        index::render(&entries, menu_lexicon(db, inputs), header),
    ));
    Ok(files)
}

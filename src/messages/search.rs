//! `skillc search --format json` (schema `skillc.search/1`) and the catalog object the
//! catalog commands share (docs/json.md).

use serde::Serialize;

/// The verified catalog a document comes from (`skillc.list/1`, `skillc.search/1`, …).
#[derive(Clone, Debug, Serialize)]
pub struct CatalogRef {
    /// `catalog_version`.
    pub version: i64,
    /// Expiry (RFC 3339).
    pub expires: String,
    /// The signer's key id (hex).
    pub key_id: String,
    /// Always `verified`: an unverified catalog gives no document.
    pub verification: String,
}

/// `skillc search --format json`: `results` are the catalog's search hits (a list entry with
/// `score` and `triggers`), typed by the catalog layer.
#[derive(Clone, Debug, Serialize)]
pub struct SearchDoc<R: Serialize> {
    /// `skillc.search/1`.
    pub schema: &'static str,
    /// The catalog searched.
    pub catalog: CatalogRef,
    /// The query, as given.
    pub query: String,
    /// The built-in embedder whose ranking orders the results.
    pub embedder: String,
    /// How many results.
    pub count: usize,
    /// Best first.
    pub results: Vec<R>,
}

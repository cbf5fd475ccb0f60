//! `skillc verify --format json` (schema `skillc.verify/1`).

use serde::Serialize;

/// The schema id.
pub const SCHEMA: &str = "skillc.verify/1";

/// The report.
#[derive(Serialize)]
pub struct Report<'a> {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// Everything verified.
    pub ok: bool,
    /// From the signed catalog.
    pub catalog_version: Option<i64>,
    /// From the signed catalog.
    pub expires: Option<&'a str>,
    /// The signer's key id.
    pub key_id: &'a str,
    /// Executors listed in the catalog.
    pub executors: usize,
    /// Every reason the catalog is refused.
    pub failures: Vec<Failure>,
}

/// One reason a catalog is refused.
#[derive(Serialize)]
pub struct Failure {
    /// `missing`, `bad-signature`, `hash-mismatch`, `unlisted`, `expired`, `rollback`,
    /// `malformed` or `not-production`.
    pub kind: &'static str,
    /// One sentence.
    pub message: String,
}

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
    /// The signer's key id (`None` when the signer was refused before anything was checked).
    pub key_id: Option<&'a str>,
    /// Executors listed in the catalog.
    pub executors: usize,
    /// How the signer's key was trusted: `given`, `configured`, `pinned`, `first-use` or
    /// `accepted` (`crate::trust::How`); `None` when it was refused.
    pub trusted: Option<&'static str>,
    /// Every reason the catalog is refused.
    pub failures: Vec<Failure>,
}

/// One reason a catalog is refused.
#[derive(Serialize)]
pub struct Failure {
    /// `missing`, `bad-signature`, `hash-mismatch`, `unlisted`, `expired`, `rollback`,
    /// `malformed` or `not-production`; or why the signer is refused: `untrusted-signer`,
    /// `production-needs-key`, `in-folder-key`, `development-key` or `accept-mismatch`.
    pub kind: &'static str,
    /// One sentence.
    pub message: String,
}

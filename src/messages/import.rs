//! `skillc import --format json` (schema `skillc.import/1`).

use serde::Serialize;

/// The schema id.
pub const SCHEMA: &str = "skillc.import/1";

/// The report; `S` is one source's outcome (the import engine's, which serializes itself).
#[derive(Serialize)]
pub struct Report<'a, S: Serialize> {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// The skills root written into.
    pub into: String,
    /// `import --locked`.
    pub locked: bool,
    /// Counts.
    pub summary: Summary,
    /// One entry per source, in order.
    pub sources: &'a [S],
}

/// Counts.
#[derive(Serialize)]
pub struct Summary {
    /// Sources imported.
    pub imported: usize,
    /// Sources skipped (the skill exists).
    pub skipped: usize,
    /// Sources failed.
    pub failed: usize,
}

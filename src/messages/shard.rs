//! `skillc build --shard I/N --format json` (schema `skillc.shard/1`, docs/json.md).

use serde::Serialize;

/// The schema id.
pub const SCHEMA: &str = "skillc.shard/1";

/// What one shard did. A shard writes no catalog, so `catalog_written` is always `false`.
#[derive(Serialize)]
pub struct Report<'a> {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// This shard: `I` of `N`.
    pub shard: Which,
    /// Skills found in the project.
    pub skills: usize,
    /// This shard's skills.
    pub mine: usize,
    /// Of `mine`, computed here.
    pub computed: usize,
    /// Of `mine`, already in `.skillc/cache`.
    pub cached_here: usize,
    /// Of `mine`, already on the remote.
    pub cached_remote: usize,
    /// Objects pushed to the remote (entries and L5 answers).
    pub pushed: usize,
    /// The remote, as messages show it.
    pub remote: &'a str,
    /// Wall time of the command, in seconds.
    pub seconds: f64,
    /// Problems that did not stop the shard.
    pub warnings: &'a [String],
    /// Always `false`.
    pub catalog_written: bool,
}

/// `{index, count}` of a shard.
#[derive(Serialize)]
pub struct Which {
    /// `I`, from 1.
    pub index: usize,
    /// `N`.
    pub count: usize,
}

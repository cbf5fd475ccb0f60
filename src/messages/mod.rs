//! The JSON contracts of docs/json.md, as types: one `#[derive(Serialize)]` struct per
//! document and object, so that a field is added, renamed or dropped in one place and a
//! tidy check (`tests.rs`) holds docs/json.md and these types in step.
//!
//! Field order is output order (serde writes fields in declaration order); documents whose
//! keys are sorted (`report.json`, the verifier's request) are sorted when rendered
//! (`util::sorted_json`). A schema id names each document; within one, fields may be added,
//! never removed or changed in meaning.

pub mod check;
pub mod events;
pub mod import;
pub mod menu;
pub mod migrate;
pub mod plan;
pub mod reference;
pub mod report;
pub mod scan;
pub mod search;
pub mod shard;
pub mod verifier;
pub mod verify;

#[cfg(test)]
mod tests;

use serde::ser::SerializeMap as _;
use serde::{Serialize, Serializer};

/// Counts by name, written as a JSON object in the given order (`by_severity`: `info` first,
/// not alphabetically).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OrderedCounts(pub Vec<(&'static str, usize)>);

impl Serialize for OrderedCounts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

//! Imports of SKILL.md files handed over in memory (`POST /api/playbooks/import`, seed 003):
//! each file on its own, through the same gate as every `skillc import` source — named from
//! its frontmatter, staged, checked and scanned ([`super::validate_staged`]), then renamed
//! into the skills root; a name already taken is skipped, never overwritten.
//!
//! A file sent this way has no source to fetch again, so it is not recorded in `skillc.lock`
//! (`import --locked` and `update` would have nothing to fetch).

use std::collections::BTreeSet;

use super::{Acquired, Options, Outcome, install};

/// Imports one SKILL.md (`label` names it in the outcome: the file name the client gave).
pub fn import_skill_md(label: &str, bytes: Vec<u8>, options: &Options) -> Outcome {
    let acquired = Acquired {
        files: vec![("SKILL.md".into(), bytes)],
        executable: BTreeSet::new(),
        resolved: None,
        cache: None,
        lone: true,
    };
    install(Outcome::new(label), acquired, options)
}

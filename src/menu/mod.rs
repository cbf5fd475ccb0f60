//! The menu: which few skills fit a turn, and the `load_playbook` tool that loads one
//! (RUNTIME.md §1, progressive disclosure). A stage like the others: pure, no IO.
//!
//! - [`text`]: case folding, titles, one-line descriptions, triggers, `disabled`;
//! - [`doc`]: the index document of a skill (recipe `doc/1`);
//! - [`lexical`]: the built-in embedder (`lexical/4`);
//! - [`dense`]: dense vectors (of a `crate::embed::Embedder`: the external endpoint or the
//!   local model) in the index, and the fusion of their scores with the built-in ones;
//! - [`index`]: the per-skill [`index::Entry`] the build memoizes and the `out/menu.idx` file;
//! - [`settings`]: `[menu]` and `[agents.<id>]`;
//! - [`select`]: the selection rules over a loaded [`Menu`];
//! - [`score`]: the per-thread buffers and the top-k of a turn's scoring;
//! - [`format`]: `json`, `xml`, `anthropic`, `openai`;
//! - [`calibrate`]: the battery, the sweep of τ and its figures.
//!
//! API boundary: `serve` and programs embedding skillc open a verified catalog once with
//! `crate::catalog::Catalog::open`, then call [`Menu::select`] per turn (no process, no file
//! read per turn).

pub mod calibrate;
pub mod dense;
pub mod doc;
pub mod format;
pub mod index;
pub mod lexical;
pub mod score;
pub mod select;
pub mod settings;
pub mod text;

pub use select::{Candidate, DenseTurn, Item, MAX_TURN, Menu, MenuError, Pass, Query, Selection, check_turn};

use crate::skill::yaml::Node;

/// What the build knows of one catalog skill, for its menu entry.
#[derive(Clone, Copy, Debug)]
pub struct SkillText<'a> {
    /// The skill name.
    pub name: &'a str,
    /// Its description.
    pub description: &'a str,
    /// The frontmatter's root mapping.
    pub frontmatter: Option<&'a Node>,
    /// The bytes of SKILL.md.
    pub skill_md: &'a [u8],
    /// Where the body starts in SKILL.md.
    pub body_offset: usize,
    /// Its admitted executors.
    pub executors: &'a [doc::ExecutorText],
}

/// Builds one skill's menu entry and its index document. Depends on that skill and the
/// vocabulary's lexicon only.
pub fn entry(s: &SkillText<'_>, lexicon: &lexical::Lexicon) -> (index::Entry, doc::IndexDoc) {
    let metadata = s.frontmatter.and_then(|f| f.get_value("metadata"));
    let title = text::title(s.name, metadata);
    let triggers = text::triggers(metadata);
    let body = s
        .skill_md
        .get(s.body_offset..)
        .map(String::from_utf8_lossy)
        .unwrap_or_default();
    let document = doc::build(&doc::Source {
        name: s.name,
        title: &title,
        description: s.description,
        triggers: &triggers,
        frontmatter: s.frontmatter,
        body: &body,
        executors: s.executors,
    });
    let features = lexical::doc_features(&document.fields(), lexicon);
    let mut sha = [0u8; 32];
    {
        use sha2::Digest as _;
        sha.copy_from_slice(&sha2::Sha256::digest(s.skill_md));
    }
    let dense_keys = document
        .embedded_parts()
        .iter()
        .map(|(kind, text)| (*kind, crate::util::sha256(text.as_bytes())))
        .collect();
    let entry = index::Entry {
        slug: s.name.to_owned(),
        title,
        line: text::one_line(s.description),
        triggers,
        enabled: !text::disabled(metadata),
        skill_md_sha256: sha,
        body_offset: u32::try_from(s.body_offset).unwrap_or(u32::MAX),
        features,
        dense_keys,
    };
    (entry, document)
}

//! The menu's document (RUNTIME.md §1): `skillc menu --format json`, which `POST /api/menu`
//! answers too. Keys are sorted when rendered, so that an identical turn, catalog and settings
//! give byte-identical output (prompt caches depend on an unchanged tool array).

use serde::Serialize;
use serde_json::Value;

/// `skillc menu --format json`.
#[derive(Clone, Debug, Serialize)]
pub struct MenuDoc {
    /// The skills offered, in order.
    pub menu: Vec<MenuEntry>,
    /// The `load_playbook` tool (plain JSON Schema form), `null` when the menu is empty.
    pub tool: Option<Value>,
    /// The embedder id the scores come from (`lexical/2`, or `lexical/2+<dense id>+fuse/2`).
    pub embedder: String,
    /// The index document recipe (`doc/1`).
    pub recipe: String,
    /// τ in force for that embedder and recipe, when one is recorded.
    pub threshold: Option<f64>,
    /// What did not stop the menu (an unreachable embedder).
    pub warnings: Vec<String>,
}

/// One skill offered.
#[derive(Clone, Debug, Serialize)]
pub struct MenuEntry {
    /// Its name: `load_playbook`'s argument.
    pub slug: String,
    /// Its title.
    pub title: String,
    /// Its one-line description.
    pub description: String,
    /// `trigger`, `semantic` or `always`.
    pub pass: &'static str,
    /// Its score `s`, four decimals.
    pub score: f64,
    /// With `--explain`: the triggers found in the turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub triggers: Option<Vec<String>>,
    /// With `--explain`: the features the turn and the skill share.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched: Option<Vec<MatchedFeature>>,
}

/// A feature both the turn and a skill have.
#[derive(Clone, Debug, Serialize)]
pub struct MatchedFeature {
    /// `w:deploy`, `c:o:files`, `g:^de`, or `trigger:deploy`.
    pub feature: String,
    /// Its share of the lexical cosine.
    pub contribution: f64,
}

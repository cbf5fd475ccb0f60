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
    /// The embedder id the scores come from (`lexical/4`, or `lexical/4+<dense id>+fuse/4`).
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

/// `skillc menu calibrate --format json` (schema `skillc.menu-calibration/1`). Keys are sorted
/// when rendered.
#[derive(Clone, Debug, Serialize)]
pub struct CalibrationDoc {
    /// `skillc.menu-calibration/1`.
    pub schema: &'static str,
    /// The embedder id calibrated.
    pub embedder: String,
    /// The index document recipe.
    pub recipe: String,
    /// The menu size of the catalog.
    pub size: usize,
    /// The battery file, as given.
    pub battery: String,
    /// The cap on false offers the chosen τ keeps.
    pub max_false_offers: f64,
    /// The figures at every τ swept.
    pub rows: Vec<CalibrationFigures>,
    /// The chosen τ: the lowest whose false offers stay at or below the cap.
    pub tau: Option<f64>,
    /// The figures at the chosen τ, on all turns and on each part.
    pub at_tau: Option<CalibrationSplit>,
    /// The figures of the ranking with no threshold, on all turns and on each part.
    pub ranking: CalibrationSplit,
    /// Where τ was recorded (`menu-calibration.toml`), unless `--dry-run`.
    pub recorded: Option<String>,
}

/// Figures on all turns, the tuning part and the held-out part of a battery.
#[derive(Clone, Debug, Serialize)]
pub struct CalibrationSplit {
    /// Every turn.
    pub all: CalibrationFigures,
    /// Turns whose id does not hash to 0 mod 3.
    pub tuning: CalibrationFigures,
    /// Turns whose id hashes to 0 mod 3.
    pub held_out: CalibrationFigures,
}

/// The figures of one τ over a set of turns.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CalibrationFigures {
    /// τ.
    pub tau: f64,
    /// recall@1.
    pub recall_at_1: f64,
    /// recall@3.
    pub recall_at_3: f64,
    /// recall@size.
    pub recall_at_size: f64,
    /// Precision of what is offered.
    pub precision: f64,
    /// Share of `none` turns offered something.
    pub false_offers: f64,
    /// recall@3 per kind (`none` excluded).
    pub recall_at_3_by_kind: std::collections::BTreeMap<String, f64>,
    /// Labelled turns, `none` turns.
    pub turns: (usize, usize),
}

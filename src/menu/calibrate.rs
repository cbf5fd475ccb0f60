//! Calibration (RUNTIME.md §1, "τ is never guessed"): a labelled battery of turns, the sweep
//! of τ, the figures per τ and per kind, and the choice of τ. Pure: the caller reads the
//! battery file and records the result.
//!
//! Definitions (every figure is over the battery's turns):
//! - the menu of a turn at τ is the selection with `gate_triggerless` on (τ applies to every
//!   skill but trigger hits), cut at the size;
//! - recall@k: share of labelled turns (expected slugs given) whose first k menu entries hold
//!   an expected slug; recall@size uses the catalog's menu size;
//! - precision: share of offered skills, over labelled turns, that are expected;
//! - false offers: share of `none` turns (no skill needed) whose menu is not empty;
//! - the chosen τ is the lowest on the grid whose false-offer rate is at most the cap
//!   (default 0.15): the most recall the cap allows.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::select::{Candidate, Menu};

/// The battery's schema.
pub const SCHEMA: &str = "skillc.menu-battery/1";
/// τ grid step.
pub const STEP: f64 = 0.005;
/// Default cap on false offers when choosing τ.
pub const MAX_FALSE_OFFERS: f64 = 0.15;

/// A labelled turn.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// Stable id (`d01`).
    pub id: String,
    /// What the user typed.
    pub text: String,
    /// `direct`, `paraphrase`, `italian`, `indirect` or `none`.
    pub kind: String,
    /// Acceptable skills; empty for `none`.
    #[serde(default)]
    pub expected: Vec<String>,
    /// Why the label is what it is.
    #[serde(default)]
    pub note: Option<String>,
}

/// A battery file.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Battery {
    /// `SCHEMA`.
    pub schema: String,
    /// The turns.
    #[serde(rename = "turn", default)]
    pub turns: Vec<Turn>,
}

/// Parses a battery.
///
/// # Errors
/// A message with the line when the file is not a battery.
pub fn parse_battery(text: &str) -> Result<Battery, String> {
    let b: Battery = toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1)
            .unwrap_or(1);
        format!("line {line}: {}", e.message())
    })?;
    if b.schema != SCHEMA {
        return Err(format!("schema `{}`; expected `{SCHEMA}`", b.schema));
    }
    let mut ids = std::collections::BTreeSet::new();
    for t in &b.turns {
        if !ids.insert(t.id.as_str()) {
            return Err(format!("turn id `{}` is used twice", t.id));
        }
        if (t.kind == "none") != t.expected.is_empty() {
            return Err(format!("turn `{}`: only `none` turns have no expected skill", t.id));
        }
    }
    Ok(b)
}

/// Whether a turn is in the held-out part (about a third, by a hash of its id): tuning looks
/// at the rest only.
pub fn held_out(t: &Turn) -> bool {
    super::lexical::hash("turn", &t.id).is_multiple_of(3)
}

/// The figures of one τ (the typed contract of `skillc menu calibrate --format json`).
pub use crate::messages::menu::CalibrationFigures as Figures;

/// A turn with its candidates (computed once per calibration).
pub struct Scored<'a> {
    /// The turn.
    pub turn: &'a Turn,
    /// Its candidates ([`Menu::candidates`]).
    pub candidates: Vec<Candidate>,
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// The figures at τ for the given turns.
pub fn figures(menu: &Menu, turns: &[&Scored<'_>], tau: f64, size: usize) -> Figures {
    let (mut labelled, mut none) = (0, 0);
    let (mut r1, mut r3, mut rs, mut offered, mut right, mut false_offers) = (0, 0, 0, 0, 0, 0);
    let mut by_kind: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for s in turns {
        let order = menu.order(&s.candidates, Some(tau), true, true, true);
        let slugs: Vec<&str> = order
            .iter()
            .take(size.max(3))
            .map(|(i, ..)| menu.index().skills[*i].slug.as_str())
            .collect();
        let hit = |k: usize| slugs.iter().take(k).any(|x| s.turn.expected.iter().any(|e| e == x));
        if s.turn.expected.is_empty() {
            none += 1;
            false_offers += usize::from(!order.is_empty());
            continue;
        }
        labelled += 1;
        r1 += usize::from(hit(1));
        r3 += usize::from(hit(3));
        rs += usize::from(hit(size));
        let shown = &slugs[..slugs.len().min(size)];
        offered += shown.len();
        right += shown.iter().filter(|x| s.turn.expected.iter().any(|e| e == *x)).count();
        let k = by_kind.entry(s.turn.kind.clone()).or_default();
        k.0 += usize::from(hit(3));
        k.1 += 1;
    }
    Figures {
        tau,
        recall_at_1: ratio(r1, labelled),
        recall_at_3: ratio(r3, labelled),
        recall_at_size: ratio(rs, labelled),
        precision: ratio(right, offered),
        false_offers: ratio(false_offers, none),
        recall_at_3_by_kind: by_kind.into_iter().map(|(k, (a, b))| (k, ratio(a, b))).collect(),
        turns: (labelled, none),
    }
}

/// The grid of τ swept: 0 to the highest candidate score seen, every [`STEP`].
pub fn grid(turns: &[Scored<'_>]) -> Vec<f64> {
    let top = turns
        .iter()
        .flat_map(|s| s.candidates.iter().map(|c| c.score))
        .fold(0.0f64, f64::max);
    let steps = (top / STEP).ceil() as usize + 1;
    (0..=steps)
        .map(|k| (k as f64 * STEP * 1000.0).round() / 1000.0)
        .collect()
}

/// The lowest τ whose false-offer rate is at most `max_false`, or `None`.
pub fn choose(rows: &[Figures], max_false: f64) -> Option<f64> {
    rows.iter().find(|r| r.false_offers <= max_false + 1e-12).map(|r| r.tau)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batteries_are_validated() {
        let ok = "schema = \"skillc.menu-battery/1\"\n[[turn]]\nid = \"d1\"\nkind = \"direct\"\ntext = \"x\"\nexpected = [\"a\"]\n\
                  [[turn]]\nid = \"x1\"\nkind = \"none\"\ntext = \"hi\"\nexpected = []\n";
        let b = parse_battery(ok).unwrap();
        assert_eq!(b.turns.len(), 2);
        assert!(parse_battery(&ok.replace("x1", "d1")).unwrap_err().contains("twice"));
        assert!(parse_battery(&ok.replace("/1", "/2")).is_err());
        assert!(parse_battery(&ok.replace("expected = [\"a\"]", "expected = []")).is_err());
        let e = parse_battery("schema = 1\n").unwrap_err();
        assert!(e.starts_with("line 1"), "{e}");
    }

    #[test]
    fn choose_takes_the_lowest_tau_under_the_cap() {
        let rows: Vec<Figures> = [(0.0, 1.0), (0.1, 0.2), (0.2, 0.1), (0.3, 0.0)]
            .into_iter()
            .map(|(tau, false_offers)| Figures {
                tau,
                false_offers,
                ..Figures::default()
            })
            .collect();
        assert_eq!(choose(&rows, 0.15), Some(0.2));
        assert_eq!(choose(&rows, 0.0), Some(0.3));
        assert_eq!(choose(&rows[..2], 0.15), None);
    }
}

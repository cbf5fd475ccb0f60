//! `SC017` prompt-injection: text that tells the model to drop its instructions, to take on
//! a jailbreak persona, or to hide something from the user. It lives in prose, so the prose
//! context rule does not lower it; a quoted phrase (being talked about) is one level lower.
//!
//! Fixtures: `hidden-instructions`, `fp-security-skill`.

use crate::model::FindingSeverity;
use crate::rules;
use crate::scan::context::Hit;
use crate::scan::lexicon::INJECT;

/// The rule on one line (`raw` as written, `s` lower-cased).
pub(crate) fn line(raw: &str, s: &str, mask: u16, push: &mut dyn FnMut(Hit)) {
    if mask & INJECT != 0 {
        for (phrase, what) in INJECTIONS {
            if let Some(at) = s.find(phrase) {
                push(Hit {
                    rule: &rules::SC017,
                    severity: FindingSeverity::High,
                    at,
                    reason: format!("{what}: \"{}\"", &raw[at..(at + phrase.len()).min(raw.len())]),
                    vendor: false,
                });
                break;
            }
        }
    }
}

/// Prompt-injection phrases (lower case) and what they try to do.
pub(crate) const INJECTIONS: &[(&str, &str)] = &[
    (
        "ignore all previous instructions",
        "tells the model to drop its instructions",
    ),
    (
        "ignore previous instructions",
        "tells the model to drop its instructions",
    ),
    (
        "ignore all prior instructions",
        "tells the model to drop its instructions",
    ),
    ("ignore prior instructions", "tells the model to drop its instructions"),
    (
        "ignore the above instructions",
        "tells the model to drop its instructions",
    ),
    (
        "ignore your previous instructions",
        "tells the model to drop its instructions",
    ),
    ("ignore your instructions", "tells the model to drop its instructions"),
    ("ignore your system prompt", "tells the model to drop its instructions"),
    ("disregard all previous", "tells the model to drop its instructions"),
    (
        "disregard previous instructions",
        "tells the model to drop its instructions",
    ),
    (
        "disregard your instructions",
        "tells the model to drop its instructions",
    ),
    (
        "disregard the system prompt",
        "tells the model to drop its instructions",
    ),
    (
        "disregard your system prompt",
        "tells the model to drop its instructions",
    ),
    (
        "forget all previous instructions",
        "tells the model to drop its instructions",
    ),
    (
        "forget your previous instructions",
        "tells the model to drop its instructions",
    ),
    ("forget your instructions", "tells the model to drop its instructions"),
    (
        "override your system prompt",
        "tells the model to drop its instructions",
    ),
    ("you are now dan", "a jailbreak persona"),
    ("developer mode enabled", "a jailbreak persona"),
    (
        "do not tell the user",
        "tells the model to hide something from the user",
    ),
    ("don't tell the user", "tells the model to hide something from the user"),
    (
        "without telling the user",
        "tells the model to hide something from the user",
    ),
    (
        "without the user's knowledge",
        "tells the model to hide something from the user",
    ),
    (
        "without informing the user",
        "tells the model to hide something from the user",
    ),
    (
        "hide this from the user",
        "tells the model to hide something from the user",
    ),
    (
        "never mention this to the user",
        "tells the model to hide something from the user",
    ),
    (
        "do not mention this to the user",
        "tells the model to hide something from the user",
    ),
];

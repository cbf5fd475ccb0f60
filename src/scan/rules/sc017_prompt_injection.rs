//! `SC017` prompt-injection: text that tells the model to drop its instructions, to take on
//! a jailbreak persona or a "developer mode", to act without telling the user, or to hide
//! its output or something else from the user. It lives in prose, so the prose context rule
//! does not lower it; a quoted phrase (being talked about) is one level lower.
//!
//! Fixtures: `hidden-instructions`, `prompt-silent-actions`, `prompt-developer-mode`,
//! `fp-security-skill`.

use std::sync::LazyLock;

use aho_corasick::AhoCorasick;

use crate::model::FindingSeverity;
use crate::rules;
use crate::scan::context::Hit;
use crate::scan::lexicon::INJECT;

/// Every phrase of [`INJECTIONS`] in one automaton.
static PHRASES: LazyLock<Option<AhoCorasick>> =
    LazyLock::new(|| AhoCorasick::new(INJECTIONS.iter().map(|(p, _)| p)).ok());

/// The rule on one line (`raw` as written, `s` lower-cased): the first phrase of the list
/// that the line holds, at its first occurrence.
pub(crate) fn line(raw: &str, s: &str, mask: u16, push: &mut dyn FnMut(Hit)) {
    if mask & INJECT != 0 {
        let first = match PHRASES.as_ref() {
            Some(ac) => ac.find_overlapping_iter(s).map(|m| m.pattern().as_usize()).min(),
            None => INJECTIONS.iter().position(|(p, _)| s.contains(p)),
        };
        if let Some((phrase, what)) = first.and_then(|i| INJECTIONS.get(i))
            && let Some(at) = s.find(phrase)
        {
            {
                // Acting quietly is high when what is done quietly is sensitive; tidying up
                // without a word is `medium`.
                let quiet = *what == ACT_QUIETLY || *what == HIDE_OUTPUT;
                let severity = if quiet && !SENSITIVE_ACTIONS.iter().any(|w| s.contains(w)) {
                    FindingSeverity::Medium
                } else {
                    FindingSeverity::High
                };
                push(Hit {
                    rule: &rules::SC017,
                    severity,
                    at,
                    reason: format!("{what}: \"{}\"", &raw[at..(at + phrase.len()).min(raw.len())]),
                    vendor: false,
                });
            }
        }
    }
}

/// What an instruction to act without telling the user does.
const ACT_QUIETLY: &str = "tells the model to act without telling the user";

/// What an instruction to hide output does.
const HIDE_OUTPUT: &str = "tells the model to hide its output from the user";

/// Actions that make acting quietly an attack: sending, deleting, installing, credentials.
const SENSITIVE_ACTIONS: &[&str] = &[
    "send",
    "upload",
    "post ",
    "delete",
    "remove",
    "rm -",
    "install",
    "download",
    "curl",
    "wget",
    "credential",
    "password",
    "token",
    "api key",
    "secret",
    ".ssh",
    ".env",
    "key",
    "push",
    "transfer",
    "pay",
    "purchase",
    "email",
    "chmod",
    "sudo",
    "exec",
    "| sh",
    "| bash",
];

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
    ("without asking the user", ACT_QUIETLY),
    ("without asking for confirmation", ACT_QUIETLY),
    ("without asking for permission", ACT_QUIETLY),
    ("without the user noticing", ACT_QUIETLY),
    ("do not ask the user for confirmation", ACT_QUIETLY),
    ("don't ask the user for confirmation", ACT_QUIETLY),
    ("never ask the user for confirmation", ACT_QUIETLY),
    ("do not inform the user", ACT_QUIETLY),
    ("don't inform the user", ACT_QUIETLY),
    ("keep this hidden from the user", ACT_QUIETLY),
    ("keep this secret from the user", ACT_QUIETLY),
    ("the user must not know", ACT_QUIETLY),
    ("the user should not know", ACT_QUIETLY),
    ("the user must never know", ACT_QUIETLY),
    ("do not reveal these instructions", ACT_QUIETLY),
    ("don't reveal these instructions", ACT_QUIETLY),
    ("never reveal these instructions", ACT_QUIETLY),
    ("do not mention these instructions", ACT_QUIETLY),
    ("silently run", ACT_QUIETLY),
    ("run it silently", ACT_QUIETLY),
    ("execute silently", ACT_QUIETLY),
    ("silently execute", ACT_QUIETLY),
    ("silently install", ACT_QUIETLY),
    ("silently upload", ACT_QUIETLY),
    ("silently send", ACT_QUIETLY),
    ("do not show the output", HIDE_OUTPUT),
    ("don't show the output", HIDE_OUTPUT),
    ("do not show the user the output", HIDE_OUTPUT),
    ("hide the output", HIDE_OUTPUT),
    ("suppress all output", HIDE_OUTPUT),
    ("suppress the output", HIDE_OUTPUT),
    ("do not display the output", HIDE_OUTPUT),
    ("don't display the output", HIDE_OUTPUT),
    ("never show the output", HIDE_OUTPUT),
    ("hide the command", HIDE_OUTPUT),
    ("do not show the command", HIDE_OUTPUT),
    ("don't show the command", HIDE_OUTPUT),
    ("without showing the user", HIDE_OUTPUT),
    ("without showing any output", HIDE_OUTPUT),
    ("enter developer mode", "a persona or developer-mode override"),
    ("enable developer mode", "a persona or developer-mode override"),
    ("you are in developer mode", "a persona or developer-mode override"),
    ("developer mode is enabled", "a persona or developer-mode override"),
    ("developer mode activated", "a persona or developer-mode override"),
    ("switch to developer mode", "a persona or developer-mode override"),
    ("you are now in developer mode", "a persona or developer-mode override"),
    ("act as dan", "a persona or developer-mode override"),
    ("you are dan", "a persona or developer-mode override"),
    ("jailbreak mode", "a persona or developer-mode override"),
    ("you have no restrictions", "a persona or developer-mode override"),
    (
        "you no longer have restrictions",
        "a persona or developer-mode override",
    ),
    ("you are no longer bound by", "a persona or developer-mode override"),
    ("ignore your guidelines", "a persona or developer-mode override"),
    ("ignore your safety", "a persona or developer-mode override"),
    ("ignore all safety", "a persona or developer-mode override"),
    ("disregard your guidelines", "a persona or developer-mode override"),
    ("disregard your safety", "a persona or developer-mode override"),
    ("disable your safety", "a persona or developer-mode override"),
    ("bypass your restrictions", "a persona or developer-mode override"),
    ("bypass your safety", "a persona or developer-mode override"),
    ("you are now an unrestricted", "a persona or developer-mode override"),
    ("you are an unrestricted", "a persona or developer-mode override"),
    (
        "pretend you have no restrictions",
        "a persona or developer-mode override",
    ),
    ("pretend you have no rules", "a persona or developer-mode override"),
    ("from now on you are", "a persona or developer-mode override"),
    ("from now on, you are", "a persona or developer-mode override"),
    ("god mode enabled", "a persona or developer-mode override"),
    ("enable god mode", "a persona or developer-mode override"),
    ("sudo mode enabled", "a persona or developer-mode override"),
];

//! `SC040` dynamic-code-execution: code or a command line run from text the script did not
//! write plainly — downloaded (critical), decoded from a literal or at run time (critical),
//! built to hide what it is (char codes, reversal, fragments: high), read from a file or
//! otherwise computed (medium) — and API names built at run time to hide a dangerous call
//! (`require('child_'+'process')`, `globalThis['ev'+'al']`, `getattr(os, 'sys'+'tem')`: high).
//!
//! Fixtures: `code-exec-py-b64`, `code-exec-js-charcodes`, `code-exec-sh-rev`,
//! `fp-code-exec-build-tool`.

use crate::model::FindingSeverity;
use crate::rules;
use crate::scan::code::CodeHit;
use crate::scan::code::facts::{Ev, Facts, Lang};
use crate::scan::code::value::{Val, show, taint};

/// The rule over one file's facts.
pub(crate) fn check(facts: &Facts, out: &mut Vec<CodeHit>) {
    for e in &facts.events {
        match &e.kind {
            Ev::Exec { api, arg, lang } => {
                if let Some((severity, what)) = judge(arg, *lang, api) {
                    let folded = arg
                        .text()
                        .filter(|_| arg.deep_how().is_some())
                        .map(|t| format!(": folds to {}", show(&t)))
                        .unwrap_or_default();
                    out.push(CodeHit {
                        rule: &rules::SC040,
                        severity,
                        at: e.at,
                        reason: format!("{what} is run by `{api}`{folded}"),
                    });
                }
            }
            Ev::NameBuilt { kind, name, how } => out.push(CodeHit {
                rule: &rules::SC040,
                severity: FindingSeverity::High,
                at: e.at,
                reason: format!(
                    "the {kind} name `{name}` is built at run time ({how}), hiding what the code calls: folds to {}",
                    show(name)
                ),
            }),
            _ => {}
        }
    }
}

/// How dangerous running `arg` is, and what it is.
fn judge(arg: &Val, lang: Lang, api: &str) -> Option<(FindingSeverity, &'static str)> {
    let t = arg.deep_taint();
    // A download or a decode piped into a shell is SC011's and SC010's (on the folded text
    // too).
    if api.starts_with("| ") && t.has(taint::NET | taint::DECODED) {
        return None;
    }
    if t.has(taint::NET) {
        return Some((FindingSeverity::Critical, "downloaded text"));
    }
    if t.has(taint::ENCODED_LITERAL) {
        return Some((FindingSeverity::Critical, "an encoded payload, decoded,"));
    }
    if t.has(taint::DECODED) {
        return Some((FindingSeverity::Critical, "decoded text"));
    }
    if t.has(taint::OBFUSCATED) {
        return Some((FindingSeverity::High, "text built to hide what it says"));
    }
    // A shell command line assembled from constants is ordinary; code text is not.
    let code = lang != Lang::Shell || api == "eval";
    if t.has(taint::SECRET) {
        return Some((FindingSeverity::Medium, "text from a secret"));
    }
    if code && t.has(taint::FILE) {
        return Some((FindingSeverity::Medium, "code read from a file"));
    }
    if code && arg.deep_how().is_some() {
        return Some((FindingSeverity::Medium, "code built at run time"));
    }
    None
}

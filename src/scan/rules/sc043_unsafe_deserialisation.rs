//! `SC043` unsafe-deserialisation: a loader that can run code while it loads (`pickle`,
//! `marshal`, `dill`, `jsonpickle`, `yaml.load` without a safe loader, `torch.load`,
//! `node-serialize`, `eval` used to parse JSON) fed from an encoded literal (critical), the
//! network (high), or a file (medium). A cache loading the files it wrote itself is `low`.
//!
//! Fixtures: `deser-py-pickle-b64`, `deser-py-yaml-download`, `deser-js-node-serialize`,
//! `fp-pickle-cache`.

use crate::model::FindingSeverity;
use crate::rules;
use crate::scan::code::CodeHit;
use crate::scan::code::facts::{Ev, Facts};
use crate::scan::code::value::taint;

/// The rule over one file's facts.
pub(crate) fn check(facts: &Facts, out: &mut Vec<CodeHit>) {
    let written: Vec<String> = facts
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            Ev::Write { path, .. } => path.identity(),
            _ => None,
        })
        .collect();
    for e in &facts.events {
        let Ev::Deser { api, input } = &e.kind else { continue };
        let t = input.deep_taint();
        let (severity, from) = if t.has(taint::ENCODED_LITERAL) {
            (FindingSeverity::Critical, "an encoded literal in the file".to_owned())
        } else if t.has(taint::NET) {
            (FindingSeverity::High, "the network".to_owned())
        } else if t.has(taint::DECODED) {
            (FindingSeverity::High, "decoded data".to_owned())
        } else if t.has(taint::FILE) {
            match input.origin.as_ref().filter(|o| written.contains(o)) {
                Some(own) => (
                    FindingSeverity::Low,
                    format!("{own}, a file the script writes itself (a cache)"),
                ),
                None => (
                    FindingSeverity::Medium,
                    input
                        .origin
                        .clone()
                        .map_or_else(|| "a file".to_owned(), |o| format!("the file {o}")),
                ),
            }
        } else {
            continue;
        };
        out.push(CodeHit {
            rule: &rules::SC043,
            severity,
            at: e.at,
            reason: format!("`{api}` can run code while it loads, and loads data from {from}"),
        });
    }
}

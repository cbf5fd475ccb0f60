//! SARIF 2.1.0 logs (OASIS, `sarif-schema-2.1.0.json`) for code-scanning dashboards: the
//! envelope and locations shared by `check` and `scan`, and the log of `check`'s diagnostics.
//!
//! One run per log, tool `skillc`, `columnKind` `unicodeCodePoints` (skillc's columns count
//! characters). Every rule the command can report is in the driver, so `ruleIndex` is stable
//! for one skillc version.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::diag::Rule;
use crate::diag::{Diagnostic, Severity};

/// A relative path as a URI reference: unreserved characters and `/` kept, the rest
/// percent-encoded (UTF-8).
pub(crate) fn uri(path: &str) -> String {
    let mut s = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            s.push(char::from(b));
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// The log: one run of skillc with `rules` in its driver and `results`.
pub(crate) fn log(rules: Vec<Value>, results: Vec<Value>) -> Value {
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "skillc",
                "version": env!("CARGO_PKG_VERSION"),
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

/// SARIF level of a diagnostic severity.
fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

/// A region: start, and the exclusive end when the span is not empty.
fn region(start: crate::diag::Pos, end: crate::diag::Pos) -> Value {
    let mut r = json!({"startLine": start.line, "startColumn": start.column});
    if end.offset > start.offset {
        r["endLine"] = end.line.into();
        r["endColumn"] = end.column.into();
    }
    r
}

/// The reporting descriptor of a diagnostic rule; `fix` says how `check --fix` fixes it.
fn descriptor(r: &Rule, fix: Option<&str>) -> Value {
    let mut d = json!({
        "id": r.code,
        "name": r.name,
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": r.summary},
        "help": {"text": r.explanation, "markdown": r.explanation},
        "defaultConfiguration": {"level": level(r.diagnostic_severity())},
    });
    if let Some(how) = fix {
        d["properties"] = json!({"fixable": true, "fix": how});
    }
    d
}

/// The SARIF log of `skillc check`: every `SK` rule in the driver, one result per diagnostic
/// (its help, when there is one, on a second line of the message; related labels as
/// `relatedLocations`).
pub(crate) fn check_log<'a>(diagnostics: impl IntoIterator<Item = &'a Diagnostic>) -> Value {
    let rules: Vec<&Rule> = crate::rules::ALL
        .iter()
        .copied()
        .filter(|r| r.code.starts_with("SK"))
        .collect();
    let index: BTreeMap<&str, usize> = rules.iter().enumerate().map(|(i, r)| (r.code, i)).collect();
    let descriptors = rules
        .iter()
        .map(|r| descriptor(r, crate::fix::rule_fix(r.code).map(|f| f.how)))
        .collect();
    let results = diagnostics
        .into_iter()
        .map(|d| {
            let mut text = d.message.clone();
            if let Some(help) = &d.help {
                text.push_str("\nhelp: ");
                text.push_str(help);
            }
            let artifact = json!({"uri": uri(&d.file)});
            let mut result = json!({
                "ruleId": d.rule.code,
                "level": level(d.severity),
                "message": {"text": text},
                "locations": [{"physicalLocation": {
                    "artifactLocation": artifact,
                    "region": region(d.span.start, d.span.end),
                }}],
            });
            if let Some(i) = index.get(d.rule.code) {
                result["ruleIndex"] = (*i).into();
            }
            if !d.related.is_empty() {
                result["relatedLocations"] = d
                    .related
                    .iter()
                    .enumerate()
                    .map(|(i, l)| {
                        json!({
                            "id": i + 1,
                            "message": {"text": l.message},
                            "physicalLocation": {
                                "artifactLocation": {"uri": uri(&d.file)},
                                "region": region(l.span.start, l.span.end),
                            },
                        })
                    })
                    .collect();
            }
            result
        })
        .collect();
    log(descriptors, results)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_percent_encoded() {
        assert_eq!(uri("skills/a b/SKILL.md"), "skills/a%20b/SKILL.md");
        assert_eq!(uri("技能/SKILL.md"), "%E6%8A%80%E8%83%BD/SKILL.md");
    }
}

//! Validation of SARIF logs against the OASIS SARIF 2.1.0 JSON schema (errata 01, the
//! standard's final text), vendored as `tests/data/sarif-schema-2.1.0.json` (provenance in
//! `tests/data/README.md`) and checked with the `jsonschema` crate (draft-04, no network).
//!
//! Reusable: `crate::sarif::assert_valid(&log)` for any command's `--format sarif` output
//! (`skillc scan` here; `skillc check` too).

use std::sync::OnceLock;

use crate::common::manifest_dir;

fn validator() -> &'static jsonschema::Validator {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    V.get_or_init(|| {
        let path = manifest_dir().join("tests/data/sarif-schema-2.1.0.json");
        let schema: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).expect("the vendored SARIF schema")).expect("schema JSON");
        jsonschema::draft4::new(&schema).expect("the SARIF schema compiles")
    })
}

/// Every violation of the schema in `log`, as `path: message` (empty when valid).
pub fn errors(log: &serde_json::Value) -> Vec<String> {
    validator()
        .iter_errors(log)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// Fails with every violation when `log` is not a valid SARIF 2.1.0 log.
pub fn assert_valid(log: &serde_json::Value) {
    let errors = errors(log);
    assert!(errors.is_empty(), "not a valid SARIF 2.1.0 log:\n{}", errors.join("\n"));
}

#[test]
fn the_validator_rejects_what_the_schema_forbids() {
    let ok = serde_json::json!({
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "skillc"}}, "results": []}],
    });
    assert_valid(&ok);
    for bad in [
        serde_json::json!({"version": "2.0.0", "runs": []}),
        serde_json::json!({"version": "2.1.0"}),
        serde_json::json!({"version": "2.1.0", "runs": [{"tool": {}}]}),
        serde_json::json!({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}},
            "results": [{"message": {"text": "m"}, "level": "fatal"}]}]}),
        serde_json::json!({"version": "2.1.0", "runs": [], "surprise": 1}),
    ] {
        assert!(!errors(&bad).is_empty(), "accepted {bad}");
    }
}

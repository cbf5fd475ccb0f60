//! docs/json.md and these types in step: for each documented schema, every field the types
//! write is named in its section of docs/json.md, and every field the section's tables name
//! is one the types write. A field added without its documentation, or documentation left
//! for a field that is gone, fails here.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use super::*;
use crate::diag::{Diagnostic, Pos, Span};
use crate::migrate::{FieldReport, FieldStatus, Outcome as MigrationOutcome, Vendor};
use crate::model::SkillStatus;
use crate::scan::Finding;

/// The sections of docs/json.md by `## ` heading: (heading, text).
fn sections() -> Vec<(String, String)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/json.md");
    let text = std::fs::read_to_string(path).expect("docs/json.md");
    text.split("\n## ")
        .skip(1)
        .map(|s| {
            let (heading, body) = s.split_once('\n').unwrap_or((s, ""));
            (heading.to_owned(), body.to_owned())
        })
        .collect()
}

fn section(fragment: &str) -> String {
    let found: Vec<String> = sections()
        .into_iter()
        .filter(|(h, _)| h.contains(fragment))
        .map(|(_, b)| b)
        .collect();
    assert_eq!(found.len(), 1, "one section of docs/json.md is headed `{fragment}`");
    let body = found.into_iter().next().unwrap_or_default();
    // A subsection with a schema of its own (the scan baseline) is another document.
    body.split("\n### ")
        .enumerate()
        .take_while(|(i, part)| *i == 0 || !part.lines().next().unwrap_or_default().contains("(schema `"))
        .map(|(_, part)| part)
        .collect::<Vec<_>>()
        .join("\n### ")
}

/// The identifiers of a text (`skills[].name` gives `skills` and `name`).
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty() && !w.starts_with(|c: char| c.is_ascii_digit()))
        .map(str::to_owned)
}

/// Every identifier written in backticks in the section: what it documents.
fn documented(body: &str) -> BTreeSet<String> {
    body.split('`').skip(1).step_by(2).flat_map(words).collect()
}

/// The field names of the section's tables of fields (headed `| field |` or `| key |`): the
/// backticked names of each row's first cell.
fn table_fields(body: &str) -> BTreeSet<String> {
    let mut fields = BTreeSet::new();
    let mut in_fields = false;
    for line in body.lines() {
        if !line.starts_with('|') {
            in_fields = false;
            continue;
        }
        let first = line
            .trim_start_matches('|')
            .split('|')
            .next()
            .unwrap_or_default()
            .trim();
        if first == "field" || first == "key" {
            in_fields = true;
            continue;
        }
        if in_fields && first.starts_with('`') {
            fields.extend(first.split('`').skip(1).step_by(2).flat_map(words));
        }
    }
    fields
}

/// Every object key of a JSON value, at any depth.
fn keys(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                out.insert(k.clone());
                keys(v, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|v| keys(v, out)),
        _ => {}
    }
}

fn keys_of<T: Serialize>(values: &[T]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for v in values {
        keys(&serde_json::to_value(v).expect("serializes"), &mut out);
    }
    out
}

/// Checks a section against the keys its types write (`except`: keys documented elsewhere).
fn check(fragment: &str, written: BTreeSet<String>, except: &BTreeSet<String>) {
    let body = section(fragment);
    let documented = documented(&body);
    let undocumented: Vec<&String> = written
        .iter()
        .filter(|k| !documented.contains(*k) && !except.contains(*k))
        .collect();
    assert!(
        undocumented.is_empty(),
        "docs/json.md, `{fragment}`: fields written but not documented: {undocumented:?}"
    );
    let stale: Vec<String> = table_fields(&body)
        .into_iter()
        .filter(|f| !written.contains(f) && !except.contains(f))
        .collect();
    assert!(
        stale.is_empty(),
        "docs/json.md, `{fragment}`: fields documented but not written: {stale:?}"
    );
}

fn diagnostic() -> Diagnostic {
    Diagnostic::new(
        &crate::rules::SK001,
        "skills/a",
        Span::at(Pos::START),
        "missing SKILL.md",
    )
    .help("add one")
}

fn finding() -> Finding {
    Finding {
        rule: &crate::rules::SC011,
        severity: crate::model::FindingSeverity::High,
        file: "skills/a/SKILL.md".into(),
        line: 1,
        column: 1,
        reason: "downloads and runs".into(),
        context: "prose".into(),
    }
}

#[test]
fn check_report() {
    let d = diagnostic();
    let report = check::Report {
        schema: check::SCHEMA,
        mode: "default",
        summary: check::Summary::default(),
        skills: vec![check::Entry {
            path: "skills/a",
            name: Some("a"),
            status: check::Status::Errors,
            diagnostics: vec![check::Diag {
                diagnostic: &d,
                fixable: false,
            }],
        }],
    };
    check("skillc check --format json", keys_of(&[report]), &BTreeSet::new());
}

#[test]
fn plan_report() {
    let plan = |outcome| plan::Plan {
        subcommand: "files list".into(),
        words: vec!["files".into(), "list".into()],
        aliases: vec![vec!["files".into(), "ls".into()]],
        program: plan::Program::Script {
            path: "scripts/x.py".into(),
            interpreter: "python3".into(),
        },
        source_section: "Usage".into(),
        line: 3,
        invocations: 1,
        args: vec![plan::Arg {
            name: "max".into(),
            ty: "integer",
            required: false,
            flag: Some("--max".into()),
            position: None,
            description: None,
            default: None,
        }],
        status: "translated",
        name: None,
        outcome,
        proposal: Some(plan::Proposal {
            name: "list_files_a".into(),
            evidence: vec!["files: object".into()],
        }),
        explain: Some(vec![plan::Step {
            word: "files".into(),
            meaning: "object".into(),
        }]),
    };
    let report = plan::Report {
        schema: plan::SCHEMA,
        summary: plan::Summary {
            skills: 1,
            invalid: 0,
            with_subcommands: 1,
            instruction_only: 0,
            plans: 2,
            translated: 1,
            rejected: 1,
            rejected_by_reason: Default::default(),
        },
        skills: vec![plan::Skill {
            path: "skills/a".into(),
            name: None,
            provider: None,
            object: Some(plan::SkillObject {
                object: "files".into(),
                evidence: "name `a`".into(),
            }),
            instruction_only: false,
            error: None,
            plans: vec![
                plan(plan::Outcome::Translated {
                    action: "list".into(),
                    object: "files".into(),
                    qualifiers: vec![],
                }),
                plan(plan::Outcome::Rejected {
                    code: "TR001",
                    reason: "no action".into(),
                }),
            ],
        }],
    };
    // A program's other shapes: `kind` and their fields.
    let programs = [
        plan::Program::Binary { name: "gog".into() },
        plan::Program::Tool {
            module: "m".into(),
            function: "f".into(),
        },
    ];
    let mut written = keys_of(&[report]);
    written.extend(keys_of(&programs));
    check("skillc plan --format json", written, &BTreeSet::new());
}

#[test]
fn build_report() {
    let d = diagnostic();
    let findings = [finding()];
    let report = report::Report {
        schema: report::SCHEMA,
        skillc: "0.1.0",
        reproducible: true,
        inputs: report::Inputs {
            skills: 1,
            vocabulary: "v",
            vocabulary_sha256: "0",
        },
        summary: report::Totals::default(),
        admission: report::Admission {
            levels: Default::default(),
            skipped: vec![],
        },
        skills: "",
    };
    let skill = report::Skill {
        name: Some("a"),
        path: "skills/a",
        status: SkillStatus::Ok,
        reason: None,
        diagnostics: vec![&d],
        findings: &findings,
        plans: vec![report::Plan {
            subcommand: "files list".into(),
            name: None,
            status: "admitted",
            level: None,
            code: None,
            reason: None,
        }],
    };
    let mut written = keys_of(&[report]);
    written.extend(keys_of(&[skill]));
    // Diagnostics and findings are documented with their own schemas.
    let elsewhere: BTreeSet<String> = keys_of(&[diagnostic()]).into_iter().chain(keys_of(&findings)).collect();
    check("skillc build` report", written, &elsewhere);
}

#[test]
fn scan_report() {
    let f = finding();
    let report = scan::Report {
        schema: scan::SCHEMA,
        fail_on: "high",
        summary: scan::Summary {
            skills: 1,
            failed: 1,
            findings: 1,
            by_severity: OrderedCounts::default(),
            skills_by_highest: OrderedCounts::default(),
            known: Some(0),
            baseline_unmatched: Some(0),
        },
        skills: vec![scan::Skill {
            path: "skills/a",
            name: Some("a"),
            highest: Some("high"),
            failed: true,
            findings: vec![scan::Listed {
                finding: &f,
                known: Some(false),
            }],
        }],
    };
    check("skillc scan --format json", keys_of(&[report]), &BTreeSet::new());
}

#[test]
fn verifier_request() {
    let contract = serde_json::json!({});
    let request = verifier::Request {
        schema: verifier::SCHEMA,
        executor: "list_files_a".into(),
        skill: "a",
        action: "list",
        object: "files",
        qualifiers: &[],
        subcommand: "files list".into(),
        wording: verifier::Wording {
            description: None,
            section: "Usage",
        },
        manifest: Some(""),
        contract: Some(&contract),
        wrapper: Some(""),
        program: verifier::Program {
            kind: "script",
            path: None,
            name: "scripts/x.py".into(),
            text: None,
        },
    };
    check("External L6 verifier", keys_of(&[request]), &BTreeSet::new());
}

#[test]
fn build_and_watch_events() {
    use events::{Event, Finished};
    let build = [
        Event::BuildStarted { roots: 1 },
        Event::Stage {
            stage: "analyze",
            total: 1,
        },
        Event::Executor {
            name: "list_files_a",
            change: "added",
        },
        Event::SkillRejected {
            path: "skills/a",
            message: "SK006: …",
            at: None,
        },
        Event::BuildFinished(Finished::default()),
    ];
    check("Build events", keys_of(&build), &BTreeSet::new());
    let changed = ["skills/a".to_owned()];
    let watch = [
        Event::RebuildFinished {
            finished: Finished::default(),
            changed: &changed,
            latency_ms: Some(1.0),
            rejected_skills: vec![],
        },
        Event::SkillRejected {
            path: "skills/a",
            message: "SK006: …",
            at: Some("skills/a/SKILL.md:2:1"),
        },
        Event::Watching { out: "out".into() },
        Event::RebuildFailed { message: "…" },
        Event::WatchStopped,
    ];
    // `rebuild-finished` holds the fields of `build-finished`, documented above it.
    let finished = keys_of(&[Finished::default()]);
    check("Watch events", keys_of(&watch), &finished);
    // The example of the build events is what the types write.
    let example = section("Build events");
    for line in example.lines().filter(|l| l.starts_with("{\"reason\"")) {
        let v: Value = serde_json::from_str(line).expect("the example is JSON");
        let mut k = BTreeSet::new();
        keys(&v, &mut k);
        let written = keys_of(&build);
        assert!(
            k.is_subset(&written),
            "{line}: {:?}",
            k.difference(&written).collect::<Vec<_>>()
        );
    }
}

#[test]
fn verify_report() {
    let report = verify::Report {
        schema: verify::SCHEMA,
        ok: false,
        catalog_version: Some(1),
        expires: Some("2027-01-01T00:00:00Z"),
        key_id: Some("0"),
        executors: 0,
        trusted: Some("pinned"),
        failures: vec![verify::Failure {
            kind: "missing",
            message: "missing file: catalog.toml".into(),
        }],
    };
    check("skillc verify --format json", keys_of(&[report]), &BTreeSet::new());
}

#[test]
fn migrate_report() {
    let fields = [FieldReport {
        field: "metadata.openclaw.requires.bins".into(),
        status: FieldStatus::Blocked,
        target: Some("metadata.gaia.permissions".into()),
        reason: Some("tier-ceiling:shell".into()),
        message: "…".into(),
        line: 1,
        column: 1,
        code: Some("MG001"),
        span: Span::default(),
    }];
    let d = [diagnostic()];
    let summary = migrate::Summary::default();
    let report = migrate::Report {
        schema: migrate::SCHEMA,
        mode: "dry-run",
        summary: &summary,
        skills: vec![migrate::Skill {
            path: "skills/a",
            outcome: MigrationOutcome::Blocked,
            from: &[Vendor::OpenClaw],
            written: None,
            blocked_reasons: vec![],
            failure: None,
            fields: &fields,
            diagnostics: &d,
        }],
    };
    let elsewhere = keys_of(&[diagnostic()]);
    check("skillc migrate --format json", keys_of(&[report]), &elsewhere);
}

#[test]
fn import_report() {
    // The entries are the import engine's outcomes, which serialize themselves.
    let outcomes = [crate::import::Outcome {
        source: "./a".into(),
        status: crate::import::Status::Imported,
        name: None,
        path: None,
        resolved: None,
        sha256: None,
        cache: None,
        code: None,
        reason: None,
        notes: vec![crate::import::Note {
            code: "IM007",
            message: "…".into(),
        }],
        diagnostics: vec![],
    }];
    let report = import::Report {
        schema: import::SCHEMA,
        into: "skills".into(),
        locked: false,
        summary: import::Summary {
            imported: 1,
            skipped: 0,
            failed: 0,
        },
        sources: &outcomes,
    };
    let elsewhere = keys_of(&[diagnostic()]);
    check("skillc import --format json", keys_of(&[report]), &elsewhere);
}

#[test]
fn explain_document() {
    let doc = reference::Explain {
        schema: reference::EXPLAIN_SCHEMA,
        rules: vec![reference::Rule {
            code: "SK006",
            name: "invalid-yaml",
            kind: "diagnostic",
            severity: "error".into(),
            summary: "…",
            fixable: true,
            fix: Some("…"),
            explanation: Some("…"),
        }],
    };
    check("skillc explain --format json", keys_of(&[doc]), &BTreeSet::new());
}

#[test]
fn vocabulary_document() {
    let words = vec!["get".to_owned()];
    let entry = |name| reference::Entry {
        name,
        en: name,
        it: name,
        synonyms: &words,
    };
    let doc = reference::Vocabulary {
        schema: reference::VOCABULARY_SCHEMA,
        path: "vocabulary.toml",
        actions: vec![reference::Action {
            entry: entry("read"),
            class: "safe",
            object: Some("messages"),
        }],
        objects: vec![reference::Object {
            entry: entry("events"),
            domain: Some("calendar"),
        }],
        qualifiers: vec![reference::Qualifier {
            entry: entry("draft"),
            class: Some("state"),
            objects: &words,
        }],
        domains: vec![reference::Domain {
            entry: entry("mail"),
            object: Some("messages"),
            meanings: vec![reference::Meaning {
                word: "pull",
                action: None,
                object: Some("pulls"),
                qualifier: None,
            }],
        }],
        rules: vec![reference::ContextRule {
            line: 3,
            domain: Some("drive"),
            action: "get",
            then_action: "download",
            then_object: "files",
            then_qualifiers: &words,
        }],
    };
    check("skillc vocabulary --format json", keys_of(&[doc]), &BTreeSet::new());
}

#[test]
fn the_checks_catch_a_field_out_of_step() {
    let body = "| field | type | meaning |\n| --- | --- | --- |\n| `schema` | string | |\n| `gone` | string | |\n\n\
                | `reason` | fields |\n| --- | --- |\n| `build-started` | `roots` |\n";
    let written: BTreeSet<String> = ["schema", "added"].into_iter().map(str::to_owned).collect();
    let documented = documented(body);
    assert!(!documented.contains("added"));
    assert_eq!(
        table_fields(body).difference(&written).collect::<Vec<_>>(),
        [&"gone".to_owned()]
    );
}

/// Events are one line each, `reason` first, the fields in their documented order.
#[test]
fn events_are_written_reason_first() {
    let finished = events::Finished {
        up_to_date: true,
        success: true,
        duration_ms: 41.5,
        ..events::Finished::default()
    };
    let changed = ["pipeline.toml".to_owned()];
    let line = serde_json::to_string(&events::Event::RebuildFinished {
        finished,
        changed: &changed,
        latency_ms: None,
        rejected_skills: vec!["skills/a"],
    })
    .expect("serializes");
    assert_eq!(
        line,
        "{\"reason\":\"rebuild-finished\",\"up_to_date\":true,\"success\":true,\"skills\":0,\"skills_rejected\":0,\
         \"plans\":0,\"admitted\":0,\"rejected\":0,\"executors\":0,\"executors_added\":0,\"executors_updated\":0,\
         \"executors_removed\":0,\"files_written\":0,\"files_removed\":0,\"manifests_signed\":0,\"duration_ms\":41.5,\
         \"changed\":[\"pipeline.toml\"],\"latency_ms\":null,\"rejected_skills\":[\"skills/a\"]}"
    );
    let stopped = serde_json::to_string(&events::Event::WatchStopped).expect("serializes");
    assert_eq!(stopped, "{\"reason\":\"watch-stopped\"}");
}

#[test]
fn menu_document() {
    let doc = menu::MenuDoc {
        menu: vec![menu::MenuEntry {
            slug: "a".into(),
            title: "a".into(),
            description: "Does a.".into(),
            pass: "trigger",
            score: 0.5,
            triggers: Some(vec!["a".into()]),
            matched: Some(vec![menu::MatchedFeature {
                feature: "w:a".into(),
                contribution: 0.5,
            }]),
        }],
        tool: None,
        embedder: "lexical/2".into(),
        recipe: "doc/1".into(),
        threshold: Some(0.16),
        warnings: vec![],
    };
    check("skillc menu --format json", keys_of(&[doc]), &BTreeSet::new());
}

#[test]
fn menu_calibration_document() {
    let f = menu::CalibrationFigures {
        tau: 0.16,
        recall_at_3_by_kind: [("direct".to_owned(), 1.0)].into(),
        turns: (2, 1),
        ..Default::default()
    };
    let split = || menu::CalibrationSplit {
        all: f.clone(),
        tuning: f.clone(),
        held_out: f.clone(),
    };
    let doc = menu::CalibrationDoc {
        schema: "skillc.menu-calibration/1",
        embedder: "lexical/2".into(),
        recipe: "doc/1".into(),
        size: 3,
        battery: "b.toml".into(),
        max_false_offers: 0.15,
        rows: vec![f.clone()],
        tau: Some(0.16),
        at_tau: Some(split()),
        ranking: split(),
        recorded: None,
    };
    // `direct`: a key of `recall_at_3_by_kind`, documented as a kind.
    check("skillc menu calibrate --format json", keys_of(&[doc]), &BTreeSet::new());
}

#[test]
fn search_document() {
    let doc = search::SearchDoc::<Value> {
        schema: "skillc.search/1",
        catalog: search::CatalogRef {
            version: 1,
            expires: "2030-01-01T00:00:00Z".into(),
            key_id: "00".into(),
            verification: "verified".into(),
        },
        query: "q".into(),
        embedder: "lexical/2".into(),
        count: 0,
        results: vec![],
    };
    // The catalog object is documented with `skillc.list/1`.
    let except = ["version", "expires", "key_id", "verification"]
        .map(str::to_owned)
        .into();
    check("skillc search --format json", keys_of(&[doc]), &except);
}

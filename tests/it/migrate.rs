//! `skillc migrate`: snapshots of the migrated frontmatter and the review report for fixtures
//! and real corpus skills, the CLI's write modes, and the whole Hermes/OpenClaw part of the
//! corpus migrated in a temporary copy (no panic, every result passes `skillc check`, the body
//! is unchanged, no frontmatter value is lost, totals as recorded).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::common::{copy_dir, corpus, insta_settings, manifest_dir, skillc};
use skillc::{
    Analysis, FromFormat, Migration, MigrationOutcome as Outcome, Mode, ValidationContext as Context, analyze,
};

/// The migrated frontmatter (up to the closing fence) and the report, as one text.
fn render(m: &Migration) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "outcome: {:?}, from: {:?}", m.outcome, m.vendors);
    if let Some(out) = &m.output {
        let end = out[3..].find("\n---").map(|i| i + 3 + 4).unwrap_or(out.len());
        s.push_str(&out[..end]);
        s.push('\n');
    }
    for f in &m.fields {
        let target = f.target.as_ref().map(|t| format!(" → {t}")).unwrap_or_default();
        let reason = f.reason.as_ref().map(|r| format!(" [{r}]")).unwrap_or_default();
        let _ = writeln!(
            s,
            "{:<12} {}{target}{reason} @{}:{}: {}",
            f.status.label(),
            f.field,
            f.line,
            f.column,
            f.message
        );
    }
    for d in &m.diagnostics {
        let _ = writeln!(s, "{} {}: {}", d.rule.code, d.severity, d.message);
    }
    s
}

fn migrate_dir(dir: &Path, display: &str) -> (String, Migration) {
    let text = std::fs::read_to_string(dir.join("SKILL.md")).expect("readable SKILL.md");
    let name = dir.file_name().expect("named").to_string_lossy().into_owned();
    let m = skillc::migrate(&format!("{display}/SKILL.md"), &name, &text, FromFormat::Auto);
    (text, m)
}

/// The body (everything after the closing fence line) of a SKILL.md.
fn body(text: &str) -> &str {
    let ctx = Context {
        dir_name: "x",
        mode: Mode::Default,
    };
    let body = analyze("SKILL.md", text.as_bytes(), &ctx).body.expect("a frontmatter");
    &text[body]
}

fn assert_passes_check(dir_name: &str, text: &str) {
    let a = analyze(
        "SKILL.md",
        text.as_bytes(),
        &Context {
            dir_name,
            mode: Mode::Default,
        },
    );
    let errors: Vec<String> = a
        .diagnostics
        .iter()
        .filter(|d| d.severity == skillc::Severity::Error)
        .map(|d| format!("{}: {}", d.rule.code, d.message))
        .collect();
    assert!(errors.is_empty(), "{dir_name}: {errors:?}\n{text}");
}

#[test]
fn fixtures_migrate_as_recorded() {
    for case in ["hermes-all-fields", "openclaw-all-fields"] {
        let dir = manifest_dir().join("tests/fixtures/migrate").join(case);
        let (text, m) = migrate_dir(&dir, case);
        let out = m.output.as_deref().expect("migrated");
        assert_eq!(body(out), body(&text), "the body is kept byte for byte");
        assert_passes_check(case, out);
        insta_settings().bind(|| insta::assert_snapshot!(format!("migrate_{case}"), render(&m)));
    }
}

#[test]
fn migration_is_idempotent_and_keeps_credentials_readable() {
    let dir = manifest_dir().join("tests/fixtures/migrate/hermes-all-fields");
    let (_, m) = migrate_dir(&dir, "hermes-all-fields");
    let once = m.output.expect("migrated");
    let twice = skillc::migrate("SKILL.md", "hermes-all-fields", &once, FromFormat::Auto);
    assert_eq!(
        twice.output.as_deref(),
        Some(once.as_str()),
        "a second migration changes nothing"
    );
    // What skillc reads for the build survives the move under `metadata.hermes`.
    let ctx = Context {
        dir_name: "hermes-all-fields",
        mode: Mode::Default,
    };
    let before = analyze(
        "SKILL.md",
        &std::fs::read(dir.join("SKILL.md")).expect("readable"),
        &ctx,
    );
    let after = analyze("SKILL.md", once.as_bytes(), &ctx);
    let bindings = |a: &Analysis| {
        let mut v: Vec<String> = a.model.credentials.iter().map(|c| c.binding.clone()).collect();
        v.sort();
        v.dedup();
        v
    };
    let after_bindings = bindings(&after);
    for b in bindings(&before) {
        assert!(after_bindings.contains(&b), "{b} is no longer read after migration");
    }
    assert!(
        after_bindings.contains(&"DEMO_SECRET".to_owned()),
        "setup secrets become env_vars"
    );
    assert_eq!(after.model.bins, before.model.bins);
    assert_eq!(after.model.platforms, before.model.platforms);
}

#[test]
fn from_selects_the_vendor_and_unrelated_skills_are_skipped() {
    let dir = manifest_dir().join("tests/fixtures/migrate/openclaw-all-fields");
    let text = std::fs::read_to_string(dir.join("SKILL.md")).expect("readable");
    let m = skillc::migrate("SKILL.md", "openclaw-all-fields", &text, FromFormat::Hermes);
    assert_eq!(m.outcome, Outcome::Skipped);
    assert_eq!(m.output, None);
    assert_eq!(
        m.diagnostics.iter().map(|d| d.rule.code).collect::<Vec<_>>(),
        vec!["MG004"]
    );
    let m = skillc::migrate("SKILL.md", "other-name", &text, FromFormat::OpenClaw);
    assert_eq!(
        m.outcome,
        Outcome::Failed,
        "a name that differs from the folder fails check"
    );
    assert_eq!(m.failure, Some("fails-check"));
    assert!(m.diagnostics.iter().any(|d| d.rule.code == "SK027"));
}

/// Corpus skills: the two the issue names, and four that cover the other mappings.
const CORPUS_CASES: &[(&str, &str)] = &[
    (
        "google-workspace",
        "NousResearch__hermes-agent/skills/productivity/google-workspace",
    ),
    ("gog", "openclaw__openclaw/skills/gog"),
    (
        "fitness-nutrition",
        "NousResearch__hermes-agent/optional-skills/health/fitness-nutrition",
    ),
    (
        "1password",
        "NousResearch__hermes-agent/optional-skills/security/1password",
    ),
    ("nano-pdf", "openclaw__openclaw/skills/nano-pdf"),
    ("sherpa-onnx-tts", "openclaw__openclaw/skills/sherpa-onnx-tts"),
];

#[test]
fn corpus_skills_migrate_as_recorded() {
    let Some(corpus) = corpus() else { return };
    for (name, rel) in CORPUS_CASES {
        let dir = corpus.join(rel);
        let (text, m) = migrate_dir(&dir, name);
        let out = m.output.as_deref().unwrap_or_else(|| panic!("{name}: {}", render(&m)));
        assert_eq!(body(out), body(&text), "{name}: the body is kept byte for byte");
        assert_passes_check(name, out);
        insta_settings().bind(|| insta::assert_snapshot!(format!("migrate_corpus_{name}"), render(&m)));
    }
}

/// Every scalar of a frontmatter (keys excluded), for the losslessness check.
fn scalars(text: &str, dir_name: &str) -> Vec<String> {
    let a = analyze(
        "SKILL.md",
        text.as_bytes(),
        &Context {
            dir_name,
            mode: Mode::Default,
        },
    );
    let mut v = Vec::new();
    if let Some(root) = &a.frontmatter {
        root.for_each_scalar(&mut |s, _| v.push(s.to_owned()));
    }
    v.sort();
    v
}

/// Whether a corpus SKILL.md is a Hermes or OpenClaw skill: by its namespaces when the
/// frontmatter loads, else by the words of its first lines (so that unreadable vendor skills
/// are counted, as failures).
fn is_vendor_skill(text: &str) -> bool {
    if !skillc::vendor_formats(text).is_empty() {
        return true;
    }
    let ctx = Context {
        dir_name: "x",
        mode: Mode::Default,
    };
    let loads = analyze("SKILL.md", text.as_bytes(), &ctx).frontmatter.is_some();
    let head: String = text.lines().take(60).collect::<Vec<_>>().join("\n");
    !loads
        && [
            "openclaw",
            "clawdbot",
            "clawdis",
            "moltbot",
            "hermes:",
            "required_environment_variables:",
            "prerequisites:",
        ]
        .iter()
        .any(|w| head.contains(w))
}

#[test]
fn every_hermes_and_openclaw_corpus_skill_migrates_or_says_why() {
    let Some(corpus) = corpus() else { return };
    // The vendor skills, copied into `<tmp>/skills/` under their corpus paths.
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("skills");
    let mut originals: BTreeMap<String, (PathBuf, String)> = BTreeMap::new();
    for e in walkdir::WalkDir::new(&corpus).follow_links(false).sort_by_file_name() {
        let e = e.expect("walkable");
        if e.file_name() != "SKILL.md" {
            continue;
        }
        let dir = e.path().parent().expect("a folder");
        let Ok(text) = std::fs::read(e.path()) else { continue };
        let text = String::from_utf8_lossy(&text).into_owned();
        if !is_vendor_skill(&text) {
            continue;
        }
        let rel = dir
            .strip_prefix(&corpus)
            .expect("inside")
            .to_string_lossy()
            .replace('\\', "/");
        copy_dir(dir, &root.join(&rel));
        originals.insert(format!("skills/{rel}"), (root.join(&rel), text));
    }
    assert!(originals.len() > 500, "only {} vendor skills found", originals.len());

    let run = skillc(tmp.path(), ["migrate", "skills", "--write", "--format", "json"]);
    assert!(matches!(run.code, Some(0 | 1)), "exit {:?}\n{}", run.code, run.stderr);
    let report = run.json();
    let skills = report["skills"].as_array().expect("skills");

    let mut by_outcome: BTreeMap<String, usize> = BTreeMap::new();
    let mut blocked: BTreeMap<String, usize> = BTreeMap::new();
    let mut failed: BTreeMap<String, usize> = BTreeMap::new();
    let mut checked = 0;
    for s in skills {
        let path = s["path"].as_str().expect("path");
        let outcome = s["outcome"].as_str().expect("outcome").to_owned();
        *by_outcome.entry(outcome.clone()).or_default() += 1;
        match outcome.as_str() {
            "migrated" | "blocked" => {
                assert!(s["written"].is_string(), "{path} was not written");
                let (dir, before) = &originals[path];
                let after = std::fs::read_to_string(dir.join("SKILL.md")).expect("written");
                assert_eq!(body(&after), body(before), "{path}: the body is kept byte for byte");
                let name = dir.file_name().expect("named").to_string_lossy().into_owned();
                // Lossless: every value of the original frontmatter is still there.
                let kept = scalars(&after, &name);
                for v in scalars(before, &name) {
                    assert!(kept.binary_search(&v).is_ok(), "{path}: the value {v:?} was lost");
                }
                // A second migration changes nothing.
                let again = skillc::migrate("SKILL.md", &name, &after, FromFormat::Auto);
                assert_eq!(
                    again.output.as_deref(),
                    Some(after.as_str()),
                    "{path}: migrating twice differs"
                );
                checked += 1;
            }
            "failed" => {
                assert!(s["written"].is_null(), "{path}: a failed skill is not written");
                let reason = s["failure"].as_str().expect("a failure reason");
                assert_ne!(reason, "bug", "{path}: {}", s["diagnostics"]);
                *failed.entry(reason.to_owned()).or_default() += 1;
            }
            _ => {}
        }
        for r in s["blocked_reasons"].as_array().expect("reasons") {
            if outcome == "blocked" {
                *blocked.entry(r.as_str().expect("a reason").to_owned()).or_default() += 1;
            }
        }
    }
    // Every vendor skill is reported once (plus non-vendor skills nested in a copied folder,
    // which have nothing to migrate).
    let reported: Vec<&str> = skills.iter().filter_map(|s| s["path"].as_str()).collect();
    for p in originals.keys() {
        assert_eq!(
            reported.iter().filter(|r| *r == p).count(),
            1,
            "{p} is not reported once"
        );
    }
    for s in skills {
        if !originals.contains_key(s["path"].as_str().unwrap_or_default()) {
            assert_eq!(s["outcome"], "skipped", "{}", s["path"]);
        }
    }

    // Every written result passes `skillc check` (the real binary, default rules).
    let check = skillc(tmp.path(), ["check", "--format", "json", "skills"]);
    let verdicts: BTreeMap<String, String> = check.json()["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap_or_default().to_owned(),
                s["status"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    for s in skills {
        if s["written"].is_string() {
            let path = s["path"].as_str().unwrap_or_default();
            let verdict = verdicts
                .get(path)
                .unwrap_or_else(|| panic!("{path} is missing from the check report"));
            assert_ne!(verdict, "errors", "{path} fails check after migration");
        }
    }

    // The totals, as recorded in README.md.
    let mut table = String::from("| outcome | skills |\n| --- | --- |\n");
    let total: usize = by_outcome.values().sum();
    for (k, v) in &by_outcome {
        let _ = writeln!(table, "| {k} | {v} |");
    }
    let _ = writeln!(table, "| **total** | {total} |");
    table.push_str("\n| blocked by reason | skills |\n| --- | --- |\n");
    for (k, v) in &blocked {
        let _ = writeln!(table, "| {k} | {v} |");
    }
    table.push_str("\n| not migrated, by reason | skills |\n| --- | --- |\n");
    for (k, v) in &failed {
        let _ = writeln!(table, "| {k} | {v} |");
    }
    assert!(checked > 300, "only {checked} skills migrated");
    insta_settings().bind(|| insta::assert_snapshot!("migrate_corpus_totals", table));
}

#[test]
fn cli_dry_run_writes_nothing_and_write_rewrites_in_place() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let src = manifest_dir().join("tests/fixtures/migrate");
    copy_dir(&src, tmp.path());
    let before = std::fs::read(tmp.path().join("hermes-all-fields/SKILL.md")).expect("readable");

    let dry = skillc(tmp.path(), ["migrate", "hermes-all-fields", "openclaw-all-fields"]);
    assert_eq!(dry.code, Some(1), "blockers make the exit status 1\n{}", dry.stdout);
    assert!(dry.stdout.contains("dry run: nothing written"), "{}", dry.stdout);
    assert_eq!(
        std::fs::read(tmp.path().join("hermes-all-fields/SKILL.md")).expect("readable"),
        before
    );

    let out = skillc(tmp.path(), ["migrate", ".", "--out", "migrated", "--format", "json"]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert_eq!(out.json()["summary"]["written"], 2);
    let copy = tmp.path().join("migrated/hermes-all-fields/SKILL.md");
    assert!(
        std::fs::read_to_string(&copy)
            .expect("copied")
            .contains("security_tier: experimental")
    );
    assert_eq!(
        std::fs::read(tmp.path().join("hermes-all-fields/SKILL.md")).expect("readable"),
        before
    );
    // `--out` never overwrites.
    let again = skillc(
        tmp.path(),
        ["migrate", "hermes-all-fields", "--out", "migrated", "--format", "json"],
    );
    assert_eq!(again.json()["summary"]["written"], 0, "{}", again.stderr);
    assert!(again.stderr.contains("is not written"), "{}", again.stderr);

    let write = skillc(tmp.path(), ["migrate", "hermes-all-fields", "--write"]);
    assert_eq!(write.code, Some(1));
    let after = std::fs::read_to_string(tmp.path().join("hermes-all-fields/SKILL.md")).expect("readable");
    assert_eq!(
        after,
        std::fs::read_to_string(&copy).expect("copied"),
        "--write and --out agree"
    );
    let check = skillc(tmp.path(), ["check", "hermes-all-fields"]);
    assert_eq!(check.code, Some(0), "{}", check.stdout);

    let usage = skillc(tmp.path(), ["migrate", "hermes-all-fields", "--write", "--out", "x"]);
    assert_eq!(usage.code, Some(2), "--write and --out conflict");
}

#[test]
fn cli_human_report() {
    let dir = manifest_dir().join("tests/fixtures/migrate");
    let run = skillc(&dir, ["migrate", "openclaw-all-fields", "hermes-all-fields"]);
    assert_eq!(run.code, Some(1));
    insta_settings().bind(|| insta::assert_snapshot!("migrate_cli_human_report", run.stdout));
}

#[test]
fn an_out_copy_that_exists_is_never_overwritten_and_fails_the_run() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let skill = tmp.path().join("tagged");
    std::fs::create_dir_all(&skill).expect("mkdir");
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: tagged\ndescription: A Hermes skill with tags only. Use in tests.\nmetadata:\n  hermes:\n    tags: [a, b]\n---\n# Tagged\n",
    )
    .expect("write");
    let first = skillc(tmp.path(), ["migrate", "tagged", "--out", "migrated"]);
    assert_eq!(
        first.code,
        Some(0),
        "nothing blocks this one: {}{}",
        first.stdout,
        first.stderr
    );
    let copy = tmp.path().join("migrated/tagged/SKILL.md");
    std::fs::write(&copy, "mine").expect("write");
    let again = skillc(tmp.path(), ["migrate", "tagged", "--out", "migrated"]);
    assert_eq!(again.code, Some(1), "{}{}", again.stdout, again.stderr);
    assert!(again.stderr.contains("is not written"), "{}", again.stderr);
    assert_eq!(std::fs::read_to_string(&copy).expect("read"), "mine");
}

//! Admission levels L3–L6 end to end: one fixture per level (`tests/fixtures/admit/<case>/`,
//! a project folder) proves its reject path and its reason, snapshotted from `report.json`;
//! L5 without Python is `not-run` and refused by `verify --production`.

use std::path::Path;

use crate::common::{Run, copy_dir, insta_settings, manifest_dir, skillc_env};

/// Builds a copy of fixture `case` with `env`; returns the project folder and the run. A
/// fixture holding a `fake-python` script is built with it as L5's interpreter.
fn build(case: &str, env: &[(&str, &str)]) -> (tempfile::TempDir, Run) {
    let dir = tempfile::tempdir().expect("tempdir");
    let fixture = manifest_dir().join("tests/fixtures/admit").join(case);
    copy_dir(&fixture, dir.path());
    let fake = fixture.join("fake-python").to_string_lossy().into_owned();
    let mut env = env.to_vec();
    if fixture.join("fake-python").is_file() && !env.iter().any(|(k, _)| *k == "SKILLC_PYTHON") {
        env.push(("SKILLC_PYTHON", &fake));
    }
    env.push(("SOURCE_DATE_EPOCH", "1800000000"));
    let run = skillc_env(dir.path(), &["build", "--quiet"], &env);
    (dir, run)
}

/// Writes a release key pair (`release.key`, `release.pub`) into `dir`; returns the secret
/// key's file name. `verify --production` accepts only such an explicit key (issue 18, item 1).
fn release_key(dir: &Path) -> String {
    let key = skillc::SecretKey::from_seed([7u8; 32], *b"release!");
    std::fs::write(dir.join("release.key"), key.to_file()).expect("write key");
    std::fs::write(dir.join("release.pub"), key.public().to_file()).expect("write pub");
    "release.key".into()
}

/// `skillc verify --production` against the release key.
fn production(dir: &Path) -> Run {
    skillc_env(
        dir,
        &[
            "verify",
            "out",
            "--state",
            "s.json",
            "--production",
            "--key",
            "release.pub",
        ],
        &[],
    )
}

/// Every plan of the report: `skill subcommand -> name: status [level code] reason`.
fn plans(dir: &Path) -> String {
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("out/report.json")).expect("report")).expect("json");
    let mut lines = Vec::new();
    for s in report["skills"].as_array().into_iter().flatten() {
        for p in s["plans"].as_array().into_iter().flatten() {
            let mut line = format!(
                "{} `{}` -> {}: {}",
                s["name"].as_str().unwrap_or_default(),
                p["subcommand"].as_str().unwrap_or_default(),
                p["name"].as_str().unwrap_or("-"),
                p["status"].as_str().unwrap_or_default()
            );
            if let Some(level) = p["level"].as_str() {
                line.push_str(&format!(
                    " [{level} {}] {}",
                    p["code"].as_str().unwrap_or_default(),
                    p["reason"].as_str().unwrap_or_default()
                ));
            }
            lines.push(line);
        }
    }
    lines.sort();
    lines.join("\n") + "\n"
}

/// Every folder of `tests/fixtures/admit/` is a project whose build rejects a plan (exit 1);
/// the snapshot of its plans is its expectation.
#[test]
fn every_level_fixture_rejects_what_its_snapshot_says() {
    insta::glob!("../fixtures", "admit/*", |path| {
        let case = path.file_name().expect("a case folder").to_string_lossy().into_owned();
        let (dir, run) = build(&case, &[]);
        assert_eq!(run.code, Some(1), "{case}: {}\n{}", run.stdout, run.stderr);
        let report = plans(dir.path());
        let mut settings = insta_settings();
        settings.remove_snapshot_suffix();
        settings.bind(|| insta::assert_snapshot!(format!("admit_{case}"), report));
    });
}

#[test]
fn l4_routing_writes_the_battery_of_the_admitted_executors() {
    // One comment describes two commands; the request built from it goes to the other one.
    let (dir, _) = build("l4_routing", &[]);
    let battery = std::fs::read_to_string(dir.path().join("out/routing.toml")).expect("routing");
    assert!(
        battery.contains("expected = \"create_collections_linkbox\""),
        "{battery}"
    );
    assert!(
        !battery.contains("move_bookmarks_linkbox"),
        "only admitted executors: {battery}"
    );
}

#[test]
fn l5_without_python_is_not_run_and_refused_in_production() {
    let (dir, run) = build("l5_executable", &[("SKILLC_PYTHON", "/nonexistent/python3")]);
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let manifest = std::fs::read_to_string(dir.path().join("out/executors/notes/list_notes_notes/manifest.toml"))
        .expect("manifest");
    assert!(manifest.contains("L5 = \"not-run\""), "{manifest}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/report.json")).expect("report")).expect("json");
    assert_eq!(report["admission"]["levels"]["L5"], "not-run");
    let v = skillc_env(dir.path(), &["verify", "out", "--state", "s.json"], &[]);
    assert_eq!(v.code, Some(0), "{}", v.stdout);
    // Signed with a release key, so that only the levels stand in the way of production.
    let env = [
        ("SKILLC_PYTHON", "/nonexistent/python3"),
        ("SOURCE_DATE_EPOCH", "1800000001"),
    ];
    let run = skillc_env(
        dir.path(),
        &["build", "--quiet", "--key", &release_key(dir.path())],
        &env,
    );
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let prod = production(dir.path());
    assert_eq!(prod.code, Some(1), "{}", prod.stdout);
    assert!(prod.stderr.contains("not a production catalog"), "{}", prod.stderr);
}

#[test]
fn l6_external_verifier_fails_closed() {
    // The fixture's verifier rejects (its snapshot); one that cannot be run rejects too.
    let (dir, _) = build("l6_verifier", &[]);
    std::fs::write(
        dir.path().join("pipeline.toml"),
        "[admission]\nverifier = \"/nonexistent/verifier\"\n",
    )
    .expect("write");
    let run = skillc_env(
        dir.path(),
        &["build", "--quiet"],
        &[("SOURCE_DATE_EPOCH", "1800000000")],
    );
    assert_eq!(run.code, Some(1));
    let report = plans(dir.path());
    assert!(
        report.contains("[L6 AD008] the verifier `/nonexistent/verifier` failed: exit status 127"),
        "{report}"
    );
}

#[test]
fn the_routing_battery_lists_every_admitted_executor() {
    let (dir, run) = build("l3_affinity", &[]);
    assert_eq!(run.code, Some(1));
    let battery = std::fs::read_to_string(dir.path().join("out/routing.toml")).expect("routing");
    insta_settings().bind(|| insta::assert_snapshot!("admit_routing_battery", battery));
}

#[test]
fn a_skip_in_pipeline_toml_is_recorded_and_refused_in_production() {
    // The L3 fixture's pair is confusable; skipping L3 (and L5) lets it through, on record.
    let (dir, _) = build("l3_affinity", &[]);
    std::fs::write(
        dir.path().join("pipeline.toml"),
        "[admission]\nskip = [\"L3\", \"L5\"]\n",
    )
    .expect("write");
    let key = release_key(dir.path());
    let run = skillc_env(
        dir.path(),
        &["build", "--quiet", "--key", &key],
        &[("SOURCE_DATE_EPOCH", "1800000000")],
    );
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let manifest = std::fs::read_to_string(dir.path().join("out/executors/alpha/list_files_alpha/manifest.toml"))
        .expect("manifest");
    assert!(
        manifest.contains(
            "levels = { L1 = \"pass\", L2 = \"pass\", L3 = \"skipped\", L4 = \"pass\", L5 = \"skipped\", L6 = \"pass\" }\nskipped = [\"L3\", \"L5\"]"
        ),
        "{manifest}"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/report.json")).expect("report")).expect("json");
    assert_eq!(report["admission"]["skipped"], serde_json::json!(["L3", "L5"]));
    assert_eq!(report["admission"]["levels"]["L3"], "skipped");
    let prod = production(dir.path());
    assert_eq!(prod.code, Some(1), "{}", prod.stdout);
    assert!(
        prod.stderr
            .contains("not a production catalog: admission levels were skipped"),
        "{}",
        prod.stderr
    );
}

/// L5's answers are kept in `.skillc/l5.json`: a build in a new process runs `python3` only
/// over wrappers it has not seen, and again over all of them when the cache is gone.
#[test]
fn l5_answers_are_reused_by_the_next_process() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    let copy = std::process::Command::new("cp")
        .args([
            "-r",
            &manifest_dir().join("skills").to_string_lossy(),
            &p.to_string_lossy(),
        ])
        .status()
        .expect("cp");
    assert!(copy.success());
    let log = p.join("python-calls.log");
    let python = p.join("python-counting");
    std::fs::write(
        &python,
        format!("#!/bin/sh\necho call >> '{}'\nexec python3 \"$@\"\n", log.display()),
    )
    .expect("write");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let env = [
        ("SKILLC_PYTHON", python.to_str().expect("utf-8")),
        ("SOURCE_DATE_EPOCH", "1800000000"),
    ];
    let calls = || std::fs::read_to_string(&log).map(|t| t.lines().count()).unwrap_or(0);
    let first = skillc_env(p, &["build", "--quiet"], &env);
    assert_eq!(first.code, Some(0), "{}{}", first.stdout, first.stderr);
    let n = calls();
    assert!(n > 0, "the first build checks every wrapper with python");
    // A body edit that changes no wrapper: the new process asks Python nothing.
    let md = p.join("skills/todo/SKILL.md");
    let text = std::fs::read_to_string(&md).expect("read") + "\nOne more note.\n";
    std::fs::write(&md, text).expect("write");
    let second = skillc_env(p, &["build", "--quiet"], &env);
    assert_eq!(second.code, Some(0), "{}{}", second.stdout, second.stderr);
    assert!(!second.stdout.contains("up to date"), "{}", second.stdout);
    assert_eq!(calls(), n, "no wrapper changed: python was not run again");
    // Without the cache, every wrapper is checked again.
    std::fs::remove_file(p.join(".skillc/l5.json")).expect("rm");
    std::fs::write(&md, std::fs::read_to_string(&md).expect("read") + "Another.\n").expect("write");
    let third = skillc_env(p, &["build", "--quiet"], &env);
    assert_eq!(third.code, Some(0), "{}{}", third.stdout, third.stderr);
    assert!(calls() > n);
}

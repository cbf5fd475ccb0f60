//! `skillc check` on hand-written edge-case skills (`tests/fixtures/check/<case>/<skill>/`) and on
//! skills generated at test time (a 20 MiB SKILL.md, a SKILL.md linking out of its folder):
//! exit code and diagnostic codes asserted explicitly, human and JSON output snapshot-tested.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{Run, diagnostics, insta_settings, manifest_dir, skillc};

/// What `skillc check` (default mode) must report for a fixture case.
struct Expect {
    case: &'static str,
    exit: i32,
    /// Error codes with how many times each is reported.
    errors: &'static [(&'static str, usize)],
    /// Warning codes with how many times each is reported.
    warnings: &'static [(&'static str, usize)],
}

const fn expect(
    case: &'static str,
    exit: i32,
    errors: &'static [(&'static str, usize)],
    warnings: &'static [(&'static str, usize)],
) -> Expect {
    Expect {
        case,
        exit,
        errors,
        warnings,
    }
}

/// One entry per folder of `tests/fixtures/check/`; the test fails when the two disagree.
const EXPECTED: &[Expect] = &[
    // 9 anchors and 8 × 9 aliases (a billion "lol"s if expanded): each rejected, none
    // expanded; the nine sequences under `metadata` are not strings.
    expect("alias-bomb", 1, &[("SK009", 81)], &[("SK035", 9)]),
    expect("block-folded", 0, &[], &[]),
    expect("block-literal", 0, &[], &[]),
    expect("bom", 0, &[], &[("SK003", 1)]),
    expect("crlf", 0, &[], &[]),
    expect("dashes-in-quoted-value", 0, &[], &[]),
    // A line that is exactly `---` closes the frontmatter, even inside a quoted scalar: the
    // quote is then unterminated.
    expect("dashes-line-in-quoted-value", 1, &[("SK006", 1)], &[]),
    expect("duplicate-key", 1, &[("SK008", 1)], &[]),
    // A wrong license and compatibility type are errors; a malformed allowed-tools entry warns.
    expect("field-types", 1, &[("SK031", 1), ("SK034", 1)], &[("SK036", 1)]),
    // `network:readwrite` and `internet:read` are malformed; `network:read:*.brave.com` is fine.
    expect("gaia-bad-permission", 1, &[("SK051", 2)], &[]),
    expect("gaia-ceiling", 1, &[("SK052", 1)], &[]),
    // Unknown tier, a string where a list is due, a nameless tool, a non-identifier name, an
    // unknown parameter type and a default of the wrong type; an unknown key only warns.
    expect(
        "gaia-malformed",
        1,
        &[("SK050", 1), ("SK053", 4), ("SK054", 1)],
        &[("SK055", 1)],
    ),
    expect("gaia-typed-tools", 0, &[], &[]),
    expect("hermes", 0, &[], &[]),
    // Tag characters in `description`, a right-to-left override in `compatibility`.
    expect("hidden-unicode", 0, &[], &[("SK014", 2)]),
    expect("lowercase-filename", 0, &[], &[("SK015", 1)]),
    // Hermes, OpenClaw and Claude Code fields of the wrong shape are warnings.
    expect("namespace-shapes", 0, &[], &[("SK056", 4)]),
    expect("non-utf8", 1, &[("SK002", 1)], &[]),
    expect("not-yaml-fence", 1, &[("SK004", 1)], &[]),
    expect("openclaw-json5", 0, &[], &[]),
    expect("tab-indent", 1, &[("SK006", 1)], &[]),
    expect("unquoted-colon", 1, &[("SK006", 1)], &[]),
    // `yes`, `1.0`, a date and `010` are strings for skillc, other types for PyYAML.
    expect("yaml-implicit-types", 0, &[], &[("SK012", 4)]),
    // The merged mapping is also not a string value of `metadata`.
    expect("yaml-merge-key", 1, &[("SK011", 1)], &[("SK035", 1)]),
    expect("yaml-tag", 1, &[("SK010", 1)], &[]),
];

fn fixtures_dir() -> PathBuf {
    manifest_dir().join("tests/fixtures/check")
}

/// `code -> count` for the diagnostics of `severity` in a JSON report.
fn counts(report: &serde_json::Value, severity: &str) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for (code, sev) in diagnostics(report) {
        if sev == severity {
            *m.entry(code).or_default() += 1;
        }
    }
    m
}

fn as_map(list: &[(&str, usize)]) -> BTreeMap<String, usize> {
    list.iter().map(|(c, n)| ((*c).to_owned(), *n)).collect()
}

/// Runs `check` on `target` from `cwd` in both formats; returns (human, json) after checking
/// the exit code and the diagnostic codes. Problems are pushed to `failures`.
fn check_both(cwd: &Path, target: &str, want: &Expect, failures: &mut Vec<String>) -> (Run, Run) {
    let human = skillc(cwd, ["check", "--color", "never", target]);
    let json = skillc(cwd, ["check", "--color", "never", "--format", "json", target]);
    let case = want.case;
    for (what, run) in [("human", &human), ("json", &json)] {
        if run.code != Some(want.exit) {
            failures.push(format!(
                "{case} ({what}): exit {:?}, expected {}\n{}{}",
                run.code, want.exit, run.stdout, run.stderr
            ));
        }
        if !run.stderr.is_empty() {
            failures.push(format!("{case} ({what}): unexpected stderr: {}", run.stderr));
        }
    }
    match serde_json::from_str::<serde_json::Value>(&json.stdout) {
        Ok(report) => {
            let errors = counts(&report, "error");
            let warnings = counts(&report, "warning");
            if errors != as_map(want.errors) {
                failures.push(format!("{case}: errors {errors:?}, expected {:?}", as_map(want.errors)));
            }
            if warnings != as_map(want.warnings) {
                failures.push(format!(
                    "{case}: warnings {warnings:?}, expected {:?}",
                    as_map(want.warnings)
                ));
            }
            let skills = report["skills"].as_array().map_or(0, Vec::len);
            if skills != 1 {
                failures.push(format!("{case}: {skills} skills in the report, expected 1"));
            }
        }
        Err(e) => failures.push(format!("{case}: JSON output does not parse: {e}\n{}", json.stdout)),
    }
    (human, json)
}

fn snapshot(name: &str, command: &str, human: &Run, json: &Run) {
    let mut settings = insta_settings();
    settings.set_description(command);
    settings.bind(|| {
        insta::assert_snapshot!(format!("check_{name}_human"), human.stdout);
        insta::assert_snapshot!(format!("check_{name}_json"), json.stdout);
    });
}

#[test]
fn fixtures_report_the_expected_codes_and_output() {
    let dir = fixtures_dir();
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .expect("tests/fixtures/check exists")
        .map(|e| e.expect("readable entry").file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let declared: Vec<String> = EXPECTED.iter().map(|e| e.case.to_owned()).collect();
    assert_eq!(
        on_disk, declared,
        "every fixture folder needs an entry in EXPECTED (sorted), and every entry a folder"
    );

    let mut failures = Vec::new();
    let mut outputs = Vec::new();
    for want in EXPECTED {
        let (human, json) = check_both(&dir, want.case, want, &mut failures);
        outputs.push((want.case, human, json));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    for (case, human, json) in &outputs {
        snapshot(
            &format!("fixture_{}", case.replace('-', "_")),
            &format!("skillc check [--format json] {case}"),
            human,
            json,
        );
    }
}

#[test]
fn openclaw_flow_maps_are_errors_only_in_strict_mode() {
    // Default mode accepts the JSON5-style map (see the fixture test); --strict follows the
    // standard, where flow collections and the `homepage` key are not allowed.
    let run = skillc(
        &fixtures_dir(),
        ["check", "--strict", "--format", "json", "openclaw-json5"],
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let report = run.json();
    assert_eq!(
        counts(&report, "error"),
        as_map(&[("SK013", 1), ("SK033", 1)]),
        "{}",
        run.stdout
    );
}

/// A frontmatter that is valid on its own, for the generated cases.
fn frontmatter(name: &str) -> String {
    format!("---\nname: {name}\ndescription: A skill generated by the test suite.\n---\n\n# {name}\n\n")
}

#[test]
fn a_20_mib_skill_md_is_rejected_by_size() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let skill = tmp.path().join("huge-skill");
    std::fs::create_dir(&skill).expect("mkdir");
    let mut text = frontmatter("huge-skill").into_bytes();
    let size = 20 * 1024 * 1024;
    let line = b"Lorem ipsum dolor sit amet, consectetur adipiscing elit.\n";
    while text.len() + line.len() <= size {
        text.extend_from_slice(line);
    }
    text.resize(size, b'\n');
    std::fs::write(skill.join("SKILL.md"), &text).expect("write SKILL.md");

    let want = expect("huge-skill", 1, &[("SK040", 1)], &[]);
    let mut failures = Vec::new();
    let (human, json) = check_both(tmp.path(), "huge-skill", &want, &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(
        human.stdout.contains("SKILL.md is 20971520 bytes (20 MiB)"),
        "{}",
        human.stdout
    );

    // read-properties refuses it as a problem of the input (exit 1), not a failure to run.
    let props = skillc(tmp.path(), ["read-properties", "huge-skill"]);
    assert_eq!(props.code, Some(1), "{}", props.stderr);
    assert!(props.stderr.contains("SK040"), "{}", props.stderr);

    snapshot(
        "generated_huge_skill_md",
        "skillc check [--format json] huge-skill (SKILL.md of 20 MiB)",
        &human,
        &json,
    );
}

#[cfg(unix)]
#[test]
fn a_skill_md_linking_out_of_its_folder_is_rejected() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let outside = tmp.path().join("elsewhere");
    std::fs::create_dir(&outside).expect("mkdir");
    std::fs::write(outside.join("SKILL.md"), frontmatter("linked-skill")).expect("write");
    let skill = tmp.path().join("linked-skill");
    std::fs::create_dir(&skill).expect("mkdir");
    std::os::unix::fs::symlink("../elsewhere/SKILL.md", skill.join("SKILL.md")).expect("symlink");

    let want = expect("linked-skill", 1, &[("SK043", 1)], &[]);
    let mut failures = Vec::new();
    let (human, json) = check_both(tmp.path(), "linked-skill", &want, &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));

    // The target is valid: only the link is refused, and its contents are never read.
    let props = skillc(tmp.path(), ["read-properties", "linked-skill"]);
    assert_eq!(props.code, Some(1), "{}", props.stdout);
    assert!(props.stdout.is_empty(), "{}", props.stdout);
    assert!(props.stderr.contains("SK043"), "{}", props.stderr);

    snapshot(
        "generated_symlink_escape",
        "skillc check [--format json] linked-skill (SKILL.md -> ../elsewhere/SKILL.md)",
        &human,
        &json,
    );
}

/// Writes a one-skill project with `pipeline.toml` limits and returns its folder.
fn limited_project(pipeline: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::write(tmp.path().join("pipeline.toml"), pipeline).expect("pipeline.toml");
    let skill = tmp.path().join("skills/limited");
    std::fs::create_dir_all(skill.join("assets")).expect("mkdir");
    std::fs::write(skill.join("SKILL.md"), frontmatter("limited")).expect("SKILL.md");
    std::fs::write(skill.join("assets/data.csv"), "a,b\n1,2\n3,4\n").expect("asset");
    std::fs::write(skill.join("assets/more.csv"), "c\n").expect("asset");
    tmp
}

#[test]
fn limits_come_from_pipeline_toml() {
    let tmp = limited_project("[limits]\nsupport_file_bytes = 8\nfiles_per_skill = 2\n");
    let run = skillc(tmp.path(), ["check", "--format", "json", "skills"]);
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    let report = run.json();
    let errors: Vec<(String, String)> = diagnostics(&report).into_iter().filter(|(_, s)| s == "error").collect();
    let codes: Vec<&str> = errors.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(codes.iter().filter(|c| **c == "SK041").count(), 1, "{codes:?}"); // data.csv is 12 bytes
    assert_eq!(codes.iter().filter(|c| **c == "SK042").count(), 1, "{codes:?}"); // 3 files > 2
    // Without paths at the project root, the configured roots are checked.
    let roots = skillc(tmp.path(), ["check", "--format", "json"]);
    assert_eq!(diagnostics(&roots.json()), diagnostics(&report));
    // Below the root, pipeline.toml is found upwards, as `plan` and `build` find it.
    let below = skillc(&tmp.path().join("skills"), ["check", "--format", "json", "limited"]);
    assert_eq!(below.code, Some(1), "{}", below.stdout);
    assert_eq!(diagnostics(&below.json()), diagnostics(&report));
    // Outside the project, the default limits accept the same skill.
    let elsewhere = tempfile::tempdir().expect("tempdir");
    std::fs::rename(tmp.path().join("skills/limited"), elsewhere.path().join("limited")).expect("move");
    let ok = skillc(elsewhere.path(), ["check", "limited"]);
    assert_eq!(ok.code, Some(0), "{}", ok.stdout);
}

#[test]
fn a_broken_link_inside_the_skill_is_unreadable_not_an_escape() {
    let tmp = limited_project("");
    let skill = tmp.path().join("skills/limited");
    std::os::unix::fs::symlink("assets/missing.csv", skill.join("dangling.csv")).expect("symlink");
    let run = skillc(tmp.path(), ["check", "--format", "short", "skills"]);
    assert_eq!(run.code, Some(1));
    assert!(
        run.stdout
            .contains("skills/limited/dangling.csv:1:1: error[SK044]: cannot read support file: broken symbolic link"),
        "{}",
        run.stdout
    );
}

//! Where loaders disagree and skillc must not stay silent (issue 18, item 15b): a tab before
//! `#` in a value (a comment to YAML 1.2, an error to PyYAML), `metadata` keys PyYAML reads as
//! numbers or booleans, and an unclosed `allowed-tools` entry, which the scan's record keeps.

use std::path::Path;

use crate::common::skillc_env;

fn skill(dir: &Path, name: &str, frontmatter: &str) {
    let d = dir.join("skills").join(name);
    std::fs::create_dir_all(&d).expect("mkdir");
    std::fs::write(
        d.join("SKILL.md"),
        format!("---\nname: {name}\n{frontmatter}---\n\n# {name}\n"),
    )
    .expect("write");
}

/// `(code, severity, line)` of every diagnostic of `check --format json ARGS`, and the exit code.
fn check(dir: &Path, args: &[&str]) -> (Option<i32>, Vec<(String, String, u64)>) {
    let mut all = vec!["check", "--format", "json"];
    all.extend_from_slice(args);
    let r = skillc_env(dir, &all, &[]);
    let report = r.json();
    let mut out = Vec::new();
    for s in report["skills"].as_array().into_iter().flatten() {
        for d in s["diagnostics"].as_array().into_iter().flatten() {
            out.push((
                d["code"].as_str().unwrap_or_default().to_owned(),
                d["severity"].as_str().unwrap_or_default().to_owned(),
                d["line"].as_u64().unwrap_or_default(),
            ));
        }
    }
    (r.code, out)
}

/// Item 15b: `description: Does things<TAB># note` is `SK037`, a warning by default and an
/// error under `--strict` (the reference validator refuses the file); a space before `#`, or
/// a `#` inside quotes, is nothing.
#[test]
fn a_tab_before_a_comment_warns_and_is_refused_under_strict() {
    let dir = tempfile::tempdir().expect("tempdir");
    skill(dir.path(), "tabbed", "description: Does things for tests\t# a note\n");
    skill(dir.path(), "quoted", "description: \"Does things\"\t# a note\n");
    skill(dir.path(), "spaced", "description: Does things for tests # a note\n");
    skill(dir.path(), "inside", "description: \"Does things\t# not a comment\"\n");
    let (code, d) = check(
        dir.path(),
        &["skills/tabbed", "skills/quoted", "skills/spaced", "skills/inside"],
    );
    assert_eq!(code, Some(0), "{d:?}");
    assert_eq!(
        d,
        [
            ("SK037".into(), "warning".into(), 3),
            ("SK037".into(), "warning".into(), 3)
        ],
        "only the two tabs before a comment"
    );
    let (code, d) = check(dir.path(), &["--strict", "skills/tabbed"]);
    assert_eq!(code, Some(1), "{d:?}");
    assert!(d.contains(&("SK037".into(), "error".into(), 3)), "{d:?}");
}

/// Item 15b: the warning for values PyYAML reads as another type (`SK012`) covers `metadata`
/// keys too: `1:` and `true:` are an integer and a boolean there, `"2":` is a string.
#[test]
fn metadata_keys_pyyaml_reads_as_other_types_warn() {
    let dir = tempfile::tempdir().expect("tempdir");
    skill(
        dir.path(),
        "keys",
        "description: Keys of every type.\nmetadata:\n  1: one\n  true: yes-string\n  \"2\": two\n  plain: text\n",
    );
    let (code, d) = check(dir.path(), &["skills/keys"]);
    assert_eq!(code, Some(0), "{d:?}");
    let sk012: Vec<u64> = d.iter().filter(|x| x.0 == "SK012").map(|x| x.2).collect();
    assert!(sk012.contains(&5) && sk012.contains(&6), "keys `1` and `true`: {d:?}");
    assert!(
        !sk012.contains(&7) && !sk012.contains(&8),
        "a quoted key and a word are strings: {d:?}"
    );
}

/// Item 15b: an unclosed `allowed-tools` entry (`Bash(gh:*`) stays in the scan's `SC030`
/// record, marked malformed, so that a reviewer sees the request.
#[test]
fn a_malformed_allowed_tools_entry_stays_in_the_scan_record() {
    let dir = tempfile::tempdir().expect("tempdir");
    skill(
        dir.path(),
        "tools",
        "description: Uses tools.\nallowed-tools: Read Bash(gh:*\n",
    );
    let r = skillc_env(
        dir.path(),
        &["scan", "--format", "json", "--min-severity", "info", "skills/tools"],
        &[],
    );
    let text = r.stdout.clone();
    let report = r.json();
    let reasons: Vec<String> = report["skills"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["findings"].as_array().cloned().unwrap_or_default())
        .filter(|f| f["rule"] == "SC030" || f["code"] == "SC030")
        .map(|f| {
            f["reason"]
                .as_str()
                .or(f["message"].as_str())
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(reasons.len(), 1, "{text}");
    assert!(
        reasons[0].contains("Read") && reasons[0].contains("Bash(gh:* [malformed]"),
        "{reasons:?}"
    );
}

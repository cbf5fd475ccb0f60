//! File names a catalog cannot list (issue 18, item 3): a newline or another control
//! character in a skill's file name is a `check` error (`SK045`), the build rejects the skill,
//! and no such name reaches `out/`, which stays verifiable. (Imports refusing such names are
//! in `import_hostile`.)

use crate::common::{copy_dir, manifest_dir, skillc_env, write_test_key};

/// Item 3: `check` reports `SK045` (exit 1) for a newline, a tab and an escape in file and
/// folder names; `build` rejects the skill, writes no such name, and `verify` accepts `out/`.
#[test]
fn control_characters_in_file_names_never_reach_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    copy_dir(&manifest_dir().join("skills/todo"), &p.join("skills/todo"));
    let bad = p.join("skills/todo");
    std::fs::write(bad.join("notes\nREADME.md"), "x\n").expect("write");
    std::fs::create_dir_all(bad.join("references/a\tb")).expect("mkdir");
    std::fs::write(bad.join("references/a\tb/c.md"), "x\n").expect("write");
    std::fs::write(bad.join("e\u{1b}[2J.md"), "x\n").expect("write");
    copy_dir(&manifest_dir().join("skills/runbooks"), &p.join("skills/runbooks"));
    write_test_key(&p.join("test.key"));

    let r = skillc_env(p, &["check", "--format", "json"], &[]);
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    let report = r.json();
    let sk045: Vec<String> = report["skills"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["diagnostics"].as_array().cloned().unwrap_or_default())
        .filter(|d| d["code"] == "SK045")
        .map(|d| d["message"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(sk045.len(), 3, "{sk045:?}");
    assert!(sk045.iter().any(|m| m.contains(r"notes\nREADME.md")), "{sk045:?}");
    assert!(
        sk045.iter().all(|m| !m.contains('\n') && !m.contains('\u{1b}')),
        "{sk045:?}"
    );
    let short = skillc_env(p, &["check", "--format", "short"], &[]);
    assert!(
        short.stdout.lines().filter(|l| l.contains("SK045")).count() == 3,
        "one line per diagnostic: {}",
        short.stdout
    );

    let r = skillc_env(
        p,
        &["build", "--key", "test.key"],
        &[("SOURCE_DATE_EPOCH", "1800000000")],
    );
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("rejected skill skills/todo: SK045"), "{}", r.stdout);
    let names: Vec<String> = walkdir::WalkDir::new(p.join("out"))
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| e.path().to_string_lossy().into_owned())
        .filter(|n| n.chars().any(char::is_control))
        .collect();
    assert_eq!(names, Vec::<String>::new());
    assert!(p.join("out/skills/runbooks/SKILL.md").is_file());
    assert!(!p.join("out/skills/todo").exists());
    let v = skillc_env(p, &["verify", "out", "--state", "s.json"], &[]);
    assert_eq!(v.code, Some(0), "{}\n{}", v.stdout, v.stderr);
}

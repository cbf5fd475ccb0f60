//! Unit tests of the fix engine: one case per fixable rule, idempotence, and the edits that
//! are refused (comments, collisions, misspelt keys).

use super::*;

fn fix_in(dir: &str, text: &str, mode: Mode) -> (String, Vec<&'static str>) {
    let target = Target {
        file: "SKILL.md",
        dir_name: dir,
        lowercase_file: false,
    };
    let options = Options {
        mode,
        rename_folder: false,
    };
    let f = fix_skill_md(&target, text.as_bytes(), options, &|_| false);
    let out = f.text.clone().unwrap_or_else(|| text.to_owned());
    // A second run changes nothing.
    let again = fix_skill_md(&target, out.as_bytes(), options, &|_| false);
    assert_eq!(again.text, None, "not idempotent:\n{out}\n{:?}", again.applied);
    (out, f.applied.iter().map(|a| a.code).collect())
}

fn fix(text: &str) -> (String, Vec<&'static str>) {
    fix_in("demo", text, Mode::Default)
}

#[test]
fn name_takes_the_folder_name() {
    let (out, codes) = fix("---\nname: Demo-Tool # keep\ndescription: d\n---\nbody\n");
    assert_eq!(out, "---\nname: demo # keep\ndescription: d\n---\nbody\n");
    assert_eq!(codes, vec!["SK027"]);
    // An invalid folder name is not copied into `name`.
    let (out, codes) = fix_in("Bad_Dir", "---\nname: good\ndescription: d\n---\n", Mode::Default);
    assert_eq!(
        (out.as_str(), codes),
        ("---\nname: good\ndescription: d\n---\n", vec![])
    );
}

#[test]
fn folder_rename_is_asked_for() {
    let target = Target {
        file: "SKILL.md",
        dir_name: "old",
        lowercase_file: true,
    };
    let options = Options {
        mode: Mode::Default,
        rename_folder: true,
    };
    let f = fix_skill_md(&target, b"---\nname: new-name\ndescription: d\n---\n", options, &|_| {
        false
    });
    assert_eq!(f.text, None);
    assert_eq!(
        f.changes,
        vec![
            FolderChange::RenameFolder("new-name".into()),
            FolderChange::RenameSkillMd
        ]
    );
}

#[test]
fn bom_crlf_and_fences() {
    let (out, codes) = fix("\u{feff}--- \r\nname: demo\r\ndescription: d\r\n---\t\r\n# Body\r\ntext\r\n");
    assert_eq!(out, "---\nname: demo\ndescription: d\n---\n# Body\ntext\n");
    assert_eq!(codes, vec!["SK003", "SK017", "SK018"]);
}

#[test]
fn unknown_keys_move_under_metadata() {
    let text =
        "---\nname: demo\ntags: [pdf, forms]\ndescription: d\nmetadata:\n  author: me\ncolour: blue\n---\nbody\n";
    let (out, codes) = fix(text);
    assert_eq!(
        out,
        "---\nname: demo\ndescription: d\nmetadata:\n  author: me\n  tags: \"[\\\"pdf\\\",\\\"forms\\\"]\"\n  colour: blue\n---\nbody\n"
    );
    assert_eq!(codes, vec!["SK033"]);
    // Without `metadata`, one is added at the end.
    let (out, _) = fix("---\nname: demo\ndescription: d\ncolour: 1.0\n---\n");
    assert_eq!(
        out,
        "---\nname: demo\ndescription: d\nmetadata:\n  colour: \"1.0\"\n---\n"
    );
}

#[test]
fn moves_that_would_lose_something_are_not_made() {
    // A misspelt field, a comment, a collision with another value.
    for text in [
        "---\nname: demo\ndescription: d\nallowed_tools: Read\n---\n",
        "---\nname: demo\ndescription: d\ncolour: blue # why\n---\n",
        "---\nname: demo\ndescription: d\ncolour: blue\nmetadata:\n  colour: red\n---\n",
    ] {
        assert_eq!(fix(text), (text.to_owned(), vec![]), "{text}");
    }
}

#[test]
fn strict_moves_superset_keys_and_writes_block_style() {
    let text = "---\nname: demo\ndescription: d\nversion: 1.0.0\nuser-invocable: true\nmetadata: {\"openclaw\": {\"emoji\": \"x\", \"requires\": {\"bins\": [\"gog\"]}}}\n---\nbody\n";
    let (out, codes) = fix_in("demo", text, Mode::Strict);
    assert_eq!(
        out,
        "---\nname: demo\ndescription: d\nmetadata:\n  openclaw:\n    emoji: x\n    requires:\n      bins:\n        - gog\n  version: 1.0.0\n  user-invocable: \"true\"\n---\nbody\n"
    );
    // Moving keys into the flow `metadata` rewrote it in block style: SK013 went with it.
    assert_eq!(codes, vec!["SK033"]);
    let (out, codes) = fix_in(
        "demo",
        "---\nname: demo\ndescription: d\nmetadata:\n  a: {b: [c]}\n---\n",
        Mode::Strict,
    );
    assert_eq!(
        out,
        "---\nname: demo\ndescription: d\nmetadata:\n  a:\n    b:\n      - c\n---\n"
    );
    assert_eq!(codes, vec!["SK013"]);
}

#[test]
fn nested_metadata_values_become_json_strings() {
    let (out, codes) =
        fix("---\nname: demo\ndescription: d\nmetadata:\n  tags:\n    - a\n    - b\n  openclaw:\n    emoji: x\n---\n");
    assert_eq!(
        out,
        "---\nname: demo\ndescription: d\nmetadata:\n  tags: \"[\\\"a\\\",\\\"b\\\"]\"\n  openclaw:\n    emoji: x\n---\n"
    );
    assert_eq!(codes, vec!["SK035"]);
}

#[test]
fn allowed_tools_and_implicit_types() {
    let (out, codes) =
        fix("---\nname: demo\ndescription: d\nallowed-tools:\n  - Read\n  - Bash(git add:*)\nlicense: yes\n---\n");
    // Quoted as `skillc export` quotes it: `:` and `*` are outside the always-plain characters.
    assert_eq!(
        out,
        "---\nname: demo\ndescription: d\nallowed-tools: \"Read Bash(git add:*)\"\nlicense: \"yes\"\n---\n"
    );
    assert_eq!(codes, vec!["SK019", "SK012"]);
    let (out, _) = fix("---\nname: demo\ndescription: d\nallowed-tools: Read, Write\n---\n");
    assert_eq!(out, "---\nname: demo\ndescription: d\nallowed-tools: Read Write\n---\n");
}

#[test]
fn a_one_line_value_with_a_colon_is_quoted() {
    let (out, codes) = fix("---\nname: demo\ndescription: Use it: now, \"quoted\"\n---\nbody: text\n");
    assert_eq!(
        out,
        "---\nname: demo\ndescription: \"Use it: now, \\\"quoted\\\"\"\n---\nbody: text\n"
    );
    assert_eq!(codes, vec!["SK006"]);
    // A continued value is not guessed at.
    let text = "---\nname: demo\ndescription: Use it: now\n  and later\n---\n";
    assert_eq!(fix(text), (text.to_owned(), vec![]));
}

#[test]
fn ignored_rules_are_not_fixed_and_fixable_marks_diagnostics() {
    let target = Target {
        file: "SKILL.md",
        dir_name: "demo",
        lowercase_file: false,
    };
    let text = b"\xef\xbb\xbf---\nname: Demo\ndescription: d\n---\n";
    let f = fix_skill_md(&target, text, Options::default(), &|c| c == "SK003");
    assert_eq!(
        f.text.as_deref(),
        Some("\u{feff}---\nname: demo\ndescription: d\n---\n")
    );
    let marks = fixable_in(&target, text, Options::default(), &|_| false);
    // SK003 (BOM), SK023 (not lowercase) and SK027 (folder): all fixed by two edits.
    assert_eq!(marks, vec![true, true, true]);
}

#[test]
fn every_fix_names_a_registered_rule_once() {
    let mut seen = std::collections::BTreeSet::new();
    for f in FIXES {
        assert!(crate::rules::find(f.code).is_some(), "{} is not a rule", f.code);
        assert!(seen.insert(f.code), "{} twice", f.code);
        assert!(f.how.ends_with('.'), "{}: a sentence", f.code);
    }
}

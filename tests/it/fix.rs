//! `skillc check --fix` and `--diff`: one before/after fixture pair per fixable rule
//! (`tests/fixtures/fix/<case>/` before, the snapshot `fix_<case>` after), and the whole
//! shared corpus fixed in a temporary copy: the fixable errors go and nothing else does, no
//! fixable diagnostic remains, the bodies keep their text, and a second `--fix` changes no
//! byte.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::{copy_dir, corpus, insta_settings, manifest_dir, skillc, tree};

/// A case: its folder, whether `--fix` changes it, the codes it must remove, the codes that
/// must stay.
type Case = (&'static str, bool, &'static [&'static str], &'static [&'static str]);

const CASES: &[Case] = &[
    // A comment, a collision with `metadata`, a duplicate key: nothing is guessed.
    ("not-fixed", false, &[], &["SK008", "SK033"]),
    ("sk003-bom", true, &["SK003"], &[]),
    ("sk006-colon-value", true, &["SK006"], &[]),
    // The value with a comment on its line is quoted in place; the comment stays.
    ("sk012-implicit-type", true, &["SK012"], &[]),
    ("sk013-flow-strict", true, &["SK013"], &[]),
    ("sk015-lowercase-file", true, &["SK015"], &[]),
    ("sk017-crlf", true, &["SK017"], &[]),
    ("sk018-fence-whitespace", true, &["SK018"], &[]),
    ("sk019-allowed-tools", true, &["SK019"], &[]),
    ("sk027-name", true, &["SK026", "SK027"], &[]),
    ("sk027-rename-folder", true, &["SK027"], &[]),
    // `tags` and `category` move; `allowed_tools` looks like a misspelt `allowed-tools` and
    // is left for a person.
    ("sk033-unknown-keys", true, &[], &["SK033"]),
    ("sk033-strict-superset", true, &["SK033"], &[]),
    ("sk035-nested-metadata", true, &["SK035"], &[]),
];

/// The `args` file of a case (`--strict`, `--rename-folder`), as arguments.
fn case_args(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("args"))
        .map(|s| s.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// Whether `check --format json` in `dir` reports an error that is not marked fixable.
fn unfixable_error(dir: &Path, args: &[String]) -> bool {
    let mut all = vec!["check".to_owned(), "--format".into(), "json".into(), ".".into()];
    all.extend(args.iter().cloned());
    let report = skillc(dir, &all).json();
    report["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .flat_map(|s| s["diagnostics"].as_array().expect("diagnostics"))
        .any(|d| d["severity"] == "error" && d["fixable"] != true)
}

/// Every code reported by `check --format json` in `dir`, and how many are marked fixable.
fn codes(dir: &Path, args: &[String]) -> (Vec<String>, usize) {
    let mut all = vec!["check".to_owned(), "--format".into(), "json".into(), ".".into()];
    all.extend(args.iter().cloned());
    let report = skillc(dir, &all).json();
    let mut codes = Vec::new();
    let mut fixable = 0;
    for s in report["skills"].as_array().expect("skills") {
        for d in s["diagnostics"].as_array().expect("diagnostics") {
            codes.push(d["code"].as_str().expect("code").to_owned());
            fixable += usize::from(d["fixable"] == true);
        }
    }
    (codes, fixable)
}

/// CR and BOM made visible (`␍`, `<BOM>`) for a snapshot.
fn visible(s: &str) -> String {
    s.replace('\r', "␍").replace('\u{feff}', "<BOM>")
}

/// A tree as text for a snapshot: each file's path and contents.
fn shown(tree: &BTreeMap<String, (Vec<u8>, bool)>) -> String {
    let mut s = String::new();
    for (path, (bytes, _)) in tree {
        if path == "args" {
            continue;
        }
        let text = visible(&String::from_utf8_lossy(bytes));
        s.push_str(&format!("==> {path} <==\n{text}\n"));
    }
    s
}

#[test]
fn each_fixable_rule_has_a_before_after_pair() {
    let fixtures = manifest_dir().join("tests/fixtures/fix");
    let on_disk: Vec<String> = std::fs::read_dir(&fixtures)
        .expect("fixtures")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    for case in &on_disk {
        assert!(CASES.iter().any(|(c, ..)| c == case), "{case} is not in CASES");
    }
    // Every rule `skillc explain` marks fixable has a case that removes it.
    let list = skillc(&fixtures, ["explain"]);
    let fixable: Vec<&str> = list
        .stdout
        .lines()
        .filter(|l| l.split_whitespace().nth(3) == Some("fix"))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(fixable.len() >= 10, "{}", list.stdout);
    for code in &fixable {
        assert!(
            CASES.iter().any(|(_, _, gone, _)| gone.contains(code)),
            "no fixture pair for {code}"
        );
        // `explain` says how it is fixed.
        let explained = skillc(&fixtures, ["explain", code]);
        assert!(
            explained.stdout.contains("## Fix\n\n`skillc check --fix` "),
            "{code}: {}",
            explained.stdout
        );
    }
    let sk014 = skillc(&fixtures, ["explain", "SK014"]);
    assert!(
        sk014.stdout.contains("Not fixed by `skillc check --fix`"),
        "{}",
        sk014.stdout
    );
    let mut settings = insta_settings();
    settings.set_prepend_module_to_snapshot(false);
    for (case, changes, gone, stay) in CASES {
        let changes = *changes;
        let dir = tempfile::tempdir().expect("tempdir");
        copy_dir(&fixtures.join(case), dir.path());
        let args = case_args(dir.path());
        let before = tree(dir.path());
        let (codes_before, fixable_before) = codes(dir.path(), &args);
        for c in *gone {
            assert!(
                codes_before.iter().any(|x| x == c),
                "{case}: {c} is not reported before"
            );
        }

        // --diff: a unified diff, nothing written.
        let mut diff_args = vec!["check".to_owned(), "--diff".into(), ".".into()];
        diff_args.extend(args.iter().cloned());
        let diff = skillc(dir.path(), &diff_args);
        assert_eq!(tree(dir.path()), before, "{case}: --diff wrote something");
        // 1 when something would change, or an error would stay that --fix cannot fix.
        let unfixable = unfixable_error(dir.path(), &args);
        assert_eq!(
            diff.code,
            Some(if changes || unfixable { 1 } else { 0 }),
            "{case}: {}",
            diff.stderr
        );
        assert_eq!(
            diff.stderr.contains("that `--fix` cannot fix"),
            unfixable,
            "{case}: {}",
            diff.stderr
        );
        if changes {
            assert!(diff.stdout.starts_with("diff --git a/"), "{case}: {}", diff.stdout);
        } else {
            assert_eq!(diff.stdout, "", "{case}: nothing to fix");
        }

        // --fix: the after side, snapshot-tested.
        let mut fix_args = vec!["check".to_owned(), "--fix".into(), ".".into()];
        fix_args.extend(args.iter().cloned());
        let fixed = skillc(dir.path(), &fix_args);
        assert!(matches!(fixed.code, Some(0 | 1)), "{case}: {}", fixed.stderr);
        let after = tree(dir.path());
        let (codes_after, fixable_after) = codes(dir.path(), &args);
        for c in *gone {
            assert!(
                !codes_after.iter().any(|x| x == c),
                "{case}: {c} is still reported: {codes_after:?}"
            );
        }
        for c in *stay {
            assert!(codes_after.iter().any(|x| x == c), "{case}: {c} should remain");
        }
        assert_eq!(fixable_after, 0, "{case}: fixable diagnostics remain");
        if changes {
            assert!(
                codes_after.len() < codes_before.len(),
                "{case}: fewer diagnostics after --fix"
            );
        } else {
            assert_eq!(after, before, "{case}: nothing may change");
        }
        assert_eq!(fixable_before > 0, changes, "{case}: `fixable` marks");
        settings.bind(|| {
            insta::assert_snapshot!(
                format!("fix_{}", case.replace('-', "_")),
                format!(
                    "$ skillc {}\n{}\n$ skillc {}\n{}",
                    diff_args.join(" "),
                    visible(&diff.stdout),
                    fix_args.join(" "),
                    shown(&after)
                )
            );
        });

        // Idempotent: a second --fix changes no byte, --diff shows nothing.
        let again = skillc(dir.path(), &fix_args);
        assert!(again.stderr.contains("nothing to fix"), "{case}: {}", again.stderr);
        assert_eq!(tree(dir.path()), after, "{case}: a second --fix changed something");
        let diff_again = skillc(dir.path(), &diff_args);
        assert_eq!(
            (diff_again.code, diff_again.stdout.as_str()),
            (Some(i32::from(unfixable)), ""),
            "{case}"
        );
    }
}

/// The body (after the closing fence) of every SKILL.md under `dir`, by skill folder (folder
/// renames are not made on the corpus, so the folder identifies the skill).
fn bodies(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in walkdir::WalkDir::new(dir).follow_links(false) {
        let e = e.expect("walk");
        let name = e.file_name().to_string_lossy();
        if !(name == "SKILL.md" || name == "skill.md") || !e.file_type().is_file() {
            continue;
        }
        let bytes = std::fs::read(e.path()).expect("read");
        let Ok(text) = std::str::from_utf8(&bytes) else {
            continue;
        };
        if let Some(body) = body_of(text) {
            let folder = e.path().parent().expect("parent").strip_prefix(dir).expect("inside");
            out.insert(folder.to_string_lossy().into_owned(), body.as_bytes().to_vec());
        }
    }
    out
}

/// What follows the closing fence: the second line that is `---` (spaces, tabs and a CR
/// allowed after it), after an optional BOM. `None` without frontmatter.
fn body_of(text: &str) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let is_fence = |l: &str| {
        l.strip_prefix("---")
            .is_some_and(|r| r.chars().all(|c| matches!(c, ' ' | '\t' | '\r')))
    };
    let mut offset = 0;
    let mut fences = 0;
    for line in text.split_inclusive('\n') {
        offset += line.len();
        if is_fence(line.trim_end_matches('\n')) {
            fences += 1;
            if fences == 2 {
                return text.get(offset..);
            }
        } else if fences == 0 {
            return None;
        }
    }
    None
}

/// `(errors, fixable errors)` per skill path, and every diagnostic still marked fixable.
fn report(dir: &Path, strict: bool) -> (BTreeMap<String, (usize, usize, bool)>, usize) {
    let mut args = vec!["check", "--format", "json", "corpus"];
    if strict {
        args.push("--strict");
    }
    let r = skillc(dir, &args).json();
    let mut per = BTreeMap::new();
    let mut fixable = 0;
    for s in r["skills"].as_array().expect("skills") {
        let diags = s["diagnostics"].as_array().expect("diagnostics");
        let errors = diags.iter().filter(|d| d["severity"] == "error").count();
        let fixable_errors = diags
            .iter()
            .filter(|d| d["severity"] == "error" && d["fixable"] == true)
            .count();
        // A fixed YAML error lets the fields be validated: that skill's count starts anew.
        let read_fix = diags.iter().any(|d| d["code"] == "SK006" && d["fixable"] == true);
        fixable += diags.iter().filter(|d| d["fixable"] == true).count();
        per.insert(
            s["path"].as_str().expect("path").to_owned(),
            (errors, fixable_errors, read_fix),
        );
    }
    (per, fixable)
}

#[test]
fn fix_on_the_whole_corpus_removes_the_fixable_errors_only_and_is_idempotent() {
    let Some(corpus) = corpus() else { return };
    // Each mode on its own copy of the corpus, as it is.
    for strict in [false, true] {
        let dir = tempfile::tempdir().expect("tempdir");
        let copy = dir.path().join("corpus");
        copy_dir(&corpus, &copy);
        let original_bodies = bodies(&copy);
        let (before, fixable) = report(dir.path(), strict);
        assert!(fixable > 0, "the corpus has fixable problems (strict={strict})");
        let mut args = vec!["check", "--fix", "corpus"];
        if strict {
            args.push("--strict");
        }
        let run = skillc(dir.path(), &args);
        assert!(matches!(run.code, Some(0 | 1)), "{}", run.stderr);
        let (after, fixable_left) = report(dir.path(), strict);
        assert_eq!(
            fixable_left, 0,
            "strict={strict}: fixable diagnostics remain after --fix"
        );
        let (mut errors_before, mut errors_after, mut fixed) = (0, 0, 0);
        for (path, (errors, fixable_errors, read_fix)) in &before {
            let (now, _, _) = after.get(path).unwrap_or_else(|| panic!("{path} disappeared"));
            errors_before += errors;
            errors_after += now;
            fixed += fixable_errors;
            if !read_fix {
                assert_eq!(
                    *now,
                    errors - fixable_errors,
                    "{path}: exactly the fixable errors go (strict={strict})"
                );
            }
        }
        eprintln!(
            "corpus --fix{}: {errors_before} errors before, {errors_after} after ({fixed} fixable)",
            if strict { " --strict" } else { "" }
        );
        assert!(
            errors_after <= errors_before - fixed + 40,
            "a fixed YAML error reveals at most a few more"
        );
        // A second run changes no byte.
        let snapshot = tree(&copy);
        let again = skillc(dir.path(), &args);
        assert!(again.stderr.contains("nothing to fix"), "{}", again.stderr);
        assert!(tree(&copy) == snapshot, "strict={strict}: a second --fix changed files");
        // Bodies keep their text; only SK017 changes their line ends.
        let now = bodies(&copy);
        for (folder, body) in &original_bodies {
            let after = now.get(folder).unwrap_or_else(|| panic!("{folder}: SKILL.md lost"));
            let lf = String::from_utf8_lossy(body).replace("\r\n", "\n");
            assert_eq!(String::from_utf8_lossy(after), lf, "{folder}: the body changed");
        }
    }
}

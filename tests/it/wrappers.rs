//! Generated wrappers under fire (issue 18): running one never changes the signed catalog
//! (item 9: no bytecode next to the wrapper or the skill's scripts), and hostile arguments
//! get a JSON error with exit status 2, never a Python traceback (item 10).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::{python3, skillc_env, write_test_key};

const SDE: (&str, &str) = ("SOURCE_DATE_EPOCH", "1800000000");

/// A project whose skill `notes` runs `scripts/tool.py`, which imports a sibling module (what
/// makes Python write `scripts/__pycache__/`), built; returns it and the wrapper's path.
fn built() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let skill = dir.path().join("skills/notes");
    std::fs::create_dir_all(skill.join("scripts")).expect("mkdir");
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: notes\ndescription: Keeps short notes. Use when the user wants to list notes.\n---\n\n# Notes\n\n```bash\npython3 scripts/tool.py notes list --tag <tag>\n```\n",
    )
    .expect("write");
    std::fs::write(
        skill.join("scripts/tool.py"),
        "import json, sys\nimport helper\nprint(json.dumps({\"notes\": helper.notes(sys.argv[1:])}))\n",
    )
    .expect("write");
    std::fs::write(skill.join("scripts/helper.py"), "def notes(argv):\n    return argv\n").expect("write");
    write_test_key(&dir.path().join("test.key"));
    let r = skillc_env(dir.path(), &["build", "--key", "test.key"], &[SDE]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    let wrapper = dir
        .path()
        .join("out/executors/notes/list_notes_notes/list_notes_notes.py");
    assert!(wrapper.is_file(), "{}", r.stdout);
    (dir, wrapper)
}

/// Runs `python` `wrapper` with `args` (one argument, if any) and `stdin` bytes, in Python's
/// default configuration (bytecode writing on).
fn run(python: &str, wrapper: &Path, args: Option<&str>, stdin: &[u8]) -> (Option<i32>, String, String) {
    let mut cmd = Command::new(python);
    cmd.arg(wrapper)
        .args(args)
        .env_remove("PYTHONDONTWRITEBYTECODE")
        .env_remove("PYTHONPYCACHEPREFIX")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("python3");
    let mut input = child.stdin.take().expect("stdin");
    let bytes = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&bytes);
    });
    let o = child.wait_with_output().expect("wait");
    let _ = feeder.join();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Item 9: running an executor (its script importing a sibling module) writes no
/// `__pycache__` into `out/`, so `skillc verify` still accepts the catalog.
#[test]
fn running_an_executor_leaves_the_catalog_verifiable() {
    let Some(python) = python3() else { return };
    let (dir, wrapper) = built();
    let (code, stdout, stderr) = run(&python, &wrapper, Some(r#"{"tag": "work"}"#), b"");
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let result: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(
        result["result"]["notes"],
        serde_json::json!(["notes", "list", "--tag", "work"]),
        "{result}"
    );
    let pycache: Vec<String> = walkdir::WalkDir::new(dir.path().join("out"))
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name() == "__pycache__" || e.path().extension().is_some_and(|x| x == "pyc"))
        .map(|e| e.path().display().to_string())
        .collect();
    assert_eq!(pycache, Vec::<String>::new());
    let v = skillc_env(dir.path(), &["verify", "out", "--state", "s.json"], &[]);
    assert_eq!(v.code, Some(0), "{}\n{}", v.stdout, v.stderr);
}

/// Item 10: a NUL byte, a lone surrogate, deeply nested JSON, bytes that are not UTF-8, a
/// non-finite number: each answers `{"ok": false, "error": …}` with exit status 2, and
/// nothing on standard error (no traceback).
#[test]
fn hostile_arguments_get_a_json_error_and_exit_2() {
    let Some(python) = python3() else { return };
    let (_dir, wrapper) = built();
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let deep_object = format!("{}{}", r#"{"tag": "#.repeat(50_000), "}".repeat(50_000));
    let cases: Vec<(&str, Option<&str>, Vec<u8>)> = vec![
        ("a NUL byte in a value", Some(r#"{"tag": "a\u0000b"}"#), vec![]),
        ("a lone surrogate", Some(r#"{"tag": "\ud800"}"#), vec![]),
        ("a lone surrogate in a key", Some(r#"{"\udfff": 1}"#), vec![]),
        ("deeply nested arrays on stdin", None, deep.into_bytes()),
        ("deeply nested objects on stdin", None, deep_object.into_bytes()),
        ("invalid UTF-8 on stdin", None, b"{\"tag\": \"\xff\xfe\"}".to_vec()),
        ("NaN", Some(r#"{"tag": NaN}"#), vec![]),
        ("a raw NUL on stdin", None, b"{\"tag\": \"a\x00b\"}".to_vec()),
    ];
    for (what, arg, stdin) in cases {
        let (code, stdout, stderr) = run(&python, &wrapper, arg, &stdin);
        assert_eq!(code, Some(2), "{what}: {stdout}\n{stderr}");
        let answer: serde_json::Value =
            serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {stdout}\n{stderr}"));
        assert_eq!(answer["ok"], false, "{what}: {answer}");
        assert!(
            answer["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{what}: {answer}"
        );
        assert!(!stderr.contains("Traceback"), "{what}: {stderr}");
    }
}

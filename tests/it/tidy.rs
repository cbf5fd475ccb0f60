//! Tidy checks over the source tree (rust-analyzer style): module docs, no panicking calls on
//! the non-test paths, no file over 700 lines and a thin `main.rs` (the layering is `layers`;
//! functions over 120 lines are clippy's `too_many_lines`, see `clippy.toml`; rule docs are
//! checked against the registry by a unit test of `rules`).

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
        .map(|e| e.into_path())
        .collect();
    v.sort();
    v
}

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn every_module_starts_with_a_doc_line() {
    let missing: Vec<String> = rust_files(&src())
        .into_iter()
        .filter(|p| !std::fs::read_to_string(p).is_ok_and(|t| t.starts_with("//!")))
        .map(|p| p.display().to_string())
        .collect();
    assert!(missing.is_empty(), "modules without a `//!` first line: {missing:?}");
}

#[test]
fn no_panicking_calls_outside_tests() {
    let mut found = Vec::new();
    for f in crate::common::source_files() {
        let p = &f.path;
        for (i, line) in f.code.lines().enumerate() {
            let l = line.trim_start();
            if l.starts_with("//") {
                continue;
            }
            for bad in [".unwrap()", ".expect(", "panic!(", "unimplemented!(", "todo!("] {
                if l.contains(bad) {
                    found.push(format!("{}:{}: {}", p.display(), i + 1, l));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "panicking calls on non-test paths:\n{}",
        found.join("\n")
    );
}

/// Most lines a file of `src/` may have: a file longer than this holds several modules.
const MAX_FILE_LINES: usize = 700;

#[test]
fn no_file_is_over_700_lines() {
    let long: Vec<String> = rust_files(&src())
        .into_iter()
        .filter_map(|p| {
            let n = std::fs::read_to_string(&p).unwrap_or_default().lines().count();
            (n > MAX_FILE_LINES).then(|| format!("{} ({n} lines)", p.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "files over {MAX_FILE_LINES} lines (split them into modules of one job each): {long:?}"
    );
}

#[test]
fn main_stays_thin() {
    let main = std::fs::read_to_string(src().join("main.rs")).unwrap_or_default();
    assert!(
        main.lines().count() <= 40,
        "src/main.rs has {} lines; keep it ≤ 40",
        main.lines().count()
    );
}

/// Issue 18, item 17: README's set-up names every prerequisite of skillc and its tests and
/// `.ci/run`, and the Rust version it gives is Cargo.toml's `rust-version`.
#[test]
fn readme_set_up_names_every_prerequisite() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap_or_default();
    let set_up = readme
        .split("\n## ")
        .find(|s| s.starts_with("Set-up"))
        .unwrap_or_default();
    for needed in [
        "`git`",
        "Python 3",
        "`minisign`",
        "`redis-server`",
        "skills-ref",
        "agentskills",
        "`.ci/run`",
        ".ci/run",
    ] {
        assert!(set_up.contains(needed), "README's Set-up does not name {needed}");
    }
    let cargo = std::fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();
    let version = cargo
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .map(|v| v.trim_matches('"').to_owned());
    let Some(version) = version else {
        panic!("Cargo.toml has no rust-version");
    };
    assert!(
        set_up.contains(&format!("Rust {version} or later")),
        "README's Set-up must name Rust {version} (Cargo.toml's rust-version)"
    );
}

//! What a new user of the command line hits (issue 18, items 14 and 15): progress that counts
//! right, summaries that stay short and read right, formats that do not mix, and one exit
//! status for one situation across commands.

use std::path::Path;

use crate::common::{copy_dir, manifest_dir, skillc_env, write_test_key};
use skillc::{BUILT_IN_VOCABULARY, BuildEvent, Session};

/// Item 14: every stage's progress counts from 0 to exactly its total (`analyze` over skills,
/// `generate` over skills, `sign` over executors, `write` over the files written), in a
/// first build and in a rebuild that writes little.
#[test]
fn every_stage_of_a_build_counts_to_its_total() {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(&manifest_dir().join("skills"), &dir.path().join("skills"));
    let opts = crate::common::build_options(dir.path());
    let mut session = Session::open(opts, BUILT_IN_VOCABULARY.into()).expect("open");
    let build = |session: &mut Session| {
        let mut stages: Vec<(&'static str, usize, usize)> = Vec::new();
        let outcome = session
            .build(1_900_000_000, &mut |e| match e {
                BuildEvent::Stage { stage, total } => stages.push((stage, total, 0)),
                BuildEvent::Progress { n } => {
                    if let Some(s) = stages.last_mut() {
                        s.2 += n;
                    }
                }
                _ => {}
            })
            .expect("build");
        let names: Vec<&str> = stages.iter().map(|s| s.0).collect();
        assert_eq!(names, ["analyze", "generate", "sign", "write"]);
        for (stage, total, done) in &stages {
            assert_eq!(done, total, "{stage} counted {done} of {total}: {stages:?}");
        }
        assert_eq!(stages[2].1, outcome.executors, "sign counts executors: {stages:?}");
        assert_eq!(
            stages[3].1, outcome.files_written,
            "write counts the files written: {stages:?}"
        );
        outcome
    };
    let first = build(&mut session);
    assert!(first.files_written > first.executors, "{}", first.files_written);
    // A rebuild after one edit writes a few files, and counts those.
    let md = dir.path().join("skills/todo/SKILL.md");
    let text = std::fs::read_to_string(&md).expect("read") + "\nOne more line.\n";
    std::fs::write(&md, text).expect("write");
    session
        .refresh_paths(&[md.canonicalize().expect("canonical")])
        .expect("refresh");
    let second = build(&mut session);
    assert!(
        second.files_written > 0 && second.files_written < first.files_written,
        "{}",
        second.files_written
    );
}

/// A project of `n` skills that fail `check` (no description), plus the example `todo`.
fn broken_project(n: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for i in 0..n {
        let name = format!("broken-{i:02}");
        let d = dir.path().join("skills").join(&name);
        std::fs::create_dir_all(&d).expect("mkdir");
        std::fs::write(
            d.join("SKILL.md"),
            format!("---\nname: {name}\n---\n\nNo description.\n"),
        )
        .expect("write");
    }
    copy_dir(&manifest_dir().join("skills/todo"), &dir.path().join("skills/todo"));
    write_test_key(&dir.path().join("test.key"));
    dir
}

/// Item 14: `rejected skill` lines are capped like `rejected plan` lines (20, then a count of
/// the rest), and a count of one is singular (`1 error`, not `1 errors`).
#[test]
fn summaries_are_capped_and_pluralised() {
    let dir = broken_project(25);
    let r = skillc_env(dir.path(), &["build", "--key", "test.key"], &[]);
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    let rejected = r.stdout.lines().filter(|l| l.starts_with("rejected skill ")).count();
    assert_eq!(rejected, 20, "{}", r.stdout);
    assert!(r.stdout.contains("… and 5 more rejected skills"), "{}", r.stdout);
    assert!(
        r.stdout.contains("(at skills/broken-00/SKILL.md:"),
        "where: {}",
        r.stdout
    );

    let one = broken_project(1);
    let r = skillc_env(one.path(), &["check", "skills/broken-00"], &[]);
    assert_eq!(r.code, Some(1));
    assert!(
        r.stdout
            .contains("checked 1 skill: 0 ok, 0 with warnings, 1 with errors (1 error, 0 warnings)\n"),
        "{}",
        r.stdout
    );
    let r = skillc_env(one.path(), &["build", "--key", "test.key"], &[]);
    // A rejected skill is not built: one of the two skills is (fails when the summary said
    // `built 2 skills … (1 skill rejected)`).
    assert!(
        r.stdout
            .lines()
            .any(|l| l.starts_with("built 1 of 2 skills into ") && l.contains(" (1 skill rejected): ")),
        "{}",
        r.stdout
    );
    let r = skillc_env(one.path(), &["build", "--key", "test.key"], &[]);
    assert!(
        r.stdout.contains("0 executors changed, 0 files written or removed"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.lines().any(|l| l.starts_with("up to date: 1 of 2 skills in ")),
        "{}",
        r.stdout
    );
}

/// Item 14: `build --format json --message-format json` would print two JSON formats on one
/// standard output: a usage error (exit 2) that prints nothing there.
#[test]
fn two_json_formats_on_one_stdout_are_refused() {
    let dir = broken_project(0);
    let r = skillc_env(
        dir.path(),
        &[
            "build",
            "--key",
            "test.key",
            "--format",
            "json",
            "--message-format",
            "json",
        ],
        &[],
    );
    assert_eq!(r.code, Some(2), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stdout, "");
    assert!(
        r.stderr.contains("--format json") && r.stderr.contains("--message-format json"),
        "{}",
        r.stderr
    );
    assert!(!dir.path().join("out").exists());
    // Each alone is fine.
    for args in [&["--format", "json"][..], &["--message-format", "json"][..]] {
        let mut all = vec!["build", "--key", "test.key"];
        all.extend_from_slice(args);
        let r = skillc_env(dir.path(), &all, &[]);
        assert_eq!(r.code, Some(0), "{args:?}: {}", r.stderr);
    }
}

fn codes(dir: &Path) -> Vec<(&'static str, Option<i32>)> {
    ["check", "scan", "plan", "build"]
        .into_iter()
        .map(|c| (c, skillc_env(dir, &[c], &[]).code))
        .collect()
}

/// A build that finds no skill (an emptied or wrongly named skills folder) writes nothing: the
/// published catalog stays, byte for byte, instead of being replaced by an empty signed one
/// whose higher version would make consumers refuse the last good catalog as a rollback.
#[test]
fn a_build_of_no_skill_keeps_the_published_catalog() {
    let dir = tempfile::tempdir().expect("tempdir");
    let skill = dir.path().join("skills/notes");
    std::fs::create_dir_all(&skill).expect("mkdir");
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: notes\ndescription: Keeps short notes when the user asks to remember something.\n---\n# Notes\n\nWrite the note down.\n",
    )
    .expect("write");
    write_test_key(&dir.path().join("test.key"));
    let built = skillc_env(dir.path(), &["build", "--key", "test.key"], &[]);
    assert_eq!(built.code, Some(0), "{}", built.stderr);
    let before = crate::common::tree(&dir.path().join("out"));
    std::fs::create_dir(dir.path().join("empty")).expect("mkdir");
    let r = skillc_env(dir.path(), &["build", "--key", "test.key", "--skills", "empty"], &[]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("SK001"), "{}", r.stderr);
    assert!(r.stderr.contains("nothing was written"), "{}", r.stderr);
    assert_eq!(crate::common::tree(&dir.path().join("out")), before, "out/ changed");
    let verified = skillc_env(dir.path(), &["verify", "out"], &[]);
    assert_eq!(verified.code, Some(0), "{}", verified.stderr);
}

/// Item 15: a folder without any skill is the input's problem, exit status 1 (`SK001`), for
/// `check`, `scan`, `plan` and `build` alike: an empty folder, and one whose `skills/` is
/// empty (README, "Exit status").
#[test]
fn a_folder_without_skills_is_exit_1_for_every_command() {
    let empty = tempfile::tempdir().expect("tempdir");
    assert_eq!(
        codes(empty.path()),
        [
            ("check", Some(1)),
            ("scan", Some(1)),
            ("plan", Some(1)),
            ("build", Some(1))
        ]
    );
    assert!(!empty.path().join("out").exists(), "nothing built in an empty folder");
    let r = skillc_env(empty.path(), &["build"], &[]);
    assert!(r.stderr.contains("SK001"), "{}", r.stderr);
    let no_skills = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(no_skills.path().join("skills")).expect("mkdir");
    assert_eq!(
        codes(no_skills.path()),
        [
            ("check", Some(1)),
            ("scan", Some(1)),
            ("plan", Some(1)),
            ("build", Some(1))
        ]
    );
    // A folder that was named and does not exist is a usage error, for every command.
    for c in ["check", "scan", "plan"] {
        assert_eq!(skillc_env(empty.path(), &[c, "nope"], &[]).code, Some(2), "{c}");
    }
    assert_eq!(
        skillc_env(empty.path(), &["build", "--skills", "nope"], &[]).code,
        Some(2)
    );
}

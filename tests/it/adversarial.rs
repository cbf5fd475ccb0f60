//! Regressions found by adversarial testing: hostile inputs and hostile `out/` folders must
//! never crash, hang, lose data, write outside `out/`, or slip past `skillc verify`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Run, skillc_env};

fn run(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    skillc_env(cwd, args, env)
}

/// A project with one small skill (two sub-commands) and a fixed test key.
pub(crate) fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let skill = dir.path().join("skills/ledger");
    std::fs::create_dir_all(skill.join("scripts")).expect("mkdir");
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: ledger\ndescription: Records payments.\n---\n\n```bash\npython3 scripts/tool.py payments list --max 20\npython3 scripts/tool.py payments add --amount 3 --note <note>\n```\n",
    )
    .expect("write");
    std::fs::write(
        skill.join("scripts/tool.py"),
        "import json, sys\nprint(json.dumps(sys.argv[1:]))\n",
    )
    .expect("write");
    let key = skillc::SecretKey::from_seed([9u8; 32], *b"advKEY!!");
    std::fs::write(dir.path().join("test.key"), key.to_file()).expect("key");
    dir
}

fn build(dir: &Path, env: &[(&str, &str)]) -> Run {
    run(dir, &["build", "--key", "test.key"], env)
}

fn verify(dir: &Path) -> Run {
    run(dir, &["verify", "out", "--state", "state.json"], &[])
}

#[test]
fn read_properties_of_a_non_utf8_file_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("x")).expect("mkdir");
    std::fs::write(
        dir.path().join("x/SKILL.md"),
        b"---\nname: x\ndescription: caf\xe9 au lait\n---\nbody\n",
    )
    .expect("write");
    for cmd in ["read-properties", "to-prompt"] {
        let r = run(dir.path(), &[cmd, "x"], &[]);
        assert_eq!(r.code, Some(1), "{cmd}: {}", r.stderr);
        assert!(
            r.stderr.contains("error[SK002]") && !r.stderr.contains("panicked"),
            "{}",
            r.stderr
        );
    }
}

#[test]
fn files_skillc_did_not_write_are_kept_and_reported() {
    let p = project();
    assert_eq!(build(p.path(), &[]).code, Some(0));
    std::fs::write(p.path().join("out/README.md"), "mine").expect("write");
    std::fs::create_dir(p.path().join("out/mine")).expect("mkdir");
    std::fs::write(p.path().join("out/mine/data.csv"), "a,b").expect("write");
    let r = build(p.path(), &[]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stderr.contains("README.md is not part of the catalog"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read_to_string(p.path().join("out/README.md")).expect("kept"),
        "mine"
    );
    assert!(p.path().join("out/mine/data.csv").exists());
    let v = verify(p.path());
    assert_eq!(v.code, Some(1));
    assert!(
        v.stderr.contains("not in the signed catalog: README.md"),
        "{}",
        v.stderr
    );
}

#[test]
fn a_folder_with_only_a_report_is_not_a_catalog() {
    let p = project();
    let docs = p.path().join("docs");
    std::fs::create_dir(&docs).expect("mkdir");
    std::fs::write(docs.join("report.json"), "{}").expect("write");
    std::fs::write(docs.join("thesis.txt"), "years of work").expect("write");
    let r = run(p.path(), &["build", "--key", "test.key", "--out", "docs"], &[]);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("is not a skillc catalog"), "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(docs.join("thesis.txt")).expect("kept"),
        "years of work"
    );
}

#[test]
fn a_symbolic_link_inside_out_is_never_written_through() {
    let p = project();
    assert_eq!(build(p.path(), &[]).code, Some(0));
    let victim = tempfile::tempdir().expect("tempdir");
    std::fs::remove_dir_all(p.path().join("out/skills")).expect("rm");
    std::os::unix::fs::symlink(victim.path(), p.path().join("out/skills")).expect("symlink");
    let r = build(p.path(), &[]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("is a symbolic link inside the output folder"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read_dir(victim.path()).expect("victim").count(),
        0,
        "nothing written outside out/"
    );
}

#[test]
fn the_output_folder_cannot_live_inside_a_skill() {
    let p = project();
    let r = run(
        p.path(),
        &["build", "--key", "test.key", "--out", "skills/ledger/dist"],
        &[],
    );
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("overlaps"), "{}", r.stderr);
}

#[test]
fn fifos_are_never_read_and_check_agrees_with_build() {
    let p = project();
    let fifo = p.path().join("skills/ledger/pipe");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        crate::common::skip("mkfifo is unavailable");
        return;
    }
    let c = run(p.path(), &["check", "--format", "short", "skills"], &[]);
    assert_eq!(c.code, Some(1));
    assert!(
        c.stdout
            .contains("skills/ledger/pipe:1:1: error[SK044]: cannot read support file: not a regular file"),
        "{}",
        c.stdout
    );
    let b = build(p.path(), &[]);
    assert_eq!(b.code, Some(1), "{}", b.stdout);
    assert!(b.stdout.contains("rejected skill skills/ledger: SK044"), "{}", b.stdout);
}

/// A `SKILL.md` that is a folder is a skill that cannot be read (`SK044`, with where and what
/// to do), in `check` and `build`, beside a valid skill. Fails before the fix: the folder was
/// skipped without a word (`check` said the root held one skill).
#[test]
fn a_skill_md_that_is_a_folder_is_reported() {
    let p = project();
    std::fs::create_dir_all(p.path().join("skills/hollow/SKILL.md")).expect("mkdir");
    let c = run(p.path(), &["check", "skills"], &[]);
    assert_eq!(c.code, Some(1), "{}", c.stdout);
    assert!(
        c.stdout
            .contains("error[SK044]: cannot read SKILL.md: it is a folder, not a file")
            && c.stdout.contains("skills/hollow/SKILL.md:1:1")
            && c.stdout.contains("help: make it a regular file"),
        "{}",
        c.stdout
    );
    assert!(c.stdout.contains("checked 2 skills: 1 ok"), "{}", c.stdout);
    let b = build(p.path(), &[]);
    assert_eq!(b.code, Some(1), "{}", b.stdout);
    assert!(b.stdout.contains("rejected skill skills/hollow: SK044"), "{}", b.stdout);
}

#[test]
fn the_signing_key_variable_is_strict_and_never_echoed() {
    let p = project();
    let empty = run(p.path(), &["build"], &[("SKILLC_SIGNING_KEY", "")]);
    assert_eq!(empty.code, Some(2));
    assert!(empty.stderr.contains("is set but empty"), "{}", empty.stderr);
    let garbage = run(
        p.path(),
        &["build"],
        &[("SKILLC_SIGNING_KEY", "RWQAAEIyGARBAGEsecretMATERIAL==")],
    );
    assert_eq!(garbage.code, Some(2));
    assert!(
        !garbage.stderr.contains("GARBAGEsecret"),
        "the value must not be printed: {}",
        garbage.stderr
    );
    // The base64 line alone, as CI secrets are usually stored, is a key.
    let text = std::fs::read_to_string(p.path().join("test.key")).expect("key");
    let line = text.lines().nth(1).unwrap_or_default().to_owned();
    let ok = run(p.path(), &["build"], &[("SKILLC_SIGNING_KEY", line.as_str())]);
    assert_eq!(ok.code, Some(0), "{}", ok.stderr);
    assert!(
        !p.path().join(".skillc/signing.key").exists(),
        "no development key was created"
    );
}

#[test]
fn wrappers_refuse_values_that_would_be_read_as_options() {
    let p = project();
    assert_eq!(build(p.path(), &[]).code, Some(0));
    let wrapper = p
        .path()
        .join("out/executors/ledger/create_payments_ledger/create_payments_ledger.py");
    let out = Command::new("python3")
        .arg(&wrapper)
        .arg(r#"{"amount": 3, "note": "--all"}"#)
        .output()
        .expect("python3");
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        out.status.code(),
        Some(0),
        "a flag value starting with `-` is passed as --note=--all: {result}"
    );
    assert!(
        result["result"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x == "--note=--all")),
        "{result}"
    );
}

#[test]
fn identical_inputs_give_identical_catalogs_whatever_came_before() {
    let a = project();
    let b = project();
    let env = [("SOURCE_DATE_EPOCH", "1800000000")];
    assert_eq!(build(a.path(), &env).code, Some(0));
    // `a` is built, edited and rebuilt; `b` is built once from the edited skill.
    for p in [a.path(), b.path()] {
        let md = p.join("skills/ledger/SKILL.md");
        let text = std::fs::read_to_string(&md)
            .expect("read")
            .replace("--max 20", "--max 30");
        std::fs::write(&md, text).expect("write");
    }
    assert_eq!(build(a.path(), &env).code, Some(0));
    assert_eq!(build(b.path(), &env).code, Some(0));
    for f in ["catalog.toml", "catalog.toml.sig", "report.json"] {
        assert_eq!(
            std::fs::read(a.path().join("out").join(f)).ok(),
            std::fs::read(b.path().join("out").join(f)).ok(),
            "{f} differs"
        );
    }
}

#[test]
fn a_changed_lifetime_or_a_damaged_catalog_is_rewritten() {
    let p = project();
    assert_eq!(build(p.path(), &[]).code, Some(0));
    let before = std::fs::read_to_string(p.path().join("out/catalog.toml")).expect("catalog");
    std::fs::write(p.path().join("pipeline.toml"), "[signing]\nexpires_days = 30\n").expect("write");
    assert_eq!(build(p.path(), &[]).code, Some(0));
    let after = std::fs::read_to_string(p.path().join("out/catalog.toml")).expect("catalog");
    assert_ne!(before, after, "the expiry follows expires_days");
    std::fs::write(p.path().join("out/catalog.toml"), format!("{after}# tampered\n")).expect("write");
    std::fs::write(p.path().join("out/report.json"), "{\"tampered\": true}").expect("write");
    let r = run(p.path(), &["build", "--key", "test.key", "--format", "json"], &[]);
    assert!(
        !r.stdout.contains("tampered"),
        "the report printed is the one computed, never read back"
    );
    assert_eq!(verify(p.path()).code, Some(0));
}

#[test]
fn verify_refuses_links_swapped_keys_and_odd_names() {
    let p = project();
    assert_eq!(build(p.path(), &[]).code, Some(0));
    let out = p.path().join("out");
    // A retained script replaced by a link to an identical copy elsewhere.
    let copy = p.path().join("elsewhere.py");
    std::fs::copy(out.join("skills/ledger/scripts/tool.py"), &copy).expect("copy");
    std::fs::remove_file(out.join("skills/ledger/scripts/tool.py")).expect("rm");
    std::os::unix::fs::symlink(&copy, out.join("skills/ledger/scripts/tool.py")).expect("symlink");
    let v = verify(p.path());
    assert_eq!(v.code, Some(1));
    assert!(
        v.stderr.contains("skills/ledger/scripts/tool.py: a symbolic link"),
        "{}",
        v.stderr
    );

    let q = project();
    assert_eq!(build(q.path(), &[]).code, Some(0));
    let trusted = q.path().join("trusted.pub");
    std::fs::copy(q.path().join("out/skillc.pub"), &trusted).expect("copy");
    std::fs::write(q.path().join("out/skillc.pub"), "garbage\n").expect("write");
    std::fs::write(q.path().join("out/skills\\ledger\\SKILL.md"), "evil").expect("write");
    let v = run(
        q.path(),
        &["verify", "out", "--key", "trusted.pub", "--state", "s.json"],
        &[],
    );
    assert_eq!(v.code, Some(1), "{}", v.stdout);
    assert!(v.stderr.contains("hash mismatch: skillc.pub"), "{}", v.stderr);
    assert!(
        v.stderr.contains("not in the signed catalog: skills\\ledger\\SKILL.md"),
        "{}",
        v.stderr
    );
}

#[test]
fn a_damaged_rollback_state_is_an_error_not_a_reset() {
    let p = project();
    assert_eq!(build(p.path(), &[]).code, Some(0));
    std::fs::write(p.path().join("state.json"), "garbage{").expect("write");
    let v = verify(p.path());
    assert_eq!(v.code, Some(2));
    assert!(
        v.stderr
            .contains("refusing to verify without its pinned keys and rollback protection"),
        "{}",
        v.stderr
    );
}

#[test]
fn a_script_path_going_up_is_not_this_skills_script() {
    let p = project();
    let md = p.path().join("skills/ledger/SKILL.md");
    std::fs::write(&md, "---\nname: ledger\ndescription: Records payments.\n---\n\n```bash\npython3 $SKILL_DIR/../other/scripts/tool.py payments list\npython3 scripts/./tool.py payments add --amount 3\n```\n")
        .expect("write");
    let r = run(p.path(), &["plan", "--format", "json", "skills"], &[]);
    let plans: Vec<String> = r.json()["skills"][0]["plans"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["subcommand"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        plans,
        vec!["payments add"],
        "`..` never maps onto this skill; `./` is normalized"
    );
}

#[test]
fn one_build_at_a_time() {
    let p = project();
    assert_eq!(build(p.path(), &[]).code, Some(0));
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .open(p.path().join(".skillc/build.lock"))
        .expect("lock file");
    lock.lock().expect("lock");
    let r = build(p.path(), &[]);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("another skillc build is running"), "{}", r.stderr);
    drop(lock);
    assert_eq!(build(p.path(), &[]).code, Some(0));
}

#[test]
fn out_of_range_times_are_refused() {
    let p = project();
    for bad in ["abc", "-1", "99999999999999"] {
        let r = build(p.path(), &[("SOURCE_DATE_EPOCH", bad)]);
        assert_eq!(r.code, Some(2), "{bad}: {}", r.stderr);
        assert!(
            r.stderr.contains("SOURCE_DATE_EPOCH must be a Unix time"),
            "{}",
            r.stderr
        );
    }
    std::fs::write(p.path().join("pipeline.toml"), "[signing]\nexpires_days = 4294967295\n").expect("write");
    let r = build(p.path(), &[]);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("CF001"), "{}", r.stderr);
}

#[test]
fn huge_job_counts_are_refused() {
    let dir: PathBuf = std::env::temp_dir();
    let r = run(&dir, &["-j", "100000", "explain"], &[]);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("--jobs must be between 1 and 256"), "{}", r.stderr);
}

/// A file (or a link) where the output folder would be is the user's: refused with exit 2,
/// never renamed aside nor replaced by a catalog folder. Fails before the fix: the build
/// exited 0 and the file became the hidden spare generation `.notes.txt.skillc-next`.
#[test]
fn an_output_path_that_is_a_file_or_a_link_is_refused() {
    let p = project();
    std::fs::write(p.path().join("notes.txt"), "my precious notes").expect("write");
    let r = run(p.path(), &["build", "--key", "test.key", "--out", "notes.txt"], &[]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("notes.txt is a file, not a folder"), "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(p.path().join("notes.txt")).expect("kept"),
        "my precious notes"
    );
    assert!(!p.path().join(".notes.txt.skillc-next").exists());
    let folder = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink(folder.path(), p.path().join("linked")).expect("symlink");
    let r = run(p.path(), &["build", "--key", "test.key", "--out", "linked"], &[]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("linked is a symbolic link"), "{}", r.stderr);
    assert_eq!(std::fs::read_dir(folder.path()).expect("folder").count(), 0);
}

/// Standard error closed (`skillc build 2>&1 | head -c 5`): the error is lost, not a panic,
/// and the exit status is still 2. Fails before the fix: `eprintln!` panicked (exit 101).
#[test]
fn a_closed_standard_error_is_not_a_panic() {
    let p = project();
    std::fs::write(p.path().join("pipeline.toml"), "[admission]\nskip = [\"L9\"]\n").expect("write");
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let status = Command::new(crate::common::SKILLC)
        .args(["build", "--key", "test.key"])
        .current_dir(p.path())
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::null())
        .stderr(writer)
        .status()
        .expect("run skillc");
    assert_eq!(status.code(), Some(2), "{status}");
}

/// A catalog whose `skillc.pub` is garbled does not verify: exit 1 and a JSON report, not a
/// command failure (exit 2, no JSON) — it is a damaged catalog.
#[test]
fn a_garbled_public_key_in_the_catalog_is_a_failure_with_a_report() {
    let p = project();
    assert_eq!(build(p.path(), &[]).code, Some(0));
    assert_eq!(verify(p.path()).code, Some(0), "pins the key");
    std::fs::write(p.path().join("out/skillc.pub"), "junk\n").expect("write");
    let r = run(
        p.path(),
        &["verify", "out", "--state", "state.json", "--format", "json"],
        &[],
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stdout));
    assert_eq!(v["ok"], false, "{v}");
    assert_eq!(v["failures"][0]["kind"], "malformed", "{v}");
}

/// A file planted in `out/` under a name holding terminal escapes is named escaped by
/// `verify` and by the build's warning, never printed raw.
#[test]
fn planted_file_names_are_printed_escaped() {
    let p = project();
    assert_eq!(build(p.path(), &[]).code, Some(0));
    std::fs::write(p.path().join("out/e\u{1b}]0;PWNED\u{7}vil"), "x").expect("write");
    let v = verify(p.path());
    assert_eq!(v.code, Some(1), "{}", v.stderr);
    assert!(
        v.stderr
            .contains("not in the signed catalog: e\\u{1b}]0;PWNED\\u{7}vil"),
        "{}",
        v.stderr
    );
    assert!(!v.stderr.contains('\u{1b}'), "{}", v.stderr);
    std::fs::write(p.path().join("skills/ledger/notes.md"), "more\n").expect("write");
    let b = build(p.path(), &[]);
    assert!(b.stderr.contains("is not part of the catalog"), "{}", b.stderr);
    assert!(!b.stderr.contains('\u{1b}'), "{}", b.stderr);
}

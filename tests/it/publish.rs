//! Publishing `out/` under faults (issue 18, items 6, 7 and 8): builds of the real binary
//! killed at random moments while `verify` reads `out/` in a loop, SIGINT, alternating
//! `--out` folders, and a catalog whose build state is lost.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::common::{Run, SKILLC, skillc_env, tree, write_test_key};

const SDE: (&str, &str) = ("SOURCE_DATE_EPOCH", "1800000000");

/// A project of `n` generated skills (two sub-commands each) and a test key.
fn project(n: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    write_test_key(&dir.path().join("test.key"));
    for i in 0..n {
        write_skill(dir.path(), i, "");
    }
    dir
}

/// Skill `i`, its description ending with `extra` (an edit). Words of its own in every
/// description keep the skills apart at L3.
fn write_skill(root: &Path, i: usize, extra: &str) {
    let objects = [
        "files", "events", "contacts", "messages", "issues", "pages", "rows", "labels",
    ];
    let name = format!("tool-{i:03}");
    let d = root.join("skills").join(&name);
    std::fs::create_dir_all(d.join("scripts")).expect("mkdir");
    let o = objects[i % objects.len()];
    let text = format!(
        "---\nname: {name}\ndescription: Keeps k{i}alpha k{i}beta k{i}gamma k{i}delta {o}{extra}.\n---\n\n# {name}\n\n```bash\npython3 scripts/tool.py {o} list --max 10\npython3 scripts/tool.py {o} get --id 1\n```\n"
    );
    std::fs::write(d.join("SKILL.md"), text).expect("write");
    std::fs::write(d.join("scripts/tool.py"), format!("print('{i}')\n")).expect("write");
}

fn run(dir: &Path, args: &[&str]) -> Run {
    skillc_env(dir, args, &[SDE])
}

fn build(dir: &Path, args: &[&str]) -> Run {
    let mut a = vec!["build", "--key", "test.key", "--quiet"];
    a.extend_from_slice(args);
    let r = run(dir, &a);
    assert_eq!(r.code, Some(0), "build failed:\n{}\n{}", r.stdout, r.stderr);
    r
}

fn spawn_build(dir: &Path) -> Child {
    Command::new(SKILLC)
        .args(["build", "--key", "test.key", "--quiet"])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("SOURCE_DATE_EPOCH", SDE.1)
        .env_remove("SKILLC_SIGNING_KEY")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn build")
}

/// Files of skillc's temporary shape anywhere under `dir`.
fn temp_files(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(".skillc-"))
        .map(|e| e.path().to_path_buf())
        .collect()
}

/// Runs `skillc verify out` in a loop until stopped, counting runs in `runs`; returns the
/// failures.
fn verify_loop(dir: PathBuf, stop: Arc<AtomicBool>, runs: Arc<AtomicUsize>) -> std::thread::JoinHandle<Vec<String>> {
    std::thread::spawn(move || {
        let mut failures = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            let r = run(&dir, &["verify", "out", "--state", "verify-state.json"]);
            runs.fetch_add(1, Ordering::Relaxed);
            if r.code != Some(0) {
                failures.push(format!("{}{}", r.stdout, r.stderr));
            }
        }
        failures
    })
}

/// A deterministic pseudo-random sequence (fixed seed: the same kill moments on every run).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n.max(1)
    }
}

/// Issue 18, item 6: while builds of the real binary are killed at random moments (each after
/// an edit, so that every build has files to write), `verify` run in a loop never fails: at
/// every instant `out/` is the previous complete catalog or the new one. No temporary file of
/// skillc's is ever in `out/`, and the next build recovers: it succeeds, leaves no temporary
/// file in its spare generation either, and `out/` is byte-identical to a clean build of the
/// same skills. Fails before atomic publishing: killed mid-write, `out/` held a mix of two
/// catalogs (verify failed) and temporary files.
#[test]
fn a_reader_sees_a_whole_catalog_while_builds_are_killed() {
    let p = project(40);
    let dir = p.path();
    let start = Instant::now();
    build(dir, &[]);
    let full = start.elapsed();
    let stop = Arc::new(AtomicBool::new(false));
    let runs = Arc::new(AtomicUsize::new(0));
    let reader = verify_loop(dir.to_path_buf(), stop.clone(), runs.clone());
    let mut rng = Lcg(0x18_06);
    let mut killed = 0;
    // At least 12 builds, 8 of them killed, over at least 6 verify runs (a debug `verify` is
    // slow on a loaded machine); at most 60 builds.
    let mut round = 0;
    while round < 60 && (round < 12 || killed < 8 || runs.load(Ordering::Relaxed) < 6) {
        round += 1;
        // Every skill edited: each build rewrites most executors.
        for i in 0..40 {
            write_skill(dir, i, &format!(" r{round}"));
        }
        let mut child = spawn_build(dir);
        let wait = Duration::from_millis(rng.below(u64::try_from(full.as_millis()).unwrap_or(1000) + 1));
        std::thread::sleep(wait);
        if child.try_wait().expect("try_wait").is_none() {
            child.kill().expect("kill");
            killed += 1;
        }
        let _ = child.wait();
        assert_eq!(temp_files(&dir.join("out")), Vec::<PathBuf>::new(), "round {round}");
    }
    stop.store(true, Ordering::Relaxed);
    let failures = reader.join().expect("reader");
    let runs = runs.load(Ordering::Relaxed);
    assert!(
        failures.is_empty(),
        "verify failed {} of {runs} times:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(runs >= 6 && killed >= 8, "{runs} verify runs, {killed} builds killed");
    // The next build recovers: the same `out/` as a clean build of the same skills.
    build(dir, &[]);
    assert_eq!(
        run(dir, &["verify", "out", "--state", "verify-state.json"]).code,
        Some(0)
    );
    assert_eq!(temp_files(&dir.join("out")), Vec::<PathBuf>::new());
    assert_eq!(temp_files(&dir.join(".out.skillc-next")), Vec::<PathBuf>::new());
    let clean = tempfile::tempdir().expect("tempdir");
    crate::common::copy_dir(&dir.join("skills"), &clean.path().join("skills"));
    write_test_key(&clean.path().join("test.key"));
    build(clean.path(), &[]);
    assert_same(
        &strip_times(tree(&dir.join("out"))),
        &strip_times(tree(&clean.path().join("out"))),
        "the recovered out/ against a clean build",
    );
}

/// Two trees are equal; else the paths that differ (not the bytes: trees are large).
fn assert_same(a: &BTreeMap<String, (Vec<u8>, bool)>, b: &BTreeMap<String, (Vec<u8>, bool)>, what: &str) {
    let differ: Vec<&String> = a.keys().chain(b.keys()).filter(|k| a.get(*k) != b.get(*k)).collect();
    assert!(
        differ.is_empty(),
        "{what}: {} files differ: {:?}",
        differ.len(),
        &differ[..differ.len().min(10)]
    );
}

/// The files of a tree but the catalog and the report, which carry the catalog's version
/// (one more for every build of the project, so it differs from a clean build's).
fn strip_times(mut t: BTreeMap<String, (Vec<u8>, bool)>) -> BTreeMap<String, (Vec<u8>, bool)> {
    for f in ["catalog.toml", "catalog.toml.sig", "report.json"] {
        t.remove(f);
    }
    t
}

/// Issue 18, item 6: SIGINT in the middle of a build stops it; `out/` still verifies (the
/// previous catalog), holds no temporary file, and the next build succeeds.
#[test]
fn sigint_stops_a_build_cleanly() {
    let p = project(40);
    let dir = p.path();
    let start = Instant::now();
    build(dir, &[]);
    let full = start.elapsed();
    let before = tree(&dir.join("out"));
    for i in 0..40 {
        write_skill(dir, i, " edited");
    }
    let mut child = spawn_build(dir);
    std::thread::sleep(full / 2);
    let pid = child.id().to_string();
    let _ = Command::new("kill").args(["-INT", &pid]).status();
    let status = child.wait().expect("wait");
    // Stopped before the switch, `out/` is exactly the previous catalog; stopped after it (a
    // SIGINT landing between the switch and the exit), it is the whole new one.
    let stopped = tree(&dir.join("out"));
    let switched = !status.success() && stopped != before;
    assert_eq!(
        run(dir, &["verify", "out", "--state", "verify-state.json"]).code,
        Some(0)
    );
    assert_eq!(temp_files(&dir.join("out")), Vec::<PathBuf>::new());
    build(dir, &[]);
    if switched {
        // The rebuild of the same skills changes nothing but the catalog's version.
        assert_same(
            &strip_times(tree(&dir.join("out"))),
            &strip_times(stopped),
            "SIGINT after the switch",
        );
    }
    assert_eq!(
        run(dir, &["verify", "out", "--state", "verify-state.json"]).code,
        Some(0)
    );
}

/// Issue 18, item 7: the build state is per output folder. Building into `a`, then `b`, then
/// (after a skill is removed) `a` again leaves no file of the removed skill in `a` — each
/// folder is exactly a clean build of the skills at that moment. Fails before the fix: the
/// state of `b` was taken for `a`'s, so `a`'s files of the removed skill were "foreign" and
/// stayed.
#[test]
fn alternating_output_folders_leave_no_stale_files() {
    let p = project(6);
    let dir = p.path();
    build(dir, &["--out", "a"]);
    build(dir, &["--out", "b"]);
    assert!(dir.join("a/skills/tool-005").is_dir() && dir.join("b/skills/tool-005").is_dir());
    std::fs::remove_dir_all(dir.join("skills/tool-005")).expect("rm");
    build(dir, &["--out", "a"]);
    for out in ["a", "b"] {
        if out == "b" {
            build(dir, &["--out", "b"]);
        }
        let files = tree(&dir.join(out));
        let stale: Vec<&String> = files.keys().filter(|f| f.contains("tool-005")).collect();
        assert!(stale.is_empty(), "{out} keeps files of a removed skill: {stale:?}");
        assert_eq!(run(dir, &["verify", out, "--state", "verify-state.json"]).code, Some(0));
    }
}

/// Issue 18, item 8: with its state lost, a build repairs (removes stale files from) only a
/// catalog signed by its own key. Another key's catalog is refused, and left exactly as it
/// was; the build's own catalog is repaired. Fails before the fix: the other key's catalog
/// had its `executors/` and `skills/` files removed and was replaced.
#[test]
fn only_a_catalog_signed_by_the_builds_own_key_is_repaired_without_state() {
    let p = project(4);
    let dir = p.path();
    build(dir, &[]);
    let theirs = tree(&dir.join("out"));
    // The state is lost, the skills changed, and another key builds.
    std::fs::remove_dir_all(dir.join(".skillc")).expect("rm state");
    std::fs::remove_dir_all(dir.join("skills/tool-003")).expect("rm skill");
    let other = skillc::SecretKey::from_seed([7u8; 32], *b"otherKEY");
    std::fs::write(dir.join("other.key"), other.to_file()).expect("write key");
    let r = run(dir, &["build", "--key", "other.key", "--quiet"]);
    assert_ne!(
        r.code,
        Some(0),
        "a catalog signed by another key was replaced:\n{}",
        r.stdout
    );
    assert!(r.stderr.contains("not signed by this build's key"), "{}", r.stderr);
    assert_same(&tree(&dir.join("out")), &theirs, "the other key's catalog");
    // The build's own key repairs its catalog: the removed skill's files go.
    std::fs::remove_dir_all(dir.join(".skillc")).expect("rm state");
    build(dir, &[]);
    let files = tree(&dir.join("out"));
    assert!(!files.keys().any(|f| f.contains("tool-003")), "stale files stayed");
    assert_eq!(
        run(dir, &["verify", "out", "--state", "verify-state.json"]).code,
        Some(0)
    );
}

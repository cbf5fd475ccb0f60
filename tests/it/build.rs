//! `skillc build` and `skillc verify` end to end: the example skills build cleanly into a
//! catalog the stock `minisign` accepts; tampering is caught and named; builds are
//! reproducible and a build that changes nothing writes nothing; wrappers run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Run, SKILLC, copy_dir, corpus, insta_settings, manifest_dir, skillc_env, tree, write_test_key};

/// A project in a temporary folder: a copy of the repository's example skills and a test key.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new() -> Project {
        let dir = tempfile::tempdir().expect("tempdir");
        copy_dir(&manifest_dir().join("skills"), &dir.path().join("skills"));
        write_test_key(&dir.path().join("test.key"));
        Project { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn out(&self) -> PathBuf {
        self.path().join("out")
    }

    fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        skillc_env(self.path(), args, env)
    }

    fn build(&self, env: &[(&str, &str)]) -> Run {
        self.build_with(&[], env)
    }

    fn build_with(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut all = vec!["build", "--key", "test.key"];
        all.extend_from_slice(args);
        let r = self.run(&all, env);
        assert_eq!(r.code, Some(0), "build failed:\n{}\n{}", r.stdout, r.stderr);
        r
    }

    fn verify(&self) -> Run {
        self.run(&["verify", "out", "--state", "verify-state.json"], &[])
    }
}

const SDE: (&str, &str) = ("SOURCE_DATE_EPOCH", "1800000000");

fn executor_dirs(out: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for skill in std::fs::read_dir(out.join("executors")).expect("executors") {
        for e in std::fs::read_dir(skill.expect("entry").path()).expect("skill dir") {
            v.push(e.expect("entry").path());
        }
    }
    v.sort();
    v
}

#[test]
fn the_example_builds_cleanly_and_verifies() {
    let p = Project::new();
    let r = p.build(&[SDE]);
    assert!(r.stdout.contains("0 rejected"), "{}", r.stdout);
    assert!(r.stdout.starts_with("built 5 skills"), "{}", r.stdout);
    let v = p.verify();
    assert_eq!(v.code, Some(0), "{}{}", v.stdout, v.stderr);
    assert!(v.stdout.starts_with("verified out:"), "{}", v.stdout);

    // Exactly the contract: top-level files, and four files per executor.
    let top: Vec<String> = std::fs::read_dir(p.out())
        .expect("out")
        .map(|e| e.expect("e").file_name().to_string_lossy().into_owned())
        .collect();
    let mut top = top;
    top.sort();
    assert_eq!(
        top,
        [
            "catalog.toml",
            "catalog.toml.sig",
            "executors",
            "menu.files",
            "menu.idx",
            "menu.idx.sig",
            "report.json",
            "routing.toml",
            "skillc.pub",
            "skills"
        ]
    );
    let dirs = executor_dirs(&p.out());
    assert!(dirs.len() >= 25, "{} executors", dirs.len());
    for d in &dirs {
        let name = d
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut files: Vec<String> = std::fs::read_dir(d)
            .expect("dir")
            .map(|e| e.expect("e").file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        let mut want = vec![
            format!("{name}.py"),
            "manifest.lang_state.json".into(),
            "manifest.toml".into(),
            "manifest.toml.sig".into(),
        ];
        want.sort();
        assert_eq!(files, want, "{}", d.display());
    }
    // The report lists every skill with its outcome.
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(p.out().join("report.json")).expect("report")).expect("json");
    assert_eq!(report["summary"]["rejected"], 0);
    assert_eq!(report["reproducible"], true);
    assert_eq!(report["skills"].as_array().map(Vec::len), Some(5));
}

#[test]
fn stock_minisign_verifies_catalog_and_manifests() {
    let available = Command::new("minisign").arg("-v").output().is_ok();
    if !available {
        crate::common::skip("minisign is not installed (apt-get install -y minisign)");
        return;
    }
    let p = Project::new();
    p.build(&[SDE]);
    let mut files = vec![p.out().join("catalog.toml")];
    files.extend(executor_dirs(&p.out()).into_iter().map(|d| d.join("manifest.toml")));
    for f in files {
        let sig = PathBuf::from(format!("{}.sig", f.display()));
        let out = Command::new("minisign")
            .args(["-V", "-q", "-m"])
            .arg(&f)
            .arg("-x")
            .arg(&sig)
            .arg("-p")
            .arg(p.out().join("skillc.pub"))
            .output()
            .expect("minisign");
        assert!(
            out.status.success(),
            "minisign rejects {}: {}",
            f.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // A changed byte is rejected by minisign too.
    let catalog = p.out().join("catalog.toml");
    let mut bytes = std::fs::read(&catalog).expect("read");
    bytes.push(b'\n');
    std::fs::write(&catalog, bytes).expect("write");
    let out = Command::new("minisign")
        .args(["-V", "-q", "-m"])
        .arg(&catalog)
        .arg("-x")
        .arg(p.out().join("catalog.toml.sig"))
        .arg("-p")
        .arg(p.out().join("skillc.pub"))
        .output()
        .expect("minisign");
    assert!(!out.status.success());
}

/// Builds, applies `tamper` to `out/`, and checks that verify fails naming `cause`.
fn tampered(tamper: impl FnOnce(&Path), cause: &str) {
    let p = Project::new();
    p.build(&[SDE]);
    assert_eq!(p.verify().code, Some(0));
    tamper(&p.out());
    let v = p.verify();
    assert_eq!(v.code, Some(1), "verify accepted a tampered catalog:\n{}", v.stdout);
    assert!(v.stderr.contains(cause), "expected `{cause}` in:\n{}", v.stderr);
}

fn flip_byte(path: &Path) {
    let mut b = std::fs::read(path).expect("read");
    let i = b.len() / 2;
    b[i] ^= 0x01;
    std::fs::write(path, b).expect("write");
}

fn first_executor(out: &Path) -> PathBuf {
    executor_dirs(out).into_iter().next().expect("an executor")
}

#[test]
fn tampering_with_a_wrapper_is_caught() {
    tampered(
        |out| {
            let d = first_executor(out);
            let name = d
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            flip_byte(&d.join(format!("{name}.py")));
        },
        "hash mismatch: executors/",
    );
}

#[test]
fn tampering_with_a_manifest_is_caught() {
    tampered(
        |out| flip_byte(&first_executor(out).join("manifest.toml")),
        "bad signature: executors/",
    );
}

#[test]
fn tampering_with_a_retained_script_is_caught() {
    tampered(
        |out| flip_byte(&out.join("skills/workspace/scripts/workspace.py")),
        "hash mismatch: skills/workspace/scripts/workspace.py",
    );
}

#[test]
fn tampering_with_the_catalog_is_caught() {
    tampered(
        |out| flip_byte(&out.join("catalog.toml")),
        "bad signature: catalog.toml",
    );
}

#[test]
fn a_deleted_signature_is_caught() {
    tampered(
        |out| std::fs::remove_file(first_executor(out).join("manifest.toml.sig")).expect("rm"),
        "missing file: executors/",
    );
}

#[test]
fn an_unsigned_executor_folder_is_caught() {
    tampered(
        |out| {
            let d = first_executor(out);
            let fake = d.with_file_name("delete_files_intruder");
            copy_dir(&d, &fake);
        },
        "not in the signed catalog: executors/",
    );
}

#[test]
fn an_expired_catalog_is_refused() {
    let p = Project::new();
    std::fs::write(p.path().join("pipeline.toml"), "[signing]\nexpires_days = 1\n").expect("write");
    p.build(&[("SOURCE_DATE_EPOCH", "1000000000")]);
    let v = p.verify();
    assert_eq!(v.code, Some(1));
    assert!(
        v.stderr
            .contains("expired: the catalog expired at 2001-09-10T01:46:40Z"),
        "{}",
        v.stderr
    );
}

#[test]
fn an_older_catalog_after_a_newer_one_is_refused() {
    let p = Project::new();
    p.build(&[("SOURCE_DATE_EPOCH", "2000000000")]);
    assert_eq!(p.verify().code, Some(0));
    p.build(&[("SOURCE_DATE_EPOCH", "1900000000")]);
    let v = p.verify();
    assert_eq!(v.code, Some(1), "{}", v.stdout);
    assert!(
        v.stderr
            .contains("rollback: catalog_version 1900000000 is lower than 2000000000"),
        "{}",
        v.stderr
    );
}

#[test]
fn builds_are_byte_identical_across_paths_and_thread_counts() {
    let a = Project::new();
    let b = Project::new();
    assert_ne!(a.path(), b.path());
    a.run(&["-j", "1", "build", "--key", "test.key"], &[SDE]);
    b.run(&["-j", "8", "build", "--key", "test.key"], &[SDE]);
    let (ta, tb) = (tree(&a.out()), tree(&b.out()));
    assert!(!ta.is_empty());
    assert_eq!(ta.keys().collect::<Vec<_>>(), tb.keys().collect::<Vec<_>>());
    for (path, content) in &ta {
        assert!(tb.get(path) == Some(content), "{path} differs between the two builds");
    }
}

fn mtimes(dir: &Path) -> BTreeMap<String, std::time::SystemTime> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            (
                e.path().to_string_lossy().into_owned(),
                e.metadata().expect("meta").modified().expect("mtime"),
            )
        })
        .collect()
}

#[test]
fn a_build_that_changes_nothing_writes_nothing() {
    for env in [&[SDE][..], &[][..]] {
        let p = Project::new();
        p.build(env);
        let before = mtimes(&p.out());
        std::thread::sleep(std::time::Duration::from_millis(20));
        let again = p.build(env);
        assert!(
            again.stdout.contains("0 executors changed, 0 files written or removed"),
            "{}",
            again.stdout
        );
        assert_eq!(before, mtimes(&p.out()), "a no-op build rewrote files (env {env:?})");
        assert_eq!(p.verify().code, Some(0));
    }
}

#[test]
fn outputs_of_a_removed_skill_disappear() {
    let p = Project::new();
    p.build(&[SDE]);
    assert!(p.out().join("skills/workspace").is_dir());
    std::fs::remove_dir_all(p.path().join("skills/workspace")).expect("rm");
    let r = p.build(&[SDE]);
    assert!(r.stdout.starts_with("built 4 skills"), "{}", r.stdout);
    assert!(!p.out().join("skills/workspace").exists());
    assert!(!p.out().join("executors/workspace").exists());
    assert_eq!(p.verify().code, Some(0));
}

#[test]
fn a_first_build_creates_a_private_development_key() {
    let p = Project::new();
    let r = p.run(&["build"], &[SDE]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stderr.contains("created a development signing key"), "{}", r.stderr);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(p.path().join(".skillc/signing.key"))
        .expect("key")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    assert_eq!(
        std::fs::read_to_string(p.path().join(".skillc/.gitignore"))
            .expect("gitignore")
            .lines()
            .last(),
        Some("*")
    );
    // The audit log has one line per event.
    let audit = std::fs::read_to_string(p.path().join(".skillc/audit.jsonl")).expect("audit");
    let events: Vec<serde_json::Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(events.first().map(|e| e["event"].clone()), Some("build.started".into()));
    assert_eq!(events.last().map(|e| e["event"].clone()), Some("build.finished".into()));
    assert!(events.iter().any(|e| e["event"] == "executor.admitted"));
}

#[test]
fn unknown_pipeline_keys_are_errors_with_a_position() {
    let p = Project::new();
    std::fs::write(
        p.path().join("pipeline.toml"),
        "[pipeline]\nout = \"dist\"\ncolour = \"red\"\n",
    )
    .expect("write");
    let r = p.run(&["build", "--key", "test.key"], &[]);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr.contains("CF002") && r.stderr.contains("pipeline.toml:3:1"),
        "{}",
        r.stderr
    );
    assert!(!p.path().join("dist").exists() && !p.out().exists());
}

#[test]
fn a_folder_skillc_does_not_own_is_never_written() {
    let p = Project::new();
    std::fs::create_dir(p.out()).expect("mkdir");
    std::fs::write(p.out().join("notes.txt"), "precious").expect("write");
    let r = p.run(&["build", "--key", "test.key"], &[SDE]);
    assert_eq!(r.code, Some(2));
    assert_eq!(
        std::fs::read_to_string(p.out().join("notes.txt")).expect("kept"),
        "precious"
    );
}

#[test]
fn every_generated_manifest_and_language_state_is_reviewed() {
    let p = Project::new();
    p.build(&[SDE]);
    for d in executor_dirs(&p.out()) {
        let name = d
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let manifest = std::fs::read_to_string(d.join("manifest.toml")).expect("manifest");
        let lang = std::fs::read_to_string(d.join("manifest.lang_state.json")).expect("lang state");
        // Manifests are valid TOML and carry their own name.
        let parsed: toml::Table = toml::from_str(&manifest).expect("manifest is TOML");
        assert_eq!(parsed["name"].as_str(), Some(name.as_str()));
        insta_settings().bind(|| {
            insta::assert_snapshot!(format!("build_manifest_{name}"), manifest);
            insta::assert_snapshot!(format!("build_lang_state_{name}"), lang);
        });
    }
}

/// Runs a wrapper with JSON arguments and the given environment.
fn wrapper(
    out: &Path,
    executor: &str,
    args: &str,
    env: &[(&str, &str)],
    remove: &[&str],
) -> (Option<i32>, serde_json::Value) {
    let dir = executor_dirs(out)
        .into_iter()
        .find(|d| d.ends_with(executor))
        .unwrap_or_else(|| panic!("no executor {executor}"));
    let mut cmd = Command::new("python3");
    cmd.arg(dir.join(format!("{executor}.py"))).arg(args);
    for k in remove {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().expect("python3");
    let stdout = String::from_utf8_lossy(&o.stdout);
    (
        o.status.code(),
        serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}\n{}", String::from_utf8_lossy(&o.stderr))),
    )
}

#[test]
fn a_wrapper_runs_the_script_asks_for_credentials_and_checks_types() {
    let p = Project::new();
    p.build(&[SDE]);
    let data = p.path().join("workspace-data");
    let data = data.to_string_lossy().into_owned();
    let env = [("WORKSPACE_TOKEN", "test-token"), ("WORKSPACE_DATA_DIR", data.as_str())];
    let exec = "send_messages_workspace";
    let args = r#"{"to": "ada@example.com", "subject": "Hello", "body": "From the test."}"#;

    let (code, ok) = wrapper(&p.out(), exec, args, &env, &[]);
    assert_eq!((code, ok["ok"].as_bool()), (Some(0), Some(true)), "{ok}");

    let (code, needs) = wrapper(
        &p.out(),
        exec,
        args,
        &[("WORKSPACE_DATA_DIR", data.as_str())],
        &["WORKSPACE_TOKEN"],
    );
    assert_eq!(code, Some(3), "{needs}");
    assert_eq!(needs["decision"], "needs_inputs");
    assert_eq!(needs["binding"], "WORKSPACE_TOKEN");
    assert_eq!(needs["resume"]["args"]["to"], "ada@example.com");
    assert!(!needs.to_string().contains("test-token"), "never a secret value");

    let (code, bad) = wrapper(&p.out(), exec, r#"{"to": 42, "subject": "x", "body": "y"}"#, &env, &[]);
    assert_eq!(code, Some(2), "{bad}");
    assert_eq!(bad["error"], "argument `to` must be string, got integer");

    let describe = Command::new("python3")
        .arg(first_executor(&p.out()).join(format!(
                "{}.py",
                first_executor(&p.out())
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            )))
        .arg("--describe")
        .output()
        .expect("python3");
    let contract: serde_json::Value = serde_json::from_slice(&describe.stdout).expect("describe prints JSON");
    assert!(contract["args"].is_array() && contract["command"]["kind"].is_string());
}

#[test]
fn the_corpus_builds_and_verifies() {
    let Some(corpus) = corpus() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    write_test_key(&dir.path().join("test.key"));
    let out = dir.path().join("out");
    let run = Command::new(SKILLC)
        .args(["build", "--key", "test.key", "--quiet", "--skills"])
        .arg(&corpus)
        .arg("--out")
        .arg(&out)
        .current_dir(dir.path())
        .env("SOURCE_DATE_EPOCH", "1800000000")
        .output()
        .expect("build");
    assert!(
        matches!(run.status.code(), Some(0 | 1)),
        "build crashed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).expect("report")).expect("json");
    let skills = report["skills"].as_array().cloned().unwrap_or_default();
    assert_eq!(skills.len(), 1689);
    assert!(
        skills
            .iter()
            .all(|s| matches!(s["status"].as_str(), Some("ok" | "rejected" | "instruction-only")))
    );
    let verify = Command::new(SKILLC)
        .arg("verify")
        .arg(&out)
        .arg("--state")
        .arg(dir.path().join("state.json"))
        .output()
        .expect("verify");
    assert!(verify.status.success(), "{}", String::from_utf8_lossy(&verify.stdout));
}

fn write_skill(root: &Path, folder: &str, name: &str, body: &str) {
    let dir = root.join(folder);
    std::fs::create_dir_all(dir.join("scripts")).expect("mkdir");
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: Test skill {name} for admission.\n---\n\n{body}"),
    )
    .expect("write");
    std::fs::write(dir.join("scripts/tool.py"), "print('{}')\n").expect("write");
}

#[test]
fn skills_sharing_a_name_or_with_a_non_ascii_name_are_rejected_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_test_key(&dir.path().join("test.key"));
    let cmds = "```bash\npython3 scripts/tool.py files list\n```\n";
    write_skill(&dir.path().join("skills/team-a"), "notes", "notes", cmds);
    write_skill(&dir.path().join("skills/team-b"), "notes", "notes", cmds);
    write_skill(&dir.path().join("skills"), "café", "café", cmds);
    write_skill(&dir.path().join("skills"), "fine", "fine", cmds);
    let run = Command::new(SKILLC)
        .args(["build", "--key", "test.key"])
        .current_dir(dir.path())
        .env("SOURCE_DATE_EPOCH", "1800000000")
        .output()
        .expect("build");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("rejected skill skills/team-a/notes: AD003: skill name `notes` is used by skills/team-a/notes, skills/team-b/notes"), "{stdout}");
    assert!(stdout.contains("rejected skill skills/café: SK057"), "{stdout}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/report.json")).expect("report")).expect("json");
    let status: BTreeMap<String, String> = report["skills"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            (
                s["path"].as_str().unwrap_or_default().to_owned(),
                s["status"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(status["skills/fine"], "ok");
    assert_eq!(status["skills/team-a/notes"], "rejected");
    assert_eq!(status["skills/café"], "rejected");
    // Rejected skills leave nothing in out/; the rest of the build goes on.
    assert!(dir.path().join("out/executors/fine/list_files_fine").is_dir());
    assert!(!dir.path().join("out/skills/notes").exists() && !dir.path().join("out/executors/notes").exists());
    let v = Command::new(SKILLC)
        .args(["verify", "out", "--state", "s.json"])
        .current_dir(dir.path())
        .output()
        .expect("verify");
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
}

#[test]
fn skipped_levels_are_recorded_and_refused_in_production() {
    let p = Project::new();
    let r = p.run(&["build", "--key", "test.key", "--skip", "L2,L5"], &[SDE]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let manifest = std::fs::read_to_string(first_executor(&p.out()).join("manifest.toml")).expect("manifest");
    assert!(manifest.contains("skipped = [\"L2\", \"L5\"]"), "{manifest}");
    assert!(manifest.contains("L2 = \"skipped\""), "{manifest}");
    assert!(manifest.contains("L3 = \"pass\""), "{manifest}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(p.out().join("report.json")).expect("report")).expect("json");
    assert_eq!(report["admission"]["skipped"], serde_json::json!(["L2", "L5"]));
    assert_eq!(report["admission"]["levels"]["L5"], "skipped");
    assert_eq!(report["admission"]["levels"]["L3"], "run");
    assert_eq!(p.verify().code, Some(0));
    // The consumer's copy of the release key: `--production` wants the key given explicitly.
    std::fs::copy(p.out().join("skillc.pub"), p.path().join("release.pub")).expect("copy");
    let prod = p.run(
        &[
            "verify",
            "out",
            "--state",
            "verify-state.json",
            "--production",
            "--key",
            "release.pub",
        ],
        &[],
    );
    assert_eq!(prod.code, Some(1));
    assert!(
        prod.stderr
            .contains("not a production catalog: admission levels were skipped"),
        "{}",
        prod.stderr
    );
    // The refusal is an error: on standard error, only the verdict on standard output.
    assert!(!prod.stdout.contains("error:"), "{}", prod.stdout);
    let l1 = p.run(&["build", "--key", "test.key", "--skip", "L1"], &[SDE]);
    assert_eq!(l1.code, Some(2), "L1 can never be skipped");
}

#[test]
fn keys_made_by_stock_minisign_sign_catalogs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let made = Command::new("minisign")
        .args(["-G", "-W", "-p", "mk.pub", "-s", "mk.key"])
        .current_dir(dir.path())
        .output();
    let Ok(made) = made else {
        crate::common::skip("minisign is not installed (apt-get install -y minisign)");
        return;
    };
    assert!(made.status.success());
    copy_dir(&manifest_dir().join("skills"), &dir.path().join("skills"));
    let run = Command::new(SKILLC)
        .args(["build", "--key", "mk.key"])
        .current_dir(dir.path())
        .output()
        .expect("build");
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let v = Command::new(SKILLC)
        .args(["verify", "out", "--key", "mk.pub", "--state", "s.json"])
        .current_dir(dir.path())
        .output()
        .expect("verify");
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
}

/// Every file and folder under `dir`: path → (inode, size, modification time).
fn inodes(dir: &Path) -> BTreeMap<String, (u64, u64, std::time::SystemTime)> {
    use std::os::unix::fs::MetadataExt;
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| {
            let m = std::fs::symlink_metadata(e.path()).expect("meta");
            (
                e.path().to_string_lossy().into_owned(),
                (m.ino(), m.len(), m.modified().expect("mtime")),
            )
        })
        .collect()
}

#[test]
fn a_fresh_process_noop_build_writes_no_file_and_says_up_to_date() {
    for env in [&[SDE][..], &[][..]] {
        let p = Project::new();
        p.build(env);
        // Files changed less than a second before a build are not yet recorded by their
        // metadata (git's "racily clean" files): the first no-op after they settle records
        // them in `.skillc/out/<id>/inputs.json`, as `git status` refreshes its index. From
        // then on a no-op writes nothing.
        std::thread::sleep(std::time::Duration::from_millis(1_100));
        assert!(p.build(env).stdout.starts_with("up to date"));
        let before = (inodes(&p.out()), inodes(&p.path().join(".skillc")));
        std::thread::sleep(std::time::Duration::from_millis(20));
        let again = p.build(env);
        assert!(again.stdout.starts_with("up to date: 5 skills in "), "{}", again.stdout);
        assert!(
            again.stdout.contains("0 executors changed, 0 files written or removed"),
            "{}",
            again.stdout
        );
        let after = (inodes(&p.out()), inodes(&p.path().join(".skillc")));
        assert_eq!(before.0, after.0, "out/ changed (env {env:?})");
        assert_eq!(before.1, after.1, ".skillc/ changed (env {env:?})");
        assert_eq!(p.verify().code, Some(0));
    }
}

#[test]
fn a_deleted_or_altered_out_is_rebuilt_despite_the_fingerprint() {
    let p = Project::new();
    p.build(&[SDE]);
    let reference = tree(&p.out());
    // The catalog altered: its size or time differs, the build runs and restores it.
    std::fs::write(p.out().join("catalog.toml"), "tampered").expect("write");
    let r = p.build(&[SDE]);
    assert!(r.stdout.starts_with("built 5 skills"), "{}", r.stdout);
    assert_eq!(tree(&p.out()), reference);
    // A file added to out/: the build runs and reports it.
    std::fs::write(p.out().join("notes.txt"), "mine").expect("write");
    let r = p.build(&[SDE]);
    assert!(
        r.stderr.contains("notes.txt is not part of the catalog"),
        "{}",
        r.stderr
    );
    std::fs::remove_file(p.out().join("notes.txt")).expect("rm");
    // out/ deleted: everything is written again.
    std::fs::remove_dir_all(p.out()).expect("rm");
    let r = p.build(&[SDE]);
    assert!(r.stdout.starts_with("built 5 skills"), "{}", r.stdout);
    assert_eq!(tree(&p.out()), reference);
    assert_eq!(p.verify().code, Some(0));
    // Files deep in out/ edited in place (one appended to, one changed at the same size) or
    // removed: a build whose inputs are unchanged checks only the top of out/ (README,
    // "What build checks"), so it answers "up to date" — and `verify` refuses the folder;
    // `build --force`, or a build without its fingerprint, checks every file and repairs it.
    let wrapper = walkdir::WalkDir::new(p.out().join("executors"))
        .into_iter()
        .filter_map(Result::ok)
        .find(|e| e.path().extension().is_some_and(|x| x == "py"))
        .expect("a wrapper")
        .into_path();
    let manifest = wrapper.with_file_name("manifest.toml");
    let same_size = |path: &std::path::Path| {
        let mut bytes = std::fs::read(path).expect("read");
        bytes[0] = if bytes[0] == b'#' { b'%' } else { b'#' };
        // A moment later, so that the time differs even on coarse clocks.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(path, bytes).expect("write");
    };
    for (what, tamper, deep) in [
        (
            "append",
            Box::new(|| {
                let text = std::fs::read_to_string(&wrapper).expect("read") + "#x\n";
                std::fs::write(&wrapper, text).expect("write");
            }) as Box<dyn Fn()>,
            true,
        ),
        ("same size", Box::new(|| same_size(&wrapper)), true),
        (
            "same size, no fingerprint",
            Box::new(|| {
                same_size(&manifest);
                for e in std::fs::read_dir(p.path().join(".skillc/out")).expect("per-output store") {
                    std::fs::remove_file(e.expect("entry").path().join("fingerprint.json")).expect("rm");
                }
            }),
            false,
        ),
        (
            "removed",
            Box::new(|| std::fs::remove_file(&manifest).expect("rm")),
            true,
        ),
    ] {
        tamper();
        let r = if deep {
            let r = p.build(&[SDE]);
            assert!(r.stdout.starts_with("up to date"), "{what}: {}", r.stdout);
            assert_ne!(p.verify().code, Some(0), "{what}: verify must refuse the tampered out/");
            p.build_with(&["--force"], &[SDE])
        } else {
            p.build(&[SDE])
        };
        assert!(r.stdout.starts_with("built 5 skills"), "{what}: {}", r.stdout);
        assert_eq!(tree(&p.out()), reference, "{what}");
        assert_eq!(p.verify().code, Some(0), "{what}");
    }
}

//! `skillc verify` pins the signer (issue 18, item 1; README, "Security model"): a catalog
//! re-signed with another key no longer verifies, whichever way the key was pinned — given
//! (`--key`), configured (`[verify] keys`), or recorded on first use; `--production` wants an
//! explicit key that is neither the folder's own nor a development key; rollback protection
//! survives a key change. And `verify` finds the project's catalog (item 11).

use std::path::Path;

use crate::common::{Run, copy_dir, manifest_dir, skillc_env};
use skillc::SecretKey;

/// Writes the key pair `NAME.key` / `NAME.pub` made from `seed` into `dir`; returns its id.
fn key_pair(dir: &Path, name: &str, seed: u8) -> String {
    let key = SecretKey::from_seed([seed; 32], [seed; 8]);
    std::fs::write(dir.join(format!("{name}.key")), key.to_file()).expect("write key");
    std::fs::write(dir.join(format!("{name}.pub")), key.public().to_file()).expect("write pub");
    key.public().key_id_hex()
}

/// A project with the `todo` example skill and the keys `a` and `b` (the attacker's).
fn project() -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(&manifest_dir().join("skills/todo"), &dir.path().join("skills/todo"));
    let a = key_pair(dir.path(), "a", 1);
    let b = key_pair(dir.path(), "b", 2);
    (dir, a, b)
}

fn build(dir: &Path, key: &str, sde: &str) {
    let r = skillc_env(dir, &["build", "--key", key, "--quiet"], &[("SOURCE_DATE_EPOCH", sde)]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
}

fn verify(dir: &Path, extra: &[&str]) -> Run {
    let mut args = vec!["verify", "out", "--state", "state.json"];
    args.extend_from_slice(extra);
    skillc_env(dir, &args, &[])
}

/// Item 1: with nothing given or configured, the first verification pins the signer (said
/// loudly); a catalog re-signed with another key is refused with both key ids; after
/// `--accept-key` the pin moves, and the old key is refused in turn.
#[test]
fn a_catalog_re_signed_by_another_key_is_refused_after_first_use() {
    let (dir, a, b) = project();
    let p = dir.path();
    build(p, "a.key", "1800000000");
    let r = verify(p, &[]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(&format!("trusting key {a} for out on first use")),
        "{}",
        r.stderr
    );
    // Verified again: pinned, no warning.
    let r = verify(p, &[]);
    assert_eq!(r.code, Some(0), "{}", r.stdout);
    assert!(!r.stderr.contains("first use"), "{}", r.stderr);

    // The attacker re-signs the folder with their key.
    build(p, "b.key", "1800000100");
    let r = verify(p, &[]);
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("untrusted signer"), "{}", r.stderr);
    assert!(
        r.stderr.contains(&a) && r.stderr.contains(&b),
        "both key ids: {}",
        r.stderr
    );
    assert!(r.stderr.contains(&format!("--accept-key {b}")), "{}", r.stderr);
    let j = skillc_env(p, &["verify", "out", "--state", "state.json", "--format", "json"], &[]).json();
    assert_eq!(j["ok"], false);
    assert_eq!(j["failures"][0]["kind"], "untrusted-signer", "{j}");

    // A real rotation, checked out of band: accepted once, then pinned.
    let r = verify(p, &["--accept-key", "0123456789ABCDEF"]);
    assert_eq!(r.code, Some(1), "the wrong id accepts nothing: {}", r.stdout);
    let r = verify(p, &["--accept-key", &b]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(&format!("pinned to key {b}, replacing key {a}")),
        "{}",
        r.stderr
    );
    assert_eq!(verify(p, &[]).code, Some(0));
    build(p, "a.key", "1800000200");
    let r = verify(p, &[]);
    assert_eq!(r.code, Some(1), "the old key is refused now: {}", r.stdout);
}

/// Item 1: a key given with `--key` or configured in `[verify] keys` must be the signer's;
/// listing two keys is the rotation window.
#[test]
fn the_given_or_configured_key_must_be_the_signers() {
    let (dir, a, b) = project();
    let p = dir.path();
    build(p, "b.key", "1800000000");
    let r = verify(p, &["--key", "a.pub"]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert!(r.stderr.contains(&a) && r.stderr.contains(&b), "{}", r.stderr);
    assert!(r.stderr.contains("is given for it"), "{}", r.stderr);
    assert_eq!(verify(p, &["--key", "b.pub"]).code, Some(0));

    // The consumer's project configures its signers.
    std::fs::write(p.join("pipeline.toml"), "[verify]\nkeys = [\"a.pub\"]\n").expect("write");
    let r = verify(p, &[]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert!(r.stderr.contains("configured for it"), "{}", r.stderr);
    std::fs::write(p.join("pipeline.toml"), "[verify]\nkeys = [\"a.pub\", \"b.pub\"]\n").expect("write");
    let r = verify(p, &[]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("configured in [verify] keys"), "{}", r.stdout);
    assert!(!r.stderr.contains("first use"), "{}", r.stderr);
}

/// Item 1: `--production` accepts only an explicit key: not a first-use pin, not the folder's
/// own `skillc.pub`, not the development key `skillc build` makes.
#[test]
fn production_accepts_only_an_explicit_release_key() {
    let (dir, _, _) = project();
    let p = dir.path();
    // A development key, made by the first build without a key.
    let r = skillc_env(p, &["build", "--quiet"], &[("SOURCE_DATE_EPOCH", "1800000000")]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(verify(p, &[]).code, Some(0), "a development catalog verifies as one");
    let prod = |extra: &[&str]| {
        let mut args = vec!["--production"];
        args.extend_from_slice(extra);
        verify(p, &args)
    };
    let r = prod(&[]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    // The refusal on standard error (fails before the fix: it was printed on stdout).
    assert!(
        r.stderr.contains("needs the signer's key pinned explicitly") && r.stdout.is_empty(),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
    let r = prod(&["--key", "out/skillc.pub"]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert!(r.stderr.contains("the catalog folder's own key"), "{}", r.stderr);
    let r = prod(&["--key", ".skillc/skillc.pub"]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert!(r.stderr.contains("development key"), "{}", r.stderr);
    // Copied out of .skillc/, it is still known as one.
    std::fs::copy(p.join(".skillc/skillc.pub"), p.join("copied.pub")).expect("copy");
    let r = prod(&["--key", "copied.pub"]);
    assert!(r.stderr.contains("development key"), "{}", r.stderr);
    // A release key.
    build(p, "a.key", "1800000100");
    let r = prod(&["--key", "a.pub"]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
}

/// Item 1: rollback protection holds per folder and key, and survives a rotation: a catalog
/// older than one already accepted is refused, whichever key signs it.
#[test]
fn rollback_protection_survives_a_key_change() {
    let (dir, _, b) = project();
    let p = dir.path();
    build(p, "a.key", "1800000500");
    assert_eq!(verify(p, &[]).code, Some(0));
    build(p, "a.key", "1800000100");
    let r = verify(p, &[]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert!(r.stderr.contains("rollback"), "{}", r.stderr);
    // An older catalog signed by a new key does not restart the count.
    build(p, "b.key", "1800000200");
    let r = verify(p, &["--accept-key", &b]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert!(r.stderr.contains("rollback"), "{}", r.stderr);
    build(p, "b.key", "1800000600");
    assert_eq!(verify(p, &["--accept-key", &b]).code, Some(0));
}

/// Item 11: without a folder, `verify` checks the project's `[pipeline] out`, from its root
/// and from a subfolder, not a stale `out/`; and `--production` says which levels did not
/// pass without the old "runs L1 and L2 only".
#[test]
fn verify_finds_the_projects_catalog_from_anywhere_in_it() {
    let (dir, _, _) = project();
    let p = dir.path();
    // A stale out/ from before the project moved its output, damaged.
    build(p, "a.key", "1800000000");
    std::fs::write(p.join("out/report.json"), "{}").expect("tamper");
    std::fs::write(p.join("pipeline.toml"), "[pipeline]\nout = \"dist\"\n").expect("write");
    build(p, "a.key", "1800000100");
    let state = p.join("state.json").display().to_string();
    let r = skillc_env(p, &["verify", "--state", &state], &[]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.starts_with("verified dist:"), "{}", r.stdout);
    let r = skillc_env(&p.join("skills/todo"), &["verify", "--state", &state], &[]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("dist"), "{}", r.stdout);
    // Not-run levels, without the stale message.
    let r = skillc_env(
        p,
        &["build", "--key", "a.key", "--quiet"],
        &[
            ("SOURCE_DATE_EPOCH", "1800000200"),
            ("SKILLC_PYTHON", "/nonexistent/python3"),
        ],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let r = skillc_env(p, &["verify", "--state", &state, "--production", "--key", "a.pub"], &[]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert!(r.stderr.contains("L5"), "{}", r.stderr);
    assert!(!r.stderr.contains("L1 and L2 only"), "{}", r.stderr);
}

/// Item 1: verifications running at once share the state file without losing a pin: each of
/// eight copies of a catalog verified concurrently (first use for each folder) is pinned
/// afterwards, so a later catalog re-signed by another key is refused in every one of them.
#[test]
fn concurrent_verifications_lose_no_pin() {
    let (dir, _a, _b) = project();
    let p = dir.path();
    build(p, "a.key", "1800000000");
    let folders: Vec<String> = (0..8).map(|i| format!("out{i}")).collect();
    for f in &folders {
        copy_dir(&p.join("out"), &p.join(f));
    }
    let state = p.join("shared-state.json");
    let state = state.to_str().expect("UTF-8 temp path");
    std::thread::scope(|s| {
        for f in &folders {
            s.spawn(move || {
                let r = skillc_env(p, &["verify", f, "--state", state], &[]);
                assert_eq!(r.code, Some(0), "{f}: {}\n{}", r.stdout, r.stderr);
            });
        }
    });
    let recorded = std::fs::read_to_string(p.join("shared-state.json")).expect("state written");
    for f in &folders {
        let pinned = std::fs::canonicalize(p.join(f)).expect("folder");
        let needle = serde_json::to_string(&pinned.display().to_string()).expect("json string");
        assert!(recorded.contains(&needle), "{f} lost its pin:\n{recorded}");
    }
}

/// Item 1: `--accept-key` names the key the catalog must be signed by, even when the pin
/// already matches (a wrong id is refused, never ignored); a given key that differs from the
/// folder's first-use pin moves the pin and says so, as an accepted rotation does.
#[test]
fn a_wrong_accepted_key_is_refused_and_a_given_key_moving_the_pin_is_said() {
    let (dir, a, b) = project();
    let p = dir.path();
    build(p, "a.key", "1800000000");
    assert_eq!(verify(p, &[]).code, Some(0), "first use pins a");
    let r = verify(p, &["--accept-key", "0123456789ABCDEF"]);
    assert_eq!(
        r.code,
        Some(1),
        "a wrong --accept-key with a matching pin: {}",
        r.stdout
    );
    let r = verify(p, &["--accept-key", &a]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);

    build(p, "b.key", "1800000100");
    let r = verify(p, &["--key", "b.pub"]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(&format!("now pinned to key {b}, replacing key {a}")),
        "the pin moved, loudly: {}",
        r.stderr
    );
    let r = verify(p, &[]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("pinned for this folder"), "{}", r.stdout);
}

/// A build that re-signs the catalog it has a record of with another key says so (a pinned
/// consumer will refuse it), once; a build with the same key says nothing. Fails before the
/// fix: the key changed silently.
#[test]
fn a_build_that_re_signs_with_another_key_warns() {
    let (dir, a, b) = project();
    let p = dir.path();
    let run = |key: &str| {
        skillc_env(
            p,
            &["build", "--key", key, "--quiet"],
            &[("SOURCE_DATE_EPOCH", "1800000000")],
        )
    };
    let first = run("a.key");
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    assert!(!first.stderr.contains("re-signed"), "{}", first.stderr);
    let other = run("b.key");
    assert_eq!(other.code, Some(0), "{}", other.stderr);
    assert!(
        other
            .stderr
            .contains(&format!("was signed by key {a}; this build re-signed it with key {b}"))
            && other.stderr.contains(&format!("skillc verify --accept-key {b}")),
        "{}",
        other.stderr
    );
    // Edited and built again with the same key: no warning.
    let md = p.join("skills/todo/SKILL.md");
    let text = std::fs::read_to_string(&md).expect("read") + "\nMore.\n";
    std::fs::write(&md, text).expect("write");
    let same = run("b.key");
    assert_eq!(same.code, Some(0), "{}", same.stderr);
    assert!(!same.stderr.contains("re-signed"), "{}", same.stderr);
}

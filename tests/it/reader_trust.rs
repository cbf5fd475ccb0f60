//! Every reader of `out/` trusts a catalog exactly as `skillc verify` does (issue 13; README,
//! "Security model"; RUNTIME.md: nothing is offered, loaded, listed or served from an `out/`
//! that `verify` would refuse): `list`, `info`, `search`, `menu`, `playbook` and `serve`
//! refuse a catalog re-signed by another key than the one pinned, given or configured, and a
//! catalog rolled back below the floor `verify` recorded — with verify's message and its exit
//! status 1 — and accept it again once `verify --accept-key` moved the pin.

use std::path::Path;

use crate::common::server::{SDE, Server, project};
use crate::common::{Run, skillc_bounded, skillc_env};
use skillc::SecretKey;

/// Every reader, as a command line run in the project (the catalog in `out/`).
const READERS: &[&[&str]] = &[
    &["list"],
    &["info", "todo"],
    &["search", "todo"],
    &["menu", "--turn", "add a todo item"],
    &["menu", "--turn", "add a todo item", "--full-verify"],
    &["playbook", "todo"],
    &["serve", "--addr", "127.0.0.1:0"],
];

/// `ARGS EXTRA`, with the test's own state file (`--state state.json`) unless `EXTRA` names
/// one: rollback floors are kept per key too, and every test signs with the same key.
fn with_state<'a>(args: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    let mut all: Vec<&str> = args.iter().chain(extra).copied().collect();
    if !extra.contains(&"--state") {
        all.extend(["--state", "state.json"]);
    }
    all
}

/// Runs a reader for at most 60 s (`serve` runs until stopped when it accepts the catalog).
fn bounded(dir: &Path, args: &[&str], extra: &[&str]) -> Run {
    skillc_bounded(dir, &with_state(args, extra), &[SDE])
}

/// `skillc verify EXTRA` with the test's state file.
fn verify(dir: &Path, extra: &[&str]) -> Run {
    skillc_env(dir, &with_state(&["verify"], extra), &[])
}

/// Writes the key pair `NAME.key` / `NAME.pub` made from `seed`; returns its id.
fn key_pair(dir: &Path, name: &str, seed: u8) -> String {
    let key = SecretKey::from_seed([seed; 32], [seed; 8]);
    std::fs::write(dir.join(format!("{name}.key")), key.to_file()).expect("write key");
    std::fs::write(dir.join(format!("{name}.pub")), key.public().to_file()).expect("write pub");
    key.public().key_id_hex()
}

fn build(dir: &Path, extra: &[&str], sde: &str) {
    let mut args = vec!["build", "--quiet"];
    args.extend_from_slice(extra);
    let r = skillc_env(dir, &args, &[("SOURCE_DATE_EPOCH", sde)]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
}

/// `verify`'s `error: …` line (on standard error, as the readers print it).
fn verify_error(dir: &Path, extra: &[&str]) -> String {
    let v = verify(dir, extra);
    assert_eq!(v.code, Some(1), "verify accepts it: {}\n{}", v.stdout, v.stderr);
    v.stderr
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_else(|| panic!("no error line: {}", v.stderr))
        .to_owned()
}

/// Each reader refuses the catalog with `line` (verify's own) on standard error, exit 1,
/// nothing on standard output.
fn every_reader_refuses(dir: &Path, extra: &[&str], line: &str) {
    for reader in READERS {
        let r = bounded(dir, reader, extra);
        assert_eq!(r.code, Some(1), "{reader:?} {extra:?}: {}\n{}", r.stdout, r.stderr);
        assert!(
            r.stderr.lines().any(|l| l == line),
            "{reader:?} {extra:?}: {}",
            r.stderr
        );
        assert!(
            !r.stdout.contains("todo") && !r.stdout.contains("serving"),
            "{reader:?}: {}",
            r.stdout
        );
    }
}

/// Each reader accepts the catalog (`serve` starts serving it, and is stopped).
fn every_reader_accepts(dir: &Path, extra: &[&str]) {
    for reader in READERS {
        if reader[0] == "serve" {
            let s = Server::start(dir, &with_state(&[], extra));
            assert_eq!(s.get("/api/skills/todo").status, 200, "{extra:?}");
            continue;
        }
        let r = bounded(dir, reader, extra);
        assert_eq!(r.code, Some(0), "{reader:?} {extra:?}: {}\n{}", r.stdout, r.stderr);
    }
}

#[test]
fn a_catalog_re_signed_by_another_key_is_refused_by_every_reader() {
    let p = project();
    let dir = p.path();
    let attacker = key_pair(dir, "b", 2);
    // Pinned on first use by verify; every reader reads it as before.
    let v = verify(dir, &[]);
    assert_eq!(v.code, Some(0), "{}\n{}", v.stdout, v.stderr);
    every_reader_accepts(dir, &[]);

    // Someone who can write the folder re-signs it with their key.
    build(dir, &["--key", "b.key"], "1800000100");
    let line = verify_error(dir, &[]);
    assert!(line.contains("untrusted signer") && line.contains(&attacker), "{line}");
    every_reader_refuses(dir, &[], &line);

    // The rotation is accepted (out of band) with verify: every reader follows the pin.
    let moved = verify(dir, &["--accept-key", &attacker]);
    assert_eq!(moved.code, Some(0), "{}\n{}", moved.stdout, moved.stderr);
    every_reader_accepts(dir, &[]);
}

#[test]
fn a_given_or_configured_key_binds_every_reader() {
    let p = project();
    let dir = p.path();
    let other = key_pair(dir, "b", 2);
    // `--public-key` must be the signer's (in every reader but `serve`, `--key` too).
    let line = verify_error(dir, &["--public-key", "b.pub"]);
    assert!(line.contains(&other) && line.contains("is given for it"), "{line}");
    every_reader_refuses(dir, &["--public-key", "b.pub"], &line);
    for reader in READERS.iter().filter(|r| r[0] != "serve") {
        let r = bounded(dir, reader, &["--key", "b.pub"]);
        assert_eq!(r.code, Some(1), "{reader:?}: {}", r.stderr);
        assert!(r.stderr.lines().any(|l| l == line), "{reader:?}: {}", r.stderr);
    }
    every_reader_accepts(dir, &["--public-key", "out/skillc.pub"]);

    // The consumer's project configures its signers in `[verify] keys`.
    let toml = std::fs::read_to_string(dir.join("pipeline.toml")).expect("pipeline.toml");
    assert!(toml.contains("\nkeys = []"), "{toml}");
    std::fs::write(
        dir.join("pipeline.toml"),
        toml.replacen("\nkeys = []", "\nkeys = [\"b.pub\"]", 1),
    )
    .expect("write");
    let line = verify_error(dir, &[]);
    assert!(line.contains("is configured for it"), "{line}");
    every_reader_refuses(dir, &[], &line);
}

#[test]
fn a_catalog_rolled_back_below_the_recorded_floor_is_refused_by_every_reader() {
    let p = project();
    let dir = p.path();
    // Keep the catalog of 1800000000 aside, publish a newer one and verify it.
    std::fs::rename(dir.join("out"), dir.join("old")).expect("keep the old catalog");
    build(dir, &[], "1800000100");
    let v = verify(dir, &[]);
    assert_eq!(v.code, Some(0), "{}\n{}", v.stdout, v.stderr);
    // The old, genuinely signed catalog is put back in its place.
    std::fs::remove_dir_all(dir.join("out")).expect("rm out");
    std::fs::rename(dir.join("old"), dir.join("out")).expect("roll back");
    let line = verify_error(dir, &[]);
    assert!(line.contains("rollback"), "{line}");
    every_reader_refuses(dir, &[], &line);
    // The state named with --state is the one read (a fresh one has no floor).
    every_reader_accepts(dir, &["--state", "fresh-state.json"]);
    assert!(!dir.join("fresh-state.json").exists(), "a reader wrote the state");
}

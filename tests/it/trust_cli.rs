//! The CLI's key files and key ids (README, "Security model"): `keygen --force` replaces
//! only a key file (never a link, a FIFO, a device or a folder); every key file is read
//! bounded (`--key /dev/zero` is an error, not a hang); `--accept-key` says what a key id
//! looks like.

use std::path::Path;
use std::process::Command;

use crate::common::server::project;
use crate::common::{Run, skillc, skillc_bounded};

fn bounded(dir: &Path, args: &[&str]) -> Run {
    skillc_bounded(dir, args, &[])
}

#[cfg(unix)]
#[test]
fn keygen_force_replaces_only_a_key_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    // A symbolic link (to a file that must survive), a FIFO and a device node.
    std::fs::write(p.join("precious"), "keep me\n").expect("write");
    std::os::unix::fs::symlink(p.join("precious"), p.join("link.key")).expect("symlink");
    std::os::unix::fs::symlink(p.join("nowhere"), p.join("dangling.key")).expect("symlink");
    let fifo = Command::new("mkfifo").arg(p.join("fifo.key")).status();
    assert!(fifo.is_ok_and(|s| s.success()), "mkfifo");
    std::fs::create_dir(p.join("folder.key")).expect("mkdir");
    for (target, kind) in [
        (p.join("link.key"), "a symbolic link"),
        (p.join("dangling.key"), "a symbolic link"),
        (p.join("fifo.key"), "a FIFO"),
        (p.join("folder.key"), "a folder"),
        (Path::new("/dev/null").to_path_buf(), "a device"),
    ] {
        let shown = target.display().to_string();
        let r = bounded(p, &["keygen", "-o", &shown, "--force"]);
        assert_eq!(r.code, Some(2), "{shown}: {}\n{}", r.stdout, r.stderr);
        assert!(
            r.stderr
                .contains(&format!("{shown} is {kind}, not a key file; refusing to replace it")),
            "{shown}: {}",
            r.stderr
        );
    }
    assert!(
        std::fs::symlink_metadata(p.join("link.key"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::symlink_metadata(p.join("dangling.key"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(p.join("precious")).unwrap(), "keep me\n");
    // A regular key file is replaced with --force, and only then.
    let key = p.join("release.key").display().to_string();
    assert_eq!(bounded(p, &["keygen", "-o", &key]).code, Some(0));
    let again = bounded(p, &["keygen", "-o", &key]);
    assert_eq!(again.code, Some(2));
    assert!(
        again.stderr.contains("already exists; pass --force"),
        "{}",
        again.stderr
    );
    assert_eq!(bounded(p, &["keygen", "-o", &key, "--force"]).code, Some(0));
}

#[cfg(unix)]
#[test]
fn key_files_are_read_bounded() {
    let p = project();
    let dir = p.path();
    every_reader_refuses_the_key(dir, "/dev/zero", "more than 4096 bytes: not a minisign key file");
    // A large file is refused the same way; a real key still reads.
    std::fs::write(dir.join("big.pub"), "x".repeat(5000)).expect("write");
    let r = skillc(dir, ["verify", "--key", "big.pub"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("more than 4096 bytes"), "{}", r.stderr);
    let r = skillc(dir, ["verify", "--key", "out/skillc.pub", "--state", "state.json"]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
}

/// A FIFO named as a key file is refused at once: fails before the fix, where opening it
/// waited for a writer forever (the bounded run was killed, exit `None`).
#[cfg(unix)]
#[test]
fn a_fifo_key_file_is_refused_without_blocking() {
    let p = project();
    let dir = p.path();
    let fifo = Command::new("mkfifo").arg(dir.join("fifo.key")).status();
    assert!(fifo.is_ok_and(|s| s.success()), "mkfifo");
    every_reader_refuses_the_key(dir, "fifo.key", "a FIFO or socket, not a key file");
}

/// Every command that reads a key file, given `key`, refuses it (exit 2) with `why` and the
/// key's name, within the bounded run.
fn every_reader_refuses_the_key(dir: &Path, key: &str, why: &str) {
    for reader in [
        &["verify", "--key", key][..],
        &["list", "--public-key", key],
        &["menu", "--turn", "todo", "--key", key],
        &["serve", "--addr", "127.0.0.1:0", "--public-key", key],
        &["build", "--key", key],
    ] {
        let r = bounded(dir, reader);
        assert_eq!(r.code, Some(2), "{reader:?}: {}\n{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains(key) && r.stderr.contains(why),
            "{reader:?}: {}",
            r.stderr
        );
    }
}

/// `keygen -o DIR/KEY` with a folder that does not exist says so (exit 2) and creates
/// nothing. Fails before the fix: the folders were made silently.
#[test]
fn keygen_does_not_make_up_folders() {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = skillc(dir.path(), ["keygen", "-o", "new/dir/release.key"]);
    assert_eq!(r.code, Some(2), "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("new/dir is not a folder; create it first (`mkdir -p new/dir`)"),
        "{}",
        r.stderr
    );
    assert!(!dir.path().join("new").exists());
    std::fs::create_dir_all(dir.path().join("new/dir")).expect("mkdir");
    let r = skillc(dir.path(), ["keygen", "-o", "new/dir/release.key"]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(dir.path().join("new/dir/release.pub").is_file());
}

#[test]
fn a_malformed_key_id_says_what_a_key_id_looks_like() {
    let p = project();
    for bad in ["ZZZ", "0123456789ABCDE", "0123456789abcdefa"] {
        let r = skillc(p.path(), ["verify", "--accept-key", bad, "--state", "state.json"]);
        assert_eq!(r.code, Some(2), "{bad}: {}\n{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains("a key id is 16 hexadecimal digits") && r.stderr.contains("3A5F09C27D1B4E68"),
            "{bad}: {}",
            r.stderr
        );
    }
    // A well-formed id of the wrong key is refused for what it is (exit 1), in any case.
    let r = skillc(
        p.path(),
        ["verify", "--accept-key", "0123456789abcdef", "--state", "state.json"],
    );
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("--accept-key 0123456789ABCDEF"), "{}", r.stderr);
}

/// One name for the signer's key across every command that reads a catalog: `--public-key
/// FILE` in `--help` (`--key` accepted but not shown; in `serve`, `--key` is the signing key
/// of `--watch` builds, and refused without `--watch`).
#[test]
fn every_reader_names_the_signers_key_the_same() {
    let dir = tempfile::tempdir().expect("tempdir");
    for cmd in ["verify", "list", "info", "search", "serve", "menu", "playbook"] {
        let r = skillc(dir.path(), [cmd, "--help"]);
        assert_eq!(r.code, Some(0), "{cmd}: {}", r.stderr);
        assert!(r.stdout.contains("--public-key <FILE>"), "{cmd}: {}", r.stdout);
        assert!(r.stdout.contains("--state <FILE>"), "{cmd}: {}", r.stdout);
        assert!(r.stdout.contains("The signer's public key"), "{cmd}: {}", r.stdout);
        assert_eq!(r.stdout.contains("--key <FILE>"), cmd == "serve", "{cmd}: {}", r.stdout);
    }
    let p = project();
    let r = skillc(p.path(), ["serve", "--addr", "127.0.0.1:0", "--key", "out/skillc.pub"]);
    assert_eq!(r.code, Some(2), "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("name the key to trust with --public-key"),
        "{}",
        r.stderr
    );
}

/// `verify DIR` on a folder without `catalog.toml`: a catalog that fails verification (exit
/// 1, README's exit status table), with what to do, on standard error; `--format json` says
/// it in the report. Fails before the fix: exit 2, as for a command that could not run.
#[test]
fn verify_of_a_folder_without_a_catalog_exits_1_and_says_what_to_do() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("empty")).expect("mkdir");
    let r = skillc(dir.path(), ["verify", "empty", "--state", "state.json"]);
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(
            "error: empty is not a catalog: it has no catalog.toml; build one with `skillc build`, or name the folder"
        ),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    let j = skillc(
        dir.path(),
        ["verify", "empty", "--state", "state.json", "--format", "json"],
    );
    assert_eq!(j.code, Some(1), "{}", j.stderr);
    let j = j.json();
    assert_eq!(
        (j["ok"].as_bool(), j["failures"][0]["kind"].as_str()),
        (Some(false), Some("missing"))
    );
    // A folder that is not there at all is a path given that does not exist: exit 2.
    let r = skillc(dir.path(), ["verify", "nowhere", "--state", "state.json"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
}

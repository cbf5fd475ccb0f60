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
    for reader in [
        &["verify", "--key", "/dev/zero"][..],
        &["list", "--public-key", "/dev/zero"],
        &["menu", "--turn", "todo", "--key", "/dev/zero"],
        &["serve", "--addr", "127.0.0.1:0", "--public-key", "/dev/zero"],
        &["build", "--key", "/dev/zero"],
    ] {
        let r = bounded(dir, reader);
        assert_eq!(r.code, Some(2), "{reader:?}: {}\n{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains("/dev/zero") && r.stderr.contains("more than 4096 bytes: not a minisign key file"),
            "{reader:?}: {}",
            r.stderr
        );
    }
    // A large file is refused the same way; a real key still reads.
    std::fs::write(dir.join("big.pub"), "x".repeat(5000)).expect("write");
    let r = skillc(dir, ["verify", "--key", "big.pub"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("more than 4096 bytes"), "{}", r.stderr);
    let r = skillc(dir, ["verify", "--key", "out/skillc.pub", "--state", "state.json"]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
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
    assert!(r.stdout.contains("--accept-key 0123456789ABCDEF"), "{}", r.stdout);
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

//! `skillc completions` and `skillc man`: the scripts of three shells are generated and
//! pass their shell's syntax check, the manual page's roff is snapshot-tested and renders with
//! `man -l`. A missing shell or `man` skips that part with a note, and fails under CI.

use std::process::Command;

use crate::common::{insta_settings, skillc};

/// Whether `program` runs (`--version`); under CI a missing one fails the test.
fn available(program: &str) -> bool {
    let ok = Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but `{program}` is not installed (.ci/run installs it)"
        );
        eprintln!("note: `{program}` not found; its check is skipped");
    }
    ok
}

#[test]
fn completions_for_bash_zsh_and_fish_parse_in_their_shell() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (shell, marker, syntax_check) in [
        ("bash", "complete -F _skillc", &["-n"][..]),
        ("zsh", "#compdef skillc", &["-n"][..]),
        ("fish", "complete -c skillc", &["--no-execute"][..]),
    ] {
        let run = skillc(dir.path(), ["completions", shell]);
        assert_eq!(run.code, Some(0), "{shell}: {}", run.stderr);
        assert!(run.stdout.contains(marker), "{shell} script lacks `{marker}`");
        // Every sub-command and the new flags are offered.
        for word in [
            "check",
            "scan",
            "build",
            "completions",
            "man",
            "rename-folder",
            "write-baseline",
        ] {
            assert!(run.stdout.contains(word), "{shell} completions lack `{word}`");
        }
        if available(shell) {
            let script = dir.path().join(format!("skillc.{shell}"));
            std::fs::write(&script, &run.stdout).expect("write script");
            let out = Command::new(shell)
                .args(syntax_check)
                .arg(&script)
                .output()
                .expect("run the shell");
            assert!(
                out.status.success(),
                "{shell} rejects the script: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    let bad = skillc(dir.path(), ["completions", "tcsh"]);
    assert_eq!(bad.code, Some(2), "an unknown shell is a usage error");
}

#[test]
fn man_page_roff_and_rendering() {
    let dir = tempfile::tempdir().expect("tempdir");
    let top = skillc(dir.path(), ["man"]);
    assert_eq!(top.code, Some(0), "{}", top.stderr);
    let check = skillc(dir.path(), ["man", "check"]);
    assert_eq!(check.code, Some(0), "{}", check.stderr);
    assert!(check.stdout.starts_with(".ie \\n(.g .ds Aq \\(aq"), "roff");
    assert!(check.stdout.contains(".TH skillc-check 1"));
    // The top-level page lists every sub-command (it changes with each new one, so it is
    // checked, not snapshotted); the page of `check` is snapshotted whole.
    assert!(top.stdout.contains(".TH skillc 1") && top.stdout.contains(".SH SUBCOMMANDS"));
    for sub in [
        "skillc\\-check(1)",
        "skillc\\-scan(1)",
        "skillc\\-completions(1)",
        "skillc\\-man(1)",
    ] {
        assert!(top.stdout.contains(sub), "{sub} missing from skillc(1)");
    }
    insta_settings().bind(|| {
        insta::assert_snapshot!("man_skillc_check", check.stdout);
    });
    assert_eq!(skillc(dir.path(), ["man", "nope"]).code, Some(2));

    // Every page into a folder: one per sub-command.
    let pages = dir.path().join("man1");
    let all = skillc(dir.path(), ["man", "--out-dir", pages.to_str().expect("utf-8")]);
    assert_eq!(all.code, Some(0), "{}", all.stderr);
    for page in [
        "skillc.1",
        "skillc-check.1",
        "skillc-scan.1",
        "skillc-completions.1",
        "skillc-man.1",
    ] {
        assert!(pages.join(page).is_file(), "{page} missing");
    }

    if available("man") {
        let out = Command::new("man")
            .arg("-l")
            .arg(pages.join("skillc-check.1"))
            .env("MANWIDTH", "100")
            .env_remove("MAN_KEEP_FORMATTING")
            .env("PAGER", "cat")
            .env("MANPAGER", "cat")
            .output()
            .expect("run man");
        // Without a terminal man may still overstrike bold text (`N\x08N`): drop the overstrikes.
        let raw = String::from_utf8_lossy(&out.stdout);
        let mut text = String::new();
        for c in raw.chars() {
            if c == '\u{8}' {
                text.pop();
            } else {
                text.push(c);
            }
        }
        assert!(
            out.status.success(),
            "man -l failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("NAME") && text.contains("skillc-check"), "{text}");
        assert!(text.contains("--strict"), "{text}");
    }
}

//! Bad input found by trial users: every malformed input gets one diagnostic with its code,
//! file, line and column and the exit status README documents, and nothing is lost or
//! written that should not be. Each test runs the real binary on a project made at test time.

use std::path::Path;

use crate::adversarial::project;
use crate::common::{Run, skillc_env};

fn run(cwd: &Path, args: &[&str]) -> Run {
    skillc_env(cwd, args, &[])
}

/// Each TOML input of a project, with the command that reads it and the code of its
/// diagnostics: invalid UTF-8 is reported at the first invalid byte (line 3, column 4: the
/// column counts the characters before it, `é` being one), exit status 2.
#[test]
fn toml_inputs_that_are_not_utf8_are_reported_at_the_byte() {
    let cases: &[(&str, &[&str], &str)] = &[
        ("pipeline.toml", &["plan"], "CF001"),
        ("vocabulary.toml", &["plan"], "VO001"),
        ("translations.toml", &["plan"], "TR010"),
        ("skillc.lock", &["build"], "IM011"),
    ];
    for (file, args, code) in cases {
        let p = project();
        let path = p.path().join(file);
        let mut bytes = if path.exists() {
            std::fs::read(&path).expect("read")
        } else {
            Vec::new()
        };
        // Two more lines, then `# é` and a byte that no UTF-8 text holds.
        bytes.splice(0..0, b"# one\n# two\n# \xC3\xA9\xFF\n".iter().copied());
        std::fs::write(&path, &bytes).expect("write");
        let r = run(p.path(), args);
        assert_eq!(r.code, Some(2), "{file}: {}", r.stderr);
        assert!(r.stderr.contains(&format!("error[{code}]")), "{file}: {}", r.stderr);
        assert!(r.stderr.contains(&format!("{file}:3:4")), "{file}: {}", r.stderr);
        assert!(
            r.stderr.contains("not valid UTF-8: byte 0xFF at offset 16"),
            "{file}: {}",
            r.stderr
        );
        assert!(!r.stderr.contains("stream did not contain"), "{file}: {}", r.stderr);
    }
}

/// The project files without a diagnostic code of their own, `menu-calibration.toml` (read by
/// `build`) and the scan baseline (read by `scan`): invalid UTF-8 is an error at
/// `file:line:column` with what to do, exit status 2. Fails before the fix: the calibration
/// was taken as absent (the build went on without its threshold) and the baseline's error had
/// no position.
#[test]
fn calibration_and_baseline_that_are_not_utf8_are_reported_at_the_byte() {
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "menu-calibration.toml",
            &["build", "--key", "test.key"],
            "skillc menu calibrate",
        ),
        ("skillc-scan-baseline.json", &["scan"], "skillc scan --write-baseline"),
    ];
    for (file, args, fix) in cases {
        let p = project();
        std::fs::write(p.path().join(file), b"# one\n# two\n# \xC3\xA9\xFF\n").expect("write");
        let r = run(p.path(), args);
        assert_eq!(r.code, Some(2), "{file}: {}\n{}", r.stdout, r.stderr);
        assert!(
            r.stderr
                .contains(&format!("{file}:3:4: not valid UTF-8 (byte 0xFF at offset 16)"))
                && r.stderr.contains(fix),
            "{file}: {}",
            r.stderr
        );
    }
}

/// `menu calibrate` reads the recorded thresholds before it adds one: a calibration file that
/// is not UTF-8 is refused at its byte and left as it was. Fails before the fix: it was taken
/// as absent and replaced by the new threshold alone.
#[test]
fn menu_calibrate_never_replaces_a_calibration_it_cannot_read() {
    let p = project();
    let built = run(p.path(), &["build", "--key", "test.key"]);
    assert_eq!(built.code, Some(0), "{}", built.stderr);
    let battery = "schema = \"skillc.menu-battery/1\"\n\n[[turn]]\nid = \"n1\"\nkind = \"none\"\ntext = \"hello there\"\nexpected = []\n";
    std::fs::write(p.path().join("battery.toml"), battery).expect("write");
    let bad: &[u8] = b"# one\n# two\n# \xC3\xA9\xFF\n";
    std::fs::write(p.path().join("menu-calibration.toml"), bad).expect("write");
    let r = run(p.path(), &["menu", "calibrate", "battery.toml"]);
    assert_eq!(r.code, Some(2), "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("menu-calibration.toml:3:4: not valid UTF-8 (byte 0xFF at offset 16)"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read(p.path().join("menu-calibration.toml")).expect("read"),
        bad
    );
    // A FIFO (reading it blocked the command) and a broken link (taken as absent, it was
    // replaced) are refused and left as they are.
    #[cfg(unix)]
    for plant in ["fifo", "link"] {
        let file = p.path().join("menu-calibration.toml");
        std::fs::remove_file(&file).expect("remove");
        if plant == "fifo" {
            let made = std::process::Command::new("mkfifo")
                .arg(&file)
                .status()
                .expect("mkfifo");
            assert!(made.success());
        } else {
            std::os::unix::fs::symlink("nowhere/x.toml", &file).expect("symlink");
        }
        let r = run(p.path(), &["menu", "calibrate", "battery.toml"]);
        assert_eq!(r.code, Some(2), "{plant}: {}\n{}", r.stdout, r.stderr);
        let want = if plant == "fifo" {
            "is not a regular file"
        } else {
            "is a broken symbolic link"
        };
        assert!(r.stderr.contains(want), "{plant}: {}", r.stderr);
        let kind = std::fs::symlink_metadata(&file).expect("still there").file_type();
        assert!(!kind.is_file(), "{plant}: replaced by a regular file");
    }
}

/// An output folder where nothing can be created (procfs) is named in the error, as the user
/// gave it, with the reason; nothing of the project changes. Failed before the fix with the
/// internal spare path alone.
#[cfg(target_os = "linux")]
#[test]
fn an_output_folder_that_cannot_be_created_is_named() {
    let p = project();
    let r = run(p.path(), &["build", "--key", "test.key", "--out", "/proc/skillc-out"]);
    assert_eq!(r.code, Some(2), "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("error: /proc/skillc-out: cannot create /proc/.skillc-out.skillc-next"),
        "{}",
        r.stderr
    );
    assert!(!p.path().join("out").exists());
}

/// A newline, a tab or a carriage return in a file or folder name: `check` reports `SK045` and
/// `scan` reports `SC004` (high, so exit 1) for the same names, one rule behind both.
#[test]
fn scan_and_check_agree_on_control_characters_in_names() {
    for (folder, file) in [
        ("ledger", "scripts/two\nlines.py"),
        ("ledger", "notes\rback.md"),
        ("ledger", "tab\there.md"),
        ("led\nger", "scripts/tool.py"),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let skill = dir.path().join("skills").join(folder);
        std::fs::create_dir_all(skill.join("scripts")).expect("mkdir");
        std::fs::write(
            skill.join("SKILL.md"),
            format!(
                "---\nname: {}\ndescription: Records payments.\n---\n\nBody.\n",
                "ledger"
            ),
        )
        .expect("write");
        std::fs::write(skill.join(file), "print('ok')\n").expect("write");
        let check = run(dir.path(), &["check", "--format", "json", "skills"]);
        assert_eq!(check.code, Some(1), "{folder:?}/{file:?}: {}", check.stdout);
        assert!(
            check.stdout.contains("\"SK045\""),
            "{folder:?}/{file:?}: {}",
            check.stdout
        );
        let scan = run(dir.path(), &["scan", "--format", "json", "skills"]);
        assert_eq!(
            scan.code,
            Some(1),
            "{folder:?}/{file:?}: {}{}",
            scan.stdout,
            scan.stderr
        );
        let report = scan.json();
        let hits: Vec<&serde_json::Value> = report["skills"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|s| s["findings"].as_array().into_iter().flatten())
            .filter(|f| f["code"] == "SC004")
            .collect();
        assert_eq!(hits.len(), 1, "{folder:?}/{file:?}: {}", scan.stdout);
        assert_eq!(hits[0]["severity"], "high");
        let shown = hits[0]["file"].as_str().unwrap_or_default();
        let name = if folder == "ledger" { file } else { folder };
        assert!(shown.contains(name), "{shown:?} names {name:?}");
        let human = run(dir.path(), &["scan", "skills"]);
        assert_eq!(human.code, Some(1));
        assert!(human.stdout.contains("SC004"), "{}", human.stdout);
    }
}

/// `skillc explain` and `skillc vocabulary` speak JSON like every other command: the same
/// rules as the text listing, one rule with its explanation, the vocabulary as read; a
/// vocabulary with errors is exit 2 with its diagnostic.
#[test]
fn explain_and_vocabulary_print_json() {
    let p = project();
    let listing = run(p.path(), &["explain"]);
    assert_eq!(listing.code, Some(0));
    let all = run(p.path(), &["explain", "--format", "json"]);
    assert_eq!(all.code, Some(0), "{}", all.stderr);
    let all = all.json();
    assert_eq!(all["schema"], "skillc.explain/1");
    let rules = all["rules"].as_array().expect("rules");
    assert_eq!(rules.len(), listing.stdout.lines().count());
    let sk003 = rules.iter().find(|r| r["code"] == "SK003").expect("SK003");
    assert_eq!(sk003["fixable"], true);
    assert_eq!(sk003["kind"], "diagnostic");
    assert!(sk003["explanation"].is_null());
    let sc011 = rules.iter().find(|r| r["code"] == "SC011").expect("SC011");
    assert_eq!(
        (sc011["kind"].as_str(), sc011["severity"].as_str()),
        (Some("scan"), Some("high"))
    );
    assert!(sc011["fix"].is_null());

    let one = run(p.path(), &["explain", "invalid-yaml", "--format", "json"]).json();
    let rules = one["rules"].as_array().expect("rules");
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0]["code"], "SK006");
    let text = run(p.path(), &["explain", "SK006"]).stdout;
    let explanation = rules[0]["explanation"].as_str().expect("explanation");
    assert!(text.starts_with(explanation), "{explanation}");
    let unknown = run(p.path(), &["explain", "XX999", "--format", "json"]);
    assert_eq!(unknown.code, Some(2));

    let builtin = run(p.path(), &["vocabulary", "--format", "json"]);
    assert_eq!(builtin.code, Some(0), "{}", builtin.stderr);
    let v = builtin.json();
    assert_eq!(v["schema"], "skillc.vocabulary/1");
    assert_eq!(v["path"], "<built-in vocabulary>");
    let read = v["actions"]
        .as_array()
        .expect("actions")
        .iter()
        .find(|a| a["name"] == "read")
        .expect("read");
    assert_eq!(read["class"], "safe");
    assert!(read["synonyms"].as_array().expect("synonyms").contains(&"get".into()));
    for list in ["objects", "qualifiers", "domains", "rules"] {
        assert!(!v[list].as_array().expect(list).is_empty(), "{list}");
    }
    assert_eq!(
        run(p.path(), &["vocabulary", "--default", "--format", "json"]).json(),
        v
    );

    let own = "version = 1\n[actions]\nread = { class = \"safe\", en = \"read\", it = \"leggi\" }\n[objects]\nnotes = { en = \"notes\", it = \"note\" }\n";
    std::fs::write(p.path().join("vocabulary.toml"), own).expect("write");
    let v = run(p.path(), &["vocabulary", "--format", "json"]);
    assert_eq!(v.code, Some(0), "{}", v.stderr);
    let v = v.json();
    assert!(v["path"].as_str().unwrap_or_default().ends_with("vocabulary.toml"));
    assert_eq!(v["objects"][0]["name"], "notes");
    std::fs::write(p.path().join("vocabulary.toml"), "version = 1\n[actions]\nread = 3\n").expect("write");
    let bad = run(p.path(), &["vocabulary", "--format", "json"]);
    assert_eq!(bad.code, Some(2), "{}", bad.stdout);
    assert!(bad.stderr.contains("error[VO"), "{}", bad.stderr);
    assert!(bad.stdout.is_empty());
    // The text listing is checked too: `skillc vocabulary > vocabulary.toml` (the shell
    // empties the file first) must not print an empty or broken vocabulary as if it were one.
    for text in ["version = 1\n[actions]\nread = 3\n", "", "garbage = [\n"] {
        std::fs::write(p.path().join("vocabulary.toml"), text).expect("write");
        let bad = run(p.path(), &["vocabulary"]);
        assert_eq!(bad.code, Some(2), "{text:?}: {}", bad.stdout);
        assert!(bad.stderr.contains("error[VO"), "{}", bad.stderr);
        assert!(bad.stdout.is_empty(), "{text:?}: {}", bad.stdout);
    }
}

/// Every path under `dir` with its bytes (folders as empty), for "nothing was written".
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut all: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| {
            let bytes = if e.file_type().is_file() {
                std::fs::read(e.path()).expect("read")
            } else {
                Vec::new()
            };
            (e.path().display().to_string(), bytes)
        })
        .collect();
    all.sort();
    all
}

/// `curate run --dry-run` writes nothing — no run lock, no archive root, no state, no event,
/// no `.gitignore` — with candidates, with a corrupt state and with an interrupted run's
/// journal alike; the same project's real run does write (so the snapshot can tell).
#[test]
fn a_curator_dry_run_writes_nothing() {
    let p = project();
    std::fs::write(p.path().join("pipeline.toml"), "[curator]\nenabled = true\n").expect("write");
    let log = p.path().join(".skillc/events.jsonl");
    std::fs::create_dir_all(log.parent().expect("parent")).expect("mkdir");
    std::fs::write(
        &log,
        "{\"event\":\"skill.created\",\"time\":\"2020-01-01T00:00:00Z\",\"skill\":\"ledger\",\"source\":\"auto_generated\"}\n",
    )
    .expect("write");
    let now = [("SKILLC_NOW", "2026-06-01T00:00:00Z")];
    let dry = |p: &tempfile::TempDir| {
        let before = snapshot(p.path());
        let r = skillc_env(p.path(), &["curate", "run", "--dry-run", "--format", "json"], &now);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        assert_eq!(r.json()["dry_run"], true);
        assert_eq!(snapshot(p.path()), before, "a dry run wrote something");
        r.json()
    };
    let plan = dry(&p);
    assert_eq!(plan["candidates"].as_array().map(Vec::len), Some(1), "{plan}");
    std::fs::create_dir_all(p.path().join(".skillc/curator")).expect("mkdir");
    std::fs::write(p.path().join(".skillc/curator/state.json"), "{ not json").expect("write");
    dry(&p);
    std::fs::remove_file(p.path().join(".skillc/curator/state.json")).expect("rm");
    let before = snapshot(p.path());
    let r = skillc_env(p.path(), &["curate", "maybe"], &now);
    assert_ne!(
        snapshot(p.path()),
        before,
        "a real run writes: {}{}",
        r.stdout,
        r.stderr
    );
}

/// A zip whose entries cannot all be written (a file that is also another entry's folder, a
/// name longer than a file system takes) is the source's problem: `IM004`, exit 1, the entry
/// named, no temporary path in the message, nothing written.
#[test]
fn hostile_zips_are_refused_by_entry() {
    let src = tempfile::tempdir().expect("tempdir");
    let md = "---\nname: kit\ndescription: A kit.\n---\n\nBody.\n";
    let long = format!("kit/{}.md", "n".repeat(300));
    let deep = format!("kit/{}x.md", "abcdefgh/".repeat(120));
    /// (case, the zip's entries, what the refusal names).
    type Case<'a> = (&'a str, Vec<(&'a str, &'a [u8])>, &'a str);
    let cases: Vec<Case<'_>> = vec![
        (
            "conflict",
            vec![
                ("kit/SKILL.md", md.as_bytes()),
                ("kit/notes", b"n"),
                ("kit/notes/a.md", b"a"),
            ],
            "kit/notes",
        ),
        ("long", vec![("kit/SKILL.md", md.as_bytes()), (&long, b"x")], "kit/nnnn"),
        (
            "deep",
            vec![("kit/SKILL.md", md.as_bytes()), (&deep, b"x")],
            "kit/abcdefgh/",
        ),
    ];
    for (what, entries, named) in cases {
        let zip = src.path().join(format!("{what}.zip"));
        std::fs::write(&zip, crate::import::zip_of(&entries)).expect("write");
        let p = crate::import::Project::new();
        let (r, j) = p.import_json(&[&zip.display().to_string()]);
        assert_eq!(r.code, Some(1), "{what}: {j}\n{}", r.stderr);
        assert_eq!(
            crate::import::statuses(&j),
            [("failed".into(), "IM004".into())],
            "{what}: {j}"
        );
        let reason = j["sources"][0]["reason"].as_str().unwrap_or_default();
        assert!(reason.contains(named), "{what}: {reason}");
        for shown in [reason, &r.stderr, &r.stdout] {
            assert!(
                !shown.contains("import-") && !shown.contains("/.skillc"),
                "{what}: a staging path: {shown}"
            );
        }
        assert!(p.skills().is_empty(), "{what}: {:?}", p.skills().keys());
        assert!(p.lock().is_none());
    }
}

/// A catalog already expired when written (an old `SOURCE_DATE_EPOCH`) is a warning on every
/// build, an unchanged one included; without `SOURCE_DATE_EPOCH` the next build renews it, so
/// that it verifies.
#[test]
fn an_expired_catalog_is_warned_about_then_renewed() {
    let p = project();
    std::fs::write(p.path().join("pipeline.toml"), "[signing]\nexpires_days = 30\n").expect("write");
    let old = [("SOURCE_DATE_EPOCH", "1000000000")];
    for round in ["first", "unchanged"] {
        let r = skillc_env(p.path(), &["build", "--skip", "L5"], &old);
        assert_eq!(r.code, Some(0), "{round}: {}", r.stderr);
        assert!(
            r.stderr
                .contains("warning: the catalog expires at 2001-10-09T01:46:40Z, which is already past"),
            "{round}: {}",
            r.stderr
        );
    }
    let verify = run(p.path(), &["verify", "out"]);
    assert_eq!(verify.code, Some(1), "{}", verify.stdout);
    let r = run(p.path(), &["build", "--skip", "L5"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(!r.stderr.contains("already past"), "{}", r.stderr);
    let verify = run(p.path(), &["verify", "out"]);
    assert_eq!(verify.code, Some(0), "{}{}", verify.stdout, verify.stderr);
    // Built again without a change and without SOURCE_DATE_EPOCH: up to date, not re-signed.
    let again = run(p.path(), &["build", "--skip", "L5"]);
    assert!(again.stdout.starts_with("up to date"), "{}", again.stdout);
}

/// `build --skills DIR` with a folder that is not there: one error naming it as given, exit 2.
#[test]
fn a_missing_skills_folder_is_named_as_given() {
    let p = project();
    for (given, says) in [
        ("/nope", "error: the skills folder /nope does not exist"),
        ("no/such/dir", "error: the skills folder no/such/dir does not exist"),
        (
            "skills/ledger/SKILL.md",
            "error: skills/ledger/SKILL.md is not a folder",
        ),
    ] {
        let r = run(p.path(), &["build", "--skills", given]);
        assert_eq!(r.code, Some(2), "{given}: {}", r.stderr);
        assert!(r.stderr.starts_with(says), "{given}: {}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{given}: {}", r.stderr);
        assert!(!r.stderr.contains(".."), "{given}: {}", r.stderr);
    }
}

/// `SK002` (a SKILL.md that is not UTF-8) shows the line of the bad byte, the byte as `?`,
/// like every other diagnostic of `check`'s human format. Fails before the fix: no snippet.
#[test]
fn sk002_shows_the_line_of_the_bad_byte() {
    let dir = tempfile::tempdir().expect("tempdir");
    let skill = dir.path().join("skills/ledger");
    std::fs::create_dir_all(&skill).expect("mkdir");
    std::fs::write(
        skill.join("SKILL.md"),
        b"---\nname: ledger\ndescription: Records caf\xE9 payments.\n---\n\nBody.\n",
    )
    .expect("write");
    let r = run(dir.path(), &["check", "skills"]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert!(r.stdout.contains("error[SK002]"), "{}", r.stdout);
    assert!(
        r.stdout.contains("3 | description: Records caf? payments."),
        "{}",
        r.stdout
    );
}

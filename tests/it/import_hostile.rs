//! Imports under attack and in the field (issue 18): a git sub-path escaping its checkout
//! through a symbolic link (item 2), file names with control characters (item 3, import
//! side), git fetches over their bounds (item 4), absolute paths of this machine in
//! `skillc.lock` and the signed manifests (item 5), a malformed `skillc.lock` (item 13) and
//! the exit status of an import the machine could not fetch (item 15).

use std::path::Path;

use crate::import::{Project, file_url, git, repo, skill_md, statuses, write, zip_of};

/// Every file under `dir` whose text holds `needle` (the machine's temporary paths).
fn files_naming(dir: &Path, needle: &str) -> Vec<String> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter(|e| String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()).contains(needle))
        .map(|e| e.path().display().to_string())
        .collect()
}

/// Item 2: `repo#HEAD:sub/up/skill` where `sub/up` is a symbolic link to a folder outside the
/// checkout must not copy that folder (dotfiles included) into `skills/`: refused (`IM004`),
/// nothing written, for a first import and for `--locked` alike. A link that stays inside the
/// checkout is followed.
#[test]
fn a_symlink_in_a_git_sub_path_cannot_leave_the_checkout() {
    let src = tempfile::tempdir().unwrap();
    // What the attacker wants: a folder of the importing machine, with a secret.
    let outside = src.path().join("home");
    write(&outside.join("skill/SKILL.md"), skill_md("skill", ""));
    write(&outside.join("skill/.secret"), "token=hunter2\n");
    let mono = src.path().join("mono");
    repo(
        &mono,
        &[("README.md", "x\n"), ("real/inner/SKILL.md", &skill_md("inner", ""))],
    );
    std::fs::create_dir_all(mono.join("sub")).unwrap();
    std::os::unix::fs::symlink(&outside, mono.join("sub/up")).unwrap();
    std::os::unix::fs::symlink("../real", mono.join("sub/inside")).unwrap();
    git(&mono, &["add", "-A"]);
    git(&mono, &["commit", "-qm", "links"]);

    let p = Project::new();
    let escape = format!("{}#HEAD:sub/up/skill", file_url(&mono));
    let (r, j) = p.import_json(&[&escape]);
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(statuses(&j), [("failed".into(), "IM004".into())], "{j}");
    assert!(j["sources"][0]["reason"].as_str().unwrap().contains("`sub/up`"), "{j}");
    assert!(p.skills().is_empty(), "{:?}", p.skills().keys());
    assert!(p.lock().is_none());

    // A link inside the checkout is what git shows: followed.
    let inside = format!("{}#HEAD:sub/inside/inner", file_url(&mono));
    let (r, j) = p.import_json(&[&inside]);
    assert_eq!(r.code, Some(0), "{j}");
    assert!(p.skills().contains_key("inner/SKILL.md"));

    // `--locked` goes through the same confinement: a lock naming the escape fails, nothing
    // is written.
    let fresh = Project::new();
    let lock = format!(
        "version = 1\n\n[[skill]]\nname = \"skill\"\nsource = \"{escape}\"\nsha256 = \"00\"\nimported_at = \"2027-01-15T08:00:00Z\"\n"
    );
    std::fs::write(fresh.path().join("skillc.lock"), &lock).unwrap();
    let (r, j) = fresh.import_json(&["--locked"]);
    assert_eq!(r.code, Some(1), "{j}");
    assert_eq!(statuses(&j), [("failed".into(), "IM004".into())], "{j}");
    assert!(fresh.skills().is_empty());
    assert_eq!(fresh.lock().unwrap(), lock);
}

/// Item 3 (import side): a file name with a newline or another control character is refused
/// (`IM004`) from a folder, a git repository and a zip, with nothing written.
#[test]
fn file_names_with_control_characters_are_refused_by_import() {
    let src = tempfile::tempdir().unwrap();
    let folder = src.path().join("newline");
    write(&folder.join("SKILL.md"), skill_md("newline", ""));
    write(&folder.join("notes\nREADME.md"), "x\n");
    let repo_dir = src.path().join("escape-repo");
    repo(
        &repo_dir,
        &[
            ("SKILL.md", &skill_md("escape", "")),
            ("references/a\u{1b}[2Jb.md", "x\n"),
        ],
    );
    let zip = src.path().join("tab.zip");
    std::fs::write(
        &zip,
        zip_of(&[("tab/SKILL.md", skill_md("tab", "").as_bytes()), ("tab/a\tb.md", b"x")]),
    )
    .unwrap();
    let p = Project::new();
    let sources = [
        folder.display().to_string(),
        file_url(&repo_dir),
        zip.display().to_string(),
    ];
    let refs: Vec<&str> = sources.iter().map(String::as_str).collect();
    let (r, j) = p.import_json(&refs);
    assert_eq!(r.code, Some(1), "{j}");
    assert_eq!(
        statuses(&j),
        vec![("failed".to_string(), "IM004".to_string()); 3],
        "{j}"
    );
    assert!(
        r.stdout.contains("notes\\\\nREADME.md"),
        "the name is shown escaped: {}",
        r.stdout
    );
    assert!(p.skills().is_empty(), "{:?}", p.skills().keys());
    assert!(p.lock().is_none());
}

/// Item 4: a git import is bounded like HTTP and zip imports: the commit's bytes and files
/// (`[import] max_repository_bytes`, `max_repository_files`: refused, `IM005`, exit 1, nothing
/// kept in the cache) and the fetch's time (`[import] timeout_seconds`: stopped, `IM002`, exit
/// 2, the machine's problem).
#[test]
fn git_imports_are_bounded_in_size_files_and_time() {
    let src = tempfile::tempdir().unwrap();
    // Zeros compress to almost nothing: the pack is small, the checkout would not be.
    let big = src.path().join("big");
    let zeros = "0".repeat(300_000);
    repo(
        &big,
        &[("SKILL.md", &skill_md("big", "")), ("assets/zeros.txt", &zeros)],
    );
    let many = src.path().join("many");
    let files: Vec<(String, String)> = (0..12)
        .map(|i| (format!("references/{i}.md"), format!("{i}\n")))
        .collect();
    let mut refs: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let md = skill_md("many", "");
    refs.push(("SKILL.md", &md));
    repo(&many, &refs);

    let p = Project::new();
    write(
        &p.path().join("pipeline.toml"),
        "[import]\nmax_repository_bytes = 100000\nmax_repository_files = 10\n",
    );
    let (r, j) = p.import_json(&[&file_url(&big), &file_url(&many)]);
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(
        statuses(&j),
        [("failed".into(), "IM005".into()), ("failed".into(), "IM005".into())],
        "{j}"
    );
    let reasons = j["sources"].to_string();
    assert!(
        reasons.contains("max_repository_bytes") && reasons.contains("max_repository_files"),
        "{reasons}"
    );
    assert!(p.skills().is_empty());
    // Nothing of the refused repositories stays in the cache.
    let kept: Vec<_> = walkdir::WalkDir::new(&p.cache)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().display().to_string())
        .collect();
    assert!(kept.is_empty(), "{kept:?}");
    // Within the defaults both import.
    let q = Project::new();
    let (r, j) = q.import_json(&[&file_url(&big), &file_url(&many)]);
    assert_eq!(r.code, Some(0), "{j}");

    // A git that never finishes is stopped at `timeout_seconds`.
    let bin = src.path().join("bin");
    // Far longer than any loaded machine takes to stop it: finishing at all shows the stop.
    write(&bin.join("git"), "#!/bin/sh\nexec sleep 600\n");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(bin.join("git"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let slow = Project::new();
    write(&slow.path().join("pipeline.toml"), "[import]\ntimeout_seconds = 1\n");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let started = std::time::Instant::now();
    let r = slow.run(&["import", "--format", "json", &file_url(&big)], &[("PATH", &path)]);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(300),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(r.code, Some(2), "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(statuses(&j), [("failed".into(), "IM002".into())], "{j}");
    assert!(
        j["sources"][0]["reason"].as_str().unwrap().contains("timeout_seconds"),
        "{j}"
    );
}

/// Item 5: neither `skillc.lock` nor a signed manifest names a folder of the machine that
/// wrote it: a local source, an `--into` folder and a `--skills` root outside the project are
/// recorded relative to the project (`../…`).
#[test]
fn no_absolute_local_path_reaches_the_lock_or_the_manifests() {
    let src = tempfile::tempdir().unwrap();
    let todo = std::fs::read_to_string(crate::common::manifest_dir().join("skills/todo/SKILL.md")).unwrap();
    write(&src.path().join("todo/SKILL.md"), &todo);
    let p = Project::new();
    let elsewhere = src.path().join("vendored");
    let source = src.path().join("todo").display().to_string();
    let r = p.import(&["--into", &elsewhere.display().to_string(), &source]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    let lock = p.lock().unwrap();
    let machine = src.path().canonicalize().unwrap().display().to_string();
    assert!(
        !lock.contains(&machine) && !lock.contains(&src.path().display().to_string()),
        "{lock}"
    );
    assert!(lock.contains("source = \"../"), "{lock}");
    assert!(lock.contains("into = \"../"), "{lock}");
    // Restored from the lock alone, in a copy of the project next to the sources.
    std::fs::remove_dir_all(&elsewhere).unwrap();
    let r = p.import(&["--locked"]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(elsewhere.join("todo/SKILL.md").is_file());

    // Built from that root outside the project, given as an absolute path.
    let r = p.run(&["build", "--skills", &elsewhere.display().to_string()], &[]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    let out = p.path().join("out");
    assert!(out.join("catalog.toml").is_file());
    for needle in [
        machine.as_str(),
        &src.path().display().to_string(),
        &p.path().display().to_string(),
    ] {
        assert_eq!(files_naming(&out, needle), Vec::<String>::new(), "{needle}");
    }
}

/// Item 13: a malformed `skillc.lock` is a diagnostic with file:line (`IM011`) for `build`
/// and `import`, as `pipeline.toml` is, and the command stops with exit status 2.
#[test]
fn a_malformed_lock_is_a_diagnostic_with_its_line() {
    let p = Project::new();
    write(&p.path().join("skills/local/SKILL.md"), skill_md("local", ""));
    for (text, line) in [
        ("version = 1\n\n[[skill]]\nname = \"a\"\nsource = 3\n", 5),
        ("# made by hand\nversion = 1\nsurprise = true\n", 3),
        ("version = 7\n", 1),
    ] {
        std::fs::write(p.path().join("skillc.lock"), text).unwrap();
        for args in [&["build"][..], &["import", "--locked"][..]] {
            let r = p.run(args, &[]);
            assert_eq!(r.code, Some(2), "{args:?} {text:?}: {}", r.stderr);
            assert!(r.stderr.contains("error[IM011]"), "{args:?} {text:?}: {}", r.stderr);
            assert!(
                r.stderr.contains(&format!("skillc.lock:{line}:")),
                "{args:?} {text:?}: {}",
                r.stderr
            );
        }
    }
}

/// Item 15: a source the machine could not fetch (nothing listens at the address: the
/// network is down) is an IO failure, exit status 2 (`IM002`); a repository or ref that does
/// not exist is the input's problem, exit status 1 (`IM012`).
#[test]
fn an_offline_import_exits_2_and_a_missing_source_1() {
    let src = tempfile::tempdir().unwrap();
    let p = Project::new();
    // A port nothing listens on: connection refused, as when offline.
    let (_refused, port) = crate::common::refused_port();
    for source in [
        format!("http://127.0.0.1:{port}/skills/pdf/SKILL.md"),
        format!("http://127.0.0.1:{port}/pdf.git"),
    ] {
        let (r, j) = p.import_json(&[&source]);
        assert_eq!(r.code, Some(2), "{source}: {j}");
        assert_eq!(statuses(&j), [("failed".into(), "IM002".into())], "{source}: {j}");
    }
    let notes = src.path().join("notes");
    repo(&notes, &[("SKILL.md", &skill_md("notes", ""))]);
    for source in [
        file_url(&src.path().join("no-such-repository")),
        format!("{}#no-such-ref", file_url(&notes)),
    ] {
        let (r, j) = p.import_json(&[&source]);
        assert_eq!(r.code, Some(1), "{source}: {j}");
        assert_eq!(statuses(&j), [("failed".into(), "IM012".into())], "{source}: {j}");
    }
}

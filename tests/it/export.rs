//! `skillc export`: exports that the reference validator (`agentskills validate`, PyPI
//! `skills-ref`) accepts as they are, for every example skill and 20 corpus skills; byte-
//! deterministic zips; and the command line (name lookup, formats, refusal, hidden files).
//!
//! Every export is also undone with `skillc::restore_skill_md` (what `import` uses)
//! and compared with the original frontmatter and body.
//!
//! The reference validator is found at `$SKILLS_REF` or as `agentskills` on `PATH`. Without
//! it the interop test still checks every export with `skillc check --strict` (the rules of
//! the reference, see docs/compatibility.md) and skips the external run with a note — unless
//! `CI` is set, where a missing validator fails the test.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{copy_dir, corpus, manifest_dir, skillc};
use skillc::{Mode, ValidationContext as Context, analyze};

/// The reference validator's command, or `None` (a failure under CI).
fn agentskills() -> Option<PathBuf> {
    let from_env = std::env::var_os("SKILLS_REF")
        .map(PathBuf::from)
        .filter(|p| p.is_file());
    let on_path = || {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join("agentskills"))
                .find(|p| p.is_file())
        })
    };
    let found = from_env.or_else(on_path);
    if found.is_none() {
        crate::common::skip(
            "the reference validator `agentskills` is neither at $SKILLS_REF nor on PATH; \
             install it: python3 -m venv .ci/venv && .ci/venv/bin/pip install skills-ref==0.1.0",
        );
    }
    found
}

/// Extracts a zip into `into`, refusing anything but plain relative paths.
fn unzip(bytes: &[u8], into: &Path) -> Vec<String> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("a readable zip");
    let mut names = Vec::new();
    for i in 0..archive.len() {
        let mut f = archive.by_index(i).expect("an entry");
        let rel = f.enclosed_name().expect("a safe path");
        let dest = into.join(&rel);
        std::fs::create_dir_all(dest.parent().expect("a parent")).expect("mkdir");
        let mut data = Vec::new();
        f.read_to_end(&mut data).expect("readable entry");
        std::fs::write(&dest, data).expect("write");
        names.push(f.name().expect("a UTF-8 name").into_owned());
    }
    names
}

/// Exports `skill` (a folder) with the real binary, extracts it, and returns the extracted
/// skill folder.
fn export_and_extract(skill: &Path, work: &Path, n: usize) -> PathBuf {
    let zip = work.join(format!("{n}.zip"));
    let run = skillc(
        work,
        ["export".as_ref(), skill.as_os_str(), "-o".as_ref(), zip.as_os_str()],
    );
    assert_eq!(
        run.code,
        Some(0),
        "export of {} failed:\n{}",
        skill.display(),
        run.stderr
    );
    let into = work.join(format!("x{n}"));
    let names = unzip(&std::fs::read(&zip).expect("the zip"), &into);
    let top: std::collections::BTreeSet<&str> = names.iter().filter_map(|n| n.split('/').next()).collect();
    assert_eq!(top.len(), 1, "one top folder: {names:?}");
    let name = top.into_iter().next().expect("a top folder");
    assert!(names.contains(&format!("{name}/SKILL.md")), "{names:?}");
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "entries are sorted");
    into.join(name)
}

fn strict_errors(dir: &Path) -> Vec<String> {
    let name = dir.file_name().expect("named").to_string_lossy().into_owned();
    let bytes = std::fs::read(dir.join("SKILL.md")).expect("SKILL.md");
    analyze(
        "SKILL.md",
        &bytes,
        &Context {
            dir_name: &name,
            mode: Mode::Strict,
        },
    )
    .diagnostics
    .iter()
    .filter(|d| d.severity == skillc::Severity::Error)
    .map(|d| format!("{}: {}", d.rule.code, d.message))
    .collect()
}

/// A SKILL.md's frontmatter as typed JSON (YAML 1.2 core schema) and its body.
fn meaning(text: &str) -> (serde_json::Value, String) {
    let a = analyze(
        "SKILL.md",
        text.as_bytes(),
        &Context {
            dir_name: "",
            mode: Mode::Default,
        },
    );
    let body = a.body.clone().map(|b| text[b].to_owned()).unwrap_or_default();
    (a.frontmatter.map(|f| f.to_json_typed()).unwrap_or_default(), body)
}

/// Corpus skills that pass `skillc check`: 20 spread evenly over the sorted list.
fn corpus_sample(corpus: &Path) -> Vec<PathBuf> {
    let run = skillc(corpus, ["check", "--format", "json", "."]);
    let report = run.json();
    let ok: Vec<String> = report["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .filter(|s| s["status"] != "errors")
        .filter_map(|s| s["path"].as_str().map(str::to_owned))
        .collect();
    assert!(ok.len() >= 20, "only {} corpus skills pass check", ok.len());
    (0..20).map(|i| corpus.join(&ok[i * ok.len() / 20])).collect()
}

#[test]
fn exports_pass_the_reference_validator() {
    let validator = agentskills();
    let work = tempfile::tempdir().expect("tempdir");
    let mut skills: Vec<PathBuf> = std::fs::read_dir(manifest_dir().join("skills"))
        .expect("skills/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("SKILL.md").is_file())
        .collect();
    skills.sort();
    assert!(skills.len() >= 5, "the example skills");
    if let Some(corpus) = corpus() {
        skills.extend(corpus_sample(&corpus));
    }
    for (n, skill) in skills.iter().enumerate() {
        let dir = export_and_extract(skill, work.path(), n);
        let errors = strict_errors(&dir);
        assert!(
            errors.is_empty(),
            "{}: `check --strict` errors: {errors:?}",
            skill.display()
        );
        // The export can be undone: the original frontmatter's values and the body come back.
        let exported = std::fs::read_to_string(dir.join("SKILL.md")).expect("SKILL.md");
        let original = std::fs::read_to_string(skill.join("SKILL.md")).expect("SKILL.md");
        let restored = skillc::restore_skill_md(&exported).unwrap_or(exported);
        assert_eq!(
            meaning(&restored),
            meaning(&original),
            "{}: restore differs",
            skill.display()
        );
        if let Some(v) = &validator {
            let out = Command::new(v)
                .arg("validate")
                .arg(&dir)
                .output()
                .expect("agentskills runs");
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                out.status.success() && text.contains("Valid skill"),
                "{} (exported from {}): agentskills says:\n{text}",
                dir.display(),
                skill.display()
            );
        }
    }
}

fn touch_all(dir: &Path, when: std::time::SystemTime) {
    for e in walkdir::WalkDir::new(dir) {
        let e = e.expect("walkable");
        if e.file_type().is_file() {
            let f = std::fs::File::options().write(true).open(e.path()).expect("open");
            f.set_modified(when).expect("set mtime");
        }
    }
}

#[test]
fn exports_are_byte_identical_whatever_the_file_times() {
    let work = tempfile::tempdir().expect("tempdir");
    let (a, b) = (work.path().join("a/workspace"), work.path().join("b/workspace"));
    copy_dir(&manifest_dir().join("skills/workspace"), &a);
    copy_dir(&manifest_dir().join("skills/workspace"), &b);
    touch_all(
        &a,
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000),
    );
    touch_all(&b, std::time::SystemTime::now());
    let za = work.path().join("a.zip");
    let zb = work.path().join("b.zip");
    for (dir, zip) in [(&a, &za), (&b, &zb)] {
        let run = skillc(
            work.path(),
            ["export".as_ref(), dir.as_os_str(), "-o".as_ref(), zip.as_os_str()],
        );
        assert_eq!(run.code, Some(0), "{}", run.stderr);
    }
    let (ba, bb) = (std::fs::read(&za).expect("a"), std::fs::read(&zb).expect("b"));
    assert!(ba == bb, "two exports of the same skill differ");
    // And the same again from the same folder.
    let run = skillc(
        work.path(),
        ["export".as_ref(), a.as_os_str(), "-o".as_ref(), za.as_os_str()],
    );
    assert_eq!(run.code, Some(0));
    assert!(std::fs::read(&za).expect("a") == ba);
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

#[test]
fn cli_finds_skills_by_name_and_refuses_invalid_ones() {
    let work = tempfile::tempdir().expect("tempdir");
    let p = work.path();
    write(
        &p.join("skills/demo/SKILL.md"),
        "---\nname: demo\ndescription: A demo skill. Use it in tests.\nversion: 1.0.0\nplatforms: [linux]\nmetadata:\n  hermes:\n    tags: [a, b]\n---\n# Demo\n\nRun `scripts/run.sh list`.\n",
    );
    write(&p.join("skills/demo/scripts/run.sh"), "#!/bin/sh\necho list\n");
    write(&p.join("skills/demo/.DS_Store"), "junk");
    write(&p.join("skills/demo/references/.cache/x"), "junk");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            p.join("skills/demo/scripts/run.sh"),
            std::fs::Permissions::from_mode(0o755),
        )
        .expect("chmod");
    }
    write(
        &p.join("skills/broken/SKILL.md"),
        "---\nname: not-broken\ndescription: Its name differs from its folder.\n---\nBody\n",
    );

    // By name, from the project root: `<name>.zip` by default.
    let run = skillc(p, ["export", "demo"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr.contains("EX002"),
        "hidden files are reported: {}",
        run.stderr
    );
    let bytes = std::fs::read(p.join("demo.zip")).expect("demo.zip");
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("zip");
    let names: Vec<String> = (0..archive.len())
        .map(|i| archive.by_index(i).expect("entry").name().expect("a name").into_owned())
        .collect();
    assert_eq!(names, vec!["demo/SKILL.md", "demo/scripts/run.sh"]);
    #[cfg(unix)]
    assert_eq!(
        archive
            .by_name("demo/scripts/run.sh")
            .expect("entry")
            .unix_mode()
            .map(|m| m & 0o777),
        Some(0o755)
    );

    // The bare SKILL.md on standard output.
    let md = skillc(p, ["export", "demo", "--format", "md", "-o", "-"]);
    assert_eq!(md.code, Some(0), "{}", md.stderr);
    assert_eq!(
        md.stdout,
        concat!(
            "---\nname: demo\ndescription: A demo skill. Use it in tests.\nmetadata:\n",
            "  hermes: \"{\\\"tags\\\":[\\\"a\\\",\\\"b\\\"]}\"\n  version: 1.0.0\n  platforms: \"[\\\"linux\\\"]\"\n",
            "  skillc-export: \"{\\\"v\\\":1,\\\"order\\\":[\\\"name\\\",\\\"description\\\",\\\"version\\\",\\\"platforms\\\",\\\"metadata\\\"],",
            "\\\"metadata\\\":[\\\"hermes\\\"],\\\"moved\\\":{\\\"platforms\\\":\\\"platforms\\\",\\\"version\\\":\\\"version\\\"},",
            "\\\"json\\\":[\\\"hermes\\\",\\\"platforms\\\"],",
            "\\\"head\\\":\\\"--\\x2d\\\\nname: demo\\\\ndescription: A demo skill. Use it in tests.\\\\nversion: 1.0.0",
            "\\\\nplatforms: [linux]\\\\nmetadata:\\\\n  hermes:\\\\n    tags: [a, b]\\\\n--\\x2d\\\\n\\\"}\"\n",
            "---\n# Demo\n\nRun `scripts/run.sh list`.\n"
        )
    );

    // Never over a file of the skill itself: its SKILL.md (or a script) is left as it was.
    let before = std::fs::read(p.join("skills/demo/SKILL.md")).expect("read");
    for target in ["skills/demo/SKILL.md", "skills/demo/scripts/run.sh"] {
        let over = skillc(p, ["export", "demo", "--format", "md", "-o", target]);
        assert_eq!(over.code, Some(2), "{target}: {}", over.stderr);
        assert!(
            over.stderr.contains("a file of the skill being exported"),
            "{}",
            over.stderr
        );
    }
    assert_eq!(std::fs::read(p.join("skills/demo/SKILL.md")).expect("read"), before);

    // A skill that fails check is refused, unless --force.
    let refused = skillc(p, ["export", "skills/broken", "-o", "broken.zip"]);
    assert_eq!(refused.code, Some(1));
    assert!(refused.stderr.contains("EX001"), "{}", refused.stderr);
    assert!(!p.join("broken.zip").exists());
    let forced = skillc(p, ["export", "skills/broken", "-o", "broken.zip", "--force"]);
    assert_eq!(forced.code, Some(0), "{}", forced.stderr);
    let bytes = std::fs::read(p.join("broken.zip")).expect("broken.zip");
    let archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("zip");
    assert_eq!(
        archive
            .file_names()
            .filter_map(Result::ok)
            .map(|n| n.into_owned())
            .collect::<Vec<_>>(),
        vec!["not-broken/SKILL.md"],
        "the archive folder is the skill's name"
    );

    let missing = skillc(p, ["export", "nope"]);
    assert_eq!(missing.code, Some(2));
    assert!(missing.stderr.contains("no skill named `nope`"), "{}", missing.stderr);

    // A skill's own `metadata.skillc-export` would be repeated: refused, nothing written.
    write(
        &p.join("skills/reserved/SKILL.md"),
        "---
name: reserved
description: Uses the reserved key. Use in tests.
metadata:
  skillc-export: mine
version: 1.0.0
---
Body
",
    );
    let reserved = skillc(p, ["export", "reserved", "-o", "reserved.zip"]);
    assert_eq!(reserved.code, Some(1), "{}", reserved.stderr);
    assert!(
        reserved.stderr.contains("reserved by skillc export"),
        "{}",
        reserved.stderr
    );
    assert!(!p.join("reserved.zip").exists());

    // `-o` never replaces what is not a regular file.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("demo.zip", p.join("link.zip")).expect("symlink");
        let link = skillc(p, ["export", "demo", "-o", "link.zip"]);
        assert_eq!(link.code, Some(2), "{}", link.stderr);
        assert!(link.stderr.contains("is not a regular file"), "{}", link.stderr);
        assert!(p.join("link.zip").symlink_metadata().expect("link").is_symlink());
    }
}

#[test]
fn every_valid_corpus_skill_md_exports_strictly_valid_and_restores() {
    let Some(corpus) = corpus() else { return };
    let mut exported = 0;
    for e in walkdir::WalkDir::new(&corpus).sort_by_file_name() {
        let e = e.expect("walkable");
        if e.file_name() != "SKILL.md" {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(e.path()) else {
            continue;
        };
        let dir = e.path().parent().expect("a folder");
        let dir_name = dir.file_name().expect("named").to_string_lossy().into_owned();
        let ctx = Context {
            dir_name: &dir_name,
            mode: Mode::Default,
        };
        let a = analyze("SKILL.md", text.as_bytes(), &ctx);
        if a.diagnostics.iter().any(|d| d.severity == skillc::Severity::Error) {
            continue;
        }
        let name = a
            .model
            .name
            .as_ref()
            .map(|n| n.value.clone())
            .expect("a valid skill has a name");
        let out = skillc::standard_skill_md("SKILL.md", &text, &name);
        assert!(
            out.diagnostics.iter().all(|d| d.severity != skillc::Severity::Error),
            "{}: {:?}",
            e.path().display(),
            out.diagnostics
        );
        let new = out.text.expect("exported");
        let restored = skillc::restore_skill_md(&new).unwrap_or(new);
        assert_eq!(
            meaning(&restored),
            meaning(&text),
            "{}: restore differs",
            e.path().display()
        );
        exported += 1;
    }
    assert!(exported > 1000, "only {exported} corpus skills exported");
}

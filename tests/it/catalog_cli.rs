//! The catalog commands on the real binary (issue 13, acceptance 5): `list`, `info`,
//! `search`, `remove` and `update`, with snapshots of what they print (times redacted).
//! `remove` of a pinned skill is refused; `update` of a skill edited since import is refused
//! without `--force`, which archives the local copy first.

use crate::common::server::{SDE, project};
use crate::common::{insta_settings, skillc_env};

fn settings() -> insta::Settings {
    insta_settings()
}

/// Replaces archive times (`20261201T081500Z`) with `[TIME]`.
fn redact(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        let stamp = b.len() >= i + 16
            && b[i..i + 8].iter().all(u8::is_ascii_digit)
            && b[i + 8] == b'T'
            && b[i + 9..i + 15].iter().all(u8::is_ascii_digit)
            && b[i + 15] == b'Z';
        if stamp {
            out.push_str("[TIME]");
            i += 16;
        } else {
            let c = text[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn run(dir: &std::path::Path, args: &[&str]) -> crate::common::Run {
    skillc_env(dir, args, &[SDE])
}

#[test]
fn list_and_info() {
    let p = project();
    let s = settings();
    let list = run(p.path(), &["list"]);
    assert_eq!(list.code, Some(0), "{list:?}");
    s.bind(|| insta::assert_snapshot!("catalog_list", list.stdout));
    let filtered = run(p.path(), &["list", "--highest", "low", "--format", "json"]);
    let v = filtered.json();
    assert_eq!(v["schema"], "skillc.list/1");
    assert_eq!(v["count"], 1);
    assert_eq!(v["skills"][0]["name"], "finding-demo");
    s.bind(|| insta::assert_snapshot!("catalog_list_json", filtered.stdout));
    // An unknown filter word is refused (exit 2), never answered with an empty list.
    for args in [["--tier", "bogus"], ["--status", "weird"], ["--highest", "extreme"]] {
        let r = run(p.path(), &["list", args[0], args[1]]);
        assert_eq!(r.code, Some(2), "{args:?}: {r:?}");
        assert!(r.stderr.contains("unknown"), "{}", r.stderr);
    }

    let info = run(p.path(), &["info", "finding-demo"]);
    assert_eq!(info.code, Some(0), "{info:?}");
    s.bind(|| insta::assert_snapshot!("catalog_info", info.stdout));
    // A skill with executors: its header does not repeat the name as a title, and the
    // executors' names and levels are two aligned columns.
    let todo = run(p.path(), &["info", "todo"]);
    assert_eq!(todo.code, Some(0), "{todo:?}");
    assert_eq!(todo.stdout.lines().next(), Some("todo"), "{}", todo.stdout);
    let columns: Vec<usize> = todo
        .stdout
        .lines()
        .filter(|l| l.starts_with("  ") && l.ends_with(']'))
        .filter_map(|l| l.find("  ["))
        .collect();
    assert!(
        columns.len() > 1 && columns.iter().all(|c| *c == columns[0]),
        "{}",
        todo.stdout
    );
    let body = run(p.path(), &["info", "todo", "--body", "--format", "json"]).json();
    assert_eq!(body["schema"], "skillc.info/1");
    assert!(body["body"].as_str().unwrap().starts_with("\n# todo"));
    assert_eq!(body["executor_details"][0]["admission"]["levels"]["L5"], "pass");
    let missing = run(p.path(), &["info", "nope"]);
    assert_eq!(missing.code, Some(1));
    assert!(missing.stderr.contains("no skill `nope`"));
    // A name with terminal control codes is echoed escaped, never raw.
    let hostile = run(p.path(), &["info", "x\u{1b}[31mRED\nline"]);
    assert_eq!(hostile.code, Some(1));
    assert!(!hostile.stderr.contains('\u{1b}'), "{:?}", hostile.stderr);
    assert!(
        hostile.stderr.contains("no skill `x\\u{1b}[31mRED\\nline`"),
        "{}",
        hostile.stderr
    );

    // A catalog that does not verify lists nothing.
    std::fs::write(p.path().join("out/report.json"), "{}").unwrap();
    let refused = run(p.path(), &["list"]);
    assert_eq!(refused.code, Some(1));
    assert!(
        refused.stdout.is_empty() && refused.stderr.contains("does not verify"),
        "{refused:?}"
    );
}

#[test]
fn search_ranks_with_the_menu() {
    let p = project();
    let s = settings();
    let r = run(p.path(), &["search", "add a task to my list"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.stdout.lines().nth(1).is_some_and(|l| l.starts_with("todo ")),
        "{}",
        r.stdout
    );
    s.bind(|| insta::assert_snapshot!("catalog_search", r.stdout));
    let j = run(
        p.path(),
        &[
            "search",
            "search my expenses ledger",
            "--limit",
            "2",
            "--format",
            "json",
        ],
    );
    assert_eq!(j.code, Some(0), "{j:?}");
    let v = j.json();
    assert_eq!(v["schema"], "skillc.search/1");
    assert_eq!(v["count"], 2);
    assert_eq!(v["results"][0]["name"], "expense-ledger");
    assert!(v["results"][0]["score"].as_f64().unwrap() > v["results"][1]["score"].as_f64().unwrap());
    s.bind(|| insta::assert_snapshot!("catalog_search_json", j.stdout));
    // Nothing in common with any skill: an empty answer, not an error.
    let none = run(p.path(), &["search", "zzqx"]);
    assert_eq!(
        (none.code, none.stdout.as_str()),
        (Some(0), "no skill matches\n"),
        "{none:?}"
    );
    assert_eq!(run(p.path(), &["search", "task", "--limit", "0"]).code, Some(2));
    assert_eq!(run(p.path(), &["search", "  "]).code, Some(2));
    // A catalog that does not verify is not searched.
    std::fs::write(p.path().join("out/menu.idx"), "tampered").unwrap();
    let refused = run(p.path(), &["search", "task"]);
    assert_eq!(refused.code, Some(1), "{refused:?}");
    assert!(
        refused.stdout.is_empty() && refused.stderr.contains("does not verify"),
        "{refused:?}"
    );
}

#[test]
fn remove_archives_and_refuses_a_pinned_skill() {
    let p = project();
    let s = settings();
    let before = crate::common::tree(&p.path().join("skills/runbooks"));
    let r = run(p.path(), &["remove", "runbooks"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    s.bind(|| insta::assert_snapshot!("catalog_remove", redact(&r.stdout)));
    assert!(!p.path().join("skills/runbooks").exists());
    // Folders only: the archive root also holds the curator's run lock.
    let archived: Vec<_> = std::fs::read_dir(p.path().join("skills-archive"))
        .unwrap()
        .filter(|e| e.as_ref().is_ok_and(|e| e.path().is_dir()))
        .collect();
    assert_eq!(archived.len(), 1);
    assert_eq!(crate::common::tree(&archived[0].as_ref().unwrap().path()), before);

    let pin = run(p.path(), &["curate", "pin", "todo"]);
    assert_eq!(pin.code, Some(0), "{pin:?}");
    let pinned = run(p.path(), &["remove", "todo", "--format", "json"]);
    assert_eq!(pinned.code, Some(1));
    s.bind(|| insta::assert_snapshot!("catalog_remove_pinned", pinned.stdout));
    assert!(p.path().join("skills/todo/SKILL.md").is_file());
    // A state that cannot be read pins everything (fail closed).
    std::fs::write(p.path().join(".skillc/curator/state.json"), "{broken").unwrap();
    assert_eq!(run(p.path(), &["remove", "workspace"]).code, Some(1));
    assert_eq!(run(p.path(), &["remove", "../skills"]).code, Some(1));
}

/// `path` relative to `base` (`../x/y`), as the lock records a local source.
fn relative_to(path: &std::path::Path, base: &std::path::Path) -> String {
    let canon = |p: &std::path::Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let (path, base) = (canon(path), canon(base));
    let common = path
        .components()
        .zip(base.components())
        .take_while(|(a, b)| a == b)
        .count();
    let ups = base.components().count() - common;
    let mut parts: Vec<String> = vec!["..".into(); ups];
    parts.extend(
        path.components()
            .skip(common)
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

#[test]
fn update_refuses_local_edits_without_force() {
    let p = project();
    let s = settings();
    let upstream = tempfile::tempdir().unwrap();
    let src = upstream.path().join("upd");
    std::fs::create_dir_all(src.join("scripts")).unwrap();
    let md = |v: &str| {
        format!(
            "---\nname: upd\ndescription: Updates things. Use when asked to update.\nversion: {v}\n---\n\n# upd\n\nRun it.\n"
        )
    };
    std::fs::write(src.join("SKILL.md"), md("1.0.0")).unwrap();
    std::fs::write(src.join("scripts/run.sh"), "echo 1\n").unwrap();
    let source = src.display().to_string();
    let imported = run(p.path(), &["install", &source]);
    assert_eq!(imported.code, Some(0), "{imported:?}");

    let same = run(p.path(), &["update", "upd"]);
    assert_eq!(same.code, Some(0), "{same:?}");
    assert!(same.stdout.contains("up to date  upd"), "{}", same.stdout);

    // The source changes: the unedited copy is updated (the old one archived).
    std::fs::write(src.join("SKILL.md"), md("1.1.0")).unwrap();
    std::fs::write(src.join("scripts/new.sh"), "echo 2\n").unwrap();
    let updated = run(p.path(), &["update", "--all"]);
    assert_eq!(updated.code, Some(0), "{updated:?}");
    // The lock records a local source relative to the project (issue 18, item 5).
    let relative = relative_to(&src, p.path());
    let shown = updated
        .stdout
        .replace(&source, "[UPSTREAM]")
        .replace(&relative, "[UPSTREAM]");
    s.bind(|| insta::assert_snapshot!("catalog_update", redact(&shown)));
    assert!(
        std::fs::read_to_string(p.path().join("skills/upd/SKILL.md"))
            .unwrap()
            .contains("1.1.0")
    );

    // Edited locally, changed upstream: refused without --force, nothing touched.
    let local = p.path().join("skills/upd/SKILL.md");
    let edited = std::fs::read_to_string(&local).unwrap() + "\nMy own note.\n";
    std::fs::write(&local, &edited).unwrap();
    std::fs::write(src.join("SKILL.md"), md("1.2.0")).unwrap();
    let refused = run(p.path(), &["update", "upd"]);
    assert_eq!(refused.code, Some(1), "{refused:?}");
    s.bind(|| insta::assert_snapshot!("catalog_update_refused", redact(&refused.stdout)));
    assert_eq!(std::fs::read_to_string(&local).unwrap(), edited);

    // --force archives the edited copy first.
    let forced = run(p.path(), &["update", "upd", "--force", "--format", "json"]);
    assert_eq!(forced.code, Some(0), "{forced:?}");
    let v = forced.json();
    assert_eq!(v["skills"][0]["status"], "updated");
    let to = v["skills"][0]["archived_to"].as_str().unwrap();
    assert_eq!(
        std::fs::read_to_string(p.path().join(to).join("SKILL.md")).unwrap(),
        edited
    );
    assert!(std::fs::read_to_string(&local).unwrap().contains("1.2.0"));
    assert_eq!(run(p.path(), &["update", "not-locked"]).code, Some(1));
}

/// A skill `upd` at version `v` in `dir/upd`; returns the folder.
fn upstream_skill(dir: &std::path::Path, name: &str, v: &str) -> std::path::PathBuf {
    let src = dir.join(name);
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: Updates things. Use when asked to update.\nversion: {v}\n---\n\n# {name}\n\nRun it.\n"
        ),
    )
    .unwrap();
    src
}

#[test]
fn update_all_leaves_an_archived_skill_in_the_archive() {
    let p = project();
    let upstream = tempfile::tempdir().unwrap();
    let src = upstream_skill(upstream.path(), "upd", "1.0.0");
    let imported = run(p.path(), &["install", &src.display().to_string()]);
    assert_eq!(imported.code, Some(0), "{imported:?}");
    let removed = run(p.path(), &["remove", "upd"]);
    assert_eq!(removed.code, Some(0), "{removed:?}");
    // Unchanged upstream, then changed: `--all` brings back neither.
    for v in ["1.0.0", "1.1.0"] {
        upstream_skill(upstream.path(), "upd", v);
        let all = run(p.path(), &["update", "--all"]);
        assert_eq!(all.code, Some(0), "{all:?}");
        assert!(
            !p.path().join("skills/upd").exists(),
            "--all resurrected it: {}",
            all.stdout
        );
        assert!(
            all.stdout.contains("archived    upd: archived (skills-archive/upd-"),
            "{}",
            all.stdout
        );
        let j = run(p.path(), &["update", "--all", "--format", "json"]).json();
        assert_eq!(j["skills"][0]["status"], "archived", "{j}");
        assert_eq!(j["summary"]["archived"], 1, "{j}");
    }
    // Named, it is fetched again, and the output says it was archived.
    let named = run(p.path(), &["update", "upd"]);
    assert_eq!(named.code, Some(0), "{named:?}");
    assert!(
        named
            .stdout
            .contains("it was archived: the archived copy stays in skills-archive/upd-"),
        "{}",
        named.stdout
    );
    assert!(
        std::fs::read_to_string(p.path().join("skills/upd/SKILL.md"))
            .unwrap()
            .contains("1.1.0")
    );
    // Back in the skills root, it is updated by `--all` again.
    upstream_skill(upstream.path(), "upd", "1.2.0");
    let all = run(p.path(), &["update", "--all"]);
    assert!(all.stdout.contains("updated     upd"), "{}", all.stdout);
}

#[test]
fn an_import_elsewhere_never_relabels_a_skill_of_the_same_name() {
    let p = project();
    let lock = p.path().join("skillc.lock");
    let upstream = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let into = elsewhere.path().display().to_string();
    // A hand-written skill of the project (skills/todo) and a stranger of the same name.
    let stranger = upstream_skill(upstream.path(), "todo", "9.0.0");
    let before = crate::common::tree(&p.path().join("skills/todo"));
    let r = run(
        p.path(),
        &[
            "import",
            &stranger.display().to_string(),
            "--into",
            &into,
            "--format",
            "json",
        ],
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    let j = r.json();
    assert_eq!(j["sources"][0]["status"], "skipped", "{j}");
    assert_eq!(j["sources"][0]["code"], "IM006", "{j}");
    let reason = j["sources"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("already exists at skills/todo") && reason.contains("never relabels"),
        "{reason}"
    );
    assert!(!elsewhere.path().join("todo").exists());
    assert!(
        !std::fs::read_to_string(&lock)
            .unwrap_or_default()
            .contains("name = \"todo\"")
    );
    assert_eq!(crate::common::tree(&p.path().join("skills/todo")), before);

    // An imported skill (recorded in skillc.lock) is not relabelled either, even archived.
    let src = upstream_skill(upstream.path(), "upd", "1.0.0");
    assert_eq!(run(p.path(), &["install", &src.display().to_string()]).code, Some(0));
    let locked = std::fs::read_to_string(&lock).unwrap();
    let other = tempfile::tempdir().unwrap();
    let impostor = upstream_skill(other.path(), "upd", "6.6.6");
    assert_eq!(run(p.path(), &["remove", "upd"]).code, Some(0));
    let r = run(p.path(), &["import", &impostor.display().to_string(), "--into", &into]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.stdout.contains("skipped  upd")
            && r.stdout.contains("recorded in skillc.lock")
            && r.stdout.contains("[IM006]"),
        "{}",
        r.stdout
    );
    assert_eq!(
        std::fs::read_to_string(&lock).unwrap(),
        locked,
        "the lock entry was relabelled"
    );
    assert!(!elsewhere.path().join("upd").exists());
}

/// A skill whose sub-commands the vocabulary cannot name is listed `instruction-only` with no
/// executor; `list` and `info` say how many sub-commands were rejected, so that it does not
/// read as a skill without commands.
#[test]
fn list_and_info_count_the_rejected_sub_commands() {
    let dir = tempfile::tempdir().expect("tempdir");
    let skill = dir.path().join("skills/plant-care");
    std::fs::create_dir_all(&skill).expect("mkdir");
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: plant-care\ndescription: Keeps house plants alive with the leafy CLI.\n---\n\n```bash\nleafy water <plant>\nleafy list --thirsty\n```\n",
    )
    .expect("write");
    crate::common::write_test_key(&dir.path().join("test.key"));
    let built = skillc_env(dir.path(), &["build", "--key", "test.key"], &[SDE]);
    assert_eq!(built.code, Some(1), "the two plans are rejected: {built:?}");
    let v = run(dir.path(), &["list", "--format", "json"]).json();
    assert_eq!(v["skills"][0]["plans_rejected"], 2, "{v}");
    assert_eq!(v["skills"][0]["status"], "instruction-only", "{v}");
    let list = run(dir.path(), &["list"]);
    assert!(list.stdout.contains("0 (2 rejected)"), "{}", list.stdout);
    let info = run(dir.path(), &["info", "plant-care"]);
    assert!(info.stdout.contains("rejected:    2 sub-commands"), "{}", info.stdout);
}

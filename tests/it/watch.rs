//! `skillc watch` end to end: the real binary watches a project while the test edits it (in
//! place and by rename, adds, deletes, breaks and repairs skills, edits the vocabulary). After
//! each step, once watch reports a rebuild, `out/` must equal what a clean `skillc build`
//! of the same inputs produces in another folder, and `skillc verify` must accept it.
//!
//! Synchronisation is on watch's JSON events (`rebuild-finished`), with a generous timeout;
//! no fixed sleep.

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::common::{SKILLC, copy_dir, manifest_dir, skillc_env, tree, write_test_key};

const SDE: (&str, &str) = ("SOURCE_DATE_EPOCH", "1800000000");
/// A safety net only (every wait is for an event): generous for a loaded 2-core CI.
const TIMEOUT: Duration = Duration::from_secs(180);

/// The watch process; killed if the test fails.
pub(crate) struct Watch {
    child: Child,
    events: mpsc::Receiver<serde_json::Value>,
    /// Events taken in ahead and put back, read first.
    put_back: std::cell::RefCell<std::collections::VecDeque<serde_json::Value>>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Watch {
    fn start(dir: &Path) -> Watch {
        Self::start_with(dir, &["--vocabulary", "vocabulary.toml"])
    }

    /// `skillc watch --key test.key --message-format json ARGS` in `dir`, once it watches.
    pub(crate) fn start_with(dir: &Path, args: &[&str]) -> Watch {
        let mut child = Command::new(SKILLC)
            .args(["watch", "--key", "test.key", "--message-format", "json"])
            .args(args)
            .current_dir(dir)
            .env("NO_COLOR", "1")
            .env_remove("SKILLC_SIGNING_KEY")
            .env(SDE.0, SDE.1)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn skillc watch");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: serde_json::Value =
                    serde_json::from_str(&line).unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let w = Watch {
            child,
            events: rx,
            put_back: Default::default(),
        };
        w.wait_for("watching");
        w
    }

    pub(crate) fn next(&self) -> serde_json::Value {
        if let Some(e) = self.put_back.borrow_mut().pop_front() {
            return e;
        }
        self.events
            .recv_timeout(TIMEOUT)
            .unwrap_or_else(|_| panic!("no event from skillc watch within {TIMEOUT:?}"))
    }

    /// The events already sent, without waiting.
    fn queued(&self) -> Vec<serde_json::Value> {
        let mut v: Vec<serde_json::Value> = self.put_back.borrow_mut().drain(..).collect();
        v.extend(self.events.try_iter());
        v
    }

    /// Whether an event was sent since the last read (it is kept for the next one).
    fn more_queued(&self) -> bool {
        let more = self.queued();
        let any = !more.is_empty();
        self.put_back.borrow_mut().extend(more);
        any
    }

    pub(crate) fn wait_for(&self, reason: &str) -> serde_json::Value {
        loop {
            let e = self.next();
            if e["reason"] == reason {
                return e;
            }
        }
    }
}

/// Builds the same inputs from scratch in another folder and returns its `out/`.
fn clean_build(project: &Path) -> (tempfile::TempDir, BTreeMap<String, (Vec<u8>, bool)>) {
    let other = tempfile::tempdir().expect("tempdir");
    copy_dir(&project.join("skills"), &other.path().join("skills"));
    for f in ["test.key", "vocabulary.toml", "menu-calibration.toml"] {
        if project.join(f).is_file() {
            std::fs::copy(project.join(f), other.path().join(f)).expect("copy");
        }
    }
    let r = skillc_env(
        other.path(),
        &[
            "build",
            "--key",
            "test.key",
            "--vocabulary",
            "vocabulary.toml",
            "--quiet",
        ],
        &[SDE],
    );
    assert!(
        matches!(r.code, Some(0 | 1)),
        "clean build failed:\n{}\n{}",
        r.stdout,
        r.stderr
    );
    let t = tree(&other.path().join("out"));
    (other, t)
}

fn diff(a: &BTreeMap<String, (Vec<u8>, bool)>, b: &BTreeMap<String, (Vec<u8>, bool)>) -> Vec<String> {
    let mut v = Vec::new();
    for (k, x) in a {
        match b.get(k) {
            None => v.push(format!("only in watch's out/: {k}")),
            Some(y) if y != x => v.push(format!("differs: {k}")),
            Some(_) => {}
        }
    }
    for k in b.keys() {
        if !a.contains_key(k) {
            v.push(format!("missing from watch's out/: {k}"));
        }
    }
    v
}

/// Waits until watch has rebuilt `out/` into what a clean build gives, then verifies it.
/// Returns the last `rebuild-finished` event, with the events that came before it since the
/// call under `"_before"`. A `rebuild-failed` event fails the step.
fn settle(w: &Watch, project: &Path, step: &str) -> serde_json::Value {
    settle_through(w, project, step, false)
}

/// [`settle`]; with `transient`, `rebuild-failed` events are expected on the way (a step that
/// passes through a state that cannot build, such as a skills root deleted then made again,
/// which a loaded machine may catch in between) and only the end state counts.
fn settle_through(w: &Watch, project: &Path, step: &str, transient: bool) -> serde_json::Value {
    let (_other, expected) = clean_build(project);
    let mut last_diff = Vec::new();
    let mut before = Vec::new();
    let deadline = std::time::Instant::now() + TIMEOUT;
    loop {
        assert!(
            std::time::Instant::now() < deadline,
            "{step}: out/ never matched a clean build:\n{}",
            last_diff.join("\n")
        );
        let mut e = w.next();
        // `out/` is compared when an event is read, not when it was sent: every event already
        // sent is taken in first, or this step could end on a stale one and leave the events
        // of its last rebuilds (a failure on the way, say) to the next step.
        let mut seen = vec![e.clone()];
        seen.extend(w.queued());
        let mut finished = None;
        for x in seen {
            if x["reason"] == "rebuild-failed" && !transient {
                panic!("{step}: {x}");
            }
            if x["reason"] == "rebuild-finished" {
                if let Some(f) = finished.replace(x) {
                    before.push(f);
                }
            } else {
                before.push(x);
            }
        }
        match finished {
            Some(f) => e = f,
            None => continue,
        }
        last_diff = diff(&tree(&project.join("out")), &expected);
        if !last_diff.is_empty() || w.more_queued() {
            // A rebuild on the way (the step's changes may arrive over several), or one that
            // finished while `out/` was compared.
            before.push(e);
            continue;
        }
        let state = project.join("verify-state.json");
        let _ = std::fs::remove_file(&state);
        let v = skillc_env(
            project,
            &["verify", "out", "--state", state.to_str().expect("utf-8")],
            &[],
        );
        assert_eq!(v.code, Some(0), "{step}: verify failed:\n{}\n{}", v.stdout, v.stderr);
        let mut e = e;
        e["_before"] = serde_json::Value::Array(before);
        return e;
    }
}

fn skill_md(name: &str, subcommand: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Manages {name} records from the command line.\n---\n\n# {name}\n\n```bash\npython3 scripts/tool.py {subcommand} --max 10\n```\n"
    )
}

#[test]
fn watch_keeps_out_equal_to_a_clean_build_through_edits() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p: PathBuf = dir.path().to_path_buf();
    copy_dir(&manifest_dir().join("skills"), &p.join("skills"));
    write_test_key(&p.join("test.key"));
    std::fs::write(p.join("vocabulary.toml"), skillc::BUILT_IN_VOCABULARY).expect("write");
    let w = Watch::start(&p);
    // The first build.
    assert_eq!(diff(&tree(&p.join("out")), &clean_build(&p).1), Vec::<String>::new());

    // 1. Edit a SKILL.md in place: a new sub-command.
    let md = p.join("skills/expense-ledger/SKILL.md");
    let text = std::fs::read_to_string(&md).expect("read");
    std::fs::write(
        &md,
        text.replace("```bash\n", "```bash\npython3 scripts/ledger.py notes list\n"),
    )
    .expect("write");
    let e = settle(&w, &p, "edit in place");
    assert!(e["changed"].to_string().contains("skills/expense-ledger"), "{e}");

    // 2. Save by rename, as editors do: a temporary file, then a rename over SKILL.md.
    let md = p.join("skills/todo/SKILL.md");
    let text = std::fs::read_to_string(&md).expect("read") + "\nMore notes.\n";
    let tmp = p.join("skills/todo/.SKILL.md.swp");
    std::fs::write(&tmp, text).expect("write");
    std::fs::rename(&tmp, &md).expect("rename");
    settle(&w, &p, "rename-save");

    // 3. A new skill.
    let new = p.join("skills/ledger-notes");
    std::fs::create_dir_all(new.join("scripts")).expect("mkdir");
    std::fs::write(new.join("scripts/tool.py"), "print('ok')\n").expect("write");
    std::fs::write(new.join("SKILL.md"), skill_md("ledger-notes", "files list")).expect("write");
    let e = settle(&w, &p, "add a skill");
    assert!(e["executors"].as_u64().is_some_and(|n| n > 0), "{e}");

    // 4. A skill deleted.
    std::fs::remove_dir_all(p.join("skills/runbooks")).expect("rm");
    let e = settle(&w, &p, "delete a skill");
    assert!(!p.join("out/skills/runbooks").exists(), "{e}");

    // 5. A skill broken (invalid YAML), then repaired.
    let md = p.join("skills/ledger-notes/SKILL.md");
    std::fs::write(&md, "---\nname: [ledger-notes\n---\n").expect("write");
    let e = settle(&w, &p, "break a skill");
    assert!(e["rejected_skills"].to_string().contains("skills/ledger-notes"), "{e}");
    // Why, as `build` says it.
    let why = e["_before"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|b| b["reason"] == "skill-rejected" && b["path"] == "skills/ledger-notes");
    assert!(
        why.is_some_and(|b| b["message"].as_str().is_some_and(|m| m.starts_with("SK006"))),
        "{e}"
    );
    std::fs::write(&md, skill_md("ledger-notes", "files list")).expect("write");
    let e = settle(&w, &p, "repair a skill");
    assert_eq!(e["skills_rejected"], 0, "{e}");

    // 6. The vocabulary: a label changes every language state that uses it.
    let v = p.join("vocabulary.toml");
    let text = std::fs::read_to_string(&v).expect("read");
    std::fs::write(&v, text.replacen("en = \"list\"", "en = \"enumerate\"", 1)).expect("write");
    let e = settle(&w, &p, "edit the vocabulary");
    assert!(e["executors_updated"].as_u64().is_some_and(|n| n > 0), "{e}");

    // 6b. A threshold recorded by `skillc menu calibrate` goes into the menu index.
    std::fs::write(
        p.join("menu-calibration.toml"),
        "calibration_format = \"1\"\n\n[[threshold]]\nembedder = \"lexical/4\"\nrecipe = \"doc/1\"\ntau = 0.345\n\
         battery = \"b.toml\"\nbattery_sha256 = \"00\"\nmax_false_offers = 0.15\nrecall_at_size = 0.5\nfalse_offers = 0.1\n",
    )
    .expect("write");
    settle(&w, &p, "record a menu threshold");
    let m = skillc_env(
        &p,
        &["menu", "--turn", "list my notes", "--state", "menu-state.json"],
        &[],
    );
    assert_eq!(m.code, Some(0), "{}", m.stderr);
    assert_eq!(m.json()["threshold"], 0.345, "{}", m.stdout);

    // 7. The skills root deleted and made again (its watch is gone with it), then a skill of
    // the new root edited: both are seen.
    let root = p.join("skills");
    let keep = dir.path().join("kept-skill");
    std::fs::rename(root.join("ledger-notes"), &keep).expect("move out");
    std::fs::remove_dir_all(&root).expect("rm root");
    std::fs::create_dir(&root).expect("mkdir root");
    std::fs::rename(&keep, root.join("ledger-notes")).expect("move back");
    settle_through(&w, &p, "recreate the skills root", true);
    std::fs::write(
        root.join("ledger-notes/SKILL.md"),
        // A new name (`files get` without an item to read lists, as `files list` does).
        skill_md("ledger-notes", "files delete"),
    )
    .expect("write");
    let e = settle(&w, &p, "edit a skill of the new root");
    // The new executor may come with the last restart's build or a rebuild after it.
    let added = |e: &serde_json::Value| e["executors_added"].as_u64().is_some_and(|n| n > 0);
    assert!(
        added(&e) || e["_before"].as_array().is_some_and(|b| b.iter().any(added)),
        "{e}"
    );

    // Ctrl-C: a clean exit.
    let pid = w.child.id().to_string();
    let status = Command::new("kill").args(["-INT", &pid]).status().expect("kill");
    assert!(status.success());
    w.wait_for("watch-stopped");
    let mut w = w;
    let code = w.child.wait().expect("wait").code();
    assert_eq!(code, Some(0));
}

/// Waits (on watch's events, never on time alone) until `done` holds after a
/// `rebuild-finished` event; returns the events seen, the last one last.
fn until(w: &Watch, step: &str, done: impl Fn(&serde_json::Value) -> bool) -> Vec<serde_json::Value> {
    let deadline = std::time::Instant::now() + TIMEOUT;
    let mut seen = Vec::new();
    loop {
        assert!(
            std::time::Instant::now() < deadline,
            "{step}: never happened; events: {seen:?}"
        );
        let e = w.next();
        let finished = e["reason"] == "rebuild-finished";
        seen.push(e);
        if finished && done(seen.last().expect("an event")) {
            return seen;
        }
    }
}

/// A project of the example skills `names` (under `skills/`) with the test key: its folder and
/// path.
fn project_of(names: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let p: PathBuf = dir.path().to_path_buf();
    for s in names {
        copy_dir(&manifest_dir().join("skills").join(s), &p.join("skills").join(s));
    }
    write_test_key(&p.join("test.key"));
    (dir, p)
}

/// Issue 18, item 12: `pipeline.toml`, `vocabulary.toml` and `skillc.lock` created after
/// watch started are picked up (each restarts or rebuilds the session), and a skill that
/// becomes invalid is reported with the file:line:column of what rejects it.
#[test]
fn watch_picks_up_project_files_created_after_it_started() {
    let (_dir, p) = project_of(&["todo", "runbooks"]);
    let w = Watch::start_with(&p, &[]);
    let manifest = |out: &str| {
        let dir = p.join(out).join("executors/todo");
        let first = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .next()
            .expect("an executor")
            .expect("entry")
            .path();
        std::fs::read_to_string(first.join("manifest.toml")).expect("manifest")
    };
    assert!(manifest("out").contains("imported_from = \"skills/todo\""));

    // A vocabulary.toml appears: its labels are used from then on.
    let vocab = skillc::BUILT_IN_VOCABULARY.replacen("en = \"list\"", "en = \"enumerate\"", 1);
    std::fs::write(p.join("vocabulary.toml"), vocab).expect("write");
    until(&w, "create vocabulary.toml", |_| {
        walkdir::WalkDir::new(p.join("out/executors"))
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_name() == "manifest.lang_state.json")
            .any(|e| {
                std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains("Enumerate") || t.contains("enumerate"))
            })
    });

    // A skillc.lock appears: the provenance it records is used.
    std::fs::write(
        p.join("skillc.lock"),
        "version = 1\n\n[[skill]]\nname = \"todo\"\nsource = \"https://example.org/todo.git\"\nsha256 = \"00\"\nimported_at = \"2027-01-15T08:00:00Z\"\n",
    )
    .expect("write");
    until(&w, "create skillc.lock", |_| {
        manifest("out").contains("https://example.org/todo.git")
    });

    // A pipeline.toml appears: its output folder is used.
    std::fs::write(p.join("pipeline.toml"), "[pipeline]\nout = \"dist\"\n").expect("write");
    until(&w, "create pipeline.toml", |_| p.join("dist/catalog.toml").is_file());
    assert!(manifest("dist").contains("https://example.org/todo.git"));

    // A skill made invalid: rejected, with where.
    let md = p.join("skills/todo/SKILL.md");
    let text = std::fs::read_to_string(&md).expect("read");
    std::fs::write(&md, text.replacen("name: todo", "name: [todo", 1)).expect("write");
    let seen = until(&w, "break a skill", |e| e["skills_rejected"] == 1);
    let rejected = seen
        .iter()
        .find(|e| e["reason"] == "skill-rejected")
        .unwrap_or_else(|| panic!("no skill-rejected event: {seen:?}"));
    let at = rejected["at"]
        .as_str()
        .unwrap_or_else(|| panic!("no position: {rejected}"));
    let place: Vec<&str> = at.rsplitn(3, ':').collect();
    assert!(
        place.len() == 3
            && place[2] == "skills/todo/SKILL.md"
            && place[..2].iter().all(|n| n.parse::<u32>().is_ok_and(|n| n > 0)),
        "{rejected}"
    );
}

/// A vocabulary.toml that appears invalid (watch restarts its session on it, and the restart
/// fails) is reported, and once it is fixed watch builds with it. Fails before the fix: after
/// the failed restart watch polled `pipeline.toml` and the skill roots only, so the fixed
/// vocabulary was never seen and watch never rebuilt.
#[test]
fn watch_rebuilds_once_an_invalid_vocabulary_is_fixed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p: PathBuf = dir.path().to_path_buf();
    copy_dir(&manifest_dir().join("skills/todo"), &p.join("skills/todo"));
    write_test_key(&p.join("test.key"));
    let w = Watch::start_with(&p, &[]);
    std::fs::write(p.join("vocabulary.toml"), "this is [[ not toml\n").expect("write");
    let failed = w.wait_for("rebuild-failed");
    assert!(
        failed["message"].as_str().is_some_and(|m| m.contains("vocabulary")),
        "{failed}"
    );
    let vocab = skillc::BUILT_IN_VOCABULARY.replacen("en = \"list\"", "en = \"enumerate\"", 1);
    std::fs::write(p.join("vocabulary.toml"), vocab).expect("write");
    until(&w, "fix vocabulary.toml", |_| {
        walkdir::WalkDir::new(p.join("out/executors"))
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_name() == "manifest.lang_state.json")
            .any(|e| std::fs::read_to_string(e.path()).is_ok_and(|t| t.to_lowercase().contains("enumerate")))
    });
    // A second invalid edit, now of a watched vocabulary file, and its fix: rebuilt again.
    std::fs::write(p.join("vocabulary.toml"), "still [[ not toml\n").expect("write");
    w.wait_for("rebuild-failed");
    std::fs::write(p.join("vocabulary.toml"), skillc::BUILT_IN_VOCABULARY).expect("write");
    until(&w, "fix vocabulary.toml again", |_| {
        walkdir::WalkDir::new(p.join("out/executors"))
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_name() == "manifest.lang_state.json")
            .all(|e| std::fs::read_to_string(e.path()).is_ok_and(|t| !t.to_lowercase().contains("enumerate")))
    });
}

/// A restart that finds the skills root made again but still empty fails ("no skill found");
/// a skill then moved into the root is seen and built. Fails before the fix: after the failed
/// restart watch only polled whether the root existed and the project files, neither of which
/// a skill moved into the root changes, so it waited forever (CI's flaky step 7 of
/// `watch_keeps_out_equal_to_a_clean_build_through_edits`, when the restart came between
/// `mkdir` and the move back).
#[test]
fn watch_builds_a_skill_moved_into_a_root_made_again_empty() {
    let (dir, p) = project_of(&["todo", "runbooks"]);
    std::fs::write(p.join("vocabulary.toml"), skillc::BUILT_IN_VOCABULARY).expect("write");
    let w = Watch::start(&p);
    let root = p.join("skills");
    let keep = dir.path().join("kept-skill");
    std::fs::rename(root.join("todo"), &keep).expect("move out");
    std::fs::remove_dir_all(&root).expect("rm root");
    std::fs::create_dir(&root).expect("mkdir root");
    // The restart that finds the root empty (an earlier one may have found it missing).
    loop {
        let e = w.next();
        if e["reason"] == "rebuild-failed"
            && e["message"]
                .as_str()
                .is_some_and(|m| m.contains("no skill found") && m.contains("fix it"))
        {
            break;
        }
    }
    std::fs::rename(&keep, root.join("todo")).expect("move back");
    let e = settle(&w, &p, "a skill moved into the empty root");
    assert_eq!(e["skills"], 1, "{e}");
}

/// A watched vocabulary made unreadable as text (invalid UTF-8) is reported; restoring the
/// very text the session last built with ends the failure with a `rebuild-finished`. Fails
/// before the fix: the restored vocabulary equals the session's, so nothing differed, nothing
/// was built and the failure was never seen to end.
#[test]
fn watch_reports_the_rebuild_that_ends_a_failure_even_when_nothing_differs() {
    let (_dir, p) = project_of(&["todo"]);
    std::fs::write(p.join("vocabulary.toml"), skillc::BUILT_IN_VOCABULARY).expect("write");
    let w = Watch::start(&p);
    let mut broken = skillc::BUILT_IN_VOCABULARY.as_bytes().to_vec();
    broken.extend_from_slice(b"# \xff\xfe\n");
    std::fs::write(p.join("vocabulary.toml"), &broken).expect("write");
    let failed = w.wait_for("rebuild-failed");
    assert!(
        failed["message"]
            .as_str()
            .is_some_and(|m| m.contains("vocabulary.toml")),
        "{failed}"
    );
    std::fs::write(p.join("vocabulary.toml"), skillc::BUILT_IN_VOCABULARY).expect("write");
    let done = w.wait_for("rebuild-finished");
    assert!(
        done["changed"]
            .as_array()
            .is_some_and(|c| c.iter().any(|x| x.as_str().is_some_and(|s| s.contains("vocabulary")))),
        "{done}"
    );
}

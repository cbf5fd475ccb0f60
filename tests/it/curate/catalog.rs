//! After a real run the next `skillc build` reflects it — an archived skill leaves the
//! catalog, a restored one comes back — and `skillc watch` picks both up by itself.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::support::{P, ago};
use crate::common::{SKILLC, copy_dir, manifest_dir, skillc_env, write_test_key};

fn project() -> P {
    let p = P::new("");
    for s in ["todo", "runbooks"] {
        copy_dir(&manifest_dir().join("skills").join(s), &p.path().join("skills").join(s));
    }
    write_test_key(&p.path().join("test.key"));
    p.created("todo", "auto_generated", &ago(200, 0));
    p.verdicts(json!({"archive:*": {"action": "archive"}}));
    p
}

/// The skills the built catalog lists.
fn catalog_skills(p: &P) -> Vec<String> {
    let text = std::fs::read_to_string(p.path().join("out/catalog.toml")).unwrap_or_default();
    let mut v: Vec<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("skill = \"").and_then(|r| r.strip_suffix('"')))
        .map(str::to_owned)
        .collect();
    v.sort();
    v.dedup();
    v
}

fn build(p: &P) {
    let r = skillc_env(p.path(), &["build", "--key", "test.key"], &[]);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    let v = skillc_env(p.path(), &["verify", "out", "--state", "verify-state.json"], &[]);
    assert_eq!(v.code, Some(0), "{}{}", v.stdout, v.stderr);
    let _ = std::fs::remove_file(p.path().join("verify-state.json"));
}

#[test]
fn the_next_build_reflects_a_run_and_a_restore() {
    let p = project();
    build(&p);
    assert_eq!(catalog_skills(&p), vec!["runbooks", "todo"]);
    assert_eq!(p.json(&["run"])["actions"][0]["skill"], "todo");
    build(&p);
    assert_eq!(
        catalog_skills(&p),
        vec!["runbooks"],
        "the archive root is never read by build"
    );
    assert_eq!(p.curate(&["restore", "todo"]).code, Some(0));
    build(&p);
    assert_eq!(catalog_skills(&p), vec!["runbooks", "todo"]);
}

struct Watch(Child, mpsc::Receiver<serde_json::Value>);

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Watch {
    /// Waits for `reason` (a safety-net deadline; every wait is for an event).
    fn wait_for(&self, reason: &str) -> serde_json::Value {
        self.until(reason, |e| e["reason"] == reason)
    }

    /// Waits for a `rebuild-finished` after which `done` holds: a change may arrive over
    /// several rebuilds (an archive moves files in more than one step), the last one counts.
    fn settled(&self, what: &str, done: impl Fn() -> bool) -> serde_json::Value {
        self.until(what, |e| e["reason"] == "rebuild-finished" && done())
    }

    fn until(&self, what: &str, done: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
        let deadline = Instant::now() + Duration::from_secs(180);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let e = self
                .1
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no `{what}` from skillc watch"));
            assert_ne!(e["reason"], "rebuild-failed", "{e}");
            if done(&e) {
                return e;
            }
        }
    }
}

#[test]
fn watch_picks_up_an_archive_and_a_restore() {
    let p = project();
    let mut child = Command::new(SKILLC)
        .args(["watch", "--key", "test.key", "--message-format", "json"])
        .current_dir(p.path())
        .env("NO_COLOR", "1")
        .env_remove("SKILLC_SIGNING_KEY")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str(&line)
                && tx.send(v).is_err()
            {
                break;
            }
        }
    });
    let w = Watch(child, rx);
    w.wait_for("watching");
    assert_eq!(catalog_skills(&p), vec!["runbooks", "todo"]);
    assert_eq!(p.json(&["run"])["actions"][0]["skill"], "todo");
    w.settled("the archive", || catalog_skills(&p) == ["runbooks"]);
    assert_eq!(p.curate(&["restore", "todo"]).code, Some(0));
    w.settled("the restore", || catalog_skills(&p) == ["runbooks", "todo"]);
}

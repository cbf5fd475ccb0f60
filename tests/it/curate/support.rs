//! A curator test project: skills written on disk, an event history written as the log's
//! lines, canned verdicts for the scripted model (`tests/fixtures/curate/model.py`, a real
//! process counting its calls in `calls.jsonl`), and the real `skillc curate` run at a fixed
//! clock (`SKILLC_NOW`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::{Run, manifest_dir, skillc_env};

/// The clock of every run unless a test says otherwise.
pub const NOW: &str = "2026-06-01T00:00:00Z";

/// `NOW` minus `days` days (and `secs` seconds), RFC 3339.
pub fn ago(days: i64, secs: i64) -> String {
    let now: jiff::Timestamp = NOW.parse().expect("time");
    jiff::Timestamp::from_second(now.as_second() - days * 86_400 - secs)
        .expect("time")
        .to_string()
}

/// The scripted model.
pub fn model_script() -> PathBuf {
    manifest_dir().join("tests/fixtures/curate/model.py")
}

/// The `[curator] model` line running the scripted model.
pub fn model_line(timeout_secs: u32) -> String {
    format!(
        "model = {{ command = [\"python3\", {:?}], timeout_secs = {timeout_secs} }}",
        model_script().display().to_string()
    )
}

pub struct P {
    dir: tempfile::TempDir,
}

impl P {
    /// A project whose `[curator]` section is the scripted model plus `extra` lines.
    pub fn new(extra: &str) -> P {
        // A safety net only: python3 starting on a loaded machine is never cut off.
        Self::with_curator(&format!("{}\n{extra}", model_line(120)))
    }

    /// A project whose `[curator]` section is exactly `section`.
    pub fn with_curator(section: &str) -> P {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("skills")).expect("mkdir");
        std::fs::write(dir.path().join("pipeline.toml"), format!("[curator]\n{section}\n")).expect("write");
        P { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `skills/NAME/SKILL.md`.
    pub fn skill(&self, name: &str, description: &str) {
        self.skill_body(
            name,
            description,
            &format!("# {name}\n\nRun `{name}-tool --check`.\nThen read the output.\n"),
        );
    }

    pub fn skill_body(&self, name: &str, description: &str, body: &str) {
        let dir = self.path().join("skills").join(name);
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {description}\n---\n\n{body}"),
        )
        .expect("write");
    }

    /// Appends raw lines to `.skillc/events.jsonl`.
    pub fn events_raw(&self, lines: &[Value]) {
        use std::io::Write;
        let path = self.path().join(".skillc/events.jsonl");
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("open");
        for l in lines {
            writeln!(f, "{l}").expect("write");
        }
    }

    pub fn created(&self, skill: &str, source: &str, time: &str) {
        self.events_raw(&[json!({"event": "skill.created", "time": time, "skill": skill, "source": source})]);
    }

    pub fn loaded(&self, skill: &str, session: &str, time: &str) {
        self.events_raw(&[json!({"event": "skill.loaded", "time": time, "skill": skill, "session": session})]);
    }

    pub fn failed(&self, session: &str, tool: &str, time: &str) {
        self.events_raw(&[json!({"event": "tool.failed", "time": time, "session": session, "tool": tool})]);
    }

    /// An agent-written skill created `days` days ago.
    pub fn agent_skill(&self, name: &str, description: &str, days: i64) {
        self.skill(name, description);
        self.created(name, "auto_generated", &ago(days, 0));
    }

    pub fn verdicts(&self, v: Value) {
        std::fs::write(self.path().join("verdicts.json"), v.to_string()).expect("write");
    }

    /// Writes `text` to `rel` in the project, creating its folder.
    pub fn write(&self, rel: &str, text: &str) {
        let path = self.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    /// The lines of the JSON Lines file `rel` of the project, parsed (none when it is missing).
    fn jsonl(&self, rel: &str) -> Vec<Value> {
        std::fs::read_to_string(self.path().join(rel))
            .unwrap_or_default()
            .lines()
            .enumerate()
            .map(|(i, l)| {
                serde_json::from_str(l).unwrap_or_else(|e| panic!("{rel}:{}: a line is not JSON ({e}): {l:?}", i + 1))
            })
            .collect()
    }

    /// The scripted model's calls, in order.
    pub fn calls(&self) -> Vec<Value> {
        self.jsonl("calls.jsonl")
    }

    pub fn curate(&self, args: &[&str]) -> Run {
        self.curate_at(NOW, args, &[])
    }

    pub fn curate_at(&self, now: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut all = vec!["curate"];
        all.extend_from_slice(args);
        let mut env = env.to_vec();
        env.push(("SKILLC_NOW", now));
        skillc_env(self.path(), &all, &env)
    }

    /// `curate ARGS --format json`, parsed.
    pub fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.extend(["--format", "json"]);
        let r = self.curate(&all);
        r.json()
    }

    /// The log's lines, parsed.
    pub fn events(&self) -> Vec<Value> {
        self.jsonl(".skillc/events.jsonl")
    }

    /// The `skill.curated` events.
    pub fn curated(&self) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|e| e["event"] == "skill.curated")
            .collect()
    }

    pub fn state(&self) -> Option<Value> {
        std::fs::read(self.path().join(".skillc/curator/state.json"))
            .ok()
            .map(|b| serde_json::from_slice(&b).expect("state.json"))
    }

    /// Every file of the project but the run lock: relative path → bytes.
    pub fn tree(&self) -> BTreeMap<String, Vec<u8>> {
        walkdir::WalkDir::new(self.path())
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file() && e.file_name() != ".curator.lock")
            .map(|e| {
                let rel = e
                    .path()
                    .strip_prefix(self.path())
                    .expect("inside")
                    .to_string_lossy()
                    .into_owned();
                (rel, std::fs::read(e.path()).expect("read"))
            })
            .collect()
    }

    /// The files under `skills/` and `skills-archive/` (no lock), as paths.
    pub fn files(&self) -> Vec<String> {
        self.tree()
            .into_keys()
            .filter(|k| k.starts_with("skills/") || k.starts_with("skills-archive/"))
            .collect()
    }

    /// Folder names under `skills-archive/`.
    pub fn archived(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.path().join("skills-archive"))
            .map(|d| {
                d.filter_map(Result::ok)
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }
}

/// The `action`s and skill lists of a report's `candidates`.
pub fn plan(report: &Value) -> Vec<String> {
    report["candidates"]
        .as_array()
        .expect("candidates")
        .iter()
        .map(|c| {
            let skills = match c.get("skills") {
                Some(s) => s
                    .as_array()
                    .expect("skills")
                    .iter()
                    .map(|x| x.as_str().expect("name").to_owned())
                    .collect::<Vec<_>>()
                    .join(","),
                None => c["skill"].as_str().expect("skill").to_owned(),
            };
            format!("{} {skills}", c["action"].as_str().expect("action"))
        })
        .collect()
}

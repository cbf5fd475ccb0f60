//! `skillc events record` (how runtimes write the log), atomic appends from many writers, and
//! `[curator]` configuration errors reported with file:line like the rest of pipeline.toml.

use serde_json::json;

use super::support::{NOW, P};
use crate::common::skillc_env;

#[test]
fn runtimes_record_events_and_text_is_refused() {
    let p = P::new("");
    p.skill("pdf-tools", "Fills PDF forms.");
    let rec = |args: &[&str]| {
        let mut all = vec!["events", "record"];
        all.extend_from_slice(args);
        skillc_env(p.path(), &all, &[("SKILLC_NOW", NOW)])
    };
    assert_eq!(
        rec(&["skill.created", "--skill", "pdf-tools", "--source", "auto_generated"]).code,
        Some(0)
    );
    assert_eq!(
        rec(&["skill.loaded", "--skill", "pdf-tools", "--session", "7f3a-01"]).code,
        Some(0)
    );
    assert_eq!(
        rec(&[
            "tool.failed",
            "--session",
            "7f3a-01",
            "--tool",
            "mcp__gh__create_issue",
            "--time",
            "2026-06-01T00:10:00+02:00"
        ])
        .code,
        Some(0)
    );
    assert_eq!(
        p.events(),
        vec![
            json!({"event": "skill.created", "time": NOW, "skill": "pdf-tools", "source": "auto_generated"}),
            json!({"event": "skill.loaded", "time": NOW, "skill": "pdf-tools", "session": "7f3a-01"}),
            json!({"event": "tool.failed", "time": "2026-05-31T22:10:00Z", "session": "7f3a-01", "tool": "mcp__gh__create_issue"}),
        ]
    );
    assert!(p.path().join(".skillc/.gitignore").is_file());
    for bad in [
        &["tool.failed", "--session", "s 1", "--tool", "bash"][..],
        &["skill.loaded", "--skill", "Not A Name", "--session", "s"],
        &["skill.loaded", "--skill", "pdf-tools"],
        &[
            "skill.loaded",
            "--skill",
            "pdf-tools",
            "--session",
            "s",
            "--tool",
            "bash",
        ],
        &["skill.created", "--skill", "pdf-tools"],
        &["skill.curated", "--skill", "pdf-tools"],
    ] {
        let r = rec(bad);
        assert_eq!(r.code, Some(2), "{bad:?}: {}", r.stderr);
    }
    assert_eq!(p.events().len(), 3, "refused events write nothing");
    // A skill the project does not have: exit 1, naming the skills it has; nothing written.
    for kind in [
        &["skill.loaded", "--session", "s"][..],
        &["skill.created", "--source", "manual"],
    ] {
        let mut args = kind.to_vec();
        args.extend(["--skill", "pdf-tool"]);
        let r = rec(&args);
        assert_eq!(r.code, Some(1), "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("no skill named `pdf-tool`") && r.stderr.contains("the skills are: pdf-tools"),
            "{}",
            r.stderr
        );
    }
    assert_eq!(p.events().len(), 3, "an unknown skill writes nothing");
}

#[test]
fn concurrent_appends_never_tear_a_line() {
    // Eight processes at a time, each appending long lines: every line arrives whole.
    let p = P::new("");
    for w in 0..8 {
        p.skill(&format!("skill-{w}"), "Does one thing.");
    }
    let root = p.path().to_path_buf();
    let long = "x".repeat(100);
    let threads: Vec<_> = (0..8)
        .map(|w| {
            let (root, long) = (root.clone(), long.clone());
            std::thread::spawn(move || {
                for i in 0..20 {
                    let (skill, session) = (format!("skill-{w}"), format!("session-{w}-{i}-{long}"));
                    let args = [
                        "events",
                        "record",
                        "skill.loaded",
                        "--skill",
                        &skill,
                        "--session",
                        &session,
                    ];
                    let r = skillc_env(&root, &args, &[("SKILLC_NOW", NOW)]);
                    assert_eq!(r.code, Some(0), "{}", r.stderr);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let events = p.events();
    assert_eq!(events.len(), 160);
    for w in 0..8 {
        let mine: Vec<String> = events
            .iter()
            .filter(|e| e["skill"] == format!("skill-{w}"))
            .map(|e| e["session"].as_str().unwrap().to_owned())
            .collect();
        let want: Vec<String> = (0..20).map(|i| format!("session-{w}-{i}-{long}")).collect();
        assert_eq!(mine, want, "each writer's lines arrive whole and in its order");
    }
}

#[test]
fn curator_settings_errors_have_file_and_line() {
    let p = P::with_curator("enabled = true\narchive_after = 30\n");
    for cmd in [
        &["curate", "status"][..],
        &["build"],
        &["events", "record", "tool.failed", "--session", "s", "--tool", "t"],
    ] {
        let r = skillc_env(p.path(), cmd, &[]);
        assert_eq!(r.code, Some(2), "{cmd:?}");
        assert!(r.stderr.contains("CF002"), "{}", r.stderr);
        assert!(r.stderr.contains("pipeline.toml:3:1"), "{}", r.stderr);
    }
    let p = P::with_curator("per_day_max_usd = \"lots\"\n");
    let r = skillc_env(p.path(), &["curate", "status"], &[]);
    assert!(
        r.stderr.contains("CF001") && r.stderr.contains("pipeline.toml:2:"),
        "{}",
        r.stderr
    );
}

#[test]
fn another_runtimes_log_is_read_besides_the_projects() {
    let runtime = tempfile::tempdir().unwrap();
    let log = runtime.path().join("events.jsonl");
    let p = P::new(&format!("events = {:?}", log.display().to_string()));
    p.skill("agent-notes", "Keep meeting notes tidy.");
    p.skill("agent-stale", "Convert units between systems.");
    // The runtime's log says who wrote them and that one was used lately.
    let lines = [
        json!({"event": "skill.created", "time": super::support::ago(200, 0), "skill": "agent-notes", "source": "auto_generated"}),
        json!({"event": "skill.created", "time": super::support::ago(200, 0), "skill": "agent-stale", "source": "auto_generated"}),
        json!({"event": "skill.loaded", "time": super::support::ago(3, 0), "skill": "agent-notes", "session": "rt-1"}),
        json!({"event": "turn.started", "time": super::support::ago(3, 0), "session": "rt-1"}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&log, &text).unwrap();
    let r = p.json(&["run", "--dry-run"]);
    assert_eq!(super::support::plan(&r), vec!["archive agent-stale"]);
    assert_eq!(r["warnings"], json!([]));
    // Naming the project's own log there does not count its events twice.
    let q = P::new("events = \".skillc/events.jsonl\"");
    q.agent_skill("twice", "Count things once.", 50);
    for k in 0..2 {
        q.loaded("twice", &format!("s{k}"), &super::support::ago(1, k));
        q.failed(&format!("s{k}"), "bash", &super::support::ago(1, k - 60));
    }
    let s = q.json(&["status"]);
    assert_eq!(s["candidates"], json!([]), "two loads, not four: no edit candidate");
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        text,
        "the other log is only read"
    );
}

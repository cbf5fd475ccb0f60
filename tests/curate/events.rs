//! `skillc events record` (how runtimes write the log), atomic appends from many writers, and
//! `[curator]` configuration errors reported with file:line like the rest of pipeline.toml.

use serde_json::json;

use crate::common::skillc_env;
use crate::support::{NOW, P};

#[test]
fn runtimes_record_events_and_text_is_refused() {
    let p = P::new("");
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
}

#[test]
fn concurrent_appends_never_tear_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".skillc/events.jsonl");
    let threads: Vec<_> = (0..8)
        .map(|w| {
            let path = path.clone();
            std::thread::spawn(move || {
                for i in 0..100 {
                    let e = skillc::events::Event::new(
                        NOW.parse().unwrap(),
                        skillc::events::Kind::Loaded {
                            skill: format!("skill-{w}"),
                            session: format!("session-{w}-{i}-{}", "x".repeat(100)),
                        },
                    );
                    skillc::events::append(&path, &e).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let log = skillc::events::read(&path, "events.jsonl").unwrap();
    assert_eq!(log.problems, vec![]);
    assert_eq!(log.events.len(), 800);
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

//! Acceptance 3: a run killed between an action's file operation and its state write (the
//! `SKILLC_CURATOR_FAULT` hook aborts the process there, as a kill would) is reconciled by
//! the next run: no double archive, no lost skill, one event per action.

use serde_json::json;

use super::support::{P, ago};

fn killed_run(p: &P, point: &str) {
    let r = p.curate_at(super::support::NOW, &["run"], &[("SKILLC_CURATOR_FAULT", point)]);
    assert_eq!(r.code, None, "the run was aborted by a signal: {r:?}");
}

/// Every skill is exactly once in `skills/` or in the archive root.
fn none_lost_none_doubled(p: &P, names: &[&str]) {
    let archived = p.archived();
    for n in names {
        let live = p.path().join("skills").join(n).join("SKILL.md").is_file() as usize;
        let prefix = format!("{n}-2026");
        let in_archive = archived
            .iter()
            .filter(|a| a.starts_with(&prefix) && !a.contains("-edit-"))
            .count();
        assert_eq!(
            live + in_archive,
            1,
            "{n}: live {live}, archived {in_archive} ({archived:?})"
        );
    }
}

#[test]
fn a_run_killed_between_a_move_and_the_state_write_is_reconciled() {
    let p = P::new("");
    p.agent_skill("stale-one", "Explain pasta recipes.", 200);
    p.agent_skill("stale-two", "Explain bicycle brakes.", 150);
    p.verdicts(json!({"archive:*": {"action": "archive"}}));
    killed_run(&p, "after-move");
    // The first archive was moved; its state and event were never written.
    assert_eq!(p.archived(), vec!["stale-one-20260601T000000Z"]);
    let state = p.state().unwrap();
    assert_eq!(state["pending"].as_array().unwrap().len(), 1);
    assert!(state["skills"].get("stale-one").is_none());
    assert!(p.curated().is_empty());
    none_lost_none_doubled(&p, &["stale-one", "stale-two"]);
    // The status shows it; the next run finishes it, then goes on.
    assert_eq!(p.json(&["status"])["pending"], 1);
    let r = p.curate_at(&ago(0, -60), &["run", "--format", "json"], &[]).json();
    assert_eq!(
        r["reconciled"],
        json!([{"action": "archive", "skill": "stale-one", "outcome": "finished",
        "detail": "skills-archive/stale-one-20260601T000000Z exists: the move was done"}])
    );
    assert_eq!(
        p.archived(),
        vec!["stale-one-20260601T000000Z", "stale-two-20260601T000100Z"]
    );
    none_lost_none_doubled(&p, &["stale-one", "stale-two"]);
    let curated: Vec<String> = p
        .curated()
        .iter()
        .map(|e| e["skill"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(curated, vec!["stale-one", "stale-two"]);
    let state = p.state().unwrap();
    assert!(state.get("pending").is_none(), "{state}");
    assert_eq!(
        state["skills"]["stale-one"]["archive_path"],
        "skills-archive/stale-one-20260601T000000Z"
    );
    // And it can be restored from the recorded path.
    assert_eq!(p.curate_at(&ago(0, -120), &["restore", "stale-one"], &[]).code, Some(0));
    none_lost_none_doubled(&p, &["stale-one", "stale-two"]);
}

#[test]
fn a_run_killed_after_the_event_does_not_record_it_twice() {
    let p = P::new("");
    p.agent_skill("stale-one", "Explain pasta recipes.", 200);
    p.verdicts(json!({"archive:*": {"action": "archive"}}));
    killed_run(&p, "after-event");
    assert_eq!(p.curated().len(), 1);
    let r = p.curate_at(&ago(0, -60), &["run", "--format", "json"], &[]).json();
    assert_eq!(r["reconciled"][0]["outcome"], "finished");
    assert_eq!(p.curated().len(), 1, "the event was already in the log");
    assert_eq!(r["candidates"], json!([]));
    none_lost_none_doubled(&p, &["stale-one"]);
}

#[test]
fn an_edit_killed_before_its_state_write_is_reconciled() {
    let p = P::new("");
    p.agent_skill("flaky-tool", "Run the flaky tool.", 50);
    for k in 0..3 {
        let s = format!("f{k}");
        p.loaded("flaky-tool", &s, &ago(1, 3600 * k));
        p.failed(&s, "bash", &ago(1, 3600 * k - 60));
    }
    p.verdicts(json!({"edit:*": {"$replace": ["flaky-tool-tool", "steady-tool"]}}));
    killed_run(&p, "after-move");
    let md = std::fs::read_to_string(p.path().join("skills/flaky-tool/SKILL.md")).unwrap();
    assert!(md.contains("steady-tool"), "the body was written before the kill");
    let r = p.curate_at(&ago(0, -60), &["run", "--format", "json"], &[]).json();
    assert_eq!(r["reconciled"][0]["outcome"], "finished", "{r}");
    assert_eq!(
        p.state().unwrap()["skills"]["flaky-tool"]["snapshots"][0]["path"],
        "skills-archive/flaky-tool-edit-20260601T000000Z"
    );
    assert_eq!(p.curated().len(), 1);
    // The same failures are still in the window, so it is a candidate again: the model is asked
    // about the new body, not a second copy of the old one.
    assert_eq!(p.calls().len(), 2);
}

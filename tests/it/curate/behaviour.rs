//! Acceptance 1: who may be touched, the selection rules, the archive and restore rules,
//! verdict validation and the events of a run.

use serde_json::json;

use super::support::{NOW, P, ago, plan};

const DESC: &str = "Summarise quarterly sales figures into a short report. Use when asked for sales.";

#[test]
fn a_skill_without_skill_created_is_never_touched() {
    let p = P::new("");
    p.skill("hand-written", DESC);
    // Loaded once, 10× the archive window ago; and another never loaded at all.
    p.loaded("hand-written", "s1", &ago(900, 0));
    p.skill("hand-written-too", DESC);
    p.verdicts(json!({"archive:*": {"action": "archive"}, "consolidate:*": {"$survivor": "first", "body": "x\n"}}));
    let r = p.json(&["run"]);
    assert_eq!(plan(&r), Vec::<String>::new());
    assert_eq!(r["reason"], "no_candidates");
    assert!(p.calls().is_empty());
    assert!(p.path().join("skills/hand-written/SKILL.md").is_file());
    let status = p.json(&["status"]);
    assert_eq!(status["touchable"], 0);
    assert!(
        status["stale"].as_array().unwrap().is_empty(),
        "manual skills are not even stale: {status}"
    );
}

#[test]
fn imported_skills_are_read_only() {
    let p = P::new("");
    // A real import records skill.created {source: imported}.
    let src = tempfile::tempdir().unwrap();
    let dir = src.path().join("vendor-tool");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: vendor-tool\ndescription: {DESC}\n---\n\n# V\n"),
    )
    .unwrap();
    let imported = crate::common::skillc_env(
        p.path(),
        &["import", dir.to_str().unwrap()],
        &[("SKILLC_NOW", &ago(900, 0))],
    );
    assert_eq!(imported.code, Some(0), "{}", imported.stderr);
    let created: Vec<_> = p
        .events()
        .into_iter()
        .filter(|e| e["event"] == "skill.created")
        .collect();
    assert_eq!(
        created,
        vec![json!({"event": "skill.created", "time": ago(900, 0), "skill": "vendor-tool", "source": "imported"})]
    );
    // An agent claiming it later does not make it touchable.
    p.created("vendor-tool", "auto_generated", &ago(800, 0));
    p.verdicts(json!({"archive:*": {"action": "archive"}}));
    let r = p.json(&["run"]);
    assert_eq!(plan(&r), Vec::<String>::new());
    assert!(p.calls().is_empty());
    let status = p.json(&["status"]);
    assert_eq!(status["touchable"], 0);
}

#[test]
fn pinned_skills_are_untouched_and_get_no_event() {
    let p = P::new("");
    p.agent_skill("old-report", DESC, 400);
    p.agent_skill(
        "old-other",
        "Convert unit measurements between metric and imperial systems.",
        400,
    );
    p.verdicts(json!({"archive:*": {"action": "archive"}}));
    assert_eq!(p.curate(&["pin", "old-report"]).code, Some(0));
    let pins = p.curated();
    assert_eq!(pins.len(), 1);
    assert_eq!(
        (pins[0]["action"].as_str(), pins[0]["kind"].as_str()),
        (Some("pin"), Some("manual"))
    );
    let r = p.json(&["run"]);
    assert_eq!(plan(&r), vec!["archive old-other"]);
    assert_eq!(p.calls().len(), 1);
    assert!(p.path().join("skills/old-report/SKILL.md").is_file());
    let run_id = r["run_id"].as_str().unwrap();
    assert!(
        p.curated()
            .iter()
            .all(|e| e["skill"] != "old-report" || e.get("run_id").is_none())
    );
    assert_eq!(p.curated().iter().filter(|e| e["run_id"] == run_id).count(), 1);
}

#[test]
fn never_loaded_skills_are_anchored_on_creation() {
    let p = P::new("");
    p.agent_skill("just-under", DESC, 89);
    p.agent_skill(
        "exactly-ninety",
        "Convert unit measurements between metric and imperial.",
        90,
    );
    p.agent_skill(
        "recreated",
        "Translate error codes into plain language explanations.",
        300,
    );
    p.created("recreated", "auto_generated", &ago(10, 0));
    p.agent_skill(
        "used-lately",
        "Draft release notes from merged pull request titles.",
        300,
    );
    p.loaded("used-lately", "s", &ago(89, 0));
    let r = p.json(&["run", "--dry-run"]);
    assert_eq!(plan(&r), vec!["archive exactly-ninety"]);
    assert_eq!(r["candidates"][0]["never_loaded"], true);
    assert_eq!(r["candidates"][0]["last_activity_at"], ago(90, 0));
    // A day later the loaded one is still fresh enough; two days later it is a candidate.
    let later = p
        .curate_at(&ago(-2, 0), &["run", "--dry-run", "--format", "json"], &[])
        .json();
    assert_eq!(
        plan(&later),
        vec!["archive exactly-ninety", "archive just-under", "archive used-lately"]
    );
    assert_eq!(later["candidates"][2]["never_loaded"], false);
}

/// Two skills loaded once in the window, for clustering.
fn loaded_pair(p: &P, a: (&str, &str), b: (&str, &str)) {
    for (name, desc) in [a, b] {
        p.agent_skill(name, desc, 50);
        p.loaded(name, "s", &ago(5, 0));
    }
}

#[test]
fn name_overlap_boundary_is_six_tenths() {
    let p = P::new("");
    // 3 shared words of 5: 0.6 pairs them.
    loaded_pair(
        &p,
        ("alpha-bravo-charlie-delta-echo", "Cook pasta dinners quickly tonight."),
        ("alpha-bravo-charlie-fox-golf", "Repair bicycle brakes safely outdoors."),
    );
    // 2 of 5: 0.4 does not.
    loaded_pair(
        &p,
        ("hotel-india-juliet-kilo-lima", "Water indoor plants weekly schedule."),
        (
            "hotel-india-mike-oscar-papa",
            "Price freelance translation projects fairly.",
        ),
    );
    let r = p.json(&["run", "--dry-run"]);
    assert_eq!(
        plan(&r),
        vec!["consolidate alpha-bravo-charlie-delta-echo,alpha-bravo-charlie-fox-golf"]
    );
}

#[test]
fn description_overlap_boundary_is_seven_tenths() {
    let p = P::new("");
    // Ten content words each; 7 shared pair them, 6 do not.
    let base = "apples bananas cherries dates figs grapes kiwis";
    loaded_pair(
        &p,
        ("fruit-one", &format!("{base} lemons mangoes nectarines.")),
        ("produce-two", &format!("{base} oranges papayas quinces.")),
    );
    let six = "ants bees crickets dragonflies earwigs fleas";
    loaded_pair(
        &p,
        ("bugs-one", &format!("{six} gnats hornets ladybirds moths.")),
        ("insects-two", &format!("{six} lice mites nymphs wasps.")),
    );
    let r = p.json(&["run", "--dry-run"]);
    assert_eq!(plan(&r), vec!["consolidate fruit-one,produce-two"]);
}

#[test]
fn clusters_are_single_link_and_cut_to_five() {
    let p = P::new("");
    // a~b and b~c by name, a and c unrelated: one cluster of three.
    for (name, desc) in [
        ("red-green-blue", "Paint fences."),
        ("green-blue-yellow", "Tune pianos."),
        ("blue-yellow-purple", "Bake bread."),
    ] {
        p.agent_skill(name, desc, 50);
        p.loaded(name, "s", &ago(3, 0));
    }
    // Seven members sharing a name core, each loaded a different number of times.
    for i in 1..=7 {
        let name = format!("deploy-service-step{i}");
        p.agent_skill(&name, &format!("Unique words number{i}."), 60);
        for k in 0..i {
            p.loaded(&name, &format!("s{k}"), &ago(20, k));
        }
    }
    let r = p.json(&["run", "--dry-run"]);
    assert_eq!(
        plan(&r),
        vec![
            // Stalest first: the seven were last loaded 20 days ago (ties by first name), the
            // three 3 days ago. The five most loaded of the seven, then the other two.
            "consolidate deploy-service-step1,deploy-service-step2",
            "consolidate deploy-service-step3,deploy-service-step4,deploy-service-step5,deploy-service-step6,deploy-service-step7",
            "consolidate blue-yellow-purple,green-blue-yellow,red-green-blue",
        ]
    );
    // Deterministic: the same events and skills give the same plan, byte for byte.
    let again = p.curate(&["run", "--dry-run", "--format", "json"]);
    assert_eq!(again.stdout, p.curate(&["run", "--dry-run", "--format", "json"]).stdout);
}

#[test]
fn archive_moves_the_whole_folder_and_records_its_path() {
    let p = P::new("");
    p.agent_skill("old-report", DESC, 200);
    let dir = p.path().join("skills/old-report");
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(dir.join("scripts/run.py"), "print('x')\n").unwrap();
    std::fs::create_dir_all(dir.join("references")).unwrap();
    std::fs::write(dir.join("references/notes.md"), "notes\n").unwrap();
    let before = p.tree();
    p.verdicts(json!({"archive:old-report": {"action": "archive", "rationale": "unused"}}));
    let r = p.json(&["run"]);
    assert_eq!(r["reason"], "completed");
    let archived = "skills-archive/old-report-20260601T000000Z";
    assert_eq!(r["actions"][0]["archive_path"], archived);
    assert!(!dir.exists());
    let after = p.tree();
    for (path, bytes) in before.iter().filter(|(k, _)| k.starts_with("skills/old-report/")) {
        let moved = path.replacen("skills/old-report", archived, 1);
        assert_eq!(after.get(&moved), Some(bytes), "{moved}");
    }
    assert_eq!(p.state().unwrap()["skills"]["old-report"]["archive_path"], archived);
    assert_eq!(p.curated()[0]["archive_path"], archived);
}

#[test]
fn a_taken_archive_name_gets_another_and_both_are_kept() {
    let p = P::new("");
    p.agent_skill("old-report", DESC, 200);
    let taken = p.path().join("skills-archive/old-report-20260601T000000Z");
    std::fs::create_dir_all(&taken).unwrap();
    std::fs::write(taken.join("SKILL.md"), "an earlier archive\n").unwrap();
    p.verdicts(json!({"archive:*": {"action": "archive"}}));
    let r = p.json(&["run"]);
    assert_eq!(
        r["actions"][0]["archive_path"],
        "skills-archive/old-report-20260601T000000Z-2"
    );
    assert_eq!(
        std::fs::read_to_string(taken.join("SKILL.md")).unwrap(),
        "an earlier archive\n"
    );
    assert!(
        p.path()
            .join("skills-archive/old-report-20260601T000000Z-2/SKILL.md")
            .is_file()
    );
}

#[test]
fn restore_after_the_archive_was_deleted_by_hand_fails_and_changes_nothing() {
    let p = P::new("");
    p.agent_skill("old-report", DESC, 200);
    assert_eq!(p.curate(&["archive", "old-report"]).code, Some(0));
    std::fs::remove_dir_all(p.path().join("skills-archive/old-report-20260601T000000Z")).unwrap();
    let before = p.tree();
    let r = p.curate(&["restore", "old-report"]);
    assert_eq!(r.code, Some(1));
    assert_eq!(
        r.stderr.trim(),
        "error: cannot restore `old-report`: its archive skills-archive/old-report-20260601T000000Z no longer exists \
         (removed by hand?); nothing was changed"
    );
    assert_eq!(p.tree(), before);
}

#[test]
fn restore_uses_the_recorded_path_never_a_name_prefix() {
    let p = P::new("");
    p.agent_skill("git-helpers", DESC, 200);
    p.agent_skill("git", "Commit, branch and rebase with git.", 200);
    assert_eq!(p.curate(&["archive", "git-helpers"]).code, Some(0));
    let r = p.curate(&["restore", "git"]);
    assert_eq!(r.code, Some(1));
    assert!(r.stderr.contains("`git` is not archived"), "{}", r.stderr);
    assert_eq!(p.archived(), vec!["git-helpers-20260601T000000Z"]);
    // Archived later, `git` comes back from its own folder, and git-helpers stays archived.
    assert_eq!(p.curate_at(&ago(-1, 0), &["archive", "git"], &[]).code, Some(0));
    assert_eq!(p.curate_at(&ago(-2, 0), &["restore", "git"], &[]).code, Some(0));
    assert!(p.path().join("skills/git/SKILL.md").is_file());
    assert!(!p.path().join("skills/git-helpers").exists());
    assert_eq!(p.archived(), vec!["git-helpers-20260601T000000Z"]);
}

#[test]
fn restore_is_refused_when_the_name_is_taken() {
    let p = P::new("");
    p.agent_skill("old-report", DESC, 200);
    assert_eq!(p.curate(&["archive", "old-report"]).code, Some(0));
    p.skill("old-report", "A new skill that took the name.");
    let before = p.tree();
    let r = p.curate(&["restore", "old-report"]);
    assert_eq!(r.code, Some(1));
    assert!(
        r.stderr.contains("the name is taken again by skills/old-report"),
        "{}",
        r.stderr
    );
    assert_eq!(p.tree(), before);
}

#[test]
fn invalid_verdicts_are_skips_with_no_write() {
    let p = P::new("");
    let body = "# Tool\n\nRun `old-tool --check`.\nThen read the output.\n";
    for name in ["report-sales-weekly", "report-sales-monthly"] {
        p.created(name, "auto_generated", &ago(50, 0));
        p.skill_body(name, "Summarise weekly sales.", body);
        p.loaded(name, "s", &ago(5, 0));
    }
    p.agent_skill("flaky-tool", "Run the flaky tool.", 50);
    for k in 0..4 {
        let s = format!("f{k}");
        p.loaded("flaky-tool", &s, &ago(1, 3600 * k));
        p.failed(&s, "bash", &ago(1, 3600 * k - 60));
    }
    let cases = [
        (
            json!({"action": "consolidate", "survivor": "elsewhere", "archive": ["report-sales-weekly"], "body": "x\n"}),
            "not in the cluster",
        ),
        (
            json!({"action": "consolidate", "survivor": "report-sales-weekly", "archive": ["report-sales-weekly"], "body": "x\n"}),
            "both the survivor and archived",
        ),
        (
            json!({"action": "consolidate", "survivor": "report-sales-weekly", "archive": ["report-sales-monthly"]}),
            "no new `body`",
        ),
        (json!({"action": "archive"}), "a consolidate request answers"),
        (json!({"$raw": "Sure! I would merge them."}), "not a verdict"),
    ];
    let before = p
        .files()
        .into_iter()
        .map(|f| (f.clone(), std::fs::read(p.path().join(&f)).unwrap()))
        .collect::<Vec<_>>();
    for (i, (verdict, why)) in cases.iter().enumerate() {
        let edit = [
            json!({"action": "edit", "diff": "@@ -2,1 +2,1 @@\n-name: flaky-tool\n+name: other\n"}),
            json!({"action": "edit", "diff": "@@ -7,1 +7,1 @@\n-Run `nothing-like-this`.\n+Run it.\n"}),
            json!({"action": "edit", "diff": "@@ -7,1 +7,1 @@\n-a\n+b\n@@ -9,1 +9,1 @@\n-c\n+d\n"}),
            json!({"action": "edit"}),
            json!({"action": "edit", "diff": format!("@@ -8,1 +8,201 @@\n-Run `flaky-tool-tool --check`.\n{}", "+x\n".repeat(201))}),
        ][i]
            .clone();
        p.verdicts(json!({"consolidate:*": verdict, "edit:*": edit}));
        let r = p
            .curate_at(&ago(0, -(i as i64) * 3600), &["run", "--format", "json"], &[])
            .json();
        assert_eq!(r["actions"], json!([]), "case {i}: {r}");
        let skipped = r["skipped"].as_array().unwrap();
        assert_eq!(skipped.len(), 2, "case {i}: {r}");
        assert!(
            skipped[0]["reason"].as_str().unwrap().contains(why),
            "case {i}: {}",
            skipped[0]
        );
        assert!(
            skipped[1]["reason"].as_str().unwrap().starts_with("invalid verdict"),
            "case {i}: {}",
            skipped[1]
        );
    }
    let after = p
        .files()
        .into_iter()
        .map(|f| (f.clone(), std::fs::read(p.path().join(&f)).unwrap()))
        .collect::<Vec<_>>();
    assert_eq!(after, before);
    assert!(p.curated().is_empty());
    let reasons: Vec<String> = p.json(&["status"])["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["action"].to_string())
        .collect();
    assert_eq!(reasons.len(), 2, "both candidates are still there for the next run");
}

#[test]
fn a_run_writes_one_skill_curated_per_action_and_paired_run_events() {
    let p = P::new("");
    p.agent_skill("old-report", DESC, 200);
    for name in ["report-sales-weekly", "report-sales-monthly", "report-sales-daily"] {
        p.agent_skill(name, "Summarise sales.", 50);
        p.loaded(name, "s", &ago(5, 0));
    }
    p.agent_skill("flaky-tool", "Run the flaky tool.", 50);
    for k in 0..3 {
        let s = format!("f{k}");
        p.loaded("flaky-tool", &s, &ago(1, 3600 * k));
        p.failed(&s, "bash", &ago(1, 3600 * k - 600));
    }
    p.verdicts(json!({
        "archive:*": {"action": "archive"},
        "consolidate:*": {"$survivor": "first", "body": "\n# Sales reports\n\nDaily, weekly or monthly.\n"},
        "edit:*": {"$replace": ["flaky-tool-tool", "steady-tool"]},
    }));
    let r = p.json(&["run"]);
    assert_eq!(r["reason"], "completed", "{r}");
    let run_id = r["run_id"].as_str().unwrap();
    let actions: Vec<(String, String)> = r["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["action"].as_str().unwrap().into(),
                a["skill"].as_str().unwrap().into(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = [
        ("archive", "old-report"),
        ("consolidate", "report-sales-daily"),
        ("archive", "report-sales-monthly"),
        ("archive", "report-sales-weekly"),
        ("edit", "flaky-tool"),
    ]
    .iter()
    .map(|(a, s)| (a.to_string(), s.to_string()))
    .collect();
    assert_eq!(actions, want);
    let events = p.events();
    let run: Vec<&serde_json::Value> = events.iter().filter(|e| e["run_id"] == run_id).collect();
    assert_eq!(run.first().unwrap()["event"], "curator.run_started");
    assert_eq!(run.last().unwrap()["event"], "curator.run_finished");
    assert_eq!(run.last().unwrap()["actions"], 5);
    assert_eq!(run.last().unwrap()["calls"], 3);
    let curated: Vec<(String, String)> = run
        .iter()
        .filter(|e| e["event"] == "skill.curated")
        .map(|e| {
            (
                e["action"].as_str().unwrap().into(),
                e["skill"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(curated, want);
    assert_eq!(events.iter().filter(|e| e["event"] == "curator.run_started").count(), 1);
    // The edit kept the previous body and can be undone with --before.
    let md = std::fs::read_to_string(p.path().join("skills/flaky-tool/SKILL.md")).unwrap();
    assert!(
        md.contains("steady-tool") && md.starts_with("---\nname: flaky-tool\n"),
        "{md}"
    );
    assert_eq!(
        p.curate_at(&ago(-1, 0), &["restore", "flaky-tool", "--before", NOW], &[])
            .code,
        Some(0)
    );
    let back = std::fs::read_to_string(p.path().join("skills/flaky-tool/SKILL.md")).unwrap();
    assert!(back.contains("flaky-tool-tool --check"), "{back}");
    // The survivor records its lineage and is curator_generated now.
    let s = p.state().unwrap();
    assert_eq!(
        s["skills"]["report-sales-daily"]["consolidated_from"],
        json!(["report-sales-monthly", "report-sales-weekly"])
    );
    assert_eq!(s["skills"]["report-sales-daily"]["origin"], "curator_generated");
}

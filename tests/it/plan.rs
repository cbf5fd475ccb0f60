//! `skillc plan` on real skills of the corpus: the reference points of issue 3 (google-workspace,
//! gog), snapshots of varied command styles, corpus-wide totals, and determinism across thread
//! counts.

use std::collections::BTreeSet;
use std::path::Path;

use crate::common::{corpus, insta_settings, manifest_dir, skillc};

/// Corpus skills of different command styles, each snapshotted with `--explain` and as JSON.
const SAMPLES: &[(&str, &str)] = &[
    (
        "hermes_google_workspace",
        "NousResearch__hermes-agent/skills/productivity/google-workspace",
    ),
    ("openclaw_gog", "openclaw__openclaw/skills/gog"),
    (
        "basedir_script_second_brain",
        "openclaw__skills/skills/christinetyip/second-brain",
    ),
    ("basedir_script_front", "openclaw__skills/skills/rdewolff/front"),
    ("dot_scripts_outlook", "openclaw__skills/skills/jotamed/outlook"),
    ("dot_scripts_qbittorrent", "openclaw__skills/skills/jmagar/qbittorrent"),
    ("noun_verb_bullets_planka", "openclaw__skills/skills/voydz/planka-cli"),
    ("binary_and_table_netpad", "openclaw__skills/skills/mrlynn/netpad"),
    (
        "command_table_unbroker",
        "NousResearch__hermes-agent/optional-skills/security/unbroker",
    ),
    ("binary_tmux", "openclaw__openclaw/skills/tmux"),
    ("skill_dir_starpulse", "openclaw__skills/skills/zeph-ai-dev/starpulse"),
    ("uv_run_vikunja", "openclaw__skills/skills/dbhurley/vikunja"),
    (
        "gaia_typed_tools_web_search",
        "amd__gaia/tests/fixtures/skills/web-search",
    ),
    (
        "gaia_typed_tools_report_archive",
        "amd__gaia/tests/fixtures/skills/report-archive",
    ),
    (
        "table_homebridge",
        "openclaw__skills/skills/jiasenl/clawdbot-skill-homebridge",
    ),
    ("binary_xurl", "NousResearch__hermes-agent/skills/social-media/xurl"),
    ("binary_remindctl", "openclaw__skills/skills/steipete/apple-reminders"),
];

fn plans(report: &serde_json::Value) -> Vec<serde_json::Value> {
    report["skills"][0]["plans"].as_array().cloned().unwrap_or_default()
}

#[test]
fn google_workspace_has_24_distinct_names_and_no_rejection() {
    let Some(corpus) = corpus() else { return };
    let run = skillc(
        &corpus,
        [
            "plan",
            "--format",
            "json",
            "NousResearch__hermes-agent/skills/productivity/google-workspace",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let plans = plans(&run.json());
    let subcommands: Vec<&str> = plans
        .iter()
        .map(|p| p["subcommand"].as_str().unwrap_or_default())
        .collect();
    // Exactly the 24 sub-commands corpus/README.md lists.
    let expected = [
        "gmail search",
        "gmail get",
        "gmail send",
        "gmail reply",
        "gmail labels",
        "gmail modify",
        "calendar list",
        "calendar create",
        "calendar delete",
        "drive search",
        "drive get",
        "drive upload",
        "drive download",
        "drive create-folder",
        "drive share",
        "drive delete",
        "contacts list",
        "sheets create",
        "sheets get",
        "sheets update",
        "sheets append",
        "docs get",
        "docs create",
        "docs append",
    ];
    assert_eq!(
        subcommands.iter().copied().collect::<BTreeSet<_>>(),
        expected.into_iter().collect::<BTreeSet<_>>()
    );
    assert_eq!(plans.len(), 24);
    let names: BTreeSet<&str> = plans.iter().filter_map(|p| p["name"].as_str()).collect();
    assert_eq!(names.len(), 24, "24 distinct canonical names");
    assert!(plans.iter().all(|p| p["status"] == "translated"));
    let name_of = |sc: &str| {
        plans
            .iter()
            .find(|p| p["subcommand"] == sc)
            .and_then(|p| p["name"].as_str())
            .unwrap_or_default()
            .to_owned()
    };
    // Names a person would call right.
    assert_eq!(
        name_of("drive get"),
        "describe_files_google_workspace",
        "get reads metadata"
    );
    assert_eq!(
        name_of("drive download"),
        "read_files_google_workspace",
        "download reads content"
    );
    assert_eq!(
        name_of("gmail reply"),
        "send_messages_reply_google_workspace",
        "a reply is a send in a thread"
    );
    assert_ne!(name_of("sheets append"), name_of("sheets update"));
    assert_eq!(name_of("calendar list"), "list_events_google_workspace");
    // Arguments are typed and merged across invocations.
    let send = plans
        .iter()
        .find(|p| p["subcommand"] == "gmail send")
        .cloned()
        .unwrap_or_default();
    let arg = |n: &str| {
        send["args"]
            .as_array()
            .and_then(|a| a.iter().find(|x| x["name"] == n))
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(
        (arg("to")["type"].as_str(), arg("to")["required"].as_bool()),
        (Some("string"), Some(true))
    );
    assert_eq!(
        (arg("html")["type"].as_str(), arg("html")["required"].as_bool()),
        (Some("boolean"), Some(false))
    );
    let search = plans
        .iter()
        .find(|p| p["subcommand"] == "gmail search")
        .cloned()
        .unwrap_or_default();
    assert!(
        search["args"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x["name"] == "max" && x["type"] == "integer"))
    );
    assert_eq!(search["source_section"], "Gmail");
}

#[test]
fn gog_extracts_21_commands_each_translated_or_rejected_with_a_reason() {
    let Some(corpus) = corpus() else { return };
    let run = skillc(&corpus, ["plan", "--format", "json", "openclaw__openclaw/skills/gog"]);
    let plans = plans(&run.json());
    assert_eq!(
        plans.len(),
        21,
        "{:#?}",
        plans.iter().map(|p| p["subcommand"].clone()).collect::<Vec<_>>()
    );
    for p in &plans {
        match p["status"].as_str() {
            Some("translated") => assert!(p["name"].as_str().is_some_and(|n| n.ends_with("_gog")), "{p}"),
            Some("rejected") => {
                assert!(p["reason"].as_str().is_some_and(|r| !r.is_empty()), "{p}");
                assert!(p["code"].as_str().is_some_and(|c| c.starts_with("TR")), "{p}");
            }
            other => panic!("unexpected status {other:?} in {p}"),
        }
    }
}

#[test]
fn plan_snapshots_of_varied_command_styles() {
    let Some(corpus) = corpus() else { return };
    for (name, path) in SAMPLES {
        assert!(corpus.join(path).is_dir(), "{path} is not in the corpus");
        let human = skillc(&corpus, ["plan", "--explain", path]);
        let json = skillc(&corpus, ["plan", "--format", "json", path]);
        assert!(matches!(human.code, Some(0 | 1)), "{path}: {}", human.stderr);
        assert!(
            json.json()["skills"][0]["plans"]
                .as_array()
                .is_some_and(|p| !p.is_empty()),
            "{path} has sub-commands"
        );
        insta_settings().bind(|| {
            insta::assert_snapshot!(format!("plan_{name}"), human.stdout);
            insta::assert_snapshot!(
                format!("plan_{name}_json"),
                serde_json::to_string_pretty(&json.json()).unwrap_or_default()
            );
        });
    }
}

#[test]
fn corpus_totals_are_recorded_and_plan_never_panics() {
    let Some(corpus) = corpus() else { return };
    let parent = corpus.parent().unwrap_or(Path::new("/"));
    let name = corpus
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let run = skillc(parent, ["plan", &name]);
    assert!(matches!(run.code, Some(0 | 1)), "plan crashed: {}", run.stderr);
    let totals = run.stdout.lines().last().unwrap_or_default().to_owned();
    assert!(totals.starts_with("planned 1689 skills"), "{totals}");
    insta_settings().bind(|| insta::assert_snapshot!("plan_corpus_totals", totals));
}

/// `plan --format json` is byte-identical with 1 and 8 threads.
fn assert_deterministic(cwd: &Path, path: &str) {
    let one = skillc(cwd, ["-j", "1", "plan", "--format", "json", "--explain", path]);
    let eight = skillc(cwd, ["-j", "8", "plan", "--format", "json", "--explain", path]);
    assert!(!one.stdout.is_empty(), "{}", one.stderr);
    assert!(
        one.stdout == eight.stdout,
        "plan output differs between -j1 and -j8 for {path}"
    );
}

#[test]
fn plan_output_is_identical_with_1_and_8_threads() {
    assert_deterministic(&manifest_dir(), "skills");
    if let Some(corpus) = corpus() {
        let parent = corpus.parent().unwrap_or(Path::new("/")).to_path_buf();
        let name = corpus
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        assert_deterministic(&parent, &name);
    }
}

#[test]
fn a_qualifier_that_cannot_qualify_the_object_rejects_the_plan() {
    let dir = tempfile::tempdir().expect("tempdir");
    let skill = dir.path().join("planner");
    std::fs::create_dir_all(skill.join("scripts")).expect("mkdir");
    std::fs::write(skill.join("scripts/p.py"), "").expect("write");
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: planner\ndescription: Plans things.\n---\n\n```bash\npython3 scripts/p.py events drafts list\npython3 scripts/p.py messages drafts list\n```\n",
    )
    .expect("write");
    let run = skillc(dir.path(), ["plan", "--format", "json", "planner"]);
    assert_eq!(run.code, Some(1));
    let plans = plans(&run.json());
    assert_eq!(plans[0]["code"], "TR006", "{}", plans[0]);
    assert_eq!(
        plans[0]["reason"],
        "qualifier `draft` (from `drafts`) cannot qualify `events`"
    );
    assert_eq!(plans[1]["name"], "list_messages_draft_planner");
}

#[test]
fn an_invalid_vocabulary_stops_with_positions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let vocab = "version = 1\n\n[actions.read]\nclass = \"safe\"\nen = \"read\"\nit = \"leggi\"\nsynonyms = [\"get\", \"Get It\"]\n\n\
                 [objects.files]\nen = \"files\"\nit = \"file\"\n\n[qualifiers.pdf]\nen = \"PDF\"\nit = \"PDF\"\nobjects = [\"pages\"]\n";
    std::fs::write(dir.path().join("bad.toml"), vocab).expect("write");
    let run = skillc(
        &manifest_dir(),
        [
            "plan",
            "--vocabulary",
            dir.path().join("bad.toml").to_str().unwrap_or_default(),
            "skills",
        ],
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("error[VO004]") && run.stderr.contains("bad.toml:7:"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("error[VO003]: qualifier `pdf` names unknown object `pages`"),
        "{}",
        run.stderr
    );
}

//! The review loop of issue 12 (acceptance 4): `skillc plan --propose` writes proposals into
//! the project's `translations.toml`; accepted entries name the plan, pending ones reject it
//! with their own code and name, and a malformed file is diagnosed with file:line.
//! (That accepting one entry rebuilds only its skill is counted in `incremental`.)

use std::path::{Path, PathBuf};

use crate::common::{copy_dir, corpus, insta_settings, skillc};

/// Corpus skills of five command styles whose words the vocabulary cannot all name.
const SKILLS: &[&str] = &[
    "NousResearch__hermes-agent/optional-skills/health/fitness-nutrition",
    "openclaw__skills/skills/tmustier/dyson-cli",
    "openclaw__skills/skills/theglove44/reddit",
    "K-Dense-AI__claude-scientific-skills/scientific-skills/etetoolkit",
    "openclaw__skills/skills/afalk42/reachy-mini",
];

/// A project holding copies of `skills` under `skills/`.
fn project(corpus: &Path, skills: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for s in skills {
        let name = Path::new(s).file_name().expect("name");
        copy_dir(&corpus.join(s), &dir.path().join("skills").join(name));
    }
    dir
}

fn translations(dir: &Path) -> PathBuf {
    dir.join("translations.toml")
}

#[test]
fn propose_writes_sorted_entries_once_for_five_skills() {
    let Some(corpus) = corpus() else { return };
    let dir = project(&corpus, SKILLS);
    let run = skillc(dir.path(), ["plan", "--propose"]);
    assert!(matches!(run.code, Some(0 | 1)), "{}", run.stderr);
    assert!(run.stderr.contains("proposed"), "{}", run.stderr);
    let text = std::fs::read_to_string(translations(dir.path())).expect("translations.toml");
    insta_settings().bind(|| insta::assert_snapshot!("review_propose_five_skills", text));
    // One entry per skill and sub-command, every one proposed, and a second run adds none.
    let entries = text.matches("[[translation]]").count();
    assert!(entries >= SKILLS.len(), "{text}");
    assert_eq!(text.matches("status = \"proposed\"").count(), entries);
    let again = skillc(dir.path(), ["plan", "--propose"]);
    assert!(again.stderr.contains("proposed 0 names"), "{}", again.stderr);
    assert_eq!(std::fs::read_to_string(translations(dir.path())).expect("read"), text);
}

#[test]
fn accepted_entries_name_plans_and_pending_ones_reject_with_their_name() {
    let Some(corpus) = corpus() else { return };
    let dir = project(&corpus, &[SKILLS[0]]);
    skillc(dir.path(), ["plan", "--propose"]);
    let path = translations(dir.path());
    let text = std::fs::read_to_string(&path).expect("read");
    let first = text.find("status = \"proposed\"").expect("an entry");
    let accepted = format!(
        "{}status = \"accepted\"{}",
        &text[..first],
        &text[first + "status = \"proposed\"".len()..]
    );
    std::fs::write(&path, accepted).expect("write");
    let run = skillc(dir.path(), ["plan", "--format", "json"]);
    let report = run.json();
    let plans = report["skills"][0]["plans"].as_array().cloned().unwrap_or_default();
    let named = plans.iter().filter(|p| p["status"] == "translated").count();
    let pending: Vec<&serde_json::Value> = plans.iter().filter(|p| p["code"] == "TR007").collect();
    assert!(named >= 1, "{plans:#?}");
    assert!(!pending.is_empty(), "{plans:#?}");
    for p in pending {
        let reason = p["reason"].as_str().unwrap_or_default();
        assert!(
            reason.contains("_fitness_nutrition` is proposed in translations.toml:"),
            "{reason}"
        );
    }
}

#[test]
fn an_accepted_name_outside_the_vocabulary_is_rejected() {
    let dir = tempfile::tempdir().expect("tempdir");
    let skill = dir.path().join("skills/frob");
    std::fs::create_dir_all(skill.join("scripts")).expect("mkdir");
    std::fs::write(skill.join("scripts/f.py"), "").expect("write");
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: frob\ndescription: Frobnicates widgets.\n---\n\n```bash\npython3 scripts/f.py frobnicate\n```\n",
    )
    .expect("write");
    let entry = |name: &str| {
        format!(
            "version = 1\n\n[[translation]]\nskill = \"frob\"\nsubcommand = \"frobnicate\"\nstatus = \"accepted\"\nname = \"{name}\"\n"
        )
    };
    std::fs::write(translations(dir.path()), entry("frobnicate_widgets_frob")).expect("write");
    let run = skillc(dir.path(), ["plan", "--format", "json"]);
    let plan = &run.json()["skills"][0]["plans"][0];
    assert_eq!(plan["code"], "TR009", "{plan}");
    std::fs::write(translations(dir.path()), entry("run_tools_frob")).expect("write");
    let run = skillc(dir.path(), ["plan", "--format", "json"]);
    let plan = &run.json()["skills"][0]["plans"][0];
    assert_eq!(
        (plan["status"].as_str(), plan["name"].as_str()),
        (Some("translated"), Some("run_tools_frob"))
    );
}

#[test]
fn a_malformed_translations_file_is_diagnosed_with_file_and_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let skill = dir.path().join("skills/frob");
    std::fs::create_dir_all(skill.join("scripts")).expect("mkdir");
    std::fs::write(skill.join("scripts/f.py"), "").expect("write");
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: frob\ndescription: Lists widgets.\n---\n\n```bash\npython3 scripts/f.py tools list\n```\n",
    )
    .expect("write");
    let bad = "version = 1\n\n[[translation]]\nskill = \"frob\"\nsubcommand = \"tools list\"\nstatus = \"maybe\"\nname = \"list_tools_frob\"\n";
    std::fs::write(translations(dir.path()), bad).expect("write");
    let run = skillc(dir.path(), ["plan"]);
    assert!(run.stderr.contains("TR010"), "{}", run.stderr);
    assert!(run.stderr.contains("translations.toml:6:"), "{}", run.stderr);
    // The entry is ignored: the sub-command is translated as if it had none.
    assert!(run.stdout.contains("list_tools_frob"), "{}", run.stdout);
    std::fs::write(translations(dir.path()), "version = 1\n[[translation]\n").expect("write");
    let run = skillc(dir.path(), ["plan"]);
    assert!(run.stderr.contains("translations.toml:2:"), "{}", run.stderr);
}

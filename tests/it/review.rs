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

/// A one-skill project whose only sub-command the vocabulary names `list_tools_frob`.
fn frob_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let skill = dir.path().join("skills/frob");
    std::fs::create_dir_all(skill.join("scripts")).expect("mkdir");
    std::fs::write(skill.join("scripts/f.py"), "").expect("write");
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: frob\ndescription: Lists widgets.\n---\n\n```bash\npython3 scripts/f.py tools list\n```\n",
    )
    .expect("write");
    dir
}

/// Writes `text` as the project's `translations.toml`, runs `skillc args` and checks that it
/// stops with exit status 2 and a diagnostic at `at` (`translations.toml:6:10`); its stderr.
fn refused(dir: &Path, text: &str, args: &[&str], at: &str) -> String {
    std::fs::write(translations(dir), text).expect("write");
    let run = skillc(dir, args);
    assert_eq!(
        run.code,
        Some(2),
        "a malformed file stops the command, as a malformed vocabulary does:\n{}\n{}",
        run.stdout,
        run.stderr
    );
    assert!(run.stderr.contains(at), "want {at}:\n{}", run.stderr);
    run.stderr
}

#[test]
fn a_malformed_translations_file_is_diagnosed_with_file_and_line() {
    let dir = frob_project();
    let bad = "version = 1\n\n[[translation]]\nskill = \"frob\"\nsubcommand = \"tools list\"\nstatus = \"maybe\"\nname = \"list_tools_frob\"\n";
    let stderr = refused(dir.path(), bad, &["plan"], "translations.toml:6:10");
    assert!(stderr.contains("TR010"), "{stderr}");
    refused(
        dir.path(),
        "version = 1\n[[translation]\n",
        &["plan"],
        "translations.toml:2:",
    );
    let once = bad.replace("maybe", "accepted");
    let twice = format!("{once}{}", &once["version = 1\n".len()..]);
    let stderr = refused(dir.path(), &twice, &["plan"], "translations.toml:9:1");
    assert!(stderr.contains("TR011"), "{stderr}");
}

#[test]
fn build_refuses_a_malformed_translations_file_instead_of_naming_around_it() {
    let dir = frob_project();
    // The reviewer rejected the name; a typo elsewhere in the file must not make the build
    // ignore the whole file and sign the rejected name.
    let text = "version = 1\n\n[[translation]]\nskill = \"frob\"\nsubcommand = \"tools list\"\nstatus = \"rejected\"\nname = \"list_tools_frob\"\n\n[[translation]]\nskill = \"frob\"\nsubcommand = \"other\"\nstatus = \"accepted\"\nnmae = \"x\"\n";
    let stderr = refused(dir.path(), text, &["build"], "translations.toml:13:1");
    assert!(stderr.contains("TR010"), "{stderr}");
    assert!(
        !dir.path().join("out/catalog.toml").exists(),
        "nothing is signed from a file that cannot be read"
    );
    // Fixed, the reviewer's rejection holds.
    std::fs::write(
        translations(dir.path()),
        &text[..text
            .find("\n\n[[translation]]\nskill = \"frob\"\nsubcommand = \"other\"")
            .expect("second")],
    )
    .expect("write");
    let run = skillc(dir.path(), ["build"]);
    assert!(
        run.stdout.contains("TR008") || run.stderr.contains("TR008"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
}

#[test]
fn propose_never_writes_over_a_file_it_cannot_read_and_keeps_comments() {
    let dir = tempfile::tempdir().expect("tempdir");
    let skill = dir.path().join("skills/frob");
    std::fs::create_dir_all(skill.join("scripts")).expect("mkdir");
    for script in ["f.py", "g.py"] {
        std::fs::write(skill.join("scripts").join(script), "").expect("write");
    }
    // `frobnicate` gets a proposal from its heading; `zork` is reviewed already.
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: frob\ndescription: Frobnicates widgets.\n---\n\n## Export the reports\n\n```bash\npython3 scripts/f.py frobnicate\n```\n\n## Zork\n\n```bash\npython3 scripts/g.py zork\n```\n",
    )
    .expect("write");
    let path = translations(dir.path());
    // Unparsable: refused with exit 2, the file byte for byte as it was.
    let broken = "version = 1\n# my review notes\n[[translation]\nskill = \"frob\"\n";
    let stderr = refused(dir.path(), broken, &["plan", "--propose"], "translations.toml:3:");
    assert!(stderr.contains("--propose writes nothing"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&path).expect("read"), broken);
    // Parsable, with a reviewer's comments and an accepted entry: both kept, proposals added.
    let reviewed = "# Reviewed by hand; ask Ada before changing.\nversion = 1\n\n# checked against the docs\n[[translation]]\nskill = \"frob\"\nsubcommand = \"zork\"\nstatus = \"rejected\"  # not a real command\nname = \"run_tools_frob\"\n";
    std::fs::write(&path, reviewed).expect("write");
    let run = skillc(dir.path(), ["plan", "--propose"]);
    assert!(matches!(run.code, Some(0 | 1)), "{}", run.stderr);
    let text = std::fs::read_to_string(&path).expect("read");
    let mut rest = text.as_str();
    for line in reviewed.lines() {
        let at = rest.find(line).unwrap_or_else(|| panic!("lost {line:?}:\n{text}"));
        rest = &rest[at + line.len()..];
    }
    assert!(
        text.contains("subcommand = \"frobnicate\"\nstatus = \"proposed\""),
        "a proposal is added:\n{text}"
    );
    assert!(
        text.contains("# checked against the docs\n[[translation]]\nskill = \"frob\"\nsubcommand = \"zork\""),
        "a comment stays with its entry:\n{text}"
    );
}

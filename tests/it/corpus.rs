//! `skillc check` on the corpus of 1,689 real skills (`shared/corpus`): never crashes, reports
//! every skill once with a status, keeps a stable summary, and agrees with the reference
//! validator `skills-ref` on a hand-picked sample.

use std::collections::BTreeSet;
use std::path::Path;

use crate::common::{codes_with, corpus, insta_settings, skillc};

/// The corpus folder's parent (the working directory) and its name (the argument), so that
/// displayed paths do not depend on where the corpus lives.
fn split(corpus: &Path) -> (&Path, String) {
    let parent = corpus.parent().expect("the corpus has a parent folder");
    let name = corpus
        .file_name()
        .expect("the corpus has a name")
        .to_string_lossy()
        .into_owned();
    (parent, name)
}

/// Every folder under `root` holding a `SKILL.md` or `skill.md`, as `/`-separated paths
/// relative to `root`'s parent, skipping the folders skillc never searches.
fn skill_folders(root: &Path, name: &str) -> BTreeSet<String> {
    walkdir::WalkDir::new(root)
        .follow_links(false)
        .into_iter()
        .filter_entry(|e| {
            !(e.depth() > 0
                && e.file_type().is_dir()
                && skillc::SKIPPED_DIRS.contains(&e.file_name().to_string_lossy().as_ref()))
        })
        .map(|e| e.expect("walkable corpus"))
        .filter(|e| !e.file_type().is_dir() && matches!(e.file_name().to_str(), Some("SKILL.md" | "skill.md")))
        .map(|e| {
            let dir = e.path().parent().expect("a file has a parent");
            let rel = dir.strip_prefix(root).expect("under the corpus");
            let mut s = name.to_owned();
            for c in rel.components() {
                s.push('/');
                s.push_str(&c.as_os_str().to_string_lossy());
            }
            s
        })
        .collect()
}

#[test]
fn check_reports_every_corpus_skill_once_with_a_status() {
    let Some(corpus) = corpus() else { return };
    let (cwd, name) = split(&corpus);
    let run = skillc(cwd, ["check", "--color", "never", "--format", "json", name.as_str()]);
    assert!(
        matches!(run.code, Some(0 | 1)),
        "exit {:?} (0 or 1 expected)\nstderr:\n{}",
        run.code,
        run.stderr
    );
    let report = run.json();
    let skills = report["skills"].as_array().expect("a `skills` array");

    let expected = skill_folders(&corpus, &name);
    assert!(
        expected.len() > 1000,
        "only {} skill folders found in {}",
        expected.len(),
        corpus.display()
    );
    let reported: Vec<&str> = skills.iter().map(|s| s["path"].as_str().unwrap_or_default()).collect();
    let unique: BTreeSet<String> = reported.iter().map(|p| (*p).to_owned()).collect();
    assert_eq!(reported.len(), unique.len(), "a skill is reported twice");
    assert_eq!(skills.len(), expected.len(), "one entry per folder holding a SKILL.md");
    let missing: Vec<_> = expected.difference(&unique).collect();
    let extra: Vec<_> = unique.difference(&expected).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing: {missing:?}\nextra: {extra:?}"
    );

    let (mut ok, mut warnings, mut errors) = (0, 0, 0);
    for s in skills {
        let severities: Vec<&str> = s["diagnostics"]
            .as_array()
            .map(|d| d.iter().map(|d| d["severity"].as_str().unwrap_or_default()).collect())
            .unwrap_or_default();
        let want = if severities.contains(&"error") {
            errors += 1;
            "errors"
        } else if severities.contains(&"warning") {
            warnings += 1;
            "warnings"
        } else {
            ok += 1;
            "ok"
        };
        assert_eq!(s["status"].as_str(), Some(want), "status of {}", s["path"]);
    }
    let summary = &report["summary"];
    assert_eq!(summary["skills"], skills.len(), "{summary}");
    assert_eq!(
        (&summary["ok"], &summary["warnings"], &summary["errors"]),
        (&ok.into(), &warnings.into(), &errors.into()),
        "{summary}"
    );
    assert_eq!(
        run.code,
        Some(i32::from(errors > 0)),
        "exit code vs. skills with errors"
    );
}

#[test]
fn corpus_summary_line_is_stable() {
    let Some(corpus) = corpus() else { return };
    let (cwd, name) = split(&corpus);
    let run = skillc(cwd, ["check", "--color", "never", "--quiet", name.as_str()]);
    assert!(matches!(run.code, Some(0 | 1)), "exit {:?}\n{}", run.code, run.stderr);
    // --quiet prints errors only, then the summary.
    assert!(!run.stdout.contains("warning["), "--quiet hides warnings");
    assert!(run.stdout.contains("error["), "--quiet keeps errors");
    insta_settings().bind(|| {
        insta::assert_snapshot!("corpus_check_summary", run.stdout.lines().last().unwrap_or_default());
    });
}

/// A corpus skill and the verdict of `skills-ref validate` on it.
struct Reference {
    path: &'static str,
    valid: bool,
    /// The skillc rules the reference's messages correspond to; skillc must report them (it
    /// may report more: the reference stops at the first YAML error).
    codes: &'static [&'static str],
}

const fn r(path: &'static str, valid: bool, codes: &'static [&'static str]) -> Reference {
    Reference { path, valid, codes }
}

/// Verdicts obtained by running `agentskills validate <dir>` of skills-ref 0.1.0 (the reference
/// validator of agentskills.io) on each folder; it is not available in CI, hence literals.
const REFERENCE_VERDICTS: &[Reference] = &[
    r(
        "K-Dense-AI__claude-scientific-skills/scientific-skills/anndata",
        true,
        &[],
    ),
    // CRLF line endings.
    r(
        "K-Dense-AI__claude-scientific-skills/scientific-skills/geomaster",
        true,
        &[],
    ),
    r("openclaw__skills/skills/i-mw/cron-mastery", true, &[]),
    // `description: |` block scalar.
    r("openclaw__openclaw/extensions/feishu/skills/feishu-doc", true, &[]),
    r("amd__gaia/.claude/skills/gaia-release", true, &[]),
    // "Invalid YAML in frontmatter: mapping values are not allowed here"
    r("openclaw__skills/skills/ascendswang/ffmpeg-cli", false, &["SK006"]),
    // "Directory name 'anki-connect' must match skill name 'anki-connect-skill'"
    r(
        "amd__gaia/tests/fixtures/openclaw_skills/anki-connect",
        false,
        &["SK027"],
    ),
    // "Invalid YAML ... Found ugly disallowed JSONesque flow mapping" (a JSON5 metadata map)
    r("openclaw__openclaw/skills/gog", false, &["SK013"]),
    // "SKILL.md must start with YAML frontmatter (---)"
    r(
        "amd__gaia/tests/fixtures/openclaw_skills/openclaw-voice",
        false,
        &["SK004"],
    ),
    // "SKILL.md frontmatter not properly closed with ---"
    r("openclaw__skills/skills/luccast/gogcli", false, &["SK005"]),
    // "Unexpected fields in frontmatter: author."
    r(
        "K-Dense-AI__claude-scientific-skills/scientific-skills/adaptyv",
        false,
        &["SK033"],
    ),
    // "Skill name 'Polymarket' must be lowercase" | "Directory name ... must match ..."
    r(
        "openclaw__skills/skills/deanpress/polymarket-odds",
        false,
        &["SK023", "SK027"],
    ),
    // "Description exceeds 1024 character limit (1929 chars)"
    r(
        "K-Dense-AI__claude-scientific-skills/scientific-skills/database-lookup",
        false,
        &["SK030"],
    ),
    // "Unexpected fields in frontmatter: display_name, slug." | "Missing required field ...: name"
    r(
        "openclaw__skills/skills/gumadeiras/parcel-package-tracking",
        false,
        &["SK033", "SK020"],
    ),
];

#[test]
fn strict_verdicts_agree_with_skills_ref_on_a_sample() {
    let Some(corpus) = corpus() else { return };
    let mut failures = Vec::new();
    for reference in REFERENCE_VERDICTS {
        if !corpus.join(reference.path).is_dir() {
            failures.push(format!("{}: not in the corpus", reference.path));
            continue;
        }
        let run = skillc(&corpus, ["check", "--strict", "--format", "json", reference.path]);
        let want_exit = if reference.valid { 0 } else { 1 };
        if run.code != Some(want_exit) {
            failures.push(format!(
                "{}: exit {:?}, skills-ref says {}\n{}{}",
                reference.path,
                run.code,
                if reference.valid { "valid" } else { "invalid" },
                run.stdout,
                run.stderr
            ));
            continue;
        }
        let errors = codes_with(&run.json(), "error");
        let missing: Vec<_> = reference.codes.iter().filter(|c| !errors.contains(**c)).collect();
        if !missing.is_empty() {
            failures.push(format!("{}: errors {errors:?}, missing {missing:?}", reference.path));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn strict_mode_applies_the_size_limit_that_skills_ref_lacks() {
    // A known difference, not (yet) in the conformance README's table: skills-ref 0.1.0 says
    // "Valid skill" for this 77 KiB SKILL.md; skillc applies its 64 KiB limit in every mode.
    // Over the whole corpus this and `hhhh124hhhh/ai-music-prompts` (125 KiB) are the only
    // skills where `check --strict` and skills-ref disagree.
    let Some(corpus) = corpus() else { return };
    let path = "openclaw__skills/skills/mejango/juicy/jb-patterns";
    let run = skillc(&corpus, ["check", "--strict", "--format", "json", path]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let errors: Vec<String> = codes_with(&run.json(), "error").into_iter().collect();
    assert_eq!(errors, ["SK040"]);
}

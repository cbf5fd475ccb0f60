//! Conformance of `skillc check --strict`, `read-properties` and `to-prompt` with the reference
//! validator `skills-ref` 0.1.0, over every case of `tests/conformance/` (a vendored copy of
//! `shared/conformance/`, see its README), and the check that the vendored copy is current.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::common::{Run, codes_with, manifest_dir, skillc};

/// The vendored cases.
fn cases_dir() -> PathBuf {
    manifest_dir().join("tests/conformance")
}

/// Every case folder (`NNN-slug`), sorted.
fn case_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .expect("tests/conformance exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(char::is_numeric))
        })
        .collect();
    dirs.sort();
    dirs
}

/// The case's name: its folder name.
fn case_name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Splits a recorded shell line into words. Only what the cases use is supported: spaces and
/// single quotes (`skills-ref validate './技能'`).
fn shell_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                in_word = true;
            }
            c if c.is_whitespace() && !quoted => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '"' | '\\' | '$' | '`' if !quoted => return Err(format!("unsupported shell syntax in `{line}`")),
            c => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quoted {
        return Err(format!("unclosed quote in `{line}`"));
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// A reference sub-command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Validate,
    ReadProperties,
    ToPrompt,
}

/// Translates a `skills-ref …` line into the equivalent `skillc` arguments.
fn translate(line: &str) -> Result<(Kind, Vec<String>), String> {
    let words = shell_words(line)?;
    let Some(("skills-ref", rest)) = words.split_first().map(|(p, r)| (p.as_str(), r)) else {
        return Err(format!("not a skills-ref command: `{line}`"));
    };
    let Some((sub, paths)) = rest.split_first() else {
        return Err(format!("no sub-command in `{line}`"));
    };
    let (kind, args): (Kind, Vec<&str>) = match sub.as_str() {
        "validate" => (
            Kind::Validate,
            vec!["check", "--strict", "--format", "json", "--color", "never"],
        ),
        "read-properties" => (Kind::ReadProperties, vec!["read-properties"]),
        "to-prompt" => (Kind::ToPrompt, vec!["to-prompt"]),
        other => return Err(format!("unknown skills-ref sub-command `{other}` in `{line}`")),
    };
    let mut args: Vec<String> = args.into_iter().map(str::to_owned).collect();
    args.extend(paths.iter().cloned());
    Ok((kind, args))
}

/// The invocation of a case: `cmd.txt`, else `skills-ref validate ./<its only folder>`.
fn case_command(dir: &Path) -> Result<String, String> {
    if let Ok(cmd) = std::fs::read_to_string(dir.join("cmd.txt")) {
        return Ok(cmd.trim().to_owned());
    }
    let subdirs: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| e.to_string())?
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    match subdirs.as_slice() {
        [only] => Ok(format!("skills-ref validate './{only}'")),
        other => Err(format!("no cmd.txt and {} sub-folders", other.len())),
    }
}

/// Maps one reference error message to the skillc rule that reports the same problem.
fn code_for(message: &str) -> Option<&'static str> {
    let has = |s: &str| message.contains(s);
    let code = if has("Missing required file") {
        "SK001"
    } else if has("Not a directory") {
        "SK016"
    } else if has("must start with YAML frontmatter") {
        "SK004"
    } else if has("not properly closed") {
        "SK005"
    } else if has("Invalid YAML") && has("JSONesque flow") {
        "SK013"
    } else if has("Invalid YAML") && has("anchor") {
        "SK009"
    } else if has("Duplicate key") {
        "SK008"
    } else if has("Invalid YAML") {
        "SK006"
    } else if has("must be a YAML mapping") {
        "SK007"
    } else if has("Missing required field in frontmatter: name") {
        "SK020"
    } else if has("Missing required field in frontmatter: description") {
        "SK028"
    } else if has("Field 'name' must be a non-empty string") {
        "SK021"
    } else if has("Field 'description' must be a non-empty string") {
        "SK029"
    } else if has("Skill name") && has("character limit") {
        "SK022"
    } else if has("must be lowercase") {
        "SK023"
    } else if has("cannot start or end with a hyphen") {
        "SK024"
    } else if has("consecutive hyphens") {
        "SK025"
    } else if has("contains invalid characters") {
        "SK026"
    } else if has("Directory name") && has("must match") {
        "SK027"
    } else if has("Description exceeds") {
        "SK030"
    } else if has("Compatibility exceeds") {
        "SK032"
    } else if has("Unexpected fields in frontmatter") {
        "SK033"
    } else {
        return None;
    };
    Some(code)
}

/// Cases where the rule skillc reports legitimately differs from the reference's message.
fn code_override(case: &str) -> Option<(&'static [&'static str], &'static str)> {
    match case {
        "024-invalid-yaml-unclosed-flow" => Some((
            &["SK006"],
            "`name: [invalid` is an unclosed flow sequence: not YAML at all, so skillc reports invalid \
             YAML where strictyaml first complains about the flow style",
        )),
        "093-four-dash-opening" => Some((
            &["SK004"],
            "`----` is not a fence for skillc, so the file has no frontmatter; the reference reads the \
             fourth dash as YAML",
        )),
        _ => None,
    }
}

/// What skillc must do for a case's main invocation.
#[derive(Debug)]
struct Verdict {
    exit: i32,
    /// Error codes, exactly (validate only).
    errors: BTreeSet<String>,
    /// Warning codes that must be present (validate only).
    warnings: BTreeSet<String>,
    /// Fields the reference names in "Unexpected fields": each needs its own SK033.
    unexpected_fields: Vec<String>,
}

fn expected_verdict(case: &str, line1: &str) -> Result<Verdict, String> {
    let mut v = Verdict {
        exit: 0,
        errors: BTreeSet::new(),
        warnings: BTreeSet::new(),
        unexpected_fields: Vec::new(),
    };
    // Deliberate difference: a BOM is accepted with a warning (README, "Deliberate differences").
    if case == "035-utf8-bom" {
        v.warnings.insert("SK003".into());
        return Ok(v);
    }
    if line1 == "valid" {
        return Ok(v);
    }
    let Some(gist) = line1.strip_prefix("invalid: ") else {
        return Err(format!(
            "line 1 of expected.txt is neither `valid` nor `invalid: …`: `{line1}`"
        ));
    };
    if gist.starts_with("(CLI usage error, exit 2)") {
        v.exit = 2;
        return Ok(v);
    }
    v.exit = 1;
    for message in gist.split(" | ") {
        let code =
            code_for(message).ok_or_else(|| format!("no skillc rule mapped for reference message `{message}`"))?;
        v.errors.insert(code.to_owned());
        if let Some(list) = message.strip_prefix("Unexpected fields in frontmatter: ") {
            let list = list.split(". Only").next().unwrap_or_default();
            v.unexpected_fields.extend(list.split(", ").map(str::to_owned));
        }
    }
    if let Some((codes, _why)) = code_override(case) {
        v.errors = codes.iter().map(|c| (*c).to_owned()).collect();
    }
    Ok(v)
}

/// One recorded invocation of the reference in `skills-ref.out`.
#[derive(Debug)]
struct Block {
    command: String,
    exit: i32,
    stdout: String,
}

fn parse_reference_out(text: &str) -> Result<Vec<Block>, String> {
    let mut blocks = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(command) = line.strip_prefix("$ ") else {
            if line.trim().is_empty() {
                continue;
            }
            return Err(format!("unexpected line `{line}`"));
        };
        let exit = lines
            .next()
            .and_then(|l| l.strip_prefix("exit: "))
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("`{command}`: no `exit: N` line"))?;
        if lines.next() != Some("--- stdout") {
            return Err(format!("`{command}`: no `--- stdout` line"));
        }
        let mut stdout = String::new();
        for l in lines.by_ref() {
            if l == "--- stderr" {
                break;
            }
            stdout.push_str(l);
            stdout.push('\n');
        }
        for l in lines.by_ref() {
            if l == "--- end" {
                break;
            }
        }
        blocks.push(Block {
            command: command.to_owned(),
            exit,
            stdout,
        });
    }
    Ok(blocks)
}

/// `to-prompt` of a `my-skill` folder holding the cases' usual description.
const PROMPT_MY_SKILL: &str = "<available_skills>\n<skill>\n<name>\nmy-skill\n</name>\n<description>\nChecks a \
                               sample project for common style problems.\n</description>\n<location>\n<CASE>/my-skill/\
                               SKILL.md\n</location>\n</skill>\n</available_skills>\n";

/// The full description of case 041, which the reference cuts at the `---` inside it.
const FULL_041_DESCRIPTION: &str = "Converts old --- style separators into headings.";

/// Adjusts a reference block to what skillc must print, for the deliberate differences.
fn skillc_expectation(case: &str, kind: Kind, mut block: Block) -> Block {
    match case {
        // skillc accepts the BOM: every command succeeds, with the reference's output for the
        // same skill without a BOM.
        "035-utf8-bom" => {
            block.exit = 0;
            block.stdout = match kind {
                Kind::Validate => String::new(),
                Kind::ReadProperties => "{\n  \"name\": \"my-skill\",\n  \"description\": \"Checks a sample project \
                                         for common style problems.\"\n}\n"
                    .to_owned(),
                Kind::ToPrompt => PROMPT_MY_SKILL.to_owned(),
            };
        }
        // Flow collections. `check --strict` rejects them as the reference does (SK013, checked
        // by the main invocation), but `read-properties` and `to-prompt` read in the default
        // mode, which accepts them: OpenClaw writes `metadata` as JSON5-style flow maps
        // (PRODUCT.md, "Parsing rules"), and those skills must still be listed. The reference's
        // strictyaml refuses any flow collection. Not yet in the README's table of deliberate
        // differences.
        "071-flow-sequence-allowed-tools" | "073-flow-mapping-metadata" if kind != Kind::Validate => {
            assert_eq!(block.exit, 1, "{case}: the reference now accepts flow collections");
            block.exit = 0;
            block.stdout = match (kind, case) {
                (Kind::ReadProperties, "071-flow-sequence-allowed-tools") => "{\"name\": \"my-skill\", \
                    \"description\": \"Checks a sample project for common style problems.\", \
                    \"allowed-tools\": [\"Read\", \"Write\"]}"
                    .to_owned(),
                (Kind::ReadProperties, _) => "{\"name\": \"my-skill\", \"description\": \"Checks a sample \
                    project for common style problems.\", \"metadata\": {\"author\": \"someone\"}}"
                    .to_owned(),
                _ => PROMPT_MY_SKILL.to_owned(),
            };
        }
        // `---` inside a value does not end the frontmatter: the description is kept whole.
        "041-triple-dash-inside-description" if kind != Kind::Validate => {
            if !block.stdout.contains(FULL_041_DESCRIPTION) {
                block.stdout = block.stdout.replace("Converts old", FULL_041_DESCRIPTION);
            }
            assert!(
                block.stdout.contains(FULL_041_DESCRIPTION),
                "case 041 changed: {}",
                block.stdout
            );
        }
        _ => {}
    }
    block
}

fn check_main_command(dir: &Path, case: &str, failures: &mut Vec<String>) -> Result<(), String> {
    let expected = std::fs::read_to_string(dir.join("expected.txt")).map_err(|e| format!("expected.txt: {e}"))?;
    let line1 = expected.lines().next().unwrap_or_default().trim();
    let verdict = expected_verdict(case, line1)?;
    let command = case_command(dir)?;
    let (kind, args) = translate(&command)?;
    let run = skillc(dir, &args);
    let mut fail = |what: String| failures.push(format!("{case}: `{command}`: {what}"));
    if run.code != Some(verdict.exit) {
        fail(format!(
            "exit {:?}, expected {} (reference: {line1})\nstdout:\n{}\nstderr:\n{}",
            run.code, verdict.exit, run.stdout, run.stderr
        ));
        return Ok(());
    }
    if verdict.exit == 2 {
        if run.stderr.trim().is_empty() {
            fail("exit 2 without a message on stderr".into());
        }
        return Ok(());
    }
    if kind != Kind::Validate {
        return Ok(());
    }
    let report: serde_json::Value = match serde_json::from_str(&run.stdout) {
        Ok(v) => v,
        Err(e) => {
            fail(format!("stdout is not JSON: {e}\n{}", run.stdout));
            return Ok(());
        }
    };
    let skills = report["skills"].as_array().map_or(0, Vec::len);
    if skills != 1 {
        fail(format!("{skills} entries in the report, expected 1 for one path"));
    }
    let want_status = if verdict.exit == 1 { "errors" } else { "ok|warnings" };
    let status = report["skills"][0]["status"].as_str().unwrap_or_default();
    if !want_status.split('|').any(|s| s == status) {
        fail(format!("status `{status}`, expected {want_status}"));
    }
    let errors = codes_with(&report, "error");
    if errors != verdict.errors {
        fail(format!(
            "error codes {errors:?}, expected {:?} (reference: {line1})",
            verdict.errors
        ));
    }
    let warnings = codes_with(&report, "warning");
    if !verdict.warnings.is_subset(&warnings) {
        fail(format!(
            "warning codes {warnings:?}, expected at least {:?}",
            verdict.warnings
        ));
    }
    for field in &verdict.unexpected_fields {
        let needle = format!("`{field}`");
        let reported = report["skills"][0]["diagnostics"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|d| d["code"] == "SK033" && d["message"].as_str().is_some_and(|m| m.contains(&needle)));
        if !reported {
            fail(format!("no SK033 names the unexpected field {needle}"));
        }
    }
    Ok(())
}

fn check_reference_blocks(dir: &Path, case: &str, failures: &mut Vec<String>) -> Result<usize, String> {
    let text = std::fs::read_to_string(dir.join("skills-ref.out")).map_err(|e| format!("skills-ref.out: {e}"))?;
    let blocks = parse_reference_out(&text)?;
    let case_abs = dir.canonicalize().map_err(|e| e.to_string())?;
    let case_abs = case_abs.to_string_lossy();
    for block in &blocks {
        let (kind, args) = translate(&block.command)?;
        let reference_exit = block.exit;
        let want = skillc_expectation(
            case,
            kind,
            Block {
                command: block.command.clone(),
                exit: block.exit,
                stdout: block.stdout.clone(),
            },
        );
        let run: Run = skillc(dir, &args);
        let mut fail = |what: String| failures.push(format!("{case}: `{}`: {what}", block.command));
        if run.code != Some(want.exit) {
            fail(format!(
                "exit {:?}, expected {} (reference exit {reference_exit})\nstdout:\n{}\nstderr:\n{}",
                run.code, want.exit, run.stdout, run.stderr
            ));
            continue;
        }
        if want.exit != 0 {
            continue;
        }
        match kind {
            Kind::Validate => {}
            Kind::ReadProperties => {
                let wanted: serde_json::Value = serde_json::from_str(&want.stdout)
                    .map_err(|e| format!("reference read-properties output is not JSON: {e}"))?;
                match serde_json::from_str::<serde_json::Value>(&run.stdout) {
                    Ok(got) if got == wanted => {}
                    Ok(got) => fail(format!("properties differ:\n  skillc:    {got}\n  reference: {wanted}")),
                    Err(e) => fail(format!("stdout is not JSON ({e}):\n{}", run.stdout)),
                }
            }
            Kind::ToPrompt => {
                let wanted = want.stdout.replace("<CASE>", &case_abs);
                if run.stdout != wanted {
                    fail(format!(
                        "to-prompt output differs\n--- skillc\n{}--- expected\n{wanted}",
                        run.stdout
                    ));
                }
            }
        }
    }
    Ok(blocks.len())
}

#[test]
fn every_case_matches_the_reference() {
    let dirs = case_dirs();
    // Guard against a vacuous pass (a missing or emptied folder).
    assert!(dirs.len() >= 60, "only {} conformance cases found", dirs.len());
    let mut failures = Vec::new();
    let mut blocks = 0;
    for dir in &dirs {
        let case = case_name(dir);
        if let Err(e) = check_main_command(dir, &case, &mut failures) {
            failures.push(format!("{case}: {e}"));
        }
        match check_reference_blocks(dir, &case, &mut failures) {
            Ok(n) => blocks += n,
            Err(e) => failures.push(format!("{case}: {e}")),
        }
    }
    assert!(blocks >= 150, "only {blocks} recorded reference invocations found");
    assert!(
        failures.is_empty(),
        "{} conformance mismatches:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn shell_words_handles_the_recorded_quoting() {
    assert_eq!(
        shell_words("skills-ref validate './技能'").as_deref(),
        Ok(&["skills-ref".to_owned(), "validate".to_owned(), "./技能".to_owned()][..])
    );
    assert_eq!(shell_words("skills-ref to-prompt").map(|w| w.len()), Ok(2));
    assert!(shell_words("skills-ref validate \"x\"").is_err());
    assert!(shell_words("skills-ref validate 'x").is_err());
}

#[test]
fn every_reference_message_maps_to_a_rule() {
    // The mapping is what the main test relies on; pin a few entries so that a reordering of
    // the `if` chain (e.g. "Invalid YAML" before "anchor") cannot silently change it.
    let cases = [
        ("Skill name 'MySkill' must be lowercase", "SK023"),
        ("Directory name 'a' must match skill name 'b'", "SK027"),
        ("Unexpected fields in frontmatter: x. Only [...] are allowed.", "SK033"),
        (
            "Invalid YAML in frontmatter: While scanning / Found ugly disallowed JSONesque flow mapping",
            "SK013",
        ),
        (
            "Invalid YAML in frontmatter: Found confusing disallowed anchor token",
            "SK009",
        ),
        (
            "Invalid YAML in frontmatter: While parsing / Duplicate key 'description' found",
            "SK008",
        ),
        ("Invalid YAML in frontmatter: found character '\\t'", "SK006"),
        ("Skill name 'aaa' exceeds 64 character limit (70 chars)", "SK022"),
    ];
    for (message, code) in cases {
        assert_eq!(code_for(message), Some(code), "{message}");
    }
    assert_eq!(code_for("Something new"), None);
}

/// The shared folder: `$SKILLC_SHARED`, else `<repo>/../shared` (beside the project).
fn shared_dir() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SKILLC_SHARED") {
        return Some(PathBuf::from(p));
    }
    Some(manifest_dir().join("../shared")).filter(|p| p.join("conformance").is_dir())
}

/// Every entry under `root`: relative path -> file bytes (`None` for a folder).
fn tree(root: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    walkdir::WalkDir::new(root)
        .min_depth(1)
        .into_iter()
        .map(|e| {
            let e = e.unwrap_or_else(|e| panic!("walking {}: {e}", root.display()));
            let rel = e.path().strip_prefix(root).expect("under root").to_path_buf();
            let bytes = if e.file_type().is_dir() {
                None
            } else {
                assert!(!e.file_type().is_symlink(), "unexpected symlink {}", e.path().display());
                Some(std::fs::read(e.path()).unwrap_or_else(|err| panic!("{}: {err}", e.path().display())))
            };
            (rel, bytes)
        })
        .collect()
}

#[test]
fn vendored_copy_is_identical_to_the_shared_suite() {
    let Some(shared) = shared_dir() else {
        eprintln!("note: shared conformance suite not found (set SKILLC_SHARED); vendored-copy check skipped");
        return;
    };
    let shared_tree = tree(&shared.join("conformance"));
    let vendored = tree(&cases_dir());
    let mut problems = Vec::new();
    for (path, bytes) in &shared_tree {
        match vendored.get(path) {
            None => problems.push(format!("missing from tests/conformance: {}", path.display())),
            Some(v) if v != bytes => problems.push(format!("differs: {}", path.display())),
            Some(_) => {}
        }
    }
    for path in vendored.keys().filter(|p| !shared_tree.contains_key(*p)) {
        problems.push(format!("not in the shared suite: {}", path.display()));
    }
    assert!(
        problems.is_empty(),
        "tests/conformance is out of date with {}/conformance (re-copy with `cp -a`):\n{}",
        shared.display(),
        problems.join("\n")
    );
}

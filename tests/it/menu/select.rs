//! `skillc menu` and `skillc playbook` end to end over a fixture catalog
//! (`tests/fixtures/menu/`): every selection rule of RUNTIME.md §1, the output formats, the
//! refusal of a catalog that does not verify, agents and thresholds in `pipeline.toml`.

use std::path::Path;
use std::sync::OnceLock;

use crate::common::{Run, copy_dir, insta_settings, manifest_dir, skillc_env, write_test_key};
use serde_json::Value;

const SDE: (&str, &str) = ("SOURCE_DATE_EPOCH", "1800000000");

/// A copy of the fixture project, built.
fn project(pipeline_extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(&manifest_dir().join("tests/fixtures/menu"), dir.path());
    write_test_key(&dir.path().join("test.key"));
    if !pipeline_extra.is_empty() {
        let p = dir.path().join("pipeline.toml");
        let text = std::fs::read_to_string(&p).expect("pipeline") + pipeline_extra;
        std::fs::write(&p, text).expect("write");
    }
    let r = skillc_env(dir.path(), &["build", "--key", "test.key"], &[SDE]);
    assert_eq!(r.code, Some(0), "build failed:\n{}\n{}", r.stdout, r.stderr);
    dir
}

/// The fixture built once, shared by the read-only tests.
fn shared() -> &'static Path {
    static P: OnceLock<tempfile::TempDir> = OnceLock::new();
    P.get_or_init(|| project("")).path()
}

fn run(dir: &Path, args: &[&str]) -> Run {
    let mut a = args.to_vec();
    a.extend(["--state", "verify-state.json"]);
    skillc_env(dir, &a, &[])
}

fn menu(dir: &Path, args: &[&str]) -> Value {
    let mut a = vec!["menu"];
    a.extend(args);
    let r = run(dir, &a);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    r.json()
}

/// `(slug, pass)` of a menu.
fn picked(v: &Value) -> Vec<(String, String)> {
    v["menu"]
        .as_array()
        .expect("menu")
        .iter()
        .map(|m| {
            (
                m["slug"].as_str().unwrap_or("").to_owned(),
                m["pass"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

fn slugs(v: &Value) -> Vec<String> {
    picked(v).into_iter().map(|p| p.0).collect()
}

/// Every case of the rules, its menu in one line, snapshotted.
#[test]
fn selection_rules() {
    let dir = shared();
    let cases: &[(&str, &[&str])] = &[
        (
            "a trigger is a substring of the turn",
            &["--turn", "we are redeploying now"],
        ),
        ("case folding: ß and SS", &["--turn", "STRASSE please"]),
        ("a comma-separated trigger string", &["--turn", "draft the CHANGELOG"]),
        (
            "two triggers matched rank first",
            &["--turn", "changelog and release notes"],
        ),
        ("disabled never offered", &["--turn", "deploy"]),
        (
            "semantic ranking of always-on skills",
            &["--turn", "merge pdf documents"],
        ),
        ("nothing shared: always-on by slug", &["--turn", "zzzz qqqq"]),
        (
            "default size 3, --size 6",
            &["--turn", "water the garden", "--size", "6"],
        ),
        (
            "an agent: its skills, its size",
            &["--turn", "ship it and book a meeting", "--agent", "ops"],
        ),
    ];
    let mut out = String::new();
    for (name, args) in cases {
        let v = menu(dir, args);
        let items: Vec<String> = v["menu"]
            .as_array()
            .expect("menu")
            .iter()
            .map(|m| {
                format!(
                    "{} {} {}",
                    m["slug"].as_str().unwrap_or(""),
                    m["pass"].as_str().unwrap_or(""),
                    m["score"]
                )
            })
            .collect();
        out.push_str(&format!("{name}: {}\n    {}\n", args.join(" "), items.join(" | ")));
    }
    insta_settings().bind(|| insta::assert_snapshot!("menu_selection_rules", out));
}

#[test]
fn triggers_folding_disabled_and_blank_triggers() {
    let dir = shared();
    let v = menu(dir, &["--turn", "we are redeploying now"]);
    assert_eq!(picked(&v)[0], ("deploy-tool".into(), "trigger".into()));
    let v = menu(dir, &["--turn", "STRASSE please"]);
    assert_eq!(picked(&v)[0], ("street-names".into(), "trigger".into()));
    // A disabled skill with a matching trigger is never offered, nor in the enum.
    let v = menu(dir, &["--turn", "deploy deploy"]);
    assert!(!slugs(&v).contains(&"retired-deployer".to_owned()), "{v}");
    // Empty triggers are ignored: the skill is always on (offered below τ too, `always`; this
    // turn scores it above τ, so the semantic pass chose it).
    let v = menu(dir, &["--turn", "travel diary of places", "--size", "6"]);
    assert_eq!(picked(&v)[0], ("blank-triggers".into(), "semantic".into()));
    let v = menu(dir, &["--turn", "STRASSE please"]);
    assert!(picked(&v).contains(&("blank-triggers".into(), "always".into())), "{v}");
    // A skill matched by two passes appears once.
    let all = slugs(&menu(dir, &["--turn", "deploy services to production", "--size", "6"]));
    assert_eq!(all.iter().filter(|s| *s == "deploy-tool").count(), 1, "{all:?}");
}

/// A blank or oversized turn is refused by the command line as `POST /api/menu` refuses it:
/// one limit (`skillc::MAX_TURN` bytes), one code (`invalid_turn`), exit status 2 (usage).
#[test]
fn blank_and_oversized_turns_are_refused_with_the_routes_code() {
    let dir = shared();
    let long = "a".repeat(skillc::MAX_TURN + 1);
    let longest = format!("pdf {}", "a".repeat(skillc::MAX_TURN - 4));
    // Invisible characters alone (a bidirectional override, a zero-width space) are blank too.
    for turn in ["", "   ", "\n\t", "\u{202e}\u{200b}", "\u{feff} ", long.as_str()] {
        for args in [
            vec!["menu", "--turn", turn],
            vec!["playbook", "pdf-forms", "--menu-turn", turn],
        ] {
            let r = run(dir, &args);
            assert_eq!(r.code, Some(2), "{:?}: {}", &args[..2], r.stderr);
            assert!(r.stderr.contains("error[invalid_turn]"), "{}", r.stderr);
            assert!(r.stdout.is_empty(), "{}", r.stdout);
        }
    }
    assert_eq!(longest.len(), skillc::MAX_TURN);
    assert_eq!(run(dir, &["menu", "--turn", &longest]).code, Some(0));
    // The other refusals carry the route's codes too.
    let r = run(dir, &["menu", "--turn", "pdf", "--size", "7"]);
    assert!(r.stderr.contains("error[invalid_size]"), "{}", r.stderr);
    let r = run(dir, &["menu", "--turn", "pdf", "--agent", "nobody"]);
    assert!(r.stderr.contains("error[unknown_agent]"), "{}", r.stderr);
}

/// The pass says which pass chose a skill: an always-on skill whose score reaches τ was chosen
/// by the semantic pass; one below τ is there because it is always on (RUNTIME.md §1).
#[test]
fn the_pass_names_the_pass_that_chose_the_skill() {
    let v = menu(shared(), &["--turn", "merge pdf documents"]);
    let tau = v["threshold"].as_f64().expect("τ");
    let menu = v["menu"].as_array().expect("menu");
    assert!(menu.len() == 3, "{v}");
    let mut passes = std::collections::BTreeSet::new();
    for m in menu {
        let (score, pass) = (m["score"].as_f64().expect("score"), m["pass"].as_str().expect("pass"));
        let want = if score >= tau { "semantic" } else { "always" };
        assert_eq!(pass, want, "{m} at τ {tau}");
        passes.insert(pass);
    }
    // This turn has both: one skill above τ, the rest filled by always-on skills.
    assert_eq!(passes.len(), 2, "{v}");
}

#[test]
fn sizes_default_max_and_agents() {
    let dir = shared();
    assert_eq!(slugs(&menu(dir, &["--turn", "garden"])).len(), 3);
    assert_eq!(slugs(&menu(dir, &["--turn", "garden", "--size", "6"])).len(), 6);
    for bad in ["0", "7"] {
        let r = run(dir, &["menu", "--turn", "garden", "--size", bad]);
        assert_eq!(r.code, Some(2), "{}", r.stderr);
        assert!(r.stderr.contains("1 to 6"), "{}", r.stderr);
    }
    let v = menu(dir, &["--turn", "zzz", "--agent", "ops"]);
    let got = slugs(&v);
    assert!(
        got.len() <= 2
            && got
                .iter()
                .all(|s| ["deploy-tool", "release-notes", "calendar-helper"].contains(&s.as_str())),
        "{got:?}"
    );
    let r = run(dir, &["menu", "--turn", "x", "--agent", "nobody"]);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("no agent `nobody`"), "{}", r.stderr);
}

#[test]
fn the_tool_enum_is_exactly_the_menu() {
    let dir = shared();
    let v = menu(dir, &["--turn", "merge pdf documents"]);
    let tool = &v["tool"];
    assert_eq!(tool["name"], "load_playbook");
    let schema = &tool["parameters"];
    assert_eq!(schema["additionalProperties"], false);
    let e: Vec<String> = schema["properties"]["slug"]["enum"]
        .as_array()
        .expect("enum")
        .iter()
        .map(|x| x.as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(e, slugs(&v));
    for (format, path) in [
        ("anthropic", "/input_schema/properties/slug/enum"),
        ("openai", "/function/parameters/properties/slug/enum"),
    ] {
        let r = run(dir, &["menu", "--turn", "merge pdf documents", "--format", format]);
        let t = r.json();
        assert_eq!(t.pointer(path).and_then(Value::as_array).map(Vec::len), Some(3), "{t}");
    }
    // Byte-identical output for an identical turn.
    let a = run(dir, &["menu", "--turn", "merge pdf documents", "--format", "openai"]).stdout;
    assert_eq!(
        a,
        run(dir, &["menu", "--turn", "merge pdf documents", "--format", "openai"]).stdout
    );
}

#[test]
fn xml_escapes_and_cuts_descriptions() {
    let dir = shared();
    let r = run(dir, &["menu", "--turn", "crop photos", "--format", "xml"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout
            .starts_with("<available_skills>\n<skill>\n<name>\nphoto-editor\n</name>"),
        "{}",
        r.stdout
    );
    let line = r.stdout.lines().nth(6).expect("description line");
    assert!(
        line.starts_with("&lt;b&gt;Crop&lt;/b&gt; &amp; resize &quot;photos&quot;, then apply filters to pictures"),
        "{line}"
    );
    assert!(line.ends_with('…') && line.chars().count() < 200, "{line}");
}

/// Rewrites the fixture's `[menu]` table with `lines` and builds again.
fn rebuild_with_menu(dir: &Path, lines: &str) {
    let p = dir.join("pipeline.toml");
    let base = std::fs::read_to_string(manifest_dir().join("tests/fixtures/menu/pipeline.toml")).expect("read");
    std::fs::write(
        &p,
        base.replace("[menu]\nsize = 3\n", &format!("[menu]\nsize = 3\n{lines}")),
    )
    .expect("write");
    let b = skillc_env(dir, &["build", "--key", "test.key"], &[SDE]);
    assert_eq!(b.code, Some(0), "{}", b.stderr);
}

#[test]
fn an_empty_menu_offers_no_tool_and_tau_is_inclusive() {
    let dir = project("");
    let dir = dir.path();
    // Triggerless skills gated by τ: nothing passes for an unrelated turn.
    rebuild_with_menu(dir, "gate_triggerless = true\n");
    let v = menu(dir, &["--turn", "zzzz qqqq"]);
    assert_eq!(v["menu"], Value::Array(vec![]));
    assert_eq!(v["tool"], Value::Null);
    let r = run(dir, &["menu", "--turn", "zzzz qqqq", "--format", "anthropic"]);
    assert_eq!(r.stdout.trim(), "null");
    // τ is inclusive: a threshold equal to a score keeps the skill.
    let v = menu(dir, &["--turn", "merge pdf documents"]);
    let score = v["menu"][0]["score"].as_f64().expect("score");
    for (tau, kept) in [(score, true), (score + 0.0001, false)] {
        rebuild_with_menu(
            dir,
            &format!(
                "gate_triggerless = true\nthreshold = {{ embedder = \"lexical/4\", recipe = \"doc/1\", tau = {tau} }}\n"
            ),
        );
        let v = menu(dir, &["--turn", "merge pdf documents"]);
        assert_eq!(slugs(&v).contains(&"pdf-forms".to_owned()), kept, "τ = {tau}: {v}");
        assert_eq!(v["threshold"].as_f64(), Some(tau));
    }
}

#[test]
fn playbook_prints_the_body_and_checks_the_menu() {
    let dir = shared();
    let r = run(dir, &["playbook", "pdf-forms"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let md = std::fs::read_to_string(manifest_dir().join("tests/fixtures/menu/skills/pdf-forms/SKILL.md")).expect("md");
    assert_eq!(
        r.stdout,
        md.split_once("---\n\n")
            .map(|x| format!("\n{}", x.1))
            .unwrap_or_default()
    );
    let r = run(dir, &["playbook", "pdf-forms", "--menu-turn", "we are redeploying now"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("not in this turn's menu"), "{}", r.stderr);
    let r = run(dir, &["playbook", "pdf-forms", "--menu-turn", "merge pdf documents"]);
    assert_eq!(r.code, Some(0));
    let r = run(dir, &["playbook", "retired-deployer"]);
    assert_eq!(r.code, Some(1));
    assert!(r.stderr.contains("disabled"), "{}", r.stderr);
    // A requested name with terminal control codes is echoed escaped, never raw.
    let r = run(dir, &["playbook", "x\u{1b}[2J"]);
    assert_ne!(r.code, Some(0));
    assert!(!r.stderr.contains('\u{1b}'), "{:?}", r.stderr);
}

/// Flips a byte in the middle of a file (its signature line, for a `.sig`).
fn flip_byte(p: &Path) {
    let mut b = std::fs::read(p).expect("read");
    let at = if p.extension().is_some_and(|e| e == "sig") {
        // In the base64 of the file signature (line 2), keeping it valid base64.
        b.iter().position(|&c| c == b'\n').map_or(0, |i| i + 20)
    } else {
        b.len() / 2
    };
    b[at] = if b[at] == b'A' { b'B' } else { b'A' };
    std::fs::write(p, b).expect("write");
}

fn flip_last_byte(p: &Path) {
    let mut b = std::fs::read(p).expect("read");
    if let Some(x) = b.last_mut() {
        *x ^= 1;
    }
    std::fs::write(p, b).expect("write");
}

/// A fresh copy of the fixture catalog, tampered with by `tamper`: what `menu` and `playbook`
/// say of it (exit code, standard error), and whether `verify` refuses it too. A catalog that
/// does not verify is exit status 1 for all three (README, "Exit status").
fn tampered(tamper: impl Fn(&Path)) -> (Run, Run, Run) {
    let dir = project("");
    tamper(&dir.path().join("out"));
    let menu = run(dir.path(), &["menu", "--turn", "fill a pdf form"]);
    let playbook = run(dir.path(), &["playbook", "pdf-forms"]);
    let verify = skillc_env(dir.path(), &["verify", "out", "--state", "verify-state.json"], &[]);
    (menu, playbook, verify)
}

#[test]
fn a_tampered_menu_index_or_signature_is_refused() {
    for (file, needle) in [
        ("menu.idx", "bad signature: menu.idx"),
        ("menu.idx.sig", "bad signature: menu.idx"),
        ("catalog.toml.sig", "bad signature: catalog.toml"),
    ] {
        let (menu, playbook, verify) = tampered(|out| flip_byte(&out.join(file)));
        // Refused as `skillc verify` refuses it: exit 1.
        for r in [&menu, &playbook] {
            assert_eq!(r.code, Some(1), "{file}: {}{}", r.stdout, r.stderr);
            assert!(r.stderr.contains(needle), "{file}: {}", r.stderr);
            assert!(r.stdout.is_empty(), "{file}: {}", r.stdout);
        }
        assert_eq!(verify.code, Some(1), "{file}: verify accepts it");
        let (menu, _, _) = tampered(|out| std::fs::remove_file(out.join(file)).expect("rm"));
        assert_eq!(menu.code, Some(1), "{file} removed: {}", menu.stderr);
    }
}

#[test]
fn a_tampered_playbook_is_refused_and_the_full_check_sees_the_whole_tree() {
    let (menu, playbook, verify) = tampered(|out| flip_last_byte(&out.join("skills/pdf-forms/SKILL.md")));
    // The menu checks the files of what it offers (`tests/it/menu/offered.rs`), the playbook
    // also the SKILL.md against the signed index.
    assert_eq!(menu.code, Some(1), "{}", menu.stderr);
    assert!(
        menu.stderr.contains("hash mismatch: skills/pdf-forms/SKILL.md"),
        "{}",
        menu.stderr
    );
    assert_eq!(playbook.code, Some(1), "{}", playbook.stdout);
    assert!(playbook.stdout.is_empty());
    assert!(
        playbook.stderr.contains("hash mismatch: skills/pdf-forms/SKILL.md"),
        "{}",
        playbook.stderr
    );
    assert_eq!(verify.code, Some(1));
    // A file the menu does not read (the report): only `--full-verify` (and `verify`) see it.
    let dir = project("");
    flip_last_byte(&dir.path().join("out/report.json"));
    assert_eq!(run(dir.path(), &["menu", "--turn", "pdf"]).code, Some(0));
    let full = run(dir.path(), &["menu", "--turn", "pdf", "--full-verify"]);
    assert_eq!(full.code, Some(1));
    assert!(full.stderr.contains("hash mismatch: report.json"), "{}", full.stderr);
    let full = run(dir.path(), &["playbook", "pdf-forms", "--full-verify"]);
    assert_eq!(full.code, Some(1));
}

#[test]
fn an_expired_or_rolled_back_catalog_is_refused() {
    let dir = project("");
    // The state `skillc verify` records: a newer version accepted for this key.
    let v = skillc_env(dir.path(), &["verify", "out", "--state", "state.json"], &[]);
    assert_eq!(v.code, Some(0), "{}", v.stderr);
    let state = std::fs::read_to_string(dir.path().join("state.json")).expect("state");
    // Its version-2 form (pins per location, floors per key), read by the menu as verify does.
    let mut m: Value = serde_json::from_str(&state).expect("json");
    for v in m["keys"].as_object_mut().expect("floors per key").values_mut() {
        *v = (v.as_i64().expect("a catalog version") + 1).into();
    }
    std::fs::write(dir.path().join("state.json"), serde_json::to_string(&m).expect("json")).expect("write");
    let with_state = ["menu", "--turn", "pdf", "--state", "state.json"];
    let r = skillc_env(dir.path(), &with_state, &[]);
    assert_eq!(r.code, Some(1));
    assert!(r.stderr.contains("rollback"), "{}", r.stderr);
    std::fs::write(dir.path().join("state.json"), "{").expect("write");
    let r = skillc_env(dir.path(), &with_state, &[]);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("damaged"), "{}", r.stderr);
    // Built in 2001: long expired.
    let old = skillc_env(
        dir.path(),
        &["build", "--key", "test.key"],
        &[("SOURCE_DATE_EPOCH", "1000000000")],
    );
    assert_eq!(old.code, Some(0), "{}", old.stderr);
    for args in [&["menu", "--turn", "pdf"][..], &["playbook", "pdf-forms"]] {
        let r = run(dir.path(), args);
        assert_eq!(r.code, Some(1), "{args:?}");
        assert!(r.stderr.contains("expired"), "{args:?}: {}", r.stderr);
    }
}

#[test]
fn agents_of_31_skills_and_foreign_thresholds_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(&manifest_dir().join("tests/fixtures/menu"), dir.path());
    write_test_key(&dir.path().join("test.key"));
    let p = dir.path().join("pipeline.toml");
    let base = std::fs::read_to_string(&p).expect("read");
    let many: Vec<String> = (0..31).map(|i| format!("\"s{i}\"")).collect();
    std::fs::write(&p, format!("{base}\n[agents.big]\nskills = [{}]\n", many.join(", "))).expect("write");
    let r = skillc_env(dir.path(), &["build", "--key", "test.key"], &[SDE]);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr.contains("pipeline.toml:13") && r.stderr.contains("31 skills"),
        "{}",
        r.stderr
    );
    let t = base.replace(
        "size = 3",
        "size = 3\nthreshold = { embedder = \"lexical/1\", recipe = \"doc/1\", tau = 0.2 }",
    );
    std::fs::write(&p, t).expect("write");
    let r = skillc_env(dir.path(), &["build", "--key", "test.key"], &[SDE]);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("skillc menu calibrate"), "{}", r.stderr);
}

/// The `skill.loaded` events of a project's log: `(skill, session)`.
fn loads(dir: &Path) -> Vec<(String, String)> {
    let log = std::fs::read_to_string(dir.join(".skillc/events.jsonl")).unwrap_or_default();
    log.lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("a JSON line"))
        .filter(|e| e["event"] == "skill.loaded")
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
            (s("skill"), s("session"))
        })
        .collect()
}

#[test]
fn a_playbook_read_is_recorded_for_the_curator_when_the_project_asks() {
    let off = project("");
    let r = run(off.path(), &["playbook", "pdf-forms", "--session", "s-1"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(loads(off.path()), vec![]);

    let on = project("\n[curator]\nrecord_loads = true\n");
    let r = run(on.path(), &["playbook", "pdf-forms", "--session", "s-1"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let r = run(on.path(), &["playbook", "deploy-tool"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    // A refused load (not in the turn's menu) is not a load.
    let r = run(
        on.path(),
        &["playbook", "pdf-forms", "--menu-turn", "we are redeploying now"],
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert_eq!(
        loads(on.path()),
        vec![
            ("pdf-forms".to_owned(), "s-1".to_owned()),
            ("deploy-tool".to_owned(), "cli".to_owned())
        ]
    );
}

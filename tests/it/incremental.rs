//! Incrementality: which salsa queries re-execute after an edit (execution counts, never time).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use skillc::{
    BUILT_IN_VOCABULARY, Contents, Db, ExecutionLog, Limits, Mode, Settings, SkillSource, TextInput, discover,
    read_skills, set_contents_if_changed, set_text_if_changed, to_inputs, translate_skill,
};

fn skill_md(name: &str, subcommands: &[&str]) -> String {
    // Distinct descriptions, as real skills have: admission's L3 tells executors apart by
    // their skill's first words.
    let what = match name {
        "alpha" => "Alpha stores photographs and drawings for designers",
        "beta" => "Beta schedules meetings across timezones",
        _ => "Keeps the sales address book of a small shop",
    };
    let mut s = format!("---\nname: {name}\ndescription: {what}.\n---\n\n# {name}\n\n```bash\n");
    for sc in subcommands {
        s.push_str(&format!("python3 scripts/tool.py {sc} --max 10\n"));
    }
    s.push_str("```\n");
    s
}

fn project(dir: &Path) {
    for (name, scs) in [
        ("alpha", &["files list", "files get"][..]),
        ("beta", &["events list"]),
        ("gamma", &["contacts find"]),
    ] {
        let d = dir.join("skills").join(name);
        std::fs::create_dir_all(d.join("scripts")).expect("mkdir");
        std::fs::write(d.join("SKILL.md"), skill_md(name, scs)).expect("write");
        std::fs::write(d.join("scripts/tool.py"), "print('{}')\n").expect("write");
    }
}

struct Fixture {
    db: Db,
    log: Arc<ExecutionLog>,
    settings: Settings,
    vocab: TextInput,
    translations: TextInput,
    skills: Vec<SkillSource>,
    _dir: tempfile::TempDir,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    project(dir.path());
    let (db, log) = Db::with_execution_log();
    let found = discover(dir.path(), &[PathBuf::from("skills")], &[]).expect("discover");
    let read = read_skills(found.skills, Limits::default(), true);
    let skills = to_inputs(&db, read);
    let settings = Settings::new(&db, Mode::Default, Limits::default());
    let vocab = TextInput::new(&db, "vocabulary.toml".into(), BUILT_IN_VOCABULARY.into());
    let translations = TextInput::new(&db, "translations.toml".into(), String::new());
    Fixture {
        db,
        log,
        settings,
        vocab,
        translations,
        skills,
        _dir: dir,
    }
}

impl Fixture {
    /// Translates every skill and returns the executed query names, sorted.
    fn run(&self) -> Vec<String> {
        for s in &self.skills {
            let _ = translate_skill(&self.db, *s, self.settings, self.vocab, self.translations);
        }
        let mut v = self.log.take();
        v.sort();
        v
    }

    fn names(&self, i: usize) -> Vec<String> {
        let t = translate_skill(&self.db, self.skills[i], self.settings, self.vocab, self.translations);
        t.plans.iter().filter_map(|p| p.name().map(|n| n.full())).collect()
    }
}

fn count(log: &[String], q: &str) -> usize {
    log.iter().filter(|x| x.as_str() == q).count()
}

#[test]
fn editing_one_skill_retranslates_only_that_skill() {
    let mut f = fixture();
    let first = f.run();
    assert_eq!(count(&first, "analyze_skill"), 3, "{first:?}");
    assert_eq!(count(&first, "extract_skill"), 3, "{first:?}");
    assert_eq!(count(&first, "translate_skill"), 3, "{first:?}");
    assert_eq!(count(&first, "vocabulary"), 1, "{first:?}");
    assert_eq!(f.names(0), vec!["list_files_alpha", "read_files_alpha"]);

    // Nothing changed: nothing executes.
    assert!(f.run().is_empty());

    // Edit alpha only.
    let file = f.skills[0].skill_md(&f.db).expect("SKILL.md");
    let text = skill_md("alpha", &["files list", "files get", "files delete"]);
    assert!(set_contents_if_changed(
        &mut f.db,
        file,
        Contents::Bytes(Arc::from(text.into_bytes()))
    ));
    let second = f.run();
    assert_eq!(count(&second, "analyze_skill"), 1, "{second:?}");
    assert_eq!(count(&second, "extract_skill"), 1, "{second:?}");
    assert_eq!(count(&second, "translate_skill"), 1, "{second:?}");
    assert_eq!(count(&second, "vocabulary"), 0, "{second:?}");
    assert_eq!(
        f.names(0),
        vec!["list_files_alpha", "read_files_alpha", "delete_files_alpha"]
    );

    // Writing the same bytes again is not an edit.
    let same = Contents::Bytes(Arc::from(
        skill_md("alpha", &["files list", "files get", "files delete"]).into_bytes(),
    ));
    assert!(!set_contents_if_changed(&mut f.db, file, same));
    assert!(f.run().is_empty());
}

#[test]
fn editing_the_vocabulary_retranslates_every_skill_but_extracts_nothing() {
    let mut f = fixture();
    f.run();
    let edited = BUILT_IN_VOCABULARY.replace("synonyms = [\"search\",", "synonyms = [\"hunt\", \"search\",");
    assert!(set_text_if_changed(&mut f.db, f.vocab, edited));
    let after = f.run();
    assert_eq!(count(&after, "vocabulary"), 1, "{after:?}");
    assert_eq!(count(&after, "translate_skill"), 3, "{after:?}");
    assert_eq!(count(&after, "extract_skill"), 0, "{after:?}");
    assert_eq!(count(&after, "analyze_skill"), 0, "{after:?}");

    // A comment-only edit re-parses the vocabulary, which comes out equal: no re-translation.
    let text = f.vocab.text(&f.db).clone() + "\n# a comment\n";
    assert!(set_text_if_changed(&mut f.db, f.vocab, text));
    let comment = f.run();
    assert_eq!(count(&comment, "vocabulary"), 1, "{comment:?}");
    assert_eq!(count(&comment, "translate_skill"), 0, "{comment:?}");
}

#[test]
fn editing_a_support_file_does_not_reparse_skill_md() {
    let mut f = fixture();
    f.run();
    let script = f.skills[1].files(&f.db)[0];
    assert!(set_contents_if_changed(
        &mut f.db,
        script,
        Contents::Bytes(Arc::from(&b"print('changed')\n"[..]))
    ));
    let after = f.run();
    assert_eq!(count(&after, "analyze_skill"), 0, "{after:?}");
    assert_eq!(count(&after, "translate_skill"), 0, "{after:?}");
}

// ---------------------------------------------------------------------------------------------
// The whole build (`skillc::Session`): which queries re-run, what is re-signed and rewritten.

mod session {
    use std::path::{Path, PathBuf};

    use skillc::{BUILT_IN_VOCABULARY, BuildOutcome as Outcome, Db, ExecutionLog, Session};

    use super::{count, project};

    struct Build {
        s: Session,
        log: std::sync::Arc<ExecutionLog>,
        dir: tempfile::TempDir,
    }

    fn open() -> Build {
        let dir = tempfile::tempdir().expect("tempdir");
        project(dir.path());
        // A support file no executor runs.
        let refs = dir.path().join("skills/gamma/references");
        std::fs::create_dir_all(&refs).expect("mkdir");
        std::fs::write(refs.join("notes.md"), "# Notes\n").expect("write");
        let (db, log) = Db::with_execution_log();
        let opts = crate::common::build_options(dir.path());
        let s = Session::open_with(db, opts, BUILT_IN_VOCABULARY.into()).expect("open");
        Build { s, log, dir }
    }

    impl Build {
        fn path(&self, rel: &str) -> PathBuf {
            self.dir.path().join(rel)
        }

        /// Builds and returns the outcome and the executed queries.
        fn build(&mut self) -> (Outcome, Vec<String>) {
            let o = self.s.build(1_900_000_000, &mut |_| {}).expect("build");
            let mut log = self.log.take();
            log.sort();
            (o, log)
        }

        fn changed(&mut self, rel: &str) -> Vec<String> {
            let p = self.path(rel);
            let abs = p.canonicalize().unwrap_or(p);
            self.s.refresh_paths(&[abs]).expect("refresh")
        }
    }

    fn per_skill(log: &[String]) -> Vec<(&'static str, usize)> {
        [
            "skill_files",
            "analyze_skill",
            "extract_skill",
            "translate_skill",
            "skill_unit",
            "scan_skill",
            "skill_drafts",
            "admission_input",
            "admission",
            "decision",
            "skill_output",
            "report_entry",
            "menu_entry",
        ]
        .into_iter()
        .map(|q| (q, count(log, q)))
        .collect()
    }

    fn files(out: &Path) -> Vec<String> {
        let mut v: Vec<String> = walkdir::WalkDir::new(out)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                e.path()
                    .strip_prefix(out)
                    .expect("prefix")
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        v.sort();
        v
    }

    #[test]
    fn one_skill_edited_reruns_that_skill_and_the_catalog_only() {
        let mut b = open();
        let (first, log) = b.build();
        assert_eq!(first.executors, 4, "{first:?}");
        assert_eq!(count(&log, "skill_output"), 3, "{log:?}");
        // Nothing changed: nothing re-runs, nothing is signed or written.
        let (o, log) = b.build();
        assert!(log.is_empty(), "{log:?}");
        assert_eq!((o.manifests_signed, o.files_written, o.catalog_signed), (0, 0, false));

        std::fs::write(
            b.path("skills/alpha/SKILL.md"),
            super::skill_md("alpha", &["files list", "files get", "files delete"]),
        )
        .expect("write");
        assert_eq!(b.changed("skills/alpha/SKILL.md"), vec!["skills/alpha".to_owned()]);
        let (o, log) = b.build();
        assert_eq!(
            per_skill(&log),
            vec![
                ("skill_files", 1),
                ("analyze_skill", 1),
                ("extract_skill", 1),
                ("translate_skill", 1),
                ("skill_unit", 1),
                ("scan_skill", 1),
                ("skill_drafts", 1),
                ("admission_input", 1),
                ("admission", 1),
                // Re-run for every skill, equal (backdated) for beta and gamma.
                ("decision", 3),
                ("skill_output", 1),
                ("report_entry", 1),
                ("menu_entry", 1),
            ],
            "{log:?}"
        );
        assert_eq!(o.added, vec!["delete_files_alpha".to_owned()]);
        // alpha's other manifests record the new SKILL.md hash: re-signed; beta's and gamma's not.
        assert_eq!(o.updated.len(), 2, "{o:?}");
        assert_eq!(o.manifests_signed, 3);
        assert!(o.catalog_signed);
    }

    #[test]
    fn one_description_edited_recomputes_its_menu_entry_only() {
        let mut b = open();
        let (_, log) = b.build();
        assert_eq!(count(&log, "menu_entry"), 3, "{log:?}");
        assert_eq!(count(&log, "menu_lexicon"), 1, "{log:?}");
        let index = b.path("out/menu.idx");
        let before = std::fs::read(&index).expect("menu.idx");
        let md = b.path("skills/beta/SKILL.md");
        let text = std::fs::read_to_string(&md).expect("read");
        let edited = text.replacen("description: ", "description: Calendar helper. ", 1);
        assert_ne!(text, edited);
        std::fs::write(&md, edited).expect("write");
        b.changed("skills/beta/SKILL.md");
        let (o, log) = b.build();
        assert_eq!(count(&log, "menu_entry"), 1, "{log:?}");
        assert_eq!(count(&log, "menu_lexicon"), 0, "{log:?}");
        assert_ne!(std::fs::read(&index).expect("menu.idx"), before, "{o:?}");
        // A no-op build afterwards writes nothing, the menu index included.
        let (o, log) = b.build();
        assert!(log.is_empty(), "{log:?}");
        assert_eq!(o.files_written, 0);
    }

    #[test]
    fn vocabulary_edited_retranslates_every_skill_without_reading_or_parsing() {
        let mut b = open();
        b.build();
        let edited = BUILT_IN_VOCABULARY.replace("synonyms = [\"search\",", "synonyms = [\"hunt\", \"search\",");
        assert!(b.s.set_vocabulary(edited));
        let (_, log) = b.build();
        let counts = per_skill(&log);
        assert_eq!(
            &counts[..4],
            &[
                ("skill_files", 0),
                ("analyze_skill", 0),
                ("extract_skill", 0),
                ("translate_skill", 3),
            ],
            "{log:?}"
        );
        assert_eq!(count(&log, "vocabulary"), 1);
    }

    #[test]
    fn edits_that_change_no_name_stop_early_and_resign_no_manifest() {
        let mut b = open();
        b.build();
        // A support file no executor runs: no manifest changes, none is re-signed.
        std::fs::write(b.path("skills/gamma/references/notes.md"), "# Notes\n\nMore.\n").expect("write");
        b.changed("skills/gamma/references/notes.md");
        let (o, log) = b.build();
        assert_eq!(count(&log, "analyze_skill"), 0, "{log:?}");
        assert_eq!(count(&log, "translate_skill"), 0, "{log:?}");
        assert_eq!(count(&log, "admission"), 0, "backdated at admission_input: {log:?}");
        assert_eq!(count(&log, "decision"), 0, "{log:?}");
        assert_eq!(o.manifests_signed, 0, "{o:?}");
        assert!(o.updated.is_empty() && o.added.is_empty());
        // The retained file and what vouches for it are rewritten: the catalog, and the menu's
        // listing of the skill (`menu.files`) with the signed index that holds its digest.
        assert_eq!(
            o.files_written, 6,
            "notes.md, catalog.toml, menu.files, menu.idx and their signatures: {o:?}"
        );

        // Whitespace at the end of a SKILL.md body: the plans come out equal, so neither
        // translation nor admission re-runs.
        let md = b.path("skills/beta/SKILL.md");
        let text = std::fs::read_to_string(&md).expect("read") + "\n\n";
        std::fs::write(&md, text).expect("write");
        b.changed("skills/beta/SKILL.md");
        let (o, log) = b.build();
        assert_eq!(count(&log, "extract_skill"), 1, "{log:?}");
        assert_eq!(count(&log, "translate_skill"), 0, "{log:?}");
        assert_eq!(count(&log, "admission"), 0, "{log:?}");
        assert_eq!(count(&log, "decision"), 0, "{log:?}");
        // beta's manifest records the SKILL.md hash (FORMATS.md, provenance): it is re-signed.
        assert_eq!(o.manifests_signed, 1, "{o:?}");
    }

    /// Issue 12, acceptance 4: `translations.toml` is a build input, read per skill.
    #[test]
    fn accepting_one_translation_rebuilds_only_that_skill() {
        let mut b = open();
        b.build();
        let entry = |status: &str| {
            format!(
                "version = 1\n\n[[translation]]\nskill = \"beta\"\nsubcommand = \"events list\"\nstatus = \"{status}\"\nname = \"read_events_beta\"\n"
            )
        };
        // A pending proposal rejects the plan with its own code; the other skills stay.
        assert!(b.s.set_translations(entry("proposed")));
        let (o, log) = b.build();
        assert_eq!(count(&log, "translate_skill"), 1, "{log:?}");
        assert_eq!(o.removed, vec!["list_events_beta".to_owned()], "{o:?}");
        assert!(o.report.contains("TR007"), "{}", o.report);
        // Accepting it: only beta is translated, generated and output again.
        assert!(b.s.set_translations(entry("accepted")));
        let (o, log) = b.build();
        assert_eq!(
            per_skill(&log),
            vec![
                ("skill_files", 0),
                ("analyze_skill", 0),
                ("extract_skill", 0),
                ("translate_skill", 1),
                ("skill_unit", 1),
                ("scan_skill", 0),
                ("skill_drafts", 1),
                ("admission_input", 1),
                ("admission", 1),
                ("decision", 3),
                ("skill_output", 1),
                ("report_entry", 1),
                // beta's menu document names its executors.
                ("menu_entry", 1),
            ],
            "{log:?}"
        );
        assert_eq!(
            count(&log, "skill_review"),
            3,
            "every skill's entries are read again: {log:?}"
        );
        assert_eq!(o.added, vec!["read_events_beta".to_owned()], "{o:?}");
        assert_eq!(o.manifests_signed, 1, "{o:?}");
    }

    #[test]
    fn a_deleted_skill_disappears_from_out() {
        let mut b = open();
        b.build();
        let out = b.path("out");
        assert!(files(&out).iter().any(|f| f.starts_with("executors/beta/")));
        std::fs::remove_dir_all(b.path("skills/beta")).expect("rm");
        assert_eq!(b.changed("skills/beta"), vec!["skills/beta".to_owned()]);
        let (o, log) = b.build();
        assert_eq!(o.removed, vec!["list_events_beta".to_owned()], "{o:?}");
        assert_eq!(count(&log, "skill_output"), 0, "{log:?}");
        assert_eq!(count(&log, "admission"), 1, "{log:?}");
        let left = files(&out);
        assert!(!left.iter().any(|f| f.contains("beta")), "{left:?}");
        assert!(!out.join("executors/beta").exists() && !out.join("skills/beta").exists());
        let catalog = std::fs::read_to_string(out.join("catalog.toml")).expect("catalog");
        assert!(!catalog.contains("beta"), "{catalog}");

        // A new skill appears.
        let d = b.path("skills/delta");
        std::fs::create_dir_all(&d).expect("mkdir");
        std::fs::write(d.join("SKILL.md"), super::skill_md("delta", &["notes list"])).expect("write");
        assert_eq!(b.changed("skills/delta/SKILL.md"), vec!["skills/delta".to_owned()]);
        let (o, log) = b.build();
        assert_eq!(count(&log, "skill_output"), 1, "{log:?}");
        assert_eq!(o.totals.skills, 3);
        assert!(files(&out).iter().any(|f| f.starts_with("skills/delta/")));
    }

    /// A new process keeps aside (unread) the skills its record has as they are; one edited
    /// after that and then reported by the watcher is a change. Fails before the fix: the
    /// report first read every skill kept aside (the edit with it) and then found the edited
    /// one as it had just read it, so nothing was rebuilt (a `skillc watch` restart followed by
    /// an edit lost the edit).
    #[test]
    fn a_skill_kept_aside_by_a_new_session_and_edited_is_a_change() {
        let dir = tempfile::tempdir().expect("tempdir");
        project(dir.path());
        // Files younger than the racy window (1 s) are never recorded as unchanged: let the
        // project's age past it, so that the next session keeps its skills aside.
        std::thread::sleep(std::time::Duration::from_millis(1300));
        let opts = crate::common::build_options(dir.path());
        let mut first = Session::open(opts.clone(), BUILT_IN_VOCABULARY.into()).expect("open");
        first.build(1_900_000_000, &mut |_| {}).expect("build");
        drop(first);
        let (db, _log) = Db::with_execution_log();
        let mut s = Session::open_with(db, opts, BUILT_IN_VOCABULARY.into()).expect("open");
        let o = s.build(1_900_000_000, &mut |_| {}).expect("build");
        assert!(
            o.up_to_date,
            "the second session should find the first one's build: {o:?}"
        );
        let md = dir.path().join("skills/beta/SKILL.md");
        std::fs::write(&md, super::skill_md("beta", &["events list", "events delete"])).expect("write");
        let abs = md.canonicalize().expect("canonical");
        assert_eq!(
            s.refresh_paths(&[abs]).expect("refresh"),
            vec!["skills/beta".to_owned()]
        );
        let o = s.build(1_900_000_000, &mut |_| {}).expect("build");
        assert_eq!(o.added.len(), 1, "{o:?}");
    }
}

//! Incrementality: which salsa queries re-execute after an edit (execution counts, never time).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use skillc::db::{self, Contents, Db, Limits, Settings, SkillSource, TextInput, load};
use skillc::skill::validate::Mode;
use skillc::{translate, vocab};

fn skill_md(name: &str, subcommands: &[&str]) -> String {
    let mut s = format!(
        "---\nname: {name}\ndescription: Manages {name} data from the command line.\n---\n\n# {name}\n\n```bash\n"
    );
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
    log: Arc<db::ExecutionLog>,
    settings: Settings,
    vocab: TextInput,
    skills: Vec<SkillSource>,
    _dir: tempfile::TempDir,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    project(dir.path());
    let (db, log) = Db::with_execution_log();
    let found = load::discover(dir.path(), &[PathBuf::from("skills")], &[]).expect("discover");
    let read = load::read(found.skills, Limits::default(), true);
    let skills = load::to_inputs(&db, read);
    let settings = Settings::new(&db, Mode::Default, Limits::default());
    let vocab = TextInput::new(&db, "vocabulary.toml".into(), vocab::DEFAULT_TEXT.into());
    Fixture {
        db,
        log,
        settings,
        vocab,
        skills,
        _dir: dir,
    }
}

impl Fixture {
    /// Translates every skill and returns the executed query names, sorted.
    fn run(&self) -> Vec<String> {
        for s in &self.skills {
            let _ = translate::translate_skill(&self.db, *s, self.settings, self.vocab);
        }
        let mut v = self.log.take();
        v.sort();
        v
    }

    fn names(&self, i: usize) -> Vec<String> {
        let t = translate::translate_skill(&self.db, self.skills[i], self.settings, self.vocab);
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
    assert!(db::set_contents_if_changed(
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
    assert!(!db::set_contents_if_changed(&mut f.db, file, same));
    assert!(f.run().is_empty());
}

#[test]
fn editing_the_vocabulary_retranslates_every_skill_but_extracts_nothing() {
    let mut f = fixture();
    f.run();
    let edited = vocab::DEFAULT_TEXT.replace("synonyms = [\"search\",", "synonyms = [\"seek\", \"search\",");
    assert!(db::set_text_if_changed(&mut f.db, f.vocab, edited));
    let after = f.run();
    assert_eq!(count(&after, "vocabulary"), 1, "{after:?}");
    assert_eq!(count(&after, "translate_skill"), 3, "{after:?}");
    assert_eq!(count(&after, "extract_skill"), 0, "{after:?}");
    assert_eq!(count(&after, "analyze_skill"), 0, "{after:?}");

    // A comment-only edit re-parses the vocabulary, which comes out equal: no re-translation.
    let text = f.vocab.text(&f.db).clone() + "\n# a comment\n";
    assert!(db::set_text_if_changed(&mut f.db, f.vocab, text));
    let comment = f.run();
    assert_eq!(count(&comment, "vocabulary"), 1, "{comment:?}");
    assert_eq!(count(&comment, "translate_skill"), 0, "{comment:?}");
}

#[test]
fn editing_a_support_file_does_not_reparse_skill_md() {
    let mut f = fixture();
    f.run();
    let script = f.skills[1].files(&f.db)[0];
    assert!(db::set_contents_if_changed(
        &mut f.db,
        script,
        Contents::Bytes(Arc::from(&b"print('changed')\n"[..]))
    ));
    let after = f.run();
    assert_eq!(count(&after, "analyze_skill"), 0, "{after:?}");
    assert_eq!(count(&after, "translate_skill"), 0, "{after:?}");
}

//! The persistent per-skill build cache (issue 16, item 1; acceptance 2 and the invalidation
//! tests of acceptance 3): a fresh process takes unchanged skills from `.skillc/cache/`,
//! recomputes only what an input change reaches, refuses bad entries, and writes the `out/`
//! of a clean build every time. Counted (cache hits, salsa executions), never timed.
//!
//! The inputs that matter, and the test of each (a change must be a miss for exactly the
//! skills whose cached results read it, and `out/` must be a clean build's):
//!
//! | input | in the key | test |
//! | --- | --- | --- |
//! | a SKILL.md | the skill's fingerprint | `a_fresh_build_after_one_edit_computes_only_that_skill` |
//! | a support file | the skill's fingerprint | `every_input_that_matters_is_a_miss` |
//! | the folder's name and path | the skill's fingerprint | `every_input_that_matters_is_a_miss` |
//! | a skill added, removed | its own key; the others' keys unchanged | `a_skill_added_or_removed_is_a_miss_for_itself_only` |
//! | the vocabulary | the context | `every_input_that_matters_is_a_miss` |
//! | `translations.toml` | the context | `every_input_that_matters_is_a_miss` |
//! | `[limits]` | the context | `every_input_that_matters_is_a_miss` |
//! | `[scan] fail_on` | the context | `every_input_that_matters_is_a_miss` |
//! | `--skip` / `[admission] skip` | the context | `every_input_that_matters_is_a_miss` |
//! | `skillc.lock` (`imported_from`) | the context | `every_input_that_matters_is_a_miss` |
//! | the tool version | the context and the entry's header | `every_input_that_matters_is_a_miss` |
//! | the validation mode | the context | unit test only (`build::cache::tests`): every build validates in the default mode |
//! | the cache `FORMAT` | the context and the header | unit test only: a constant |
//! | the signing key, `SOURCE_DATE_EPOCH`, `expires_days` | no: nothing cached reads them | `inputs_nothing_cached_reads_are_hits` |
//! | `[admission]` thresholds | no: per-skill entries hold no verdict; the menu part is checked against the admitted executors | `inputs_nothing_cached_reads_are_hits` |
//!
//! Admission's catalog-wide verdicts (L3, L4) are recorded apart, one record per output
//! folder (`.skillc/out/<id>/admission.bin`), keyed by everything those levels read; each of
//! its inputs is a unit test (`admit::tests::the_catalog_key_follows_every_input_of_l3_and_l4`),
//! and `the_catalog_verdicts_are_reused_for_the_same_question_only` runs them through fresh
//! processes.
//! | `[menu]` | no: applied when the index is rendered | `inputs_nothing_cached_reads_are_hits` |
//!
//! Random sequences of these edits, in a long session and in fresh processes, are the
//! property test of `incremental_prop`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use skillc::{BUILT_IN_VOCABULARY, BuildOptions, BuildOutcome, Db, Session};

use crate::common::tree;

const SKILLS: [&str; 4] = ["alpha", "beta", "gamma", "delta"];

fn skill_md(name: &str, extra: &str) -> String {
    // Distinct descriptions and commands, so that L3 tells the executors apart.
    let (what, command) = match name {
        "alpha" => ("Alpha stores photographs and drawings for designers", "files list"),
        "beta" => ("Beta schedules meetings across timezones", "events list"),
        "gamma" => ("Gamma keeps the sales address book of a small shop", "contacts find"),
        _ => ("Delta is a notebook of cooking recipes", "recipes search"),
    };
    format!(
        "---\nname: {name}\ndescription: {what}.{extra}\n---\n\n# {name}\n\n```bash\npython3 scripts/tool.py {command} --max 10\n```\n"
    )
}

fn project(dir: &Path) {
    for name in SKILLS {
        let d = dir.join("skills").join(name);
        std::fs::create_dir_all(d.join("scripts")).expect("mkdir");
        std::fs::write(d.join("SKILL.md"), skill_md(name, "")).expect("write");
        std::fs::write(d.join("scripts/tool.py"), "print('{}')\n").expect("write");
    }
}

/// What one fresh-process build did: its outcome and the stages it executed, by name.
struct Built {
    outcome: BuildOutcome,
    executed: BTreeMap<String, usize>,
}

impl Built {
    fn ran(&self, query: &str) -> usize {
        self.executed.get(query).copied().unwrap_or(0)
    }
}

/// A build in a new session (as a new process makes it), on a database that logs executions.
fn build_with(opts: BuildOptions, vocab: &str, tool: Option<&str>) -> Built {
    let (db, log) = Db::with_execution_log();
    let mut s = Session::open_with(db, opts, vocab.into()).expect("open");
    if let Some(t) = tool {
        s.set_cache_tool(t);
    }
    let _ = log.take();
    let outcome = s.build(1_900_000_000, &mut |_| {}).expect("build");
    let mut executed = BTreeMap::new();
    for q in log.take() {
        *executed.entry(q).or_insert(0) += 1;
    }
    Built { outcome, executed }
}

fn build(dir: &Path) -> Built {
    build_with(crate::common::build_options(dir), BUILT_IN_VOCABULARY, None)
}

fn edit(dir: &Path, name: &str, extra: &str) {
    std::fs::write(dir.join("skills").join(name).join("SKILL.md"), skill_md(name, extra)).expect("write");
}

/// `out/` of a clean build (no `.skillc/`, no cache) of the same skills and options.
fn clean_out(dir: &Path, opts: impl FnOnce(&Path) -> BuildOptions, vocab: &str) -> BTreeMap<String, (Vec<u8>, bool)> {
    let clean = tempfile::tempdir().expect("tempdir");
    crate::common::copy_dir(&dir.join("skills"), &clean.path().join("skills"));
    let b = build_with(opts(clean.path()), vocab, None);
    assert_eq!(b.outcome.checked.cache_hits, 0, "a clean build has no cache");
    tree(&clean.path().join("out"))
}

fn clean(dir: &Path) -> BTreeMap<String, (Vec<u8>, bool)> {
    clean_out(dir, crate::common::build_options, BUILT_IN_VOCABULARY)
}

/// The stages of a skill's own results: one execution per skill computed.
const STAGES: [&str; 5] = [
    "check_skill",
    "analyze_skill",
    "extract_skill",
    "translate_skill",
    "scan_skill",
];

fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walkdir::WalkDir::new(dir.join(".skillc/cache"))
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(walkdir::DirEntry::into_path)
        .collect();
    v.sort();
    v
}

/// Acceptance 2: after one SKILL.md edit, a fresh process computes that skill's stages only
/// (every other skill is a cache hit: none of its stages executes) and writes the `out/` of
/// a clean build. Fails without the cache: every skill's stages execute in a new process.
#[test]
fn a_fresh_build_after_one_edit_computes_only_that_skill() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    project(d);
    let cold = build(d);
    assert_eq!(cold.outcome.checked.cache_hits, 0);
    assert_eq!(cold.outcome.checked.cache_misses, SKILLS.len());
    assert_eq!(cold.outcome.checked.cache_written, SKILLS.len());
    assert_eq!(entries(d).len(), SKILLS.len(), "one entry per skill");
    for stage in STAGES {
        assert_eq!(cold.ran(stage), SKILLS.len(), "{stage} in the cold build");
    }

    edit(d, "beta", " Edited once.");
    let one = build(d);
    let c = one.outcome.checked;
    assert_eq!(
        (c.cache_hits, c.cache_misses, c.cache_refused),
        (SKILLS.len() - 1, 1, 0),
        "{c:?}"
    );
    assert_eq!(c.cache_written, 1, "only the edited skill's entry is written");
    for stage in STAGES {
        assert_eq!(
            one.ran(stage),
            1,
            "{stage} runs for the edited skill only: {:?}",
            one.executed
        );
    }
    assert!(one.outcome.warnings.is_empty(), "{:?}", one.outcome.warnings);
    assert_eq!(tree(&d.join("out")), clean(d), "out/ after one edit");
    // The old entry of the edited skill is pruned: the cache holds what the build used.
    assert_eq!(entries(d).len(), SKILLS.len());

    // Nothing changed: answered "up to date" without reading the cache at all.
    let noop = build(d);
    assert!(noop.outcome.up_to_date);
    assert_eq!(noop.outcome.checked.cache_hits + noop.outcome.checked.cache_misses, 0);

    // `--force` computes nothing either: every skill comes from the cache, out/ unchanged.
    let (db, _log) = Db::with_execution_log();
    let mut s = Session::open_with(db, crate::common::build_options(d), BUILT_IN_VOCABULARY.into()).expect("open");
    s.forget_fingerprint();
    let forced = s.build(1_900_000_000, &mut |_| {}).expect("build");
    assert_eq!(forced.checked.cache_hits, SKILLS.len());
    assert_eq!(
        forced.files_written, 0,
        "a forced build from the cache writes nothing new"
    );

    // The same session lives on (as `watch` does): an edit there recomputes that skill, and
    // out/ is still a clean build's.
    edit(d, "alpha", " Edited in a long session.");
    s.refresh_all().expect("refresh");
    let o = s.build(1_900_000_000, &mut |_| {}).expect("build");
    assert_eq!(o.checked.cache_misses, 1, "{:?}", o.checked);
    assert_eq!(tree(&d.join("out")), clean(d), "out/ after an edit in a long session");
}

/// Acceptance 3, one test per input that matters: each change is a miss for exactly the
/// skills it reaches, and `out/` is a clean build's. A support file (the executor's script),
/// the vocabulary, `translations.toml`, a limit, `[scan] fail_on`, the skipped levels and
/// the tool version.
#[test]
fn every_input_that_matters_is_a_miss() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    project(d);
    build(d);

    // A support file of one skill: that skill only.
    std::fs::write(d.join("skills/gamma/scripts/tool.py"), "print('{\"v\": 2}')\n").expect("write");
    let b = build(d);
    assert_eq!((b.outcome.checked.cache_hits, b.outcome.checked.cache_misses), (3, 1));
    assert_eq!(b.ran("scan_skill"), 1);
    assert_eq!(tree(&d.join("out")), clean(d), "support file");

    // A folder renamed: a new display path and folder name, that skill only.
    std::fs::rename(d.join("skills/delta"), d.join("skills/delta-two")).expect("mv");
    let b = build(d);
    assert_eq!((b.outcome.checked.cache_hits, b.outcome.checked.cache_misses), (3, 1));
    assert_eq!(tree(&d.join("out")), clean(d), "folder renamed");

    // The vocabulary: every skill.
    let vocab = format!("{BUILT_IN_VOCABULARY}\n# an edit\n");
    let b = build_with(crate::common::build_options(d), &vocab, None);
    assert_eq!(
        (b.outcome.checked.cache_hits, b.outcome.checked.cache_misses),
        (0, 4),
        "vocabulary"
    );
    assert_eq!(b.ran("translate_skill"), 4);
    assert_eq!(
        tree(&d.join("out")),
        clean_out(d, crate::common::build_options, &vocab),
        "vocabulary"
    );
    // And back: the entries of the first vocabulary were pruned, so computed again.
    let b = build(d);
    assert_eq!(
        b.outcome.checked.cache_misses, 4,
        "the old vocabulary's entries are pruned"
    );

    // Each setting: every skill is a miss, and out/ is that setting's clean build.
    type Edit = fn(&mut BuildOptions);
    let settings: [(&str, Edit); 5] = [
        ("translations.toml", |o| {
            o.translations = "# reviewed names\nversion = 1\n".into();
        }),
        ("limits", |o| o.limits.files_per_skill = 400),
        ("[scan] fail_on", |o| o.fail_on = skillc::FindingSeverity::Critical),
        ("--skip", |o| o.skip = vec![skillc::Level::L6]),
        // `skillc.lock`: the executors' `imported_from` (conservative: every skill misses).
        ("imported_from", |o| {
            o.imported_from
                .insert("beta".into(), "https://example.org/beta.git".into());
        }),
    ];
    for (what, change) in settings {
        let opts = |p: &Path| {
            let mut o = crate::common::build_options(p);
            change(&mut o);
            o
        };
        let b = build_with(opts(d), BUILT_IN_VOCABULARY, None);
        let c = b.outcome.checked;
        assert_eq!((c.cache_hits, c.cache_misses), (0, 4), "{what}: {c:?}");
        assert_eq!(tree(&d.join("out")), clean_out(d, opts, BUILT_IN_VOCABULARY), "{what}");
        // The same setting again, in a new process: every skill is a hit.
        std::fs::write(d.join("skills/alpha/SKILL.md"), skill_md("alpha", &format!(" {what}"))).expect("write");
        let again = build_with(opts(d), BUILT_IN_VOCABULARY, None);
        assert_eq!(again.outcome.checked.cache_hits, 3, "{what} again");
    }

    // The tool version: entries of this version are not taken by another one (the key and
    // the entry's header both name it).
    edit(d, "alpha", " Another version.");
    let b = build_with(
        crate::common::build_options(d),
        BUILT_IN_VOCABULARY,
        Some("0.0.0-other"),
    );
    assert_eq!(
        (b.outcome.checked.cache_hits, b.outcome.checked.cache_misses),
        (0, 4),
        "tool version"
    );
    assert_eq!(tree(&d.join("out")), clean(d), "tool version");
}

/// A skill added is a miss for itself only, and a skill removed is none for the others: the
/// other skills' keys do not depend on which skills there are. `out/` is a clean build's.
#[test]
fn a_skill_added_or_removed_is_a_miss_for_itself_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    project(d);
    build(d);
    let e = d.join("skills/echo");
    std::fs::create_dir_all(&e).expect("mkdir");
    std::fs::write(
        e.join("SKILL.md"),
        "---\nname: echo\ndescription: Echo translates letters between languages.\n---\n\n# echo\n\n```bash\npython3 tool.py letters translate\n```\n",
    )
    .expect("write");
    builds_like_clean(d, (4, 1, 1), 1, "a skill added");
    assert_eq!(entries(d).len(), 5);

    std::fs::remove_dir_all(d.join("skills/beta")).expect("rm");
    builds_like_clean(d, (4, 0, 0), 0, "a skill removed");
    assert_eq!(entries(d).len(), 4, "the removed skill's entry is pruned");
}

/// A fresh build of `d`: its cache (hits, misses, entries written) and `check_skill` runs are
/// `counts` and `checked`, and its `out/` is a clean build's.
fn builds_like_clean(d: &Path, counts: (usize, usize, usize), checked: usize, what: &str) {
    let b = build(d);
    let c = b.outcome.checked;
    assert_eq!((c.cache_hits, c.cache_misses, c.cache_written), counts, "{what}: {c:?}");
    assert_eq!(b.ran("check_skill"), checked, "{what}: {:?}", b.executed);
    assert_eq!(tree(&d.join("out")), clean(d), "{what}");
}

/// The inputs no cached result reads — the signing key, `SOURCE_DATE_EPOCH`, the catalog's
/// lifetime, the `[admission]` thresholds (admission is catalog-wide and never cached) and
/// `[menu]` (applied when the index is rendered) — change `out/` but are not in the key:
/// every skill is a hit, and `out/` is still that setting's clean build. Fails if one of them
/// is added to the key (misses) or if a cached result reads one (a stale `out/`).
#[test]
fn inputs_nothing_cached_reads_are_hits() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    project(d);
    let baseline = build(d);
    assert_eq!(baseline.outcome.checked.cache_written, SKILLS.len());
    let before = tree(&d.join("out"));
    type Edit = fn(&mut BuildOptions);
    let settings: [(&str, Edit); 6] = [
        ("the signing key", |o| {
            o.key = skillc::SecretKey::from_seed([9; 32], *b"otherKEY")
        }),
        ("SOURCE_DATE_EPOCH", |o| o.sde = Some(1_800_000_001)),
        ("expires_days", |o| o.expires_days = 30),
        // Low enough that L3 rejects executors it let in before: the menu entries cached
        // with the old executors must not be taken.
        ("[admission] affinity_threshold", |o| {
            o.admission.affinity_threshold = 0.01
        }),
        ("[menu] gate_triggerless", |o| o.menu.gate_triggerless = true),
        ("[menu] size", |o| o.menu.size = 5),
    ];
    for (what, change) in settings {
        let opts = |p: &Path| {
            let mut o = crate::common::build_options(p);
            change(&mut o);
            o
        };
        let b = build_with(opts(d), BUILT_IN_VOCABULARY, None);
        let c = b.outcome.checked;
        assert_eq!((c.cache_hits, c.cache_misses), (SKILLS.len(), 0), "{what}: {c:?}");
        // The menu entry of a skill whose admitted executors changed is made again (it
        // reads the skill's analysis); nothing else of a skill is.
        for stage in STAGES.iter().filter(|s| **s != "analyze_skill") {
            assert_eq!(b.ran(stage), 0, "{what}: {stage} ran: {:?}", b.executed);
        }
        let now = tree(&d.join("out"));
        assert_ne!(now, before, "{what} changes out/ (else this test tests nothing)");
        assert_eq!(now, clean_out(d, opts, BUILT_IN_VOCABULARY), "{what}");
        // Back to the baseline: still every skill from the cache.
        let back = build(d);
        assert_eq!(back.outcome.checked.cache_hits, SKILLS.len(), "{what}, back");
        assert_eq!(tree(&d.join("out")), before, "{what}, back");
    }
}

/// A truncated entry and an entry with a flipped byte are misses with a warning, never a
/// crash or a wrong output; they are written again, and the next build takes them.
#[test]
fn a_corrupt_entry_is_a_miss_with_a_warning() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    project(d);
    build(d);
    let files = entries(d);
    assert_eq!(files.len(), SKILLS.len());
    let truncated = std::fs::read(&files[0]).expect("read");
    std::fs::write(&files[0], &truncated[..truncated.len() / 2]).expect("write");
    let mut flipped = std::fs::read(&files[1]).expect("read");
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x20;
    std::fs::write(&files[1], &flipped).expect("write");

    // A forced build: every skill is looked up (an edit would make one of them a miss anyway).
    let forced = |d: &Path| {
        let mut s = Session::open(crate::common::build_options(d), BUILT_IN_VOCABULARY.into()).expect("open");
        s.forget_fingerprint();
        s.build(1_900_000_000, &mut |_| {}).expect("build")
    };
    let b = forced(d);
    let c = b.checked;
    assert_eq!((c.cache_hits, c.cache_misses, c.cache_refused), (2, 2, 2), "{c:?}");
    assert_eq!(b.warnings.len(), 2, "{:?}", b.warnings);
    assert!(
        b.warnings.iter().all(|w| w.contains("build cache entry")),
        "{:?}",
        b.warnings
    );
    assert_eq!(tree(&d.join("out")), clean(d), "out/ with corrupt entries");
    assert_eq!(c.cache_written, 2, "rewritten");

    // Written again: the next build takes every skill from the cache.
    let b = forced(d);
    assert_eq!((b.checked.cache_hits, b.checked.cache_refused), (4, 0));
    assert!(b.warnings.is_empty());
    assert_eq!(tree(&d.join("out")), clean(d), "out/ after the entries were rewritten");
}

/// The catalog-wide verdicts record of the project's only output folder.
fn verdicts_record(dir: &Path) -> PathBuf {
    let found: Vec<PathBuf> = walkdir::WalkDir::new(dir.join(".skillc/out"))
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name() == "admission.bin")
        .map(walkdir::DirEntry::into_path)
        .collect();
    assert_eq!(found.len(), 1, "one record: {found:?}");
    found.into_iter().next().expect("one record")
}

/// A fresh process whose plans are those of the last build takes admission's recorded L3/L4
/// verdicts instead of judging the whole catalog, and writes a clean build's `out/`; plans
/// that changed, a threshold that changed, or a damaged record are judged again (a damaged
/// one with a warning), never taken.
#[test]
fn the_catalog_verdicts_are_reused_for_the_same_question_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    project(d);
    let cold = build(d);
    assert!(!cold.outcome.checked.admission_reused, "nothing recorded yet");
    let record = verdicts_record(d);

    // Prose only: the skill is computed again, its plans are the same.
    let md = d.join("skills/gamma/SKILL.md");
    let text = std::fs::read_to_string(&md).expect("read");
    std::fs::write(&md, format!("{text}\nSome more words about the shop.\n")).expect("write");
    let prose = build(d);
    let c = prose.outcome.checked;
    assert_eq!(c.cache_misses, 1, "{c:?}");
    assert!(c.admission_reused, "the same plans: the recorded verdicts are taken");
    assert!(prose.outcome.warnings.is_empty(), "{:?}", prose.outcome.warnings);
    assert_eq!(tree(&d.join("out")), clean(d), "out/ after a prose edit");

    // A sub-command more: another question, judged.
    let text = std::fs::read_to_string(&md).expect("read");
    std::fs::write(
        &md,
        format!("{text}\n```bash\npython3 scripts/tool.py contacts add --name x\n```\n"),
    )
    .expect("write");
    let plans = build(d);
    assert!(!plans.outcome.checked.admission_reused);
    assert_eq!(tree(&d.join("out")), clean(d), "out/ after a new sub-command");

    // A threshold: judged again, and out/ is a clean build's with that threshold.
    let strict = |p: &Path| {
        let mut o = crate::common::build_options(p);
        o.admission.affinity_threshold = 0.01;
        o
    };
    let b = build_with(strict(d), BUILT_IN_VOCABULARY, None);
    assert!(!b.outcome.checked.admission_reused);
    assert_eq!(tree(&d.join("out")), clean_out(d, strict, BUILT_IN_VOCABULARY));

    // Back to the defaults, then a damaged record: a warning, judged, and written again.
    build(d);
    let mut bytes = std::fs::read(&record).expect("read");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x20;
    std::fs::write(&record, &bytes).expect("write");
    edit(d, "alpha", "");
    let text = std::fs::read_to_string(d.join("skills/alpha/SKILL.md")).expect("read");
    std::fs::write(d.join("skills/alpha/SKILL.md"), format!("{text}\nMore prose.\n")).expect("write");
    let damaged = build(d);
    assert!(!damaged.outcome.checked.admission_reused);
    assert!(
        damaged
            .outcome
            .warnings
            .iter()
            .any(|w| w.contains("admission.bin") && w.contains("seal")),
        "{:?}",
        damaged.outcome.warnings
    );
    assert_eq!(tree(&d.join("out")), clean(d), "out/ after a damaged record");
    std::fs::write(d.join("skills/alpha/SKILL.md"), format!("{text}\nMore prose, again.\n")).expect("write");
    assert!(
        build(d).outcome.checked.admission_reused,
        "the record was written again"
    );
}

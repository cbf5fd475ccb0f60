//! Property test of incremental builds (issue 16, item 2; acceptance 3): on random edit
//! sequences over a small generated project, after every edit,
//!
//! - (a) the session that lives on in one process, as `skillc watch` drives it (skill folders
//!   refreshed by path, the vocabulary and `translations.toml` set in place, the store written
//!   in the background, and a new session when a `pipeline.toml` setting, `skillc.lock` or the
//!   signing key changes, as watch starts over), and
//! - (b) a fresh process (a new session and database) over a project that keeps its
//!   `.skillc/` (the persistent cache, `l5.json`, the store)
//!
//! both write an `out/` byte-identical (bytes and executable bits) to a clean build of the
//! same inputs into a new folder, and end the same way (the same build error, or the same
//! totals, rejected skills and no warning).
//!
//! The test cannot pass by recomputing everything: after an edit of one skill's files, (a)
//! re-runs that skill's per-skill stages only (salsa's execution log) and (b) takes every other
//! skill from the cache (`cache_hits`); after an edit of an input no cached result reads
//! (admission thresholds, menu settings, expiry, the signing key), (b) takes every skill from
//! the cache.
//!
//! The project: up to five skills whose sub-commands collide at L3 (the same command in two
//! skills with near-identical descriptions) and compete in L4's routing battery; support
//! scripts with no finding, a medium one and a high one (so that `[scan] fail_on` matters).
//! Edits: a description, a sub-command added, removed or renamed, the script, a skill added,
//! removed or disabled (`metadata.disabled`), the vocabulary, `translations.toml`, the limits,
//! `fail_on`, `--skip`, the L3 threshold, `[menu]`, `expires_days`, the signing key and
//! `skillc.lock`'s `imported_from`.
//!
//! Runs: `SKILLC_PROP_CASES` cases (default 6) of 1–8 edits. Under CI (`CI` set) the seed is
//! fixed, so that CI runs the same sequences every time; elsewhere it is random (set
//! `SKILLC_PROP_SEED` to repeat one). On a failure proptest prints the shrunk edit sequence;
//! `SKILLC_PROP_TRACE=1` prints every edit and how its clean build ended.
//!
//! It fails on real mistakes (checked by breaking the code on purpose): with `[scan] fail_on`
//! left out of the cache key it shrinks to `[FailOn(1)]` (the fresh process and the restarted
//! session take entries judged under the old setting); with a stale `warm` input left set on
//! a miss, to `[Menu(1), Describe { skill: 0, .. }]` (the restarted session keeps the edited
//! skill's old results).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};
use skillc::{BuildError, BuildOutcome, Db, ExecutionLog, Session};

mod model;

use model::{Edit, Effect, Model, NAMES, edit, vocabulary};

/// How a build ended, in the terms the three builds must agree on.
#[derive(Debug, PartialEq)]
enum Ended {
    /// The build stopped (a vocabulary or `translations.toml` in error): its message.
    Failed(String),
    /// The build wrote a catalog: its counts, rejected skills and warnings (none expected).
    Built {
        totals: String,
        rejected: Vec<(String, String)>,
        warnings: Vec<String>,
    },
}

/// [`Ended`] of a build's result.
fn ended(r: &Result<BuildOutcome, BuildError>) -> Ended {
    match r {
        Err(e) => Ended::Failed(e.to_string()),
        Ok(o) => Ended::Built {
            totals: format!("{:?}", o.totals),
            rejected: o.rejected.clone(),
            warnings: o.warnings.clone(),
        },
    }
}

/// Every file of `out/` with its bytes and executable bit (none when there is no `out/`).
fn out_tree(dir: &Path) -> BTreeMap<String, (Vec<u8>, bool)> {
    let out = dir.join("out");
    if out.exists() {
        crate::common::tree(&out)
    } else {
        BTreeMap::new()
    }
}

/// The files on which two trees differ (present in one only, or with other bytes or bits).
fn differences(a: &BTreeMap<String, (Vec<u8>, bool)>, b: &BTreeMap<String, (Vec<u8>, bool)>) -> Vec<String> {
    let mut d: Vec<String> = a
        .iter()
        .filter(|(k, v)| b.get(*k) != Some(v))
        .map(|(k, _)| k.clone())
        .collect();
    d.extend(b.keys().filter(|k| !a.contains_key(*k)).cloned());
    d
}

const NOW: i64 = 1_900_000_000;

/// The per-skill stages: one execution per skill computed (a cache hit runs none).
const STAGES: [&str; 3] = ["check_skill", "translate_skill", "scan_skill"];

/// What changed since a build of one side last succeeded: the skills whose per-skill stages
/// it may compute, or everything.
#[derive(Default)]
struct Dirty {
    skills: std::collections::BTreeSet<usize>,
    everything: bool,
}

impl Dirty {
    fn add(&mut self, fx: &Effect, key_changed: bool) {
        self.skills.extend(fx.skills.iter().copied());
        self.everything |= fx.vocabulary || fx.translations || key_changed;
    }

    /// At most how many skills a build may compute, when it is bounded.
    fn bound(&self) -> Option<usize> {
        (!self.everything).then_some(self.skills.len())
    }
}

/// The long-lived session (a) and the project folders of (a) and (b).
struct Harness {
    model: Model,
    a_dir: tempfile::TempDir,
    /// `a_dir`, canonical: the paths a file watcher reports.
    a_root: PathBuf,
    a: Option<(Session, Arc<ExecutionLog>)>,
    a_dirty: Dirty,
    b_dir: tempfile::TempDir,
    b_dirty: Dirty,
    /// Cache hits of (b) over the whole sequence.
    b_hits: usize,
    /// Builds of (b) that had to take some skill from the cache.
    b_bounded: usize,
}

/// A new session (a new process's) over the project at `dir`, with the model's settings.
fn open(dir: &Path, model: &Model) -> Result<(Session, Arc<ExecutionLog>), BuildError> {
    let (db, log) = Db::with_execution_log();
    let s = Session::open_with(db, model.options(dir), vocabulary(model.vocabulary))?;
    Ok((s, log))
}

impl Harness {
    fn new() -> Harness {
        let a_dir = tempfile::tempdir().expect("tempdir");
        let b_dir = tempfile::tempdir().expect("tempdir");
        let a_root = a_dir.path().canonicalize().expect("canonical");
        Harness {
            model: Model::initial(),
            a_dir,
            a_root,
            a: None,
            a_dirty: Dirty {
                everything: true,
                ..Dirty::default()
            },
            b_dir,
            b_dirty: Dirty {
                everything: true,
                ..Dirty::default()
            },
            b_hits: 0,
            b_bounded: 0,
        }
    }

    /// A clean build of the model into a new folder: how it ends and its `out/`.
    fn clean(&self) -> (Ended, BTreeMap<String, (Vec<u8>, bool)>) {
        let dir = tempfile::tempdir().expect("tempdir");
        self.model.write_all(dir.path());
        let r = open(dir.path(), &self.model).and_then(|(mut s, _)| s.build(NOW, &mut |_| {}));
        if let Ok(o) = &r {
            assert_eq!(o.checked.cache_hits, 0, "a clean build has no cache");
        }
        (ended(&r), out_tree(dir.path()))
    }

    /// (a): applies the effect to the long-lived session as watch does, and builds; returns
    /// the result and the queries executed.
    fn build_a(&mut self, fx: &Effect) -> (Result<BuildOutcome, BuildError>, Vec<String>) {
        if fx.restart
            && let Some((mut s, _)) = self.a.take()
        {
            s.flush_store().expect("(a) store written");
        }
        let (mut s, log) = match self.a.take() {
            Some(a) => a,
            None => match open(self.a_dir.path(), &self.model) {
                Ok(a) => a,
                Err(e) => return (Err(e), Vec::new()),
            },
        };
        if fx.vocabulary {
            s.set_vocabulary(vocabulary(self.model.vocabulary));
        }
        if fx.translations {
            s.set_translations(self.model.translations_text());
        }
        let paths: Vec<PathBuf> = fx
            .skills
            .iter()
            .map(|n| self.a_root.join("skills").join(NAMES[*n]))
            .collect();
        let _ = log.take();
        let r = match s.refresh_paths(&paths) {
            Ok(_) => s.build(NOW, &mut |_| {}),
            Err(e) => Err(e),
        };
        // As watch: the first build writes the store, later ones in the background.
        s.write_store_in_background();
        let executed = log.take();
        self.a = Some((s, log));
        (r, executed)
    }

    /// One step: the edit applied to the model and both projects, then (a), (b) and a clean
    /// build compared.
    fn step(&mut self, e: Option<&Edit>) -> Result<(), TestCaseError> {
        let before = self.model.clone();
        let fx = match e {
            Some(e) => self.model.apply(e),
            None => Effect {
                skills: self.model.skills.keys().copied().collect(),
                ..Effect::default()
            },
        };
        // Settings in the cache key: the limits, fail_on, the skipped levels, the imports.
        let key_changed = (before.limits, before.fail_on, before.skip, before.imported)
            != (
                self.model.limits,
                self.model.fail_on,
                self.model.skip,
                self.model.imported,
            );
        self.a_dirty.add(&fx, key_changed);
        self.b_dirty.add(&fx, key_changed);
        self.model.write_all(self.a_dir.path());
        self.model.write_all(self.b_dir.path());
        let (expected, clean_out) = self.clean();
        if std::env::var_os("SKILLC_PROP_TRACE").is_some() {
            eprintln!("{e:?}\n  -> {expected:?}, {} files", clean_out.len());
        }

        let (a, executed) = self.build_a(&fx);
        prop_assert_eq!(
            &ended(&a),
            &expected,
            "(a) the long-lived session ends as a clean build"
        );
        if let Ok(o) = &a {
            let d = differences(&out_tree(self.a_dir.path()), &clean_out);
            prop_assert!(d.is_empty(), "(a) out/ differs from a clean build's: {:?}", d);
            // Only what changed since its last build is computed (a hit computes nothing).
            if !o.up_to_date
                && let Some(bound) = self.a_dirty.bound()
            {
                for stage in STAGES {
                    let ran = executed.iter().filter(|q| *q == stage).count();
                    prop_assert!(
                        ran <= bound,
                        "(a) {} ran {} times, at most {} skills changed: {:?}",
                        stage,
                        ran,
                        bound,
                        executed
                    );
                }
            }
            self.a_dirty = Dirty::default();
        }

        let b = open(self.b_dir.path(), &self.model).and_then(|(mut s, _)| s.build(NOW, &mut |_| {}));
        prop_assert_eq!(&ended(&b), &expected, "(b) a fresh process ends as a clean build");
        if let Ok(o) = &b {
            let d = differences(&out_tree(self.b_dir.path()), &clean_out);
            prop_assert!(d.is_empty(), "(b) out/ differs from a clean build's: {:?}", d);
            let c = o.checked;
            self.b_hits += c.cache_hits;
            if !o.up_to_date {
                // A fresh process looks every skill up; only what changed since the last
                // build misses.
                prop_assert_eq!(
                    c.cache_hits + c.cache_misses,
                    self.model.skills.len(),
                    "(b) every skill looked up: {:?}",
                    c
                );
                prop_assert_eq!(c.cache_refused, 0, "(b) no entry refused: {:?}", c);
                if let Some(bound) = self.b_dirty.bound() {
                    prop_assert!(
                        c.cache_misses <= bound,
                        "(b) {} misses, at most {} skills changed: {:?}",
                        c.cache_misses,
                        bound,
                        c
                    );
                    if self.model.skills.len() > bound {
                        self.b_bounded += 1;
                    }
                }
            }
            self.b_dirty = Dirty::default();
        }
        Ok(())
    }
}

/// The cases and the seed (see the module's documentation).
fn config() -> Config {
    let cases = std::env::var("SKILLC_PROP_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(6);
    let seed = std::env::var("SKILLC_PROP_SEED").ok().and_then(|s| s.parse().ok());
    let rng_seed = match (seed, std::env::var_os("CI")) {
        (Some(s), _) => RngSeed::Fixed(s),
        (None, Some(_)) => RngSeed::Fixed(16),
        (None, None) => RngSeed::Random,
    };
    Config {
        cases,
        rng_seed,
        // No regression files in the source tree: a failure prints its shrunk sequence.
        failure_persistence: None,
        // Each case runs three builds per edit: shrinking is bounded.
        max_shrink_iters: 256,
        ..Config::default()
    }
}

#[test]
fn incremental_builds_equal_a_clean_build_on_random_edits() {
    let mut runner = TestRunner::new(config());
    let result = runner.run(&proptest::collection::vec(edit(), 1..=8), |edits| {
        let mut h = Harness::new();
        h.step(None)?;
        for e in &edits {
            h.step(Some(e))?;
        }
        if let Some((mut s, _)) = h.a.take() {
            s.flush_store()
                .map_err(|e| TestCaseError::fail(format!("(a) store: {e}")))?;
        }
        prop_assert!(
            h.b_bounded == 0 || h.b_hits > 0,
            "(b) never took a skill from the cache over {:?}",
            edits
        );
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

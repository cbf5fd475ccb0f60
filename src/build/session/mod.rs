//! A build session (IO layer): loads the project's inputs into a salsa database, keeps them in
//! sync with the disk, runs the build queries, stamps and signs what changed, and writes `out/`
//! — only what differs, in parallel, the catalog last — then the `.skillc/` store.
//!
//! `skillc build` opens a session and builds once; `skillc watch` keeps one session alive and
//! calls [`Session::refresh_paths`] and [`Session::build`] after every change, so that only
//! changed inputs are set and only the queries they feed re-run.
//!
//! A build is a sequence of named steps, one file each: [`inputs`] (reading and refreshing
//! skills, the fingerprint), the queries (in parallel), [`processes`] (L5's `python3` and the
//! external verifier, recorded for admission), [`stamp`] (times and signatures), [`catalog`]
//! (report, routing battery, signed catalog), [`tree`] (the plan of `out/`, what to write —
//! [`tree::plan_writes`], pure — and the writes), [`audit`] (the audit log), then the store.
//!
//! Times: with `SOURCE_DATE_EPOCH` every time in `out/` comes from it (reproducible byte for
//! byte). Without it, an executor keeps the `imported_at` of the previous build while its
//! manifest (time aside) is unchanged, and the catalog keeps its version while what it says is
//! unchanged: a build that changes nothing writes nothing.

mod audit;
mod catalog;
mod checked;
mod generation;
mod inputs;
mod menu;
mod metadata;
mod processes;
mod record;
mod remote;
mod shard;
mod stamp;
mod timer;
mod tree;
mod warm;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use rayon::prelude::*;

use super::exec::System;
use super::report::report_entry;
use super::store::{self, Fingerprint, State};
use super::{Decision, SkillOutput, SkillUnit, admission, decision, skill_output, skill_unit};
use crate::db::load::LoadError;
use crate::db::{self, BuildInputs, Db, Settings, SkillSource, TextInput};
use crate::diag::{Diagnostic, Severity};
use crate::emit::write::EmitError;
use crate::emit::{self};
use crate::messages::report::Totals;
use crate::model::{AdmissionSettings, FindingSeverity, Level, Limits, Mode};
use crate::sign::SecretKey;
use crate::util::sha256;
use crate::vocab;
pub use checked::Checked;
use inputs::Known;
pub use shard::{Shard, ShardOutcome};
use stamp::{Job, Stamped, Stamper};
use timer::Timer;
use tree::{Plan, Planned};

/// What a session builds, and with what.
#[derive(Clone)]
pub struct Options {
    /// The project root: display paths, the audit log and the store are relative to it.
    pub root: PathBuf,
    /// Skill roots, relative to `root` (or absolute).
    pub roots: Vec<PathBuf>,
    /// The output folder.
    pub out_dir: PathBuf,
    /// The state folder (`.skillc/`).
    pub state_dir: PathBuf,
    /// Size and count limits.
    pub limits: Limits,
    /// Admission levels skipped on request, sorted.
    pub skip: Vec<Level>,
    /// Catalog lifetime, in days.
    pub expires_days: u32,
    /// The signing key.
    pub key: SecretKey,
    /// `SOURCE_DATE_EPOCH`, when set.
    pub sde: Option<i64>,
    /// Path of the vocabulary as shown (a file, or `<built-in vocabulary>`).
    pub vocab_path: String,
    /// The text of the project's `translations.toml` (empty when it has none).
    pub translations: String,
    /// The `[admission]` thresholds and external verifier.
    pub admission: AdmissionSettings,
    /// Security findings at or above this severity reject a skill (`[scan] fail_on`).
    pub fail_on: FindingSeverity,
    /// Skill name → original source, from `skillc.lock`.
    pub imported_from: BTreeMap<String, String>,
    /// `[menu]` and `[agents]`, written into the menu index.
    pub menu: crate::menu::settings::MenuSettings,
    /// `[cache] remote`: the build cache shared with other machines and shards, when set.
    pub remote: Option<crate::config::CacheRemote>,
}

/// Failures that stop a build (never problems in skills: those are in the report).
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// Finding or reading skills failed.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// Writing `out/` or the store failed, or `out/` is not ours.
    #[error(transparent)]
    Emit(#[from] EmitError),
    /// The vocabulary has errors: nothing can be translated.
    #[error("the vocabulary {0} has errors")]
    Vocabulary(String, Vec<Diagnostic>),
    /// The project's `translations.toml` has errors: a reviewer's decisions cannot be read,
    /// so nothing is named from the vocabulary alone behind their back (issue 12, acc. 4).
    #[error("{path} has errors")]
    Translations {
        /// The path shown (`translations.toml`).
        path: String,
        /// Its error diagnostics (TR010, TR011), with file:line:column.
        diagnostics: Vec<Diagnostic>,
        /// The file's text, for the snippets.
        text: String,
    },
    /// The menu's dense embedder failed while the menu index was built.
    #[error(
        "the menu's embedder failed: {0} (check `[menu] embedder` in pipeline.toml, or remove it to use the built-in embedder)"
    )]
    Embedder(String),
    /// The skill roots hold no skill. Nothing is signed or written: an empty catalog would
    /// replace the published one and raise its rollback floor, so that a consumer refuses the
    /// last good catalog (a misconfigured CI job naming an empty folder must not do that).
    /// The roots are given as configured.
    #[error("no skill found in {}", .0.join(", "))]
    NoSkills(Vec<String>),
}

/// A progress event (see docs/json.md, `skillc build --message-format json`).
#[derive(Clone, Debug)]
pub enum Event<'a> {
    /// A stage started over `total` items.
    Stage {
        /// `analyze` (skills), `generate` (skills), `sign` (executors) or `write` (the files
        /// of `out/` this build writes).
        stage: &'static str,
        /// Items to process.
        total: usize,
    },
    /// `n` more items of the current stage are done.
    Progress {
        /// How many more.
        n: usize,
    },
    /// A skill was rejected as a whole.
    SkillRejected {
        /// Its folder.
        path: &'a str,
        /// `CODE: reason`.
        reason: &'a str,
    },
    /// An executor appeared, changed or disappeared in `out/`.
    Executor {
        /// Its name.
        name: &'a str,
        /// `added`, `updated` or `removed`.
        change: &'static str,
    },
}

/// A receiver of progress events.
pub type Sink<'s> = &'s mut (dyn FnMut(Event<'_>) + Send);

/// What a build did.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Nothing changed since the last build: nothing was computed, signed or written.
    pub up_to_date: bool,
    /// Counts.
    pub totals: Totals,
    /// Executors in the catalog.
    pub executors: usize,
    /// Executors that appeared, changed and disappeared, by name.
    pub added: Vec<String>,
    /// See `added`.
    pub updated: Vec<String>,
    /// See `added`.
    pub removed: Vec<String>,
    /// Files written and removed in `out/`.
    pub files_written: usize,
    /// See `files_written`.
    pub files_removed: usize,
    /// Manifests signed by this build (others reused their unchanged signature).
    pub manifests_signed: usize,
    /// Whether the catalog was signed anew (what it says changed, or the key did).
    pub catalog_signed: bool,
    /// Files in `out/` skillc did not write (left alone).
    pub foreign: Vec<String>,
    /// Rejected skills: folder and reason.
    pub rejected: Vec<(String, String)>,
    /// `report.json` (empty when up to date).
    pub report: String,
    /// The catalog's expiry is already past.
    pub expired: Option<String>,
    /// What was checked on disk.
    pub checked: Checked,
    /// Problems that did not stop the build (a refused cache entry), one sentence each.
    pub warnings: Vec<String>,
}

/// A build session: the database, the inputs and the memory of the last build.
pub struct Session {
    opts: Options,
    /// [`System::python_fingerprint`] of the interpreter L5 runs.
    python: String,
    db: Db,
    inputs: BuildInputs,
    vocab: TextInput,
    translations: TextInput,
    skills: BTreeMap<String, Known>,
    /// The previous build's state; read from disk only when a build has work to do.
    state: Option<Arc<State>>,
    /// Writes the store in the background (`skillc watch`), when set.
    background: Option<store::Background>,
    disk_fingerprint: Option<Fingerprint>,
    /// No build has completed in this process yet: `out/` is checked on disk, not trusted.
    fresh: bool,
    /// Per skill (display): digest of its last report entry, to log only what changed.
    reported: HashMap<String, u64>,
    key_digest: String,
    /// Compute even when the fingerprint says "up to date".
    force: bool,
    /// Canonical folder → display path of every skill; built on the first
    /// [`Session::refresh_paths`] (watch), then kept up to date.
    canon: Option<HashMap<PathBuf, String>>,
    /// Where the store is written: `.skillc/` and this output folder's `.skillc/out/<id>/`.
    store: store::Dirs,
    /// The record of the spare generation's folder (`spare.json`), when it can be trusted.
    spare_record: Option<store::SpareRecord>,
    /// Skills whose files are as recorded, not read yet (`inputs::defer_unchanged`).
    pending: BTreeMap<String, inputs::Pending>,
    /// The metadata of the inputs taken by the first load, recorded after the first build
    /// (`None` once recorded).
    metas: Option<HashMap<String, metadata::SkillMeta>>,
    /// What was checked on disk so far.
    checked: Checked,
    /// The inputs' metadata record on disk differs from what the first load found.
    record_stale: bool,
    /// The folder listings of the first search, to record if they changed (`None` once done).
    listings: Option<crate::db::load::listing::Finished>,
    /// The next search lists every folder from the disk (`--force` after a search that
    /// trusted recorded listings).
    relist: bool,
    /// The tool version of cache keys and entries ([`crate::build::cache::TOOL`]).
    cache_tool: String,
    /// The remote cache, opened by the first build with work (`None` inside: not configured,
    /// or it could not be opened).
    remote: Option<Option<remote::Remote>>,
    /// The record of the catalog-wide admission verdicts ([`warm::CATALOG`]).
    catalog: CatalogRecord,
}

/// What a session knows of the record of catalog-wide admission verdicts in its store.
#[derive(Default)]
struct CatalogRecord {
    /// The record was read (by the first build with work).
    loaded: bool,
    /// The key of the verdicts the file holds, when known.
    on_disk: Option<[u8; 32]>,
}

impl Session {
    /// Opens a session: finds and reads every skill (in parallel) and the store.
    ///
    /// # Errors
    /// [`BuildError::Load`] when a skill root cannot be listed.
    pub fn open(opts: Options, vocab_text: String) -> Result<Session, BuildError> {
        let db = Db::default();
        Self::open_with(db, opts, vocab_text)
    }

    /// Like [`Session::open`], on a given database (tests pass one that logs executions).
    ///
    /// # Errors
    /// As [`Session::open`].
    pub fn open_with(db: Db, opts: Options, vocab_text: String) -> Result<Session, BuildError> {
        let settings = Settings::new(&db, Mode::Default, opts.limits);
        let vocab = TextInput::new(&db, opts.vocab_path.clone(), vocab_text);
        let translations = TextInput::new(&db, "translations.toml".into(), opts.translations.clone());
        // The interpreter L5 runs, found once per session (it stats the `PATH`).
        let python = System::new(opts.root.clone()).python_fingerprint();
        let inputs = BuildInputs::new(
            &db,
            Vec::new(),
            settings,
            vocab,
            translations,
            opts.skip.clone(),
            opts.admission.clone(),
            opts.fail_on,
            opts.imported_from.clone(),
            Self::cached_l5(&opts, &python),
            None,
        );
        // State and fingerprint are per output folder (issue 18, item 7).
        let store = store::Dirs {
            project: opts.state_dir.clone(),
            out: store::out_store(&opts.state_dir, &opts.out_dir),
        };
        let disk_fingerprint = store::read::<Fingerprint>(&store.out.join("fingerprint.json"));
        let key_digest = sha256(opts.key.public().to_file().as_bytes());
        let spare_record = store::read::<store::SpareRecord>(&store.out.join(store::SPARE_RECORD));
        let mut s = Session {
            opts,
            db,
            inputs,
            vocab,
            translations,
            skills: BTreeMap::new(),
            state: None,
            background: None,
            disk_fingerprint,
            fresh: true,
            reported: HashMap::new(),
            key_digest,
            force: false,
            canon: None,
            python,
            store,
            spare_record,
            pending: BTreeMap::new(),
            metas: None,
            checked: Checked::default(),
            record_stale: false,
            listings: None,
            relist: false,
            cache_tool: crate::build::cache::TOOL.into(),
            remote: None,
            catalog: CatalogRecord::default(),
        };
        s.refresh_all()?;
        Ok(s)
    }

    /// Writes the `.skillc/` store on a background thread from now on (`skillc watch`: the
    /// catalog is reported as soon as it is written). [`Session::flush_store`] waits for it.
    pub fn write_store_in_background(&mut self) {
        if self.background.is_none() {
            self.background = Some(store::Background::start(self.store.clone()));
        }
    }

    /// Waits until the store is written.
    ///
    /// # Errors
    /// The last failure to write it.
    pub fn flush_store(&mut self) -> Result<(), BuildError> {
        match self.background.take() {
            Some(mut b) => Ok(b.finish()?),
            None => Ok(()),
        }
    }

    /// Forgets the fingerprint of the last build and the record of the spare generation: the
    /// next build lists every folder of the skill roots, computes everything, checks every
    /// file of `out/` and of the spare, and still writes only what differs.
    pub fn forget_fingerprint(&mut self) {
        self.force = true;
        self.spare_record = None;
    }

    /// The database (tests read execution counts and query results through it).
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// The database, for setting inputs directly (tests).
    pub fn db_mut(&mut self) -> &mut Db {
        &mut self.db
    }

    /// The build inputs.
    pub fn inputs(&self) -> BuildInputs {
        self.inputs
    }

    /// The options.
    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// The skill input of a folder, by display path.
    pub fn skill(&self, display: &str) -> Option<SkillSource> {
        self.skills.get(display).map(|k| k.source)
    }

    /// Replaces the vocabulary text; says whether it changed.
    pub fn set_vocabulary(&mut self, text: String) -> bool {
        db::set_text_if_changed(&mut self.db, self.vocab, text)
    }

    /// Replaces the `translations.toml` text; says whether it changed. Only the skills whose
    /// entries changed are translated again.
    pub fn set_translations(&mut self, text: String) -> bool {
        self.opts.translations.clone_from(&text);
        db::set_text_if_changed(&mut self.db, self.translations, text)
    }

    /// The project files every skill's translation reads: an error in the vocabulary or in
    /// `translations.toml` stops the build before anything is named.
    fn check_files(&self) -> Result<(), BuildError> {
        let lv = vocab::vocabulary(&self.db, self.vocab);
        if lv.diagnostics.iter().any(|d| d.severity == Severity::Error) {
            return Err(BuildError::Vocabulary(
                self.opts.vocab_path.clone(),
                lv.diagnostics.clone(),
            ));
        }
        let review = crate::translate::review::review(&self.db, self.translations);
        if review.diagnostics.iter().any(|d| d.severity == Severity::Error) {
            return Err(BuildError::Translations {
                path: review.path.clone(),
                diagnostics: review.diagnostics.clone(),
                text: self.opts.translations.clone(),
            });
        }
        Ok(())
    }

    /// Builds: answers "up to date" when nothing changed since the last build (fresh process),
    /// else computes what the changed inputs feed, signs what changed and writes what differs.
    /// `now` is the clock (seconds), used when `SOURCE_DATE_EPOCH` is unset.
    ///
    /// # Errors
    /// [`BuildError::Vocabulary`] when the vocabulary has errors, [`BuildError::Translations`]
    /// when `translations.toml` has; [`BuildError::Emit`] when
    /// writing fails.
    pub fn build(&mut self, now: i64, sink: Sink<'_>) -> Result<Outcome, BuildError> {
        self.relist_if_forced()?;
        let timer = Timer::new();
        let fingerprint = match self.check_inputs(&timer)? {
            Ok(fingerprint) => fingerprint,
            Err(up_to_date) => return Ok(up_to_date),
        };
        self.check_files()?;
        // Before anything is computed or signed: `out/` keeps its last good catalog.
        self.some_skill()?;
        timer.lap("vocabulary");
        if self.state.is_none() {
            self.state = Some(Arc::new(
                store::read_state(&self.store.out.join("state.json")).unwrap_or_default(),
            ));
            timer.lap("read state");
        }
        let warnings = self.take_cached(&timer, None);
        self.run_queries(sink, &timer);
        let db: &Db = &self.db;
        let inputs = self.inputs;
        let skills: &[SkillSource] = inputs.skills(db);
        let decisions = admission(db, inputs);
        let previous: &State = self.state.get_or_insert_with(Default::default);
        let rows: Vec<Row<'_>> = skills.iter().map(|s| Row::of(db, inputs, *s)).collect();

        // Stamp and sign the executors (reusing unchanged signatures).
        let jobs = jobs(&rows);
        sink(Event::Stage {
            stage: "sign",
            total: jobs.len(),
        });
        let same_key = previous.key_id == self.key_digest;
        let progress = std::sync::Mutex::new(&mut *sink);
        let stamped = Stamper {
            sde: self.opts.sde,
            now,
            key: &self.opts.key,
            same_key,
            skip: &self.opts.skip,
        }
        .stamp_all(&jobs, previous, &|n| {
            if let Ok(mut p) = progress.lock() {
                p(Event::Progress { n });
            }
        });
        let sink = progress.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        timer.lap("stamp and sign");

        // The report, the routing battery, the public key and the catalog vouching for them.
        let totals = totals(&rows);
        let report = catalog::report(&rows, &totals, inputs.vocabulary(db).text(db), &self.opts, decisions);
        let routing = catalog::routing(decisions);
        let public_key = self.opts.key.public().to_file();
        let mut listed = catalog::Listed::of(&rows, &jobs, &stamped);
        for (file, text) in [
            (emit::REPORT, &report),
            (emit::ROUTING, &routing),
            (emit::PUBLIC_KEY, &public_key),
        ] {
            listed.files.insert(file.to_owned(), sha256(text.as_bytes()));
        }
        // The menu index (and dense vectors), vouched for by the catalog.
        let menu = menu::MenuOut::render(db, inputs, skills, &listed, &self.opts)?;
        menu.list(&mut listed.files);
        timer.lap("menu index");
        let signed = catalog::sign(&listed, &self.opts, previous, same_key, now);
        timer.lap("catalog and report");

        // The tree, and what to write of it: only what differs, in parallel, the catalog last.
        let mut plan = plan_tree(&rows, &jobs, &stamped, [&report, &routing, &public_key], &signed);
        menu.plan(&mut plan, &self.opts.key, &signed.state);
        timer.lap("plan");
        let record_file = self.store.out.join(store::SPARE_RECORD);
        let spare_check = generation::SpareCheck {
            record: self.spare_record.as_ref(),
            record_file: &record_file,
        };
        let published = generation::publish(
            &plan,
            previous,
            &self.opts.out_dir,
            self.fresh,
            &spare_check,
            &self.opts.key.public(),
            &self.opts.skip,
            &mut *sink,
        )
        // The spare may be half-written: the next build lists it.
        .inspect_err(|_| self.spare_record = None)?;
        let writes = &published.changes;
        timer.lap("write out/");

        let mut outcome = audit::changes(previous, &jobs, &stamped, writes, totals);
        outcome.checked = Checked {
            out_listed: published.out_listed,
            spare_listed: published.spare_listed,
            ..self.checked
        };
        outcome.catalog_signed = signed.signed;
        outcome.expired = signed.expired.clone();
        outcome.rejected = rejected(&rows);
        outcome.warnings = warnings;
        audit::send_events(&outcome, sink);
        let audit = audit::audit(&rows, &self.reported, &self.opts.roots, signed.state.version, &outcome);
        // The previous state is updated in place unless the store's thread still holds it.
        let previous = self.state.take().unwrap_or_default();
        let executors = jobs
            .iter()
            .zip(&stamped)
            .map(|(job, st)| (job.generated.executor.name.clone(), st.state.clone()));
        let spare_record = published.spare_record;
        let built = record::Built {
            generation: spare_record.as_ref().map_or(previous.generation, |r| r.generation),
            outputs: published.outputs,
            spare: published.spare,
            out: self.opts.out_dir.display().to_string(),
            executors: executors.collect(),
            catalog: signed.state.clone(),
        };
        let next = record::next_state(previous, built, &self.key_digest);
        drop(plan);
        outcome.report = report;
        self.commit(next, audit.lines, fingerprint, &outcome)?;
        self.keep_spare_record(spare_record, &record_file)?;
        self.record_inputs()?;
        timer.lap("write store");
        self.store_cached(&mut outcome, false);
        timer.lap("write the build cache");
        self.reported = audit.reported;
        self.fresh = false;
        Ok(outcome)
    }

    /// The queries, in parallel (each worker on its own handle to the database): every skill's
    /// unit, then the processes admission asks about, admission, and every skill's output and
    /// report entry.
    fn run_queries(&mut self, sink: Sink<'_>, timer: &Timer) {
        let inputs = self.inputs;
        let skills: Vec<SkillSource> = inputs.skills(&self.db).clone();
        sink(Event::Stage {
            stage: "analyze",
            total: skills.len(),
        });
        let progress = std::sync::Mutex::new(&mut *sink);
        skills.par_chunks(64).for_each_with(self.db.clone(), |db, chunk| {
            for s in chunk {
                let _ = skill_unit(db, inputs, *s);
            }
            if let Ok(mut p) = progress.lock() {
                p(Event::Progress { n: chunk.len() });
            }
        });
        let sink = progress.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        timer.lap("analyze");
        self.run_admission_processes();
        timer.lap("admission processes");
        // What admission reads of each skill, made on the workers: admission itself is one
        // query over the whole catalog, on one thread.
        skills.par_chunks(64).for_each_with(self.db.clone(), |db, chunk| {
            for s in chunk {
                let _ = crate::build::admission_input(db, inputs, *s);
            }
        });
        timer.lap("admission inputs");
        self.checked.admission_reused = admission(&self.db, inputs).catalog_reused;
        timer.lap("admission");
        sink(Event::Stage {
            stage: "generate",
            total: skills.len(),
        });
        let progress = std::sync::Mutex::new(&mut *sink);
        skills.par_chunks(64).for_each_with(self.db.clone(), |db, chunk| {
            for s in chunk {
                let _ = skill_output(db, inputs, *s);
                let _ = report_entry(db, inputs, *s);
                let _ = crate::build::menu::menu_entry(db, inputs, *s);
            }
            if let Ok(mut p) = progress.lock() {
                p(Event::Progress { n: chunk.len() });
            }
        });
        timer.lap("generate");
    }
}

/// What the build knows of one skill once the queries ran.
struct Row<'a> {
    unit: &'a SkillUnit,
    decision: &'a Decision,
    output: &'a SkillOutput,
    /// Its entry of `report.json`.
    report: &'a str,
}

impl<'a> Row<'a> {
    fn of(db: &'a Db, inputs: BuildInputs, skill: SkillSource) -> Row<'a> {
        Row {
            unit: skill_unit(db, inputs, skill),
            decision: decision(db, inputs, skill),
            output: skill_output(db, inputs, skill),
            report: report_entry(db, inputs, skill).as_str(),
        }
    }
}

/// The rejected skills: folder and reason.
fn rejected(rows: &[Row<'_>]) -> Vec<(String, String)> {
    rows.iter()
        .filter_map(|r| Some((r.unit.display.clone(), r.decision.rejected.as_ref()?.1.clone())))
        .collect()
}

/// One stamping job per executor generated.
fn jobs<'a>(rows: &[Row<'a>]) -> Vec<Job<'a>> {
    rows.iter()
        .flat_map(|r| {
            r.output.executors.iter().map(move |g| Job {
                unit: r.unit,
                generated: g,
            })
        })
        .collect()
}

/// The counts of a build.
fn totals(rows: &[Row<'_>]) -> Totals {
    let mut totals = Totals::default();
    for r in rows {
        totals.add(r.unit, r.decision);
    }
    totals
}

/// Every file of `out/` with its digest: the executors', the skills', and the top-level files
/// (`[report, routing battery, public key]`, then the signed catalog).
fn plan_tree<'a>(
    rows: &'a [Row<'a>],
    jobs: &'a [Job<'a>],
    stamped: &'a [Stamped],
    [report, routing, public_key]: [&'a String; 3],
    signed: &'a catalog::SignedCatalog,
) -> Plan<'a> {
    // A guess of the number of files: four per executor, a few per skill.
    let mut plan: Plan<'a> = HashMap::with_capacity(rows.len() * 16 + 8);
    tree::plan_executors(&mut plan, jobs, stamped);
    tree::plan_skill_files(&mut plan, rows);
    for (file, text) in [
        (emit::REPORT, report),
        (emit::ROUTING, routing),
        (emit::PUBLIC_KEY, public_key),
    ] {
        plan.insert(file.into(), Planned::text(text, sha256(text.as_bytes()), false));
    }
    plan.insert(
        emit::CATALOG_SIG.into(),
        Planned::text(&signed.sig, sha256(signed.sig.as_bytes()), false),
    );
    plan.insert(
        emit::CATALOG.into(),
        Planned::text(&signed.text, sha256(signed.text.as_bytes()), false),
    );
    plan
}

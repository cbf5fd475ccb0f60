//! A build session (IO layer): loads the project's inputs into a salsa database, keeps them in
//! sync with the disk, runs the build queries, stamps and signs what changed, and writes `out/`
//! — only what differs, in parallel, the catalog last — then the `.skillc/` store.
//!
//! `skillc build` opens a session and builds once; `skillc watch` keeps one session alive and
//! calls [`Session::refresh_paths`] and [`Session::build`] after every change, so that only
//! changed inputs are set and only the queries they feed re-run.
//!
//! Times: with `SOURCE_DATE_EPOCH` every time in `out/` comes from it (reproducible byte for
//! byte). Without it, an executor keeps the `imported_at` of the previous build while its
//! manifest (time aside) is unchanged, and the catalog keeps its version while what it says is
//! unchanged: a build that changes nothing writes nothing.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;
use serde_json::json;
use sha2::Digest as _;

use super::exec::System;
use super::store::{self, CatalogState, ExecutorState, Fingerprint, OutputState, State};
use super::{Totals, admission, decision, report_entry, skill_output, skill_unit};
use crate::db::load::{self, FoundSkill, LoadError, ReadSkill};
use crate::db::{self, BuildInputs, Contents, Db, Settings, SkillSource, SourceFile, TextInput};
use crate::diag::{Diagnostic, Severity};
use crate::emit::write::{self, EmitError};
use crate::emit::{self, CatalogExecutor, CatalogHeader, CatalogSkill};
use crate::generate::Stamp;
use crate::model::{AdmissionSettings, FindingSeverity, Level, LevelStatus, Limits, Mode, Recorded};
use crate::sign::SecretKey;
use crate::util::{hex, sha256};
use crate::vocab;

/// L5's answers kept between processes, in the state folder ([`store::L5Cache`]).
const L5_CACHE: &str = "l5.json";

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
    /// The `[admission]` thresholds and external verifier.
    pub admission: AdmissionSettings,
    /// Security findings at or above this severity reject a skill (`[scan] fail_on`).
    pub fail_on: FindingSeverity,
    /// Skill name → original source, from `skillc.lock`.
    pub imported_from: BTreeMap<String, String>,
    /// `[menu]` and `[agents]`, written into the menu index.
    pub menu: crate::menu::settings::MenuSettings,
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
    /// The menu's dense embedder failed while the menu index was built.
    #[error(
        "the menu's embedder failed: {0} (check `[menu] embedder` in pipeline.toml, or remove it to use the built-in embedder)"
    )]
    Embedder(String),
}

/// A progress event (see docs/json.md, `skillc build --message-format json`).
#[derive(Clone, Debug)]
pub enum Event<'a> {
    /// A stage started over `total` items.
    Stage {
        /// `analyze` (skills), `sign` (executors) or `write` (files of `out/`).
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
}

struct Known {
    source: SkillSource,
    dir: PathBuf,
    fingerprint: [u8; 32],
}

/// A build session: the database, the inputs and the memory of the last build.
pub struct Session {
    opts: Options,
    /// [`System::python_fingerprint`] of the interpreter L5 runs.
    python: String,
    db: Db,
    inputs: BuildInputs,
    vocab: TextInput,
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
}

fn rfc3339(secs: i64) -> String {
    jiff::Timestamp::from_second(secs)
        .map(|t| t.to_string())
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".into())
}

/// Retained skill files that get the executable bit: scripts.
pub fn is_script(rel: &str) -> bool {
    rel.starts_with("scripts/") && (rel.ends_with(".py") || rel.ends_with(".sh") || !rel.contains('.'))
}

fn hash_contents(h: &mut sha2::Sha256, c: &Contents) {
    match c {
        Contents::Bytes(b) => {
            h.update(b"B");
            h.update((b.len() as u64).to_le_bytes());
            h.update(b);
        }
        Contents::TooLarge { size } => {
            h.update(b"L");
            h.update(size.to_le_bytes());
        }
        Contents::Unread { size } => {
            h.update(b"U");
            h.update(size.to_le_bytes());
        }
        Contents::SymlinkEscape { target } => {
            h.update(b"S");
            h.update((target.len() as u64).to_le_bytes());
            h.update(target.as_bytes());
        }
        Contents::Unreadable { error } => {
            h.update(b"E");
            h.update((error.len() as u64).to_le_bytes());
            h.update(error.as_bytes());
        }
    }
}

fn hash_str(h: &mut sha2::Sha256, s: &str) {
    h.update((s.len() as u64).to_le_bytes());
    h.update(s.as_bytes());
}

fn dir_name(dir: &Path) -> String {
    // A folder found by a walk is a real folder with its own name; only a root given as `.`,
    // `..` or a link needs resolving.
    if let Some(n) = dir.file_name().and_then(|n| n.to_str())
        && n != "."
        && n != ".."
        && std::fs::symlink_metadata(dir).is_ok_and(|m| !m.file_type().is_symlink())
    {
        return n.to_owned();
    }
    dir.canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .or_else(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default()
}

/// A skill read from disk, with its folder name and fingerprint.
struct Loaded {
    read: ReadSkill,
    dir_name: String,
    fingerprint: [u8; 32],
}

fn fingerprint_skill(read: ReadSkill) -> Loaded {
    let dir_name = dir_name(&read.found.dir);
    let mut h = sha2::Sha256::new();
    hash_str(&mut h, &read.found.display);
    hash_str(&mut h, &dir_name);
    match (&read.found.skill_md, &read.skill_md) {
        (Some(name), Some(c)) => {
            hash_str(&mut h, name);
            hash_contents(&mut h, c);
        }
        _ => hash_str(&mut h, ""),
    }
    h.update((read.files.len() as u64).to_le_bytes());
    for (rel, c) in &read.files {
        hash_str(&mut h, rel);
        hash_contents(&mut h, c);
    }
    Loaded {
        read,
        dir_name,
        fingerprint: h.finalize().into(),
    }
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
        // The interpreter L5 runs, found once per session (it stats the `PATH`).
        let python = System::new(opts.root.clone()).python_fingerprint();
        let inputs = BuildInputs::new(
            &db,
            Vec::new(),
            settings,
            vocab,
            opts.skip.clone(),
            opts.admission.clone(),
            opts.fail_on,
            opts.imported_from.clone(),
            Self::cached_l5(&opts, &python),
        );
        let disk_fingerprint = store::read::<Fingerprint>(&opts.state_dir.join("fingerprint.json"));
        let key_digest = sha256(opts.key.public().to_file().as_bytes());
        let mut s = Session {
            opts,
            db,
            inputs,
            vocab,
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
        };
        s.refresh_all()?;
        Ok(s)
    }

    /// Writes the `.skillc/` store on a background thread from now on (`skillc watch`: the
    /// catalog is reported as soon as it is written). [`Session::flush_store`] waits for it.
    pub fn write_store_in_background(&mut self) {
        if self.background.is_none() {
            self.background = Some(store::Background::start(self.opts.state_dir.clone()));
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

    /// Forgets the fingerprint of the last build: the next build computes everything (and
    /// still writes only what differs).
    pub fn forget_fingerprint(&mut self) {
        self.force = true;
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

    fn exclude(&self) -> Vec<PathBuf> {
        vec![self.opts.out_dir.clone(), self.opts.state_dir.clone()]
    }

    /// Re-reads every skill under the roots; returns the display paths that changed
    /// (added, modified or removed).
    ///
    /// # Errors
    /// [`BuildError::Load`] when a root cannot be listed.
    pub fn refresh_all(&mut self) -> Result<Vec<String>, BuildError> {
        let timer = Timer::new();
        let found = load::discover(&self.opts.root, &self.opts.roots, &self.exclude())?;
        timer.lap("discover");
        let all: BTreeSet<String> = self.skills.keys().cloned().collect();
        let changed = self.apply(found.skills, &all);
        timer.lap("read, hash and set inputs");
        Ok(changed)
    }

    /// Re-reads what changed at `paths` (absolute paths under the skill roots, as a file
    /// watcher reports them): the skill folders holding them, or the folders themselves when
    /// they hold no known skill (a new skill). Returns the display paths that changed.
    ///
    /// # Errors
    /// [`BuildError::Load`] when a folder cannot be listed.
    pub fn refresh_paths(&mut self, paths: &[PathBuf]) -> Result<Vec<String>, BuildError> {
        let root = &self.opts.root;
        let roots: Vec<(PathBuf, PathBuf)> = self
            .opts
            .roots
            .iter()
            .map(|r| (r.clone(), canonical_or_self(&root.join(r))))
            .collect();
        if self.canon.is_none() {
            let dirs: Vec<(&String, &PathBuf)> = self.skills.iter().map(|(d, k)| (d, &k.dir)).collect();
            let index = dirs
                .par_iter()
                .map(|(d, dir)| (canonical_or_self(dir), (*d).clone()))
                .collect();
            self.canon = Some(index);
        }
        let timer = Timer::new();
        let canon = self.canon.as_ref().map_or_else(HashMap::new, Clone::clone);
        timer.lap("folder index");
        // Folders to rescan, as (path relative to the project as given, absolute path).
        let mut rescan: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
        for p in paths {
            let Some((given, abs_root)) = roots.iter().find(|(_, a)| p.starts_with(a)) else {
                continue;
            };
            // The nearest known skill folder holding the path, else its nearest existing folder.
            let known = p
                .ancestors()
                .take_while(|a| a.starts_with(abs_root))
                .find(|a| canon.contains_key(*a));
            let dir = match known {
                Some(d) => d.to_path_buf(),
                None => p
                    .ancestors()
                    .skip(1)
                    .find(|a| a.is_dir())
                    .filter(|a| a.starts_with(abs_root))
                    .unwrap_or(abs_root)
                    .to_path_buf(),
            };
            let rel = dir.strip_prefix(abs_root).unwrap_or(Path::new(""));
            rescan.insert(given.join(rel), dir);
        }
        // Drop folders inside another folder being rescanned.
        let dirs: Vec<(PathBuf, PathBuf)> = rescan.into_iter().collect();
        let mut found: Vec<FoundSkill> = Vec::new();
        let mut scope: BTreeSet<String> = BTreeSet::new();
        for (given, abs) in &dirs {
            if dirs.iter().any(|(_, other)| other != abs && abs.starts_with(other)) {
                continue;
            }
            // Every known skill at or under the folder is replaced by what is found there now.
            for (dir, display) in &canon {
                if dir.starts_with(abs) {
                    scope.insert(display.clone());
                }
            }
            if abs.is_dir() {
                let d = load::discover(&self.opts.root, std::slice::from_ref(given), &self.exclude())?;
                found.extend(d.skills);
            }
        }
        timer.lap(&format!("rescan of {} folders", dirs.len()));
        let changed = self.apply(found, &scope);
        timer.lap("read and set inputs");
        Ok(changed)
    }

    /// Sets the inputs from skills found on disk: `scope` is the set of known skills the
    /// search covered (those not found again are removed).
    fn apply(&mut self, found: Vec<FoundSkill>, scope: &BTreeSet<String>) -> Vec<String> {
        let read = load::read(found, self.opts.limits, true);
        let loaded: Vec<Loaded> = read.into_par_iter().map(fingerprint_skill).collect();
        let mut changed = Vec::new();
        let mut seen = HashSet::new();
        for l in loaded {
            let display = l.read.found.display.clone();
            seen.insert(display.clone());
            if self
                .skills
                .get(&display)
                .is_some_and(|k| k.fingerprint == l.fingerprint)
            {
                continue;
            }
            changed.push(display.clone());
            let source = match self.skills.get(&display) {
                Some(k) => {
                    update_source(&mut self.db, k.source, &l);
                    k.source
                }
                None => new_source(&self.db, &l),
            };
            self.skills.insert(
                display,
                Known {
                    source,
                    dir: l.read.found.dir.clone(),
                    fingerprint: l.fingerprint,
                },
            );
        }
        for d in scope {
            if !seen.contains(d) && self.skills.remove(d).is_some() {
                changed.push(d.clone());
            }
        }
        // Keep the folder index of `refresh_paths` current (rebuilt when much changed).
        if changed.len() > 64 {
            self.canon = None;
        } else if let Some(index) = &mut self.canon {
            index.retain(|_, d| !changed.contains(d));
            for d in &changed {
                if let Some(k) = self.skills.get(d) {
                    index.insert(canonical_or_self(&k.dir), d.clone());
                }
            }
        }
        let list: Vec<SkillSource> = self.skills.values().map(|k| k.source).collect();
        if *self.inputs.skills(&self.db) != list {
            use salsa::Setter as _;
            self.inputs.set_skills(&mut self.db).to(list);
        }
        changed.sort();
        changed
    }

    /// Replaces the vocabulary text; says whether it changed.
    pub fn set_vocabulary(&mut self, text: String) -> bool {
        db::set_text_if_changed(&mut self.db, self.vocab, text)
    }

    /// The digest of every input: tool version, settings, vocabulary, key, and each skill.
    pub fn fingerprint(&self) -> String {
        let mut h = sha2::Sha256::new();
        let o = &self.opts;
        hash_str(&mut h, env!("CARGO_PKG_VERSION"));
        hash_str(&mut h, &format!("format {}", store::FORMAT));
        // The menu's embedders, recipe and glossary are inputs of `out/menu.idx`.
        hash_str(&mut h, &super::dense::fingerprint(&o.menu, &o.root));
        for r in &o.roots {
            hash_str(&mut h, &r.to_string_lossy());
        }
        hash_str(&mut h, &o.out_dir.to_string_lossy());
        hash_str(
            &mut h,
            &format!(
                "{:?} {:?} {} {:?} {:?} {:?} {:?} {:?}",
                o.limits, o.skip, o.expires_days, o.sde, o.admission, o.fail_on, o.imported_from, o.menu
            ),
        );
        // L5 runs `python3` (or `SKILLC_PYTHON`): where it is found is an input too.
        hash_str(&mut h, &self.python);
        hash_str(&mut h, &o.vocab_path);
        hash_str(&mut h, self.vocab.text(&self.db));
        hash_str(&mut h, &self.key_digest);
        h.update((self.skills.len() as u64).to_le_bytes());
        for k in self.skills.values() {
            h.update(k.fingerprint);
        }
        hex(&h.finalize())
    }

    /// Whether `out/` and the store say the last build had exactly these inputs (fresh
    /// process only; a watch session knows what changed).
    fn up_to_date(&self, fingerprint: &str) -> Option<Outcome> {
        let prev = self.disk_fingerprint.as_ref()?;
        if !self.fresh || self.force || prev.format != store::FORMAT || prev.inputs != fingerprint {
            return None;
        }
        let now = store::out_stat(&self.opts.out_dir)?;
        (now == prev.out).then(|| Outcome {
            up_to_date: true,
            totals: prev.totals,
            executors: prev.executors,
            rejected: prev.rejected.clone(),
            ..Outcome::default()
        })
    }

    /// L5's answers from `.skillc/l5.json`, when the same tool and interpreter wrote them.
    fn cached_l5(opts: &Options, python: &str) -> Recorded {
        match store::read::<store::L5Cache>(&opts.state_dir.join(L5_CACHE)) {
            Some(c) if c.python == python && c.skillc == env!("CARGO_PKG_VERSION") && !c.described.is_empty() => {
                Recorded {
                    python: true,
                    described: c.described,
                    verified: Default::default(),
                }
            }
            _ => Recorded::default(),
        }
    }

    /// Runs the processes admission needs (L5's `python3` over every new draft wrapper, the
    /// external L6 verifier over every new request) and records their answers as the
    /// `recorded` input, so that the `admission` query stays pure. Answers are kept for the
    /// session's life: a watch rebuild only runs what it has not seen.
    fn run_admission_processes(&mut self) {
        use crate::admit::Runner as _;
        let inputs = self.inputs;
        let skip = inputs.skip(&self.db).clone();
        let verifier = inputs.admission(&self.db).verifier.clone();
        let mut recorded = inputs.recorded(&self.db).clone();
        let skills: Vec<SkillSource> = inputs.skills(&self.db).clone();
        let db = &self.db;
        let units: Vec<&super::AdmissionInput> = skills
            .iter()
            .filter_map(|s| {
                let u = super::admission_input(db, inputs, *s);
                u.rejected.is_none().then_some(u)
            })
            .collect();
        let runner = System::new(self.opts.root.clone());
        let mut changed = false;
        if !skip.contains(&Level::L5) {
            let mut wrappers: Vec<(String, String)> = Vec::new();
            let mut seen = HashSet::new();
            let mut seen_all = HashSet::new();
            // The wrappers' texts are in the drafts (admission sees their digests).
            for s in &skills {
                for e in super::skill_drafts(db, inputs, *s).iter().flatten() {
                    let sha = e.digests().wrapper.clone();
                    seen_all.insert(sha.clone());
                    if !recorded.described.contains_key(&sha) && seen.insert(sha) {
                        wrappers.push((format!("{}.py", e.name), e.wrapper.clone()));
                    }
                }
            }
            if !wrappers.is_empty() {
                match runner.describe(&wrappers) {
                    Some(results) => {
                        changed |= !recorded.python || !results.is_empty();
                        recorded.python = true;
                        for ((_, source), r) in wrappers.iter().zip(results) {
                            recorded.described.insert(sha256(source.as_bytes()), r);
                        }
                        // For the next process: the answers about the current wrappers.
                        let cache = store::L5Cache {
                            skillc: env!("CARGO_PKG_VERSION").into(),
                            python: self.python.clone(),
                            described: recorded
                                .described
                                .iter()
                                .filter(|(sha, _)| seen_all.contains(*sha))
                                .map(|(k, v)| (k.clone(), v.clone()))
                                .collect(),
                        };
                        // Only a cache: when it cannot be written, the next process runs
                        // Python again (a failing `.skillc/` fails the store write below).
                        let _ = std::fs::create_dir_all(&self.opts.state_dir);
                        let _ = store::write(&self.opts.state_dir.join(L5_CACHE), &cache);
                    }
                    None => {
                        changed |= recorded.python;
                        recorded.python = false;
                    }
                }
            }
        }
        if !verifier.trim().is_empty() && !skip.contains(&Level::L6) {
            let requests: Vec<String> = units
                .iter()
                .flat_map(|u| {
                    let sp = super::skill_plans(u);
                    sp.plans
                        .iter()
                        .flatten()
                        .map(|c| crate::admit::verifier_request(&sp, c))
                        .collect::<Vec<_>>()
                })
                .filter(|r| !recorded.verified.contains_key(&sha256(r.as_bytes())))
                .collect();
            let answers: Vec<(String, Result<String, String>)> = requests
                .par_iter()
                .map(|r| (sha256(r.as_bytes()), runner.verify(&verifier, r)))
                .collect();
            changed |= !answers.is_empty();
            recorded.verified.extend(answers);
        }
        if changed {
            use salsa::Setter as _;
            self.inputs.set_recorded(&mut self.db).to(recorded);
        }
    }

    /// Builds: answers "up to date" when nothing changed since the last build (fresh process),
    /// else computes what the changed inputs feed, signs what changed and writes what differs.
    /// `now` is the clock (seconds), used when `SOURCE_DATE_EPOCH` is unset.
    ///
    /// # Errors
    /// [`BuildError::Vocabulary`] when the vocabulary has errors; [`BuildError::Emit`] when
    /// writing fails.
    pub fn build(&mut self, now: i64, sink: Sink<'_>) -> Result<Outcome, BuildError> {
        let timer = Timer::new();
        let fingerprint = self.fingerprint();
        timer.lap("fingerprint");
        if let Some(o) = self.up_to_date(&fingerprint) {
            timer.lap("up to date");
            return Ok(o);
        }
        let lv = vocab::vocabulary(&self.db, self.vocab);
        if lv.diagnostics.iter().any(|d| d.severity == Severity::Error) {
            return Err(BuildError::Vocabulary(
                self.opts.vocab_path.clone(),
                lv.diagnostics.clone(),
            ));
        }
        timer.lap("vocabulary");
        let inputs = self.inputs;
        let skills: Vec<SkillSource> = self.inputs.skills(&self.db).clone();
        if self.state.is_none() {
            self.state = Some(Arc::new(
                store::read_state(&self.opts.state_dir.join("state.json")).unwrap_or_default(),
            ));
            timer.lap("read state");
        }

        // The queries, in parallel (each worker on its own handle to the database).
        sink(Event::Stage {
            stage: "analyze",
            total: skills.len(),
        });
        skills.par_chunks(64).for_each_with(self.db.clone(), |db, chunk| {
            for s in chunk {
                let _ = skill_unit(db, inputs, *s);
            }
        });
        timer.lap("analyze");
        self.run_admission_processes();
        timer.lap("admission processes");
        let _ = admission(&self.db, inputs);
        timer.lap("admission");
        let progress = std::sync::Mutex::new(&mut *sink);
        skills.par_chunks(64).for_each_with(self.db.clone(), |db, chunk| {
            for s in chunk {
                let _ = skill_output(db, inputs, *s);
                let _ = report_entry(db, inputs, *s);
                let _ = super::menu::menu_entry(db, inputs, *s);
            }
            if let Ok(mut p) = progress.lock() {
                p(Event::Progress { n: chunk.len() });
            }
        });
        let sink = progress.into_inner().unwrap_or_else(|e| e.into_inner());
        timer.lap("generate");

        let Session {
            opts,
            db,
            state,
            reported,
            fresh,
            key_digest,
            disk_fingerprint,
            background,
            ..
        } = self;
        let db: &Db = db;
        let admitted = admission(db, inputs);
        let state: &mut Arc<State> = state.get_or_insert_with(Default::default);
        struct Row<'a> {
            unit: &'a super::SkillUnit,
            decision: &'a super::Decision,
            output: &'a super::SkillOutput,
            report: &'a str,
        }
        let rows: Vec<Row<'_>> = skills
            .iter()
            .map(|s| Row {
                unit: skill_unit(db, inputs, *s),
                decision: decision(db, inputs, *s),
                output: skill_output(db, inputs, *s),
                report: report_entry(db, inputs, *s).as_str(),
            })
            .collect();

        // Stamp and sign the executors (reusing unchanged signatures).
        let same_key = state.key_id == *key_digest;
        let sde = opts.sde;
        let key = &opts.key;
        let jobs: Vec<(&super::SkillUnit, &super::Generated)> = rows
            .iter()
            .flat_map(|r| r.output.executors.iter().map(move |g| (r.unit, g)))
            .collect();
        sink(Event::Stage {
            stage: "sign",
            total: jobs.len(),
        });
        let stamped: Vec<(ExecutorState, Option<String>, bool)> = jobs
            .par_iter()
            .map(|(unit, g)| {
                let prev = state.executors.get(&g.executor.name);
                let imported_at = match (sde, prev) {
                    (Some(t), _) => rfc3339(t),
                    (None, Some(p)) if p.fingerprint == g.fingerprint => p.imported_at.clone(),
                    (None, _) => rfc3339(now),
                };
                if let Some(p) = prev
                    && same_key
                    && p.fingerprint == g.fingerprint
                    && p.imported_at == imported_at
                {
                    return (p.clone(), None, false);
                }
                let manifest = stamp_manifest(unit, g, &imported_at, opts.skip.clone());
                let sig = key.sign(manifest.as_bytes(), &emit::manifest_trusted_comment(&g.executor.name));
                (
                    ExecutorState {
                        fingerprint: g.fingerprint.clone(),
                        imported_at,
                        manifest_sha256: sha256(manifest.as_bytes()),
                        sig,
                    },
                    Some(manifest),
                    true,
                )
            })
            .collect();
        let manifests_signed = stamped.iter().filter(|s| s.2).count();
        timer.lap("stamp and sign");

        // The tree: every file with its digest; bytes are produced only for files to write.
        let mut plan: HashMap<String, Planned<'_>> = HashMap::with_capacity(self_capacity_hint(&skills));
        let public = key.public().to_file();
        plan.insert(emit::PUBLIC_KEY.into(), Planned::owned(public.into_bytes(), false));
        plan.insert(
            emit::ROUTING.into(),
            Planned::owned(
                emit::render_routing(
                    &admitted.battery,
                    admitted.levels.get(&Level::L4).copied().unwrap_or(LevelStatus::NotRun),
                )
                .into_bytes(),
                false,
            ),
        );
        let mut catalog_execs = Vec::with_capacity(jobs.len());
        for ((unit, g), (st, manifest, _)) in jobs.iter().zip(&stamped) {
            let e = &g.executor;
            let dir = emit::executor_dir(&e.skill, &e.name);
            plan.insert(
                format!("{dir}/{}.py", e.name),
                Planned {
                    sha256: g.digests.wrapper.clone(),
                    executable: true,
                    payload: Payload::Wrapper(unit, g),
                },
            );
            plan.insert(
                format!("{dir}/manifest.toml"),
                Planned {
                    sha256: st.manifest_sha256.clone(),
                    executable: false,
                    payload: match manifest {
                        Some(m) => Payload::Text(m.as_str()),
                        None => Payload::Manifest(unit, g, &st.imported_at),
                    },
                },
            );
            plan.insert(
                format!("{dir}/manifest.toml.sig"),
                Planned::text(&st.sig, sha256(st.sig.as_bytes()), false),
            );
            plan.insert(
                format!("{dir}/manifest.lang_state.json"),
                Planned::text(&e.lang_state, g.digests.lang_state.clone(), false),
            );
            catalog_execs.push(CatalogExecutor {
                name: e.name.clone(),
                skill: e.skill.clone(),
                manifest_sha256: st.manifest_sha256.clone(),
            });
        }
        timer.lap("plan executors");
        let mut catalog_skills = Vec::new();
        let mut totals = Totals::default();
        let mut rejected = Vec::new();
        for r in &rows {
            totals.add(r.unit, r.decision);
            if let Some((_, reason)) = &r.decision.rejected {
                rejected.push((r.unit.display.clone(), reason.clone()));
            }
            let (Some(info), true) = (&r.unit.info, r.output.accepted) else {
                continue;
            };
            for f in &r.output.files {
                plan.insert(
                    format!("skills/{}/{}", info.name, f.path),
                    Planned {
                        sha256: f.sha256.clone(),
                        executable: is_script(&f.path),
                        payload: Payload::Shared(f.bytes.clone()),
                    },
                );
            }
            catalog_skills.push(CatalogSkill {
                name: info.name.clone(),
                status: super::skill_status(r.unit, r.decision),
                executors: r.output.executors.len(),
                files: info.file_hashes.clone(),
            });
        }
        timer.lap("plan skills");
        let menu = super::dense::render_files(db, inputs, &skills, &opts.menu, &opts.root, &opts.state_dir)
            .map_err(|e| BuildError::Embedder(e.to_string()))?;
        if let Some(v) = menu.vectors {
            plan.insert(emit::MENU_VECTORS.into(), Planned::owned(v, false));
        }
        let menu_index = menu.index;
        plan.insert(emit::MENU_INDEX.into(), Planned::owned(menu_index.clone(), false));
        timer.lap("menu index");
        let vtext = self_vocab_text(db, inputs);
        let entries: Vec<&str> = rows.iter().map(|r| r.report).collect();
        let report = super::render_report(
            &entries,
            &totals,
            &opts.vocab_path,
            &sha256(vtext.as_bytes()),
            &opts.skip,
            &admitted.levels,
            sde.is_some(),
        );
        let report_sha = sha256(report.as_bytes());
        timer.lap("report");
        let mut files_vouched = BTreeMap::new();
        files_vouched.insert(emit::REPORT.to_owned(), report_sha.clone());
        for f in [emit::ROUTING, emit::PUBLIC_KEY, emit::MENU_INDEX, emit::MENU_VECTORS] {
            if let Some(p) = plan.get(f) {
                files_vouched.insert(f.to_owned(), p.sha256.clone());
            }
        }
        plan.insert(emit::REPORT.into(), Planned::text(&report, report_sha, false));
        let skipped: Vec<String> = opts.skip.iter().map(|l| l.as_str().to_owned()).collect();
        let key_id = key.public().key_id_hex();
        let body = |version: i64, expires: &str| {
            emit::render_catalog(
                &CatalogHeader {
                    version,
                    expires: expires.to_owned(),
                    key_id: key_id.clone(),
                    skipped: skipped.clone(),
                },
                &files_vouched,
                &catalog_execs,
                &catalog_skills,
            )
        };
        let days = i64::from(opts.expires_days) * 86_400;
        let catalog_fp = sha256(format!("{}\n{days}", body(0, "")).as_bytes());
        let (version, expires) = match (sde, &state.catalog) {
            (Some(t), _) => (t, rfc3339(t + days)),
            (None, Some(c)) if c.fingerprint == catalog_fp => (c.version, c.expires.clone()),
            (None, prev) => {
                let v = prev.as_ref().map_or(now, |c| now.max(c.version + 1));
                (v, rfc3339(v + days))
            }
        };
        let expired = (version + days <= jiff::Timestamp::now().as_second()).then(|| expires.clone());
        timer.lap("catalog fingerprint");
        let catalog = body(version, &expires);
        let catalog_sha = sha256(catalog.as_bytes());
        let catalog_signed = state.outputs.get(emit::CATALOG).is_none_or(|o| o.sha256 != catalog_sha) || !same_key;
        let catalog_sig = key.sign(catalog.as_bytes(), &emit::catalog_trusted_comment(version, &expires));
        plan.insert(
            emit::CATALOG_SIG.into(),
            Planned::owned(catalog_sig.into_bytes(), false),
        );
        plan.insert(emit::CATALOG.into(), Planned::text(&catalog, catalog_sha, false));
        // The menu index is signed for this catalog: a menu reads it without the catalog.
        let menu_sig = key.sign(&menu_index, &emit::menu_trusted_comment(version, &expires));
        plan.insert(
            emit::MENU_INDEX_SIG.into(),
            Planned::owned(menu_sig.into_bytes(), false),
        );

        timer.lap("catalog and report");
        // Write what differs, in parallel, the catalog last.
        sink(Event::Stage {
            stage: "write",
            total: plan.len(),
        });
        let out_dir = &opts.out_dir;
        let check_disk = *fresh;
        let prev_outputs = &state.outputs;
        let listing = if check_disk {
            let listed = write::list_files(out_dir).map_err(|e| EmitError::Io {
                path: out_dir.display().to_string(),
                message: e.to_string(),
            })?;
            if let Some(link) = listed.iter().find(|l| l.symlink) {
                return Err(EmitError::Symlink(out_dir.join(&link.path).display().to_string()).into());
            }
            Some(listed.into_iter().map(|l| l.path).collect::<BTreeSet<String>>())
        } else {
            None
        };
        let to_write: Vec<(&String, &Planned<'_>)> = plan
            .par_iter()
            .filter(|(path, p)| {
                let Some(prev) = prev_outputs.get(*path) else {
                    return true;
                };
                if prev.sha256 != p.sha256 || prev.executable != p.executable {
                    return true;
                }
                if !check_disk {
                    return false;
                }
                !listing.as_ref().is_some_and(|l| l.contains(*path)) || !on_disk_matches(&out_dir.join(path), prev)
            })
            .collect();
        let mut removed: Vec<String> = prev_outputs
            .keys()
            .filter(|p| !plan.contains_key(*p))
            .filter(|p| listing.as_ref().is_none_or(|l| l.contains(*p)))
            .cloned()
            .collect();
        let mut foreign = Vec::new();
        if let Some(l) = &listing {
            for p in l {
                if plan.contains_key(p) || prev_outputs.contains_key(p) {
                    continue;
                }
                if prev_outputs.is_empty() && write::in_contract(p) {
                    removed.push(p.clone());
                } else {
                    foreign.push(p.clone());
                }
            }
        }
        let last = [emit::CATALOG_SIG, emit::CATALOG];
        type Item<'x, 'y> = &'x (&'y String, &'y Planned<'y>);
        let (catalog_files, mut rest): (Vec<Item<'_, '_>>, Vec<Item<'_, '_>>) =
            to_write.iter().partition(|(p, _)| last.contains(&p.as_str()));
        // In path order, so that each worker fills whole folders (locality in the file system).
        rest.par_sort_unstable_by(|a, b| a.0.cmp(b.0));
        // Folders first, once each; then the files, in parallel; the catalog last.
        let dirs: BTreeSet<PathBuf> = to_write
            .iter()
            .filter_map(|(p, _)| Path::new(p.as_str()).parent().map(|d| out_dir.join(d)))
            .collect();
        write::create_dirs(out_dir, &dirs)?;
        let prog = std::sync::Mutex::new(&mut *sink);
        let mut sizes: HashMap<&str, Written> = rest
            .par_chunks(256)
            .map(|chunk| -> Result<Vec<(&str, Written)>, EmitError> {
                let mut v = Vec::with_capacity(chunk.len());
                for (path, p) in chunk {
                    v.push((path.as_str(), write_planned(out_dir, path, p, &opts.skip)?));
                }
                if let Ok(mut s) = prog.lock() {
                    s(Event::Progress { n: chunk.len() });
                }
                Ok(v)
            })
            .collect::<Result<Vec<_>, EmitError>>()?
            .into_iter()
            .flatten()
            .collect();
        let sink = prog.into_inner().unwrap_or_else(|e| e.into_inner());
        for path in last {
            if let Some((path, p)) = catalog_files.iter().find(|(x, _)| x.as_str() == path) {
                sizes.insert(path.as_str(), write_planned(out_dir, path, p, &opts.skip)?);
            }
        }
        write::remove_files(out_dir, &removed)?;
        timer.lap("write out/");

        // What changed, for the summary, the events and the audit log.
        let new_execs: BTreeMap<String, ExecutorState> = jobs
            .iter()
            .zip(&stamped)
            .map(|((_, g), (st, _, _))| (g.executor.name.clone(), st.clone()))
            .collect();
        let mut outcome = Outcome {
            totals,
            executors: new_execs.len(),
            files_written: to_write.len(),
            files_removed: removed.len(),
            manifests_signed,
            catalog_signed,
            foreign,
            rejected,
            expired,
            ..Outcome::default()
        };
        // Executors with a file written, looked up once (not a scan of `to_write` per name).
        let touched: HashSet<&str> = to_write
            .iter()
            .filter(|(p, _)| p.starts_with("executors/"))
            .filter_map(|(p, _)| exec_of(p))
            .collect();
        for (name, st) in &new_execs {
            match state.executors.get(name) {
                None => outcome.added.push(name.clone()),
                Some(p) if p.manifest_sha256 != st.manifest_sha256 => outcome.updated.push(name.clone()),
                Some(_) if touched.contains(name.as_str()) => {
                    outcome.updated.push(name.clone());
                }
                Some(_) => {}
            }
        }
        for name in state.executors.keys() {
            if !new_execs.contains_key(name) {
                outcome.removed.push(name.clone());
            }
        }
        for name in &outcome.added {
            sink(Event::Executor { name, change: "added" });
        }
        for name in &outcome.updated {
            sink(Event::Executor {
                name,
                change: "updated",
            });
        }
        for name in &outcome.removed {
            sink(Event::Executor {
                name,
                change: "removed",
            });
        }
        for (path, reason) in &outcome.rejected {
            sink(Event::SkillRejected { path, reason });
        }

        // The audit log: what this build decided, for the skills whose verdict changed.
        let wall = jiff::Timestamp::now();
        let build_id = format!("{:016x}", {
            let mut b = [0u8; 8];
            let _ = getrandom::fill(&mut b);
            u64::from_le_bytes(b)
        });
        let mut audit = vec![audit_line(
            &wall,
            &build_id,
            "build.started",
            json!({"roots": opts.roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>()}),
        )];
        let mut seen_reports = HashMap::with_capacity(rows.len());
        for r in &rows {
            let digest = {
                use std::hash::{Hash as _, Hasher as _};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                r.report.hash(&mut h);
                h.finish()
            };
            seen_reports.insert(r.unit.display.clone(), digest);
            if reported.get(&r.unit.display) == Some(&digest) {
                continue;
            }
            if let Some((rule, reason)) = &r.decision.rejected {
                audit.push(audit_line(
                    &wall,
                    &build_id,
                    "skill.rejected",
                    json!({"skill": r.unit.display, "code": rule.code, "reason": reason}),
                ));
            }
            for (j, p) in r.unit.translation.plans.iter().enumerate() {
                let (event, detail) = super::plan_event(r.unit, r.decision, j);
                audit.push(audit_line(
                    &wall,
                    &build_id,
                    event,
                    json!({"skill": r.unit.display, "subcommand": p.subcommand.display(), "detail": detail}),
                ));
            }
        }
        let changed = outcome.added.len() + outcome.updated.len() + outcome.removed.len();
        audit.push(audit_line(
            &wall,
            &build_id,
            "build.finished",
            json!({"catalog_version": version, "changed": changed, "written": outcome.files_written, "removed": outcome.files_removed, "summary": totals.json()}),
        ));

        // The new state: the previous one, updated with what was written and removed.
        let written_sizes: Vec<(String, OutputState)> = to_write
            .iter()
            .map(|(path, p)| {
                (
                    (*path).clone(),
                    OutputState {
                        sha256: p.sha256.clone(),
                        size: sizes
                            .get(path.as_str())
                            .map_or_else(|| p.payload.len() as u64, |w| w.size),
                        executable: p.executable,
                        mtime_ns: sizes.get(path.as_str()).map_or(0, |w| w.mtime_ns),
                    },
                )
            })
            .collect();
        let previous: Arc<State> = std::mem::take(state);
        let mut new_state = Arc::try_unwrap(previous).unwrap_or_else(|shared| (*shared).clone());
        let before = new_state.outputs.len();
        new_state.outputs.retain(|path, _| plan.contains_key(path));
        let mut outputs_changed = new_state.outputs.len() != before || !written_sizes.is_empty();
        new_state.outputs.extend(written_sizes);
        let catalog_state = Some(CatalogState {
            fingerprint: catalog_fp,
            version,
            expires,
        });
        outputs_changed |= new_state.executors != new_execs
            || new_state.catalog != catalog_state
            || new_state.key_id != *key_digest
            || new_state.format != store::FORMAT;
        new_state.format = store::FORMAT;
        new_state.skillc = env!("CARGO_PKG_VERSION").into();
        new_state.key_id = key_digest.clone();
        new_state.executors = new_execs;
        new_state.catalog = catalog_state;
        outcome.report = report;
        let state_dir = &opts.state_dir;
        let anything = outcome.files_written + outcome.files_removed > 0 || *fresh && disk_fingerprint.is_none();
        let new_state = Arc::new(new_state);
        let mut update = store::Update::default();
        if anything || outputs_changed {
            update.state = Some(new_state.clone());
        }
        if anything {
            update.audit = audit;
        }
        let fp = Fingerprint {
            format: store::FORMAT,
            inputs: fingerprint,
            // A watch session writes `out/` many times: the next fresh build checks it anew.
            out: if *fresh {
                store::out_stat(out_dir).unwrap_or_default()
            } else {
                String::new()
            },
            totals,
            executors: outcome.executors,
            rejected: outcome.rejected.clone(),
        };
        if disk_fingerprint.as_ref() != Some(&fp) {
            update.fingerprint = Some(fp.clone());
            *disk_fingerprint = Some(fp);
        }
        match background {
            Some(b) => {
                if let Some(message) = b.take_error() {
                    return Err(EmitError::Io {
                        path: state_dir.display().to_string(),
                        message,
                    }
                    .into());
                }
                b.send(update);
            }
            None => store::apply(state_dir, &update)?,
        }
        timer.lap("write store");
        *state = new_state;
        *reported = seen_reports;
        *fresh = false;
        Ok(outcome)
    }
}

/// Stage timings on standard error when `SKILLC_TIMINGS` is set (for profiling; the lead's
/// benchmarks use them).
struct Timer {
    on: bool,
    last: std::cell::Cell<std::time::Instant>,
}

impl Timer {
    fn new() -> Timer {
        Timer {
            on: std::env::var_os("SKILLC_TIMINGS").is_some(),
            last: std::cell::Cell::new(std::time::Instant::now()),
        }
    }

    fn lap(&self, what: &str) {
        if self.on {
            let now = std::time::Instant::now();
            // Resident memory, from /proc on Linux (pages of 4 KiB).
            let rss = std::fs::read_to_string("/proc/self/statm")
                .ok()
                .and_then(|s| s.split_whitespace().nth(1).and_then(|p| p.parse::<u64>().ok()))
                .map_or(String::new(), |p| format!(", RSS {} MiB", p * 4 / 1024));
            eprintln!(
                "timing: {what}: {:.1} ms{rss}",
                (now - self.last.get()).as_secs_f64() * 1000.0
            );
            self.last.set(now);
        }
    }
}

/// A guess of the number of files in `out/` (four per executor, a few per skill).
fn self_capacity_hint(skills: &[SkillSource]) -> usize {
    skills.len() * 16 + 8
}

fn self_vocab_text(db: &Db, inputs: BuildInputs) -> String {
    inputs.vocabulary(db).text(db).clone()
}

fn canonical_or_self(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

/// The executor name of a path `executors/<skill>/<name>/…`.
fn exec_of(path: &str) -> Option<&str> {
    path.strip_prefix("executors/")?.split('/').nth(1)
}

fn on_disk_matches(path: &Path, prev: &OutputState) -> bool {
    // A file edited in `out/` since skillc wrote it has another time (even at the same size).
    if prev.mtime_ns != 0 && store::stat(path).map(|(_, t)| t) != Some(prev.mtime_ns) {
        return false;
    }
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_file() && m.len() == prev.size => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                (m.permissions().mode() & 0o111 != 0) == prev.executable
            }
            #[cfg(not(unix))]
            true
        }
        _ => false,
    }
}

fn stamp_manifest(unit: &super::SkillUnit, g: &super::Generated, imported_at: &str, skipped: Vec<Level>) -> String {
    let mut e = g.executor.clone();
    if let (Some(plan), Some(info)) = (unit.translation.plans.get(g.plan), unit.info.as_ref())
        && let Some(name) = plan.name()
    {
        e.restamp(
            plan,
            name,
            info,
            &Stamp {
                levels: g.levels.clone(),
                skipped,
                imported_at: imported_at.to_owned(),
            },
        );
    }
    e.manifest
}

enum Payload<'a> {
    Shared(Arc<[u8]>),
    Text(&'a str),
    Owned(Vec<u8>),
    /// A manifest whose signature is reused: rendered (with this time) only if it must be
    /// written.
    Manifest(&'a super::SkillUnit, &'a super::Generated, &'a str),
    /// A wrapper, rendered only if it must be written.
    Wrapper(&'a super::SkillUnit, &'a super::Generated),
}

impl Payload<'_> {
    fn len(&self) -> usize {
        match self {
            Payload::Shared(b) => b.len(),
            Payload::Text(t) => t.len(),
            Payload::Owned(b) => b.len(),
            Payload::Manifest(..) | Payload::Wrapper(..) => 0,
        }
    }
}

struct Planned<'a> {
    sha256: String,
    executable: bool,
    payload: Payload<'a>,
}

impl<'a> Planned<'a> {
    fn owned(bytes: Vec<u8>, executable: bool) -> Planned<'a> {
        Planned {
            sha256: sha256(&bytes),
            executable,
            payload: Payload::Owned(bytes),
        }
    }

    fn text(text: &'a str, sha256: String, executable: bool) -> Planned<'a> {
        Planned {
            sha256,
            executable,
            payload: Payload::Text(text),
        }
    }
}

/// A file written: its size and the modification time it got.
#[derive(Clone, Copy, Debug)]
struct Written {
    /// Bytes.
    size: u64,
    /// Nanoseconds since the epoch (0 when unknown).
    mtime_ns: i128,
}

fn write_planned(out_dir: &Path, path: &str, p: &Planned<'_>, skip: &[Level]) -> Result<Written, EmitError> {
    let mode = if p.executable { 0o755 } else { 0o644 };
    let full = out_dir.join(path);
    let bytes: std::borrow::Cow<'_, [u8]> = match &p.payload {
        Payload::Shared(b) => std::borrow::Cow::Borrowed(b),
        Payload::Text(t) => std::borrow::Cow::Borrowed(t.as_bytes()),
        Payload::Owned(b) => std::borrow::Cow::Borrowed(b),
        Payload::Manifest(unit, g, imported_at) => {
            // The stored signature vouches for this manifest: render it with the stored time.
            let m = stamp_manifest(unit, g, imported_at, skip.to_vec());
            if sha256(m.as_bytes()) != p.sha256 {
                return Err(EmitError::Io {
                    path: full.display().to_string(),
                    message:
                        "the stored signature does not match the manifest; remove .skillc/state.json and build again"
                            .into(),
                });
            }
            std::borrow::Cow::Owned(m.into_bytes())
        }
        Payload::Wrapper(unit, g) => {
            let w = match (unit.translation.plans.get(g.plan), unit.info.as_ref()) {
                (Some(plan), Some(info)) => plan.name().map(|name| g.executor.render_wrapper(plan, name, info)),
                _ => None,
            };
            // Rendering is deterministic: the same bytes as when generated and hashed.
            match w {
                Some(w) => std::borrow::Cow::Owned(w.into_bytes()),
                None => {
                    return Err(EmitError::Io {
                        path: full.display().to_string(),
                        message: "internal: the wrapper rendered differently from the one generated".into(),
                    });
                }
            }
        }
    };
    write::write_file(&full, &bytes, mode)?;
    // The time it got, so that a later edit of the file in `out/` is noticed.
    let mtime_ns = store::stat(&full).map_or(0, |(_, t)| t);
    Ok(Written {
        size: bytes.len() as u64,
        mtime_ns,
    })
}

fn audit_line(time: &jiff::Timestamp, build: &str, event: &str, detail: serde_json::Value) -> String {
    let v = json!({"time": time.to_string(), "build": build, "event": event, "detail": detail});
    crate::util::sorted_json_line(&v)
}

fn new_source(db: &Db, l: &Loaded) -> SkillSource {
    let skill_md = match (l.read.found.skill_md.as_ref(), l.read.skill_md.as_ref()) {
        (Some(name), Some(c)) => Some(SourceFile::new(db, name.clone(), c.clone())),
        _ => None,
    };
    let files = l
        .read
        .files
        .iter()
        .map(|(rel, c)| SourceFile::new(db, rel.clone(), c.clone()))
        .collect();
    SkillSource::new(db, l.read.found.display.clone(), l.dir_name.clone(), skill_md, files)
}

/// Updates an existing skill's inputs field by field, setting only what differs.
fn update_source(db: &mut Db, s: SkillSource, l: &Loaded) {
    use salsa::Setter as _;
    if *s.dir_name(db) != l.dir_name {
        s.set_dir_name(db).to(l.dir_name.clone());
    }
    let want_md = match (l.read.found.skill_md.as_ref(), l.read.skill_md.as_ref()) {
        (Some(name), Some(c)) => Some((name, c)),
        _ => None,
    };
    match (s.skill_md(db), want_md) {
        (Some(f), Some((name, c))) if f.rel_path(db) == name => {
            db::set_contents_if_changed(db, f, c.clone());
        }
        (None, None) => {}
        (_, want) => {
            let new = want.map(|(name, c)| SourceFile::new(db, name.clone(), c.clone()));
            s.set_skill_md(db).to(new);
        }
    }
    let old = s.files(db).clone();
    let same_paths =
        old.len() == l.read.files.len() && old.iter().zip(&l.read.files).all(|(f, (rel, _))| f.rel_path(db) == rel);
    if same_paths {
        for (f, (_, c)) in old.iter().zip(&l.read.files) {
            db::set_contents_if_changed(db, *f, c.clone());
        }
    } else {
        let by_path: HashMap<String, SourceFile> = old.iter().map(|f| (f.rel_path(db).clone(), *f)).collect();
        let mut files = Vec::with_capacity(l.read.files.len());
        for (rel, c) in &l.read.files {
            match by_path.get(rel) {
                Some(f) => {
                    db::set_contents_if_changed(db, *f, c.clone());
                    files.push(*f);
                }
                None => files.push(SourceFile::new(db, rel.clone(), c.clone())),
            }
        }
        s.set_files(db).to(files);
    }
}

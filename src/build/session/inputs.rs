//! Inputs of a session (IO layer): finding and reading skills, setting only the salsa inputs
//! that changed, and the fingerprint of every input that answers "up to date" without
//! computing anything.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use sha2::Digest as _;

use super::{BuildError, Outcome, Session, Timer, metadata};
use crate::build::store::{self, FORMAT};
use crate::db::load::{self, FoundSkill, ReadSkill};
use crate::db::{self, Contents, Db, SkillSource, SourceFile};
use crate::util::hex;

/// A skill whose files are as the record says: not read unless the build has work to do.
pub(super) struct Pending {
    /// Where it was found.
    found: FoundSkill,
    /// The digest recorded for these files.
    fingerprint: [u8; 32],
}

/// What the session knows of one skill folder.
pub(super) struct Known {
    /// Its input.
    pub(super) source: SkillSource,
    /// The folder, as found.
    pub(super) dir: PathBuf,
    /// Digest of what was read (see `fingerprint_skill`).
    pub(super) fingerprint: [u8; 32],
    /// The build cache key its results in the database were taken or computed for (`None`
    /// until the next build looks it up: `warm`).
    pub(super) key: Option<[u8; 32]>,
    /// The cache holds an entry for `key` (read from it, or written).
    pub(super) stored: bool,
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
    /// [`BuildError::NoSkills`] when the skill roots hold no skill.
    pub(super) fn some_skill(&self) -> Result<(), BuildError> {
        if !self.inputs.skills(&self.db).is_empty() {
            return Ok(());
        }
        let roots = self.opts.roots.iter().map(|r| r.display().to_string()).collect();
        Err(BuildError::NoSkills(roots))
    }

    fn exclude(&self) -> Vec<PathBuf> {
        vec![
            self.opts.out_dir.clone(),
            crate::emit::publish::spare_of(&self.opts.out_dir),
            self.opts.state_dir.clone(),
        ]
    }

    /// Re-reads every skill under the roots; returns the display paths that changed
    /// (added, modified or removed).
    ///
    /// # Errors
    /// [`BuildError::Load`] when a root cannot be listed.
    pub fn refresh_all(&mut self) -> Result<Vec<String>, BuildError> {
        let timer = Timer::new();
        let first = self.skills.is_empty() && self.pending.is_empty() && self.metas.is_none();
        let found = if first || self.relist {
            // `--force` lists every folder again (and records what it found).
            let trust = !std::mem::take(&mut self.relist);
            self.discover_listed(trust)?
        } else {
            load::discover(&self.opts.root, &self.opts.roots, &self.exclude())?
        };
        timer.lap("discover");
        let to_read = if first {
            self.defer_unchanged(found.skills)
        } else {
            // Every skill is read again: none stays aside.
            self.pending.clear();
            found.skills
        };
        timer.lap("stat inputs");
        self.checked.inputs_hashed += to_read
            .iter()
            .map(|f| f.files.len() + usize::from(f.skill_md.is_some()))
            .sum::<usize>();
        let all: BTreeSet<String> = self.skills.keys().cloned().collect();
        let changed = self.apply(to_read, &all);
        timer.lap("read, hash and set inputs");
        Ok(changed)
    }

    /// A forced build takes no folder listing on trust either: the skill roots are searched
    /// again, every folder listed from the disk.
    pub(super) fn relist_if_forced(&mut self) -> Result<(), BuildError> {
        if self.force && self.listings.as_ref().is_some_and(|l| l.reused > 0) {
            self.relist = true;
            self.refresh_all()?;
        }
        Ok(())
    }

    /// The first search of a session: lists only the folders that changed since the record of
    /// the last listing (`dirs.json`; every folder unless `trust`), and keeps this search's
    /// record to write.
    fn discover_listed(&mut self, trust: bool) -> Result<load::Discovered, BuildError> {
        let file = self.store.out.join(metadata::DIRS_FILE);
        let old = if trust {
            metadata::read_listings(&file)
        } else {
            load::listing::Listings::new()
        };
        let lister = load::listing::Cached::new(old, metadata::now_ns());
        let found = load::discover_with(&self.opts.root, &self.opts.roots, &self.exclude(), &lister);
        let listed = lister.finish();
        self.checked.dirs_listed += listed.listed;
        self.checked.dirs_reused += listed.reused;
        self.listings = Some(listed);
        Ok(found?)
    }

    /// The first load of a session: takes the metadata of every file, and keeps aside (not
    /// read) the skills whose files are as the record of the last build says, with the
    /// digest it recorded. Returns the skills to read now.
    fn defer_unchanged(&mut self, found: Vec<FoundSkill>) -> Vec<FoundSkill> {
        let limits = self.opts.limits;
        let since = metadata::now_ns();
        let record = metadata::Record::read(&self.store.out.join(metadata::FILE), limits).unwrap_or_default();
        let stated: Vec<(FoundSkill, Option<metadata::SkillMeta>)> = found
            .into_par_iter()
            .map(|f| {
                let m = metadata::stat_skill(&f, limits);
                (f, m)
            })
            .collect();
        let mut metas = HashMap::with_capacity(stated.len());
        let mut to_read = Vec::new();
        // Settled skills the record has as they are: when these are all of the record and all
        // of the settled skills, the record needs no rewriting.
        let mut kept = 0;
        for (f, m) in stated {
            let Some(m) = m else {
                to_read.push(f);
                continue;
            };
            self.checked.inputs_statted += m.len();
            let recorded = record
                .skills
                .get(&f.display)
                .filter(|r| r.files == m)
                .and_then(|r| metadata::unhex32(&r.fingerprint));
            if metadata::settled(&m, since) {
                kept += usize::from(recorded.is_some());
                metas.insert(f.display.clone(), m);
            }
            match recorded {
                Some(fingerprint) => {
                    self.pending
                        .insert(f.display.clone(), Pending { found: f, fingerprint });
                }
                None => to_read.push(f),
            }
        }
        self.record_stale = kept != metas.len() || kept != record.skills.len();
        self.metas = Some(metas);
        to_read
    }

    /// Reads the skills kept aside by the first load (a build has work to do: every skill's
    /// contents are inputs of the queries). `None` when none was kept aside; else the display
    /// paths of those whose contents differ from the digest recorded for them: a file edited
    /// after the first load took its metadata (a watch session's edit right after its start).
    pub(super) fn read_pending(&mut self) -> Option<Vec<String>> {
        if self.pending.is_empty() {
            return None;
        }
        let pending = std::mem::take(&mut self.pending);
        let recorded: HashMap<String, [u8; 32]> = pending.iter().map(|(d, p)| (d.clone(), p.fingerprint)).collect();
        let found: Vec<FoundSkill> = pending.into_values().map(|p| p.found).collect();
        let mut edited = self.apply(found, &BTreeSet::new());
        edited.retain(|d| self.skills.get(d).map(|k| k.fingerprint) != recorded.get(d).copied());
        Some(edited)
    }

    /// Writes the metadata record of the inputs as the first load found them (a fresh
    /// process, after its first build or up-to-date answer), when it differs from the one
    /// read: a no-op build whose files are all as recorded, or all too recent to record,
    /// writes nothing.
    pub(super) fn record_inputs(&mut self) -> Result<(), BuildError> {
        if let Some(listed) = self.listings.take()
            && listed.changed
        {
            metadata::write_listings(&self.store.out.join(metadata::DIRS_FILE), listed.listings)?;
        }
        let Some(metas) = self.metas.take() else {
            return Ok(());
        };
        if !self.record_stale {
            return Ok(());
        }
        let mut record = metadata::Record::new(self.opts.limits);
        for (display, files) in metas {
            let fingerprint = match (self.skills.get(&display), self.pending.get(&display)) {
                (Some(k), _) => k.fingerprint,
                (None, Some(p)) => p.fingerprint,
                (None, None) => continue,
            };
            record.skills.insert(
                display,
                metadata::SkillRecord {
                    files,
                    fingerprint: hex(&fingerprint),
                },
            );
        }
        crate::build::store::write(&self.store.out.join(metadata::FILE), &record)?;
        Ok(())
    }

    /// Re-reads what changed at `paths` (absolute paths under the skill roots, as a file
    /// watcher reports them): the skill folders holding them, or the folders themselves when
    /// they hold no known skill (a new skill). Returns the display paths that changed.
    ///
    /// # Errors
    /// [`BuildError::Load`] when a folder cannot be listed.
    pub fn refresh_paths(&mut self, paths: &[PathBuf]) -> Result<Vec<String>, BuildError> {
        // A skill kept aside and edited since is read here, before the rescan below reads it
        // again and finds it as it just was: it is a change all the same.
        let edited = self.read_pending().unwrap_or_default();
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
        let mut changed = self.apply(found, &scope);
        timer.lap("read and set inputs");
        for d in edited {
            if !changed.contains(&d) {
                changed.push(d);
            }
        }
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
                    key: None,
                    stored: false,
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

    /// The digest of every input: tool version, settings, vocabulary, key, and each skill.
    pub fn fingerprint(&self) -> String {
        let mut h = sha2::Sha256::new();
        let o = &self.opts;
        hash_str(&mut h, env!("CARGO_PKG_VERSION"));
        hash_str(&mut h, &format!("format {FORMAT}"));
        // The menu's embedders, recipe and glossary are inputs of `out/menu.idx`.
        hash_str(&mut h, &crate::build::dense::fingerprint(&o.menu, &o.root));
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
        hash_str(&mut h, self.translations.text(&self.db));
        hash_str(&mut h, &self.key_digest);
        // Every skill in display order, read or kept aside.
        let mut all: BTreeMap<&String, &[u8; 32]> = self.skills.iter().map(|(d, k)| (d, &k.fingerprint)).collect();
        all.extend(self.pending.iter().map(|(d, p)| (d, &p.fingerprint)));
        h.update((all.len() as u64).to_le_bytes());
        for f in all.values() {
            h.update(f);
        }
        hex(&h.finalize())
    }

    /// The fingerprint of every input once every skill is read (`Ok`), or the answer "up to
    /// date" (`Err`) when the last build had exactly these inputs — then the skills kept aside
    /// are never read.
    ///
    /// # Errors
    /// Writing the inputs' metadata record failed.
    pub(super) fn check_inputs(&mut self, timer: &Timer) -> Result<Result<String, Outcome>, BuildError> {
        let fingerprint = self.fingerprint();
        timer.lap("fingerprint");
        if let Some(o) = self.up_to_date(&fingerprint) {
            self.record_inputs()?;
            timer.lap("up to date");
            return Ok(Err(o));
        }
        if self.read_pending().is_some() {
            // What was read is what the build uses (a file may have changed since its stat).
            timer.lap("read the other skills");
            return Ok(Ok(self.fingerprint()));
        }
        Ok(Ok(fingerprint))
    }

    /// Whether `out/` and the store say the last build had exactly these inputs (fresh
    /// process only; a watch session knows what changed).
    pub(super) fn up_to_date(&self, fingerprint: &str) -> Option<Outcome> {
        let prev = self.disk_fingerprint.as_ref()?;
        if !self.fresh || self.force || prev.format != FORMAT || prev.inputs != fingerprint {
            return None;
        }
        // An expired catalog is not up to date: the build renews it (or, under an old
        // `SOURCE_DATE_EPOCH`, says it is expired).
        if prev.expires_at.is_some_and(|t| t <= jiff::Timestamp::now().as_second()) {
            return None;
        }
        let now = store::out_stat(&self.opts.out_dir)?;
        (now == prev.out).then(|| Outcome {
            up_to_date: true,
            totals: prev.totals,
            executors: prev.executors,
            rejected: prev.rejected.clone(),
            checked: self.checked,
            ..Outcome::default()
        })
    }
}

fn canonical_or_self(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
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
    SkillSource::new(
        db,
        l.read.found.display.clone(),
        l.dir_name.clone(),
        skill_md,
        files,
        None,
    )
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

//! The persistent per-skill cache, its IO half (issue 16, item 1; ARCHITECTURE.md, "The
//! persistent per-skill cache"): before the queries run, every skill whose key changed since
//! its results were taken or computed is looked up in `.skillc/cache/` and, when a verified
//! entry is there, its bytes become the skill's `warm` input (the queries decode what they
//! need of it); after the build, the skills computed are written as entries, and the entries
//! the previous build of this output folder used and this one does not are removed. With
//! `[cache] remote`, a local miss is asked of the remote ([`super::remote`]) and what is
//! computed is pushed to it, with the skill's L5 answers.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use super::{Outcome, Session, Timer, remote};
use crate::build::cache::{self, KeyParts, MenuPart, Results};
use crate::build::menu::{executor_texts, menu_entry};
use crate::build::{skill_drafts, skill_output, skill_unit};
use crate::db::SkillSource;
use crate::util::hex;

/// The folder of entries, under the state folder (`.skillc/cache/<2 hex>/<64 hex>`).
pub(super) const DIR: &str = "cache";

/// The keys the last build of an output folder used, 32 bytes each, in that folder's store:
/// what the next build removes when it no longer uses them.
const LIVE: &str = "cache.keys";

/// The catalog-wide admission verdicts (L3, L4) the last build of an output folder judged,
/// in that folder's store ([`cache::encode_catalog`]).
pub(super) const CATALOG: &str = "admission.bin";

/// What a look-up found.
enum Found {
    /// A verified entry.
    Entry(Arc<[u8]>),
    /// No entry for the key.
    Absent,
    /// An entry that failed verification, or could not be read: why.
    Refused(String),
    /// A verified entry from the remote cache.
    Remote(Arc<[u8]>),
}

/// The warning of a remote that stopped answering.
fn unreachable(shown: &str, why: &str) -> String {
    format!(
        "warning: the remote build cache {shown} is unreachable or failing ({why}); the rest of this build uses local work only"
    )
}

/// The path of the entry of `key` under the cache folder `dir`.
fn entry_path(dir: &Path, key: &[u8; 32]) -> PathBuf {
    let name = hex(key);
    dir.join(&name[..2]).join(name)
}

fn look_up(dir: &Path, key: &[u8; 32], tool: &str) -> Found {
    let path = entry_path(dir, key);
    match crate::emit::write::read_regular(&path) {
        Ok(bytes) => match cache::verify(&bytes, key, tool) {
            Ok(_) => Found::Entry(Arc::from(bytes)),
            Err(why) => Found::Refused(format!("{}: {why}", path.display())),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Found::Absent,
        Err(e) => Found::Refused(format!("{}: {e}", path.display())),
    }
}

impl Session {
    /// Makes cache keys and entries as another tool version would (tests of invalidation:
    /// an entry of another version is never taken).
    pub fn set_cache_tool(&mut self, tool: &str) {
        tool.clone_into(&mut self.cache_tool);
    }

    fn cache_dir(&self) -> PathBuf {
        self.opts.state_dir.join(DIR)
    }

    /// The build-wide part of every key: vocabulary, translations, settings, tool.
    fn cache_context(&self) -> [u8; 32] {
        let db = &self.db;
        let settings = self.inputs.settings(db);
        cache::context(&KeyParts {
            tool: &self.cache_tool,
            vocabulary: self.vocab.text(db),
            translations: self.translations.text(db),
            mode: settings.mode(db),
            limits: settings.limits(db),
            fail_on: self.inputs.fail_on(db),
            skip: self.inputs.skip(db),
            imported_from: self.inputs.imported_from(db),
        })
    }

    /// Looks up, in parallel, every skill whose key is not the one its results were taken or
    /// computed for (of `only`, when given: a shard's skills), and sets its `warm` input: the
    /// verified entry — from `.skillc/cache/`, else from the remote cache, whose entries are
    /// kept locally too — or none (computed). A skill whose key is unchanged keeps what the
    /// database has. A build of the whole catalog (not `only`) also takes the record of
    /// admission's catalog-wide verdicts ([`Session::take_catalog_verdicts`]). Returns the
    /// warnings of refused entries and records and of an unreachable remote (each a miss: the
    /// skill computed and its entry written again).
    pub(super) fn take_cached(&mut self, timer: &Timer, only: Option<&HashSet<String>>) -> Vec<String> {
        let context = self.cache_context();
        let dir = self.cache_dir();
        let tool = self.cache_tool.clone();
        let todo: Vec<(String, [u8; 32])> = self
            .skills
            .iter()
            .filter(|(d, _)| only.is_none_or(|o| o.contains(*d)))
            .filter_map(|(d, k)| {
                let key = cache::key(&context, &k.fingerprint);
                (k.key != Some(key)).then(|| (d.clone(), key))
            })
            .collect();
        let mut found: Vec<(String, [u8; 32], Found)> = todo
            .into_par_iter()
            .map(|(d, key)| {
                let f = look_up(&dir, &key, &tool);
                (d, key, f)
            })
            .collect();
        let mut warnings = Vec::new();
        let pulled = self.pull_remote(&mut found, &mut warnings);
        for (display, key, found) in found {
            let Some(k) = self.skills.get_mut(&display) else {
                continue;
            };
            let warm = match found {
                Found::Entry(bytes) => {
                    self.checked.cache_hits += 1;
                    Some(bytes)
                }
                Found::Remote(bytes) => {
                    self.checked.remote_hits += 1;
                    Some(bytes)
                }
                Found::Absent => {
                    self.checked.cache_misses += 1;
                    None
                }
                Found::Refused(why) => {
                    self.checked.cache_misses += 1;
                    self.checked.cache_refused += 1;
                    warnings.push(format!(
                        "warning: the build cache entry {why}; {display} is computed again and its entry rewritten"
                    ));
                    None
                }
            };
            k.key = Some(key);
            k.stored = warm.is_some();
            // A setter starts a new revision: only what changes is set.
            if warm.is_some() || k.source.warm(&self.db).is_some() {
                use salsa::Setter as _;
                k.source.set_warm(&mut self.db).to(warm);
            }
        }
        self.pull_l5(&pulled, &mut warnings);
        if only.is_none() {
            self.take_catalog_verdicts(&mut warnings);
        }
        timer.lap("read the build cache");
        warnings
    }

    /// Reads, once per session, the catalog-wide admission verdicts the last build of this
    /// output folder recorded, and sets them as admission's `earlier_catalog` input: taken
    /// when they answer this build's exact question, ignored otherwise. A missing file, or one
    /// of another version, is no answer; a damaged one is also a warning (and is rewritten).
    pub(super) fn take_catalog_verdicts(&mut self, warnings: &mut Vec<String>) {
        if self.catalog.loaded {
            return;
        }
        self.catalog.loaded = true;
        let path = self.store.out.join(CATALOG);
        let damaged = |why: &dyn std::fmt::Display| {
            format!(
                "warning: {}: {why}; admission judges the whole catalog and the file is written again",
                path.display()
            )
        };
        let earlier = match crate::emit::write::read_regular(&path) {
            Ok(bytes) => match cache::decode_catalog(&bytes, &self.cache_tool, &self.catalog_seal()) {
                Ok(v) => Some(v),
                Err(cache::Bad::Version { .. }) => None,
                Err(why) => {
                    warnings.push(damaged(&why));
                    None
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                warnings.push(damaged(&e));
                None
            }
        };
        let Some(earlier) = earlier else { return };
        self.catalog.on_disk = Some(earlier.key);
        use salsa::Setter as _;
        self.inputs
            .set_earlier_catalog(&mut self.db)
            .to(Some(Arc::new(earlier)));
    }

    /// The key that seals the record of catalog-wide verdicts: derived from the signing key,
    /// so that only whoever can sign this catalog can make a record a build takes.
    fn catalog_seal(&self) -> cache::Seal {
        cache::Seal {
            key: self.opts.key.derive("skillc admission record"),
        }
    }

    /// Records this build's catalog-wide admission verdicts for the next build, when they are
    /// not already the file's. A failure only costs the next build a full admission: a
    /// warning of `outcome`.
    pub(super) fn store_catalog_verdicts(&mut self, outcome: &mut Outcome) {
        let decisions = crate::build::admission(&self.db, self.inputs);
        if self.catalog.on_disk == Some(decisions.catalog.key) {
            return;
        }
        let bytes = cache::encode_catalog(&self.cache_tool, &decisions.catalog, &self.catalog_seal());
        let path = self.store.out.join(CATALOG);
        match crate::emit::write::write_atomic(&path, &bytes, None) {
            Ok(()) => self.catalog.on_disk = Some(decisions.catalog.key),
            Err(e) => outcome.warnings.push(format!(
                "warning: {} was not written ({e}); the next build judges the whole catalog",
                path.display()
            )),
        }
    }

    /// The remote cache, opened on first use; `None` when none is configured or it cannot be
    /// opened (said once in `warnings`).
    fn remote(&mut self, warnings: &mut Vec<String>) -> Option<&remote::Remote> {
        if self.remote.is_none() {
            let opened = self.opts.remote.as_ref().and_then(|cfg| {
                remote::Remote::open(cfg, &self.opts.root)
                    .inspect_err(|e| {
                        warnings.push(format!(
                            "warning: the remote build cache {} cannot be used ({e}); building with local work only",
                            cfg.shown()
                        ));
                    })
                    .ok()
            });
            self.remote = Some(opened);
        }
        self.remote.as_ref().and_then(Option::as_ref)
    }

    /// Asks the remote for the skills the local cache does not have, verifies what it sends
    /// and keeps it in `.skillc/cache/`. Returns the keys taken from it.
    fn pull_remote(&mut self, found: &mut [(String, [u8; 32], Found)], warnings: &mut Vec<String>) -> Vec<[u8; 32]> {
        let wanted: Vec<usize> = (0..found.len())
            .filter(|&i| matches!(found[i].2, Found::Absent | Found::Refused(_)))
            .collect();
        if wanted.is_empty() || self.opts.remote.is_none() {
            return Vec::new();
        }
        let dir = self.cache_dir();
        let tool = self.cache_tool.clone();
        let Some(remote) = self.remote(warnings) else {
            return Vec::new();
        };
        let names: Vec<String> = wanted.iter().map(|&i| remote::entry_name(&found[i].1)).collect();
        let got = remote.get_all(&names);
        let shown = remote.shown.clone();
        if let Some(why) = remote.take_failure() {
            warnings.push(unreachable(&shown, &why));
        }
        let mut pulled = Vec::new();
        let mut refused = 0;
        for (&i, got) in wanted.iter().zip(got) {
            let (display, key, slot) = &mut found[i];
            let remote::Got::Bytes(bytes) = got else { continue };
            match remote::verify_entry(bytes, key, &tool) {
                Ok(bytes) => {
                    // Kept locally: the next build of this machine needs no remote.
                    let _ = crate::emit::write::write_atomic(&entry_path(&dir, key), &bytes, None);
                    pulled.push(*key);
                    *slot = Found::Remote(bytes);
                }
                Err(why) => {
                    refused += 1;
                    warnings.push(format!(
                        "warning: the remote build cache entry {} of {display} is refused: {why}; {display} is computed here",
                        remote::entry_name(key)
                    ));
                }
            }
        }
        self.checked.remote_refused += refused;
        pulled
    }

    /// The L5 answers of the skills taken from the remote (by wrapper digest), added to what
    /// admission is told (`recorded`): the final assembly of a sharded build runs no Python.
    fn pull_l5(&mut self, pulled: &[[u8; 32]], warnings: &mut Vec<String>) {
        if pulled.is_empty() || self.inputs.skip(&self.db).contains(&crate::model::Level::L5) {
            return;
        }
        let (python, tool) = (self.python.clone(), self.cache_tool.clone());
        let Some(remote) = self.remote(warnings) else { return };
        let names: Vec<String> = pulled.iter().map(|k| remote::l5_name(k, &python, &tool)).collect();
        let got = remote.get_all(&names);
        if let Some(why) = remote.take_failure() {
            warnings.push(unreachable(&remote.shown, &why));
        }
        let mut recorded = self.inputs.recorded(&self.db).clone();
        let (mut taken, mut refused) = (0, 0);
        for (key, got) in pulled.iter().zip(got) {
            let remote::Got::Bytes(bytes) = got else { continue };
            // A corrupt object is no answer: Python is asked about those wrappers.
            let Some(answers) = remote::decode_l5(&bytes, key) else {
                refused += 1;
                continue;
            };
            for (sha, answer) in answers {
                if let std::collections::hash_map::Entry::Vacant(v) = recorded.described.entry(sha) {
                    v.insert(answer);
                    taken += 1;
                }
            }
        }
        if refused > 0 {
            warnings.push(format!(
                "warning: {refused} of the remote build cache's L5 answers are refused (their digest or key does not match); python3 is asked about those wrappers"
            ));
        }
        if taken > 0 {
            recorded.python = true;
            self.checked.l5_remote += taken;
            use salsa::Setter as _;
            self.inputs.set_recorded(&mut self.db).to(recorded);
        }
    }

    /// Writes an entry for every skill computed by this session and not stored yet, in
    /// parallel, and pushes them with their L5 answers to the remote cache; then (unless
    /// `shard`) removes the entries the previous build of this output folder used and this
    /// one does not, and records admission's catalog-wide verdicts
    /// ([`Session::store_catalog_verdicts`]). A shard's entries hold no menu part (it needs
    /// the catalog's admission).
    /// Failures only cost a later miss: they become warnings of `outcome`, which also gets
    /// the counts of entries written and pushed.
    pub(super) fn store_cached(&mut self, outcome: &mut Outcome, shard: bool) {
        let warnings = &mut outcome.warnings;
        let dir = self.cache_dir();
        let inputs = self.inputs;
        let tool = self.cache_tool.clone();
        let todo: Vec<(String, SkillSource, [u8; 32])> = self
            .skills
            .iter()
            .filter(|(_, k)| !k.stored)
            .filter_map(|(d, k)| Some((d.clone(), k.source, k.key?)))
            .collect();
        let push = self.opts.remote.is_some();
        let l5_on = !inputs.skip(&self.db).contains(&crate::model::Level::L5);
        type Written = (String, Result<(), String>, Option<([u8; 32], Vec<u8>, Vec<u8>)>);
        let written: Vec<Written> = todo
            .par_iter()
            .map_with(self.db.clone(), |db, (display, s, key)| {
                let menu = if shard {
                    None
                } else {
                    let output = skill_output(db, inputs, *s);
                    menu_entry(db, inputs, *s).clone().map(|entry| MenuPart {
                        executors: executor_texts(output),
                        entry,
                    })
                };
                let drafts = skill_drafts(db, inputs, *s);
                let results = Results {
                    unit: skill_unit(db, inputs, *s),
                    drafts,
                    menu,
                };
                let bytes = cache::encode(key, &tool, &results);
                let done = crate::emit::write::write_atomic(&entry_path(&dir, key), &bytes, None);
                let pushed = push.then(|| {
                    let described = &inputs.recorded(db).described;
                    let answers: BTreeMap<String, _> = drafts
                        .iter()
                        .flatten()
                        .filter_map(|e| {
                            let sha = e.digests().wrapper.clone();
                            let answer = described.get(&sha)?.clone();
                            Some((sha, answer))
                        })
                        .collect();
                    let l5 = if l5_on && !answers.is_empty() {
                        remote::encode_l5(key, &answers)
                    } else {
                        Vec::new()
                    };
                    (*key, bytes, l5)
                });
                (display.clone(), done.map_err(|e| e.to_string()), pushed)
            })
            .collect();
        let mut objects = Vec::new();
        for (display, done, pushed) in written {
            match done {
                Ok(()) => {
                    self.checked.cache_written += 1;
                    if let Some(k) = self.skills.get_mut(&display) {
                        k.stored = true;
                    }
                }
                Err(e) => warnings.push(format!(
                    "warning: the build cache entry of {display} was not written: {e}"
                )),
            }
            if let Some((key, bytes, l5)) = pushed {
                objects.push((remote::entry_name(&key), bytes));
                if !l5.is_empty() {
                    objects.push((remote::l5_name(&key, &self.python, &tool), l5));
                }
            }
        }
        if !objects.is_empty()
            && let Some(remote) = self.remote(warnings)
        {
            let n = remote.put_all(objects);
            if let Some(why) = remote.take_failure() {
                warnings.push(unreachable(&remote.shown, &why));
            }
            self.checked.remote_pushed += n;
        }
        if !shard && let Err(e) = self.prune_cache(&dir) {
            warnings.push(format!("warning: the build cache was not pruned: {e}"));
        }
        if !shard {
            self.store_catalog_verdicts(outcome);
        }
        outcome.checked.cache_written = self.checked.cache_written;
        outcome.checked.remote_pushed = self.checked.remote_pushed;
    }

    /// Removes the entries of the previous build's keys this build does not use, and records
    /// this build's (the cache holds what the last build of each output folder used).
    fn prune_cache(&self, dir: &Path) -> std::io::Result<()> {
        let file = self.store.out.join(LIVE);
        let live: HashSet<[u8; 32]> = self.skills.values().filter_map(|k| k.key).collect();
        let old: HashSet<[u8; 32]> = match crate::emit::write::read_regular(&file) {
            Ok(bytes) => bytes
                .chunks_exact(32)
                .filter_map(|c| <[u8; 32]>::try_from(c).ok())
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => HashSet::new(),
            Err(e) => return Err(e),
        };
        if old == live {
            return Ok(());
        }
        for key in old.difference(&live) {
            match std::fs::remove_file(entry_path(dir, key)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        let mut keys: Vec<&[u8; 32]> = live.iter().collect();
        keys.sort_unstable();
        let bytes: Vec<u8> = keys.into_iter().flatten().copied().collect();
        crate::emit::write::write_atomic(&file, &bytes, None).map_err(|e| std::io::Error::other(e.to_string()))
    }
}

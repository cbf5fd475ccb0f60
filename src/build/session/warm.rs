//! The persistent per-skill cache, its IO half (issue 16, item 1; ARCHITECTURE.md, "The
//! persistent per-skill cache"): before the queries run, every skill whose key changed since
//! its results were taken or computed is looked up in `.skillc/cache/` and, when a verified
//! entry is there, its bytes become the skill's `warm` input (the queries decode what they
//! need of it); after the build, the skills computed are written as entries, and the entries
//! the previous build of this output folder used and this one does not are removed.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use super::{Outcome, Session, Timer};
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

/// What a look-up found.
enum Found {
    /// A verified entry.
    Entry(Arc<[u8]>),
    /// No entry for the key.
    Absent,
    /// An entry that failed verification, or could not be read: why.
    Refused(String),
}

/// The path of the entry of `key` under the cache folder `dir`.
fn entry_path(dir: &Path, key: &[u8; 32]) -> PathBuf {
    let name = hex(key);
    dir.join(&name[..2]).join(name)
}

fn look_up(dir: &Path, key: &[u8; 32], tool: &str) -> Found {
    let path = entry_path(dir, key);
    match std::fs::read(&path) {
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
    /// computed for, and sets its `warm` input: the verified entry, or none (computed). A
    /// skill whose key is unchanged keeps what the database has. Returns the warnings of
    /// refused entries (each is a miss, the skill computed and its entry written again).
    pub(super) fn take_cached(&mut self, timer: &Timer) -> Vec<String> {
        let context = self.cache_context();
        let dir = self.cache_dir();
        let tool = self.cache_tool.clone();
        let todo: Vec<(String, [u8; 32])> = self
            .skills
            .iter()
            .filter_map(|(d, k)| {
                let key = cache::key(&context, &k.fingerprint);
                (k.key != Some(key)).then(|| (d.clone(), key))
            })
            .collect();
        let found: Vec<(String, [u8; 32], Found)> = todo
            .into_par_iter()
            .map(|(d, key)| {
                let f = look_up(&dir, &key, &tool);
                (d, key, f)
            })
            .collect();
        let mut warnings = Vec::new();
        for (display, key, found) in found {
            let Some(k) = self.skills.get_mut(&display) else {
                continue;
            };
            let warm = match found {
                Found::Entry(bytes) => {
                    self.checked.cache_hits += 1;
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
        timer.lap("read the build cache");
        warnings
    }

    /// Writes an entry for every skill computed by this session and not stored yet, in
    /// parallel, then removes the entries the previous build of this output folder used and
    /// this one does not. Failures only cost a later miss: they become warnings of `outcome`,
    /// which also gets the count of entries written.
    pub(super) fn store_cached(&mut self, outcome: &mut Outcome) {
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
        let written: Vec<(String, Result<(), String>)> = todo
            .par_iter()
            .map_with(self.db.clone(), |db, (display, s, key)| {
                let output = skill_output(db, inputs, *s);
                let menu = menu_entry(db, inputs, *s).clone().map(|entry| MenuPart {
                    executors: executor_texts(output),
                    entry,
                });
                let results = Results {
                    unit: skill_unit(db, inputs, *s),
                    drafts: skill_drafts(db, inputs, *s),
                    menu,
                };
                let bytes = cache::encode(key, &tool, &results);
                let done = crate::emit::write::write_atomic(&entry_path(&dir, key), &bytes, None);
                (display.clone(), done.map_err(|e| e.to_string()))
            })
            .collect();
        for (display, done) in written {
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
        }
        if let Err(e) = self.prune_cache(&dir) {
            warnings.push(format!("warning: the build cache was not pruned: {e}"));
        }
        outcome.checked.cache_written = self.checked.cache_written;
    }

    /// Removes the entries of the previous build's keys this build does not use, and records
    /// this build's (the cache holds what the last build of each output folder used).
    fn prune_cache(&self, dir: &Path) -> std::io::Result<()> {
        let file = self.store.out.join(LIVE);
        let live: HashSet<[u8; 32]> = self.skills.values().filter_map(|k| k.key).collect();
        let old: HashSet<[u8; 32]> = match std::fs::read(&file) {
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

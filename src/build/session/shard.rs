//! `skillc build --shard I/N` (IO layer; issue 16, item 6): computes the per-skill stages of
//! one N-th of the skills — analysis, extraction, translation, scan, drafts, L5's answers — and
//! pushes their entries to the remote cache, writing no catalog. N such jobs share a cold
//! build; the final plain build pulls every entry and runs only the catalog-wide stages
//! (admission L1–L4 and L6, the menu, stamping, signing) and the writes.
//!
//! The partition is by display path, sorted: skill k (from 0) belongs to shard `k mod N + 1`,
//! so every shard of one commit agrees on it, on any machine, and the shards differ in size by
//! at most one skill.

use std::collections::HashSet;

use rayon::prelude::*;

use super::{BuildError, Outcome, Session, Timer};
use crate::build::exec::System;
use crate::build::{skill_drafts, skill_unit};
use crate::db::SkillSource;

/// Which shard: `index` of `count`, from 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// From 1 to `count`.
    pub index: usize,
    /// At least 1.
    pub count: usize,
}

impl Shard {
    /// Parses `I/N` (1 ≤ I ≤ N).
    ///
    /// # Errors
    /// What is wrong, in words.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || format!("`{text}` is not a shard: use I/N with 1 ≤ I ≤ N, e.g. 2/4");
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// Whether the skill at position `k` of the sorted display paths is this shard's.
    pub fn owns(self, k: usize) -> bool {
        k % self.count + 1 == self.index
    }
}

/// What a shard build did.
#[derive(Clone, Debug, Default)]
pub struct ShardOutcome {
    /// Skills found in the project.
    pub skills: usize,
    /// This shard's skills.
    pub mine: usize,
    /// Counts of the cache: `cache_hits` and `remote_hits` (already done), `cache_misses`
    /// (computed here), `remote_pushed`, `l5_described`.
    pub checked: super::Checked,
    /// Problems that did not stop it (an unreachable remote, a refused entry).
    pub warnings: Vec<String>,
}

impl Session {
    /// Computes this shard's per-skill stages and pushes their entries and L5 answers to the
    /// remote cache. Writes no `out/` and no store; `.skillc/cache/` gets the entries too.
    ///
    /// # Errors
    /// As [`Session::build`] before anything is computed: the vocabulary or
    /// `translations.toml` has errors, or there is no skill.
    pub fn build_shard(&mut self, shard: Shard) -> Result<ShardOutcome, BuildError> {
        let timer = Timer::new();
        let _ = self.read_pending();
        // `--force`: no folder listing is taken on trust.
        self.relist_if_forced()?;
        self.check_files()?;
        self.some_skill()?;
        let mine: HashSet<String> = self
            .skills
            .keys()
            .enumerate()
            .filter(|(k, _)| shard.owns(*k))
            .map(|(_, d)| d.clone())
            .collect();
        let sources: HashSet<SkillSource> = mine.iter().filter_map(|d| self.skill(d)).collect();
        let mut warnings = self.take_cached(&timer, Some(&mine));
        let inputs = self.inputs;
        let list: Vec<SkillSource> = sources.iter().copied().collect();
        list.par_chunks(16).for_each_with(self.db.clone(), |db, chunk| {
            for s in chunk {
                let _ = skill_unit(db, inputs, *s);
                let _ = skill_drafts(db, inputs, *s);
            }
        });
        timer.lap("analyze");
        if !inputs.skip(&self.db).contains(&crate::model::Level::L5) {
            let mut recorded = inputs.recorded(&self.db).clone();
            let runner = System::new(self.opts.root.clone());
            if self.describe_new_wrappers(&runner, &mut recorded, Some(&sources)) {
                use salsa::Setter as _;
                self.inputs.set_recorded(&mut self.db).to(recorded);
            }
            timer.lap("admission processes");
        }
        // Only this shard's skills have a key (the others were never looked up), so only
        // their entries are written and pushed.
        let mut outcome = Outcome::default();
        self.store_cached(&mut outcome, true);
        timer.lap("write the build cache");
        warnings.append(&mut outcome.warnings);
        Ok(ShardOutcome {
            skills: self.skills.len(),
            mine: mine.len(),
            checked: self.checked,
            warnings,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Shard;

    #[test]
    fn shards_parse_and_partition_every_skill_once() {
        assert_eq!(Shard::parse("2/4"), Ok(Shard { index: 2, count: 4 }));
        for bad in ["0/4", "5/4", "1/0", "x/2", "3", "", "1/2/3"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        for n in 1..6 {
            let shards: Vec<Shard> = (1..=n).map(|i| Shard { index: i, count: n }).collect();
            for k in 0..23 {
                assert_eq!(
                    shards.iter().filter(|s| s.owns(k)).count(),
                    1,
                    "skill {k} of {n} shards"
                );
            }
        }
    }
}

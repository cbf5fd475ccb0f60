//! Recording a build in `.skillc/` (the build store, `build::store`): the new state — the
//! previous one updated with what was written, removed, stamped and signed — the audit lines
//! and the fingerprint, each written only when it changed.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{BuildError, Outcome, Session};
use crate::build::store::{self, Fingerprint, State};
use crate::emit::write::EmitError;

/// The state after a build, and whether it differs from the previous one.
pub(super) struct Next {
    state: State,
    changed: bool,
}

/// What a build produced that the store records.
pub(super) struct Built {
    /// How many times `out/` was switched ([`State::generation`]).
    pub generation: u64,
    /// Every file of the new `out/`, as written.
    pub outputs: BTreeMap<String, store::OutputState>,
    /// The files of the spare generation.
    pub spare: Option<BTreeMap<String, store::OutputState>>,
    /// The output folder.
    pub out: String,
    /// Every executor of the catalog, stamped and signed.
    pub executors: BTreeMap<String, store::ExecutorState>,
    /// The catalog.
    pub catalog: store::CatalogState,
}

/// The new state: the previous one with what this build published.
pub(super) fn next_state(previous: Arc<State>, built: Built, key_digest: &str) -> Next {
    let Built {
        generation,
        outputs,
        spare,
        out,
        executors,
        catalog,
    } = built;
    let mut state = Arc::try_unwrap(previous).unwrap_or_else(|shared| (*shared).clone());
    let catalog = Some(catalog);
    let changed = state.outputs != outputs
        || state.spare != spare
        || state.out != out
        || state.executors != executors
        || state.catalog != catalog
        || state.key_id != key_digest
        || state.generation != generation
        || state.format != store::FORMAT;
    state.format = store::FORMAT;
    state.skillc = env!("CARGO_PKG_VERSION").into();
    state.key_id = key_digest.to_owned();
    state.outputs = outputs;
    state.spare = spare;
    state.out = out;
    state.executors = executors;
    state.catalog = catalog;
    state.generation = generation;
    Next { state, changed }
}

impl Session {
    /// Keeps the spare's record, written once the state that describes the spare is on disk
    /// (a watch session writes the store in the background: it keeps the record in memory
    /// only, and the next process lists the spare once).
    pub(super) fn keep_spare_record(
        &mut self,
        record: Option<store::SpareRecord>,
        file: &std::path::Path,
    ) -> Result<(), BuildError> {
        if record != self.spare_record {
            if self.background.is_none()
                && let Some(r) = &record
            {
                store::write(file, r)?;
            }
            self.spare_record = record;
        }
        Ok(())
    }

    /// Records the new state, the audit lines and the fingerprint in `.skillc/` (on the
    /// background thread when there is one), writing only what changed.
    pub(super) fn commit(
        &mut self,
        next: Next,
        audit: Vec<String>,
        fingerprint: String,
        outcome: &Outcome,
    ) -> Result<(), BuildError> {
        let state_dir = &self.opts.state_dir;
        let anything =
            outcome.files_written + outcome.files_removed > 0 || self.fresh && self.disk_fingerprint.is_none();
        let state = Arc::new(next.state);
        let mut update = store::Update::default();
        if anything || next.changed {
            update.state = Some(state.clone());
        }
        if anything {
            update.audit = audit;
        }
        let fp = Fingerprint {
            format: store::FORMAT,
            inputs: fingerprint,
            // A watch session writes `out/` many times: the next fresh build checks it anew.
            out: if self.fresh {
                store::out_stat(&self.opts.out_dir).unwrap_or_default()
            } else {
                String::new()
            },
            totals: outcome.totals,
            executors: outcome.executors,
            rejected: outcome.rejected.clone(),
            expires_at: state
                .catalog
                .as_ref()
                .and_then(|c| c.expires.parse::<jiff::Timestamp>().ok())
                .map(jiff::Timestamp::as_second),
        };
        if self.disk_fingerprint.as_ref() != Some(&fp) {
            update.fingerprint = Some(fp.clone());
            self.disk_fingerprint = Some(fp);
        }
        match &mut self.background {
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
            None => store::apply(&self.store, &update)?,
        }
        self.state = Some(state);
        Ok(())
    }
}

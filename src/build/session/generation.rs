//! Publishing a build's tree as the next generation of `out/` (`emit::publish`): what changed
//! against the published catalog (reported), the spare generation brought up to date (only
//! what differs from it is written), the foreign files of `out/` carried over, then one
//! atomic switch. A reader of `out/` sees the previous complete catalog or the new one; a
//! build killed at any moment leaves `out/` untouched (issue 18, item 6).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use super::tree::{self, Plan, Writes, Written};
use super::{Event, Sink};
use crate::build::store::{OutputState, SpareRecord, State};
use crate::emit::write::{self, EmitError};
use crate::emit::{self, publish};
use crate::model::Level;
use crate::sign::PublicKey;

/// What publishing did.
pub(super) struct Published<'p, 'a> {
    /// What differs from the published catalog: written, removed, and the files of `out/`
    /// skillc did not write (carried into the new generation, left alone).
    pub changes: Writes<'p, 'a>,
    /// Every file of the new `out/`, as written.
    pub outputs: BTreeMap<String, OutputState>,
    /// The files of the spare generation (the catalog before the new one).
    pub spare: Option<BTreeMap<String, OutputState>>,
    /// The identity of the spare's folder after the switch (`None`: no spare).
    pub spare_record: Option<SpareRecord>,
    /// Files of `out/` listed (with their metadata) to check them.
    pub out_listed: usize,
    /// Files of the spare listed to check them.
    pub spare_listed: usize,
}

/// Refuses to replace, with no record of writing there, a catalog signed by another key:
/// the files of a catalog's shape are taken as skillc's only when the catalog is the build's
/// own (issue 18, item 8).
fn own_catalog(out: &Path, key: &PublicKey) -> Result<(), EmitError> {
    let (Ok(text), Ok(sig)) = (
        std::fs::read(out.join(emit::CATALOG)),
        std::fs::read_to_string(out.join(emit::CATALOG_SIG)),
    ) else {
        return Ok(());
    };
    match key.verify(&text, &sig) {
        Ok(_) => Ok(()),
        Err(_) => Err(EmitError::NotOurs(out.display().to_string(), key.key_id_hex())),
    }
}

/// What the session knows of the spare generation (`.skillc/out/<id>/spare.json`, or the
/// record kept by a watch session): trusted only while the folder is still the one recorded.
pub(super) struct SpareCheck<'r> {
    /// The record of the spare's folder, when the session has one.
    pub record: Option<&'r SpareRecord>,
    /// The record's file, removed before anything is written into the spare.
    pub record_file: &'r Path,
}

/// Makes the plan the published `out/`. `previous` is the record of the last build into this
/// output folder; `fresh`: no build completed in this process yet, so `out/` is listed (and
/// checked) rather than trusted. The spare is listed only when its record cannot be trusted
/// ([`SpareCheck`]).
///
/// # Errors
/// [`EmitError::NotOurs`], a symbolic link in `out/` or the spare, or an IO failure.
#[allow(clippy::too_many_arguments)]
pub(super) fn publish<'p, 'a>(
    plan: &'p Plan<'a>,
    previous: &State,
    out_dir: &Path,
    fresh: bool,
    spare_check: &SpareCheck<'_>,
    key: &PublicKey,
    skip: &[Level],
    sink: Sink<'_>,
) -> Result<Published<'p, 'a>, EmitError> {
    // Sub-laps of the session's "write out/" lap (`SKILLC_TIMINGS`).
    let timer = super::Timer::new();
    let listing = if fresh { Some(tree::list_out(out_dir)?) } else { None };
    let changes = tree::plan_writes(plan, &previous.outputs, listing.as_ref());
    timer.lap("out/: list and compare");
    if previous.outputs.is_empty() && out_dir.join(emit::CATALOG).is_file() {
        own_catalog(out_dir, key)?;
    }
    if changes.write.is_empty() && changes.remove.is_empty() {
        // `out/` is already this catalog: nothing to write, nothing to switch.
        sink(Event::Stage {
            stage: "write",
            total: 0,
        });
        return Ok(Published {
            changes,
            outputs: previous.outputs.clone(),
            spare: previous.spare.clone(),
            spare_record: spare_check
                .record
                .filter(|r| r.generation == previous.generation)
                .cloned(),
            out_listed: listing.as_ref().map_or(0, BTreeMap::len),
            spare_listed: 0,
        });
    }
    let spare_dir = publish::spare_of(out_dir);
    // The spare is trusted when its folder is the one recorded after the build that made it
    // the spare: same device, inode and change time, and a record of this state.
    let trusted = spare_check.record.filter(|r| {
        previous.spare.is_some()
            && r.generation == previous.generation
            && publish::identity(&spare_dir) == Some(r.identity)
    });
    probe_spare(&spare_dir, out_dir)?;
    // From here on the spare changes: its record goes first, so that a build killed while
    // writing leaves none and the next build lists the spare.
    match std::fs::remove_file(spare_check.record_file) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(EmitError::Io {
                path: spare_check.record_file.display().to_string(),
                message: e.to_string(),
            });
        }
        _ => {}
    }
    // Files of `out/` not as written (edited, replaced, gone): the two generations share
    // unchanged files as hard links, so a file edited in place in `out/` is edited in the spare
    // too — neither copy is trusted.
    let unconfirmed: BTreeSet<&String> = match &listing {
        Some(l) => previous
            .outputs
            .iter()
            .filter(|(p, prev)| !l.get(*p).is_some_and(|disk| tree::on_disk_matches(disk.as_ref(), prev)))
            .map(|(p, _)| p)
            .collect(),
        None => BTreeSet::new(),
    };
    let (mut spare_state, spare_listing) = match trusted {
        Some(_) => (previous.spare.clone().unwrap_or_default(), None),
        None => prepare_spare(&spare_dir, out_dir, previous, &unconfirmed)?,
    };
    timer.lap("out/: check or make the spare");
    for p in &unconfirmed {
        if let Some(s) = spare_state.get_mut(*p) {
            s.sha256.clear();
        }
    }
    let mut writes = tree::plan_writes(plan, &spare_state, spare_listing.as_ref());
    // The foreign files of `out/` go along into every generation. A fresh process found them
    // while checking `out/`; a watch session, which trusts its record of `out/`, lists the
    // names only (a file planted there while it runs is carried, and `verify` sees it).
    let carried: BTreeSet<String> = match &listing {
        Some(_) => changes.foreign.iter().cloned().collect(),
        None => names(out_dir)?
            .into_iter()
            .filter(|p| !plan.contains_key(p) && !previous.outputs.contains_key(p))
            .collect(),
    };
    let carried: BTreeSet<String> = carried.into_iter().filter(|p| !publish::is_temp(p)).collect();
    // The spare is skillc's: whatever it holds beyond the plan and the carried files goes
    // (temporary files of an interrupted build included). A trusted spare holds its record
    // and the foreign files carried into it; a listed one, what the listing found.
    let in_spare: Vec<String> = match (&spare_listing, trusted) {
        (Some(l), _) => l.keys().cloned().collect(),
        (None, Some(r)) => r.foreign.clone(),
        (None, None) => Vec::new(),
    };
    let planned_removal: BTreeSet<String> = writes.remove.iter().cloned().collect();
    for p in in_spare {
        if !plan.contains_key(&p) && !carried.contains(&p) && !planned_removal.contains(&p) {
            writes.remove.push(p);
        }
    }
    writes.foreign.clear();
    // Counts what this build writes into the spare, not the whole tree (a rebuild writes few
    // files).
    sink(Event::Stage {
        stage: "write",
        total: writes.write.len(),
    });
    let written = tree::write_out(&spare_dir, &writes, skip, sink)?;
    timer.lap("out/: write into the spare");
    carry(out_dir, &spare_dir, &carried);
    let switched = out_dir.exists();
    publish::publish(&spare_dir, out_dir)?;
    timer.lap("out/: carry foreign files and switch");
    let outputs = next_outputs(spare_state, plan, &writes, &written);
    // The old `out/` is the spare now: its record is what the listing of `out/` confirmed. A
    // file found changed on disk keeps no digest, so that the next build rewrites it (or
    // removes it).
    let mut spare = previous.outputs.clone();
    for p in &unconfirmed {
        if let Some(s) = spare.get_mut(*p) {
            s.sha256.clear();
        }
    }
    let spare_record = switched
        .then(|| publish::identity(&spare_dir))
        .flatten()
        .map(|identity| SpareRecord {
            generation: previous.generation + 1,
            identity,
            foreign: carried.into_iter().collect(),
        });
    Ok(Published {
        changes,
        outputs,
        spare: Some(spare),
        spare_record,
        out_listed: listing.as_ref().map_or(0, BTreeMap::len),
        spare_listed: spare_listing.as_ref().map_or(0, BTreeMap::len),
    })
}

/// The record of the spare generation the build will write into when its own record is not
/// trusted, and the listing that checks it: the one kept (its folder is there) and listed,
/// else the published files hard-linked into a new spare (the two generations share unchanged
/// files; nothing is written in place) — only those the listing of `out/` did not find
/// changed —, else nothing (a new spare, written whole). A spare with no record is
/// discarded: the build cannot tell what it holds.
fn prepare_spare(
    spare_dir: &Path,
    out_dir: &Path,
    previous: &State,
    unconfirmed: &BTreeSet<&String>,
) -> Result<(BTreeMap<String, OutputState>, Option<tree::Listing>), EmitError> {
    if let Some(s) = &previous.spare
        && spare_dir.is_dir()
    {
        return Ok((s.clone(), Some(tree::list_out(spare_dir)?)));
    }
    publish::discard(spare_dir)?;
    if previous.outputs.is_empty() || !out_dir.is_dir() {
        return Ok((BTreeMap::new(), None));
    }
    let mut state = previous.outputs.clone();
    state.retain(|p, _| !unconfirmed.contains(p));
    let files: Vec<&str> = state.keys().map(String::as_str).collect();
    let failed = publish::link_tree(out_dir, spare_dir, &files)?;
    // What could not be linked is left out of the record, so it is written.
    for f in failed {
        state.remove(&f);
    }
    Ok((state, None))
}

/// Checks that the spare can be made beside `out/` (the same file system, for the atomic
/// switch): a place that cannot hold it is reported before any work, naming the output folder
/// as the user gave it, not later as an internal path. The probe leaves no folder behind:
/// whether the spare exists is part of its state.
fn probe_spare(spare_dir: &Path, out_dir: &Path) -> Result<(), EmitError> {
    if spare_dir.exists() {
        return Ok(());
    }
    std::fs::create_dir_all(spare_dir)
        .and_then(|()| std::fs::remove_dir(spare_dir))
        .map_err(|e| EmitError::Io {
            path: out_dir.display().to_string(),
            message: format!(
                "cannot create {}, where the new catalog is written before it replaces the output folder: {e}",
                spare_dir.display()
            ),
        })
}

/// The `/`-separated paths of every file under `dir` (names only, nothing `stat`ed; none when
/// it does not exist).
fn names(dir: &Path) -> Result<Vec<String>, EmitError> {
    Ok(write::list_files(dir)
        .map_err(|e| EmitError::Io {
            path: dir.display().to_string(),
            message: e.to_string(),
        })?
        .into_iter()
        .map(|l| l.path)
        .collect())
}

/// Hard-links the foreign files of `out/` into the spare (those already there stay).
fn carry(out_dir: &Path, spare_dir: &Path, carried: &BTreeSet<String>) {
    for p in carried {
        let to = spare_dir.join(p);
        if std::fs::symlink_metadata(&to).is_ok() {
            continue;
        }
        if let Some(dir) = to.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        // A foreign file that cannot be linked (another file system, gone) is copied; one
        // that cannot be read either is lost from the new generation only — it stays in the
        // spare, never deleted by skillc.
        if std::fs::hard_link(out_dir.join(p), &to).is_err() {
            let _ = std::fs::copy(out_dir.join(p), &to);
        }
    }
}

/// The record of the new `out/`: the spare's files still planned, updated with what was
/// written.
fn next_outputs(
    mut spare: BTreeMap<String, OutputState>,
    plan: &Plan<'_>,
    writes: &Writes<'_, '_>,
    written: &HashMap<&str, Written>,
) -> BTreeMap<String, OutputState> {
    spare.retain(|path, _| plan.contains_key(path));
    spare.extend(tree::written_states(writes, written));
    spare
}

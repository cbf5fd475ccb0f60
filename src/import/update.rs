//! `skillc update [NAME|--all]` (RUNTIME.md §2; seed 001's `gaia skill update`): fetch each
//! locked source again, say what changed, and replace the skill through the same gate as an
//! import — unless the skill was edited since it was imported, which is refused (`IM010`)
//! without `force`. Whatever is replaced is first moved away by the caller's `archive`
//! (the archive root of RUNTIME.md §3), never deleted.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{ImportError, Options, Outcome, Status, acquire, install, lock, read_dir};
use crate::rules;

/// How one locked skill ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UpdateStatus {
    /// The source gives what is locked: nothing to do.
    UpToDate,
    /// Replaced by the source's new content.
    Updated,
    /// The source changed but the skill was edited since import (`IM010`), or it is not in
    /// the lock.
    Refused,
    /// The source cannot be fetched, or its new content does not pass the import's checks
    /// (the skill is left as it was).
    Failed,
    /// Archived (removed with `skillc remove` or by the curator): `--all` leaves it in the
    /// archive; only an update naming it brings it back from its source.
    Archived,
}

/// Files that differ between the skill folder and the source.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Changes {
    /// In the source, not in the folder.
    pub added: Vec<String>,
    /// In the folder, not in the source.
    pub removed: Vec<String>,
    /// In both, with other bytes.
    pub modified: Vec<String>,
}

/// The outcome of one skill.
#[derive(Clone, Debug, Serialize)]
pub struct Updated {
    /// The skill name.
    pub name: String,
    /// Its locked source.
    pub source: String,
    /// How it ended.
    pub status: UpdateStatus,
    /// What the source changed, compared with the folder.
    pub changes: Changes,
    /// The folder differs from what the import wrote.
    pub edited: bool,
    /// Where the replaced copy was archived.
    pub archived_to: Option<String>,
    /// What the source resolved to now.
    pub resolved: Option<String>,
    /// Content hash of the source now.
    pub sha256: Option<String>,
    /// The skill was archived there (its folder gone from the skills root) when the update
    /// ran: skipped by `--all`, brought back from its source when named.
    pub archived: Option<String>,
    /// Why it was refused or failed.
    pub code: Option<&'static str>,
    /// One sentence.
    pub reason: Option<String>,
}

/// Moves a skill folder into the archive; returns where it went (as shown, and the path).
pub type Archive<'a> = dyn FnMut(&Path, &Path, &str) -> Result<(String, PathBuf), String> + 'a;

type FileMap = BTreeMap<String, Vec<u8>>;

fn changes(local: &FileMap, fetched: &FileMap) -> Changes {
    let mut c = Changes::default();
    for (p, b) in fetched {
        match local.get(p) {
            None => c.added.push(p.clone()),
            Some(l) if l != b => c.modified.push(p.clone()),
            Some(_) => {}
        }
    }
    c.removed = local.keys().filter(|p| !fetched.contains_key(*p)).cloned().collect();
    c
}

fn hash(files: &FileMap) -> String {
    lock::content_sha256(files.iter().map(|(p, b)| (p.as_str(), b.as_slice())))
}

/// Updates the locked skills `names` (every locked skill when empty, except the `archived`
/// ones: skill name → where it was archived, for skills whose folder is gone). `archive(
/// skills_root, folder, name)` moves a folder away before it is replaced.
///
/// # Errors
/// [`ImportError`] when `skillc.lock` cannot be read or written.
pub fn update(
    names: &[String],
    options: &Options,
    force: bool,
    archived: &BTreeMap<String, String>,
    archive: &mut Archive<'_>,
) -> Result<Vec<Updated>, ImportError> {
    let mut locked = lock::read(&options.root)?;
    let mut outcomes = Vec::new();
    let mut dirty = false;
    let wanted: Vec<String> = if names.is_empty() {
        locked.entries.keys().cloned().collect()
    } else {
        names.to_vec()
    };
    for name in wanted {
        let Some(entry) = locked.entries.get(&name).cloned() else {
            outcomes.push(Updated {
                name: name.clone(),
                source: String::new(),
                status: UpdateStatus::Refused,
                changes: Changes::default(),
                edited: false,
                archived_to: None,
                resolved: None,
                sha256: None,
                archived: None,
                code: Some(rules::IM001.code),
                reason: Some(format!(
                    "`{name}` is not in skillc.lock: only imported skills can be updated"
                )),
            });
            continue;
        };
        let was_archived = archived.get(&name).cloned();
        if names.is_empty()
            && let Some(at) = was_archived
        {
            // `--all` never resurrects what was removed on purpose.
            outcomes.push(Updated {
                name: name.clone(),
                source: entry.source.clone(),
                status: UpdateStatus::Archived,
                changes: Changes::default(),
                edited: false,
                archived_to: None,
                resolved: None,
                sha256: None,
                reason: Some(format!(
                    "archived ({at}): not updated by --all; `skillc update {name}` fetches it again, `skillc curate restore {name}` brings the archived copy back"
                )),
                archived: Some(at),
                code: None,
            });
            continue;
        }
        let (mut outcome, new_entry) = update_one(&entry, options, force, archive);
        outcome.archived = was_archived;
        if let Some(e) = new_entry {
            locked.entries.insert(e.name.clone(), e);
            dirty = true;
        }
        outcomes.push(outcome);
    }
    if dirty {
        lock::write(&options.root, &locked)?;
    }
    Ok(outcomes)
}

fn update_one(
    entry: &lock::Entry,
    options: &Options,
    force: bool,
    archive: &mut Archive<'_>,
) -> (Updated, Option<lock::Entry>) {
    let mut here = options.clone();
    if let Some(into) = &entry.into {
        here.into = options.root.join(into);
    }
    let dir = here.into.join(&entry.name);
    let mut out = Updated {
        name: entry.name.clone(),
        source: entry.source.clone(),
        status: UpdateStatus::Failed,
        changes: Changes::default(),
        edited: false,
        archived_to: None,
        resolved: None,
        sha256: None,
        archived: None,
        code: None,
        reason: None,
    };
    let fail = |mut out: Updated, status, code: &'static str, reason: String| {
        out.status = status;
        out.code = Some(code);
        out.reason = Some(reason);
        (out, None)
    };
    let acquired = match acquire(&entry.source, options, true) {
        Ok(a) => a,
        Err((rule, reason)) => return fail(out, UpdateStatus::Failed, rule.code, reason),
    };
    let fetched: FileMap = acquired.files.iter().cloned().collect();
    let new_sha = hash(&fetched);
    out.sha256 = Some(new_sha.clone());
    out.resolved = acquired.resolved.clone();
    let local: Option<FileMap> = read_dir(&dir, options.limits)
        .ok()
        .map(|(f, _)| f.into_iter().collect());
    if let Some(l) = &local {
        out.changes = changes(l, &fetched);
        let now = hash(l);
        // What the import wrote, when recorded; else the fetched bytes themselves (a skill
        // the import did not rewrite). Anything else counts as an edit: fail safe.
        out.edited = match &entry.installed_sha256 {
            Some(installed) => *installed != now,
            None => now != entry.sha256,
        };
    }
    if new_sha == entry.sha256 && local.is_some() {
        out.status = UpdateStatus::UpToDate;
        return (out, None);
    }
    if out.edited && !force {
        let what: Vec<&str> = out
            .changes
            .modified
            .iter()
            .chain(&out.changes.removed)
            .map(String::as_str)
            .take(5)
            .collect();
        let reason = format!(
            "edited since it was imported ({}); --force archives the local copy, then updates",
            if what.is_empty() {
                "its files".to_owned()
            } else {
                what.join(", ")
            }
        );
        return fail(out, UpdateStatus::Refused, rules::IM010.code, reason);
    }
    let mut moved: Option<PathBuf> = None;
    if local.is_some() {
        match archive(&here.into, &dir, &entry.name) {
            Ok((shown, path)) => {
                out.archived_to = Some(shown);
                moved = Some(path);
            }
            Err(e) => return fail(out, UpdateStatus::Failed, rules::IM002.code, e),
        }
    }
    let installed = install(Outcome::new(&entry.source), acquired, &here);
    if installed.status != Status::Imported {
        // Put the previous copy back: an update that fails leaves the skill as it was.
        if let Some(p) = moved
            && std::fs::rename(&p, &dir).is_ok()
        {
            out.archived_to = None;
        }
        let code = installed.code.unwrap_or(rules::IM005.code);
        return fail(out, UpdateStatus::Failed, code, installed.reason.unwrap_or_default());
    }
    out.status = UpdateStatus::Updated;
    let new_entry = lock::Entry {
        sha256: new_sha,
        resolved: out.resolved.clone(),
        imported_at: options.imported_at.clone(),
        installed_sha256: super::installed_sha256(&dir, options.limits),
        ..entry.clone()
    };
    (out, Some(new_entry))
}

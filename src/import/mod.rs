//! `skillc import`: bringing skills into the project from folders, git repositories, raw
//! URLs, agentskills.io addresses and zip archives (issue 7; seed 000, "Supported sources";
//! seed 003, per-file independent import, never overwrite).
//!
//! **This module is an IO layer**, like `db::load` and `emit::write`: it reads local sources,
//! runs `git`, makes HTTP requests, keeps the download cache and writes into the skills root
//! and `skillc.lock`. Its pure parts live in their own files and do no IO: [`spec`] (what a
//! SOURCE names), [`archive`] (zip entry validation and layouts), [`edit`] (the tier reset
//! and missing-script check) and the rendering, parsing and hashing of [`lock`].
//!
//! Every source is independent: it ends imported, skipped (with why) or failed (with why), and
//! one failing does not stop the others. A skill is fetched, read into memory under the
//! configured limits, staged in a temporary folder inside the destination's file system,
//! checked there with the `check` machinery ([`validate_staged`]), then renamed into place:
//! an interrupted import leaves no half-copied skill (a leftover stage sits under
//! `<into>/.skillc/`, which skill discovery never searches). [`acquire`] fetches and reads a
//! source; [`install`] checks, stages and renames it into place.

mod acquire;
pub mod archive;
pub mod edit;
pub mod fetch;
pub mod files;
mod install;
pub mod lock;
pub mod spec;
pub mod update;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::db::{Db, Settings, load};
use crate::diag::Rule;
use crate::diag::{Diagnostic, Severity};
use crate::model::FindingSeverity;
use crate::model::Limits;
use crate::model::Mode;
use crate::rules;
use crate::skill::validate::{self, Context};
use acquire::{acquire, read_dir};
use fetch::{Cache, CacheUse};
use install::install;
use spec::Spec;

/// Everything an import needs besides its sources.
#[derive(Clone, Debug)]
pub struct Options {
    /// The skills root the skills are written into (an existing or creatable folder).
    pub into: PathBuf,
    /// `into` as recorded in `skillc.lock` (relative to the project root when inside it),
    /// when it is not the project's skills root; `--locked` installs there again.
    pub into_recorded: Option<String>,
    /// The project root: where `skillc.lock` lives and what local sources are recorded
    /// relative to.
    pub root: PathBuf,
    /// The project's skills roots (`[pipeline] skills`, absolute; the first is where an
    /// import goes by default): a skill of the same name in any of them, or recorded in
    /// `skillc.lock` at another folder, is never relabelled by an import elsewhere
    /// (RUNTIME.md §2: a collision is skipped, `IM006`).
    pub skills_roots: Vec<PathBuf>,
    /// Size and count limits (`pipeline.toml` `[limits]`).
    pub limits: Limits,
    /// Security findings at or above this severity refuse a skill (`pipeline.toml`
    /// `[scan] fail_on`), as they reject it in `build`.
    pub fail_on: FindingSeverity,
    /// The download cache; `None` when no cache folder can be found (remote sources fail).
    pub cache: Option<Cache>,
    /// How much a git fetch may bring in (`pipeline.toml` `[import]`).
    pub git_bounds: fetch::Bounds,
    /// The base `agentskills.io` addresses resolve against ([`spec::agentskills_repository`]).
    pub agentskills_base: String,
    /// RFC 3339 time recorded in the lock file.
    pub imported_at: String,
}

/// How one source ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Written into the skills root.
    Imported,
    /// Not written, by design (a skill of that name exists).
    Skipped,
    /// Not written because something is wrong with the source.
    Failed,
}

/// A remark about an imported skill (tier reset, missing scripts).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Note {
    /// The rule code (`IM007`, `IM008`).
    pub code: &'static str,
    /// What happened.
    pub message: String,
}

/// The outcome of one source.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// The SOURCE as given.
    pub source: String,
    /// Imported, skipped or failed.
    pub status: Status,
    /// The skill name, once known.
    pub name: Option<String>,
    /// Where the skill was (or would have been) written.
    pub path: Option<String>,
    /// The git commit (or repository and commit) the source resolved to.
    pub resolved: Option<String>,
    /// [`lock::content_sha256`] of the fetched files.
    pub sha256: Option<String>,
    /// How the download cache was used (remote sources only).
    pub cache: Option<CacheUse>,
    /// The rule code of a skip or failure.
    pub code: Option<&'static str>,
    /// Why it was skipped or failed.
    pub reason: Option<String>,
    /// Remarks about an imported skill.
    pub notes: Vec<Note>,
    /// The `check` diagnostics of a skill that failed validation.
    pub diagnostics: Vec<Diagnostic>,
}

impl Outcome {
    fn new(source: &str) -> Outcome {
        Outcome {
            source: source.to_owned(),
            status: Status::Failed,
            name: None,
            path: None,
            resolved: None,
            sha256: None,
            cache: None,
            code: None,
            reason: None,
            notes: Vec::new(),
            diagnostics: Vec::new(),
        }
    }

    fn end(mut self, status: Status, rule: &'static Rule, reason: impl Into<String>) -> Outcome {
        self.status = status;
        self.code = Some(rule.code);
        self.reason = Some(reason.into());
        self
    }
}

/// A failure of the whole command (the lock file), not of one source.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// `skillc.lock` cannot be read or written.
    #[error(transparent)]
    Lock(#[from] lock::LockError),
}

/// A skill read into memory: its files (path relative to the skill folder, bytes), what the
/// source resolved to, and how the cache was used.
struct Acquired {
    files: Vec<(String, Vec<u8>)>,
    /// The files to write with execute permission (as the source had them).
    executable: BTreeSet<String>,
    resolved: Option<String>,
    cache: Option<CacheUse>,
    /// A lone SKILL.md (local file or raw URL): its scripts cannot have come with it.
    lone: bool,
}

/// A skill's files (path relative to the skill folder, bytes) and the executable ones.
type Files = (Vec<(String, Vec<u8>)>, BTreeSet<String>);

/// Why acquiring failed: the rule and the message.
type Failure = (&'static Rule, String);

/// Imports `sources` into `options.into`, each independently, then records the imported ones
/// in `skillc.lock`.
///
/// # Errors
/// [`ImportError`] when `skillc.lock` cannot be read (then nothing is written) or written.
pub fn import(sources: &[String], options: &Options) -> Result<Vec<Outcome>, ImportError> {
    let mut lock_file = lock::read(&options.root)?;
    let mut outcomes = Vec::new();
    let mut entries = Vec::new();
    for source in sources {
        let mut outcome = Outcome::new(source);
        let acquired = match acquire(source, options, false) {
            Ok(a) => a,
            Err((rule, reason)) => {
                outcomes.push(outcome.end(Status::Failed, rule, reason));
                continue;
            }
        };
        outcome.resolved = acquired.resolved.clone();
        outcome.cache = acquired.cache;
        let sha = lock::content_sha256(acquired.files.iter().map(|(p, b)| (p.as_str(), b.as_slice())));
        outcome.sha256 = Some(sha.clone());
        let outcome = install(outcome, acquired, options);
        if outcome.status == Status::Imported
            && let Some(name) = &outcome.name
        {
            entries.push(lock::Entry {
                name: name.clone(),
                source: lock_source(source, &options.root),
                resolved: outcome.resolved.clone(),
                sha256: sha,
                imported_at: options.imported_at.clone(),
                into: options.into_recorded.clone(),
                installed_sha256: installed_sha256(&options.into.join(name), options.limits),
            });
        }
        outcomes.push(outcome);
    }
    if !entries.is_empty() {
        for e in entries {
            lock_file.entries.insert(e.name.clone(), e);
        }
        lock::write(&options.root, &lock_file)?;
    }
    Ok(outcomes)
}

/// `import --locked`: fetches every source of `skillc.lock` again (bypassing the cache's
/// age) and compares its content hash with the locked one. When any source fails or
/// drifted, every outcome is returned and nothing is written; otherwise the locked skills
/// missing from the skills root are installed (present ones are skipped). The lock file is
/// not changed.
///
/// # Errors
/// [`ImportError`] when `skillc.lock` cannot be read.
pub fn import_locked(options: &Options) -> Result<Vec<Outcome>, ImportError> {
    let lock_file = lock::read(&options.root)?;
    let mut fetched = Vec::new();
    let mut ok = true;
    for entry in lock_file.entries.values() {
        let mut outcome = Outcome::new(&entry.source);
        outcome.name = Some(entry.name.clone());
        match acquire(&entry.source, options, true) {
            Err((rule, reason)) => {
                ok = false;
                fetched.push((outcome.end(Status::Failed, rule, reason), None));
            }
            Ok(acquired) => {
                let sha = lock::content_sha256(acquired.files.iter().map(|(p, b)| (p.as_str(), b.as_slice())));
                outcome.resolved = acquired.resolved.clone();
                outcome.cache = acquired.cache;
                outcome.sha256 = Some(sha.clone());
                let named = skill_name_of(&acquired.files);
                if sha != entry.sha256 {
                    ok = false;
                    let reason = format!(
                        "content drift: skillc.lock has sha256 {}, the source now has {sha}",
                        entry.sha256
                    );
                    fetched.push((outcome.end(Status::Failed, &rules::IM009, reason), None));
                } else if named.as_deref() != Some(entry.name.as_str()) {
                    // The lock was edited by hand: it would install another name than it says.
                    ok = false;
                    let reason = format!(
                        "skillc.lock names this skill `{}`, but its SKILL.md names it `{}`",
                        entry.name,
                        named.as_deref().unwrap_or("(nothing)")
                    );
                    fetched.push((outcome.end(Status::Failed, &rules::IM009, reason), None));
                } else {
                    fetched.push((outcome, Some(acquired)));
                }
            }
        }
    }
    if !ok {
        // Nothing is written: the sources that matched are reported as not installed.
        return Ok(fetched
            .into_iter()
            .map(|(o, acquired)| match acquired {
                Some(_) => o.end(
                    Status::Skipped,
                    &rules::IM009,
                    "matches skillc.lock, but not installed because another locked source failed",
                ),
                None => o,
            })
            .collect());
    }
    let entries: Vec<&lock::Entry> = lock_file.entries.values().collect();
    Ok(fetched
        .into_iter()
        .zip(entries)
        .filter_map(|((o, acquired), entry)| {
            // Where it was imported the first time.
            let mut here = options.clone();
            if let Some(into) = &entry.into {
                here.into = options.root.join(into);
            }
            acquired.map(|a| install(o, a, &here))
        })
        .collect())
}

/// [`lock::content_sha256`] of a skill folder as it is now (`None` when it cannot be read).
pub fn installed_sha256(dir: &Path, limits: Limits) -> Option<String> {
    let (files, _) = read_dir(dir, limits).ok()?;
    Some(lock::content_sha256(
        files.iter().map(|(p, b)| (p.as_str(), b.as_slice())),
    ))
}

/// The `name` a skill's SKILL.md (or `skill.md`) gives, when readable.
fn skill_name_of(files: &[(String, Vec<u8>)]) -> Option<String> {
    let (_, bytes) = files
        .iter()
        .find(|(p, _)| p == "SKILL.md")
        .or_else(|| files.iter().find(|(p, _)| p == "skill.md"))?;
    let ctx = Context {
        dir_name: "",
        mode: Mode::Default,
    };
    validate::analyze("SKILL.md", bytes, &ctx).model.name.map(|n| n.value)
}

/// The source as recorded in the lock file: local paths relative to the project root (with
/// `..` when outside it: the lock never names a folder of this machine); anything else as
/// given.
fn lock_source(source: &str, root: &Path) -> String {
    match spec::parse(source) {
        Ok(Spec::Local(p)) => {
            let abs = std::fs::canonicalize(&p).unwrap_or(p);
            let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
            crate::util::relative_slashed(&abs, &root)
        }
        _ => source.trim().to_owned(),
    }
}

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
//! `<into>/.skillc/`, which skill discovery never searches).

pub mod archive;
pub mod edit;
pub mod fetch;
pub mod files;
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
use fetch::{Cache, CacheUse};
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
    /// Size and count limits (`pipeline.toml` `[limits]`).
    pub limits: Limits,
    /// Security findings at or above this severity refuse a skill (`pipeline.toml`
    /// `[scan] fail_on`), as they reject it in `build`.
    pub fail_on: FindingSeverity,
    /// The download cache; `None` when no cache folder can be found (remote sources fail).
    pub cache: Option<Cache>,
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

/// The source as recorded in the lock file: local paths relative to the project root when
/// inside it, else absolute; anything else as given.
fn lock_source(source: &str, root: &Path) -> String {
    match spec::parse(source) {
        Ok(Spec::Local(p)) => {
            let abs = std::fs::canonicalize(&p).unwrap_or(p);
            let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
            match abs.strip_prefix(&root) {
                Ok(rel) => rel.to_string_lossy().replace('\\', "/"),
                Err(_) => abs.to_string_lossy().into_owned(),
            }
        }
        _ => source.trim().to_owned(),
    }
}

/// Fetches and reads a source into memory. `locked` resolves local paths against the
/// project root (as the lock records them) and always fetches remote sources again.
fn acquire(source: &str, options: &Options, locked: bool) -> Result<Acquired, Failure> {
    let spec = spec::parse(source).map_err(|e| (&rules::IM001, e.to_string()))?;
    let limits = options.limits;
    let zip_limits = archive::ArchiveLimits {
        entries: limits.files_per_skill,
        entry_bytes: limits.support_file_bytes.max(limits.skill_md_bytes),
        total_bytes: archive::MAX_TOTAL_BYTES,
    };
    let cache = || -> Result<Cache, Failure> {
        let mut c = options.cache.clone().ok_or((
            &rules::IM002,
            "no cache folder for remote sources: set XDG_CACHE_HOME or HOME".to_owned(),
        ))?;
        c.refresh |= locked;
        Ok(c)
    };
    let fetch_err = |e: fetch::FetchError| (&rules::IM002, e.0);
    match spec {
        Spec::Local(p) => {
            let p = if locked && p.is_relative() {
                options.root.join(p)
            } else {
                p
            };
            local(&p, limits, zip_limits)
        }
        Spec::Git { url, reference, path } => git(&cache()?, &url, reference.as_deref(), &path, limits),
        Spec::AgentSkills { author, skill } => {
            let Spec::Git { url, reference, path } =
                spec::agentskills_repository(&options.agentskills_base, &author, &skill)
            else {
                return Err((
                    &rules::IM001,
                    "agentskills.io address did not resolve to a repository".into(),
                ));
            };
            let mut a = git(&cache()?, &url, reference.as_deref(), &path, limits)?;
            a.resolved = a.resolved.map(|c| format!("{url}@{c}"));
            Ok(a)
        }
        Spec::Raw(url) => {
            let f = fetch::http(&cache()?, &url, limits.skill_md_bytes).map_err(fetch_err)?;
            let bytes =
                std::fs::read(&f.path).map_err(|e| (&rules::IM002, format!("cache {}: {e}", f.path.display())))?;
            Ok(Acquired {
                files: vec![("SKILL.md".into(), bytes)],
                executable: BTreeSet::new(),
                resolved: None,
                cache: Some(f.cache),
                lone: true,
            })
        }
        Spec::RemoteZip(url) => {
            let f = fetch::http(&cache()?, &url, archive::MAX_TOTAL_BYTES).map_err(fetch_err)?;
            let bytes =
                std::fs::read(&f.path).map_err(|e| (&rules::IM002, format!("cache {}: {e}", f.path.display())))?;
            let x = archive::read_skill(&bytes, zip_limits).map_err(|e| (&rules::IM004, e.to_string()))?;
            Ok(Acquired {
                files: x.files,
                executable: x.executable,
                resolved: None,
                cache: Some(f.cache),
                lone: false,
            })
        }
    }
}

fn git(cache: &Cache, url: &str, reference: Option<&str>, path: &str, limits: Limits) -> Result<Acquired, Failure> {
    let f = fetch::git(cache, url, reference).map_err(|e| (&rules::IM002, e.0))?;
    let dir = if path.is_empty() {
        f.path.clone()
    } else {
        f.path.join(path)
    };
    if !dir.is_dir() {
        return Err((
            &rules::IM003,
            format!(
                "the repository has no folder `{path}` at {}",
                f.resolved.as_deref().unwrap_or("its HEAD")
            ),
        ));
    }
    let (files, executable) =
        read_dir(&dir, limits).map_err(|(rule, msg)| match (rule.code == rules::IM003.code, path.is_empty()) {
            (true, true) => (
                rule,
                "no SKILL.md at the repository root; name the skill's folder as `URL#ref:path`".to_owned(),
            ),
            (true, false) => (rule, format!("no SKILL.md in the repository's `{path}`")),
            _ => (rule, msg),
        })?;
    Ok(Acquired {
        files,
        executable,
        resolved: f.resolved,
        cache: Some(f.cache),
        lone: false,
    })
}

fn local(p: &Path, limits: Limits, zip_limits: archive::ArchiveLimits) -> Result<Acquired, Failure> {
    let meta = std::fs::metadata(p).map_err(|e| {
        let why = if e.kind() == std::io::ErrorKind::NotFound {
            "no such file or folder".to_owned()
        } else {
            e.to_string()
        };
        (&rules::IM001, why)
    })?;
    let read_capped = |cap: u64| -> Result<Vec<u8>, Failure> {
        // A FIFO or a device would block or never end: only regular files are read.
        if !meta.is_file() {
            return Err((
                &rules::IM001,
                format!("{} is not a regular file (a FIFO, socket or device)", p.display()),
            ));
        }
        if meta.len() > cap {
            return Err((
                &rules::IM005,
                format!("{} is {} bytes; the limit is {cap} bytes", p.display(), meta.len()),
            ));
        }
        std::fs::read(p).map_err(|e| (&rules::IM001, format!("{}: {e}", p.display())))
    };
    let file_name = p
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if meta.is_dir() {
        let (files, executable) = read_dir(p, limits)?;
        Ok(Acquired {
            files,
            executable,
            resolved: None,
            cache: None,
            lone: false,
        })
    } else if file_name.ends_with(".zip") {
        let bytes = read_capped(archive::MAX_TOTAL_BYTES)?;
        let x = archive::read_skill(&bytes, zip_limits).map_err(|e| (&rules::IM004, e.to_string()))?;
        Ok(Acquired {
            files: x.files,
            executable: x.executable,
            resolved: None,
            cache: None,
            lone: false,
        })
    } else if file_name.ends_with(".md") {
        let bytes = read_capped(limits.skill_md_bytes)?;
        Ok(Acquired {
            files: vec![("SKILL.md".into(), bytes)],
            executable: BTreeSet::new(),
            resolved: None,
            cache: None,
            lone: true,
        })
    } else {
        Err((
            &rules::IM001,
            format!("{} is not a skill folder, a SKILL.md or a .zip archive", p.display()),
        ))
    }
}

/// Reads a skill folder into memory: every regular file (version-control and dependency
/// folders skipped, as `db::load` does), under the limits. A symbolic link refuses the source.
/// Returns the files and the paths of those with an execute bit.
fn read_dir(dir: &Path, limits: Limits) -> Result<Files, Failure> {
    let mut files = Vec::new();
    let mut executable = BTreeSet::new();
    let walker = walkdir::WalkDir::new(dir)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            e.depth() == 0
                || !e.file_type().is_dir()
                || !crate::model::SKIPPED_DIRS.contains(&e.file_name().to_string_lossy().as_ref())
        });
    for entry in walker {
        let entry = entry.map_err(|e| (&rules::IM001, e.to_string()))?;
        if entry.file_type().is_dir() {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(dir)
            .unwrap_or(entry.path())
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        if entry.path_is_symlink() {
            return Err((
                &rules::IM004,
                format!("`{rel}` is a symbolic link; imports copy regular files only"),
            ));
        }
        if !entry.file_type().is_file() {
            return Err((&rules::IM004, format!("`{rel}` is not a regular file")));
        }
        if files.len() >= limits.files_per_skill {
            return Err((
                &rules::IM005,
                format!(
                    "the skill holds more than {} files (limit `files_per_skill`)",
                    limits.files_per_skill
                ),
            ));
        }
        let cap = if rel == "SKILL.md" {
            limits.skill_md_bytes
        } else {
            limits.support_file_bytes
        };
        let meta = entry.metadata().ok();
        let size = meta.as_ref().map(|m| m.len()).unwrap_or(0);
        if meta.as_ref().is_some_and(is_executable) {
            executable.insert(rel.clone());
        }
        if size > cap {
            return Err((
                &rules::IM005,
                format!("`{rel}` is {size} bytes; the limit is {cap} bytes"),
            ));
        }
        let bytes = std::fs::read(entry.path()).map_err(|e| (&rules::IM001, format!("{rel}: {e}")))?;
        files.push((rel, bytes));
    }
    if !files.iter().any(|(p, _)| p == "SKILL.md" || p == "skill.md") {
        return Err((&rules::IM003, format!("no SKILL.md in {}", dir.display())));
    }
    Ok((files, executable))
}

#[cfg(unix)]
fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_: &std::fs::Metadata) -> bool {
    false
}

/// Names, checks and writes an acquired skill; the outcome says how it ended.
fn install(mut outcome: Outcome, mut acquired: Acquired, options: &Options) -> Outcome {
    let Some(md_index) = acquired
        .files
        .iter()
        .position(|(p, _)| p == "SKILL.md")
        .or_else(|| acquired.files.iter().position(|(p, _)| p == "skill.md"))
    else {
        return outcome.end(Status::Failed, &rules::IM003, "no SKILL.md");
    };
    let ctx = Context {
        dir_name: "",
        mode: Mode::Default,
    };
    let analysis = validate::analyze("SKILL.md", &acquired.files[md_index].1, &ctx);
    let Some(name) = analysis.model.name.as_ref().map(|n| n.value.clone()) else {
        let why = analysis
            .diagnostics
            .iter()
            .find(|d| d.severity == Severity::Error)
            .map(|d| format!("{}: {}", d.code(), d.message))
            .unwrap_or_else(|| "no `name`".into());
        outcome.diagnostics = analysis.diagnostics.clone();
        return outcome.end(
            Status::Failed,
            &rules::IM003,
            format!("SKILL.md has no readable name ({why})"),
        );
    };
    outcome.name = Some(name.clone());
    if crate::translate::provider_of(&name).is_none() {
        return outcome.end(
            Status::Failed,
            &rules::IM003,
            format!("skill name `{name}` cannot name a folder (ASCII `[a-z0-9-]`, not a device name)"),
        );
    }
    let dest = options.into.join(&name);
    let shown = dest
        .strip_prefix(&options.root)
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or_else(|_| dest.display().to_string());
    outcome.path = Some(shown.clone());
    let exists = || format!("a skill named `{name}` already exists at {shown}; imports never overwrite");
    if dest.symlink_metadata().is_ok() {
        return outcome.end(Status::Skipped, &rules::IM006, exists());
    }
    // A `skillc export` moved extensions under `metadata` as strings: put them back, so that
    // an exported skill imports as the skill it was (and its tier claim is seen below).
    if let Some(restored) = std::str::from_utf8(&acquired.files[md_index].1)
        .ok()
        .and_then(crate::export::restore_skill_md)
    {
        acquired.files[md_index].1 = restored.into_bytes();
    }
    // The tier claim.
    let mut reset = false;
    match edit::reset_tier(&acquired.files[md_index].1) {
        Ok(edit::TierReset::Unchanged) => {}
        Ok(edit::TierReset::Reset { bytes, claimed }) => {
            acquired.files[md_index].1 = bytes;
            reset = true;
            outcome.notes.push(Note {
                code: rules::IM008.code,
                message: format!("security_tier `{claimed}` reset to `experimental`: imported skills start unverified"),
            });
        }
        Err(e) => return outcome.end(Status::Failed, &rules::IM008, e),
    }
    if acquired.lone {
        let text = String::from_utf8_lossy(&acquired.files[md_index].1).into_owned();
        let body = analysis.body.clone().and_then(|r| text.get(r)).unwrap_or_default();
        let missing = edit::missing_scripts(body, acquired.files.iter().map(|(p, _)| p.as_str()));
        if !missing.is_empty() {
            outcome.notes.push(Note {
                code: rules::IM007.code,
                message: format!(
                    "the body runs {} but only SKILL.md was imported; import the skill's folder or repository instead",
                    missing.join(", ")
                ),
            });
        }
    }
    // Stage, check, move into place.
    let stage_parent = options.into.join(".skillc");
    let result = stage_and_commit(
        &acquired.files,
        &acquired.executable,
        &name,
        &stage_parent,
        &dest,
        (options.limits, options.fail_on),
        reset,
    );
    let _ = std::fs::remove_dir(&stage_parent);
    match result {
        Ok(notes) => {
            outcome.notes.extend(notes);
            outcome.status = Status::Imported;
            outcome
        }
        Err(Commit::Invalid(diags)) => {
            let first = diags
                .iter()
                .find(|d| d.severity == Severity::Error)
                .map(|d| format!("{}: {}", d.code(), d.message))
                .unwrap_or_default();
            outcome.diagnostics = diags;
            outcome.end(
                Status::Failed,
                &rules::IM005,
                format!("the skill does not pass `skillc check` ({first})"),
            )
        }
        Err(Commit::Exists) => outcome.end(Status::Skipped, &rules::IM006, exists()),
        Err(Commit::Io(e)) => outcome.end(Status::Failed, &rules::IM002, e),
    }
}

enum Commit {
    Invalid(Vec<Diagnostic>),
    Exists,
    Io(String),
}

fn stage_and_commit(
    files: &[(String, Vec<u8>)],
    executable: &BTreeSet<String>,
    name: &str,
    stage_parent: &Path,
    dest: &Path,
    (limits, fail_on): (Limits, FindingSeverity),
    reset: bool,
) -> Result<Vec<Note>, Commit> {
    let io = |p: &Path| {
        let p = p.display().to_string();
        move |e: std::io::Error| Commit::Io(format!("{p}: {e}"))
    };
    std::fs::create_dir_all(stage_parent).map_err(io(stage_parent))?;
    let stage = tempfile::Builder::new()
        .prefix("import-")
        .tempdir_in(stage_parent)
        .map_err(io(stage_parent))?;
    let staged = stage.path().join(name);
    for (rel, bytes) in files {
        let path = staged.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::write(&path, bytes).map_err(io(&path))?;
        #[cfg(unix)]
        if executable.contains(rel) {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).map_err(io(&path))?;
        }
    }
    #[cfg(not(unix))]
    let _ = executable;
    let mut diags = validate_staged(stage.path(), name, limits, fail_on).map_err(Commit::Io)?;
    let mut notes = Vec::new();
    if reset {
        // Permissions the claimed tier allowed and `experimental` does not: kept, reported;
        // `build` rejects the skill until a reviewer raises the tier.
        diags.retain(|d| {
            if d.rule.code == rules::SK052.code {
                notes.push(Note {
                    code: rules::IM008.code,
                    message: format!(
                        "{} ({}); raise `security_tier` after review",
                        d.message,
                        rules::SK052.code
                    ),
                });
                false
            } else {
                true
            }
        });
    }
    if diags.iter().any(|d| d.severity == Severity::Error) {
        return Err(Commit::Invalid(diags));
    }
    if dest.symlink_metadata().is_ok() {
        return Err(Commit::Exists);
    }
    std::fs::rename(&staged, dest).map_err(io(dest))?;
    Ok(notes)
}

/// Checks a staged skill before it enters the skills root: the skill `name` in the folder
/// `stage` goes through `db::load`, `skill::check_skill` exactly as `skillc check` would
/// (parse, fields, limits, links), and the security scan (`scan::scan_skill`), whose findings
/// at or above `fail_on` become `SC000` errors as they reject the skill in `build`. Returns
/// every diagnostic; an error refuses the import.
///
/// This is the one place every imported skill passes before it is written.
///
/// # Errors
/// A message when the staged copy cannot be read back.
pub fn validate_staged(
    stage: &Path,
    name: &str,
    limits: Limits,
    fail_on: FindingSeverity,
) -> Result<Vec<Diagnostic>, String> {
    let found = load::discover(stage, &[PathBuf::from(name)], &[]).map_err(|e| e.to_string())?;
    let mut diags = found.problems;
    let read = load::read(found.skills, limits, true);
    let db = Db::default();
    let settings = Settings::new(&db, Mode::Default, limits);
    for skill in load::to_inputs(&db, read) {
        diags.extend(
            crate::skill::check_skill(&db, skill, settings)
                .diagnostics
                .iter()
                .cloned(),
        );
        let scan = crate::scan::scan_skill(&db, skill, settings);
        for f in scan.findings.iter().filter(|f| f.severity >= fail_on) {
            let pos = crate::diag::Pos {
                offset: 0,
                line: f.line,
                column: f.column,
            };
            diags.push(Diagnostic::new(
                &rules::SC000,
                f.file.clone(),
                crate::diag::Span::at(pos),
                format!(
                    "security finding {} ({}): {}",
                    f.rule.code,
                    f.severity,
                    crate::scan::unicode::escape_invisible(&f.reason)
                ),
            ));
        }
    }
    Ok(diags)
}

//! The curator (`skillc curate`; RUNTIME.md §3, seed 002): a rare, bounded maintenance pass
//! over **agent-written** skills — archive what is stale, consolidate near-duplicates, patch
//! bodies that keep failing — never deleting, never touching what a person wrote or imported,
//! every action a `skill.curated` event, every model call inside a cost cap.
//!
//! **An IO layer** with pure parts: [`select`] (the plan), [`budget`] (money and estimates),
//! [`diff`] (the edit's hunk) and [`config`] do no IO. The rest moves folders ([`store`]),
//! writes the state ([`state`]) through a journal ([`journal`]), calls the model ([`model`])
//! and appends events (`crate::events`).
//!
//! Library API (what `skillc serve` and `skillc playbook` use): [`Project`], [`status`],
//! [`run`] with [`RunOptions`], [`pin`], [`unpin`], [`archive`], [`restore`],
//! [`list_archived`] and [`record_load`]. Every function takes `now`; the CLI reads it from
//! `SKILLC_NOW` when set (tests), else the clock.

pub mod budget;
pub mod config;
pub mod diff;
pub mod journal;
pub(crate) mod manual;
pub mod model;
mod prompts;
pub(crate) mod run;
pub mod select;
pub mod state;
mod status;
pub mod store;

use std::path::{Path, PathBuf};

use jiff::Timestamp;

pub use manual::{archive, list_archived, pin, restore, unpin};
pub use run::{RunOptions, RunReport, StatusReport, run, status};

use crate::db::load;
use crate::events::{self, Event, EventError, Kind};
use crate::model::Mode;
use crate::skill::validate::{self, Context};
use config::CuratorConfig;
use select::SkillView;
use state::{Loaded, State};

/// What the curator needs to know about a project (built from `pipeline.toml`: `[pipeline]
/// skills`, `out`, `[limits] skill_md_bytes` and `[curator]`).
#[derive(Clone, Debug)]
pub struct Project {
    /// The project root (where `pipeline.toml` and `.skillc/` are).
    pub root: PathBuf,
    /// The skills roots (`[pipeline] skills`), relative to `root` or absolute.
    pub skills: Vec<PathBuf>,
    /// The output folder (never searched for skills).
    pub out: PathBuf,
    /// Largest SKILL.md read or written, in bytes (`[limits] skill_md_bytes`).
    pub skill_md_bytes: u64,
    /// `[curator]`.
    pub curator: CuratorConfig,
}

/// Why a curator command could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum CurateError {
    /// No such skill (or no such archive or snapshot).
    #[error("{0}")]
    NotFound(String),
    /// Refused: pinned, the name taken, the archive gone, the state kept aside, …
    #[error("{0}")]
    Refused(String),
    /// Another run holds a skills root's lock.
    #[error("{0}")]
    Busy(String),
    /// The state cannot be used.
    #[error(transparent)]
    State(#[from] state::StateError),
    /// The file system (or the event log) failed.
    #[error("{0}")]
    Io(String),
}

/// A skills root and its archive root.
#[derive(Clone, Debug)]
pub(crate) struct Root {
    /// The folder.
    pub dir: PathBuf,
    /// As shown.
    pub shown: String,
    /// `<root>-archive`, unless it would fall inside a skills root or `out/`.
    pub archive: Result<PathBuf, String>,
}

/// A skill found on disk.
#[derive(Clone, Debug)]
pub(crate) struct Found {
    /// What selection sees.
    pub view: SkillView,
    /// Its folder.
    pub dir: PathBuf,
    /// Its SKILL.md.
    pub md: PathBuf,
    /// The SKILL.md text, when readable.
    pub text: Option<String>,
    /// Byte offset of the body in `text`.
    pub body_start: Option<usize>,
    /// Index of its root.
    pub root: usize,
}

impl Found {
    /// The body (after the frontmatter), or the whole text when no frontmatter was found.
    pub fn body(&self) -> &str {
        let t = self.text.as_deref().unwrap_or("");
        t.get(self.body_start.unwrap_or(0)..).unwrap_or("")
    }

    /// `version_before`/`after` of an event: the first 16 hex digits of the body's SHA-256.
    pub fn version(body: &str) -> String {
        crate::util::sha256(body.as_bytes())[..16].to_owned()
    }
}

pub(crate) fn roots(project: &Project) -> Vec<Root> {
    let dirs: Vec<PathBuf> = project.skills.iter().map(|r| project.root.join(r)).collect();
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let out = canon(&project.root.join(&project.out));
    dirs.iter()
        .map(|dir| {
            let archive = match store::archive_root(dir) {
                None => Err(format!(
                    "{} has no archive root (it is the file-system root)",
                    dir.display()
                )),
                Some(a) => {
                    let ca = canon(a.parent().unwrap_or(&a)).join(a.file_name().unwrap_or_default());
                    if let Some(inside) = dirs.iter().find(|d| ca.starts_with(canon(d))) {
                        Err(format!(
                            "its archive root {} would be inside the skills root {}",
                            a.display(),
                            inside.display()
                        ))
                    } else if ca.starts_with(&out) {
                        Err(format!("its archive root {} would be inside out/", a.display()))
                    } else {
                        Ok(a)
                    }
                }
            };
            Root {
                dir: dir.clone(),
                shown: store::shown(&project.root, dir),
                archive,
            }
        })
        .collect()
}

/// Finds the skills of every root, with what selection needs.
pub(crate) fn discover(project: &Project, roots: &[Root]) -> Result<Vec<Found>, CurateError> {
    let mut found = Vec::new();
    let exclude = [project.root.join(&project.out)];
    for (i, root) in roots.iter().enumerate() {
        if !root.dir.is_dir() {
            continue;
        }
        let d = load::discover(Path::new(""), std::slice::from_ref(&root.dir), &exclude)
            .map_err(|e| CurateError::Io(e.to_string()))?;
        for s in d.skills {
            let md = s.dir.join(s.skill_md.as_deref().unwrap_or("SKILL.md"));
            let folder = s
                .dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let bytes = std::fs::metadata(&md)
                .ok()
                .filter(|m| m.len() <= project.skill_md_bytes)
                .and_then(|_| std::fs::read(&md).ok());
            let ctx = Context {
                dir_name: &folder,
                mode: Mode::Default,
            };
            let analysis = bytes.as_deref().map(|b| validate::analyze("SKILL.md", b, &ctx));
            let text = bytes.and_then(|b| String::from_utf8(b).ok());
            let name = analysis
                .as_ref()
                .and_then(|a| a.model.name.as_ref().map(|n| n.value.clone()))
                .unwrap_or_else(|| folder.clone());
            let description = analysis
                .as_ref()
                .and_then(|a| a.model.description.as_ref().map(|d| d.value.clone()))
                .unwrap_or_default();
            let blocked = if text.is_none() {
                Some("its SKILL.md cannot be read (too large or not UTF-8)".to_owned())
            } else if s.dir == root.dir || std::fs::canonicalize(&s.dir).ok() == std::fs::canonicalize(&root.dir).ok() {
                Some("it is the skills root itself".to_owned())
            } else {
                root.archive.as_ref().err().cloned()
            };
            found.push(Found {
                view: SkillView {
                    name,
                    root: root.shown.clone(),
                    path: store::shown(&project.root, &s.dir),
                    description,
                    blocked,
                },
                body_start: analysis.and_then(|a| a.body.map(|b| b.start)),
                dir: s.dir,
                md,
                text,
                root: i,
            });
        }
    }
    // A folder holding other skills cannot be moved alone; a name used twice is ambiguous.
    // Sorted by components, a folder's descendants come right after it (linear, not
    // quadratic: a 10k-skill catalog is annotated in milliseconds).
    let dirs: std::collections::BTreeSet<PathBuf> = found.iter().map(|f| f.dir.clone()).collect();
    let mut names: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for f in &found {
        *names.entry(f.view.name.clone()).or_default() += 1;
    }
    for f in &mut found {
        if f.view.blocked.is_some() {
            continue;
        }
        let nested = dirs
            .range::<PathBuf, _>((std::ops::Bound::Excluded(&f.dir), std::ops::Bound::Unbounded))
            .next()
            .is_some_and(|d| d.starts_with(&f.dir));
        if nested {
            f.view.blocked = Some("it holds nested skills".into());
        } else if names.get(&f.view.name).is_some_and(|&n| n > 1) {
            f.view.blocked = Some(format!("more than one skill is named `{}`", f.view.name));
        }
    }
    found.sort_by(|a, b| (&a.view.name, &a.view.path).cmp(&(&b.view.name, &b.view.path)));
    Ok(found)
}

/// The events the curator reads: the project's log, then `[curator] events` when set; bad
/// lines become warnings (their count and the first one).
pub(crate) fn read_events(project: &Project, warnings: &mut Vec<String>) -> Result<Vec<Event>, CurateError> {
    let own = events::log_path(&project.root);
    let mut logs = vec![(own.clone(), events::LOG.to_owned())];
    if let Some(extra) = &project.curator.events {
        let path = project.root.join(extra);
        // The project's own log named again would count every event twice.
        let same = std::fs::canonicalize(&path)
            .ok()
            .is_some_and(|p| std::fs::canonicalize(&own).ok() == Some(p));
        if !same {
            logs.push((path, extra.display().to_string()));
        }
    }
    let mut all = Vec::new();
    for (path, shown) in logs {
        let log = events::read(&path, &shown).map_err(|e| CurateError::Io(e.to_string()))?;
        if let Some(first) = log.problems.first() {
            warnings.push(format!(
                "{} line(s) of {shown} skipped (first: line {}: {})",
                log.problems.len(),
                first.line,
                first.message
            ));
        }
        all.extend(log.events);
    }
    Ok(all)
}

/// What selection reads of the events: creations, loads, failures and restores.
pub(crate) fn observations(events: &[Event]) -> Vec<select::Observation> {
    use select::Observed;
    events
        .iter()
        .filter_map(|e| {
            let what = match &e.kind {
                Kind::Created { skill, source } => Observed::Created {
                    skill: skill.clone(),
                    origin: *source,
                },
                Kind::Loaded { skill, session } => Observed::Loaded {
                    skill: skill.clone(),
                    session: session.clone(),
                },
                Kind::ToolFailed { session, tool } => Observed::ToolFailed {
                    session: session.clone(),
                    tool: tool.clone(),
                },
                Kind::Curated(c) if c.action == events::Action::Restore => {
                    Observed::Restored { skill: c.skill.clone() }
                }
                _ => return None,
            };
            Some(select::Observation { time: e.time, what })
        })
        .collect()
}

/// The state, read-only (dry runs, status): a corrupt or kept-aside state fails closed.
pub(crate) fn peek(project: &Project, warnings: &mut Vec<String>) -> Result<(State, bool), CurateError> {
    Ok(match state::load(&project.root)? {
        Loaded::Valid(s) => (s, false),
        Loaded::Corrupt(why) => {
            warnings.push(format!(
                "{} is corrupt ({why}); every skill is treated as pinned (a real run keeps it aside)",
                state::path(&project.root).display()
            ));
            (State::default(), true)
        }
        Loaded::KeptAside(p) => {
            warnings.push(kept_aside_warning(&p));
            (State::default(), true)
        }
    })
}

fn kept_aside_warning(p: &Path) -> String {
    format!(
        "the curator state was corrupt and is kept aside at {}; every skill is treated as pinned until it is \
         repaired and moved back as state.json, or removed",
        p.display()
    )
}

/// A mutating command's hold on the project: the locks of every archive root, the state,
/// and what opening found.
pub(crate) struct Session<'a> {
    pub project: &'a Project,
    pub roots: Vec<Root>,
    pub state: State,
    pub fail_closed: bool,
    pub warnings: Vec<String>,
    pub reconciled: Vec<journal::Reconciled>,
    _locks: Vec<store::RunLock>,
}

impl<'a> Session<'a> {
    /// Takes every root's lock (`Err(Busy)` when another run holds one), loads the state
    /// (keeping a corrupt one aside: fail closed) and reconciles the journal.
    pub(crate) fn open(project: &'a Project, roots: &[Root], now: Timestamp) -> Result<Session<'a>, CurateError> {
        let mut archives: Vec<PathBuf> = roots.iter().filter_map(|r| r.archive.clone().ok()).collect();
        archives.sort();
        archives.dedup();
        let mut locks = Vec::new();
        for a in &archives {
            match store::try_lock(a, now).map_err(|e| CurateError::Io(format!("{}: {e}", a.display())))? {
                Ok(l) => locks.push(l),
                Err(holder) => {
                    return Err(CurateError::Busy(format!(
                        "another curator run holds {} ({holder})",
                        a.join(store::LOCK_FILE).display()
                    )));
                }
            }
        }
        let mut warnings = Vec::new();
        let (state, fail_closed) = match state::load(&project.root)? {
            Loaded::Valid(s) => (s, false),
            Loaded::Corrupt(why) => {
                let aside = state::keep_aside(&project.root, now)?;
                warnings.push(format!("{} was corrupt ({why})", state::FILE));
                warnings.push(kept_aside_warning(&aside));
                (State::default(), true)
            }
            Loaded::KeptAside(p) => {
                warnings.push(kept_aside_warning(&p));
                (State::default(), true)
            }
        };
        let mut s = Session {
            project,
            roots: roots.to_vec(),
            state,
            fail_closed,
            warnings,
            reconciled: Vec::new(),
            _locks: locks,
        };
        if !s.fail_closed {
            s.reconciled = s.reconcile()?;
        }
        Ok(s)
    }

    /// Writes the state (never while failing closed: the kept-aside copy is the record).
    pub(crate) fn save(&self) -> Result<(), CurateError> {
        if self.fail_closed {
            return Ok(());
        }
        state::save(&self.project.root, &self.state)?;
        Ok(())
    }
}

/// The names of the skills of every skills root (as the curator matches events to skills:
/// the frontmatter `name`, else the folder's), sorted, each once. `skillc events record`
/// refuses an event about a skill that is not among them.
///
/// # Errors
/// [`CurateError::Io`] when a skills root cannot be read.
pub fn skill_names(project: &Project) -> Result<Vec<String>, CurateError> {
    let mut names: Vec<String> = discover(project, &roots(project))?
        .into_iter()
        .map(|f| f.view.name)
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// Records `skill.loaded` for a playbook read, when `[curator] record_loads` is on; returns
/// whether it was recorded. For `skillc playbook` and serve's playbook route.
///
/// # Errors
/// [`EventError`] when the skill name or session is not an identifier, or the log cannot be
/// written.
pub fn record_load(project: &Project, skill: &str, session: &str, now: Timestamp) -> Result<bool, EventError> {
    if !project.curator.record_loads {
        return Ok(false);
    }
    let event = Event::new(
        now,
        Kind::Loaded {
            skill: skill.to_owned(),
            session: session.to_owned(),
        },
    );
    events::record(&project.root, &event)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_are_recorded_only_when_the_project_enables_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut project = Project {
            root: dir.path().to_path_buf(),
            skills: vec![PathBuf::from("skills")],
            out: PathBuf::from("out"),
            skill_md_bytes: 65_536,
            curator: CuratorConfig::default(),
        };
        let now: Timestamp = "2026-06-01T00:00:00Z".parse().unwrap();
        assert!(!record_load(&project, "pdf-tools", "s1", now).unwrap());
        assert!(!events::log_path(dir.path()).exists());
        project.curator.record_loads = true;
        assert!(record_load(&project, "pdf-tools", "s1", now).unwrap());
        assert!(record_load(&project, "pdf-tools", "has space", now).is_err());
        let log = events::read(&events::log_path(dir.path()), "log").unwrap();
        assert_eq!(log.events.len(), 1);
    }
}

//! Watching the inputs of a build (IO layer): the skill roots (recursively), `pipeline.toml`
//! and the vocabulary file, through `notify` and `notify-debouncer-full` (which merges the
//! bursts of events an editor's save makes, renames included). `out/` and `.skillc/` are
//! never watched, and events under them are dropped.
//!
//! [`next`] blocks until something changed and says what: the caller (`skillc
//! watch`) hands skill paths to `build::session::Session::refresh_paths`, re-reads the
//! vocabulary or the configuration, and builds again.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use notify::RecursiveMode;
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};

/// What to watch. Paths are absolute.
#[derive(Clone, Debug, Default)]
pub struct Targets {
    /// Skill roots, watched recursively.
    pub roots: Vec<PathBuf>,
    /// Project files whose change restarts the build session: `pipeline.toml` (when the
    /// project has one) and `skillc.lock` (watched even before it exists).
    pub config: Vec<PathBuf>,
    /// The vocabulary file, when not the built-in one.
    pub vocabulary: Option<PathBuf>,
    /// Folders whose events are ignored (`out/`, `.skillc/`).
    pub ignore: Vec<PathBuf>,
}

/// What changed since the last call of [`Watcher::next`].
#[derive(Clone, Debug, Default)]
pub struct Changes {
    /// Paths under the skill roots that changed (files or folders, created, modified,
    /// removed or renamed; both names of a rename).
    pub skill_paths: Vec<PathBuf>,
    /// The vocabulary file changed.
    pub vocabulary: bool,
    /// `pipeline.toml` or `skillc.lock` changed, or a skill root itself was created, removed
    /// or renamed (its recursive watch must be set up again): the session starts over.
    pub config: bool,
    /// Events were lost (the kernel queue overflowed): everything must be re-read.
    pub rescan: bool,
    /// When the first of these events happened (to measure the time to a rebuilt catalog).
    pub since: Option<Instant>,
}

impl Changes {
    /// Nothing to do.
    pub fn is_empty(&self) -> bool {
        self.skill_paths.is_empty() && !self.vocabulary && !self.config && !self.rescan
    }
}

/// A message of the watch loop.
#[derive(Debug)]
pub enum Message {
    /// Inputs changed.
    Changed(Changes),
    /// The watcher reported errors (messages); watching goes on.
    Errors(Vec<String>),
    /// Stop watching (Ctrl-C, SIGTERM).
    Stop,
}

/// Failures to start watching.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// The operating system refused a watch (e.g. too many watches: raise
    /// `fs.inotify.max_user_watches`).
    #[error("cannot watch {path}: {message}")]
    Watch {
        /// The path.
        path: String,
        /// The error.
        message: String,
    },
}

/// A running watcher: it sends [`Message`]s to the channel given to [`Watcher::start`] until
/// dropped.
pub struct Watcher {
    _debouncer: Debouncer<notify::RecommendedWatcher, RecommendedCache>,
    targets: Targets,
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

/// A file's path through its canonical folder (the file itself may not exist yet).
fn canonical_file(p: &Path) -> PathBuf {
    match (p.parent(), p.file_name()) {
        (Some(dir), Some(name)) if !dir.as_os_str().is_empty() => canonical(dir).join(name),
        _ => canonical(p),
    }
}

/// A watch error in words, `path: what` (notify's own `Display` ends with the paths' `Debug`
/// list), the inotify limit with what raises it.
fn error_text(e: &notify::Error) -> String {
    let what = error_what(e);
    if e.paths.is_empty() {
        return what;
    }
    let paths: Vec<String> = e.paths.iter().map(|p| p.display().to_string()).collect();
    format!("{}: {what}", paths.join(", "))
}

/// [`error_text`] without the paths (for a [`WatchError`], which names its path).
fn error_what(e: &notify::Error) -> String {
    use notify::ErrorKind;
    match &e.kind {
        ErrorKind::MaxFilesWatch => {
            "the system's limit of watched folders is reached (raise `fs.inotify.max_user_watches` with sysctl)"
                .to_owned()
        }
        ErrorKind::PathNotFound => "no such file or folder".to_owned(),
        ErrorKind::Io(io) => io.to_string(),
        ErrorKind::Generic(g) => g.clone(),
        ErrorKind::WatchNotFound => "no watch was found".to_owned(),
        ErrorKind::InvalidConfig(c) => format!("invalid watch configuration: {c:?}"),
    }
}

impl Watcher {
    /// Starts watching `targets`, merging events that come within `debounce` of each other,
    /// and sending what changed to `tx` (read it with [`next`]).
    ///
    /// # Errors
    /// [`WatchError`] when a path cannot be watched.
    pub fn start(targets: &Targets, debounce: Duration, tx: mpsc::Sender<Message>) -> Result<Watcher, WatchError> {
        let targets = Targets {
            roots: targets.roots.iter().map(|p| canonical(p)).collect(),
            config: targets.config.iter().map(|p| canonical_file(p)).collect(),
            vocabulary: targets.vocabulary.as_deref().map(canonical),
            ignore: targets.ignore.iter().map(|p| canonical(p)).collect(),
        };
        let sender = tx;
        let filter = targets.clone();
        let mut debouncer = new_debouncer(debounce, None, move |result: DebounceEventResult| {
            let message = match result {
                Ok(events) => {
                    let mut c = Changes::default();
                    for e in &events {
                        // Opening and reading files (the build itself reads every input)
                        // changes nothing.
                        if e.event.kind.is_access() {
                            continue;
                        }
                        c.since = Some(c.since.map_or(e.time, |t: Instant| t.min(e.time)));
                        if e.event.need_rescan() {
                            c.rescan = true;
                        }
                        for p in &e.event.paths {
                            filter.classify(p, &mut c);
                        }
                    }
                    c.skill_paths.sort();
                    c.skill_paths.dedup();
                    if c.is_empty() {
                        return;
                    }
                    Message::Changed(c)
                }
                Err(errors) => Message::Errors(errors.iter().map(error_text).collect()),
            };
            let _ = sender.send(message);
        })
        .map_err(|e| WatchError::Watch {
            path: String::new(),
            message: error_text(&e),
        })?;
        let watch = |d: &mut Debouncer<_, _>, p: &Path, mode| {
            d.watch(p, mode).map_err(|e| WatchError::Watch {
                path: p.display().to_string(),
                message: error_what(&e),
            })
        };
        for r in &targets.roots {
            watch(&mut debouncer, r, RecursiveMode::Recursive)?;
        }
        // Files are watched through their folder: an editor's save replaces the file.
        // Roots too: a root deleted and made again is seen from its parent.
        let mut parents: Vec<PathBuf> = targets
            .config
            .iter()
            .chain(&targets.vocabulary)
            .chain(&targets.roots)
            .filter_map(|f| f.parent().map(Path::to_path_buf))
            .filter(|p| !targets.roots.iter().any(|r| p.starts_with(r)))
            .collect();
        parents.sort();
        parents.dedup();
        for p in &parents {
            watch(&mut debouncer, p, RecursiveMode::NonRecursive)?;
        }
        Ok(Watcher {
            _debouncer: debouncer,
            targets,
        })
    }

    /// The targets, canonical.
    pub fn targets(&self) -> &Targets {
        &self.targets
    }
}

/// Waits for the next message on `rx`; merges the changes already queued behind it. A closed
/// channel is a [`Message::Stop`]. `tx` is the channel's sender, to put back a message that
/// must not be merged (a stop, an error).
pub fn next(rx: &mpsc::Receiver<Message>, tx: &mpsc::Sender<Message>) -> Message {
    {
        let Ok(first) = rx.recv() else {
            return Message::Stop;
        };
        let Message::Changed(mut c) = first else {
            return first;
        };
        while let Ok(m) = rx.try_recv() {
            match m {
                Message::Changed(more) => {
                    c.skill_paths.extend(more.skill_paths);
                    c.vocabulary |= more.vocabulary;
                    c.config |= more.config;
                    c.rescan |= more.rescan;
                    c.since = match (c.since, more.since) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                }
                // A stop or an error is not lost: it is handled right after this change.
                other => {
                    let _ = tx.send(other);
                    break;
                }
            }
        }
        c.skill_paths.sort();
        c.skill_paths.dedup();
        Message::Changed(c)
    }
}

impl Targets {
    fn classify(&self, p: &Path, c: &mut Changes) {
        if self.ignore.iter().any(|i| p.starts_with(i)) {
            return;
        }
        if self.config.iter().any(|f| f == p) || self.roots.iter().any(|r| r == p) {
            c.config = true;
        }
        if self.vocabulary.as_deref() == Some(p) {
            c.vocabulary = true;
        }
        if self.roots.iter().any(|r| p.starts_with(r)) {
            c.skill_paths.push(p.to_path_buf());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A watch error names its paths as paths, not as notify's `Debug` list (`about ["…"]`),
    /// and the inotify limit says what raises it.
    #[test]
    fn watch_errors_name_their_paths_plainly() {
        let denied = notify::Error::io(std::io::Error::from(std::io::ErrorKind::PermissionDenied))
            .add_path(PathBuf::from("/p/skills"));
        let text = error_text(&denied);
        assert!(text.starts_with("/p/skills: "), "{text}");
        assert!(!text.contains("about") && !text.contains('"'), "{text}");
        assert_eq!(error_what(&denied), text["/p/skills: ".len()..]);
        let limit = error_text(&notify::Error::new(notify::ErrorKind::MaxFilesWatch));
        assert!(limit.contains("fs.inotify.max_user_watches"), "{limit}");
    }

    #[test]
    fn events_are_sorted_into_skills_vocabulary_and_configuration() {
        let t = Targets {
            roots: vec![PathBuf::from("/p/skills")],
            config: vec![PathBuf::from("/p/pipeline.toml"), PathBuf::from("/p/skillc.lock")],
            vocabulary: Some(PathBuf::from("/p/skills/vocabulary.toml")),
            ignore: vec![PathBuf::from("/p/out"), PathBuf::from("/p/.skillc")],
        };
        let mut c = Changes::default();
        for p in [
            "/p/skills/a/SKILL.md",
            "/p/pipeline.toml",
            "/p/out/catalog.toml",
            "/p/.skillc/state.json",
            "/p/README.md",
            "/p/skills/vocabulary.toml",
        ] {
            t.classify(Path::new(p), &mut c);
        }
        assert!(c.config && c.vocabulary && !c.rescan);
        // An import rewrites skillc.lock: provenance changes, the session starts over.
        let mut lock = Changes::default();
        t.classify(Path::new("/p/skillc.lock"), &mut lock);
        assert!(lock.config && lock.skill_paths.is_empty());
        // The root itself (deleted, made again): its recursive watch is gone, start over.
        let mut root = Changes::default();
        t.classify(Path::new("/p/skills"), &mut root);
        assert!(root.config);
        assert_eq!(
            c.skill_paths,
            vec![
                PathBuf::from("/p/skills/a/SKILL.md"),
                PathBuf::from("/p/skills/vocabulary.toml")
            ]
        );
    }
}

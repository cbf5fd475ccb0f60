//! `skillc watch`: builds, then rebuilds after every change of the skills, `pipeline.toml` or
//! the vocabulary, with one salsa database kept alive (only changed inputs are set, only what
//! they feed is recomputed). One line (or, with `--message-format json`, one JSON object) per
//! rebuild. Problems in the input are reported and watching goes on; Ctrl-C or SIGTERM stops
//! after the build in progress, so `out/` is never left half-written.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::messages::events::Event;

use super::build::{Prepared, ProjectArgs, prepare, report_error};
use super::progress::{MessageFormat, Reporter, finished};
use super::{Printer, Status};
use crate::build::session::{Outcome, Session};
use crate::watch::{Changes, Message, Targets, Watcher, next};

/// Arguments of `skillc watch`.
#[derive(Debug, clap::Args)]
pub struct WatchArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// `human`: one line per rebuild; `json`: one JSON object per event (docs/json.md).
    #[arg(long, value_enum, default_value_t = MessageFormat::Human)]
    pub message_format: MessageFormat,
    /// Quiet: no list of rejected skills, only the line per rebuild.
    #[arg(short, long)]
    pub quiet: bool,
    /// Milliseconds without events before a burst of changes is built.
    #[arg(long, value_name = "MS", default_value_t = 30)]
    pub debounce: u64,
}

/// A prepared project with its session and watcher.
struct Running {
    prepared: Prepared,
    session: Session,
    watcher: Watcher,
    /// The last rebuild failed (a vocabulary or skill that could not be read, a build error):
    /// the next change rebuilds and reports even when the inputs equal the last build's, since
    /// the fix (the vocabulary restored, a folder made readable again) changes nothing the
    /// session kept and would otherwise end the failure in silence.
    failed: bool,
}

/// Prepares the project, watches it and builds. `earlier` was taken before `prepare` read the
/// project files: a change of one of them since then may have come too early for the watch
/// and too late for `prepare`, so it starts the session over once more (at worst a needless
/// restart, never a change missed).
fn start(
    args: &WatchArgs,
    out: &mut Printer,
    tx: &mpsc::Sender<Message>,
    earlier: &Baseline,
) -> Result<(Running, Outcome, Duration), Failed> {
    let started = Instant::now();
    let prepared = prepare(&args.project, out).map_err(Failed::unwatched)?;
    let o = &prepared.options;
    let targets = Targets {
        roots: o.roots.iter().map(|r| o.root.join(r)).collect(),
        config: prepared.config_files.clone(),
        vocabulary: prepared.vocab_file.clone(),
        ignore: vec![
            o.out_dir.clone(),
            crate::emit::publish::spare_of(&o.out_dir),
            o.state_dir.clone(),
        ],
    };
    // The files `prepare` found (some may be new to `earlier`), right after it read them.
    let read = Baseline::take(&targets.roots, &project_files(&prepared));
    // Watch first, then build: a change made during the first build is not missed.
    let watcher = Watcher::start(&targets, Duration::from_millis(args.debounce), tx.clone())
        .map_err(|e| Failed::unwatched(e.into()))?;
    // A project file changed before the watch existed is seen by no watcher: start over once
    // more (the skills are read below, after the watch started).
    if earlier.changed() || read.changed() {
        let _ = tx.send(Message::Changed(Changes {
            config: true,
            since: Some(Instant::now()),
            ..Changes::default()
        }));
    }
    let vocab_text = prepared.vocab_text.clone();
    // From here on the watch runs: a failure (no skill in a root made again, say) keeps it, so
    // the change that fixes it is seen however deep under a root it is.
    let built = Session::open(prepared.options.clone(), vocab_text.clone())
        .and_then(|mut s| s.build(jiff::Timestamp::now().as_second(), &mut |_| {}).map(|o| (s, o)));
    let (mut session, outcome) = match built {
        Ok(b) => b,
        Err(e) => {
            return Err(Failed {
                error: report_error(e, &vocab_text, out),
                watcher: Some(Box::new(watcher)),
            });
        }
    };
    session.write_store_in_background();
    Ok((
        Running {
            prepared,
            session,
            watcher,
            failed: false,
        },
        outcome,
        started.elapsed(),
    ))
}

/// A [`start`] that failed, with its watcher when it got that far.
struct Failed {
    error: anyhow::Error,
    /// Boxed: a watcher is large, and a failure is rare.
    watcher: Option<Box<Watcher>>,
}

impl Failed {
    /// A failure before anything was watched.
    fn unwatched(error: anyhow::Error) -> Failed {
        Failed { error, watcher: None }
    }
}

pub(crate) fn run(args: &WatchArgs, out: &mut Printer) -> anyhow::Result<Status> {
    run_with(args, out, &mut |_| Ok(()))
}

/// Called after every build that wrote a catalog (`skillc serve --watch` swaps it in).
pub(crate) type AfterBuild<'a> = dyn FnMut(&Outcome) -> anyhow::Result<()> + 'a;

/// The watch loop, calling `after` after each successful build.
pub(crate) fn run_with(args: &WatchArgs, out: &mut Printer, after: &mut AfterBuild<'_>) -> anyhow::Result<Status> {
    let reporter = Reporter::new(args.message_format, args.quiet);
    let (tx, rx) = mpsc::channel();
    // Ctrl-C and SIGTERM stop the loop between builds: `out/` is never half-written.
    let stop = tx.clone();
    ctrlc::set_handler(move || {
        let _ = stop.send(Message::Stop);
    })?;
    let (mut running, first, took) = start(args, out, &tx, &Baseline::take(&[], &[])).map_err(|f| f.error)?;
    report(
        args,
        &reporter,
        out,
        &first,
        &["(initial build)".to_owned()],
        took,
        None,
    )?;
    after(&first)?;
    reporter.json(&Event::Watching {
        out: running.prepared.options.out_dir.display().to_string(),
    });
    if args.message_format == MessageFormat::Human {
        let roots: Vec<String> = running
            .watcher
            .targets()
            .roots
            .iter()
            .map(|r| r.display().to_string())
            .collect();
        out.line(&format!("watching {} for changes (Ctrl-C to stop)", roots.join(", ")))?;
        out.flush()?;
    }
    loop {
        match next(&rx, &tx) {
            Message::Stop => break,
            Message::Errors(errors) => {
                for e in errors {
                    problem(args, &reporter, out, &format!("watch error: {e}"));
                }
            }
            Message::Changed(c) if c.config => {
                // pipeline.toml may change the roots, the output, the key: start over. The old
                // session (and its lock) goes first.
                let since = c.since;
                let roots = running.watcher.targets().roots.clone();
                // Every project file the session read: a restart that fails on one of them
                // (an invalid vocabulary, say) waits for any of them to change again.
                let files = project_files(&running.prepared);
                drop(running);
                // The failure last reported, and how long to wait before trying again when
                // nothing seen changes (a cause no stamp sees, such as another build holding
                // the lock, goes away by itself).
                let mut reported: Option<String> = None;
                let mut retry = RETRY_FIRST;
                running = loop {
                    // Stamped before the restart reads them: a file fixed while the restart
                    // fails (or right after it reports) is a change, never the baseline.
                    let before = Baseline::take(&roots, &files);
                    match start(args, out, &tx, &before) {
                        Ok((r, o, took)) => {
                            report(
                                args,
                                &reporter,
                                out,
                                &o,
                                &[crate::config::FILE_NAME.into()],
                                took,
                                since,
                            )?;
                            after(&o)?;
                            break r;
                        }
                        Err(Failed { error, watcher }) => {
                            let message = format!("{error:#}; fix it and save again");
                            // A retry on time alone says nothing new when it fails the same way.
                            if reported.as_deref() != Some(message.as_str()) {
                                problem(args, &reporter, out, &message);
                                reported = Some(message);
                            }
                            // Wait for a change (seen by the watcher when the attempt got that
                            // far, else by polling), a stop, or the time to try again.
                            match wait_for_config(&rx, &before, watcher.is_some(), retry) {
                                Wake::Changed => {
                                    reported = None;
                                    retry = RETRY_FIRST;
                                }
                                Wake::Retry => retry = (retry * 2).min(RETRY_MAX),
                                Wake::Stop => return stopped(args, &reporter, out),
                            }
                        }
                    }
                };
            }
            Message::Changed(c) => rebuild(args, &reporter, out, &mut running, c, after)?,
        }
    }
    running.session.flush_store()?;
    stopped(args, &reporter, out)
}

/// The project files a session was prepared from (`pipeline.toml`, `skillc.lock`,
/// `translations.toml`, the vocabulary, …), watched or polled for changes.
fn project_files(prepared: &Prepared) -> Vec<PathBuf> {
    let mut files = prepared.config_files.clone();
    files.extend(prepared.vocab_file.iter().cloned());
    files
}

/// Size, modification time and a digest of the bytes of `pipeline.toml` and each project file
/// (`None` while it is missing), and whether each skill root is a folder. The digest sees an
/// edit that keeps the size within one tick of a coarse clock (the time alone would not).
#[derive(PartialEq, Eq)]
struct Stamp(Vec<Option<FileStamp>>, Vec<bool>);

/// [`Stamp`] of one file: size, modification time, digest of its bytes.
type FileStamp = (u64, Option<std::time::SystemTime>, Option<u64>);

/// A [`Stamp`] with what it was taken of.
struct Baseline {
    roots: Vec<PathBuf>,
    files: Vec<PathBuf>,
    stamp: Stamp,
}

impl Baseline {
    fn take(roots: &[PathBuf], files: &[PathBuf]) -> Baseline {
        Baseline {
            roots: roots.to_vec(),
            files: files.to_vec(),
            stamp: Stamp::take(roots, files),
        }
    }

    /// Whether a file or root differs now.
    fn changed(&self) -> bool {
        Stamp::take(&self.roots, &self.files) != self.stamp
    }
}

impl Stamp {
    fn take(roots: &[PathBuf], files: &[PathBuf]) -> Stamp {
        let config = std::env::current_dir()
            .map(|cwd| super::project::find_root(&cwd).join(crate::config::FILE_NAME))
            .ok();
        Stamp(
            config.iter().chain(files).map(|p| file_stamp(p)).collect(),
            roots.iter().map(|r| r.is_dir()).collect(),
        )
    }
}

/// A project file's [`FileStamp`]; `None` when it is missing.
fn file_stamp(p: &std::path::Path) -> Option<FileStamp> {
    use std::hash::{Hash as _, Hasher as _};
    let meta = std::fs::metadata(p).ok()?;
    // Project files are small: read whole (a folder or unreadable file has no digest).
    let digest = meta.is_file().then(|| std::fs::read(p).ok()).flatten().map(|bytes| {
        let mut h = std::hash::DefaultHasher::new();
        bytes.hash(&mut h);
        h.finish()
    });
    Some((meta.len(), meta.modified().ok(), digest))
}

/// The first wait before a failed restart is tried again with nothing changed; it doubles
/// up to [`RETRY_MAX`].
const RETRY_FIRST: Duration = Duration::from_secs(2);
/// The longest wait between two tries of a failed restart.
const RETRY_MAX: Duration = Duration::from_secs(30);

/// Why [`wait_for_config`] returned.
#[derive(Debug, PartialEq, Eq)]
enum Wake {
    /// Something changed: try again.
    Changed,
    /// Nothing seen changed within the wait: try again anyway.
    Retry,
    /// Ctrl-C or SIGTERM.
    Stop,
}

/// After a failed restart: polls `pipeline.toml`, the project files and the roots until they
/// differ from `before` (taken before the failed attempt read them). With `watching` (the
/// attempt's watcher is alive) any change it reports under the roots counts too: a skill moved
/// into a root made again changes neither the root's existence nor a project file. After
/// `retry` with nothing seen, returns [`Wake::Retry`].
fn wait_for_config(rx: &mpsc::Receiver<Message>, before: &Baseline, watching: bool, retry: Duration) -> Wake {
    let until = Instant::now() + retry;
    loop {
        if before.changed() {
            return Wake::Changed;
        }
        if Instant::now() >= until {
            return Wake::Retry;
        }
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(Message::Stop) | Err(mpsc::RecvTimeoutError::Disconnected) => return Wake::Stop,
            Ok(Message::Changed(_)) if watching => return Wake::Changed,
            Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
}

fn stopped(args: &WatchArgs, reporter: &Reporter, out: &mut Printer) -> anyhow::Result<Status> {
    reporter.json(&Event::WatchStopped);
    if args.message_format == MessageFormat::Human {
        out.line("stopped")?;
    }
    out.flush()?;
    Ok(Status::Success)
}

fn problem(args: &WatchArgs, reporter: &Reporter, out: &mut Printer, message: &str) {
    reporter.json(&Event::RebuildFailed { message });
    if args.message_format == MessageFormat::Human {
        out.note(&format!("error: {message}"));
    }
}

fn rebuild(
    args: &WatchArgs,
    reporter: &Reporter,
    out: &mut Printer,
    running: &mut Running,
    c: Changes,
    after: &mut AfterBuild<'_>,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut what: Vec<String> = Vec::new();
    let session = &mut running.session;
    if c.vocabulary
        && let Some(v) = &running.prepared.vocab_file
    {
        let shown = v.display().to_string();
        let read = std::fs::read(v).map_err(|e| format!("{shown}: {e}")).and_then(|b| {
            // The same diagnostic as a build's (`project::read_input`): file:line:col of the byte.
            let what = v
                .file_name()
                .map_or(shown.clone(), |n| n.to_string_lossy().into_owned());
            crate::diag::decode_utf8(&b, &shown, &what, &crate::rules::VO001)
                .map(str::to_owned)
                .map_err(|d| crate::diag::render_short(&d))
        });
        match read {
            Ok(text) => {
                if session.set_vocabulary(text.clone()) {
                    what.push(session.options().vocab_path.clone());
                }
                running.prepared.vocab_text = text;
            }
            Err(e) => {
                problem(args, reporter, out, &e);
                running.failed = true;
                return Ok(());
            }
        }
    }
    let changed = if c.rescan {
        session.refresh_all()
    } else if c.skill_paths.is_empty() {
        Ok(Vec::new())
    } else {
        session.refresh_paths(&c.skill_paths)
    };
    match changed {
        Ok(v) => what.extend(v),
        Err(e) => {
            problem(args, reporter, out, &format!("{e}"));
            running.failed = true;
            return Ok(());
        }
    }
    if what.is_empty() {
        if !running.failed {
            return Ok(());
        }
        // After a failure, the change that mends it is reported by what was touched.
        if c.vocabulary {
            what.push(session.options().vocab_path.clone());
        }
        let root = &session.options().root;
        what.extend(
            c.skill_paths
                .iter()
                .map(|p| p.strip_prefix(root).unwrap_or(p).display().to_string()),
        );
    }
    match session.build(jiff::Timestamp::now().as_second(), &mut |_| {}) {
        Ok(o) => {
            running.failed = false;
            report(args, reporter, out, &o, &what, started.elapsed(), c.since)?;
            after(&o)
        }
        Err(e) => {
            running.failed = true;
            let vocab_text = running.prepared.vocab_text.clone();
            let err = report_error(e, &vocab_text, out);
            problem(args, reporter, out, &format!("{err:#}; watching goes on"));
            Ok(())
        }
    }
}

fn report(
    args: &WatchArgs,
    reporter: &Reporter,
    out: &mut Printer,
    o: &Outcome,
    what: &[String],
    took: Duration,
    since: Option<Instant>,
) -> anyhow::Result<()> {
    let latency = since.map(|s| s.elapsed());
    if let Some(expires) = &o.expired {
        out.note(&super::build::expired_warning(expires));
    }
    // A refused build cache entry, as `build` prints it.
    for w in &o.warnings {
        out.note(w);
    }
    if args.message_format == MessageFormat::Json {
        // Why each changed skill is rejected, as `build` says it (the human lines below), and
        // where: the `file:line:column` of the diagnostic that rejected it.
        let sites = super::build::rejection_sites(o);
        for (path, reason) in &o.rejected {
            if what.iter().any(|w| w == path) {
                reporter.json(&Event::SkillRejected {
                    path,
                    message: reason,
                    at: sites.get(path).map(String::as_str),
                });
            }
        }
        reporter.json(&Event::RebuildFinished {
            finished: finished(o, took),
            changed: what,
            latency_ms: latency.map(|l| l.as_secs_f64() * 1000.0),
            rejected_skills: o.rejected.iter().map(|(p, _)| p.as_str()).collect(),
        });
        return Ok(());
    }
    if !args.quiet {
        let changed = |path: &str| what.iter().any(|w| w == path);
        for line in super::build::rejected_skills(o, changed, super::build::REJECTED_SKILLS_SHOWN) {
            out.line(&line)?;
        }
    }
    let shown: Vec<&str> = what.iter().take(3).map(String::as_str).collect();
    let more = what.len().saturating_sub(3);
    let t = &o.totals;
    use super::output::count;
    out.line(&format!(
        "{}{}: executors +{} ~{} -{}; {}{}, {} admitted, {} rejected; {} written or removed in {} ms{}",
        shown.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        },
        o.added.len(),
        o.updated.len(),
        o.removed.len(),
        super::build::skills_built(t),
        super::build::skills_rejected(t),
        t.admitted,
        t.rejected,
        count(o.files_written + o.files_removed, "file"),
        took.as_millis(),
        match latency {
            Some(l) => format!(" ({} ms since the change)", l.as_millis()),
            None => String::new(),
        }
    ))?;
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An edit that keeps a project file's size and modification time (two saves within one
    /// tick of a coarse clock) is a change. Fails with a stamp of size and time alone.
    #[test]
    fn a_same_size_edit_within_one_clock_tick_is_a_change() {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = dir.path().join("vocabulary.toml");
        std::fs::write(&f, "this is [[ not toml\n").expect("write");
        let when = std::fs::metadata(&f).and_then(|m| m.modified()).expect("mtime");
        let before = Baseline::take(&[dir.path().to_path_buf()], std::slice::from_ref(&f));
        assert!(!before.changed());
        std::fs::write(&f, "this is [[ not TOML\n").expect("write");
        std::fs::File::options()
            .write(true)
            .open(&f)
            .and_then(|h| h.set_modified(when))
            .expect("set mtime");
        assert!(before.changed(), "a same-size edit with the same time was missed");
        // A root made a file, or a file removed: changes too.
        let gone = Baseline::take(&[], std::slice::from_ref(&f));
        std::fs::remove_file(&f).expect("rm");
        assert!(gone.changed());
    }
}

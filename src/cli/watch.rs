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
}

fn start(
    args: &WatchArgs,
    out: &mut Printer,
    tx: &mpsc::Sender<Message>,
) -> anyhow::Result<(Running, Outcome, Duration)> {
    let started = Instant::now();
    let prepared = prepare(&args.project, out)?;
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
    // Watch first, then build: a change made during the first build is not missed.
    let watcher = Watcher::start(&targets, Duration::from_millis(args.debounce), tx.clone())?;
    let vocab_text = prepared.vocab_text.clone();
    let mut session =
        Session::open(prepared.options.clone(), vocab_text.clone()).map_err(|e| report_error(e, &vocab_text, out))?;
    let outcome = session
        .build(jiff::Timestamp::now().as_second(), &mut |_| {})
        .map_err(|e| report_error(e, &vocab_text, out))?;
    session.write_store_in_background();
    Ok((
        Running {
            prepared,
            session,
            watcher,
        },
        outcome,
        started.elapsed(),
    ))
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
    let (mut running, first, took) = start(args, out, &tx)?;
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
                running = loop {
                    // Stamped before the restart reads them: a file fixed while the restart
                    // fails (or right after it reports) is a change, never the baseline.
                    let before = Stamp::take(&roots, &files);
                    match start(args, out, &tx) {
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
                        Err(e) => {
                            problem(args, &reporter, out, &format!("{e:#}; fix it and save again"));
                            // Wait for the next change of the configuration (or a stop).
                            match wait_for_config(&rx, &roots, &files, &before) {
                                true => continue,
                                false => return stopped(args, &reporter, out),
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

/// Size and modification time of `pipeline.toml` and each project file (`None` while it is
/// missing), and whether each skill root is a folder.
#[derive(PartialEq, Eq)]
struct Stamp(Vec<Option<(u64, Option<std::time::SystemTime>)>>, Vec<bool>);

impl Stamp {
    fn take(roots: &[PathBuf], files: &[PathBuf]) -> Stamp {
        let config = std::env::current_dir()
            .map(|cwd| super::project::find_root(&cwd).join(crate::config::FILE_NAME))
            .ok();
        let meta = |p: &PathBuf| std::fs::metadata(p).ok().map(|m| (m.len(), m.modified().ok()));
        Stamp(
            config.iter().chain(files).map(meta).collect(),
            roots.iter().map(|r| r.is_dir()).collect(),
        )
    }
}

/// Without a valid configuration (or with a skill root missing, or a project file such as the
/// vocabulary in error) nothing is watched: polls `pipeline.toml`, the project `files` and the
/// roots until they differ from `before` (taken before the failed attempt read them). Returns
/// false on a stop.
fn wait_for_config(rx: &mpsc::Receiver<Message>, roots: &[PathBuf], files: &[PathBuf], before: &Stamp) -> bool {
    loop {
        if Stamp::take(roots, files) != *before {
            return true;
        }
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(Message::Stop) | Err(mpsc::RecvTimeoutError::Disconnected) => return false,
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
            return Ok(());
        }
    }
    if what.is_empty() {
        return Ok(());
    }
    match session.build(jiff::Timestamp::now().as_second(), &mut |_| {}) {
        Ok(o) => {
            report(args, reporter, out, &o, &what, started.elapsed(), c.since)?;
            after(&o)
        }
        Err(e) => {
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
        "{}{}: executors +{} ~{} -{}; {}, {} admitted, {} rejected ({} rejected); {} written or removed in {} ms{}",
        shown.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        },
        o.added.len(),
        o.updated.len(),
        o.removed.len(),
        count(t.skills, "skill"),
        t.admitted,
        t.rejected,
        count(t.skills_rejected, "skill"),
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

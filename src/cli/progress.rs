//! Build progress: an indicatif bar on a terminal (stage, count, rate), nothing on a
//! non-terminal or with `--quiet`, or one JSON object per event with `--message-format json`
//! (docs/json.md, "Build events").

use std::io::{IsTerminal as _, Write as _};
use std::time::Duration;

use crate::build::session::{Event, Outcome};
use crate::messages::events::{self, Finished};

/// How `build` and `watch` report progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MessageFormat {
    /// A progress bar on a terminal, the summary line at the end.
    Human,
    /// One JSON object per line on standard output (docs/json.md).
    Json,
}

/// Builds with fewer skills than this finish too fast for a bar to help.
const BAR_MIN_SKILLS: usize = 200;

/// Receives a build's events and shows them.
pub(crate) struct Reporter {
    format: MessageFormat,
    quiet: bool,
    bar: Option<indicatif::ProgressBar>,
}

impl Reporter {
    /// A reporter; `quiet` hides the bar (JSON events are still printed).
    pub(crate) fn new(format: MessageFormat, quiet: bool) -> Reporter {
        Reporter {
            format,
            quiet,
            bar: None,
        }
    }

    /// Prints one JSON event line (JSON mode only).
    pub(crate) fn json(&self, event: &events::Event<'_>) {
        if self.format == MessageFormat::Json {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", serde_json::to_string(event).unwrap_or_default());
            let _ = out.flush();
        }
    }

    /// The build starts.
    pub(crate) fn started(&mut self, roots: usize) {
        self.json(&events::Event::BuildStarted { roots });
    }

    /// One event of the session.
    pub(crate) fn event(&mut self, e: &Event<'_>) {
        match e {
            Event::Stage { stage, total } => {
                self.json(&events::Event::Stage { stage, total: *total });
                if self.format == MessageFormat::Human && !self.quiet && std::io::stderr().is_terminal() {
                    if *stage == "analyze" && *total < BAR_MIN_SKILLS {
                        return;
                    }
                    let bar = self.bar.get_or_insert_with(|| {
                        let b = indicatif::ProgressBar::new(0);
                        b.set_style(
                            indicatif::ProgressStyle::with_template(
                                "{prefix:>9.cyan.bold} [{bar:30}] {pos}/{len} {per_sec} {elapsed}",
                            )
                            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                            .progress_chars("=> "),
                        );
                        b.enable_steady_tick(Duration::from_millis(100));
                        b
                    });
                    bar.set_prefix(*stage);
                    bar.set_length(*total as u64);
                    bar.set_position(0);
                    bar.reset_eta();
                }
            }
            Event::Progress { n } => {
                if let Some(b) = &self.bar {
                    b.inc(*n as u64);
                }
            }
            Event::SkillRejected { path, reason } => {
                self.json(&events::Event::SkillRejected { path, message: reason });
            }
            Event::Executor { name, change } => {
                self.json(&events::Event::Executor { name, change });
            }
        }
    }

    /// The build finished.
    pub(crate) fn finished(&mut self, o: &Outcome, elapsed: Duration) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        self.json(&events::Event::BuildFinished(finished(o, elapsed)));
    }
}

/// What a build did, as the `build-finished` event says it.
pub(crate) fn finished(o: &Outcome, elapsed: Duration) -> Finished {
    Finished {
        up_to_date: o.up_to_date,
        success: o.totals.rejected == 0 && o.totals.skills_rejected == 0,
        skills: o.totals.skills,
        skills_rejected: o.totals.skills_rejected,
        plans: o.totals.plans,
        admitted: o.totals.admitted,
        rejected: o.totals.rejected,
        executors: o.executors,
        executors_added: o.added.len(),
        executors_updated: o.updated.len(),
        executors_removed: o.removed.len(),
        files_written: o.files_written,
        files_removed: o.files_removed,
        manifests_signed: o.manifests_signed,
        duration_ms: elapsed.as_secs_f64() * 1000.0,
    }
}

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
    /// Whether this build shows a bar, decided once at its first stage (`analyze`: enough
    /// skills, a terminal, not quiet), so that every stage of one build is shown or none.
    show: Option<bool>,
    /// The current stage: its name, items done and total (what the bar shows).
    stage: Option<(&'static str, usize, usize)>,
}

impl Reporter {
    /// A reporter; `quiet` hides the bar (JSON events are still printed).
    pub(crate) fn new(format: MessageFormat, quiet: bool) -> Reporter {
        Reporter {
            format,
            quiet,
            bar: None,
            show: None,
            stage: None,
        }
    }

    /// The current stage as `(name, done, total)`.
    #[cfg(test)]
    fn position(&self) -> Option<(&'static str, usize, usize)> {
        self.stage
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
                self.stage = Some((*stage, 0, *total));
                let wanted = self.format == MessageFormat::Human && !self.quiet && *total >= BAR_MIN_SKILLS;
                let show = *self
                    .show
                    .get_or_insert_with(|| wanted && std::io::stderr().is_terminal());
                if show {
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
                if let Some((_, done, total)) = &mut self.stage {
                    // Never past the stage's total, whatever a stage reports.
                    let step = (*n).min(total.saturating_sub(*done));
                    *done += step;
                    if let Some(b) = &self.bar {
                        b.inc(step as u64);
                    }
                }
            }
            Event::SkillRejected { path, reason } => {
                self.json(&events::Event::SkillRejected {
                    path,
                    message: reason,
                    at: None,
                });
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
        self.show = None;
        self.stage = None;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 18, item 14: the count of a stage starts at 0 and ends at its total, whatever
    /// was counted in the stage before (`sign 2448/695`).
    #[test]
    fn each_stage_counts_from_zero_to_its_total() {
        let mut r = Reporter::new(MessageFormat::Human, true);
        r.event(&Event::Stage {
            stage: "analyze",
            total: 3,
        });
        r.event(&Event::Progress { n: 2 });
        assert_eq!(r.position(), Some(("analyze", 2, 3)));
        r.event(&Event::Progress { n: 2 });
        assert_eq!(r.position(), Some(("analyze", 3, 3)));
        r.event(&Event::Stage {
            stage: "sign",
            total: 2,
        });
        assert_eq!(r.position(), Some(("sign", 0, 2)));
        r.event(&Event::Progress { n: 1 });
        r.event(&Event::Progress { n: 1 });
        assert_eq!(r.position(), Some(("sign", 2, 2)));
    }
}

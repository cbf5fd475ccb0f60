//! Build and watch events: one JSON object per line with `--message-format json`, each with a
//! `reason` naming its shape.

use serde::Serialize;

/// One event.
#[derive(Serialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum Event<'a> {
    /// The build starts.
    BuildStarted {
        /// Skill roots searched.
        roots: usize,
    },
    /// A stage starts.
    Stage {
        /// `analyze`, `sign` or `write`.
        stage: &'a str,
        /// Items: skills, executors, files.
        total: usize,
    },
    /// An executor appeared, changed or disappeared.
    Executor {
        /// Its name.
        name: &'a str,
        /// `added`, `updated` or `removed`.
        change: &'a str,
    },
    /// A skill was rejected as a whole.
    SkillRejected {
        /// Its folder.
        path: &'a str,
        /// `CODE: reason`.
        message: &'a str,
    },
    /// The build finished.
    BuildFinished(Finished),
    /// A watch rebuild finished.
    RebuildFinished {
        /// What the build did.
        #[serde(flatten)]
        finished: Finished,
        /// The skill folders, vocabulary or `pipeline.toml` that changed.
        changed: &'a [String],
        /// From the first file event to the written catalog, in milliseconds.
        latency_ms: Option<f64>,
        /// Skill folders rejected as a whole.
        rejected_skills: Vec<&'a str>,
    },
    /// Watching has started.
    Watching {
        /// The output folder.
        out: String,
    },
    /// The inputs could not be built; `out/` is as it was.
    RebuildFailed {
        /// Why.
        message: &'a str,
    },
    /// Watch stopped (Ctrl-C, SIGTERM).
    WatchStopped,
}

/// What a build did (`build-finished`, and the start of `rebuild-finished`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Finished {
    /// Nothing changed since the last build.
    pub up_to_date: bool,
    /// No plan and no skill rejected.
    pub success: bool,
    /// Skills found.
    pub skills: usize,
    /// Skills rejected as a whole.
    pub skills_rejected: usize,
    /// Plans.
    pub plans: usize,
    /// Plans admitted.
    pub admitted: usize,
    /// Plans rejected.
    pub rejected: usize,
    /// Executors in the catalog.
    pub executors: usize,
    /// Executors added.
    pub executors_added: usize,
    /// Executors updated.
    pub executors_updated: usize,
    /// Executors removed.
    pub executors_removed: usize,
    /// Files of `out/` written.
    pub files_written: usize,
    /// Files of `out/` removed.
    pub files_removed: usize,
    /// Manifests signed by this build.
    pub manifests_signed: usize,
    /// Wall time, in milliseconds.
    pub duration_ms: f64,
}

//! The salsa database and its inputs: every SKILL.md, every support file, the settings, the
//! vocabulary and the configuration.
//!
//! Architecture invariant: inputs are created and updated only here and in [`load`] (which
//! reads the disk) and by `watch`; every derived value is a tracked query in its stage module.
//! Setters always start a new revision, so [`set_contents_if_changed`] and [`set_text_if_changed`] compare contents
//! before writing.

pub mod load;

use std::sync::{Arc, Mutex};

use crate::model::{AdmissionSettings, CatalogVerdicts, FindingSeverity, Level, Limits, Mode, Recorded};

/// Settings every query may read. One instance per database.
#[salsa::input(debug)]
pub struct Settings {
    /// Default or strict validation.
    #[returns(copy)]
    pub mode: Mode,
    /// Size and count limits.
    #[returns(copy)]
    pub limits: Limits,
}

/// What is known of a file's contents.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Contents {
    /// The bytes, read from disk.
    Bytes(Arc<[u8]>),
    /// Not read because it is larger than the limit.
    TooLarge {
        /// Size on disk, in bytes.
        size: u64,
    },
    /// Not read: only its size was needed (support files during `check`).
    Unread {
        /// Size on disk, in bytes.
        size: u64,
    },
    /// A symbolic link whose target lies outside the skill folder. Never followed.
    SymlinkEscape {
        /// Where the link points, as read from the link.
        target: String,
    },
    /// Reading failed.
    Unreadable {
        /// The operating system's error message.
        error: String,
    },
}

impl Contents {
    /// The bytes, when they were read.
    pub fn bytes(&self) -> Option<&[u8]> {
        match self {
            Contents::Bytes(b) => Some(b),
            _ => None,
        }
    }
}

/// A file of a skill.
#[salsa::input(debug)]
pub struct SourceFile {
    /// Path relative to the skill folder, `/`-separated (`SKILL.md`, `scripts/run.py`).
    #[returns(ref)]
    pub rel_path: String,
    /// What was read.
    #[returns(ref)]
    pub contents: Contents,
}

/// A skill folder.
#[salsa::input(debug)]
pub struct SkillSource {
    /// The folder as shown to the user (relative to the project root or as given), `/`-separated.
    #[returns(ref)]
    pub display: String,
    /// The folder's own name (compared with `name`).
    #[returns(ref)]
    pub dir_name: String,
    /// SKILL.md (or `skill.md`), when present.
    #[returns(copy)]
    pub skill_md: Option<SourceFile>,
    /// Every other file under the folder, nested skills excluded, sorted by path.
    #[returns(ref)]
    pub files: Vec<SourceFile>,
    /// The skill's results from the persistent build cache, when the build session found an
    /// entry for exactly these files and settings: the bytes of the entry, already verified
    /// (`build::cache`). The per-skill build queries take their values from it instead of
    /// computing them; `None` computes them.
    #[returns(ref)]
    pub warm: Option<Arc<[u8]>>,
}

/// A text input that is not part of a skill: the vocabulary, `pipeline.toml`.
#[salsa::input(debug)]
pub struct TextInput {
    /// Path shown in diagnostics.
    #[returns(ref)]
    pub path: String,
    /// The text.
    #[returns(ref)]
    pub text: String,
}

/// The whole build: the catalog's skills and the settings every build query reads. One per
/// database; `db::load` and `watch` replace its fields when the disk changes.
#[salsa::input(debug)]
pub struct BuildInputs {
    /// Every skill of the catalog, sorted by display path.
    #[returns(ref)]
    pub skills: Vec<SkillSource>,
    /// Validation mode and limits.
    #[returns(copy)]
    pub settings: Settings,
    /// The vocabulary text.
    #[returns(copy)]
    pub vocabulary: TextInput,
    /// The project's reviewed translations (`translations.toml`; empty when absent).
    #[returns(copy)]
    pub translations: TextInput,
    /// Admission levels skipped on request (`--skip`, `[admission] skip`), sorted.
    #[returns(ref)]
    pub skip: Vec<Level>,
    /// The `[admission]` thresholds and verifier.
    #[returns(ref)]
    pub admission: AdmissionSettings,
    /// Security findings at or above this severity reject a skill (`[scan] fail_on`).
    #[returns(copy)]
    pub fail_on: FindingSeverity,
    /// Skill name → original source, from `skillc.lock` (recorded as `imported_from`).
    #[returns(ref)]
    pub imported_from: std::collections::BTreeMap<String, String>,
    /// The answers of L5's `python3` and the L6 verifier, run by the build session before
    /// admission ([`Recorded`]).
    #[returns(ref)]
    pub recorded: Recorded,
    /// The catalog-wide admission verdicts (L3, L4) the last build of this output folder
    /// recorded, read by the build session when it opens: admission takes them when they
    /// answer exactly its question ([`CatalogVerdicts::key`]) and judges otherwise.
    #[returns(ref)]
    pub earlier_catalog: Option<Arc<CatalogVerdicts>>,
}

/// Records which queries executed, for tests of incrementality.
#[derive(Debug, Default)]
pub struct ExecutionLog {
    executed: Mutex<Vec<String>>,
}

impl ExecutionLog {
    /// Takes the names of the queries executed since the last call (`analyze_skill`, …).
    pub fn take(&self) -> Vec<String> {
        self.executed
            .lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default()
    }
}

/// The skillc database.
#[salsa::db]
#[derive(Clone, Default)]
pub struct Db {
    storage: salsa::Storage<Self>,
}

impl Db {
    /// A database that records every query execution in the returned log.
    pub fn with_execution_log() -> (Db, Arc<ExecutionLog>) {
        let log = Arc::new(ExecutionLog::default());
        let sink = log.clone();
        let storage = salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind {
                let key = format!("{database_key:?}");
                let name = key.split('(').next().unwrap_or_default().to_owned();
                if let Ok(mut v) = sink.executed.lock() {
                    v.push(name);
                }
            }
        })));
        (Db { storage }, log)
    }
}

#[salsa::db]
impl salsa::Database for Db {}

/// Replaces a file's contents when they differ, and says whether it did. Setters always start
/// a new revision, so comparing first keeps unchanged files from invalidating anything.
pub fn set_contents_if_changed(db: &mut Db, file: SourceFile, contents: Contents) -> bool {
    use salsa::Setter as _;
    if *file.contents(db) == contents {
        return false;
    }
    file.set_contents(db).to(contents);
    true
}

/// Replaces a text input (vocabulary, configuration) when it differs; says whether it did.
pub fn set_text_if_changed(db: &mut Db, input: TextInput, text: String) -> bool {
    use salsa::Setter as _;
    if *input.text(db) == text {
        return false;
    }
    input.set_text(db).to(text);
    true
}

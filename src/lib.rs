//! skillc: a catalog compiler for Agent Skills.
//!
//! The library holds every stage of the pipeline (ARCHITECTURE.md); `src/main.rs` only parses
//! arguments and maps the result of [`run`] to an exit code. The modules are internal: what
//! is meant to be used from outside — the binary's interface, the database and its queries
//! for embedding skillc and counting executions, whole builds, and the text-level entry
//! points of the stages — is re-exported here, and only that (ARCHITECTURE.md, "API
//! boundaries").

// Functions over 120 lines (clippy.toml) are split; CI denies warnings.
#![warn(clippy::too_many_lines)]

mod admit;
mod build;
mod catalog;
mod cli;
mod config;
mod curate;
mod db;
mod diag;
mod embed;
mod emit;
mod events;
mod export;
mod extract;
mod fix;
mod generate;
mod import;
mod menu;
mod messages;
mod migrate;
mod model;
mod route;
mod rules;
mod scan;
mod serve;
mod sign;
mod skill;
mod suppress;
mod translate;
mod trust;
mod util;
mod verify;
mod vocab;
mod watch;

// The command line: the binary's whole interface.
pub use cli::{Args, Status, is_broken_pipe, run};

// Plain types and diagnostics.
pub use diag::{Diagnostic, Pos, Severity, Source, Span};
pub use model::{FindingSeverity, Level, LevelStatus, Limits, Mode, SKIPPED_DIRS};
pub use sign::{PublicKey, SecretKey, SignError};

// The database, its inputs and reading them from disk.
pub use db::load::{Discovered, FoundSkill, LoadError, ReadSkill, discover, read as read_skills, to_inputs};
pub use db::{
    BuildInputs, Contents, Db, ExecutionLog, Settings, SkillSource, SourceFile, TextInput, set_contents_if_changed,
    set_text_if_changed,
};

// The queries (memoized; tests count their executions through `ExecutionLog`).
pub use extract::{Extraction, extract_skill};
pub use scan::{Finding, ScanReport, scan_skill};
pub use skill::{SkillCheck, analyze_skill, check_skill};
pub use translate::{Translation, translate_skill};
pub use vocab::{DEFAULT_PATH as BUILT_IN_VOCABULARY_PATH, DEFAULT_TEXT as BUILT_IN_VOCABULARY, vocabulary};

// The catalog in use (RUNTIME.md §1): open a verified `out/` once, then ask its menu per
// turn and load playbooks, with no process per turn (and no file read once each offered
// skill's files are checked: once per open catalog, `MenuCatalog::select`).
pub use catalog::menu::{
    CatalogError as MenuCatalogError, Depth as MenuDepth, MenuCatalog, OpenOptions as MenuOpenOptions,
};
pub use catalog::read::Trust as CatalogTrust;
pub use menu::calibrate::{Battery, Figures as CalibrationFigures, Turn as BatteryTurn, parse_battery};
pub use menu::format::{ToolFormat, json_doc, tool as load_playbook_tool};
pub use menu::{
    Candidate, DenseTurn, Item as MenuItem, MAX_TURN, Menu, MenuError, Pass, Query, Selection,
    check_turn as check_menu_turn,
};

// Dense embedders (the menu's semantic pass): the interface, and the local model behind the
// cargo feature `local-model`.
#[cfg(feature = "local-model")]
pub use embed::local::{LocalModel, LocalModelError, Pooling};
pub use embed::{EmbedError, Embedder};

// Whole builds: a session keeps the database between builds (`skillc watch`).
pub use build::session::{
    BuildError, Checked as BuildChecked, Event as BuildEvent, Options as BuildOptions, Outcome as BuildOutcome,
    Session, Shard, ShardOutcome,
};

// Text-level entry points: one SKILL.md in, a value and its diagnostics out.
pub use export::{Exported, restore_skill_md, standard_skill_md};
pub use fix::{Fixed, Options as FixOptions, Target as FixTarget, fix_skill_md};
pub use migrate::{
    FieldReport, FieldStatus, FromFormat, Migration, Outcome as MigrationOutcome, Vendor, migrate, vendor_formats,
};
pub use skill::validate::{Analysis, Context as ValidationContext, analyze};

//! `skillc verify`: what a consuming runtime runs before it trusts a catalog.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::messages;
use anyhow::Context as _;

use super::{Printer, ReportFormat, Status};
use crate::emit::{self, write};
use crate::verify::{self, Options};

/// Arguments of `skillc verify`.
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// The catalog folder (default `out`).
    #[arg(default_value = "out")]
    pub out: PathBuf,
    /// Public key to trust (default: the folder's `skillc.pub`). Pass the key you expect:
    /// a `skillc.pub` inside the folder only proves the catalog is self-consistent.
    #[arg(long, value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// File remembering the last accepted `catalog_version` per key, for rollback protection
    /// (default: `$XDG_STATE_HOME/skillc/verify-state.json`, else
    /// `~/.local/state/skillc/verify-state.json`).
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// Also refuse skipped or not-run admission levels.
    #[arg(long)]
    pub production: bool,
    /// Output format.
    #[arg(long, visible_alias = "message-format", value_enum, default_value_t = ReportFormat::Human)]
    pub format: ReportFormat,
}

pub(crate) fn run(args: &VerifyArgs, out: &mut Printer) -> anyhow::Result<Status> {
    anyhow::ensure!(
        args.out.is_dir(),
        "{}: no such folder (build a catalog with `skillc build`)",
        args.out.display()
    );
    anyhow::ensure!(
        args.out.join(emit::CATALOG).is_file(),
        "{} is not a catalog (it has no catalog.toml); build one with `skillc build`",
        args.out.display()
    );
    // The same reading as the catalog commands and `serve`: no link followed, sizes capped.
    let (files, _) = crate::catalog::read::read_tree(&args.out)?;
    let key_path = args.key.clone().unwrap_or_else(|| args.out.join(emit::PUBLIC_KEY));
    let key = crate::catalog::read::read_key(&key_path)?;
    let state_path = args.state.clone().unwrap_or_else(crate::catalog::read::default_state);
    // A damaged state must not silently switch rollback protection off.
    let mut state: BTreeMap<String, i64> = match std::fs::read(&state_path) {
        Err(_) => BTreeMap::new(),
        Ok(b) => serde_json::from_slice(&b).with_context(|| {
            format!(
                "{} is damaged; refusing to verify without rollback protection (repair or remove it)",
                state_path.display()
            )
        })?,
    };
    let opts = Options {
        now: jiff::Timestamp::now().as_second(),
        accepted: state.get(&key.key_id_hex()).copied(),
        production: args.production,
    };
    let result = verify::verify(&files, &key, &opts);
    let ok = result.failures.is_empty();
    if ok && let Some(v) = result.catalog_version {
        let entry = state.entry(key.key_id_hex()).or_insert(v);
        *entry = (*entry).max(v);
        write::write_atomic(
            &state_path,
            serde_json::to_string_pretty(&state)?.as_bytes(),
            Some(0o644),
        )
        .with_context(|| format!("recording the accepted version in {}", state_path.display()))?;
    }
    match args.format {
        ReportFormat::Json => {
            let report = messages::verify::Report {
                schema: messages::verify::SCHEMA,
                ok,
                catalog_version: result.catalog_version,
                expires: result.expires.as_deref(),
                key_id: &result.key_id,
                executors: result.executors,
                failures: result
                    .failures
                    .iter()
                    .map(|f| messages::verify::Failure {
                        kind: f.kind(),
                        message: f.to_string(),
                    })
                    .collect(),
            };
            out.line(&serde_json::to_string_pretty(&report)?)?;
        }
        ReportFormat::Human => {
            for f in &result.failures {
                out.line(&format!("error: {f}"))?;
            }
            if result
                .failures
                .iter()
                .any(|f| matches!(f, verify::Failure::Rollback { .. }))
            {
                out.line(&format!(
                    "note: {} remembers the newest catalog accepted for each key; pass another --state (or remove the key's entry) to accept an older catalog on purpose",
                    state_path.display()
                ))?;
            }
            if ok {
                out.line(&format!(
                    "verified {}: {} executors, catalog version {}, expires {}, key {}",
                    args.out.display(),
                    result.executors,
                    result.catalog_version.unwrap_or_default(),
                    result.expires.as_deref().unwrap_or("?"),
                    result.key_id
                ))?;
            } else {
                out.line(&format!(
                    "verification of {} failed: {}",
                    args.out.display(),
                    super::output::count(result.failures.len(), "problem")
                ))?;
            }
        }
    }
    out.flush()?;
    Ok(if ok { Status::Success } else { Status::Failure })
}

//! `skillc verify`: what a consuming runtime runs before it trusts a catalog. The signer's key
//! is pinned (`cli::pin`, `crate::trust`; README, "Security model"), never taken from the
//! folder being verified.

use std::path::{Path, PathBuf};

use crate::messages;

use super::project::Project;
use super::{Printer, ReportFormat, Status, pin};
use crate::emit;
use crate::trust;
use crate::verify::{self, Options};

/// Arguments of `skillc verify`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Whose key: --public-key FILE, else the project's `[verify] keys`, else the key recorded for the \
catalog's folder the first time it was verified (said loudly; another key there is refused, naming both). \
--production accepts only --public-key or `[verify] keys`. README, \"Security model\"."
)]
pub struct VerifyArgs {
    /// The catalog folder (default: the project's `[pipeline] out`, i.e. `out` at the root of
    /// the project around the current folder).
    pub out: Option<PathBuf>,
    /// The signer's public key, as given to you out of band: the catalog must be signed by it
    /// (default: the project's `[verify] keys`, else the key pinned for this folder on first
    /// use). A `skillc.pub` inside the folder only proves the folder is self-consistent.
    /// `--key` is another name of it.
    #[arg(long = "public-key", alias = "key", value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// Move this folder's first-use pin to the key with this id (a key rotation, checked out
    /// of band): the catalog must verify with that key; the rollback floor carries over.
    #[arg(long, value_name = "KEY_ID", value_parser = key_id)]
    pub accept_key: Option<String>,
    /// File remembering the key pinned for each catalog folder and the newest
    /// `catalog_version` accepted per folder and per key, for rollback protection (default:
    /// `$XDG_STATE_HOME/skillc/verify-state.json`, else `~/.local/state/skillc/verify-state.json`).
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// A release check: only a key given with --public-key or configured in `[verify] keys` (never a
    /// first-use pin, the folder's own key or a development key), and no skipped or not-run
    /// admission level.
    #[arg(long)]
    pub production: bool,
    /// Output format.
    #[arg(long, visible_alias = "message-format", value_enum, default_value_t = ReportFormat::Human)]
    pub format: ReportFormat,
}

/// `--accept-key`'s value: 16 hexadecimal digits.
fn key_id(text: &str) -> Result<String, String> {
    trust::parse_key_id(text)
}

/// The catalog folder: the one given (relative to the current folder), else the `[pipeline]
/// out` of the project around the current folder; without a `pipeline.toml`, the nearest
/// folder upwards whose `out/` holds a built catalog.
fn out_dir(given: Option<&Path>, project: &Project, cwd: &Path) -> PathBuf {
    if let Some(p) = given {
        return cwd.join(p);
    }
    let configured = project.root.join(&project.config.out);
    if project.root.join(crate::config::FILE_NAME).is_file() || configured.join(emit::CATALOG).is_file() {
        return configured;
    }
    cwd.ancestors()
        .map(|d| d.join(&project.config.out))
        .find(|o| o.join(emit::CATALOG).is_file())
        .unwrap_or(configured)
}

pub(crate) fn run(args: &VerifyArgs, out: &mut Printer) -> anyhow::Result<Status> {
    let cwd = std::env::current_dir()?;
    let project = super::project::load(&cwd, out)?;
    let dir = out_dir(args.out.as_deref(), &project, &cwd);
    let shown = pin::shown(&dir, &cwd);
    anyhow::ensure!(
        dir.is_dir(),
        "{shown}: no such folder (build a catalog with `skillc build`, or name its folder)"
    );
    if !dir.join(emit::CATALOG).is_file() {
        // A folder that fails verification (README, exit status 1), not a command that could
        // not run: what is missing, and what to do.
        let why = format!(
            "{shown} is not a catalog: it has no {}; build one with `skillc build`, or name the folder that holds one (`skillc verify DIR`)",
            emit::CATALOG
        );
        return failed(args, out, "missing", &why);
    }
    // The same reading as the catalog commands and `serve`: no link followed, sizes capped.
    // A build publishes a new generation by switching folders (`emit::publish`): a reading
    // during which the folder's identity changed straddled a switch, and is done once more.
    let before = emit::publish::identity(&dir);
    let files = match crate::catalog::read::read_tree(&dir) {
        Ok((files, _)) if emit::publish::identity(&dir) == before => files,
        Err(e) if emit::publish::identity(&dir) == before => return Err(e.into()),
        _ => crate::catalog::read::read_tree(&dir)?.0,
    };
    let anchor = pin::anchor(args.key.as_deref(), &dir, &project)?;
    let state_path = args.state.clone().unwrap_or_else(pin::default_state);
    // Held until the state is written: a concurrent verify reads what this one recorded.
    let _lock = pin::lock_state(&state_path)?;
    let mut state = pin::read_state(&state_path)?;
    let location = pin::location(&dir);
    // Who the folder says signed it; whether to believe it is the anchor's call — the same
    // decision every reader of a catalog makes (`catalog::read::Trust`), here with the
    // consumer's `--accept-key` and `--production`, and recorded.
    let signer = crate::catalog::read::tree_signer(&files);
    let ask = trust::Ask {
        accept: args.accept_key.as_deref(),
        production: args.production,
    };
    let decided = state.decide_folder((&location, &shown), signer.as_ref(), &anchor, &ask);
    let trusted = match decided {
        Err(refusal) => return refused(args, out, &refusal),
        // A catalog folder whose key file is gone or garbled does not verify (exit 1, and the
        // JSON report says why), whatever was pinned for it.
        Ok(None) => {
            return failed(
                args,
                out,
                "malformed",
                &format!(
                    "{shown} has no readable {}: restore it, or name the signer's public key with --public-key",
                    emit::PUBLIC_KEY
                ),
            );
        }
        Ok(Some(t)) => t,
    };
    let opts = Options {
        now: jiff::Timestamp::now().as_second(),
        accepted: trusted.floor,
        production: args.production,
    };
    let result = verify::verify(&files, &trusted.key, &opts);
    let ok = result.failures.is_empty();
    if ok && let Some(v) = result.catalog_version {
        state.record(&location, &trusted, v);
        pin::write_state(&state_path, &state)?;
        announce(out, &trusted, &shown, &state_path);
    }
    report(args, out, &result, &trusted, &shown, &state_path)?;
    Ok(if ok { Status::Success } else { Status::Failure })
}

/// Says, loudly, that a key was pinned on first use, or that a pin moved.
fn announce(out: &mut Printer, t: &trust::Trusted, shown: &str, state: &Path) {
    let id = t.key.key_id_hex();
    match t.how {
        trust::How::FirstUse => out.note(&format!(
            "warning: trusting key {id} for {shown} on first use (recorded in {}); a catalog there signed by another key will be refused",
            state.display()
        )),
        trust::How::Accepted | trust::How::Given | trust::How::Configured if t.replaces.is_some() => {
            out.note(&format!(
                "note: {shown} is now pinned to key {id}, replacing key {} (recorded in {})",
                t.replaces.as_deref().unwrap_or("?"),
                state.display()
            ));
        }
        _ => {}
    }
}

/// A catalog whose signer is not trusted: nothing else is checked, nothing recorded.
fn refused(args: &VerifyArgs, out: &mut Printer, r: &trust::Refusal) -> anyhow::Result<Status> {
    failed(args, out, r.kind(), &r.to_string())
}

/// A catalog refused before anything was checked (one reason, of `kind`): exit status 1, the
/// reason on standard error (JSON: the report on standard output).
fn failed(args: &VerifyArgs, out: &mut Printer, kind: &'static str, message: &str) -> anyhow::Result<Status> {
    match args.format {
        ReportFormat::Json => {
            let report = messages::verify::Report {
                schema: messages::verify::SCHEMA,
                ok: false,
                catalog_version: None,
                expires: None,
                key_id: None,
                executors: 0,
                trusted: None,
                failures: vec![messages::verify::Failure {
                    kind,
                    message: message.to_owned(),
                }],
            };
            out.line(&serde_json::to_string_pretty(&report)?)?;
        }
        ReportFormat::Human => out.note(&format!("error: {message}")),
    }
    out.flush()?;
    Ok(Status::Failure)
}

fn report(
    args: &VerifyArgs,
    out: &mut Printer,
    result: &verify::Verification,
    trusted: &trust::Trusted,
    shown: &str,
    state_path: &Path,
) -> anyhow::Result<()> {
    let ok = result.failures.is_empty();
    match args.format {
        ReportFormat::Json => {
            let report = messages::verify::Report {
                schema: messages::verify::SCHEMA,
                ok,
                catalog_version: result.catalog_version,
                expires: result.expires.as_deref(),
                key_id: Some(&result.key_id),
                executors: result.executors,
                trusted: Some(trusted.how.as_str()),
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
            // Why it is refused goes to standard error, as every error of skillc's; the
            // verdict line below is the report.
            for f in &result.failures {
                out.note(&format!("error: {f}"));
            }
            if result
                .failures
                .iter()
                .any(|f| matches!(f, verify::Failure::Rollback { .. }))
            {
                out.note(&rollback_note(state_path));
            }
            if ok {
                out.line(&format!(
                    "verified {shown}: {}, catalog version {}, expires {}, key {} ({})",
                    super::output::count(result.executors, "executor"),
                    result.catalog_version.unwrap_or_default(),
                    result.expires.as_deref().unwrap_or("?"),
                    result.key_id,
                    trusted_how(trusted.how)
                ))?;
            } else {
                out.line(&format!(
                    "verification of {shown} failed: {}",
                    super::output::count(result.failures.len(), "problem")
                ))?;
            }
        }
    }
    out.flush()?;
    Ok(())
}

/// What to do about a rollback refusal (`verify` and every reader of a catalog say it).
pub(crate) fn rollback_note(state: &Path) -> String {
    format!(
        "note: {} remembers the newest catalog accepted for each folder and key; pass another --state (or remove the entry) to accept an older catalog on purpose",
        state.display()
    )
}

/// How the key was trusted, in words.
fn trusted_how(how: trust::How) -> &'static str {
    match how {
        trust::How::Given => "given with --public-key",
        trust::How::Configured => "configured in [verify] keys",
        trust::How::Pinned => "pinned for this folder",
        trust::How::FirstUse => "trusted on first use",
        trust::How::Accepted => "accepted with --accept-key",
    }
}

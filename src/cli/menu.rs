//! `skillc menu`, `skillc menu calibrate` and `skillc playbook` (RUNTIME.md §1): the per-turn
//! menu of a verified catalog, the calibration of τ on a labelled battery, and the playbook
//! of one skill.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::{Subcommand, ValueEnum};

use super::{Printer, ReportFormat, Status};
use crate::catalog::menu::{self as catalog, Depth, MenuCatalog, OpenOptions};
use crate::catalog::read::Trust;
use crate::embed::Embedder as _;
use crate::menu::calibrate::{self, Scored};
use crate::menu::format::{self, ToolFormat};
use crate::menu::settings::{self, Calibration, MenuSettings};
use crate::menu::{DenseTurn, MenuError, Selection};

/// Output formats of `skillc menu`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MenuFormat {
    /// `{"menu": [...], "tool", "embedder", "recipe", "threshold", "warnings"}`.
    Json,
    /// The `<available_skills>` block of those skills (as `to-prompt`).
    Xml,
    /// The `load_playbook` tool in the Anthropic Messages API format (`null` when empty).
    Anthropic,
    /// The `load_playbook` tool in the OpenAI function format (`null` when empty).
    Openai,
}

/// How the catalog is opened (shared by `menu`, `calibrate` and `playbook`).
#[derive(Debug, Clone, clap::Args)]
pub struct CatalogArgs {
    /// The signer's public key: the catalog must be signed by it (default: the project's
    /// `[verify] keys`, else the key `skillc verify` pinned for this folder). `--key` is
    /// another name of it.
    #[arg(long = "public-key", alias = "key", value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// The state `skillc verify` records (pins and rollback floors; read only, default:
    /// verify's).
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// Run every check of `skillc verify` first, not only those of what the menu reads.
    #[arg(long)]
    pub full_verify: bool,
    /// The local model folder that embeds turns, when the catalog's vectors come from one
    /// (default: the folder `[menu] embedder` names, relative to the catalog's parent folder).
    #[arg(long, value_name = "DIR")]
    pub model: Option<PathBuf>,
}

/// Arguments of `skillc menu`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct MenuArgs {
    /// `calibrate`.
    #[command(subcommand)]
    pub command: Option<MenuCommand>,
    /// The catalog folder (default `out`).
    pub out: Option<PathBuf>,
    /// The agent's turn.
    #[arg(long, value_name = "TEXT")]
    pub turn: Option<String>,
    /// Only this agent's skills (`[agents.<id>]`), with its menu size.
    #[arg(long, value_name = "ID")]
    pub agent: Option<String>,
    /// Menu size, 1 to 6 (default 3, or the agent's).
    #[arg(long, value_name = "N")]
    pub size: Option<usize>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = MenuFormat::Json)]
    pub format: MenuFormat,
    /// Show each skill's pass, score, triggers and matched features (on standard error; in
    /// the document with `--format json`).
    #[arg(long)]
    pub explain: bool,
    /// Opening the catalog.
    #[command(flatten)]
    pub catalog: CatalogArgs,
}

/// `skillc menu` sub-commands.
#[derive(Debug, Subcommand)]
pub enum MenuCommand {
    /// Sweep τ over a labelled battery, print recall, precision and false offers per τ, and
    /// record the chosen τ for this catalog's embedder in `menu-calibration.toml`.
    Calibrate(CalibrateArgs),
}

/// Arguments of `skillc menu calibrate`.
#[derive(Debug, clap::Args)]
pub struct CalibrateArgs {
    /// The battery (`skillc.menu-battery/1` TOML).
    pub battery: PathBuf,
    /// The catalog folder (default `out`).
    #[arg(long, default_value = "out")]
    pub out: PathBuf,
    /// Largest share of no-skill turns that may get a menu at the chosen τ.
    #[arg(long, default_value_t = calibrate::MAX_FALSE_OFFERS, value_name = "RATE")]
    pub max_false_offers: f64,
    /// Print the figures, record nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Human)]
    pub format: ReportFormat,
    /// Opening the catalog.
    #[command(flatten)]
    pub catalog: CatalogArgs,
}

/// Arguments of `skillc playbook`.
#[derive(Debug, clap::Args)]
pub struct PlaybookArgs {
    /// The skill's name (a slug of the menu).
    pub slug: String,
    /// The catalog folder (default `out`).
    #[arg(default_value = "out")]
    pub out: PathBuf,
    /// Refuse the slug unless it is in this turn's menu (what a runtime's dispatcher does).
    #[arg(long, value_name = "TEXT")]
    pub menu_turn: Option<String>,
    /// With `--menu-turn`: the agent whose menu it is.
    #[arg(long, value_name = "ID")]
    pub agent: Option<String>,
    /// With `--menu-turn`: the menu size.
    #[arg(long, value_name = "N")]
    pub size: Option<usize>,
    /// The runtime's session id, recorded with the `skill.loaded` event when `[curator]
    /// record_loads = true` (default `cli`).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Opening the catalog.
    #[command(flatten)]
    pub catalog: CatalogArgs,
}

/// Opens the catalog in `dir`, trusting it exactly as `skillc verify` would (`cli::pin`:
/// `--public-key`, `[verify] keys`, the folder's pin, the rollback floors; nothing written). A
/// refused catalog is said as `verify` says it: `Err(status)`, exit 1.
fn open(dir: &Path, args: &CatalogArgs, out: &mut Printer) -> anyhow::Result<Result<MenuCatalog, Status>> {
    let cwd = std::env::current_dir()?;
    let project = super::project::load(&cwd, out)?;
    let opts = OpenOptions {
        trust: super::pin::reader_trust(
            args.key.as_deref(),
            args.state.as_deref(),
            &cwd.join(dir),
            &project,
            &cwd,
        )?,
        now: jiff::Timestamp::now().as_second(),
        depth: if args.full_verify { Depth::Full } else { Depth::Menu },
        model: args.model.clone(),
    };
    match MenuCatalog::open(dir, &opts) {
        Ok(c) => Ok(Ok(c)),
        Err(e) => refused(e, &opts.trust, "nothing is offered or loaded from it", out).map(Err),
    }
}

/// A refused catalog, said as `skillc verify` says it (exit 1); anything else is an error
/// (exit 2).
fn refused(e: catalog::CatalogError, trust: &Trust, what: &str, out: &mut Printer) -> anyhow::Result<Status> {
    use crate::catalog::OpenError;
    let e = match e {
        catalog::CatalogError::Refused { dir, failures } => OpenError::Refused { out: dir, failures },
        catalog::CatalogError::Trust(t) => OpenError::Trust(t),
        other => return Err(other.into()),
    };
    super::catalog::refused(&e, trust, what, out)
}

/// Reports a menu that cannot be given (a blank or oversized turn, an unknown agent, a size
/// out of range, no threshold) with the code `POST /api/menu` answers: exit status 2.
fn menu_failed(e: &MenuError, out: &mut Printer) -> Status {
    out.note(&format!("error[{}]: {e}", e.code()));
    Status::Error
}

/// Why a turn's menu was not given, once said: the exit status, and with `--format json` the
/// empty menu document whose `warnings` name each skill that does not verify.
struct NotGiven {
    status: Status,
    doc: Option<serde_json::Value>,
}

/// The menu of a turn over an opened catalog (embedding the turn when the catalog has dense
/// vectors; an unreachable embedder becomes a warning). A skill it would offer that does not
/// verify refuses the menu (RUNTIME.md: nothing is offered from an `out/` that `skillc verify`
/// refuses): verify's messages, exit 1.
fn selection(
    cat: &MenuCatalog,
    turn: &str,
    agent: Option<&str>,
    size: Option<usize>,
    out: &mut Printer,
) -> anyhow::Result<Result<Selection, NotGiven>> {
    let (skills, mut empty) = match cat.select(turn, agent, size) {
        Ok(s) => return Ok(Ok(s)),
        Err(catalog::CatalogError::Menu(e)) => {
            return Ok(Err(NotGiven {
                status: menu_failed(&e, out),
                doc: None,
            }));
        }
        Err(catalog::CatalogError::NotOffered { skills, empty, .. }) => (skills, empty),
        Err(e) => return Err(e.into()),
    };
    let mut warnings = Vec::new();
    for (slug, failures) in &skills {
        for f in failures {
            out.note(&format!("error: {f}"));
            warnings.push(format!("`{slug}` does not verify: {f}"));
        }
    }
    let names: Vec<String> = skills.iter().map(|(s, _)| format!("`{s}`")).collect();
    out.note(&format!(
        "error: the catalog in {} does not verify ({} of this turn's menu: {}): nothing is offered from it; run `skillc verify {}`",
        cat.dir().display(),
        super::output::count(skills.len(), "skill"),
        names.join(", "),
        cat.dir().display()
    ));
    empty.warnings.extend(warnings);
    Ok(Err(NotGiven {
        status: Status::Failure,
        doc: Some(format::json_doc(&empty, None)),
    }))
}

pub(crate) fn run(args: &MenuArgs, out: &mut Printer) -> anyhow::Result<Status> {
    if let Some(MenuCommand::Calibrate(c)) = &args.command {
        return run_calibrate(c, out);
    }
    let Some(turn) = args.turn.as_deref() else {
        anyhow::bail!("give the turn with --turn TEXT (or run `skillc menu calibrate BATTERY`)");
    };
    if let Err(e) = crate::menu::check_turn(turn) {
        return Ok(menu_failed(&e, out));
    }
    let dir = args.out.clone().unwrap_or_else(|| PathBuf::from("out"));
    let cat = match open(&dir, &args.catalog, out)? {
        Ok(c) => c,
        Err(status) => return Ok(status),
    };
    let sel = match selection(&cat, turn, args.agent.as_deref(), args.size, out)? {
        Ok(s) => s,
        Err(not) => {
            if let (Some(doc), MenuFormat::Json) = (not.doc, args.format) {
                out.write(&format::pretty(doc))?;
                out.flush()?;
            }
            return Ok(not.status);
        }
    };
    for w in &sel.warnings {
        out.note(&format!("warning: {w}"));
    }
    let matched: Vec<_> = if args.explain {
        sel.items.iter().map(|i| cat.menu.explain(turn, i.index)).collect()
    } else {
        Vec::new()
    };
    if args.explain && args.format != MenuFormat::Json {
        out.note(format::explain_text(&sel, &matched).trim_end());
    }
    let text = match args.format {
        MenuFormat::Json => format::pretty(format::json_doc(&sel, args.explain.then_some(matched.as_slice()))),
        MenuFormat::Xml => {
            let base = dir.canonicalize().unwrap_or_else(|_| dir.clone());
            format::available_skills(sel.items.iter().map(|i| {
                let loc = base.join("skills").join(&i.slug).join("SKILL.md");
                (
                    i.slug.as_str(),
                    i.description.as_str(),
                    loc.to_string_lossy().into_owned(),
                )
            }))
        }
        MenuFormat::Anthropic | MenuFormat::Openai => {
            let f = if args.format == MenuFormat::Anthropic {
                ToolFormat::Anthropic
            } else {
                ToolFormat::OpenAi
            };
            format::pretty(format::tool(&sel.items, f).unwrap_or(serde_json::Value::Null))
        }
    };
    out.write(&text)?;
    out.flush()?;
    // The command ends here: freeing the loaded index (10k skills' strings, one allocation
    // each) costs more than scoring the turn did, and the process's exit returns the memory
    // at once. Nothing of the catalog has a `Drop` with an effect besides freeing.
    std::mem::forget(cat);
    Ok(Status::Success)
}

/// The session recorded with `skill.loaded` when `--session` is not given.
const CLI_SESSION: &str = "cli";

/// Called when a playbook has been returned: records the curator's `skill.loaded` event
/// (RUNTIME.md §3) in the project's log when `[curator] record_loads = true`. A failure to
/// record is a warning: the playbook has been given.
fn on_loaded(slug: &str, session: Option<&str>, out: &mut Printer) {
    let recorded = std::env::current_dir()
        .map_err(anyhow::Error::from)
        .and_then(|cwd| super::project::load(&cwd, out))
        .and_then(|p| {
            let now = super::curate::now()?;
            let project = super::curate::curate_project(&p);
            Ok(crate::curate::record_load(
                &project,
                slug,
                session.unwrap_or(CLI_SESSION),
                now,
            )?)
        });
    if let Err(e) = recorded {
        out.note(&format!("warning: the load of `{slug}` was not recorded: {e:#}"));
    }
}

pub(crate) fn playbook(args: &PlaybookArgs, out: &mut Printer) -> anyhow::Result<Status> {
    if let Some(Err(e)) = args.menu_turn.as_deref().map(crate::menu::check_turn) {
        return Ok(menu_failed(&e, out));
    }
    let cat = match open(&args.out, &args.catalog, out)? {
        Ok(c) => c,
        Err(status) => return Ok(status),
    };
    if let Some(turn) = args.menu_turn.as_deref() {
        let sel = match selection(&cat, turn, args.agent.as_deref(), args.size, out)? {
            Ok(s) => s,
            Err(not) => return Ok(not.status),
        };
        for w in &sel.warnings {
            out.note(&format!("warning: {w}"));
        }
        if !sel.items.iter().any(|i| i.slug == args.slug) {
            let offered: Vec<&str> = sel.items.iter().map(|i| i.slug.as_str()).collect();
            out.note(&format!(
                "error: `{}` is not in this turn's menu ({}); a dispatcher refuses it",
                args.slug,
                if offered.is_empty() {
                    "the menu is empty".to_owned()
                } else {
                    format!("offered: {}", offered.join(", "))
                }
            ));
            return Ok(Status::Failure);
        }
    }
    let body = match cat.playbook(&args.slug) {
        Ok(b) => b,
        Err(catalog::CatalogError::Skill(why)) => {
            out.note(&format!("error: {why}"));
            return Ok(Status::Failure);
        }
        Err(e @ catalog::CatalogError::Refused { .. }) => {
            // A file of the skill differs from what the signed catalog lists: the trust was
            // decided, no rollback note.
            let status = refused(e, &Default::default(), "nothing is loaded from it", out)?;
            return Ok(status);
        }
        Err(e) => return Err(e.into()),
    };
    out.write(&body)?;
    out.flush()?;
    on_loaded(&args.slug, args.session.as_deref(), out);
    Ok(Status::Success)
}

/// The thresholds recorded in `menu-calibration.toml` (none when the file does not exist).
///
/// # Errors
/// When the file exists and cannot be read, is not UTF-8 (at its `file:line:column`) or does
/// not parse: a calibration that cannot be read is never taken for an absent one (`menu
/// calibrate` would replace it with one entry, losing the others).
fn read_calibrations(path: &Path) -> anyhow::Result<Vec<Calibration>> {
    match super::project::read_text_at(path, "record it again with `skillc menu calibrate BATTERY`")? {
        Some(text) => settings::parse_calibrations(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display())),
        None => Ok(Vec::new()),
    }
}

/// The menu settings a build writes into the index: `pipeline.toml`'s, with the threshold
/// for the build's embedder picked from `[menu] threshold` or `menu-calibration.toml`.
pub(crate) fn build_settings(root: &Path, configured: &MenuSettings) -> anyhow::Result<MenuSettings> {
    let path = root.join(settings::CALIBRATION_FILE);
    let recorded = read_calibrations(&path)?;
    let embedder = match &configured.embedder {
        Some(e) => crate::menu::dense::fused_id(&crate::build::dense::configured(e, root)?.id()),
        None => crate::menu::lexical::EMBEDDER.to_owned(),
    };
    let mut s = configured.clone();
    s.threshold = settings::pick_threshold(configured, &recorded, &embedder, crate::menu::doc::RECIPE)
        .map_err(|e| anyhow::anyhow!("{}: {e}", crate::config::FILE_NAME))?;
    Ok(s)
}

fn run_calibrate(args: &CalibrateArgs, out: &mut Printer) -> anyhow::Result<Status> {
    let text = std::fs::read_to_string(&args.battery)
        .with_context(|| format!("reading battery {}", args.battery.display()))?;
    let battery = calibrate::parse_battery(&text).map_err(|e| anyhow::anyhow!("{}: {e}", args.battery.display()))?;
    anyhow::ensure!(
        (0.0..=1.0).contains(&args.max_false_offers),
        "--max-false-offers is a rate between 0 and 1"
    );
    let cat = match open(&args.out, &args.catalog, out)? {
        Ok(c) => c,
        Err(status) => return Ok(status),
    };
    let menu = &cat.menu;
    let mut scored = Vec::with_capacity(battery.turns.len());
    let mut dense_down = None;
    for t in &battery.turns {
        let dense = cat.embed_turn(&t.text);
        if let DenseTurn::Unavailable(why) = &dense {
            dense_down = Some(why.clone());
        }
        scored.push(Scored {
            turn: t,
            candidates: menu.candidates(&t.text, None, &dense)?,
        });
    }
    if let Some(why) = dense_down {
        anyhow::bail!("cannot calibrate: the embedder is unavailable ({why})");
    }
    let embedder = match (menu.dense_embedder(), &menu.index().header.dense) {
        (Some(d), _) => crate::menu::dense::fused_id(&d.embedder),
        _ => crate::menu::lexical::EMBEDDER.to_owned(),
    };
    let recipe = menu.index().header.recipe.clone();
    let size = menu.index().header.settings.size;
    let all: Vec<&Scored<'_>> = scored.iter().collect();
    let rows: Vec<calibrate::Figures> = calibrate::grid(&scored)
        .into_iter()
        .map(|tau| calibrate::figures(menu, &all, tau, size))
        .collect();
    let tau = calibrate::choose(&rows, args.max_false_offers);
    let part =
        |held: bool| -> Vec<&Scored<'_>> { scored.iter().filter(|s| calibrate::held_out(s.turn) == held).collect() };
    let (tuning, held) = (part(false), part(true));
    let at = |turns: &[&Scored<'_>], tau: f64| calibrate::figures(menu, turns, tau, size);
    let chosen = tau.map(|t| (at(&all, t), at(&tuning, t), at(&held, t)));
    let ranking = (at(&all, 0.0), at(&tuning, 0.0), at(&held, 0.0));
    let recorded = match (&chosen, args.dry_run) {
        (Some((f, ..)), false) => Some(record(args, &text, &embedder, &recipe, f)?),
        _ => None,
    };
    if args.format == ReportFormat::Json {
        use crate::messages::menu::{CalibrationDoc, CalibrationSplit};
        let split = |(all, tuning, held_out): Three| CalibrationSplit { all, tuning, held_out };
        let doc = CalibrationDoc {
            schema: "skillc.menu-calibration/1",
            embedder,
            recipe,
            size,
            battery: args.battery.display().to_string(),
            max_false_offers: args.max_false_offers,
            rows,
            tau,
            at_tau: chosen.map(split),
            ranking: split(ranking),
            recorded: recorded.as_ref().map(|p| p.display().to_string()),
        };
        let doc = serde_json::to_value(doc)?;
        out.write(&format::pretty(doc))?;
    } else {
        print_calibration(out, &embedder, &recipe, &rows, tau, chosen.as_ref(), &ranking, args)?;
        if let Some(p) = &recorded {
            out.line(&format!(
                "recorded τ for {embedder} {recipe} in {}; rebuild the catalog (`skillc build`) to apply it",
                p.display()
            ))?;
        }
    }
    out.flush()?;
    Ok(if tau.is_some() {
        Status::Success
    } else {
        Status::Failure
    })
}

fn record(
    args: &CalibrateArgs,
    battery: &str,
    embedder: &str,
    recipe: &str,
    f: &calibrate::Figures,
) -> anyhow::Result<PathBuf> {
    let root = super::project::find_root(&std::env::current_dir()?);
    let path = root.join(settings::CALIBRATION_FILE);
    let existing = read_calibrations(&path)?;
    let new = Calibration {
        embedder: embedder.to_owned(),
        recipe: recipe.to_owned(),
        tau: f.tau,
        battery: args.battery.display().to_string(),
        battery_sha256: crate::util::sha256(battery.as_bytes()),
        max_false_offers: args.max_false_offers,
        recall_at_size: f.recall_at_size,
        false_offers: f.false_offers,
    };
    crate::emit::write::write_atomic(
        &path,
        settings::render_calibrations(existing, new).as_bytes(),
        Some(0o644),
    )
    .with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

type Three = (calibrate::Figures, calibrate::Figures, calibrate::Figures);

#[allow(clippy::too_many_arguments)]
fn print_calibration(
    out: &mut Printer,
    embedder: &str,
    recipe: &str,
    rows: &[calibrate::Figures],
    tau: Option<f64>,
    chosen: Option<&Three>,
    ranking: &Three,
    args: &CalibrateArgs,
) -> anyhow::Result<()> {
    let (l, n) = rows.first().map_or((0, 0), |r| r.turns);
    out.line(&format!(
        "calibrating {embedder} (recipe {recipe}) on {}: {l} labelled turns, {n} that need no skill; gate_triggerless on",
        args.battery.display()
    ))?;
    out.line("    τ  recall@1  recall@3  recall@size  precision  false offers")?;
    let mut last = -1.0;
    for r in rows {
        // Every 0.01, and the chosen τ.
        let show = Some(r.tau) == tau || ((r.tau * 100.0).round() - r.tau * 100.0).abs() < 1e-9;
        if show && r.tau != last {
            out.line(&format!(
                "{:.3}  {:>8.3}  {:>8.3}  {:>11.3}  {:>9.3}  {:>12.3}{}",
                r.tau,
                r.recall_at_1,
                r.recall_at_3,
                r.recall_at_size,
                r.precision,
                r.false_offers,
                if Some(r.tau) == tau { "  ← τ" } else { "" }
            ))?;
            last = r.tau;
        }
        if r.recall_at_size == 0.0 && r.false_offers == 0.0 {
            break;
        }
    }
    let kinds = |f: &Three| -> Vec<String> {
        f.0.recall_at_3_by_kind
            .iter()
            .map(|(k, v)| {
                let g = |x: &calibrate::Figures| x.recall_at_3_by_kind.get(k).copied().unwrap_or(0.0);
                format!("  {k:<11} {v:.3}   {:.3}   {:.3}", g(&f.1), g(&f.2))
            })
            .collect()
    };
    out.line("recall@3 by kind          all   tuning held-out")?;
    out.line("ranking (no threshold):")?;
    for k in kinds(ranking) {
        out.line(&k)?;
    }
    match (tau, chosen) {
        (Some(t), Some(c)) => {
            out.line(&format!(
                "at τ = {t:.3} (lowest τ with false offers ≤ {:.0} %): false offers {:.3} / {:.3} / {:.3}",
                args.max_false_offers * 100.0,
                c.0.false_offers,
                c.1.false_offers,
                c.2.false_offers
            ))?;
            for k in kinds(c) {
                out.line(&k)?;
            }
        }
        _ => out.line(&format!(
            "no τ keeps false offers at or below {:.0} %",
            args.max_false_offers * 100.0
        ))?,
    }
    Ok(())
}

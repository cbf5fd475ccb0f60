//! The command-line interface: argument definitions, resolution into settings, and one module
//! per sub-command. The only layer that uses `anyhow` and prints.
//!
//! Exit codes (stable): 0 success, 1 the input has errors (diagnostics, rejected plans, a
//! failed verification), 2 the command could not run (usage, IO, configuration).

mod baseline;
mod build;
mod catalog;
mod check;
mod curate;
mod events;
mod export;
mod fix;
mod github;
mod import;
mod keys;
mod manage;
mod menu;
mod migrate;
mod output;
mod pin;
mod plan;
mod progress;
mod project;
mod props;
mod reference;
mod sarif;
mod scan;
mod serve;
mod shell;
mod verify;
mod watch;

use std::io::{self, IsTerminal};
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

pub use output::Printer;

/// The most worker threads `-j` accepts: more only costs memory and scheduling.
pub const MAX_JOBS: usize = 256;

/// Process exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Status {
    /// Everything went well.
    Success = 0,
    /// The command ran and found errors in its input.
    Failure = 1,
    /// The command could not run: bad usage, IO failure, invalid configuration.
    Error = 2,
}

/// skillc compiles Agent Skills into a signed, reproducible catalog of executors.
#[derive(Debug, Parser)]
#[command(name = "skillc", version, about, long_about = None, propagate_version = true)]
#[command(
    after_help = "Exit status: 0 success, 1 errors found in the input, 2 the command could not run.\n\
Run `skillc explain CODE` for the long explanation of a diagnostic code."
)]
pub struct Args {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
    /// Number of worker threads (default: one per core).
    #[arg(short = 'j', long, global = true, value_name = "N")]
    pub jobs: Option<usize>,
    /// When to use colours in human-readable output.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
}

/// When to colour output.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ColorChoice {
    /// Colour when writing to a terminal and `NO_COLOR` is unset.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// Output formats of commands that report diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// rustc-style diagnostics with source snippets, then a summary line.
    Human,
    /// One line per diagnostic: `file:line:col: severity[CODE]: message`.
    Short,
    /// One JSON document (schema in docs/json.md).
    Json,
    /// SARIF 2.1.0, for code-scanning dashboards (GitHub code scanning, GitLab, Azure DevOps).
    Sarif,
    /// GitHub Actions workflow commands: one `::error file=…,line=…::message` annotation per line.
    Github,
}

/// Output formats of commands that print a report rather than diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// Readable lines and a summary.
    Human,
    /// One JSON document (schema in docs/json.md).
    Json,
}

/// The sub-commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate skills: frontmatter, YAML, fields, namespaces, limits.
    ///
    /// A PATH may be a skill folder, a SKILL.md file, or a folder searched recursively for
    /// skills (nested skills included). Without PATH, checks `skills/` when it exists, else the
    /// current folder.
    Check(CheckArgs),
    /// Security scan of skills: hidden Unicode, download-and-run, decode-and-run, credential
    /// reads, escaping links, binaries (every file; `--format json|sarif`).
    Scan(scan::ScanArgs),
    /// Show each skill's sub-commands and their canonical executor names, or why not.
    Plan(plan::PlanArgs),
    /// Build the signed catalog of executors into `out/` (the main job).
    Build(build::BuildArgs),
    /// Build, then rebuild after every change of the skills, pipeline.toml or the vocabulary.
    Watch(watch::WatchArgs),
    /// Verify a built catalog: signatures, hashes, completeness, expiry, rollback.
    Verify(verify::VerifyArgs),
    /// Import skills from folders, git repositories, URLs, agentskills.io or zip archives into
    /// the skills root; never overwrites, records each in `skillc.lock` (alias `install`).
    #[command(visible_alias = "install")]
    Import(import::ImportArgs),
    /// Serve the verified catalog over HTTP with a dashboard (`--watch` rebuilds and swaps it).
    Serve(serve::ServeArgs),
    /// List the skills of the verified catalog (status, tier, version, executors, findings).
    List(catalog::ListArgs),
    /// Show one skill of the verified catalog: frontmatter, executors, admission, findings,
    /// provenance (`--body` adds the playbook).
    Info(catalog::InfoArgs),
    /// Search the verified catalog with the menu's ranking.
    Search(catalog::SearchArgs),
    /// Archive a skill of the project (moved to `<skills root>-archive/`, never deleted;
    /// a pinned skill is refused).
    Remove(manage::RemoveArgs),
    /// Fetch locked sources again and update their skills (a skill edited since import is
    /// refused unless --force, which archives the local copy first).
    Update(manage::UpdateArgs),
    /// The curator: archive, consolidate and patch agent-written skills, never deleting,
    /// within a cost cap (`status`, `run`, `maybe`, `pin`, `unpin`, `archive`, `restore`,
    /// `list-archived`).
    Curate(curate::CurateArgs),
    /// The event log `.skillc/events.jsonl` that the curator reads (`record` for runtimes).
    Events(events::EventsArgs),
    /// Create a signing key pair (minisign format).
    Keygen(keys::KeygenArgs),
    /// Rewrite Hermes / OpenClaw skills into the GAIA format (`metadata.gaia`), with a review
    /// report; a dry run unless `--write` or `--out DIR`.
    Migrate(migrate::MigrateArgs),
    /// Export a skill for other agents: a deterministic zip (`<name>/SKILL.md` and its files),
    /// or the bare SKILL.md, with only the standard frontmatter keys at the top level.
    Export(export::ExportArgs),
    /// The skills that fit an agent's turn (at most 6), from a verified catalog, with the
    /// `load_playbook` tool: `--format json|xml|anthropic|openai`; `menu calibrate BATTERY`
    /// chooses the threshold τ.
    Menu(menu::MenuArgs),
    /// Print a skill's playbook (its SKILL.md body, verbatim) from a verified catalog;
    /// `--menu-turn TEXT` refuses a skill that turn's menu does not offer.
    Playbook(menu::PlaybookArgs),
    /// Print the vocabulary in use (the project's `vocabulary.toml`, else the built-in one);
    /// `skillc vocabulary --default > vocabulary.toml` starts a project vocabulary.
    Vocabulary {
        /// Print the built-in vocabulary even when the project has its own.
        #[arg(long)]
        default: bool,
        /// Output format: the file as written, or the vocabulary as read (JSON, docs/json.md).
        #[arg(long, value_enum, default_value_t = ReportFormat::Human)]
        format: ReportFormat,
    },
    /// Explain a diagnostic code (SK001, TR002, …); without a code, list them all.
    Explain {
        /// The code or rule name.
        code: Option<String>,
        /// Output format (JSON: docs/json.md).
        #[arg(long, value_enum, default_value_t = ReportFormat::Human)]
        format: ReportFormat,
    },
    /// Print a skill's frontmatter properties as JSON, as skillc read them.
    ReadProperties {
        /// A skill folder or its SKILL.md.
        path: PathBuf,
    },
    /// Print the `<available_skills>` XML block that agents put in their system prompt.
    ToPrompt {
        /// Skill folders or SKILL.md files.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(shell::CompletionsArgs),
    /// Print the manual page (roff), or write every page with `--out-dir`.
    Man(shell::ManArgs),
}

/// Arguments of `skillc check`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 no error (with --deny-warnings: no warning either), 1 errors found \
(after --fix: errors that remain; with --diff: something would change), 2 the command could not run.\n\
`skillc explain CODE` says whether and how --fix fixes a rule."
)]
pub struct CheckArgs {
    /// Skill folders, SKILL.md files, or folders to search.
    pub paths: Vec<PathBuf>,
    /// Apply the agentskills.io standard exactly (what the reference validator accepts).
    #[arg(long)]
    pub strict: bool,
    /// Output format.
    #[arg(long, visible_alias = "message-format", value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Print errors only (no warnings), then the summary line.
    #[arg(short, long)]
    pub quiet: bool,
    /// Treat warnings as errors for the exit status.
    #[arg(long)]
    pub deny_warnings: bool,
    /// Fix what can be fixed safely (SKILL.md edited in place, atomically; the body never
    /// changes), then report what remains. With `--strict`, also moves every non-standard key
    /// under `metadata`.
    #[arg(long, conflicts_with = "diff")]
    pub fix: bool,
    /// Print what `--fix` would change, as a unified diff, and write nothing.
    #[arg(long)]
    pub diff: bool,
    /// With `--fix`: rename a folder to its skill's valid `name` instead of setting `name` to the
    /// folder's name.
    #[arg(long)]
    pub rename_folder: bool,
    /// The PATHs are changed files (as pre-commit passes them): check the skills they belong to
    /// (the nearest folder upwards with a SKILL.md); files outside every skill are ignored.
    #[arg(long)]
    pub files: bool,
}

/// Runs a parsed command line.
///
/// # Errors
/// Any failure that prevents the command from running (IO, bad configuration); problems in the
/// input are reported and turned into [`Status::Failure`] instead.
pub fn run(args: Args) -> anyhow::Result<Status> {
    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        // no-color.org: NO_COLOR disables colour when set to a non-empty value.
        ColorChoice::Auto => io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    };
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(n) = args.jobs {
        anyhow::ensure!((1..=MAX_JOBS).contains(&n), "--jobs must be between 1 and {MAX_JOBS}");
        pool = pool.num_threads(n);
    }
    let pool = pool.build()?;
    let mut out = Printer::stdout(color);
    pool.install(|| match args.command {
        Command::Check(c) => check::run(&c, &mut out),
        Command::Plan(p) => plan::run(&p, &mut out),
        Command::Scan(s) => scan::run(&s, &mut out),
        Command::Build(b) => build::run(&b, &mut out),
        Command::Watch(w) => watch::run(&w, &mut out),
        Command::Verify(v) => verify::run(&v, &mut out),
        Command::Import(i) => import::run(&i, &mut out),
        Command::Serve(s) => serve::run(&s, &mut out),
        Command::List(l) => catalog::list(&l, &mut out),
        Command::Info(i) => catalog::info(&i, &mut out),
        Command::Search(s) => catalog::search(&s, &mut out),
        Command::Remove(r) => manage::remove(&r, &mut out),
        Command::Update(u) => manage::update(&u, &mut out),
        Command::Curate(c) => curate::run(&c, &mut out),
        Command::Events(e) => events::run(&e, &mut out),
        Command::Keygen(k) => keys::keygen(&k, &mut out),
        Command::Migrate(m) => migrate::run(&m, &mut out),
        Command::Export(e) => export::run(&e, &mut out),
        Command::Menu(m) => menu::run(&m, &mut out),
        Command::Playbook(p) => menu::playbook(&p, &mut out),
        Command::ReadProperties { path } => props::read_properties(&path, &mut out),
        Command::ToPrompt { paths } => props::to_prompt(&paths, &mut out),
        Command::Explain { code, format } => reference::explain(code.as_deref(), format, &mut out),
        Command::Completions(c) => shell::completions(&c, &mut out),
        Command::Man(m) => shell::man(&m, &mut out),
        Command::Vocabulary { default, format } => reference::vocabulary(default, format, &mut out),
    })
}

/// Whether an error is a closed output pipe (`skillc check | head`), which is not a failure.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

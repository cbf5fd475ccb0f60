//! `skillc completions SHELL` and `skillc man`: shell completion scripts (clap_complete) and
//! manual pages (roff, clap_mangen), generated from the same argument definitions as `--help`,
//! so they never drift from the real command line.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::CommandFactory as _;

use super::{Args, Printer, Status};
use crate::emit::write::write_atomic;

/// A shell that `skillc completions` writes a script for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Shell {
    /// Bash (`source <(skillc completions bash)`).
    Bash,
    /// Zsh (a `_skillc` file on `$fpath`).
    Zsh,
    /// Fish (`~/.config/fish/completions/skillc.fish`).
    Fish,
    /// Elvish.
    Elvish,
    /// PowerShell.
    Powershell,
}

impl From<Shell> for clap_complete::Shell {
    fn from(s: Shell) -> clap_complete::Shell {
        match s {
            Shell::Bash => clap_complete::Shell::Bash,
            Shell::Zsh => clap_complete::Shell::Zsh,
            Shell::Fish => clap_complete::Shell::Fish,
            Shell::Elvish => clap_complete::Shell::Elvish,
            Shell::Powershell => clap_complete::Shell::PowerShell,
        }
    }
}

/// Arguments of `skillc completions`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Install:\n  \
bash  skillc completions bash > ~/.local/share/bash-completion/completions/skillc\n  \
zsh   skillc completions zsh > \"${fpath[1]}/_skillc\"\n  \
fish  skillc completions fish > ~/.config/fish/completions/skillc.fish")]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Arguments of `skillc man`.
#[derive(Debug, clap::Args)]
#[command(after_help = "View it with `skillc man | man -l -`; install the pages with \
`skillc man --out-dir ~/.local/share/man/man1`.")]
pub struct ManArgs {
    /// The sub-command whose page to print (`check` prints skillc-check(1)); default the
    /// top-level page, skillc(1).
    pub command: Option<String>,
    /// Write every page (skillc.1, skillc-check.1, …) into this folder instead of printing one.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    pub out_dir: Option<PathBuf>,
}

/// The whole command line, built (sub-commands know their `skillc-…` display names).
fn command() -> clap::Command {
    let mut cmd = Args::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

pub(crate) fn completions(args: &CompletionsArgs, out: &mut Printer) -> anyhow::Result<Status> {
    let mut cmd = command();
    let mut buf = Vec::new();
    clap_complete::generate(clap_complete::Shell::from(args.shell), &mut cmd, "skillc", &mut buf);
    out.write(&String::from_utf8(buf).context("the completion script is not UTF-8")?)?;
    out.flush()?;
    Ok(Status::Success)
}

/// One page, rendered: its file name (`skillc-check.1`) and roff text.
fn render(cmd: clap::Command) -> anyhow::Result<(String, Vec<u8>)> {
    let man = clap_mangen::Man::new(cmd).manual("skillc manual");
    let mut buf = Vec::new();
    man.render(&mut buf).context("rendering the manual page")?;
    Ok((man.get_filename(), buf))
}

/// Every page: the top-level command and each sub-command, depth first.
fn pages(cmd: &clap::Command, out: &mut Vec<(String, Vec<u8>)>) -> anyhow::Result<()> {
    out.push(render(cmd.clone())?);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        pages(sub, out)?;
    }
    Ok(())
}

pub(crate) fn man(args: &ManArgs, out: &mut Printer) -> anyhow::Result<Status> {
    let cmd = command();
    if let Some(dir) = &args.out_dir {
        let mut all = Vec::new();
        pages(&cmd, &mut all)?;
        for (name, bytes) in &all {
            write_atomic(&dir.join(name), bytes, Some(0o644))?;
        }
        out.note(&format!(
            "wrote {} to {}",
            super::output::count(all.len(), "manual page"),
            dir.display()
        ));
        return Ok(Status::Success);
    }
    let page = match &args.command {
        None => cmd,
        Some(name) => cmd
            .find_subcommand(name)
            .cloned()
            .with_context(|| format!("no sub-command `{name}`; `skillc --help` lists them"))?,
    };
    let (_, bytes) = render(page)?;
    out.write(&String::from_utf8(bytes).context("the manual page is not UTF-8")?)?;
    out.flush()?;
    Ok(Status::Success)
}

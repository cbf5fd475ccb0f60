//! Extraction: the sub-commands a skill exposes, with their arguments (PRODUCT.md,
//! "Sub-commands: where they come from").
//!
//! Sources, in order: typed `metadata.gaia.tools`; then the Markdown body — fenced shell
//! blocks, inline code in list items, and table rows whose first cell is code. A command line
//! is an invocation when its program is the skill's own script (under any prefix or launcher),
//! a shell variable aliased to such a script, or a binary the skill declares. The sub-command
//! is the run of leading plain words (at most three) before the first flag, placeholder or
//! value; the arguments are the flags and positionals seen across all its invocations.
//! A skill without sub-commands is instruction-only: no plan, not an error.
//!
//! Rooms: [`model`] (the data), [`markdown`] (command lines of the body), [`shell`] (words),
//! [`resolve`] (which program a line runs), [`args`] (arguments and value shapes); this file
//! groups invocations into sub-commands.

mod args;
mod markdown;
pub mod model;
mod resolve;
pub mod shell;
mod words;

use std::collections::{BTreeMap, HashMap};
use std::ops::Not;

use crate::db::{Settings, SkillSource};
use crate::diag::LineIndex;
use crate::skill::{self, validate::Analysis};
use args::merge_args;
use markdown::{Body, Candidate};
pub use model::{Arg, Extraction, Program, SubCommand};
use resolve::EXCLUDED_FIRST_WORDS;
use resolve::{Resolver, assignment, variable_name};
use shell::Word;
use words::{Split, is_command_placeholder, is_command_word, lead_words};

/// Extracts the sub-commands of a skill.
#[salsa::tracked(returns(ref))]
pub fn extract_skill(db: &dyn salsa::Database, skill: SkillSource, settings: Settings) -> Extraction {
    let analysis = skill::analyze_skill(db, skill, settings);
    let files: Vec<String> = skill.files(db).iter().map(|f| f.rel_path(db).clone()).collect();
    let text = skill
        .skill_md(db)
        .and_then(|f| f.contents(db).bytes().and_then(|b| std::str::from_utf8(b).ok()));
    extract(analysis, text.unwrap_or_default(), &files, skill.dir_name(db))
}

/// Extraction over already-read parts (pure; used by the query and by tests). `dir_name` is
/// the skill's folder name (a program named like it is the skill's own).
pub fn extract(analysis: &Analysis, text: &str, files: &[String], dir_name: &str) -> Extraction {
    let mut out = gaia_tools(analysis, text, files);
    let body = match &analysis.body {
        Some(b) if b.end <= text.len() => markdown::read(text, b.start),
        _ => Body::default(),
    };
    let bins = resolve::skill_bins(analysis, &body, dir_name);
    let absent = resolve::absent_scripts(files, &body);
    let skill_name = analysis
        .model
        .name
        .as_ref()
        .map(|n| n.value.as_str())
        .unwrap_or(dir_name);
    let mut ex = Extractor {
        resolver: Resolver { files, bins, absent },
        skill_names: [skill_name.to_owned(), dir_name.to_owned()],
        aliases: HashMap::new(),
        lines: Vec::new(),
        unresolved: Vec::new(),
        usage: Vec::new(),
    };
    ex.scan(&body);
    out.extend(ex.finish(&body.candidates));
    Extraction {
        subcommands: out,
        title: body.title,
    }
}

/// Each typed `metadata.gaia.tools` entry is a sub-command, with exactly its parameters.
fn gaia_tools(analysis: &Analysis, text: &str, files: &[String]) -> Vec<SubCommand> {
    let Some(g) = &analysis.model.gaia else {
        return Vec::new();
    };
    let module = if files.iter().any(|f| f == "tools.py") {
        "tools.py"
    } else {
        ""
    };
    g.tools
        .iter()
        .map(|tool| SubCommand {
            words: tool
                .name
                .split('_')
                .filter(|w| !w.is_empty())
                .map(str::to_owned)
                .collect(),
            program: Program::Tool {
                module: module.to_owned(),
                function: tool.name.clone(),
            },
            args: tool
                .params
                .iter()
                .map(|p| Arg {
                    name: p.name.clone(),
                    ty: p.ty,
                    required: p.required,
                    flag: None,
                    position: None,
                    description: p.description.clone(),
                    default: p.default.clone(),
                })
                .collect(),
            source_section: "metadata.gaia.tools".into(),
            line: LineIndex::new(text).pos(text, tool.span.start).line,
            invocations: 1,
            description: tool.description.clone(),
            context: None,
            aliases: Vec::new(),
            free_text: false,
        })
        .collect()
}

/// A command line that runs one of the skill's programs.
struct Line {
    program: Program,
    /// Every word after the program.
    args: Vec<Word>,
    /// The candidate it comes from.
    cand: usize,
}

struct Extractor<'a> {
    resolver: Resolver<'a>,
    /// The skill's name and folder name.
    skill_names: [String; 2],
    aliases: HashMap<String, Vec<Word>>,
    lines: Vec<Line>,
    /// List items and table rows that name no program (`add "text"` under a Commands
    /// heading): candidates for a command list, with their words.
    unresolved: Vec<(usize, Vec<Word>)>,
    /// Every other command line's words after its first, for the placeholder rule.
    usage: Vec<Vec<Word>>,
}

impl Extractor<'_> {
    fn scan(&mut self, body: &Body) {
        for (i, c) in body.candidates.iter().enumerate() {
            let text = c.text.trim();
            let text = text.strip_prefix("$ ").unwrap_or(text);
            for cmd in shell::simple_commands(shell::tokenize(text)) {
                self.scan_command(cmd, i, c);
            }
        }
        // `Usage: tool <command> [args]` lines document the command slot too.
        for u in &body.usage {
            if let Some(cmd) = shell::simple_commands(shell::tokenize(u)).into_iter().next()
                && cmd.len() > 1
            {
                self.usage.push(cmd[1..].to_vec());
            }
        }
        self.command_lists(body);
    }

    fn scan_command(&mut self, mut words: Vec<Word>, i: usize, c: &Candidate) {
        // `export X=…` / `alias x='…'` / `X=…` define aliases; `X=… cmd` sets env for cmd.
        if words
            .first()
            .is_some_and(|w| !w.quoted && (w.text == "export" || w.text == "alias"))
        {
            words.remove(0);
        }
        resolve::strip_wrappers(&mut words);
        while let Some(first) = words.first() {
            let Some((name, value)) = assignment(&first.text) else {
                break;
            };
            if words.len() == 1 {
                let value_words: Vec<Word> = shell::simple_commands(shell::tokenize(value))
                    .into_iter()
                    .next()
                    .unwrap_or_default();
                if self.resolver.resolve(&value_words).is_some() {
                    self.aliases.insert(name.to_owned(), value_words);
                }
                return;
            }
            words.remove(0);
        }
        // Substitute an alias in first position, or after a launcher (`python3 $MAPS search`).
        let at = usize::from(
            words.len() > 1 && words.first().is_some_and(|w| resolve::is_launcher(&w.text)) && {
                let v = variable_name(&words[1].text);
                v.is_some_and(|v| self.aliases.contains_key(v))
            },
        );
        if let Some(first) = words.get(at)
            && let Some(var) = variable_name(&first.text)
            && let Some(expansion) = self.aliases.get(var)
        {
            let mut w = expansion.clone();
            // `python3 $MAPS` where MAPS is a bare path: keep the launcher.
            if at == 1 && w.len() == 1 {
                w.insert(0, words[0].clone());
            }
            w.extend(words.drain(at + 1..));
            words = w;
        }
        match self.resolver.resolve(&words) {
            Some((program, at)) => self.lines.push(Line {
                program,
                args: words[at..].to_vec(),
                cand: i,
            }),
            None => {
                if c.listed && words.first().is_some_and(is_command_word) {
                    self.unresolved.push((i, words.clone()));
                }
                if words.len() > 1 {
                    self.usage.push(words[1..].to_vec());
                }
            }
        }
    }

    /// Command lists without a program: list items or table rows of bare command words
    /// (`add "text"`) belong to the program of a `prog <command> [args]` line, or to the
    /// skill's main program when they sit under a "Commands" heading.
    fn command_lists(&mut self, body: &Body) {
        if self.unresolved.is_empty() {
            return;
        }
        let slot = self
            .lines
            .iter()
            // `prog <command> [args]`; not `prog <command> --help`, which only points at help.
            .find(|l| {
                l.args.first().is_some_and(is_command_placeholder)
                    && !l.args[1..].iter().any(|w| matches!(w.text.as_str(), "--help" | "-h"))
            })
            .map(|l| (l.program.clone(), &body.candidates[l.cand]));
        let main = self.main_program();
        for (i, words) in std::mem::take(&mut self.unresolved) {
            let c = &body.candidates[i];
            let program = match (&slot, &main) {
                (Some((p, at)), _) if c.under_commands || (c.line > at.line && c.section == at.section) => {
                    Some(p.clone())
                }
                (_, Some(p)) if c.under_commands => Some(p.clone()),
                _ => None,
            };
            // A general tool's name is not a command word of the list (`git status`).
            if let Some(program) = program
                && !resolve::is_general(&words[0].text)
            {
                self.lines.push(Line {
                    program,
                    args: words,
                    cand: i,
                });
            }
        }
        self.lines.sort_by_key(|l| l.cand);
    }

    /// The program most lines run, when one program runs more than any other.
    fn main_program(&self) -> Option<Program> {
        let mut counts: BTreeMap<&Program, usize> = BTreeMap::new();
        for l in &self.lines {
            *counts.entry(&l.program).or_default() += 1;
        }
        let mut ranked: Vec<(&Program, usize)> = counts.into_iter().collect();
        ranked.sort_by_key(|r| std::cmp::Reverse(r.1));
        match ranked.as_slice() {
            [(p, _)] => Some((*p).clone()),
            [(p, a), (_, b), ..] if a > b => Some((*p).clone()),
            _ => None,
        }
    }

    /// Groups the lines into sub-commands: words settled, single-purpose programs, modes and
    /// aliases (see the module documentation).
    fn finish(self, candidates: &[Candidate]) -> Vec<SubCommand> {
        let mut programs: Vec<&Program> = Vec::new();
        let mut splits: Vec<Split> = Vec::new();
        let mut kept: Vec<&Line> = Vec::new();
        for l in &self.lines {
            let n = lead_words(&l.args);
            let maintenance = l
                .args
                .first()
                .is_some_and(|w| n > 0 && EXCLUDED_FIRST_WORDS.contains(&w.text.as_str()));
            let only_help = l.args.len() > n
                && l.args[n..]
                    .iter()
                    .all(|w| matches!(w.text.as_str(), "--help" | "-h" | "--version" | "-V" | "help"));
            // A list item naming a program without running it (`Use `markitdown` to…`,
            // `scripts/x.py` in a file list) is a mention, unless its text says to run it.
            let c = &candidates[l.cand];
            let mention =
                c.listed && l.args.is_empty() && !c.under_commands && !c.description.as_deref().is_some_and(says_run);
            // Prose that says not to run it ("you do not need to run `gws auth login`").
            let declined = c.listed && c.description.as_deref().is_some_and(says_not_to_run);
            // `tool <command> [args]` documents the command slot; it is not an invocation.
            let usage_line = l.args.get(n).is_some_and(is_command_placeholder);
            if maintenance || only_help || usage_line || mention || declined {
                continue;
            }
            let group = match programs.iter().position(|p| **p == l.program) {
                Some(g) => g,
                None => {
                    programs.push(&l.program);
                    programs.len() - 1
                }
            };
            splits.push(Split {
                group,
                args: l.args.clone(),
                n,
            });
            kept.push(l);
        }
        words::settle(&mut splits, &self.usage);
        // A program run with sub-command words is a CLI: its lines without words are help or
        // defaults. A program never run with words is one single-purpose command.
        let worded: Vec<bool> = (0..programs.len())
            .map(|g| splits.iter().any(|s| s.group == g && s.n > 0))
            .collect();
        // (program group, sub-command words) → the lines of that sub-command.
        type Groups = Vec<((usize, Vec<String>), Vec<usize>)>;
        let mut groups: Groups = Vec::new();
        for (i, s) in splits.iter().enumerate() {
            if s.n == 0 && (worded[s.group] || !self.single_purpose(programs[s.group])) {
                continue;
            }
            let key = (
                s.group,
                s.args[..s.n].iter().map(|w| w.text.clone()).collect::<Vec<_>>(),
            );
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => v.push(i),
                None => groups.push((key, vec![i])),
            }
        }
        let mut out: Vec<(SubCommand, Option<&Candidate>)> = Vec::new();
        for ((g, words), idx) in groups {
            for (mode, members) in modes(&idx, &splits) {
                let mut words = words.clone();
                words.extend(mode);
                let rests: Vec<&[Word]> = members
                    .iter()
                    .map(|&i| {
                        let s = &splits[i];
                        let skip = s.n + usize::from(words.len() > s.n);
                        &s.args[skip.min(s.args.len())..]
                    })
                    .collect();
                let cands: Vec<&Candidate> = members.iter().map(|&i| &candidates[kept[i].cand]).collect();
                let first = cands[0];
                out.push((
                    SubCommand {
                        words,
                        program: programs[g].clone(),
                        args: merge_args(&rests),
                        source_section: first.section.clone(),
                        line: first.line,
                        invocations: u32::try_from(members.len()).unwrap_or(u32::MAX),
                        description: cands.iter().find_map(|c| c.description.clone()),
                        context: cands.iter().find_map(|c| c.context.clone()),
                        aliases: Vec::new(),
                        free_text: rests
                            .iter()
                            .any(|r| r.iter().any(|w| w.quoted && w.text.trim().contains(' '))),
                    },
                    first.listed.then_some(first),
                ));
            }
        }
        merge_aliases(out)
    }

    /// Whether a program run without sub-command words is a command of its own: one of the
    /// skill's scripts (not a setup or install script), or a binary named like the skill.
    fn single_purpose(&self, program: &Program) -> bool {
        match program {
            Program::Script { path, .. } => {
                let file = path.rsplit('/').next().unwrap_or(path);
                let stem = file.split('.').next().unwrap_or(file).to_ascii_lowercase();
                !stem
                    .split(['-', '_'])
                    .any(|w| matches!(w, "setup" | "install" | "uninstall" | "bootstrap" | "requirements"))
            }
            Program::Binary { name } => self
                .skill_names
                .iter()
                .any(|s| s == name || s.split('-').any(|p| p == name) || name.split('-').any(|p| p == s)),
            Program::Tool { .. } => false,
        }
    }
}

/// Text that tells not to run a command ("do not need to run", "skip", "never run").
fn says_not_to_run(text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    [
        "not need",
        "don't need",
        "no need",
        "never run",
        "do not run",
        "don't run",
        "skip ",
        "instead of",
        "avoid ",
    ]
    .iter()
    .any(|p| t.contains(p))
}

/// Text that tells to run a command (`Run`, `execute`, `call`).
fn says_run(text: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric()).any(|w| {
        matches!(
            w.to_ascii_lowercase().as_str(),
            "run" | "runs" | "execute" | "invoke" | "launch" | "call"
        )
    })
}

/// Distinct operations selected by a flag (`--list-plugins`, `--check`, `--revoke`): lines whose
/// first argument is a flag naming an action (its first word a verb, not one that only
/// introduces an option: `--use-…`, `--dry-run`) are sub-commands of their own, with the
/// flag as their last word; the other lines stay the plain sub-command. Returns (the mode's
/// words, its lines).
fn modes(idx: &[usize], splits: &[Split]) -> Vec<(Vec<String>, Vec<usize>)> {
    let lexicon = crate::vocab::builtin();
    let action_of = |w: &str| lexicon.action(&w.to_ascii_lowercase()).map(|m| m.name().to_owned());
    let mode_flag = |i: usize| -> Option<String> {
        let s = &splits[i];
        let w = s.args.get(s.n)?;
        let f = w.text.split('=').next().unwrap_or(&w.text);
        let verb = f
            .strip_prefix("--")?
            .split('-')
            .next()
            .filter(|v| !matches!(*v, "use" | "with" | "run" | "try" | "no" | "skip" | "dry"))
            .and_then(action_of);
        // A flag with a value is an option of the operation (`--count 5`); a mode stands alone.
        let boolean =
            w.text.contains('=').not() && s.args.get(s.n + 1).is_none_or(|n| !n.quoted && n.text.starts_with('-'));
        (!w.quoted && f.len() > 3 && verb.is_some() && boolean).then(|| f.to_owned())
    };
    let mut plain: Vec<usize> = Vec::new();
    let mut parts: Vec<(Vec<String>, Vec<usize>)> = Vec::new();
    for &i in idx {
        match mode_flag(i) {
            Some(f) => match parts.iter_mut().find(|(k, _)| k.first() == Some(&f)) {
                Some((_, v)) => v.push(i),
                None => parts.push((vec![f], vec![i])),
            },
            None => plain.push(i),
        }
    }
    if !plain.is_empty() || parts.is_empty() {
        parts.insert(0, (Vec::new(), plain));
    }
    parts
}

/// Sub-commands documented together in one list item or table row (`` `done` / `complete` ``)
/// with one program are one command with aliases.
fn merge_aliases(found: Vec<(SubCommand, Option<&Candidate>)>) -> Vec<SubCommand> {
    let mut out: Vec<(SubCommand, Option<&Candidate>)> = Vec::new();
    for (sc, listed) in found {
        let same_row = |other: &(SubCommand, Option<&Candidate>)| {
            matches!((listed, other.1), (Some(a), Some(b))
                if a.line == b.line && a.description == b.description && a.section == b.section)
                && other.0.program == sc.program
                && !other.0.words.is_empty()
                && !sc.words.is_empty()
        };
        match out.iter_mut().find(|o| same_row(o)) {
            Some(o) => o.0.aliases.push(sc.words),
            None => out.push((sc, listed)),
        }
    }
    out.into_iter().map(|(sc, _)| sc).collect()
}

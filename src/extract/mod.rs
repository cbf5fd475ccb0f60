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

pub mod shell;

use std::collections::{BTreeMap, HashMap};

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

use crate::db::{Settings, SkillSource};
use crate::diag::LineIndex;
use crate::skill::gaia::ParamType;
use crate::skill::{self, validate::Analysis};
use shell::Word;

/// Maximum number of words in a sub-command (`gog gmail messages search`).
pub const MAX_WORDS: usize = 3;

/// How a sub-command is run.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Program {
    /// One of the skill's own files, run by `interpreter` (empty: executed directly).
    Script {
        /// Path relative to the skill folder (`scripts/google_api.py`).
        path: String,
        /// `python3`, `bash`, `node`, … or empty.
        interpreter: String,
    },
    /// A binary the skill declares (`requires.bins`, `prerequisites.commands`).
    Binary {
        /// The command name (`gog`).
        name: String,
    },
    /// A typed GAIA tool: a Python function of the skill's `tools.py`.
    Tool {
        /// The module file, relative to the skill folder (`tools.py`).
        module: String,
        /// The function name.
        function: String,
    },
}

impl Program {
    /// A short human description: `scripts/x.py`, `gog`, `tools.py:search_web`.
    pub fn describe(&self) -> String {
        match self {
            Program::Script { path, .. } => path.clone(),
            Program::Binary { name } => name.clone(),
            Program::Tool { module, function } => format!("{module}:{function}"),
        }
    }
}

/// An argument of a sub-command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    /// Name used in the manifest and the wrapper's JSON input (`snake_case`).
    pub name: String,
    /// Inferred or declared type.
    pub ty: ParamType,
    /// Present in every invocation (or declared required).
    pub required: bool,
    /// The flag as written (`--max`), for flags.
    pub flag: Option<String>,
    /// The position among positionals, for positionals.
    pub position: Option<usize>,
    /// A description, when the source gives one.
    pub description: Option<String>,
    /// A default value, when the source declares one.
    pub default: Option<serde_json::Value>,
}

/// A sub-command found in a skill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubCommand {
    /// The sub-command words (`["gmail", "search"]`); a GAIA tool's name split on `_`.
    pub words: Vec<String>,
    /// How it is run.
    pub program: Program,
    /// Arguments merged across every invocation.
    pub args: Vec<Arg>,
    /// The body heading it was first found under (`Gmail`), or `metadata.gaia.tools`.
    pub source_section: String,
    /// Line of the first invocation in SKILL.md.
    pub line: u32,
    /// Number of invocations seen.
    pub invocations: u32,
    /// A description, when the source gives one (GAIA tools).
    pub description: Option<String>,
}

impl SubCommand {
    /// The sub-command as written (`gmail search`, or the GAIA tool name).
    pub fn display(&self) -> String {
        match &self.program {
            Program::Tool { function, .. } => function.clone(),
            _ => self.words.join(" "),
        }
    }
}

/// The sub-commands of one skill, in order of first appearance.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Extraction {
    /// The sub-commands.
    pub subcommands: Vec<SubCommand>,
}

/// Programs that are never sub-command sources: installers, package managers, downloaders.
pub const EXCLUDED_PROGRAMS: &[&str] = &[
    "npm", "npx", "pnpm", "pnpx", "yarn", "bunx", "pip", "pip3", "pipx", "uv", "uvx", "poetry", "conda", "mamba",
    "brew", "apt", "apt-get", "dnf", "yum", "pacman", "apk", "snap", "port", "choco", "winget", "scoop", "curl",
    "wget", "cargo", "go", "gem", "composer", "cd", "echo", "export", "source", "sudo", "git", "jq", "yq", "grep",
    "rg", "sed", "awk", "cat", "ls", "find", "xargs", "make", "tar", "unzip", "ssh", "scp", "rsync", "open", "python",
    "python3", "node", "bash", "sh", "zsh", "docker",
];

/// First words that make an invocation an installer or tool maintenance, never a sub-command.
pub const EXCLUDED_FIRST_WORDS: &[&str] = &[
    "install",
    "uninstall",
    "reinstall",
    "upgrade",
    "self-update",
    "completion",
    "completions",
    "version",
    "help",
];

/// Interpreters that run a script given as their first non-option argument.
const LAUNCHERS: &[&str] = &[
    "python", "python3", "bash", "sh", "zsh", "node", "deno", "ruby", "perl", "tsx", "ts-node",
];

/// Extracts the sub-commands of a skill.
#[salsa::tracked(returns(ref))]
pub fn extract_skill(db: &dyn salsa::Database, skill: SkillSource, settings: Settings) -> Extraction {
    let analysis = skill::analyze_skill(db, skill, settings);
    let files: Vec<String> = skill.files(db).iter().map(|f| f.rel_path(db).clone()).collect();
    let text = skill
        .skill_md(db)
        .and_then(|f| f.contents(db).bytes().and_then(|b| std::str::from_utf8(b).ok()));
    extract(analysis, text.unwrap_or_default(), &files)
}

/// Extraction over already-read parts (pure; used by the query and by tests).
pub fn extract(analysis: &Analysis, text: &str, files: &[String]) -> Extraction {
    let mut ex = Extractor::new(analysis, files);
    if let Some(g) = &analysis.model.gaia {
        let module = if files.iter().any(|f| f == "tools.py") {
            "tools.py"
        } else {
            ""
        };
        for tool in &g.tools {
            ex.out.push(SubCommand {
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
            });
        }
    }
    if let Some(body) = &analysis.body
        && body.end <= text.len()
    {
        ex.scan_body(text, body.start);
    }
    ex.finish()
}

/// One command line found in the body.
struct Candidate {
    text: String,
    line: u32,
    section: String,
    /// What the source says about it: the comment above it in a shell block, or the list
    /// item's text before the code (`Gmail search:`).
    description: Option<String>,
}

struct Invocation {
    program: Program,
    words: Vec<String>,
    rest: Vec<Word>,
    line: u32,
    section: String,
    description: Option<String>,
}

struct Extractor<'a> {
    files: &'a [String],
    bins: Vec<String>,
    aliases: HashMap<String, Vec<Word>>,
    invocations: Vec<Invocation>,
    out: Vec<SubCommand>,
}

impl<'a> Extractor<'a> {
    fn new(analysis: &Analysis, files: &'a [String]) -> Self {
        let bins = analysis
            .model
            .bins
            .iter()
            .filter(|b| !EXCLUDED_PROGRAMS.contains(&b.as_str()))
            .cloned()
            .collect();
        Extractor {
            files,
            bins,
            aliases: HashMap::new(),
            invocations: Vec::new(),
            out: Vec::new(),
        }
    }

    fn scan_body(&mut self, text: &str, body_start: usize) {
        let body = &text[body_start..];
        let index = LineIndex::new(text);
        let line_of = |off: usize| index.pos(text, body_start + off).line;
        let mut section = String::new();
        let mut heading: Option<String> = None;
        let mut code: Option<(String, String, usize)> = None; // (lang, content, start offset)
        let mut item_depth = 0usize;
        let mut cell_index: Option<usize> = None;
        let mut item_text = String::new();
        let mut candidates = Vec::new();
        for (event, range) in Parser::new_ext(body, Options::ENABLE_TABLES).into_offset_iter() {
            match event {
                Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
                Event::End(TagEnd::Heading(_)) => section = heading.take().unwrap_or_default().trim().to_owned(),
                Event::Start(Tag::CodeBlock(kind)) => {
                    let lang = match kind {
                        CodeBlockKind::Fenced(info) => info
                            .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
                            .next()
                            .unwrap_or("")
                            .to_ascii_lowercase(),
                        CodeBlockKind::Indented => String::new(),
                    };
                    code = Some((lang, String::new(), range.start));
                }
                Event::End(TagEnd::CodeBlock) => {
                    if let Some((lang, content, start)) = code.take()
                        && is_shell_lang(&lang)
                    {
                        let first_line = line_of(start) + 1;
                        for (i, l, comment) in shell_lines(&content) {
                            candidates.push(Candidate {
                                text: l,
                                line: first_line + i,
                                section: section.clone(),
                                description: comment,
                            });
                        }
                    }
                }
                Event::Text(t) => {
                    if let Some(h) = heading.as_mut() {
                        h.push_str(&t);
                    } else if let Some((_, content, _)) = code.as_mut() {
                        content.push_str(&t);
                    } else if item_depth > 0 {
                        item_text.push_str(&t);
                    }
                }
                Event::Start(Tag::Item) => {
                    item_depth += 1;
                    item_text.clear();
                }
                Event::End(TagEnd::Item) => item_depth = item_depth.saturating_sub(1),
                Event::Start(Tag::TableRow) | Event::Start(Tag::TableHead) => cell_index = Some(0),
                Event::End(TagEnd::TableCell) => cell_index = cell_index.map(|c| c + 1),
                Event::End(TagEnd::TableRow) | Event::End(TagEnd::TableHead) => cell_index = None,
                Event::Code(c) => {
                    if let Some(h) = heading.as_mut() {
                        h.push_str(&c);
                    } else if item_depth > 0 || cell_index == Some(0) {
                        let d = item_text.trim().trim_end_matches(':').trim();
                        let description = (item_depth > 0 && !d.is_empty()).then(|| d.to_owned());
                        candidates.push(Candidate {
                            text: c.to_string(),
                            line: line_of(range.start),
                            section: section.clone(),
                            description,
                        });
                        item_text.clear();
                    }
                }
                _ => {}
            }
        }
        for c in candidates {
            self.scan_line(&c);
        }
    }

    fn scan_line(&mut self, c: &Candidate) {
        let text = c.text.trim();
        let text = text.strip_prefix("$ ").unwrap_or(text);
        for cmd in shell::simple_commands(shell::tokenize(text)) {
            self.scan_command(cmd, c);
        }
    }

    fn scan_command(&mut self, mut words: Vec<Word>, c: &Candidate) {
        // `export X=…` / `alias x='…'` / `X=…` define aliases; `X=… cmd` sets env for cmd.
        if words
            .first()
            .is_some_and(|w| !w.quoted && (w.text == "export" || w.text == "alias"))
        {
            words.remove(0);
        }
        while let Some(first) = words.first() {
            let Some((name, value)) = assignment(&first.text) else {
                break;
            };
            if words.len() == 1 {
                let value_words: Vec<Word> = shell::simple_commands(shell::tokenize(value))
                    .into_iter()
                    .next()
                    .unwrap_or_default();
                if self.resolve(&value_words).is_some() {
                    self.aliases.insert(name.to_owned(), value_words);
                }
                return;
            }
            words.remove(0);
        }
        // Substitute an alias in first position.
        if let Some(first) = words.first()
            && let Some(var) = variable_name(&first.text)
            && let Some(expansion) = self.aliases.get(var)
        {
            let mut w = expansion.clone();
            w.extend(words.drain(1..));
            words = w;
        }
        let Some((program, at)) = self.resolve(&words) else {
            return;
        };
        let rest = &words[at..];
        let n = rest
            .iter()
            .take(MAX_WORDS)
            .enumerate()
            .take_while(|(i, w)| is_command_word(w) && (*i == 0 || !looks_like_value(&w.text)))
            .count();
        if n == 0 || EXCLUDED_FIRST_WORDS.contains(&rest[0].text.as_str()) {
            return;
        }
        self.invocations.push(Invocation {
            program,
            words: rest[..n].iter().map(|w| w.text.clone()).collect(),
            rest: rest[n..].to_vec(),
            line: c.line,
            section: c.section.clone(),
            description: c.description.clone(),
        });
    }

    /// Finds the program of a command: returns it and the index of the first word after it.
    fn resolve(&self, words: &[Word]) -> Option<(Program, usize)> {
        let first = words.first()?;
        let name = first.text.rsplit('/').next().unwrap_or(&first.text);
        if let Some(path) = self.script_path(&first.text) {
            return Some((
                Program::Script {
                    interpreter: interpreter_for(&path, None),
                    path,
                },
                1,
            ));
        }
        // `uv run script.py`, `poetry run python script.py`.
        let mut i = 0;
        if matches!(name, "uv" | "poetry" | "pipenv") && words.get(1).is_some_and(|w| w.text == "run") {
            i = 2;
        }
        let launcher = words
            .get(i)
            .map(|w| w.text.rsplit('/').next().unwrap_or(&w.text).to_owned())
            .unwrap_or_default();
        if is_launcher(&launcher) {
            let mut j = i + 1;
            while words.get(j).is_some_and(|w| w.text.starts_with('-') && w.text != "-m") {
                j += 1;
            }
            let script = words.get(j)?;
            let path = self.script_path(&script.text)?;
            return Some((
                Program::Script {
                    interpreter: interpreter_for(&path, Some(&launcher)),
                    path,
                },
                j + 1,
            ));
        } else if i == 2 {
            let path = self.script_path(&words.get(2)?.text)?;
            return Some((
                Program::Script {
                    interpreter: interpreter_for(&path, None),
                    path,
                },
                3,
            ));
        }
        if self.bins.iter().any(|b| b == name) && !first.quoted {
            return Some((Program::Binary { name: name.to_owned() }, 1));
        }
        None
    }

    /// The skill file a word designates, under any prefix (`{baseDir}/`, `$SKILL_DIR/`, …).
    fn script_path(&self, word: &str) -> Option<String> {
        let w = word.trim_matches(|c| c == '"' || c == '\'');
        if w.is_empty() || w.ends_with('/') {
            return None;
        }
        // Normalize `./` and `//`; a path going up (`..`) never names this skill's file.
        let parts: Vec<&str> = w.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
        if parts.contains(&"..") {
            return None;
        }
        let joined = parts.join("/");
        let w = if w.starts_with('/') {
            format!("/{joined}")
        } else {
            joined
        };
        let w = w.as_str();
        let mut best: Option<&String> = None;
        for f in self.files {
            if !is_runnable(f) {
                continue;
            }
            let matches = w == f || w.ends_with(&format!("/{f}"));
            if matches && best.is_none_or(|b| f.len() > b.len()) {
                best = Some(f);
            }
        }
        if best.is_none() && !w.contains('/') && is_runnable(w) {
            // A bare file name (`python x.py` after `cd scripts`): only when unambiguous.
            let mut by_name = self.files.iter().filter(|f| f.rsplit('/').next() == Some(w));
            if let (Some(f), None) = (by_name.next(), by_name.next()) {
                best = Some(f);
            }
        }
        best.cloned()
    }

    fn finish(mut self) -> Extraction {
        let mut groups: BTreeMap<(Program, Vec<String>), Vec<usize>> = BTreeMap::new();
        let mut order = Vec::new();
        for (i, inv) in self.invocations.iter().enumerate() {
            let key = (inv.program.clone(), inv.words.clone());
            let e = groups.entry(key.clone()).or_default();
            if e.is_empty() {
                order.push(key);
            }
            e.push(i);
        }
        for key in order {
            let idx = &groups[&key];
            let invs: Vec<&Invocation> = idx.iter().map(|&i| &self.invocations[i]).collect();
            let first = invs[0];
            self.out.push(SubCommand {
                words: key.1.clone(),
                program: key.0.clone(),
                args: merge_args(&invs),
                source_section: first.section.clone(),
                line: first.line,
                invocations: u32::try_from(invs.len()).unwrap_or(u32::MAX),
                description: invs.iter().find_map(|i| i.description.clone()),
            });
        }
        Extraction { subcommands: self.out }
    }
}

fn is_launcher(name: &str) -> bool {
    LAUNCHERS.contains(&name)
        || name
            .strip_prefix("python3.")
            .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit()))
}

fn is_runnable(path: &str) -> bool {
    let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    matches!(ext, "py" | "sh" | "bash" | "js" | "mjs" | "cjs" | "ts" | "rb" | "pl")
        || (path.starts_with("scripts/") && !path.contains('.'))
        || (path.starts_with("bin/") && !path.contains('.'))
}

fn interpreter_for(path: &str, launcher: Option<&str>) -> String {
    if let Some(l) = launcher {
        return match l {
            "python" => "python3".into(),
            "sh" | "zsh" => "bash".into(),
            other => other.into(),
        };
    }
    match path.rsplit_once('.').map(|(_, e)| e).unwrap_or("") {
        "py" => "python3",
        "sh" | "bash" => "bash",
        "js" | "mjs" | "cjs" => "node",
        "ts" => "tsx",
        "rb" => "ruby",
        "pl" => "perl",
        _ => "",
    }
    .into()
}

fn is_shell_lang(lang: &str) -> bool {
    matches!(
        lang,
        "" | "bash"
            | "sh"
            | "shell"
            | "zsh"
            | "console"
            | "terminal"
            | "shell-session"
            | "shellsession"
            | "cli"
            | "cmd"
    )
}

/// The command lines of a shell block: continuations joined, heredoc bodies dropped. Yields
/// (0-based line offset in the block, text, the comment line above it). A comment applies
/// until the next blank line.
fn shell_lines(content: &str) -> Vec<(u32, String, Option<String>)> {
    let mut out = Vec::new();
    let mut pending: Option<(u32, String)> = None;
    let mut heredoc: Option<String> = None;
    let mut comment: Option<String> = None;
    let mut last_was_comment = false;
    for (i, line) in content.lines().enumerate() {
        let i = u32::try_from(i).unwrap_or(u32::MAX);
        if let Some(end) = &heredoc {
            if line.trim() == end {
                heredoc = None;
            }
            continue;
        }
        let (start, mut acc) = pending.take().unwrap_or((i, String::new()));
        let trimmed = line.trim_end();
        if acc.is_empty() {
            if trimmed.trim().is_empty() {
                comment = None;
                last_was_comment = false;
                continue;
            }
            if let Some(c) = trimmed.trim_start().strip_prefix('#') {
                let c = c.trim();
                // Consecutive comment lines form one comment; one after a command starts anew.
                comment = match (comment.take(), last_was_comment) {
                    _ if c.is_empty() || c.starts_with('!') => None,
                    (Some(prev), true) => Some(format!("{prev} {c}")),
                    _ => Some(c.to_owned()),
                };
                last_was_comment = true;
                continue;
            }
            last_was_comment = false;
        }
        if let Some(cont) = trimmed.strip_suffix('\\') {
            acc.push_str(cont);
            acc.push(' ');
            pending = Some((start, acc));
            continue;
        }
        acc.push_str(trimmed);
        if let Some(tag) = heredoc_tag(&acc) {
            heredoc = Some(tag);
        }
        if !acc.trim().is_empty() {
            out.push((start, acc, comment.clone()));
        }
    }
    if let Some((start, acc)) = pending {
        out.push((start, acc, comment));
    }
    out
}

fn heredoc_tag(line: &str) -> Option<String> {
    let at = line.find("<<")?;
    let rest = line[at + 2..].trim_start_matches('-').trim_start();
    if rest.starts_with('<') {
        return None; // here-string `<<<`
    }
    let tag: String = rest
        .trim_matches(|c| c == '\'' || c == '"')
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!tag.is_empty()).then_some(tag)
}

/// `NAME=value` (shell variable assignment) → (NAME, value).
fn assignment(word: &str) -> Option<(&str, &str)> {
    let (name, value) = word.split_once('=')?;
    let ok = !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    ok.then_some((name, value))
}

/// `$NAME` or `${NAME}` → NAME.
fn variable_name(word: &str) -> Option<&str> {
    let w = word.strip_prefix('$')?;
    let w = w.strip_prefix('{').and_then(|x| x.strip_suffix('}')).unwrap_or(w);
    (!w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')).then_some(w)
}

/// Words that read as values, not commands, after the first: ids and slugs such as
/// `cora-web-1`, `cnv_abc123`, `grp_xxx` (an underscore, or a digit with a separator).
fn looks_like_value(t: &str) -> bool {
    t.contains('_') || (t.chars().any(|c| c.is_ascii_digit()) && t.contains('-'))
}

/// A plain lowercase word that can be part of a sub-command (`search`, `create-folder`).
fn is_command_word(w: &Word) -> bool {
    let t = w.text.as_str();
    !w.quoted
        && t.len() <= 32
        && t.starts_with(|c: char| c.is_ascii_lowercase())
        && t.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        && !t.ends_with('-')
        && !t.contains("--")
}

fn is_placeholder(t: &str) -> Option<String> {
    let inner = t
        .strip_prefix('<')
        .and_then(|x| x.strip_suffix('>'))
        .or_else(|| t.strip_prefix('{').and_then(|x| x.strip_suffix('}')))
        .or_else(|| t.strip_prefix('[').and_then(|x| x.strip_suffix(']')));
    if let Some(i) = inner.filter(|i| {
        !i.is_empty()
            && i.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | ' ' | '|'))
    }) {
        return Some(i.to_owned());
    }
    // UPPER_CASE tokens such as MESSAGE_ID, FILE_ID, N.
    let upper = !t.is_empty()
        && t.starts_with(|c: char| c.is_ascii_uppercase())
        && t.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    upper.then(|| t.to_owned())
}

/// `calendarId` / `MESSAGE_ID` / `file-name` → `calendar_id` / `message_id` / `file_name`.
pub fn snake_case(s: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in s.chars() {
        if c.is_ascii_uppercase() {
            if prev_lower && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = false;
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        } else {
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            prev_lower = false;
        }
    }
    let out = out.trim_matches('_').to_owned();
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        format!("arg_{out}")
    } else {
        out
    }
}

/// Names of placeholders that stand for integers (`--max N`, `--limit <count>`).
const INTEGER_HINTS: &[&str] = &[
    "n", "num", "number", "count", "limit", "max", "min", "int", "integer", "size", "port", "days", "hours", "minutes",
    "seconds", "secs", "ms", "timeout", "page", "offset", "top", "k", "depth", "retries", "year", "width", "height",
];

/// The type a written value suggests.
fn value_type(w: &Word) -> ParamType {
    let t = w.text.trim();
    if let Some(p) = (!w.quoted).then(|| is_placeholder(t)).flatten() {
        let name = snake_case(&p);
        return if INTEGER_HINTS.contains(&name.as_str()) || name.ends_with("_count") || name.starts_with("num_") {
            ParamType::Integer
        } else {
            ParamType::String
        };
    }
    if !w.quoted {
        if t.parse::<i64>().is_ok() {
            return ParamType::Integer;
        }
        if t.contains('.') && t.parse::<f64>().is_ok_and(f64::is_finite) {
            return ParamType::Number;
        }
        if t == "true" || t == "false" {
            return ParamType::Boolean;
        }
    }
    if t.starts_with('[') && serde_json::from_str::<Vec<serde_json::Value>>(t).is_ok() {
        return ParamType::Array;
    }
    if t.starts_with('{') && serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(t).is_ok() {
        return ParamType::Object;
    }
    ParamType::String
}

/// The type that accepts both.
fn widen(a: ParamType, b: ParamType) -> ParamType {
    use ParamType::*;
    match (a, b) {
        (x, y) if x == y => x,
        (Integer, Number) | (Number, Integer) => Number,
        _ => String,
    }
}

fn is_flag(t: &str) -> bool {
    t.len() > 1 && t.starts_with('-') && !t[1..].starts_with(|c: char| c.is_ascii_digit() || c == '.')
}

/// A flag as written, its value, and whether it was inside `[...]` (optional).
type FlagUse = (String, Option<Word>, bool);

/// Removes usage-syntax brackets: `[--max N]` marks its contents optional, `[name]` is an
/// optional placeholder, `[options]` and `...` are dropped. Returns (word, optional).
fn unbracket(rest: &[Word]) -> Vec<(Word, bool)> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    for w in rest {
        if w.quoted {
            out.push((w.clone(), depth > 0));
            continue;
        }
        let mut t = w.text.as_str();
        let opens = t.chars().take_while(|c| *c == '[').count();
        t = &t[opens..];
        let closes = t.chars().rev().take_while(|c| *c == ']').count();
        t = &t[..t.len() - closes];
        let optional = depth > 0 || opens > 0;
        depth = (depth + opens).saturating_sub(closes);
        let lower = t.to_ascii_lowercase();
        if t.is_empty()
            || t.chars().all(|c| c == '.')
            || matches!(lower.as_str(), "options" | "flags" | "args" | "arguments")
        {
            continue;
        }
        let t = t.trim_end_matches("...");
        // `[name]` alone is an optional placeholder.
        let text = if opens > 0 && closes > 0 && !t.starts_with('-') && is_placeholder(&format!("<{t}>")).is_some() {
            format!("<{t}>")
        } else {
            t.to_owned()
        };
        out.push((Word { text, quoted: false }, optional));
    }
    out
}

/// Parses the words after the sub-command into flags and positionals (with optionality).
fn parse_args(rest: &[Word]) -> (Vec<FlagUse>, Vec<(Word, bool)>) {
    let words = unbracket(rest);
    let mut flags = Vec::new();
    let mut positionals = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let (w, optional) = &words[i];
        if !w.quoted && is_flag(&w.text) && w.text != "--" {
            if let Some((f, v)) = w.text.split_once('=') {
                flags.push((
                    f.to_owned(),
                    Some(Word {
                        text: v.to_owned(),
                        quoted: w.quoted,
                    }),
                    *optional,
                ));
                i += 1;
                continue;
            }
            let value = words
                .get(i + 1)
                .filter(|(n, _)| n.quoted || !is_flag(&n.text))
                .map(|(n, _)| n.clone());
            i += if value.is_some() { 2 } else { 1 };
            flags.push((w.text.clone(), value, *optional));
        } else {
            positionals.push((w.clone(), *optional));
            i += 1;
        }
    }
    (flags, positionals)
}

/// What is known of one argument while merging invocations.
struct Seen {
    ty: ParamType,
    count: usize,
    optional: bool,
    order: usize,
    name: Option<String>,
}

fn merge_args(invs: &[&Invocation]) -> Vec<Arg> {
    let total = invs.len();
    let mut flags: BTreeMap<String, Seen> = BTreeMap::new();
    let mut positionals: Vec<Seen> = Vec::new();
    for inv in invs {
        let (fl, pos) = parse_args(&inv.rest);
        let mut this_inv: Vec<&str> = Vec::new();
        for (flag, value, optional) in &fl {
            let ty = value.as_ref().map(value_type).unwrap_or(ParamType::Boolean);
            let order = flags.len();
            let e = flags.entry(flag.clone()).or_insert(Seen {
                ty,
                count: 0,
                optional: false,
                order,
                name: None,
            });
            e.ty = if e.count == 0 { ty } else { widen(e.ty, ty) };
            e.optional |= *optional;
            if !this_inv.contains(&flag.as_str()) {
                e.count += 1;
                this_inv.push(flag);
            }
        }
        for (i, (w, optional)) in pos.iter().enumerate() {
            let name = (!w.quoted)
                .then(|| is_placeholder(&w.text))
                .flatten()
                .map(|p| snake_case(&p))
                .filter(|n| !n.is_empty());
            match positionals.get_mut(i) {
                None => positionals.push(Seen {
                    ty: value_type(w),
                    count: 1,
                    optional: *optional,
                    order: i,
                    name,
                }),
                Some(p) => {
                    p.ty = widen(p.ty, value_type(w));
                    p.count += 1;
                    p.optional |= *optional;
                    if p.name.is_none() {
                        p.name = name;
                    }
                }
            }
        }
    }
    let mut args = Vec::new();
    let mut used: Vec<String> = Vec::new();
    for (i, p) in positionals.into_iter().enumerate() {
        let mut name = p.name.unwrap_or_else(|| format!("arg{i}"));
        if used.contains(&name) {
            name = format!("{name}_{i}");
        }
        used.push(name.clone());
        let required = p.count == total && !p.optional;
        args.push(Arg {
            name,
            ty: p.ty,
            required,
            flag: None,
            position: Some(i),
            description: None,
            default: None,
        });
    }
    let mut by_order: Vec<(String, Seen)> = flags.into_iter().collect();
    by_order.sort_by_key(|(_, s)| s.order);
    for (flag, s) in by_order {
        let mut name = snake_case(flag.trim_start_matches('-'));
        if name.is_empty() {
            continue;
        }
        if used.contains(&name) {
            name = format!("{name}_flag");
        }
        used.push(name.clone());
        let required = s.count == total && !s.optional && s.ty != ParamType::Boolean;
        args.push(Arg {
            name,
            ty: s.ty,
            required,
            flag: Some(flag),
            position: None,
            description: None,
            default: None,
        });
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_case_names() {
        assert_eq!(snake_case("calendarId"), "calendar_id");
        assert_eq!(snake_case("MESSAGE_ID"), "message_id");
        assert_eq!(snake_case("add-labels"), "add_labels");
        assert_eq!(snake_case("2fa"), "arg_2fa");
    }

    #[test]
    fn shell_lines_join_continuations_and_skip_heredocs() {
        let block = "gog gmail send --to a \\\n  --subject x \\\n  --body-file - <<'EOF'\nHi\n$GAPI drive delete X\nEOF\n# comment\necho done\n";
        let lines = shell_lines(block);
        assert_eq!(lines.len(), 2);
        assert!(lines[0].1.contains("--subject x"));
        assert_eq!(lines[1], (7, "echo done".to_string(), Some("comment".to_string())));
    }

    #[test]
    fn consecutive_comment_lines_form_one_description() {
        let lines = shell_lines("# Search, newest first.\n# Operators: from: to:\nws mail search q\nws mail get id\n");
        assert_eq!(
            lines[0].2.as_deref(),
            Some("Search, newest first. Operators: from: to:")
        );
        assert_eq!(
            lines[1].2.as_deref(),
            Some("Search, newest first. Operators: from: to:")
        );
    }

    #[test]
    fn usage_brackets_mark_arguments_optional() {
        let words = |line: &str| -> Vec<Word> {
            shell::simple_commands(shell::tokenize(line))
                .into_iter()
                .next()
                .unwrap_or_default()
        };
        let inv = |line: &str| Invocation {
            program: Program::Binary { name: "r".into() },
            words: vec!["search".into()],
            rest: words(line),
            line: 1,
            section: String::new(),
            description: None,
        };
        let a = inv("<query> [--max N] [--tag <tag>] [options]");
        let args = merge_args(&[&a]);
        let got: Vec<(String, &str, bool)> = args
            .iter()
            .map(|x| (x.name.clone(), x.ty.as_str(), x.required))
            .collect();
        assert_eq!(
            got,
            vec![
                ("query".into(), "string", true),
                ("max".into(), "integer", false),
                ("tag".into(), "string", false)
            ]
        );
        let b = inv("[file]");
        let args = merge_args(&[&b]);
        assert_eq!((args[0].name.as_str(), args[0].required), ("file", false));
    }

    #[test]
    fn value_types() {
        let w = |t: &str, q: bool| Word {
            text: t.into(),
            quoted: q,
        };
        assert_eq!(value_type(&w("10", false)), ParamType::Integer);
        assert_eq!(value_type(&w("10", true)), ParamType::String);
        assert_eq!(value_type(&w("N", false)), ParamType::Integer);
        assert_eq!(value_type(&w("<iso>", false)), ParamType::String);
        assert_eq!(value_type(&w("[[\"a\"]]", true)), ParamType::Array);
        assert_eq!(value_type(&w("user@example.com", false)), ParamType::String);
    }
}

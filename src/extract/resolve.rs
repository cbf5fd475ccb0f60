//! Which program a command line runs: one of the skill's own scripts (under any prefix or
//! launcher), a shell variable aliased to one, or a binary the skill declares.

use super::markdown::Body;
use super::model::Program;
use super::shell::{self, Word};
use crate::skill::validate::Analysis;
use crate::skill::yaml::Node;

/// Programs that are never sub-command sources: installers, package managers, downloaders.
pub const EXCLUDED_PROGRAMS: &[&str] = &[
    "npm", "npx", "pnpm", "pnpx", "yarn", "bunx", "pip", "pip3", "pipx", "uv", "uvx", "poetry", "conda", "mamba",
    "brew", "apt", "apt-get", "dnf", "yum", "pacman", "apk", "snap", "port", "choco", "winget", "scoop", "curl",
    "wget", "cargo", "go", "gem", "composer", "cd", "echo", "export", "source", "sudo", "git", "jq", "yq", "grep",
    "rg", "sed", "awk", "cat", "ls", "find", "xargs", "make", "tar", "unzip", "ssh", "scp", "rsync", "open", "python",
    "python3", "node", "bash", "sh", "zsh", "docker",
];

/// First words that make an invocation an installer or tool maintenance, never a sub-command.
/// (`install`, `upgrade` of the skill's own tool are real operations: `clawhub install`.)
pub const EXCLUDED_FIRST_WORDS: &[&str] = &["self-update", "completion", "completions", "version", "help"];

/// Well-known general tools: never taken for the skill's own program by inference (a skill
/// may still declare them in `requires.bins`, and then they count). The class: shells and
/// coreutils, language runtimes, version control, containers and clouds, media and document
/// converters, databases, network utilities, and the agent platforms' own CLIs.
const GENERAL_TOOLS: &[&str] = &[
    "awk",
    "base64",
    "bun",
    "chmod",
    "chown",
    "clawdbot",
    "cp",
    "crontab",
    "date",
    "deno",
    "diff",
    "du",
    "env",
    "exit",
    "false",
    "ffmpeg",
    "ffprobe",
    "file",
    "gcloud",
    "gh",
    "gpg",
    "gzip",
    "head",
    "hermes",
    "history",
    "htop",
    "kill",
    "kubectl",
    "ln",
    "magick",
    "mkdir",
    "moltbot",
    "mv",
    "mysql",
    "nc",
    "openclaw",
    "openssl",
    "osascript",
    "pandoc",
    "pbcopy",
    "pbpaste",
    "perl",
    "php",
    "ping",
    "printf",
    "ps",
    "psql",
    "pwd",
    "read",
    "redis-cli",
    "rm",
    "ruby",
    "set",
    "sleep",
    "sort",
    "sqlite3",
    "stat",
    "systemctl",
    "tail",
    "tee",
    "test",
    "then",
    "time",
    "timeout",
    "tmux",
    "touch",
    "tr",
    "true",
    "uname",
    "uniq",
    "unset",
    "wc",
    "which",
    "whoami",
    "xdg-open",
    "yes",
    "zip",
    "for",
    "do",
    "done",
    "if",
    "fi",
    "else",
    "while",
    "case",
    "esac",
    "function",
    "local",
    "return",
    "aws",
    "az",
    "terraform",
    "kubectx",
    "helm",
    "java",
    "javac",
    "rustc",
    "gcc",
    "clang",
    "code",
    "vim",
    "nano",
    "less",
    "more",
    "man",
    "claude",
    "codex",
    "gemini",
    "cursor",
    "ollama",
    "wget2",
    "http",
    "httpie",
    "nslookup",
    "dig",
    "host",
    "whois",
    "traceroute",
    "netstat",
    "lsof",
    "df",
    "free",
    "top",
    "uptime",
    "watch",
    "cron",
    "launchctl",
    "service",
];

/// Interpreters that run a script given as their first non-option argument.
const LAUNCHERS: &[&str] = &[
    "python", "python3", "bash", "sh", "zsh", "node", "deno", "ruby", "perl", "tsx", "ts-node",
];

/// What a command line's first words may resolve to: the skill's files and declared binaries.
pub(super) struct Resolver<'a> {
    pub(super) files: &'a [String],
    pub(super) bins: Vec<String>,
    /// Scripts the body runs that the skill does not ship, when it ships no runnable file
    /// at all (a SKILL.md published alone): read as documented; L5 rejects them.
    pub(super) absent: Vec<String>,
}

impl Resolver<'_> {
    /// Finds the program of a command: returns it and the index of the first word after it.
    pub(super) fn resolve(&self, words: &[Word]) -> Option<(Program, usize)> {
        let first = words.first()?;
        let name = first.text.rsplit('/').next().unwrap_or(&first.text);
        // `npx tool`, `bunx tool`, `uvx tool`, `pipx run tool`: a package runner launching the
        // skill's own binary is that binary.
        let runner = match name {
            "npx" | "bunx" | "pnpx" | "uvx" => Some(1),
            "pipx" | "pnpm" | "yarn"
                if words
                    .get(1)
                    .is_some_and(|w| matches!(w.text.as_str(), "run" | "dlx" | "exec")) =>
            {
                Some(2)
            }
            _ => None,
        };
        if let Some(at) = runner {
            let mut j = at;
            while words.get(j).is_some_and(|w| w.text.starts_with('-')) {
                j += 1;
            }
            let w = words.get(j)?;
            let pkg = package_bin(&w.text);
            // The package of a binary is often named longer (`npx tick-md` runs `tick`).
            let bin = self.bins.iter().find(|b| *b == pkg).or_else(|| {
                self.bins
                    .iter()
                    .find(|b| pkg.strip_prefix(b.as_str()).is_some_and(|r| r.starts_with('-')))
            })?;
            return Some((Program::Binary { name: bin.clone() }, j + 1));
        }
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
        for f in self.files.iter().chain(&self.absent) {
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
            let mut by_name = self
                .files
                .iter()
                .chain(&self.absent)
                .filter(|f| f.rsplit('/').next() == Some(w));
            if let (Some(f), None) = (by_name.next(), by_name.next()) {
                best = Some(f);
            }
        }
        best.cloned()
    }
}

pub(super) fn is_launcher(name: &str) -> bool {
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

/// `NAME=value` (shell variable assignment) → (NAME, value).
pub(super) fn assignment(word: &str) -> Option<(&str, &str)> {
    let (name, value) = word.split_once('=')?;
    let ok = !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    ok.then_some((name, value))
}

/// `$NAME` or `${NAME}` → NAME.
pub(super) fn variable_name(word: &str) -> Option<&str> {
    let w = word.strip_prefix('$')?;
    let w = w.strip_prefix('{').and_then(|x| x.strip_suffix('}')).unwrap_or(w);
    (!w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')).then_some(w)
}

/// A well-known general tool, installer or shell word (never a sub-command word of a list).
pub(super) fn is_general(word: &str) -> bool {
    EXCLUDED_PROGRAMS.contains(&word) || GENERAL_TOOLS.contains(&word) || LAUNCHERS.contains(&word)
}

/// Words that run the rest of the line as a command (`nohup python3 x.py &`, `sudo tool`):
/// dropped, with their own options, before the program is looked for.
pub(super) fn strip_wrappers(words: &mut Vec<Word>) {
    loop {
        let Some(first) = words.first() else { return };
        if first.quoted {
            return;
        }
        let takes_value = match first.text.as_str() {
            "sudo" | "nohup" | "exec" | "time" | "caffeinate" | "command" | "builtin" => false,
            "nice" | "timeout" | "stdbuf" | "env" => true,
            _ => return,
        };
        words.remove(0);
        // Their options (`nice -n 10`, `timeout 30`, `env FOO=1`).
        while words.first().is_some_and(|w| {
            !w.quoted
                && (w.text.starts_with('-')
                    || (takes_value
                        && (w.text.parse::<f64>().is_ok()
                            || assignment(&w.text).is_some()
                            || w.text.ends_with('s') && w.text[..w.text.len() - 1].parse::<f64>().is_ok())))
        }) {
            words.remove(0);
        }
    }
}

/// The scripts a body runs from `scripts/` or `bin/` when the skill has no runnable file
/// (`{baseDir}/scripts/linear.sh` → `scripts/linear.sh`).
pub(super) fn absent_scripts(files: &[String], body: &Body) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if files.iter().any(|f| is_runnable(f)) {
        return out;
    }
    for c in &body.candidates {
        for cmd in shell::simple_commands(shell::tokenize(&c.text)) {
            for w in cmd.iter().take(4) {
                let parts: Vec<&str> = w.text.split('/').collect();
                let Some(at) = parts.iter().position(|p| *p == "scripts" || *p == "bin") else {
                    continue;
                };
                let rel = parts[at..].join("/");
                let ok = parts.len() == at + 2
                    && is_runnable(&rel)
                    && rel.contains('.')
                    && !parts.contains(&"..")
                    && rel
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '-' | '_'));
                if ok && !out.contains(&rel) {
                    out.push(rel);
                }
            }
        }
    }
    out
}

/// The binary a package name runs: `@scope/tool@1.2` → `tool`.
fn package_bin(pkg: &str) -> &str {
    let p = pkg.rsplit('/').next().unwrap_or(pkg);
    match p.find('@') {
        Some(0) | None => p,
        Some(i) => &p[..i],
    }
}

/// Binaries the skill runs as its own program: the declared ones (`requires.bins`,
/// `prerequisites.commands`, `metadata.*.install[].bins`), then the undeclared ones the body
/// shows (PRODUCT.md "Sub-commands"): a program named like the skill or its folder, the tool
/// of a `Usage: tool <command>` line, a tool the description calls a CLI, or the program of
/// most of the skill's shell blocks. Installers and general tools are never inferred.
pub(super) fn skill_bins(analysis: &Analysis, body: &Body, dir_name: &str) -> Vec<String> {
    let mut bins: Vec<String> = analysis.model.bins.clone();
    if let Some(fm) = &analysis.frontmatter {
        install_bins(fm, &mut bins);
    }
    bins.retain(|b| !EXCLUDED_PROGRAMS.contains(&b.as_str()));
    let name = analysis.model.name.as_ref().map(|n| n.value.as_str()).unwrap_or("");
    let inferable = |p: &str| {
        is_program_name(p)
            && !EXCLUDED_PROGRAMS.contains(&p)
            && !LAUNCHERS.contains(&p)
            && !EXCLUDED_FIRST_WORDS.contains(&p)
    };
    // Programs of the body's command lines, by how many shell blocks (or list items and
    // table rows) start with them.
    let mut programs: Vec<(String, usize, usize)> = Vec::new(); // (program, blocks, lines)
    let mut last_block = None;
    for c in &body.candidates {
        // Scripts (run directly, by a launcher or through a `$VAR` alias) compete as one
        // program, `<script>`.
        let aliased = c.text.trim_start().trim_start_matches("$ ").starts_with('$');
        let Some(first) =
            first_word(&c.text).or_else(|| (aliased || runs_script(&c.text)).then(|| "<script>".to_owned()))
        else {
            continue;
        };
        // A list item that only names a program mentions it; it does not run it.
        if c.listed && c.text.split_whitespace().count() < 2 {
            continue;
        }
        let i = match programs.iter().position(|(p, _, _)| *p == first) {
            Some(i) => i,
            None => {
                programs.push((first.clone(), 0, 0));
                programs.len() - 1
            }
        };
        programs[i].2 += 1;
        // Shell blocks count, not list items: chat syntax in a list (`hn <topic>`) is no program.
        if c.block.is_some() && c.block != last_block {
            programs[i].1 += 1;
        }
        last_block = c.block;
    }
    let seen = |p: &str| programs.iter().any(|(q, _, _)| q == p);
    let add = |b: &str, bins: &mut Vec<String>| {
        if !bins.iter().any(|x| x == b) {
            bins.push(b.to_owned());
        }
    };
    for own in [
        name,
        dir_name,
        name.strip_suffix("-cli").unwrap_or(""),
        dir_name.strip_suffix("-cli").unwrap_or(""),
    ] {
        if !own.is_empty() && inferable(own) && seen(own) {
            add(own, &mut bins);
        }
    }
    // `glab-milestone`, `todoist-cli`: a skill named for a tool and a topic runs the tool,
    // when the body runs it with flags (a chat syntax such as `hn <topic>` has none).
    let with_flags = |p: &str| {
        body.candidates.iter().any(|c| {
            let mut w = c.text.split_whitespace();
            w.next() == Some(p) && w.any(|a| a.starts_with('-') && a.len() > 1)
        })
    };
    for own in [name, dir_name] {
        if let Some((tool, _)) = own.split_once('-')
            && inferable(tool)
            && !GENERAL_TOOLS.contains(&tool)
            && seen(tool)
            && with_flags(tool)
        {
            add(tool, &mut bins);
        }
    }
    // `Usage: tool <command> [args]`: the tool has sub-commands.
    for u in &body.usage {
        let mut w = u.split_whitespace();
        let (Some(p), Some(slot)) = (w.next(), w.next()) else {
            continue;
        };
        let slot = Word {
            text: slot.to_owned(),
            quoted: false,
        };
        if inferable(p) && !GENERAL_TOOLS.contains(&p) && super::words::is_command_placeholder(&slot) {
            add(p, &mut bins);
        }
    }
    let description = analysis
        .model
        .description
        .as_ref()
        .map(|d| d.value.as_str())
        .unwrap_or("");
    let title = body.title.as_deref().unwrap_or("");
    for (p, _, _) in &programs {
        if inferable(p)
            && !GENERAL_TOOLS.contains(&p.as_str())
            && (names_a_cli(description, p) || names_a_cli(title, p))
        {
            add(p, &mut bins);
        }
    }
    // The program of most shell blocks among the candidates (at least two blocks, more
    // than any other candidate; installers and general tools do not compete).
    let mut ranked: Vec<&(String, usize, usize)> = programs
        .iter()
        .filter(|(p, b, _)| *b > 0 && (p == "<script>" || (inferable(p) && !GENERAL_TOOLS.contains(&p.as_str()))))
        .collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)));
    if let Some((p, blocks, _)) = ranked.first()
        && p != "<script>"
        && *blocks >= 2
        && ranked.get(1).is_none_or(|(_, b, _)| b < blocks)
    {
        add(p, &mut bins);
    }
    bins
}

/// `metadata.<namespace>.install[].bins` (OpenClaw install recipes name the binaries they
/// put on the path).
fn install_bins(fm: &Node, bins: &mut Vec<String>) {
    let Some(meta) = fm.get_value("metadata").and_then(Node::as_map) else {
        return;
    };
    for ns in meta {
        let Some(install) = ns.value.get_value("install").and_then(Node::as_seq) else {
            continue;
        };
        for recipe in install {
            if let Some(list) = recipe.get_value("bins").and_then(Node::strings) {
                for b in list {
                    if is_program_name(&b) && !bins.contains(&b) {
                        bins.push(b);
                    }
                }
            }
        }
    }
}

/// The first word of a command line, as a bare program name (`gog`), if it is one.
fn first_word(line: &str) -> Option<String> {
    let t = line.trim();
    let t = t.strip_prefix("$ ").unwrap_or(t);
    let cmd = shell::simple_commands(shell::tokenize(t)).into_iter().next()?;
    let w = cmd.into_iter().find(|w| assignment(&w.text).is_none())?;
    (!w.quoted && is_program_name(&w.text)).then_some(w.text)
}

/// A command line that runs a script: a path with a runnable extension first, or after a
/// launcher (`python3 scripts/x.py`, `./run.sh`).
fn runs_script(line: &str) -> bool {
    let mut w = line.split_whitespace().filter(|w| assignment(w).is_none());
    match w.next() {
        Some(first) if is_launcher(first.rsplit('/').next().unwrap_or(first)) => w
            .find(|a| !a.starts_with('-'))
            .is_some_and(|a| is_runnable(a) && a.contains('.')),
        Some(first) => is_runnable(first) && first.contains('.'),
        None => false,
    }
}

/// A bare command name: lowercase ASCII letters, digits, `-`, `_`, `.`, starting with a letter.
fn is_program_name(p: &str) -> bool {
    p.len() <= 40
        && p.starts_with(|c: char| c.is_ascii_lowercase())
        && p.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.'))
        && !p.ends_with('.')
        && !is_runnable(p)
}

/// The description calls `program` a CLI (`ntn CLI`, `` the `spots` command-line tool ``,
/// `td (Todoist CLI)`).
fn names_a_cli(description: &str, program: &str) -> bool {
    let d = description.to_ascii_lowercase();
    let words: Vec<&str> = d
        .split(|c: char| c.is_whitespace() || matches!(c, '`' | '(' | ')' | ',' | ':' | ';' | '"' | '\''))
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(2)
        .any(|w| w[0] == program && matches!(w[1], "cli" | "cli." | "command" | "command-line" | "binary" | "tool"))
        || d.contains(&format!("{program} (")) && words.windows(3).any(|w| w[0] == program && w[2] == "cli")
}

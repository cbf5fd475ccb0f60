//! Which program a command line runs: one of the skill's own scripts (under any prefix or
//! launcher), a shell variable aliased to one, or a binary the skill declares.

use super::model::Program;
use super::shell::Word;

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

/// What a command line's first words may resolve to: the skill's files and declared binaries.
pub(super) struct Resolver<'a> {
    pub(super) files: &'a [String],
    pub(super) bins: Vec<String>,
}

impl Resolver<'_> {
    /// Finds the program of a command: returns it and the index of the first word after it.
    pub(super) fn resolve(&self, words: &[Word]) -> Option<(Program, usize)> {
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

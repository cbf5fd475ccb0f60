//! Where a shell line runs text it did not write: a pipe into a shell (`| sh`), an exec
//! wrapper around a command substitution (`bash <(…)`, `eval "$(…)"`, `iex (…)`), or a later
//! command of the line that runs a downloaded file (`&& chmod +x f && ./f`).

use crate::scan::lexicon::SHELLS;

/// The program a pipe segment (the text after `|`) runs, when it executes its standard
/// input: skips `sudo`, `env X=Y` and their flags; `python3 -c '…'`, `bash script.sh`,
/// `node -e …` read stdin as data, `bash`, `bash -s -- args`, `python3 -` run it.
pub(crate) fn pipe_sink(s: &str) -> Option<&'static str> {
    let segment = s.split(['|', ';', '&', ')', '`']).next().unwrap_or(s);
    let mut words = segment
        .split_whitespace()
        .map(|w| w.trim_matches(|c| matches!(c, '(' | '"' | '\'' | '`')));
    let mut program = None;
    for w in words.by_ref() {
        if matches!(w, "sudo" | "env" | "command" | "exec" | "nohup") || w.starts_with('-') || w.contains('=') {
            continue;
        }
        let base = w.rsplit('/').next().unwrap_or(w);
        program = SHELLS.iter().copied().find(|sh| *sh == base);
        break;
    }
    let program = program?;
    if matches!(program, "iex" | "invoke-expression" | "source") {
        return Some(program);
    }
    let shell = matches!(program, "sh" | "bash" | "zsh" | "dash" | "ksh" | "fish");
    for w in words {
        match w {
            "-s" | "-" | "--" => return Some(program),
            "-c" => return None,
            "-e" | "-m" | "-p" | "-E" | "-n" | "-ne" | "-pe" | "-r" if !shell => return None,
            w if w.starts_with('-') => continue,
            _ => return None,
        }
    }
    Some(program)
}

/// `curl -o x.sh URL && bash x.sh`: the download is run by a later command of the line (a
/// shell given a file, or `./file`); `bash --version` is not.
pub(crate) fn then_runs(s: &str) -> Option<String> {
    // `curl -o /tmp/x URL && chmod +x /tmp/x && /tmp/x`: a path run after `chmod +x`.
    if let Some(c) = s.find("chmod +x") {
        for part in s[c..].split(['&', ';']).skip(1) {
            if let Some(first) = part.split_whitespace().find(|w| *w != "sudo")
                && (first.starts_with('/') || first.starts_with("~/") || first.starts_with('$'))
            {
                return Some(first.to_owned());
            }
        }
    }
    for sep in ["&&", ";"] {
        for part in s.split(sep).skip(1) {
            let mut words = part.split_whitespace().filter(|w| *w != "sudo");
            let Some(first) = words.next() else { continue };
            if first.starts_with("./") {
                return Some(first.to_owned());
            }
            if matches!(first, "sh" | "bash" | "zsh" | "source" | ".")
                && let Some(arg) = words.next()
                && !arg.starts_with('-')
            {
                return Some(format!("{first} {arg}"));
            }
        }
    }
    None
}

/// Does the segment after position `from` pipe into a shell? Returns the shell and offset.
pub(crate) fn pipes_to_shell(s: &str, from: usize) -> Option<(&'static str, usize)> {
    let b = s.as_bytes();
    let mut i = from;
    while let Some(p) = s.get(i..).and_then(|t| t.find('|')) {
        let at = i + p;
        let double = b.get(at + 1) == Some(&b'|') || (at > 0 && b[at - 1] == b'|');
        if !double && let Some(sh) = pipe_sink(&s[at + 1..]) {
            return Some((sh, at));
        }
        i = at + 1;
    }
    None
}

/// Is the text before `at` an exec wrapper: `bash <(`, `sh -c "$(`, `eval "$(`, `iex (`, `source <(`?
pub(crate) fn wrapped_in_exec(s: &str, at: usize) -> Option<&'static str> {
    let before = s[..at].trim_end_matches([' ', '"', '\'', '\\']);
    // Process substitution feeds a file to a shell; command substitution gives a string to
    // `-c`/`eval`; a parenthesis is PowerShell's `iex (…)` or a call `exec(…)`.
    let (before, wrappers): (&str, &[(&str, &'static str)]) = if let Some(b) = before.strip_suffix("<(") {
        (
            b,
            &[
                ("bash", "bash"),
                ("sh", "sh"),
                ("zsh", "zsh"),
                ("source", "source"),
                (" .", "."),
                ("python", "python"),
                ("python3", "python3"),
            ],
        )
    } else if let Some(b) = before.strip_suffix("$(").or_else(|| before.strip_suffix('`')) {
        (
            b,
            &[
                ("bash -c", "bash -c"),
                ("sh -c", "sh -c"),
                ("zsh -c", "zsh -c"),
                ("eval", "eval"),
                ("python -c", "python -c"),
                ("python3 -c", "python3 -c"),
                ("iex", "iex"),
            ],
        )
    } else if let Some(b) = before.strip_suffix('(') {
        (
            b,
            &[
                ("iex", "iex"),
                ("invoke-expression", "Invoke-Expression"),
                ("exec", "exec"),
                ("eval", "eval"),
            ],
        )
    } else {
        return None;
    };
    let before = before.trim_end_matches([' ', '"', '\'', '\\']);
    for (suffix, name) in wrappers {
        if before.ends_with(suffix)
            && (before.len() == suffix.len()
                || !before.as_bytes()[before.len() - suffix.len() - 1].is_ascii_alphanumeric())
        {
            return Some(name);
        }
    }
    None
}

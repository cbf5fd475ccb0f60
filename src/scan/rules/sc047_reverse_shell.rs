//! `SC047` reverse-shell: a shell whose input and output are a network connection — in
//! Python (`socket` + `os.dup2` + `pty.spawn`/`subprocess` of a shell), JavaScript
//! (`net.connect` + `child_process.spawn('/bin/sh')` piped both ways) or shell
//! (`bash -i >& /dev/tcp/…`, `nc -e /bin/sh`, `mkfifo` + `nc`, `socat exec:`). Critical. On
//! text (SKILL.md, references, files that do not parse) the same one-liners are found line
//! by line, and lowered by the context rules (a security guide quoting one is `medium`).
//!
//! Fixtures: `revshell-py`, `revshell-js`, `revshell-sh`, `fp-socket-client`.

use crate::model::FindingSeverity;
use crate::rules;
use crate::scan::code::CodeHit;
use crate::scan::code::apis::is_shell_program;
use crate::scan::code::facts::{Ev, Facts};
use crate::scan::context::Hit;
use crate::scan::lexicon::{SEND, SHELLNET, find_word};

/// The rule over one file's facts: per scope, a connection, streams bound to it, and a
/// shell.
pub(crate) fn check(facts: &Facts, out: &mut Vec<CodeHit>) {
    for scope in facts.scope_ids() {
        let evs: Vec<_> = facts.in_scope(scope).collect();
        let connect = evs.iter().find(|e| matches!(e.kind, Ev::Connect { .. }));
        let bind = evs.iter().find(|e| matches!(e.kind, Ev::BindStdio));
        let shell = evs.iter().find(|e| match &e.kind {
            Ev::Spawn { program, api, .. } => {
                program.text().is_some_and(|p| is_shell_program(&p)) || api == "pty.spawn"
            }
            _ => false,
        });
        let tcp_redirect = evs
            .iter()
            .any(|e| matches!(&e.kind, Ev::Connect { api, .. } if api == "/dev/tcp"));
        let (Some(c), Some(b)) = (connect, bind) else { continue };
        if shell.is_none() && !tcp_redirect {
            continue;
        }
        let dest = match &c.kind {
            Ev::Connect { dest, .. } => dest.text().unwrap_or_default(),
            _ => String::new(),
        };
        out.push(CodeHit {
            rule: &rules::SC047,
            severity: FindingSeverity::Critical,
            at: shell.map_or(b.at, |s| s.at.max(b.at)),
            reason: format!(
                "a reverse shell: a shell's input and output are bound to a network connection{}",
                if dest.trim().is_empty() {
                    String::new()
                } else {
                    format!(" ({})", dest.trim())
                }
            ),
        });
    }
}

/// The one-liners, on one line of text (`s` lower-cased).
pub(crate) fn line(s: &str, mask: u16, push: &mut dyn FnMut(Hit)) {
    if mask & (SHELLNET | SEND) == 0 {
        return;
    }
    let shell_i = [
        "sh -i",
        "bash -i",
        "/bin/sh",
        "/bin/bash",
        "cmd.exe",
        "bash -c",
        "sh -c",
        "0>&1",
        "<&3",
        ">&3",
    ];
    let both = |a: &str, b: &[&str]| s.contains(a) && b.iter().any(|w| s.contains(w));
    let found = if let Some(at) = s.find("/dev/tcp/").or_else(|| s.find("/dev/udp/")) {
        shell_i
            .iter()
            .any(|w| s.contains(w))
            .then_some((at, "a shell bound to /dev/tcp"))
    } else if let Some(at) = ["nc", "ncat", "netcat"].iter().find_map(|w| find_word(s, w)) {
        (s.contains(" -e ")
            || s.contains(" -c ")
            || s.contains("--exec")
            || s.contains("--sh-exec")
            || (s.contains("mkfifo") && shell_i.iter().any(|w| s.contains(w))))
        .then_some((at, "netcat running a shell"))
    } else if let Some(at) = find_word(s, "socat") {
        ((s.contains("exec:") || s.contains("system:")) && (s.contains("tcp") || s.contains("ssl")))
            .then_some((at, "socat running a shell"))
    } else {
        // Interpreter one-liners: (marker, what must come with it, description).
        const ONE_LINERS: &[(&str, &[&str], &str)] = &[
            (
                "fsockopen",
                &["exec", "/bin/sh", "proc_open"],
                "PHP fsockopen running a shell",
            ),
            ("pty.spawn", &["socket"], "Python socket + pty.spawn"),
            (
                "tcpclient",
                &["iex", "invoke-expression"],
                "PowerShell TCPClient running commands",
            ),
            ("-rsocket", &["exec", "spawn"], "Ruby socket running a shell"),
            ("use socket", &["exec"], "Perl socket running a shell"),
        ];
        ONE_LINERS
            .iter()
            .find(|(marker, with, _)| both(marker, with))
            .and_then(|(marker, _, how)| s.find(marker).map(|at| (at, *how)))
    };
    if let Some((at, how)) = found {
        push(Hit {
            rule: &rules::SC047,
            severity: FindingSeverity::Critical,
            at,
            reason: format!("a reverse shell ({how}): whoever listens there controls the machine"),
            vendor: false,
        });
    }
}

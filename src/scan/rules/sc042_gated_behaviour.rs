//! `SC042` gated-behaviour: a sensitive operation that runs only under a condition on the
//! time or the environment — the clock compared with a fixed date (a time bomb), or a probe
//! of the machine (sandbox, VM, container, debugger or CI detection), around the operation
//! or as an early exit before it. Sensitive: running computed text, starting a shell,
//! reading a secret, sending a secret or a file, deserialising, connecting a socket,
//! writing a shell start-up file.
//!
//! A scheduler comparing the clock with dates from its data, or an hour of the day, is not
//! gated: only a date written in the file makes a time bomb.
//!
//! Fixtures: `gated-py-timebomb`, `gated-js-sandbox`, `gated-sh-docker`, `fp-scheduler`.

use crate::model::FindingSeverity;
use crate::rules;
use crate::scan::code::CodeHit;
use crate::scan::code::facts::{Ev, Facts, GateKind};
use crate::scan::code::value::{show, taint};

/// The rule over one file's facts: one finding per gate.
pub(crate) fn check(facts: &Facts, out: &mut Vec<CodeHit>) {
    let mut seen: Vec<usize> = Vec::new();
    for e in &facts.events {
        let Some(gate) = &e.gate else { continue };
        let Some(what) = sensitive(&e.kind) else { continue };
        if seen.contains(&gate.at) {
            continue;
        }
        seen.push(gate.at);
        let (severity, cond) = match gate.kind {
            GateKind::Time => (FindingSeverity::High, "the clock is past a date written in the file"),
            GateKind::Probe => (
                FindingSeverity::Critical,
                "a probe of the machine (sandbox, VM, debugger or CI detection) says so",
            ),
        };
        out.push(CodeHit {
            rule: &rules::SC042,
            severity,
            at: e.at,
            reason: format!("{what} runs only when {cond}: {}", show(&gate.what)),
        });
    }
}

/// What makes an event worth hiding behind a condition.
fn sensitive(e: &Ev) -> Option<String> {
    Some(match e {
        Ev::Exec { api, arg, .. } => {
            let t = arg.deep_taint();
            if !(t.has(taint::NET | taint::DECODED | taint::OBFUSCATED | taint::SECRET)
                || arg.text().is_none()
                || api.contains("eval")
                || api.contains("exec"))
            {
                return None;
            }
            format!("`{api}`")
        }
        Ev::Spawn { program, api, .. } => {
            let p = program.text().unwrap_or_default();
            if !crate::scan::code::apis::is_shell_program(&p) && !program.deep_taint().has(taint::NET) {
                return None;
            }
            format!("`{api}` starting `{p}`")
        }
        Ev::SecretRead { what } => format!("reading {what}"),
        Ev::Send { api, payload, .. } if payload.has(taint::SECRET | taint::ENV_ALL | taint::FILE) => {
            format!("sending data with `{api}`")
        }
        Ev::Deser { api, .. } => format!("`{api}`"),
        Ev::Connect { api, .. } => format!("a socket opened by `{api}`"),
        Ev::Persist { path } => format!("writing {path}"),
        Ev::BindStdio => "binding a process to a socket".to_owned(),
        _ => return None,
    })
}

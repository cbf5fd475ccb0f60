//! `SC045` command-shadowing: a shell alias or function named like a command users type all
//! day (`sudo`, `git`, `ssh`, `ls`, …) whose body does something else first — sends data,
//! downloads, reads a secret or a typed password, writes a file — and often then runs the
//! real command so that nothing looks wrong. High; critical when it captures a password or
//! a secret. Also, `medium`: writing a shell start-up file (`~/.bashrc`, crontab, a launch
//! agent), whose content runs in every new shell; what is written there is scanned as a
//! script in turn.
//!
//! Fixtures: `shadow-sh-sudo`, `shadow-py-bashrc`, `shadow-js-zshrc`, `fp-shell-aliases`.

use crate::model::FindingSeverity;
use crate::rules;
use crate::scan::code::CodeHit;
use crate::scan::code::facts::{Ev, Facts};
use crate::scan::code::value::taint;

/// The rule over one file's facts.
pub(crate) fn check(facts: &Facts, out: &mut Vec<CodeHit>) {
    for e in &facts.events {
        match &e.kind {
            Ev::Shadow {
                name,
                how,
                body,
                calls_real,
            } => {
                let mut did: Vec<&str> = Vec::new();
                let mut captures = false;
                for b in facts.in_scope(*body) {
                    let what = match &b.kind {
                        Ev::Send { .. } => "sends data",
                        Ev::Download { .. } => "downloads",
                        Ev::Connect { .. } => "opens a connection",
                        Ev::Exec { arg, .. } if arg.deep_taint().has(taint::NET) => "runs downloaded code",
                        Ev::Exec { .. } => "runs computed text",
                        Ev::SecretRead { .. } => {
                            captures = true;
                            "reads a secret"
                        }
                        Ev::PasswordPrompt => {
                            captures = true;
                            "reads a typed password"
                        }
                        Ev::Persist { .. } => "writes a start-up file",
                        Ev::Write { .. } => "writes a file",
                        Ev::BindStdio => "binds a shell to a socket",
                        _ => continue,
                    };
                    if !did.contains(&what) {
                        did.push(what);
                    }
                }
                if did.is_empty() {
                    continue;
                }
                let severity = if captures
                    && did
                        .iter()
                        .any(|d| matches!(*d, "sends data" | "opens a connection" | "writes a file"))
                {
                    FindingSeverity::Critical
                } else {
                    FindingSeverity::High
                };
                let then = if *calls_real {
                    format!(", then runs the real `{name}` so that nothing looks wrong")
                } else {
                    String::new()
                };
                out.push(CodeHit {
                    rule: &rules::SC045,
                    severity,
                    at: e.at,
                    reason: format!(
                        "`{name}` is redefined as a shell {how} that {}{then}",
                        did.join(" and ")
                    ),
                });
            }
            Ev::Persist { path } => out.push(CodeHit {
                rule: &rules::SC045,
                severity: FindingSeverity::Medium,
                at: e.at,
                reason: format!("writes {path}: what it adds runs in every new shell or on a schedule"),
            }),
            _ => {}
        }
    }
}

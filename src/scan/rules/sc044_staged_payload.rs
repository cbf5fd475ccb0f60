//! `SC044` staged-payload: a script downloads a file, writes it, (makes it executable,) and
//! runs it — across lines, through variables, in any order the code allows. High; critical
//! when the download comes from a raw IP, a paste site, a shortener or plain http; `low`
//! from a vendor's documented host (context rule C1).
//!
//! Fixtures: `staged-sh-split`, `staged-py-urlretrieve`, `staged-js-fetch`, `fp-data-download`.

use crate::model::FindingSeverity;
use crate::rules;
use crate::scan::code::CodeHit;
use crate::scan::code::apis::is_shell_program;
use crate::scan::code::facts::{Ev, Facts};
use crate::scan::code::value::{Val, show, taint};
use crate::scan::url::url_evidence;

/// The rule over one file's facts.
pub(crate) fn check(facts: &Facts, out: &mut Vec<CodeHit>) {
    // Files written with downloaded data: their identity and the URL.
    let mut downloaded: Vec<(String, Option<String>)> = Vec::new();
    for e in &facts.events {
        match &e.kind {
            Ev::Download { url, to: Some(to), .. } => {
                if let Some(id) = to.identity() {
                    downloaded.push((id, url.text()));
                }
            }
            Ev::Write { path, data } if data.deep_taint().has(taint::NET) => {
                if let Some(id) = path.identity() {
                    let url = data
                        .origin
                        .as_deref()
                        .and_then(|o| o.strip_prefix("download of "))
                        .map(str::to_owned);
                    downloaded.push((id, url));
                }
            }
            _ => {}
        }
    }
    if downloaded.is_empty() {
        return;
    }
    let chmod: Vec<String> = facts
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            Ev::Chmod { path, exec: true } => path.identity(),
            _ => None,
        })
        .collect();
    let mut reported = false;
    for e in &facts.events {
        let run = match &e.kind {
            // The program, or the script given to a shell or an interpreter.
            Ev::Spawn { program, args, .. } => {
                let interpreter = program.text().is_some_and(|p| is_interpreter(&p));
                std::iter::once(program)
                    .chain(
                        args.iter()
                            .filter(|a| !a.text().is_some_and(|t| t.starts_with('-')))
                            .take(usize::from(interpreter)),
                    )
                    .find_map(|v| hit(v, &downloaded))
            }
            Ev::Exec { arg, .. } => arg.text().and_then(|t| {
                downloaded
                    .iter()
                    .find(|(id, _)| {
                        !id.is_empty()
                            && t.split_whitespace()
                                .any(|w| w.trim_start_matches("./").trim_matches(['"', '\'']) == id)
                    })
                    .cloned()
            }),
            _ => None,
        };
        let Some((path, url)) = run else { continue };
        if reported {
            break;
        }
        reported = true;
        let made_exec = chmod.contains(&path);
        let (evidence, vendor) = url
            .as_deref()
            .map_or((None, false), |u| url_evidence(&u.to_ascii_lowercase(), 0));
        let severity = if vendor {
            FindingSeverity::Low
        } else if evidence.is_some() {
            FindingSeverity::Critical
        } else {
            FindingSeverity::High
        };
        let from = url.map(|u| format!(" from {}", show(&u))).unwrap_or_default();
        let steps = if made_exec {
            "written, made executable and run"
        } else {
            "written and run"
        };
        out.push(CodeHit {
            rule: &rules::SC044,
            severity,
            at: e.at,
            reason: format!(
                "a staged payload: {} is downloaded{from}, {steps}{}",
                show(&path),
                evidence.map(|x| format!(" ({x})")).unwrap_or_default()
            ),
        });
    }
}

/// Shells and interpreters that run the file they are given.
fn is_interpreter(p: &str) -> bool {
    let base = p.rsplit('/').next().unwrap_or(p);
    is_shell_program(base)
        || base == "source"
        || base == "."
        || base.starts_with("python")
        || matches!(base, "node" | "perl" | "ruby" | "deno" | "bun" | "php")
}

fn hit(v: &Val, downloaded: &[(String, Option<String>)]) -> Option<(String, Option<String>)> {
    let id = v.identity()?;
    downloaded.iter().find(|(d, _)| *d == id).cloned()
}

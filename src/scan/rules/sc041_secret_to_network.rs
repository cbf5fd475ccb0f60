//! `SC041` secret-to-network: a credential or secret (a secret-named environment variable,
//! `~/.ssh`, `~/.aws`, a browser profile, a keychain, an agent's configuration such as
//! `~/.openclaw/…json`, the whole environment) flows into a network send in the same file —
//! through variables, within a function or the module, or through a helper function's
//! parameter. Not two unrelated lines: the data must reach the send.
//!
//! Severity: critical to a data catcher, paste site, chat bot or raw IP; high for a
//! credential file, the whole environment, or a vendor's key sent to another host; medium
//! when the destination is not known or the key has no vendor in its name; nothing when a
//! vendor's key goes to that vendor (`OPENAI_API_KEY` to `api.openai.com`).
//!
//! Fixtures: `exfil-py-ssh-helper`, `exfil-js-openclaw`, `exfil-sh-aws`, `fp-vendor-api-client`.

use crate::model::FindingSeverity;
use crate::rules;
use crate::scan::code::CodeHit;
use crate::scan::code::apis::{dest_host, env_vendor, exfil_host, host_of_vendor};
use crate::scan::code::facts::{Ev, Facts};
use crate::scan::code::value::{Val, show, taint};

/// The rule over one file's facts.
pub(crate) fn check(facts: &Facts, out: &mut Vec<CodeHit>) {
    for e in &facts.events {
        let Ev::Send { api, payload, dest } = &e.kind else {
            continue;
        };
        if !payload.has(taint::SECRET | taint::ENV_ALL) {
            continue;
        }
        // A socket's destination is where it was connected.
        let dest = dest_text(dest).or_else(|| {
            facts.in_scope(e.scope).find_map(|c| match &c.kind {
                Ev::Connect { dest, .. } => dest_text(dest),
                _ => None,
            })
        });
        let what = if payload.has(taint::SECRET) {
            payload.what.clone().unwrap_or_else(|| "a secret".to_owned())
        } else {
            "the whole environment".to_owned()
        };
        let host = dest.as_deref().map(dest_host).unwrap_or_default();
        let env_var = what.strip_prefix("the environment variable ");
        let (severity, to) = match (dest.as_deref().and_then(exfil_host), env_var) {
            (Some(why), _) => (FindingSeverity::Critical, format!("to {why}")),
            (None, Some(var)) => match env_vendor(var) {
                Some(v) if !host.is_empty() && host_of_vendor(&host, &v) => continue,
                Some(_) if !host.is_empty() => (FindingSeverity::High, format!("to {host}, not its vendor's host")),
                _ if host.is_empty() => (
                    FindingSeverity::Medium,
                    "to a destination not known before it runs".into(),
                ),
                _ => (FindingSeverity::Medium, format!("to {host}")),
            },
            (None, None) if what == "a .env file" => (FindingSeverity::Medium, to_host(&host)),
            (None, None) => (FindingSeverity::High, to_host(&host)),
        };
        let folded = match (&e.kind, dest.as_deref()) {
            (Ev::Send { dest: d, .. }, Some(t)) if d.deep_how().is_some() => {
                format!(" (the destination folds to {})", show(t))
            }
            _ => String::new(),
        };
        out.push(CodeHit {
            rule: &rules::SC041,
            severity,
            at: e.at,
            reason: format!("{what} is sent over the network by `{api}` {to}{folded}"),
        });
    }
}

fn to_host(host: &str) -> String {
    if host.is_empty() {
        "to a destination not known before it runs".to_owned()
    } else {
        format!("to {host}")
    }
}

/// A destination's text, when known (`https://x/y`, `192.0.2.1 4444`).
fn dest_text(v: &Val) -> Option<String> {
    v.text()
        .or_else(|| v.origin.clone().filter(|o| o.contains("://")))
        .filter(|t| !t.trim().is_empty())
}

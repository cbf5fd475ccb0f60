//! `SC016` environment-dump: the whole environment (`env`, `printenv`, `os.environ`,
//! `process.env` serialised whole) dumped into a network send on the same line (critical) or
//! within [`WINDOW`] lines of one in the same code block (high). A filtered dump
//! (`env | grep PROXY`) and a single variable are not reported.
//!
//! Fixtures: `environment-dump`.

use crate::model::FindingSeverity;
use crate::rules;
use crate::scan::context::Hit;
use crate::scan::lexicon::word_at;
use crate::scan::lexicon::{CRED, ENV, SEND};
use crate::scan::rules::sc015_credential_exfiltration::{WINDOW, sends};
use crate::scan::rules::{Window, already};

/// The rule on one line (`raw` as written, `s` lower-cased): the environment piped into a
/// send.
pub(crate) fn line(raw: &str, s: &str, mask: u16, push: &mut dyn FnMut(Hit)) {
    if mask & (CRED | ENV) != 0
        && mask & SEND != 0
        && let Some(at) = env_dump(s)
        && sends(raw, s)
    {
        push(Hit {
            rule: &rules::SC016,
            severity: FindingSeverity::Critical,
            at,
            reason: "the whole environment (every secret in it) is sent over the network".to_owned(),
            vendor: false,
        });
    }
}

/// The rule on line `i` and its neighbours: the environment dumped near a send.
pub(crate) fn window(w: &Window<'_>, i: usize, hits: &mut Vec<(usize, Hit)>) {
    let l = w.line(i);
    if l.block == 0 || l.mask & (CRED | ENV) == 0 || !w.send_near(i, WINDOW) {
        return;
    }
    if let Some(at) = env_dump(&w.low(i))
        && !already(hits, i, "SC016")
    {
        hits.push((
            i,
            Hit {
                rule: &rules::SC016,
                severity: FindingSeverity::High,
                at,
                reason: format!("the whole environment is dumped within {WINDOW} lines of a network send"),
                vendor: false,
            },
        ));
    }
}

/// A dump of the whole environment on the line: `env`/`printenv`/`set`/`export -p` as a
/// whole command (not filtered by grep), `os.environ` or `process.env` serialised whole.
pub(crate) fn env_dump(s: &str) -> Option<usize> {
    for w in ["printenv", "env", "set", "export -p", "get-childitem env:", "gci env:"] {
        let mut from = 0;
        while let Some(p) = s[from..].find(w) {
            let at = from + p;
            from = at + w.len();
            let before = s[..at].trim_end();
            let starts_command =
                before.is_empty() || before.ends_with(['|', ';', '(', '`', '&', '$']) || before.ends_with("$(");
            if !starts_command || !word_at(s, at, w.len()) {
                continue;
            }
            let after = s[at + w.len()..].trim_start();
            // `env FOO=bar cmd` runs a command; `env | grep X` filters.
            let whole = after.is_empty() || after.starts_with(['|', '>', ')', '`', ';', '&']);
            let filtered = after.starts_with('|')
                && ["grep", "rg ", "awk", "sed", "head", "wc"]
                    .iter()
                    .any(|f| after[1..].trim_start().starts_with(f));
            if whole && !filtered {
                return Some(at);
            }
        }
    }
    for w in [
        "dict(os.environ)",
        "json.dumps(os.environ",
        "json.dumps(dict(os.environ",
        "str(os.environ)",
        "os.environ.items()",
        "json.stringify(process.env)",
        "object.entries(process.env)",
        "data=os.environ",
        "json=dict(os.environ",
        "body: process.env",
    ] {
        if let Some(at) = s.find(w) {
            return Some(at);
        }
    }
    None
}

//! `SC011` download-and-execute: downloaded code is run — piped into a shell (`curl … | sh`),
//! wrapped in an exec (`bash <(wget …)`, `iex (iwr …)`), or run by a later command of the
//! line (`&& chmod +x f && ./f`). Critical with evidence from the URL (a raw IP, a paste
//! site, a shortener, plain http); a vendor's documented installer is `low` (C1).
//!
//! Fixtures: `download-and-run`, `glot-zip-installer`, `fp-vendor-installer`.

use crate::model::FindingSeverity;
use crate::rules;
use crate::scan::context::Hit;
use crate::scan::lexicon::{FETCH, find_word};
use crate::scan::sinks::{pipes_to_shell, then_runs, wrapped_in_exec};
use crate::scan::url::{host_of, url_evidence};

/// The rule on one line (`s` lower-cased); whether it fired.
pub(crate) fn line(s: &str, mask: u16, push: &mut dyn FnMut(Hit)) -> bool {
    let mut exec_found = false;
    if mask & FETCH != 0 {
        for fetcher in [
            "curl",
            "wget",
            "iwr",
            "invoke-webrequest",
            "invoke-restmethod",
            "irm",
            "downloadstring",
            "downloadfile",
        ] {
            let Some(at) = find_word(s, fetcher).or_else(|| {
                if fetcher.starts_with("download") {
                    s.find(fetcher)
                } else {
                    None
                }
            }) else {
                continue;
            };
            let how = if let Some((sh, _)) = pipes_to_shell(s, at) {
                Some(format!("piped into `{sh}`"))
            } else if let Some(w) = wrapped_in_exec(s, at) {
                Some(format!("run by `{w}`"))
            } else if let Some(w) = then_runs(&s[at..]) {
                Some(format!("then run (`{w}`)"))
            } else if fetcher.starts_with("download") && s.contains("iex") {
                Some("run by `iex`".to_owned())
            } else {
                None
            };
            if let Some(how) = how {
                let (evidence, vendor) = url_evidence(s, at);
                let host = host_of(s, at);
                let from = if host.is_empty() {
                    String::new()
                } else {
                    format!(" from {host}")
                };
                let (severity, reason) = match evidence {
                    Some(e) => (
                        FindingSeverity::Critical,
                        format!("downloaded code is executed ({how}) {e}"),
                    ),
                    None => (
                        FindingSeverity::High,
                        format!("downloaded code is executed ({how}){from}"),
                    ),
                };
                push(Hit {
                    rule: &rules::SC011,
                    severity,
                    at,
                    reason,
                    vendor,
                });
                exec_found = true;
                break;
            }
        }
    }
    exec_found
}

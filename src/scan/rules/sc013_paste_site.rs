//! `SC013` paste-site: a paste site or anonymous file drop (glot.io, pastebin, transfer.sh,
//! …) — `medium` as a link, critical as an installer (its download is run, or instructions
//! to run something are within three lines): nobody accountable wrote that code.
//!
//! Fixtures: `glot-zip-installer`.

use crate::model::FindingSeverity;
use crate::rules;
use crate::scan::context::Hit;
use crate::scan::lexicon::{RUN_WORDS, URL};
use crate::scan::rules::{Window, already};
use crate::scan::url::{first_url, is_paste};

/// The rule on line `i` and its neighbours.
pub(crate) fn window(w: &Window<'_>, i: usize, hits: &mut Vec<(usize, Hit)>) {
    if w.line(i).mask & URL == 0 {
        return;
    }
    let s = w.low(i);
    let mut from = 0;
    while let Some((scheme, host, _)) = first_url(&s, from) {
        if is_paste(host) {
            let installer =
                already(hits, i, "SC011") || w.near(i, 3).any(|j| RUN_WORDS.iter().any(|r| w.low(j).contains(r)));
            let (severity, reason) = if installer {
                (
                    FindingSeverity::Critical,
                    format!("the paste site {host} is used as an installer: nobody accountable wrote that code"),
                )
            } else {
                (
                    FindingSeverity::Medium,
                    format!("link to the paste site {host}: content there can change at any time"),
                )
            };
            hits.push((
                i,
                Hit {
                    rule: &rules::SC013,
                    severity,
                    at: scheme,
                    reason,
                    vendor: false,
                },
            ));
            break;
        }
        from = s[scheme..].find("://").map_or(s.len(), |p| scheme + p + 3);
    }
}

//! `SC014` raw-ip-url: a URL whose host is a public IP address rather than a name (private,
//! loopback and documentation ranges are not reported). A download of such a URL that is
//! run is reported by `SC011` instead.
//!
//! Fixtures: `raw-ip-url`.

use crate::model::FindingSeverity;
use crate::rules;
use crate::scan::context::Hit;
use crate::scan::lexicon::URL;
use crate::scan::url::{first_url, public_ip};

/// The rule on one line (`s` lower-cased).
pub(crate) fn line(s: &str, mask: u16, push: &mut dyn FnMut(Hit)) {
    if mask & URL != 0 {
        let mut from = 0;
        while let Some((scheme, host, _)) = first_url(s, from) {
            if public_ip(host) {
                push(Hit {
                    rule: &rules::SC014,
                    severity: FindingSeverity::Medium,
                    at: scheme,
                    reason: format!("URL with the raw IP address {host} instead of a name"),
                    vendor: false,
                });
                break;
            }
            from = s[scheme..].find("://").map_or(s.len(), |p| scheme + p + 3);
        }
    }
}

//! URLs in a line: the first URL's host, vendors' installer hosts (context rule C1), paste
//! sites, shorteners, public IP literals, and the evidence a URL adds to a download that is
//! run.

use crate::scan::lexicon::{PASTE_HOSTS, SHORTENERS, VENDOR_HOSTS};

/// Host (and `host/path`) of the first URL at or after `from`.
pub(crate) fn first_url(s: &str, from: usize) -> Option<(usize, &str, &str)> {
    let p = s.get(from..)?.find("://")? + from;
    let scheme_start = s[..p]
        .char_indices()
        .rev()
        .find(|(_, c)| !c.is_ascii_alphabetic())
        .map_or(0, |(i, c)| i + c.len_utf8());
    let rest = &s[p + 3..];
    let end = rest
        .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ')' | '>' | '<' | '|' | '`' | ']' | ',' | ';'))
        .unwrap_or(rest.len());
    let url = &rest[..end];
    let host_end = url.find(['/', '?', '#']).unwrap_or(url.len());
    let mut host = &url[..host_end];
    if let Some(at) = host.rfind('@') {
        host = &host[at + 1..];
    }
    if !host.starts_with('[')
        && let Some(c) = host.rfind(':')
    {
        host = &host[..c];
    }
    Some((scheme_start, host, url))
}

/// `host` is `domain` or one of its subdomains.
pub(crate) fn host_matches(host: &str, domain: &str) -> bool {
    host == domain || host.strip_suffix(domain).is_some_and(|h| h.ends_with('.'))
}

/// A vendor's documented installer host or `host/path` prefix ([`VENDOR_HOSTS`]).
pub(crate) fn is_vendor(host: &str, url: &str) -> bool {
    VENDOR_HOSTS.iter().any(|v| {
        if v.contains('/') {
            url.starts_with(v)
        } else {
            host_matches(host, v)
        }
    })
}

/// A paste site or anonymous file drop ([`PASTE_HOSTS`]).
pub(crate) fn is_paste(host: &str) -> bool {
    PASTE_HOSTS.iter().any(|p| host_matches(host, p))
}

/// A public IPv4 or IPv6 literal (private, loopback, link-local and documentation ranges are
/// not: they do not leave the machine or the network, or are placeholders).
pub(crate) fn public_ip(host: &str) -> bool {
    if let Ok(ip) = host.parse::<std::net::Ipv4Addr>() {
        let o = ip.octets();
        let doc = matches!(o, [192, 0, 2, _] | [198, 51, 100, _] | [203, 0, 113, _]);
        return !(ip.is_private()
            || ip.is_loopback()
            || ip.is_link_local()
            || ip.is_unspecified()
            || ip.is_broadcast()
            || doc
            || o[0] >= 224
            || (o[0] == 100 && (64..128).contains(&o[1])));
    }
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']'))
        && let Ok(ip) = inner.parse::<std::net::Ipv6Addr>()
    {
        let seg = ip.segments();
        return !(ip.is_loopback()
            || ip.is_unspecified()
            || (seg[0] & 0xfe00) == 0xfc00
            || (seg[0] & 0xffc0) == 0xfe80
            || seg[0] == 0x2001 && seg[1] == 0x0db8);
    }
    false
}

/// Evidence from a URL that makes running what it serves critical (a raw IP, a paste site, a
/// shortener, plain http), and whether the URL is a vendor's installer (C1).
pub(crate) fn url_evidence(s: &str, from: usize) -> (Option<String>, bool) {
    let Some((scheme, host, url)) = first_url(s, from).or_else(|| first_url(s, 0)) else {
        return (None, false);
    };
    if is_vendor(host, url) {
        return (None, true);
    }
    let plain_http = s[scheme..].starts_with("http://") && !matches!(host, "localhost" | "127.0.0.1");
    let why = if public_ip(host) {
        Some(format!("from the raw IP address {host}"))
    } else if is_paste(host) {
        Some(format!("from the paste site {host}"))
    } else if SHORTENERS.iter().any(|d| host_matches(host, d)) {
        Some(format!("through the URL shortener {host}"))
    } else if plain_http {
        Some(format!("over plain http from {host}"))
    } else {
        None
    };
    (why, false)
}

/// The host of the first URL at or after `from` (else of the line's first URL); empty when
/// there is none.
pub(crate) fn host_of(s: &str, from: usize) -> String {
    first_url(s, from)
        .or_else(|| first_url(s, 0))
        .map(|(_, h, _)| h.to_owned())
        .unwrap_or_default()
}

//! `SC015` credential-exfiltration: a credential store (`~/.ssh`, `~/.aws`, a keychain,
//! `.netrc`, a `.env` file, …) read on the line of a network send (critical), or within
//! [`WINDOW`] lines of one in the same code block (high; `medium` for a `.env` file).
//!
//! Fixtures: `credential-exfil`, `fp-security-skill`.

use crate::model::FindingSeverity;
use crate::rules;
use crate::scan::context::Hit;
use crate::scan::lexicon::{CRED, ENV, SEND, find_word};
use crate::scan::rules::{Window, already};

/// Lines apart within which a credential read and a send are related.
pub const WINDOW: usize = 8;

/// The rule on one line (`raw` as written, `s` lower-cased): a credential piped into a send.
pub(crate) fn line(raw: &str, s: &str, mask: u16, push: &mut dyn FnMut(Hit)) {
    if mask & (CRED | ENV) != 0
        && mask & SEND != 0
        && let Some((at, what)) = credential(s)
        && sends(raw, s)
    {
        push(Hit {
            rule: &rules::SC015,
            severity: FindingSeverity::Critical,
            at,
            reason: format!("{what} is read and sent over the network on the same line"),
            vendor: false,
        });
    }
}

/// The rule on line `i` and its neighbours: a credential read near a send.
pub(crate) fn window(w: &Window<'_>, i: usize, hits: &mut Vec<(usize, Hit)>) {
    let l = w.line(i);
    if l.block == 0 || l.mask & (CRED | ENV) == 0 || !w.send_near(i, WINDOW) {
        return;
    }
    if let Some((at, what)) = credential(&w.low(i))
        && !already(hits, i, "SC015")
    {
        let severity = if what == "a .env file" {
            FindingSeverity::Medium
        } else {
            FindingSeverity::High
        };
        hits.push((
            i,
            Hit {
                rule: &rules::SC015,
                severity,
                at,
                reason: format!("{what} is read within {WINDOW} lines of a network send"),
                vendor: false,
            },
        ));
    }
}

/// A credential store read on the line: its offset and a description. `.env` only as a file
/// (`cat .env`, `open(".env")`), not `process.env`.
pub(crate) fn credential(s: &str) -> Option<(usize, &'static str)> {
    const STRONG: &[(&str, &str)] = &[
        ("~/.ssh", "an SSH key folder (~/.ssh)"),
        ("$home/.ssh", "an SSH key folder (~/.ssh)"),
        (".ssh/id_", "an SSH private key"),
        ("id_rsa", "an SSH private key"),
        ("id_ed25519", "an SSH private key"),
        ("id_ecdsa", "an SSH private key"),
        ("~/.aws", "AWS credentials (~/.aws)"),
        (".aws/credentials", "AWS credentials (~/.aws)"),
        ("find-generic-password", "a keychain password"),
        ("find-internet-password", "a keychain password"),
        ("dump-keychain", "the keychain"),
        (".keychain", "a keychain"),
        ("keychain-db", "a keychain"),
        (".netrc", "~/.netrc"),
        (".git-credentials", "git credentials"),
        (".gnupg", "the GnuPG keyring"),
        ("/etc/shadow", "/etc/shadow"),
        ("login data", "browser saved passwords"),
        ("wallet.dat", "a cryptocurrency wallet"),
        (".kube/config", "a Kubernetes config"),
        (".docker/config.json", "Docker registry credentials"),
        (".config/gcloud", "Google Cloud credentials"),
        (".pypirc", "PyPI credentials"),
        (".npmrc", "npm credentials"),
    ];
    for (w, what) in STRONG {
        if let Some(at) = s.find(w) {
            return Some((at, what));
        }
    }
    let mut from = 0;
    while let Some(p) = s[from..].find(".env") {
        let at = from + p;
        let b = s.as_bytes();
        let prev_ok = at == 0 || matches!(b[at - 1], b' ' | b'"' | b'\'' | b'/' | b'<' | b'(' | b'=' | b'`');
        let next_ok = b.get(at + 4).is_none_or(|c| !(c.is_ascii_alphanumeric() || *c == b'_'));
        if prev_ok && next_ok {
            return Some((at, "a .env file"));
        }
        from = at + 4;
    }
    None
}

/// Whether the line sends data out (not a plain download).
pub(crate) fn sends(raw: &str, s: &str) -> bool {
    if find_word(s, "curl").is_some()
        && [
            " -d ",
            " -d@",
            " --data",
            " -F ",
            " --form",
            " -T ",
            " --upload-file",
            " -X POST",
            " -X PUT",
            " --request POST",
            "-d @",
        ]
        .iter()
        .any(|f| raw.contains(f) || (f.contains("POST") && s.contains(&f.to_ascii_lowercase())))
    {
        return true;
    }
    if find_word(s, "wget").is_some() && (s.contains("--post") || s.contains("--body")) {
        return true;
    }
    [
        "requests.post",
        "requests.put",
        "httpx.post",
        "urlopen(",
        "axios.post",
        "http.request",
        "https.request",
        "smtplib",
        "sendall",
        "/dev/tcp/",
        "api.telegram.org",
        "discord.com/api/webhooks",
        "invoke-restmethod",
        "invoke-webrequest",
        "method: 'post'",
        "method: \"post\"",
        "method=\"post\"",
    ]
    .iter()
    .any(|w| s.contains(w))
        || find_word(s, "nc").is_some()
        || find_word(s, "ncat").is_some()
        || find_word(s, "netcat").is_some()
        || find_word(s, "scp").is_some()
}

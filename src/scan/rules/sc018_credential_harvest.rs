//! `SC018` credential-harvest-instruction: text that tells the agent to read credentials or
//! private files (`~/.ssh`, `~/.aws`, a `.env` file, a keychain, browser passwords, an
//! agent's configuration, "all API keys") and to include, send or upload them — into its
//! reply, a report, a URL, a webhook. High. Like prompt injection it lives in prose, so the
//! prose context rule does not lower it; a negated sentence ("never include your keys") is
//! advice, not an instruction, and is not reported.
//!
//! Fixtures: `prompt-harvest-ssh`, `prompt-harvest-openclaw`, `fp-security-skill`.

use crate::model::FindingSeverity;
use crate::rules;
use crate::scan::code::apis::credential_path;
use crate::scan::context::Hit;
use crate::scan::lexicon::{HARVEST, find_word};

/// Secrets named in prose without a path: only when several or all of them are meant.
const QUANTIFIED: &[&str] = &[
    "all api keys",
    "all the api keys",
    "every api key",
    "any api keys",
    "all tokens",
    "all access tokens",
    "all passwords",
    "all saved passwords",
    "saved passwords",
    "all secrets",
    "all credentials",
    "all environment variables",
    "every environment variable",
    "all env vars",
    "private key",
    "private keys",
    "ssh key",
    "ssh keys",
    "seed phrase",
    "recovery phrase",
    "mnemonic",
    "browser cookies",
    "session cookies",
    "the user's api key",
    "the user's token",
    "the user's password",
    "the user's credentials",
    "their api keys",
    "their passwords",
    "their credentials",
    "keychain",
];

/// Verbs that take the secret out.
const EXFIL_VERBS: &[&str] = &[
    "send",
    "upload",
    "post",
    "exfiltrate",
    "transmit",
    "forward",
    "email",
    "paste",
    "include",
    "attach",
    "append",
    "embed",
    "submit",
    "leak",
];

/// Where it goes: the agent's output or somewhere outside.
const DESTINATIONS: &[&str] = &[
    "://",
    "webhook",
    "your reply",
    "your response",
    "your answer",
    "your output",
    "your message",
    "the reply",
    "the response",
    "the output",
    "the report",
    "the summary",
    "this chat",
    "the chat",
    "the conversation",
    "a gist",
    "the commit",
    "the issue",
    "pull request",
    "pastebin",
    "telegram",
    "discord",
    "to me",
    "to us",
    "the url",
    "query string",
    "request body",
];

/// Words that make a sentence advice rather than an instruction.
const NEGATIONS: &[&str] = &[
    "never",
    "do not",
    "don't",
    "must not",
    "mustn't",
    "should not",
    "shouldn't",
    "avoid",
    "not be",
    "redact",
    "mask",
    "without exposing",
    "without revealing",
    "not include",
    "no secrets",
];

/// The rule on one line (`raw` as written, `s` lower-cased).
pub(crate) fn line(raw: &str, s: &str, mask: u16, push: &mut dyn FnMut(Hit)) {
    if mask & HARVEST == 0 || !EXFIL_VERBS.iter().any(|v| s.contains(v)) || !DESTINATIONS.iter().any(|d| s.contains(d))
    {
        return;
    }
    for sentence in sentences(s) {
        let (start, text) = sentence;
        let secret = credential_path(text)
            .map(|w| (text.find(['~', '.', '/']).unwrap_or(0), w))
            .or_else(|| {
                QUANTIFIED
                    .iter()
                    .find_map(|q| text.find(q).map(|at| (at, (*q).to_owned())))
            });
        let Some((at, what)) = secret else { continue };
        let verb = EXFIL_VERBS
            .iter()
            .any(|v| find_word(text, v).is_some() || find_word(text, &format!("{v}s")).is_some());
        let dest = DESTINATIONS.iter().any(|d| text.contains(d));
        let negated = NEGATIONS.iter().any(|n| text.contains(n));
        if verb && dest && !negated {
            let at = start + at;
            let shown: String = raw
                .get(start..start + text.len())
                .unwrap_or(text)
                .trim()
                .chars()
                .take(100)
                .collect();
            push(Hit {
                rule: &rules::SC018,
                severity: FindingSeverity::High,
                at,
                reason: format!("tells the agent to take {what} and send or show it: \"{shown}\""),
                vendor: false,
            });
            return;
        }
    }
}

/// Sentences of a line with their byte offsets (split at `. `, `! `, `? ` and `; `; the dot
/// of `~/.ssh` or `.env` is followed by a letter and does not end one).
fn sentences(s: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = 0;
    let b = s.as_bytes();
    for i in 0..b.len() {
        if matches!(b[i], b'.' | b'!' | b'?' | b';') && b.get(i + 1).is_none_or(|c| *c == b' ') {
            out.push((start, &s[start..i]));
            start = i + 1;
        }
    }
    if start < s.len() {
        out.push((start, &s[start..]));
    }
    out
}

//! `SC010` decode-and-execute: decoded data is executed — a decoder piped into a shell
//! (`base64 -d | sh`), wrapped in an exec (`eval "$(echo … | base64 -d)"`), or passed to an
//! evaluator (`exec(b64decode(…))`); PowerShell's `-EncodedCommand`; and, `low`, an `eval` of
//! any other command's output. The decoded literal is shown when there is one.
//!
//! Fixtures: `base64-pipe-bash`, `eval-decoded`, `fp-security-skill`.

use base64::Engine as _;

use crate::model::FindingSeverity;
use crate::rules;
use crate::scan::context::Hit;
use crate::scan::lexicon::{BENIGN_EVALS, DECODE, EVAL, find_word};
use crate::scan::sinks::{pipes_to_shell, wrapped_in_exec};

/// Decodes a base64 literal on the line for the reason text, when there is one.
fn decoded_literal(raw: &str) -> Option<String> {
    let token = raw
        .split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '(' | ')' | '|' | '`'))
        .filter(|t| {
            t.len() >= 12
                && t.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
        })
        .max_by_key(|t| t.len())?;
    let bytes = base64::engine::general_purpose::STANDARD.decode(token).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let text: String = text.chars().filter(|c| !c.is_control()).take(60).collect();
    Some(text)
}

/// The rule on one line (`raw` as written, `s` lower-cased).
pub(crate) fn line(raw: &str, s: &str, mask: u16, push: &mut dyn FnMut(Hit)) {
    if mask & (DECODE | EVAL) != 0 {
        let decoders = [
            "base64 -d",
            "base64 --decode",
            "base64 -di",
            "base64 -id",
            "base32 -d",
            "base32 --decode",
            "b64decode",
            "atob(",
            "xxd -r",
            "xxd -p -r",
            "openssl enc -d",
            "openssl base64 -d",
            "frombase64string",
            "bytes.fromhex",
            "codecs.decode",
            "zlib.decompress",
            "marshal.loads",
        ];
        let mut done = false;
        for d in decoders {
            let Some(at) = s.find(d) else { continue };
            let how = if let Some((sh, _)) = pipes_to_shell(s, at) {
                Some(format!("piped into `{sh}`"))
            } else if let Some(w) = wrapped_in_exec(s, s[..at].rfind(['(', '`']).map_or(at, |p| p + 1)) {
                Some(format!("run by `{w}`"))
            } else if ["exec(", "eval(", "iex", "invoke-expression", "exec (", "compile("]
                .iter()
                .any(|w| s[..at].contains(w))
            {
                Some("passed to an evaluator".to_owned())
            } else {
                None
            };
            if let Some(how) = how {
                let payload = decoded_literal(raw)
                    .map(|t| format!(": decodes to \"{t}\""))
                    .unwrap_or_default();
                push(Hit {
                    rule: &rules::SC010,
                    severity: FindingSeverity::Critical,
                    at,
                    reason: format!("decoded data is executed ({how}){payload}"),
                    vendor: false,
                });
                done = true;
                break;
            }
        }
        // PowerShell's encoded commands.
        if !done
            && (s.contains("powershell") || s.contains("pwsh"))
            && let Some(at) = [" -enc ", " -encodedcommand ", " -e "].iter().find_map(|w| s.find(w))
            && s[at..].split_whitespace().nth(1).is_some_and(|t| t.len() >= 16)
        {
            push(Hit {
                rule: &rules::SC010,
                severity: FindingSeverity::Critical,
                at,
                reason: "PowerShell runs a base64-encoded command".to_owned(),
                vendor: false,
            });
            done = true;
        }
        // `eval "$(cmd)"` of anything else.
        if !done && let Some(at) = find_word(s, "eval") {
            let rest = s[at + 4..].trim_start().trim_start_matches(['"', '\'']);
            if (rest.starts_with("$(") || rest.starts_with('`')) && !BENIGN_EVALS.iter().any(|b| rest.contains(b)) {
                push(Hit {
                    rule: &rules::SC010,
                    severity: FindingSeverity::Low,
                    at,
                    reason: "`eval` runs the output of a command; check what that command prints".to_owned(),
                    vendor: false,
                });
            }
        }
    }
}

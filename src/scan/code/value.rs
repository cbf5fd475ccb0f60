//! The values the folding engine computes: a constant (string, number, list, mapping), a
//! reference to a known API (`os.system`, `child_process.exec`, `process.env`), or an
//! unknown value — each with the taint of where its data came from (a secret, the network,
//! a decoder, the clock, an environment probe) and, when it was computed rather than written,
//! how (`concatenation`, `base64 decode`, …).
//!
//! Decoders of literals live here too (base64, hex, URL escapes, ROT13, zlib), each bounded
//! by [`MAX_STR`] so that a decoded value never grows without limit.

use std::io::Read as _;

use base64::Engine as _;

/// Longest string the engine keeps (bytes); longer results become unknown.
pub(crate) const MAX_STR: usize = 256 * 1024;

/// Most elements of a folded list.
pub(crate) const MAX_LIST: usize = 4096;

/// Taint: where a value's data came from (bits, combined by union).
pub(crate) mod taint {
    /// A credential or secret: a secret-named environment variable, a credential file.
    pub(crate) const SECRET: u16 = 1;
    /// The whole environment.
    pub(crate) const ENV_ALL: u16 = 1 << 1;
    /// Downloaded or received from the network.
    pub(crate) const NET: u16 = 1 << 2;
    /// Read from a file.
    pub(crate) const FILE: u16 = 1 << 3;
    /// The output of a decoder (base64, hex, zlib, char codes, …).
    pub(crate) const DECODED: u16 = 1 << 4;
    /// Decoded from a literal written in the file (an encoded payload).
    pub(crate) const ENCODED_LITERAL: u16 = 1 << 5;
    /// Built to hide a word: char codes, reversal, fragments joined.
    pub(crate) const OBFUSCATED: u16 = 1 << 6;
    /// The current time (`datetime.now()`, `Date.now()`, `date +%s`).
    pub(crate) const TIME: u16 = 1 << 7;
    /// A probe of the machine: sandbox, VM, debugger or CI detection.
    pub(crate) const PROBE: u16 = 1 << 8;
    /// A socket (or a value derived from one).
    pub(crate) const SOCKET: u16 = 1 << 9;
    /// A process running an interactive shell.
    pub(crate) const SHELL_PROC: u16 = 1 << 10;
    /// A fixed date or timestamp written in the file (a literal year ≥ 2000, an epoch value,
    /// an ISO date string): compared with the current time, it makes a time bomb.
    pub(crate) const DATE_CONST: u16 = 1 << 11;
    /// A handle on a file opened for writing (its path is the value's origin).
    pub(crate) const WRITER: u16 = 1 << 12;
}

/// Where a value's data came from: [`taint`] bits, the function parameters it depends on, and
/// a description of the first secret.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Taint {
    /// [`taint`] bits.
    pub(crate) bits: u16,
    /// Bit `i`: depends on parameter `i` of the function being summarised.
    pub(crate) params: u32,
    /// What the secret is (`the environment variable AWS_SECRET_ACCESS_KEY`, `~/.ssh/id_rsa`).
    pub(crate) what: Option<String>,
}

impl Taint {
    /// A taint of `bits` with no description.
    pub(crate) fn of(bits: u16) -> Taint {
        Taint {
            bits,
            ..Taint::default()
        }
    }

    /// A secret taint described by `what`.
    pub(crate) fn secret(what: impl Into<String>) -> Taint {
        Taint {
            bits: taint::SECRET,
            params: 0,
            what: Some(what.into()),
        }
    }

    /// Whether any of `bits` is set.
    pub(crate) fn has(&self, bits: u16) -> bool {
        self.bits & bits != 0
    }

    /// The union of two taints (the first description wins).
    pub(crate) fn join(&mut self, other: &Taint) {
        self.bits |= other.bits;
        self.params |= other.params;
        if self.what.is_none() {
            self.what.clone_from(&other.what);
        }
    }
}

/// The shape of a value.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) enum Shape {
    /// Nothing is known of the value.
    #[default]
    Unknown,
    /// A string (bytes are kept as lossy UTF-8).
    Str(String),
    /// An integer.
    Num(i64),
    /// A list, tuple or array.
    List(Vec<Val>),
    /// A mapping or object with string keys, in written order.
    Dict(Vec<(String, Val)>),
    /// A known API or module, by dotted path (`os.system`, `child_process`, `process.env`);
    /// a call adds `()` (`socket.socket()`).
    Ref(String),
    /// Parameter `i` of the function being summarised.
    Param(usize),
    /// A function defined in the file, by index.
    Func(usize),
}

/// A value with its taint and how it was computed.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Val {
    /// What is known of it.
    pub(crate) shape: Shape,
    /// Where its data came from.
    pub(crate) taint: Taint,
    /// How it was computed when it is not a plain literal (`concatenation`, `base64
    /// decode`): a folded value the text rules never saw as written.
    pub(crate) how: Option<&'static str>,
    /// For unknown values: the name or path that identifies it (a variable, a file path), so
    /// that two uses can be recognised as the same file.
    pub(crate) origin: Option<String>,
}

impl Val {
    /// An unknown value.
    pub(crate) fn unknown() -> Val {
        Val::default()
    }

    /// A string literal.
    pub(crate) fn str(s: impl Into<String>) -> Val {
        Val {
            shape: Shape::Str(s.into()),
            ..Val::default()
        }
    }

    /// A string computed by `how`.
    pub(crate) fn folded(s: String, how: &'static str) -> Val {
        if s.len() > MAX_STR {
            return Val::unknown();
        }
        Val {
            shape: Shape::Str(s),
            how: Some(how),
            ..Val::default()
        }
    }

    /// A number.
    pub(crate) fn num(n: i64) -> Val {
        Val {
            shape: Shape::Num(n),
            ..Val::default()
        }
    }

    /// A reference to a known API.
    pub(crate) fn api(path: impl Into<String>) -> Val {
        Val {
            shape: Shape::Ref(path.into()),
            ..Val::default()
        }
    }

    /// An unknown value with `taint`.
    pub(crate) fn tainted(taint: Taint) -> Val {
        Val {
            taint,
            ..Val::default()
        }
    }

    /// The value with `bits` added to its taint.
    pub(crate) fn with(mut self, bits: u16) -> Val {
        self.taint.bits |= bits;
        self
    }

    /// The string, when the value is one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match &self.shape {
            Shape::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The API path, when the value is a reference.
    pub(crate) fn as_ref_path(&self) -> Option<&str> {
        match &self.shape {
            Shape::Ref(p) => Some(p),
            _ => None,
        }
    }

    /// The number, when the value is one (a one-character string is not).
    pub(crate) fn as_num(&self) -> Option<i64> {
        match &self.shape {
            Shape::Num(n) => Some(*n),
            _ => None,
        }
    }

    /// The taint of the value and, for lists and mappings, of every element.
    pub(crate) fn deep_taint(&self) -> Taint {
        let mut t = self.taint.clone();
        match &self.shape {
            Shape::List(items) => items.iter().for_each(|v| t.join(&v.deep_taint())),
            Shape::Dict(items) => items.iter().for_each(|(_, v)| t.join(&v.deep_taint())),
            _ => {}
        }
        t
    }

    /// Whether the value, or an element of it, was computed rather than written.
    pub(crate) fn deep_how(&self) -> Option<&'static str> {
        self.how.or_else(|| match &self.shape {
            Shape::List(items) => items.iter().find_map(Val::deep_how),
            Shape::Dict(items) => items.iter().find_map(|(_, v)| v.deep_how()),
            _ => None,
        })
    }

    /// An identity for "the same file": the string, else the origin.
    pub(crate) fn identity(&self) -> Option<String> {
        match &self.shape {
            Shape::Str(s) => Some(s.trim().trim_start_matches("./").to_owned()),
            _ => self.origin.clone(),
        }
    }

    /// The value as text when it is a string or a list of strings and numbers (a command
    /// given as a list is joined with spaces).
    pub(crate) fn text(&self) -> Option<String> {
        match &self.shape {
            Shape::Str(s) => Some(s.clone()),
            Shape::Num(n) => Some(n.to_string()),
            Shape::List(items) => {
                let parts: Option<Vec<String>> = items.iter().map(Val::text).collect();
                parts.map(|p| p.join(" "))
            }
            _ => None,
        }
    }
}

/// A value for a finding's reason: `"child_process"`, escaped, at most 80 characters.
pub(crate) fn show(s: &str) -> String {
    let mut out = String::from("\"");
    for (n, c) in s.chars().enumerate() {
        if n >= 80 {
            out.push('…');
            break;
        }
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Bytes as text (lossy UTF-8), bounded.
fn text_of(bytes: &[u8]) -> Option<String> {
    (bytes.len() <= MAX_STR).then(|| String::from_utf8_lossy(bytes).into_owned())
}

/// Decodes base64 (standard or URL-safe, padded or not, whitespace ignored).
pub(crate) fn base64_decode(s: &str) -> Option<String> {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    let clean: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    if clean.is_empty() || clean.len() > 2 * MAX_STR {
        return None;
    }
    let bytes = STANDARD
        .decode(&clean)
        .or_else(|_| STANDARD_NO_PAD.decode(&clean))
        .or_else(|_| URL_SAFE.decode(&clean))
        .or_else(|_| URL_SAFE_NO_PAD.decode(&clean))
        .ok()?;
    text_of(&bytes)
}

/// Decodes hex digits (`636c`, `63 6c`, `\x63\x6c`, `0x63,0x6c`).
pub(crate) fn hex_decode(s: &str) -> Option<String> {
    let clean: String = s
        .replace("\\x", "")
        .replace("0x", "")
        .chars()
        .filter(|c| !c.is_whitespace() && *c != ',' && *c != ':')
        .collect();
    if clean.is_empty() || !clean.len().is_multiple_of(2) || clean.len() > 2 * MAX_STR {
        return None;
    }
    let mut bytes = Vec::with_capacity(clean.len() / 2);
    let b = clean.as_bytes();
    for pair in b.chunks(2) {
        let hi = char::from(pair[0]).to_digit(16)?;
        let lo = char::from(pair[1]).to_digit(16)?;
        bytes.push(u8::try_from(hi * 16 + lo).ok()?);
    }
    text_of(&bytes)
}

/// Decodes `%XX` (and JavaScript's `%uXXXX`) escapes.
pub(crate) fn percent_decode(s: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            if b.get(i + 1) == Some(&b'u')
                && let Some(hex) = s.get(i + 2..i + 6)
                && let Ok(n) = u32::from_str_radix(hex, 16)
            {
                let mut buf = [0u8; 4];
                bytes.extend_from_slice(char::from_u32(n).unwrap_or('\u{FFFD}').encode_utf8(&mut buf).as_bytes());
                i += 6;
                continue;
            }
            if let Some(hex) = s.get(i + 1..i + 3)
                && let Ok(n) = u8::from_str_radix(hex, 16)
            {
                bytes.push(n);
                i += 3;
                continue;
            }
        }
        bytes.push(b[i]);
        i += 1;
    }
    text_of(&bytes)
}

/// ROT13 of the ASCII letters.
pub(crate) fn rot13(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            'a'..='z' => char::from(b'a' + (c as u8 - b'a' + 13) % 26),
            'A'..='Z' => char::from(b'A' + (c as u8 - b'A' + 13) % 26),
            c => c,
        })
        .collect()
}

/// Inflates zlib, gzip or raw deflate data (given as lossy text: only the original bytes of a
/// decoded literal survive, so callers pass the bytes they decoded).
pub(crate) fn inflate(bytes: &[u8]) -> Option<String> {
    let mut out = Vec::new();
    let limit = u64::try_from(MAX_STR).unwrap_or(u64::MAX);
    let ok = flate2::read::ZlibDecoder::new(bytes)
        .take(limit)
        .read_to_end(&mut out)
        .is_ok()
        || {
            out.clear();
            flate2::read::GzDecoder::new(bytes)
                .take(limit)
                .read_to_end(&mut out)
                .is_ok()
        }
        || {
            out.clear();
            flate2::read::DeflateDecoder::new(bytes)
                .take(limit)
                .read_to_end(&mut out)
                .is_ok()
        };
    (ok && !out.is_empty()).then(|| String::from_utf8_lossy(&out).into_owned())
}

/// Base64 to raw bytes (for inflating a decoded literal).
pub(crate) fn base64_bytes(s: &str) -> Option<Vec<u8>> {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
    let clean: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    STANDARD.decode(&clean).or_else(|_| STANDARD_NO_PAD.decode(&clean)).ok()
}

/// Decodes the C-like escapes of a Python or JavaScript string body: `\n`, `\xHH`, `\uHHHH`,
/// `\u{H…}`, `\UHHHHHHHH`, octal `\NNN`, and line continuations. Unknown escapes are kept.
pub(crate) fn unescape(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let hex = |n: usize, chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
            let mut v = 0u32;
            for _ in 0..n {
                let d = chars.peek().and_then(|c| c.to_digit(16))?;
                chars.next();
                v = v * 16 + d;
            }
            char::from_u32(v)
        };
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(v).unwrap_or('\u{FFFD}'));
            }
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            'x' => match hex(2, &mut chars) {
                Some(c) => out.push(c),
                None => out.push_str("\\x"),
            },
            'u' if chars.peek() == Some(&'{') => {
                chars.next();
                let mut v = 0u32;
                while let Some(d) = chars.peek().and_then(|c| c.to_digit(16)) {
                    v = v.saturating_mul(16).saturating_add(d);
                    chars.next();
                }
                if chars.peek() == Some(&'}') {
                    chars.next();
                }
                out.push(char::from_u32(v).unwrap_or('\u{FFFD}'));
            }
            'u' => match hex(4, &mut chars) {
                Some(c) => out.push(c),
                None => out.push_str("\\u"),
            },
            'U' => match hex(8, &mut chars) {
                Some(c) => out.push(c),
                None => out.push_str("\\U"),
            },
            '\n' => {}
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
            }
            '\\' | '\'' | '"' | '`' | '$' | '/' => out.push(e),
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoders() {
        assert_eq!(base64_decode("Y2hpbGRfcHJvY2Vzcw==").as_deref(), Some("child_process"));
        assert_eq!(base64_decode("Y2hpbGRfcHJvY2Vzcw").as_deref(), Some("child_process"));
        assert_eq!(hex_decode("6576616c").as_deref(), Some("eval"));
        assert_eq!(hex_decode("\\x65\\x76").as_deref(), Some("ev"));
        assert_eq!(hex_decode("zz"), None);
        assert_eq!(percent_decode("%65%76al%u0021").as_deref(), Some("eval!"));
        assert_eq!(rot13("riny"), "eval");
        assert_eq!(unescape(r"\x63\u0075\u{72}l\n\101"), "curl\nA");
        assert_eq!(unescape(r"a\qb"), r"a\qb");
        let z = base64_bytes("eJxLTc7IBwAEAAGg").unwrap_or_default();
        assert_eq!(inflate(&z).as_deref(), Some("echo"));
        assert_eq!(show("a\"b\n"), "\"a\\\"b\\n\"");
    }

    #[test]
    fn taint_joins() {
        let mut t = Taint::secret("x");
        t.join(&Taint::of(taint::NET));
        assert!(t.has(taint::NET) && t.has(taint::SECRET));
        assert_eq!(t.what.as_deref(), Some("x"));
        let list = Val {
            shape: Shape::List(vec![Val::str("a"), Val::folded("b".into(), "concatenation")]),
            ..Val::default()
        };
        assert_eq!(list.deep_how(), Some("concatenation"));
        assert_eq!(list.text().as_deref(), Some("a b"));
    }
}

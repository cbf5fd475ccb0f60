//! The scan baseline (`skillc scan --write-baseline`): the findings a team has accepted, so
//! that `skillc scan` fails only on new ones (schema `skillc.scan-baseline/1`, docs/json.md).
//!
//! A finding is keyed by its rule, its file (relative to the project root) and a
//! fingerprint: the first 16 hex digits of the SHA-256 of the rule code, the file and the
//! matched text — the finding's line with runs of whitespace collapsed, or, for a finding
//! about a whole file (a binary, a size, a link), its reason. Line numbers are not part of the
//! key, so edits above a finding do not make it new; changing the matched line does. Equal
//! keys are counted, so a second copy of a known line is a new finding.
//!
//! Pure: the CLI reads and writes the file.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The schema id of a baseline file.
pub const SCHEMA: &str = "skillc.scan-baseline/1";

/// The default file name, at the project root (`[scan] baseline` names another).
pub const DEFAULT_FILE: &str = "skillc-scan-baseline.json";

/// One accepted finding (or several equal ones: `count`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The rule's code (`SC011`).
    pub code: String,
    /// The file, relative to the project root, `/`-separated.
    pub file: String,
    /// 16 hex digits (see the module documentation).
    pub fingerprint: String,
    /// How many findings share the key.
    #[serde(default = "one")]
    pub count: usize,
    /// For people reading the file: the severity when it was written.
    #[serde(default)]
    pub severity: String,
    /// For people reading the file: what was found.
    #[serde(default)]
    pub reason: String,
}

fn one() -> usize {
    1
}

/// A baseline file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Baseline {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The entries, sorted by file, code and fingerprint.
    pub findings: Vec<Entry>,
}

/// Why a baseline file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    /// Not JSON, or not the baseline shape.
    #[error("not a scan baseline: {0}")]
    Invalid(String),
    /// Another schema (a newer skillc wrote it).
    #[error("unknown baseline schema `{0}` (this skillc reads `{SCHEMA}`)")]
    Schema(String),
}

/// What identifies a finding across edits.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    /// The rule's code.
    pub code: String,
    /// The file, relative to the project root.
    pub file: String,
    /// See [`fingerprint`].
    pub fingerprint: String,
}

/// The fingerprint of a finding of `code` in `file` whose matched text is `matched`.
pub fn fingerprint(code: &str, file: &str, matched: &str) -> String {
    let normalized: Vec<&str> = matched.split_whitespace().collect();
    let digest = crate::util::sha256(format!("{code}\0{file}\0{}", normalized.join(" ")).as_bytes());
    digest.chars().take(16).collect()
}

/// The matched text of a finding at 1-based `line` of `text`: that line.
pub fn line_text(text: &str, line: u32) -> Option<&str> {
    let i = usize::try_from(line).ok()?.checked_sub(1)?;
    text.split('\n').nth(i)
}

impl Baseline {
    /// Parses a baseline file.
    ///
    /// # Errors
    /// Invalid JSON or shape, or another schema.
    pub fn parse(text: &str) -> Result<Baseline, BaselineError> {
        let b: Baseline = serde_json::from_str(text).map_err(|e| BaselineError::Invalid(e.to_string()))?;
        if b.schema != SCHEMA {
            return Err(BaselineError::Schema(b.schema));
        }
        Ok(b)
    }

    /// A baseline of `findings` (key, severity, reason), sorted, equal keys counted.
    pub fn of<'a>(findings: impl IntoIterator<Item = (Key, &'a str, &'a str)>) -> Baseline {
        let mut m: BTreeMap<Key, Entry> = BTreeMap::new();
        for (k, severity, reason) in findings {
            m.entry(k.clone())
                .and_modify(|e| e.count += 1)
                .or_insert_with(|| Entry {
                    code: k.code,
                    file: k.file,
                    fingerprint: k.fingerprint,
                    count: 1,
                    severity: severity.to_owned(),
                    reason: reason.to_owned(),
                });
        }
        let mut findings: Vec<Entry> = m.into_values().collect();
        findings.sort_by(|a, b| (&a.file, &a.code, &a.fingerprint).cmp(&(&b.file, &b.code, &b.fingerprint)));
        Baseline {
            schema: SCHEMA.to_owned(),
            findings,
        }
    }

    /// The file's text: pretty JSON and a final newline (stable, so it diffs well).
    pub fn to_text(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// A matcher that marks findings known, each entry as many times as its count.
    pub fn matcher(&self) -> Matcher {
        let mut left: BTreeMap<Key, usize> = BTreeMap::new();
        for e in &self.findings {
            *left
                .entry(Key {
                    code: e.code.clone(),
                    file: e.file.clone(),
                    fingerprint: e.fingerprint.clone(),
                })
                .or_default() += e.count;
        }
        Matcher { left }
    }
}

/// Marks findings known while the baseline has entries left for their key.
#[derive(Clone, Debug)]
pub struct Matcher {
    left: BTreeMap<Key, usize>,
}

impl Matcher {
    /// Whether the finding with `key` is known (and uses up one of its entry's count).
    pub fn known(&mut self, key: &Key) -> bool {
        match self.left.get_mut(key) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        }
    }

    /// How many baseline findings matched nothing (fixed since, or changed).
    pub fn unmatched(&self) -> usize {
        self.left.values().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(file: &str, matched: &str) -> Key {
        Key {
            code: "SC011".into(),
            file: file.into(),
            fingerprint: fingerprint("SC011", file, matched),
        }
    }

    #[test]
    fn fingerprints_ignore_whitespace_not_text() {
        assert_eq!(
            fingerprint("SC011", "a.sh", "  curl x |  sh"),
            fingerprint("SC011", "a.sh", "curl x | sh\r")
        );
        assert_ne!(
            fingerprint("SC011", "a.sh", "curl x | sh"),
            fingerprint("SC011", "a.sh", "curl y | sh")
        );
        assert_ne!(
            fingerprint("SC011", "a.sh", "curl x | sh"),
            fingerprint("SC011", "b.sh", "curl x | sh")
        );
        assert_eq!(line_text("a\nb\r\nc", 2), Some("b\r"));
        assert_eq!(line_text("a", 0), None);
    }

    #[test]
    fn counts_make_a_second_copy_new() {
        let b = Baseline::of([(key("a.sh", "curl x | sh"), "high", "r")]);
        let back = Baseline::parse(&b.to_text()).expect("round trip");
        assert_eq!(back, b);
        let mut m = back.matcher();
        assert!(m.known(&key("a.sh", "curl x | sh")));
        assert!(!m.known(&key("a.sh", "curl x | sh")), "only one was accepted");
        assert!(!m.known(&key("a.sh", "wget y | sh")));
        assert_eq!(m.unmatched(), 0);
        assert!(matches!(
            Baseline::parse("{\"schema\": \"x/2\", \"findings\": []}"),
            Err(BaselineError::Schema(_))
        ));
        assert!(Baseline::parse("[]").is_err());
    }
}

//! The scan's rule table: stable `SC` codes, names, base severities and `explain` texts.
//!
//! Scan rules live in their own table rather than in `crate::rules` because a finding's
//! severity is on the security scale `info < low < medium < high < critical` (compared with
//! `[scan] fail_on`), not the diagnostic scale `note < warning < error`; one rule's findings
//! also span several severities (a `curl … | sh` from a vendor's host is `low`, from a paste
//! site `critical`). `skillc explain SCxxx` finds these rules too; each explanation is
//! `docs/rules/<CODE>.md`.

use crate::model::FindingSeverity;

/// A scan rule.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ScanRule {
    /// Stable code, e.g. `SC011`.
    pub code: &'static str,
    /// Short kebab-case name, e.g. `download-and-execute`.
    pub name: &'static str,
    /// The severity of a finding before context lowers or evidence raises it.
    pub severity: FindingSeverity,
    /// One line: what the rule finds.
    pub summary: &'static str,
    /// The Markdown text printed by `skillc explain`.
    pub explanation: &'static str,
}

macro_rules! scan_rules {
    ($($code:ident $name:literal $sev:ident $summary:literal;)*) => {
        $(
            #[doc = $summary]
            pub static $code: ScanRule = ScanRule {
                code: stringify!($code),
                name: $name,
                severity: FindingSeverity::$sev,
                summary: $summary,
                explanation: include_str!(concat!("../../docs/rules/", stringify!($code), ".md")),
            };
        )*
        /// Every scan rule, in code order.
        pub static ALL: &[&ScanRule] = &[$(&$code),*];
    };
}

scan_rules! {
    SC001 "bidi-control" High "Bidirectional control characters that reorder how text is displayed (Trojan Source).";
    SC002 "invisible-characters" Low "Zero-width and other invisible characters; runs of them can carry a hidden payload.";
    SC003 "unicode-tag-payload" Critical "Unicode tag characters outside a flag emoji: invisible ASCII that models read.";
    SC004 "control-characters" Medium "C0/C1 control characters (terminal escapes, backspaces) in a text file.";
    SC010 "decode-and-execute" Critical "Decoded data is executed (`base64 -d | sh`, `eval \"$(…)\"`, `exec(b64decode(…))`).";
    SC011 "download-and-execute" High "Downloaded code is executed (`curl … | sh`, `bash <(wget …)`, `iex (iwr …)`).";
    SC012 "protected-archive" High "A password-protected archive is downloaded or unpacked (scanners cannot look inside).";
    SC013 "paste-site" Medium "A paste site (glot.io, pastebin, …) is used, worst as an installer.";
    SC014 "raw-ip-url" Medium "A URL whose host is a public IP address rather than a name.";
    SC015 "credential-exfiltration" High "A credential store (~/.ssh, ~/.aws, .env, a keychain) is read near a network send.";
    SC016 "environment-dump" High "The whole environment (`env`, `printenv`, `os.environ`) is dumped and sent out.";
    SC017 "prompt-injection" High "Text that tells the model to ignore its instructions or to hide actions from the user.";
    SC020 "symlink-escape" High "A symbolic link points outside the skill folder.";
    SC021 "binary-file" High "An executable, or binary content where text is expected.";
    SC022 "not-scanned" High "A file could not be scanned: over the size or count limits, or unreadable.";
    SC030 "allowed-tools" Info "`allowed-tools` is recorded for review; it never grants anything.";
}

/// Looks a scan rule up by code (case-insensitive) or name.
pub fn find(code: &str) -> Option<&'static ScanRule> {
    ALL.iter()
        .copied()
        .find(|r| r.code.eq_ignore_ascii_case(code) || r.name == code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_documented() {
        let mut seen = std::collections::BTreeSet::new();
        for r in ALL {
            assert!(seen.insert(r.code), "duplicate code {}", r.code);
            assert!(
                r.explanation.starts_with(&format!("# {}", r.code)),
                "{} doc must start with its code",
                r.code
            );
        }
        assert_eq!(find("sc011").map(|r| r.name), Some("download-and-execute"));
        assert_eq!(find("paste-site").map(|r| r.code), Some("SC013"));
    }
}

//! Invisible and deceptive Unicode: bidi controls (`SC001`), zero-width and other invisible
//! characters (`SC002`), tag characters (`SC003`) and C0/C1 controls (`SC004`), in file
//! contents and file names.
//!
//! Legitimate uses stay silent: a zero-width joiner between two emoji (👩‍💻), a joiner or
//! non-joiner inside a word of a script that needs them (Arabic, Persian, Indic), one
//! variation selector after a character, a BOM at the start of a file, and a flag emoji's tag
//! sequence (🏴 + 2–7 lowercase tag letters or digits + CANCEL TAG, UTS #51 §2.8). Runs of
//! invisible characters are reported once per run; at most [`MAX_PER_FILE`] findings per
//! rule and file, then one summary.

use crate::diag::Rule;
use crate::model::FindingSeverity;
use crate::rules;
use crate::scan::Finding;

/// Most findings of one Unicode rule reported per file; the rest are summarised.
pub const MAX_PER_FILE: usize = 20;

/// A run of invisible characters at least this long is a hidden payload (critical).
pub const PAYLOAD_RUN: usize = 8;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Class {
    Bidi,
    WeakBidi,
    Invisible,
    Joiner,
    VariationSelector,
    Tag,
    Control,
    Escape,
}

fn classify(c: char) -> Option<Class> {
    Some(match c {
        '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' => Class::Bidi,
        '\u{200E}' | '\u{200F}' | '\u{061C}' => Class::WeakBidi,
        '\u{200C}' | '\u{200D}' => Class::Joiner,
        '\u{200B}'
        | '\u{2060}'..='\u{2064}'
        | '\u{FEFF}'
        | '\u{180E}'
        | '\u{00AD}'
        | '\u{034F}'
        | '\u{115F}'
        | '\u{1160}'
        | '\u{3164}'
        | '\u{FFA0}'
        | '\u{E0100}'..='\u{E01EF}'
        | '\u{17B4}'
        | '\u{17B5}' => Class::Invisible,
        '\u{FE00}'..='\u{FE0F}' => Class::VariationSelector,
        '\u{E0000}'..='\u{E007F}' => Class::Tag,
        '\u{1B}' => Class::Escape,
        '\u{0}'..='\u{8}' | '\u{B}' | '\u{E}'..='\u{1A}' | '\u{1C}'..='\u{1F}' | '\u{7F}'..='\u{9F}' => Class::Control,
        _ => return None,
    })
}

fn is_emoji(c: char) -> bool {
    matches!(c as u32, 0x1F000..=0x1FAFF | 0x2600..=0x27BF | 0x2B00..=0x2BFF | 0x2300..=0x23FF | 0xFE0F | 0x20E3 | 0x2190..=0x21FF | 0x3030 | 0x303D | 0x3297 | 0x3299 | 0x00A9 | 0x00AE | 0x2122)
}

/// Scripts whose words legitimately contain ZWJ/ZWNJ (Arabic, Persian, Hebrew, Indic,
/// Southeast Asian, and the rest of the non-Latin letters).
fn is_complex_script(c: char) -> bool {
    (c as u32) >= 0x0590 && !is_emoji(c) && c.is_alphanumeric() || matches!(c as u32, 0x0900..=0x0DFF)
}

fn name_of(c: char) -> &'static str {
    match c {
        '\u{202A}' => "LEFT-TO-RIGHT EMBEDDING",
        '\u{202B}' => "RIGHT-TO-LEFT EMBEDDING",
        '\u{202C}' => "POP DIRECTIONAL FORMATTING",
        '\u{202D}' => "LEFT-TO-RIGHT OVERRIDE",
        '\u{202E}' => "RIGHT-TO-LEFT OVERRIDE",
        '\u{2066}' => "LEFT-TO-RIGHT ISOLATE",
        '\u{2067}' => "RIGHT-TO-LEFT ISOLATE",
        '\u{2068}' => "FIRST STRONG ISOLATE",
        '\u{2069}' => "POP DIRECTIONAL ISOLATE",
        '\u{200E}' => "LEFT-TO-RIGHT MARK",
        '\u{200F}' => "RIGHT-TO-LEFT MARK",
        '\u{061C}' => "ARABIC LETTER MARK",
        '\u{200B}' => "ZERO WIDTH SPACE",
        '\u{200C}' => "ZERO WIDTH NON-JOINER",
        '\u{200D}' => "ZERO WIDTH JOINER",
        '\u{2060}' => "WORD JOINER",
        '\u{FEFF}' => "ZERO WIDTH NO-BREAK SPACE",
        '\u{00AD}' => "SOFT HYPHEN",
        '\u{1B}' => "ESCAPE",
        _ => "",
    }
}

fn describe(c: char) -> String {
    let n = name_of(c);
    if n.is_empty() {
        format!("U+{:04X}", c as u32)
    } else {
        format!("U+{:04X} {n}", c as u32)
    }
}

/// Decodes tag characters to the ASCII they mirror (U+E0041 → `A`), escaped for one line.
fn decode_tags(tags: &[char]) -> String {
    let mut s = String::new();
    for &c in tags {
        let a = (c as u32).wrapping_sub(0xE0000);
        match char::from_u32(a) {
            Some(ch) if (' '..='~').contains(&ch) => s.push(ch),
            _ => s.push('·'),
        }
        if s.len() >= 80 {
            s.push('…');
            break;
        }
    }
    s
}

/// A pending finding for one rule and file, with the per-file cap applied.
struct Sink<'a> {
    file: &'a str,
    counts: [usize; 4],
    /// The highest severity per rule, listed or not.
    max: [FindingSeverity; 4],
    out: &'a mut Vec<Finding>,
}

impl Sink<'_> {
    fn push(&mut self, rule: &'static Rule, severity: FindingSeverity, line: u32, column: u32, reason: String) {
        let slot = match rule.code {
            "SC001" => 0,
            "SC002" => 1,
            "SC003" => 2,
            _ => 3,
        };
        self.counts[slot] += 1;
        self.max[slot] = self.max[slot].max(severity);
        if self.counts[slot] <= MAX_PER_FILE {
            self.out.push(Finding {
                rule,
                severity,
                file: self.file.to_owned(),
                line,
                column,
                reason,
                context: String::new(),
            });
        }
    }

    fn summarise(&mut self) {
        let rules: [&'static Rule; 4] = [&rules::SC001, &rules::SC002, &rules::SC003, &rules::SC004];
        for (i, rule) in rules.into_iter().enumerate() {
            if self.counts[i] > MAX_PER_FILE {
                self.out.push(Finding {
                    rule,
                    severity: self.max[i],
                    file: self.file.to_owned(),
                    line: 1,
                    column: 1,
                    reason: format!(
                        "{} more like this in the file (not listed)",
                        self.counts[i] - MAX_PER_FILE
                    ),
                    context: String::new(),
                });
            }
        }
    }
}

/// Scans a text for invisible and deceptive characters.
pub fn scan_text(text: &str, file: &str, out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    // Fast path: plain ASCII without controls (most files).
    if !bytes
        .iter()
        .any(|&b| b >= 0x7f || (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c)))
    {
        return;
    }
    let mut sink = Sink {
        file,
        counts: [0; 4],
        max: [FindingSeverity::Info; 4],
        out,
    };
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut line: u32 = 1;
    let mut line_start_char = 0usize;
    let mut invisible_total = 0usize;
    let mut i = 0usize;
    while i < chars.len() {
        let c = chars[i].1;
        if c == '\n' {
            line += 1;
            line_start_char = i + 1;
            i += 1;
            continue;
        }
        let Some(class) = classify(c) else {
            i += 1;
            continue;
        };
        let column = u32::try_from(i - line_start_char + 1).unwrap_or(u32::MAX);
        let prev = i.checked_sub(1).map(|p| chars[p].1);
        let next = chars.get(i + 1).map(|x| x.1);
        match class {
            Class::Bidi => {
                sink.push(
                    &rules::SC001,
                    FindingSeverity::High,
                    line,
                    column,
                    format!(
                        "{}: the text is displayed in another order than it is read",
                        describe(c)
                    ),
                );
                i += 1;
            }
            Class::WeakBidi => {
                // Marks are normal inside right-to-left text.
                let rtl = |x: Option<char>| x.is_some_and(|x| matches!(x as u32, 0x0590..=0x08FF | 0xFB1D..=0xFEFC));
                if !(rtl(prev) || rtl(next)) {
                    sink.push(
                        &rules::SC001,
                        FindingSeverity::Low,
                        line,
                        column,
                        format!("{} outside right-to-left text", describe(c)),
                    );
                }
                i += 1;
            }
            Class::Tag => i = tag_run(&chars, i, Pos { line, column, prev }, &mut sink),
            Class::Invisible | Class::Joiner | Class::VariationSelector => {
                let (j, hidden) = invisible_run(&chars, i, class, Pos { line, column, prev }, &mut sink);
                invisible_total += hidden;
                i = j;
            }
            Class::Control | Class::Escape => {
                let severity = if class == Class::Escape {
                    FindingSeverity::High
                } else {
                    FindingSeverity::Medium
                };
                let reason = if class == Class::Escape {
                    "U+001B ESCAPE: a terminal escape sequence can hide or rewrite what a terminal shows".to_owned()
                } else {
                    format!("control character {}", describe(c))
                };
                sink.push(&rules::SC004, severity, line, column, reason);
                i += 1;
            }
        }
    }
    // Many scattered invisible characters are a payload too.
    if invisible_total >= 2 * PAYLOAD_RUN && sink.max[1] < FindingSeverity::High {
        // Not subject to the per-file cap: it is the finding that matters.
        sink.out.push(Finding {
            rule: &rules::SC002,
            severity: FindingSeverity::High,
            file: file.to_owned(),
            line: 1,
            column: 1,
            reason: format!("{invisible_total} invisible characters scattered through the file"),
            context: String::new(),
        });
    }
    sink.summarise();
}

/// Where a flagged character is: its line and column, and the character before it.
#[derive(Clone, Copy)]
struct Pos {
    line: u32,
    column: u32,
    prev: Option<char>,
}

/// The run of tag characters at `i` (`SC003` unless it is a flag emoji's); the index after it.
fn tag_run(chars: &[(usize, char)], i: usize, pos: Pos, sink: &mut Sink<'_>) -> usize {
    let start = i;
    let mut j = i;
    while j < chars.len() && classify(chars[j].1) == Some(Class::Tag) {
        j += 1;
    }
    let run: Vec<char> = chars[start..j].iter().map(|x| x.1).collect();
    let is_flag = pos.prev == Some('\u{1F3F4}')
        && run.last() == Some(&'\u{E007F}')
        && (3..=8).contains(&run.len())
        && run[..run.len() - 1]
            .iter()
            .all(|&t| matches!(t as u32, 0xE0030..=0xE0039 | 0xE0061..=0xE007A));
    if !is_flag {
        sink.push(
            &rules::SC003,
            FindingSeverity::Critical,
            pos.line,
            pos.column,
            format!(
                "{} invisible tag characters that read as \"{}\"",
                run.len(),
                decode_tags(&run)
            ),
        );
    }
    j
}

/// The run of invisible characters at `i` (`SC002` unless it is a legitimate joiner, variation
/// selector, BOM or soft hyphen); the index after it and how many characters it hid.
fn invisible_run(chars: &[(usize, char)], i: usize, class: Class, pos: Pos, sink: &mut Sink<'_>) -> (usize, usize) {
    let (off, c) = chars[i];
    let start = i;
    let mut j = i;
    while j < chars.len()
        && matches!(
            classify(chars[j].1),
            Some(Class::Invisible | Class::Joiner | Class::VariationSelector)
        )
    {
        j += 1;
    }
    let len = j - start;
    let after = chars.get(j).map(|x| x.1);
    let legit = len == 1
        && match class {
            Class::Joiner => {
                (pos.prev.is_some_and(is_emoji) && after.is_some_and(is_emoji))
                    || (pos.prev.is_some_and(is_complex_script) || after.is_some_and(is_complex_script))
            }
            Class::VariationSelector => pos.prev.is_some_and(|p| !p.is_whitespace()),
            _ => (c == '\u{FEFF}' && off == 0) || (c == '\u{00AD}' && pos.prev.is_some_and(char::is_alphabetic)),
        }
        // Keycaps and emoji sequences: VS16 followed by a joiner.
        || (len == 2 && chars[start].1 == '\u{FE0F}' && chars[start + 1].1 == '\u{200D}' && after.is_some_and(is_emoji));
    if !legit {
        let severity = if len >= PAYLOAD_RUN {
            FindingSeverity::Critical
        } else if len >= 2 {
            FindingSeverity::Medium
        } else {
            FindingSeverity::Low
        };
        let reason = if len == 1 {
            format!("{}: an invisible character", describe(c))
        } else if len >= PAYLOAD_RUN {
            format!(
                "{len} invisible characters in a row (starting with {}): a hidden payload",
                describe(c)
            )
        } else {
            format!("{len} invisible characters in a row (starting with {})", describe(c))
        };
        sink.push(&rules::SC002, severity, pos.line, pos.column, reason);
    }
    (j, if legit { 0 } else { len })
}

/// The text with every character the scan flags (bidi controls, invisible characters, tag
/// characters, controls) written as `<U+XXXX>`, so that printing a path or a quote does not
/// reorder or hide the terminal's output.
pub fn escape_invisible(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| classify(c).is_some()) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if classify(c).is_some() {
            out.push_str(&format!("<U+{:04X}>", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Like [`escape_invisible`], for a file name printed on one line: line breaks and tabs, which
/// no file name needs, are written `<U+XXXX>` too (a name with a newline could fake output
/// lines).
pub fn escape_name(name: &str) -> std::borrow::Cow<'_, str> {
    if !name.chars().any(|c| c.is_control() || classify(c).is_some()) {
        return std::borrow::Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len() + 8);
    for c in name.chars() {
        if c.is_control() || classify(c).is_some() {
            out.push_str(&format!("<U+{:04X}>", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Scans a file name (its path relative to the skill, or the skill folder's own name) for
/// deceptive characters: a bidi override in a name (`invoice<U+202E>fdp.exe`, shown as
/// `invoiceexe.pdf`) is critical. A control character or a line separator (a newline, a
/// tab) is `SC004`, the rule `skillc check` reports as `SK045` ([`crate::skill::breaks_listing`]).
pub fn scan_name(rel: &str, file: &str, out: &mut Vec<Finding>) {
    for c in rel.chars() {
        let (rule, severity, effect): (&'static Rule, _, _) = match classify(c) {
            Some(Class::Bidi) => (
                &rules::SC001,
                FindingSeverity::Critical,
                "it is displayed as something else",
            ),
            Some(Class::Tag) => (
                &rules::SC003,
                FindingSeverity::Critical,
                "it is displayed as something else",
            ),
            Some(Class::WeakBidi) => (
                &rules::SC001,
                FindingSeverity::High,
                "it is displayed as something else",
            ),
            Some(Class::Invisible | Class::Joiner) => (
                &rules::SC002,
                FindingSeverity::High,
                "it is displayed as something else",
            ),
            _ if crate::skill::breaks_listing(c) => (
                &rules::SC004,
                FindingSeverity::High,
                "it breaks every line-based listing of the skill (`skillc check`: SK045)",
            ),
            Some(Class::Control | Class::Escape | Class::VariationSelector) | None => continue,
        };
        out.push(Finding {
            rule,
            severity,
            file: file.to_owned(),
            line: 1,
            column: 1,
            reason: format!("the file name contains {}: {effect}", describe(c)),
            context: String::new(),
        });
        return;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_printed_on_one_line() {
        assert_eq!(escape_name("a\nb\tc\u{202E}d.md"), "a<U+000A>b<U+0009>c<U+202E>d.md");
        assert_eq!(escape_name("plain/name.md"), "plain/name.md");
    }

    fn codes(text: &str) -> Vec<(&'static str, FindingSeverity)> {
        let mut out = Vec::new();
        scan_text(text, "f", &mut out);
        out.iter().map(|f| (f.rule.code, f.severity)).collect()
    }

    #[test]
    fn legit_sequences_are_silent() {
        assert!(codes("family 👨\u{200D}👩\u{200D}👧 ok").is_empty());
        assert!(codes("flag 🏴\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F} ok").is_empty());
        assert!(codes("\u{FEFF}bom at start").is_empty());
        assert!(codes("می\u{200C}خواهم").is_empty());
        assert!(codes("heart ❤\u{FE0F} ok").is_empty());
    }

    #[test]
    fn payloads_are_found() {
        assert_eq!(codes("a\u{200B}b"), vec![("SC002", FindingSeverity::Low)]);
        assert_eq!(
            codes(&format!("x{}y", "\u{200B}".repeat(79))),
            vec![("SC002", FindingSeverity::Critical)]
        );
        assert_eq!(
            codes("x\u{E0069}\u{E0067}y"),
            vec![("SC003", FindingSeverity::Critical)]
        );
        assert_eq!(codes("x\u{202E}y"), vec![("SC001", FindingSeverity::High)]);
        // 79 scattered zero-width spaces: 20 listed, one "scattered" finding, one summary.
        let scattered: String = (0..79).map(|i| format!("w{i}\u{200B}")).collect();
        let found = codes(&scattered);
        assert_eq!(found.len(), 22);
        assert!(found.contains(&("SC002", FindingSeverity::High)));
        assert_eq!(codes("x\u{1b}[8my"), vec![("SC004", FindingSeverity::High)]);
        // A long "flag" carrying a payload is not a flag.
        let long: String = "ignore all previous"
            .chars()
            .map(|c| char::from_u32(0xE0000 + c as u32).unwrap())
            .collect();
        assert_eq!(
            codes(&format!("🏴{long}\u{E007F}")),
            vec![("SC003", FindingSeverity::Critical)]
        );
    }
}

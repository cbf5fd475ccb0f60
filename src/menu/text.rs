//! The menu's text rules (RUNTIME.md §1, "Where menu data comes from"): case folding of
//! triggers and turns, the title, the one-line description, triggers and `disabled` read from
//! the frontmatter. Pure functions.

use unicode_normalization::UnicodeNormalization;

use crate::skill::yaml::Node;

/// Longest one-line description, in characters (`…` included).
pub const LINE_MAX: usize = 160;

/// NFKC, then Unicode full case folding (`Straße` → `strasse`, `ΣΑΣ` → `σασ`), then trimmed:
/// how triggers and turns are compared.
pub fn fold(s: &str) -> String {
    let nfkc: String = s.nfkc().collect();
    caseless::default_case_fold_str(&nfkc).trim().to_owned()
}

/// The skill's title: `metadata.title` when it is a non-empty string, else the name with
/// hyphens as spaces.
pub fn title(name: &str, metadata: Option<&Node>) -> String {
    metadata
        .and_then(|m| m.get_value("title"))
        .and_then(Node::as_str)
        .map(|t| collapse(t).trim().to_owned())
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| name.replace('-', " "))
}

/// The triggers of `metadata.triggers`: a list of strings or one comma-separated string;
/// each folded ([`fold`]), empty ones dropped, duplicates removed, in first-seen order.
pub fn triggers(metadata: Option<&Node>) -> Vec<String> {
    let Some(node) = metadata.and_then(|m| m.get_value("triggers")) else {
        return Vec::new();
    };
    let raw: Vec<String> = if let Some(s) = node.as_str() {
        s.split(',').map(str::to_owned).collect()
    } else if let Some(seq) = node.as_seq() {
        seq.iter().filter_map(|n| n.as_str().map(str::to_owned)).collect()
    } else {
        Vec::new()
    };
    let mut out: Vec<String> = Vec::new();
    for t in raw {
        let t = fold(&t);
        if !t.is_empty() && !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// `metadata.disabled` says `true` (any case, surrounding spaces ignored).
pub fn disabled(metadata: Option<&Node>) -> bool {
    metadata
        .and_then(|m| m.get_value("disabled"))
        .and_then(Node::as_str)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// Whitespace runs (line breaks included) as one space; control characters dropped.
pub fn collapse(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            space = true;
        } else if !c.is_control() {
            if space && !out.is_empty() {
                out.push(' ');
            }
            space = false;
            out.push(c);
        }
    }
    out
}

/// Abbreviations whose period does not end a sentence.
const ABBREVIATIONS: &[&str] = &[
    "e.g", "i.e", "etc", "vs", "eg", "ie", "approx", "incl", "mr", "mrs", "ms", "dr", "st", "no", "cf", "ca", "es",
];

/// The one-line description: the first sentence of `description`, whitespace collapsed, at
/// most [`LINE_MAX`] characters, cut on a word with `…`. A sentence ends at `.`, `!`, `?` or
/// `。` followed by a space (or the end), except after an abbreviation (`e.g.`) or one letter.
pub fn one_line(description: &str) -> String {
    let text = collapse(description);
    let chars: Vec<char> = text.chars().collect();
    let mut end = chars.len();
    for (i, &c) in chars.iter().enumerate() {
        let next_space = chars.get(i + 1).is_none_or(|n| n.is_whitespace());
        if c == '。' || (matches!(c, '!' | '?') && next_space) {
            end = i + 1;
            break;
        }
        if c == '.' && next_space && chars.get(i + 1).is_some() {
            let word: String = chars[..i]
                .iter()
                .rev()
                .take_while(|c| !c.is_whitespace() && **c != '(')
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            let w = word.to_lowercase();
            let short = w.chars().filter(|c| c.is_alphabetic()).count() <= 1 && !w.chars().any(|c| c.is_numeric());
            if !short && !ABBREVIATIONS.contains(&w.as_str()) {
                end = i + 1;
                break;
            }
        }
    }
    let sentence: String = chars[..end].iter().collect();
    cut(sentence.trim(), LINE_MAX)
}

/// `s` when it has at most `max` characters; else its longest prefix ending on a word
/// boundary that fits with `…` (a single word longer than that is cut inside).
pub fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let keep: String = s.chars().take(max.saturating_sub(1)).collect();
    let at_boundary = s.chars().nth(max.saturating_sub(1)).is_some_and(char::is_whitespace);
    let trimmed = if at_boundary {
        keep.as_str()
    } else {
        keep.rfind(char::is_whitespace).map_or(keep.as_str(), |i| &keep[..i])
    };
    let trimmed = trimmed.trim_end_matches(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':' | '-'));
    format!("{trimmed}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_is_full_unicode_case_folding_after_nfkc() {
        assert_eq!(fold("  Straße "), "strasse");
        assert_eq!(fold("ＤＥＰＬＯＹ"), "deploy");
        assert_eq!(fold("ΣΑΣ"), "σασ");
        assert_eq!(fold("ﬁle"), "file");
    }

    #[test]
    fn the_line_is_the_first_sentence_collapsed_and_cut() {
        assert_eq!(one_line("Make PDFs.\nThen more."), "Make PDFs.");
        assert_eq!(one_line("Tools, e.g. grep. Second."), "Tools, e.g. grep.");
        assert_eq!(one_line("Version 2.5 works. Next"), "Version 2.5 works.");
        assert_eq!(one_line("No period at all"), "No period at all");
        assert_eq!(one_line("Line\nbreaks\r\n  inside. x"), "Line breaks inside.");
        let long = "word ".repeat(60);
        let l = one_line(&long);
        assert!(l.chars().count() <= LINE_MAX, "{l}");
        assert!(l.ends_with("word…"), "{l}");
        let one = "x".repeat(300);
        assert_eq!(one_line(&one).chars().count(), LINE_MAX);
    }

    #[test]
    fn cut_keeps_short_text() {
        assert_eq!(cut("abc", 3), "abc");
        assert_eq!(cut("ab cd ef", 6), "ab cd…");
        assert_eq!(cut("ab cd ef", 7), "ab cd…");
    }
}

//! Splitting SKILL.md into frontmatter and body (PRODUCT.md, "Parsing rules").
//!
//! The frontmatter starts at a first line that is exactly `---` and ends at the next line that
//! is exactly `---`; trailing spaces and a CR before the LF are allowed on both fences. A line
//! is a fence or it is not: `---` inside a value, `--- text` and `----` are never fences (the
//! reference splits on the substring, a deliberate difference documented in
//! `docs/compatibility.md`). A UTF-8 byte order mark is accepted with a warning.

use std::ops::Range;

use crate::diag::Diagnostic;
use crate::diag::Source;
use crate::rules;

/// Where the parts of a SKILL.md are, as byte ranges of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    /// The file starts with a UTF-8 byte order mark.
    pub bom: bool,
    /// The opening `---` line (without its line break).
    pub open_fence: Range<usize>,
    /// The YAML text between the fences.
    pub frontmatter: Range<usize>,
    /// The closing `---` line (without its line break).
    pub close_fence: Range<usize>,
    /// Everything after the closing fence's line break.
    pub body: Range<usize>,
}

/// Decodes the file as UTF-8. Invalid bytes give `SK002` at the first bad byte
/// ([`crate::diag::decode_utf8`], the rule every text input follows).
pub fn decode<'a>(bytes: &'a [u8], file: &str) -> Result<&'a str, Box<Diagnostic>> {
    crate::diag::decode_utf8(bytes, file, "SKILL.md", &rules::SK002)
        .map_err(|d| Box::new((*d).help("save the file as UTF-8 (without a byte order mark)")))
}

/// Is this line (without its `\n`) a fence: `---`, then only spaces, tabs or a CR?
fn is_fence(line: &str) -> bool {
    line.strip_prefix("---")
        .is_some_and(|rest| rest.chars().all(|c| matches!(c, ' ' | '\t' | '\r')))
}

/// Iterates lines as byte ranges without their `\n`, starting at `from`.
fn lines(text: &str, from: usize) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut start = from;
    std::iter::from_fn(move || {
        if start > text.len() || (start == text.len() && start != from) {
            return None;
        }
        let end = text[start..].find('\n').map(|i| start + i).unwrap_or(text.len());
        let r = start..end;
        start = end + 1;
        Some(r)
    })
}

/// `SK017`: CRLF line endings anywhere in the file (a note), at the first one.
fn line_endings(src: &Source<'_>) -> Option<Diagnostic> {
    let text = src.text;
    let at = text.find("\r\n")?;
    let crlf = text.matches("\r\n").count();
    let message = if crlf == text.matches('\n').count() {
        "SKILL.md has CRLF (Windows) line endings".to_owned()
    } else {
        format!("SKILL.md mixes CRLF and LF line endings ({crlf} of its lines end with CRLF)")
    };
    Some(
        Diagnostic::new(&rules::SK017, src.file, src.span(at..at + 1), message).help(
            "save it with LF line endings (`skillc check --fix`); loaders that look for `---\\n` miss the frontmatter",
        ),
    )
}

/// `SK018`: spaces or tabs after a fence's `---` (before a CR, which is the line ending).
fn fence_whitespace(src: &Source<'_>, fence: Range<usize>) -> Option<Diagnostic> {
    let line = src.text.get(fence.clone())?;
    let rest = line.get(3..)?.trim_end_matches('\r');
    if rest.is_empty() {
        return None;
    }
    let at = fence.start + 3;
    Some(
        Diagnostic::new(
            &rules::SK018,
            src.file,
            src.span(at..at + rest.len()),
            "trailing whitespace after the `---` fence",
        )
        .help("remove it; loaders that compare the line with `---` do not see the fence"),
    )
}

/// Finds the frontmatter of `src`. On failure returns the diagnostics that say why.
pub fn split(src: &Source<'_>) -> (Option<Split>, Vec<Diagnostic>) {
    let text = src.text;
    let mut diags = Vec::new();
    let bom = text.starts_with('\u{feff}');
    let start = if bom { '\u{feff}'.len_utf8() } else { 0 };
    if bom {
        diags.push(
            Diagnostic::new(
                &rules::SK003,
                src.file,
                src.span(0..start),
                "SKILL.md starts with a UTF-8 byte order mark",
            )
            .help("save the file as UTF-8 without BOM; some agents reject such files silently"),
        );
    }
    if let Some(d) = line_endings(src) {
        diags.push(d);
    }
    let mut it = lines(text, start);
    let first = it.next().unwrap_or(start..start);
    if !is_fence(&text[first.clone()]) {
        let line = &text[first.clone()];
        let (message, help) = if text[start..].trim().is_empty() {
            (
                "SKILL.md is empty: it must start with YAML frontmatter (`---`)".to_owned(),
                "start the file with `---`, then `name:` and `description:`, then `---`".to_owned(),
            )
        } else if line.trim().is_empty() {
            (
                "SKILL.md must start with YAML frontmatter (`---`), not a blank line".to_owned(),
                "remove the blank lines before the opening `---`".to_owned(),
            )
        } else if let Some(rest) = line.strip_prefix("---") {
            (
                format!("`{}` is not a frontmatter fence", line.trim_end()),
                if rest.starts_with('-') {
                    "the opening fence is exactly three dashes: `---`".to_owned()
                } else if rest.trim().eq_ignore_ascii_case("yaml") {
                    "write the opening fence as `---` alone; the frontmatter is always YAML".to_owned()
                } else {
                    format!(
                        "only YAML frontmatter is supported; `---{}` marks another language",
                        rest.trim_end()
                    )
                },
            )
        } else {
            (
                "SKILL.md must start with YAML frontmatter (`---`)".to_owned(),
                "add a `---` line, `name:` and `description:`, and a closing `---` at the top of the file".to_owned(),
            )
        };
        let span = if first.is_empty() {
            src.span(start..start)
        } else {
            src.span(first)
        };
        diags.push(Diagnostic::new(&rules::SK004, src.file, span, message).help(help));
        return (None, diags);
    }
    let mut near_miss = None;
    for line in it {
        let l = &text[line.clone()];
        if is_fence(l) {
            diags.extend(
                [&first, &line]
                    .into_iter()
                    .filter_map(|f| fence_whitespace(src, f.clone())),
            );
            let fm_start = (first.end + 1).min(line.start);
            let body_start = (line.end + 1).min(text.len());
            return (
                Some(Split {
                    bom,
                    open_fence: first,
                    frontmatter: fm_start..line.start,
                    close_fence: line,
                    body: body_start..text.len(),
                }),
                diags,
            );
        }
        if near_miss.is_none() && l.starts_with("---") {
            near_miss = Some(line);
        }
    }
    let mut d = Diagnostic::new(
        &rules::SK005,
        src.file,
        src.span(first),
        "SKILL.md frontmatter is not closed with `---`",
    )
    .label("frontmatter opened here");
    d = match near_miss {
        Some(line) => {
            let shown = text[line.clone()].trim_end().to_owned();
            d.related(
                src.span(line),
                format!("`{shown}` is not a fence: a fence is a line of exactly `---`"),
            )
            .help("put the closing `---` on a line of its own")
        }
        None => d.help("add a line containing only `---` after the last frontmatter key"),
    };
    diags.push(d);
    (None, diags)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split_str(text: &str) -> (Option<Split>, Vec<&'static str>) {
        let src = Source::new("SKILL.md", text);
        let (s, d) = split(&src);
        (s, d.iter().map(|d| d.rule.code).collect())
    }

    #[test]
    fn fences_are_whole_lines() {
        let text = "---\nname: a\ndescription: x --- y\n---\nbody\n";
        let (s, d) = split_str(text);
        let s = s.expect("split");
        assert!(d.is_empty());
        assert_eq!(&text[s.frontmatter], "name: a\ndescription: x --- y\n");
        assert_eq!(&text[s.body], "body\n");
    }

    #[test]
    fn crlf_and_trailing_spaces_on_fences() {
        let text = "--- \r\nname: a\r\n---\t\r\nbody";
        let (s, d) = split_str(text);
        assert_eq!(
            d,
            vec!["SK017", "SK018", "SK018"],
            "notes: CRLF, whitespace after both fences"
        );
        assert_eq!(&text[s.expect("split").frontmatter], "name: a\r\n");
    }

    #[test]
    fn bom_warns_and_still_splits() {
        let (s, d) = split_str("\u{feff}---\nname: a\n---\n");
        assert!(s.is_some());
        assert_eq!(d, vec!["SK003"]);
    }

    #[test]
    fn not_fences() {
        assert_eq!(split_str("---js\nname: a\n---\n").1, vec!["SK004"]);
        assert_eq!(split_str("----\nname: a\n---\n").1, vec!["SK004"]);
        assert_eq!(split_str("\n---\nname: a\n---\n").1, vec!["SK004"]);
        assert_eq!(split_str("").1, vec!["SK004"]);
        assert_eq!(split_str("---\nname: a\n--- end\n").1, vec!["SK005"]);
        assert_eq!(split_str("---").1, vec!["SK005"]);
    }

    #[test]
    fn closing_fence_without_newline() {
        let text = "---\nname: a\n---";
        let (s, _) = split_str(text);
        let s = s.expect("split");
        assert_eq!(s.body, text.len()..text.len());
    }

    #[test]
    fn invalid_utf8_points_at_the_byte() {
        let d = decode(b"---\nname: \xff\n", "SKILL.md").expect_err("invalid");
        assert_eq!(d.rule.code, "SK002");
        assert_eq!((d.span.start.line, d.span.start.column), (2, 7));
        assert_eq!((d.span.end.line, d.span.end.column), (2, 8));
        assert_eq!(d.span.bytes(), 10..11);
    }
}

//! The command lines of a SKILL.md body: fenced shell blocks, inline code in list items and
//! table rows whose first cell is code, each with its section and description.

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

use crate::diag::LineIndex;

/// One command line found in the body.
pub(super) struct Candidate {
    pub(super) text: String,
    pub(super) line: u32,
    pub(super) section: String,
    /// What the source says about it: the comment above it in a shell block, or the list
    /// item's text before the code (`Gmail search:`).
    pub(super) description: Option<String>,
}

/// The candidate command lines of the body starting at `body_start` in `text`, in order.
pub(super) fn candidates(text: &str, body_start: usize) -> Vec<Candidate> {
    let body = &text[body_start..];
    let index = LineIndex::new(text);
    let line_of = |off: usize| index.pos(text, body_start + off).line;
    let mut section = String::new();
    let mut heading: Option<String> = None;
    let mut code: Option<(String, String, usize)> = None; // (lang, content, start offset)
    let mut item_depth = 0usize;
    let mut cell_index: Option<usize> = None;
    let mut item_text = String::new();
    let mut candidates = Vec::new();
    for (event, range) in Parser::new_ext(body, Options::ENABLE_TABLES).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => section = heading.take().unwrap_or_default().trim().to_owned(),
            Event::Start(Tag::CodeBlock(kind)) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info
                        .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
                        .next()
                        .unwrap_or("")
                        .to_ascii_lowercase(),
                    CodeBlockKind::Indented => String::new(),
                };
                code = Some((lang, String::new(), range.start));
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some((lang, content, start)) = code.take()
                    && is_shell_lang(&lang)
                {
                    let first_line = line_of(start) + 1;
                    for (i, l, comment) in shell_lines(&content) {
                        candidates.push(Candidate {
                            text: l,
                            line: first_line + i,
                            section: section.clone(),
                            description: comment,
                        });
                    }
                }
            }
            Event::Text(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                } else if let Some((_, content, _)) = code.as_mut() {
                    content.push_str(&t);
                } else if item_depth > 0 {
                    item_text.push_str(&t);
                }
            }
            Event::Start(Tag::Item) => {
                item_depth += 1;
                item_text.clear();
            }
            Event::End(TagEnd::Item) => item_depth = item_depth.saturating_sub(1),
            Event::Start(Tag::TableRow) | Event::Start(Tag::TableHead) => cell_index = Some(0),
            Event::End(TagEnd::TableCell) => cell_index = cell_index.map(|c| c + 1),
            Event::End(TagEnd::TableRow) | Event::End(TagEnd::TableHead) => cell_index = None,
            Event::Code(c) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&c);
                } else if item_depth > 0 || cell_index == Some(0) {
                    let d = item_text.trim().trim_end_matches(':').trim();
                    let description = (item_depth > 0 && !d.is_empty()).then(|| d.to_owned());
                    candidates.push(Candidate {
                        text: c.to_string(),
                        line: line_of(range.start),
                        section: section.clone(),
                        description,
                    });
                    item_text.clear();
                }
            }
            _ => {}
        }
    }
    candidates
}

fn is_shell_lang(lang: &str) -> bool {
    matches!(
        lang,
        "" | "bash"
            | "sh"
            | "shell"
            | "zsh"
            | "console"
            | "terminal"
            | "shell-session"
            | "shellsession"
            | "cli"
            | "cmd"
    )
}

/// The command lines of a shell block: continuations joined, heredoc bodies dropped. Yields
/// (0-based line offset in the block, text, the comment line above it). A comment applies
/// until the next blank line.
fn shell_lines(content: &str) -> Vec<(u32, String, Option<String>)> {
    let mut out = Vec::new();
    let mut pending: Option<(u32, String)> = None;
    let mut heredoc: Option<String> = None;
    let mut comment: Option<String> = None;
    let mut last_was_comment = false;
    for (i, line) in content.lines().enumerate() {
        let i = u32::try_from(i).unwrap_or(u32::MAX);
        if let Some(end) = &heredoc {
            if line.trim() == end {
                heredoc = None;
            }
            continue;
        }
        let (start, mut acc) = pending.take().unwrap_or((i, String::new()));
        let trimmed = line.trim_end();
        if acc.is_empty() {
            if trimmed.trim().is_empty() {
                comment = None;
                last_was_comment = false;
                continue;
            }
            if let Some(c) = trimmed.trim_start().strip_prefix('#') {
                let c = c.trim();
                // Consecutive comment lines form one comment; one after a command starts anew.
                comment = match (comment.take(), last_was_comment) {
                    _ if c.is_empty() || c.starts_with('!') => None,
                    (Some(prev), true) => Some(format!("{prev} {c}")),
                    _ => Some(c.to_owned()),
                };
                last_was_comment = true;
                continue;
            }
            last_was_comment = false;
        }
        if let Some(cont) = trimmed.strip_suffix('\\') {
            acc.push_str(cont);
            acc.push(' ');
            pending = Some((start, acc));
            continue;
        }
        acc.push_str(trimmed);
        if let Some(tag) = heredoc_tag(&acc) {
            heredoc = Some(tag);
        }
        if !acc.trim().is_empty() {
            out.push((start, acc, comment.clone()));
        }
    }
    if let Some((start, acc)) = pending {
        out.push((start, acc, comment));
    }
    out
}

fn heredoc_tag(line: &str) -> Option<String> {
    let at = line.find("<<")?;
    let rest = line[at + 2..].trim_start_matches('-').trim_start();
    if rest.starts_with('<') {
        return None; // here-string `<<<`
    }
    let tag: String = rest
        .trim_matches(|c| c == '\'' || c == '"')
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!tag.is_empty()).then_some(tag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_lines_join_continuations_and_skip_heredocs() {
        let block = "gog gmail send --to a \\\n  --subject x \\\n  --body-file - <<'EOF'\nHi\n$GAPI drive delete X\nEOF\n# comment\necho done\n";
        let lines = shell_lines(block);
        assert_eq!(lines.len(), 2);
        assert!(lines[0].1.contains("--subject x"));
        assert_eq!(lines[1], (7, "echo done".to_string(), Some("comment".to_string())));
    }

    #[test]
    fn consecutive_comment_lines_form_one_description() {
        let lines = shell_lines("# Search, newest first.\n# Operators: from: to:\nws mail search q\nws mail get id\n");
        assert_eq!(
            lines[0].2.as_deref(),
            Some("Search, newest first. Operators: from: to:")
        );
        assert_eq!(
            lines[1].2.as_deref(),
            Some("Search, newest first. Operators: from: to:")
        );
    }
}

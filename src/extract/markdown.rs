//! The command lines of a SKILL.md body: fenced shell blocks, inline code in list items and
//! table rows whose first cell is code, each with its section and description.

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

use crate::diag::LineIndex;

/// One command line found in the body.
pub(super) struct Candidate {
    pub(super) text: String,
    pub(super) line: u32,
    pub(super) section: String,
    /// What the source says about it: the comment beside or above it in a shell block, or the
    /// list item's (or table row's) text around the code (`Gmail search:`).
    pub(super) description: Option<String>,
    /// The paragraph just before its code block, when there is one (`Recalculate formulas:`).
    pub(super) context: Option<String>,
    /// Inline code of a list item or table row (not a line of a code block).
    pub(super) listed: bool,
    /// The code block it is a line of (0-based, in body order), for shell blocks.
    pub(super) block: Option<usize>,
    /// A heading above it (its own or an outer one) names commands (`## Commands`).
    pub(super) under_commands: bool,
}

/// What extraction reads of a body: its command lines, title and usage lines.
#[derive(Default)]
pub(super) struct Body {
    /// The candidate command lines, in order.
    pub(super) candidates: Vec<Candidate>,
    /// The first level-1 heading (`# Todoist CLI`).
    pub(super) title: Option<String>,
    /// Text after `Usage:` in prose or code (`todo.sh <command> [args]`).
    pub(super) usage: Vec<String>,
    /// Number of shell code blocks.
    pub(super) blocks: usize,
}

/// Collects the text of the element being read: a heading, a paragraph, a list item or a
/// table row (inline code included, backticks dropped).
#[derive(Default)]
struct Reading {
    heading: Option<String>,
    paragraph: Option<String>,
    item_depth: usize,
    item_text: String,
    row: Option<String>,
}

/// The candidate command lines of the body starting at `body_start` in `text`, in order.
pub(super) fn read(text: &str, body_start: usize) -> Body {
    let body = &text[body_start..];
    let index = LineIndex::new(text);
    let line_of = |off: usize| index.pos(text, body_start + off).line;
    let mut out = Body::default();
    let mut section = String::new();
    // The headings above the current position: (level, text), outermost first.
    let mut outline: Vec<(usize, String)> = Vec::new();
    let mut heading_level = 0usize;
    let mut last_paragraph: Option<String> = None;
    let mut r = Reading::default();
    let mut code: Option<(String, String, usize)> = None; // (lang, content, start offset)
    let mut cell_index: Option<usize> = None;
    // Inline code of the current list item or table row, waiting for the element's text.
    let mut pending: Vec<(String, u32)> = Vec::new();
    for (event, range) in Parser::new_ext(body, Options::ENABLE_TABLES).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                r.heading = Some(String::new());
                heading_level = level as usize;
                if level == pulldown_cmark::HeadingLevel::H1 && out.title.is_none() {
                    out.title = Some(String::new());
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                section = r.heading.take().unwrap_or_default().trim().to_owned();
                outline.retain(|(l, _)| *l < heading_level);
                outline.push((heading_level, section.to_ascii_lowercase()));
                if out.title.as_deref() == Some("") {
                    out.title = Some(section.clone());
                }
                last_paragraph = None;
            }
            Event::Start(Tag::Paragraph) if r.item_depth == 0 && cell_index.is_none() => {
                r.paragraph = Some(String::new());
            }
            Event::End(TagEnd::Paragraph) => {
                if let Some(p) = r.paragraph.take() {
                    collect_usage(&p, &mut out.usage);
                    last_paragraph = Some(p.trim().to_owned()).filter(|p| !p.is_empty());
                }
            }
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
                    let block = out.blocks;
                    let under_commands = names_commands(&outline);
                    out.blocks += 1;
                    let help = help_entries(&content);
                    let listed = help.is_some();
                    for (i, l, comment) in help.unwrap_or_else(|| shell_lines(&content)) {
                        collect_usage(&l, &mut out.usage);
                        out.candidates.push(Candidate {
                            text: l,
                            line: first_line + i,
                            section: section.clone(),
                            description: comment,
                            context: last_paragraph.clone(),
                            listed,
                            block: Some(block),
                            under_commands: under_commands || listed,
                        });
                    }
                }
            }
            Event::Text(t) => r.push(&t, code.as_mut().map(|c| &mut c.1)),
            Event::Start(Tag::Item) => {
                let under = names_commands(&outline);
                flush_listed(&mut pending, &mut r.item_text, (&section, under), &mut out.candidates);
                r.item_depth += 1;
                r.item_text.clear();
            }
            Event::End(TagEnd::Item) => {
                let under = names_commands(&outline);
                flush_listed(&mut pending, &mut r.item_text, (&section, under), &mut out.candidates);
                r.item_depth = r.item_depth.saturating_sub(1);
            }
            Event::Start(Tag::TableRow) | Event::Start(Tag::TableHead) => {
                cell_index = Some(0);
                r.row = Some(String::new());
            }
            Event::End(TagEnd::TableCell) => {
                cell_index = cell_index.map(|c| c + 1);
                if let Some(row) = r.row.as_mut() {
                    row.push_str(" | ");
                }
            }
            Event::End(TagEnd::TableRow) | Event::End(TagEnd::TableHead) => {
                cell_index = None;
                let mut row = r.row.take().unwrap_or_default();
                let under = names_commands(&outline);
                flush_listed(&mut pending, &mut row, (&section, under), &mut out.candidates);
            }
            Event::Code(c) => {
                if let Some(h) = r.heading.as_mut() {
                    h.push_str(&c);
                } else if r.item_depth > 0 || cell_index == Some(0) {
                    pending.push((c.to_string(), line_of(range.start)));
                    r.push_code(&c);
                } else {
                    r.push_code(&c);
                }
            }
            _ => {}
        }
    }
    let under = names_commands(&outline);
    flush_listed(&mut pending, &mut r.item_text, (&section, under), &mut out.candidates);
    out
}

/// A heading of the outline names a list of commands (`## Commands`, `### CLI commands`,
/// `## Command reference`); a heading about one command (`### Search (`search` command)`)
/// does not.
fn names_commands(outline: &[(usize, String)]) -> bool {
    outline.iter().any(|(_, h)| {
        h.contains("commands") || h.contains("command reference") || h.contains("command list") || h.trim() == "command"
    })
}

impl Reading {
    fn push(&mut self, t: &str, code: Option<&mut String>) {
        if let Some(h) = self.heading.as_mut() {
            h.push_str(t);
        } else if let Some(content) = code {
            content.push_str(t);
        } else if let Some(row) = self.row.as_mut() {
            row.push_str(t);
        } else if self.item_depth > 0 {
            self.item_text.push_str(t);
        } else if let Some(p) = self.paragraph.as_mut() {
            p.push_str(t);
        }
    }

    /// Inline code inside prose counts as text for descriptions; in list items and table rows
    /// it is marked, so that a command is left out of its own description.
    fn push_code(&mut self, c: &str) {
        let marked = format!("\u{1}{c}\u{2}");
        if let Some(row) = self.row.as_mut() {
            row.push_str(&marked);
        } else if self.item_depth > 0 {
            self.item_text.push_str(&marked);
        } else if let Some(p) = self.paragraph.as_mut() {
            p.push_str(c);
        }
    }
}

/// Turns the inline code gathered in one list item or table row into candidates, described by
/// the element's text without the code (`Search recipes` of `` - `r search <q>` — Search
/// recipes ``).
fn flush_listed(
    pending: &mut Vec<(String, u32)>,
    text: &mut String,
    (section, under_commands): (&str, bool),
    out: &mut Vec<Candidate>,
) {
    if pending.is_empty() {
        text.clear();
        return;
    }
    for (k, (code, line)) in pending.drain(..).enumerate() {
        out.push(Candidate {
            text: code,
            line,
            section: section.to_owned(),
            description: describe_element(text, k),
            context: None,
            listed: true,
            block: None,
            under_commands,
        });
    }
    text.clear();
}

/// The words of a list item or table row around its `own`-th inline code: cells joined, that
/// code left out (its other codes kept as text: "asks to confirm unless --yes"), separators
/// and list punctuation trimmed; `None` when nothing is left.
fn describe_element(text: &str, own: usize) -> Option<String> {
    let mut flat = String::new();
    let mut k = 0;
    let mut rest = text;
    while let Some(start) = rest.find('\u{1}') {
        flat.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let end = after.find('\u{2}').unwrap_or(after.len());
        if k == own {
            flat.push('\u{3}');
        } else {
            flat.push_str(&after[..end]);
        }
        k += 1;
        rest = after.get(end + 1..).unwrap_or("");
    }
    flat.push_str(rest);
    let parts: Vec<String> = flat
        .split(['\u{3}', '|'])
        .map(|p| {
            p.trim()
                .trim_matches(|c: char| matches!(c, ':' | '-' | '—' | '–' | '→' | ','))
                .trim()
                .to_owned()
        })
        .filter(|p| !p.is_empty() && p.chars().any(char::is_alphanumeric))
        .collect();
    (!parts.is_empty()).then(|| parts.join(" — "))
}

/// Records what follows `Usage:` on a line (`Usage: todo.sh <command>`).
fn collect_usage(text: &str, usage: &mut Vec<String>) {
    for line in text.lines() {
        let l = line.trim().trim_start_matches(['#', '*', '`', ' ']);
        if let Some(head) = l.get(..6)
            && head.eq_ignore_ascii_case("usage:")
        {
            let rest = l[6..].trim().trim_matches('`').trim();
            if !rest.is_empty() {
                usage.push(rest.to_owned());
            }
        }
    }
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
            // A comment beside the command says more about it than one above a group.
            let described = trailing_comment(&acc).or_else(|| comment.clone());
            out.push((start, acc, described));
        }
    }
    if let Some((start, acc)) = pending {
        out.push((start, acc, comment));
    }
    out
}

/// The command list of a block of pasted `--help` output (a `COMMANDS` or `Available
/// Commands:` header followed by indented `name [args]  Description` lines), as command lines
/// prefixed with the `USAGE` line's words before its `<command>` slot (`glab milestone`).
/// `None` when the block is not help output.
fn help_entries(content: &str) -> Option<Vec<(u32, String, Option<String>)>> {
    let lines: Vec<&str> = content.lines().collect();
    let header = |l: &str| {
        let t = l.trim().trim_end_matches(':').to_ascii_lowercase();
        matches!(
            t.as_str(),
            "commands" | "available commands" | "subcommands" | "sub-commands" | "core commands"
        )
    };
    let start = lines.iter().position(|l| header(l))?;
    let prefix = usage_prefix(&lines[..start]);
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate().skip(start + 1) {
        if l.trim().is_empty() {
            continue;
        }
        // The next header (`FLAGS`, `Options:`) ends the list.
        if !l.starts_with([' ', '\t'])
            || l.trim().ends_with(':')
            || l.trim().chars().all(|c| c.is_ascii_uppercase() || c == ' ')
        {
            break;
        }
        let t = l.trim();
        let (head, description) = match t.find("  ") {
            Some(at) => (
                t[..at].trim(),
                Some(t[at..].trim().to_owned()).filter(|d| !d.is_empty()),
            ),
            None => (t, None),
        };
        let (names, args) = head.split_once(' ').unwrap_or((head, ""));
        for name in names
            .split(',')
            .map(|n| n.trim().trim_end_matches(':'))
            .filter(|n| !n.is_empty())
        {
            let text = [prefix.as_str(), name, args]
                .iter()
                .filter(|p| !p.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join(" ");
            out.push((u32::try_from(i).unwrap_or(u32::MAX), text, description.clone()));
        }
    }
    Some(out)
}

/// The words of a help block's usage line before its command slot: `glab milestone` of
/// `USAGE` / `glab milestone <command> [command] [--flags]`.
fn usage_prefix(lines: &[&str]) -> String {
    let mut usage = None;
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim();
        let lower = t.to_ascii_lowercase();
        if lower == "usage" || lower == "usage:" {
            usage = lines[i + 1..].iter().map(|l| l.trim()).find(|l| !l.is_empty());
        } else if let Some(rest) = lower.strip_prefix("usage:") {
            usage = Some(&t[t.len() - rest.len()..]);
        }
    }
    let Some(u) = usage else { return String::new() };
    let words: Vec<&str> = u
        .split_whitespace()
        .take_while(|w| !w.starts_with(['<', '[', '-', '{']) && !w.chars().all(|c| c.is_ascii_uppercase()))
        .collect();
    words.join(" ")
}

/// The comment at the end of a command line (`meetgeek auth --show  # check the key`):
/// a `#` after a blank, outside quotes.
fn trailing_comment(line: &str) -> Option<String> {
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '#') if prev.is_whitespace() && i > 0 => {
                let t = line[i + 1..].trim();
                return (!t.is_empty()).then(|| t.to_owned());
            }
            _ => {}
        }
        prev = c;
    }
    None
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

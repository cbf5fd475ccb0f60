//! The one frontmatter writer: every change skillc makes to a SKILL.md — `export` and
//! `migrate` writing the frontmatter anew, `check --fix` editing entries in place — goes
//! through here, so the three agree on line endings, fences, quoting (via
//! [`super::yaml_out`]) and on never touching the body.
//!
//! Two granularities:
//! - [`replace_head`] writes everything before the body from a list of top-level entries
//!   (block style, keys in order), keeping the file's line ending and whether the closing
//!   fence ends with a line break; the BOM is kept or dropped as [`Layout::bom`] says.
//! - [`Edits`] replaces byte ranges of the text (an entry's lines, a scalar, a fence) and
//!   leaves every other byte as it was: comments and the quoting of untouched entries stay.
//!   [`entry_lines`], [`render_entry`] and [`metadata_string`] give the ranges and the text.

use std::ops::Range;

use crate::diag::Source;
use crate::skill::frontmatter::{self, Split};
use crate::skill::yaml::{Entry, Node, NodeKind};
use crate::skill::yaml_out::{self, Value};

/// How the bytes around the frontmatter are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Write a UTF-8 byte order mark first.
    pub bom: bool,
    /// The line ending: `"\n"` or `"\r\n"`.
    pub eol: &'static str,
    /// The closing `---` is followed by a line break (the body starts on the next line).
    pub close_eol: bool,
}

impl Layout {
    /// The layout of `text` split as `split`: its BOM, the line ending of the frontmatter
    /// (CRLF when any line before the body ends with one) and the closing fence's line break.
    pub fn of(text: &str, split: &Split) -> Layout {
        Layout {
            bom: split.bom,
            eol: eol_of(&text[..split.body.start.min(text.len())]),
            close_eol: split.body.start > split.close_fence.end,
        }
    }

    /// The layout of a SKILL.md `text`; `None` when it has no frontmatter.
    pub fn of_text(text: &str) -> Option<Layout> {
        let split = frontmatter::split(&Source::new("SKILL.md", text)).0?;
        Some(Layout::of(text, &split))
    }

    /// The same layout without a byte order mark (what `export` writes).
    pub fn without_bom(self) -> Layout {
        Layout { bom: false, ..self }
    }
}

/// `"\r\n"` when `head` has a CRLF line break, else `"\n"`.
pub fn eol_of(head: &str) -> &'static str {
    if head.contains("\r\n") { "\r\n" } else { "\n" }
}

/// Everything before the body: the BOM when asked, the fences and `entries` in block style.
pub fn head(entries: &[(String, Value)], layout: Layout) -> String {
    let mut out = String::new();
    if layout.bom {
        out.push('\u{feff}');
    }
    out.push_str("---");
    out.push_str(layout.eol);
    out.push_str(&yaml_out::render_mapping(entries, layout.eol));
    out.push_str("---");
    if layout.close_eol {
        out.push_str(layout.eol);
    }
    out
}

/// `text` with everything before `body` replaced by [`head`]; the body is copied byte for byte.
pub fn replace_head(text: &str, body: Range<usize>, entries: &[(String, Value)], layout: Layout) -> String {
    let body = text.get(body).unwrap_or_default();
    let mut out = head(entries, layout);
    out.push_str(body);
    out
}

/// One entry `key: value` as block lines indented by `indent` spaces, each ended by `eol`.
pub fn render_entry(key: &str, value: &Value, indent: usize, eol: &str) -> String {
    let text = yaml_out::render_mapping(&[(key.to_owned(), value.clone())], eol);
    let pad = " ".repeat(indent);
    let mut out = String::with_capacity(text.len() + indent * 4);
    for line in text.split_inclusive(eol) {
        out.push_str(&pad);
        out.push_str(line);
    }
    out
}

/// A node as the standard's `metadata` holds it, a string: a scalar's text, or compact JSON
/// (YAML 1.2 core types) for a mapping or list.
pub fn metadata_string(node: &Node) -> String {
    match &node.kind {
        NodeKind::Scalar(s) => s.value.clone(),
        _ => Value::from_node(node).to_json().to_string(),
    }
}

/// The end of the last byte a node's text takes in `text`: a block collection ends with its
/// last child (its own span runs to the next token), a flow collection at its closing
/// bracket (found in the text: the parser's end marker can stop at the last inner token).
pub fn text_end(text: &str, node: &Node) -> usize {
    match &node.kind {
        NodeKind::Scalar(_) => node.span.end,
        NodeKind::Map { flow: true, .. } | NodeKind::Seq { flow: true, .. } => flow_end(text, node.span.start)
            .unwrap_or(node.span.end)
            .max(node.span.end),
        NodeKind::Map { entries, .. } => entries
            .last()
            .map_or(node.span.end, |e| text_end(text, &e.value).max(e.key_span.end)),
        NodeKind::Seq { items, .. } => items.last().map_or(node.span.end, |n| text_end(text, n)),
    }
}

/// The offset just past the bracket closing the flow collection opened at `start`, skipping
/// quoted scalars and comments; `None` when it is not closed.
fn flow_end(text: &str, start: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = start;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b'"' => {
                i += 1;
                while let Some(&c) = bytes.get(i) {
                    match c {
                        b'\\' => i += 1,
                        b'"' => break,
                        _ => {}
                    }
                    i += 1;
                }
            }
            b'\'' => {
                i += 1;
                while let Some(&c) = bytes.get(i) {
                    if c == b'\'' {
                        if bytes.get(i + 1) == Some(&b'\'') {
                            i += 1;
                        } else {
                            break;
                        }
                    }
                    i += 1;
                }
            }
            b'#' if i == 0 || bytes.get(i - 1).is_some_and(|c| c.is_ascii_whitespace()) => {
                while bytes.get(i).is_some_and(|c| *c != b'\n') {
                    i += 1;
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The start of the line holding byte `at`.
pub fn line_start(text: &str, at: usize) -> usize {
    text.get(..at).and_then(|t| t.rfind('\n')).map_or(0, |i| i + 1)
}

/// The end of the line holding byte `at`, past its `\n` (or the end of the text).
pub fn line_end(text: &str, at: usize) -> usize {
    text.get(at..)
        .and_then(|t| t.find('\n'))
        .map_or(text.len(), |i| at + i + 1)
}

/// The whole lines an entry takes: from the start of its key's line to the end of the line
/// holding the last byte of its value, line break included.
pub fn entry_lines(text: &str, entry: &Entry) -> Range<usize> {
    let start = line_start(text, entry.key_span.start);
    let last = text_end(text, &entry.value).max(entry.key_span.end);
    start..line_end(text, last.saturating_sub(1).max(entry.key_span.start))
}

/// The column (in bytes, i.e. spaces) at which an entry's key starts.
pub fn indent_of(text: &str, entry: &Entry) -> usize {
    entry.key_span.start - line_start(text, entry.key_span.start)
}

/// Whether YAML `lines` may hold a comment: a line starting with `#`, or ` #` anywhere (also
/// inside quotes: conservative). A fix that would rewrite such lines is not applied, so no
/// comment is ever lost.
pub fn has_comment(lines: &str) -> bool {
    lines.lines().any(|l| {
        let t = l.trim_start();
        t.starts_with('#') || l.contains(" #") || l.contains("\t#")
    })
}

/// Byte-range replacements over one text, applied together.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Edits {
    edits: Vec<(Range<usize>, String)>,
}

impl Edits {
    /// No edits.
    pub fn new() -> Edits {
        Edits::default()
    }

    /// Replaces `range` with `text` (an empty range inserts).
    pub fn replace(&mut self, range: Range<usize>, text: impl Into<String>) {
        self.edits.push((range, text.into()));
    }

    /// Whether an edit touches bytes of `range` (or inserts inside it).
    pub fn overlaps(&self, range: &Range<usize>) -> bool {
        self.edits
            .iter()
            .any(|(r, _)| (r.start < range.end && range.start < r.end) || (r.is_empty() && range.contains(&r.start)))
    }

    /// The edited text; `None` when two edits overlap or one is outside the text (the caller
    /// drops one and tries again) — never a half-edited text.
    pub fn apply(&self, text: &str) -> Option<String> {
        let mut sorted: Vec<&(Range<usize>, String)> = self.edits.iter().collect();
        // Stable: inserts at one position keep the order they were made in.
        sorted.sort_by_key(|(r, _)| (r.start, r.end));
        let mut out = String::with_capacity(text.len() + 64);
        let mut at = 0;
        for (r, new) in sorted {
            if r.start < at || r.end < r.start {
                return None;
            }
            out.push_str(text.get(at..r.start)?);
            out.push_str(new);
            at = r.end;
        }
        out.push_str(text.get(at..)?);
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skill::yaml;

    fn root(text: &str) -> Node {
        let src = Source::new("SKILL.md", text);
        let split = frontmatter::split(&src).0.expect("split");
        yaml::load(&src, split.frontmatter).root.expect("yaml")
    }

    #[test]
    fn entry_lines_cover_nested_values_only() {
        let text = "---\nname: a # c\nmetadata:\n  tags:\n    - x\n    - y\n  # note\n  author: me\ndescription: |\n  two\n  lines\n---\nbody\n";
        let r = root(text);
        let md = r.get("metadata").expect("metadata");
        assert_eq!(
            &text[entry_lines(text, md)],
            "metadata:\n  tags:\n    - x\n    - y\n  # note\n  author: me\n"
        );
        let tags = md.value.get("tags").expect("tags");
        assert_eq!(&text[entry_lines(text, tags)], "  tags:\n    - x\n    - y\n");
        assert_eq!(indent_of(text, tags), 2);
        let name = r.get("name").expect("name");
        assert_eq!(&text[entry_lines(text, name)], "name: a # c\n");
        assert!(has_comment(&text[entry_lines(text, name)]));
        let d = r.get("description").expect("description");
        assert_eq!(&text[entry_lines(text, d)], "description: |\n  two\n  lines\n");
    }

    #[test]
    fn multi_line_flow_collections_end_at_their_bracket() {
        let text = "---\nmetadata:\n  {\n    \"a\": \"}\",\n    'b': [1, \"x]\"], # }\n  }\nx: 1\n---\n";
        let r = root(text);
        let m = r.get("metadata").expect("metadata");
        assert!(
            text[entry_lines(text, m)].ends_with("  }\n"),
            "{:?}",
            &text[entry_lines(text, m)]
        );
    }

    #[test]
    fn rendered_entries_are_indented_block_lines() {
        let v = Value::Map(vec![("a".into(), Value::strs(["x", "y: z"]))]);
        assert_eq!(
            render_entry("k", &v, 2, "\r\n"),
            "  k:\r\n    a:\r\n      - x\r\n      - \"y: z\"\r\n"
        );
    }

    #[test]
    fn edits_apply_together_or_not_at_all() {
        let mut e = Edits::new();
        e.replace(4..5, "X");
        e.replace(0..0, ">");
        assert_eq!(e.apply("abcdef").as_deref(), Some(">abcdXf"));
        assert!(e.overlaps(&(3..5)));
        e.replace(3..6, "");
        assert_eq!(e.apply("abcdef"), None);
    }
}

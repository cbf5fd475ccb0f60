//! Building the located tree from `saphyr-parser` events, rejecting the banned features
//! (anchors, aliases, tags, merge keys, duplicate keys) as diagnostics.

use std::collections::HashMap;
use std::ops::Range;

use saphyr_parser::{Event, Parser, ScalarStyle};

use super::{Entry, MAX_DEPTH, Node, NodeKind, Scalar};
use crate::diag::{Diagnostic, Source};
use crate::rules;

/// Result of loading frontmatter YAML: the root node (None when the YAML is invalid) and
/// the diagnostics raised while loading.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loaded {
    /// The root node; `None` when the text is not valid YAML.
    pub root: Option<Node>,
    /// Problems found (syntax errors, banned features, duplicate keys).
    pub diagnostics: Vec<Diagnostic>,
}

enum Frame {
    Seq {
        items: Vec<Node>,
        start: usize,
        flow: bool,
    },
    Map {
        entries: Vec<Entry>,
        /// Key → index in `entries`, for duplicate detection.
        seen: HashMap<String, usize>,
        key: Option<(String, Range<usize>)>,
        start: usize,
        flow: bool,
        skip_value: bool,
    },
}

/// Loads the YAML text at `range` of `src` (the frontmatter between the fences).
pub fn load(src: &Source<'_>, range: Range<usize>) -> Loaded {
    let text = &src.text[range.clone()];
    let base = range.start;
    let char_to_byte = CharMap::new(text);
    let mut diags = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut root: Option<Node> = None;
    let mut documents = 0;
    let file_span = |s: usize, e: usize| (base + char_to_byte.byte(s))..(base + char_to_byte.byte(e));

    for item in Parser::new_from_str(text) {
        let (event, span) = match item {
            Ok(x) => x,
            Err(e) => {
                let msg = e.info().to_string();
                let mut at = char_to_byte.byte(e.marker().index());
                if msg.contains("tab") {
                    at = tab_at(text, at);
                }
                diags.push(unclosed(src, &stack, text, at, &msg).unwrap_or_else(|| {
                    let at = base + at;
                    invalid(
                        src,
                        at..at,
                        format!("invalid YAML: {msg}"),
                        "fix the YAML syntax; quote values that contain `: `, `#` or start with a special character",
                    )
                }));
                return Loaded {
                    root: None,
                    diagnostics: diags,
                };
            }
        };
        let sp = file_span(span.start.index(), span.end.index());
        let is_map = matches!(event, Event::MappingStart(..));
        let node = match event {
            Event::StreamStart | Event::StreamEnd | Event::Nothing => continue,
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    diags.push(invalid(
                        src,
                        sp,
                        "invalid YAML: more than one document in the frontmatter".into(),
                        "the frontmatter is a single YAML mapping; remove the `---` or `...` separator",
                    ));
                    return Loaded {
                        root: None,
                        diagnostics: diags,
                    };
                }
                continue;
            }
            Event::DocumentEnd => continue,
            Event::Alias(_) => alias(src, &mut diags, sp),
            Event::Scalar(value, style, anchor, tag) => {
                if anchor != 0 {
                    report_anchor(src, &mut diags, sp.clone());
                }
                if tag.is_some() {
                    report_tag(src, &mut diags, sp.clone());
                }
                let plain = matches!(style, ScalarStyle::Plain) && tag.is_none();
                Node {
                    kind: NodeKind::Scalar(Scalar {
                        value: value.into_owned(),
                        plain,
                    }),
                    span: sp,
                }
            }
            Event::SequenceStart(anchor, tag) | Event::MappingStart(anchor, tag) => {
                if anchor != 0 {
                    report_anchor(src, &mut diags, sp.clone());
                }
                if tag.is_some() {
                    report_tag(src, &mut diags, sp.clone());
                }
                if stack.len() >= MAX_DEPTH {
                    diags.push(invalid(
                        src,
                        sp,
                        format!("invalid YAML: nesting deeper than {MAX_DEPTH} levels"),
                        "frontmatter is configuration; flatten it",
                    ));
                    return Loaded {
                        root: None,
                        diagnostics: diags,
                    };
                }
                let flow = matches!(src.text.as_bytes().get(sp.start), Some(b'{' | b'['));
                stack.push(Frame::open(is_map, sp.start, flow));
                continue;
            }
            Event::SequenceEnd => match stack.pop() {
                Some(Frame::Seq { items, start, flow }) => Node {
                    kind: NodeKind::Seq { items, flow },
                    span: start..sp.end.max(start),
                },
                _ => continue,
            },
            Event::MappingEnd => match stack.pop() {
                Some(Frame::Map {
                    entries, start, flow, ..
                }) => Node {
                    kind: NodeKind::Map { entries, flow },
                    span: start..sp.end.max(start),
                },
                _ => continue,
            },
        };
        push_node(src, &mut diags, &mut stack, &mut root, node);
    }
    Loaded {
        root,
        diagnostics: diags,
    }
}

/// Where the tab of a tab error is, from `at`, the byte offset of `text` the parser points
/// at. The parser may point past the tab (at the content after it) or at the start of the
/// token it was reading, lines before (a plain scalar continued by a tab-indented line): the
/// tab at `at`; else the first tab of the indentation of `at`'s line; else the first tab
/// after `at` that indents a line; else the first tab after `at`; else `at`.
fn tab_at(text: &str, at: usize) -> usize {
    let bytes = text.as_bytes();
    let at = at.min(bytes.len());
    if bytes.get(at) == Some(&b'\t') {
        return at;
    }
    let line_start = |i: usize| bytes[..i].iter().rposition(|&b| b == b'\n').map_or(0, |n| n + 1);
    let indents = |i: usize| bytes[line_start(i)..i].iter().all(|&b| b == b' ' || b == b'\t');
    let start = line_start(at);
    if let Some(i) = bytes[start..at].iter().position(|&b| b == b'\t')
        && indents(start + i)
    {
        return start + i;
    }
    let after = || (at..bytes.len()).filter(|&i| bytes[i] == b'\t');
    after().find(|&i| indents(i)).or_else(|| after().next()).unwrap_or(at)
}

/// `SK006` at the innermost `[` or `{` still open when the text ended there (the parser points
/// at the end, the closing fence's line, but the bracket never closed is what to fix).
fn unclosed(src: &Source<'_>, stack: &[Frame], text: &str, at: usize, msg: &str) -> Option<Diagnostic> {
    if at < text.trim_end().len() {
        return None;
    }
    let open = stack.iter().rev().find_map(|f| match f {
        Frame::Seq { start, flow: true, .. } | Frame::Map { start, flow: true, .. } => Some(*start),
        _ => None,
    })?;
    let (bracket, close) = if src.text.as_bytes().get(open) == Some(&b'{') {
        ("{", "}")
    } else {
        ("[", "]")
    };
    Some(invalid(
        src,
        open..open + 1,
        format!("invalid YAML: this `{bracket}` is never closed ({msg})"),
        &format!("close it with `{close}`, or quote the value if the `{bracket}` is part of the text"),
    ))
}

/// `SK006` at `span`.
fn invalid(src: &Source<'_>, span: Range<usize>, message: String, help: &str) -> Diagnostic {
    Diagnostic::new(&rules::SK006, src.file, src.span(span), message).help(help)
}

/// An alias is reported (`SK009`) and stands for an empty value: it is never expanded.
fn alias(src: &Source<'_>, diags: &mut Vec<Diagnostic>, sp: Range<usize>) -> Node {
    diags.push(
        Diagnostic::new(
            &rules::SK009,
            src.file,
            src.span(sp.clone()),
            "YAML alias in frontmatter",
        )
        .label("aliases are not expanded")
        .help("write the value out in full"),
    );
    Node {
        kind: NodeKind::Scalar(Scalar {
            value: String::new(),
            plain: false,
        }),
        span: sp,
    }
}

impl Frame {
    /// A collection starting at `start`.
    fn open(map: bool, start: usize, flow: bool) -> Frame {
        if map {
            Frame::Map {
                entries: Vec::new(),
                seen: HashMap::new(),
                key: None,
                start,
                flow,
                skip_value: false,
            }
        } else {
            Frame::Seq {
                items: Vec::new(),
                start,
                flow,
            }
        }
    }
}

fn push_node(src: &Source<'_>, diags: &mut Vec<Diagnostic>, stack: &mut [Frame], root: &mut Option<Node>, node: Node) {
    match stack.last_mut() {
        None => *root = Some(node),
        Some(Frame::Seq { items, .. }) => items.push(node),
        Some(Frame::Map {
            entries,
            seen,
            key,
            skip_value,
            ..
        }) => match key.take() {
            None => {
                // This node is a key.
                let key_text = match &node.kind {
                    NodeKind::Scalar(s) => {
                        if s.plain && s.value == "<<" {
                            diags.push(
                                Diagnostic::new(
                                    &rules::SK011,
                                    src.file,
                                    src.span(node.span.clone()),
                                    "YAML merge key in frontmatter",
                                )
                                .help("write the merged keys out in full"),
                            );
                        }
                        s.value.clone()
                    }
                    _ => {
                        diags.push(
                            Diagnostic::new(
                                &rules::SK006,
                                src.file,
                                src.span(node.span.clone()),
                                "invalid YAML: a mapping key must be a scalar",
                            )
                            .help("use plain text keys"),
                        );
                        // Reported once; the entry is dropped, so nothing else complains of it.
                        *key = Some((String::new(), node.span));
                        *skip_value = true;
                        return;
                    }
                };
                *skip_value = false;
                // A map from key to entry index keeps this linear on huge mappings.
                if let Some(first) = seen.get(&key_text).and_then(|&i| entries.get(i)) {
                    diags.push(
                        Diagnostic::new(
                            &rules::SK008,
                            src.file,
                            src.span(node.span.clone()),
                            format!("duplicate key `{key_text}`"),
                        )
                        .label("defined again here")
                        .related(src.span(first.key_span.clone()), "first defined here")
                        .help("keep one of the two; parsers disagree on which one wins"),
                    );
                    *skip_value = true;
                }
                *key = Some((key_text, node.span));
            }
            Some((k, key_span)) => {
                if !std::mem::take(skip_value) {
                    seen.insert(k.clone(), entries.len());
                    entries.push(Entry {
                        key: k,
                        key_span,
                        value: node,
                    });
                }
            }
        },
    }
}

fn report_anchor(src: &Source<'_>, diags: &mut Vec<Diagnostic>, sp: Range<usize>) {
    diags.push(
        Diagnostic::new(&rules::SK009, src.file, src.span(sp), "YAML anchor in frontmatter")
            .help("remove the `&anchor`; anchors and aliases are not allowed"),
    );
}

fn report_tag(src: &Source<'_>, diags: &mut Vec<Diagnostic>, sp: Range<usize>) {
    diags.push(
        Diagnostic::new(&rules::SK010, src.file, src.span(sp), "YAML tag in frontmatter")
            .help("remove the `!tag`; quote the value if it must be a string"),
    );
}

/// Maps the parser's character indices to byte offsets of the text.
struct CharMap {
    /// Byte offset of each character; empty when the text is ASCII (identity map).
    offsets: Vec<usize>,
    len: usize,
}

impl CharMap {
    fn new(text: &str) -> CharMap {
        let offsets = if text.is_ascii() {
            Vec::new()
        } else {
            text.char_indices().map(|(i, _)| i).collect()
        };
        CharMap {
            offsets,
            len: text.len(),
        }
    }

    fn byte(&self, char_index: usize) -> usize {
        if self.offsets.is_empty() {
            char_index.min(self.len)
        } else {
            self.offsets.get(char_index).copied().unwrap_or(self.len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The (1-based line, column) of the `SK006` of a frontmatter text.
    fn sk006(yaml: &str) -> (u32, u32) {
        let src = Source::new("SKILL.md", yaml);
        let loaded = load(&src, 0..yaml.len());
        let d = loaded
            .diagnostics
            .iter()
            .find(|d| d.rule.code == "SK006")
            .unwrap_or_else(|| panic!("no SK006 for {yaml:?}: {:?}", loaded.diagnostics));
        (d.span.start.line, d.span.start.column)
    }

    #[test]
    fn tab_errors_point_at_the_tab() {
        // The parser points at the start of `csv` (line 1) or past the tab: the tab is meant.
        assert_eq!(sk006("name: csv\n\tdescription: x\n"), (2, 1));
        assert_eq!(sk006("metadata:\n\tauthor: a\n"), (2, 1));
        assert_eq!(sk006("metadata:\n  a: 1\n \tb: 2\n"), (3, 2));
        assert_eq!(sk006("name: a\ndescription: b\n\tlicense: MIT\n"), (3, 1));
    }

    /// Fails before the fix: the parser points at the end of the frontmatter (the closing
    /// fence's line), far from the bracket to close.
    #[test]
    fn an_unclosed_flow_collection_points_at_its_bracket() {
        assert_eq!(sk006("name: a\ndescription: [unclosed\n"), (2, 14));
        assert_eq!(sk006("name: a\nmetadata: {a: 1\n"), (2, 11));
        let src = Source::new("SKILL.md", "description: [x\n");
        let d = load(&src, 0..src.text.len()).diagnostics;
        assert!(d[0].message.contains("this `[` is never closed"), "{:?}", d[0].message);
        // An error elsewhere in a closed collection still points where the parser does.
        assert_eq!(sk006("a: [1, 2]\nb: : c\n").0, 2);
    }

    #[test]
    fn the_tab_is_found_from_where_the_parser_points() {
        assert_eq!(tab_at("a\tb", 1), 1);
        assert_eq!(tab_at("x: a\tb\n\tc", 3), 7, "a tab inside a value does not indent");
        assert_eq!(tab_at("  \tc", 3), 2);
        assert_eq!(tab_at("x: a\tb", 0), 4, "no indenting tab: the first after");
        assert_eq!(tab_at("no tab", 2), 2);
        assert_eq!(tab_at("", 5), 0);
    }
}

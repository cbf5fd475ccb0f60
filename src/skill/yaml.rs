//! A located YAML tree for frontmatter, built from `saphyr-parser` events.
//!
//! The tree keeps what a validator needs and a generic YAML loader throws away: the byte span
//! of every node and key, the scalar style (plain or quoted) and whether a collection was
//! written in flow style. While building it the loader rejects the YAML features PRODUCT.md
//! bans from frontmatter — anchors, aliases, tags, merge keys, duplicate keys — as
//! diagnostics, never by failing. Aliases are never expanded, so an alias bomb costs nothing.
//!
//! Scalars are kept as text. [`Scalar::core_type`] resolves a plain scalar with the YAML 1.2
//! core schema (`yes` is a string) and [`Scalar::pyyaml_type`] says how PyYAML's YAML 1.1
//! resolver would read it, for the `SK012` warning.

use std::collections::HashMap;
use std::ops::Range;

use saphyr_parser::{Event, Parser, ScalarStyle};

use crate::diag::Diagnostic;
use crate::diag::Source;
use crate::rules;

/// Maximum nesting of collections. Deeper documents are rejected (`SK006`) so that nothing
/// downstream can exhaust the stack.
pub const MAX_DEPTH: usize = 64;

/// A YAML node with its byte span in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// What the node is.
    pub kind: NodeKind,
    /// Byte range in the file (quotes and indicators included).
    pub span: Range<usize>,
}

/// The three YAML node kinds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// A scalar, kept as its text.
    Scalar(Scalar),
    /// A sequence.
    Seq {
        /// The items, in order.
        items: Vec<Node>,
        /// Written as `[a, b]`.
        flow: bool,
    },
    /// A mapping.
    Map {
        /// The entries, in source order, keys unique (duplicates are dropped and reported).
        entries: Vec<Entry>,
        /// Written as `{a: b}`.
        flow: bool,
    },
}

/// A scalar's text and how it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scalar {
    /// The scalar's value after YAML unescaping and folding.
    pub value: String,
    /// Whether it was plain (unquoted, subject to implicit typing) or quoted/block.
    pub plain: bool,
}

/// One `key: value` entry of a mapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The key's text.
    pub key: String,
    /// Byte range of the key in the file.
    pub key_span: Range<usize>,
    /// The value.
    pub value: Node,
}

/// The type a scalar resolves to under some schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarType {
    /// `null`, `~` or empty.
    Null,
    /// `true` / `false` (and, in YAML 1.1, `yes`, `on`, …).
    Bool,
    /// An integer.
    Int,
    /// A floating-point number.
    Float,
    /// A date or timestamp (YAML 1.1 only).
    Timestamp,
    /// A string.
    Str,
}

impl ScalarType {
    /// A lowercase English name with its article: "a boolean", "an integer", …
    pub fn describe(self) -> &'static str {
        match self {
            ScalarType::Null => "null",
            ScalarType::Bool => "a boolean",
            ScalarType::Int => "an integer",
            ScalarType::Float => "a float",
            ScalarType::Timestamp => "a date",
            ScalarType::Str => "a string",
        }
    }
}

impl Node {
    /// The scalar, when the node is one.
    pub fn as_scalar(&self) -> Option<&Scalar> {
        match &self.kind {
            NodeKind::Scalar(s) => Some(s),
            _ => None,
        }
    }

    /// The scalar text, when the node is a scalar.
    pub fn as_str(&self) -> Option<&str> {
        self.as_scalar().map(|s| s.value.as_str())
    }

    /// The mapping entries, when the node is a mapping.
    pub fn as_map(&self) -> Option<&[Entry]> {
        match &self.kind {
            NodeKind::Map { entries, .. } => Some(entries),
            _ => None,
        }
    }

    /// The sequence items, when the node is a sequence.
    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.kind {
            NodeKind::Seq { items, .. } => Some(items),
            _ => None,
        }
    }

    /// The strings of a node that is a string or a sequence of strings.
    pub fn strings(&self) -> Option<Vec<String>> {
        if let Some(s) = self.as_str() {
            return Some(vec![s.to_owned()]);
        }
        self.as_seq()?.iter().map(|n| n.as_str().map(str::to_owned)).collect()
    }

    /// The entry for `key`, when the node is a mapping that has it.
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.as_map()?.iter().find(|e| e.key == key)
    }

    /// The value for `key`, when the node is a mapping that has it.
    pub fn get_value(&self, key: &str) -> Option<&Node> {
        self.get(key).map(|e| &e.value)
    }

    /// "a mapping", "a sequence", "a string", "an integer"… for messages.
    pub fn describe(&self) -> &'static str {
        match &self.kind {
            NodeKind::Map { .. } => "a mapping",
            NodeKind::Seq { .. } => "a sequence",
            NodeKind::Scalar(s) => match s.core_type() {
                ScalarType::Null => "null",
                ScalarType::Bool => "a boolean",
                ScalarType::Int => "an integer",
                ScalarType::Float => "a float",
                ScalarType::Timestamp | ScalarType::Str => "a string",
            },
        }
    }

    /// A JSON rendering with every scalar as a string (what a strictyaml reader sees).
    pub fn to_json_strings(&self) -> serde_json::Value {
        match &self.kind {
            NodeKind::Scalar(s) => serde_json::Value::String(s.value.clone()),
            NodeKind::Seq { items, .. } => items.iter().map(Node::to_json_strings).collect(),
            NodeKind::Map { entries, .. } => entries
                .iter()
                .map(|e| (e.key.clone(), e.value.to_json_strings()))
                .collect::<serde_json::Map<_, _>>()
                .into(),
        }
    }

    /// A JSON rendering with plain scalars typed by the YAML 1.2 core schema.
    pub fn to_json_typed(&self) -> serde_json::Value {
        match &self.kind {
            NodeKind::Scalar(s) => s.to_json_typed(),
            NodeKind::Seq { items, .. } => items.iter().map(Node::to_json_typed).collect(),
            NodeKind::Map { entries, .. } => entries
                .iter()
                .map(|e| (e.key.clone(), e.value.to_json_typed()))
                .collect::<serde_json::Map<_, _>>()
                .into(),
        }
    }

    /// Visits every scalar (values and keys are not distinguished), depth first.
    pub fn for_each_scalar<'a>(&'a self, f: &mut impl FnMut(&'a str, &Range<usize>)) {
        match &self.kind {
            NodeKind::Scalar(s) => f(&s.value, &self.span),
            NodeKind::Seq { items, .. } => items.iter().for_each(|n| n.for_each_scalar(f)),
            NodeKind::Map { entries, .. } => entries.iter().for_each(|e| e.value.for_each_scalar(f)),
        }
    }
}

impl Scalar {
    /// The type under the YAML 1.2 core schema (quoted scalars are always strings).
    pub fn core_type(&self) -> ScalarType {
        if !self.plain {
            return ScalarType::Str;
        }
        core_schema_type(&self.value)
    }

    /// The type PyYAML (YAML 1.1) would give this scalar; `None` when it is a string there
    /// too. This is what `SK012` warns about.
    pub fn pyyaml_type(&self) -> Option<ScalarType> {
        if !self.plain {
            return None;
        }
        match pyyaml_schema_type(&self.value) {
            ScalarType::Str => None,
            t => Some(t),
        }
    }

    /// The value as JSON, typed by the YAML 1.2 core schema.
    pub fn to_json_typed(&self) -> serde_json::Value {
        let v = self.value.as_str();
        match self.core_type() {
            ScalarType::Null => serde_json::Value::Null,
            ScalarType::Bool => serde_json::Value::Bool(v.eq_ignore_ascii_case("true")),
            ScalarType::Int => parse_core_int(v)
                .map(serde_json::Value::from)
                .unwrap_or_else(|| serde_json::Value::String(v.to_owned())),
            ScalarType::Float => v
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(serde_json::Value::Number)
                .unwrap_or_else(|| serde_json::Value::String(v.to_owned())),
            ScalarType::Timestamp | ScalarType::Str => serde_json::Value::String(v.to_owned()),
        }
    }
}

/// Parses a YAML 1.2 core-schema integer (`12`, `-3`, `0o17`, `0x1F`).
pub fn parse_core_int(v: &str) -> Option<i64> {
    if let Some(h) = v.strip_prefix("0x") {
        return i64::from_str_radix(h, 16).ok();
    }
    if let Some(o) = v.strip_prefix("0o") {
        return i64::from_str_radix(o, 8).ok();
    }
    v.parse::<i64>().ok()
}

fn is_digits(s: &str, radix: u32) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_digit(radix))
}

fn strip_sign(s: &str) -> &str {
    s.strip_prefix(['-', '+']).unwrap_or(s)
}

/// YAML 1.2 core schema resolution (spec 1.2.2, section 10.3.2).
fn core_schema_type(v: &str) -> ScalarType {
    match v {
        "" | "~" | "null" | "Null" | "NULL" => return ScalarType::Null,
        "true" | "True" | "TRUE" | "false" | "False" | "FALSE" => return ScalarType::Bool,
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF" | ".nan" | ".NaN"
        | ".NAN" => return ScalarType::Float,
        _ => {}
    }
    if is_digits(strip_sign(v), 10)
        || v.strip_prefix("0o").is_some_and(|d| is_digits(d, 8))
        || v.strip_prefix("0x").is_some_and(|d| is_digits(d, 16))
    {
        return ScalarType::Int;
    }
    // [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
    let body = strip_sign(v);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some((int, frac)) => {
            (int.is_empty() && is_digits(frac, 10)) || (is_digits(int, 10) && (frac.is_empty() || is_digits(frac, 10)))
        }
        None => is_digits(mantissa, 10),
    };
    let exponent_ok = exponent.is_none_or(|e| is_digits(strip_sign(e), 10));
    if mantissa_ok && exponent_ok && (mantissa.contains('.') || exponent.is_some()) {
        return ScalarType::Float;
    }
    ScalarType::Str
}

/// PyYAML's implicit resolvers (`yaml/resolver.py`, YAML 1.1).
fn pyyaml_schema_type(v: &str) -> ScalarType {
    match v {
        "yes" | "Yes" | "YES" | "no" | "No" | "NO" | "true" | "True" | "TRUE" | "false" | "False" | "FALSE" | "on"
        | "On" | "ON" | "off" | "Off" | "OFF" => return ScalarType::Bool,
        "" | "~" | "null" | "Null" | "NULL" => return ScalarType::Null,
        _ => {}
    }
    let digits_ = |s: &str, radix: u32| !s.is_empty() && s.chars().all(|c| c == '_' || c.is_digit(radix));
    let body = strip_sign(v);
    // Integers: 0b…, 0…(octal), decimal, 0x…, sexagesimal.
    if body.strip_prefix("0b").is_some_and(|d| digits_(d, 2))
        || body.strip_prefix("0x").is_some_and(|d| digits_(d, 16))
        || (body.starts_with('0') && digits_(body, 8))
        || (body.starts_with(|c: char| c.is_ascii_digit())
            && digits_(body, 10)
            && (body == "0" || !body.starts_with('0')))
        || is_sexagesimal(body, false)
    {
        return ScalarType::Int;
    }
    // Floats: [-+]?([0-9][0-9_]*)?\.[0-9_]*([eE][-+][0-9]+)? , sexagesimal, .inf, .nan
    if matches!(body, ".inf" | ".Inf" | ".INF") || matches!(v, ".nan" | ".NaN" | ".NAN") || is_sexagesimal(body, true) {
        return ScalarType::Float;
    }
    if let Some((int, rest)) = body.split_once('.') {
        let int_ok = int.is_empty() || (int.starts_with(|c: char| c.is_ascii_digit()) && digits_(int, 10));
        let (frac, exp) = match rest.find(['e', 'E']) {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None => (rest, None),
        };
        let frac_ok = frac.chars().all(|c| c == '_' || c.is_ascii_digit());
        let exp_ok = exp.is_none_or(|e| (e.starts_with(['-', '+'])) && is_digits(&e[1..], 10));
        let non_empty = !(int.is_empty() && frac.is_empty());
        if int_ok
            && frac_ok
            && exp_ok
            && non_empty
            && (!int.is_empty() || frac.starts_with(|c: char| c.is_ascii_digit()))
        {
            return ScalarType::Float;
        }
    }
    if is_pyyaml_timestamp(v) {
        return ScalarType::Timestamp;
    }
    ScalarType::Str
}

/// `[1-9][0-9_]*(:[0-5]?[0-9])+` (int) or the same followed by `\.[0-9_]*` (float).
fn is_sexagesimal(v: &str, float: bool) -> bool {
    let (v, frac) = if float {
        match v.rsplit_once('.') {
            Some((a, f)) if f.chars().all(|c| c == '_' || c.is_ascii_digit()) => (a, true),
            _ => return false,
        }
    } else {
        (v, false)
    };
    let _ = frac;
    let mut parts = v.split(':');
    let Some(head) = parts.next() else { return false };
    let head_ok = if float {
        head.starts_with(|c: char| c.is_ascii_digit()) && head.chars().all(|c| c == '_' || c.is_ascii_digit())
    } else {
        head.starts_with(|c: char| ('1'..='9').contains(&c)) && head.chars().all(|c| c == '_' || c.is_ascii_digit())
    };
    let mut count = 0;
    for p in parts {
        count += 1;
        let ok = matches!(p.len(), 1 | 2)
            && p.chars().all(|c| c.is_ascii_digit())
            && (p.len() == 1 || p.as_bytes()[0] <= b'5');
        if !ok {
            return false;
        }
    }
    head_ok && count > 0
}

/// `YYYY-MM-DD` or `YYYY-M-D[Tt ]h:mm:ss[.f][ ][Z|±h[:mm]]`.
fn is_pyyaml_timestamp(v: &str) -> bool {
    let b = v.as_bytes();
    let digits = |r: Range<usize>| b.get(r.clone()).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    if b.len() == 10 && digits(0..4) && b[4] == b'-' && digits(5..7) && b[7] == b'-' && digits(8..10) {
        return true;
    }
    // The long form: date part with 1–2 digit month/day, then a time.
    let Some((date, time)) = v.split_once(['T', 't', ' ']) else {
        return false;
    };
    let mut d = date.split('-');
    let (Some(y), Some(m), Some(dd), None) = (d.next(), d.next(), d.next(), d.next()) else {
        return false;
    };
    let num = |s: &str, lo: usize, hi: usize| (lo..=hi).contains(&s.len()) && s.bytes().all(|c| c.is_ascii_digit());
    if !(num(y, 4, 4) && num(m, 1, 2) && num(dd, 1, 2)) {
        return false;
    }
    let time = time.trim_start();
    let mut t = time.splitn(3, ':');
    let (Some(h), Some(mi), Some(rest)) = (t.next(), t.next(), t.next()) else {
        return false;
    };
    num(h, 1, 2) && num(mi, 2, 2) && rest.len() >= 2 && rest.as_bytes()[..2].iter().all(u8::is_ascii_digit)
}

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
                let at = base + char_to_byte.byte(e.marker().index());
                let msg = e.info().to_string();
                diags.push(
                    Diagnostic::new(
                        &rules::SK006,
                        src.file,
                        src.span(at..at),
                        format!("invalid YAML: {msg}"),
                    )
                    .help("fix the YAML syntax; quote values that contain `: `, `#` or start with a special character"),
                );
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
                    diags.push(
                        Diagnostic::new(
                            &rules::SK006,
                            src.file,
                            src.span(sp),
                            "invalid YAML: more than one document in the frontmatter",
                        )
                        .help("the frontmatter is a single YAML mapping; remove the `---` or `...` separator"),
                    );
                    return Loaded {
                        root: None,
                        diagnostics: diags,
                    };
                }
                continue;
            }
            Event::DocumentEnd => continue,
            Event::Alias(_) => {
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
                    diags.push(
                        Diagnostic::new(
                            &rules::SK006,
                            src.file,
                            src.span(sp),
                            format!("invalid YAML: nesting deeper than {MAX_DEPTH} levels"),
                        )
                        .help("frontmatter is configuration; flatten it"),
                    );
                    return Loaded {
                        root: None,
                        diagnostics: diags,
                    };
                }
                let flow = matches!(src.text.as_bytes().get(sp.start), Some(b'{' | b'['));
                stack.push(if is_map {
                    Frame::Map {
                        entries: Vec::new(),
                        seen: HashMap::new(),
                        key: None,
                        start: sp.start,
                        flow,
                        skip_value: false,
                    }
                } else {
                    Frame::Seq {
                        items: Vec::new(),
                        start: sp.start,
                        flow,
                    }
                });
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

    fn scalar(v: &str) -> Scalar {
        Scalar {
            value: v.to_owned(),
            plain: true,
        }
    }

    #[test]
    fn core_schema_keeps_yaml_1_1_words_as_strings() {
        for s in ["yes", "no", "on", "off", "y", "2024-01-01", "1_000", "0777x"] {
            assert_eq!(scalar(s).core_type(), ScalarType::Str, "{s}");
        }
        assert_eq!(scalar("true").core_type(), ScalarType::Bool);
        assert_eq!(scalar("1.0").core_type(), ScalarType::Float);
        assert_eq!(scalar("-12").core_type(), ScalarType::Int);
        assert_eq!(scalar("null").core_type(), ScalarType::Null);
        assert_eq!(
            Scalar {
                value: "true".into(),
                plain: false
            }
            .core_type(),
            ScalarType::Str
        );
    }

    #[test]
    fn huge_mappings_load_in_linear_time_with_duplicates_found() {
        // 50,000 keys: a quadratic duplicate check would take minutes here.
        let mut text: String = (0..50_000).map(|i| format!("k{i}: v\n")).collect();
        text.push_str("k7: again\n");
        let src = Source::new("SKILL.md", &text);
        let loaded = load(&src, 0..text.len());
        assert_eq!(
            loaded.root.as_ref().and_then(Node::as_map).map(<[Entry]>::len),
            Some(50_000)
        );
        let codes: Vec<&str> = loaded.diagnostics.iter().map(|d| d.rule.code).collect();
        assert_eq!(codes, vec!["SK008"]);
        assert_eq!(loaded.diagnostics[0].related[0].span.start.line, 8);
    }

    #[test]
    fn pyyaml_resolver_cases() {
        let cases = [
            ("yes", Some(ScalarType::Bool)),
            ("Off", Some(ScalarType::Bool)),
            ("1.0", Some(ScalarType::Float)),
            ("1.", Some(ScalarType::Float)),
            (".5", Some(ScalarType::Float)),
            ("1e5", None), // PyYAML needs a dot for floats
            ("1_000", Some(ScalarType::Int)),
            ("0o17", None),
            ("017", Some(ScalarType::Int)),
            ("1:30", Some(ScalarType::Int)),
            ("2024-01-31", Some(ScalarType::Timestamp)),
            ("2024-1-3 10:00:00", Some(ScalarType::Timestamp)),
            ("~", Some(ScalarType::Null)),
            ("1.2.3", None),
            ("v1", None),
            ("hello", None),
        ];
        for (s, want) in cases {
            assert_eq!(scalar(s).pyyaml_type(), want, "{s}");
        }
    }
}

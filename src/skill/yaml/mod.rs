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
//! resolver would read it, for the `SK012` warning ([`schema`]); [`load`] builds the tree.

mod load;
mod schema;

use std::ops::Range;

pub use load::load;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Source;

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

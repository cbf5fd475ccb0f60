//! Writing frontmatter YAML back out (used by `migrate` and `export`): block style only, keys
//! in the order given, and every string quoted whenever a plain scalar could be misread.
//!
//! The output is meant to be read unchanged by skillc's own loader ([`super::yaml`]), by
//! PyYAML (YAML 1.1) and by strictyaml, the reference validator's parser. Hence the rules:
//! no flow collections except the empty `{}`/`[]`, no anchors or tags, a string is written
//! plain only when it is plain text that every resolver reads as a string (no `yes`, `1.0`,
//! `2024-01-01`, no `: ` or ` #`), otherwise double-quoted with escapes; and the sequence
//! `---` never appears in the frontmatter text, because the reference validator splits
//! SKILL.md on that substring (`docs/compatibility.md`): a third `-` in a row is written as
//! the escape `\x2d` inside a double-quoted string.

use crate::skill::yaml::{Node, NodeKind, Scalar, ScalarType};

/// A YAML value to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A string: written plain when that is unambiguous, else double-quoted.
    Str(String),
    /// A plain scalar written exactly as its text (`true`, `42`, `1.0`): keeps the type the
    /// source had. Only for text that is safe as a plain scalar (see [`Value::from_node`]).
    Plain(String),
    /// A block sequence.
    Seq(Vec<Value>),
    /// A block mapping, entries in order.
    Map(Vec<(String, Value)>),
}

impl Value {
    /// Converts a loaded node: plain scalars stay plain when their text is safe (so `yes`,
    /// `1.0`, `true` keep whatever type each YAML reader gave them), others become strings.
    pub fn from_node(node: &Node) -> Value {
        match &node.kind {
            NodeKind::Scalar(s) => Value::from_scalar(s),
            NodeKind::Seq { items, .. } => Value::Seq(items.iter().map(Value::from_node).collect()),
            NodeKind::Map { entries, .. } => Value::Map(
                entries
                    .iter()
                    .map(|e| (e.key.clone(), Value::from_node(&e.value)))
                    .collect(),
            ),
        }
    }

    /// A scalar: plain typed scalars stay plain when their text is safe to write back.
    pub fn from_scalar(s: &Scalar) -> Value {
        // Core-schema booleans, numbers and nulls are made of these characters only.
        let typed_text = |v: &str| !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || "+-._~".contains(c));
        // A plain scalar stays plain when its text is safe to write back as it is: every YAML
        // reader (1.1 or 1.2) then reads the same value as in the source.
        if s.plain && ((s.core_type() != ScalarType::Str && typed_text(&s.value)) || is_plain_safe_text(&s.value)) {
            Value::Plain(s.value.clone())
        } else if s.plain && s.core_type() == ScalarType::Null {
            // An empty plain scalar (`key:`) is null.
            Value::Plain(String::new())
        } else {
            Value::Str(s.value.clone())
        }
    }

    /// A list of strings.
    pub fn strs<I: IntoIterator<Item = S>, S: Into<String>>(items: I) -> Value {
        Value::Seq(items.into_iter().map(|s| Value::Str(s.into())).collect())
    }

    /// The text of a scalar (plain or string), `None` for collections.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Value::Str(s) | Value::Plain(s) => Some(s),
            _ => None,
        }
    }

    /// The entry `key` of a mapping.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Sets `key` in a mapping (replacing in place, or appending). No effect on other values.
    pub fn set(&mut self, key: &str, value: Value) {
        if let Value::Map(entries) = self {
            match entries.iter_mut().find(|(k, _)| k == key) {
                Some((_, v)) => *v = value,
                None => entries.push((key.to_owned(), value)),
            }
        }
    }

    /// Removes `key` from a mapping, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        if let Value::Map(entries) = self {
            let i = entries.iter().position(|(k, _)| k == key)?;
            return Some(entries.remove(i).1);
        }
        None
    }

    /// Whether the value is an empty mapping or sequence.
    pub fn is_empty_collection(&self) -> bool {
        matches!(self, Value::Map(e) if e.is_empty()) || matches!(self, Value::Seq(s) if s.is_empty())
    }

    /// A JSON value: strings stay strings, numbers, booleans and null become plain scalars.
    pub fn from_json(j: &serde_json::Value) -> Value {
        match j {
            serde_json::Value::String(s) => Value::Str(s.clone()),
            serde_json::Value::Null => Value::Plain("null".into()),
            serde_json::Value::Bool(b) => Value::Plain(b.to_string()),
            serde_json::Value::Number(n) => Value::Plain(n.to_string()),
            serde_json::Value::Array(a) => Value::Seq(a.iter().map(Value::from_json).collect()),
            serde_json::Value::Object(o) => {
                Value::Map(o.iter().map(|(k, v)| (k.clone(), Value::from_json(v))).collect())
            }
        }
    }

    /// The value as JSON (strings for every scalar but the plain typed ones, which keep
    /// their YAML 1.2 core type).
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Str(s) => serde_json::Value::String(s.clone()),
            Value::Plain(p) => Scalar {
                value: p.clone(),
                plain: true,
            }
            .to_json_typed(),
            Value::Seq(items) => items.iter().map(Value::to_json).collect(),
            Value::Map(entries) => entries
                .iter()
                .map(|(k, v)| (k.clone(), v.to_json()))
                .collect::<serde_json::Map<_, _>>()
                .into(),
        }
    }
}

/// Renders a top-level mapping as frontmatter text (without the `---` fences), each line
/// ended by `eol` (`"\n"` or `"\r\n"`).
pub fn render_mapping(entries: &[(String, Value)], eol: &str) -> String {
    let mut lines = Vec::new();
    for (k, v) in entries {
        entry_lines(k, v, 0, &mut lines);
    }
    let mut out = String::new();
    for l in lines {
        out.push_str(&l);
        out.push_str(eol);
    }
    out
}

fn entry_lines(key: &str, value: &Value, indent: usize, out: &mut Vec<String>) {
    let pad = " ".repeat(indent);
    let key = scalar_text(key);
    match value {
        Value::Map(e) if !e.is_empty() => {
            out.push(format!("{pad}{key}:"));
            for (k, v) in e {
                entry_lines(k, v, indent + 2, out);
            }
        }
        Value::Seq(items) if !items.is_empty() => {
            out.push(format!("{pad}{key}:"));
            for item in items {
                item_lines(item, indent + 2, out);
            }
        }
        Value::Plain(p) if p.is_empty() => out.push(format!("{pad}{key}:")),
        other => out.push(format!("{pad}{key}: {}", inline(other))),
    }
}

fn item_lines(item: &Value, indent: usize, out: &mut Vec<String>) {
    let pad = " ".repeat(indent);
    let nested = match item {
        Value::Map(e) if !e.is_empty() => {
            let mut lines = Vec::new();
            for (k, v) in e {
                entry_lines(k, v, indent + 2, &mut lines);
            }
            lines
        }
        Value::Seq(s) if !s.is_empty() => {
            let mut lines = Vec::new();
            for v in s {
                item_lines(v, indent + 2, &mut lines);
            }
            lines
        }
        other => {
            out.push(format!("{pad}- {}", inline(other)));
            return;
        }
    };
    // The first nested line starts at `indent + 2`: put the dash in front of it.
    let inner = " ".repeat(indent + 2);
    for (i, l) in nested.into_iter().enumerate() {
        if i == 0 {
            out.push(format!("{pad}- {}", l.strip_prefix(&inner).unwrap_or(&l)));
        } else {
            out.push(l);
        }
    }
}

fn inline(v: &Value) -> String {
    match v {
        Value::Str(s) => scalar_text(s),
        Value::Plain(p) if p.is_empty() => "null".to_owned(),
        Value::Plain(p) => p.clone(),
        Value::Map(_) => "{}".to_owned(),
        Value::Seq(_) => "[]".to_owned(),
    }
}

/// Whether `s` can be written as a plain scalar: a conservative character set, no leading
/// or trailing space, no indicator at the start, no `: ` / ` #`, no `---`.
fn is_plain_safe_text(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    let last = s.chars().last().unwrap_or(first);
    (first.is_alphanumeric() || first == '.' || first == '/' || first == '~' || first == '_' || first == '(')
        && !last.is_whitespace()
        && !s.contains("---")
        && s.chars().all(|c| {
            (c.is_alphanumeric() && !crate::skill::validate::is_hidden(c))
                || matches!(
                    c,
                    ' ' | '-'
                        | '_'
                        | '.'
                        | '/'
                        | '+'
                        | '@'
                        | '('
                        | ')'
                        | '='
                        | '<'
                        | '>'
                        | '~'
                        | '^'
                        | '$'
                        | ';'
                        | ','
                        | '&'
                )
        })
}

/// A string as YAML: plain when it is safe and every resolver reads it as a string, else
/// double-quoted.
pub fn scalar_text(s: &str) -> String {
    let probe = Scalar {
        value: s.to_owned(),
        plain: true,
    };
    if is_plain_safe_text(s) && probe.core_type() == ScalarType::Str && probe.pyyaml_type().is_none() {
        s.to_owned()
    } else {
        double_quoted(s)
    }
}

/// `s` as a YAML double-quoted scalar. Control and line-separator characters are escaped;
/// a third `-` in a row becomes `\x2d` so that the text never contains `---`.
pub fn double_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    let mut dashes = 0;
    for c in s.chars() {
        if c == '-' {
            dashes += 1;
            if dashes == 3 {
                out.push_str("\\x2d");
                dashes = 0;
            } else {
                out.push('-');
            }
            continue;
        }
        dashes = 0;
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{2028}' | '\u{2029}' | '\u{85}' | '\u{feff}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if (c as u32) < 0x20 || (0x7f..=0x9f).contains(&(c as u32)) => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Source;
    use crate::skill::yaml;

    fn reload(text: &str) -> Node {
        let src = Source::new("t", text);
        let loaded = yaml::load(&src, 0..text.len());
        assert!(loaded.diagnostics.is_empty(), "{text}\n{:?}", loaded.diagnostics);
        loaded.root.expect("loads")
    }

    #[test]
    fn strings_round_trip_through_the_loader() {
        let tricky = [
            "plain words",
            "yes",
            "1.0",
            "2024-01-01",
            "a: b",
            "x #y",
            "- item",
            "",
            " lead",
            "multi\nline\r\n",
            "quote \" and \\ back",
            "old --- style ---- x",
            "tab\there",
            "null",
            "~",
            "@at",
            "{b}",
            "café ✓",
            "\u{7}bell",
        ];
        for s in tricky {
            let text = render_mapping(&[("k".into(), Value::Str(s.into()))], "\n");
            assert!(!text.contains("---"), "{text}");
            let root = reload(&text);
            let v = root.get_value("k").and_then(Node::as_scalar).expect("scalar");
            assert_eq!(v.value, s, "{text}");
            assert_eq!(v.core_type(), ScalarType::Str, "{text}");
            assert!(v.pyyaml_type().is_none(), "{text}");
        }
    }

    #[test]
    fn nested_block_structures() {
        let v = vec![
            ("name".to_owned(), Value::Str("a".into())),
            (
                "metadata".to_owned(),
                Value::Map(vec![
                    ("flag".into(), Value::Plain("true".into())),
                    ("empty".into(), Value::Map(vec![])),
                    (
                        "list".into(),
                        Value::Seq(vec![
                            Value::Map(vec![
                                ("kind".into(), Value::Str("node".into())),
                                ("bins".into(), Value::strs(["x", "y"])),
                            ]),
                            Value::Seq(vec![Value::Str("a".into()), Value::Str("b".into())]),
                            Value::Str("c".into()),
                        ]),
                    ),
                ]),
            ),
        ];
        let text = render_mapping(&v, "\n");
        assert_eq!(
            text,
            "name: a\nmetadata:\n  flag: true\n  empty: {}\n  list:\n    - kind: node\n      bins:\n        - x\n        - y\n    - - a\n      - b\n    - c\n"
        );
        let root = reload(&text);
        let Value::Map(back) = Value::from_node(&root) else {
            panic!("a mapping")
        };
        assert_eq!(render_mapping(&back, "\n"), text, "the tree reads back as written");
        // Plain scalars stay plain, whatever their type under YAML 1.1.
        let root = reload("a: yes\nb: 2024-01-01\nc: \"yes\"\nd: 1.0\n");
        let Value::Map(back) = Value::from_node(&root) else {
            panic!("a mapping")
        };
        assert_eq!(
            render_mapping(&back, "\n"),
            "a: yes\nb: 2024-01-01\nc: \"yes\"\nd: 1.0\n"
        );
    }
}

//! `allowed-tools`: `Tool` and `Tool(pattern)` tokens from a string or a list.
//!
//! The specification gives a space-separated string (`Bash(git:*) Read`); real skills also use
//! commas and YAML lists. Spaces inside parentheses belong to the pattern
//! (`Bash(git add:*)`). The tokens are recorded in the manifest; they never grant anything.

use std::fmt;

use crate::skill::yaml::{Node, NodeKind};

/// One `allowed-tools` entry.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ToolToken {
    /// The tool name (`Bash`, `Read`, `mcp__github__search`).
    pub tool: String,
    /// The pattern between parentheses, when present (`git:*`).
    pub pattern: Option<String>,
}

impl fmt::Display for ToolToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.pattern {
            Some(p) => write!(f, "{}({p})", self.tool),
            None => f.write_str(&self.tool),
        }
    }
}

/// Splits an `allowed-tools` string into raw entries on spaces and commas outside parentheses.
pub fn split_entries(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = None;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        let sep = depth == 0 && (c.is_whitespace() || c == ',');
        match (sep, start) {
            (true, Some(st)) => {
                out.push(&s[st..i]);
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(st) = start {
        out.push(&s[st..]);
    }
    out
}

/// The standard's spelling of an `allowed-tools` value written as a YAML list of strings or
/// as a string with commas between entries: the entries joined by single spaces
/// (`Read Bash(git:*)`). `None` when the value already has that form, is empty, or has an
/// entry that does not parse (the spelling would then be a guess).
pub fn standard_spelling(node: &Node) -> Option<String> {
    let entries: Vec<&str> = match &node.kind {
        NodeKind::Seq { items, .. } => {
            let mut out = Vec::new();
            for item in items {
                out.extend(split_entries(item.as_str()?));
            }
            out
        }
        NodeKind::Scalar(s) if has_separator_comma(&s.value) => split_entries(&s.value),
        _ => return None,
    };
    if entries.is_empty() || entries.iter().any(|e| parse_token(e).is_err()) {
        return None;
    }
    Some(entries.join(" "))
}

/// Whether a comma outside parentheses separates entries.
fn has_separator_comma(s: &str) -> bool {
    let mut depth = 0usize;
    s.chars().any(|c| {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        c == ',' && depth == 0
    })
}

/// Parses one entry. The error explains what is wrong with it.
pub fn parse_token(entry: &str) -> Result<ToolToken, String> {
    let entry = entry.trim();
    let (tool, pattern) = match entry.find('(') {
        Some(open) => {
            let Some(inner) = entry[open + 1..].strip_suffix(')') else {
                return Err(format!("`{entry}` has an unclosed `(`"));
            };
            (&entry[..open], Some(inner.to_owned()))
        }
        None => {
            if entry.contains(')') {
                return Err(format!("`{entry}` has a `)` without `(`"));
            }
            (entry, None)
        }
    };
    let valid_name = tool.starts_with(|c: char| c.is_ascii_alphabetic())
        && tool
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '*'));
    if !valid_name {
        return Err(format!("`{tool}` is not a tool name"));
    }
    Ok(ToolToken {
        tool: tool.to_owned(),
        pattern,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spaces_inside_parentheses_stay() {
        let entries = split_entries("Bash(git add:*) Read, Write(src/**)");
        assert_eq!(entries, vec!["Bash(git add:*)", "Read", "Write(src/**)"]);
        let t = parse_token(entries[0]).expect("valid");
        assert_eq!((t.tool.as_str(), t.pattern.as_deref()), ("Bash", Some("git add:*")));
        assert_eq!(t.to_string(), "Bash(git add:*)");
    }

    #[test]
    fn standard_spelling_joins_with_spaces() {
        let node = |v: &str| Node {
            kind: NodeKind::Scalar(crate::skill::yaml::Scalar {
                value: v.into(),
                plain: true,
            }),
            span: 0..0,
        };
        assert_eq!(
            standard_spelling(&node("Read, Bash(a,b)")).as_deref(),
            Some("Read Bash(a,b)")
        );
        assert_eq!(standard_spelling(&node("Read Bash(a,b)")), None);
        assert_eq!(standard_spelling(&node("Read, Bash(")), None);
        let list = Node {
            kind: NodeKind::Seq {
                items: vec![node("Read"), node("Bash(git add:*)")],
                flow: false,
            },
            span: 0..0,
        };
        assert_eq!(standard_spelling(&list).as_deref(), Some("Read Bash(git add:*)"));
    }

    #[test]
    fn malformed_entries() {
        assert!(parse_token("Bash(git").is_err());
        assert!(parse_token("Bash)").is_err());
        assert!(parse_token("(x)").is_err());
        assert!(parse_token("mcp__github__search").is_ok());
    }
}

//! Arguments: the words after the sub-command read as flags and positionals, with their types
//! and optionality, merged over every invocation.

use std::collections::BTreeMap;

use super::model::Arg;
use super::shell::Word;
use crate::skill::gaia::ParamType;

/// Words that read as values, not commands, after the first: ids and slugs such as
/// `cora-web-1`, `cnv_abc123`, `grp_xxx` (an underscore, or a digit with a separator).
pub(super) fn looks_like_value(t: &str) -> bool {
    t.contains('_') || (t.chars().any(|c| c.is_ascii_digit()) && t.contains('-'))
}

/// A plain lowercase word that can be part of a sub-command (`search`, `create-folder`).
pub(super) fn is_command_word(w: &Word) -> bool {
    let t = w.text.as_str();
    !w.quoted
        && t.len() <= 32
        && t.starts_with(|c: char| c.is_ascii_lowercase())
        && t.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        && !t.ends_with('-')
        && !t.contains("--")
}

fn is_placeholder(t: &str) -> Option<String> {
    let inner = t
        .strip_prefix('<')
        .and_then(|x| x.strip_suffix('>'))
        .or_else(|| t.strip_prefix('{').and_then(|x| x.strip_suffix('}')))
        .or_else(|| t.strip_prefix('[').and_then(|x| x.strip_suffix(']')));
    if let Some(i) = inner.filter(|i| {
        !i.is_empty()
            && i.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | ' ' | '|'))
    }) {
        return Some(i.to_owned());
    }
    // UPPER_CASE tokens such as MESSAGE_ID, FILE_ID, N.
    let upper = !t.is_empty()
        && t.starts_with(|c: char| c.is_ascii_uppercase())
        && t.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    upper.then(|| t.to_owned())
}

/// `calendarId` / `MESSAGE_ID` / `file-name` → `calendar_id` / `message_id` / `file_name`.
pub fn snake_case(s: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in s.chars() {
        if c.is_ascii_uppercase() {
            if prev_lower && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = false;
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        } else {
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            prev_lower = false;
        }
    }
    let out = out.trim_matches('_').to_owned();
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        format!("arg_{out}")
    } else {
        out
    }
}

/// Names of placeholders that stand for integers (`--max N`, `--limit <count>`).
const INTEGER_HINTS: &[&str] = &[
    "n", "num", "number", "count", "limit", "max", "min", "int", "integer", "size", "port", "days", "hours", "minutes",
    "seconds", "secs", "ms", "timeout", "page", "offset", "top", "k", "depth", "retries", "year", "width", "height",
];

/// The type a written value suggests.
fn value_type(w: &Word) -> ParamType {
    let t = w.text.trim();
    if let Some(p) = (!w.quoted).then(|| is_placeholder(t)).flatten() {
        let name = snake_case(&p);
        return if INTEGER_HINTS.contains(&name.as_str()) || name.ends_with("_count") || name.starts_with("num_") {
            ParamType::Integer
        } else {
            ParamType::String
        };
    }
    if !w.quoted {
        if t.parse::<i64>().is_ok() {
            return ParamType::Integer;
        }
        if t.contains('.') && t.parse::<f64>().is_ok_and(f64::is_finite) {
            return ParamType::Number;
        }
        if t == "true" || t == "false" {
            return ParamType::Boolean;
        }
    }
    if t.starts_with('[') && serde_json::from_str::<Vec<serde_json::Value>>(t).is_ok() {
        return ParamType::Array;
    }
    if t.starts_with('{') && serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(t).is_ok() {
        return ParamType::Object;
    }
    ParamType::String
}

/// The type that accepts both.
fn widen(a: ParamType, b: ParamType) -> ParamType {
    use ParamType::*;
    match (a, b) {
        (x, y) if x == y => x,
        (Integer, Number) | (Number, Integer) => Number,
        _ => String,
    }
}

fn is_flag(t: &str) -> bool {
    t.len() > 1 && t.starts_with('-') && !t[1..].starts_with(|c: char| c.is_ascii_digit() || c == '.')
}

/// A flag as written, its value, and whether it was inside `[...]` (optional).
type FlagUse = (String, Option<Word>, bool);

/// Removes usage-syntax brackets: `[--max N]` marks its contents optional, `[name]` is an
/// optional placeholder, `[options]` and `...` are dropped. Returns (word, optional).
fn unbracket(rest: &[Word]) -> Vec<(Word, bool)> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    for w in rest {
        if w.quoted {
            out.push((w.clone(), depth > 0));
            continue;
        }
        let mut t = w.text.as_str();
        let opens = t.chars().take_while(|c| *c == '[').count();
        t = &t[opens..];
        let closes = t.chars().rev().take_while(|c| *c == ']').count();
        t = &t[..t.len() - closes];
        let optional = depth > 0 || opens > 0;
        depth = (depth + opens).saturating_sub(closes);
        let lower = t.to_ascii_lowercase();
        if t.is_empty()
            || t.chars().all(|c| c == '.')
            || matches!(lower.as_str(), "options" | "flags" | "args" | "arguments")
        {
            continue;
        }
        let t = t.trim_end_matches("...");
        // `[name]` alone is an optional placeholder.
        let text = if opens > 0 && closes > 0 && !t.starts_with('-') && is_placeholder(&format!("<{t}>")).is_some() {
            format!("<{t}>")
        } else {
            t.to_owned()
        };
        out.push((Word { text, quoted: false }, optional));
    }
    out
}

/// Parses the words after the sub-command into flags and positionals (with optionality).
fn parse_args(rest: &[Word]) -> (Vec<FlagUse>, Vec<(Word, bool)>) {
    let words = unbracket(rest);
    let mut flags = Vec::new();
    let mut positionals = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let (w, optional) = &words[i];
        if !w.quoted && is_flag(&w.text) && w.text != "--" {
            if let Some((f, v)) = w.text.split_once('=') {
                flags.push((
                    f.to_owned(),
                    Some(Word {
                        text: v.to_owned(),
                        quoted: w.quoted,
                    }),
                    *optional,
                ));
                i += 1;
                continue;
            }
            let value = words
                .get(i + 1)
                .filter(|(n, _)| n.quoted || !is_flag(&n.text))
                .map(|(n, _)| n.clone());
            i += if value.is_some() { 2 } else { 1 };
            flags.push((w.text.clone(), value, *optional));
        } else {
            positionals.push((w.clone(), *optional));
            i += 1;
        }
    }
    (flags, positionals)
}

/// What is known of one argument while merging invocations.
struct Seen {
    ty: ParamType,
    count: usize,
    optional: bool,
    order: usize,
    name: Option<String>,
}

/// The arguments of one sub-command from the words after it in each of its invocations.
pub(super) fn merge_args(invs: &[&[Word]]) -> Vec<Arg> {
    let total = invs.len();
    let mut flags: BTreeMap<String, Seen> = BTreeMap::new();
    let mut positionals: Vec<Seen> = Vec::new();
    for rest in invs {
        let (fl, pos) = parse_args(rest);
        let mut this_inv: Vec<&str> = Vec::new();
        for (flag, value, optional) in &fl {
            let ty = value.as_ref().map(value_type).unwrap_or(ParamType::Boolean);
            let order = flags.len();
            let e = flags.entry(flag.clone()).or_insert(Seen {
                ty,
                count: 0,
                optional: false,
                order,
                name: None,
            });
            e.ty = if e.count == 0 { ty } else { widen(e.ty, ty) };
            e.optional |= *optional;
            if !this_inv.contains(&flag.as_str()) {
                e.count += 1;
                this_inv.push(flag);
            }
        }
        for (i, (w, optional)) in pos.iter().enumerate() {
            let name = (!w.quoted)
                .then(|| is_placeholder(&w.text))
                .flatten()
                .map(|p| snake_case(&p))
                .filter(|n| !n.is_empty());
            match positionals.get_mut(i) {
                None => positionals.push(Seen {
                    ty: value_type(w),
                    count: 1,
                    optional: *optional,
                    order: i,
                    name,
                }),
                Some(p) => {
                    p.ty = widen(p.ty, value_type(w));
                    p.count += 1;
                    p.optional |= *optional;
                    if p.name.is_none() {
                        p.name = name;
                    }
                }
            }
        }
    }
    let mut args = Vec::new();
    let mut used: Vec<String> = Vec::new();
    for (i, p) in positionals.into_iter().enumerate() {
        let mut name = p.name.unwrap_or_else(|| format!("arg{i}"));
        if used.contains(&name) {
            name = format!("{name}_{i}");
        }
        used.push(name.clone());
        let required = p.count == total && !p.optional;
        args.push(Arg {
            name,
            ty: p.ty,
            required,
            flag: None,
            position: Some(i),
            description: None,
            default: None,
        });
    }
    let mut by_order: Vec<(String, Seen)> = flags.into_iter().collect();
    by_order.sort_by_key(|(_, s)| s.order);
    for (flag, s) in by_order {
        let mut name = snake_case(flag.trim_start_matches('-'));
        if name.is_empty() {
            continue;
        }
        if used.contains(&name) {
            name = format!("{name}_flag");
        }
        used.push(name.clone());
        let required = s.count == total && !s.optional && s.ty != ParamType::Boolean;
        args.push(Arg {
            name,
            ty: s.ty,
            required,
            flag: Some(flag),
            position: None,
            description: None,
            default: None,
        });
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::shell;

    #[test]
    fn snake_case_names() {
        assert_eq!(snake_case("calendarId"), "calendar_id");
        assert_eq!(snake_case("MESSAGE_ID"), "message_id");
        assert_eq!(snake_case("add-labels"), "add_labels");
        assert_eq!(snake_case("2fa"), "arg_2fa");
    }

    #[test]
    fn usage_brackets_mark_arguments_optional() {
        let words = |line: &str| -> Vec<Word> {
            shell::simple_commands(shell::tokenize(line))
                .into_iter()
                .next()
                .unwrap_or_default()
        };
        let a = words("<query> [--max N] [--tag <tag>] [options]");
        let args = merge_args(&[a.as_slice()]);
        let got: Vec<(String, &str, bool)> = args
            .iter()
            .map(|x| (x.name.clone(), x.ty.as_str(), x.required))
            .collect();
        assert_eq!(
            got,
            vec![
                ("query".into(), "string", true),
                ("max".into(), "integer", false),
                ("tag".into(), "string", false)
            ]
        );
        let b = words("[file]");
        let args = merge_args(&[b.as_slice()]);
        assert_eq!((args[0].name.as_str(), args[0].required), ("file", false));
    }

    #[test]
    fn value_types() {
        let w = |t: &str, q: bool| Word {
            text: t.into(),
            quoted: q,
        };
        assert_eq!(value_type(&w("10", false)), ParamType::Integer);
        assert_eq!(value_type(&w("10", true)), ParamType::String);
        assert_eq!(value_type(&w("N", false)), ParamType::Integer);
        assert_eq!(value_type(&w("<iso>", false)), ParamType::String);
        assert_eq!(value_type(&w("[[\"a\"]]", true)), ParamType::Array);
        assert_eq!(value_type(&w("user@example.com", false)), ParamType::String);
    }
}

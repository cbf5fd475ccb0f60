//! Shell words: quotes, `$'…'`, variables and their environment reads, command
//! substitution (whose output is folded by [`super::commands`]), and `printf`.

use tree_sitter::Node;

use super::Sh;
use crate::scan::code::effects::env_read;
use crate::scan::code::engine::{MAX_DEPTH, is_epoch_like};
use crate::scan::code::value::{Taint, Val, taint, unescape};

impl<'t> Sh<'t, '_> {
    /// A word's value without recording events (for [`Sh::resolve`]).
    pub(super) fn word_quiet(&mut self, n: Node<'t>) -> Val {
        let saved = self.e.facts.events.len();
        let v = self.word(n);
        self.e.facts.events.truncate(saved);
        v
    }

    /// The value of a word.
    pub(super) fn word(&mut self, n: Node<'t>) -> Val {
        if self.e.depth > MAX_DEPTH || !self.e.tick() {
            return Val::unknown();
        }
        self.e.depth += 1;
        let v = self.word_inner(n);
        self.e.depth -= 1;
        v
    }

    pub(super) fn word_inner(&mut self, n: Node<'t>) -> Val {
        match n.kind() {
            "word" | "command_name" if n.named_child_count() == 0 => {
                let t = self.e.text(n);
                if t.contains('\\') {
                    Val::folded(t.replace('\\', ""), "escape sequences")
                } else {
                    Val::str(t)
                }
            }
            "command_name" => n.named_child(0).map(|x| self.word(x)).unwrap_or_default(),
            "number" => {
                let t = self.e.text(n);
                match t.parse::<i64>() {
                    Ok(x) if is_epoch_like(x) => Val::num(x).with(taint::DATE_CONST),
                    Ok(x) => Val::num(x),
                    Err(_) => Val::str(t),
                }
            }
            "raw_string" => Val::str(self.e.text(n).trim_start_matches('\'').trim_end_matches('\'')),
            "ansi_c_string" => {
                let t = self.e.text(n);
                let body = t.get(2..t.len().saturating_sub(1)).unwrap_or_default();
                let u = unescape(body);
                if u == body {
                    Val::str(u)
                } else {
                    Val::folded(u, "ANSI-C quoting").with(taint::OBFUSCATED)
                }
            }
            "string" => {
                let mut parts = Vec::new();
                let mut c = n.walk();
                let kids: Vec<Node<'t>> = n.named_children(&mut c).collect();
                if kids.is_empty() {
                    let t = self.e.text(n);
                    return Val::str(t.trim_matches('"'));
                }
                // Text between the named parts (spaces inside the quotes) is kept.
                let mut pos = n.start_byte() + 1;
                for k in kids {
                    let gap = self.e.src.get(pos..k.start_byte()).unwrap_or_default();
                    if !gap.is_empty() {
                        parts.push(Val::str(gap));
                    }
                    parts.push(match k.kind() {
                        "string_content" => Val::str(self.e.text(k)),
                        _ => self.word(k),
                    });
                    pos = k.end_byte();
                }
                let tail = self.e.src.get(pos..n.end_byte().saturating_sub(1)).unwrap_or_default();
                if !tail.is_empty() {
                    parts.push(Val::str(tail));
                }
                join_words(&parts)
            }
            "concatenation" => {
                let mut c = n.walk();
                let kids: Vec<Node<'t>> = n.named_children(&mut c).collect();
                let parts: Vec<Val> = kids.into_iter().map(|k| self.word(k)).collect();
                let mut v = join_words(&parts);
                if parts.len() > 1 && v.as_str().is_some() && v.how.is_none() {
                    v.how = Some("concatenation");
                }
                v
            }
            "simple_expansion" | "expansion" => self.expansion(n),
            "command_substitution" | "process_substitution" => {
                let mut out = Val::unknown();
                let mut c = n.walk();
                let kids: Vec<Node<'t>> = n.named_children(&mut c).collect();
                for k in kids {
                    out = self.run(k, None);
                }
                if out.how.is_none() && out.as_str().is_some() {
                    out.how = Some("command substitution");
                }
                out
            }
            _ => Val::tainted(Taint::default()),
        }
    }

    pub(super) fn expansion(&mut self, n: Node<'t>) -> Val {
        let name_node = {
            let mut c = n.walk();
            let kids: Vec<Node<'t>> = n.named_children(&mut c).collect();
            kids.into_iter()
                .find(|k| matches!(k.kind(), "variable_name" | "special_variable_name"))
        };
        let Some(name) = name_node.map(|x| self.e.text(x)) else {
            return Val::unknown();
        };
        let mut v = match self.e.lookup(name) {
            Some(v) => v.clone(),
            None => {
                let mut v = env_read(&mut self.e, name, n.start_byte());
                if v.origin.is_none() && v.as_str().is_none() {
                    v.origin = Some(format!("${name}"));
                }
                v
            }
        };
        if v.as_str().is_some() && v.how.is_none() {
            v.how = Some("variable expansion");
        }
        v
    }
}

/// Words joined as the shell joins adjacent parts (no separator).
pub(super) fn join_words(parts: &[Val]) -> Val {
    let mut out = String::new();
    let mut t = Taint::default();
    let mut how = None;
    for p in parts {
        t.join(&p.deep_taint());
        how = how.or(p.how);
        match p.text() {
            Some(s) => out.push_str(&s),
            None => {
                let mut v = Val::tainted(t);
                v.origin = p.origin.clone();
                return v;
            }
        }
    }
    let mut v = match how {
        Some(h) => Val::folded(out, h),
        None => Val::str(out),
    };
    v.taint = t;
    v
}

/// `printf FORMAT ARGS…`: escapes of the format and `%s`/`%b`/`%d`/`%c`.
pub(super) fn printf(args: &[Val]) -> Val {
    let Some(fmt) = args.first().and_then(|a| a.as_str()) else {
        return Val::tainted(args.first().map(|a| a.deep_taint()).unwrap_or_default());
    };
    let fmt = unescape(fmt);
    let mut rest = args.iter().skip(1);
    let mut out = String::new();
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('%') => out.push('%'),
            Some('s' | 'd' | 'i') => match rest.next().and_then(Val::text) {
                Some(s) => out.push_str(&s),
                None => return Val::unknown(),
            },
            Some('b') => match rest.next().and_then(Val::text) {
                Some(s) => out.push_str(&unescape(&s)),
                None => return Val::unknown(),
            },
            _ => return Val::unknown(),
        }
    }
    // Anything not plain (escapes, arguments) is a folded value.
    let plain = args.len() == 1 && args.first().and_then(|a| a.as_str()) == Some(out.as_str());
    if plain {
        Val::str(out)
    } else {
        Val::folded(out, "printf").with(taint::OBFUSCATED)
    }
}

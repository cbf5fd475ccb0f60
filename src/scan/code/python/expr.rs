//! Python expressions: literals with their prefixes and escapes, f-strings, operators,
//! slices, containers, comprehensions over known lists, and calls (local functions through
//! their summaries, everything else through [`super::calls`]).

use tree_sitter::Node;

use super::{Py, calls};
use crate::scan::code::engine::{MAX_DEPTH, is_date_text, is_epoch_like};
use crate::scan::code::ops::{binary, concat};
use crate::scan::code::value::{MAX_LIST, Shape, Taint, Val, taint, unescape};

impl<'t> Py<'t> {
    /// Evaluates an expression.
    pub(super) fn expr(&mut self, n: Node<'t>) -> Val {
        if self.e.depth > MAX_DEPTH || !self.e.tick() {
            return Val::unknown();
        }
        self.e.depth += 1;
        let v = self.expr_inner(n);
        self.e.depth -= 1;
        v
    }

    pub(super) fn expr_inner(&mut self, n: Node<'t>) -> Val {
        match n.kind() {
            "string" => self.string(n),
            "concatenated_string" => {
                let mut c = n.walk();
                let parts: Vec<Node<'t>> = n.named_children(&mut c).collect();
                let vals: Vec<Val> = parts.into_iter().map(|p| self.string(p)).collect();
                concat(&vals, "concatenation")
            }
            "integer" => {
                let t = self.e.text(n).replace('_', "").to_ascii_lowercase();
                let parsed = if let Some(h) = t.strip_prefix("0x") {
                    i64::from_str_radix(h, 16).ok()
                } else if let Some(o) = t.strip_prefix("0o") {
                    i64::from_str_radix(o, 8).ok()
                } else if let Some(b) = t.strip_prefix("0b") {
                    i64::from_str_radix(b, 2).ok()
                } else {
                    t.parse().ok()
                };
                match parsed {
                    Some(x) if is_epoch_like(x) => Val::num(x).with(taint::DATE_CONST),
                    Some(x) => Val::num(x),
                    None => Val::unknown(),
                }
            }
            "identifier" => {
                let name = self.e.text(n);
                match self.e.lookup(name) {
                    Some(v) => v.clone(),
                    None => match self.e.by_name.get(name) {
                        Some(&i) => Val {
                            shape: Shape::Func(i),
                            ..Val::default()
                        },
                        None => calls::api_val(name),
                    },
                }
            }
            "attribute" => {
                let obj = n
                    .child_by_field_name("object")
                    .map(|o| self.expr(o))
                    .unwrap_or_default();
                let attr = n
                    .child_by_field_name("attribute")
                    .map(|a| self.e.text(a))
                    .unwrap_or_default();
                calls::attribute(&mut self.e, obj, attr, n)
            }
            "subscript" => {
                let obj = n.child_by_field_name("value").map(|o| self.expr(o)).unwrap_or_default();
                let idx_node = n.child_by_field_name("subscript");
                let v = match idx_node {
                    Some(s) if s.kind() == "slice" => self.slice(obj, s),
                    Some(s) => {
                        let idx = self.expr(s);
                        calls::subscript(&mut self.e, obj, idx, n)
                    }
                    None => Val::unknown(),
                };
                self.e.record_folded(n.start_byte(), &v);
                v
            }
            "binary_operator" => {
                let l = n.child_by_field_name("left").map(|x| self.expr(x)).unwrap_or_default();
                let r = n.child_by_field_name("right").map(|x| self.expr(x)).unwrap_or_default();
                let op = n
                    .child_by_field_name("operator")
                    .map(|o| self.e.text(o))
                    .unwrap_or_default();
                let v = binary(op, l, r);
                self.e.record_folded(n.start_byte(), &v);
                v
            }
            "unary_operator" => {
                let v = n
                    .child_by_field_name("argument")
                    .map(|x| self.expr(x))
                    .unwrap_or_default();
                let op = n
                    .child_by_field_name("operator")
                    .map(|o| self.e.text(o))
                    .unwrap_or_default();
                match (op, v.as_num()) {
                    ("-", Some(x)) => Val::num(-x),
                    ("~", Some(x)) => Val::num(!x),
                    _ => Val::tainted(v.deep_taint()),
                }
            }
            _ => self.expr_more(n),
        }
    }

    /// The rest of [`Py::expr_inner`]: operators, containers, calls, assignments.
    pub(super) fn expr_more(&mut self, n: Node<'t>) -> Val {
        match n.kind() {
            "comparison_operator" | "boolean_operator" | "not_operator" => {
                let mut t = Taint::default();
                let mut c = n.walk();
                let kids: Vec<Node<'t>> = n.named_children(&mut c).collect();
                for k in kids {
                    let v = self.expr(k);
                    t.join(&v.deep_taint());
                }
                Val::tainted(t)
            }
            "conditional_expression" => {
                let mut c = n.walk();
                let kids: Vec<Node<'t>> = n.named_children(&mut c).collect();
                let vals: Vec<Val> = kids.into_iter().map(|k| self.expr(k)).collect();
                let mut first = vals.first().cloned().unwrap_or_default();
                vals.iter().skip(1).for_each(|v| first.taint.join(&v.deep_taint()));
                first
            }
            "parenthesized_expression" | "await" | "expression_list" if n.named_child_count() == 1 => {
                n.named_child(0).map(|x| self.expr(x)).unwrap_or_default()
            }
            "list" | "tuple" | "set" | "expression_list" => {
                let mut c = n.walk();
                let kids: Vec<Node<'t>> = n.named_children(&mut c).collect();
                let mut items = Vec::new();
                for k in kids.into_iter().take(MAX_LIST) {
                    if k.kind() == "list_splat" {
                        let v = k.named_child(0).map(|x| self.expr(x)).unwrap_or_default();
                        match v.shape {
                            Shape::List(more) => items.extend(more),
                            _ => items.push(Val::tainted(v.taint)),
                        }
                    } else {
                        items.push(self.expr(k));
                    }
                }
                Val {
                    shape: Shape::List(items),
                    ..Val::default()
                }
            }
            "dictionary" => {
                let mut c = n.walk();
                let kids: Vec<Node<'t>> = n.named_children(&mut c).collect();
                let mut items = Vec::new();
                for k in kids.into_iter().take(MAX_LIST) {
                    if k.kind() == "pair" {
                        let key = k.child_by_field_name("key").map(|x| self.expr(x)).unwrap_or_default();
                        let val = k.child_by_field_name("value").map(|x| self.expr(x)).unwrap_or_default();
                        let key = key.text().unwrap_or_else(|| self.e.text(k).to_owned());
                        items.push((key, val));
                    }
                }
                Val {
                    shape: Shape::Dict(items),
                    ..Val::default()
                }
            }
            "list_comprehension" | "generator_expression" | "set_comprehension" => self.comprehension(n),
            "call" => self.call(n),
            "assignment" => {
                let v = n.child_by_field_name("right").map(|r| self.expr(r)).unwrap_or_default();
                if let Some(l) = n.child_by_field_name("left") {
                    self.bind(l, v.clone());
                }
                v
            }
            "augmented_assignment" => {
                let l = n.child_by_field_name("left");
                let old = l.map(|x| self.expr(x)).unwrap_or_default();
                let r = n.child_by_field_name("right").map(|x| self.expr(x)).unwrap_or_default();
                let op = n
                    .child_by_field_name("operator")
                    .map(|o| self.e.text(o))
                    .unwrap_or_default();
                let v = binary(op.trim_end_matches('='), old, r);
                self.e.record_folded(n.start_byte(), &v);
                if let Some(l) = l {
                    self.bind(l, v.clone());
                }
                v
            }
            "named_expression" => {
                let v = n.child_by_field_name("value").map(|r| self.expr(r)).unwrap_or_default();
                if let Some(l) = n.child_by_field_name("name") {
                    self.bind(l, v.clone());
                }
                v
            }
            "lambda" => Val::unknown(),
            _ => {
                // Unknown expressions: unknown, but their parts are evaluated (calls in them
                // are seen) and their taint kept.
                let mut t = Taint::default();
                let mut c = n.walk();
                let kids: Vec<Node<'t>> = n.named_children(&mut c).collect();
                for k in kids {
                    let v = self.expr(k);
                    t.join(&v.deep_taint());
                }
                Val::tainted(t)
            }
        }
    }

    /// A string literal: prefixes (`r`, `b`, `f`, `u`), escapes, f-string interpolation.
    pub(super) fn string(&mut self, n: Node<'t>) -> Val {
        if n.kind() != "string" {
            return self.expr(n);
        }
        let start = n
            .named_child(0)
            .filter(|c| c.kind() == "string_start")
            .map(|c| self.e.text(c).to_ascii_lowercase())
            .unwrap_or_default();
        let raw = start.contains('r');
        let fmt = start.contains('f');
        let mut out = String::new();
        let mut escaped = false;
        let mut t = Taint::default();
        let mut unknown = false;
        let mut c = n.walk();
        let kids: Vec<Node<'t>> = n.named_children(&mut c).collect();
        for k in kids {
            match k.kind() {
                "string_content" => {
                    let body = self.e.text(k);
                    if raw {
                        out.push_str(body);
                    } else {
                        let u = unescape(body);
                        escaped |= u != body;
                        out.push_str(&u);
                    }
                }
                "interpolation" if fmt => {
                    let v = k.named_child(0).map(|x| self.expr(x)).unwrap_or_default();
                    t.join(&v.deep_taint());
                    match v.text() {
                        Some(s) => {
                            out.push_str(&s);
                            escaped = true;
                        }
                        None => {
                            unknown = true;
                            out.push('…');
                        }
                    }
                }
                _ => {}
            }
        }
        if unknown {
            return crate::scan::code::ops::partial(out, t);
        }
        let mut v = if escaped {
            Val::folded(out, if fmt { "format string" } else { "escape sequences" })
        } else {
            Val::str(out)
        };
        if v.as_str().is_some_and(is_date_text) {
            v.taint.bits |= taint::DATE_CONST;
        }
        v.taint.join(&t);
        self.e.record_folded(n.start_byte(), &v);
        v
    }

    pub(super) fn slice(&mut self, obj: Val, s: Node<'t>) -> Val {
        let mut c = s.walk();
        let parts: Vec<Option<i64>> = {
            // `a:b:c` as three optional numbers, from the children between colons.
            let mut parts = vec![None; 3];
            let mut k = 0;
            let kids: Vec<Node<'t>> = s.children(&mut c).collect();
            for x in kids {
                if x.kind() == ":" {
                    k += 1;
                } else if x.is_named() && k < 3 {
                    parts[k] = self.expr(x).as_num();
                }
            }
            parts
        };
        let reverse = parts[2] == Some(-1) && parts[0].is_none() && parts[1].is_none();
        match (&obj.shape, reverse) {
            (Shape::Str(st), true) => Val::folded(st.chars().rev().collect(), "reversal").with(taint::OBFUSCATED),
            (Shape::List(items), true) => Val {
                shape: Shape::List(items.iter().rev().cloned().collect()),
                how: Some("reversal"),
                ..Val::default()
            },
            (Shape::Str(st), false) if parts[2].is_none() || parts[2] == Some(1) => {
                let chars: Vec<char> = st.chars().collect();
                let len = i64::try_from(chars.len()).unwrap_or(i64::MAX);
                let clamp = |x: i64| usize::try_from(if x < 0 { (len + x).max(0) } else { x.min(len) }).unwrap_or(0);
                let a = clamp(parts[0].unwrap_or(0));
                let b = clamp(parts[1].unwrap_or(len));
                let mut v = Val::folded(chars.get(a..b.max(a)).unwrap_or_default().iter().collect(), "slice");
                v.taint = obj.taint.clone();
                v
            }
            _ => Val::tainted(obj.deep_taint()),
        }
    }

    pub(super) fn comprehension(&mut self, n: Node<'t>) -> Val {
        let body = n.child_by_field_name("body");
        let mut c = n.walk();
        let clauses: Vec<Node<'t>> = n.named_children(&mut c).filter(|x| x.kind() != "comment").collect();
        let fors: Vec<Node<'t>> = clauses
            .iter()
            .copied()
            .filter(|x| x.kind() == "for_in_clause")
            .collect();
        let has_if = clauses.iter().any(|x| x.kind() == "if_clause");
        let (Some(body), [clause]) = (body, fors.as_slice()) else {
            return Val::unknown();
        };
        let iter = clause
            .child_by_field_name("right")
            .map(|r| self.expr(r))
            .unwrap_or_default();
        let var = clause.child_by_field_name("left").filter(|l| l.kind() == "identifier");
        let items: Vec<Val> = match &iter.shape {
            Shape::List(items) => items.clone(),
            Shape::Str(s) => s.chars().map(|ch| Val::str(ch.to_string())).collect(),
            _ => return Val::tainted(iter.deep_taint()),
        };
        let Some(var) = var.filter(|_| !has_if) else {
            return Val::tainted(iter.deep_taint());
        };
        let name = self.e.text(var);
        self.e.enter_closure(&[]);
        let mut out = Vec::new();
        for item in items.into_iter().take(MAX_LIST) {
            if !self.e.tick() {
                break;
            }
            self.e.declare(name, item);
            out.push(self.expr(body));
        }
        self.e.leave_closure();
        Val {
            shape: Shape::List(out),
            ..Val::default()
        }
    }

    pub(super) fn call(&mut self, n: Node<'t>) -> Val {
        let Some(f) = n.child_by_field_name("function") else {
            return Val::unknown();
        };
        let mut args = Vec::new();
        let mut kwargs = Vec::new();
        if let Some(a) = n.child_by_field_name("arguments") {
            let mut c = a.walk();
            let kids: Vec<Node<'t>> = a.named_children(&mut c).collect();
            if a.kind() == "generator_expression" {
                args.push(self.comprehension(a));
            }
            for k in kids.into_iter().filter(|_| a.kind() != "generator_expression") {
                match k.kind() {
                    "keyword_argument" => {
                        let name = k
                            .child_by_field_name("name")
                            .map(|x| self.e.text(x))
                            .unwrap_or_default();
                        let v = k.child_by_field_name("value").map(|x| self.expr(x)).unwrap_or_default();
                        kwargs.push((name.to_owned(), v));
                    }
                    "list_splat" => {
                        let v = k.named_child(0).map(|x| self.expr(x)).unwrap_or_default();
                        match v.shape {
                            Shape::List(items) => args.extend(items),
                            _ => args.push(v),
                        }
                    }
                    "dictionary_splat" => {
                        let v = k.named_child(0).map(|x| self.expr(x)).unwrap_or_default();
                        if let Shape::Dict(items) = v.shape {
                            kwargs.extend(items);
                        }
                    }
                    "comment" => {}
                    _ => args.push(self.expr(k)),
                }
            }
        }
        // `obj.method(…)`: the receiver's value and the method name.
        let (callee, recv) = if f.kind() == "attribute" {
            let obj = f
                .child_by_field_name("object")
                .map(|o| self.expr(o))
                .unwrap_or_default();
            let name = f
                .child_by_field_name("attribute")
                .map(|a| self.e.text(a))
                .unwrap_or_default();
            let local = matches!(
                f.child_by_field_name("object").map(|o| self.e.text(o)),
                Some("self" | "cls")
            );
            if local && let Some(&i) = self.e.by_name.get(name) {
                return self.call_local(i, &args, n);
            }
            (None, Some((obj, name)))
        } else {
            (Some(self.expr(f)), None)
        };
        if let Some(Val {
            shape: Shape::Func(i), ..
        }) = callee
        {
            return self.call_local(i, &args, n);
        }
        let call = calls::Call {
            node: n,
            args,
            kwargs,
            text: self.e.text(n),
        };
        let v = match (callee, recv) {
            (Some(c), _) => calls::call_value(&mut self.e, c, &call),
            (None, Some((obj, name))) => calls::method(&mut self.e, obj, name, &call),
            _ => Val::unknown(),
        };
        self.e.record_folded(n.start_byte(), &v);
        v
    }

    pub(super) fn call_local(&mut self, i: usize, args: &[Val], n: Node<'t>) -> Val {
        self.summarise(i);
        self.e.instantiate(i, args, n.start_byte())
    }
}

/// `"%s-%d" % (a, b)`; `%c` takes a code point.
pub(crate) fn percent_format(f: &str, args: &Val) -> Option<String> {
    let list = match &args.shape {
        Shape::List(items) => items.clone(),
        _ => vec![args.clone()],
    };
    let mut it = list.into_iter();
    let mut out = String::new();
    let mut chars = f.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        // Flags and width are skipped.
        while chars
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | ' ' | '#' | '.'))
        {
            chars.next();
        }
        match chars.next()? {
            '%' => out.push('%'),
            's' | 'r' | 'd' | 'i' => out.push_str(&it.next()?.text()?),
            'c' => {
                let v = it.next()?;
                match v.as_num() {
                    Some(n) => out.push(char::from_u32(u32::try_from(n).ok()?)?),
                    None => out.push_str(&v.text()?),
                }
            }
            'x' => out.push_str(&format!("{:x}", it.next()?.as_num()?)),
            _ => return None,
        }
    }
    Some(out)
}

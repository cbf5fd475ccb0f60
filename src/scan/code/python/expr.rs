//! Python expressions: literals with their prefixes and escapes, f-strings, operators,
//! slices, containers, comprehensions over known lists, and calls (local functions through
//! their summaries, everything else through [`super::calls`]).

use tree_sitter::Node;

use super::{Py, calls};
use crate::scan::code::engine::is_date_text;
use crate::scan::code::front::Fold;
use crate::scan::code::ops::{concat, int_literal, push_text};
use crate::scan::code::value::{MAX_LIST, Shape, Taint, Val, taint, unescape};

impl<'t> Py<'t> {
    /// Python's expressions ([`Fold::expr_inner`]): literals, names, attributes, subscripts,
    /// operators; the rest in [`Py::expr_more`].
    pub(super) fn py_expr(&mut self, n: Node<'t>) -> Val {
        match n.kind() {
            "string" => self.string(n),
            "concatenated_string" => {
                let mut c = n.walk();
                let parts: Vec<Node<'t>> = n.named_children(&mut c).collect();
                let vals: Vec<Val> = parts.into_iter().map(|p| self.string(p)).collect();
                concat(&vals, "concatenation")
            }
            "integer" => int_literal(self.e.text(n)),
            "identifier" => self.name_value(self.e.text(n)),
            "attribute" => {
                let obj = self.field(n, "object");
                let attr = self.field_text(n, "attribute");
                calls::attribute(&mut self.e, obj, attr, n)
            }
            "subscript" => {
                let obj = self.field(n, "value");
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
            "binary_operator" => self.binary(n),
            "unary_operator" => self.unary(n),
            _ => self.expr_more(n),
        }
    }

    /// The rest of [`Py::py_expr`]: operators, containers, calls, assignments.
    pub(super) fn expr_more(&mut self, n: Node<'t>) -> Val {
        match n.kind() {
            "comparison_operator" | "boolean_operator" | "not_operator" => self.parts(n),
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
                        let key = self.field(k, "key");
                        let val = self.field(k, "value");
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
            "assignment" => self.assignment(n, "left", "right"),
            "augmented_assignment" => self.augmented(n),
            "named_expression" => self.assignment(n, "name", "value"),
            "lambda" => Val::unknown(),
            _ => self.parts(n),
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
                    if push_text(&mut out, &v) {
                        escaped = true;
                    } else {
                        unknown = true;
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
        let iter = self.field(*clause, "right");
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
                        let name = self.field_text(k, "name");
                        let v = self.field(k, "value");
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
            let obj = self.field(f, "object");
            let name = self.field_text(f, "attribute");
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
}

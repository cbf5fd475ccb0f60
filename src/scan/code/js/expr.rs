//! JavaScript expressions: literals, template strings, operators with JavaScript's
//! coercion, containers, objects, calls (local functions through their summaries, callbacks
//! where they are written, everything else through [`super::calls`]).

use tree_sitter::Node;

use super::{Js, calls, is_function};
use crate::scan::code::engine::is_date_text;
use crate::scan::code::front::Fold;
use crate::scan::code::ops::{int_literal, push_text};
use crate::scan::code::value::{MAX_LIST, Shape, Taint, Val, taint, unescape};

impl<'t> Js<'t> {
    /// JavaScript's expressions ([`Fold::expr_inner`]): literals, names, members, operators;
    /// the rest in [`Js::expr_more`].
    pub(super) fn js_expr(&mut self, n: Node<'t>) -> Val {
        match n.kind() {
            "string" => self.string(n),
            "template_string" => self.template(n),
            "number" => int_literal(self.e.text(n)),
            "identifier" | "this" => self.name_value(self.e.text(n)),
            "member_expression" => {
                let obj = self.field(n, "object");
                let prop = self.field_text(n, "property");
                calls::member(&mut self.e, obj, prop, n.start_byte())
            }
            "subscript_expression" => {
                let obj = self.field(n, "object");
                let idx = self.field(n, "index");
                calls::index(&mut self.e, obj, idx, n.start_byte())
            }
            "binary_expression" => self.binary(n),
            "unary_expression" => self.unary(n),
            "parenthesized_expression"
            | "await_expression"
            | "non_null_expression"
            | "as_expression"
            | "satisfies_expression"
            | "type_assertion" => n
                .named_child(0)
                .filter(|x| !x.kind().contains("type"))
                .map(|x| self.expr(x))
                .unwrap_or_default(),
            // `(0, eval)(x)`: the last value.
            _ => self.expr_more(n),
        }
    }

    /// More of [`Js::js_expr`]: the next group of cases.
    pub(super) fn expr_more(&mut self, n: Node<'t>) -> Val {
        match n.kind() {
            "sequence_expression" => {
                let mut c = n.walk();
                let kids: Vec<Node<'t>> = n.named_children(&mut c).collect();
                let mut last = Val::unknown();
                for k in kids {
                    last = self.expr(k);
                }
                last
            }
            "ternary_expression" => {
                let _ = self.field(n, "condition");
                let mut a = self.field(n, "consequence");
                let b = self.field(n, "alternative");
                a.taint.join(&b.deep_taint());
                a
            }
            "array" => {
                let mut c = n.walk();
                let kids: Vec<Node<'t>> = n.named_children(&mut c).collect();
                let mut items = Vec::new();
                for k in kids.into_iter().take(MAX_LIST) {
                    if k.kind() == "spread_element" {
                        let v = k.named_child(0).map(|x| self.expr(x)).unwrap_or_default();
                        match v.shape {
                            Shape::List(more) => items.extend(more),
                            Shape::Str(s) => items.extend(s.chars().map(|c| Val::str(c.to_string()))),
                            _ => items.push(Val::tainted(v.taint)),
                        }
                    } else if k.kind() != "comment" {
                        items.push(self.expr(k));
                    }
                }
                Val {
                    shape: Shape::List(items),
                    ..Val::default()
                }
            }
            "object" => self.object(n),
            "call_expression" => self.call(n, false),
            "new_expression" => self.call(n, true),
            "assignment_expression" => self.assignment(n, "left", "right"),
            "augmented_assignment_expression" => self.augmented(n),
            k if is_function(k) => Val::unknown(),
            "regex" => Val::str(self.e.text(n)),
            _ => self.parts(n),
        }
    }

    pub(super) fn object(&mut self, n: Node<'t>) -> Val {
        let mut c = n.walk();
        let kids: Vec<Node<'t>> = n.named_children(&mut c).collect();
        let mut items = Vec::new();
        for k in kids.into_iter().take(MAX_LIST) {
            match k.kind() {
                "pair" => {
                    let key = k.child_by_field_name("key");
                    let key = match key.map(|x| (x.kind(), x)) {
                        Some(("string", x)) => self.string(x).as_str().unwrap_or_default().to_owned(),
                        Some(("computed_property_name", x)) => x
                            .named_child(0)
                            .map(|y| self.expr(y))
                            .and_then(|v| v.text())
                            .unwrap_or_default(),
                        Some((_, x)) => self.e.text(x).to_owned(),
                        None => String::new(),
                    };
                    let val = self.field(k, "value");
                    items.push((key, val));
                }
                "shorthand_property_identifier" => {
                    let name = self.e.text(k);
                    let v = self.e.lookup(name).cloned().unwrap_or_else(|| calls::global(name));
                    items.push((name.to_owned(), v));
                }
                "spread_element" => {
                    let v = k.named_child(0).map(|x| self.expr(x)).unwrap_or_default();
                    match v.shape {
                        Shape::Dict(more) => items.extend(more),
                        _ => items.push(("...".into(), v)),
                    }
                }
                _ => {}
            }
        }
        Val {
            shape: Shape::Dict(items),
            ..Val::default()
        }
    }

    /// A string literal with its escapes.
    pub(super) fn string(&mut self, n: Node<'t>) -> Val {
        let t = self.e.text(n);
        let body = t.get(1..t.len().saturating_sub(1)).unwrap_or_default();
        let u = unescape(body);
        let mut v = if u == body {
            Val::str(u)
        } else {
            Val::folded(u, "escape sequences")
        };
        if v.as_str().is_some_and(is_date_text) {
            v.taint.bits |= taint::DATE_CONST;
        }
        self.e.record_folded(n.start_byte(), &v);
        v
    }

    pub(super) fn template(&mut self, n: Node<'t>) -> Val {
        let mut out = String::new();
        let mut t = Taint::default();
        let mut unknown = false;
        let mut computed = false;
        let mut c = n.walk();
        let kids: Vec<Node<'t>> = n.children(&mut c).collect();
        for k in kids {
            match k.kind() {
                "string_fragment" => out.push_str(self.e.text(k)),
                "escape_sequence" => {
                    out.push_str(&unescape(self.e.text(k)));
                    computed = true;
                }
                "template_substitution" => {
                    let v = k.named_child(0).map(|x| self.expr(x)).unwrap_or_default();
                    t.join(&v.deep_taint());
                    computed = true;
                    unknown |= !push_text(&mut out, &v);
                }
                _ => {}
            }
        }
        if unknown {
            return crate::scan::code::ops::partial(out, t);
        }
        let mut v = if computed {
            Val::folded(out, "template string")
        } else {
            Val::str(out)
        };
        v.taint = t;
        self.e.record_folded(n.start_byte(), &v);
        v
    }

    pub(super) fn call(&mut self, n: Node<'t>, new: bool) -> Val {
        let f = n.child_by_field_name(if new { "constructor" } else { "function" });
        let Some(f) = f else {
            return Val::unknown();
        };
        let args_node = n.child_by_field_name("arguments");
        // Tagged templates and `import(m)` have no argument list.
        let mut arg_nodes: Vec<Node<'t>> = Vec::new();
        if let Some(a) = args_node {
            if a.kind() == "template_string" {
                arg_nodes.push(a);
            } else {
                let mut c = a.walk();
                arg_nodes = a.named_children(&mut c).filter(|x| x.kind() != "comment").collect();
            }
        }
        let (callee, recv) = if f.kind() == "member_expression" {
            let obj = self.field(f, "object");
            let name = self.field_text(f, "property");
            let is_this = f.child_by_field_name("object").is_some_and(|o| o.kind() == "this");
            if is_this && let Some(&i) = self.e.by_name.get(name) {
                let args = self.args(&arg_nodes, Val::unknown());
                return self.call_local(i, &args, n);
            }
            (None, Some((obj, name)))
        } else if f.kind() == "import" {
            (Some(Val::api("require")), None)
        } else {
            (Some(self.expr(f)), None)
        };
        if let Some(Val {
            shape: Shape::Func(i), ..
        }) = callee
        {
            let args = self.args(&arg_nodes, Val::unknown());
            return self.call_local(i, &args, n);
        }
        // What a callback argument receives: the receiver's value (promises, streams).
        let cb_input = match &recv {
            Some((obj, _)) => Val::tainted(obj.deep_taint()),
            None => Val::unknown(),
        };
        let mut args = self.args_no_callbacks(&arg_nodes);
        let call = calls::Call {
            at: n.start_byte(),
            args: args.clone(),
            text: self.e.text(n),
            new,
        };
        let v = match (&callee, &recv) {
            (Some(c), _) => calls::call_value(&mut self.e, c.clone(), &call),
            (None, Some((obj, name))) => calls::method(&mut self.e, obj.clone(), name, &call),
            _ => Val::unknown(),
        };
        // Callbacks run with the call's value (or the receiver's).
        let mut cb_value = v.clone();
        cb_value.taint.join(&cb_input.taint);
        for (k, a) in arg_nodes.iter().enumerate() {
            if is_function(a.kind()) {
                let r = self.closure(*a, &cb_value);
                if let Some(slot) = args.get_mut(k) {
                    *slot = r;
                }
            }
        }
        self.e.record_folded(n.start_byte(), &v);
        // `.then(cb)` has the value the callback returns.
        match &recv {
            Some((_, "then")) => args
                .first()
                .cloned()
                .filter(|a| !matches!(a.shape, Shape::Unknown) || a.taint.bits != 0)
                .unwrap_or(v),
            _ => v,
        }
    }

    /// Evaluates arguments; callbacks are left unknown (they run after the call).
    pub(super) fn args_no_callbacks(&mut self, nodes: &[Node<'t>]) -> Vec<Val> {
        let mut out = Vec::new();
        for a in nodes {
            if is_function(a.kind()) {
                out.push(Val::unknown());
            } else if a.kind() == "spread_element" {
                let v = a.named_child(0).map(|x| self.expr(x)).unwrap_or_default();
                match v.shape {
                    Shape::List(items) => out.extend(items),
                    _ => out.push(v),
                }
            } else {
                out.push(self.expr(*a));
            }
        }
        out
    }

    pub(super) fn args(&mut self, nodes: &[Node<'t>], cb: Val) -> Vec<Val> {
        let mut out = self.args_no_callbacks(nodes);
        for (k, a) in nodes.iter().enumerate() {
            if is_function(a.kind()) {
                let r = self.closure(*a, &cb);
                if let Some(slot) = out.get_mut(k) {
                    *slot = r;
                }
            }
        }
        out
    }

    /// Runs an inline function with every parameter bound to `input`; its return value.
    pub(super) fn closure(&mut self, f: Node<'t>, input: &Val) -> Val {
        let params: Vec<(String, Val)> = self
            .params(f)
            .into_iter()
            .map(|(name, _)| (name, input.clone()))
            .collect();
        self.e.enter_closure(&params);
        if let Some(body) = f.child_by_field_name("body") {
            self.body(body);
        }
        self.e
            .leave_closure()
            .unwrap_or_else(|| Val::tainted(input.taint.clone()))
    }
}

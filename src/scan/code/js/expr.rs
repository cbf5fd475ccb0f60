//! JavaScript expressions: literals, template strings, operators with JavaScript's
//! coercion, containers, objects, calls (local functions through their summaries, callbacks
//! where they are written, everything else through [`super::calls`]).

use tree_sitter::Node;

use super::{Js, calls, is_function};
use crate::scan::code::engine::{MAX_DEPTH, is_date_text, is_epoch_like};
use crate::scan::code::ops::{concat, int_op};
use crate::scan::code::value::{MAX_LIST, Shape, Taint, Val, taint, unescape};

impl<'t> Js<'t> {
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
            "template_string" => self.template(n),
            "number" => {
                let t = self.e.text(n).replace('_', "").to_ascii_lowercase();
                let parsed = if let Some(h) = t.strip_prefix("0x") {
                    i64::from_str_radix(h, 16).ok()
                } else if let Some(o) = t.strip_prefix("0o") {
                    i64::from_str_radix(o, 8).ok()
                } else if let Some(b) = t.strip_prefix("0b") {
                    i64::from_str_radix(b, 2).ok()
                } else {
                    t.trim_end_matches('n').parse().ok()
                };
                match parsed {
                    Some(x) if is_epoch_like(x) => Val::num(x).with(taint::DATE_CONST),
                    Some(x) => Val::num(x),
                    None => Val::unknown(),
                }
            }
            "identifier" | "this" => {
                let name = self.e.text(n);
                match self.e.lookup(name) {
                    Some(v) => v.clone(),
                    None => match self.e.by_name.get(name) {
                        Some(&i) => Val {
                            shape: Shape::Func(i),
                            ..Val::default()
                        },
                        None => calls::global(name),
                    },
                }
            }
            "member_expression" => {
                let obj = n
                    .child_by_field_name("object")
                    .map(|o| self.expr(o))
                    .unwrap_or_default();
                let prop = n
                    .child_by_field_name("property")
                    .map(|p| self.e.text(p))
                    .unwrap_or_default();
                calls::member(&mut self.e, obj, prop, n.start_byte())
            }
            "subscript_expression" => {
                let obj = n
                    .child_by_field_name("object")
                    .map(|o| self.expr(o))
                    .unwrap_or_default();
                let idx = n.child_by_field_name("index").map(|o| self.expr(o)).unwrap_or_default();
                calls::index(&mut self.e, obj, idx, n.start_byte())
            }
            "binary_expression" => {
                let l = n.child_by_field_name("left").map(|x| self.expr(x)).unwrap_or_default();
                let r = n.child_by_field_name("right").map(|x| self.expr(x)).unwrap_or_default();
                let op = n
                    .child_by_field_name("operator")
                    .map(|o| self.e.text(o))
                    .unwrap_or_default();
                let v = js_binary(op, l, r);
                self.e.record_folded(n.start_byte(), &v);
                v
            }
            "unary_expression" => {
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

    /// More of `expr_inner`: the next group of cases.
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
                let _ = n.child_by_field_name("condition").map(|x| self.expr(x));
                let mut a = n
                    .child_by_field_name("consequence")
                    .map(|x| self.expr(x))
                    .unwrap_or_default();
                let b = n
                    .child_by_field_name("alternative")
                    .map(|x| self.expr(x))
                    .unwrap_or_default();
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
            "assignment_expression" => {
                let v = n.child_by_field_name("right").map(|r| self.expr(r)).unwrap_or_default();
                if let Some(l) = n.child_by_field_name("left") {
                    self.bind(l, v.clone(), false);
                }
                v
            }
            "augmented_assignment_expression" => {
                let l = n.child_by_field_name("left");
                let old = l.map(|x| self.expr(x)).unwrap_or_default();
                let r = n.child_by_field_name("right").map(|x| self.expr(x)).unwrap_or_default();
                let op = n
                    .child_by_field_name("operator")
                    .map(|o| self.e.text(o))
                    .unwrap_or_default();
                let mut v = js_binary(op.trim_end_matches('='), old.clone(), r);
                // A string built in a callback from unknown chunks keeps their taint.
                v.taint.join(&old.deep_taint());
                self.e.record_folded(n.start_byte(), &v);
                if let Some(l) = l {
                    self.bind(l, v.clone(), false);
                }
                v
            }
            k if is_function(k) => Val::unknown(),
            "regex" => Val::str(self.e.text(n)),
            _ => {
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
                    let val = k.child_by_field_name("value").map(|x| self.expr(x)).unwrap_or_default();
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
                    match v.text() {
                        Some(s) => out.push_str(&s),
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
            let obj = f
                .child_by_field_name("object")
                .map(|o| self.expr(o))
                .unwrap_or_default();
            let name = f
                .child_by_field_name("property")
                .map(|p| self.e.text(p))
                .unwrap_or_default();
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

    pub(super) fn call_local(&mut self, i: usize, args: &[Val], n: Node<'t>) -> Val {
        self.summarise(i);
        self.e.instantiate(i, args, n.start_byte())
    }
}

/// JavaScript's binary operators: `+` concatenates when either side is a string.
fn js_binary(op: &str, l: Val, r: Val) -> Val {
    let mut t = l.deep_taint();
    t.join(&r.deep_taint());
    let v = match (op, &l.shape, &r.shape) {
        ("+", Shape::Str(_), Shape::Str(_) | Shape::Num(_)) | ("+", Shape::Num(_), Shape::Str(_)) => {
            return concat(&[l, r], "concatenation");
        }
        (_, Shape::Num(a), Shape::Num(b)) => {
            let op = match op {
                ">>>" => ">>",
                "/" => "//",
                o => o,
            };
            match int_op(op, *a, *b) {
                Some(x) => Val::num(x),
                None => Val::unknown(),
            }
        }
        _ => Val::unknown(),
    };
    Val { taint: t, ..v }
}

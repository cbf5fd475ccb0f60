//! The JavaScript and TypeScript front-end: walks a tree-sitter-javascript (or -typescript)
//! tree, folds expressions (literals with escapes, template strings, `+` with JavaScript's
//! coercion, `[…].join`, `split('').reverse()`, `String.fromCharCode`, `atob`, `Buffer.from`,
//! bracket access on globals, `require(m)` with `m` folded), follows variables, imports,
//! destructuring and callbacks, and records events through [`calls`].
//!
//! Callbacks are analysed where they are written, their parameters bound to the value of the
//! call that receives them (`fetch(u).then(r => r.text()).then(eval)`: `eval` gets what was
//! downloaded; `https.get(u, res => …)`: `res` is a download).

mod apis;
mod calls;
mod expr;

use tree_sitter::Node;

use crate::scan::code::engine::{Engine, Func, MAX_DEPTH};
use crate::scan::code::facts::{Facts, Gate};
use crate::scan::code::value::{Shape, Val};

/// Analyses a parsed JavaScript or TypeScript file.
pub(crate) fn analyze(src: &str, root: Node<'_>) -> Facts {
    let mut js = Js { e: Engine::new(src) };
    js.hoist(root);
    js.block(root);
    for i in 0..js.e.funcs.len() {
        if js.e.exhausted() {
            break;
        }
        js.summarise(i);
    }
    js.e.facts
}

struct Js<'t> {
    e: Engine<'t>,
}

/// Node kinds that are functions.
fn is_function(kind: &str) -> bool {
    matches!(
        kind,
        "function_declaration"
            | "function_expression"
            | "function"
            | "arrow_function"
            | "generator_function_declaration"
            | "generator_function"
            | "method_definition"
    )
}

impl<'t> Js<'t> {
    /// Registers named functions at the top level, in classes, and `const f = () => …`.
    fn hoist(&mut self, n: Node<'t>) {
        let mut c = n.walk();
        for s in n.named_children(&mut c) {
            let s = if s.kind() == "export_statement" {
                s.child_by_field_name("declaration").unwrap_or(s)
            } else {
                s
            };
            match s.kind() {
                "function_declaration" | "generator_function_declaration" => {
                    let name = s
                        .child_by_field_name("name")
                        .map(|x| self.e.text(x))
                        .unwrap_or_default();
                    self.register(name, s);
                }
                "class_declaration" => {
                    if let Some(body) = s.child_by_field_name("body") {
                        let mut c2 = body.walk();
                        for m in body.named_children(&mut c2) {
                            if m.kind() == "method_definition" {
                                let name = m
                                    .child_by_field_name("name")
                                    .map(|x| self.e.text(x))
                                    .unwrap_or_default();
                                self.register(name, m);
                            }
                        }
                    }
                }
                "lexical_declaration" | "variable_declaration" => {
                    let mut c2 = s.walk();
                    for d in s.named_children(&mut c2) {
                        if let (Some(name), Some(value)) =
                            (d.child_by_field_name("name"), d.child_by_field_name("value"))
                            && name.kind() == "identifier"
                            && is_function(value.kind())
                        {
                            let name = self.e.text(name);
                            self.register(name, value);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn register(&mut self, name: &str, def: Node<'t>) {
        if name.is_empty() || self.e.by_name.contains_key(name) {
            return;
        }
        let params = self.params(def).into_iter().map(|(n, _)| n).collect();
        self.e.funcs.push(Func {
            name: name.to_owned(),
            node: def,
            params,
            summary: None,
            busy: false,
        });
        self.e.by_name.insert(name.to_owned(), self.e.funcs.len() - 1);
    }

    /// A function's parameter names (with the node of each).
    fn params(&self, def: Node<'t>) -> Vec<(String, Node<'t>)> {
        if let Some(p) = def.child_by_field_name("parameter") {
            return vec![(self.e.text(p).to_owned(), p)];
        }
        let Some(ps) = def.child_by_field_name("parameters") else {
            return Vec::new();
        };
        let mut c = ps.walk();
        ps.named_children(&mut c)
            .filter_map(|p| {
                let id = match p.kind() {
                    "identifier" => Some(p),
                    "required_parameter" | "optional_parameter" => p.child_by_field_name("pattern"),
                    "assignment_pattern" => p.child_by_field_name("left"),
                    _ => None,
                };
                id.filter(|i| i.kind() == "identifier")
                    .map(|i| (self.e.text(i).to_owned(), p))
            })
            .collect()
    }

    fn summarise(&mut self, i: usize) {
        let Some(saved) = self.e.start_function(i) else {
            return;
        };
        if let Some(body) = self.e.funcs.get(i).and_then(|f| f.node.child_by_field_name("body")) {
            self.body(body);
        }
        self.e.finish_function(i, saved);
    }

    /// A function body: a block, or an arrow's expression (its value is returned).
    fn body(&mut self, body: Node<'t>) {
        if body.kind() == "statement_block" {
            self.block(body);
        } else {
            let v = self.expr(body);
            self.e.returns(v);
        }
    }

    fn block(&mut self, n: Node<'t>) {
        let outer = self.e.gate.clone();
        let mut c = n.walk();
        for s in n.named_children(&mut c) {
            if !self.e.tick() {
                break;
            }
            if let Some(g) = self.statement(s)
                && self.e.gate.is_none()
            {
                self.e.gate = Some(g);
            }
        }
        self.e.gate = outer;
    }

    fn statement(&mut self, s: Node<'t>) -> Option<Gate> {
        if self.e.depth > MAX_DEPTH {
            return None;
        }
        self.e.depth += 1;
        let g = self.statement_inner(s);
        self.e.depth -= 1;
        g
    }

    fn statement_inner(&mut self, s: Node<'t>) -> Option<Gate> {
        match s.kind() {
            "expression_statement" => {
                if let Some(x) = s.named_child(0) {
                    self.expr(x);
                }
            }
            "lexical_declaration" | "variable_declaration" => {
                let mut c = s.walk();
                let decls: Vec<Node<'t>> = s.named_children(&mut c).collect();
                for d in decls.into_iter().filter(|d| d.kind() == "variable_declarator") {
                    let v = d.child_by_field_name("value").map(|x| self.expr(x)).unwrap_or_default();
                    if let Some(name) = d.child_by_field_name("name") {
                        self.bind(name, v, true);
                    }
                }
            }
            "import_statement" => self.import(s),
            "export_statement" => {
                if let Some(d) = s.child_by_field_name("declaration") {
                    return self.statement(d);
                }
                let mut c = s.walk();
                for x in s.named_children(&mut c) {
                    self.expr(x);
                }
            }
            "if_statement" => {
                let cond_node = s.child_by_field_name("condition")?;
                let cond = self.expr(cond_node);
                let gate = self.e.gate_of(&cond, cond_node);
                let body = s.child_by_field_name("consequence");
                self.gated(gate.clone(), body);
                if let Some(alt) = s.child_by_field_name("alternative") {
                    self.gated(gate.clone(), alt.named_child(0));
                }
                return body.filter(|b| gate.is_some() && self.exits(*b)).and(gate);
            }
            "while_statement" | "do_statement" => {
                let cn = s.child_by_field_name("condition");
                let v = cn.map(|c| self.expr(c)).unwrap_or_default();
                let gate = cn.and_then(|c| self.e.gate_of(&v, c));
                self.gated(gate.clone(), s.child_by_field_name("body"));
                return gate;
            }
            "for_in_statement" => {
                let right = s.child_by_field_name("right").map(|r| self.expr(r)).unwrap_or_default();
                if let Some(left) = s.child_by_field_name("left") {
                    let item = match &right.shape {
                        Shape::List(items) => items.first().cloned().unwrap_or_default(),
                        _ => Val::tainted(right.deep_taint()),
                    };
                    self.bind(left, item, true);
                }
                if let Some(b) = s.child_by_field_name("body") {
                    self.statement(b);
                }
            }
            "function_declaration" | "generator_function_declaration" => {
                let name = s
                    .child_by_field_name("name")
                    .map(|x| self.e.text(x))
                    .unwrap_or_default();
                self.register(name, s);
            }
            "class_declaration" => {
                self.hoist_class(s);
            }
            "return_statement" => {
                let v = s.named_child(0).map(|x| self.expr(x)).unwrap_or_default();
                self.e.returns(v);
            }
            "statement_block" => self.block(s),
            "comment"
            | "empty_statement"
            | "break_statement"
            | "continue_statement"
            | "debugger_statement"
            | "interface_declaration"
            | "type_alias_declaration"
            | "enum_declaration"
            | "ambient_declaration" => {}
            _ => {
                // `try`, `for`, `switch`, `throw`, labels: every part is visited.
                let mut c = s.walk();
                let kids: Vec<Node<'t>> = s.named_children(&mut c).collect();
                for x in kids {
                    match x.kind() {
                        "statement_block" => self.block(x),
                        k if k.ends_with("_statement") || k.ends_with("_clause") || k.ends_with("declaration") => {
                            self.statement(x);
                        }
                        "switch_body" | "switch_case" | "switch_default" => {
                            self.statement(x);
                        }
                        _ => {
                            self.expr(x);
                        }
                    }
                }
            }
        }
        None
    }

    fn hoist_class(&mut self, s: Node<'t>) {
        if let Some(body) = s.child_by_field_name("body") {
            let mut c = body.walk();
            let methods: Vec<Node<'t>> = body
                .named_children(&mut c)
                .filter(|m| m.kind() == "method_definition")
                .collect();
            for m in methods {
                let name = m
                    .child_by_field_name("name")
                    .map(|x| self.e.text(x))
                    .unwrap_or_default();
                self.register(name, m);
            }
        }
    }

    fn gated(&mut self, gate: Option<Gate>, body: Option<Node<'t>>) {
        let Some(body) = body else { return };
        let saved = self.e.gate.clone();
        if self.e.gate.is_none() {
            self.e.gate = gate;
        }
        if body.kind() == "statement_block" {
            self.block(body);
        } else {
            self.statement(body);
        }
        self.e.gate = saved;
    }

    fn exits(&self, b: Node<'t>) -> bool {
        let t = self.e.text(b);
        let inner = t.trim().trim_start_matches('{').trim_end_matches('}').trim();
        inner.starts_with("return") || inner.starts_with("process.exit") || inner.starts_with("throw")
    }

    fn import(&mut self, s: Node<'t>) {
        let source = s
            .child_by_field_name("source")
            .map(|x| self.string(x))
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let module = source.strip_prefix("node:").unwrap_or(&source).to_owned();
        let Some(clause) = s.named_child(0).filter(|c| c.kind() == "import_clause") else {
            return;
        };
        let mut c = clause.walk();
        let parts: Vec<Node<'t>> = clause.named_children(&mut c).collect();
        for p in parts {
            match p.kind() {
                "identifier" => self.e.declare(self.e.text(p), Val::api(module.clone())),
                "namespace_import" => {
                    if let Some(id) = p.named_child(0) {
                        self.e.declare(self.e.text(id), Val::api(module.clone()));
                    }
                }
                "named_imports" => {
                    let mut c2 = p.walk();
                    let specs: Vec<Node<'t>> = p.named_children(&mut c2).collect();
                    for spec in specs {
                        let name = spec
                            .child_by_field_name("name")
                            .map(|x| self.e.text(x))
                            .unwrap_or_default();
                        let alias = spec
                            .child_by_field_name("alias")
                            .map(|x| self.e.text(x))
                            .unwrap_or(name);
                        self.e.declare(alias, Val::api(format!("{module}.{name}")));
                    }
                }
                _ => {}
            }
        }
    }

    /// Binds a declaration or assignment target: a name, or an object or array pattern
    /// (`const {AWS_KEY: k} = process.env` reads one variable of the environment).
    fn bind(&mut self, target: Node<'t>, v: Val, declare: bool) {
        match target.kind() {
            "identifier" | "shorthand_property_identifier_pattern" => {
                let name = self.e.text(target);
                if declare {
                    self.e.declare(name, v);
                } else {
                    self.e.assign(name, v);
                }
            }
            "object_pattern" => {
                let mut c = target.walk();
                let props: Vec<Node<'t>> = target.named_children(&mut c).collect();
                for p in props {
                    let (key, into) = match p.kind() {
                        "shorthand_property_identifier_pattern" => (self.e.text(p).to_owned(), p),
                        "pair_pattern" => (
                            p.child_by_field_name("key")
                                .map(|k| self.e.text(k).to_owned())
                                .unwrap_or_default(),
                            p.child_by_field_name("value").unwrap_or(p),
                        ),
                        _ => continue,
                    };
                    let item = calls::member(&mut self.e, v.clone(), &key, p.start_byte());
                    self.bind(into, item, declare);
                }
            }
            "array_pattern" => {
                let mut c = target.walk();
                let items: Vec<Node<'t>> = target.named_children(&mut c).collect();
                for (k, n) in items.into_iter().enumerate() {
                    let item = match &v.shape {
                        Shape::List(l) => l.get(k).cloned().unwrap_or_default(),
                        _ => Val::tainted(v.deep_taint()),
                    };
                    self.bind(n, item, declare);
                }
            }
            "member_expression" | "subscript_expression" => {
                let name = self.e.text(target).to_owned();
                self.e.assign(&name, v);
            }
            _ => {}
        }
    }
}

//! The Python front-end: walks a tree-sitter-python tree statement by statement, folds
//! expressions into [`Val`]s (literals with their escapes, `+`, `%`, f-strings, `join`,
//! `format`, slices, comprehensions over known lists, `chr`, decoders, `getattr`,
//! `__import__`), follows variables, imports and aliases, and records events through
//! [`calls`], which knows the APIs.

mod apis;
mod calls;
mod expr;

pub(crate) use expr::percent_format;

use tree_sitter::Node;

use crate::scan::code::engine::{Engine, Func, MAX_DEPTH};
use crate::scan::code::facts::Facts;
use crate::scan::code::value::{MAX_LIST, Shape, Val};

/// Analyses a parsed Python file.
pub(crate) fn analyze(src: &str, root: Node<'_>) -> Facts {
    let mut py = Py { e: Engine::new(src) };
    py.register_functions(root, "");
    py.block(root);
    py.finish_functions();
    py.e.facts
}

struct Py<'t> {
    e: Engine<'t>,
}

impl<'t> Py<'t> {
    /// Registers the functions defined at the top level and in classes (hoisting: a call may
    /// come before the definition in the text, after it at run time).
    fn register_functions(&mut self, n: Node<'t>, class: &str) {
        let mut c = n.walk();
        for child in n.named_children(&mut c) {
            let def = if child.kind() == "decorated_definition" {
                child.child_by_field_name("definition").unwrap_or(child)
            } else {
                child
            };
            match def.kind() {
                "function_definition" => self.register(def, class),
                "class_definition" => {
                    let name = def
                        .child_by_field_name("name")
                        .map(|x| self.e.text(x))
                        .unwrap_or_default();
                    if let Some(body) = def.child_by_field_name("body") {
                        self.register_functions(body, name);
                    }
                }
                _ => {}
            }
        }
    }

    fn register(&mut self, def: Node<'t>, class: &str) {
        let name = def
            .child_by_field_name("name")
            .map(|x| self.e.text(x))
            .unwrap_or_default();
        if name.is_empty() || self.e.by_name.contains_key(name) {
            return;
        }
        let mut params = Vec::new();
        if let Some(ps) = def.child_by_field_name("parameters") {
            let mut c = ps.walk();
            for p in ps.named_children(&mut c) {
                let id = match p.kind() {
                    "identifier" => Some(p),
                    _ => p.child_by_field_name("name").or_else(|| p.named_child(0)),
                };
                if let Some(id) = id.filter(|i| i.kind() == "identifier") {
                    params.push(self.e.text(id).to_owned());
                }
            }
        }
        if !class.is_empty() && params.first().is_some_and(|p| p == "self" || p == "cls") {
            params.remove(0);
        }
        let i = self.e.funcs.len();
        self.e.funcs.push(Func {
            name: name.to_owned(),
            node: def,
            params,
            summary: None,
            busy: false,
        });
        self.e.by_name.insert(name.to_owned(), i);
        if !class.is_empty() {
            self.e.by_name.insert(format!("{class}.{name}"), i);
        }
    }

    /// Analyses function `i` (once) and returns whether it has a summary.
    fn summarise(&mut self, i: usize) {
        let Some(saved) = self.e.start_function(i) else {
            return;
        };
        if let Some(body) = self.e.funcs.get(i).and_then(|f| f.node.child_by_field_name("body")) {
            self.block(body);
        }
        self.e.finish_function(i, saved);
    }

    /// Functions never called from the module are analysed on their own (entry points of a
    /// framework, `main` behind a guard the engine did not follow).
    fn finish_functions(&mut self) {
        for i in 0..self.e.funcs.len() {
            if self.e.exhausted() {
                break;
            }
            self.summarise(i);
        }
    }

    /// Runs the statements of a block (a module, a function body, a branch).
    fn block(&mut self, n: Node<'t>) {
        let outer_gate = self.e.gate.clone();
        let mut c = n.walk();
        for s in n.named_children(&mut c) {
            if !self.e.tick() {
                break;
            }
            if let Some(g) = self.statement(s)
                && self.e.gate.is_none()
            {
                // An early exit under a gate (`if in_sandbox(): sys.exit()`) gates the rest.
                self.e.gate = Some(g);
            }
        }
        self.e.gate = outer_gate;
    }

    /// Runs one statement; returns a gate that applies to the rest of the block.
    fn statement(&mut self, s: Node<'t>) -> Option<crate::scan::code::facts::Gate> {
        if self.e.depth > MAX_DEPTH {
            return None;
        }
        self.e.depth += 1;
        let rest_gate = self.statement_inner(s);
        self.e.depth -= 1;
        rest_gate
    }

    fn statement_inner(&mut self, s: Node<'t>) -> Option<crate::scan::code::facts::Gate> {
        match s.kind() {
            "expression_statement" => {
                let mut c = s.walk();
                for x in s.named_children(&mut c) {
                    self.expr(x);
                }
            }
            "import_statement" | "import_from_statement" | "future_import_statement" => self.import(s),
            "if_statement" => return self.if_statement(s),
            "while_statement" => {
                let cond = s.child_by_field_name("condition").map(|c| (c, self.expr(c)));
                let gate = cond.and_then(|(n, v)| self.e.gate_of(&v, n));
                self.gated(gate.clone(), s.child_by_field_name("body"));
                // `while time.time() < T: sleep(…)` waits for a date: what follows is gated.
                return gate;
            }
            "for_statement" => self.for_statement(s),
            "with_statement" => {
                if let Some(items) = s.named_child(0).filter(|x| x.kind() == "with_clause") {
                    let mut c = items.walk();
                    for item in items.named_children(&mut c) {
                        self.with_item(item);
                    }
                }
                if let Some(b) = s.child_by_field_name("body") {
                    self.block(b);
                }
            }
            "function_definition" => {
                self.register(s, "");
            }
            "decorated_definition" => {
                if let Some(d) = s.child_by_field_name("definition") {
                    return self.statement(d);
                }
            }
            "class_definition" => {
                if let Some(b) = s.child_by_field_name("body") {
                    let name = s
                        .child_by_field_name("name")
                        .map(|x| self.e.text(x))
                        .unwrap_or_default();
                    self.register_functions(b, name);
                    // Class attributes are evaluated; methods were registered.
                    let mut c = b.walk();
                    for x in b.named_children(&mut c) {
                        if x.kind() == "expression_statement" {
                            self.statement(x);
                        }
                    }
                }
            }
            "return_statement" => {
                let v = s.named_child(0).map(|x| self.expr(x)).unwrap_or_default();
                self.e.returns(v);
            }
            "block" | "module" | "try_statement" | "else_clause" | "finally_clause" | "except_clause"
            | "match_statement" | "case_clause" => {
                let mut c = s.walk();
                for x in s.named_children(&mut c) {
                    if x.kind() == "block" {
                        self.block(x);
                    } else {
                        self.statement(x);
                    }
                }
            }
            "comment" | "pass_statement" | "break_statement" | "continue_statement" | "global_statement"
            | "nonlocal_statement" => {}
            _ => {
                // Anything else (`raise`, `assert`, `del`, `print` of Python 2, …): its
                // expressions are still evaluated, so the calls in it are seen.
                let mut c = s.walk();
                for x in s.named_children(&mut c) {
                    self.expr(x);
                }
            }
        }
        None
    }

    fn gated(&mut self, gate: Option<crate::scan::code::facts::Gate>, body: Option<Node<'t>>) {
        let Some(body) = body else { return };
        let saved = self.e.gate.clone();
        if self.e.gate.is_none() {
            self.e.gate = gate;
        }
        if body.kind() == "block" {
            self.block(body);
        } else {
            self.statement(body);
        }
        self.e.gate = saved;
    }

    fn if_statement(&mut self, s: Node<'t>) -> Option<crate::scan::code::facts::Gate> {
        let cond_node = s.child_by_field_name("condition")?;
        let cond = self.expr(cond_node);
        let gate = self.e.gate_of(&cond, cond_node);
        let body = s.child_by_field_name("consequence");
        self.gated(gate.clone(), body);
        let mut c = s.walk();
        for alt in s.children_by_field_name("alternative", &mut c) {
            if alt.kind() == "elif_clause" {
                let cn = alt.child_by_field_name("condition");
                let v = cn.map(|x| self.expr(x)).unwrap_or_default();
                let g = cn.and_then(|x| self.e.gate_of(&v, x)).or_else(|| gate.clone());
                self.gated(g, alt.child_by_field_name("consequence"));
            } else {
                self.gated(gate.clone(), alt.child_by_field_name("body").or(alt.named_child(0)));
            }
        }
        // `if probe(): exit()` gates what follows it.
        body.filter(|b| gate.is_some() && self.exits(*b)).and(gate)
    }

    /// Whether a block does nothing but leave (`return`, `sys.exit()`, `raise`).
    fn exits(&self, b: Node<'t>) -> bool {
        let mut c = b.walk();
        let stmts: Vec<Node<'t>> = b.named_children(&mut c).filter(|x| x.kind() != "comment").collect();
        !stmts.is_empty()
            && stmts.iter().all(|x| {
                let t = self.e.text(*x);
                matches!(x.kind(), "return_statement" | "raise_statement" | "pass_statement")
                    || t.starts_with("sys.exit")
                    || t.starts_with("exit(")
                    || t.starts_with("quit(")
                    || t.starts_with("os._exit")
            })
    }

    fn for_statement(&mut self, s: Node<'t>) {
        let left = s.child_by_field_name("left");
        let iter = s.child_by_field_name("right").map(|r| self.expr(r)).unwrap_or_default();
        let Some(body) = s.child_by_field_name("body") else {
            return;
        };
        let items: Vec<Val> = match &iter.shape {
            Shape::List(items) => items.clone(),
            Shape::Str(st) => st.chars().map(|c| Val::str(c.to_string())).collect(),
            _ => Vec::new(),
        };
        let name = left.filter(|l| l.kind() == "identifier").map(|l| self.e.text(l));
        if items.is_empty() || items.len() > MAX_LIST || name.is_none() || body_too_big(body) {
            if let Some(n) = name {
                self.e.declare(n, Val::tainted(iter.deep_taint()));
            }
            self.block(body);
            return;
        }
        // A loop over a known list (the classic `for c in codes: s += chr(c)`) is run.
        for item in items {
            if !self.e.tick() {
                break;
            }
            if let Some(n) = name {
                self.e.declare(n, item);
            }
            self.block(body);
        }
    }

    fn with_item(&mut self, item: Node<'t>) {
        let Some(v) = item.child_by_field_name("value") else {
            return;
        };
        if v.kind() == "as_pattern" {
            let val = v.named_child(0).map(|x| self.expr(x)).unwrap_or_default();
            if let Some(alias) = v
                .child_by_field_name("alias")
                .and_then(|a| a.named_child(0).or(Some(a)))
            {
                self.bind(alias, val);
            }
        } else {
            self.expr(v);
        }
    }

    fn import(&mut self, s: Node<'t>) {
        let module = s
            .child_by_field_name("module_name")
            .map(|m| self.e.text(m).to_owned())
            .unwrap_or_default();
        let mut c = s.walk();
        for name in s.children_by_field_name("name", &mut c) {
            let (path, alias) = match name.kind() {
                "aliased_import" => (
                    name.child_by_field_name("name")
                        .map(|x| self.e.text(x))
                        .unwrap_or_default(),
                    name.child_by_field_name("alias").map(|x| self.e.text(x)),
                ),
                _ => (self.e.text(name), None),
            };
            let full = if module.is_empty() {
                path.to_owned()
            } else {
                format!("{module}.{path}")
            };
            // `import a.b` binds `a`; `import a.b as c` binds `c` to `a.b`.
            let (bound, target) = match alias {
                Some(a) => (a.to_owned(), full),
                None if module.is_empty() => {
                    let top = path.split('.').next().unwrap_or(path).to_owned();
                    (top.clone(), top)
                }
                None => (path.to_owned(), full),
            };
            self.e.declare(&bound, calls::api_val(&target));
        }
    }

    /// Binds an assignment target (a name, a tuple of names, an attribute, a subscript).
    fn bind(&mut self, target: Node<'t>, v: Val) {
        match target.kind() {
            "identifier" => self.e.declare(self.e.text(target), v),
            "pattern_list" | "tuple_pattern" | "list_pattern" | "tuple" | "list" => {
                let mut c = target.walk();
                let names: Vec<Node<'t>> = target.named_children(&mut c).collect();
                for (k, n) in names.into_iter().enumerate() {
                    let item = match &v.shape {
                        Shape::List(items) => items.get(k).cloned().unwrap_or_default(),
                        _ => Val::tainted(v.deep_taint()),
                    };
                    self.bind(n, item);
                }
            }
            // `self.key = …`, `cfg["k"] = …`: kept under the written name.
            "attribute" | "subscript" => {
                let name = self.e.text(target).to_owned();
                self.e.declare(&name, v);
            }
            _ => {}
        }
    }
}

/// A loop body too large to run once per element.
fn body_too_big(b: Node<'_>) -> bool {
    b.end_byte().saturating_sub(b.start_byte()) > 2048
}

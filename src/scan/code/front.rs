//! What the front-ends share on top of the [`Engine`]: the depth and step budget around a
//! statement or an expression, blocks whose early exits gate the rest ([`Front`]), and for
//! the two that fold expressions (Python, JavaScript; [`Fold`]) the fields of a node, names,
//! the operators with the language's [`Operators`] table, assignments, gated bodies and the
//! summaries of the file's own functions.

use tree_sitter::Node;

use crate::scan::code::engine::{Engine, MAX_DEPTH};
use crate::scan::code::facts::Gate;
use crate::scan::code::ops::{self, Operators};
use crate::scan::code::value::{Shape, Taint, Val};

/// A front-end walking a tree's statements over the engine.
pub(crate) trait Front<'t>: Sized {
    /// The engine.
    fn engine(&mut self) -> &mut Engine<'t>;

    /// Runs one statement; a gate that applies to the rest of its block.
    fn statement(&mut self, s: Node<'t>) -> Option<Gate>;

    /// Runs `f` one nesting level deeper; `None` past [`MAX_DEPTH`] or, with `tick`, once
    /// the step budget is spent.
    fn deeper<T>(&mut self, tick: bool, f: impl FnOnce(&mut Self) -> T) -> Option<T> {
        let e = self.engine();
        if e.depth > MAX_DEPTH || (tick && !e.tick()) {
            return None;
        }
        e.depth += 1;
        let v = f(self);
        self.engine().depth -= 1;
        Some(v)
    }

    /// Runs the statements of a block (a module, a function body, a branch).
    fn block(&mut self, n: Node<'t>) {
        let outer = self.engine().gate.clone();
        let mut c = n.walk();
        for s in n.named_children(&mut c) {
            if !self.engine().tick() {
                break;
            }
            if let Some(g) = self.statement(s)
                && self.engine().gate.is_none()
            {
                // An early exit under a gate (`if in_sandbox(): sys.exit()`) gates the rest.
                self.engine().gate = Some(g);
            }
        }
        self.engine().gate = outer;
    }
}

/// A front-end that folds expressions into values (Python, JavaScript).
pub(crate) trait Fold<'t>: Front<'t> {
    /// The language's binary operators.
    const OPERATORS: &'static Operators;

    /// The node kind of a block of statements.
    const BLOCK: &'static str;

    /// The language's expressions, evaluated within the budget by [`Fold::expr`].
    fn expr_inner(&mut self, n: Node<'t>) -> Val;

    /// The language's statements, run within the depth by [`Fold::nested_statement`].
    fn statement_inner(&mut self, s: Node<'t>) -> Option<Gate>;

    /// Runs the body of a function of the file.
    fn function_body(&mut self, body: Node<'t>);

    /// Binds an assignment target to `v`.
    fn assign_to(&mut self, target: Node<'t>, v: Val);

    /// The value of a name that is neither a variable nor a function of the file.
    fn global(name: &str) -> Val;

    /// Evaluates an expression (unknown past the depth or the step budget).
    fn expr(&mut self, n: Node<'t>) -> Val {
        self.deeper(true, |f| f.expr_inner(n)).unwrap_or_default()
    }

    /// Runs a statement within the depth ([`Front::statement`] of these front-ends).
    fn nested_statement(&mut self, s: Node<'t>) -> Option<Gate> {
        self.deeper(false, |f| f.statement_inner(s)).flatten()
    }

    /// The value of field `name` of `n` (unknown when it has none).
    fn field(&mut self, n: Node<'t>, name: &str) -> Val {
        n.child_by_field_name(name).map(|x| self.expr(x)).unwrap_or_default()
    }

    /// The text of field `name` of `n` (empty when it has none).
    fn field_text(&mut self, n: Node<'t>, name: &str) -> &'t str {
        n.child_by_field_name(name)
            .map(|x| self.engine().text(x))
            .unwrap_or_default()
    }

    /// The value of a name: a variable, a function of the file, else a global.
    fn name_value(&mut self, name: &str) -> Val {
        let e = self.engine();
        match e.lookup(name) {
            Some(v) => v.clone(),
            None => match e.by_name.get(name) {
                Some(&i) => Val {
                    shape: Shape::Func(i),
                    ..Val::default()
                },
                None => Self::global(name),
            },
        }
    }

    /// A binary operator (`left operator right`), folded with [`Fold::OPERATORS`].
    fn binary(&mut self, n: Node<'t>) -> Val {
        let l = self.field(n, "left");
        let r = self.field(n, "right");
        let op = self.field_text(n, "operator");
        let v = ops::binary(Self::OPERATORS, op, l, r);
        self.engine().record_folded(n.start_byte(), &v);
        v
    }

    /// A unary operator (`operator argument`).
    fn unary(&mut self, n: Node<'t>) -> Val {
        let v = self.field(n, "argument");
        let op = self.field_text(n, "operator");
        ops::unary(op, &v)
    }

    /// An assignment of field `value` to field `target`; the value assigned.
    fn assignment(&mut self, n: Node<'t>, target: &str, value: &str) -> Val {
        let v = self.field(n, value);
        if let Some(l) = n.child_by_field_name(target) {
            self.assign_to(l, v.clone());
        }
        v
    }

    /// An augmented assignment (`left += right`); the value assigned.
    fn augmented(&mut self, n: Node<'t>) -> Val {
        let l = n.child_by_field_name("left");
        let old = l.map(|x| self.expr(x)).unwrap_or_default();
        let r = self.field(n, "right");
        let op = self.field_text(n, "operator");
        // The result carries the old value's taint: a string built in a loop or callback
        // from unknown chunks keeps theirs.
        let v = ops::binary(Self::OPERATORS, op.trim_end_matches('='), old, r);
        self.engine().record_folded(n.start_byte(), &v);
        if let Some(l) = l {
            self.assign_to(l, v.clone());
        }
        v
    }

    /// An expression the engine does not fold: unknown, but its parts are evaluated (calls in
    /// them are seen) and their taint kept.
    fn parts(&mut self, n: Node<'t>) -> Val {
        let mut t = Taint::default();
        let mut c = n.walk();
        let kids: Vec<Node<'t>> = n.named_children(&mut c).collect();
        for k in kids {
            let v = self.expr(k);
            t.join(&v.deep_taint());
        }
        Val::tainted(t)
    }

    /// Runs `body` (a block or a single statement) under `gate`, unless a gate already holds.
    fn gated(&mut self, gate: Option<Gate>, body: Option<Node<'t>>) {
        let Some(body) = body else { return };
        let saved = self.engine().gate.clone();
        if self.engine().gate.is_none() {
            self.engine().gate = gate;
        }
        if body.kind() == Self::BLOCK {
            self.block(body);
        } else {
            self.statement(body);
        }
        self.engine().gate = saved;
    }

    /// Analyses function `i` once, into its summary.
    fn summarise(&mut self, i: usize) {
        let Some(saved) = self.engine().start_function(i) else {
            return;
        };
        if let Some(body) = self
            .engine()
            .funcs
            .get(i)
            .and_then(|f| f.node.child_by_field_name("body"))
        {
            self.function_body(body);
        }
        self.engine().finish_function(i, saved);
    }

    /// Functions never called from the module are analysed on their own (entry points of a
    /// framework, `main` behind a guard the engine did not follow).
    fn summarise_all(&mut self) {
        for i in 0..self.engine().funcs.len() {
            if self.engine().exhausted() {
                break;
            }
            self.summarise(i);
        }
    }

    /// A call of function `i` of the file at `n`: its summary replayed with `args`.
    fn call_local(&mut self, i: usize, args: &[Val], n: Node<'t>) -> Val {
        self.summarise(i);
        self.engine().instantiate(i, args, n.start_byte())
    }
}

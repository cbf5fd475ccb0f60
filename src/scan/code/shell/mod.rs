//! The shell front-end: walks a tree-sitter-bash tree, folds words (quotes, `$'…'`,
//! variables, `$(echo … | base64 -d)`, `printf '\x63…'`, `rev`, ROT13 with `tr`), follows
//! pipelines (what `curl` prints is what `sh` runs), redirections (`> file`, `< file`,
//! `/dev/tcp/…`), functions and aliases, and records events. Every statement whose text
//! changed when folded is given to the text rules as it would have been written plainly.
//!
//! Shell runs a script line by line, so a file with a syntax error is still analysed: the
//! statements tree-sitter could not parse are skipped.

mod commands;
mod words;

use std::collections::HashMap;

use tree_sitter::Node;

use crate::scan::code::effects::path_test;
use crate::scan::code::engine::{Engine, MAX_DEPTH};
use crate::scan::code::facts::{Ev, Facts, Gate};
use crate::scan::code::value::{Taint, Val};

/// Commands that users type all day: an alias or function with one of these names runs
/// instead of the real command.
pub(crate) const SHADOWABLE: &[&str] = &[
    "sudo",
    "su",
    "ssh",
    "scp",
    "sftp",
    "git",
    "ls",
    "cd",
    "cat",
    "cp",
    "mv",
    "rm",
    "curl",
    "wget",
    "python",
    "python3",
    "pip",
    "pip3",
    "npm",
    "npx",
    "node",
    "docker",
    "kubectl",
    "aws",
    "gcloud",
    "az",
    "gh",
    "passwd",
    "gpg",
    "ssh-add",
    "ssh-keygen",
    "openssl",
    "make",
    "apt",
    "apt-get",
    "brew",
    "yarn",
    "pnpm",
    "bash",
    "sh",
    "zsh",
    "echo",
    "grep",
    "find",
    "chmod",
    "chown",
    "kill",
    "ps",
    "which",
    "whoami",
    "id",
    "clear",
    "exit",
    "vim",
    "nano",
    "code",
    "claude",
    "cargo",
    "go",
    "terraform",
    "op",
];

/// Analyses a parsed shell script. `nested` analyses a string as another script (an alias
/// value, an `echo '…' >> ~/.bashrc` payload): depth-limited by the caller.
pub(crate) fn analyze(src: &str, root: Node<'_>, nested: &dyn Fn(&str) -> Option<Facts>) -> Facts {
    let mut sh = Sh {
        e: Engine::new(src),
        functions: HashMap::new(),
        nested,
    };
    sh.block(root);
    sh.e.facts
}

/// One command, its words folded.
struct Cmd<'a> {
    /// The program's base name.
    base: String,
    /// The program as written (folded).
    program: Val,
    /// Its arguments.
    args: Vec<Val>,
    /// The arguments' text (empty when unknown).
    strs: Vec<String>,
    /// Its standard input.
    input: Option<Val>,
    /// The taint of its standard input.
    input_t: Taint,
    /// Files its output is redirected to.
    to: &'a [Val],
    /// Byte offset of the command.
    at: usize,
}

struct Sh<'t, 'n> {
    e: Engine<'t>,
    functions: HashMap<String, u32>,
    nested: &'n dyn Fn(&str) -> Option<Facts>,
}

impl<'t> Sh<'t, '_> {
    fn block(&mut self, n: Node<'t>) {
        let outer = self.e.gate.clone();
        let mut c = n.walk();
        let kids: Vec<Node<'t>> = n.named_children(&mut c).collect();
        for s in kids {
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

    /// One statement; a gate for the rest of the block (`[ -f /.dockerenv ] && exit`).
    fn statement(&mut self, s: Node<'t>) -> Option<Gate> {
        if self.e.depth > MAX_DEPTH || s.is_error() {
            return None;
        }
        self.e.depth += 1;
        self.record_resolved(s);
        let g = self.statement_inner(s);
        self.e.depth -= 1;
        g
    }

    fn statement_inner(&mut self, s: Node<'t>) -> Option<Gate> {
        match s.kind() {
            "variable_assignment" => self.assignment(s),
            "declaration_command" => {
                let mut c = s.walk();
                let kids: Vec<Node<'t>> = s.named_children(&mut c).collect();
                for k in kids.into_iter().filter(|k| k.kind() == "variable_assignment") {
                    self.assignment(k);
                }
            }
            "command" | "pipeline" | "redirected_statement" => {
                self.run(s, None);
            }
            "list" => {
                // `probe && exit`: the rest is gated.
                let mut c = s.walk();
                let kids: Vec<Node<'t>> = s.named_children(&mut c).collect();
                if let [left, right] = kids.as_slice()
                    && self.is_exit(*right)
                {
                    let v = self.condition(*left);
                    return self.e.gate_of(&v, *left);
                }
                for k in kids {
                    self.statement(k);
                }
            }
            "if_statement" => return self.if_statement(s),
            "while_statement" => {
                let cond = s.child_by_field_name("condition");
                let v = cond.map(|c| self.condition(c)).unwrap_or_default();
                let gate = cond.and_then(|c| self.e.gate_of(&v, c));
                let saved = self.e.gate.clone();
                if self.e.gate.is_none() {
                    self.e.gate = gate.clone();
                }
                if let Some(b) = s.child_by_field_name("body") {
                    self.block(b);
                }
                self.e.gate = saved;
                return gate;
            }
            "function_definition" => self.function(s),
            "comment" => {}
            _ => {
                let mut c = s.walk();
                let kids: Vec<Node<'t>> = s.named_children(&mut c).collect();
                for k in kids {
                    self.statement(k);
                }
            }
        }
        None
    }

    fn is_exit(&self, n: Node<'t>) -> bool {
        let t = self.e.text(n).trim();
        t == "exit" || t.starts_with("exit ") || t == "return" || t.starts_with("return ")
    }

    fn if_statement(&mut self, s: Node<'t>) -> Option<Gate> {
        let mut c = s.walk();
        let conds: Vec<Node<'t>> = s
            .children_by_field_name("condition", &mut c)
            .filter(|x| x.is_named())
            .collect();
        let mut v = Val::unknown();
        for cn in &conds {
            let x = self.condition(*cn);
            v.taint.join(&x.taint);
        }
        let gate = conds.first().and_then(|cn| self.e.gate_of(&v, *cn));
        let saved = self.e.gate.clone();
        if self.e.gate.is_none() {
            self.e.gate = gate.clone();
        }
        let mut c = s.walk();
        let body: Vec<Node<'t>> = s.named_children(&mut c).filter(|k| !conds.contains(k)).collect();
        let mut exits = !body.is_empty();
        for k in body {
            if !matches!(k.kind(), "elif_clause" | "else_clause" | "comment") && !self.is_exit(k) {
                exits = false;
            }
            self.statement(k);
        }
        self.e.gate = saved;
        gate.filter(|_| exits)
    }

    /// The value of a condition: `[ … ]` tests and commands, their taint joined.
    fn condition(&mut self, n: Node<'t>) -> Val {
        let mut t = Taint::default();
        self.condition_into(n, &mut t, 0);
        Val::tainted(t)
    }

    fn condition_into(&mut self, n: Node<'t>, t: &mut Taint, depth: usize) {
        if depth > 16 {
            return;
        }
        match n.kind() {
            "command" | "pipeline" | "redirected_statement" => {
                let v = self.run(n, None);
                t.join(&v.deep_taint());
            }
            "unary_expression" => {
                let op = n.child(0).map(|o| self.e.text(o)).unwrap_or_default();
                let last = u32::try_from(n.named_child_count().saturating_sub(1)).unwrap_or(0);
                let arg = n.named_child(last).map(|x| self.word(x)).unwrap_or_default();
                if matches!(op, "-f" | "-e" | "-d" | "-x" | "-r" | "-s") {
                    t.join(&path_test(&arg).taint);
                } else {
                    t.join(&arg.deep_taint());
                }
            }
            "string"
            | "word"
            | "raw_string"
            | "simple_expansion"
            | "expansion"
            | "command_substitution"
            | "concatenation"
            | "number" => {
                let v = self.word(n);
                t.join(&v.deep_taint());
            }
            _ => {
                let mut c = n.walk();
                let kids: Vec<Node<'t>> = n.named_children(&mut c).collect();
                for k in kids {
                    self.condition_into(k, t, depth + 1);
                }
            }
        }
    }

    fn assignment(&mut self, s: Node<'t>) {
        let Some(name) = s.child_by_field_name("name").map(|n| self.e.text(n)) else {
            return;
        };
        let v = s
            .child_by_field_name("value")
            .map(|v| self.word(v))
            .unwrap_or_else(|| Val::str(""));
        self.e.declare(name, v);
    }

    fn function(&mut self, s: Node<'t>) {
        let name = s
            .child_by_field_name("name")
            .map(|n| self.e.text(n))
            .unwrap_or_default()
            .to_owned();
        let Some(body) = s.child_by_field_name("body") else {
            return;
        };
        let scope = self.e.facts.scope(&format!("function `{name}`"));
        self.functions.insert(name.clone(), scope);
        let saved = std::mem::replace(&mut self.e.scope, scope);
        let gate = self.e.gate.take();
        self.e.enter_closure(&[]);
        self.block(body);
        self.e.leave_closure();
        self.e.scope = saved;
        self.e.gate = gate;
        if SHADOWABLE.contains(&name.as_str()) {
            let body_text = self.e.text(body);
            let calls_real = calls_real(body_text, &name);
            self.e.emit(
                s.start_byte(),
                Ev::Shadow {
                    name,
                    how: "function",
                    body: scope,
                    calls_real,
                },
            );
        }
    }

    /// `alias NAME=VALUE`: the value is a script of its own.
    fn alias(&mut self, arg: &Val, at: usize) {
        let Some(text) = arg.text() else { return };
        let Some((name, value)) = text.split_once('=') else {
            return;
        };
        let name = name.trim().to_owned();
        if !SHADOWABLE.contains(&name.as_str()) {
            return;
        }
        let scope = self.e.facts.scope(&format!("alias `{name}`"));
        if let Some(inner) = (self.nested)(value) {
            self.merge(inner, at, scope);
        }
        self.e.emit(
            at,
            Ev::Shadow {
                calls_real: calls_real(value, &name),
                name,
                how: "alias",
                body: scope,
            },
        );
    }

    /// Adds the facts of a nested script at `at`, under `scope`.
    fn merge(&mut self, inner: Facts, at: usize, scope: u32) {
        for mut ev in inner.events {
            ev.at = at;
            ev.scope = scope;
            if ev.gate.is_none() {
                ev.gate = self.e.gate.clone();
            }
            self.e.facts.events.push(ev);
        }
        for (_, v) in inner.folded {
            self.e.facts.folded.push((at, v));
        }
    }

    /// Records the statement as folded when words in it changed.
    fn record_resolved(&mut self, s: Node<'t>) {
        if !matches!(s.kind(), "command" | "pipeline" | "redirected_statement" | "list") {
            return;
        }
        let mut how = None;
        let text = self.resolve(s, &mut how, 0);
        if let Some(how) = how
            && text != self.e.text(s)
        {
            let v = Val::folded(text, how);
            self.e.record_folded(s.start_byte(), &v);
        }
    }

    /// The statement's text with every word replaced by its folded value.
    fn resolve(&mut self, n: Node<'t>, how: &mut Option<&'static str>, depth: usize) -> String {
        if depth > 24 {
            return self.e.text(n).to_owned();
        }
        if matches!(
            n.kind(),
            "simple_expansion"
                | "expansion"
                | "command_substitution"
                | "string"
                | "raw_string"
                | "ansi_c_string"
                | "concatenation"
        ) {
            let v = self.word_quiet(n);
            if let Some(t) = v.text() {
                if v.how.is_some() || matches!(n.kind(), "simple_expansion" | "expansion") {
                    *how = how.or(v.how).or(Some("variable expansion"));
                }
                return t;
            }
            return self.e.text(n).to_owned();
        }
        if n.child_count() == 0 {
            return self.e.text(n).to_owned();
        }
        let mut out = String::new();
        let mut pos = n.start_byte();
        let mut c = n.walk();
        let kids: Vec<Node<'t>> = n.children(&mut c).collect();
        for k in kids {
            out.push_str(self.e.src.get(pos..k.start_byte()).unwrap_or_default());
            out.push_str(&self.resolve(k, how, depth + 1));
            pos = k.end_byte();
        }
        out.push_str(self.e.src.get(pos..n.end_byte()).unwrap_or_default());
        out
    }
}

/// Whether a shadowing body ends by running the real command (so the user sees it work).
fn calls_real(body: &str, name: &str) -> bool {
    [
        format!("command {name}"),
        format!("builtin {name}"),
        format!("/usr/bin/{name}"),
        format!("/bin/{name}"),
        format!("\\{name}"),
        format!("$(which {name})"),
        format!("`which {name}`"),
        format!("env {name}"),
    ]
    .iter()
    .any(|p| body.contains(p.as_str()))
        || body.trim_start().starts_with(&format!("{name} "))
}

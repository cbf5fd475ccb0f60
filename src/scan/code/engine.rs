//! The part of the folding engine the Python and JavaScript front-ends share: variables in
//! frames (module, function, inline closure), events with their scope and gate, the step
//! budget, and function summaries.
//!
//! A function defined in the file is analysed once, with each parameter an opaque
//! [`Shape::Param`]. Its events go into the facts under its own scope; those that depend on
//! a parameter are also kept as templates, and a call with known arguments replays them at
//! the call site with the arguments substituted (so `def run(c): os.system(c)` called as
//! `run(b64decode(…))` is an execution of decoded text where it is called). Its return value
//! is substituted the same way. One level of summaries is enough for the droppers seen in
//! the wild, which hide one step behind a helper.

use std::collections::HashMap;

use tree_sitter::Node;

use crate::scan::code::facts::{Ev, Event, Facts, Gate, GateKind};
use crate::scan::code::value::{Shape, Taint, Val, taint};

/// Evaluation steps allowed for one file (nodes visited, loop iterations); past it the
/// engine stops folding and the rules see what was found so far.
pub(crate) const STEP_BUDGET: usize = 400_000;

/// Most bytes of folded strings recorded for one file (each is scanned by the text rules).
pub(crate) const MAX_FOLDED_BYTES: usize = 4 * 1024 * 1024;

/// Deepest expression or statement nesting the engine follows.
pub(crate) const MAX_DEPTH: usize = 96;

/// A function of the file.
pub(crate) struct Func<'t> {
    /// Its name.
    pub(crate) name: String,
    /// Its definition.
    pub(crate) node: Node<'t>,
    /// Its parameters' names, in order.
    pub(crate) params: Vec<String>,
    /// Its summary, once analysed.
    pub(crate) summary: Option<Summary>,
    /// Being analysed (recursion).
    pub(crate) busy: bool,
}

/// What a call of a function does, in terms of its parameters.
#[derive(Clone, Debug, Default)]
pub(crate) struct Summary {
    /// The return value (joined over every `return`).
    pub(crate) ret: Val,
    /// The events that depend on a parameter.
    pub(crate) templates: Vec<Event>,
}

/// One frame of variables.
#[derive(Default)]
struct Frame {
    vars: HashMap<String, Val>,
    /// Inline closures see their enclosing frames; functions see only the module.
    closure: bool,
    /// The function this frame analyses, when it is a function's.
    func: Option<usize>,
    ret: Option<Val>,
    templates: Vec<Event>,
}

/// The shared state of one analysis.
pub(crate) struct Engine<'t> {
    /// The text analysed.
    pub(crate) src: &'t str,
    /// What was found.
    pub(crate) facts: Facts,
    frames: Vec<Frame>,
    /// The scope events are recorded under.
    pub(crate) scope: u32,
    /// The gate around what is being evaluated.
    pub(crate) gate: Option<Gate>,
    steps: usize,
    /// Bytes of folded strings recorded so far.
    folded_bytes: usize,
    /// Current nesting depth.
    pub(crate) depth: usize,
    /// The functions of the file.
    pub(crate) funcs: Vec<Func<'t>>,
    /// Functions by name (and `Class.method`).
    pub(crate) by_name: HashMap<String, usize>,
}

impl<'t> Engine<'t> {
    /// A new engine over `src`.
    pub(crate) fn new(src: &'t str) -> Self {
        Engine {
            src,
            facts: Facts::new(),
            frames: vec![Frame::default()],
            scope: 0,
            gate: None,
            steps: 0,
            folded_bytes: 0,
            depth: 0,
            funcs: Vec::new(),
            by_name: HashMap::new(),
        }
    }

    /// The source text of a node.
    pub(crate) fn text(&self, n: Node<'_>) -> &'t str {
        self.src.get(n.byte_range()).unwrap_or_default()
    }

    /// Counts one step; `false` once the budget is spent.
    pub(crate) fn tick(&mut self) -> bool {
        self.steps += 1;
        self.steps <= STEP_BUDGET
    }

    /// Whether the budget is spent.
    pub(crate) fn exhausted(&self) -> bool {
        self.steps > STEP_BUDGET
    }

    /// The value of a variable, looking through inline closures to their function and then
    /// the module.
    pub(crate) fn lookup(&self, name: &str) -> Option<&Val> {
        for f in self.frames.iter().rev() {
            if let Some(v) = f.vars.get(name) {
                return Some(v);
            }
            if !f.closure {
                break;
            }
        }
        self.frames.first().and_then(|f| f.vars.get(name))
    }

    /// Sets a variable in the innermost frame.
    pub(crate) fn declare(&mut self, name: &str, mut v: Val) {
        if v.origin.is_none() && !matches!(v.shape, Shape::Str(_) | Shape::Num(_)) {
            v.origin = Some(name.to_owned());
        }
        if let Some(f) = self.frames.last_mut() {
            f.vars.insert(name.to_owned(), v);
        }
    }

    /// Sets a variable where it is already defined (a closure writing its function's
    /// variable), else in the innermost frame.
    pub(crate) fn assign(&mut self, name: &str, v: Val) {
        let n = self.frames.len();
        for i in (0..n).rev() {
            if self.frames[i].vars.contains_key(name) {
                if let Some(old) = self.frames[i].vars.get_mut(name) {
                    *old = v;
                }
                return;
            }
            if !self.frames[i].closure {
                break;
            }
        }
        self.declare(name, v);
    }

    /// Records an event at byte offset `at`.
    pub(crate) fn emit(&mut self, at: usize, kind: Ev) {
        let e = Event {
            at,
            scope: self.scope,
            gate: self.gate.clone(),
            kind,
        };
        if depends_on_params(&e.kind)
            && let Some(f) = self.frames.iter_mut().rev().find(|f| f.func.is_some())
        {
            f.templates.push(e.clone());
        }
        self.facts.events.push(e);
    }

    /// Records a folded string (a value computed, not written) for the text rules.
    pub(crate) fn record_folded(&mut self, at: usize, v: &Val) {
        let len = v.as_str().map_or(0, str::len);
        if v.how.is_some()
            && v.as_str().is_some_and(|s| s.trim().len() >= 4)
            && self.folded_bytes + len <= MAX_FOLDED_BYTES
        {
            self.folded_bytes += len;
            // A string grown in a loop is recorded once, as it ends up.
            match self.facts.folded.iter_mut().find(|(a, _)| *a == at) {
                Some(slot) => slot.1 = v.clone(),
                None => self.facts.folded.push((at, v.clone())),
            }
        }
    }

    /// Joins `v` into the current function's return value.
    pub(crate) fn returns(&mut self, v: Val) {
        if let Some(f) = self.frames.iter_mut().rev().find(|f| !f.closure) {
            f.ret = Some(match f.ret.take() {
                None => v,
                Some(mut old) => {
                    old.taint.join(&v.taint);
                    if old.shape != v.shape {
                        old.shape = Shape::Unknown;
                    }
                    old
                }
            });
        }
    }

    /// Enters an inline closure (a lambda or arrow function analysed where it is written)
    /// with its parameters bound.
    pub(crate) fn enter_closure(&mut self, params: &[(String, Val)]) {
        let mut f = Frame {
            closure: true,
            ..Frame::default()
        };
        for (n, v) in params {
            f.vars.insert(n.clone(), v.clone());
        }
        self.frames.push(f);
    }

    /// Leaves an inline closure; the value it returned.
    pub(crate) fn leave_closure(&mut self) -> Option<Val> {
        self.frames.pop().and_then(|f| f.ret)
    }

    /// Starts the analysis of function `i`, when it has no summary yet and is not being
    /// analysed: a new scope, a frame with its parameters. Returns the saved state for
    /// [`Engine::finish_function`].
    pub(crate) fn start_function(&mut self, i: usize) -> Option<(u32, Option<Gate>)> {
        let f = self.funcs.get_mut(i)?;
        if f.summary.is_some() || f.busy || self.frames.len() > 8 {
            return None;
        }
        f.busy = true;
        let name = format!("function `{}`", f.name);
        let params = f.params.clone();
        let saved = (self.scope, self.gate.take());
        self.scope = self.facts.scope(&name);
        let mut frame = Frame {
            func: Some(i),
            ..Frame::default()
        };
        for (k, p) in params.iter().enumerate() {
            frame.vars.insert(
                p.clone(),
                Val {
                    shape: Shape::Param(k),
                    taint: Taint {
                        params: 1u32.checked_shl(u32::try_from(k).unwrap_or(31)).unwrap_or(0),
                        ..Taint::default()
                    },
                    how: None,
                    origin: Some(p.clone()),
                },
            );
        }
        self.frames.push(frame);
        Some(saved)
    }

    /// Ends the analysis started by [`Engine::start_function`] and stores the summary.
    pub(crate) fn finish_function(&mut self, i: usize, saved: (u32, Option<Gate>)) {
        let frame = self.frames.pop().unwrap_or_default();
        (self.scope, self.gate) = saved;
        if let Some(f) = self.funcs.get_mut(i) {
            f.busy = false;
            f.summary = Some(Summary {
                ret: frame.ret.unwrap_or_default(),
                templates: frame.templates,
            });
        }
    }

    /// Replays function `i`'s summary for a call at `at` with `args`; the call's value.
    pub(crate) fn instantiate(&mut self, i: usize, args: &[Val], at: usize) -> Val {
        let Some(summary) = self.funcs.get(i).and_then(|f| f.summary.clone()) else {
            // Recursion, or not analysable: unknown, carrying the arguments' taint.
            let mut t = Taint::default();
            args.iter().for_each(|a| t.join(&a.deep_taint()));
            return Val::tainted(t);
        };
        // Replaying with arguments that say nothing would only repeat the function's events.
        let informative = args
            .iter()
            .any(|a| !matches!(a.shape, Shape::Unknown) || a.deep_taint().bits != 0 || a.deep_taint().params != 0);
        for e in summary.templates.iter().filter(|_| informative) {
            let kind = subst_event(&e.kind, args);
            if !depends_on_params(&kind) || self.frames.iter().any(|f| f.func.is_some()) {
                let gate = self.gate.clone().or_else(|| e.gate.clone());
                let saved = std::mem::replace(&mut self.gate, gate);
                self.emit(at, kind);
                self.gate = saved;
            }
        }
        subst(&summary.ret, args)
    }

    /// A gate for a condition whose value is `cond`, written at `n`.
    pub(crate) fn gate_of(&self, cond: &Val, n: Node<'_>) -> Option<Gate> {
        let t = cond.deep_taint();
        let kind = if t.has(taint::PROBE) {
            GateKind::Probe
        } else if t.has(taint::TIME) && t.has(taint::DATE_CONST) {
            GateKind::Time
        } else {
            return None;
        };
        let what: String = self
            .text(n)
            .lines()
            .next()
            .unwrap_or_default()
            .chars()
            .take(80)
            .collect();
        Some(Gate {
            kind,
            what,
            at: n.start_byte(),
        })
    }
}

/// Whether a number written in the file looks like a fixed moment: seconds or milliseconds
/// since 1970 between 2000 and 2100, or a `YYYYMMDD` date.
pub(crate) fn is_epoch_like(n: i64) -> bool {
    (946_684_800..=4_102_444_800).contains(&n)
        || (946_684_800_000..=4_102_444_800_000).contains(&n)
        || (20_000_101..=21_001_231).contains(&n)
}

/// Whether a string written in the file is a date (`2026-03-01`, `2026/03/01`, `20260301`).
pub(crate) fn is_date_text(s: &str) -> bool {
    let b = s.trim().as_bytes();
    let digits = |r: std::ops::Range<usize>| b.get(r).is_some_and(|x| x.iter().all(u8::is_ascii_digit));
    (b.len() >= 10 && b.starts_with(b"20") && digits(0..4) && matches!(b[4], b'-' | b'/') && digits(5..7))
        || (b.len() == 8 && b.starts_with(b"20") && digits(0..8))
}

fn depends_on_params(e: &Ev) -> bool {
    let p = |v: &Val| v.deep_taint().params != 0 || matches!(v.shape, Shape::Param(_));
    match e {
        Ev::Exec { arg, .. } => p(arg),
        Ev::Spawn { program, args, .. } => p(program) || args.iter().any(p),
        Ev::Send { payload, dest, .. } => payload.params != 0 || p(dest),
        Ev::Download { url, to, .. } => p(url) || to.as_ref().is_some_and(p),
        Ev::Write { path, data } => p(path) || p(data),
        Ev::Chmod { path, .. } => p(path),
        Ev::Deser { input, .. } => p(input),
        Ev::Connect { dest, .. } => p(dest),
        _ => false,
    }
}

/// `t` with its parameter bits replaced by the arguments' taints.
fn subst_taint(t: &Taint, args: &[Val]) -> Taint {
    let mut out = Taint {
        bits: t.bits,
        params: 0,
        what: t.what.clone(),
    };
    for (k, a) in args.iter().enumerate().take(32) {
        if t.params & (1 << k) != 0 {
            out.join(&a.deep_taint());
        }
    }
    out
}

/// `v` with parameters replaced by the arguments.
pub(crate) fn subst(v: &Val, args: &[Val]) -> Val {
    match &v.shape {
        Shape::Param(k) => {
            let mut a = args.get(*k).cloned().unwrap_or_default();
            let mut rest = v.taint.clone();
            rest.params = 0;
            a.taint.join(&rest);
            a
        }
        Shape::List(items) => Val {
            shape: Shape::List(items.iter().map(|x| subst(x, args)).collect()),
            taint: subst_taint(&v.taint, args),
            how: v.how,
            origin: v.origin.clone(),
        },
        _ => Val {
            shape: v.shape.clone(),
            taint: subst_taint(&v.taint, args),
            how: v.how,
            origin: v.origin.clone(),
        },
    }
}

fn subst_event(e: &Ev, args: &[Val]) -> Ev {
    let s = |v: &Val| subst(v, args);
    match e {
        Ev::Exec { api, arg, lang } => Ev::Exec {
            api: api.clone(),
            arg: s(arg),
            lang: *lang,
        },
        Ev::Spawn { api, program, args: a } => Ev::Spawn {
            api: api.clone(),
            program: s(program),
            args: a.iter().map(s).collect(),
        },
        Ev::Send { api, payload, dest } => Ev::Send {
            api: api.clone(),
            payload: subst_taint(payload, args),
            dest: s(dest),
        },
        Ev::Download { api, url, to } => Ev::Download {
            api: api.clone(),
            url: s(url),
            to: to.as_ref().map(s),
        },
        Ev::Write { path, data } => Ev::Write {
            path: s(path),
            data: s(data),
        },
        Ev::Chmod { path, exec } => Ev::Chmod {
            path: s(path),
            exec: *exec,
        },
        Ev::Deser { api, input } => Ev::Deser {
            api: api.clone(),
            input: s(input),
        },
        Ev::Connect { api, dest } => Ev::Connect {
            api: api.clone(),
            dest: s(dest),
        },
        other => other.clone(),
    }
}

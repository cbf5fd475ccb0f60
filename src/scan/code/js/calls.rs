//! What JavaScript's APIs do, for the folding engine: globals (`eval`, `Function`, `atob`,
//! `String.fromCharCode`, `globalThis[...]`), Node's modules (`child_process`, `fs`, `net`,
//! `http(s)`, `vm`, `os`, `dns`), `fetch` and the common HTTP clients, `process.env`, `Date`,
//! `Buffer`, and the string and array methods used to build text.

use crate::scan::code::effects::{env_read, file_write, name_built, send};
use crate::scan::code::engine::Engine;
use crate::scan::code::facts::Ev;
use crate::scan::code::ops::concat;
use crate::scan::code::value::{MAX_LIST, Shape, Taint, Val, taint};

use super::apis::api_call;

/// A call's arguments.
pub(crate) struct Call<'t> {
    /// Byte offset of the call.
    pub(crate) at: usize,
    /// Arguments (spreads expanded when known).
    pub(crate) args: Vec<Val>,
    /// The call as written.
    pub(crate) text: &'t str,
    /// A `new` expression.
    pub(crate) new: bool,
}

impl Call<'_> {
    pub(super) fn arg(&self, i: usize) -> Val {
        self.args.get(i).cloned().unwrap_or_default()
    }

    pub(super) fn taint(&self) -> Taint {
        let mut t = Taint::default();
        self.args.iter().for_each(|a| t.join(&a.deep_taint()));
        t
    }

    /// Option `key` of an options-object argument.
    pub(super) fn opt(&self, i: usize, key: &str) -> Option<Val> {
        match &self.arg(i).shape {
            Shape::Dict(items) => items.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone()),
            _ => None,
        }
    }
}

/// A path with the global object and `node:` removed (`globalThis.eval` → `eval`).
pub(crate) fn norm(path: &str) -> String {
    let mut p = path.trim_start_matches('.');
    loop {
        let before = p;
        for g in [
            "globalThis.",
            "window.",
            "global.",
            "self.",
            "this.",
            "top.",
            "parent.",
            "frames.",
        ] {
            if let Some(rest) = p.strip_prefix(g) {
                p = rest;
            }
        }
        if p == before {
            break;
        }
    }
    let p = p.strip_prefix("node:").unwrap_or(p);
    // `x.constructor.constructor` is `Function`.
    if p.ends_with("constructor.constructor") || p == "Function.prototype.constructor" {
        return "Function".to_owned();
    }
    p.to_owned()
}

/// A name that is not a variable: a global.
pub(crate) fn global(name: &str) -> Val {
    match name {
        "globalThis" | "window" | "global" | "self" | "this" | "top" => Val::api(""),
        "undefined" | "null" | "true" | "false" | "NaN" => Val::unknown(),
        _ => api_val(name),
    }
}

pub(super) fn api_val(path: &str) -> Val {
    let p = norm(path);
    let v = Val::api(p.clone());
    match p.as_str() {
        "process.env" => v.with(taint::ENV_ALL),
        "process.execArgv" | "process.debugPort" | "navigator.webdriver" => Val::tainted(Taint::of(taint::PROBE)),
        _ => v,
    }
}

/// `obj.prop`.
pub(crate) fn member(e: &mut Engine<'_>, obj: Val, prop: &str, at: usize) -> Val {
    match &obj.shape {
        Shape::Ref(p) if norm(p) == "process.env" => env_read(e, prop, at),
        Shape::Ref(p) => {
            let path = if p.is_empty() {
                prop.to_owned()
            } else {
                format!("{p}.{prop}")
            };
            let mut v = api_val(&path);
            v.taint.join(&obj.taint);
            v
        }
        Shape::Dict(items) => items
            .iter()
            .find(|(k, _)| k == prop)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| Val::tainted(obj.deep_taint())),
        Shape::Str(s) if prop == "length" => Val::num(i64::try_from(s.chars().count()).unwrap_or(0)),
        Shape::List(l) if prop == "length" => Val::num(i64::try_from(l.len()).unwrap_or(0)),
        _ if prop == "constructor" => Val::api("Object.constructor"),
        _ => {
            let mut v = Val::tainted(obj.deep_taint());
            v.origin = obj.origin.map(|o| format!("{o}.{prop}"));
            v
        }
    }
}

/// `obj[idx]`: bracket access folds like a member access.
pub(crate) fn index(e: &mut Engine<'_>, obj: Val, idx: Val, at: usize) -> Val {
    match (&obj.shape, &idx.shape) {
        (Shape::Ref(_), Shape::Str(k)) => {
            name_built(e, "attribute", &idx, at);
            member(e, obj.clone(), k, at)
        }
        (Shape::Dict(items), Shape::Str(k)) => items
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_default(),
        (Shape::List(items), Shape::Num(i)) => usize::try_from(*i)
            .ok()
            .and_then(|k| items.get(k))
            .cloned()
            .unwrap_or_default(),
        (Shape::Str(s), Shape::Num(i)) => match usize::try_from(*i).ok().and_then(|k| s.chars().nth(k)) {
            Some(c) => Val::folded(c.to_string(), "indexing"),
            None => Val::unknown(),
        },
        _ => {
            let mut t = obj.deep_taint();
            t.join(&idx.taint);
            Val::tainted(t)
        }
    }
}

/// A call of a value.
pub(crate) fn call_value(e: &mut Engine<'_>, callee: Val, c: &Call<'_>) -> Val {
    match &callee.shape {
        Shape::Ref(p) => {
            let p = norm(p);
            let mut v = api_call(e, &p, None, c);
            if !p.starts_with("process.env") {
                v.taint.join(&callee.taint);
            }
            v
        }
        _ => {
            let mut t = c.taint();
            t.join(&callee.taint);
            Val::tainted(t)
        }
    }
}

/// `obj.name(…)`.
pub(crate) fn method(e: &mut Engine<'_>, obj: Val, name: &str, c: &Call<'_>) -> Val {
    // `p.then(eval)`, `list.map(String.fromCharCode)`: a known function given as callback.
    if let ("then" | "map" | "forEach", Some(f)) = (name, c.args.first().and_then(|a| a.as_ref_path())) {
        let f = f.to_owned();
        if name == "map"
            && let Shape::List(items) = &obj.shape
        {
            let out: Vec<Val> = items
                .iter()
                .map(|i| {
                    let one = Call {
                        at: c.at,
                        args: vec![i.clone()],
                        text: c.text,
                        new: false,
                    };
                    api_call(e, &f, None, &one)
                })
                .collect();
            return Val {
                shape: Shape::List(out),
                ..Val::default()
            };
        }
        let one = Call {
            at: c.at,
            args: vec![Val::tainted(obj.deep_taint())],
            text: c.text,
            new: false,
        };
        return api_call(e, &f, None, &one);
    }
    match &obj.shape {
        Shape::Ref(p) => {
            let path = norm(&format!("{p}.{name}"));
            let mut v = api_call(e, &path, Some(&obj), c);
            if !p.ends_with("process.env") {
                v.taint.join(&obj.taint);
            }
            v
        }
        Shape::Str(s) => str_method(&obj, s, name, c),
        Shape::List(items) => list_method(&obj, items, name, c),
        _ => unknown_method(e, obj, name, c),
    }
}

fn str_method(obj: &Val, s: &str, name: &str, c: &Call<'_>) -> Val {
    let mut v = match name {
        "split" => {
            let parts: Vec<Val> = match c.arg(0).as_str() {
                Some("") => s.chars().map(|ch| Val::str(ch.to_string())).collect(),
                Some(sep) => s.split(sep).map(Val::str).collect(),
                None => vec![obj.clone()],
            };
            Val {
                shape: Shape::List(parts.into_iter().take(MAX_LIST).collect()),
                ..Val::default()
            }
        }
        "replace" | "replaceAll" => match (c.arg(0).as_str(), c.arg(1).as_str()) {
            (Some(a), Some(b)) => {
                // A regex literal `/x/g` replaces its plain text.
                let pat = a
                    .strip_prefix('/')
                    .and_then(|r| r.rsplit_once('/'))
                    .map_or(a, |(p, _)| p);
                if pat.is_empty() || pat.contains(['\\', '[', '(', '.', '*', '+', '?', '|', '^', '$']) && pat != a {
                    Val::tainted(obj.taint.clone())
                } else {
                    Val::folded(s.replace(pat, b), "replace")
                }
            }
            _ => Val::tainted(obj.taint.clone()),
        },
        "concat" => {
            let mut all = vec![obj.clone()];
            all.extend(c.args.iter().cloned());
            concat(&all, "concatenation")
        }
        "toString" | "valueOf" | "trim" | "toLowerCase" | "toUpperCase" | "normalize" => {
            let t = match name {
                "trim" => s.trim().to_owned(),
                "toLowerCase" => s.to_lowercase(),
                "toUpperCase" => s.to_uppercase(),
                _ => s.to_owned(),
            };
            Val {
                shape: Shape::Str(t),
                ..obj.clone()
            }
        }
        "slice" | "substring" | "substr" => {
            let chars: Vec<char> = s.chars().collect();
            let len = i64::try_from(chars.len()).unwrap_or(0);
            let a = c.arg(0).as_num().unwrap_or(0);
            let a = if a < 0 { (len + a).max(0) } else { a.min(len) };
            let b = match (name, c.arg(1).as_num()) {
                ("substr", Some(n)) => (a + n).min(len),
                (_, Some(b)) if b < 0 => (len + b).max(0),
                (_, Some(b)) => b.min(len),
                (_, None) => len,
            };
            let (a, b) = (usize::try_from(a).unwrap_or(0), usize::try_from(b.max(a)).unwrap_or(0));
            Val::folded(chars.get(a..b).unwrap_or_default().iter().collect(), "slice")
        }
        "charAt" => match c
            .arg(0)
            .as_num()
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| s.chars().nth(i))
        {
            Some(ch) => Val::folded(ch.to_string(), "indexing"),
            None => Val::unknown(),
        },
        "charCodeAt" => match s
            .chars()
            .nth(usize::try_from(c.arg(0).as_num().unwrap_or(0)).unwrap_or(0))
        {
            Some(ch) => Val::num(i64::from(u32::from(ch))),
            None => Val::unknown(),
        },
        "repeat" => match c.arg(0).as_num() {
            Some(n) if (0..=64).contains(&n) => crate::scan::code::ops::repeat(s, n),
            _ => Val::unknown(),
        },
        _ => Val::tainted(obj.deep_taint()),
    };
    let mut t = obj.taint.clone();
    t.join(&v.taint);
    v.taint = t;
    v
}

fn list_method(obj: &Val, items: &[Val], name: &str, c: &Call<'_>) -> Val {
    match name {
        "join" => {
            let sep = c.arg(0).as_str().map_or_else(|| ",".to_owned(), str::to_owned);
            let texts: Option<Vec<String>> = items.iter().map(Val::text).collect();
            match texts {
                Some(t) => {
                    let mut v = crate::scan::code::ops::join_texts(&t, &sep);
                    v.taint = obj.deep_taint();
                    if items.iter().all(|i| i.text().is_some_and(|t| t.chars().count() <= 2)) {
                        v.taint.bits |= taint::OBFUSCATED;
                    }
                    v
                }
                None => Val::tainted(obj.deep_taint()),
            }
        }
        "reverse" => Val {
            shape: Shape::List(items.iter().rev().cloned().collect()),
            how: Some("reversal"),
            taint: Taint::of(taint::OBFUSCATED),
            origin: None,
        },
        "concat" => {
            let mut all = items.to_vec();
            for a in &c.args {
                match &a.shape {
                    Shape::List(more) => all.extend(more.iter().cloned()),
                    _ => all.push(a.clone()),
                }
            }
            Val {
                shape: Shape::List(all),
                ..Val::default()
            }
        }
        "slice" | "filter" | "sort" | "flat" => obj.clone(),
        _ => Val::tainted(obj.deep_taint()),
    }
}

/// Methods on values the engine does not know, by name: sockets, requests, streams.
pub(super) fn unknown_method(e: &mut Engine<'_>, obj: Val, name: &str, c: &Call<'_>) -> Val {
    let at = c.at;
    let t = obj.deep_taint();
    match name {
        "write" | "end" | "send" if obj.taint.has(taint::SOCKET) => {
            send(e, "socket.write", c.arg(0).deep_taint(), obj.clone(), at);
            Val::unknown()
        }
        "write" | "end" if obj.taint.has(taint::WRITER) => {
            let path = obj.origin.clone().map(Val::str).unwrap_or_default();
            file_write(e, path, c.arg(0), at);
            Val::unknown()
        }
        "connect" if obj.taint.has(taint::SOCKET) => {
            e.emit(
                at,
                Ev::Connect {
                    api: "net.Socket.connect".into(),
                    dest: Val {
                        shape: Shape::List(c.args.clone()),
                        ..Val::default()
                    },
                },
            );
            obj.clone()
        }
        "pipe" => {
            let dst = c.arg(0);
            let (a, b) = (obj.deep_taint(), dst.deep_taint());
            if (a.has(taint::SOCKET) && b.has(taint::SHELL_PROC)) || (a.has(taint::SHELL_PROC) && b.has(taint::SOCKET))
            {
                e.emit(at, Ev::BindStdio);
            }
            if b.has(taint::WRITER) {
                let path = dst.origin.clone().map(Val::str).unwrap_or_default();
                file_write(e, path, Val::tainted(a.clone()), at);
            }
            dst
        }
        "open" if obj.as_ref_path().is_none() => {
            let mut v = obj.clone();
            v.origin = c.arg(1).text();
            v
        }
        "text" | "json" | "arrayBuffer" | "blob" | "buffer" | "toString" | "on" | "once" => {
            let mut v = Val::tainted(t);
            v.origin = obj.origin.clone();
            v
        }
        _ => {
            let mut t = t;
            t.join(&c.taint());
            Val::tainted(t)
        }
    }
}

//! What Python's APIs do, for the folding engine: the builtins that build strings (`chr`,
//! `getattr`, `__import__`, `bytes.fromhex`, `base64.b64decode`, `codecs.decode`), the sinks
//! (`exec`, `os.system`, `subprocess`, `requests`, `socket`, `pickle`, `yaml.load`, `open`
//! for writing, `os.chmod`) and the sources (`os.environ`, files, the clock, probes).

use tree_sitter::Node;

use crate::scan::code::effects::{
    Decoder, decode, env_read, file_read, file_write, name_built, path_test, send, writer,
};
use crate::scan::code::engine::Engine;
use crate::scan::code::facts::Ev;
use crate::scan::code::value::{MAX_LIST, Shape, Taint, Val, taint};

use super::apis::api_call;

/// A call's arguments.
pub(crate) struct Call<'t> {
    /// The call node.
    pub(crate) node: Node<'t>,
    /// Positional arguments.
    pub(crate) args: Vec<Val>,
    /// Keyword arguments.
    pub(crate) kwargs: Vec<(String, Val)>,
    /// The call as written.
    pub(crate) text: &'t str,
}

impl Call<'_> {
    pub(super) fn arg(&self, i: usize) -> Val {
        self.args.get(i).cloned().unwrap_or_default()
    }

    pub(super) fn kw(&self, name: &str) -> Option<&Val> {
        self.kwargs.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// Positional `i` or keyword `name`.
    pub(super) fn get(&self, i: usize, name: &str) -> Val {
        self.kw(name).cloned().unwrap_or_else(|| self.arg(i))
    }

    /// The taint of every argument.
    pub(super) fn taint(&self) -> Taint {
        let mut t = Taint::default();
        self.args.iter().for_each(|a| t.join(&a.deep_taint()));
        self.kwargs.iter().for_each(|(_, a)| t.join(&a.deep_taint()));
        t
    }

    pub(super) fn at(&self) -> usize {
        self.node.start_byte()
    }
}

/// A dotted path with the ways of reaching builtins removed (`__builtins__.__dict__.exec` →
/// `exec`, `sys.modules.os` → `os`).
pub(crate) fn norm(path: &str) -> String {
    let mut p: Vec<&str> = path.split('.').filter(|s| *s != "__dict__").collect();
    while let Some(first) = p.first() {
        if matches!(
            *first,
            "__builtins__" | "builtins" | "__builtin__" | "globals()" | "locals()" | "vars()" | "vars"
        ) && p.len() > 1
        {
            p.remove(0);
        } else if *first == "sys" && p.get(1) == Some(&"modules") && p.len() > 2 {
            p.drain(0..2);
        } else {
            break;
        }
    }
    p.join(".")
}

/// The value of a name that is not a variable: a module or a builtin.
pub(crate) fn api_val(path: &str) -> Val {
    let p = norm(path);
    let v = Val::api(p.clone());
    if p == "os.environ" { v.with(taint::ENV_ALL) } else { v }
}

/// `obj.attr`.
pub(crate) fn attribute(e: &mut Engine<'_>, obj: Val, attr: &str, n: Node<'_>) -> Val {
    match &obj.shape {
        Shape::Ref(p) => {
            let mut v = api_val(&format!("{p}.{attr}"));
            if !p.ends_with("os.environ") {
                v.taint.join(&obj.taint);
            }
            v
        }
        Shape::Dict(items) => items
            .iter()
            .find(|(k, _)| k == attr)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| Val::tainted(obj.deep_taint())),
        _ => {
            let _ = (e, n);
            let mut v = Val::tainted(obj.deep_taint());
            v.origin = obj.origin.map(|o| {
                if o.starts_with("download of ") {
                    o
                } else {
                    format!("{o}.{attr}")
                }
            });
            v
        }
    }
}

/// `obj[idx]`.
pub(crate) fn subscript(e: &mut Engine<'_>, obj: Val, idx: Val, n: Node<'_>) -> Val {
    match (&obj.shape, &idx.shape) {
        (Shape::Ref(p), Shape::Str(k)) if norm(p) == "os.environ" => env_read(e, k, n.start_byte()),
        (Shape::Ref(p), Shape::Str(k)) => {
            name_built(e, "attribute", &idx, n.start_byte());
            let path = if p.is_empty() { k.clone() } else { format!("{p}.{k}") };
            api_val(&path)
        }
        (Shape::Dict(items), Shape::Str(k)) => items
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_default(),
        (Shape::List(items), Shape::Num(i)) => {
            let len = i64::try_from(items.len()).unwrap_or(0);
            let k = if *i < 0 { len + i } else { *i };
            usize::try_from(k)
                .ok()
                .and_then(|k| items.get(k))
                .cloned()
                .unwrap_or_default()
        }
        (Shape::Str(s), Shape::Num(i)) => {
            let chars: Vec<char> = s.chars().collect();
            let len = i64::try_from(chars.len()).unwrap_or(0);
            let k = if *i < 0 { len + i } else { *i };
            match usize::try_from(k).ok().and_then(|k| chars.get(k)) {
                Some(c) => Val::folded(c.to_string(), "indexing"),
                None => Val::unknown(),
            }
        }
        _ => {
            let mut t = obj.deep_taint();
            t.join(&idx.taint);
            Val::tainted(t)
        }
    }
}

/// A call of a value (a builtin or API reference, or something unknown).
pub(crate) fn call_value(e: &mut Engine<'_>, callee: Val, c: &Call<'_>) -> Val {
    match callee.shape {
        Shape::Ref(ref p) => {
            let p = norm(p);
            let mut v = api_call(e, &p, None, c);
            v.taint.join(&callee.taint);
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
    match &obj.shape {
        Shape::Ref(p) => {
            let path = norm(&format!("{p}.{name}"));
            let mut v = api_call(e, &path, Some(&obj), c);
            // One variable read from the environment is not the whole environment.
            if !(path.starts_with("os.environ.") && matches!(name, "get" | "setdefault" | "pop")) {
                v.taint.join(&obj.taint);
            }
            v
        }
        Shape::Str(s) => str_method(e, &obj, s, name, c),
        Shape::List(_) => match name {
            "index" | "count" => Val::unknown(),
            "copy" => obj.clone(),
            _ => Val::tainted(obj.deep_taint()),
        },
        Shape::Dict(items) => match name {
            "get" => {
                let k = c.arg(0);
                items
                    .iter()
                    .find(|(key, _)| Some(key.as_str()) == k.as_str())
                    .map(|(_, v)| v.clone())
                    .unwrap_or_else(|| c.arg(1))
            }
            "values" => Val {
                shape: Shape::List(items.iter().map(|(_, v)| v.clone()).collect()),
                ..Val::default()
            },
            "keys" => Val {
                shape: Shape::List(items.iter().map(|(k, _)| Val::str(k.clone())).collect()),
                ..Val::default()
            },
            _ => Val::tainted(obj.deep_taint()),
        },
        _ => unknown_method(e, obj, name, c),
    }
}

/// Methods on a value the engine does not know, by name: file handles, sockets, responses.
pub(super) fn unknown_method(e: &mut Engine<'_>, obj: Val, name: &str, c: &Call<'_>) -> Val {
    let at = c.at();
    let mut t = obj.deep_taint();
    match name {
        "write" | "writelines" if obj.taint.has(taint::WRITER) => {
            let path = obj.origin.clone().map(Val::str).unwrap_or_default();
            file_write(e, path, c.arg(0), at);
            Val::unknown()
        }
        "send" | "sendall" | "sendto" | "sendmsg" if obj.taint.has(taint::SOCKET) => {
            send(e, "socket.send", c.arg(0).deep_taint(), obj.clone(), at);
            Val::unknown()
        }
        "connect" | "connect_ex" if obj.taint.has(taint::SOCKET) => {
            e.emit(
                at,
                Ev::Connect {
                    api: "socket.connect".into(),
                    dest: c.arg(0),
                },
            );
            Val::unknown()
        }
        "recv" | "recvfrom" | "makefile" if obj.taint.has(taint::SOCKET) => Val::tainted(Taint::of(taint::NET)),
        "sendmail" | "send_message" | "storbinary" | "storlines" | "post" | "put" | "patch" => {
            t = c.taint();
            send(e, name, t, obj.clone(), at);
            Val::tainted(Taint::of(taint::NET))
        }
        "read" | "readlines" | "readline" | "read_text" | "read_bytes" | "json" | "decode" | "getvalue"
        | "iter_content" => {
            let mut v = Val::tainted(t);
            v.origin = obj.origin.clone();
            v
        }
        "fileno" => Val::tainted(t),
        "communicate" => Val::tainted(t),
        _ => {
            t.join(&c.taint());
            Val::tainted(t)
        }
    }
}

/// String methods: `join`, `format`, `replace`, `decode`, `split`, path methods of a string
/// used as a path (`read_text`, `write_bytes`, `chmod`).
fn str_method(e: &mut Engine<'_>, obj: &Val, s: &str, name: &str, c: &Call<'_>) -> Val {
    let at = c.at();
    let mut v = match name {
        "join" => {
            let parts = c.arg(0);
            match &parts.shape {
                Shape::List(items) => {
                    let texts: Option<Vec<String>> = items.iter().map(Val::text).collect();
                    match texts {
                        Some(t) => {
                            let mut v = crate::scan::code::ops::join_texts(&t, s);
                            v.taint = parts.deep_taint();
                            if items.iter().all(|i| i.text().is_some_and(|t| t.chars().count() <= 2)) {
                                v.taint.bits |= taint::OBFUSCATED;
                            }
                            v
                        }
                        None => Val::tainted(parts.deep_taint()),
                    }
                }
                _ => Val::tainted(parts.deep_taint()),
            }
        }
        "format" => match brace_format(s, &c.args, &c.kwargs) {
            Some(out) => {
                let mut v = Val::folded(out, "format string");
                v.taint = c.taint();
                v
            }
            None => Val::tainted(c.taint()),
        },
        "replace" => match (c.arg(0).as_str(), c.arg(1).as_str()) {
            (Some(a), Some(b)) if !a.is_empty() => Val::folded(s.replace(a, b), "replace"),
            _ => Val::unknown(),
        },
        "decode" | "encode" => match c.arg(0).as_str().map(str::to_ascii_lowercase).as_deref() {
            Some("rot13" | "rot_13") => decode(Decoder::Rot13, obj),
            Some("hex") => decode(Decoder::Hex, obj),
            Some("base64") => decode(Decoder::Base64, obj),
            _ => obj.clone(),
        },
        "lower" => Val::folded(s.to_lowercase(), "lower"),
        "upper" => Val::folded(s.to_uppercase(), "upper"),
        "strip" | "lstrip" | "rstrip" if c.args.is_empty() => Val {
            shape: Shape::Str(match name {
                "strip" => s.trim().to_owned(),
                "lstrip" => s.trim_start().to_owned(),
                _ => s.trim_end().to_owned(),
            }),
            ..obj.clone()
        },
        "split" => {
            let parts: Vec<Val> = match c.arg(0).as_str() {
                Some(sep) if !sep.is_empty() => s.split(sep).map(Val::str).collect(),
                _ => s.split_whitespace().map(Val::str).collect(),
            };
            Val {
                shape: Shape::List(parts.into_iter().take(MAX_LIST).collect()),
                ..Val::default()
            }
        }
        "expanduser" | "resolve" | "absolute" => obj.clone(),
        "joinpath" => {
            let mut p = s.to_owned();
            for a in &c.args {
                p = format!("{}/{}", p.trim_end_matches('/'), a.text().unwrap_or_default());
            }
            Val::folded(p, "path join")
        }
        "read_text" | "read_bytes" | "open" if !c.arg(0).as_str().is_some_and(|m| m.contains(['w', 'a', 'x'])) => {
            return file_read(e, obj, at);
        }
        "open" => return writer(obj),
        "write_text" | "write_bytes" => {
            file_write(e, obj.clone(), c.arg(0), at);
            return Val::unknown();
        }
        "chmod" => {
            e.emit(
                at,
                Ev::Chmod {
                    path: obj.clone(),
                    exec: mode_exec(&c.arg(0), c),
                },
            );
            return Val::unknown();
        }
        "exists" | "is_file" | "is_dir" => return path_test(obj),
        _ => Val::tainted(obj.deep_taint()),
    };
    let mut t = obj.taint.clone();
    t.join(&v.taint);
    v.taint = t;
    v
}

/// `"{}-{name}".format(a, name=b)`.
fn brace_format(f: &str, args: &[Val], kwargs: &[(String, Val)]) -> Option<String> {
    let mut out = String::new();
    let mut next = 0usize;
    let mut rest = f;
    while let Some(p) = rest.find(['{', '}']) {
        out.push_str(&rest[..p]);
        let tail = &rest[p..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push(tail.chars().next()?);
            rest = &tail[2..];
            continue;
        }
        if tail.starts_with('}') {
            return None;
        }
        let close = tail.find('}')?;
        let field = tail[1..close].split([':', '!']).next().unwrap_or("");
        let v = if field.is_empty() {
            next += 1;
            args.get(next - 1)?
        } else if let Ok(k) = field.parse::<usize>() {
            args.get(k)?
        } else {
            kwargs.iter().find(|(k, _)| k == field).map(|(_, v)| v)?
        };
        out.push_str(&v.text()?);
        rest = &tail[close + 1..];
    }
    out.push_str(rest);
    Some(out)
}

/// Whether a mode argument sets execute bits (`0o755`, `stat.S_IXUSR`, `st.st_mode | S_IEXEC`).
pub(crate) fn mode_exec(mode: &Val, c: &Call<'_>) -> bool {
    if let Some(m) = mode.as_num() {
        return m & 0o111 != 0;
    }
    [
        "S_IX", "S_IEXEC", "S_IRWXU", "0o7", "0o5", "0o1", "+x", "755", "777", "0x1ed",
    ]
    .iter()
    .any(|w| c.text.contains(w))
}

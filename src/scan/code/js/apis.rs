//! The JavaScript APIs the engine knows, by normalised path: `require`, the builtins that
//! build strings, decoders, code and command execution, deserialisation, files, the clock,
//! sockets and HTTP clients.

use super::calls::{Call, api_val, unknown_method};
use crate::scan::code::effects::{
    Decoder, decode, exec_text, file_read, file_write, name_built, path_test, send, spawn, writer,
};
use crate::scan::code::engine::{Engine, is_date_text};
use crate::scan::code::facts::{Ev, Lang};
use crate::scan::code::ops::concat;
use crate::scan::code::value::{Shape, Taint, Val, taint};

/// The known APIs, by normalised path.
pub(super) fn api_call(e: &mut Engine<'_>, path: &str, recv: Option<&Val>, c: &Call<'_>) -> Val {
    let at = c.at;
    match path {
        "require" => {
            let m = c.arg(0);
            name_built(e, "module", &m, at);
            match m.as_str() {
                Some(name) => api_val(name),
                None => Val::tainted(m.taint),
            }
        }
        "String.fromCharCode" | "String.fromCodePoint" => {
            let chars: Option<String> = c
                .args
                .iter()
                .map(|a| a.as_num().and_then(|n| u32::try_from(n).ok()).and_then(char::from_u32))
                .collect();
            match chars {
                Some(s) => Val::folded(s, "String.fromCharCode").with(taint::OBFUSCATED),
                None => Val::tainted(c.taint()).with(taint::OBFUSCATED),
            }
        }
        "String.fromCharCode.apply" | "String.fromCodePoint.apply" => {
            let one = Call {
                at,
                args: match c.arg(1).shape {
                    Shape::List(items) => items,
                    _ => Vec::new(),
                },
                text: c.text,
                new: false,
            };
            api_call(e, "String.fromCharCode", None, &one)
        }
        "String" | "Array.from" | "Array.of" | "JSON.stringify" | "Object.assign" | "Object.values" | "Object.keys"
        | "Object.entries" => match (path, c.arg(0).shape) {
            ("Array.from", Shape::Str(s)) => Val {
                shape: Shape::List(s.chars().map(|ch| Val::str(ch.to_string())).collect()),
                ..Val::default()
            },
            ("String" | "Array.from", _) => c.arg(0),
            _ => Val::tainted(c.taint()),
        },
        "atob" => decode(Decoder::Base64, &c.arg(0)),
        "decodeURIComponent" | "decodeURI" | "unescape" | "querystring.unescape" => decode(Decoder::Percent, &c.arg(0)),
        "Buffer.from" | "Buffer.alloc" => {
            let data = c.arg(0);
            let enc = c.arg(1).as_str().map(str::to_ascii_lowercase);
            match (enc.as_deref(), &data.shape) {
                (Some("base64" | "base64url"), _) => decode(Decoder::Base64, &data),
                (Some("hex"), _) => decode(Decoder::Hex, &data),
                (_, Shape::List(items)) => {
                    let bytes: Option<Vec<u8>> = items
                        .iter()
                        .map(|i| i.as_num().and_then(|n| u8::try_from(n).ok()))
                        .collect();
                    match bytes {
                        Some(b) => {
                            Val::folded(String::from_utf8_lossy(&b).into_owned(), "Buffer.from").with(taint::OBFUSCATED)
                        }
                        None => Val::tainted(data.deep_taint()),
                    }
                }
                _ => data,
            }
        }
        "zlib.inflateSync" | "zlib.gunzipSync" | "zlib.unzipSync" | "zlib.inflateRawSync" => {
            decode(Decoder::Inflate, &c.arg(0))
        }
        "parseInt" | "Number" => match (c.arg(0).as_str(), c.arg(1).as_num()) {
            (Some(s), base) => i64::from_str_radix(s.trim(), u32::try_from(base.unwrap_or(10)).unwrap_or(10))
                .map(Val::num)
                .unwrap_or_default(),
            _ => c.arg(0),
        },
        _ => run_call(e, path, recv, c),
    }
}

/// More of `api_call`: the next group of cases.
fn run_call(e: &mut Engine<'_>, path: &str, recv: Option<&Val>, c: &Call<'_>) -> Val {
    let at = c.at;
    match path {
        // Running text.
        "eval"
        | "Function"
        | "Object.constructor"
        | "vm.runInThisContext"
        | "vm.runInNewContext"
        | "vm.runInContext"
        | "vm.Script"
        | "vm.compileFunction"
        | "execScript" => {
            let arg = if path == "Function" || path == "Object.constructor" {
                c.args.last().cloned().unwrap_or_default()
            } else {
                c.arg(0)
            };
            exec_text(e, path, arg, Lang::JavaScript, at)
        }
        "setTimeout" | "setInterval" | "setImmediate"
            if c.arg(0).as_str().is_some() || c.arg(0).deep_taint().bits != 0 =>
        {
            exec_text(e, path, c.arg(0), Lang::JavaScript, at)
        }
        "child_process.exec" | "child_process.execSync" => exec_text(e, path, c.arg(0), Lang::Shell, at),
        "child_process.spawn"
        | "child_process.spawnSync"
        | "child_process.execFile"
        | "child_process.execFileSync"
        | "child_process.fork"
        | "Bun.spawn"
        | "Deno.run" => {
            let program = c.arg(0);
            let args = match c.arg(1).shape {
                Shape::List(items) => items,
                _ => Vec::new(),
            };
            let shell_opt = c.opt(1, "shell").or_else(|| c.opt(2, "shell"));
            if shell_opt.is_some_and(|v| v.as_ref_path() == Some("true") || v.as_str().is_some()) {
                let mut line = vec![program.clone()];
                line.extend(args.iter().cloned());
                let text = concat(
                    &line.iter().flat_map(|v| [v.clone(), Val::str(" ")]).collect::<Vec<_>>(),
                    "join",
                );
                return exec_text(e, path, text, Lang::Shell, at);
            }
            let v = spawn(e, path, program, args, at);
            if let Some(stdio) = c.opt(2, "stdio")
                && stdio.deep_taint().has(taint::SOCKET)
            {
                e.emit(at, Ev::BindStdio);
            }
            v
        }
        // Deserialisation.
        "node-serialize.unserialize"
        | "serialize.unserialize"
        | "v8.deserialize"
        | "funcster.deepDeserialize"
        | "cryo.parse"
        | "serialize-javascript.deserialize" => {
            e.emit(
                at,
                Ev::Deser {
                    api: path.to_owned(),
                    input: c.arg(0),
                },
            );
            Val::tainted(c.taint())
        }
        _ => data_call(e, path, recv, c),
    }
}

/// More of `api_call`: the next group of cases.
fn data_call(e: &mut Engine<'_>, path: &str, recv: Option<&Val>, c: &Call<'_>) -> Val {
    let at = c.at;
    match path {
        // Files.
        "fs.readFileSync"
        | "fs.readFile"
        | "fs.promises.readFile"
        | "fs/promises.readFile"
        | "fsPromises.readFile"
        | "Deno.readTextFile"
        | "Bun.file" => file_read(e, &c.arg(0), at),
        "fs.writeFileSync"
        | "fs.writeFile"
        | "fs.appendFileSync"
        | "fs.appendFile"
        | "fs.promises.writeFile"
        | "fs/promises.writeFile"
        | "fsPromises.writeFile"
        | "Deno.writeTextFile"
        | "Bun.write" => {
            file_write(e, c.arg(0), c.arg(1), at);
            Val::unknown()
        }
        "fs.createWriteStream" => writer(&c.arg(0)),
        "fs.chmodSync" | "fs.chmod" | "fs.promises.chmod" | "fs/promises.chmod" => {
            let m = c.arg(1);
            let exec = m.as_num().map_or_else(
                || {
                    m.as_str()
                        .is_some_and(|s| s.ends_with(['5', '7', '1']) || s.contains('x'))
                },
                |n| n & 0o111 != 0,
            );
            e.emit(at, Ev::Chmod { path: c.arg(0), exec });
            Val::unknown()
        }
        "fs.existsSync" | "fs.accessSync" | "fs.statSync" | "fs.exists" => path_test(&c.arg(0)),
        "os.homedir" => Val::str("~"),
        "os.tmpdir" => Val::str("/tmp"),
        "path.join" | "path.resolve" | "path.posix.join" => {
            let parts: Option<Vec<String>> = c.args.iter().map(Val::text).collect();
            match parts {
                Some(p) => {
                    let mut v = Val::folded(p.join("/").replace("//", "/"), "path join");
                    v.taint = c.taint();
                    v
                }
                None => Val::tainted(c.taint()),
            }
        }
        "os.hostname" | "os.userInfo" | "os.cpus" | "os.totalmem" | "os.uptime" | "inspector.url" => {
            Val::tainted(Taint::of(taint::PROBE))
        }
        // The clock.
        "Date.now" | "performance.timeOrigin" => Val::tainted(Taint::of(taint::TIME)),
        "Date" | "Date.parse" | "Date.UTC" => {
            let a = c.arg(0);
            let fixed = a
                .as_num()
                .is_some_and(|y| (2000..=2100).contains(&y) || crate::scan::code::engine::is_epoch_like(y))
                || a.as_str().is_some_and(is_date_text);
            if c.args.is_empty() {
                Val::tainted(Taint::of(taint::TIME))
            } else if fixed {
                Val::tainted(Taint::of(taint::DATE_CONST))
            } else {
                Val::tainted(c.taint())
            }
        }
        _ => net_call(e, path, recv, c),
    }
}

/// More of `api_call`: the next group of cases.
fn net_call(e: &mut Engine<'_>, path: &str, recv: Option<&Val>, c: &Call<'_>) -> Val {
    let at = c.at;
    let last = path.rsplit('.').next().unwrap_or(path);
    let module = path.split('.').next().unwrap_or(path);
    match path {
        // Sockets and the network.
        "net.connect" | "net.createConnection" | "tls.connect" | "net.Socket" | "WebSocket" | "ws" => {
            if !(path == "net.Socket" && c.args.is_empty()) {
                e.emit(
                    at,
                    Ev::Connect {
                        api: path.to_owned(),
                        dest: Val {
                            shape: Shape::List(
                                c.args
                                    .iter()
                                    .filter(|a| !matches!(a.shape, Shape::Dict(_) | Shape::Unknown))
                                    .cloned()
                                    .collect(),
                            ),
                            ..Val::default()
                        },
                    },
                );
            }
            let mut v = Val::api(format!("{path}()")).with(taint::SOCKET);
            v.origin = c.arg(0).text();
            v
        }
        "dns.lookup" | "dns.resolve" | "dns.resolve4" | "dns.resolveTxt" | "dns.promises.lookup" => {
            send(e, path, c.arg(0).deep_taint(), c.arg(0), at);
            Val::tainted(Taint::of(taint::NET))
        }
        "navigator.sendBeacon" => {
            send(e, path, c.taint(), c.arg(0), at);
            Val::unknown()
        }
        "XMLHttpRequest" => Val::api("XMLHttpRequest()"),
        "XMLHttpRequest().open" => {
            let mut v = recv.cloned().unwrap_or_default();
            v.origin = c.arg(1).text();
            v
        }
        "XMLHttpRequest().send" => {
            let dest = recv.and_then(|r| r.origin.clone()).map(Val::str).unwrap_or_default();
            send(e, path, c.arg(0).deep_taint(), dest, at);
            Val::tainted(Taint::of(taint::NET))
        }
        "fetch" | "node-fetch" | "axios" | "got" | "undici.request" | "undici.fetch" | "needle" | "ky" => {
            http(e, path, c, 0)
        }
        "http.request" | "https.request" | "http.get" | "https.get" => {
            let mut v = http(e, path, c, 0);
            // The request object: what is written to it is sent.
            v.origin = c.arg(0).text().or_else(|| c.opt(0, "hostname").and_then(|h| h.text()));
            v.shape = Shape::Ref("http.ClientRequest".into());
            v
        }
        "http.ClientRequest.write" | "http.ClientRequest.end" => {
            let dest = recv.and_then(|r| r.origin.clone()).map(Val::str).unwrap_or_default();
            send(e, path, c.arg(0).deep_taint(), dest, at);
            Val::unknown()
        }
        _ if matches!(
            module,
            "axios" | "got" | "superagent" | "request" | "needle" | "ky" | "undici"
        ) && matches!(last, "get" | "post" | "put" | "patch" | "delete" | "request" | "head") =>
        {
            http(e, path, c, 0)
        }
        // A method of an object the table does not name: by the method's name.
        _ if recv.is_some_and(|r| {
            r.taint
                .has(taint::SOCKET | taint::WRITER | taint::NET | taint::SHELL_PROC)
        }) =>
        {
            unknown_method(e, recv.cloned().unwrap_or_default(), last, c)
        }
        _ => {
            let mut v = Val::api(format!("{path}()"));
            v.taint = c.taint();
            if let Some(r) = recv {
                v.taint.join(&r.taint);
            }
            if c.new {
                v.shape = Shape::Ref(path.to_owned());
            }
            v
        }
    }
}

/// An HTTP request: the URL is argument `url_i` (or an options object's `url`/`hostname`);
/// everything else is the payload. The response is a download.
fn http(e: &mut Engine<'_>, path: &str, c: &Call<'_>, url_i: usize) -> Val {
    let mut dest = c.arg(url_i);
    if let Shape::Dict(items) = &dest.shape {
        dest = items
            .iter()
            .find(|(k, _)| k == "url" || k == "hostname" || k == "host")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
    }
    let payload = c.taint();
    send(e, path, payload, dest.clone(), c.at);
    let mut v = Val::tainted(Taint::of(taint::NET));
    v.origin = dest.identity().map(|d| format!("download of {d}"));
    v
}

//! The Python APIs the engine knows, by normalised path: builtins that build strings,
//! decoders, code and command execution, deserialisation, the environment, paths, files,
//! the network, probes and the clock.

use super::calls::{Call, api_val, mode_exec, unknown_method};
use crate::scan::code::effects::{
    Decoder, decode, env_read, exec_text, file_read, file_write, name_built, path_test, send, spawn, writer,
};
use crate::scan::code::engine::Engine;
use crate::scan::code::facts::{Ev, Lang};
use crate::scan::code::value::{Shape, Taint, Val, taint};

/// The known APIs, by normalised path; `recv` is the receiver of a method call.
pub(super) fn api_call(e: &mut Engine<'_>, path: &str, recv: Option<&Val>, c: &Call<'_>) -> Val {
    let at = c.at();
    match path {
        // Names built at run time.
        "getattr" => {
            let name = c.arg(1);
            name_built(e, "attribute", &name, at);
            match (c.arg(0).shape, name.as_str()) {
                (Shape::Ref(p), Some(n)) => api_val(&format!("{p}.{n}")),
                (_, Some(n)) => api_val(n),
                _ => Val::unknown(),
            }
        }
        "__import__" | "importlib.import_module" => {
            let name = c.arg(0);
            name_built(e, "module", &name, at);
            match name.as_str() {
                Some(m) => api_val(m),
                None => Val::unknown(),
            }
        }
        "globals" | "locals" | "vars" | "dir" => Val::api(""),
        "chr" | "unichr" => match c
            .arg(0)
            .as_num()
            .and_then(|n| u32::try_from(n).ok())
            .and_then(char::from_u32)
        {
            Some(ch) => Val::folded(ch.to_string(), "chr").with(taint::OBFUSCATED),
            None => Val::tainted(c.taint()),
        },
        "ord" => match c.arg(0).as_str().and_then(|s| s.chars().next()) {
            Some(ch) => Val::num(i64::from(u32::from(ch))),
            None => Val::unknown(),
        },
        "str" | "bytes" | "bytearray" | "bytes.decode" | "str.join" => {
            let a = c.arg(0);
            match &a.shape {
                Shape::List(items) if path != "str" => {
                    let bytes: Option<Vec<u8>> = items
                        .iter()
                        .map(|i| i.as_num().and_then(|n| u8::try_from(n).ok()))
                        .collect();
                    match bytes {
                        Some(b) => {
                            let mut v = Val::folded(String::from_utf8_lossy(&b).into_owned(), "bytes");
                            v.taint = a.deep_taint();
                            v.taint.bits |= taint::OBFUSCATED;
                            v
                        }
                        None => Val::tainted(a.deep_taint()),
                    }
                }
                Shape::Num(n) if path == "str" => Val::str(n.to_string()),
                _ => a,
            }
        }
        "int" => match (c.arg(0).as_str(), c.arg(1).as_num()) {
            (Some(s), base) => i64::from_str_radix(s.trim(), u32::try_from(base.unwrap_or(10)).unwrap_or(10))
                .map(Val::num)
                .unwrap_or_default(),
            _ => c.arg(0),
        },
        "reversed" => match c.arg(0).shape {
            Shape::Str(s) => Val::folded(s.chars().rev().collect(), "reversal").with(taint::OBFUSCATED),
            Shape::List(items) => Val {
                shape: Shape::List(items.into_iter().rev().collect()),
                how: Some("reversal"),
                ..Val::default()
            },
            _ => Val::tainted(c.taint()),
        },
        "map" => {
            let f = c.arg(0);
            match (f.as_ref_path(), c.arg(1).shape) {
                (Some("chr"), Shape::List(items)) => {
                    let out: Vec<Val> = items
                        .iter()
                        .map(|i| {
                            i.as_num()
                                .and_then(|n| u32::try_from(n).ok())
                                .and_then(char::from_u32)
                                .map(|ch| Val::folded(ch.to_string(), "chr").with(taint::OBFUSCATED))
                                .unwrap_or_default()
                        })
                        .collect();
                    Val {
                        shape: Shape::List(out),
                        ..Val::default()
                    }
                }
                _ => Val::tainted(c.taint()),
            }
        }
        "list" | "tuple" | "set" | "sorted" => c.arg(0),
        // Decoders.
        "base64.b64decode"
        | "base64.standard_b64decode"
        | "base64.urlsafe_b64decode"
        | "base64.decodebytes"
        | "base64.decodestring"
        | "binascii.a2b_base64"
        | "b64decode" => decode(Decoder::Base64, &c.arg(0)),
        "bytes.fromhex" | "binascii.unhexlify" | "binascii.a2b_hex" | "base64.b16decode" | "unhexlify" => {
            decode(Decoder::Hex, &c.arg(0))
        }
        "urllib.parse.unquote" | "urllib.parse.unquote_plus" | "unquote" => decode(Decoder::Percent, &c.arg(0)),
        "codecs.decode" | "codecs.encode" => match c.arg(1).as_str().map(str::to_ascii_lowercase).as_deref() {
            Some("rot13" | "rot_13") => decode(Decoder::Rot13, &c.arg(0)),
            Some("hex" | "hex_codec") => decode(Decoder::Hex, &c.arg(0)),
            Some("base64" | "base64_codec") => decode(Decoder::Base64, &c.arg(0)),
            _ => c.arg(0),
        },
        "zlib.decompress" | "gzip.decompress" | "decompress" => decode(Decoder::Inflate, &c.arg(0)),
        "base64.b32decode" | "base64.b85decode" | "base64.a85decode" | "lzma.decompress" | "bz2.decompress" => {
            Val::tainted(c.taint()).with(taint::DECODED)
        }
        _ => run_call(e, path, recv, c),
    }
}

/// More of `api_call`: the next group of cases.
fn run_call(e: &mut Engine<'_>, path: &str, recv: Option<&Val>, c: &Call<'_>) -> Val {
    let at = c.at();
    match path {
        // Running text.
        "eval" | "exec" | "compile" | "execfile" | "code.InteractiveInterpreter.runsource" => {
            let arg = c.arg(0);
            let v = exec_text(e, path, arg, Lang::Python, at);
            Val::tainted(v.taint)
        }
        "os.system"
        | "os.popen"
        | "subprocess.getoutput"
        | "subprocess.getstatusoutput"
        | "commands.getoutput"
        | "asyncio.create_subprocess_shell"
        | "platform.popen" => exec_text(e, path, c.arg(0), Lang::Shell, at),
        "subprocess.run"
        | "subprocess.call"
        | "subprocess.check_call"
        | "subprocess.check_output"
        | "subprocess.Popen" => {
            let cmd = c.get(0, "args");
            let shell_kw = c.kw("shell").is_some_and(|v| v.as_ref_path() == Some("True"));
            let stdio_socket = ["stdin", "stdout", "stderr"]
                .iter()
                .any(|k| c.kw(k).is_some_and(|v| v.deep_taint().has(taint::SOCKET)));
            if stdio_socket {
                e.emit(at, Ev::BindStdio);
            }
            match &cmd.shape {
                Shape::List(items) if !shell_kw => {
                    let program = items.first().cloned().unwrap_or_default();
                    spawn(e, path, program, items.iter().skip(1).cloned().collect(), at)
                }
                _ if shell_kw || cmd.as_str().is_some() => exec_text(e, path, cmd, Lang::Shell, at),
                _ => spawn(e, path, cmd, Vec::new(), at),
            }
        }
        "asyncio.create_subprocess_exec"
        | "os.execv"
        | "os.execve"
        | "os.execvp"
        | "os.execl"
        | "os.execlp"
        | "os.spawnv"
        | "os.spawnl"
        | "os.spawnlp"
        | "os.posix_spawn"
        | "pty.spawn" => {
            let (program, rest) = match c.arg(0).shape {
                Shape::List(items) if path == "pty.spawn" => (
                    items.first().cloned().unwrap_or_default(),
                    items.into_iter().skip(1).collect(),
                ),
                _ => (c.arg(0), c.args.iter().skip(1).cloned().collect()),
            };
            spawn(e, path, program, rest, at)
        }
        "os.dup2" => {
            if c.arg(0).deep_taint().has(taint::SOCKET) {
                e.emit(at, Ev::BindStdio);
            }
            Val::unknown()
        }
        // Deserialisation.
        "pickle.loads" | "pickle.load" | "cPickle.loads" | "cPickle.load" | "_pickle.loads" | "marshal.loads"
        | "marshal.load" | "dill.loads" | "dill.load" | "jsonpickle.decode" | "yaml.unsafe_load" | "yaml.load_all"
        | "pandas.read_pickle" | "pd.read_pickle" | "torch.load" | "joblib.load" | "shelve.open" | "yaml.load" => {
            let safe = path.starts_with("yaml.")
                && path != "yaml.unsafe_load"
                && c.get(1, "Loader")
                    .as_ref_path()
                    .is_some_and(|l| l.ends_with("SafeLoader") || l.ends_with("BaseLoader"));
            let input = c.arg(0);
            if !safe {
                e.emit(
                    at,
                    Ev::Deser {
                        api: path.to_owned(),
                        input: input.clone(),
                    },
                );
            }
            Val::tainted(input.deep_taint())
        }
        // Serialisers writing to a file handle: a write of that file.
        "pickle.dump" | "cPickle.dump" | "marshal.dump" | "dill.dump" | "json.dump" | "yaml.dump"
        | "yaml.safe_dump" | "torch.save" | "joblib.dump" | "numpy.save" | "np.save" => {
            let (data, dst) = if path.starts_with("numpy") || path.starts_with("np") {
                (c.arg(1), c.arg(0))
            } else {
                (c.arg(0), c.arg(1))
            };
            let target = if dst.taint.has(taint::WRITER) {
                dst.origin.clone().map(Val::str).unwrap_or_default()
            } else {
                dst
            };
            file_write(e, target, data, at);
            Val::unknown()
        }
        "tempfile.gettempdir" => Val::str("/tmp"),
        "numpy.load" | "np.load" if c.kw("allow_pickle").is_some_and(|v| v.as_ref_path() == Some("True")) => {
            e.emit(
                at,
                Ev::Deser {
                    api: path.to_owned(),
                    input: c.arg(0),
                },
            );
            Val::unknown()
        }
        _ => data_call(e, path, recv, c),
    }
}

/// More of `api_call`: the next group of cases.
fn data_call(e: &mut Engine<'_>, path: &str, recv: Option<&Val>, c: &Call<'_>) -> Val {
    let at = c.at();
    match path {
        // The environment.
        "os.getenv" | "os.environ.get" | "os.environ.setdefault" => match c.arg(0).as_str() {
            Some(name) => {
                let name = name.to_owned();
                env_read(e, &name, at)
            }
            None => Val::unknown(),
        },
        "os.environ.copy" | "os.environ.items" | "os.environ.keys" | "os.environ.values" | "dict" | "json.dumps" => {
            let mut t = c.taint();
            if let Some(r) = recv {
                t.join(&r.taint);
            }
            let arg = c.arg(0);
            match (path, &arg.shape) {
                ("json.dumps" | "dict", Shape::Dict(_) | Shape::List(_)) => Val::tainted(arg.deep_taint()),
                ("json.dumps" | "dict", Shape::Str(_)) => arg,
                _ => Val::tainted(t),
            }
        }
        "os.path.expanduser" | "os.path.expandvars" | "os.path.abspath" | "os.path.realpath" | "os.path.normpath"
        | "pathlib.Path" | "Path" | "pathlib.PurePath" | "os.fspath" => c.arg(0),
        "pathlib.Path.home" | "Path.home" | "os.path.expanduser.home" => Val::str("~"),
        "os.path.join" | "posixpath.join" => {
            let parts: Option<Vec<String>> = c.args.iter().map(Val::text).collect();
            match parts {
                Some(p) => {
                    let mut v = Val::folded(p.join("/").replace("//", "/"), "path join");
                    if c.args.iter().all(|a| a.how.is_none()) {
                        v.how = c.args.iter().find_map(|a| a.how);
                    }
                    v.taint = c.taint();
                    v
                }
                None => Val::tainted(c.taint()),
            }
        }
        // Files.
        "open" | "io.open" | "codecs.open" | "builtins.open" => {
            let p = c.get(0, "file");
            let mode = c.get(1, "mode");
            if mode.as_str().is_some_and(|m| m.contains(['w', 'a', 'x', '+'])) {
                writer(&p)
            } else {
                file_read(e, &p, at)
            }
        }
        "os.path.exists" | "os.path.isfile" | "os.path.isdir" | "os.access" | "os.stat" => path_test(&c.arg(0)),
        "os.chmod" | "os.fchmod" | "os.lchmod" => {
            e.emit(
                at,
                Ev::Chmod {
                    path: c.arg(0),
                    exec: mode_exec(&c.arg(1), c),
                },
            );
            Val::unknown()
        }
        "shutil.copyfileobj" => {
            let dst = c.arg(1);
            let path = dst.origin.clone().map(Val::str).unwrap_or_default();
            file_write(e, path, c.arg(0), at);
            Val::unknown()
        }
        "shutil.copy" | "shutil.copyfile" | "shutil.copy2" | "shutil.move" => {
            let data = file_read(e, &c.arg(0), at);
            file_write(e, c.arg(1), data, at);
            Val::unknown()
        }
        _ => net_call(e, path, recv, c),
    }
}

/// More of `api_call`: the next group of cases.
fn net_call(e: &mut Engine<'_>, path: &str, recv: Option<&Val>, c: &Call<'_>) -> Val {
    let at = c.at();
    let last = path.rsplit('.').next().unwrap_or(path);
    match path {
        // The network.
        "urllib.request.urlretrieve" | "urllib.urlretrieve" | "wget.download" => {
            let url = c.arg(0);
            e.emit(
                at,
                Ev::Download {
                    api: path.to_owned(),
                    url: url.clone(),
                    to: Some(c.get(1, "filename")),
                },
            );
            if let Some(to) = c.args.get(1).cloned().or_else(|| c.kw("filename").cloned()) {
                file_write(e, to, Val::tainted(Taint::of(taint::NET)), at);
            }
            Val::tainted(Taint::of(taint::NET))
        }
        "urllib.request.Request" | "urllib2.Request" => {
            let mut v = Val::api("urllib.request.Request()");
            v.taint = c.taint();
            v.origin = c.get(0, "url").text();
            v
        }
        "socket.socket" | "socket.socketpair" => Val::api("socket.socket()").with(taint::SOCKET),
        "socket.create_connection" => {
            e.emit(
                at,
                Ev::Connect {
                    api: path.to_owned(),
                    dest: c.arg(0),
                },
            );
            Val::api("socket.socket()").with(taint::SOCKET)
        }
        "socket.gethostname"
        | "platform.node"
        | "getpass.getuser"
        | "os.getlogin"
        | "os.cpu_count"
        | "multiprocessing.cpu_count"
        | "sys.gettrace"
        | "uuid.getnode"
        | "psutil.virtual_memory"
        | "psutil.boot_time"
        | "ctypes.windll.kernel32.IsDebuggerPresent"
        | "platform.uname" => Val::tainted(Taint::of(taint::PROBE)),
        "getpass.getpass" => {
            e.emit(at, Ev::PasswordPrompt);
            Val::tainted(Taint::secret("a password typed by the user"))
        }
        "keyring.get_password" | "browser_cookie3.load" | "browser_cookie3.chrome" | "browser_cookie3.firefox" => {
            let what = if path.starts_with("keyring") {
                "a password from the system keyring"
            } else {
                "browser cookies"
            };
            e.emit(at, Ev::SecretRead { what: what.into() });
            Val::tainted(Taint::secret(what))
        }
        // The clock.
        "datetime.datetime.now"
        | "datetime.now"
        | "datetime.datetime.today"
        | "datetime.date.today"
        | "date.today"
        | "datetime.datetime.utcnow"
        | "datetime.utcnow"
        | "time.time"
        | "time.localtime"
        | "time.gmtime"
        | "time.time_ns"
        | "datetime.datetime.now.date" => Val::tainted(Taint::of(taint::TIME)),
        "datetime.datetime"
        | "datetime"
        | "datetime.date"
        | "date"
        | "datetime.datetime.fromisoformat"
        | "datetime.date.fromisoformat"
        | "datetime.datetime.strptime"
        | "datetime.fromisoformat" => {
            let year = c.arg(0).as_num();
            let fixed = year.is_some_and(|y| (2000..=2100).contains(&y))
                || c.arg(0).as_str().is_some_and(crate::scan::code::engine::is_date_text);
            if fixed {
                Val::tainted(Taint::of(taint::DATE_CONST))
            } else {
                Val::tainted(c.taint())
            }
        }
        _ => network_or_unknown(e, path, last, recv, c),
    }
}

/// HTTP clients by path (`requests.post`, `httpx.get`, `urllib.request.urlopen`, a session's
/// methods, `http.client`, `smtplib`); anything else is unknown with its arguments' taint.
fn network_or_unknown(e: &mut Engine<'_>, path: &str, last: &str, recv: Option<&Val>, c: &Call<'_>) -> Val {
    let at = c.at();
    let client = ["requests", "httpx", "aiohttp", "urllib3", "session", "client", "http"];
    let head = path.split('.').next().unwrap_or(path).to_ascii_lowercase();
    let http_verb = matches!(
        last,
        "get" | "post" | "put" | "patch" | "delete" | "head" | "options" | "request" | "urlopen" | "stream"
    );
    if http_verb && (client.iter().any(|k| head.contains(k)) || path.contains("urllib") || path.contains("Session")) {
        // `requests.request("POST", url)`: the URL is the second argument.
        let url_i = usize::from(last == "request" && c.arg(0).as_str().is_some_and(|m| m.len() <= 7));
        let mut dest = c.get(url_i, "url");
        if dest.as_ref_path() == Some("urllib.request.Request()") {
            dest = dest.origin.clone().map(Val::str).unwrap_or_default();
        }
        let payload = c.taint();
        send(e, path, payload, dest.clone(), at);
        let mut v = Val::tainted(Taint::of(taint::NET));
        v.origin = dest.identity().map(|d| format!("download of {d}"));
        return v;
    }
    if matches!(last, "sendmail" | "send_message" | "storbinary") {
        send(e, path, c.taint(), recv.cloned().unwrap_or_default(), at);
        return Val::unknown();
    }
    if path.ends_with("HTTPConnection") || path.ends_with("HTTPSConnection") {
        let mut v = Val::api(format!("{path}()"));
        v.origin = c.arg(0).text();
        return v;
    }
    if path.ends_with(".request") && (path.contains("HTTPConnection()") || path.contains("HTTPSConnection()")) {
        let dest = recv.and_then(|r| r.origin.clone()).map(Val::str).unwrap_or_default();
        send(e, path, c.taint(), dest, at);
        return Val::tainted(Taint::of(taint::NET));
    }
    // A method of an object the table does not name: by the method's name.
    if let Some(r) = recv.filter(|r| r.taint.has(taint::SOCKET | taint::WRITER | taint::NET)) {
        return unknown_method(e, r.clone(), last, c);
    }
    // Calls of unknown APIs: a `Ref` to the result, so that its methods keep a path.
    let mut v = Val::api(format!("{path}()"));
    v.taint = c.taint();
    if let Some(r) = recv {
        v.taint.join(&r.taint);
    }
    v
}

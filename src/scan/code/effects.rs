//! The effects the front-ends record, written once for the three languages: reading the
//! environment or a file, writing a file, sending, running text or a program, decoding a
//! literal, building an API name at run time.

use crate::scan::code::apis::{
    credential_command, credential_path, is_shell_program, persist_path, probe_command, probe_env, probe_path,
    secret_env, sensitive_name,
};
use crate::scan::code::engine::Engine;
use crate::scan::code::facts::{Ev, Lang};
use crate::scan::code::value::{
    Shape, Taint, Val, base64_bytes, base64_decode, hex_decode, inflate, percent_decode, rot13, taint,
};

/// Reading the environment variable `name`: a secret, a probe, the home folder, or data.
pub(crate) fn env_read(e: &mut Engine<'_>, name: &str, at: usize) -> Val {
    if matches!(name, "HOME" | "USERPROFILE") {
        return Val::str("~");
    }
    if secret_env(name) {
        let what = format!("the environment variable {name}");
        e.emit(at, Ev::SecretRead { what: what.clone() });
        let mut v = Val::tainted(Taint::secret(what));
        v.origin = Some(format!("env:{name}"));
        return v;
    }
    if probe_env(name) {
        return Val::tainted(Taint::of(taint::PROBE));
    }
    Val::unknown()
}

/// Reading the file `path`: a credential store (secret), a probe of the machine, or data.
pub(crate) fn file_read(e: &mut Engine<'_>, path: &Val, at: usize) -> Val {
    let mut t = path.deep_taint();
    t.params = path.taint.params;
    if let Some(p) = path.text() {
        if let Some(what) = credential_path(&p) {
            e.emit(at, Ev::SecretRead { what: what.clone() });
            let mut v = Val::tainted(Taint::secret(what));
            v.taint.join(&t);
            return v;
        }
        if probe_path(&p) {
            t.bits |= taint::PROBE;
        }
    }
    t.bits |= taint::FILE;
    let mut v = Val::tainted(t);
    v.origin = path.identity();
    v
}

/// Whether a path exists (`os.path.exists`, `fs.existsSync`, `[ -f … ]`): a probe when the
/// path is a sandbox marker.
pub(crate) fn path_test(path: &Val) -> Val {
    match path.text() {
        Some(p) if probe_path(&p) => Val::tainted(Taint::of(taint::PROBE)),
        _ => Val::tainted(path.deep_taint()),
    }
}

/// Writing `data` to `path`.
pub(crate) fn file_write(e: &mut Engine<'_>, path: Val, data: Val, at: usize) {
    if let Some(p) = path.text().filter(|p| persist_path(p)) {
        e.emit(at, Ev::Persist { path: p });
    }
    e.emit(at, Ev::Write { path, data });
}

/// A handle on `path` opened for writing.
pub(crate) fn writer(path: &Val) -> Val {
    let mut v = Val::tainted(Taint::of(taint::WRITER));
    v.origin = path.identity();
    v
}

/// Sending `payload` to `dest` with `api`.
pub(crate) fn send(e: &mut Engine<'_>, api: &str, payload: Taint, dest: Val, at: usize) {
    e.emit(
        at,
        Ev::Send {
            api: api.to_owned(),
            payload,
            dest,
        },
    );
}

/// Running `arg` as `lang` code or a command line with `api`; the output's value.
pub(crate) fn exec_text(e: &mut Engine<'_>, api: &str, arg: Val, lang: Lang, at: usize) -> Val {
    let mut out = Taint::default();
    if lang == Lang::Shell
        && let Some(cmd) = arg.text()
    {
        if let Some(what) = credential_command(&cmd) {
            e.emit(at, Ev::SecretRead { what: what.clone() });
            out = Taint::secret(what);
        }
        if probe_command(&cmd) {
            out.bits |= taint::PROBE;
        }
        if cmd.contains("date +%s") || cmd.trim() == "date" {
            out.bits |= taint::TIME;
        }
    }
    e.emit(
        at,
        Ev::Exec {
            api: api.to_owned(),
            arg,
            lang,
        },
    );
    Val::tainted(out)
}

/// Starting `program` with `args`; the process's (or its output's) value.
pub(crate) fn spawn(e: &mut Engine<'_>, api: &str, program: Val, args: Vec<Val>, at: usize) -> Val {
    let line = std::iter::once(&program)
        .chain(args.iter())
        .map(|v| v.text().unwrap_or_else(|| "?".into()))
        .collect::<Vec<_>>()
        .join(" ");
    let mut out = Taint::default();
    if let Some(what) = credential_command(&line) {
        e.emit(at, Ev::SecretRead { what: what.clone() });
        out = Taint::secret(what);
    }
    if probe_command(&line) {
        out.bits |= taint::PROBE;
    }
    let shell = program.text().is_some_and(|p| is_shell_program(&p));
    // `bash -c "…"` runs text: the command line is analysed as shell.
    if shell
        && let Some(k) = args
            .iter()
            .position(|a| a.as_str().is_some_and(|s| s == "-c" || s == "/c" || s == "-Command"))
        && let Some(cmd) = args.get(k + 1)
    {
        exec_text(e, api, cmd.clone(), Lang::Shell, at);
    }
    let interactive =
        shell && (args.is_empty() || args.iter().any(|a| a.as_str().is_some_and(|s| s == "-i" || s == "-li")));
    if interactive {
        out.bits |= taint::SHELL_PROC;
    }
    e.emit(
        at,
        Ev::Spawn {
            api: api.to_owned(),
            program,
            args,
        },
    );
    Val::tainted(out)
}

/// An API name (module, function, attribute) that may have been built at run time.
pub(crate) fn name_built(e: &mut Engine<'_>, kind: &'static str, name: &Val, at: usize) {
    if let (Some(how), Some(s)) = (name.how, name.as_str())
        && sensitive_name(s)
    {
        e.emit(
            at,
            Ev::NameBuilt {
                kind,
                name: s.to_owned(),
                how,
            },
        );
    }
}

/// The decoders the engine folds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decoder {
    /// Base64 (standard or URL-safe).
    Base64,
    /// Hex digits.
    Hex,
    /// `%XX` escapes.
    Percent,
    /// ROT13.
    Rot13,
    /// zlib, gzip or raw deflate.
    Inflate,
}

/// Decodes `v` with `d`. A literal decoded is an encoded payload (`ENCODED_LITERAL`); an
/// unknown input gives an unknown output, still `DECODED`.
pub(crate) fn decode(d: Decoder, v: &Val) -> Val {
    let mut t = v.deep_taint();
    t.bits |= taint::DECODED;
    let from_literal = matches!(v.shape, Shape::Str(_)) && !v.taint.has(taint::NET | taint::FILE);
    let out = match (d, v.as_str()) {
        (Decoder::Base64, Some(s)) => base64_decode(s).map(|x| (x, "base64 decode")),
        (Decoder::Hex, Some(s)) => hex_decode(s).map(|x| (x, "hex decode")),
        (Decoder::Percent, Some(s)) => percent_decode(s).map(|x| (x, "URL decode")),
        (Decoder::Rot13, Some(s)) => Some((rot13(s), "ROT13")),
        (Decoder::Inflate, Some(_)) => v
            .origin
            .as_deref()
            .and_then(|o| o.strip_prefix("b64:"))
            .and_then(base64_bytes)
            .and_then(|b| inflate(&b))
            .map(|x| (x, "zlib decompress")),
        _ => None,
    };
    match out {
        Some((s, how)) => {
            if from_literal {
                t.bits |= taint::ENCODED_LITERAL;
            }
            let mut r = Val::folded(s, how);
            r.taint = t;
            // Keep the base64 text so that an inflate of this value can find the bytes.
            if d == Decoder::Base64 {
                r.origin = v.as_str().map(|s| format!("b64:{s}"));
            }
            r
        }
        None => Val::tainted(t),
    }
}

//! Shell commands and pipelines: what each command does to its input, what it runs, sends,
//! downloads, writes and reads; redirections, `/dev/tcp`, here-documents.

use tree_sitter::Node;

use super::words::{join_words, printf};
use super::{Cmd, Sh};
use crate::scan::code::apis::{is_shell_program, probe_command};
use crate::scan::code::effects::{Decoder, decode, exec_text, file_read, file_write, send, spawn};
use crate::scan::code::engine::MAX_DEPTH;
use crate::scan::code::facts::{Ev, Lang};
use crate::scan::code::value::{Taint, Val, taint, unescape};

impl<'t> Sh<'t, '_> {
    /// Runs a command, pipeline or redirected statement with `input` on its standard input;
    /// its output's value.
    pub(super) fn run(&mut self, n: Node<'t>, input: Option<Val>) -> Val {
        if self.e.depth > MAX_DEPTH || !self.e.tick() {
            return Val::unknown();
        }
        self.e.depth += 1;
        let v = self.run_inner(n, input);
        self.e.depth -= 1;
        v
    }

    pub(super) fn run_inner(&mut self, n: Node<'t>, input: Option<Val>) -> Val {
        match n.kind() {
            "pipeline" => {
                let mut c = n.walk();
                let kids: Vec<Node<'t>> = n.named_children(&mut c).collect();
                let mut v = input;
                for k in kids {
                    v = Some(self.run(k, v));
                }
                v.unwrap_or_default()
            }
            "redirected_statement" => self.redirected(n, input),
            "command" => self.command(n, input, &[]),
            "subshell" | "compound_statement" | "list" => {
                let mut c = n.walk();
                let kids: Vec<Node<'t>> = n.named_children(&mut c).collect();
                let mut last = Val::unknown();
                for k in kids {
                    last = self.run(k, input.clone());
                }
                last
            }
            _ => {
                self.statement(n);
                Val::unknown()
            }
        }
    }

    pub(super) fn redirected(&mut self, n: Node<'t>, mut input: Option<Val>) -> Val {
        let mut outputs: Vec<Val> = Vec::new();
        let mut tcp = false;
        let mut c = n.walk();
        let redirects: Vec<Node<'t>> = n.children_by_field_name("redirect", &mut c).collect();
        for r in &redirects {
            let text = self.e.text(*r);
            match r.kind() {
                "file_redirect" => {
                    let dest = r
                        .child_by_field_name("destination")
                        .map(|d| self.word(d))
                        .unwrap_or_default();
                    let d = dest.text().unwrap_or_default();
                    if d.starts_with("/dev/tcp/") || d.starts_with("/dev/udp/") {
                        tcp = true;
                        self.e.emit(
                            r.start_byte(),
                            Ev::Connect {
                                api: "/dev/tcp".into(),
                                dest: dest.clone(),
                            },
                        );
                    } else if text.trim_start().starts_with('<')
                        || text.trim_start().chars().next().is_some_and(|c| c.is_ascii_digit())
                            && text.contains('<')
                            && !text.contains('>')
                    {
                        input = Some(file_read(&mut self.e, &dest, r.start_byte()));
                    } else if !d.is_empty() && !d.chars().all(|c| c.is_ascii_digit()) && d != "/dev/null" {
                        outputs.push(dest);
                    }
                }
                "heredoc_redirect" | "herestring_redirect" => {
                    let body = if r.kind() == "herestring_redirect" {
                        r.named_child(0).map(|x| self.word(x)).unwrap_or_default()
                    } else {
                        let mut c2 = r.walk();
                        let kids: Vec<Node<'t>> = r.named_children(&mut c2).collect();
                        kids.into_iter()
                            .find(|k| k.kind() == "heredoc_body")
                            .map(|b| Val::str(self.e.text(b)))
                            .unwrap_or_default()
                    };
                    input = Some(body);
                }
                _ => {}
            }
        }
        let body = n.child_by_field_name("body");
        let out = match body {
            Some(b) if b.kind() == "command" => self.command(b, input, &outputs),
            Some(b) => self.run(b, input),
            None => Val::unknown(),
        };
        if tcp {
            self.e.emit(n.start_byte(), Ev::BindStdio);
        }
        for o in outputs {
            file_write(&mut self.e, o, out.clone(), n.start_byte());
        }
        out
    }

    /// One command with its name and arguments folded; `to` are the files its output is
    /// redirected to (for `curl URL > file`).
    pub(super) fn command(&mut self, n: Node<'t>, mut input: Option<Val>, to: &[Val]) -> Val {
        let at = n.start_byte();
        let mut c = n.walk();
        let kids: Vec<Node<'t>> = n.named_children(&mut c).collect();
        let mut words: Vec<Val> = Vec::new();
        for k in kids {
            match k.kind() {
                "variable_assignment" => self.assignment(k),
                "herestring_redirect" => input = k.named_child(0).map(|x| self.word(x)),
                "heredoc_redirect" => {
                    let mut c2 = k.walk();
                    let body: Vec<Node<'t>> = k
                        .named_children(&mut c2)
                        .filter(|b| b.kind() == "heredoc_body")
                        .collect();
                    input = body.first().map(|b| Val::str(self.e.text(*b)));
                }
                "file_redirect" => {}
                _ => words.push(self.word(k)),
            }
        }
        let Some(name) = words.first().and_then(Val::text) else {
            return Val::tainted(words.first().map(|w| w.deep_taint()).unwrap_or_default());
        };
        let base = name.rsplit('/').next().unwrap_or(&name).to_owned();
        let args: Vec<Val> = words[1..].to_vec();
        let strs: Vec<String> = args.iter().map(|a| a.text().unwrap_or_default()).collect();
        let input_t = input.as_ref().map(|i| i.deep_taint()).unwrap_or_default();
        // A function of the script: its body was analysed where it is defined.
        if self.functions.contains_key(&name) {
            return Val::unknown();
        }
        let program = words[0].clone();
        self.filters(Cmd {
            base,
            program,
            args,
            strs,
            input,
            input_t,
            to,
            at,
        })
    }

    /// Commands that transform their input or print text: `echo`, `printf`, decoders, `rev`, `cat`, probes.
    pub(super) fn filters(&mut self, c: Cmd<'_>) -> Val {
        let Cmd {
            base,
            program,
            args,
            strs,
            input,
            input_t,
            to,
            at,
        } = c;
        match base.as_str() {
            "echo" | "printf" => {
                if base == "echo" {
                    let skip = strs.iter().take_while(|s| s.starts_with('-') && s.len() <= 3).count();
                    let e_flag = strs.iter().take(skip).any(|s| s.contains('e'));
                    let text = join_words(&intersperse(&args[skip..]));
                    match (text.as_str(), e_flag) {
                        (Some(s), true) => Val::folded(unescape(s), "echo -e"),
                        _ => text,
                    }
                } else {
                    printf(&args)
                }
            }
            "base64" | "base32" | "openssl"
                if strs
                    .iter()
                    .any(|s| matches!(s.as_str(), "-d" | "--decode" | "-D" | "-di" | "-id")) =>
            {
                decode(Decoder::Base64, &input.unwrap_or_default())
            }
            "xxd" if strs.iter().any(|s| s.contains('r')) => decode(Decoder::Hex, &input.unwrap_or_default()),
            "rev" => match input.as_ref().and_then(|i| i.as_str()) {
                Some(s) => Val::folded(s.trim_end_matches('\n').chars().rev().collect(), "rev").with(taint::OBFUSCATED),
                None => Val::tainted(input_t),
            },
            "tr" if strs.len() == 2 && strs[0].contains("A-Z") && strs[1].contains("N-Z") => {
                decode(Decoder::Rot13, &input.unwrap_or_default())
            }
            "gunzip" | "zcat" | "gzip" | "zlib-flate" | "pigz" if input.is_some() => {
                decode(Decoder::Inflate, &input.unwrap_or_default())
            }
            "cat" | "head" | "tail" | "less" | "more" | "tac" | "strings" => {
                let files: Vec<&Val> = args
                    .iter()
                    .filter(|a| !a.text().unwrap_or_default().starts_with('-'))
                    .collect();
                if files.is_empty() {
                    return input.unwrap_or_default();
                }
                let mut t = input_t;
                let mut last = Val::unknown();
                for f in files {
                    last = file_read(&mut self.e, f, at);
                    t.join(&last.taint);
                }
                if let (Some(body), true) = (input.as_ref().and_then(|i| i.as_str()), to.is_empty()) {
                    let _ = body;
                }
                Val { taint: t, ..last }
            }
            "date" => Val::tainted(Taint::of(taint::TIME)),
            "whoami" | "hostname" | "uname" | "id" | "systemd-detect-virt" | "virt-what" | "dmidecode" | "nproc" => {
                Val::tainted(Taint::of(taint::PROBE))
            }
            "grep" | "egrep" | "fgrep" if strs.iter().any(|s| probe_command(s)) => {
                Val::tainted(Taint::of(taint::PROBE))
            }
            _ => self.effects(Cmd {
                base,
                program,
                args,
                strs,
                input,
                input_t,
                to,
                at,
            }),
        }
    }

    /// Commands with effects: `eval`, `source`, `alias`, `read -s`, `chmod`, `curl`/`wget`, `nc`.
    pub(super) fn effects(&mut self, c: Cmd<'_>) -> Val {
        let Cmd {
            base,
            program,
            args,
            strs,
            input,
            input_t,
            to,
            at,
        } = c;
        match base.as_str() {
            "eval" => exec_text(&mut self.e, "eval", join_words(&intersperse(&args)), Lang::Shell, at),
            "source" | "." => spawn(&mut self.e, &base, Val::str(base.clone()), args, at),
            "alias" => {
                for a in &args {
                    self.alias(a, at);
                }
                Val::unknown()
            }
            "read" => {
                if strs.iter().any(|s| s.starts_with('-') && s.contains('s')) {
                    self.e.emit(at, Ev::PasswordPrompt);
                    if let Some(var) = strs.iter().rfind(|s| !s.starts_with('-')) {
                        self.e
                            .declare(var, Val::tainted(Taint::secret("a password typed by the user")));
                    }
                }
                Val::unknown()
            }
            "chmod" => {
                let mode = strs
                    .iter()
                    .find(|s| !s.starts_with('-') || s.starts_with("-x"))
                    .cloned()
                    .unwrap_or_default();
                let exec = mode.contains('x')
                    || mode
                        .chars()
                        .filter(char::is_ascii_digit)
                        .any(|d| matches!(d, '1' | '3' | '5' | '7'));
                for p in args
                    .iter()
                    .skip(1)
                    .filter(|a| !a.text().unwrap_or_default().starts_with('-'))
                {
                    self.e.emit(at, Ev::Chmod { path: p.clone(), exec });
                }
                Val::unknown()
            }
            "curl" | "wget" => self.fetch(&base, &args, &strs, input_t, to, at),
            "nc" | "ncat" | "netcat" | "socat" | "telnet" => {
                let host = args
                    .iter()
                    .find(|a| a.text().is_some_and(|t| !t.starts_with('-')))
                    .cloned()
                    .unwrap_or_default();
                self.e.emit(
                    at,
                    Ev::Connect {
                        api: base.clone(),
                        dest: Val::str(strs.join(" ")),
                    },
                );
                let _ = host;
                if strs.iter().any(|s| {
                    matches!(s.as_str(), "-e" | "-c" | "--exec" | "--sh-exec")
                        || s.starts_with("exec:")
                        || s.starts_with("system:")
                        || s.contains(",pty")
                }) {
                    self.e.emit(at, Ev::BindStdio);
                    spawn(&mut self.e, &base, Val::str("sh"), vec![Val::str("-i")], at);
                }
                if input_t.bits != 0 {
                    send(&mut self.e, &base, input_t, Val::str(strs.join(" ")), at);
                }
                Val::tainted(Taint::of(taint::NET))
            }
            _ => self.interpreters(Cmd {
                base,
                program,
                args,
                strs,
                input,
                input_t,
                to,
                at,
            }),
        }
    }

    /// Interpreters given code or standard input, writers of files, wrappers, and any other program.
    pub(super) fn interpreters(&mut self, c: Cmd<'_>) -> Val {
        let Cmd {
            base,
            program,
            args,
            strs,
            input,
            at,
            ..
        } = c;
        match base.as_str() {
            "python" | "python3" | "node" | "deno" | "bun" | "perl" | "ruby" | "php"
                if strs.iter().any(|s| matches!(s.as_str(), "-c" | "-e" | "-r" | "eval")) =>
            {
                let k = strs
                    .iter()
                    .position(|s| matches!(s.as_str(), "-c" | "-e" | "-r" | "eval"))
                    .unwrap_or(0);
                let lang = if base.starts_with("python") {
                    Lang::Python
                } else if matches!(base.as_str(), "node" | "deno" | "bun") {
                    Lang::JavaScript
                } else {
                    Lang::Shell
                };
                exec_text(
                    &mut self.e,
                    &base,
                    args.get(k + 1).cloned().unwrap_or_default(),
                    lang,
                    at,
                )
            }
            "python" | "python3" | "node" | "sh" | "bash" | "zsh" | "dash" | "ksh" | "pwsh" | "powershell"
                if input.is_some() && (strs.is_empty() || strs.iter().all(|s| s.starts_with('-'))) =>
            {
                let lang = if base.starts_with("python") {
                    Lang::Python
                } else if base == "node" {
                    Lang::JavaScript
                } else {
                    Lang::Shell
                };
                exec_text(&mut self.e, &format!("| {base}"), input.unwrap_or_default(), lang, at)
            }
            "crontab" | "tee" if input.is_some() => {
                let path = if base == "crontab" {
                    Val::str("crontab")
                } else {
                    args.iter()
                        .rfind(|a| !a.text().unwrap_or_default().starts_with('-'))
                        .cloned()
                        .unwrap_or_default()
                };
                file_write(&mut self.e, path, input.clone().unwrap_or_default(), at);
                input.unwrap_or_default()
            }
            "exec" | "nohup" | "sudo" | "env" | "command" | "builtin" | "time" | "setsid" | "xargs"
                if !args.is_empty() =>
            {
                let skip = args
                    .iter()
                    .take_while(|a| a.text().is_some_and(|t| t.starts_with('-') || t.contains('=')))
                    .count();
                spawn(
                    &mut self.e,
                    &base,
                    args.get(skip).cloned().unwrap_or_default(),
                    args.iter().skip(skip + 1).cloned().collect(),
                    at,
                )
            }
            _ => {
                let shell = is_shell_program(&base);
                let v = spawn(&mut self.e, &base, program, args, at);
                if shell && !strs.iter().any(|s| s == "-c") {
                    return v;
                }
                v
            }
        }
    }

    /// `curl`/`wget`: a download (to a file or to standard output) and, with data options,
    /// a send.
    pub(super) fn fetch(
        &mut self,
        base: &str,
        args: &[Val],
        strs: &[String],
        input: Taint,
        to: &[Val],
        at: usize,
    ) -> Val {
        let url = args
            .iter()
            .find(|a| a.text().is_some_and(|t| t.contains("://")))
            .cloned()
            .unwrap_or_default();
        let mut out_file: Option<Val> = None;
        let mut payload = Taint::default();
        let mut sends = false;
        let mut k = 0;
        while k < strs.len() {
            let s = strs[k].as_str();
            let next = args.get(k + 1).cloned();
            match s {
                "-o" | "--output" | "-O" if base == "wget" || s != "-O" => {
                    out_file = next;
                    k += 1;
                }
                "-O" | "--remote-name" => {
                    out_file = url
                        .text()
                        .and_then(|u| u.rsplit('/').next().map(|b| Val::str(b.to_owned())));
                }
                "-d" | "--data" | "--data-binary" | "--data-raw" | "--data-urlencode" | "-F" | "--form" | "-T"
                | "--upload-file" | "--post-data" | "--post-file" | "--body-data" | "--body-file" | "-H"
                | "--header" | "-u" | "--user" | "-b" | "--cookie" => {
                    if !matches!(s, "-H" | "--header" | "-u" | "--user" | "-b" | "--cookie") {
                        sends = true;
                    }
                    if let Some(v) = next {
                        let text = v.text().unwrap_or_default();
                        let file = text
                            .split_once('@')
                            .map(|(_, f)| f)
                            .filter(|f| !f.is_empty() && *f != "-");
                        if let Some(f) =
                            file.or(if matches!(s, "-T" | "--upload-file" | "--post-file" | "--body-file") {
                                Some(text.as_str())
                            } else {
                                None
                            })
                        {
                            let read = file_read(&mut self.e, &Val::str(f.to_owned()), at);
                            payload.join(&read.taint);
                        }
                        if text.contains("@-") || text == "-" || text.ends_with("=@-") {
                            payload.join(&input);
                        }
                        payload.join(&v.deep_taint());
                    }
                    k += 1;
                }
                "-X" | "--request" | "--method" => {
                    if next
                        .as_ref()
                        .and_then(|v| v.as_str())
                        .is_some_and(|m| !m.eq_ignore_ascii_case("GET"))
                    {
                        sends = true;
                    }
                    k += 1;
                }
                _ => payload.join(&args[k].deep_taint()),
            }
            k += 1;
        }
        if sends || payload.has(taint::SECRET | taint::ENV_ALL) {
            send(&mut self.e, base, payload, url.clone(), at);
        }
        let to = out_file.or_else(|| to.first().cloned());
        if let Some(path) = to.as_ref() {
            self.e.emit(
                at,
                Ev::Download {
                    api: base.to_owned(),
                    url: url.clone(),
                    to: Some(path.clone()),
                },
            );
            let mut data = Val::tainted(Taint::of(taint::NET));
            data.origin = url.text();
            file_write(&mut self.e, path.clone(), data, at);
            return Val::unknown();
        }
        let mut v = Val::tainted(Taint::of(taint::NET));
        v.origin = url.text().map(|u| format!("download of {u}"));
        v
    }
}

/// Arguments with a space between them (as `echo` prints them).
fn intersperse(args: &[Val]) -> Vec<Val> {
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push(Val::str(" "));
        }
        out.push(a.clone());
    }
    out
}

//! What the language front-ends tell the code rules: a list of [`Event`]s — code run from
//! text, programs started, network sends, downloads, file writes, permission changes,
//! deserialisation, sockets, secrets read, API names built at run time, shadowed commands —
//! each with its position, its scope (a function, or the module) and the time or environment
//! condition it sits under; and the strings the engine folded, to which the text rules are
//! applied as if they had been written plainly.
//!
//! The rules (`scan::rules::sc04x_…`) read only this: they are the same for Python,
//! JavaScript/TypeScript and shell.

use crate::scan::code::value::{Taint, Val};

/// A language the scan parses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lang {
    /// Python 3.
    Python,
    /// JavaScript (also `.mjs`, `.cjs`, `.jsx`).
    JavaScript,
    /// TypeScript.
    TypeScript,
    /// TypeScript with JSX.
    Tsx,
    /// POSIX shell and bash (also zsh and ksh scripts, parsed as bash).
    Shell,
}

impl Lang {
    /// How the language is named in a reason.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Lang::Python => "Python",
            Lang::JavaScript => "JavaScript",
            Lang::TypeScript | Lang::Tsx => "TypeScript",
            Lang::Shell => "shell",
        }
    }
}

/// What kind of condition gates an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GateKind {
    /// The current time compared with a fixed date (a time bomb).
    Time,
    /// A probe of the machine: sandbox, VM, debugger or CI detection.
    Probe,
}

/// The condition an event sits under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Gate {
    /// Time or probe.
    pub(crate) kind: GateKind,
    /// The condition as written (first line, shortened).
    pub(crate) what: String,
    /// Byte offset of the condition.
    pub(crate) at: usize,
}

/// One thing the code does.
#[derive(Clone, Debug)]
pub(crate) struct Event {
    /// Byte offset in the analysed text.
    pub(crate) at: usize,
    /// 0: the module's top level; otherwise a function (or shell function) of the file.
    pub(crate) scope: u32,
    /// The time or environment condition around it, when there is one.
    pub(crate) gate: Option<Gate>,
    /// What happens.
    pub(crate) kind: Ev,
}

/// The kinds of [`Event`].
#[derive(Clone, Debug)]
pub(crate) enum Ev {
    /// Text is run as code or as a command line: `eval`, `exec`, `Function`, `vm`,
    /// `os.system`, `child_process.exec`, `sh -c`, `eval` in shell. `lang` is the language
    /// the text is in.
    Exec {
        /// The API as resolved (`builtins.exec`, `child_process.exec`).
        api: String,
        /// The text run.
        arg: Val,
        /// The language of the text.
        lang: Lang,
    },
    /// A program is started with arguments (`subprocess.run([...])`, `spawn(p, args)`, a
    /// shell command).
    Spawn {
        /// The API as resolved.
        api: String,
        /// The program.
        program: Val,
        /// Its arguments.
        args: Vec<Val>,
    },
    /// Data is sent over the network.
    Send {
        /// The API as resolved.
        api: String,
        /// The taint of everything sent (body, URL, headers).
        payload: Taint,
        /// The destination URL or host, as folded.
        dest: Val,
    },
    /// Something is downloaded; `to` is the file it is saved to, when the API says.
    Download {
        /// The API as resolved.
        api: String,
        /// The URL, as folded.
        url: Val,
        /// The file it is written to.
        to: Option<Val>,
    },
    /// A file is written.
    Write {
        /// The file.
        path: Val,
        /// What is written.
        data: Val,
    },
    /// A file's permissions are changed; `exec` when it becomes executable.
    Chmod {
        /// The file.
        path: Val,
        /// Execute bits are set.
        exec: bool,
    },
    /// Data is deserialised by a loader that can run code.
    Deser {
        /// The API as resolved (`pickle.loads`, `yaml.load`).
        api: String,
        /// What is loaded.
        input: Val,
    },
    /// A socket is opened to `dest`.
    Connect {
        /// The API as resolved.
        api: String,
        /// Host and port, as folded.
        dest: Val,
    },
    /// A process's standard streams are bound to a socket (`os.dup2(s.fileno(), 0)`,
    /// `sock.pipe(sh.stdin)`, `>& /dev/tcp/…`).
    BindStdio,
    /// A secret is read.
    SecretRead {
        /// What it is.
        what: String,
    },
    /// A module, global or attribute name was built at run time (`require('child_'+'process')`).
    NameBuilt {
        /// `module`, `function` or `attribute`.
        kind: &'static str,
        /// The name it folds to.
        name: String,
        /// How it was built.
        how: &'static str,
    },
    /// A shell alias or function named like a common command.
    Shadow {
        /// The command shadowed.
        name: String,
        /// `alias` or `function`.
        how: &'static str,
        /// The scope of its body.
        body: u32,
        /// The body ends by running the real command (so the user notices nothing).
        calls_real: bool,
    },
    /// A password is read without echo (`read -s`, `getpass`).
    PasswordPrompt,
    /// A file whose content is a shell start-up file or a scheduled job is written
    /// (`~/.bashrc`, crontab, LaunchAgents): persistence.
    Persist {
        /// The file.
        path: String,
    },
}

/// Everything one front-end found in one text.
#[derive(Clone, Debug, Default)]
pub(crate) struct Facts {
    /// The events, in the order the engine met them.
    pub(crate) events: Vec<Event>,
    /// Strings the engine computed (not written plainly), with their byte offsets.
    pub(crate) folded: Vec<(usize, Val)>,
    /// Names of the scopes (index = scope id; 0 is the module).
    pub(crate) scopes: Vec<String>,
}

impl Facts {
    /// New facts with the module scope.
    pub(crate) fn new() -> Facts {
        Facts {
            scopes: vec!["the module".to_owned()],
            ..Facts::default()
        }
    }

    /// A new scope named `name`; its id.
    pub(crate) fn scope(&mut self, name: &str) -> u32 {
        self.scopes.push(name.to_owned());
        u32::try_from(self.scopes.len() - 1).unwrap_or(u32::MAX)
    }

    /// The events of one scope.
    pub(crate) fn in_scope(&self, scope: u32) -> impl Iterator<Item = &Event> {
        self.events.iter().filter(move |e| e.scope == scope)
    }

    /// Every scope id.
    pub(crate) fn scope_ids(&self) -> impl Iterator<Item = u32> {
        0..u32::try_from(self.scopes.len()).unwrap_or(u32::MAX)
    }
}

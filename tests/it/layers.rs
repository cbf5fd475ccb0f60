//! The layering of the crate, enforced (ARCHITECTURE.md, "Layers"): the table of which unit
//! may use which, and the IO-free rule for the core.
//!
//! A *unit* is a module of `src/` named in [`LAYERS`]; a file belongs to the longest unit its
//! module path starts with (`src/build/session/tree.rs` → `build::session`, `src/build/mod.rs`
//! → `build`). Every path a file names (`crate::…`, `super::…`, `self::…`, a child module, and
//! every `use` tree) is resolved to the unit it reaches; a unit may reach only the units of
//! its row. Rows are written bottom-up and may only name rows above them, so the table is the
//! dependency order and the graph has no cycle. Core units (`Core`) never name `std::fs`,
//! `std::process`, `std::env`, the clock or an IO crate: IO happens in the `Io` units only.
//! Test code (from the first `#[cfg(test)]` item of a file on, and test modules in files of
//! their own) is not checked.

use std::collections::{BTreeMap, BTreeSet};

/// Whether a unit may do IO.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Pure: no file system, processes, environment, clock or network.
    Core,
    /// An IO layer.
    Io,
}
use Kind::{Core, Io};

/// The layering table, bottom-up: `(unit, kind, the units it may use)`. A new module gets its
/// row before it gets code; a row may only name rows above it.
const LAYERS: &[(&str, Kind, &[&str])] = &[
    // The bottom layer: plain types, helpers and diagnostics.
    ("util", Core, &[]),
    ("model", Core, &[]),
    ("diag", Core, &["model"]),
    // The registry of rules (diagnostic and scan rules).
    ("rules", Core, &["diag", "model"]),
    // The salsa database and its inputs.
    ("db", Core, &["model"]),
    // What `skillc check` does not report (`[check]` of pipeline.toml): globs over paths.
    ("suppress", Core, &[]),
    // Stages: pure functions and tracked queries over the inputs.
    ("config", Core, &["diag", "model", "rules", "suppress"]),
    ("vocab", Core, &["db", "diag", "model", "rules"]),
    ("skill", Core, &["db", "diag", "model", "rules"]),
    ("extract", Core, &["db", "diag", "model", "rules", "skill", "vocab"]),
    // With `scan::code` (scripts parsed as code, tree-sitter): the code rules of `scan::rules`
    // and the analysis use each other, so they are one unit.
    ("scan", Core, &["db", "diag", "model", "rules", "skill", "util"]),
    ("route", Core, &["model", "vocab"]),
    ("migrate", Core, &["diag", "model", "rules", "skill"]),
    ("export", Core, &["diag", "model", "rules", "skill", "util"]),
    // `check --fix`: safe edits of SKILL.md through the frontmatter writer (skill::writer).
    ("fix", Core, &["diag", "model", "rules", "skill"]),
    (
        "translate",
        Core,
        // `util`: `translations.toml` is rendered with its TOML string quoting.
        &["db", "diag", "extract", "model", "rules", "skill", "util", "vocab"],
    ),
    (
        "generate",
        Core,
        &["extract", "model", "route", "skill", "translate", "util", "vocab"],
    ),
    // The JSON contracts of docs/json.md, as types.
    ("messages", Core, &["diag", "migrate", "model", "scan"]),
    (
        "admit",
        Core,
        &[
            "diag",
            "extract",
            "generate",
            "messages",
            "model",
            "route",
            "rules",
            "translate",
            "util",
            "vocab",
        ],
    ),
    // The dense embedders' interface (texts → unit vectors), used by the menu.
    ("embed", Core, &[]),
    // The menu index and selection (RUNTIME.md §1): a stage like the others.
    (
        "menu",
        Core,
        &[
            "db", "diag", "messages", "model", "route", "rules", "skill", "util", "vocab",
        ],
    ),
    ("sign", Core, &["util"]),
    // The out/ contract, the build's queries and verification.
    ("emit", Core, &["model", "route", "util"]),
    (
        "build",
        Core,
        &[
            "admit",
            "db",
            "diag",
            "emit",
            "extract",
            "generate",
            "menu",
            "messages",
            "model",
            "rules",
            "scan",
            "skill",
            "translate",
            "util",
            "vocab",
        ],
    ),
    (
        "verify",
        Core,
        &["diag", "emit", "menu", "messages", "model", "sign", "util"],
    ),
    // Whom a catalog's consumer trusts: pinned keys and rollback floors (issue 18, item 1).
    ("trust", Core, &["sign"]),
    // IO layers: the disk, processes, the network, the clock.
    ("db::load", Io, &["db", "diag", "model", "rules"]),
    ("emit::write", Io, &["emit", "model", "util"]),
    // Publishing `out/`: the spare generation and the atomic switch (issue 18, item 6).
    ("emit::publish", Io, &["emit", "emit::write"]),
    ("build::exec", Io, &["admit", "model", "util"]),
    (
        "build::store",
        Io,
        &["build", "emit", "emit::write", "messages", "model", "util"],
    ),
    // The dense embedders: the local sentence-embedding model (feature `local-model`) reads a
    // model folder, the OpenAI-compatible client calls an endpoint.
    ("embed::local", Io, &["embed", "util"]),
    ("embed::openai", Io, &["embed"]),
    // The build's menu files: the index, and dense vectors through the embedders' cache.
    (
        "build::dense",
        Io,
        &[
            "build",
            "db",
            "embed",
            "embed::local",
            "embed::openai",
            "emit",
            "emit::write",
            "menu",
            "util",
        ],
    ),
    // The append-only event log (`.skillc/events.jsonl`, RUNTIME.md §3).
    ("events", Io, &["emit::write", "model", "util"]),
    (
        "build::session",
        Io,
        &[
            "admit",
            "build",
            "build::dense",
            "build::exec",
            "build::store",
            // `[cache] remote`: where the shared build cache is (build::session::remote).
            "config",
            "db",
            "db::load",
            "diag",
            "emit",
            "emit::publish",
            "emit::write",
            "events",
            "generate",
            "menu",
            "messages",
            "model",
            "rules",
            "sign",
            // `translations.toml` is checked, as the vocabulary is, before anything is named.
            "translate",
            "util",
            "vocab",
        ],
    ),
    (
        "import",
        Io,
        &[
            "db",
            "db::load",
            "diag",
            "emit::write",
            "events",
            "export",
            "model",
            "rules",
            "scan",
            "skill",
            "translate",
            "util",
        ],
    ),
    ("watch", Io, &["model"]),
    // Reading a verified out/ (list, info, search, serve) and the menu over it: the files as
    // `emit::write` lists them, each retained SKILL.md's frontmatter as `skill` reads it, and
    // the embedder that embeds turns.
    (
        "catalog",
        Io,
        &[
            "diag",
            "embed",
            "embed::local",
            "embed::openai",
            "emit",
            "emit::write",
            "export",
            "generate",
            "menu",
            "messages",
            "model",
            "sign",
            "skill",
            "trust",
            "util",
            "verify",
        ],
    ),
    // The curator: its selection is pure, the rest moves folders and calls a model.
    ("curate::select", Core, &["diag", "menu", "model", "util"]),
    (
        "curate",
        Io,
        &[
            "curate::select",
            "db",
            "db::load",
            "diag",
            "emit::write",
            "events",
            "import",
            "model",
            "rules",
            "skill",
            "util",
        ],
    ),
    // The catalog over HTTP and the dashboard.
    (
        "serve",
        Io,
        &[
            "build::session",
            "catalog",
            "curate",
            "diag",
            "events",
            "export",
            "import",
            "menu",
            "messages",
            "model",
            "util",
            "verify",
            "watch",
        ],
    ),
    // The command line: the only layer that prints, picks exit codes and uses `anyhow`.
    (
        "cli",
        Io,
        &[
            "admit",
            "build",
            "build::dense",
            "build::session",
            "catalog",
            "config",
            "curate",
            "db",
            "db::load",
            "diag",
            "embed",
            "emit",
            "emit::publish",
            "emit::write",
            "events",
            "export",
            "extract",
            "fix",
            "import",
            "menu",
            "messages",
            "migrate",
            "model",
            "rules",
            "scan",
            "serve",
            "sign",
            "skill",
            "suppress",
            "translate",
            "trust",
            "util",
            "verify",
            "vocab",
            "watch",
        ],
    ),
];

/// Paths a core unit never names: the file system, processes, the environment, the clock and
/// the crates that do IO.
const IO_PATHS: &[&str] = &[
    "std::fs",
    "std::process",
    "std::env",
    "std::net::TcpListener",
    "std::net::TcpStream",
    "std::net::UdpSocket",
    "std::io::stdin",
    "std::io::stdout",
    "std::io::stderr",
    "std::time::SystemTime",
    "std::time::Instant",
    "jiff::Timestamp::now",
    "jiff::Zoned::now",
    "walkdir",
    "notify",
    "notify_debouncer_full",
    "ureq",
    "opendal",
    "tokio::runtime",
    "tempfile",
    "getrandom",
    "ctrlc",
    "indicatif",
];

/// Macros a core unit never calls (printing is the CLI's).
const IO_MACROS: &[&str] = &["print!", "println!", "eprint!", "eprintln!", "dbg!"];

/// Every file of `src/` outside tests, as (module path, code).
fn source_files() -> Vec<(Vec<String>, String)> {
    crate::common::source_files()
        .into_iter()
        .map(|f| (f.module, f.code))
        .collect()
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Ident(String),
    /// `::`
    PathSep,
    /// `!` right after an identifier: a macro call.
    Bang,
    Punct(char),
}

/// The tokens of code: comments, strings and character literals dropped (a path inside a
/// string is not a dependency).
fn tokens(code: &str) -> Vec<Token> {
    let b: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                i += if b[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if (c == 'r' || c == 'b') && raw_string_start(&b, i).is_some() {
            let (hashes, body) = raw_string_start(&b, i).unwrap_or((0, i));
            i = body;
            loop {
                if i >= b.len() {
                    break;
                }
                if b[i] == '"' && (0..hashes).all(|k| b.get(i + 1 + k) == Some(&'#')) {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
        } else if c == '\'' {
            // A character literal ('a', '\n', '\u{1F}') or a lifetime ('a): skip literals only.
            let close = if next == Some('\\') {
                (i + 3..b.len().min(i + 12)).find(|&k| b[k] == '\'')
            } else {
                (b.get(i + 2) == Some(&'\'')).then_some(i + 2)
            };
            i = close.map_or(i + 1, |k| k + 1);
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            out.push(Token::Ident(b[start..i].iter().collect()));
            if b.get(i) == Some(&'!') && b.get(i + 1) != Some(&'=') {
                out.push(Token::Bang);
                i += 1;
            }
        } else if c == ':' && next == Some(':') {
            out.push(Token::PathSep);
            i += 2;
        } else if c.is_whitespace() || c.is_ascii_digit() {
            i += 1;
        } else {
            out.push(Token::Punct(c));
            i += 1;
        }
    }
    out
}

/// At a raw (byte) string `r#"…"#` / `br"…"`: the number of `#` and the index after the `"`.
fn raw_string_start(b: &[char], i: usize) -> Option<(usize, usize)> {
    if i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_') {
        return None;
    }
    let mut k = i + usize::from(b.get(i) == Some(&'b'));
    if b.get(k) != Some(&'r') {
        return None;
    }
    k += 1;
    let hashes = b[k..].iter().take_while(|c| **c == '#').count();
    (b.get(k + hashes) == Some(&'"')).then_some((hashes, k + hashes + 1))
}

/// Every path a token stream names, use trees expanded: `use std::{fs, io::Write}` gives
/// `std::fs` and `std::io::Write`.
fn paths(toks: &[Token]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let starts = matches!(&toks[i], Token::Ident(_))
            && toks.get(i + 1) == Some(&Token::PathSep)
            && (i == 0 || toks[i - 1] != Token::PathSep);
        if starts {
            let (found, end) = tree(toks, i);
            // `a::{self, B}` names `a` and `a::B`.
            out.extend(found.into_iter().map(|mut p| {
                if p.last().is_some_and(|l| l == "self") {
                    p.pop();
                }
                p
            }));
            i = end;
        } else {
            i += 1;
        }
    }
    out
}

/// Parses a use tree (or a plain path) at `i`: the paths it names and the index after it.
fn tree(toks: &[Token], mut i: usize) -> (Vec<Vec<String>>, usize) {
    match toks.get(i) {
        Some(Token::Punct('{')) => {
            i += 1;
            let mut all = Vec::new();
            while i < toks.len() {
                match &toks[i] {
                    Token::Punct('}') => return (all, i + 1),
                    Token::Punct(',') => i += 1,
                    _ => {
                        let (found, end) = tree(toks, i);
                        all.extend(found);
                        i = end.max(i + 1);
                    }
                }
            }
            (all, i)
        }
        Some(Token::Ident(name)) => {
            if toks.get(i + 1) == Some(&Token::PathSep) {
                let (rest, end) = tree(toks, i + 2);
                let rest = if rest.is_empty() { vec![Vec::new()] } else { rest };
                let found = rest
                    .into_iter()
                    .map(|mut r| {
                        r.insert(0, name.clone());
                        r
                    })
                    .collect();
                (found, end)
            } else {
                (vec![vec![name.clone()]], i + 1)
            }
        }
        _ => (vec![Vec::new()], i),
    }
}

/// The unit a module path belongs to: the longest unit of the table it starts with.
fn unit_of(module: &[String]) -> Option<&'static str> {
    LAYERS
        .iter()
        .map(|(u, _, _)| *u)
        .filter(|u| {
            let parts: Vec<&str> = u.split("::").collect();
            parts.len() <= module.len() && parts.iter().zip(module).all(|(a, b)| *a == b)
        })
        .max_by_key(|u| u.split("::").count())
}

/// The child modules a file declares (`mod x;`, `pub mod x;`).
fn children(toks: &[Token]) -> BTreeSet<String> {
    toks.windows(3)
        .filter_map(|w| match w {
            [Token::Ident(m), Token::Ident(name), Token::Punct(';')] if m == "mod" => Some(name.clone()),
            _ => None,
        })
        .collect()
}

/// Every breach of the layering in `files` (module path, text), one line each.
fn violations(files: &[(Vec<String>, String)]) -> Vec<String> {
    let rows: BTreeMap<&str, (Kind, &[&str])> = LAYERS.iter().map(|(u, k, d)| (*u, (*k, *d))).collect();
    let mut found = Vec::new();
    for (module, text) in files {
        let name = module.join("::");
        let Some(unit) = unit_of(module) else {
            found.push(format!(
                "{name}: no row in the layering table (tests/it/layers.rs, LAYERS)"
            ));
            continue;
        };
        let (kind, allowed) = rows[unit];
        let toks = tokens(text);
        let kids = children(&toks);
        for path in paths(&toks) {
            let Some(first) = path.first() else { continue };
            let internal: Option<Vec<String>> = match first.as_str() {
                "crate" => Some(path[1..].to_vec()),
                "super" => {
                    let ups = path.iter().take_while(|p| *p == "super").count();
                    (ups <= module.len()).then(|| {
                        module[..module.len() - ups]
                            .iter()
                            .cloned()
                            .chain(path[ups..].iter().cloned())
                            .collect()
                    })
                }
                "self" => Some(module.iter().cloned().chain(path[1..].iter().cloned()).collect()),
                child if kids.contains(child) => Some(module.iter().cloned().chain(path.iter().cloned()).collect()),
                _ => None,
            };
            match internal {
                Some(target) => {
                    let Some(to) = unit_of(&target) else { continue };
                    if to != unit && !allowed.contains(&to) {
                        found.push(format!(
                            "{name}: uses `{}` ({to}), not in the row of {unit}",
                            target.join("::")
                        ));
                    }
                }
                None if kind == Core => {
                    let joined = path.join("::");
                    if let Some(bad) = IO_PATHS
                        .iter()
                        .find(|p| joined == **p || joined.starts_with(&format!("{p}::")))
                    {
                        found.push(format!(
                            "{name}: names `{joined}` ({bad}), but {unit} is a core unit (no IO)"
                        ));
                    }
                }
                None => {}
            }
        }
        if kind == Core {
            for w in toks.windows(2) {
                if let [Token::Ident(m), Token::Bang] = w
                    && let Some(bad) = IO_MACROS.iter().find(|x| x.trim_end_matches('!') == m)
                {
                    found.push(format!("{name}: calls `{bad}`, but {unit} is a core unit (no IO)"));
                }
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

#[test]
fn the_table_is_ordered_bottom_up() {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for (unit, _, uses) in LAYERS {
        for u in *uses {
            assert!(
                seen.contains(u),
                "the row of `{unit}` names `{u}`, which is not above it"
            );
        }
        assert!(seen.insert(unit), "`{unit}` has two rows");
    }
}

#[test]
fn every_module_keeps_to_its_layer() {
    let files = source_files();
    assert!(files.len() > 50, "only {} files under src/", files.len());
    let found = violations(&files);
    assert!(found.is_empty(), "layering breaches:\n{}", found.join("\n"));
}

/// The check is shown to fail: one forbidden line added to a real file is reported, and only
/// it.
#[test]
fn a_forbidden_use_is_reported() {
    let with = |module: &str, line: &str| -> Vec<String> {
        let mut files = source_files();
        let path: Vec<String> = module.split("::").map(str::to_owned).collect();
        let file = files.iter_mut().find(|(m, _)| *m == path).expect("the module exists");
        file.1 = format!("{line}\n{}", file.1);
        violations(&files)
    };
    // A lower layer using a higher one.
    assert_eq!(
        with("db", "use crate::cli::Args;"),
        ["db: uses `cli::Args` (cli), not in the row of db"]
    );
    assert_eq!(
        with("skill::yaml", "use crate::{diag::Span, translate::{self, Plan}};"),
        [
            "skill::yaml: uses `translate::Plan` (translate), not in the row of skill",
            "skill::yaml: uses `translate` (translate), not in the row of skill",
        ]
    );
    // A submodule keeps to its unit's row.
    assert_eq!(
        with("scan::code", "use crate::admit::Level;"),
        ["scan::code: uses `admit::Level` (admit), not in the row of scan"]
    );
    assert_eq!(
        with(
            "admit",
            "fn f() { let _ = super::build::exec::System::new(Default::default()); }"
        ),
        ["admit: uses `build::exec::System::new` (build::exec), not in the row of admit"]
    );
    // IO in a core unit; a string or a comment naming it is not IO.
    assert_eq!(
        with("generate", "use std::{collections::BTreeMap, fs};"),
        ["generate: names `std::fs` (std::fs), but generate is a core unit (no IO)"]
    );
    assert_eq!(
        with("translate", "fn f() { eprintln!(\"x\"); }"),
        ["translate: calls `eprintln!`, but translate is a core unit (no IO)"]
    );
    assert!(
        with(
            "generate",
            "// use std::fs;\nconst X: &str = \"std::fs::read crate::cli\";"
        )
        .is_empty()
    );
    // The same lines are fine where the table allows them.
    assert!(with("cli", "use crate::db::Db;\nuse std::fs;").is_empty());
    // A module without a row.
    let mut files = source_files();
    files.push((vec!["dashboard".into()], String::new()));
    assert_eq!(
        violations(&files),
        ["dashboard: no row in the layering table (tests/it/layers.rs, LAYERS)"]
    );
}

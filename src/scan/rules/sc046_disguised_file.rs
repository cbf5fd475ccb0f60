//! `SC046` disguised-file: a file whose extension lies about its content — a data file
//! (`.json`, `.txt`, `.csv`, `.md`, …) that is a script (a `#!` line, or a `.json` that is
//! not JSON but parses as Python or JavaScript with calls), an image or document that is
//! text code, a polyglot (an image or PDF that also holds an archive or a script), and a
//! data file that another file of the skill runs with an interpreter (`python3
//! assets/config.json`). High; the one that is run, critical.
//!
//! Fixtures: `disguised-json-python`, `disguised-png-polyglot`, `disguised-txt-run`,
//! `fp-data-files`.

use crate::model::FindingSeverity;
use crate::scan::code::facts::Lang;
use crate::scan::code::{analyze, lang_of};

/// Extensions of data and documents: what they hold is read, not run.
pub(crate) const DATA_EXTENSIONS: &[&str] = &[
    "json", "jsonl", "txt", "csv", "tsv", "md", "markdown", "yaml", "yml", "xml", "ini", "cfg", "conf", "log", "toml",
    "rst", "html", "htm",
];

/// Extensions of binary media and documents.
pub(crate) const MEDIA_EXTENSIONS: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "webp", "ico", "bmp", "pdf", "mp3", "mp4", "wav", "woff", "woff2", "ttf", "otf",
];

/// What is wrong with one file: a severity, a reason, and the language the file really is
/// in when it is code (it is then scanned as code of that language). `text` is its content
/// when it is UTF-8.
pub(crate) fn check(ext: &str, bytes: &[u8], text: Option<&str>) -> Option<(FindingSeverity, String, Option<Lang>)> {
    if let Some(p) = polyglot(ext, bytes) {
        return Some((FindingSeverity::High, p, None));
    }
    let text = text?;
    let data = DATA_EXTENSIONS.contains(&ext);
    let media = MEDIA_EXTENSIONS.contains(&ext);
    if !(data || media) {
        return None;
    }
    let first = text.trim_start_matches('\u{FEFF}').lines().next().unwrap_or_default();
    if first.starts_with("#!")
        && (first.contains("sh") || first.contains("python") || first.contains("node") || first.contains("perl"))
    {
        return Some((
            FindingSeverity::High,
            format!(
                "a `.{ext}` file that is a script (`{}`)",
                first.chars().take(40).collect::<String>()
            ),
            lang_of("", text),
        ));
    }
    if media {
        if let Some(lang) = code_language(text) {
            return Some((
                FindingSeverity::High,
                format!("a `.{ext}` file that is {} code, not an image or document", lang.name()),
                Some(lang),
            ));
        }
        return None;
    }
    if ext == "json"
        && serde_json::from_str::<serde_json::Value>(text).is_err()
        && !looks_like_jsonc(text)
        && let Some(lang) = code_language(text)
    {
        return Some((
            FindingSeverity::High,
            format!("a `.json` file that is not JSON but {} code", lang.name()),
            Some(lang),
        ));
    }
    None
}

/// JSON with comments or trailing commas (tsconfig, VS Code settings) is still data.
fn looks_like_jsonc(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with('{') || t.starts_with('[')
}

/// The language a text is written in, when it parses as Python or JavaScript without error
/// and has the shape of a program (imports, definitions, calls).
fn code_language(text: &str) -> Option<Lang> {
    let t = text.trim();
    if t.is_empty() || t.len() > 512 * 1024 {
        return None;
    }
    let programmish = [
        "import ",
        "require(",
        "def ",
        "function ",
        "exec(",
        "eval(",
        "os.",
        "subprocess",
        "child_process",
    ]
    .iter()
    .filter(|w| t.contains(*w))
    .count()
        >= 2;
    if !programmish {
        return None;
    }
    [Lang::Python, Lang::JavaScript]
        .into_iter()
        .find(|&l| analyze(l, text, crate::scan::code::MAX_NESTING).is_some())
}

/// An image, PDF or archive that also holds something else.
fn polyglot(ext: &str, b: &[u8]) -> Option<String> {
    let kind = if b.starts_with(b"\x89PNG") {
        "PNG image"
    } else if b.starts_with(b"GIF8") {
        "GIF image"
    } else if b.starts_with(b"\xff\xd8\xff") {
        "JPEG image"
    } else if b.starts_with(b"%PDF") {
        "PDF document"
    } else {
        return None;
    };
    let tail = &b[4.min(b.len())..];
    let find = |needle: &[u8]| tail.windows(needle.len()).any(|w| w == needle);
    let inner = if find(b"PK\x03\x04") {
        "a zip archive"
    } else if find(b"<script") || find(b"<?php") {
        "a script"
    } else if find(b"#!/bin/") || find(b"import os") || find(b"child_process") || find(b"eval(") {
        "code"
    } else {
        return None;
    };
    // A PDF may embed JavaScript by design; only an archive inside it is a polyglot.
    if kind == "PDF document" && inner != "a zip archive" {
        return None;
    }
    Some(format!("a polyglot: a {kind} (`.{ext}`) that also holds {inner}"))
}

/// Interpreters that run a file given as their first argument.
const INTERPRETERS: &[(&str, &str)] = &[
    ("python3 ", "Python"),
    ("python ", "Python"),
    ("node ", "JavaScript"),
    ("bash ", "shell"),
    ("sh ", "shell"),
    ("zsh ", "shell"),
    ("source ", "shell"),
    ("deno run ", "JavaScript"),
    ("bun ", "JavaScript"),
    ("perl ", "Perl"),
    ("ruby ", "Ruby"),
    ("pwsh ", "PowerShell"),
];

/// Data files that a line runs with an interpreter: `(path as written, interpreter)`.
pub(crate) fn runs_data_file(line: &str) -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    for (cmd, lang) in INTERPRETERS {
        let mut from = 0;
        while let Some(p) = line[from..].find(cmd) {
            let at = from + p;
            from = at + cmd.len();
            let before_ok = at == 0 || !line.as_bytes()[at - 1].is_ascii_alphanumeric();
            if !before_ok {
                continue;
            }
            let arg = line[at + cmd.len()..]
                .split_whitespace()
                .find(|w| !w.starts_with('-'))
                .unwrap_or_default()
                .trim_matches(|c: char| matches!(c, '`' | '"' | '\'' | ')' | '(' | ';' | ','));
            let ext = arg
                .rsplit_once('.')
                .map(|(_, e)| e.to_ascii_lowercase())
                .unwrap_or_default();
            if !arg.contains("://")
                && (DATA_EXTENSIONS.contains(&ext.as_str()) || MEDIA_EXTENSIONS.contains(&ext.as_str()))
                && ext != "md"
            {
                out.push((arg.to_owned(), *lang));
            }
        }
    }
    out
}

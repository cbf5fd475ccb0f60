//! Diagnostics: the one type every stage reports problems with, and its renderers.
//!
//! A [`Diagnostic`] is data (rust-analyzer's "broken input is data"): stages return
//! diagnostics next to their value and never fail on user input. Rendering lives here so the
//! rules never depend on an output format: [`render_human`] draws rustc-style snippets with
//! `annotate-snippets`, and the `Serialize` impl is the stable JSON shape documented in
//! `docs/json.md`. A [`Rule`] names what fired (the registry of codes is `crate::rules`), and
//! a [`Source`] turns the byte ranges a parser sees into positions.

use std::fmt;
use std::ops::Range;

use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};
use serde::Serialize;

use crate::model::FindingSeverity;

/// A rule's default severity, on the scale of what it reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RuleSeverity {
    /// A diagnostic rule (`SK001`, `SC000`, …): the severity of its diagnostics in the
    /// default mode (some change under `--strict`).
    Diagnostic(Severity),
    /// A scan rule (`SC001`…): the severity of a finding before context lowers or evidence
    /// raises it.
    Finding(FindingSeverity),
}

impl fmt::Display for RuleSeverity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Both inner impls `pad`, so `{:<8}` in `skillc explain` aligns either scale.
        match self {
            RuleSeverity::Diagnostic(s) => s.fmt(f),
            RuleSeverity::Finding(s) => s.fmt(f),
        }
    }
}

/// A rule: a diagnostic rule or a scan rule (see [`RuleSeverity`]); `crate::rules` registers
/// every one.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Rule {
    /// Stable code, e.g. `SK001`.
    pub code: &'static str,
    /// Short kebab-case name, e.g. `missing-skill-md`.
    pub name: &'static str,
    /// The default severity, on the rule's scale.
    pub severity: RuleSeverity,
    /// One line: what the rule checks.
    pub summary: &'static str,
    /// The Markdown text printed by `skillc explain`.
    pub explanation: &'static str,
}

impl Rule {
    /// The severity of a diagnostic of this rule before `--strict` or a stage changes it. A
    /// scan rule reported as a diagnostic is an error (as `SC000` is).
    pub fn diagnostic_severity(&self) -> Severity {
        match self.severity {
            RuleSeverity::Diagnostic(s) => s,
            RuleSeverity::Finding(_) => Severity::Error,
        }
    }

    /// The base severity of a scan rule's findings; `None` for a diagnostic rule.
    pub fn finding_severity(&self) -> Option<FindingSeverity> {
        match self.severity {
            RuleSeverity::Finding(s) => Some(s),
            RuleSeverity::Diagnostic(_) => None,
        }
    }
}

/// How bad a diagnostic is. Ordered from least to most severe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Informational; never affects the verdict.
    Note,
    /// Something a careful author would fix; the skill is still usable.
    Warning,
    /// The skill is invalid (exit code 1 from `skillc check`).
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `pad` honours width and alignment (`{:<8}` in `skillc explain`).
        f.pad(match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// A position in a file: 1-based line, 1-based column counted in Unicode scalar values
/// (what editors and rustc show), and the byte offset into the file as read from disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Pos {
    /// Byte offset from the start of the file (BOM included).
    pub offset: usize,
    /// 1-based line number.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
}

impl Pos {
    /// The start of a file: line 1, column 1. Used for problems about a whole file.
    pub const START: Pos = Pos {
        offset: 0,
        line: 1,
        column: 1,
    };
}

/// A half-open region of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    /// First position of the region.
    pub start: Pos,
    /// Position just past the region.
    pub end: Pos,
}

impl Span {
    /// An empty span at `pos`.
    pub fn at(pos: Pos) -> Span {
        Span { start: pos, end: pos }
    }

    /// The byte range of the span in the file.
    pub fn bytes(&self) -> Range<usize> {
        self.start.offset..self.end.offset.max(self.start.offset)
    }
}

/// A secondary label pointing at another place in the same file ("first defined here").
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Label {
    /// Where the label points.
    pub span: Span,
    /// What it says.
    pub message: String,
}

/// One problem found in one file.
///
/// `file` is the path shown to the user (relative to the project root or to the argument the
/// user gave); `span` locates the problem in that file. Problems about a file as a whole point
/// at line 1, column 1 with an empty span.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    /// The rule that fired; gives the stable code (`SK001`…) and the `explain` text.
    pub rule: &'static Rule,
    /// The effective severity (a rule's severity may depend on `--strict`).
    pub severity: Severity,
    /// Path of the file, as shown to the user, with `/` separators.
    pub file: String,
    /// Where in the file.
    pub span: Span,
    /// One sentence saying what is wrong.
    pub message: String,
    /// An optional label under the caret (what is at the span).
    pub label: Option<String>,
    /// Optional secondary places in the same file.
    pub related: Vec<Label>,
    /// Optional advice: what to do about it.
    pub help: Option<String>,
}

impl Diagnostic {
    /// A diagnostic for `rule` with the rule's default severity.
    pub fn new(rule: &'static Rule, file: impl Into<String>, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            rule,
            severity: rule.diagnostic_severity(),
            file: file.into(),
            span,
            message: message.into(),
            label: None,
            related: Vec::new(),
            help: None,
        }
    }

    /// Sets the effective severity.
    pub fn severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    /// Adds advice shown as `help:` under the snippet.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Adds a label under the caret.
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// Adds a secondary label pointing elsewhere in the same file.
    pub fn related(mut self, span: Span, message: impl Into<String>) -> Self {
        self.related.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    /// The stable code, e.g. `SK001`.
    pub fn code(&self) -> &'static str {
        self.rule.code
    }
}

/// The JSON shape of a diagnostic (stable; see `docs/json.md`).
impl Serialize for Diagnostic {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("Diagnostic", 10)?;
        s.serialize_field("code", self.rule.code)?;
        s.serialize_field("severity", &self.severity)?;
        s.serialize_field("file", &self.file)?;
        s.serialize_field("line", &self.span.start.line)?;
        s.serialize_field("column", &self.span.start.column)?;
        s.serialize_field("end_line", &self.span.end.line)?;
        s.serialize_field("end_column", &self.span.end.column)?;
        s.serialize_field("message", &self.message)?;
        s.serialize_field("help", &self.help)?;
        s.end()
    }
}

/// Counts of diagnostics by severity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Number of errors.
    pub errors: usize,
    /// Number of warnings.
    pub warnings: usize,
}

impl Counts {
    /// Counts the diagnostics of a list.
    pub fn of<'a>(diags: impl IntoIterator<Item = &'a Diagnostic>) -> Counts {
        let mut c = Counts::default();
        for d in diags {
            match d.severity {
                Severity::Error => c.errors += 1,
                Severity::Warning => c.warnings += 1,
                Severity::Note => {}
            }
        }
        c
    }
}

/// Maps byte offsets of a text to [`Pos`] values. Built once per file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineIndex {
    /// Byte offset of the start of each line.
    starts: Vec<usize>,
}

impl LineIndex {
    /// Indexes `text` (lines end at `\n`; a `\r` before it belongs to the line).
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(memchr_newlines(text.as_bytes()).map(|i| i + 1));
        LineIndex { starts }
    }

    /// The position of byte `offset` of `text` (which must be the indexed text). Offsets past
    /// the end clamp to the end; offsets inside a UTF-8 sequence round down.
    pub fn pos(&self, text: &str, offset: usize) -> Pos {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let col = text[self.starts[line]..offset].chars().count();
        Pos {
            offset,
            line: u32::try_from(line + 1).unwrap_or(u32::MAX),
            column: u32::try_from(col + 1).unwrap_or(u32::MAX),
        }
    }

    /// The span of bytes `range` of `text`.
    pub fn span(&self, text: &str, range: Range<usize>) -> Span {
        Span {
            start: self.pos(text, range.start),
            end: self.pos(text, range.end),
        }
    }

    /// Byte range of line `line` (1-based), without its line terminator.
    pub fn line_range(&self, text: &str, line: u32) -> Range<usize> {
        let i = (line.max(1) - 1) as usize;
        let start = self.starts.get(i).copied().unwrap_or(text.len()).min(text.len());
        let mut end = self
            .starts
            .get(i + 1)
            .map(|e| e - 1)
            .unwrap_or(text.len())
            .min(text.len());
        if end > start && text.as_bytes()[end - 1] == b'\r' {
            end -= 1;
        }
        start..end.max(start)
    }
}

fn memchr_newlines(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i)
}

/// A file's text as the stages see it: its display path and a line index, for turning byte
/// ranges into spans.
pub struct Source<'a> {
    /// The path shown in diagnostics.
    pub file: &'a str,
    /// The whole text of the file (a BOM, when present, is included).
    pub text: &'a str,
    index: LineIndex,
}

impl<'a> Source<'a> {
    /// Indexes `text` for position lookups.
    pub fn new(file: &'a str, text: &'a str) -> Source<'a> {
        Source {
            file,
            text,
            index: LineIndex::new(text),
        }
    }

    /// The span of bytes `range` of the text.
    pub fn span(&self, range: Range<usize>) -> Span {
        self.index.span(self.text, range)
    }
}

/// Decodes a text input as UTF-8. Invalid bytes give a diagnostic of `rule` in `file` at the
/// first invalid byte (line and column of the valid text before it, one character wide), its
/// message naming the byte and its offset: `{what} is not valid UTF-8: byte 0xFF at offset 12`.
/// The valid text before that byte is [`valid_utf8_prefix`], for the diagnostic's snippet.
pub fn decode_utf8<'a>(
    bytes: &'a [u8],
    file: &str,
    what: &str,
    rule: &'static Rule,
) -> Result<&'a str, Box<Diagnostic>> {
    std::str::from_utf8(bytes).map_err(|e| {
        let valid = e.valid_up_to();
        let prefix = valid_utf8_prefix(bytes);
        let pos = LineIndex::new(prefix).pos(prefix, valid);
        // The bad bytes are one character wide (shown as U+FFFD by lossy readers).
        let end = Pos {
            offset: valid + e.error_len().unwrap_or(1),
            column: pos.column.saturating_add(1),
            ..pos
        };
        let byte = bytes.get(valid).copied().unwrap_or_default();
        Box::new(
            Diagnostic::new(
                rule,
                file,
                Span { start: pos, end },
                format!("{what} is not valid UTF-8: byte 0x{byte:02X} at offset {valid}"),
            )
            .help("save the file as UTF-8"),
        )
    })
}

/// The longest prefix of `bytes` that is valid UTF-8 (all of it when it is).
pub fn valid_utf8_prefix(bytes: &[u8]) -> &str {
    match std::str::from_utf8(bytes) {
        Ok(s) => s,
        // `valid_up_to` ends a valid prefix, so the second decode cannot fail.
        Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default(),
    }
}

/// `bytes` as text for a snippet, each byte that is not UTF-8 shown as `?`: every byte offset
/// stays where it was (a diagnostic's span on the original bytes fits the text).
pub fn lossy_same_offsets(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        out.extend(std::iter::repeat_n('?', chunk.invalid().len()));
    }
    out
}

/// Turns a `toml` deserialization error into a diagnostic: `unknown` for unknown keys,
/// `invalid` for everything else.
pub fn toml_error(src: &Source<'_>, e: &toml::de::Error, invalid: &'static Rule, unknown: &'static Rule) -> Diagnostic {
    let span = e.span().unwrap_or(0..0);
    let message = e.message().trim().to_owned();
    if let Some(rest) = message.strip_prefix("unknown field ") {
        let field = rest.split(',').next().unwrap_or(rest).trim();
        let expected = rest.split_once("expected ").map(|(_, x)| x.to_owned());
        let mut d = Diagnostic::new(unknown, src.file, src.span(span), format!("unknown key {field}"));
        if let Some(x) = expected {
            d = d.help(format!("expected {x}"));
        }
        return d;
    }
    Diagnostic::new(invalid, src.file, src.span(span), message)
}

/// How to draw human-readable diagnostics.
#[derive(Clone, Copy, Debug)]
pub struct RenderOptions {
    /// ANSI colours.
    pub color: bool,
}

/// Renders one diagnostic rustc-style: header with code, `--> file:line:col`, the source lines
/// with a caret under the span, then `help:`. `source` is the text of `diag.file` when it is
/// available and valid UTF-8; without it only the header and location are printed.
pub fn render_human(diag: &Diagnostic, source: Option<&SourceText<'_>>, options: RenderOptions) -> String {
    let level = match diag.severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
        Severity::Note => Level::NOTE,
    };
    let renderer = if options.color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let message = printable(&diag.message);
    let title = level.primary_title(message.as_ref()).id(diag.rule.code);
    let mut groups: Vec<Group<'_>> = Vec::new();
    let file = printable(&diag.file);
    let snippet = source.and_then(|src| snippet_for(diag, &file, src));
    let group = match snippet {
        Some(snippet) => title.element(snippet),
        None => {
            let origin = annotate_snippets::Origin::path(file.as_ref())
                .line(diag.span.start.line as usize)
                // `Origin` columns are displayed as given: 1-based, like `Pos::column`.
                .char_column(diag.span.start.column as usize);
            title.element(origin)
        }
    };
    groups.push(group);
    let help = diag.help.as_deref().map(printable);
    if let Some(help) = &help {
        groups.push(Group::with_title(Level::HELP.secondary_title(help.as_ref())));
    }
    renderer.render(&groups)
}

/// A file's text with its line index, built once and shared by all its diagnostics.
pub struct SourceText<'a> {
    /// The text, with control characters made visible (same byte offsets).
    pub text: std::borrow::Cow<'a, str>,
    index: LineIndex,
}

impl<'a> SourceText<'a> {
    /// Indexes `text`. Control characters other than tab and line breaks, and the bidirectional
    /// controls ([`is_bidi_control`]), are shown as `?`, `¿` or `�` (the replacement with the
    /// same UTF-8 length), so a snippet never sends escape sequences to the terminal nor
    /// reorders what it shows; byte offsets stay the same.
    pub fn new(text: &'a str) -> SourceText<'a> {
        let unsafe_char = |c: char| (c.is_control() && !matches!(c, '\t' | '\n' | '\r')) || is_bidi_control(c);
        let text = if text.chars().any(unsafe_char) {
            std::borrow::Cow::Owned(
                text.chars()
                    .map(|c| match c.len_utf8() {
                        _ if !unsafe_char(c) => c,
                        1 => '?',
                        2 => '¿',
                        _ => '\u{FFFD}',
                    })
                    .collect(),
            )
        } else {
            std::borrow::Cow::Borrowed(text)
        };
        let index = LineIndex::new(&text);
        SourceText { text, index }
    }
}

/// Whether `c` is a bidirectional control (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F,
/// U+061C): printed raw it reorders the text around it on a terminal (Trojan Source,
/// CVE-2021-42574).
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// A message, path or label with control and bidirectional characters escaped (`\u{1b}`,
/// `\u{202e}`), safe to print to a terminal.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    escape_where(s, |c| c.is_control() || is_bidi_control(c))
}

/// [`printable`] for multi-line text: line breaks and tabs are kept, every other control or
/// bidirectional character is escaped (for a diff shown on a terminal).
pub fn printable_lines(s: &str) -> std::borrow::Cow<'_, str> {
    escape_where(s, |c| {
        (c.is_control() && !matches!(c, '\t' | '\n')) || is_bidi_control(c)
    })
}

/// `s` with the characters `unsafe_char` picks written as Rust escapes; borrowed when none.
fn escape_where(s: &str, unsafe_char: impl Fn(char) -> bool) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(&unsafe_char) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if unsafe_char(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Builds a snippet holding only the lines the diagnostic touches (cheap on large files).
fn snippet_for<'a>(
    diag: &'a Diagnostic,
    file: &'a str,
    source: &'a SourceText<'a>,
) -> Option<Snippet<'a, annotate_snippets::Annotation<'a>>> {
    let (src, index) = (source.text.as_ref(), &source.index);
    let mut first = diag.span.start.line;
    let mut last = diag.span.end.line.max(first);
    for r in &diag.related {
        first = first.min(r.span.start.line);
        last = last.max(r.span.end.line);
    }
    // Keep snippets short: a span over many lines shows its first lines only.
    let last = last.min(first + 6);
    let start = index.line_range(src, first).start;
    let end = index.line_range(src, last).end;
    if start > end || end > src.len() {
        return None;
    }
    let text = &src[start..end];
    // Spans come from byte offsets; never cut a character in two, whatever the input.
    let floor = |mut i: usize| {
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let clip = |r: Range<usize>| -> Range<usize> {
        let s = floor(r.start.clamp(start, end) - start);
        let e = floor(r.end.clamp(start, end) - start);
        s..e.max(s)
    };
    let mut primary = AnnotationKind::Primary.span(clip(diag.span.bytes()));
    if let Some(label) = &diag.label {
        primary = primary.label(label.as_str());
    }
    let mut snippet = Snippet::source(text)
        .line_start(first as usize)
        .path(file)
        .annotation(primary);
    for r in &diag.related {
        if r.span.start.line >= first && r.span.start.line <= last {
            snippet = snippet.annotation(
                AnnotationKind::Context
                    .span(clip(r.span.bytes()))
                    .label(r.message.as_str()),
            );
        }
    }
    Some(snippet)
}

/// One line per diagnostic: `file:line:col: severity[CODE]: message` (grep- and editor-friendly).
pub fn render_short(diag: &Diagnostic) -> String {
    format!(
        "{}:{}:{}: {}[{}]: {}",
        printable(&diag.file),
        diag.span.start.line,
        diag.span.start.column,
        diag.severity,
        diag.rule.code,
        printable(&diag.message)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_index_counts_columns_in_characters() {
        let text = "ab\nçé: x\r\nz";
        let idx = LineIndex::new(text);
        let p = idx.pos(text, text.find('x').unwrap_or(0));
        assert_eq!((p.line, p.column), (2, 5));
        assert_eq!(idx.line_range(text, 2), 3..10);
        assert_eq!(&text[idx.line_range(text, 3)], "z");
        // Offsets inside a character round down; past the end clamps.
        assert_eq!(idx.pos(text, 4).offset, 3);
        assert_eq!(idx.pos(text, 999).line, 3);
    }

    #[test]
    fn location_without_source_is_one_based() {
        static SK001: Rule = Rule {
            code: "SK001",
            name: "missing-skill-md",
            severity: RuleSeverity::Diagnostic(Severity::Error),
            summary: "",
            explanation: "",
        };
        let d = Diagnostic::new(&SK001, "skills/a", Span::at(Pos::START), "missing SKILL.md");
        let out = render_human(&d, None, RenderOptions { color: false });
        assert!(out.contains("skills/a:1:1"), "{out}");
    }

    #[test]
    fn paths_sources_and_messages_never_reach_the_terminal_raw() {
        static SK002: Rule = Rule {
            code: "SK002",
            name: "test",
            severity: RuleSeverity::Diagnostic(Severity::Warning),
            summary: "",
            explanation: "",
        };
        let text = "name: a\u{202E}b\u{1b}[31m\n";
        let src = SourceText::new(text);
        assert_eq!(src.text.len(), text.len(), "byte offsets are kept");
        let span = Span {
            start: Pos {
                line: 1,
                column: 7,
                offset: 6,
            },
            end: Pos {
                line: 1,
                column: 8,
                offset: 7,
            },
        };
        let d = Diagnostic::new(
            &SK002,
            "skills/b\u{1b}[2J\u{2066}x/SKILL.md",
            span,
            "bad \u{202E} name\u{7}",
        );
        for out in [
            render_human(&d, Some(&src), RenderOptions { color: false }),
            render_human(&d, None, RenderOptions { color: false }),
            render_short(&d),
        ] {
            assert!(
                !out.chars().any(|c| (c.is_control() && c != '\n') || is_bidi_control(c)),
                "{out:?}"
            );
            assert!(out.contains(r"skills/b\u{1b}[2J\u{2066}x/SKILL.md"), "{out}");
        }
        assert_eq!(printable_lines("a\tb\n\u{202E}c\r\n"), "a\tb\n\\u{202e}c\\r\n");
    }
}

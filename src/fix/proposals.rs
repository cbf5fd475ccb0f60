//! The edits each fixable rule proposes on the current text. A proposal never looks beyond
//! the diagnostics of its rule and the tree; the engine ([`super::fix_skill_md`]) decides by
//! validating the result.

use std::ops::Range;

use unicode_normalization::UnicodeNormalization;

use super::{FolderChange, Options, Target};
use crate::diag::Diagnostic;
use crate::diag::Source;
use crate::model::Mode;
use crate::skill::frontmatter::{self, Split};
use crate::skill::model::{OPENCLAW_NAMESPACES, STANDARD_FIELDS};
use crate::skill::tools;
use crate::skill::validate::{self, Analysis};
use crate::skill::writer::{self, Edits};
use crate::skill::yaml::{Entry, Node, NodeKind};
use crate::skill::yaml_out::{self, Value};

/// What a proposal is computed from.
pub(super) struct Input<'a> {
    pub target: &'a Target<'a>,
    pub text: &'a str,
    pub analysis: &'a Analysis,
    pub options: Options,
}

/// One proposed fix of one rule (all of its diagnostics that can be fixed together).
pub(super) struct Proposal {
    pub code: &'static str,
    /// What it does, for the report; also identifies a rejected proposal.
    pub what: String,
    pub edits: Edits,
    /// A rename instead of an edit.
    pub change: Option<FolderChange>,
    /// When the edit counts as done.
    pub resolved: Resolved,
}

/// What must be true of the edited text for a proposal to be kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Resolved {
    /// Fewer diagnostics of these codes, and none more.
    Fewer(Vec<&'static str>),
    /// The YAML parses up to this byte offset of the new text (no `SK006` before it).
    ParsesThrough(usize),
}

impl Proposal {
    fn new(code: &'static str, what: impl Into<String>, edits: Edits) -> Proposal {
        Proposal {
            code,
            what: what.into(),
            edits,
            change: None,
            resolved: Resolved::Fewer(vec![code]),
        }
    }
}

/// What the proposals share: the text, its split and line ending, the tree.
struct Doc<'a> {
    text: &'a str,
    split: Option<Split>,
    eol: &'static str,
    root: Option<&'a Node>,
    diags: &'a [Diagnostic],
}

impl Doc<'_> {
    /// The indices of the diagnostics of `code`.
    fn of(&self, code: &str) -> Vec<usize> {
        (0..self.diags.len())
            .filter(|&i| self.diags[i].rule.code == code)
            .collect()
    }
}

/// Every proposal for the current text, in the order of [`super::FIXES`].
pub(super) fn all(input: &Input<'_>) -> Vec<Proposal> {
    let text = input.text;
    let split = frontmatter::split(&Source::new(input.target.file, text)).0;
    let eol = writer::eol_of(&text[..split.as_ref().map_or(text.len(), |s| s.body.start)]);
    let doc = Doc {
        text,
        split,
        eol,
        root: input.analysis.frontmatter.as_ref(),
        diags: &input.analysis.diagnostics,
    };
    let mut out = Vec::new();
    out.extend(bom(&doc));
    out.extend(crlf(&doc));
    out.extend(fence_whitespace(&doc));
    out.extend(one_line_value(&doc));
    if doc.root.is_some() && input.analysis.read_errors().next().is_none() {
        out.extend(name(&doc, input));
        out.extend(move_to_metadata(&doc, input.options.mode));
        out.extend(stringify_metadata(&doc));
        out.extend(block_style(&doc));
        out.extend(tools_spelling(&doc));
        out.extend(quote_implicit(&doc));
    }
    out
}

fn bom(doc: &Doc<'_>) -> Option<Proposal> {
    let covers = doc.of("SK003");
    let len = '\u{feff}'.len_utf8();
    (doc.text.starts_with('\u{feff}') && !covers.is_empty()).then(|| {
        let mut e = Edits::new();
        e.replace(0..len, "");
        Proposal::new("SK003", "removed the byte order mark", e)
    })
}

fn crlf(doc: &Doc<'_>) -> Option<Proposal> {
    let covers = doc.of("SK017");
    if covers.is_empty() {
        return None;
    }
    let mut e = Edits::new();
    let mut n = 0;
    for (i, _) in doc.text.match_indices("\r\n") {
        e.replace(i..i + 1, "");
        n += 1;
    }
    (n > 0).then(|| Proposal::new("SK017", format!("converted {n} CRLF line ends to LF"), e))
}

fn fence_whitespace(doc: &Doc<'_>) -> Option<Proposal> {
    let covers = doc.of("SK018");
    if covers.is_empty() {
        return None;
    }
    let mut e = Edits::new();
    for &i in &covers {
        e.replace(doc.diags[i].span.bytes(), "");
    }
    Some(Proposal::new("SK018", "removed whitespace after `---`", e))
}

/// `SK006` "mapping values are not allowed" on a one-line top-level `key: value` whose value
/// holds `: `: the value, double-quoted.
fn one_line_value(doc: &Doc<'_>) -> Option<Proposal> {
    let split = doc.split.as_ref()?;
    let i = *doc.of("SK006").first()?;
    let d = &doc.diags[i];
    if !d.message.contains("mapping values are not allowed") {
        return None;
    }
    let text = doc.text;
    let start = writer::line_start(text, d.span.start.offset);
    let end = writer::line_end(text, start);
    if !(split.frontmatter.start <= start && end <= split.frontmatter.end) {
        return None;
    }
    let line = text[start..end].trim_end_matches(['\n', '\r']);
    let (key, value) = line.split_once(':')?;
    let simple_key = key.starts_with(|c: char| c.is_ascii_alphabetic())
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let value = value.trim();
    let plain_start = !value.starts_with([
        '"', '\'', '[', '{', '|', '>', '&', '*', '!', '%', '@', '`', '#', '-', '?',
    ]);
    // A continuation line would belong to the value: the one-line reading would be a guess.
    let next = &text[end..split.frontmatter.end.max(end)];
    let continued = next
        .lines()
        .next()
        .is_some_and(|l| l.starts_with([' ', '\t']) && !l.trim().is_empty());
    if !simple_key || value.is_empty() || !plain_start || !value.contains(": ") || value.contains(" #") || continued {
        return None;
    }
    let mut e = Edits::new();
    let new = format!("{key}: {}", yaml_out::double_quoted(value));
    let new_end = start + new.len();
    e.replace(start..start + line.len(), new);
    let mut p = Proposal::new("SK006", format!("quoted the value of `{key}`, which holds `: `"), e);
    // Another YAML error further down may remain: the line itself is what must parse.
    p.resolved = Resolved::ParsesThrough(new_end);
    Some(p)
}

/// The entry whose value has exactly `span`, at any depth of block mappings, when its key is
/// the first thing on its line (so its lines can be rewritten), with its key's indentation.
fn entry_with_value<'a>(text: &str, node: &'a Node, span: &Range<usize>) -> Option<&'a Entry> {
    match &node.kind {
        NodeKind::Map { entries, flow: false } => entries.iter().find_map(|e| {
            if e.value.span == *span {
                own_line(text, e).then_some(e)
            } else {
                entry_with_value(text, &e.value, span)
            }
        }),
        NodeKind::Seq { items, flow: false } => items.iter().find_map(|n| entry_with_value(text, n, span)),
        _ => None,
    }
}

fn own_line(text: &str, e: &Entry) -> bool {
    text[writer::line_start(text, e.key_span.start)..e.key_span.start]
        .chars()
        .all(|c| c == ' ')
}

/// Whether a scalar value sits on one line (so replacing its bytes keeps the entry's line).
fn one_line_scalar(text: &str, node: &Node) -> bool {
    node.as_scalar().is_some() && !node.span.is_empty() && !text[node.span.clone()].contains('\n')
}

/// An edit that gives `entry` (indented by its key's column) the value `value`: the scalar's
/// bytes when it is a one-line scalar and `value` a string, else the entry's lines, unless
/// those hold a comment.
fn set_value(doc: &Doc<'_>, entry: &Entry, value: &Value, e: &mut Edits) -> bool {
    if let (true, Value::Str(s)) = (one_line_scalar(doc.text, &entry.value), value) {
        e.replace(entry.value.span.clone(), yaml_out::scalar_text(s));
        return true;
    }
    let lines = writer::entry_lines(doc.text, entry);
    if writer::has_comment(&doc.text[lines.clone()]) || e.overlaps(&lines) {
        return false;
    }
    let indent = writer::indent_of(doc.text, entry);
    e.replace(lines, writer::render_entry(&entry.key, value, indent, doc.eol));
    true
}

fn name(doc: &Doc<'_>, input: &Input<'_>) -> Option<Proposal> {
    doc.of("SK027").first()?;
    let entry = doc.root?.get("name")?;
    let name = input.analysis.model.name.as_ref()?.value.clone();
    let dir: String = input.target.dir_name.nfkc().collect();
    if input.options.rename_folder && validate::name_is_valid(&name) {
        return Some(Proposal {
            code: "SK027",
            what: format!("renamed the folder `{}` to `{name}`", input.target.dir_name),
            edits: Edits::new(),
            change: Some(FolderChange::RenameFolder(name)),
            resolved: Resolved::Fewer(vec!["SK027"]),
        });
    }
    if !validate::name_is_valid(&dir) {
        return None;
    }
    let mut e = Edits::new();
    set_value(doc, entry, &Value::Str(input.target.dir_name.to_owned()), &mut e).then(|| {
        Proposal::new(
            "SK027",
            format!("set `name` to `{}`, the folder's name", input.target.dir_name),
            e,
        )
    })
}

/// The namespaces that stay mappings under `metadata` (their readers expect a mapping).
fn is_namespace(key: &str) -> bool {
    key == "gaia" || key == "hermes" || OPENCLAW_NAMESPACES.contains(&key)
}

/// `SK033`: the reported top-level keys, moved under `metadata`.
fn move_to_metadata(doc: &Doc<'_>, mode: Mode) -> Option<Proposal> {
    let root = doc.root?;
    let split = doc.split.as_ref()?;
    let entries = root.as_map()?;
    let text = doc.text;
    let metadata = root.get("metadata");
    let existing: Vec<(String, Value)> = match metadata.map(|m| &m.value.kind) {
        None => Vec::new(),
        Some(NodeKind::Map { entries, .. }) => entries
            .iter()
            .map(|e| (e.key.clone(), Value::from_node(&e.value)))
            .collect(),
        Some(NodeKind::Scalar(s)) if s.plain && s.value.is_empty() => Vec::new(),
        Some(_) => return None,
    };
    let mut e = Edits::new();
    let mut moved: Vec<(String, Value)> = Vec::new();
    let mut covers = Vec::new();
    for i in doc.of("SK033") {
        let span = doc.diags[i].span.bytes();
        let Some(entry) = entries.iter().find(|x| x.key_span == span) else {
            continue;
        };
        let key = entry.key.as_str();
        if STANDARD_FIELDS.contains(&key) || (mode == Mode::Default && validate::near_miss(key).is_some()) {
            continue;
        }
        let value = if is_namespace(key) {
            Value::from_node(&entry.value)
        } else {
            Value::Str(writer::metadata_string(&entry.value))
        };
        let lines = writer::entry_lines(text, entry);
        if writer::has_comment(&text[lines.clone()]) || !own_line(text, entry) {
            continue;
        }
        match existing.iter().find(|(k, _)| k == key) {
            // The same value is there already: the top-level copy goes.
            Some((_, v)) if *v == value || (value.as_text().is_some() && v.as_text() == value.as_text()) => {}
            Some(_) => continue,
            None => moved.push((entry.key.clone(), value)),
        }
        e.replace(lines, "");
        covers.push(i);
    }
    if covers.is_empty() {
        return None;
    }
    let keys: Vec<String> = covers.iter().filter_map(|&i| key_at(doc, i)).collect();
    let what = format!("moved {} under `metadata`", keys.join(", "));
    if !moved.is_empty() {
        match metadata {
            None => e.replace(
                split.frontmatter.end..split.frontmatter.end,
                writer::render_entry("metadata", &Value::Map(moved), 0, doc.eol),
            ),
            Some(m) => match &m.value.kind {
                NodeKind::Map {
                    entries: md,
                    flow: false,
                } if !md.is_empty() => {
                    let end = writer::entry_lines(text, m).end;
                    let indent = md.first().map_or(2, |x| writer::indent_of(text, x));
                    let lines: String = moved
                        .iter()
                        .map(|(k, v)| writer::render_entry(k, v, indent, doc.eol))
                        .collect();
                    e.replace(end..end, lines);
                }
                _ => {
                    let mut all = existing;
                    all.extend(moved);
                    if !set_value(doc, m, &Value::Map(all), &mut e) {
                        return None;
                    }
                }
            },
        }
    }
    Some(Proposal::new("SK033", what, e))
}

fn key_at(doc: &Doc<'_>, i: usize) -> Option<String> {
    let span = doc.diags[i].span.bytes();
    doc.root?
        .as_map()?
        .iter()
        .find(|e| e.key_span == span)
        .map(|e| format!("`{}`", e.key))
}

/// `SK035`: nested values directly under `metadata`, as compact JSON strings.
fn stringify_metadata(doc: &Doc<'_>) -> Option<Proposal> {
    let covers = doc.of("SK035");
    let m = doc.root?.get("metadata")?;
    let NodeKind::Map { entries, flow } = &m.value.kind else {
        return None;
    };
    let targets: Vec<(usize, &Entry)> = covers
        .iter()
        .filter_map(|&i| {
            let span = doc.diags[i].span.bytes();
            entries.iter().find(|x| x.value.span == span).map(|x| (i, x))
        })
        .collect();
    if targets.is_empty() {
        return None;
    }
    let mut e = Edits::new();
    let mut done = Vec::new();
    if *flow {
        let all: Vec<(String, Value)> = entries
            .iter()
            .map(|x| {
                let v = if targets.iter().any(|(_, t)| std::ptr::eq(*t, x)) {
                    Value::Str(writer::metadata_string(&x.value))
                } else {
                    Value::from_node(&x.value)
                };
                (x.key.clone(), v)
            })
            .collect();
        if !set_value(doc, m, &Value::Map(all), &mut e) {
            return None;
        }
        done = targets.iter().map(|(i, _)| *i).collect();
    } else {
        for (i, x) in &targets {
            if own_line(doc.text, x) && set_value(doc, x, &Value::Str(writer::metadata_string(&x.value)), &mut e) {
                done.push(*i);
            }
        }
    }
    let keys: Vec<String> = targets
        .iter()
        .filter(|(i, _)| done.contains(i))
        .map(|(_, x)| format!("`metadata.{}`", x.key))
        .collect();
    (!done.is_empty()).then(|| Proposal::new("SK035", format!("wrote {} as JSON", keys.join(", ")), e))
}

/// `SK013`: a key's flow collection, in block style.
fn block_style(doc: &Doc<'_>) -> Option<Proposal> {
    let root = doc.root?;
    let mut e = Edits::new();
    let mut covers = Vec::new();
    let mut keys = Vec::new();
    for i in doc.of("SK013") {
        let span = doc.diags[i].span.bytes();
        let Some(entry) = entry_with_value(doc.text, root, &span) else {
            continue;
        };
        let empty = matches!(&entry.value.kind, NodeKind::Map { entries, .. } if entries.is_empty())
            || matches!(&entry.value.kind, NodeKind::Seq { items, .. } if items.is_empty());
        if !empty && set_value(doc, entry, &Value::from_node(&entry.value), &mut e) {
            covers.push(i);
            keys.push(format!("`{}`", entry.key));
        }
    }
    (!covers.is_empty()).then(|| Proposal::new("SK013", format!("wrote {} in block style", keys.join(", ")), e))
}

/// `SK019`: `allowed-tools` as one space-separated string.
fn tools_spelling(doc: &Doc<'_>) -> Option<Proposal> {
    doc.of("SK019").first()?;
    let entry = doc.root?.get("allowed-tools")?;
    let spelled = tools::standard_spelling(&entry.value)?;
    let mut e = Edits::new();
    set_value(doc, entry, &Value::Str(spelled.clone()), &mut e)
        .then(|| Proposal::new("SK019", format!("wrote `allowed-tools: {spelled}`"), e))
}

/// `SK012`: plain scalars that PyYAML types differently, quoted.
fn quote_implicit(doc: &Doc<'_>) -> Option<Proposal> {
    let root = doc.root?;
    let mut e = Edits::new();
    let mut covers = Vec::new();
    for i in doc.of("SK012") {
        let span = doc.diags[i].span.bytes();
        let mut found = None;
        root.for_each_scalar(&mut |value, s| {
            if *s == span && found.is_none() {
                found = Some(value.to_owned());
            }
        });
        let Some(value) = found else { continue };
        if doc.text[span.clone()].contains('\n') || e.overlaps(&span) {
            continue;
        }
        e.replace(span, yaml_out::double_quoted(&value));
        covers.push(i);
    }
    (!covers.is_empty()).then(|| {
        let n = covers.len();
        let what = if n == 1 {
            "quoted 1 value".to_owned()
        } else {
            format!("quoted {n} values")
        };
        Proposal::new("SK012", what, e)
    })
}

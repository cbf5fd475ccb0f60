//! `skillc export`: a skill as the agentskills.io standard has it — a SKILL.md whose
//! frontmatter holds only the six standard keys, and a byte-deterministic zip of the folder.
//!
//! Decisions (issue 7; documented in README and `docs/json.md`):
//! - **Frontmatter.** `name`, `description`, `license`, `compatibility`, `allowed-tools` stay
//!   at the top level as strings (a list of `allowed-tools` is joined with spaces, the
//!   standard's form); every other top-level key moves under `metadata`. The standard
//!   defines `metadata` as string keys to string values, so each value becomes a string: a
//!   scalar keeps its text (`true`, `1.0`), a mapping or list becomes compact JSON with
//!   YAML 1.2 core typing (`{"requires":{"bins":["gog"]}}`). A top-level key whose name is
//!   already taken in `metadata` by a different value is exported as `frontmatter.<key>`
//!   (`EX003`). The Markdown body is copied byte for byte. When anything was moved or
//!   encoded, `metadata.skillc-export` (compact JSON) records how, so that
//!   [`restore_skill_md`] can rebuild the original frontmatter on import.
//! - **Archive.** Entries `<name>/SKILL.md` and `<name>/<support file>`, sorted by path, all
//!   dated 1980-01-01 00:00:00 (the zip epoch; `SOURCE_DATE_EPOCH` is not needed because no
//!   time of the build enters the archive), deflate-compressed, mode 0644 (0755 for files
//!   executable on disk), no directory entries and no extra fields. Hidden files and the
//!   folders skillc never reads are left out (`EX002`).
//!
//! Architecture invariant: no IO here; `cli/export.rs` reads the skill and writes the file.

use std::io::{Cursor, Write as _};

use crate::diag::Source;
use crate::diag::{Diagnostic, Pos, Severity, Span};
use crate::model::Mode;
use crate::rules;
use crate::skill::model::STANDARD_FIELDS;
use crate::skill::validate::{self, Context};
use crate::skill::writer::{self, Layout};
use crate::skill::yaml::{Node, NodeKind};
use crate::skill::yaml_out::Value;

/// The exported SKILL.md and what was noticed while writing it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exported {
    /// The new SKILL.md, when its frontmatter could be read.
    pub text: Option<String>,
    /// `EX003` collisions, and the `--strict` errors of the result (there are none when the
    /// input passes `skillc check`, unless skillc has a bug).
    pub diagnostics: Vec<Diagnostic>,
}

/// Rewrites SKILL.md `text` so that its frontmatter has only the standard keys, with every
/// extension under `metadata` as a string. `dir_name` is the folder name the result will
/// have in the archive (the skill's `name`), used to check the result as the reference
/// validator would (`--strict` rules).
pub fn standard_skill_md(file: &str, text: &str, dir_name: &str) -> Exported {
    let mut out = Exported {
        text: None,
        diagnostics: Vec::new(),
    };
    let ctx = Context {
        dir_name,
        mode: Mode::Default,
    };
    let a = validate::analyze(file, text.as_bytes(), &ctx);
    let (Some(root), Some(body)) = (a.frontmatter.as_ref(), a.body.clone()) else {
        out.diagnostics
            .extend(a.diagnostics.iter().filter(|d| d.severity == Severity::Error).cloned());
        return out;
    };
    let src = Source::new(file, text);
    let mut top: Vec<(String, Value)> = Vec::new();
    let mut metadata: Vec<(String, Value)> = Vec::new();
    let mut moved: Vec<(String, Value, std::ops::Range<usize>, Kind)> = Vec::new();
    let mut metadata_at = None;
    let mut marker = Marker {
        v: 1,
        ..Marker::default()
    };
    for e in root.as_map().unwrap_or_default() {
        let key = e.key.as_str();
        marker.order.push(e.key.clone());
        if key == "metadata" {
            metadata_at = Some(top.len());
            match &e.value.kind {
                NodeKind::Map { entries, .. } => {
                    let mut keys = Vec::new();
                    for m in entries {
                        let (v, kind) = encode(&m.value);
                        marker.note(&m.key, kind);
                        keys.push(m.key.clone());
                        metadata.push((m.key.clone(), v));
                    }
                    marker.metadata = Some(keys);
                }
                NodeKind::Scalar(s) if s.plain && s.value.is_empty() => marker.metadata = Some(Vec::new()),
                // Not a mapping (only with --force: `check` rejects it): keep it whole.
                _ => {
                    let (v, kind) = encode(&e.value);
                    moved.push(("metadata".into(), v, e.key_span.clone(), kind));
                }
            }
        } else if STANDARD_FIELDS.contains(&key) {
            let v = match (&e.value.kind, key) {
                (NodeKind::Seq { items, .. }, "allowed-tools") if items.iter().all(|i| i.as_str().is_some()) => {
                    let list: Vec<String> = items.iter().filter_map(Node::as_str).map(str::to_owned).collect();
                    let joined = list.join(" ");
                    marker.allowed_tools = Some(list);
                    Value::Str(joined)
                }
                _ => Value::Str(writer::metadata_string(&e.value)),
            };
            top.push((e.key.clone(), v));
        } else {
            let (v, kind) = encode(&e.value);
            moved.push((e.key.clone(), v, e.key_span.clone(), kind));
        }
    }
    place_moved(moved, &mut metadata, &mut marker, &src, &mut out.diagnostics);
    // The frontmatter writer shared with `migrate` and `check --fix`; an export has no BOM.
    let Some(layout) = Layout::of_text(text).map(Layout::without_bom) else {
        return out;
    };
    // Everything before the body, with `metadata` (and the marker, when there is one) in place.
    let head = |marker: Option<&Marker>| {
        let mut top = top.clone();
        let mut metadata = metadata.clone();
        if let Some(m) = marker {
            let json = serde_json::to_string(m).unwrap_or_default();
            metadata.push((MARKER.to_owned(), Value::Str(json)));
        }
        if !metadata.is_empty() {
            let at = metadata_at.unwrap_or(top.len()).min(top.len());
            top.insert(at, ("metadata".into(), Value::Map(metadata)));
        }
        writer::head(&top, layout)
    };
    // When the export changes the bytes before the body, the marker keeps the original ones so
    // that an unedited export is restored byte for byte.
    if marker.is_needed() || head(None) != text[..body.start] {
        marker.head = Some(text[..body.start].to_owned());
    }
    let mut new = head(marker.is_needed().then_some(&marker));
    new.push_str(&text[body]);
    // What the reference validator will say, as far as skillc knows it.
    let strict = validate::analyze(
        file,
        new.as_bytes(),
        &Context {
            dir_name,
            mode: Mode::Strict,
        },
    );
    out.diagnostics
        .extend(strict.diagnostics.into_iter().filter(|d| d.severity == Severity::Error));
    out.text = Some(new);
    out
}

/// Moves the extension keys under `metadata`: a key also there with the same value is one
/// key; with another value it goes in as `frontmatter.<key>` (`EX003`). The marker records
/// where each went.
fn place_moved(
    moved: Vec<(String, Value, std::ops::Range<usize>, Kind)>,
    metadata: &mut Vec<(String, Value)>,
    marker: &mut Marker,
    src: &Source<'_>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let file = src.file;
    for (key, value, span, kind) in moved {
        let mkey = match metadata.iter().find(|(k, _)| *k == key) {
            None => key.clone(),
            Some((_, v)) if *v == value && marker.kind_of(&key) == kind => {
                marker.moved.insert(key.clone(), key);
                continue;
            }
            Some(_) => {
                let renamed = format!("frontmatter.{key}");
                diagnostics.push(
                    Diagnostic::new(
                        &rules::EX003,
                        file,
                        src.span(span),
                        format!(
                            "`{key}` is also a `metadata` key with another value; exported as `metadata.{renamed}`"
                        ),
                    )
                    .help("keep one of the two, or rename one, to export it under its own name"),
                );
                renamed
            }
        };
        marker.note(&mkey, kind);
        marker.moved.insert(mkey.clone(), key);
        metadata.push((mkey, value));
    }
}

/// The `metadata` key under which an export records how to undo itself ([`restore_skill_md`]).
pub const MARKER: &str = "skillc-export";

/// How an exported `metadata` value was encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A string: the value is the string.
    Str,
    /// A plain typed scalar (`true`, `42`): the value is its text.
    Plain,
    /// A mapping or list: the value is compact JSON.
    Json,
}

/// What `metadata.skillc-export` records (compact JSON): enough to rebuild the original
/// frontmatter. Present only when the export changed more than quoting.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Marker {
    /// Format version: 1.
    v: u32,
    /// The original top-level keys, in order.
    order: Vec<String>,
    /// The original `metadata` keys, in order (`None`: there was no `metadata`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    metadata: Option<Vec<String>>,
    /// Exported `metadata` key → the top-level key it came from.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    moved: std::collections::BTreeMap<String, String>,
    /// `metadata` keys whose value is JSON.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    json: Vec<String>,
    /// `metadata` keys whose value is a plain typed scalar's text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    plain: Vec<String>,
    /// `allowed-tools` when it was a list (the export joins it with spaces).
    #[serde(default, rename = "allowed-tools", skip_serializing_if = "Option::is_none")]
    allowed_tools: Option<Vec<String>>,
    /// The original bytes before the body (fences, frontmatter, the blank line after it), when
    /// the export changed them: [`restore_skill_md`] puts them back as they were when the
    /// exported frontmatter is unedited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    head: Option<String>,
}

impl Marker {
    fn note(&mut self, key: &str, kind: Kind) {
        let list = match kind {
            Kind::Str => return,
            Kind::Plain => &mut self.plain,
            Kind::Json => &mut self.json,
        };
        if !list.iter().any(|k| k == key) {
            list.push(key.to_owned());
        }
    }

    fn kind_of(&self, key: &str) -> Kind {
        if self.plain.iter().any(|k| k == key) {
            Kind::Plain
        } else if self.json.iter().any(|k| k == key) {
            Kind::Json
        } else {
            Kind::Str
        }
    }

    fn is_needed(&self) -> bool {
        !(self.moved.is_empty()
            && self.json.is_empty()
            && self.plain.is_empty()
            && self.allowed_tools.is_none()
            && self.head.is_none())
    }
}

fn encode(node: &Node) -> (Value, Kind) {
    match &node.kind {
        NodeKind::Scalar(s) if s.plain && s.core_type() != crate::skill::yaml::ScalarType::Str => {
            (Value::Str(s.value.clone()), Kind::Plain)
        }
        NodeKind::Scalar(s) => (Value::Str(s.value.clone()), Kind::Str),
        _ => (Value::Str(writer::metadata_string(node)), Kind::Json),
    }
}

/// Undoes [`standard_skill_md`]: when the frontmatter of `text` carries
/// `metadata.skillc-export`, returns the original SKILL.md: byte for byte when the exported
/// frontmatter was not edited since (the marker keeps the original bytes before the body);
/// else with the original top-level keys, key order, nested values and types back (comments
/// and quoting styles are not restored; values read the same). `None` when `text` is not a skillc export (nothing to undo) or cannot be read.
/// For `skillc import` of exported zips.
pub fn restore_skill_md(text: &str) -> Option<String> {
    let ctx = Context {
        dir_name: "",
        mode: Mode::Default,
    };
    let a = validate::analyze("SKILL.md", text.as_bytes(), &ctx);
    let (root, body) = (a.frontmatter.as_ref()?, a.body.clone()?);
    let md = root.get_value("metadata")?;
    let marker: Marker = serde_json::from_str(md.get_value(MARKER)?.as_str()?).ok()?;
    // Unedited since the export (exporting the original again gives exactly `text`): the
    // original bytes, as they were.
    if let Some(head) = &marker.head {
        let original = format!("{head}{}", &text[body.clone()]);
        if standard_skill_md("SKILL.md", &original, "").text.as_deref() == Some(text) {
            return Some(original);
        }
    }
    let decode = |key: &str, node: &Node| -> Value {
        let text = node.as_str().unwrap_or_default();
        if marker.json.iter().any(|k| k == key) {
            serde_json::from_str(text)
                .map(|j| Value::from_json(&j))
                .unwrap_or(Value::Str(text.to_owned()))
        } else if marker.plain.iter().any(|k| k == key) {
            Value::Plain(text.to_owned())
        } else {
            Value::from_node(node)
        }
    };
    let mut values: Vec<(String, Value)> = Vec::new();
    for e in root.as_map().unwrap_or_default() {
        if e.key == "allowed-tools"
            && let Some(list) = &marker.allowed_tools
        {
            values.push((e.key.clone(), Value::strs(list.clone())));
        } else if e.key != "metadata" {
            values.push((e.key.clone(), Value::from_node(&e.value)));
        }
    }
    let mut metadata: Vec<(String, Value)> = Vec::new();
    for e in md.as_map().unwrap_or_default() {
        if e.key == MARKER {
            continue;
        }
        let v = decode(&e.key, &e.value);
        if let Some(top) = marker.moved.get(&e.key) {
            values.push((top.clone(), v.clone()));
        }
        if marker.metadata.as_ref().is_some_and(|keys| keys.contains(&e.key)) {
            metadata.push((e.key.clone(), v));
        }
    }
    if let Some(keys) = &marker.metadata {
        metadata.sort_by_key(|(k, _)| keys.iter().position(|o| o == k));
        values.push(("metadata".into(), Value::Map(metadata)));
    }
    let mut top: Vec<(String, Value)> = Vec::new();
    for key in &marker.order {
        if let Some(i) = values.iter().position(|(k, _)| k == key) {
            top.push(values.remove(i));
        }
    }
    top.extend(values);
    let layout = Layout::of_text(text)?.without_bom();
    Some(writer::replace_head(text, body, &top, layout))
}

/// Whether a support file (path relative to the skill folder, `/`-separated) goes into the
/// export: hidden files and folders (`.DS_Store`, `.env`, `.git/…`) and the folders skillc
/// never reads do not.
pub fn is_exported(rel_path: &str) -> bool {
    rel_path
        .split('/')
        .all(|part| !part.starts_with('.') && !crate::model::SKIPPED_DIRS.contains(&part))
}

/// A file for the archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZipFile {
    /// Path relative to the skill folder, `/`-separated (`SKILL.md`, `scripts/run.py`).
    pub rel_path: String,
    /// The contents.
    pub bytes: Vec<u8>,
    /// Written with mode 0755 instead of 0644.
    pub executable: bool,
}

/// Builds the archive: `<name>/<rel_path>` for each file, sorted, fixed time and modes.
///
/// # Errors
/// Only when the zip writer fails (it writes to memory, so in practice never).
pub fn zip(name: &str, files: &[ZipFile]) -> Result<Vec<u8>, zip::result::ZipError> {
    let mut sorted: Vec<&ZipFile> = files.iter().collect();
    sorted.sort_by(|a, b| a.rel_path.cmp(&b.rel_path));
    sorted.dedup_by(|a, b| a.rel_path == b.rel_path);
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for f in sorted {
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .last_modified_time(zip::DateTime::default())
            .unix_permissions(if f.executable { 0o755 } else { 0o644 });
        w.start_file(format!("{name}/{}", f.rel_path), options)?;
        w.write_all(&f.bytes)?;
    }
    Ok(w.finish()?.into_inner())
}

/// The diagnostic for a support file left out of the export.
pub fn skipped(file: &str, why: &str) -> Diagnostic {
    Diagnostic::new(
        &rules::EX002,
        file,
        Span::at(Pos::START),
        format!("not exported: {why}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn export(text: &str) -> Exported {
        standard_skill_md("SKILL.md", text, "demo")
    }

    #[test]
    fn extensions_move_under_metadata_as_strings() {
        let e = export(
            "---\nname: demo\ndescription: A demo. Use it.\nversion: 1.0.0\nplatforms: [linux, macos]\nallowed-tools:\n  - Read\n  - Bash(git:*)\nmetadata:\n  author: me\n  openclaw: {requires: {bins: [gog]}, always: true}\n---\n# Body\n\n---\nkept\n",
        );
        assert_eq!(e.diagnostics, vec![]);
        assert_eq!(
            e.text.as_deref(),
            Some(
                "---\nname: demo\ndescription: A demo. Use it.\nallowed-tools: \"Read Bash(git:*)\"\nmetadata:\n  author: me\n  openclaw: \"{\\\"requires\\\":{\\\"bins\\\":[\\\"gog\\\"]},\\\"always\\\":true}\"\n  version: 1.0.0\n  platforms: \"[\\\"linux\\\",\\\"macos\\\"]\"\n  skillc-export: \"{\\\"v\\\":1,\\\"order\\\":[\\\"name\\\",\\\"description\\\",\\\"version\\\",\\\"platforms\\\",\\\"allowed-tools\\\",\\\"metadata\\\"],\\\"metadata\\\":[\\\"author\\\",\\\"openclaw\\\"],\\\"moved\\\":{\\\"platforms\\\":\\\"platforms\\\",\\\"version\\\":\\\"version\\\"},\\\"json\\\":[\\\"openclaw\\\",\\\"platforms\\\"],\\\"allowed-tools\\\":[\\\"Read\\\",\\\"Bash(git:*)\\\"],\\\"head\\\":\\\"--\\x2d\\\\nname: demo\\\\ndescription: A demo. Use it.\\\\nversion: 1.0.0\\\\nplatforms: [linux, macos]\\\\nallowed-tools:\\\\n  - Read\\\\n  - Bash(git:*)\\\\nmetadata:\\\\n  author: me\\\\n  openclaw: {requires: {bins: [gog]}, always: true}\\\\n--\\x2d\\\\n\\\"}\"\n---\n# Body\n\n---\nkept\n"
            )
        );
    }

    #[test]
    fn collisions_keep_both_values() {
        let e = export("---\nname: demo\ndescription: d\nversion: 2.0.0\nmetadata:\n  version: \"1.0\"\n---\n");
        assert_eq!(
            e.diagnostics.iter().map(|d| d.rule.code).collect::<Vec<_>>(),
            vec!["EX003"]
        );
        assert!(
            e.text
                .as_deref()
                .is_some_and(|t| t.contains("  version: \"1.0\"\n  frontmatter.version: 2.0.0\n"))
        );
        // Equal values merge silently.
        let e = export("---\nname: demo\ndescription: d\nversion: \"1.0\"\nmetadata:\n  version: \"1.0\"\n---\n");
        assert!(e.diagnostics.is_empty());
    }

    /// The frontmatter as typed JSON, and the body.
    fn meaning(text: &str) -> (serde_json::Value, String) {
        let a = validate::analyze(
            "SKILL.md",
            text.as_bytes(),
            &Context {
                dir_name: "demo",
                mode: Mode::Default,
            },
        );
        let body = a.body.clone().map(|b| text[b].to_owned()).unwrap_or_default();
        (a.frontmatter.map(|f| f.to_json_typed()).unwrap_or_default(), body)
    }

    #[test]
    fn restore_undoes_the_export() {
        let original = "---\nname: demo\ndescription: A demo.\nversion: 1.0\nplatforms: [linux, macos]\nallowed-tools:\n  - Read\n  - Bash(git add:*)\nuser-invocable: true\nmetadata:\n  author: me\n  count: 3\n  version: \"1.0\"\n  openclaw: {requires: {bins: [gog]}, always: true, n: 0x1F}\nlicense: MIT\n---\nbody --- text\n";
        let e = export(original);
        let exported = e.text.expect("exported");
        assert_eq!(
            e.diagnostics.iter().map(|d| d.rule.code).collect::<Vec<_>>(),
            vec!["EX003"],
            "`version` 1.0 (a float) and \"1.0\" (a string) differ"
        );
        let restored = restore_skill_md(&exported).expect("an export");
        let (m_orig, b_orig) = meaning(original);
        let (m_back, b_back) = meaning(&restored);
        assert_eq!(b_back, b_orig);
        // Hex integers come back as their value (0x1F → 31); everything else as it was.
        let mut expected = m_orig;
        expected["metadata"]["openclaw"]["n"] = serde_json::json!(31);
        assert_eq!(m_back, expected, "{restored}");
        let keys = |v: &serde_json::Value| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>());
        assert_eq!(keys(&m_back), keys(&expected), "key order is restored");
        // A skill that is not a skillc export has nothing to undo.
        assert_eq!(restore_skill_md(original), None);
        // A standard skill exports unchanged and without a marker.
        let plain = "---\nname: demo\ndescription: Plain.\nmetadata:\n  author: me\n---\nbody\n";
        assert_eq!(export(plain).text.as_deref(), Some(plain));
    }

    #[test]
    fn hidden_and_skipped_folders_are_not_exported() {
        assert!(is_exported("scripts/run.py"));
        assert!(!is_exported(".DS_Store"));
        assert!(!is_exported("assets/.hidden/x.png"));
        assert!(!is_exported("node_modules/a/index.js"));
        assert!(!is_exported("scripts/__pycache__/x.pyc"));
    }

    #[test]
    fn zips_are_sorted_and_deterministic() {
        let files = vec![
            ZipFile {
                rel_path: "scripts/b.sh".into(),
                bytes: b"echo b".to_vec(),
                executable: true,
            },
            ZipFile {
                rel_path: "SKILL.md".into(),
                bytes: b"---\nname: demo\n---\n".to_vec(),
                executable: false,
            },
        ];
        let a = zip("demo", &files).expect("zip");
        let mut reversed = files.clone();
        reversed.reverse();
        assert_eq!(
            a,
            zip("demo", &reversed).expect("zip"),
            "order of input does not matter"
        );
        let mut archive = zip::ZipArchive::new(Cursor::new(a)).expect("readable");
        let names: Vec<String> = archive
            .file_names()
            .map(|n| n.map(|c| c.into_owned()))
            .collect::<Result<_, _>>()
            .expect("names");
        assert_eq!(names, vec!["demo/SKILL.md", "demo/scripts/b.sh"]);
        let f = archive.by_name("demo/scripts/b.sh").expect("entry");
        assert_eq!(f.unix_mode().map(|m| m & 0o777), Some(0o755));
        assert_eq!(f.last_modified().map(|t| t.year()), Some(1980));
    }
}

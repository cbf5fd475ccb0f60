//! The project's `translations.toml`: reviewed names for sub-commands the vocabulary alone
//! cannot name (issue 12, "The review loop"; FORMATS.md, "translations.toml"). `skillc plan
//! --propose` writes `proposed` entries; a person accepts, edits or rejects each; the build
//! reads the file as an input and uses accepted entries only. Parsing never fails: problems
//! are diagnostics (`TR010`, `TR011`) with file:line, and the entry in question is ignored.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::db::{Settings, SkillSource, TextInput};
use crate::diag::{Diagnostic, Source};
use crate::rules;

/// A reviewer's decision on one proposal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    /// Written by `skillc plan --propose`; waits for a reviewer (`TR007`).
    Proposed,
    /// The name is used.
    Accepted,
    /// The sub-command gets no executor (`TR008`).
    Rejected,
}

impl Status {
    /// `proposed`, `accepted` or `rejected`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Proposed => "proposed",
            Status::Accepted => "accepted",
            Status::Rejected => "rejected",
        }
    }

    fn from_name(s: &str) -> Option<Status> {
        Some(match s {
            "proposed" => Status::Proposed,
            "accepted" => Status::Accepted,
            "rejected" => Status::Rejected,
            _ => return None,
        })
    }
}

/// One `[[translation]]` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The skill's name.
    pub skill: String,
    /// The sub-command as `skillc plan` shows it (`gmail search`, `scripts/recalc.py`).
    pub subcommand: String,
    /// The decision.
    pub status: Status,
    /// The canonical name (`read_highlights_meetgeek`).
    pub name: String,
    /// What the proposer read (shown to the reviewer; not used by the build).
    pub evidence: Vec<String>,
    /// A reviewer's note.
    pub note: Option<String>,
    /// Line of the entry's `[[translation]]` header in the file.
    pub line: u32,
}

/// The parsed file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Review {
    /// The path shown in diagnostics.
    pub path: String,
    /// Entries in file order (invalid and duplicate entries left out).
    pub entries: Vec<Entry>,
    /// Skill name → (declared default object, line).
    pub objects: BTreeMap<String, (String, u32)>,
    /// Problems with the file.
    pub diagnostics: Vec<Diagnostic>,
}

/// What the file says about one skill: the input of its translation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkillReview {
    /// The path shown in messages.
    pub path: String,
    /// Its entries, by sub-command.
    pub entries: Vec<Entry>,
    /// Its declared default object.
    pub object: Option<String>,
}

type Sp<T> = toml::Spanned<T>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    version: Sp<i64>,
    #[serde(default)]
    skill: Vec<Sp<SkillDef>>,
    #[serde(default)]
    translation: Vec<Sp<EntryDef>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SkillDef {
    name: String,
    object: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryDef {
    skill: String,
    subcommand: String,
    status: Sp<String>,
    name: String,
    #[serde(default)]
    evidence: Vec<String>,
    note: Option<String>,
}

/// Parses `translations.toml` text shown as `path` (pure). An empty text is an empty file.
pub fn parse(path: &str, text: &str) -> Review {
    let src = Source::new(path, text);
    let mut out = Review {
        path: path.to_owned(),
        ..Review::default()
    };
    if text.trim().is_empty() {
        return out;
    }
    let file: File = match toml::from_str(text) {
        Ok(f) => f,
        Err(e) => {
            out.diagnostics
                .push(crate::diag::toml_error(&src, &e, &rules::TR010, &rules::TR010));
            return out;
        }
    };
    if *file.version.get_ref() != 1 {
        out.diagnostics.push(Diagnostic::new(
            &rules::TR010,
            path,
            src.span(file.version.span()),
            format!(
                "unsupported translations version {}; expected 1",
                file.version.get_ref()
            ),
        ));
        return out;
    }
    for s in &file.skill {
        let line = src.span(s.span()).start.line;
        let def = s.get_ref();
        if let Some((_, first)) = out.objects.get(&def.name) {
            out.diagnostics.push(
                Diagnostic::new(
                    &rules::TR011,
                    path,
                    src.span(s.span()),
                    format!("skill `{}` declares its object twice (first at line {first})", def.name),
                )
                .help("keep one `[[skill]]` entry per skill"),
            );
            continue;
        }
        out.objects.insert(def.name.clone(), (def.object.clone(), line));
    }
    for t in &file.translation {
        let line = src.span(t.span()).start.line;
        let def = t.get_ref();
        let Some(status) = Status::from_name(def.status.get_ref()) else {
            out.diagnostics.push(Diagnostic::new(
                &rules::TR010,
                path,
                src.span(def.status.span()),
                format!(
                    "unknown status `{}`; expected proposed, accepted or rejected",
                    def.status.get_ref()
                ),
            ));
            continue;
        };
        if let Some(first) = out
            .entries
            .iter()
            .find(|e| e.skill == def.skill && e.subcommand == def.subcommand)
        {
            out.diagnostics.push(
                Diagnostic::new(
                    &rules::TR011,
                    path,
                    src.span(t.span()),
                    format!(
                        "a second entry for `{}` of skill `{}` (first at line {})",
                        def.subcommand, def.skill, first.line
                    ),
                )
                .help("keep one entry per skill and sub-command"),
            );
            continue;
        }
        out.entries.push(Entry {
            skill: def.skill.clone(),
            subcommand: def.subcommand.clone(),
            status,
            name: def.name.clone(),
            evidence: def.evidence.clone(),
            note: def.note.clone(),
            line,
        });
    }
    out
}

/// The parsed translations input.
#[salsa::tracked(returns(ref))]
pub fn review(db: &dyn salsa::Database, input: TextInput) -> Review {
    parse(input.path(db), input.text(db))
}

/// The entries of one skill: what its translation reads, so that an edit of another skill's
/// entries leaves its translation untouched (salsa backdates an equal value).
#[salsa::tracked(returns(ref))]
pub fn skill_review(db: &dyn salsa::Database, skill: SkillSource, settings: Settings, input: TextInput) -> SkillReview {
    let Some(name) = crate::skill::skill_name(db, skill, settings) else {
        return SkillReview::default();
    };
    let r = review(db, input);
    SkillReview {
        path: r.path.clone(),
        entries: r.entries.iter().filter(|e| e.skill == *name).cloned().collect(),
        object: r.objects.get(name.as_str()).map(|(o, _)| o.clone()),
    }
}

/// The header of a new file.
const HEADER: &str = "# translations.toml: reviewed names for sub-commands the vocabulary cannot name alone.\n\
     # `skillc plan --propose` adds `proposed` entries; set each to \"accepted\" (edit `name`\n\
     # first if needed: it must stay inside the vocabulary) or \"rejected\". See docs/authoring.md.\n\
     version = 1\n";

/// Writes a whole file (deterministic: objects by skill, entries sorted by skill and
/// sub-command, keys in a fixed order): what [`add_entries`] writes into an empty file.
#[cfg(test)]
fn render(objects: &BTreeMap<String, String>, entries: &[Entry]) -> String {
    use crate::util::toml_str;
    let mut out = String::from(HEADER);
    for (skill, object) in objects {
        out.push_str(&format!(
            "\n[[skill]]\nname = {}\nobject = {}\n",
            toml_str(skill),
            toml_str(object)
        ));
    }
    let mut sorted: Vec<&Entry> = entries.iter().collect();
    sorted.sort_by(|a, b| (&a.skill, &a.subcommand).cmp(&(&b.skill, &b.subcommand)));
    for e in sorted {
        out.push_str(&entry_text(e));
    }
    out
}

/// One `[[translation]]` entry, with the blank line before it.
fn entry_text(e: &Entry) -> String {
    use crate::util::toml_str;
    let mut out = format!(
        "\n[[translation]]\nskill = {}\nsubcommand = {}\nstatus = {}\nname = {}\n",
        toml_str(&e.skill),
        toml_str(&e.subcommand),
        toml_str(e.status.as_str()),
        toml_str(&e.name)
    );
    if !e.evidence.is_empty() {
        out.push_str("evidence = [\n");
        for ev in &e.evidence {
            out.push_str(&format!("  {},\n", toml_str(ev)));
        }
        out.push_str("]\n");
    }
    if let Some(n) = &e.note {
        out.push_str(&format!("note = {}\n", toml_str(n)));
    }
    out
}

/// Adds `new` entries to the file `text` and returns the new text (pure). Everything already
/// in the file — comments, blank lines, key order, the order of its entries, a reviewer's
/// edits — is kept byte for byte (`toml_edit` edits the document in place); each new entry
/// goes before the first existing entry that sorts after it (by skill, then sub-command), so a
/// sorted file stays sorted. An empty `text` starts a new file with its header.
///
/// # Errors
/// The parse error's message when `text` is not TOML, or when its `translation` key is not an
/// array of tables: the file is then never written over.
pub fn add_entries(text: &str, new: &[Entry]) -> Result<String, String> {
    use toml_edit::{DocumentMut, Item};
    let base = if text.trim().is_empty() { HEADER } else { text };
    let mut doc: DocumentMut = base.parse().map_err(|e: toml_edit::TomlError| e.to_string())?;
    let mut sorted: Vec<&Entry> = new.iter().collect();
    sorted.sort_by(|a, b| (&a.skill, &a.subcommand).cmp(&(&b.skill, &b.subcommand)));
    let list = doc
        .entry("translation")
        .or_insert(Item::ArrayOfTables(toml_edit::ArrayOfTables::new()))
        .as_array_of_tables_mut()
        .ok_or("`translation` is not an array of tables ([[translation]])")?;
    for e in sorted {
        let one: DocumentMut = entry_text(e)
            .parse()
            .map_err(|err: toml_edit::TomlError| err.to_string())?;
        let Some(mut table) = one
            .get("translation")
            .and_then(Item::as_array_of_tables)
            .and_then(|a| a.get(0))
            .cloned()
        else {
            return Err("internal: a rendered entry did not parse as [[translation]]".to_owned());
        };
        // No position of its own: it is written right after the entry before it.
        table.set_position(None);
        let key = (e.skill.as_str(), e.subcommand.as_str());
        let at = list
            .iter()
            .position(|t| {
                let get = |k: &str| t.get(k).and_then(Item::as_str).unwrap_or_default();
                (get("skill"), get("subcommand")) > key
            })
            .unwrap_or(list.len());
        list.insert(at, table);
    }
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_problems_have_lines() {
        let e = Entry {
            skill: "meetgeek".into(),
            subcommand: "highlights".into(),
            status: Status::Proposed,
            name: "read_highlights_meetgeek".into(),
            evidence: vec!["heading \"Get highlights\"".into()],
            note: None,
            line: 0,
        };
        let mut objects = BTreeMap::new();
        objects.insert("meetgeek".to_owned(), "events".to_owned());
        let text = render(&objects, std::slice::from_ref(&e));
        let r = parse("translations.toml", &text);
        assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
        assert_eq!(r.entries.len(), 1);
        assert_eq!(r.entries[0].name, e.name);
        assert_eq!(r.objects["meetgeek"].0, "events");
        assert_eq!(render(&objects, &r.entries), text, "rendering is stable");
        let bad =
            "version = 1\n\n[[translation]]\nskill = \"a\"\nsubcommand = \"b\"\nstatus = \"maybe\"\nname = \"x\"\n";
        let r = parse("translations.toml", bad);
        assert_eq!(r.diagnostics.len(), 1);
        assert_eq!(
            (r.diagnostics[0].rule.code, r.diagnostics[0].span.start.line),
            ("TR010", 6)
        );
        let broken = parse(
            "translations.toml",
            "version = 1\n[[translation]]\nskill = \"a\"\nstatus = 3\n",
        );
        assert_eq!(broken.diagnostics[0].rule.code, "TR010");
        assert!(broken.diagnostics[0].span.start.line >= 2);
    }

    fn proposed(skill: &str, sub: &str) -> Entry {
        Entry {
            skill: skill.into(),
            subcommand: sub.into(),
            status: Status::Proposed,
            name: format!("list_tools_{skill}"),
            evidence: vec!["command word \"list\"".into()],
            note: None,
            line: 0,
        }
    }

    #[test]
    fn added_entries_keep_comments_and_the_reviewers_order() {
        let text = "# my notes\nversion = 1\n\n# keep this one: checked by hand\n[[translation]]\nskill = \"b\"\nsubcommand = \"z\"\nstatus = \"accepted\"   # reviewed\nname = \"list_tools_b\"\n\n[[translation]]\nskill = \"a\"\nsubcommand = \"y\"\nstatus = \"rejected\"\nname = \"list_tools_a\"\n# trailing comment\n";
        let out = add_entries(text, &[proposed("c", "x"), proposed("b", "a")]).expect("parses");
        assert!(parse("translations.toml", &out).diagnostics.is_empty(), "{out}");
        // Every byte of the old file is still there, in order: only whole entries are added.
        let mut rest = out.as_str();
        for line in text.lines() {
            let at = rest.find(line).unwrap_or_else(|| panic!("lost {line:?} in\n{out}"));
            rest = &rest[at + line.len()..];
        }
        let order: Vec<&str> = out.lines().filter_map(|l| l.strip_prefix("subcommand = ")).collect();
        // The reviewer's (unsorted) order is kept; new entries go before the first that sorts
        // after them, else at the end.
        assert_eq!(order, ["\"a\"", "\"z\"", "\"y\"", "\"x\""], "{out}");
        // Into an empty file: the same text as a whole render.
        let fresh = add_entries("", &[proposed("c", "x"), proposed("b", "a")]).expect("new file");
        assert_eq!(
            fresh,
            render(&BTreeMap::new(), &[proposed("b", "a"), proposed("c", "x")])
        );
    }

    #[test]
    fn a_file_that_does_not_parse_is_never_written_over() {
        for bad in ["version = 1\n[[translation]\n", "version = 1\ntranslation = 3\n"] {
            assert!(add_entries(bad, &[proposed("a", "b")]).is_err(), "{bad}");
        }
    }
}

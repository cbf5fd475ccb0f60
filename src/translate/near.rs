//! The object the heading of a command names when neither its own words nor the skill name
//! one (issue 12: "the object of a command comes first from the command's own words, then the
//! nearest heading or sentence of the invocation, the default object last"): a bare `search`
//! under `## Search Conversations` finds conversations, `search` under `## search — Geocode a
//! place name` finds places.
//!
//! Measured three ways (BENCHMARKS.md, issue 12): as a fallback where the skill has no default
//! object it names more commands right than wrong on the truth set and adds corpus coverage;
//! before a skill's own default object it named more wrong (a heading such as `## Today`
//! overrode a task manager's tasks), and so did the text beside a command and the names of its
//! positional arguments (`move <id> <collection>` moves bookmarks, not collections), so those
//! are not used.

use crate::extract::SubCommand;
use crate::vocab::Vocabulary;

/// Heading words that name a part of the document, not a thing the commands act on.
const DOCUMENT_WORDS: &[&str] = &[
    "commands",
    "command",
    "usage",
    "examples",
    "example",
    "reference",
    "options",
    "step",
    "steps",
    "overview",
    "setup",
    "start",
    "surface",
    "workflow",
    "workflows",
    "scripts",
    "script",
    "tools",
    "tool",
    "helper",
    "section",
    "notes",
    "tips",
    "files",
    "file",
    "data",
    "content",
    "results",
    "outputs",
    "formats",
];

/// The object the heading a command is documented under names (`Reading Tweets` → posts):
/// its first object word that is neither a word about the document itself
/// ([`DOCUMENT_WORDS`]) nor a verb or a verb's form (`Posting` is not postings; so `Tweets`,
/// a form of the verb `tweet`, names nothing: letting an object's own spelling through named
/// one more truth command right and one more held-out command wrong), with the
/// evidence for `--explain`. `None` without a heading or for GAIA's `metadata.gaia.tools`.
pub(super) fn heading_object(sc: &SubCommand, vocab: &Vocabulary) -> Option<(String, String)> {
    let heading = sc.source_section.as_str();
    if heading.is_empty() || heading.starts_with("metadata.") {
        return None;
    }
    heading
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .filter(|w| {
            !DOCUMENT_WORDS.contains(&w.as_str())
                && vocab.action(w).is_none()
                && super::prose::verb_of(w, vocab).is_none()
        })
        .find_map(|w| {
            let o = vocab.object(&w)?;
            Some((
                o.name().to_owned(),
                format!("object `{}` from the heading \"{heading}\" (`{w}`)", o.name()),
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn under(heading: &str) -> Option<String> {
        let sc = SubCommand {
            source_section: heading.into(),
            ..crate::translate::tests::sc("read")
        };
        heading_object(&sc, crate::vocab::builtin()).map(|(o, _)| o)
    }

    #[test]
    fn a_heading_names_the_object_but_not_by_its_verbs_or_document_words() {
        assert_eq!(under("Search Conversations").as_deref(), Some("conversations"));
        assert_eq!(under("search — Geocode a place name").as_deref(), Some("places"));
        assert_eq!(under("Reading Tweets"), None);
        assert_eq!(under("Posting"), None);
        assert_eq!(under("Common Commands"), None);
        assert_eq!(under(""), None);
        assert_eq!(under("metadata.gaia.tools"), None);
    }
}

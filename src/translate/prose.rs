//! Words for a command that has none (a single-purpose script, `python scripts/recalc.py
//! file.xlsx`): what the skill says it does — the comment or list text beside it, its
//! heading, the sentence before its block — and, as a last resort, the file stem
//! (`data_profiler` is a noun phrase, not an operation). Issue 12, "Extraction".

use super::Step;
use crate::extract::{Program, SubCommand};
use crate::vocab::{Match, Vocabulary};

/// Verbs that introduce a command rather than say what it does ("Use the script to…").
const LEAD_INS: &[&str] = &[
    "use", "run", "call", "invoke", "execute", "try", "see", "note", "type", "launch",
];

/// Objects prose names about any command ("Validate the file", "Save results"): the skill's
/// own object says more.
const GENERIC: &[&str] = &[
    "files", "data", "content", "texts", "results", "options", "formats", "entries", "outputs",
];

/// The action a word means as a verb: itself, or its inflected and derived forms
/// (`recalculates`, `searching`, `analyzer`, `validation`, `converter`).
pub(super) fn verb_of(word: &str, vocab: &Vocabulary) -> Option<String> {
    let w = word.to_ascii_lowercase();
    let mut forms = vec![w.clone()];
    let strip = |suffix: &str, add: &str| {
        w.strip_suffix(suffix)
            .filter(|s| s.len() >= 3)
            .map(|s| format!("{s}{add}"))
    };
    for (suffix, add) in [
        ("ies", "y"),
        ("es", ""),
        ("s", ""),
        ("ing", ""),
        ("ing", "e"),
        ("izer", "ize"),
        ("iser", "ise"),
        ("ator", "ate"),
        ("ation", "ate"),
        ("ation", ""),
        ("ion", ""),
        ("sion", "t"),
        ("er", ""),
        ("er", "e"),
        ("or", ""),
        ("ed", ""),
        ("ed", "e"),
    ] {
        if let Some(f) = strip(suffix, add) {
            forms.push(f);
        }
    }
    forms
        .into_iter()
        .find_map(|f| vocab.action(&f).map(|m| m.name().to_owned()))
}

/// The words of a text (ASCII letters and digits).
fn plain_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// The verb a sentence leads with (`lead`), or the one after `to` ("…script to recalculate
/// formulas"), and the words after it.
fn verb_phrase(text: &str, vocab: &Vocabulary, lead: bool) -> Option<(String, String, Vec<String>)> {
    let ws = plain_words(text);
    let first = ws.first()?;
    if lead
        && !LEAD_INS.contains(&first.as_str())
        && let Some(a) = verb_of(first, vocab)
    {
        return Some((first.clone(), a, ws[1..].to_vec()));
    }
    let at = ws.iter().position(|w| w == "to")?;
    let next = ws.get(at + 1)?;
    let a = verb_of(next, vocab).filter(|_| !LEAD_INS.contains(&next.as_str()))?;
    Some((next.clone(), a, ws[at + 2..].to_vec()))
}

/// Words that end a noun phrase.
fn ends_phrase(w: &str) -> bool {
    matches!(
        w,
        "and"
            | "or"
            | "with"
            | "from"
            | "using"
            | "via"
            | "into"
            | "to"
            | "for"
            | "in"
            | "on"
            | "by"
            | "as"
            | "of"
            | "across"
            | "per"
            | "at"
            | "within"
            | "without"
    )
}

/// The object words of a noun phrase, in reading order, up to a preposition or the end, with
/// their objects; generic ones left out.
fn phrase_objects<'a, 'v>(
    phrase: &'a [String],
    vocab: &'v Vocabulary,
) -> impl Iterator<Item = (&'a String, Match<'v>)> {
    phrase.iter().take_while(|w| !ends_phrase(w)).filter_map(|w| {
        let o = vocab.object(w)?;
        (!GENERIC.contains(&o.name())).then_some((w, o))
    })
}

/// The object a verb's noun phrase names: its last object word before a preposition or the
/// end ("all standard market report visuals" → visuals), generic ones left out.
fn phrase_object(after: &[String], vocab: &Vocabulary) -> Option<String> {
    phrase_objects(after, vocab).last().map(|(w, _)| w.clone())
}

/// What a command's own description says ([`described`]).
pub(super) struct Described {
    /// The action its leading verb means.
    pub(super) verb: Option<String>,
    /// The objects of its first noun phrase in reading order: (word, canonical object,
    /// written in the plural).
    pub(super) objects: Vec<(String, String, bool)>,
}

/// What a command's own description says: the action its leading verb means, and the objects
/// of its first noun phrase. The phrase is the description up to its first aside (`(`, `:`,
/// `;`, `,`, a dash, a full stop) and then up to a preposition ("All issues for a team" →
/// issues; "List all lists" → list, lists). `None` for a phrase of alternatives ("Update
/// tags/title/collection" names the fields a command changes, not its items) or without an
/// object.
pub(super) fn described(text: &str, vocab: &Vocabulary) -> Option<Described> {
    let part = text
        .split(['(', ':', ';', ',', '—', '–', '.'])
        .next()
        .unwrap_or_default()
        .split(" - ")
        .next()
        .unwrap_or_default();
    if part.contains('/') {
        return None;
    }
    let ws = plain_words(part);
    // A plural noun that is also a verb's form (`tweets`, `issues`) leads a noun phrase.
    let first = ws.first()?;
    let verb = (!(first.ends_with('s') && vocab.object(first).is_some()))
        .then(|| verb_of(first, vocab))
        .flatten()
        .filter(|_| !LEAD_INS.contains(&first.as_str()));
    let phrase = &ws[usize::from(verb.is_some())..];
    // Without a verb the phrase must lead with its object, after determiners and qualifiers
    // only ("All issues", "DNS records", "Recent transactions"; not "Exposes Codex tools").
    let lead = phrase.iter().position(|w| vocab.object(w).is_some())?;
    let modifier = |w: &String| {
        matches!(w.as_str(), "all" | "the" | "your" | "my" | "every" | "any" | "each") || vocab.qualifier(w).is_some()
    };
    if verb.is_none() && !phrase[..lead].iter().all(modifier) {
        return None;
    }
    let objects: Vec<(String, String, bool)> = phrase_objects(phrase, vocab)
        .map(|(w, o)| {
            let plural = super::name::written_plural(w, o.name(), vocab);
            (w.clone(), o.name().to_owned(), plural)
        })
        .collect();
    (!objects.is_empty()).then_some(Described { verb, objects })
}

/// The words of the program's file stem (`scripts/search_pubmed.py` → `search`, `pubmed`).
pub(super) fn stem_words(program: &Program) -> Vec<String> {
    let name = match program {
        Program::Script { path, .. } => {
            let file = path.rsplit('/').next().unwrap_or(path);
            file.split_once('.').map_or(file, |(s, _)| s).to_owned()
        }
        Program::Binary { name } => name.clone(),
        Program::Tool { function, .. } => function.clone(),
    };
    name.split(['-', '_', '.'])
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// Synthetic words for a command without words: an action word, the stem's qualifiers, then
/// the object the same text names, else the stem's; with the step saying where the action
/// came from. A stem that starts with a verb is an imperative (`unpack.py`,
/// `search_pubmed.py`) and names the action first; a noun-phrase stem (`eda_analyzer`) only
/// when nothing else does. `None` when nothing says what it does.
pub(super) fn words_for(sc: &SubCommand, vocab: &Vocabulary) -> Option<(Vec<String>, Step)> {
    let stem = stem_words(&sc.program);
    let stem_object = stem
        .iter()
        .rev()
        .find(|w| vocab.object(w).is_some_and(|o| !GENERIC.contains(&o.name())))
        .cloned();
    let stem_qualifiers = stem
        .iter()
        .filter(|w| vocab.qualifier(w).is_some() && vocab.object(w).is_none())
        .cloned();
    let imperative = stem.first().filter(|w| vocab.action(w).is_some()).cloned();
    let sources: [(&str, Option<&str>, bool); 3] = [
        ("its description", sc.description.as_deref(), true),
        (
            "its heading",
            Some(sc.source_section.as_str()).filter(|s| !s.is_empty()),
            true,
        ),
        ("the sentence before it", sc.context.as_deref(), false),
    ];
    let from_text = sources.iter().find_map(|(place, text, lead)| {
        let (word, action, after) = verb_phrase((*text)?, vocab, *lead)?;
        Some((
            word,
            action,
            phrase_object(&after, vocab),
            *place,
            text.unwrap_or("").trim(),
        ))
    });
    let (word, action, object, meaning) = match (imperative, from_text) {
        (Some(verb), text) => {
            let action = verb_of(&verb, vocab)?;
            let object = stem_object.clone().or_else(|| text.and_then(|t| t.2));
            let why = format!("action `{action}` from the file name `{}`", sc.program.describe());
            (verb, action, object, why)
        }
        (None, Some((word, action, object, place, text))) => {
            let why = format!("action `{action}` from {place}: \"{text}\"");
            (word, action, object.or(stem_object.clone()), why)
        }
        (None, None) => {
            // Last resort: a verb anywhere in the stem (`eda_analyzer`).
            let verb = stem.iter().find(|w| verb_of(w, vocab).is_some())?.clone();
            let action = verb_of(&verb, vocab)?;
            let why = format!("action `{action}` from the file name `{}`", sc.program.describe());
            (verb, action, stem_object.clone(), why)
        }
    };
    let mut words = vec![action];
    words.extend(stem_qualifiers);
    words.extend(object);
    Some((words, Step { word, meaning }))
}

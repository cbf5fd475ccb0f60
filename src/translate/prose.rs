//! Words for a command that has none (a single-purpose script, `python scripts/recalc.py
//! file.xlsx`): what the skill says it does — the comment or list text beside it, its
//! heading, the sentence before its block — and, as a last resort, the file stem
//! (`data_profiler` is a noun phrase, not an operation). Issue 12, "Extraction".

use super::Step;
use crate::extract::{Program, SubCommand};
use crate::vocab::Vocabulary;

/// Verbs that introduce a command rather than say what it does ("Use the script to…").
const LEAD_INS: &[&str] = &[
    "use", "run", "call", "invoke", "execute", "try", "see", "note", "type", "launch",
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

/// The verb a sentence leads with, or the one after `to` ("…script to recalculate formulas"),
/// and the words after it.
fn verb_phrase(text: &str, vocab: &Vocabulary) -> Option<(String, String, Vec<String>)> {
    let ws = plain_words(text);
    let first = ws.first()?;
    if !LEAD_INS.contains(&first.as_str())
        && let Some(a) = verb_of(first, vocab)
    {
        return Some((first.clone(), a, ws[1..].to_vec()));
    }
    let at = ws.iter().position(|w| w == "to")?;
    let next = ws.get(at + 1)?;
    let a = verb_of(next, vocab).filter(|_| !LEAD_INS.contains(&next.as_str()))?;
    Some((next.clone(), a, ws[at + 2..].to_vec()))
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

/// Synthetic words for a command without words: an action word, then the words after it in
/// the same text, then the stem's words; with the step saying where the action came from.
/// `None` when nothing says what it does.
pub(super) fn words_for(sc: &SubCommand, vocab: &Vocabulary) -> Option<(Vec<String>, Step)> {
    let stem = stem_words(&sc.program);
    let sources: [(&str, Option<&str>); 3] = [
        ("its description", sc.description.as_deref()),
        (
            "its heading",
            Some(sc.source_section.as_str()).filter(|s| !s.is_empty()),
        ),
        ("the sentence before it", sc.context.as_deref()),
    ];
    for (place, text) in sources {
        let Some((word, action, after)) = text.and_then(|t| verb_phrase(t, vocab)) else {
            continue;
        };
        let mut words = vec![action.clone()];
        // Qualifiers of the stem (`search_pubmed`), then what the text names after its verb
        // (the last object word wins), else the stem's object.
        words.extend(
            stem.iter()
                .filter(|w| vocab.qualifier(w).is_some() && vocab.object(w).is_none())
                .cloned(),
        );
        let named: Vec<String> = after
            .into_iter()
            .take_while(|w| !matches!(w.as_str(), "and" | "or" | "with" | "from" | "using" | "via"))
            .filter(|w| vocab.object(w).is_some())
            .take(1)
            .collect();
        if named.is_empty() {
            words.extend(stem.iter().filter(|w| vocab.object(w).is_some()).take(1).cloned());
        }
        words.extend(named);
        let step = Step {
            word: word.clone(),
            meaning: format!("action `{action}` from {place}: \"{}\"", text.unwrap_or("").trim()),
        };
        return Some((words, step));
    }
    // Last resort: the stem itself, when one of its words is a verb (`extract_metadata`).
    let verb_at = stem.iter().position(|w| verb_of(w, vocab).is_some())?;
    let action = verb_of(&stem[verb_at], vocab)?;
    let mut words = vec![action.clone()];
    words.extend(
        stem.iter()
            .enumerate()
            .filter(|(i, w)| *i != verb_at && (vocab.object(w).is_some() || vocab.qualifier(w).is_some()))
            .map(|(_, w)| w.clone()),
    );
    let step = Step {
        word: stem[verb_at].clone(),
        meaning: format!("action `{action}` from the file name `{}`", sc.program.describe()),
    };
    Some((words, step))
}

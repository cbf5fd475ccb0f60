//! The proposer (issue 12, "The review loop"): for a sub-command the vocabulary could not
//! name, the (action, object, qualifier) triple of the vocabulary that best matches what the
//! skill says about it. Deterministic, lexical, and never outside the vocabulary: every part is
//! a canonical entry reached from a word of the command, its description, heading or
//! surrounding sentence, its file name, or the skill's own description and default object.
//! A proposal is only ever a suggestion: `skillc plan --propose` writes it to
//! `translations.toml` for a reviewer.

use std::collections::BTreeMap;

use super::ExecutorName;
use super::context::Context;
use super::name::tokens;
use super::prose::{stem_words, verb_of};
use crate::extract::SubCommand;
use crate::vocab::Vocabulary;

/// A proposed name with the evidence a reviewer reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proposal {
    /// The name.
    pub name: ExecutorName,
    /// One line per part: what chose it (`action read ← "get" in its heading "Get highlights"`).
    pub evidence: Vec<String>,
}

/// Scores of one category: canonical → (score, first evidence).
#[derive(Default)]
struct Tally(BTreeMap<String, (u32, String)>);

impl Tally {
    fn add(&mut self, name: &str, weight: u32, why: String) {
        let e = self.0.entry(name.to_owned()).or_insert((0, why));
        e.0 += weight;
    }

    /// The best-scored entry; ties go to the first in canonical order (deterministic).
    fn best(&self) -> Option<(&String, &(u32, String))> {
        self.0.iter().max_by(|a, b| a.1.0.cmp(&b.1.0).then(b.0.cmp(a.0)))
    }
}

/// The proposal of a name that rests on weak evidence (`TR012`): the name itself, with the
/// steps that derived it as its evidence.
pub fn of_weak_name(name: &ExecutorName, steps: &[super::Step]) -> Proposal {
    Proposal {
        name: name.clone(),
        evidence: steps
            .iter()
            .map(|s| match s.word.as_str() {
                "" => s.meaning.clone(),
                w => format!("`{w}`: {}", s.meaning),
            })
            .collect(),
    }
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// Proposes a name for `sc`, or `None` when no source names both an action and an object.
pub fn propose(sc: &SubCommand, ctx: &Context, vocab: &Vocabulary) -> Option<Proposal> {
    let provider = ctx.provider.clone()?;
    let command = tokens(&sc.words, vocab);
    let stem = stem_words(&sc.program);
    // (where, words, weight): the command's words say most, the skill's description least.
    let mut sources: Vec<(String, Vec<String>, u32)> = vec![("the command".into(), command.clone(), 8)];
    if let Some(d) = &sc.description {
        sources.push((format!("its description \"{}\"", d.trim()), words(d), 4));
    }
    if !sc.source_section.is_empty() && sc.source_section != "metadata.gaia.tools" {
        sources.push((
            format!("its heading \"{}\"", sc.source_section),
            words(&sc.source_section),
            3,
        ));
    }
    sources.push((format!("the file name `{}`", sc.program.describe()), stem, 2));
    if let Some(c) = &sc.context {
        sources.push((format!("the sentence before it \"{}\"", c.trim()), words(c), 1));
    }
    let (mut actions, mut objects) = (Tally::default(), Tally::default());
    for (place, ws, weight) in &sources {
        for (i, w) in ws.iter().enumerate() {
            // A text's leading verb says what it does; later verbs less.
            let lead = if i == 0 { 2 } else { 1 };
            if let Some(a) = verb_of(w, vocab) {
                actions.add(&a, weight * lead, format!("action `{a}` ← `{w}` in {place}"));
            }
            if let Some(o) = vocab.object(w) {
                objects.add(o.name(), *weight, format!("object `{}` ← `{w}` in {place}", o.name()));
            } else if let Some(o) = vocab
                .domain(w)
                .and_then(|d| vocab.domains.get(d.name())?.object.as_deref())
            {
                objects.add(
                    o,
                    weight / 2,
                    format!("object `{o}` ← the service word `{w}` in {place}"),
                );
            }
        }
    }
    if let Some(d) = &ctx.object {
        objects.add(
            &d.object,
            3,
            format!("object `{}`: the skill's object ({})", d.object, d.evidence),
        );
    }
    let (action, (_, action_why)) = actions.best()?;
    let (object, (_, object_why)) = objects
        .0
        .iter()
        .filter(|(o, _)| *o != action)
        .max_by(|a, b| a.1.0.cmp(&b.1.0).then(b.0.cmp(a.0)))?;
    let mut qualifiers: Vec<String> = Vec::new();
    let mut evidence = vec![action_why.clone(), object_why.clone()];
    for w in &command {
        if let Some(q) = vocab.qualifier(w)
            && vocab.qualifies(q.name(), object)
            && q.name() != object
            && !qualifiers.iter().any(|x| x == q.name())
            && vocab.action(w).is_none_or(|a| a.name() != action)
        {
            qualifiers.push(q.name().to_owned());
            evidence.push(format!("qualifier `{}` ← `{w}` in the command", q.name()));
        }
    }
    Some(Proposal {
        name: ExecutorName {
            action: action.clone(),
            object: object.clone(),
            qualifiers,
            provider,
        },
        evidence,
    })
}

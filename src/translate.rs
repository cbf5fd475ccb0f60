//! Translation: sub-command words → a plan with a canonical executor name
//! `action_object[_qualifier]*_provider`, or a rejection with a reason (PRODUCT.md, "translate").
//!
//! A contextual rule of the vocabulary (keyed on a domain word and an action word) wins over
//! synonyms. Without a rule, each word is looked up: the last word meaning an action is the
//! action, the last remaining word meaning an object is the object (earlier object words, such
//! as the service name `gmail`, only set the context), and words meaning a qualifier of that
//! object are qualifiers. A sub-command made only of object words lists them (`gmail labels`).
//! Any word that means nothing rejects the plan, naming the word: prose never widens the
//! vocabulary. Two plans of one skill with the same name are both rejected.

use std::collections::BTreeMap;

use crate::db::{Settings, SkillSource, TextInput};
use crate::diag::Rule;
use crate::extract::{self, Program, SubCommand};
use crate::rules;
use crate::skill;
use crate::vocab::{self, ContextRule, Match, Vocabulary};

/// A canonical executor name and its parts.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ExecutorName {
    /// Canonical action.
    pub action: String,
    /// Canonical object.
    pub object: String,
    /// Canonical qualifiers, in the order found.
    pub qualifiers: Vec<String>,
    /// Provider qualifier (the skill name with `-` → `_`).
    pub provider: String,
}

impl ExecutorName {
    /// The full name: `read_events_google_workspace`.
    pub fn full(&self) -> String {
        let mut parts = vec![self.action.as_str(), self.object.as_str()];
        parts.extend(self.qualifiers.iter().map(String::as_str));
        parts.push(&self.provider);
        parts.join("_")
    }
}

/// Why a word mapped the way it did (`skillc plan --explain`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The word of the sub-command (or a rule's words).
    pub word: String,
    /// What it meant: `action find (synonym of find)`, `rule #3 (line 412)`…
    pub meaning: String,
}

/// The outcome of translating one sub-command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Translated to a canonical name.
    Translated(ExecutorName),
    /// Rejected, with the rule and the reason.
    Rejected {
        /// The rule (`TR001`…).
        rule: &'static Rule,
        /// One sentence naming the word or the collision.
        reason: String,
        /// The name it would have had (for collisions).
        name: Option<ExecutorName>,
    },
}

/// A translated (or rejected) sub-command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The sub-command it comes from.
    pub subcommand: SubCommand,
    /// The translation outcome.
    pub outcome: Outcome,
    /// How each word was mapped.
    pub steps: Vec<Step>,
}

impl Plan {
    /// The name, when translated.
    pub fn name(&self) -> Option<&ExecutorName> {
        match &self.outcome {
            Outcome::Translated(n) => Some(n),
            Outcome::Rejected { .. } => None,
        }
    }
}

/// The plans of one skill.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Translation {
    /// The provider qualifier, when the skill name gives one.
    pub provider: Option<String>,
    /// One plan per sub-command, in extraction order.
    pub plans: Vec<Plan>,
}

/// Translates the sub-commands of a skill with a vocabulary.
#[salsa::tracked(returns(ref))]
pub fn translate_skill(
    db: &dyn salsa::Database,
    skill: SkillSource,
    settings: Settings,
    vocabulary: TextInput,
) -> Translation {
    let ex = extract::extract_skill(db, skill, settings);
    let name = skill::skill_name(db, skill, settings);
    let vocab = &vocab::vocabulary(db, vocabulary).vocabulary;
    translate(&ex.subcommands, name.as_deref(), vocab)
}

/// `google-workspace` → `google_workspace`; `None` unless the name is ASCII `[a-z0-9-]`.
pub fn provider_of(skill_name: &str) -> Option<String> {
    // Names Windows reserves for devices cannot be folders of a portable catalog.
    let reserved = matches!(skill_name, "con" | "prn" | "aux" | "nul")
        || ((skill_name.starts_with("com") || skill_name.starts_with("lpt"))
            && skill_name.len() == 4
            && skill_name.as_bytes()[3].is_ascii_digit());
    let ok = !reserved
        && !skill_name.is_empty()
        && skill_name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !skill_name.starts_with('-')
        && !skill_name.ends_with('-');
    ok.then(|| {
        skill_name
            .split('-')
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join("_")
    })
}

/// Translates sub-commands (pure; the query's body).
pub fn translate(subcommands: &[SubCommand], skill_name: Option<&str>, vocab: &Vocabulary) -> Translation {
    let provider = skill_name.and_then(provider_of);
    let mut plans: Vec<Plan> = subcommands
        .iter()
        .map(|sc| {
            let (outcome, steps) = match &provider {
                None => (
                    Outcome::Rejected {
                        rule: &rules::TR004,
                        reason: match skill_name {
                            Some(n) => format!(
                                "the skill name `{n}` is not ASCII `[a-z0-9-]`, so it cannot form a provider qualifier"
                            ),
                            None => "the skill has no readable name (run `skillc check` on it)".to_owned(),
                        },
                        name: None,
                    },
                    Vec::new(),
                ),
                Some(p) => translate_words(&sc.words, &context_words(&sc.program, skill_name), p, vocab),
            };
            Plan {
                subcommand: sc.clone(),
                outcome,
                steps,
            }
        })
        .collect();
    // Collisions inside the skill reject every plan involved.
    let mut by_name: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, p) in plans.iter().enumerate() {
        if let Some(n) = p.name() {
            by_name.entry(n.full()).or_default().push(i);
        }
    }
    for (name, idx) in by_name {
        if idx.len() < 2 {
            continue;
        }
        // Sub-commands of different programs may read the same (`balance`): name the program.
        let label = |i: usize| {
            let sc = &plans[i].subcommand;
            let same = idx
                .iter()
                .filter(|&&k| plans[k].subcommand.display() == sc.display())
                .count()
                > 1;
            if same {
                format!("`{}` ({})", sc.display(), sc.program.describe())
            } else {
                format!("`{}`", sc.display())
            }
        };
        let all: Vec<(usize, String)> = idx.iter().map(|&i| (i, label(i))).collect();
        for &i in &idx {
            let others: Vec<&str> = all.iter().filter(|(k, _)| *k != i).map(|(_, s)| s.as_str()).collect();
            let n = plans[i].name().cloned();
            plans[i].outcome = Outcome::Rejected {
                rule: &rules::TR003,
                reason: format!("`{name}` is also the name of {} in this skill", others.join(", ")),
                name: n,
            };
        }
    }
    Translation { provider, plans }
}

/// Words that set the context of a sub-command without being part of it: the skill name and
/// the program's file stem (`scripts/outlook-mail.sh` → `outlook`, `mail`), in that order.
pub fn context_words(program: &Program, skill_name: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: &str| {
        for w in s.split(['-', '_', '.', ' ']).filter(|w| !w.is_empty()) {
            let w = w.to_ascii_lowercase();
            if !out.contains(&w) {
                out.push(w);
            }
        }
    };
    if let Some(n) = skill_name {
        push(n);
    }
    match program {
        Program::Script { path, .. } => {
            let file = path.rsplit('/').next().unwrap_or(path);
            push(file.rsplit_once('.').map(|(stem, _)| stem).unwrap_or(file));
        }
        Program::Binary { name } => push(name),
        Program::Tool { .. } => {}
    }
    out
}

/// Splits sub-command words into vocabulary words: a word the vocabulary knows stays whole,
/// others split on `-` and `_` (`create-folder` → `create`, `folder`).
fn tokens(words: &[String], vocab: &Vocabulary) -> Vec<String> {
    let mut out = Vec::new();
    for w in words {
        let w = w.to_ascii_lowercase();
        let known = vocab.action(&w).is_some() || vocab.object(&w).is_some() || vocab.qualifier(&w).is_some();
        if known || !w.contains(['-', '_']) {
            out.push(w);
        } else {
            out.extend(w.split(['-', '_']).filter(|p| !p.is_empty()).map(str::to_owned));
        }
    }
    out
}

fn describe(kind: &str, word: &str, m: Match<'_>) -> String {
    match m {
        Match::Canonical(n) => format!("{kind} `{n}`"),
        Match::Synonym(n) => format!("{kind} `{n}` (synonym `{word}`)"),
    }
}

/// Adds a qualifier once, and says which word gave it.
fn add_qualifier(qualifiers: &mut Vec<String>, steps: &mut Vec<Step>, word: &str, q: Match<'_>) {
    if !qualifiers.iter().any(|x| x == q.name()) {
        qualifiers.push(q.name().to_owned());
    }
    steps.push(Step {
        word: word.to_owned(),
        meaning: describe("qualifier", word, q),
    });
}

/// A word that names an object other than the plan's: it only sets the context (`gmail`).
fn context_step(word: &str, object: Match<'_>) -> Step {
    Step {
        word: word.to_owned(),
        meaning: format!("{} — context only", describe("object", word, object)),
    }
}

fn reject(rule: &'static Rule, reason: String, steps: Vec<Step>) -> (Outcome, Vec<Step>) {
    (
        Outcome::Rejected {
            rule,
            reason,
            name: None,
        },
        steps,
    )
}

/// A sub-command a context rule matches: the rule's action, object and qualifiers, the
/// other words as qualifiers of that object (or objects of context).
fn by_rule(rule: &ContextRule, toks: &[String], provider: &str, vocab: &Vocabulary) -> (Outcome, Vec<Step>) {
    let mut steps = Vec::new();
    steps.push(Step {
        word: format!("{} + {}", rule.domain, rule.action),
        meaning: format!(
            "rule #{} (line {}): {} {}{}",
            rule.index + 1,
            rule.line,
            rule.then_action,
            rule.then_object,
            rule.then_qualifiers
                .iter()
                .map(|q| format!(" +{q}"))
                .collect::<String>()
        ),
    });
    let mut qualifiers = rule.then_qualifiers.clone();
    for t in toks.iter().filter(|t| **t != rule.domain && **t != rule.action) {
        if let Some(q) = vocab
            .qualifier(t)
            .filter(|q| qualifies(vocab, q.name(), &rule.then_object))
        {
            add_qualifier(&mut qualifiers, &mut steps, t, q);
        } else if let Some(o) = vocab.object(t) {
            steps.push(context_step(t, o));
        } else if let Some(a) = vocab.action(t) {
            steps.push(Step {
                word: t.clone(),
                meaning: format!("{} — overridden by the rule", describe("action", t, a)),
            });
        } else {
            return reject(
                &rules::TR005,
                format!("no mapping for `{t}` in the closed vocabulary"),
                steps,
            );
        }
    }
    let name = ExecutorName {
        action: rule.then_action.clone(),
        object: rule.then_object.clone(),
        qualifiers,
        provider: provider.to_owned(),
    };
    (Outcome::Translated(name), steps)
}

/// A sub-command without an object word: a lone action takes its object from the skill or
/// program name; otherwise the unmatched word (or the missing object) is the rejection.
fn without_object(
    words: &[String],
    toks: &[String],
    ctx: &[String],
    action_at: Option<usize>,
    provider: &str,
    vocab: &Vocabulary,
    mut steps: Vec<Step>,
) -> (Outcome, Vec<Step>) {
    if let Some(action_at) = action_at
        && toks.len() == 1
        && let Some((cw, o)) = ctx.iter().rev().find_map(|c| vocab.object(c).map(|o| (c, o)))
    {
        let a = vocab
            .action(&toks[action_at])
            .map(|m| m.name().to_owned())
            .unwrap_or_default();
        steps.push(Step {
            word: toks[action_at].clone(),
            meaning: describe(
                "action",
                &toks[action_at],
                vocab.action(&toks[action_at]).unwrap_or(Match::Canonical(&a)),
            ),
        });
        steps.push(Step {
            word: cw.clone(),
            meaning: format!("{} — from the skill or program name", describe("object", cw, o)),
        });
        let object = o.name().to_owned();
        return (
            Outcome::Translated(ExecutorName {
                action: a,
                object,
                qualifiers: Vec::new(),
                provider: provider.to_owned(),
            }),
            steps,
        );
    }
    // A word that means nothing is the reason; otherwise the object is simply missing.
    let unmatched = toks
        .iter()
        .find(|t| vocab.action(t).is_none() && vocab.object(t).is_none() && vocab.qualifier(t).is_none());
    if let Some(w) = unmatched {
        return reject(
            &rules::TR005,
            format!("no mapping for `{w}` in the closed vocabulary"),
            steps,
        );
    }
    let reason = format!("no word of `{}` names an object of the vocabulary", words.join(" "));
    reject(&rules::TR002, reason, steps)
}

/// Translates one sub-command's words; `context` words (skill and program names) may supply
/// the object and a rule's domain, never the action.
fn translate_words(words: &[String], context: &[String], provider: &str, vocab: &Vocabulary) -> (Outcome, Vec<Step>) {
    let toks = tokens(words, vocab);
    let ctx: Vec<String> = tokens(context, vocab)
        .into_iter()
        .filter(|c| !toks.contains(c))
        .collect();
    let mut steps = Vec::new();
    if let Some(rule) = vocab.rule_for(&toks, &ctx) {
        return by_rule(rule, &toks, provider, vocab);
    }

    // The action: the last word meaning an action, unless it is the only object word.
    let object_words = toks.iter().filter(|t| vocab.object(t).is_some()).count();
    let action_at = toks
        .iter()
        .rposition(|t| vocab.action(t).is_some() && (vocab.object(t).is_none() || object_words > 1));
    // The object: the last other word meaning an object.
    let object_at = toks
        .iter()
        .enumerate()
        .rev()
        .find(|(i, t)| Some(*i) != action_at && vocab.object(t).is_some())
        .map(|(i, _)| i);
    let Some(object_at) = object_at else {
        return without_object(words, &toks, &ctx, action_at, provider, vocab, steps);
    };
    let object = vocab
        .object(&toks[object_at])
        .map(|m| m.name().to_owned())
        .unwrap_or_default();
    let mut qualifiers: Vec<String> = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        if i == object_at {
            if let Some(o) = vocab.object(t) {
                steps.push(Step {
                    word: t.clone(),
                    meaning: describe("object", t, o),
                });
            }
        } else if Some(i) == action_at {
            if let Some(a) = vocab.action(t) {
                steps.push(Step {
                    word: t.clone(),
                    meaning: describe("action", t, a),
                });
            }
        } else if let Some(q) = vocab.qualifier(t) {
            if qualifies(vocab, q.name(), &object) {
                add_qualifier(&mut qualifiers, &mut steps, t, q);
            } else if let Some(o) = vocab.object(t) {
                steps.push(context_step(t, o));
            } else {
                return reject(
                    &rules::TR006,
                    format!("qualifier `{}` (from `{t}`) cannot qualify `{object}`", q.name()),
                    steps,
                );
            }
        } else if let Some(o) = vocab.object(t) {
            steps.push(context_step(t, o));
        } else if let (Some(_), Some(a)) = (vocab.action(t), action_at) {
            return reject(
                &rules::TR001,
                format!(
                    "`{t}` and `{}` both name actions; a sub-command has one action",
                    toks[a]
                ),
                steps,
            );
        } else {
            return reject(
                &rules::TR005,
                format!("no mapping for `{t}` in the closed vocabulary"),
                steps,
            );
        }
    }
    // Only qualifiers may follow the object of a sub-command without an action word.
    let bare = toks[object_at + 1..].iter().all(|t| vocab.qualifier(t).is_some());
    let action = match action_at {
        Some(i) => vocab.action(&toks[i]).map(|m| m.name().to_owned()).unwrap_or_default(),
        None if bare && vocab.actions.contains_key("list") && vocab.actions.contains_key("read") => {
            // `gmail labels` lists labels; `tmdb person <id>` reads one person.
            let word = &toks[object_at];
            let plural = *word == object || word.ends_with('s');
            let (action, why) = if plural {
                ("list", "no action word: a plural object means `list`")
            } else {
                ("read", "no action word: a singular object means `read`")
            };
            steps.push(Step {
                word: String::new(),
                meaning: why.into(),
            });
            action.to_owned()
        }
        None => {
            return reject(
                &rules::TR001,
                format!("no word of `{}` names an action of the vocabulary", words.join(" ")),
                steps,
            );
        }
    };
    (
        Outcome::Translated(ExecutorName {
            action,
            object,
            qualifiers,
            provider: provider.to_owned(),
        }),
        steps,
    )
}

fn qualifies(vocab: &Vocabulary, qualifier: &str, object: &str) -> bool {
    vocab
        .qualifiers
        .get(qualifier)
        .is_some_and(|q| q.objects.iter().any(|o| o == object))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab() -> Vocabulary {
        vocab::parse(vocab::DEFAULT_PATH, vocab::DEFAULT_TEXT).vocabulary
    }

    fn name(words: &str) -> String {
        let w: Vec<String> = words.split(' ').map(str::to_owned).collect();
        match translate_words(&w, &[], "p", &vocab()).0 {
            Outcome::Translated(n) => n.full(),
            Outcome::Rejected { rule, reason, .. } => format!("{}: {reason}", rule.code),
        }
    }

    #[test]
    fn synonyms_rules_and_defaults() {
        assert_eq!(name("gmail search"), "find_messages_p");
        assert_eq!(name("drive get"), "describe_files_p");
        assert_eq!(name("drive download"), "read_files_p");
        assert_eq!(name("gmail reply"), "send_messages_reply_p");
        assert_eq!(name("drive create-folder"), "create_folders_p");
        assert_eq!(name("gmail labels"), "list_labels_p");
        assert_eq!(name("gmail drafts create"), "create_messages_draft_p");
    }

    #[test]
    fn unknown_words_reject_with_the_word_named() {
        assert!(
            name("calendar frobnicate").starts_with("TR005: no mapping for `frobnicate`"),
            "{}",
            name("calendar frobnicate")
        );
        assert!(name("frobnicate").starts_with("TR005"));
        assert!(
            name("search").starts_with("TR002: no word of `search` names an object"),
            "{}",
            name("search")
        );
    }

    #[test]
    fn collisions_reject_both() {
        let sc = |w: &str| SubCommand {
            words: w.split(' ').map(str::to_owned).collect(),
            program: Program::Binary { name: "x".into() },
            args: vec![],
            source_section: String::new(),
            line: 1,
            invocations: 1,
            description: None,
        };
        let t = translate(
            &[sc("gmail search"), sc("gmail messages search"), sc("gmail send")],
            Some("gog"),
            &vocab(),
        );
        let codes: Vec<&str> = t
            .plans
            .iter()
            .map(|p| match &p.outcome {
                Outcome::Translated(_) => "ok",
                Outcome::Rejected { rule, .. } => rule.code,
            })
            .collect();
        assert_eq!(codes, vec!["TR003", "TR003", "ok"]);
    }

    #[test]
    fn provider_names() {
        assert_eq!(provider_of("google-workspace").as_deref(), Some("google_workspace"));
        assert_eq!(provider_of("café"), None);
        assert_eq!(provider_of("nul"), None);
        assert_eq!(provider_of("com1"), None);
        assert_eq!(provider_of("com-tools").as_deref(), Some("com_tools"));
    }
}

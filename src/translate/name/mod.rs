//! Naming one sub-command from its words (module documentation of [`super`]): every word is
//! read in the command's domain, then the action, the object and the qualifiers are chosen,
//! and what the words leave open comes from the domain, the action's own object or the
//! skill's default object — each step recorded for `--explain`.

use super::context::Context;
use super::{ExecutorName, Outcome, Step};
use crate::diag::Rule;
use crate::extract::{Arg, SubCommand};
use crate::rules;
use crate::skill::gaia::ParamType;
use crate::vocab::{Match, Vocabulary};

mod bare;
use bare::{in_domain, is_plural_form, no_action, read_or_list, set_property, stem_object, topic_guess};
pub(super) use bare::{weak, written_plural};

/// One word of a sub-command and what it may mean.
#[derive(Clone, Debug)]
pub(super) struct Tok<'v> {
    pub(super) word: String,
    pub(super) action: Option<Match<'v>>,
    pub(super) object: Option<Match<'v>>,
    pub(super) qualifier: Option<Match<'v>>,
    pub(super) domain: Option<Match<'v>>,
    /// The meaning came from the domain (`pull` on a code host).
    pub(super) in_domain: Option<&'v str>,
}

/// Splits words into vocabulary words: a word the vocabulary knows stays whole, others split on
/// `-` and `_` (`create-folder` → `create`, `folder`); a mode flag loses its dashes.
pub(super) fn tokens(words: &[String], vocab: &Vocabulary) -> Vec<String> {
    let lower: Vec<String> = words
        .iter()
        .map(|w| w.trim_start_matches('-').to_ascii_lowercase())
        .collect();
    let another_action = |i: usize| {
        lower
            .iter()
            .enumerate()
            .any(|(k, w)| k != i && w.split(['-', '_']).all(|p| vocab.action(p).is_some()))
    };
    let mut out = Vec::new();
    for (i, w) in lower.iter().enumerate() {
        if w.is_empty() {
            continue;
        }
        if vocab.knows(w) || !w.contains(['-', '_']) {
            out.push(w.clone());
            continue;
        }
        let parts: Vec<&str> = w.split(['-', '_']).filter(|p| !p.is_empty()).collect();
        // A compound noun beside the command's verb (`deploy-key add`): its head is the object,
        // a verb in front of it only says which kind.
        let head_is_object = parts.last().is_some_and(|p| vocab.object(p).is_some());
        if parts.len() > 1 && head_is_object && another_action(i) {
            out.extend(
                parts[..parts.len() - 1]
                    .iter()
                    .filter(|p| vocab.action(p).is_none())
                    .map(|p| (*p).to_owned()),
            );
            out.extend(parts.last().map(|p| (*p).to_owned()));
        } else {
            out.extend(parts.into_iter().map(str::to_owned));
        }
    }
    out
}

fn key<'v, T>(map: &'v std::collections::BTreeMap<String, T>, name: Option<&String>) -> Option<Match<'v>> {
    name.and_then(|n| map.get_key_value(n))
        .map(|(k, _)| Match::Synonym(k.as_str()))
}

/// Reads the tokens in `domain`: a domain meaning replaces the word's global meanings.
pub(super) fn read_tokens<'v>(toks: &[String], domain: Option<&str>, vocab: &'v Vocabulary) -> Vec<Tok<'v>> {
    toks.iter()
        .map(|t| {
            let meaning = domain.and_then(|d| vocab.meaning(d, t).map(|m| (d, m)));
            match meaning {
                Some((d, m)) => Tok {
                    word: t.clone(),
                    action: key(&vocab.actions, m.action.as_ref()),
                    object: key(&vocab.objects, m.object.as_ref()),
                    qualifier: key(&vocab.qualifiers, m.qualifier.as_ref()),
                    domain: None,
                    in_domain: vocab.domains.get_key_value(d).map(|(k, _)| k.as_str()),
                },
                None => Tok {
                    word: t.clone(),
                    action: vocab.action(t),
                    object: vocab.object(t),
                    qualifier: vocab.qualifier(t),
                    domain: vocab.domain(t),
                    in_domain: None,
                },
            }
        })
        .collect()
}

pub(super) fn describe(kind: &str, word: &str, m: Match<'_>) -> String {
    match m {
        Match::Canonical(n) => format!("{kind} `{n}`"),
        Match::Synonym(n) if n == word => format!("{kind} `{n}`"),
        Match::Synonym(n) => format!("{kind} `{n}` (from `{word}`)"),
    }
}

pub(super) fn reject(rule: &'static Rule, reason: String, steps: Vec<Step>) -> (Outcome, Vec<Step>) {
    (
        Outcome::Rejected {
            rule,
            reason,
            name: None,
        },
        steps,
    )
}

fn step(word: &str, meaning: String) -> Step {
    Step {
        word: word.to_owned(),
        meaning,
    }
}

/// Argument names that carry free text a command sends or stores (issue 12: "a free-text
/// argument (message, body, text, comment) means create or send").
const FREE_TEXT: &[&str] = &[
    "message", "msg", "body", "text", "comment", "content", "note", "reply", "caption", "prompt", "title",
];

/// Objects whose items are written as free text: messages and posts are sent, the others
/// created.
const CONTENT: &[&str] = &[
    "messages",
    "posts",
    "replies",
    "notifications",
    "conversations",
    "comments",
    "notes",
    "tasks",
    "reminders",
    "documents",
    "pages",
    "issues",
    "memories",
    "entries",
    "journals",
    "cards",
    "events",
    "texts",
];

/// A positional argument that identifies one item: a string or a number (coordinates),
/// not free text, and not named after another object (`<calendarId>` of `calendar events`
/// names the calendar the events are in).
fn identifies(a: &Arg, object: &str, vocab: &Vocabulary) -> bool {
    if a.position.is_none() || !matches!(a.ty, ParamType::String | ParamType::Number) {
        return false;
    }
    let n = a.name.as_str();
    if FREE_TEXT.contains(&n) {
        return false;
    }
    let names = |part: &str| {
        vocab
            .object(part)
            .or_else(|| {
                vocab.domain(part).and_then(|d| {
                    vocab
                        .domains
                        .get(d.name())?
                        .object
                        .as_deref()
                        .and_then(|o| vocab.object(o))
                })
            })
            .map(|o| o.name() == object)
    };
    // An example id (`<TEAM-123>`) identifies, whatever its prefix.
    if n.chars().any(|c| c.is_ascii_digit()) {
        return true;
    }
    let parts: Vec<&str> = n
        .split('_')
        .filter(|p| !matches!(*p, "id" | "name" | "key" | "ref"))
        .collect();
    let own = parts.iter().any(|p| names(p) == Some(true));
    let other = parts.iter().any(|p| names(p) == Some(false));
    own || !other
}

/// The pieces of a name being settled, with the steps that explain them.
struct Naming<'a, 'v> {
    toks: &'a [Tok<'v>],
    vocab: &'v Vocabulary,
    steps: Vec<Step>,
    action_at: Option<usize>,
    object: Option<(String, String)>,
    qualifiers: Vec<String>,
    /// An object an extra action word brings (`auth add`: the accounts `auth` signs in to).
    extra_object: Option<(String, String)>,
    /// The words come from prose (a command without words): a service name there is only
    /// mentioned, it does not supply the object.
    prose: bool,
    /// The object the program's file name names (`outlook-calendar.sh`: events).
    stem_object: Option<(String, String)>,
    /// The object the heading the command is documented under names ([`super::near`]).
    heading_object: Option<(String, String)>,
    /// The object came from the program's file name.
    object_from_stem: bool,
    /// The object came from a default (the domain, an action, the file name, the heading or
    /// the skill), not from a word of the command.
    object_default: bool,
    /// Why the evidence for the name is weak ([`weak`]): each reason one sentence.
    weak: Vec<&'static str>,
}

/// Chooses the action word: the only one (`list all`, `post`); among several, the last
/// without an own object that is not also an object word (`backup list`), then the last
/// without an own object (`auth status`: `auth` signs in, `status` describes).
fn choose_action(toks: &[Tok<'_>], vocab: &Vocabulary) -> Option<usize> {
    let plural = toks.len() == 1 && toks[0].object.is_some() && is_plural_form(&toks[0].word, vocab);
    let acting: Vec<usize> = (0..toks.len()).filter(|&i| toks[i].action.is_some()).collect();
    if plural {
        return None;
    }
    if acting.len() <= 1 {
        return acting.first().copied();
    }
    let own = |i: usize| {
        toks[i]
            .action
            .and_then(|a| vocab.actions.get(a.name()))
            .is_some_and(|a| a.object.is_some())
    };
    let objects = toks.iter().filter(|t| t.object.is_some()).count();
    // An action word that is also a qualifier says which kind (`mark-read`: set, read).
    let plain = |i: usize| toks[i].qualifier.is_none();
    acting
        .iter()
        .rev()
        .find(|&&i| !own(i) && plain(i) && (toks[i].object.is_none() || objects > 1))
        .or_else(|| {
            acting
                .iter()
                .rev()
                .find(|&&i| !own(i) && (toks[i].object.is_none() || objects > 1))
        })
        .or_else(|| acting.iter().rev().find(|&&i| !own(i)))
        .or(acting.last())
        .copied()
}

impl<'v> Naming<'_, 'v> {
    fn push(&mut self, word: &str, meaning: String) {
        self.steps.push(step(word, meaning));
    }

    fn action(&self) -> Option<Match<'v>> {
        self.action_at.and_then(|i| self.toks[i].action)
    }

    /// The object word: the last other word meaning an object, unless the action has its own
    /// object and the word also names a scope of it (`grant group`: permissions of a group).
    fn choose_object(&mut self) -> Option<usize> {
        let own = self
            .action()
            .and_then(|a| self.vocab.actions.get(a.name()))
            .and_then(|a| a.object.clone());
        let at = self.toks.iter().enumerate().rev().find(|(i, t)| {
            Some(*i) != self.action_at
                && t.object.is_some()
                && !own
                    .as_ref()
                    .is_some_and(|o| t.qualifier.is_some_and(|q| self.vocab.qualifies(q.name(), o)))
        });
        let at = at.map(|(i, _)| i);
        self.object = match at {
            Some(i) => self.toks[i]
                .object
                .map(|o| (o.name().to_owned(), describe("object", &self.toks[i].word, o))),
            None => self.action_at.and_then(|i| self.carried_object(i)),
        };
        at
    }

    /// The object the action word itself names, when it is another thing than the act
    /// (`config` sets settings; `check` does not check checks), or that its domain meaning
    /// gives (`dm` on a social network: messages).
    fn carried_object(&self, i: usize) -> Option<(String, String)> {
        let t = &self.toks[i];
        let o = t.object?;
        let a = t.action?;
        let stem: String = a.name().chars().take(4).collect();
        let different = !o.name().starts_with(&stem) && !t.word.starts_with(o.name().get(..4).unwrap_or(o.name()));
        (t.in_domain.is_some() || different).then(|| (o.name().to_owned(), describe("object", &t.word, o)))
    }

    fn add_qualifier(&mut self, q: &str, word: &str, m: Match<'_>) {
        if !self.qualifiers.iter().any(|x| x == q) {
            self.qualifiers.push(q.to_owned());
        }
        self.push(word, describe("qualifier", word, m));
    }

    /// Reads a word that is neither the action nor the object.
    fn other(&mut self, i: usize, ctx: &Context) -> Result<(), (&'static Rule, String)> {
        let t = &self.toks[i];
        let object = self.object.as_ref().map(|(o, _)| o.clone());
        let fits = |q: Match<'_>| object.as_deref().is_none_or(|o| self.vocab.qualifies(q.name(), o));
        // A leading namespace word (`files create-folder`) is context, not an "about" qualifier.
        let namespace = i == 0 && self.toks.len() > 1;
        let about = |q: Match<'_>| {
            self.vocab
                .qualifiers
                .get(q.name())
                .is_some_and(|d| d.class == Some(crate::vocab::QualifierClass::Object))
        };
        let qualifier = t
            .qualifier
            .filter(|q| fits(*q) && !(namespace && about(*q) && t.object.is_some()));
        if let Some(a) = t.action
            && qualifier.is_none()
        {
            // A second action word: the same action, or one with its own object (`auth add`).
            let same = self.action().is_some_and(|b| b.name() == a.name());
            let own = self.vocab.actions.get(a.name()).and_then(|x| x.object.clone());
            if same {
                self.push(&t.word, describe("action", &t.word, a) + " — the same action");
                return Ok(());
            }
            if let Some(o) = own {
                self.push(
                    &t.word,
                    format!("{} — gives its object `{o}`", describe("action", &t.word, a)),
                );
                self.extra_object = Some((o.clone(), format!("object `{o}` of `{}`", t.word)));
                return Ok(());
            }
            if t.object.is_none() {
                let other = self.action_at.map(|k| self.toks[k].word.clone()).unwrap_or_default();
                return Err((
                    &rules::TR001,
                    format!(
                        "`{}` and `{other}` both name actions; a sub-command has one action",
                        t.word
                    ),
                ));
            }
        }
        if let Some(q) = qualifier {
            let word = t.word.clone();
            self.add_qualifier(q.name(), &word, q);
        } else if let Some(d) = t.domain {
            self.push(&t.word, format!("domain `{}` — sets the domain", d.name()));
        } else if let Some(o) = t.object {
            self.push(&t.word, describe("object", &t.word, o) + " — context only");
        } else if let Some(q) = t.qualifier {
            return Err((
                &rules::TR006,
                format!(
                    "qualifier `{}` (from `{}`) cannot qualify `{}`",
                    q.name(),
                    t.word,
                    object.unwrap_or_default()
                ),
            ));
        } else if ctx.own_words.contains(&t.word) {
            self.push(&t.word, "the skill's own name — context only".into());
        } else {
            return Err((
                &rules::TR005,
                format!("no mapping for `{}` in the closed vocabulary", t.word),
            ));
        }
        Ok(())
    }

    /// The object the words leave open: the command's domain, an action word's own object,
    /// the program's file name, the heading it is documented under when the skill names no
    /// object of its own, the skill's default object.
    fn default_object(&mut self, ctx: &Context) {
        if self.object.is_some() {
            return;
        }
        let vocab = self.vocab;
        let domain_object = self.toks.iter().filter(|_| !self.prose).find_map(|t| {
            let d = vocab.domains.get(t.domain?.name())?;
            d.object
                .clone()
                .map(|o| (o.clone(), format!("object `{o}` of domain `{}` (`{}`)", d.name, t.word)))
        });
        let action_object = self
            .action()
            .and_then(|a| vocab.actions.get(a.name()))
            .and_then(|a| a.object.clone())
            .map(|o| (o.clone(), format!("object `{o}` of the action")));
        let skill_object = ctx.object.as_ref().map(|d| {
            (
                d.object.clone(),
                format!("the skill's object `{}`: {}", d.object, d.evidence),
            )
        });
        // An action's own object (`login` → accounts) is the action's meaning, not a guess.
        let acted = domain_object.is_none() && (self.extra_object.is_some() || action_object.is_some());
        let before_stem = domain_object.or(self.extra_object.take()).or(action_object);
        self.object_from_stem = before_stem.is_none() && self.stem_object.is_some();
        // The heading only where the skill names no object of its own ([`super::near`]).
        let heading = self.heading_object.take().filter(|_| skill_object.is_none());
        self.object = before_stem.or(self.stem_object.take()).or(heading).or(skill_object);
        if let Some((_, why)) = self.object.clone() {
            self.object_default = !acted;
            self.push("", why);
        }
    }

    /// The object checked against the command's own description (an L6-style check of the
    /// object, issue 12). Where the object is only a default, or the command is a singular
    /// noun without an action word (`team <key>`: it may say whose items, not which), and the
    /// description's first noun phrase names other objects in the plural and not this one,
    /// the description's first object is the object: the command's own wording says more
    /// than a skill-wide default. A description that leads with a verb counts only when the
    /// verb means the name's action ("List all grants" for `list`); without an action word,
    /// only a description that leads with the noun phrase ("All issues for a team", "DNS
    /// records"). The replaced noun stays as a qualifier of the new object, and must be one in
    /// the vocabulary (`team` → issues of the team; `report <id>` stays a report). An action's
    /// own object (`auth` → accounts) is not a default here: it is what the action means.
    fn check_described(&mut self, sc: &SubCommand) {
        let Some((object, _)) = self.object.clone() else { return };
        let singular_noun = self.action_at.is_none()
            && !self.object_default
            && self.toks.iter().any(|t| {
                t.object.is_some_and(|o| o.name() == object)
                    && !is_plural_form(&t.word, self.vocab)
                    && !t.word.ends_with('s')
            });
        // A change names the fields it changes ("Change fields", "Update the title"), not the
        // item changed.
        let changes = self.action().is_some_and(|a| matches!(a.name(), "update" | "set"));
        if self.prose || changes || !(self.object_default || singular_noun) {
            return;
        }
        let Some(text) = sc.description.as_deref() else { return };
        let Some(d) = super::prose::described(text, self.vocab) else {
            return;
        };
        let agrees = match (&d.verb, self.action()) {
            (None, None) => true,
            (Some(v), Some(a)) => v == a.name(),
            _ => false,
        };
        let Some((word, new, true)) = d.objects.first().cloned() else {
            return;
        };
        if !agrees || d.objects.iter().any(|(_, o, _)| *o == object) {
            return;
        }
        // The noun says whose items only when the vocabulary has it as a qualifier of them
        // (`team`, `project`); otherwise it is the object (`report <id>`).
        let scope = self.toks.iter().find_map(|t| {
            let q = t.qualifier.filter(|q| self.vocab.qualifies(q.name(), &new))?;
            t.object
                .is_some_and(|o| o.name() == object)
                .then_some((t.word.clone(), q))
        });
        if singular_noun && scope.is_none() {
            return;
        }
        self.push(
            &word,
            format!(
                "object `{new}` from its description \"{}\", which does not name `{object}`",
                text.trim()
            ),
        );
        if singular_noun && let Some((t, q)) = scope {
            self.add_qualifier(q.name(), &t, q);
        }
        self.object = Some((new.clone(), String::new()));
        self.object_from_stem = false;
    }
}

/// Names a sub-command from its tokens. `quoted_prose`: an invocation passes a quoted value
/// with spaces (free text).
pub(super) fn name_tokens(
    sc: &SubCommand,
    toks: &[Tok<'_>],
    ctx: &Context,
    vocab: &Vocabulary,
    quoted_prose: bool,
) -> (Outcome, Vec<Step>) {
    let Some(provider) = ctx.provider.as_deref() else {
        return reject(
            &rules::TR004,
            "the skill has no name that can form a provider word".into(),
            Vec::new(),
        );
    };
    let mut n = Naming {
        toks,
        vocab,
        steps: Vec::new(),
        action_at: choose_action(toks, vocab),
        object: None,
        qualifiers: Vec::new(),
        extra_object: None,
        prose: sc.words.is_empty() || sc.words.iter().all(|w| w.starts_with("--")),
        stem_object: stem_object(sc, vocab),
        heading_object: super::near::heading_object(sc, vocab),
        object_from_stem: false,
        object_default: false,
        weak: Vec::new(),
    };
    if let Some(done) = set_property(sc, &mut n, ctx, provider) {
        return done;
    }
    let object_at = n.choose_object();
    for (i, t) in toks.iter().enumerate() {
        if Some(i) == n.action_at || Some(i) == object_at {
            let (kind, m) = if Some(i) == n.action_at {
                ("action", t.action)
            } else {
                ("object", t.object)
            };
            if let Some(m) = m {
                n.push(&t.word, describe(kind, &t.word, m) + &in_domain(t));
            }
            // A domain meaning may bring a qualifier with it (`timeline`: posts of the timeline).
            if let Some(q) = t.qualifier.filter(|_| t.in_domain.is_some()) {
                let word = t.word.clone();
                n.add_qualifier(q.name(), &word, q);
            }
            continue;
        }
        if let Err((rule, reason)) = n.other(i, ctx) {
            return reject(rule, reason, n.steps);
        }
    }
    n.default_object(ctx);
    n.check_described(sc);
    let Some((object, _)) = n.object.clone() else {
        let reason = if toks.is_empty() {
            format!("nothing names an object for `{}`", sc.display())
        } else {
            format!("no word of `{}` names an object of the vocabulary", sc.display())
        };
        return reject(&rules::TR002, reason, n.steps);
    };
    if let Some(q) = n.qualifiers.iter().find(|q| !vocab.qualifies(q, &object)) {
        let reason = format!("qualifier `{q}` cannot qualify `{object}`");
        return reject(&rules::TR006, reason, n.steps);
    }
    if n.action_at.is_none()
        && toks
            .iter()
            .all(|t| t.action.is_none() && t.object.is_none() && t.qualifier.is_none())
    {
        // No word says what it does: no blind default.
        let reason = format!("nothing says what `{}` does (no action or object word)", sc.display());
        return reject(&rules::TR001, reason, n.steps);
    }
    let action = match n.action() {
        Some(a) => {
            // The action read from prose, not from a mode flag's own words (`--list-voices`).
            let from_prose = |i: usize| !tokens(&sc.words, vocab).contains(&toks[i].word);
            if n.prose && n.object_from_stem && n.action_at.is_some_and(from_prose) {
                n.weak.push(
                    "a command without words: its action read from prose, its object only from the program's file name",
                );
            }
            read_or_list(a.name(), sc, &mut n.steps)
        }
        None => match no_action(sc, &object, &mut n, quoted_prose) {
            Some(a) => {
                if topic_guess(sc, &n, &object) {
                    n.weak.push(
                        "no action word, its object only from a noun of the program's file name, and no qualifier that filters a listing",
                    );
                }
                a
            }
            None => {
                let reason = format!("no word of `{}` names an action of the vocabulary", sc.display());
                return reject(&rules::TR001, reason, n.steps);
            }
        },
    };
    if !vocab.actions.contains_key(&action) {
        return reject(
            &rules::TR001,
            format!("the vocabulary has no action `{action}`"),
            n.steps,
        );
    }
    let name = ExecutorName {
        action,
        object,
        qualifiers: n.qualifiers,
        provider: provider.to_owned(),
    };
    if let Some(why) = n.weak.first() {
        return weak(name, why, n.steps);
    }
    (Outcome::Translated(name), n.steps)
}

//! Translation: sub-command words → a plan with a canonical executor name
//! `action_object[_qualifier]*_provider`, or a rejection with a reason (PRODUCT.md, "translate").
//!
//! The closed vocabulary is the only possible output. A contextual rule (an action word, with a
//! domain word) wins over synonyms. Otherwise every word is read in the command's domain (a
//! service word such as `gmail` sets it; else the skill's): the last word meaning an action is
//! the action, the last other word meaning an object is the object, words meaning a qualifier
//! of it are qualifiers; service and brand words and the skill's own name are context. What the
//! words leave open comes, in order, from the domain's default object, the action's own object
//! (`login` → accounts) and the skill's default object ([`context`]); a default object gives
//! way to the object the command's own description names ("List all lists"). Without an
//! action word, free text is sent or created and a bare object is read when an argument
//! identifies one item, listed otherwise. A command without words (a single-purpose script)
//! takes its words from what the skill says about it ([`prose`]). A word that means nothing
//! rejects the plan, naming it: prose never widens the vocabulary. Collisions inside a skill
//! are told apart by a qualifier when a word distinguishes them (the command's own words
//! before its description), else rejected.

pub mod context;
mod name;
mod near;
pub mod propose;
mod prose;
pub mod review;

use std::collections::BTreeMap;

use crate::db::{Settings, SkillSource, TextInput};
use crate::diag::Rule;
use crate::extract::{self, SubCommand};
use crate::rules;
use crate::skill;
use crate::vocab::{self, Vocabulary};
pub use context::{Context, DefaultObject, SkillInfo, skill_context};
pub use propose::Proposal;
pub use review::{SkillReview, Status};

/// A canonical executor name and its parts.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ExecutorName {
    /// Canonical action.
    pub action: String,
    /// Canonical object.
    pub object: String,
    /// Canonical qualifiers, in the order found.
    pub qualifiers: Vec<String>,
    /// Provider qualifier (the skill name normalised: [`provider_for`]).
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
    /// For a rejected plan, the name the proposer suggests (`skillc plan --propose`).
    pub proposal: Option<Proposal>,
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
    /// The skill's default object and its evidence, when one was inferred or declared.
    pub object: Option<DefaultObject>,
    /// One plan per sub-command, in extraction order.
    pub plans: Vec<Plan>,
}

/// Translates the sub-commands of a skill with a vocabulary and the project's reviewed
/// names (`translations.toml`).
#[salsa::tracked(returns(ref))]
pub fn translate_skill(
    db: &dyn salsa::Database,
    skill: SkillSource,
    settings: Settings,
    vocabulary: TextInput,
    translations: TextInput,
) -> Translation {
    let ex = extract::extract_skill(db, skill, settings);
    let profile = skill_profile(db, skill, settings);
    let reviewed = review::skill_review(db, skill, settings, translations);
    let info = SkillInfo {
        name: profile.name.as_deref(),
        dir_name: skill.dir_name(db),
        title: ex.title.as_deref(),
        description: profile.description.as_deref(),
        // The project's file wins over the skill's own declaration.
        declared_object: reviewed.object.as_deref().or(profile.declared_object.as_deref()),
    };
    let vocab = &vocab::vocabulary(db, vocabulary).vocabulary;
    translate(&ex.subcommands, &info, vocab, reviewed)
}

/// What naming reads of a skill's frontmatter: its name, description and declared default
/// object (`metadata.skillc-object`). A query of its own, so that an edit of SKILL.md that
/// leaves these and the sub-commands equal translates nothing again.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Profile {
    /// The frontmatter `name`.
    pub name: Option<String>,
    /// The frontmatter `description`.
    pub description: Option<String>,
    /// `metadata.skillc-object`.
    pub declared_object: Option<String>,
}

/// The [`Profile`] of a skill.
#[salsa::tracked(returns(ref))]
pub fn skill_profile(db: &dyn salsa::Database, skill: SkillSource, settings: Settings) -> Profile {
    let analysis = skill::analyze_skill(db, skill, settings);
    let model = &analysis.model;
    Profile {
        name: model.name.as_ref().map(|n| n.value.clone()),
        description: model.description.as_ref().map(|d| d.value.clone()),
        declared_object: analysis
            .frontmatter
            .as_ref()
            .and_then(|f| f.get_value("metadata"))
            .and_then(|m| m.get_value("skillc-object"))
            .and_then(|o| o.as_str())
            .map(str::to_owned),
    }
}

/// `google-workspace` → `google_workspace`; `None` unless the name is ASCII `[a-z0-9-]` and not
/// a Windows device name: the names a catalog can use for folders (`SK057`, `skillc import`).
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
pub fn translate(
    subcommands: &[SubCommand],
    info: &SkillInfo<'_>,
    vocab: &Vocabulary,
    reviewed: &SkillReview,
) -> Translation {
    let ctx = skill_context(info, vocab);
    let mut plans: Vec<Plan> = subcommands
        .iter()
        .map(|sc| {
            let (outcome, steps) = match &ctx.provider {
                None => (
                    Outcome::Rejected {
                        rule: &rules::TR004,
                        reason: match info.name {
                            Some(n) => format!(
                                "neither the skill name `{n}` nor its folder `{}` has an ASCII letter or digit to form a provider word",
                                info.dir_name
                            ),
                            None => "the skill has no readable name (run `skillc check` on it)".to_owned(),
                        },
                        name: None,
                    },
                    Vec::new(),
                ),
                Some(_) => translate_one(sc, &ctx, vocab),
            };
            Plan {
                subcommand: sc.clone(),
                outcome,
                steps,
                proposal: None,
            }
        })
        .collect();
    resolve_collisions(&mut plans, vocab);
    apply_review(&mut plans, reviewed, &ctx, vocab);
    for p in &mut plans {
        let proposable =
            matches!(&p.outcome, Outcome::Rejected { rule, .. } if !matches!(rule.code, "TR004" | "TR008"));
        if let Outcome::Rejected {
            rule, name: Some(name), ..
        } = &p.outcome
            && rule.code == "TR012"
        {
            p.proposal = Some(propose::of_weak_name(name, &p.steps));
        } else if proposable {
            p.proposal = propose::propose(&p.subcommand, &ctx, vocab);
        }
    }
    // A proposal that another plan of the skill already has, or proposes too, says so.
    let taken: Vec<(usize, String)> = plans
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.name().or(p.proposal.as_ref().map(|x| &x.name)).map(|n| (i, n.full())))
        .collect();
    for (i, p) in plans.iter_mut().enumerate() {
        if let Some(pr) = &mut p.proposal {
            let full = pr.name.full();
            let others: Vec<String> = taken
                .iter()
                .filter(|(k, n)| *k != i && *n == full)
                .map(|(k, _)| subcommand_label(subcommands, *k))
                .collect();
            if !others.is_empty() {
                pr.evidence.push(format!(
                    "the same name as {}: tell them apart (a qualifier) before accepting",
                    others.join(", ")
                ));
            }
        }
    }
    Translation {
        provider: ctx.provider.clone(),
        object: ctx.object.clone(),
        plans,
    }
}

fn subcommand_label(subcommands: &[SubCommand], i: usize) -> String {
    subcommands
        .get(i)
        .map(|s| format!("`{}`", s.display()))
        .unwrap_or_default()
}

/// Names one sub-command: a contextual rule, else its words read in its domain, else (no
/// words) the words of what the skill says about it.
pub fn translate_one(sc: &SubCommand, ctx: &Context, vocab: &Vocabulary) -> (Outcome, Vec<Step>) {
    let mut steps = Vec::new();
    // A command without words or with a mode flag only takes words from prose, unless the flag
    // names its own operation (`--check-deps`, `--list-options`): the prose about the script
    // describes the script's main operation.
    let from_prose = mode_only(sc) && !name::tokens(&sc.words, vocab).iter().any(|t| vocab.action(t).is_some());
    let words: Vec<String> = if from_prose {
        match prose::words_for(sc, vocab) {
            Some((w, step)) => {
                steps.push(step);
                let mut all: Vec<String> = sc.words.clone();
                all.extend(w);
                all
            }
            None => sc.words.clone(),
        }
    } else {
        sc.words.clone()
    };
    let toks = name::tokens(&words, vocab);
    let own: Vec<String> = ctx.own_words.clone();
    if let Some(rule) = vocab.rule_for(&toks, &own) {
        return by_rule(rule, &toks, ctx, vocab);
    }
    // The command's domain: a domain word among its words, else the skill's.
    let domain = toks
        .iter()
        .find_map(|t| vocab.domain(t).map(|d| d.name().to_owned()))
        .or_else(|| ctx.domains.first().cloned());
    let read = name::read_tokens(&toks, domain.as_deref(), vocab);
    let (outcome, more) = name::name_tokens(sc, &read, ctx, vocab, sc.free_text);
    steps.extend(more);
    (outcome, steps)
}

/// A sub-command without words, or whose only words are a mode flag (`--check`): named from
/// prose too.
fn mode_only(sc: &SubCommand) -> bool {
    sc.words.iter().all(|w| w.starts_with("--"))
}

/// Applies a contextual rule; the other words must be qualifiers, objects (context) or
/// actions the rule overrides.
fn by_rule(rule: &vocab::ContextRule, toks: &[String], ctx: &Context, vocab: &Vocabulary) -> (Outcome, Vec<Step>) {
    let mut steps = vec![Step {
        word: match &rule.domain {
            Some(d) => format!("{d} + {}", rule.action),
            None => rule.action.clone(),
        },
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
    }];
    let mut qualifiers = rule.then_qualifiers.clone();
    for t in toks
        .iter()
        .filter(|t| Some(*t) != rule.domain.as_ref() && **t != rule.action)
    {
        if let Some(q) = vocab
            .qualifier(t)
            .filter(|q| vocab.qualifies(q.name(), &rule.then_object))
        {
            if !qualifiers.iter().any(|x| x == q.name()) {
                qualifiers.push(q.name().to_owned());
            }
            steps.push(Step {
                word: t.clone(),
                meaning: name::describe("qualifier", t, q),
            });
        } else if vocab.object(t).is_some() || vocab.domain(t).is_some() || ctx.own_words.contains(t) {
            steps.push(Step {
                word: t.clone(),
                meaning: "context only".into(),
            });
        } else if let Some(a) = vocab.action(t) {
            steps.push(Step {
                word: t.clone(),
                meaning: format!("{} — overridden by the rule", name::describe("action", t, a)),
            });
        } else {
            return name::reject(
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
        provider: ctx.provider.clone().unwrap_or_default(),
    };
    (Outcome::Translated(name), steps)
}

/// Applies the project's reviewed entries: an accepted name replaces the translation (checked
/// against the vocabulary, `TR009`), a pending proposal rejects with its name (`TR007`), a
/// rejected one rejects (`TR008`). Accepted names are then checked for collisions.
fn apply_review(plans: &mut [Plan], reviewed: &SkillReview, ctx: &Context, vocab: &Vocabulary) {
    for p in plans.iter_mut() {
        let display = p.subcommand.display();
        let Some(e) = reviewed.entries.iter().find(|e| e.subcommand == display) else {
            continue;
        };
        let place = format!("{}:{}", reviewed.path, e.line);
        p.outcome = match e.status {
            Status::Proposed => Outcome::Rejected {
                rule: &rules::TR007,
                reason: format!(
                    "`{}` is proposed in {place} and waits for review (set its status to \"accepted\" or \"rejected\")",
                    e.name
                ),
                name: None,
            },
            Status::Rejected => Outcome::Rejected {
                rule: &rules::TR008,
                reason: format!("the name `{}` was rejected in {place}", e.name),
                name: None,
            },
            Status::Accepted => match parse_name(&e.name, ctx, vocab) {
                Ok(n) => {
                    p.steps.push(Step {
                        word: String::new(),
                        meaning: format!("accepted in {place}"),
                    });
                    Outcome::Translated(n)
                }
                Err(why) => Outcome::Rejected {
                    rule: &rules::TR009,
                    reason: format!("the accepted name `{}` in {place} {why}", e.name),
                    name: None,
                },
            },
        };
    }
    for idx in collisions(plans) {
        for &i in &idx {
            let n = plans[i].name().cloned();
            plans[i].outcome = Outcome::Rejected {
                rule: &rules::TR003,
                reason: format!(
                    "`{}` is also the name of another sub-command of this skill",
                    n.as_ref().map(ExecutorName::full).unwrap_or_default()
                ),
                name: n,
            };
        }
    }
}

/// Reads a full name back into its parts: the provider word last, then action, object and
/// qualifiers of the vocabulary. Never outside the vocabulary.
pub fn parse_name(full: &str, ctx: &Context, vocab: &Vocabulary) -> Result<ExecutorName, String> {
    let provider = ctx.provider.as_deref().unwrap_or_default();
    let head = full
        .strip_suffix(provider)
        .and_then(|h| h.strip_suffix('_'))
        .filter(|_| !provider.is_empty())
        .ok_or_else(|| format!("does not end with the skill's provider word `_{provider}`"))?;
    let parts: Vec<&str> = head.split('_').collect();
    let [action, object, qualifiers @ ..] = parts.as_slice() else {
        return Err("has no action and object before the provider word".into());
    };
    if !vocab.actions.contains_key(*action) {
        return Err(format!("names `{action}`, not an action of the vocabulary"));
    }
    if !vocab.objects.contains_key(*object) {
        return Err(format!("names `{object}`, not an object of the vocabulary"));
    }
    for q in qualifiers {
        if !vocab.qualifies(q, object) {
            return Err(format!("names `{q}`, not a qualifier of `{object}` in the vocabulary"));
        }
    }
    Ok(ExecutorName {
        action: (*action).to_owned(),
        object: (*object).to_owned(),
        qualifiers: qualifiers.iter().map(|q| (*q).to_owned()).collect(),
        provider: provider.to_owned(),
    })
}

/// Plans of one skill with one name: a word that only one of them has and that means a
/// qualifier of the object tells them apart; a plan whose object the words named keeps the
/// name over one whose object was a default; the rest are rejected (`TR003`).
fn resolve_collisions(plans: &mut [Plan], vocab: &Vocabulary) {
    // A read that only became a list for want of an item to identify is a read again when
    // a listing of the same name exists (`files get --max 10` beside `files list`).
    for idx in collisions(plans) {
        for &i in &idx {
            let turned = plans[i]
                .steps
                .iter()
                .position(|s| s.word.is_empty() && s.meaning.starts_with("read with no item"));
            if let (Some(at), Outcome::Translated(n)) = (turned, &mut plans[i].outcome) {
                n.action = "read".into();
                plans[i].steps.remove(at);
            }
        }
    }
    // A word of the command itself tells plans apart before its description does: the plain
    // command keeps the plain name (`post` beside `reply`, not `send_posts_quick`), so
    // the first pass reads the words only, and a plan no longer colliding is left alone.
    for pass in 0..3 {
        let groups = collisions(plans);
        if groups.is_empty() {
            return;
        }
        for idx in groups {
            for &i in &idx {
                let Some(n) = plans[i].name().cloned() else { continue };
                let still = idx
                    .iter()
                    .any(|&k| k != i && plans[k].name().is_some_and(|m| m.full() == n.full()));
                if !still {
                    continue;
                }
                if let Some(q) = distinguishing_qualifier(&plans[i], &n, vocab, pass > 0)
                    && !idx
                        .iter()
                        .any(|&k| k != i && plans[k].name().is_some_and(|m| m.qualifiers.contains(&q)))
                {
                    let mut n = n;
                    n.qualifiers.push(q.clone());
                    plans[i].steps.push(Step {
                        word: q.clone(),
                        meaning: format!("qualifier `{q}` tells it apart from a command of the same name"),
                    });
                    plans[i].outcome = Outcome::Translated(n);
                }
            }
        }
    }
    for idx in collisions(plans) {
        // An object a word named, not one a default supplied.
        let named_object = |p: &Plan| {
            !p.steps.iter().any(|s| {
                s.word.is_empty() && (s.meaning.starts_with("the skill's object") || s.meaning.starts_with("object `"))
            })
        };
        let explicit: Vec<usize> = idx.iter().copied().filter(|&i| named_object(&plans[i])).collect();
        let keep = (explicit.len() == 1).then(|| explicit[0]);
        let label = |p: &Plan| format!("`{}` ({})", p.subcommand.display(), p.subcommand.program.describe());
        let labels: Vec<(usize, String)> = idx.iter().map(|&i| (i, label(&plans[i]))).collect();
        for &i in &idx {
            if Some(i) == keep {
                continue;
            }
            let n = plans[i].name().cloned();
            let others: Vec<&str> = labels
                .iter()
                .filter(|(k, _)| *k != i)
                .map(|(_, s)| s.as_str())
                .collect();
            plans[i].outcome = Outcome::Rejected {
                rule: &rules::TR003,
                reason: format!(
                    "`{}` is also the name of {} in this skill, and no word tells them apart",
                    n.as_ref().map(ExecutorName::full).unwrap_or_default(),
                    others.join(", ")
                ),
                name: n,
            };
        }
    }
}

/// Groups of plan indices that share a translated name.
fn collisions(plans: &[Plan]) -> Vec<Vec<usize>> {
    let mut by_name: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, p) in plans.iter().enumerate() {
        if let Some(n) = p.name() {
            by_name.entry(n.full()).or_default().push(i);
        }
    }
    by_name.into_values().filter(|v| v.len() > 1).collect()
}

/// A qualifier from a word of the plan not already used in its name: its words and mode, its
/// program's file stem, then (`described`) its description.
fn distinguishing_qualifier(p: &Plan, n: &ExecutorName, vocab: &Vocabulary, described: bool) -> Option<String> {
    let sc = &p.subcommand;
    use crate::vocab::QualifierClass::{Format, Kind, Scope, Source, Time};
    let fits = |w: &str, any_class: bool| {
        let q = vocab.qualifier(w)?;
        let def = vocab.qualifiers.get(q.name())?;
        let class_ok = any_class || matches!(def.class, Some(Kind | Format | Scope | Time | Source));
        let q = q.name();
        // The word that named the object says nothing more as a qualifier (`pdf` of `pdfs`).
        let names_object = vocab.object(w).is_some_and(|o| o.name() == n.object);
        (class_ok
            && !names_object
            && def.qualifies(&n.object)
            && !n.qualifiers.iter().any(|x| x == q)
            && q != n.object
            && q != n.action)
            .then(|| q.to_owned())
    };
    let mut words = name::tokens(&sc.words, vocab);
    words.extend(prose::stem_words(&sc.program));
    // The description only with the classes that tell variants apart ("natural language" →
    // quick, "as PDF" → pdf).
    words.iter().find_map(|w| fits(w, true)).or_else(|| {
        if !described {
            return None;
        }
        sc.description
            .as_deref()
            .map(context::words)
            .unwrap_or_default()
            .iter()
            .find_map(|w| fits(w, false))
    })
}

#[cfg(test)]
mod tests;

//! What naming does when a command's words leave its action open or its evidence weak: a
//! bare object is read or listed, free text is sent or created, a property is set; the file
//! name's object; the weak-evidence gate (`TR012`). Split from [`super`] (one job per file).

use super::*;

/// Whether a command without an action word has only guesses: its object only from a noun of
/// a script's name — the script's topic (`stocks_client.py`, `domain_intel.py`), whose
/// commands act on many kinds of things, unlike a service word (`gcal_pro.py` → events) — and
/// no qualifier that filters a listing (a time, state, scope or property qualifier such as
/// `unread`, `week`, `inbox` makes listing the plain reading; `crypto`, `bulk` name a variant
/// of an operation no word names). An object the command's description named instead is not
/// the file name's ([`Naming::check_described`] clears `object_from_stem`).
pub(super) fn topic_guess(sc: &SubCommand, n: &Naming<'_, '_>, object: &str) -> bool {
    use crate::vocab::QualifierClass::{Property, Scope, State, Time};
    let vocab = n.vocab;
    let topic = crate::translate::prose::stem_words(&sc.program)
        .iter()
        .any(|w| vocab.object_word(w).is_some_and(|o| o.name() == object));
    let filters = n.qualifiers.iter().any(|q| {
        vocab
            .qualifiers
            .get(q)
            .is_some_and(|d| matches!(d.class, Some(Time | State | Scope | Property)))
    });
    n.object_from_stem && topic && !filters && !n.prose
}

/// A lone property word with an item and a value sets that property (`status <id> <state>`,
/// `priority <id> <level>`): the outcome, or `None` when the command is not of that shape.
pub(super) fn set_property(
    sc: &SubCommand,
    n: &mut Naming<'_, '_>,
    ctx: &Context,
    provider: &str,
) -> Option<(Outcome, Vec<Step>)> {
    let positionals = sc.args.iter().filter(|a| a.position.is_some() && a.required).count();
    let [t] = n.toks else { return None };
    let q = t
        .qualifier
        .filter(|q| is_property(q.name(), n.vocab) && positionals >= 2)?;
    n.add_qualifier(q.name(), &t.word, q);
    n.push("", "a property with an item and a value: `set`".into());
    n.action_at = None;
    n.default_object(ctx);
    let steps = std::mem::take(&mut n.steps);
    let Some((object, _)) = n.object.clone() else {
        return Some(reject(
            &rules::TR002,
            format!("nothing names the object of `{}`", sc.display()),
            steps,
        ));
    };
    let name = ExecutorName {
        action: "set".into(),
        object,
        qualifiers: std::mem::take(&mut n.qualifiers),
        provider: provider.to_owned(),
    };
    Some((Outcome::Translated(name), steps))
}

/// A name whose evidence is weak is not signed: the plan is rejected with `TR012` and the name
/// becomes its proposal, for a reviewer to accept (docs/authoring.md, "The review loop"). A
/// wrong signed name is worse than a proposal. Weak: a command without words whose action is
/// read from prose and whose object only the program's file name names; a command without an
/// action word whose object only a noun of a script's name names, with no qualifier that
/// filters a listing ([`topic_guess`]). (Measured on the truth set, BENCHMARKS.md: the
/// derivations whose names a reviewer most often does not accept; broader gates — any action
/// read from the text around a command, `read` turned into `list`, any default action with
/// the file name's object — cut more wrong names but took corpus coverage below 70 %.)
pub(in crate::translate) fn weak(name: ExecutorName, why: &str, steps: Vec<Step>) -> (Outcome, Vec<Step>) {
    (
        Outcome::Rejected {
            rule: &rules::TR012,
            reason: format!("`{}` rests on weak evidence ({why}): review it", name.full()),
            name: Some(name),
        },
        steps,
    )
}

/// The object a program's file name names, itself or through a service word (`outlook-mail.sh`
/// → messages, `outlook-calendar.sh` → events): the context of its sub-commands.
pub(super) fn stem_object(sc: &SubCommand, vocab: &Vocabulary) -> Option<(String, String)> {
    // A binary's name is its brand (`clawhub`, `remindctl`): a brand word sets the domain, it
    // does not force an object (issue 12); a script's file name says what it is about.
    if !matches!(sc.program, crate::extract::Program::Script { .. }) {
        return None;
    }
    let file = sc.program.describe();
    // Words every kind of program is named with say nothing of its object.
    const PLAIN: &[&str] = &[
        "client", "tool", "tools", "api", "apis", "cli", "main", "server", "service", "helper", "manager", "handler",
        "script", "scripts", "app", "wrapper", "utils", "util", "core", "lib", "run", "runner", "bot", "agent",
        "command", "commands", "data", "file", "files", "index", "skill",
    ];
    crate::translate::prose::stem_words(&sc.program)
        .iter()
        .rev()
        .filter(|w| !PLAIN.contains(&w.as_str()))
        .find_map(|w| {
            let o = vocab.object_word(w).map(|o| o.name().to_owned()).or_else(|| {
                let d = vocab.domain(w)?;
                vocab.domains.get(d.name())?.object.clone()
            })?;
            Some((
                o.clone(),
                format!("object `{o}` from the program's name `{file}` (`{w}`)"),
            ))
        })
}

pub(super) fn in_domain(t: &Tok<'_>) -> String {
    t.in_domain.map(|d| format!(" in domain `{d}`")).unwrap_or_default()
}

/// Whether `word` is the plural form of an object whose singular the vocabulary spells
/// (`labels`, `backups`; not `status`).
pub(super) fn is_plural_form(word: &str, vocab: &Vocabulary) -> bool {
    let Some(o) = vocab.object(word) else { return false };
    let singular = word
        .strip_suffix("ies")
        .map(|s| format!("{s}y"))
        .or_else(|| word.strip_suffix('s').map(str::to_owned));
    singular.is_some_and(|s| vocab.object_word(&s).is_some_and(|m| m.name() == o.name()))
}

/// Whether `word`, a word meaning `object`, is written in the plural: a plural form of a
/// singular the vocabulary spells (`labels`), or the object's own name ending in `s` (`lists`).
pub(in crate::translate) fn written_plural(word: &str, object: &str, vocab: &Vocabulary) -> bool {
    is_plural_form(word, vocab) || word == object && word.ends_with('s')
}

/// Reading without anything to identify an item lists (`openhue get light` shows the lights).
pub(super) fn read_or_list(action: &str, sc: &SubCommand, steps: &mut Vec<Step>) -> String {
    let tool = matches!(sc.program, crate::extract::Program::Tool { .. });
    // A flag that names one item by its id identifies it as well as a positional does
    // (`open-note --id <id>`).
    let id_flag = |a: &Arg| {
        a.flag.is_some() && {
            let n = a.name.to_ascii_lowercase();
            matches!(n.as_str(), "id" | "uuid" | "guid") || n.ends_with("_id") || n.ends_with("-id")
        }
    };
    if action == "read" && !tool && !sc.words.is_empty() && !sc.args.iter().any(|a| a.position.is_some() || id_flag(a))
    {
        steps.push(step("", "read with no item to identify: `list`".into()));
        return "list".to_owned();
    }
    action.to_owned()
}

/// The action of a sub-command whose words name none: free text is sent or created; a
/// property with an item and a value is set (`status <id> <state>`); a bare object is read when
/// an argument identifies one item, listed otherwise ("no blind defaults": a bare noun reads
/// only when the arguments say so).
pub(super) fn no_action(sc: &SubCommand, object: &str, n: &mut Naming<'_, '_>, quoted_prose: bool) -> Option<String> {
    let vocab = n.vocab;
    let has = |a: &str| vocab.actions.contains_key(a);
    let free = sc.args.iter().any(|a| {
        let name = a.name.as_str();
        FREE_TEXT.iter().any(|f| name == *f || name.ends_with(&format!("_{f}")))
    }) || quoted_prose;
    let (action, why) = if free && CONTENT.contains(&object) {
        let send = matches!(
            object,
            "messages" | "posts" | "replies" | "notifications" | "conversations"
        );
        let a = if send { "send" } else { "create" };
        (a, format!("no action word, free text given: `{a}`"))
    } else if singular_read(sc, n, object, vocab) {
        (
            "read",
            "no action word, a singular object with an argument: `read`".to_owned(),
        )
    } else {
        (
            "list",
            "no action word, a plural object or nothing to identify one: `list`".to_owned(),
        )
    };
    has(action).then(|| {
        n.push("", why);
        action.to_owned()
    })
}

/// A bare object reads one item when it is written in the singular and an argument can name
/// the item (`thread <id>`, `ssl <domain>`); plural nouns list (`mentions`, `tags`).
pub(super) fn singular_read(sc: &SubCommand, n: &Naming<'_, '_>, object: &str, vocab: &Vocabulary) -> bool {
    let word = n
        .toks
        .iter()
        .rev()
        .find(|t| t.object.is_some_and(|o| o.name() == object))
        .map(|t| t.word.as_str());
    let singular = word.is_some_and(|w| !written_plural(w, object, vocab));
    singular
        && sc
            .args
            .iter()
            .any(|a| identifies(a, object, vocab) || (a.position.is_some() && a.ty == ParamType::String))
}

pub(super) fn is_property(q: &str, vocab: &Vocabulary) -> bool {
    vocab
        .qualifiers
        .get(q)
        .is_some_and(|q| q.class == Some(crate::vocab::QualifierClass::Property))
}

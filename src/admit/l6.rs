//! L6 semantic: the sub-command's own wording (its description and the section heading it
//! was found under) must not contradict the action class of its name (`AD007`), and a
//! configured external verifier must accept it (`AD008`, fail closed; the request is
//! `skillc.verifier/1`, docs/json.md).

use rayon::prelude::*;

use super::{Candidate, Judging, Key, Options, Runner, SkillPlans};
use crate::diag::Rule;
use crate::extract::Program;
use crate::messages::verifier;
use crate::model::Level;
use crate::route;
use crate::rules;
use crate::vocab::{self, ActionClass, Vocabulary};

/// Rejects the plans whose wording contradicts their name, then those the external verifier
/// refuses.
pub(super) fn judge(run: &mut Judging<'_, '_>, vocab: &Vocabulary, opts: &Options<'_>) {
    let keys = run.alive();
    let skills = run.skills;
    let verdicts: Vec<(Key, Option<(&'static Rule, String)>)> = keys
        .par_iter()
        .map(|&k| {
            let Some(c) = skills[k.0].plans[k.1].as_ref() else {
                return (k, None);
            };
            if let Err(reason) = check_l6_builtin(c, vocab) {
                return (k, Some((&rules::AD007, reason)));
            }
            if opts.settings.has_verifier()
                && let Err(reason) = check_l6_external(&skills[k.0], c, &opts.settings.verifier, opts.runner)
            {
                return (k, Some((&rules::AD008, reason)));
            }
            (k, None)
        })
        .collect();
    for (k, v) in verdicts {
        if let Some((rule, reason)) = v {
            run.reject(k, Level::L6, rule, reason);
        }
    }
}

/// The wording L6 reads: the sub-command's description and the heading it was found under.
fn wording(c: &Candidate<'_>) -> Vec<(&'static str, String)> {
    let sc = &c.plan.subcommand;
    let mut v = Vec::new();
    if let Some(d) = &sc.description {
        v.push(("description", d.clone()));
    }
    if !sc.source_section.is_empty() && sc.source_section != "metadata.gaia.tools" {
        v.push(("section", sc.source_section.clone()));
    }
    v
}

/// The action a word means, as a verb: the word, its plural stem, or the word without a
/// third-person `s` (`gets`, `lists`, `removes`).
fn action_of<'v>(word: &str, vocab: &'v Vocabulary) -> Option<&'v vocab::Action> {
    let m = vocab
        .action(word)
        .or_else(|| vocab.action(&route::stem(word)))
        .or_else(|| word.strip_suffix('s').and_then(|w| vocab.action(w)))?;
    vocab.actions.get(m.name())
}

/// Whether wording of class `said` contradicts a name of class `own`: the name understates
/// what the command does (a `safe` name for a command that changes or removes things, a
/// `producer` name for one that removes things), or a `destructive` name for a command
/// described as only reading. A `producer` described as reading ("run … Get the result") is
/// not a contradiction: producers often answer with data.
pub fn contradicts(own: ActionClass, said: ActionClass) -> bool {
    use ActionClass::{Destructive, Producer, Safe};
    matches!(
        (own, said),
        (Safe, Producer | Destructive) | (Producer, Destructive) | (Destructive, Safe)
    )
}

/// The built-in L6 verifier: the sub-command's own wording must not contradict the class of
/// its action. It rejects only a clear contradiction ([`contradicts`]): the description's
/// leading verb (its first word: "List every file…", "Removes…") means an action of a
/// contradicting class, and no word of the description or of the section heading means the
/// executor's action or one of its class, e.g. a `delete` described as "List every file in
/// the folder", or a `read` described as "Create a note". A description that
/// does not start with an action word (or no description) passes: headings group several
/// commands and nouns such as "share" or "status" are not verbs.
pub fn check_l6_builtin(c: &Candidate<'_>, vocab: &Vocabulary) -> Result<(), String> {
    let Some(own) = vocab.actions.get(&c.name.action) else {
        return Ok(());
    };
    let Some(description) = &c.plan.subcommand.description else {
        return Ok(());
    };
    let Some(lead) = route::words(description).into_iter().next() else {
        return Ok(());
    };
    let Some(said) = action_of(&lead, vocab) else {
        return Ok(());
    };
    // A leading word that is also an object ("Labels with…", "Tags…") is a noun.
    if vocab.object(&lead).is_some() || vocab.object(&route::stem(&lead)).is_some() {
        return Ok(());
    }
    if !contradicts(own.class, said.class) {
        return Ok(());
    }
    let agrees = wording(c).iter().any(|(_, text)| {
        route::words(text)
            .iter()
            .filter_map(|w| action_of(w, vocab))
            .any(|a| a.name == own.name || a.class == own.class)
    });
    if agrees {
        return Ok(());
    }
    Err(format!(
        "its description starts with \"{lead}\" ({}, {}) but the executor's action `{}` is {}, and nothing in its wording means {}",
        said.name,
        said.class.as_str(),
        own.name,
        own.class.as_str(),
        own.name,
    ))
}

/// The request the external verifier receives on standard input (`skillc.verifier/1`,
/// docs/json.md).
pub fn verifier_input<'a>(skill: &'a SkillPlans<'_>, c: &'a Candidate<'_>) -> verifier::Request<'a> {
    let sc = &c.plan.subcommand;
    let program_path = match &sc.program {
        Program::Script { path, .. } | Program::Tool { module: path, .. } => Some(path.as_str()),
        Program::Binary { .. } => None,
    };
    let program_text = program_path.and_then(|p| {
        skill
            .files
            .iter()
            .find(|f| f.path == p)
            .map(|f| String::from_utf8_lossy(&f.bytes).into_owned())
    });
    let e = c.executor;
    verifier::Request {
        schema: verifier::SCHEMA,
        executor: c.name.full(),
        skill: skill.skill,
        action: &c.name.action,
        object: &c.name.object,
        qualifiers: &c.name.qualifiers,
        subcommand: sc.display(),
        wording: verifier::Wording {
            description: sc.description.as_deref(),
            section: &sc.source_section,
        },
        manifest: e.map(|e| e.manifest.as_str()),
        contract: e.map(|e| &e.contract),
        wrapper: e.map(|e| e.wrapper.as_str()),
        program: verifier::Program {
            kind: match sc.program {
                Program::Script { .. } => "script",
                Program::Binary { .. } => "binary",
                Program::Tool { .. } => "tool",
            },
            path: program_path,
            name: sc.program.describe(),
            text: program_text,
        },
    }
}

/// The exact text the external verifier receives on standard input for `c` (keys sorted).
pub fn verifier_request(skill: &SkillPlans<'_>, c: &Candidate<'_>) -> String {
    crate::util::sorted_json_line(&verifier_input(skill, c))
}

/// The external L6 verifier: `accept`, or the rejection with its reason. Fail closed: a
/// verifier that cannot be run, crashes, times out or answers anything but
/// `{"verdict": "accept"}` / `{"verdict": "reject", "reason": "…"}` rejects.
pub fn check_l6_external(
    skill: &SkillPlans<'_>,
    c: &Candidate<'_>,
    command: &str,
    runner: &dyn Runner,
) -> Result<(), String> {
    let input = verifier_request(skill, c);
    let answer = runner
        .verify(command, &input)
        .map_err(|why| format!("the verifier `{command}` failed: {why}"))?;
    let v: serde_json::Value =
        serde_json::from_str(answer.trim()).map_err(|_| format!("the verifier `{command}` did not answer JSON"))?;
    match v.get("verdict").and_then(|x| x.as_str()) {
        Some("accept") => Ok(()),
        Some("reject") => Err(format!(
            "the verifier `{command}` rejected it: {}",
            v.get("reason").and_then(|x| x.as_str()).unwrap_or("no reason given")
        )),
        _ => Err(format!("the verifier `{command}` answered neither accept nor reject")),
    }
}

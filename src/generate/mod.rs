//! Generation: for each translated plan, the wrapper `<executor>.py`, the language state
//! `manifest.lang_state.json` and the `manifest.toml` (FORMATS.md, "manifest.toml").
//!
//! Everything is a pure function of the plan, the skill, the vocabulary and a [`Stamp`]
//! (admission verdict and time), so identical inputs give identical bytes. Labels and
//! descriptions come from the vocabulary's `en`/`it` labels: no model is needed.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::json;

use crate::extract::{Arg, Program};
use crate::model::{Level, LevelStatus};
use crate::skill::gaia::{Permission, SecurityTier};
use crate::skill::model::Credential;
use crate::translate::{ExecutorName, Plan};
use crate::util::{sha256, toml_str};
use crate::vocab::Vocabulary;

/// The version string recorded in provenance (`skillc 0.1.0`).
pub const IMPORTER: &str = concat!("skillc ", env!("CARGO_PKG_VERSION"));

/// Seconds a wrapper lets its command run before giving up.
pub const DEFAULT_TIMEOUT_SECONDS: u64 = 120;

const WRAPPER_TEMPLATE: &str = include_str!("wrapper.py");

/// What generation needs to know about the skill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillInfo {
    /// The skill name (catalog-safe).
    pub name: String,
    /// Where it came from, relative to the project (`skills/google-workspace`).
    pub imported_from: String,
    /// The skill version, `0.0.0` when absent.
    pub version: String,
    /// Hex SHA-256 of SKILL.md.
    pub skill_md_sha256: String,
    /// SHA-256 of every retained file, by path relative to the skill folder.
    pub file_hashes: BTreeMap<String, String>,
    /// Declared credentials.
    pub credentials: Vec<Credential>,
    /// GAIA permissions (empty for other skills).
    pub permissions: Vec<Permission>,
    /// GAIA security tier (`experimental` for every non-GAIA skill).
    pub tier: SecurityTier,
    /// The skill's frontmatter `description` (its first words become affinity terms).
    pub description: String,
}

/// How many words of the skill's description join each executor's affinity terms.
pub const SKILL_AFFINITY_WORDS: usize = 5;

/// Admission result and time of one executor, applied when the manifest is rendered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stamp {
    /// Status of each level: `pass`, `skipped` or `not-run`.
    pub levels: BTreeMap<Level, LevelStatus>,
    /// Levels skipped on request (`--skip`), recorded as weakened evidence.
    pub skipped: Vec<Level>,
    /// RFC 3339 UTC time of import.
    pub imported_at: String,
}

/// An executor ready to be written: its files and its manifest (without signature).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Executor {
    /// The canonical name.
    pub name: String,
    /// The skill name.
    pub skill: String,
    /// `<name>.py`.
    pub wrapper: String,
    /// `manifest.lang_state.json`.
    pub lang_state: String,
    /// `manifest.toml`.
    pub manifest: String,
    /// The English description (the manifest's `description`).
    pub description: String,
    /// English and Italian labels (`read events (Google Workspace)`).
    pub labels: Labels,
    /// The affinity terms of the language state (sorted, de-duplicated), used by L3 and the
    /// router.
    pub affinity: Vec<String>,
    /// The contract the wrapper embeds and prints with `--describe` (L5 compares the two).
    pub contract: serde_json::Value,
    /// Hex SHA-256 of the wrapper and of the language state, for `[integrity]`: computed at
    /// generation (read through [`Executor::digests`]); set otherwise only by the build cache,
    /// which keeps them beside the executor (`build::cache`).
    pub digests: Digests,
}

/// An executor's English and Italian labels (`read events (Google Workspace)`, `leggi eventi
/// (Google Workspace)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Labels {
    /// English.
    pub en: String,
    /// Italian.
    pub it: String,
}

/// Hex SHA-256 of an executor's wrapper and language state (what `[integrity]` records).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Digests {
    /// Of `<name>.py`.
    pub wrapper: String,
    /// Of `manifest.lang_state.json`.
    pub lang_state: String,
}

impl Executor {
    /// Renders the wrapper again: a build keeps only its hash in memory between generation
    /// and writing (wrappers are most of a catalog's bytes).
    pub fn render_wrapper(&self, plan: &Plan, name: &ExecutorName, skill: &SkillInfo) -> String {
        wrapper(&self.name, &self.description, &contract(plan, name, skill))
    }

    /// Hex SHA-256 of the wrapper and of the language state (what `[integrity]` records),
    /// computed once at generation.
    pub fn digests(&self) -> &Digests {
        &self.digests
    }

    /// Renders the manifest again with another stamp (the wrapper and language state do not
    /// depend on it, so they are neither rebuilt nor rehashed).
    pub fn restamp(&mut self, plan: &Plan, name: &ExecutorName, skill: &SkillInfo, stamp: &Stamp) {
        self.manifest = manifest(plan, name, skill, &self.description, stamp, &self.digests);
    }
}

fn key(k: &str) -> String {
    if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        k.to_owned()
    } else {
        toml_str(k)
    }
}

fn array(items: &[String]) -> String {
    let inner: Vec<String> = items.iter().map(|s| toml_str(s)).collect();
    format!("[{}]", inner.join(", "))
}

/// `google-workspace` → `Google Workspace`.
pub fn provider_title(skill: &str) -> String {
    skill
        .split('-')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// English and Italian labels of a name: `read events (Google Workspace)`.
pub fn labels(name: &ExecutorName, skill: &str, vocab: &Vocabulary) -> Labels {
    let action = vocab.actions.get(&name.action);
    let object = vocab.objects.get(&name.object);
    let quals: Vec<(&str, &str)> = name
        .qualifiers
        .iter()
        .filter_map(|q| vocab.qualifiers.get(q))
        .map(|q| (q.en.as_str(), q.it.as_str()))
        .collect();
    let title = provider_title(skill);
    let mut en = format!(
        "{} {}",
        action.map_or(name.action.as_str(), |a| &a.en),
        object.map_or(name.object.as_str(), |o| &o.en)
    );
    let mut it = format!(
        "{} {}",
        action.map_or(name.action.as_str(), |a| &a.it),
        object.map_or(name.object.as_str(), |o| &o.it)
    );
    for (qe, qi) in quals {
        en.push(' ');
        en.push_str(qe);
        it.push(' ');
        it.push_str(qi);
    }
    Labels {
        en: format!("{en} ({title})"),
        it: format!("{it} ({title})"),
    }
}

fn sentence(s: &str) -> String {
    let mut c = s.chars();
    let mut out = c
        .next()
        .map(|f| f.to_uppercase().chain(c).collect::<String>())
        .unwrap_or_default();
    if !out.ends_with(['.', '!', '?']) {
        out.push('.');
    }
    out
}

/// The contract a wrapper enforces and `--describe` prints; the manifest states the same.
pub fn contract(plan: &Plan, name: &ExecutorName, skill: &SkillInfo) -> serde_json::Value {
    let sc = &plan.subcommand;
    let args: Vec<serde_json::Value> = sc
        .args
        .iter()
        .map(|a| {
            json!({"default": a.default, "flag": a.flag, "name": a.name, "position": a.position,
                   "required": a.required, "type": a.ty.as_str()})
        })
        .collect();
    let (kind, program, interpreter, function) = command_parts(&sc.program);
    let argv: Vec<&String> = if matches!(sc.program, Program::Tool { .. }) {
        Vec::new()
    } else {
        sc.words.iter().collect()
    };
    let credentials: Vec<serde_json::Value> = skill
        .credentials
        .iter()
        .map(|c| json!({"binding": c.binding, "dialog": dialog(c), "kind": c.kind.as_str()}))
        .collect();
    json!({
        "args": args,
        "command": {"argv": argv, "function": function, "interpreter": interpreter, "kind": kind, "program": program},
        "credentials": credentials,
        "name": name.full(),
        "skill": skill.name,
        "timeout_seconds": DEFAULT_TIMEOUT_SECONDS,
    })
}

fn command_parts(p: &Program) -> (&'static str, String, String, Option<String>) {
    match p {
        Program::Script { path, interpreter } => ("script", path.clone(), interpreter.clone(), None),
        Program::Binary { name } => ("binary", name.clone(), String::new(), None),
        Program::Tool { module, function } => ("tool", module.clone(), "python3".into(), Some(function.clone())),
    }
}

fn dialog(c: &Credential) -> serde_json::Value {
    let title = c.prompt.clone().unwrap_or_else(|| format!("Provide {}", c.binding));
    json!({"fields": [c.binding], "title": title})
}

/// Builds the wrapper source: the template with the contract embedded.
fn wrapper(name: &str, description: &str, contract: &serde_json::Value) -> String {
    let pretty = serde_json::to_string_pretty(contract).unwrap_or_else(|_| "{}".into());
    let mut literal = String::from("(\n");
    for line in pretty.lines() {
        let escaped = line.replace('\\', "\\\\").replace('"', "\\\"");
        let _ = writeln!(literal, "    \"{escaped}\\n\"");
    }
    literal.push(')');
    // The docstring is Python source: no control characters, no closing quotes, no escapes.
    let first_line: String = description
        .lines()
        .next()
        .unwrap_or_default()
        .chars()
        .filter(|c| !c.is_control())
        .collect::<String>()
        .replace("\"\"\"", "'''")
        .replace('\\', "\\\\");
    WRAPPER_TEMPLATE
        .replace("@@NAME@@", name)
        .replace("@@DESCRIPTION@@", &first_line)
        .replace("@@IMPORTER@@", IMPORTER)
        .replace("@@CONTRACT@@", &literal)
}

/// The English description: from the source when present, else built from the labels.
fn description(plan: &Plan, en_label: &str) -> String {
    let sc = &plan.subcommand;
    // A source description of one or two words ("Send") says less than the label does.
    match &sc.description {
        Some(d) if d.split_whitespace().count() >= 3 => sentence(d.trim()),
        _ => sentence(&format!("{en_label}: `{}`", sc.display())),
    }
}

/// Generates one executor from a translated plan.
pub fn executor(plan: &Plan, name: &ExecutorName, skill: &SkillInfo, vocab: &Vocabulary, stamp: &Stamp) -> Executor {
    let full = name.full();
    let Labels {
        en: en_label,
        it: it_label,
    } = labels(name, &skill.name, vocab);
    let en_description = description(plan, &en_label);
    let it_description = sentence(&format!("{it_label}: `{}`", plan.subcommand.display()));
    // Affinity terms (L3, the router): the routing tokens of the name's words, the
    // sub-command's words, both labels, and the first words of the skill's description, which
    // set executors of different providers apart. The sub-command's own description is left
    // out: sources often give one description to several sub-commands.
    let mut affinity: Vec<String> = Vec::new();
    let mut add = |s: &str| affinity.extend(crate::route::tokens(s));
    add(&name.action);
    add(&name.object);
    name.qualifiers.iter().for_each(|q| add(q));
    add(&name.provider.replace('_', " "));
    plan.subcommand.words.iter().for_each(|w| add(w));
    add(&en_label);
    add(&it_label);
    let mut skill_words: Vec<String> = Vec::new();
    for t in crate::route::tokens(&skill.description) {
        if skill_words.len() == SKILL_AFFINITY_WORDS {
            break;
        }
        // Vocabulary words (actions, objects, qualifiers) say what executors do, not who
        // provides them: a skill describing "applications, databases, servers" would
        // otherwise give each of its executors the objects of the others.
        let meaning = |w: &str| vocab.action(w).is_some() || vocab.object(w).is_some() || vocab.qualifier(w).is_some();
        if !skill_words.contains(&t) && !meaning(&t) && !meaning(&format!("{t}s")) {
            skill_words.push(t);
        }
    }
    affinity.extend(skill_words);
    affinity.sort();
    affinity.dedup();
    let lang_state = json!({
        "affinity": &affinity,
        "en": {"description": &en_description, "label": &en_label},
        "it": {"description": it_description, "label": &it_label},
    });
    let lang_state = format!("{}\n", serde_json::to_string_pretty(&lang_state).unwrap_or_default());
    let contract = contract(plan, name, skill);
    let wrapper = wrapper(&full, &en_description, &contract);
    let digests = Digests {
        wrapper: sha256(wrapper.as_bytes()),
        lang_state: sha256(lang_state.as_bytes()),
    };
    let manifest = manifest(plan, name, skill, &en_description, stamp, &digests);
    Executor {
        name: full,
        skill: skill.name.clone(),
        wrapper,
        lang_state,
        manifest,
        description: en_description,
        labels: Labels {
            en: en_label,
            it: it_label,
        },
        affinity,
        contract,
        digests,
    }
}

fn manifest(
    plan: &Plan,
    name: &ExecutorName,
    skill: &SkillInfo,
    description: &str,
    stamp: &Stamp,
    digests: &Digests,
) -> String {
    let sc = &plan.subcommand;
    let mut m = String::new();
    let w = &mut m;
    let _ = writeln!(w, "manifest_format = \"1\"");
    let _ = writeln!(w, "name = {}", toml_str(&name.full()));
    let _ = writeln!(w, "action = {}", toml_str(&name.action));
    let _ = writeln!(w, "object = {}", toml_str(&name.object));
    let _ = writeln!(w, "qualifiers = {}", array(&name.qualifiers));
    let _ = writeln!(w, "provider = {}", toml_str(&name.provider));
    let _ = writeln!(w, "description = {}", toml_str(description));
    let _ = writeln!(w, "skill = {}", toml_str(&skill.name));
    let _ = writeln!(w, "version = {}", toml_str(&skill.version));
    let (kind, program, interpreter, function) = command_parts(&sc.program);
    let _ = writeln!(w, "\n[command]");
    let _ = writeln!(w, "kind = {}", toml_str(kind));
    let _ = writeln!(w, "program = {}", toml_str(&program));
    let _ = writeln!(w, "interpreter = {}", toml_str(&interpreter));
    let argv: Vec<String> = if function.is_some() {
        Vec::new()
    } else {
        sc.words.clone()
    };
    let _ = writeln!(w, "argv = {}", array(&argv));
    if let Some(f) = &function {
        let _ = writeln!(w, "function = {}", toml_str(f));
    }
    let _ = writeln!(w, "timeout_seconds = {DEFAULT_TIMEOUT_SECONDS}");
    for a in &sc.args {
        write_arg(w, a);
    }
    let _ = writeln!(w, "\n[capabilities]");
    let perms: Vec<String> = skill.permissions.iter().map(ToString::to_string).collect();
    let _ = writeln!(w, "permissions = {}", array(&perms));
    let _ = writeln!(w, "security_tier = {}", toml_str(skill.tier.as_str()));
    for c in &skill.credentials {
        let _ = writeln!(w, "\n[[credentials]]");
        let _ = writeln!(w, "binding = {}", toml_str(&c.binding));
        let _ = writeln!(w, "kind = {}", toml_str(c.kind.as_str()));
        let title = c.prompt.clone().unwrap_or_else(|| format!("Provide {}", c.binding));
        let _ = writeln!(
            w,
            "dialog = {{ title = {}, fields = {} }}",
            toml_str(&title),
            array(std::slice::from_ref(&c.binding))
        );
    }
    let _ = writeln!(w, "\n[admission]");
    let levels: Vec<String> = stamp
        .levels
        .iter()
        .map(|(l, s)| format!("{} = {}", l.as_str(), toml_str(s.as_str())))
        .collect();
    let _ = writeln!(w, "levels = {{ {} }}", levels.join(", "));
    let skipped: Vec<String> = stamp.skipped.iter().map(|l| l.as_str().to_owned()).collect();
    let _ = writeln!(w, "skipped = {}", array(&skipped));
    let _ = writeln!(w, "\n[integrity]");
    let mut integrity: BTreeMap<String, String> = BTreeMap::new();
    integrity.insert("wrapper".into(), format!("sha256:{}", digests.wrapper));
    integrity.insert("lang_state".into(), format!("sha256:{}", digests.lang_state));
    for rel in executor_sources(plan) {
        if let Some(h) = skill.file_hashes.get(&rel) {
            integrity.insert(format!("skills/{}/{rel}", skill.name), format!("sha256:{h}"));
        }
    }
    for (k, v) in &integrity {
        let _ = writeln!(w, "{} = {}", key(k), toml_str(v));
    }
    let _ = writeln!(w, "\n[provenance]");
    let _ = writeln!(w, "synthesized = true");
    let _ = writeln!(w, "imported_from = {}", toml_str(&skill.imported_from));
    let _ = writeln!(w, "source_version = {}", toml_str(&skill.version));
    let _ = writeln!(w, "source_section = {}", toml_str(&sc.source_section));
    let _ = writeln!(w, "source_subcommand = {}", toml_str(&sc.display()));
    let _ = writeln!(w, "imported_at = {}", toml_str(&stamp.imported_at));
    let _ = writeln!(w, "source_sha256 = {}", toml_str(&skill.skill_md_sha256));
    let _ = writeln!(w, "importer_version = {}", toml_str(IMPORTER));
    m
}

fn write_arg(w: &mut String, a: &Arg) {
    let _ = writeln!(w, "\n[args.{}]", key(&a.name));
    let _ = writeln!(w, "type = {}", toml_str(a.ty.as_str()));
    let _ = writeln!(w, "required = {}", a.required);
    if let Some(f) = &a.flag {
        let _ = writeln!(w, "flag = {}", toml_str(f));
    }
    if let Some(p) = a.position {
        let _ = writeln!(w, "position = {p}");
    }
    if let Some(d) = &a.default
        && let Ok(v) = toml::Value::try_from(d)
    {
        let _ = writeln!(w, "default = {v}");
    }
    if let Some(d) = &a.description {
        let _ = writeln!(w, "description = {}", toml_str(d));
    }
}

/// Files of the skill (relative paths) an executor depends on: SKILL.md and what it runs.
pub fn executor_sources(plan: &Plan) -> Vec<String> {
    let mut v = vec!["SKILL.md".to_owned()];
    match &plan.subcommand.program {
        Program::Script { path, .. } => v.push(path.clone()),
        Program::Tool { module, .. } if !module.is_empty() => v.push(module.clone()),
        _ => {}
    }
    v
}

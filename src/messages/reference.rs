//! The reference commands' JSON: `skillc explain --format json` (schema `skillc.explain/1`)
//! and `skillc vocabulary --format json` (schema `skillc.vocabulary/1`).

use serde::Serialize;

/// The schema id of `skillc explain --format json`.
pub const EXPLAIN_SCHEMA: &str = "skillc.explain/1";

/// The schema id of `skillc vocabulary --format json`.
pub const VOCABULARY_SCHEMA: &str = "skillc.vocabulary/1";

/// `skillc explain [CODE] --format json`: every rule, or the one asked for.
#[derive(Serialize)]
pub struct Explain<'a> {
    /// [`EXPLAIN_SCHEMA`].
    pub schema: &'static str,
    /// The rules in code order (one when a code was given).
    pub rules: Vec<Rule<'a>>,
}

/// One rule of the registry (`crate::rules`).
#[derive(Serialize)]
pub struct Rule<'a> {
    /// Stable code (`SK006`).
    pub code: &'a str,
    /// Kebab-case name (`invalid-yaml`).
    pub name: &'a str,
    /// `diagnostic` (severities `note`, `warning`, `error`) or `scan` (a security finding:
    /// `info` … `critical`).
    pub kind: &'static str,
    /// The default severity, on the scale of `kind`.
    pub severity: String,
    /// One line: what the rule checks.
    pub summary: &'a str,
    /// Whether `skillc check --fix` fixes it.
    pub fixable: bool,
    /// How `--fix` fixes it (one sentence); `None` when it does not.
    pub fix: Option<&'a str>,
    /// The long explanation (Markdown), when one code was asked for; `None` in the list.
    pub explanation: Option<&'a str>,
}

/// `skillc vocabulary --format json`: the vocabulary in use, as read.
#[derive(Serialize)]
pub struct Vocabulary<'a> {
    /// [`VOCABULARY_SCHEMA`].
    pub schema: &'static str,
    /// The file it was read from, as diagnostics name it (`<built-in vocabulary>` for the
    /// built-in one).
    pub path: &'a str,
    /// By canonical name.
    pub actions: Vec<Action<'a>>,
    /// By canonical name.
    pub objects: Vec<Object<'a>>,
    /// By canonical name.
    pub qualifiers: Vec<Qualifier<'a>>,
    /// By canonical name.
    pub domains: Vec<Domain<'a>>,
    /// The contextual rules, in file order.
    pub rules: Vec<ContextRule<'a>>,
}

/// What every entry of the vocabulary has, written first in each: `{name, en, it, synonyms}`.
#[derive(Serialize)]
pub struct Entry<'a> {
    /// Canonical name (`read`, `events`, `draft`, `mail`).
    pub name: &'a str,
    /// English label.
    pub en: &'a str,
    /// Italian label.
    pub it: &'a str,
    /// Words that mean it (for a domain: the service and brand words that set it).
    pub synonyms: &'a [String],
}

/// A canonical action.
#[derive(Serialize)]
pub struct Action<'a> {
    /// Name, labels and synonyms.
    #[serde(flatten)]
    pub entry: Entry<'a>,
    /// `safe`, `producer` or `destructive`.
    pub class: &'static str,
    /// The object it means when no word names one.
    pub object: Option<&'a str>,
}

/// A canonical object.
#[derive(Serialize)]
pub struct Object<'a> {
    /// Name, labels and synonyms.
    #[serde(flatten)]
    pub entry: Entry<'a>,
    /// The domain it belongs to.
    pub domain: Option<&'a str>,
}

/// A canonical qualifier.
#[derive(Serialize)]
pub struct Qualifier<'a> {
    /// Name, labels and synonyms.
    #[serde(flatten)]
    pub entry: Entry<'a>,
    /// `time`, `scope`, `state`, `format`, `kind`, `source`, `property` or `object`, when the
    /// file gives one.
    pub class: Option<&'static str>,
    /// The objects it may qualify; empty: any.
    pub objects: &'a [String],
}

/// A domain.
#[derive(Serialize)]
pub struct Domain<'a> {
    /// Name, labels and the words that set it.
    #[serde(flatten)]
    pub entry: Entry<'a>,
    /// The object its commands are about when no word names one.
    pub object: Option<&'a str>,
    /// What ambiguous words mean inside it, by word.
    pub meanings: Vec<Meaning<'a>>,
}

/// What one word means inside a domain.
#[derive(Serialize)]
pub struct Meaning<'a> {
    /// The word.
    pub word: &'a str,
    /// The canonical action it means, if any.
    pub action: Option<&'a str>,
    /// The canonical object it means, if any.
    pub object: Option<&'a str>,
    /// The canonical qualifier it means, if any.
    pub qualifier: Option<&'a str>,
}

/// A contextual rule: the `action` word (with the `domain` word, when given) means `then_*`.
#[derive(Serialize)]
pub struct ContextRule<'a> {
    /// Its line in the vocabulary file.
    pub line: u32,
    /// The domain word, when the rule has one.
    pub domain: Option<&'a str>,
    /// The action word as written in a sub-command.
    pub action: &'a str,
    /// The canonical action it means.
    pub then_action: &'a str,
    /// The canonical object it means.
    pub then_object: &'a str,
    /// The qualifiers it adds.
    pub then_qualifiers: &'a [String],
}

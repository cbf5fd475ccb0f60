//! The closed vocabulary: canonical actions, objects and qualifiers, their synonyms and labels,
//! and contextual rules (FORMATS.md, "vocabulary.toml").
//!
//! Prose never widens the vocabulary: translation maps words onto these entries or rejects.
//! The built-in default is embedded in the binary (`src/vocab/default.toml`); a project may
//! override it with its own file (`[pipeline] vocabulary`). A vocabulary file is validated like
//! any other input, with file:line:column diagnostics (`VO001`–`VO004`).

mod parse;

use std::collections::{BTreeMap, HashMap};

use crate::db::TextInput;
use crate::diag::Diagnostic;
pub use parse::parse;

/// The built-in vocabulary.
pub const DEFAULT_TEXT: &str = include_str!("default.toml");
/// The path shown in diagnostics about the built-in vocabulary.
pub const DEFAULT_PATH: &str = "<built-in vocabulary>";

/// The built-in vocabulary, parsed once: the general lexicon of command words (what is an
/// action, an object or a qualifier in English) that extraction uses to tell sub-command
/// words from values. Naming always uses the project's vocabulary input instead.
pub fn builtin() -> &'static Vocabulary {
    static BUILTIN: std::sync::LazyLock<Vocabulary> =
        std::sync::LazyLock::new(|| parse(DEFAULT_PATH, DEFAULT_TEXT).vocabulary);
    &BUILTIN
}

/// What an action does to the world (FORMATS.md `class`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ActionClass {
    /// Creates or changes something (create, write, send, …).
    Producer,
    /// Only reads (read, find, list, describe, …).
    Safe,
    /// Removes or irreversibly changes something (delete, clear, …).
    Destructive,
}

impl ActionClass {
    /// `producer`, `safe` or `destructive`.
    pub fn as_str(self) -> &'static str {
        match self {
            ActionClass::Producer => "producer",
            ActionClass::Safe => "safe",
            ActionClass::Destructive => "destructive",
        }
    }
}

/// A canonical action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Action {
    /// Canonical name (`read`).
    pub name: String,
    /// Its class.
    pub class: ActionClass,
    /// English label.
    pub en: String,
    /// Italian label.
    pub it: String,
    /// Words that mean this action.
    pub synonyms: Vec<String>,
    /// The object it means when no word names one (`login` → `accounts`).
    pub object: Option<String>,
}

/// A canonical object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Object {
    /// Canonical name, plural (`events`).
    pub name: String,
    /// English label.
    pub en: String,
    /// Italian label.
    pub it: String,
    /// Words that mean this object (`event`, `appointments`).
    pub synonyms: Vec<String>,
    /// The domain it belongs to (`calendar`), for organisation and inference.
    pub domain: Option<String>,
}

/// A canonical qualifier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Qualifier {
    /// Canonical name (`draft`).
    pub name: String,
    /// English label.
    pub en: String,
    /// Italian label.
    pub it: String,
    /// Objects it may qualify; empty: any object.
    pub objects: Vec<String>,
    /// Words that mean this qualifier.
    pub synonyms: Vec<String>,
    /// Its class (time window, scope, …), when the file gives one.
    pub class: Option<QualifierClass>,
}

impl Qualifier {
    /// Whether it may qualify `object` (FORMATS.md: `objects`, or any object when absent).
    pub fn qualifies(&self, object: &str) -> bool {
        self.objects.is_empty() || self.objects.iter().any(|o| o == object)
    }
}

/// What a qualifier tells apart (FORMATS.md, "vocabulary.toml").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QualifierClass {
    /// A time window: today, week, overdue, upcoming.
    Time,
    /// Whose or which items: all, mine, team, default.
    Scope,
    /// A state: open, closed, unread, draft.
    State,
    /// A file or text format: pdf, csv, markdown.
    Format,
    /// A variant of the operation: quick, bulk, reply, nearby.
    Kind,
    /// The database or service a search reads: pubmed, arxiv.
    Source,
    /// The property a command sets or filters on: status, priority.
    Property,
    /// Another object the items are about: `send_events_pulls`.
    Object,
}

impl QualifierClass {
    /// The names accepted in a vocabulary file, in declaration order.
    pub const NAMES: &'static [&'static str] = &[
        "time", "scope", "state", "format", "kind", "source", "property", "object",
    ];

    /// Its name in a vocabulary file (`time`): the entry of [`QualifierClass::NAMES`].
    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The class of a name (`time`), if it is one.
    pub fn from_name(name: &str) -> Option<QualifierClass> {
        use QualifierClass::*;
        Some(match name {
            "time" => Time,
            "scope" => Scope,
            "state" => State,
            "format" => Format,
            "kind" => Kind,
            "source" => Source,
            "property" => Property,
            "object" => Object,
            _ => return None,
        })
    }
}

/// What an ambiguous word means inside one domain (`pull` on a code host: pull requests).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Meaning {
    /// The canonical action it means, if any.
    pub action: Option<String>,
    /// The canonical object it means, if any.
    pub object: Option<String>,
    /// The canonical qualifier it means, if any.
    pub qualifier: Option<String>,
}

/// A domain: a family of services (mail, code hosting, finance), the words that set it, its
/// default object and the meanings of ambiguous words inside it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Domain {
    /// Canonical name (`mail`).
    pub name: String,
    /// English label.
    pub en: String,
    /// Italian label.
    pub it: String,
    /// Service and brand words that set the domain (`gmail`, `himalaya`).
    pub synonyms: Vec<String>,
    /// The object its commands are about when no word names one (`messages`).
    pub object: Option<String>,
    /// Word → meaning inside the domain.
    pub meanings: BTreeMap<String, Meaning>,
}

/// A contextual rule: when a sub-command has the `action` word (and the `domain` word, when
/// given), it means `then`. Rules win over synonyms; the first matching rule wins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextRule {
    /// Position in the file (0-based), for `--explain`.
    pub index: usize,
    /// Line of the rule in the vocabulary file.
    pub line: u32,
    /// The domain word (`drive`), when the rule has one.
    pub domain: Option<String>,
    /// The action word as written in the sub-command (`get`).
    pub action: String,
    /// Resulting canonical action.
    pub then_action: String,
    /// Resulting canonical object.
    pub then_object: String,
    /// Resulting qualifiers.
    pub then_qualifiers: Vec<String>,
}

/// What a word means in one category.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Match<'a> {
    /// The word is the canonical name.
    Canonical(&'a str),
    /// The word is a synonym of the canonical name.
    Synonym(&'a str),
}

impl<'a> Match<'a> {
    /// The canonical name matched.
    pub fn name(self) -> &'a str {
        match self {
            Match::Canonical(n) | Match::Synonym(n) => n,
        }
    }
}

/// A validated vocabulary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Vocabulary {
    /// Actions by canonical name.
    pub actions: BTreeMap<String, Action>,
    /// Objects by canonical name.
    pub objects: BTreeMap<String, Object>,
    /// Qualifiers by canonical name.
    pub qualifiers: BTreeMap<String, Qualifier>,
    /// Domains by canonical name.
    pub domains: BTreeMap<String, Domain>,
    /// Contextual rules, in file order.
    pub rules: Vec<ContextRule>,
    action_words: HashMap<String, String>,
    object_words: HashMap<String, String>,
    qualifier_words: HashMap<String, String>,
    domain_words: HashMap<String, String>,
}

/// Which category a [`Concept`] belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ConceptKind {
    /// An action.
    Action,
    /// An object.
    Object,
    /// A qualifier.
    Qualifier,
    /// A domain.
    Domain,
}

/// A canonical entry a word means, with its labels: the shared concepts of naming, routing
/// and the menu (`gmail` → domain `mail`, "mail" / "posta e messaggi").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Concept<'a> {
    /// The category.
    pub kind: ConceptKind,
    /// The canonical name.
    pub name: &'a str,
    /// The English label.
    pub en: &'a str,
    /// The Italian label.
    pub it: &'a str,
}

impl Vocabulary {
    fn lookup<'a>(map: &'a HashMap<String, String>, word: &str) -> Option<Match<'a>> {
        map.get_key_value(word)
            .map(|(k, v)| if k == v { Match::Canonical(v) } else { Match::Synonym(v) })
    }

    /// The action a word means.
    pub fn action(&self, word: &str) -> Option<Match<'_>> {
        Self::lookup(&self.action_words, word)
    }

    /// The object a word means, by its exact spelling or, for nouns, its other number
    /// (`milestone` → `milestones`, `policies` → `policy`'s entry).
    pub fn object(&self, word: &str) -> Option<Match<'_>> {
        // A verb, a service word or a qualifier is not inflected into a noun (`search` is not
        // `searches`, `home` is not `homes`).
        Self::lookup(&self.object_words, word).or_else(|| {
            if self.action_words.contains_key(word)
                || self.domain_words.contains_key(word)
                || self.qualifier_words.contains_key(word)
            {
                return None;
            }
            inflections(word)
                .iter()
                .find_map(|w| self.object_words.get(w.as_str()).map(|v| Match::Synonym(v.as_str())))
        })
    }

    /// The object a word means by its exact spelling only.
    pub fn object_word(&self, word: &str) -> Option<Match<'_>> {
        Self::lookup(&self.object_words, word)
    }

    /// The domain a service or brand word sets (`gmail` → `mail`).
    pub fn domain(&self, word: &str) -> Option<Match<'_>> {
        Self::lookup(&self.domain_words, word)
    }

    /// What `word` means inside `domain`, before its global meaning.
    pub fn meaning(&self, domain: &str, word: &str) -> Option<&Meaning> {
        self.domains.get(domain)?.meanings.get(word)
    }

    /// Whether qualifier `qualifier` may qualify object `object`.
    pub fn qualifies(&self, qualifier: &str, object: &str) -> bool {
        self.qualifiers.get(qualifier).is_some_and(|q| q.qualifies(object))
    }

    /// Every canonical entry `word` means, with labels, in the order action, object,
    /// qualifier, domain.
    pub fn concepts(&self, word: &str) -> Vec<Concept<'_>> {
        let mut out = Vec::new();
        if let Some(a) = self.action(word).and_then(|m| self.actions.get(m.name())) {
            out.push(Concept {
                kind: ConceptKind::Action,
                name: &a.name,
                en: &a.en,
                it: &a.it,
            });
        }
        if let Some(o) = self.object(word).and_then(|m| self.objects.get(m.name())) {
            out.push(Concept {
                kind: ConceptKind::Object,
                name: &o.name,
                en: &o.en,
                it: &o.it,
            });
        }
        if let Some(q) = self.qualifier(word).and_then(|m| self.qualifiers.get(m.name())) {
            out.push(Concept {
                kind: ConceptKind::Qualifier,
                name: &q.name,
                en: &q.en,
                it: &q.it,
            });
        }
        if let Some(d) = self.domain(word).and_then(|m| self.domains.get(m.name())) {
            out.push(Concept {
                kind: ConceptKind::Domain,
                name: &d.name,
                en: &d.en,
                it: &d.it,
            });
        }
        out
    }

    /// The qualifier a word means.
    pub fn qualifier(&self, word: &str) -> Option<Match<'_>> {
        Self::lookup(&self.qualifier_words, word)
    }

    /// Whether a word means anything here: an action, an object, a qualifier or a domain.
    pub fn knows(&self, word: &str) -> bool {
        self.action(word).is_some()
            || self.object(word).is_some()
            || self.qualifier(word).is_some()
            || self.domain(word).is_some()
    }

    /// The first rule whose action word occurs in `words` and whose domain word, when it has
    /// one, occurs in `words` or in the `context` words (skill and program names).
    pub fn rule_for(&self, words: &[String], context: &[String]) -> Option<&ContextRule> {
        self.rules.iter().find(|r| {
            words.contains(&r.action)
                && match &r.domain {
                    None => true,
                    Some(d) => d != &r.action && (words.contains(d) || context.contains(d)),
                }
        })
    }
}

/// A vocabulary plus the diagnostics found while reading it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadedVocabulary {
    /// The usable part of the vocabulary (invalid entries are left out).
    pub vocabulary: Vocabulary,
    /// Problems with the file.
    pub diagnostics: Vec<Diagnostic>,
}

/// The other number of an English noun: `milestone` ↔ `milestones`, `policy` ↔ `policies`,
/// `box` ↔ `boxes`.
fn inflections(word: &str) -> Vec<String> {
    let mut out = Vec::new();
    // Gerunds and participles are not nouns to inflect (`posting`, `shared`).
    if word.len() < 3 || word.contains('-') || word.ends_with("ing") || word.ends_with("ed") {
        return out;
    }
    if let Some(stem) = word.strip_suffix("ies") {
        out.push(format!("{stem}y"));
    } else if let Some(stem) = word.strip_suffix("es").filter(|s| s.ends_with(['s', 'x', 'z', 'h'])) {
        out.push(stem.to_owned());
    } else if let Some(stem) = word.strip_suffix('s').filter(|s| !s.ends_with('s')) {
        out.push(stem.to_owned());
    } else if let Some(stem) = word.strip_suffix('y').filter(|s| !s.ends_with(['a', 'e', 'o', 'u'])) {
        out.push(format!("{stem}ies"));
    } else if word.ends_with(['s', 'x', 'z', 'h']) {
        out.push(format!("{word}es"));
    } else {
        out.push(format!("{word}s"));
    }
    out
}

/// Parses and validates the vocabulary text input.
#[salsa::tracked(returns(ref))]
pub fn vocabulary(db: &dyn salsa::Database, input: TextInput) -> LoadedVocabulary {
    parse(input.path(db), input.text(db))
}

/// `[a-z0-9]+`: one word of an executor name.
pub fn is_name_word(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// A synonym: name words joined by single hyphens (`create-folder`).
pub fn is_synonym_word(s: &str) -> bool {
    !s.is_empty() && s.split('-').all(is_name_word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_vocabulary_is_valid() {
        let v = parse(DEFAULT_PATH, DEFAULT_TEXT);
        assert!(v.diagnostics.is_empty(), "{:#?}", v.diagnostics);
        assert!(v.vocabulary.actions.len() >= 10);
        assert_eq!(v.vocabulary.object("appointment").map(Match::name), Some("events"));
        assert_eq!(v.vocabulary.domain("gmail").map(Match::name), Some("mail"));
        assert_eq!(v.vocabulary.object("milestone").map(Match::name), Some("milestones"));
        assert_eq!(
            v.vocabulary.object("search"),
            None,
            "a verb is not inflected into a noun"
        );
        let (a, o) = (v.vocabulary.actions.len(), v.vocabulary.objects.len());
        assert!(
            (80..=110).contains(&a) && (390..=600).contains(&o),
            "{a} actions, {o} objects"
        );
        assert_eq!(v.vocabulary.action("read"), Some(Match::Canonical("read")));
    }

    #[test]
    fn problems_have_positions() {
        let text = "version = 1\n[actions.read]\nclass = \"safe\"\nen = \"read\"\nit = \"leggi\"\nsynonyms = [\"get\", \"get\"]\n\
                    [objects.files]\nen = \"files\"\nit = \"file\"\n[qualifiers.pdf]\nen = \"PDF\"\nit = \"PDF\"\nobjects = [\"pages\"]\n\
                    [[rules]]\nwhen = { domain = \"drive\", action = \"get\" }\nthen = { action = \"describe\", object = \"files\" }\n";
        let v = parse("vocabulary.toml", text);
        let got: Vec<(&str, u32)> = v.diagnostics.iter().map(|d| (d.rule.code, d.span.start.line)).collect();
        assert_eq!(got, vec![("VO002", 6), ("VO003", 13), ("VO003", 16)]);
    }

    #[test]
    fn unknown_keys_are_reported() {
        let v = parse(
            "v.toml",
            "version = 1\n[actions.read]\nclass = \"safe\"\nen = \"r\"\nit = \"l\"\ncolour = 1\n",
        );
        assert_eq!(v.diagnostics.len(), 1);
        assert_eq!(v.diagnostics[0].span.start.line, 6);
    }
}

//! The closed vocabulary: canonical actions, objects and qualifiers, their synonyms and labels,
//! and contextual rules (FORMATS.md, "vocabulary.toml").
//!
//! Prose never widens the vocabulary: translation maps words onto these entries or rejects.
//! The built-in default is embedded in the binary (`src/vocab/default.toml`); a project may
//! override it with its own file (`[pipeline] vocabulary`). A vocabulary file is validated like
//! any other input, with file:line:column diagnostics (`VO001`–`VO004`).

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use serde::Deserialize;

use crate::db::TextInput;
use crate::diag::Source;
use crate::diag::{Diagnostic, Rule};
use crate::rules;

/// The built-in vocabulary.
pub const DEFAULT_TEXT: &str = include_str!("default.toml");
/// The path shown in diagnostics about the built-in vocabulary.
pub const DEFAULT_PATH: &str = "<built-in vocabulary>";

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
    /// Words that mean this object, service names included (`calendar`).
    pub synonyms: Vec<String>,
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
    /// Objects it may qualify.
    pub objects: Vec<String>,
    /// Words that mean this qualifier.
    pub synonyms: Vec<String>,
}

/// A contextual rule: when a sub-command has both the `domain` word and the `action` word,
/// it means `then`. Rules win over synonyms; the first matching rule wins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextRule {
    /// Position in the file (0-based), for `--explain`.
    pub index: usize,
    /// Line of the rule in the vocabulary file.
    pub line: u32,
    /// The domain word (`drive`).
    pub domain: String,
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
    /// Contextual rules, in file order.
    pub rules: Vec<ContextRule>,
    action_words: HashMap<String, String>,
    object_words: HashMap<String, String>,
    qualifier_words: HashMap<String, String>,
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

    /// The object a word means.
    pub fn object(&self, word: &str) -> Option<Match<'_>> {
        Self::lookup(&self.object_words, word)
    }

    /// The qualifier a word means.
    pub fn qualifier(&self, word: &str) -> Option<Match<'_>> {
        Self::lookup(&self.qualifier_words, word)
    }

    /// The first rule whose action word occurs in `words` and whose domain word occurs in
    /// `words` or in the `context` words (skill and program names).
    pub fn rule_for(&self, words: &[String], context: &[String]) -> Option<&ContextRule> {
        self.rules.iter().find(|r| {
            r.domain != r.action
                && words.contains(&r.action)
                && (words.contains(&r.domain) || context.contains(&r.domain))
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

/// Parses and validates the vocabulary text input.
#[salsa::tracked(returns(ref))]
pub fn vocabulary(db: &dyn salsa::Database, input: TextInput) -> LoadedVocabulary {
    parse(input.path(db), input.text(db))
}

type Sp<T> = toml::Spanned<T>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    version: Sp<i64>,
    #[serde(default)]
    actions: BTreeMap<Sp<String>, ActionDef>,
    #[serde(default)]
    objects: BTreeMap<Sp<String>, ObjectDef>,
    #[serde(default)]
    qualifiers: BTreeMap<Sp<String>, QualifierDef>,
    #[serde(default)]
    rules: Vec<Sp<RuleDef>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ActionDef {
    class: Sp<String>,
    en: Sp<String>,
    it: Sp<String>,
    #[serde(default)]
    synonyms: Vec<Sp<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ObjectDef {
    en: Sp<String>,
    it: Sp<String>,
    #[serde(default)]
    synonyms: Vec<Sp<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QualifierDef {
    en: Sp<String>,
    it: Sp<String>,
    #[serde(default)]
    objects: Vec<Sp<String>>,
    #[serde(default)]
    synonyms: Vec<Sp<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleDef {
    when: Sp<When>,
    then: Sp<Then>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct When {
    domain: Sp<String>,
    action: Sp<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Then {
    action: Sp<String>,
    object: Sp<String>,
    #[serde(default)]
    qualifiers: Vec<Sp<String>>,
}

/// `[a-z0-9]+`: one word of an executor name.
pub fn is_name_word(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// A synonym: name words joined by single hyphens (`create-folder`).
pub fn is_synonym_word(s: &str) -> bool {
    !s.is_empty() && s.split('-').all(is_name_word)
}

fn strings(v: &[Sp<String>]) -> Vec<String> {
    v.iter().map(|s| s.get_ref().clone()).collect()
}

struct Checker<'a> {
    src: Source<'a>,
    diags: Vec<Diagnostic>,
}

impl Checker<'_> {
    fn error(&mut self, rule: &'static Rule, span: Range<usize>, msg: String) {
        let d = Diagnostic::new(rule, self.src.file, self.src.span(span), msg);
        self.diags.push(d);
    }

    fn name(&mut self, kind: &str, n: &Sp<String>) -> bool {
        if is_name_word(n.get_ref()) {
            return true;
        }
        let d = Diagnostic::new(
            &rules::VO004,
            self.src.file,
            self.src.span(n.span()),
            format!("{kind} name `{}` is not one lowercase ASCII word", n.get_ref()),
        )
        .help("canonical names are `[a-z0-9]+`: they become parts of executor names");
        self.diags.push(d);
        false
    }

    /// Registers `word` for `canonical` in `index`; reports a duplicate.
    fn word(
        &mut self,
        kind: &str,
        index: &mut HashMap<String, (String, Range<usize>)>,
        word: &Sp<String>,
        canonical: &str,
    ) {
        let w = word.get_ref();
        if !is_synonym_word(w) {
            self.error(
                &rules::VO004,
                word.span(),
                format!("{kind} synonym `{w}` must be lowercase ASCII words joined by `-`"),
            );
            return;
        }
        if let Some((other, first)) = index.get(w) {
            let d = Diagnostic::new(
                &rules::VO002,
                self.src.file,
                self.src.span(word.span()),
                format!("{kind} word `{w}` is already used for `{other}`"),
            )
            .related(self.src.span(first.clone()), "first used here")
            .help("a word may mean only one action, one object and one qualifier");
            self.diags.push(d);
            return;
        }
        index.insert(w.clone(), (canonical.to_owned(), word.span()));
    }

    /// Registers a canonical entry: its name and synonyms as words, its two labels.
    fn entry(
        &mut self,
        kind: &str,
        index: &mut HashMap<String, (String, Range<usize>)>,
        labels: &mut HashMap<String, Range<usize>>,
        name: &Sp<String>,
        synonyms: &[Sp<String>],
        (en, it): (&Sp<String>, &Sp<String>),
    ) {
        self.word(kind, index, name, name.get_ref());
        for s in synonyms {
            self.word(kind, index, s, name.get_ref());
        }
        self.labels(kind, labels, en, it);
    }

    fn labels(&mut self, kind: &str, seen: &mut HashMap<String, Range<usize>>, en: &Sp<String>, it: &Sp<String>) {
        for (lang, label) in [("en", en), ("it", it)] {
            if label.get_ref().trim().is_empty() {
                self.error(&rules::VO001, label.span(), format!("{kind} `{lang}` label is empty"));
                continue;
            }
            let key = format!("{lang}:{}", label.get_ref());
            if let Some(first) = seen.get(&key) {
                let d = Diagnostic::new(
                    &rules::VO002,
                    self.src.file,
                    self.src.span(label.span()),
                    format!("{kind} label `{}` is used twice", label.get_ref()),
                )
                .related(self.src.span(first.clone()), "first used here");
                self.diags.push(d);
            } else {
                seen.insert(key, label.span());
            }
        }
    }
}

impl Checker<'_> {
    /// A qualifier, checked: its words, and the objects it qualifies (known ones only).
    fn qualifier(
        &mut self,
        name: &Sp<String>,
        def: &QualifierDef,
        index: &mut HashMap<String, (String, Range<usize>)>,
        labels: &mut HashMap<String, Range<usize>>,
        v: &Vocabulary,
    ) -> Option<Qualifier> {
        if !self.name("qualifier", name) {
            return None;
        }
        self.entry("qualifier", index, labels, name, &def.synonyms, (&def.en, &def.it));
        let mut objects = Vec::new();
        for o in &def.objects {
            if v.objects.contains_key(o.get_ref()) {
                objects.push(o.get_ref().clone());
            } else {
                self.error(
                    &rules::VO003,
                    o.span(),
                    format!("qualifier `{}` names unknown object `{}`", name.get_ref(), o.get_ref()),
                );
            }
        }
        if def.objects.is_empty() {
            self.error(
                &rules::VO001,
                name.span(),
                format!("qualifier `{}` lists no `objects` it may qualify", name.get_ref()),
            );
        }
        Some(Qualifier {
            name: name.get_ref().clone(),
            en: def.en.get_ref().clone(),
            it: def.it.get_ref().clone(),
            objects,
            synonyms: strings(&def.synonyms),
        })
    }

    /// The `i`-th rule, checked against the vocabulary: its words and what it names.
    fn rule(&mut self, i: usize, r: &Sp<RuleDef>, v: &Vocabulary) -> Option<ContextRule> {
        let line = self.src.span(r.span()).start.line;
        let r = r.get_ref();
        let (when, then) = (r.when.get_ref(), r.then.get_ref());
        let mut ok = true;
        for w in [&when.domain, &when.action] {
            if !is_synonym_word(w.get_ref()) {
                self.error(
                    &rules::VO004,
                    w.span(),
                    format!(
                        "rule word `{}` must be lowercase ASCII words joined by `-`",
                        w.get_ref()
                    ),
                );
                ok = false;
            }
        }
        if !v.actions.contains_key(then.action.get_ref()) {
            self.error(
                &rules::VO003,
                then.action.span(),
                format!("rule names unknown action `{}`", then.action.get_ref()),
            );
            ok = false;
        }
        if !v.objects.contains_key(then.object.get_ref()) {
            self.error(
                &rules::VO003,
                then.object.span(),
                format!("rule names unknown object `{}`", then.object.get_ref()),
            );
            ok = false;
        }
        for q in &then.qualifiers {
            match v.qualifiers.get(q.get_ref()) {
                None => {
                    self.error(
                        &rules::VO003,
                        q.span(),
                        format!("rule names unknown qualifier `{}`", q.get_ref()),
                    );
                    ok = false;
                }
                Some(def) if !def.objects.contains(then.object.get_ref()) => {
                    self.error(
                        &rules::VO003,
                        q.span(),
                        format!("qualifier `{}` cannot qualify `{}`", q.get_ref(), then.object.get_ref()),
                    );
                    ok = false;
                }
                Some(_) => {}
            }
        }
        ok.then(|| ContextRule {
            index: i,
            line,
            domain: when.domain.get_ref().clone(),
            action: when.action.get_ref().clone(),
            then_action: then.action.get_ref().clone(),
            then_object: then.object.get_ref().clone(),
            then_qualifiers: then.qualifiers.iter().map(|q| q.get_ref().clone()).collect(),
        })
    }
}

/// Parses and validates a vocabulary file shown as `path`.
pub fn parse(path: &str, text: &str) -> LoadedVocabulary {
    let mut c = Checker {
        src: Source::new(path, text),
        diags: Vec::new(),
    };
    let file: File = match toml::from_str(text) {
        Ok(f) => f,
        Err(e) => {
            let d = crate::diag::toml_error(&c.src, &e, &rules::VO001, &rules::VO001);
            return LoadedVocabulary {
                vocabulary: Vocabulary::default(),
                diagnostics: vec![d],
            };
        }
    };
    if *file.version.get_ref() != 1 {
        c.error(
            &rules::VO001,
            file.version.span(),
            format!("unsupported vocabulary version {}; expected 1", file.version.get_ref()),
        );
    }
    let mut v = Vocabulary::default();
    let mut index: HashMap<String, (String, Range<usize>)> = HashMap::new();
    let mut labels = HashMap::new();
    for (name, def) in &file.actions {
        if !c.name("action", name) {
            continue;
        }
        let class = match def.class.get_ref().as_str() {
            "producer" => ActionClass::Producer,
            "safe" => ActionClass::Safe,
            "destructive" => ActionClass::Destructive,
            other => {
                c.error(
                    &rules::VO001,
                    def.class.span(),
                    format!("unknown action class `{other}`; expected producer, safe or destructive"),
                );
                continue;
            }
        };
        c.entry(
            "action",
            &mut index,
            &mut labels,
            name,
            &def.synonyms,
            (&def.en, &def.it),
        );
        v.actions.insert(
            name.get_ref().clone(),
            Action {
                name: name.get_ref().clone(),
                class,
                en: def.en.get_ref().clone(),
                it: def.it.get_ref().clone(),
                synonyms: strings(&def.synonyms),
            },
        );
    }
    v.action_words = index.drain().map(|(w, (n, _))| (w, n)).collect();
    labels.clear();
    for (name, def) in &file.objects {
        if !c.name("object", name) {
            continue;
        }
        c.entry(
            "object",
            &mut index,
            &mut labels,
            name,
            &def.synonyms,
            (&def.en, &def.it),
        );
        v.objects.insert(
            name.get_ref().clone(),
            Object {
                name: name.get_ref().clone(),
                en: def.en.get_ref().clone(),
                it: def.it.get_ref().clone(),
                synonyms: strings(&def.synonyms),
            },
        );
    }
    v.object_words = index.drain().map(|(w, (n, _))| (w, n)).collect();
    labels.clear();
    for (name, def) in &file.qualifiers {
        if let Some(q) = c.qualifier(name, def, &mut index, &mut labels, &v) {
            v.qualifiers.insert(name.get_ref().clone(), q);
        }
    }
    v.qualifier_words = index.drain().map(|(w, (n, _))| (w, n)).collect();
    for (i, r) in file.rules.iter().enumerate() {
        if let Some(rule) = c.rule(i, r, &v) {
            v.rules.push(rule);
        }
    }
    c.diags.sort_by_key(|d| d.span.start.offset);
    LoadedVocabulary {
        vocabulary: v,
        diagnostics: c.diags,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_vocabulary_is_valid() {
        let v = parse(DEFAULT_PATH, DEFAULT_TEXT);
        assert!(v.diagnostics.is_empty(), "{:#?}", v.diagnostics);
        assert!(v.vocabulary.actions.len() >= 10);
        assert_eq!(v.vocabulary.object("calendar").map(Match::name), Some("events"));
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

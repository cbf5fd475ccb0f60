//! Reading a vocabulary file: the TOML shape (FORMATS.md, "vocabulary.toml") and its checks,
//! with file:line diagnostics (`VO001`–`VO004`). Invalid entries are left out of the result.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use serde::Deserialize;

use super::{
    Action, ActionClass, ContextRule, Domain, LoadedVocabulary, Meaning, Object, Qualifier, QualifierClass, Vocabulary,
    is_name_word, is_synonym_word,
};
use crate::diag::{Diagnostic, Rule, Source};
use crate::rules;

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
    domains: BTreeMap<Sp<String>, DomainDef>,
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
    object: Option<Sp<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ObjectDef {
    en: Sp<String>,
    it: Sp<String>,
    #[serde(default)]
    synonyms: Vec<Sp<String>>,
    domain: Option<Sp<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QualifierDef {
    en: Sp<String>,
    it: Sp<String>,
    objects: Option<Vec<Sp<String>>>,
    #[serde(default)]
    synonyms: Vec<Sp<String>>,
    class: Option<Sp<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DomainDef {
    en: Sp<String>,
    it: Sp<String>,
    #[serde(default)]
    synonyms: Vec<Sp<String>>,
    object: Option<Sp<String>>,
    #[serde(default)]
    meanings: BTreeMap<Sp<String>, Sp<MeaningDef>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MeaningDef {
    action: Option<Sp<String>>,
    object: Option<Sp<String>>,
    qualifier: Option<Sp<String>>,
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
    domain: Option<Sp<String>>,
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

fn strings(v: &[Sp<String>]) -> Vec<String> {
    v.iter().map(|s| s.get_ref().clone()).collect()
}

type Index = HashMap<String, (String, Range<usize>)>;

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
    fn word(&mut self, kind: &str, index: &mut Index, word: &Sp<String>, canonical: &str) {
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
        index: &mut Index,
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
    /// Reports `name` unless `known` holds it: `what` names the category in the message.
    fn known<T>(&mut self, known: &BTreeMap<String, T>, name: &Sp<String>, what: &str, context: &str) -> bool {
        if known.contains_key(name.get_ref()) {
            return true;
        }
        self.error(
            &rules::VO003,
            name.span(),
            format!("{context} names unknown {what} `{}`", name.get_ref()),
        );
        false
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
    objects(&mut c, &file, &mut v);
    actions(&mut c, &file, &mut v);
    qualifiers(&mut c, &file, &mut v);
    domains(&mut c, &file, &mut v);
    context_rules(&mut c, &file, &mut v);
    c.diags.sort_by_key(|d| d.span.start.offset);
    LoadedVocabulary {
        vocabulary: v,
        diagnostics: c.diags,
    }
}

fn actions(c: &mut Checker<'_>, file: &File, v: &mut Vocabulary) {
    let mut index = Index::new();
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
        let object = def
            .object
            .as_ref()
            .filter(|o| c.known(&v.objects, o, "object", &format!("action `{}`", name.get_ref())))
            .map(|o| o.get_ref().clone());
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
                object,
            },
        );
    }
    v.action_words = index.into_iter().map(|(w, (n, _))| (w, n)).collect();
}

fn objects(c: &mut Checker<'_>, file: &File, v: &mut Vocabulary) {
    let mut index = Index::new();
    let mut labels = HashMap::new();
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
        let domain = def.domain.as_ref().filter(|d| {
            let known = file.domains.keys().any(|k| k.get_ref() == d.get_ref());
            if !known {
                c.error(
                    &rules::VO003,
                    d.span(),
                    format!("object `{}` names unknown domain `{}`", name.get_ref(), d.get_ref()),
                );
            }
            known
        });
        v.objects.insert(
            name.get_ref().clone(),
            Object {
                name: name.get_ref().clone(),
                en: def.en.get_ref().clone(),
                it: def.it.get_ref().clone(),
                synonyms: strings(&def.synonyms),
                domain: domain.map(|d| d.get_ref().clone()),
            },
        );
    }
    v.object_words = index.into_iter().map(|(w, (n, _))| (w, n)).collect();
}

fn qualifiers(c: &mut Checker<'_>, file: &File, v: &mut Vocabulary) {
    let mut index = Index::new();
    let mut labels = HashMap::new();
    for (name, def) in &file.qualifiers {
        if !c.name("qualifier", name) {
            continue;
        }
        c.entry(
            "qualifier",
            &mut index,
            &mut labels,
            name,
            &def.synonyms,
            (&def.en, &def.it),
        );
        let class = def.class.as_ref().and_then(|k| {
            let class = QualifierClass::from_name(k.get_ref());
            if class.is_none() {
                c.error(
                    &rules::VO001,
                    k.span(),
                    format!(
                        "unknown qualifier class `{}`; expected one of {}",
                        k.get_ref(),
                        QualifierClass::NAMES.join(", ")
                    ),
                );
            }
            class
        });
        let mut objects = Vec::new();
        for o in def.objects.iter().flatten() {
            if c.known(&v.objects, o, "object", &format!("qualifier `{}`", name.get_ref())) {
                objects.push(o.get_ref().clone());
            }
        }
        if def.objects.as_ref().is_none_or(Vec::is_empty) && def.class.is_none() {
            c.error(
                &rules::VO001,
                name.span(),
                format!(
                    "qualifier `{}` has neither `objects` it may qualify nor a `class`",
                    name.get_ref()
                ),
            );
        }
        v.qualifiers.insert(
            name.get_ref().clone(),
            Qualifier {
                name: name.get_ref().clone(),
                en: def.en.get_ref().clone(),
                it: def.it.get_ref().clone(),
                objects,
                synonyms: strings(&def.synonyms),
                class,
            },
        );
    }
    v.qualifier_words = index.into_iter().map(|(w, (n, _))| (w, n)).collect();
}

fn domains(c: &mut Checker<'_>, file: &File, v: &mut Vocabulary) {
    let mut index = Index::new();
    let mut labels = HashMap::new();
    for (name, def) in &file.domains {
        if !c.name("domain", name) {
            continue;
        }
        // Only the service and brand words set a domain; its own name (`home`, `tasks`) is an
        // ordinary word of commands.
        for w in &def.synonyms {
            c.word("domain", &mut index, w, name.get_ref());
        }
        c.labels("domain", &mut labels, &def.en, &def.it);
        let context = format!("domain `{}`", name.get_ref());
        let object = def
            .object
            .as_ref()
            .filter(|o| c.known(&v.objects, o, "object", &context))
            .map(|o| o.get_ref().clone());
        let mut meanings = BTreeMap::new();
        for (word, m) in &def.meanings {
            if !is_synonym_word(word.get_ref()) {
                c.error(
                    &rules::VO004,
                    word.span(),
                    format!(
                        "meaning word `{}` must be lowercase ASCII words joined by `-`",
                        word.get_ref()
                    ),
                );
                continue;
            }
            let def = m.get_ref();
            let mut ok = def.action.is_some() || def.object.is_some() || def.qualifier.is_some();
            if !ok {
                c.error(
                    &rules::VO001,
                    m.span(),
                    format!("meaning of `{}` names no action, object or qualifier", word.get_ref()),
                );
            }
            let here = format!("the meaning of `{}` in {context}", word.get_ref());
            ok &= def
                .action
                .as_ref()
                .is_none_or(|a| c.known(&v.actions, a, "action", &here));
            ok &= def
                .object
                .as_ref()
                .is_none_or(|o| c.known(&v.objects, o, "object", &here));
            ok &= def
                .qualifier
                .as_ref()
                .is_none_or(|q| c.known(&v.qualifiers, q, "qualifier", &here));
            if ok {
                let s = |x: &Option<Sp<String>>| x.as_ref().map(|x| x.get_ref().clone());
                meanings.insert(
                    word.get_ref().clone(),
                    Meaning {
                        action: s(&def.action),
                        object: s(&def.object),
                        qualifier: s(&def.qualifier),
                    },
                );
            }
        }
        v.domains.insert(
            name.get_ref().clone(),
            Domain {
                name: name.get_ref().clone(),
                en: def.en.get_ref().clone(),
                it: def.it.get_ref().clone(),
                synonyms: strings(&def.synonyms),
                object,
                meanings,
            },
        );
    }
    v.domain_words = index.into_iter().map(|(w, (n, _))| (w, n)).collect();
}

fn context_rules(c: &mut Checker<'_>, file: &File, v: &mut Vocabulary) {
    for (i, r) in file.rules.iter().enumerate() {
        let line = c.src.span(r.span()).start.line;
        let r = r.get_ref();
        let (when, then) = (r.when.get_ref(), r.then.get_ref());
        let mut ok = true;
        for w in when.domain.iter().chain([&when.action]) {
            if !is_synonym_word(w.get_ref()) {
                c.error(
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
        ok &= c.known(&v.actions, &then.action, "action", "rule");
        ok &= c.known(&v.objects, &then.object, "object", "rule");
        for q in &then.qualifiers {
            match v.qualifiers.get(q.get_ref()) {
                None => {
                    c.error(
                        &rules::VO003,
                        q.span(),
                        format!("rule names unknown qualifier `{}`", q.get_ref()),
                    );
                    ok = false;
                }
                Some(def) if !def.qualifies(then.object.get_ref()) => {
                    c.error(
                        &rules::VO003,
                        q.span(),
                        format!("qualifier `{}` cannot qualify `{}`", q.get_ref(), then.object.get_ref()),
                    );
                    ok = false;
                }
                Some(_) => {}
            }
        }
        if ok {
            v.rules.push(ContextRule {
                index: i,
                line,
                domain: when.domain.as_ref().map(|d| d.get_ref().clone()),
                action: when.action.get_ref().clone(),
                then_action: then.action.get_ref().clone(),
                then_object: then.object.get_ref().clone(),
                then_qualifiers: then.qualifiers.iter().map(|q| q.get_ref().clone()).collect(),
            });
        }
    }
}

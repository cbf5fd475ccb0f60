//! Validation of one SKILL.md: from bytes to a [`SkillModel`] plus diagnostics.
//!
//! Parsing never fails: every problem is a [`Diagnostic`] and the model holds whatever could be
//! read. Two modes exist. `Default` is what a careful user wants: specification violations
//! are errors, unknown keys and odd metadata are warnings, the superset formats (GAIA, Hermes,
//! OpenClaw, Claude Code) are understood and validated. `Strict` is the agentskills.io
//! standard exactly as its reference validator (`skills-ref` 0.1.0) applies it, minus the
//! deliberate differences listed in `docs/compatibility.md`.
//!
//! This file holds the analysis and the frontmatter's shape; [`fields`] checks the standard
//! fields, [`vendors`] the GAIA, Hermes and OpenClaw namespaces under `metadata`.

mod fields;
mod vendors;

use std::ops::Range;

use unicode_normalization::UnicodeNormalization;

use crate::diag::Source;
use crate::diag::{Diagnostic, Rule, Severity};
use crate::model::Mode;
use crate::rules;
use crate::skill::frontmatter;
use crate::skill::gaia;
use crate::skill::model::{self, Credential, CredentialKind, SkillModel, Text};
use crate::skill::tools;
use crate::skill::yaml::{self, Node, NodeKind};

/// Maximum length of `name`, in characters (specification, "name field").
pub const MAX_NAME_CHARS: usize = 64;
/// Maximum length of `description`, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Maximum length of `compatibility`, in characters.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;

/// What the validator needs to know besides the file.
#[derive(Clone, Copy, Debug)]
pub struct Context<'a> {
    /// The skill folder's name (compared with `name` after NFKC).
    pub dir_name: &'a str,
    /// The rule set.
    pub mode: Mode,
}

/// The outcome of analysing one SKILL.md.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Analysis {
    /// What was understood.
    pub model: SkillModel,
    /// The frontmatter tree, when the YAML loaded.
    pub frontmatter: Option<Node>,
    /// Byte range of the Markdown body, when the frontmatter was found.
    pub body: Option<Range<usize>>,
    /// Every problem found, in file order.
    pub diagnostics: Vec<Diagnostic>,
}

/// Rules whose errors mean the frontmatter was not read unambiguously: the encoding, the
/// fences, the YAML syntax, and the YAML features skillc refuses (after a duplicate key or an
/// alias the value is undecided). Errors of the other rules are about what was read.
pub const READ_RULES: &[&Rule] = &[
    &rules::SK002,
    &rules::SK004,
    &rules::SK005,
    &rules::SK006,
    &rules::SK007,
    &rules::SK008,
    &rules::SK009,
    &rules::SK010,
    &rules::SK011,
];

impl Analysis {
    /// The errors that mean the frontmatter could not be read (the codes of `READ_RULES`).
    pub fn read_errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error && READ_RULES.iter().any(|r| r.code == d.rule.code))
    }
}

/// Analyses the bytes of a SKILL.md shown as `file`.
pub fn analyze(file: &str, bytes: &[u8], ctx: &Context<'_>) -> Analysis {
    let mut out = Analysis::default();
    let text = match frontmatter::decode(bytes, file) {
        Ok(t) => t,
        Err(d) => {
            out.diagnostics.push(*d);
            return out;
        }
    };
    let src = Source::new(file, text);
    let (split, mut diags) = frontmatter::split(&src);
    let Some(split) = split else {
        out.diagnostics = diags;
        return out;
    };
    out.body = Some(split.body.clone());
    let loaded = yaml::load(&src, split.frontmatter.clone());
    diags.extend(loaded.diagnostics);
    let Some(root) = loaded.root else {
        if !diags.iter().any(|d| d.severity == Severity::Error) {
            // An empty frontmatter loads as no document at all.
            diags.push(not_mapping(
                &src,
                split.open_fence.start..split.close_fence.end,
                "the frontmatter is empty",
            ));
        }
        out.diagnostics = diags;
        return out;
    };
    if root.as_map().is_none() {
        let what = match &root.kind {
            NodeKind::Scalar(s) if s.value.is_empty() => "the frontmatter is empty".to_owned(),
            _ => format!("the frontmatter is {}", root.describe()),
        };
        let span = if root.span.is_empty() {
            split.open_fence.start..split.close_fence.end
        } else {
            root.span.clone()
        };
        diags.push(not_mapping(&src, span, &what));
        out.diagnostics = diags;
        return out;
    }
    let mut v = Validator {
        src: &src,
        ctx,
        diags,
        model: SkillModel::default(),
    };
    v.check_root(&root);
    let mut diags = v.diags;
    let model = v.model;
    diags.sort_by_key(|d| (d.span.start.offset, d.rule.code));
    out.model = model;
    out.frontmatter = Some(root);
    out.diagnostics = diags;
    out
}

fn not_mapping(src: &Source<'_>, span: Range<usize>, what: &str) -> Diagnostic {
    Diagnostic::new(
        &rules::SK007,
        src.file,
        src.span(span),
        format!("SKILL.md frontmatter must be a YAML mapping, but {what}"),
    )
    .help("write `key: value` lines, starting with `name:` and `description:`")
}

struct Validator<'a, 'c> {
    src: &'a Source<'a>,
    ctx: &'c Context<'c>,
    diags: Vec<Diagnostic>,
    model: SkillModel,
}

impl Validator<'_, '_> {
    fn strict(&self) -> bool {
        self.ctx.mode == Mode::Strict
    }

    fn push(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    fn diag(&self, rule: &'static Rule, span: &Range<usize>, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::new(rule, self.src.file, self.src.span(span.clone()), msg)
    }

    fn check_root(&mut self, root: &Node) {
        if self.strict() {
            self.check_flow(root);
        }
        let entries = root.as_map().unwrap_or_default();
        for e in entries {
            let key = e.key.as_str();
            if model::STANDARD_FIELDS.contains(&key) {
                continue;
            }
            match (self.ctx.mode, model::superset_field(key)) {
                (Mode::Strict, format) => {
                    let why = match format {
                        Some(f) => {
                            format!("unexpected field `{key}`: it belongs to {f}, not to the agentskills.io standard")
                        }
                        None => format!("unexpected field `{key}`"),
                    };
                    let d = self.diag(&rules::SK033, &e.key_span, why).severity(Severity::Error).help(
                        "the standard allows only name, description, license, allowed-tools, metadata, compatibility; move other keys under `metadata`",
                    );
                    self.push(d);
                }
                (Mode::Default, Some(_)) => {}
                (Mode::Default, None) => {
                    let help = match near_miss(key) {
                        Some(good) => format!("did you mean `{good}`?"),
                        None => "move custom keys under `metadata:`, one indented `key: value` per line".to_owned(),
                    };
                    let d = self
                        .diag(&rules::SK033, &e.key_span, format!("unknown field `{key}`"))
                        .help(help);
                    self.push(d);
                }
            }
        }
        self.check_name(root);
        self.check_description(root);
        if let Some(e) = root.get("compatibility") {
            match e.value.as_str() {
                None => {
                    let d = self.diag(
                        &rules::SK031,
                        &e.value.span,
                        format!("`compatibility` must be a string, found {}", e.value.describe()),
                    );
                    self.push(d);
                }
                Some(c) => {
                    let n = c.chars().count();
                    if n > MAX_COMPATIBILITY_CHARS {
                        let d = self
                            .diag(
                                &rules::SK032,
                                &e.value.span,
                                format!("`compatibility` is {n} characters; the limit is {MAX_COMPATIBILITY_CHARS}"),
                            )
                            .help("say only which environments the skill needs (products, system packages, network)");
                        self.push(d);
                    }
                    self.model.compatibility = Some(Text {
                        value: c.to_owned(),
                        span: e.value.span.clone(),
                    });
                    self.yaml11_warning("compatibility", &e.value);
                }
            }
        }
        if let Some(e) = root.get("allowed-tools") {
            self.check_tools_spelling(&e.value);
        }
        self.check_hidden_unicode(root);
        if !self.strict() {
            self.check_default_mode_fields(root);
        }
    }

    /// strictyaml refuses flow collections; so does `--strict`. Reports outermost ones only.
    fn check_flow(&mut self, node: &Node) {
        match &node.kind {
            NodeKind::Map { flow: true, .. } | NodeKind::Seq { flow: true, .. } => {
                let d = self
                    .diag(&rules::SK013, &node.span, "flow collection in frontmatter")
                    .label("`{…}` and `[…]` are not allowed by the strict standard")
                    .help("write the mapping or list in block style, one entry per line");
                self.push(d);
            }
            NodeKind::Map { entries, .. } => entries.iter().for_each(|e| self.check_flow(&e.value)),
            NodeKind::Seq { items, .. } => items.iter().for_each(|n| self.check_flow(n)),
            NodeKind::Scalar(_) => {}
        }
    }
}

/// Known misspellings of standard fields.
pub fn near_miss(key: &str) -> Option<&'static str> {
    let normalized: String = key.to_ascii_lowercase().replace('_', "-");
    model::STANDARD_FIELDS
        .iter()
        .chain(model::SUPERSET_FIELDS.iter().map(|(k, _)| k))
        .copied()
        .find(|f| *f != key && (f.replace('_', "-") == normalized || format!("{f}s") == normalized))
}

/// Whether a (normalized) name passes every `name` rule but the folder match.
pub fn name_is_valid(name: &str) -> bool {
    let n = name.chars().count();
    n > 0
        && n <= MAX_NAME_CHARS
        && name == name.to_lowercase()
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
        && name
            .chars()
            .all(|c| (c.is_alphanumeric() && !unicode_normalization::char::is_combining_mark(c)) || c == '-')
}

/// Characters that render as nothing or reorder text: Unicode tags (U+E0000–E007F), bidi
/// embedding/override/isolate controls, marks and zero-width characters.
pub fn is_hidden(c: char) -> bool {
    matches!(c as u32,
        0xE0000..=0xE007F | 0x202A..=0x202E | 0x2066..=0x2069 | 0x200E | 0x200F | 0x061C | 0x200B..=0x200D | 0x2060 | 0xFEFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(dir: &str, text: &str) -> Vec<&'static str> {
        let ctx = Context {
            dir_name: dir,
            mode: Mode::Default,
        };
        analyze("SKILL.md", text.as_bytes(), &ctx)
            .diagnostics
            .iter()
            .map(|d| d.rule.code)
            .collect()
    }

    #[test]
    fn names_follow_python_isalnum() {
        // Devanagari vowel signs are combining marks: letters for Rust, not for Python.
        assert_eq!(codes("हिंदी", "---\nname: हिंदी\ndescription: d\n---\n"), vec!["SK026"]);
        assert!(codes("навык", "---\nname: навык\ndescription: d\n---\n").is_empty());
    }

    #[test]
    fn empty_metadata_is_an_empty_mapping() {
        assert!(codes("a", "---\nname: a\ndescription: d\nmetadata:\n---\n").is_empty());
        assert_eq!(
            codes("a", "---\nname: a\ndescription: d\nmetadata: [x]\n---\n"),
            vec!["SK034"]
        );
    }

    #[test]
    fn yaml_1_1_scalars_warn_with_the_type() {
        let ctx = Context {
            dir_name: "a",
            mode: Mode::Default,
        };
        let a = analyze("SKILL.md", b"---\nname: a\ndescription: d\nversion: 1.0\n---\n", &ctx);
        assert_eq!(a.diagnostics.len(), 1);
        assert_eq!(
            a.diagnostics[0].message,
            "`version` is read as the string \"1.0\", but PyYAML reads a float"
        );
        assert_eq!(a.model.version.as_deref(), Some("1.0"));
    }
}

//! Validation of one SKILL.md: from bytes to a [`SkillModel`] plus diagnostics.
//!
//! Parsing never fails: every problem is a [`Diagnostic`] and the model holds whatever could be
//! read. Two modes exist. `Default` is what a careful user wants: specification violations
//! are errors, unknown keys and odd metadata are warnings, the superset formats (GAIA, Hermes,
//! OpenClaw, Claude Code) are understood and validated. `Strict` is the agentskills.io
//! standard exactly as its reference validator (`skills-ref` 0.1.0) applies it, minus the
//! deliberate differences listed in `docs/compatibility.md`.

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
    /// The errors that mean the frontmatter could not be read (see [`READ_RULES`]).
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

    fn check_name(&mut self, root: &Node) {
        let Some(e) = root.get("name") else {
            let d = self
                .diag(&rules::SK020, &(0..0), "missing required field `name`")
                .help("add `name: <folder-name>` to the frontmatter");
            let d = Diagnostic {
                span: self.src.span(root.span.start..root.span.start),
                ..d
            };
            self.push(d);
            return;
        };
        let span = e.value.span.clone();
        let raw = match e.value.as_str() {
            Some(s) if !s.trim().is_empty() => s,
            _ => {
                let found = if e.value.as_str().is_some() {
                    "it is empty".to_owned()
                } else {
                    format!("found {}", e.value.describe())
                };
                let d = self.diag(
                    &rules::SK021,
                    &span,
                    format!("`name` must be a non-empty string, {found}"),
                );
                let span = if span.is_empty() { e.key_span.clone() } else { span };
                let d = Diagnostic {
                    span: self.src.span(span),
                    ..d
                };
                self.push(d);
                return;
            }
        };
        self.yaml11_warning("name", &e.value);
        let name: String = raw.trim().nfkc().collect();
        let chars = name.chars().count();
        if chars > MAX_NAME_CHARS {
            let d = self
                .diag(
                    &rules::SK022,
                    &span,
                    format!("skill name `{name}` is {chars} characters; the limit is {MAX_NAME_CHARS}"),
                )
                .help("shorten the name (and rename the folder to match)");
            self.push(d);
        }
        if name != name.to_lowercase() {
            let d = self
                .diag(&rules::SK023, &span, format!("skill name `{name}` must be lowercase"))
                .help(if self.ctx.dir_name.nfkc().collect::<String>() == name.to_lowercase() {
                    format!("use `{}`, like the folder", name.to_lowercase())
                } else {
                    format!("use `{}` (and rename the folder to match)", name.to_lowercase())
                });
            self.push(d);
        }
        if name.starts_with('-') || name.ends_with('-') {
            let d = self.diag(
                &rules::SK024,
                &span,
                format!("skill name `{name}` starts or ends with a hyphen"),
            );
            self.push(d);
        }
        if name.contains("--") {
            let d = self.diag(
                &rules::SK025,
                &span,
                format!("skill name `{name}` contains consecutive hyphens"),
            );
            self.push(d);
        }
        // Python's `str.isalnum` (the reference): letters and numbers, not combining marks.
        let bad: Vec<char> = name
            .chars()
            .filter(|c| !((c.is_alphanumeric() && !unicode_normalization::char::is_combining_mark(*c)) || *c == '-'))
            .collect();
        if !bad.is_empty() {
            let shown: Vec<String> = dedup_chars(&bad)
                .iter()
                .map(|c| format!("`{}`", c.escape_debug()))
                .collect();
            let d = self
                .diag(
                    &rules::SK026,
                    &span,
                    format!("skill name `{name}` contains invalid characters: {}", shown.join(", ")),
                )
                .help("only letters, digits and single hyphens are allowed, e.g. `pdf-tools`");
            self.push(d);
        }
        let dir: String = self.ctx.dir_name.nfkc().collect();
        if dir != name {
            let d = self
                .diag(
                    &rules::SK027,
                    &span,
                    format!("skill name `{name}` does not match its folder `{}`", self.ctx.dir_name),
                )
                .help(match (name_is_valid(&name), name_is_valid(&dir)) {
                    (true, true) => format!("rename the folder to `{name}` or set `name: {dir}`"),
                    (true, false) => format!("rename the folder to `{name}`"),
                    (false, true) => format!("set `name: {dir}` if that is the skill's name"),
                    (false, false) => "choose a valid name and use it for both the folder and `name`".to_owned(),
                });
            self.push(d);
        }
        self.model.name = Some(Text { value: name, span });
    }

    fn check_description(&mut self, root: &Node) {
        let Some(e) = root.get("description") else {
            let d = self
                .diag(
                    &rules::SK028,
                    &(root.span.start..root.span.start),
                    "missing required field `description`",
                )
                .help("add `description:` saying what the skill does and when to use it");
            self.push(d);
            return;
        };
        let span = e.value.span.clone();
        let Some(desc) = e.value.as_str().filter(|s| !s.trim().is_empty()) else {
            let found = if e.value.as_str().is_some() {
                "it is empty".to_owned()
            } else {
                format!("found {}", e.value.describe())
            };
            let span = if span.is_empty() { e.key_span.clone() } else { span };
            let d = self.diag(
                &rules::SK029,
                &span,
                format!("`description` must be a non-empty string, {found}"),
            );
            self.push(d);
            return;
        };
        let n = desc.chars().count();
        if n > MAX_DESCRIPTION_CHARS {
            let d = self
                .diag(
                    &rules::SK030,
                    &span,
                    format!("`description` is {n} characters; the limit is {MAX_DESCRIPTION_CHARS}"),
                )
                .help("keep the trigger signal short; move details into the body");
            self.push(d);
        }
        self.yaml11_warning("description", &e.value);
        self.model.description = Some(Text {
            value: desc.trim().to_owned(),
            span,
        });
    }

    /// `SK012`: a plain scalar in a string field that PyYAML would type differently.
    fn yaml11_warning(&mut self, field: &str, node: &Node) {
        let Some(s) = node.as_scalar() else { return };
        let Some(t) = s.pyyaml_type() else { return };
        let d = self
            .diag(
                &rules::SK012,
                &node.span,
                format!(
                    "`{field}` is read as the string \"{}\", but PyYAML reads {}",
                    s.value,
                    t.describe()
                ),
            )
            .help(format!("quote it so every parser agrees: `{field}: \"{}\"`", s.value));
        self.push(d);
    }

    fn check_hidden_unicode(&mut self, root: &Node) {
        let mut found = Vec::new();
        root.for_each_scalar(&mut |value, span| {
            if let Some(c) = value.chars().find(|c| is_hidden(*c)) {
                found.push((c, span.clone()));
            }
        });
        for (c, span) in found {
            // Point at the character itself when it is written literally.
            let at = self.src.text[span.clone()]
                .find(c)
                .map(|i| span.start + i..span.start + i + c.len_utf8())
                .unwrap_or(span);
            let d = self
                .diag(
                    &rules::SK014,
                    &at,
                    format!(
                        "invisible character U+{:04X} ({}) in a frontmatter value",
                        c as u32,
                        hidden_kind(c)
                    ),
                )
                .help("remove it: hidden characters can smuggle instructions past a reviewer");
            self.push(d);
        }
    }

    fn check_default_mode_fields(&mut self, root: &Node) {
        if let Some(e) = root.get("license") {
            match e.value.as_str() {
                Some(l) => {
                    self.model.license = Some(Text {
                        value: l.to_owned(),
                        span: e.value.span.clone(),
                    });
                    self.yaml11_warning("license", &e.value);
                }
                None => {
                    let d = self
                        .diag(
                            &rules::SK034,
                            &e.value.span,
                            format!("`license` must be a string, found {}", e.value.describe()),
                        )
                        .help("name one license (e.g. `MIT`) or a file (`Complete terms in LICENSE.txt`)");
                    self.push(d);
                }
            }
        }
        if let Some(e) = root.get("version") {
            match e.value.as_str() {
                Some(v) => {
                    self.model.version = Some(v.to_owned());
                    self.yaml11_warning("version", &e.value);
                }
                None => {
                    let d = self.diag(
                        &rules::SK034,
                        &e.value.span,
                        format!("`version` must be a string, found {}", e.value.describe()),
                    );
                    self.push(d);
                }
            }
        }
        if let Some(e) = root.get("allowed-tools") {
            self.check_allowed_tools(&e.value);
        }
        if let Some(e) = root.get("metadata") {
            self.check_metadata(&e.value);
        }
        self.check_hermes_fields(root);
        for key in ["user-invocable", "disable-model-invocation"] {
            if let Some(e) = root.get(key)
                && e.value.as_scalar().map(|s| s.core_type()) != Some(yaml::ScalarType::Bool)
            {
                let d = self.diag(
                    &rules::SK056,
                    &e.value.span,
                    format!("`{key}` must be true or false, found {}", e.value.describe()),
                );
                self.push(d);
            }
        }
        let mut bins = std::mem::take(&mut self.model.bins);
        bins.sort();
        bins.dedup();
        self.model.bins = bins;
        let mut creds = std::mem::take(&mut self.model.credentials);
        creds.sort();
        creds.dedup_by(|a, b| a.binding == b.binding && a.kind == b.kind);
        self.model.credentials = creds;
    }

    /// `SK019`: `allowed-tools` as a YAML list or with commas, when every entry is well formed
    /// (so that the standard's spelling is known).
    fn check_tools_spelling(&mut self, node: &Node) {
        let Some(spelled) = tools::standard_spelling(node) else {
            return;
        };
        let how = if node.as_seq().is_some() {
            "is a YAML list"
        } else {
            "separates its entries with commas"
        };
        let d = self
            .diag(&rules::SK019, &node.span, format!("`allowed-tools` {how}"))
            .help(format!(
                "the standard spells it as one space-separated string: `allowed-tools: {spelled}`"
            ));
        self.push(d);
    }

    fn check_allowed_tools(&mut self, node: &Node) {
        let entries: Vec<(String, Range<usize>)> = match &node.kind {
            NodeKind::Scalar(s) => tools::split_entries(&s.value)
                .into_iter()
                .map(|e| (e.to_owned(), node.span.clone()))
                .collect(),
            NodeKind::Seq { items, .. } => {
                let mut out = Vec::new();
                for item in items {
                    match item.as_str() {
                        Some(s) => out.extend(
                            tools::split_entries(s)
                                .into_iter()
                                .map(|e| (e.to_owned(), item.span.clone())),
                        ),
                        None => {
                            let d = self.diag(
                                &rules::SK034,
                                &item.span,
                                format!("an `allowed-tools` entry must be a string, found {}", item.describe()),
                            );
                            self.push(d);
                        }
                    }
                }
                out
            }
            NodeKind::Map { .. } => {
                let d = self
                    .diag(
                        &rules::SK034,
                        &node.span,
                        "`allowed-tools` must be a string or a list, found a mapping",
                    )
                    .help("e.g. `allowed-tools: Bash(git:*) Read`");
                self.push(d);
                return;
            }
        };
        for (entry, span) in entries {
            match tools::parse_token(&entry) {
                Ok(t) => self.model.allowed_tools.push(t),
                Err(why) => {
                    let d = self
                        .diag(&rules::SK036, &span, format!("malformed `allowed-tools` entry: {why}"))
                        .help("write `Tool` or `Tool(pattern)`, e.g. `Bash(git:*)`");
                    self.push(d);
                }
            }
        }
    }

    fn check_metadata(&mut self, node: &Node) {
        // `metadata:` with nothing after it is an empty mapping, not a type error.
        if node
            .as_scalar()
            .is_some_and(|s| s.core_type() == yaml::ScalarType::Null)
        {
            return;
        }
        let Some(entries) = node.as_map() else {
            let d = self
                .diag(
                    &rules::SK034,
                    &node.span,
                    format!("`metadata` must be a mapping, found {}", node.describe()),
                )
                .help("write `metadata:` followed by indented `key: value` lines");
            self.push(d);
            return;
        };
        for e in entries {
            let key = e.key.as_str();
            if key == "gaia" {
                let g = gaia::analyze(self.src, &e.value, &mut self.diags);
                self.model
                    .credentials
                    .extend(g.env_vars.iter().map(|v| env_credential(v, None, false)));
                self.model.gaia = Some(g);
            } else if key == "hermes" {
                if e.value.as_map().is_some() {
                    // `skillc migrate` moves Hermes' top-level fields here; read them alike.
                    self.check_hermes_fields(&e.value);
                } else {
                    let d = self.diag(
                        &rules::SK056,
                        &e.value.span,
                        format!("`metadata.hermes` must be a mapping, found {}", e.value.describe()),
                    );
                    self.push(d);
                }
            } else if model::OPENCLAW_NAMESPACES.contains(&key) {
                self.check_openclaw(key, &e.value);
            } else if key == "version" && e.value.as_str().is_some() {
                if self.model.version.is_none() {
                    self.model.version = e.value.as_str().map(str::to_owned);
                }
                self.yaml11_warning("metadata.version", &e.value);
            } else if e.value.as_scalar().is_none() {
                let d = self
                    .diag(
                        &rules::SK035,
                        &e.value.span,
                        format!("`metadata.{key}` is {}, not a string", e.value.describe()),
                    )
                    .help("the standard defines metadata as string keys to string values; other clients may drop it");
                self.push(d);
            } else {
                self.yaml11_warning(&format!("metadata.{key}"), &e.value);
            }
        }
    }

    fn check_openclaw(&mut self, ns: &str, node: &Node) {
        if node.as_map().is_none() {
            let d = self.diag(
                &rules::SK056,
                &node.span,
                format!("`metadata.{ns}` must be a mapping, found {}", node.describe()),
            );
            self.push(d);
            return;
        }
        if let Some(req) = node.get_value("requires") {
            if req.as_map().is_none() {
                let d = self.diag(
                    &rules::SK056,
                    &req.span,
                    format!("`metadata.{ns}.requires` must be a mapping, found {}", req.describe()),
                );
                self.push(d);
            } else {
                for (key, is_env) in [("bins", false), ("anyBins", false), ("env", true)] {
                    let Some(v) = req.get_value(key) else { continue };
                    match v.strings() {
                        Some(list) if is_env => self
                            .model
                            .credentials
                            .extend(list.iter().map(|n| env_credential(n, None, false))),
                        Some(list) => self.model.bins.extend(list),
                        None => {
                            let d = self.diag(
                                &rules::SK056,
                                &v.span,
                                format!(
                                    "`metadata.{ns}.requires.{key}` must be a list of strings, found {}",
                                    v.describe()
                                ),
                            );
                            self.push(d);
                        }
                    }
                }
            }
        }
        if let Some(p) = node.get_value("primaryEnv").and_then(Node::as_str) {
            self.model.credentials.push(env_credential(p, None, false));
        }
    }

    fn check_hermes_fields(&mut self, root: &Node) {
        if let Some(p) = root.get_value("platforms") {
            match p.strings() {
                Some(list) => self.model.platforms = list,
                None => {
                    let d = self.diag(
                        &rules::SK056,
                        &p.span,
                        format!("`platforms` must be a list of strings, found {}", p.describe()),
                    );
                    self.push(d);
                }
            }
        }
        if let Some(p) = root.get_value("prerequisites") {
            if p.as_map().is_none() {
                let d = self.diag(
                    &rules::SK056,
                    &p.span,
                    format!(
                        "`prerequisites` must be a mapping with `commands` and `env_vars`, found {}",
                        p.describe()
                    ),
                );
                self.push(d);
            } else {
                for key in ["commands", "env_vars"] {
                    let Some(v) = p.get_value(key) else { continue };
                    match v.strings() {
                        Some(list) if key == "commands" => self.model.bins.extend(list),
                        Some(list) => self
                            .model
                            .credentials
                            .extend(list.iter().map(|n| env_credential(n, None, false))),
                        None => {
                            let d = self.diag(
                                &rules::SK056,
                                &v.span,
                                format!(
                                    "`prerequisites.{key}` must be a list of strings, found {}",
                                    v.describe()
                                ),
                            );
                            self.push(d);
                        }
                    }
                }
            }
        }
        for (key, kind, name_key) in [
            ("required_environment_variables", CredentialKind::Env, "name"),
            ("required_credential_files", CredentialKind::File, "path"),
        ] {
            let Some(v) = root.get_value(key) else { continue };
            let Some(items) = v.as_seq() else {
                let d = self.diag(
                    &rules::SK056,
                    &v.span,
                    format!("`{key}` must be a list, found {}", v.describe()),
                );
                self.push(d);
                continue;
            };
            for item in items {
                let (binding, prompt, optional) = match &item.kind {
                    NodeKind::Scalar(s) => (Some(s.value.clone()), None, false),
                    NodeKind::Map { .. } => (
                        item.get_value(name_key).and_then(Node::as_str).map(str::to_owned),
                        item.get_value("prompt")
                            .or_else(|| item.get_value("description"))
                            .and_then(Node::as_str)
                            .map(str::to_owned),
                        item.get_value("optional").and_then(Node::as_str) == Some("true"),
                    ),
                    NodeKind::Seq { .. } => (None, None, false),
                };
                match binding {
                    Some(b) if !b.trim().is_empty() => self.model.credentials.push(Credential {
                        binding: b,
                        kind,
                        prompt,
                        optional,
                    }),
                    _ => {
                        let d = self.diag(
                            &rules::SK056,
                            &item.span,
                            format!("each `{key}` entry needs a `{name_key}`"),
                        );
                        self.push(d);
                    }
                }
            }
        }
    }
}

fn env_credential(name: &str, prompt: Option<String>, optional: bool) -> Credential {
    Credential {
        binding: name.to_owned(),
        kind: CredentialKind::Env,
        prompt,
        optional,
    }
}

fn dedup_chars(chars: &[char]) -> Vec<char> {
    let mut out: Vec<char> = Vec::new();
    for c in chars {
        if !out.contains(c) {
            out.push(*c);
        }
    }
    out
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

/// Known misspellings of standard fields.
pub fn near_miss(key: &str) -> Option<&'static str> {
    let normalized: String = key.to_ascii_lowercase().replace('_', "-");
    model::STANDARD_FIELDS
        .iter()
        .chain(model::SUPERSET_FIELDS.iter().map(|(k, _)| k))
        .copied()
        .find(|f| *f != key && (f.replace('_', "-") == normalized || format!("{f}s") == normalized))
}

/// Characters that render as nothing or reorder text: Unicode tags (U+E0000–E007F), bidi
/// embedding/override/isolate controls, marks and zero-width characters.
pub fn is_hidden(c: char) -> bool {
    matches!(c as u32,
        0xE0000..=0xE007F | 0x202A..=0x202E | 0x2066..=0x2069 | 0x200E | 0x200F | 0x061C | 0x200B..=0x200D | 0x2060 | 0xFEFF)
}

fn hidden_kind(c: char) -> &'static str {
    match c as u32 {
        0xE0000..=0xE007F => "Unicode tag character",
        0x202A..=0x202E | 0x2066..=0x2069 | 0x200E | 0x200F | 0x061C => "bidirectional control",
        _ => "zero-width character",
    }
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

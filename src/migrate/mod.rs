//! `skillc migrate`: rewrites a Hermes or OpenClaw skill's frontmatter into the GAIA format
//! (a `metadata.gaia` block), as a pure function of the SKILL.md text.
//!
//! Contract (issue 7; seed 001, "Cross-format compatibility & migration"):
//! - what GAIA models is written under `metadata.gaia` (`requirements.env_vars`,
//!   `requirements.dependencies`, `requirements.node_dependencies`, `permissions`,
//!   `tools_required`); the tier is reset to `experimental`;
//! - everything else of the vendor is kept under `metadata.hermes` / `metadata.<openclaw
//!   namespace>` — Hermes' top-level keys move there — so nothing is lost; a field whose GAIA
//!   form carries less than the original (prompts, install labels) is kept whole as well;
//! - a capability GAIA cannot grant at the `experimental` tier (running binaries, reading
//!   credential files, …) is a blocker: reported, kept under the vendor namespace, never
//!   dropped; fields a person must decide on are "needs review";
//! - the Markdown body is copied byte for byte; comments in the frontmatter are not kept
//!   (the frontmatter is written anew, block style, see [`crate::skill::yaml_out`]);
//! - the result is checked with the default rules; a result with errors is not produced.
//!
//! Architecture invariant: no IO here; the CLI (`cli/migrate.rs`) reads and writes files.

use serde::Serialize;

use crate::diag::Source;
use crate::diag::{Diagnostic, Severity, Span};
use crate::model::Mode;
use crate::rules;
use crate::skill::frontmatter;
use crate::skill::gaia::{Permission, SecurityTier};
use crate::skill::model::OPENCLAW_NAMESPACES;
use crate::skill::validate::{self, Context};
use crate::skill::writer::{self, Layout};
use crate::skill::yaml::{self, Node, NodeKind};
use crate::skill::yaml_out::Value;

/// Which vendor format to migrate from (`--from`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FromFormat {
    /// Hermes Agent: top-level `required_environment_variables`, `prerequisites`,
    /// `required_credential_files`, `platforms`, `setup`, `author`, and `metadata.hermes`.
    Hermes,
    /// OpenClaw: `metadata.openclaw` (or `clawdbot`, `clawdis`, `moltbot`).
    OpenClaw,
    /// Whichever of the two the skill uses (both when it uses both).
    Auto,
}

/// A vendor namespace found in a skill.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    /// Hermes Agent.
    Hermes,
    /// OpenClaw and its former names.
    OpenClaw,
}

/// What happened to one field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FieldStatus {
    /// Written into `metadata.gaia` (the original may be kept too, see the message).
    Mapped,
    /// No GAIA equivalent and no capability: kept under the vendor namespace.
    Preserved,
    /// Kept under the vendor namespace; a person must decide what it means for GAIA.
    NeedsReview,
    /// A capability GAIA cannot grant at the `experimental` tier: kept, reported, not granted.
    Blocked,
    /// Set by the migration itself (the tier).
    Reset,
}

impl FieldStatus {
    /// The report word: `mapped`, `preserved`, `needs review`, `blocked`, `reset`.
    pub fn label(self) -> &'static str {
        match self {
            FieldStatus::Mapped => "mapped",
            FieldStatus::Preserved => "preserved",
            FieldStatus::NeedsReview => "needs review",
            FieldStatus::Blocked => "blocked",
            FieldStatus::Reset => "reset",
        }
    }
}

/// One line of the review report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldReport {
    /// The field in the original frontmatter (`metadata.openclaw.requires.bins`,
    /// `required_environment_variables`).
    pub field: String,
    /// What happened to it.
    pub status: FieldStatus,
    /// Where it went in `metadata.gaia`, when mapped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// For blockers, a stable reason key (`tier-ceiling:shell`, `tier-ceiling:filesystem`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What a reviewer needs to know.
    pub message: String,
    /// 1-based line of the field in the original SKILL.md.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// `MG001` (blocked) or `MG002` (needs review).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'static str>,
    /// Where the field's value is in the original SKILL.md.
    #[serde(skip)]
    pub span: Span,
}

impl FieldReport {
    /// The line as a diagnostic (`MG001` blocked, `MG002` needs review) in `file`, for
    /// renderers that show file:line:col; `None` for the other statuses.
    pub fn diagnostic(&self, file: &str) -> Option<Diagnostic> {
        let rule = match self.status {
            FieldStatus::Blocked => &rules::MG001,
            FieldStatus::NeedsReview => &rules::MG002,
            _ => return None,
        };
        Some(Diagnostic::new(
            rule,
            file,
            self.span,
            format!("`{}`: {}", self.field, self.message),
        ))
    }
}

/// The overall outcome for one skill.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Migrated, nothing blocked.
    Migrated,
    /// Migrated and written, but at least one capability is blocked.
    Blocked,
    /// Nothing to migrate (no metadata of the requested format).
    Skipped,
    /// No result: the input cannot be read, or the result would not pass `skillc check`.
    Failed,
}

/// The result of migrating one SKILL.md.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Migration {
    /// The vendor formats migrated.
    pub vendors: Vec<Vendor>,
    /// The new SKILL.md, when the outcome is `Migrated` or `Blocked`.
    pub output: Option<String>,
    /// The review report, in field order.
    pub fields: Vec<FieldReport>,
    /// Why the skill failed or was skipped (`MG003`, `MG004`), and the errors `skillc check`
    /// finds in the result or the input.
    pub diagnostics: Vec<Diagnostic>,
    /// The outcome.
    pub outcome: Outcome,
    /// Why the outcome is `Failed`: `unreadable` (no readable frontmatter), `fails-check`
    /// (the skill fails `skillc check` already), `vendor-shape` (`metadata` or a vendor
    /// namespace is not a mapping), `gaia-ceiling` (an existing `metadata.gaia` grants more
    /// than `experimental` allows), `bug` (the result fails `skillc check`, the input did not).
    pub failure: Option<&'static str>,
}

impl Migration {
    /// The distinct blocker reasons, sorted.
    pub fn blocked_reasons(&self) -> Vec<String> {
        let mut r: Vec<String> = self.fields.iter().filter_map(|f| f.reason.clone()).collect();
        r.sort();
        r.dedup();
        r
    }
}

/// Hermes keys written at the top level of SKILL.md, moved under `metadata.hermes`.
pub const HERMES_TOP_LEVEL: &[&str] = &[
    "required_environment_variables",
    "prerequisites",
    "required_credential_files",
    "platforms",
    "setup",
    "author",
];

/// OpenClaw keys written at the top level, moved under the OpenClaw namespace.
pub const OPENCLAW_TOP_LEVEL: &[&str] = &["homepage", "user-invocable"];

/// Hermes toolsets and the GAIA permission each needs (Hermes `toolsets.py` names).
const TOOLSETS: &[(&str, &str)] = &[
    ("web", "network:read"),
    ("terminal", "shell:execute"),
    ("code_execution", "shell:execute"),
    ("file", "filesystem:write"),
    ("files", "filesystem:write"),
    ("browser", "network:write"),
];

/// The GAIA tier every migrated skill lands in (seed 001: "Every migrated skill lands
/// `experimental`").
const TIER: SecurityTier = SecurityTier::Experimental;

/// The detected vendor formats of a frontmatter root.
pub fn detect(root: &Node) -> Vec<Vendor> {
    let mut v = Vec::new();
    let md = root.get_value("metadata");
    if HERMES_TOP_LEVEL
        .iter()
        .filter(|k| **k != "author")
        .any(|k| root.get(k).is_some())
        || md.and_then(|m| m.get("hermes")).is_some()
    {
        v.push(Vendor::Hermes);
    }
    if md.is_some_and(|m| OPENCLAW_NAMESPACES.iter().any(|ns| m.get(ns).is_some())) {
        v.push(Vendor::OpenClaw);
    }
    v
}

/// Migrates the SKILL.md `text` of the folder `dir_name`, shown as `file` in diagnostics.
pub fn migrate(file: &str, dir_name: &str, text: &str, from: FromFormat) -> Migration {
    let mut m = Migration {
        vendors: Vec::new(),
        output: None,
        fields: Vec::new(),
        diagnostics: Vec::new(),
        outcome: Outcome::Failed,
        failure: Some("unreadable"),
    };
    let ctx = Context {
        dir_name,
        mode: Mode::Default,
    };
    let before = validate::analyze(file, text.as_bytes(), &ctx);
    let (Some(root), Some(body)) = (before.frontmatter.as_ref(), before.body.clone()) else {
        m.diagnostics.push(
            Diagnostic::new(
                &rules::MG003,
                file,
                Span::at(crate::diag::Pos::START),
                "the frontmatter cannot be read, so there is nothing to migrate",
            )
            .help("run `skillc check` on the skill and fix its errors first"),
        );
        m.diagnostics.extend(errors(&before.diagnostics));
        return m;
    };
    if before.read_errors().next().is_some() {
        m.diagnostics.push(Diagnostic::new(
            &rules::MG003,
            file,
            Span::at(crate::diag::Pos::START),
            "the frontmatter is ambiguous (duplicate keys, anchors, tags or merge keys)",
        ));
        m.diagnostics.extend(errors(&before.diagnostics));
        return m;
    }
    let detected = detect(root);
    m.vendors = match from {
        FromFormat::Auto => detected,
        FromFormat::Hermes => detected.into_iter().filter(|v| *v == Vendor::Hermes).collect(),
        FromFormat::OpenClaw => detected.into_iter().filter(|v| *v == Vendor::OpenClaw).collect(),
    };
    if m.vendors.is_empty() {
        m.outcome = Outcome::Skipped;
        m.failure = None;
        m.diagnostics.push(
            Diagnostic::new(
                &rules::MG004,
                file,
                Span::at(crate::diag::Pos::START),
                match from {
                    FromFormat::Hermes => "no Hermes metadata to migrate",
                    FromFormat::OpenClaw => "no OpenClaw metadata to migrate",
                    FromFormat::Auto => "no Hermes or OpenClaw metadata to migrate",
                },
            )
            .severity(Severity::Warning),
        );
        return m;
    }
    let src = Source::new(file, text);
    let mut w = Writer {
        src: &src,
        fields: Vec::new(),
        gaia: Gaia::default(),
        failures: Vec::new(),
        failure: None,
    };
    let rewritten = w.rewrite(root, &m.vendors);
    if let Some(split) = frontmatter::split(&src).0 {
        w.comments(split.frontmatter);
    }
    m.fields = w.fields;
    m.diagnostics = w.failures;
    m.failure = w.failure;
    let Some(out_entries) = rewritten else {
        return m;
    };
    // The frontmatter writer shared with `export` and `check --fix`; the BOM is kept.
    let Some(layout) = Layout::of_text(text) else {
        return m;
    };
    let new = writer::replace_head(text, body.clone(), &out_entries, layout);
    // The result must pass `skillc check` (default rules) before anything is written.
    let after = validate::analyze(file, new.as_bytes(), &ctx);
    let errs: Vec<Diagnostic> = errors(&after.diagnostics);
    if !errs.is_empty() {
        let had_before = !errors(&before.diagnostics).is_empty();
        m.failure = Some(if had_before { "fails-check" } else { "bug" });
        m.diagnostics.push(
            Diagnostic::new(
                &rules::MG003,
                file,
                Span::at(crate::diag::Pos::START),
                if had_before {
                    "the skill fails `skillc check` before migration; the migrated skill would too"
                } else {
                    "the migrated frontmatter fails `skillc check` (a skillc bug: please report it)"
                },
            )
            .help("run `skillc check` on the skill and fix its errors, then migrate again"),
        );
        m.diagnostics
            .extend(if had_before { errors(&before.diagnostics) } else { errs });
        return m;
    }
    m.outcome = if m.fields.iter().any(|f| f.status == FieldStatus::Blocked) {
        Outcome::Blocked
    } else {
        Outcome::Migrated
    };
    m.output = Some(new);
    m.failure = None;
    m
}

fn errors(diags: &[Diagnostic]) -> Vec<Diagnostic> {
    diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .cloned()
        .collect()
}

/// What the migration adds to `metadata.gaia`, in first-seen order, de-duplicated.
#[derive(Default)]
struct Gaia {
    permissions: Vec<String>,
    env_vars: Vec<String>,
    dependencies: Vec<String>,
    node_dependencies: Vec<String>,
    tools_required: Vec<String>,
}

fn push_unique(list: &mut Vec<String>, items: impl IntoIterator<Item = String>) {
    for i in items {
        if !list.contains(&i) {
            list.push(i);
        }
    }
}

struct Writer<'a> {
    src: &'a Source<'a>,
    fields: Vec<FieldReport>,
    gaia: Gaia,
    failures: Vec<Diagnostic>,
    failure: Option<&'static str>,
}

/// Strings of a string or a list of strings.
fn strings(node: &Node) -> Option<Vec<String>> {
    node.strings()
}

impl Writer<'_> {
    fn report(
        &mut self,
        field: &str,
        node: &Node,
        status: FieldStatus,
        target: Option<&str>,
        reason: Option<&str>,
        message: impl Into<String>,
    ) {
        let span = self.src.span(node.span.clone());
        self.fields.push(FieldReport {
            field: field.to_owned(),
            status,
            target: target.map(str::to_owned),
            reason: reason.map(str::to_owned),
            message: message.into(),
            line: span.start.line,
            column: span.start.column,
            code: match status {
                FieldStatus::Blocked => Some(rules::MG001.code),
                FieldStatus::NeedsReview => Some(rules::MG002.code),
                _ => None,
            },
            span,
        });
    }

    /// Comments cannot be carried over (the frontmatter is written anew): report the first
    /// one so a person can move what matters into the body. Whole-line comments, and ` #`
    /// on lines without quotes (a `#` inside a quoted value is not a comment).
    fn comments(&mut self, range: std::ops::Range<usize>) {
        let text = &self.src.text[range.clone()];
        let mut offset = range.start;
        let mut found = Vec::new();
        for line in text.split_inclusive('\n') {
            let t = line.trim_start();
            let trailing = !line.contains(['"', '\'']) && line.contains(" #");
            if t.starts_with('#') || trailing {
                found.push(offset + line.find('#').unwrap_or(0));
            }
            offset += line.len();
        }
        if let Some(&first) = found.first() {
            let node = Node {
                kind: NodeKind::Scalar(yaml::Scalar {
                    value: String::new(),
                    plain: true,
                }),
                span: first..first,
            };
            self.report(
                "frontmatter comments",
                &node,
                FieldStatus::NeedsReview,
                None,
                None,
                format!(
                    "{} comment line(s) are not kept: the frontmatter is written anew. Move what matters into the body",
                    found.len()
                ),
            );
        }
    }

    fn blocked(&mut self, field: &str, node: &Node, permission: &str, what: &str, kept: &str) {
        let domain = permission.split(':').next().unwrap_or(permission);
        let ceiling = TIER.ceiling().map(|c| c.join(", ")).unwrap_or_default();
        self.report(
            field,
            node,
            FieldStatus::Blocked,
            None,
            Some(&format!("tier-ceiling:{domain}")),
            format!(
                "{what} needs `{permission}`, above the `experimental` ceiling ({ceiling}); kept under `{kept}`, not granted. \
                 To grant it, have the skill signed and reviewed, raise `security_tier`, and add the permission"
            ),
        );
    }

    /// Builds the new top-level entries; `None` when the skill cannot be migrated (the
    /// reasons are in `failures`).
    fn rewrite(&mut self, root: &Node, vendors: &[Vendor]) -> Option<Vec<(String, Value)>> {
        let entries = root.as_map().unwrap_or_default();
        let md_node = root.get_value("metadata");
        let mut metadata = match md_node.map(|n| (&n.kind, n)) {
            None => Value::Map(Vec::new()),
            Some((NodeKind::Map { .. }, n)) => Value::from_node(n),
            Some((NodeKind::Scalar(s), _)) if s.plain && s.value.is_empty() => Value::Map(Vec::new()),
            Some((_, n)) => {
                self.failures.push(
                    Diagnostic::new(
                        &rules::MG003,
                        self.src.file,
                        self.src.span(n.span.clone()),
                        format!("`metadata` is {}, not a mapping", n.describe()),
                    )
                    .help("make `metadata` a mapping, then migrate again"),
                );
                self.failure = Some("vendor-shape");
                return None;
            }
        };
        let mut top: Vec<(String, Value)> = Vec::new();
        let hermes = vendors.contains(&Vendor::Hermes);
        let openclaw = vendors.contains(&Vendor::OpenClaw);
        // The OpenClaw namespace that receives OpenClaw's top-level keys: the first present.
        let oc_ns = md_node
            .and_then(|m| OPENCLAW_NAMESPACES.iter().find(|ns| m.get(ns).is_some()))
            .copied()
            .unwrap_or("openclaw");
        let mut moved_hermes: Vec<(String, &Node)> = Vec::new();
        let mut moved_oc: Vec<(String, &Node)> = Vec::new();
        for e in entries {
            let key = e.key.as_str();
            let (moved, ns) = if hermes && HERMES_TOP_LEVEL.contains(&key) {
                (&mut moved_hermes, "hermes")
            } else if openclaw && OPENCLAW_TOP_LEVEL.contains(&key) {
                (&mut moved_oc, oc_ns)
            } else {
                if key != "metadata" {
                    top.push((e.key.clone(), Value::from_node(&e.value)));
                } else {
                    top.push(("metadata".into(), Value::Map(Vec::new())));
                }
                continue;
            };
            if md_node.and_then(|m| m.get_value(ns)).and_then(|n| n.get(key)).is_some() {
                // Both `key` and `metadata.<ns>.key`: leave the top-level one where it is.
                self.report(
                    key,
                    &e.value,
                    FieldStatus::NeedsReview,
                    None,
                    None,
                    format!("also present as `metadata.{ns}.{key}`; left at the top level: merge the two by hand"),
                );
                top.push((e.key.clone(), Value::from_node(&e.value)));
                continue;
            }
            moved.push((e.key.clone(), &e.value));
        }
        if !top.iter().any(|(k, _)| k == "metadata") {
            top.push(("metadata".into(), Value::Map(Vec::new())));
        }

        // Vendor namespaces: handle each field; what is kept stays in the residue.
        // A vendor namespace that is not a mapping cannot receive the moved keys.
        let mut namespaces: Vec<&str> = Vec::new();
        if hermes {
            namespaces.push("hermes");
        }
        if openclaw {
            namespaces.extend(OPENCLAW_NAMESPACES);
        }
        for ns in namespaces {
            if let Some(n) = md_node.and_then(|m| m.get_value(ns))
                && n.as_map().is_none()
            {
                self.failures.push(
                    Diagnostic::new(
                        &rules::MG003,
                        self.src.file,
                        self.src.span(n.span.clone()),
                        format!("`metadata.{ns}` is {}, not a mapping", n.describe()),
                    )
                    .help(format!("make `metadata.{ns}` a mapping, then migrate again")),
                );
                self.failure = Some("vendor-shape");
                return None;
            }
        }
        if hermes {
            let existing = md_node.and_then(|m| m.get_value("hermes"));
            let mut residue = existing.map(Value::from_node).unwrap_or(Value::Map(Vec::new()));
            for (k, n) in &moved_hermes {
                residue.set(k, Value::from_node(n));
            }
            for (k, n) in &moved_hermes {
                self.hermes_field(k, k, n, &mut residue);
            }
            for e in existing.and_then(Node::as_map).unwrap_or_default() {
                let field = format!("metadata.hermes.{}", e.key);
                self.hermes_field(&e.key, &field, &e.value, &mut residue);
            }
            metadata.set("hermes", residue);
            if metadata.get("hermes").is_some_and(Value::is_empty_collection) {
                metadata.remove("hermes");
            }
        }
        if openclaw {
            for ns in OPENCLAW_NAMESPACES {
                let Some(n) = md_node.and_then(|m| m.get_value(ns)) else {
                    continue;
                };
                let mut residue = Value::from_node(n);
                if *ns == oc_ns {
                    for (k, v) in &moved_oc {
                        residue.set(k, Value::from_node(v));
                    }
                    for (k, v) in &moved_oc {
                        let what = format!("moved to `metadata.{ns}.{k}`");
                        let msg = if k == "user-invocable" {
                            format!("{what}: GAIA has no equivalent (skills are chosen by relevance)")
                        } else {
                            what
                        };
                        self.report(k, v, FieldStatus::Preserved, None, None, msg);
                    }
                }
                for e in n.as_map().unwrap_or_default() {
                    let field = format!("metadata.{ns}.{}", e.key);
                    self.openclaw_field(ns, &e.key, &field, &e.value, &mut residue);
                }
                if residue.is_empty_collection() {
                    metadata.remove(ns);
                } else {
                    metadata.set(ns, residue);
                }
            }
        }

        // metadata.gaia: the existing block (if any), tier reset, additions merged.
        let existing = md_node.and_then(|m| m.get_value("gaia"));
        let mut gaia = match existing {
            Some(n) if n.as_map().is_some() => Value::from_node(n),
            Some(n) => {
                self.failures.push(
                    Diagnostic::new(
                        &rules::MG003,
                        self.src.file,
                        self.src.span(n.span.clone()),
                        format!("`metadata.gaia` is {}, not a mapping", n.describe()),
                    )
                    .help("fix or remove `metadata.gaia`, then migrate again"),
                );
                self.failure = Some("vendor-shape");
                return None;
            }
            None => Value::Map(Vec::new()),
        };
        if let Some(perms) = existing.and_then(|g| g.get_value("permissions")).and_then(Node::as_seq) {
            for p in perms {
                if let Some(perm) = p.as_str().and_then(|t| Permission::parse(t).ok())
                    && !TIER.allows(&perm)
                {
                    self.failures.push(
                        Diagnostic::new(
                            &rules::MG003,
                            self.src.file,
                            self.src.span(p.span.clone()),
                            format!("`metadata.gaia` already grants `{perm}`, above the `experimental` ceiling"),
                        )
                        .help("a migrated skill lands `experimental`: remove the permission by hand (or keep the skill unmigrated)"),
                    );
                }
            }
            if !self.failures.is_empty() {
                self.failure = Some("gaia-ceiling");
                return None;
            }
        }
        let was = existing
            .and_then(|g| g.get_value("security_tier"))
            .and_then(Node::as_str)
            .map(str::to_owned);
        let tier_node = existing.and_then(|g| g.get_value("security_tier")).unwrap_or(root);
        let msg = match was.as_deref() {
            Some(t) if t != TIER.as_str() => format!("`{t}` reset to `experimental`: a migrated skill re-earns trust"),
            Some(_) => "already `experimental`".to_owned(),
            None => "set to `experimental`: a migrated skill re-earns trust".to_owned(),
        };
        self.report(
            "metadata.gaia.security_tier",
            tier_node,
            FieldStatus::Reset,
            None,
            None,
            msg,
        );
        let mut with_tier = vec![("security_tier".to_owned(), Value::Str(TIER.as_str().into()))];
        if let Value::Map(entries) = gaia {
            with_tier.extend(entries.into_iter().filter(|(k, _)| k != "security_tier"));
        }
        gaia = Value::Map(with_tier);
        let add = std::mem::take(&mut self.gaia);
        merge_list(&mut gaia, &["permissions"], add.permissions);
        merge_list(&mut gaia, &["requirements", "env_vars"], add.env_vars);
        merge_list(&mut gaia, &["requirements", "dependencies"], add.dependencies);
        merge_list(&mut gaia, &["requirements", "node_dependencies"], add.node_dependencies);
        merge_list(&mut gaia, &["tools_required"], add.tools_required);
        // `gaia` first under metadata, the rest in source order.
        if let Value::Map(entries) = &mut metadata {
            entries.retain(|(k, _)| k != "gaia");
            entries.insert(0, ("gaia".into(), gaia));
        }
        for (k, v) in &mut top {
            if k == "metadata" {
                *v = std::mem::replace(&mut metadata, Value::Map(Vec::new()));
            }
        }
        Some(top)
    }

    fn hermes_field(&mut self, key: &str, field: &str, node: &Node, residue: &mut Value) {
        let kept = format!("metadata.hermes.{key}");
        match key {
            "required_environment_variables" => {
                let Some(items) = node.as_seq() else {
                    self.report(
                        field,
                        node,
                        FieldStatus::NeedsReview,
                        None,
                        None,
                        format!("is {}, not a list; kept", node.describe()),
                    );
                    return;
                };
                let mut names = Vec::new();
                let mut extra = false;
                for item in items {
                    match &item.kind {
                        NodeKind::Scalar(s) if !s.value.trim().is_empty() => names.push(s.value.clone()),
                        NodeKind::Map { entries, .. } => match item.get_value("name").and_then(Node::as_str) {
                            Some(n) if !n.trim().is_empty() => {
                                names.push(n.to_owned());
                                extra |= entries.len() > 1;
                            }
                            _ => {
                                extra = true;
                                self.report(
                                    field,
                                    item,
                                    FieldStatus::NeedsReview,
                                    None,
                                    None,
                                    format!("an entry without `name`; kept under `{kept}`"),
                                );
                            }
                        },
                        _ => {
                            extra = true;
                            self.report(
                                field,
                                item,
                                FieldStatus::NeedsReview,
                                None,
                                None,
                                format!("an entry that is not a name; kept under `{kept}`"),
                            );
                        }
                    }
                }
                let msg = if extra {
                    format!("{}; prompts and help kept under `{kept}`", names.join(", "))
                } else {
                    names.join(", ")
                };
                if !names.is_empty() {
                    self.report(
                        field,
                        node,
                        FieldStatus::Mapped,
                        Some("metadata.gaia.requirements.env_vars"),
                        None,
                        msg,
                    );
                }
                push_unique(&mut self.gaia.env_vars, names);
                if !extra {
                    residue.remove(key);
                }
            }
            "prerequisites" => {
                let Some(entries) = node.as_map() else {
                    self.report(
                        field,
                        node,
                        FieldStatus::NeedsReview,
                        None,
                        None,
                        format!("is {}, not a mapping; kept under `{kept}`", node.describe()),
                    );
                    return;
                };
                let mut sub = residue.get(key).cloned().unwrap_or(Value::Map(Vec::new()));
                for e in entries {
                    let f = format!("{field}.{}", e.key);
                    match (e.key.as_str(), strings(&e.value)) {
                        ("env_vars", Some(list)) => {
                            self.report(
                                &f,
                                &e.value,
                                FieldStatus::Mapped,
                                Some("metadata.gaia.requirements.env_vars"),
                                None,
                                list.join(", "),
                            );
                            push_unique(&mut self.gaia.env_vars, list);
                            sub.remove("env_vars");
                        }
                        ("pip", Some(list)) => {
                            self.report(
                                &f,
                                &e.value,
                                FieldStatus::Mapped,
                                Some("metadata.gaia.requirements.dependencies"),
                                None,
                                list.join(", "),
                            );
                            push_unique(&mut self.gaia.dependencies, list);
                            sub.remove("pip");
                        }
                        ("commands", Some(list)) => {
                            for c in &list {
                                self.blocked(
                                    &f,
                                    &e.value,
                                    &format!("shell:execute:{c}"),
                                    &format!("running `{c}`"),
                                    &format!("{kept}.commands"),
                                );
                            }
                        }
                        _ => self.report(
                            &f,
                            &e.value,
                            FieldStatus::NeedsReview,
                            None,
                            None,
                            format!("no GAIA equivalent; kept under `{kept}.{}`", e.key),
                        ),
                    }
                }
                if sub.is_empty_collection() {
                    residue.remove(key);
                } else {
                    residue.set(key, sub);
                }
            }
            "required_credential_files" => {
                let paths: Vec<String> = node
                    .as_seq()
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|i| {
                        i.as_str()
                            .or_else(|| i.get_value("path").and_then(Node::as_str))
                            .map(str::to_owned)
                    })
                    .collect();
                if paths.is_empty() {
                    self.report(
                        field,
                        node,
                        FieldStatus::NeedsReview,
                        None,
                        None,
                        format!("no file paths found; kept under `{kept}`"),
                    );
                }
                for p in paths {
                    self.blocked(
                        field,
                        node,
                        &format!("filesystem:read:{p}"),
                        &format!("the credential file `{p}`"),
                        &kept,
                    );
                }
            }
            "setup" => {
                let secrets: Vec<String> = node
                    .get_value("collect_secrets")
                    .and_then(Node::as_seq)
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|s| s.get_value("env_var").and_then(Node::as_str).map(str::to_owned))
                    .collect();
                if !secrets.is_empty() {
                    self.report(
                        &format!("{field}.collect_secrets"),
                        node,
                        FieldStatus::Mapped,
                        Some("metadata.gaia.requirements.env_vars"),
                        None,
                        format!("{}; prompts kept under `{kept}`", secrets.join(", ")),
                    );
                    push_unique(&mut self.gaia.env_vars, secrets);
                }
                self.report(
                    field,
                    node,
                    FieldStatus::Preserved,
                    None,
                    None,
                    format!("setup instructions kept under `{kept}`"),
                );
            }
            "requires_tools" => match strings(node) {
                Some(list) => {
                    self.report(
                        field,
                        node,
                        FieldStatus::Mapped,
                        Some("metadata.gaia.tools_required"),
                        None,
                        format!("{} (check that GAIA's registry has these tools)", list.join(", ")),
                    );
                    push_unique(&mut self.gaia.tools_required, list);
                    residue.remove(key);
                }
                None => self.report(
                    field,
                    node,
                    FieldStatus::NeedsReview,
                    None,
                    None,
                    "not a list of tool names; kept",
                ),
            },
            "requires_toolsets" => {
                let Some(list) = strings(node) else {
                    self.report(
                        field,
                        node,
                        FieldStatus::NeedsReview,
                        None,
                        None,
                        "not a list of toolset names; kept",
                    );
                    return;
                };
                let mut all_mapped = true;
                for t in &list {
                    match TOOLSETS.iter().find(|(n, _)| n == t).map(|(_, p)| *p) {
                        Some(p) if Permission::parse(p).is_ok_and(|perm| TIER.allows(&perm)) => {
                            self.report(
                                field,
                                node,
                                FieldStatus::Mapped,
                                Some("metadata.gaia.permissions"),
                                None,
                                format!("toolset `{t}` → `{p}`"),
                            );
                            push_unique(&mut self.gaia.permissions, [p.to_owned()]);
                        }
                        Some(p) => {
                            all_mapped = false;
                            self.blocked(field, node, p, &format!("the `{t}` toolset"), &kept);
                        }
                        None => {
                            all_mapped = false;
                            self.report(
                                field,
                                node,
                                FieldStatus::NeedsReview,
                                None,
                                None,
                                format!("toolset `{t}` has no known GAIA permission; kept under `{kept}`"),
                            );
                        }
                    }
                }
                if all_mapped {
                    residue.remove(key);
                }
            }
            "config" => self.report(
                field,
                node,
                FieldStatus::NeedsReview,
                None,
                None,
                format!("settings Hermes asks the user for; GAIA has no settings field. Kept under `{kept}`"),
            ),
            "platforms" => self.report(
                field,
                node,
                FieldStatus::Preserved,
                None,
                None,
                format!("an OS restriction, not a capability; GAIA has no such field. Kept under `{kept}`"),
            ),
            _ => self.report(
                field,
                node,
                FieldStatus::Preserved,
                None,
                None,
                format!("kept under `{kept}`"),
            ),
        }
    }

    fn openclaw_field(&mut self, ns: &str, key: &str, field: &str, node: &Node, residue: &mut Value) {
        let kept = format!("metadata.{ns}.{key}");
        match key {
            "requires" => {
                let Some(entries) = node.as_map() else {
                    self.report(
                        field,
                        node,
                        FieldStatus::NeedsReview,
                        None,
                        None,
                        format!("is {}, not a mapping; kept", node.describe()),
                    );
                    return;
                };
                let mut sub = residue.get(key).cloned().unwrap_or(Value::Map(Vec::new()));
                for e in entries {
                    let f = format!("{field}.{}", e.key);
                    match (e.key.as_str(), strings(&e.value)) {
                        ("env", Some(list)) => {
                            self.report(&f, &e.value, FieldStatus::Mapped, Some("metadata.gaia.requirements.env_vars"), None, list.join(", "));
                            push_unique(&mut self.gaia.env_vars, list);
                            sub.remove("env");
                        }
                        ("bins" | "anyBins", Some(list)) => {
                            for b in &list {
                                self.blocked(&f, &e.value, &format!("shell:execute:{b}"), &format!("running `{b}`"), &format!("{kept}.{}", e.key));
                            }
                        }
                        ("config", _) => self.report(
                            &f,
                            &e.value,
                            FieldStatus::NeedsReview,
                            None,
                            None,
                            format!("OpenClaw configuration keys the skill needs; GAIA has no equivalent. Kept under `{kept}.config`"),
                        ),
                        _ => self.report(&f, &e.value, FieldStatus::NeedsReview, None, None, format!("no GAIA equivalent; kept under `{kept}.{}`", e.key)),
                    }
                }
                if sub.is_empty_collection() {
                    residue.remove(key);
                } else {
                    residue.set(key, sub);
                }
            }
            "primaryEnv" => match node.as_str() {
                Some(v) if !v.trim().is_empty() => {
                    self.report(
                        field,
                        node,
                        FieldStatus::Mapped,
                        Some("metadata.gaia.requirements.env_vars"),
                        None,
                        format!("{v}; the primary-key marker is kept under `{kept}`"),
                    );
                    push_unique(&mut self.gaia.env_vars, [v.to_owned()]);
                }
                _ => self.report(
                    field,
                    node,
                    FieldStatus::NeedsReview,
                    None,
                    None,
                    "not a variable name; kept",
                ),
            },
            "install" => {
                let Some(items) = node.as_seq() else {
                    self.report(
                        field,
                        node,
                        FieldStatus::NeedsReview,
                        None,
                        None,
                        format!("is {}, not a list; kept", node.describe()),
                    );
                    return;
                };
                for (i, item) in items.iter().enumerate() {
                    let f = format!("{field}[{i}]");
                    let kind = item.get_value("kind").and_then(Node::as_str).unwrap_or("");
                    let package = item
                        .get_value("package")
                        .or_else(|| item.get_value("module"))
                        .and_then(Node::as_str)
                        .filter(|p| !p.trim().is_empty());
                    let packages: Vec<String> = match (package, item.get_value("packages").and_then(strings)) {
                        (Some(p), _) => vec![match item.get_value("from").and_then(Node::as_str) {
                            Some(from) => format!("{p} @ {from}"),
                            None => p.to_owned(),
                        }],
                        (None, Some(list)) => list,
                        (None, None) => Vec::new(),
                    };
                    match (kind, packages.is_empty()) {
                        ("pip" | "uv" | "python", false) => {
                            self.report(
                                &f,
                                item,
                                FieldStatus::Mapped,
                                Some("metadata.gaia.requirements.dependencies"),
                                None,
                                format!("{} (the install entry is kept under `{kept}`)", packages.join(", ")),
                            );
                            push_unique(&mut self.gaia.dependencies, packages);
                        }
                        ("node" | "npm", false) => {
                            self.report(
                                &f,
                                item,
                                FieldStatus::Mapped,
                                Some("metadata.gaia.requirements.node_dependencies"),
                                None,
                                format!("{} (the install entry is kept under `{kept}`)", packages.join(", ")),
                            );
                            push_unique(&mut self.gaia.node_dependencies, packages);
                        }
                        ("download", _) => self.report(
                            &f,
                            item,
                            FieldStatus::NeedsReview,
                            None,
                            None,
                            format!(
                                "downloads {}; GAIA has no download step: review the source and vendor the file, or drop the step. Kept under `{kept}`",
                                item.get_value("url").and_then(Node::as_str).unwrap_or("a file")
                            ),
                        ),
                        ("shell" | "exec" | "script", _) => self.report(
                            &f,
                            item,
                            FieldStatus::NeedsReview,
                            None,
                            None,
                            format!(
                                "runs a shell command{}; GAIA installs no commands: review it. Kept under `{kept}`",
                                item.get_value("command")
                                    .or_else(|| item.get_value("run"))
                                    .and_then(Node::as_str)
                                    .map(|c| format!(" `{c}`"))
                                    .unwrap_or_default()
                            ),
                        ),
                        (k, _) => self.report(
                            &f,
                            item,
                            FieldStatus::NeedsReview,
                            None,
                            None,
                            format!(
                                "{} install{}; GAIA has no field for system packages. Kept under `{kept}`",
                                if k.is_empty() { "an unknown" } else { k },
                                package
                                    .or_else(|| item.get_value("formula").and_then(Node::as_str))
                                    .map(|p| format!(" of `{p}`"))
                                    .unwrap_or_default()
                            ),
                        ),
                    }
                }
            }
            "os" => self.report(
                field,
                node,
                FieldStatus::Preserved,
                None,
                None,
                format!("an OS restriction, not a capability; GAIA has no such field. Kept under `{kept}`"),
            ),
            "always" => {
                if node.as_scalar().is_some_and(|s| s.value == "true") {
                    self.report(
                        field,
                        node,
                        FieldStatus::NeedsReview,
                        None,
                        None,
                        format!("OpenClaw loads this skill in every session; GAIA loads skills by relevance. Kept under `{kept}`"),
                    );
                } else {
                    self.report(
                        field,
                        node,
                        FieldStatus::Preserved,
                        None,
                        None,
                        format!("kept under `{kept}`"),
                    );
                }
            }
            _ => self.report(
                field,
                node,
                FieldStatus::Preserved,
                None,
                None,
                format!("kept under `{kept}`"),
            ),
        }
    }
}

/// Appends `items` to the list at `path` in `gaia` (creating maps on the way), skipping
/// duplicates and existing entries.
fn merge_list(gaia: &mut Value, path: &[&str], items: Vec<String>) {
    if items.is_empty() {
        return;
    }
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut cur = gaia;
    for p in parents {
        if cur.get(p).is_none_or(|v| !matches!(v, Value::Map(_))) {
            cur.set(p, Value::Map(Vec::new()));
        }
        let Value::Map(entries) = cur else { return };
        let Some((_, next)) = entries.iter_mut().find(|(k, _)| k == p) else {
            return;
        };
        cur = next;
    }
    let mut list: Vec<Value> = match cur.get(last) {
        Some(Value::Seq(s)) => s.clone(),
        Some(v @ (Value::Str(_) | Value::Plain(_))) => vec![v.clone()],
        _ => Vec::new(),
    };
    for i in items {
        if !list.iter().any(|v| v.as_text() == Some(i.as_str())) {
            list.push(Value::Str(i));
        }
    }
    cur.set(last, Value::Seq(list));
}

/// The vendor formats a SKILL.md text uses (empty when its frontmatter cannot be read).
pub fn vendor_formats(text: &str) -> Vec<Vendor> {
    let src = Source::new("SKILL.md", text);
    let (split, _) = frontmatter::split(&src);
    let Some(split) = split else { return Vec::new() };
    yaml::load(&src, split.frontmatter)
        .root
        .map(|r| detect(&r))
        .unwrap_or_default()
}

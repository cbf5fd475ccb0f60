//! The new frontmatter entries of a migrated skill: vendor keys moved under their namespace,
//! each vendor field handled by its table ([`super::fields`]), and `metadata.gaia` with the
//! tier reset and what the fields mapped. The review report is collected on the way; the
//! entries are written by `skill::writer`.

use super::fields::{At, HERMES, OPENCLAW, OTHERWISE};
use super::{FieldReport, FieldStatus, HERMES_TOP_LEVEL, OPENCLAW_TOP_LEVEL, TIER, Vendor};
use crate::diag::{Diagnostic, Source};
use crate::rules;
use crate::skill::gaia::Permission;
use crate::skill::model::OPENCLAW_NAMESPACES;
use crate::skill::yaml::{self, Node, NodeKind};
use crate::skill::yaml_out::Value;

/// A list of `metadata.gaia` that fields are mapped into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Target {
    /// `requirements.env_vars`.
    EnvVars,
    /// `requirements.dependencies` (Python packages).
    Dependencies,
    /// `requirements.node_dependencies`.
    NodeDependencies,
    /// `tools_required`.
    ToolsRequired,
    /// `permissions`.
    Permissions,
}

impl Target {
    /// Every list, in the order they are written.
    const ALL: [Target; 5] = [
        Target::Permissions,
        Target::EnvVars,
        Target::Dependencies,
        Target::NodeDependencies,
        Target::ToolsRequired,
    ];

    /// Where it is, as reported (`metadata.gaia.requirements.env_vars`).
    pub fn path(self) -> &'static str {
        match self {
            Target::EnvVars => "metadata.gaia.requirements.env_vars",
            Target::Dependencies => "metadata.gaia.requirements.dependencies",
            Target::NodeDependencies => "metadata.gaia.requirements.node_dependencies",
            Target::ToolsRequired => "metadata.gaia.tools_required",
            Target::Permissions => "metadata.gaia.permissions",
        }
    }

    /// Its keys under `metadata.gaia`.
    fn keys(self) -> &'static [&'static str] {
        match self {
            Target::EnvVars => &["requirements", "env_vars"],
            Target::Dependencies => &["requirements", "dependencies"],
            Target::NodeDependencies => &["requirements", "node_dependencies"],
            Target::ToolsRequired => &["tools_required"],
            Target::Permissions => &["permissions"],
        }
    }
}

/// Builds the migrated frontmatter entries and their review report.
pub(super) struct Rewriter<'a> {
    /// The original SKILL.md.
    pub src: &'a Source<'a>,
    /// The review report, in field order.
    pub fields: Vec<FieldReport>,
    /// Why the skill cannot be migrated (`MG003`).
    pub failures: Vec<Diagnostic>,
    /// The failure's key (`vendor-shape`, `gaia-ceiling`).
    pub failure: Option<&'static str>,
    /// What the fields add to `metadata.gaia`, per list, in first-seen order, de-duplicated.
    added: Vec<(Target, Vec<String>)>,
}

/// The vendor keys of the top level, to be moved under their namespace.
struct Moved<'n> {
    /// To `metadata.hermes`.
    hermes: Vec<(String, &'n Node)>,
    /// To the OpenClaw namespace.
    openclaw: Vec<(String, &'n Node)>,
}

impl<'a> Rewriter<'a> {
    /// A writer over the original text.
    pub fn new(src: &'a Source<'a>) -> Rewriter<'a> {
        Rewriter {
            src,
            fields: Vec::new(),
            failures: Vec::new(),
            failure: None,
            added: Vec::new(),
        }
    }

    /// Adds `items` to a `metadata.gaia` list (once each).
    pub fn add(&mut self, target: Target, items: impl IntoIterator<Item = String>) {
        let list = match self.added.iter().position(|(t, _)| *t == target) {
            Some(i) => &mut self.added[i].1,
            None => {
                self.added.push((target, Vec::new()));
                let last = self.added.len() - 1;
                &mut self.added[last].1
            }
        };
        for i in items {
            if !list.contains(&i) {
                list.push(i);
            }
        }
    }

    /// One line of the review report, at `node`'s place in the original.
    pub fn report(
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

    /// A capability the tier cannot grant: reported with its domain as the reason, kept
    /// under `kept`, not granted.
    pub fn blocked(&mut self, field: &str, node: &Node, permission: &str, what: &str, kept: &str) {
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

    /// Comments cannot be carried over (the frontmatter is written anew): report the first
    /// one so a person can move what matters into the body. Whole-line comments, and ` #`
    /// on lines without quotes (a `#` inside a quoted value is not a comment).
    pub fn comments(&mut self, range: std::ops::Range<usize>) {
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

    /// A value that should be a mapping and is not: the skill cannot be migrated.
    fn not_a_mapping(&mut self, node: &Node, what: &str, help: String) {
        self.failures.push(
            Diagnostic::new(
                &rules::MG003,
                self.src.file,
                self.src.span(node.span.clone()),
                format!("`{what}` is {}, not a mapping", node.describe()),
            )
            .help(help),
        );
        self.failure = Some("vendor-shape");
    }

    /// Builds the new top-level entries; `None` when the skill cannot be migrated (the
    /// reasons are in `failures`).
    pub fn rewrite(&mut self, root: &Node, vendors: &[Vendor]) -> Option<Vec<(String, Value)>> {
        let md_node = root.get_value("metadata");
        let mut metadata = match md_node.map(|n| (&n.kind, n)) {
            None => Value::Map(Vec::new()),
            Some((NodeKind::Map { .. }, n)) => Value::from_node(n),
            Some((NodeKind::Scalar(s), _)) if s.plain && s.value.is_empty() => Value::Map(Vec::new()),
            Some((_, n)) => {
                self.not_a_mapping(n, "metadata", "make `metadata` a mapping, then migrate again".into());
                return None;
            }
        };
        let hermes = vendors.contains(&Vendor::Hermes);
        let openclaw = vendors.contains(&Vendor::OpenClaw);
        // The OpenClaw namespace that receives OpenClaw's top-level keys: the first present.
        let oc_ns = md_node
            .and_then(|m| OPENCLAW_NAMESPACES.iter().find(|ns| m.get(ns).is_some()))
            .copied()
            .unwrap_or("openclaw");
        let (mut top, moved) = self.top_level(root, md_node, vendors, oc_ns);
        self.check_namespaces(md_node, hermes, openclaw)?;
        if hermes {
            self.hermes(md_node, &moved.hermes, &mut metadata);
        }
        if openclaw {
            self.openclaw(md_node, oc_ns, &moved.openclaw, &mut metadata);
        }
        let gaia = self.gaia(root, md_node.and_then(|m| m.get_value("gaia")))?;
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

    /// The top level without the vendor keys that move under their namespace (`metadata`
    /// stays in its place, empty until it is filled), and those keys. A key also present
    /// under the namespace stays at the top level, for review.
    fn top_level<'n>(
        &mut self,
        root: &'n Node,
        md_node: Option<&Node>,
        vendors: &[Vendor],
        oc_ns: &str,
    ) -> (Vec<(String, Value)>, Moved<'n>) {
        let mut top: Vec<(String, Value)> = Vec::new();
        let mut moved = Moved {
            hermes: Vec::new(),
            openclaw: Vec::new(),
        };
        for e in root.as_map().unwrap_or_default() {
            let key = e.key.as_str();
            let (list, ns) = if vendors.contains(&Vendor::Hermes) && HERMES_TOP_LEVEL.contains(&key) {
                (&mut moved.hermes, "hermes")
            } else if vendors.contains(&Vendor::OpenClaw) && OPENCLAW_TOP_LEVEL.contains(&key) {
                (&mut moved.openclaw, oc_ns)
            } else {
                let value = if key == "metadata" {
                    Value::Map(Vec::new())
                } else {
                    Value::from_node(&e.value)
                };
                top.push((e.key.clone(), value));
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
            list.push((e.key.clone(), &e.value));
        }
        if !top.iter().any(|(k, _)| k == "metadata") {
            top.push(("metadata".into(), Value::Map(Vec::new())));
        }
        (top, moved)
    }

    /// A vendor namespace that is not a mapping cannot receive the moved keys.
    fn check_namespaces(&mut self, md_node: Option<&Node>, hermes: bool, openclaw: bool) -> Option<()> {
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
                let what = format!("metadata.{ns}");
                self.not_a_mapping(n, &what, format!("make `{what}` a mapping, then migrate again"));
                return None;
            }
        }
        Some(())
    }

    /// `metadata.hermes`: the moved top-level keys, then the namespace's own, each by the
    /// Hermes table; what is not fully mapped stays there.
    fn hermes(&mut self, md_node: Option<&Node>, moved: &[(String, &Node)], metadata: &mut Value) {
        let existing = md_node.and_then(|m| m.get_value("hermes"));
        let mut residue = existing.map(Value::from_node).unwrap_or(Value::Map(Vec::new()));
        for (k, n) in moved {
            residue.set(k, Value::from_node(n));
        }
        let fields = moved.iter().map(|(k, n)| (k.clone(), k.clone(), *n)).chain(
            existing
                .and_then(Node::as_map)
                .unwrap_or_default()
                .iter()
                .map(|e| (e.key.clone(), format!("metadata.hermes.{}", e.key), &e.value)),
        );
        for (key, field, node) in fields.collect::<Vec<_>>() {
            let kept = format!("metadata.hermes.{key}");
            let at = At {
                field: &field,
                key: &key,
                kept: &kept,
            };
            self.vendor_field(HERMES, &OTHERWISE, &at, node, &mut residue);
        }
        metadata.set("hermes", residue);
        if metadata.get("hermes").is_some_and(Value::is_empty_collection) {
            metadata.remove("hermes");
        }
    }

    /// The OpenClaw namespaces (`openclaw` and its former names), each field by the
    /// OpenClaw table; the moved top-level keys go to `oc_ns`, kept as they are.
    fn openclaw(&mut self, md_node: Option<&Node>, oc_ns: &str, moved: &[(String, &Node)], metadata: &mut Value) {
        for ns in OPENCLAW_NAMESPACES {
            let Some(n) = md_node.and_then(|m| m.get_value(ns)) else {
                continue;
            };
            let mut residue = Value::from_node(n);
            if *ns == oc_ns {
                for (k, v) in moved {
                    residue.set(k, Value::from_node(v));
                }
                for (k, v) in moved {
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
                let kept = format!("metadata.{ns}.{}", e.key);
                let at = At {
                    field: &field,
                    key: &e.key,
                    kept: &kept,
                };
                self.vendor_field(OPENCLAW, &OTHERWISE, &at, &e.value, &mut residue);
            }
            if residue.is_empty_collection() {
                metadata.remove(ns);
            } else {
                metadata.set(ns, residue);
            }
        }
    }

    /// `metadata.gaia`: the existing block (if any; one granting more than `experimental`
    /// allows refuses the migration), the tier reset, what the fields mapped merged in.
    fn gaia(&mut self, root: &Node, existing: Option<&Node>) -> Option<Value> {
        let gaia = match existing {
            Some(n) if n.as_map().is_some() => Value::from_node(n),
            Some(n) => {
                self.not_a_mapping(
                    n,
                    "metadata.gaia",
                    "fix or remove `metadata.gaia`, then migrate again".into(),
                );
                return None;
            }
            None => Value::Map(Vec::new()),
        };
        self.check_ceiling(existing)?;
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
        let mut gaia = Value::Map(with_tier);
        let mut added = std::mem::take(&mut self.added);
        for target in Target::ALL {
            if let Some(i) = added.iter().position(|(t, _)| *t == target) {
                merge_list(&mut gaia, target.keys(), std::mem::take(&mut added[i].1));
            }
        }
        Some(gaia)
    }

    /// An existing `metadata.gaia` that grants more than the `experimental` ceiling.
    fn check_ceiling(&mut self, existing: Option<&Node>) -> Option<()> {
        let perms = existing.and_then(|g| g.get_value("permissions")).and_then(Node::as_seq);
        for p in perms.unwrap_or_default() {
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
        if self.failures.is_empty() {
            Some(())
        } else {
            self.failure = Some("gaia-ceiling");
            None
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

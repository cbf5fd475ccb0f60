//! What each Hermes and OpenClaw field becomes, as tables ([`HERMES`], [`OPENCLAW`]): a field
//! is mapped into a `metadata.gaia` list, blocked (a capability the `experimental` tier cannot
//! grant), kept for review, preserved, a mapping with a table of its own, or — for the few
//! whose shape needs more — handled by a function of its own. Everything not mapped stays
//! under the vendor namespace (the residue), so nothing is lost.
//!
//! In messages, `{kept}` is where the original is kept (`metadata.hermes.setup`) and `{what}`
//! what the value is (`a string`).

use super::rewrite::{Rewriter, Target};
use super::{FieldStatus, TIER};
use crate::skill::gaia::Permission;
use crate::skill::yaml::{Node, NodeKind};
use crate::skill::yaml_out::Value;

/// One field of a vendor namespace and what it becomes.
pub(super) struct Field {
    /// Its keys (one field may go by several names: `bins`, `anyBins`).
    pub keys: &'static [&'static str],
    /// What it becomes.
    pub mapping: Mapping,
}

/// What a vendor field becomes.
pub(super) enum Mapping {
    /// A string or a list of strings, appended to `target` and removed from the residue; the
    /// message is the list then `note`. Another shape is kept for review with `not_list`.
    List {
        target: Target,
        note: &'static str,
        not_list: &'static str,
    },
    /// A string or a list of strings, each needing `permission` + itself, which the tier
    /// cannot grant: blocked (reported, kept, not granted). Another shape is kept for review
    /// with `not_list`.
    Capability {
        permission: &'static str,
        not_list: &'static str,
    },
    /// Kept; a person must decide what it means for GAIA.
    Review(&'static str),
    /// Kept; no capability.
    Preserve(&'static str),
    /// A mapping whose keys have a table of their own (`otherwise` for the keys it does not
    /// name); another shape is kept for review with `not_map`.
    Map {
        fields: &'static [Field],
        otherwise: &'static Mapping,
        not_map: &'static str,
    },
    /// A field whose shape needs a function of its own.
    Custom(Handler),
}

/// Where a field is: its path in the original frontmatter (`metadata.openclaw.requires.bins`),
/// its key, and where it is kept (`metadata.openclaw.requires.bins`).
pub(super) struct At<'a> {
    /// The path reported.
    pub field: &'a str,
    /// The key.
    pub key: &'a str,
    /// Where the original is kept.
    pub kept: &'a str,
}

/// A field's own handling: it reports, adds to `metadata.gaia` and trims the residue.
pub(super) type Handler = fn(&mut Rewriter<'_>, &At<'_>, &Node, &mut Value);

const KEPT: &str = "kept under `{kept}`";
const OS: &str = "an OS restriction, not a capability; GAIA has no such field. Kept under `{kept}`";
const NO_EQUIVALENT: &str = "no GAIA equivalent; kept under `{kept}`";

/// Hermes: top-level fields (moved under `metadata.hermes`) and `metadata.hermes.*`.
pub(super) const HERMES: &[Field] = &[
    field(
        &["required_environment_variables"],
        Mapping::Custom(environment_variables),
    ),
    field(
        &["prerequisites"],
        Mapping::Map {
            fields: &[
                field(&["env_vars"], list(Target::EnvVars, "", NO_EQUIVALENT)),
                field(&["pip"], list(Target::Dependencies, "", NO_EQUIVALENT)),
                field(&["commands"], capability("shell:execute:", NO_EQUIVALENT)),
            ],
            otherwise: &Mapping::Review(NO_EQUIVALENT),
            not_map: "is {what}, not a mapping; kept under `{kept}`",
        },
    ),
    field(&["required_credential_files"], Mapping::Custom(credential_files)),
    field(&["setup"], Mapping::Custom(setup)),
    field(
        &["requires_tools"],
        list(
            Target::ToolsRequired,
            " (check that GAIA's registry has these tools)",
            "not a list of tool names; kept",
        ),
    ),
    field(&["requires_toolsets"], Mapping::Custom(toolsets)),
    field(
        &["config"],
        Mapping::Review("settings Hermes asks the user for; GAIA has no settings field. Kept under `{kept}`"),
    ),
    field(&["platforms"], Mapping::Preserve(OS)),
];

/// OpenClaw: `metadata.openclaw.*` (and its former names), top-level fields moved there.
pub(super) const OPENCLAW: &[Field] = &[
    field(
        &["requires"],
        Mapping::Map {
            fields: &[
                field(&["env"], list(Target::EnvVars, "", NO_EQUIVALENT)),
                field(&["bins", "anyBins"], capability("shell:execute:", NO_EQUIVALENT)),
                field(
                    &["config"],
                    Mapping::Review(
                        "OpenClaw configuration keys the skill needs; GAIA has no equivalent. Kept under `{kept}`",
                    ),
                ),
            ],
            otherwise: &Mapping::Review(NO_EQUIVALENT),
            not_map: "is {what}, not a mapping; kept",
        },
    ),
    field(&["primaryEnv"], Mapping::Custom(primary_env)),
    field(&["install"], Mapping::Custom(install)),
    field(&["os"], Mapping::Preserve(OS)),
    field(&["always"], Mapping::Custom(always)),
];

const fn field(keys: &'static [&'static str], mapping: Mapping) -> Field {
    Field { keys, mapping }
}

const fn list(target: Target, note: &'static str, not_list: &'static str) -> Mapping {
    Mapping::List { target, note, not_list }
}

const fn capability(permission: &'static str, not_list: &'static str) -> Mapping {
    Mapping::Capability { permission, not_list }
}

/// Fills `{kept}` and `{what}` in a message.
fn fill(template: &str, at: &At<'_>, node: &Node) -> String {
    template.replace("{kept}", at.kept).replace("{what}", node.describe())
}

impl Rewriter<'_> {
    /// Handles one field of a vendor namespace by its table (`otherwise` for keys it does
    /// not name): reports it, adds to `metadata.gaia`, and removes from `residue` (the
    /// namespace as it will be written) what is fully mapped.
    pub(super) fn vendor_field(
        &mut self,
        table: &[Field],
        otherwise: &Mapping,
        at: &At<'_>,
        node: &Node,
        residue: &mut Value,
    ) {
        let mapping = table
            .iter()
            .find(|f| f.keys.contains(&at.key))
            .map_or(otherwise, |f| &f.mapping);
        match mapping {
            Mapping::List { target, note, not_list } => match node.strings() {
                Some(items) => {
                    let message = format!("{}{note}", items.join(", "));
                    self.report(at.field, node, FieldStatus::Mapped, Some(target.path()), None, message);
                    self.add(*target, items);
                    residue.remove(at.key);
                }
                None => self.review(at, node, not_list),
            },
            Mapping::Capability { permission, not_list } => match node.strings() {
                Some(items) => {
                    for item in &items {
                        let what = format!("running `{item}`");
                        self.blocked(at.field, node, &format!("{permission}{item}"), &what, at.kept);
                    }
                }
                None => self.review(at, node, not_list),
            },
            Mapping::Review(message) => self.review(at, node, message),
            Mapping::Preserve(message) => {
                let message = fill(message, at, node);
                self.report(at.field, node, FieldStatus::Preserved, None, None, message);
            }
            Mapping::Map {
                fields,
                otherwise,
                not_map,
            } => self.vendor_map(fields, otherwise, not_map, at, node, residue),
            Mapping::Custom(handle) => handle(self, at, node, residue),
        }
    }

    /// A field kept for a person to review.
    fn review(&mut self, at: &At<'_>, node: &Node, message: &str) {
        let message = fill(message, at, node);
        self.report(at.field, node, FieldStatus::NeedsReview, None, None, message);
    }

    /// A mapping field: each of its keys by `fields`; what stays of it stays in the residue.
    fn vendor_map(
        &mut self,
        fields: &[Field],
        otherwise: &Mapping,
        not_map: &str,
        at: &At<'_>,
        node: &Node,
        residue: &mut Value,
    ) {
        let Some(entries) = node.as_map() else {
            return self.review(at, node, not_map);
        };
        let mut sub = residue.get(at.key).cloned().unwrap_or(Value::Map(Vec::new()));
        for e in entries {
            let field = format!("{}.{}", at.field, e.key);
            let kept = format!("{}.{}", at.kept, e.key);
            let inner = At {
                field: &field,
                key: &e.key,
                kept: &kept,
            };
            self.vendor_field(fields, otherwise, &inner, &e.value, &mut sub);
        }
        if sub.is_empty_collection() {
            residue.remove(at.key);
        } else {
            residue.set(at.key, sub);
        }
    }
}

/// What a namespace's keys not in its table become.
pub(super) const OTHERWISE: Mapping = Mapping::Preserve(KEPT);

/// Hermes `required_environment_variables`: names, or `{name, prompt, help}` entries; the
/// names are mapped, prompts and help kept.
fn environment_variables(w: &mut Rewriter<'_>, at: &At<'_>, node: &Node, residue: &mut Value) {
    let Some(items) = node.as_seq() else {
        return w.review(at, node, "is {what}, not a list; kept");
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
                    w.review(at, item, "an entry without `name`; kept under `{kept}`");
                }
            },
            _ => {
                extra = true;
                w.review(at, item, "an entry that is not a name; kept under `{kept}`");
            }
        }
    }
    let message = if extra {
        format!("{}; prompts and help kept under `{}`", names.join(", "), at.kept)
    } else {
        names.join(", ")
    };
    if !names.is_empty() {
        let target = Target::EnvVars;
        w.report(at.field, node, FieldStatus::Mapped, Some(target.path()), None, message);
    }
    w.add(Target::EnvVars, names);
    if !extra {
        residue.remove(at.key);
    }
}

/// Hermes `required_credential_files`: each file (a path, or `{path}`) is a capability the
/// tier cannot grant.
fn credential_files(w: &mut Rewriter<'_>, at: &At<'_>, node: &Node, _: &mut Value) {
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
        w.review(at, node, "no file paths found; kept under `{kept}`");
    }
    for p in paths {
        let what = format!("the credential file `{p}`");
        w.blocked(at.field, node, &format!("filesystem:read:{p}"), &what, at.kept);
    }
}

/// Hermes `setup`: the secrets it collects are environment variables; the instructions are
/// kept.
fn setup(w: &mut Rewriter<'_>, at: &At<'_>, node: &Node, _: &mut Value) {
    let secrets: Vec<String> = node
        .get_value("collect_secrets")
        .and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(|s| s.get_value("env_var").and_then(Node::as_str).map(str::to_owned))
        .collect();
    if !secrets.is_empty() {
        let message = format!("{}; prompts kept under `{}`", secrets.join(", "), at.kept);
        let field = format!("{}.collect_secrets", at.field);
        let target = Target::EnvVars;
        w.report(&field, node, FieldStatus::Mapped, Some(target.path()), None, message);
        w.add(Target::EnvVars, secrets);
    }
    let message = format!("setup instructions kept under `{}`", at.kept);
    w.report(at.field, node, FieldStatus::Preserved, None, None, message);
}

/// Hermes toolsets and the GAIA permission each needs (Hermes `toolsets.py` names).
const TOOLSETS: &[(&str, &str)] = &[
    ("web", "network:read"),
    ("terminal", "shell:execute"),
    ("code_execution", "shell:execute"),
    ("file", "filesystem:write"),
    ("files", "filesystem:write"),
    ("browser", "network:write"),
];

/// Hermes `requires_toolsets`: each toolset's permission is mapped when the tier allows it,
/// blocked when it does not; unknown toolsets are kept for review.
fn toolsets(w: &mut Rewriter<'_>, at: &At<'_>, node: &Node, residue: &mut Value) {
    let Some(list) = node.strings() else {
        return w.review(at, node, "not a list of toolset names; kept");
    };
    let mut all_mapped = true;
    for t in &list {
        match TOOLSETS.iter().find(|(n, _)| n == t).map(|(_, p)| *p) {
            Some(p) if Permission::parse(p).is_ok_and(|perm| TIER.allows(&perm)) => {
                let target = Target::Permissions;
                let message = format!("toolset `{t}` → `{p}`");
                w.report(at.field, node, FieldStatus::Mapped, Some(target.path()), None, message);
                w.add(target, [p.to_owned()]);
            }
            Some(p) => {
                all_mapped = false;
                w.blocked(at.field, node, p, &format!("the `{t}` toolset"), at.kept);
            }
            None => {
                all_mapped = false;
                let message = format!("toolset `{t}` has no known GAIA permission; kept under `{}`", at.kept);
                w.report(at.field, node, FieldStatus::NeedsReview, None, None, message);
            }
        }
    }
    if all_mapped {
        residue.remove(at.key);
    }
}

/// OpenClaw `primaryEnv`: a variable name, mapped; the marker is kept.
fn primary_env(w: &mut Rewriter<'_>, at: &At<'_>, node: &Node, _: &mut Value) {
    match node.as_str() {
        Some(v) if !v.trim().is_empty() => {
            let message = format!("{v}; the primary-key marker is kept under `{}`", at.kept);
            let target = Target::EnvVars;
            w.report(at.field, node, FieldStatus::Mapped, Some(target.path()), None, message);
            w.add(target, [v.to_owned()]);
        }
        _ => w.review(at, node, "not a variable name; kept"),
    }
}

/// OpenClaw `always`: `true` (loaded in every session) needs review; anything else is kept.
fn always(w: &mut Rewriter<'_>, at: &At<'_>, node: &Node, _: &mut Value) {
    if node.as_scalar().is_some_and(|s| s.value == "true") {
        w.review(
            at,
            node,
            "OpenClaw loads this skill in every session; GAIA loads skills by relevance. Kept under `{kept}`",
        );
    } else {
        let message = fill(KEPT, at, node);
        w.report(at.field, node, FieldStatus::Preserved, None, None, message);
    }
}

/// OpenClaw `install`: Python and Node packages are mapped (the entries kept), download and
/// shell steps and system packages kept for review.
fn install(w: &mut Rewriter<'_>, at: &At<'_>, node: &Node, _: &mut Value) {
    let Some(items) = node.as_seq() else {
        return w.review(at, node, "is {what}, not a list; kept");
    };
    for (i, item) in items.iter().enumerate() {
        let field = format!("{}[{i}]", at.field);
        let step = At {
            field: &field,
            key: at.key,
            kept: at.kept,
        };
        install_step(w, &step, item);
    }
}

/// One `install` entry.
fn install_step(w: &mut Rewriter<'_>, at: &At<'_>, item: &Node) {
    let kind = item.get_value("kind").and_then(Node::as_str).unwrap_or("");
    let package = item
        .get_value("package")
        .or_else(|| item.get_value("module"))
        .and_then(Node::as_str)
        .filter(|p| !p.trim().is_empty());
    let packages: Vec<String> = match (package, item.get_value("packages").and_then(Node::strings)) {
        (Some(p), _) => vec![match item.get_value("from").and_then(Node::as_str) {
            Some(from) => format!("{p} @ {from}"),
            None => p.to_owned(),
        }],
        (None, Some(list)) => list,
        (None, None) => Vec::new(),
    };
    let kept = at.kept;
    let target = match (kind, packages.is_empty()) {
        ("pip" | "uv" | "python", false) => Some(Target::Dependencies),
        ("node" | "npm", false) => Some(Target::NodeDependencies),
        _ => None,
    };
    if let Some(target) = target {
        let message = format!("{} (the install entry is kept under `{kept}`)", packages.join(", "));
        w.report(at.field, item, FieldStatus::Mapped, Some(target.path()), None, message);
        w.add(target, packages);
        return;
    }
    let message = match kind {
        "download" => format!(
            "downloads {}; GAIA has no download step: review the source and vendor the file, or drop the step. Kept under `{kept}`",
            item.get_value("url").and_then(Node::as_str).unwrap_or("a file")
        ),
        "shell" | "exec" | "script" => format!(
            "runs a shell command{}; GAIA installs no commands: review it. Kept under `{kept}`",
            item.get_value("command")
                .or_else(|| item.get_value("run"))
                .and_then(Node::as_str)
                .map(|c| format!(" `{c}`"))
                .unwrap_or_default()
        ),
        k => format!(
            "{} install{}; GAIA has no field for system packages. Kept under `{kept}`",
            if k.is_empty() { "an unknown" } else { k },
            package
                .or_else(|| item.get_value("formula").and_then(Node::as_str))
                .map(|p| format!(" of `{p}`"))
                .unwrap_or_default()
        ),
    };
    w.report(at.field, item, FieldStatus::NeedsReview, None, None, message);
}

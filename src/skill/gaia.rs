//! The `metadata.gaia` namespace: security tiers, the permission grammar, tier ceilings and
//! typed tools (seed 001, "Skill Format"; PRODUCT.md, "GAIA permission grammar").

use std::fmt;
use std::ops::Range;

use crate::diag::Diagnostic;
use crate::diag::Source;
use crate::rules;
use crate::skill::yaml::{Node, NodeKind, ScalarType};

/// The install-time trust tier of a GAIA skill.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SecurityTier {
    /// Audited and signed by the vendor: no ceiling.
    Verified,
    /// Publisher-signed: network, MCP and shell execution.
    Community,
    /// Unsigned, the default: network reads only.
    #[default]
    Experimental,
}

impl SecurityTier {
    /// Parses `verified` / `community` / `experimental`.
    pub fn parse(s: &str) -> Option<SecurityTier> {
        match s {
            "verified" => Some(SecurityTier::Verified),
            "community" => Some(SecurityTier::Community),
            "experimental" => Some(SecurityTier::Experimental),
            _ => None,
        }
    }

    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            SecurityTier::Verified => "verified",
            SecurityTier::Community => "community",
            SecurityTier::Experimental => "experimental",
        }
    }

    /// The `domain:level` grants the tier allows; `None` means no ceiling.
    pub fn ceiling(self) -> Option<&'static [&'static str]> {
        match self {
            SecurityTier::Verified => None,
            SecurityTier::Community => Some(&["network:read", "network:write", "mcp:connect", "shell:execute"]),
            SecurityTier::Experimental => Some(&["network:read"]),
        }
    }

    /// Whether a permission is within this tier's ceiling (`<domain>:none` always is).
    pub fn allows(self, p: &Permission) -> bool {
        p.level == "none"
            || self
                .ceiling()
                .is_none_or(|c| c.contains(&format!("{}:{}", p.domain, p.level).as_str()))
    }
}

/// Domains and the levels each accepts.
pub const DOMAINS: &[(&str, &[&str])] = &[
    ("network", &["read", "write", "none"]),
    ("mcp", &["connect", "none"]),
    ("filesystem", &["read", "write", "none"]),
    ("shell", &["execute", "none"]),
    ("database", &["read", "write", "none"]),
    ("desktop", &["control", "none"]),
    ("env", &["read", "none"]),
];

/// A parsed permission `<domain>:<level>[:<scope>]`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Permission {
    /// `network`, `filesystem`, …
    pub domain: String,
    /// `read`, `write`, `execute`, …
    pub level: String,
    /// Narrows the grant (`*.brave.com`, `~/reports`, `git,npm`); `None` covers the domain.
    pub scope: Option<String>,
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.domain, self.level)?;
        if let Some(s) = &self.scope {
            write!(f, ":{s}")?;
        }
        Ok(())
    }
}

impl Permission {
    /// Parses a permission, splitting on the first two colons. The error says what is wrong.
    pub fn parse(s: &str) -> Result<Permission, String> {
        let mut parts = s.splitn(3, ':');
        let domain = parts.next().unwrap_or_default();
        let Some(level) = parts.next() else {
            return Err(format!("`{s}` has no level: write `<domain>:<level>[:<scope>]`"));
        };
        let scope = parts.next();
        let Some((_, levels)) = DOMAINS.iter().find(|(d, _)| *d == domain) else {
            let known: Vec<&str> = DOMAINS.iter().map(|(d, _)| *d).collect();
            return Err(format!(
                "unknown permission domain `{domain}` (known: {})",
                known.join(", ")
            ));
        };
        if !levels.contains(&level) {
            return Err(format!(
                "`{level}` is not a level of `{domain}` (expected {})",
                levels.join(", ")
            ));
        }
        if scope.is_some_and(|s| s.trim().is_empty()) {
            return Err(format!(
                "`{s}` has an empty scope: drop the last `:` to grant the whole domain"
            ));
        }
        Ok(Permission {
            domain: domain.to_owned(),
            level: level.to_owned(),
            scope: scope.map(str::to_owned),
        })
    }
}

/// Parameter and return types of a typed tool (a subset of JSON Schema's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ParamType {
    /// A string.
    String,
    /// An integer.
    Integer,
    /// Any number.
    Number,
    /// `true` or `false`.
    Boolean,
    /// A JSON array.
    Array,
    /// A JSON object.
    Object,
}

impl ParamType {
    /// All types, in the order of FORMATS.md.
    pub const ALL: [ParamType; 6] = [
        ParamType::String,
        ParamType::Integer,
        ParamType::Number,
        ParamType::Boolean,
        ParamType::Array,
        ParamType::Object,
    ];

    /// Parses a type name.
    pub fn parse(s: &str) -> Option<ParamType> {
        ParamType::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// The type name used in manifests.
    pub fn as_str(self) -> &'static str {
        match self {
            ParamType::String => "string",
            ParamType::Integer => "integer",
            ParamType::Number => "number",
            ParamType::Boolean => "boolean",
            ParamType::Array => "array",
            ParamType::Object => "object",
        }
    }

    /// Whether a YAML value fits this type (YAML 1.2 core schema for plain scalars).
    pub fn accepts(self, node: &Node) -> bool {
        match (&node.kind, self) {
            (NodeKind::Seq { .. }, ParamType::Array) | (NodeKind::Map { .. }, ParamType::Object) => true,
            (NodeKind::Scalar(s), t) => matches!(
                (s.core_type(), t),
                (ScalarType::Str | ScalarType::Timestamp, ParamType::String)
                    | (ScalarType::Int, ParamType::Integer | ParamType::Number)
                    | (ScalarType::Float, ParamType::Number)
                    | (ScalarType::Bool, ParamType::Boolean)
            ),
            _ => false,
        }
    }
}

/// A parameter of a typed tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolParam {
    /// The parameter name.
    pub name: String,
    /// Its type.
    pub ty: ParamType,
    /// Whether callers must pass it.
    pub required: bool,
    /// The default value (YAML 1.2 typed), checked against `ty`.
    pub default: Option<serde_json::Value>,
    /// Optional description.
    pub description: Option<String>,
}

/// A tool the skill provides (`metadata.gaia.tools[]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GaiaTool {
    /// The tool's function name.
    pub name: String,
    /// What it does.
    pub description: Option<String>,
    /// Its parameters, in source order.
    pub params: Vec<ToolParam>,
    /// Byte range of the tool entry in SKILL.md.
    pub span: Range<usize>,
}

/// The validated `metadata.gaia` namespace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Gaia {
    /// `security_tier` (default `experimental`).
    pub tier: SecurityTier,
    /// Valid permissions, in source order.
    pub permissions: Vec<Permission>,
    /// Tools the skill provides.
    pub tools: Vec<GaiaTool>,
    /// Registry tools the skill consumes.
    pub tools_required: Vec<String>,
    /// `requirements.env_vars`.
    pub env_vars: Vec<String>,
}

const KNOWN_KEYS: &[&str] = &[
    "security_tier",
    "permissions",
    "requirements",
    "tools",
    "tools_required",
    "provenance",
];

/// Reads and validates `metadata.gaia`.
pub fn analyze(src: &Source<'_>, node: &Node, diags: &mut Vec<Diagnostic>) -> Gaia {
    let mut gaia = Gaia::default();
    let Some(entries) = node.as_map() else {
        diags.push(
            Diagnostic::new(
                &rules::SK053,
                src.file,
                src.span(node.span.clone()),
                format!("`metadata.gaia` must be a mapping, found {}", node.describe()),
            )
            .help("see the GAIA skill format: security_tier, permissions, requirements, tools, tools_required"),
        );
        return gaia;
    };
    let mut tier_span = None;
    for e in entries {
        match e.key.as_str() {
            "security_tier" => match e.value.as_str().and_then(SecurityTier::parse) {
                Some(t) => {
                    gaia.tier = t;
                    tier_span = Some(e.value.span.clone());
                }
                None => diags.push(
                    Diagnostic::new(
                        &rules::SK050,
                        src.file,
                        src.span(e.value.span.clone()),
                        match e.value.as_str() {
                            Some(t) => format!("unknown security tier `{t}`"),
                            None => format!("`security_tier` must be a string, found {}", e.value.describe()),
                        },
                    )
                    .help("use `verified`, `community` or `experimental` (the default)"),
                ),
            },
            "permissions" => gaia.permissions.extend(permissions(src, &e.value, diags)),
            "tools" => gaia.tools = analyze_tools(src, &e.value, diags),
            "tools_required" => match e.value.as_seq().map(|s| {
                s.iter()
                    .map(|n| n.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
            }) {
                Some(Some(names)) => gaia.tools_required = names,
                _ => diags.push(
                    Diagnostic::new(
                        &rules::SK054,
                        src.file,
                        src.span(e.value.span.clone()),
                        "`tools_required` must be a list of tool names",
                    )
                    .help("one registry tool name per line, e.g. `- query_documents`"),
                ),
            },
            "requirements" => {
                if let Some(env) = e.value.get_value("env_vars").and_then(Node::strings) {
                    gaia.env_vars = env;
                }
            }
            "provenance" => {}
            other => diags.push(
                Diagnostic::new(
                    &rules::SK055,
                    src.file,
                    src.span(e.key_span.clone()),
                    format!("unknown key `{other}` in `metadata.gaia`"),
                )
                .help(format!("known keys: {}", KNOWN_KEYS.join(", "))),
            ),
        }
    }
    // Tier ceilings (checked after the tier is known, whatever the key order).
    if let Some(items) = node.get_value("permissions").and_then(Node::as_seq) {
        for item in items {
            let Some(p) = item.as_str().and_then(|t| Permission::parse(t).ok()) else {
                continue;
            };
            if !gaia.tier.allows(&p) {
                let ceiling = gaia.tier.ceiling().map(|c| c.join(", ")).unwrap_or_default();
                let mut d = Diagnostic::new(
                    &rules::SK052,
                    src.file,
                    src.span(item.span.clone()),
                    format!("permission `{p}` exceeds the `{}` tier ceiling", gaia.tier.as_str()),
                )
                .label(format!("`{}` allows only: {ceiling}", gaia.tier.as_str()))
                .help("remove the permission, or raise `security_tier` once the skill is signed and reviewed");
                if let Some(ts) = &tier_span {
                    d = d.related(src.span(ts.clone()), "tier set here");
                }
                diags.push(d);
            }
        }
    }
    gaia
}

/// `permissions`: a list of `<domain>:<level>[:<scope>]` strings (`SK051` for the rest).
fn permissions(src: &Source<'_>, node: &Node, diags: &mut Vec<Diagnostic>) -> Vec<Permission> {
    let Some(items) = node.as_seq() else {
        diags.push(
            Diagnostic::new(
                &rules::SK051,
                src.file,
                src.span(node.span.clone()),
                "`permissions` must be a list",
            )
            .help("write one `<domain>:<level>[:<scope>]` per line, e.g. `- network:read`"),
        );
        return Vec::new();
    };
    let mut found = Vec::new();
    for item in items {
        let Some(text) = item.as_str() else {
            diags.push(Diagnostic::new(
                &rules::SK051,
                src.file,
                src.span(item.span.clone()),
                format!("a permission must be a string, found {}", item.describe()),
            ));
            continue;
        };
        match Permission::parse(text) {
            Ok(p) => found.push(p),
            Err(why) => diags.push(
                Diagnostic::new(
                    &rules::SK051,
                    src.file,
                    src.span(item.span.clone()),
                    format!("malformed permission: {why}"),
                )
                .help("the grammar is `<domain>:<level>[:<scope>]`, e.g. `network:read:*.example.com`"),
            ),
        }
    }
    found
}

fn analyze_tools(src: &Source<'_>, node: &Node, diags: &mut Vec<Diagnostic>) -> Vec<GaiaTool> {
    let mut tools = Vec::new();
    let Some(items) = node.as_seq() else {
        diags.push(Diagnostic::new(
            &rules::SK053,
            src.file,
            src.span(node.span.clone()),
            "`tools` must be a list of tool declarations",
        ));
        return tools;
    };
    for item in items {
        let bad =
            |msg: String, span: &Range<usize>| Diagnostic::new(&rules::SK053, src.file, src.span(span.clone()), msg);
        let Some(name) = item.get_value("name").and_then(Node::as_str) else {
            diags.push(bad("a tool needs a `name`".into(), &item.span).help("e.g. `- name: search_web`"));
            continue;
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            || name.starts_with(|c: char| c.is_ascii_digit())
        {
            diags.push(
                bad(
                    format!("tool name `{name}` is not a lowercase Python identifier"),
                    &item.span,
                )
                .help("use lowercase letters, digits and `_`"),
            );
            continue;
        }
        if tools.iter().any(|t: &GaiaTool| t.name == name) {
            diags.push(bad(format!("tool `{name}` is declared twice"), &item.span).help("give each tool its own name"));
            continue;
        }
        let mut tool = GaiaTool {
            name: name.to_owned(),
            description: item.get_value("description").and_then(Node::as_str).map(str::to_owned),
            params: Vec::new(),
            span: item.span.clone(),
        };
        match item.get_value("parameters") {
            None => {}
            Some(p) => match p.as_map() {
                None => diags.push(bad(
                    format!("`parameters` of `{name}` must be a mapping of name to {{type, required, default}}"),
                    &p.span,
                )),
                Some(entries) => {
                    for pe in entries {
                        if let Some(param) = analyze_param(src, name, &pe.key, &pe.value, diags) {
                            tool.params.push(param);
                        }
                    }
                }
            },
        }
        if let Some(r) = item.get_value("returns") {
            let ty = r.get_value("type").and_then(Node::as_str);
            if ty.and_then(ParamType::parse).is_none() {
                diags.push(bad(format!("`returns` of `{name}` needs a known `type`"), &r.span).help(type_help()));
            }
        }
        if let Some(a) = item.get_value("atomic")
            && a.as_scalar().map(|s| s.core_type()) != Some(ScalarType::Bool)
        {
            diags.push(bad(format!("`atomic` of `{name}` must be true or false"), &a.span));
        }
        tools.push(tool);
    }
    tools
}

fn type_help() -> String {
    let names: Vec<&str> = ParamType::ALL.iter().map(|t| t.as_str()).collect();
    format!("types: {}", names.join(", "))
}

fn analyze_param(
    src: &Source<'_>,
    tool: &str,
    name: &str,
    node: &Node,
    diags: &mut Vec<Diagnostic>,
) -> Option<ToolParam> {
    let bad = |msg: String, span: &Range<usize>| Diagnostic::new(&rules::SK053, src.file, src.span(span.clone()), msg);
    if node.as_map().is_none() {
        diags.push(bad(
            format!("parameter `{name}` of `{tool}` must be a mapping like `{{type: string, required: true}}`"),
            &node.span,
        ));
        return None;
    }
    let ty = match node.get_value("type") {
        None => {
            diags.push(bad(format!("parameter `{name}` of `{tool}` has no `type`"), &node.span).help(type_help()));
            return None;
        }
        Some(t) => match t.as_str().and_then(ParamType::parse) {
            Some(ty) => ty,
            None => {
                diags.push(
                    bad(
                        format!(
                            "parameter `{name}` of `{tool}` has unknown type `{}`",
                            t.as_str().unwrap_or("…")
                        ),
                        &t.span,
                    )
                    .help(type_help()),
                );
                return None;
            }
        },
    };
    let required = match node.get_value("required") {
        None => false,
        Some(r) => match r.as_scalar().filter(|s| s.core_type() == ScalarType::Bool) {
            Some(s) => s.value.eq_ignore_ascii_case("true"),
            None => {
                diags.push(bad(
                    format!("`required` of parameter `{name}` must be true or false"),
                    &r.span,
                ));
                false
            }
        },
    };
    let default = match node.get_value("default") {
        None => None,
        Some(d) if ty.accepts(d) => Some(d.to_json_typed()),
        Some(d) => {
            diags.push(
                bad(
                    format!(
                        "default of parameter `{name}` is {}, but its type is `{}`",
                        d.describe(),
                        ty.as_str()
                    ),
                    &d.span,
                )
                .help("make the default match the declared type (quote strings, leave numbers bare)"),
            );
            None
        }
    };
    if required && default.is_some() {
        diags.push(
            bad(
                format!("parameter `{name}` of `{tool}` is required and has a default"),
                &node.span,
            )
            .help("drop the default or set `required: false`")
            .severity(crate::diag::Severity::Warning),
        );
    }
    Some(ToolParam {
        name: name.to_owned(),
        ty,
        required,
        default,
        description: node.get_value("description").and_then(Node::as_str).map(str::to_owned),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_grammar() {
        let p = Permission::parse("network:read:*.brave.com").expect("valid");
        assert_eq!(
            (p.domain.as_str(), p.level.as_str(), p.scope.as_deref()),
            ("network", "read", Some("*.brave.com"))
        );
        // The scope may itself contain colons: split on the first two only.
        assert_eq!(
            Permission::parse("filesystem:read:C:/data").map(|p| p.scope),
            Ok(Some("C:/data".into()))
        );
        assert!(Permission::parse("network").is_err());
        assert!(Permission::parse("network:execute").is_err());
        assert!(Permission::parse("gpu:read").is_err());
        assert!(Permission::parse("shell:execute:").is_err());
    }

    #[test]
    fn ceilings() {
        let p = |s: &str| Permission::parse(s).expect("valid");
        assert!(SecurityTier::Experimental.allows(&p("network:read:x.com")));
        assert!(!SecurityTier::Experimental.allows(&p("network:write")));
        assert!(SecurityTier::Experimental.allows(&p("shell:none")));
        assert!(SecurityTier::Community.allows(&p("shell:execute:git")));
        assert!(!SecurityTier::Community.allows(&p("filesystem:write")));
        assert!(SecurityTier::Verified.allows(&p("desktop:control")));
    }
}

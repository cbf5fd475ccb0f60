//! The skill model: what skillc understands of a frontmatter.
//!
//! Base fields come from the agentskills.io specification; superset keys from the formats that
//! extend it (Claude Code, Hermes, GAIA's top-level `version`); namespaces under `metadata`
//! from GAIA (`gaia`), Hermes (`hermes`) and OpenClaw (`openclaw` and its historical names
//! `clawdbot`, `clawdis`, `moltbot`). The model is what later stages (extract, generate) read;
//! the raw YAML tree stays available for `read-properties`.

use std::ops::Range;

use crate::skill::gaia::Gaia;
use crate::skill::tools::ToolToken;

/// A string value with the span it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Text {
    /// The value.
    pub value: String,
    /// Byte range in SKILL.md.
    pub span: Range<usize>,
}

/// Everything skillc reads from one SKILL.md frontmatter.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkillModel {
    /// `name`, trimmed and NFKC-normalized, when it is a string.
    pub name: Option<Text>,
    /// `description`, trimmed, when it is a string.
    pub description: Option<Text>,
    /// `license`, when it is a string.
    pub license: Option<Text>,
    /// `compatibility`, when it is a string.
    pub compatibility: Option<Text>,
    /// Top-level `version` (GAIA, Hermes, OpenClaw), or `metadata.version` as a fallback.
    pub version: Option<String>,
    /// `allowed-tools`, tokenized. Recorded, never granted.
    pub allowed_tools: Vec<ToolToken>,
    /// `metadata.gaia`, validated.
    pub gaia: Option<Gaia>,
    /// Binaries the skill declares it runs: OpenClaw `requires.bins` / `requires.anyBins` and
    /// Hermes `prerequisites.commands`, sorted, de-duplicated.
    pub bins: Vec<String>,
    /// Credentials the skill declares (names only), sorted by binding.
    pub credentials: Vec<Credential>,
    /// Hermes `platforms`.
    pub platforms: Vec<String>,
}

/// A credential the skill needs at run time: an environment variable or a file. Values are
/// never read; only the binding name is recorded.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Credential {
    /// The environment variable name or the file path.
    pub binding: String,
    /// Where the credential lives.
    pub kind: CredentialKind,
    /// What to ask the user ("Shopify Admin API access token").
    pub prompt: Option<String>,
    /// Whether the skill works without it.
    pub optional: bool,
}

/// The two kinds of credential binding (FORMATS.md `[[credentials]] kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CredentialKind {
    /// An environment variable.
    Env,
    /// A file (Hermes `required_credential_files`).
    File,
}

impl CredentialKind {
    /// `env` or `file`.
    pub fn as_str(self) -> &'static str {
        match self {
            CredentialKind::Env => "env",
            CredentialKind::File => "file",
        }
    }
}

/// The six fields of the agentskills.io specification.
pub const STANDARD_FIELDS: &[&str] = &[
    "name",
    "description",
    "license",
    "allowed-tools",
    "metadata",
    "compatibility",
];

/// Top-level keys defined by formats that extend the standard, with the format that defines
/// them. Accepted silently in the default mode; errors under `--strict`.
pub const SUPERSET_FIELDS: &[(&str, &str)] = &[
    ("version", "GAIA, Hermes and OpenClaw"),
    // Claude Code skills (code.claude.com/docs/en/skills, frontmatter reference).
    ("when_to_use", "Claude Code"),
    ("argument-hint", "Claude Code"),
    ("user-invocable", "Claude Code"),
    ("disable-model-invocation", "Claude Code"),
    ("model", "Claude Code"),
    ("context", "Claude Code"),
    ("agent", "Claude Code"),
    ("hooks", "Claude Code"),
    ("effort", "Claude Code"),
    ("paths", "Claude Code"),
    ("shell", "Claude Code"),
    // Hermes Agent skills (hermes-agent `skills/` frontmatter).
    ("author", "Hermes"),
    ("platforms", "Hermes"),
    ("prerequisites", "Hermes"),
    ("required_environment_variables", "Hermes"),
    ("required_credential_files", "Hermes"),
    ("setup", "Hermes"),
    // OpenClaw / ClawHub skills.
    ("homepage", "OpenClaw"),
];

/// The names under which OpenClaw metadata appears (the project was renamed several times).
pub const OPENCLAW_NAMESPACES: &[&str] = &["openclaw", "clawdbot", "clawdis", "moltbot"];

/// The format defining a superset key, if any.
pub fn superset_field(key: &str) -> Option<&'static str> {
    SUPERSET_FIELDS.iter().find(|(k, _)| *k == key).map(|(_, f)| *f)
}

//! `skillc plan --format json` (schema `skillc.plan/1`).

use std::collections::BTreeMap;

use serde::Serialize;

/// The schema id.
pub const SCHEMA: &str = "skillc.plan/1";

/// The report.
#[derive(Serialize)]
pub struct Report {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// Counts.
    pub summary: Summary,
    /// One entry per path problem, then one per skill.
    pub skills: Vec<Skill>,
}

/// Counts over every skill.
#[derive(Serialize)]
pub struct Summary {
    /// Skills found.
    pub skills: usize,
    /// Skills (and paths) `skillc check` rejects.
    pub invalid: usize,
    /// Skills with sub-commands.
    pub with_subcommands: usize,
    /// Skills without.
    pub instruction_only: usize,
    /// Plans.
    pub plans: usize,
    /// Plans translated.
    pub translated: usize,
    /// Plans rejected.
    pub rejected: usize,
    /// Rule code → rejected plans.
    pub rejected_by_reason: BTreeMap<&'static str, usize>,
}

/// One skill (or path problem).
#[derive(Serialize)]
pub struct Skill {
    /// The folder.
    pub path: String,
    /// Its `name`.
    pub name: Option<String>,
    /// The provider qualifier.
    pub provider: Option<String>,
    /// No sub-command.
    pub instruction_only: bool,
    /// The first error `skillc check` reports (`SK006: …`).
    pub error: Option<String>,
    /// One per sub-command.
    pub plans: Vec<Plan>,
}

/// One sub-command and its translation.
#[derive(Serialize)]
pub struct Plan {
    /// The words, or the GAIA tool name.
    pub subcommand: String,
    /// What it runs.
    pub program: Program,
    /// The heading it was first found under.
    pub source_section: String,
    /// Line of its first invocation.
    pub line: u32,
    /// Invocations merged.
    pub invocations: u32,
    /// Its arguments.
    pub args: Vec<Arg>,
    /// `translated` or `rejected`.
    pub status: &'static str,
    /// The executor name, when translated.
    pub name: Option<String>,
    /// The parts of the name, or the rejection.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// With `--explain`: what each word meant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<Vec<Step>>,
}

/// A plan's translation.
#[derive(Serialize)]
#[serde(untagged)]
pub enum Outcome {
    /// The parts of the name.
    Translated {
        /// Its action.
        action: String,
        /// Its object.
        object: String,
        /// Its qualifiers.
        qualifiers: Vec<String>,
    },
    /// Why it was rejected.
    Rejected {
        /// The rule (`TR001`…).
        code: &'static str,
        /// One sentence.
        reason: String,
    },
}

/// What a sub-command runs.
#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Program {
    /// A script of the skill.
    Script {
        /// Its path in the skill.
        path: String,
        /// Its interpreter.
        interpreter: String,
    },
    /// A declared binary.
    Binary {
        /// Its name.
        name: String,
    },
    /// A GAIA tool.
    Tool {
        /// Its module.
        module: String,
        /// Its function.
        function: String,
    },
}

/// An argument.
#[derive(Serialize)]
pub struct Arg {
    /// Its name.
    pub name: String,
    /// `string`, `integer`, `number`, `boolean`, `array` or `object`.
    #[serde(rename = "type")]
    pub ty: &'static str,
    /// Present in every invocation.
    pub required: bool,
    /// The flag (`--max`), for flags.
    pub flag: Option<String>,
    /// The 0-based position, for positionals.
    pub position: Option<usize>,
    /// Its description.
    pub description: Option<String>,
    /// Its default.
    pub default: Option<serde_json::Value>,
}

/// What one word meant.
#[derive(Serialize)]
pub struct Step {
    /// The word.
    pub word: String,
    /// Its meaning.
    pub meaning: String,
}

//! The data extraction produces: sub-commands, how they are run, and their arguments.

use crate::skill::gaia::ParamType;

/// Maximum number of words in a sub-command (`gog gmail messages search`).
pub const MAX_WORDS: usize = 3;

/// How a sub-command is run.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Program {
    /// One of the skill's own files, run by `interpreter` (empty: executed directly).
    Script {
        /// Path relative to the skill folder (`scripts/google_api.py`).
        path: String,
        /// `python3`, `bash`, `node`, … or empty.
        interpreter: String,
    },
    /// A binary the skill declares (`requires.bins`, `prerequisites.commands`).
    Binary {
        /// The command name (`gog`).
        name: String,
    },
    /// A typed GAIA tool: a Python function of the skill's `tools.py`.
    Tool {
        /// The module file, relative to the skill folder (`tools.py`).
        module: String,
        /// The function name.
        function: String,
    },
}

impl Program {
    /// A short human description: `scripts/x.py`, `gog`, `tools.py:search_web`.
    pub fn describe(&self) -> String {
        match self {
            Program::Script { path, .. } => path.clone(),
            Program::Binary { name } => name.clone(),
            Program::Tool { module, function } => format!("{module}:{function}"),
        }
    }
}

/// An argument of a sub-command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    /// Name used in the manifest and the wrapper's JSON input (`snake_case`).
    pub name: String,
    /// Inferred or declared type.
    pub ty: ParamType,
    /// Present in every invocation (or declared required).
    pub required: bool,
    /// The flag as written (`--max`), for flags.
    pub flag: Option<String>,
    /// The position among positionals, for positionals.
    pub position: Option<usize>,
    /// A description, when the source gives one.
    pub description: Option<String>,
    /// A default value, when the source declares one.
    pub default: Option<serde_json::Value>,
}

/// A sub-command found in a skill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubCommand {
    /// The sub-command words (`["gmail", "search"]`); a GAIA tool's name split on `_`.
    pub words: Vec<String>,
    /// How it is run.
    pub program: Program,
    /// Arguments merged across every invocation.
    pub args: Vec<Arg>,
    /// The body heading it was first found under (`Gmail`), or `metadata.gaia.tools`.
    pub source_section: String,
    /// Line of the first invocation in SKILL.md.
    pub line: u32,
    /// Number of invocations seen.
    pub invocations: u32,
    /// A description, when the source gives one (GAIA tools).
    pub description: Option<String>,
}

impl SubCommand {
    /// The sub-command as written (`gmail search`, or the GAIA tool name).
    pub fn display(&self) -> String {
        match &self.program {
            Program::Tool { function, .. } => function.clone(),
            _ => self.words.join(" "),
        }
    }
}

/// The sub-commands of one skill, in order of first appearance.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Extraction {
    /// The sub-commands.
    pub subcommands: Vec<SubCommand>,
}

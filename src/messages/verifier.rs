//! The external L6 verifier's request (schema `skillc.verifier/1`; keys sorted when sent).

use serde::Serialize;

/// The schema id.
pub const SCHEMA: &str = "skillc.verifier/1";

/// What the verifier receives on standard input for one executor.
#[derive(Serialize)]
pub struct Request<'a> {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// The executor name.
    pub executor: String,
    /// Its skill.
    pub skill: &'a str,
    /// Its action.
    pub action: &'a str,
    /// Its object.
    pub object: &'a str,
    /// Its qualifiers.
    pub qualifiers: &'a [String],
    /// The sub-command as written.
    pub subcommand: String,
    /// The sub-command's own wording.
    pub wording: Wording<'a>,
    /// The manifest as generated (its `[admission]` is provisional).
    pub manifest: Option<&'a str>,
    /// What the wrapper's `--describe` prints.
    pub contract: Option<&'a serde_json::Value>,
    /// The wrapper's Python source.
    pub wrapper: Option<&'a str>,
    /// The program it runs.
    pub program: Program<'a>,
}

/// The wording L6 reads.
#[derive(Serialize)]
pub struct Wording<'a> {
    /// The sub-command's description.
    pub description: Option<&'a str>,
    /// The heading it was found under.
    pub section: &'a str,
}

/// The program an executor runs.
#[derive(Serialize)]
pub struct Program<'a> {
    /// `script`, `binary` or `tool`.
    pub kind: &'static str,
    /// Its path in the skill (none for binaries).
    pub path: Option<&'a str>,
    /// Its name.
    pub name: String,
    /// The program file, lossily decoded (none without a file).
    pub text: Option<String>,
}

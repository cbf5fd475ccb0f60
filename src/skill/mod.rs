//! Skills: SKILL.md parsing (frontmatter, YAML), the model, and the validation rules, as
//! tracked queries over the database inputs.
//!
//! Architecture invariant: nothing here does IO, and nothing here returns `Err` for a problem
//! in the input: problems are diagnostics next to the value.

pub mod frontmatter;
pub mod gaia;
pub mod model;
pub mod tools;
pub mod validate;
pub mod writer;
pub mod yaml;
pub mod yaml_out;

use crate::db::{Contents, Settings, SkillSource};
use crate::diag::{Diagnostic, Pos, Span};
use crate::rules;
use validate::{Analysis, Context};

/// The analysis of a skill's SKILL.md: model, frontmatter tree and diagnostics. Empty when the
/// skill has no readable SKILL.md.
#[salsa::tracked(returns(ref))]
pub fn analyze_skill(db: &dyn salsa::Database, skill: SkillSource, settings: Settings) -> Analysis {
    let Some(file) = skill.skill_md(db) else {
        return Analysis::default();
    };
    let Contents::Bytes(bytes) = file.contents(db) else {
        return Analysis::default();
    };
    let display = format!("{}/{}", skill.display(db), file.rel_path(db));
    let ctx = Context {
        dir_name: skill.dir_name(db),
        mode: settings.mode(db),
    };
    validate::analyze(&display, bytes, &ctx)
}

/// The skill's `name` as read (trimmed, NFKC), when present: what translation needs of
/// SKILL.md's frontmatter. A query of its own so that an edit elsewhere in SKILL.md does not
/// re-run translation (backdating).
#[salsa::tracked(returns(ref))]
pub fn skill_name(db: &dyn salsa::Database, skill: SkillSource, settings: Settings) -> Option<String> {
    analyze_skill(db, skill, settings)
        .model
        .name
        .as_ref()
        .map(|n| n.value.clone())
}

/// The verdict of `skillc check` for one skill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillCheck {
    /// The skill's `name`, when it could be read.
    pub name: Option<String>,
    /// Every diagnostic, SKILL.md first, then support files.
    pub diagnostics: Vec<Diagnostic>,
}

/// Checks one skill: the folder (SKILL.md present, limits, symlinks) and its SKILL.md.
#[salsa::tracked(returns(ref))]
pub fn check_skill(db: &dyn salsa::Database, skill: SkillSource, settings: Settings) -> SkillCheck {
    let display = skill.display(db);
    let limits = settings.limits(db);
    let mut diags = Vec::new();
    let at_start = Span::at(Pos::START);
    match skill.skill_md(db) {
        None => diags.push(
            Diagnostic::new(&rules::SK001, display.clone(), at_start, "missing SKILL.md")
                .help("a skill is a folder with a SKILL.md file: YAML frontmatter (`name`, `description`) and a Markdown body"),
        ),
        Some(file) => {
            let path = format!("{display}/{}", file.rel_path(db));
            if file.rel_path(db) == "skill.md" {
                diags.push(
                    Diagnostic::new(&rules::SK015, path.clone(), at_start, "the skill file is named `skill.md`")
                        .help("rename it to `SKILL.md`; case-sensitive loaders will not find it"),
                );
            }
            if let Some(d) = file_problem(file.contents(db), &path, limits.skill_md_bytes, "SKILL.md") {
                diags.push(d);
            }
        }
    }
    let files = skill.files(db);
    if files.len() + 1 > limits.files_per_skill {
        diags.push(
            Diagnostic::new(
                &rules::SK042,
                display.clone(),
                at_start,
                format!(
                    "the skill holds {} files; the limit is {}",
                    files.len() + 1,
                    limits.files_per_skill
                ),
            )
            .help("remove generated or vendored files from the skill folder, or raise `limits.files_per_skill`"),
        );
    }
    for f in files {
        let path = format!("{display}/{}", f.rel_path(db));
        if let Some(d) = file_problem(f.contents(db), &path, limits.support_file_bytes, "support file") {
            diags.push(d);
        }
    }
    let analysis = analyze_skill(db, skill, settings);
    let mut all = analysis.diagnostics.clone();
    all.extend(diags);
    SkillCheck {
        name: analysis.model.name.as_ref().map(|n| n.value.clone()),
        diagnostics: all,
    }
}

fn file_problem(contents: &Contents, path: &str, limit: u64, what: &str) -> Option<Diagnostic> {
    let at_start = Span::at(Pos::START);
    match contents {
        Contents::Bytes(_) | Contents::Unread { .. } => None,
        Contents::TooLarge { size } => {
            let rule = if what == "SKILL.md" {
                &rules::SK040
            } else {
                &rules::SK041
            };
            Some(
                Diagnostic::new(
                    rule,
                    path,
                    at_start,
                    format!(
                        "{what} is {size} bytes ({}); the limit is {limit} bytes ({})",
                        human_size(*size),
                        human_size(limit)
                    ),
                )
                .help(if what == "SKILL.md" {
                    "move detail into `references/` files the body links to; keep SKILL.md short"
                } else {
                    "keep large data out of skills, or raise the limit in `pipeline.toml` `[limits]`"
                }),
            )
        }
        Contents::SymlinkEscape { target } => Some(
            Diagnostic::new(
                &rules::SK043,
                path,
                at_start,
                format!("symbolic link to `{target}`, outside the skill folder"),
            )
            .help("copy the file into the skill folder; links out of a skill are never followed"),
        ),
        Contents::Unreadable { error } => Some(Diagnostic::new(
            &rules::SK044,
            path,
            at_start,
            format!("cannot read {what}: {error}"),
        )),
    }
}

/// Formats a byte count as `12 B`, `64 KiB`, `20.0 MiB`.
pub fn human_size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB {
        if bytes.is_multiple_of(MIB) {
            format!("{} MiB", bytes / MIB)
        } else {
            format!("{:.1} MiB", bytes as f64 / MIB as f64)
        }
    } else if bytes >= KIB {
        if bytes.is_multiple_of(KIB) {
            format!("{} KiB", bytes / KIB)
        } else {
            format!("{:.1} KiB", bytes as f64 / KIB as f64)
        }
    } else {
        format!("{bytes} B")
    }
}

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
    if let Some(c) = control_character(skill.dir_name(db)) {
        diags.push(control_name(display, skill.dir_name(db), c, "folder"));
    }
    for f in files {
        if let Some(c) = control_character(f.rel_path(db)) {
            // The path would break every listing it enters: named escaped, on the folder.
            diags.push(control_name(display, f.rel_path(db), c, "file"));
            continue;
        }
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

/// The first character of a file name that no line-based listing survives
/// ([`breaks_listing`], `SK045`). Imports refuse such names too, and `skillc scan` reports
/// them (`SC004`).
pub fn control_character(name: &str) -> Option<char> {
    name.chars().find(|&c| breaks_listing(c))
}

/// Whether a character in a file name breaks a line-based listing: a C0 or C1 control
/// (newline, carriage return, tab, escape, …) or a Unicode line or paragraph separator.
pub fn breaks_listing(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
}

/// `SK045` for `name` (a path relative to the skill folder, or the folder's own name), reported
/// on the skill folder `display` with the name escaped.
fn control_name(display: &str, name: &str, c: char, what: &str) -> Diagnostic {
    Diagnostic::new(
        &rules::SK045,
        display,
        Span::at(Pos::START),
        format!(
            "the {what} name `{}` holds a control character (U+{:04X})",
            name.escape_debug(),
            u32::from(c)
        ),
    )
    .help("rename it: a newline or control character in a name breaks the signed catalog's listings")
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
        Contents::Unreadable { error } => Some(
            Diagnostic::new(&rules::SK044, path, at_start, format!("cannot read {what}: {error}"))
                .help("make it a regular file that skillc may read (not a folder, a FIFO, a device, a broken link or a loop of links)"),
        ),
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

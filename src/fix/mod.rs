//! `skillc check --fix`: the safe, mechanical fixes of SKILL.md problems, as a pure function
//! from the file's bytes to new bytes (the CLI reads, writes atomically and renames).
//!
//! A fix is *safe* when the skill means the same afterwards to every reader that understood
//! it before, and nothing the author wrote is lost: values are moved or re-spelled, never
//! dropped; an edit that would rewrite a line holding a comment is not made; the Markdown
//! body is never edited (only [`SK017`](crate::rules::SK017) changes its line ends). Every
//! edit goes through the frontmatter writer ([`crate::skill::writer`]), as `export` and
//! `migrate` do.
//!
//! The engine proposes edits for the fixable diagnostics of the current text, applies them
//! one at a time and re-validates after each: an edit is kept only when the diagnostics it
//! addresses go away, no new read error appears and the error count does not grow.
//! It stops when no proposal is left, so fixing a fixed file changes nothing.

mod proposals;

use proposals::Resolved;

use crate::diag::Severity;
use crate::model::Mode;
use crate::skill::validate::{self, Analysis, Context};

/// How one rule is fixed: the code and, for `skillc explain` and SARIF, what the fix does.
#[derive(Debug, PartialEq, Eq)]
pub struct RuleFix {
    /// The rule's code.
    pub code: &'static str,
    /// What `--fix` does, and when it does not.
    pub how: &'static str,
}

/// Every fixable rule, in the order fixes are tried (whole-file edits first).
pub static FIXES: &[RuleFix] = &[
    RuleFix {
        code: "SK003",
        how: "removes the byte order mark (the first three bytes).",
    },
    RuleFix {
        code: "SK017",
        how: "converts every CRLF line end to LF (frontmatter and body; no other byte changes).",
    },
    RuleFix {
        code: "SK018",
        how: "removes the spaces and tabs after `---`.",
    },
    RuleFix {
        code: "SK006",
        how: "only for a one-line top-level value holding `: ` (`description: Use it: now`): writes the value \
              double-quoted. Other YAML errors are not fixed.",
    },
    RuleFix {
        code: "SK015",
        how: "renames `skill.md` to `SKILL.md` (when the folder has no `SKILL.md`).",
    },
    RuleFix {
        code: "SK027",
        how: "sets `name` to the folder's name when that is a valid name; the folder is never renamed, unless \
              `--rename-folder` asks for it (then the folder takes the `name`, when that is valid and free).",
    },
    RuleFix {
        code: "SK033",
        how: "moves the key under `metadata`, its value as a string (nested values as compact JSON), as \
              `skillc export` does; with `--strict` every non-standard key, without it only unknown ones. Not \
              when `metadata` already has the key with another value, when `metadata` is not a mapping, or \
              when the key looks like a misspelt field (\"did you mean\").",
    },
    RuleFix {
        code: "SK035",
        how: "writes the nested value as a string of compact JSON (YAML 1.2 core types), as `skillc export` does.",
    },
    RuleFix {
        code: "SK013",
        how: "rewrites the flow mapping or list of a key in block style (same values; an empty `{}`/`[]` is left).",
    },
    RuleFix {
        code: "SK019",
        how: "writes the entries as one space-separated string (`Read Bash(git add:*)`).",
    },
    RuleFix {
        code: "SK012",
        how: "quotes the value (`\"yes\"`), so that every YAML reader reads the string skillc reads.",
    },
];

/// The fix of a rule, when it has one.
pub fn rule_fix(code: &str) -> Option<&'static RuleFix> {
    FIXES.iter().find(|f| f.code.eq_ignore_ascii_case(code))
}

/// What `--fix` may do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// The rule set the fixes aim at (`--strict` moves every non-standard key).
    pub mode: Mode,
    /// Rename the folder to a valid `name` instead of setting `name` (`--rename-folder`).
    pub rename_folder: bool,
}

/// A change outside SKILL.md's text, made by the CLI after the text is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FolderChange {
    /// Rename `skill.md` to `SKILL.md` (`SK015`).
    RenameSkillMd,
    /// Rename the skill folder to this name (`SK027` with `--rename-folder`).
    RenameFolder(String),
}

/// One edit made, for the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    /// The rule fixed.
    pub code: &'static str,
    /// What was done, in a few words (`set \`name\` to \`pdf-tools\``).
    pub what: String,
}

/// The outcome of fixing one SKILL.md.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fixed {
    /// The new text, when it differs from the old one.
    pub text: Option<String>,
    /// The edits made, in order.
    pub applied: Vec<Applied>,
    /// What the CLI must rename afterwards.
    pub changes: Vec<FolderChange>,
}

/// The skill being fixed: its SKILL.md and where it lives.
#[derive(Clone, Copy, Debug)]
pub struct Target<'a> {
    /// The path shown in diagnostics.
    pub file: &'a str,
    /// The folder's name (compared with `name`).
    pub dir_name: &'a str,
    /// The file is named `skill.md` and the folder has no `SKILL.md`.
    pub lowercase_file: bool,
}

/// Most edits one file gets: a bound against a fix that would undo another (none does).
const MAX_EDITS: usize = 64;

fn analyze(target: &Target<'_>, text: &str, mode: Mode) -> Analysis {
    let ctx = Context {
        dir_name: target.dir_name,
        mode,
    };
    validate::analyze(target.file, text.as_bytes(), &ctx)
}

fn errors(a: &Analysis) -> usize {
    a.diagnostics.iter().filter(|d| d.severity == Severity::Error).count()
}

fn count(a: &Analysis, code: &str) -> usize {
    a.diagnostics.iter().filter(|d| d.rule.code == code).count()
}

/// Which diagnostics of the file (those of [`validate::analyze`], in order) `--fix` removes:
/// the fixes are made in memory and the diagnostics that are gone afterwards (by code and
/// message, counted) are marked. `ignored` codes are never fixed.
pub fn fixable_in(target: &Target<'_>, bytes: &[u8], options: Options, ignored: &dyn Fn(&str) -> bool) -> Vec<bool> {
    let ctx = |dir_name| Context {
        dir_name,
        mode: options.mode,
    };
    let before = validate::analyze(target.file, bytes, &ctx(target.dir_name));
    let fixed = fix_skill_md(target, bytes, options, ignored);
    let renamed = fixed.changes.iter().find_map(|c| match c {
        FolderChange::RenameFolder(n) => Some(n.as_str()),
        FolderChange::RenameSkillMd => None,
    });
    if fixed.text.is_none() && renamed.is_none() {
        return vec![false; before.diagnostics.len()];
    }
    let text = fixed.text.as_deref().map_or(bytes, str::as_bytes);
    let after = validate::analyze(target.file, text, &ctx(renamed.unwrap_or(target.dir_name)));
    let mut left: Vec<(&str, &str)> = after
        .diagnostics
        .iter()
        .map(|d| (d.rule.code, d.message.as_str()))
        .collect();
    before
        .diagnostics
        .iter()
        .map(
            |d| match left.iter().position(|k| *k == (d.rule.code, d.message.as_str())) {
                Some(i) => {
                    left.swap_remove(i);
                    false
                }
                None => true,
            },
        )
        .collect()
}

/// Fixes what can be fixed safely in SKILL.md `bytes`; `ignored` codes are left alone.
/// A file that is not UTF-8 is not touched.
pub fn fix_skill_md(target: &Target<'_>, bytes: &[u8], options: Options, ignored: &dyn Fn(&str) -> bool) -> Fixed {
    let mut out = Fixed::default();
    let Ok(original) = std::str::from_utf8(bytes) else {
        return out;
    };
    let mut text = original.to_owned();
    let mut a = analyze(target, &text, options.mode);
    let mut rejected: Vec<(&'static str, String)> = Vec::new();
    for _ in 0..MAX_EDITS {
        let input = proposals::Input {
            target,
            text: &text,
            analysis: &a,
            options,
        };
        let mut next = None;
        for p in proposals::all(&input) {
            if ignored(p.code) || rejected.iter().any(|(c, w)| *c == p.code && *w == p.what) {
                continue;
            }
            if let Some(change) = p.change {
                // Renames happen on disk; the text is the same.
                if !out.changes.contains(&change) {
                    out.applied.push(Applied {
                        code: p.code,
                        what: p.what,
                    });
                    out.changes.push(change);
                }
                continue;
            }
            let Some(new) = p.edits.apply(&text) else {
                rejected.push((p.code, p.what));
                continue;
            };
            let after = analyze(target, &new, options.mode);
            if accept(&a, &after, &p.resolved, new != text) {
                next = Some((new, after, p));
                break;
            }
            rejected.push((p.code, p.what));
        }
        let Some((new, after, p)) = next else { break };
        out.applied.push(Applied {
            code: p.code,
            what: p.what,
        });
        text = new;
        a = after;
    }
    if target.lowercase_file && !ignored("SK015") {
        out.applied.push(Applied {
            code: "SK015",
            what: "renamed `skill.md` to `SKILL.md`".into(),
        });
        out.changes.push(FolderChange::RenameSkillMd);
    }
    if text != original {
        out.text = Some(text);
    }
    out
}

/// Whether an edit did what it was for: the text changed, it is resolved (fewer diagnostics
/// of the codes it addresses, or the YAML parses past the edited line), no read error appeared
/// that was not there, and the errors did not grow.
fn accept(before: &Analysis, after: &Analysis, resolved: &Resolved, changed: bool) -> bool {
    let reads = |a: &Analysis| a.read_errors().map(|d| d.rule.code).collect::<Vec<_>>();
    let (rb, ra) = (reads(before), reads(after));
    let new_read_error = ra.iter().any(|c| !rb.contains(c)) || ra.len() > rb.len();
    let fewer = match resolved {
        Resolved::Fewer(codes) => {
            codes.iter().any(|c| count(after, c) < count(before, c))
                && codes.iter().all(|c| count(after, c) <= count(before, c))
        }
        Resolved::ParsesThrough(end) => !after
            .diagnostics
            .iter()
            .any(|d| d.rule.code == "SK006" && d.span.start.offset < *end),
    };
    // A fixed read error lets validation reach the fields, which may have errors of their own.
    let read_fixed = ra.len() < rb.len();
    changed && fewer && !new_read_error && (read_fixed || errors(after) <= errors(before))
}

#[cfg(test)]
mod tests;

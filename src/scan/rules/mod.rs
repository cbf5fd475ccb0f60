//! The behaviour rules over a file's text, one file per rule: decode-then-execute
//! (`SC010`), download-and-execute (`SC011`), password-protected archives (`SC012`), paste
//! sites (`SC013`), raw-IP URLs (`SC014`), credential reads near network sends (`SC015`),
//! environment dumps (`SC016`) and prompt injection (`SC017`). Each rule's fixtures are the
//! `tests/fixtures/scan/` folders its file names.
//!
//! Matching is hand-written over lower-cased lines; a line is looked at only when the
//! trigger automaton ([`crate::scan::lexicon`]) finds one of its words. Rules see logical
//! lines ([`crate::scan::lines`]); each match is a [`Hit`], which the context rules
//! ([`crate::scan::context`]) turn into a finding.

pub(crate) mod sc010_decode_and_execute;
pub(crate) mod sc011_download_and_execute;
pub(crate) mod sc012_protected_archive;
pub(crate) mod sc013_paste_site;
pub(crate) mod sc014_raw_ip_url;
pub(crate) mod sc015_credential_exfiltration;
pub(crate) mod sc016_environment_dump;
pub(crate) mod sc017_prompt_injection;

#[cfg(test)]
mod tests;

use crate::scan::context::{self, Hit};
use crate::scan::lexicon::SEND;
use crate::scan::lines::{Line, split_lines};
use crate::scan::{Finding, SkillContext};

/// Scans a text file for behaviour patterns. `ext` is the lower-case extension.
pub fn scan_text(ctx: &SkillContext, rel: &str, ext: &str, text: &str, file: &str, out: &mut Vec<Finding>) {
    let markdown =
        matches!(ext, "md" | "markdown" | "mdx" | "prose" | "txt" | "rst") || rel.eq_ignore_ascii_case("skill.md");
    let lines = split_lines(text, markdown);
    let mut hits: Vec<(usize, Hit)> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.mask == 0 {
            continue;
        }
        let raw = l.text(text);
        let low = raw.to_ascii_lowercase();
        line_rules(raw, &low, l.mask, &mut |h| hits.push((i, h)));
    }
    window_rules(text, &lines, &mut hits);
    for (i, h) in hits {
        out.push(context::finding(ctx, markdown, text, &lines, i, h, file));
    }
}

/// The rules that need only one (logical) line: `raw` as written, `s` lower-cased, `mask`
/// its trigger categories.
fn line_rules(raw: &str, s: &str, mask: u16, push: &mut dyn FnMut(Hit)) {
    let exec_found = sc011_download_and_execute::line(s, mask, push);
    // A download that is run already says everything SC010 and SC014 would.
    if !exec_found {
        sc010_decode_and_execute::line(raw, s, mask, push);
    }
    sc012_protected_archive::line(raw, mask, push);
    if !exec_found {
        sc014_raw_ip_url::line(s, mask, push);
    }
    sc015_credential_exfiltration::line(raw, s, mask, push);
    sc016_environment_dump::line(raw, s, mask, push);
    sc017_prompt_injection::line(raw, s, mask, push);
}

/// Rules over nearby lines: credential or environment reads near a send (same code block,
/// within [`sc015_credential_exfiltration::WINDOW`] lines), password-protected archives and
/// paste-site installers. They run after the line rules and see their hits.
fn window_rules(text: &str, lines: &[Line], hits: &mut Vec<(usize, Hit)>) {
    let w = Window::new(text, lines);
    for (i, l) in lines.iter().enumerate() {
        if l.mask == 0 {
            continue;
        }
        sc015_credential_exfiltration::window(&w, i, hits);
        sc016_environment_dump::window(&w, i, hits);
        sc012_protected_archive::window(&w, i, hits);
        sc013_paste_site::window(&w, i, hits);
    }
}

/// The lines of a file as the window rules look at them.
pub(crate) struct Window<'a> {
    text: &'a str,
    lines: &'a [Line],
    /// Indices of the code lines that send data out.
    sends_at: Vec<usize>,
}

impl<'a> Window<'a> {
    fn new(text: &'a str, lines: &'a [Line]) -> Self {
        let mut w = Window {
            text,
            lines,
            sends_at: Vec::new(),
        };
        w.sends_at = (0..lines.len())
            .filter(|&i| {
                lines[i].mask & SEND != 0
                    && lines[i].block > 0
                    && sc015_credential_exfiltration::sends(&w.raw(i), &w.low(i))
            })
            .collect();
        w
    }

    /// Line `i`.
    pub(crate) fn line(&self, i: usize) -> &'a Line {
        &self.lines[i]
    }

    /// Line `i`, lower-cased.
    pub(crate) fn low(&self, i: usize) -> String {
        self.lines[i].text(self.text).to_ascii_lowercase()
    }

    /// Line `i` as written.
    pub(crate) fn raw(&self, i: usize) -> String {
        self.lines[i].text(self.text).to_owned()
    }

    /// The indices of the lines within `w` of line `i`.
    pub(crate) fn near(&self, i: usize, w: usize) -> std::ops::Range<usize> {
        i.saturating_sub(w)..(i + w + 1).min(self.lines.len())
    }

    /// Whether a line of the same code block as line `i`, within `w` lines of it, sends data
    /// out.
    pub(crate) fn send_near(&self, i: usize, w: usize) -> bool {
        let block = self.lines[i].block;
        self.sends_at
            .iter()
            .any(|&j| j != i && self.lines[j].block == block && j.abs_diff(i) <= w)
    }
}

/// Whether a hit of `code` was already recorded on line `i`.
pub(crate) fn already(hits: &[(usize, Hit)], i: usize, code: &str) -> bool {
    hits.iter().any(|(j, h)| *j == i && h.rule.code == code)
}

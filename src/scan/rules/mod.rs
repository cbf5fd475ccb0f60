//! The behaviour rules, one file per rule. Each rule's fixtures are the
//! `tests/fixtures/scan/` folders its file names.
//!
//! Over a file's text: decode-then-execute (`SC010`), download-and-execute (`SC011`),
//! password-protected archives (`SC012`), paste sites (`SC013`), raw-IP URLs (`SC014`),
//! credential reads near network sends (`SC015`), environment dumps (`SC016`), prompt
//! injection (`SC017`), credential harvesting instructions (`SC018`), and reverse-shell
//! one-liners (`SC047`). Matching is hand-written over lower-cased lines; a line is looked
//! at only when the trigger automaton (`scan::lexicon`) finds one of its words. Rules see
//! logical lines (`scan::lines`); each match is a [`Hit`], which the context rules
//! (`scan::context`) turn into a finding.
//!
//! Over a script's code (`scan::code`'s facts): dynamic code execution (`SC040`), secrets
//! sent over the network (`SC041`), gated behaviour (`SC042`), unsafe deserialisation
//! (`SC043`), staged payloads (`SC044`), command shadowing (`SC045`) and reverse shells
//! (`SC047`). Over a file's bytes and the skill's files: disguised files (`SC046`).

pub(crate) mod sc010_decode_and_execute;
pub(crate) mod sc011_download_and_execute;
pub(crate) mod sc012_protected_archive;
pub(crate) mod sc013_paste_site;
pub(crate) mod sc014_raw_ip_url;
pub(crate) mod sc015_credential_exfiltration;
pub(crate) mod sc016_environment_dump;
pub(crate) mod sc017_prompt_injection;
pub(crate) mod sc018_credential_harvest;
pub(crate) mod sc040_dynamic_code_execution;
pub(crate) mod sc041_secret_to_network;
pub(crate) mod sc042_gated_behaviour;
pub(crate) mod sc043_unsafe_deserialisation;
pub(crate) mod sc044_staged_payload;
pub(crate) mod sc045_command_shadowing;
pub(crate) mod sc046_disguised_file;
pub(crate) mod sc047_reverse_shell;

#[cfg(test)]
mod tests;

use crate::scan::code::CodeHit;
use crate::scan::code::facts::{Facts, Lang};
use crate::scan::context::{self, Hit};
use crate::scan::lexicon::SEND;
use crate::scan::lines::{Kind, Line, split_lines};
use crate::scan::{Finding, SkillContext};

/// A data file that a line runs with an interpreter (for `SC046`).
#[derive(Clone, Debug)]
pub(crate) struct DataRun {
    /// The 1-based line.
    pub(crate) line: u32,
    /// The path as written.
    pub(crate) path: String,
    /// The interpreter's language.
    pub(crate) lang: &'static str,
}

/// Scans a text file for behaviour patterns. `ext` is the lower-case extension.
#[cfg(test)]
pub fn scan_text(ctx: &SkillContext, rel: &str, ext: &str, text: &str, file: &str, out: &mut Vec<Finding>) {
    scan_text_with(ctx, rel, ext, text, file, out, false, &[]);
}

/// [`scan_text`]; `dataflow` when the file was analysed as code, whose data flow (`SC041`)
/// replaces the credential-near-a-send windows of `SC015`/`SC016`. Returns the lines that
/// run one of `data_files` (base names of the skill's data files) with an interpreter.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scan_text_with(
    ctx: &SkillContext,
    rel: &str,
    ext: &str,
    text: &str,
    file: &str,
    out: &mut Vec<Finding>,
    dataflow: bool,
    data_files: &[String],
) -> Vec<DataRun> {
    let markdown =
        matches!(ext, "md" | "markdown" | "mdx" | "prose" | "txt" | "rst") || rel.eq_ignore_ascii_case("skill.md");
    let lines = split_lines(text, markdown);
    let mut hits: Vec<(usize, Hit)> = Vec::new();
    let mut runs = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.mask == 0 {
            continue;
        }
        let raw = l.text(text);
        let low = raw.to_ascii_lowercase();
        line_rules(raw, &low, l.mask, &mut |h| hits.push((i, h)));
    }
    // Data files of the skill that a line runs with an interpreter (`SC046`): only lines
    // naming one of them are looked at.
    for name in data_files {
        for (k, line) in text.lines().enumerate().filter(|(_, l)| l.contains(name.as_str())) {
            for (path, lang) in sc046_disguised_file::runs_data_file(line) {
                runs.push(DataRun {
                    line: u32::try_from(k + 1).unwrap_or(u32::MAX),
                    path,
                    lang,
                });
            }
        }
    }
    window_rules(text, &lines, &mut hits, !dataflow);
    // Harvesting instructions are prose addressed to the agent, not code.
    hits.retain(|(i, h)| h.rule != &crate::rules::SC018 || (markdown && lines[*i].kind == Kind::Prose));
    for (i, h) in hits {
        out.push(context::finding(ctx, markdown, text, &lines, i, h, file));
    }
    runs
}

/// The text rules over a string the code built (or runs), as a script: the hits, without
/// positions (the caller reports them where the string is built).
pub(crate) fn script_hits(text: &str) -> Vec<Hit> {
    let lines = split_lines(text, false);
    let mut hits: Vec<(usize, Hit)> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.mask == 0 {
            continue;
        }
        let raw = l.text(text);
        let low = raw.to_ascii_lowercase();
        line_rules(raw, &low, l.mask, &mut |h| hits.push((i, h)));
    }
    window_rules(text, &lines, &mut hits, true);
    hits.into_iter()
        .map(|(_, h)| h)
        .filter(|h| h.rule != &crate::rules::SC018)
        .collect()
}

/// The code rules over one script's facts.
pub(crate) fn code_rules(facts: &Facts, _lang: Lang, out: &mut Vec<CodeHit>) {
    sc040_dynamic_code_execution::check(facts, out);
    sc041_secret_to_network::check(facts, out);
    sc042_gated_behaviour::check(facts, out);
    sc043_unsafe_deserialisation::check(facts, out);
    sc044_staged_payload::check(facts, out);
    sc045_command_shadowing::check(facts, out);
    sc047_reverse_shell::check(facts, out);
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
    sc018_credential_harvest::line(raw, s, mask, push);
    sc047_reverse_shell::line(s, mask, push);
}

/// Rules over nearby lines: credential or environment reads near a send (same code block,
/// within [`sc015_credential_exfiltration::WINDOW`] lines), password-protected archives and
/// paste-site installers. They run after the line rules and see their hits. `credentials`:
/// the `SC015`/`SC016` windows run (not in a script whose data flow was analysed).
fn window_rules(text: &str, lines: &[Line], hits: &mut Vec<(usize, Hit)>, credentials: bool) {
    let w = Window::new(text, lines);
    for (i, l) in lines.iter().enumerate() {
        if l.mask == 0 {
            continue;
        }
        if credentials {
            sc015_credential_exfiltration::window(&w, i, hits);
            sc016_environment_dump::window(&w, i, hits);
        }
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

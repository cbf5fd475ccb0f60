//! `--format github`: GitHub Actions workflow commands, one annotation per line
//! (`::error file=…,line=…,col=…,title=…::message`), for `check` and `scan`.
//!
//! The escaping follows the runner's command parser (actions/toolkit, `command.ts`): in the
//! message, `%`, CR and LF become `%25`, `%0D`, `%0A`; in a property value also `:` and `,`
//! become `%3A` and `%2C`. Nothing else is escaped, so every annotation is exactly one line.

use crate::diag::{Diagnostic, Severity, printable};
use crate::model::FindingSeverity;
use crate::scan::Finding;

/// The annotation levels GitHub shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    /// `::error`
    Error,
    /// `::warning`
    Warning,
    /// `::notice`
    Notice,
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Notice => "notice",
        }
    }
}

/// The message of a workflow command, escaped.
pub(crate) fn escape_data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// A property value of a workflow command, escaped.
pub(crate) fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// One annotation: where (file and 1-based line/column, with the exclusive end when known),
/// a title and the message.
pub(crate) struct Annotation<'a> {
    pub level: Level,
    pub file: &'a str,
    pub line: u32,
    pub col: u32,
    /// `(end_line, end_column)`, the position just past the problem.
    pub end: Option<(u32, u32)>,
    pub title: String,
    pub message: String,
}

impl Annotation<'_> {
    /// The workflow command line (without its line break).
    pub(crate) fn render(&self) -> String {
        let mut props = vec![
            format!("file={}", escape_property(&printable(self.file))),
            format!("line={}", self.line),
            format!("col={}", self.col),
        ];
        if let Some((end_line, end_col)) = self.end {
            props.push(format!("endLine={end_line}"));
            // GitHub's `endColumn` is inclusive and only meaningful on one line.
            if end_line == self.line && end_col > self.col {
                props.push(format!("endColumn={}", end_col - 1));
            }
        }
        props.push(format!("title={}", escape_property(&self.title)));
        format!(
            "::{} {}::{}",
            self.level.as_str(),
            props.join(","),
            escape_data(&self.message)
        )
    }
}

/// The annotation of a `check` diagnostic: its severity, span, `CODE rule-name` as title, and
/// the message with its help on a second line.
pub(crate) fn diagnostic(d: &Diagnostic) -> String {
    let level = match d.severity {
        Severity::Error => Level::Error,
        Severity::Warning => Level::Warning,
        Severity::Note => Level::Notice,
    };
    let mut message = d.message.clone();
    if let Some(help) = &d.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    Annotation {
        level,
        file: &d.file,
        line: d.span.start.line,
        col: d.span.start.column,
        end: (d.span.end.offset > d.span.start.offset).then_some((d.span.end.line, d.span.end.column)),
        title: format!("{} {}", d.rule.code, d.rule.name),
        message,
    }
    .render()
}

/// The annotation of a scan finding: `error` at high and critical, `warning` at medium,
/// `notice` below (as the SARIF levels); `known` marks a finding of the baseline.
pub(crate) fn finding(f: &Finding, known: bool) -> String {
    let level = match f.severity {
        FindingSeverity::Critical | FindingSeverity::High => Level::Error,
        FindingSeverity::Medium => Level::Warning,
        FindingSeverity::Low | FindingSeverity::Info => Level::Notice,
    };
    let mut message = f.reason.clone();
    if !f.context.is_empty() {
        message.push_str(&format!(" (lowered: {})", f.context));
    }
    let known = if known { ", known: in the baseline" } else { "" };
    Annotation {
        // A known finding never fails the run, so it is not shown as an error.
        level: if known.is_empty() { level } else { Level::Notice },
        file: &f.file,
        line: f.line,
        col: f.column,
        end: None,
        title: format!("{} {} ({}{known})", f.rule.code, f.rule.name, f.severity),
        message,
    }
    .render()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_follows_the_runner() {
        assert_eq!(escape_data("50% done\r\nnext"), "50%25 done%0D%0Anext");
        assert_eq!(escape_property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
        let a = Annotation {
            level: Level::Warning,
            file: "skills/a,b/SKILL.md",
            line: 3,
            col: 7,
            end: Some((3, 10)),
            title: "SK035 metadata-not-string".into(),
            message: "`metadata.tags` is a sequence: not a string\nhelp: x".into(),
        };
        assert_eq!(
            a.render(),
            "::warning file=skills/a%2Cb/SKILL.md,line=3,col=7,endLine=3,endColumn=9,title=SK035 metadata-not-string::`metadata.tags` is a sequence: not a string%0Ahelp: x"
        );
    }
}

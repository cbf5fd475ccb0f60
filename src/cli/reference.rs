//! The reference commands: `skillc explain [CODE]` (the rules) and `skillc vocabulary` (the
//! vocabulary in use), as text or `--format json` (docs/json.md).

use super::{Printer, ReportFormat, Status, project};
use crate::diag::{RuleSeverity, Severity};
use crate::messages::reference as msg;

/// `skillc explain [CODE]`: the long explanation of one rule and how `check --fix` fixes it,
/// or the list of every rule (`fix` marks the fixable ones).
pub(crate) fn explain(code: Option<&str>, format: ReportFormat, out: &mut Printer) -> anyhow::Result<Status> {
    let rules: Vec<&'static crate::diag::Rule> = match code {
        Some(code) => match crate::rules::find(code) {
            Some(rule) => vec![rule],
            None => anyhow::bail!("unknown code `{code}`; run `skillc explain` to list every code"),
        },
        None => crate::rules::ALL.to_vec(),
    };
    if format == ReportFormat::Json {
        let doc = msg::Explain {
            schema: msg::EXPLAIN_SCHEMA,
            rules: rules.iter().map(|r| rule_message(r, code.is_some())).collect(),
        };
        out.line(&serde_json::to_string_pretty(&doc)?)?;
    } else if let (Some(_), [rule]) = (code, rules.as_slice()) {
        out.line(rule.explanation.trim_end())?;
        // Whether and how `check --fix` fixes it: one table (crate::fix::FIXES).
        if let Some(f) = crate::fix::rule_fix(rule.code) {
            out.line(&format!("\n## Fix\n\n`skillc check --fix` {}", f.how))?;
        } else if rule.code.starts_with("SK") {
            out.line("\n## Fix\n\nNot fixed by `skillc check --fix`: the fix needs a person's judgement.")?;
        }
    } else {
        for r in rules {
            let fix = if crate::fix::rule_fix(r.code).is_some() {
                "fix"
            } else {
                ""
            };
            out.line(&format!(
                "{}  {:<28} {:<8} {fix:<3}  {}",
                r.code, r.name, r.severity, r.summary
            ))?;
        }
    }
    out.flush()?;
    Ok(Status::Success)
}

fn rule_message(r: &'static crate::diag::Rule, long: bool) -> msg::Rule<'static> {
    let fix = crate::fix::rule_fix(r.code);
    msg::Rule {
        code: r.code,
        name: r.name,
        kind: match r.severity {
            RuleSeverity::Diagnostic(_) => "diagnostic",
            RuleSeverity::Finding(_) => "scan",
        },
        severity: r.severity.to_string(),
        summary: r.summary,
        fixable: fix.is_some(),
        fix: fix.map(|f| f.how),
        explanation: long.then_some(r.explanation.trim_end()),
    }
}

/// `skillc vocabulary [--default]`: the vocabulary in use (the project's file, else the
/// built-in one) as written, or as read (`--format json`; a vocabulary with errors prints
/// them and fails, exit status 2, as for a build).
pub(crate) fn vocabulary(default: bool, format: ReportFormat, out: &mut Printer) -> anyhow::Result<Status> {
    let (path, text) = if default {
        (
            crate::vocab::DEFAULT_PATH.to_owned(),
            crate::vocab::DEFAULT_TEXT.to_owned(),
        )
    } else {
        let project = project::load(&std::env::current_dir()?, out)?;
        project::vocabulary_source(&project, None, out)?
    };
    // Checked before anything is printed, in every format: `skillc vocabulary >
    // vocabulary.toml` must not turn a broken (or, through the shell's truncation, empty)
    // project vocabulary into a file that looks like one.
    let loaded = crate::vocab::parse(&path, &text);
    project::print_file_diagnostics(out, &loaded.diagnostics, &text);
    if loaded.diagnostics.iter().any(|d| d.severity == Severity::Error) {
        anyhow::bail!(
            "the vocabulary {path} has errors (see above); `skillc vocabulary --default` prints the built-in one"
        );
    }
    if format == ReportFormat::Human {
        out.write(&text)?;
        out.flush()?;
        return Ok(Status::Success);
    }
    let v = &loaded.vocabulary;
    let doc = msg::Vocabulary {
        schema: msg::VOCABULARY_SCHEMA,
        path: &path,
        actions: v
            .actions
            .values()
            .map(|a| msg::Action {
                entry: entry(&a.name, &a.en, &a.it, &a.synonyms),
                class: a.class.as_str(),
                object: a.object.as_deref(),
            })
            .collect(),
        objects: v
            .objects
            .values()
            .map(|o| msg::Object {
                entry: entry(&o.name, &o.en, &o.it, &o.synonyms),
                domain: o.domain.as_deref(),
            })
            .collect(),
        qualifiers: v
            .qualifiers
            .values()
            .map(|q| msg::Qualifier {
                entry: entry(&q.name, &q.en, &q.it, &q.synonyms),
                class: q.class.map(crate::vocab::QualifierClass::as_str),
                objects: &q.objects,
            })
            .collect(),
        domains: v
            .domains
            .values()
            .map(|d| msg::Domain {
                entry: entry(&d.name, &d.en, &d.it, &d.synonyms),
                object: d.object.as_deref(),
                meanings: d
                    .meanings
                    .iter()
                    .map(|(word, m)| msg::Meaning {
                        word,
                        action: m.action.as_deref(),
                        object: m.object.as_deref(),
                        qualifier: m.qualifier.as_deref(),
                    })
                    .collect(),
            })
            .collect(),
        rules: v
            .rules
            .iter()
            .map(|r| msg::ContextRule {
                line: r.line,
                domain: r.domain.as_deref(),
                action: &r.action,
                then_action: &r.then_action,
                then_object: &r.then_object,
                then_qualifiers: &r.then_qualifiers,
            })
            .collect(),
    };
    out.line(&serde_json::to_string_pretty(&doc)?)?;
    out.flush()?;
    Ok(Status::Success)
}

fn entry<'a>(name: &'a str, en: &'a str, it: &'a str, synonyms: &'a [String]) -> msg::Entry<'a> {
    msg::Entry { name, en, it, synonyms }
}

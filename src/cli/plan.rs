//! `skillc plan`: the sub-commands of each skill and their canonical names or rejections.

use std::collections::BTreeMap;
use std::path::PathBuf;

use rayon::prelude::*;
use serde_json::json;

use super::check::load_skills;
use super::{Printer, ReportFormat, Status, project};
use crate::db::{SkillSource, TextInput};
use crate::diag::Severity;
use crate::extract::{Arg, Program};
use crate::model::Mode;
use crate::translate::{self, Outcome, Plan, Translation};
use crate::vocab;

/// Arguments of `skillc plan`.
#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// Skill folders, SKILL.md files, or folders to search (default: the configured roots).
    pub paths: Vec<PathBuf>,
    /// Show how each word of each sub-command was mapped (rule or synonym).
    #[arg(long)]
    pub explain: bool,
    /// Use this vocabulary file instead of the configured or built-in one.
    #[arg(long, value_name = "FILE")]
    pub vocabulary: Option<PathBuf>,
    /// Output format.
    #[arg(long, visible_alias = "message-format", value_enum, default_value_t = ReportFormat::Human)]
    pub format: ReportFormat,
    /// Also list instruction-only skills (no sub-commands).
    #[arg(long)]
    pub all: bool,
    /// Print only the summary line (and invalid skills).
    #[arg(short, long)]
    pub quiet: bool,
}

/// JSON of a program.
pub(crate) fn program_json(p: &Program) -> serde_json::Value {
    match p {
        Program::Script { path, interpreter } => json!({"kind": "script", "path": path, "interpreter": interpreter}),
        Program::Binary { name } => json!({"kind": "binary", "name": name}),
        Program::Tool { module, function } => json!({"kind": "tool", "module": module, "function": function}),
    }
}

/// JSON of an argument.
pub(crate) fn arg_json(a: &Arg) -> serde_json::Value {
    json!({"name": a.name, "type": a.ty.as_str(), "required": a.required, "flag": a.flag, "position": a.position,
           "description": a.description, "default": a.default})
}

fn plan_json(p: &Plan, explain: bool) -> serde_json::Value {
    let sc = &p.subcommand;
    let mut v = json!({
        "subcommand": sc.display(),
        "program": program_json(&sc.program),
        "source_section": sc.source_section,
        "line": sc.line,
        "invocations": sc.invocations,
        "args": sc.args.iter().map(arg_json).collect::<Vec<_>>(),
    });
    match &p.outcome {
        Outcome::Translated(n) => {
            v["status"] = "translated".into();
            v["name"] = n.full().into();
            v["action"] = n.action.clone().into();
            v["object"] = n.object.clone().into();
            v["qualifiers"] = n.qualifiers.clone().into();
        }
        Outcome::Rejected { rule, reason, .. } => {
            v["status"] = "rejected".into();
            v["name"] = serde_json::Value::Null;
            v["code"] = rule.code.into();
            v["reason"] = reason.clone().into();
        }
    }
    if explain {
        v["explain"] = p
            .steps
            .iter()
            .map(|s| json!({"word": s.word, "meaning": s.meaning}))
            .collect::<Vec<_>>()
            .into();
    }
    v
}

/// PlanSummary over all skills.
#[derive(Default)]
pub(crate) struct PlanSummary {
    pub skills: usize,
    pub with_subcommands: usize,
    pub plans: usize,
    pub translated: usize,
    pub rejected: BTreeMap<&'static str, usize>,
}

impl PlanSummary {
    pub(crate) fn add(&mut self, t: &Translation) {
        self.skills += 1;
        if !t.plans.is_empty() {
            self.with_subcommands += 1;
        }
        for p in &t.plans {
            self.plans += 1;
            match &p.outcome {
                Outcome::Translated(_) => self.translated += 1,
                Outcome::Rejected { rule, .. } => *self.rejected.entry(rule.code).or_default() += 1,
            }
        }
    }

    fn rejected_total(&self) -> usize {
        self.rejected.values().sum()
    }

    pub(crate) fn line(&self) -> String {
        let reasons: Vec<String> = self.rejected.iter().map(|(c, n)| format!("{c} {n}")).collect();
        let by = if reasons.is_empty() {
            String::new()
        } else {
            format!(" ({})", reasons.join(", "))
        };
        format!(
            "planned {}: {} with sub-commands, {} instruction-only; {}: {} translated, {} rejected{by}",
            super::output::count(self.skills, "skill"),
            self.with_subcommands,
            self.skills - self.with_subcommands,
            super::output::count(self.plans, "plan"),
            self.translated,
            self.rejected_total()
        )
    }
}

/// Describes an argument for `--explain`: `to (string, required, --to)`.
fn arg_text(a: &Arg) -> String {
    let how = match (&a.flag, a.position) {
        (Some(f), _) => f.clone(),
        (None, Some(p)) => format!("position {p}"),
        (None, None) => "keyword".to_owned(),
    };
    let req = if a.required { "required" } else { "optional" };
    format!("{} ({}, {req}, {how})", a.name, a.ty.as_str())
}

pub(crate) fn run(args: &PlanArgs, out: &mut Printer) -> anyhow::Result<Status> {
    let cwd = std::env::current_dir()?;
    let project = project::load(&cwd, out)?;
    let (base, paths) = project.inputs(&args.paths);
    let loaded = load_skills(
        &base,
        &paths,
        Mode::Default,
        project.config.limits,
        false,
        &[project.root.join(&project.config.out)],
    )?;
    let (vpath, vtext) = project::vocabulary_source(&project, args.vocabulary.as_deref())?;
    let db = &loaded.db;
    let vocab_input = TextInput::new(db, vpath, vtext.clone());
    let lv = vocab::vocabulary(db, vocab_input);
    project::print_file_diagnostics(out, &lv.diagnostics, &vtext);
    if lv.diagnostics.iter().any(|d| d.severity == Severity::Error) {
        anyhow::bail!("the vocabulary has errors (see above)");
    }
    let settings = loaded.settings;
    // Per skill: its translation, and its first error when `check` would reject it.
    let results: Vec<(SkillSource, Translation, Option<String>)> = loaded
        .skills
        .par_iter()
        .map_with(db.clone(), |db, s| {
            let error = crate::skill::check_skill(db, *s, settings)
                .diagnostics
                .iter()
                .find(|d| d.severity == Severity::Error)
                .map(|d| format!("{}: {}", d.code(), d.message));
            (
                *s,
                translate::translate_skill(db, *s, settings, vocab_input).clone(),
                error,
            )
        })
        .collect();
    let mut totals = PlanSummary::default();
    for (_, t, _) in &results {
        totals.add(t);
    }
    let invalid = results.iter().filter(|(_, _, e)| e.is_some()).count() + loaded.problems.len();
    match args.format {
        ReportFormat::Json => {
            let mut skills: Vec<serde_json::Value> = loaded
                .problems
                .iter()
                .map(|p| {
                    json!({"path": p.file, "name": null, "provider": null, "instruction_only": false,
                               "error": format!("{}: {}", p.code(), p.message), "plans": []})
                })
                .collect();
            skills.extend(results.iter().map(|(s, t, error)| {
                let name = crate::skill::analyze_skill(db, *s, settings).model.name.as_ref().map(|n| n.value.clone());
                json!({"path": s.display(db), "name": name, "provider": t.provider, "instruction_only": t.plans.is_empty(),
                       "error": error, "plans": t.plans.iter().map(|p| plan_json(p, args.explain)).collect::<Vec<_>>()})
            }));
            let report = json!({
                "schema": "skillc.plan/1",
                "summary": {"skills": totals.skills, "invalid": invalid, "with_subcommands": totals.with_subcommands,
                            "instruction_only": totals.skills - totals.with_subcommands, "plans": totals.plans,
                            "translated": totals.translated, "rejected": totals.rejected_total(),
                            "rejected_by_reason": totals.rejected},
                "skills": skills,
            });
            out.line(&serde_json::to_string_pretty(&report)?)?;
        }
        ReportFormat::Human => {
            for p in &loaded.problems {
                out.line(&format!("{}  (invalid: {}: {})", p.file, p.code(), p.message))?;
            }
            for (s, t, error) in &results {
                if let Some(e) = error {
                    out.line(&format!(
                        "{}  (invalid: {e}; run `skillc check` for details)",
                        s.display(db)
                    ))?;
                }
                if args.quiet {
                    continue;
                }
                if t.plans.is_empty() {
                    if args.all && error.is_none() {
                        out.line(&format!("{}  (instruction-only)\n", s.display(db)))?;
                    }
                    continue;
                }
                let provider = t.provider.as_deref().unwrap_or("-");
                out.line(&format!("{}  provider {provider}", s.display(db)))?;
                let width = t.plans.iter().map(|p| p.subcommand.display().len()).max().unwrap_or(0);
                for p in &t.plans {
                    let sc = p.subcommand.display();
                    let result = match &p.outcome {
                        Outcome::Translated(n) => n.full(),
                        Outcome::Rejected { rule, reason, .. } => format!("rejected [{}]: {reason}", rule.code),
                    };
                    out.line(&format!("  {sc:<width$}  → {result}"))?;
                    if args.explain {
                        for step in &p.steps {
                            let w = if step.word.is_empty() {
                                "·".to_owned()
                            } else {
                                step.word.clone()
                            };
                            out.line(&format!("  {:<width$}      {w}: {}", "", step.meaning))?;
                        }
                        if !p.subcommand.args.is_empty() {
                            let list: Vec<String> = p.subcommand.args.iter().map(arg_text).collect();
                            out.line(&format!("  {:<width$}      args: {}", "", list.join(", ")))?;
                        }
                    }
                }
                out.line("")?;
            }
            let invalid_note = if invalid > 0 {
                format!("; {invalid} invalid (see `skillc check`)")
            } else {
                String::new()
            };
            out.line(&format!("{}{invalid_note}", totals.line()))?;
        }
    }
    out.flush()?;
    Ok(if totals.rejected_total() > 0 || invalid > 0 {
        Status::Failure
    } else {
        Status::Success
    })
}

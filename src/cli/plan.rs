//! `skillc plan`: the sub-commands of each skill and their canonical names or rejections.

use std::collections::BTreeMap;
use std::path::PathBuf;

use rayon::prelude::*;
use serde_json::json;

use super::check::{default_paths, load_skills};
use super::{Format, Printer, Status, project};
use crate::db::{SkillSource, TextInput};
use crate::diag::Severity;
use crate::extract::{Arg, Program};
use crate::skill::validate::Mode;
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
    /// Output format (`short` is the same as `human` here).
    #[arg(long, visible_alias = "message-format", value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Also list instruction-only skills (no sub-commands).
    #[arg(long)]
    pub all: bool,
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

/// Totals over all skills.
#[derive(Default)]
pub(crate) struct Totals {
    pub skills: usize,
    pub with_subcommands: usize,
    pub plans: usize,
    pub translated: usize,
    pub rejected: BTreeMap<&'static str, usize>,
}

impl Totals {
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
            "planned {} skills: {} with sub-commands, {} instruction-only; {} plans: {} translated, {} rejected{by}",
            self.skills,
            self.with_subcommands,
            self.skills - self.with_subcommands,
            self.plans,
            self.translated,
            self.rejected_total()
        )
    }
}

pub(crate) fn run(args: &PlanArgs, out: &mut Printer) -> anyhow::Result<Status> {
    let project = project::load(&std::env::current_dir()?, out)?;
    let paths = if args.paths.is_empty() && project.root.join(crate::config::FILE_NAME).is_file() {
        project.config.skills.iter().map(|p| project.root.join(p)).collect()
    } else {
        default_paths(&args.paths)
    };
    let loaded = load_skills(
        std::path::Path::new(""),
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
    let results: Vec<(SkillSource, Translation)> = loaded
        .skills
        .par_iter()
        .map_with(db.clone(), |db, s| {
            (*s, translate::translate_skill(db, *s, settings, vocab_input).clone())
        })
        .collect();
    let mut totals = Totals::default();
    for (_, t) in &results {
        totals.add(t);
    }
    match args.format {
        Format::Json => {
            let skills: Vec<serde_json::Value> = results
                .iter()
                .map(|(s, t)| {
                    let name = crate::skill::analyze_skill(db, *s, settings).model.name.as_ref().map(|n| n.value.clone());
                    json!({"path": s.display(db), "name": name, "provider": t.provider, "instruction_only": t.plans.is_empty(),
                           "plans": t.plans.iter().map(|p| plan_json(p, args.explain)).collect::<Vec<_>>()})
                })
                .collect();
            let report = json!({
                "schema": "skillc.plan/1",
                "summary": {"skills": totals.skills, "with_subcommands": totals.with_subcommands,
                            "instruction_only": totals.skills - totals.with_subcommands, "plans": totals.plans,
                            "translated": totals.translated, "rejected": totals.rejected_total(),
                            "rejected_by_reason": totals.rejected},
                "skills": skills,
            });
            out.line(&serde_json::to_string_pretty(&report)?)?;
        }
        Format::Human | Format::Short => {
            for (s, t) in &results {
                if t.plans.is_empty() && !args.all {
                    continue;
                }
                let provider = t.provider.as_deref().unwrap_or("-");
                if t.plans.is_empty() {
                    out.line(&format!("{}  (instruction-only)", s.display(db)))?;
                    continue;
                }
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
                    }
                }
                out.line("")?;
            }
            out.line(&totals.line())?;
        }
    }
    out.flush()?;
    Ok(if totals.rejected_total() > 0 {
        Status::Failure
    } else {
        Status::Success
    })
}

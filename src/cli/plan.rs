//! `skillc plan`: the sub-commands of each skill and their canonical names or rejections.

use std::collections::BTreeMap;
use std::path::PathBuf;

use rayon::prelude::*;

use super::check::{Loaded, load_skills};
use super::{Printer, ReportFormat, Status, project};
use crate::db::{SkillSource, TextInput};
use crate::diag::Severity;
use crate::extract::{Arg, Program};
use crate::messages::plan;
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
    /// Write a proposed name for every rejected sub-command that has none yet into the
    /// project's `translations.toml` (status "proposed"), for review (docs/authoring.md).
    #[arg(long)]
    pub propose: bool,
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

/// A skill's translation, and its first error when `check` would reject it.
struct Planned {
    skill: SkillSource,
    translation: Translation,
    error: Option<String>,
}

/// The `skillc.plan/1` report.
fn json_report(
    loaded: &Loaded,
    results: &[Planned],
    totals: &PlanSummary,
    invalid: usize,
    explain: bool,
) -> plan::Report {
    let (db, settings) = (&loaded.db, loaded.settings);
    let mut skills: Vec<plan::Skill> = loaded
        .problems
        .iter()
        .map(|p| plan::Skill {
            path: p.file.clone(),
            name: None,
            provider: None,
            object: None,
            instruction_only: false,
            error: Some(format!("{}: {}", p.code(), p.message)),
            plans: Vec::new(),
        })
        .collect();
    skills.extend(results.iter().map(|r| {
        let t = &r.translation;
        plan::Skill {
            path: r.skill.display(db).clone(),
            name: crate::skill::analyze_skill(db, r.skill, settings)
                .model
                .name
                .as_ref()
                .map(|n| n.value.clone()),
            provider: t.provider.clone(),
            object: t.object.as_ref().map(|o| plan::SkillObject {
                object: o.object.clone(),
                evidence: o.evidence.clone(),
            }),
            instruction_only: t.plans.is_empty(),
            error: r.error.clone(),
            plans: t.plans.iter().map(|p| plan_json(p, explain)).collect(),
        }
    }));
    plan::Report {
        schema: plan::SCHEMA,
        summary: plan::Summary {
            skills: totals.skills,
            invalid,
            with_subcommands: totals.with_subcommands,
            instruction_only: totals.skills - totals.with_subcommands,
            plans: totals.plans,
            translated: totals.translated,
            rejected: totals.rejected_total(),
            rejected_by_reason: totals.rejected.clone(),
        },
        skills,
    }
}

/// The human listing: invalid skills, then each skill's plans (with `--explain`, what each
/// word meant), then the summary line.
fn print_human(
    out: &mut Printer,
    args: &PlanArgs,
    loaded: &Loaded,
    results: &[Planned],
    totals: &PlanSummary,
    invalid: usize,
) -> anyhow::Result<()> {
    let db = &loaded.db;
    for p in &loaded.problems {
        out.line(&format!("{}  (invalid: {}: {})", p.file, p.code(), p.message))?;
    }
    for r in results {
        let (s, t, error) = (r.skill, &r.translation, &r.error);
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
        print_plans(out, t, args.explain)?;
        out.line("")?;
    }
    let invalid_note = if invalid > 0 {
        format!("; {invalid} invalid (see `skillc check`)")
    } else {
        String::new()
    };
    out.line(&format!("{}{invalid_note}", totals.line()))?;
    // Names the vocabulary could not make (no action, no object, no mapping): the review loop
    // is how a user gets them, and a new user does not know it exists.
    let unnamed: usize = [&crate::rules::TR001, &crate::rules::TR002, &crate::rules::TR005]
        .iter()
        .filter_map(|r| totals.rejected.get(r.code))
        .sum();
    if unnamed > 0 && !args.propose {
        out.note(&format!(
            "hint: `skillc plan --propose` writes a proposed name for {} into {} to review and accept (README, \"Writing skills\"); `skillc vocabulary` lists the words names are made of",
            if unnamed == 1 { "this sub-command".to_owned() } else { format!("these {unnamed} sub-commands") },
            project::TRANSLATIONS
        ));
    }
    Ok(())
}

/// One skill's plans, aligned: `words → name` or the rejection; with `explain`, each word's
/// meaning and the arguments.
fn print_plans(out: &mut Printer, t: &Translation, explain: bool) -> anyhow::Result<()> {
    let width = t.plans.iter().map(|p| p.subcommand.display().len()).max().unwrap_or(0);
    for p in &t.plans {
        let sc = p.subcommand.display();
        let result = match &p.outcome {
            Outcome::Translated(n) => n.full(),
            Outcome::Rejected { rule, reason, .. } => format!("rejected [{}]: {reason}", rule.code),
        };
        out.line(&format!("  {sc:<width$}  → {result}"))?;
        if explain {
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
            if let Some(pr) = &p.proposal {
                out.line(&format!("  {:<width$}      proposal: {}", "", pr.name.full()))?;
            }
        }
    }
    Ok(())
}

/// A program, as the plan report shows it.
fn program_json(p: &Program) -> plan::Program {
    match p {
        Program::Script { path, interpreter } => plan::Program::Script {
            path: path.clone(),
            interpreter: interpreter.clone(),
        },
        Program::Binary { name } => plan::Program::Binary { name: name.clone() },
        Program::Tool { module, function } => plan::Program::Tool {
            module: module.clone(),
            function: function.clone(),
        },
    }
}

/// An argument, as the plan report shows it.
fn arg_json(a: &Arg) -> plan::Arg {
    plan::Arg {
        name: a.name.clone(),
        ty: a.ty.as_str(),
        required: a.required,
        flag: a.flag.clone(),
        position: a.position,
        description: a.description.clone(),
        default: a.default.clone(),
    }
}

fn plan_json(p: &Plan, explain: bool) -> plan::Plan {
    let sc = &p.subcommand;
    let (status, name, outcome) = match &p.outcome {
        Outcome::Translated(n) => (
            "translated",
            Some(n.full()),
            plan::Outcome::Translated {
                action: n.action.clone(),
                object: n.object.clone(),
                qualifiers: n.qualifiers.clone(),
            },
        ),
        Outcome::Rejected { rule, reason, .. } => (
            "rejected",
            None,
            plan::Outcome::Rejected {
                code: rule.code,
                reason: reason.clone(),
            },
        ),
    };
    plan::Plan {
        subcommand: sc.display(),
        words: sc.words.clone(),
        aliases: sc.aliases.clone(),
        program: program_json(&sc.program),
        source_section: sc.source_section.clone(),
        line: sc.line,
        invocations: sc.invocations,
        args: sc.args.iter().map(arg_json).collect(),
        status,
        name,
        outcome,
        proposal: p.proposal.as_ref().map(|pr| plan::Proposal {
            name: pr.name.full(),
            evidence: pr.evidence.clone(),
        }),
        explain: explain.then(|| {
            p.steps
                .iter()
                .map(|s| plan::Step {
                    word: s.word.clone(),
                    meaning: s.meaning.clone(),
                })
                .collect()
        }),
    }
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
    let (vpath, vtext) = project::vocabulary_source(&project, args.vocabulary.as_deref(), out)?;
    let db = &loaded.db;
    let vocab_input = TextInput::new(db, vpath, vtext.clone());
    let lv = vocab::vocabulary(db, vocab_input);
    project::print_file_diagnostics(out, &lv.diagnostics, &vtext);
    if lv.diagnostics.iter().any(|d| d.severity == Severity::Error) {
        anyhow::bail!("the vocabulary has errors (see above)");
    }
    let (tpath, ttext) = project::translations_source(&project, out)?;
    let tr_input = TextInput::new(db, tpath, ttext.clone());
    let review = translate::review::review(db, tr_input);
    project::print_file_diagnostics(out, &review.diagnostics, &ttext);
    if review.diagnostics.iter().any(|d| d.severity == Severity::Error) {
        // As for the vocabulary: a reviewer's decisions that cannot be read are not guessed
        // around, and `--propose` never writes over a file it could not read (data loss).
        anyhow::bail!(
            "{} has errors (see above); fix them, or remove the entries in question{}",
            review.path,
            if args.propose {
                " (--propose writes nothing over a file it cannot read)"
            } else {
                ""
            }
        );
    }
    let settings = loaded.settings;
    // Per skill: its translation, and its first error when `check` would reject it.
    let results: Vec<Planned> = loaded
        .skills
        .par_iter()
        .map_with(db.clone(), |db, s| {
            let error = crate::skill::check_skill(db, *s, settings)
                .diagnostics
                .iter()
                .find(|d| d.severity == Severity::Error)
                .map(|d| format!("{}: {}", d.code(), d.message));
            Planned {
                skill: *s,
                translation: translate::translate_skill(db, *s, settings, vocab_input, tr_input).clone(),
                error,
            }
        })
        .collect();
    let mut totals = PlanSummary::default();
    for r in &results {
        totals.add(&r.translation);
    }
    let invalid = results.iter().filter(|r| r.error.is_some()).count() + loaded.problems.len();
    if args.propose {
        let names: Vec<Option<String>> = results
            .iter()
            .map(|r| crate::skill::skill_name(db, r.skill, settings).clone())
            .collect();
        let per_skill: Vec<(Option<&str>, &Translation)> = names
            .iter()
            .zip(&results)
            .map(|(n, r)| (n.as_deref(), &r.translation))
            .collect();
        let (added, total) = write_proposals(&project, review, &ttext, &per_skill)?;
        out.note(&format!(
            "proposed {} in {} ({} in all); review each entry, then build",
            super::output::count(added, "name"),
            project::TRANSLATIONS,
            if total == 1 {
                "1 entry".to_owned()
            } else {
                format!("{total} entries")
            }
        ));
    }
    match args.format {
        ReportFormat::Json => {
            let report = json_report(&loaded, &results, &totals, invalid, args.explain);
            out.line(&serde_json::to_string_pretty(&report)?)?;
        }
        ReportFormat::Human => print_human(out, args, &loaded, &results, &totals, invalid)?,
    }
    out.flush()?;
    Ok(if totals.rejected_total() > 0 || invalid > 0 {
        Status::Failure
    } else {
        Status::Success
    })
}

/// Adds a `proposed` entry for every rejected plan that has a proposal and no entry yet to
/// `translations.toml` (whose current text is `text`), keeping everything already in the file
/// as it is (comments, order, a reviewer's edits), and writes it atomically. Returns (entries
/// added, entries in all).
fn write_proposals(
    project: &project::Project,
    review: &translate::review::Review,
    text: &str,
    skills: &[(Option<&str>, &Translation)],
) -> anyhow::Result<(usize, usize)> {
    use translate::review::{Entry, Status as ReviewStatus};
    let mut new: Vec<Entry> = Vec::new();
    for (name, t) in skills {
        let Some(skill) = name else { continue };
        for p in &t.plans {
            let Some(pr) = &p.proposal else { continue };
            let sub = p.subcommand.display();
            let known = |e: &Entry| e.skill == *skill && e.subcommand == sub;
            if review.entries.iter().any(known) || new.iter().any(known) {
                continue;
            }
            new.push(Entry {
                skill: (*skill).to_owned(),
                subcommand: sub,
                status: ReviewStatus::Proposed,
                name: pr.name.full(),
                evidence: pr.evidence.clone(),
                note: None,
                line: 0,
            });
        }
    }
    let total = review.entries.len() + new.len();
    if new.is_empty() {
        return Ok((0, total));
    }
    let path = project::translations_path(project);
    let text = translate::review::add_entries(text, &new)
        .map_err(|e| anyhow::anyhow!("{} cannot be edited ({e}); it is left as it is", path.display()))?;
    crate::emit::write::write_atomic(&path, text.as_bytes(), None)
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
    Ok((new.len(), total))
}

//! The build report, `out/report.json` (docs/json.md, schema `skillc.report/1`): one entry
//! per skill, rendered by a query (memoized, so an edit re-renders one entry), joined into
//! the document; and the counts and audit details the session takes from the same verdicts.

use std::collections::BTreeMap;

use serde_json::json;

use super::{Decision, SkillUnit, decision, skill_unit};
use crate::admit::Verdict;
use crate::db::{BuildInputs, SkillSource};
use crate::diag::Diagnostic;
use crate::messages::report::{self, Totals};
use crate::model::{Level, LevelStatus, SkillStatus};
use crate::translate::Outcome;
use crate::util::sorted_json;

impl Totals {
    /// Counts one skill: its plans admitted, or rejected (by translation, by admission, or
    /// with their skill).
    pub fn add(&mut self, unit: &SkillUnit, decision: &Decision) {
        self.skills += 1;
        self.plans += unit.translation.plans.len();
        if decision.rejected.is_some() {
            self.skills_rejected += 1;
            self.rejected += unit.translation.plans.len();
            return;
        }
        for v in &decision.plans {
            if matches!(v, Verdict::Admitted(_)) {
                self.admitted += 1;
            } else {
                self.rejected += 1;
            }
        }
    }
}

/// Plan `j` of a skill in the report.
fn plan_report(unit: &SkillUnit, decision: &Decision, j: usize) -> report::Plan {
    let p = &unit.translation.plans[j];
    let (status, level, code, reason) = match (&p.outcome, decision.plans.get(j), &decision.rejected) {
        (Outcome::Rejected { rule, reason, .. }, _, _) => {
            ("rejected", Some("translate"), Some(rule.code), Some(reason.clone()))
        }
        (_, _, Some((rule, reason))) => ("rejected", Some("skill"), Some(rule.code), Some(reason.clone())),
        (_, Some(Verdict::Rejected { level, rule, reason }), _) => {
            ("rejected", Some(level.as_str()), Some(rule.code), Some(reason.clone()))
        }
        _ => ("admitted", None, None, None),
    };
    report::Plan {
        subcommand: p.subcommand.display(),
        name: p.name().map(|n| n.full()),
        status,
        level,
        code,
        reason,
    }
}

/// The audit event and detail of plan `j`.
pub fn plan_event(unit: &SkillUnit, decision: &Decision, j: usize) -> (&'static str, serde_json::Value) {
    let p = &unit.translation.plans[j];
    match (&p.outcome, decision.plans.get(j), &decision.rejected) {
        (Outcome::Rejected { rule, reason, .. }, _, _) => (
            "executor.rejected",
            json!({"stage": "translate", "code": rule.code, "reason": reason}),
        ),
        (_, Some(Verdict::Rejected { level, rule, reason }), _) => (
            "executor.rejected",
            json!({"stage": level.as_str(), "code": rule.code, "reason": reason}),
        ),
        (_, _, Some((rule, reason))) => (
            "executor.rejected",
            json!({"stage": "skill", "code": rule.code, "reason": reason}),
        ),
        (Outcome::Translated(n), _, _) => ("executor.admitted", json!({"name": n.full()})),
    }
}

/// The `status` of a skill in the report and the catalog.
pub fn skill_status(unit: &SkillUnit, decision: &Decision) -> SkillStatus {
    if decision.rejected.is_some() {
        SkillStatus::Rejected
    } else if unit.translation.plans.is_empty() {
        SkillStatus::InstructionOnly
    } else {
        SkillStatus::Ok
    }
}

/// Pretty JSON with every object's keys sorted.
fn sorted_pretty<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .map(|v| serde_json::to_string_pretty(&sorted_json(v)).unwrap_or_default())
        .unwrap_or_default()
}

/// One skill's entry of `report.json`, keys sorted, rendered as it appears in the
/// pretty-printed report (inside `skills`, indented by four spaces, no trailing newline).
#[salsa::tracked(returns(ref))]
pub fn report_entry(db: &dyn salsa::Database, inputs: BuildInputs, skill: SkillSource) -> String {
    let unit = skill_unit(db, inputs, skill);
    let decision = decision(db, inputs, skill);
    let mut diagnostics: Vec<&Diagnostic> = unit.check.diagnostics.iter().chain(&unit.extra).collect();
    diagnostics.sort_by(|a, b| (&a.file, a.span.start.offset).cmp(&(&b.file, b.span.start.offset)));
    let entry = report::Skill {
        name: unit.info.as_ref().map(|i| i.name.as_str()),
        path: &unit.display,
        status: skill_status(unit, decision),
        reason: decision.rejected.as_ref().map(|(_, reason)| reason.as_str()),
        diagnostics,
        findings: &unit.findings,
        plans: (0..unit.translation.plans.len())
            .map(|j| plan_report(unit, decision, j))
            .collect(),
    };
    sorted_pretty(&entry).replace('\n', "\n    ")
}

/// Renders `report.json` from the skills' entries ([`report_entry`], in catalog order).
/// Byte-identical to pretty-printing the whole document with sorted keys.
pub fn render_report(
    entries: &[&str],
    totals: &Totals,
    vocab_path: &str,
    vocab_sha: &str,
    skip: &[Level],
    admission_levels: &BTreeMap<Level, LevelStatus>,
    reproducible: bool,
) -> String {
    // The hole is a JSON string no input can produce (it is the only value holding NUL).
    const HOLE: &str = "\u{0}skills\u{0}";
    let report = report::Report {
        schema: report::SCHEMA,
        skillc: env!("CARGO_PKG_VERSION"),
        reproducible,
        inputs: report::Inputs {
            skills: totals.skills,
            vocabulary: vocab_path,
            vocabulary_sha256: vocab_sha,
        },
        summary: *totals,
        admission: report::Admission {
            levels: admission_levels.iter().map(|(l, s)| (l.as_str(), s.as_str())).collect(),
            skipped: skip.iter().map(|l| l.as_str()).collect(),
        },
        skills: HOLE,
    };
    let text = sorted_pretty(&report);
    let skills = if entries.is_empty() {
        "[]".to_owned()
    } else {
        let mut s = String::with_capacity(entries.iter().map(|e| e.len() + 6).sum::<usize>() + 8);
        s.push('[');
        for (i, e) in entries.iter().enumerate() {
            s.push_str(if i == 0 { "\n    " } else { ",\n    " });
            s.push_str(e);
        }
        s.push_str("\n  ]");
        s
    };
    let hole = serde_json::to_string(HOLE).unwrap_or_default();
    format!("{}\n", text.replacen(&hole, &skills, 1))
}

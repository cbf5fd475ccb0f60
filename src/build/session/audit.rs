//! What a build reports: what changed in `out/` (for the summary and the progress events) and
//! the audit log (`.skillc/audit.jsonl`): one JSON line per decision, written for the skills
//! whose report entry changed since the session's last build, between a `build.started` and
//! a `build.finished` line.

use std::collections::HashMap;
use std::hash::{Hash as _, Hasher as _};

use serde_json::json;

use std::collections::BTreeMap;

use super::stamp::{Job, Stamped};
use super::tree::{self, Writes};
use super::{Event, Outcome, Row, Sink};
use crate::build::report::plan_event;
use crate::build::store::State;
use crate::messages::report::Totals;
use crate::util::sorted_json_line;

/// The lines of one build, and the digest of every skill's report entry (what the next build
/// compares with).
pub(super) struct Audit {
    /// The JSON lines, in order.
    pub lines: Vec<String>,
    /// Skill folder → digest of its report entry.
    pub reported: HashMap<String, u64>,
}

/// The audit lines of a build: `roots` searched, the decisions of the skills whose entry
/// differs from `reported` (the previous build's digests), and the counts of `outcome`.
pub(super) fn audit(
    rows: &[Row<'_>],
    reported: &HashMap<String, u64>,
    roots: &[std::path::PathBuf],
    catalog_version: i64,
    outcome: &Outcome,
) -> Audit {
    let wall = jiff::Timestamp::now();
    let build_id = format!("{:016x}", {
        let mut b = [0u8; 8];
        let _ = getrandom::fill(&mut b);
        u64::from_le_bytes(b)
    });
    let line = |event: &str, detail: serde_json::Value| {
        let v = json!({"time": wall.to_string(), "build": build_id, "event": event, "detail": detail});
        sorted_json_line(&v)
    };
    let roots: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
    let mut lines = vec![line("build.started", json!({ "roots": roots }))];
    let mut seen = HashMap::with_capacity(rows.len());
    for r in rows {
        let digest = {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            r.report.hash(&mut h);
            h.finish()
        };
        seen.insert(r.unit.display.clone(), digest);
        if reported.get(&r.unit.display) == Some(&digest) {
            continue;
        }
        if let Some((rule, reason)) = &r.decision.rejected {
            lines.push(line(
                "skill.rejected",
                json!({"skill": r.unit.display, "code": rule.code, "reason": reason}),
            ));
        }
        for (j, p) in r.unit.translation.plans.iter().enumerate() {
            let (event, detail) = plan_event(r.unit, r.decision, j);
            lines.push(line(
                event,
                json!({"skill": r.unit.display, "subcommand": p.subcommand.display(), "detail": detail}),
            ));
        }
    }
    let changed = outcome.added.len() + outcome.updated.len() + outcome.removed.len();
    lines.push(line(
        "build.finished",
        json!({"catalog_version": catalog_version, "changed": changed, "written": outcome.files_written, "removed": outcome.files_removed, "summary": outcome.totals}),
    ));
    Audit { lines, reported: seen }
}

/// What changed in `out/`: executors added, updated (manifest changed, or a file of its
/// folder rewritten) and removed, with the counts of the writes.
pub(super) fn changes(
    previous: &State,
    jobs: &[Job<'_>],
    stamped: &[Stamped],
    writes: &Writes<'_, '_>,
    totals: Totals,
) -> Outcome {
    let mut outcome = Outcome {
        totals,
        executors: jobs.len(),
        files_written: writes.write.len(),
        files_removed: writes.remove.len(),
        manifests_signed: stamped.iter().filter(|s| s.signed()).count(),
        foreign: writes.foreign.clone(),
        ..Outcome::default()
    };
    let touched = tree::touched_executors(writes);
    let now: BTreeMap<&str, &Stamped> = jobs
        .iter()
        .zip(stamped)
        .map(|(job, st)| (job.generated.executor.name.as_str(), st))
        .collect();
    outcome.executors = now.len();
    for (name, st) in &now {
        match previous.executors.get(*name) {
            None => outcome.added.push((*name).to_owned()),
            Some(p) if p.manifest_sha256 != st.state.manifest_sha256 || touched.contains(name) => {
                outcome.updated.push((*name).to_owned());
            }
            Some(_) => {}
        }
    }
    outcome.removed = previous
        .executors
        .keys()
        .filter(|name| !now.contains_key(name.as_str()))
        .cloned()
        .collect();
    outcome
}

/// The progress events of what changed.
pub(super) fn send_events(outcome: &Outcome, sink: Sink<'_>) {
    for (names, change) in [
        (&outcome.added, "added"),
        (&outcome.updated, "updated"),
        (&outcome.removed, "removed"),
    ] {
        for name in names {
            sink(Event::Executor { name, change });
        }
    }
    for (path, reason) in &outcome.rejected {
        sink(Event::SkillRejected { path, reason });
    }
}

//! Acceptance 4: a generated library of 200 agent-written (and some hand-written, imported
//! and curator-made) skills with a generated event history — loads over 200 days, tool
//! failures after loads, families of near-duplicate names — curated once. The whole report,
//! the events the run appended, the state and the files on disk are one insta snapshot
//! (`snapshots/curate_scenario.snap`).

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::support::{P, ago};
use crate::common::insta_settings;

/// A small deterministic generator (a linear congruential one; the numbers only need to be
/// the same on every machine).
struct Gen(u64);

impl Gen {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

const VERBS: &[&str] = &[
    "summarise",
    "check",
    "build",
    "write",
    "fix",
    "plan",
    "export",
    "track",
    "clean",
    "audit",
    "merge",
    "label",
    "rotate",
    "scan",
    "sync",
    "trim",
    "draft",
    "grade",
    "index",
    "price",
    "queue",
    "rank",
    "seed",
    "tag",
    "watch",
];
const TOPICS: &[&str] = &[
    "sales",
    "invoices",
    "deploys",
    "python",
    "docker",
    "backups",
    "email",
    "calendar",
    "charts",
    "budgets",
    "travel",
    "tickets",
    "migrations",
    "secrets",
    "logs",
    "metrics",
    "fonts",
    "recipes",
    "contracts",
    "maps",
    "alerts",
    "badges",
    "cameras",
    "drivers",
    "exams",
    "fleets",
    "grants",
    "hotels",
    "issues",
    "jobs",
    "kiosks",
    "leases",
    "menus",
    "notes",
    "orders",
    "patents",
    "quotas",
    "rentals",
    "shifts",
    "tenders",
    "uploads",
    "vendors",
    "wikis",
    "xrays",
    "yields",
    "zones",
    "audits",
    "blogs",
    "clinics",
    "donors",
    "events",
    "forms",
    "games",
    "hashes",
    "images",
    "journals",
    "keys",
    "lessons",
    "meters",
    "nodes",
];
const TOOLS: &[&str] = &[
    "curl",
    "jq",
    "git",
    "make",
    "psql",
    "awk",
    "sed",
    "rsync",
    "ffmpeg",
    "pandoc",
    "terraform",
    "kubectl",
    "npm",
    "cargo",
    "pytest",
    "ruff",
    "gh",
    "aws",
    "gcloud",
    "sqlite3",
];
const FAMILIES: &[&[&str]] = &[
    &["code-review-python", "python-code-review", "review-python-code"],
    &[
        "deploy-docker-stack",
        "docker-stack-deploy",
        "stack-deploy-docker",
        "deploy-stack-docker-fast",
    ],
    &["backup-postgres-nightly", "postgres-backup-nightly"],
    &[
        "invoice-pdf-export",
        "export-invoice-pdf",
        "pdf-invoice-export",
        "invoice-export-pdf",
        "export-pdf-invoice",
        "pdf-export-invoice",
        "invoice-pdf-export-bulk",
    ],
];

fn library(p: &P) -> Vec<String> {
    let mut g = Gen(14);
    let mut names: Vec<String> = FAMILIES.iter().flat_map(|f| f.iter().map(|s| s.to_string())).collect();
    while names.len() < 200 {
        let n = format!(
            "{}-{}-{}",
            VERBS[g.next(VERBS.len() as u64) as usize],
            TOPICS[g.next(TOPICS.len() as u64) as usize],
            TOPICS[g.next(TOPICS.len() as u64) as usize]
        );
        if !names.contains(&n) {
            names.push(n);
        }
    }
    let mut lines = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let family = FAMILIES.iter().any(|f| f.contains(&name.as_str()));
        let words: Vec<&str> = name.split('-').collect();
        let desc = if family {
            format!("Handle {} work end to end for the team.", words.join(" "))
        } else {
            let mut pick = |list: &[&'static str]| list[g.next(list.len() as u64) as usize];
            format!(
                "{} {} of {} with {} and {}, then {} the {}.",
                words[0],
                words[1],
                words[2],
                pick(TOOLS),
                pick(TOOLS),
                pick(VERBS),
                pick(TOPICS)
            )
        };
        p.skill(name, &desc);
        let origin = match i % 20 {
            _ if family => Some("auto_generated"),
            0 | 1 => None,
            2 => Some("imported"),
            3 => Some("curator_generated"),
            _ => Some("auto_generated"),
        };
        let created = 30 + g.next(250) as i64;
        if let Some(o) = origin {
            lines.push(json!({"event": "skill.created", "time": ago(created, 0), "skill": name, "source": o}));
        }
        // Loads: none for a quarter, a few over 200 days for the rest; families recently.
        let loads = if family {
            1 + g.next(4)
        } else if g.next(5) == 0 {
            0
        } else {
            1 + g.next(6)
        };
        for k in 0..loads {
            let days = if family {
                g.next(60) as i64
            } else {
                g.next(created as u64) as i64
            };
            lines.push(json!({"event": "skill.loaded", "time": ago(days, k as i64 * 7), "skill": name, "session": format!("s{i}-{k}")}));
        }
        // A tenth keep failing: loads in the last days, each followed by a tool failure.
        if i % 10 == 7 {
            for k in 0..4 {
                let session = format!("f{i}-{k}");
                lines.push(
                    json!({"event": "skill.loaded", "time": ago(1, k * 3600), "skill": name, "session": session}),
                );
                if k != 3 {
                    lines.push(json!({"event": "tool.failed", "time": ago(1, k * 3600 - 120), "session": session, "tool": "bash"}));
                }
            }
        }
    }
    // Another runtime's lines and a torn line are skipped, not fatal.
    lines.push(json!({"event": "session.ended", "time": ago(1, 0), "session": "x"}));
    lines.push(json!({"event": "skill.loaded", "time": "yesterday", "skill": "x", "session": "y"}));
    p.events_raw(&lines);
    names
}

fn short_sha(bytes: &[u8]) -> String {
    use sha2::Digest;
    let h = sha2::Sha256::digest(bytes);
    h.iter().take(6).map(|b| format!("{b:02x}")).collect()
}

#[test]
fn a_library_of_200_skills_is_curated_as_the_snapshot_says() {
    // Enough for the archives and the clusters; the run stops among the edits.
    let p = P::new("per_run_max_usd = 1.25\nper_day_max_usd = 2");
    let names = library(&p);
    assert_eq!(names.len(), 200);
    for pinned in ["code-review-python", &names[60], &names[61]] {
        assert_eq!(p.curate(&["pin", pinned]).code, Some(0));
    }
    let mut verdicts = json!({
        "archive:*": {"action": "archive", "rationale": "not loaded for months"},
        "consolidate:*": {"$survivor": "first", "body": "\n# One procedure\n\nEvery variant, merged.\n", "rationale": "same steps"},
        "edit:*": {"$replace": ["--check", "--check --retry 3"], "rationale": "the tool needs retries"},
    });
    // The model keeps a few, turns one cluster down and answers nonsense for another.
    for name in names.iter().skip(5).step_by(9) {
        verdicts[format!("archive:{name}")] = json!({"action": "skip", "reason": "still referenced"});
    }
    verdicts["consolidate:python-code-review,review-python-code"] =
        json!({"action": "skip", "reason": "different audiences"});
    verdicts["consolidate:backup-postgres-nightly,postgres-backup-nightly"] = json!({"action": "consolidate", "survivor": "backup-mysql", "archive": ["postgres-backup-nightly"], "body": "x\n"});
    p.verdicts(verdicts);
    let logged = p.events().len();
    let dry = p.curate(&["run", "--dry-run", "--format", "json"]);
    let run = p.curate(&["run", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let report: Value = run.json();
    let dry: Value = dry.json();
    assert_eq!(
        dry["candidates"], report["candidates"],
        "the dry run plans what the run considers"
    );
    assert_eq!(report["calls"].as_u64().unwrap() as usize, p.calls().len());

    let mut out = String::new();
    writeln!(out, "# report").unwrap();
    writeln!(out, "{}", serde_json::to_string_pretty(&report).unwrap()).unwrap();
    writeln!(out, "# events appended by the run").unwrap();
    for e in p.events().iter().skip(logged) {
        writeln!(out, "{e}").unwrap();
    }
    writeln!(out, "# state.json").unwrap();
    writeln!(out, "{}", serde_json::to_string_pretty(&p.state().unwrap()).unwrap()).unwrap();
    writeln!(out, "# files").unwrap();
    for (path, bytes) in p.tree() {
        if path.starts_with("skills/") || path.starts_with("skills-archive/") {
            writeln!(out, "{path} {}", short_sha(&bytes)).unwrap();
        }
    }
    insta_settings().bind(|| insta::assert_snapshot!("curate_scenario", out));
}

//! Selection: which skills a curator run considers, and in which order (RUNTIME.md §3,
//! "Selection"; seed 002 §6). **Pure**: events + skills + state marks + policy + now ⇒ a
//! [`Plan`]; the same inputs give the same plan byte for byte (every collection is sorted,
//! every number an integer or a rounded ratio).
//!
//! Rules, in order:
//! - **Who may be touched**: only skills whose `skill.created` says `auto_generated` or
//!   `curator_generated`; any `manual` or `imported` event makes a skill read-only for ever;
//!   no event means `manual`. Pinned skills, skills whose folder cannot be moved (`blocked`),
//!   and every skill when the state is corrupt (`fail_closed`) are never candidates.
//! - **Archive**: no `skill.loaded` for `archive_after_days`, anchored on the latest
//!   `skill.created` (or restore) when the skill was never loaded since (so a new or just
//!   restored skill is not a candidate).
//! - **Consolidate**: among the remaining skills loaded at least once in the archive window,
//!   pairs in the same skills root whose name word bags overlap ≥ 0.6 or description word
//!   bags ≥ 0.7 (overlap = shared words / words of the smaller bag, after stop-words);
//!   single-link clusters of 2 or more; a cluster above 5 keeps its 5 most-loaded members
//!   (ties by name) and the rest is clustered again among itself.
//! - **Edit**: among the rest, ≥ 3 loads in the last `interval` and at least half of those
//!   loads followed, in the same session within 30 minutes, by a `tool.failed`.
//! - **Order**: archives, then clusters, then edits; stalest first within each (archives by
//!   last activity, clusters by their most recent load, edits by last load), ties by name.
//!
//! Events after `now` are ignored: a plan is made as of `now`.

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use serde::Serialize;

use crate::model::Origin;

/// What selection reads from the event log (the curator's IO layer turns `skill.created`,
/// `skill.loaded`, `tool.failed` and `skill.curated {action: restore}` into these).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Observed {
    /// `skill.created`.
    Created {
        /// The skill.
        skill: String,
        /// Who wrote it.
        origin: Origin,
    },
    /// `skill.loaded`.
    Loaded {
        /// The skill.
        skill: String,
        /// The session.
        session: String,
    },
    /// `tool.failed`.
    ToolFailed {
        /// The session.
        session: String,
        /// The tool.
        tool: String,
    },
    /// A restore: the skill starts a new window.
    Restored {
        /// The skill.
        skill: String,
    },
}

/// One observation and its time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observation {
    /// When.
    pub time: Timestamp,
    /// What.
    pub what: Observed,
}

/// RFC 3339 UTC, whole seconds.
fn rfc3339(t: Timestamp) -> String {
    Timestamp::from_second(t.as_second()).unwrap_or(t).to_string()
}

/// Seconds after a load in which a `tool.failed` of the same session counts against it.
pub const FAILURE_WINDOW_SECS: i64 = 30 * 60;
/// Loads in the interval an edit candidate needs.
pub const EDIT_MIN_LOADS: usize = 3;
/// Largest cluster sent to the model.
pub const CLUSTER_MAX: usize = 5;
/// Name overlap that pairs two skills: 6/10.
pub const NAME_OVERLAP: (usize, usize) = (6, 10);
/// Description overlap that pairs two skills: 7/10.
pub const DESCRIPTION_OVERLAP: (usize, usize) = (7, 10);

/// Words dropped from name and description word bags.
pub const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "before", "by", "can", "do",
    "does", "for", "from", "how", "i", "if", "in", "into", "is", "it", "its", "of", "on", "or", "skill", "skills",
    "so", "such", "than", "that", "the", "their", "then", "these", "this", "those", "to", "use", "used", "uses",
    "using", "via", "what", "when", "which", "while", "who", "will", "with", "you", "your",
];

/// The thresholds of a plan, from `[curator]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// `archive_after_days` in seconds.
    pub archive_after_secs: i64,
    /// `stale_after_days` in seconds.
    pub stale_after_secs: i64,
    /// `interval` in seconds (the edit window).
    pub interval_secs: i64,
}

/// A skill as found in a skills root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillView {
    /// Its name (frontmatter `name`, else the folder's name).
    pub name: String,
    /// The skills root it is in, as shown.
    pub root: String,
    /// Its folder, as shown.
    pub path: String,
    /// Its frontmatter `description` (empty when unreadable).
    pub description: String,
    /// Why the curator cannot act on it (nested skills inside, a name used twice, …).
    pub blocked: Option<String>,
}

/// What the curator state says, as selection needs it.
#[derive(Clone, Copy, Debug)]
pub struct Marks<'a> {
    /// Pinned skills.
    pub pinned: &'a BTreeSet<String>,
    /// Skills the state records as `curator_generated` (consolidation survivors).
    pub curator_generated: &'a BTreeSet<String>,
    /// The state was corrupt: every skill is treated as pinned.
    pub fail_closed: bool,
}

/// One skill in a plan: what the curator knows about it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SkillStatus {
    /// Its name.
    pub name: String,
    /// Its skills root.
    pub root: String,
    /// Its folder.
    pub path: String,
    /// Who wrote it.
    pub origin: Origin,
    /// Whether its origin lets the curator change it.
    pub touchable: bool,
    /// Whether it is pinned (or treated so: `fail_closed`).
    pub pinned: bool,
    /// Why it cannot be acted on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked: Option<String>,
    /// The latest `skill.created`.
    pub created_at: Option<String>,
    /// The latest `skill.loaded`.
    pub last_loaded_at: Option<String>,
    /// Whole days since the last load, or since creation when never loaded after it.
    pub inactive_days: Option<i64>,
    /// Loads within `archive_after_days`.
    pub loads_in_window: usize,
    /// Loads within `interval`.
    pub loads_in_interval: usize,
    /// Touchable, not pinned, and inactive for `stale_after_days` (shown, never acted on).
    pub stale: bool,
}

/// A tool and how many failures after a load it had.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ToolCount {
    /// The tool's name.
    pub tool: String,
    /// Failures counted.
    pub count: usize,
}

/// One thing a run will ask the model about.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Candidate {
    /// Archive a stale skill.
    Archive {
        /// The skill.
        skill: String,
        /// Its skills root.
        root: String,
        /// Its last load, or its creation when never loaded.
        last_activity_at: String,
        /// Whole days since then.
        inactive_days: i64,
        /// Never loaded since its creation.
        never_loaded: bool,
    },
    /// Merge near-duplicates into one survivor.
    Consolidate {
        /// Their skills root.
        root: String,
        /// The members, by name.
        skills: Vec<String>,
        /// The most recent load of any member.
        last_loaded_at: String,
    },
    /// Patch a body whose loads keep failing.
    Edit {
        /// The skill.
        skill: String,
        /// Its skills root.
        root: String,
        /// Loads in the interval.
        loads: usize,
        /// Of those, loads followed by a `tool.failed` within 30 minutes.
        failed_loads: usize,
        /// `failed_loads / loads`, rounded to three decimals.
        failure_rate: f64,
        /// The failed tools, by count then name.
        failed_tools: Vec<ToolCount>,
        /// Its last load.
        last_loaded_at: String,
    },
}

impl Candidate {
    /// The skills it is about.
    pub fn skills(&self) -> Vec<&str> {
        match self {
            Candidate::Archive { skill, .. } | Candidate::Edit { skill, .. } => vec![skill.as_str()],
            Candidate::Consolidate { skills, .. } => skills.iter().map(String::as_str).collect(),
        }
    }

    /// `archive`, `consolidate` or `edit`.
    pub fn action(&self) -> &'static str {
        match self {
            Candidate::Archive { .. } => "archive",
            Candidate::Consolidate { .. } => "consolidate",
            Candidate::Edit { .. } => "edit",
        }
    }
}

/// The plan of a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Plan {
    /// The time the plan was made for.
    pub now: String,
    /// The state was corrupt and every skill is treated as pinned.
    pub fail_closed: bool,
    /// The candidates, in the order a run considers them.
    pub candidates: Vec<Candidate>,
    /// Every skill found, by name then folder.
    pub skills: Vec<SkillStatus>,
}

/// The word bag of a name or description: lowercased alphanumeric words, minus stop-words.
pub fn words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .collect()
}

/// Whether `|a ∩ b| / min(|a|, |b|) ≥ num / den` (exact integer arithmetic; empty bags never
/// overlap).
pub fn overlaps(a: &BTreeSet<String>, b: &BTreeSet<String>, (num, den): (usize, usize)) -> bool {
    let smaller = a.len().min(b.len());
    smaller > 0 && a.intersection(b).count() * den >= num * smaller
}

#[derive(Default)]
struct Activity {
    created: Vec<(Timestamp, Origin)>,
    /// Restores (`skill.curated {action: restore}`): a restored skill starts a new window.
    restored: Vec<Timestamp>,
    loads: Vec<(Timestamp, String)>,
}

fn origin_of(created: &[(Timestamp, Origin)], curator_generated: bool) -> Origin {
    let any = |o: Origin| created.iter().any(|(_, c)| *c == o);
    if any(Origin::Imported) {
        Origin::Imported
    } else if any(Origin::Manual) {
        Origin::Manual
    } else if any(Origin::CuratorGenerated) || (curator_generated && any(Origin::AutoGenerated)) {
        Origin::CuratorGenerated
    } else if any(Origin::AutoGenerated) {
        Origin::AutoGenerated
    } else {
        Origin::Manual
    }
}

/// Everything the plan knows about one skill.
struct Facts {
    status: SkillStatus,
    eligible: bool,
    anchor: Option<Timestamp>,
    last_activity: Option<Timestamp>,
    last_loaded: Option<Timestamp>,
    interval_loads: Vec<(Timestamp, String)>,
}

fn secs(now: Timestamp, then: Timestamp) -> i64 {
    (now.as_second() - then.as_second()).max(0)
}

fn facts(view: &SkillView, activity: Option<&Activity>, marks: &Marks<'_>, policy: &Policy, now: Timestamp) -> Facts {
    let empty = Activity::default();
    let a = activity.unwrap_or(&empty);
    let origin = origin_of(&a.created, marks.curator_generated.contains(&view.name));
    let created = a.created.iter().map(|(t, _)| *t).max();
    let anchor = created.into_iter().chain(a.restored.iter().copied()).max();
    let last_loaded = a.loads.iter().map(|(t, _)| *t).max();
    let last_activity = anchor.into_iter().chain(last_loaded).max();
    let in_last = |window: i64| a.loads.iter().filter(|(t, _)| secs(now, *t) < window).count();
    let interval_loads: Vec<(Timestamp, String)> = a
        .loads
        .iter()
        .filter(|(t, _)| secs(now, *t) < policy.interval_secs)
        .cloned()
        .collect();
    let pinned = marks.fail_closed || marks.pinned.contains(&view.name);
    let touchable = origin.touchable();
    let inactive = last_activity.map(|t| secs(now, t));
    let eligible = touchable && !pinned && view.blocked.is_none();
    Facts {
        status: SkillStatus {
            name: view.name.clone(),
            root: view.root.clone(),
            path: view.path.clone(),
            origin,
            touchable,
            pinned,
            blocked: view.blocked.clone(),
            created_at: created.map(rfc3339),
            last_loaded_at: last_loaded.map(rfc3339),
            inactive_days: inactive.map(|s| s / 86_400),
            loads_in_window: in_last(policy.archive_after_secs),
            loads_in_interval: interval_loads.len(),
            stale: touchable && !pinned && inactive.is_some_and(|s| s >= policy.stale_after_secs),
        },
        eligible,
        anchor,
        last_activity,
        last_loaded,
        interval_loads,
    }
}

/// Makes the plan of a run (see the module documentation for the rules).
pub fn plan(events: &[Observation], skills: &[SkillView], marks: &Marks<'_>, policy: &Policy, now: Timestamp) -> Plan {
    let mut activity: BTreeMap<&str, Activity> = BTreeMap::new();
    let mut failures: BTreeMap<&str, Vec<(Timestamp, &str)>> = BTreeMap::new();
    for e in events.iter().filter(|e| e.time <= now) {
        match &e.what {
            Observed::Created { skill, origin } => activity.entry(skill).or_default().created.push((e.time, *origin)),
            Observed::Loaded { skill, session } => {
                activity.entry(skill).or_default().loads.push((e.time, session.clone()))
            }
            Observed::ToolFailed { session, tool } => failures.entry(session).or_default().push((e.time, tool)),
            Observed::Restored { skill } => activity.entry(skill).or_default().restored.push(e.time),
        }
    }
    let mut all: Vec<Facts> = skills
        .iter()
        .map(|v| facts(v, activity.get(v.name.as_str()), marks, policy, now))
        .collect();
    all.sort_by(|a, b| (&a.status.name, &a.status.path).cmp(&(&b.status.name, &b.status.path)));

    let mut candidates = Vec::new();
    let mut taken: BTreeSet<usize> = BTreeSet::new();
    // Archives, stalest first.
    let mut archives: Vec<usize> = (0..all.len())
        .filter(|&i| {
            let f = &all[i];
            f.eligible
                && f.last_activity
                    .is_some_and(|t| secs(now, t) >= policy.archive_after_secs)
        })
        .collect();
    archives.sort_by_key(|&i| (all[i].last_activity, all[i].status.name.clone()));
    for i in archives {
        taken.insert(i);
        let f = &all[i];
        let at = f.last_activity.unwrap_or(now);
        candidates.push(Candidate::Archive {
            skill: f.status.name.clone(),
            root: f.status.root.clone(),
            last_activity_at: rfc3339(at),
            inactive_days: secs(now, at) / 86_400,
            never_loaded: f.last_loaded.is_none_or(|l| Some(l) < f.anchor),
        });
    }
    // Clusters.
    let pool: Vec<usize> = (0..all.len())
        .filter(|i| !taken.contains(i) && all[*i].eligible && all[*i].status.loads_in_window > 0)
        .collect();
    let mut clusters = clusters(&all, &pool, skills);
    clusters.sort_by_key(|c| {
        (
            c.iter().filter_map(|&i| all[i].last_loaded).max(),
            all[c[0]].status.name.clone(),
        )
    });
    for c in clusters {
        taken.extend(c.iter().copied());
        candidates.push(Candidate::Consolidate {
            root: all[c[0]].status.root.clone(),
            skills: c.iter().map(|&i| all[i].status.name.clone()).collect(),
            last_loaded_at: c
                .iter()
                .filter_map(|&i| all[i].last_loaded)
                .max()
                .map(rfc3339)
                .unwrap_or_default(),
        });
    }
    // Edits.
    let mut edits: Vec<(Option<Timestamp>, String, Candidate)> = Vec::new();
    for (i, f) in all.iter().enumerate() {
        if taken.contains(&i) || !f.eligible || f.interval_loads.len() < EDIT_MIN_LOADS {
            continue;
        }
        if let Some(c) = edit_candidate(f, &failures) {
            edits.push((f.last_loaded, f.status.name.clone(), c));
        }
    }
    edits.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    candidates.extend(edits.into_iter().map(|(_, _, c)| c));
    Plan {
        now: rfc3339(now),
        fail_closed: marks.fail_closed,
        candidates,
        skills: all.into_iter().map(|f| f.status).collect(),
    }
}

fn edit_candidate(f: &Facts, failures: &BTreeMap<&str, Vec<(Timestamp, &str)>>) -> Option<Candidate> {
    let mut failed_loads = 0;
    let mut tools: BTreeMap<&str, usize> = BTreeMap::new();
    for (at, session) in &f.interval_loads {
        let after: Vec<&str> = failures
            .get(session.as_str())
            .map(|v| {
                v.iter()
                    .filter(|(t, _)| *t >= *at && secs(*t, *at) <= FAILURE_WINDOW_SECS)
                    .map(|(_, tool)| *tool)
                    .collect()
            })
            .unwrap_or_default();
        if !after.is_empty() {
            failed_loads += 1;
            for t in after {
                *tools.entry(t).or_default() += 1;
            }
        }
    }
    let loads = f.interval_loads.len();
    if failed_loads * 2 < loads {
        return None;
    }
    let mut failed_tools: Vec<ToolCount> = tools
        .into_iter()
        .map(|(tool, count)| ToolCount {
            tool: tool.to_owned(),
            count,
        })
        .collect();
    failed_tools.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.tool.cmp(&b.tool)));
    Some(Candidate::Edit {
        skill: f.status.name.clone(),
        root: f.status.root.clone(),
        loads,
        failed_loads,
        failure_rate: ((failed_loads * 1000) as f64 / loads as f64).round() / 1000.0,
        failed_tools,
        last_loaded_at: f.last_loaded.map(rfc3339).unwrap_or_default(),
    })
}

/// Single-link clusters of `pool` (indices into `all`), each sorted by name, cut to
/// [`CLUSTER_MAX`].
fn clusters(all: &[Facts], pool: &[usize], views: &[SkillView]) -> Vec<Vec<usize>> {
    let description: BTreeMap<(&str, &str), &str> = views
        .iter()
        .map(|v| ((v.name.as_str(), v.path.as_str()), v.description.as_str()))
        .collect();
    let bags: BTreeMap<usize, (BTreeSet<String>, BTreeSet<String>)> = pool
        .iter()
        .map(|&i| {
            let s = &all[i].status;
            let d = description
                .get(&(s.name.as_str(), s.path.as_str()))
                .copied()
                .unwrap_or("");
            (i, (words(&s.name), words(d)))
        })
        .collect();
    let linked = |a: usize, b: usize| {
        let (Some((na, da)), Some((nb, db))) = (bags.get(&a), bags.get(&b)) else {
            return false;
        };
        all[a].status.root == all[b].status.root
            && (overlaps(na, nb, NAME_OVERLAP) || overlaps(da, db, DESCRIPTION_OVERLAP))
    };
    let mut out = Vec::new();
    cut(all, pool.to_vec(), &linked, &mut out);
    out
}

fn components(members: &[usize], linked: &dyn Fn(usize, usize) -> bool) -> Vec<Vec<usize>> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for &start in members {
        if !seen.insert(start) {
            continue;
        }
        let mut comp = vec![start];
        let mut next = 0;
        while next < comp.len() {
            let at = comp[next];
            for &other in members {
                if !seen.contains(&other) && linked(at, other) {
                    seen.insert(other);
                    comp.push(other);
                }
            }
            next += 1;
        }
        comp.sort_unstable();
        out.push(comp);
    }
    out
}

fn cut(all: &[Facts], members: Vec<usize>, linked: &dyn Fn(usize, usize) -> bool, out: &mut Vec<Vec<usize>>) {
    for mut comp in components(&members, linked) {
        if comp.len() < 2 {
            continue;
        }
        if comp.len() <= CLUSTER_MAX {
            out.push(comp);
            continue;
        }
        comp.sort_by(|&a, &b| {
            all[b]
                .status
                .loads_in_window
                .cmp(&all[a].status.loads_in_window)
                .then_with(|| all[a].status.name.cmp(&all[b].status.name))
        });
        let rest = comp.split_off(CLUSTER_MAX);
        comp.sort_unstable();
        out.push(comp);
        cut(all, rest, linked, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn the_same_events_and_skills_give_the_same_plan_in_any_order() {
        let mut events = Vec::new();
        let mut skills = Vec::new();
        for i in 0..40 {
            let name = format!("task-{}-helper-{}", i % 7, i % 3);
            skills.push(SkillView {
                name: name.clone(),
                root: "skills".into(),
                path: format!("skills/{name}-{i}"),
                description: format!("Helps with chores number {}", i % 5),
                blocked: None,
            });
            let day = 86_400 * (i64::from(i) * 7 % 120);
            let at = Timestamp::from_second(t("2026-06-01T00:00:00Z").as_second() - day).unwrap();
            let source = if i % 4 == 0 {
                Origin::Manual
            } else {
                Origin::AutoGenerated
            };
            let at_ = |what| Observation { time: at, what };
            events.push(at_(Observed::Created {
                skill: name.clone(),
                origin: source,
            }));
            if i % 3 != 0 {
                let session = format!("s{i}");
                events.push(at_(Observed::Loaded {
                    skill: name,
                    session: session.clone(),
                }));
                events.push(at_(Observed::ToolFailed {
                    session,
                    tool: "bash".into(),
                }));
            }
        }
        let pinned = BTreeSet::from(["task-1-helper-1".to_owned()]);
        let none = BTreeSet::new();
        let marks = Marks {
            pinned: &pinned,
            curator_generated: &none,
            fail_closed: false,
        };
        let policy = Policy {
            archive_after_secs: 90 * 86_400,
            stale_after_secs: 30 * 86_400,
            interval_secs: 120 * 86_400,
        };
        let now = t("2026-06-01T00:00:00Z");
        let a = serde_json::to_string(&plan(&events, &skills, &marks, &policy, now)).unwrap();
        events.reverse();
        skills.reverse();
        let b = serde_json::to_string(&plan(&events, &skills, &marks, &policy, now)).unwrap();
        assert_eq!(a, b);
        assert!(a.contains("\"archive\"") && a.contains("\"consolidate\""), "{a}");
        let closed = Marks {
            fail_closed: true,
            ..marks
        };
        assert!(plan(&events, &skills, &closed, &policy, now).candidates.is_empty());
    }

    #[test]
    fn word_bags_and_overlap_boundaries() {
        assert_eq!(
            words("Use when reviewing Python code, the PR way."),
            ["code", "pr", "python", "reviewing", "way"]
                .into_iter()
                .map(String::from)
                .collect()
        );
        let a = words("alpha-beta-gamma-delta-epsilon");
        let b = words("alpha-beta-gamma-zeta-eta");
        assert!(overlaps(&a, &b, NAME_OVERLAP)); // 3/5 = 0.6
        let c = words("alpha-beta-zeta-eta-theta");
        assert!(!overlaps(&a, &c, NAME_OVERLAP)); // 2/5
        assert!(!overlaps(&BTreeSet::new(), &a, NAME_OVERLAP));
    }
}

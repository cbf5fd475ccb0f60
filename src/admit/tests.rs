//! Admission's unit tests, and the fixtures other modules' tests share (`pub(crate)`).

use std::collections::BTreeMap;

use super::l1::check_l1;
use super::l3::check_l3;
use super::l5::check_program;
use super::*;
use crate::extract::{Program, SubCommand};
use crate::generate::{self, Stamp};
use crate::model::{Lang, Prototype, PrototypeKind};
use crate::translate::Outcome;
use crate::vocab;

mod catalog;

pub(crate) fn name(a: &str, o: &str, p: &str) -> ExecutorName {
    ExecutorName {
        action: a.into(),
        object: o.into(),
        qualifiers: vec![],
        provider: p.into(),
    }
}

pub(crate) fn plan(n: &ExecutorName, words: &[&str], description: Option<&str>) -> Plan {
    Plan {
        subcommand: SubCommand {
            words: words.iter().map(|s| s.to_string()).collect(),
            program: Program::Script {
                path: "scripts/tool.py".into(),
                interpreter: "python3".into(),
            },
            args: vec![],
            source_section: "Commands".into(),
            line: 1,
            invocations: 1,
            description: description.map(str::to_owned),
            context: None,
            aliases: Vec::new(),
            free_text: false,
        },
        outcome: Outcome::Translated(n.clone()),
        steps: vec![],
        proposal: None,
    }
}

pub(crate) fn info(skill: &str) -> SkillInfo {
    SkillInfo {
        name: skill.into(),
        imported_from: format!("skills/{skill}"),
        version: "0.0.0".into(),
        skill_md_sha256: String::new(),
        file_hashes: [("scripts/tool.py".to_owned(), String::new())].into(),
        credentials: vec![],
        permissions: vec![],
        tier: Default::default(),
        description: format!("Test skill {skill}."),
    }
}

/// A runner that never finds Python and runs a canned verifier.
struct Fake {
    python: bool,
    verifier: Result<String, String>,
}

impl Runner for Fake {
    fn describe(&self, wrappers: &[(String, String)]) -> Option<Vec<DescribeResult>> {
        self.python.then(|| {
            wrappers
                .iter()
                .map(|(_, src)| {
                    // The contract is embedded; a wrapper marked BROKEN does not compile.
                    if src.contains("BROKEN") {
                        Err("does not compile".into())
                    } else {
                        Ok("{}".into())
                    }
                })
                .collect()
        })
    }
    fn verify(&self, _: &str, _: &str) -> Result<String, String> {
        self.verifier.clone()
    }
}

pub(crate) fn opts<'a>(skip: &'a [Level], runner: &'a dyn Runner, settings: &'a AdmissionSettings) -> Options<'a> {
    Options {
        skip,
        settings,
        runner,
        context: [0; 32],
        earlier: None,
    }
}

/// Jaccard similarity `|a ∩ b| / |a ∪ b|` of two sorted, de-duplicated term lists; 0 when
/// both are empty (what [`check_l3`] computes faster).
fn jaccard(a: &[String], b: &[String]) -> f64 {
    let (mut i, mut j, mut both) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                both += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - both;
    if union == 0 { 0.0 } else { both as f64 / union as f64 }
}

fn with_verifier(verifier: &str) -> AdmissionSettings {
    AdmissionSettings {
        verifier: verifier.to_owned(),
        ..AdmissionSettings::default()
    }
}

pub(crate) fn v() -> Vocabulary {
    vocab::parse(vocab::DEFAULT_PATH, vocab::DEFAULT_TEXT).vocabulary
}

#[test]
fn global_collision_rejects_every_skill_involved() {
    let v = v();
    let (a, b, c) = (
        name("read", "files", "x"),
        name("read", "files", "x"),
        name("list", "files", "y"),
    );
    let (pa, pb, pc) = (
        plan(&a, &["read"], None),
        plan(&b, &["read"], None),
        plan(&c, &["ls"], None),
    );
    let cand = |n, p| {
        Some(Candidate {
            name: n,
            plan: p,
            executor: None,
        })
    };
    let skills = [
        SkillPlans {
            skill: "x",
            plans: vec![cand(&a, &pa)],
            info: None,
            files: &[],
        },
        SkillPlans {
            skill: "x-copy",
            plans: vec![cand(&b, &pb), None],
            info: None,
            files: &[],
        },
        SkillPlans {
            skill: "y",
            plans: vec![cand(&c, &pc)],
            info: None,
            files: &[],
        },
    ];
    let fake = Fake {
        python: false,
        verifier: Ok(String::new()),
    };
    let skip = [Level::L3, Level::L4, Level::L5];
    let out = admit(&skills, &v, &opts(&skip, &fake, &AdmissionSettings::default())).skills;
    assert_eq!(out[0].rejected.as_ref().map(|r| r.0.code), Some("AD002"));
    assert_eq!(out[1].rejected.as_ref().map(|r| r.0.code), Some("AD002"));
    assert_eq!(out[1].plans[1], Verdict::NotTranslated);
    assert!(out[2].rejected.is_none());
    let Verdict::Admitted(levels) = &out[2].plans[0] else {
        panic!("admitted: {:?}", out[2].plans[0])
    };
    assert_eq!(levels[&Level::L2], LevelStatus::Pass);
    assert_eq!(levels[&Level::L3], LevelStatus::Skipped);
    assert_eq!(levels[&Level::L6], LevelStatus::Pass);
    // Skipping L2 is recorded and lets both through.
    let skip = [Level::L2, Level::L3, Level::L4, Level::L5];
    let out = admit(&skills, &v, &opts(&skip, &fake, &AdmissionSettings::default())).skills;
    assert!(out.iter().all(|s| s.rejected.is_none()));
}

#[test]
fn l1_refuses_words_outside_the_vocabulary() {
    let v = v();
    assert!(check_l1(&name("read", "files", "x"), &v).is_ok());
    assert!(check_l1(&name("append", "rowz", "x"), &v).is_err());
    assert!(check_l1(&name("read", "files", "X-y"), &v).is_err());
}

#[test]
fn jaccard_is_the_shared_share_of_the_union() {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(jaccard(&s(&["a", "b", "c"]), &s(&["b", "c", "d"])), 0.5);
    assert_eq!(jaccard(&s(&["a"]), &s(&["a"])), 1.0);
    assert_eq!(jaccard(&s(&["a"]), &s(&["b"])), 0.0);
    assert_eq!(jaccard(&[], &[]), 0.0);
}

#[test]
fn l3_prefix_filtering_finds_exactly_the_pairs_of_the_quadratic_scan() {
    let o = AdmissionSettings::default();
    // Deterministic pseudo-random sets over a small alphabet.
    let mut seed = 7u64;
    let mut sets: Vec<Vec<String>> = Vec::new();
    for _ in 0..200 {
        let mut s = Vec::new();
        for _ in 0..6 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            s.push(format!("w{}", (seed >> 33) % 14));
        }
        s.sort();
        s.dedup();
        sets.push(s);
    }
    let names: Vec<(String, &str)> = (0..sets.len())
        .map(|i| (format!("e{i:03}"), if i % 3 == 0 { "p" } else { "q" }))
        .collect();
    let refs: Vec<&[String]> = sets.iter().map(Vec::as_slice).collect();
    let fast = check_l3(&refs, &names, &o);
    let mut slow: BTreeMap<usize, (usize, f64)> = BTreeMap::new();
    for i in 0..sets.len() {
        for j in 0..sets.len() {
            if i == j {
                continue;
            }
            let t = if names[i].1 == names[j].1 { 0.85 } else { 0.5 };
            let x = jaccard(&sets[i], &sets[j]);
            if x >= t {
                let e = slow.entry(i).or_insert((j, x));
                if x > e.1 {
                    *e = (j, x);
                }
            }
        }
    }
    assert!(!slow.is_empty());
    assert_eq!(fast, slow);
}

/// Issue 16 item 2: L3's join (prefix filtering over terms ranked by rarity, a length
/// filter, each pair once) finds exactly what comparing every pair finds — the partner each
/// executor overlaps most with, ties broken by the smaller name — on random catalogs: set
/// sizes from 0 to 12 over alphabets of 4 to 40 terms (so that rare and common terms both
/// occur), random thresholds (0.1 to 1), providers shared or not, and names that
/// do not sort as the executors are given. Fixed seed, 60 catalogs.
#[test]
fn l3_join_equals_the_quadratic_scan_on_random_catalogs() {
    let mut seed = 0x0016_0002u64;
    let mut next = |n: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % n.max(1)
    };
    let mut found = 0usize;
    for round in 0..60 {
        let n = 2 + next(if round % 5 == 0 { 600 } else { 80 }) as usize;
        let alphabet = 4 + next(37);
        let thresholds = [0.1, 0.3, 0.5, 0.66, 0.85, 1.0];
        let o = AdmissionSettings {
            affinity_threshold: thresholds[next(6) as usize],
            affinity_threshold_same_provider: thresholds[next(6) as usize],
            verifier: String::new(),
        };
        let sets: Vec<Vec<String>> = (0..n)
            .map(|_| {
                let mut s: Vec<String> = (0..next(13)).map(|_| format!("w{}", next(alphabet))).collect();
                s.sort();
                s.dedup();
                s
            })
            .collect();
        let providers = ["p", "q", "r"];
        let names: Vec<(String, &str)> = (0..n)
            .map(|i| (format!("e{:05}", (i * 7919) % 100_003), providers[next(3) as usize]))
            .collect();
        let refs: Vec<&[String]> = sets.iter().map(Vec::as_slice).collect();
        let fast = check_l3(&refs, &names, &o);
        let mut slow: BTreeMap<usize, (usize, f64)> = BTreeMap::new();
        for i in 0..n {
            for j in 0..n {
                if i == j {
                    continue;
                }
                let t = if names[i].1 == names[j].1 {
                    o.affinity_threshold_same_provider
                } else {
                    o.affinity_threshold
                };
                let x = jaccard(&sets[i], &sets[j]);
                if x >= t {
                    let e = slow.entry(i).or_insert((j, x));
                    if x > e.1 || (x == e.1 && names[j].0 < names[e.0].0) {
                        *e = (j, x);
                    }
                }
            }
        }
        found += slow.len();
        assert_eq!(fast, slow, "round {round}: {n} executors, thresholds {o:?}");
    }
    assert!(found > 1000, "the cases find confusions ({found})");
}

/// (action, object, skill, sub-command words, description).
pub(crate) type Def<'a> = (&'a str, &'a str, &'a str, &'a [&'a str], Option<&'a str>);

/// Candidates with generated executors, for L3–L6.
pub(crate) fn catalog(defs: &[Def<'_>]) -> (Vec<ExecutorName>, Vec<Plan>, Vec<SkillInfo>) {
    let names: Vec<ExecutorName> = defs.iter().map(|d| name(d.0, d.1, &d.2.replace('-', "_"))).collect();
    let plans = defs.iter().zip(&names).map(|(d, n)| plan(n, d.3, d.4)).collect();
    let infos = defs.iter().map(|d| info(d.2)).collect();
    (names, plans, infos)
}

fn run(defs: &[Def<'_>], skip: &[Level], fake: &Fake, verifier: &str) -> Vec<Verdict> {
    let v = v();
    let (names, plans, infos) = catalog(defs);
    let stamp = Stamp {
        levels: BTreeMap::new(),
        skipped: vec![],
        imported_at: String::new(),
    };
    let execs: Vec<Executor> = (0..names.len())
        .map(|i| generate::executor(&plans[i], &names[i], &infos[i], &v, &stamp))
        .collect();
    let skills: Vec<SkillPlans<'_>> = (0..names.len())
        .map(|i| SkillPlans {
            skill: &infos[i].name,
            plans: vec![Some(Candidate {
                name: &names[i],
                plan: &plans[i],
                executor: Some(&execs[i]),
            })],
            info: Some(&infos[i]),
            files: &[],
        })
        .collect();
    admit(&skills, &v, &opts(skip, fake, &with_verifier(verifier)))
        .skills
        .into_iter()
        .map(|s| s.plans[0].clone())
        .collect()
}

fn level(v: &Verdict) -> Option<(Level, &str)> {
    match v {
        Verdict::Rejected { level, rule, .. } => Some((*level, rule.code)),
        _ => None,
    }
}

#[test]
fn l3_rejects_both_executors_of_a_confusable_pair() {
    let fake = Fake {
        python: false,
        verifier: Ok(String::new()),
    };
    let skip = [Level::L4];
    // Same action, object and provider words: only the provider differs.
    let out = run(
        &[
            ("list", "files", "box", &["files", "list"], None),
            ("list", "files", "box-two", &["files", "list"], None),
            ("send", "messages", "chat", &["send"], None),
        ],
        &skip,
        &fake,
        "",
    );
    assert_eq!(level(&out[0]), Some((Level::L3, "AD004")));
    assert_eq!(level(&out[1]), Some((Level::L3, "AD004")));
    assert_eq!(level(&out[2]), None, "{:?}", out[2]);
    let Verdict::Rejected { reason, .. } = &out[0] else {
        panic!()
    };
    assert!(reason.contains("`list_files_box_two`"), "{reason}");
}

#[test]
fn l6_rejects_a_delete_described_as_a_listing_and_a_failing_verifier() {
    let ok = Fake {
        python: false,
        verifier: Ok("{\"verdict\": \"accept\"}".into()),
    };
    let skip = [Level::L3, Level::L4];
    let defs: &[Def<'_>] = &[
        ("delete", "files", "a", &["rm"], Some("List every file in the folder.")),
        (
            "delete",
            "files",
            "b",
            &["rm"],
            Some("Removes the files, then lists what is left."),
        ),
        ("list", "files", "c", &["ls"], Some("Shows the files.")),
        (
            "describe",
            "payments",
            "d",
            &["summary"],
            Some("This month, with each category's share"),
        ),
    ];
    let out = run(defs, &skip, &ok, "");
    assert_eq!(level(&out[0]), Some((Level::L6, "AD007")));
    let Verdict::Rejected { reason, .. } = &out[0] else {
        panic!()
    };
    assert_eq!(
        reason,
        "its description starts with \"list\" (list, safe) but the executor's action `delete` is destructive, and nothing in its wording means delete"
    );
    assert_eq!(level(&out[1]), None, "a word meaning delete is there");
    assert_eq!(level(&out[2]), None, "show and list are both safe");
    assert_eq!(
        level(&out[3]),
        None,
        "a noun that could be a verb is not a leading verb"
    );
    // An external verifier that rejects, crashes or is missing rejects (fail closed).
    let out = run(&defs[2..3], &skip, &ok, "check");
    assert_eq!(level(&out[0]), None);
    for answer in [
        Ok("{\"verdict\": \"reject\", \"reason\": \"nope\"}".to_owned()),
        Ok("yes".to_owned()),
        Err("not found".to_owned()),
    ] {
        let f = Fake {
            python: false,
            verifier: answer,
        };
        let out = run(&defs[2..3], &skip, &f, "check");
        assert_eq!(level(&out[0]), Some((Level::L6, "AD008")), "{:?}", f.verifier);
    }
}

#[test]
fn l5_compares_describe_with_the_contract_and_checks_the_program() {
    let fake = Fake {
        python: true,
        verifier: Ok(String::new()),
    };
    let skip = [Level::L3, Level::L4, Level::L6];
    // The fake prints `{}`, which is not the contract.
    let out = run(&[("list", "files", "a", &["ls"], None)], &skip, &fake, "");
    assert_eq!(level(&out[0]), Some((Level::L5, "AD006")));
    let Verdict::Rejected { reason, .. } = &out[0] else {
        panic!()
    };
    assert!(reason.contains("differs from the manifest's contract"), "{reason}");
    let missing = Program::Script {
        path: "scripts/gone.py".into(),
        interpreter: "python3".into(),
    };
    assert!(check_program(&missing, Some(&info("a"))).is_err());
    // No Python: L5 did not run, which is not a pass.
    let none = Fake {
        python: false,
        verifier: Ok(String::new()),
    };
    let out = run(&[("list", "files", "a", &["ls"], None)], &skip, &none, "");
    let Verdict::Admitted(levels) = &out[0] else {
        panic!("{out:?}")
    };
    assert_eq!(levels[&Level::L5], LevelStatus::NotRun);
    assert!(check_program(&Program::Binary { name: "gog".into() }, None).is_ok());
}

#[test]
fn l4_rejects_a_plan_whose_request_routes_elsewhere_and_writes_the_battery() {
    let fake = Fake {
        python: false,
        verifier: Ok(String::new()),
    };
    // L6 would see that a listing described as a deletion contradicts itself.
    let skip = [Level::L3, Level::L6];
    let defs: &[Def<'_>] = &[
        ("list", "files", "alpha", &["ls"], None),
        ("list", "events", "alpha", &["events"], None),
        ("delete", "files", "beta", &["rm"], None),
    ];
    let out = run(defs, &skip, &fake, "");
    assert!(out.iter().all(|v| matches!(v, Verdict::Admitted(_))), "{out:?}");
    // Two names for one job (qualifiers in another order): each one's requests route to
    // the other as much as to itself, so both go, each naming the other.
    let mut defs = defs.to_vec();
    defs.push(("list", "files", "alpha", &["ls"], None));
    let out = {
        let v = v();
        let mut names: Vec<ExecutorName> = defs.iter().map(|d| name(d.0, d.1, d.2)).collect();
        names[0].qualifiers = vec!["xlsx".into(), "csv".into()];
        names[3].qualifiers = vec!["csv".into(), "xlsx".into()];
        let plans: Vec<Plan> = names.iter().map(|n| plan(n, &["ls"], None)).collect();
        let infos: Vec<SkillInfo> = defs.iter().map(|d| info(d.2)).collect();
        let stamp = Stamp {
            levels: BTreeMap::new(),
            skipped: vec![],
            imported_at: String::new(),
        };
        let execs: Vec<Executor> = (0..4)
            .map(|i| generate::executor(&plans[i], &names[i], &infos[i], &v, &stamp))
            .collect();
        let skills: Vec<SkillPlans<'_>> = (0..4)
            .map(|i| SkillPlans {
                skill: &infos[i].name,
                plans: vec![Some(Candidate {
                    name: &names[i],
                    plan: &plans[i],
                    executor: Some(&execs[i]),
                })],
                info: Some(&infos[i]),
                files: &[],
            })
            .collect();
        let a = admit(&skills, &v, &opts(&skip, &fake, &AdmissionSettings::default()));
        // The battery holds the requests of the admitted executors only.
        assert!(
            a.catalog
                .battery
                .iter()
                .all(|p| p.expected != "list_files_csv_xlsx_alpha")
        );
        assert!(a.catalog.battery.contains(&Prototype {
            expected: "delete_files_beta".into(),
            lang: Lang::It,
            request: "elimina file Beta".into(),
            kind: PrototypeKind::Label,
        }));
        a.skills.into_iter().map(|s| s.plans[0].clone()).collect::<Vec<_>>()
    };
    assert_eq!(level(&out[1]), None);
    assert_eq!(level(&out[2]), None);
    assert_eq!(level(&out[0]), Some((Level::L4, "AD005")));
    assert_eq!(level(&out[3]), Some((Level::L4, "AD005")));
    let Verdict::Rejected { reason, .. } = &out[0] else {
        panic!()
    };
    assert_eq!(
        reason,
        "its prototype request \"list files spreadsheet CSV Alpha\" (en) routes to `list_files_csv_xlsx_alpha` first, not to it"
    );
}

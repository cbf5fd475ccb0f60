//! The recorded catalog-wide verdicts (L3, L4): taken for exactly the same question, and
//! a key that follows every input of those levels (issue 16).

use std::collections::BTreeMap;

use super::*;

/// A catalog whose admission rejects at L3 (two executors alike but for the provider) and at
/// L4 (two names for one job), for the tests of the recorded catalog-wide verdicts.
struct Judged {
    names: Vec<ExecutorName>,
    plans: Vec<Plan>,
    infos: Vec<SkillInfo>,
    execs: Vec<Executor>,
    skip: Vec<Level>,
    settings: AdmissionSettings,
    context: [u8; 32],
}

impl Judged {
    fn new() -> Judged {
        let v = v();
        let defs: &[Def<'_>] = &[
            ("list", "files", "box", &["files", "list"], None),
            ("list", "files", "box-two", &["files", "list"], None),
            (
                "send",
                "messages",
                "chat",
                &["send"],
                Some("Sends a message to a channel"),
            ),
            ("list", "events", "alpha", &["events"], None),
            ("delete", "files", "beta", &["rm"], None),
            ("list", "files", "gamma", &["ls"], None),
            ("list", "files", "gamma", &["ls"], None),
        ];
        let (mut names, plans, infos) = catalog(defs);
        names[5].qualifiers = vec!["xlsx".into(), "csv".into()];
        names[6].qualifiers = vec!["csv".into(), "xlsx".into()];
        let plans: Vec<Plan> = plans
            .iter()
            .zip(&names)
            .map(|(p, n)| plan(n, &[], p.subcommand.description.as_deref()))
            .collect();
        let stamp = Stamp {
            levels: BTreeMap::new(),
            skipped: vec![],
            imported_at: String::new(),
        };
        let execs = (0..names.len())
            .map(|i| generate::executor(&plans[i], &names[i], &infos[i], &v, &stamp))
            .collect();
        Judged {
            names,
            plans,
            infos,
            execs,
            skip: vec![Level::L6],
            // The gamma pair (one provider, the same terms) is left to L4.
            settings: AdmissionSettings {
                affinity_threshold_same_provider: 1.5,
                ..AdmissionSettings::default()
            },
            context: [7; 32],
        }
    }

    fn admit(&self, earlier: Option<&CatalogVerdicts>) -> Admission {
        let fake = Fake {
            python: false,
            verifier: Ok(String::new()),
        };
        let skills: Vec<SkillPlans<'_>> = (0..self.names.len())
            .map(|i| SkillPlans {
                skill: &self.infos[i].name,
                plans: vec![Some(Candidate {
                    name: &self.names[i],
                    plan: &self.plans[i],
                    executor: Some(&self.execs[i]),
                })],
                info: Some(&self.infos[i]),
                files: &[],
            })
            .collect();
        let o = Options {
            context: self.context,
            earlier,
            ..opts(&self.skip, &fake, &self.settings)
        };
        admit(&skills, &v(), &o)
    }
}

/// A later build takes the recorded L3/L4 verdicts for exactly the same question and gets the
/// admission a full judgement gives; a stale or malformed record is judged again.
#[test]
fn recorded_catalog_verdicts_stand_for_the_same_question_only() {
    let j = Judged::new();
    let full = j.admit(None);
    assert!(!full.catalog_reused);
    let levels: Vec<Level> = full.catalog.rejected.iter().map(|r| r.1).collect();
    assert!(levels.contains(&Level::L3) && levels.contains(&Level::L4), "{full:?}");
    assert!(!full.catalog.battery.is_empty());

    let again = j.admit(Some(&full.catalog));
    assert!(again.catalog_reused);
    assert_eq!(again.skills, full.skills);
    assert_eq!(again.catalog.battery, full.catalog.battery);
    assert_eq!(again.catalog, full.catalog);

    // Another question: the record is not taken, and the verdicts are judged afresh.
    let mut edited = Judged::new();
    edited.execs[2].labels.en.push_str(" now");
    let fresh = edited.admit(None);
    let stale = edited.admit(Some(&full.catalog));
    assert!(!stale.catalog_reused);
    assert_eq!(stale, fresh);

    // A record whose key matches but which names a plan that is not there is not taken.
    let mut forged = full.catalog.clone();
    forged.rejected.push((99, Level::L3, "forged".into()));
    let judged = j.admit(Some(&forged));
    assert!(!judged.catalog_reused);
    assert_eq!(judged.skills, full.skills);
    let mut forged = full.catalog.clone();
    forged.rejected.push((0, Level::L5, "forged".into()));
    assert!(!j.admit(Some(&forged)).catalog_reused);
}

/// Acceptance 3 (issue 16) for the recorded L3/L4 verdicts: every input of the catalog-wide
/// levels changes their key, and what they do not read does not.
#[test]
fn the_catalog_key_follows_every_input_of_l3_and_l4() {
    let base = Judged::new().admit(None).catalog.key;
    type Edit = fn(&mut Judged);
    let edits: [(&str, Edit); 13] = [
        ("an affinity term", |j| j.execs[2].affinity.push("channel".into())),
        ("an English label", |j| j.execs[2].labels.en.push_str(" now")),
        ("an Italian label", |j| j.execs[2].labels.it.push_str(" ora")),
        ("an executor's description", |j| {
            j.execs[2].description.push_str(" Fast.")
        }),
        ("a sub-command's description", |j| {
            j.plans[2].subcommand.description = Some("Posts a message to a channel".into());
        }),
        ("a name's qualifiers", |j| j.names[3].qualifiers.push("today".into())),
        ("a name's provider", |j| j.names[3].provider = "alphas".into()),
        ("the L3 threshold", |j| j.settings.affinity_threshold = 0.6),
        ("the same-provider L3 threshold", |j| {
            j.settings.affinity_threshold_same_provider = 0.9
        }),
        ("L3 skipped", |j| j.skip.push(Level::L3)),
        ("L4 skipped", |j| j.skip.push(Level::L4)),
        ("the vocabulary or tool (context)", |j| j.context[0] ^= 1),
        ("a plan more", |j| {
            let n = name("find", "contacts", "delta");
            j.plans.push(plan(&n, &[], None));
            j.infos.push(info("delta"));
            let e = generate::executor(
                &j.plans[7],
                &n,
                &j.infos[7],
                &v(),
                &Stamp {
                    levels: BTreeMap::new(),
                    skipped: vec![],
                    imported_at: String::new(),
                },
            );
            j.execs.push(e);
            j.names.push(n);
        }),
    ];
    for (what, edit) in edits {
        let mut j = Judged::new();
        edit(&mut j);
        assert_ne!(j.admit(None).catalog.key, base, "{what} must change the key");
    }
    // Not read by L3 or L4: the wrapper, the manifest, the L6 verifier.
    let mut j = Judged::new();
    j.execs[2].wrapper.push_str("# edited\n");
    j.execs[2].manifest.push_str("# edited\n");
    j.settings.verifier = "true".into();
    assert_eq!(j.admit(None).catalog.key, base);
}

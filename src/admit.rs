//! Admission: the verdict of each translated plan, level by level (PRODUCT.md, "Admission
//! levels"). Translation is not admission: a plan that translates can still be rejected here.
//!
//! Implemented: L1 (the name's parts belong to the closed vocabulary and the name follows the
//! grammar) and L2 (the name is unique across the whole catalog; a collision with another
//! skill rejects every skill involved, since a batch build has no "first" skill). L3–L6 are
//! reported as `not-run` until they exist; levels skipped on request are `skipped` and
//! recorded as weakened evidence.

use std::collections::{BTreeMap, BTreeSet};

use crate::config::Level;
use crate::rules::{self, Rule};
use crate::translate::ExecutorName;
use crate::vocab::{self, Vocabulary};

/// Status of one level for one executor.
pub const PASS: &str = "pass";
/// The level was skipped on request.
pub const SKIPPED: &str = "skipped";
/// The level is not implemented yet.
pub const NOT_RUN: &str = "not-run";

/// The plans of one skill, as admission sees them.
#[derive(Clone, Debug)]
pub struct SkillPlans<'a> {
    /// The skill name.
    pub skill: &'a str,
    /// One entry per plan: its name when translated, `None` when translation rejected it.
    pub names: Vec<Option<&'a ExecutorName>>,
}

/// The verdict of one plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Admitted, with the status of every level.
    Admitted(BTreeMap<Level, &'static str>),
    /// Rejected at a level.
    Rejected {
        /// The level that rejected it.
        level: Level,
        /// The rule.
        rule: &'static Rule,
        /// Why.
        reason: String,
    },
    /// Rejected earlier, at translation.
    NotTranslated,
}

/// The verdict of one skill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillVerdict {
    /// Set when the whole skill is rejected (L2 collision with another skill).
    pub rejected: Option<(&'static Rule, String)>,
    /// One verdict per plan.
    pub plans: Vec<Verdict>,
}

/// Checks the L1 grammar: `action_object[_qualifier]*_provider`, lowercase `[a-z0-9]` words.
pub fn check_l1(name: &ExecutorName, vocab: &Vocabulary) -> Result<(), String> {
    let full = name.full();
    if !full.split('_').all(vocab::is_name_word) || full.split('_').count() < 3 {
        return Err(format!(
            "`{full}` does not follow the grammar action_object[_qualifier]_provider"
        ));
    }
    if !vocab.actions.contains_key(&name.action) {
        return Err(format!("action `{}` is not in the vocabulary", name.action));
    }
    if !vocab.objects.contains_key(&name.object) {
        return Err(format!("object `{}` is not in the vocabulary", name.object));
    }
    for q in &name.qualifiers {
        match vocab.qualifiers.get(q) {
            None => return Err(format!("qualifier `{q}` is not in the vocabulary")),
            Some(def) if !def.objects.contains(&name.object) => {
                return Err(format!("qualifier `{q}` cannot qualify `{}`", name.object));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Admits the plans of every skill of a catalog.
pub fn admit(skills: &[SkillPlans<'_>], vocab: &Vocabulary, skip: &[Level]) -> Vec<SkillVerdict> {
    let status = |l: Level, implemented: bool| {
        if skip.contains(&l) {
            SKIPPED
        } else if implemented {
            PASS
        } else {
            NOT_RUN
        }
    };
    let mut out: Vec<SkillVerdict> = skills
        .iter()
        .map(|s| SkillVerdict {
            rejected: None,
            plans: s
                .names
                .iter()
                .map(|n| match n {
                    None => Verdict::NotTranslated,
                    Some(name) => match check_l1(name, vocab) {
                        Err(reason) => Verdict::Rejected {
                            level: Level::L1,
                            rule: &rules::AD001,
                            reason,
                        },
                        Ok(()) => Verdict::Admitted(
                            Level::ALL
                                .into_iter()
                                .map(|l| (l, status(l, matches!(l, Level::L1 | Level::L2))))
                                .collect(),
                        ),
                    },
                })
                .collect(),
        })
        .collect();
    if skip.contains(&Level::L2) {
        return out;
    }
    // L2: which skills use each admitted name.
    let mut owners: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    for (i, s) in skills.iter().enumerate() {
        for (j, n) in s.names.iter().enumerate() {
            if let (Some(n), Verdict::Admitted(_)) = (n, &out[i].plans[j]) {
                owners.entry(n.full()).or_default().insert(i);
            }
        }
    }
    for (name, set) in owners {
        if set.len() < 2 {
            continue;
        }
        for &i in &set {
            if out[i].rejected.is_some() {
                continue;
            }
            let others: Vec<String> = set
                .iter()
                .filter(|&&k| k != i)
                .map(|&k| format!("`{}`", skills[k].skill))
                .collect();
            out[i].rejected = Some((
                &rules::AD002,
                format!("executor `{name}` is also produced by skill {}", others.join(", ")),
            ));
        }
    }
    for v in &mut out {
        if let Some((rule, reason)) = &v.rejected {
            for p in &mut v.plans {
                if matches!(p, Verdict::Admitted(_)) {
                    *p = Verdict::Rejected {
                        level: Level::L2,
                        rule,
                        reason: reason.clone(),
                    };
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(a: &str, o: &str, p: &str) -> ExecutorName {
        ExecutorName {
            action: a.into(),
            object: o.into(),
            qualifiers: vec![],
            provider: p.into(),
        }
    }

    #[test]
    fn global_collision_rejects_every_skill_involved() {
        let v = vocab::parse(vocab::DEFAULT_PATH, vocab::DEFAULT_TEXT).vocabulary;
        let (a, b, c) = (
            name("read", "files", "x"),
            name("read", "files", "x"),
            name("list", "files", "y"),
        );
        let skills = [
            SkillPlans {
                skill: "x",
                names: vec![Some(&a)],
            },
            SkillPlans {
                skill: "x-copy",
                names: vec![Some(&b), None],
            },
            SkillPlans {
                skill: "y",
                names: vec![Some(&c)],
            },
        ];
        let out = admit(&skills, &v, &[]);
        assert_eq!(out[0].rejected.as_ref().map(|r| r.0.code), Some("AD002"));
        assert_eq!(out[1].rejected.as_ref().map(|r| r.0.code), Some("AD002"));
        assert_eq!(out[1].plans[1], Verdict::NotTranslated);
        assert!(out[2].rejected.is_none());
        let Verdict::Admitted(levels) = &out[2].plans[0] else {
            panic!("admitted")
        };
        assert_eq!(levels[&Level::L2], PASS);
        assert_eq!(levels[&Level::L5], NOT_RUN);
        // Skipping L2 is recorded and lets both through.
        let out = admit(&skills, &v, &[Level::L2]);
        assert!(out.iter().all(|s| s.rejected.is_none()));
    }

    #[test]
    fn l1_refuses_words_outside_the_vocabulary() {
        let v = vocab::parse(vocab::DEFAULT_PATH, vocab::DEFAULT_TEXT).vocabulary;
        assert!(check_l1(&name("read", "files", "x"), &v).is_ok());
        assert!(check_l1(&name("append", "rowz", "x"), &v).is_err());
        assert!(check_l1(&name("read", "files", "X-y"), &v).is_err());
    }
}

//! L2 catalog: the name is unique across the catalog; a collision rejects every skill
//! involved, since a batch build has no "first" skill (`AD002`).

use std::collections::{BTreeMap, BTreeSet};

use super::{SkillPlans, SkillVerdict, Verdict};
use crate::model::Level;
use crate::rules;

/// L2: which skills use each admitted name; a name used by two skills rejects both whole.
pub(super) fn judge(skills: &[SkillPlans<'_>], out: &mut [SkillVerdict]) {
    let mut owners: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    for (i, s) in skills.iter().enumerate() {
        for (j, c) in s.plans.iter().enumerate() {
            if let (Some(c), Verdict::Admitted(_)) = (c, &out[i].plans[j]) {
                owners.entry(c.name.full()).or_default().insert(i);
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
    for v in out.iter_mut() {
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
}

//! L1 vocabulary: the name's parts belong to the closed vocabulary and the name follows the
//! grammar `action_object[_qualifier]*_provider` (`AD001`).

use std::collections::BTreeMap;

use super::{SkillPlans, SkillVerdict, Verdict};
use crate::model::Level;
use crate::rules;
use crate::translate::ExecutorName;
use crate::vocab::{self, Vocabulary};

/// The first verdicts: every translated plan checked at L1, every other one not translated.
pub(super) fn judge(skills: &[SkillPlans<'_>], vocab: &Vocabulary) -> Vec<SkillVerdict> {
    skills
        .iter()
        .map(|s| SkillVerdict {
            rejected: None,
            plans: s
                .plans
                .iter()
                .map(|c| match c {
                    None => Verdict::NotTranslated,
                    Some(c) => match check_l1(c.name, vocab) {
                        Err(reason) => Verdict::Rejected {
                            level: Level::L1,
                            rule: &rules::AD001,
                            reason,
                        },
                        Ok(()) => Verdict::Admitted(BTreeMap::new()),
                    },
                })
                .collect(),
        })
        .collect()
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

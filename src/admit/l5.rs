//! L5 executable: the referenced program is a file of the skill or a declared binary, the
//! wrapper compiles and its `--describe` equals the contract (`AD006`). Admission runs no
//! process: it asks the [`Runner`], which the build answers from what its IO layer recorded
//! beforehand. No `python3` ⇒ L5 is `not-run`.

use rayon::prelude::*;

use super::{Judging, Key, Runner, SkillPlans};
use crate::extract::Program;
use crate::generate::SkillInfo;
use crate::model::Level;
use crate::rules;

/// Rejects the plans whose wrapper fails; says whether Python ran.
pub(super) fn judge(run: &mut Judging<'_, '_>, runner: &dyn Runner) -> bool {
    let keys = run.alive();
    let (ran, results) = check_l5(run.skills, &keys, runner);
    for (k, r) in keys.into_iter().zip(results) {
        if let Err(reason) = r {
            run.reject(k, Level::L5, &rules::AD006, reason);
        }
    }
    ran
}

/// L5 for the plans `keys`: whether Python ran, and one result per key. Without Python, a
/// missing program still rejects (that check needs no Python); the rest is not run.
fn check_l5(skills: &[SkillPlans<'_>], keys: &[Key], runner: &dyn Runner) -> (bool, Vec<Result<(), String>>) {
    let mut wrappers: Vec<(String, String)> = Vec::new();
    let mut slot: Vec<Option<usize>> = Vec::new();
    let mut pre: Vec<Result<(), String>> = Vec::new();
    for &(i, j) in keys {
        let c = skills[i].plans[j].as_ref();
        let program = c.map(|c| check_program(&c.plan.subcommand.program, skills[i].info));
        match (c.and_then(|c| c.executor), program) {
            (Some(e), Some(Ok(()))) => {
                slot.push(Some(wrappers.len()));
                wrappers.push((format!("{}.py", e.name), e.wrapper.clone()));
                pre.push(Ok(()));
            }
            (_, Some(Err(why))) => {
                slot.push(None);
                pre.push(Err(why));
            }
            _ => {
                slot.push(None);
                pre.push(Err("no wrapper was generated".into()));
            }
        }
    }
    let described = if wrappers.is_empty() {
        Vec::new()
    } else {
        match runner.describe(&wrappers) {
            Some(d) => d,
            None => return (false, pre),
        }
    };
    // Reading each `--describe` output as JSON is most of this level's time: on the workers.
    (
        true,
        keys.par_iter()
            .enumerate()
            .map(|(n, &(i, j))| {
                pre[n].clone()?;
                let (Some(w), Some(e)) = (slot[n], skills[i].plans[j].and_then(|c| c.executor)) else {
                    return Err("no wrapper was generated".into());
                };
                let text = described
                    .get(w)
                    .cloned()
                    .unwrap_or_else(|| Err("the wrapper check returned no result".into()))?;
                let printed: serde_json::Value = serde_json::from_str(&text)
                    .map_err(|err| format!("the wrapper's --describe does not print JSON ({err})"))?;
                if printed == e.contract {
                    Ok(())
                } else {
                    Err("the wrapper's --describe differs from the manifest's contract".into())
                }
            })
            .collect(),
    )
}

/// The program an executor runs exists: a file of the skill (scripts, GAIA tool modules) or
/// a declared binary (extraction only makes binaries of declared ones; the name must be a bare
/// command name).
pub fn check_program(program: &Program, info: Option<&SkillInfo>) -> Result<(), String> {
    match program {
        Program::Script { path, .. } | Program::Tool { module: path, .. } => {
            if info.is_some_and(|i| i.file_hashes.contains_key(path)) {
                Ok(())
            } else {
                Err(format!("the program `{path}` is not a file of the skill"))
            }
        }
        Program::Binary { name } => {
            if !name.is_empty() && !name.contains(['/', '\\']) && !name.starts_with('-') {
                Ok(())
            } else {
                Err(format!("the binary `{name}` is not a bare command name"))
            }
        }
    }
}

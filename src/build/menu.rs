//! The menu index as build queries (RUNTIME.md §1, "The menu index … is a build stage"):
//! one memoized [`menu::index::Entry`] per catalog skill, and the vocabulary's lexicon.
//!
//! `menu_entry` reads the skill's own analysis, files and generated executors, and the
//! lexicon: editing one skill re-runs its entry only (other skills' `skill_output` are
//! backdated), and no entry holds a catalog-wide statistic — df, idf and norms are computed
//! when the session renders `out/menu.idx` ([`menu::index::render`]).

use super::cache::{self, MenuPart};
use super::{SkillOutput, skill_output, skill_unit};
use crate::db::{BuildInputs, Contents, SkillSource};
use crate::menu::{self, doc::ExecutorText, index::Entry, lexical::Lexicon};
use crate::{skill, vocab};

/// The lexicon of the build's vocabulary (words → concepts), carried in the index.
#[salsa::tracked(returns(ref))]
pub fn menu_lexicon(db: &dyn salsa::Database, inputs: BuildInputs) -> Lexicon {
    Lexicon::new(&vocab::vocabulary(db, inputs.vocabulary(db)).vocabulary)
}

/// What the menu reads of a catalog skill, or `None` when the skill is not in the catalog.
fn with_text<T>(
    db: &dyn salsa::Database,
    inputs: BuildInputs,
    skill: SkillSource,
    f: impl FnOnce(&menu::SkillText<'_>) -> T,
) -> Option<T> {
    let output = skill_output(db, inputs, skill);
    if !output.accepted {
        return None;
    }
    let info = skill_unit(db, inputs, skill).info.as_ref()?;
    let analysis = skill::analyze_skill(db, skill, inputs.settings(db));
    let Contents::Bytes(bytes) = skill.skill_md(db)?.contents(db) else {
        return None;
    };
    let executors = executor_texts(output);
    Some(f(&menu::SkillText {
        name: &info.name,
        description: &info.description,
        frontmatter: analysis.frontmatter.as_ref(),
        skill_md: bytes,
        body_offset: analysis.body.as_ref().map_or(bytes.len(), |b| b.start),
        executors: &executors,
    }))
}

/// The names and labels of a skill's admitted executors, as the menu reads them.
pub fn executor_texts(output: &SkillOutput) -> Vec<ExecutorText> {
    output
        .executors
        .iter()
        .map(|g| ExecutorText {
            name: g.executor.name.clone(),
            en: g.executor.labels.en.clone(),
            it: g.executor.labels.it.clone(),
        })
        .collect()
}

/// One catalog skill's menu entry (`None` for a skill not in the catalog). Taken from the
/// skill's cache entry when it was made with the same admitted executors.
#[salsa::tracked(returns(ref))]
pub fn menu_entry(db: &dyn salsa::Database, inputs: BuildInputs, skill: SkillSource) -> Option<Entry> {
    if let Some(bytes) = skill.warm(db).as_deref()
        && let Some(Some(part)) = cache::take::<Option<MenuPart>>(bytes, cache::Section::Menu)
    {
        let output = skill_output(db, inputs, skill);
        if output.accepted && executor_texts(output) == part.executors {
            return Some(part.entry);
        }
    }
    let lexicon = menu_lexicon(db, inputs);
    with_text(db, inputs, skill, |t| menu::entry(t, lexicon).0)
}

/// The texts a dense embedder reads for a skill ([`menu::doc::IndexDoc::embedded_parts`]). Not
/// memoized: the session asks it only for skills with a text whose vector is not cached.
pub fn menu_dense_parts(
    db: &dyn salsa::Database,
    inputs: BuildInputs,
    skill: SkillSource,
) -> Option<Vec<(menu::doc::DensePart, String)>> {
    let lexicon = menu_lexicon(db, inputs);
    with_text(db, inputs, skill, |t| menu::entry(t, lexicon).1.embedded_parts())
}

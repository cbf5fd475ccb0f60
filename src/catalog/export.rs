//! A catalog skill as `skillc export` gives it (issue 7): the standard-only SKILL.md, and the
//! deterministic zip of `<name>/SKILL.md` and its retained files. Built from the verified
//! bytes in memory; pure.

use super::{Catalog, Skill};
use crate::export::{self, ZipFile};

/// Why a catalog skill cannot be exported.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// A rejected skill has no retained source.
    #[error("`{0}` is not in the catalog (the build rejected it), so there is nothing to export")]
    NotRetained(String),
    /// The retained SKILL.md cannot be rewritten (never for a catalog skill, which passed
    /// `skillc check`).
    #[error("the SKILL.md of `{0}` cannot be exported: {1}")]
    Unreadable(String, String),
    /// The zip writer failed.
    #[error("building the zip of `{0}`: {1}")]
    Zip(String, String),
}

impl Catalog {
    /// The standard-only SKILL.md of a catalog skill.
    ///
    /// # Errors
    /// [`ExportError`] for a skill that is not retained or whose SKILL.md cannot be read.
    pub fn export_md(&self, skill: &Skill) -> Result<String, ExportError> {
        let bytes = self
            .skill_md(skill)
            .ok_or_else(|| ExportError::NotRetained(skill.name.clone()))?;
        let text =
            std::str::from_utf8(bytes).map_err(|e| ExportError::Unreadable(skill.name.clone(), e.to_string()))?;
        let file = format!("skills/{}/SKILL.md", skill.name);
        export::standard_skill_md(&file, text, &skill.name)
            .text
            .ok_or_else(|| ExportError::Unreadable(skill.name.clone(), "its frontmatter cannot be read".into()))
    }

    /// The export zip of a catalog skill: `<name>/SKILL.md` (standard-only) and every retained
    /// file `skillc export` keeps, sorted, fixed times and modes.
    ///
    /// # Errors
    /// [`ExportError`] as [`Catalog::export_md`], or when the zip cannot be built.
    pub fn export_zip(&self, skill: &Skill) -> Result<Vec<u8>, ExportError> {
        let md = self.export_md(skill)?;
        let mut files = vec![ZipFile {
            rel_path: "SKILL.md".into(),
            bytes: md.into_bytes(),
            executable: false,
        }];
        for (rel, bytes, executable) in self.retained(skill) {
            if rel != "SKILL.md" && export::is_exported(rel) {
                files.push(ZipFile {
                    rel_path: rel.to_owned(),
                    bytes: bytes.to_vec(),
                    executable,
                });
            }
        }
        export::zip(&skill.name, &files).map_err(|e| ExportError::Zip(skill.name.clone(), e.to_string()))
    }
}

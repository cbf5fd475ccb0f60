//! The scan baseline on disk for `skillc scan`: which file is used (`--baseline FILE`, else
//! `[scan] baseline`, else `skillc-scan-baseline.json` at the project root when it exists),
//! the findings' keys (their matched text read from the database), writing it
//! (`--write-baseline [FILE]`) and marking the findings it knows.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::db::{Contents, Db, SkillSource};
use crate::emit::write::write_atomic;
use crate::scan::Finding;
use crate::scan::baseline::{self, Baseline, Key};

/// The text of every UTF-8 file of the skills, by the path findings show.
pub(crate) fn texts(db: &Db, skills: &[SkillSource]) -> HashMap<String, String> {
    let mut m = HashMap::new();
    for s in skills {
        let files = s.skill_md(db).into_iter().chain(s.files(db).iter().copied());
        for f in files {
            if let Contents::Bytes(b) = f.contents(db)
                && let Ok(t) = std::str::from_utf8(b)
            {
                m.insert(format!("{}/{}", s.display(db), f.rel_path(db)), t.to_owned());
            }
        }
    }
    m
}

/// `display` (relative to `base`) relative to the project `root`, `/`-separated; as shown when
/// outside the project.
pub(crate) fn project_path(root: &Path, base: &Path, display: &str) -> String {
    crate::suppress::project_relative(root, base, display).unwrap_or_else(|| display.to_owned())
}

/// The baseline key of a finding.
pub(crate) fn key(f: &Finding, texts: &HashMap<String, String>, root: &Path, base: &Path) -> Key {
    let file = project_path(root, base, &f.file);
    let matched = texts
        .get(&f.file)
        .and_then(|t| baseline::line_text(t, f.line))
        .unwrap_or(&f.reason);
    Key {
        code: f.rule.code.to_owned(),
        fingerprint: baseline::fingerprint(f.rule.code, &file, matched),
        file,
    }
}

/// Which baseline file to read: `flag` (must exist), else `configured` (relative to the root;
/// must exist), else the default file when it exists. `None`: no baseline.
pub(crate) fn resolve(root: &Path, flag: Option<&Path>, configured: Option<&Path>) -> anyhow::Result<Option<PathBuf>> {
    let chosen = match (flag, configured) {
        (Some(f), _) => Some(f.to_path_buf()),
        (None, Some(c)) => Some(root.join(c)),
        (None, None) => None,
    };
    if let Some(path) = chosen {
        anyhow::ensure!(
            path.is_file(),
            "the scan baseline {} does not exist; create it with `skillc scan --write-baseline`",
            path.display()
        );
        return Ok(Some(path));
    }
    let default = root.join(baseline::DEFAULT_FILE);
    Ok(default.is_file().then_some(default))
}

/// Reads a baseline file.
pub(crate) fn read(path: &Path) -> anyhow::Result<Baseline> {
    let text = super::project::read_text_at(path, "write it again with `skillc scan --write-baseline`")?
        .with_context(|| format!("reading {}: no such file", path.display()))?;
    Baseline::parse(&text).with_context(|| format!("{} is not a usable scan baseline", path.display()))
}

/// Writes the baseline of `findings` atomically.
pub(crate) fn write(path: &Path, findings: &[(Key, &Finding)]) -> anyhow::Result<usize> {
    let b = Baseline::of(
        findings
            .iter()
            .map(|(k, f)| (k.clone(), f.severity.as_str(), f.reason.as_str())),
    );
    write_atomic(path, b.to_text().as_bytes(), Some(0o644)).with_context(|| format!("writing {}", path.display()))?;
    Ok(b.findings.iter().map(|e| e.count).sum())
}

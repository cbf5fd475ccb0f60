//! Installing an acquired skill: the one gate every import passes ([`validate_staged`], the
//! `check` machinery on the staged copy), the tier reset and the missing-script note, then a
//! stage in the destination's file system and a rename into place.

use super::*;

/// Names, checks and writes an acquired skill; the outcome says how it ended.
pub(super) fn install(mut outcome: Outcome, mut acquired: Acquired, options: &Options) -> Outcome {
    let Some(md_index) = acquired
        .files
        .iter()
        .position(|(p, _)| p == "SKILL.md")
        .or_else(|| acquired.files.iter().position(|(p, _)| p == "skill.md"))
    else {
        return outcome.end(Status::Failed, &rules::IM003, "no SKILL.md");
    };
    let ctx = Context {
        dir_name: "",
        mode: Mode::Default,
    };
    let analysis = validate::analyze("SKILL.md", &acquired.files[md_index].1, &ctx);
    let Some(name) = analysis.model.name.as_ref().map(|n| n.value.clone()) else {
        let why = analysis
            .diagnostics
            .iter()
            .find(|d| d.severity == Severity::Error)
            .map(|d| format!("{}: {}", d.code(), d.message))
            .unwrap_or_else(|| "no `name`".into());
        outcome.diagnostics = analysis.diagnostics.clone();
        return outcome.end(
            Status::Failed,
            &rules::IM003,
            format!("SKILL.md has no readable name ({why})"),
        );
    };
    outcome.name = Some(name.clone());
    if crate::translate::provider_of(&name).is_none() {
        return outcome.end(
            Status::Failed,
            &rules::IM003,
            format!("skill name `{name}` cannot name a folder (ASCII `[a-z0-9-]`, not a device name)"),
        );
    }
    let dest = options.into.join(&name);
    let shown = dest
        .strip_prefix(&options.root)
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or_else(|_| dest.display().to_string());
    outcome.path = Some(shown.clone());
    let exists = || format!("a skill named `{name}` already exists at {shown}; imports never overwrite");
    if dest.symlink_metadata().is_ok() {
        return outcome.end(Status::Skipped, &rules::IM006, exists());
    }
    if let Some(other) = same_name_elsewhere(&name, &dest, options) {
        return outcome.end(
            Status::Skipped,
            &rules::IM006,
            format!(
                "a skill named `{name}` already exists at {other}; an import never relabels another skill (its skillc.lock entry and provenance are its own)"
            ),
        );
    }
    // A `skillc export` moved extensions under `metadata` as strings: put them back, so that
    // an exported skill imports as the skill it was (and its tier claim is seen below).
    if let Some(restored) = std::str::from_utf8(&acquired.files[md_index].1)
        .ok()
        .and_then(crate::export::restore_skill_md)
    {
        acquired.files[md_index].1 = restored.into_bytes();
    }
    // The tier claim.
    let mut reset = false;
    match edit::reset_tier(&acquired.files[md_index].1) {
        Ok(edit::TierReset::Unchanged) => {}
        Ok(edit::TierReset::Reset { bytes, claimed }) => {
            acquired.files[md_index].1 = bytes;
            reset = true;
            outcome.notes.push(Note {
                code: rules::IM008.code,
                message: format!("security_tier `{claimed}` reset to `experimental`: imported skills start unverified"),
            });
        }
        Err(e) => return outcome.end(Status::Failed, &rules::IM008, e),
    }
    if acquired.lone {
        note_missing_scripts(&mut outcome, &acquired, md_index, analysis.body.clone());
    }
    // Stage, check, move into place.
    let stage_parent = options.into.join(".skillc");
    let result = stage_and_commit(
        &acquired.files,
        &acquired.executable,
        &name,
        &stage_parent,
        &dest,
        (options.limits, options.fail_on),
    );
    let _ = std::fs::remove_dir(&stage_parent);
    match result {
        Ok(()) => {
            outcome.status = Status::Imported;
            outcome
        }
        Err(Commit::Invalid(diags)) => {
            let first = diags
                .iter()
                .find(|d| d.severity == Severity::Error)
                .map(|d| format!("{}: {}", d.code(), d.message))
                .unwrap_or_default();
            let ceiling = reset && diags.iter().any(|d| d.rule.code == rules::SK052.code);
            outcome.diagnostics = diags;
            let hint = if ceiling {
                "; imported skills start `experimental`: review the skill, then add it by hand with the tier you grant"
            } else {
                ""
            };
            outcome.end(
                Status::Failed,
                &rules::IM005,
                format!("the skill does not pass `skillc check` ({first}){hint}"),
            )
        }
        Err(Commit::Exists) => outcome.end(Status::Skipped, &rules::IM006, exists()),
        Err(Commit::Entry(e)) => outcome.end(Status::Failed, &rules::IM004, e),
        Err(Commit::Io(e)) => outcome.end(Status::Failed, &rules::IM002, e),
    }
}

/// IM007: a lone SKILL.md whose body runs scripts that were not imported with it.
fn note_missing_scripts(
    outcome: &mut Outcome,
    acquired: &Acquired,
    md_index: usize,
    body: Option<std::ops::Range<usize>>,
) {
    let text = String::from_utf8_lossy(&acquired.files[md_index].1).into_owned();
    let body = body.and_then(|r| text.get(r)).unwrap_or_default();
    let missing = edit::missing_scripts(body, acquired.files.iter().map(|(p, _)| p.as_str()));
    if !missing.is_empty() {
        outcome.notes.push(Note {
            code: rules::IM007.code,
            message: format!(
                "the body runs {} but only SKILL.md was imported; import the skill's folder or repository instead",
                missing.join(", ")
            ),
        });
    }
}

/// Another skill of the project named `name` than the one at `dest`: a folder of that name
/// in a skills root, or the folder `skillc.lock` records for that name (`skillc.lock` and
/// the catalog's provenance are keyed by name, so importing it elsewhere would relabel it).
fn same_name_elsewhere(name: &str, dest: &Path, options: &Options) -> Option<String> {
    // `dest` does not exist yet: compare through its parent's canonical path.
    let canon = |p: &Path| match (p.parent(), p.file_name()) {
        (Some(parent), Some(leaf)) => parent
            .canonicalize()
            .unwrap_or_else(|_| parent.to_path_buf())
            .join(leaf),
        _ => p.to_path_buf(),
    };
    let target = canon(dest);
    let shown = |p: &Path| {
        p.strip_prefix(&options.root)
            .map(|r| r.to_string_lossy().replace('\\', "/"))
            .unwrap_or_else(|_| p.display().to_string())
    };
    for root in &options.skills_roots {
        let there = root.join(name);
        if there.symlink_metadata().is_ok() && canon(&there) != target {
            return Some(shown(&there));
        }
    }
    let locked = lock::read(&options.root).ok()?;
    let entry = locked.entries.get(name)?;
    let folder = match &entry.into {
        Some(into) => options.root.join(into),
        None => options
            .skills_roots
            .first()
            .cloned()
            .unwrap_or_else(|| options.root.join("skills")),
    }
    .join(name);
    (canon(&folder) != target).then(|| format!("{} (recorded in skillc.lock, from {})", shown(&folder), entry.source))
}

enum Commit {
    Invalid(Vec<Diagnostic>),
    Exists,
    /// An entry of the source cannot be written as a file (`a` and `a/b`, a name too long):
    /// the source's problem (`IM004`), named by the entry, never by the staging folder.
    Entry(String),
    Io(String),
}

/// What a failed write of the entry `rel` is: the entry's fault when the file system refuses
/// its name or shape, else the machine's. Neither message names the staging folder.
fn entry_error(rel: &str) -> impl Fn(std::io::Error) -> Commit + '_ {
    use std::io::ErrorKind::{AlreadyExists, InvalidFilename, IsADirectory, NotADirectory};
    move |e| match e.kind() {
        NotADirectory | IsADirectory | InvalidFilename | AlreadyExists => Commit::Entry(format!(
            "entry `{}` cannot be written as a file ({e})",
            rel.escape_debug()
        )),
        _ => Commit::Io(format!("writing `{}`: {e}", rel.escape_debug())),
    }
}

fn stage_and_commit(
    files: &[(String, Vec<u8>)],
    executable: &BTreeSet<String>,
    name: &str,
    stage_parent: &Path,
    dest: &Path,
    (limits, fail_on): (Limits, FindingSeverity),
) -> Result<(), Commit> {
    let io = |p: &Path| {
        let p = p.display().to_string();
        move |e: std::io::Error| Commit::Io(format!("{p}: {e}"))
    };
    std::fs::create_dir_all(stage_parent).map_err(io(stage_parent))?;
    let stage = tempfile::Builder::new()
        .prefix("import-")
        .tempdir_in(stage_parent)
        .map_err(io(stage_parent))?;
    let staged = stage.path().join(name);
    for (rel, bytes) in files {
        let path = staged.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(entry_error(rel))?;
        }
        std::fs::write(&path, bytes).map_err(entry_error(rel))?;
        #[cfg(unix)]
        if executable.contains(rel) {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).map_err(entry_error(rel))?;
        }
    }
    #[cfg(not(unix))]
    let _ = executable;
    // Exactly what `skillc check` reports: a permission the claimed tier allowed and
    // `experimental` does not (`SK052`) refuses the import like any other error, since a
    // permission above the tier's ceiling is an error (PRODUCT.md, "GAIA permission grammar
    // and tier ceilings") and an imported skill lands `experimental`.
    let diags = validate_staged(stage.path(), name, limits, fail_on).map_err(Commit::Io)?;
    if diags.iter().any(|d| d.severity == Severity::Error) {
        return Err(Commit::Invalid(diags));
    }
    if dest.symlink_metadata().is_ok() {
        return Err(Commit::Exists);
    }
    std::fs::rename(&staged, dest).map_err(io(dest))
}

/// Checks a staged skill before it enters the skills root: the skill `name` in the folder
/// `stage` goes through `db::load`, `skill::check_skill` exactly as `skillc check` would
/// (parse, fields, limits, links), and the security scan (`scan::scan_skill`), whose findings
/// at or above `fail_on` become `SC000` errors as they reject the skill in `build`. Returns
/// every diagnostic; an error refuses the import.
///
/// This is the one place every imported skill passes before it is written.
///
/// # Errors
/// A message when the staged copy cannot be read back.
pub fn validate_staged(
    stage: &Path,
    name: &str,
    limits: Limits,
    fail_on: FindingSeverity,
) -> Result<Vec<Diagnostic>, String> {
    let found = load::discover(stage, &[PathBuf::from(name)], &[]).map_err(|e| e.to_string())?;
    let mut diags = found.problems;
    let read = load::read(found.skills, limits, true);
    let db = Db::default();
    let settings = Settings::new(&db, Mode::Default, limits);
    for skill in load::to_inputs(&db, read) {
        diags.extend(
            crate::skill::check_skill(&db, skill, settings)
                .diagnostics
                .iter()
                .cloned(),
        );
        let scan = crate::scan::scan_skill(&db, skill, settings);
        for f in scan.findings.iter().filter(|f| f.severity >= fail_on) {
            let pos = crate::diag::Pos {
                offset: 0,
                line: f.line,
                column: f.column,
            };
            diags.push(Diagnostic::new(
                &rules::SC000,
                f.file.clone(),
                crate::diag::Span::at(pos),
                format!(
                    "security finding {} ({}): {}",
                    f.rule.code,
                    f.severity,
                    crate::scan::unicode::escape_invisible(&f.reason)
                ),
            ));
        }
    }
    Ok(diags)
}

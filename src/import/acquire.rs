//! Fetching a source and reading it into memory under the limits: a local folder, SKILL.md
//! or zip, a git repository (the `git` CLI, shallow, bounded in bytes, files and time; a
//! sub-path confined to the checkout), a raw URL or a remote zip (through the download
//! cache). Every path is checked on the way: symbolic links, file names with control
//! characters and the size and count limits refuse a source before anything is written.

use super::*;
use crate::emit::write::is_executable;

/// Fetches and reads a source into memory. `locked` resolves local paths against the
/// project root (as the lock records them) and always fetches remote sources again.
pub(super) fn acquire(source: &str, options: &Options, locked: bool) -> Result<Acquired, Failure> {
    let spec = spec::parse(source).map_err(|e| (&rules::IM001, e.to_string()))?;
    let limits = options.limits;
    let zip_limits = archive::ArchiveLimits {
        entries: limits.files_per_skill,
        entry_bytes: limits.support_file_bytes.max(limits.skill_md_bytes),
        total_bytes: archive::MAX_TOTAL_BYTES,
    };
    let cache = || -> Result<Cache, Failure> {
        let mut c = options.cache.clone().ok_or((
            &rules::IM002,
            "no cache folder for remote sources: set XDG_CACHE_HOME or HOME".to_owned(),
        ))?;
        c.refresh |= locked;
        Ok(c)
    };
    match spec {
        Spec::Local(p) => {
            let p = if locked && p.is_relative() {
                options.root.join(p)
            } else {
                p
            };
            local(&p, limits, zip_limits)
        }
        Spec::Git { url, reference, path } => git(
            &cache()?,
            (&url, reference.as_deref(), &path),
            options.git_bounds,
            limits,
        ),
        Spec::AgentSkills { author, skill } => {
            let Spec::Git { url, reference, path } =
                spec::agentskills_repository(&options.agentskills_base, &author, &skill)
            else {
                return Err((
                    &rules::IM001,
                    "agentskills.io address did not resolve to a repository".into(),
                ));
            };
            let mut a = git(
                &cache()?,
                (&url, reference.as_deref(), &path),
                options.git_bounds,
                limits,
            )?;
            a.resolved = a.resolved.map(|c| format!("{url}@{c}"));
            Ok(a)
        }
        Spec::Raw(url) => {
            let f = fetch::http(&cache()?, &url, limits.skill_md_bytes).map_err(fetch_failure)?;
            let bytes =
                std::fs::read(&f.path).map_err(|e| (&rules::IM002, format!("cache {}: {e}", f.path.display())))?;
            Ok(Acquired {
                files: vec![("SKILL.md".into(), bytes)],
                executable: BTreeSet::new(),
                resolved: None,
                cache: Some(f.cache),
                lone: true,
            })
        }
        Spec::RemoteZip(url) => {
            let f = fetch::http(&cache()?, &url, archive::MAX_TOTAL_BYTES).map_err(fetch_failure)?;
            let bytes =
                std::fs::read(&f.path).map_err(|e| (&rules::IM002, format!("cache {}: {e}", f.path.display())))?;
            let x = archive::read_skill(&bytes, zip_limits).map_err(|e| (&rules::IM004, e.to_string()))?;
            Ok(Acquired {
                files: x.files,
                executable: x.executable,
                resolved: None,
                cache: Some(f.cache),
                lone: false,
            })
        }
    }
}

/// The rule of a failed fetch: `IM002` when the machine failed (network, git, cache: exit
/// status 2), `IM012` when the source does not exist, `IM005` when it is over the bounds.
fn fetch_failure(e: fetch::FetchError) -> Failure {
    let rule = match e.kind {
        fetch::FetchKind::Io => &rules::IM002,
        fetch::FetchKind::Missing => &rules::IM012,
        fetch::FetchKind::TooLarge => &rules::IM005,
    };
    (rule, e.message)
}

/// A git source `(url, reference, sub-path)`: fetched within `bounds`, its sub-path confined
/// to the checkout, read under `limits`.
fn git(
    cache: &Cache,
    (url, reference, path): (&str, Option<&str>, &str),
    bounds: fetch::Bounds,
    limits: Limits,
) -> Result<Acquired, Failure> {
    let f = fetch::git(cache, url, reference, bounds).map_err(fetch_failure)?;
    let dir = confined(&f.path, path)?;
    if !dir.is_dir() {
        return Err((
            &rules::IM003,
            format!(
                "the repository has no folder `{path}` at {}",
                f.resolved.as_deref().unwrap_or("its HEAD")
            ),
        ));
    }
    let (files, executable) =
        read_dir(&dir, limits).map_err(|(rule, msg)| match (rule.code == rules::IM003.code, path.is_empty()) {
            (true, true) => (
                rule,
                "no SKILL.md at the repository root; name the skill's folder as `URL#ref:path`".to_owned(),
            ),
            (true, false) => (rule, format!("no SKILL.md in the repository's `{path}`")),
            _ => (rule, msg),
        })?;
    Ok(Acquired {
        files,
        executable,
        resolved: f.resolved,
        cache: Some(f.cache),
        lone: false,
    })
}

/// The folder `sub` (a `/`-separated path without `..`, [`spec`]) inside the checkout
/// `checkout`, every component resolved: a symbolic link anywhere on the way that leads out
/// of the checkout refuses the source (`IM004`), whether it names a folder outside or climbs
/// with `..`. A link that stays inside is followed, as git would show it.
fn confined(checkout: &Path, sub: &str) -> Result<PathBuf, Failure> {
    if sub.is_empty() {
        return Ok(checkout.to_path_buf());
    }
    let root =
        std::fs::canonicalize(checkout).map_err(|e| (&rules::IM002, format!("cache {}: {e}", checkout.display())))?;
    let mut at = root.clone();
    for (i, part) in sub.split('/').enumerate() {
        let next = at.join(part);
        match std::fs::symlink_metadata(&next) {
            // A missing component: the caller says the folder does not exist.
            Err(_) => return Ok(root.join(sub)),
            Ok(m) if m.file_type().is_symlink() => {
                let resolved = std::fs::canonicalize(&next).ok().filter(|r| r.starts_with(&root));
                let Some(resolved) = resolved else {
                    let shown: Vec<&str> = sub.split('/').take(i + 1).collect();
                    return Err((
                        &rules::IM004,
                        format!(
                            "`{}` in the repository is a symbolic link leading out of it; imports never follow links out of a checkout",
                            shown.join("/")
                        ),
                    ));
                };
                at = resolved;
            }
            Ok(_) => at = next,
        }
    }
    Ok(at)
}

fn local(p: &Path, limits: Limits, zip_limits: archive::ArchiveLimits) -> Result<Acquired, Failure> {
    let meta = std::fs::metadata(p).map_err(|e| {
        let why = if e.kind() == std::io::ErrorKind::NotFound {
            "no such file or folder".to_owned()
        } else {
            e.to_string()
        };
        (&rules::IM001, why)
    })?;
    let read_capped = |cap: u64| -> Result<Vec<u8>, Failure> {
        // A FIFO or a device would block or never end: only regular files are read.
        if !meta.is_file() {
            return Err((
                &rules::IM001,
                format!("{} is not a regular file (a FIFO, socket or device)", p.display()),
            ));
        }
        if meta.len() > cap {
            return Err((
                &rules::IM005,
                format!("{} is {} bytes; the limit is {cap} bytes", p.display(), meta.len()),
            ));
        }
        std::fs::read(p).map_err(|e| (&rules::IM001, format!("{}: {e}", p.display())))
    };
    let file_name = p
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if meta.is_dir() {
        let (files, executable) = read_dir(p, limits)?;
        Ok(Acquired {
            files,
            executable,
            resolved: None,
            cache: None,
            lone: false,
        })
    } else if file_name.ends_with(".zip") {
        let bytes = read_capped(archive::MAX_TOTAL_BYTES)?;
        let x = archive::read_skill(&bytes, zip_limits).map_err(|e| (&rules::IM004, e.to_string()))?;
        Ok(Acquired {
            files: x.files,
            executable: x.executable,
            resolved: None,
            cache: None,
            lone: false,
        })
    } else if file_name.ends_with(".md") {
        let bytes = read_capped(limits.skill_md_bytes)?;
        Ok(Acquired {
            files: vec![("SKILL.md".into(), bytes)],
            executable: BTreeSet::new(),
            resolved: None,
            cache: None,
            lone: true,
        })
    } else {
        Err((
            &rules::IM001,
            format!("{} is not a skill folder, a SKILL.md or a .zip archive", p.display()),
        ))
    }
}

/// Reads a skill folder into memory: every regular file (version-control and dependency
/// folders skipped, as `db::load` does), under the limits. A symbolic link refuses the source.
/// Returns the files and the paths of those with an execute bit.
pub(super) fn read_dir(dir: &Path, limits: Limits) -> Result<Files, Failure> {
    let mut files = Vec::new();
    let mut executable = BTreeSet::new();
    let walker = walkdir::WalkDir::new(dir)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            e.depth() == 0
                || !e.file_type().is_dir()
                || !crate::model::SKIPPED_DIRS.contains(&e.file_name().to_string_lossy().as_ref())
        });
    for entry in walker {
        let entry = entry.map_err(|e| (&rules::IM001, e.to_string()))?;
        if entry.file_type().is_dir() {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(dir)
            .unwrap_or(entry.path())
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        if crate::skill::control_character(&rel).is_some() {
            // A name that breaks every listing of the catalog (`SK045`): refused before writing.
            return Err((
                &rules::IM004,
                format!(
                    "`{}` has a newline or another control character in its name",
                    rel.escape_debug()
                ),
            ));
        }
        if entry.path_is_symlink() {
            return Err((
                &rules::IM004,
                format!("`{rel}` is a symbolic link; imports copy regular files only"),
            ));
        }
        if !entry.file_type().is_file() {
            return Err((&rules::IM004, format!("`{rel}` is not a regular file")));
        }
        if files.len() >= limits.files_per_skill {
            return Err((
                &rules::IM005,
                format!(
                    "the skill holds more than {} files (limit `files_per_skill`)",
                    limits.files_per_skill
                ),
            ));
        }
        let cap = if rel == "SKILL.md" {
            limits.skill_md_bytes
        } else {
            limits.support_file_bytes
        };
        let meta = entry.metadata().ok();
        let size = meta.as_ref().map(|m| m.len()).unwrap_or(0);
        if meta.as_ref().is_some_and(is_executable) {
            executable.insert(rel.clone());
        }
        if size > cap {
            return Err((
                &rules::IM005,
                format!("`{rel}` is {size} bytes; the limit is {cap} bytes"),
            ));
        }
        let bytes = std::fs::read(entry.path()).map_err(|e| (&rules::IM001, format!("{rel}: {e}")))?;
        files.push((rel, bytes));
    }
    if !files.iter().any(|(p, _)| p == "SKILL.md" || p == "skill.md") {
        return Err((&rules::IM003, format!("no SKILL.md in {}", dir.display())));
    }
    Ok((files, executable))
}

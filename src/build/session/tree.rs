//! The `out/` tree of a build and writing it: every file with its digest ([`Plan`], bytes
//! produced only for the files to write), what to write, remove and leave alone
//! ([`plan_writes`], pure), and the writes themselves — in parallel, the catalog last.

use crate::emit::write::is_executable;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rayon::prelude::*;

use super::stamp::{Job, Stamped, stamp_manifest};
use super::{Event, Row, Sink};
use crate::build::store::{self, OutputState};
use crate::build::{Generated, SkillUnit};
use crate::emit::write::{self, EmitError};
use crate::emit::{self, CATALOG, CATALOG_SIG};
use crate::model::Level;
use crate::util::sha256;

/// Every file of `out/` by path relative to it.
pub(super) type Plan<'a> = HashMap<String, Planned<'a>>;

/// Where the bytes of a planned file come from.
pub(super) enum Payload<'a> {
    /// A skill's file, shared with the database.
    Shared(Arc<[u8]>),
    /// A text the build holds.
    Text(&'a str),
    /// A manifest whose signature is reused: rendered (with this time) only if it must be
    /// written.
    Manifest(&'a SkillUnit, &'a Generated, &'a str),
    /// A wrapper, rendered only if it must be written.
    Wrapper(&'a SkillUnit, &'a Generated),
}

impl Payload<'_> {
    /// The size when known without rendering (0 for what is rendered when written).
    fn len(&self) -> usize {
        match self {
            Payload::Shared(b) => b.len(),
            Payload::Text(t) => t.len(),
            Payload::Manifest(..) | Payload::Wrapper(..) => 0,
        }
    }
}

/// A file of the plan: its digest, mode and bytes.
pub(super) struct Planned<'a> {
    /// Hex SHA-256 of its bytes.
    pub sha256: String,
    /// Written with the executable bit.
    pub executable: bool,
    /// The bytes.
    pub payload: Payload<'a>,
}

impl<'a> Planned<'a> {
    /// A text whose digest is known.
    pub fn text(text: &'a str, sha256: String, executable: bool) -> Planned<'a> {
        Planned {
            sha256,
            executable,
            payload: Payload::Text(text),
        }
    }
}

/// Retained skill files that get the executable bit: scripts.
pub fn is_script(rel: &str) -> bool {
    rel.starts_with("scripts/") && (rel.ends_with(".py") || rel.ends_with(".sh") || !rel.contains('.'))
}

/// The four files of every executor.
pub(super) fn plan_executors<'a>(plan: &mut Plan<'a>, jobs: &'a [Job<'a>], stamped: &'a [Stamped]) {
    for (job, st) in jobs.iter().zip(stamped) {
        let (unit, g) = (job.unit, job.generated);
        let e = &g.executor;
        let dir = emit::executor_dir(&e.skill, &e.name);
        plan.insert(
            format!("{dir}/{}.py", e.name),
            Planned {
                sha256: g.digests.wrapper.clone(),
                executable: true,
                payload: Payload::Wrapper(unit, g),
            },
        );
        plan.insert(
            format!("{dir}/manifest.toml"),
            Planned {
                sha256: st.state.manifest_sha256.clone(),
                executable: false,
                payload: match &st.manifest {
                    Some(m) => Payload::Text(m.as_str()),
                    None => Payload::Manifest(unit, g, &st.state.imported_at),
                },
            },
        );
        plan.insert(
            format!("{dir}/manifest.toml.sig"),
            Planned::text(&st.state.sig, sha256(st.state.sig.as_bytes()), false),
        );
        plan.insert(
            format!("{dir}/manifest.lang_state.json"),
            Planned::text(&e.lang_state, g.digests.lang_state.clone(), false),
        );
    }
}

/// The retained files of every skill in the catalog (`skills/<name>/…`).
pub(super) fn plan_skill_files<'a>(plan: &mut Plan<'a>, rows: &'a [Row<'a>]) {
    for r in rows {
        let (Some(info), true) = (&r.unit.info, r.output.accepted) else {
            continue;
        };
        for f in &r.output.files {
            plan.insert(
                format!("skills/{}/{}", info.name, f.path),
                Planned {
                    sha256: f.sha256.clone(),
                    executable: is_script(&f.path),
                    payload: Payload::Shared(f.bytes.clone()),
                },
            );
        }
    }
}

/// A regular file of `out/` as a fresh process finds it (it checks `out/` rather than trust
/// the store).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct OnDisk {
    /// Bytes.
    pub size: u64,
    /// Modification time, ns since the epoch.
    pub mtime_ns: i128,
    /// Has an executable bit.
    pub executable: bool,
}

/// Every file under `out/`: its stat, `None` when it is not a regular file that could be
/// read.
pub(super) type Listing = BTreeMap<String, Option<OnDisk>>;

/// What a build does to `out/`.
pub(super) struct Writes<'p, 'a> {
    /// Files to write: new, changed, or not as the store remembers them on disk.
    pub write: Vec<(&'p String, &'p Planned<'a>)>,
    /// Files to remove: written by the previous build and no longer planned.
    pub remove: Vec<String>,
    /// Files skillc did not write: reported and left alone.
    pub foreign: Vec<String>,
}

/// Decides what to write, remove and leave alone, from the plan, what the previous build
/// wrote (`previous`, from `.skillc/state.json`) and, in a fresh process, what `out/` holds
/// (`listing`; `None` trusts the store, as a watch session does after its first build).
///
/// A planned file is written when the previous build did not write it with the same digest
/// and mode, or when the listing lacks it or shows it changed (another size, mode or
/// modification time). Only files the previous build wrote are removed. When no previous
/// build is known at all, files of the catalog's own shape are taken as skillc's and removed
/// (the catalog can be repaired); everything else is foreign.
pub(super) fn plan_writes<'p, 'a>(
    plan: &'p Plan<'a>,
    previous: &BTreeMap<String, OutputState>,
    listing: Option<&Listing>,
) -> Writes<'p, 'a> {
    let write = plan
        .par_iter()
        .filter(|(path, p)| {
            let Some(prev) = previous.get(*path) else {
                return true;
            };
            if prev.sha256 != p.sha256 || prev.executable != p.executable {
                return true;
            }
            match listing {
                None => false,
                Some(l) => !l.get(*path).is_some_and(|disk| on_disk_matches(disk.as_ref(), prev)),
            }
        })
        .collect();
    let mut remove: Vec<String> = previous
        .keys()
        .filter(|p| !plan.contains_key(*p))
        .filter(|p| listing.is_none_or(|l| l.contains_key(*p)))
        .cloned()
        .collect();
    let mut foreign = Vec::new();
    for p in listing.into_iter().flat_map(BTreeMap::keys) {
        if plan.contains_key(p) || previous.contains_key(p) {
            continue;
        }
        if previous.is_empty() && write::in_contract(p) {
            remove.push(p.clone());
        } else {
            foreign.push(p.clone());
        }
    }
    Writes { write, remove, foreign }
}

/// Whether a file on disk is the one the store remembers writing. A file edited in `out/`
/// since has another time, even at the same size.
pub(super) fn on_disk_matches(disk: Option<&OnDisk>, prev: &OutputState) -> bool {
    let Some(d) = disk else { return false };
    if prev.mtime_ns != 0 && d.mtime_ns != prev.mtime_ns {
        return false;
    }
    d.size == prev.size && d.executable == prev.executable
}

/// Lists `out/` with the stat of every file (in parallel). A symbolic link refuses the whole
/// folder: skillc never writes through links.
///
/// # Errors
/// [`EmitError::Io`] when `out/` cannot be listed; [`EmitError::Symlink`] for a link.
pub(super) fn list_out(out_dir: &Path) -> Result<Listing, EmitError> {
    let listed = write::list_files(out_dir).map_err(|e| EmitError::Io {
        path: out_dir.display().to_string(),
        message: e.to_string(),
    })?;
    if let Some(link) = listed.iter().find(|l| l.symlink) {
        return Err(EmitError::Symlink(out_dir.join(&link.path).display().to_string()));
    }
    Ok(listed
        .into_par_iter()
        .map(|l| {
            let disk = std::fs::symlink_metadata(&l.full)
                .ok()
                .filter(std::fs::Metadata::is_file)
                .and_then(|m| {
                    let (size, mtime_ns) = store::stat(&l.full)?;
                    Some(OnDisk {
                        size,
                        mtime_ns,
                        executable: is_executable(&m),
                    })
                });
            (l.path, disk)
        })
        .collect())
}

/// A file written: its size and the modification time it got.
#[derive(Clone, Copy, Debug)]
pub(super) struct Written {
    /// Bytes.
    pub size: u64,
    /// Nanoseconds since the epoch (0 when unknown).
    pub mtime_ns: i128,
}

/// Writes `writes.write` — folders first, then the files in parallel (in path order, so that
/// each worker fills whole folders), the catalog last — and removes `writes.remove`.
/// Returns what each written file became on disk.
///
/// # Errors
/// The first write or removal that failed.
pub(super) fn write_out<'p>(
    out_dir: &Path,
    writes: &Writes<'p, '_>,
    skip: &[Level],
    sink: Sink<'_>,
) -> Result<HashMap<&'p str, Written>, EmitError> {
    let last = [CATALOG_SIG, CATALOG];
    type Item<'x, 'p, 'a> = &'x (&'p String, &'p Planned<'a>);
    let (catalog_files, mut rest): (Vec<Item<'_, 'p, '_>>, Vec<Item<'_, 'p, '_>>) =
        writes.write.iter().partition(|(p, _)| last.contains(&p.as_str()));
    rest.par_sort_unstable_by(|a, b| a.0.cmp(b.0));
    let dirs: BTreeSet<PathBuf> = writes
        .write
        .iter()
        .filter_map(|(p, _)| Path::new(p.as_str()).parent().map(|d| out_dir.join(d)))
        .collect();
    write::create_dirs(out_dir, &dirs)?;
    let progress = Mutex::new(&mut *sink);
    let mut written: HashMap<&str, Written> = rest
        .par_chunks(256)
        .map(|chunk| -> Result<Vec<(&str, Written)>, EmitError> {
            let mut v = Vec::with_capacity(chunk.len());
            for (path, p) in chunk {
                v.push((path.as_str(), write_planned(out_dir, path, p, skip)?));
            }
            if let Ok(mut s) = progress.lock() {
                s(Event::Progress { n: chunk.len() });
            }
            Ok(v)
        })
        .collect::<Result<Vec<_>, EmitError>>()?
        .into_iter()
        .flatten()
        .collect();
    for path in last {
        if let Some((path, p)) = catalog_files.iter().find(|(x, _)| x.as_str() == path) {
            written.insert(path.as_str(), write_planned(out_dir, path, p, skip)?);
            sink(Event::Progress { n: 1 });
        }
    }
    write::remove_files(out_dir, &writes.remove)?;
    Ok(written)
}

/// What the store records of the files written.
pub(super) fn written_states(writes: &Writes<'_, '_>, written: &HashMap<&str, Written>) -> Vec<(String, OutputState)> {
    writes
        .write
        .iter()
        .map(|(path, p)| {
            let w = written.get(path.as_str());
            let state = OutputState {
                sha256: p.sha256.clone(),
                size: w.map_or_else(|| p.payload.len() as u64, |w| w.size),
                executable: p.executable,
                mtime_ns: w.map_or(0, |w| w.mtime_ns),
            };
            ((*path).clone(), state)
        })
        .collect()
}

/// The executors with a file written (looked up once, not a scan of the writes per name).
pub(super) fn touched_executors<'p>(writes: &Writes<'p, '_>) -> HashSet<&'p str> {
    writes.write.iter().filter_map(|(p, _)| executor_of(p)).collect()
}

/// The executor name of a path `executors/<skill>/<name>/…`.
fn executor_of(path: &str) -> Option<&str> {
    path.strip_prefix("executors/")?.split('/').nth(1)
}

/// Writes one planned file, rendering what was kept as a recipe.
fn write_planned(out_dir: &Path, path: &str, p: &Planned<'_>, skip: &[Level]) -> Result<Written, EmitError> {
    let mode = if p.executable { 0o755 } else { 0o644 };
    let full = out_dir.join(path);
    let failed = |message: &str| EmitError::Io {
        path: full.display().to_string(),
        message: message.into(),
    };
    let bytes: std::borrow::Cow<'_, [u8]> = match &p.payload {
        Payload::Shared(b) => std::borrow::Cow::Borrowed(b),
        Payload::Text(t) => std::borrow::Cow::Borrowed(t.as_bytes()),
        Payload::Manifest(unit, g, imported_at) => {
            // The stored signature vouches for this manifest: render it with the stored time.
            let m = stamp_manifest(unit, g, imported_at, skip);
            if sha256(m.as_bytes()) != p.sha256 {
                return Err(failed(
                    "the stored signature does not match the manifest; remove .skillc/state.json and build again",
                ));
            }
            std::borrow::Cow::Owned(m.into_bytes())
        }
        Payload::Wrapper(unit, g) => {
            // Rendering is deterministic: the same bytes as when generated and hashed.
            let w = match (unit.translation.plans.get(g.plan), unit.info.as_ref()) {
                (Some(plan), Some(info)) => plan.name().map(|name| g.executor.render_wrapper(plan, name, info)),
                _ => None,
            };
            match w {
                Some(w) => std::borrow::Cow::Owned(w.into_bytes()),
                None => {
                    return Err(failed(
                        "internal: the wrapper rendered differently from the one generated",
                    ));
                }
            }
        }
    };
    write::write_file(&full, &bytes, mode)?;
    // The time it got, so that a later edit of the file in `out/` is noticed.
    let mtime_ns = store::stat(&full).map_or(0, |(_, t)| t);
    Ok(Written {
        size: bytes.len() as u64,
        mtime_ns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(bytes: &[u8], executable: bool, mtime_ns: i128) -> OutputState {
        OutputState {
            sha256: sha256(bytes),
            size: bytes.len() as u64,
            executable,
            mtime_ns,
        }
    }

    fn on_disk(bytes: &[u8], executable: bool, mtime_ns: i128) -> Option<OnDisk> {
        Some(OnDisk {
            size: bytes.len() as u64,
            mtime_ns,
            executable,
        })
    }

    fn sorted(v: Vec<(&String, &Planned<'_>)>) -> Vec<String> {
        let mut v: Vec<String> = v.into_iter().map(|(p, _)| p.clone()).collect();
        v.sort();
        v
    }

    fn plan(files: &[(&str, &'static str, bool)]) -> Plan<'static> {
        files
            .iter()
            .map(|(p, text, x)| ((*p).to_owned(), Planned::text(text, sha256(text.as_bytes()), *x)))
            .collect()
    }

    #[test]
    fn an_unchanged_plan_writes_nothing_and_a_changed_file_is_written() {
        let plan = plan(&[("report.json", "{}", false), ("skills/a/run.sh", "echo", true)]);
        let previous: BTreeMap<String, OutputState> = [
            ("report.json".to_owned(), state(b"{}", false, 7)),
            ("skills/a/run.sh".to_owned(), state(b"echo", true, 7)),
        ]
        .into();
        let w = plan_writes(&plan, &previous, None);
        assert!(w.write.is_empty() && w.remove.is_empty() && w.foreign.is_empty());
        // Another digest, or another mode, is written.
        let mut changed = previous.clone();
        changed.insert("report.json".into(), state(b"[]", false, 7));
        changed.insert("skills/a/run.sh".into(), state(b"echo", false, 7));
        let w = plan_writes(&plan, &changed, None);
        assert_eq!(sorted(w.write), ["report.json", "skills/a/run.sh"]);
    }

    #[test]
    fn a_fresh_process_rewrites_what_the_disk_lacks_or_changed() {
        let plan = plan(&[
            ("a", "aa", false),
            ("b", "bb", false),
            ("c", "cc", false),
            ("d", "dd", true),
        ]);
        let previous: BTreeMap<String, OutputState> = ["a", "b", "c", "d"]
            .iter()
            .map(|p| {
                let bytes = p.repeat(2);
                ((*p).to_owned(), state(bytes.as_bytes(), *p == "d", 5))
            })
            .collect();
        let listing: Listing = [
            ("a".to_owned(), on_disk(b"aa", false, 5)),
            // Edited in place: same size, another time.
            ("b".to_owned(), on_disk(b"bb", false, 6)),
            // Not a regular file any more.
            ("c".to_owned(), None),
            // Lost its executable bit.
            ("d".to_owned(), on_disk(b"dd", false, 5)),
        ]
        .into();
        let w = plan_writes(&plan, &previous, Some(&listing));
        assert_eq!(sorted(w.write), ["b", "c", "d"]);
        // Missing from disk: written again.
        let w = plan_writes(&plan, &previous, Some(&Listing::new()));
        assert_eq!(sorted(w.write), ["a", "b", "c", "d"]);
    }

    #[test]
    fn only_what_skillc_wrote_is_removed_and_the_rest_is_foreign() {
        let plan = plan(&[("catalog.toml", "x", false)]);
        let previous: BTreeMap<String, OutputState> = [
            ("catalog.toml".to_owned(), state(b"x", false, 1)),
            ("executors/s/gone/manifest.toml".to_owned(), state(b"m", false, 1)),
            ("skills/s/already-deleted.md".to_owned(), state(b"m", false, 1)),
        ]
        .into();
        let listing: Listing = [
            ("catalog.toml".to_owned(), on_disk(b"x", false, 1)),
            ("executors/s/gone/manifest.toml".to_owned(), on_disk(b"m", false, 1)),
            ("notes.txt".to_owned(), on_disk(b"n", false, 1)),
            ("skills/s/added-by-hand.md".to_owned(), on_disk(b"h", false, 1)),
        ]
        .into();
        let w = plan_writes(&plan, &previous, Some(&listing));
        assert!(w.write.is_empty());
        // A file already gone from disk is not removed again.
        assert_eq!(w.remove, ["executors/s/gone/manifest.toml"]);
        assert_eq!(w.foreign, ["notes.txt", "skills/s/added-by-hand.md"]);
        // A watch session trusts the store: it removes without listing.
        let w = plan_writes(&plan, &previous, None);
        assert_eq!(
            w.remove,
            ["executors/s/gone/manifest.toml", "skills/s/already-deleted.md"]
        );
    }

    #[test]
    fn without_a_record_the_catalog_shaped_files_are_taken_as_skillcs() {
        let plan = plan(&[("catalog.toml", "x", false)]);
        let listing: Listing = [
            ("catalog.toml".to_owned(), on_disk(b"old", false, 1)),
            ("executors/s/e/manifest.toml".to_owned(), on_disk(b"m", false, 1)),
            ("README.md".to_owned(), on_disk(b"r", false, 1)),
        ]
        .into();
        let w = plan_writes(&plan, &BTreeMap::new(), Some(&listing));
        assert_eq!(sorted(w.write), ["catalog.toml"]);
        assert_eq!(w.remove, ["executors/s/e/manifest.toml"]);
        assert_eq!(w.foreign, ["README.md"]);
    }

    #[test]
    fn scripts_are_executable_and_executor_paths_name_their_executor() {
        assert!(is_script("scripts/run.py") && is_script("scripts/tool") && !is_script("scripts/data.json"));
        assert!(!is_script("references/run.py"));
        assert_eq!(executor_of("executors/s/list_x_s/manifest.toml"), Some("list_x_s"));
        assert_eq!(executor_of("skills/s/SKILL.md"), None);
    }
}

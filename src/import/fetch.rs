//! Fetching remote sources (IO): shallow git checkouts with the `git` CLI, one file over
//! HTTP(S) with `ureq` (rustls), and the cache under `$XDG_CACHE_HOME/skillc` that both go
//! through (seed 000, "Supported sources": remote sources are cached for at most seven days;
//! an operator can force a fresh fetch).
//!
//! Cache layout: `<cache>/<kind>/<key>/` where `kind` is `git` or `http`, `key` is the first
//! 32 hex digits of the SHA-256 of the URL (and ref), holding `entry.json`
//! (`{"source", "fetched_at", "resolved"}`; `fetched_at` in Unix seconds) and the payload
//! (`tree/` for git, `body` for HTTP). Entries are replaced whole by rename.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// How much a git fetch may bring in: the bounds HTTP and zip imports have too
/// (`pipeline.toml` `[import] max_repository_bytes`, `max_repository_files`,
/// `timeout_seconds`; their defaults are in `config`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Most bytes: of the fetched objects while they arrive, and of the commit's files
    /// (uncompressed, as `git ls-tree -l` sizes them) before anything is checked out.
    pub max_bytes: u64,
    /// Most files (blobs and links) in the commit.
    pub max_files: usize,
    /// The whole fetch's time limit.
    pub timeout: Duration,
}

/// Seconds an HTTP request may take in total.
pub const HTTP_TIMEOUT_SECS: u64 = 60;
/// Seconds to wait for an HTTP connection.
pub const HTTP_CONNECT_TIMEOUT_SECS: u64 = 10;

/// A fetch that failed, with a message for the user.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct FetchError {
    /// What went wrong.
    pub message: String,
    /// Whose fault it is.
    pub kind: FetchKind,
}

/// Why a fetch failed: the machine (exit status 2), or the source (exit status 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FetchKind {
    /// The network, git, a server error or the cache: the source may be fine (`IM002`).
    Io,
    /// The repository, ref or URL does not exist, or the server refused it (HTTP 4xx).
    Missing,
    /// The source is over the bounds (bytes, files).
    TooLarge,
}

impl FetchError {
    /// A failure of the machine: network, git, cache.
    pub fn io(message: impl Into<String>) -> FetchError {
        FetchError {
            message: message.into(),
            kind: FetchKind::Io,
        }
    }

    /// A source that does not exist.
    pub fn missing(message: impl Into<String>) -> FetchError {
        FetchError {
            message: message.into(),
            kind: FetchKind::Missing,
        }
    }

    /// A source over the bounds.
    pub fn too_large(message: impl Into<String>) -> FetchError {
        FetchError {
            message: message.into(),
            kind: FetchKind::TooLarge,
        }
    }
}

/// git's messages for a repository or ref that does not exist (not for a network failure).
const GIT_MISSING: &[&str] = &[
    "does not appear to be a git repository",
    "couldn't find remote ref",
    "not found",
    "does not exist",
    "not our ref",
    "invalid refspec",
];

/// How the cache is used.
#[derive(Clone, Debug)]
pub struct Cache {
    /// The cache folder (`$XDG_CACHE_HOME/skillc`, else `~/.cache/skillc`).
    pub dir: PathBuf,
    /// Entries older than this many seconds are fetched again.
    pub max_age_secs: u64,
    /// Fetch again whatever the age (`--refresh`, `--locked`).
    pub refresh: bool,
    /// The current time in Unix seconds (the wall clock, never `SOURCE_DATE_EPOCH`).
    pub now: u64,
}

/// Whether a fetch came from the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CacheUse {
    /// Served from a fresh cache entry.
    Hit,
    /// Not cached yet: fetched.
    Miss,
    /// The entry was older than the maximum age: fetched again.
    Expired,
    /// Fetched again on request.
    Refreshed,
}

impl CacheUse {
    /// `hit`, `miss`, `expired`, `refreshed`.
    pub fn as_str(self) -> &'static str {
        match self {
            CacheUse::Hit => "hit",
            CacheUse::Miss => "miss",
            CacheUse::Expired => "expired",
            CacheUse::Refreshed => "refreshed",
        }
    }
}

#[derive(Serialize, Deserialize)]
struct EntryMeta {
    source: String,
    fetched_at: u64,
    resolved: Option<String>,
}

/// A fetched payload in the cache.
#[derive(Clone, Debug)]
pub struct Fetched {
    /// The payload: the checkout folder (git) or the body file (HTTP).
    pub path: PathBuf,
    /// The git commit, when known.
    pub resolved: Option<String>,
    /// How the cache was used.
    pub cache: CacheUse,
}

/// The default cache folder: `$XDG_CACHE_HOME/skillc` when that is an absolute path, else
/// `$HOME/.cache/skillc` (XDG Base Directory Specification); `None` without either.
pub fn default_cache_dir() -> Option<PathBuf> {
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from)
        && x.is_absolute()
    {
        return Some(x.join("skillc"));
    }
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
        .map(|h| h.join(".cache").join("skillc"))
}

fn key_of(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0u8]);
    }
    crate::util::hex(&h.finalize()[..16])
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> FetchError + '_ {
    move |e| FetchError::io(format!("cache {}: {e}", path.display()))
}

/// Looks an entry up; `Some` when it is fresh enough to use, else the reason to fetch.
fn lookup(cache: &Cache, entry: &Path, payload: &str) -> Result<Fetched, CacheUse> {
    let meta: Option<EntryMeta> = std::fs::read(entry.join("entry.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let Some(meta) = meta.filter(|_| entry.join(payload).exists()) else {
        return Err(CacheUse::Miss);
    };
    if cache.refresh {
        return Err(CacheUse::Refreshed);
    }
    if cache.now.saturating_sub(meta.fetched_at) >= cache.max_age_secs {
        return Err(CacheUse::Expired);
    }
    Ok(Fetched {
        path: entry.join(payload),
        resolved: meta.resolved,
        cache: CacheUse::Hit,
    })
}

/// Fills a new entry with `fill(staging_payload_path)` and moves it into place.
fn store(
    cache: &Cache,
    entry: &Path,
    payload: &str,
    source: &str,
    how: CacheUse,
    fill: impl FnOnce(&Path) -> Result<Option<String>, FetchError>,
) -> Result<Fetched, FetchError> {
    let parent = entry.parent().unwrap_or(&cache.dir);
    std::fs::create_dir_all(parent).map_err(io(parent))?;
    let staging = tempfile::Builder::new()
        .prefix(".fetch-")
        .tempdir_in(parent)
        .map_err(io(parent))?;
    let resolved = fill(&staging.path().join(payload))?;
    let meta = EntryMeta {
        source: source.to_owned(),
        fetched_at: cache.now,
        resolved: resolved.clone(),
    };
    let json = serde_json::to_vec_pretty(&meta).map_err(|e| FetchError::io(e.to_string()))?;
    std::fs::write(staging.path().join("entry.json"), json).map_err(io(staging.path()))?;
    // Replace the old entry: move it aside, move the new one in, drop the old one.
    if entry.exists() {
        let old = tempfile::Builder::new()
            .prefix(".old-")
            .tempdir_in(parent)
            .map_err(io(parent))?;
        std::fs::rename(entry, old.path().join("e")).map_err(io(entry))?;
    }
    let kept = staging.keep();
    std::fs::rename(&kept, entry).map_err(io(entry))?;
    Ok(Fetched {
        path: entry.join(payload),
        resolved,
        cache: how,
    })
}

/// A shallow checkout of `url` at `reference` (the remote's `HEAD` when `None`), through the
/// cache, within `bounds`. The checkout has no `.git` folder; the commit is in
/// [`Fetched::resolved`]. A fetch over the bounds leaves nothing in the cache.
///
/// # Errors
/// [`FetchError`] when git is missing, the repository or ref does not exist, the repository
/// is over `bounds` (bytes, files or time), or the cache cannot be written.
pub fn git(cache: &Cache, url: &str, reference: Option<&str>, bounds: Bounds) -> Result<Fetched, FetchError> {
    let entry = cache.dir.join("git").join(key_of(&[url, reference.unwrap_or("")]));
    let how = match lookup(cache, &entry, "tree") {
        Ok(hit) => return Ok(hit),
        Err(how) => how,
    };
    let source = match reference {
        Some(r) => format!("{url}#{r}"),
        None => url.to_owned(),
    };
    store(cache, &entry, "tree", &source, how, |tree| {
        checkout(url, reference, tree, bounds).map(Some)
    })
}

/// What one git command may use: the time left of the fetch, and the folder whose size is
/// watched while it runs (with its limit).
struct Budget<'a> {
    deadline: Instant,
    limit: Duration,
    watch: Option<(&'a Path, u64)>,
}

fn checkout(url: &str, reference: Option<&str>, dest: &Path, bounds: Bounds) -> Result<String, FetchError> {
    std::fs::create_dir_all(dest).map_err(io(dest))?;
    let dest_str = dest.to_string_lossy().into_owned();
    let deadline = Instant::now() + bounds.timeout;
    let budget = |watch| Budget {
        deadline,
        limit: bounds.timeout,
        watch,
    };
    run_git(&["init", "-q", &dest_str], None, &budget(None))?;
    let target = reference.unwrap_or("HEAD");
    // The objects are counted as they arrive: a huge repository is stopped mid-fetch.
    run_git(
        &["fetch", "-q", "--depth", "1", "--no-tags", "--", url, target],
        Some(dest),
        &budget(Some((dest, bounds.max_bytes))),
    )
    .map_err(|e| FetchError {
        message: format!("cannot fetch `{target}` from {url}: {}", e.message),
        kind: e.kind,
    })?;
    // The commit's files are counted and sized before any is written (a small pack can
    // expand to a huge file).
    let listing = run_git(&["ls-tree", "-r", "-l", "-z", "FETCH_HEAD"], Some(dest), &budget(None))?;
    let (files, bytes) = tree_size(&listing);
    if files > bounds.max_files {
        return Err(FetchError::too_large(format!(
            "the repository holds {files} files; the limit is {} (`[import] max_repository_files`)",
            bounds.max_files
        )));
    }
    if bytes > bounds.max_bytes {
        return Err(FetchError::too_large(format!(
            "the repository's files take {bytes} bytes; the limit is {} (`[import] max_repository_bytes`)",
            bounds.max_bytes
        )));
    }
    run_git(&["checkout", "-q", "--detach", "FETCH_HEAD"], Some(dest), &budget(None))?;
    let commit = run_git(&["rev-parse", "HEAD"], Some(dest), &budget(None))?
        .trim()
        .to_owned();
    let dot_git = dest.join(".git");
    std::fs::remove_dir_all(&dot_git).map_err(io(&dot_git))?;
    Ok(commit)
}

/// The number of files and their total size in bytes of `git ls-tree -r -l -z` output
/// (`<mode> <type> <object> <size>\t<path>\0` per entry; a submodule's size is `-` and counts
/// as a file of no bytes).
fn tree_size(listing: &str) -> (usize, u64) {
    let mut files = 0;
    let mut bytes: u64 = 0;
    for entry in listing.split('\0').filter(|e| !e.is_empty()) {
        let meta = entry.split('\t').next().unwrap_or_default();
        files += 1;
        let size = meta
            .split_whitespace()
            .nth(3)
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(0);
        bytes = bytes.saturating_add(size);
    }
    (files, bytes)
}

/// The bytes of the regular files under `dir` (what a fetch has written so far).
fn dir_bytes(dir: &Path) -> u64 {
    walkdir::WalkDir::new(dir)
        .follow_links(false)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .fold(0, u64::saturating_add)
}

/// Runs `git` with hooks, prompts and unsafe transports disabled, within `budget`; returns
/// standard output.
fn run_git(args: &[&str], dir: Option<&Path>, budget: &Budget<'_>) -> Result<String, FetchError> {
    let mut cmd = Command::new("git");
    cmd.args([
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        "protocol.ext.allow=never",
        "-c",
        "advice.detachedHead=false",
        "-c",
        "init.defaultBranch=main",
        "-c",
        "core.symlinks=true",
    ])
    .args(args)
    .env("GIT_TERMINAL_PROMPT", "0")
    .env("GIT_CONFIG_NOSYSTEM", "1")
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    // Its own process group: a stop ends the helpers git starts (upload-pack, index-pack).
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        cmd.process_group(0);
    }
    let child = cmd.spawn().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            FetchError::io("git is not installed (or not on PATH): install git to import from repositories")
        } else {
            FetchError::io(format!("cannot run git: {e}"))
        }
    })?;
    let output = wait_with_timeout(child, budget)?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        let stderr = String::from_utf8_lossy(&output.stderr);
        // git's first `fatal:`/`error:` line says what went wrong; the lines after it advise.
        let lines: Vec<&str> = stderr.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        let line = lines
            .iter()
            .find(|l| l.starts_with("fatal: ") || l.starts_with("error: "))
            .or(lines.last())
            .copied()
            .unwrap_or("git failed");
        let line = line
            .strip_prefix("fatal: ")
            .or_else(|| line.strip_prefix("error: "))
            .unwrap_or(line);
        if GIT_MISSING.iter().any(|m| line.contains(m)) {
            Err(FetchError::missing(line))
        } else {
            Err(FetchError::io(line))
        }
    }
}

/// Kills `child` and its process group (`kill -KILL -PGID`; the child alone when `kill`
/// cannot be run). The build's process runner does the same for L5 (`build::exec`).
fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        let group = format!("-{}", child.id());
        let killed = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if killed {
            return;
        }
    }
    let _ = child.kill();
}

fn wait_with_timeout(mut child: std::process::Child, budget: &Budget<'_>) -> Result<std::process::Output, FetchError> {
    let mut measured = Instant::now();
    // Drain the pipes on threads so that a chatty git cannot block on a full pipe.
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    );
    let stop = |child: &mut std::process::Child, why: FetchError| {
        kill_group(child);
        let _ = child.wait();
        Err(why)
    };
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if Instant::now() >= budget.deadline => {
                let why = FetchError::io(format!(
                    "git did not finish within {} s (`[import] timeout_seconds`)",
                    budget.limit.as_secs()
                ));
                return stop(&mut child, why);
            }
            Ok(None) => {
                if let Some((dir, max)) = budget.watch
                    && measured.elapsed() >= Duration::from_millis(200)
                {
                    measured = Instant::now();
                    let got = dir_bytes(dir);
                    if got > max {
                        let why = FetchError::too_large(format!(
                            "the repository is larger than {max} bytes (`[import] max_repository_bytes`); fetch stopped at {got} bytes"
                        ));
                        return stop(&mut child, why);
                    }
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(FetchError::io(format!("waiting for git: {e}"))),
        }
    };
    // A fetch that finished between two measures is measured once more.
    if let Some((dir, max)) = budget.watch
        && dir_bytes(dir) > max
    {
        return Err(FetchError::too_large(format!(
            "the repository is larger than {max} bytes (`[import] max_repository_bytes`)"
        )));
    }
    Ok(std::process::Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

/// The body of `url` (at most `max_bytes`), through the cache.
///
/// # Errors
/// [`FetchError`] for a connection failure, a status other than 2xx (`HTTP 404`), a body
/// over `max_bytes`, or a cache that cannot be written.
pub fn http(cache: &Cache, url: &str, max_bytes: u64) -> Result<Fetched, FetchError> {
    let entry = cache.dir.join("http").join(key_of(&[url]));
    let how = match lookup(cache, &entry, "body") {
        Ok(hit) => return Ok(hit),
        Err(how) => how,
    };
    store(cache, &entry, "body", url, how, |body| {
        let bytes = download(url, max_bytes)?;
        std::fs::write(body, bytes).map_err(io(body))?;
        Ok(None)
    })
}

fn download(url: &str, max_bytes: u64) -> Result<Vec<u8>, FetchError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(HTTP_TIMEOUT_SECS)))
        .timeout_connect(Some(Duration::from_secs(HTTP_CONNECT_TIMEOUT_SECS)))
        .user_agent(concat!("skillc/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let mut resp = agent.get(url).call().map_err(|e| match e {
        // A 4xx names a source that is not there (or not for us); a 5xx is the server failing.
        ureq::Error::StatusCode(code) if (400..500).contains(&code) => {
            FetchError::missing(format!("HTTP {code} from {url}"))
        }
        ureq::Error::StatusCode(code) => FetchError::io(format!("HTTP {code} from {url}")),
        other => FetchError::io(format!("cannot fetch {url}: {other}")),
    })?;
    resp.body_mut()
        .with_config()
        .limit(max_bytes)
        .read_to_vec()
        .map_err(|e| match e {
            ureq::Error::BodyExceedsLimit(_) => {
                FetchError::too_large(format!("{url} is larger than {max_bytes} bytes"))
            }
            other => FetchError::io(format!("reading {url}: {other}")),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_size_counts_blobs_links_and_submodules() {
        let listing = "100644 blob e69de29bb2d1d6434b8b29ae775ad8c2e48c5391       0\tSKILL.md\0\
                       100755 blob 0123456789abcdef0123456789abcdef01234567  300000\tassets/a b.txt\0\
                       120000 blob 89abcdef0123456789abcdef0123456789abcdef      11\tlink\0\
                       160000 commit 0123456789abcdef0123456789abcdef01234567       -\tsub\0";
        assert_eq!(tree_size(listing), (4, 300_011));
        assert_eq!(tree_size(""), (0, 0));
    }

    #[test]
    fn git_failures_are_told_apart() {
        let missing = [
            "couldn't find remote ref v9",
            "'/x' does not appear to be a git repository",
        ];
        assert!(missing.iter().all(|m| GIT_MISSING.iter().any(|g| m.contains(g))));
        let io = "unable to access 'https://h/r/': Could not resolve host: h";
        assert!(!GIT_MISSING.iter().any(|g| io.contains(g)));
    }
}

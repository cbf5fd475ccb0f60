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

/// Seconds a git command may run before it is stopped.
pub const GIT_TIMEOUT_SECS: u64 = 300;
/// Seconds an HTTP request may take in total.
pub const HTTP_TIMEOUT_SECS: u64 = 60;
/// Seconds to wait for an HTTP connection.
pub const HTTP_CONNECT_TIMEOUT_SECS: u64 = 10;

/// A fetch that failed, with a message for the user.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FetchError(pub String);

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
    move |e| FetchError(format!("cache {}: {e}", path.display()))
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
    let json = serde_json::to_vec_pretty(&meta).map_err(|e| FetchError(e.to_string()))?;
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
/// cache. The checkout has no `.git` folder; the commit is in [`Fetched::resolved`].
///
/// # Errors
/// [`FetchError`] when git is missing, the repository or ref does not exist, or the cache
/// cannot be written.
pub fn git(cache: &Cache, url: &str, reference: Option<&str>) -> Result<Fetched, FetchError> {
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
        checkout(url, reference, tree).map(Some)
    })
}

fn checkout(url: &str, reference: Option<&str>, dest: &Path) -> Result<String, FetchError> {
    std::fs::create_dir_all(dest).map_err(io(dest))?;
    let dest_str = dest.to_string_lossy().into_owned();
    run_git(&["init", "-q", &dest_str], None)?;
    let target = reference.unwrap_or("HEAD");
    run_git(
        &["fetch", "-q", "--depth", "1", "--no-tags", "--", url, target],
        Some(dest),
    )
    .map_err(|e| FetchError(format!("cannot fetch `{target}` from {url}: {}", e.0)))?;
    run_git(&["checkout", "-q", "--detach", "FETCH_HEAD"], Some(dest))?;
    let commit = run_git(&["rev-parse", "HEAD"], Some(dest))?.trim().to_owned();
    let dot_git = dest.join(".git");
    std::fs::remove_dir_all(&dot_git).map_err(io(&dot_git))?;
    Ok(commit)
}

/// Runs `git` with hooks, prompts and unsafe transports disabled; returns standard output.
fn run_git(args: &[&str], dir: Option<&Path>) -> Result<String, FetchError> {
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
    let child = cmd.spawn().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            FetchError("git is not installed (or not on PATH): install git to import from repositories".into())
        } else {
            FetchError(format!("cannot run git: {e}"))
        }
    })?;
    let output = wait_with_timeout(child, Duration::from_secs(GIT_TIMEOUT_SECS))?;
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
        Err(FetchError(line.to_owned()))
    }
}

fn wait_with_timeout(mut child: std::process::Child, limit: Duration) -> Result<std::process::Output, FetchError> {
    let started = Instant::now();
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
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if started.elapsed() < limit => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(FetchError(format!("git did not finish within {} s", limit.as_secs())));
            }
            Err(e) => return Err(FetchError(format!("waiting for git: {e}"))),
        }
    };
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
        ureq::Error::StatusCode(code) => FetchError(format!("HTTP {code} from {url}")),
        other => FetchError(format!("cannot fetch {url}: {other}")),
    })?;
    resp.body_mut()
        .with_config()
        .limit(max_bytes)
        .read_to_vec()
        .map_err(|e| match e {
            ureq::Error::BodyExceedsLimit(_) => FetchError(format!("{url} is larger than {max_bytes} bytes")),
            other => FetchError(format!("reading {url}: {other}")),
        })
}

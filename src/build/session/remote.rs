//! The shared build cache (IO layer; issue 16, item 6; ARCHITECTURE.md, "The shared build
//! cache"): the same per-skill entries as `.skillc/cache/`, and each skill's L5 answers, read
//! from and written to a remote storage through Apache OpenDAL — a folder, or a Redis server.
//!
//! Everything read is verified before use (an entry by [`cache::verify`], the L5 answers by
//! their own digest and key), and every failure — unreachable, slow past the timeout,
//! corrupt — is a warning and local work, never an error and never a wrong output. The first
//! failure to reach the remote turns it off for the rest of the process, so that an
//! unreachable server costs one timeout, not one per skill.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sha2::Digest as _;

use crate::build::cache;
use crate::config::{CacheRemote, RemoteLocation};
use crate::model::DescribeResult;
use crate::util::hex;

/// How many remote operations run at once.
const CONCURRENCY: usize = 32;

/// Most bytes of one remote object (an entry or a skill's L5 answers are a few KB; a
/// skill's entry at the format's limits stays far below this).
const MAX_OBJECT_BYTES: u64 = 64 << 20;

/// The first bytes of a remote object of L5 answers.
const L5_MAGIC: &[u8; 8] = b"skillc\x00L";

/// An open remote cache.
pub(super) struct Remote {
    rt: tokio::runtime::Runtime,
    op: opendal::Operator,
    /// As shown in messages.
    pub(super) shown: String,
    timeout: Duration,
    /// Set by the first failure to reach the remote: nothing more is asked of it.
    off: Arc<AtomicBool>,
    /// Why it was turned off, for the one warning.
    why: std::sync::Mutex<Option<String>>,
}

/// What a read found.
pub(super) enum Got {
    /// The object's bytes (not verified yet).
    Bytes(Vec<u8>),
    /// No such object.
    Absent,
    /// The remote could not answer (it is now off).
    Failed,
}

/// The name of a skill's entry on the remote.
pub(super) fn entry_name(key: &[u8; 32]) -> String {
    let h = hex(key);
    format!("entries/{}/{h}", &h[..2])
}

/// The name of a skill's L5 answers on the remote: they depend on the entry (its wrappers),
/// the interpreter and the tool.
pub(super) fn l5_name(key: &[u8; 32], python: &str, tool: &str) -> String {
    let mut h = sha2::Sha256::new();
    for part in [key.as_slice(), python.as_bytes(), tool.as_bytes()] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    format!("l5/{}", hex(&h.finalize()))
}

/// The bytes of a skill's L5 answers: magic, the JSON of `{key, answers}`, its SHA-256.
pub(super) fn encode_l5(key: &[u8; 32], answers: &BTreeMap<String, DescribeResult>) -> Vec<u8> {
    let body = serde_json::json!({ "key": hex(key), "described": answers }).to_string();
    let mut w = Vec::with_capacity(body.len() + 48);
    w.extend_from_slice(L5_MAGIC);
    w.extend_from_slice(body.as_bytes());
    let digest = sha2::Sha256::digest(&w);
    w.extend_from_slice(&digest);
    w
}

/// A skill's L5 answers from the bytes of their object, when the digest and the key check.
pub(super) fn decode_l5(bytes: &[u8], key: &[u8; 32]) -> Option<HashMap<String, DescribeResult>> {
    let body_len = bytes.len().checked_sub(32)?;
    let (body, digest) = bytes.split_at(body_len);
    if sha2::Sha256::digest(body).as_slice() != digest {
        return None;
    }
    let json = body.strip_prefix(L5_MAGIC.as_slice())?;
    #[derive(serde::Deserialize)]
    struct Doc {
        key: String,
        described: HashMap<String, DescribeResult>,
    }
    let doc: Doc = serde_json::from_slice(json).ok()?;
    (doc.key == hex(key)).then_some(doc.described)
}

impl Remote {
    /// Opens the remote `[cache] remote` names (a folder relative to `root` when relative).
    ///
    /// # Errors
    /// Why it cannot be used (a warning: the build stays local).
    pub(super) fn open(cfg: &CacheRemote, root: &Path) -> Result<Remote, String> {
        let timeout = Duration::from_secs(cfg.timeout_seconds);
        let op = match &cfg.location {
            RemoteLocation::Folder(dir) => {
                let dir = root.join(dir);
                let dir = dir.to_string_lossy();
                let fs = opendal::services::Fs::default()
                    .root(&dir)
                    // Written under a temporary name, then renamed: a reader never sees half an
                    // object (and would refuse it by its digest if it did).
                    .atomic_write_dir(&format!("{dir}/.tmp"));
                opendal::Operator::new(fs)
            }
            RemoteLocation::Redis(url) => redis(url),
        }
        .map_err(|e| e.to_string())?
        .layer(
            opendal::layers::TimeoutLayer::new()
                .with_timeout(timeout)
                .with_io_timeout(timeout),
        );
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| format!("no runtime for the remote cache: {e}"))?;
        Ok(Remote {
            rt,
            op,
            shown: cfg.shown(),
            timeout,
            off: Arc::new(AtomicBool::new(false)),
            why: std::sync::Mutex::new(None),
        })
    }

    /// Whether a failure turned the remote off, and why (once: later calls say `None`).
    pub(super) fn take_failure(&self) -> Option<String> {
        self.why.lock().ok()?.take()
    }

    fn fail(&self, why: String) {
        if !self.off.swap(true, Ordering::SeqCst)
            && let Ok(mut w) = self.why.lock()
        {
            *w = Some(why);
        }
    }

    /// Reads every object of `names`, in that order, `CONCURRENCY` at a time. The first
    /// object is read alone: when it fails, nothing else is asked.
    pub(super) fn get_all(&self, names: &[String]) -> Vec<Got> {
        let Some((first, rest)) = names.split_first() else {
            return Vec::new();
        };
        let mut got = vec![self.get_batch(std::slice::from_ref(first)).pop().unwrap_or(Got::Failed)];
        got.extend(self.get_batch(rest));
        got
    }

    fn get_batch(&self, names: &[String]) -> Vec<Got> {
        if names.is_empty() || self.off.load(Ordering::SeqCst) {
            return names.iter().map(|_| Got::Failed).collect();
        }
        let results = self.run_all(names.to_vec(), |op, name| async move {
            // Only a regular object of bounded size is read: opening a FIFO planted in a
            // folder remote would block a runtime thread past any timeout, and a link to
            // `/dev/zero` or a huge value would fill the memory. Such an object makes the
            // remote untrusted for the rest of the process, like any failure.
            let meta = match op.stat(&name).await {
                Ok(m) => m,
                Err(e) if e.kind() == opendal::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(format!("reading {name}: {e}")),
            };
            if !meta.mode().is_file() || meta.content_length() > MAX_OBJECT_BYTES {
                return Err(format!(
                    "{name} is not a regular object of at most {} MiB",
                    MAX_OBJECT_BYTES >> 20
                ));
            }
            // No more than the size it was found with: an object that grows in between is
            // cut, and then fails its digest like any corrupt one.
            let len = meta.content_length();
            let read = if len == 0 {
                op.read(&name).await
            } else {
                op.read_with(&name).range(0..len).await
            };
            match read {
                Ok(buf) => Ok(Some(buf.to_vec())),
                Err(e) if e.kind() == opendal::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(format!("reading {name}: {e}")),
            }
        });
        results
            .into_iter()
            .map(|r| match r {
                Ok(Some(bytes)) => Got::Bytes(bytes),
                Ok(None) => Got::Absent,
                Err(why) => {
                    self.fail(why);
                    Got::Failed
                }
            })
            .collect()
    }

    /// Writes every object; returns how many were written (a failure turns the remote off).
    pub(super) fn put_all(&self, objects: Vec<(String, Vec<u8>)>) -> usize {
        let Some((first, rest)) = objects.split_first() else {
            return 0;
        };
        let first = self.put_batch(vec![first.clone()]);
        first + self.put_batch(rest.to_vec())
    }

    fn put_batch(&self, objects: Vec<(String, Vec<u8>)>) -> usize {
        if objects.is_empty() || self.off.load(Ordering::SeqCst) {
            return 0;
        }
        let results = self.run_all(objects, |op, (name, bytes)| async move {
            op.write(&name, bytes)
                .await
                .map(|_| ())
                .map_err(|e| format!("writing {name}: {e}"))
        });
        let mut written = 0;
        for r in results {
            match r {
                Ok(()) => written += 1,
                Err(why) => self.fail(why),
            }
        }
        written
    }

    /// Runs `f` over every item on the runtime, `CONCURRENCY` at a time, each bounded by the
    /// timeout (besides OpenDAL's own), and returns the results in the items' order.
    fn run_all<I, T, F, Fut>(&self, items: Vec<I>, f: F) -> Vec<Result<T, String>>
    where
        I: Send + 'static,
        T: Send + 'static,
        F: Fn(opendal::Operator, I) -> Fut,
        Fut: std::future::Future<Output = Result<T, String>> + Send + 'static,
    {
        let limit = Arc::new(tokio::sync::Semaphore::new(CONCURRENCY));
        let timeout = self.timeout;
        let off = Arc::clone(&self.off);
        let n = items.len();
        self.rt.block_on(async {
            let mut tasks = tokio::task::JoinSet::new();
            for (i, item) in items.into_iter().enumerate() {
                let job = f(self.op.clone(), item);
                let limit = Arc::clone(&limit);
                let off = Arc::clone(&off);
                tasks.spawn(async move {
                    let Ok(_permit) = limit.acquire_owned().await else {
                        return (i, Err("the remote cache was closed".to_owned()));
                    };
                    if off.load(Ordering::SeqCst) {
                        return (i, Err("the remote cache is off".to_owned()));
                    }
                    let r = match tokio::time::timeout(timeout, job).await {
                        Ok(r) => r,
                        Err(_) => Err(format!("no answer within {} s", timeout.as_secs())),
                    };
                    (i, r)
                });
            }
            let mut out: Vec<Option<Result<T, String>>> = (0..n).map(|_| None).collect();
            while let Some(done) = tasks.join_next().await {
                if let Ok((i, r)) = done
                    && let Some(slot) = out.get_mut(i)
                {
                    *slot = Some(r);
                }
            }
            out.into_iter()
                .map(|r| r.unwrap_or_else(|| Err("the remote operation did not finish".to_owned())))
                .collect()
        })
    }
}

#[cfg(feature = "cache-redis")]
fn redis(url: &str) -> opendal::Result<opendal::Operator> {
    opendal::Operator::new(opendal::services::Redis::default().endpoint(url))
}

#[cfg(not(feature = "cache-redis"))]
fn redis(_url: &str) -> opendal::Result<opendal::Operator> {
    Err(opendal::Error::new(
        opendal::ErrorKind::Unsupported,
        "this skillc was built without the Redis service (cargo feature `cache-redis`)",
    ))
}

/// A verified entry from a remote object's bytes, or why it is refused.
pub(super) fn verify_entry(bytes: Vec<u8>, key: &[u8; 32], tool: &str) -> Result<Arc<[u8]>, cache::Bad> {
    cache::verify(&bytes, key, tool)?;
    Ok(Arc::from(bytes))
}

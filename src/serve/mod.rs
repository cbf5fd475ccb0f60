//! `skillc serve`: the verified catalog over HTTP, the owner API and the dashboard
//! (RUNTIME.md §2). IO layer, on tokio + hyper + axum (ARCHITECTURE.md says why).
//!
//! - [`State`] holds the served catalog as an atomically swapped [`Snapshot`]: a request
//!   loads the snapshot once and answers from it alone, so it sees the old catalog or the
//!   new one, never a mix. [`State::reload`] opens (reads and verifies) the catalog again and
//!   swaps only when it verifies; a refused catalog is reported by `GET /api/catalog` and the
//!   previous one goes on being served.
//! - [`routes`]: the read routes; [`owner`]: the owner routes (token, same origin);
//!   [`project`]: the project around the catalog (skills roots, `skillc.lock`, pins, the
//!   archive); [`error`]: JSON errors; [`auth`]: the token; [`assets`]: the dashboard.
//! - [`run`] accepts connections itself (hyper's HTTP/1 server) to bound them: at most
//!   [`Limits::connections`] at once, headers within [`Limits::header_timeout`] (slow-loris),
//!   each request within [`Limits::request_timeout`], bodies of at most
//!   [`Limits::request_bytes`].

pub mod assets;
pub mod auth;
pub mod curator;
pub mod error;
pub mod owner;
pub mod project;
pub mod routes;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use arc_swap::ArcSwap;
use axum::body::Bytes;
use serde::Serialize;
use utoipa::ToSchema;

use crate::catalog::{Annotations, Catalog, OpenError, OpenOptions};

/// Limits on what clients may send and hold (RUNTIME.md §2, "Limits").
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Largest request body (1 MiB).
    pub request_bytes: usize,
    /// Largest imported file (64 KiB).
    pub file_bytes: usize,
    /// Most files per import (30).
    pub files: usize,
    /// Time to answer one request, body included (10 s).
    pub request_timeout: Duration,
    /// Time to answer one owner request (120 s: an install may fetch a repository).
    pub owner_timeout: Duration,
    /// Time to send a request's headers (5 s): a slow-loris client is dropped after it.
    pub header_timeout: Duration,
    /// Connections served at once (512); more wait in the kernel's queue.
    pub connections: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            request_bytes: 1024 * 1024,
            file_bytes: 64 * 1024,
            files: 30,
            request_timeout: Duration::from_secs(10),
            owner_timeout: Duration::from_secs(120),
            header_timeout: Duration::from_secs(5),
            connections: 512,
        }
    }
}

/// How the server runs.
#[derive(Clone, Debug)]
pub struct Config {
    /// The catalog folder.
    pub out: PathBuf,
    /// How to open (verify) it.
    pub open: OpenOptions,
    /// The owner token.
    pub token: String,
    /// The project around the catalog, for the owner routes and annotations.
    pub project: Option<project::Project>,
    /// Whether `--watch` rebuilds and swaps.
    pub watch: bool,
    /// Limits.
    pub limits: Limits,
}

/// One served state of the catalog: the verified catalog, what the project says of its
/// skills, and answers rendered once per snapshot.
pub struct Snapshot {
    /// The verified catalog.
    pub catalog: Arc<Catalog>,
    /// Origins and curator states.
    pub notes: Annotations,
    details: Vec<OnceLock<Bytes>>,
    list: OnceLock<Bytes>,
}

impl Snapshot {
    /// A snapshot of `catalog` with `notes`.
    pub fn new(catalog: Arc<Catalog>, notes: Annotations) -> Snapshot {
        let details = (0..catalog.skills().len()).map(|_| OnceLock::new()).collect();
        Snapshot {
            catalog,
            notes,
            details,
            list: OnceLock::new(),
        }
    }
}

/// A catalog refused on reload.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct Refusal {
    /// When (Unix seconds).
    pub at: i64,
    /// Why, in one sentence.
    pub message: String,
    /// Each verification failure, as `skillc verify --format json` names them.
    pub failures: Vec<FailureView>,
}

/// A verification failure.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct FailureView {
    /// `missing`, `bad-signature`, `hash-mismatch`, `unlisted`, `expired`, `rollback`,
    /// `malformed`, or the signer's refusal as `skillc verify` names it (`untrusted-signer`).
    pub kind: String,
    /// What failed.
    pub message: String,
}

/// The server's shared state.
pub struct State {
    current: ArcSwap<Snapshot>,
    swaps: AtomicU64,
    refused: Mutex<Option<Refusal>>,
    /// How it runs.
    pub config: Config,
    origins: Mutex<Vec<String>>,
    owner_lock: tokio::sync::Mutex<()>,
    openapi: OnceLock<Bytes>,
}

fn now() -> i64 {
    jiff::Timestamp::now().as_second()
}

impl State {
    /// Opens the catalog (it must verify) and makes the state.
    ///
    /// # Errors
    /// [`OpenError`] when the catalog cannot be read or does not verify: nothing is served.
    pub fn open(config: Config) -> Result<Arc<State>, OpenError> {
        let opts = OpenOptions {
            now: now(),
            ..config.open.clone()
        };
        let catalog = Arc::new(Catalog::open(&config.out, &opts)?);
        let notes = project::annotations(config.project.as_ref(), &catalog);
        Ok(Arc::new(State {
            current: ArcSwap::from_pointee(Snapshot::new(catalog, notes)),
            swaps: AtomicU64::new(0),
            refused: Mutex::new(None),
            config,
            origins: Mutex::new(Vec::new()),
            owner_lock: tokio::sync::Mutex::new(()),
            openapi: OnceLock::new(),
        }))
    }

    /// The snapshot a request answers from.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.current.load_full()
    }

    /// How many times the served catalog was swapped.
    pub fn swaps(&self) -> u64 {
        self.swaps.load(Ordering::Relaxed)
    }

    /// The last refused reload, when the newest catalog on disk is not the one served.
    pub fn refused(&self) -> Option<Refusal> {
        self.refused.lock().map(|r| r.clone()).unwrap_or(None)
    }

    /// Reads and verifies the catalog again; swaps it in when it verifies (and is not older
    /// than the one served), else keeps serving the current one and records why.
    ///
    /// # Errors
    /// [`OpenError`] when the new catalog is refused.
    pub fn reload(&self) -> Result<i64, OpenError> {
        let served = self.snapshot();
        let opts = OpenOptions {
            now: now(),
            at_least: Some(served.catalog.verified().catalog_version),
            ..self.config.open.clone()
        };
        match Catalog::open(&self.config.out, &opts) {
            Ok(c) => {
                let version = c.verified().catalog_version;
                let catalog = Arc::new(c);
                let notes = project::annotations(self.config.project.as_ref(), &catalog);
                self.current.store(Arc::new(Snapshot::new(catalog, notes)));
                self.swaps.fetch_add(1, Ordering::Relaxed);
                if let Ok(mut r) = self.refused.lock() {
                    *r = None;
                }
                Ok(version)
            }
            Err(e) => {
                let failures = match &e {
                    OpenError::Refused { failures, .. } => failures
                        .iter()
                        .map(|f| FailureView {
                            kind: f.kind().to_owned(),
                            message: f.to_string(),
                        })
                        .collect(),
                    OpenError::Trust(crate::catalog::read::TrustError::Refused(r)) => vec![FailureView {
                        kind: r.kind().to_owned(),
                        message: r.to_string(),
                    }],
                    _ => Vec::new(),
                };
                if let Ok(mut r) = self.refused.lock() {
                    *r = Some(Refusal {
                        at: now(),
                        message: e.to_string(),
                        failures,
                    });
                }
                Err(e)
            }
        }
    }

    /// Re-reads what the project says of the skills (after a removal), keeping the catalog.
    pub fn refresh_notes(&self) {
        let served = self.snapshot();
        let notes = project::annotations(self.config.project.as_ref(), &served.catalog);
        self.current
            .store(Arc::new(Snapshot::new(served.catalog.clone(), notes)));
    }

    fn set_origins(&self, addr: SocketAddr) {
        let mut own = vec![format!("http://{addr}")];
        if addr.ip().is_loopback() {
            own.push(format!("http://localhost:{}", addr.port()));
        }
        if let Ok(mut o) = self.origins.lock() {
            *o = own;
        }
    }

    fn origins(&self) -> Vec<String> {
        self.origins.lock().map(|o| o.clone()).unwrap_or_default()
    }
}

/// Serves `state` on `listener` until `shutdown` completes.
///
/// # Errors
/// An IO error when the listener's address cannot be read.
pub async fn run(
    listener: tokio::net::TcpListener,
    state: Arc<State>,
    shutdown: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    state.set_origins(listener.local_addr()?);
    let limits = state.config.limits;
    let app = routes::router(state);
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.connections));
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            () = &mut shutdown => break,
            p = slots.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => break },
        };
        let stream = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((s, _)) => s,
                // Out of file descriptors and the like: wait a little rather than spin.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let _permit = permit;
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .max_buf_size(64 * 1024)
                .serve_connection(TokioIo::new(stream), service);
            // A broken or timed-out connection ends here, quietly: it is the client's.
            let _ = conn.await;
        });
    }
    Ok(())
}

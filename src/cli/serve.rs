//! `skillc serve`: the verified catalog over HTTP with the dashboard (RUNTIME.md §2). This
//! file resolves the project, the catalog folder and the token, starts the server (the
//! `serve` module) on a tokio runtime, and with `--watch` runs the watch loop of `skillc
//! watch`, swapping the served catalog after every build.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;

use super::build::ProjectArgs;
use super::progress::MessageFormat;
use super::watch::WatchArgs;
use super::{Printer, Status, project};
use crate::catalog::OpenOptions;
use crate::serve::{self, Config, Limits, State, auth};

/// Arguments of `skillc serve`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Read routes need no token. Owner routes (import, install, delete) need \
`Authorization: Bearer <token>`, the token in .skillc/serve.token (created, mode 0600, on first start), \
and refuse requests from another origin.\n\
The catalog is trusted as `skillc verify` trusts it (--public-key, `[verify] keys`, the folder's pin, rollback floors; read only).\n\
Exit status: 0 stopped by Ctrl-C or SIGTERM, 1 the catalog does not verify or its signer is not trusted, 2 the server could not start."
)]
pub struct ServeArgs {
    /// The catalog folder (default: `[pipeline] out`, i.e. `out`).
    #[arg(value_name = "OUT")]
    pub catalog: Option<PathBuf>,
    /// The address to listen on (loopback by default; port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:8484", value_name = "ADDR")]
    pub addr: SocketAddr,
    /// Rebuild on every change of the skills (as `skillc watch`) and swap the served catalog.
    #[arg(long)]
    pub watch: bool,
    /// The signer's public key: the catalog must be signed by it (default: the project's
    /// `[verify] keys`, else the key `skillc verify` pinned for this folder). (`--key` is the
    /// secret key `--watch` builds sign with.)
    #[arg(long = "public-key", value_name = "FILE")]
    pub public_key: Option<PathBuf>,
    /// The state `skillc verify` records (pins and rollback floors; read only, default:
    /// verify's).
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// With `--watch`: milliseconds without events before a burst of changes is built.
    #[arg(long, value_name = "MS", default_value_t = 30)]
    pub debounce: u64,
    #[command(flatten)]
    pub project: ProjectArgs,
}

/// The project around the catalog, as the serve module needs it.
pub(crate) fn serve_project(p: &project::Project) -> anyhow::Result<serve::project::Project> {
    let skills_roots: Vec<PathBuf> = p.config.skills.iter().map(|r| p.root.join(r)).collect();
    let into = skills_roots.first().cloned().unwrap_or_else(|| p.root.join("skills"));
    Ok(serve::project::Project {
        root: p.root.clone(),
        state_dir: p.root.join(".skillc"),
        skills_roots,
        import: super::import::options_for(p, into, false)?,
        curate: super::curate::curate_project(p),
    })
}

struct Server {
    state: Arc<State>,
    stop: tokio::sync::watch::Sender<bool>,
    thread: std::thread::JoinHandle<std::io::Result<()>>,
}

/// A token made for this start and not written yet: its state folder and the token.
type NewToken = Option<(std::path::PathBuf, String)>;

fn start(
    config: Config,
    new_token: NewToken,
    addr: SocketAddr,
    out: &mut Printer,
) -> anyhow::Result<Result<Server, Status>> {
    let trust = config.open.trust.clone();
    let state = match State::open(config) {
        Ok(s) => s,
        Err(e) => return Ok(Err(super::catalog::refused(&e, &trust, "nothing is served", out)?)),
    };
    let listener = std::net::TcpListener::bind(addr).with_context(|| {
        format!("listening on {addr} (another server may hold the port: stop it, or choose another with --addr)")
    })?;
    listener.set_nonblocking(true)?;
    let bound = listener.local_addr()?;
    // Written only now that the catalog verifies and the port is ours.
    if let Some((state_dir, token)) = new_token {
        auth::create(&state_dir, &token)?;
        out.note(&format!(
            "note: created the owner token {} (mode 0600); owner routes need `Authorization: Bearer <token>`",
            auth::token_path(&state_dir).display()
        ));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("skillc-serve")
        .build()
        .context("starting the HTTP runtime")?;
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    let served = state.clone();
    let thread = std::thread::spawn(move || {
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener)?;
            serve::run(listener, served, async move {
                let _ = stopped.wait_for(|s| *s).await;
            })
            .await
        })
    });
    let snapshot = state.snapshot();
    let v = snapshot.catalog.verified();
    out.line(&format!(
        "serving http://{bound} — catalog version {}, {}, {}, verified (key {})",
        v.catalog_version,
        counts(&snapshot.catalog),
        super::output::count(v.executors, "executor"),
        v.key_id
    ))?;
    out.flush()?;
    Ok(Ok(Server { state, stop, thread }))
}

/// The skills as `GET /api/skills` counts them (every skill it lists), and how many of
/// those the menu offers; disabled and rejected ones named when there are any.
fn counts(catalog: &crate::catalog::Catalog) -> String {
    use crate::catalog::Status as S;
    let of = |st: S| catalog.skills().iter().filter(|s| s.status == st).count();
    let listed = catalog.skills().len();
    let mut parts = vec![format!("{} offered", listed - of(S::Disabled) - of(S::Rejected))];
    for (n, what) in [
        (of(S::Disabled), "disabled"),
        (of(S::Rejected), "rejected by the build"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    format!(
        "{} listed ({})",
        super::output::count(listed, "skill"),
        parts.join(", ")
    )
}

fn stop(server: Server, out: &mut Printer) -> anyhow::Result<Status> {
    let _ = server.stop.send(true);
    match server.thread.join() {
        Ok(r) => r.context("serving")?,
        Err(_) => anyhow::bail!("the server thread panicked"),
    }
    out.line("stopped")?;
    out.flush()?;
    Ok(Status::Success)
}

pub(crate) fn run(args: &ServeArgs, out: &mut Printer) -> anyhow::Result<Status> {
    let cwd = std::env::current_dir()?;
    let project = project::load(&cwd, out)?;
    let catalog_dir = match (&args.catalog, &args.project.out) {
        (Some(c), _) | (None, Some(c)) => cwd.join(c),
        (None, None) => project.root.join(&project.config.out),
    };
    // `--key` elsewhere names the key to trust; here it is the signing key of `--watch`
    // builds, and without `--watch` it would silently change nothing.
    anyhow::ensure!(
        args.watch || args.project.key.is_none(),
        "serve's --key is the secret key `--watch` builds sign with; name the key to trust with --public-key FILE"
    );
    let state_dir = project.root.join(".skillc");
    super::keys::ignore_state_dir(&state_dir)?;
    // A missing token is made now and written only once a catalog verifies (in `start`): a
    // refused start leaves the project as it was.
    let (token, new_token) = match auth::load(&state_dir)? {
        Some(token) => (token, None),
        None => {
            let token = auth::generate(&state_dir)?;
            (token.clone(), Some((state_dir.clone(), token)))
        }
    };
    let config = Config {
        out: catalog_dir.clone(),
        open: OpenOptions {
            trust: super::pin::reader_trust(
                args.public_key.as_deref(),
                args.state.as_deref(),
                &catalog_dir,
                &project,
                &cwd,
            )?,
            now: 0,
            at_least: None,
            model: None,
        },
        token,
        project: Some(serve_project(&project)?),
        watch: args.watch,
        limits: Limits::default(),
    };
    if !args.watch {
        let server = match start(config, new_token, args.addr, out)? {
            Ok(s) => s,
            Err(status) => return Ok(status),
        };
        wait_for_signal()?;
        return stop(server, out);
    }
    let mut project_args = args.project.clone();
    project_args.out = Some(catalog_dir);
    let watch_args = WatchArgs {
        project: project_args,
        message_format: MessageFormat::Human,
        quiet: false,
        debounce: args.debounce,
    };
    let mut server: Option<Server> = None;
    let mut refusal: Option<Status> = None;
    let mut config = Some(config);
    let mut new_token = new_token;
    let mut printer = Printer::stdout(out.color);
    let status = super::watch::run_with(&watch_args, out, &mut |_| {
        match (&server, config.take()) {
            (None, Some(c)) => match start(c, new_token.take(), args.addr, &mut printer)? {
                Ok(s) => server = Some(s),
                Err(status) => {
                    refusal = Some(status);
                    anyhow::bail!("the first catalog does not verify");
                }
            },
            (Some(s), _) => match s.state.reload() {
                Ok(v) => printer.line(&format!("serving catalog version {v}"))?,
                Err(e) => printer.note(&format!(
                    "error: {e}; still serving catalog version {}",
                    s.state.snapshot().catalog.verified().catalog_version
                )),
            },
            (None, None) => {}
        }
        printer.flush()?;
        Ok(())
    });
    if let Some(status) = refusal {
        return Ok(status);
    }
    let status = status?;
    match server {
        Some(s) => stop(s, out),
        None => Ok(status),
    }
}

/// Blocks until Ctrl-C or SIGTERM.
fn wait_for_signal() -> anyhow::Result<()> {
    let (tx, rx) = std::sync::mpsc::channel();
    ctrlc::set_handler(move || {
        let _ = tx.send(());
    })?;
    let _ = rx.recv();
    Ok(())
}

//! A real `skillc serve` on 127.0.0.1 for the tests: a project made from the example skills
//! (and the fixtures of `tests/fixtures/serve/`), built with a fixed key, served on a free
//! port; HTTP through ureq, raw bytes through a plain TCP stream.

use std::io::{BufRead as _, BufReader, Read as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{SKILLC, copy_dir, manifest_dir, skillc_env, write_test_key};

/// `SOURCE_DATE_EPOCH` of the test builds.
pub const SDE: (&str, &str) = ("SOURCE_DATE_EPOCH", "1800000000");

/// A project: the example skills, `tests/fixtures/serve/*`, pipeline.toml, a fixed key; built.
pub fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(&manifest_dir().join("skills"), &dir.path().join("skills"));
    copy_dir(&manifest_dir().join("tests/fixtures/serve"), &dir.path().join("skills"));
    std::fs::copy(manifest_dir().join("pipeline.toml"), dir.path().join("pipeline.toml")).expect("pipeline.toml");
    std::fs::create_dir_all(dir.path().join(".skillc")).expect("state dir");
    write_test_key(&dir.path().join(".skillc/signing.key"));
    let built = skillc_env(dir.path(), &["build"], &[SDE]);
    assert_eq!(built.code, Some(0), "build failed: {built:?}");
    dir
}

/// A running server; killed when dropped.
pub struct Server {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// The project folder.
    pub dir: PathBuf,
    /// The line it printed when it started serving (`serving http://ADDR — …`).
    pub banner: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP answer.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub content_type: String,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    /// The `error.code` of a JSON error answer.
    pub fn code(&self) -> String {
        self.json()["error"]["code"].as_str().unwrap_or_default().to_owned()
    }
}

impl Server {
    /// Starts `skillc serve --addr 127.0.0.1:0 EXTRA…` in `dir` and waits for its address.
    pub fn start(dir: &Path, extra: &[&str]) -> Server {
        let mut child = Command::new(SKILLC)
            .args(["serve", "--addr", "127.0.0.1:0"])
            .args(extra)
            .current_dir(dir)
            .env("NO_COLOR", "1")
            .env("XDG_STATE_HOME", super::state_home())
            .env(SDE.0, SDE.1)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn skillc serve");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.starts_with("serving http://") {
                    let _ = tx.send(line);
                }
            }
        });
        let banner = rx
            .recv_timeout(Duration::from_secs(120))
            .expect("skillc serve printed no address");
        let addr = banner["serving http://".len()..]
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_owned();
        Server {
            child,
            addr,
            dir: dir.to_path_buf(),
            banner,
        }
    }

    /// The exit status, when the server has stopped by itself.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn token(&self) -> String {
        std::fs::read_to_string(self.dir.join(".skillc/serve.token"))
            .expect("token")
            .trim()
            .to_owned()
    }

    /// One request: method, path, headers, body.
    pub fn call(&self, method: &str, path: &str, headers: &[(&str, &str)], body: Option<&[u8]>) -> Answer {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(30)))
            .build()
            .into();
        let url = self.url(path);
        let mut req = ureq::http::Request::builder().method(method).uri(&url);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let mut resp = match body {
            Some(b) => agent.run(req.body(b.to_vec()).expect("request")),
            None => agent.run(req.body(()).expect("request")),
        }
        .unwrap_or_else(|e| panic!("{method} {url}: {e}"));
        let content_type = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        Answer {
            status: resp.status().as_u16(),
            content_type,
            body: resp
                .body_mut()
                .with_config()
                .limit(64 << 20)
                .read_to_vec()
                .expect("body"),
        }
    }

    pub fn get(&self, path: &str) -> Answer {
        self.call("GET", path, &[], None)
    }

    /// POSTs JSON with the owner token.
    pub fn owner_post(&self, path: &str, body: &serde_json::Value) -> Answer {
        let token = format!("Bearer {}", self.token());
        let bytes = serde_json::to_vec(body).expect("json");
        self.call(
            "POST",
            path,
            &[("content-type", "application/json"), ("authorization", &token)],
            Some(&bytes),
        )
    }

    /// Writes raw bytes on a new connection and reads what comes back until the server closes
    /// it or `wait` passes.
    pub fn raw(&self, bytes: &[u8], wait: Duration) -> Vec<u8> {
        use std::io::Write as _;
        let mut s = std::net::TcpStream::connect(&self.addr).expect("connect");
        s.set_read_timeout(Some(wait)).expect("timeout");
        let _ = s.write_all(bytes);
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        out
    }

    /// Polls `GET /api/catalog` until `done` holds for it (or panics after 90 s).
    pub fn wait_catalog(&self, what: &str, done: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
        let start = Instant::now();
        loop {
            let c = self.get("/api/catalog").json();
            if done(&c) {
                return c;
            }
            assert!(
                start.elapsed() < Duration::from_secs(90),
                "timed out waiting for {what}: {c}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

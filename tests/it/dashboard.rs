//! The dashboard in a real headless browser (issue 13, acceptance 2): Debian's `chromium`,
//! driven through `chromedriver` with plain WebDriver calls, against a real `skillc serve` on
//! 127.0.0.1. The list renders the catalog, search filters it, a detail shows a finding with
//! its file:line, the keyboard opens a skill, the menu preview shows the server's answer for
//! a turn, and screenshots at 1280 and 390 px wide are saved under
//! `target/dashboard/` and checked not blank (and the page not wider than the screen).
//!
//! Needs `chromium` and `chromedriver` (`.ci/run` installs them; `SKILLC_CHROMIUM` and
//! `SKILLC_CHROMEDRIVER` point elsewhere). Without them the test fails under CI and says it
//! was skipped elsewhere.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::server::{Server, project};
use base64::Engine as _;
use serde_json::{Value, json};

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

fn tool(var: &str, default: &str) -> Option<PathBuf> {
    let p = std::env::var_os(var).map_or_else(|| PathBuf::from(default), PathBuf::from);
    p.is_file().then_some(p)
}

struct Driver {
    child: Child,
    base: String,
    session: String,
    agent: ureq::Agent,
    _profile: tempfile::TempDir,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self
            .agent
            .delete(&format!("{}/session/{}", self.base, self.session))
            .call();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Driver {
    fn start(chromium: &std::path::Path, chromedriver: &std::path::Path) -> Driver {
        use std::io::BufRead as _;
        // Port 0: chromedriver binds a free port itself and names it (a port picked here and
        // bound by it later could be taken in between by another test's server).
        let mut child = Command::new(chromedriver)
            .arg("--port=0")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(port) = line
                    .split_once("started successfully on port ")
                    .and_then(|(_, p)| p.trim_end_matches('.').trim().parse::<u16>().ok())
                {
                    let _ = tx.send(port);
                }
            }
        });
        let port = rx
            .recv_timeout(Duration::from_secs(120))
            .expect("chromedriver did not say its port");
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(180)))
            .build()
            .into();
        let base = format!("http://127.0.0.1:{port}");
        let profile = tempfile::tempdir().expect("profile dir");
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--window-size=1280,900",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([format!("--user-data-dir={}", profile.path().display())])
        .collect::<Vec<_>>();
        let caps = json!({"capabilities": {"alwaysMatch": {"browserName": "chrome",
            "goog:chromeOptions": {"binary": chromium.display().to_string(), "args": args}}}});
        let mut d = Driver {
            child,
            base,
            session: String::new(),
            agent,
            _profile: profile,
        };
        let v = d.call("POST", "/session", Some(caps));
        d.session = v["sessionId"].as_str().expect("a session").to_owned();
        d
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let url = if path == "/session" {
            format!("{}{path}", self.base)
        } else {
            format!("{}/session/{}{path}", self.base, self.session)
        };
        let mut resp = match (method, body) {
            ("GET", _) => self.agent.get(&url).call(),
            ("DELETE", _) => self.agent.delete(&url).call(),
            (_, b) => self
                .agent
                .post(&url)
                .header("content-type", "application/json")
                .send(serde_json::to_vec(&b.unwrap_or(json!({}))).expect("json")),
        }
        .unwrap_or_else(|e| panic!("webdriver {method} {path}: {e}"));
        let v: Value = serde_json::from_slice(
            &resp
                .body_mut()
                .with_config()
                .limit(64 << 20)
                .read_to_vec()
                .expect("body"),
        )
        .expect("webdriver JSON");
        assert!(v["value"].get("error").is_none(), "webdriver {method} {path}: {v}");
        v.get("value").cloned().unwrap_or(v)
    }

    fn js(&self, script: &str) -> Value {
        self.call("POST", "/execute/sync", Some(json!({"script": script, "args": []})))
    }

    fn find(&self, css: &str) -> String {
        let v = self.call("POST", "/element", Some(json!({"using": "css selector", "value": css})));
        v[ELEMENT].as_str().expect("element id").to_owned()
    }

    fn text(&self, css: &str) -> String {
        let id = self.find(css);
        self.call("GET", &format!("/element/{id}/text"), None)
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Polls `script` until it is true (the deadline is a safety net for a loaded machine).
    fn wait_for(&self, what: &str, script: &str) {
        let started = Instant::now();
        while self.js(script) != json!(true) {
            assert!(
                started.elapsed() < Duration::from_secs(180),
                "timed out waiting for {what}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn type_into(&self, css: &str, text: &str) {
        let id = self.find(css);
        self.call("POST", &format!("/element/{id}/clear"), None);
        self.call("POST", &format!("/element/{id}/value"), Some(json!({"text": text})));
    }

    /// Sets the viewport through the DevTools protocol, saves a screenshot and returns how
    /// many distinct colours it has and whether the page is wider than the viewport.
    fn screenshot(&self, width: u32, height: u32, file: &std::path::Path) -> (u64, bool) {
        self.call(
            "POST",
            "/goog/cdp/execute",
            Some(json!({"cmd": "Emulation.setDeviceMetricsOverride",
                "params": {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600}})),
        );
        self.js("window.scrollTo(0, 0);");
        // Two animation frames: the new layout has been painted (no guess at how long).
        self.call(
            "POST",
            "/execute/async",
            Some(json!({"script": "const done = arguments[arguments.length - 1];
                requestAnimationFrame(() => requestAnimationFrame(() => done(true)));", "args": []})),
        );
        let png64 = self.call("GET", "/screenshot", None).as_str().expect("png").to_owned();
        let png = base64::engine::general_purpose::STANDARD
            .decode(&png64)
            .expect("base64");
        std::fs::write(file, &png).expect("save screenshot");
        let overflow = self.js("return document.documentElement.scrollWidth > window.innerWidth + 1;") == json!(true);
        // Count colours in the browser itself: decode the PNG into a canvas.
        let colours = self.call(
            "POST",
            "/execute/async",
            Some(json!({"script": "const done = arguments[arguments.length - 1]; const img = new Image();
                img.onload = () => { const c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
                  const x = c.getContext('2d'); x.drawImage(img, 0, 0); const d = x.getImageData(0, 0, c.width, c.height).data;
                  const seen = new Set(); for (let i = 0; i < d.length; i += 16) seen.add((d[i] << 16) | (d[i+1] << 8) | d[i+2]);
                  done(seen.size); };
                img.onerror = () => done(-1); img.src = 'data:image/png;base64,' + arguments[0];", "args": [png64]})),
        );
        (colours.as_u64().unwrap_or(0), overflow)
    }
}

#[test]
fn dashboard_in_headless_chromium() {
    let (Some(chromium), Some(chromedriver)) = (
        tool("SKILLC_CHROMIUM", "/usr/bin/chromium"),
        tool("SKILLC_CHROMEDRIVER", "/usr/bin/chromedriver"),
    ) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium and chromedriver are required under CI (apt-get install chromium chromium-driver)"
        );
        eprintln!("skipped: dashboard_in_headless_chromium needs chromium and chromedriver");
        return;
    };
    let p = project();
    let server = Server::start(p.path(), &[]);
    let d = Driver::start(&chromium, &chromedriver);
    d.call("POST", "/url", Some(json!({"url": server.url("/")})));

    // The list renders the catalog, and the verification state is shown.
    d.wait_for(
        "the list",
        "return document.querySelectorAll('#skill-list button').length === 6;",
    );
    assert_eq!(d.text("#count"), "6 of 6 skills");
    d.wait_for(
        "the catalog state",
        "return document.getElementById('catalog-state').textContent.includes('verified');",
    );
    assert!(d.text("#catalog-state").contains("1800000000"));
    // Every control has a label.
    assert_eq!(
        d.js("return [...document.querySelectorAll('input, select')].every(e => document.querySelector(`label[for=\"${e.id}\"]`));"),
        json!(true)
    );

    // Search filters the list; the filters too.
    d.type_into("#search", "ledger");
    d.wait_for(
        "the search",
        "return document.querySelectorAll('#skill-list button').length === 1;",
    );
    assert!(d.text("#skill-list").contains("expense-ledger"));
    d.type_into("#search", "");
    d.js("const s = document.getElementById('filter-highest'); s.value = 'low'; s.dispatchEvent(new Event('input'));");
    d.wait_for(
        "the finding filter",
        "return document.querySelectorAll('#skill-list button').length === 1;",
    );

    // The keyboard opens a skill: its detail shows the finding with file:line.
    let button = d.find("#skill-list button[data-name='finding-demo']");
    d.call(
        "POST",
        &format!("/element/{button}/value"),
        Some(json!({"text": "\u{E007}"})),
    );
    d.wait_for("the detail", "return !!document.querySelector('#findings .where');");
    let at = d.text("#findings .where");
    assert!(at.starts_with("skills/finding-demo/SKILL.md:9:"), "{at}");
    assert!(d.text("#detail").contains("SC002"));
    d.js("const s = document.getElementById('filter-highest'); s.value = ''; s.dispatchEvent(new Event('input'));");
    let todo = d.find("#skill-list button[data-name='todo']");
    d.call("POST", &format!("/element/{todo}/click"), None);
    d.wait_for(
        "the todo detail",
        "return document.getElementById('detail').textContent.includes('create_tasks_todo');",
    );
    let detail = d.text("#detail");
    for part in ["Admission levels", "L6", "Provenance", "Manifests", "skills/todo"] {
        assert!(detail.contains(part), "the detail lacks {part}: {detail}");
    }

    // The menu preview shows the server's answer for a turn.
    d.type_into("#menu-turn", "add a task to buy milk");
    let form = d.find("#menu-form button");
    d.call("POST", &format!("/element/{form}/click"), None);
    // The answer itself (or an error), not merely the end of "Asking…": the wait must not
    // pass before the request started.
    d.wait_for(
        "the menu preview",
        "const r = document.getElementById('menu-result'); return !!document.querySelector('#menu-items li') \
         || (r.textContent.trim() !== '' && !r.textContent.includes('Asking'));",
    );
    let menu = d.text("#menu-result");
    let first = d.text("#menu-items li");
    assert!(
        first.starts_with("todo") && menu.contains("embedder lexical/"),
        "the preview shows the menu, best first, and its embedder: {menu}"
    );

    // Screenshots at 1280 and 390 px, not blank, and no page wider than the screen.
    let dir = crate::common::manifest_dir().join("target/dashboard");
    std::fs::create_dir_all(&dir).expect("target/dashboard");
    for (w, h) in [(1280, 900), (390, 844)] {
        let file = dir.join(format!("dashboard-{w}.png"));
        let (colours, overflow) = d.screenshot(w, h, &file);
        assert!(
            colours > 8,
            "the {w} px screenshot looks blank ({colours} colours): {}",
            file.display()
        );
        assert!(!overflow, "the page is wider than {w} px");
        eprintln!("saved {}", file.display());
    }
}

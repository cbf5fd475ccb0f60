//! Helpers shared by the integration tests: running the real `skillc` binary, reading its JSON
//! report, and the insta settings that keep snapshots in the top-level `snapshots/` folder.

// Each test file uses a different subset of these helpers.
#![allow(dead_code)]

pub mod server;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test.
pub const SKILLC: &str = env!("CARGO_BIN_EXE_skillc");

/// The repository root.
pub fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// What one run of `skillc` produced.
#[derive(Debug)]
pub struct Run {
    /// The exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// Standard output, decoded lossily.
    pub stdout: String,
    /// Standard error, decoded lossily.
    pub stderr: String,
}

impl Run {
    pub fn from_output(out: Output) -> Run {
        Run {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// The standard output parsed as JSON; panics with both streams when it is not JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}\nstderr:\n{}", self.stdout, self.stderr))
    }
}

/// The `XDG_STATE_HOME` every `skillc` this test process runs gets (one folder per test
/// process, under cargo's target tmp dir), so `verify`'s pins and rollback floors are never
/// read from or written to the user's own `~/.local/state`.
pub fn state_home() -> std::path::PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("state-{}", std::process::id()))
}

/// Runs `skillc ARGS` in `cwd` with a clean colour environment.
pub fn skillc<I, S>(cwd: &Path, args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let out = Command::new(SKILLC)
        .args(args)
        .current_dir(cwd)
        .env_remove("CLICOLOR_FORCE")
        .env("NO_COLOR", "1")
        .env("XDG_STATE_HOME", state_home())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {SKILLC}: {e}"));
    Run::from_output(out)
}

/// Runs `skillc ARGS` in `cwd` with `env` set, in a clean environment: no colours, no signing
/// key and no `SOURCE_DATE_EPOCH` inherited from the caller.
pub fn skillc_env(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = command_env(cwd, args, env);
    Run::from_output(cmd.output().unwrap_or_else(|e| panic!("cannot run {SKILLC}: {e}")))
}

/// The command of [`skillc_env`].
fn command_env(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(SKILLC);
    cmd.args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("SKILLC_SIGNING_KEY")
        .env_remove("SOURCE_DATE_EPOCH")
        .env("XDG_STATE_HOME", state_home());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// [`skillc_env`] for at most 180 s (a safety net for a loaded machine), standard input
/// closed: a command that would run until stopped (a `serve` that accepts its catalog) is
/// killed then, and its exit code is `None`. Its output is read while it runs (a full pipe
/// never holds it up).
pub fn skillc_bounded(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = command_env(cwd, args, env);
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("cannot run {SKILLC}: {e}"));
    let out = read_all(child.stdout.take().expect("stdout"));
    let err = read_all(child.stderr.take().expect("stderr"));
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap_or_else(|e| panic!("{SKILLC}: {e}")) {
            break status;
        }
        if start.elapsed() > std::time::Duration::from_secs(180) {
            let _ = child.kill();
            break child.wait().unwrap_or_else(|e| panic!("{SKILLC}: {e}"));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    Run::from_output(Output {
        status,
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    })
}

/// Reads `pipe` to its end on a thread of its own.
fn read_all<R: std::io::Read + Send + 'static>(mut pipe: R) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// A port of 127.0.0.1 on which nothing listens, for as long as the guard lives: it is the
/// local port of a connected socket, so a connection to it is refused, and no other socket
/// is given it meanwhile (a port taken from a listener then closed may be handed out again
/// before the test uses it).
pub fn refused_port() -> (impl Drop, u16) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let client = std::net::TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
    let (accepted, _) = listener.accept().expect("accept");
    let port = client.local_addr().expect("addr").port();
    (Guard(vec![client, accepted]), port)
}

/// Sockets kept open until dropped.
struct Guard(Vec<std::net::TcpStream>);

impl Drop for Guard {
    fn drop(&mut self) {
        self.0.clear();
    }
}

/// Every diagnostic of a `check --format json` report, as `(code, severity)` pairs.
pub fn diagnostics(report: &serde_json::Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for skill in report["skills"].as_array().map(Vec::as_slice).unwrap_or_default() {
        for d in skill["diagnostics"].as_array().map(Vec::as_slice).unwrap_or_default() {
            out.push((
                d["code"].as_str().unwrap_or_default().to_owned(),
                d["severity"].as_str().unwrap_or_default().to_owned(),
            ));
        }
    }
    out
}

/// The set of codes reported with `severity` in a `check --format json` report.
pub fn codes_with(report: &serde_json::Value, severity: &str) -> BTreeSet<String> {
    diagnostics(report)
        .into_iter()
        .filter(|(_, s)| s == severity)
        .map(|(c, _)| c)
        .collect()
}

/// insta settings: snapshots in `<repo>/snapshots/`, named exactly as given.
pub fn insta_settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots"));
    s.set_prepend_module_to_snapshot(false);
    s
}

/// A test that cannot run on this machine (its data or tool is missing): under CI (`CI` set)
/// a failure, so that CI never passes a test that did not test; elsewhere a line on the
/// terminal saying the test was skipped and why. The line is written to standard error
/// directly, past the test harness's output capture, so that `cargo test` shows it.
pub fn skip(why: &str) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    assert!(
        std::env::var_os("CI").is_none(),
        "{test}: {why}; under CI every test must run"
    );
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "note: {test}: SKIPPED: {why}");
}

/// The Python interpreter wrappers run with (`python3`), when it runs; else `None` after
/// [`skip`].
pub fn python3() -> Option<String> {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        Some("python3".to_owned())
    } else {
        skip("python3 is not installed");
        None
    }
}

/// The corpus: `$SKILLC_CORPUS`, else `$SKILLC_SHARED/corpus`, else `<repo>/../shared/corpus`.
/// `None` (after [`skip`]: a failure under CI) when absent; a failure when
/// `$SKILLC_REQUIRE_CORPUS` is set.
pub fn corpus() -> Option<PathBuf> {
    let candidates = match (std::env::var_os("SKILLC_CORPUS"), std::env::var_os("SKILLC_SHARED")) {
        (Some(p), _) => vec![PathBuf::from(p)],
        (None, Some(shared)) => vec![PathBuf::from(shared).join("corpus")],
        (None, None) => vec![manifest_dir().join("../shared/corpus")],
    };
    let found = candidates
        .iter()
        .find(|p| p.is_dir())
        .and_then(|p| p.canonicalize().ok());
    if found.is_none() {
        assert!(
            std::env::var_os("SKILLC_REQUIRE_CORPUS").is_none(),
            "SKILLC_REQUIRE_CORPUS is set but no corpus was found at {candidates:?}"
        );
        skip(&format!(
            "the corpus was not found at {candidates:?} (set SKILLC_CORPUS)"
        ));
    }
    found
}

/// Copies a folder tree (regular files and folders; symbolic links and other files are left
/// out, as corpus copies must not follow links).
pub fn copy_dir(from: &Path, to: &Path) {
    for e in walkdir::WalkDir::new(from).follow_links(false) {
        let e = e.expect("walkable");
        let dest = to.join(e.path().strip_prefix(from).expect("inside"));
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&dest).expect("mkdir");
        } else if e.file_type().is_file() {
            std::fs::copy(e.path(), &dest).expect("copy");
        }
    }
}

/// Writes a fixed test key (never a real one): deterministic signatures for snapshots.
pub fn write_test_key(path: &Path) {
    let key = skillc::SecretKey::from_seed([42u8; 32], *b"testKEY!");
    std::fs::write(path, key.to_file()).expect("write key");
}

/// Every file of a folder: relative path → (bytes, executable).
pub fn tree(dir: &Path) -> BTreeMap<String, (Vec<u8>, bool)> {
    use std::os::unix::fs::PermissionsExt;
    let mut m = BTreeMap::new();
    for entry in walkdir::WalkDir::new(dir) {
        let entry = entry.expect("walk");
        if entry.file_type().is_file() {
            let rel = entry
                .path()
                .strip_prefix(dir)
                .expect("prefix")
                .to_string_lossy()
                .into_owned();
            let exec = entry.metadata().expect("metadata").permissions().mode() & 0o111 != 0;
            m.insert(rel, (std::fs::read(entry.path()).expect("read"), exec));
        }
    }
    m
}

/// A file of `src/` as the tidy checks read it.
pub struct SourceFile {
    /// Its path.
    pub path: PathBuf,
    /// Its module path: `src/db/load.rs` → `["db", "load"]`, `src/db/mod.rs` → `["db"]`.
    pub module: Vec<String>,
    /// Its code outside tests: up to the first `#[cfg(test)]` item that is not the declaration
    /// of a test module kept in its own file (`#[cfg(test)] mod tests;`).
    pub code: String,
}

/// Every `.rs` file under `src/` but the crate roots and the test modules kept in their own
/// files (declared `#[cfg(test)] mod name;` by their parent), sorted by path.
pub fn source_files() -> Vec<SourceFile> {
    let root = manifest_dir().join("src");
    let mut files: Vec<(PathBuf, Vec<String>, String)> = walkdir::WalkDir::new(&root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
        .filter_map(|e| {
            let rel = e.path().strip_prefix(&root).ok()?;
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            Some((e.path().to_path_buf(), module_path(rel), text))
        })
        .collect();
    files.sort();
    let mut test_modules: BTreeSet<Vec<String>> = BTreeSet::new();
    for (_, module, text) in &files {
        for name in test_module_declarations(text) {
            let mut child = module.clone();
            child.push(name);
            test_modules.insert(child);
        }
    }
    files
        .into_iter()
        .filter(|(_, module, _)| !module.is_empty() && !test_modules.contains(module))
        .map(|(path, module, text)| SourceFile {
            path,
            module,
            code: outside_tests(&text),
        })
        .collect()
}

fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|l| l == "mod") {
        parts.pop();
    }
    if parts == ["lib"] || parts == ["main"] {
        parts.clear();
    }
    parts
}

/// The `#[cfg(test)] mod name;` declarations of a file, with the declaration's span.
fn test_declarations(text: &str) -> Vec<(String, std::ops::Range<usize>)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find("#[cfg(test)]").map(|i| i + from) {
        let after = &text[i + "#[cfg(test)]".len()..];
        let rest = after.trim_start();
        let rest = rest
            .strip_prefix("pub(crate) ")
            .or_else(|| rest.strip_prefix("pub "))
            .unwrap_or(rest);
        if let Some(decl) = rest.strip_prefix("mod ")
            && let Some(end) = decl.find([';', '{'])
            && decl.as_bytes()[end] == b';'
        {
            let name = decl[..end].trim().to_owned();
            let stop = text.len() - decl.len() + end + 1;
            found.push((name, i..stop));
        }
        from = i + 1;
    }
    found
}

fn test_module_declarations(text: &str) -> Vec<String> {
    test_declarations(text).into_iter().map(|(n, _)| n).collect()
}

/// The text before the first `#[cfg(test)]` item, the declarations of test modules in their
/// own files left out (they declare, they hold no code).
fn outside_tests(text: &str) -> String {
    let mut code = text.to_owned();
    for (_, span) in test_declarations(text).into_iter().rev() {
        // Blank lines in their place keep the line numbers of what follows.
        let lines = text[span.clone()].matches('\n').count();
        code.replace_range(span, &"\n".repeat(lines));
    }
    code.split("#[cfg(test)]").next().unwrap_or_default().to_owned()
}

/// The build options of a library-level test: the project at `dir` with its skills in
/// `dir/skills`, out/ and .skillc/ inside it, the built-in vocabulary, a fixed test key
/// and clock (`SOURCE_DATE_EPOCH` 1,800,000,000), a 365-day expiry, every default else.
pub fn build_options(dir: &Path) -> skillc::BuildOptions {
    skillc::BuildOptions {
        root: dir.to_path_buf(),
        roots: vec![PathBuf::from("skills")],
        out_dir: dir.join("out"),
        state_dir: dir.join(".skillc"),
        limits: skillc::Limits::default(),
        skip: vec![],
        expires_days: 365,
        key: skillc::SecretKey::from_seed([7; 32], *b"testKEY!"),
        sde: Some(1_800_000_000),
        vocab_path: skillc::BUILT_IN_VOCABULARY_PATH.into(),
        translations: String::new(),
        admission: Default::default(),
        fail_on: Default::default(),
        imported_from: Default::default(),
        menu: Default::default(),
        remote: None,
    }
}

//! The external embedder (RUNTIME.md §1) against a local HTTP server on 127.0.0.1 that speaks
//! the OpenAI-compatible `POST /v1/embeddings` API with deterministic vectors: vectors are
//! cached (a second build asks only for the changed skill), a 5xx at build time is an error
//! naming the URL, and the server down at query time gives a warning and a trigger/always-on
//! menu, exit 0.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::common::{copy_dir, manifest_dir, skillc_env, write_test_key};

/// A deterministic vector of a text: letter counts, normalised by the client.
fn vector(text: &str) -> Vec<f32> {
    let mut v = vec![0.01f32; 26];
    for b in text.bytes().filter(u8::is_ascii_alphabetic) {
        v[usize::from(b.to_ascii_lowercase() - b'a')] += 1.0;
    }
    v
}

/// The server: counts the texts it embedded; answers 500 while `fail` is set.
struct Server {
    port: u16,
    texts: Arc<AtomicUsize>,
    fail: Arc<Mutex<bool>>,
}

fn serve() -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let texts = Arc::new(AtomicUsize::new(0));
    let fail = Arc::new(Mutex::new(false));
    let (t, f) = (texts.clone(), fail.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming().take(1000) {
            let Ok(mut s) = stream else { continue };
            let mut r = BufReader::new(s.try_clone().expect("clone"));
            let mut len = 0usize;
            loop {
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0u8; len];
            let _ = r.read_exact(&mut body);
            let (status, answer) = if *f.lock().expect("lock") {
                ("500 Internal Server Error", "{\"error\": \"down\"}".to_owned())
            } else {
                let req: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
                let input: Vec<String> = req["input"]
                    .as_array()
                    .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_owned)).collect())
                    .unwrap_or_default();
                t.fetch_add(input.len(), Ordering::SeqCst);
                let data: Vec<serde_json::Value> = input
                    .iter()
                    .enumerate()
                    .map(|(i, x)| serde_json::json!({"object": "embedding", "index": i, "embedding": vector(x)}))
                    .collect();
                (
                    "200 OK",
                    serde_json::json!({"object": "list", "data": data, "model": req["model"]}).to_string(),
                )
            };
            let _ = write!(
                s,
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    Server { port, texts, fail }
}

fn project(port: u16) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(&manifest_dir().join("tests/fixtures/menu"), dir.path());
    write_test_key(&dir.path().join("test.key"));
    let p = dir.path().join("pipeline.toml");
    let text = std::fs::read_to_string(&p).expect("read").replace(
        "[menu]\nsize = 3\n",
        &format!(
            "[menu]\nsize = 3\nembedder = {{ url = \"http://127.0.0.1:{port}/v1/embeddings\", model = \"letters\", timeout_ms = 120000 }}\n\
             threshold = {{ embedder = \"lexical/4+openai:letters+fuse/4\", recipe = \"doc/1\", tau = 0.3 }}\n"
        ),
    );
    std::fs::write(&p, text).expect("write");
    dir
}

fn build(dir: &Path) -> crate::common::Run {
    skillc_env(
        dir,
        &["build", "--key", "test.key"],
        &[("SOURCE_DATE_EPOCH", "1800000000")],
    )
}

#[test]
fn vectors_are_cached_and_failures_are_clear() {
    let server = serve();
    let dir = project(server.port);
    let r = build(dir.path());
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    // `fuse/4` (as `fuse/3`) embeds each skill's whole document, its head and its opening
    // prose: 10 + 10 + 8 (the twins' bodies have no prose, so no opening).
    assert_eq!(
        server.texts.load(Ordering::SeqCst),
        28,
        "the fused parts of each catalog skill"
    );
    assert!(dir.path().join("out/menu.vec").is_file());
    // The menu fuses the two scores under the fused embedder's id.
    let m = skillc_env(
        dir.path(),
        &["menu", "--turn", "merge pdf documents", "--state", "s.json"],
        &[],
    );
    assert_eq!(m.code, Some(0), "{}", m.stderr);
    let v = m.json();
    assert_eq!(v["embedder"], "lexical/4+openai:letters+fuse/4");
    assert_eq!(v["menu"][0]["slug"], "pdf-forms", "{v}");
    // One skill edited: only its texts that changed are embedded again.
    let md = dir.path().join("skills/calendar-helper/SKILL.md");
    let text = std::fs::read_to_string(&md)
        .expect("read")
        .replace("Books meeting rooms", "Books rooms");
    std::fs::write(&md, text).expect("write");
    let before = server.texts.load(Ordering::SeqCst);
    let r = build(dir.path());
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    // The description is in the whole document and the head, not in the opening.
    assert_eq!(server.texts.load(Ordering::SeqCst) - before, 2);
    // A 5xx at build time: a clear error naming the URL, nothing half-written.
    *server.fail.lock().expect("lock") = true;
    std::fs::write(&md, std::fs::read_to_string(&md).expect("read") + "\nMore.\n").expect("write");
    let r = build(dir.path());
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr
            .contains(&format!("http://127.0.0.1:{}/v1/embeddings", server.port))
            && r.stderr.contains("HTTP 500"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_embedder_down_at_query_time_degrades_with_a_warning() {
    let server = serve();
    let dir = project(server.port);
    let r = build(dir.path());
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    *server.fail.lock().expect("lock") = true;
    let m = skillc_env(
        dir.path(),
        &["menu", "--turn", "we are redeploying now", "--state", "s.json"],
        &[],
    );
    assert_eq!(m.code, Some(0), "{}", m.stderr);
    assert!(
        m.stderr.contains("warning: the embedder is unavailable"),
        "{}",
        m.stderr
    );
    let v = m.json();
    assert_eq!(v["menu"][0]["slug"], "deploy-tool");
    assert_eq!(v["menu"][0]["pass"], "trigger");
    let passes: Vec<&str> = v["menu"]
        .as_array()
        .expect("menu")
        .iter()
        .filter_map(|m| m["pass"].as_str())
        .collect();
    assert!(passes.iter().all(|p| *p == "trigger" || *p == "always"), "{v}");
    assert_eq!(v["warnings"].as_array().map(Vec::len), Some(1));
}

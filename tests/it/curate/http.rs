//! The OpenAI-compatible endpoint path, against a real HTTP server on 127.0.0.1 started by
//! the test: the request it receives, the verdict it answers, usage-based cost, and its
//! failures (an HTTP error, nobody listening, an answer that is not a verdict).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::support::P;

/// One request the server saw: path, `authorization` header, body.
type Seen = Arc<Mutex<Vec<(String, String, Value)>>>;

/// Serves chat completions on 127.0.0.1 until the test ends; every request gets `status`
/// and the chat completion whose message content is `content`. Returns the base URL.
fn serve(status: u16, content: &'static str) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen: Seen = Arc::default();
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let path = line.split_whitespace().nth(1).unwrap_or("").to_owned();
            let (mut length, mut auth) = (0usize, String::new());
            loop {
                let mut h = String::new();
                reader.read_line(&mut h).unwrap();
                if h.trim().is_empty() {
                    break;
                }
                let (k, v) = h.split_once(':').unwrap();
                match k.trim().to_ascii_lowercase().as_str() {
                    "content-length" => length = v.trim().parse().unwrap(),
                    "authorization" => auth = v.trim().to_owned(),
                    _ => {}
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            log.lock()
                .unwrap()
                .push((path, auth, serde_json::from_slice(&body).unwrap_or(Value::Null)));
            let answer = json!({
                "id": "c1", "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100},
            })
            .to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    (url, seen)
}

fn project(url: &str) -> P {
    let p = P::with_curator(&format!(
        "model = {{ url = \"{url}\", model = \"tiny-curator\", api_key_env = \"CURATOR_TEST_KEY\", timeout_secs = 120 }}"
    ));
    p.agent_skill("stale-one", "Explain pasta recipes.", 200);
    p
}

fn run(p: &P) -> crate::common::Run {
    p.curate_at(
        super::support::NOW,
        &["run", "--format", "json"],
        &[("CURATOR_TEST_KEY", "sekret")],
    )
}

#[test]
fn an_openai_compatible_endpoint_confirms_an_archive() {
    let (url, seen) = serve(
        200,
        "```json\n{\"action\": \"archive\", \"rationale\": \"unused\"}\n```",
    );
    let p = project(&url);
    let r = run(&p);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let r = r.json();
    assert_eq!(r["actions"][0]["skill"], "stale-one");
    // Cost from the reported usage: 1000 input tokens at $1/Mtok, 100 output at $5/Mtok.
    assert_eq!(r["spend_usd"], "0.001500");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    let (path, auth, body) = &seen[0];
    assert_eq!(
        (path.as_str(), auth.as_str()),
        ("/v1/chat/completions", "Bearer sekret")
    );
    assert_eq!(
        (body["model"].as_str(), body["max_tokens"].as_u64()),
        (Some("tiny-curator"), Some(4096))
    );
    let request: Value = serde_json::from_str(body["messages"][1]["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        (request["schema"].as_str(), request["task"].as_str()),
        (Some("skillc.curator.request/1"), Some("archive"))
    );
    assert_eq!(request["skills"][0]["name"], "stale-one");
    assert_eq!(p.curated()[0]["model"], "tiny-curator");
}

#[test]
fn endpoint_failures_are_unavailable_or_skips() {
    let (url, _) = serve(500, "{}");
    let p = project(&url);
    let r = run(&p);
    assert_eq!(r.code, Some(1));
    let j = r.json();
    assert_eq!(j["reason"], "model_unavailable");
    assert!(j["warnings"].to_string().contains("HTTP 500"), "{j}");
    assert!(p.archived().is_empty());

    let (_refused, port) = crate::common::refused_port();
    let p = project(&format!("http://127.0.0.1:{port}/v1"));
    assert_eq!(run(&p).json()["reason"], "model_unavailable");
    assert!(p.archived().is_empty());

    let (url, _) = serve(200, "I would archive it, yes.");
    let p = project(&url);
    let j = run(&p).json();
    assert_eq!(j["reason"], "completed");
    assert!(
        j["skipped"][0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("invalid verdict"),
        "{j}"
    );
    assert!(p.archived().is_empty());
    // Without the key in the environment, nothing is sent.
    let (url, seen) = serve(200, "{\"action\": \"archive\"}");
    let p = project(&url);
    let j = p.curate(&["run", "--format", "json"]).json();
    assert_eq!(j["reason"], "model_unavailable");
    assert!(j["warnings"].to_string().contains("CURATOR_TEST_KEY"), "{j}");
    assert!(seen.lock().unwrap().is_empty());
}

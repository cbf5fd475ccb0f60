//! The auxiliary model (RUNTIME.md §3, "The auxiliary model"): one request, one verdict, through
//! a command (the request as JSON on stdin, the verdict as JSON on stdout) or an
//! OpenAI-compatible chat endpoint (`POST …/v1/chat/completions`, the request as the user
//! message, the verdict as the reply). IO: runs processes and makes HTTP requests.
//!
//! The request (`skillc.curator.request/1`) and the verdict shapes are in docs/json.md. A call
//! that cannot be made or answered — the command missing, failing, or past `timeout_secs`; the
//! endpoint unreachable, answering an HTTP error or something that is not a chat completion —
//! is [`Unavailable`]. An answer that is not a verdict is a verdict error: the run skips that
//! candidate. Verdicts are validated against the candidate by the caller.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::budget::{Pricing, Usd};
use super::config::{ModelConfig, Transport};

/// Schema name of a request.
pub const REQUEST_SCHEMA: &str = "skillc.curator.request/1";

/// Most bytes read from a command's stdout or an endpoint's answer.
pub const MAX_ANSWER_BYTES: u64 = 8 << 20;

/// The system message sent to a chat endpoint.
pub const SYSTEM_PROMPT: &str = "You are the curator of a library of agent-written skills (SKILL.md files). \
You receive one JSON request describing a task (archive, consolidate or edit) and answer with exactly one JSON \
object, the verdict, as the request's `answer` field describes. No prose outside the JSON.";

/// One skill as a request shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RequestSkill {
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// The whole SKILL.md (consolidate, edit) …
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skill_md: Option<String>,
    /// … or the first 500 characters of the body (archive).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body_excerpt: Option<String>,
    /// Line number (1-based) of the body's first line in `skill_md`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body_first_line: Option<usize>,
    /// Its last load.
    pub last_loaded_at: Option<String>,
    /// Whole days without activity.
    pub inactive_days: Option<i64>,
    /// Loads in the archive window.
    pub loads_in_window: usize,
}

/// A request to the model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Request {
    /// [`REQUEST_SCHEMA`].
    pub schema: &'static str,
    /// `archive`, `consolidate` or `edit`.
    pub task: &'static str,
    /// What is asked, in English.
    pub instructions: &'static str,
    /// The verdict's shape.
    pub answer: Value,
    /// The output cap of this call, in tokens.
    pub max_output_tokens: u32,
    /// The skills concerned.
    pub skills: Vec<RequestSkill>,
    /// Edit only: the failures seen after loads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failures: Option<Value>,
}

/// Token counts a model reported.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct Usage {
    /// Input tokens.
    #[serde(default)]
    pub input_tokens: u64,
    /// Output tokens.
    #[serde(default)]
    pub output_tokens: u64,
}

/// A verdict, as answered (validated by the caller against its candidate). Unknown fields
/// are ignored.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct Verdict {
    /// `archive`, `consolidate`, `edit` or `skip`.
    pub action: String,
    /// Why (skip).
    #[serde(default)]
    pub reason: Option<String>,
    /// Why (any action).
    #[serde(default)]
    pub rationale: Option<String>,
    /// Consolidate: the skill kept.
    #[serde(default)]
    pub survivor: Option<String>,
    /// Consolidate: the skills archived into it.
    #[serde(default)]
    pub archive: Option<Vec<String>>,
    /// Consolidate: the survivor's new body.
    #[serde(default)]
    pub body: Option<String>,
    /// Edit: a unified diff of one hunk against SKILL.md.
    #[serde(default)]
    pub diff: Option<String>,
    /// Token counts, when the command reports them.
    #[serde(default)]
    pub usage: Option<Usage>,
}

/// The model could not be reached or did not answer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unavailable(pub String);

/// A call's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The verdict, or why the answer is not one.
    pub verdict: Result<Verdict, String>,
    /// What the call cost: from the reported usage, else the estimate.
    pub cost: Usd,
    /// How long it took, in milliseconds.
    pub latency_ms: u64,
}

/// The bytes a call sends: the request JSON (command) or the chat-completion body (endpoint).
pub fn payload(cfg: &ModelConfig, request: &Request) -> Vec<u8> {
    let text = serde_json::to_string(request).unwrap_or_default();
    match &cfg.transport {
        Transport::Command(_) => text.into_bytes(),
        Transport::Http { .. } => json!({
            "model": cfg.name,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": text},
            ],
            "max_tokens": cfg.max_output_tokens,
            "temperature": 0,
        })
        .to_string()
        .into_bytes(),
    }
}

/// The estimate of a call, from the bytes it sends and the output cap.
pub fn estimate(cfg: &ModelConfig, pricing: &Pricing, payload: &[u8]) -> Usd {
    pricing.estimate(payload.len(), cfg.max_output_tokens)
}

/// Makes one call with `payload` (from [`payload`]); a command runs in `cwd`.
///
/// # Errors
/// [`Unavailable`] when the model cannot be reached or does not answer in time.
pub fn call(cfg: &ModelConfig, pricing: &Pricing, cwd: &Path, payload: &[u8]) -> Result<Answer, Unavailable> {
    let started = Instant::now();
    let estimate = estimate(cfg, pricing, payload);
    let (verdict, usage) = match &cfg.transport {
        Transport::Command(argv) => {
            let out = run_command(argv, cwd, payload, Duration::from_secs(cfg.timeout_secs))?;
            let verdict = parse_verdict(&String::from_utf8_lossy(&out));
            let usage = verdict.as_ref().ok().and_then(|v| v.usage);
            (verdict, usage)
        }
        Transport::Http { url, api_key_env } => {
            chat(&endpoint(url), api_key_env.as_deref(), payload, cfg.timeout_secs)?
        }
    };
    let cost = usage.map_or(estimate, |u| pricing.cost(u.input_tokens, u.output_tokens));
    Ok(Answer {
        verdict,
        cost,
        latency_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    })
}

/// The chat-completions address of a configured URL: kept when it ends in
/// `/chat/completions`, completed after `/v1`, else `/v1/chat/completions` appended.
pub fn endpoint(url: &str) -> String {
    let u = url.trim().trim_end_matches('/');
    if u.ends_with("/chat/completions") {
        u.to_owned()
    } else if u.ends_with("/v1") {
        format!("{u}/chat/completions")
    } else {
        format!("{u}/v1/chat/completions")
    }
}

/// Parses a verdict from an answer's text: the JSON object itself, or one inside a Markdown
/// code fence.
///
/// # Errors
/// Why the text is not a verdict.
pub fn parse_verdict(text: &str) -> Result<Verdict, String> {
    let t = text.trim();
    let t = t
        .strip_prefix("```json")
        .or_else(|| t.strip_prefix("```"))
        .and_then(|r| r.trim_end().strip_suffix("```"))
        .unwrap_or(t)
        .trim();
    serde_json::from_str::<Verdict>(t).map_err(|e| format!("the answer is not a verdict ({e})"))
}

fn first_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    line.chars().take(200).collect()
}

fn run_command(argv: &[String], cwd: &Path, input: &[u8], timeout: Duration) -> Result<Vec<u8>, Unavailable> {
    let Some((program, args)) = argv.split_first() else {
        return Err(Unavailable("no model command".into()));
    };
    let mut child = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Unavailable(format!("cannot run the model command `{program}`: {e}")))?;
    let mut stdin = child.stdin.take();
    let input = input.to_vec();
    // Write and read on threads: a command may answer before it has read all of its input.
    let writer = std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            let _ = s.write_all(&input);
        }
    });
    let read = |pipe: Option<Box<dyn Read + Send>>, cap: u64| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(p) = pipe {
                let _ = p.take(cap).read_to_end(&mut buf);
            }
            buf
        })
    };
    let stdout = read(
        child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>),
        MAX_ANSWER_BYTES,
    );
    let stderr = read(
        child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>),
        64 << 10,
    );
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Unavailable(format!(
                    "the model command timed out after {}s",
                    timeout.as_secs()
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(Unavailable(format!("waiting for the model command: {e}"))),
        }
    };
    let _ = writer.join();
    let out = stdout.join().unwrap_or_default();
    let err = stderr.join().unwrap_or_default();
    if !status.success() {
        let why = first_line(&err);
        return Err(Unavailable(format!(
            "the model command failed ({status}){}",
            if why.is_empty() {
                String::new()
            } else {
                format!(": {why}")
            }
        )));
    }
    Ok(out)
}

type ChatResult = (Result<Verdict, String>, Option<Usage>);

fn chat(url: &str, api_key_env: Option<&str>, body: &[u8], timeout_secs: u64) -> Result<ChatResult, Unavailable> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(timeout_secs)))
        .user_agent(concat!("skillc/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let mut req = agent.post(url).header("Content-Type", "application/json");
    if let Some(var) = api_key_env {
        let key = std::env::var(var)
            .ok()
            .filter(|k| !k.is_empty())
            .ok_or_else(|| Unavailable(format!("the environment variable {var} (api_key_env) is not set")))?;
        req = req.header("Authorization", &format!("Bearer {key}"));
    }
    let mut resp = req.send(body).map_err(|e| match e {
        ureq::Error::StatusCode(code) => Unavailable(format!("HTTP {code} from {url}")),
        ureq::Error::Timeout(_) => Unavailable(format!("{url} timed out after {timeout_secs}s")),
        other => Unavailable(format!("cannot reach {url}: {other}")),
    })?;
    let bytes = resp
        .body_mut()
        .with_config()
        .limit(MAX_ANSWER_BYTES)
        .read_to_vec()
        .map_err(|e| Unavailable(format!("reading the answer of {url}: {e}")))?;
    let v: Value = serde_json::from_slice(&bytes)
        .map_err(|e| Unavailable(format!("{url} did not answer a chat completion ({e})")))?;
    let content = v
        .pointer("/choices/0/message/content")
        .and_then(Value::as_str)
        .ok_or_else(|| Unavailable(format!("{url} answered no `choices[0].message.content`")))?;
    let usage = v.get("usage").map(|u| Usage {
        input_tokens: u.get("prompt_tokens").and_then(Value::as_u64).unwrap_or(0),
        output_tokens: u.get("completion_tokens").and_then(Value::as_u64).unwrap_or(0),
    });
    Ok((parse_verdict(content), usage))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_and_fenced_verdicts() {
        assert_eq!(
            endpoint("http://h:1/v1/chat/completions"),
            "http://h:1/v1/chat/completions"
        );
        assert_eq!(endpoint("http://h:1/v1/"), "http://h:1/v1/chat/completions");
        assert_eq!(endpoint("http://h:1"), "http://h:1/v1/chat/completions");
        let v = parse_verdict("```json\n{\"action\": \"skip\", \"reason\": \"no\", \"extra\": 1}\n```").unwrap();
        assert_eq!((v.action.as_str(), v.reason.as_deref()), ("skip", Some("no")));
        assert!(parse_verdict("I think you should archive it").is_err());
    }

    #[cfg(unix)]
    #[test]
    fn commands_fail_time_out_or_answer() {
        let cfg = |argv: &[&str], timeout_secs| ModelConfig {
            transport: Transport::Command(argv.iter().map(|s| s.to_string()).collect()),
            name: "m".into(),
            timeout_secs,
            max_output_tokens: 10,
        };
        let p = Pricing::default();
        let cwd = Path::new(".");
        let ok = call(
            &cfg(&["sh", "-c", "cat >/dev/null; echo '{\"action\":\"skip\"}'"], 5),
            &p,
            cwd,
            b"{}",
        )
        .unwrap();
        assert_eq!(ok.verdict.unwrap().action, "skip");
        assert_eq!(ok.cost, p.estimate(2, 10));
        let e = call(&cfg(&["sh", "-c", "echo boom >&2; exit 3"], 5), &p, cwd, b"{}").unwrap_err();
        assert!(e.0.contains("failed") && e.0.contains("boom"), "{e}");
        let e = call(&cfg(&["sleep", "5"], 1), &p, cwd, b"{}").unwrap_err();
        assert!(e.0.contains("timed out"), "{e}");
        let e = call(&cfg(&["/nonexistent/model"], 1), &p, cwd, b"{}").unwrap_err();
        assert!(e.0.contains("cannot run"), "{e}");
    }
}

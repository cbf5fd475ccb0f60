//! The external embedder (IO): the OpenAI-compatible `POST /v1/embeddings` API that Ollama,
//! llama.cpp's server, vLLM and TEI expose (RUNTIME.md §1). Request
//! `{"model", "input": [texts]}`; answer `{"data": [{"index", "embedding": [floats]}]}`.
//! Vectors are normalised here, so any server's answer meets the [`Embedder`] contract.

use std::time::Duration;

use super::{EmbedError, Embedder};

/// Texts per request at build time.
pub const BATCH: usize = 64;
/// Largest answer read, in bytes.
const MAX_ANSWER: u64 = 256 * 1024 * 1024;

/// An OpenAI-compatible embeddings endpoint.
#[derive(Clone, Debug)]
pub struct OpenAi {
    url: String,
    model: String,
    timeout_ms: u64,
    agent: ureq::Agent,
}

impl OpenAi {
    /// A client for `url` (the endpoint, `…/v1/embeddings`) and `model` (sent with each
    /// request), each request bounded by `timeout_ms`; no request is made yet.
    pub fn new(url: &str, model: &str, timeout_ms: u64) -> OpenAi {
        let timeout = Duration::from_millis(timeout_ms);
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .timeout_connect(Some(timeout.min(Duration::from_secs(5))))
            .http_status_as_error(false)
            .user_agent(concat!("skillc/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        OpenAi {
            url: url.to_owned(),
            model: model.to_owned(),
            timeout_ms,
            agent,
        }
    }

    /// The id an endpoint's model is known by: `openai:<model>`.
    pub fn id_of(model: &str) -> String {
        format!("openai:{model}")
    }
}

#[derive(serde::Deserialize)]
struct Answer {
    data: Vec<Datum>,
}

#[derive(serde::Deserialize)]
struct Datum {
    #[serde(default)]
    index: Option<usize>,
    embedding: Vec<f32>,
}

impl Embedder for OpenAi {
    fn id(&self) -> String {
        OpenAi::id_of(&self.model)
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let url = &self.url;
        let down = |message: String| EmbedError::Unavailable {
            url: url.clone(),
            message,
        };
        let bad = |message: String| EmbedError::BadAnswer {
            url: url.clone(),
            message,
        };
        let body = serde_json::json!({"model": self.model, "input": texts}).to_string();
        let mut resp = self
            .agent
            .post(url)
            .header("Content-Type", "application/json")
            .send(body)
            .map_err(|e| match e {
                ureq::Error::Timeout(_) => down(format!("no answer within {} ms", self.timeout_ms)),
                other => down(other.to_string()),
            })?;
        let status = resp.status().as_u16();
        let bytes = resp
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER)
            .read_to_vec()
            .map_err(|e| down(format!("reading the answer: {e}")))?;
        if !(200..300).contains(&status) {
            let text = String::from_utf8_lossy(&bytes);
            let text: String = text.chars().take(200).collect();
            return Err(down(format!("HTTP {status}: {}", text.trim())));
        }
        let answer: Answer =
            serde_json::from_slice(&bytes).map_err(|e| bad(format!("not an embeddings answer: {e}")))?;
        let mut data = answer.data;
        if data.iter().all(|d| d.index.is_some()) {
            data.sort_by_key(|d| d.index);
        }
        let mut vectors: Vec<Vec<f32>> = data.into_iter().map(|d| d.embedding).collect();
        super::check_answer(url, texts.len(), &vectors)?;
        vectors.iter_mut().for_each(|v| super::normalize(v));
        Ok(vectors)
    }
}

//! A BERT-family sentence encoder run in-process on the CPU (cargo feature `local-model`):
//! all-MiniLM-L6-v2, bge-small and their kin, computed as sentence-transformers computes them.
//!
//! A model is a folder in the sentence-transformers layout, read once by [`LocalModel::load`]
//! and never fetched: `config.json` (a BERT `config`), `tokenizer.json` (a Hugging Face
//! tokenizer), `model.safetensors` (F32, F16 or BF16 weights), and optionally
//! `1_Pooling/config.json` (mean or CLS pooling; mean when absent) and
//! `sentence_bert_config.json` (`max_seq_length`; the model's `max_position_embeddings` when
//! absent). The recipe: tokenize with `[CLS]`/`[SEP]`, truncate to `max_seq_length` tokens,
//! run the encoder, pool (mean over every token, special tokens included, or `[CLS]`), scale to
//! unit length.
//!
//! Determinism: texts are grouped by token count and only texts of equal length share a
//! forward pass, so no text is padded and a vector depends on its text alone — never on the
//! batch it came in (an incremental build re-embeds one skill and gets the bits a full build
//! gets; `tests/it/local_model.rs` checks it).

use std::fmt;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, IndexOp as _, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use sha2::Digest as _;
use tokenizers::{Tokenizer, TruncationParams};

use super::{EmbedError, Embedder};

/// Version of this module's recipe (tokenize, truncate, pool, normalise), part of every id:
/// bump it when a change here changes a vector.
pub const RECIPE: u32 = 1;

/// Most texts of one token count in one forward pass (bounds memory: 16 × 512 tokens × the
/// attention matrices of one layer stay under ~200 MB for a 12-head model).
const BATCH: usize = 16;

/// The files of a model folder, in the order they enter the model digest.
const WEIGHTS: &str = "model.safetensors";
const CONFIG: &str = "config.json";
const TOKENIZER: &str = "tokenizer.json";
const POOLING: &str = "1_Pooling/config.json";
const SENTENCE: &str = "sentence_bert_config.json";

/// Why a local model could not be loaded or run.
#[derive(Debug, thiserror::Error)]
pub enum LocalModelError {
    /// A file of the model folder could not be read.
    #[error("{}: cannot read it: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The IO error.
        source: std::io::Error,
    },
    /// A file was read but is not what a sentence-transformers BERT model has.
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, and what to do.
        message: String,
    },
    /// The tokenizer or the encoder failed on an input (a bug or a broken model).
    #[error("{}: the model failed: {message}", path.display())]
    Run {
        /// The model folder.
        path: PathBuf,
        /// The error of the tokenizer or of candle.
        message: String,
    },
}

/// How token vectors become one sentence vector (`1_Pooling/config.json`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pooling {
    /// The mean of every token's vector (all-MiniLM-L6-v2, e5).
    Mean,
    /// The `[CLS]` token's vector (bge).
    Cls,
}

#[derive(serde::Deserialize)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    #[serde(default)]
    pooling_mode_mean_sqrt_len_tokens: bool,
}

#[derive(serde::Deserialize)]
struct SentenceConfig {
    max_seq_length: Option<usize>,
}

/// A loaded sentence encoder. Cheap to share (`&self` everywhere); `Send + Sync`.
pub struct LocalModel {
    dir: PathBuf,
    id: String,
    model: BertModel,
    tokenizer: Tokenizer,
    pooling: Pooling,
    max_tokens: usize,
    dims: usize,
}

impl fmt::Debug for LocalModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalModel")
            .field("id", &self.id)
            .field("pooling", &self.pooling)
            .field("max_tokens", &self.max_tokens)
            .field("dims", &self.dims)
            .finish_non_exhaustive()
    }
}

fn read(path: PathBuf) -> Result<Vec<u8>, LocalModelError> {
    std::fs::read(&path).map_err(|source| LocalModelError::Read { path, source })
}

fn read_optional(path: PathBuf) -> Result<Option<Vec<u8>>, LocalModelError> {
    match std::fs::read(&path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(source) => Err(LocalModelError::Read { path, source }),
    }
}

fn invalid(path: &Path, message: impl fmt::Display) -> LocalModelError {
    LocalModelError::Invalid {
        path: path.to_owned(),
        message: message.to_string(),
    }
}

fn pooling(dir: &Path, bytes: Option<&[u8]>) -> Result<Pooling, LocalModelError> {
    let path = dir.join(POOLING);
    let Some(bytes) = bytes else {
        return Ok(Pooling::Mean);
    };
    let c: PoolingConfig = serde_json::from_slice(bytes).map_err(|e| invalid(&path, e))?;
    match (
        c.pooling_mode_mean_tokens,
        c.pooling_mode_cls_token,
        c.pooling_mode_max_tokens || c.pooling_mode_mean_sqrt_len_tokens,
    ) {
        (true, false, false) => Ok(Pooling::Mean),
        (false, true, false) => Ok(Pooling::Cls),
        _ => Err(invalid(
            &path,
            "only one of `pooling_mode_mean_tokens` or `pooling_mode_cls_token` is supported",
        )),
    }
}

fn max_tokens(dir: &Path, bytes: Option<&[u8]>, config: &Config) -> Result<usize, LocalModelError> {
    let path = dir.join(SENTENCE);
    let wanted = match bytes {
        Some(bytes) => serde_json::from_slice::<SentenceConfig>(bytes)
            .map_err(|e| invalid(&path, e))?
            .max_seq_length
            .unwrap_or(config.max_position_embeddings),
        None => config.max_position_embeddings,
    };
    if wanted < 2 {
        return Err(invalid(&path, "`max_seq_length` must leave room for [CLS] and [SEP]"));
    }
    Ok(wanted.min(config.max_position_embeddings))
}

/// The digest that names a model in its id: SHA-256 over each file's name, length and bytes
/// (an absent optional file counts as its name alone), first 12 hex digits.
fn digest(files: &[(&str, Option<&[u8]>)]) -> String {
    let mut h = sha2::Sha256::new();
    for (name, bytes) in files {
        h.update(name.as_bytes());
        h.update([0]);
        if let Some(b) = bytes {
            h.update((b.len() as u64).to_le_bytes());
            h.update(b);
        }
    }
    crate::util::hex(&h.finalize()[..6])
}

/// The bytes of a model folder's files.
struct Files {
    config: Vec<u8>,
    tokenizer: Vec<u8>,
    weights: Vec<u8>,
    pooling: Option<Vec<u8>>,
    sentence: Option<Vec<u8>>,
}

impl Files {
    fn read(dir: &Path) -> Result<Files, LocalModelError> {
        Ok(Files {
            config: read(dir.join(CONFIG))?,
            pooling: read_optional(dir.join(POOLING))?,
            sentence: read_optional(dir.join(SENTENCE))?,
            tokenizer: read(dir.join(TOKENIZER))?,
            weights: read(dir.join(WEIGHTS))?,
        })
    }

    /// The model's id (see [`LocalModel::id`]). The name comes from the architecture, never
    /// from the folder: the same model in another folder has the same id.
    fn id(&self) -> String {
        #[derive(serde::Deserialize)]
        struct Shape {
            model_type: Option<String>,
            num_hidden_layers: Option<usize>,
            hidden_size: Option<usize>,
        }
        let digest = digest(&[
            (CONFIG, Some(&self.config)),
            (TOKENIZER, Some(&self.tokenizer)),
            (WEIGHTS, Some(&self.weights)),
            (POOLING, self.pooling.as_deref()),
            (SENTENCE, self.sentence.as_deref()),
        ]);
        let name = match serde_json::from_slice::<Shape>(&self.config) {
            Ok(Shape {
                model_type,
                num_hidden_layers: Some(layers),
                hidden_size: Some(hidden),
            }) => format!("{}-{layers}x{hidden}", model_type.as_deref().unwrap_or("bert")),
            _ => "model".to_owned(),
        };
        format!("local:{name}@{digest}/{RECIPE}")
    }
}

impl LocalModel {
    /// Loads the model in folder `dir` (the sentence-transformers layout, see the module doc).
    /// Reads every file whole (no memory map); about 0.2 s for all-MiniLM-L6-v2.
    ///
    /// # Errors
    /// [`LocalModelError::Read`] when a required file is missing or unreadable,
    /// [`LocalModelError::Invalid`] when one is not what a BERT sentence encoder has.
    pub fn load(dir: &Path) -> Result<LocalModel, LocalModelError> {
        let files = Files::read(dir)?;
        let id = files.id();
        let config: Config = serde_json::from_slice(&files.config).map_err(|e| invalid(&dir.join(CONFIG), e))?;
        if let Some(t) = config.model_type.as_deref().filter(|t| *t != "bert") {
            return Err(invalid(
                &dir.join(CONFIG),
                format!("model_type `{t}` is not supported; a BERT encoder (`bert`) is"),
            ));
        }
        let pooling = pooling(dir, files.pooling.as_deref())?;
        let max_tokens = max_tokens(dir, files.sentence.as_deref(), &config)?;
        let mut tokenizer = Tokenizer::from_bytes(&files.tokenizer).map_err(|e| invalid(&dir.join(TOKENIZER), e))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                ..TruncationParams::default()
            }))
            .map_err(|e| invalid(&dir.join(TOKENIZER), e))?;
        let vb = VarBuilder::from_buffered_safetensors(files.weights, DType::F32, &Device::Cpu)
            .map_err(|e| invalid(&dir.join(WEIGHTS), e))?;
        let model = BertModel::load(vb, &config).map_err(|e| {
            invalid(
                &dir.join(WEIGHTS),
                format!("{e} (are these the weights of the BERT model that config.json describes?)"),
            )
        })?;
        Ok(LocalModel {
            dir: dir.to_owned(),
            id,
            model,
            tokenizer,
            pooling,
            max_tokens,
            dims: config.hidden_size,
        })
    }

    /// The id that [`LocalModel::load`] would give the model in `dir`, without building the
    /// model (reads and hashes its files: what a reader of a catalog checks the catalog's
    /// vectors against before it loads anything).
    ///
    /// # Errors
    /// [`LocalModelError::Read`] when a file is missing or unreadable.
    pub fn id_of(dir: &Path) -> Result<String, LocalModelError> {
        Ok(Files::read(dir)?.id())
    }

    /// `local:<model type>-<layers>x<hidden size>@<digest of the model files>/<recipe>`, e.g.
    /// `local:bert-6x384@6b86afc7a574/1` for all-MiniLM-L6-v2: another model, another file or
    /// another recipe is another id; another folder holding the same files is not.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Vector length (384 for all-MiniLM-L6-v2).
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// Tokens kept of a text, `[CLS]` and `[SEP]` included; the rest is cut.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// The pooling the model folder asks for.
    pub fn pooling(&self) -> Pooling {
        self.pooling
    }

    /// The model folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Token ids of `text` as the encoder sees it: `[CLS]`, the text's tokens (cut to
    /// [`Self::max_tokens`]), `[SEP]`.
    ///
    /// # Errors
    /// [`LocalModelError::Run`] when the tokenizer fails.
    pub fn tokenize(&self, text: &str) -> Result<Vec<u32>, LocalModelError> {
        let e = self.tokenizer.encode(text, true).map_err(|e| self.run_error(e))?;
        Ok(e.get_ids().to_vec())
    }

    /// Embeds `texts`: one unit vector of [`Self::dims`] floats per text, in order.
    ///
    /// # Errors
    /// [`LocalModelError::Run`] when the tokenizer or the encoder fails.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, LocalModelError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| self.run_error(e))?;
        let ids: Vec<&[u32]> = encodings.iter().map(|e| e.get_ids()).collect();
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| (ids[i].len(), i));
        let mut out = vec![Vec::new(); texts.len()];
        for group in order.chunk_by(|&a, &b| ids[a].len() == ids[b].len()) {
            for chunk in group.chunks(BATCH) {
                let rows: Vec<&[u32]> = chunk.iter().map(|&i| ids[i]).collect();
                for (&i, v) in chunk.iter().zip(self.forward(&rows)?) {
                    out[i] = v;
                }
            }
        }
        Ok(out)
    }

    /// One forward pass over texts of one token count: `(n, len)` ids → `n` unit vectors.
    fn forward(&self, rows: &[&[u32]]) -> Result<Vec<Vec<f32>>, LocalModelError> {
        let run = |e: candle_core::Error| self.run_error(e);
        let len = rows.first().map_or(0, |r| r.len());
        let input = Tensor::from_vec(rows.concat(), (rows.len(), len), &Device::Cpu).map_err(run)?;
        let types = input.zeros_like().map_err(run)?;
        let hidden = self.model.forward(&input, &types, None).map_err(run)?;
        let pooled = match self.pooling {
            Pooling::Mean => hidden.mean(1),
            Pooling::Cls => hidden.i((.., 0)),
        }
        .map_err(run)?;
        let mut vectors: Vec<Vec<f32>> = pooled.to_dtype(DType::F32).and_then(|t| t.to_vec2()).map_err(run)?;
        vectors.iter_mut().for_each(|v| normalize(v));
        Ok(vectors)
    }

    fn run_error(&self, e: impl fmt::Display) -> LocalModelError {
        LocalModelError::Run {
            path: self.dir.clone(),
            message: e.to_string(),
        }
    }
}

/// Scales a vector to unit length (a zero vector stays zero).
fn normalize(v: &mut [f32]) {
    let n: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

impl Embedder for LocalModel {
    fn id(&self) -> String {
        self.id.clone()
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        // `embed` fails only when the tokenizer or the encoder does: the model answered badly.
        self.embed(texts).map_err(|e| EmbedError::BadAnswer {
            url: self.dir.display().to_string(),
            message: match e {
                LocalModelError::Run { message, .. } => format!("the model failed: {message}"),
                other => other.to_string(),
            },
        })
    }
}

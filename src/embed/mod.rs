//! Dense embedders: texts in, L2-normalised vectors out (RUNTIME.md §1, "Embedders and the
//! threshold").
//!
//! [`Embedder`] and [`EmbedError`] have the shape of the menu's embedder interface
//! (`menu::embed` on the `menu` branch): when that lands, this module re-exports it and keeps
//! only the embedders themselves. [`local`] (cargo feature `local-model`) runs a BERT-family
//! sentence encoder in-process from weights on disk.

#[cfg(feature = "local-model")]
pub mod local;

/// Why an embedder gave no vectors.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EmbedError {
    /// The embedder could not be reached, loaded or run.
    #[error("{url}: {message}")]
    Unavailable {
        /// What was called (a URL, a model path).
        url: String,
        /// Why.
        message: String,
    },
    /// It answered, but not with vectors for every text.
    #[error("{url}: {message}")]
    BadAnswer {
        /// What was called.
        url: String,
        /// What was wrong.
        message: String,
    },
}

/// A dense embedder.
///
/// Contract: `embed_batch` returns one L2-normalised vector per text, in order, all of the
/// same length, deterministically for equal inputs; `id()` names the model *and* its recipe
/// (pooling, prefixes, truncation), versioned: any change that changes a vector changes the
/// id, since thresholds and caches are keyed by it.
pub trait Embedder: Send + Sync {
    /// `openai:<model>`, `local:bert-6x384@<digest>/1`, …
    fn id(&self) -> String;
    /// Embeds texts (skill documents at build time, one turn at query time).
    ///
    /// # Errors
    /// [`EmbedError`] when the embedder is unreachable or answers badly.
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

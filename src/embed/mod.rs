//! Dense embedders: texts in, L2-normalised vectors out (RUNTIME.md §1, "Embedders and the
//! threshold").
//!
//! [`Embedder`] is the one interface of the menu's dense embedders; this module is pure (the
//! trait, its errors and the checks every answer goes through), its children do the IO:
//! [`openai`] calls an OpenAI-compatible `/v1/embeddings` endpoint, [`local`] (cargo feature
//! `local-model`) runs a BERT-family sentence encoder in-process from weights on disk. The
//! menu (`menu::dense`) fuses their cosines with the built-in embedder's.

#[cfg(feature = "local-model")]
pub mod local;
pub mod openai;

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

/// Scales a vector to unit length (a zero vector stays zero).
pub fn normalize(v: &mut [f32]) {
    let n: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

/// Checks an embedder's answer for `n` texts: one vector each, one length, finite values.
/// Returns the vectors' length.
///
/// # Errors
/// [`EmbedError::BadAnswer`] naming `url`.
pub fn check_answer(url: &str, n: usize, vectors: &[Vec<f32>]) -> Result<usize, EmbedError> {
    let bad = |message: String| EmbedError::BadAnswer {
        url: url.to_owned(),
        message,
    };
    if vectors.len() != n {
        return Err(bad(format!("{} vectors for {n} texts", vectors.len())));
    }
    let dims = vectors.first().map_or(0, Vec::len);
    if n > 0 && dims == 0 {
        return Err(bad("empty vectors".into()));
    }
    if vectors
        .iter()
        .any(|v| v.len() != dims || v.iter().any(|x| !x.is_finite()))
    {
        return Err(bad("vectors of different lengths or with non-finite values".into()));
    }
    Ok(dims)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_checked() {
        assert_eq!(check_answer("u", 2, &[vec![1.0], vec![0.5]]), Ok(1));
        assert!(check_answer("u", 2, &[vec![1.0]]).is_err());
        assert!(check_answer("u", 2, &[vec![1.0], vec![0.5, 1.0]]).is_err());
        assert!(check_answer("u", 1, &[vec![f32::NAN]]).is_err());
    }

    #[test]
    fn normalize_gives_unit_length() {
        let mut v = vec![3.0, 4.0];
        normalize(&mut v);
        assert_eq!(v, [0.6, 0.8]);
        let mut z = vec![0.0, 0.0];
        normalize(&mut z);
        assert_eq!(z, [0.0, 0.0]);
    }
}

//! Ed25519 signatures in the minisign format (FORMATS.md, "Signatures").
//!
//! The stock `minisign -Vm FILE -x FILE.sig -p skillc.pub` verifies what this module signs:
//! a signature file is an untrusted comment, base64 of `"ED"` ‖ key id ‖ Ed25519 signature of
//! BLAKE2b-512(file), a trusted comment, and base64 of the Ed25519 signature of
//! (signature ‖ trusted comment). Secret keys use minisign's unencrypted secret-key layout,
//! so `minisign -S -s <key>` can sign with a skillc key too. Everything here is pure: reading
//! and writing key files is the caller's job. Ed25519 is deterministic (RFC 8032 §5.1.6), so
//! the same key and bytes always give the same signature.
//!
//! BLAKE2b is `blake2b_simd`'s (AVX2 or SSE4.1 chosen at run time, portable otherwise):
//! hashing the signed file is most of what verifying a 5 MB catalog costs (ARCHITECTURE.md,
//! "Dependencies of note").

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};

/// Length of minisign's prehash (BLAKE2b-512), in bytes.
pub const PREHASH_LEN: usize = 64;

/// BLAKE2b-512 of a file's bytes, fed in pieces: what minisign signs in its prehashed (`ED`)
/// mode, so that a reader can verify a file it streams instead of holding it
/// ([`PublicKey::verify_prehashed`]).
#[derive(Clone, Debug)]
pub struct Prehash(blake2b_simd::State);

impl Default for Prehash {
    fn default() -> Self {
        Prehash::new()
    }
}

impl Prehash {
    /// An empty hash (BLAKE2b, 64-byte output, no key, salt or personalisation).
    pub fn new() -> Prehash {
        Prehash(blake2b_simd::State::new())
    }

    /// Adds the next bytes of the file.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The 64-byte digest of everything added.
    pub fn finalize(&self) -> [u8; PREHASH_LEN] {
        let mut out = [0u8; PREHASH_LEN];
        out.copy_from_slice(self.0.finalize().as_bytes());
        out
    }
}

/// BLAKE2b-512 of `data`: minisign's prehash of a file.
pub fn prehash(data: &[u8]) -> [u8; PREHASH_LEN] {
    let mut h = Prehash::new();
    h.update(data);
    h.finalize()
}

/// The 32-byte BLAKE2b checksum of a minisign secret key file (BLAKE2b with a 32-byte
/// output, which is not BLAKE2b-512 cut short) of `parts` in order.
fn checksum(parts: &[&[u8]]) -> [u8; 32] {
    let mut state = blake2b_simd::Params::new().hash_length(32).to_state();
    for p in parts {
        state.update(p);
    }
    let mut out = [0u8; 32];
    out.copy_from_slice(state.finalize().as_bytes());
    out
}

/// Problems with keys and signatures.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SignError {
    /// The text is not a key or signature file of the expected layout.
    #[error("malformed {what}: {why}")]
    Malformed {
        /// What was being read (`public key`, `signature`, …).
        what: &'static str,
        /// What is wrong.
        why: String,
    },
    /// The signature was made by another key.
    #[error("signed by key {found}, expected key {expected}")]
    WrongKey {
        /// Key id in the signature.
        found: String,
        /// Key id of the public key.
        expected: String,
    },
    /// The signature does not match the file.
    #[error("signature does not match the file")]
    BadSignature,
    /// The trusted comment was altered.
    #[error("trusted comment signature does not match")]
    BadTrustedComment,
}

/// A secret signing key with its minisign key id.
#[derive(Clone)]
pub struct SecretKey {
    /// 8-byte key id (random at generation time).
    pub key_id: [u8; 8],
    signing: SigningKey,
}

/// A public key with its minisign key id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicKey {
    /// 8-byte key id.
    pub key_id: [u8; 8],
    verifying: VerifyingKey,
}

/// The key id as minisign prints it: the id read as a little-endian u64, in uppercase hex.
pub fn key_id_hex(id: &[u8; 8]) -> String {
    format!("{:016X}", u64::from_le_bytes(*id))
}

fn malformed(what: &'static str, why: impl Into<String>) -> SignError {
    SignError::Malformed { what, why: why.into() }
}

/// The base64 payload line of a minisign file (the first line that is not a comment).
fn payload<'a>(text: &'a str, what: &'static str) -> Result<Vec<u8>, SignError> {
    let line: &'a str = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("untrusted comment:"))
        .ok_or_else(|| malformed(what, "no key line"))?;
    B64.decode(line)
        .map_err(|e| malformed(what, format!("invalid base64: {e}")))
}

impl SecretKey {
    /// A 32-byte key for `purpose` derived from this key's secret seed (keyed BLAKE2b-256 of
    /// the purpose): what only the holder of the signing key can compute, for sealing the
    /// build's own records (a MAC key), never used to sign. Different purposes give
    /// independent keys.
    pub fn derive(&self, purpose: &str) -> [u8; 32] {
        crate::util::keyed_blake2b(&self.signing.to_bytes(), b"skillc derive", purpose.as_bytes())
    }

    /// A key from 32 random bytes (the Ed25519 seed) and an 8-byte id.
    pub fn from_seed(seed: [u8; 32], key_id: [u8; 8]) -> SecretKey {
        SecretKey {
            key_id,
            signing: SigningKey::from_bytes(&seed),
        }
    }

    /// The matching public key.
    pub fn public(&self) -> PublicKey {
        PublicKey {
            key_id: self.key_id,
            verifying: self.signing.verifying_key(),
        }
    }

    /// The secret key file: minisign's unencrypted layout (`kdf` = none), checksummed.
    pub fn to_file(&self) -> String {
        let mut sk = [0u8; 64];
        sk[..32].copy_from_slice(&self.signing.to_bytes());
        sk[32..].copy_from_slice(&self.signing.verifying_key().to_bytes());
        let chk = checksum(&[b"Ed", &self.key_id, &sk]);
        let mut raw = Vec::with_capacity(158);
        raw.extend_from_slice(b"Ed");
        raw.extend_from_slice(&[0, 0]); // kdf: none (the key is stored unencrypted, mode 0600)
        raw.extend_from_slice(b"B2");
        raw.extend_from_slice(&[0u8; 32]); // kdf salt (unused)
        raw.extend_from_slice(&[0u8; 16]); // kdf opslimit, memlimit (unused)
        raw.extend_from_slice(&self.key_id);
        raw.extend_from_slice(&sk);
        raw.extend_from_slice(&chk);
        format!(
            "untrusted comment: skillc secret key {}\n{}\n",
            key_id_hex(&self.key_id),
            B64.encode(raw)
        )
    }

    /// Parses a secret key file written by [`SecretKey::to_file`] or by `minisign -G -W`.
    ///
    /// # Errors
    /// [`SignError::Malformed`] when the layout, algorithm, encryption or checksum is wrong.
    pub fn from_file(text: &str) -> Result<SecretKey, SignError> {
        let raw = payload(text, "secret key")?;
        if raw.len() != 158 {
            return Err(malformed("secret key", format!("{} bytes, expected 158", raw.len())));
        }
        if &raw[..2] != b"Ed" || &raw[4..6] != b"B2" {
            return Err(malformed("secret key", "not an Ed25519 minisign key"));
        }
        if raw[2..4] != [0, 0] {
            return Err(malformed(
                "secret key",
                "the key is password-protected: skillc signs unattended, so use a key without a password (`skillc keygen`, or `minisign -G -W`)",
            ));
        }
        let key_id: [u8; 8] = raw[54..62]
            .try_into()
            .map_err(|_| malformed("secret key", "short key id"))?;
        let sk = &raw[62..126];
        let chk = checksum(&[b"Ed", &key_id, sk]);
        // minisign 0.11 leaves the checksum of unprotected keys (`-W`) all zero; the seed and
        // public half are still checked against each other below.
        let unset = raw[126..158].iter().all(|b| *b == 0);
        if !unset && chk[..] != raw[126..158] {
            return Err(malformed("secret key", "checksum mismatch (the file is damaged)"));
        }
        let seed: [u8; 32] = sk[..32].try_into().map_err(|_| malformed("secret key", "short seed"))?;
        let key = SecretKey::from_seed(seed, key_id);
        if key.signing.verifying_key().to_bytes() != sk[32..] {
            return Err(malformed("secret key", "public half does not match the seed"));
        }
        Ok(key)
    }

    /// Signs `data` and returns the `.sig` file text with the given trusted comment.
    pub fn sign(&self, data: &[u8], trusted_comment: &str) -> String {
        let hash = prehash(data);
        let sig: Signature = self.signing.sign(&hash);
        let mut line = Vec::with_capacity(74);
        line.extend_from_slice(b"ED");
        line.extend_from_slice(&self.key_id);
        line.extend_from_slice(&sig.to_bytes());
        let mut global = Vec::with_capacity(64 + trusted_comment.len());
        global.extend_from_slice(&sig.to_bytes());
        global.extend_from_slice(trusted_comment.as_bytes());
        let global_sig: Signature = self.signing.sign(&global);
        format!(
            "untrusted comment: signature from skillc secret key {}\n{}\ntrusted comment: {trusted_comment}\n{}\n",
            key_id_hex(&self.key_id),
            B64.encode(line),
            B64.encode(global_sig.to_bytes())
        )
    }
}

impl PublicKey {
    /// The public key file (`skillc.pub`), minisign format.
    pub fn to_file(&self) -> String {
        let mut raw = Vec::with_capacity(42);
        raw.extend_from_slice(b"Ed");
        raw.extend_from_slice(&self.key_id);
        raw.extend_from_slice(&self.verifying.to_bytes());
        format!(
            "untrusted comment: minisign public key {}\n{}\n",
            key_id_hex(&self.key_id),
            B64.encode(raw)
        )
    }

    /// Parses a minisign public key file (or its bare base64 line).
    ///
    /// # Errors
    /// [`SignError::Malformed`] when it is not a minisign Ed25519 public key.
    pub fn from_file(text: &str) -> Result<PublicKey, SignError> {
        let raw = payload(text, "public key")?;
        if raw.len() != 42 || &raw[..2] != b"Ed" {
            return Err(malformed("public key", "not a minisign Ed25519 public key"));
        }
        let key_id: [u8; 8] = raw[2..10]
            .try_into()
            .map_err(|_| malformed("public key", "short key id"))?;
        let pk: [u8; 32] = raw[10..42]
            .try_into()
            .map_err(|_| malformed("public key", "short key"))?;
        let verifying = VerifyingKey::from_bytes(&pk).map_err(|e| malformed("public key", e.to_string()))?;
        Ok(PublicKey { key_id, verifying })
    }

    /// Verifies a `.sig` file against `data`; returns the trusted comment.
    ///
    /// # Errors
    /// [`SignError`] naming what failed: layout, key id, signature or trusted comment.
    pub fn verify(&self, data: &[u8], sig_file: &str) -> Result<String, SignError> {
        self.verify_prehashed(&prehash(data), sig_file)
    }

    /// Verifies a `.sig` file against a file's `prehash` (its BLAKE2b-512, computed by a
    /// caller that streamed the file); returns the trusted comment. The same checks, in the
    /// same order, as [`PublicKey::verify`].
    ///
    /// # Errors
    /// [`SignError`] naming what failed: layout, key id, signature or trusted comment.
    pub fn verify_prehashed(&self, hash: &[u8; PREHASH_LEN], sig_file: &str) -> Result<String, SignError> {
        let (sig, trusted) = self.signed_comment(sig_file)?;
        self.verifying
            .verify_strict(hash, &sig)
            .map_err(|_| SignError::BadSignature)?;
        Ok(trusted)
    }

    /// Verifies the trusted comment of a `.sig` file alone (its global signature, which covers
    /// the file's signature and the comment), without the signed file: that the file is an
    /// untampered signature by this key, and what it says. Returns the trusted comment.
    ///
    /// # Errors
    /// [`SignError`] naming what failed: layout, key id or trusted comment.
    pub fn verify_comment(&self, sig_file: &str) -> Result<String, SignError> {
        Ok(self.signed_comment(sig_file)?.1)
    }

    /// The file signature and the verified trusted comment of a `.sig` file.
    fn signed_comment(&self, sig_file: &str) -> Result<(Signature, String), SignError> {
        let lines: Vec<&str> = sig_file.lines().collect();
        if lines.len() < 4 || !lines[0].starts_with("untrusted comment:") {
            return Err(malformed(
                "signature",
                "expected 4 lines: untrusted comment, signature, trusted comment, global signature",
            ));
        }
        let raw = B64
            .decode(lines[1].trim())
            .map_err(|e| malformed("signature", format!("invalid base64: {e}")))?;
        if raw.len() != 74 || &raw[..2] != b"ED" {
            return Err(malformed(
                "signature",
                "not a prehashed (ED) Ed25519 minisign signature",
            ));
        }
        let key_id: [u8; 8] = raw[2..10]
            .try_into()
            .map_err(|_| malformed("signature", "short key id"))?;
        if key_id != self.key_id {
            return Err(SignError::WrongKey {
                found: key_id_hex(&key_id),
                expected: key_id_hex(&self.key_id),
            });
        }
        let sig_bytes: [u8; 64] = raw[10..74]
            .try_into()
            .map_err(|_| malformed("signature", "short signature"))?;
        let trusted = lines[2]
            .strip_prefix("trusted comment: ")
            .ok_or_else(|| malformed("signature", "line 3 is not a trusted comment"))?;
        let global = B64
            .decode(lines[3].trim())
            .map_err(|e| malformed("signature", format!("invalid base64: {e}")))?;
        let global: [u8; 64] = global
            .as_slice()
            .try_into()
            .map_err(|_| malformed("signature", "global signature is not 64 bytes"))?;
        let mut msg = sig_bytes.to_vec();
        msg.extend_from_slice(trusted.as_bytes());
        self.verifying
            .verify_strict(&msg, &Signature::from_bytes(&global))
            .map_err(|_| SignError::BadTrustedComment)?;
        Ok((Signature::from_bytes(&sig_bytes), trusted.to_owned()))
    }

    /// The key id in minisign's hex form.
    pub fn key_id_hex(&self) -> String {
        key_id_hex(&self.key_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> SecretKey {
        SecretKey::from_seed([7u8; 32], *b"skillcID")
    }

    /// Derived keys are a function of the secret seed and the purpose only: the same for the
    /// same key, different for another purpose or another seed (the key id plays no part).
    #[test]
    fn derived_keys_depend_on_the_seed_and_the_purpose() {
        let a = key().derive("record");
        assert_eq!(a, key().derive("record"));
        assert_eq!(a, SecretKey::from_seed([7u8; 32], *b"otherID!").derive("record"));
        assert_ne!(a, key().derive("another record"));
        assert_ne!(a, SecretKey::from_seed([8u8; 32], *b"skillcID").derive("record"));
    }

    #[test]
    fn sign_verify_round_trip_and_tampering() {
        let k = key();
        let sig = k.sign(b"hello", "file:x");
        let pk = PublicKey::from_file(&k.public().to_file()).expect("public key");
        assert_eq!(pk.verify(b"hello", &sig), Ok("file:x".to_owned()));
        assert_eq!(pk.verify(b"hellO", &sig), Err(SignError::BadSignature));
        let forged = sig.replace("file:x", "file:y");
        assert_eq!(pk.verify(b"hello", &forged), Err(SignError::BadTrustedComment));
        let other = SecretKey::from_seed([8u8; 32], *b"otherKEY").public();
        assert!(matches!(other.verify(b"hello", &sig), Err(SignError::WrongKey { .. })));
        // The trusted comment alone: genuine without the file, refused when forged.
        assert_eq!(pk.verify_comment(&sig), Ok("file:x".to_owned()));
        assert_eq!(pk.verify_comment(&forged), Err(SignError::BadTrustedComment));
        let lines: Vec<&str> = sig.lines().collect();
        let other_sig = k.sign(b"other", "file:x");
        let swapped = format!(
            "{}\n{}\n{}\n{}\n",
            lines[0],
            other_sig.lines().nth(1).unwrap_or_default(),
            lines[2],
            lines[3]
        );
        assert_eq!(pk.verify_comment(&swapped), Err(SignError::BadTrustedComment));
        assert!(matches!(other.verify_comment(&sig), Err(SignError::WrongKey { .. })));
    }

    #[test]
    fn secret_key_file_round_trip() {
        let k = key();
        let back = SecretKey::from_file(&k.to_file()).expect("secret key");
        assert_eq!(back.public(), k.public());
        let mut damaged = k.to_file().into_bytes();
        let n = damaged.len() - 5;
        damaged[n] = if damaged[n] == b'A' { b'B' } else { b'A' };
        assert!(SecretKey::from_file(&String::from_utf8_lossy(&damaged)).is_err());
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    /// RFC 7693, Appendix A (BLAKE2b-512 of "abc"), and BLAKE2b with a 32-byte output (the
    /// secret key's checksum), whatever SIMD path the machine takes.
    #[test]
    fn blake2b_known_answers_and_streaming() {
        assert_eq!(
            hex(&prehash(b"abc")),
            "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1\
             7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923"
        );
        assert_eq!(
            hex(&checksum(&[b"a", b"", b"bc"])),
            "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319"
        );
        // Pieces of every size give the digest of the whole (blocks are 128 bytes).
        let data: Vec<u8> = (0..5000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        for piece in [1, 63, 128, 129, 1000, 4999, 5000] {
            let mut h = Prehash::new();
            for c in data.chunks(piece) {
                h.update(c);
            }
            assert_eq!(h.finalize(), prehash(&data), "pieces of {piece} bytes");
        }
        let k = key();
        let sig = k.sign(&data, "t");
        assert_eq!(k.public().verify_prehashed(&prehash(&data), &sig), Ok("t".to_owned()));
        assert_eq!(
            k.public().verify_prehashed(&prehash(&data[1..]), &sig),
            Err(SignError::BadSignature)
        );
    }

    #[test]
    fn signatures_are_deterministic() {
        assert_eq!(key().sign(b"x", "t"), key().sign(b"x", "t"));
    }
}

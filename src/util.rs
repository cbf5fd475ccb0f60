//! Small pure helpers every layer uses, each written once: hex digests, keyed BLAKE2b, sorted JSON, TOML
//! string quoting and relative paths.

use std::path::{Component, Path, PathBuf};

/// Lowercase hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    s
}

/// Hex SHA-256 of bytes (64 lowercase hex digits).
pub fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex(&sha2::Sha256::digest(bytes))
}

/// Keyed BLAKE2b-256 of `data` (a MAC, or a key derivation) under `key`, with `personal`
/// (at most 16 bytes) keeping uses apart: the same key never gives the same bytes for two
/// purposes.
pub fn keyed_blake2b(key: &[u8; 32], personal: &[u8], data: &[u8]) -> [u8; 32] {
    let hash = blake2b_simd::Params::new()
        .hash_length(32)
        .key(key)
        .personal(personal)
        .hash(data);
    let mut out = [0u8; 32];
    out.copy_from_slice(hash.as_bytes());
    out
}

/// Sorts the keys of every object of a JSON value, recursively (deterministic output).
pub fn sorted_json(v: serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(m) => {
            let mut entries: Vec<(String, serde_json::Value)> = m.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            serde_json::Value::Object(entries.into_iter().map(|(k, v)| (k, sorted_json(v))).collect())
        }
        serde_json::Value::Array(a) => serde_json::Value::Array(a.into_iter().map(sorted_json).collect()),
        other => other,
    }
}

/// A value serialized as one line of compact JSON with every object's keys sorted.
pub fn sorted_json_line<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .map(|v| serde_json::to_string(&sorted_json(v)).unwrap_or_default())
        .unwrap_or_default()
}

/// A TOML basic string, exactly as the `toml` crate writes it. Plain strings (printable ASCII
/// without quotes or backslashes: names, paths and hashes) take a fast path that gives the
/// same bytes; the rest go through `toml`.
pub fn toml_str(s: &str) -> String {
    if s.bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\' && b != b'\'')
    {
        let mut out = String::with_capacity(s.len() + 2);
        out.push('"');
        out.push_str(s);
        out.push('"');
        return out;
    }
    toml::Value::String(s.to_owned()).to_string()
}

/// `path` relative to `base`, lexically, with `..` where `path` is not under `base`
/// (`/p/x/s` from `/p/q` is `../x/s`). Both are absolute and normalized (canonical paths);
/// `path` itself when they have no common root (another Windows drive) or when one is
/// relative. What files recorded in the project (`skillc.lock`, signed manifests) use, so
/// that they never name a folder of the machine that wrote them.
pub fn relative_path(path: &Path, base: &Path) -> PathBuf {
    if !path.is_absolute() || !base.is_absolute() {
        return path.to_path_buf();
    }
    let p: Vec<Component<'_>> = path.components().collect();
    let b: Vec<Component<'_>> = base.components().collect();
    // The root (and a Windows prefix) must be the same.
    let roots = |c: &[Component<'_>]| {
        c.iter()
            .take_while(|x| matches!(x, Component::Prefix(_) | Component::RootDir))
            .count()
    };
    if roots(&p) != roots(&b) || p[..roots(&p)] != b[..roots(&b)] {
        return path.to_path_buf();
    }
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &p[common..] {
        out.push(c.as_os_str());
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// [`relative_path`] as a `/`-separated string (how the project's files record paths).
pub fn relative_slashed(path: &Path, base: &Path) -> String {
    let rel = relative_path(path, base);
    if rel.is_absolute() {
        return rel.to_string_lossy().into_owned();
    }
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fast_toml_string_is_the_one_toml_writes() {
        for s in [
            "",
            "read_files_alpha",
            "executors/a-b/c_d/manifest.toml",
            "sha256:0123abcdef",
            "with space and ~!@#$%^&*()[]{}<>?/|=+-_.,;:",
            "it's",
            "say \"hi\"",
            "back\\slash",
            "tab\there",
            "line\nbreak",
            "résumé",
        ] {
            assert_eq!(toml_str(s), toml::Value::String(s.to_owned()).to_string(), "{s:?}");
        }
    }

    #[test]
    fn digests_and_sorted_json() {
        assert_eq!(hex(&[0, 0xab, 0xff]), "00abff");
        assert_eq!(
            sha256(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        let v = serde_json::json!({"b": 1, "a": {"d": 2, "c": [{"z": 0, "y": 1}]}});
        assert_eq!(sorted_json_line(&v), r#"{"a":{"c":[{"y":1,"z":0}],"d":2},"b":1}"#);
    }

    #[test]
    fn relative_paths_climb_with_dot_dot() {
        let rel = |p: &str, b: &str| relative_slashed(Path::new(p), Path::new(b));
        assert_eq!(rel("/p/q/skills/a", "/p/q"), "skills/a");
        assert_eq!(rel("/p/x/s", "/p/q"), "../x/s");
        assert_eq!(rel("/elsewhere", "/p/q"), "../../elsewhere");
        assert_eq!(rel("/p/q", "/p/q"), ".");
        assert_eq!(rel("relative/x", "/p"), "relative/x");
    }
}

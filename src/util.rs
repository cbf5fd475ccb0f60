//! Small pure helpers every layer uses, each written once: hex digests, sorted JSON and TOML
//! string quoting.

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
}

//! The owner token and the checks of owner routes (RUNTIME.md §2): `Authorization: Bearer
//! <token>`, the token kept in `.skillc/serve.token` (mode 0600, created on first start), and
//! the cross-origin check — a request whose `Origin` (or `Sec-Fetch-Site`) says it comes from
//! another site is refused, so a page the owner visits cannot drive the API with the owner's
//! browser (CSRF). IO: reads and creates the token file.

use std::path::{Path, PathBuf};

use axum::http::{HeaderMap, StatusCode, header};

use super::error::ApiError;

/// File name of the token, inside the project's `.skillc/`.
pub const TOKEN_FILE: &str = "serve.token";

/// Why the token cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// Reading or writing it failed.
    #[error("{path}: {message}")]
    Io {
        /// The token file.
        path: String,
        /// The operating system's message.
        message: String,
    },
    /// The file can be read by others.
    #[error("{0} can be read by other users (mode {1:o}); run `chmod 600 {0}` or remove it to get a new token")]
    Exposed(String, u32),
    /// The file does not hold a token.
    #[error("{0} does not hold a token (64 hexadecimal digits); remove it to get a new one")]
    Invalid(String),
}

/// The token file of a project state folder.
pub fn token_path(state_dir: &Path) -> PathBuf {
    state_dir.join(TOKEN_FILE)
}

/// Reads the token; `None` when the file does not exist.
///
/// # Errors
/// [`TokenError`] when it cannot be read, is readable by others, or is not a token.
pub fn load(state_dir: &Path) -> Result<Option<String>, TokenError> {
    let path = token_path(state_dir);
    let shown = path.display().to_string();
    let io = |e: std::io::Error| TokenError::Io {
        path: shown.clone(),
        message: e.to_string(),
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::metadata(&path).map_err(io)?.permissions().mode() & 0o777;
                if mode & 0o077 != 0 {
                    return Err(TokenError::Exposed(shown, mode));
                }
            }
            let token = text.trim().to_owned();
            if token.len() != 64 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(TokenError::Invalid(shown));
            }
            Ok(Some(token))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(e)),
    }
}

/// A new token, 32 random bytes as 64 hexadecimal digits (not yet written: [`create`] writes it
/// once the server can start, so that a refused start leaves no token behind).
///
/// # Errors
/// [`TokenError::Io`] (naming the token file of `state_dir`) when the system has no randomness.
pub fn generate(state_dir: &Path) -> Result<String, TokenError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| TokenError::Io {
        path: token_path(state_dir).display().to_string(),
        message: format!("no randomness: {e}"),
    })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Writes `token` as the token file of `state_dir` (mode 0600, created with its folder; never
/// over an existing file: two servers starting at once cannot replace each other's token).
///
/// # Errors
/// [`TokenError::Io`] when the file exists or cannot be written.
pub fn create(state_dir: &Path, token: &str) -> Result<(), TokenError> {
    let path = token_path(state_dir);
    let io = |e: std::io::Error| TokenError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(state_dir).map_err(io)?;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    use std::io::Write as _;
    let mut f = options.open(&path).map_err(io)?;
    f.write_all(format!("{token}\n").as_bytes()).map_err(io)?;
    f.sync_all().map_err(io)
}

/// Compares without stopping at the first difference (no timing hint of the prefix).
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The checks of an owner route: same origin, then the bearer token.
///
/// `own` are the origins of this server (`http://127.0.0.1:8484`, and `http://localhost:8484`
/// on loopback).
///
/// # Errors
/// 403 `cross_origin` for another site's request; 401 `unauthorized` without the token.
pub fn authorize(headers: &HeaderMap, token: &str, own: &[String]) -> Result<(), ApiError> {
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !own.iter().any(|o| o == origin) {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "cross_origin",
                format!(
                    "requests from origin `{origin}` are refused: owner routes only answer this server's own pages and non-browser clients"
                ),
            ));
        }
    }
    if headers
        .get("sec-fetch-site")
        .is_some_and(|v| v.as_bytes() == b"cross-site")
    {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "cross_origin",
            "cross-site requests are refused on owner routes",
        ));
    }
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    match given {
        Some(t) if same(t.as_bytes(), token.as_bytes()) => Ok(()),
        Some(_) => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "the bearer token is wrong (see .skillc/serve.token)",
        )),
        None => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "owner routes need `Authorization: Bearer <token>` (the token is in .skillc/serve.token)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn owner_checks() {
        let own = vec!["http://127.0.0.1:1".to_owned()];
        let t = "ab".repeat(32);
        let bearer = format!("Bearer {t}");
        assert!(authorize(&headers(&[("authorization", &bearer)]), &t, &own).is_ok());
        assert!(
            authorize(
                &headers(&[("authorization", &bearer), ("origin", "http://127.0.0.1:1")]),
                &t,
                &own
            )
            .is_ok()
        );
        let e = authorize(
            &headers(&[("authorization", &bearer), ("origin", "http://evil.test")]),
            &t,
            &own,
        );
        assert_eq!(e.unwrap_err().code, "cross_origin");
        assert_eq!(authorize(&headers(&[]), &t, &own).unwrap_err().code, "unauthorized");
        assert_eq!(
            authorize(&headers(&[("authorization", "Bearer nope")]), &t, &own)
                .unwrap_err()
                .code,
            "unauthorized"
        );
    }

    #[test]
    fn token_is_created_private_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(dir.path()).unwrap(), None);
        let a = generate(dir.path()).unwrap();
        assert!(a.len() == 64 && a != generate(dir.path()).unwrap());
        assert_eq!(load(dir.path()).unwrap(), None, "generating writes nothing");
        create(dir.path(), &a).unwrap();
        assert_eq!(load(dir.path()).unwrap(), Some(a.clone()));
        assert!(create(dir.path(), "b").is_err(), "an existing token is never replaced");
        assert_eq!(load(dir.path()).unwrap(), Some(a));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let p = token_path(dir.path());
            assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
            assert!(matches!(load(dir.path()), Err(TokenError::Exposed(..))));
        }
    }
}

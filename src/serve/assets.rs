//! The dashboard (`GET /`): one page, no external assets — its HTML, CSS and script are
//! embedded in the binary (`assets/index.html`) and it reads the JSON routes of the same
//! server. There is no upload button (seed 003: import is an owner API on purpose).

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

/// The page.
pub const INDEX_HTML: &str = include_str!("assets/index.html");

/// `GET /`: the dashboard, with a content security policy that allows nothing from
/// elsewhere (no external script, style, font or image; requests to this server only).
pub async fn dashboard() -> Response {
    let mut r = ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], INDEX_HTML).into_response();
    r.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        ),
    );
    r.headers_mut()
        .insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    r
}

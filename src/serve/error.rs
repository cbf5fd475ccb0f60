//! Errors of the HTTP API: always JSON, `{"error": {"code", "message"}}` with a 4xx/5xx
//! status (RUNTIME.md §2). Handlers return [`ApiError`]; [`json_errors`] rewrites whatever
//! the stack itself answers (an unknown route, a body over the limit, a timeout, a path that
//! is not UTF-8) into the same shape, so no client ever sees a plain-text error.

use axum::body::Body;
use axum::extract::FromRequest;
use axum::extract::rejection::JsonRejection;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

/// An error answer.
#[derive(Debug)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// A stable snake_case code (`not_found`, `invalid_name`, `unauthorized`, …).
    pub code: &'static str,
    /// One sentence for people.
    pub message: String,
}

/// The body of every error answer.
#[derive(Serialize, ToSchema)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// `error` of [`ErrorBody`].
#[derive(Serialize, ToSchema)]
pub struct ErrorDetail {
    /// A stable snake_case code.
    pub code: String,
    /// What went wrong.
    pub message: String,
}

impl ApiError {
    /// An error with this status, code and message.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    /// 404 `not_found`.
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 400 `bad_request`.
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, code, message)
    }

    /// 500 `internal`: the machine failed (never a client's input).
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }
}

fn body(code: &str, message: &str) -> Vec<u8> {
    serde_json::to_vec(&ErrorBody {
        error: ErrorDetail {
            code: code.to_owned(),
            message: message.to_owned(),
        },
    })
    .unwrap_or_default()
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut r = Response::new(Body::from(body(self.code, &self.message)));
        *r.status_mut() = self.status;
        r.headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        r
    }
}

/// A JSON request body whose rejections are [`ApiError`]s with precise codes:
/// `invalid_json` (syntax, not UTF-8, wrong shape), `unsupported_media_type`, `too_large`.
pub struct JsonBody<T>(pub T);

impl<S, T> FromRequest<S> for JsonBody<T>
where
    axum::Json<T>: FromRequest<S, Rejection = JsonRejection>,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(v)) => Ok(JsonBody(v)),
            Err(e) => Err(match &e {
                JsonRejection::MissingJsonContentType(_) => ApiError::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "unsupported_media_type",
                    "send the body as `Content-Type: application/json`",
                ),
                _ if e.status() == StatusCode::PAYLOAD_TOO_LARGE => ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "too_large",
                    "the request body is over the 1 MiB limit",
                ),
                JsonRejection::JsonDataError(_) => ApiError::bad_request(
                    "invalid_json",
                    format!(
                        "the JSON body does not have the route's shape: {}",
                        plain_serde(&e.body_text())
                    ),
                ),
                _ => ApiError::bad_request("invalid_json", e.body_text()),
            }),
        }
    }
}

/// A deserialisation error in the API's words: no Rust type names (`expected struct
/// MenuRequest`, `expected usize`) and no prefix naming the "target type".
fn plain_serde(text: &str) -> String {
    let detail = text
        .strip_prefix("Failed to deserialize the JSON body into the target type: ")
        .unwrap_or(text);
    let mut out = String::with_capacity(detail.len());
    let mut rest = detail;
    while let Some(i) = rest.find("expected ") {
        let (before, after) = rest.split_at(i + "expected ".len());
        out.push_str(before);
        let word_end = after
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let (word, tail) = after.split_at(word_end);
        match word {
            "struct" | "map" => {
                // `struct Name`: the name goes too.
                let tail = tail.trim_start();
                let name_end = tail
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(tail.len());
                out.push_str("a JSON object");
                rest = &tail[name_end..];
                continue;
            }
            "usize" | "u8" | "u16" | "u32" | "u64" => out.push_str("a non-negative integer"),
            "isize" | "i8" | "i16" | "i32" | "i64" => out.push_str("an integer"),
            "f32" | "f64" => out.push_str("a number"),
            _ => out.push_str(word),
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// The code of an error answer the HTTP stack made itself.
fn code_of(status: StatusCode) -> &'static str {
    match status {
        StatusCode::NOT_FOUND => "not_found",
        StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
        StatusCode::PAYLOAD_TOO_LARGE => "too_large",
        StatusCode::REQUEST_TIMEOUT => "timeout",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
        StatusCode::URI_TOO_LONG => "uri_too_long",
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => "headers_too_large",
        s if s.is_server_error() => "internal",
        _ => "bad_request",
    }
}

/// Middleware: an error answer that is not JSON already becomes `{"error": …}` with the
/// stack's own text as the message (at most 512 bytes of it).
pub async fn json_errors(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (mut parts, b) = response.into_parts();
    let text = axum::body::to_bytes(b, 512)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_owned())
        .unwrap_or_default();
    let message = if text.is_empty() {
        status.canonical_reason().unwrap_or("error").to_owned()
    } else {
        text
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    parts
        .headers
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Response::from_parts(parts, Body::from(body(code_of(status), &message)))
}

#[cfg(test)]
mod tests {
    #[test]
    fn serde_errors_name_no_rust_type() {
        let t = "Failed to deserialize the JSON body into the target type: invalid type: sequence, expected struct MenuRequest at line 1 column 0";
        assert_eq!(
            super::plain_serde(t),
            "invalid type: sequence, expected a JSON object at line 1 column 0"
        );
        assert_eq!(
            super::plain_serde("size: invalid type: string \"x\", expected usize at line 1 column 20"),
            "size: invalid type: string \"x\", expected a non-negative integer at line 1 column 20"
        );
        assert_eq!(super::plain_serde("missing field `turn`"), "missing field `turn`");
    }
}

//! The curator's routes (RUNTIME.md §2, `/api/curator…`; §3): status, run (dry or real),
//! pin, unpin, restore and the archive list, each the library call `skillc curate …` makes
//! (`crate::curate`), answered with the same JSON (`skillc.curate.*/1`, docs/json.md). Owner
//! routes: the token and origin are checked before the body is read ([`super::owner`]).

use axum::Json;
use axum::http::StatusCode;
use serde::Deserialize;
use utoipa::ToSchema;

use super::error::{ApiError, ErrorBody, JsonBody};
use super::owner::{locked, project_of};
use super::routes::St;
use crate::curate::{self, CurateError, RunOptions};
use crate::events::Trigger;

fn curate_error(e: CurateError) -> ApiError {
    match e {
        CurateError::NotFound(m) => ApiError::not_found(m),
        CurateError::Refused(m) => ApiError::new(StatusCode::CONFLICT, "refused", m),
        CurateError::Busy(m) => ApiError::new(StatusCode::CONFLICT, "busy", m),
        other => ApiError::internal(other.to_string()),
    }
}

fn json<T: serde::Serialize>(v: &T) -> Result<Json<serde_json::Value>, ApiError> {
    serde_json::to_value(v)
        .map(Json)
        .map_err(|e| ApiError::internal(e.to_string()))
}

/// The curator's status: the last run, pinned, stale and archived skills, today's spend.
#[utoipa::path(get, path = "/api/curator", tag = "owner", security(("owner_token" = [])),
    responses((status = 200, description = "`skillc.curate.status/1`", body = Object), (status = 401, body = ErrorBody)))]
pub async fn status(axum::extract::State(st): St) -> Result<Json<serde_json::Value>, ApiError> {
    let p = project_of(&st)?;
    let report = locked(&st, p, |p| {
        curate::status(&p.curate, jiff::Timestamp::now()).map_err(curate_error)
    })
    .await?;
    json(&report)
}

/// The skills archived by the curator (or by `DELETE /api/skills/{name}`).
#[utoipa::path(get, path = "/api/curator/archived", tag = "owner", security(("owner_token" = [])),
    responses((status = 200, description = "`skillc.curate.archived/1`", body = Object), (status = 401, body = ErrorBody)))]
pub async fn archived(axum::extract::State(st): St) -> Result<Json<serde_json::Value>, ApiError> {
    let p = project_of(&st)?;
    let report = locked(&st, p, |p| curate::list_archived(&p.curate).map_err(curate_error)).await?;
    json(&report)
}

/// `POST /api/curator/run`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RunRequest {
    /// Plan only: no model call, no event, no state change, no file moved (default true).
    #[serde(default = "yes")]
    pub dry_run: bool,
}

fn yes() -> bool {
    true
}

/// Runs the curator once (a dry run unless `dry_run` is false).
#[utoipa::path(post, path = "/api/curator/run", tag = "owner", security(("owner_token" = [])), request_body = RunRequest,
    responses((status = 200, description = "`skillc.curate.run/1`", body = Object), (status = 401, body = ErrorBody),
              (status = 409, body = ErrorBody)))]
pub async fn run(
    axum::extract::State(st): St,
    JsonBody(req): JsonBody<RunRequest>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let p = project_of(&st)?;
    let options = RunOptions {
        dry_run: req.dry_run,
        trigger: Trigger::Api,
    };
    let report = locked(&st, p, move |p| {
        curate::run(&p.curate, options, jiff::Timestamp::now()).map_err(curate_error)
    })
    .await?;
    json(&report)
}

/// `POST /api/curator/pin`, `/unpin`, `/restore`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillRequest {
    /// The skill name.
    pub skill: String,
    /// `restore` only: bring back the body as it was before this time (RFC 3339).
    pub before: Option<String>,
}

fn checked(req: &SkillRequest) -> Result<(), ApiError> {
    if super::project::is_skill_name(&req.skill) {
        Ok(())
    } else {
        Err(ApiError::bad_request("invalid_name", "`skill` is not a skill name"))
    }
}

/// Pins a skill: the curator never touches it, and it cannot be removed.
#[utoipa::path(post, path = "/api/curator/pin", tag = "owner", security(("owner_token" = [])), request_body = SkillRequest,
    responses((status = 200, description = "`skillc.curate.action/1`", body = Object), (status = 404, body = ErrorBody)))]
pub async fn pin(
    axum::extract::State(st): St,
    JsonBody(req): JsonBody<SkillRequest>,
) -> Result<Json<serde_json::Value>, ApiError> {
    checked(&req)?;
    let p = project_of(&st)?;
    let report = locked(&st, p, move |p| {
        curate::pin(&p.curate, &req.skill, jiff::Timestamp::now()).map_err(curate_error)
    })
    .await?;
    st.refresh_notes();
    json(&report)
}

/// Unpins a skill.
#[utoipa::path(post, path = "/api/curator/unpin", tag = "owner", security(("owner_token" = [])), request_body = SkillRequest,
    responses((status = 200, description = "`skillc.curate.action/1`", body = Object), (status = 404, body = ErrorBody)))]
pub async fn unpin(
    axum::extract::State(st): St,
    JsonBody(req): JsonBody<SkillRequest>,
) -> Result<Json<serde_json::Value>, ApiError> {
    checked(&req)?;
    let p = project_of(&st)?;
    let report = locked(&st, p, move |p| {
        curate::unpin(&p.curate, &req.skill, jiff::Timestamp::now()).map_err(curate_error)
    })
    .await?;
    st.refresh_notes();
    json(&report)
}

/// Restores an archived skill from the path the curator recorded (or, with `before`, an
/// earlier body).
#[utoipa::path(post, path = "/api/curator/restore", tag = "owner", security(("owner_token" = [])), request_body = SkillRequest,
    responses((status = 200, description = "`skillc.curate.action/1`", body = Object), (status = 404, body = ErrorBody),
              (status = 409, body = ErrorBody)))]
pub async fn restore(
    axum::extract::State(st): St,
    JsonBody(req): JsonBody<SkillRequest>,
) -> Result<Json<serde_json::Value>, ApiError> {
    checked(&req)?;
    let before = match req.before.as_deref() {
        None => None,
        Some(t) => Some(
            curate::store::parse_time(t)
                .ok_or_else(|| ApiError::bad_request("invalid_time", format!("`{t}` is not an RFC 3339 time")))?,
        ),
    };
    let p = project_of(&st)?;
    let report = locked(&st, p, move |p| {
        curate::restore(&p.curate, &req.skill, before, jiff::Timestamp::now()).map_err(curate_error)
    })
    .await?;
    st.refresh_notes();
    json(&report)
}

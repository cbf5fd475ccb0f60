//! The owner routes (RUNTIME.md §2): import SKILL.md files, install a source, archive a
//! skill. Each checks the origin and the bearer token first ([`super::auth::authorize`]),
//! runs one at a time (and never beside a `skillc import` of the same project, whose lock
//! file it takes too), and does its file work on a blocking thread.
//!
//! Writes only go through `crate::import` (staging, check, scan, never overwrite) and
//! [`super::project::remove`] (a move into the archive root): nothing a client sends names a
//! path, so nothing can be written outside the skills root.

use std::sync::Arc;

use axum::Json;
use axum::extract::Path;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::error::{ApiError, ErrorBody, JsonBody};
use super::project::{self, Archived, Project, RemoveError};
use super::routes::St;
use super::{State, auth};
use crate::import::{self, Outcome};

/// `POST /api/playbooks/import`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportRequest {
    /// The files, each a SKILL.md (at most 30, each at most 64 KiB).
    pub files: Vec<ImportFile>,
}

/// One file to import.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportFile {
    /// The file's name, as the client calls it (a label in the answer, never a path).
    pub name: String,
    /// The SKILL.md text.
    pub content: String,
}

/// How one file ended.
#[derive(Debug, Serialize, ToSchema)]
pub struct FileOutcome {
    /// The file's name, as sent.
    pub name: String,
    /// `imported`, `skipped` (a skill of that name exists) or `rejected`.
    pub status: &'static str,
    /// The skill it became (or would have become), once its frontmatter was read.
    pub skill: Option<String>,
    /// Why it was skipped or rejected (`IM005`, `IM006`, `too_large`, …).
    pub code: Option<String>,
    /// One sentence.
    pub reason: Option<String>,
    /// Where it was written, relative to the project root.
    pub path: Option<String>,
}

/// The answer of an import.
#[derive(Debug, Serialize, ToSchema)]
pub struct ImportAnswer {
    /// One outcome per file, in order.
    pub files: Vec<FileOutcome>,
    /// Counts.
    pub summary: ImportSummary,
}

/// Counts of an import.
#[derive(Debug, Default, Serialize, ToSchema)]
pub struct ImportSummary {
    /// Files imported.
    pub imported: usize,
    /// Files skipped.
    pub skipped: usize,
    /// Files rejected.
    pub rejected: usize,
}

/// Middleware of the owner routes: the origin and the token are checked before the body is
/// read, so an anonymous client cannot make the server read or parse anything.
pub async fn require_owner(
    axum::extract::State(st): St,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    match auth::authorize(request.headers(), &st.config.token, &st.origins()) {
        Ok(()) => next.run(request).await,
        Err(e) => e.into_response(),
    }
}

/// The project of the server (the owner checks already passed, in [`require_owner`]).
pub(super) fn project_of(st: &State) -> Result<Project, ApiError> {
    st.config.project.clone().ok_or_else(|| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "no_project",
            "this server has no project around its catalog (no skills root to write into)",
        )
    })
}

/// Runs `work` on a blocking thread with the project's import lock held.
pub(super) async fn locked<T: Send + 'static>(
    st: &Arc<State>,
    project: Project,
    work: impl FnOnce(&Project) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let _one_at_a_time = st.owner_lock.lock().await;
    tokio::task::spawn_blocking(move || {
        let lock_path = project.state_dir.join("import.lock");
        std::fs::create_dir_all(&project.state_dir).map_err(|e| ApiError::internal(e.to_string()))?;
        let guard = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| ApiError::internal(format!("{}: {e}", lock_path.display())))?;
        if let Err(std::fs::TryLockError::WouldBlock) = guard.try_lock() {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                "busy",
                "a skillc import is running in this project; try again when it has finished",
            ));
        }
        work(&project)
    })
    .await
    .map_err(|e| ApiError::internal(format!("the import stopped: {e}")))?
}

/// Records `skill.created {source: imported}` for an imported skill (as `skillc import`
/// does): the curator never touches it. A log that cannot be written leaves the import as it is.
fn record_created(p: &Project, o: &Outcome) {
    if o.status != import::Status::Imported {
        return;
    }
    let Some(name) = &o.name else { return };
    let event = crate::events::Event::new(
        crate::events::whole_seconds(jiff::Timestamp::now()),
        crate::events::Kind::Created {
            skill: name.clone(),
            source: crate::events::Origin::Imported,
        },
    );
    let _ = crate::events::record(&p.root, &event);
}

fn now_rfc3339() -> String {
    jiff::Timestamp::from_second(jiff::Timestamp::now().as_second())
        .unwrap_or_else(|_| jiff::Timestamp::now())
        .to_string()
}

fn file_outcome(o: &Outcome, name: String) -> FileOutcome {
    FileOutcome {
        name,
        status: match o.status {
            import::Status::Imported => "imported",
            import::Status::Skipped => "skipped",
            import::Status::Failed => "rejected",
        },
        skill: o.name.clone(),
        code: o.code.map(str::to_owned),
        reason: o.reason.clone(),
        path: (o.status == import::Status::Imported).then(|| o.path.clone()).flatten(),
    }
}

fn rejected(name: String, code: &str, reason: String) -> FileOutcome {
    FileOutcome {
        name,
        status: "rejected",
        skill: None,
        code: Some(code.to_owned()),
        reason: Some(reason),
        path: None,
    }
}

/// Imports SKILL.md files, each on its own: staged, checked and scanned before anything is
/// saved; a failing file fails alone; a name collision is skipped, never overwritten.
#[utoipa::path(post, path = "/api/playbooks/import", tag = "owner", request_body = ImportRequest,
    security(("owner_token" = [])),
    responses((status = 200, body = ImportAnswer), (status = 400, body = ErrorBody),
              (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 413, body = ErrorBody)))]
pub async fn import_playbooks(
    axum::extract::State(st): St,
    JsonBody(req): JsonBody<ImportRequest>,
) -> Result<Json<ImportAnswer>, ApiError> {
    let project = project_of(&st)?;
    let limits = st.config.limits;
    if req.files.is_empty() {
        return Err(ApiError::bad_request("no_files", "`files` is empty"));
    }
    if req.files.len() > limits.files {
        return Err(ApiError::bad_request(
            "too_many_files",
            format!("{} files; an import takes at most {}", req.files.len(), limits.files),
        ));
    }
    let answer = locked(&st, project, move |p| {
        let mut options = p.import.clone();
        options.imported_at = now_rfc3339();
        let mut files = Vec::new();
        for f in req.files {
            let label: String = f.name.chars().take(255).collect();
            files.push(
                if f.name.is_empty() || f.name.len() > 255 || f.name.chars().any(char::is_control) {
                    let shown: String = label.chars().flat_map(char::escape_default).take(80).collect();
                    rejected(
                        label,
                        "invalid_name",
                        format!("`{shown}` is not a file name (1 to 255 bytes, no control characters)"),
                    )
                } else if f.content.len() > limits.file_bytes {
                    rejected(
                        label,
                        "too_large",
                        format!(
                            "{} bytes; an imported file is at most {} bytes",
                            f.content.len(),
                            limits.file_bytes
                        ),
                    )
                } else {
                    let o = import::files::import_skill_md(&label, f.content.into_bytes(), &options);
                    record_created(p, &o);
                    file_outcome(&o, label)
                },
            );
        }
        let mut summary = ImportSummary::default();
        for f in &files {
            match f.status {
                "imported" => summary.imported += 1,
                "skipped" => summary.skipped += 1,
                _ => summary.rejected += 1,
            }
        }
        Ok(ImportAnswer { files, summary })
    })
    .await?;
    Ok(Json(answer))
}

/// `POST /api/skills/install`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InstallRequest {
    /// What `skillc import SOURCE` takes: a git URL, an HTTPS SKILL.md or zip, an
    /// agentskills.io address, or a path on the server.
    pub source: String,
}

/// Installs a source, as `skillc import SOURCE` does (recorded in `skillc.lock`). The answer
/// is the source's entry of `skillc.import/1` (docs/json.md).
#[utoipa::path(post, path = "/api/skills/install", tag = "owner", request_body = InstallRequest,
    security(("owner_token" = [])),
    responses((status = 200, description = "a `skillc.import/1` source entry", body = Object),
              (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn install(
    axum::extract::State(st): St,
    JsonBody(req): JsonBody<InstallRequest>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let project = project_of(&st)?;
    if req.source.trim().is_empty() || req.source.len() > 4096 || req.source.contains('\0') {
        return Err(ApiError::bad_request(
            "invalid_source",
            "`source` must be 1 to 4096 bytes, without NUL",
        ));
    }
    let outcome = locked(&st, project, move |p| {
        let mut options = p.import.clone();
        options.imported_at = now_rfc3339();
        let mut outcomes = import::import(&[req.source], &options).map_err(|e| ApiError::internal(e.to_string()))?;
        let outcome = outcomes
            .pop()
            .ok_or_else(|| ApiError::internal("the import gave no outcome"))?;
        record_created(p, &outcome);
        Ok(outcome)
    })
    .await?;
    serde_json::to_value(&outcome)
        .map(Json)
        .map_err(|e| ApiError::internal(e.to_string()))
}

/// Moves the skill to the archive root (`<skills root>-archive/<name>-<UTC time>/`); never
/// deletes; refuses a pinned skill.
#[utoipa::path(delete, path = "/api/skills/{name}", tag = "owner",
    security(("owner_token" = [])),
    params(("name" = String, Path, description = "The skill name")),
    responses((status = 200, body = Archived), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn remove_skill(axum::extract::State(st): St, Path(name): Path<String>) -> Result<Json<Archived>, ApiError> {
    let project = project_of(&st)?;
    if !project::is_skill_name(&name) {
        return Err(ApiError::bad_request("invalid_name", "not a skill name"));
    }
    let archived = locked(&st, project, move |p| {
        project::remove(p, &name, jiff::Timestamp::now()).map_err(|e| match e {
            RemoveError::NotFound(_) => ApiError::not_found(e.to_string()),
            RemoveError::Pinned(_) | RemoveError::State(_) => {
                ApiError::new(StatusCode::CONFLICT, "pinned", e.to_string())
            }
            RemoveError::Io { .. } => ApiError::internal(e.to_string()),
        })
    })
    .await?;
    st.refresh_notes();
    Ok(Json(archived))
}

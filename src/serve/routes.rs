//! The routes of `skillc serve` (RUNTIME.md §2) and the router with its limits. Read routes
//! need no token; the owner routes are in [`super::owner`]. Every handler loads the served
//! [`Snapshot`] once and answers from it alone. The OpenAPI document is generated from the
//! `#[utoipa::path]` of each handler and the `ToSchema` of its types.

use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State as AxState};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, OpenApi, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{ApiError, ErrorBody, JsonBody, json_errors};
use super::{Refusal, Snapshot, State, curator, owner, project};
use crate::catalog::view::{Detail, Filter, SearchHit, Summary};
use crate::catalog::{Skill, Status, Verified};

/// The shared state as handlers see it.
pub type St = AxState<Arc<State>>;

#[derive(OpenApi)]
#[openapi(
    info(title = "skillc serve", description = "The verified skill catalog over HTTP (RUNTIME.md §2)."),
    modifiers(&BearerScheme),
    tags((name = "catalog", description = "Read routes: no token."),
         (name = "owner", description = "Mutating routes: `Authorization: Bearer <token>` (.skillc/serve.token), same origin only."))
)]
struct ApiDoc;

struct BearerScheme;

impl utoipa::Modify for BearerScheme {
    fn modify(&self, api: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = api.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "owner_token",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// The application: every route, the dashboard, and the limits (body size, time per
/// request, concurrency), with every error answered as JSON.
pub fn router(state: Arc<State>) -> Router {
    let limits = state.config.limits;
    let read = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(list_skills))
        .routes(routes!(skill_detail))
        .routes(routes!(skill_export))
        .routes(routes!(skill_playbook))
        .routes(routes!(menu))
        .routes(routes!(search))
        .routes(routes!(catalog))
        .routes(routes!(openapi))
        .layer(tower_http::limit::RequestBodyLimitLayer::new(limits.request_bytes))
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            limits.request_timeout,
        ));
    // Owner routes check the token and the origin before the body is read (its limit is
    // inside the check: a client without the token learns 401, never how large a body may
    // be), and may take longer (an install fetches a repository).
    let owner = OpenApiRouter::new()
        .routes(routes!(owner::import_playbooks))
        .routes(routes!(owner::install))
        .routes(routes!(owner::remove_skill))
        .routes(routes!(curator::status))
        .routes(routes!(curator::archived))
        .routes(routes!(curator::run))
        .routes(routes!(curator::pin))
        .routes(routes!(curator::unpin))
        .routes(routes!(curator::restore))
        .layer(tower_http::limit::RequestBodyLimitLayer::new(limits.request_bytes))
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            owner::require_owner,
        ))
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            limits.owner_timeout,
        ));
    let (api_router, api) = read.merge(owner).split_for_parts();
    let _ = state
        .openapi
        .set(Bytes::from(serde_json::to_vec_pretty(&api).unwrap_or_default()));
    api_router
        .route("/", axum::routing::get(super::assets::dashboard))
        .fallback(not_found)
        .with_state(state)
        .layer(axum::middleware::map_response(json_errors))
        .layer(tower::limit::ConcurrencyLimitLayer::new(limits.connections))
}

async fn not_found() -> ApiError {
    ApiError::not_found("no such route; `GET /api/openapi.json` lists them")
}

/// A JSON answer from bytes rendered once.
fn json_bytes(bytes: Bytes) -> Response {
    let mut r = Response::new(Body::from(bytes));
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

fn render<T: Serialize>(v: &T) -> Bytes {
    Bytes::from(serde_json::to_vec(v).unwrap_or_default())
}

/// The skill `name` of the served snapshot, after checking the name is one.
fn lookup<'a>(snap: &'a Snapshot, name: &str) -> Result<(usize, &'a Skill), ApiError> {
    if !project::is_skill_name(name) {
        let shown: String = name.chars().take(80).flat_map(char::escape_default).collect();
        return Err(ApiError::bad_request(
            "invalid_name",
            format!("`{shown}` is not a skill name (lowercase letters, digits and single hyphens, at most 64)"),
        ));
    }
    snap.catalog
        .index_of(name)
        .map(|i| (i, &snap.catalog.skills()[i]))
        .ok_or_else(|| ApiError::not_found(format!("no skill `{name}` in the catalog")))
}

/// Filters of `GET /api/skills`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Only this security tier (`experimental`, `community`, `verified`).
    pub tier: Option<String>,
    /// Only this status (`ok`, `instruction-only`, `disabled`, `rejected`).
    pub status: Option<String>,
    /// Only skills whose highest finding is at least this severity; `none`: clean skills.
    pub highest: Option<String>,
}

/// `GET /api/skills`.
#[derive(Serialize, ToSchema)]
pub struct SkillList {
    /// How many skills are listed.
    pub count: usize,
    /// The skills, sorted by name.
    pub skills: Vec<Summary>,
}

/// Every skill of the catalog.
#[utoipa::path(get, path = "/api/skills", tag = "catalog", params(ListQuery),
    responses((status = 200, body = SkillList), (status = 400, body = ErrorBody)))]
async fn list_skills(AxState(st): St, Query(q): Query<ListQuery>) -> Result<Response, ApiError> {
    let snap = st.snapshot();
    let status = match q.status.as_deref() {
        None => None,
        Some(s) => Some(Status::parse(s).ok_or_else(|| {
            ApiError::bad_request(
                "invalid_filter",
                format!("unknown status `{s}`: ok, instruction-only, disabled, rejected"),
            )
        })?),
    };
    let filter = Filter {
        tier: q.tier,
        status,
        highest: q.highest,
    };
    if let Some(why) = filter.problem() {
        return Err(ApiError::bad_request("invalid_filter", why));
    }
    let unfiltered = filter.tier.is_none() && filter.status.is_none() && filter.highest.is_none();
    let make = || {
        let skills = snap.catalog.summaries(&filter, &snap.notes);
        render(&SkillList {
            count: skills.len(),
            skills,
        })
    };
    Ok(json_bytes(if unfiltered {
        snap.list.get_or_init(make).clone()
    } else {
        make()
    }))
}

/// A skill: frontmatter, executors with manifests and admission levels, findings with
/// file:line, provenance.
#[utoipa::path(get, path = "/api/skills/{name}", tag = "catalog",
    params(("name" = String, Path, description = "The skill name")),
    responses((status = 200, body = Detail), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
async fn skill_detail(AxState(st): St, Path(name): Path<String>) -> Result<Response, ApiError> {
    let snap = st.snapshot();
    let (i, skill) = lookup(&snap, &name)?;
    let bytes = snap.details[i]
        .get_or_init(|| render(&Detail::of(skill, snap.notes.get(&skill.name))))
        .clone();
    Ok(json_bytes(bytes))
}

fn wants_markdown(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.split(',').any(|m| m.trim().starts_with("text/markdown")))
}

/// The export zip (`<name>/SKILL.md` and its files); `Accept: text/markdown` gives the bare,
/// standard-only SKILL.md.
#[utoipa::path(get, path = "/api/skills/{name}/export", tag = "catalog",
    params(("name" = String, Path, description = "The skill name")),
    responses((status = 200, description = "application/zip, or text/markdown when asked", content_type = "application/zip"),
              (status = 404, body = ErrorBody)))]
async fn skill_export(AxState(st): St, Path(name): Path<String>, headers: HeaderMap) -> Result<Response, ApiError> {
    let snap = st.snapshot();
    let (_, skill) = lookup(&snap, &name)?;
    if skill.status == Status::Rejected {
        return Err(ApiError::not_found(format!(
            "`{name}` was rejected by the build and is not in the catalog"
        )));
    }
    let (bytes, kind, file) = if wants_markdown(&headers) {
        let md = snap
            .catalog
            .export_md(skill)
            .map_err(|e| ApiError::internal(e.to_string()))?;
        (md.into_bytes(), "text/markdown; charset=utf-8", format!("{name}.md"))
    } else {
        let zip = snap
            .catalog
            .export_zip(skill)
            .map_err(|e| ApiError::internal(e.to_string()))?;
        (zip, "application/zip", format!("{name}.zip"))
    };
    Ok((
        [
            (header::CONTENT_TYPE, kind.to_owned()),
            (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{file}\"")),
        ],
        bytes,
    )
        .into_response())
}

/// `GET /api/skills/{name}/playbook`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PlaybookQuery {
    /// The agent session loading it, recorded in `skill.loaded` (default `serve`).
    pub session: Option<String>,
}

/// The playbook: the SKILL.md body, verbatim (as `skillc playbook`); records `skill.loaded`
/// when the project records loads.
#[utoipa::path(get, path = "/api/skills/{name}/playbook", tag = "catalog",
    params(("name" = String, Path, description = "The skill name"), PlaybookQuery),
    responses((status = 200, description = "the body", content_type = "text/markdown"), (status = 404, body = ErrorBody)))]
async fn skill_playbook(
    AxState(st): St,
    Path(name): Path<String>,
    Query(q): Query<PlaybookQuery>,
) -> Result<Response, ApiError> {
    let snap = st.snapshot();
    let (_, skill) = lookup(&snap, &name)?;
    if skill.status == Status::Disabled {
        return Err(ApiError::not_found(format!(
            "`{name}` is disabled (`metadata.disabled`): it is never offered or loaded"
        )));
    }
    let body = snap.catalog.body(skill).ok_or_else(|| {
        ApiError::not_found(format!(
            "`{name}` has no playbook in the catalog (rejected by the build)"
        ))
    })?;
    let session = q.session.unwrap_or_else(|| "serve".to_owned());
    if crate::events::check_id("session", &session).is_err() {
        return Err(ApiError::bad_request(
            "invalid_session",
            "`session` is an identifier without spaces or control characters",
        ));
    }
    if let Some(p) = &st.config.project {
        // `skill.loaded` when the project records loads (`[curator] record_loads`); a log that
        // cannot be written does not keep the playbook from the agent.
        let _ = crate::curate::record_load(&p.curate, &name, &session, jiff::Timestamp::now());
    }
    Ok(([(header::CONTENT_TYPE, "text/markdown; charset=utf-8")], body.to_vec()).into_response())
}

/// `POST /api/menu`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MenuRequest {
    /// The agent's turn.
    pub turn: String,
    /// An agent of `pipeline.toml` (`[agents.<id>]`).
    pub agent: Option<String>,
    /// Menu size (default 3, at most 6).
    pub size: Option<usize>,
}

/// A menu that cannot be given for this request: an unknown agent, or no threshold recorded
/// for the catalog's embedder (the catalog must be calibrated).
fn menu_error(e: &crate::menu::MenuError) -> ApiError {
    use crate::menu::MenuError;
    match e {
        MenuError::NoThreshold { .. } => ApiError::new(StatusCode::CONFLICT, e.code(), e.to_string()),
        MenuError::Turn { .. } | MenuError::UnknownAgent(_) | MenuError::Size(_) => {
            ApiError::bad_request(e.code(), e.to_string())
        }
    }
}

/// The menu for a turn, as `skillc menu --format json`.
#[utoipa::path(post, path = "/api/menu", tag = "catalog", request_body = MenuRequest,
    responses((status = 200, description = "as `skillc menu --format json`", body = Object),
              (status = 400, body = ErrorBody), (status = 409, description = "no threshold for the catalog's embedder", body = ErrorBody)))]
async fn menu(AxState(st): St, JsonBody(req): JsonBody<MenuRequest>) -> Result<Response, ApiError> {
    // The turn and the size are checked by the menu itself (one limit and one code for the
    // command line and this route), before any scoring.
    check_turn(&req.turn)?;
    if req.agent.as_deref().is_some_and(|a| a.is_empty() || a.len() > 64) {
        return Err(ApiError::bad_request(
            "invalid_agent",
            "`agent` names an `[agents.<id>]` of pipeline.toml",
        ));
    }
    let snap = st.snapshot();
    let dense = snap.catalog.has_dense();
    let select = move || {
        snap.catalog
            .select(&req.turn, req.agent.as_deref(), req.size)
            .map(|sel| render(&crate::util::sorted_json(crate::menu::format::json_doc(&sel, None))))
    };
    // A dense embedder (a local model, an endpoint) blocks: off the async workers. The
    // built-in embedder answers in well under a millisecond.
    let doc = if dense {
        tokio::task::spawn_blocking(select)
            .await
            .map_err(|e| ApiError::internal(e.to_string()))?
    } else {
        select()
    };
    Ok(json_bytes(doc.map_err(|e| menu_error(&e))?))
}

/// The menu's one limit on a turn ([`crate::menu::check_turn`]), as an HTTP error.
fn check_turn(turn: &str) -> Result<(), ApiError> {
    crate::menu::check_turn(turn).map_err(|e| menu_error(&e))
}

/// `GET /api/search`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SearchQuery {
    /// The query.
    pub q: String,
    /// Most results (default 20, at most 200).
    pub limit: Option<usize>,
}

/// Catalog search with the menu's ranking.
#[utoipa::path(get, path = "/api/search", tag = "catalog", params(SearchQuery),
    responses((status = 200, body = SearchResults), (status = 400, body = ErrorBody)))]
async fn search(AxState(st): St, Query(q): Query<SearchQuery>) -> Result<Response, ApiError> {
    // The menu's limit on a turn, said of the query.
    if crate::menu::check_turn(&q.q).is_err() {
        return Err(ApiError::bad_request(
            "invalid_query",
            format!(
                "the query `q` must be 1 to {} bytes of text, not blank (this one has {} bytes)",
                crate::menu::MAX_TURN,
                q.q.len()
            ),
        ));
    }
    if q.limit.is_some_and(|n| !(1..=200).contains(&n)) {
        return Err(ApiError::bad_request("invalid_limit", "`limit` is 1 to 200"));
    }
    let snap = st.snapshot();
    let hits = snap
        .catalog
        .search_hits(&q.q, q.limit.unwrap_or(20), &snap.notes)
        .map_err(|e| menu_error(&e))?;
    Ok(json_bytes(render(&SearchResults {
        query: q.q,
        count: hits.len(),
        results: hits,
    })))
}

/// `GET /api/search`: as `skillc search --format json` without `schema` and `catalog`.
#[derive(Serialize, ToSchema)]
pub struct SearchResults {
    /// The query.
    pub query: String,
    /// How many results.
    pub count: usize,
    /// Best first: trigger hits, then by score.
    pub results: Vec<SearchHit>,
}

/// `GET /api/catalog`.
#[derive(Serialize, ToSchema)]
pub struct CatalogState {
    /// The served catalog, as verified.
    #[serde(flatten)]
    pub verified: Verified,
    /// `--watch`: rebuilt on change and swapped.
    pub watch: bool,
    /// How many times the served catalog was swapped since the server started.
    pub swaps: u64,
    /// The last catalog refused on a swap (it does not verify), while the one above goes on
    /// being served; `null` when the newest catalog is the one served.
    pub refused: Option<Refusal>,
}

/// Catalog version, expiry, key id and verification state.
#[utoipa::path(get, path = "/api/catalog", tag = "catalog", responses((status = 200, body = CatalogState)))]
async fn catalog(AxState(st): St) -> Response {
    let snap = st.snapshot();
    json_bytes(render(&CatalogState {
        verified: snap.catalog.verified().clone(),
        watch: st.config.watch,
        swaps: st.swaps(),
        refused: st.refused(),
    }))
}

/// The OpenAPI document of every route.
#[utoipa::path(get, path = "/api/openapi.json", tag = "catalog", responses((status = 200, body = Object)))]
async fn openapi(AxState(st): St) -> Response {
    json_bytes(st.openapi.get().cloned().unwrap_or_default())
}

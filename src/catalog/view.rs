//! The JSON views of a catalog's skills, shared by `skillc list|info --format json` and
//! `skillc serve` (`GET /api/skills`, `GET /api/skills/{name}`), so both say the same thing
//! in the same shape (docs/json.md, `skillc.list/1` and `skillc.info/1`).
//!
//! What the catalog cannot know — where a skill came from and its curator state — comes from
//! the project (`skillc.lock`, the curator's state) as [`Annotations`], filled by the caller.

use std::collections::BTreeMap;

use serde::Serialize;
use utoipa::ToSchema;

use super::files::{Admission, Finding};
use super::{Catalog, Skill, Status};

/// Where a skill came from (RUNTIME.md §3's `skill.created.source`).
pub type Origin = &'static str;

/// What the project knows of a skill beyond the catalog.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct Annotation {
    /// `manual` (written by a person; the default), `imported`, `auto_generated` or
    /// `curator_generated`.
    pub origin: Origin,
    /// The source it was imported from (`skillc.lock`), when imported.
    pub source: Option<String>,
    /// The commit or URL the source resolved to (`skillc.lock`).
    pub resolved: Option<String>,
    /// When it was imported (`skillc.lock`).
    pub imported_at: Option<String>,
    /// The curator state.
    pub curator: CuratorState,
}

impl Default for Annotation {
    fn default() -> Annotation {
        Annotation {
            origin: "manual",
            source: None,
            resolved: None,
            imported_at: None,
            curator: CuratorState::default(),
        }
    }
}

/// The curator's view of a skill (RUNTIME.md §3).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, ToSchema)]
pub struct CuratorState {
    /// Pinned: never touched by the curator, never removed.
    pub pinned: bool,
    /// No load for `stale_after_days` (shown, never acted on alone).
    pub stale: bool,
    /// Archived (then it is no longer in the skills root, nor in a fresh catalog).
    pub archived: bool,
}

/// Annotations by skill name.
pub type Annotations = BTreeMap<String, Annotation>;

/// One line of `GET /api/skills` and `skillc list`.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct Summary {
    /// The skill name (its slug).
    pub name: String,
    /// Its title.
    pub title: String,
    /// The one-line description.
    pub description: String,
    /// Its version.
    pub version: String,
    /// The security tier.
    pub tier: String,
    /// Permissions of the skill and its executors.
    pub permissions: Vec<String>,
    /// `ok`, `instruction-only`, `disabled` or `rejected`.
    pub status: Status,
    /// Names of its admitted executors.
    pub executors: Vec<String>,
    /// How many of its sub-commands the build rejected (`report.json` `skills[].plans[]`,
    /// status `rejected`): a skill with none admitted is listed `instruction-only`, and this
    /// says whether that is because it has no sub-command or because none was admitted.
    pub plans_rejected: usize,
    /// Severity of its highest security finding, `null` when clean.
    pub highest_finding: Option<String>,
    /// Where it came from: `manual`, `imported`, `auto_generated`, `curator_generated`.
    pub origin: &'static str,
    /// Its curator state.
    pub curator: CuratorState,
}

/// An executor in a skill's detail.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct ExecutorView {
    /// Canonical name.
    pub name: String,
    /// English description.
    pub description: String,
    /// The manifest's path in `out/`.
    pub manifest_path: String,
    /// The whole manifest (`manifest.toml` as JSON).
    #[schema(value_type = Object)]
    pub manifest: serde_json::Value,
    /// Its admission levels.
    pub admission: Admission,
}

/// Where a skill comes from, as the manifests and the project record it.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct Provenance {
    /// `manual`, `imported`, …
    pub origin: &'static str,
    /// The skill folder, relative to the project root.
    pub path: String,
    /// The import source (`skillc.lock`).
    pub source: Option<String>,
    /// What it resolved to.
    pub resolved: Option<String>,
    /// When it was imported.
    pub imported_at: Option<String>,
    /// The first executor's `[provenance]` (all executors of a skill share its source).
    #[schema(value_type = Object)]
    pub manifest: BTreeMap<String, serde_json::Value>,
}

/// `GET /api/skills/{name}` and `skillc info --format json`.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct Detail {
    /// The list line.
    #[serde(flatten)]
    pub summary: Summary,
    /// The whole description.
    pub full_description: String,
    /// The frontmatter as JSON.
    #[schema(value_type = Object)]
    pub frontmatter: serde_json::Value,
    /// Why the build rejected it.
    pub reason: Option<String>,
    /// Executors with their manifests and admission levels.
    pub executor_details: Vec<ExecutorView>,
    /// Security findings with file:line.
    pub findings: Vec<Finding>,
    /// The build's diagnostics (`skillc.check/1` shape).
    #[schema(value_type = Vec<Object>)]
    pub diagnostics: Vec<serde_json::Value>,
    /// Its plans (`report.json` shape).
    #[schema(value_type = Vec<Object>)]
    pub plans: Vec<serde_json::Value>,
    /// Where it came from.
    pub provenance: Provenance,
    /// Retained files, relative to the skill folder.
    pub files: Vec<String>,
}

impl Summary {
    /// The list line of `skill`.
    pub fn of(skill: &Skill, a: Option<&Annotation>) -> Summary {
        let default = Annotation::default();
        let a = a.unwrap_or(&default);
        Summary {
            name: skill.name.clone(),
            title: skill.title.clone(),
            description: skill.line.clone(),
            version: skill.version.clone(),
            tier: skill.tier.clone(),
            permissions: skill.permissions.clone(),
            status: skill.status,
            executors: skill.executors.iter().map(|e| e.name.clone()).collect(),
            plans_rejected: skill
                .plans
                .iter()
                .filter(|p| p.get("status").and_then(serde_json::Value::as_str) == Some("rejected"))
                .count(),
            highest_finding: skill.highest.clone(),
            origin: a.origin,
            curator: a.curator.clone(),
        }
    }
}

impl Detail {
    /// The detail of `skill`.
    pub fn of(skill: &Skill, a: Option<&Annotation>) -> Detail {
        let default = Annotation::default();
        let ann = a.unwrap_or(&default);
        Detail {
            summary: Summary::of(skill, a),
            full_description: skill.description.clone(),
            frontmatter: skill.frontmatter.clone(),
            reason: skill.reason.clone(),
            executor_details: skill
                .executors
                .iter()
                .map(|e| ExecutorView {
                    name: e.name.clone(),
                    description: e.description.clone(),
                    manifest_path: e.manifest_path.clone(),
                    manifest: e.manifest.clone(),
                    admission: e.admission.clone(),
                })
                .collect(),
            findings: skill.findings.clone(),
            diagnostics: skill.diagnostics.clone(),
            plans: skill.plans.clone(),
            provenance: Provenance {
                origin: ann.origin,
                path: skill.path.clone(),
                source: ann.source.clone(),
                resolved: ann.resolved.clone(),
                imported_at: ann.imported_at.clone(),
                manifest: skill
                    .executors
                    .first()
                    .map(|e| e.provenance.clone())
                    .unwrap_or_default(),
            },
            files: skill.files.clone(),
        }
    }
}

/// Filters of `GET /api/skills` and `skillc list`.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Only this tier.
    pub tier: Option<String>,
    /// Only this status.
    pub status: Option<Status>,
    /// Only skills whose highest finding is at least this severity (`none` for clean ones).
    pub highest: Option<String>,
}

impl Filter {
    /// What is wrong with the filter's words, if anything: an unknown tier or severity is
    /// refused (it would match nothing, silently), as an unknown status is.
    pub fn problem(&self) -> Option<String> {
        if let Some(t) = self.tier.as_deref()
            && crate::skill::gaia::SecurityTier::parse(t).is_none()
        {
            return Some(format!(
                "unknown tier `{}`: experimental, community, verified",
                t.escape_debug()
            ));
        }
        if let Some(h) = self.highest.as_deref()
            && h != "none"
            && !super::files::SEVERITIES.contains(&h)
        {
            return Some(format!(
                "unknown severity `{}`: none, info, low, medium, high, critical",
                h.escape_debug()
            ));
        }
        None
    }

    /// Whether `skill` passes.
    pub fn accepts(&self, skill: &Skill) -> bool {
        self.tier.as_ref().is_none_or(|t| *t == skill.tier)
            && self.status.is_none_or(|s| s == skill.status)
            && self.highest.as_deref().is_none_or(|h| match (h, &skill.highest) {
                ("none", None) => true,
                ("none", Some(_)) | (_, None) => false,
                (h, Some(mine)) => super::files::severity_rank(mine) >= super::files::severity_rank(h),
            })
    }
}

impl Catalog {
    /// The list lines of the skills that pass `filter`, sorted by name.
    pub fn summaries(&self, filter: &Filter, notes: &Annotations) -> Vec<Summary> {
        self.skills()
            .iter()
            .filter(|s| filter.accepts(s))
            .map(|s| Summary::of(s, notes.get(&s.name)))
            .collect()
    }
}

/// One result of `skillc search` and `GET /api/search`: the skill's list line, its score
/// under the menu's ranking and the triggers the query matched.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct SearchHit {
    /// The skill, as listed.
    #[serde(flatten)]
    pub summary: Summary,
    /// Score under the menu's lexical ranking (cosine, four decimals; RUNTIME.md §1).
    pub score: f64,
    /// The skill's triggers found in the query (case-folded); hits rank first.
    pub triggers: Vec<String>,
}

impl Catalog {
    /// The catalog searched with the menu's ranking, best first, at most `limit`: skills with
    /// a trigger hit (more hits first), then by score; disabled skills are never found.
    ///
    /// # Errors
    /// [`crate::menu::MenuError`] as [`crate::menu::Menu::rank`].
    pub fn search_hits(
        &self,
        query: &str,
        limit: usize,
        notes: &Annotations,
    ) -> Result<Vec<SearchHit>, crate::menu::MenuError> {
        Ok(self
            .search(query, limit)?
            .into_iter()
            .map(|(i, c)| {
                let s = &self.skills()[i];
                SearchHit {
                    summary: Summary::of(s, notes.get(&s.name)),
                    score: c.score,
                    triggers: c.hits,
                }
            })
            .collect())
    }
}

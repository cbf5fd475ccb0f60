//! One record per skill of a verified catalog, built once when it is opened: what the
//! retained SKILL.md's frontmatter says (title, description, version, tier, permissions),
//! its executors and their manifests, and what the build's report says (status, findings
//! with file:line, diagnostics, plans). Pure: works on the verified bytes in memory.

use std::collections::BTreeMap;

use super::files::{self, CatalogFile, Finding, Manifest, Report, ReportSkill};
use crate::menu::text::{disabled, one_line, title};
use crate::model::Mode;
use crate::skill::validate::{self, Context};
use crate::skill::yaml::Node;

/// The state of a skill in the catalog.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// In the catalog, with admitted executors.
    Ok,
    /// In the catalog, instructions only (no executor).
    InstructionOnly,
    /// In the catalog, but `metadata.disabled: "true"`: never offered by the menu.
    Disabled,
    /// Rejected by the build as a whole: listed from the report, not served.
    Rejected,
}

impl Status {
    /// `ok`, `instruction-only`, `disabled` or `rejected`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::InstructionOnly => "instruction-only",
            Status::Disabled => "disabled",
            Status::Rejected => "rejected",
        }
    }

    /// Parses [`Status::as_str`].
    pub fn parse(s: &str) -> Option<Status> {
        [Status::Ok, Status::InstructionOnly, Status::Disabled, Status::Rejected]
            .into_iter()
            .find(|x| x.as_str() == s)
    }
}

/// An admitted executor of a skill.
#[derive(Clone, Debug)]
pub struct Executor {
    /// Canonical name.
    pub name: String,
    /// English description.
    pub description: String,
    /// Path of its manifest in `out/`.
    pub manifest_path: String,
    /// The manifest, as JSON.
    pub manifest: serde_json::Value,
    /// Its admission levels.
    pub admission: files::Admission,
    /// Its permissions.
    pub permissions: Vec<String>,
    /// Its `[provenance]`.
    pub provenance: BTreeMap<String, serde_json::Value>,
}

/// One skill.
#[derive(Clone, Debug)]
pub struct Skill {
    /// The name (the folder under `out/skills/`).
    pub name: String,
    /// `metadata.title`, else the name with hyphens as spaces.
    pub title: String,
    /// The first sentence of the description, at most 160 characters.
    pub line: String,
    /// The whole description.
    pub description: String,
    /// The skill's version (`0.0.0` when absent).
    pub version: String,
    /// The GAIA security tier (`experimental` when the skill claims none).
    pub tier: String,
    /// Permissions: the skill's GAIA permissions and its executors', sorted, de-duplicated.
    pub permissions: Vec<String>,
    /// Its state.
    pub status: Status,
    /// Admitted executors, sorted by name.
    pub executors: Vec<Executor>,
    /// The highest finding's severity, if any.
    pub highest: Option<String>,
    /// The skill folder relative to the project root, as the build reported it.
    pub path: String,
    /// Why the build rejected it.
    pub reason: Option<String>,
    /// Security findings, with file:line.
    pub findings: Vec<Finding>,
    /// The build's diagnostics for it (`skillc.check/1` shape).
    pub diagnostics: Vec<serde_json::Value>,
    /// Its plans and their admission (`report.json` shape).
    pub plans: Vec<serde_json::Value>,
    /// The frontmatter as JSON (YAML 1.2 core types), when readable.
    pub frontmatter: serde_json::Value,
    /// Where the body starts in the retained SKILL.md.
    pub body_offset: Option<usize>,
    /// Retained files, relative to the skill folder, sorted.
    pub files: Vec<String>,
}

/// The records of every skill: those of the catalog, then the report's rejected ones whose
/// name the catalog does not hold; sorted by name.
pub fn build(catalog: &CatalogFile, report: &Report, out: &BTreeMap<String, Vec<u8>>) -> Vec<Skill> {
    let reported: BTreeMap<&str, &ReportSkill> = report
        .skills
        .iter()
        .filter_map(|s| s.name.as_deref().map(|n| (n, s)))
        .collect();
    let mut executors: BTreeMap<&str, Vec<Executor>> = BTreeMap::new();
    for e in &catalog.executor {
        executors.entry(e.skill.as_str()).or_default().push(executor(e, out));
    }
    let mut skills: Vec<Skill> = catalog
        .skill
        .iter()
        .map(|c| {
            let mut s = from_skill_md(&c.name, out.get(&format!("skills/{}/SKILL.md", c.name)));
            s.files = c.files.keys().cloned().collect();
            s.executors = executors.remove(c.name.as_str()).unwrap_or_default();
            s.executors.sort_by(|a, b| a.name.cmp(&b.name));
            if s.status != Status::Disabled {
                s.status = if c.status == "instruction-only" || s.executors.is_empty() {
                    Status::InstructionOnly
                } else {
                    Status::Ok
                };
            }
            for e in &s.executors {
                s.permissions.extend(e.permissions.iter().cloned());
            }
            s.permissions.sort();
            s.permissions.dedup();
            if let Some(r) = reported.get(c.name.as_str()) {
                add_report(&mut s, r);
            }
            s
        })
        .collect();
    let held: std::collections::BTreeSet<String> = skills.iter().map(|s| s.name.clone()).collect();
    for r in report.skills.iter().filter(|r| r.status == "rejected") {
        let name = r
            .name
            .clone()
            .unwrap_or_else(|| r.path.rsplit('/').next().unwrap_or(&r.path).to_owned());
        if held.contains(&name) {
            continue;
        }
        let mut s = from_skill_md(&name, None);
        s.status = Status::Rejected;
        add_report(&mut s, r);
        skills.push(s);
    }
    skills.sort_by(|a, b| a.name.cmp(&b.name).then(a.status.cmp(&b.status)));
    skills.dedup_by(|a, b| a.name == b.name);
    skills
}

fn add_report(s: &mut Skill, r: &ReportSkill) {
    s.path = r.path.clone();
    s.reason = r.reason.clone();
    s.findings = r.findings.clone();
    s.diagnostics = r.diagnostics.clone();
    s.plans = r.plans.clone();
    s.highest = s
        .findings
        .iter()
        .map(|f| f.severity.as_str())
        .max_by_key(|sev| files::severity_rank(sev))
        .map(str::to_owned);
}

fn executor(e: &files::CatalogExecutor, out: &BTreeMap<String, Vec<u8>>) -> Executor {
    let text = out
        .get(&e.manifest)
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    let table: toml::Table = toml::from_str(&text).unwrap_or_default();
    let typed: Manifest = toml::from_str(&text).unwrap_or_default();
    Executor {
        name: e.name.clone(),
        description: typed.description,
        manifest_path: e.manifest.clone(),
        manifest: serde_json::to_value(&table).unwrap_or_default(),
        admission: typed.admission,
        permissions: typed.capabilities.permissions,
        provenance: typed
            .provenance
            .into_iter()
            .map(|(k, v)| (k, serde_json::to_value(v).unwrap_or_default()))
            .collect(),
    }
}

/// The frontmatter's view of a skill (everything else empty).
fn from_skill_md(name: &str, bytes: Option<&Vec<u8>>) -> Skill {
    let ctx = Context {
        dir_name: name,
        mode: Mode::Default,
    };
    let analysis = bytes.map(|b| validate::analyze("SKILL.md", b, &ctx));
    let model = analysis.as_ref().map(|a| &a.model);
    let root = analysis.as_ref().and_then(|a| a.frontmatter.as_ref());
    let metadata = root.and_then(|r| r.get_value("metadata"));
    let description = model
        .and_then(|m| m.description.as_ref())
        .map(|d| d.value.clone())
        .unwrap_or_default();
    let gaia = model.and_then(|m| m.gaia.as_ref());
    Skill {
        name: name.to_owned(),
        title: title(name, metadata),
        line: one_line(&description),
        description,
        version: model.and_then(|m| m.version.clone()).unwrap_or_else(|| "0.0.0".into()),
        tier: gaia.map_or("experimental", |g| g.tier.as_str()).to_owned(),
        permissions: gaia
            .map(|g| g.permissions.iter().map(ToString::to_string).collect())
            .unwrap_or_default(),
        status: if disabled(metadata) {
            Status::Disabled
        } else {
            Status::InstructionOnly
        },
        executors: Vec::new(),
        highest: None,
        path: format!("skills/{name}"),
        reason: None,
        findings: Vec::new(),
        diagnostics: Vec::new(),
        plans: Vec::new(),
        frontmatter: root.map_or(serde_json::Value::Null, Node::to_json_typed),
        body_offset: analysis.as_ref().and_then(|a| a.body.as_ref()).map(|r| r.start),
        files: Vec::new(),
    }
}

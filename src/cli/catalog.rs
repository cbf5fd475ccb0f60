//! The catalog commands that read (RUNTIME.md §2; seed 001's `gaia skill list|info|search`):
//! `skillc list`, `skillc info NAME [--body]`, `skillc search QUERY`. Each opens the verified
//! catalog through `crate::catalog` — the layer `skillc serve` reads through too — and refuses
//! a catalog that `skillc verify` would refuse — its checks, its pinned or configured keys
//! and its rollback floors, decided read-only (`cli::pin::reader_trust`) — with verify's
//! message and exit status 1.

use std::path::PathBuf;

use serde_json::json;

use super::{Printer, ReportFormat, Status, project};
use crate::catalog::read::Trust;
use crate::catalog::view::{Detail, Filter, SearchHit, Summary};
use crate::catalog::{Annotations, Catalog, OpenError, OpenOptions, Status as SkillStatus};
use crate::serve;

/// Where the catalog is and which key to trust.
#[derive(Debug, clap::Args)]
pub struct CatalogArgs {
    /// The catalog folder (default: `[pipeline] out`, i.e. `out`).
    #[arg(long = "out", value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The signer's public key: the catalog must be signed by it (default: the project's
    /// `[verify] keys`, else the key `skillc verify` pinned for this folder). `--key` is
    /// another name of it.
    #[arg(long = "public-key", alias = "key", value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// The state `skillc verify` records (pins and rollback floors; read only, default:
    /// verify's).
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Human)]
    pub format: ReportFormat,
}

/// Arguments of `skillc list`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "The catalog is trusted as `skillc verify` trusts it (--public-key, `[verify] keys`, the folder's pin, rollback floors; read only).\n\
Exit status: 0 listed, 1 the catalog does not verify or its signer is not trusted, 2 the command could not run."
)]
pub struct ListArgs {
    #[command(flatten)]
    pub catalog: CatalogArgs,
    /// Only this status: ok, instruction-only, disabled, rejected.
    #[arg(long, value_name = "STATUS")]
    pub status: Option<String>,
    /// Only this security tier: experimental, community, verified.
    #[arg(long, value_name = "TIER")]
    pub tier: Option<String>,
    /// Only skills whose highest finding is at least this severity (`none`: clean skills).
    #[arg(long, value_name = "SEVERITY")]
    pub highest: Option<String>,
}

/// Arguments of `skillc info`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 shown, 1 no such skill, or the catalog does not verify or its signer is not trusted (as `skillc verify`), 2 the command could not run."
)]
pub struct InfoArgs {
    /// The skill name.
    pub name: String,
    #[command(flatten)]
    pub catalog: CatalogArgs,
    /// Also print the body (the playbook), verbatim.
    #[arg(long)]
    pub body: bool,
}

/// Arguments of `skillc search`.
#[derive(Debug, clap::Args)]
pub struct SearchArgs {
    /// What to look for.
    pub query: String,
    #[command(flatten)]
    pub catalog: CatalogArgs,
    /// Most results.
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
}

/// The verified catalog and what the project says of its skills, or the status to exit with.
pub(crate) fn open(args: &CatalogArgs, out: &mut Printer) -> anyhow::Result<Result<(Catalog, Annotations), Status>> {
    let cwd = std::env::current_dir()?;
    let p = project::load(&cwd, out)?;
    let dir = args
        .out
        .as_ref()
        .map_or_else(|| p.root.join(&p.config.out), |o| cwd.join(o));
    let opts = OpenOptions {
        trust: super::pin::reader_trust(args.key.as_deref(), args.state.as_deref(), &dir, &p, &cwd)?,
        now: jiff::Timestamp::now().as_second(),
        at_least: None,
        model: None,
    };
    match Catalog::open(&dir, &opts) {
        Ok(c) => {
            let sp = super::serve::serve_project(&p)?;
            let notes = serve::project::annotations(Some(&sp), &c);
            Ok(Ok((c, notes)))
        }
        Err(e) => refused(&e, &opts.trust, "nothing is listed from it", out).map(Err),
    }
}

/// Says why a catalog was refused, as `skillc verify` says it (`error: …` per failure, the
/// rollback note), then what the command did not do; the exit status is verify's: 1 for a
/// catalog that does not verify or whose signer is not trusted, 2 for one that could not be
/// read (an `Err`).
pub(crate) fn refused(e: &OpenError, trust: &Trust, what: &str, out: &mut Printer) -> anyhow::Result<Status> {
    match e {
        OpenError::Refused { out: o, failures } => {
            for f in failures {
                out.note(&format!("error: {f}"));
            }
            if let Some(state) = &trust.state
                && failures
                    .iter()
                    .any(|f| matches!(f, crate::verify::Failure::Rollback { .. }))
            {
                out.note(&super::verify::rollback_note(state));
            }
            out.note(&format!(
                "error: the catalog in {o} does not verify ({}): {what}",
                super::output::count(failures.len(), "problem")
            ));
            Ok(Status::Failure)
        }
        OpenError::Trust(crate::catalog::read::TrustError::Refused(r)) => {
            out.note(&format!("error: {r}"));
            out.note(&format!("error: {what}"));
            Ok(Status::Failure)
        }
        _ => Err(anyhow::anyhow!("{e}")),
    }
}

fn catalog_json(c: &Catalog) -> crate::messages::search::CatalogRef {
    let v = c.verified();
    crate::messages::search::CatalogRef {
        version: v.catalog_version,
        expires: v.expires.clone(),
        key_id: v.key_id.clone(),
        verification: v.verification.to_owned(),
    }
}

pub(crate) fn list(args: &ListArgs, out: &mut Printer) -> anyhow::Result<Status> {
    let status = match args.status.as_deref() {
        None => None,
        Some(s) => Some(
            SkillStatus::parse(s)
                .ok_or_else(|| anyhow::anyhow!("unknown --status `{s}`: ok, instruction-only, disabled, rejected"))?,
        ),
    };
    let filter = Filter {
        tier: args.tier.clone(),
        status,
        highest: args.highest.clone(),
    };
    if let Some(why) = filter.problem() {
        anyhow::bail!("{why}");
    }
    let (catalog, notes) = match open(&args.catalog, out)? {
        Ok(x) => x,
        Err(s) => return Ok(s),
    };
    let skills = catalog.summaries(&filter, &notes);
    match args.catalog.format {
        ReportFormat::Json => {
            let doc = json!({"schema": "skillc.list/1", "catalog": catalog_json(&catalog), "count": skills.len(), "skills": skills});
            out.line(&serde_json::to_string_pretty(&doc)?)?;
        }
        ReportFormat::Human => {
            out.line(&table(&skills))?;
            let v = catalog.verified();
            out.line(&format!(
                "{} of {} (catalog version {}, verified, key {})",
                super::output::count(skills.len(), "skill"),
                catalog.skills().len(),
                v.catalog_version,
                v.key_id
            ))?;
        }
    }
    out.flush()?;
    Ok(Status::Success)
}

fn table(skills: &[Summary]) -> String {
    let head = ["NAME", "STATUS", "TIER", "VERSION", "EXECUTORS", "FINDING", "ORIGIN"];
    let rows: Vec<[String; 7]> = skills
        .iter()
        .map(|s| {
            [
                s.name.clone(),
                s.status.as_str().to_owned(),
                s.tier.clone(),
                s.version.clone(),
                match s.plans_rejected {
                    0 => s.executors.len().to_string(),
                    n => format!("{} ({n} rejected)", s.executors.len()),
                },
                s.highest_finding.clone().unwrap_or_else(|| "-".into()),
                format!("{}{}", s.origin, if s.curator.pinned { " (pinned)" } else { "" }),
            ]
        })
        .collect();
    let mut widths: Vec<usize> = head.iter().map(|h| h.len()).collect();
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_owned()
    };
    let mut s = line(head.to_vec());
    for r in &rows {
        s.push('\n');
        s.push_str(&line(r.iter().map(String::as_str).collect()));
    }
    s
}

pub(crate) fn info(args: &InfoArgs, out: &mut Printer) -> anyhow::Result<Status> {
    let (catalog, notes) = match open(&args.catalog, out)? {
        Ok(x) => x,
        Err(s) => return Ok(s),
    };
    let Some(skill) = catalog.skill(&args.name) else {
        out.note(&format!(
            "error: no skill `{}` in the catalog; `skillc list` shows them",
            // Escaped: a name from the command line never reaches the terminal raw.
            args.name.escape_debug()
        ));
        return Ok(Status::Failure);
    };
    let detail = Detail::of(skill, notes.get(&skill.name));
    let body = catalog.body(skill).map(|b| String::from_utf8_lossy(b).into_owned());
    match args.catalog.format {
        ReportFormat::Json => {
            let mut doc = serde_json::to_value(&detail)?;
            if let Some(m) = doc.as_object_mut() {
                m.insert("schema".into(), "skillc.info/1".into());
                if args.body {
                    m.insert("body".into(), json!(body));
                }
            }
            out.line(&serde_json::to_string_pretty(&crate::util::sorted_json(doc))?)?;
        }
        ReportFormat::Human => {
            for l in human_info(&detail) {
                out.line(&l)?;
            }
            if args.body
                && let Some(b) = body
            {
                out.line("")?;
                out.write(&b)?;
            }
        }
    }
    out.flush()?;
    Ok(Status::Success)
}

fn human_info(d: &Detail) -> Vec<String> {
    let s = &d.summary;
    // The title only when it says more than the name (a title derived from the name, `todo`
    // for `todo`, would only repeat it).
    let derived = s.title.eq_ignore_ascii_case(&s.name.replace('-', " ")) || s.title == s.name;
    let mut l = vec![
        if derived {
            s.name.clone()
        } else {
            format!("{} — {}", s.name, s.title)
        },
        format!("  {}", s.description),
        format!("status:      {}", s.status.as_str()),
        format!("version:     {}", s.version),
        format!("tier:        {}", s.tier),
        format!(
            "permissions: {}",
            if s.permissions.is_empty() {
                "none".to_owned()
            } else {
                s.permissions.join(", ")
            }
        ),
        format!(
            "origin:      {}{}{}",
            d.provenance.origin,
            d.provenance
                .source
                .as_ref()
                .map(|x| format!(" from {x}"))
                .unwrap_or_default(),
            if s.curator.pinned { " (pinned)" } else { "" }
        ),
        format!("path:        {}", d.provenance.path),
    ];
    if let Some(r) = &d.reason {
        l.push(format!("rejected:    {r}"));
    }
    l.push(format!("executors:   {}", d.executor_details.len()));
    if s.plans_rejected > 0 {
        l.push(format!(
            "rejected:    {} (`skillc plan --explain` says why)",
            super::output::count(s.plans_rejected, "sub-command")
        ));
    }
    // One column of names, one of levels.
    let width = d
        .executor_details
        .iter()
        .map(|e| e.name.chars().count())
        .max()
        .unwrap_or(0);
    for e in &d.executor_details {
        let levels: Vec<String> = e.admission.levels.iter().map(|(k, v)| format!("{k} {v}")).collect();
        l.push(format!("  {:<width$}  [{}]", e.name, levels.join(", ")));
    }
    l.push(format!("findings:    {}", d.findings.len()));
    for f in &d.findings {
        l.push(format!(
            "  {}:{}:{}: {}[{}]: {}",
            f.file, f.line, f.column, f.severity, f.code, f.reason
        ));
    }
    l
}

pub(crate) fn search(args: &SearchArgs, out: &mut Printer) -> anyhow::Result<Status> {
    anyhow::ensure!(
        (1..=200).contains(&args.limit),
        "--limit is 1 to 200 (got {})",
        args.limit
    );
    anyhow::ensure!(
        !args.query.trim().is_empty(),
        "the query is empty: give words to look for"
    );
    let (catalog, notes) = match open(&args.catalog, out)? {
        Ok(x) => x,
        Err(s) => return Ok(s),
    };
    let hits = catalog.search_hits(&args.query, args.limit, &notes)?;
    match args.catalog.format {
        ReportFormat::Json => {
            let doc = crate::messages::search::SearchDoc {
                schema: "skillc.search/1",
                catalog: catalog_json(&catalog),
                query: args.query.clone(),
                embedder: catalog.menu().index().header.embedder.clone(),
                count: hits.len(),
                results: hits,
            };
            out.line(&serde_json::to_string_pretty(&doc)?)?;
        }
        ReportFormat::Human => {
            if hits.is_empty() {
                out.line("no skill matches")?;
            } else {
                out.line(&search_table(&hits))?;
            }
        }
    }
    out.flush()?;
    Ok(Status::Success)
}

/// `NAME  SCORE  DESCRIPTION`, a trigger hit marked after the score.
fn search_table(hits: &[SearchHit]) -> String {
    let width = hits
        .iter()
        .map(|h| h.summary.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(4);
    let mut s = format!("{:<width$}  SCORE   DESCRIPTION", "NAME");
    for h in hits {
        let mark = if h.triggers.is_empty() { ' ' } else { '*' };
        s.push_str(&format!(
            "\n{:<width$}  {:.4}{mark}  {}",
            h.summary.name, h.score, h.summary.description
        ));
    }
    if hits.iter().any(|h| !h.triggers.is_empty()) {
        s.push_str("\n* a trigger of the skill is in the query");
    }
    s
}

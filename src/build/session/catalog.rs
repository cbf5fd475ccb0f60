//! The top of `out/`: the report, the routing battery, the public key, and the signed
//! catalog that vouches for every other file. The catalog keeps its version and expiry while
//! what it says is unchanged (without `SOURCE_DATE_EPOCH`), so that a build that changes
//! nothing writes nothing.

use std::collections::BTreeMap;

use super::stamp::{Job, Stamped, rfc3339};
use super::{Options, Row};
use crate::build::Decisions;
use crate::build::report::{render_report, skill_status};
use crate::build::store::{CatalogState, State};
use crate::emit::{self, CatalogExecutor, CatalogHeader, CatalogSkill};
use crate::messages::report::Totals;
use crate::model::{Level, LevelStatus};
use crate::util::sha256;

/// `report.json`, from the skills' entries in catalog order.
pub(super) fn report(
    rows: &[Row<'_>],
    totals: &Totals,
    vocab_text: &str,
    opts: &Options,
    decisions: &Decisions,
) -> String {
    let entries: Vec<&str> = rows.iter().map(|r| r.report).collect();
    render_report(
        &entries,
        totals,
        &opts.vocab_path,
        &sha256(vocab_text.as_bytes()),
        &opts.skip,
        &decisions.levels,
        opts.sde.is_some(),
    )
}

/// `routing.toml`: the battery of the admitted executors.
pub(super) fn routing(decisions: &Decisions) -> String {
    emit::render_routing(
        &decisions.catalog.battery,
        decisions.levels.get(&Level::L4).copied().unwrap_or(LevelStatus::NotRun),
    )
}

/// The signed catalog of a build.
pub(super) struct SignedCatalog {
    /// `catalog.toml`.
    pub text: String,
    /// `catalog.toml.sig`.
    pub sig: String,
    /// What the store records: the digest of what it says, its version and expiry.
    pub state: CatalogState,
    /// The expiry, when it is already past.
    pub expired: Option<String>,
    /// Whether it was signed anew (what it says changed, or the key did).
    pub signed: bool,
}

/// What the catalog lists: the executors (with their manifests' digests) and the skills
/// (with their retained files), and the digests of the top-level files it vouches for.
pub(super) struct Listed {
    /// `[[executor]]`.
    pub executors: Vec<CatalogExecutor>,
    /// `[[skill]]`.
    pub skills: Vec<CatalogSkill>,
    /// `[files]`: top-level file → hex SHA-256.
    pub files: BTreeMap<String, String>,
}

impl Listed {
    /// The entries of the executors and of the skills in the catalog.
    pub fn of(rows: &[Row<'_>], jobs: &[Job<'_>], stamped: &[Stamped]) -> Listed {
        let executors = jobs
            .iter()
            .zip(stamped)
            .map(|(job, st)| CatalogExecutor {
                name: job.generated.executor.name.clone(),
                skill: job.generated.executor.skill.clone(),
                manifest_sha256: st.state.manifest_sha256.clone(),
            })
            .collect();
        let skills = rows
            .iter()
            .filter(|r| r.output.accepted)
            .filter_map(|r| {
                let info = r.unit.info.as_ref()?;
                Some(CatalogSkill {
                    name: info.name.clone(),
                    status: skill_status(r.unit, r.decision),
                    executors: r.output.executors.len(),
                    files: info.file_hashes.clone(),
                })
            })
            .collect();
        Listed {
            executors,
            skills,
            files: BTreeMap::new(),
        }
    }
}

/// Renders and signs the catalog: version and expiry from `SOURCE_DATE_EPOCH`, else kept from
/// the previous build while the catalog says the same, else the clock (never lower than the
/// previous version plus one).
pub(super) fn sign(listed: &Listed, opts: &Options, previous: &State, same_key: bool, now: i64) -> SignedCatalog {
    let skipped: Vec<String> = opts.skip.iter().map(|l| l.as_str().to_owned()).collect();
    let key_id = opts.key.public().key_id_hex();
    let body = |version: i64, expires: &str| {
        emit::render_catalog(
            &CatalogHeader {
                version,
                expires: expires.to_owned(),
                key_id: key_id.clone(),
                skipped: skipped.clone(),
            },
            &listed.files,
            &listed.executors,
            &listed.skills,
        )
    };
    let days = i64::from(opts.expires_days) * 86_400;
    let fingerprint = sha256(format!("{}\n{days}", body(0, "")).as_bytes());
    // A kept expiry must still be ahead of the clock: an expired catalog is renewed.
    let ahead = |c: &CatalogState| c.expires.parse::<jiff::Timestamp>().is_ok_and(|t| t.as_second() > now);
    let (version, expires) = match (opts.sde, &previous.catalog) {
        (Some(t), _) => (t, rfc3339(t + days)),
        (None, Some(c)) if c.fingerprint == fingerprint && ahead(c) => (c.version, c.expires.clone()),
        (None, prev) => {
            let v = prev.as_ref().map_or(now, |c| now.max(c.version + 1));
            (v, rfc3339(v + days))
        }
    };
    let expired = (version + days <= now.max(jiff::Timestamp::now().as_second())).then(|| expires.clone());
    let text = body(version, &expires);
    let text_sha = sha256(text.as_bytes());
    let signed = previous.outputs.get(emit::CATALOG).is_none_or(|o| o.sha256 != text_sha) || !same_key;
    let sig = opts
        .key
        .sign(text.as_bytes(), &emit::catalog_trusted_comment(version, &expires));
    SignedCatalog {
        text,
        sig,
        state: CatalogState {
            fingerprint,
            version,
            expires,
        },
        expired,
        signed,
    }
}

//! Stamping and signing the executors: each manifest gets its time (`SOURCE_DATE_EPOCH`, or
//! the previous build's while the manifest is unchanged, or now) and a signature, reusing the
//! previous signature when neither the manifest nor the key changed (Ed25519 is
//! deterministic, so a reused signature is the one signing would produce).

use rayon::prelude::*;

use crate::build::store::{ExecutorState, State};
use crate::build::{Generated, SkillUnit};
use crate::emit;
use crate::generate::Stamp;
use crate::model::Level;
use crate::sign::SecretKey;
use crate::util::sha256;

/// An executor of the catalog and its manifest's stamp.
pub(super) struct Job<'a> {
    /// Its skill.
    pub unit: &'a SkillUnit,
    /// The executor, as generated.
    pub generated: &'a Generated,
}

/// One executor, stamped and signed.
pub(super) struct Stamped {
    /// What the store records of it (time, manifest digest, signature).
    pub state: ExecutorState,
    /// The stamped manifest, when it was rendered (signed anew); `None` when the previous
    /// signature was reused (the manifest is rendered only if it must be written).
    pub manifest: Option<String>,
}

impl Stamped {
    /// Whether this build signed the manifest.
    pub fn signed(&self) -> bool {
        self.manifest.is_some()
    }
}

/// How the build stamps: the clock and `SOURCE_DATE_EPOCH`, the key and whether it is the
/// one of the previous build, the levels skipped.
pub(super) struct Stamper<'a> {
    /// `SOURCE_DATE_EPOCH`, when set.
    pub sde: Option<i64>,
    /// The clock (seconds).
    pub now: i64,
    /// The signing key.
    pub key: &'a SecretKey,
    /// The previous build signed with this key.
    pub same_key: bool,
    /// Levels skipped on request.
    pub skip: &'a [Level],
}

impl Stamper<'_> {
    /// Stamps and signs every executor, in parallel, in the order given.
    pub fn stamp_all(&self, jobs: &[Job<'_>], previous: &State) -> Vec<Stamped> {
        jobs.par_iter()
            .map(|job| self.stamp(job, previous.executors.get(&job.generated.executor.name)))
            .collect()
    }

    fn stamp(&self, job: &Job<'_>, prev: Option<&ExecutorState>) -> Stamped {
        let g = job.generated;
        let imported_at = match (self.sde, prev) {
            (Some(t), _) => rfc3339(t),
            (None, Some(p)) if p.fingerprint == g.fingerprint => p.imported_at.clone(),
            (None, _) => rfc3339(self.now),
        };
        if let Some(p) = prev
            && self.same_key
            && p.fingerprint == g.fingerprint
            && p.imported_at == imported_at
        {
            return Stamped {
                state: p.clone(),
                manifest: None,
            };
        }
        let manifest = stamp_manifest(job.unit, g, &imported_at, self.skip);
        let sig = self
            .key
            .sign(manifest.as_bytes(), &emit::manifest_trusted_comment(&g.executor.name));
        Stamped {
            state: ExecutorState {
                fingerprint: g.fingerprint.clone(),
                imported_at,
                manifest_sha256: sha256(manifest.as_bytes()),
                sig,
            },
            manifest: Some(manifest),
        }
    }
}

/// An RFC 3339 UTC time (`2027-01-15T08:00:00Z`) of Unix seconds.
pub(super) fn rfc3339(secs: i64) -> String {
    jiff::Timestamp::from_second(secs)
        .map(|t| t.to_string())
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".into())
}

/// The manifest of a generated executor stamped with `imported_at`.
pub(super) fn stamp_manifest(unit: &SkillUnit, g: &Generated, imported_at: &str, skipped: &[Level]) -> String {
    let mut e = g.executor.clone();
    if let (Some(plan), Some(info)) = (unit.translation.plans.get(g.plan), unit.info.as_ref())
        && let Some(name) = plan.name()
    {
        e.restamp(
            plan,
            name,
            info,
            &Stamp {
                levels: g.levels.clone(),
                skipped: skipped.to_vec(),
                imported_at: imported_at.to_owned(),
            },
        );
    }
    e.manifest
}

//! `pipeline.toml`: the declarative build configuration (FORMATS.md, "pipeline.toml").
//!
//! Every key is optional; a missing file means every default. Unknown keys and values of the
//! wrong type are diagnostics with file:line:column (`CF002`, `CF001`), never a crash. Parsing
//! is pure: the caller reads the file.

use std::path::PathBuf;

use serde::Deserialize;

use crate::diag::{Diagnostic, Source, toml_error};
use crate::model::{AdmissionSettings, FindingSeverity, Level, Limits};
use crate::rules;

/// Longest catalog lifetime accepted, in days (100 years).
pub const MAX_EXPIRES_DAYS: u32 = 36_500;

/// Default maximum age of the import download cache, in days (seed 000: seven days).
pub const DEFAULT_IMPORT_MAX_AGE_DAYS: u32 = 7;

/// Longest accepted import cache age, in days (10 years).
pub const MAX_IMPORT_MAX_AGE_DAYS: u32 = 3_650;

/// Default of `[import] max_repository_bytes` (64 MiB: twice what a zip import may expand to).
pub const DEFAULT_IMPORT_MAX_REPOSITORY_BYTES: u64 = 64 * 1024 * 1024;

/// Default of `[import] max_repository_files`.
pub const DEFAULT_IMPORT_MAX_REPOSITORY_FILES: usize = 20_000;

/// Default of `[import] timeout_seconds` (five minutes).
pub const DEFAULT_IMPORT_TIMEOUT_SECONDS: u64 = 300;

/// Longest accepted `[import] timeout_seconds` (one day).
pub const MAX_IMPORT_TIMEOUT_SECONDS: u64 = 86_400;

/// File name of the configuration, at the project root.
pub const FILE_NAME: &str = "pipeline.toml";

mod cache;
pub use cache::{CacheRemote, RemoteLocation};
use cache::{CacheSection, cache_section};

/// The resolved configuration. Paths are relative to the project root.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Roots searched for skills (default `["skills"]`).
    pub skills: Vec<PathBuf>,
    /// The output folder (default `out`).
    pub out: PathBuf,
    /// A vocabulary file overriding the built-in one (default: `vocabulary.toml` when present).
    pub vocabulary: Option<PathBuf>,
    /// Signing key file (default `.skillc/signing.key`); `SKILLC_SIGNING_KEY` overrides it.
    pub signing_key: PathBuf,
    /// Catalog expiry, in days from the issue time (default 365).
    pub expires_days: u32,
    /// Admission levels skipped (recorded as weakened evidence).
    pub skip: Vec<Level>,
    /// The `[admission]` thresholds and external verifier.
    pub admission: AdmissionSettings,
    /// Findings at or above this severity reject a skill.
    pub fail_on: FindingSeverity,
    /// Size and count limits.
    pub limits: Limits,
    /// Whether `vocabulary` names a file other than the default `vocabulary.toml` (such a file
    /// must exist; the default falls back to the built-in vocabulary).
    pub vocabulary_explicit: bool,
    /// `[import] max_age_days`: cached remote sources older than this are fetched again
    /// (default 7; 0 always fetches).
    pub import_max_age_days: u32,
    /// `[import] max_repository_bytes`: most bytes a git import may fetch or check out
    /// (default 64 MiB).
    pub import_max_repository_bytes: u64,
    /// `[import] max_repository_files`: most files the commit of a git import may hold
    /// (default 20000).
    pub import_max_repository_files: usize,
    /// `[import] timeout_seconds`: the longest a git import's fetch may take (default 300).
    pub import_timeout_seconds: u64,
    /// `[check]`: the codes `skillc check` does not report, everywhere or under some paths.
    pub check: crate::suppress::CheckConfig,
    /// `[scan] baseline`: the scan baseline file, relative to the root (default
    /// `skillc-scan-baseline.json` when it exists).
    pub scan_baseline: Option<PathBuf>,
    /// `[verify] keys`: the public key files `skillc verify` accepts a catalog from, relative
    /// to the root (the consumer's pinned signers; several during a key rotation). Empty: no
    /// key is configured (verify falls back to trust on first use).
    pub verify_keys: Vec<PathBuf>,
    /// `[cache]`: the remote build cache shared by machines and shards (`None`: local only).
    pub cache_remote: Option<CacheRemote>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            skills: vec![PathBuf::from("skills")],
            out: PathBuf::from("out"),
            vocabulary: Some(PathBuf::from("vocabulary.toml")),
            signing_key: PathBuf::from(".skillc/signing.key"),
            expires_days: 365,
            skip: Vec::new(),
            admission: AdmissionSettings::default(),
            fail_on: FindingSeverity::High,
            limits: Limits::default(),
            vocabulary_explicit: false,
            import_max_age_days: DEFAULT_IMPORT_MAX_AGE_DAYS,
            import_max_repository_bytes: DEFAULT_IMPORT_MAX_REPOSITORY_BYTES,
            import_max_repository_files: DEFAULT_IMPORT_MAX_REPOSITORY_FILES,
            import_timeout_seconds: DEFAULT_IMPORT_TIMEOUT_SECONDS,
            check: crate::suppress::CheckConfig::default(),
            scan_baseline: None,
            verify_keys: Vec::new(),
            cache_remote: None,
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct File {
    pipeline: Option<PipelineSection>,
    signing: Option<SigningSection>,
    admission: Option<AdmissionSection>,
    scan: Option<ScanSection>,
    limits: Option<LimitsSection>,
    import: Option<ImportSection>,
    /// `[menu]` and `[agents.<id>]`: parsed with their own diagnostics by
    /// `menu::settings::parse`.
    #[serde(rename = "menu")]
    _menu: Option<serde::de::IgnoredAny>,
    #[serde(rename = "agents")]
    _agents: Option<serde::de::IgnoredAny>,
    check: Option<CheckSection>,
    verify: Option<VerifySection>,
    cache: Option<CacheSection>,
    /// `[curator]`: parsed with its own diagnostics by `curate::config::parse`.
    #[serde(rename = "curator")]
    _curator: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct CheckSection {
    ignore: Option<Vec<toml::Spanned<String>>>,
    overrides: Option<Vec<OverrideSection>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OverrideSection {
    paths: Vec<toml::Spanned<String>>,
    ignore: Vec<toml::Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct VerifySection {
    keys: Option<Vec<toml::Spanned<String>>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ImportSection {
    max_age_days: Option<toml::Spanned<i64>>,
    max_repository_bytes: Option<toml::Spanned<i64>>,
    max_repository_files: Option<toml::Spanned<i64>>,
    timeout_seconds: Option<toml::Spanned<i64>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct PipelineSection {
    skills: Option<Vec<String>>,
    out: Option<String>,
    vocabulary: Option<String>,
    provider_from: Option<toml::Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct SigningSection {
    key: Option<String>,
    expires_days: Option<toml::Spanned<i64>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct AdmissionSection {
    skip: Option<Vec<toml::Spanned<String>>>,
    affinity_threshold: Option<toml::Spanned<f64>>,
    affinity_threshold_same_provider: Option<toml::Spanned<f64>>,
    verifier: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ScanSection {
    fail_on: Option<toml::Spanned<String>>,
    baseline: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct LimitsSection {
    skill_md_bytes: Option<toml::Spanned<i64>>,
    support_file_bytes: Option<toml::Spanned<i64>>,
    files_per_skill: Option<toml::Spanned<i64>>,
}

/// Parses the text of `pipeline.toml` shown as `file`. Problems are diagnostics; the returned
/// configuration holds the defaults for anything that could not be read.
pub fn parse(file: &str, text: &str) -> (Config, Vec<Diagnostic>) {
    let src = Source::new(file, text);
    let mut diags = Vec::new();
    let mut cfg = Config::default();
    let parsed: File = match toml::from_str(text) {
        Ok(f) => f,
        Err(e) => {
            diags.push(toml_error(&src, &e, &rules::CF001, &rules::CF002));
            return (cfg, diags);
        }
    };
    if let Some(p) = parsed.pipeline {
        if let Some(s) = p.skills {
            cfg.skills = s.into_iter().map(PathBuf::from).collect();
        }
        if let Some(o) = p.out {
            cfg.out = PathBuf::from(o);
        }
        if let Some(v) = p.vocabulary {
            // The default name falls back to the built-in vocabulary when the file is absent
            // (FORMATS.md); any other name must exist.
            cfg.vocabulary_explicit = !v.is_empty() && v != "vocabulary.toml";
            cfg.vocabulary = (!v.is_empty()).then(|| PathBuf::from(v));
        }
        if let Some(pf) = p.provider_from
            && pf.get_ref() != "name"
        {
            diags.push(
                Diagnostic::new(
                    &rules::CF001,
                    file,
                    src.span(pf.span()),
                    format!("unknown `provider_from` value `{}`", pf.get_ref()),
                )
                .help("the only supported value is \"name\": the skill name with `-` replaced by `_`"),
            );
        }
    }
    if let Some(s) = parsed.signing {
        if let Some(k) = s.key {
            cfg.signing_key = PathBuf::from(k);
        }
        if let Some(d) = s.expires_days {
            match u32::try_from(*d.get_ref()) {
                Ok(v) if (1..=MAX_EXPIRES_DAYS).contains(&v) => cfg.expires_days = v,
                _ => diags.push(Diagnostic::new(
                    &rules::CF001,
                    file,
                    src.span(d.span()),
                    "`expires_days` must be a number of days between 1 and 36500 (100 years)",
                )),
            }
        }
    }
    if let Some(a) = parsed.admission {
        admission(&src, a, &mut cfg, &mut diags);
    }
    if let Some(b) = parsed.scan.as_ref().and_then(|s| s.baseline.as_ref()) {
        cfg.scan_baseline = (!b.is_empty()).then(|| PathBuf::from(b));
    }
    if let Some(c) = parsed.check {
        cfg.check = check_section(&src, c, &mut diags);
    }
    if let Some(s) = parsed.scan
        && let Some(f) = s.fail_on
    {
        match FindingSeverity::parse(f.get_ref()) {
            Some(sev) => cfg.fail_on = sev,
            None => diags.push(
                Diagnostic::new(
                    &rules::CF001,
                    file,
                    src.span(f.span()),
                    format!("unknown severity `{}`", f.get_ref()),
                )
                .help("use info, low, medium, high or critical"),
            ),
        }
    }
    if let Some(l) = parsed.limits {
        limits(&src, l, &mut cfg, &mut diags);
    }
    if let Some(i) = parsed.import {
        import_section(i, &src, &mut cfg, &mut diags);
    }
    if let Some(c) = parsed.cache {
        cfg.cache_remote = cache_section(c, &src, &mut diags);
    }
    for k in parsed.verify.and_then(|v| v.keys).unwrap_or_default() {
        if k.get_ref().trim().is_empty() {
            diags.push(Diagnostic::new(
                &rules::CF001,
                file,
                src.span(k.span()),
                "a `[verify] keys` entry is the path of a public key file (`skillc.pub`)",
            ));
        } else {
            cfg.verify_keys.push(PathBuf::from(k.into_inner()));
        }
    }
    (cfg, diags)
}

/// `[import]`: the cache's age and the bounds of a git fetch.
fn import_section(i: ImportSection, src: &Source<'_>, cfg: &mut Config, diags: &mut Vec<Diagnostic>) {
    let mut bad = |v: &toml::Spanned<i64>, message: &str| {
        diags.push(Diagnostic::new(&rules::CF001, src.file, src.span(v.span()), message));
    };
    if let Some(d) = i.max_age_days {
        match u32::try_from(*d.get_ref()) {
            Ok(v) if v <= MAX_IMPORT_MAX_AGE_DAYS => cfg.import_max_age_days = v,
            _ => bad(
                &d,
                "`max_age_days` must be a number of days between 0 (always fetch) and 3650",
            ),
        }
    }
    if let Some(b) = i.max_repository_bytes {
        match u64::try_from(*b.get_ref()) {
            Ok(v) if v > 0 => cfg.import_max_repository_bytes = v,
            _ => bad(&b, "`max_repository_bytes` must be a positive number of bytes"),
        }
    }
    if let Some(f) = i.max_repository_files {
        match usize::try_from(*f.get_ref()) {
            Ok(v) if v > 0 => cfg.import_max_repository_files = v,
            _ => bad(&f, "`max_repository_files` must be a positive number of files"),
        }
    }
    if let Some(t) = i.timeout_seconds {
        match u64::try_from(*t.get_ref()) {
            Ok(v) if (1..=MAX_IMPORT_TIMEOUT_SECONDS).contains(&v) => cfg.import_timeout_seconds = v,
            _ => bad(&t, "`timeout_seconds` must be a number of seconds between 1 and 86400"),
        }
    }
}

/// `[admission]`: levels skipped (never L1), thresholds between 0 and 1, the verifier.
fn admission(src: &Source<'_>, a: AdmissionSection, cfg: &mut Config, diags: &mut Vec<Diagnostic>) {
    let file = src.file;
    for s in a.skip.unwrap_or_default() {
        match Level::parse(s.get_ref()) {
            Some(Level::L1) | None => diags.push(
                Diagnostic::new(
                    &rules::CF001,
                    file,
                    src.span(s.span()),
                    format!("cannot skip `{}`", s.get_ref()),
                )
                .help("levels L2 to L6 may be skipped for development; L1 (the vocabulary) never is"),
            ),
            Some(l) => {
                if !cfg.skip.contains(&l) {
                    cfg.skip.push(l);
                }
            }
        }
    }
    cfg.skip.sort();
    for (slot, value) in [
        (&mut cfg.admission.affinity_threshold, a.affinity_threshold),
        (
            &mut cfg.admission.affinity_threshold_same_provider,
            a.affinity_threshold_same_provider,
        ),
    ] {
        if let Some(v) = value {
            if (0.0..=1.0).contains(v.get_ref()) {
                *slot = *v.get_ref();
            } else {
                diags.push(Diagnostic::new(
                    &rules::CF001,
                    file,
                    src.span(v.span()),
                    "an affinity threshold is a number between 0 and 1",
                ));
            }
        }
    }
    if let Some(v) = a.verifier {
        cfg.admission.verifier = v;
    }
}

/// `[limits]`: positive integers.
fn limits(src: &Source<'_>, l: LimitsSection, cfg: &mut Config, diags: &mut Vec<Diagnostic>) {
    let file = src.file;
    let mut set = |v: Option<toml::Spanned<i64>>, apply: &mut dyn FnMut(u64)| {
        if let Some(v) = v {
            match u64::try_from(*v.get_ref()) {
                Ok(n) if n > 0 => apply(n),
                _ => diags.push(Diagnostic::new(
                    &rules::CF001,
                    file,
                    src.span(v.span()),
                    "a limit must be a positive integer",
                )),
            }
        }
    };
    set(l.skill_md_bytes, &mut |n| cfg.limits.skill_md_bytes = n);
    set(l.support_file_bytes, &mut |n| cfg.limits.support_file_bytes = n);
    set(l.files_per_skill, &mut |n| {
        cfg.limits.files_per_skill = usize::try_from(n).unwrap_or(usize::MAX)
    });
}

/// The `[check]` table: codes are `SK` rule codes or names (`metadata-not-string`), stored
/// as codes; an unknown one is `CF001` at its position.
fn check_section(src: &Source<'_>, c: CheckSection, diags: &mut Vec<Diagnostic>) -> crate::suppress::CheckConfig {
    let codes = |list: Vec<toml::Spanned<String>>, diags: &mut Vec<Diagnostic>| -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for c in list {
            match rules::find(c.get_ref()).filter(|r| r.code.starts_with("SK")) {
                Some(r) => {
                    if !out.iter().any(|x| x == r.code) {
                        out.push(r.code.to_owned());
                    }
                }
                None => diags.push(
                    Diagnostic::new(
                        &rules::CF001,
                        src.file,
                        src.span(c.span()),
                        format!("`{}` is not a code `skillc check` reports", c.get_ref()),
                    )
                    .help("use `SK…` codes or rule names; `skillc explain` lists them"),
                ),
            }
        }
        out
    };
    let ignore = codes(c.ignore.unwrap_or_default(), diags);
    let mut overrides = Vec::new();
    for o in c.overrides.unwrap_or_default() {
        let mut paths = Vec::new();
        for p in o.paths {
            if p.get_ref().trim().is_empty() || p.get_ref().starts_with('/') {
                diags.push(Diagnostic::new(
                    &rules::CF001,
                    src.file,
                    src.span(p.span()),
                    "an override path is a glob relative to the project root, e.g. \"skills/legacy/**\"",
                ));
            } else {
                paths.push(p.into_inner());
            }
        }
        let ignore = codes(o.ignore, diags);
        overrides.push(crate::suppress::Override { paths, ignore });
    }
    crate::suppress::CheckConfig { ignore, overrides }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_is_all_defaults() {
        let (cfg, diags) = parse("pipeline.toml", "");
        assert!(diags.is_empty());
        assert_eq!(cfg, Config::default());
    }

    #[test]
    fn unknown_keys_are_cf002_with_position() {
        let (_, diags) = parse("pipeline.toml", "[pipeline]\nout = \"dist\"\nskils = [\"x\"]\n");
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].rule.code, "CF002");
        assert_eq!((diags[0].span.start.line, diags[0].span.start.column), (3, 1));
    }

    #[test]
    fn wrong_types_and_values_are_cf001() {
        let (_, d) = parse("p", "[signing]\nexpires_days = \"soon\"\n");
        assert_eq!(d[0].rule.code, "CF001");
        let (cfg, d) = parse("p", "[admission]\nskip = [\"L5\", \"l2\", \"L1\"]\n");
        assert_eq!(cfg.skip, vec![Level::L2, Level::L5]);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].span.start.column, 21);
    }

    #[test]
    fn check_suppressions() {
        let text = "[check]\nignore = [\"SK035\", \"metadata-not-string\"]\n\n[[check.overrides]]\npaths = [\"skills/legacy/**\"]\nignore = [\"SK027\"]\n";
        let (cfg, d) = parse("p", text);
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(cfg.check.ignore, vec!["SK035"]);
        assert_eq!(cfg.check.overrides[0].paths, vec!["skills/legacy/**"]);
        let (_, d) = parse("p", "[check]\nignore = [\"SK999\", \"SC011\"]\n");
        assert_eq!(
            d.iter().map(|d| (d.rule.code, d.span.start.line)).collect::<Vec<_>>(),
            vec![("CF001", 2), ("CF001", 2)]
        );
        let (_, d) = parse("p", "[check]\nignroe = []\n");
        assert_eq!((d[0].rule.code, d[0].span.start.line), ("CF002", 2));
        let (_, d) = parse("p", "[[check.overrides]]\npaths = [\"a\"]\nignore = []\ncodes = []\n");
        assert_eq!((d[0].rule.code, d[0].span.start.line), ("CF002", 4));
        let (cfg, d) = parse("p", "[scan]\nbaseline = \"ci/baseline.json\"\n");
        assert!(d.is_empty());
        assert_eq!(cfg.scan_baseline, Some(PathBuf::from("ci/baseline.json")));
    }

    #[test]
    fn import_max_age_days() {
        assert_eq!(Config::default().import_max_age_days, 7);
        let (cfg, d) = parse("p", "[import]\nmax_age_days = 0\n");
        assert!(d.is_empty());
        assert_eq!(cfg.import_max_age_days, 0);
        let (cfg, d) = parse("p", "[import]\nmax_age_days = -1\n");
        assert_eq!((d[0].rule.code, d[0].span.start.line), ("CF001", 2));
        assert_eq!(cfg.import_max_age_days, 7);
        let (_, d) = parse("p", "[import]\nmax_age = 3\n");
        assert_eq!(d[0].rule.code, "CF002");
    }

    /// Issue 18, item 1: `[verify] keys`, the consumer's pinned signers.
    #[test]
    fn verify_keys() {
        let (cfg, d) = parse("p", "[verify]\nkeys = [\"keys/2027.pub\", \"keys/2026.pub\"]\n");
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(
            cfg.verify_keys,
            [PathBuf::from("keys/2027.pub"), PathBuf::from("keys/2026.pub")]
        );
        let (_, d) = parse("p", "[verify]\nkeys = [\"\"]\n");
        assert_eq!((d[0].rule.code, d[0].span.start.line), ("CF001", 2));
        let (_, d) = parse("p", "[verify]\nkey = \"x\"\n");
        assert_eq!(d[0].rule.code, "CF002");
    }

    /// Issue 18, item 4: the git import bounds, with their defaults and their checks.
    #[test]
    fn import_git_bounds() {
        let d = Config::default();
        assert_eq!(
            (
                d.import_max_repository_bytes,
                d.import_max_repository_files,
                d.import_timeout_seconds
            ),
            (64 * 1024 * 1024, 20_000, 300)
        );
        let (cfg, d) = parse(
            "p",
            "[import]\nmax_repository_bytes = 10\nmax_repository_files = 2\ntimeout_seconds = 5\n",
        );
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(
            (
                cfg.import_max_repository_bytes,
                cfg.import_max_repository_files,
                cfg.import_timeout_seconds
            ),
            (10, 2, 5)
        );
        let (_, d) = parse(
            "p",
            "[import]\nmax_repository_bytes = 0\nmax_repository_files = -1\ntimeout_seconds = 0\n",
        );
        let lines: Vec<(&str, u32)> = d.iter().map(|d| (d.rule.code, d.span.start.line)).collect();
        assert_eq!(lines, [("CF001", 2), ("CF001", 3), ("CF001", 4)]);
    }
}

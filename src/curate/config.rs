//! `pipeline.toml` `[curator]` (README, "Curator"; FORMATS.md, "pipeline.toml"): parsed from
//! the same text as the rest of the file, with the same diagnostics — an unknown key is
//! `CF002`, a value of the wrong type or out of range `CF001`, each with file:line:column.
//! Pure: the caller reads the file.

use std::path::PathBuf;

use serde::Deserialize;
use toml::Spanned;

use super::budget::{Pricing, Usd};
use crate::diag::Diagnostic;
use crate::diag::Source;
use crate::rules;

/// Default interval between `skillc curate maybe` runs: seven days (seed 002 §7.1).
pub const DEFAULT_INTERVAL_SECS: i64 = 7 * 86_400;

/// Default seconds a model call may take.
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;

/// Default output cap of a model call, in tokens.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 4096;

/// How the auxiliary model is reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    /// A command run in the project root: the request as JSON on stdin, the verdict as JSON on
    /// stdout (`model = { command = ["prog", "arg"] }`).
    Command(Vec<String>),
    /// An OpenAI-compatible chat endpoint (`model = { url, model }`).
    Http {
        /// `…/v1/chat/completions` (a URL ending in `/v1`, or with no path, is completed).
        url: String,
        /// Name of an environment variable holding the bearer token, if any.
        api_key_env: Option<String>,
    },
}

/// The auxiliary model (`[curator] model`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelConfig {
    /// How to reach it.
    pub transport: Transport,
    /// Its name, as recorded in `skill.curated` (`model` key; for a command, `command` when
    /// unset).
    pub name: String,
    /// Seconds one call may take before it counts as unavailable.
    pub timeout_secs: u64,
    /// The output cap of one call, in tokens (sent to the model, used by the estimate).
    pub max_output_tokens: u32,
}

/// The resolved `[curator]` section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CuratorConfig {
    /// The kill switch: `false` stops every run, the explicit CLI included.
    pub enabled: bool,
    /// Least time between two runs started by `skillc curate maybe`, in seconds; also the
    /// window of an edit candidate's loads.
    pub interval_secs: i64,
    /// Days without a load (or since creation, when never loaded) before a skill is an
    /// archive candidate; also the window of consolidation's "loaded at least once".
    pub archive_after_days: u32,
    /// Days without a load before a skill is shown as stale (never acted on alone).
    pub stale_after_days: u32,
    /// The cap of one run's model calls.
    pub per_run_max: Usd,
    /// The cap of one UTC day's model calls.
    pub per_day_max: Usd,
    /// Whether `skillc playbook` and serve record `skill.loaded` in the project's log.
    pub record_loads: bool,
    /// Another runtime's log read besides the project's (relative to the project root).
    pub events: Option<PathBuf>,
    /// The auxiliary model; without one, every model-confirmed action is `model_unavailable`.
    pub model: Option<ModelConfig>,
    /// Prices for the estimate.
    pub pricing: Pricing,
}

impl Default for CuratorConfig {
    fn default() -> Self {
        CuratorConfig {
            enabled: true,
            interval_secs: DEFAULT_INTERVAL_SECS,
            archive_after_days: 90,
            stale_after_days: 30,
            per_run_max: Usd(500_000),
            per_day_max: Usd(1_000_000),
            record_loads: false,
            events: None,
            model: None,
            pricing: Pricing::default(),
        }
    }
}

impl CuratorConfig {
    /// The thresholds selection applies.
    pub fn policy(&self) -> super::select::Policy {
        super::select::Policy {
            archive_after_secs: i64::from(self.archive_after_days) * 86_400,
            stale_after_secs: i64::from(self.stale_after_days) * 86_400,
            interval_secs: self.interval_secs,
        }
    }
}

#[derive(Deserialize, Default)]
struct Outer {
    curator: Option<Section>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Section {
    enabled: Option<bool>,
    interval: Option<Spanned<String>>,
    archive_after_days: Option<Spanned<i64>>,
    stale_after_days: Option<Spanned<i64>>,
    per_run_max_usd: Option<Spanned<f64>>,
    per_day_max_usd: Option<Spanned<f64>>,
    record_loads: Option<bool>,
    events: Option<String>,
    model: Option<Spanned<ModelSection>>,
    pricing: Option<PricingSection>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ModelSection {
    command: Option<Spanned<Vec<String>>>,
    url: Option<Spanned<String>>,
    model: Option<String>,
    api_key_env: Option<Spanned<String>>,
    timeout_secs: Option<Spanned<i64>>,
    max_output_tokens: Option<Spanned<i64>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct PricingSection {
    input_usd_per_mtok: Option<Spanned<f64>>,
    output_usd_per_mtok: Option<Spanned<f64>>,
}

/// Parses a duration `N` followed by `m`, `h` or `d` (`"7d"`, `"12h"`) into seconds.
pub fn parse_duration(s: &str) -> Option<i64> {
    let s = s.trim();
    let (n, unit) = s.split_at(s.len().checked_sub(1)?);
    let n: i64 = n.trim().parse().ok().filter(|n| *n > 0)?;
    let unit = match unit {
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        _ => return None,
    };
    n.checked_mul(unit).filter(|secs| *secs <= 36_500 * 86_400)
}

/// Parses the `[curator]` section of the text of `pipeline.toml` shown as `file`; other
/// sections are left to `config::parse`. Problems are diagnostics; what could not be read
/// keeps its default.
pub fn parse(file: &str, text: &str) -> (CuratorConfig, Vec<Diagnostic>) {
    let src = Source::new(file, text);
    let mut diags = Vec::new();
    let mut cfg = CuratorConfig::default();
    // `config::parse` reports syntax errors; only what is wrong inside `[curator]` is ours.
    if toml::from_str::<toml::Table>(text).is_err() {
        return (cfg, diags);
    }
    let section = match toml::from_str::<Outer>(text) {
        Ok(o) => o.curator.unwrap_or_default(),
        Err(e) => {
            diags.push(crate::diag::toml_error(&src, &e, &rules::CF001, &rules::CF002));
            return (cfg, diags);
        }
    };
    let mut bad = |span: std::ops::Range<usize>, message: &str| {
        diags.push(Diagnostic::new(&rules::CF001, file, src.span(span), message.to_owned()));
    };
    if let Some(v) = section.enabled {
        cfg.enabled = v;
    }
    if let Some(v) = section.record_loads {
        cfg.record_loads = v;
    }
    if let Some(i) = section.interval {
        match parse_duration(i.get_ref()) {
            Some(secs) => cfg.interval_secs = secs,
            None => bad(i.span(), "`interval` is a duration such as \"7d\", \"12h\" or \"30m\""),
        }
    }
    for (slot, value, key) in [
        (
            &mut cfg.archive_after_days,
            section.archive_after_days,
            "archive_after_days",
        ),
        (&mut cfg.stale_after_days, section.stale_after_days, "stale_after_days"),
    ] {
        if let Some(v) = value {
            match u32::try_from(*v.get_ref()) {
                Ok(d) if (1..=36_500).contains(&d) => *slot = d,
                _ => bad(v.span(), &format!("`{key}` is a number of days between 1 and 36500")),
            }
        }
    }
    for (slot, value, key) in [
        (&mut cfg.per_run_max, section.per_run_max_usd, "per_run_max_usd"),
        (&mut cfg.per_day_max, section.per_day_max_usd, "per_day_max_usd"),
    ] {
        if let Some(v) = value {
            match Usd::from_dollars(*v.get_ref()) {
                Some(u) => *slot = u,
                None => bad(v.span(), &format!("`{key}` is an amount of dollars, 0 or more")),
            }
        }
    }
    if let Some(p) = section.pricing {
        for (slot, value) in [
            (&mut cfg.pricing.input_per_mtok, p.input_usd_per_mtok),
            (&mut cfg.pricing.output_per_mtok, p.output_usd_per_mtok),
        ] {
            if let Some(v) = value {
                match Usd::from_dollars(*v.get_ref()) {
                    Some(u) => *slot = u,
                    None => bad(v.span(), "a price is dollars per million tokens, 0 or more"),
                }
            }
        }
    }
    cfg.events = section.events.filter(|e| !e.is_empty()).map(PathBuf::from);
    if let Some(m) = section.model {
        let span = m.span();
        cfg.model = model(m.into_inner(), span, &mut bad);
    }
    (cfg, diags)
}

fn model(
    m: ModelSection,
    span: std::ops::Range<usize>,
    bad: &mut impl FnMut(std::ops::Range<usize>, &str),
) -> Option<ModelConfig> {
    let mut timeout_secs = DEFAULT_TIMEOUT_SECS;
    if let Some(t) = m.timeout_secs {
        match u64::try_from(*t.get_ref()) {
            Ok(s) if (1..=3_600).contains(&s) => timeout_secs = s,
            _ => bad(t.span(), "`timeout_secs` is a number of seconds between 1 and 3600"),
        }
    }
    let mut max_output_tokens = DEFAULT_MAX_OUTPUT_TOKENS;
    if let Some(t) = m.max_output_tokens {
        match u32::try_from(*t.get_ref()) {
            Ok(n) if (1..=1_000_000).contains(&n) => max_output_tokens = n,
            _ => bad(
                t.span(),
                "`max_output_tokens` is a number of tokens between 1 and 1000000",
            ),
        }
    }
    let transport = match (m.command, m.url) {
        (Some(c), None) => {
            if c.get_ref().is_empty() || c.get_ref()[0].is_empty() {
                bad(
                    c.span(),
                    "`command` is a program and its arguments, e.g. [\"python3\", \"curator.py\"]",
                );
                return None;
            }
            if let Some(k) = &m.api_key_env {
                bad(
                    k.span(),
                    "`api_key_env` is for `url`; a command reads its own environment",
                );
            }
            Transport::Command(c.into_inner())
        }
        (None, Some(u)) => {
            let url = u.get_ref().trim();
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                bad(
                    u.span(),
                    "`url` is an http:// or https:// address of an OpenAI-compatible endpoint",
                );
                return None;
            }
            if m.model.as_deref().is_none_or(str::is_empty) {
                bad(span, "an endpoint needs `model`, the model name it serves");
                return None;
            }
            let api_key_env = m.api_key_env.map(Spanned::into_inner).filter(|k| !k.is_empty());
            Transport::Http {
                url: url.to_owned(),
                api_key_env,
            }
        }
        _ => {
            bad(span, "`model` needs exactly one of `command = [...]` or `url = \"…\"`");
            return None;
        }
    };
    let name = m
        .model
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "command".to_owned());
    if crate::events::check_id("model", &name).is_err() {
        bad(
            span,
            "`model` is a model name without spaces (it is recorded in events)",
        );
        return None;
    }
    Some(ModelConfig {
        transport,
        name,
        timeout_secs,
        max_output_tokens,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_without_a_section() {
        let (cfg, d) = parse("pipeline.toml", "[pipeline]\nout = \"out\"\n");
        assert!(d.is_empty());
        assert_eq!(cfg, CuratorConfig::default());
        assert_eq!(cfg.per_run_max, Usd(500_000));
    }

    #[test]
    fn every_key_reads() {
        let text = "[curator]\nenabled = false\ninterval = \"12h\"\narchive_after_days = 60\n\
                    stale_after_days = 20\nper_run_max_usd = 0.25\nper_day_max_usd = 2\nrecord_loads = true\n\
                    events = \"../runtime/events.jsonl\"\n\
                    model = { command = [\"python3\", \"m.py\"], timeout_secs = 5, max_output_tokens = 100 }\n\
                    pricing = { input_usd_per_mtok = 0.8, output_usd_per_mtok = 4 }\n";
        let (cfg, d) = parse("pipeline.toml", text);
        assert!(d.is_empty(), "{d:?}");
        assert!(!cfg.enabled && cfg.record_loads);
        assert_eq!(cfg.interval_secs, 12 * 3600);
        assert_eq!((cfg.archive_after_days, cfg.stale_after_days), (60, 20));
        assert_eq!((cfg.per_run_max, cfg.per_day_max), (Usd(250_000), Usd(2_000_000)));
        assert_eq!(cfg.events, Some(PathBuf::from("../runtime/events.jsonl")));
        let m = cfg.model.unwrap();
        assert_eq!(m.transport, Transport::Command(vec!["python3".into(), "m.py".into()]));
        assert_eq!(
            (m.timeout_secs, m.max_output_tokens, m.name.as_str()),
            (5, 100, "command")
        );
        assert_eq!(cfg.pricing.input_per_mtok, Usd(800_000));
    }

    #[test]
    fn unknown_keys_and_bad_values_have_positions() {
        let (_, d) = parse("pipeline.toml", "[curator]\nenabled = true\narchive_after = 3\n");
        assert_eq!((d[0].rule.code, d[0].span.start.line), ("CF002", 3));
        let (_, d) = parse(
            "pipeline.toml",
            "[curator]\nmodel = { command = [\"x\"], urll = \"y\" }\n",
        );
        assert_eq!((d[0].rule.code, d[0].span.start.line), ("CF002", 2));
        let (cfg, d) = parse(
            "pipeline.toml",
            "[curator]\ninterval = \"weekly\"\nper_run_max_usd = -1\n",
        );
        let at: Vec<(&str, u32)> = d.iter().map(|d| (d.rule.code, d.span.start.line)).collect();
        assert_eq!(at, vec![("CF001", 2), ("CF001", 3)]);
        assert_eq!(cfg.interval_secs, DEFAULT_INTERVAL_SECS);
        let (_, d) = parse("p", "[curator]\nmodel = { url = \"http://127.0.0.1:1/v1\" }\n");
        assert_eq!(d[0].rule.code, "CF001");
        let (_, d) = parse(
            "p",
            "[curator]\nmodel = { url = \"http://x\", model = \"m\", command = [\"a\"] }\n",
        );
        assert_eq!(d.len(), 1);
        let (_, d) = parse("p", "[curator]\nenabled = \"yes\"\n");
        assert_eq!((d[0].rule.code, d[0].span.start.line), ("CF001", 2));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("7d"), Some(604_800));
        assert_eq!(parse_duration("30m"), Some(1800));
        assert_eq!(parse_duration("0d"), None);
        assert_eq!(parse_duration("d"), None);
        assert_eq!(parse_duration("5w"), None);
    }
}

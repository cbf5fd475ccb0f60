//! The menu's settings: `[menu]` and `[agents.<id>]` of `pipeline.toml` (RUNTIME.md §1,
//! "Agents", "Embedders and the threshold"), and the thresholds recorded by
//! `skillc menu calibrate`. Parsing is pure; problems are `CF001` diagnostics with file:line.
//! The resolved settings are written into the menu index, so a runtime reading a verified
//! catalog needs no `pipeline.toml`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::diag::{Diagnostic, Source};
use crate::rules;

/// Default menu size.
pub const DEFAULT_SIZE: usize = 3;
/// Largest menu size (seed 003).
pub const MAX_SIZE: usize = 6;
/// Most skills an agent may have (seed 003).
pub const MAX_AGENT_SKILLS: usize = 30;
/// Default timeout of an external embedder request, in milliseconds.
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;

/// A threshold τ and the embedder it was calibrated for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Threshold {
    /// Embedder id (`lexical/4`, `lexical/4+openai:nomic-embed-text+fuse/4`).
    pub embedder: String,
    /// Document recipe (`doc/1`).
    pub recipe: String,
    /// τ: a candidate is offered when its score is at least this.
    pub tau: f64,
}

/// An agent: a named subset of the catalog with its own menu size.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Agent {
    /// Skill names, as written.
    pub skills: Vec<String>,
    /// Its menu size (1–6).
    pub menu_size: usize,
}

/// An external embedder speaking the OpenAI-compatible `/v1/embeddings` API.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalEmbedder {
    /// The endpoint (`http://127.0.0.1:11434/v1/embeddings`).
    pub url: String,
    /// The model name sent with each request.
    pub model: String,
    /// Timeout of one request, in milliseconds.
    pub timeout_ms: u64,
}

/// The dense embedder fused with the built-in one (`[menu] embedder`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "lowercase")]
pub enum DenseEmbedder {
    /// `{ url = "…/v1/embeddings", model = "…" }`: an OpenAI-compatible endpoint.
    External(ExternalEmbedder),
    /// `{ local = "models/all-MiniLM-L6-v2" }`: a sentence-transformers model folder read by
    /// the local model (cargo feature `local-model`), as written — relative to the project root
    /// — never downloaded.
    Local(String),
}

/// The resolved menu settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MenuSettings {
    /// Menu size without `--size` or an agent (default 3).
    pub size: usize,
    /// Apply τ to skills without triggers too.
    pub gate_triggerless: bool,
    /// τ for this catalog's embedder, when recorded.
    pub threshold: Option<Threshold>,
    /// Agents by id.
    pub agents: BTreeMap<String, Agent>,
    /// The dense embedder, when configured.
    pub embedder: Option<DenseEmbedder>,
}

impl Default for MenuSettings {
    fn default() -> Self {
        MenuSettings {
            size: DEFAULT_SIZE,
            gate_triggerless: false,
            threshold: None,
            agents: BTreeMap::new(),
            embedder: None,
        }
    }
}

type Sp<T> = toml::Spanned<T>;

/// `[menu]` as written.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct MenuSection {
    size: Option<Sp<i64>>,
    gate_triggerless: Option<bool>,
    threshold: Option<Sp<ThresholdSection>>,
    embedder: Option<Sp<EmbedderSection>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ThresholdSection {
    embedder: String,
    recipe: String,
    tau: Sp<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EmbedderSection {
    url: Option<Sp<String>>,
    model: Option<String>,
    timeout_ms: Option<Sp<i64>>,
    local: Option<Sp<String>>,
}

/// `[agents.<id>]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentSection {
    skills: Sp<Vec<String>>,
    menu_size: Option<Sp<i64>>,
}

fn size_in_range(v: &Sp<i64>, what: &str, src: &Source<'_>, diags: &mut Vec<Diagnostic>) -> Option<usize> {
    match usize::try_from(*v.get_ref()) {
        Ok(n) if (1..=MAX_SIZE).contains(&n) => Some(n),
        _ => {
            diags.push(Diagnostic::new(
                &rules::CF001,
                src.file,
                src.span(v.span()),
                format!("`{what}` must be between 1 and {MAX_SIZE}"),
            ));
            None
        }
    }
}

/// The sections of `pipeline.toml` this module reads.
#[derive(Deserialize)]
struct Outer {
    menu: Option<MenuSection>,
    agents: Option<BTreeMap<String, AgentSection>>,
}

/// Parses `[menu]` and `[agents.<id>]` from the text of `pipeline.toml` (the rest of the file
/// is `config::parse`'s, which also reports syntax errors): the settings, and `CF001`/`CF002`
/// diagnostics with file:line:column for what is wrong inside these sections.
pub fn parse(file: &str, text: &str) -> (MenuSettings, Vec<Diagnostic>) {
    let src = Source::new(file, text);
    let mut diags = Vec::new();
    if toml::from_str::<toml::Table>(text).is_err() {
        return (MenuSettings::default(), diags);
    }
    match toml::from_str::<Outer>(text) {
        Ok(o) => {
            let s = resolve(&src, o.menu, o.agents, &mut diags);
            (s, diags)
        }
        Err(e) => {
            diags.push(crate::diag::toml_error(&src, &e, &rules::CF001, &rules::CF002));
            (MenuSettings::default(), diags)
        }
    }
}

/// Resolves `[menu] embedder`: an endpoint (`url`, `model`, `timeout_ms`) or a local model
/// folder (`local`), not both.
fn embedder(src: &Source<'_>, e: Sp<EmbedderSection>, diags: &mut Vec<Diagnostic>) -> Option<DenseEmbedder> {
    let span = e.span();
    let e = e.into_inner();
    let mut bad = |span: std::ops::Range<usize>, message: String, help: &str| {
        diags.push(Diagnostic::new(&rules::CF001, src.file, src.span(span), message).help(help));
        None
    };
    match (e.local, e.url) {
        (Some(l), None) if e.model.is_none() && e.timeout_ms.is_none() => {
            if l.get_ref().trim().is_empty() {
                return bad(
                    l.span(),
                    "embedder `local` is empty".into(),
                    "give the folder of a sentence-transformers model, e.g. \"models/all-MiniLM-L6-v2\"",
                );
            }
            Some(DenseEmbedder::Local(l.into_inner()))
        }
        (Some(_), _) => bad(
            span,
            "embedder has both `local` and endpoint keys".into(),
            "`local = \"FOLDER\"` alone runs a model in-process; `url` and `model` call an endpoint",
        ),
        (None, None) => bad(
            span,
            "embedder needs `url` and `model` (an endpoint) or `local` (a model folder)".into(),
            "e.g. embedder = { url = \"http://127.0.0.1:11434/v1/embeddings\", model = \"nomic-embed-text\" }",
        ),
        (None, Some(url)) => {
            let (url_span, url) = (url.span(), url.into_inner());
            let model = e.model.unwrap_or_default();
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return bad(
                    url_span,
                    format!("embedder url `{url}` is not an http(s) URL"),
                    "give the embeddings endpoint, e.g. \"http://127.0.0.1:11434/v1/embeddings\"",
                );
            }
            if model.trim().is_empty() {
                return bad(
                    span,
                    "embedder `model` is missing or empty".into(),
                    "name the model the endpoint serves",
                );
            }
            let timeout_ms = match e.timeout_ms {
                None => DEFAULT_TIMEOUT_MS,
                Some(t) => match u64::try_from(*t.get_ref()) {
                    Ok(ms) if (1..=600_000).contains(&ms) => ms,
                    _ => {
                        return bad(
                            t.span(),
                            "`timeout_ms` must be between 1 and 600000 (ten minutes)".into(),
                            "the default is 10000",
                        );
                    }
                },
            };
            Some(DenseEmbedder::External(ExternalEmbedder { url, model, timeout_ms }))
        }
    }
}

/// Resolves `[menu]` and `[agents]`. `calibrated` are the thresholds recorded by
/// `skillc menu calibrate`; the one for `embedder` + `recipe` is used unless `[menu]
/// threshold` sets one. A `[menu] threshold` for another embedder is an error: thresholds
/// never carry over from one embedder to another.
fn resolve(
    src: &Source<'_>,
    menu: Option<MenuSection>,
    agents: Option<BTreeMap<String, AgentSection>>,
    diags: &mut Vec<Diagnostic>,
) -> MenuSettings {
    let mut s = MenuSettings::default();
    let menu = menu.unwrap_or_default();
    if let Some(v) = &menu.size
        && let Some(n) = size_in_range(v, "menu.size", src, diags)
    {
        s.size = n;
    }
    s.gate_triggerless = menu.gate_triggerless.unwrap_or(false);
    if let Some(e) = menu.embedder {
        s.embedder = embedder(src, e, diags);
    }
    if let Some(t) = menu.threshold {
        let span = t.span();
        let t = t.into_inner();
        if (0.0..=1.0).contains(t.tau.get_ref()) {
            s.threshold = Some(Threshold {
                embedder: t.embedder,
                recipe: t.recipe,
                tau: *t.tau.get_ref(),
            });
        } else {
            diags.push(Diagnostic::new(
                &rules::CF001,
                src.file,
                src.span(t.tau.span()),
                "`tau` is a cosine threshold between 0 and 1",
            ));
        }
        let _ = span;
    }
    for (id, a) in agents.unwrap_or_default() {
        let span = a.skills.span();
        let skills = a.skills.into_inner();
        let mut ok = true;
        if skills.len() > MAX_AGENT_SKILLS {
            diags.push(
                Diagnostic::new(
                    &rules::CF001,
                    src.file,
                    src.span(span.clone()),
                    format!(
                        "agent `{id}` has {} skills; an agent has at most {MAX_AGENT_SKILLS}",
                        skills.len()
                    ),
                )
                .help("split it into agents of at most 30 skills, or leave it out to menu the whole catalog"),
            );
            ok = false;
        }
        let mut seen = std::collections::BTreeSet::new();
        if let Some(dup) = skills.iter().find(|s| !seen.insert(s.as_str())) {
            diags.push(Diagnostic::new(
                &rules::CF001,
                src.file,
                src.span(span),
                format!("agent `{id}` lists skill `{dup}` twice"),
            ));
            ok = false;
        }
        let menu_size = match &a.menu_size {
            None => Some(DEFAULT_SIZE),
            Some(v) => size_in_range(v, &format!("agents.{id}.menu_size"), src, diags),
        };
        if let (true, Some(menu_size)) = (ok, menu_size) {
            s.agents.insert(id, Agent { skills, menu_size });
        }
    }
    s
}

/// Checks a `[menu] threshold` against the embedder the catalog uses.
pub fn check_threshold(s: &MenuSettings, embedder: &str, recipe: &str) -> Result<(), String> {
    match &s.threshold {
        Some(t) if t.embedder != embedder || t.recipe != recipe => Err(format!(
            "the menu threshold was calibrated for embedder `{} {}`, but this catalog's menu uses `{embedder} {recipe}`: \
             run `skillc menu calibrate BATTERY` to calibrate it",
            t.embedder, t.recipe
        )),
        _ => Ok(()),
    }
}

/// The calibration file at the project root, written by `skillc menu calibrate`.
pub const CALIBRATION_FILE: &str = "menu-calibration.toml";

/// One recorded calibration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// Embedder id.
    pub embedder: String,
    /// Document recipe.
    pub recipe: String,
    /// The chosen τ.
    pub tau: f64,
    /// The battery it was chosen on (as given).
    pub battery: String,
    /// Hex SHA-256 of the battery file.
    pub battery_sha256: String,
    /// The cap on false offers τ was chosen under.
    pub max_false_offers: f64,
    /// recall@size at τ.
    pub recall_at_size: f64,
    /// False offers at τ.
    pub false_offers: f64,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct CalibrationFile {
    calibration_format: String,
    #[serde(default)]
    threshold: Vec<Calibration>,
}

/// Reads the calibration file.
///
/// # Errors
/// A message with the line when it is not one.
pub fn parse_calibrations(text: &str) -> Result<Vec<Calibration>, String> {
    let f: CalibrationFile = toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1)
            .unwrap_or(1);
        format!("line {line}: {}", e.message())
    })?;
    if f.calibration_format != "1" {
        return Err(format!("calibration_format `{}`; expected \"1\"", f.calibration_format));
    }
    Ok(f.threshold)
}

/// Renders the calibration file: one entry per embedder and recipe, sorted; `new` replaces
/// the entry for its embedder and recipe.
pub fn render_calibrations(mut all: Vec<Calibration>, new: Calibration) -> String {
    all.retain(|c| (c.embedder.as_str(), c.recipe.as_str()) != (new.embedder.as_str(), new.recipe.as_str()));
    all.push(new);
    all.sort_by(|a, b| (&a.embedder, &a.recipe).cmp(&(&b.embedder, &b.recipe)));
    let body = toml::to_string(&CalibrationFile {
        calibration_format: "1".into(),
        threshold: all,
    })
    .unwrap_or_default();
    format!(
        "# Thresholds of the menu's semantic pass, recorded by `skillc menu calibrate` (RUNTIME.md §1).\n\
         # A threshold applies only to the embedder and recipe it was calibrated for; `skillc build`\n\
         # writes the matching one into the menu index.\n{body}"
    )
}

/// The threshold for `embedder` + `recipe`: `[menu] threshold` when set (an error when it
/// names another embedder), else the recorded calibration for them, else none.
///
/// # Errors
/// The message of [`check_threshold`].
pub fn pick_threshold(
    s: &MenuSettings,
    recorded: &[Calibration],
    embedder: &str,
    recipe: &str,
) -> Result<Option<Threshold>, String> {
    if s.threshold.is_some() {
        check_threshold(s, embedder, recipe)?;
        return Ok(s.threshold.clone());
    }
    Ok(recorded
        .iter()
        .find(|c| c.embedder == embedder && c.recipe == recipe)
        .map(|c| Threshold {
            embedder: c.embedder.clone(),
            recipe: c.recipe.clone(),
            tau: c.tau,
        }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> (MenuSettings, Vec<(String, u32)>) {
        let (s, d) = super::parse("pipeline.toml", text);
        (s, d.iter().map(|d| (d.message.clone(), d.span.start.line)).collect())
    }

    #[test]
    fn defaults_and_values() {
        let (s, d) = parse("");
        assert!(d.is_empty());
        assert_eq!(s, MenuSettings::default());
        let (s, d) = parse(
            "[menu]\nsize = 5\ngate_triggerless = true\nembedder = { url = \"http://127.0.0.1:1/v1/embeddings\", model = \"m\" }\n\
             [agents.ops]\nskills = [\"a\", \"b\"]\nmenu_size = 2\n",
        );
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(s.size, 5);
        assert!(s.gate_triggerless);
        assert!(
            matches!(&s.embedder, Some(DenseEmbedder::External(e)) if e.timeout_ms == DEFAULT_TIMEOUT_MS),
            "{:?}",
            s.embedder
        );
        assert_eq!(s.agents["ops"].menu_size, 2);
        let (s, d) = parse("[menu]\nembedder = { local = \"models/m\" }\n");
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(s.embedder, Some(DenseEmbedder::Local("models/m".into())));
        for bad in [
            "{ local = \"m\", url = \"http://x\" }",
            "{ model = \"m\" }",
            "{ url = \"ftp://x\", model = \"m\" }",
            "{ url = \"http://x\" }",
            "{ local = \"\" }",
        ] {
            let (s, d) = parse(&format!("[menu]\nembedder = {bad}\n"));
            assert_eq!((s.embedder, d.len()), (None, 1), "{bad}");
            assert_eq!(d[0].1, 2, "{bad}");
        }
    }

    #[test]
    fn agents_of_31_skills_and_bad_sizes_are_errors_with_lines() {
        let skills: Vec<String> = (0..31).map(|i| format!("\"s{i}\"")).collect();
        let text = format!(
            "[agents.big]\nmenu_size = 3\nskills = [{}]\n\n[agents.zero]\nskills = []\nmenu_size = 7\n",
            skills.join(", ")
        );
        let (s, d) = parse(&text);
        assert!(s.agents.is_empty());
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(d[0].1, 3);
        assert!(d[0].0.contains("31 skills"));
        assert_eq!(d[1].1, 7);
        let (_, d) = parse("[menu]\nsize = 0\n");
        assert_eq!(d[0].1, 2);
    }

    #[test]
    fn a_threshold_is_bound_to_its_embedder() {
        let (s, d) = parse("[menu]\nthreshold = { embedder = \"lexical/1\", recipe = \"doc/1\", tau = 0.2 }\n");
        assert!(d.is_empty());
        assert!(check_threshold(&s, "lexical/1", "doc/1").is_ok());
        let e = check_threshold(&s, "lexical/2", "doc/1").unwrap_err();
        assert!(e.contains("skillc menu calibrate"), "{e}");
        assert!(pick_threshold(&s, &[], "lexical/2", "doc/1").is_err());
    }

    #[test]
    fn calibrations_round_trip_one_per_embedder() {
        let c = |e: &str, tau: f64| Calibration {
            embedder: e.into(),
            recipe: "doc/1".into(),
            tau,
            battery: "b.toml".into(),
            battery_sha256: "00".into(),
            max_false_offers: 0.15,
            recall_at_size: 0.8,
            false_offers: 0.1,
        };
        let text = render_calibrations(vec![c("lexical/2", 0.1), c("x", 0.3)], c("lexical/2", 0.2));
        let back = parse_calibrations(&text).unwrap();
        assert_eq!(back.len(), 2);
        let s = MenuSettings::default();
        assert_eq!(
            pick_threshold(&s, &back, "lexical/2", "doc/1").unwrap().map(|t| t.tau),
            Some(0.2)
        );
        assert_eq!(pick_threshold(&s, &back, "y", "doc/1").unwrap(), None);
        assert!(parse_calibrations("calibration_format = \"2\"\n").is_err());
    }
}

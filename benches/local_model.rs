//! Benchmark of the local model embedder (feature `local-model`): load time, one short turn,
//! the corpus catalog's documents in one batch, and the plain model's recall on the labelled
//! menu battery — the baseline that issue 19's enriched and fused menu must beat.
//!
//! ```text
//! cargo bench --features local-model --bench local_model -- \
//!     [--model DIR] [--out CATALOG_OUT] [--battery tests/data/menu_battery.toml] [--runs N]
//! ```
//!
//! `--model` defaults to `.ci/models/all-MiniLM-L6-v2` (benches/model_weights.sh installs it);
//! `--out` is a catalog built from the shared corpus (the battery file's header says how);
//! without it only load and turn latency are measured. The document of a skill here is the
//! *plain* one: its name (hyphens as spaces), its description and the first 80 words of its
//! body's prose (code blocks left out) — no enrichment. Prints Markdown for BENCHMARKS.md.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use skillc::{LocalModel, Mode, ValidationContext, analyze};

/// Words of body prose in the plain document (the menu's `doc::OPENING_WORDS`).
const OPENING_WORDS: usize = 80;

#[derive(serde::Deserialize)]
struct Battery {
    turn: Vec<Turn>,
}

#[derive(serde::Deserialize)]
struct Turn {
    id: String,
    text: String,
    kind: String,
    expected: Vec<String>,
}

#[derive(serde::Deserialize)]
struct Catalog {
    #[serde(default)]
    skill: Vec<CatalogSkill>,
}

#[derive(serde::Deserialize)]
struct CatalogSkill {
    name: String,
}

struct Args {
    model: PathBuf,
    out: Option<PathBuf>,
    battery: PathBuf,
    runs: usize,
}

fn args() -> Result<Args, String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut a = Args {
        model: root.join(".ci/models/all-MiniLM-L6-v2"),
        out: None,
        battery: root.join("tests/data/menu_battery.toml"),
        runs: 50,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--model" => a.model = value()?.into(),
            "--out" => a.out = Some(value()?.into()),
            "--battery" => a.battery = value()?.into(),
            "--runs" => a.runs = value()?.parse().map_err(|e| format!("--runs: {e}"))?,
            "--bench" => {}
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(a)
}

/// The body's prose (code blocks left out), its first `words` words.
fn opening(body: &str, words: usize) -> String {
    use pulldown_cmark::{Event, Parser, Tag, TagEnd};
    let mut out: Vec<String> = Vec::new();
    let mut in_code = false;
    for event in Parser::new(body) {
        match event {
            Event::Start(Tag::CodeBlock(_)) => in_code = true,
            Event::End(TagEnd::CodeBlock) => in_code = false,
            Event::Text(t) | Event::Code(t) if !in_code => {
                out.extend(t.split_whitespace().map(str::to_owned));
                if out.len() >= words {
                    break;
                }
            }
            _ => {}
        }
    }
    out.truncate(words);
    out.join(" ")
}

/// `(slug, plain document)` for every skill of the catalog in `out`.
fn plain_documents(out: &Path) -> Result<Vec<(String, String)>, String> {
    let text = std::fs::read_to_string(out.join("catalog.toml")).map_err(|e| format!("catalog.toml: {e}"))?;
    let catalog: Catalog = toml::from_str(&text).map_err(|e| format!("catalog.toml: {e}"))?;
    let mut docs = Vec::new();
    for s in catalog.skill {
        let folder = out.join("skills").join(&s.name);
        let path = ["SKILL.md", "skill.md"]
            .iter()
            .map(|f| folder.join(f))
            .find(|p| p.is_file())
            .unwrap_or_else(|| folder.join("SKILL.md"));
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let ctx = ValidationContext {
            dir_name: &s.name,
            mode: Mode::Default,
        };
        let a = analyze("SKILL.md", &bytes, &ctx);
        let description = a.model.description.map(|d| d.value).unwrap_or_default();
        let body = a
            .body
            .and_then(|r| bytes.get(r))
            .map(String::from_utf8_lossy)
            .unwrap_or_default();
        let doc = format!(
            "{}. {}\n{}",
            s.name.replace('-', " "),
            description,
            opening(&body, OPENING_WORDS)
        );
        docs.push((s.name, doc));
    }
    Ok(docs)
}

fn median_ms(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let at = |q: f64| {
        v.get(((v.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or(f64::NAN)
    };
    (at(0.5), at(0.0), at(0.9))
}

/// CPU seconds this process has used, all threads (Linux: `/proc/self/stat`, 100 Hz ticks).
/// On a machine shared with other work, wall times stretch; CPU time does much less.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) in parentheses.
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok());
    Some((ticks(11)? + ticks(12)?) / 100.0)
}

fn turn_latency(model: &LocalModel, runs: usize) -> Result<(), String> {
    let turns = [
        "deploy the app to staging",
        "merge these PDFs into one",
        "what's on my calendar tomorrow?",
        "riassumi questo documento in italiano",
        "find flaky tests in the CI logs and open an issue",
    ];
    let mut times = Vec::new();
    model.embed(&turns).map_err(|e| e.to_string())?; // warm-up
    let cpu0 = cpu_seconds();
    for _ in 0..runs {
        for t in turns {
            let t0 = Instant::now();
            model.embed(&[t]).map_err(|e| e.to_string())?;
            times.push(t0.elapsed().as_secs_f64() * 1e3);
        }
    }
    let cpu = cpu_seconds().zip(cpu0).map(|(b, a)| (b - a) * 1e3 / times.len() as f64);
    let (med, min, p90) = median_ms(times);
    let tokens: Vec<usize> = turns
        .iter()
        .map(|t| model.tokenize(t).map(|v| v.len()))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    println!(
        "| one short turn ({}–{} tokens), {runs} × 5 | {med:.2} ms | {min:.2} ms | p90 {p90:.2} ms, CPU {:.2} ms/turn |",
        tokens.iter().min().unwrap_or(&0),
        tokens.iter().max().unwrap_or(&0),
        cpu.unwrap_or(f64::NAN)
    );
    Ok(())
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Recall@1 and @3 per kind of the plain model ranking over the whole catalog.
fn battery(model: &LocalModel, docs: &[(String, String)], vectors: &[Vec<f32>], file: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let battery: Battery = toml::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    let texts: Vec<&str> = battery.turn.iter().map(|t| t.text.as_str()).collect();
    let turns = model.embed(&texts).map_err(|e| e.to_string())?;
    // kind -> (turns, found@1, found@3)
    let mut per: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    let mut missed = Vec::new();
    for (t, q) in battery.turn.iter().zip(&turns) {
        let mut scored: Vec<(f32, &str)> = vectors
            .iter()
            .zip(docs)
            .map(|(v, (s, _))| (dot(q, v), s.as_str()))
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        let top: Vec<&str> = scored.iter().take(3).map(|s| s.1).collect();
        let e = per.entry(t.kind.as_str()).or_default();
        e.0 += 1;
        if t.expected.is_empty() {
            continue;
        }
        let hit = |k: usize| top.iter().take(k).any(|s| t.expected.iter().any(|x| x == s));
        e.1 += usize::from(hit(1));
        e.2 += usize::from(hit(3));
        if !hit(3) {
            missed.push(t.id.as_str());
        }
    }
    println!("\n| kind | turns | recall@1 | recall@3 |\n| --- | ---: | ---: | ---: |");
    let (mut n, mut f1, mut f3) = (0, 0, 0);
    for (kind, (turns, h1, h3)) in &per {
        if *kind == "none" {
            println!("| none | {turns} | — | — (no τ: every turn gets 3 offers) |");
            continue;
        }
        let pct = |h: usize| 100.0 * h as f64 / *turns as f64;
        println!("| {kind} | {turns} | {:.0} % | {:.0} % |", pct(*h1), pct(*h3));
        (n, f1, f3) = (n + turns, f1 + h1, f3 + h3);
    }
    let pct = |h: usize| 100.0 * h as f64 / n as f64;
    println!("| all but none | {n} | {:.0} % | {:.0} % |", pct(f1), pct(f3));
    println!("\nmissed at 3: {}", missed.join(" "));
    Ok(())
}

fn run() -> Result<(), String> {
    let a = args()?;
    let t0 = Instant::now();
    let model = LocalModel::load(&a.model).map_err(|e| e.to_string())?;
    let load = t0.elapsed().as_secs_f64() * 1e3;
    println!(
        "model: {} ({} dims, {} tokens max, {:?} pooling)",
        model.id(),
        model.dims(),
        model.max_tokens(),
        model.pooling()
    );
    println!("threads: {}\n", candle_threads());
    println!("| measurement | median | min | spread |\n| --- | ---: | ---: | ---: |");
    println!("| load (read, hash, build the model) | {load:.0} ms | | one run |");
    turn_latency(&model, a.runs)?;
    let Some(out) = a.out else {
        return Ok(());
    };
    let docs = plain_documents(&out)?;
    let texts: Vec<&str> = docs.iter().map(|d| d.1.as_str()).collect();
    let tokens: usize = texts.iter().map(|t| model.tokenize(t).map_or(0, |v| v.len())).sum();
    let (t0, cpu0) = (Instant::now(), cpu_seconds());
    let vectors = model.embed(&texts).map_err(|e| e.to_string())?;
    let secs = t0.elapsed().as_secs_f64();
    let cpu = cpu_seconds().zip(cpu0).map_or(f64::NAN, |(b, a)| b - a);
    println!(
        "| {} plain documents in one batch ({tokens} tokens, mean {:.0}) | {secs:.1} s | | {:.0} docs/s, {:.0} tokens/s; CPU {cpu:.1} s |",
        docs.len(),
        tokens as f64 / docs.len().max(1) as f64,
        docs.len() as f64 / secs,
        tokens as f64 / secs
    );
    battery(&model, &docs, &vectors, &a.battery)
}

fn candle_threads() -> usize {
    std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

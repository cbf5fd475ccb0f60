//! Benchmark of the menu through the library (issue 19, acceptance 4): opening a verified
//! catalog once, then the menu of every turn of the labelled battery, as `serve` and programs
//! embedding skillc call it (no process per turn).
//!
//! ```text
//! cargo bench --bench menu_turns -- --out CATALOG_OUT [--battery tests/data/menu_battery.toml]
//!     [--runs N] [--model DIR] [--dump FILE.json]
//! ```
//!
//! Prints the open time and the time per turn — mean, and p50 / p99 / max of every call, and
//! the mean of the runs after the first, when every skill the battery offers has had its files
//! checked by this open catalog (they are checked once, at the first turn that offers them) —
//! (`MenuCatalog::select`: the dense half embedded
//! when the catalog has dense vectors, which is then most of the time), wall and CPU, for
//! BENCHMARKS.md. `--dump` writes every turn's candidates — lexical score, and the dense
//! cosine when the catalog has vectors — for studying the scores offline.

use std::path::PathBuf;
use std::time::Instant;

use skillc::{DenseTurn, MenuCatalog, MenuDepth, MenuOpenOptions};

struct Args {
    out: PathBuf,
    battery: PathBuf,
    runs: usize,
    model: Option<PathBuf>,
    dump: Option<PathBuf>,
}

fn args() -> Result<Args, String> {
    let mut out = None;
    let mut a = Args {
        out: PathBuf::new(),
        battery: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/menu_battery.toml"),
        runs: 20,
        model: None,
        dump: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--out" => out = Some(PathBuf::from(value()?)),
            "--battery" => a.battery = PathBuf::from(value()?),
            "--runs" => a.runs = value()?.parse().map_err(|e| format!("--runs: {e}"))?,
            "--model" => a.model = Some(PathBuf::from(value()?)),
            "--dump" => a.dump = Some(PathBuf::from(value()?)),
            // `cargo bench` passes `--bench`.
            "--bench" => {}
            other => return Err(format!("unknown argument {other}")),
        }
    }
    a.out = out.ok_or("--out CATALOG_OUT is required (a built catalog)")?;
    Ok(a)
}

/// CPU seconds this process has used, all threads (Linux: `/proc/self/stat`, 100 Hz ticks).
/// On a machine shared with other work, wall times stretch; CPU time does much less.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return f64::NAN;
    };
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return f64::NAN;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(f64::NAN);
    (ticks(11) + ticks(12)) / 100.0
}

fn main() -> Result<(), String> {
    let a = args()?;
    let opts = MenuOpenOptions {
        trust: Default::default(),
        now: jiff::Timestamp::now().as_second(),
        depth: MenuDepth::Menu,
        model: a.model.clone(),
    };
    let (t0, c0) = (Instant::now(), cpu_seconds());
    let cat = MenuCatalog::open(&a.out, &opts).map_err(|e| e.to_string())?;
    let (open_wall, open_cpu) = (t0.elapsed().as_secs_f64(), cpu_seconds() - c0);
    let text = std::fs::read_to_string(&a.battery).map_err(|e| format!("{}: {e}", a.battery.display()))?;
    let battery = skillc::parse_battery(&text)?;
    let turns: Vec<&str> = battery.turns.iter().map(|t| t.text.as_str()).collect();
    // Warm up (a local model is loaded on the first turn).
    let (t1, c1) = (Instant::now(), cpu_seconds());
    let first = cat.select(turns[0], None, None).map_err(|e| e.to_string())?;
    let first_wall = t1.elapsed().as_secs_f64();
    let first_cpu = cpu_seconds() - c1;
    let (t2, c2) = (Instant::now(), cpu_seconds());
    let mut offered = 0usize;
    let mut each = Vec::with_capacity(a.runs * turns.len());
    let mut after_first = None;
    for run in 0..a.runs {
        if run == 1 {
            after_first = Some((Instant::now(), cpu_seconds()));
        }
        for t in &turns {
            let t0 = Instant::now();
            offered += cat.select(t, None, None).map_err(|e| e.to_string())?.items.len();
            each.push(t0.elapsed().as_secs_f64());
        }
    }
    each.sort_by(f64::total_cmp);
    let pct = |p: f64| each[((each.len() as f64 * p).ceil() as usize).clamp(1, each.len()) - 1] * 1e3;
    let n = (a.runs * turns.len()) as f64;
    let (wall, cpu) = (t2.elapsed().as_secs_f64() / n, (cpu_seconds() - c2) / n);
    let steady = after_first.map(|(t, c)| {
        let n = ((a.runs - 1) * turns.len()) as f64;
        (t.elapsed().as_secs_f64() / n, (cpu_seconds() - c) / n)
    });
    println!(
        "catalog {}: {} skills, embedder {}",
        a.out.display(),
        cat.menu.index().skills.len(),
        first.embedder
    );
    println!("| measurement | wall | CPU |\n| --- | ---: | ---: |");
    println!(
        "| `MenuCatalog::open` (verify + load) | {:.2} ms | {:.2} ms |",
        open_wall * 1e3,
        open_cpu * 1e3
    );
    println!(
        "| first turn (loads a local model) | {:.2} ms | {:.2} ms |",
        first_wall * 1e3,
        first_cpu * 1e3
    );
    println!(
        "| one turn, mean of {} × {} battery turns | {:.3} ms | {:.3} ms |",
        a.runs,
        turns.len(),
        wall * 1e3,
        cpu * 1e3
    );
    if let Some((wall, cpu)) = steady {
        println!(
            "| one turn, mean of runs 2–{} (offered skills already checked) | {:.3} ms | {:.3} ms |",
            a.runs,
            wall * 1e3,
            cpu * 1e3
        );
    }
    println!(
        "| one turn, p50 / p99 / max of {} turns | {:.3} / {:.3} / {:.3} ms | |",
        each.len(),
        pct(0.5),
        pct(0.99),
        pct(1.0)
    );
    eprintln!("({offered} skills offered in all)");
    if let Some(path) = &a.dump {
        dump(&cat, &battery, path)?;
    }
    Ok(())
}

/// Every turn's candidates: slug, lexical score, dense cosine (when the catalog has vectors),
/// trigger hits: the 60 best by each score, and the expected skills.
fn dump(cat: &MenuCatalog, battery: &skillc::Battery, path: &std::path::Path) -> Result<(), String> {
    let menu = &cat.menu;
    let slugs: Vec<&str> = menu.index().skills.iter().map(|s| s.slug.as_str()).collect();
    let beta = 0.5;
    let mut out = Vec::new();
    for t in &battery.turns {
        let lexical = menu
            .candidates(&t.text, None, &DenseTurn::None)
            .map_err(|e| e.to_string())?;
        let dense = cat.embed_turn(&t.text);
        let mut rows: Vec<serde_json::Value> = Vec::new();
        let fused = match &dense {
            DenseTurn::Vector(_) => Some(menu.candidates(&t.text, None, &dense).map_err(|e| e.to_string())?),
            _ => None,
        };
        let lex_of = |i: usize| lexical.iter().find(|c| c.index == i).map_or(0.0, |c| c.score);
        let mut all: Vec<(usize, f64, Option<f64>, usize)> = match &fused {
            Some(f) => f
                .iter()
                .map(|c| {
                    let l = lex_of(c.index);
                    (c.index, l, Some((c.score - (1.0 - beta) * l) / beta), c.hits.len())
                })
                .collect(),
            None => lexical.iter().map(|c| (c.index, c.score, None, c.hits.len())).collect(),
        };
        // The 60 best by each score, and the expected skills.
        let mut keep = std::collections::BTreeSet::new();
        all.sort_by(|a, b| b.1.total_cmp(&a.1));
        keep.extend(all.iter().take(60).map(|r| r.0));
        all.sort_by(|a, b| b.2.unwrap_or(0.0).total_cmp(&a.2.unwrap_or(0.0)));
        keep.extend(all.iter().take(60).map(|r| r.0));
        for (i, l, d, h) in &all {
            let expected = t.expected.iter().any(|e| e == slugs[*i]);
            if keep.contains(i) || expected {
                rows.push(
                    serde_json::json!({"slug": slugs[*i], "lexical": l, "dense": d, "hits": h, "expected": expected}),
                );
            }
        }
        out.push(
            serde_json::json!({"id": t.id, "kind": t.kind, "text": t.text, "expected": t.expected, "candidates": rows}),
        );
    }
    let text = serde_json::to_string(&out).map_err(|e| e.to_string())?;
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

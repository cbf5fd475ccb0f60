//! The fusion of the built-in embedder with the local model on the labelled menu battery
//! (issue 19, acceptance 2): how the lever choices of `menu::dense` were made. Reads a catalog
//! built with `[menu] embedder = { path = … }` (its `menu.idx` lexical scores, its `menu.vec`
//! document vectors), embeds each battery turn twice — as typed and as the menu embeds it
//! (`MenuCatalog::embed_turn`, the turn recipe of `menu::dense`) — and prints, per way of
//! fusing the two scores, recall@3 of the ranking and of the menu at the lowest τ whose false
//! offers stay ≤ 15 % (`gate_triggerless` on), per kind, over all turns and over the tuning
//! and held-out parts of the battery (`menu::calibrate::held_out`).
//!
//! ```text
//! cargo bench --features local-model --bench menu_fusion -- --out CATALOG_OUT \
//!     [--model DIR] [--battery tests/data/menu_battery.toml]
//! ```
//!
//! Every figure here is recomputed from scores; `skillc menu calibrate` gives the shipped
//! recipe's (the two agree for the recipe in force).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use skillc::{BatteryTurn as Turn, DenseTurn, LocalModel, MenuCatalog, MenuDepth, MenuOpenOptions, parse_battery};

/// `menu::calibrate::held_out`: FNV-1a of `turn:<id>`, divisible by 3.
fn held_out(id: &str) -> bool {
    let mut h: u32 = 0x811c_9dc5;
    for b in "turn:".bytes().chain(id.bytes()) {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h.is_multiple_of(3)
}

/// One turn's scores: lexical per skill (0 when it shares nothing), trigger hits, and the
/// dense cosines of the raw and the recipe turn.
struct Scores {
    lexical: Vec<f64>,
    hits: Vec<usize>,
    raw: Vec<f64>,
    recipe: Vec<f64>,
}

fn vectors(out: &Path, n: usize) -> Result<Vec<Vec<f32>>, String> {
    let b = std::fs::read(out.join("menu.vec")).map_err(|e| format!("menu.vec: {e}"))?;
    let u = |at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]) as usize;
    if b.len() < 24 || u(20) != n {
        return Err("menu.vec does not fit menu.idx".into());
    }
    let dims = u(16);
    Ok((0..n)
        .map(|i| {
            let at = 24 + i * (dims + 4);
            let scale = f32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
            b[at + 4..at + 4 + dims]
                .iter()
                .map(|&x| f32::from(x as i8) * scale)
                .collect()
        })
        .collect())
}

fn dot(a: &[f32], b: &[f32]) -> f64 {
    f64::from(a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>())
}

/// A way of fusing: per turn, the lexical and dense cosines of every skill → fused scores.
type Fuse = Box<dyn Fn(&[f64], &[f64]) -> Vec<f64>>;

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn fusions() -> Vec<(String, bool, Fuse)> {
    let mut out: Vec<(String, bool, Fuse)> = Vec::new();
    for recipe in [false, true] {
        let t = if recipe { "turn recipe" } else { "raw turn" };
        for beta in [0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0] {
            out.push((
                format!("{t}, (1−β)·lex + β·dense, β {beta}"),
                recipe,
                Box::new(move |l: &[f64], d: &[f64]| {
                    l.iter().zip(d).map(|(l, d)| (1.0 - beta) * l + beta * d).collect()
                }),
            ));
        }
        for beta in [0.5, 0.6, 0.7, 0.8] {
            // The turn's mean cosine with the catalog taken off: a turn near everything
            // (chit-chat) scores low everywhere.
            out.push((
                format!("{t}, (1−β)·lex + β·(dense − turn mean), β {beta}"),
                recipe,
                Box::new(move |l: &[f64], d: &[f64]| {
                    let m = mean(d);
                    l.iter()
                        .zip(d)
                        .map(|(l, d)| (1.0 - beta) * l + beta * (d - m))
                        .collect()
                }),
            ));
        }
    }
    out
}

#[derive(Default, Clone)]
struct Tally {
    by_kind: BTreeMap<String, (usize, usize)>,
    none: (usize, usize),
}

impl Tally {
    fn all(&self) -> f64 {
        let (h, n) = self.by_kind.values().fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        h as f64 / n.max(1) as f64
    }
    fn fo(&self) -> f64 {
        self.none.0 as f64 / self.none.1.max(1) as f64
    }
    fn kinds(&self) -> String {
        self.by_kind
            .iter()
            .map(|(k, (h, n))| format!("{k} {:.3}", *h as f64 / (*n).max(1) as f64))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The menu of one turn at τ (`None`: the ranking), as indexes: trigger hits (more first),
/// then the rest at or above τ, by score, cut at 3.
fn menu(s: &Scores, fused: &[f64], tau: Option<f64>) -> Vec<usize> {
    let mut hits: Vec<(usize, usize)> = s
        .hits
        .iter()
        .enumerate()
        .filter(|x| *x.1 > 0)
        .map(|(i, h)| (i, *h))
        .collect();
    hits.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then(fused[b.0].total_cmp(&fused[a.0]))
            .then(a.0.cmp(&b.0))
    });
    let mut rest: Vec<usize> = (0..fused.len())
        .filter(|&i| s.hits[i] == 0 && tau.is_none_or(|t| fused[i] >= t))
        .collect();
    rest.sort_by(|&a, &b| fused[b].total_cmp(&fused[a]).then(a.cmp(&b)));
    hits.into_iter().map(|h| h.0).chain(rest).take(3).collect()
}

fn tally(
    turns: &[&(usize, &Turn)],
    scores: &[Scores],
    fused: &[Vec<f64>],
    slugs: &[String],
    tau: Option<f64>,
) -> Tally {
    let mut t = Tally::default();
    for (i, turn) in turns {
        let m = menu(&scores[*i], &fused[*i], tau);
        if turn.expected.is_empty() {
            t.none.0 += usize::from(!m.is_empty());
            t.none.1 += 1;
            continue;
        }
        let e = t.by_kind.entry(turn.kind.clone()).or_default();
        e.0 += usize::from(m.iter().any(|&j| turn.expected.contains(&slugs[j])));
        e.1 += 1;
    }
    t
}

fn run() -> Result<(), String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let (mut out, mut model, mut battery) = (
        None,
        root.join(".ci/models/all-MiniLM-L6-v2"),
        root.join("tests/data/menu_battery.toml"),
    );
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .map(PathBuf::from)
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match flag.as_str() {
            "--out" => out = Some(value()?),
            "--model" => model = value()?,
            "--battery" => battery = value()?,
            "--bench" => {}
            other => return Err(format!("unknown argument {other}")),
        }
    }
    let out = out.ok_or("give --out CATALOG (built with [menu] embedder = { path = … })")?;
    let opts = MenuOpenOptions {
        trust: Default::default(),
        now: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64),
        depth: MenuDepth::Menu,
        model: Some(model.clone()),
    };
    let cat = MenuCatalog::open(&out, &opts).map_err(|e| e.to_string())?;
    let local = LocalModel::load(&model).map_err(|e| e.to_string())?;
    let skills = &cat.menu.index().skills;
    let n = skills.len();
    let slugs: Vec<String> = skills.iter().map(|s| s.slug.clone()).collect();
    let docs = vectors(&out, n)?;
    let text = std::fs::read_to_string(&battery).map_err(|e| format!("{}: {e}", battery.display()))?;
    let battery = parse_battery(&text)?;
    let mut scores = Vec::new();
    for t in &battery.turns {
        let mut lexical = vec![0.0; n];
        let mut hits = vec![0; n];
        for c in cat
            .menu
            .candidates(&t.text, None, &DenseTurn::None)
            .map_err(|e| e.to_string())?
        {
            lexical[c.index] = c.score;
            hits[c.index] = c.hits.len();
        }
        let raw = local.embed(&[&t.text]).map_err(|e| e.to_string())?.remove(0);
        let DenseTurn::Vector(recipe) = cat.embed_turn(&t.text) else {
            return Err("the catalog has no dense embedder, or it is unavailable".into());
        };
        let enabled = |i: usize| skills[i].enabled;
        let cos = |q: &[f32]| {
            (0..n)
                .map(|i| if enabled(i) { dot(q, &docs[i]) } else { -1.0 })
                .collect()
        };
        scores.push(Scores {
            lexical,
            hits,
            raw: cos(&raw),
            recipe: cos(&recipe),
        });
    }
    let all: Vec<(usize, &Turn)> = battery.turns.iter().enumerate().collect();
    let parts: [(&str, Vec<&(usize, &Turn)>); 3] = [
        ("all", all.iter().collect()),
        ("tuning", all.iter().filter(|t| !held_out(&t.1.id)).collect()),
        ("held-out", all.iter().filter(|t| held_out(&t.1.id)).collect()),
    ];
    println!(
        "{} skills, {} turns; menu size 3, gate_triggerless on, τ: the lowest with false offers ≤ 15 % over all turns\n",
        n,
        battery.turns.len()
    );
    for (name, recipe, fuse) in fusions() {
        let fused: Vec<Vec<f64>> = scores
            .iter()
            .map(|s| fuse(&s.lexical, if recipe { &s.recipe } else { &s.raw }))
            .collect();
        let mut grid: Vec<f64> = fused.iter().flatten().copied().filter(|x| *x > -0.5).collect();
        grid.sort_by(f64::total_cmp);
        grid.dedup();
        // τ candidates: the scores themselves (a step at each), from the top down.
        let tau = {
            let (lo, mut hi) = (0usize, grid.len());
            // False offers fall as τ rises: binary search for the lowest τ within the cap.
            let mut lo = lo;
            while lo < hi {
                let mid = (lo + hi) / 2;
                if tally(&parts[0].1, &scores, &fused, &slugs, Some(grid[mid])).fo() <= 0.15 + 1e-12 {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            grid.get(lo).copied()
        };
        println!("## {name}");
        for (part, turns) in &parts {
            let r = tally(turns, &scores, &fused, &slugs, None);
            let line = match tau {
                Some(t) => {
                    let m = tally(turns, &scores, &fused, &slugs, Some(t));
                    format!("at τ {t:.4}: {:.3} (FO {:.3}; {})", m.all(), m.fo(), m.kinds())
                }
                None => "no τ".into(),
            };
            println!("  {part:<8} ranking {:.3} ({}) | {line}", r.all(), r.kinds());
        }
    }
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

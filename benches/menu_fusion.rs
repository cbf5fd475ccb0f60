//! The fusion of the built-in embedder with the local model on the labelled menu battery
//! (issue 19, acceptance 2): how the lever choices of `menu::dense` were made. Reads a catalog
//! built with `[menu] embedder = { local = … }` (its `menu.idx` lexical scores, its `menu.vec`
//! vectors: every dense part of every skill, tagged by part), embeds each battery turn as
//! the menu embeds it (`MenuCatalog::embed_turn`, the turn recipe of `menu::dense`), and
//! prints, per way of scoring a skill from its part cosines and of fusing that with the
//! lexical score, recall@3 of the ranking and of the menu at the lowest τ whose false offers
//! stay ≤ 15 % (`gate_triggerless` on), per kind, over all turns and over the tuning and
//! held-out parts of the battery (`menu::calibrate::held_out`). Every figure comes from the
//! same cosines: one embedding of the catalog serves every lever. The build stores the parts
//! listed in `menu::doc::EMBEDDED` (whole, head and opening, what `fuse/4` reads): to measure
//! the rules over other parts, build the catalog with the measurement-only feature
//! `dense-parts` (every part; about 5–6 dense texts per skill, three times the embedding time
//! of the whole documents). `MENU_FUSION_DUMP=FILE` also writes every score the table comes
//! from, to explore rules without rebuilding the bench. `benches/menu_fusion.sh` does all of it, keeping the vector cache:
//!
//! ```text
//! bash benches/menu_fusion.sh [PROJECT_DIR]
//! cargo test --features dense-parts --bench menu_fusion -- --out CATALOG_OUT \
//!     [--model DIR] [--battery tests/data/menu_battery.toml]
//! ```
//!
//! Every figure here is recomputed from scores; `skillc menu calibrate` gives the shipped
//! recipe's (the two agree for the recipe in force).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use skillc::{BatteryTurn as Turn, DenseTurn, MenuCatalog, MenuDepth, MenuOpenOptions, parse_battery};

/// `menu::calibrate::held_out`: FNV-1a of `turn:<id>`, divisible by 3.
fn held_out(id: &str) -> bool {
    let mut h: u32 = 0x811c_9dc5;
    for b in "turn:".bytes().chain(id.bytes()) {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h.is_multiple_of(3)
}

/// One turn's scores: lexical per skill (0 when it shares nothing), trigger hits, and per
/// skill the cosines of its dense parts (tag, cosine) with the turn.
struct Scores {
    lexical: Vec<f64>,
    hits: Vec<usize>,
    parts: Vec<Vec<(u8, f64)>>,
}

/// One skill's (part tag, vector)s.
type SkillVectors = Vec<(u8, Vec<f32>)>;

/// `menu.vec` (format 2): per skill, its (part tag, vector)s.
fn vectors(out: &Path, n: usize) -> Result<Vec<SkillVectors>, String> {
    let b = std::fs::read(out.join("menu.vec")).map_err(|e| format!("menu.vec: {e}"))?;
    let u = |at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]) as usize;
    if b.len() < 28 || u(12) != 2 || u(20) != n {
        return Err("menu.vec is not format 2 or does not fit menu.idx".into());
    }
    let (dims, m) = (u(16), u(24));
    let tags = 28 + 4 * (n + 1);
    let at = tags + m;
    Ok((0..n)
        .map(|i| {
            (u(28 + 4 * i)..u(32 + 4 * i))
                .map(|k| {
                    let v = at + k * (dims + 4);
                    let scale = f32::from_le_bytes([b[v], b[v + 1], b[v + 2], b[v + 3]]);
                    let x = b[v + 4..v + 4 + dims]
                        .iter()
                        .map(|&x| f32::from(x as i8) * scale)
                        .collect();
                    (b[tags + k], x)
                })
                .collect()
        })
        .collect())
}

fn dot(a: &[f32], b: &[f32]) -> f64 {
    f64::from(a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>())
}

/// Part tags (`menu::doc::DensePart`).
const WHOLE: u8 = 0;
const HEAD: u8 = 1;
const EXAMPLES: u8 = 3;
const OPENING: u8 = 6;
const NAMES: [&str; 7] = ["whole", "head", "when", "examples", "headings", "executors", "opening"];

/// A skill's dense score from its part cosines.
type Dense = Box<dyn Fn(&[(u8, f64)]) -> f64>;

fn max_of(p: &[(u8, f64)], keep: impl Fn(u8) -> bool) -> f64 {
    p.iter().filter(|x| keep(x.0)).map(|x| x.1).fold(f64::NAN, f64::max)
}

fn nz(x: f64) -> f64 {
    if x.is_nan() { 0.0 } else { x }
}

fn denses() -> Vec<(String, Dense)> {
    let mut out: Vec<(String, Dense)> = vec![
        (
            "whole (fuse/2's rule)".into(),
            Box::new(|p: &[(u8, f64)]| nz(max_of(p, |t| t == WHOLE))),
        ),
        (
            // fuse/3 and fuse/4 (`menu::dense::combine`): per part kind its best chunk, then the mean over
            // the kinds the skill has.
            "mean(whole, head, opening) (fuse/3)".into(),
            Box::new(|p: &[(u8, f64)]| {
                let v: Vec<f64> = [WHOLE, HEAD, OPENING]
                    .into_iter()
                    .map(|k| max_of(p, |t| t == k))
                    .filter(|c| !c.is_nan())
                    .collect();
                if v.is_empty() { 0.0 } else { mean(&v) }
            }),
        ),
        (
            "max of all parts".into(),
            Box::new(|p: &[(u8, f64)]| nz(max_of(p, |_| true))),
        ),
        (
            "max of parts but whole".into(),
            Box::new(|p: &[(u8, f64)]| nz(max_of(p, |t| t != WHOLE))),
        ),
        (
            "max(whole, head)".into(),
            Box::new(|p: &[(u8, f64)]| nz(max_of(p, |t| t <= HEAD))),
        ),
        (
            "mean of top 2 parts".into(),
            Box::new(|p: &[(u8, f64)]| {
                let mut v: Vec<f64> = p.iter().map(|x| x.1).collect();
                v.sort_by(|a, b| b.total_cmp(a));
                if v.is_empty() {
                    0.0
                } else {
                    v.iter().take(2).sum::<f64>() / v.len().min(2) as f64
                }
            }),
        ),
        (
            "mean(whole, head)".into(),
            Box::new(|p: &[(u8, f64)]| (nz(max_of(p, |t| t == WHOLE)) + nz(max_of(p, |t| t == HEAD))) / 2.0),
        ),
    ];
    // The parts that say what the skill is for (whole, head, when-to-use, examples), not what
    // it contains (headings, executors, opening): the others name many topics a turn may
    // share without wanting the skill.
    let purpose = |t: u8| t <= EXAMPLES;
    out.push((
        "max(whole, head, when, examples)".into(),
        Box::new(move |p: &[(u8, f64)]| nz(max_of(p, purpose))),
    ));
    for alpha in [0.3, 0.5, 0.7] {
        out.push((
            format!("{alpha}·whole + {:.1}·max(head, when, examples)", 1.0 - alpha),
            Box::new(move |p: &[(u8, f64)]| {
                let w = nz(max_of(p, |t| t == WHOLE));
                alpha * w + (1.0 - alpha) * nz(max_of(p, |t| t != WHOLE && purpose(t))).max(w)
            }),
        ));
    }
    for alpha in [0.3, 0.5, 0.7] {
        out.push((
            format!("{alpha}·whole + {:.1}·max(parts)", 1.0 - alpha),
            Box::new(move |p: &[(u8, f64)]| {
                let w = nz(max_of(p, |t| t == WHOLE));
                alpha * w + (1.0 - alpha) * nz(max_of(p, |t| t != WHOLE)).max(w)
            }),
        ));
        out.push((
            format!("{alpha}·whole + {:.1}·head + … max(rest) bonus", 1.0 - alpha),
            Box::new(move |p: &[(u8, f64)]| {
                let w = nz(max_of(p, |t| t == WHOLE));
                let h = nz(max_of(p, |t| t == HEAD));
                let rest = nz(max_of(p, |t| t > HEAD));
                (alpha * w + (1.0 - alpha) * h).max(rest)
            }),
        ));
    }
    for (tag, name) in NAMES.iter().enumerate().skip(1) {
        let tag = tag as u8;
        out.push((
            format!("{name} alone"),
            Box::new(move |p: &[(u8, f64)]| nz(max_of(p, |t| t == tag))),
        ));
    }
    out
}

/// A way of fusing: per turn, the lexical scores and dense scores of every skill → fused.
type Fuse = Box<dyn Fn(&[f64], &[f64]) -> Vec<f64>>;

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// The `k`-th largest value (0-based), or 0.
fn kth(v: &[f64], k: usize) -> f64 {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| *x > -0.5).collect();
    s.sort_by(|a, b| b.total_cmp(a));
    s.get(k).copied().unwrap_or(0.0)
}

fn fusions(betas: &[f64]) -> Vec<(String, Fuse)> {
    let mut out: Vec<(String, Fuse)> = Vec::new();
    for &beta in betas {
        out.push((
            format!("β {beta}"),
            Box::new(move |l: &[f64], d: &[f64]| l.iter().zip(d).map(|(l, d)| (1.0 - beta) * l + beta * d).collect()),
        ));
    }
    for &beta in betas {
        // The turn's 10th best dense score taken off: a turn near everything (chit-chat)
        // keeps little above its own crowd.
        out.push((
            format!("β {beta}, dense − its 10th best"),
            Box::new(move |l: &[f64], d: &[f64]| {
                let base = kth(d, 9);
                l.iter()
                    .zip(d)
                    .map(|(l, d)| (1.0 - beta) * l + beta * (d - base))
                    .collect()
            }),
        ));
        out.push((
            format!("β {beta}, dense − ½ turn mean"),
            Box::new(move |l: &[f64], d: &[f64]| {
                let m = mean(d);
                l.iter()
                    .zip(d)
                    .map(|(l, d)| (1.0 - beta) * l + beta * (d - 0.5 * m))
                    .collect()
            }),
        ));
    }
    for &beta in betas {
        // Agreement: the skills in both the lexical and the dense top 5 get a bonus.
        out.push((
            format!("β {beta}, +0.05 when in both top 5"),
            Box::new(move |l: &[f64], d: &[f64]| {
                let (lk, dk) = (kth(l, 4).max(1e-9), kth(d, 4));
                l.iter()
                    .zip(d)
                    .map(|(l, d)| (1.0 - beta) * l + beta * d + if *l >= lk && *d >= dk { 0.05 } else { 0.0 })
                    .collect()
            }),
        ));
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

/// One table row: the ranking and the menu at the lowest τ (over all turns) whose false
/// offers are ≤ 15 %.
fn row(
    dname: &str,
    fname: &str,
    parts: &[(&str, Vec<&(usize, &Turn)>); 3],
    scores: &[Scores],
    fused: &[Vec<f64>],
    slugs: &[String],
) {
    let mut grid: Vec<f64> = fused.iter().flatten().copied().filter(|x| *x > -0.5).collect();
    grid.sort_by(f64::total_cmp);
    grid.dedup();
    // False offers fall as τ rises: binary search for the lowest τ within the cap.
    let (mut lo, mut hi) = (0usize, grid.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        if tally(&parts[0].1, scores, fused, slugs, Some(grid[mid])).fo() <= 0.15 + 1e-12 {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let tau = grid.get(lo).copied();
    let r: Vec<Tally> = parts.iter().map(|p| tally(&p.1, scores, fused, slugs, None)).collect();
    let m: Vec<Tally> = parts.iter().map(|p| tally(&p.1, scores, fused, slugs, tau)).collect();
    println!(
        "| {dname} | {fname} | {:.3} | {:.3} / {:.3} | {:.4} | {:.3} | {:.3} / {:.3} | {:.3} ({:.3} / {:.3}) | {} |",
        r[0].all(),
        r[1].all(),
        r[2].all(),
        tau.unwrap_or(f64::NAN),
        m[0].all(),
        m[1].all(),
        m[2].all(),
        m[0].fo(),
        m[1].fo(),
        m[2].fo(),
        m[0].kinds()
    );
}

/// Writes every score the table is computed from (`MENU_FUSION_DUMP=FILE`), so that rules can
/// be explored without rebuilding the bench: a line `S <slug>` per skill in index order, then
/// per turn a line `T <id> <kind> <held-out 0|1> <expected slugs, comma-separated or ->` and,
/// per enabled skill, `<index> <lexical> <trigger hits> <tag:cosine,…>` (tab-separated).
fn dump(path: &Path, turns: &[Turn], slugs: &[String], scores: &[Scores]) -> Result<(), String> {
    use std::fmt::Write as _;
    let mut out = String::new();
    for s in slugs {
        let _ = writeln!(out, "S\t{s}");
    }
    for (t, s) in turns.iter().zip(scores) {
        let expected = if t.expected.is_empty() {
            "-".to_owned()
        } else {
            t.expected.join(",")
        };
        let _ = writeln!(
            out,
            "T\t{}\t{}\t{}\t{expected}",
            t.id,
            t.kind,
            u8::from(held_out(&t.id))
        );
        for (i, p) in s.parts.iter().enumerate() {
            if p.is_empty() {
                continue;
            }
            let cos: Vec<String> = p.iter().map(|(tag, c)| format!("{tag}:{c:.5}")).collect();
            let _ = writeln!(out, "{i}\t{:.5}\t{}\t{}", s.lexical[i], s.hits[i], cos.join(","));
        }
    }
    std::fs::write(path, out).map_err(|e| format!("{}: {e}", path.display()))
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
    let skills = &cat.menu.index().skills;
    let n = skills.len();
    let slugs: Vec<String> = skills.iter().map(|s| s.slug.clone()).collect();
    let docs = vectors(&out, n)?;
    let mut kinds: Vec<u8> = docs.iter().flatten().map(|v| v.0).collect();
    kinds.sort_unstable();
    kinds.dedup();
    if kinds.len() < 2 {
        // Every rule over parts then scores the whole document alone: say so, not a table of
        // identical rows that reads as a measurement.
        eprintln!(
            "warning: menu.vec holds one kind of part ({}): build the catalog with a binary whose \
             menu::doc::EMBEDDED lists every DensePart to compare the part rules",
            kinds
                .iter()
                .map(|&k| NAMES.get(usize::from(k)).copied().unwrap_or("?"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
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
        let DenseTurn::Vector(q) = cat.embed_turn(&t.text) else {
            return Err("the catalog has no dense embedder, or it is unavailable".into());
        };
        let parts = (0..n)
            .map(|i| {
                if skills[i].enabled {
                    docs[i].iter().map(|(tag, v)| (*tag, dot(&q, v))).collect()
                } else {
                    Vec::new()
                }
            })
            .collect();
        scores.push(Scores { lexical, hits, parts });
    }
    if let Ok(path) = std::env::var("MENU_FUSION_DUMP") {
        dump(Path::new(&path), &battery.turns, &slugs, &scores)?;
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
    let only = std::env::var("MENU_FUSION_ONLY").ok();
    let betas: Vec<f64> = std::env::var("MENU_FUSION_BETAS")
        .ok()
        .map(|v| v.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![0.4, 0.5, 0.6, 0.7, 0.8]);
    println!(
        "| dense score | fusion | ranking all | tuning / held-out | τ | at τ all | tuning / held-out | FO (tuning / held-out) | at τ per kind |"
    );
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
    for (dname, dense) in denses() {
        if only.as_deref().is_some_and(|o| !dname.contains(o)) {
            continue;
        }
        let d: Vec<Vec<f64>> = scores
            .iter()
            .map(|s| {
                s.parts
                    .iter()
                    .map(|p| if p.is_empty() { -1.0 } else { dense(p) })
                    .collect()
            })
            .collect();
        let mut fs = fusions(&betas);
        if dname.ends_with("alone") {
            // A part alone: dense only, to see what each part carries.
            fs = vec![(
                "dense alone".into(),
                Box::new(|_: &[f64], d: &[f64]| d.to_vec()) as Fuse,
            )];
        }
        for (fname, fuse) in fs {
            let fused: Vec<Vec<f64>> = scores
                .iter()
                .zip(&d)
                .map(|(s, d)| {
                    let mut f = fuse(&s.lexical, d);
                    // Skills with no vector (disabled) stay out of every menu.
                    for (x, dx) in f.iter_mut().zip(d) {
                        if *dx < -0.5 {
                            *x = -1.0;
                        }
                    }
                    f
                })
                .collect();
            row(&dname, &fname, &parts, &scores, &fused, &slugs);
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

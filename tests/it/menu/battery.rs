//! `skillc menu calibrate` on the labelled battery (`tests/data/menu_battery.toml`) over the
//! shared corpus built as one catalog (issue 19, acceptance 2): it runs, prints its figures,
//! records τ, and the built-in embedder keeps the figures recorded in BENCHMARKS.md ("Menu").
//! Runs when the corpus is present (required under CI, see `common::corpus`).

use crate::common::{manifest_dir, skillc_env, write_test_key};

/// The shared corpus built as one catalog in a temp folder, with `menu` appended to its
/// pipeline.toml (a `[menu]` table, or nothing), then `skillc menu calibrate` on the battery:
/// the folder, the human report (which records τ), and the `--dry-run --format json` document.
/// `None` when the corpus is missing (outside CI).
pub fn calibrated_corpus(menu: &str) -> Option<(tempfile::TempDir, String, serde_json::Value)> {
    let corpus = crate::common::corpus()?;
    let dir = tempfile::tempdir().expect("tempdir");
    write_test_key(&dir.path().join("test.key"));
    let pipeline = format!(
        "[pipeline]\nskills = [{:?}]\nout = \"out\"\n{menu}",
        corpus.display().to_string()
    );
    std::fs::write(dir.path().join("pipeline.toml"), pipeline).expect("write");
    // Some corpus skills are rejected (exit 1); the catalog is written.
    let b = skillc_env(
        dir.path(),
        &["build", "--key", "test.key", "--skip", "L5"],
        &[("SOURCE_DATE_EPOCH", "1800000000")],
    );
    assert!(matches!(b.code, Some(0 | 1)), "{}", b.stderr);
    let battery = manifest_dir().join("tests/data/menu_battery.toml");
    let battery = battery.to_string_lossy();
    let human = skillc_env(dir.path(), &["menu", "calibrate", &battery, "--state", "s.json"], &[]);
    assert_eq!(human.code, Some(0), "{}\n{}", human.stdout, human.stderr);
    println!("{}", human.stdout);
    let r = skillc_env(
        dir.path(),
        &[
            "menu",
            "calibrate",
            &battery,
            "--dry-run",
            "--format",
            "json",
            "--state",
            "s.json",
        ],
        &[],
    );
    Some((dir, human.stdout, r.json()))
}

#[test]
fn calibrate_on_the_battery() {
    let Some((dir, human, v)) = calibrated_corpus("") else {
        return;
    };
    assert!(
        human.contains("← τ") && human.contains("recorded τ for lexical/4 doc/1"),
        "{human}"
    );
    let recorded = std::fs::read_to_string(dir.path().join("menu-calibration.toml")).expect("recorded");
    assert!(recorded.contains("embedder = \"lexical/4\""), "{recorded}");
    let rank = &v["ranking"]["all"]["recall_at_3_by_kind"];
    let at = &v["at_tau"]["all"];
    let get = |x: &serde_json::Value, k: &str| x[k].as_f64().unwrap_or(0.0);
    // BM25 over name + description on this battery (benches/menu_battery.py): direct 1.000,
    // paraphrase 0.040, italian 0.433. Issue 19's targets: ≥ BM25 + 15 points on paraphrase
    // and Italian, no loss on direct turns, false offers ≤ 15 %.
    assert!(get(rank, "paraphrase") >= 0.04 + 0.15, "{rank}");
    assert!(get(rank, "italian") >= 0.433 + 0.15, "{rank}");
    assert!(get(rank, "direct") >= 1.0, "{rank}");
    assert!(get(at, "false_offers") <= 0.15, "{at}");
    // The `lexical/4` figures of BENCHMARKS.md ("Menu"), one turn of margin (of 50, 30, 34,
    // 52): ranking paraphrase 0.420, Italian 0.900, indirect 0.529; at τ direct 0.981,
    // paraphrase 0.140, Italian 0.733.
    assert!(get(rank, "paraphrase") >= 0.40, "{rank}");
    assert!(get(rank, "italian") >= 0.866, "{rank}");
    assert!(get(rank, "indirect") >= 0.50, "{rank}");
    let at_kind = &at["recall_at_3_by_kind"];
    assert!(get(at_kind, "direct") >= 0.96, "{at}");
    assert!(get(at_kind, "paraphrase") >= 0.12, "{at}");
    assert!(get(at_kind, "italian") >= 0.70, "{at}");
    assert_eq!(v["tau"].as_f64(), recorded_tau(&recorded), "{recorded}");
}

fn recorded_tau(text: &str) -> Option<f64> {
    let t: toml::Table = toml::from_str(text).ok()?;
    t.get("threshold")?.as_array()?.first()?.get("tau")?.as_float()
}

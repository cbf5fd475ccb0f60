//! Unit tests of the built-in embedder: turn features, stems, concepts and the coordination factor.

use super::*;
use crate::vocab;

fn lexicon() -> Lexicon {
    Lexicon::new(&vocab::parse(vocab::DEFAULT_PATH, vocab::DEFAULT_TEXT).vocabulary)
}

#[test]
fn the_stemmer_joins_families_in_both_languages() {
    for (a, b) in [
        ("deploying", "deploy"),
        ("deployment", "deploy"),
        ("deployed", "deploy"),
        ("documents", "document"),
        ("documenti", "document"),
        ("documento", "document"),
        ("entries", "entry"),
        ("file", "file"),
    ] {
        assert_eq!(stem(a), b, "{a}");
    }
}

#[test]
fn tokens_fold_strip_accents_and_drop_stop_words() {
    let t: Vec<String> = tokens("Vorrei elencare i FILE della Città, per favore 2024")
        .into_iter()
        .map(|t| t.word)
        .collect();
    assert_eq!(t, ["elencare", "file", "citta"]);
}

#[test]
fn italian_labels_are_shared_concepts() {
    let l = lexicon();
    let en = turn_features("list the messages", &l);
    let it = turn_features("elenca i messaggi", &l);
    let concepts = |f: &[Feature]| -> Vec<String> {
        f.iter()
            .filter(|f| f.name.starts_with("c:"))
            .map(|f| f.name.clone())
            .collect()
    };
    let (en, it) = (concepts(&en), concepts(&it));
    assert!(en.contains(&"c:a:list".to_owned()), "{en:?}");
    assert!(it.contains(&"c:a:list".to_owned()), "{it:?}");
    assert!(
        en.iter().any(|c| it.contains(c) && c.starts_with("c:o:")),
        "{en:?} {it:?}"
    );
}

#[test]
fn the_glossary_parses_and_translates() {
    assert!(toml::from_str::<Glossary>(GLOSSARY).is_ok());
    let l = lexicon();
    let it: Vec<String> = turn_features("previsioni del meteo", &l)
        .into_iter()
        .map(|f| f.name)
        .collect();
    assert!(it.contains(&format!("w:{}", stem("weather"))), "{it:?}");
    let en: Vec<String> = turn_features("a photo", &l).into_iter().map(|f| f.name).collect();
    assert!(en.contains(&"c:s:image".to_owned()), "{en:?}");
}

#[test]
fn turn_features_know_their_words_and_coverage_counts_them() {
    let l = lexicon();
    let f = turn_features("deploy the deployment docs", &l);
    // `deploy` and `deployment` are one stem: one word; `docs` the second.
    let words = f.iter().fold(0, |a, x| a | x.words);
    assert_eq!(words.count_ones(), 2, "{f:?}");
    assert!(f.iter().filter(|x| x.name.starts_with("g:")).all(|x| x.words == 0));
    let deploy = f.iter().find(|x| x.name == "w:deploy").map_or(0, |x| x.words);
    assert_eq!(deploy, word_bit(0));
    assert_eq!(coverage(deploy, words), 0.5);
    assert_eq!(coverage(words, words), 1.0);
    assert_eq!(coverage(0, words), 0.0);
    assert_eq!(coverage(0, 0), 1.0);
    assert_eq!(word_bit(200), word_bit(63));
}

#[test]
fn document_features_are_capped_sorted_and_deterministic() {
    let l = lexicon();
    let body = (0..2000).map(|i| format!("word{i}x")).collect::<Vec<_>>().join(" ");
    let fields = [
        Field {
            text: "deploy-service",
            weight: 3.0,
            head: true,
            name: true,
        },
        Field {
            text: &body,
            weight: 0.5,
            head: false,
            name: false,
        },
    ];
    let f = doc_features(&fields, &l);
    // The name's twins come on top of the cap; the body's words get none.
    let twins = f.iter().filter(|x| x.1 == W_TWIN).count();
    assert!(twins >= 2, "{twins}");
    assert_eq!(f.len() - twins, MAX_FEATURES);
    assert!(f.windows(2).all(|w| w[0].0 < w[1].0));
    assert!(f.iter().any(|x| x.0 == hash("w", "deploy")));
    assert!(f.iter().any(|x| *x == (name_twin(hash("w", "deploy")), W_TWIN)));
    assert!(!f.iter().any(|x| x.0 == name_twin(hash("w", "word7x"))));
    assert_eq!(f, doc_features(&fields, &l));
}

#[test]
fn the_name_bonus_counts_the_share_of_named_words() {
    assert_eq!(name_bonus(0, 0), 1.0);
    assert_eq!(name_bonus(0b01, 0b11), 1.0 + NAME_BONUS / 2.0);
    assert_eq!(name_bonus(0b11, 0b11), 1.0 + NAME_BONUS);
    // Bits outside the turn's words do not count.
    assert_eq!(name_bonus(0b100, 0b11), 1.0);
    assert_ne!(name_twin(hash("w", "deploy")), hash("w", "deploy"));
    assert_eq!(name_twin(7), name_twin(7));
}

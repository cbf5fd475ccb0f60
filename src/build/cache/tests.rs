//! Keys and entry verification of the build cache.

use std::collections::BTreeMap;

use super::*;
use crate::skill::SkillCheck;
use crate::translate::Translation;

fn unit(name: &str) -> SkillUnit {
    SkillUnit {
        display: format!("skills/{name}"),
        check: SkillCheck {
            name: Some(name.into()),
            diagnostics: Vec::new(),
        },
        translation: Translation::default(),
        info: None,
        rejected: None,
        extra: Vec::new(),
        findings: Vec::new(),
    }
}

/// Every part of the context changes the key; equal parts give equal keys.
#[test]
fn every_input_of_the_context_changes_the_key() {
    let imported = BTreeMap::new();
    let mut other_import = BTreeMap::new();
    other_import.insert("a".to_owned(), "https://example.org/a".to_owned());
    let base = KeyParts {
        tool: TOOL,
        vocabulary: "vocabulary",
        translations: "",
        mode: Mode::Default,
        limits: Limits::default(),
        fail_on: FindingSeverity::High,
        skip: &[],
        imported_from: &imported,
    };
    let skill = [7u8; 32];
    let k = key(&context(&base), &skill);
    assert_eq!(k, key(&context(&base.clone()), &skill), "deterministic");
    let limits = Limits {
        files_per_skill: 499,
        ..Limits::default()
    };
    let variants: Vec<(&str, KeyParts<'_>)> = vec![
        (
            "tool version",
            KeyParts {
                tool: "0.0.0-other",
                ..base
            },
        ),
        (
            "vocabulary",
            KeyParts {
                vocabulary: "vocabulary ",
                ..base
            },
        ),
        (
            "translations",
            KeyParts {
                translations: "[x]",
                ..base
            },
        ),
        (
            "mode",
            KeyParts {
                mode: Mode::Strict,
                ..base
            },
        ),
        ("limits", KeyParts { limits, ..base }),
        (
            "fail_on",
            KeyParts {
                fail_on: FindingSeverity::Medium,
                ..base
            },
        ),
        (
            "skip",
            KeyParts {
                skip: &[Level::L5],
                ..base
            },
        ),
        (
            "imported_from",
            KeyParts {
                imported_from: &other_import,
                ..base
            },
        ),
    ];
    for (what, parts) in variants {
        assert_ne!(key(&context(&parts), &skill), k, "{what}");
    }
    assert_ne!(key(&context(&base), &[8u8; 32]), k, "the skill's fingerprint");
}

/// An entry reads back section by section; any cut, any flipped byte, another key or another
/// tool version is refused.
#[test]
fn entries_are_verified_whole() {
    let k = [1u8; 32];
    let u = unit("alpha");
    let bytes = encode(
        &k,
        TOOL,
        &Results {
            unit: &u,
            drafts: &[None],
            menu: None,
        },
    );
    assert!(verify(&bytes, &k, TOOL).is_ok());
    assert_eq!(take::<SkillUnit>(&bytes, Section::Unit), Some(u));
    assert_eq!(take::<Vec<Option<Executor>>>(&bytes, Section::Drafts), Some(vec![None]));
    assert_eq!(take::<Option<MenuPart>>(&bytes, Section::Menu), Some(None));
    for n in 0..bytes.len() {
        assert!(verify(&bytes[..n], &k, TOOL).is_err(), "cut at {n}");
        let mut b = bytes.clone();
        b[n] ^= 0x01;
        assert!(verify(&b, &k, TOOL).is_err(), "byte {n} flipped");
    }
    assert_eq!(verify(&bytes, &[2u8; 32], TOOL), Err(Bad::Key));
    assert!(matches!(verify(&bytes, &k, "9.9.9"), Err(Bad::Version { .. })));
    let other = encode(
        &k,
        "9.9.9",
        &Results {
            unit: &unit("alpha"),
            drafts: &[],
            menu: None,
        },
    );
    assert!(matches!(verify(&other, &k, TOOL), Err(Bad::Version { .. })));
}

/// The record of catalog-wide admission verdicts reads back exactly, and any damage to it,
/// a record of another tool or signing key, or one edited and sealed by someone without the
/// signing key, is refused (a full admission, never a wrong verdict).
#[test]
fn catalog_verdicts_are_verified_whole() {
    use crate::model::{CatalogVerdicts, Lang, Level, Prototype, PrototypeKind};
    let v = CatalogVerdicts {
        key: [3; 32],
        rejected: vec![
            (0, Level::L3, "overlaps `b`".into()),
            (4, Level::L4, "its request routes to `c` ✓".into()),
        ],
        battery: vec![Prototype {
            expected: "list_files_box".into(),
            lang: Lang::It,
            request: "elenca file Box".into(),
            kind: PrototypeKind::Label,
        }],
    };
    let seal = Seal { key: [5; 32] };
    let bytes = encode_catalog("1.0.0", &v, &seal);
    assert_eq!(decode_catalog(&bytes, "1.0.0", &seal), Ok(v.clone()));
    assert!(matches!(
        decode_catalog(&bytes, "1.0.1", &seal),
        Err(Bad::Version { .. })
    ));
    let other_key = Seal { key: [6; 32] };
    assert!(matches!(
        decode_catalog(&bytes, "1.0.0", &other_key),
        Err(Bad::Version { .. })
    ));
    // Every byte matters; past the header, a changed byte is a broken seal.
    let header = CATALOG_MAGIC.len() + 4 + 6 + 8;
    for i in 0..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 0x40;
        let got = decode_catalog(&b, "1.0.0", &seal);
        assert!(got.is_err(), "byte {i} flipped: {got:?}");
        if i >= header {
            assert_eq!(got, Err(Bad::Seal), "byte {i} flipped");
        }
    }
    for n in [0, 8, 31, bytes.len() - 1] {
        assert!(decode_catalog(&bytes[..n], "1.0.0", &seal).is_err(), "cut at {n}");
    }
    // Edited verdicts, sealed again without the signing key's derived key and given this
    // key's seal id: refused.
    let forged = CatalogVerdicts {
        rejected: Vec::new(),
        ..v.clone()
    };
    let mut forged = encode_catalog("1.0.0", &forged, &other_key);
    let id_at = CATALOG_MAGIC.len() + 4 + 6;
    forged[id_at..id_at + 8].copy_from_slice(&bytes[id_at..id_at + 8]);
    assert_eq!(decode_catalog(&forged, "1.0.0", &seal), Err(Bad::Seal));
    // A well-formed file of another kind (a per-skill entry's magic) is not taken either.
    let mut other = bytes.clone();
    other[..8].copy_from_slice(MAGIC);
    assert_eq!(decode_catalog(&other, "1.0.0", &seal), Err(Bad::Malformed));
}

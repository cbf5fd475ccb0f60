//! The signed files of `out/` as types (FORMATS.md): `catalog.toml` ([`Catalog`]) and each
//! executor's `manifest.toml` ([`Manifest`]). What reads a catalog (`skillc verify`, and the
//! runtime commands after it) reads these, and refuses a file with a key they do not know
//! (`deny_unknown_fields`): a format grows by a new version, not by keys a reader would
//! silently skip. The writers (`emit::render_catalog`, `generate`) write the same shape;
//! tests parse what they write back into these types.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// `catalog.toml`: the signed list of every executor and skill of a catalog and the digests
/// of the top-level files.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalog {
    /// `"1"`.
    pub catalog_format: String,
    /// Monotonic version (`SOURCE_DATE_EPOCH` or the build time).
    pub catalog_version: i64,
    /// RFC 3339 expiry time.
    pub expires: String,
    /// The signer's key id (hex).
    pub key_id: String,
    /// The skillc version that built it.
    pub skillc: String,
    /// Admission levels skipped on request.
    pub skipped: Vec<String>,
    /// Top-level file → `sha256:<hex>` (report, routing battery, public key).
    pub files: BTreeMap<String, String>,
    /// `[[executor]]`.
    #[serde(default, rename = "executor")]
    pub executors: Vec<CatalogExecutor>,
    /// `[[skill]]`.
    #[serde(default, rename = "skill")]
    pub skills: Vec<CatalogSkill>,
}

/// An `[[executor]]` of the catalog.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogExecutor {
    /// Canonical name.
    pub name: String,
    /// Skill name.
    pub skill: String,
    /// Path of its manifest in `out/`.
    pub manifest: String,
    /// Hex SHA-256 of its manifest.
    pub manifest_sha256: String,
}

/// A `[[skill]]` of the catalog: its retained source.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogSkill {
    /// Skill name.
    pub name: String,
    /// `ok` or `instruction-only`.
    pub status: String,
    /// Executors admitted.
    pub executors: u64,
    /// Retained file (relative to the skill folder) → `sha256:<hex>`.
    pub files: BTreeMap<String, String>,
}

/// One skill's block of `menu.files` (FORMATS.md, "menu.files"): exactly what `catalog.toml`
/// lists for it — its `[[skill]]` entry and its `[[executor]]` entries (sorted by name) — so
/// that a menu checks the files of a skill it offers, and a playbook those of the skill it
/// loads, against the signed catalog's digests without reading the whole catalog.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkillListing {
    /// The skill's `[[skill]]` entry.
    pub skill: CatalogSkill,
    /// Its `[[executor]]` entries, sorted by name.
    pub executor: Vec<CatalogExecutor>,
}

impl SkillListing {
    /// The listings of every skill of a parsed catalog, by skill name.
    pub fn of_catalog(catalog: &Catalog) -> BTreeMap<&str, SkillListing> {
        let mut out: BTreeMap<&str, SkillListing> = catalog
            .skills
            .iter()
            .map(|s| {
                (
                    s.name.as_str(),
                    SkillListing {
                        skill: s.clone(),
                        executor: Vec::new(),
                    },
                )
            })
            .collect();
        for e in &catalog.executors {
            if let Some(l) = out.get_mut(e.skill.as_str()) {
                l.executor.push(e.clone());
            }
        }
        for l in out.values_mut() {
            l.executor.sort_by(|a, b| a.name.cmp(&b.name));
        }
        out
    }
}

/// `manifest.toml`: one executor, its command, capabilities, admission and provenance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// `"1"`.
    pub manifest_format: String,
    /// Canonical name.
    pub name: String,
    /// The name's action.
    pub action: String,
    /// The name's object.
    pub object: String,
    /// The name's qualifiers.
    pub qualifiers: Vec<String>,
    /// The name's provider.
    pub provider: String,
    /// English description.
    pub description: String,
    /// Skill name.
    pub skill: String,
    /// The skill's version.
    pub version: String,
    /// How the wrapper runs it.
    pub command: Command,
    /// Argument name → its declaration.
    #[serde(default)]
    pub args: BTreeMap<String, ArgSpec>,
    /// What it may do.
    pub capabilities: Capabilities,
    /// Credentials it needs (names, never values).
    #[serde(default)]
    pub credentials: Vec<CredentialSpec>,
    /// Its admission.
    pub admission: AdmissionRecord,
    /// `wrapper`, `lang_state` and retained files → `sha256:<hex>`.
    pub integrity: BTreeMap<String, String>,
    /// Where it came from.
    pub provenance: Provenance,
}

/// `[command]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Command {
    /// `script`, `binary` or `tool`.
    pub kind: String,
    /// The script, binary or module.
    pub program: String,
    /// The interpreter (empty for a binary).
    pub interpreter: String,
    /// The sub-command words.
    pub argv: Vec<String>,
    /// A GAIA tool's function.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// Seconds the wrapper lets the command run.
    pub timeout_seconds: u64,
}

/// `[args.<name>]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgSpec {
    /// `string`, `integer`, `number`, `boolean`, `array` or `object`.
    #[serde(rename = "type")]
    pub ty: String,
    /// Present in every invocation.
    pub required: bool,
    /// The flag, for flags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flag: Option<String>,
    /// The 0-based position, for positionals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<u64>,
    /// A default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<toml::Value>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// `[capabilities]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capabilities {
    /// GAIA permissions.
    pub permissions: Vec<String>,
    /// GAIA security tier.
    pub security_tier: String,
}

/// A `[[credentials]]` entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CredentialSpec {
    /// The variable or file it binds.
    pub binding: String,
    /// `env` or `file`.
    pub kind: String,
    /// What a runtime asks the user.
    pub dialog: Dialog,
}

/// A credential's dialog.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dialog {
    /// Its title.
    pub title: String,
    /// The fields asked for.
    pub fields: Vec<String>,
}

/// `[admission]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdmissionRecord {
    /// `L1`…`L6` → `pass`, `skipped` or `not-run`.
    pub levels: BTreeMap<String, String>,
    /// Levels skipped on request.
    pub skipped: Vec<String>,
}

/// `[provenance]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// Generated by skillc (always true).
    pub synthesized: bool,
    /// The skill's folder, or its original source (`skillc.lock`).
    pub imported_from: String,
    /// The skill's version.
    pub source_version: String,
    /// The heading the sub-command was found under.
    pub source_section: String,
    /// The sub-command as written.
    pub source_subcommand: String,
    /// RFC 3339 time of the stamp.
    pub imported_at: String,
    /// Hex SHA-256 of SKILL.md.
    pub source_sha256: String,
    /// `skillc <version>`.
    pub importer_version: String,
}

/// Parses a file of one of these types; the error is the parser's message.
pub fn parse<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8".to_owned())?;
    toml::from_str(text).map_err(|e| e.message().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::{self, CatalogHeader};
    use crate::model::SkillStatus;

    #[test]
    fn the_catalog_written_is_the_catalog_read() {
        let text = emit::render_catalog(
            &CatalogHeader {
                version: 7,
                expires: "2030-01-01T00:00:00Z".into(),
                key_id: "abcd".into(),
                skipped: vec!["L5".into()],
            },
            &[("report.json".to_owned(), "00".to_owned())].into(),
            &[emit::CatalogExecutor {
                name: "list_files_a".into(),
                skill: "a".into(),
                manifest_sha256: "11".into(),
            }],
            &[emit::CatalogSkill {
                name: "a".into(),
                status: SkillStatus::Ok,
                executors: 1,
                files: [("SKILL.md".to_owned(), "22".to_owned())].into(),
            }],
        );
        let c: Catalog = parse(text.as_bytes()).expect("parses");
        assert_eq!(
            (c.catalog_version, c.skipped.as_slice()),
            (7, ["L5".to_owned()].as_slice())
        );
        assert_eq!(c.files["report.json"], "sha256:00");
        assert_eq!(c.executors[0].manifest, "executors/a/list_files_a/manifest.toml");
        assert_eq!((c.skills[0].status.as_str(), c.skills[0].executors), ("ok", 1));
        // A key the format does not have is refused, not skipped.
        let extra = text.replace("skipped = [", "trusted = true\nskipped = [");
        assert!(parse::<Catalog>(extra.as_bytes()).is_err_and(|e| e.contains("unknown field `trusted`")));
    }

    #[test]
    fn every_generated_manifest_is_a_manifest() {
        use crate::admit::tests::{Def, catalog, v};
        use crate::generate::{self, Stamp};
        let defs: &[Def<'_>] = &[("list", "files", "a", &["ls"], Some("Lists files"))];
        let (names, plans, infos) = catalog(defs);
        let stamp = Stamp {
            levels: Default::default(),
            skipped: vec![],
            imported_at: "2030-01-01T00:00:00Z".into(),
        };
        let e = generate::executor(&plans[0], &names[0], &infos[0], &v(), &stamp);
        let m: Manifest = parse(e.manifest.as_bytes()).expect("parses");
        assert_eq!(m.name, "list_files_a");
        assert_eq!(m.command.kind, "script");
        assert!(m.integrity.contains_key("wrapper") && m.integrity.contains_key("lang_state"));
        let extra = e
            .manifest
            .replace("[provenance]\n", "[provenance]\nsigned_by = \"me\"\n");
        assert!(parse::<Manifest>(extra.as_bytes()).is_err());
    }
}

//! The registry of diagnostic rules: stable codes, default severities and `explain` texts.
//!
//! Codes never change meaning once released. Prefixes follow the pipeline stage that reports
//! them: `SK` parse and validate a skill, `CF` the `pipeline.toml` configuration, `VO` the
//! vocabulary file, `TR` translation, `AD` admission, `SC` the security scan (`SC000` here;
//! the findings' own rules `SC001`… are in `crate::scan::rules`), `IM` import, `MG` migrate,
//! `EX` export. Each rule's long explanation lives in
//! `docs/rules/<CODE>.md` and is printed by `skillc explain <CODE>`.

use crate::diag::Severity;

/// A diagnostic rule.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Rule {
    /// Stable code, e.g. `SK001`.
    pub code: &'static str,
    /// Short kebab-case name, e.g. `missing-skill-md`.
    pub name: &'static str,
    /// Severity in the default mode (some rules change severity under `--strict`).
    pub severity: Severity,
    /// One line: what the rule checks.
    pub summary: &'static str,
    /// The Markdown text printed by `skillc explain`.
    pub explanation: &'static str,
}

macro_rules! rules {
    ($($code:ident $name:literal $sev:ident $summary:literal;)*) => {
        $(
            #[doc = $summary]
            pub static $code: Rule = Rule {
                code: stringify!($code),
                name: $name,
                severity: Severity::$sev,
                summary: $summary,
                explanation: include_str!(concat!("../docs/rules/", stringify!($code), ".md")),
            };
        )*
        /// Every rule, in code order.
        pub static ALL: &[&Rule] = &[$(&$code),*];
    };
}

rules! {
    SK001 "missing-skill-md" Error "A skill folder must contain a SKILL.md file.";
    SK002 "not-utf8" Error "SKILL.md must be valid UTF-8.";
    SK003 "utf8-bom" Warning "SKILL.md starts with a UTF-8 byte order mark.";
    SK004 "no-frontmatter" Error "SKILL.md must start with a `---` frontmatter fence.";
    SK005 "unclosed-frontmatter" Error "The frontmatter must be closed by a `---` line.";
    SK006 "invalid-yaml" Error "The frontmatter must be valid YAML.";
    SK007 "frontmatter-not-mapping" Error "The frontmatter must be a YAML mapping.";
    SK008 "duplicate-key" Error "A mapping must not repeat a key.";
    SK009 "yaml-anchor-alias" Error "YAML anchors and aliases are not allowed in frontmatter.";
    SK010 "yaml-tag" Error "YAML tags are not allowed in frontmatter.";
    SK011 "yaml-merge-key" Error "YAML merge keys (`<<`) are not allowed in frontmatter.";
    SK012 "yaml-implicit-type" Warning "A plain scalar that other YAML parsers read as a boolean, number, date or null.";
    SK013 "flow-collection" Error "Flow collections (`{}`/`[]`) are outside the strict standard.";
    SK014 "hidden-unicode" Warning "Invisible or direction-changing Unicode characters in a frontmatter value.";
    SK015 "lowercase-filename" Warning "The skill file is named `skill.md` instead of `SKILL.md`.";
    SK016 "not-a-skill" Error "A path given on the command line is neither a folder nor a SKILL.md file.";
    SK020 "missing-name" Error "The frontmatter must have a `name`.";
    SK021 "name-empty" Error "`name` must be a non-empty string.";
    SK022 "name-too-long" Error "`name` must be at most 64 characters.";
    SK023 "name-not-lowercase" Error "`name` must be lowercase.";
    SK024 "name-hyphen-edge" Error "`name` must not start or end with a hyphen.";
    SK025 "name-consecutive-hyphens" Error "`name` must not contain consecutive hyphens.";
    SK026 "name-invalid-characters" Error "`name` may contain only letters, digits and hyphens.";
    SK027 "name-directory-mismatch" Error "`name` must equal the skill's folder name.";
    SK028 "missing-description" Error "The frontmatter must have a `description`.";
    SK029 "description-empty" Error "`description` must be a non-empty string.";
    SK030 "description-too-long" Error "`description` must be at most 1024 characters.";
    SK031 "compatibility-not-string" Error "`compatibility` must be a string.";
    SK032 "compatibility-too-long" Error "`compatibility` must be at most 500 characters.";
    SK033 "unknown-field" Warning "A top-level frontmatter key that no known format defines.";
    SK034 "field-type" Error "A standard field has the wrong YAML type.";
    SK035 "metadata-not-string" Warning "A `metadata` value that is not a string.";
    SK036 "allowed-tools-syntax" Warning "An `allowed-tools` entry that is not `Tool` or `Tool(pattern)`.";
    SK040 "skill-md-too-large" Error "SKILL.md is larger than the configured limit.";
    SK041 "support-file-too-large" Error "A support file is larger than the configured limit.";
    SK042 "too-many-files" Error "The skill folder holds more files than the configured limit.";
    SK043 "symlink-escape" Error "A symbolic link in the skill points outside the skill folder.";
    SK044 "unreadable-file" Error "A file of the skill could not be read.";
    SK050 "gaia-security-tier" Error "`metadata.gaia.security_tier` must be verified, community or experimental.";
    SK051 "gaia-permission-syntax" Error "A GAIA permission must be `<domain>:<level>[:<scope>]` with a known domain and level.";
    SK052 "gaia-permission-ceiling" Error "A GAIA permission exceeds the ceiling of the skill's security tier.";
    SK053 "gaia-tool" Error "A `metadata.gaia.tools` entry is malformed.";
    SK054 "gaia-tools-required" Error "`metadata.gaia.tools_required` must be a list of tool names.";
    SK055 "gaia-unknown-key" Warning "A key under `metadata.gaia` that the GAIA format does not define.";
    SK056 "namespace-shape" Warning "A Hermes, OpenClaw or Claude Code field has an unexpected shape.";
    SK057 "name-not-catalog-safe" Error "A skill in the catalog must have an ASCII `[a-z0-9-]` name that is not a device name.";
    CF001 "config-invalid" Error "`pipeline.toml` is not valid TOML or has a value of the wrong type.";
    CF002 "config-unknown-key" Error "`pipeline.toml` has a key skillc does not know.";
    VO001 "vocabulary-invalid" Error "The vocabulary file is not valid TOML or has a value of the wrong type.";
    VO002 "vocabulary-duplicate" Error "A vocabulary word is defined or used as a synonym twice.";
    VO003 "vocabulary-unknown-reference" Error "A vocabulary entry refers to an action, object or qualifier that does not exist.";
    VO004 "vocabulary-bad-word" Error "A vocabulary name or synonym is not lowercase ASCII `[a-z0-9]` words.";
    TR001 "no-action" Error "A sub-command has no word, or more than one, that maps to a canonical action.";
    TR002 "no-object" Error "A sub-command has no word that maps to a canonical object.";
    TR003 "name-collision" Error "Two sub-commands of one skill translate to the same executor name.";
    TR004 "no-provider" Error "The skill name cannot form a provider qualifier.";
    TR005 "unmatched-word" Error "A sub-command word maps to nothing in the closed vocabulary.";
    TR006 "qualifier-not-allowed" Error "A qualifier cannot qualify the sub-command's object.";
    AD001 "l1-vocabulary" Error "L1: the executor name is outside the closed vocabulary or breaks the name grammar.";
    AD002 "l2-catalog-collision" Error "L2: the executor name is already taken in the catalog by another skill.";
    AD003 "duplicate-skill-name" Error "Two skills of one catalog have the same name.";
    AD004 "l3-affinity" Error "L3: the executor's affinity terms overlap another executor's at or above the threshold.";
    AD005 "l4-routing" Error "L4: a prototype request of the executor routes to another executor, or it takes another's.";
    AD006 "l5-executable" Error "L5: the wrapper does not compile, its `--describe` differs from the contract, or its program is missing.";
    AD007 "l6-semantic" Error "L6: the sub-command's own wording contradicts the action of its executor name.";
    AD008 "l6-verifier" Error "L6: the configured external verifier rejected the executor, or could not be run (fail closed).";
    SC000 "scan-rejected" Error "The security scan found something at or above `[scan] fail_on`: the skill is rejected.";
    MG001 "migrate-blocked" Error "A migrated capability that GAIA cannot grant at the `experimental` tier.";
    MG002 "migrate-needs-review" Warning "A migrated field a person must review: GAIA has no equivalent.";
    MG003 "migrate-failed" Error "A skill that cannot be migrated: unreadable, or the result would fail `skillc check`.";
    MG004 "migrate-nothing" Warning "A skill without Hermes or OpenClaw metadata to migrate.";
    EX001 "export-check-failed" Error "A skill that fails `skillc check` is not exported (unless `--force`).";
    EX002 "export-file-skipped" Warning "A file of the skill folder that is not exported.";
    EX003 "export-metadata-collision" Warning "A top-level key that is also a `metadata` key, exported under another name.";
    IM001 "import-source-invalid" Error "An import SOURCE names nothing skillc can import.";
    IM002 "import-fetch-failed" Error "An import source could not be fetched (git, HTTP, cache).";
    IM003 "import-not-a-skill" Error "An import source holds no usable SKILL.md or skill name.";
    IM004 "import-unsafe-source" Error "An import source holds a path or link that could escape the skill (zip-slip, absolute path, symbolic link).";
    IM005 "import-check-failed" Error "An imported skill is over the limits or does not pass `skillc check`.";
    IM006 "import-skill-exists" Warning "A skill of the same name already exists; the import skips it.";
    IM007 "import-missing-scripts" Warning "A lone SKILL.md runs scripts that were not imported with it.";
    IM008 "import-tier-reset" Note "An imported skill's GAIA security tier claim was reset to experimental.";
    IM009 "import-lock-drift" Error "`import --locked`: a source's content no longer matches skillc.lock.";
    IM010 "update-local-edits" Error "`skillc update` refuses to replace a skill edited since it was imported (without --force).";
}

/// Looks a rule up by code, case-insensitively (`sk001` finds `SK001`).
pub fn find(code: &str) -> Option<&'static Rule> {
    ALL.iter()
        .copied()
        .find(|r| r.code.eq_ignore_ascii_case(code) || r.name == code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_sorted_within_prefix() {
        let mut seen = std::collections::BTreeSet::new();
        for r in ALL {
            assert!(seen.insert(r.code), "duplicate code {}", r.code);
            assert!(
                r.explanation.starts_with(&format!("# {}", r.code)),
                "{} doc must start with its code",
                r.code
            );
        }
    }

    #[test]
    fn find_accepts_code_or_name() {
        assert_eq!(find("sk001").map(|r| r.code), Some("SK001"));
        assert_eq!(find("duplicate-key").map(|r| r.code), Some("SK008"));
        assert!(find("SK999").is_none());
    }
}

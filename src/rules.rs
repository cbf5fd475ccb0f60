//! The registry of rules: stable codes, default severities and `explain` texts, for the
//! diagnostics of every stage and the findings of the security scan alike.
//!
//! Codes never change meaning once released. Prefixes follow the pipeline stage that reports
//! them: `SK` parse and validate a skill, `CF` the `pipeline.toml` configuration, `VO` the
//! vocabulary file, `TR` translation, `AD` admission, `SC` the security scan, `IM` import,
//! `MG` migrate, `EX` export. Each rule's long explanation lives in `docs/rules/<CODE>.md`
//! and is printed by `skillc explain <CODE>`.
//!
//! One table holds both kinds of rule. A diagnostic rule's severity is on the scale
//! `note < warning < error`; a scan rule's (`SC001`…, not `SC000`, which is the build's
//! diagnostic for a rejected skill) is on the security scale `info < low < medium < high <
//! critical`, compared with `[scan] fail_on`, and is only the base of its findings: one
//! rule's findings span several severities (a `curl … | sh` from a vendor's host is `low`,
//! from a paste site `critical`). [`RuleSeverity`] says which scale a rule is on.

use crate::diag::{Rule, RuleSeverity, Severity};
use crate::model::FindingSeverity;

/// The [`RuleSeverity`] a severity word of the table stands for.
macro_rules! rule_severity {
    (Note) => {
        RuleSeverity::Diagnostic(Severity::Note)
    };
    (Warning) => {
        RuleSeverity::Diagnostic(Severity::Warning)
    };
    (Error) => {
        RuleSeverity::Diagnostic(Severity::Error)
    };
    (Info) => {
        RuleSeverity::Finding(FindingSeverity::Info)
    };
    (Low) => {
        RuleSeverity::Finding(FindingSeverity::Low)
    };
    (Medium) => {
        RuleSeverity::Finding(FindingSeverity::Medium)
    };
    (High) => {
        RuleSeverity::Finding(FindingSeverity::High)
    };
    (Critical) => {
        RuleSeverity::Finding(FindingSeverity::Critical)
    };
}

macro_rules! rules {
    ($($code:ident $name:literal $sev:ident $summary:literal;)*) => {
        $(
            #[doc = $summary]
            pub static $code: Rule = Rule {
                code: stringify!($code),
                name: $name,
                severity: rule_severity!($sev),
                summary: $summary,
                explanation: include_str!(concat!("../docs/rules/", stringify!($code), ".md")),
            };
        )*
        /// Every rule: the diagnostic rules by stage, then the scan rules, each in code order
        /// (the order of `skillc explain`).
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
    SK017 "crlf-line-endings" Note "SKILL.md has CRLF (Windows) line endings.";
    SK018 "fence-trailing-whitespace" Note "A frontmatter fence has spaces or tabs after `---`.";
    SK019 "allowed-tools-spelling" Note "`allowed-tools` is a YAML list or comma-separated, not the standard's space-separated string.";
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
    SK037 "yaml-tab-comment" Warning "A tab before `#` ends a frontmatter value as a comment, which PyYAML refuses (an error under `--strict`).";
    SK040 "skill-md-too-large" Error "SKILL.md is larger than the configured limit.";
    SK041 "support-file-too-large" Error "A support file is larger than the configured limit.";
    SK042 "too-many-files" Error "The skill folder holds more files than the configured limit.";
    SK043 "symlink-escape" Error "A symbolic link in the skill points outside the skill folder.";
    SK044 "unreadable-file" Error "A file of the skill could not be read.";
    SK045 "control-character-file-name" Error "A file or folder name of the skill holds a newline or another control character.";
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
    TR007 "pending-review" Error "The sub-command's name is proposed in `translations.toml` and waits for a reviewer.";
    TR008 "rejected-in-review" Error "A reviewer rejected the sub-command's name in `translations.toml`.";
    TR009 "review-outside-vocabulary" Error "An accepted name in `translations.toml` is outside the closed vocabulary or the name grammar.";
    TR010 "translations-invalid" Error "`translations.toml` is not valid TOML, or an entry has a missing, unknown or ill-typed key.";
    TR011 "translations-duplicate" Error "`translations.toml` has two entries for one skill and sub-command, or two objects for one skill.";
    TR012 "weak-evidence" Error "The sub-command's name rests on weak evidence only; it is proposed for review instead of signed.";
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
    IM002 "import-fetch-failed" Error "An import source could not be fetched: the network, git, the server or the cache failed.";
    IM003 "import-not-a-skill" Error "An import source holds no usable SKILL.md or skill name.";
    IM004 "import-unsafe-source" Error "An import source holds a path or link that could escape the skill (zip-slip, absolute path, symbolic link).";
    IM005 "import-check-failed" Error "An imported skill is over the limits or does not pass `skillc check`.";
    IM006 "import-skill-exists" Warning "A skill of the same name already exists; the import skips it.";
    IM007 "import-missing-scripts" Warning "A lone SKILL.md runs scripts that were not imported with it.";
    IM008 "import-tier-reset" Note "An imported skill's GAIA security tier claim was reset to experimental.";
    IM009 "import-lock-drift" Error "`import --locked`: a source's content no longer matches skillc.lock.";
    IM010 "update-local-edits" Error "`skillc update` refuses to replace a skill edited since it was imported (without --force).";
    IM011 "lock-invalid" Error "`skillc.lock` is not valid TOML, has an unknown key or version, or lists a skill twice.";
    IM012 "import-source-missing" Error "An import source's repository, ref or URL does not exist (or the server refused it, HTTP 4xx).";
    // The scan rules: severities info…critical.
    SC001 "bidi-control" High "Bidirectional control characters that reorder how text is displayed (Trojan Source).";
    SC002 "invisible-characters" Low "Zero-width and other invisible characters; runs of them can carry a hidden payload.";
    SC003 "unicode-tag-payload" Critical "Unicode tag characters outside a flag emoji: invisible ASCII that models read.";
    SC004 "control-characters" Medium "C0/C1 control characters (terminal escapes, backspaces) in a text file, or any control character in a file name.";
    SC010 "decode-and-execute" Critical "Decoded data is executed (`base64 -d | sh`, `eval \"$(…)\"`, `exec(b64decode(…))`).";
    SC011 "download-and-execute" High "Downloaded code is executed (`curl … | sh`, `bash <(wget …)`, `iex (iwr …)`).";
    SC012 "protected-archive" High "A password-protected archive is downloaded or unpacked (scanners cannot look inside).";
    SC013 "paste-site" Medium "A paste site (glot.io, pastebin, …) is used, worst as an installer.";
    SC014 "raw-ip-url" Medium "A URL whose host is a public IP address rather than a name.";
    SC015 "credential-exfiltration" High "A credential store (~/.ssh, ~/.aws, .env, a keychain) is read near a network send.";
    SC016 "environment-dump" High "The whole environment (`env`, `printenv`, `os.environ`) is dumped and sent out.";
    SC017 "prompt-injection" High "Text that tells the model to ignore its instructions or to hide actions from the user.";
    SC018 "credential-harvest-instruction" High "Text that tells the agent to read credentials or private files and include, send or upload them.";
    SC020 "symlink-escape" High "A symbolic link points outside the skill folder.";
    SC021 "binary-file" High "An executable, or binary content where text is expected.";
    SC022 "not-scanned" High "A file could not be scanned: over the size or count limits, or unreadable.";
    SC030 "allowed-tools" Info "`allowed-tools` is recorded for review; it never grants anything.";
    SC040 "dynamic-code-execution" Critical "Code or a command is run from downloaded, decoded or computed text, or a dangerous API's name is built at run time.";
    SC041 "secret-to-network" High "A credential or secret flows into a network send in the same script (data flow, not proximity).";
    SC042 "gated-behaviour" High "A sensitive operation runs only past a fixed date or when a probe says it is not in a sandbox, VM, debugger or CI.";
    SC043 "unsafe-deserialisation" High "A loader that can run code (pickle, marshal, yaml.load, node-serialize) is fed an encoded literal, a download or a file.";
    SC044 "staged-payload" High "A script downloads a file, writes it, makes it executable and runs it, across lines.";
    SC045 "command-shadowing" High "A shell alias or function shadows a common command and runs a payload first; shell start-up files are written.";
    SC046 "disguised-file" High "A file's extension lies about its content: a data file that is code, a polyglot, a data file run by an interpreter.";
    SC047 "reverse-shell" Critical "A shell whose input and output are a network connection, in Python, JavaScript or shell.";
}

/// Looks a rule up by code, case-insensitively (`sk001` finds `SK001`), or by name.
pub fn find(code: &str) -> Option<&'static Rule> {
    ALL.iter()
        .copied()
        .find(|r| r.code.eq_ignore_ascii_case(code) || r.name == code)
}

/// The scan rules (`SC001`…): every rule whose findings are on the security scale, in code
/// order (the rules of a SARIF log's driver).
pub fn scan_rules() -> impl Iterator<Item = &'static Rule> {
    ALL.iter().copied().filter(|r| r.finding_severity().is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Codes are unique, each prefix's codes come in ascending order in the table (the order
    /// of `skillc explain`), and each explanation starts with its code. (Issue 18, item 16:
    /// this test used to check no order at all.)
    #[test]
    fn codes_are_unique_and_sorted_within_prefix() {
        let mut seen = std::collections::BTreeSet::new();
        let mut last: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
        for r in ALL {
            assert!(seen.insert(r.code), "duplicate code {}", r.code);
            assert!(
                r.explanation.starts_with(&format!("# {}", r.code)),
                "{} doc must start with its code",
                r.code
            );
            let prefix = &r.code[..2];
            if let Some(before) = last.insert(prefix, r.code) {
                assert!(before < r.code, "{} comes after {before} in the table", r.code);
            }
        }
    }

    #[test]
    fn find_accepts_code_or_name() {
        assert_eq!(find("sk001").map(|r| r.code), Some("SK001"));
        assert_eq!(find("duplicate-key").map(|r| r.code), Some("SK008"));
        assert!(find("SK999").is_none());
        assert_eq!(find("sc011").map(|r| r.name), Some("download-and-execute"));
        assert_eq!(find("paste-site").map(|r| r.code), Some("SC013"));
    }

    #[test]
    fn scan_rules_are_the_finding_scale_in_code_order() {
        let codes: Vec<&str> = scan_rules().map(|r| r.code).collect();
        assert!(codes.windows(2).all(|w| w[0] < w[1]), "{codes:?}");
        assert_eq!(codes.first(), Some(&"SC001"));
        assert!(!codes.contains(&"SC000"), "SC000 is the build's diagnostic");
        assert_eq!(SC000.diagnostic_severity(), Severity::Error);
        assert_eq!(SC011.finding_severity(), Some(FindingSeverity::High));
    }

    /// Every `docs/rules/*.md` is a registered code, and every explanation says more than a
    /// line.
    #[test]
    fn rule_docs_match_the_registry() {
        let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules");
        let mut on_disk: Vec<String> = std::fs::read_dir(&docs)
            .map(|d| {
                d.filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().trim_end_matches(".md").to_owned())
                    .collect()
            })
            .unwrap_or_default();
        on_disk.sort();
        let mut registered: Vec<&str> = ALL.iter().map(|r| r.code).collect();
        registered.sort();
        assert_eq!(on_disk, registered, "docs/rules/*.md and the registry disagree");
        for r in ALL {
            assert!(
                r.explanation.lines().count() >= 5,
                "{} needs a real explanation",
                r.code
            );
        }
    }
}

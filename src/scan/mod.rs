//! The security scan: every file of a skill, before anything is generated (PRODUCT.md,
//! "scan"). Finds invisible or deceptive Unicode, decode-then-execute, download-and-run,
//! paste-site installers, password-protected archives, raw-IP URLs, credential reads near
//! network sends, environment dumps, escaping symbolic links, binaries where text is expected
//! and files that could not be scanned.
//!
//! Architecture invariant: pure. It takes the files exactly as `db::load` read them
//! ([`Contents`]) and returns [`Finding`]s; it never does IO and never fails. The rules are
//! data compiled into the binary (their table is [`crate::rules`], their matching
//! `scan::rules`, one file per rule); the only start-up work is one small
//! Aho-Corasick automaton of trigger words, built on first use.
//!
//! Severity is the rule's base severity, raised by evidence (a paste site, a raw IP) and
//! lowered by context (`scan::context` documents the context rules): a vendor's documented
//! installer, prose rather than a runnable code block, wording that describes an attack, a
//! security skill. Structural findings (Unicode, symlinks, binaries, limits) ignore context.

pub mod baseline;
pub(crate) mod code;
pub(crate) mod context;
pub(crate) mod lexicon;
pub(crate) mod lines;
pub(crate) mod rules;
pub(crate) mod sinks;
pub mod unicode;
pub(crate) mod url;

use serde::Serialize;

use crate::db::{Contents, Settings, SkillSource};
use crate::diag::Rule;
use crate::model::{FindingSeverity, Limits};

/// One security finding.
///
/// JSON shape (docs/json.md, "findings"): `{code, name, severity, file, line, column, reason,
/// context}`; `line`/`column` are 1-based, the column counted in characters; `context` is null
/// or the context rules that lowered the severity (`vendor-host`, `prose`, `descriptive`,
/// `security-skill`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Finding {
    /// The rule that fired.
    pub rule: &'static Rule,
    /// The effective severity after evidence and context.
    pub severity: FindingSeverity,
    /// The file as shown to the user (`skills/x/SKILL.md`), `/`-separated; the skill folder
    /// itself for folder-level findings.
    pub file: String,
    /// 1-based line (1 for findings about a whole file).
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
    /// One short sentence: what was found.
    pub reason: String,
    /// The context rules that lowered the severity, comma-separated; empty when none did.
    pub context: String,
}

impl Serialize for Finding {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut st = s.serialize_struct("Finding", 8)?;
        st.serialize_field("code", self.rule.code)?;
        st.serialize_field("name", self.rule.name)?;
        st.serialize_field("severity", &self.severity)?;
        st.serialize_field("file", &self.file)?;
        st.serialize_field("line", &self.line)?;
        st.serialize_field("column", &self.column)?;
        st.serialize_field("reason", &self.reason)?;
        st.serialize_field("context", &(!self.context.is_empty()).then_some(&self.context))?;
        st.end()
    }
}

/// The scan of one skill.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScanReport {
    /// Every finding, sorted by file, line, column and code.
    pub findings: Vec<Finding>,
}

impl ScanReport {
    /// The highest severity found, when anything was.
    pub fn highest(&self) -> Option<FindingSeverity> {
        self.findings.iter().map(|f| f.severity).max()
    }

    /// The first finding at or above `threshold` (the one that rejects the skill), the most
    /// severe first.
    pub fn blocking(&self, threshold: FindingSeverity) -> Option<&Finding> {
        self.findings.iter().filter(|f| f.severity >= threshold).max_by(|a, b| {
            a.severity
                .cmp(&b.severity)
                .then_with(|| b.file.cmp(&a.file))
                .then(b.line.cmp(&a.line))
        })
    }
}

/// Why the build rejects a skill with this scan, when a finding is at or above `fail_on`
/// (reported under `SC000`): `SC011 (high) at skills/x/SKILL.md:12:1: downloaded code is …`.
/// Invisible characters in the path and reason are written `<U+XXXX>`.
pub fn rejection(report: &ScanReport, fail_on: FindingSeverity) -> Option<String> {
    let f = report.blocking(fail_on)?;
    let more = report.findings.iter().filter(|g| g.severity >= fail_on).count() - 1;
    Some(format!(
        "security finding {} ({}) at {}:{}:{}: {}{}",
        f.rule.code,
        f.severity,
        unicode::escape_invisible(&f.file),
        f.line,
        f.column,
        unicode::escape_invisible(&f.reason),
        if more > 0 {
            format!(" (and {more} more at or above `{fail_on}`)")
        } else {
            String::new()
        }
    ))
}

/// One file of a skill as `db::load` read it.
#[derive(Clone, Copy, Debug)]
pub struct FileView<'a> {
    /// Path relative to the skill folder, `/`-separated.
    pub rel_path: &'a str,
    /// What was read.
    pub contents: &'a Contents,
}

/// What the scan knows of the skill as a whole.
#[derive(Clone, Debug, Default)]
pub struct SkillContext {
    /// The folder as shown to the user; file paths in findings are `display/rel_path`.
    pub display: String,
    /// The skill is about security (its `name` or `description` says so): attack patterns
    /// it describes are lowered one level (context rule C4).
    pub security_skill: bool,
    /// The `allowed-tools` entries as written, recorded as an `SC030` info finding.
    pub allowed_tools: Vec<String>,
    /// The configured limits (for the reasons of `SC022`).
    pub limits: Limits,
    /// The skill folder's own name: one that breaks line-based listings is `SC004` (as
    /// `skillc check` reports it, `SK045`).
    pub dir_name: String,
}

/// Words in a skill's `name` or `description` that make it a security skill (context C4).
const SECURITY_WORDS: &[&str] = &[
    "security",
    "secure code",
    "audit",
    "threat",
    "malware",
    "vulnerab",
    "pentest",
    "penetration test",
    "red team",
    "red-team",
    "prompt injection",
    "prompt-injection",
    "forensic",
    "exploit",
    "phishing",
    "intrusion",
    "attack",
];

/// Whether a skill is about security: its `name`, its `description`, or (for skills without
/// frontmatter) `intro`, the first lines of its SKILL.md body, contain a [`SECURITY_WORDS`]
/// entry.
pub fn is_security_skill(name: &str, description: &str, intro: &str) -> bool {
    let text = format!("{name} {description} {intro}").to_ascii_lowercase();
    // At the start of a word: "shared team" is not "red team".
    SECURITY_WORDS.iter().any(|w| {
        text.match_indices(w)
            .any(|(at, _)| at == 0 || !text.as_bytes()[at - 1].is_ascii_alphanumeric())
    })
}

/// The first five non-empty lines (at most 600 bytes) after the frontmatter: the title and
/// lead paragraph a skill introduces itself with.
fn intro(skill_md: &[u8]) -> String {
    let text = String::from_utf8_lossy(&skill_md[..skill_md.len().min(16 * 1024)]);
    let body = match text.strip_prefix("---") {
        Some(rest) => rest.find("\n---").map_or("", |p| &rest[p + 4..]),
        None => &text,
    };
    let mut out = String::new();
    for line in body.lines().filter(|l| !l.trim().is_empty()).take(5) {
        out.push_str(line);
        out.push(' ');
        if out.len() > 600 {
            break;
        }
    }
    out
}

/// Scans one skill's files. Pure: the caller read them.
///
/// `files` holds SKILL.md and every support file. Findings come back sorted by file, line,
/// column and code.
pub fn scan_files(ctx: &SkillContext, files: &[FileView<'_>]) -> ScanReport {
    let mut findings = Vec::new();
    let at = |rel: &str| {
        if ctx.display.is_empty() {
            rel.to_owned()
        } else {
            format!("{}/{rel}", ctx.display)
        }
    };
    if files.len() > ctx.limits.files_per_skill {
        findings.push(Finding {
            rule: &crate::rules::SC022,
            severity: FindingSeverity::High,
            file: if ctx.display.is_empty() {
                ".".into()
            } else {
                ctx.display.clone()
            },
            line: 1,
            column: 1,
            reason: format!(
                "the skill holds {} files, over the limit of {}: its support files were not scanned",
                files.len(),
                ctx.limits.files_per_skill
            ),
            context: String::new(),
        });
    }
    if crate::skill::control_character(&ctx.dir_name).is_some() {
        let folder = if ctx.display.is_empty() { "." } else { &ctx.display };
        unicode::scan_name(&ctx.dir_name, folder, &mut findings);
    }
    let mut runs: Vec<(String, rules::DataRun)> = Vec::new();
    // The skill's data and media files (not Markdown): a line running one is `SC046`.
    let data_files: Vec<String> = files
        .iter()
        .filter(|f| {
            let ext = extension(f.rel_path);
            ext != "md"
                && (rules::sc046_disguised_file::DATA_EXTENSIONS.contains(&ext.as_str())
                    || rules::sc046_disguised_file::MEDIA_EXTENSIONS.contains(&ext.as_str()))
        })
        .map(|f| f.rel_path.rsplit('/').next().unwrap_or(f.rel_path).to_owned())
        .collect();
    for f in files {
        let file = at(f.rel_path);
        unicode::scan_name(f.rel_path, &file, &mut findings);
        match f.contents {
            Contents::Bytes(bytes) => {
                let r = scan_bytes(ctx, f.rel_path, &file, bytes, &data_files, &mut findings);
                runs.extend(r.into_iter().map(|r| (file.clone(), r)));
            }
            Contents::TooLarge { size } => findings.push(whole_file(
                &crate::rules::SC022,
                FindingSeverity::High,
                &file,
                format!("{size} bytes, over the size limit: not scanned"),
            )),
            Contents::SymlinkEscape { target } => {
                findings.push(whole_file(
                    &crate::rules::SC020,
                    symlink_severity(target),
                    &file,
                    format!("symbolic link to `{target}`, outside the skill folder"),
                ));
            }
            // `db::load` cannot resolve a dangling link; one that leaves the folder is still
            // an escape (`../../secret`, `/home/u/.ssh/id_rsa` on another machine).
            Contents::Unreadable { error }
                if error
                    .strip_prefix("broken symbolic link to `")
                    .and_then(|t| t.strip_suffix('`'))
                    .is_some_and(|t| t.starts_with('/') || t.starts_with('~') || t.starts_with("..")) =>
            {
                let target = error
                    .trim_start_matches("broken symbolic link to `")
                    .trim_end_matches('`');
                findings.push(whole_file(
                    &crate::rules::SC020,
                    symlink_severity(target),
                    &file,
                    format!("dangling symbolic link to `{target}`, outside the skill folder"),
                ));
            }
            Contents::Unreadable { error } => findings.push(whole_file(
                &crate::rules::SC022,
                FindingSeverity::Medium,
                &file,
                format!("could not be read ({error}): not scanned"),
            )),
            // Only `check` leaves files unread; the count finding above covers the scan.
            Contents::Unread { .. } => {}
        }
    }
    data_files_run(ctx, files, &runs, &at, &mut findings);
    if !ctx.allowed_tools.is_empty() {
        let skill_md = files
            .iter()
            .find(|f| f.rel_path.eq_ignore_ascii_case("skill.md"))
            .map(|f| f.rel_path)
            .unwrap_or("SKILL.md");
        let line = files
            .iter()
            .find(|f| f.rel_path == skill_md)
            .and_then(|f| f.contents.bytes())
            .and_then(|b| {
                b.split(|&c| c == b'\n')
                    .position(|l| l.starts_with(b"allowed-tools") || l.starts_with(b"allowed_tools"))
            })
            .map_or(1, |i| u32::try_from(i + 1).unwrap_or(u32::MAX));
        findings.push(Finding {
            rule: &crate::rules::SC030,
            severity: FindingSeverity::Info,
            file: at(skill_md),
            line,
            column: 1,
            reason: format!("allowed-tools recorded, never granted: {}", ctx.allowed_tools.join(" ")),
            context: String::new(),
        });
    }
    findings.sort_by(|a, b| (&a.file, a.line, a.column, a.rule.code).cmp(&(&b.file, b.line, b.column, b.rule.code)));
    findings.dedup();
    ScanReport { findings }
}

/// `SC046`: a data file of the skill that a line of another file runs with an interpreter
/// (`python3 assets/config.json`).
fn data_files_run(
    ctx: &SkillContext,
    files: &[FileView<'_>],
    runs: &[(String, rules::DataRun)],
    at: &dyn Fn(&str) -> String,
    out: &mut Vec<Finding>,
) {
    for (from, run) in runs {
        let wanted = run
            .path
            .trim_start_matches("./")
            .trim_start_matches("{baseDir}/")
            .trim_start_matches("${SKILL_DIR}/")
            .trim_start_matches("$SKILL_DIR/");
        let Some(target) = files
            .iter()
            .find(|f| !wanted.is_empty() && (f.rel_path == wanted || wanted.ends_with(&format!("/{}", f.rel_path))))
        else {
            continue;
        };
        let ext = extension(target.rel_path);
        let shown = at(target.rel_path);
        // Run, and its content is code: the extension was chosen to hide it.
        let code = out.iter().any(|f| f.rule.code == "SC046" && f.file == shown);
        let mut severity = if code {
            FindingSeverity::Critical
        } else {
            FindingSeverity::High
        };
        if ctx.security_skill {
            severity = severity.lowered(1);
        }
        out.push(Finding {
            rule: &crate::rules::SC046,
            severity,
            file: shown,
            line: 1,
            column: 1,
            reason: format!(
                "a `.{ext}` file that {from}:{} runs as {}: its extension says it is data",
                run.line, run.lang
            ),
            context: if ctx.security_skill {
                "security-skill".into()
            } else {
                String::new()
            },
        });
    }
}

fn whole_file(rule: &'static Rule, severity: FindingSeverity, file: &str, reason: String) -> Finding {
    Finding {
        rule,
        severity,
        file: file.to_owned(),
        line: 1,
        column: 1,
        reason,
        context: String::new(),
    }
}

/// A link to system files, a home folder or secrets is critical; any other escape is high.
fn symlink_severity(target: &str) -> FindingSeverity {
    const SENSITIVE: &[&str] = &[
        ".ssh",
        ".aws",
        ".gnupg",
        ".kube",
        ".docker",
        ".netrc",
        ".env",
        "id_rsa",
        "id_ed25519",
        "passwd",
        "shadow",
        "keychain",
        "credentials",
    ];
    const SYSTEM: &[&str] = &[
        "/etc", "/root", "/home", "/users", "/var", "/proc", "/sys", "/dev", "/private", "~",
    ];
    let t = target.to_ascii_lowercase();
    if SYSTEM.iter().any(|p| t.starts_with(p)) || SENSITIVE.iter().any(|s| t.contains(s)) {
        FindingSeverity::Critical
    } else {
        FindingSeverity::High
    }
}

/// Extensions of files that must be text: binary content there is disguised.
const TEXT_EXTENSIONS: &[&str] = &[
    "md", "markdown", "txt", "py", "sh", "bash", "zsh", "fish", "ps1", "bat", "cmd", "js", "mjs", "cjs", "ts", "tsx",
    "jsx", "json", "jsonl", "yaml", "yml", "toml", "ini", "cfg", "conf", "xml", "html", "htm", "css", "csv", "tsv",
    "rb", "pl", "php", "go", "rs", "java", "kt", "swift", "c", "h", "cpp", "hpp", "cs", "lua", "r", "sql", "tex",
    "rst", "prose", "xsd", "svg", "env", "",
];

/// Archive formats a scanner cannot look into; office documents are zips too and are fine.
const ZIP_DOCUMENTS: &[&str] = &[
    "docx", "xlsx", "pptx", "odt", "ods", "odp", "epub", "whl", "jar", "apk", "xpi", "vsix", "nupkg",
];

fn extension(rel: &str) -> String {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext.to_ascii_lowercase(),
        _ => String::new(),
    }
}

/// Scans one file's bytes; the data files its text runs with an interpreter (for `SC046`).
fn scan_bytes(
    ctx: &SkillContext,
    rel: &str,
    file: &str,
    bytes: &[u8],
    data_files: &[String],
    out: &mut Vec<Finding>,
) -> Vec<rules::DataRun> {
    let ext = extension(rel);
    if let Some(kind) = executable_kind(bytes) {
        out.push(whole_file(
            &crate::rules::SC021,
            FindingSeverity::High,
            file,
            format!("{kind} executable in a skill: skills ship source, not binaries"),
        ));
        return Vec::new();
    }
    let head = &bytes[..bytes.len().min(8192)];
    let text = std::str::from_utf8(bytes).ok();
    let mut disguised = None;
    if let Some((severity, reason, lang)) = rules::sc046_disguised_file::check(&ext, bytes, text) {
        out.push(whole_file(&crate::rules::SC046, severity, file, reason));
        disguised = lang;
    }
    if text.is_none() || head.contains(&0) {
        let archive = archive_kind(bytes);
        let (severity, reason) = match archive {
            Some(kind) if !ZIP_DOCUMENTS.contains(&ext.as_str()) => (
                FindingSeverity::Medium,
                format!("{kind} archive: its contents cannot be scanned"),
            ),
            _ if TEXT_EXTENSIONS.contains(&ext.as_str()) || rel.starts_with("scripts/") => (
                FindingSeverity::High,
                if ext.is_empty() {
                    "binary content in a file without extension, where a script or text is expected".to_owned()
                } else {
                    format!("binary content in a `.{ext}` file, where text is expected")
                },
            ),
            _ => (FindingSeverity::Info, "binary file: not scanned".to_owned()),
        };
        out.push(whole_file(&crate::rules::SC021, severity, file, reason));
        return Vec::new();
    }
    let Some(text) = text else { return Vec::new() };
    // A security skill that shows a bidi override or an escape sequence is describing it
    // (context C4, one level lower); payloads stay at least high.
    let before = out.len();
    unicode::scan_text(text, file, out);
    if ctx.security_skill {
        for f in &mut out[before..] {
            f.severity = f.severity.lowered(1);
            f.context = "security-skill".to_owned();
        }
    }
    // Scripts are parsed and their data flow analysed; the text rules run on every file.
    let code = match disguised {
        Some(lang) => code::file_hits(lang, text),
        None => code::code_hits(&ext, text),
    };
    let from = out.len();
    let runs = rules::scan_text_with(ctx, rel, &ext, text, file, out, code.is_some(), data_files);
    if let Some(hits) = code {
        code::push_findings(ctx, text, file, hits, out, from);
    }
    runs
}

/// Executable formats, by magic number.
fn executable_kind(b: &[u8]) -> Option<&'static str> {
    if b.starts_with(b"\x7fELF") {
        return Some("an ELF");
    }
    if b.starts_with(b"MZ") && b.len() > 0x40 && b[..0x40].contains(&0) {
        return Some("a Windows (PE)");
    }
    for m in [
        b"\xfe\xed\xfa\xce",
        b"\xfe\xed\xfa\xcf",
        b"\xce\xfa\xed\xfe",
        b"\xcf\xfa\xed\xfe",
    ] {
        if b.starts_with(m) {
            return Some("a Mach-O");
        }
    }
    if b.starts_with(b"\xca\xfe\xba\xbe") {
        return Some("a Mach-O universal or Java class");
    }
    if b.starts_with(b"\0asm") {
        return Some("a WebAssembly");
    }
    None
}

fn archive_kind(b: &[u8]) -> Option<&'static str> {
    if b.starts_with(b"PK\x03\x04") {
        Some("a zip")
    } else if b.starts_with(b"7z\xbc\xaf\x27\x1c") {
        Some("a 7z")
    } else if b.starts_with(b"Rar!") {
        Some("a rar")
    } else if b.starts_with(b"\x1f\x8b") {
        Some("a gzip")
    } else {
        None
    }
}

/// Scans one skill as loaded in the database (the build's and `skillc scan`'s entry point).
///
/// The skill's `allowed-tools` and whether it is a security skill come from
/// [`crate::skill::analyze_skill`].
#[salsa::tracked(returns(ref))]
pub fn scan_skill(db: &dyn salsa::Database, skill: SkillSource, settings: Settings) -> ScanReport {
    let analysis = crate::skill::analyze_skill(db, skill, settings);
    let model = &analysis.model;
    let name = model.name.as_ref().map(|t| t.value.as_str()).unwrap_or_default();
    let description = model.description.as_ref().map(|t| t.value.as_str()).unwrap_or_default();
    let ctx = SkillContext {
        display: skill.display(db).clone(),
        security_skill: is_security_skill(
            name,
            description,
            &skill
                .skill_md(db)
                .and_then(|f| f.contents(db).bytes())
                .map(intro)
                .unwrap_or_default(),
        ),
        allowed_tools: model
            .allowed_tools
            .iter()
            .map(ToString::to_string)
            .chain(model.allowed_tools_malformed.iter().map(|e| format!("{e} [malformed]")))
            .collect(),
        limits: settings.limits(db),
        dir_name: skill.dir_name(db).clone(),
    };
    let mut views: Vec<FileView<'_>> = Vec::new();
    if let Some(f) = skill.skill_md(db) {
        views.push(FileView {
            rel_path: f.rel_path(db),
            contents: f.contents(db),
        });
    }
    for f in skill.files(db) {
        views.push(FileView {
            rel_path: f.rel_path(db),
            contents: f.contents(db),
        });
    }
    scan_files(&ctx, &views)
}

//! `skillc read-properties` and `skillc to-prompt`: what the parser read, in the reference
//! validator's shapes.

// `& < > " '` escaped as Python's `html.escape(quote=True)` does: the menu's XML escape,
// one for every XML block skillc writes.
use crate::menu::format::xml_escape as escape;
use std::path::{Path, PathBuf};

use super::{Printer, Status};
use crate::db::{Contents, load};
use crate::diag::Rule;
use crate::diag::{self, Diagnostic, Pos, RenderOptions, Severity, Span};
use crate::model::Limits;
use crate::model::Mode;
use crate::rules;
use crate::skill::validate::{self, Analysis, Context};
use crate::skill::yaml::Node;

/// A skill folder and its SKILL.md, resolved from a user path.
struct Target {
    dir: PathBuf,
    skill_md: PathBuf,
    display: String,
}

/// A problem with the input itself (exit 1, like `check`), as opposed to a failure to run.
fn input_problem(rule: &'static Rule, file: &str, message: String) -> Diagnostic {
    Diagnostic::new(rule, file, Span::at(Pos::START), message)
}

/// Resolves a user path. A path that does not exist is an error (exit 2); a path that is not a
/// skill is a problem of the input, returned as its diagnostic (exit 1).
fn resolve(path: &Path) -> anyhow::Result<Result<Target, Diagnostic>> {
    anyhow::ensure!(path.exists(), "{}: no such file or directory", path.display());
    let is_md = path.is_file()
        && path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().eq_ignore_ascii_case("skill.md"));
    let dir = if is_md {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        path.to_path_buf()
    };
    let dir = if dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        dir
    };
    if !dir.is_dir() {
        let shown = path.display().to_string();
        return Ok(Err(input_problem(
            &rules::SK016,
            &shown,
            "not a skill: a file that is not SKILL.md".to_owned(),
        )));
    }
    // `symlink_metadata`: a SKILL.md that is a (possibly dangling) link is still the skill file.
    let Some(skill_md) = ["SKILL.md", "skill.md"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| std::fs::symlink_metadata(p).is_ok_and(|m| !m.is_dir()))
    else {
        let shown = dir.display().to_string();
        return Ok(Err(input_problem(&rules::SK001, &shown, "missing SKILL.md".to_owned())));
    };
    let display = skill_md.to_string_lossy().into_owned();
    Ok(Ok(Target { dir, skill_md, display }))
}

fn analyze(t: &Target) -> anyhow::Result<Result<(Analysis, Option<String>), Diagnostic>> {
    let limit = Limits::default().skill_md_bytes;
    let contents = load::read_file(&t.skill_md, &t.dir, limit, true);
    let bytes = match contents {
        Contents::Bytes(b) => b,
        Contents::TooLarge { size } => {
            return Ok(Err(input_problem(
                &rules::SK040,
                &t.display,
                format!(
                    "SKILL.md is {}; the limit is {}",
                    crate::skill::human_size(size),
                    crate::skill::human_size(limit)
                ),
            )));
        }
        Contents::SymlinkEscape { target } => {
            return Ok(Err(input_problem(
                &rules::SK043,
                &t.display,
                format!("symbolic link to `{target}`, outside the skill folder"),
            )));
        }
        Contents::Unreadable { error } => anyhow::bail!("{}: {error}", t.display),
        Contents::Unread { .. } => anyhow::bail!("{}: not read", t.display),
    };
    let abs = t.dir.canonicalize().unwrap_or_else(|_| t.dir.clone());
    let dir_name = abs
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let analysis = validate::analyze(
        &t.display,
        &bytes,
        &Context {
            dir_name: &dir_name,
            mode: Mode::Default,
        },
    );
    // Snippets need the exact text: a file that is not UTF-8 is reported without one.
    Ok(Ok((analysis, std::str::from_utf8(&bytes).ok().map(str::to_owned))))
}

/// The properties object, in the reference's key order. Scalars are strings, as read.
fn properties(root: &Node) -> Option<Properties> {
    let name = root.get_value("name")?.as_str()?.trim();
    let description = root.get_value("description")?.as_str()?.trim();
    if name.is_empty() || description.is_empty() {
        return None;
    }
    let mut m = serde_json::Map::new();
    m.insert("name".into(), name.into());
    m.insert("description".into(), description.into());
    for key in ["license", "compatibility", "allowed-tools"] {
        if let Some(v) = root.get_value(key) {
            m.insert(key.into(), v.to_json_strings());
        }
    }
    if let Some(v) = root.get_value("metadata") {
        let json = v.to_json_strings();
        let empty = json.as_object().is_some_and(|o| o.is_empty()) || json.as_array().is_some_and(|a| a.is_empty());
        if !empty {
            m.insert("metadata".into(), json);
        }
    }
    Some(m)
}

type Properties = serde_json::Map<String, serde_json::Value>;

/// Reads the properties of one skill, or reports why they cannot be read (exit 1).
///
/// Validation errors (a bad `name`, a long `description`) do not stop it, as in the reference;
/// a frontmatter that was not read unambiguously does (invalid YAML, a duplicate key, an
/// alias: printing one reading of it would hide the problem).
fn read(path: &Path, color: bool) -> anyhow::Result<Result<(Target, Properties), Status>> {
    let options = RenderOptions { color };
    let t = match resolve(path)? {
        Ok(t) => t,
        Err(d) => {
            super::output::eprint_line(format_args!("{}\n", diag::render_human(&d, None, options)));
            return Ok(Err(Status::Failure));
        }
    };
    let (analysis, text) = match analyze(&t)? {
        Ok(x) => x,
        Err(d) => {
            super::output::eprint_line(format_args!("{}\n", diag::render_human(&d, None, options)));
            return Ok(Err(Status::Failure));
        }
    };
    if analysis.read_errors().next().is_none()
        && let Some(props) = analysis.frontmatter.as_ref().and_then(properties)
    {
        return Ok(Ok((t, props)));
    }
    let fatal: Vec<_> = analysis
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    let source = text.as_deref().map(diag::SourceText::new);
    for d in &fatal {
        super::output::eprint_line(format_args!("{}\n", diag::render_human(d, source.as_ref(), options)));
    }
    if fatal.is_empty() {
        super::output::eprint_line(format_args!(
            "error: {}: `name` and `description` must be non-empty strings",
            t.display
        ));
    }
    Ok(Err(Status::Failure))
}

pub(crate) fn read_properties(path: &Path, out: &mut Printer) -> anyhow::Result<Status> {
    match read(path, out.color)? {
        Ok((_, props)) => {
            out.line(&serde_json::to_string_pretty(&props)?)?;
            out.flush()?;
            Ok(Status::Success)
        }
        Err(status) => Ok(status),
    }
}

pub(crate) fn to_prompt(paths: &[PathBuf], out: &mut Printer) -> anyhow::Result<Status> {
    let mut lines = vec!["<available_skills>".to_owned()];
    for path in paths {
        let (t, props) = match read(path, out.color)? {
            Ok(x) => x,
            Err(status) => return Ok(status),
        };
        let location = t.skill_md.canonicalize().unwrap_or(t.skill_md);
        let get = |k: &str| props.get(k).and_then(|v| v.as_str()).unwrap_or_default().to_owned();
        lines.extend([
            "<skill>".into(),
            "<name>".into(),
            escape(&get("name")),
            "</name>".into(),
            "<description>".into(),
            escape(&get("description")),
            "</description>".into(),
            "<location>".into(),
            location.to_string_lossy().into_owned(),
            "</location>".into(),
            "</skill>".into(),
        ]);
    }
    lines.push("</available_skills>".into());
    out.line(&lines.join("\n"))?;
    out.flush()?;
    Ok(Status::Success)
}

//! Source specifications of `skillc import`: what a SOURCE argument names, decided from its
//! text alone (pure; the IO layer then looks at the disk or the network).
//!
//! The forms (issue 7; seed 000, "Supported sources"):
//!
//! | SOURCE | kind |
//! | --- | --- |
//! | `agentskills.io/<author>/<skill>` (optionally `https://`) | [`Spec::AgentSkills`] |
//! | `https://github.com/<owner>/<repo>/tree/<ref>/<path>` | [`Spec::Git`] with ref and path |
//! | `https://github.com/<owner>/<repo>/blob/<ref>/<path>/SKILL.md` | [`Spec::Git`], the file's folder |
//! | `<git url>#<ref>:<path>`, `<git url>#<ref>`, `<git url>#:<path>` | [`Spec::Git`] |
//! | `http(s)://…/<file>.md` | [`Spec::Raw`] (one SKILL.md) |
//! | `http(s)://…/<file>.zip` | [`Spec::RemoteZip`] |
//! | any other `http(s)://`, `file://`, `ssh://`, `git://` URL, `user@host:path` | [`Spec::Git`] |
//! | anything else | [`Spec::Local`]: a folder, a SKILL.md or a `.zip` |

use std::path::PathBuf;

/// What a SOURCE argument names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Spec {
    /// A path on this machine: a skill folder, a lone SKILL.md, or a zip file.
    Local(PathBuf),
    /// A git repository: the URL given to `git`, the ref to check out (`None`: the remote's
    /// `HEAD`), and the skill's folder inside the repository (`""`: the root).
    Git {
        /// Any URL `git fetch` accepts.
        url: String,
        /// A branch, tag or commit.
        reference: Option<String>,
        /// `/`-separated folder inside the repository, without leading or trailing `/`.
        path: String,
    },
    /// The raw `http(s)` URL of one SKILL.md.
    Raw(String),
    /// The `http(s)` URL of a zip archive.
    RemoteZip(String),
    /// An `agentskills.io/<author>/<skill>` address.
    AgentSkills {
        /// The author (a GitHub user or organisation).
        author: String,
        /// The skill (a repository of that author).
        skill: String,
    },
}

/// Why a SOURCE argument cannot be understood.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// The argument is empty.
    #[error("the source is empty")]
    Empty,
    /// An `agentskills.io` address without exactly an author and a skill.
    #[error("`{0}` is not an agentskills.io address: write `agentskills.io/<author>/<skill>`")]
    AgentSkills(String),
    /// A path segment that is `..` or empty in a sub-path.
    #[error("the path `{0}` inside the repository must be relative and must not contain `..`")]
    BadSubPath(String),
}

const AGENTSKILLS_HOST: &str = "agentskills.io/";

/// Parses a SOURCE argument.
///
/// # Errors
/// [`SpecError`] when the text cannot name a source (empty, a malformed agentskills.io
/// address, a repository sub-path escaping the repository).
pub fn parse(source: &str) -> Result<Spec, SpecError> {
    let s = source.trim();
    if s.is_empty() {
        return Err(SpecError::Empty);
    }
    let bare = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"))
        .unwrap_or(s);
    let bare = bare.strip_prefix("www.").unwrap_or(bare);
    if let Some(rest) = bare.strip_prefix(AGENTSKILLS_HOST) {
        let parts: Vec<&str> = rest.trim_end_matches('/').split('/').collect();
        return match parts.as_slice() {
            [author, skill] if is_plain_segment(author) && is_plain_segment(skill) => Ok(Spec::AgentSkills {
                author: (*author).to_owned(),
                skill: (*skill).to_owned(),
            }),
            _ => Err(SpecError::AgentSkills(s.to_owned())),
        };
    }
    if !is_url(s) {
        return Ok(Spec::Local(PathBuf::from(s)));
    }
    // `URL#ref:path`.
    if let Some((url, fragment)) = s.split_once('#') {
        let (reference, path) = match fragment.split_once(':') {
            Some((r, p)) => (r, p),
            None => (fragment, ""),
        };
        return Ok(Spec::Git {
            url: url.to_owned(),
            reference: (!reference.is_empty()).then(|| reference.to_owned()),
            path: sub_path(path)?,
        });
    }
    let lower = s.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        // GitHub's browser form: https://github.com/<owner>/<repo>/tree/<ref>/<path…>.
        if let Some(rest) = bare.strip_prefix("github.com/") {
            let parts: Vec<&str> = rest.split('/').collect();
            // …/blob/<ref>/<path>/SKILL.md is the page of a file: its folder is the skill.
            if parts.len() >= 5
                && parts[2] == "blob"
                && !parts[3].is_empty()
                && parts[parts.len() - 1].eq_ignore_ascii_case("skill.md")
            {
                let scheme = if lower.starts_with("http://") { "http" } else { "https" };
                return Ok(Spec::Git {
                    url: format!("{scheme}://github.com/{}/{}", parts[0], parts[1]),
                    reference: Some(parts[3].to_owned()),
                    path: sub_path(&parts[4..parts.len() - 1].join("/"))?,
                });
            }
            if parts.len() >= 4 && parts[2] == "tree" && !parts[3].is_empty() {
                let scheme = if lower.starts_with("http://") { "http" } else { "https" };
                return Ok(Spec::Git {
                    url: format!("{scheme}://github.com/{}/{}", parts[0], parts[1]),
                    reference: Some(parts[3].to_owned()),
                    path: sub_path(&parts[4..].join("/"))?,
                });
            }
        }
        let path_part = lower.split(['?', '#']).next().unwrap_or_default();
        if path_part.ends_with(".md") {
            return Ok(Spec::Raw(s.to_owned()));
        }
        if path_part.ends_with(".zip") {
            return Ok(Spec::RemoteZip(s.to_owned()));
        }
    }
    Ok(Spec::Git {
        url: s.to_owned(),
        reference: None,
        path: String::new(),
    })
}

/// The git repository an `agentskills.io/<author>/<skill>` address resolves to: the
/// repository root that holds that skill's SKILL.md.
///
/// The rule (documented in README.md, "Importing skills"): agentskills.io lists skills
/// published as GitHub repositories whose root is the skill folder, so the address maps to
/// `<base>/<author>/<skill>`, where `base` is `https://github.com` unless the
/// `SKILLC_AGENTSKILLS_BASE` environment variable names another (a mirror, or a local folder
/// of repositories as `file:///…` for offline use and tests). The skill is the repository's
/// root folder at its default branch.
pub fn agentskills_repository(base: &str, author: &str, skill: &str) -> Spec {
    Spec::Git {
        url: format!("{}/{author}/{skill}", base.trim_end_matches('/')),
        reference: None,
        path: String::new(),
    }
}

/// The default base of [`agentskills_repository`].
pub const AGENTSKILLS_DEFAULT_BASE: &str = "https://github.com";

fn is_plain_segment(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn is_url(s: &str) -> bool {
    if let Some((scheme, _)) = s.split_once("://") {
        return !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    }
    // scp-like git syntax: `user@host:path` (a colon before any slash, and an `@`).
    match (s.find(':'), s.find('/'), s.find('@')) {
        (Some(colon), slash, Some(at)) => at < colon && slash.is_none_or(|sl| colon < sl),
        _ => false,
    }
}

fn sub_path(p: &str) -> Result<String, SpecError> {
    let trimmed = p.trim_matches('/');
    if trimmed.is_empty() {
        return Ok(String::new());
    }
    if trimmed
        .split('/')
        .any(|seg| seg.is_empty() || seg == ".." || seg == ".")
        || p.contains('\\')
    {
        return Err(SpecError::BadSubPath(p.to_owned()));
    }
    Ok(trimmed.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(url: &str, r: Option<&str>, path: &str) -> Spec {
        Spec::Git {
            url: url.into(),
            reference: r.map(Into::into),
            path: path.into(),
        }
    }

    #[test]
    fn local_paths() {
        assert_eq!(parse("skills/x").unwrap(), Spec::Local("skills/x".into()));
        assert_eq!(parse("./a/SKILL.md").unwrap(), Spec::Local("./a/SKILL.md".into()));
        assert_eq!(parse("/tmp/x.zip").unwrap(), Spec::Local("/tmp/x.zip".into()));
        assert_eq!(parse("C:/x").unwrap(), Spec::Local("C:/x".into()));
        assert_eq!(parse("  "), Err(SpecError::Empty));
    }

    #[test]
    fn git_forms() {
        assert_eq!(parse("file:///tmp/repo").unwrap(), git("file:///tmp/repo", None, ""));
        assert_eq!(
            parse("file:///tmp/repo#main:skills/pdf").unwrap(),
            git("file:///tmp/repo", Some("main"), "skills/pdf")
        );
        assert_eq!(
            parse("file:///tmp/repo#v1").unwrap(),
            git("file:///tmp/repo", Some("v1"), "")
        );
        assert_eq!(parse("file:///r#:a/b/").unwrap(), git("file:///r", None, "a/b"));
        assert_eq!(
            parse("https://github.com/o/r/tree/main/skills/pdf").unwrap(),
            git("https://github.com/o/r", Some("main"), "skills/pdf")
        );
        assert_eq!(
            parse("https://github.com/o/r/tree/v2").unwrap(),
            git("https://github.com/o/r", Some("v2"), "")
        );
        assert_eq!(
            parse("https://github.com/o/r.git").unwrap(),
            git("https://github.com/o/r.git", None, "")
        );
        assert_eq!(
            parse("git@github.com:o/r.git").unwrap(),
            git("git@github.com:o/r.git", None, "")
        );
        assert_eq!(parse("file:///r#main:../x"), Err(SpecError::BadSubPath("../x".into())));
    }

    #[test]
    fn raw_and_zip_urls() {
        assert_eq!(
            parse("http://127.0.0.1:8080/a/SKILL.md").unwrap(),
            Spec::Raw("http://127.0.0.1:8080/a/SKILL.md".into())
        );
        assert_eq!(
            parse("https://x.org/s.ZIP?dl=1").unwrap(),
            Spec::RemoteZip("https://x.org/s.ZIP?dl=1".into())
        );
    }

    #[test]
    fn agentskills_addresses() {
        let want = Spec::AgentSkills {
            author: "anthropics".into(),
            skill: "pdf".into(),
        };
        assert_eq!(parse("agentskills.io/anthropics/pdf").unwrap(), want);
        assert_eq!(parse("https://agentskills.io/anthropics/pdf/").unwrap(), want);
        assert!(parse("agentskills.io/anthropics").is_err());
        assert!(parse("agentskills.io/a/../b").is_err());
        assert_eq!(
            agentskills_repository("https://github.com/", "anthropics", "pdf"),
            git("https://github.com/anthropics/pdf", None, "")
        );
    }
}

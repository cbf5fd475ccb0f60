//! Suppressions of `skillc check`: `[check] ignore = ["SK035"]` for the whole project and
//! `[[check.overrides]]` tables (`paths = ["skills/legacy/**"]`, `ignore = [...]`) for parts
//! of it, in `pipeline.toml` (README, "Configuration").
//!
//! A suppressed diagnostic is not reported, does not count for the exit status, and is not
//! fixed by `check --fix`. Paths are globs relative to the project root, `/`-separated: `*`
//! and `?` match within one path segment, `**` matches any number of segments; a pattern
//! matches a file when it matches the file or one of the folders holding it (so
//! `skills/legacy` and `skills/legacy/**` both cover every file below `skills/legacy/`).
//! Pure: the caller resolves the display paths against the project root.

use std::path::{Component, Path, PathBuf};

/// The `[check]` table of `pipeline.toml`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckConfig {
    /// Codes suppressed everywhere (`SK035`), upper case.
    pub ignore: Vec<String>,
    /// Codes suppressed under some paths, in the order written.
    pub overrides: Vec<Override>,
}

/// One `[[check.overrides]]` table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Override {
    /// Glob patterns relative to the project root.
    pub paths: Vec<String>,
    /// Codes suppressed for files the patterns match.
    pub ignore: Vec<String>,
}

impl CheckConfig {
    /// A matcher for display paths shown relative to `base` (absolute), in a project rooted at
    /// `root` (absolute).
    pub fn matcher<'a>(&'a self, root: &Path, base: &Path) -> Matcher<'a> {
        Matcher {
            config: self,
            root: normalize(root),
            base: normalize(base),
        }
    }
}

/// Answers "is this code suppressed for this file?".
#[derive(Clone, Debug)]
pub struct Matcher<'a> {
    config: &'a CheckConfig,
    root: PathBuf,
    base: PathBuf,
}

impl Matcher<'_> {
    /// Whether `code` is suppressed for the file (or folder) shown as `display`.
    pub fn ignores(&self, display: &str, code: &str) -> bool {
        if self.config.ignore.iter().any(|c| c.eq_ignore_ascii_case(code)) {
            return true;
        }
        let relevant: Vec<&Override> = self
            .config
            .overrides
            .iter()
            .filter(|o| o.ignore.iter().any(|c| c.eq_ignore_ascii_case(code)))
            .collect();
        if relevant.is_empty() {
            return false;
        }
        let Some(rel) = self.project_relative(display) else {
            return false;
        };
        relevant.iter().any(|o| o.paths.iter().any(|p| matches_path(p, &rel)))
    }

    fn project_relative(&self, display: &str) -> Option<String> {
        project_relative(&self.root, &self.base, display)
    }
}

/// `display`, shown relative to `base` (absolute), relative to the project `root` (absolute),
/// `/`-separated; `None` outside the project.
pub fn project_relative(root: &Path, base: &Path, display: &str) -> Option<String> {
    let abs = normalize(&base.join(display));
    let rel = abs.strip_prefix(normalize(root)).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Some(parts.join("/"))
}

/// `path` with `.` and `..` resolved lexically (symbolic links are not followed).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Whether the glob `pattern` matches `path` or one of its ancestor folders.
pub fn matches_path(pattern: &str, path: &str) -> bool {
    let pat: Vec<&str> = pattern
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    (1..=segs.len()).any(|n| match_segments(&pat, &segs[..n])) || (pat.is_empty() && segs.is_empty())
}

fn match_segments(pat: &[&str], segs: &[&str]) -> bool {
    match pat.split_first() {
        None => segs.is_empty(),
        Some((&"**", rest)) => (0..=segs.len()).any(|i| match_segments(rest, &segs[i..])),
        Some((p, rest)) => segs
            .split_first()
            .is_some_and(|(s, more)| match_segment(p, s) && match_segments(rest, more)),
    }
}

/// `*` (any run of characters) and `?` (one character) within one segment.
fn match_segment(pattern: &str, s: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = s.chars().collect();
    // Classic two-pointer wildcard match with backtracking to the last `*`.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < t.len() {
        if i < p.len() && (p[i] == '?' || p[i] == t[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_files_and_their_folders() {
        assert!(matches_path("skills/legacy/**", "skills/legacy/old/SKILL.md"));
        assert!(matches_path("skills/legacy", "skills/legacy/old/SKILL.md"));
        assert!(!matches_path("skills/legacy", "skills/legacy-2/SKILL.md"));
        assert!(matches_path("skills/*/SKILL.md", "skills/a/SKILL.md"));
        assert!(!matches_path("skills/*/SKILL.md", "skills/a/b/SKILL.md"));
        assert!(matches_path("**/vendor-?", "x/y/vendor-1/SKILL.md"));
        assert!(matches_path("skills/*-tools", "skills/pdf-tools/SKILL.md"));
        assert!(!matches_path("skills/*-tools", "skills/tools/SKILL.md"));
    }

    #[test]
    fn overrides_apply_under_their_paths_only() {
        let cfg = CheckConfig {
            ignore: vec!["SK035".into()],
            overrides: vec![Override {
                paths: vec!["skills/legacy/**".into()],
                ignore: vec!["SK027".into()],
            }],
        };
        let root = Path::new("/p");
        // Shown relative to the root…
        let m = cfg.matcher(root, root);
        assert!(m.ignores("skills/x/SKILL.md", "SK035"));
        assert!(m.ignores("skills/legacy/a/SKILL.md", "SK027"));
        assert!(!m.ignores("skills/new/SKILL.md", "SK027"));
        // …or to a folder below it (`skillc check` run in `skills/`).
        let m = cfg.matcher(root, Path::new("/p/skills"));
        assert!(m.ignores("legacy/a/SKILL.md", "SK027"));
        assert!(m.ignores("./legacy/../legacy/a", "SK027"));
        assert!(!m.ignores("../other/legacy/a", "SK027"));
    }
}

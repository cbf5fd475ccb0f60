//! The project: `pipeline.toml` at the root, the vocabulary it names, and the rendering of
//! their diagnostics. Shared by `plan` and `build`.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use super::Printer;
use crate::config::{self, Config};
use crate::diag::{self, Diagnostic, RenderOptions, Severity};
use crate::vocab;

/// A loaded project configuration.
pub(crate) struct Project {
    /// The folder holding `pipeline.toml` (the current folder).
    pub root: PathBuf,
    /// The configuration (defaults when there is no `pipeline.toml`).
    pub config: Config,
    /// Its `[curator]` section.
    pub curator: crate::curate::config::CuratorConfig,
    /// Its `[menu]` and `[agents.<id>]` sections.
    pub menu: crate::menu::settings::MenuSettings,
}

/// Prints diagnostics about a text file to standard error, with snippets.
pub(crate) fn print_file_diagnostics(out: &mut Printer, diags: &[Diagnostic], text: &str) {
    let source = diag::SourceText::new(text);
    for d in diags {
        out.note(&diag::render_human(
            d,
            Some(&source),
            RenderOptions { color: out.color },
        ));
    }
}

impl Project {
    /// What `plan` reads, as (base folder, paths relative to it): the paths given
    /// (relative to the current folder); else the configured roots when there is a
    /// `pipeline.toml`; else `skills/` when it exists; else the current folder.
    pub(crate) fn inputs(&self, given: &[PathBuf]) -> (PathBuf, Vec<PathBuf>) {
        if !given.is_empty() {
            (PathBuf::new(), given.to_vec())
        } else if self.root.join(config::FILE_NAME).is_file() {
            (self.root.clone(), self.config.skills.clone())
        } else {
            (PathBuf::new(), default_paths(given))
        }
    }
}

/// The paths given, else `skills/` when it exists, else the current folder.
pub(crate) fn default_paths(given: &[PathBuf]) -> Vec<PathBuf> {
    if !given.is_empty() {
        given.to_vec()
    } else if Path::new("skills").is_dir() {
        vec![PathBuf::from("skills")]
    } else {
        vec![PathBuf::from(".")]
    }
}

/// The project root: the nearest folder from `start` upwards holding `pipeline.toml` (as cargo
/// finds `Cargo.toml`), else `start` itself.
pub(crate) fn find_root(start: &Path) -> PathBuf {
    start
        .ancestors()
        .find(|d| d.join(config::FILE_NAME).is_file())
        .unwrap_or(start)
        .to_path_buf()
}

/// Loads the project around `cwd`: its `pipeline.toml` when there is one. Errors in it stop
/// the command.
pub(crate) fn load(cwd: &Path, out: &mut Printer) -> anyhow::Result<Project> {
    let root = &find_root(cwd);
    let path = root.join(config::FILE_NAME);
    let (config, curator, menu) = if path.is_file() {
        let text = read_input(&path, config::FILE_NAME, &crate::rules::CF001, out)?.unwrap_or_default();
        let (config, mut diags) = config::parse(config::FILE_NAME, &text);
        let (curator, more) = crate::curate::config::parse(config::FILE_NAME, &text);
        diags.extend(more);
        let (menu, more) = crate::menu::settings::parse(config::FILE_NAME, &text);
        diags.extend(more);
        print_file_diagnostics(out, &diags, &text);
        if diags.iter().any(|d| d.severity == Severity::Error) {
            anyhow::bail!("{} is invalid (see above)", config::FILE_NAME);
        }
        (config, curator, menu)
    } else {
        (Config::default(), Default::default(), Default::default())
    };
    Ok(Project {
        root: root.to_path_buf(),
        config,
        curator,
        menu,
    })
}

/// Reads a text input of the project (`pipeline.toml`, the vocabulary, `translations.toml`),
/// shown as `shown`; `None` when it does not exist. A file that is not UTF-8 prints `rule`'s
/// diagnostic at the first invalid byte and fails the command (exit status 2, as for any
/// invalid input of the project).
pub(crate) fn read_input(
    path: &Path,
    shown: &str,
    rule: &'static crate::diag::Rule,
    out: &mut Printer,
) -> anyhow::Result<Option<String>> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let what = Path::new(shown)
        .file_name()
        .map_or(shown.into(), |n| n.to_string_lossy());
    match diag::decode_utf8(&bytes, shown, &what, rule) {
        Ok(_) => Ok(String::from_utf8(bytes).ok()),
        Err(d) => {
            print_file_diagnostics(out, std::slice::from_ref(&*d), diag::valid_utf8_prefix(&bytes));
            anyhow::bail!("{shown} is invalid (see above)")
        }
    }
}

/// Most bytes of a project file read by [`read_text_at`] (the scan baseline and the menu
/// calibration are a few KB; a baseline of every finding of a large monorepo stays far below).
pub(crate) const MAX_PROJECT_TEXT: u64 = 64 << 20;

/// The text of a project file that has no diagnostic code of its own (the scan baseline,
/// `menu-calibration.toml`); `None` when it is missing. Invalid UTF-8 is an error at the
/// `file:line:column` of the first bad byte, with what to do (`fix`).
///
/// Only a regular file of at most [`MAX_PROJECT_TEXT`] bytes is read
/// ([`crate::catalog::read::read_bounded`]): a FIFO would block the command, a huge file fill
/// the memory, and a broken symbolic link is refused rather than
/// taken as absent (a command that records into the file would replace it).
pub(crate) fn read_text_at(path: &Path, fix: &str) -> anyhow::Result<Option<String>> {
    use crate::catalog::read::{Unread, read_bounded};
    let bytes = match read_bounded(path, MAX_PROJECT_TEXT) {
        Ok(b) => b,
        Err(Unread::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            if std::fs::symlink_metadata(path).is_ok() {
                anyhow::bail!("{} is a broken symbolic link; {fix}", path.display());
            }
            return Ok(None);
        }
        Err(Unread::Io(e)) => return Err(e).with_context(|| format!("reading {}", path.display())),
        Err(Unread::Folder | Unread::Special | Unread::TooLarge) => anyhow::bail!(
            "{} is not a regular file of at most {} MiB; {fix}",
            path.display(),
            MAX_PROJECT_TEXT >> 20
        ),
    };
    match String::from_utf8(bytes) {
        Ok(text) => Ok(Some(text)),
        Err(e) => {
            let bytes = e.as_bytes();
            let valid = e.utf8_error().valid_up_to();
            let prefix = diag::valid_utf8_prefix(bytes);
            let pos = diag::LineIndex::new(prefix).pos(prefix, valid);
            anyhow::bail!(
                "{}:{}:{}: not valid UTF-8 (byte 0x{:02X} at offset {valid}); {fix}",
                path.display(),
                pos.line,
                pos.column,
                bytes.get(valid).copied().unwrap_or_default()
            )
        }
    }
}

/// Turns a `skillc.lock` error into the command's error: an invalid lock prints its
/// diagnostic with a snippet first (exit status 2, as for `pipeline.toml`).
pub(crate) fn lock_error(e: crate::import::lock::LockError, out: &mut Printer) -> anyhow::Error {
    match e {
        crate::import::lock::LockError::Invalid { diagnostic, text, .. } => {
            print_file_diagnostics(out, std::slice::from_ref(&*diagnostic), &text);
            anyhow::anyhow!("{} is invalid (see above)", crate::import::lock::FILE_NAME)
        }
        other => other.into(),
    }
}

/// Reads the project's `skillc.lock` (empty when absent), printing an invalid one's
/// diagnostic ([`lock_error`]).
pub(crate) fn read_lock(root: &Path, out: &mut Printer) -> anyhow::Result<crate::import::lock::Lock> {
    crate::import::lock::read(root).map_err(|e| lock_error(e, out))
}

/// The file name of the reviewed translations, at the project root (FORMATS.md).
pub(crate) const TRANSLATIONS: &str = "translations.toml";

/// The path of the project's `translations.toml` (present or not).
pub(crate) fn translations_path(project: &Project) -> PathBuf {
    project.root.join(TRANSLATIONS)
}

/// The reviewed translations text and the path shown in its diagnostics (`translations.toml`,
/// relative to the project root); empty when the project has none.
pub(crate) fn translations_source(project: &Project, out: &mut Printer) -> anyhow::Result<(String, String)> {
    let p = translations_path(project);
    let text = read_input(&p, TRANSLATIONS, &crate::rules::TR010, out)?.unwrap_or_default();
    Ok((TRANSLATIONS.to_owned(), text))
}

/// The vocabulary text and the path shown in its diagnostics: `--vocabulary`, else the
/// configured file when present, else the built-in vocabulary.
pub(crate) fn vocabulary_source(
    project: &Project,
    flag: Option<&Path>,
    out: &mut Printer,
) -> anyhow::Result<(String, String)> {
    let chosen = match flag {
        Some(p) => Some(p.to_path_buf()),
        None => project
            .config
            .vocabulary
            .as_ref()
            .map(|p| project.root.join(p))
            .filter(|p| p.is_file() || project.config.vocabulary_explicit),
    };
    match chosen {
        Some(p) => {
            let shown = p.to_string_lossy().into_owned();
            let text = read_input(&p, &shown, &crate::rules::VO001, out)?
                .with_context(|| format!("reading vocabulary {shown}: no such file"))?;
            Ok((shown, text))
        }
        None => Ok((vocab::DEFAULT_PATH.to_owned(), vocab::DEFAULT_TEXT.to_owned())),
    }
}

/// The skills that changed files belong to (`--files`, as pre-commit passes file names): for
/// each path, the nearest folder upwards holding a `SKILL.md` (or `skill.md`), not above the
/// current folder; each once, in the order first met. Files outside every skill are dropped.
pub(crate) fn owning_skills(files: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for f in files {
        let start = if f.is_dir() {
            f.as_path()
        } else {
            f.parent().unwrap_or(Path::new(""))
        };
        let found = start.ancestors().find(|d| {
            let d = if d.as_os_str().is_empty() { Path::new(".") } else { d };
            d.join("SKILL.md").is_file() || d.join("skill.md").is_file()
        });
        if let Some(d) = found {
            let d = if d.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                d.to_path_buf()
            };
            if !out.contains(&d) {
                out.push(d);
            }
        }
    }
    out
}

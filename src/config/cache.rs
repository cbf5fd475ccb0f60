//! `pipeline.toml`'s `[cache]`: where the shared build cache is (ARCHITECTURE.md, "The shared
//! build cache"), parsed with `CF001` diagnostics at the value's position.

use std::path::PathBuf;

use serde::Deserialize;

use super::Source;
use crate::diag::Diagnostic;
use crate::rules;

/// `[cache] remote` and `timeout_seconds` (ARCHITECTURE.md, "The shared build cache").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheRemote {
    /// Where the entries live.
    pub location: RemoteLocation,
    /// The longest one remote operation (a read, a write, the connection) may take, in
    /// seconds (default 10): past it the build goes on with local work.
    pub timeout_seconds: u64,
}

/// A remote build cache's storage, as `[cache] remote` names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RemoteLocation {
    /// A folder (`file:///abs/path`, or a plain path, relative to the project root): a
    /// shared volume, or a folder CI uploads and restores.
    Folder(PathBuf),
    /// A Redis server, `redis://[user:password@]host[:port][/db]` (as given).
    Redis(String),
}

impl CacheRemote {
    /// The location as shown in messages (a Redis password is never shown).
    pub fn shown(&self) -> String {
        match &self.location {
            RemoteLocation::Folder(p) => p.display().to_string(),
            RemoteLocation::Redis(url) => match url.split_once('@') {
                Some((_, host)) => format!("redis://…@{host}"),
                None => url.clone(),
            },
        }
    }
}

/// Default of `[cache] timeout_seconds`.
pub const DEFAULT_CACHE_TIMEOUT_SECONDS: u64 = 10;

/// Largest `[cache] timeout_seconds` (ten minutes).
const MAX_CACHE_TIMEOUT_SECONDS: u64 = 600;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct CacheSection {
    remote: Option<toml::Spanned<String>>,
    timeout_seconds: Option<toml::Spanned<i64>>,
}

/// `[cache]`: the remote's location and timeout; `None` without a usable `remote` (an empty
/// one turns the remote off, a bad one is a `CF001` at its position and the build stays local).
pub(super) fn cache_section(c: CacheSection, src: &Source<'_>, diags: &mut Vec<Diagnostic>) -> Option<CacheRemote> {
    let mut timeout_seconds = DEFAULT_CACHE_TIMEOUT_SECONDS;
    if let Some(t) = c.timeout_seconds {
        match u64::try_from(*t.get_ref()) {
            Ok(v) if (1..=MAX_CACHE_TIMEOUT_SECONDS).contains(&v) => timeout_seconds = v,
            _ => diags.push(Diagnostic::new(
                &rules::CF001,
                src.file,
                src.span(t.span()),
                "`timeout_seconds` must be a number of seconds between 1 and 600",
            )),
        }
    }
    let remote = c.remote?;
    let text = remote.get_ref().trim();
    if text.is_empty() {
        return None;
    }
    let location = match remote_location(text) {
        Ok(l) => l,
        Err(why) => {
            diags.push(
                Diagnostic::new(&rules::CF001, src.file, src.span(remote.span()), why).help(
                    "use a folder (`/srv/skillc-cache`, `file:///srv/skillc-cache`, or a path relative to the project) or `redis://host:port`",
                ),
            );
            return None;
        }
    };
    Some(CacheRemote {
        location,
        timeout_seconds,
    })
}

/// The storage `[cache] remote` names, or why it names none.
fn remote_location(text: &str) -> Result<RemoteLocation, String> {
    if let Some(path) = text.strip_prefix("file://") {
        return if path.starts_with('/') {
            Ok(RemoteLocation::Folder(PathBuf::from(path)))
        } else {
            Err(format!(
                "`{text}` is not a `file://` address of an absolute path (`file:///srv/cache`)"
            ))
        };
    }
    if text.starts_with("redis://") || text.starts_with("rediss://") {
        let host = text.split_once("://").map_or("", |(_, rest)| rest);
        let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
        if host.split('/').next().is_none_or(str::is_empty) {
            return Err(format!("`{text}` names no Redis host (`redis://127.0.0.1:6379`)"));
        }
        return Ok(RemoteLocation::Redis(text.to_owned()));
    }
    match text.split_once("://") {
        Some((scheme, _)) => Err(format!(
            "unknown remote cache scheme `{scheme}://`: this skillc supports a folder and Redis"
        )),
        None => Ok(RemoteLocation::Folder(PathBuf::from(text))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse;

    /// Issue 16, item 6: `[cache] remote` is a folder or Redis; anything else is a `CF001` at
    /// its line, and the build stays local.
    #[test]
    fn cache_remote() {
        let (cfg, d) = parse(
            "p",
            "[cache]\nremote = \"redis://127.0.0.1:6379\"\ntimeout_seconds = 3\n",
        );
        assert!(d.is_empty(), "{d:?}");
        let remote = cfg.cache_remote.expect("a remote");
        assert_eq!(remote.location, RemoteLocation::Redis("redis://127.0.0.1:6379".into()));
        assert_eq!(remote.timeout_seconds, 3);
        let (cfg, _) = parse("p", "[cache]\nremote = \"file:///srv/cache\"\n");
        let remote = cfg.cache_remote.expect("a remote");
        assert_eq!(remote.location, RemoteLocation::Folder("/srv/cache".into()));
        assert_eq!(remote.timeout_seconds, DEFAULT_CACHE_TIMEOUT_SECONDS);
        let (cfg, _) = parse("p", "[cache]\nremote = \"../ci-cache\"\n");
        assert_eq!(
            cfg.cache_remote.map(|r| r.location),
            Some(RemoteLocation::Folder("../ci-cache".into()))
        );
        assert_eq!(parse("p", "[cache]\nremote = \"\"\n").0.cache_remote, None);
        let shown = CacheRemote {
            location: RemoteLocation::Redis("redis://user:secret@host:6379".into()),
            timeout_seconds: 1,
        };
        assert!(!shown.shown().contains("secret"), "{}", shown.shown());
        for (text, line) in [
            ("[cache]\nremote = \"s3://bucket\"\n", 2),
            ("[cache]\nremote = \"file://relative\"\n", 2),
            ("[cache]\nremote = \"redis://\"\n", 2),
            ("[cache]\n\ntimeout_seconds = 0\nremote = \"/x\"\n", 3),
        ] {
            let (_, d) = parse("p", text);
            assert_eq!(
                d.iter().map(|d| (d.rule.code, d.span.start.line)).collect::<Vec<_>>(),
                [("CF001", line)],
                "{text}"
            );
        }
        let (_, d) = parse("p", "[cache]\nremot = \"/x\"\n");
        assert_eq!(d[0].rule.code, "CF002");
    }
}

//! Pure edits and checks on an imported SKILL.md: resetting a GAIA tier claim to
//! `experimental` with a minimal textual edit (PRODUCT.md, "GAIA permission grammar":
//! imported skills land `experimental`), and finding `scripts/…` references the skill does
//! not ship (seed 000, "Supported sources": import a folder or repository when a skill calls
//! its own scripts).

use std::collections::BTreeSet;

use crate::model::Mode;
use crate::skill::validate::{self, Context};
use crate::skill::yaml::Node;

/// The result of [`reset_tier`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TierReset {
    /// No tier claim, or already `experimental`: the bytes are unchanged.
    Unchanged,
    /// The claim was replaced: the new bytes and the tier that was claimed.
    Reset {
        /// The edited SKILL.md: only the `security_tier` value differs.
        bytes: Vec<u8>,
        /// The claimed tier, as written.
        claimed: String,
    },
}

fn child<'a>(node: &'a Node, key: &str) -> Option<&'a Node> {
    node.as_map()?.iter().find(|e| e.key == key).map(|e| &e.value)
}

fn tier_node(bytes: &[u8]) -> Option<Node> {
    let ctx = Context {
        dir_name: "",
        mode: Mode::Default,
    };
    let analysis = validate::analyze("SKILL.md", bytes, &ctx);
    let root = analysis.frontmatter?;
    let tier = child(child(child(&root, "metadata")?, "gaia")?, "security_tier")?;
    Some(tier.clone())
}

/// Resets `metadata.gaia.security_tier` of a SKILL.md to `experimental`, replacing only the
/// value's bytes; everything else stays byte for byte.
///
/// # Errors
/// A message when the claim is not a plain string value that can be replaced safely (a
/// block scalar, a sequence): the caller refuses the skill rather than import a tier claim.
pub fn reset_tier(bytes: &[u8]) -> Result<TierReset, String> {
    let Some(node) = tier_node(bytes) else {
        return Ok(TierReset::Unchanged);
    };
    let claimed = match node.as_str() {
        Some("experimental") => return Ok(TierReset::Unchanged),
        Some(s) => s.to_owned(),
        None => {
            return Err(format!(
                "`metadata.gaia.security_tier` is {}, not a tier name",
                node.describe()
            ));
        }
    };
    let span = node.span.clone();
    if span.end > bytes.len() || span.is_empty() {
        return Err("`metadata.gaia.security_tier` could not be located in the file".into());
    }
    // The value's own bytes on its line: a quoted value up to its closing quote, a plain one
    // up to a comment or the end of the line (a node's span may run past them).
    let line = &bytes[span.start..span.end];
    let line = &line[..line.iter().position(|b| *b == b'\n').unwrap_or(line.len())];
    let (len, replacement): (usize, &[u8]) = match line.first() {
        Some(&q @ (b'"' | b'\'')) => match line[1..].iter().position(|b| *b == q) {
            Some(close) => (
                close + 2,
                if q == b'"' {
                    b"\"experimental\""
                } else {
                    b"'experimental'"
                },
            ),
            None => (usize::MAX, b""),
        },
        _ => {
            let end = line.windows(2).position(|w| w == b" #").unwrap_or(line.len());
            let trimmed = line[..end]
                .iter()
                .rposition(|b| !b.is_ascii_whitespace())
                .map_or(0, |i| i + 1);
            (trimmed, b"experimental")
        }
    };
    if len > line.len() || len == 0 {
        return Err(format!(
            "the tier claim `{claimed}` is not written as a plain value skillc can reset; set `security_tier: experimental` by hand"
        ));
    }
    let span = span.start..span.start + len;
    let mut out = Vec::with_capacity(bytes.len() + replacement.len());
    out.extend_from_slice(&bytes[..span.start]);
    out.extend_from_slice(replacement);
    out.extend_from_slice(&bytes[span.end..]);
    // The edit must leave a file whose claim now reads `experimental`.
    match tier_node(&out).as_ref().and_then(Node::as_str) {
        Some("experimental") => Ok(TierReset::Reset { bytes: out, claimed }),
        _ => Err(format!(
            "the tier claim `{claimed}` is not written as a plain value skillc can reset; set `security_tier: experimental` by hand"
        )),
    }
}

/// The `scripts/…` paths a SKILL.md body mentions that are not among `files` (paths relative
/// to the skill folder), sorted and unique. A mention is `scripts/` at the start of a word or
/// after `/` (`{baseDir}/scripts/x.py`), followed by a file name.
pub fn missing_scripts<'a>(body: &str, files: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let present: BTreeSet<&str> = files.into_iter().collect();
    let mut missing = BTreeSet::new();
    let bytes = body.as_bytes();
    let mut from = 0;
    while let Some(i) = body[from..].find("scripts/") {
        let at = from + i;
        from = at + "scripts/".len();
        let before = at.checked_sub(1).map(|j| bytes[j]);
        if before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.') {
            continue;
        }
        let rest = &body[from..];
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/')))
            .unwrap_or(rest.len());
        let name = rest[..len].trim_end_matches(['.', '/']);
        if name.is_empty() {
            continue;
        }
        let path = format!("scripts/{name}");
        if !present.contains(path.as_str()) {
            missing.insert(path);
        }
    }
    missing.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const GAIA: &str = "---\nname: x\ndescription: d\nmetadata:\n  gaia:\n    security_tier: community  # claimed\n    permissions:\n      - network:read\n---\nBody\n";

    #[test]
    fn resets_a_claim_minimally() {
        let TierReset::Reset { bytes, claimed } = reset_tier(GAIA.as_bytes()).unwrap() else {
            panic!("expected a reset")
        };
        assert_eq!(claimed, "community");
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            GAIA.replace("community  #", "experimental  #")
        );
        let quoted = GAIA.replace("community", "\"verified\"");
        let TierReset::Reset { bytes, .. } = reset_tier(quoted.as_bytes()).unwrap() else {
            panic!("expected a reset")
        };
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            GAIA.replace("community", "\"experimental\"")
        );
        let single = GAIA.replace("community  # claimed", "'community'");
        let TierReset::Reset { bytes, .. } = reset_tier(single.as_bytes()).unwrap() else {
            panic!("expected a reset")
        };
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            GAIA.replace("community  # claimed", "'experimental'")
        );
    }

    #[test]
    fn leaves_other_files_alone() {
        assert_eq!(
            reset_tier(b"---\nname: x\ndescription: d\n---\n"),
            Ok(TierReset::Unchanged)
        );
        let exp = GAIA.replace("community", "experimental");
        assert_eq!(reset_tier(exp.as_bytes()), Ok(TierReset::Unchanged));
        assert_eq!(reset_tier(b"no frontmatter"), Ok(TierReset::Unchanged));
        let seq = GAIA.replace("community", "[verified]");
        assert!(reset_tier(seq.as_bytes()).is_err());
    }

    #[test]
    fn finds_missing_scripts() {
        let body =
            "Run `python3 scripts/fetch.py --x` or {baseDir}/scripts/tool.sh.\nSee myscripts/no and scripts/ alone.";
        assert_eq!(missing_scripts(body, ["scripts/tool.sh"]), ["scripts/fetch.py"]);
        assert!(missing_scripts("no scripts here", []).is_empty());
    }
}

//! The persistent per-skill cache, its pure half (ARCHITECTURE.md, "The persistent per-skill
//! cache"; issue 16, item 1): what an entry holds, its key, its bytes and their verification.
//! The session reads and writes the entries (`build::session::warm`); the queries of
//! [`crate::build`] take a skill's results from the verified bytes the session set as the
//! skill's `warm` input instead of computing them.
//!
//! An entry file is, in order: [`MAGIC`]; [`FORMAT`] (u32, little-endian); the tool version
//! (a [`codec`] string); the 32-byte key; three sections, each a varint length and its bytes
//! ([`Section`]: the skill's unit, its drafts, its menu entry); the SHA-256 of everything
//! before it. A file that is not exactly that for the expected key and this tool is a miss.

pub mod codec;

use std::collections::BTreeMap;

use sha2::Digest as _;

use self::codec::{Code, Reader, put_varint};
use super::SkillUnit;
use crate::generate::Executor;
use crate::menu::doc::ExecutorText;
use crate::menu::index::Entry;
use crate::model::{CatalogVerdicts, FindingSeverity, Level, Limits, Mode};

/// The first bytes of an entry file.
pub const MAGIC: &[u8; 8] = b"skillc\x00C";

/// The version of the entry layout and of every [`codec`] shape; part of every key, so a
/// change of either is a miss for every old entry (bump it with any codec change).
pub const FORMAT: u32 = 1;

/// The tool version written into entries and keys.
pub const TOOL: &str = env!("CARGO_PKG_VERSION");

/// Everything the cached results of every skill depend on besides the skill's own files and
/// the code: hashed once per build into a [`context`], which each skill's [`key`] joins.
#[derive(Clone, Copy, Debug)]
pub struct KeyParts<'a> {
    /// The tool version ([`TOOL`]; tests pass another one).
    pub tool: &'a str,
    /// The vocabulary's text (translation, labels, affinity terms, the menu's lexicon).
    pub vocabulary: &'a str,
    /// `translations.toml`'s text (a reviewer's names).
    pub translations: &'a str,
    /// Validation mode and limits (check, scan).
    pub mode: Mode,
    /// See `mode`.
    pub limits: Limits,
    /// `[scan] fail_on` (the skill-level rejection `SC000`).
    pub fail_on: FindingSeverity,
    /// Levels skipped on request (recorded in the draft manifests).
    pub skip: &'a [Level],
    /// `skillc.lock`'s original sources (`imported_from` of the skill's executors).
    pub imported_from: &'a BTreeMap<String, String>,
}

/// The SHA-256 of every [`KeyParts`] and [`FORMAT`], in a fixed order, each length-prefixed.
pub fn context(p: &KeyParts<'_>) -> [u8; 32] {
    let mut h = sha2::Sha256::new();
    let mut s = |text: &str| {
        h.update((text.len() as u64).to_le_bytes());
        h.update(text.as_bytes());
    };
    s("skillc build cache");
    s(&FORMAT.to_string());
    s(p.tool);
    // A menu entry's stored features follow the built-in embedder and the document recipe,
    // which can change within one tool version (`lexical/4` added name twins).
    s(crate::menu::lexical::EMBEDDER);
    s(crate::menu::doc::RECIPE);
    s(p.vocabulary);
    s(p.translations);
    let Limits {
        skill_md_bytes,
        support_file_bytes,
        files_per_skill,
    } = p.limits;
    s(&format!(
        "{:?} {skill_md_bytes} {support_file_bytes} {files_per_skill} {:?} {:?}",
        p.mode, p.fail_on, p.skip
    ));
    s(&p.imported_from.len().to_string());
    for (name, from) in p.imported_from {
        s(name);
        s(from);
    }
    h.finalize().into()
}

/// The key of one skill's entry (the file is named by its hex): the SHA-256 of the build's
/// [`context`] and the skill's fingerprint (display path, folder name, every file's path and
/// contents: `build::session::inputs`).
pub fn key(context: &[u8; 32], skill: &[u8; 32]) -> [u8; 32] {
    let mut h = sha2::Sha256::new();
    h.update(context);
    h.update(skill);
    h.finalize().into()
}

/// The parts of an entry, decoded lazily, each by the query that needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// The skill's [`SkillUnit`] (check, translation, generation info, scan).
    Unit = 0,
    /// Its drafts (`skill_drafts`), wrappers and manifests left out: they are rendered again
    /// from the plan where needed ([`super::full_draft`]).
    Drafts = 1,
    /// Its menu entry and the executor texts it was made with ([`MenuPart`]).
    Menu = 2,
}

/// A skill's menu entry with what it was computed from besides the skill and the vocabulary:
/// the texts of the executors admission let in. Valid only while those are the same.
#[derive(Clone, Debug, PartialEq)]
pub struct MenuPart {
    /// The executors' names and labels.
    pub executors: Vec<ExecutorText>,
    /// The entry.
    pub entry: Entry,
}

impl Code for MenuPart {
    fn put(&self, w: &mut Vec<u8>) {
        self.executors.put(w);
        self.entry.put(w);
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        Some(MenuPart {
            executors: Code::take(r)?,
            entry: Code::take(r)?,
        })
    }
}

/// A skill's results, to be written as an entry.
pub struct Results<'a> {
    /// Its unit.
    pub unit: &'a SkillUnit,
    /// Its drafts, as computed (wrappers and manifests are dropped when encoded).
    pub drafts: &'a [Option<Executor>],
    /// Its menu entry, when the skill is in the catalog.
    pub menu: Option<MenuPart>,
}

/// The bytes of an entry file.
pub fn encode(key: &[u8; 32], tool: &str, r: &Results<'_>) -> Vec<u8> {
    let drafts: Vec<Option<Executor>> = r
        .drafts
        .iter()
        .map(|d| {
            d.as_ref().map(|e| Executor {
                wrapper: String::new(),
                manifest: String::new(),
                ..e.clone()
            })
        })
        .collect();
    let sections = [
        codec::to_bytes(r.unit),
        codec::to_bytes(&drafts),
        codec::to_bytes(&r.menu),
    ];
    let mut w = Vec::with_capacity(sections.iter().map(Vec::len).sum::<usize>() + 128);
    w.extend_from_slice(MAGIC);
    w.extend_from_slice(&FORMAT.to_le_bytes());
    tool.to_owned().put(&mut w);
    w.extend_from_slice(key);
    for s in &sections {
        put_varint(&mut w, s.len() as u64);
        w.extend_from_slice(s);
    }
    let digest = sha2::Sha256::digest(&w);
    w.extend_from_slice(&digest);
    w
}

/// Why an entry file was not taken (the session's warning says it).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Bad {
    /// The bytes are cut short or do not follow the layout.
    #[error("truncated or malformed")]
    Malformed,
    /// The SHA-256 at the end does not match the bytes.
    #[error("its digest does not match its contents")]
    Digest,
    /// Written by another layout version or tool version (a key collision would need both).
    #[error("written by another version (format {format}, skillc {tool})")]
    Version {
        /// The entry's format.
        format: u32,
        /// The entry's tool version.
        tool: String,
    },
    /// The key inside is not the file's.
    #[error("it holds another key")]
    Key,
    /// A sealed record ([`Seal`]) whose contents its seal does not vouch for: damaged, or
    /// edited by someone who does not hold the signing key.
    #[error("its seal does not match its contents (damaged, or not written by a build with this signing key)")]
    Seal,
}

/// An entry's header and the byte ranges of its sections, from walking its layout (no check
/// of the digest, the versions or the key); `None` when the bytes do not follow the layout.
struct Layout<'a> {
    format: u32,
    tool: String,
    key: &'a [u8],
    sections: [std::ops::Range<usize>; 3],
    /// Everything but the trailing digest.
    body: &'a [u8],
    digest: &'a [u8],
}

fn layout(bytes: &[u8]) -> Option<Layout<'_>> {
    let body_len = bytes.len().checked_sub(32)?;
    let (body, digest) = bytes.split_at(body_len);
    let mut r = Reader::new(body);
    if r.bytes(MAGIC.len())? != MAGIC.as_slice() {
        return None;
    }
    let format = u32::from_le_bytes(r.bytes(4)?.try_into().ok()?);
    let tool = String::take(&mut r)?;
    let key = r.bytes(32)?;
    let mut sections = [0..0, 0..0, 0..0];
    for range in &mut sections {
        let n = usize::try_from(r.varint()?).ok()?;
        let start = body_len - r.remaining();
        r.bytes(n)?;
        *range = start..start + n;
    }
    r.is_empty().then_some(Layout {
        format,
        tool,
        key,
        sections,
        body,
        digest,
    })
}

/// The byte ranges of an entry's sections, after checking the whole file: magic, format,
/// tool version, key, layout and digest.
///
/// # Errors
/// [`Bad`] says which check failed.
pub fn verify(bytes: &[u8], key: &[u8; 32], tool: &str) -> Result<[std::ops::Range<usize>; 3], Bad> {
    let l = layout(bytes).ok_or(Bad::Malformed)?;
    if sha2::Sha256::digest(l.body).as_slice() != l.digest {
        return Err(Bad::Digest);
    }
    if l.format != FORMAT || l.tool != tool {
        return Err(Bad::Version {
            format: l.format,
            tool: l.tool,
        });
    }
    if l.key != key {
        return Err(Bad::Key);
    }
    Ok(l.sections)
}

/// One section of an entry the session verified ([`verify`]); `None` when the bytes are not
/// an entry (never for bytes `verify` accepted).
pub fn section(bytes: &[u8], which: Section) -> Option<&[u8]> {
    // The session verified these bytes: only the layout is walked again, not the digest.
    let range = layout(bytes)?.sections[which as usize].clone();
    bytes.get(range)
}

/// Decodes one section of verified entry bytes.
pub fn take<T: Code>(bytes: &[u8], which: Section) -> Option<T> {
    codec::from_bytes(section(bytes, which)?)
}

/// The first bytes of a file of catalog-wide admission verdicts ([`encode_catalog`]).
pub const CATALOG_MAGIC: &[u8; 8] = b"skillc\x00A";

/// What seals a record of catalog-wide verdicts: a key derived from the signing key's secret
/// (`sign::SecretKey::derive`). The seal is a keyed BLAKE2b-256 (a MAC) of the record, so a
/// record edited by hand, or made by anyone who does not hold the signing key, is refused
/// even when its bytes are otherwise well formed: its verdicts end in what the catalog signs.
pub struct Seal {
    /// The MAC key.
    pub key: [u8; 32],
}

impl Seal {
    /// The MAC of `body`.
    fn mac(&self, body: &[u8]) -> [u8; 32] {
        crate::util::keyed_blake2b(&self.key, b"skillc record", body)
    }

    /// Which key sealed a record (8 bytes, written in its header): a record of another key is
    /// no answer rather than damage. Derived from the key, so it tells nothing of it.
    fn id(&self) -> [u8; 8] {
        let mut id = [0u8; 8];
        id.copy_from_slice(&crate::util::keyed_blake2b(&self.key, b"skillc seal id", b"")[..8]);
        id
    }
}

/// The bytes of the file that records the catalog-wide admission verdicts of a build
/// ([`CatalogVerdicts`]): [`CATALOG_MAGIC`]; [`FORMAT`] (u32, little-endian); the tool
/// version (a [`codec`] string); the seal's id (8 bytes, [`Seal`]); the verdicts (their
/// [`Code`]); the seal's MAC of everything before it (32 bytes).
pub fn encode_catalog(tool: &str, v: &CatalogVerdicts, seal: &Seal) -> Vec<u8> {
    let mut w = Vec::new();
    w.extend_from_slice(CATALOG_MAGIC);
    w.extend_from_slice(&FORMAT.to_le_bytes());
    tool.to_owned().put(&mut w);
    w.extend_from_slice(&seal.id());
    v.put(&mut w);
    let mac = seal.mac(&w);
    w.extend_from_slice(&mac);
    w
}

/// The verdicts of [`encode_catalog`]'s bytes, after checking the whole file: magic, format,
/// tool version, signing key, layout and seal.
///
/// # Errors
/// [`Bad`] says which check failed: [`Bad::Version`] also for a record of another signing
/// key (no answer rather than damage), [`Bad::Seal`] for contents the seal does not vouch for.
pub fn decode_catalog(bytes: &[u8], tool: &str, seal: &Seal) -> Result<CatalogVerdicts, Bad> {
    let body_len = bytes.len().checked_sub(32).ok_or(Bad::Malformed)?;
    let (body, mac) = bytes.split_at(body_len);
    let mut r = Reader::new(body);
    if r.bytes(CATALOG_MAGIC.len()) != Some(CATALOG_MAGIC.as_slice()) {
        return Err(Bad::Malformed);
    }
    let format = r
        .bytes(4)
        .and_then(|b| b.try_into().ok())
        .map(u32::from_le_bytes)
        .ok_or(Bad::Malformed)?;
    let written_by = String::take(&mut r).ok_or(Bad::Malformed)?;
    let sealed_by = r.bytes(8).ok_or(Bad::Malformed)?;
    if format != FORMAT || written_by != tool || sealed_by != seal.id().as_slice() {
        return Err(Bad::Version {
            format,
            tool: written_by,
        });
    }
    if seal.mac(body).as_slice() != mac {
        return Err(Bad::Seal);
    }
    let v = CatalogVerdicts::take(&mut r).ok_or(Bad::Malformed)?;
    if r.is_empty() { Ok(v) } else { Err(Bad::Malformed) }
}

#[cfg(test)]
mod tests;

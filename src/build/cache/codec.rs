//! The build cache's binary encoding (ARCHITECTURE.md, "The persistent per-skill cache"): a
//! [`Code`] per type of a per-skill result, written field by field in declaration order.
//!
//! Shapes: unsigned integers are LEB128 varints; `i64` zig-zag varints; `f32`/`f64` their IEEE
//! bits, little-endian (exact); strings and byte lists a varint length and the bytes; `Option`
//! a tag byte (0 none, 1 some); lists and maps a varint count and the items; enums a tag byte
//! then their fields; a rule its code, looked up again in [`crate::rules`] (an unknown code
//! fails the decoding). Decoding never panics: any malformed input is `None`, which the cache
//! treats as a miss. Why our own encoding and not serde + postcard: most of these types already
//! have a hand-written `Serialize` that *is* a JSON contract (docs/json.md: `Diagnostic`,
//! `Finding`, `LevelStatus`…), which a derive for the cache would have to step around type by
//! type; and [`record!`] lists every field, so a field added to a type and not to its codec
//! fails to compile (the struct literal of `take` must name them all).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::diag::{Diagnostic, Label, Pos, Rule, Severity, Span};
use crate::extract::{Arg, Program, SubCommand};
use crate::generate::{Digests, Executor, Labels, SkillInfo};
use crate::menu::doc::ExecutorText;
use crate::menu::index::Entry;
use crate::model::{CatalogVerdicts, FindingSeverity, Lang, Level, Prototype, PrototypeKind};
use crate::scan::Finding;
use crate::skill::SkillCheck;
use crate::skill::gaia::{ParamType, Permission, SecurityTier};
use crate::skill::model::{Credential, CredentialKind};
use crate::translate::{DefaultObject, ExecutorName, Outcome, Plan, Proposal, Step, Translation};

use super::super::SkillUnit;

/// A value the cache can write and read back exactly.
pub trait Code: Sized {
    /// Appends the encoding of `self`.
    fn put(&self, w: &mut Vec<u8>);
    /// Reads one value; `None` when the bytes are not a valid encoding.
    fn take(r: &mut Reader<'_>) -> Option<Self>;
}

/// A cursor over encoded bytes.
pub struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes }
    }

    /// Whether every byte was read.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// How many bytes are left.
    pub fn remaining(&self) -> usize {
        self.bytes.len()
    }

    /// The next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.bytes.len() {
            return None;
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Some(head)
    }

    fn byte(&mut self) -> Option<u8> {
        self.bytes(1).map(|b| b[0])
    }

    /// A LEB128 varint (at most ten bytes, no bits beyond 64).
    pub fn varint(&mut self) -> Option<u64> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            let part = u64::from(b & 0x7f);
            if shift == 63 && part > 1 {
                return None;
            }
            v |= part << shift;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    /// A count of items, each at least one byte long: bounded by what is left, so that a
    /// corrupt count cannot ask for a huge allocation.
    fn count(&mut self) -> Option<usize> {
        let n = usize::try_from(self.varint()?).ok()?;
        (n <= self.bytes.len()).then_some(n)
    }
}

/// Appends a LEB128 varint.
pub fn put_varint(w: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        w.push((v as u8) | 0x80);
        v >>= 7;
    }
    w.push(v as u8);
}

/// Encodes one value into a new buffer.
pub fn to_bytes<T: Code>(v: &T) -> Vec<u8> {
    let mut w = Vec::new();
    v.put(&mut w);
    w
}

/// Decodes one value that must span all of `bytes`.
pub fn from_bytes<T: Code>(bytes: &[u8]) -> Option<T> {
    let mut r = Reader::new(bytes);
    let v = T::take(&mut r)?;
    r.is_empty().then_some(v)
}

impl Code for u64 {
    fn put(&self, w: &mut Vec<u8>) {
        put_varint(w, *self);
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        r.varint()
    }
}

impl Code for u32 {
    fn put(&self, w: &mut Vec<u8>) {
        put_varint(w, u64::from(*self));
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        u32::try_from(r.varint()?).ok()
    }
}

impl Code for usize {
    fn put(&self, w: &mut Vec<u8>) {
        put_varint(w, *self as u64);
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        usize::try_from(r.varint()?).ok()
    }
}

impl Code for i64 {
    fn put(&self, w: &mut Vec<u8>) {
        put_varint(w, ((*self << 1) ^ (*self >> 63)) as u64);
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        let v = r.varint()?;
        Some(((v >> 1) as i64) ^ -((v & 1) as i64))
    }
}

impl Code for bool {
    fn put(&self, w: &mut Vec<u8>) {
        w.push(u8::from(*self));
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        match r.byte()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
}

impl Code for f32 {
    fn put(&self, w: &mut Vec<u8>) {
        w.extend_from_slice(&self.to_bits().to_le_bytes());
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        let b: [u8; 4] = r.bytes(4)?.try_into().ok()?;
        Some(f32::from_bits(u32::from_le_bytes(b)))
    }
}

impl Code for f64 {
    fn put(&self, w: &mut Vec<u8>) {
        w.extend_from_slice(&self.to_bits().to_le_bytes());
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        let b: [u8; 8] = r.bytes(8)?.try_into().ok()?;
        Some(f64::from_bits(u64::from_le_bytes(b)))
    }
}

/// A dense part is its `menu.vec` tag (an unknown tag is not a valid encoding).
impl Code for crate::menu::doc::DensePart {
    fn put(&self, w: &mut Vec<u8>) {
        w.push(*self as u8);
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        crate::menu::doc::DensePart::from_tag(r.byte()?)
    }
}

impl Code for [u8; 32] {
    fn put(&self, w: &mut Vec<u8>) {
        w.extend_from_slice(self);
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        r.bytes(32)?.try_into().ok()
    }
}

impl Code for String {
    fn put(&self, w: &mut Vec<u8>) {
        put_varint(w, self.len() as u64);
        w.extend_from_slice(self.as_bytes());
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        let n = r.count()?;
        String::from_utf8(r.bytes(n)?.to_vec()).ok()
    }
}

impl Code for Arc<[u8]> {
    fn put(&self, w: &mut Vec<u8>) {
        put_varint(w, self.len() as u64);
        w.extend_from_slice(self);
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        let n = r.count()?;
        Some(Arc::from(r.bytes(n)?))
    }
}

impl<T: Code> Code for Option<T> {
    fn put(&self, w: &mut Vec<u8>) {
        match self {
            None => w.push(0),
            Some(v) => {
                w.push(1);
                v.put(w);
            }
        }
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        match r.byte()? {
            0 => Some(None),
            1 => Some(Some(T::take(r)?)),
            _ => None,
        }
    }
}

impl<T: Code> Code for Vec<T> {
    fn put(&self, w: &mut Vec<u8>) {
        put_varint(w, self.len() as u64);
        for v in self {
            v.put(w);
        }
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        let n = r.count()?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(T::take(r)?);
        }
        Some(v)
    }
}

impl<K: Code + Ord, V: Code> Code for BTreeMap<K, V> {
    fn put(&self, w: &mut Vec<u8>) {
        put_varint(w, self.len() as u64);
        for (k, v) in self {
            k.put(w);
            v.put(w);
        }
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        let n = r.count()?;
        let mut m = BTreeMap::new();
        for _ in 0..n {
            let k = K::take(r)?;
            m.insert(k, V::take(r)?);
        }
        Some(m)
    }
}

impl<A: Code, B: Code> Code for (A, B) {
    fn put(&self, w: &mut Vec<u8>) {
        self.0.put(w);
        self.1.put(w);
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        Some((A::take(r)?, B::take(r)?))
    }
}

impl<A: Code, B: Code, C: Code> Code for (A, B, C) {
    fn put(&self, w: &mut Vec<u8>) {
        self.0.put(w);
        self.1.put(w);
        self.2.put(w);
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        Some((A::take(r)?, B::take(r)?, C::take(r)?))
    }
}

impl Code for &'static Rule {
    fn put(&self, w: &mut Vec<u8>) {
        self.code.to_owned().put(w);
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        let code = String::take(r)?;
        crate::rules::find(&code).filter(|rule| rule.code == code)
    }
}

/// JSON values structurally (postcard-like formats cannot read serde_json's self-describing
/// `Value`, and text would not keep a float's exact bits through every parser).
impl Code for serde_json::Value {
    fn put(&self, w: &mut Vec<u8>) {
        use serde_json::Value as J;
        match self {
            J::Null => w.push(0),
            J::Bool(b) => {
                w.push(1);
                b.put(w);
            }
            J::Number(n) => {
                if let Some(u) = n.as_u64() {
                    w.push(2);
                    u.put(w);
                } else if let Some(i) = n.as_i64() {
                    w.push(3);
                    i.put(w);
                } else {
                    w.push(4);
                    n.as_f64().unwrap_or_default().put(w);
                }
            }
            J::String(s) => {
                w.push(5);
                s.put(w);
            }
            J::Array(a) => {
                w.push(6);
                a.put(w);
            }
            J::Object(m) => {
                w.push(7);
                put_varint(w, m.len() as u64);
                for (k, v) in m {
                    k.put(w);
                    v.put(w);
                }
            }
        }
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        use serde_json::Value as J;
        Some(match r.byte()? {
            0 => J::Null,
            1 => J::Bool(bool::take(r)?),
            2 => J::Number(u64::take(r)?.into()),
            3 => J::Number(i64::take(r)?.into()),
            4 => J::Number(serde_json::Number::from_f64(f64::take(r)?)?),
            5 => J::String(String::take(r)?),
            6 => J::Array(Vec::take(r)?),
            7 => {
                let n = r.count()?;
                let mut m = serde_json::Map::new();
                for _ in 0..n {
                    let k = String::take(r)?;
                    m.insert(k, Code::take(r)?);
                }
                J::Object(m)
            }
            _ => return None,
        })
    }
}

/// A struct, field by field: `take` builds it with a struct literal, so every field must be
/// named.
macro_rules! record {
    ($t:ty { $($f:ident),* $(,)? }) => {
        impl Code for $t {
            fn put(&self, w: &mut Vec<u8>) {
                $( self.$f.put(w); )*
            }
            fn take(r: &mut Reader<'_>) -> Option<Self> {
                Some(Self { $( $f: Code::take(r)?, )* })
            }
        }
    };
}

/// An enum without fields, as the index of its variant in the list (which must name them all:
/// `put` matches exhaustively).
macro_rules! unit_enum {
    ($t:ident { $($v:ident),* $(,)? }) => {
        impl Code for $t {
            fn put(&self, w: &mut Vec<u8>) {
                let all = [$($t::$v),*];
                let i = match self { $( $t::$v => all.iter().position(|x| *x == $t::$v), )* };
                w.push(i.and_then(|i| u8::try_from(i).ok()).unwrap_or(u8::MAX));
            }
            fn take(r: &mut Reader<'_>) -> Option<Self> {
                [$($t::$v),*].get(usize::from(r.byte()?)).copied()
            }
        }
    };
}

unit_enum!(Severity { Note, Warning, Error });
unit_enum!(Level { L1, L2, L3, L4, L5, L6 });
unit_enum!(Lang { En, It });
unit_enum!(PrototypeKind { Description, Label });
record!(Prototype {
    expected,
    lang,
    request,
    kind
});
record!(CatalogVerdicts { key, rejected, battery });
unit_enum!(FindingSeverity {
    Info,
    Low,
    Medium,
    High,
    Critical
});
unit_enum!(ParamType {
    String,
    Integer,
    Number,
    Boolean,
    Array,
    Object
});
unit_enum!(CredentialKind { Env, File });
unit_enum!(SecurityTier {
    Verified,
    Community,
    Experimental
});

record!(Pos { offset, line, column });
record!(Span { start, end });
record!(Label { span, message });
record!(Diagnostic {
    rule,
    severity,
    file,
    span,
    message,
    label,
    related,
    help,
});
record!(SkillCheck { name, diagnostics });
record!(Finding {
    rule,
    severity,
    file,
    line,
    column,
    reason,
    context,
});
record!(ExecutorName {
    action,
    object,
    qualifiers,
    provider,
});
record!(Step { word, meaning });
record!(Proposal { name, evidence });
record!(DefaultObject { object, evidence });
record!(Arg {
    name,
    ty,
    required,
    flag,
    position,
    description,
    default,
});
record!(SubCommand {
    words,
    program,
    args,
    source_section,
    line,
    invocations,
    description,
    context,
    aliases,
    free_text,
});
record!(Plan {
    subcommand,
    outcome,
    steps,
    proposal,
});
record!(Translation {
    provider,
    object,
    plans,
});
record!(Credential {
    binding,
    kind,
    prompt,
    optional,
});
record!(Permission { domain, level, scope });
record!(SkillInfo {
    name,
    imported_from,
    version,
    skill_md_sha256,
    file_hashes,
    credentials,
    permissions,
    tier,
    description,
});
record!(SkillUnit {
    display,
    check,
    translation,
    info,
    rejected,
    extra,
    findings,
});
record!(Labels { en, it });
record!(Digests { wrapper, lang_state });
record!(Executor {
    name,
    skill,
    wrapper,
    lang_state,
    manifest,
    description,
    labels,
    affinity,
    contract,
    digests,
});
record!(ExecutorText { name, en, it });
record!(Entry {
    slug,
    title,
    line,
    triggers,
    enabled,
    skill_md_sha256,
    body_offset,
    features,
    dense_keys,
});

impl Code for Program {
    fn put(&self, w: &mut Vec<u8>) {
        match self {
            Program::Script { path, interpreter } => {
                w.push(0);
                path.put(w);
                interpreter.put(w);
            }
            Program::Binary { name } => {
                w.push(1);
                name.put(w);
            }
            Program::Tool { module, function } => {
                w.push(2);
                module.put(w);
                function.put(w);
            }
        }
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        Some(match r.byte()? {
            0 => Program::Script {
                path: Code::take(r)?,
                interpreter: Code::take(r)?,
            },
            1 => Program::Binary { name: Code::take(r)? },
            2 => Program::Tool {
                module: Code::take(r)?,
                function: Code::take(r)?,
            },
            _ => return None,
        })
    }
}

impl Code for Outcome {
    fn put(&self, w: &mut Vec<u8>) {
        match self {
            Outcome::Translated(n) => {
                w.push(0);
                n.put(w);
            }
            Outcome::Rejected { rule, reason, name } => {
                w.push(1);
                rule.put(w);
                reason.put(w);
                name.put(w);
            }
        }
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        Some(match r.byte()? {
            0 => Outcome::Translated(Code::take(r)?),
            1 => Outcome::Rejected {
                rule: Code::take(r)?,
                reason: Code::take(r)?,
                name: Code::take(r)?,
            },
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_numbers_round_trip_exactly() {
        for v in [0u64, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            assert_eq!(from_bytes::<u64>(&to_bytes(&v)), Some(v));
        }
        for v in [0i64, -1, 1, i64::MIN, i64::MAX] {
            assert_eq!(from_bytes::<i64>(&to_bytes(&v)), Some(v));
        }
        let j = serde_json::json!({"z": 1, "a": [-3, 0.1, 1e300, null, true, "x"], "m": {"k": u64::MAX}});
        let back: serde_json::Value = from_bytes(&to_bytes(&j)).expect("decodes");
        assert_eq!(back, j);
        // Key order (serde_json's preserve_order) is kept too.
        assert_eq!(back.to_string(), j.to_string());
    }

    #[test]
    fn malformed_bytes_are_none_never_a_panic() {
        let unit = SkillUnit {
            display: "skills/a".into(),
            check: SkillCheck {
                name: Some("a".into()),
                diagnostics: vec![Diagnostic::new(&crate::rules::SK001, "skills/a", Span::default(), "m")],
            },
            translation: Translation::default(),
            info: None,
            rejected: Some((&crate::rules::SK020, "why".into())),
            extra: Vec::new(),
            findings: Vec::new(),
        };
        let bytes = to_bytes(&unit);
        assert_eq!(from_bytes::<SkillUnit>(&bytes), Some(unit));
        // Every truncation and every single-byte change is rejected or decodes to something
        // (never a panic); truncations are always rejected.
        for n in 0..bytes.len() {
            assert_eq!(from_bytes::<SkillUnit>(&bytes[..n]), None, "truncated at {n}");
            let mut b = bytes.clone();
            b[n] ^= 0xff;
            let _ = from_bytes::<SkillUnit>(&b);
        }
        // A huge count does not allocate: it is bounded by the bytes left.
        let mut w = Vec::new();
        put_varint(&mut w, u64::MAX >> 1);
        assert_eq!(from_bytes::<Vec<String>>(&w), None);
        // An unknown rule code is not a rule.
        assert_eq!(from_bytes::<&'static Rule>(&to_bytes(&"XX999".to_owned())), None);
    }
}

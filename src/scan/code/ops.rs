//! Operations on values shared by the front-ends: concatenation, the binary and unary
//! operators (each language's differences given as an [`Operators`] table), integer
//! literals and arithmetic, indexing, `%` formatting.

use crate::scan::code::engine::is_epoch_like;
use crate::scan::code::value::{MAX_STR, Shape, Taint, Val, taint};

/// A fold of a binary operator that only some languages have.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Fold {
    /// `"a" + 1`, `1 + "a"` concatenate (JavaScript's coercion).
    PlusCoerces,
    /// `[a] + [b]` joins the lists.
    ListPlus,
    /// `"ab" * 3`, `3 * "ab"` repeat the string.
    Repeat,
    /// `"%s-%d" % (a, b)` formats ([`percent_format`]).
    Percent,
    /// `Path.home() / ".ssh"` joins a path.
    PathJoin,
}

/// A language's binary operators, as data for [`binary`].
#[derive(Debug)]
pub(crate) struct Operators {
    /// The folds the language has beyond `+` of two strings and integer arithmetic.
    pub(crate) folds: &'static [Fold],
    /// Operators read as another one on integers (`>>>` as `>>`).
    pub(crate) aliases: &'static [(&'static str, &'static str)],
}

impl Operators {
    fn has(&self, f: Fold) -> bool {
        self.folds.contains(&f)
    }
}

/// Python's operators.
pub(crate) const PYTHON: Operators = Operators {
    folds: &[Fold::ListPlus, Fold::Repeat, Fold::Percent, Fold::PathJoin],
    aliases: &[],
};

/// JavaScript's operators: `+` concatenates when either side is a string.
pub(crate) const JAVASCRIPT: Operators = Operators {
    folds: &[Fold::PlusCoerces],
    aliases: &[(">>>", ">>"), ("/", "//")],
};

/// Appends `v`'s text to `out`, or `…` when it is not known; whether it was known.
pub(crate) fn push_text(out: &mut String, v: &Val) -> bool {
    match v.text() {
        Some(s) => {
            out.push_str(&s);
            true
        }
        None => {
            out.push('…');
            false
        }
    }
}

/// Concatenation of values; unknown (with their taint) when one is not a string.
pub(crate) fn concat(vals: &[Val], how: &'static str) -> Val {
    let mut out = String::new();
    let mut t = Taint::default();
    let mut computed = vals.len() > 1;
    let mut unknown = false;
    for v in vals {
        t.join(&v.deep_taint());
        computed |= v.how.is_some();
        unknown |= !push_text(&mut out, v);
        if out.len() > MAX_STR {
            return Val::tainted(t);
        }
    }
    if unknown {
        return partial(out, t);
    }
    let mut v = if computed {
        Val::folded(out, vals.iter().find_map(|v| v.how).unwrap_or(how))
    } else {
        Val::str(out)
    };
    v.taint = t;
    v
}

/// `s` repeated `k` times, unknown past [`MAX_STR`].
pub(crate) fn repeat(s: &str, k: i64) -> Val {
    let k = usize::try_from(k).unwrap_or(0);
    if s.len().saturating_mul(k) > MAX_STR {
        return Val::unknown();
    }
    Val::folded(s.repeat(k), "repetition")
}

/// Texts joined with `sep`, unknown past [`MAX_STR`].
pub(crate) fn join_texts(parts: &[String], sep: &str) -> Val {
    let len = parts.iter().map(String::len).sum::<usize>() + sep.len() * parts.len();
    if len > MAX_STR {
        return Val::unknown();
    }
    Val::folded(parts.join(sep), "join")
}

/// A string with unknown parts (written `…`): unknown, but its known text is kept as the
/// origin (a URL's host, a path's folder).
pub(crate) fn partial(text: String, t: Taint) -> Val {
    let mut v = Val::tainted(t);
    if text.chars().any(|c| c != '…') {
        v.origin = Some(text.chars().take(512).collect());
    }
    v
}

/// A binary operation (`+`, `%`, `*`, `/`, and the integer operators) as the language of
/// `ops` folds it.
pub(crate) fn binary(ops: &Operators, op: &str, l: Val, r: Val) -> Val {
    let mut t = l.deep_taint();
    t.join(&r.deep_taint());
    let v = match (op, &l.shape, &r.shape) {
        ("+", Shape::Str(_), Shape::Str(_)) => return concat(&[l, r], "concatenation"),
        ("+", Shape::Str(_), Shape::Num(_)) | ("+", Shape::Num(_), Shape::Str(_)) if ops.has(Fold::PlusCoerces) => {
            return concat(&[l, r], "concatenation");
        }
        ("+", Shape::List(a), Shape::List(b)) if ops.has(Fold::ListPlus) => Val {
            shape: Shape::List(a.iter().chain(b).cloned().collect()),
            ..Val::default()
        },
        ("*", Shape::Str(s), Shape::Num(k)) | ("*", Shape::Num(k), Shape::Str(s))
            if ops.has(Fold::Repeat) && (0..=64).contains(k) =>
        {
            repeat(s, *k)
        }
        ("%", Shape::Str(f), _) if ops.has(Fold::Percent) => match percent_format(f, &r) {
            Some(s) => Val::folded(s, "format string"),
            None => Val::unknown(),
        },
        ("/", Shape::Str(a), Shape::Str(b)) if ops.has(Fold::PathJoin) => Val::folded(
            format!("{}/{}", a.trim_end_matches('/'), b.trim_start_matches('/')),
            "path join",
        ),
        (_, Shape::Num(a), Shape::Num(b)) => {
            let op = ops.aliases.iter().find(|(o, _)| *o == op).map_or(op, |(_, to)| *to);
            match int_op(op, *a, *b) {
                Some(x) => Val::num(x),
                None => Val::unknown(),
            }
        }
        _ => Val::unknown(),
    };
    Val { taint: t, ..v }
}

/// A unary operation: `-` and `~` on integers; anything else is unknown with the operand's
/// taint.
pub(crate) fn unary(op: &str, v: &Val) -> Val {
    match (op, v.as_num()) {
        ("-", Some(x)) => Val::num(-x),
        ("~", Some(x)) => Val::num(!x),
        _ => Val::tainted(v.deep_taint()),
    }
}

/// An integer literal as written (`0x`, `0o`, `0b`, `_` separators, a BigInt's `n`); a
/// number that looks like a fixed moment is tainted as a date ([`is_epoch_like`]).
pub(crate) fn int_literal(written: &str) -> Val {
    let t = written.replace('_', "").to_ascii_lowercase();
    let parsed = if let Some(h) = t.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()
    } else if let Some(o) = t.strip_prefix("0o") {
        i64::from_str_radix(o, 8).ok()
    } else if let Some(b) = t.strip_prefix("0b") {
        i64::from_str_radix(b, 2).ok()
    } else {
        // Only JavaScript writes a suffix `n`; Python's integers have none.
        t.trim_end_matches('n').parse().ok()
    };
    match parsed {
        Some(x) if is_epoch_like(x) => Val::num(x).with(taint::DATE_CONST),
        Some(x) => Val::num(x),
        None => Val::unknown(),
    }
}

/// Integer arithmetic, checked.
pub(crate) fn int_op(op: &str, a: i64, b: i64) -> Option<i64> {
    match op {
        "+" => a.checked_add(b),
        "-" => a.checked_sub(b),
        "*" => a.checked_mul(b),
        "//" | "/" => a.checked_div(b),
        "%" => a.checked_rem(b),
        "^" => Some(a ^ b),
        "&" => Some(a & b),
        "|" => Some(a | b),
        "<<" => a.checked_shl(u32::try_from(b).ok()?),
        ">>" => a.checked_shr(u32::try_from(b).ok()?),
        _ => None,
    }
}

/// `obj[idx]` on a known container: a dictionary's key, a list's element, a string's
/// character (counted from the end when negative and `from_end`, as Python does); unknown,
/// with both taints, for anything else. References are the caller's.
pub(crate) fn index(obj: &Val, idx: &Val, from_end: bool) -> Val {
    let at = |i: i64, len: usize| {
        let len = i64::try_from(len).unwrap_or(0);
        usize::try_from(if from_end && i < 0 { len + i } else { i }).ok()
    };
    match (&obj.shape, &idx.shape) {
        (Shape::Dict(items), Shape::Str(k)) => items
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_default(),
        (Shape::List(items), Shape::Num(i)) => at(*i, items.len())
            .and_then(|k| items.get(k))
            .cloned()
            .unwrap_or_default(),
        (Shape::Str(s), Shape::Num(i)) => {
            let chars: Vec<char> = s.chars().collect();
            match at(*i, chars.len()).and_then(|k| chars.get(k)) {
                Some(c) => Val::folded(c.to_string(), "indexing"),
                None => Val::unknown(),
            }
        }
        _ => {
            let mut t = obj.deep_taint();
            t.join(&idx.taint);
            Val::tainted(t)
        }
    }
}

/// A call of a value that is not a known API: unknown, with the taint of the arguments
/// (`args`) and of the callee.
pub(crate) fn opaque_call(mut args: Taint, callee: &Val) -> Val {
    args.join(&callee.taint);
    Val::tainted(args)
}

/// A list joined into a string with `sep` (`sep.join(list)`, `list.join(sep)`): tainted as
/// the list, and as obfuscated when every element is a character or two; unknown when an
/// element is.
pub(crate) fn join_list(list: &Val, items: &[Val], sep: &str) -> Val {
    let texts: Option<Vec<String>> = items.iter().map(Val::text).collect();
    match texts {
        Some(t) => {
            let mut v = join_texts(&t, sep);
            v.taint = list.deep_taint();
            if items.iter().all(|i| i.text().is_some_and(|t| t.chars().count() <= 2)) {
                v.taint.bits |= taint::OBFUSCATED;
            }
            v
        }
        None => Val::tainted(list.deep_taint()),
    }
}

/// A list of byte values as (lossy UTF-8) text; `None` when an element is not a byte.
pub(crate) fn bytes_text(items: &[Val]) -> Option<String> {
    let bytes: Option<Vec<u8>> = items
        .iter()
        .map(|i| i.as_num().and_then(|n| u8::try_from(n).ok()))
        .collect();
    bytes.map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// `"%s-%d" % (a, b)`; `%c` takes a code point.
pub(crate) fn percent_format(f: &str, args: &Val) -> Option<String> {
    let list = match &args.shape {
        Shape::List(items) => items.clone(),
        _ => vec![args.clone()],
    };
    let mut it = list.into_iter();
    let mut out = String::new();
    let mut chars = f.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        // Flags and width are skipped.
        while chars
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | ' ' | '#' | '.'))
        {
            chars.next();
        }
        match chars.next()? {
            '%' => out.push('%'),
            's' | 'r' | 'd' | 'i' => out.push_str(&it.next()?.text()?),
            'c' => {
                let v = it.next()?;
                match v.as_num() {
                    Some(n) => out.push(char::from_u32(u32::try_from(n).ok()?)?),
                    None => out.push_str(&v.text()?),
                }
            }
            'x' => out.push_str(&format!("{:x}", it.next()?.as_num()?)),
            _ => return None,
        }
    }
    Some(out)
}

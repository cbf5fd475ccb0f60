//! Operations on values shared by the front-ends: concatenation, the binary operators,
//! integer arithmetic.

use crate::scan::code::value::{MAX_STR, Shape, Taint, Val};

/// Concatenation of values; unknown (with their taint) when one is not a string.
pub(crate) fn concat(vals: &[Val], how: &'static str) -> Val {
    let mut out = String::new();
    let mut t = Taint::default();
    let mut computed = vals.len() > 1;
    let mut unknown = false;
    for v in vals {
        t.join(&v.deep_taint());
        computed |= v.how.is_some();
        match v.text() {
            Some(s) => out.push_str(&s),
            None => {
                unknown = true;
                out.push('…');
            }
        }
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

/// A binary operation (`+`, `%`, `*`, `/`, and the integer operators).
pub(crate) fn binary(op: &str, l: Val, r: Val) -> Val {
    let mut t = l.deep_taint();
    t.join(&r.deep_taint());
    let v = match (op, &l.shape, &r.shape) {
        ("+", Shape::Str(_), Shape::Str(_)) => return concat(&[l, r], "concatenation"),
        ("+", Shape::List(a), Shape::List(b)) => Val {
            shape: Shape::List(a.iter().chain(b).cloned().collect()),
            ..Val::default()
        },
        ("*", Shape::Str(s), Shape::Num(k)) | ("*", Shape::Num(k), Shape::Str(s)) if (0..=64).contains(k) => {
            repeat(s, *k)
        }
        ("%", Shape::Str(f), _) => match crate::scan::code::python::percent_format(f, &r) {
            Some(s) => Val::folded(s, "format string"),
            None => Val::unknown(),
        },
        // `Path.home() / ".ssh"`: a path join.
        ("/", Shape::Str(a), Shape::Str(b)) => Val::folded(
            format!("{}/{}", a.trim_end_matches('/'), b.trim_start_matches('/')),
            "path join",
        ),
        (_, Shape::Num(a), Shape::Num(b)) => match int_op(op, *a, *b) {
            Some(x) => Val::num(x),
            None => Val::unknown(),
        },
        _ => Val::unknown(),
    };
    Val { taint: t, ..v }
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

//! Scalar types: how YAML 1.2's core schema reads a plain scalar (skillc's reading) and how
//! PyYAML's YAML 1.1 resolver would (for `SK012`, values other parsers read differently).

use std::ops::Range;

use super::{Scalar, ScalarType};

impl Scalar {
    /// The type under the YAML 1.2 core schema (quoted scalars are always strings).
    pub fn core_type(&self) -> ScalarType {
        if !self.plain {
            return ScalarType::Str;
        }
        core_schema_type(&self.value)
    }

    /// The type PyYAML (YAML 1.1) would give this scalar; `None` when it is a string there
    /// too. This is what `SK012` warns about.
    pub fn pyyaml_type(&self) -> Option<ScalarType> {
        if !self.plain {
            return None;
        }
        match pyyaml_schema_type(&self.value) {
            ScalarType::Str => None,
            t => Some(t),
        }
    }

    /// The value as JSON, typed by the YAML 1.2 core schema.
    pub fn to_json_typed(&self) -> serde_json::Value {
        let v = self.value.as_str();
        match self.core_type() {
            ScalarType::Null => serde_json::Value::Null,
            ScalarType::Bool => serde_json::Value::Bool(v.eq_ignore_ascii_case("true")),
            ScalarType::Int => parse_core_int(v)
                .map(serde_json::Value::from)
                .unwrap_or_else(|| serde_json::Value::String(v.to_owned())),
            ScalarType::Float => v
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(serde_json::Value::Number)
                .unwrap_or_else(|| serde_json::Value::String(v.to_owned())),
            ScalarType::Timestamp | ScalarType::Str => serde_json::Value::String(v.to_owned()),
        }
    }
}

/// Parses a YAML 1.2 core-schema integer (`12`, `-3`, `0o17`, `0x1F`).
pub fn parse_core_int(v: &str) -> Option<i64> {
    if let Some(h) = v.strip_prefix("0x") {
        return i64::from_str_radix(h, 16).ok();
    }
    if let Some(o) = v.strip_prefix("0o") {
        return i64::from_str_radix(o, 8).ok();
    }
    v.parse::<i64>().ok()
}

fn is_digits(s: &str, radix: u32) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_digit(radix))
}

fn strip_sign(s: &str) -> &str {
    s.strip_prefix(['-', '+']).unwrap_or(s)
}

/// YAML 1.2 core schema resolution (spec 1.2.2, section 10.3.2).
fn core_schema_type(v: &str) -> ScalarType {
    match v {
        "" | "~" | "null" | "Null" | "NULL" => return ScalarType::Null,
        "true" | "True" | "TRUE" | "false" | "False" | "FALSE" => return ScalarType::Bool,
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF" | ".nan" | ".NaN"
        | ".NAN" => return ScalarType::Float,
        _ => {}
    }
    if is_digits(strip_sign(v), 10)
        || v.strip_prefix("0o").is_some_and(|d| is_digits(d, 8))
        || v.strip_prefix("0x").is_some_and(|d| is_digits(d, 16))
    {
        return ScalarType::Int;
    }
    // [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
    let body = strip_sign(v);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some((int, frac)) => {
            (int.is_empty() && is_digits(frac, 10)) || (is_digits(int, 10) && (frac.is_empty() || is_digits(frac, 10)))
        }
        None => is_digits(mantissa, 10),
    };
    let exponent_ok = exponent.is_none_or(|e| is_digits(strip_sign(e), 10));
    if mantissa_ok && exponent_ok && (mantissa.contains('.') || exponent.is_some()) {
        return ScalarType::Float;
    }
    ScalarType::Str
}

/// PyYAML's implicit resolvers (`yaml/resolver.py`, YAML 1.1).
fn pyyaml_schema_type(v: &str) -> ScalarType {
    match v {
        "yes" | "Yes" | "YES" | "no" | "No" | "NO" | "true" | "True" | "TRUE" | "false" | "False" | "FALSE" | "on"
        | "On" | "ON" | "off" | "Off" | "OFF" => return ScalarType::Bool,
        "" | "~" | "null" | "Null" | "NULL" => return ScalarType::Null,
        _ => {}
    }
    let digits_ = |s: &str, radix: u32| !s.is_empty() && s.chars().all(|c| c == '_' || c.is_digit(radix));
    let body = strip_sign(v);
    // Integers: 0b…, 0…(octal), decimal, 0x…, sexagesimal.
    if body.strip_prefix("0b").is_some_and(|d| digits_(d, 2))
        || body.strip_prefix("0x").is_some_and(|d| digits_(d, 16))
        || (body.starts_with('0') && digits_(body, 8))
        || (body.starts_with(|c: char| c.is_ascii_digit())
            && digits_(body, 10)
            && (body == "0" || !body.starts_with('0')))
        || is_sexagesimal(body, false)
    {
        return ScalarType::Int;
    }
    // Floats: [-+]?([0-9][0-9_]*)?\.[0-9_]*([eE][-+][0-9]+)? , sexagesimal, .inf, .nan
    if matches!(body, ".inf" | ".Inf" | ".INF") || matches!(v, ".nan" | ".NaN" | ".NAN") || is_sexagesimal(body, true) {
        return ScalarType::Float;
    }
    if let Some((int, rest)) = body.split_once('.') {
        let int_ok = int.is_empty() || (int.starts_with(|c: char| c.is_ascii_digit()) && digits_(int, 10));
        let (frac, exp) = match rest.find(['e', 'E']) {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None => (rest, None),
        };
        let frac_ok = frac.chars().all(|c| c == '_' || c.is_ascii_digit());
        let exp_ok = exp.is_none_or(|e| (e.starts_with(['-', '+'])) && is_digits(&e[1..], 10));
        let non_empty = !(int.is_empty() && frac.is_empty());
        if int_ok
            && frac_ok
            && exp_ok
            && non_empty
            && (!int.is_empty() || frac.starts_with(|c: char| c.is_ascii_digit()))
        {
            return ScalarType::Float;
        }
    }
    if is_pyyaml_timestamp(v) {
        return ScalarType::Timestamp;
    }
    ScalarType::Str
}

/// `[1-9][0-9_]*(:[0-5]?[0-9])+` (int) or the same followed by `\.[0-9_]*` (float).
fn is_sexagesimal(v: &str, float: bool) -> bool {
    let (v, frac) = if float {
        match v.rsplit_once('.') {
            Some((a, f)) if f.chars().all(|c| c == '_' || c.is_ascii_digit()) => (a, true),
            _ => return false,
        }
    } else {
        (v, false)
    };
    let _ = frac;
    let mut parts = v.split(':');
    let Some(head) = parts.next() else { return false };
    let head_ok = if float {
        head.starts_with(|c: char| c.is_ascii_digit()) && head.chars().all(|c| c == '_' || c.is_ascii_digit())
    } else {
        head.starts_with(|c: char| ('1'..='9').contains(&c)) && head.chars().all(|c| c == '_' || c.is_ascii_digit())
    };
    let mut count = 0;
    for p in parts {
        count += 1;
        let ok = matches!(p.len(), 1 | 2)
            && p.chars().all(|c| c.is_ascii_digit())
            && (p.len() == 1 || p.as_bytes()[0] <= b'5');
        if !ok {
            return false;
        }
    }
    head_ok && count > 0
}

/// `YYYY-MM-DD` or `YYYY-M-D[Tt ]h:mm:ss[.f][ ][Z|±h[:mm]]`.
fn is_pyyaml_timestamp(v: &str) -> bool {
    let b = v.as_bytes();
    let digits = |r: Range<usize>| b.get(r.clone()).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    if b.len() == 10 && digits(0..4) && b[4] == b'-' && digits(5..7) && b[7] == b'-' && digits(8..10) {
        return true;
    }
    // The long form: date part with 1–2 digit month/day, then a time.
    let Some((date, time)) = v.split_once(['T', 't', ' ']) else {
        return false;
    };
    let mut d = date.split('-');
    let (Some(y), Some(m), Some(dd), None) = (d.next(), d.next(), d.next(), d.next()) else {
        return false;
    };
    let num = |s: &str, lo: usize, hi: usize| (lo..=hi).contains(&s.len()) && s.bytes().all(|c| c.is_ascii_digit());
    if !(num(y, 4, 4) && num(m, 1, 2) && num(dd, 1, 2)) {
        return false;
    }
    let time = time.trim_start();
    let mut t = time.splitn(3, ':');
    let (Some(h), Some(mi), Some(rest)) = (t.next(), t.next(), t.next()) else {
        return false;
    };
    num(h, 1, 2) && num(mi, 2, 2) && rest.len() >= 2 && rest.as_bytes()[..2].iter().all(u8::is_ascii_digit)
}

//! Money and the cost estimate of one auxiliary-model call (RUNTIME.md §3, "Budget"; seed 002
//! §7.2). Pure.
//!
//! Amounts are whole micro-dollars ([`Usd`]), so sums and comparisons are exact and a plan
//! made twice is the same byte for byte. A call's estimate is taken *before* it is made, from
//! the size of the request and the output cap (never the typical output): input tokens are
//! `ceil(bytes / 3)` — a conservative count (English averages four bytes a token, code and
//! JSON nearer three) — and output tokens are the call's `max_output_tokens`.

use std::fmt;

/// An amount in micro-dollars (1 USD = 1,000,000).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Usd(pub u64);

impl Usd {
    /// Zero.
    pub const ZERO: Usd = Usd(0);

    /// From a number of dollars (rounded to the micro-dollar); `None` when negative, not
    /// finite, or above a million dollars.
    pub fn from_dollars(v: f64) -> Option<Usd> {
        (v.is_finite() && (0.0..=1e6).contains(&v)).then(|| Usd((v * 1e6).round() as u64))
    }

    /// Parses a decimal string of dollars (`"0.5"`, `"0.012345"`), as state.json and the
    /// events write them.
    pub fn parse(s: &str) -> Option<Usd> {
        let (whole, frac) = s.trim().split_once('.').unwrap_or((s.trim(), ""));
        if whole.is_empty() || frac.len() > 6 || !whole.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
            return None;
        }
        let whole: u64 = whole.parse().ok()?;
        let frac: u64 = format!("{frac:0<6}").parse().ok()?;
        whole.checked_mul(1_000_000)?.checked_add(frac).map(Usd)
    }

    /// The sum, saturating.
    pub fn plus(self, other: Usd) -> Usd {
        Usd(self.0.saturating_add(other.0))
    }
}

impl fmt::Display for Usd {
    /// Dollars with six decimals: `0.012345`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:06}", self.0 / 1_000_000, self.0 % 1_000_000)
    }
}

/// Prices of the auxiliary model, per million tokens (`[curator] pricing`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pricing {
    /// Input price, micro-dollars per million tokens (= dollars per token × 10¹²).
    pub input_per_mtok: Usd,
    /// Output price, the same unit.
    pub output_per_mtok: Usd,
}

impl Default for Pricing {
    /// 1 USD per million input tokens, 5 USD per million output tokens (a small hosted model's
    /// list price; set the real one in `[curator] pricing`).
    fn default() -> Self {
        Pricing {
            input_per_mtok: Usd(1_000_000),
            output_per_mtok: Usd(5_000_000),
        }
    }
}

/// Input tokens estimated for a request of `bytes` bytes: `ceil(bytes / 3)`.
pub fn input_tokens(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(3)
}

impl Pricing {
    /// What `input` and `output` tokens cost, rounded up to the micro-dollar.
    pub fn cost(&self, input: u64, output: u64) -> Usd {
        let pico = u128::from(input) * u128::from(self.input_per_mtok.0)
            + u128::from(output) * u128::from(self.output_per_mtok.0);
        Usd(u64::try_from(pico.div_ceil(1_000_000)).unwrap_or(u64::MAX))
    }

    /// The estimate of a call: a request of `request_bytes` bytes and `max_output_tokens`.
    pub fn estimate(&self, request_bytes: usize, max_output_tokens: u32) -> Usd {
        self.cost(input_tokens(request_bytes), u64::from(max_output_tokens))
    }
}

/// Which cap, if any, a call estimated at `estimate` would pass, given what this run and
/// today (UTC) already spent. The day cap is checked first.
pub fn would_pass(
    estimate: Usd,
    run: Usd,
    day: Usd,
    per_run_max: Usd,
    per_day_max: Usd,
) -> Option<crate::events::Reason> {
    if day.plus(estimate) > per_day_max {
        Some(crate::events::Reason::PerDayCap)
    } else if run.plus(estimate) > per_run_max {
        Some(crate::events::Reason::PerRunCap)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Reason;

    #[test]
    fn amounts_are_exact_micro_dollars() {
        assert_eq!(Usd::from_dollars(0.5), Some(Usd(500_000)));
        assert_eq!(Usd::from_dollars(-1.0), None);
        assert_eq!(Usd(1_234_567).to_string(), "1.234567");
        assert_eq!(Usd::parse("0.5"), Some(Usd(500_000)));
        assert_eq!(Usd::parse("1.234567"), Some(Usd(1_234_567)));
        assert_eq!(Usd::parse("1.2345678"), None);
        assert_eq!(Usd::parse("-1"), None);
        assert_eq!(Usd::parse("12"), Some(Usd(12_000_000)));
    }

    #[test]
    fn estimate_uses_request_size_and_output_cap() {
        let p = Pricing::default();
        // 3000 bytes -> 1000 tokens at $1/Mtok = $0.001; 1000 output tokens at $5/Mtok = $0.005.
        assert_eq!(p.estimate(3000, 1000), Usd(6000));
        assert_eq!(p.estimate(1, 0), Usd(1));
    }

    #[test]
    fn caps_stop_before_a_call_that_would_pass_them() {
        let cap = |e, r, d| would_pass(Usd(e), Usd(r), Usd(d), Usd(500), Usd(1000));
        assert_eq!(cap(100, 400, 400), None);
        assert_eq!(cap(101, 400, 400), Some(Reason::PerRunCap));
        assert_eq!(cap(1, 0, 1000), Some(Reason::PerDayCap));
        assert_eq!(cap(0, 0, 1000), None);
    }
}

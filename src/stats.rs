//! The exact per-key accumulator and the rounding rules.
//!
//! A value is an integer number of *units*, a unit being 10^-scale: the
//! challenge's text and Parquet values are tenths (scale 1), a delimited
//! file's values are at the scale of its most precise value (0 to
//! [`MAX_SCALE`]). Minimum and maximum are `i64`, sums `i128` and counts
//! `u64`, so accumulation is exact; floating point appears only in the
//! mean of tenths, where it follows the official reference implementation
//! step by step, because some exact ties are decided by its `f64` rounding
//! and the official expected outputs follow that.

use crate::detail::{Counts, Detail, Kept, Squares};

/// The largest magnitude of a challenge or Parquet value, in tenths
/// (99,999,999.9): text values lie in `-999..=999`, Parquet values reach
/// this.
pub const VALUE_LIMIT: i64 = 999_999_999;

/// The most digits after the decimal point a value may have.
pub const MAX_SCALE: u32 = 9;

/// The most significant digits a delimited file's value may have, and the
/// most digits a value may have at its file's scale: `DECIMAL(18, s)`.
pub const MAX_DIGITS: u32 = 18;

/// The largest magnitude of a value in units, whatever its scale: 18
/// digits.
pub const MAX_UNITS: i64 = 10i64.pow(MAX_DIGITS) - 1;

/// The longest key of a delimited file, in bytes (composite keys joined).
pub const MAX_KEY_LEN: usize = 1024;

/// Minimum, maximum, sum and count of one key's values, in units, how
/// many of its rows had no value, and the [`Detail`] a statistic beyond
/// those needs, when kept.
///
/// A key whose rows all lacked a value has a count of 0, `min` at
/// `i64::MAX` and `max` at `i64::MIN`, which [`merge`](Stats::merge) folds
/// away.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    /// Smallest value seen, in units.
    pub min: i64,
    /// Largest value seen, in units.
    pub max: i64,
    /// Exact sum of all values, in units.
    pub sum: i128,
    /// Number of values.
    pub count: u64,
    /// Number of rows whose value was missing (a delimited file's empty or
    /// `NA` cells); always 0 for the challenge's text and Parquet.
    pub missing: u64,
    /// The sum of squares and the counts per value, when kept
    /// ([`Kept`]); boxed, so that keys that keep none pay one pointer.
    pub detail: Option<Box<Detail>>,
}

impl Default for Stats {
    /// The stats of no rows: what any stats merge into unchanged.
    fn default() -> Stats {
        Stats {
            min: i64::MAX,
            max: i64::MIN,
            sum: 0,
            count: 0,
            missing: 0,
            detail: None,
        }
    }
}

impl Stats {
    /// Stats of a single value (in units).
    #[inline]
    pub fn new(value: impl Into<i64>) -> Stats {
        let value = value.into();
        Stats {
            min: value,
            max: value,
            sum: value as i128,
            count: 1,
            missing: 0,
            detail: None,
        }
    }

    /// Stats of a single value keeping what `kept` says.
    #[inline]
    pub fn keeping(kept: Kept, value: i64) -> Stats {
        let mut stats = Stats::new(value);
        stats.detail = Detail::empty(kept);
        if let Some(d) = &mut stats.detail {
            d.add(value);
        }
        stats
    }

    /// The stats of the values `counts` counts (at least one), keeping
    /// them and their sum of squares: all a key needs to keep while its
    /// rows arrive, when it keeps its counts.
    pub fn of_counts(counts: Counts) -> Stats {
        let mut stats = Stats::default();
        let mut squares = Squares::default();
        counts.visit(|v, n| {
            stats.min = stats.min.min(v);
            stats.max = stats.max.max(v);
            stats.sum += i128::from(v) * i128::from(n);
            stats.count += n;
            squares.add(v.unsigned_abs().into(), n);
        });
        stats.detail = Some(Box::new(Detail {
            squares,
            counts: Some(counts),
        }));
        stats
    }

    /// What the stats keep.
    pub fn kept(&self) -> Kept {
        self.detail.as_ref().map_or(Kept::Basic, |d| d.kept())
    }

    /// The stats of `count` values adding up to `sum`, from `min` to `max`.
    #[inline]
    pub fn of(min: i64, max: i64, sum: i128, count: u64) -> Stats {
        Stats {
            min,
            max,
            sum,
            count,
            missing: 0,
            detail: None,
        }
    }

    /// Stats of one row without a value.
    pub fn missing() -> Stats {
        Stats {
            min: i64::MAX,
            max: i64::MIN,
            sum: 0,
            count: 0,
            missing: 1,
            detail: None,
        }
    }

    /// Stats of one row without a value, keeping what `kept` says.
    pub fn missing_keeping(kept: Kept) -> Stats {
        Stats {
            detail: Detail::empty(kept),
            ..Stats::missing()
        }
    }

    /// Adds one value (in units).
    #[inline]
    pub fn add(&mut self, value: impl Into<i64>) {
        let value = value.into();
        self.min = self.min.min(value);
        self.max = self.max.max(value);
        self.sum += value as i128;
        self.count += 1;
        if let Some(d) = &mut self.detail {
            d.add(value);
        }
    }

    /// Folds another accumulator for the same key into this one.
    #[inline]
    pub fn merge(&mut self, other: &Stats) {
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum += other.sum;
        self.count += other.count;
        self.missing += other.missing;
        crate::detail::both(&mut self.detail, other.detail.as_ref(), |a, b| a.merge(b));
    }

    /// The mean in tenths, rounded as the official reference does.
    ///
    /// The reference computes `Math.round((sum / 10.0) / count * 10.0)` in
    /// `f64`. Java's `Math.round` is `floor(x)` plus one when
    /// `x - floor(x) >= 0.5`: ties go toward +∞, and unlike `(x + 0.5).floor()` it does not
    /// err just below one half (0.49999999999999994). `f64::round` would
    /// round -12.5 away from zero, so neither shortcut is used.
    pub fn mean_tenths(&self) -> i64 {
        debug_assert!(self.count > 0);
        let x = (self.sum as f64 / 10.0) / self.count as f64 * 10.0;
        let f = x.floor();
        let t = if x - f >= 0.5 { f + 1.0 } else { f };
        t as i64
    }

    /// The mean at `shown` decimals of values at `scale` decimals, or
    /// `None` without values. Tenths shown as tenths follow the reference
    /// ([`mean_tenths`](Stats::mean_tenths)); every other scale rounds the
    /// exact quotient half toward +∞: `floor(sum / count + 1/2)`.
    pub fn mean(&self, scale: u32, shown: u32) -> Option<i64> {
        if self.count == 0 {
            return None;
        }
        if scale == 1 && shown == 1 {
            return Some(self.mean_tenths());
        }
        let count = i128::from(self.count);
        let (num, den) = match shown.checked_sub(scale) {
            Some(up) => (self.sum.checked_mul(10i128.pow(up))?, count),
            None => (self.sum, count.checked_mul(10i128.pow(scale - shown))?),
        };
        i64::try_from(half_up(num, den)).ok()
    }
}

/// A number of units of 10^-scale, shown as a decimal with `scale` digits
/// after the point (no point for scale 0); zero is never `-0`.
#[derive(Clone, Copy, Debug)]
pub struct Units(pub i128, pub u32);

impl std::fmt::Display for Units {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Units(v, scale) = *self;
        let sign = if v < 0 { "-" } else { "" };
        let (a, p) = (v.unsigned_abs(), 10u128.pow(scale));
        match scale {
            0 => write!(f, "{sign}{a}"),
            _ => write!(f, "{sign}{}.{:0w$}", a / p, a % p, w = scale as usize),
        }
    }
}

impl Stats {
    /// Min, mean and max in units of 10^-`shown` of values in units of
    /// 10^-`scale`, as every output shows them: min and max padded or
    /// rounded half toward +∞, the mean by [`mean`](Stats::mean); `None`
    /// without values, or where a value does not fit 18 digits so (which
    /// [`Summary::with_decimals`](crate::Summary::with_decimals) refuses).
    pub fn shown(&self, scale: u32, shown: u32) -> Option<[i64; 3]> {
        let min = rescale(self.min, scale, shown)?;
        let max = rescale(self.max, scale, shown)?;
        Some([min, self.mean(scale, shown)?, max])
    }
}

/// `num / den` rounded half toward +∞, for `den > 0`: the floor of the
/// quotient, plus one when the remainder is at least half of `den`.
pub fn half_up(num: i128, den: i128) -> i128 {
    let (q, r) = (num.div_euclid(den), num.rem_euclid(den));
    q + i128::from(r >= den - r)
}

/// `units` at `scale` decimals as units at `shown` decimals: exact when
/// `shown >= scale` (`None` past 18 digits), else rounded half toward +∞.
pub fn rescale(units: i64, scale: u32, shown: u32) -> Option<i64> {
    match shown.checked_sub(scale) {
        Some(up) => (units.checked_mul(10i64.checked_pow(up)?)).filter(|v| v.abs() <= MAX_UNITS),
        None => {
            let den = 10i128.pow(scale - shown);
            i64::try_from(half_up(i128::from(units), den)).ok()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean(sum: i64, count: u64) -> i64 {
        Stats::of(0, 0, sum.into(), count).mean_tenths()
    }

    #[test]
    fn ties_go_toward_positive_infinity() {
        // -1.25 → -1.2 and 1.25 → 1.3: sums of 2 rows.
        assert_eq!(mean(-25, 2), -12);
        assert_eq!(mean(25, 2), 13);
        // -0.05 → 0.0 (printed without a sign).
        assert_eq!(mean(-1, 2), 0);
    }

    #[test]
    fn f64_steps_decide_exact_ties_like_the_reference() {
        // Exactly -49.55; the f64 steps land just below it, so -49.6.
        assert_eq!(mean(-2973, 6), -496);
        // Exactly 0.05; the f64 steps land just below it, so 0.0.
        assert_eq!(mean(51, 102), 0);
    }

    #[test]
    fn merge_and_add_agree() {
        let mut a = Stats::new(5);
        a.add(-7);
        let mut b = Stats::new(12);
        b.add(0);
        a.merge(&b);
        assert_eq!(a, Stats::of(-7, 12, 10, 4));
    }
}

//! The exact per-station accumulator and the official rounding rule.
//!
//! Values are integer tenths, sums are `i64` and counts `u64`, so
//! accumulation is exact for any file whose row count fits in a `u64`.
//! Floating point appears only when the mean is printed, and there it
//! follows the official reference implementation step by step, because
//! some exact ties are decided by its `f64` rounding and the official
//! expected outputs follow that.

/// The largest magnitude of a value, in tenths (99,999,999.9), whatever
/// the input: text values lie in `-999..=999`, Parquet values reach this.
/// A sum of 2^33 such values still fits in 64 bits.
pub const VALUE_LIMIT: i64 = 999_999_999;

/// Minimum, maximum, sum and count of one station's values, in tenths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stats {
    /// Smallest value seen, in tenths.
    pub min: i64,
    /// Largest value seen, in tenths.
    pub max: i64,
    /// Exact sum of all values, in tenths.
    pub sum: i64,
    /// Number of values.
    pub count: u64,
}

impl Stats {
    /// Stats of a single value (in tenths).
    #[inline]
    pub fn new(value: impl Into<i64>) -> Stats {
        let value = value.into();
        Stats {
            min: value,
            max: value,
            sum: value,
            count: 1,
        }
    }

    /// Adds one value (in tenths).
    #[inline]
    pub fn add(&mut self, value: impl Into<i64>) {
        let value = value.into();
        self.min = self.min.min(value);
        self.max = self.max.max(value);
        self.sum += value;
        self.count += 1;
    }

    /// Folds another accumulator for the same station into this one.
    #[inline]
    pub fn merge(&mut self, other: &Stats) {
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum += other.sum;
        self.count += other.count;
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean(sum: i64, count: u64) -> i64 {
        Stats {
            min: 0,
            max: 0,
            sum,
            count,
        }
        .mean_tenths()
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
        assert_eq!(
            a,
            Stats {
                min: -7,
                max: 12,
                sum: 10,
                count: 4
            }
        );
    }
}

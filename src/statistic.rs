//! The statistics an output can show (`--stats`), what each needs a key
//! to keep, and the rule that computes and rounds each from the key's
//! [`Stats`], exactly.
//!
//! Every statistic is computed from integers: the count, the exact sum,
//! the sum of squares in 192 bits, and the counts per value. Each value
//! shown is in units of 10^-`shown` (the decimals shown) of values in
//! units of 10^-`scale`:
//!
//! - `count`: the number of values.
//! - `sum`: exact; rounded half toward +∞ if fewer decimals are shown.
//! - `min`, `max`: as they are; rounded half toward +∞ if fewer decimals
//!   are shown.
//! - `mean`: [`Stats::mean`]: tenths shown as tenths follow the official
//!   reference's `f64` steps; every other scale rounds the exact quotient
//!   half toward +∞.
//! - `stddev` (sample, n − 1, as SQL's `stddev_samp`) and `stddev_pop`
//!   (n): the square root of `(n·Σv² − (Σv)²) / (n·(n − 1))` (or `/ n²`),
//!   rounded half up from the exact rational, never through a float. A
//!   key of one value has no sample standard deviation.
//! - `median` and `pN`: discrete quantiles, SQL's `PERCENTILE_DISC` and
//!   DuckDB's `quantile_disc`: the smallest value whose share of the
//!   values at or below it is at least q (the sorted values' element
//!   `ceil(q·n)`, counted from 1), so every result is a value that
//!   occurs; `median` is `p50`, the lower middle value of an even count.
//!
//! A statistic of a key without values is empty (`-`, an empty CSV cell,
//! JSON's `null`), but for its count, 0.

use std::fmt;

use num_bigint::BigUint;
use num_integer::Roots;
use num_traits::{CheckedMul, One};

use crate::detail::Kept;
use crate::stats::{half_up, rescale, Stats};

/// The most decimals a percentile's N may have (`p99.999999`).
const MAX_PERCENTILE_DECIMALS: u32 = 6;

/// One statistic an output can show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Statistic {
    /// The number of values.
    Count,
    /// Their exact sum.
    Sum,
    /// The smallest.
    Min,
    /// The largest.
    Max,
    /// The mean.
    Mean,
    /// The sample standard deviation (n − 1).
    Stddev,
    /// The population standard deviation (n).
    StddevPop,
    /// The discrete quantile `numerator / denominator`, between 0 and 1
    /// exclusive; `median` when that is 1/2 and so named.
    Quantile {
        /// q's numerator.
        numerator: u64,
        /// q's denominator, a power of 10 (or 2, for `median`).
        denominator: u64,
    },
}

/// A statistic's value in shown units: a count, or a number of units of
/// 10^-`shown`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown {
    /// A number of values.
    Count(u64),
    /// A number of shown units.
    Units(i128),
}

impl Statistic {
    /// What a key must keep for the statistic.
    pub fn kept(self) -> Kept {
        match self {
            Statistic::Stddev | Statistic::StddevPop => Kept::Squares,
            Statistic::Quantile { .. } => Kept::Counts,
            _ => Kept::Basic,
        }
    }

    /// The statistic named `name`: `count`, `sum`, `min`, `max`, `mean`,
    /// `stddev`, `stddev_pop`, `median` or `pN` for N in (0, 100) with up
    /// to six decimals.
    pub fn parse(name: &str) -> Option<Statistic> {
        Some(match name {
            "count" => Statistic::Count,
            "sum" => Statistic::Sum,
            "min" => Statistic::Min,
            "max" => Statistic::Max,
            "mean" => Statistic::Mean,
            "stddev" => Statistic::Stddev,
            "stddev_pop" => Statistic::StddevPop,
            "median" => Statistic::Quantile {
                numerator: 1,
                denominator: 2,
            },
            _ => {
                let n = name.strip_prefix('p')?;
                let (whole, decimals) = n.split_once('.').unwrap_or((n, ""));
                let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
                let plain = !whole.is_empty() && whole.len() <= 2 && digits(whole);
                let short = decimals.len() as u32 <= MAX_PERCENTILE_DECIMALS;
                if !plain || !short || !digits(decimals) || n.ends_with('.') {
                    return None;
                }
                let numerator: u64 = format!("{whole}{decimals}").parse().ok()?;
                let denominator = 100 * 10u64.pow(decimals.len() as u32);
                if numerator == 0 || numerator >= denominator {
                    return None;
                }
                Statistic::Quantile {
                    numerator,
                    denominator,
                }
            }
        })
    }

    /// The statistic of `s`, whose values are in units of 10^-`scale`, in
    /// units of 10^-`shown`; `None` where it has none (no values, or one
    /// for a sample standard deviation) or where the key did not keep what
    /// it needs.
    pub fn of(self, s: &Stats, scale: u32, shown: u32) -> Option<Shown> {
        if self == Statistic::Count {
            return Some(Shown::Count(s.count));
        }
        if s.count == 0 {
            return None;
        }
        let units = |v: i64| rescale(v, scale, shown).map(|v| Shown::Units(v.into()));
        match self {
            Statistic::Count => unreachable!("counted above"),
            Statistic::Min => units(s.min),
            Statistic::Max => units(s.max),
            Statistic::Mean => s.mean(scale, shown).map(|v| Shown::Units(v.into())),
            Statistic::Sum => {
                let sum = match shown.checked_sub(scale) {
                    Some(up) => s.sum.checked_mul(10i128.checked_pow(up)?)?,
                    None => half_up(s.sum, 10i128.pow(scale - shown)),
                };
                Some(Shown::Units(sum))
            }
            Statistic::Stddev | Statistic::StddevPop => {
                let sample = self == Statistic::Stddev;
                stddev(s, scale, shown, sample).map(Shown::Units)
            }
            Statistic::Quantile {
                numerator,
                denominator,
            } => {
                let counts = s.detail.as_ref()?.counts.as_ref()?;
                // ceil(q·n): q < 1 with at most 8 digits, n < 2^64.
                let n = u128::from(s.count);
                let rank = (u128::from(numerator) * n).div_ceil(u128::from(denominator));
                units(counts.at_rank(rank)?)
            }
        }
    }
}

impl fmt::Display for Statistic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match *self {
            Statistic::Count => "count",
            Statistic::Sum => "sum",
            Statistic::Min => "min",
            Statistic::Max => "max",
            Statistic::Mean => "mean",
            Statistic::Stddev => "stddev",
            Statistic::StddevPop => "stddev_pop",
            Statistic::Quantile {
                numerator: 1,
                denominator: 2,
            } => "median",
            Statistic::Quantile {
                numerator,
                denominator,
            } => {
                // N percent with the decimals its denominator has.
                let decimals = (denominator / 100).ilog10() as usize;
                let p = denominator / 100;
                return match decimals {
                    0 => write!(f, "p{numerator}"),
                    _ => write!(f, "p{}.{:0decimals$}", numerator / p, numerator % p),
                };
            }
        };
        f.write_str(name)
    }
}

/// The standard deviation of `s` (sample or population) in units of
/// 10^-`shown`, rounded half up; `None` without two values for a sample
/// or without a kept sum of squares.
fn stddev(s: &Stats, scale: u32, shown: u32, sample: bool) -> Option<i128> {
    let squares = s.detail.as_ref()?.squares;
    let n = s.count;
    if n < 1 + u64::from(sample) {
        return None;
    }
    // The variance is num / den, in units squared; shown units are
    // 10^(shown − scale) times more, so their squares 10^(2·(shown −
    // scale)) times more.
    let (up, down) = match shown.checked_sub(scale) {
        Some(up) => (2 * up, 0),
        None => (0, 2 * (scale - shown)),
    };
    let den_n = if sample { n - 1 } else { n };
    let narrow = || -> Option<u128> {
        let n = u128::from(n);
        let spread = n
            .checked_mul(squares.to_u128()?)?
            .checked_sub(s.sum.unsigned_abs().checked_pow(2)?)?;
        let num = spread.checked_mul(10u128.checked_pow(up)?)?;
        let den = n
            .checked_mul(u128::from(den_n))?
            .checked_mul(10u128.checked_pow(down)?)?;
        root_half_up(&num, &den)
    };
    let root = match narrow() {
        Some(root) => root,
        None => {
            let n = BigUint::from(n);
            let sum = BigUint::from(s.sum.unsigned_abs());
            let num = (&n * squares.to_big() - &sum * &sum) * BigUint::from(10u32).pow(up);
            let den = n * BigUint::from(den_n) * BigUint::from(10u32).pow(down);
            let root = root_half_up(&num, &den).expect("big integers do not overflow");
            u128::try_from(root).ok()?
        }
    };
    i128::try_from(root).ok()
}

/// `sqrt(num / den)` rounded half up, for `den > 0`: the integer root of
/// the quotient's floor, plus one when the root is at least half past it,
/// `4·num >= (2·m + 1)²·den`; `None` if a product overflows `T`.
fn root_half_up<T>(num: &T, den: &T) -> Option<T>
where
    T: Roots + CheckedMul + One + Clone + Ord + From<u8>,
    for<'a> &'a T: std::ops::Div<&'a T, Output = T> + std::ops::Add<&'a T, Output = T>,
{
    let m = (num / den).sqrt();
    let odd = &(&m + &m) + &T::one();
    let needed = odd.checked_mul(&odd)?.checked_mul(den)?;
    let have = num.checked_mul(&T::from(4))?;
    Some(if have >= needed { &m + &T::one() } else { m })
}

/// The statistics an output shows, in order (`--stats min,median,max`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statistics(Vec<Statistic>);

/// A list of statistics that cannot be shown.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StatisticsError {
    /// A name that is no statistic.
    #[error(
        "unknown statistic {name:?}: expected count, sum, min, max, mean, stddev, stddev_pop, \
         median or pN with N in (0, 100), e.g. p99.9"
    )]
    Unknown {
        /// The name given.
        name: String,
    },
    /// A statistic named twice: its two columns would share one name.
    #[error("statistic {name:?} asked twice: expected each statistic once")]
    Repeated {
        /// The name given.
        name: String,
    },
    /// No statistic at all.
    #[error("no statistic asked: expected a comma-separated list, e.g. min,median,p99,max")]
    Empty,
    /// A statistic the summary's stations do not keep what it needs for.
    #[error(
        "{statistic} needs each key's {}, which this summary does not keep \
         (aggregate, or make the partials, with it asked)",
        match kept { Kept::Counts => "counts per value", _ => "sum of squares" }
    )]
    NotKept {
        /// The statistic.
        statistic: String,
        /// What it needs kept.
        kept: Kept,
    },
}

impl Statistics {
    /// Min, mean and max: the official output's.
    pub fn official() -> Statistics {
        Statistics(vec![Statistic::Min, Statistic::Mean, Statistic::Max])
    }

    /// The statistics named in the comma-separated `list`, in order.
    pub fn parse(list: &str) -> Result<Statistics, StatisticsError> {
        let names = list.split(',').map(str::trim).filter(|n| !n.is_empty());
        let stats = names
            .map(|name| {
                Statistic::parse(name).ok_or_else(|| StatisticsError::Unknown {
                    name: name.to_string(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(k) = (1..stats.len()).find(|&k| stats[..k].contains(&stats[k])) {
            return Err(StatisticsError::Repeated {
                name: stats[k].to_string(),
            });
        }
        match stats.is_empty() {
            true => Err(StatisticsError::Empty),
            false => Ok(Statistics(stats)),
        }
    }

    /// The statistics, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Statistic> + '_ {
        self.0.iter().copied()
    }

    /// What a key must keep for every statistic.
    pub fn kept(&self) -> Kept {
        self.iter().map(Statistic::kept).max().unwrap_or_default()
    }

    /// The first statistic that needs more than `kept`, if any.
    pub fn needing(&self, kept: Kept) -> Option<Statistic> {
        self.iter().find(|s| s.kept() > kept)
    }
}

impl fmt::Display for Statistics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{s}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;

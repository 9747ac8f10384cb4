//! What a key keeps beyond its min, max, sum and count when a statistic
//! needs it ([`Kept`]): the sum of its values' squares, for the standard
//! deviation, and how many times each distinct value occurs, for the
//! median and percentiles ([`Detail`]).
//!
//! Counts per value ([`Counts`], in `counts`) grow with the distinct
//! values, not with the rows past a key's first few, and merge exactly.

mod counts;
mod pool;

pub use counts::Counts;
pub(crate) use counts::RAW;
pub(crate) use pool::{Chain, Pool};

/// What each key keeps, from the least to the most: every level keeps
/// what the ones below it do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kept {
    /// Min, max, sum and count.
    #[default]
    Basic,
    /// And the sum of the values' squares (the standard deviations).
    Squares,
    /// And the count of each distinct value (the median and percentiles).
    Counts,
}

impl Kept {
    /// The level's name in the partial format.
    pub fn name(self) -> &'static str {
        match self {
            Kept::Basic => "basic",
            Kept::Squares => "squares",
            Kept::Counts => "counts",
        }
    }

    /// The level named `name` in the partial format.
    pub fn from_name(name: &str) -> Option<Kept> {
        [Kept::Basic, Kept::Squares, Kept::Counts]
            .into_iter()
            .find(|k| k.name() == name)
    }
}

/// A key's sum of squares and, when kept, its counts per value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Detail {
    /// The sum of the squares of the values, in units squared.
    pub squares: Squares,
    /// How many times each distinct value occurs, when kept.
    pub counts: Option<Counts>,
}

impl Detail {
    /// The detail of no values, keeping what `kept` says (`None` for
    /// [`Kept::Basic`]).
    pub fn empty(kept: Kept) -> Option<Box<Detail>> {
        (kept > Kept::Basic).then(|| Box::new(Detail::new(kept == Kept::Counts)))
    }

    /// The detail of no values: a sum of squares, and counts per value if
    /// `counts`.
    pub fn new(counts: bool) -> Detail {
        Detail {
            squares: Squares::default(),
            counts: counts.then(Counts::default),
        }
    }

    /// What this detail keeps.
    pub fn kept(&self) -> Kept {
        match self.counts {
            Some(_) => Kept::Counts,
            None => Kept::Squares,
        }
    }

    /// Adds one value (in units).
    #[inline]
    pub fn add(&mut self, value: i64) {
        let a = u128::from(value.unsigned_abs());
        self.squares.add_wide(a * a, 0);
        if let Some(counts) = &mut self.counts {
            counts.add(value, 1);
        }
    }

    /// Adds `n` occurrences of a value.
    pub fn add_n(&mut self, value: i64, n: u64) {
        self.squares.add(value.unsigned_abs().into(), n);
        if let Some(counts) = &mut self.counts {
            counts.add(value, n);
        }
    }

    /// Folds another key's detail in, keeping what both keep.
    pub fn merge(&mut self, other: &Detail) {
        self.squares.merge(&other.squares);
        both(&mut self.counts, other.counts.as_ref(), Counts::merge);
    }

    /// The detail with what `kept` keeps at most: counts dropped below
    /// [`Kept::Counts`], the whole `None` below [`Kept::Squares`].
    pub fn within(this: Option<Box<Detail>>, kept: Kept) -> Option<Box<Detail>> {
        let mut d = this.filter(|_| kept > Kept::Basic)?;
        if kept < Kept::Counts {
            d.counts = None;
        }
        Some(d)
    }

    /// The detail of the same values times 10^`up`; the caller has checked
    /// that every value still fits 18 digits.
    pub fn rescale(&mut self, up: u32) {
        if up == 0 {
            return;
        }
        let factor = 10u64.pow(up);
        self.squares.multiply(factor);
        self.squares.multiply(factor);
        if let Some(counts) = &mut self.counts {
            let sorted = counts.sorted();
            let mut scaled = Counts::default();
            for (v, n) in sorted {
                scaled.add(v * factor as i64, n);
            }
            *counts = scaled;
        }
    }
}

/// Folds `other` into `this` with `merge` where both are there; else
/// `this` keeps nothing: what is kept after a merge is what both kept.
pub(crate) fn both<T>(this: &mut Option<T>, other: Option<&T>, merge: impl FnOnce(&mut T, &T)) {
    match (this.as_mut(), other) {
        (Some(a), Some(b)) => merge(a, b),
        _ => *this = None,
    }
}

/// A sum of squares, exact in 192 bits: a square of an 18-digit value
/// takes 120, and 2^64 of them fit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Squares {
    /// The low 128 bits.
    pub lo: u128,
    /// The bits above them.
    pub hi: u64,
}

impl Squares {
    /// Adds `n` squares of the magnitude `a`.
    #[inline]
    pub fn add(&mut self, a: u128, n: u64) {
        let square = a * a;
        match square.checked_mul(n.into()) {
            Some(total) => self.add_wide(total, 0),
            None => {
                let mut s = Squares { lo: square, hi: 0 };
                s.multiply(n);
                self.merge(&s);
            }
        }
    }

    /// Adds `hi · 2^128 + lo`.
    #[inline]
    fn add_wide(&mut self, lo: u128, hi: u64) {
        let (lo, carry) = self.lo.overflowing_add(lo);
        self.lo = lo;
        self.hi += hi + u64::from(carry);
    }

    /// Adds another sum.
    pub fn merge(&mut self, other: &Squares) {
        self.add_wide(other.lo, other.hi);
    }

    /// Multiplies the sum by `m`.
    pub fn multiply(&mut self, m: u64) {
        let (m, mask) = (u128::from(m), u128::from(u64::MAX));
        let low = (self.lo & mask) * m;
        let high = (self.lo >> 64) * m + (low >> 64);
        self.lo = (low & mask) | (high << 64);
        self.hi = self.hi * m as u64 + (high >> 64) as u64;
    }

    /// The sum as a big integer.
    pub fn to_big(self) -> num_bigint::BigUint {
        (num_bigint::BigUint::from(self.hi) << 128u32) + self.lo
    }

    /// The sum `big` is, if it fits 192 bits.
    pub fn from_big(big: &num_bigint::BigUint) -> Option<Squares> {
        if big.bits() > 192 {
            return None;
        }
        let digits = big.to_u64_digits();
        let digit = |i: usize| digits.get(i).copied().unwrap_or(0);
        Some(Squares {
            lo: u128::from(digit(0)) | u128::from(digit(1)) << 64,
            hi: digit(2),
        })
    }

    /// The sum, if it fits 128 bits.
    pub fn to_u128(self) -> Option<u128> {
        (self.hi == 0).then_some(self.lo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squares_are_exact_past_128_bits() {
        let a = 999_999_999_999_999_999u128;
        let mut s = Squares::default();
        s.add(a, u64::MAX);
        s.add(3, 1);
        let want = num_bigint::BigUint::from(a * a) * u64::MAX + 9u32;
        assert_eq!(s.to_big(), want);
        let mut t = Squares::default();
        t.add(a, 1 << 40);
        t.multiply(1_000_000);
        let want = num_bigint::BigUint::from(a * a) * (1u64 << 40) * 1_000_000u32;
        assert_eq!(t.to_big(), want);
        assert_eq!(Squares { lo: 7, hi: 0 }.to_u128(), Some(7));
    }

    #[test]
    fn a_rescaled_detail_holds_the_values_times_the_factor() {
        let mut d = Detail::empty(Kept::Counts).unwrap();
        for v in [-3, 5, 5, 12] {
            d.add(v);
        }
        d.rescale(2);
        assert_eq!(
            d.counts.as_ref().unwrap().sorted(),
            [(-300, 1), (500, 2), (1200, 1)]
        );
        assert_eq!(d.squares.to_u128(), Some(90_000 + 2 * 250_000 + 1_440_000));
        let mut e = *Detail::empty(Kept::Squares).unwrap();
        e.merge(&d);
        assert_eq!((e.kept(), d.kept()), (Kept::Squares, Kept::Counts));
    }
}

//! Normal values rounded to a tenth, drawn exactly from one random number.
//!
//! A value is `round(10 * (mean + sd * Z))` tenths with `Z` standard normal.
//! Writing `10 * mean = base + shift` (integer `base`, `shift` in `[0, 1)`),
//! that is `base + round(shift + 10 * sd * Z)`: the random part is an integer
//! offset whose distribution depends only on `(sd, shift)`. So instead of
//! Box-Muller, `log`, `sqrt` and rounding per row, each `(sd, shift)` gets a
//! table of the offset's exact probabilities (the normal density integrated
//! over each rounding interval), and a row draws from it with Walker's alias
//! method: one table load and one compare, no branches, no floating point.

/// log2 of the number of alias slots.
const SLOT_BITS: u32 = 11;
/// Alias slots: at least the number of possible offsets.
const SLOTS: usize = 1 << SLOT_BITS;
/// Each slot holds 2^64 / SLOTS units of probability.
const SLOT_UNITS: u64 = 1 << (64 - SLOT_BITS);

/// The offsets `round(shift + 10 * sd * Z)` in tenths for one standard
/// deviation and a few shifts, as alias tables side by side.
///
/// Offsets run over `-half..=half + 1`, `half = 100 * sd` tenths (ten
/// standard deviations): every offset outside has a probability below
/// 2^-64, the resolution of the tables, so none is lost that could ever be
/// drawn from 64 random bits.
#[derive(Clone, Debug)]
pub(super) struct TenthsNormal {
    /// Table `i` is `entries[i * SLOTS..][..SLOTS]`, slot `j` stands for
    /// offset `j - half`. An entry packs a threshold `t < SLOT_UNITS` in the
    /// high bits and an alias slot in the low `SLOT_BITS` bits: the slot
    /// yields itself when the low random bits are below `t`, otherwise its
    /// alias.
    entries: Vec<u64>,
    half: i32,
}

impl TenthsNormal {
    /// The tables for standard deviation `sd` (in degrees) and means whose
    /// tenths have fractional parts `shifts` (each in `[0, 1)`), in order.
    ///
    /// # Panics
    ///
    /// If `sd` is not in `(0, 10]`, or a shift not in `[0, 1)`.
    pub(super) fn new(sd: f64, shifts: &[f64]) -> TenthsNormal {
        assert!(
            sd > 0.0 && sd <= 10.0,
            "standard deviation {sd} out of range"
        );
        let half = (100.0 * sd).ceil() as i32;
        assert!(2 * half as usize + 2 <= SLOTS);
        let mut entries = Vec::with_capacity(shifts.len() * SLOTS);
        for &shift in shifts {
            assert!((0.0..1.0).contains(&shift), "shift {shift} out of range");
            entries.extend(alias_table(&weights(sd, shift, half)));
        }
        TenthsNormal { entries, half }
    }

    /// The smallest offset, `-half`: [`slot`](TenthsNormal::slot) minus
    /// `half` is the offset in tenths.
    pub(super) fn half(&self) -> i32 {
        self.half
    }

    /// The slot of table `table` drawn by 64 uniform random bits.
    #[inline(always)]
    pub(super) fn slot(&self, table: usize, bits: u64) -> usize {
        let slot = (bits >> (64 - SLOT_BITS)) as usize;
        let entry = self.entries[table << SLOT_BITS | slot];
        let alias = (entry & (SLOTS as u64 - 1)) as usize;
        // Which of the two is random, so select with a mask, not a branch.
        let own = usize::from(bits & (SLOT_UNITS - 1) < entry >> SLOT_BITS);
        alias ^ ((slot ^ alias) & own.wrapping_neg())
    }
}

/// The probability of each slot's offset in units of 2^-64, summing to
/// exactly 2^64 (slots past the last offset get 0).
fn weights(sd: f64, shift: f64, half: i32) -> Vec<u64> {
    let scale = 10.0 * sd;
    // P(offset = k) = P(k - 0.5 <= shift + scale * Z < k + 0.5).
    let p: Vec<f64> = (0..SLOTS as i32)
        .map(|slot| {
            let k = f64::from(slot - half);
            if slot > 2 * half + 1 {
                return 0.0;
            }
            normal_mass((k - 0.5 - shift) / scale, (k + 0.5 - shift) / scale)
        })
        .collect();
    let total: f64 = p.iter().sum();
    let to_units = 18_446_744_073_709_551_616.0 / total;
    let mut w: Vec<u64> = p.iter().map(|&p| (p * to_units) as u64).collect();
    let sum: i128 = w.iter().map(|&w| i128::from(w)).sum();
    // Flooring and the rounding of `total` leave the sum off 2^64 by a few
    // thousand units (< 1e-15): the most likely offset absorbs that.
    let mode = (0..SLOTS).max_by_key(|&i| w[i]).unwrap_or(0);
    w[mode] = (i128::from(w[mode]) + (1i128 << 64) - sum) as u64;
    w
}

/// `P(a <= Z < b)` for a standard normal `Z`, by 5-point Gauss-Legendre
/// quadrature of the density. The intervals used here are at most 1/70 of a
/// standard deviation wide, where this is exact to double precision.
fn normal_mass(a: f64, b: f64) -> f64 {
    const NODES: [(f64, f64); 5] = [
        (0.0, 0.568_888_888_888_888_9),
        (-0.538_469_310_105_683_1, 0.478_628_670_499_366_5),
        (0.538_469_310_105_683_1, 0.478_628_670_499_366_5),
        (-0.906_179_845_938_664, 0.236_926_885_056_189_08),
        (0.906_179_845_938_664, 0.236_926_885_056_189_08),
    ];
    let (mid, radius) = ((a + b) / 2.0, (b - a) / 2.0);
    let density = |z: f64| (-z * z / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt();
    radius
        * NODES
            .iter()
            .map(|&(x, w)| w * density(mid + radius * x))
            .sum::<f64>()
}

/// Builds the packed alias table for weights summing to exactly 2^64 (Vose's
/// algorithm on integers, so the table reproduces the weights exactly).
fn alias_table(weights: &[u64]) -> Vec<u64> {
    debug_assert_eq!(weights.len(), SLOTS);
    let mut left = weights.to_vec();
    let mut entries = vec![0u64; SLOTS];
    let (mut small, mut large): (Vec<usize>, Vec<usize>) =
        (0..SLOTS).partition(|&i| left[i] < SLOT_UNITS);
    while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
        small.pop();
        entries[s] = left[s] << SLOT_BITS | l as u64;
        left[l] -= SLOT_UNITS - left[s];
        if left[l] < SLOT_UNITS {
            large.pop();
            small.push(l);
        }
    }
    // With exact integers every slot left over is exactly full: it always
    // yields itself (threshold 0, alias itself).
    debug_assert!(small.is_empty());
    for l in large {
        entries[l] = l as u64;
    }
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact probability (in units of 2^-64) table 0 gives each slot.
    fn table_weights(t: &TenthsNormal) -> Vec<u128> {
        let mut w = vec![0u128; SLOTS];
        for (slot, &e) in t.entries[..SLOTS].iter().enumerate() {
            let own = u128::from(e >> SLOT_BITS);
            let alias = (e & (SLOTS as u64 - 1)) as usize;
            w[slot] += own;
            w[alias] += u128::from(SLOT_UNITS) - own;
        }
        w
    }

    #[test]
    fn the_table_reproduces_the_weights_exactly() {
        for (sd, shift) in [(10.0, 0.0), (10.0, 0.7), (7.0, 0.0), (7.0, 0.3)] {
            let t = TenthsNormal::new(sd, &[shift]);
            let expected: Vec<u128> = weights(sd, shift, t.half)
                .into_iter()
                .map(u128::from)
                .collect();
            assert_eq!(table_weights(&t), expected, "sd {sd} shift {shift}");
        }
    }

    #[test]
    fn the_weights_follow_the_normal_distribution() {
        let t = TenthsNormal::new(10.0, &[0.0]);
        let w = table_weights(&t);
        let p = |k: i32| w[(k + t.half) as usize] as f64 / 2f64.powi(64);
        // Symmetric around 0, as the normal is.
        for k in 1..=t.half {
            assert!((p(k) - p(-k)).abs() < 1e-15, "offset {k}");
        }
        // The offsets -99..=99 are Z in [-0.995, 0.995), and -199..=199 are
        // Z in [-1.995, 1.995); references from erf(z / sqrt 2) (Python's
        // `math.erf`).
        let within: f64 = (-99..=99).map(p).sum();
        assert!((within - 0.680_263_735_649_011_9).abs() < 1e-13, "{within}");
        let within: f64 = (-199..=199).map(p).sum();
        assert!((within - 0.953_957_120_135_703_3).abs() < 1e-13, "{within}");
        // Mean 0 and variance 100^2 + 1/12 (Sheppard's correction).
        let mean: f64 = (-t.half..=t.half + 1).map(|k| f64::from(k) * p(k)).sum();
        let var: f64 = (-t.half..=t.half + 1)
            .map(|k| f64::from(k).powi(2) * p(k))
            .sum();
        assert!(mean.abs() < 1e-9, "{mean}");
        assert!((var - (10_000.0 + 1.0 / 12.0)).abs() < 1e-6, "{var}");
    }

    #[test]
    fn a_shift_moves_the_rounding_intervals() {
        // With shift 0.7 the offset is round(0.7 + 100 Z): 0 covers
        // Z in [-0.012, -0.002), 1 covers [-0.002, 0.008).
        let t = TenthsNormal::new(10.0, &[0.7]);
        let w = table_weights(&t);
        let p = |k: i32| w[(k + t.half) as usize] as f64 / 2f64.powi(64);
        let mean: f64 = (-t.half..=t.half + 1).map(|k| f64::from(k) * p(k)).sum();
        assert!((mean - 0.7).abs() < 1e-9, "{mean}");
        assert!(p(1) > p(0) && p(0) > p(2));
    }

    #[test]
    fn drawn_offsets_have_the_table_distribution() {
        // Table 1 of two, to see tables are told apart.
        let t = TenthsNormal::new(7.0, &[0.5, 0.0]);
        let mut stream = crate::generate::rng::Stream::at(1, 0);
        let n = 200_000;
        let draws: Vec<i32> = (0..n)
            .map(|_| t.slot(1, stream.next_u64()) as i32 - t.half())
            .collect();
        let mean = draws.iter().map(|&k| f64::from(k)).sum::<f64>() / f64::from(n);
        // Standard error 70 / sqrt(200_000) = 0.16.
        assert!(mean.abs() < 1.0, "{mean}");
        let within = draws.iter().filter(|k| k.abs() <= 69).count() as f64 / f64::from(n);
        // P(|Z| < 69.5 / 70) = 0.6793; standard error 0.001.
        assert!((within - 0.6793).abs() < 0.006, "{within}");
        assert!(draws.iter().all(|k| k.abs() <= 700));
    }
}

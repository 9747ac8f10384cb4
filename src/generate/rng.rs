//! The random numbers: one SplitMix64 stream per seed, addressable by
//! position.
//!
//! SplitMix64 is a Weyl sequence (`state += GAMMA`) passed through a strong
//! 64-bit mixer, so its `i`-th number is `mix(start + i * GAMMA)`: jumping
//! to any position is one multiply. That makes it counter-based for our
//! purposes: row `r` always uses numbers `2r` and `2r + 1` of the seed's
//! stream, so threads can generate any block of rows independently and the
//! output cannot depend on how blocks are shared out. SplitMix64 passes
//! BigCrush and costs a few cycles per number.

/// The Weyl increment: 2^64 divided by the golden ratio, made odd.
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// A position in the random stream of a seed.
#[derive(Clone, Debug)]
pub(super) struct Stream {
    state: u64,
}

impl Stream {
    /// The stream of `seed`, positioned so that the next number it returns
    /// is its `index`-th (counting from 0).
    pub(super) fn at(seed: u64, index: u64) -> Stream {
        // Mixing the seed first puts the streams of nearby seeds at
        // unrelated points of the (shared) Weyl cycle, not GAMMA apart.
        let start = mix(seed ^ 0x6272_635f_7365_6564);
        Stream {
            state: start.wrapping_add(index.wrapping_mul(GAMMA)),
        }
    }

    /// The next 64 uniformly distributed bits.
    #[inline(always)]
    pub(super) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        mix(self.state)
    }

    /// The next number as a uniform `f64` in `[0, 1)` (53 random bits).
    pub(super) fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// Maps 64 uniform bits to `0..n` by multiply-high (Lemire): the bias is at
/// most `n / 2^64`, far below anything a test or a benchmark could notice.
#[inline(always)]
pub(super) fn below(bits: u64, n: u32) -> u32 {
    ((u128::from(bits) * u128::from(n)) >> 64) as u32
}

/// The SplitMix64 output function (Stafford's Mix13).
#[inline(always)]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_splitmix64_reference() {
        // First outputs of the reference SplitMix64 (Vigna) seeded with 0.
        let mut s = Stream { state: 0 };
        assert_eq!(s.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(s.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(s.next_u64(), 0x06c4_5d18_8009_454f);
    }

    #[test]
    fn positions_are_addressable() {
        let mut from_start = Stream::at(42, 0);
        let skipped: Vec<u64> = (0..1000).map(|_| from_start.next_u64()).collect();
        let mut jumped = Stream::at(42, 997);
        assert_eq!(jumped.next_u64(), skipped[997]);
        assert_eq!(jumped.next_u64(), skipped[998]);
        assert_ne!(Stream::at(43, 0).next_u64(), skipped[0]);
    }

    #[test]
    fn below_covers_the_range_evenly() {
        let mut s = Stream::at(7, 0);
        let mut counts = [0u32; 5];
        for _ in 0..50_000 {
            counts[below(s.next_u64(), 5) as usize] += 1;
        }
        // 10_000 expected each; 5 standard deviations is about 450.
        for c in counts {
            assert!((9_550..=10_450).contains(&c), "{counts:?}");
        }
        assert_eq!(below(u64::MAX, 413), 412);
        assert_eq!(below(0, 413), 0);
    }
}

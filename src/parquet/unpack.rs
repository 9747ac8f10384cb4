//! Unpacking whole groups of bit-packed values, as Parquet's hybrid
//! encoding ([`super::hybrid`]) stores dictionary indices: 8 values of `w`
//! bits in `w` bytes, least significant bit first. A portable path, the
//! width a constant known at compile time up to 16 bits; and, on x86-64
//! CPUs with AVX2, a kernel that unpacks a group of values of up to 16
//! bits with one byte shuffle, chosen at run time ([`Tier`]).

/// How values are unpacked: the portable path, or the AVX2 kernel where
/// the CPU has it. Made only by [`Tier::portable`] and [`Tier::best`], so
/// that a tier with the kernel proves the CPU has it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tier {
    avx2: bool,
}

impl Tier {
    /// The portable path, whatever the CPU.
    #[cfg(test)]
    pub(crate) fn portable() -> Tier {
        Tier { avx2: false }
    }

    /// The fastest tier this CPU has.
    pub(crate) fn best() -> Tier {
        #[cfg(target_arch = "x86_64")]
        let avx2 = std::arch::is_x86_feature_detected!("avx2");
        #[cfg(not(target_arch = "x86_64"))]
        let avx2 = false;
        Tier { avx2 }
    }
}

/// Unpacks whole groups of 8 values of `w` bits (`bytes.len() / w`
/// groups, as many as `out` holds) into `out`, by `tier`.
pub(crate) fn groups(bytes: &[u8], w: usize, out: &mut [u32], tier: Tier) {
    #[cfg(target_arch = "x86_64")]
    if tier.avx2 && (1..=16).contains(&w) {
        // SAFETY: `tier` proves the CPU has AVX2.
        let n = unsafe { x86::eights(bytes, w, out) };
        return portable(&bytes[n * w..], w, &mut out[n * 8..]);
    }
    let _ = tier;
    portable(bytes, w, out)
}

/// [`groups`] on any CPU, with the width known at compile time for widths
/// up to 16, as dictionary indices have: a group's `w` bytes are one
/// `u128`, from which each value is a constant shift and mask.
fn portable(bytes: &[u8], w: usize, out: &mut [u32]) {
    macro_rules! widths {
        ($($w:literal)*) => {
            match w {
                $($w => groups_w::<$w>(bytes, out),)*
                _ => groups_of(bytes, w, out),
            }
        };
    }
    widths!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);
}

/// [`portable`] for a width of `W` bits.
#[inline(always)]
fn groups_w<const W: usize>(bytes: &[u8], out: &mut [u32]) {
    let mask = (1u128 << W) - 1;
    for (group, o) in bytes.chunks_exact(W).zip(out.chunks_exact_mut(8)) {
        let mut b = [0u8; 16];
        b[..W].copy_from_slice(group);
        let word = u128::from_le_bytes(b);
        for (j, o) in o.iter_mut().enumerate() {
            *o = ((word >> (j * W)) & mask) as u32;
        }
    }
}

/// [`portable`] for any width up to 32 bits.
fn groups_of(bytes: &[u8], w: usize, out: &mut [u32]) {
    let mask = (1u64 << w) - 1;
    for (group, o) in bytes.chunks_exact(w).zip(out.chunks_exact_mut(8)) {
        let mut b = [0u8; 40];
        b[..w].copy_from_slice(group);
        for (j, o) in o.iter_mut().enumerate() {
            let bit = j * w;
            let word = u64::from_le_bytes(b[bit / 8..bit / 8 + 8].try_into().expect("8 bytes"));
            *o = ((word >> (bit % 8)) & mask) as u32;
        }
    }
}

/// The AVX2 kernel.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// For each width up to 16 bits, the packed byte each output byte is
    /// taken from, both 128-bit lanes holding a group's bytes: value `j`'s
    /// four bytes start at the byte holding its first bit (`j * w / 8`)
    /// and reach its last (at most 7 + 16 bits on); those past the
    /// group's 16 bytes are above the value, masked off.
    static BYTES: [[u8; 32]; 17] = {
        let mut t = [[0u8; 32]; 17];
        let mut w = 0;
        while w <= 16 {
            let mut j = 0;
            while j < 8 {
                let mut b = 0;
                while b < 4 {
                    let at = j * w / 8 + b;
                    t[w][4 * j + b] = if at < 16 { at as u8 } else { 15 };
                    b += 1;
                }
                j += 1;
            }
            w += 1;
        }
        t
    };

    /// For each width up to 16 bits, value `j`'s shift within its four
    /// bytes.
    static SHIFTS: [[u32; 8]; 17] = {
        let mut t = [[0u32; 8]; 17];
        let mut w = 0;
        while w <= 16 {
            let mut j = 0;
            while j < 8 {
                t[w][j] = (j * w % 8) as u32;
                j += 1;
            }
            w += 1;
        }
        t
    };

    /// Unpacks the groups of 8 values of `w` bits (`1 <= w <= 16`) in
    /// `bytes` into `out` while 16 bytes can be read from a group's
    /// start, returning how many: each group loaded into both halves of a
    /// vector, its bytes shuffled to one 32-bit lane a value, shifted and
    /// masked.
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn eights(bytes: &[u8], w: usize, out: &mut [u32]) -> usize {
        let groups = match bytes.len().checked_sub(16) {
            Some(last) => (last / w + 1).min(out.len() / 8),
            None => 0,
        };
        // SAFETY: the tables hold 32 bytes each; group `g < groups` starts
        // at `g * w`, with 16 bytes after it in `bytes`, and its values
        // are `out[8 * g..8 * g + 8]`.
        unsafe {
            let shuffle = _mm256_loadu_si256(BYTES[w].as_ptr().cast());
            let shifts = _mm256_loadu_si256(SHIFTS[w].as_ptr().cast());
            let mask = _mm256_set1_epi32((1 << w) - 1);
            for g in 0..groups {
                let group = _mm_loadu_si128(bytes.as_ptr().add(g * w).cast());
                let v = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(group), shuffle);
                let v = _mm256_and_si256(_mm256_srlv_epi32(v, shifts), mask);
                _mm256_storeu_si256(out.as_mut_ptr().add(8 * g).cast(), v);
            }
        }
        groups
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small random number generator, so that failures reproduce.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            self.0 >> 16
        }
    }

    /// `values` packed `w` bits each, least significant bit first.
    fn pack(values: &[u32], w: usize) -> Vec<u8> {
        let mut bytes = vec![0u8; (values.len() * w).div_ceil(8)];
        for (j, &v) in values.iter().enumerate() {
            for b in 0..w {
                if v >> b & 1 == 1 {
                    bytes[(j * w + b) / 8] |= 1 << ((j * w + b) % 8);
                }
            }
        }
        bytes
    }

    #[test]
    fn every_tier_unpacks_as_the_bits_say() {
        let mut rng = Rng(5);
        for w in 1..=32 {
            let mask = if w == 32 { u32::MAX } else { (1 << w) - 1 };
            for groups_n in [1usize, 2, 3, 5, 8, 17, 64, 129] {
                let values: Vec<u32> = (0..groups_n * 8)
                    .map(|_| rng.next() as u32 & mask)
                    .collect();
                let bytes = pack(&values, w);
                for tier in [Tier::portable(), Tier::best()] {
                    // Out cut at every length a caller may give, in groups.
                    for cut in [groups_n, groups_n / 2, groups_n.saturating_sub(1)] {
                        let mut out = vec![u32::MAX; cut * 8];
                        groups(&bytes[..groups_n * w], w, &mut out, tier);
                        assert_eq!(out, values[..cut * 8], "{tier:?} w {w} cut {cut}");
                    }
                    // Bytes ending where the groups do, at the end of an
                    // allocation, as a page's last run may.
                    let end = bytes[..groups_n * w].to_vec().into_boxed_slice();
                    let mut out = vec![0; groups_n * 8];
                    groups(&end, w, &mut out, tier);
                    assert_eq!(out, values, "{tier:?} w {w}");
                }
            }
        }
    }
}

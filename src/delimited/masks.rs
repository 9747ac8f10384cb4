//! How a block of 64 bytes becomes the masks the row scanner
//! ([`super::scan`]) reads: its delimiters and line feeds, its line feeds,
//! its quotes, and the bytes inside quotes (the quotes' prefix XOR). Built
//! with AVX-512 BW or AVX2 where the CPU has it, SSE2 (every x86-64 CPU
//! has it) or, elsewhere, byte by byte; all are tested against each other.

/// How a block's masks are built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Masks {
    /// Byte by byte: the portable path, and the tests' reference.
    Bytes,
    /// 16 bytes at a time with SSE2.
    #[cfg(target_arch = "x86_64")]
    Sse2,
    /// 32 bytes at a time with AVX2, and the bytes inside quotes by one
    /// carry-less multiply (PCLMULQDQ); only where the CPU has both, POPCNT
    /// and the bit instructions of [`has_bits`] ([`has_avx2`]).
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// 64 bytes at a time with AVX-512 (BW), whose compares give the mask
    /// itself; only where the CPU has it and what [`Masks::Avx2`] needs
    /// ([`has_avx512`]).
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Masks {
    /// The fastest this CPU has, unless the environment variable
    /// `BRC_CSV_SCAN` is `bytes`, `sse2` or `avx2` (where the CPU has
    /// it), which forces that one (for tests and measurements of the whole
    /// program).
    pub fn best() -> Masks {
        match std::env::var_os("BRC_CSV_SCAN") {
            Some(v) if v == "bytes" => return Masks::Bytes,
            #[cfg(target_arch = "x86_64")]
            Some(v) if v == "sse2" => return Masks::Sse2,
            #[cfg(target_arch = "x86_64")]
            Some(v) if v == "avx2" && has_avx2() => return Masks::Avx2,
            _ => {}
        }
        #[cfg(target_arch = "x86_64")]
        return if has_avx512() {
            Masks::Avx512
        } else if has_avx2() {
            Masks::Avx2
        } else {
            Masks::Sse2
        };
        #[cfg(not(target_arch = "x86_64"))]
        return Masks::Bytes;
    }

    /// Every builder this CPU can run, the portable one first: the tests
    /// compare them.
    #[cfg(test)]
    pub fn all() -> Vec<Masks> {
        let mut all = vec![Masks::Bytes];
        #[cfg(target_arch = "x86_64")]
        {
            all.push(Masks::Sse2);
            if has_avx2() {
                all.push(Masks::Avx2);
            }
            if has_avx512() {
                all.push(Masks::Avx512);
            }
        }
        all
    }

    /// The masks of `block`: (delimiters and line feeds, line feeds,
    /// quotes).
    #[inline]
    pub(super) fn of(self, block: &[u8; 64], delimiter: u8) -> (u64, u64, u64) {
        match self {
            Masks::Bytes => {
                let (mut ends, mut lines, mut quotes) = (0u64, 0u64, 0u64);
                for (i, &b) in block.iter().enumerate() {
                    ends |= u64::from(b == delimiter || b == b'\n') << i;
                    lines |= u64::from(b == b'\n') << i;
                    quotes |= u64::from(b == b'"') << i;
                }
                (ends, lines, quotes)
            }
            #[cfg(target_arch = "x86_64")]
            // SAFETY: SSE2 is part of x86-64 itself: every CPU this code
            // runs on has it.
            Masks::Sse2 => unsafe { sse2(block, delimiter) },
            // SAFETY: `Avx2` is only chosen where the CPU has AVX2
            // (`best` and `all` check it at run time).
            #[cfg(target_arch = "x86_64")]
            Masks::Avx2 => unsafe { avx2(block, delimiter) },
            // SAFETY: `Avx512` is only chosen where the CPU has AVX-512 BW
            // (`has_avx512`, which `best` and `all` call).
            #[cfg(target_arch = "x86_64")]
            Masks::Avx512 => unsafe { avx512(block, delimiter) },
        }
    }

    /// How many bits of `x` are set: one POPCNT instruction in the tiers
    /// whose CPUs have it, where x86-64's baseline, which `count_ones`
    /// compiles for outside a tier's own functions, takes a dozen.
    #[inline(always)]
    pub(super) fn count(self, x: u64) -> u32 {
        match self {
            #[cfg(target_arch = "x86_64")]
            Masks::Avx2 | Masks::Avx512 => {
                let n: u64;
                // SAFETY: these tiers are only chosen where the CPU has
                // POPCNT (`has_avx2`, `has_avx512`); the instruction reads
                // one register and writes one, and touches no memory.
                unsafe {
                    std::arch::asm!(
                        "popcnt {n}, {x}",
                        x = in(reg) x,
                        n = lateout(reg) n,
                        options(pure, nomem, nostack),
                    );
                }
                n as u32
            }
            _ => x.count_ones(),
        }
    }

    /// The bits of a block inside quotes, given its `quotes` (see
    /// [`prefix_xor`]): one carry-less multiply by all ones where the
    /// tier has it.
    #[inline(always)]
    pub(super) fn inside(self, quotes: u64) -> u64 {
        match self {
            // SAFETY: `Avx2` and `Avx512` are only chosen where the CPU has
            // PCLMULQDQ (`has_avx2`, which `has_avx512` calls).
            #[cfg(target_arch = "x86_64")]
            Masks::Avx2 | Masks::Avx512 => unsafe { clmul_prefix_xor(quotes) },
            _ => prefix_xor(quotes),
        }
    }

    /// `x` without its `k` lowest set bits: those from its `k`th on,
    /// counted from 0 (none if it has fewer). One PDEP in the AVX-512
    /// tier, whose CPUs all run it fast; elsewhere the `k` bits below
    /// cleared one by one, as AMD CPUs before Zen 3, which have AVX2, run
    /// PDEP in microcode.
    #[inline(always)]
    pub(super) fn skip(self, x: u64, k: u32) -> u64 {
        match self {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Avx512` is only chosen where the CPU has BMI2
            // (`has_avx512`, through `has_bits`); PDEP reads two
            // registers and writes one.
            Masks::Avx512 => x & unsafe { std::arch::x86_64::_pdep_u64(1 << k, x) }.wrapping_neg(),
            _ => {
                let mut x = x;
                for _ in 0..k {
                    x &= x.wrapping_sub(1);
                }
                x
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
#[inline]
fn sse2(block: &[u8; 64], delimiter: u8) -> (u64, u64, u64) {
    use std::arch::x86_64::*;
    let (d, n, q) = (
        _mm_set1_epi8(delimiter as i8),
        _mm_set1_epi8(b'\n' as i8),
        _mm_set1_epi8(b'"' as i8),
    );
    let (mut delimiters, mut lines, mut quotes) = (0u64, 0u64, 0u64);
    for k in 0..4 {
        // SAFETY: `block` holds 64 bytes, so its bytes 16k..16k+16 are in
        // bounds for k < 4; the load is unaligned.
        let v = unsafe { _mm_loadu_si128(block.as_ptr().add(16 * k).cast()) };
        let mask = |c| u64::from(_mm_movemask_epi8(_mm_cmpeq_epi8(v, c)) as u16) << (16 * k);
        delimiters |= mask(d);
        lines |= mask(n);
        quotes |= mask(q);
    }
    (delimiters | lines, lines, quotes)
}

/// Whether the CPU has AVX2, PCLMULQDQ, POPCNT, LZCNT and BMI1 and 2,
/// which [`Masks::Avx2`] and the row loop compiled for it use.
#[cfg(target_arch = "x86_64")]
fn has_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && has_bits()
}

/// Whether the CPU has AVX-512 F and BW, AVX2 and what [`has_avx2`] asks
/// besides, which [`Masks::Avx512`] and the row loop compiled for it use.
#[cfg(target_arch = "x86_64")]
fn has_avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512f")
        && has_avx2()
}

/// Whether the CPU has PCLMULQDQ, POPCNT, LZCNT, BMI1 and BMI2, as every
/// CPU with AVX2 that brc has met.
#[cfg(target_arch = "x86_64")]
fn has_bits() -> bool {
    std::arch::is_x86_feature_detected!("pclmulqdq")
        && std::arch::is_x86_feature_detected!("popcnt")
        && std::arch::is_x86_feature_detected!("lzcnt")
        && std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("bmi2")
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn avx2(block: &[u8; 64], delimiter: u8) -> (u64, u64, u64) {
    use std::arch::x86_64::*;
    let (d, n, q) = (
        _mm256_set1_epi8(delimiter as i8),
        _mm256_set1_epi8(b'\n' as i8),
        _mm256_set1_epi8(b'"' as i8),
    );
    let (mut delimiters, mut lines, mut quotes) = (0u64, 0u64, 0u64);
    for k in 0..2 {
        // SAFETY: `block` holds 64 bytes, so its bytes 32k..32k+32 are in
        // bounds for k < 2; the load is unaligned.
        let v = unsafe { _mm256_loadu_si256(block.as_ptr().add(32 * k).cast()) };
        let mask = |c| u64::from(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, c)) as u32) << (32 * k);
        delimiters |= mask(d);
        lines |= mask(n);
        quotes |= mask(q);
    }
    (delimiters | lines, lines, quotes)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512bw")]
#[inline]
fn avx512(block: &[u8; 64], delimiter: u8) -> (u64, u64, u64) {
    use std::arch::x86_64::*;
    // SAFETY: `block` holds 64 bytes, one unaligned load's worth.
    let v = unsafe { _mm512_loadu_si512(block.as_ptr().cast()) };
    let delimiters = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(delimiter as i8));
    let lines = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b'\n' as i8));
    let quotes = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b'"' as i8));
    (delimiters | lines, lines, quotes)
}

/// [`prefix_xor`] by a carry-less multiply by all ones: bit `i` of the
/// product is the XOR of bits `0..=i` of `x`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "pclmulqdq")]
#[inline]
fn clmul_prefix_xor(x: u64) -> u64 {
    use std::arch::x86_64::*;
    let product = _mm_clmulepi64_si128::<0>(_mm_cvtsi64_si128(x as i64), _mm_set1_epi8(-1));
    _mm_cvtsi128_si64(product) as u64
}

/// Each bit set where an odd number of `quotes`' bits are at or below it.
#[inline]
pub(super) fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Every tier's bits inside quotes are the prefix XOR's, and its
        /// bit counts `count_ones`'.
        #[test]
        fn every_tier_finds_the_bits_inside_quotes(quotes: u64) {
            for masks in Masks::all() {
                proptest::prop_assert_eq!(masks.inside(quotes), prefix_xor(quotes), "{:?}", masks);
                proptest::prop_assert_eq!(masks.count(quotes), quotes.count_ones(), "{:?}", masks);
            }
            proptest::prop_assert_eq!(prefix_xor(quotes) >> 63, u64::from(quotes.count_ones() % 2));
        }

        /// Every tier keeps the bits from the `k`th set bit on.
        #[test]
        fn every_tier_keeps_the_bits_from_the_kth_on(x: u64, k in 0u32..64) {
            let kth = (0..64).filter(|i| x >> i & 1 == 1).nth(k as usize);
            let want = kth.map_or(0, |i| x >> i << i);
            for masks in Masks::all() {
                proptest::prop_assert_eq!(masks.skip(x, k), want, "{:?}", masks);
            }
        }
    }
}

//! Bit-level helpers the tables and the scanner share: finding a byte in a
//! word ([`matches()`]), unaligned word loads ([`load`]), cache prefetches
//! ([`prefetch`]), the size of a huge page ([`HUGE_PAGE`]), the
//! inverse of an odd multiplier ([`inverse`]), which solves the tables'
//! hashes for names that share one (`table::flood`), and giving the
//! allocator's free pages back to the system ([`trim_heap`]).

/// The size of a transparent huge page on x86-64 and most arm64 kernels.
pub(crate) const HUGE_PAGE: usize = 2 << 20;

/// Gives back to the system the free pages among the system allocator's
/// blocks still in use: what a thread's fold freed (the other thread's
/// copies of a million names) otherwise stays resident between them.
pub(crate) fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` takes no pointer and may be called at any time
    // from any thread; it only gives back pages that no block holds.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The low bit of every byte of a word.
const LO: u64 = 0x0101_0101_0101_0101;

/// The high bit of every byte of a word: a byte in `0x80..` sets it, so
/// a word with none set holds only ASCII.
pub(crate) const HI: u64 = 0x8080_8080_8080_8080;

/// High bit of every byte of `w` equal to `byte`. Exact for the lowest
/// match; bits above it may be spurious (borrows), so callers only use the
/// lowest set bit.
#[inline(always)]
pub(crate) fn matches(w: u64, byte: u8) -> u64 {
    let x = w ^ (LO * u64::from(byte));
    x.wrapping_sub(LO) & !x & HI
}

/// Reads a little-endian `u64` at `p`.
///
/// # Safety
/// `p` must be valid for reads of 8 bytes.
#[inline(always)]
pub(crate) unsafe fn load(p: *const u8) -> u64 {
    // SAFETY: the caller guarantees 8 readable bytes; no alignment needed.
    u64::from_le(unsafe { p.cast::<u64>().read_unaligned() })
}

/// Starts loading the cache line holding `p` into the L1 cache (`L1`) or
/// only into L2, without waiting for it. `p` need not point at anything:
/// a prefetch never faults.
#[inline(always)]
pub(crate) fn prefetch<const L1: bool, T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and changes nothing the program sees.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0, _MM_HINT_T1};
        if L1 {
            _mm_prefetch::<_MM_HINT_T0>(p.cast());
        } else {
            _mm_prefetch::<_MM_HINT_T1>(p.cast());
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The inverse of the odd `k` modulo 2^64, by Newton's iteration: each
/// step doubles the bits that are right, from the 3 that `k` itself gets
/// right (`k * k = 1` modulo 8).
#[cfg(any(test, feature = "lab"))]
pub(crate) fn inverse(k: u64) -> u64 {
    debug_assert!(k % 2 == 1);
    let mut x = k;
    for _ in 0..5 {
        x = x.wrapping_mul(2u64.wrapping_sub(k.wrapping_mul(x)));
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverses_undo_their_multipliers() {
        for k in [1u64, 3, 0x9e37_79b9_7f4a_7c15, u64::MAX] {
            assert_eq!(k.wrapping_mul(inverse(k)), 1, "{k:#x}");
        }
    }

    #[test]
    fn the_lowest_match_is_exact() {
        let word = u64::from_le_bytes(*b"ab;;x\x01;\x80");
        assert_eq!(matches(word, b';').trailing_zeros() / 8, 2);
        assert_eq!(matches(word, b'x').trailing_zeros() / 8, 4);
        assert_eq!(matches(word, 0x80).trailing_zeros() / 8, 7);
        assert_eq!(matches(word, b'z'), 0);
        // SAFETY: the array holds 8 bytes.
        assert_eq!(unsafe { load(b"ab;;x\x01;\x80".as_ptr()) }, word);
    }
}

//! A long name's key as AVX2 vectors cut straight from the input: four
//! 32-byte blocks ([`Blocks`]), or the first alone for a name of under 32
//! bytes ([`Head`]), hashed and compared as [`Key`] is a word at a time.

use std::arch::x86_64::*;

use super::{Bucket, Key, Probe, KEY_SPAN, KEY_WORDS, SALT};

/// Byte `i` is `i`: block `k`'s byte positions start at `32 * k`.
static POSITIONS: [u8; KEY_SPAN] = {
    let mut p = [0; KEY_SPAN];
    let mut i = 0;
    while i < KEY_SPAN {
        p[i] = i as u8;
        i += 1;
    }
    p
};

/// All ones past the key's last 8 bytes in the fourth block, where a
/// bucket holds its stats.
static STATS_LANES: [u8; 32] = {
    let mut m = [0xff; 32];
    let mut i = 0;
    while i < 8 * KEY_WORDS - 96 {
        m[i] = 0;
        i += 1;
    }
    m
};

/// The `_mm256_permute4x64_epi64` control that rotates the lanes by
/// `k`: lane `j` of the result is lane `(j + k) % 4`.
const fn rotate(k: i32) -> i32 {
    let mut imm = 0;
    let mut j = 0;
    while j < 4 {
        imm |= ((j + k) % 4) << (2 * j);
        j += 1;
    }
    imm
}

/// How a key is cut from the input: as four blocks or as its head.
pub(super) trait Cut: Probe + Sized {
    /// Whether this is [`Head`], whose rows wait in their own queue.
    const HEAD: bool;

    /// The key of the name of `len` bytes at `p`.
    ///
    /// # Safety
    /// `p` valid for reads of [`KEY_SPAN`] bytes, `p[len] == b';'`,
    /// `len` below the cut's limit, and the CPU has AVX2.
    unsafe fn load(p: *const u8, len: usize) -> Self;

    /// The key's hash, as [`Key::hash`] computes it.
    fn hash(&self) -> u64;
}

/// A [`Key`] in four vector registers. Only its [`Cut::load`] makes
/// one, and it requires AVX2: holding one proves the CPU has it.
pub(super) struct Blocks([__m256i; 4]);

impl Cut for Blocks {
    const HEAD: bool = false;

    /// The four blocks at `p`, every byte past the `;` at `p + len`
    /// zeroed; `len < 127`.
    #[inline(always)]
    unsafe fn load(p: *const u8, len: usize) -> Blocks {
        // Written out, not by `std::array::from_fn`, which the
        // compiler does not always inline: its closure then runs the
        // intrinsics as calls, outside this function's AVX2.
        // SAFETY: as the caller guarantees; positions are at most 127,
        // so comparing them as `i8` with `len + 1 <= 127` is exact.
        unsafe {
            let limit = _mm256_set1_epi8((len + 1) as i8);
            Blocks([
                block(p, limit, 0),
                block(p, limit, 1),
                block(p, limit, 2),
                block(p, limit, 3),
            ])
        }
    }

    #[inline(always)]
    fn hash(&self) -> u64 {
        let [b0, b1, b2, b3] = self.0;
        // SAFETY: a `Blocks` exists only on a CPU with AVX2 (`load`).
        unsafe {
            let salted =
                |b, k: usize| _mm256_add_epi64(b, _mm256_loadu_si256(SALT[k].as_ptr().cast()));
            let fold = _mm256_xor_si256(
                _mm256_xor_si256(b0, _mm256_permute4x64_epi64::<{ rotate(1) }>(salted(b1, 1))),
                _mm256_xor_si256(
                    _mm256_permute4x64_epi64::<{ rotate(2) }>(salted(b2, 2)),
                    _mm256_permute4x64_epi64::<{ rotate(3) }>(salted(b3, 3)),
                ),
            );
            mix(fold)
        }
    }
}

/// Block `k` of the key at `p` whose `;` is at `limit - 1`: its bytes
/// up to the `;`, zeros after.
///
/// # Safety
/// `p` valid for reads of `32 * (k + 1)` bytes, and the CPU has AVX2.
#[inline(always)]
unsafe fn block(p: *const u8, limit: __m256i, k: usize) -> __m256i {
    // SAFETY: as the caller guarantees; `POSITIONS` holds four blocks.
    unsafe {
        let v = _mm256_loadu_si256(p.add(32 * k).cast());
        let at = _mm256_loadu_si256(POSITIONS.as_ptr().add(32 * k).cast());
        _mm256_and_si256(v, _mm256_cmpgt_epi8(limit, at))
    }
}

/// [`super::mix`] of a fold held as a vector.
///
/// # Safety
/// The CPU must have AVX2.
#[inline(always)]
unsafe fn mix(fold: __m256i) -> u64 {
    // SAFETY: AVX2 as the caller guarantees.
    unsafe {
        let lo = _mm256_castsi256_si128(fold);
        let hi = _mm256_extracti128_si256::<1>(fold);
        super::mix([
            _mm_cvtsi128_si64(lo) as u64,
            _mm_extract_epi64::<1>(lo) as u64,
            _mm_cvtsi128_si64(hi) as u64,
            _mm_extract_epi64::<1>(hi) as u64,
        ])
    }
}

/// What the last three blocks of a key add to its fold when they are
/// zero (a name of at most 31 bytes): their salts, rotated as
/// [`Blocks::hash`] rotates them.
static ZERO_TAIL: [u64; 4] = {
    let mut t = [0; 4];
    let mut j = 0;
    while j < 4 {
        let mut k = 1;
        while k < 4 {
            t[j] ^= SALT[k][(j + k) % 4];
            k += 1;
        }
        j += 1;
    }
    t
};

/// The key of a name of at most 31 bytes, whose `;` is in the first
/// block: that block alone, the other three being zeros, hashed and
/// compared as one vector where [`Blocks`] takes four. Only its
/// [`Cut::load`] makes one, and it requires AVX2: holding one proves
/// the CPU has it.
pub(super) struct Head(__m256i);

impl Cut for Head {
    const HEAD: bool = true;

    /// The first block at `p`, every byte past the `;` at `p + len`
    /// zeroed; `len < 32`.
    #[inline(always)]
    unsafe fn load(p: *const u8, len: usize) -> Head {
        // SAFETY: as the caller guarantees.
        unsafe { Head(block(p, _mm256_set1_epi8((len + 1) as i8), 0)) }
    }

    #[inline(always)]
    fn hash(&self) -> u64 {
        // SAFETY: a `Head` exists only on a CPU with AVX2 (`load`).
        unsafe {
            let tail = _mm256_loadu_si256(ZERO_TAIL.as_ptr().cast());
            mix(_mm256_xor_si256(self.0, tail))
        }
    }
}

impl Probe for Head {
    #[inline(always)]
    fn matches(&self, s: &Bucket) -> bool {
        // The first block decides: it holds this key's `;`, so a bucket
        // whose first block equals it holds the same name, and zeros
        // after it, as every key does.
        // SAFETY: a bucket is 128 bytes aligned to 128; AVX2 as in `hash`.
        unsafe {
            let eq = _mm256_cmpeq_epi8(self.0, _mm256_load_si256((s as *const Bucket).cast()));
            _mm256_movemask_epi8(eq) == -1
        }
    }

    #[cold]
    fn key(&self) -> Key {
        let mut key = Key([0; KEY_SPAN / 8]);
        // SAFETY: `key.0` has room for a block; AVX2 as in `hash`.
        unsafe { _mm256_storeu_si256(key.0.as_mut_ptr().cast(), self.0) };
        key
    }
}

impl Probe for Blocks {
    #[inline(always)]
    fn matches(&self, s: &Bucket) -> bool {
        let q = (s as *const Bucket).cast::<__m256i>();
        // SAFETY: a bucket is 128 bytes aligned to 128, so the four
        // aligned loads stay inside it; AVX2 as in `hash`.
        unsafe {
            let eq = |k: usize| _mm256_cmpeq_epi8(self.0[k], _mm256_load_si256(q.add(k)));
            let stats = _mm256_loadu_si256(STATS_LANES.as_ptr().cast());
            let all = _mm256_and_si256(
                _mm256_and_si256(eq(0), eq(1)),
                _mm256_and_si256(eq(2), _mm256_or_si256(eq(3), stats)),
            );
            _mm256_movemask_epi8(all) == -1
        }
    }

    #[cold]
    fn key(&self) -> Key {
        let mut key = Key([0; KEY_SPAN / 8]);
        for (k, b) in self.0.iter().enumerate() {
            // SAFETY: `key.0` has room for four blocks; AVX2 as in
            // `hash`.
            unsafe { _mm256_storeu_si256(key.0.as_mut_ptr().add(4 * k).cast(), *b) };
        }
        key
    }
}

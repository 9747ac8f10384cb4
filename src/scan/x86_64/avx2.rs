//! The AVX2 kernel: one 32-byte load, compared with `;` and with `\n`.

use std::arch::x86_64::*;

use crate::parse::MAX_NAME_LEN;
use crate::scan::kernel::{Kernel, Window};
use crate::scan::Log;
use crate::table::ChunkAdder;

/// Reads the two little-endian words at `p` with loads of their own,
/// which the compiler cannot replace by moving bytes out of a vector
/// it loaded from the same place.
///
/// # Safety
/// `p` must be valid for reads of 16 bytes.
#[inline(always)]
pub(super) unsafe fn load_words(p: *const u8) -> (u64, u64) {
    let (w0, w1): (u64, u64);
    // SAFETY: the caller guarantees 16 readable bytes at `p`; x86 loads
    // need no alignment; the asm only reads memory and touches no
    // flags or stack.
    unsafe {
        std::arch::asm!(
            "mov {w0}, qword ptr [{p}]",
            "mov {w1}, qword ptr [{p} + 8]",
            w0 = out(reg) w0,
            w1 = out(reg) w1,
            p = in(reg) p,
            options(pure, readonly, nostack, preserves_flags),
        );
    }
    (w0, w1)
}

/// AVX2 kernel: one 32-byte load, compared with `;` and with `\n`.
pub(crate) struct Avx2;

impl Kernel for Avx2 {
    const WINDOW: usize = 32;
    const VECTOR: bool = true;

    #[inline(always)]
    unsafe fn long_name(p: *const u8, win_len: usize) -> Option<usize> {
        // The three 32-byte windows after the first, which found no `;`
        // (a name it holds goes to `add_head`), reaching past the
        // longest name (`p + 128 <= p + PAD`), searched at once: no
        // branch on the name's length, where a loop over the windows
        // mispredicted its exit on names of random lengths (and a call
        // to `memchr` per row cost more still).
        debug_assert_eq!(win_len, Self::WINDOW);
        // SAFETY: the caller guarantees PAD = 128 readable bytes at `p`;
        // AVX2 is present, as for `window`.
        let semis = |at: usize| unsafe {
            let v = _mm256_loadu_si256(p.add(at).cast());
            let m = _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b';' as i8)));
            u128::from(m as u32) << at
        };
        let len = (semis(32) | semis(64) | semis(96)).trailing_zeros() as usize;
        (len <= MAX_NAME_LEN).then_some(len)
    }

    #[inline(always)]
    unsafe fn long_line<L: Log>(
        adder: &mut ChunkAdder,
        p: *const u8,
        win_len: usize,
    ) -> Option<usize> {
        // SAFETY: forwarded from the caller, who runs this kernel only
        // where the CPU has AVX2 and BMI.
        unsafe {
            if win_len < Self::WINDOW {
                head_line_avx2::<L>(adder, p, win_len)
            } else {
                far_line_avx2::<L>(adder, p, win_len)
            }
        }
    }

    #[inline(always)]
    unsafe fn add_long<L: Log>(
        adder: &mut ChunkAdder,
        p: *const u8,
        len: usize,
        value: i16,
    ) -> bool {
        // SAFETY: forwarded from the caller: PAD = 128 bytes of the chunk
        // from `p`, the `;` at `p + len`, AVX2 present as for `window`.
        unsafe { adder.add_long_deferred_avx2::<L>(p, len, value) }
    }

    #[inline(always)]
    unsafe fn add_head<L: Log>(
        adder: &mut ChunkAdder,
        p: *const u8,
        len: usize,
        value: i16,
    ) -> bool {
        // SAFETY: forwarded from the caller: PAD = 128 bytes of the chunk
        // from `p`, the `;` at `p + len < p + 32`, AVX2 present.
        unsafe { adder.add_long_head_avx2::<L>(p, len, value) }
    }

    #[inline(always)]
    unsafe fn window(p: *const u8) -> Window {
        // The caller guarantees 32 readable bytes at `p` and only
        // instantiates this kernel inside a function compiled with AVX2
        // after checking the CPU has it.
        // SAFETY: as above.
        unsafe {
            let v = _mm256_loadu_si256(p.cast());
            let semi = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b';' as i8));
            let nl = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\n' as i8));
            let len = (_mm256_movemask_epi8(semi) as u32).trailing_zeros() as usize;
            // The key from two word loads, cut after the `;` by
            // `bzhi`: each row waits for its key to find its slot, and
            // these loads do not wait for the `;`, where masking the
            // vector did (a mask load) and moving it out took cycles
            // more. A plain read would be served from `v` by the
            // compiler, moving the words out after all
            // (docs/PERFORMANCE.md, *The scanner*), hence `load_words`.
            // A long name's words are not used.
            let (w0, w1) = load_words(p);
            let keep = 8 * len as u32 + 8;
            let a = _bzhi_u64(w0, keep);
            let b = _bzhi_u64(w1, keep.saturating_sub(64));
            Window {
                len,
                newlines: _mm256_movemask_epi8(nl) as u32,
                bit4: _mm256_movemask_epi8(_mm256_slli_epi16::<3>(v)) as u32,
                a,
                b,
            }
        }
    }
}

/// [`Kernel::long_line`] out of the scanner's loop, for a name the
/// window holds: inlined, its constants and pointers took registers that
/// the short rows' loop then reloaded on every row (docs/PERFORMANCE.md,
/// *The scanner*). The `inline(never)` binds no call made through
/// `Kernel::long_line`: rustc puts it on calls from code compiled with
/// AVX2 only, which that method is not; LLVM keeps this function out of
/// line by its own measure, and inlines [`far_line_avx2`].
///
/// # Safety
/// As for [`Kernel::long_line`], `win_len < 32`, and the CPU has AVX2
/// and BMI.
#[target_feature(enable = "avx2,bmi1,bmi2")]
#[inline(never)]
unsafe fn head_line_avx2<L: Log>(
    adder: &mut ChunkAdder,
    p: *const u8,
    win_len: usize,
) -> Option<usize> {
    // SAFETY: forwarded from the caller.
    unsafe {
        std::hint::assert_unchecked(win_len < Avx2::WINDOW);
        crate::scan::line::long::<Avx2, L>(adder, p, win_len)
    }
}

/// [`head_line_avx2`] for a name the window does not hold, its window's
/// length known to be 32. Inlined into the scanner's loops (see
/// [`head_line_avx2`]): kept out of them by `#[cold]`, it cost the 413 set
/// more than it saved the 10K set (docs/PERFORMANCE.md, *Tried and
/// dropped*).
///
/// # Safety
/// As for [`Kernel::long_line`], `win_len == 32`, and the CPU has AVX2
/// and BMI.
#[target_feature(enable = "avx2,bmi1,bmi2")]
unsafe fn far_line_avx2<L: Log>(
    adder: &mut ChunkAdder,
    p: *const u8,
    win_len: usize,
) -> Option<usize> {
    // SAFETY: forwarded from the caller.
    unsafe {
        std::hint::assert_unchecked(win_len >= Avx2::WINDOW);
        crate::scan::line::long::<Avx2, L>(adder, p, win_len)
    }
}

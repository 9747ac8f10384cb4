//! The lanes feed: [`LANES`] stretches side by side, a line of each per
//! round, the round's values parsed and checked together in one AVX2
//! vector (docs/PERFORMANCE.md, *The scanner*).
//!
//! Across lines, not within one: each line's `;` is still found by its own
//! 32-byte compare and its row added to the table in turn, but the values'
//! bytes, which took a good share of a row's instructions to check and
//! read one line at a time, are checked, read and signed for four lines
//! by the same few vector instructions. The rows are added in lane order,
//! so two lanes meeting one name in a round need nothing special. Eight
//! lanes in two vectors took more instructions per row, not fewer: their
//! state no longer fit the registers.

use std::arch::x86_64::*;

use super::avx2::{load_words, Avx2};
use super::keep;
use crate::bits::{load, prefetch};
use crate::parse::MAX_ROW_LEN;
use crate::scan::kernel::Kernel;
use crate::scan::Log;
use crate::table::{ChunkAdder, Shape, ONE_ROW, SHORT};
use crate::tuning::{AHEAD, LANES};

/// The most bytes a line the scanner takes spans, its `\n` included.
const LINE_SPAN: usize = MAX_ROW_LEN + 1;

/// For a name of `len <= SHORT` bytes, the bits of its two key words to
/// keep, the name and its `;`: `KEY_MASKS[0][len]` and `KEY_MASKS[1][len]`.
/// Two arrays of words, not one of pairs, so that both are read at
/// `len * 8`, an address mode, with no instruction to scale `len`.
static KEY_MASKS: [[u64; SHORT + 1]; 2] = {
    let mut masks = [[0; SHORT + 1]; 2];
    let mut len = 0;
    while len <= SHORT {
        let bits = 8 * (len as u32 + 1);
        masks[0][len] = if bits >= 64 { !0 } else { (1 << bits) - 1 };
        masks[1][len] = match bits {
            0..=64 => 0,
            128 => !0,
            _ => (1 << (bits - 64)) - 1,
        };
        len += 1;
    }
    masks
};

/// Four values parsed at once: each lane the 8 bytes after a `;`.
struct Values {
    /// The values in tenths.
    tenths: __m256i,
    /// Bits `8k..8k + 5` set where lane `k`'s bytes are not a value.
    bad: u32,
}

/// Parses four values, one per 64-bit lane of `w`, each the 8 bytes after
/// a `;`, as [`parse_value`](crate::scan::parse_value) does one: a lane
/// passes when its bytes are `-?\d{1,2}\.\d\n`.
///
/// A `-` is shifted out and a one-digit value shifted up behind a `0`, so
/// that every value then has the form `dd.d\n`: one compare checks the
/// five bytes of all four, and one multiply-add weighs their digits.
#[inline]
#[target_feature(enable = "avx2")]
fn parse4(w: __m256i) -> Values {
    let byte = |b: u8, at: u32| _mm256_set1_epi64x(i64::from(b) << at);
    let eight = _mm256_set1_epi64x(8);
    // -1 in a negative value's lane.
    let minus = _mm256_cmpeq_epi64(_mm256_and_si256(w, byte(0xff, 0)), byte(b'-', 0));
    let u = _mm256_srlv_epi64(w, _mm256_and_si256(minus, eight));
    // -1 in a lane of one digit before the `.`.
    let short = _mm256_cmpeq_epi64(_mm256_and_si256(u, byte(0xff, 8)), byte(b'.', 8));
    let v = _mm256_or_si256(
        _mm256_sllv_epi64(u, _mm256_and_si256(short, eight)),
        _mm256_and_si256(short, byte(b'0', 0)),
    );
    // `dd.d\n` XOR this is the digits' values in bytes 0, 1 and 3 and zero
    // in bytes 2 and 4; adding 0x76 to a digit byte, 0x7f to the others,
    // sets bit 7 in any byte out of its range (saturating: a byte of 0x80
    // or more sets it too).
    let t = _mm256_xor_si256(v, _mm256_set1_epi64x(0x000a_302e_3030));
    let limits = _mm256_set1_epi64x(0x007f_767f_7676);
    let bad = _mm256_movemask_epi8(_mm256_adds_epu8(t, limits)) as u32 & 0x1f1f_1f1f;
    // 100 · t0 + 10 · t1 and t3 as 16-bit pairs, then their sum.
    let pairs = _mm256_maddubs_epi16(t, _mm256_set1_epi64x(0x0100_0a64));
    let abs = _mm256_madd_epi16(pairs, _mm256_set1_epi64x(0x0001_0001));
    Values {
        tenths: _mm256_sub_epi64(_mm256_xor_si256(abs, minus), minus),
        bad,
    }
}

/// Where the `\n` is in the 8 bytes after the `;` at `p + len`, which hold
/// a value and its `\n` ([`parse4`] passed them), counted from `p`: the
/// first byte with bit 5 clear, which `-`, `.` and the digits all have
/// set.
///
/// Apart from [`parse4`], so that a lane's next line is found from its
/// `;` by a load and three instructions rather than through the round's
/// value vector: the path each round waits on to start the next is then
/// short (docs/PERFORMANCE.md, *Lanes and streams*).
///
/// # Safety
/// `p + len + 1` must be valid for reads of 8 bytes.
#[inline(always)]
unsafe fn newline_at(p: *const u8, len: usize) -> usize {
    static BIT5: u64 = 0x2020_2020_2020_2020;
    let at: u64;
    // In `asm!` so that the load stays its own: the compiler merged it with
    // the round's value loads and spilled the word.
    // SAFETY: reads 8 bytes at `p + len + 1` (forwarded from the caller) and
    // a static, writes only its register and the flags; no stack.
    unsafe {
        std::arch::asm!(
            "mov {x}, qword ptr [{p} + {len} + 1]",
            "andn {x}, {x}, qword ptr [rip + {m}]",
            "tzcnt {x}, {x}",
            p = in(reg) p,
            len = in(reg) len,
            m = sym BIT5,
            x = out(reg) at,
            options(pure, readonly, nostack),
        );
    }
    len + 1 + at as usize / 8
}

/// The 8-byte words at `q[0..4]`, one per lane.
///
/// # Safety
/// Each `q[k]` must be valid for reads of 8 bytes.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn words4(q: &[*const u8; 4]) -> __m256i {
    // SAFETY: forwarded from the caller (`load` reads 8 bytes).
    let w = |k: usize| unsafe { load(q[k]) } as i64;
    _mm256_set_epi64x(w(3), w(2), w(1), w(0))
}

/// The round's four rows as the short table counts them
/// (`short::total` in `crate::table`), one per lane: the vector, and where
/// the loop does not keep its registers, its lanes stored (see
/// [`Totals::new`]).
#[derive(Clone, Copy)]
struct Totals<'a, const KEEP: bool> {
    v: __m256i,
    stored: &'a [i64; LANES],
}

impl<'a, const KEEP: bool> Totals<'a, KEEP> {
    /// The totals `v`, stored in `stored` where the loop does not keep
    /// its registers. Where it does, nothing is stored: the vector stays in
    /// one and each row takes its total out of it, no store and reload on
    /// the load ports the loop is short of. In the other loop the compiler
    /// spills the vector anyway, so its lanes are stored as two 128-bit
    /// halves: each row's 64-bit reload then lies within one store, which
    /// the store buffer forwards whatever its half (docs/PERFORMANCE.md,
    /// *Lanes and streams*).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn new(v: __m256i, stored: &'a mut [i64; LANES]) -> Self {
        if !KEEP {
            // SAFETY: `stored` holds 4 64-bit lanes, two per store.
            unsafe {
                _mm_storeu_si128(stored.as_mut_ptr().cast(), _mm256_castsi256_si128(v));
                _mm_storeu_si128(
                    stored.as_mut_ptr().add(2).cast(),
                    _mm256_extracti128_si256::<1>(v),
                );
            }
        }
        Totals { v, stored }
    }

    /// Lane `k`'s total.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn get(self, k: usize) -> i64 {
        if !KEEP {
            // A volatile read, one load: a plain one was served by moving
            // the value out of the vector the compiler kept on the stack.
            // SAFETY: a read of an array's element.
            return unsafe { std::ptr::read_volatile(&self.stored[k]) };
        }
        match k {
            0 => _mm256_extract_epi64::<0>(self.v),
            1 => _mm256_extract_epi64::<1>(self.v),
            2 => _mm256_extract_epi64::<2>(self.v),
            _ => _mm256_extract_epi64::<3>(self.v),
        }
    }
}

/// Each lane's line as its first 32 bytes show it.
struct Windows {
    /// Where the line's first `;` is, 32 if not in the window.
    len: [usize; LANES],
    /// Where the loop keeps its registers, a bit for each `\n` in the
    /// window. A short row's next line starts after the first: its name
    /// holds none, or the table refuses it, and its value's `\n` lies
    /// within the window. A `tzcnt` on from the window, where the lane's
    /// next round waited on [`newline_at`]'s load; the other loop has no
    /// registers to spare for the bits, which cost it more than they saved
    /// (docs/PERFORMANCE.md, *Registers across calls*).
    newlines: [u32; LANES],
}

/// What a round found of its lines: their windows, where their values are
/// `bad` (see [`Values`]) and their totals.
#[derive(Clone, Copy)]
struct Round<'a, const KEEP: bool> {
    w: &'a Windows,
    bad: u32,
    totals: Totals<'a, KEEP>,
}

/// Adds lane `k`'s row, its `;` at `w.len[k]` and, for a name of under 32
/// bytes, its value parsed in `totals` unless `bad` says it is not one
/// (the fields of `round`),
/// and keeps it in `log` as [`Log`] says, and moves the lane to its next
/// line; `false` if the scanner does not take the row.
///
/// # Safety
/// `p[k]` points into `adder`'s chunk, with PAD bytes of it from `p[k]`,
/// the CPU has AVX2 and BMI, and `*shape == adder.shape()`.
#[inline(always)]
unsafe fn row<const KEEP: bool, L: Log>(
    adder: &mut ChunkAdder,
    log: &mut L,
    shape: &mut Shape,
    p: &mut [*const u8; LANES],
    k: usize,
    round: Round<KEEP>,
) -> bool {
    let Round { w, bad, totals } = round;
    let len = &w.len;
    // The round's parse of the row's value, for a name its window holds:
    // the row's total and the line's length, or `None` where `bad` says
    // the bytes after the `;` are not a value.
    let parsed = || {
        if bad & 0x1f << (8 * k) != 0 {
            return None;
        }
        let next = if KEEP && len[k] <= SHORT {
            w.newlines[k].trailing_zeros() as usize + 1
        } else {
            // SAFETY: the value's 8 bytes lie within the PAD readable bytes
            // at `p[k]` (forwarded from the caller), the `;` at `len[k] < 32`.
            1 + unsafe { newline_at(p[k], len[k]) }
        };
        // SAFETY: the CPU has AVX2 (forwarded from the caller).
        let total = unsafe { totals.get(k) };
        Some((total, next))
    };
    let next = if len[k] <= SHORT {
        let Some((total, next)) = parsed() else {
            return false;
        };
        // SAFETY: 16 readable bytes at `p[k]` (forwarded from the caller).
        let (w0, w1) = unsafe { load_words(p[k]) };
        let (a, b) = (w0 & KEY_MASKS[0][len[k]], w1 & KEY_MASKS[1][len[k]]);
        // SAFETY: `shape` is the adder's (forwarded from the caller).
        let id = match unsafe { adder.add_short_if_near::<L>(shape, a, b, total) } {
            Some(id) => id,
            None => {
                let added = if KEEP {
                    // SAFETY: the CPU has AVX2 (forwarded from the caller).
                    unsafe { keep::add_short_past(adder, a, b, total) }
                } else {
                    adder.add_short_past(a, b, total)
                };
                let Some(id) = added else {
                    return false;
                };
                *shape = adder.shape();
                // Only an insert grows the table: where registers are kept,
                // the loop learns here that it outgrew L2, with no test per
                // round; without its test the other loop was laid out worse
                // (docs/PERFORMANCE.md, *Registers across calls*).
                if KEEP && adder.is_big() {
                    log.row(id, total - ONE_ROW);
                    p[k] = p[k].wrapping_add(next);
                    return false;
                }
                id
            }
        };
        log.row(id, total - ONE_ROW);
        next
    } else if KEEP && len[k] < 32 {
        // A name the window holds: the round parsed its value.
        let Some((total, next)) = parsed() else {
            return false;
        };
        // The value: a total's low 16 bits.
        let value = total as i16;
        // At once if its home bucket holds it, else through the call.
        // SAFETY: PAD bytes of the chunk at `p[k]`, its first `;` at
        // `len[k] < 32`, the CPU has AVX2 (forwarded from the caller).
        let added = unsafe {
            match adder.add_long_head_if_home::<L>(p[k], len[k], value) {
                Some(id) => {
                    log.row(id, value.into());
                    true
                }
                None => keep::add_head::<L>(adder, p[k], len[k], value),
            }
        };
        if !added {
            return false;
        }
        next
    } else {
        let line = if KEEP {
            keep::long_line::<L>
        } else {
            <Avx2 as Kernel>::long_line::<L>
        };
        // SAFETY: forwarded from the caller.
        match unsafe { line(adder, p[k], len[k]) } {
            Some(n) => n,
            None => return false,
        }
    };
    p[k] = p[k].wrapping_add(next);
    true
}

/// Parses [`LANES`] stretches of `adder`'s chunk side by side, one line of
/// each per round, into the table and `log`: lane `k` from `ps[k]` while
/// its lines start before `ends[k]`.
/// Returns as soon as any lane is done, meets a line the scanner does not
/// take, or the short table outgrows the L2 cache, with every `ps[k]` at
/// the first line of lane `k` not yet added; rows of long names are added
/// a row late, as [`Avx2::add_long`] says. With `KEEP`, the loop makes
/// its calls through [`keep`], keeping its registers across them.
///
/// `buf` is the adder's chunk, passed beside it: read from the adder, it
/// changed how the compiler laid the loop out in registers, and the
/// table's shape was then reloaded on every row.
///
/// # Safety
/// `buf` is `adder`'s chunk, `ends[k] + PAD <= buf.len()` for every `k`,
/// and the CPU has AVX2 and BMI.
#[target_feature(enable = "avx2,bmi1,bmi2")]
pub(in crate::scan) unsafe fn lanes<const KEEP: bool, L: Log>(
    adder: &mut ChunkAdder,
    log: &mut L,
    buf: &[u8],
    ps: &mut [usize; LANES],
    ends: &[usize; LANES],
) {
    debug_assert!(std::ptr::eq(buf, adder.chunk()));
    let base = buf.as_ptr();
    let mut p = ps.map(|i| base.wrapping_add(i));
    let e = ends.map(|i| base.wrapping_add(i));
    let semicolon = _mm256_set1_epi8(b';' as i8);
    let newline = _mm256_set1_epi8(b'\n' as i8);
    let mut shape = adder.shape();
    'scan: loop {
        // A round moves each lane at most `LINE_SPAN` bytes, so these
        // rounds all start below every lane's end.
        let left = (0..LANES)
            .map(|k| (e[k] as usize).saturating_sub(p[k] as usize))
            .min()
            .unwrap_or(0);
        if left == 0 {
            break;
        }
        for _ in 0..left.div_ceil(LINE_SPAN) {
            // Each line's window, its input prefetched `AHEAD` bytes on, as
            // the lockstep feed does (docs/PERFORMANCE.md, *The scanner*).
            let mut newlines = [0; LANES];
            // SAFETY: every `p[k]` is below its lane's end (see `left`), so
            // `PAD >= 32` bytes from it lie in `buf`.
            let len = std::array::from_fn(|k| unsafe {
                prefetch::<true, _>(p[k].wrapping_add(AHEAD));
                let v = _mm256_loadu_si256(p[k].cast());
                if KEEP {
                    newlines[k] = _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, newline)) as u32;
                }
                let m = _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, semicolon)) as u32;
                m.trailing_zeros() as usize
            });
            let w = Windows { len, newlines };
            // The 8 bytes after each `;` (garbage for a long name, whose
            // verdict is not used): `len + 9 <= 41 <= PAD`.
            let q: [*const u8; LANES] = std::array::from_fn(|k| p[k].wrapping_add(w.len[k] + 1));
            // SAFETY: as above.
            let values = unsafe { parse4(words4(&q)) };
            // The four rows as the short table counts them, by one add.
            let totals_v = _mm256_add_epi64(values.tenths, _mm256_set1_epi64x(ONE_ROW));
            let mut stored = [0i64; LANES];
            let totals = Totals::<KEEP>::new(totals_v, &mut stored);
            // Each lane's row in turn, written out so that each lane's
            // offsets are constants. Where registers are kept, names of 32
            // bytes and more are rare and every other lane's value is
            // checked: one test then clears the round's four values, and
            // each row has none of its own (docs/PERFORMANCE.md, *Registers
            // across calls*).
            // SAFETY: every `p[k]` is below its lane's end, as above.
            let mut lane = |k, bad| unsafe {
                let round = Round { w: &w, bad, totals };
                row::<KEEP, L>(adder, log, &mut shape, &mut p, k, round)
            };
            let bad = values.bad;
            let ok = if KEEP && bad == 0 {
                lane(0, 0) && lane(1, 0) && lane(2, 0) && lane(3, 0)
            } else {
                lane(0, bad) && lane(1, bad) && lane(2, bad) && lane(3, bad)
            };
            if !ok {
                break 'scan;
            }
            if !KEEP && adder.is_big() {
                break;
            }
        }
        if !KEEP && adder.is_big() {
            break;
        }
    }
    *ps = p.map(|x| x as usize - base as usize);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::value::tests::every_short_token;

    #[test]
    fn parse4_and_newline_at_agree_with_the_strict_parser_on_every_short_token() {
        if !super::super::available() {
            return;
        }
        let words = every_short_token();
        // Four at a time, each token in each lane.
        for group in words.chunks(4).chain(words[1..].chunks(4)) {
            let mut w = [0u64; 4];
            for (k, &(word, _)) in group.iter().enumerate() {
                w[k] = word;
            }
            // SAFETY: the CPU has AVX2 (checked above).
            let (tenths, bad) = unsafe {
                let v = parse4(_mm256_loadu_si256(w.as_ptr().cast()));
                let mut t = [0i64; 4];
                _mm256_storeu_si256(t.as_mut_ptr().cast(), v.tenths);
                (t, v.bad)
            };
            for (k, &(word, want)) in group.iter().enumerate() {
                // The word after a `;`, as the lanes read it.
                let mut line = [0u8; 9];
                line[0] = b';';
                line[1..].copy_from_slice(&word.to_le_bytes());
                let ok = bad >> (8 * k) & 0x1f == 0;
                // SAFETY: the 8 bytes after the `;` are in `line`.
                let got = ok.then(|| (tenths[k], unsafe { newline_at(line.as_ptr(), 0) }));
                assert_eq!(got, want, "{:?}", word.to_le_bytes());
            }
        }
    }
}

//! Reading a line a word or a vector at a time: the fast engines' parser.
//!
//! [`parse_line`](crate::parse::parse_line) is the definition of the
//! grammar; this module computes the same thing without a loop over bytes:
//! one 32-byte AVX2 load is compared with `;` and `\n` (on CPUs without
//! AVX2, two 8-byte SWAR steps find the `;`), a name of 32 bytes or more
//! is found in four such windows at once, and the value is parsed and
//! validated from one 8-byte word with no data-dependent branch but the
//! verdict. Anything unusual (a malformed line, the end of a chunk, a name
//! the table refuses) makes the scanner stop and hand the line to the
//! strict parser, so both always agree on what is valid. With AVX2, a row
//! of a long name is added a row late, and a refusal is learnt when the
//! scan ends.
//!
//! A chunk is read as [`STREAMS`] stretches side by side
//! ([`scan_lockstep`]): each line's start depends on the line before, and
//! independent stretches give the CPU other work while it waits.
//!
//! What bounds the loop is less its instruction count than how long each
//! row waits: rows in flight fill the CPU's scheduler while their loads
//! and multiplies finish. A hash with 4 fewer instructions but a longer
//! chain was slower; taking about 8 cycles off the chain from a line's
//! start to its value and slot (the AVX2 window gives the value's form,
//! and the key is cut from word loads, neither waiting on another load)
//! was faster (docs/PERFORMANCE.md, steps 17 and 18).
//!
//! Every line read here may touch up to [`PAD`] bytes from its start; the
//! safe entry points only start lines at least that far from the end of
//! their buffer, which is what makes the unchecked loads inside sound.

use crate::bits::{load, matches, prefetch};
use crate::parse::MAX_NAME_LEN;
use crate::table::{Adder, SHORT};

/// Bytes a line read may touch past its start: four 32-byte windows reach
/// past the longest name (100 bytes), and the value's 8-byte read ends at
/// most 109 bytes in.
pub const PAD: usize = 128;

/// One of the four forms a value can take, and how to read it.
struct Form {
    /// `(w & mask) == want`: the `-`, `.` and `\n` exactly, and a high
    /// nibble of 3 for each digit.
    mask: u64,
    want: u64,
    /// 6 added to each digit byte keeps bit 4 set (checked in `bit4`)
    /// exactly when its low nibble is at most 9.
    six: u64,
    bit4: u64,
    /// The digits' low nibbles, and the multiplier that weighs them 100,
    /// 10 and 1 into the top 10 bits of the product: the other partial
    /// products fall below them or wrap out of the word (the one that
    /// would land on bit 62 is a multiple of 100 · 2^62, so 0), and no
    /// mask is needed after the shift.
    digits: u64,
    weights: u64,
    /// 0, or all ones for a negative value.
    sign: u64,
    /// Bytes the value takes, `\n` included.
    used: u64,
}

/// The form of `pattern`, where `d` stands for any ASCII digit.
const fn form(pattern: &[u8]) -> Form {
    let mut f = NONE;
    f.want = 0;
    f.used = pattern.len() as u64;
    // Digit positions, most significant first, weigh 100, 10, 1 (tenths)
    // when there are three, 10 and 1 when there are two.
    let mut weight = if pattern.len() == 6 || (pattern.len() == 5 && pattern[0] != b'-') {
        100
    } else {
        10
    };
    let mut i = 0;
    while i < pattern.len() {
        let at = 8 * i as u32;
        if pattern[i] == b'd' {
            f.mask |= 0xf0 << at;
            f.want |= 0x30 << at;
            f.six |= 0x06 << at;
            f.bit4 |= 0x10 << at;
            f.digits |= 0x0f << at;
            f.weights = f.weights.wrapping_add(weight << (VALUE_AT - at));
            weight /= 10;
        } else {
            f.mask |= 0xff << at;
            f.want |= (pattern[i] as u64) << at;
        }
        i += 1;
    }
    if pattern[0] == b'-' {
        f.sign = u64::MAX;
    }
    f
}

/// Where the weighted digits' sum lands in the product: its top 10 bits.
const VALUE_AT: u32 = 54;

/// Matches nothing.
const NONE: Form = Form {
    mask: 0,
    want: 1,
    six: 0,
    bit4: 0,
    digits: 0,
    weights: 0,
    sign: 0,
    used: 0,
};

/// Every [`Form`] field for each 4-bit signature (see [`parse_value`]),
/// one array per field, so that the signature times 8 is the offset in
/// each (an address mode, no instruction).
#[repr(C, align(64))]
struct Forms {
    mask: [u64; 16],
    want: [u64; 16],
    six: [u64; 16],
    bit4: [u64; 16],
    digits: [u64; 16],
    weights: [u64; 16],
    sign: [u64; 16],
    used: [u64; 16],
}

/// The forms by signature: bit `k` set means byte `k` may be a digit. A
/// `-` can only be byte 0, and the `.` is the first byte after it that
/// cannot be a digit.
static FORMS: Forms = {
    let mut t = Forms {
        mask: [NONE.mask; 16],
        want: [NONE.want; 16],
        six: [NONE.six; 16],
        bit4: [NONE.bit4; 16],
        digits: [NONE.digits; 16],
        weights: [NONE.weights; 16],
        sign: [NONE.sign; 16],
        used: [NONE.used; 16],
    };
    let mut sig = 0;
    while sig < 16 {
        let other = !sig;
        let dot = (other & !1usize).trailing_zeros();
        let f = match (other & 1, dot) {
            (0, 1) => form(b"d.d\n"),
            (0, 2) => form(b"dd.d\n"),
            (1, 2) => form(b"-d.d\n"),
            (1, 3) => form(b"-dd.d\n"),
            _ => NONE,
        };
        t.mask[sig] = f.mask;
        t.want[sig] = f.want;
        t.six[sig] = f.six;
        t.bit4[sig] = f.bit4;
        t.digits[sig] = f.digits;
        t.weights[sig] = f.weights;
        t.sign[sig] = f.sign;
        t.used[sig] = f.used;
        sig += 1;
    }
    t
};

/// Parses the value at the start of `w` (the 8 bytes after `;`, little
/// endian), which must be `-?\d{1,2}\.\d\n`. Returns the value in tenths and
/// the number of bytes it took, `\n` included; `None` if the bytes do not
/// match exactly.
///
/// The value is an `i64`, although it fits an `i16`: the sign is applied
/// to the whole word, and the table adds it to an `i64` sum. Cut to `i16`
/// here, it was sign-extended again for the sum, one instruction more per
/// row (docs/PERFORMANCE.md, step 41).
///
/// No data-dependent branch but the verdict: bit 4 is set in every ASCII
/// digit and clear in `.` and `-`, so that bit of bytes 0..=3, gathered into
/// four bits by one multiply, says which of the four forms the bytes can
/// be. A table then gives that form's masks, checked in two compares, and
/// the multiplier that combines its digits (the trick of Quan Anh Mai's
/// 1BRC entry, with one multiplier per form so that no shift is needed).
#[inline(always)]
pub fn parse_value(w: u64) -> Option<(i64, usize)> {
    parse_value_as(w, signature(w))
}

/// Bit 4 of bytes 0..=3 of `w`, as bits 0..=3: the [`FORMS`] index.
#[inline(always)]
fn signature(w: u64) -> usize {
    // Bits 4, 12, 20 and 28 land on bits 28..=31 of the 32-bit product
    // (no two partial products meet, so nothing carries).
    ((w as u32 & 0x1010_1010).wrapping_mul(0x0102_0408) >> 28) as usize
}

/// [`parse_value`] given `sig`, the [`signature`] of `w`, which the AVX2
/// kernel finds in its window before `w` is loaded.
#[inline(always)]
fn parse_value_as(w: u64, sig: usize) -> Option<(i64, usize)> {
    let f = &FORMS;
    let sig = sig & 15;
    if w & f.mask[sig] != f.want[sig] || w.wrapping_add(f.six[sig]) & f.bit4[sig] != f.bit4[sig] {
        return None;
    }
    let abs = (w & f.digits[sig]).wrapping_mul(f.weights[sig]) >> VALUE_AT;
    let value = (abs ^ f.sign[sig]).wrapping_sub(f.sign[sig]) as i64;
    Some((value, f.used[sig] as usize))
}

/// What a kernel sees in the first bytes of a line.
#[derive(Clone, Copy)]
struct Window {
    /// Index of the first `;` among them; `WINDOW` if there is none.
    len: usize,
    /// A bit for each `\n` among them (vector kernels only).
    newlines: u32,
    /// Bit `k` set if byte `k + 1` among them has bit 4 set, as digits do:
    /// shifted right by `len`, the [`signature`] of a short name's value
    /// (vector kernels only).
    bit4: u32,
    /// For `len <= SHORT`, the name and its `;`, zero-padded: the short
    /// table's key. Unused otherwise.
    a: u64,
    b: u64,
}

/// How a line's first bytes are read, at its lowest level.
trait Kernel {
    /// Bytes the first read covers.
    const WINDOW: usize;
    /// Whether the window is one vector that also finds
    /// [`Window::newlines`] and [`Window::bit4`] (in which case every valid
    /// line with a short name ends within it).
    const VECTOR: bool;

    /// Reads the first `WINDOW` bytes of the line at `p`.
    ///
    /// # Safety
    /// `p` must be valid for reads of 32 bytes.
    unsafe fn window(p: *const u8) -> Window;

    /// The length of the name of the line at `p`, whose window found its
    /// first `;` at `win_len` (the window's size if none, as always for a
    /// vector kernel, which takes a name its window holds by
    /// [`Kernel::add_head`]), more than [`SHORT`], if it is at most
    /// [`MAX_NAME_LEN`].
    ///
    /// # Safety
    /// `p` must be valid for reads of [`PAD`] bytes.
    unsafe fn long_name(p: *const u8, win_len: usize) -> Option<usize>;

    /// Adds the row of the name of `len` bytes at `p` to the long names'
    /// table; `false` if the table refuses the name. The AVX2 kernel adds
    /// it a row late ([`Adder::add_long_deferred_avx2`]): its `false` says
    /// that the row deferred before was refused, and its scans end by
    /// [`settle`], which finds that row.
    ///
    /// # Safety
    /// `p` must be valid for reads of [`PAD`] bytes until the scan returns,
    /// its first `;` at `p + len`, `SHORT < len <= MAX_NAME_LEN`.
    unsafe fn add_long(adder: &mut Adder, p: *const u8, len: usize, value: i16) -> bool;

    /// [`Kernel::add_long`] for a name whose `;` is in the window, which a
    /// vector kernel cuts, hashes and compares as one vector
    /// ([`Adder::add_long_head_avx2`]). Only vector kernels call it.
    ///
    /// # Safety
    /// As for [`Kernel::add_long`], and `len < 32`.
    unsafe fn add_head(adder: &mut Adder, p: *const u8, len: usize, value: i16) -> bool;
}

/// Portable kernel: two 8-byte SWAR steps.
struct Swar;

impl Kernel for Swar {
    const WINDOW: usize = 16;
    const VECTOR: bool = false;

    #[inline(always)]
    unsafe fn long_name(p: *const u8, win_len: usize) -> Option<usize> {
        if win_len < Self::WINDOW {
            return Some(win_len);
        }
        // SAFETY: the caller guarantees PAD > MAX_NAME_LEN readable bytes.
        let rest = unsafe { std::slice::from_raw_parts(p, MAX_NAME_LEN + 1) };
        memchr::memchr(b';', &rest[Self::WINDOW..]).map(|i| Self::WINDOW + i)
    }

    #[inline(always)]
    unsafe fn add_long(adder: &mut Adder, p: *const u8, len: usize, value: i16) -> bool {
        // SAFETY: the caller guarantees `len < PAD` readable bytes.
        adder.add_long(unsafe { std::slice::from_raw_parts(p, len) }, value)
    }

    #[inline(always)]
    unsafe fn add_head(adder: &mut Adder, p: *const u8, len: usize, value: i16) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { Self::add_long(adder, p, len, value) }
    }

    #[inline(always)]
    unsafe fn window(p: *const u8) -> Window {
        // SAFETY: the caller guarantees 32 readable bytes at `p`.
        let (w0, w1) = unsafe { (load(p), load(p.add(8))) };
        // `m ^ (m - 1)` keeps the bytes up to and including the lowest
        // match, the one `matches` gets exactly right.
        let m0 = matches(w0, b';');
        if m0 != 0 {
            let len = (m0.trailing_zeros() / 8) as usize;
            return Window {
                len,
                newlines: 0,
                bit4: 0,
                a: w0 & (m0 ^ (m0 - 1)),
                b: 0,
            };
        }
        let m1 = matches(w1, b';');
        let len = if m1 != 0 {
            8 + (m1.trailing_zeros() / 8) as usize
        } else {
            Self::WINDOW
        };
        let b = if len <= SHORT {
            w1 & (m1 ^ (m1 - 1))
        } else {
            w1
        };
        Window {
            len,
            newlines: 0,
            bit4: 0,
            a: w0,
            b,
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{Adder, Window};
    use std::arch::x86_64::*;

    /// Reads the two little-endian words at `p` with loads of their own,
    /// which the compiler cannot replace by moving bytes out of a vector
    /// it loaded from the same place.
    ///
    /// # Safety
    /// `p` must be valid for reads of 16 bytes.
    #[inline(always)]
    unsafe fn load_words(p: *const u8) -> (u64, u64) {
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
    pub(super) struct Avx2;

    impl super::Kernel for Avx2 {
        const WINDOW: usize = 32;
        const VECTOR: bool = true;

        #[inline(always)]
        unsafe fn long_name(p: *const u8, win_len: usize) -> Option<usize> {
            // The three 32-byte windows after the first, which found no `;`
            // (a name it holds goes to `add_head`), reaching past the
            // longest name (`p + 128 <= p + PAD`), searched at once: no
            // branch on the name's length, where a loop over the windows
            // mispredicted its exit on names of random lengths (and a call
            // to `memchr` per row cost 6% on the 10K set).
            debug_assert_eq!(win_len, Self::WINDOW);
            // SAFETY: the caller guarantees PAD = 128 readable bytes at `p`;
            // AVX2 is present, as for `window`.
            let semis = |at: usize| unsafe {
                let v = _mm256_loadu_si256(p.add(at).cast());
                let m = _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b';' as i8)));
                u128::from(m as u32) << at
            };
            let len = (semis(32) | semis(64) | semis(96)).trailing_zeros() as usize;
            (len <= super::MAX_NAME_LEN).then_some(len)
        }

        #[inline(always)]
        unsafe fn add_long(adder: &mut Adder, p: *const u8, len: usize, value: i16) -> bool {
            // SAFETY: forwarded from the caller: PAD = 128 readable bytes
            // until the scan returns, the `;` at `p + len`, AVX2 present as
            // for `window`.
            unsafe { adder.add_long_deferred_avx2(p, len, value) }
        }

        #[inline(always)]
        unsafe fn add_head(adder: &mut Adder, p: *const u8, len: usize, value: i16) -> bool {
            // SAFETY: forwarded from the caller: PAD readable bytes until
            // the scan returns, the `;` at `p + len < p + 32`, AVX2 present.
            unsafe { adder.add_long_head_avx2(p, len, value) }
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
                // vector did (a mask load) and moving it out took 3 cycles
                // more. A plain read would be served from `v` by the
                // compiler, moving the words out after all
                // (docs/PERFORMANCE.md, step 18), hence `load_words`. A
                // long name's words are not used.
                let (w0, w1) = load_words(p);
                let keep = 8 * len as u32 + 8;
                let a = _bzhi_u64(w0, keep);
                let b = _bzhi_u64(w1, keep.saturating_sub(64));
                Window {
                    len,
                    newlines: _mm256_movemask_epi8(nl) as u32,
                    bit4: (_mm256_movemask_epi8(_mm256_slli_epi16::<3>(v)) as u32) >> 1,
                    a,
                    b,
                }
            }
        }
    }
}

/// The value of the line at `p`, whose window `win` found a short name,
/// and how far after `p` the next line starts; `None` if the value is not
/// valid.
///
/// # Safety
/// `p + PAD <= buf.len()`, and `win.len <= SHORT`.
#[inline(always)]
unsafe fn short_value<K: Kernel>(buf: &[u8], p: usize, win: Window) -> Option<(i64, usize)> {
    // SAFETY: `len <= 15`, so `p + len + 9 <= p + PAD <= buf.len()`.
    let w = unsafe { load(buf.as_ptr().add(p + win.len + 1)) };
    // The value's signature from the window: it does not wait for `w`.
    let sig = if K::VECTOR {
        (win.bit4 >> win.len) as usize
    } else {
        signature(w)
    };
    let (value, used) = parse_value_as(w, sig)?;
    // With the kernel's `\n`, the next line's start does not wait for the
    // value's loads and bit tricks. The value ends in the first `\n` after
    // the `;`, so the two agree unless the name holds a `\n`: then the key
    // holds it too, and the table refuses it.
    let next = if K::VECTOR {
        win.newlines.trailing_zeros() as usize + 1
    } else {
        win.len + 1 + used
    };
    Some((value, next))
}

/// Parses the line at `p` into the table; returns
/// where the next line starts, or `None` if the scanner does not accept
/// the line (the caller hands it to the strict parser).
///
/// # Safety
/// `p + PAD <= buf.len()`, and the kernel's CPU features are present.
#[inline(always)]
unsafe fn line<K: Kernel>(adder: &mut Adder, buf: &[u8], p: usize) -> Option<usize> {
    let ptr = buf.as_ptr();
    // Bounds of every unchecked access below: `p + PAD <= buf.len()`. The
    // window read touches `p..p + 32`, the value read
    // `p + len + 1..p + len + 9` with `len <= MAX_NAME_LEN` (`long_name`
    // looks no further), and `p + 100 + 9 < p + PAD`.
    // SAFETY: `p + 32 <= p + PAD <= buf.len()`.
    let win = unsafe { K::window(ptr.add(p)) };
    if win.len <= SHORT {
        // SAFETY: forwarded from the caller; `win` is the window at `p`.
        let (value, next) = unsafe { short_value::<K>(buf, p, win) }?;
        if !adder.add_short(win.a, win.b, value) {
            return None;
        }
        Some(p + next)
    } else if K::VECTOR && win.len < K::WINDOW {
        // A name the window holds whole needs no search and one vector for
        // its key (step 40). Tested after the short names', not before the
        // long ones': the other order cost every short row a second test
        // (the 413 set 1.08×, the 10K set no better).
        // SAFETY: PAD readable bytes at `p`, the first `;` at `p + len`
        // (the window's first), `SHORT < len < 32`.
        Some(p + unsafe { long_row::<K, true>(adder, ptr.add(p), win.len) }?)
    } else {
        // SAFETY: `p + PAD <= buf.len()`; `win` is the window at `p`.
        Some(p + unsafe { long_line::<K>(adder, ptr.add(p), win.len) }?)
    }
}

/// [`line()`] for the line at `p` whose window found its first `;` at
/// `win_len > SHORT` (the window's size if none); returns the line's
/// length, `\n` included.
///
/// # Safety
/// `p` valid for reads of [`PAD`] bytes until the scan returns, and the
/// kernel's CPU features are present.
#[inline(always)]
unsafe fn long_line<K: Kernel>(adder: &mut Adder, p: *const u8, win_len: usize) -> Option<usize> {
    // SAFETY: `p` is valid for PAD bytes.
    let len = unsafe { K::long_name(p, win_len) }?;
    // SAFETY: PAD readable bytes, the first `;` at `p + len` (`long_name`),
    // and `SHORT < len <= 100`.
    unsafe { long_row::<K, false>(adder, p, len) }
}

/// The rest of a line whose name of `len > SHORT` bytes is found: parses
/// its value and adds the row to the long names' table, with
/// [`Kernel::add_head`] if `HEAD` (only for `len < 32`), else
/// [`Kernel::add_long`]. Returns the line's length, `\n` included.
///
/// # Safety
/// `p` valid for reads of [`PAD`] bytes until the scan returns, its first
/// `;` at `p + len` with `SHORT < len <= MAX_NAME_LEN` (`len < 32` if
/// `HEAD`), and the kernel's CPU features are present.
#[inline(always)]
unsafe fn long_row<K: Kernel, const HEAD: bool>(
    adder: &mut Adder,
    p: *const u8,
    len: usize,
) -> Option<usize> {
    // SAFETY: `len <= 100`, so `len + 9 <= PAD`.
    let w = unsafe { load(p.add(len + 1)) };
    let (value, used) = parse_value(w)?;
    // Cut once for the long table's calls, which take an `i16` (their
    // rows are few).
    let value = value as i16;
    // SAFETY: forwarded from the caller.
    let added = unsafe {
        if HEAD {
            K::add_head(adder, p, len, value)
        } else {
            K::add_long(adder, p, len, value)
        }
    };
    added.then_some(len + 1 + used)
}

/// Parses lines of `buf` starting at `start` while they start before
/// `limit`, adding each to the table.
///
/// Returns `Ok(p)`, the first line start at or after `limit`, or `Err(p)`,
/// the start of a line the scanner does not accept; the caller hands that
/// line to the strict parser and resumes after it.
///
/// # Safety
/// `limit + PAD <= buf.len()`, and the kernel's CPU features are present.
#[inline(always)]
unsafe fn lines<K: Kernel>(
    adder: &mut Adder,
    buf: &[u8],
    start: usize,
    limit: usize,
) -> Result<usize, usize> {
    let mut p = start;
    while p < limit {
        // SAFETY: `p < limit`, so `p + PAD <= buf.len()`; CPU features
        // forwarded from the caller.
        p = unsafe { line::<K>(adder, buf, p) }.ok_or(p)?;
    }
    Ok(p)
}

/// Parses [`STREAMS`] stretches of lines in lockstep, one line of each in
/// turn: stream `k` from `ps[k]` while its lines start before `ends[k]`.
/// Each line's start depends on the line before it, a chain of loads and
/// bit tricks the CPU cannot shorten; independent streams give it other
/// work while it waits (see docs/PERFORMANCE.md). Returns as soon as any
/// stream is done or meets a line the scanner does not accept, with every
/// `ps[k]` at the first line of stream `k` not yet added.
///
/// # Safety
/// `ends[k] + PAD <= buf.len()` for every `k`, and the kernel's CPU
/// features are present.
#[inline(always)]
unsafe fn lockstep<K: Kernel>(
    adder: &mut Adder,
    buf: &[u8],
    ps: &mut [usize; STREAMS],
    ends: &[usize; STREAMS],
) {
    // Written out three times below rather than looped over an array, so
    // that the compiler keeps each stream's position in a register.
    let [mut a, mut b, mut c] = *ps;
    let [ea, eb, ec] = *ends;
    while a < ea && b < eb && c < ec {
        // SAFETY: each position is below its stream's end (checked before
        // each round), so `p + PAD <= buf.len()`; CPU features forwarded
        // from the caller.
        let go = unsafe {
            step::<K>(adder, buf, &mut a)
                && step::<K>(adder, buf, &mut b)
                && step::<K>(adder, buf, &mut c)
        };
        if !go {
            break;
        }
    }
    *ps = [a, b, c];
}

/// How far ahead of each stream's line [`step`] asks for the input.
const AHEAD: usize = 512;

/// Starts loading the input [`AHEAD`] bytes after `p`, which need not be
/// in the buffer (a prefetch never faults).
///
/// Why: the hardware's prefetchers keep the three streams' input coming,
/// but a window that reached into a cache line not yet in L1 still waited
/// for it, on the chain from one line's start to the next, and a long
/// name's far windows more often. On the 10K set, 512 bytes ahead took
/// 0.89× the CPU time and 256 bytes 0.94× (31 alternated pairs each);
/// 256, 1024 and 2048 against 512 measured 0.98×, 1.02×, 1.00×. The 413
/// set, bound by its instructions rather than its waits, took 1.00×; the
/// 10^6-key file, whose big tables are fed a batch behind
/// ([`parse_ahead`]), 0.99× (docs/PERFORMANCE.md, step 42).
#[inline(always)]
fn prefetch_ahead(p: *const u8) {
    prefetch::<true, _>(p.wrapping_add(AHEAD));
}

/// A short row parsed ahead of its table update, its slot prefetched
/// ([`batched`]).
#[derive(Clone, Copy, Default)]
struct Pending {
    /// Where its line starts.
    at: usize,
    hash: u64,
    a: u64,
    b: u64,
    value: i64,
}

/// One line of a stream in [`lockstep`]; `false` if the scanner does not
/// take it, with `*p` left at it.
///
/// # Safety
/// As for [`line()`] at `*p`.
#[inline(always)]
unsafe fn step<K: Kernel>(adder: &mut Adder, buf: &[u8], p: &mut usize) -> bool {
    prefetch_ahead(buf.as_ptr().wrapping_add(*p));
    // SAFETY: forwarded from the caller.
    match unsafe { line::<K>(adder, buf, *p) } {
        Some(next) => {
            *p = next;
            true
        }
        None => false,
    }
}

/// Rows per stream that [`batched`] parses before adding them. A million
/// names: 32 took 0.93× the CPU time of 8, 64 the same as 32; 400,000
/// names 0.98× (docs/PERFORMANCE.md, step 44).
const BATCH: usize = 32;

/// Parses the short line at `*p` into `rows[*n]` and prefetches its slot,
/// or adds any other line the scanner takes (a long name, a value the
/// window does not parse) at once, ahead of the batch's rows; `false`, with
/// `*p` unchanged, if the stream is at its end or the scanner does not take
/// the line.
///
/// Adding a row ahead of rows before it changes no sum; and if the table
/// then refuses one of those, the input has a fault there, reported in
/// the end however the rows after it were counted (see [`settle`]).
///
/// # Safety
/// As for [`line()`] at `*p` when `*p < end`.
#[inline(always)]
unsafe fn parse_ahead<K: Kernel>(
    adder: &mut Adder,
    buf: &[u8],
    p: &mut usize,
    end: usize,
    rows: &mut [Pending; BATCH],
    n: &mut usize,
) -> bool {
    if *p >= end {
        return false;
    }
    prefetch_ahead(buf.as_ptr().wrapping_add(*p));
    // SAFETY: `*p + 32 <= *p + PAD <= buf.len()`.
    let win = unsafe { K::window(buf.as_ptr().add(*p)) };
    // SAFETY: forwarded from the caller; `win` is the window at `*p`.
    let short = (win.len <= SHORT)
        .then(|| unsafe { short_value::<K>(buf, *p, win) })
        .flatten();
    let Some((value, next)) = short else {
        // SAFETY: forwarded from the caller.
        return match unsafe { line::<K>(adder, buf, *p) } {
            Some(next) => {
                *p = next;
                true
            }
            None => false,
        };
    };
    let hash = adder.hash(win.a, win.b);
    adder.prefetch(hash);
    // `*n < BATCH` (the caller stops there); `%` spares a bounds check.
    rows[*n % BATCH] = Pending {
        at: *p,
        hash,
        a: win.a,
        b: win.b,
        value,
    };
    *n += 1;
    *p += next;
    true
}

/// Adds a stream's parsed rows in order. If the table refuses one, moves
/// the stream back to its line and returns `false`; the rows after it are
/// dropped, to be parsed again from there.
#[inline(always)]
fn add_rows(adder: &mut Adder, p: &mut usize, rows: &[Pending]) -> bool {
    for row in rows {
        if !adder.add_short_hashed(row.hash, row.a, row.b, row.value) {
            *p = row.at;
            return false;
        }
    }
    true
}

/// [`lockstep`] for a big table: parses up to [`BATCH`] short rows of
/// each stream, prefetching each row's slot, and only then adds them, so
/// that up to `BATCH * STREAMS` slot misses are in flight at once. Other
/// rows are added as they come ([`parse_ahead`]).
///
/// # Safety
/// As for [`lockstep`].
#[inline(always)]
unsafe fn batched<K: Kernel>(
    adder: &mut Adder,
    buf: &[u8],
    ps: &mut [usize; STREAMS],
    ends: &[usize; STREAMS],
) {
    let [mut a, mut b, mut c] = *ps;
    let [ea, eb, ec] = *ends;
    let mut rows = [[Pending::default(); BATCH]; STREAMS];
    loop {
        let [ra, rb, rc] = &mut rows;
        let (mut na, mut nb, mut nc) = (0, 0, 0);
        let mut flowing = true;
        // A row added at once leaves its stream's count behind the others'.
        while flowing && na.max(nb).max(nc) < BATCH {
            // SAFETY: `parse_ahead` reads only below each stream's end;
            // bounds and CPU features forwarded from the caller.
            flowing = unsafe {
                parse_ahead::<K>(adder, buf, &mut a, ea, ra, &mut na)
                    && parse_ahead::<K>(adder, buf, &mut b, eb, rb, &mut nb)
                    && parse_ahead::<K>(adder, buf, &mut c, ec, rc, &mut nc)
            };
        }
        // Every stream's rows come before its position; `&`, not `&&`, so
        // that each stream adds what it parsed.
        let added = add_rows(adder, &mut a, &ra[..na])
            & add_rows(adder, &mut b, &rb[..nb])
            & add_rows(adder, &mut c, &rc[..nc]);
        // A stream that stopped is at its end or at a line the scanner
        // does not take: the plain path finishes the streams from there.
        if !added || !flowing {
            break;
        }
    }
    *ps = [a, b, c];
}

/// How many stretches of a chunk [`scan_lockstep`] parses side by side.
pub const STREAMS: usize = 3;

/// Adds the long rows the AVX2 kernel deferred, if any (one per queue: see
/// [`Adder::add_long_deferred_avx2`] and [`Adder::add_long_head_avx2`]),
/// and returns where in `buf` the first line whose name the table refused
/// starts, if any. Every AVX2 scan ends here,
/// while the rows it deferred are still in `buf`; the caller moves that
/// line's stream back to it.
///
/// A deferred row's stream has moved on by the time it is added, so rows
/// after a refused one are added too (the scan stops at the next long row,
/// in whichever stream and queue). They are moot: every name the table
/// refuses is a fault of the input, which the strict parser then reports
/// at that line, the first of its stream (the streams are finished in
/// input order, so the first fault reported is the input's first).
#[cfg(target_arch = "x86_64")]
fn settle(adder: &mut Adder, buf: &[u8]) -> Option<usize> {
    // SAFETY: only the AVX2 kernel defers rows, and the callers only run it
    // where the CPU has AVX2; every row deferred since the last call is in
    // `buf`, which the caller still borrows.
    let at = unsafe { adder.settle_long_avx2() }?;
    Some(at as usize - buf.as_ptr() as usize)
}

/// Which kernel [`scan`] uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernels {
    /// The best this CPU has (AVX2 if present, else SWAR).
    Best,
    /// SWAR only: portable, and how the fallback is tested on AVX2 CPUs.
    Portable,
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2")]
unsafe fn lines_avx2(
    adder: &mut Adder,
    buf: &[u8],
    start: usize,
    limit: usize,
) -> Result<usize, usize> {
    // SAFETY: forwarded from the caller (bounds; AVX2 and BMI present).
    unsafe { lines::<avx2::Avx2>(adder, buf, start, limit) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2")]
unsafe fn lockstep_avx2(
    adder: &mut Adder,
    buf: &[u8],
    ps: &mut [usize; STREAMS],
    ends: &[usize; STREAMS],
) {
    // SAFETY: forwarded from the caller (bounds; AVX2 and BMI present).
    unsafe { lockstep::<avx2::Avx2>(adder, buf, ps, ends) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2")]
unsafe fn batched_avx2(
    adder: &mut Adder,
    buf: &[u8],
    ps: &mut [usize; STREAMS],
    ends: &[usize; STREAMS],
) {
    // SAFETY: forwarded from the caller (bounds; AVX2 and BMI present).
    unsafe { batched::<avx2::Avx2>(adder, buf, ps, ends) }
}

/// Whether [`Kernels::Best`] is AVX2 on this CPU (with BMI1 and BMI2,
/// which every AVX2 CPU has, for shifts that need no `cl` register).
fn avx2(kernels: Kernels) -> bool {
    #[cfg(target_arch = "x86_64")]
    if kernels == Kernels::Best {
        return std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("bmi2");
    }
    let _ = kernels;
    false
}

/// Parses the lines of `buf` that start in `start..limit` into `adder`'s
/// table, bounds and CPU features checked.
/// Returns `Ok(p)`, the first line start at or after `limit`, or `Err(p)`,
/// the start of a line the scanner does not accept (the caller hands it to
/// the strict parser). If that line holds a name the table refused, which
/// is always a fault of the input, lines after it may have been added too.
///
/// # Panics
/// If `limit + PAD > buf.len()`.
pub fn scan(
    kernels: Kernels,
    adder: &mut Adder,
    buf: &[u8],
    start: usize,
    limit: usize,
) -> Result<usize, usize> {
    assert!(limit.saturating_add(PAD) <= buf.len());
    #[cfg(target_arch = "x86_64")]
    if avx2(kernels) {
        // SAFETY: bounds asserted above, AVX2 and BMI detected at run time.
        let stop = unsafe { lines_avx2(adder, buf, start, limit) };
        // A refused long row comes before where the scan stopped.
        return match settle(adder, buf) {
            Some(at) => Err(at),
            None => stop,
        };
    }
    // SAFETY: bounds asserted above; SWAR needs no CPU feature.
    unsafe { lines::<Swar>(adder, buf, start, limit) }
}

/// Parses [`STREAMS`] stretches of `buf` side by side: stream `k` from
/// `ps[k]` while its lines start before `ends[k]`, into `adder`'s table
/// bounds and CPU features checked.
/// Returns when any stream is done or meets a line the scanner does not
/// accept, each `ps[k]` at the first line of stream `k` not yet added; the
/// caller finishes the streams one by one with [`scan`]. If that line holds
/// a name the table refused, which is always a fault of the input, lines
/// after it may have been added too.
///
/// A short table past the L2 cache is fed a batch of rows behind, its
/// slots prefetched ([`Adder::is_big`]), from the row where it outgrows
/// the cache: a million names' tables do so within the first stretch of
/// each thread, whose rows fed plainly held 8% of a profile's samples
/// (docs/PERFORMANCE.md, steps 50 and 52).
///
/// # Panics
/// If some `ends[k] + PAD > buf.len()`.
pub fn scan_lockstep(
    kernels: Kernels,
    adder: &mut Adder,
    buf: &[u8],
    ps: &mut [usize; STREAMS],
    ends: &[usize; STREAMS],
) {
    // A fuzzer's inputs are far too small for a big table, so under
    // `cargo fuzz` (which sets `cfg(fuzzing)`) about half the stretches
    // are fed in batches anyway, for the fuzz target to reach that code.
    let batched = adder.is_big() || (cfg!(fuzzing) && ends[STREAMS - 1] % 2 == 1);
    // Under `cargo fuzz` slices of a few lines, so that the fuzzer's small
    // inputs cross slices as big ones do.
    let slice = if cfg!(fuzzing) { 64 } else { SLICE };
    if batched || plain_in_slices(kernels, adder, buf, ps, ends, slice) {
        scan_lockstep_as(kernels, Feed::Batched, adder, buf, ps, ends);
    }
}

/// Bytes of each stream that [`plain_in_slices`] feeds between two looks
/// at the table's size: some 5,000 rows of the 10K set, so that a table
/// outgrowing the L2 cache is fed plainly for at most a few thousand rows
/// more, and the plain loop itself tests nothing but its streams' ends
/// (testing the size there, every round, cost the 413 set 0.67
/// instructions a row; docs/PERFORMANCE.md, step 52).
const SLICE: usize = 64 << 10;

/// [`scan_lockstep_as`] with the plain feed, `slice` bytes of each stream
/// at a time; `true` if it stopped because the table outgrew the L2 cache,
/// for the batched feed to go on from `ps`. Otherwise it stops where one
/// call over the whole stretch would have, but for a slice that ended in
/// the round where a stream met a line the scanner does not take: the
/// next slice moves the streams before that one a line further (or, at
/// a refused long row, re-reads its stream's rows after it, moot since
/// the input then has a fault; see [`settle`]).
fn plain_in_slices(
    kernels: Kernels,
    adder: &mut Adder,
    buf: &[u8],
    ps: &mut [usize; STREAMS],
    ends: &[usize; STREAMS],
    slice: usize,
) -> bool {
    loop {
        let cut: [usize; STREAMS] = std::array::from_fn(|k| ends[k].min(ps[k] + slice));
        scan_lockstep_as(kernels, Feed::Plain, adder, buf, ps, &cut);
        if adder.is_big() {
            return true;
        }
        // A stream at its end ends the stretch's lockstep; one at its cut
        // only the slice; none at either, a line the scanner does not take.
        let at = |bound: &[usize; STREAMS]| (0..STREAMS).any(|k| ps[k] >= bound[k]);
        if at(ends) || !at(&cut) {
            return false;
        }
    }
}

/// How [`scan_lockstep`] feeds rows to the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Feed {
    /// Each row as soon as it is parsed ([`lockstep`]).
    Plain,
    /// A batch of rows behind, their slots prefetched ([`batched`]).
    Batched,
}

/// [`scan_lockstep`], feeding rows as `feed` says.
fn scan_lockstep_as(
    kernels: Kernels,
    feed: Feed,
    adder: &mut Adder,
    buf: &[u8],
    ps: &mut [usize; STREAMS],
    ends: &[usize; STREAMS],
) {
    assert!(ends.iter().all(|e| e.saturating_add(PAD) <= buf.len()));
    #[cfg(target_arch = "x86_64")]
    if avx2(kernels) {
        let starts = *ps;
        // SAFETY: bounds asserted above, AVX2 and BMI detected at run time.
        unsafe {
            match feed {
                Feed::Plain => lockstep_avx2(adder, buf, ps, ends),
                Feed::Batched => batched_avx2(adder, buf, ps, ends),
            }
        };
        // A refused long row comes before its stream's position.
        if let Some(at) = settle(adder, buf) {
            let k = (0..STREAMS)
                .find(|&k| starts[k] <= at && at < ends[k])
                .expect("a deferred row lies in its stream");
            ps[k] = ps[k].min(at);
        }
        return;
    }
    // SAFETY: bounds asserted above; SWAR needs no CPU feature.
    unsafe {
        match feed {
            Feed::Plain => lockstep::<Swar>(adder, buf, ps, ends),
            Feed::Batched => batched::<Swar>(adder, buf, ps, ends),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Stats;
    use crate::table::Table;
    use proptest::prelude::*;

    fn word(s: &[u8]) -> u64 {
        let mut b = [0u8; 8];
        b[..s.len().min(8)].copy_from_slice(&s[..s.len().min(8)]);
        u64::from_le_bytes(b)
    }

    #[test]
    fn parse_value_agrees_with_the_strict_parser_on_every_short_token() {
        // Every token of up to 5 bytes over an alphabet that holds every
        // byte class the parser distinguishes, followed by `\n` and junk.
        let alphabet = b"-.09\n;a5/:+ \x00\xff";
        let mut tokens = vec![Vec::new()];
        for _ in 0..5 {
            let next: Vec<Vec<u8>> = tokens
                .iter()
                .filter(|t| t.len() < 5)
                .flat_map(|t| alphabet.iter().map(move |&c| [t.clone(), vec![c]].concat()))
                .collect();
            tokens.extend(next);
        }
        tokens.sort();
        tokens.dedup();
        for t in &tokens {
            for tail in [&b"\n"[..], b"\nx;1.0", b"\n\n\n", b"1\n"] {
                let bytes = [t.as_slice(), tail].concat();
                let nl = bytes.iter().position(|&c| c == b'\n').unwrap();
                let want = crate::parse::parse_value(&bytes[..nl]).map(|v| (i64::from(v), nl + 1));
                assert_eq!(
                    parse_value(word(&bytes)),
                    want,
                    "{:?}",
                    String::from_utf8_lossy(&bytes)
                );
            }
        }
    }

    /// Every way of feeding [`scan_lockstep`]'s streams, with both
    /// kernels, on the same chunk: each feed over the whole stretch, and
    /// the plain one in slices of any size ([`plain_in_slices`]). They may
    /// stop at different places (a batched feed, or a pending long row,
    /// learns that a table refuses a name later, when the other streams
    /// have moved on; a slice can end in the round where a stream meets a
    /// line the scanner does not take, and the next moves the streams
    /// before it one line on).
    /// Each stream must stop at a line start, and the table must hold every
    /// row before each stop; exactly those unless a stream stopped at a
    /// line the strict parser rejects. Such a stream may have added rows
    /// after it: the strict parser then reports the fault, so they are moot
    /// (see [`LongRow`]).
    fn lockstep_every_way(chunk: &[u8]) {
        let limit = chunk.len() - PAD;
        let cut = |at: usize| {
            at + chunk[at..limit]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(limit - at, |i| i + 1)
        };
        let starts = [0, cut(limit / 3), cut(2 * limit / 3)];
        let ends = [starts[1], starts[2], limit];
        for kernels in [Kernels::Best, Kernels::Portable] {
            // Each feed over the whole stretch, and the plain one in slices
            // of a byte or more.
            let slices = [1, 7, 64, limit / 5 + 1].map(|n| (Feed::Plain, Some(n)));
            for (feed, slice) in [(Feed::Plain, None), (Feed::Batched, None)]
                .into_iter()
                .chain(slices)
            {
                let mut table = Table::default();
                let mut ps = starts;
                let mut adder = table.adder(chunk.len());
                match slice {
                    None => scan_lockstep_as(kernels, feed, &mut adder, chunk, &mut ps, &ends),
                    Some(n) => {
                        let big = plain_in_slices(kernels, &mut adder, chunk, &mut ps, &ends, n);
                        assert!(!big, "a small table");
                    }
                }
                let mut want = std::collections::BTreeMap::<Vec<u8>, Stats>::new();
                let mut faulted = false;
                for k in 0..STREAMS {
                    assert!(starts[k] <= ps[k] && ps[k] <= ends[k]);
                    let mut p = starts[k];
                    while p < ps[k] {
                        let (line, next) = crate::parse::line_at(chunk, p);
                        let (name, value) =
                            crate::parse::parse_line(line).expect("added rows are valid");
                        want.entry(name.to_vec())
                            .and_modify(|s| s.add(value))
                            .or_insert(Stats::new(value));
                        p = next;
                    }
                    assert_eq!(p, ps[k], "a stream stops at a line start");
                    if p < ends[k] {
                        let (line, _) = crate::parse::line_at(chunk, p);
                        let valid = crate::parse::parse_line(line)
                            .and_then(|(name, _)| crate::parse::check_name(name));
                        faulted |= valid.is_err();
                    }
                }
                let got: std::collections::BTreeMap<Vec<u8>, Stats> = (table.into_sorted())
                    .into_iter()
                    .map(|e| (e.name.into_vec(), e.stats))
                    .collect();
                if !faulted {
                    assert_eq!(got, want, "{kernels:?}, {feed:?}, slices {slice:?}");
                } else {
                    for (name, s) in &want {
                        let counted = got.get(name).map_or(0, |g| g.count);
                        assert!(counted >= s.count, "{kernels:?}, {feed:?}: {name:?}");
                    }
                }
            }
        }
    }

    /// A table that outgrows the L2 cache partway through a stretch stops
    /// the plain feed there, and the batched feed takes the streams on to
    /// where the first is done, as the plain feed would have: not the
    /// stretch's rest left to the single-stream scanner, and no row fed
    /// twice.
    #[test]
    fn a_table_that_grows_big_mid_stretch_is_fed_to_the_end() {
        let names = 120_000;
        let mut chunk = Vec::new();
        for i in 0..names {
            chunk.extend_from_slice(format!("s{}", i * 7919 % names).as_bytes());
            chunk.extend_from_slice(if i % 2 == 0 { b";1.5\n" } else { b";-2.0\n" });
        }
        let limit = chunk.len();
        chunk.extend_from_slice(&[0; PAD]);
        let cut = |at: usize| at + chunk[at..].iter().position(|&c| c == b'\n').unwrap() + 1;
        let starts = [0, cut(limit / 3), cut(2 * limit / 3)];
        let ends = [starts[1], starts[2], limit];
        for kernels in [Kernels::Best, Kernels::Portable] {
            let mut table = Table::default();
            let mut adder = table.adder(chunk.len());
            assert!(!adder.is_big());
            let mut ps = starts;
            scan_lockstep(kernels, &mut adder, &chunk, &mut ps, &ends);
            assert!(adder.is_big(), "{kernels:?}");
            // The feeds stop when the first stream is done; the others are
            // then a few lines from their ends.
            let left: usize = (0..STREAMS).map(|k| ends[k] - ps[k]).sum();
            assert!(left < 100, "{kernels:?}: {left} bytes left");
            for k in 0..STREAMS {
                let mut adder = table.adder(ends[k] - ps[k]);
                assert_eq!(
                    scan(kernels, &mut adder, &chunk, ps[k], ends[k]),
                    Ok(ends[k])
                );
            }
            let sorted = table.into_sorted();
            assert_eq!(sorted.len(), names, "{kernels:?}");
            assert!(sorted.iter().all(|e| e.stats.count == 1), "{kernels:?}");
        }
    }

    proptest! {
        #[test]
        fn every_feed_adds_the_rows_before_its_stops(
            rows in proptest::collection::vec(
                (0usize..3000, -999i16..1000, 0u8..40),
                1..400,
            ),
        ) {
            // Names from a pool bigger than a chunk's rows, short and long;
            // now and then a name the table refuses (not UTF-8, or holding
            // a `\n`), or a bad value, where the streams must stop.
            let mut chunk = Vec::new();
            for (k, v, odd) in rows {
                let name = match k % 4 {
                    0 => format!("s{k}"),
                    1 => format!("station number {k}"),
                    _ => format!("n{}", k % 97),
                };
                chunk.extend_from_slice(name.as_bytes());
                match odd {
                    0 => chunk.push(0xff),
                    1 => chunk.push(b'\n'),
                    _ => {}
                }
                chunk.push(b';');
                if odd == 2 {
                    chunk.extend_from_slice(b"1.x");
                } else {
                    chunk.extend_from_slice(format!("{:.1}", f64::from(v) / 10.0).as_bytes());
                }
                chunk.push(b'\n');
            }
            chunk.extend_from_slice(&[0; PAD]);
            lockstep_every_way(&chunk);
        }
    }
}

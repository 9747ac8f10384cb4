//! Reading a line a word or a vector at a time: the fast engines' parser.
//!
//! [`parse_line`](crate::parse::parse_line) is the definition of the
//! grammar; this module computes the same thing without a loop over bytes:
//! the `;` is found with one 32-byte AVX2 compare (or two 8-byte SWAR
//! steps on CPUs without AVX2; longer names take a `memchr`) and the value
//! is parsed and validated from one 8-byte word with no data-dependent
//! branch. Anything unusual (a malformed line, the end of a chunk) makes
//! the scanner stop and hand the line to the strict parser, so both always
//! agree on what is valid.
//!
//! Every line read here may touch up to [`PAD`] bytes from its start; the
//! safe entry point [`scan`] only starts lines at least that far from the
//! end of its buffer, which is what makes the unchecked loads inside sound.

use crate::parse::MAX_NAME_LEN;
use crate::table::Table;

/// Bytes a line read may touch past its start: the longest valid line is
/// 100 + 1 + 5 + 1 = 107 bytes, and the `;` search reads 4 × 32 bytes.
pub const PAD: usize = 128;

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// High bit of every byte of `w` equal to `byte`. Exact for the lowest
/// match; bits above it may be spurious (borrows), so callers only use the
/// lowest set bit.
#[inline(always)]
fn matches(w: u64, byte: u8) -> u64 {
    let x = w ^ (LO * u64::from(byte));
    x.wrapping_sub(LO) & !x & HI
}

/// Parses the value at the start of `w` (the 8 bytes after `;`, little
/// endian), which must be `-?\d{1,2}\.\d\n`. Returns the value in tenths and
/// the number of bytes it took, `\n` included; `None` if the bytes do not
/// match exactly.
///
/// Validation and parsing share one pass with no data-dependent branch:
/// the first non-digit after an optional `-` must be the `.` (so every byte
/// before it is a digit), 1 or 2 bytes after the sign; then one digit and
/// `\n` must follow. The digits are then combined with one multiplication,
/// the trick of Quan Anh Mai's 1BRC entry.
#[inline(always)]
pub fn parse_value(w: u64) -> Option<(i16, usize)> {
    let neg = (w & 0xff) == u64::from(b'-');
    let t = w ^ (LO * u64::from(b'0'));
    // High bit of every byte that is not an ASCII digit: bytes 0x00..=0x09
    // of `t` stay below 0x80 after adding 0x76, all others reach it.
    let not_digit = ((t & !HI).wrapping_add(LO * 0x76) | t) & HI;
    let stops = not_digit & !(u64::from(neg) << 7);
    let dot = stops.trailing_zeros(); // 8 * d + 7 for the `.` at byte d
    let d = (dot / 8) as usize;
    let shift = dot & 56;
    let frame = (w >> shift) & 0x00ff_00ff;
    let valid = (d - usize::from(neg)).wrapping_sub(1) < 2
        && frame == 0x000a_002e
        && (stops >> shift) & 0x8000 == 0;
    if !valid {
        return None;
    }
    // Drop the sign, align the `.` to byte 3, keep the digits' low nibbles
    // at bytes 1, 2 and 4, and weigh them 100, 10 and 1 in one multiply.
    let unsigned = w & !(u64::from(neg) * 0xff);
    let digits = (unsigned << (31 - dot)) & 0x0f_000f_0f00;
    let abs = ((digits.wrapping_mul(0x640a_0001) >> 32) & 0x3ff) as i16;
    Some((if neg { -abs } else { abs }, d + 3))
}

/// Where the `;` of a line is, as its lowest-level kernels find it.
trait Kernel {
    /// Bytes the first read covers.
    const WINDOW: usize;

    /// Reads the first `WINDOW` bytes of the line at `p`; returns the index
    /// of the first `;` among them (`WINDOW` if there is none) and the
    /// name's first 16 bytes as words, zero past the name's end.
    ///
    /// # Safety
    /// `p` must be valid for reads of 32 bytes.
    unsafe fn name(p: *const u8) -> (usize, u64, u64);
}

/// Reads a little-endian `u64` at `p`.
///
/// # Safety
/// `p` must be valid for reads of 8 bytes.
#[inline(always)]
unsafe fn load(p: *const u8) -> u64 {
    // SAFETY: the caller guarantees 8 readable bytes; no alignment needed.
    u64::from_le(unsafe { p.cast::<u64>().read_unaligned() })
}

/// Portable kernel: two 8-byte SWAR steps.
struct Swar;

impl Kernel for Swar {
    const WINDOW: usize = 16;

    #[inline(always)]
    unsafe fn name(p: *const u8) -> (usize, u64, u64) {
        // SAFETY: the caller guarantees 32 readable bytes at `p`.
        let (w0, w1) = unsafe { (load(p), load(p.add(8))) };
        let m0 = matches(w0, b';');
        if m0 != 0 {
            let len = (m0.trailing_zeros() / 8) as usize;
            return (len, w0 & ((m0 ^ (m0 - 1)) >> 8), 0);
        }
        let m1 = matches(w1, b';');
        if m1 != 0 {
            let len = 8 + (m1.trailing_zeros() / 8) as usize;
            return (len, w0, w1 & ((m1 ^ (m1 - 1)) >> 8));
        }
        (Self::WINDOW, w0, w1)
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// `0xff` × 16 then `0` × 16: 16 bytes loaded from `16 - n` keep `n`.
    static KEEP: [u8; 32] = {
        let mut k = [0u8; 32];
        let mut i = 0;
        while i < 16 {
            k[i] = 0xff;
            i += 1;
        }
        k
    };

    /// AVX2 kernel: one 32-byte compare finds the `;` of nearly every name.
    pub(super) struct Avx2;

    impl super::Kernel for Avx2 {
        const WINDOW: usize = 32;

        #[inline(always)]
        unsafe fn name(p: *const u8) -> (usize, u64, u64) {
            // The caller guarantees 32 readable bytes at `p` and only
            // instantiates this kernel inside a function compiled with AVX2
            // after checking the CPU has it.
            // SAFETY: as above; `KEEP` has 32 bytes, `16 - n` keeps in it.
            unsafe {
                let v = _mm256_loadu_si256(p.cast());
                let hits = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b';' as i8));
                let m = _mm256_movemask_epi8(hits) as u32;
                let len = m.trailing_zeros() as usize;
                let n = len.min(16);
                let keep = _mm_loadu_si128(KEEP.as_ptr().add(16 - n).cast());
                let key = _mm_and_si128(_mm256_castsi256_si128(v), keep);
                let a = _mm_cvtsi128_si64(key) as u64;
                let b = _mm_extract_epi64::<1>(key) as u64;
                (len, a, b)
            }
        }
    }
}

/// The length of a name with no `;` in its first `window` bytes, if it has
/// one within [`MAX_NAME_LEN`] bytes. Needs `p + PAD <= buf.len()`.
#[cold]
#[inline(never)]
fn long_name(buf: &[u8], p: usize, window: usize) -> Option<usize> {
    memchr::memchr(b';', &buf[p + window..p + MAX_NAME_LEN + 1]).map(|i| window + i)
}

/// Parses lines of `buf` starting at `start` while they start before
/// `limit`, adding each to `table` with its offset `base + position`.
///
/// Returns `Ok(p)`, the first line start at or after `limit`, or `Err(p)`,
/// the start of a line the scanner does not accept; the caller hands that
/// line to the strict parser and resumes after it.
///
/// # Safety
/// `limit + PAD <= buf.len()`, and the kernel's CPU features are present.
#[inline(always)]
unsafe fn lines<K: Kernel>(
    table: &mut Table,
    buf: &[u8],
    start: usize,
    limit: usize,
    base: usize,
) -> Result<usize, usize> {
    let ptr = buf.as_ptr();
    let mut p = start;
    while p < limit {
        // Bounds of every unchecked access below: `p < limit`, so
        // `p + PAD <= buf.len()`. The name read touches `p..p + 32`, the
        // value read `p + len + 1..p + len + 9` with `len <= MAX_NAME_LEN`
        // (`long_name` looks no further), and `p + 100 + 9 < p + PAD`.
        // SAFETY: `p + 32 <= p + PAD <= buf.len()`.
        let (mut len, a, b) = unsafe { K::name(ptr.add(p)) };
        if len >= K::WINDOW {
            match long_name(buf, p, K::WINDOW) {
                Some(n) => len = n,
                None => return Err(p),
            }
        }
        if len == 0 {
            return Err(p);
        }
        // SAFETY: `1 <= len <= 100`, so `p + len + 9 <= p + PAD`.
        let w = unsafe { load(ptr.add(p + len + 1)) };
        let Some((value, used)) = parse_value(w) else {
            return Err(p);
        };
        // SAFETY: `p + len <= p + 100 < p + PAD <= buf.len()`.
        let name = unsafe { buf.get_unchecked(p..p + len) };
        table.add(a, b, name, value, base + p);
        p += len + 1 + used;
    }
    Ok(p)
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
#[target_feature(enable = "avx2")]
unsafe fn lines_avx2(
    table: &mut Table,
    buf: &[u8],
    start: usize,
    limit: usize,
    base: usize,
) -> Result<usize, usize> {
    // SAFETY: forwarded from the caller (bounds; AVX2 present).
    unsafe { lines::<avx2::Avx2>(table, buf, start, limit, base) }
}

/// Parses the lines of `buf` that start in `start..limit` into `table`
/// with offsets relative to `base`, bounds and CPU features checked.
/// Returns `Ok(p)`, the first line start at or after `limit`, or `Err(p)`, the start of a line the scanner
/// does not accept (the caller hands it to the strict parser).
///
/// # Panics
/// If `limit + PAD > buf.len()`.
pub fn scan(
    kernels: Kernels,
    table: &mut Table,
    buf: &[u8],
    start: usize,
    limit: usize,
    base: usize,
) -> Result<usize, usize> {
    assert!(limit.saturating_add(PAD) <= buf.len());
    #[cfg(target_arch = "x86_64")]
    if kernels == Kernels::Best && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: bounds asserted above, AVX2 detected at run time.
        return unsafe { lines_avx2(table, buf, start, limit, base) };
    }
    let _ = kernels;
    // SAFETY: bounds asserted above; SWAR needs no CPU feature.
    unsafe { lines::<Swar>(table, buf, start, limit, base) }
}

#[cfg(test)]
mod tests {
    use super::*;

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
                let want = crate::parse::parse_value(&bytes[..nl]).map(|v| (v, nl + 1));
                assert_eq!(
                    parse_value(word(&bytes)),
                    want,
                    "{:?}",
                    String::from_utf8_lossy(&bytes)
                );
            }
        }
    }
}

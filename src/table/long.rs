//! Names longer than [`SHORT`](super::short::SHORT) bytes, in 64-byte
//! slots.
//!
//! A slot holds a name's first 16 bytes inline and its length; the rest of
//! the name lives in an arena and is compared in full, so a hash match alone
//! is never taken as equality. The hash folds in every byte of the name,
//! so names sharing a long prefix do not pile up in one probe chain.

use super::NO_OFFSET;
use crate::engine::{Entry, RawName};
use crate::stats::Stats;

/// Bytes of a name stored inline in a slot.
const INLINE: usize = 16;

/// One station: its key and its stats.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Slot {
    /// Name bytes 0..8, little-endian, zero past the name's end.
    a: u64,
    /// Name bytes 8..16, little-endian, zero past the name's end.
    b: u64,
    /// Name length in bytes; 0 marks an empty slot (names are never empty).
    len: u32,
    min: i16,
    max: i16,
    sum: i64,
    count: u64,
    hash: u64,
    /// Where bytes 16.. of a long name start in the arena.
    tail: usize,
}

const EMPTY: Slot = Slot {
    a: 0,
    b: 0,
    len: 0,
    min: 0,
    max: 0,
    sum: 0,
    count: 0,
    hash: 0,
    tail: 0,
};

/// The first 16 bytes of a name as two little-endian words, zero-padded.
#[inline]
pub(super) fn key_words(name: &[u8]) -> (u64, u64) {
    let mut buf = [0u8; INLINE];
    let n = name.len().min(INLINE);
    buf[..n].copy_from_slice(&name[..n]);
    let a = u64::from_le_bytes(buf[..8].try_into().unwrap());
    let b = u64::from_le_bytes(buf[8..].try_into().unwrap());
    (a, b)
}

/// Odd multipliers (digits of pi, made odd) for the hash.
const K0: u64 = 0x243f_6a88_85a3_08d3;
const K1: u64 = 0x1319_8a2e_0370_7345;
const K2: u64 = 0xa409_3822_299f_31d1;

/// Hashes a name given its first 16 bytes as words (`a`, `b`), its length
/// and the whole name. Short names take one multiply (the table indexes by
/// the product's top bits, where every input bit has reached); longer names
/// fold in every further byte, so names sharing a long prefix do not pile up
/// in one probe chain.
#[inline(always)]
fn hash(a: u64, b: u64, name: &[u8]) -> u64 {
    let h = (a ^ b.rotate_left(29) ^ name.len() as u64).wrapping_mul(K0);
    if name.len() > INLINE {
        hash_tail(h, &name[INLINE..])
    } else {
        h
    }
}

/// The little-endian word at `bytes[i..i + 8]`.
#[inline(always)]
fn word(bytes: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap())
}

/// The last `min(8, len)` bytes of `bytes` (non-empty) packed into a word,
/// without a loop over bytes: overlapping reads, as in wyhash.
#[inline(always)]
fn last_word(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    if n >= 8 {
        word(bytes, n - 8)
    } else if n >= 4 {
        let at = |i: usize| u64::from(u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap()));
        at(0) << 32 | at(n - 4)
    } else {
        u64::from(bytes[0]) << 16 | u64::from(bytes[n / 2]) << 8 | u64::from(bytes[n - 1])
    }
}

/// Folds bytes 16.. of a long name into `h`: one multiply per 8 bytes.
#[inline(always)]
fn hash_tail(mut h: u64, tail: &[u8]) -> u64 {
    let mut i = 0;
    while i + 8 < tail.len() {
        h = (h ^ word(tail, i)).wrapping_mul(K1).rotate_left(29);
        i += 8;
    }
    (h ^ last_word(tail)).wrapping_mul(K2)
}

/// Whether two byte strings of the same length are equal, compared a word
/// at a time inline (a call to `memcmp` per row cost 6% on the 10K set).
#[inline(always)]
fn same(x: &[u8], y: &[u8]) -> bool {
    debug_assert_eq!(x.len(), y.len());
    let n = x.len();
    if n < 8 {
        // `last_word`'s reads cover every byte of so short a string, so
        // equal words mean equal bytes; `==` on slices called `memcmp`
        // (1.2% of the 10K set's profile, for its names of 17..23 bytes).
        return n == 0 || last_word(x) == last_word(y);
    }
    let mut i = 0;
    while i + 8 < n {
        if word(x, i) != word(y, i) {
            return false;
        }
        i += 8;
    }
    word(x, n - 8) == word(y, n - 8)
}

/// Whether bytes 16.. of `name` equal the tail stored for slot `s`.
#[inline(always)]
fn tail_eq(arena: &[u8], s: &Slot, name: &[u8]) -> bool {
    let tail = &name[INLINE..];
    arena
        .get(s.tail..s.tail + tail.len())
        .is_some_and(|stored| same(stored, tail))
}

/// The table of long names (any length works; the caller sends only long
/// ones here).
#[derive(Clone)]
pub(super) struct Long {
    slots: Vec<Slot>,
    /// `slots.len() - 1`; the length is a power of two.
    mask: usize,
    /// `64 - log2(slots.len())`: a hash's home slot is `hash >> shift`.
    shift: u32,
    /// Occupied slots.
    len: usize,
    /// Bytes 16.. of every long name, back to back.
    arena: Vec<u8>,
}

impl Default for Long {
    fn default() -> Long {
        Long::with_capacity(256)
    }
}

impl Long {
    /// A table with `slots` slots (rounded up to a power of two).
    pub fn with_capacity(slots: usize) -> Long {
        let n = slots.next_power_of_two().max(8);
        Long {
            slots: vec![EMPTY; n],
            mask: n - 1,
            shift: 64 - n.trailing_zeros(),
            len: 0,
            arena: Vec::new(),
        }
    }

    /// Number of distinct names.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Adds one row. `a`, `b` must be [`key_words`] of `name`, and `name`
    /// 1..=`u32::MAX` bytes. Returns `false`, adding nothing, for a name [`super::acceptable`]
    /// refuses.
    ///
    /// Not inlined: long names are the rare case, and the scanner's loop
    /// stays small without this body.
    #[inline(never)]
    pub fn add(&mut self, a: u64, b: u64, name: &[u8], value: i16) -> bool {
        debug_assert_eq!((a, b), key_words(name));
        let h = hash(a, b, name);
        let mut i = (h >> self.shift) as usize;
        loop {
            // SAFETY: `mask` is `slots.len() - 1` and `shift` is
            // `64 - log2(slots.len())` (set together in `with_capacity` and
            // `grow`), so both `hash >> shift` and `i & mask` are in bounds.
            let s = unsafe { self.slots.get_unchecked_mut(i) };
            // One branch for the whole 16-byte key and length.
            let differ = (s.a ^ a) | (s.b ^ b) | (u64::from(s.len) ^ name.len() as u64);
            if differ == 0 && (name.len() <= INLINE || tail_eq(&self.arena, s, name)) {
                s.min = s.min.min(value);
                s.max = s.max.max(value);
                s.sum += i64::from(value);
                s.count += 1;
                return true;
            }
            if s.len == 0 {
                if !super::acceptable(name) {
                    return false;
                }
                self.insert(i, h, name, Stats::new(value));
                return true;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Fills the empty slot `i` and grows the table past a quarter full.
    #[cold]
    #[inline(never)]
    fn insert(&mut self, i: usize, h: u64, name: &[u8], stats: Stats) {
        let (a, b) = key_words(name);
        let tail = self.arena.len();
        if name.len() > INLINE {
            self.arena.extend_from_slice(&name[INLINE..]);
        }
        self.slots[i] = Slot {
            a,
            b,
            len: u32::try_from(name.len()).expect("names are at most 100 bytes"),
            min: stats.min,
            max: stats.max,
            sum: stats.sum,
            count: stats.count,
            hash: h,
            tail,
        };
        self.len += 1;
        if self.len * 4 > self.slots.len() {
            self.grow();
        }
    }

    fn grow(&mut self) {
        self.resize(self.slots.len() * 2);
    }

    /// Moves every name to a new array of `n` slots (a power of two).
    fn resize(&mut self, n: usize) {
        let old = std::mem::replace(&mut self.slots, vec![EMPTY; n]);
        self.mask = n - 1;
        self.shift = 64 - n.trailing_zeros();
        for s in old.into_iter().filter(|s| s.len != 0) {
            let mut i = (s.hash >> self.shift) as usize;
            while self.slots[i].len != 0 {
                i = (i + 1) & self.mask;
            }
            self.slots[i] = s;
        }
    }

    /// The full name stored in a slot.
    fn name(&self, s: &Slot) -> RawName {
        let head = [s.a.to_le_bytes(), s.b.to_le_bytes()];
        let len = s.len as usize;
        let mut name = RawName::from(&head.as_flattened()[..len.min(INLINE)]);
        if len > INLINE {
            name.extend_from_slice(&self.arena[s.tail..s.tail + len - INLINE]);
        }
        name
    }

    /// Every name with its stats, sorted by the name's
    /// bytes.
    pub fn into_sorted(self) -> Vec<Entry> {
        let mut entries: Vec<Entry> = (self.slots.iter().filter(|s| s.len != 0))
            .map(|s| {
                let stats = Stats {
                    min: s.min,
                    max: s.max,
                    sum: s.sum,
                    count: s.count,
                };
                (self.name(s), stats, NO_OFFSET)
            })
            .collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_sees_a_difference_in_any_byte_of_any_length() {
        for n in 0..40 {
            let x: Vec<u8> = (0..n as u8).map(|i| b'a' + i % 26).collect();
            assert!(same(&x, &x.clone()));
            for i in 0..n {
                let mut y = x.clone();
                y[i] ^= 0x80;
                assert!(!same(&x, &y), "length {n}, byte {i}");
            }
        }
    }
}

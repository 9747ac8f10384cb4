//! Names of at most [`SHORT`] bytes, keyed by their bytes and the `;` that
//! ends them, in 32-byte slots.
//!
//! Including the `;` makes the 16 key bytes say the name's length too (a
//! name holds no `;`, and every byte after it is zero), so a lookup is two
//! word compares with no length check, and a name ending in NUL bytes is
//! still told apart from its prefix. Half a cache line per name keeps the
//! 10K-name table in L2 (see docs/PERFORMANCE.md); the slot's count is a
//! `u32`, spilled into a wide side array before it could overflow.

use super::NO_OFFSET;
use crate::engine::{Entry, RawName};
use crate::scan::matches;
use crate::stats::Stats;

/// The longest name this table holds: the name and its `;` fill 16 bytes.
pub const SHORT: usize = 15;

/// One name: its key and its stats. A spilled count lives in a side array,
/// touched only when spilling and at the end.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
pub(super) struct Slot {
    /// Key bytes 0..8: the name, its `;`, then zeros (little-endian).
    pub a: u64,
    /// Key bytes 8..16. `a == b == 0` marks an empty slot: a key holds a `;`.
    pub b: u64,
    pub sum: i64,
    pub count: u32,
    pub min: i16,
    pub max: i16,
}

const EMPTY: Slot = Slot {
    a: 0,
    b: 0,
    sum: 0,
    count: 0,
    min: 0,
    max: 0,
};

/// The key of a name of at most [`SHORT`] bytes: its bytes and `;`,
/// zero-padded to 16, as two little-endian words.
pub fn key(name: &[u8]) -> (u64, u64) {
    assert!(name.len() <= SHORT);
    let mut buf = [0u8; 16];
    buf[..name.len()].copy_from_slice(name);
    buf[name.len()] = b';';
    let (a, b) = buf.split_at(8);
    (
        u64::from_le_bytes(a.try_into().unwrap()),
        u64::from_le_bytes(b.try_into().unwrap()),
    )
}

/// The key's bytes with its `;` zeroed, and the name's length: the name
/// is `bytes[..len]`. No allocation and no byte loop: inserting a million
/// names called this a million times per thread.
fn name(a: u64, b: u64) -> ([u8; 16], usize) {
    let (sa, sb) = (matches(a, b';'), matches(b, b';'));
    let len = if sa != 0 {
        sa.trailing_zeros() / 8
    } else {
        8 + sb.trailing_zeros() / 8
    } as usize;
    let mut bytes = [0; 16];
    bytes[..8].copy_from_slice(&a.to_le_bytes());
    bytes[8..].copy_from_slice(&b.to_le_bytes());
    bytes[len] = 0;
    (bytes, len)
}

/// A key's hash: one multiply, whose top bits (the ones a table indexes
/// by) every key bit reaches.
#[inline(always)]
pub(super) fn hash(a: u64, b: u64) -> u64 {
    (a ^ b.rotate_left(29)).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Home slot of a key: the top `64 - shift` bits of its hash.
#[inline(always)]
fn home(a: u64, b: u64, shift: u32) -> usize {
    (hash(a, b) >> shift) as usize
}

/// Whether `len` names over-fill `n` slots. Small tables stay at most a
/// quarter full: at half, the 413 official names took a second probe on
/// 29% of rows, each a mispredicted branch. Past 2 MiB the table no longer
/// fits in L2 whatever its load, and half full halves the memory a
/// million names take (and the pages the kernel must fault in).
fn over_full(len: usize, n: usize) -> bool {
    const BIG: usize = (2 << 20) / std::mem::size_of::<Slot>();
    len * if n >= BIG { 2 } else { 4 } > n
}

/// The table of short names.
#[derive(Clone)]
pub(super) struct Short {
    pub slots: Vec<Slot>,
    /// `64 - log2(slots.len())`.
    pub shift: u32,
    /// Counts moved out of the slots before they could overflow; empty
    /// until the first spill, then as long as `slots`.
    spilled: Vec<u64>,
    len: usize,
}

impl Short {
    /// A table of `n` slots (a power of two, at least 2).
    pub fn with_slots(n: usize) -> Short {
        debug_assert!(n.is_power_of_two() && n >= 2);
        Short {
            slots: vec![EMPTY; n],
            shift: 64 - n.trailing_zeros(),
            spilled: Vec::new(),
            len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Fills the empty slot `i` with a new name; returns `false`, leaving
    /// the table alone, for a name [`super::acceptable`] refuses (the
    /// scanner does not check names: every new one lands here). Grows the
    /// table when over-full, so a caller holding slot pointers must refresh
    /// them.
    #[cold]
    #[inline(never)]
    pub fn insert(&mut self, i: usize, a: u64, b: u64, stats: Stats) -> bool {
        let (bytes, len) = name(a, b);
        if !super::acceptable(&bytes[..len]) {
            return false;
        }
        debug_assert_eq!(self.slots[i].a | self.slots[i].b, 0);
        self.slots[i] = Slot {
            a,
            b,
            sum: stats.sum,
            count: 0,
            min: stats.min,
            max: stats.max,
        };
        self.add_count(i, stats.count);
        self.len += 1;
        if over_full(self.len, self.slots.len()) {
            self.resize(self.slots.len() * 2);
        }
        true
    }

    /// Adds `n` to slot `i`'s count, spilling when the `u32` would overflow.
    fn add_count(&mut self, i: usize, n: u64) {
        match u32::try_from(u64::from(self.slots[i].count) + n) {
            Ok(c) => self.slots[i].count = c,
            Err(_) => {
                self.spill();
                self.spilled[i] += n;
            }
        }
    }

    /// Moves every slot's count into the wide side array.
    pub fn spill(&mut self) {
        self.spilled.resize(self.slots.len(), 0);
        for (s, wide) in self.slots.iter_mut().zip(&mut self.spilled) {
            *wide += u64::from(std::mem::take(&mut s.count));
        }
    }

    /// Moves every name, with its spilled count, to a new array of `n` slots.
    fn resize(&mut self, n: usize) {
        let mut grown = Short::with_slots(n);
        grown.len = self.len;
        if !self.spilled.is_empty() {
            grown.spilled = vec![0; n];
        }
        for (i, s) in self.slots.iter().enumerate() {
            if s.a | s.b == 0 {
                continue;
            }
            let mut j = home(s.a, s.b, grown.shift);
            while grown.slots[j].a | grown.slots[j].b != 0 {
                j = (j + 1) & (n - 1);
            }
            grown.slots[j] = *s;
            if let Some(&wide) = self.spilled.get(i) {
                grown.spilled[j] = wide;
            }
        }
        *self = grown;
    }

    /// Slot `i`'s stats, its spilled count included.
    fn stats(&self, i: usize) -> Stats {
        let s = &self.slots[i];
        Stats {
            min: s.min,
            max: s.max,
            sum: s.sum,
            count: u64::from(s.count) + self.spilled.get(i).copied().unwrap_or(0),
        }
    }

    /// Every name with its stats, sorted by the name's bytes: by a key held
    /// inline (the name zero-padded to 16 bytes, big-endian, then its
    /// length) rather than by comparing the names themselves, which would
    /// chase a pointer per comparison.
    pub fn into_sorted(self) -> Vec<Entry> {
        let mut order: Vec<(u128, u64)> = (self.slots.iter().enumerate())
            .filter(|(_, s)| s.a | s.b != 0)
            .map(|(i, s)| {
                // Zero padding sorts a name before any longer name it
                // starts, and the length tells it from one that adds NULs.
                let (bytes, len) = name(s.a, s.b);
                (u128::from_be_bytes(bytes), (len as u64) << 56 | i as u64)
            })
            .collect();
        order.sort_unstable();
        // The slots are read in name order, which is random order: without
        // prefetching, the misses on a million names' slots took 70% of
        // this function's time (perf).
        const AHEAD: usize = 16;
        let slot = |tail: u64| (tail & ((1 << 56) - 1)) as usize;
        (0..order.len())
            .map(|j| {
                if let Some(&(_, ahead)) = order.get(j + AHEAD) {
                    prefetch(&self.slots[slot(ahead)]);
                }
                let (key, tail) = order[j];
                let (len, i) = ((tail >> 56) as usize, slot(tail));
                let name = RawName::from(&key.to_be_bytes()[..len]);
                (name, self.stats(i), NO_OFFSET)
            })
            .collect()
    }
}

/// Asks the CPU to start loading `x`'s cache line.
#[inline(always)]
fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint: it never faults and reads nothing into
    // the program's state; `x` is a valid reference anyway.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((x as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_tell_trailing_nuls_apart_and_name_round_trips() {
        let names: [&[u8]; 5] = [b"a", b"a\0", b"a\0\0\0\0\0\0\0", b"", b"0123456789abcde"];
        for (i, x) in names.iter().enumerate() {
            let (a, b) = key(x);
            let (bytes, len) = name(a, b);
            assert_eq!(bytes[..len], **x);
            for y in &names[i + 1..] {
                assert_ne!(key(x), key(y));
            }
        }
    }

    #[test]
    fn counts_spill_instead_of_overflowing() {
        let mut t = Short::with_slots(4);
        let big = Stats {
            count: u64::from(u32::MAX) + 2,
            ..Stats::new(1)
        };
        put(&mut t, b"x", big);
        // Growing carries spilled counts along.
        for i in 0..10 {
            put(&mut t, &[i], Stats::new(0));
        }
        let sorted = t.into_sorted();
        let (_, s, _) = sorted.iter().find(|e| *e.0 == b"x"[..]).unwrap();
        assert_eq!(s.count, u64::from(u32::MAX) + 2);
        assert_eq!((s.min, s.max, s.sum), (1, 1, 1));
    }

    /// Inserts a new name at the first free slot of its probe run.
    fn put(t: &mut Short, name: &[u8], stats: Stats) {
        let (a, b) = key(name);
        let mut i = home(a, b, t.shift);
        while t.slots[i].a | t.slots[i].b != 0 {
            i = (i + 1) % t.slots.len();
        }
        assert!(t.insert(i, a, b, stats));
    }

    #[test]
    fn sorts_by_the_names_bytes() {
        // Prefixes, NUL padding, the bytes either side of `;`, and
        // multi-byte characters, each name with its own stats.
        let mut names: Vec<Vec<u8>> = vec![
            b"a".to_vec(),
            b"a\0".to_vec(),
            b"a\0\0".to_vec(),
            b"a:".to_vec(),
            b"a<".to_vec(),
            b"ab".to_vec(),
            b"\0".to_vec(),
            b"z".to_vec(),
            "Zürich".as_bytes().to_vec(),
            "東京".as_bytes().to_vec(),
            b"0123456789abcde".to_vec(),
            b"0123456789abcdd".to_vec(),
        ];
        names.extend((0..200u32).map(|i| format!("{}", i * 7919 % 1000).into_bytes()));
        names.sort();
        names.dedup();
        let mut t = Short::with_slots(4);
        for (i, name) in names.iter().enumerate().rev() {
            put(&mut t, name, Stats::new(i as i16));
        }
        let want: Vec<Entry> = (names.iter().enumerate())
            .map(|(i, n)| (RawName::from(&n[..]), Stats::new(i as i16), NO_OFFSET))
            .collect();
        assert_eq!(t.into_sorted(), want);
    }
}

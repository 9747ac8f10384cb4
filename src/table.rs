//! The hand-written per-thread hash table of the fast engines.
//!
//! Why not `hashbrown`: the `chunked` engine uses a foldhash-keyed
//! `hashbrown::HashTable` and is the baseline this table must beat (see
//! docs/PERFORMANCE.md for the measured ratio). This table wins because it
//! is shaped for this one job:
//!
//! - the scanner hands over a name's first 16 bytes as two zero-padded
//!   words, so hashing a short name is one folded multiply of registers it
//!   already holds, and comparing it is three integer compares against one
//!   64-byte slot that also holds the stats (one cache line per row);
//! - names longer than 16 bytes keep their tail in an arena and are
//!   compared in full: a hash match alone is never taken as equality;
//! - open addressing with linear probing over a power-of-two array, at most
//!   half full, no tombstones (nothing is ever removed).

use crate::stats::Stats;

/// Bytes of a name stored inline in a slot.
const INLINE: usize = 16;

/// One station: its key, its stats and where it was first seen.
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
    /// Offset of the line this name was first seen on.
    first: usize,
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
    first: 0,
};

/// The first 16 bytes of a name as two little-endian words, zero-padded.
#[inline]
pub fn key_words(name: &[u8]) -> (u64, u64) {
    let mut buf = [0u8; INLINE];
    let n = name.len().min(INLINE);
    buf[..n].copy_from_slice(&name[..n]);
    let a = u64::from_le_bytes(buf[..8].try_into().unwrap());
    let b = u64::from_le_bytes(buf[8..].try_into().unwrap());
    (a, b)
}

/// Multiplies as 128 bits and folds the halves: the mixing step of
/// foldhash and wyhash, one `mul` on x86-64.
#[inline(always)]
fn fold(x: u64, y: u64) -> u64 {
    let m = u128::from(x) * u128::from(y);
    m as u64 ^ (m >> 64) as u64
}

const K0: u64 = 0x243f_6a88_85a3_08d3;
const K1: u64 = 0x1319_8a2e_0370_7344;
const K2: u64 = 0xa409_3822_299f_31d0;

/// Hashes a name given its first 16 bytes as words (`a`, `b`), its length
/// and the whole name. Short names take one multiply (the table indexes by
/// the product's top bits, where every input bit has reached); longer names
/// fold in every further byte, so names sharing a long prefix do not pile up
/// in one probe chain.
#[inline(always)]
pub fn hash(a: u64, b: u64, name: &[u8]) -> u64 {
    let h = (a ^ b.rotate_left(29) ^ name.len() as u64).wrapping_mul(K0);
    if name.len() > INLINE {
        hash_tail(h, &name[INLINE..])
    } else {
        h
    }
}

/// Folds bytes 16.. of a long name into `h`, a word at a time.
#[inline(never)]
fn hash_tail(mut h: u64, tail: &[u8]) -> u64 {
    let mut words = tail.chunks_exact(8);
    for w in &mut words {
        h = fold(h ^ K2, u64::from_le_bytes(w.try_into().unwrap()) ^ K1);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let w = rest
            .iter()
            .rev()
            .fold(0u64, |w, &byte| (w << 8) | u64::from(byte));
        h = fold(h ^ K2, w ^ K1);
    }
    h
}

/// Whether bytes 16.. of `name` equal the tail stored for slot `s`.
#[inline(never)]
fn tail_eq(arena: &[u8], s: &Slot, name: &[u8]) -> bool {
    let tail = &name[INLINE..];
    arena.get(s.tail..s.tail + tail.len()) == Some(tail)
}

/// An open-addressing table from station names to [`Stats`].
#[derive(Clone)]
pub struct Table {
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

impl Default for Table {
    fn default() -> Table {
        Table::with_capacity(1 << 12)
    }
}

impl Table {
    /// A table with `slots` slots (rounded up to a power of two).
    pub fn with_capacity(slots: usize) -> Table {
        let n = slots.next_power_of_two().max(8);
        Table {
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

    /// Whether the table holds no names.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds one row. `a`, `b` must be [`key_words`] of `name`, and `name`
    /// 1..=`u32::MAX` bytes; `offset` is where the row's line starts.
    #[inline(always)]
    pub fn add(&mut self, a: u64, b: u64, name: &[u8], value: i16, offset: usize) {
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
                return;
            }
            if s.len == 0 {
                self.insert(i, h, name, Stats::new(value), offset);
                return;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Fills the empty slot `i` and grows the table past half full.
    #[cold]
    #[inline(never)]
    fn insert(&mut self, i: usize, h: u64, name: &[u8], stats: Stats, first: usize) {
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
            first,
        };
        self.len += 1;
        if self.len * 4 > self.slots.len() {
            self.grow();
        }
    }

    fn grow(&mut self) {
        self.resize(self.slots.len() * 2);
    }

    /// Grows the table, if needed, to hold `additional` more names at most
    /// a quarter full.
    fn reserve(&mut self, additional: usize) {
        let mut n = self.slots.len();
        while (self.len + additional) * 4 > n {
            n *= 2;
        }
        if n > self.slots.len() {
            self.resize(n);
        }
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
    fn name(&self, s: &Slot) -> Vec<u8> {
        let mut name = [s.a.to_le_bytes(), s.b.to_le_bytes()].concat();
        let len = s.len as usize;
        if len > INLINE {
            name.extend_from_slice(&self.arena[s.tail..s.tail + len - INLINE]);
        } else {
            name.truncate(len);
        }
        name
    }

    /// Folds stats for `name` first seen at `first` into the table.
    pub fn merge_stats(&mut self, name: &[u8], stats: &Stats, first: usize) {
        let (a, b) = key_words(name);
        let h = hash(a, b, name);
        let mut i = (h >> self.shift) as usize;
        loop {
            let s = &self.slots[i];
            if s.len == 0 {
                self.insert(i, h, name, *stats, first);
                return;
            }
            if s.a == a
                && s.b == b
                && s.len as usize == name.len()
                && (name.len() <= INLINE || tail_eq(&self.arena, s, name))
            {
                let s = &mut self.slots[i];
                s.min = s.min.min(stats.min);
                s.max = s.max.max(stats.max);
                s.sum += stats.sum;
                s.count += stats.count;
                s.first = s.first.min(first);
                return;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Every name with its stats and first offset, in no particular order.
    pub fn entries(&self) -> impl Iterator<Item = (Vec<u8>, Stats, usize)> + '_ {
        self.slots.iter().filter(|s| s.len != 0).map(|s| {
            let stats = Stats {
                min: s.min,
                max: s.max,
                sum: s.sum,
                count: s.count,
            };
            (self.name(s), stats, s.first)
        })
    }

    /// Folds another table into this one.
    pub fn merge(&mut self, other: &Table) {
        // `other` is walked in slot order, which is hash order. Inserted
        // into a smaller table with the same hash, names in hash order pile
        // up in long runs (quadratic; 9.6 s to merge two tables of 10^6
        // names): so the table first grows to hold both.
        self.reserve(other.len());
        for (name, stats, first) in other.entries() {
            self.merge_stats(&name, &stats, first);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn add(t: &mut Table, name: &[u8], value: i16, offset: usize) {
        let (a, b) = key_words(name);
        t.add(a, b, name, value, offset);
    }

    #[test]
    fn agrees_with_a_hashmap_across_growth_and_long_names() {
        let mut t = Table::with_capacity(8);
        let mut want: HashMap<Vec<u8>, (Stats, usize)> = HashMap::new();
        for i in 0..5000usize {
            let k = i * 7919 % 1300;
            // Short, exactly 16, NUL-padded and long names sharing prefixes.
            let name = match k % 4 {
                0 => format!("s{k}").into_bytes(),
                1 => format!("{:0>16}", k).into_bytes(),
                2 => [format!("n{}", k % 10).into_bytes(), vec![0; k % 5]].concat(),
                _ => format!("{}{k}", "long-prefix-".repeat(7)).into_bytes(),
            };
            let value = (i % 1999) as i16 - 999;
            add(&mut t, &name, value, i);
            want.entry(name)
                .and_modify(|(s, _)| s.add(value))
                .or_insert((Stats::new(value), i));
        }
        let got: HashMap<Vec<u8>, (Stats, usize)> =
            t.entries().map(|(n, s, f)| (n, (s, f))).collect();
        assert_eq!(got, want);
        assert_eq!(t.len(), want.len());
    }

    #[test]
    fn merging_large_tables_stays_linear() {
        // Two tables of 200,000 names each, merged into an empty one as the
        // driver does: walked in hash order, these took minutes before the
        // destination was sized first. Checked by content, not by time.
        let mut parts = [Table::default(), Table::default()];
        for i in 0..400_000usize {
            add(&mut parts[i % 2], format!("st{}", i / 2).as_bytes(), 1, i);
        }
        let mut merged = Table::default();
        for part in &parts {
            merged.merge(part);
        }
        assert_eq!(merged.len(), 200_000);
        assert!(merged.entries().all(|(_, s, _)| s.count == 2 && s.sum == 2));
    }

    #[test]
    fn merge_sums_and_keeps_the_first_offset() {
        let mut x = Table::default();
        let mut y = Table::default();
        add(&mut x, b"a", 10, 50);
        add(&mut y, b"a", -10, 20);
        add(&mut y, b"b", 5, 30);
        x.merge(&y);
        let mut got: Vec<_> = x.entries().collect();
        got.sort_by(|x, y| x.0.cmp(&y.0));
        let mut a = Stats::new(10);
        a.add(-10);
        assert_eq!(
            got,
            vec![(b"a".to_vec(), a, 20), (b"b".to_vec(), Stats::new(5), 30)]
        );
    }
}

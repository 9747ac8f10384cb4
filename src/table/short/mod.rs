//! Names of at most [`SHORT`] bytes, keyed by their bytes and the `;` that
//! ends them, in 32-byte slots.
//!
//! Including the `;` makes the 16 key bytes say the name's length too (a
//! name holds no `;`, and every byte after it is zero), so a lookup is two
//! word compares with no length check, and a name ending in NUL bytes is
//! still told apart from its prefix. Half a cache line per name keeps the
//! 10K-name table in L2 (docs/PERFORMANCE.md, *The tables*); the slot's
//! count shares a word with its sum ([`Slot::total`]) and has 26 bits,
//! which [`super::Table`] keeps from overflowing.

use bytemuck::{Pod, Zeroable};

mod flooded;
mod radix;
mod slots;

use slots::Slots;

use super::keyed::Keyed;
use super::name::number;
use super::{Budget, Name, NO_OFFSET};
use crate::bits::{matches, prefetch, HI};
use crate::stats::Stats;
use crate::summary::{Entry, RawName};
use crate::tuning::{FOURFOLD_SAMPLE, GROW_AHEAD};

/// The longest name this table holds: the name and its `;` fill 16 bytes.
pub(crate) const SHORT: usize = 15;

/// What one row adds to a slot's [`Slot::total`]: a count of one.
pub(crate) const ONE_ROW: i64 = 1 << COUNT_SHIFT;

/// Where a slot's count starts in its [`Slot::total`]: below it the sum,
/// in two's complement. A table's rows are fewer than `2^26` (its
/// [`super::Table`] sees to it), so the sum's magnitude is below `999 ·
/// 2^26 < 2^36`, and the total, `count · 2^37 + sum`, is below `2^63`.
const COUNT_SHIFT: u32 = 37;

/// The most rows a short table may count: below `2^26`, for
/// [`COUNT_SHIFT`].
pub(super) const MAX_ROWS: u64 = (1 << 26) - 1;

/// A row of `value` tenths as a slot counts it: one add of this to its
/// [`Slot::total`] adds the value to the sum and one to the count, and its
/// low 16 bits are the value.
#[inline(always)]
pub(crate) fn total(value: i64) -> i64 {
    value + ONE_ROW
}

/// One name: its key and its stats. All zeros is an empty slot.
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(32))]
pub(super) struct Slot {
    /// Key bytes 0..8: the name, its `;`, then zeros (little-endian).
    pub a: u64,
    /// Key bytes 8..16. `a == b == 0` marks an empty slot: a key holds a `;`.
    pub b: u64,
    /// The sum and the count in one word, `count · 2^37 + sum`, so that a
    /// row is counted by one add, not an add and an increment: the lanes'
    /// loop is bound by its loads and stores, and this takes one of each
    /// off every row (docs/PERFORMANCE.md, *The tables*).
    pub total: i64,
    /// The name's number in the order names came to a table that numbers
    /// them ([`super::name::number`]); 0 in one that does not.
    pub id: u32,
    pub min: i16,
    pub max: i16,
}

impl Slot {
    /// A slot holding the key `a`, `b`, numbered `id`, and the row whose
    /// [`total`] is `total`.
    fn new(a: u64, b: u64, id: u32, total: i64) -> Slot {
        Slot {
            a,
            b,
            total,
            id,
            min: total as i16,
            max: total as i16,
        }
    }

    /// The slot's sum and count.
    fn sum_count(&self) -> (i64, u64) {
        // The low 37 bits, sign-extended; then the count above them.
        let sum = self.total << (64 - COUNT_SHIFT) >> (64 - COUNT_SHIFT);
        (sum, ((self.total - sum) >> COUNT_SHIFT) as u64)
    }

    /// The slot's stats.
    fn stats(&self) -> Stats {
        let (sum, count) = self.sum_count();
        super::stats(sum, count, self.min, self.max)
    }

    /// Counts a row given as its [`total`], whose low 16 bits are the
    /// value.
    #[inline(always)]
    pub(super) fn add(&mut self, total: i64) {
        self.total += total;
        super::widen(&mut self.min, &mut self.max, total as i16);
    }

    /// Folds another slot's stats into this one's, as when two tables are
    /// folded into one (whose rows stay under [`MAX_ROWS`]).
    fn fold(&mut self, other: &Slot) {
        self.total += other.total;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }
}

/// The key of a name of at most [`SHORT`] bytes: its bytes and `;`,
/// zero-padded to 16, as two little-endian words.
pub(super) fn key(name: &[u8]) -> (u64, u64) {
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

/// [`super::acceptable`] for the name whose key is `a`, `b`, a word at a
/// time when the name is ASCII, which is then UTF-8: every name is checked
/// when each thread first meets it, a million times per thread for a
/// million names, where building the name and calling the UTF-8 check
/// showed in a profile (docs/PERFORMANCE.md, *The tables*).
fn acceptable(a: u64, b: u64) -> bool {
    if (a | b) & HI == 0 {
        // Empty if the key starts with its `;`; the `;` and the zeros
        // after it are not `\n`.
        return a as u8 != b';' && matches(a, b'\n') | matches(b, b'\n') == 0;
    }
    let (bytes, len) = name(a, b);
    super::acceptable(&bytes[..len])
}

/// The odd multiplier a table hashes by until it reseeds
/// ([`Short::reseed`]).
const MUL: u64 = 0x9e37_79b9_7f4a_7c15;

/// How far [`hash`] rotates a key's second word.
const ROTATE: u32 = 29;

/// A key's hash under the odd multiplier `mul`: one multiply, whose top
/// bits (the ones a table indexes by) every key bit reaches. Under the
/// fixed [`MUL`] it is weak: keys built to share it, or its top bits, are
/// met by the probe budget ([`super::Budget`]) and then by a multiplier
/// the input cannot know ([`Short::reseed`]).
#[inline(always)]
pub(super) fn hash(a: u64, b: u64, mul: u64) -> u64 {
    (a ^ b.rotate_left(ROTATE)).wrapping_mul(mul)
}

/// The first key word that makes a key whose second word is `b` hash to
/// `hash` under [`MUL`]: the multiply has an inverse, and the XOR undoes
/// itself. How [`super::flood`] builds names that share a hash.
#[cfg(any(test, feature = "lab"))]
pub(super) fn solve(b: u64, hash: u64) -> u64 {
    hash.wrapping_mul(crate::bits::inverse(MUL)) ^ b.rotate_left(ROTATE)
}

/// The hash of the key `a`, `b` in a table that has not reseeded: what
/// names built against the source share ([`super::flood`]).
#[cfg(any(test, feature = "lab"))]
pub(super) fn fixed_hash(a: u64, b: u64) -> u64 {
    hash(a, b, MUL)
}

/// An odd multiplier drawn from the operating system's randomness, other
/// than [`MUL`]: a reseeded table's ([`Short::reseed`]).
fn drawn() -> u64 {
    loop {
        let mul = super::keyed::random() | 1;
        if mul != MUL {
            return mul;
        }
    }
}

/// Where a key's walk from its home slot ends ([`Short::place`]).
pub(super) enum Walk {
    /// At the slot holding the key.
    Found(usize),
    /// At the empty slot where the key goes.
    Free(usize),
    /// Out of probe steps: the table is flooded, the key goes to its
    /// keyed table.
    Flooded,
}

/// The table of short names.
#[derive(Clone)]
pub(super) struct Short {
    pub slots: Slots,
    /// `64 - log2(slots.len())`.
    pub shift: u32,
    len: usize,
    /// The odd multiplier of its [`hash`]: [`MUL`], or one drawn at random
    /// once the table has reseeded ([`Short::reseed`]).
    pub mul: u64,
    /// Probe steps past home slots the table may still take.
    pub budget: Budget,
    /// Where the names held past the slot after their home are once the
    /// table has spent its probe steps ([`Short::flood`]).
    keyed: Option<Keyed<Slot>>,
}

impl Short {
    /// A table of `n` slots (a power of two, at least 2).
    pub(super) fn with_slots(n: usize) -> Short {
        debug_assert!(n.is_power_of_two() && n >= 2);
        Short {
            slots: Slots::empty(n),
            shift: 64 - n.trailing_zeros(),
            mul: MUL,
            len: 0,
            budget: Budget::new(),
            keyed: None,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len + self.keyed.as_ref().map_or(0, Keyed::len)
    }

    /// The home slot of the key `a`, `b`: the top `64 - shift` bits of its
    /// hash.
    #[inline(always)]
    fn home(&self, a: u64, b: u64) -> usize {
        (hash(a, b, self.mul) >> self.shift) as usize
    }

    /// Whether the table hashes by a drawn multiplier ([`Short::reseed`]).
    pub(super) fn is_reseeded(&self) -> bool {
        self.mul != MUL
    }

    /// Whether the table has flooded: it holds names in a keyed table.
    pub(super) fn is_flooded(&self) -> bool {
        self.keyed.is_some()
    }

    /// An empty table for the rows to come when this one is set aside: as
    /// many slots, under the same multiplier, and flooded if this one is,
    /// since its names would flood it again.
    pub(super) fn emptied(&mut self) -> Short {
        let mut fresh = Short::with_slots(self.slots.len());
        fresh.mul = self.mul;
        if let Some(keyed) = &self.keyed {
            fresh.budget = self.budget;
            fresh.keyed = Some(Keyed::with_capacity(keyed.len()));
        }
        fresh
    }

    /// The table's names and stats as a sorted run, the names staying
    /// here with their numbers and their stats reset: for a table that
    /// numbers its names, where an emptied table ([`Short::emptied`])
    /// would number a name that comes again anew. Not for a flooded
    /// table, whose keyed names [`Short::into_sorted`] takes.
    pub(super) fn run_keeping_names(&mut self) -> Vec<Entry> {
        debug_assert!(!self.is_flooded());
        let run = self.clone().into_sorted();
        for s in self.slots.iter_mut().filter(|s| s.a | s.b != 0) {
            s.total = 0;
            s.min = i16::MAX;
            s.max = i16::MIN;
        }
        run
    }

    /// Grows the table to at least `n` slots (a power of two).
    pub(super) fn reserve(&mut self, n: usize) {
        while self.slots.len() < n {
            self.grow();
        }
    }

    /// Walks from the home slot of the key `a`, `b` to the slot that holds
    /// it or the empty one where it goes, spending a probe step per slot
    /// past the home slot; a table out of steps reseeds, or floods
    /// ([`Short::flood`]).
    /// The hot loop's walk is [`Adder`](super::Adder)'s own.
    pub(super) fn place(&mut self, a: u64, b: u64) -> Walk {
        if self.is_flooded() {
            return Walk::Flooded;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(a, b);
        loop {
            let t = &self.slots[i];
            if t.a == a && t.b == b {
                return Walk::Found(i);
            }
            if t.a | t.b == 0 {
                return Walk::Free(i);
            }
            if self.budget.left == 0 {
                // Reseeded, the table is walked afresh; flooded, not.
                self.flood();
                return self.place(a, b);
            }
            self.budget.left -= 1;
            i = (i + 1) & mask;
        }
    }

    /// Hands every name with its stats to `f`, in no order, and empties
    /// the table where it is: its slots stay, and so does its budget (a
    /// flooded table stays flooded, its keyed table empty).
    pub(super) fn drain(&mut self, mut f: impl FnMut(&[u8], Stats)) {
        if let Some(keyed) = &mut self.keyed {
            for s in keyed.drain() {
                let (bytes, len) = name(s.a, s.b);
                f(&bytes[..len], s.stats());
            }
        }
        for s in self.slots.iter_mut().filter(|s| s.a | s.b != 0) {
            let (bytes, len) = name(s.a, s.b);
            f(&bytes[..len], s.stats());
            *s = Slot::zeroed();
        }
        self.len = 0;
    }

    /// Names not in their home slot: each of their rows probes on.
    #[cfg(test)]
    pub(super) fn displaced(&self) -> usize {
        (self.slots.iter().enumerate())
            .filter(|(i, s)| s.a | s.b != 0 && self.home(s.a, s.b) != *i)
            .count()
    }

    /// Fills the empty slot `i` with a new name and its first row, given
    /// as its [`total`]; returns `false`, leaving the table alone, for a
    /// name [`super::acceptable`] refuses (the scanner does not check
    /// names: every new one lands here). Grows the table when over-full,
    /// so a caller holding slot pointers must refresh them.
    #[cold]
    #[inline(never)]
    pub(super) fn insert(
        &mut self,
        i: usize,
        a: u64,
        b: u64,
        total: i64,
        named: &mut Option<Vec<Name>>,
    ) -> Option<u32> {
        if !acceptable(a, b) {
            return None;
        }
        let id = number(named, || Name::Short((a, b)));
        self.fill(i, Slot::new(a, b, id, total));
        Some(id)
    }

    /// Puts a new name's slot `s` in the empty slot `i`, and grows the
    /// table when over-full ([`super::over_full`]).
    fn fill(&mut self, i: usize, s: Slot) {
        debug_assert_eq!(self.slots[i].a | self.slots[i].b, 0);
        self.slots[i] = s;
        self.len += 1;
        if super::over_full::<Slot>(self.len, self.slots.len()) {
            self.grow();
        }
    }

    /// Adds `other`'s names and stats to this table. Tables that have not
    /// reseeded place a name by the same hash, so walking `other`'s slots in
    /// order visits this table's in order too (at the same place if both
    /// are the same size, at a multiple or a fraction of it otherwise):
    /// both are read from front to back, not at random. The caller keeps the counts'
    /// sums from overflowing ([`super::Table::absorb`]).
    /// A flooded `other` is not folded here but set aside as a sorted run
    /// ([`super::Table::absorb`]); this table may reseed or flood while
    /// folding.
    pub(super) fn absorb(&mut self, other: &Short) {
        debug_assert!(!other.is_flooded());
        for s in other.slots.iter().filter(|s| s.a | s.b != 0) {
            match self.place(s.a, s.b) {
                Walk::Found(i) => self.slots[i].fold(s),
                // Checked when `other` took it in.
                Walk::Free(i) => self.fill(i, *s),
                Walk::Flooded => self.fold_flooded(s),
            }
        }
    }

    /// Grows the table where it is ([`Slots::lengthen`]), twofold or fourfold
    /// ([`Short::fourfold`]), and moves each name to its new place. A
    /// name's new home is its old home times the growth, give or take a
    /// few slots, so visiting the old slots from the top down finds the
    /// slots above each one already settled. A bitmap says which slots
    /// hold a name in its new place: a name goes to the first slot from its
    /// new home that holds none, and if that slot still holds an old name
    /// not yet visited (the rare name whose probe run wraps, or runs below
    /// the one being placed), that name is taken out and placed in turn.
    fn grow(&mut self) {
        let times = if self.fourfold() { 4 } else { 2 };
        self.slots.lengthen(times);
        self.shift -= times.trailing_zeros();
        let n = self.slots.len();
        let mut placed = vec![0u64; n.div_ceil(64)];
        // Probe steps past the names' new homes, spent from the budget: a
        // flood's names would cost the growth what they cost the rows.
        let mut steps = 0;
        let is_placed = |placed: &[u64], k: usize| placed[k / 64] >> (k % 64) & 1 != 0;
        for j in (0..n / times).rev() {
            // The slots a name lands in are read from the top down, which
            // the hardware's prefetchers follow too late; `GROW_AHEAD` old
            // slots ahead, four times as many new ones when growing
            // fourfold.
            prefetch::<true, _>(
                (self.slots.as_ptr()).wrapping_add((times * j).saturating_sub(GROW_AHEAD * times)),
            );
            let mut moving = self.slots[j];
            if moving.a | moving.b == 0 || is_placed(&placed, j) {
                continue;
            }
            self.slots[j] = Slot::zeroed();
            loop {
                let mut k = self.home(moving.a, moving.b);
                while is_placed(&placed, k) {
                    k = (k + 1) & (n - 1);
                    steps += 1;
                }
                placed[k / 64] |= 1 << (k % 64);
                let there = std::mem::replace(&mut self.slots[k], moving);
                if there.a | there.b == 0 {
                    break;
                }
                // Every slot above `j` was emptied or settled.
                debug_assert!(k < j);
                moving = there;
            }
        }
        self.budget.spend(steps);
        // A flooded table's names are where the hot loop looks, or in its
        // keyed table.
        self.spill();
    }

    /// Whether the table, about to grow, should grow fourfold: whether
    /// names still come so often that twofold would soon be outgrown too,
    /// which would move every name twice. A million names grew six times
    /// per thread, each growth moving every name, and the last ones, half
    /// a million names each, are passes over 32 and 64 MiB
    /// (docs/PERFORMANCE.md, *The tables*).
    ///
    /// Judged from a sample of the slots: if names have been met in
    /// random order, `K` names in all, `r` rows in leave `n = K(1 -
    /// e^(-r/K))` of them met, `r / n` rows each; twofold suffices unless
    /// `K > 2n`, that is while fewer than `2 ln 2 = 1.39` rows a name have
    /// been read. Below 1.3 rows a name (`K` about `2.4n` or more) the
    /// table grows fourfold to the size two doublings would have reached.
    /// Names that repeat before new ones come (fewer names, or names in
    /// runs) have more rows each and keep twofold growth; input whose new
    /// names all come first can take at most twice the slots it needs.
    fn fourfold(&self) -> bool {
        let step = (self.slots.len() / 4096).max(1);
        let (mut names, mut rows) = (0u64, 0u64);
        for s in self.slots.iter().step_by(step) {
            if s.a | s.b != 0 {
                names += 1;
                rows += s.sum_count().1;
            }
        }
        // Too few names to judge by: a small table's early growths.
        names >= FOURFOLD_SAMPLE && rows * 10 < names * 13
    }

    /// Every name with its stats, sorted by the name's bytes. The slots
    /// themselves are sorted, by a key that replaces their lookup key:
    /// the name zero-padded to 15 bytes, big-endian, then its length, so
    /// that a name sorts before any longer name it starts and apart from
    /// one that adds NULs, by [`radix`], which uses the free slots
    /// as its scratch space. Sorting indices instead, and then reading the
    /// slots in name order (random order), took a buffer as large as half
    /// the slots and a cache miss per name (docs/PERFORMANCE.md, *The
    /// tables*).
    pub(super) fn into_sorted(mut self) -> Vec<Entry> {
        if let Some(keyed) = self.keyed.take() {
            let keyed = keyed.into_sorted(|s| {
                let (bytes, len) = name(s.a, s.b);
                RawName::from_slice(&bytes[..len])
            });
            return super::merge_runs(vec![self.into_sorted(), keyed]);
        }
        let mut n = 0;
        for i in 0..self.slots.len() {
            let s = self.slots[i];
            if s.a | s.b != 0 {
                let (mut bytes, len) = name(s.a, s.b);
                // A short name leaves byte 15 zero (it held the `;` or padding).
                bytes[15] = len as u8;
                let (hi, lo) = bytes.split_at(8);
                let word = |w: &[u8]| u64::from_be_bytes(w.try_into().unwrap());
                self.slots[n] = Slot {
                    a: word(hi),
                    b: word(lo),
                    ..s
                };
                n += 1;
            }
        }
        // At most half full (`super::over_full`), so the free slots can hold them all.
        let (sorted, spare) = self.slots.split_at_mut(n);
        radix::sort(sorted, spare);
        (sorted.iter())
            .map(|s| {
                let mut bytes = [0; 16];
                bytes[..8].copy_from_slice(&s.a.to_be_bytes());
                bytes[8..].copy_from_slice(&s.b.to_be_bytes());
                Entry {
                    name: RawName::from_slice(&bytes[..bytes[15] as usize]),
                    stats: s.stats(),
                    first: NO_OFFSET,
                }
            })
            .collect()
    }
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

    proptest::proptest! {
        /// The word-at-a-time check agrees with the byte-wise one on every
        /// name a key can hold: ASCII or not, `\n` anywhere, empty.
        #[test]
        fn acceptable_keys_are_the_acceptable_names(
            name in proptest::collection::vec(
                proptest::sample::select(b"a\n\0\x7f\x80\xc3\xa9\xe6\x9d\xb1\xff :".to_vec()),
                0..=SHORT,
            ),
        ) {
            let (a, b) = key(&name);
            proptest::prop_assert_eq!(acceptable(a, b), super::super::acceptable(&name));
        }

        /// `solve` undoes the fixed hash.
        #[test]
        fn solve_undoes_the_fixed_hash(a: u64, b: u64) {
            let h = fixed_hash(a, b);
            proptest::prop_assert_eq!(h, (a ^ b.rotate_left(ROTATE)).wrapping_mul(MUL));
            proptest::prop_assert_eq!(solve(b, h), a);
        }
    }

    proptest::proptest! {
        /// A slot's total gives back every sum and count a table may
        /// hold: up to `MAX_ROWS` rows of any values, so sums of any
        /// sign up to `999 · MAX_ROWS`, added a row at a time.
        #[test]
        fn a_total_gives_back_its_sum_and_count(
            count in 1..=MAX_ROWS,
            mean in -999i64..=999,
            rest in -999i64..=999,
        ) {
            // `count - 1` rows of `mean` and one of `rest`, as one total
            // and as the rows added to it.
            let sum = mean * (count as i64 - 1) + rest;
            let mut s = Slot::new(1, 2, 0, total(rest));
            s.total += (count as i64 - 1) * total(mean);
            proptest::prop_assert_eq!(s.sum_count(), (sum, count));
            s.add(total(mean));
            proptest::prop_assert_eq!(s.sum_count(), (sum + mean, count + 1));
        }
    }

    #[test]
    fn the_extreme_totals_give_back_their_sums_and_counts() {
        for value in [-999, 999] {
            let mut s = Slot::new(1, 2, 0, total(value));
            s.total += (MAX_ROWS as i64 - 1) * total(value);
            assert_eq!(s.sum_count(), (value * MAX_ROWS as i64, MAX_ROWS));
            assert_eq!((s.min, s.max), (value as i16, value as i16));
        }
    }

    #[test]
    fn ascii_keys_are_checked_for_emptiness_and_newlines() {
        let cases: [(&[u8], bool); 6] = [
            (b"", false),
            (b"\n", false),
            (b"abcdefgh\n", false),
            (b"abcdefghijklmn\n", false),
            (b"\0", true),
            (b"abcdefghijklmno", true),
        ];
        for (name, want) in cases {
            let (a, b) = key(name);
            assert_eq!(acceptable(a, b), want, "{name:?}");
        }
    }

    /// Adds a row: a new name at the first free slot of its probe run, or
    /// one more row of a name the table holds.
    fn row(t: &mut Short, name: &[u8], value: i16) {
        let (a, b) = key(name);
        let mut i = t.home(a, b);
        loop {
            let s = &mut t.slots[i];
            if s.a == a && s.b == b {
                s.add(total(value.into()));
                return;
            }
            if s.a | s.b == 0 {
                assert!(t.insert(i, a, b, total(value.into()), &mut None).is_some());
                return;
            }
            i = (i + 1) % t.slots.len();
        }
    }

    /// The table's sizes as `rows` of `names` distinct names go in, and
    /// what it holds in the end against a map's count.
    fn growth(names: u32, rows: impl Iterator<Item = u32>) -> Vec<usize> {
        let mut t = Short::with_slots(4096);
        let mut sizes = vec![t.slots.len()];
        let mut want = std::collections::BTreeMap::new();
        for (i, k) in rows.enumerate() {
            let name = format!("n{k}");
            row(&mut t, name.as_bytes(), (i % 1999) as i16 - 999);
            *want.entry(name.into_bytes()).or_insert(0u64) += 1;
            if sizes.last() != Some(&t.slots.len()) {
                sizes.push(t.slots.len());
            }
        }
        assert_eq!(want.len(), names as usize);
        let got: Vec<(Vec<u8>, u64)> = (t.into_sorted().into_iter())
            .map(|e| (e.name.into_vec(), e.stats.count))
            .collect();
        assert_eq!(got, want.into_iter().collect::<Vec<_>>());
        sizes
    }

    #[test]
    fn names_that_keep_coming_grow_the_table_fourfold() {
        // Every row a new name: once the table holds enough names to
        // judge by, it grows fourfold (the first growths have too few).
        let sizes = growth(100_000, 0..100_000);
        assert!(sizes.windows(2).any(|w| w[1] == 4 * w[0]), "{sizes:?}");
        assert!(sizes
            .windows(2)
            .all(|w| w[1] == 2 * w[0] || w[1] == 4 * w[0]));
        // 100,000 names, half full at most: 2^18 slots either way.
        assert_eq!(sizes.last(), Some(&(1 << 18)));
    }

    #[test]
    fn names_met_again_before_new_ones_grow_the_table_twofold() {
        // Each name's second row comes before the next name: two rows a
        // name, more than the 1.3 under which the table grows fourfold.
        let names = 30_000;
        let sizes = growth(names, (0..names).flat_map(|k| [k, k]));
        assert!(sizes.windows(2).all(|w| w[1] == 2 * w[0]), "{sizes:?}");
    }

    #[test]
    fn a_clone_has_slots_of_its_own() {
        let mut t = Short::with_slots(4);
        row(&mut t, b"a", 1);
        let copy = t.clone();
        row(&mut t, b"b", 2);
        let a = Entry {
            name: RawName::from(&b"a"[..]),
            stats: Stats::new(1),
            first: NO_OFFSET,
        };
        assert_eq!(copy.into_sorted(), vec![a]);
        assert_eq!(t.into_sorted().len(), 2);
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
            row(&mut t, name, i as i16);
        }
        let want: Vec<Entry> = (names.iter().enumerate())
            .map(|(i, n)| Entry {
                name: RawName::from(&n[..]),
                stats: Stats::new(i as i16),
                first: NO_OFFSET,
            })
            .collect();
        assert_eq!(t.into_sorted(), want);
    }
}

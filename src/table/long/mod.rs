//! Names longer than [`SHORT`](super::short::SHORT) bytes, each kept whole
//! in a 128-byte bucket together with its stats.
//!
//! A bucket's key is the name, its `;` and zeros: 104 bytes, where the
//! longest name and its `;` take 101. As in the short table, the `;` makes
//! the key say the name's length (a name holds no `;`), so equality is one
//! compare of the whole key, with no length check and no loop; a hash match
//! alone is never taken as equality. The hash folds in every byte of the
//! key, so names sharing a long prefix and suffix do not pile up in one
//! probe chain.
//!
//! The key is laid out as four 32-byte blocks, the way four vector loads
//! read a line: with AVX2 a row's name is cut, hashed and compared straight
//! from the input, with no loop and no branch on its length, and the row is
//! added a row late, so that its bucket is fetched while the scanner
//! parses the lines after it ([`Deferred`]). Elsewhere the same hash and
//! compare run a word at a time ([`Long::add`]). Both give the same hash
//! (tested), so one table can be fed by both.
//!
//! A name of under 32 bytes has its `;` in the first block, and the other
//! three are zeros: with AVX2 it is cut, hashed and compared as that one
//! block ([`Deferred::add_by_head`]). The zero blocks add a constant to the
//! hash's fold, so the hash is the same; and the first block decides
//! equality, since a bucket whose first block holds the same bytes and `;`
//! holds the same name. Names of 16 to 31 bytes are a few percent of the
//! rows of both the 413 and the 10K sets, and are taken this way, their
//! rows deferred among themselves (docs/PERFORMANCE.md, *The tables*).
//!
//! Why whole names in the bucket: a name's first 16 bytes in a 64-byte
//! bucket and the rest in an arena made a row read its bucket and then,
//! depending on it, the arena; and a hash and compare that looped over the
//! name's words mispredicted the loops' exits on names of random lengths.
//! The 10K set's long rows are one in six of its rows, and cost far more
//! than their share (docs/PERFORMANCE.md, *The tables*).

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod deferred;

#[cfg(target_arch = "x86_64")]
pub(super) use deferred::Deferred;

use bytemuck::{Pod, Zeroable};
use std::hash::BuildHasher;

use foldhash::fast::SeedableRandomState;

use super::keyed::{Held, Keyed};
use super::name::number;
use super::{Budget, Name, NO_OFFSET};
use crate::parse::MAX_NAME_LEN;
use crate::stats::Stats;
use crate::summary::{Entry, RawName};
use crate::tuning::LONG_BUCKETS;

/// Words of a bucket's key: the longest name and its `;`, rounded up to a
/// word.
const KEY_WORDS: usize = 13;
const _: () = assert!(MAX_NAME_LEN < 8 * KEY_WORDS);

/// Bytes a [`Key`] spans: four 32-byte blocks.
const KEY_SPAN: usize = 128;

/// A long name as the table keys it: the name, its `;`, then zeros, as
/// the little-endian words of four 32-byte blocks. Words from `KEY_WORDS`
/// on are always zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(32))]
struct Key([u64; KEY_SPAN / 8]);

impl Key {
    /// The key of `name`, which must be at most [`MAX_NAME_LEN`] bytes
    /// without a `;`.
    fn new(name: &[u8]) -> Key {
        assert!(name.len() <= MAX_NAME_LEN);
        let mut bytes = [0u8; KEY_SPAN];
        bytes[..name.len()].copy_from_slice(name);
        bytes[name.len()] = b';';
        Key(std::array::from_fn(|i| {
            u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap())
        }))
    }

    /// The key stored in a bucket.
    fn of(s: &Bucket) -> Key {
        let mut key = Key([0; KEY_SPAN / 8]);
        key.0[..KEY_WORDS].copy_from_slice(&s.key);
        key
    }

    /// The name: the bytes before the `;`.
    fn name(&self) -> &[u8] {
        let bytes: &[u8; KEY_SPAN] = bytemuck::cast_ref(&self.0);
        let len = memchr::memchr(b';', bytes).expect("a key holds its `;`");
        &bytes[..len]
    }

    /// The hash: see [`mix`].
    fn hash(&self) -> u64 {
        mix(self.fold())
    }

    /// What [`mix`] takes: word `j` is the XOR over the blocks `k` of word
    /// `(j + k) % 4` of block `k` plus its salt.
    fn fold(&self) -> [u64; 4] {
        let word = |k: usize, l: usize| self.0[4 * k + l].wrapping_add(SALT[k][l]);
        std::array::from_fn(|j| (0..4).fold(0, |x, k| x ^ word(k, (j + k) % 4)))
    }
}

/// What is added to each word of block `k` before the blocks are folded:
/// without it, two names that swap two blocks each of one repeated byte
/// would fold alike (XOR does not care about order, and rotating such a
/// block changes nothing).
const SALT: [[u64; 4]; 4] = {
    let mut s = [[0; 4]; 4];
    let mut k = 1;
    while k < 4 {
        let mut l = 0;
        while l < 4 {
            s[k][l] = ((4 * k + l) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            l += 1;
        }
        k += 1;
    }
    s
};

/// Odd multipliers (digits of pi, made odd).
const K: [u64; 4] = [
    0x243f_6a88_85a3_08d3,
    0x1319_8a2e_0370_7345,
    0xa409_3822_299f_31d1,
    0x082e_fa98_ec4e_6c89,
];

/// The hash of a key from its fold: word `j` of the fold is the XOR over
/// the blocks `k` of word `(j + k) % 4` of block `k` plus its salt, which
/// is what XORing the four blocks as vectors gives once block `k` is
/// salted and its lanes rotated by `k`. Each word is multiplied by its own
/// constant: four products that wait for none of the others, where a
/// multiply per word in a chain waited for every word in turn. The table
/// indexes by the top bits, which every bit of each word reaches.
#[inline(always)]
fn mix(x: [u64; 4]) -> u64 {
    x[0].wrapping_mul(K[0])
        ^ x[1].wrapping_mul(K[1])
        ^ x[2].wrapping_mul(K[2])
        ^ x[3].wrapping_mul(K[3])
}

/// The hash of `name`'s key (at most [`MAX_NAME_LEN`] bytes, no `;`).
#[cfg(any(test, feature = "lab"))]
pub(super) fn hash(name: &[u8]) -> u64 {
    Key::new(name).hash()
}

/// The first key word that makes the key of `name`, its other words as
/// they are, hash to `hash`: that word enters its fold word unsalted, by
/// XOR, and [`mix`] multiplies the fold word by an odd constant, which
/// has an inverse. How [`super::flood`] builds names that share a hash.
#[cfg(any(test, feature = "lab"))]
pub(super) fn solve(name: &[u8], hash: u64) -> u64 {
    let mut key = Key::new(name);
    key.0[0] = 0;
    let fold = key.fold();
    let rest = mix([0, fold[1], fold[2], fold[3]]);
    (hash ^ rest).wrapping_mul(crate::bits::inverse(K[0])) ^ fold[0]
}

/// One station of the long table: its whole key (the name itself), its
/// stats and its number, in 128 bytes, where the short table keeps a name
/// of at most 16 bytes in a slot of 32. All zeros is an empty bucket (a
/// station has a count of at least 1).
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(128))]
struct Bucket {
    key: [u64; KEY_WORDS],
    sum: i64,
    count: u64,
    min: i16,
    max: i16,
    /// The name's number in a table that numbers its names
    /// ([`super::Table::numbered`]); 0 in one that does not.
    id: u32,
}

/// Buckets of a flooded table, all empty: as many as the smallest table
/// has, so that its shape needs no special case.
const FLOODED_BUCKETS: usize = 8;

impl Bucket {
    /// A bucket holding the key `key`, numbered `id`, and one row of
    /// `value`.
    fn new(key: &Key, id: u32, value: i16) -> Bucket {
        let mut s = Bucket::zeroed();
        s.key.copy_from_slice(&key.0[..KEY_WORDS]);
        (s.min, s.max, s.sum, s.count) = (value, value, i64::from(value), 1);
        s.id = id;
        s
    }

    /// The bucket's stats.
    fn stats(&self) -> Stats {
        super::stats(self.sum, self.count, self.min, self.max)
    }

    /// Counts one more row of this station.
    #[inline(always)]
    fn add(&mut self, value: i16) {
        self.sum += i64::from(value);
        self.count += 1;
        super::widen(&mut self.min, &mut self.max, value);
    }

    /// Folds another bucket's stats into this one's, as when two tables are
    /// folded into one.
    fn fold(&mut self, other: &Bucket) {
        self.sum += other.sum;
        self.count += other.count;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }
}

/// A flooded table keeps its buckets as they are, looked up by the name.
impl Held for Bucket {
    type Key = [u8];
    type Row = i16;

    fn hash(&self, state: &SeedableRandomState) -> u64 {
        state.hash_one(Key::of(self).name())
    }

    #[inline(always)]
    fn is(&self, name: &[u8]) -> bool {
        let bytes: &[u8] = bytemuck::cast_slice(&self.key);
        // The key's `;` right after the name says it is no longer.
        bytes[name.len()] == b';' && bytes[..name.len()] == *name
    }

    #[inline(always)]
    fn add(&mut self, value: i16) {
        Bucket::add(self, value);
    }

    fn fold(&mut self, other: &Bucket) {
        Bucket::fold(self, other);
    }

    fn stats(&self) -> Stats {
        Bucket::stats(self)
    }
}

/// A row's key as a lookup holds it: as words ([`Key`]) or as vectors.
trait Probe {
    /// Whether bucket `s` holds this key.
    fn matches(&self, s: &Bucket) -> bool;
    fn key(&self) -> Key;
}

impl Probe for Key {
    #[inline(always)]
    fn matches(&self, s: &Bucket) -> bool {
        // One branch for the whole key.
        (0..KEY_WORDS).fold(0, |d, i| d | (s.key[i] ^ self.0[i])) == 0
    }

    #[inline(always)]
    fn key(&self) -> Key {
        *self
    }
}

/// The table of long names (any length up to [`MAX_NAME_LEN`] works; the
/// caller sends only long ones here).
#[derive(Clone)]
pub(super) struct Long {
    buckets: Vec<Bucket>,
    /// `buckets.len() - 1`; the length is a power of two.
    mask: usize,
    /// `64 - log2(buckets.len())`: a hash's home bucket is `hash >> shift`.
    shift: u32,
    /// Occupied buckets.
    len: usize,
    /// Probe steps past home buckets the table may still take.
    pub(super) budget: Budget,
    /// Where the names are once the table has spent its probe steps
    /// ([`Long::flood`]); its few buckets then stay empty, matching no key.
    keyed: Option<Keyed<Bucket>>,
    /// For a table that numbers its names ([`super::Table::numbered`]),
    /// its names in the order they came, the short table's too: a name's
    /// number ([`Bucket::id`], or its slot's) is its place here.
    pub(super) named: Option<Vec<Name>>,
    /// In such a table, each row added since they were last taken
    /// ([`super::Table::take_long_rows`]): its name's number and value.
    pub(super) rows: Vec<(u32, i16)>,
}

impl Default for Long {
    fn default() -> Long {
        Long::with_capacity(LONG_BUCKETS)
    }
}

impl Long {
    /// A table with `buckets` buckets (rounded up to a power of two).
    pub(super) fn with_capacity(buckets: usize) -> Long {
        let n = buckets.next_power_of_two().max(8);
        Long {
            buckets: vec![Bucket::zeroed(); n],
            mask: n - 1,
            shift: 64 - n.trailing_zeros(),
            len: 0,
            budget: Budget::new(),
            keyed: None,
            named: None,
            rows: Vec::new(),
        }
    }

    /// Number of distinct names.
    pub(super) fn len(&self) -> usize {
        self.keyed.as_ref().map_or(self.len, Keyed::len)
    }

    /// Whether the table has moved its names to a keyed table.
    pub(super) fn is_flooded(&self) -> bool {
        self.keyed.is_some()
    }

    /// Moves every name to a keyed table, for good, and leaves a few empty
    /// buckets, as [`Short::flood`](super::short::Short::flood) does: every
    /// row then misses its home bucket, which sends it out of the AVX2 path's
    /// loop ([`Long::add_past_home`]), and on to the keyed table. Does
    /// nothing to a flooded table.
    #[cold]
    #[inline(never)]
    fn flood(&mut self) {
        if self.is_flooded() {
            return;
        }
        let mut keyed = Keyed::with_capacity(self.len);
        for s in self.buckets.iter().filter(|s| s.count != 0) {
            keyed.fold(Key::of(s).name(), *s);
        }
        self.buckets = vec![Bucket::zeroed(); FLOODED_BUCKETS];
        self.mask = FLOODED_BUCKETS - 1;
        self.shift = 64 - FLOODED_BUCKETS.trailing_zeros();
        self.len = 0;
        self.budget.forfeit();
        self.keyed = Some(keyed);
    }

    /// Adds one row of `name`, 1..=[`MAX_NAME_LEN`] bytes without a `;`,
    /// and gives the name's number ([`Bucket::id`]). Returns `None`,
    /// adding nothing, for a name [`super::acceptable`] refuses.
    ///
    /// Not inlined: long names are the rarer case, and the portable
    /// scanner's loop stays small without this body.
    #[inline(never)]
    pub(super) fn add(&mut self, name: &[u8], value: i16) -> Option<u32> {
        let key = Key::new(name);
        let past_home =
            |t: &mut Long, key: &Key, home, value| t.add_past_home(key, name, home, value);
        self.add_kept(&key, key.hash(), value, past_home)
    }

    /// [`Long::add_probe`] giving the name's number, the row kept in
    /// [`Long::rows`] by a table that numbers its names.
    #[inline(always)]
    fn add_kept<P: Probe>(
        &mut self,
        probe: &P,
        hash: u64,
        value: i16,
        past_home: impl FnOnce(&mut Long, &P, usize, i16) -> Option<u32>,
    ) -> Option<u32> {
        let numbered = self.named.is_some();
        let id = self.add_probe(probe, hash, value, !numbered, |s| Some(s.id), past_home)?;
        if numbered {
            self.rows.push((id, value));
        }
        Some(id)
    }

    /// Looks the key whose hash is `hash` up by linear probing and counts
    /// the row, inserting the name if it is new: in its home bucket here,
    /// giving what `hit` makes of it, or by `past_home`, given the home
    /// bucket, for a key further on or new ([`Long::add_past_home`]). A
    /// plain run's adds ask for a verdict alone, so that their code carries
    /// no number ([`Long::add_kept`] gives one). A row found at home is
    /// counted there if `count`: a numbered table's rows are kept by
    /// number, its stats not read.
    #[inline(always)]
    fn add_probe<P: Probe, T>(
        &mut self,
        probe: &P,
        hash: u64,
        value: i16,
        count: bool,
        hit: impl FnOnce(&Bucket) -> T,
        past_home: impl FnOnce(&mut Long, &P, usize, i16) -> T,
    ) -> T {
        let home = (hash >> self.shift) as usize;
        // SAFETY: `hash >> shift` is below `buckets.len()` (`shift` set with
        // it in `with_capacity`, `resize` and `flood`).
        let s = unsafe { self.buckets.get_unchecked_mut(home) };
        if probe.matches(s) {
            if count {
                s.add(value);
            }
            return hit(s);
        }
        past_home(self, probe, home, value)
    }

    /// [`Long::add_probe`] for the key `probe` of `name` not in its home
    /// bucket `home`: further on, or new, or in the keyed table of a
    /// flooded table, which takes the name's bytes as they are. The AVX2
    /// path
    /// calls it out of line (`add_past_home_avx2`): inlined, the walk and
    /// its probe budget took registers that every row's lookup then
    /// spilled (docs/PERFORMANCE.md, *The tables*).
    #[inline(always)]
    fn add_past_home<P: Probe>(
        &mut self,
        probe: &P,
        name: &[u8],
        home: usize,
        value: i16,
    ) -> Option<u32> {
        match self.find(probe, home) {
            Some(Ok(i)) => {
                // SAFETY: `find` gives an index below `buckets.len()`.
                let s = unsafe { self.buckets.get_unchecked_mut(i) };
                s.add(value);
                Some(s.id)
            }
            Some(Err(i)) => self.insert(i, &probe.key(), value),
            None => {
                let Long { keyed, named, .. } = self;
                let new = || {
                    let id = number(named, || Name::Long(name.into()));
                    Some(Bucket::new(&probe.key(), id, value))
                };
                let new = || super::acceptable(name).then(new).flatten();
                let keyed = keyed.as_mut().expect("flooded");
                keyed.add(name, value, new).map(|s| s.id)
            }
        }
    }

    /// The bucket that holds the key `probe`, whose home bucket is `home`,
    /// found by linear probing (`Ok`), or the empty bucket where it would go
    /// (`Err`), spending a probe step per bucket past the home bucket; `None`
    /// if the table is flooded, or floods for want of a step
    /// ([`Long::flood`]).
    #[inline(always)]
    fn find<P: Probe>(&mut self, probe: &P, home: usize) -> Option<Result<usize, usize>> {
        if self.is_flooded() {
            return None;
        }
        let mut i = home;
        loop {
            // SAFETY: `home` and `i & mask` are below `buckets.len()` (`mask`
            // set with it in `with_capacity`, `resize` and `flood`).
            let s = unsafe { self.buckets.get_unchecked(i) };
            if probe.matches(s) {
                return Some(Ok(i));
            }
            if s.count == 0 {
                return Some(Err(i));
            }
            if self.budget.left == 0 {
                self.flood();
                return None;
            }
            self.budget.left -= 1;
            i = (i + 1) & self.mask;
        }
    }

    /// Puts a new name's bucket `s` in the empty bucket `i`, and grows the
    /// table when over-full ([`super::over_full`]).
    fn fill(&mut self, i: usize, s: Bucket) {
        self.buckets[i] = s;
        self.len += 1;
        if super::over_full::<Bucket>(self.len, self.buckets.len()) {
            self.resize(self.buckets.len() * 2);
        }
    }

    /// Fills the empty bucket `i` with `key`'s first row, and grows the
    /// table when over-full ([`super::over_full`]); refuses a name
    /// [`super::acceptable`] refuses.
    #[cold]
    #[inline(never)]
    fn insert(&mut self, i: usize, key: &Key, value: i16) -> Option<u32> {
        debug_assert!(!self.is_flooded());
        let name = key.name();
        if !super::acceptable(name) {
            return None;
        }
        let id = number(&mut self.named, || Name::Long(name.into()));
        self.fill(i, Bucket::new(key, id, value));
        Some(id)
    }

    /// Adds `other`'s names and stats to this table (see
    /// [`Short::absorb`](super::short::Short::absorb)).
    /// A flooded `other` is set aside as a sorted run instead
    /// ([`super::Table::absorb`]); this table may flood while folding.
    pub(super) fn absorb(&mut self, other: &Long) {
        debug_assert!(!other.is_flooded());
        for s in other.buckets.iter().filter(|s| s.count != 0) {
            let key = Key::of(s);
            match self.find(&key, (key.hash() >> self.shift) as usize) {
                Some(Ok(i)) => self.buckets[i].fold(s),
                // Checked when `other` took it in.
                Some(Err(i)) => self.fill(i, *s),
                None => {
                    let keyed = self.keyed.as_mut().expect("flooded");
                    keyed.fold(key.name(), *s);
                }
            }
        }
    }

    /// Moves every name to a new array of `n` buckets (a power of two).
    ///
    /// Not inlined: inlined into [`Long::fill`], the growth cost more
    /// instructions than it saved (docs/PERFORMANCE.md, *How to
    /// measure*).
    #[inline(never)]
    fn resize(&mut self, n: usize) {
        let old = std::mem::replace(&mut self.buckets, vec![Bucket::zeroed(); n]);
        self.mask = n - 1;
        self.shift = 64 - n.trailing_zeros();
        // Probe steps past the names' new homes, spent from the budget: a
        // flood's names would cost the growth what they cost the rows.
        let mut steps = 0;
        for s in old.into_iter().filter(|s| s.count != 0) {
            let mut i = (Key::of(&s).hash() >> self.shift) as usize;
            while self.buckets[i].count != 0 {
                i = (i + 1) & self.mask;
                steps += 1;
            }
            self.buckets[i] = s;
        }
        self.budget.spend(steps);
    }

    /// Hands every name with its stats to `f`, in no order, and empties
    /// the table where it is: its buckets stay, and so does its budget (a
    /// flooded table stays flooded, its keyed table empty).
    pub(super) fn drain(&mut self, mut f: impl FnMut(&[u8], Stats)) {
        if let Some(keyed) = &mut self.keyed {
            for s in keyed.drain() {
                f(Key::of(&s).name(), s.stats());
            }
            return;
        }
        for s in self.buckets.iter_mut().filter(|s| s.count != 0) {
            f(Key::of(s).name(), s.stats());
            *s = Bucket::zeroed();
        }
        self.len = 0;
    }

    /// Every name with its stats, sorted by the name's bytes.
    pub(super) fn into_sorted(self) -> Vec<Entry> {
        if let Some(keyed) = self.keyed {
            return keyed.into_sorted(|s| RawName::from_slice(Key::of(s).name()));
        }
        let mut entries: Vec<Entry> = (self.buckets.iter().filter(|s| s.count != 0))
            .map(|s| Entry {
                name: RawName::from_slice(Key::of(s).name()),
                stats: s.stats(),
                first: NO_OFFSET,
            })
            .collect();
        entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names of every long length, with NUL bytes, multi-byte characters
    /// and repeated blocks.
    pub(super) fn names() -> Vec<Vec<u8>> {
        let mut names = Vec::new();
        for len in 16..=MAX_NAME_LEN {
            names.push((0..len).map(|i| b'a' + (i % 26) as u8).collect());
            names.push([vec![0; len - 1], vec![b'z']].concat());
            names.push(vec![0; len]);
            names.push("é".repeat(len / 2).into_bytes());
        }
        // Blocks each of one repeated byte, swapped.
        names.push([[b'x'; 32], [b'a'; 32], [b'b'; 32]].concat());
        names.push([[b'x'; 32], [b'b'; 32], [b'a'; 32]].concat());
        names.sort();
        names.dedup();
        names
    }

    #[test]
    fn keys_say_their_names_and_lengths() {
        for name in names() {
            let key = Key::new(&name);
            assert_eq!(key.name(), &name[..]);
            assert!(key.0[KEY_WORDS..].iter().all(|&w| w == 0));
        }
        // A name ending in NUL bytes is not its prefix.
        assert_ne!(
            Key::new(&[b'a'; 20]),
            Key::new(&[&[b'a'; 20][..], &[0]].concat())
        );
    }

    #[test]
    fn stays_a_quarter_full_until_2_mib_then_half() {
        let name = |i: usize| format!("a long name, number {i:>6}").into_bytes();
        let mut t = Long::with_capacity(64);
        for i in 0..16 {
            assert!(t.add(&name(i), 1).is_some());
        }
        assert_eq!(t.buckets.len(), 64);
        assert!(t.add(&name(16), 1).is_some());
        assert_eq!(t.buckets.len(), 128);
        // 2 MiB of buckets: 16,384, which half full holds 8,192 names.
        let big = (2 << 20) / std::mem::size_of::<Bucket>();
        let mut t = Long::with_capacity(big);
        // The probe steps the names' rows would have earned.
        t.budget.credit(big as u64 * 32, 1);
        for i in 0..big / 2 {
            assert!(t.add(&name(i), 1).is_some());
        }
        assert_eq!(t.buckets.len(), big);
        assert!(t.add(&name(big / 2), 1).is_some());
        assert_eq!(t.buckets.len(), 2 * big);
        assert_eq!(t.len(), big / 2 + 1);
    }

    #[test]
    fn agrees_with_a_map_on_names_that_differ_in_one_byte() {
        let mut t = Long::default();
        let mut want = std::collections::BTreeMap::new();
        for (i, name) in names().into_iter().enumerate() {
            for at in [0, name.len() / 2, name.len() - 1] {
                let mut other = name.clone();
                other[at] ^= 1;
                for n in [&name, &other] {
                    if std::str::from_utf8(n).is_ok() {
                        assert!(t.add(n, i as i16).is_some());
                        (want.entry(n.clone()))
                            .and_modify(|s: &mut Stats| s.add(i as i16))
                            .or_insert(Stats::new(i as i16));
                    }
                }
            }
        }
        assert_eq!(t.len(), want.len());
        let got: Vec<(Vec<u8>, Stats)> = (t.into_sorted().into_iter())
            .map(|e| (e.name.to_vec(), e.stats))
            .collect();
        assert!(got.into_iter().eq(want));
    }

    #[test]
    fn blocks_swapped_hash_apart() {
        let a = [[b'x'; 32], [b'a'; 32], [b'b'; 32]].concat();
        let b = [[b'x'; 32], [b'b'; 32], [b'a'; 32]].concat();
        assert_ne!(Key::new(&a).hash(), Key::new(&b).hash());
    }
}

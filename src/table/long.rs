//! Names longer than [`SHORT`](super::short::SHORT) bytes, each kept whole
//! in a 128-byte slot together with its stats.
//!
//! A slot's key is the name, its `;` and zeros: 104 bytes, where the
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
//! added a row late, so that its slot is fetched while the scanner parses
//! the lines after it ([`Long::add_deferred_avx2`]). Elsewhere the same
//! hash and compare run a word at a time ([`Long::add`]). Both give the
//! same hash (tested), so one table can be fed by both.
//!
//! A name of under 32 bytes has its `;` in the first block, and the other
//! three are zeros: with AVX2 it is cut, hashed and compared as that one
//! block ([`Long::add_head_avx2`]). The zero blocks add a constant to the
//! hash's fold, so the hash is the same; and the first block decides
//! equality, since a slot whose first block holds the same bytes and `;`
//! holds the same name. The 10K set's names of 16 to 31 bytes are 6% of
//! its rows; taken this way, with their rows deferred among themselves,
//! the 413 set (2.4% of its rows) took 0.97× the CPU time and the 10K set
//! 0.93–1.00× (docs/PERFORMANCE.md, step 40).
//!
//! Why whole names in the slot: the layout before kept a name's first 16
//! bytes in a 64-byte slot and the rest in an arena, so a row read its
//! slot and then, depending on it, the arena; and its hash and compare
//! looped over the name's words, mispredicting the loops' exits on names
//! of random lengths. The 10K set's long rows are 16% of its rows, and the
//! same rows with each long name replaced by a short one took 0.57× the
//! CPU time (docs/PERFORMANCE.md, step 32).

use bytemuck::{Pod, Zeroable};

use super::NO_OFFSET;
use crate::bits::prefetch;
use crate::entry::{Entry, RawName};
use crate::parse::MAX_NAME_LEN;
use crate::stats::Stats;

/// Words of a slot's key: the longest name and its `;`, rounded up to a
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

    /// The key stored in a slot.
    fn of(s: &Slot) -> Key {
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
        let word = |k: usize, l: usize| self.0[4 * k + l].wrapping_add(SALT[k][l]);
        mix(std::array::from_fn(|j| {
            (0..4).fold(0, |x, k| x ^ word(k, (j + k) % 4))
        }))
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

/// One station: its key and its stats. All zeros is an empty slot (a
/// station has a count of at least 1).
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(128))]
struct Slot {
    key: [u64; KEY_WORDS],
    sum: i64,
    count: u64,
    min: i16,
    max: i16,
    _pad: u32,
}

impl Slot {
    /// Counts one more row of this station.
    #[inline(always)]
    fn add(&mut self, value: i16) {
        super::tally(
            &mut self.sum,
            &mut self.count,
            &mut self.min,
            &mut self.max,
            i64::from(value),
        );
    }
}

/// A row's key as a lookup holds it: as words ([`Key`]) or as vectors.
trait Probe {
    /// Whether slot `s` holds this key.
    fn matches(&self, s: &Slot) -> bool;
    fn key(&self) -> Key;
}

impl Probe for Key {
    #[inline(always)]
    fn matches(&self, s: &Slot) -> bool {
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
    slots: Vec<Slot>,
    /// `slots.len() - 1`; the length is a power of two.
    mask: usize,
    /// `64 - log2(slots.len())`: a hash's home slot is `hash >> shift`.
    shift: u32,
    /// Occupied slots.
    len: usize,
    /// The row [`Long::add_deferred_avx2`] keeps back until the next.
    deferred: Option<Deferred>,
    /// The row [`Long::add_head_avx2`] keeps back until the next.
    deferred_head: Option<Deferred>,
    /// The first line start of a deferred row whose name was refused.
    refused: Option<usize>,
}

/// A row added a row late ([`Long::add_deferred_avx2`]): where its line
/// starts (an address), its name's length, hash and value.
#[derive(Clone, Copy)]
struct Deferred {
    at: usize,
    len: usize,
    hash: u64,
    value: i16,
}

impl Default for Long {
    fn default() -> Long {
        // 8 KiB: the 413 official names hold a dozen long ones.
        Long::with_capacity(64)
    }
}

impl Long {
    /// A table with `slots` slots (rounded up to a power of two).
    pub fn with_capacity(slots: usize) -> Long {
        let n = slots.next_power_of_two().max(8);
        Long {
            slots: vec![Slot::zeroed(); n],
            mask: n - 1,
            shift: 64 - n.trailing_zeros(),
            len: 0,
            deferred: None,
            deferred_head: None,
            refused: None,
        }
    }

    /// Number of distinct names.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Adds one row of `name`, 1..=[`MAX_NAME_LEN`] bytes without a `;`.
    /// Returns `false`, adding nothing, for a name [`super::acceptable`]
    /// refuses.
    ///
    /// Not inlined: long names are the rarer case, and the portable
    /// scanner's loop stays small without this body.
    #[inline(never)]
    pub fn add(&mut self, name: &[u8], value: i16) -> bool {
        let key = Key::new(name);
        self.add_probe(&key, key.hash(), value)
    }

    /// Adds the row of the name of `len` bytes at `p` a row late: cuts and
    /// hashes the name as four AVX2 vectors read from `p` and starts
    /// fetching its slot, then adds the row deferred before it (whose slot
    /// has had the time to come) and keeps this one in its place. If the
    /// table refused the row before, remembers its line for
    /// [`Long::settle_avx2`] and returns `false` without taking this row:
    /// the caller stops there. (Returning a verdict, rather than none,
    /// also kept the scanner's loop in its registers: two instructions
    /// fewer per short row on the 413 set.)
    ///
    /// Why a row late: a long row's slot is 128 bytes at a hashed place,
    /// and its address waits for the name to be found, cut and hashed;
    /// added at once, the row held the CPU while its slot came (the 10K
    /// set took 0.88× the CPU time with every slot at hand).
    ///
    /// A call of its own: inlined into the scanner's loop (with the line's
    /// parsing out of line instead), the 10K set took 1.04× the time.
    ///
    /// # Safety
    /// `p` must be valid for reads of [`KEY_SPAN`] bytes until the next
    /// call of [`Long::settle_avx2`], its first `;` at `p + len` with
    /// `len <= MAX_NAME_LEN`, and the CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    pub unsafe fn add_deferred_avx2(&mut self, p: *const u8, len: usize, value: i16) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.defer::<avx2::Blocks>(p, len, value) }
    }

    /// [`Long::add_deferred_avx2`] for a name of `len < 32` bytes, whose
    /// `;` is in the first 32 bytes: the name is cut, hashed and compared
    /// as one AVX2 vector ([`avx2::Head`]), and its rows are deferred
    /// among themselves.
    ///
    /// # Safety
    /// As for [`Long::add_deferred_avx2`], with `len < 32`.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    pub unsafe fn add_head_avx2(&mut self, p: *const u8, len: usize, value: i16) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.defer::<avx2::Head>(p, len, value) }
    }

    /// The body of [`Long::add_deferred_avx2`] and [`Long::add_head_avx2`],
    /// whose keys are cut as `C`, each with its own deferred row.
    ///
    /// # Safety
    /// As for [`Long::add_deferred_avx2`], and `C::load`'s.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn defer<C: avx2::Cut>(&mut self, p: *const u8, len: usize, value: i16) -> bool {
        // SAFETY: forwarded from the caller.
        let hash = unsafe { C::load(p, len) }.hash();
        self.prefetch(hash);
        if let Some(before) = self.queue::<C>().take() {
            // SAFETY: `before` was deferred here, whose caller keeps its
            // bytes valid until `settle_avx2`, not yet called.
            unsafe { self.add_deferred_row::<C>(before) };
        }
        if self.refused.is_some() {
            return false;
        }
        *self.queue::<C>() = Some(Deferred {
            at: p as usize,
            len,
            hash,
            value,
        });
        true
    }

    /// Where rows whose keys are cut as `C` wait.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn queue<C: avx2::Cut>(&mut self) -> &mut Option<Deferred> {
        if C::HEAD {
            &mut self.deferred_head
        } else {
            &mut self.deferred
        }
    }

    /// Adds the rows deferred last, if any (one in each queue), and returns
    /// where the first line whose name the table refused since the last
    /// call starts, if any (only in faulty input).
    ///
    /// # Safety
    /// The deferred row's bytes must still be valid (see
    /// [`Long::add_deferred_avx2`]), and the CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    pub unsafe fn settle_avx2(&mut self) -> Option<*const u8> {
        if let Some(row) = self.deferred.take() {
            // SAFETY: forwarded from the caller.
            unsafe { self.add_deferred_row::<avx2::Blocks>(row) };
        }
        if let Some(row) = self.deferred_head.take() {
            // SAFETY: forwarded from the caller.
            unsafe { self.add_deferred_row::<avx2::Head>(row) };
        }
        self.refused.take().map(|at| at as *const u8)
    }

    /// Adds a deferred row, remembering its line if the name is refused.
    ///
    /// # Safety
    /// The row's bytes must still be valid, and the CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn add_deferred_row<C: avx2::Cut>(&mut self, row: Deferred) {
        // SAFETY: forwarded from the caller; `defer` checked the rest for
        // this row.
        let key = unsafe { C::load(row.at as *const u8, row.len) };
        if !self.add_probe(&key, row.hash, row.value) {
            // The first in the input is the one reported: the two queues'
            // refusals may come in either order.
            self.refused = Some(self.refused.map_or(row.at, |at| at.min(row.at)));
        }
    }

    /// Starts loading the home slot of a name whose hash is `hash`, both
    /// its lines, without waiting for them.
    #[inline(always)]
    fn prefetch(&self, hash: u64) {
        let slot = self
            .slots
            .as_ptr()
            .wrapping_add((hash >> self.shift) as usize);
        prefetch::<true, _>(slot);
        prefetch::<true, _>(slot.cast::<u8>().wrapping_add(64));
    }

    /// Looks the key whose hash is `hash` up by linear probing and counts
    /// the row, inserting the name if it is new.
    #[inline(always)]
    fn add_probe<P: Probe>(&mut self, probe: &P, hash: u64, value: i16) -> bool {
        match self.find(probe, hash) {
            // SAFETY: `find` gives an index below `slots.len()`.
            Ok(i) => unsafe { self.slots.get_unchecked_mut(i) }.add(value),
            Err(i) => return self.insert(i, &probe.key(), value),
        }
        true
    }

    /// The slot that holds the key `probe`, whose hash is `hash`, found by
    /// linear probing (`Ok`), or the empty slot where it would go (`Err`).
    #[inline(always)]
    fn find<P: Probe>(&self, probe: &P, hash: u64) -> Result<usize, usize> {
        let mut i = (hash >> self.shift) as usize;
        loop {
            // SAFETY: `hash >> shift` and `i & mask` are below `slots.len()`
            // (`mask`, `shift` set with it in `with_capacity` and `resize`).
            let s = unsafe { self.slots.get_unchecked(i) };
            if probe.matches(s) {
                return Ok(i);
            }
            if s.count == 0 {
                return Err(i);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Puts a new name's slot `s` in the empty slot `i`, and grows the
    /// table when over-full ([`super::over_full`]).
    fn fill(&mut self, i: usize, s: Slot) {
        self.slots[i] = s;
        self.len += 1;
        if super::over_full::<Slot>(self.len, self.slots.len()) {
            self.resize(self.slots.len() * 2);
        }
    }

    /// Fills the empty slot `i` with `key`'s first row, and grows the
    /// table when over-full ([`super::over_full`]); refuses a name
    /// [`super::acceptable`] refuses.
    #[cold]
    #[inline(never)]
    fn insert(&mut self, i: usize, key: &Key, value: i16) -> bool {
        if !super::acceptable(key.name()) {
            return false;
        }
        let mut s = Slot::zeroed();
        s.key.copy_from_slice(&key.0[..KEY_WORDS]);
        (s.min, s.max, s.sum, s.count) = (value, value, i64::from(value), 1);
        self.fill(i, s);
        true
    }

    /// Adds `other`'s names and stats to this table (see
    /// [`Short::absorb`](super::short::Short::absorb)).
    pub fn absorb(&mut self, other: &Long) {
        debug_assert!(
            other.deferred.is_none() && other.deferred_head.is_none(),
            "a deferred row was not settled"
        );
        for s in other.slots.iter().filter(|s| s.count != 0) {
            let key = Key::of(s);
            match self.find(&key, key.hash()) {
                Ok(i) => {
                    let t = &mut self.slots[i];
                    let from = (s.sum, s.count, s.min, s.max);
                    super::fold(&mut t.sum, &mut t.count, &mut t.min, &mut t.max, from);
                }
                // Checked when `other` took it in.
                Err(i) => self.fill(i, *s),
            }
        }
    }

    /// Moves every name to a new array of `n` slots (a power of two).
    ///
    /// Not inlined: inlined into [`Long::fill`], the growth of the 10K
    /// set's long table took 2 million more instructions (callgrind, its
    /// first 10^6 rows).
    #[inline(never)]
    fn resize(&mut self, n: usize) {
        let old = std::mem::replace(&mut self.slots, vec![Slot::zeroed(); n]);
        self.mask = n - 1;
        self.shift = 64 - n.trailing_zeros();
        for s in old.into_iter().filter(|s| s.count != 0) {
            let mut i = (Key::of(&s).hash() >> self.shift) as usize;
            while self.slots[i].count != 0 {
                i = (i + 1) & self.mask;
            }
            self.slots[i] = s;
        }
    }

    /// Every name with its stats, sorted by the name's bytes.
    pub fn into_sorted(self) -> Vec<Entry> {
        debug_assert!(
            self.deferred.is_none() && self.deferred_head.is_none(),
            "a deferred row was not settled"
        );
        let mut entries: Vec<Entry> = (self.slots.iter().filter(|s| s.count != 0))
            .map(|s| {
                let stats = Stats {
                    min: s.min,
                    max: s.max,
                    sum: s.sum,
                    count: s.count,
                };
                Entry {
                    name: RawName::from_slice(Key::of(s).name()),
                    stats,
                    first: NO_OFFSET,
                }
            })
            .collect();
        entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        entries
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{Key, Probe, Slot, KEY_SPAN, KEY_WORDS, SALT};
    use std::arch::x86_64::*;

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
    /// slot holds its stats.
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
        fn matches(&self, s: &Slot) -> bool {
            // The first block decides: it holds this key's `;`, so a slot
            // whose first block equals it holds the same name, and zeros
            // after it, as every key does.
            // SAFETY: a slot is 128 bytes aligned to 128; AVX2 as in `hash`.
            unsafe {
                let eq = _mm256_cmpeq_epi8(self.0, _mm256_load_si256((s as *const Slot).cast()));
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
        fn matches(&self, s: &Slot) -> bool {
            let q = (s as *const Slot).cast::<__m256i>();
            // SAFETY: a slot is 128 bytes aligned to 128, so the four
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
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "x86_64")]
    use avx2::Cut;

    /// Names of every long length, with NUL bytes, multi-byte characters
    /// and repeated blocks.
    fn names() -> Vec<Vec<u8>> {
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
            assert!(t.add(&name(i), 1));
        }
        assert_eq!(t.slots.len(), 64);
        assert!(t.add(&name(16), 1));
        assert_eq!(t.slots.len(), 128);
        // 2 MiB of slots: 16,384, which half full holds 8,192 names.
        let big = (2 << 20) / std::mem::size_of::<Slot>();
        let mut t = Long::with_capacity(big);
        for i in 0..big / 2 {
            assert!(t.add(&name(i), 1));
        }
        assert_eq!(t.slots.len(), big);
        assert!(t.add(&name(big / 2), 1));
        assert_eq!(t.slots.len(), 2 * big);
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
                        assert!(t.add(n, i as i16));
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

    /// Adds one row with AVX2, as the scanner does (by its head if the
    /// name is under 32 bytes), and settles it at once: `false` if refused.
    ///
    /// # Safety
    /// As for [`Long::add_deferred_avx2`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn add_avx2(t: &mut Long, p: *const u8, len: usize, value: i16) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe {
            add_line_avx2(t, p, len, value);
            t.settle_avx2().is_none()
        }
    }

    /// Adds one row with AVX2 a row late, by its head if the name is under
    /// 32 bytes, as the scanner does.
    ///
    /// # Safety
    /// As for [`Long::add_deferred_avx2`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn add_line_avx2(t: &mut Long, p: *const u8, len: usize, value: i16) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe {
            if len < 32 {
                t.add_head_avx2(p, len, value)
            } else {
                t.add_deferred_avx2(p, len, value)
            }
        }
    }

    /// Adds the lines of `text` with AVX2, each a row late, until one is
    /// not taken, then settles; returns where it stopped and the refused
    /// line, as offsets.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn add_lines_avx2(t: &mut Long, text: &[u8]) -> (usize, Option<usize>) {
        let mut buf = text.to_vec();
        buf.extend_from_slice(&[0; KEY_SPAN]);
        let mut p = 0;
        while p < text.len() {
            let len = buf[p..].iter().position(|&c| c == b';').unwrap();
            let end = p + buf[p..].iter().position(|&c| c == b'\n').unwrap();
            let value = std::str::from_utf8(&buf[p + len + 1..end]).unwrap();
            let value = (value.parse::<f64>().unwrap() * 10.0).round() as i16;
            // SAFETY: `KEY_SPAN` zeros follow the text; the first `;` at
            // `p + len`; AVX2 as the caller guarantees.
            if !unsafe { add_line_avx2(t, buf.as_ptr().add(p), len, value) } {
                break;
            }
            p = end + 1;
        }
        // SAFETY: `buf` is still alive.
        let refused = unsafe { t.settle_avx2() };
        (p, refused.map(|at| at as usize - buf.as_ptr() as usize))
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn a_refused_deferred_row_stops_the_next_add_and_is_reported() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        // Names of under 32 bytes and of more wait in queues of their own.
        for (good, bad) in [
            (
                "a station past sixteen bytes;1.5\n",
                &b"a name not UTF-8 \xff\xfe;2.0\n"[..],
            ),
            (
                "a station past thirty-two bytes, by far;1.5\n",
                &b"a name not UTF-8 \xff\xfe, and past 32 bytes;2.0\n"[..],
            ),
        ] {
            refuse_and_report(&good.repeat(3), bad);
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_first_refused_row_of_either_queue_is_reported() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let head = &b"a name not UTF-8 \xff\xfe;2.0\n"[..];
        let long = &b"a name not UTF-8 \xff\xfe, and past 32 bytes;2.0\n"[..];
        let next = "a station past thirty-two bytes, by far;1.5\n";
        for (first, second) in [(head, long), (long, head)] {
            // Each queue holds one refused row; the second queue's is
            // found when the scan settles, after the first's.
            let text = [first, second, next.as_bytes(), next.as_bytes()].concat();
            let mut t = Long::default();
            // SAFETY: AVX2 was detected.
            let (stop, refused) = unsafe { add_lines_avx2(&mut t, &text) };
            assert_eq!(refused, Some(0), "{:?}", String::from_utf8_lossy(first));
            assert!(stop <= first.len() + second.len() + next.len());
        }
    }

    #[cfg(target_arch = "x86_64")]
    fn refuse_and_report(good: &str, bad: &[u8]) {
        let text = [good.as_bytes(), bad, good.as_bytes(), bad].concat();
        for (text, stop, refused, rows) in [
            // The row after the bad one is not taken: the caller stops at it.
            (&text[..], good.len() + bad.len(), Some(good.len()), 3),
            // A bad row deferred last is refused when settled.
            (
                &text[..good.len() + bad.len()],
                good.len() + bad.len(),
                Some(good.len()),
                3,
            ),
            (good.as_bytes(), good.len(), None, 3),
        ] {
            let mut t = Long::default();
            // SAFETY: AVX2 was detected.
            assert_eq!(unsafe { add_lines_avx2(&mut t, text) }, (stop, refused));
            // Nothing is left to settle, and every good row before counts.
            // SAFETY: as above; nothing deferred.
            assert!(unsafe { t.settle_avx2() }.is_none());
            let sorted = t.into_sorted();
            assert_eq!(sorted.len(), 1);
            assert_eq!(
                (sorted[0].stats.count, sorted[0].stats.sum),
                (rows, 15 * rows as i64)
            );
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn vectors_hash_and_compare_as_words_do() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        // Each name in a buffer followed by its `;` and junk, as a line's
        // value and the next lines follow it in the input.
        let mut t = Long::default();
        let names = names();
        for (round, name) in names.iter().chain(&names).enumerate() {
            let mut line = [name.clone(), b";-12.3\nnext;1.0\n".repeat(9)].concat();
            line.resize(KEY_SPAN.max(line.len()), b'!');
            let words = Key::new(name);
            // SAFETY: the buffer holds `KEY_SPAN` bytes, the first `;` at
            // `name.len()`, and AVX2 was detected.
            let blocks = unsafe { avx2::Blocks::load(line.as_ptr(), name.len()) };
            assert_eq!(blocks.key(), words, "{name:?}");
            assert_eq!(blocks.hash(), words.hash(), "{name:?}");
            if name.len() < 32 {
                // SAFETY: as above, and `name.len() < 32`.
                let head = unsafe { avx2::Head::load(line.as_ptr(), name.len()) };
                assert_eq!(head.key(), words, "{name:?}");
                assert_eq!(head.hash(), words.hash(), "{name:?}");
            }
            // Fed by both paths in turn, each name takes one slot.
            let value = round as i16;
            let added = if round % 2 == 0 {
                t.add(name, value)
            } else {
                // SAFETY: as above.
                unsafe { add_avx2(&mut t, line.as_ptr(), name.len(), value) }
            };
            assert_eq!(added, std::str::from_utf8(name).is_ok());
        }
        let sorted = t.into_sorted();
        let valid = names.iter().filter(|n| std::str::from_utf8(n).is_ok());
        let mut want: Vec<&Vec<u8>> = valid.collect();
        want.sort();
        want.dedup();
        assert!(sorted
            .iter()
            .map(|e| &e.name[..])
            .eq(want.iter().map(|n| &n[..])));
        assert!(sorted.iter().all(|e| e.stats.count == 2));
    }

    #[test]
    fn blocks_swapped_hash_apart() {
        let a = [[b'x'; 32], [b'a'; 32], [b'b'; 32]].concat();
        let b = [[b'x'; 32], [b'b'; 32], [b'a'; 32]].concat();
        assert_ne!(Key::new(&a).hash(), Key::new(&b).hash());
    }
}

//! Where a run's names go once a thread's table holds many of them: range
//! partitions that all the run's threads share, so that memory grows with
//! the distinct names, not with names × threads (docs/PERFORMANCE.md,
//! *Memory*).
//!
//! A thread whose table has reached its bound ([`Partitions::bound`])
//! drains it into a [`Staging`] and hands that over: its names are put in
//! order of partition, and each partition's share is folded into it under
//! its lock, one small table at a time. A partition keeps each name with
//! its stats as a record in an arena, found through an open-addressing
//! index under a hash keyed by a random seed, as a flooded table's keyed
//! map is, so names built to collide cost no more here. A share is folded
//! in groups: a group's index slots are fetched, then its records, then
//! its names folded, as the fast tables' batched feed fetches its slots.
//! Arena and index are anonymous mappings, so that a partition taken out
//! gives its memory back at once.
//!
//! Partitions split the names at splitters, names drawn from the first
//! ones handed over: every name of one partition sorts before every name of
//! the next, so the sorted partitions, one after the other, are the sorted
//! result, and each partition's memory is given back as its names are
//! taken out. A name is placed by its first 8 bytes against the splitters'
//! and, where those are a splitter's, by its whole bytes: names sharing a
//! long prefix (`station 0000001`, `station 0000002`…) spread over the
//! partitions as others do, where one partition holding them all made the
//! run hold every name twice while it was taken out.

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use foldhash::fast::SeedableRandomState;
use memmap2::MmapMut;

use super::keyed::random_state;
use super::NO_OFFSET;
use crate::bits::prefetch;
use crate::stats::Stats;
use crate::summary::{Entry, RawName};
use crate::tuning::{hand_off_names, PARTITIONS};

/// The partitions of one run, shared by its threads.
pub struct Partitions {
    parts: Vec<Mutex<Partition>>,
    /// Partition `k` holds the names that have `k` splitters at or below
    /// them. Set by the first hand-over.
    splitters: OnceLock<Splitters>,
    key: SeedableRandomState,
    /// Names a thread's table may hold before it hands them over.
    bound: usize,
    used: AtomicBool,
}

/// Zeroed bytes in an anonymous mapping, given back when dropped.
#[derive(Default)]
struct Mapped(Option<MmapMut>);

impl Mapped {
    fn zeroed(bytes: usize) -> Mapped {
        Mapped((bytes > 0).then(|| MmapMut::map_anon(bytes).expect("memory for a partition")))
    }

    fn bytes(&self) -> &[u8] {
        self.0.as_deref().unwrap_or_default()
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        self.0.as_deref_mut().unwrap_or_default()
    }
}

impl Clone for Mapped {
    fn clone(&self) -> Mapped {
        let mut copy = Mapped::zeroed(self.bytes().len());
        copy.bytes_mut().copy_from_slice(self.bytes());
        copy
    }
}

/// One partition: a record per name in `arena[..used]`, one after the
/// other ([`Record`]), and an index of them: open addressing, linear
/// probing, at most half full. A slot is 0 when empty, else the top
/// [`TAG_BITS`] bits of the name's hash above its record's offset plus 1.
#[derive(Clone, Default)]
struct Partition {
    arena: Mapped,
    used: usize,
    index: Mapped,
    len: usize,
}

/// Hash bits a slot keeps, so that most slots of other names are passed
/// without reading their records; the slot's other bits are the offset.
const TAG_BITS: u32 = 24;

const OFFSET_MASK: u64 = (1 << (64 - TAG_BITS)) - 1;

/// Slots of a partition's first index (`u64`s, a page).
const FIRST_SLOTS: usize = 512;

/// A record's bytes before its name: sum, count, min, max, the name's
/// length.
const HEAD: usize = 21;

/// A record in an arena: read and written through its offset.
struct Record;

impl Record {
    fn len(arena: &[u8], at: usize) -> usize {
        usize::from(arena[at + 20])
    }

    fn name(arena: &[u8], at: usize) -> &[u8] {
        &arena[at + HEAD..at + HEAD + Record::len(arena, at)]
    }

    fn stats(arena: &[u8], at: usize) -> Stats {
        let word = |k: usize| arena[at + k..at + k + 8].try_into().unwrap();
        let half = |k: usize| i16::from_le_bytes(arena[at + k..at + k + 2].try_into().unwrap());
        Stats::of(
            half(16).into(),
            half(18).into(),
            i64::from_le_bytes(word(0)).into(),
            u64::from_le_bytes(word(8)),
        )
    }

    fn set_stats(arena: &mut [u8], at: usize, s: &Stats) {
        arena[at..at + 8].copy_from_slice(&text_sum(s.sum).to_le_bytes());
        arena[at + 8..at + 16].copy_from_slice(&s.count.to_le_bytes());
        arena[at + 16..at + 18].copy_from_slice(&text_value(s.min).to_le_bytes());
        arena[at + 18..at + 20].copy_from_slice(&text_value(s.max).to_le_bytes());
    }
}

/// A text value in tenths as the table keeps it: text values lie in
/// `-999..=999`, and only text engines fill tables.
fn text_value(tenths: i64) -> i16 {
    debug_assert!((-999..=999).contains(&tenths));
    tenths as i16
}

/// A text sum in tenths as the table keeps it: the text tables add up in
/// `i64`, so only those reach a partition.
fn text_sum(tenths: i128) -> i64 {
    debug_assert!(i64::try_from(tenths).is_ok());
    tenths as i64
}

/// A thread's names on their way to the partitions: kept by the thread and
/// reused, so that a hand-over allocates nothing once warm.
#[derive(Clone, Default)]
pub struct Staging {
    names: Vec<u8>,
    staged: Vec<Staged>,
    /// The numbers of the names in `staged`, in order of partition: each
    /// share is then read in order. Numbers rather than copies, so that a
    /// thread's staging takes less memory (docs/PERFORMANCE.md, *Memory*).
    order: Vec<u32>,
}

/// A staged name, `names[at..at + len]` of its [`Staging`], its stats
/// (their fields, so that no padding makes it longer), and once handed
/// over its hash and partition.
#[derive(Clone, Copy)]
struct Staged {
    at: usize,
    hash: u64,
    sum: i64,
    count: u64,
    min: i16,
    max: i16,
    len: u8,
    part: u16,
}

// A partition's number fits a [`Staged`]'s `part`.
const _: () = assert!(PARTITIONS <= 1 << 16);

impl Staged {
    fn stats(&self) -> Stats {
        Stats::of(
            self.min.into(),
            self.max.into(),
            self.sum.into(),
            self.count,
        )
    }
}

impl Staging {
    /// Stages `name` (at most 100 bytes) with its stats.
    pub fn push(&mut self, name: &[u8], stats: Stats) {
        self.staged.push(Staged {
            at: self.names.len(),
            hash: 0,
            sum: text_sum(stats.sum),
            count: stats.count,
            min: text_value(stats.min),
            max: text_value(stats.max),
            len: u8::try_from(name.len()).expect("a name of at most 100 bytes"),
            part: 0,
        });
        self.names.extend_from_slice(name);
    }

    fn name(&self, s: &Staged) -> &[u8] {
        &self.names[s.at..s.at + usize::from(s.len)]
    }
}

/// A name's first 8 bytes, zero-padded, as a big-endian word: names in
/// byte order have their prefixes in order too (a shorter name's padding
/// is no greater than the bytes another name has there).
fn prefix(name: &[u8]) -> u64 {
    let mut bytes = [0; 8];
    let n = name.len().min(8);
    bytes[..n].copy_from_slice(&name[..n]);
    u64::from_be_bytes(bytes)
}

/// The names partitions are split at, in order, and their [`prefix`]es.
#[derive(Clone)]
struct Splitters {
    prefixes: Vec<u64>,
    names: Vec<Box<[u8]>>,
}

impl Splitters {
    /// The number of splitters at or below `name`, whose prefix is
    /// `prefix`: its partition. The prefixes decide unless some are equal
    /// to the name's (prefixes keep the names' order), and only then are
    /// whole names compared, among those splitters: a search whose every
    /// step could compare names branches at each step, for every name
    /// handed over, where one over the prefixes needs no branch but its
    /// loop's.
    fn partition(&self, prefix: u64, name: &[u8]) -> usize {
        let above = self.prefixes.partition_point(|&p| p <= prefix);
        if above == 0 || self.prefixes[above - 1] != prefix {
            return above;
        }
        let equal = self.prefixes.partition_point(|&p| p < prefix);
        equal + self.names[equal..above].partition_point(|s| **s <= *name)
    }
}

fn lock(part: &Mutex<Partition>) -> MutexGuard<'_, Partition> {
    part.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Default for Partitions {
    /// Empty partitions, with the bound the run's tables hand over at.
    fn default() -> Partitions {
        Partitions {
            parts: (0..PARTITIONS).map(|_| Mutex::default()).collect(),
            splitters: OnceLock::new(),
            key: random_state(),
            bound: hand_off_names(),
            used: AtomicBool::new(false),
        }
    }
}

impl Clone for Partitions {
    fn clone(&self) -> Partitions {
        Partitions {
            parts: (self.parts.iter())
                .map(|p| Mutex::new(lock(p).clone()))
                .collect(),
            splitters: self.splitters.clone(),
            key: self.key.clone(),
            bound: self.bound,
            used: AtomicBool::new(self.is_used()),
        }
    }
}

impl Partitions {
    /// Names a thread's table may hold before it hands them over.
    pub fn bound(&self) -> usize {
        self.bound
    }

    /// Whether any names were handed over.
    pub fn is_used(&self) -> bool {
        self.used.load(Ordering::Relaxed)
    }

    /// Folds every name staged into its partition, and empties `staging`.
    pub fn hand_off(&self, staging: &mut Staging) {
        if staging.staged.is_empty() {
            return;
        }
        self.used.store(true, Ordering::Relaxed);
        let splitters = self.splitters.get_or_init(|| self.split(staging));
        let mut counts = vec![0u32; self.parts.len() + 1];
        for i in 0..staging.staged.len() {
            let name = staging.name(&staging.staged[i]);
            let (hash, key) = (self.key.hash_one(name), prefix(name));
            let part = splitters.partition(key, name);
            counts[part + 1] += 1;
            let s = &mut staging.staged[i];
            (s.hash, s.part) = (hash, part as u16);
        }
        // A counting sort by partition: each partition's share is then
        // folded in one go, under one lock.
        for k in 1..counts.len() {
            counts[k] += counts[k - 1];
        }
        let Staging {
            names,
            staged,
            order,
        } = staging;
        order.resize(staged.len(), 0);
        let mut next = counts.clone();
        for (i, s) in staged.iter().enumerate() {
            order[next[usize::from(s.part)] as usize] = i as u32;
            next[usize::from(s.part)] += 1;
        }
        for (k, part) in self.parts.iter().enumerate() {
            let share = &order[counts[k] as usize..counts[k + 1] as usize];
            if !share.is_empty() {
                lock(part).fold_share(&self.key, share, staged, names);
            }
        }
        names.clear();
        staged.clear();
        order.clear();
    }

    /// Splitters that cut the names staged into partitions of about equal
    /// numbers of names.
    fn split(&self, staging: &Staging) -> Splitters {
        let mut names: Vec<&[u8]> = (staging.staged.iter()).map(|s| staging.name(s)).collect();
        names.sort_unstable();
        let n = self.parts.len();
        let names: Vec<Box<[u8]>> = (1..n).map(|k| names[k * names.len() / n].into()).collect();
        Splitters {
            prefixes: names.iter().map(|name| prefix(name)).collect(),
            names,
        }
    }

    /// Takes every name out, with its stats, sorted by the name's bytes;
    /// the partitions are left empty, each one's memory given back as its
    /// names are taken. Only once every thread has handed its names over.
    pub fn take_sorted(&self) -> Vec<Entry> {
        let total = self.parts.iter().map(|p| lock(p).len).sum();
        let mut entries = Vec::with_capacity(total);
        let mut records = Vec::new();
        for part in &self.parts {
            let part = std::mem::take(&mut *lock(part));
            let arena = &part.arena.bytes()[..part.used];
            records.clear();
            let mut at = 0;
            while at < arena.len() {
                records.push(at);
                at += HEAD + Record::len(arena, at);
            }
            records.sort_unstable_by(|&a, &b| Record::name(arena, a).cmp(Record::name(arena, b)));
            entries.extend(records.iter().map(|&at| Entry {
                name: RawName::from_slice(Record::name(arena, at)),
                stats: Record::stats(arena, at),
                first: NO_OFFSET,
            }));
        }
        entries
    }
}

/// Names of a share whose slots, then records, are fetched together before
/// they are folded: about a share, a few dozen names, so that their
/// misses overlap. Fetching a fixed distance ahead of the folds would
/// leave each share's first names, with nothing fetched ahead of them, to
/// miss one after the other (docs/PERFORMANCE.md, *Memory*).
const GROUP: usize = 64;

impl Partition {
    fn slots(&self) -> &[u64] {
        bytemuck::cast_slice(self.index.bytes())
    }

    /// Folds the staged names numbered `share` in `staged` (their names in
    /// `names`) into the partition, [`GROUP`] at a time: the group's index
    /// slots fetched, then its names and their home slots' records, then
    /// each folded.
    fn fold_share(
        &mut self,
        key: &SeedableRandomState,
        share: &[u32],
        staged: &[Staged],
        names: &[u8],
    ) {
        if self.index.bytes().is_empty() {
            self.index = Mapped::zeroed(FIRST_SLOTS * 8);
        }
        for group in share.chunks(GROUP) {
            let group = || group.iter().map(|&i| &staged[i as usize]);
            for s in group() {
                self.prefetch_slot(s.hash);
            }
            let slots = self.slots();
            for s in group() {
                prefetch::<false, _>(names.as_ptr().wrapping_add(s.at));
                let slot = slots[s.hash as usize & (slots.len() - 1)];
                if slot != 0 {
                    let at = (slot & OFFSET_MASK) as usize - 1;
                    prefetch::<false, _>(self.arena.bytes().as_ptr().wrapping_add(at));
                }
            }
            for s in group() {
                let name = &names[s.at..s.at + usize::from(s.len)];
                self.fold(key, name, s.hash, &s.stats());
            }
        }
    }

    /// Starts fetching the home slot of a name whose hash is `hash`.
    fn prefetch_slot(&self, hash: u64) {
        let slots = self.slots();
        let home = hash as usize & (slots.len() - 1);
        prefetch::<false, _>(slots.as_ptr().wrapping_add(home));
    }

    /// Folds `stats` into the record of `name`, whose hash is `hash`.
    fn fold(&mut self, key: &SeedableRandomState, name: &[u8], hash: u64, stats: &Stats) {
        let tag = hash >> (64 - TAG_BITS) << (64 - TAG_BITS);
        let mask = self.slots().len() - 1;
        let mut i = hash as usize & mask;
        loop {
            let slot = self.slots()[i];
            if slot == 0 {
                break;
            }
            let at = (slot & OFFSET_MASK) as usize - 1;
            if slot & !OFFSET_MASK == tag && Record::name(self.arena.bytes(), at) == name {
                let arena = self.arena.bytes_mut();
                let mut folded = Record::stats(arena, at);
                folded.merge(stats);
                Record::set_stats(arena, at, &folded);
                return;
            }
            i = (i + 1) & mask;
        }
        let at = self.push(name, stats);
        bytemuck::cast_slice_mut::<u8, u64>(self.index.bytes_mut())[i] = tag | (at as u64 + 1);
        self.len += 1;
        if 2 * self.len > mask + 1 {
            self.grow_index(key);
        }
    }

    /// Appends a record of `name` and `stats` to the arena, doubled when
    /// full; returns its offset. Only the pages written take memory, so
    /// the room ahead costs none, and fewer growths copy and fault in less.
    fn push(&mut self, name: &[u8], stats: &Stats) -> usize {
        let at = self.used;
        let end = at + HEAD + name.len();
        if end > self.arena.bytes().len() {
            let mut grown = Mapped::zeroed((2 * end).max(4096));
            grown.bytes_mut()[..at].copy_from_slice(&self.arena.bytes()[..at]);
            self.arena = grown;
        }
        let arena = self.arena.bytes_mut();
        Record::set_stats(arena, at, stats);
        arena[at + 20] = name.len() as u8;
        arena[at + HEAD..end].copy_from_slice(name);
        self.used = end;
        at
    }

    /// Doubles the index, placing every record anew from its name's hash,
    /// walking the arena in order.
    fn grow_index(&mut self, key: &SeedableRandomState) {
        let n = 2 * self.slots().len();
        let mut index = Mapped::zeroed(n * 8);
        let slots: &mut [u64] = bytemuck::cast_slice_mut(index.bytes_mut());
        let arena = &self.arena.bytes()[..self.used];
        let mut at = 0;
        while at < arena.len() {
            let hash = key.hash_one(Record::name(arena, at));
            let mut i = hash as usize & (n - 1);
            while slots[i] != 0 {
                i = (i + 1) & (n - 1);
            }
            slots[i] = hash >> (64 - TAG_BITS) << (64 - TAG_BITS) | (at as u64 + 1);
            at += HEAD + Record::len(arena, at);
        }
        self.index = index;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// Names of every length, multi-byte, with NUL bytes, many sharing
    /// their first 8 bytes: `k` picks one.
    fn name(k: usize) -> Vec<u8> {
        match k % 4 {
            0 => format!("n{k}").into_bytes(),
            1 => format!("shared-prefix {k} é").into_bytes(),
            2 => [vec![0; k % 9], format!("{k}").into_bytes()].concat(),
            _ => format!("{k}{}", "€".repeat(k % 33)).into_bytes(),
        }
    }

    #[test]
    fn names_handed_over_from_many_threads_come_out_sorted_each_once() {
        // Four threads hand over overlapping sets of names, a few hundred
        // at a time, as their tables fill: each name comes out once, its
        // stats folded from every hand-over that held it.
        let parts = Partitions::default();
        let per_thread = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|t| {
                    let parts = &parts;
                    s.spawn(move || {
                        let mut staging = Staging::default();
                        let mut staged = Vec::new();
                        for k in 0..6_000 {
                            let name = name(k * (t + 1) % 7_000);
                            let value = ((k * 37 + t) % 1999) as i16 - 999;
                            staging.push(&name, Stats::new(value));
                            staged.push((name, value));
                            if k % 500 == 499 {
                                parts.hand_off(&mut staging);
                            }
                        }
                        parts.hand_off(&mut staging);
                        staged
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap())
                .collect::<Vec<_>>()
        });
        assert_takes_out(&parts, per_thread.into_iter().flatten());
    }

    /// Asserts that `parts` gives out each name of the staged `rows` once,
    /// in order, with the stats of all its rows, and is then empty.
    fn assert_takes_out(parts: &Partitions, rows: impl Iterator<Item = (Vec<u8>, i16)>) {
        let mut want: BTreeMap<Vec<u8>, Stats> = BTreeMap::new();
        for (name, value) in rows {
            (want.entry(name))
                .and_modify(|s| s.add(value))
                .or_insert(Stats::new(value));
        }
        assert!(parts.is_used());
        let got = parts.take_sorted();
        assert_eq!(got.len(), want.len());
        for (e, (name, stats)) in got.iter().zip(&want) {
            assert_eq!(&e.name[..], &name[..]);
            assert_eq!(e.stats, *stats, "{name:?}");
        }
        assert!(parts.take_sorted().is_empty());
    }

    #[test]
    fn shares_of_several_groups_are_folded_whole() {
        // 40,000 names a hand-over, twice: shares of about 150 names, each
        // folded in several groups, the second time into names it holds.
        let parts = Partitions::default();
        let mut staging = Staging::default();
        let mut rows = Vec::new();
        for round in 0..2 {
            for k in 0..40_000 {
                let mut name = name(k);
                name.truncate(100);
                let value = ((k * 7 + round) % 1999) as i16 - 999;
                staging.push(&name, Stats::new(value));
                rows.push((name, value));
            }
            parts.hand_off(&mut staging);
        }
        assert!(parts.parts.iter().any(|p| lock(p).len > 2 * GROUP));
        assert_takes_out(&parts, rows.into_iter());
    }

    #[test]
    fn staged_names_and_stats_come_out_whole() {
        // The longest name, a NUL byte, counts past u32 and sums past i32
        // with the extreme values, handed over twice: every field of a
        // staged name survives its packing.
        let parts = Partitions::default();
        let mut staging = Staging::default();
        let mut want: BTreeMap<Vec<u8>, Stats> = BTreeMap::new();
        let names = ["é".repeat(50).into_bytes(), b"\0".to_vec(), b"a".to_vec()];
        for round in 0..2i64 {
            for (k, name) in names.iter().enumerate() {
                let stats = Stats::of(
                    -999 + round,
                    999 - k as i64,
                    -(1 << 40) - k as i128 * round as i128,
                    (1 << 33) + k as u64,
                );
                staging.push(name, stats.clone());
                (want.entry(name.clone()))
                    .and_modify(|s| s.merge(&stats))
                    .or_insert(stats);
            }
            parts.hand_off(&mut staging);
        }
        let got: Vec<(Vec<u8>, Stats)> = (parts.take_sorted().into_iter())
            .map(|e| (e.name.to_vec(), e.stats))
            .collect();
        assert_eq!(got, want.into_iter().collect::<Vec<_>>());
    }

    #[test]
    fn splitters_cut_the_first_names_into_even_partitions_whatever_they_share() {
        let parts = Partitions::default();
        let mut staging = Staging::default();
        for k in 0..PARTITIONS * 100 {
            staging.push(
                format!("{:08}", k * 7919 % 100_000).as_bytes(),
                Stats::new(0),
            );
        }
        parts.hand_off(&mut staging);
        let sizes: Vec<usize> = parts.parts.iter().map(|p| lock(p).len).collect();
        assert!(sizes.iter().all(|&n| (90..=110).contains(&n)), "{sizes:?}");
        // Names sharing their first 8 bytes and more spread as evenly, and
        // come out in order.
        let parts = Partitions::default();
        let mut rows = Vec::new();
        for round in 0..2 {
            for k in 0..PARTITIONS * 100 {
                let name = format!("station {:07} é", k * 7919 % 100_000).into_bytes();
                staging.push(&name, Stats::new(round));
                rows.push((name, round as i16));
            }
            parts.hand_off(&mut staging);
        }
        let sizes: Vec<usize> = parts.parts.iter().map(|p| lock(p).len).collect();
        assert!(sizes.iter().all(|&n| (90..=110).contains(&n)), "{sizes:?}");
        assert_takes_out(&parts, rows.into_iter());
        // A name's partition is the number of splitters at or below it,
        // splitters sharing its prefix or not.
        let splitters = parts.splitters.get().unwrap();
        for k in 0..3_000 {
            let name = [name(k), format!("station {k:07}").into_bytes()][k % 2].clone();
            let want = splitters.names.iter().filter(|s| ***s <= *name).count();
            assert_eq!(splitters.partition(prefix(&name), &name), want, "{name:?}");
        }
        // Prefixes keep the names' order.
        assert!(prefix(b"ab") <= prefix(b"ab\0"));
        assert!(prefix(b"ab") < prefix(b"abc"));
        assert!(prefix(b"abcdefgh-z") == prefix(b"abcdefgh"));
    }
}

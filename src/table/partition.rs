//! Where a run's names go once a thread's table holds many of them: range
//! partitions that all the run's threads share, so that memory grows with
//! the distinct names, not with names × threads (docs/PERFORMANCE.md,
//! *Memory*).
//!
//! A thread whose table has reached its bound ([`Partitions::bound`])
//! drains it into a [`Staging`] and hands that over: its names are put in
//! order of partition, and each partition's share is folded into it under
//! its lock, one small table at a time. A partition keeps its names in an
//! arena and a `hashbrown` table of 32-byte records, keyed by a random
//! seed as a flooded table's keyed map is, so names built to collide cost
//! no more here.
//!
//! Partitions split the names by their first 8 bytes, at splitters drawn
//! from the first names handed over: every name of one partition sorts
//! before every name of the next, so the sorted partitions, one after the
//! other, are the sorted result, and each partition's memory is given back
//! as its names are taken out. Names sharing their first 8 bytes share a
//! partition: a skewed set makes fewer, bigger partitions, never a wrong
//! order.

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use foldhash::fast::SeedableRandomState;
use hashbrown::HashTable;

use super::keyed::random_state;
use super::NO_OFFSET;
use crate::entry::{Entry, RawName};
use crate::stats::Stats;
use crate::tuning::{hand_off_names, PARTITIONS};

/// The partitions of one run, shared by its threads.
pub struct Partitions {
    parts: Vec<Mutex<Part>>,
    /// Partition `k` holds the names whose [`prefix`] has `k` splitters at
    /// or below it. Set by the first hand-over.
    splitters: OnceLock<Vec<u64>>,
    key: SeedableRandomState,
    /// Names a thread's table may hold before it hands them over.
    bound: usize,
    used: AtomicBool,
}

/// One partition: its names' bytes one after the other, and a record of
/// each name.
#[derive(Clone, Default)]
struct Part {
    recs: HashTable<Rec>,
    names: Vec<u8>,
}

/// A name, `names[at..at + len]` of its partition, and its stats: 32 bytes.
#[derive(Clone, Copy)]
struct Rec {
    at: usize,
    sum: i64,
    count: u64,
    min: i16,
    max: i16,
    len: u8,
}

impl Rec {
    fn name<'n>(&self, names: &'n [u8]) -> &'n [u8] {
        &names[self.at..self.at + usize::from(self.len)]
    }

    fn stats(&self) -> Stats {
        super::stats(self.sum, self.count, self.min, self.max)
    }
}

/// A thread's names on their way to the partitions: kept by the thread and
/// reused, so that a hand-over allocates nothing once warm.
#[derive(Clone, Default)]
pub struct Staging {
    names: Vec<u8>,
    staged: Vec<Staged>,
    /// The indexes of `staged`, in order of partition.
    order: Vec<u32>,
}

/// A staged name, `names[at..at + len]` of its [`Staging`], its stats, and
/// once handed over its hash and partition.
#[derive(Clone, Copy)]
struct Staged {
    at: usize,
    len: u8,
    part: u32,
    hash: u64,
    stats: Stats,
}

impl Staging {
    /// Stages `name` (at most 100 bytes) with its stats.
    pub fn push(&mut self, name: &[u8], stats: Stats) {
        self.staged.push(Staged {
            at: self.names.len(),
            len: u8::try_from(name.len()).expect("a name of at most 100 bytes"),
            part: 0,
            hash: 0,
            stats,
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

fn lock(part: &Mutex<Part>) -> MutexGuard<'_, Part> {
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
            let part = splitters.partition_point(|&s| s <= key);
            counts[part + 1] += 1;
            let s = &mut staging.staged[i];
            (s.hash, s.part) = (hash, part as u32);
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
            order[next[s.part as usize] as usize] = i as u32;
            next[s.part as usize] += 1;
        }
        for (k, part) in self.parts.iter().enumerate() {
            let share = &order[counts[k] as usize..counts[k + 1] as usize];
            if share.is_empty() {
                continue;
            }
            let mut part = lock(part);
            for &i in share {
                let s = &staged[i as usize];
                let name = &names[s.at..s.at + usize::from(s.len)];
                part.fold(&self.key, name, s.hash, &s.stats);
            }
        }
        names.clear();
        staged.clear();
        order.clear();
    }

    /// Splitters that cut the names staged into partitions of about equal
    /// numbers of names.
    fn split(&self, staging: &Staging) -> Vec<u64> {
        let mut keys: Vec<u64> = (staging.staged.iter())
            .map(|s| prefix(staging.name(s)))
            .collect();
        keys.sort_unstable();
        let n = self.parts.len();
        (1..n).map(|k| keys[k * keys.len() / n]).collect()
    }

    /// Takes every name out, with its stats, sorted by the name's bytes;
    /// the partitions are left empty, each one's memory given back as its
    /// names are taken. Only once every thread has handed its names over.
    pub fn take_sorted(&self) -> Vec<Entry> {
        let total = self.parts.iter().map(|p| lock(p).recs.len()).sum();
        let mut entries = Vec::with_capacity(total);
        for part in &self.parts {
            let Part { recs, names } = std::mem::take(&mut *lock(part));
            let mut recs: Vec<Rec> = recs.into_iter().collect();
            recs.sort_unstable_by(|a, b| a.name(&names).cmp(b.name(&names)));
            entries.extend(recs.iter().map(|r| Entry {
                name: RawName::from_slice(r.name(&names)),
                stats: r.stats(),
                first: NO_OFFSET,
            }));
        }
        entries
    }
}

impl Part {
    /// Folds `stats` into the record of `name`, whose hash is `hash`.
    fn fold(&mut self, key: &SeedableRandomState, name: &[u8], hash: u64, stats: &Stats) {
        let Part { recs, names } = self;
        if let Some(r) = recs.find_mut(hash, |r| r.name(names) == name) {
            let from = (stats.sum, stats.count, stats.min, stats.max);
            super::fold(&mut r.sum, &mut r.count, &mut r.min, &mut r.max, from);
            return;
        }
        let rec = Rec {
            at: names.len(),
            sum: stats.sum,
            count: stats.count,
            min: stats.min,
            max: stats.max,
            len: name.len() as u8,
        };
        names.extend_from_slice(name);
        recs.insert_unique(hash, rec, |r| key.hash_one(r.name(names)));
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
        // Every staged row counted once into the expected stats.
        let mut want: BTreeMap<Vec<u8>, Stats> = BTreeMap::new();
        for (name, value) in per_thread.into_iter().flatten() {
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
        // Taken out: the partitions are empty.
        assert!(parts.take_sorted().is_empty());
    }

    #[test]
    fn splitters_cut_the_first_names_into_even_partitions() {
        let parts = Partitions::default();
        let mut staging = Staging::default();
        for k in 0..PARTITIONS * 100 {
            staging.push(
                format!("{:08}", k * 7919 % 100_000).as_bytes(),
                Stats::new(0),
            );
        }
        parts.hand_off(&mut staging);
        let sizes: Vec<usize> = parts.parts.iter().map(|p| lock(p).recs.len()).collect();
        assert!(sizes.iter().all(|&n| (90..=110).contains(&n)), "{sizes:?}");
        // Prefixes keep the names' order.
        assert!(prefix(b"ab") <= prefix(b"ab\0"));
        assert!(prefix(b"ab") < prefix(b"abc"));
        assert!(prefix(b"abcdefgh-z") == prefix(b"abcdefgh"));
    }
}

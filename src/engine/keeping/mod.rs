//! The accumulator of text runs whose stations keep more than the basic
//! stats: a sum of squares (the standard deviations, on any engine) or
//! counts per value (the median and percentiles, on `chunked`; on the
//! fast engines, the rows [`super::counted`] leaves to it).
//!
//! The fast engines' tables hold a station's basic stats in their slots
//! and nothing more, so such runs take this loop: the `;` found by
//! `memchr`, the value parsed from one word by the scanner's parser
//! ([`crate::scan::parse_value`]), a name of up to 15 bytes compared as
//! two words, and each station in a vector that `hashbrown` tables index.
//! A line the quick path does not take (the last without its `\n`, a
//! malformed one) goes to the strict parser.
//!
//! A station keeps only what its statistics need ([`Keep`]): with counts
//! per value, those counts alone, every other stat derived from them when
//! the run ends. A million stations' counts are most of such a run's
//! memory, and the adds are fewer: a station's first values go to a chain
//! in its thread's [`Pool`], which the run's counts share at its end.

use std::hash::BuildHasher;
use std::sync::Arc;

use hashbrown::HashTable;

mod kept;

pub use kept::{Keep, Moments, Store, Tally};

use crate::bits;
use crate::detail::Pool;
use crate::engine::Accumulator;
use crate::error::Fault;
use crate::parse::{self, MAX_NAME_LEN};
use crate::scan::parse_value;
use crate::summary::Entry;
use crate::table::Name;

/// Names of at most this many bytes are keyed by two words: their bytes,
/// a `;` (which no name holds) and zeros.
const SHORT: usize = 15;

/// One station: its name, what it keeps, and the offset of the line it
/// was first seen on.
struct Station<K> {
    name: Name,
    kept: K,
    first: usize,
}

// A million stations with counts per value take 64 MB a thread.
const _: () = assert!(std::mem::size_of::<Station<Tally>>() <= 64);

/// Stations made entries between two shrinks of their vector
/// ([`Accumulator::into_sorted`]).
const BATCH: usize = 1 << 16;

/// How many rows behind its lookup a row is added: time for the cache
/// line it counts in (a window's bin) to come, which a table of thousands
/// of stations' windows mostly misses.
const LAG: usize = 8;

/// The rows a feed keeps [`LAG`] behind: each one's station and value,
/// the `n`th row at `n % LAG`.
struct Behind {
    rows: [(u32, i64); LAG],
    n: usize,
}

/// One thread's stations, each keeping `K`.
pub struct Keeping<K: Keep> {
    /// The stations, in the order they were first seen: a vector rather
    /// than the tables' own buckets, which a table keeps up to twice as
    /// many of as it holds.
    stations: Vec<Station<K>>,
    /// The stations of short names, by their key's hash.
    short: HashTable<u32>,
    /// The stations of longer names, by their bytes' hash.
    long: HashTable<u32>,
    hasher: foldhash::fast::RandomState,
    /// What the stations share.
    store: K::Store,
}

impl<K: Keep> Default for Keeping<K> {
    fn default() -> Keeping<K> {
        Keeping {
            stations: Vec::new(),
            short: HashTable::new(),
            long: HashTable::new(),
            hasher: Default::default(),
            store: Default::default(),
        }
    }
}

impl<K: Keep> Keeping<K> {
    /// The station of `name`, whose key words are `key` if it is short
    /// (its hash `hash`, by the key or else the name), if seen.
    #[inline(always)]
    fn find(&self, name: &[u8], key: Option<(u64, u64)>, hash: u64) -> Option<usize> {
        let stations = &self.stations;
        let at = match key {
            Some(key) => (self.short).find(hash, |&i| stations[i as usize].name.key() == Some(key)),
            None => self.long.find(
                hash,
                |&i| matches!(&stations[i as usize].name, Name::Long(n) if **n == *name),
            ),
        };
        at.map(|&i| i as usize)
    }

    /// The hash of a station's key, or of its name if it has none.
    #[inline(always)]
    fn hash(&self, name: &[u8], key: Option<(u64, u64)>) -> u64 {
        match key {
            Some(key) => self.hasher.hash_one(key),
            None => self.hasher.hash_one(name),
        }
    }

    /// Adds a row of `name`, whose key words are `key` if it is short,
    /// and whose line starts at `first`: a row whose add touches memory
    /// beyond its station ([`Keep::prefetch`]) [`LAG`] rows later, through
    /// `behind`, what it touches fetched meanwhile; any other at once.
    /// Inlined in the loop: as a call, it saved and restored registers on
    /// every row.
    ///
    /// Returns `false`, adding nothing, for a name holding a `\n`: two
    /// lines read as one, the first without its `;`. Only a new name is
    /// looked at, as no station holds one: a row of a known name costs no
    /// check.
    #[inline(always)]
    fn add(
        &mut self,
        behind: &mut Behind,
        name: &[u8],
        key: Option<(u64, u64)>,
        value: i64,
        first: usize,
    ) -> bool {
        let hash = self.hash(name, key);
        let Some(i) = self.find(name, key, hash) else {
            return self.add_new(name, key, value, first);
        };
        if !self.stations[i].kept.prefetch(value) {
            self.stations[i].kept.add(&mut self.store, value);
            return true;
        }
        let row = &mut behind.rows[behind.n % LAG];
        if behind.n >= LAG {
            self.stations[row.0 as usize]
                .kept
                .add(&mut self.store, row.1);
        }
        // `find` gave an index the tables hold, a `u32`.
        *row = (i as u32, value);
        behind.n += 1;
        true
    }

    /// Adds the rows still kept `behind`.
    fn catch_up(&mut self, behind: &Behind) {
        for k in behind.n.saturating_sub(LAG)..behind.n {
            let (i, value) = behind.rows[k % LAG];
            self.stations[i as usize].kept.add(&mut self.store, value);
        }
    }

    /// [`Accumulator::feed`], rows added through `behind`.
    fn feed_behind(
        &mut self,
        behind: &mut Behind,
        chunk: &[u8],
        offset: usize,
    ) -> Result<(), Fault> {
        let mut p = 0;
        while p < chunk.len() {
            // The quick path: a name, its `;` and a value with its `\n` in
            // the 8 bytes after it; the name checked for a `\n` (two lines
            // read as one) where it is new (`Keeping::add`).
            let (semi, key) = semicolon(chunk, p);
            if let Some(semi) = semi.filter(|&s| s > 0) {
                let at = p + semi + 1;
                if let Some((value, used)) = word(chunk, at).and_then(parse_value) {
                    if self.add(behind, &chunk[p..p + semi], key, value, offset + p) {
                        p = at + used;
                        continue;
                    }
                }
            }
            let (line, next) = parse::line_at(chunk, p);
            let (name, value) = parse::parse_line(line).map_err(|kind| Fault {
                offset: offset + p,
                kind,
            })?;
            let (_, key) = semicolon(chunk, p);
            // The strict parser's name ends at the line's end.
            let added = self.add(behind, name, key, value.into(), offset + p);
            debug_assert!(added);
            p = next;
        }
        Ok(())
    }

    /// Adds the first row of a station, whose line starts at `first`:
    /// `false`, adding nothing, if its name holds a `\n` (see
    /// [`Keeping::add`]).
    #[cold]
    #[inline(never)]
    fn add_new(&mut self, name: &[u8], key: Option<(u64, u64)>, value: i64, first: usize) -> bool {
        if name.contains(&b'\n') {
            return false;
        }
        let kept = K::new(&mut self.store, value);
        self.insert(Station {
            name: key.map_or_else(|| Name::Long(name.into()), Name::Short),
            kept,
            first,
        });
        true
    }

    /// Adds a station not seen before.
    #[cold]
    #[inline(never)]
    fn insert(&mut self, station: Station<K>) {
        let i = u32::try_from(self.stations.len()).expect("fewer than 2^32 stations");
        let hasher = &self.hasher;
        let stations = &self.stations;
        if let Some(key) = station.name.key() {
            let hash = hasher.hash_one(key);
            // The short table holds only short names.
            let rehash =
                |&j: &u32| hasher.hash_one(stations[j as usize].name.key().unwrap_or_default());
            self.short.insert_unique(hash, i, rehash);
        } else {
            let hash = station.name.with(|name| hasher.hash_one(name));
            let rehash = |&j: &u32| stations[j as usize].name.with(|name| hasher.hash_one(name));
            self.long.insert_unique(hash, i, rehash);
        }
        self.stations.push(station);
    }
}

impl<K: Keep> Keeping<K> {
    /// Adds a row of `name` at once: `false`, adding nothing, for a new
    /// name that is empty, holds a `\n` or is not UTF-8, which a caller
    /// that checks names itself ([`Accumulator::CHECKS_UTF8`]) refuses.
    pub(crate) fn add_row(&mut self, name: &[u8], value: i64) -> bool {
        let key = (name.len() <= SHORT).then(|| short_key(name));
        let hash = self.hash(name, key);
        if let Some(i) = self.find(name, key, hash) {
            self.stations[i].kept.add(&mut self.store, value);
            return true;
        }
        let checked = !name.is_empty() && simdutf8::basic::from_utf8(name).is_ok();
        checked && self.add_new(name, key, value, 0)
    }
}

/// The key words of a name of at most [`SHORT`] bytes: its bytes, its `;`
/// and zeros.
fn short_key(name: &[u8]) -> (u64, u64) {
    let mut bytes = [0u8; 16];
    bytes[..name.len()].copy_from_slice(name);
    bytes[name.len()] = b';';
    let half = |k: usize| u64::from_le_bytes(bytes[8 * k..8 * k + 8].try_into().expect("8"));
    (half(0), half(1))
}

impl Keeping<Tally> {
    /// The stations of a numbered table's names
    /// ([`Table::numbered`](crate::table::Table::numbered)): name `i`
    /// `named[i]` (the table's short keys are this loop's), its values
    /// `tallies[i]`, their chains in `pool`. Only folded into another
    /// ([`Accumulator::absorb`]): its tables index none of them.
    pub(crate) fn numbered(named: &[Name], tallies: Vec<Tally>, pool: Pool) -> Keeping<Tally> {
        debug_assert_eq!(named.len(), tallies.len());
        let stations = (named.iter().zip(tallies))
            .map(|(name, kept)| Station {
                name: name.clone(),
                kept,
                first: 0,
            })
            .collect();
        Keeping {
            stations,
            store: pool,
            ..Keeping::default()
        }
    }
}

/// The little-endian word of the 8 bytes at `at` of `chunk`, if there.
#[inline(always)]
fn word(chunk: &[u8], at: usize) -> Option<u64> {
    let bytes = chunk.get(at..at + 8)?;
    Some(u64::from_le_bytes(bytes.try_into().expect("8 bytes")))
}

/// Where the `;` of the line at `at` of `chunk` is, from `at`, and the key
/// words of its name if it has at most [`SHORT`] bytes: the 16 bytes from
/// `at`, those past the `;` cleared. The words are searched for the `;`
/// first; a longer name's, by `memchr` over the longest a name can be.
#[inline(always)]
fn semicolon(chunk: &[u8], at: usize) -> (Option<usize>, Option<(u64, u64)>) {
    // Bytes 0..n of a word, the rest cleared.
    let first = |n: u32| u64::MAX >> (64 - 8 * n);
    if let (Some(a), Some(b)) = (word(chunk, at), word(chunk, at + 8)) {
        let in_a = bits::matches(a, b';');
        if in_a != 0 {
            let i = in_a.trailing_zeros() / 8;
            return (Some(i as usize), Some((a & first(i + 1), 0)));
        }
        let in_b = bits::matches(b, b';');
        if in_b != 0 {
            let i = in_b.trailing_zeros() / 8;
            return (Some(8 + i as usize), Some((a, b & first(i + 1))));
        }
    }
    let rest = &chunk[at..];
    let semi = memchr::memchr(b';', &rest[..rest.len().min(MAX_NAME_LEN + 1)]);
    let key = semi.filter(|&s| s <= SHORT).map(|s| short_key(&rest[..s]));
    (semi, key)
}

impl<K: Keep + Send> Accumulator for Keeping<K> {
    type Shared = ();

    fn feed(&mut self, chunk: &[u8], offset: usize) -> Result<(), Fault> {
        let mut behind = Behind {
            rows: [(0, 0); LAG],
            n: 0,
        };
        let fed = self.feed_behind(&mut behind, chunk, offset);
        self.catch_up(&behind);
        fed
    }

    const ABSORBS: bool = true;

    /// Folds another thread's stations in, freeing each one's values as it
    /// goes, so that two threads' counts are not held twice over; the
    /// pages freed among the blocks kept go back to the system.
    fn absorb(&mut self, other: Self) {
        let by = self.store.append(other.store);
        for mut station in other.stations {
            station.kept.renumber(by);
            let key = station.name.key();
            let found = station
                .name
                .with(|name| self.find(name, key, self.hash(name, key)));
            match found {
                Some(i) => {
                    let mine = &mut self.stations[i];
                    mine.kept.absorb(&mut self.store, station.kept);
                    mine.first = mine.first.min(station.first);
                }
                None => self.insert(station),
            }
        }
        bits::trim_heap();
    }

    /// Entries are made from the last station back, the stations'
    /// vector shrunk every [`BATCH`], so that a million stations and their
    /// entries are not held at once.
    fn into_sorted(self) -> Vec<Entry> {
        let Keeping {
            mut stations,
            store,
            ..
        } = self;
        let store = Arc::new(store);
        stations.sort_unstable_by(|a, b| a.name.with(|x| b.name.with(|y| x.cmp(y))));
        let mut entries = Vec::with_capacity(stations.len());
        while !stations.is_empty() {
            let rest = stations.len().saturating_sub(BATCH);
            entries.extend(stations.drain(rest..).rev().map(|s| Entry {
                name: s.name.into_raw(),
                stats: s.kept.into_stats(&store),
                first: s.first,
            }));
            stations.shrink_to_fit();
        }
        entries.reverse();
        entries
    }
}

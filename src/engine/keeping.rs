//! The accumulator of text runs whose stations keep more than the basic
//! stats: a sum of squares (the standard deviations) or counts per value
//! (the median and percentiles), whatever engine was named.
//!
//! The fast engines' tables hold a station's basic stats in their slots
//! and nothing more, so such runs take this loop: the `;` found by
//! `memchr`, the value parsed from one word by the scanner's parser
//! ([`crate::scan::parse_value`]), a name of up to 15 bytes compared as
//! two words, and each station's stats, detail and all, in a vector the
//! `hashbrown` tables index. A line the quick path does not take (the
//! last without its `\n`, a malformed one) goes to the strict parser.

use std::hash::BuildHasher;

use hashbrown::HashTable;

use crate::bits;
use crate::detail::Detail;
use crate::engine::Accumulator;
use crate::error::Fault;
use crate::parse::{self, MAX_NAME_LEN};
use crate::scan::parse_value;
use crate::stats::Stats;
use crate::summary::{Entry, RawName};

/// Names of at most this many bytes are keyed by two words: their bytes,
/// a `;` (which no name holds) and zeros.
const SHORT: usize = 15;

/// One station: its key words (short names), its name, its stats with
/// what they keep, and the offset of the line it was first seen on.
struct Station {
    key: (u64, u64),
    name: RawName,
    /// The basic stats, and the detail beside them rather than boxed in
    /// them until the run ends: a row's add waits on one load fewer.
    stats: Stats,
    detail: Detail,
    first: usize,
}

/// One thread's stations, each keeping its sum of squares and, if
/// `COUNTS`, its counts per value.
#[derive(Default)]
pub struct Keeping<const COUNTS: bool> {
    /// The stations of short names, by their key's hash.
    short: HashTable<Station>,
    /// The stations of longer names, by their bytes' hash.
    long: HashTable<Station>,
    hasher: foldhash::fast::RandomState,
}

impl<const COUNTS: bool> Keeping<COUNTS> {
    /// Adds a row of `name`, whose key words are `key` if it is short,
    /// and whose line starts at `first`. Inlined in the loop: as a call,
    /// it saved and restored registers on every row.
    #[inline(always)]
    fn add(&mut self, name: &[u8], key: Option<(u64, u64)>, value: i64, first: usize) {
        let (table, hash) = match key {
            Some(key) => (&mut self.short, self.hasher.hash_one(key)),
            None => (&mut self.long, self.hasher.hash_one(name)),
        };
        let found = match key {
            Some(key) => table.find_mut(hash, |s| s.key == key),
            None => table.find_mut(hash, |s| *s.name == *name),
        };
        match found {
            Some(s) => {
                s.stats.add(value);
                s.detail.add(value);
            }
            None => self.insert(name, key, hash, value, first),
        }
    }

    #[cold]
    #[inline(never)]
    fn insert(
        &mut self,
        name: &[u8],
        key: Option<(u64, u64)>,
        hash: u64,
        value: i64,
        first: usize,
    ) {
        let station = Station {
            key: key.unwrap_or_default(),
            name: RawName::from_slice(name),
            stats: Stats::new(value),
            detail: {
                let mut detail = Detail::new(COUNTS);
                detail.add(value);
                detail
            },
            first,
        };
        let hasher = &self.hasher;
        match key {
            Some(_) => self
                .short
                .insert_unique(hash, station, |s| hasher.hash_one(s.key)),
            None => self
                .long
                .insert_unique(hash, station, |s| hasher.hash_one(&*s.name)),
        };
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
    let key = semi.filter(|&s| s <= SHORT).map(|s| {
        let mut bytes = [0u8; 16];
        bytes[..=s].copy_from_slice(&rest[..=s]);
        let half = |k: usize| u64::from_le_bytes(bytes[8 * k..8 * k + 8].try_into().expect("8"));
        (half(0), half(1))
    });
    (semi, key)
}

impl<const COUNTS: bool> Accumulator for Keeping<COUNTS> {
    type Shared = ();

    fn feed(&mut self, chunk: &[u8], offset: usize) -> Result<(), Fault> {
        let mut p = 0;
        while p < chunk.len() {
            // The quick path: a name without a `\n` (else two lines were
            // read as one), its `;` and a value with its `\n` in the 8
            // bytes after it.
            let (semi, key) = semicolon(chunk, p);
            let one_line = |semi: &usize| match key {
                Some((a, b)) => bits::matches(a, b'\n') | bits::matches(b, b'\n') == 0,
                None => memchr::memchr(b'\n', &chunk[p..p + semi]).is_none(),
            };
            if let Some(semi) = semi.filter(|&s| s > 0).filter(one_line) {
                let at = p + semi + 1;
                if let Some((value, used)) = word(chunk, at).and_then(parse_value) {
                    self.add(&chunk[p..p + semi], key, value, offset + p);
                    p = at + used;
                    continue;
                }
            }
            let (line, next) = parse::line_at(chunk, p);
            let (name, value) = parse::parse_line(line).map_err(|kind| Fault {
                offset: offset + p,
                kind,
            })?;
            let (_, key) = semicolon(chunk, p);
            self.add(name, key, value.into(), offset + p);
            p = next;
        }
        Ok(())
    }

    fn into_sorted(self) -> Vec<Entry> {
        let mut entries: Vec<Entry> = (self.short.into_iter().chain(self.long))
            .map(|s| Entry {
                name: s.name,
                stats: Stats {
                    detail: Some(Box::new(s.detail)),
                    ..s.stats
                },
                first: s.first,
            })
            .collect();
        entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        entries
    }
}

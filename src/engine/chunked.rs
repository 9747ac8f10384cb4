//! The `chunked` engine: the first fast step, built from libraries.
//!
//! Bytes instead of strings, `memchr` to find line ends, the strict parser,
//! and a `hashbrown::HashTable` keyed by a foldhash of the name, one per
//! thread. It is the baseline the hand-written [`fast`](super) engine must
//! beat.

use std::hash::BuildHasher;

use hashbrown::HashTable;

use crate::engine::Accumulator;
use crate::error::Fault;
use crate::parse;
use crate::stats::Stats;
use crate::summary::{self, RawName};

/// One name in the table: its hash, bytes, stats, and the offset of the
/// line it was first seen on.
struct Bucket {
    hash: u64,
    name: Box<[u8]>,
    stats: Stats,
    first: usize,
}

/// One thread's stations, in a foldhash-keyed `HashTable`.
#[derive(Default)]
pub struct Chunked {
    table: HashTable<Bucket>,
    hasher: foldhash::fast::FixedState,
}

impl Chunked {
    fn add(&mut self, hash: u64, name: &[u8], stats: Stats, first: usize) {
        let found = self
            .table
            .find_mut(hash, |e| e.hash == hash && &*e.name == name);
        match found {
            Some(e) => {
                e.stats.merge(&stats);
                e.first = e.first.min(first);
            }
            None => {
                let bucket = Bucket {
                    hash,
                    name: name.into(),
                    stats,
                    first,
                };
                self.table.insert_unique(hash, bucket, |e| e.hash);
            }
        }
    }
}

impl Accumulator for Chunked {
    type Shared = ();

    fn feed(&mut self, chunk: &[u8], offset: usize) -> Result<(), Fault> {
        for (start, line) in parse::lines(chunk) {
            let (name, value) = parse::parse_line(line).map_err(|kind| Fault {
                offset: offset + start,
                kind,
            })?;
            let hash = self.hasher.hash_one(name);
            match self
                .table
                .find_mut(hash, |e| e.hash == hash && &*e.name == name)
            {
                Some(e) => e.stats.add(value),
                None => self.add(hash, name, Stats::new(value), offset + start),
            }
        }
        Ok(())
    }

    fn into_sorted(self) -> Vec<summary::Entry> {
        let mut entries: Vec<_> = (self.table.into_iter())
            .map(|e| summary::Entry {
                name: RawName::from_slice(&e.name),
                stats: e.stats,
                first: e.first,
            })
            .collect();
        entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        entries
    }
}

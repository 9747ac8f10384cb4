//! The engines: interchangeable ways of turning an input into a
//! [`Summary`](crate::Summary).
//!
//! They form a ladder from obviously correct to fast, and all of them give
//! the same answer and the same error on every input:
//!
//! - [`naive`]: one thread, a `HashMap<String, Stats>`, the strict parser on
//!   every line. The oracle the other engines are tested against.
//! - [`chunked`]: bytes instead of strings, `memchr` line splitting, a
//!   foldhash-keyed `hashbrown::HashTable`, and the file split into
//!   line-aligned chunks handed to threads through one queue.
//! - [`keeping`]: not an engine to name but the loop of runs whose
//!   stations keep more than the basic stats (`--stats` with a standard
//!   deviation, the median or a percentile), under any engine but `naive`.
//! - [`fast`] (the default): the same driver with the hand-written scanner
//!   of [`crate::scan`] (AVX2 where the CPU has it) and the hand-written
//!   [`crate::table::Table`]; `swar` is the same with the portable kernel.
//!
//! An engine above `naive` is its per-thread state, an [`Accumulator`]:
//! the drivers of [`crate::driver`] feed each thread's accumulator its
//! share of the input, and merge what the accumulators hold in the end.

pub(crate) mod chunked;
mod config;
pub(crate) mod counted;
pub(crate) mod fast;
pub(crate) mod keeping;
pub(crate) mod naive;

use std::sync::Arc;

pub use self::config::{Engine, Options, MAX_THREADS};
use crate::detail::Kept;
use crate::error::Fault;
use crate::summary::Entry;

/// Per-thread state of a parallel engine: what it has aggregated so far.
pub trait Accumulator: Default + Send {
    /// What the accumulators of one run share: the fast engines' partitions
    /// (docs/PERFORMANCE.md, *Memory*); `()` for an engine whose threads
    /// share nothing.
    type Shared: Default + Send + Sync;

    /// A new accumulator for a run whose accumulators share `shared`.
    fn sharing(shared: &Arc<Self::Shared>) -> Self {
        let _ = shared;
        Self::default()
    }

    /// Aggregates `chunk`, which starts at a line start at byte `offset` of
    /// the input and ends after a `\n` or at the end of the input. Stops at
    /// the first malformed line and reports it.
    ///
    /// No more than [`HEAD_LEN`](crate::parse::HEAD_LEN) bytes of a line
    /// are read ([`parse::line_at`](crate::parse::line_at)), so a line
    /// longer than that with no `;` in them is reported as having none:
    /// the driver finishes that verdict (`driver::judge::judge_whole`).
    fn feed(&mut self, chunk: &[u8], offset: usize) -> Result<(), Fault>;

    /// Whether `feed` itself reports a name that is not UTF-8 as a fault
    /// at its line, so that a caller holding the chunk need not check it.
    const CHECKS_UTF8: bool = false;

    /// The distinct raw names sorted by their bytes, each with its stats
    /// and, for any name that
    /// [`Summary::from_entries`](crate::Summary::from_entries) would refuse,
    /// the offset of the first line it appeared on ([`Entry`]; an engine
    /// that refuses such names in `feed`, at their first line, keeps none).
    ///
    /// Unless the accumulators fold ([`Accumulator::ABSORBS`]), each thread
    /// sorts its own, so the threads sort side by side, and
    /// [`merge_runs`](crate::summary::merge_runs) then folds the runs together in one pass.
    fn into_sorted(self) -> Vec<Entry>;

    /// Whether [`Accumulator::absorb`] folds one accumulator into another
    /// more cheaply than both can be sorted and merged, so that a run's
    /// threads fold their accumulators into one and sort once. The fast
    /// engines' tables do: both place a name by the same hash (unless one
    /// has reseeded), so one is walked in slot order into the other, and
    /// their radix sort is the costly part. A fold that probed the other table at random, followed
    /// by a comparison sort, cost more than the two sorts
    /// (docs/PERFORMANCE.md, *The tables*); `chunked` keeps those sorts.
    /// `keeping` folds for its memory: each of the other thread's
    /// stations is freed as it is folded in, where sorting both threads'
    /// stations and merging them held every key's counts twice over.
    const ABSORBS: bool = false;

    /// Adds `other`'s stations to these.
    ///
    /// # Panics
    /// If the accumulators do not fold ([`Accumulator::ABSORBS`] is
    /// `false`), the default.
    fn absorb(&mut self, other: Self) {
        let _ = other;
        panic!("absorb called on an accumulator that does not fold");
    }
}

/// Work that depends on the engine's types: the naive engine, or a
/// parallel engine's [`Accumulator`]. Each kind of input (bytes in memory,
/// a mapped file, a stream) implements it once, and [`Engine::run`] holds
/// the one `match` from engine names to types.
pub trait Job {
    /// What the work produces.
    type Output;
    /// Does the work with the naive engine.
    fn naive(self) -> Self::Output;
    /// Does the work with the parallel engine whose per-thread state is `A`.
    fn parallel<A: Accumulator>(self) -> Self::Output;
    /// What each key must keep ([`Kept`]): beyond the basic stats, the
    /// work is done by `naive`, [`counted`] or [`keeping`].
    fn kept(&self) -> Kept {
        Kept::Basic
    }
}

impl Engine {
    /// Does `job` with this engine.
    ///
    /// A job whose keys keep counts per value runs on `naive`, on the
    /// fast engines' feeds with their log ([`counted`]), or on
    /// [`keeping`]; one whose keys keep sums of squares on `naive` or
    /// [`keeping`]: the fast engines' tables hold a key's basic stats in
    /// their slots and nothing more.
    pub fn run<J: Job>(self, job: J) -> J::Output {
        match (self, job.kept()) {
            (Engine::Naive, _) => job.naive(),
            (_, Kept::Squares) => job.parallel::<keeping::Keeping<keeping::Moments>>(),
            (Engine::Swar, Kept::Counts) => job.parallel::<fast::SwarCounted>(),
            (Engine::Fast, Kept::Counts) => job.parallel::<fast::FastCounted>(),
            (_, Kept::Counts) => job.parallel::<keeping::Keeping<keeping::Tally>>(),
            (Engine::Chunked, Kept::Basic) => job.parallel::<chunked::Chunked>(),
            (Engine::Swar, Kept::Basic) => job.parallel::<fast::SwarEngine>(),
            (Engine::Fast, Kept::Basic) => job.parallel::<fast::Fast>(),
        }
    }
}

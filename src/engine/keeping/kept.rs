//! What a station of the keeping loop keeps of its values ([`Keep`]):
//! the basic stats and a sum of squares ([`Moments`]), or counts per value
//! ([`Tally`]), with what a thread's stations share ([`Store`]).

use std::sync::Arc;

use crate::bits;
use crate::detail::{Chain, Counts, Detail, Pool, Squares, RAW};
use crate::stats::Stats;

/// What a station keeps of its values while rows arrive, with what its
/// thread's stations share ([`Keep::Store`]).
pub trait Keep: Sized {
    /// What a thread's stations share.
    type Store: Store;
    /// What one value keeps.
    fn new(store: &mut Self::Store, value: i64) -> Self;
    /// Adds a value.
    fn add(&mut self, store: &mut Self::Store, value: i64);
    /// Folds in another thread's, for the same station, its store moved
    /// into this one's by [`Store::append`] and renumbered.
    fn absorb(&mut self, store: &mut Self::Store, other: Self);
    /// This station's part of a store moved by [`Store::append`], which
    /// returned `by`.
    fn renumber(&mut self, _by: u32) {}
    /// The station's stats, with what they keep.
    fn into_stats(self, store: &Arc<Self::Store>) -> Stats;
    /// Starts loading what adding `value` touches beyond the station;
    /// `false` if it does not, and the value is best added at once.
    #[inline(always)]
    fn prefetch(&self, _value: i64) -> bool {
        false
    }
}

/// What a thread's stations share.
pub trait Store: Default + Send + Sync {
    /// Moves `other` in; returns what renumbers its stations
    /// ([`Keep::renumber`]).
    fn append(&mut self, other: Self) -> u32;
}

/// Nothing shared.
impl Store for () {
    fn append(&mut self, _other: ()) -> u32 {
        0
    }
}

impl Store for Pool {
    fn append(&mut self, other: Pool) -> u32 {
        Pool::append(self, other)
    }
}

/// The basic stats and the sum of squares: the standard deviations.
pub struct Moments {
    stats: Stats,
    squares: Squares,
}

impl Keep for Moments {
    type Store = ();

    fn new(_: &mut (), value: i64) -> Moments {
        let mut squares = Squares::default();
        squares.add(value.unsigned_abs().into(), 1);
        Moments {
            stats: Stats::new(value),
            squares,
        }
    }

    #[inline(always)]
    fn add(&mut self, _: &mut (), value: i64) {
        self.stats.add(value);
        self.squares.add(value.unsigned_abs().into(), 1);
    }

    fn absorb(&mut self, _: &mut (), other: Moments) {
        self.stats.merge(&other.stats);
        self.squares.merge(&other.squares);
    }

    fn into_stats(self, _: &Arc<()>) -> Stats {
        let detail = Detail {
            squares: self.squares,
            counts: None,
        };
        Stats {
            detail: Some(Box::new(detail)),
            ..self.stats
        }
    }
}

/// Counts per value: a station's first [`RAW`] values in a chain of its
/// thread's pool, then counts of their own. None by default.
pub enum Tally {
    /// Up to [`RAW`] values, in the thread's pool.
    Chain(Chain),
    /// More, counted.
    Counts(Counts),
}

impl Tally {
    /// The counts of what this chain holds and `value`, its blocks given
    /// back.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, pool: &mut Pool, value: i64) {
        if let Tally::Chain(chain) = *self {
            let mut counts = Counts::default();
            count_into(&mut counts, chain, pool);
            *self = Tally::Counts(counts);
        }
        self.add(pool, value);
    }
}

/// Adds the values `chain` holds to `counts`, its blocks given back.
fn count_into(counts: &mut Counts, chain: Chain, pool: &mut Pool) {
    chain.visit(pool, |v| counts.add(v, 1));
    chain.free(pool);
}

impl Default for Tally {
    fn default() -> Tally {
        Tally::Chain(Chain::default())
    }
}

impl Keep for Tally {
    type Store = Pool;

    fn new(pool: &mut Pool, value: i64) -> Tally {
        let mut tally = Tally::default();
        tally.add(pool, value);
        tally
    }

    #[inline(always)]
    fn add(&mut self, pool: &mut Pool, value: i64) {
        match self {
            Tally::Counts(counts) => counts.add(value, 1),
            Tally::Chain(chain) => {
                if (chain.len() as usize) < RAW && chain.push(pool, value) {
                    return;
                }
                self.grow(pool, value)
            }
        }
    }

    fn absorb(&mut self, pool: &mut Pool, other: Tally) {
        match (&mut *self, other) {
            (Tally::Chain(a), Tally::Chain(b)) if a.len() as usize + b.len() as usize <= RAW => {
                a.splice(pool, b)
            }
            (Tally::Counts(a), Tally::Counts(b)) => a.merge(&b),
            (_, other) => {
                let mut counts = match std::mem::take(self) {
                    Tally::Counts(counts) => counts,
                    Tally::Chain(chain) => {
                        let mut counts = Counts::default();
                        count_into(&mut counts, chain, pool);
                        counts
                    }
                };
                match other {
                    Tally::Counts(other) => counts.merge(&other),
                    Tally::Chain(chain) => count_into(&mut counts, chain, pool),
                }
                *self = Tally::Counts(counts);
            }
        }
    }

    fn renumber(&mut self, by: u32) {
        if let Tally::Chain(chain) = self {
            chain.renumber(by);
        }
    }

    /// A window's bin, which a table of thousands of stations' windows
    /// mostly misses; a station's first values, in a chain, gained
    /// nothing by it (10^6 names).
    #[inline(always)]
    fn prefetch(&self, value: i64) -> bool {
        let Tally::Counts(counts) = self else {
            return false;
        };
        counts
            .bin(value)
            .inspect(|&b| bits::prefetch::<true, _>(b))
            .is_some()
    }

    fn into_stats(self, pool: &Arc<Pool>) -> Stats {
        Stats::of_counts(match self {
            Tally::Chain(chain) => Counts::pooled(pool.clone(), chain),
            Tally::Counts(counts) => counts,
        })
    }
}

//! Where a flooded table's names go: a map whose hash is keyed by random
//! seeds, drawn from the operating system's randomness for each run.
//!
//! The fast tables' hashes start fixed, and sets of names that share one
//! are easy to build from the source; linear probing then walks the whole
//! set for every row. A short table reseeds once under a drawn multiplier,
//! which names sharing the whole multiplied word defeat too. A table that has spent its probe steps
//! ([`Budget`](super::Budget)), the short table twice (it reseeds the
//! first time), moves its names here, and its rows follow:
//! names chosen without the seeds, which the input cannot know, collide
//! here no more than random names do (docs/PERFORMANCE.md, *The tables*).

use std::hash::{BuildHasher, Hash, RandomState};
use std::sync::OnceLock;

use foldhash::fast::SeedableRandomState;
use foldhash::SharedSeed;
use hashbrown::{hash_table, HashTable};

use crate::stats::Stats;
use crate::summary::{Entry, RawName};

/// What a keyed map holds for each key: the key and what its rows add up
/// to, in the form its table keeps them (the short table's own slot, so
/// that a flooded row touches one half cache line, as a row in the table
/// does).
pub(super) trait Held {
    /// How a row names its key: what is hashed to find it.
    type Key: ?Sized + Hash;
    /// What a row adds.
    type Row: Copy;
    /// The key it holds, hashed as [`Held::Key`] is.
    fn hash(&self, state: &SeedableRandomState) -> u64;
    /// Whether it holds `key`.
    fn is(&self, key: &Self::Key) -> bool;
    /// Counts a row.
    fn add(&mut self, row: Self::Row);
    /// Folds in `other`'s rows, of the same key.
    fn fold(&mut self, other: &Self);
    /// Its rows' stats.
    fn stats(&self) -> Stats;
}

/// A map from a table's keys to their rows' stats, held as `T`:
/// `hashbrown`'s table under foldhash, seeded at random. Foldhash lets no
/// list of inputs collide under every seed, and its seeds can be learnt
/// only by watching its hashes at work, which an input cannot do: brc
/// reads it once, with seeds drawn afterwards, and prints nothing in an
/// order they decide. SipHash-1-3, the standard library's keyed hash,
/// which also resists attackers who watch, made a flooded table's rows
/// several times slower than random names' (docs/PERFORMANCE.md, *The
/// tables*).
#[derive(Clone)]
pub(super) struct Keyed<T> {
    table: HashTable<T>,
    key: SeedableRandomState,
}

/// 64 random bits: a hash under the keys that the standard library's
/// `RandomState` draws from the operating system.
pub(super) fn random() -> u64 {
    RandomState::new().hash_one(0u64)
}

/// A foldhash state under seeds of its own and the process's: what a
/// keyed table hashes with, and the partitions ([`super::partition`]).
pub(super) fn random_state() -> SeedableRandomState {
    static SHARED: OnceLock<SharedSeed> = OnceLock::new();
    let shared = SHARED.get_or_init(|| SharedSeed::from_u64(random()));
    SeedableRandomState::with_seed(random(), shared)
}

impl<T: Held> Keyed<T> {
    /// An empty map with room for `n` keys, under seeds of its own and the
    /// process's.
    pub(super) fn with_capacity(n: usize) -> Keyed<T> {
        Keyed {
            table: HashTable::with_capacity(n),
            key: random_state(),
        }
    }

    /// Number of keys.
    pub(super) fn len(&self) -> usize {
        self.table.len()
    }

    /// What the map holds for `key`, if anything.
    #[inline(always)]
    pub(super) fn get_mut(&mut self, key: &T::Key) -> Option<&mut T> {
        let hash = self.key.hash_one(key);
        self.table.find_mut(hash, |held| held.is(key))
    }

    /// Inserts `held`, whose key `key` the map does not hold.
    pub(super) fn insert(&mut self, key: &T::Key, held: T) {
        let hash = self.key.hash_one(key);
        let state = &self.key;
        (self.table).insert_unique(hash, held, |h| h.hash(state));
    }

    /// Counts a row of `key`, and gives what holds it; a key not yet held
    /// is inserted as `new` makes it, holding the row, or the row refused
    /// (`None`) if `new` gives none.
    #[inline(always)]
    pub(super) fn add(
        &mut self,
        key: &T::Key,
        row: T::Row,
        new: impl FnOnce() -> Option<T>,
    ) -> Option<&T> {
        let hash = self.key.hash_one(key);
        let state = &self.key;
        match (self.table).entry(hash, |held| held.is(key), |h| h.hash(state)) {
            hash_table::Entry::Occupied(held) => {
                let held = held.into_mut();
                held.add(row);
                Some(held)
            }
            hash_table::Entry::Vacant(place) => Some(place.insert(new()?).into_mut()),
        }
    }

    /// Folds `held`, whose key is `key`, into what the map holds for it,
    /// as when tables are folded into one.
    pub(super) fn fold(&mut self, key: &T::Key, held: T) {
        match self.get_mut(key) {
            Some(h) => h.fold(&held),
            None => self.insert(key, held),
        }
    }

    /// Takes every key out with its stats, in no order.
    pub(super) fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        self.table.drain()
    }

    /// Every key's name, as `name` gives it, with its stats, sorted by
    /// the name's bytes.
    pub(super) fn into_sorted(self, name: impl Fn(&T) -> RawName) -> Vec<Entry> {
        let mut entries: Vec<Entry> = (self.table.iter())
            .map(|held| Entry {
                name: name(held),
                stats: held.stats(),
                first: super::NO_OFFSET,
            })
            .collect();
        entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        entries
    }
}

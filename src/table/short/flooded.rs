//! A short table out of probe steps: reseeded under a drawn multiplier, and
//! if it runs out again, flooded: its names past the slot after their
//! home, where the hot loop does not look, in a keyed table ([`Keyed`])
//! under a seeded hash, and the rows that miss the loop's two slots sent
//! there (docs/PERFORMANCE.md, *The tables*).

use std::hash::BuildHasher;

use bytemuck::Zeroable;
use foldhash::fast::SeedableRandomState;

use super::{acceptable, Short, Slot};
use crate::stats::Stats;
use crate::table::keyed::{Held, Keyed};
use crate::table::name::number;
use crate::table::Name;

/// A flooded table keeps its slots as they are: a row touches half a
/// cache line there too, where a key and [`Stats`] took more than one.
impl Held for Slot {
    type Key = (u64, u64);
    type Row = i64;

    fn hash(&self, state: &SeedableRandomState) -> u64 {
        state.hash_one((self.a, self.b))
    }

    #[inline(always)]
    fn is(&self, &(a, b): &(u64, u64)) -> bool {
        self.a == a && self.b == b
    }

    #[inline(always)]
    fn add(&mut self, total: i64) {
        Slot::add(self, total);
    }

    fn fold(&mut self, other: &Slot) {
        Slot::fold(self, other);
    }

    fn stats(&self) -> Stats {
        Slot::stats(self)
    }
}

impl Short {
    /// What a table out of probe steps does. The first time, it reseeds
    /// ([`Short::reseed`]). Reseeded, it moves every name held past the
    /// slot after its home to a keyed table, for good, and sends there,
    /// from then on, every new name whose home slot and the next are
    /// taken. The hot loop, which looks at those two slots, takes the rows
    /// of the names left in them as before; the others miss both, which
    /// sends them out of the loop and on to the keyed table
    /// ([`Short::add_keyed`]), with no new branch on the hot path. A table
    /// whose names merely crowd some home slots thus keeps most of its rows
    /// in the loop. Does nothing to a flooded table.
    #[cold]
    #[inline(never)]
    pub(in crate::table) fn flood(&mut self) {
        if self.is_flooded() {
            return;
        }
        if !self.is_reseeded() {
            self.reseed();
            return;
        }
        self.budget.forfeit();
        self.keyed = Some(Keyed::with_capacity(self.len));
        self.spill();
    }

    /// Moves every name to a table of as many slots hashing by a multiplier
    /// drawn at random, with a new allowance of probe steps and two more a
    /// name for the moves: random names, at most half filling the slots,
    /// take fewer than one each. Names built to share the fixed hash, or
    /// only its top bits, spread under a drawn multiplier as random names
    /// do, the input not knowing it, and their rows stay in the hot loop.
    /// Names that share the whole word the hash multiplies share every
    /// multiplier's hash: they spend the new steps, moves included, and the
    /// table floods.
    fn reseed(&mut self) {
        let mut fresh = Short::with_slots(self.slots.len());
        // The names keep their numbers, in their slots.
        fresh.mul = super::drawn();
        fresh.budget.join(self.budget);
        fresh.budget.grant(2 * self.len as u64);
        fresh.absorb(self);
        *self = fresh;
    }

    /// The home slot of the key `a`, `b` and the slot after it: where the
    /// hot loop looks.
    fn near(&self, a: u64, b: u64) -> [usize; 2] {
        let i = self.home(a, b);
        [i, (i + 1) & (self.slots.len() - 1)]
    }

    /// In a flooded table, moves every name held past the slot after its
    /// home to the keyed table ([`Short::flood`]).
    pub(super) fn spill(&mut self) {
        let Some(mut keyed) = self.keyed.take() else {
            return;
        };
        for i in 0..self.slots.len() {
            let s = self.slots[i];
            if s.a | s.b != 0 && !self.near(s.a, s.b).contains(&i) {
                keyed.insert(&(s.a, s.b), s);
                self.slots[i] = Slot::zeroed();
                self.len -= 1;
            }
        }
        self.keyed = Some(keyed);
    }

    /// Adds a row of the key `a`, `b`, given as its [`total`], to a flooded
    /// table's keyed table, if it holds the key, giving its number
    /// ([`Slot::id`]): `None`, adding nothing, if not. The key is in neither its home slot nor the next (every
    /// caller has looked).
    #[inline(always)]
    pub(in crate::table) fn add_keyed(&mut self, a: u64, b: u64, total: i64) -> Option<u32> {
        debug_assert!(self
            .near(a, b)
            .iter()
            .all(|&i| (self.slots[i].a, self.slots[i].b) != (a, b)));
        let keyed = self.keyed.as_mut().expect("flooded");
        match keyed.get_mut(&(a, b)) {
            Some(s) => {
                s.add(total);
                Some(s.id)
            }
            None => None,
        }
    }

    /// Adds the first row of the key `a`, `b`, given as its [`total`], to
    /// a flooded table ([`Short::put`]), giving its number; `None`, adding
    /// nothing, for a name [`super::acceptable`] refuses. The table may grow.
    #[cold]
    #[inline(never)]
    pub(in crate::table) fn insert_flooded(
        &mut self,
        a: u64,
        b: u64,
        total: i64,
        named: &mut Option<Vec<Name>>,
    ) -> Option<u32> {
        if !acceptable(a, b) {
            return None;
        }
        let id = number(named, || Name::Short((a, b)));
        self.put(Slot::new(a, b, id, total));
        Some(id)
    }

    /// Folds another table's slot `s` into a flooded table.
    pub(super) fn fold_flooded(&mut self, s: &Slot) {
        for i in self.near(s.a, s.b) {
            let t = &mut self.slots[i];
            if t.a == s.a && t.b == s.b {
                t.fold(s);
                return;
            }
        }
        let keyed = self.keyed.as_mut().expect("flooded");
        match keyed.get_mut(&(s.a, s.b)) {
            Some(t) => t.fold(s),
            None => self.put(*s),
        }
    }

    /// Puts a name new to a flooded table into its home slot or the next,
    /// where the hot loop finds it, if one is empty, or else into the keyed
    /// table.
    fn put(&mut self, s: Slot) {
        for i in self.near(s.a, s.b) {
            if self.slots[i].a | self.slots[i].b == 0 {
                self.fill(i, s);
                return;
            }
        }
        let keyed = self.keyed.as_mut().expect("flooded");
        keyed.insert(&(s.a, s.b), s);
    }
}

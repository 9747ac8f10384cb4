//! Many keys' first values in one thread's pool of small blocks
//! ([`Pool`]), each key's values a chain of blocks ([`Chain`]): what a
//! thread keeps of a million keys seen a few dozen times each.
//!
//! Why not a vector per key: keys grow in step, and each vector grown
//! leaves its smaller block behind, which no other key, already past that
//! size, takes again; a million keys' values then took more than half as
//! much again as their bytes. A block here is never moved: a chain grows
//! by a block at a time, a chain given up returns its blocks to the pool's
//! own list for the next chain to take, and the fold of two threads'
//! pools moves whole slabs and splices chains. Values are packed in 11
//! bits, which the challenge's tenths (`-999..=999`) need.

/// Bits a value takes in a block.
const BITS: u32 = 11;

/// What is added to a value to pack it: the packed values are
/// `0..2^BITS`, the values `-OFFSET..2^BITS - OFFSET`.
const OFFSET: i64 = 1 << (BITS - 1);

/// Values in a block: its first word links the next block, the other
/// seven hold 224 bits.
pub const PER_BLOCK: u32 = 224 / BITS;

/// Blocks in a slab, the unit the pool grows by: 1 MiB.
const SLAB: usize = 1 << 15;

/// No block: the end of a chain or of the pool's list of free blocks.
const NONE: u32 = u32::MAX;

/// A block: the next block's index in word 0, then [`PER_BLOCK`] values
/// of [`BITS`] each.
#[derive(Clone, Copy, Default)]
struct Block([u32; 8]);

impl Block {
    /// The packed value at `k`.
    #[inline]
    fn get(&self, k: u32) -> u32 {
        let p = 32 + BITS * k;
        let (w, s) = ((p / 32) as usize, p % 32);
        let mut v = self.0[w] >> s;
        if s + BITS > 32 {
            v |= self.0[w + 1] << (32 - s);
        }
        v & ((1 << BITS) - 1)
    }

    /// Packs `v` at `k`, whose bits are clear.
    #[inline]
    fn set(&mut self, k: u32, v: u32) {
        let p = 32 + BITS * k;
        let (w, s) = ((p / 32) as usize, p % 32);
        self.0[w] |= v << s;
        if s + BITS > 32 {
            self.0[w + 1] |= v >> (32 - s);
        }
    }
}

/// One thread's blocks, in slabs, and its list of free ones.
pub struct Pool {
    slabs: Vec<Box<[Block]>>,
    /// Blocks handed out from the slabs, free or not.
    used: u32,
    /// The first free block, the others linked from it.
    free: u32,
}

impl Default for Pool {
    fn default() -> Pool {
        Pool {
            slabs: Vec::new(),
            used: 0,
            free: NONE,
        }
    }
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pool({} blocks)", self.used)
    }
}

impl Pool {
    #[inline]
    fn block(&self, i: u32) -> &Block {
        &self.slabs[i as usize / SLAB][i as usize % SLAB]
    }

    #[inline]
    fn block_mut(&mut self, i: u32) -> &mut Block {
        &mut self.slabs[i as usize / SLAB][i as usize % SLAB]
    }

    /// A cleared block linking `next`: a free one, else the next of the
    /// slabs.
    #[inline]
    fn take(&mut self, next: u32) -> u32 {
        let i = match self.free {
            NONE => self.fresh(),
            i => {
                self.free = self.block(i).0[0];
                i
            }
        };
        *self.block_mut(i) = Block([next, 0, 0, 0, 0, 0, 0, 0]);
        i
    }

    /// The next block of the slabs, never taken before.
    fn fresh(&mut self) -> u32 {
        if self.used as usize == self.slabs.len() * SLAB {
            self.slabs.push(vec![Block::default(); SLAB].into());
        }
        let i = self.used;
        self.used = (i.checked_add(1))
            .filter(|&u| u != NONE)
            .expect("fewer than 2^32 blocks");
        i
    }

    /// Moves `other`'s blocks in, after this pool's; returns what to add
    /// to the index of each of `other`'s blocks, for [`Chain::renumber`].
    pub fn append(&mut self, other: Pool) -> u32 {
        if other.used == 0 {
            return 0;
        }
        // Whole slabs move; this pool's last one's untaken blocks go to
        // its list of free ones.
        while !(self.used as usize).is_multiple_of(SLAB) {
            let i = self.fresh();
            self.release(i, i);
        }
        let by = self.used;
        let total = u64::from(by) + other.slabs.len() as u64 * SLAB as u64;
        assert!(total < u64::from(NONE), "fewer than 2^32 blocks");
        let shift = |i: u32| if i == NONE { NONE } else { i + by };
        let (used, free) = (other.used, other.free);
        for mut slab in other.slabs {
            for block in slab.iter_mut() {
                block.0[0] = shift(block.0[0]);
            }
            self.slabs.push(slab);
        }
        self.used = by + used;
        if free != NONE {
            let (head, mut tail) = (shift(free), shift(free));
            while self.block(tail).0[0] != NONE {
                tail = self.block(tail).0[0];
            }
            self.release(head, tail);
        }
        by
    }

    /// Puts the chain of blocks from `head` to `tail` on the free list.
    fn release(&mut self, head: u32, tail: u32) {
        self.block_mut(tail).0[0] = self.free;
        self.free = head;
    }
}

/// One key's values in a [`Pool`], in no order that counts: the first
/// block is the one filling, and every block after it is full.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Chain {
    head: u32,
    len: u32,
}

impl Chain {
    /// How many values the chain holds.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether the chain holds no value.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Values in the first block.
    fn in_head(&self) -> u32 {
        (self.len - 1) % PER_BLOCK + 1
    }

    /// Adds `value`; `false`, adding nothing, if it does not fit
    /// [`BITS`].
    #[inline]
    pub fn push(&mut self, pool: &mut Pool, value: i64) -> bool {
        let packed = value.wrapping_add(OFFSET) as u64;
        if packed >= 1 << BITS {
            return false;
        }
        let k = self.len % PER_BLOCK;
        if k == 0 {
            self.head = pool.take(if self.len == 0 { NONE } else { self.head });
        }
        pool.block_mut(self.head).set(k, packed as u32);
        self.len += 1;
        true
    }

    /// Calls `f` with each value.
    pub fn visit(&self, pool: &Pool, mut f: impl FnMut(i64)) {
        let (mut i, mut n) = (self.head, if self.is_empty() { 0 } else { self.in_head() });
        while n > 0 {
            let block = pool.block(i);
            (0..n).for_each(|k| f(i64::from(block.get(k)) - OFFSET));
            (i, n) = (block.0[0], PER_BLOCK);
            if i == NONE {
                break;
            }
        }
    }

    /// The chain's last block.
    fn tail(&self, pool: &Pool) -> u32 {
        let mut i = self.head;
        while pool.block(i).0[0] != NONE {
            i = pool.block(i).0[0];
        }
        i
    }

    /// Adds `other`'s values, in the same pool: its first block's values
    /// pushed, its full blocks spliced in after this chain's first.
    pub fn splice(&mut self, pool: &mut Pool, other: Chain) {
        if other.is_empty() {
            return;
        }
        let (head, n) = (*pool.block(other.head), other.in_head());
        let rest = head.0[0];
        pool.release(other.head, other.head);
        for v in (0..n).map(|k| head.get(k)) {
            let pushed = self.push(pool, i64::from(v) - OFFSET);
            debug_assert!(pushed);
        }
        if rest != NONE {
            let rest = Chain {
                head: rest,
                len: other.len - other.in_head(),
            };
            let tail = rest.tail(pool);
            pool.block_mut(tail).0[0] = pool.block(self.head).0[0];
            pool.block_mut(self.head).0[0] = rest.head;
            self.len += rest.len;
        }
    }

    /// Returns the chain's blocks to the pool.
    pub fn free(self, pool: &mut Pool) {
        if !self.is_empty() {
            let tail = self.tail(pool);
            pool.release(self.head, tail);
        }
    }

    /// The chain of a pool moved by [`Pool::append`], which returned
    /// `by`.
    pub fn renumber(&mut self, by: u32) {
        if !self.is_empty() {
            self.head += by;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Chains pushed in turn, spliced, freed and moved to another
        /// pool hold what vectors do.
        #[test]
        fn chains_hold_what_vectors_do(
            rows in proptest::collection::vec((0usize..6, -1024i64..1024), 0..600),
            other_rows in proptest::collection::vec((0usize..6, -1024i64..1024), 0..300),
            ops in proptest::collection::vec((0usize..6, 0usize..6, proptest::bool::ANY), 0..8),
        ) {
            let fill = |rows: &[(usize, i64)]| {
                let mut pool = Pool::default();
                let mut chains = [Chain::default(); 6];
                let mut model = vec![Vec::new(); 6];
                for &(c, v) in rows {
                    proptest::prop_assert!(chains[c].push(&mut pool, v));
                    model[c].push(v);
                }
                Ok((pool, chains, model))
            };
            let (mut pool, mut chains, mut model) = fill(&rows)?;
            let (other, theirs, their_model) = fill(&other_rows)?;
            let by = pool.append(other);
            for (a, (mut b, m)) in (0..6).zip(theirs.into_iter().zip(their_model)) {
                b.renumber(by);
                chains[a].splice(&mut pool, b);
                model[a].extend(m);
            }
            for (a, b, free) in ops {
                if a == b {
                    continue;
                }
                if free {
                    std::mem::take(&mut chains[b]).free(&mut pool);
                    model[b].clear();
                } else {
                    let taken = std::mem::take(&mut chains[b]);
                    chains[a].splice(&mut pool, taken);
                    let moved = std::mem::take(&mut model[b]);
                    model[a].extend(moved);
                }
                for v in -3..3 {
                    chains[b].push(&mut pool, v);
                    model[b].push(v);
                }
            }
            for (chain, want) in chains.iter().zip(&mut model) {
                let mut got = Vec::new();
                chain.visit(&pool, |v| got.push(v));
                got.sort_unstable();
                want.sort_unstable();
                proptest::prop_assert_eq!(chain.len() as usize, want.len());
                proptest::prop_assert_eq!(&got, want);
            }
        }
    }

    #[test]
    fn pools_of_several_slabs_appended_in_turn_keep_every_chain() {
        const CHAINS: usize = 1000;
        // More values than a slab holds, spread over the chains.
        let fill = |seed: usize| {
            let (mut pool, mut chains) = (Pool::default(), vec![Chain::default(); CHAINS]);
            let mut model = vec![Vec::new(); CHAINS];
            for k in 0..SLAB * PER_BLOCK as usize + 5000 {
                let (c, v) = ((k * 7 + seed) % CHAINS, ((k + seed) % 2000) as i64 - 1000);
                assert!(chains[c].push(&mut pool, v));
                model[c].push(v);
            }
            (pool, chains, model)
        };
        let (mut pool, mut chains, mut model) = fill(0);
        for seed in [1, 2] {
            let (other, theirs, their_model) = fill(seed);
            let by = pool.append(other);
            for (c, (mut chain, values)) in theirs.into_iter().zip(their_model).enumerate() {
                chain.renumber(by);
                // Every other chain spliced, the rest freed.
                if c % 2 == 0 {
                    chains[c].splice(&mut pool, chain);
                    model[c].extend(values);
                } else {
                    chain.free(&mut pool);
                }
            }
        }
        assert!(pool.slabs.len() > 3);
        for (chain, want) in chains.iter().zip(&mut model) {
            let mut got = Vec::new();
            chain.visit(&pool, |v| got.push(v));
            got.sort_unstable();
            want.sort_unstable();
            assert_eq!(&got, want);
        }
    }

    #[test]
    fn a_value_past_eleven_bits_is_refused_and_freed_blocks_are_taken_again() {
        let mut pool = Pool::default();
        let mut chain = Chain::default();
        assert!(!chain.push(&mut pool, 1024) && !chain.push(&mut pool, -1025));
        assert!(chain.is_empty());
        for v in 0..3 * PER_BLOCK as i64 {
            assert!(chain.push(&mut pool, v));
        }
        assert_eq!(pool.used, 3);
        chain.free(&mut pool);
        let mut again = Chain::default();
        for v in 0..3 * PER_BLOCK as i64 {
            again.push(&mut pool, -v);
        }
        assert_eq!(pool.used, 3);
        let mut got = Vec::new();
        again.visit(&pool, |v| got.push(v));
        assert_eq!(got.len(), 3 * PER_BLOCK as usize);
        assert!(got.iter().all(|&v| v <= 0));
    }
}

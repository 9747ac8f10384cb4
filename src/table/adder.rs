//! The [`Adder`]: how the scanners add rows to a [`Table`], holding the
//! short table's slot array and shape ([`Shape`]) in registers; and the
//! [`ChunkAdder`], an adder bound to the chunk of input it scans, which
//! holds the long rows the AVX2 scanner adds a row late.

#[cfg(target_arch = "x86_64")]
use super::long;
use super::{short, Numbering, Table, SHORT};
use crate::bits::prefetch;
use crate::tuning::{BIG_TABLE, ROW_STEPS};

/// Adds the rows of a stretch of input to a [`Table`] (see
/// [`Table::adder`]), holding the short table's slot array and
/// shape ([`Shape`]) in registers: the table's own fields would be reloaded
/// after every store to a slot, which the compiler cannot prove does not
/// alias them.
pub struct Adder<'t> {
    pub(super) table: &'t mut Table,
    shape: Shape,
    /// The shape held by the adder this one was made from by
    /// [`Adder::for_chunk`], if any, which is given this one's whenever it
    /// changes: that adder is sound again however this one ends, even
    /// forgotten.
    mirror: Option<&'t mut Shape>,
}

/// The short table's slot array and its shape, as an [`Adder`] holds them,
/// refreshed whenever an insert may have moved the array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    /// `table.short.slots`' buffer.
    slots: *mut short::Slot,
    /// The table's shape in bytes, so that probing needs no scaling: a
    /// hash shifted right by `shift` is the home slot's byte offset with 5
    /// more bits (slots are 32 bytes), and `mask` keeps a byte offset in
    /// the array and at a slot's start.
    shift: u32,
    mask: usize,
    /// The table's hash multiplier ([`short::hash`]).
    mul: u64,
}

impl Shape {
    /// The shape of `short`'s slot array as it is.
    pub(super) fn of(short: &mut short::Short) -> Shape {
        const SLOT: usize = std::mem::size_of::<short::Slot>();
        const { assert!(SLOT == 32) };
        let bytes = short.slots.len() * SLOT;
        // What `home` relies on.
        debug_assert_eq!(usize::MAX >> (short.shift - 5), bytes - 1);
        Shape {
            slots: short.slots.as_mut_ptr(),
            shift: short.shift - 5,
            mask: (bytes - 1) & !(SLOT - 1),
            mul: short.mul,
        }
    }

    /// The hash of the short key `a`, `b` in the table of this shape.
    #[inline(always)]
    fn hash(&self, a: u64, b: u64) -> u64 {
        short::hash(a, b, self.mul)
    }

    /// Whether the slot array has outgrown the L2 cache (see
    /// [`Adder::is_big`]).
    pub(super) fn is_big(&self) -> bool {
        self.mask >= BIG_TABLE
    }

    /// The byte offset of the home slot of a key whose hash is `hash`: the
    /// shift leaves a number below the array's size in bytes (`shift` is
    /// 64 less its log2), so only the low bits within a slot are cleared,
    /// by a constant rather than by `mask`, which would take a register.
    #[inline(always)]
    fn home(&self, hash: u64) -> usize {
        (hash >> self.shift) as usize & !(std::mem::size_of::<short::Slot>() - 1)
    }

    /// Adds the row to the key's slot if that is the home slot at byte
    /// offset `at` or the one after it, giving the name's number
    /// ([`short::Slot::id`]); `None` if neither holds the key. Where `N`
    /// says the table numbers its names, the slot is found but not
    /// counted: the caller keeps the row by number, and a numbered
    /// table's stats are not read.
    ///
    /// The slot after home, where most displaced names of random sets
    /// sit, is looked at here, free of the probe budget: a call out of line
    /// for it cost more than the compare (docs/PERFORMANCE.md, *The
    /// tables*). A key is never past an empty slot, so reading it after an
    /// empty home slot finds nothing it should not.
    ///
    /// # Safety
    /// `self` is the shape of the short table's slot array as it is, which
    /// nothing else borrows, and `at` a [`Shape::home`].
    #[inline(always)]
    unsafe fn add_if_near<N: Numbering>(
        &self,
        at: usize,
        a: u64,
        b: u64,
        total: i64,
    ) -> Option<u32> {
        // SAFETY: `slots` holds `mask + 1` bytes of slots (forwarded from
        // the caller); `& mask` keeps `at` a multiple of the slot size below
        // the array's size in bytes.
        let s = unsafe { &mut *self.slots.byte_add(at) };
        if s.a == a && s.b == b {
            if !N::NUMBERED {
                s.add(total);
            }
            return Some(s.id);
        }
        let next = (at + std::mem::size_of::<short::Slot>()) & self.mask;
        // SAFETY: as above, for `next`.
        let s = unsafe { &mut *self.slots.byte_add(next) };
        if s.a == a && s.b == b {
            if !N::NUMBERED {
                s.add(total);
            }
            return Some(s.id);
        }
        None
    }
}

impl Adder<'_> {
    /// An adder of rows to `table`, holding its shape.
    pub(super) fn new(table: &mut Table) -> Adder<'_> {
        let mut adder = Adder {
            table,
            shape: Shape {
                slots: std::ptr::null_mut(),
                shift: 0,
                mask: 0,
                mul: 0,
            },
            mirror: None,
        };
        adder.load();
        adder
    }

    /// Takes the short table's slot array and shape into the adder: when it
    /// is made, and after every insert and flood (the only things that
    /// move the array or change its size). The adder it was made from, if
    /// any, takes it too.
    fn load(&mut self) {
        self.shape = Shape::of(&mut self.table.short);
        if let Some(mirror) = &mut self.mirror {
            **mirror = self.shape;
        }
    }

    /// Adds a row of a name of at most [`SHORT`] bytes given as its key
    /// ([`short::key`]: the name, its `;`, zero padding). Returns `false`,
    /// adding nothing, for a name that is empty, holds a `\n` or is not
    /// UTF-8.
    #[inline(always)]
    pub fn add_short(&mut self, a: u64, b: u64, value: i64) -> bool {
        self.add_short_numbered::<()>(a, b, value).is_some()
    }

    /// [`Adder::add_short`], giving the name's number in a table that
    /// numbers its names ([`Table::numbered`]). Where `N` says the table
    /// does, a row found in its home slot or the next is not counted there:
    /// the caller keeps it by number.
    #[inline(always)]
    pub(crate) fn add_short_numbered<N: Numbering>(
        &mut self,
        a: u64,
        b: u64,
        value: i64,
    ) -> Option<u32> {
        self.add_short_hashed::<N>(self.hash(a, b), a, b, value)
    }

    /// The hash of the short key `a`, `b` (see [`Adder::add_short`]), for
    /// [`Adder::prefetch`] and [`Adder::add_short_hashed`].
    #[inline(always)]
    pub fn hash(&self, a: u64, b: u64) -> u64 {
        self.shape.hash(a, b)
    }

    /// Whether the short table has outgrown the L2 cache, so that rows are
    /// worth parsing a batch ahead of their updates, their slots prefetched
    /// ([`Adder::prefetch`]).
    pub fn is_big(&self) -> bool {
        self.shape.is_big()
    }

    /// Starts loading the home slot of the key whose [`Adder::hash`] is
    /// `hash` into the L2 cache, without waiting for it: for a row added a
    /// batch of rows later. The L1 cache can wait on few misses at once,
    /// and a batch asks for many more, so they are fetched into L2
    /// (docs/PERFORMANCE.md, *The tables*).
    #[inline(always)]
    pub fn prefetch(&self, hash: u64) {
        let at = self.shape.home(hash);
        prefetch::<false, _>(self.shape.slots.wrapping_byte_add(at));
    }

    /// [`Adder::add_short`] for a key whose [`Adder::hash`] is `hash`,
    /// taken earlier: the table may have grown since, so only the hash,
    /// not a slot, can be kept, and it may have reseeded, so a key missing
    /// from the slots the hash gives is looked for anew. `N` as for
    /// [`Adder::add_short_numbered`].
    #[inline(always)]
    pub fn add_short_hashed<N: Numbering>(
        &mut self,
        hash: u64,
        a: u64,
        b: u64,
        value: i64,
    ) -> Option<u32> {
        let at = self.shape.home(hash);
        let total = short::total(value);
        // `load` takes the shape when the adder is made and again after
        // every insert and flood (the only things that move the array or
        // change its size). The adder holds the table's only borrow.
        // SAFETY: as above: the shape is the array's, nothing else's.
        let found = unsafe { self.shape.add_if_near::<N>(at, a, b, total) };
        found.or_else(|| self.add_past_home(hash, a, b, total))
    }

    /// Whether the short or the long table has flooded: its rows go to a
    /// keyed map, through a call each.
    pub(crate) fn is_flooded(&self) -> bool {
        self.table.is_flooded()
    }

    /// Whether at most one of the table's names in `share` is longer than
    /// [`SHORT`] bytes (so of an empty table). The names of the runs set
    /// aside count too: a short table started afresh holds few names until
    /// they come again, and the input has not changed.
    pub(crate) fn long_names_under(&self, share: usize) -> bool {
        let aside: usize = self.table.runs.iter().map(Vec::len).sum();
        self.table.long.len() * share <= self.table.len().max(aside)
    }

    /// The short table's shape, for [`Adder::add_short_if_near`].
    pub(crate) fn shape(&self) -> Shape {
        self.shape
    }

    /// [`Adder::add_short`] for a feed that keeps the table's [`Shape`] in
    /// registers of its own, where the adder's would be reloaded on every
    /// row (a store to a slot might alias it, for all the compiler knows),
    /// and that makes its own call for the rest: adds the row if the key is
    /// in its home slot or the next, returning the name's number in a
    /// numbered table ([`Table::numbered`](super::Table::numbered)), else
    /// returns `None`, adding nothing, and the feed adds the row by
    /// [`Adder::add_short_past`], then takes the shape anew. Long names'
    /// rows leave the short table where it is. The row comes as its
    /// [`short::total`], which such a feed can make for several rows at
    /// once. `N` as for [`Adder::add_short_numbered`].
    ///
    /// # Safety
    /// `*shape == self.shape()`: taken since the adder last added a short
    /// name's row any other way.
    #[inline(always)]
    pub(crate) unsafe fn add_short_if_near<N: Numbering>(
        &self,
        shape: &Shape,
        a: u64,
        b: u64,
        total: i64,
    ) -> Option<u32> {
        debug_assert_eq!(*shape, self.shape);
        let at = shape.home(shape.hash(a, b));
        // SAFETY: `shape` is the adder's (forwarded from the caller); see
        // `add_short_hashed`.
        unsafe { shape.add_if_near::<N>(at, a, b, total) }
    }

    /// Adds a row that [`Adder::add_short_if_near`] did not, given as its
    /// [`short::total`]: a key past its home slot and the next, or new, or in a
    /// flooded table's keyed table. Returns the name's number, as
    /// [`Adder::add_short_numbered`] does.
    pub(crate) fn add_short_past(&mut self, a: u64, b: u64, total: i64) -> Option<u32> {
        self.add_past_home(self.shape.hash(a, b), a, b, total)
    }

    /// [`Adder::add_short_hashed`] for a key in neither its home slot nor
    /// the next by `hash`: it is further on, or new, or in the keyed table
    /// of a flooded table, or `hash` was taken before the table reseeded,
    /// and the slots it gave are no longer the key's. Out of line: inlined,
    /// the walk and its probe budget took registers that the scanner's loop
    /// then reloaded on every row (docs/PERFORMANCE.md, *The tables*).
    #[inline(never)]
    fn add_past_home(&mut self, hash: u64, a: u64, b: u64, total: i64) -> Option<u32> {
        let now = self.shape.hash(a, b);
        // A flooded table's keyed map holds no name its hot loop would
        // find: the slots the hash gives now are looked at first.
        if now != hash {
            // SAFETY: as in `add_short_hashed`.
            let found = unsafe {
                self.shape
                    .add_if_near::<()>(self.shape.home(now), a, b, total)
            };
            if found.is_some() {
                return found;
            }
        }
        match self.table.short.is_flooded() {
            true => self.add_keyed(a, b, total),
            false => self.walk(now, a, b, total),
        }
    }

    /// Adds a row to the flooded short table: to its keyed table, or, for a
    /// new name, to the table, which then grows as an unflooded one does
    /// when a name lands in its slots: the slots' shape is loaded again.
    #[inline(always)]
    fn add_keyed(&mut self, a: u64, b: u64, total: i64) -> Option<u32> {
        if let Some(id) = self.table.short.add_keyed(a, b, total) {
            return Some(id);
        }
        let Table { short, long, .. } = &mut *self.table;
        let added = short.insert_flooded(a, b, total, &mut long.named);
        self.load();
        added
    }

    /// [`Adder::add_past_home`] for a table that has not flooded: walks
    /// from the home slot of the key, whose hash is `hash`. Out of line:
    /// where the compiler merged it into its caller, every row of a flooded
    /// table paid for the walk's saved registers on its way to the keyed
    /// map.
    #[inline(never)]
    fn walk(&mut self, hash: u64, a: u64, b: u64, total: i64) -> Option<u32> {
        let mut at = self.shape.home(hash);
        loop {
            // SAFETY: as in `Shape::add_if_near`, the shape being the
            // adder's (see `add_short_hashed`).
            let s = unsafe { &mut *self.shape.slots.byte_add(at) };
            if s.a == a && s.b == b {
                s.add(total);
                // Held past the slot after its home, the name sends each of
                // its rows out of the scanner's loop: beside its steps, the
                // row pays for that, and the table floods on its next walk
                // if nothing is left.
                self.table.short.budget.spend(ROW_STEPS);
                return Some(s.id);
            }
            if s.a | s.b == 0 {
                break;
            }
            // Past the home slot: a step from the budget; once there is
            // none, the table reseeds, and the row is added afresh, or it
            // floods, and the row goes to the keyed table (see
            // `Short::flood`).
            let short = &mut self.table.short;
            if short.budget.left == 0 {
                short.flood();
                self.load();
                return self.add_past_home(hash, a, b, total);
            }
            short.budget.left -= 1;
            at = (at + std::mem::size_of::<short::Slot>()) & self.shape.mask;
        }
        let i = at / std::mem::size_of::<short::Slot>();
        let Table { short, long, .. } = &mut *self.table;
        let added = short.insert(i, a, b, total, &mut long.named);
        self.load();
        added
    }

    /// Adds a row of a name longer than [`SHORT`] bytes (at most 100, no
    /// `;`). Returns `false`, adding nothing, for a name that holds a `\n`
    /// or is not UTF-8.
    ///
    /// # Panics
    /// If the name is longer than 100 bytes.
    pub fn add_long(&mut self, name: &[u8], value: i16) -> bool {
        self.table.long.add(name, value).is_some()
    }

    /// Adds a row of a name of any length (up to 100 bytes, no `;`).
    /// Returns `false`, adding nothing, for a name that is empty, holds a
    /// `\n` or is not UTF-8.
    ///
    /// # Panics
    /// If the name is longer than 100 bytes.
    pub fn add(&mut self, name: &[u8], value: i16) -> bool {
        if name.len() <= SHORT {
            let (a, b) = short::key(name);
            self.add_short(a, b, i64::from(value))
        } else {
            self.add_long(name, value)
        }
    }

    /// This adder bound to `chunk`, the input a scan reads, until the scan
    /// ends by [`ChunkAdder::settle`].
    pub(crate) fn for_chunk<'c>(&mut self, chunk: &'c [u8]) -> ChunkAdder<'_, 'c> {
        ChunkAdder {
            adder: Adder {
                table: &mut *self.table,
                shape: self.shape,
                mirror: Some(&mut self.shape),
            },
            chunk,
            #[cfg(target_arch = "x86_64")]
            deferred: long::Deferred::default(),
        }
    }
}

/// An [`Adder`] bound to the chunk of input a scan reads (see
/// [`Adder::for_chunk`]), for `'c`. The AVX2 scanner adds a long row a row
/// late ([`ChunkAdder::add_long_deferred_avx2`]), reading it again from the
/// input then: the rows it keeps back borrow the chunk, so that none
/// outlives its bytes, as the borrow checker sees. The scan ends by
/// [`ChunkAdder::settle`], which adds them and says where a refused one
/// starts.
///
/// Otherwise it is its adder ([`Deref`](std::ops::Deref)).
pub(crate) struct ChunkAdder<'a, 'c> {
    /// A copy of the adder it was made from, borrowing the same table:
    /// its fields are at hand as that adder's were, where a reference to
    /// it would make every row load them through one more pointer.
    adder: Adder<'a>,
    /// The input the scan reads.
    chunk: &'c [u8],
    /// The long rows kept back.
    #[cfg(target_arch = "x86_64")]
    deferred: long::Deferred<'c>,
}

impl<'a> std::ops::Deref for ChunkAdder<'a, '_> {
    type Target = Adder<'a>;

    #[inline(always)]
    fn deref(&self) -> &Adder<'a> {
        &self.adder
    }
}

impl std::ops::DerefMut for ChunkAdder<'_, '_> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.adder
    }
}

impl<'c> ChunkAdder<'_, 'c> {
    /// The input the scan reads.
    #[inline(always)]
    pub(crate) fn chunk(&self) -> &'c [u8] {
        self.chunk
    }

    /// Whether the `n` bytes from `p` lie in the chunk: what the AVX2
    /// methods require of their lines.
    #[cfg(target_arch = "x86_64")]
    fn holds(&self, p: *const u8, n: usize) -> bool {
        let (start, at) = (self.chunk.as_ptr() as usize, p as usize);
        start <= at && at + n <= start + self.chunk.len()
    }

    /// Adds the row of the long name of `len` bytes at `p` a row late, read
    /// as AVX2 vectors straight from the chunk: it hashes the name and
    /// starts fetching its bucket, then adds the row it deferred before
    /// (whose bucket has had the time to come); see
    /// [`long::Deferred::add_by_blocks`]. Returns `false`, taking nothing,
    /// if the table refused that row; [`ChunkAdder::settle`] says where it
    /// is. `N` says whether the table numbers its names.
    ///
    /// A call of its own: inlined into the scanner's loop (with the line's
    /// parsing out of line instead), the 10K set was slower.
    ///
    /// # Safety
    /// `p` must point into the chunk, with 128 bytes of it from `p`; its
    /// first `;` at `p + len` with `SHORT < len <= 100`; and the CPU must
    /// have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[inline(never)]
    pub(crate) unsafe fn add_long_deferred_avx2<N: Numbering>(
        &mut self,
        p: *const u8,
        len: usize,
        value: i16,
    ) -> bool {
        debug_assert!(self.holds(p, 128));
        // SAFETY: the 128 bytes from `p` lie in the chunk, borrowed for
        // `'c` (forwarded from the caller, as is the rest).
        unsafe {
            self.deferred
                .add_by_blocks::<N>(&mut self.adder.table.long, p, len, value)
        }
    }

    /// [`ChunkAdder::add_long_deferred_avx2`] for a name of `SHORT < len <
    /// 32` bytes, whose `;` is in its first 32 bytes: the name is cut,
    /// hashed and compared as one vector rather than four. Inlined into
    /// its callers, which are compiled for AVX2 (hence no `target_feature`
    /// here, which would forbid `inline(always)`): as a call of its own,
    /// the compiler inlined the line's parse into the scanner's loop
    /// instead, and every long row paid for a second call.
    ///
    /// # Safety
    /// As for [`ChunkAdder::add_long_deferred_avx2`], and `len < 32`.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub(crate) unsafe fn add_long_head_avx2<N: Numbering>(
        &mut self,
        p: *const u8,
        len: usize,
        value: i16,
    ) -> bool {
        debug_assert!(self.holds(p, 128));
        // SAFETY: as in `add_long_deferred_avx2`.
        unsafe {
            self.deferred
                .add_by_head::<N>(&mut self.adder.table.long, p, len, value)
        }
    }

    /// Counts the row of the name of `SHORT < len < 32` bytes at `p` at
    /// once if the long table holds the name in its home bucket, and gives
    /// the name's number (0 in a table that does not number its names),
    /// for the caller to log the row: the table keeps only the rows it
    /// adds a row late ([`Table::take_long_rows`](super::Table::take_long_rows)).
    /// `None`, adding nothing, if not: the caller then adds it by
    /// [`ChunkAdder::add_long_head_avx2`].
    ///
    /// # Safety
    /// `p` valid for reads of 32 bytes, its first `;` at `p + len`, and
    /// the CPU has AVX2.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub(crate) unsafe fn add_long_head_if_home<N: Numbering>(
        &mut self,
        p: *const u8,
        len: usize,
        value: i16,
    ) -> Option<u32> {
        // SAFETY: forwarded from the caller.
        unsafe { self.adder.table.long.add_head_if_home::<N>(p, len, value) }
    }

    /// Ends the scan: adds the long rows kept back, if any (one per queue:
    /// see [`ChunkAdder::add_long_deferred_avx2`] and
    /// [`ChunkAdder::add_long_head_avx2`]), and returns where in the chunk
    /// the first line whose name the table refused starts, if any (only in
    /// faulty input).
    pub(crate) fn settle(mut self) -> Option<usize> {
        let line = self.settle_rows()?;
        Some(line as usize - self.chunk.as_ptr() as usize)
    }

    /// [`ChunkAdder::settle`], the refused line as an address.
    fn settle_rows(&mut self) -> Option<*const u8> {
        #[cfg(target_arch = "x86_64")]
        return self
            .deferred
            .settle(&mut self.adder.table.long)
            .map(|line| line.as_ptr());
        #[cfg(not(target_arch = "x86_64"))]
        None
    }
}

impl Drop for ChunkAdder<'_, '_> {
    /// Dropped unsettled, it adds the rows it kept back all the same, with
    /// their chunk still borrowed; but not while a panic unwinds the scan:
    /// the driver then drops the table, and the chunk's bytes may have
    /// turned to zeros under it ([`crate::shrink`]).
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let refused = self.settle_rows();
            debug_assert!(refused.is_none(), "a refused row went unreported");
        }
    }
}

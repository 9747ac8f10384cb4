//! Counts per value through the fast engines' scanner and table: what the
//! `fast` and `swar` engines keep beyond a slot's stats when a run asks
//! for the median or percentiles ([`Kept::Counts`](crate::Kept::Counts)).
//!
//! The table numbers its names, short and long, in one order
//! ([`Table::numbered`]). The scanner logs each short row as its name's
//! number and value ([`Log`]), adding it to the table as ever; the long
//! table, which adds its rows a row late, keeps them so itself
//! ([`Table::take_long_rows`]). After each scan the log is taken in
//! ([`Beyond::settle`]) in one pass whose next bins are prefetched a few
//! rows ahead: counting in the scanner's loop made it wait on each row's
//! bin, which a log known in advance does not. The first [`ROWS`] names
//! each count their values in a row of counts of every text value
//! ([`Rows`]); the others in a [`Tally`].
//! The rows the strict parser reads go to a [`Keeping`] of their own, by
//! name. At the end the numbered names' rows are folded into their
//! tallies, which join it, and it gives the run's entries.
//!
//! A thread whose table passes [`SPILL_NAMES`] names hands them all to
//! that [`Keeping`] and feeds it alone from then on: a million names'
//! slots, numbers and tallies held in two places took twice the memory
//! of the keeping loop's stations.

mod rows;

use self::rows::{Elsewhere, Rows, PLACED_NAMES, ROWS};
use crate::detail::Pool;
use crate::engine::keeping::{Keep, Keeping, Tally};
use crate::engine::Accumulator;
use crate::error::Fault;
use crate::parse;
use crate::scan::Log;
use crate::summary::Entry;
use crate::table::{Numbering, Table};
use crate::tuning::COUNTED_STRETCH;

/// What a fast engine keeps beyond its table's stats: nothing (`()`), or
/// each name's counts per value ([`Counted`]).
pub trait Beyond: Log + Default + Send {
    /// Takes in the rows logged since the last call, and those `table`
    /// kept of its long names; the engine calls it after each scan.
    fn settle(&mut self, table: &mut Table) {
        let _ = table;
    }

    /// After a stretch: whether this takes over the table's names (it
    /// leaves the table empty) to be fed alone from then on
    /// ([`Beyond::feed`]).
    fn outgrows(&mut self, table: &mut Table) -> bool {
        let _ = table;
        false
    }

    /// Feeds `chunk` as [`Accumulator::feed`] does, names' UTF-8 checked
    /// ([`Accumulator::CHECKS_UTF8`]), once this has taken over
    /// ([`Beyond::outgrows`]); `None` before.
    fn feed(&mut self, chunk: &[u8], offset: usize) -> Option<Result<(), Fault>> {
        let _ = (chunk, offset);
        None
    }

    /// Keeps a row the strict parser read (its name checked): `false` if
    /// the table is to count it.
    fn strict(&mut self, name: &[u8], value: i64) -> bool {
        let _ = (name, value);
        false
    }

    /// The run's entries, sorted by name, given the table that numbered the
    /// names.
    fn into_sorted(self, table: Table) -> Vec<Entry> {
        let _ = table;
        unreachable!("only a numbered table's engine keeps its entries here")
    }

    /// Folds in another thread's, given its table.
    fn absorb(&mut self, other: Self, table: Table) {
        let _ = (other, table);
        unreachable!("only a numbered table's engine absorbs here")
    }
}

/// Nothing beyond the table's stats: the basic stats' runs.
impl Beyond for () {}

/// Rows logged between two settles, at most about one per 5 bytes of a
/// stretch ([`crate::tuning::COUNTED_STRETCH`]).
const LOG_ROWS: usize = 1 << 16;

/// Names past which a thread's table hands them to the keeping loop
/// ([`Beyond::outgrows`]): far more than the 10K set's, far fewer than a
/// million.
pub(crate) const SPILL_NAMES: usize = 1 << 16;

// A table holds at most `SPILL_NAMES` names when a stretch starts, and each
// new name takes a byte of it at least, so the log can place every name.
const _: () = assert!(SPILL_NAMES + COUNTED_STRETCH < PLACED_NAMES);

/// Each name's counts per value, kept through the table's numbers.
#[derive(Default)]
pub struct Counted {
    /// The rows since the last settle, as their places ([`rows::place`]).
    log: Vec<u32>,
    /// The counts of the names numbered below [`ROWS`].
    rows: Rows,
    /// The other names' values.
    named: Named,
    /// Whether this has taken over its table's names.
    took_over: bool,
}

/// What [`Counted`] keeps of names without a row.
#[derive(Default)]
struct Named {
    /// The values of the names numbered from [`ROWS`] on, by number.
    tallies: Vec<Tally>,
    /// The blocks of the tallies' first values.
    pool: Pool,
    /// The strict parser's rows, by name; every row, once this has taken
    /// over the table's names.
    side: Keeping<Tally>,
}

impl Elsewhere for Named {
    fn add(&mut self, id: u32, value: i64) {
        let at = (id as usize)
            .checked_sub(ROWS)
            .expect("a name numbered below ROWS counts every text value in its row");
        // A name's first row is logged as the table numbers it, but the
        // long names' rows after the short names' of their stretch: a name
        // may come before a name numbered below it.
        if at >= self.tallies.len() {
            self.tallies.resize_with(at + 1, Tally::default);
        }
        self.tallies[at].add(&mut self.pool, value);
    }

    #[inline(always)]
    fn prefetch(&self, id: u32, value: i64) {
        if let Some(tally) = self.tallies.get((id as usize).wrapping_sub(ROWS)) {
            tally.prefetch(value);
        }
    }
}

impl Counted {
    /// Whether this has taken over its table's names.
    #[cfg(test)]
    pub(crate) fn took_over(&self) -> bool {
        self.took_over
    }

    /// The numbered names' values, as the keeping loop's stations, given
    /// the table that numbered them; this keeps none.
    fn numbered(&mut self, table: &mut Table) -> Keeping<Tally> {
        self.settle(table);
        let named = table.named();
        let rows = self.rows.take(named.len()).into_iter().map(Tally::Counts);
        let tallies = rows
            .chain(std::mem::take(&mut self.named.tallies))
            .collect();
        let pool = std::mem::take(&mut self.named.pool);
        Keeping::numbered(named, tallies, pool)
    }
}

impl Numbering for Counted {
    const NUMBERED: bool = true;
}

impl Log for Counted {
    #[inline(always)]
    fn row(&mut self, id: u32, value: i64) {
        self.log.push(rows::place(id, value));
    }
}

impl Beyond for Counted {
    fn settle(&mut self, table: &mut Table) {
        let long = table.take_long_rows();
        self.log
            .extend(long.map(|(id, value)| rows::place(id, value.into())));
        self.rows.settle(&self.log, &mut self.named);
        self.log.clear();
        if self.log.capacity() < LOG_ROWS {
            self.log.reserve(LOG_ROWS);
        }
    }

    fn outgrows(&mut self, table: &mut Table) -> bool {
        if table.len() <= SPILL_NAMES {
            return false;
        }
        let numbered = self.numbered(table);
        self.named.side.absorb(numbered);
        *table = Table::numbered();
        self.took_over = true;
        true
    }

    fn feed(&mut self, chunk: &[u8], offset: usize) -> Option<Result<(), Fault>> {
        // The keeping loop does not check names.
        let fed = |side: &mut Keeping<Tally>| {
            let fed = side.feed(chunk, offset);
            parse::with_utf8_checked(chunk, offset, fed)
        };
        self.took_over.then(|| fed(&mut self.named.side))
    }

    fn strict(&mut self, name: &[u8], value: i64) -> bool {
        let added = self.named.side.add_row(name, value);
        debug_assert!(added, "the strict parser checked the name");
        true
    }

    fn into_sorted(mut self, mut table: Table) -> Vec<Entry> {
        // A feed that met a fault returned before its settle.
        let numbered = self.numbered(&mut table);
        self.named.side.absorb(numbered);
        self.named.side.into_sorted()
    }

    fn absorb(&mut self, mut other: Counted, mut table: Table) {
        let numbered = other.numbered(&mut table);
        self.named.side.absorb(numbered);
        self.named.side.absorb(other.named.side);
    }
}

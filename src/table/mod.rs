//! The hand-written per-thread hash table of the fast engines.
//!
//! Why not `hashbrown`: the `chunked` engine uses a foldhash-keyed
//! `hashbrown::HashTable` and is the baseline this table must beat
//! (docs/PERFORMANCE.md, *The ladder*). This table wins because it is
//! shaped for this one job:
//!
//! - names of up to 15 bytes (nearly every row of the official data) go to
//!   [`short`]: the scanner hands over the name and its `;` as two
//!   zero-padded words it already holds in a register, hashing is one
//!   multiply, comparing is two word compares against a 32-byte slot that
//!   also holds the stats;
//! - longer names go to the `long` table, which keeps each name whole in a
//!   128-byte slot and hashes and compares it as four 32-byte blocks, with
//!   AVX2 straight from the input;
//! - both use open addressing with linear probing over a power-of-two
//!   array, no tombstones (a name leaves its slot only when its table
//!   floods, which then walks no more);
//! - at the end each table sorts its own names, the short ones by a radix
//!   sort over their slots (`short`'s private `radix` module);
//! - the hashes are fixed, so names can be built to share one: every
//!   probe step of a walk past a home slot is paid from a [`Budget`] that the input's
//!   bytes earn. The short table that has spent it reseeds once, its names
//!   rehashed under a multiplier drawn at random; a table that spends it
//!   again, or a long table, floods: for good, its names go to a map under
//!   a random key (the private `keyed` module), the short table's only
//!   those the hot loop would not find, past the slot after their home.
//!
//! The hot loop reaches the short table through an [`Adder`], which keeps
//! the slot array's address and shape in registers across rows.

mod adder;
mod budget;
#[cfg(any(test, feature = "lab"))]
pub mod flood;
mod keyed;
mod long;
mod name;
mod partition;
mod short;

use crate::stats::Stats;
use crate::summary::{merge_runs, Entry};
use crate::tuning::{
    DENSE, FULL_TABLE_BYTES, LONG_PROBE_BYTES, SHORT_PROBE_BYTES, SHORT_SLOTS, SPARSE,
    SPREAD_BYTES, SPREAD_SLOTS,
};

pub use adder::Adder;
pub(crate) use adder::{ChunkAdder, Shape};
use budget::Budget;
pub(crate) use name::Name;
pub use partition::{Partitions, Staging};
pub(crate) use short::{ONE_ROW, SHORT};

/// Whether a name may enter the table: not empty, valid UTF-8, no `\n`.
///
/// The scanner splits lines without looking inside names, so a line
/// without its `;` reaches the table joined to the next one, and a name
/// with invalid UTF-8 arrives like any other. Refusing them here, where
/// each distinct name comes once, sends every such line back to the strict
/// parser, which reports it: at its own line, however the chunk was split
/// among streams, because streams are finished in input order.
///
/// The UTF-8 check is `simdutf8`'s: once names are handed to the partitions
/// ([`Partitions`]), a table meets most of a million names anew after each
/// hand-over, and the standard library's check of names with multi-byte
/// characters was the largest part of such a run (docs/PERFORMANCE.md,
/// *Memory*).
fn acceptable(name: &[u8]) -> bool {
    !name.is_empty() && !name.contains(&b'\n') && simdutf8::basic::from_utf8(name).is_ok()
}

/// Widens a slot's `min` and `max` to take `value`. Branches, not
/// `min`/`max`: after a name's first rows they are almost never taken,
/// which saves a load and a store each per row.
#[inline(always)]
fn widen(min: &mut i16, max: &mut i16, value: i16) {
    if value < *min {
        *min = value;
    }
    if value > *max {
        *max = value;
    }
}

/// A slot's `sum`, `count`, `min` and `max` as [`Stats`](crate::stats::Stats).
fn stats(sum: i64, count: u64, min: i16, max: i16) -> crate::stats::Stats {
    crate::stats::Stats::of(min.into(), max.into(), sum.into(), count)
}

/// Whether `len` names over-fill `n` slots of type `S`: small tables stay
/// [`SPARSE`], tables past the L2 cache's size [`DENSE`].
fn over_full<S>(len: usize, n: usize) -> bool {
    let big = FULL_TABLE_BYTES / std::mem::size_of::<S>();
    len * if n >= big { DENSE } else { SPARSE } > n
}

/// The offset every entry of a [`Table`] carries. An [`Entry`]'s offset
/// is where [`Summary::from_entries`](crate::summary::Summary::from_entries)
/// reports a name it refuses; this table refuses such names itself
/// ([`acceptable`]), so it keeps no offsets at all: with a million names,
/// keeping them cost time and tens of MiB (docs/PERFORMANCE.md, *Memory*).
const NO_OFFSET: usize = 0;

/// Bytes after which a short slot's count could outgrow its bits
/// ([`short::MAX_ROWS`]): every row takes at least 5 bytes (`a;0.0`, the
/// last line without its `\n`), so these bytes hold at most that many
/// rows. About 320 MiB.
const RUN_BYTES: u64 = 5 * short::MAX_ROWS;

/// An open-addressing table from station names to [`Stats`](crate::Stats).
#[derive(Clone)]
pub struct Table {
    short: short::Short,
    long: long::Long,
    /// Short tables set aside before their counts could overflow, as
    /// sorted runs (wide counts), folded into one as they come; none
    /// before [`RUN_BYTES`] of input.
    runs: Vec<Vec<Entry>>,
    /// Bytes announced by [`Table::will_scan`] since `short` was started.
    scanned: u64,
}

impl Default for Table {
    fn default() -> Table {
        // Small, for small inputs: a table given more input grows to
        // `SPREAD_SLOTS` (`Table::will_scan`).
        Table {
            short: short::Short::with_slots(SHORT_SLOTS),
            long: long::Long::default(),
            runs: Vec::new(),
            scanned: 0,
        }
    }
}

/// Whether the tables a scan adds to number their names
/// ([`Table::numbered`]), known where the scan is compiled: the long rows
/// added a row late ([`ChunkAdder::add_long_deferred_avx2`]) are kept by
/// number in a numbered table, and a plain run's adds test nothing for it.
pub trait Numbering {
    /// Whether the table numbers its names.
    const NUMBERED: bool;
}

/// A table that does not number its names: every run of the basic stats.
impl Numbering for () {
    const NUMBERED: bool = false;
}

impl Table {
    /// A table that numbers its names in the order they come, the number
    /// kept in the name's slot or bucket ([`Adder::add_short_numbered`],
    /// [`Adder::add_long`]), so that a caller can keep more of each name
    /// than the table holds. A short table set aside as a run
    /// ([`Table::adder`]) keeps its names and their numbers, its stats
    /// reset, so a name keeps its number for the whole input (unless the
    /// table has flooded: then a short name that comes again after a run
    /// gets a new one). Its stats are not its caller's answer: a row it
    /// numbers for the caller to keep is not counted where it is found at
    /// once (a short name's from the scanner in its home slot or the next,
    /// [`Adder::add_short_numbered`]; a long name's in its home bucket).
    pub(crate) fn numbered() -> Table {
        let mut table = Table::default();
        table.long.named = Some(Vec::new());
        table
    }

    /// A numbered table's names ([`Table::numbered`]), by number.
    pub(crate) fn named(&self) -> &[Name] {
        self.long.named.as_deref().unwrap_or_default()
    }

    /// The rows a numbered table's long names were given since the last
    /// call ([`Table::numbered`]): each name's number and the value. The
    /// scanner adds them a row late, so the table keeps them, not the
    /// scanner's [`Log`](crate::scan::Log).
    pub(crate) fn take_long_rows(&mut self) -> std::vec::Drain<'_, (u32, i16)> {
        self.long.rows.drain(..)
    }

    /// Number of distinct names in the live tables: a short table set
    /// aside as a run (past [`RUN_BYTES`] of input, see [`Table::adder`])
    /// no longer counts.
    pub fn len(&self) -> usize {
        self.short.len() + self.long.len()
    }

    /// Whether the table holds no names.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// [`Adder::is_big`] without making an adder, which counts its bytes
    /// of input toward the table's bounds and probe budgets.
    pub(crate) fn is_big(&mut self) -> bool {
        Shape::of(&mut self.short).is_big()
    }

    /// Counts `bytes` more bytes of input toward the short table's bound,
    /// setting the table aside as a sorted run and starting an empty one of
    /// the same size if its counts could overflow. A slot's count shares a
    /// word with its sum ([`short::Slot::total`]) so that a row is one add
    /// and the slot 32 bytes; a run merges like another thread's. The run
    /// is folded into the runs before it at once, so that they take memory
    /// by the names, not by the input. Spreads the short table to
    /// [`SPREAD_SLOTS`] once it has been given [`SPREAD_BYTES`].
    fn will_scan(&mut self, bytes: usize) {
        let bytes = bytes as u64;
        assert!(bytes <= RUN_BYTES);
        self.scanned += bytes;
        if self.scanned > RUN_BYTES {
            let run = if self.long.named.is_some() && !self.short.is_flooded() {
                self.short.run_keeping_names()
            } else {
                let fresh = self.short.emptied();
                std::mem::replace(&mut self.short, fresh).into_sorted()
            };
            let mut runs = std::mem::take(&mut self.runs);
            runs.push(run);
            self.runs = vec![merge_runs(runs)];
            self.scanned = bytes;
        }
        if self.scanned >= SPREAD_BYTES {
            self.short.reserve(SPREAD_SLOTS);
        }
        self.short.budget.credit(bytes, SHORT_PROBE_BYTES);
        self.long.budget.credit(bytes, LONG_PROBE_BYTES);
    }

    /// Probe steps past home slots the table has taken (in lookups,
    /// inserts, growths and folds): however the names were chosen, at most
    /// the [`Budget`]s of its short and long tables and a growth's worth
    /// more (docs/PERFORMANCE.md, *The tables*). For the tests of that
    /// bound.
    pub fn probe_steps(&self) -> u64 {
        self.short.budget.spent() + self.long.budget.spent()
    }

    /// Whether the short or the long table has flooded.
    pub(crate) fn is_flooded(&self) -> bool {
        self.short.is_flooded() || self.long.is_flooded()
    }

    /// Whether the short table has reseeded.
    #[cfg(test)]
    pub(crate) fn is_reseeded(&self) -> bool {
        self.short.is_reseeded()
    }

    /// Adds one row of a name of any length (up to 100 bytes, no `;`).
    /// Returns `false`, adding nothing, for a name that is empty, holds a
    /// `\n` or is not UTF-8.
    ///
    /// # Panics
    /// If the name is longer than 100 bytes.
    pub fn add(&mut self, name: &[u8], value: i16) -> bool {
        self.adder(name.len() + 7).add(name, value)
    }

    /// The hot loop's handle on the table, for the rows of at most `bytes`
    /// bytes of input (at most [`RUN_BYTES`]: this is where the short
    /// slots' counts are kept from outgrowing their bits).
    ///
    /// # Panics
    /// If `bytes` is over [`RUN_BYTES`].
    pub fn adder(&mut self, bytes: usize) -> Adder<'_> {
        self.will_scan(bytes);
        Adder::new(self)
    }

    /// Adds `other`'s names and stats to this table: another thread's, at
    /// the end of a run. Walking both slot arrays in order and sorting once
    /// costs less than sorting both tables and merging the sorted runs
    /// (docs/PERFORMANCE.md, *The tables*). If the two tables' counts could
    /// overflow together, `other` is kept as a sorted run instead.
    /// A flooded table of `other`'s is kept as a sorted run too: its names
    /// are in no order this table's slots share.
    pub fn absorb(&mut self, other: Table) {
        if self.scanned + other.scanned > RUN_BYTES {
            self.runs.push(other.into_sorted());
            return;
        }
        self.scanned += other.scanned;
        self.short.budget.join(other.short.budget);
        self.long.budget.join(other.long.budget);
        if other.short.is_flooded() {
            self.runs.push(other.short.into_sorted());
        } else {
            self.short.absorb(&other.short);
        }
        if other.long.is_flooded() {
            self.runs.push(other.long.into_sorted());
        } else {
            self.long.absorb(&other.long);
        }
        self.runs.extend(other.runs);
    }

    /// Hands every name with its stats to `f`, in no order, and empties
    /// the table where it is, its slots kept for the names to come: what a
    /// thread's table gives the partitions ([`Partitions`]).
    pub fn drain(&mut self, mut f: impl FnMut(&[u8], Stats)) {
        for entry in self.runs.drain(..).flatten() {
            f(&entry.name, entry.stats);
        }
        self.short.drain(&mut f);
        self.long.drain(&mut f);
        // The counts start again from zero.
        self.scanned = 0;
    }

    /// Every name with its stats, sorted by the name's bytes, each with
    /// offset 0: the table keeps no offsets, since it refuses every name
    /// whose offset would be reported.
    pub fn into_sorted(mut self) -> Vec<Entry> {
        self.runs.push(self.short.into_sorted());
        self.runs.push(self.long.into_sorted());
        merge_runs(self.runs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    use crate::stats::Stats;

    fn add(t: &mut Table, name: &[u8], value: i16) {
        assert!(t.add(name, value));
    }

    /// Counts a row into the stats a test expects.
    fn expect(want: &mut HashMap<Vec<u8>, Stats>, name: &[u8], value: i16) {
        (want.entry(name.to_vec()))
            .and_modify(|s| s.add(value))
            .or_insert(Stats::new(value));
    }

    /// The table's names and stats, checked to come sorted, none twice.
    fn sorted_map(t: Table) -> HashMap<Vec<u8>, Stats> {
        let sorted = t.into_sorted();
        assert!(sorted.windows(2).all(|w| w[0].name < w[1].name));
        assert!(sorted.iter().all(|e| e.first == NO_OFFSET));
        (sorted.into_iter())
            .map(|e| (e.name.into_vec(), e.stats))
            .collect()
    }

    #[test]
    fn the_official_names_sit_nearly_all_in_their_home_slots() {
        let mut t = Table::default();
        assert_eq!(t.short.slots.len(), SHORT_SLOTS);
        t.will_scan(SPREAD_BYTES as usize);
        assert_eq!(t.short.slots.len(), SPREAD_SLOTS);
        for station in crate::generate::official() {
            add(&mut t, station.name().as_bytes(), 0);
        }
        assert!(t.short.len() > 400);
        let displaced = t.short.displaced();
        assert!(displaced * 100 <= t.short.len(), "{displaced} displaced");
    }

    #[test]
    fn a_short_table_grown_onto_huge_pages_keeps_every_name() {
        // 40,000 short names need 4 MiB of slots: the doublings past 2 MiB
        // take the huge-page advice, and the radix sort several levels.
        let mut t = Table::default();
        let names = 40_000u32;
        for round in 0..2 {
            for k in 0..names {
                add(
                    &mut t,
                    format!("n{}", k.wrapping_mul(7919) % names).as_bytes(),
                    round,
                );
            }
        }
        assert!(t.short.slots.len() * std::mem::size_of::<short::Slot>() >= 4 << 20);
        let mut want: Vec<Vec<u8>> = (0..names).map(|k| format!("n{k}").into_bytes()).collect();
        want.sort();
        let sorted = t.into_sorted();
        assert!(sorted
            .iter()
            .map(|e| &e.name[..])
            .eq(want.iter().map(|n| &n[..])));
        let stats = |e: &Entry| (e.stats.min, e.stats.max, e.stats.sum, e.stats.count);
        assert!((sorted.iter()).all(|e| stats(e) == (0, 1, 1, 2)));
    }

    #[test]
    fn agrees_with_a_hashmap_across_growth_and_long_names() {
        let mut t = Table::default();
        let mut want: HashMap<Vec<u8>, Stats> = HashMap::new();
        for i in 0..5000usize {
            let k = i * 7919 % 1300;
            // Short, exactly 15 and 16 bytes, NUL-padded, and long names
            // sharing prefixes (tails of every length mod 8).
            let name = match k % 5 {
                0 => format!("s{k}").into_bytes(),
                1 => format!("{:0>16}", k).into_bytes(),
                2 => [format!("n{}", k % 10).into_bytes(), vec![0; k % 5]].concat(),
                3 => format!("{:0>15}", k).into_bytes(),
                _ => format!("{}{k}", "long-prefix-".repeat(k % 8)).into_bytes(),
            };
            let value = (i % 1999) as i16 - 999;
            add(&mut t, &name, value);
            expect(&mut want, &name, value);
        }
        assert_eq!(t.len(), want.len());
        assert_eq!(sorted_map(t), want);
    }

    #[test]
    fn a_short_table_is_set_aside_before_its_counts_could_overflow() {
        // Three stretches, each announced as the most one table may take:
        // the second and third start new tables, the tables set aside are
        // folded into one run, and every name's rows from all three add up
        // in the one sorted result.
        let mut t = Table::default();
        let mut want: HashMap<Vec<u8>, Stats> = HashMap::new();
        for round in 0..3i16 {
            let mut adder = t.adder(RUN_BYTES as usize);
            for name in [
                &b"x"[..],
                format!("y{round}").as_bytes(),
                b"a name past sixteen bytes",
            ] {
                for value in [round, -round * 7] {
                    assert!(adder.add(name, value));
                    expect(&mut want, name, value);
                }
            }
        }
        // Both set aside, folded into one run.
        assert_eq!(t.runs.len(), 1);
        assert_eq!(sorted_map(t), want);
    }

    #[test]
    fn a_numbered_table_set_aside_keeps_its_names_and_their_numbers() {
        // As above in a numbered table: a short name that comes again
        // after its table was set aside keeps its number, so the names
        // stay numbered once each; the short names' stats still add up,
        // and the long name's rows are kept by number.
        let mut t = Table::numbered();
        let mut want: HashMap<Vec<u8>, Stats> = HashMap::new();
        let long = b"a name past sixteen bytes";
        let mut long_rows = Vec::new();
        for round in 0..3i16 {
            let mut adder = t.adder(RUN_BYTES as usize);
            for value in [round, -round * 7] {
                for name in [&b"x"[..], b"yy"] {
                    assert!(adder.add(name, value));
                    expect(&mut want, name, value);
                }
                assert!(adder.add(long, value));
                long_rows.push((2, value));
            }
            assert_eq!(t.len(), 3);
        }
        let x = Name::Short(short::key(b"x"));
        let yy = Name::Short(short::key(b"yy"));
        assert_eq!(t.named(), [x, yy, Name::Long(long.to_vec().into())]);
        assert_eq!(t.take_long_rows().collect::<Vec<_>>(), long_rows);
        assert_eq!(t.runs.len(), 1);
        let mut got = sorted_map(t);
        got.remove(&long[..]);
        assert_eq!(got, want);
    }

    #[test]
    fn a_flooded_short_table_is_set_aside_before_its_counts_could_overflow() {
        // As above, the short table flooded first: its keyed table holds
        // slots, whose counts overflow as the table's would. Set aside, it
        // leaves a flooded table, which takes the rows to come.
        let mut t = Table::default();
        let mut want: HashMap<Vec<u8>, Stats> = HashMap::new();
        add_rows(&mut t, &mut want, &flood::colliding(15, 2_000, 3), 1);
        assert!(t.short.is_flooded());
        for round in 0..3i16 {
            let mut adder = t.adder(RUN_BYTES as usize);
            for value in [round, -round * 7] {
                assert!(adder.add(b"x", value));
                expect(&mut want, b"x", value);
            }
        }
        assert!(t.short.is_flooded());
        assert_eq!(t.runs.len(), 1);
        assert_eq!(sorted_map(t), want);
    }

    #[test]
    fn names_set_aside_count_toward_the_share_of_long_names() {
        // Twenty short names and one long: one in 21 is long. Set aside,
        // the short ones still count, though the live table holds the
        // long one alone until they come again.
        let mut t = Table::default();
        let mut adder = t.adder(RUN_BYTES as usize);
        for i in 0..20 {
            assert!(adder.add(format!("s{i}").as_bytes(), 1));
        }
        assert!(adder.add(b"a name past sixteen bytes", 1));
        assert!(adder.long_names_under(16));
        assert!(!adder.long_names_under(32));
        let adder = t.adder(1);
        assert_eq!(adder.table.len(), 1, "the short table was set aside");
        assert!(adder.long_names_under(16));
        assert!(!adder.long_names_under(32));
    }

    #[test]
    fn a_numbered_table_numbers_short_and_long_names_in_one_order_and_keeps_the_long_rows() {
        let mut t = Table::numbered();
        let long = |i: usize| format!("a long name, number {i}").into_bytes();
        let mut rows = Vec::new();
        for round in 0..3i16 {
            for i in 0..40 {
                add(&mut t, format!("s{i}").as_bytes(), round);
                add(&mut t, &long(i), round * 10 + i as i16);
                // Numbered in the order they came: `s{i}` 2i, the long one 2i + 1.
                rows.push((2 * i as u32 + 1, round * 10 + i as i16));
            }
            assert!(!t.add(b"refused name of more than 16 bytes\n", 1));
            assert_eq!(t.take_long_rows().collect::<Vec<_>>(), rows);
            rows.clear();
        }
        let want: Vec<Name> = (0..40)
            .flat_map(|i| {
                let short = short::key(format!("s{i}").as_bytes());
                [Name::Short(short), Name::Long(long(i).into())]
            })
            .collect();
        assert_eq!(t.named(), want);
        // A plain table numbers nothing and keeps no rows.
        let mut plain = Table::default();
        add(&mut plain, &long(1), 1);
        assert!(plain.named().is_empty() && plain.take_long_rows().next().is_none());
    }

    #[test]
    fn refuses_names_the_strict_parser_would_not_let_through() {
        let mut t = Table::default();
        for name in [
            &b""[..],
            b"a\nb",
            b"\xff",
            b"0123456789abcdef\nlong",
            b"0123456789abcdef\xc3(",
        ] {
            assert!(!t.add(name, 1), "{name:?}");
        }
        assert!(t.is_empty());
    }

    #[test]
    fn a_table_absorbs_another_with_its_names_and_stats() {
        // Short and long names, most in both tables and some in one, the
        // absorbing table the smaller (it grows while absorbing), every
        // kind of stats to fold (min, max, sum, count).
        let mut tables = [Table::default(), Table::default()];
        let mut want: HashMap<Vec<u8>, Stats> = HashMap::new();
        for i in 0..66_000usize {
            let (k, name) = match i {
                60_000.. if i % 2 == 0 => (0, format!("o{i}")),
                60_000.. => (1, format!("only in table one {i}")),
                _ if i % 5 == 0 => (
                    usize::from(!(50_000..54_000).contains(&i)),
                    format!("a long name {}", i % 9_000),
                ),
                _ => (
                    usize::from(!(50_000..54_000).contains(&i)),
                    format!("s{}", i % 50_000),
                ),
            };
            let value = (i * 37 % 1999) as i16 - 999;
            add(&mut tables[k], name.as_bytes(), value);
            expect(&mut want, name.as_bytes(), value);
        }
        let [mut t, other] = tables;
        assert!(t.short.slots.len() < other.short.slots.len());
        t.absorb(other);
        assert_eq!(t.len(), want.len());
        assert_eq!(sorted_map(t), want);
    }

    #[test]
    fn a_table_whose_counts_could_overflow_is_absorbed_as_a_run() {
        let mut want: HashMap<Vec<u8>, Stats> = HashMap::new();
        let mut tables = [Table::default(), Table::default()];
        for (k, t) in tables.iter_mut().enumerate() {
            let mut adder = t.adder(RUN_BYTES as usize / 2 + 1);
            for name in [&b"x"[..], b"a name past sixteen bytes"] {
                assert!(adder.add(name, k as i16));
                expect(&mut want, name, k as i16);
            }
        }
        let [mut t, other] = tables;
        t.absorb(other);
        assert_eq!(t.runs.len(), 1);
        assert_eq!(sorted_map(t), want);
    }

    /// Adds a row of each name, `rounds` times over, to `t` and to `want`,
    /// one adder per row, as the strict parser adds them.
    fn add_rows(t: &mut Table, want: &mut HashMap<Vec<u8>, Stats>, names: &[String], rounds: i16) {
        for round in 0..rounds {
            for (i, name) in names.iter().enumerate() {
                let value = (i as i16 * 7 + round) % 1999 - 999;
                add(t, name.as_bytes(), value);
                expect(want, name.as_bytes(), value);
            }
        }
    }

    #[test]
    fn names_sharing_part_of_a_hash_reseed_a_table_and_names_sharing_all_of_it_flood_it() {
        // Random names of 2 and 15 bytes; clusters of 3 and of 11 names
        // sharing the top 20 bits of the fixed hash, the third of each
        // held past the slot after its home (so a row in three walks); and
        // names sharing the whole hash. Clusters spend the probe steps and
        // the table reseeds: under the drawn multiplier they spread as
        // random names do, every name in the slots. Names sharing the
        // whole hash share every multiplier's: the reseeded table floods
        // too, and keeps the names its hot loop finds, in their home slot
        // or the next, two of them; the others' rows leave the loop for
        // good.
        let shapes = [
            (flood::random(2, 3_000, 1), false, false, 3_000..=3_000),
            (flood::random(15, 900, 1), false, false, 900..=900),
            (flood::clustered(15, 300, 3, 20, 2), true, false, 900..=900),
            (
                flood::clustered(15, 200, 11, 20, 4),
                true,
                false,
                2_200..=2_200,
            ),
            (flood::colliding(15, 2_000, 3), true, true, 2..=2),
        ];
        for (names, reseeded, flooded, held) in shapes {
            let mut t = Table::default();
            let mut want = HashMap::new();
            add_rows(&mut t, &mut want, &names, 8);
            let in_slots = t.short.slots.iter().filter(|s| s.a | s.b != 0).count();
            assert!(held.contains(&in_slots), "{in_slots} names in the slots");
            assert_eq!(t.short.is_reseeded(), reseeded, "{:?}", &names[..2]);
            assert_eq!(t.is_flooded(), flooded, "{:?}", &names[..2]);
            assert_eq!(t.adder(1).is_flooded(), flooded);
            assert_eq!(sorted_map(t), want);
        }
    }

    #[test]
    fn names_built_to_share_a_hash_take_fewer_probe_steps_than_bytes() {
        // 3,000 names sharing one 64-bit hash, each their kind's: linear
        // probing alone walks past every name before, 9 million steps
        // for the two rows of each. Growths included, the steps stay
        // below the bytes of the rows (as `Table::add` announces them).
        for len in [15, 20, 63, 100] {
            let names = flood::colliding(len, 3_000, len as u64);
            let mut t = Table::default();
            let mut want = HashMap::new();
            add_rows(&mut t, &mut want, &names, 2);
            let bytes = 2 * names.len() as u64 * (len as u64 + 7);
            let steps = t.probe_steps();
            assert!(
                steps <= bytes,
                "{len} bytes: {steps} steps for {bytes} bytes"
            );
            assert!(t.short.is_flooded() || t.long.is_flooded(), "{len} bytes");
            assert_eq!(t.len(), names.len());
            assert_eq!(sorted_map(t), want, "{len} bytes");
        }
    }

    #[test]
    fn flooded_tables_fold_into_flooded_and_plain_ones() {
        // Tables of random names, short and long, some also holding a set
        // of names that share a hash: folded into one another every way
        // round, the colliding names of two tables flooding the one that
        // takes both, and each name's rows all counted once.
        // Per kind, twice as many names sharing a hash as one table holds.
        let colliding = [(15, 130), (40, 90)].map(|(len, n)| (n, flood::colliding(len, 2 * n, 1)));
        for (flood_x, flood_y) in [(false, false), (true, false), (false, true), (true, true)] {
            let mut want = HashMap::new();
            let mut tables = [Table::default(), Table::default()];
            for (k, (t, flooded)) in tables.iter_mut().zip([flood_x, flood_y]).enumerate() {
                for len in [9, 30] {
                    add_rows(t, &mut want, &flood::random(len, 300, k as u64), 2);
                }
                // Half of each colliding set in each table: few enough
                // names on one home slot for one table's probe steps, too
                // many for both tables'.
                for (n, names) in &colliding {
                    add_rows(t, &mut want, &names[n * k..][..*n], 1);
                }
                if flooded {
                    let names = [flood::colliding(14, 200, 3), flood::colliding(70, 200, 4)];
                    for names in &names {
                        add_rows(t, &mut want, names, 1);
                    }
                    assert!(t.short.is_flooded() && t.long.is_flooded());
                } else {
                    assert!(!t.short.is_flooded() && !t.long.is_flooded());
                }
            }
            let [mut t, other] = tables;
            t.absorb(other);
            // Flooded by the colliding names of both, unless the other
            // table was flooded and set aside as a run.
            let flooded = flood_x || !flood_y;
            assert_eq!(t.short.is_flooded(), flooded);
            assert_eq!(t.long.is_flooded(), flooded);
            assert_eq!(sorted_map(t), want, "{flood_x} {flood_y}");
        }
    }

    #[test]
    fn a_hash_taken_before_the_table_reseeds_and_floods_still_finds_its_name() {
        // The batched feed hashes rows a batch ahead (`Adder::hash`), and
        // the table may reseed, and flood, before it adds them: the names
        // it holds are found where the drawn multiplier put them, not
        // taken for new ones.
        let held = flood::random(12, 1_000, 1);
        let mut t = Table::default();
        let mut want = HashMap::new();
        add_rows(&mut t, &mut want, &held, 1);
        let mut adder = t.adder(1 << 20);
        let keys: Vec<(u64, u64)> = held.iter().map(|n| short::key(n.as_bytes())).collect();
        let hashes: Vec<u64> = keys.iter().map(|&(a, b)| adder.hash(a, b)).collect();
        for name in flood::colliding(15, 2_000, 3) {
            assert!(adder.add(name.as_bytes(), 1));
            expect(&mut want, name.as_bytes(), 1);
        }
        assert!(adder.is_flooded());
        for ((&(a, b), &hash), name) in keys.iter().zip(&hashes).zip(&held) {
            assert!(adder.add_short_hashed::<()>(hash, a, b, 2).is_some());
            expect(&mut want, name.as_bytes(), 2);
        }
        assert!(t.short.is_reseeded());
        assert_eq!(sorted_map(t), want);
    }

    #[test]
    fn reseeded_tables_fold_into_reseeded_and_plain_ones() {
        // Tables of random names, two of them reseeded by clusters of
        // names sharing the top bits of the fixed hash, each under a
        // multiplier of its own: folded into one another every way round,
        // each name's rows all counted once, and a table that was not
        // reseeded stays so.
        let clusters = flood::clustered(15, 100, 9, 20, 5);
        let make = |k: usize, reseeded: bool, want: &mut HashMap<Vec<u8>, Stats>| {
            let mut t = Table::default();
            add_rows(&mut t, want, &flood::random(11, 500, k as u64), 2);
            if reseeded {
                add_rows(&mut t, want, &clusters[450 * (k % 2)..][..450], 2);
            }
            assert_eq!(t.short.is_reseeded(), reseeded);
            assert!(!t.is_flooded());
            t
        };
        for (x, y) in [(true, true), (true, false), (false, true)] {
            let mut want = HashMap::new();
            let mut t = make(0, x, &mut want);
            t.absorb(make(1, y, &mut want));
            assert_eq!(t.short.is_reseeded(), x);
            assert!(!t.is_flooded());
            assert_eq!(sorted_map(t), want, "{x} {y}");
        }
    }

    #[test]
    fn sorted_tables_merge_into_one_run() {
        // Two threads' tables of 200,000 names each, short and long, every
        // name in both: merged, each name once with both rows.
        let mut parts = [Table::default(), Table::default()];
        for i in 0..400_000usize {
            let name = match i / 2 % 3 {
                0 => format!("st{}", i / 2),
                _ => format!("a long station name {}", i / 2),
            };
            add(&mut parts[i % 2], name.as_bytes(), 1);
        }
        let runs = parts.map(Table::into_sorted).to_vec();
        let merged = merge_runs(runs);
        assert_eq!(merged.len(), 200_000);
        assert!(merged.windows(2).all(|w| w[0].name < w[1].name));
        assert!(merged
            .iter()
            .all(|e| e.stats.count == 2 && e.stats.sum == 2));
    }
}

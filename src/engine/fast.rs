//! The `fast` and `swar` engines: the hand-written scanner and table.
//!
//! Each chunk is parsed in place by [`crate::scan`] except for its
//! last [`PAD`] bytes, which are copied into a zero-padded buffer so the
//! scanner's wide reads never leave the chunk. Any line the scanner does
//! not accept goes to the strict parser: it is either valid after all
//! (added like any other) or the chunk's first fault.

use std::sync::Arc;

use crate::engine::counted::{Beyond, Counted};
use crate::engine::Accumulator;
use crate::error::Fault;
use crate::parse::{self, MAX_ROW_LEN};
use crate::scan::{self, Dispatch, PAD};
use crate::summary::Entry;
use crate::table::{Adder, Partitions, Staging, Table};
use crate::tuning::{BATCH_ODD_STRETCHES, COUNTED_STRETCH, FIRST_PACE, STRETCH};

/// Bytes scanned per call of the scanner: a bound for the table's counts
/// (see [`Table::adder`]), far above any chunk size in practice.
const PIECE: usize = 1 << 30;

/// Where to cut the lines that start in `chunk[from..limit]` into `N`
/// stretches: after the first `\n` at or after each even split point.
/// `None` if a split point has no `\n` within a valid line's length:
/// a chunk can be one malformed line of any length (a driver's chunk
/// ends with such a line), which must not be read through; then it is
/// read as one stretch.
fn cuts<const N: usize>(chunk: &[u8], from: usize, limit: usize) -> Option<[usize; N]> {
    let mut cuts = [limit; N];
    for (k, cut) in cuts[..N - 1].iter_mut().enumerate() {
        let at = from + (limit - from) / N * (k + 1);
        let near = &chunk[at..limit.min(at + MAX_ROW_LEN + 1)];
        *cut = at + memchr::memchr(b'\n', near)? + 1;
    }
    Some(cuts)
}

/// One thread's stations, scanned by the best kernel the CPU has or, if
/// `SWAR`, by the portable one: its own table while that holds few names,
/// the run's partitions for the names it hands over once it holds many
/// (docs/PERFORMANCE.md, *Memory*); and what it keeps beyond the table's
/// stats, `B` ([`Beyond`]: counts per value, through a table that numbers
/// its names and keeps them all).
pub struct HandWritten<const SWAR: bool, B: Beyond = ()> {
    table: Table,
    beyond: B,
    /// The run's partitions, shared with its other threads.
    parts: Arc<Partitions>,
    staging: Staging,
    /// Bytes of input per new name in the last stretch: how long the next
    /// stretch may be before the table could pass its bound.
    pace: usize,
}

impl<const SWAR: bool, B: Beyond> Default for HandWritten<SWAR, B> {
    /// An engine with partitions of its own.
    fn default() -> Self {
        Self::with_parts(Arc::default())
    }
}

impl<const SWAR: bool> Clone for HandWritten<SWAR> {
    /// A copy with a copy of the partitions, not a share of them.
    fn clone(&self) -> Self {
        HandWritten {
            table: self.table.clone(),
            beyond: (),
            parts: Arc::new(Partitions::clone(&self.parts)),
            staging: self.staging.clone(),
            pace: self.pace,
        }
    }
}

/// The `fast` engine: the hand-written scanner with the best kernel.
pub type Fast = HandWritten<false>;

/// The `swar` engine: the hand-written scanner with the portable kernel.
pub type SwarEngine = HandWritten<true>;

/// The `fast` engine keeping counts per value.
pub type FastCounted = HandWritten<false, Counted>;

/// The `swar` engine keeping counts per value.
pub type SwarCounted = HandWritten<true, Counted>;

impl<const SWAR: bool, B: Beyond> HandWritten<SWAR, B> {
    const DISPATCH: Dispatch = if SWAR { Dispatch::Swar } else { Dispatch::Best };

    fn with_parts(parts: Arc<Partitions>) -> Self {
        HandWritten {
            table: match B::NUMBERED {
                true => Table::numbered(),
                false => Table::default(),
            },
            beyond: B::default(),
            parts,
            staging: Staging::default(),
            pace: FIRST_PACE,
        }
    }

    /// Bytes the next stretch may take: [`STRETCH`] while names come
    /// slowly, as in the 413 and 10K sets after their first stretches;
    /// while they come fast, about as many as bring the table to its bound
    /// at the pace of the last stretch, so that a table is handed over
    /// before it grows much past its bound (docs/PERFORMANCE.md, *Memory*).
    /// A table that numbers its names keeps them all, and its stretches
    /// are shorter ([`COUNTED_STRETCH`]).
    fn stretch(&self) -> usize {
        if B::NUMBERED {
            return COUNTED_STRETCH;
        }
        let bound = self.parts.bound();
        let room = bound.saturating_sub(self.table.len());
        room.saturating_mul(self.pace).max(4 * bound).min(STRETCH)
    }

    /// After a stretch of `bytes` that found the table holding `before`
    /// names: the pace of new names, and the hand-over of a table that has
    /// reached its bound.
    fn stretched(&mut self, bytes: usize, before: usize) {
        let len = self.table.len();
        self.pace = bytes / len.saturating_sub(before).max(1);
        if len >= self.parts.bound() && !B::NUMBERED {
            self.hand_off();
        }
    }

    /// Hands the table's names to the partitions, leaving it empty.
    #[cold]
    #[inline(never)]
    fn hand_off(&mut self) {
        let staging = &mut self.staging;
        self.table.drain(|name, stats| staging.push(name, stats));
        self.parts.hand_off(staging);
    }

    /// Parses the lines starting in `p..end` (the first at `p`), handing
    /// any line the scanner does not accept to the strict parser; returns
    /// the first line start at or after `end`.
    fn finish(
        &mut self,
        chunk: &[u8],
        mut p: usize,
        end: usize,
        offset: usize,
    ) -> Result<usize, Fault> {
        while p < end {
            let stop = end.min(p + PIECE);
            let mut adder = self.table.adder(stop - p + PAD);
            p = match scan::scan(Self::DISPATCH, &mut adder, &mut self.beyond, chunk, p, stop) {
                Ok(next) => next,
                Err(bad) => self.strict_line(chunk, bad, offset)?,
            };
        }
        Ok(p)
    }

    /// Parses the lines starting in `p..stop` as `N` stretches side by
    /// side by `scan`, then finishes each stretch in turn: in input order,
    /// so the first fault found is the chunk's first. Returns the first
    /// line start at or after `stop`.
    fn side_by_side<const N: usize>(
        &mut self,
        chunk: &[u8],
        p: usize,
        stop: usize,
        offset: usize,
        scan: impl FnOnce(&mut Adder, &mut B, &mut [usize; N], &[usize; N]),
    ) -> Result<usize, Fault> {
        let mut ends = [stop; N];
        let mut starts = [stop; N];
        starts[0] = p;
        if let Some(cuts) = cuts::<N>(chunk, p, stop) {
            ends = cuts;
            starts[1..].copy_from_slice(&cuts[..N - 1]);
            let mut adder = self.table.adder(stop - p + PAD);
            scan(&mut adder, &mut self.beyond, &mut starts, &ends);
        }
        let mut p = p;
        for (&start, &end) in starts.iter().zip(&ends) {
            p = self.finish(chunk, start.max(p), end, offset)?;
        }
        Ok(p)
    }

    /// Parses the line at `p` with the strict parser; returns where the
    /// next line starts.
    #[cold]
    fn strict_line(&mut self, chunk: &[u8], p: usize, offset: usize) -> Result<usize, Fault> {
        let (line, end) = parse::line_at(chunk, p);
        let fault = |kind| Fault {
            offset: offset + p,
            kind,
        };
        let (name, value) = parse::parse_line(line).map_err(fault)?;
        parse::check_name(name).map_err(fault)?;
        if !self.beyond.strict(name, value.into()) {
            // Checked as the table checks names: `add` refuses none of these.
            let added = self.table.add(name, value);
            debug_assert!(added);
        }
        Ok(end)
    }
}

impl<const SWAR: bool, B: Beyond> Accumulator for HandWritten<SWAR, B> {
    // The table refuses such names, and the strict parser that gets them
    // checks them, as [`Beyond`] does.
    const CHECKS_UTF8: bool = true;

    fn feed(&mut self, chunk: &[u8], offset: usize) -> Result<(), Fault> {
        if let Some(fed) = self.beyond.feed(chunk, offset) {
            return fed;
        }
        let mut p = 0;
        // The body: every line starting at least PAD bytes before the end,
        // a stretch (at most `STRETCH` bytes) at a time.
        if let Some(limit) = chunk.len().checked_sub(PAD) {
            while p < limit {
                let (from, names) = (p, self.table.len());
                let stop = limit.min(p + self.stretch());
                // The lanes feed while the table fits the L2 cache; the
                // batched one of `scan_lockstep` past it, and under `cargo
                // fuzz` for odd stretches, so that small inputs reach it.
                let big = self.table.is_big();
                let batched = big || (BATCH_ODD_STRETCHES && stop % 2 == 1);
                p = if scan::has_lanes(Self::DISPATCH) && !batched {
                    self.side_by_side(chunk, p, stop, offset, |adder, log, ps, ends| {
                        scan::scan_lanes(Self::DISPATCH, adder, log, chunk, ps, ends)
                    })?
                } else {
                    self.side_by_side(chunk, p, stop, offset, |adder, log, ps, ends| {
                        scan::scan_lockstep(Self::DISPATCH, adder, log, chunk, ps, ends)
                    })?
                };
                self.beyond.settle(&mut self.table);
                self.stretched(p - from, names);
                if self.beyond.outgrows(&mut self.table) {
                    let rest = self.beyond.feed(&chunk[p..], offset + p);
                    return rest.expect("taken over");
                }
            }
        }
        // The tail, at most PAD bytes, in a zero-padded copy. A chunk that
        // does not end in `\n` ends the input, whose last line may lack it.
        let rest = &chunk[p..];
        let mut buf = [0u8; 2 * PAD + 1];
        buf[..rest.len()].copy_from_slice(rest);
        let mut r = rest.len();
        if rest.last().is_some_and(|&c| c != b'\n') {
            buf[r] = b'\n';
            r += 1;
        }
        let mut adder = self.table.adder(r);
        let tail = scan::scan(Self::DISPATCH, &mut adder, &mut self.beyond, &buf, 0, r);
        if let Err(bad) = tail {
            // Rare: finish the tail line by line with the strict parser.
            let mut q = p + bad;
            while q < chunk.len() {
                q = self.strict_line(chunk, q, offset)?;
            }
        }
        self.beyond.settle(&mut self.table);
        Ok(())
    }

    type Shared = Partitions;

    fn sharing(shared: &Arc<Partitions>) -> Self {
        Self::with_parts(Arc::clone(shared))
    }

    /// The table's names alone while no names were handed over, as with
    /// the 413 and 10K sets; else the partitions', once this table's are
    /// handed over too: the run's other engines have been absorbed. What
    /// a numbered table's names keep gives their entries.
    fn into_sorted(mut self) -> Vec<Entry> {
        if B::NUMBERED {
            return self.beyond.into_sorted(self.table);
        }
        if !self.parts.is_used() {
            return self.table.into_sorted();
        }
        self.hand_off();
        self.parts.take_sorted()
    }

    const ABSORBS: bool = true;

    /// Another run's partitions, if `other` has its own, are handed over
    /// to these name by name. A numbered table's names go with what they
    /// keep.
    fn absorb(&mut self, other: Self) {
        if B::NUMBERED {
            return self.beyond.absorb(other.beyond, other.table);
        }
        if !Arc::ptr_eq(&self.parts, &other.parts) && other.parts.is_used() {
            for entry in other.parts.take_sorted() {
                self.staging.push(&entry.name, entry.stats);
            }
            self.parts.hand_off(&mut self.staging);
        }
        self.table.absorb(other.table);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::Summary;
    use crate::table::flood;
    use crate::{aggregate, Engine, Options};

    /// Past [`crate::engine::counted::SPILL_NAMES`] names a thread's
    /// counts per value go on in the keeping loop, from within a chunk:
    /// short and long names, a last line without its `\n`, one thread or
    /// two, the same summary as `naive`'s.
    #[test]
    fn counts_per_value_go_on_past_the_names_a_table_keeps() {
        use crate::engine::counted::SPILL_NAMES;
        use std::io::Write;
        let mut input = Vec::new();
        for round in 0..2 {
            for i in 0..SPILL_NAMES + SPILL_NAMES / 2 {
                let long = if i % 7 == 0 {
                    "-of-more-than-16-bytes"
                } else {
                    ""
                };
                writeln!(input, "n{i}{long};{}.{round}", (i * 7 + round) % 100).unwrap();
            }
        }
        input.extend(b"n1;-1.5");
        let mut engine = FastCounted::default();
        engine.feed(&input, 0).expect("valid input");
        assert!(engine.beyond.took_over());
        for threads in [1, 2] {
            counts_as_naive(&input, threads, 1 << 20);
        }
    }

    /// A thread past the names its table keeps checks the names it reads
    /// then as it did before: the first fault is `naive`'s, whether a name
    /// not UTF-8 or a line without `;` comes first.
    #[test]
    fn counts_per_value_past_the_names_a_table_keeps_meet_faults_as_naive_does() {
        use crate::engine::counted::SPILL_NAMES;
        use crate::{aggregate_keeping, Kept};
        use std::io::Write;
        let mut valid = Vec::new();
        for i in 0..SPILL_NAMES + 100 {
            writeln!(valid, "n{i};{}.5", i % 100).unwrap();
        }
        for faults in [
            &b"x\xff;1.0\nno semicolon\n"[..],
            b"no semicolon\nx\xff;1.0\n",
        ] {
            let mut input = valid.clone();
            input.extend(faults);
            input.extend(b"n1;2.0\n");
            let mut engine = FastCounted::default();
            let fault = engine.feed(&input, 0).unwrap_err();
            assert!(engine.beyond.took_over());
            assert_eq!(fault.offset, valid.len());
            let options = Options {
                threads: 1,
                chunk_size: 1 << 20,
            };
            let run = |engine| aggregate_keeping(&input, Kept::Counts, engine, &options);
            let want = run(Engine::Naive).unwrap_err().to_string();
            for engine in [Engine::Fast, Engine::Swar] {
                assert_eq!(run(engine).unwrap_err().to_string(), want, "{engine:?}");
            }
        }
    }

    /// Checks that the fast and swar engines keeping counts per value give
    /// `naive`'s summary of `input`.
    fn counts_as_naive(input: &[u8], threads: usize, chunk_size: usize) {
        use crate::{aggregate_keeping, Kept};
        let options = Options {
            threads,
            chunk_size,
        };
        let want = aggregate_keeping(input, Kept::Counts, Engine::Naive, &options).unwrap();
        for engine in [Engine::Fast, Engine::Swar] {
            let got = aggregate_keeping(input, Kept::Counts, engine, &options).unwrap();
            assert!(got == want, "{engine:?}, {threads} threads");
        }
    }

    /// Names built to share a hash reseed and flood a table that numbers
    /// its names as they do any other, short and long: each keeps its
    /// number, and the counts are `naive`'s.
    #[test]
    fn numbered_tables_keep_their_numbers_through_reseeds_and_floods() {
        let mut input = flood::rows(&flood::clustered(15, 1_000, 11, 20, 3), 6, 4);
        input.extend(flood::rows(&flood::colliding(15, 3_000, 15), 3, 1));
        for len in [20, 40] {
            input.extend(flood::rows(&flood::colliding(len, 3_000, 15), 3, 1));
        }
        counts_as_naive(&input, 1, input.len());
    }

    /// A name read more than 2^16 times with one value by one thread, in
    /// lanes and lockstep feeds and past a row's 16-bit count, among names
    /// short and long: `naive`'s counts.
    #[test]
    fn counts_per_value_past_16_bits_in_a_thread_are_naive_s() {
        let mut input = Vec::new();
        for i in 0..(1 << 16) + 1000 {
            input.extend(b"busy;-12.3\n");
            if i % 1000 == 0 {
                input.extend(format!("n{};{}.5\n", i % 7, i % 100).as_bytes());
                input.extend(b"a name of more than sixteen bytes;99.9\n");
            }
        }
        counts_as_naive(&input, 1, input.len());
    }

    /// A counted feed that meets a fault returns before it takes in its
    /// log: what it had read reaches its entries all the same.
    #[test]
    fn a_counted_feed_stopped_by_a_fault_keeps_the_rows_it_logged() {
        let mut engine = FastCounted::default();
        assert!(engine.feed(b"a;1.0\nb;-2.5\nno semicolon\n", 0).is_err());
        let names: Vec<Vec<u8>> = (engine.into_sorted().into_iter())
            .map(|e| e.name.to_vec())
            .collect();
        assert_eq!(names, [b"a".to_vec(), b"b".to_vec()]);
    }

    /// Feeds `input` to an engine as one chunk, checking its result
    /// against `naive`'s; its probe steps past home slots, whether its
    /// table flooded, and whether it reseeded.
    fn feed_and_check<const SWAR: bool>(input: &[u8]) -> (u64, bool, bool) {
        let mut engine = HandWritten::<SWAR>::default();
        engine.feed(input, 0).expect("valid input");
        let table = &engine.table;
        let steps = (table.probe_steps(), table.is_flooded(), table.is_reseeded());
        let got = Summary::from_entries(engine.into_sorted(), None).expect("valid names");
        let options = Options {
            threads: 1,
            chunk_size: input.len(),
        };
        let want = aggregate(input, Engine::Naive, &options).expect("valid input");
        assert!(got == want, "{} stations", want.len());
        steps
    }

    /// Names built to share one hash, short, 16–31 bytes (the AVX2
    /// kernel's one-window names), and long, through the scanner: fewer
    /// probe steps than bytes, where linear probing alone walks past every
    /// name before (13.5 million steps for these 3,000 names' 9,000
    /// rows), and `naive`'s result.
    fn names_built_to_share_a_hash<const SWAR: bool>() {
        for len in [15, 20, 63, 100] {
            let names = flood::colliding(len, 3_000, len as u64);
            let input = flood::rows(&names, 3, 1);
            let (steps, flooded, _) = feed_and_check::<SWAR>(&input);
            assert!(steps <= input.len() as u64, "{len} bytes: {steps} steps");
            assert!(flooded, "{len} bytes");
        }
    }

    #[test]
    fn names_handed_to_the_partitions_are_counted_once() {
        // Three engines of one run and one of a run of its own, tables
        // bound to 50 names: each feeds pieces of an input of 2,000 names
        // (short, long, multi-byte, with NUL) met three times, handing its
        // names over every few dozen. Folded into one, every name comes
        // out once with all its rows; a name lost or counted twice in a
        // hand-over would change the result.
        use std::io::Write;
        crate::tuning::set_hand_off_names(50);
        let parts = Arc::new(Partitions::default());
        let mut engines: Vec<Fast> = (0..3).map(|_| Fast::sharing(&parts)).collect();
        engines.push(Fast::default());
        crate::tuning::set_hand_off_names(0);
        let mut input = Vec::new();
        for round in 0..3 {
            for k in 0..2000usize {
                let name = match k % 4 {
                    0 => format!("s{k}"),
                    1 => format!("a long station name {k}"),
                    2 => format!("é{k}\0"),
                    _ => format!("{k}{}", "東".repeat(k % 30)),
                };
                writeln!(input, "{name};{}.{}", (k + round) % 100, k % 10).unwrap();
            }
        }
        let mut start = 0;
        for piece in 0..12 {
            let end = if piece == 11 {
                input.len()
            } else {
                parse::line_at(&input, input.len() * (piece + 1) / 12).1
            };
            engines[piece % 4].feed(&input[start..end], start).unwrap();
            start = end;
        }
        assert!(engines.iter().all(|e| e.table.len() < 2000));
        let mut engines = engines.into_iter();
        let mut first = engines.next().unwrap();
        engines.for_each(|e| first.absorb(e));
        assert!(parts.is_used());
        let got = Summary::from_entries(first.into_sorted(), None).unwrap();
        let options = Options {
            threads: 1,
            chunk_size: input.len(),
        };
        let want = aggregate(&input, Engine::Naive, &options).unwrap();
        assert_eq!(got.len(), 2000);
        assert!(got == want);
    }

    #[test]
    fn fast_takes_few_probe_steps_on_names_built_to_share_a_hash() {
        names_built_to_share_a_hash::<false>();
    }

    #[test]
    fn swar_takes_few_probe_steps_on_names_built_to_share_a_hash() {
        names_built_to_share_a_hash::<true>();
    }

    #[test]
    fn a_big_table_flooded_mid_stretch_keeps_every_row() {
        // Enough random names for the short table to outgrow the L2 cache
        // within each stream's first part, so that the colliding names at
        // the end come through the batched feed.
        let mut input = flood::rows(&flood::random(12, 100_000, 1), 1, 2);
        input.extend(flood::rows(&flood::colliding(15, 2_000, 3), 2, 4));
        assert!(feed_and_check::<false>(&input).1);
        assert!(feed_and_check::<true>(&input).1);
    }

    #[test]
    fn a_big_table_reseeded_mid_stretch_keeps_every_row() {
        // As above, with clusters of names sharing the top 20 bits of the
        // fixed hash, met again and again, so that their rows past the
        // slot after their home spend the probe steps: the table, big
        // enough for the batched feed (its names kept, not handed over),
        // reseeds within a batch whose hashes were taken under the fixed
        // multiplier, and does not flood.
        crate::tuning::set_hand_off_names(1 << 22);
        let mut input = flood::rows(&flood::random(12, 100_000, 1), 1, 2);
        input.extend(flood::rows(&flood::clustered(15, 1_000, 11, 20, 3), 6, 4));
        for (_, flooded, reseeded) in [
            feed_and_check::<false>(&input),
            feed_and_check::<true>(&input),
        ] {
            assert!(reseeded && !flooded);
        }
        crate::tuning::set_hand_off_names(0);
    }
}

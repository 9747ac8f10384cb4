//! The `fast` and `swar` engines: the hand-written scanner and table.
//!
//! Each chunk is parsed in place by [`crate::scan`] except for its
//! last [`PAD`] bytes, which are copied into a zero-padded buffer so the
//! scanner's wide reads never leave the chunk. Any line the scanner does
//! not accept goes to the strict parser: it is either valid after all
//! (added like any other) or the chunk's first fault.

use crate::engine::Accumulator;
use crate::entry::Entry;
use crate::error::Fault;
use crate::parse::{self, MAX_LINE_LEN};
use crate::scan::{self, Dispatch, PAD};
use crate::table::Table;
use crate::tuning::{STREAMS, STRETCH};

/// Bytes scanned per call of the scanner: a bound for the table's counts
/// (see [`Table::adder`]), far above any chunk size in practice.
const PIECE: usize = 1 << 30;

/// Where to cut the lines that start in `chunk[from..limit]` into
/// [`STREAMS`] stretches: after the first `\n` at or after each even split
/// point. `None` if a split point has no `\n` within a valid line's length:
/// a chunk can be one malformed line of any length (a driver's chunk
/// ends with such a line), which must not be read through; then it is
/// read as one stretch.
fn cuts(chunk: &[u8], from: usize, limit: usize) -> Option<[usize; STREAMS - 1]> {
    let mut cuts = [0; STREAMS - 1];
    for (k, cut) in cuts.iter_mut().enumerate() {
        let at = from + (limit - from) / STREAMS * (k + 1);
        let near = &chunk[at..limit.min(at + MAX_LINE_LEN + 1)];
        *cut = at + memchr::memchr(b'\n', near)? + 1;
    }
    Some(cuts)
}

/// One thread's stations, scanned by the best kernel the CPU has or, if
/// `SWAR`, by the portable one.
#[derive(Clone, Default)]
pub struct HandWritten<const SWAR: bool> {
    table: Table,
}

/// The `fast` engine: the hand-written scanner with the best kernel.
pub type Fast = HandWritten<false>;

/// The `swar` engine: the hand-written scanner with the portable kernel.
pub type Swar = HandWritten<true>;

impl<const SWAR: bool> HandWritten<SWAR> {
    const DISPATCH: Dispatch = if SWAR { Dispatch::Swar } else { Dispatch::Best };

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
            p = match scan::scan(Self::DISPATCH, &mut adder, chunk, p, stop) {
                Ok(next) => next,
                Err(bad) => self.strict_line(chunk, bad, offset)?,
            };
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
        // Checked as the table checks names: `add` refuses none of these.
        let added = self.table.add(name, value);
        debug_assert!(added);
        Ok(end)
    }
}

impl<const SWAR: bool> Accumulator for HandWritten<SWAR> {
    // The table refuses such names, and the strict parser that gets them
    // checks them.
    const CHECKS_UTF8: bool = true;

    fn feed(&mut self, chunk: &[u8], offset: usize) -> Result<(), Fault> {
        let mut p = 0;
        // The body: every line starting at least PAD bytes before the end,
        // `STRETCH` bytes at a time.
        if let Some(limit) = chunk.len().checked_sub(PAD) {
            while p < limit {
                let stop = limit.min(p + STRETCH);
                // Parsed side by side, then each stretch finished in turn: in
                // input order, so the first fault found is the chunk's first.
                let mut ends = [stop; STREAMS];
                let mut starts = [stop; STREAMS];
                starts[0] = p;
                if let Some(cuts) = cuts(chunk, p, stop) {
                    ends[..STREAMS - 1].copy_from_slice(&cuts);
                    starts[1..].copy_from_slice(&cuts);
                    let mut adder = self.table.adder(stop - p + PAD);
                    scan::scan_lockstep(Self::DISPATCH, &mut adder, chunk, &mut starts, &ends);
                }
                for (&start, &end) in starts.iter().zip(&ends) {
                    p = self.finish(chunk, start.max(p), end, offset)?;
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
        if let Err(bad) = scan::scan(Self::DISPATCH, &mut adder, &buf, 0, r) {
            // Rare: finish the tail line by line with the strict parser.
            let mut q = p + bad;
            while q < chunk.len() {
                q = self.strict_line(chunk, q, offset)?;
            }
        }
        Ok(())
    }

    fn into_sorted(self) -> Vec<Entry> {
        self.table.into_sorted()
    }

    const ABSORBS: bool = true;

    fn absorb(&mut self, other: Self) {
        self.table.absorb(other.table);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::Summary;
    use crate::table::flood;
    use crate::{aggregate, Engine, Options};

    /// Feeds `input` to an engine as one chunk, checking its result
    /// against `naive`'s; its probe steps past home slots, and whether its
    /// table flooded.
    fn feed_and_check<const SWAR: bool>(input: &[u8]) -> (u64, bool) {
        let mut engine = HandWritten::<SWAR>::default();
        engine.feed(input, 0).expect("valid input");
        let steps = (engine.table.probe_steps(), engine.table.is_flooded());
        let got = Summary::from_entries(engine.into_sorted(), None).expect("valid names");
        let options = Options {
            threads: 1,
            chunk_size: input.len(),
        };
        let want = aggregate(Engine::Naive, input, &options).expect("valid input");
        assert!(got == want, "{} stations", want.stations.len());
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
            let (steps, flooded) = feed_and_check::<SWAR>(&input);
            assert!(steps <= input.len() as u64, "{len} bytes: {steps} steps");
            assert!(flooded, "{len} bytes");
        }
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
}

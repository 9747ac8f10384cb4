//! Reading a line a word or a vector at a time: the fast engines' parser.
//!
//! [`parse_line`](crate::parse::parse_line) is the definition of the
//! grammar; this module computes the same thing without a loop over bytes:
//! one 32-byte AVX2 load is compared with `;` and `\n` (on CPUs without
//! AVX2, two 8-byte SWAR steps find the `;`), a name of 32 bytes or more
//! is found in four such windows at once, and the value is parsed and
//! validated from one 8-byte word with no data-dependent branch but the
//! verdict. Anything unusual (a malformed line, the end of a chunk, a name
//! the table refuses) makes the scanner stop and hand the line to the
//! strict parser, so both always agree on what is valid. With AVX2, a row
//! of a long name is added a row late, and a refusal is learnt when the
//! scan ends: every scan reads its chunk through a [`ChunkAdder`], which
//! keeps such rows borrowing the chunk, and ends by settling them.
//!
//! A chunk is read as stretches side by side: each line's start depends
//! on the line before, and independent stretches give the CPU other work
//! while it waits. With AVX2, [`LANES`] of them a line each per round,
//! their values parsed together in one vector ([`scan_lanes`]); otherwise,
//! or once the table outgrows the L2 cache, [`STREAMS`] in lockstep
//! ([`scan_lockstep`]).
//!
//! What bounds the loop is less its instruction count than how long each
//! row waits: rows in flight fill the CPU's scheduler while their loads
//! and multiplies finish. A hash with fewer instructions but a longer
//! chain was slower; taking cycles off the chain from a line's start to
//! its value and slot (the AVX2 window gives the value's form, and the
//! key is cut from word loads, neither waiting on another load) was
//! faster (docs/PERFORMANCE.md, *The scanner*).
//!
//! Every line read here may touch up to [`PAD`] bytes from its start; the
//! safe entry points only start lines at least that far from the end of
//! their buffer, which is what makes the unchecked loads inside sound.

mod feed;
mod kernel;
mod line;
mod swar;
mod value;
#[cfg(target_arch = "x86_64")]
mod x86_64;

use self::feed::{batched, lockstep, Feed};
use self::line::lines;
use self::swar::Swar;
pub use self::value::parse_value;
use crate::table::{Adder, ChunkAdder, Numbering};
use crate::tuning::{BATCH_ODD_STRETCHES, KEEP_LONG_SHARE, LANES, SLICE, STREAMS};

/// Bytes a line read may touch past its start: four 32-byte windows reach
/// past the longest name (100 bytes), and the value's 8-byte read ends at
/// most 109 bytes in.
pub(crate) const PAD: usize = 128;

/// What a scan keeps of each short name's row besides adding it to the
/// table: nothing (`()`, every run of the basic stats), or the row by its
/// name's number, where the table numbers its names
/// ([`Table::numbered`](crate::table::Table::numbered)), for a caller that
/// keeps more of a name than its slot holds. The long names' rows that
/// the scanner adds a row late, the table keeps by number itself
/// ([`Table::take_long_rows`](crate::table::Table::take_long_rows)).
pub trait Log: Numbering {
    /// Keeps the row of `value` tenths (a text value, -999 to 999) of the
    /// name numbered `id`.
    fn row(&mut self, id: u32, value: i64);
}

/// No log: the table's stats are all a run keeps.
impl Log for () {
    #[inline(always)]
    fn row(&mut self, _id: u32, _value: i64) {}
}

/// Which kernel a scan runs: the one place it is chosen is [`avx2`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dispatch {
    /// The best this CPU has (AVX2 if present, else SWAR).
    Best,
    /// The portable SWAR kernel, whatever the CPU: the `swar` engine, and
    /// how the fallback is tested on AVX2 CPUs.
    Swar,
}

/// Whether [`Dispatch::Best`] is AVX2 on this CPU (with BMI1 and BMI2,
/// which every AVX2 CPU has, for shifts that need no `cl` register).
fn avx2(dispatch: Dispatch) -> bool {
    #[cfg(target_arch = "x86_64")]
    if dispatch == Dispatch::Best {
        return x86_64::available();
    }
    let _ = dispatch;
    false
}

/// Parses the lines of `buf` that start in `start..limit` into `adder`'s
/// table and `log`, bounds and CPU features checked.
/// Returns `Ok(p)`, the first line start at or after `limit`, or `Err(p)`,
/// the start of a line the scanner does not accept (the caller hands it to
/// the strict parser). If that line holds a name the table refused, which
/// is always a fault of the input, lines after it may have been added too.
///
/// # Panics
/// If `limit + PAD > buf.len()`.
pub(crate) fn scan<L: Log>(
    dispatch: Dispatch,
    adder: &mut Adder,
    log: &mut L,
    buf: &[u8],
    start: usize,
    limit: usize,
) -> Result<usize, usize> {
    assert!(limit.saturating_add(PAD) <= buf.len());
    let mut adder = adder.for_chunk(buf);
    // SAFETY: bounds asserted above; AVX2 and BMI detected at run time,
    // and SWAR needs no CPU feature.
    let stop = unsafe {
        match avx2(dispatch) {
            #[cfg(target_arch = "x86_64")]
            true => x86_64::lines_avx2(&mut adder, log, start, limit),
            _ => lines::<Swar, L>(&mut adder, log, start, limit),
        }
    };
    // A refused long row comes before where the scan stopped.
    match adder.settle() {
        Some(at) => Err(at),
        None => stop,
    }
}

/// Parses [`STREAMS`] stretches of `buf` side by side: stream `k` from
/// `ps[k]` while its lines start before `ends[k]`, into `adder`'s table
/// and `log`, bounds and CPU features checked.
/// Returns when any stream is done or meets a line the scanner does not
/// accept, each `ps[k]` at the first line of stream `k` not yet added; the
/// caller finishes the streams one by one with [`scan`]. If that line holds
/// a name the table refused, which is always a fault of the input, lines
/// after it may have been added too.
///
/// A short table past the L2 cache is fed a batch of rows behind, its
/// slots prefetched ([`Adder::is_big`]), from the row where it outgrows
/// the cache: a million names' tables do so within the first stretch of
/// each thread, whose rows fed plainly held a good share of a profile's
/// samples (docs/PERFORMANCE.md, *The scanner*).
///
/// # Panics
/// If some `ends[k] + PAD > buf.len()`.
pub(crate) fn scan_lockstep<L: Log>(
    dispatch: Dispatch,
    adder: &mut Adder,
    log: &mut L,
    buf: &[u8],
    ps: &mut [usize; STREAMS],
    ends: &[usize; STREAMS],
) {
    // With AVX2 only a big table comes here, a smaller one going to
    // `scan_lanes`.
    let batched =
        avx2(dispatch) || adder.is_big() || (BATCH_ODD_STRETCHES && ends[STREAMS - 1] % 2 == 1);
    if batched || plain_in_slices(dispatch, adder, log, buf, ps, ends, SLICE) {
        scan_lockstep_as(dispatch, Feed::Batched, adder, log, buf, ps, ends);
    }
}

/// [`scan_lockstep_as`] with the plain feed, `slice` bytes of each stream
/// at a time; `true` if it stopped because the table outgrew the L2 cache,
/// for the batched feed to go on from `ps`. Otherwise it stops where one
/// call over the whole stretch would have, but for a slice that ended in
/// the round where a stream met a line the scanner does not take: the
/// next slice moves the streams before that one a line further (or, at
/// a refused long row, re-reads its stream's rows after it, moot since
/// the input then has a fault; see [`settle_streams`]).
fn plain_in_slices<L: Log>(
    dispatch: Dispatch,
    adder: &mut Adder,
    log: &mut L,
    buf: &[u8],
    ps: &mut [usize; STREAMS],
    ends: &[usize; STREAMS],
    slice: usize,
) -> bool {
    loop {
        let cut: [usize; STREAMS] = std::array::from_fn(|k| ends[k].min(ps[k] + slice));
        scan_lockstep_as(dispatch, Feed::Plain, adder, log, buf, ps, &cut);
        if adder.is_big() {
            return true;
        }
        // A stream at its end ends the stretch's lockstep; one at its cut
        // only the slice; none at either, a line the scanner does not take.
        let at = |bound: &[usize; STREAMS]| (0..STREAMS).any(|k| ps[k] >= bound[k]);
        if at(ends) || !at(&cut) {
            return false;
        }
    }
}

/// Whether [`scan_lanes`] runs for `dispatch` on this CPU: it needs AVX2.
pub(crate) fn has_lanes(dispatch: Dispatch) -> bool {
    avx2(dispatch)
}

/// [`scan_lockstep`] for [`LANES`] stretches, a line of each per round,
/// their values parsed together in vectors (docs/PERFORMANCE.md, *The
/// scanner*), into `adder`'s table and `log`. Returns as soon as any
/// stretch is done or meets a line the scanner does not accept, or the
/// table outgrows the L2 cache (from where the batched feed of
/// [`scan_lockstep`] serves it better), with every `ps[k]` at the first
/// line of stretch `k` not yet added.
///
/// # Panics
/// If some `ends[k] + PAD > buf.len()`, or `!has_lanes(dispatch)`.
pub(crate) fn scan_lanes<L: Log>(
    dispatch: Dispatch,
    adder: &mut Adder,
    log: &mut L,
    buf: &[u8],
    ps: &mut [usize; LANES],
    ends: &[usize; LANES],
) {
    // The keeping loop makes each call dearly, saving twenty registers
    // around it, and every row of a flooded table is a call.
    let keep = adder.long_names_under(KEEP_LONG_SHARE) && !adder.is_flooded();
    scan_lanes_as(dispatch, keep, adder, log, buf, ps, ends);
}

/// [`scan_lanes`], its loop keeping its registers across its calls or not
/// (the `x86_64::keep` module), as `keep` says.
fn scan_lanes_as<L: Log>(
    dispatch: Dispatch,
    keep: bool,
    adder: &mut Adder,
    log: &mut L,
    buf: &[u8],
    ps: &mut [usize; LANES],
    ends: &[usize; LANES],
) {
    assert!(ends.iter().all(|e| e.saturating_add(PAD) <= buf.len()));
    assert!(has_lanes(dispatch), "the lanes feed needs AVX2");
    #[cfg(target_arch = "x86_64")]
    {
        let starts = *ps;
        let mut adder = adder.for_chunk(buf);
        // SAFETY: `buf` is the adder's chunk; bounds and AVX2 (with BMI)
        // asserted above.
        unsafe {
            if keep {
                x86_64::lanes_avx2::<true, L>(&mut adder, log, buf, ps, ends);
            } else {
                x86_64::lanes_avx2::<false, L>(&mut adder, log, buf, ps, ends);
            }
        }
        settle_streams(adder, &starts, ps, ends);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (keep, adder, log);
}

/// Ends a scan of streams side by side, started at `starts`, by
/// [`ChunkAdder::settle`], and moves the stream of a refused long row back
/// to it: the AVX2 kernel learns of such a row when its scan ends.
///
/// A deferred row's stream has moved on by the time it is added, so rows
/// after a refused one are added too (the scan stops at the next long row,
/// in whichever stream and queue). They are moot: every name the table
/// refuses is a fault of the input, which the strict parser then reports
/// at that line, the first of its stream (the streams are finished in
/// input order, so the first fault reported is the input's first).
fn settle_streams<const N: usize>(
    adder: ChunkAdder,
    starts: &[usize; N],
    ps: &mut [usize; N],
    ends: &[usize; N],
) {
    if let Some(at) = adder.settle() {
        let k = (0..N)
            .find(|&k| starts[k] <= at && at < ends[k])
            .expect("a deferred row lies in its stream");
        ps[k] = ps[k].min(at);
    }
}

/// [`scan_lockstep`], feeding rows as `feed` says.
fn scan_lockstep_as<L: Log>(
    dispatch: Dispatch,
    feed: Feed,
    adder: &mut Adder,
    log: &mut L,
    buf: &[u8],
    ps: &mut [usize; STREAMS],
    ends: &[usize; STREAMS],
) {
    assert!(ends.iter().all(|e| e.saturating_add(PAD) <= buf.len()));
    let starts = *ps;
    let mut adder = adder.for_chunk(buf);
    // SAFETY: bounds asserted above; AVX2 and BMI detected at run time,
    // and SWAR needs no CPU feature.
    unsafe {
        match (avx2(dispatch), feed) {
            #[cfg(target_arch = "x86_64")]
            (true, Feed::Plain) => x86_64::lockstep_avx2(&mut adder, log, ps, ends),
            #[cfg(not(target_arch = "x86_64"))]
            (true, Feed::Plain) => unreachable!("AVX2 is x86-64's"),
            #[cfg(target_arch = "x86_64")]
            (true, Feed::Batched) => x86_64::batched_avx2(&mut adder, log, ps, ends),
            #[cfg(not(target_arch = "x86_64"))]
            (true, Feed::Batched) => unreachable!("AVX2 is x86-64's"),
            (false, Feed::Plain) => lockstep::<Swar, L>(&mut adder, log, ps, ends),
            (false, Feed::Batched) => batched::<Swar, L>(&mut adder, log, ps, ends),
        }
    }
    settle_streams(adder, &starts, ps, ends);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Stats;
    use crate::table::Table;
    use proptest::prelude::*;

    /// Every way of feeding [`scan_lockstep`]'s streams, with both
    /// kernels, on the same chunk: each feed over the whole stretch, and
    /// the plain one in slices of any size ([`plain_in_slices`]); and
    /// [`scan_lanes`] over its [`LANES`] stretches, its loop keeping its
    /// registers across calls and not, if the CPU has AVX2. They may
    /// stop at different places (a batched feed, or a pending long row,
    /// learns that a table refuses a name later, when the other streams
    /// have moved on; a slice can end in the round where a stream meets a
    /// line the scanner does not take, and the next moves the streams
    /// before it one line on).
    /// Each stream must stop at a line start. In a chunk without a fault
    /// the table must hold exactly the rows before the stops; in one with
    /// faults, finishing the streams in order from their stops, as the
    /// engine does, must meet the chunk's first fault first. The rows
    /// counted then are moot: a stream may have added rows past a refused
    /// long row when an earlier one was refused too (see
    /// [`settle_streams`]).
    fn lockstep_every_way(chunk: &[u8]) {
        for dispatch in [Dispatch::Best, Dispatch::Swar] {
            // Each feed over the whole stretch, and the plain one in slices
            // of a byte or more; with AVX2, the batched feed alone.
            let limit = chunk.len() - PAD;
            let slices = [1, 7, 64, limit / 5 + 1].map(|n| (Feed::Plain, Some(n)));
            let plain = [(Feed::Plain, None)].into_iter().chain(slices);
            let plain = plain.filter(|_| !avx2(dispatch));
            for (feed, slice) in [(Feed::Batched, None)].into_iter().chain(plain) {
                let label = format!("{dispatch:?}, {feed:?}, slices {slice:?}");
                side_by_side::<STREAMS>(chunk, &label, |adder, ps, ends| match slice {
                    None => scan_lockstep_as(dispatch, feed, adder, &mut (), chunk, ps, ends),
                    Some(n) => {
                        let big = plain_in_slices(dispatch, adder, &mut (), chunk, ps, ends, n);
                        assert!(!big, "a small table");
                    }
                });
            }
        }
        if has_lanes(Dispatch::Best) {
            for keep in [false, true] {
                side_by_side::<LANES>(chunk, &format!("lanes, keep {keep}"), |adder, ps, ends| {
                    scan_lanes_as(Dispatch::Best, keep, adder, &mut (), chunk, ps, ends)
                });
            }
        }
    }

    /// Cuts `chunk` (its last `PAD` bytes padding) into `N` stretches at
    /// line starts, runs `scan` over them side by side, and checks where
    /// it stopped (see [`lockstep_every_way`]).
    fn side_by_side<const N: usize>(
        chunk: &[u8],
        label: &str,
        scan: impl FnOnce(&mut Adder, &mut [usize; N], &[usize; N]),
    ) {
        let limit = chunk.len() - PAD;
        let cut = |at: usize| {
            at + chunk[at..limit]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(limit - at, |i| i + 1)
        };
        let mut starts = [0; N];
        for k in 1..N {
            starts[k] = cut(limit * k / N).max(starts[k - 1]);
        }
        let ends: [usize; N] =
            std::array::from_fn(|k| if k + 1 < N { starts[k + 1] } else { limit });
        let mut table = Table::default();
        let mut ps = starts;
        scan(&mut table.adder(chunk.len()), &mut ps, &ends);
        // The strict parser's verdict on the line at `p`, and where the
        // next starts.
        let strict = |p: usize| {
            let (line, next) = crate::parse::line_at(chunk, p);
            let row = crate::parse::parse_line(line)
                .and_then(|(name, value)| crate::parse::check_name(name).map(|_| (name, value)));
            (row.ok(), next)
        };
        // The chunk's first fault, if any.
        let mut first = None;
        let mut p = 0;
        while p < limit && first.is_none() {
            let (row, next) = strict(p);
            first = row.is_none().then_some(p);
            p = next;
        }
        let mut want = std::collections::BTreeMap::<Vec<u8>, Stats>::new();
        let mut met = None;
        for k in 0..N {
            assert!(starts[k] <= ps[k] && ps[k] <= ends[k], "{label}");
            let mut p = starts[k];
            while p < ps[k] {
                let (row, next) = strict(p);
                if let Some((name, value)) = row {
                    want.entry(name.to_vec())
                        .and_modify(|s| s.add(value))
                        .or_insert(Stats::new(value));
                }
                p = next;
            }
            assert_eq!(p, ps[k], "{label}: a stream stops at a line start");
            // The engine finishes the streams in order from their stops.
            while p < ends[k] && met.is_none() {
                let (row, next) = strict(p);
                met = row.is_none().then_some(p);
                p = next;
            }
        }
        if first.is_none() {
            let got: std::collections::BTreeMap<Vec<u8>, Stats> = (table.into_sorted())
                .into_iter()
                .map(|e| (e.name.into_vec(), e.stats))
                .collect();
            assert_eq!(got, want, "{label}");
        } else {
            assert_eq!(met, first, "{label}: the first fault is met first");
        }
    }

    /// A chunk of `names` rows, each of a name of its own, and `N`
    /// stretches of it cut at line starts: the chunk (padded), and the
    /// stretches' starts and ends.
    fn distinct_names<const N: usize>(names: usize) -> (Vec<u8>, [usize; N], [usize; N]) {
        let mut chunk = Vec::new();
        for i in 0..names {
            chunk.extend_from_slice(format!("s{}", i * 7919 % names).as_bytes());
            chunk.extend_from_slice(if i % 2 == 0 { b";1.5\n" } else { b";-2.0\n" });
        }
        let limit = chunk.len();
        chunk.extend_from_slice(&[0; PAD]);
        let cut = |at: usize| at + chunk[at..].iter().position(|&c| c == b'\n').unwrap() + 1;
        let starts: [usize; N] =
            std::array::from_fn(|k| if k == 0 { 0 } else { cut(limit * k / N) });
        let ends = std::array::from_fn(|k| if k + 1 < N { starts[k + 1] } else { limit });
        (chunk, starts, ends)
    }

    /// Finishes each stretch of [`distinct_names`] from its stop with the
    /// single-stream scanner, then checks that the table holds each of the
    /// `names` names once: no row left out, none fed twice.
    fn finish_each_once<const N: usize>(
        mut table: Table,
        dispatch: Dispatch,
        chunk: &[u8],
        ps: &[usize; N],
        ends: &[usize; N],
        names: usize,
        label: &str,
    ) {
        for k in 0..N {
            let mut adder = table.adder(ends[k] - ps[k]);
            let done = scan(dispatch, &mut adder, &mut (), chunk, ps[k], ends[k]);
            assert_eq!(done, Ok(ends[k]), "{label}");
        }
        let sorted = table.into_sorted();
        assert_eq!(sorted.len(), names, "{label}");
        assert!(sorted.iter().all(|e| e.stats.count == 1), "{label}");
    }

    /// A table that outgrows the L2 cache partway through a stretch stops
    /// the plain feed there, and the batched feed takes the streams on to
    /// where the first is done, as the plain feed would have: not the
    /// stretch's rest left to the single-stream scanner, and no row fed
    /// twice.
    #[test]
    fn a_table_that_grows_big_mid_stretch_is_fed_to_the_end() {
        let names = 120_000;
        let (chunk, starts, ends) = distinct_names::<STREAMS>(names);
        for dispatch in [Dispatch::Best, Dispatch::Swar] {
            let label = format!("{dispatch:?}");
            let mut table = Table::default();
            let mut adder = table.adder(chunk.len());
            assert!(!adder.is_big());
            let mut ps = starts;
            scan_lockstep(dispatch, &mut adder, &mut (), &chunk, &mut ps, &ends);
            assert!(adder.is_big(), "{label}");
            // The feeds stop when the first stream is done; the others are
            // then a few lines from their ends.
            let left: usize = (0..STREAMS).map(|k| ends[k] - ps[k]).sum();
            assert!(left < 100, "{label}: {left} bytes left");
            finish_each_once(table, dispatch, &chunk, &ps, &ends, names, &label);
        }
    }

    /// The lanes, either loop, stop where the table outgrows the L2 cache
    /// (the batched feed serves it from there), every row before each
    /// lane's stop added once: the loop that keeps its registers learns of
    /// it only from the insert that grew the table.
    #[test]
    fn the_lanes_stop_where_the_table_grows_big() {
        if !has_lanes(Dispatch::Best) {
            return;
        }
        let names = 120_000;
        let (chunk, starts, ends) = distinct_names::<LANES>(names);
        let limit = chunk.len() - PAD;
        for keep in [false, true] {
            let label = format!("keep {keep}");
            let mut table = Table::default();
            let mut adder = table.adder(chunk.len());
            let mut ps = starts;
            scan_lanes_as(
                Dispatch::Best,
                keep,
                &mut adder,
                &mut (),
                &chunk,
                &mut ps,
                &ends,
            );
            assert!(adder.is_big(), "{label}");
            let left: usize = (0..LANES).map(|k| ends[k] - ps[k]).sum();
            assert!(left > limit / 8, "{label}: {left} of {limit} bytes left");
            finish_each_once(table, Dispatch::Best, &chunk, &ps, &ends, names, &label);
        }
    }

    proptest! {
        #[test]
        fn every_feed_adds_the_rows_before_its_stops(
            rows in proptest::collection::vec(
                (0usize..3000, -999i16..1000, 0u8..40),
                1..400,
            ),
        ) {
            // Names from a pool bigger than a chunk's rows, short and long;
            // now and then a name the table refuses (not UTF-8, or holding
            // a `\n`), or a bad value, where the streams must stop.
            let mut chunk = Vec::new();
            for (k, v, odd) in rows {
                let name = match k % 5 {
                    0 => format!("s{k}"),
                    1 => format!("station number {k}"),
                    // Every length up to 40 bytes.
                    2 => format!("{k:0>w$}", w = k / 5 % 40 + 1),
                    3 => format!("é{}", k % 97),
                    _ => format!("n{}", k % 97),
                };
                chunk.extend_from_slice(name.as_bytes());
                match odd {
                    0 => chunk.push(0xff),
                    1 => chunk.push(b'\n'),
                    _ => {}
                }
                chunk.push(b';');
                if odd == 2 {
                    chunk.extend_from_slice(b"1.x");
                } else {
                    chunk.extend_from_slice(format!("{:.1}", f64::from(v) / 10.0).as_bytes());
                }
                chunk.push(b'\n');
            }
            chunk.extend_from_slice(&[0; PAD]);
            lockstep_every_way(&chunk);
        }
    }
}

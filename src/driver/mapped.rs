//! The parallel driver over bytes in memory, a slice ([`aggregate`]) or a
//! mapped file ([`run`]): threads claim line-aligned chunks in input order
//! from an atomic cursor ([`Chunks`]), each feeds its own [`Accumulator`],
//! and their sorted runs are merged into the [`Summary`].
//!
//! A mapped file's pages go back to the kernel once their chunk is fed, so
//! a file of any size costs only the chunks in flight; a malformed line of
//! any length costs no more: it is read a window at a time, each window
//! released ([`judge_whole`]).

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use memmap2::{Mmap, UncheckedAdvice};

use super::chunks::Chunks;
use super::{judge_whole, Finish};
use crate::engine::{naive, Accumulator, Engine, Job, Options};
use crate::entry::{merge_runs, Entry, Summary};
use crate::error::{DataError, Error, Fault};
use crate::shrink;
use crate::timings::{self, WorkerClock};

/// Aggregates `input` with `engine`.
pub fn aggregate(engine: Engine, input: &[u8], options: &Options) -> Result<Summary, DataError> {
    struct InMemory<'a> {
        input: &'a [u8],
        options: &'a Options,
    }
    impl Job for InMemory<'_> {
        type Output = Result<Summary, DataError>;
        fn naive(self) -> Self::Output {
            naive::aggregate(self.input).map_err(|e| match e {
                Error::Data(e) => e,
                Error::Io(e) => unreachable!("reading a byte slice failed: {e}"),
            })
        }
        fn parallel<A: Accumulator>(self) -> Self::Output {
            run_chunks::<A>(self.input, self.options, &|_| {}, &|_| {})
                .map_err(|fault| fault.locate(self.input))
        }
    }
    engine.run(InMemory { input, options })
}

/// Aggregates the mapped file `map`, from byte `start` on, with the engine
/// whose per-thread state is `A`, counting the bytes fed into `consumed`
/// and returning each chunk's pages to the kernel once fed. A file that
/// shrinks meanwhile is an error ([`shrink`]), whatever was read.
pub(crate) fn run<A: Accumulator>(
    map: &Mmap,
    start: usize,
    options: &Options,
    consumed: &AtomicU64,
) -> Result<Summary, Error> {
    let guard = shrink::Guard::new(map.as_ptr() as usize..map.as_ptr() as usize + map.len());
    let release = |range: Range<usize>| release(map, start + range.start..start + range.end);
    let done = |range: Range<usize>| {
        consumed.fetch_add(range.len() as u64, Ordering::Relaxed);
        release(range);
    };
    let run = || {
        run_chunks::<A>(&map[start..], options, &done, &release).map_err(|fault| {
            let newlines = count_newlines_releasing(map, start..start + fault.offset);
            fault.after_newlines(newlines).into()
        })
    };
    // Bytes read past the new end were zeros: no result, and no panic of
    // an engine that saw names change under it (see `crate::shrink`).
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run));
    if guard.shrank() {
        return Err(shrink::shrank().into());
    }
    result.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Runs a parallel engine over `input`: threads claim chunks in input
/// order from an atomic cursor, each feeds its own [`Accumulator`], then
/// the accumulators are sorted and merged (see [`Accumulator::ABSORBS`]).
/// Calls `done` with each chunk's byte range once it has been fed, and
/// `release` with each range read but not fed (a long malformed line, see
/// [`judge_whole`]): a mapped file's pages are returned to the kernel, so
/// that they do not pile up in memory, and progress is counted in `done`.
fn run_chunks<A: Accumulator>(
    input: &[u8],
    options: &Options,
    done: &(dyn Fn(Range<usize>) + Sync),
    release: &dyn Fn(Range<usize>),
) -> Result<Summary, Fault> {
    let chunks = Chunks::new(input, options.chunk_size, options.threads);
    let threads = options.threads.max(1);
    let finish = Finish::<A>::new(threads);
    let work = || {
        let mut acc = A::default();
        let mut fault = None;
        let mut clock = WorkerClock::start();
        while let Some((offset, chunk)) = chunks.claim() {
            if let Err(f) = acc.feed(chunk, offset) {
                chunks.fault_at(f.offset);
                fault = Fault::first(fault, Some(f));
                break;
            }
            clock.chunk(chunk.len());
            done(offset..offset + chunk.len());
        }
        (finish.sorted(acc, &mut clock), fault)
    };
    let results: Vec<(Option<Vec<Entry>>, Option<Fault>)> = if threads == 1 {
        vec![work()]
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads).map(|_| s.spawn(work)).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        })
    };
    let (runs, faults): (Vec<_>, Vec<_>) = results.into_iter().unzip();
    let fault = faults.into_iter().fold(None, Fault::first);
    let merged = timings::phase("merge", || merge_runs(runs.into_iter().flatten().collect()));
    timings::phase("check names", || Summary::from_entries(merged, fault))
        .map_err(|fault| judge_whole(fault, input, 0, release))
}

/// The granularity of [`release`]: the largest block of pages the kernel
/// maps at once for one fault (a 2 MiB page-cache folio, on x86-64 and on
/// arm64 with 4 KiB pages), and so a multiple of every page size.
const RELEASE_ALIGN: usize = 2 << 20;

/// More than any valid line: how far before a chunk its claim may read.
const LINE_MARGIN: usize = 64 << 10;

/// Returns the pages of `range` of the map to the kernel, so that the
/// process does not keep them resident; reading them again refaults them
/// from the page cache.
///
/// A fault maps a whole folio, which may reach into the neighbouring
/// chunks, and claiming a chunk reads from just before its nominal start (a
/// line or so before its actual start); a neighbour may also be fed after
/// this chunk. So the release takes in the aligned blocks around `range`,
/// and each chunk releases everything its own claim and feed mapped. A
/// neighbour still reading a released block just refaults it.
fn release(map: &Mmap, range: Range<usize>) {
    let start = range.start.saturating_sub(LINE_MARGIN) / RELEASE_ALIGN * RELEASE_ALIGN;
    let end = range.end.div_ceil(RELEASE_ALIGN) * RELEASE_ALIGN;
    let end = end.min(map.len());
    if start < end {
        // `MADV_DONTNEED` on a shared, read-only file mapping only drops
        // this process's page table entries: the next access to a page, by
        // any thread, maps the same page-cache page again, holding the same
        // file bytes (the file is not modified while mapped, the contract
        // of `Input::from_file`). So no reference into the map, even one
        // being read right now by another thread, ever observes a change.
        // SAFETY: contents unchanged (above); the range is inside the map.
        let _ =
            unsafe { map.unchecked_advise_range(UncheckedAdvice::DontNeed, start, end - start) };
    }
}

/// The number of `\n` in `map[range]`, releasing the pages as it goes (an
/// error at the end of a huge file must not map it all back in).
fn count_newlines_releasing(map: &Mmap, range: Range<usize>) -> u64 {
    const WINDOW: usize = 4 << 20;
    let mut newlines = 0;
    let Range { mut start, end } = range;
    while start < end {
        let stop = end.min(start + WINDOW);
        newlines += memchr::memchr_iter(b'\n', &map[start..stop]).count() as u64;
        release(map, start..stop);
        start = stop;
    }
    newlines
}

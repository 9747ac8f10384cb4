//! The parallel driver over bytes in memory, a mapped file's or a
//! slice's: threads claim line-aligned chunks in input order from an
//! atomic cursor ([`Chunks`]), each feeds its own [`Accumulator`], and
//! their sorted runs are merged into the [`Summary`].

use std::ops::Range;

use super::chunks::Chunks;
use super::{judge_whole, Finish};
use crate::engine::{naive, Accumulator, Engine, Job, Options};
use crate::entry::{merge_runs, Entry, Summary};
use crate::error::{DataError, Error, Fault};
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
            run_parallel::<A>(self.input, self.options).map_err(|fault| fault.locate(self.input))
        }
    }
    engine.run(InMemory { input, options })
}

/// Runs a parallel engine: threads claim chunks in input order from an
/// atomic cursor, each feeds its own [`Accumulator`], then the accumulators
/// are sorted and merged (see [`Accumulator::ABSORBS`]).
pub(super) fn run_parallel<A: Accumulator>(
    input: &[u8],
    options: &Options,
) -> Result<Summary, Fault> {
    run_parallel_with::<A>(input, options, &|_| {}, &|_| {})
}

/// [`run_parallel`], calling `done` with each chunk's byte range once it has
/// been fed, and `release` with each range read but not fed (a long
/// malformed line, see [`judge_whole`]): the mapped-file path returns the
/// pages of both to the kernel, so a file's pages do not pile up in memory,
/// and counts progress in `done`.
pub(crate) fn run_parallel_with<A: Accumulator>(
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

//! The driver: how the inputs' bytes reach the engines' per-thread
//! [`Accumulator`]s, and how what those hold becomes a
//! [`Summary`].
//!
//! One run reads any number of inputs, in order, with one set of worker
//! threads and their accumulators, so the threads stay busy across the
//! inputs' boundaries (docs/PERFORMANCE.md, *How data flows*). The calling
//! thread dispatches: it opens the inputs one after the other (the
//! caller's iterator of [`Content`]s), cuts bytes in memory (a slice, a
//! mapped file) into line-aligned chunks ([`mapped`]) and reads streams
//! into blocks ([`stream`]), and sends both down one bounded queue, from
//! which the workers take them in input order. The queue's bound holds
//! the open inputs to a few, whatever their number.
//!
//! Every input's offsets map into one rank: input after input, each
//! input's bytes in order. A fault, a read error, an input that cannot be
//! opened or a file that shrank is a failure at its rank, and the first
//! in input order wins: no work past a known failure is dispatched or fed.
//! What feeding a piece of work reports is judged in [`judge`]: its first
//! fault, its line judged whole, the UTF-8 of its lines checked. The
//! accumulators are handed in at the end through [`Finish`].

mod chunks;
mod failure;
mod finish;
mod judge;
mod mapped;
mod stream;

pub(crate) use self::failure::RunError;
use self::failure::{LineNumber, RankedFailure};
pub(crate) use self::mapped::release;

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::ops::Range;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};

use memmap2::Mmap;

use self::finish::Finish;
use self::judge::check;
use self::mapped::SharedBytes;
use self::stream::{Block, Counted, Reading};
use crate::engine::{Accumulator, Options};
use crate::error::Fault;
use crate::shrink;
use crate::summary::{merge_runs, Entry, Summary};
use crate::timings::{self, WorkerClock};

/// What the driver reads of one input: bytes in memory, or a stream.
pub(crate) enum Content<'a> {
    /// Bytes in memory, of which the lines starting in a window are read.
    Bytes(Bytes<'a>),
    /// A stream, read whole from where it stands.
    Stream(Box<dyn Read + Send + 'a>),
}

/// Bytes in memory, and which of their lines to aggregate.
pub(crate) struct Bytes<'a> {
    /// The bytes.
    pub(crate) held: Held<'a>,
    /// Where the input's first line starts (past what standard input's
    /// owner had read, and past a byte-order mark): offsets in errors, and
    /// line numbers, count from here.
    pub(crate) lo: usize,
    /// The lines starting in this range of `held` are aggregated, each
    /// whole ([`chunks::Chunks`] says how a window finds its lines).
    pub(crate) window: Range<usize>,
    /// Bytes the run reads after this input, as far as known: only the
    /// run's last chunks are small.
    pub(crate) rest: u64,
}

/// Where bytes in memory are.
pub(crate) enum Held<'a> {
    /// The caller's.
    Slice(&'a [u8]),
    /// A file's, mapped read-only: its pages are released once read, and a
    /// file that shrinks meanwhile is an error ([`shrink`]).
    Map(Mmap),
}

/// Aggregates `contents` in order with the engine whose per-thread state is
/// `A`, with `options.threads` workers and chunks or blocks of about
/// `options.chunk_size` bytes, counting the bytes in memory fed into
/// `consumed` (a stream counts its own). An input is opened when the
/// iterator yields it, once the inputs before it are dispatched.
pub(crate) fn run<'a, A: Accumulator>(
    contents: impl Iterator<Item = (usize, io::Result<Content<'a>>)>,
    options: &Options,
    consumed: &AtomicU64,
) -> Result<Summary, RunError> {
    let threads = options.threads.max(1);
    // One piece of work per worker waiting, so that a worker done with its
    // own takes the next at once; a mapped input is held only while work
    // of it is queued or being fed.
    let (queue, queued) = mpsc::sync_channel(threads);
    // Held by the workers alone: when they are all gone (a panic), sending
    // fails and the dispatcher stops.
    let queued = Arc::new(Mutex::new(queued));
    let (free_tx, free_rx) = mpsc::channel();
    let state = State {
        bound: AtomicUsize::new(usize::MAX),
        counted: Mutex::new(BTreeMap::new()),
    };
    let finish = Finish::<A>::new(threads);
    let shared = Arc::new(A::Shared::default());
    let (dispatched, results) = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let worker = Worker {
                    queued: Arc::clone(&queued),
                    free: free_tx.clone(),
                    state: &state,
                    consumed,
                };
                let (finish, shared) = (&finish, &shared);
                s.spawn(move || worker.work::<A>(finish, shared))
            })
            .collect();
        drop((free_tx, queued));
        let mut reading = Reading::new(options, threads, free_rx);
        // Returning drops the queue's sender, which lets the workers finish.
        let dispatched = dispatch(contents, queue, &mut reading, &state, options);
        let results: Vec<(Option<Vec<Entry>>, Option<RankedFailure>)> = workers
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| panic::resume_unwind(e)))
            .collect();
        (dispatched, results)
    });
    let mut failure = dispatched;
    let mut runs = Vec::with_capacity(results.len());
    for (run, found) in results {
        runs.extend(run);
        failure = RankedFailure::first(failure, found);
    }
    if let Some(failure) = failure {
        let counted = state.counted.into_inner();
        return Err(failure.locate(&counted.unwrap_or_else(PoisonError::into_inner)));
    }
    let merged = timings::phase("merge", || merge_runs(runs));
    // Every name's UTF-8 was checked with its chunk or block (or by the
    // engine), so this cannot fail.
    timings::phase("check names", || Summary::from_entries(merged, None))
        .map_err(|f| unreachable!("a bad name passed the chunk checks: {f:?}"))
}

/// Where a piece of work lies among all the inputs: its input, and the
/// rank of the input's first byte; a byte `n` bytes into the input ranks
/// `base + n`, and `base - 1` ranks before any of them (an input that
/// cannot be opened, or shrank).
#[derive(Clone, Copy, Debug)]
struct Place {
    input: usize,
    base: usize,
}

/// What the dispatcher sends the workers.
enum Work<'a> {
    /// Lines of bytes in memory, whole: `range` of `bytes`, an input whose
    /// first line starts at `lo`.
    Chunk {
        bytes: SharedBytes<'a>,
        lo: usize,
        range: Range<usize>,
        place: Place,
    },
    /// Lines of a stream.
    Block { block: Block, place: Place },
}

/// What the dispatcher and the workers share.
struct State {
    /// The rank of the first failure known so far: work ranking after it
    /// cannot hold an earlier one, so it is neither dispatched nor fed.
    bound: AtomicUsize,
    /// Per stream input, the newlines of its blocks fed whole so far.
    counted: Mutex<BTreeMap<usize, Counted>>,
}

impl State {
    fn failed_at(&self, rank: usize) {
        self.bound.fetch_min(rank, Ordering::Relaxed);
    }

    fn past_failure(&self, rank: usize) -> bool {
        rank > self.bound.load(Ordering::Relaxed)
    }
}

/// Opens the inputs in turn and sends their work down `queue`, until the
/// last, a failure, or the workers are gone; returns a failure the
/// dispatcher itself met (an input that did not open or read, a stream's
/// line too long to send, a file that shrank under the cutting).
fn dispatch<'a>(
    contents: impl Iterator<Item = (usize, io::Result<Content<'a>>)>,
    queue: SyncSender<Work<'a>>,
    reading: &mut Reading,
    state: &State,
    options: &Options,
) -> Option<RankedFailure<'a>> {
    let mut base = 1;
    let mut send = |work| queue.send(work).is_ok();
    for (input, content) in contents {
        if state.bound.load(Ordering::Relaxed) != usize::MAX {
            break;
        }
        let place = Place { input, base };
        let len = match content {
            Err(e) => return Some(RankedFailure::io(place, base - 1, e)),
            Ok(Content::Bytes(bytes)) => {
                match mapped::cut(bytes, place, options, state, &mut send) {
                    Ok(Some(len)) => len,
                    Ok(None) => return None,
                    Err(shrank) => return Some(RankedFailure::io(place, base - 1, shrank)),
                }
            }
            Ok(Content::Stream(reader)) => {
                let mut blocks = |block| send(Work::Block { block, place });
                match reading.run(reader, &mut blocks, &state.bound) {
                    (len, Ok(None)) => len,
                    (len, Err(e)) => return Some(RankedFailure::io(place, base + len, e)),
                    (_, Ok(Some(fault))) => {
                        let number = LineNumber::Stream {
                            block: fault.offset,
                            before: 0,
                        };
                        let fault = Fault {
                            offset: base + fault.offset,
                            ..fault
                        };
                        return Some(RankedFailure::fault(place, fault, number));
                    }
                }
            }
        };
        base += len + 2;
    }
    None
}

/// A worker thread's share of a run.
struct Worker<'s, 'a> {
    queued: Arc<Mutex<Receiver<Work<'a>>>>,
    /// Where a stream block's buffer goes back to the pool.
    free: Sender<Vec<u8>>,
    state: &'s State,
    consumed: &'s AtomicU64,
}

impl<'a> Worker<'_, 'a> {
    /// Feeds the work it takes into its own `A` until the dispatcher is
    /// done, then hands it in to `finish`, which gives its names sorted (or
    /// leaves them to another worker); returns them and its first failure.
    fn work<A: Accumulator>(
        self,
        finish: &Finish<A>,
        shared: &Arc<A::Shared>,
    ) -> (Option<Vec<Entry>>, Option<RankedFailure<'a>>) {
        let mut acc = A::sharing(shared);
        let mut failure = None;
        let mut clock = WorkerClock::start();
        loop {
            let work = self
                .queued
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .recv();
            let found = match work {
                Err(_) => return (finish.sorted(acc, &mut clock), failure),
                Ok(Work::Chunk {
                    bytes,
                    lo,
                    range,
                    place,
                }) => self.chunk(&mut acc, bytes, lo, range, place, &mut clock),
                Ok(Work::Block { block, place }) => {
                    let found = self.block(&mut acc, &block, place, &mut clock);
                    // The dispatcher may have stopped, dropping the pool;
                    // then so be it.
                    let _ = self.free.send(block.buf);
                    found
                }
            };
            if let Some(found) = found {
                self.state.failed_at(found.rank);
                failure = RankedFailure::first(failure, Some(found));
            }
        }
    }

    /// Feeds a chunk of bytes in memory, then releases its pages; a file
    /// that shrank under it is a failure, and leaves `acc` new, as an
    /// engine that saw names turn to zeros may have panicked mid-row.
    fn chunk<A: Accumulator>(
        &self,
        acc: &mut A,
        bytes: SharedBytes<'a>,
        lo: usize,
        range: Range<usize>,
        place: Place,
        clock: &mut WorkerClock,
    ) -> Option<RankedFailure<'a>> {
        let offset = place.base + (range.start - lo);
        if self.state.past_failure(offset) {
            return None;
        }
        let chunk = &bytes.bytes()[range.clone()];
        let release =
            |r: Range<usize>| bytes.release(r.start - place.base + lo..r.end - place.base + lo);
        let fed = panic::catch_unwind(AssertUnwindSafe(|| check(acc, chunk, offset, &release)));
        if bytes.shrank() {
            *acc = A::default();
            return Some(RankedFailure::io(place, place.base - 1, shrink::shrank()));
        }
        match fed.unwrap_or_else(|e| panic::resume_unwind(e)) {
            Ok(()) => {
                clock.chunk(chunk.len());
                self.consumed
                    .fetch_add(chunk.len() as u64, Ordering::Relaxed);
                bytes.release(range);
                None
            }
            Err(fault) => Some(RankedFailure::fault(
                place,
                fault,
                LineNumber::Bytes { bytes, lo },
            )),
        }
    }

    /// Feeds a block of a stream, counting its newlines for line numbers.
    fn block<A: Accumulator>(
        &self,
        acc: &mut A,
        block: &Block,
        place: Place,
        clock: &mut WorkerClock,
    ) -> Option<RankedFailure<'a>> {
        let offset = place.base + block.offset;
        if self.state.past_failure(offset) {
            return None;
        }
        let bytes = &block.buf[..block.len];
        match check(acc, bytes, offset, &|_| {}) {
            Ok(()) => {
                clock.chunk(bytes.len());
                let newlines = stream::count_newlines(bytes);
                let mut counted = self
                    .state
                    .counted
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                counted
                    .entry(place.input)
                    .or_default()
                    .add(block.offset, block.len, newlines);
                None
            }
            Err(fault) => {
                let before = stream::count_newlines(&bytes[..fault.offset - offset]);
                let number = LineNumber::Stream {
                    block: block.offset,
                    before,
                };
                Some(RankedFailure::fault(place, fault, number))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate;
    use crate::engine::Engine;
    use crate::error::Error;

    /// Inputs 0..n, streams and slices in turn, input `k` holding the
    /// lines `s<k>;<k>.0` and `all;1.0`, the last line without `\n` in
    /// every other one; input `bad` (if any) a malformed line 2.
    fn texts(n: usize, bad: Option<usize>) -> Vec<(usize, Vec<u8>)> {
        (0..n)
            .map(|k| {
                let mut text = format!("s{k};{}.0\n", k % 100).into_bytes();
                if bad == Some(k) {
                    text.extend_from_slice(b"oops\n");
                }
                text.extend_from_slice(b"all;1.0\n");
                if k % 2 == 1 {
                    text.pop();
                }
                (k, text)
            })
            .collect()
    }

    fn run_all<A: Accumulator>(
        inputs: &[(usize, Vec<u8>)],
        options: &Options,
    ) -> Result<Summary, RunError> {
        let contents = inputs.iter().map(|(k, text)| {
            let content = match k % 3 {
                0 => Content::Stream(Box::new(&text[..])),
                _ => Content::Bytes(Bytes {
                    held: Held::Slice(text),
                    lo: 0,
                    window: 0..usize::MAX,
                    rest: 0,
                }),
            };
            (*k, Ok(content))
        });
        run::<A>(contents, options, &AtomicU64::new(0))
    }

    #[test]
    fn many_inputs_streams_and_bytes_are_one_run_each_ending_its_last_line() {
        // More streams than the pool has buffers: each stream's buffers go
        // back for the next.
        let inputs = texts(40, None);
        let mut joined = Vec::new();
        for (_, text) in &inputs {
            joined.extend_from_slice(text);
            if text.last() != Some(&b'\n') {
                joined.push(b'\n');
            }
        }
        for (threads, chunk_size) in [(1, 1), (1, 4 << 20), (2, 7), (3, 64)] {
            let options = Options {
                threads,
                chunk_size,
            };
            let want = aggregate(&joined, Engine::Naive, &options).unwrap();
            let fast = run_all::<crate::engine::fast::Fast>(&inputs, &options);
            assert_eq!(fast.unwrap(), want, "{options:?}");
            let chunked = run_all::<crate::engine::chunked::Chunked>(&inputs, &options);
            assert_eq!(chunked.unwrap(), want, "{options:?}");
            // A malformed line in a stream and in bytes: named by its
            // input, line 2 there; an input that fails to open before it
            // wins.
            for bad in [9, 10] {
                let inputs = texts(40, Some(bad));
                let failed = run_all::<crate::engine::fast::Fast>(&inputs, &options).unwrap_err();
                assert_eq!(failed.input, bad);
                match failed.error {
                    Error::Data(e) => {
                        assert_eq!(
                            (e.line, e.offset),
                            (2, 5 + 2 * bad.to_string().len() as u64)
                        )
                    }
                    other => panic!("{other:?}"),
                }
                let contents = inputs.iter().map(|(k, text)| {
                    let content = match *k == 5 {
                        true => Err(io::Error::other("gone")),
                        false => Ok(Content::Bytes(Bytes {
                            held: Held::Slice(text),
                            lo: 0,
                            window: 0..usize::MAX,
                            rest: 0,
                        })),
                    };
                    (*k, content)
                });
                let failed =
                    run::<crate::engine::fast::Fast>(contents, &options, &AtomicU64::new(0));
                let failed = failed.unwrap_err();
                assert_eq!(
                    (failed.input, failed.error.to_string()),
                    (5, "gone".to_string())
                );
            }
        }
    }
}

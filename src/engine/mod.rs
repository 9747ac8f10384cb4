//! The engines: interchangeable ways of turning an input into a [`Summary`].
//!
//! They form a ladder from obviously correct to fast, and all of them give
//! the same answer and the same error on every input:
//!
//! - [`naive`]: one thread, a `HashMap<String, Stats>`, the strict parser on
//!   every line. The oracle the other engines are tested against.
//! - [`chunked`]: bytes instead of strings, `memchr` line splitting, a
//!   foldhash-keyed `hashbrown::HashTable`, and the file split into
//!   line-aligned chunks handed to threads from an atomic cursor.
//! - [`fast`] (the default): the same driver with the hand-written scanner
//!   of [`crate::scan`] (AVX2 where the CPU has it) and the hand-written
//!   [`crate::table::Table`]; `swar` is the same with the portable kernel.
//!
//! Engines above `naive` share the parallel driver in this module: each
//! thread feeds chunks into its own [`Partial`], and then the threads
//! either sort their names side by side or, for the fast engines, the last
//! one to finish folds the others' partials into its own and sorts once
//! ([`Partial::ABSORBS`]); sorted runs are merged ([`merge_runs`]), and
//! [`Summary::from_entries`] checks each distinct name's UTF-8 once. The
//! same [`Partial`]s run on streams in [`crate::stream`].

pub mod chunked;
pub mod fast;
pub mod naive;

use std::ops::Range;

use crate::chunk::Chunks;
pub use crate::entry::Summary;
use crate::entry::{merge_runs, Entry};
use crate::error::{DataError, Error, ErrorKind, Fault};
use crate::parse::LineHead;
use crate::timings::{self, WorkerClock};

/// An aggregation engine, selectable by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Engine {
    /// The reference: simple, single-threaded, obviously correct.
    Naive,
    /// Byte-oriented, foldhash + hashbrown, multi-threaded.
    Chunked,
    /// Hand-written scanner (portable SWAR kernel) and table, multi-threaded.
    Swar,
    /// The default: hand-written parser and table, multi-threaded.
    #[default]
    Fast,
}

impl Engine {
    /// Every engine, from the simplest to the fastest.
    pub const ALL: [Engine; 4] = [Engine::Naive, Engine::Chunked, Engine::Swar, Engine::Fast];

    /// The engine's command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Naive => "naive",
            Engine::Chunked => "chunked",
            Engine::Swar => "swar",
            Engine::Fast => "fast",
        }
    }

    /// A one-line description for `--help`.
    pub fn about(self) -> &'static str {
        match self {
            Engine::Naive => "reference: HashMap<String, _>, strict parser, one thread",
            Engine::Chunked => "bytes, memchr, foldhash + hashbrown table, parallel chunks",
            Engine::Swar => "hand-written SWAR scanner and hash table, parallel chunks",
            Engine::Fast => "like swar, with AVX2 when the CPU has it (default)",
        }
    }

    /// Looks an engine up by its command-line name.
    pub fn from_name(name: &str) -> Option<Engine> {
        Engine::ALL.into_iter().find(|e| e.name() == name)
    }
}

/// How an engine runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Worker threads (at least 1). `naive` always uses one.
    pub threads: usize,
    /// Nominal chunk size in bytes handed to a thread at a time; chunk
    /// boundaries move forward to the next line start, and all but the
    /// last few chunks per thread are 4 times as big ([`crate::chunk`]).
    pub chunk_size: usize,
}

/// The default chunk size: small enough that two threads finish within a
/// few milliseconds of each other, large enough that claiming a chunk is
/// negligible.
pub const DEFAULT_CHUNK_SIZE: usize = 4 << 20;

impl Default for Options {
    fn default() -> Options {
        Options {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            chunk_size: DEFAULT_CHUNK_SIZE,
        }
    }
}

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
        fn parallel<P: Partial>(self) -> Self::Output {
            run_parallel::<P>(self.input, self.options).map_err(|fault| fault.locate(self.input))
        }
    }
    engine.run(InMemory { input, options })
}

/// Work that depends on the engine's types: the naive engine, or a
/// parallel engine's [`Partial`]. Each kind of input (bytes in memory, a
/// mapped file, a stream) implements it once, and [`Engine::run`] holds the
/// one `match` from engine names to types.
pub trait Job {
    /// What the work produces.
    type Output;
    /// Does the work with the naive engine.
    fn naive(self) -> Self::Output;
    /// Does the work with the parallel engine whose per-thread state is `P`.
    fn parallel<P: Partial>(self) -> Self::Output;
}

impl Engine {
    /// Does `job` with this engine.
    pub fn run<J: Job>(self, job: J) -> J::Output {
        match self {
            Engine::Naive => job.naive(),
            Engine::Chunked => job.parallel::<chunked::Table>(),
            Engine::Swar => job.parallel::<fast::Fast<true>>(),
            Engine::Fast => job.parallel::<fast::Fast<false>>(),
        }
    }
}

/// Per-thread state of a parallel engine: what it has aggregated so far.
pub trait Partial: Default + Send {
    /// Aggregates `chunk`, which starts at a line start at byte `offset` of
    /// the input and ends after a `\n` or at the end of the input. Stops at
    /// the first malformed line and reports it.
    ///
    /// No more than [`HEAD_LEN`](crate::parse::HEAD_LEN) bytes of a line
    /// are read ([`parse::line_at`](crate::parse::line_at)), so a line
    /// longer than that with no `;` in them is reported as having none:
    /// [`judge_whole`] finishes that verdict.
    fn feed(&mut self, chunk: &[u8], offset: usize) -> Result<(), Fault>;

    /// Whether `feed` itself reports a name that is not UTF-8 as a fault
    /// at its line, so that a caller holding the chunk need not check it.
    const CHECKS_UTF8: bool = false;

    /// The distinct raw names sorted by their bytes, each with its stats
    /// and, for any name that [`Summary::from_entries`] would refuse, the
    /// offset of the first line it appeared on ([`Entry`]; an engine that
    /// refuses such names in `feed`, at their first line, keeps none).
    ///
    /// Unless the partials fold ([`Partial::ABSORBS`]), each thread sorts
    /// its own, so the threads sort side by side, and [`merge_runs`] then
    /// folds the runs together in one pass.
    fn into_sorted(self) -> Vec<Entry>;

    /// Whether [`Partial::absorb`] folds one partial into another more
    /// cheaply than both can be sorted and merged, so that a run's threads
    /// fold their partials into one and sort once. The fast engines'
    /// tables do: both place a name by the same hash, so one is walked in
    /// slot order into the other, and their radix sort is the costly part
    /// (docs/PERFORMANCE.md, step 39). When the fold probed the other
    /// table at random and a comparison sort followed, it cost more than
    /// the two sorts (step 15); `chunked` keeps those sorts.
    const ABSORBS: bool = false;

    /// Adds `other`'s stations to these.
    ///
    /// # Panics
    /// If the partials do not fold ([`Partial::ABSORBS`] is `false`), the
    /// default.
    fn absorb(&mut self, other: Self) {
        let _ = other;
        panic!("absorb called on a partial that does not fold");
    }
}

/// Runs a parallel engine: threads claim chunks in input order from an
/// atomic cursor, each feeds its own [`Partial`], then the partials are
/// sorted and merged (see [`Partial::ABSORBS`]).
pub fn run_parallel<P: Partial>(input: &[u8], options: &Options) -> Result<Summary, Fault> {
    run_parallel_with::<P>(input, options, &|_| {}, &|_| {})
}

/// Where a run's threads hand in their [`Partial`]s when their input is
/// done. For an engine that sorts each partial ([`Partial::ABSORBS`] off),
/// each thread sorts its own, side by side with the others. Otherwise the
/// threads that finish first leave their partials here and the last one
/// folds them into its own and sorts once: folding a million names' tables
/// slot by slot cost less than the second sort and the merge (the 10^6-key
/// file 0.85× the CPU time; docs/PERFORMANCE.md, step 39).
pub(crate) struct Finish<P> {
    /// Partials left so far, and how many threads have finished.
    left: std::sync::Mutex<(Vec<P>, usize)>,
    threads: usize,
}

impl<P: Partial> Finish<P> {
    /// For a run of `threads` threads, each of which calls
    /// [`Finish::sorted`] once.
    pub(crate) fn new(threads: usize) -> Finish<P> {
        Finish {
            left: std::sync::Mutex::new((Vec::new(), 0)),
            threads,
        }
    }

    /// A thread's share of the names, sorted, given its `partial` (timed by
    /// `clock`): `None` if another thread will fold it into its own.
    pub(crate) fn sorted(&self, mut partial: P, clock: &mut WorkerClock) -> Option<Vec<Entry>> {
        if P::ABSORBS {
            let mut left = self.left.lock().unwrap_or_else(|e| e.into_inner());
            left.1 += 1;
            if left.1 < self.threads {
                left.0.push(partial);
                return None;
            }
            let others = std::mem::take(&mut left.0);
            drop(left);
            return Some(clock.sort(|| {
                for other in others {
                    partial.absorb(other);
                }
                partial.into_sorted()
            }));
        }
        Some(clock.sort(|| partial.into_sorted()))
    }
}

/// [`run_parallel`], calling `done` with each chunk's byte range once it has
/// been fed, and `release` with each range read but not fed (a long
/// malformed line, see [`judge_whole`]): the mapped-file path returns the
/// pages of both to the kernel, so a file's pages do not pile up in memory,
/// and counts progress in `done`.
pub fn run_parallel_with<P: Partial>(
    input: &[u8],
    options: &Options,
    done: &(dyn Fn(Range<usize>) + Sync),
    release: &dyn Fn(Range<usize>),
) -> Result<Summary, Fault> {
    let chunks = Chunks::new(input, options.chunk_size, options.threads);
    let threads = options.threads.max(1);
    let finish = Finish::<P>::new(threads);
    let work = || {
        let mut partial = P::default();
        let mut fault = None;
        let mut clock = WorkerClock::start();
        while let Some((offset, chunk)) = chunks.claim() {
            if let Err(f) = partial.feed(chunk, offset) {
                chunks.fault_at(f.offset);
                fault = Fault::first(fault, Some(f));
                break;
            }
            clock.chunk(chunk.len());
            done(offset..offset + chunk.len());
        }
        (finish.sorted(partial, &mut clock), fault)
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

/// Finishes the verdict on a fault's line where [`Partial::feed`] judged it
/// by its head: a line whose head holds no `;` is malformed either way, but
/// a `;` further on makes it a name too long rather than a line without
/// `;`. `input` is the input from byte `base` on; it is read from the
/// fault's line on, a window at a time and only until the verdict is known,
/// calling `release` with each window once read.
pub fn judge_whole(
    fault: Fault,
    input: &[u8],
    base: usize,
    release: &dyn Fn(Range<usize>),
) -> Fault {
    if !matches!(fault.kind, ErrorKind::MissingSemicolon { .. }) {
        return fault;
    }
    const WINDOW: usize = 4 << 20;
    let mut line = LineHead::default();
    let mut pos = fault.offset - base;
    loop {
        let end = input.len().min(pos + WINDOW);
        let ended = line.extend(&input[pos..end]).is_some();
        release(base + pos..base + end);
        if ended || line.decided() || end == input.len() {
            break;
        }
        pos = end;
    }
    match line.parse() {
        Err(kind) => Fault { kind, ..fault },
        Ok(_) => unreachable!("an engine found a valid line malformed: {fault:?}"),
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;
    use crate::error::quoted;

    #[test]
    fn a_long_faulty_line_is_judged_whole_a_window_at_a_time() {
        let len = 9 << 20;
        let input = [&b"a;1.0\n"[..], &vec![b'x'; len], b";1.0\nb;2.0\n"].concat();
        // What an engine says, from the line's head.
        let fault = || Fault {
            offset: 6,
            kind: ErrorKind::MissingSemicolon {
                line: quoted(&input[6..]),
            },
        };
        let whole = Fault {
            offset: 6,
            kind: ErrorKind::NameTooLong { len },
        };
        let released = RefCell::new(Vec::new());
        let judged = judge_whole(fault(), &input, 0, &|r| released.borrow_mut().push(r));
        assert_eq!(judged, whole);
        let w = 4 << 20;
        let windows = [6..6 + w, 6 + w..6 + 2 * w, 6 + 2 * w..input.len()];
        assert_eq!(released.into_inner(), windows);
        // From a block further on in the input, as on the stream path.
        assert_eq!(judge_whole(fault(), &input[6..], 6, &|_| {}), whole);
        // Every other fault was judged whole already.
        let other = Fault {
            offset: 0,
            kind: ErrorKind::EmptyName,
        };
        let judged = judge_whole(other.clone(), &input, 0, &|_| panic!("read"));
        assert_eq!(judged, other);
        // And every engine says so.
        let options = Options {
            threads: 2,
            chunk_size: 1 << 20,
        };
        for engine in Engine::ALL {
            let got = aggregate(engine, &input, &options).unwrap_err();
            assert_eq!(got, whole.clone().after_newlines(1), "{engine:?}");
        }
    }
}

//! The drivers: how an input's bytes reach the engines' per-thread
//! [`Accumulator`]s, and how what those hold becomes a
//! [`Summary`](crate::Summary).
//!
//! The two drivers sit side by side. Bytes in memory, a mapped file's or a
//! slice's, are cut into chunks that threads claim in input order
//! ([`mapped`]); a stream is read into blocks that threads take from a
//! channel ([`stream`]). Both hand the accumulators in at the end through
//! [`Finish`], merge the sorted runs, and finish the verdict on a faulty
//! line with [`judge_whole`].

mod chunks;
pub(crate) mod mapped;
pub(crate) mod stream;

use std::ops::Range;

pub use self::mapped::aggregate;
use crate::engine::Accumulator;
use crate::entry::Entry;
use crate::error::{ErrorKind, Fault};
use crate::parse::LineHead;
use crate::timings::WorkerClock;

/// Where a run's threads hand in their accumulators when their input is
/// done. For an engine that sorts each accumulator
/// ([`Accumulator::ABSORBS`] off), each thread sorts its own, side by side
/// with the others. Otherwise the threads that finish first leave their
/// accumulators here and the last one folds them into its own and sorts
/// once: folding a million names' tables slot by slot costs less than the
/// second sort and the merge (docs/PERFORMANCE.md, *The tables*).
pub(crate) struct Finish<A> {
    /// Accumulators left so far, and how many threads have finished.
    left: std::sync::Mutex<(Vec<A>, usize)>,
    threads: usize,
}

impl<A: Accumulator> Finish<A> {
    /// For a run of `threads` threads, each of which calls
    /// [`Finish::sorted`] once.
    pub(crate) fn new(threads: usize) -> Finish<A> {
        Finish {
            left: std::sync::Mutex::new((Vec::new(), 0)),
            threads,
        }
    }

    /// A thread's share of the names, sorted, given its accumulator `acc`
    /// (timed by `clock`): `None` if another thread will fold it into its
    /// own.
    pub(crate) fn sorted(&self, mut acc: A, clock: &mut WorkerClock) -> Option<Vec<Entry>> {
        if A::ABSORBS {
            let mut left = self.left.lock().unwrap_or_else(|e| e.into_inner());
            left.1 += 1;
            if left.1 < self.threads {
                left.0.push(acc);
                return None;
            }
            let others = std::mem::take(&mut left.0);
            drop(left);
            return Some(clock.sort(|| {
                for other in others {
                    acc.absorb(other);
                }
                acc.into_sorted()
            }));
        }
        Some(clock.sort(|| acc.into_sorted()))
    }
}

/// Finishes the verdict on a fault's line where [`Accumulator::feed`]
/// judged it by its head: a line whose head holds no `;` is malformed either way, but
/// a `;` further on makes it a name too long rather than a line without
/// `;`. `input` is the input from byte `base` on; it is read from the
/// fault's line on, a window at a time and only until the verdict is known,
/// calling `release` with each window once read.
pub(crate) fn judge_whole(
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
    use crate::engine::{Engine, Options};
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

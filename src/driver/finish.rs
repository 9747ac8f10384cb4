//! The end of a run's threads: each hands in its accumulator ([`Finish`]),
//! sorted by itself or folded into another's.

use std::sync::Mutex;

use crate::engine::Accumulator;
use crate::summary::Entry;
use crate::timings::WorkerClock;

/// Where a run's threads hand in their accumulators when their input is
/// done. For an engine that sorts each accumulator
/// ([`Accumulator::ABSORBS`] off), each thread sorts its own, side by side
/// with the others. Otherwise the threads that finish first leave their
/// accumulators here and the last one folds them into its own and sorts
/// once: folding a million names' tables slot by slot costs less than the
/// second sort and the merge (docs/PERFORMANCE.md, *The tables*).
pub(super) struct Finish<A> {
    /// Accumulators left so far, and how many threads have finished.
    left: Mutex<(Vec<A>, usize)>,
    threads: usize,
}

impl<A: Accumulator> Finish<A> {
    /// For a run of `threads` threads, each of which calls
    /// [`Finish::sorted`] once.
    pub(super) fn new(threads: usize) -> Finish<A> {
        Finish {
            left: Mutex::new((Vec::new(), 0)),
            threads,
        }
    }

    /// A thread's share of the names, sorted, given its accumulator `acc`
    /// (timed by `clock`): `None` if another thread will fold it into its
    /// own.
    pub(super) fn sorted(&self, mut acc: A, clock: &mut WorkerClock) -> Option<Vec<Entry>> {
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

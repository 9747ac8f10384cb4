//! Which failure a run reports: every piece of work has a rank, its
//! place among all the inputs' bytes, and the failure of lowest rank wins,
//! whichever thread met it first; its line number is found only then.

use std::collections::BTreeMap;
use std::io;

use super::mapped::Shared;
use super::stream::Counted;
use crate::error::{DataError, Error, Fault};
use crate::shrink;

/// A run that failed: in which input (as numbered by its [`Source`](super::Source)s'
/// iterator), and why.
#[derive(Debug)]
pub(crate) struct Failed {
    pub(crate) input: usize,
    pub(crate) error: Error,
}

/// Where a piece of work lies among all the inputs: its input, and the
/// rank of the input's first byte; a byte `n` bytes into the input ranks
/// `base + n`, and `base - 1` ranks before any of them (an input that
/// cannot be opened, or shrank).
#[derive(Clone, Copy, Debug)]
pub(super) struct Place {
    pub(super) input: usize,
    pub(super) base: usize,
}

/// A failure at a rank (see [`Place`]), with what its message needs.
pub(super) struct Failure<'a> {
    pub(super) rank: usize,
    input: usize,
    cause: Cause<'a>,
}

/// Why a piece of work failed.
enum Cause<'a> {
    /// The input could not be opened or read, or shrank.
    Io(io::Error),
    /// A malformed line; `fault.offset` is its rank, `base` its input's.
    Fault {
        fault: Fault,
        base: usize,
        lines: Lines<'a>,
    },
}

/// How a fault's line number is found.
pub(super) enum Lines<'a> {
    /// By counting the `\n` of the input's bytes before it, from its
    /// first line on: only now, on the error path, also for a window
    /// that started further on.
    Bytes { bytes: Shared<'a>, lo: usize },
    /// From the `\n` of a stream's blocks before `block` (counted as they
    /// were fed) and the `before` in its own block.
    Stream { block: usize, before: u64 },
}

impl<'a> Failure<'a> {
    /// Keeps whichever of two optional failures comes first in the input.
    pub(super) fn first(a: Option<Failure<'a>>, b: Option<Failure<'a>>) -> Option<Failure<'a>> {
        match (a, b) {
            (Some(a), Some(b)) => Some(if b.rank < a.rank { b } else { a }),
            (a, b) => a.or(b),
        }
    }

    /// An input that could not be opened or read, or shrank, ranked at
    /// `rank`.
    pub(super) fn io(place: Place, rank: usize, error: io::Error) -> Failure<'a> {
        Failure {
            rank,
            input: place.input,
            cause: Cause::Io(error),
        }
    }

    /// A malformed line, whose `fault` is ranked already.
    pub(super) fn fault(place: Place, fault: Fault, lines: Lines<'a>) -> Failure<'a> {
        Failure {
            rank: fault.offset,
            input: place.input,
            cause: Cause::Fault {
                fault,
                base: place.base,
                lines,
            },
        }
    }

    /// The error with its line number, given the newlines `counted` in
    /// the streams' blocks.
    pub(super) fn locate(self, counted: &BTreeMap<usize, Counted>) -> Failed {
        let input = self.input;
        let error = match self.cause {
            Cause::Io(e) => Error::Io(e),
            Cause::Fault { fault, base, lines } => {
                let offset = fault.offset - base;
                let newlines = match &lines {
                    Lines::Bytes { bytes, lo } => bytes.count_newlines(*lo..lo + offset),
                    Lines::Stream { block, before } => {
                        let counted = counted.get(&input).map_or((0, 0), Counted::through);
                        // Every block before the fault's was fed whole.
                        debug_assert_eq!(counted.0, *block);
                        counted.1 + before
                    }
                };
                let located = DataError {
                    line: newlines + 1,
                    offset: offset as u64,
                    kind: fault.kind,
                };
                match lines {
                    Lines::Bytes { bytes, .. } if bytes.shrank() => Error::Io(shrink::shrank()),
                    _ => Error::Data(located),
                }
            }
        };
        Failed { input, error }
    }
}

//! Which failure a run reports: every piece of work has a rank, its
//! place among all the inputs' bytes, and the failure of lowest rank
//! ([`RankedFailure`]) wins, whichever thread met it first; its line
//! number is found only then, making it the run's [`RunError`].

use std::collections::BTreeMap;
use std::io;

use super::mapped::SharedBytes;
use super::stream::Counted;
use super::Place;
use crate::error::{DataError, Error, Fault};
use crate::shrink;

/// The error a run ends with: in which input (as numbered by its
/// [`Content`](super::Content)s' iterator), and why, its line number found.
#[derive(Debug)]
pub(crate) struct RunError {
    pub(crate) input: usize,
    pub(crate) error: Error,
}

/// One piece of work's failure at its rank (see [`Place`]), with what
/// its message needs: a [`Fault`] or an I/O error, its line number not yet
/// found.
pub(super) struct RankedFailure<'a> {
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
        number: LineNumber<'a>,
    },
}

/// How a fault's line number is found.
pub(super) enum LineNumber<'a> {
    /// By counting the `\n` of the input's bytes before it, from its
    /// first line on: only now, on the error path, also for a window
    /// that started further on.
    Bytes { bytes: SharedBytes<'a>, lo: usize },
    /// From the `\n` of a stream's blocks before `block` (counted as they
    /// were fed) and the `before` in its own block.
    Stream { block: usize, before: u64 },
}

impl<'a> RankedFailure<'a> {
    /// Keeps whichever of two optional failures comes first in the input.
    pub(super) fn first(
        a: Option<RankedFailure<'a>>,
        b: Option<RankedFailure<'a>>,
    ) -> Option<RankedFailure<'a>> {
        match (a, b) {
            (Some(a), Some(b)) => Some(if b.rank < a.rank { b } else { a }),
            (a, b) => a.or(b),
        }
    }

    /// An input that could not be opened or read, or shrank, ranked at
    /// `rank`.
    pub(super) fn io(place: Place, rank: usize, error: io::Error) -> RankedFailure<'a> {
        RankedFailure {
            rank,
            input: place.input,
            cause: Cause::Io(error),
        }
    }

    /// A malformed line, whose `fault` is ranked already.
    pub(super) fn fault(place: Place, fault: Fault, number: LineNumber<'a>) -> RankedFailure<'a> {
        RankedFailure {
            rank: fault.offset,
            input: place.input,
            cause: Cause::Fault {
                fault,
                base: place.base,
                number,
            },
        }
    }

    /// The error with its line number, given the newlines `counted` in
    /// the streams' blocks.
    pub(super) fn locate(self, counted: &BTreeMap<usize, Counted>) -> RunError {
        let input = self.input;
        let error = match self.cause {
            Cause::Io(e) => Error::Io(e),
            Cause::Fault {
                fault,
                base,
                number,
            } => {
                let offset = fault.offset - base;
                let newlines = match &number {
                    LineNumber::Bytes { bytes, lo } => bytes.count_newlines(*lo..lo + offset),
                    LineNumber::Stream { block, before } => {
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
                match number {
                    LineNumber::Bytes { bytes, .. } if bytes.shrank() => {
                        Error::Io(shrink::shrank())
                    }
                    _ => Error::Data(located),
                }
            }
        };
        RunError { input, error }
    }
}

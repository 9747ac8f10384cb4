//! Aggregating bytes the caller holds in memory: a whole input
//! ([`aggregate`]) or a range of one ([`aggregate_slice`]), each a
//! [`Job`] the engine does: line by line with the naive engine, or through
//! the driver as one input of bytes.

use std::sync::atomic::AtomicU64;

use crate::detail::Kept;
use crate::driver;
use crate::engine::{naive, Accumulator, Engine, Job, Options};
use crate::error::{DataError, Error};
use crate::summary::Summary;

/// Aggregates `input` with `engine`: the lines of a whole input held in
/// memory. Like every `aggregate*` function, it takes what to read first,
/// then the engine and its options.
///
/// ```
/// use brc::output::{render, Format};
/// use brc::{aggregate, Engine, Options};
///
/// let input = b"Oslo;-3.5\nLima;20.1\nOslo;2.5\n";
/// let summary = aggregate(input, Engine::Fast, &Options::default())?;
/// let official = render(&summary, Format::Official);
/// assert_eq!(official, b"{Lima=20.1/20.1/20.1, Oslo=-3.5/-0.5/2.5}\n");
/// # Ok::<(), brc::DataError>(())
/// ```
pub fn aggregate(input: &[u8], engine: Engine, options: &Options) -> Result<Summary, DataError> {
    aggregate_slice(input, true, engine, options)
}

/// [`aggregate`], each station keeping what `kept` says: what the
/// statistics to show need ([`Statistics::kept`](crate::Statistics::kept)).
///
/// ```
/// use brc::output::{render, Format};
/// use brc::{aggregate_keeping, Engine, Options, Statistics};
///
/// let stats = Statistics::parse("median,stddev")?;
/// let input = b"Oslo;-3.5\nOslo;2.5\nOslo;0.5\n";
/// let summary = aggregate_keeping(input, stats.kept(), Engine::Fast, &Options::default())?;
/// let shown = render(&summary.with_statistics(stats)?, Format::Official);
/// assert_eq!(shown, b"{Oslo=0.5/3.1}\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn aggregate_keeping(
    input: &[u8],
    kept: Kept,
    engine: Engine,
    options: &Options,
) -> Result<Summary, DataError> {
    engine.run(SliceJob {
        bytes: input,
        first_line_is_whole: true,
        options,
        kept,
    })
}

/// Aggregates the lines of `bytes`, a range of some input that the caller
/// holds, with `engine`: for reading one input in pieces, each piece by
/// its own call (and process, or machine), the pieces' summaries merged
/// ([`Partial`](crate::Partial)).
///
/// The contract: the lines aggregated are those whose first byte lies in
/// `bytes`. If `first_line_is_whole` is `false`, `bytes` starts inside a
/// line (or just after its `\n`: the caller looks at the byte before
/// the range, as [`Inputs::within`](crate::Inputs::within) does), which the piece before owns:
/// everything up to and including the first `\n` is skipped. A line that
/// starts in `bytes` must end in it: the caller extends its range through
/// the end of its last line (past the range's end, up to and including
/// the next `\n`, or to the end of the input), and the last line of
/// `bytes` ends with it, `\n` or not. A byte-order mark is not skipped.
///
/// In an error, `offset` counts from `bytes[0]` and `line` is one more
/// than the `\n` in `bytes` before the faulty line (the skipped partial
/// line is line 1): the caller, who knows where `bytes` lie, can turn
/// both into the input's.
pub fn aggregate_slice(
    bytes: &[u8],
    first_line_is_whole: bool,
    engine: Engine,
    options: &Options,
) -> Result<Summary, DataError> {
    engine.run(SliceJob {
        bytes,
        first_line_is_whole,
        options,
        kept: Kept::Basic,
    })
}

struct SliceJob<'a> {
    bytes: &'a [u8],
    first_line_is_whole: bool,
    options: &'a Options,
    kept: Kept,
}

impl Job for SliceJob<'_> {
    type Output = Result<Summary, DataError>;

    fn naive(self) -> Self::Output {
        let skip = match self.first_line_is_whole {
            true => 0,
            false => memchr::memchr(b'\n', self.bytes).map_or(self.bytes.len(), |i| i + 1),
        };
        match naive::aggregate(&self.bytes[skip..], self.kept) {
            Ok(summary) => Ok(summary.keeping(self.kept)),
            Err(Error::Data(e)) => Err(DataError {
                line: e.line + u64::from(skip > 0),
                offset: e.offset + skip as u64,
                ..e
            }),
            Err(e) => unreachable!("reading a byte slice failed: {e}"),
        }
    }

    fn parallel<A: Accumulator>(self) -> Self::Output {
        // The first line start at or after byte 1 is after the first `\n`.
        let start = usize::from(!self.first_line_is_whole);
        let bytes = driver::Bytes {
            held: driver::Held::Slice(self.bytes),
            lo: 0,
            window: start..usize::MAX,
            rest: 0,
        };
        let contents = std::iter::once((0, Ok(driver::Content::Bytes(bytes))));
        let run = driver::run::<A>(contents, self.options, &AtomicU64::new(0));
        let kept = self.kept;
        run.map(|summary| summary.keeping(kept))
            .map_err(|failed| match failed.error {
                Error::Data(e) => e,
                e => unreachable!("reading a byte slice failed: {e}"),
            })
    }

    fn kept(&self) -> Kept {
        self.kept
    }
}

//! Aggregating opened inputs: [`Inputs::aggregate`], [`Input::aggregate`]
//! and the functions over paths, each a [`PartsJob`] the engine does: part
//! after part with the naive engine, or the parts' contents through the
//! driver, in one run.

use std::io::{self, BufReader};
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use super::list::{InputError, Inputs, Source};
use super::{window, Input, Opened, Part, NAIVE_BUFFER};
use crate::detail::Kept;
use crate::driver::{self, RunError};
use crate::engine::{naive, Accumulator, Engine, Job, Options};
use crate::error::Error;
use crate::parquet;
use crate::shrink;
use crate::summary::{merge_runs, Entry, RawName, Summary};

impl Input {
    /// Aggregates the input with `engine`, in memory bounded by the
    /// threads and the chunk size, not by the input's size.
    pub fn aggregate(self, engine: Engine, options: &Options) -> Result<Summary, Error> {
        let part = Part {
            opened: self.opened,
            window: 0..u64::MAX,
            rest: 0,
        };
        let parts = std::iter::once((0, Ok(part)));
        let consumed = &self.consumed;
        let run = engine.run(PartsJob {
            parts,
            options,
            consumed,
            kept: Kept::Basic,
        });
        run.map_err(|failed| failed.error)
    }
}

impl Inputs {
    /// Aggregates the inputs with `engine` into one summary, in memory
    /// bounded by the threads and the chunk size, whatever the inputs'
    /// number and size: the threads share one queue of chunks and blocks
    /// from every input, so they stay busy across the inputs' boundaries.
    ///
    /// Parquet files (told by their magic bytes) are read row group by row
    /// group, by the same number of threads, once the text inputs are done;
    /// the first failure in the inputs' order still wins.
    pub fn aggregate(self, engine: Engine, options: &Options) -> Result<Summary, InputError> {
        let sources: Vec<Source> = self.sources().cloned().collect();
        let consumed = self.consumed();
        let parquet = self.parquet();
        let columns = self.columns.clone();
        let dialect = self.dialect.clone();
        let kept = self.kept;
        let (parts, located) = self.parts();
        let text = match dialect {
            Some(dialect) => {
                let contents = parts.map(|(i, part)| (i, part.map(Part::into_content)));
                crate::delimited::run::aggregate(contents, &dialect, options, &consumed, kept)
            }
            None => engine.run(PartsJob {
                parts,
                options,
                consumed: &consumed,
                kept,
            }),
        };
        let text = text.map_err(|failed| located.locate(failed));
        let failed = |input: usize, error| InputError {
            input: sources[input].clone(),
            error,
        };
        // Parquet files after a failed text input are not read.
        let text_failed = text.as_ref().err().map_or(usize::MAX, |f| f.input);
        let parquet: Vec<_> = (parquet.into_iter())
            .filter(|p| p.input < text_failed)
            .collect();
        let read = parquet::run::aggregate(&parquet, &columns, options.threads, kept, &consumed);
        let entries = match (text, read) {
            (Err(t), Err(p)) if p.input < t.input => return Err(failed(p.input, p.error)),
            (Err(t), _) => return Err(failed(t.input, t.error)),
            (Ok(_), Err(p)) => return Err(failed(p.input, p.error)),
            (Ok(text), Ok(entries)) if !entries.is_empty() => (text, entries),
            (Ok(text), Ok(_)) => return Ok(text.keeping(kept)),
        };
        let (text, parquet) = entries;
        let summary = Summary::from_entries(parquet, None);
        let parquet = summary.unwrap_or_else(|f| unreachable!("a checked name is bad: {f:?}"));
        // Parquet's tenths and a delimited file's values meet at the finer
        // scale.
        let scale = text.scale().max(parquet.scale());
        let missing = text.counts_missing();
        let rescaled = |s: Summary| {
            s.rescaled(scale).map_err(|e| {
                let error = Error::Io(std::io::Error::other(e.to_string()));
                failed(0, error)
            })
        };
        let (text, parquet) = (rescaled(text)?, rescaled(parquet)?);
        let merged = merge_runs(vec![self::entries(text), self::entries(parquet)]);
        let summary = Summary::from_entries(merged, None);
        let summary = summary.unwrap_or_else(|f| unreachable!("a checked name is bad: {f:?}"));
        Ok(summary
            .at_scale(scale)
            .counting_missing(missing)
            .keeping(kept))
    }
}

impl Part {
    /// The input as the parallel driver reads it.
    fn into_content(self) -> driver::Content<'static> {
        match self.opened {
            Opened::Mapped {
                map, origin, start, ..
            } => {
                let at =
                    |n: u64| usize::try_from(n).map_or(usize::MAX, |n| origin.saturating_add(n));
                driver::Content::Bytes(driver::Bytes {
                    held: driver::Held::Map(map),
                    lo: start,
                    window: at(self.window.start)..at(self.window.end),
                    rest: self.rest,
                })
            }
            Opened::Stream(reader) => driver::Content::Stream(reader),
        }
    }

    /// Aggregates the part with the naive engine: line by line from the
    /// file (not the map: the oracle stays plain, and the file's pages never
    /// enter this process) or the stream.
    fn naive(self, consumed: &Arc<AtomicU64>, kept: Kept) -> Result<Summary, Error> {
        let Opened::Mapped {
            file,
            map,
            origin,
            start,
        } = self.opened
        else {
            let Opened::Stream(reader) = self.opened else {
                unreachable!("matched above")
            };
            return naive::aggregate(BufReader::with_capacity(NAIVE_BUFFER, reader), kept);
        };
        let len = map.len() as u64;
        let at = |n: u64| (origin as u64).saturating_add(n).min(len);
        let window = at(self.window.start)..at(self.window.end);
        let result = window::naive(&file, start as u64, window, len, consumed, kept);
        // Read through the file, a cut shows as a short last line or none.
        if file.metadata()?.len() < len {
            return Err(shrink::shrank().into());
        }
        result
    }
}

/// A run over opened parts, in order: `(index, part)` pairs, the index
/// naming the input in a failure.
struct PartsJob<'o, I> {
    parts: I,
    options: &'o Options,
    consumed: &'o Arc<AtomicU64>,
    kept: Kept,
}

impl<I: Iterator<Item = (usize, io::Result<Part>)>> Job for PartsJob<'_, I> {
    type Output = Result<Summary, RunError>;

    /// One part after the other, each one's summary merged into the
    /// others'.
    fn naive(self) -> Self::Output {
        let mut merged = Vec::new();
        for (input, part) in self.parts {
            let summary = part
                .map_err(Error::from)
                .and_then(|p| p.naive(self.consumed, self.kept));
            let summary = summary.map_err(|error| RunError { input, error })?;
            merged = merge_runs(vec![merged, entries(summary)]);
        }
        let summary = Summary::from_entries(merged, None);
        let summary = summary.unwrap_or_else(|f| unreachable!("a summary's name is bad: {f:?}"));
        Ok(summary.keeping(self.kept))
    }

    fn parallel<A: Accumulator>(self) -> Self::Output {
        let contents = self
            .parts
            .map(|(i, part)| (i, part.map(Part::into_content)));
        driver::run::<A>(contents, self.options, self.consumed)
    }

    fn kept(&self) -> Kept {
        self.kept
    }
}

/// A summary's stations as entries, to merge.
fn entries(summary: Summary) -> Vec<Entry> {
    (summary.into_stations().into_iter())
        .map(|(name, stats)| Entry {
            name: RawName::from_slice(name.as_bytes()),
            stats,
            first: 0,
        })
        .collect()
}

/// Aggregates the files and directories `paths` (no `-`: every path is a
/// file or a directory) into one summary with `engine`, as [`Inputs`]
/// reads them.
pub fn aggregate_paths<P: AsRef<Path>>(
    paths: impl IntoIterator<Item = P>,
    engine: Engine,
    options: &Options,
) -> Result<Summary, InputError> {
    let sources = paths.into_iter().map(|p| Source::File(p.as_ref().into()));
    Inputs::new(sources).aggregate(engine, options)
}

/// Aggregates the lines of the file at `path` whose first byte lies in
/// `range` of its bytes as stored, as [`Inputs::within`] reads them:
/// ranges that tile the file (the last one reaching its end or beyond)
/// read each line once between them, and each reads only its bytes and
/// the end of its last line. A compressed file is read whole by the range
/// holding its byte 0. An error's line number counts from the file's
/// start.
pub fn aggregate_file_range(
    path: &Path,
    range: Range<u64>,
    engine: Engine,
    options: &Options,
) -> Result<Summary, InputError> {
    let inputs = Inputs::new([Source::File(path.into())]).within(range);
    inputs.aggregate(engine, options)
}

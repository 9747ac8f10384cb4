//! A run over delimited inputs: each file's rows spread over threads in
//! chunks, each stream read in blocks, every key's stats folded into one
//! table.
//!
//! A chunk of a file in memory starts at a row start only a pass from the
//! file's start could prove: a line feed may lie inside a quoted cell. So
//! each chunk but the first *guesses* that the first line feed at or after
//! its start ends a row, reads its rows, and tells where its last row
//! ended; a guess is right when it equals where the chunk before ended.
//! When every guess holds the run is exact; when one does not (a quoted
//! line feed just after a chunk's start), the file is read again on one
//! thread, from its first row on.

use std::io::{self, Read};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use super::feed::feed;
use super::masks::Masks;
use super::scan::{guess_row_start, row_start_after, Rows};
use super::table::{Table, SKIPPED_SHOWN};
use super::{CellError, CellFault, DelimitedError, Dialect, Layout};
use crate::detail::Kept;
use crate::driver::{release, Content, Held, RunError};
use crate::engine::Options;
use crate::error::Error;
use crate::shrink;
use crate::summary::Summary;

/// The longest row a stream may hold, in bytes: a quoted cell never
/// closed fails here instead of filling the memory.
const MAX_STREAM_ROW: usize = 64 << 20;

/// Aggregates `contents`, in order, read as `dialect` says.
pub(crate) fn aggregate<'a>(
    contents: impl Iterator<Item = (usize, io::Result<Content<'a>>)>,
    dialect: &Dialect,
    options: &Options,
    consumed: &AtomicU64,
    kept: Kept,
) -> Result<Summary, RunError> {
    aggregate_with(contents, dialect, options, consumed, kept, Masks::best())
}

/// [`aggregate`] with the masks built as `masks` says.
pub(crate) fn aggregate_with<'a>(
    contents: impl Iterator<Item = (usize, io::Result<Content<'a>>)>,
    dialect: &Dialect,
    options: &Options,
    consumed: &AtomicU64,
    kept: Kept,
    masks: Masks,
) -> Result<Summary, RunError> {
    let mut run = Run {
        dialect,
        options,
        kept,
        consumed,
        masks,
        header: None,
        skipped: 0,
        first_skipped: Vec::new(),
    };
    let mut total = Table::keeping(kept);
    for (input, content) in contents {
        let failed = |error: Error| RunError { input, error };
        let table = match content.map_err(|e| failed(e.into()))? {
            Content::Bytes(b) => run.bytes(b, input),
            Content::Stream(reader) => run.stream(reader, input),
        };
        let merged = table.and_then(|t| {
            total.merge(t).map_err(|kind| {
                let e = DelimitedError {
                    line: 0,
                    column: None,
                    kind,
                };
                Error::Delimited(e)
            })
        });
        merged.map_err(failed)?;
    }
    let scale = total.scale();
    run.first_skipped.truncate(SKIPPED_SHOWN);
    Ok(Summary::from_sorted(total.into_sorted())
        .at_scale(scale)
        .counting_missing(true)
        .keeping(kept)
        .skipping(run.skipped, run.first_skipped))
}

/// What a run's inputs share.
struct Run<'d> {
    dialect: &'d Dialect,
    options: &'d Options,
    /// What each key keeps beyond its basic stats.
    kept: Kept,
    consumed: &'d AtomicU64,
    masks: Masks,
    /// The first input's header, which every other must repeat.
    header: Option<Vec<Vec<u8>>>,
    /// Bad rows skipped, and the first few: input and line.
    skipped: u64,
    first_skipped: Vec<(usize, u64)>,
}

/// What reading a chunk gave: where its rows started (a guess but for the
/// first), where the next row starts, and its fault.
type Read1 = (usize, usize, Option<CellFault>);

impl Run<'_> {
    /// Reads the header at `at` of `bytes`, a whole input or its first
    /// rows; returns where the data starts and the layout, or `None` when
    /// there is no row at all.
    fn header(&mut self, bytes: &[u8], at: usize) -> Result<Option<(usize, Layout)>, CellFault> {
        let mut rows = Rows::new(bytes, at, self.dialect.delimiter, self.masks);
        let mut cells = Vec::new();
        let got = rows.next(|_, c| {
            let mut scratch = Vec::new();
            cells.push(c.text(bytes, &mut scratch).to_vec());
        });
        let fault = |column, kind| CellFault {
            offset: at,
            column,
            kind,
        };
        match got {
            None => return Ok(None),
            Some(Err(f)) => {
                let kind = match f.shape {
                    super::scan::Shape::StrayQuote => CellError::StrayQuote,
                    super::scan::Shape::AfterQuote => CellError::AfterQuote,
                    super::scan::Shape::Unclosed => CellError::Unclosed,
                };
                return Err(fault(Some(f.cell + 1), kind));
            }
            Some(Ok(_)) => {}
        }
        match &self.header {
            Some(first) if *first != cells => return Err(fault(None, CellError::Header)),
            Some(_) => {}
            None => self.header = Some(cells.clone()),
        }
        let layout = self.dialect.layout(&cells).map_err(|k| fault(None, k))?;
        Ok(Some((rows.at(), layout)))
    }

    /// Takes the skipped rows out of `table`, the rows of `bytes` from
    /// `start` (a line start after `lines` lines of input `input`).
    fn skipped(&mut self, table: &mut Table, input: usize, bytes: &[u8], start: usize, lines: u64) {
        self.skipped += std::mem::take(&mut table.skipped);
        for offset in std::mem::take(&mut table.first_skipped) {
            if self.first_skipped.len() < SKIPPED_SHOWN {
                let n = memchr::memchr_iter(b'\n', &bytes[start..offset]).count() as u64;
                self.first_skipped.push((input, lines + 1 + n));
            }
        }
    }

    /// Reads the rows of bytes in memory that start in their window.
    fn bytes(&mut self, b: crate::driver::Bytes, input: usize) -> Result<Table, Error> {
        let bytes: &[u8] = match &b.held {
            Held::Slice(s) => s,
            Held::Map(m) => m,
        };
        let guard = match &b.held {
            Held::Map(m) => Some(shrink::Guard::new(
                m.as_ptr() as usize..m.as_ptr() as usize + m.len(),
            )),
            Held::Slice(_) => None,
        };
        let located = |f: CellFault| Error::Delimited(f.locate(bytes, b.lo, 0));
        // The window's bytes, its header's too, count once it is read, as
        // a text input's do.
        let window = b.window.start.min(bytes.len())..b.window.end.min(bytes.len());
        let result = self
            .header(bytes, b.lo)
            .map_err(located)
            .and_then(|header| {
                let Some((data, layout)) = header else {
                    return Ok(Table::keeping(self.kept));
                };
                let from = b.window.start.max(data);
                let until = b.window.end.min(bytes.len());
                if from >= until {
                    return Ok(Table::keeping(self.kept));
                }
                let first = row_start_after(bytes, data, from);
                // A mapped file's pages are let go once read, so the run's
                // memory does not grow with the file.
                let read = |r: Range<usize>| {
                    if let Held::Map(map) = &b.held {
                        release(map, r);
                    }
                };
                let (mut table, fault) = self.chunks(bytes, first, until, &layout, &read);
                match fault {
                    Some(f) => Err(located(f)),
                    None => {
                        self.skipped(&mut table, input, bytes, b.lo, 0);
                        Ok(table)
                    }
                }
            });
        (self.consumed).fetch_add(window.len() as u64, Ordering::Relaxed);
        if guard.as_ref().is_some_and(shrink::Guard::shrank) {
            return Err(shrink::shrank().into());
        }
        result
    }

    /// Reads the rows starting in `first..until` on the run's threads, in
    /// chunks; `first` is a row start.
    fn chunks(
        &self,
        bytes: &[u8],
        first: usize,
        until: usize,
        layout: &Layout,
        read: &(dyn Fn(Range<usize>) + Sync),
    ) -> (Table, Option<CellFault>) {
        if first >= until {
            // No row starts in the range (it lies inside one row).
            return (Table::keeping(self.kept), None);
        }
        let size = self.options.chunk_size.max(1);
        let n = (until - first).div_ceil(size);
        let threads = self.options.threads.max(1).min(n);
        if threads <= 1 {
            return self.one_thread(bytes, first, until, layout, read);
        }
        let bound = |k: usize| (first + k * size).min(until);
        let next = AtomicUsize::new(0);
        // The first chunk with a fault: no chunk after it is read.
        let failed = AtomicUsize::new(usize::MAX);
        let reads: Mutex<Vec<Option<Read1>>> = Mutex::new(vec![None; n]);
        let tables: Vec<Table> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    s.spawn(|| {
                        let mut table = Table::keeping(self.kept);
                        loop {
                            let k = next.fetch_add(1, Ordering::Relaxed);
                            if k >= n || k > failed.load(Ordering::Relaxed) {
                                return table;
                            }
                            let (lo, hi) = (bound(k), bound(k + 1));
                            let start = if k == 0 {
                                first
                            } else {
                                guess_row_start(bytes, lo)
                            };
                            let (end, fault) = match start < hi {
                                true => feed(bytes, start, hi, layout, &mut table, self.masks),
                                false => (start, None),
                            };
                            if fault.is_some() {
                                failed.fetch_min(k, Ordering::Relaxed);
                            }
                            read(lo..end.min(bytes.len()));
                            reads.lock().unwrap_or_else(|e| e.into_inner())[k] =
                                Some((start, end, fault));
                        }
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        });
        let reads = reads.into_inner().unwrap_or_else(|e| e.into_inner());
        let (mut ended, mut first_fault) = (first, None);
        for chunk in reads {
            let Some((start, end, fault)) = chunk else {
                break;
            };
            if start != ended {
                // A guess was wrong: read again, exactly, on one thread.
                return self.one_thread(bytes, first, until, layout, read);
            }
            if let Some(fault) = fault {
                if matches!(fault.kind, CellError::Range { .. }) {
                    // A value refused at its chunk's table's scale, which
                    // counts only the rows that table has seen: the scale
                    // the error names, that of every row before it, only a
                    // pass in order knows.
                    return self.one_thread(bytes, first, until, layout, read);
                }
                first_fault = Some(fault);
                break;
            }
            ended = end;
        }
        let mut total = Table::keeping(self.kept);
        for table in tables {
            if total.merge(table).is_err() {
                // Values that fit no common scale, or sums past 128 bits,
                // across chunks: which row brought it about, before any
                // chunk's fault or not, only a pass in order can say (and
                // with `--on-error skip`, that row is skipped), so the
                // range is read again, exactly, on one thread. The tables
                // hold every row before the first fault (and some after):
                // when they merge, the rows before it do.
                return self.one_thread(bytes, first, until, layout, read);
            }
        }
        match first_fault {
            Some(fault) => (Table::keeping(self.kept), Some(fault)),
            None => (total, None),
        }
    }

    /// Reads the rows starting in `first..until` on this thread, a chunk
    /// at a time, each let go once read.
    fn one_thread(
        &self,
        bytes: &[u8],
        first: usize,
        until: usize,
        layout: &Layout,
        read: &(dyn Fn(Range<usize>) + Sync),
    ) -> (Table, Option<CellFault>) {
        let size = self.options.chunk_size.max(1);
        let mut table = Table::keeping(self.kept);
        let (mut at, mut fault) = (first, None);
        while at < until && fault.is_none() {
            let next = (at + size).min(until);
            let (end, found) = feed(bytes, at, next, layout, &mut table, self.masks);
            read(at..end.min(bytes.len()));
            (at, fault) = (end, found);
        }
        (table, fault)
    }

    /// Reads a stream's rows in blocks, on this thread: each block ends at
    /// the last line feed outside quotes.
    fn stream(
        &mut self,
        mut reader: Box<dyn Read + Send + '_>,
        input: usize,
    ) -> Result<Table, Error> {
        let size = self.options.chunk_size.clamp(1 << 16, 16 << 20);
        let mut buf: Vec<u8> = Vec::with_capacity(size);
        let mut lines = 0u64;
        let mut layout: Option<Layout> = None;
        let mut table = Table::keeping(self.kept);
        let mut ended = false;
        while !ended {
            let want = buf.len() + size;
            // A read error comes after the rows read whole before it, as
            // on every other path: their first fault is the first.
            let mut failed = None;
            while buf.len() < want {
                match (&mut reader)
                    .take((want - buf.len()) as u64)
                    .read_to_end(&mut buf)
                {
                    Ok(0) => {
                        ended = true;
                        break;
                    }
                    Ok(_) => {}
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            let cut = if ended { buf.len() } else { last_row_end(&buf) };
            if cut == 0 {
                if let Some(e) = failed {
                    return Err(e.into());
                }
                if buf.len() > MAX_STREAM_ROW {
                    let f = CellFault {
                        offset: 0,
                        column: None,
                        kind: CellError::Unclosed,
                    };
                    return Err(Error::Delimited(f.locate(&buf, 0, lines)));
                }
                continue;
            }
            let block = &buf[..cut];
            let located = |f: CellFault| Error::Delimited(f.locate(block, 0, lines));
            let mut from = 0;
            if layout.is_none() {
                if let Some((data, l)) = self.header(block, 0).map_err(located)? {
                    (from, layout) = (data, Some(l));
                }
            }
            if let Some(layout) = &layout {
                let (_, fault) = feed(block, from, block.len(), layout, &mut table, self.masks);
                if let Some(f) = fault {
                    return Err(located(f));
                }
                self.skipped(&mut table, input, block, 0, lines);
            }
            if let Some(e) = failed {
                return Err(e.into());
            }
            // The stream counts the bytes it reads, as stored, itself.
            lines += memchr::memchr_iter(b'\n', block).count() as u64;
            buf.drain(..cut);
        }
        Ok(table)
    }
}

/// A stream cut after its first row: what a run reads of a delimited input
/// outside its shard (`--shard`), whose header must still agree with the
/// others', as a run over every input would check. Ends after the first
/// line feed outside quotes (a quoted header cell may hold one), or where
/// the stream does.
pub(crate) struct HeaderOnly<R> {
    inner: R,
    quoted: bool,
    done: bool,
}

impl<R> HeaderOnly<R> {
    /// `inner` up to the end of its first row.
    pub(crate) fn new(inner: R) -> HeaderOnly<R> {
        HeaderOnly {
            inner,
            quoted: false,
            done: false,
        }
    }
}

impl<R: Read> Read for HeaderOnly<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.done {
            return Ok(0);
        }
        let n = self.inner.read(buf)?;
        for (i, &b) in buf[..n].iter().enumerate() {
            match b {
                b'"' => self.quoted = !self.quoted,
                b'\n' if !self.quoted => {
                    self.done = true;
                    return Ok(i + 1);
                }
                _ => {}
            }
        }
        Ok(n)
    }
}

/// Just past the last line feed of `buf` that lies outside quotes, `buf`
/// starting at a row start; 0 if there is none.
fn last_row_end(buf: &[u8]) -> usize {
    let quotes = memchr::memchr_iter(b'"', buf).count();
    let mut after = 0;
    for (i, &b) in buf.iter().enumerate().rev() {
        match b {
            b'"' => after += 1,
            b'\n' if (quotes - after).is_multiple_of(2) => return i + 1,
            _ => {}
        }
    }
    0
}

//! A text object's part, read by ranged requests: the lines whose first
//! byte lies in a range of its bytes ([`Inputs::within`](super::Inputs::within),
//! `--shard`), by the rule a mapped file's part follows (`window`), so that
//! each part costs about its own bytes and the parts of an object read
//! every line once between them.
//!
//! The range is asked for from the byte before it (a `\n` there means a
//! line starts at the range's start; otherwise the first line starts after
//! the next `\n`) through [`TAIL`] bytes past its end, which hold the end of
//! the last line of any valid input; a longer last line is finished with
//! further requests, each twice the size of the one before. Everything is
//! streamed, so a range of any length is read in bounded memory. The last
//! part's range is open-ended and is read to the object's end.
//!
//! Line numbers: the driver counts them from the first line a part reads.
//! An error's line number and offset are moved to count from the object's
//! first line only when there is an error, by a request that counts the
//! `\n` before that line ([`Skipped::locate`]): errors are rare, and
//! counting on every run would read the whole object's head for each part.
//!
//! A compressed object cannot be cut, nor can an empty one, a delimited one
//! (CSV: its header is at its start, and a line feed inside quotes ends no
//! row), or anything starting with Parquet's magic bytes without ending
//! with them (refused as Parquet on a stream): each is read whole, by the
//! part holding its first byte, as a compressed file is.

use std::io::{self, BufRead, Read};
use std::ops::Range;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use super::decode::{Compression, Counting, BOM};
use super::window::skip_line;
use super::{Input, Opened};
use crate::error::DataError;
use crate::object::Object;
use crate::parse::MAX_ROW_LEN;

/// Bytes asked for past a part's range with the range itself: the end of
/// any valid line starting before the range's end (a row of at most
/// [`MAX_ROW_LEN`] bytes and its `\n`), so that one request does.
const TAIL: u64 = MAX_ROW_LEN as u64 + 1;

/// The first further request's size when the last line goes on past
/// [`TAIL`] (a malformed line), doubled for each next one up to
/// [`MAX_STEP`].
const STEP: u64 = 64 << 10;
const MAX_STEP: u64 = 16 << 20;

/// Where a part's bytes come from: an object's ranged requests (bytes in
/// memory in the tests).
pub(super) trait Ranges: Send + Sync + 'static {
    /// Bytes `range` as a stream, to the end when `range.end` is
    /// `u64::MAX`.
    fn stream(&self, range: Range<u64>) -> io::Result<Box<dyn BufRead + Send>>;
}

impl Ranges for Object {
    fn stream(&self, range: Range<u64>) -> io::Result<Box<dyn BufRead + Send>> {
        Ok(Box::new(Object::stream(self, range)?))
    }
}

/// What a run reads of the text object `object` (not Parquet): the lines
/// whose first byte lies in `window` of its bytes, as a stream, with what
/// locates an error when the first of them is not the object's first line;
/// `None` when no line starts there. Counts the bytes read into `consumed`.
/// Unless its rows are `lines` (`name;value`), it is read whole by the
/// window holding its first byte: a delimited file's header is at its
/// start, and a line feed inside quotes ends no row.
pub(super) fn open(
    object: &Arc<Object>,
    window: Range<u64>,
    lines: bool,
    consumed: &Arc<AtomicU64>,
) -> io::Result<Option<(Opened, Option<Skipped>)>> {
    let head = object.head();
    let parquet = <&[u8; 4]>::try_from(head).is_ok_and(crate::parquet::is_magic);
    let whole = !lines
        || window == (0..u64::MAX)
        || object.size() == 0
        || parquet
        || Compression::detect(head) != Compression::None;
    if whole {
        if window.start > 0 {
            return Ok(None);
        }
        return Ok(Some((open_whole(object, consumed)?, None)));
    }
    let bom = match head.starts_with(BOM) {
        true => BOM.len() as u64,
        false => 0,
    };
    let source: Arc<dyn Ranges> = Arc::clone(object) as Arc<dyn Ranges>;
    let Some(part) = Part::open(Arc::clone(&source), object.size(), bom, window)? else {
        return Ok(None);
    };
    let skipped = (part.pos > bom).then(|| Skipped {
        source,
        first: part.pos,
        bom,
    });
    let counted = Counting {
        inner: part,
        consumed: Arc::clone(consumed),
    };
    Ok(Some((Opened::Stream(Box::new(counted)), skipped)))
}

/// The text object `object` read whole, from its first byte, as a stream.
/// Counts the bytes read into `consumed`.
pub(super) fn open_whole(object: &Arc<Object>, consumed: &Arc<AtomicU64>) -> io::Result<Opened> {
    let input = Input::from_reader_counted(object.reader()?, Arc::clone(consumed))?;
    Ok(input.opened)
}

/// The lines of a source whose first byte lies in a range, read by ranged
/// requests.
struct Part {
    source: Arc<dyn Ranges>,
    /// The current request's bytes, the next at byte `pos` of the source.
    body: Box<dyn BufRead + Send>,
    pos: u64,
    /// Where the current request ends: `u64::MAX` at the source's end.
    asked: u64,
    /// The lines starting before this byte are read.
    end: u64,
    /// The source's size as listed: no request reaches past it.
    size: u64,
    /// The next further request's size.
    step: u64,
    /// The last byte read, once past `end`: a `\n` ends the last line.
    last: u8,
    done: bool,
}

impl Part {
    /// The lines of `source` (of `size` bytes, its first line at `bom`)
    /// whose first byte lies in `window` of its bytes (open-ended if its end
    /// is `u64::MAX`), positioned at the first of them; `None` if no line
    /// starts there.
    fn open(
        source: Arc<dyn Ranges>,
        size: u64,
        bom: u64,
        window: Range<u64>,
    ) -> io::Result<Option<Part>> {
        let end = window.end;
        // The first line is where the source's is, or after the first `\n`
        // from the byte before the window on.
        let from = match window.start <= bom {
            true => bom,
            false => window.start - 1,
        };
        if from >= size || (window.start <= bom && bom >= end) {
            return Ok(None);
        }
        let asked = match end >= size {
            true => u64::MAX,
            false => end.saturating_add(TAIL).min(size),
        };
        let mut body = source.stream(from..asked)?;
        let first = match window.start <= bom {
            true => Some(bom),
            false => skip_line(&mut body, from, end - 1)?,
        };
        let Some(first) = first.filter(|&first| first < end) else {
            return Ok(None);
        };
        Ok(Some(Part {
            source,
            body,
            pos: first,
            asked,
            end,
            size,
            step: STEP,
            last: b'\n',
            done: false,
        }))
    }

    /// Asks for the next bytes of a last line that goes on past the
    /// current request; `false` at the source's end, which ends the line.
    fn ask_further(&mut self) -> io::Result<bool> {
        if self.asked == u64::MAX || self.pos >= self.size {
            return Ok(false);
        }
        if self.pos < self.asked {
            let e = "the object was cut short: its reply ended before the range asked for";
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, e));
        }
        self.asked = self.pos.saturating_add(self.step).min(self.size);
        self.step = (self.step * 2).min(MAX_STEP);
        self.body = self.source.stream(self.pos..self.asked)?;
        Ok(true)
    }
}

impl Read for Part {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        while !self.done {
            if self.pos >= self.end && self.last == b'\n' {
                break;
            }
            let held = self.body.fill_buf()?;
            if held.is_empty() {
                match self.pos < self.end && self.asked != u64::MAX {
                    // Within the range, what was asked for must come.
                    true => {
                        let e = "the object was cut short: its reply ended inside the range";
                        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, e));
                    }
                    false if self.ask_further()? => continue,
                    false => break,
                }
            }
            let n = match self.pos < self.end {
                true => {
                    usize::try_from(self.end - self.pos).map_or(held.len(), |n| n.min(held.len()))
                }
                // Past the range, through the `\n` of its last line.
                false => memchr::memchr(b'\n', held).map_or(held.len(), |i| i + 1),
            };
            let n = n.min(buf.len());
            buf[..n].copy_from_slice(&held[..n]);
            self.last = held[n - 1];
            self.body.consume(n);
            self.pos += n as u64;
            return Ok(n);
        }
        if !self.done {
            // The rest of the reply is not wanted: dropping it ends the
            // request.
            self.done = true;
            self.body = Box::new(io::empty());
        }
        Ok(0)
    }
}

/// Where a part of a source read from past its first line had its first
/// line: what moves an error's line number and offset to count from the
/// source's first line.
pub(super) struct Skipped {
    source: Arc<dyn Ranges>,
    /// The part's first line's byte.
    first: u64,
    /// The source's first line's byte (past a byte-order mark).
    bom: u64,
}

impl Skipped {
    /// `error`, found by counting from the part's first line, counted from
    /// the source's: the `\n` before the part's first line are counted
    /// now, by a request of the bytes before it that only counts them.
    pub(super) fn locate(&self, error: DataError) -> io::Result<DataError> {
        let mut before = self.source.stream(self.bom..self.first)?;
        let mut newlines = 0;
        loop {
            let held = before.fill_buf()?;
            if held.is_empty() {
                break;
            }
            newlines += memchr::memchr_iter(b'\n', held).count() as u64;
            let n = held.len();
            before.consume(n);
        }
        Ok(DataError {
            line: error.line + newlines,
            offset: error.offset + (self.first - self.bom),
            ..error
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use proptest::prelude::*;
    use std::sync::Mutex;

    /// Bytes in memory, served by ranges as an object store serves them,
    /// each range asked for recorded.
    struct Served {
        bytes: Vec<u8>,
        asked: Mutex<Vec<Range<u64>>>,
    }

    impl Ranges for Served {
        fn stream(&self, range: Range<u64>) -> io::Result<Box<dyn BufRead + Send>> {
            self.asked.lock().unwrap().push(range.clone());
            let len = self.bytes.len() as u64;
            let end = range.end.min(len);
            assert!(
                range.start < end,
                "an empty or past-the-end range: {range:?}"
            );
            let bytes = self.bytes[range.start as usize..end as usize].to_vec();
            // A few bytes at a time, as a body arrives.
            Ok(Box::new(io::BufReader::with_capacity(
                5,
                io::Cursor::new(bytes),
            )))
        }
    }

    fn served(bytes: &[u8]) -> Arc<Served> {
        Arc::new(Served {
            bytes: bytes.to_vec(),
            asked: Mutex::default(),
        })
    }

    /// The part of `source` in `window` (open-ended if it reaches the end),
    /// read, and where its first line starts.
    fn read(source: &Arc<Served>, window: Range<u64>) -> (Vec<u8>, Option<u64>) {
        let size = source.bytes.len() as u64;
        let bom = if source.bytes.starts_with(BOM) { 3 } else { 0 };
        let source = Arc::clone(source) as Arc<dyn Ranges>;
        match Part::open(source, size, bom, window).unwrap() {
            None => (Vec::new(), None),
            Some(mut part) => {
                let first = part.pos;
                let mut out = Vec::new();
                // Read a few bytes at a time, as well as all at once.
                let mut buf = [0; 3];
                loop {
                    let n = part.read(&mut buf).unwrap();
                    if n == 0 {
                        break;
                    }
                    out.extend_from_slice(&buf[..n]);
                }
                (out, Some(first))
            }
        }
    }

    /// Cuts `size` bytes at `cuts`, the last range open-ended.
    fn windows(size: u64, cuts: &[u64]) -> Vec<Range<u64>> {
        let mut cuts: Vec<u64> = cuts.iter().map(|c| c % (size + 1)).collect();
        cuts.push(0);
        cuts.sort_unstable();
        cuts.dedup();
        let mut ends: Vec<u64> = cuts[1..].to_vec();
        ends.push(u64::MAX);
        cuts.into_iter().zip(ends).map(|(a, b)| a..b).collect()
    }

    fn text() -> impl Strategy<Value = Vec<u8>> {
        let line = prop::collection::vec(prop::sample::select(b"ab;1.\n".to_vec()), 0..12);
        (
            prop::collection::vec(line, 0..30),
            any::<bool>(),
            prop::sample::select(vec![0usize, 200, 70_000]),
            any::<bool>(),
        )
            .prop_map(|(lines, bom, long, newline)| {
                let mut text = if bom { BOM.to_vec() } else { Vec::new() };
                for line in lines {
                    text.extend_from_slice(&line);
                    text.push(b'\n');
                }
                // Now and then a line longer than the tail asked for.
                text.extend(std::iter::repeat_n(b'x', long));
                text.extend_from_slice(b"\nz;1.0");
                if newline {
                    text.push(b'\n');
                }
                text
            })
    }

    proptest! {
        /// Parts cut anywhere read every line once between them, each from
        /// a line's start through a line's end, as a file's windows do; each
        /// asks for its own bytes, the byte before and the rest of its last
        /// line; the `\n` before each one's first line are counted right.
        #[test]
        fn parts_read_every_line_once(
            text in text(),
            cuts in prop::collection::vec(any::<u64>(), 0..6),
        ) {
            let bom = if text.starts_with(BOM) { 3 } else { 0 };
            let source = served(&text);
            let size = text.len() as u64;
            let mut joined = Vec::new();
            for window in windows(size, &cuts) {
                source.asked.lock().unwrap().clear();
                let (out, first) = read(&source, window.clone());
                let asked: u64 = (source.asked.lock().unwrap().iter())
                    .map(|r| r.end.min(size) - r.start)
                    .sum();
                let Some(first) = first else {
                    prop_assert!(out.is_empty());
                    continue;
                };
                // A line's start in the window, and all of the lines
                // starting in it.
                prop_assert!(first == bom || text[first as usize - 1] == b'\n');
                prop_assert!(window.contains(&first));
                let through = first as usize + out.len();
                prop_assert_eq!(&text[first as usize..through], &out[..]);
                prop_assert!(through == text.len() || text[through - 1] == b'\n');
                prop_assert!(through == text.len() || !window.contains(&(through as u64)));
                // What it asked for: from the byte before the window to
                // the end of its last line, and a bounded overshoot.
                let own = window.end.min(size) - window.start.saturating_sub(1);
                let last = (through as u64).saturating_sub(window.end.min(size));
                let further = if last > TAIL { 2 * last + STEP } else { 0 };
                prop_assert!(asked <= own + TAIL + further, "{asked} {own} {last}");
                // The lines before it, as an error is counted.
                let skipped = Skipped {
                    source: Arc::clone(&source) as Arc<dyn Ranges>,
                    first,
                    bom,
                };
                let error = DataError { line: 1, offset: 0, kind: ErrorKind::EmptyLine };
                let located = match first > bom {
                    true => skipped.locate(error).unwrap(),
                    false => error,
                };
                let before = &text[..first as usize];
                let newlines = memchr::memchr_iter(b'\n', before).count() as u64;
                prop_assert_eq!((located.line, located.offset), (newlines + 1, first - bom));
                joined.extend_from_slice(&out);
            }
            prop_assert_eq!(&joined[..], &text[bom as usize..]);
        }
    }

    #[test]
    fn a_window_reads_on_through_its_last_line_only() {
        let source = served(b"a;1.0\nbb;2.0\nc;3.0");
        assert_eq!(read(&source, 0..6).0, b"a;1.0\n");
        assert_eq!(read(&source, 0..7).0, b"a;1.0\nbb;2.0\n");
        assert_eq!(read(&source, 1..7).0, b"bb;2.0\n");
        assert_eq!(read(&source, 7..13).0, b"");
        assert_eq!(read(&source, 7..14).0, b"c;3.0");
        assert_eq!(read(&source, 13..u64::MAX).0, b"c;3.0");
        assert_eq!(read(&source, 14..u64::MAX), (Vec::new(), None));
        // From the byte before the window through the tail past it, in
        // one request.
        source.asked.lock().unwrap().clear();
        read(&source, 3..9);
        let one = Range { start: 2, end: 18 };
        assert_eq!(*source.asked.lock().unwrap(), [one]);
    }

    #[test]
    fn a_byte_order_mark_is_not_read() {
        let source = served(b"\xef\xbb\xbfa;1.0\nb;2.0\n");
        assert_eq!(read(&source, 0..1), (Vec::new(), None));
        assert_eq!(read(&source, 0..4).0, b"a;1.0\n");
        assert_eq!(read(&source, 2..4).0, b"a;1.0\n");
        assert_eq!(read(&source, 4..u64::MAX).0, b"b;2.0\n");
    }

    #[test]
    fn a_long_last_line_is_finished_by_requests_twice_as_long() {
        let mut text = b"a;1.0\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', 300_000));
        text.extend_from_slice(b"\nb;2.0\n");
        let source = served(&text);
        let (out, _) = read(&source, 0..7);
        assert_eq!(out, &text[..text.len() - 6]);
        let asked = source.asked.lock().unwrap().clone();
        let step = |from: u64, len: u64| from..from + len;
        let tail = 7 + TAIL;
        assert_eq!(
            asked,
            [
                0..tail,
                step(tail, STEP),
                step(tail + STEP, 2 * STEP),
                tail + 3 * STEP..text.len() as u64,
            ]
        );
    }
}

//! The naive engine's reading of part of a mapped file: the lines whose
//! first byte lies in a window, read through the file by the rule the
//! parallel driver follows (`driver::chunks`): the window's first line
//! starts after the first `\n` from the byte before it, and its last line
//! is read to its end, past the window.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use super::decode::Counting;
use super::NAIVE_BUFFER;
use crate::engine::naive;
use crate::error::{DataError, Error};
use crate::summary::Summary;

/// Aggregates the lines of `file` (of `len` bytes, lines starting at `lo`)
/// whose first byte lies in `window`, counting the bytes read into
/// `consumed`. A fault's line number and offset count from `lo`, as for
/// the whole file: the lines before the window are counted on the error
/// path only.
pub(super) fn naive(
    mut file: &File,
    lo: u64,
    window: Range<u64>,
    len: u64,
    consumed: &Arc<AtomicU64>,
    kept: crate::detail::Kept,
) -> Result<Summary, Error> {
    let end = window.end.min(len);
    let from = match window.start <= lo {
        true => lo,
        false => window.start - 1,
    };
    file.seek(SeekFrom::Start(from))?;
    let counting = Counting {
        inner: file,
        consumed: Arc::clone(consumed),
    };
    let mut reader = BufReader::with_capacity(NAIVE_BUFFER, counting);
    let first = match window.start <= lo {
        true => Some(lo),
        false => skip_line(&mut reader, from, end.saturating_sub(1))?,
    };
    let Some(first) = first.filter(|&first| first < end) else {
        return Ok(Summary::default());
    };
    // Whether the line holding the window's last byte ends with it.
    let ended = end >= len || {
        let mut last = [0];
        file.read_exact_at(&mut last, end - 1)?;
        last == *b"\n"
    };
    let lines = WindowReader {
        inner: reader,
        pos: first,
        end,
        ended,
        tail: None,
        done: false,
    };
    match naive::aggregate(lines, kept) {
        Err(Error::Data(e)) if first > lo => Err(DataError {
            line: e.line + count_newlines(file, lo..first)?,
            offset: e.offset + (first - lo),
            ..e
        }
        .into()),
        other => other,
    }
}

/// Reads `reader`, at byte `pos`, through the next `\n` if it comes
/// before byte `limit`; returns where the line after it starts, or `None`.
pub(super) fn skip_line(
    reader: &mut impl BufRead,
    mut pos: u64,
    limit: u64,
) -> io::Result<Option<u64>> {
    while pos < limit {
        let buf = match reader.fill_buf() {
            Ok([]) => return Ok(None),
            Ok(buf) => buf,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let n = buf
            .len()
            .min(usize::try_from(limit - pos).unwrap_or(usize::MAX));
        if let Some(i) = memchr::memchr(b'\n', &buf[..n]) {
            reader.consume(i + 1);
            return Ok(Some(pos + i as u64 + 1));
        }
        reader.consume(n);
        pos += n as u64;
    }
    Ok(None)
}

/// The `\n` in `range` of `file`, read without moving its position.
fn count_newlines(file: &File, range: Range<u64>) -> io::Result<u64> {
    let mut buf = vec![0; NAIVE_BUFFER];
    let mut newlines = 0;
    let mut pos = range.start;
    while pos < range.end {
        let want = buf
            .len()
            .min(usize::try_from(range.end - pos).unwrap_or(usize::MAX));
        let n = match file.read_at(&mut buf[..want], pos) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        newlines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
        pos += n as u64;
    }
    Ok(newlines)
}

/// The bytes of `inner`, at byte `pos`, up to `end`, then, unless the line
/// holding byte `end - 1` `ended` there, on through that line's `\n`.
struct WindowReader<R> {
    inner: R,
    pos: u64,
    end: u64,
    ended: bool,
    /// Past `end`: how many bytes of the last `fill_buf` reach through
    /// the last line's `\n`, if they do.
    tail: Option<usize>,
    done: bool,
}

impl<R: BufRead> BufRead for WindowReader<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.done {
            return Ok(&[]);
        }
        let buf = self.inner.fill_buf()?;
        let n = if self.pos < self.end {
            buf.len()
                .min(usize::try_from(self.end - self.pos).unwrap_or(usize::MAX))
        } else if self.ended {
            0
        } else {
            let through = memchr::memchr(b'\n', buf).map(|i| i + 1);
            self.tail = through;
            through.unwrap_or(buf.len())
        };
        Ok(&buf[..n])
    }

    fn consume(&mut self, n: usize) {
        self.inner.consume(n);
        if self.pos >= self.end && self.tail.is_some_and(|t| n >= t) {
            self.done = true;
        }
        self.pos += n as u64;
    }
}

impl<R: BufRead> Read for WindowReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes `WindowReader` gives from `input` at `pos`, read a few at a
    /// time.
    fn through(input: &[u8], pos: usize, end: u64) -> Vec<u8> {
        let ended = end as usize >= input.len() || input[end as usize - 1] == b'\n';
        let mut window = WindowReader {
            inner: BufReader::with_capacity(3, &input[pos..]),
            pos: pos as u64,
            end,
            ended,
            tail: None,
            done: false,
        };
        let mut out = Vec::new();
        window.read_to_end(&mut out).unwrap();
        out
    }

    #[test]
    fn a_window_reads_on_through_its_last_line_only() {
        let input = b"a;1.0\nbb;2.0\nc;3.0";
        assert_eq!(through(input, 0, 6), b"a;1.0\n");
        assert_eq!(through(input, 0, 7), b"a;1.0\nbb;2.0\n");
        assert_eq!(through(input, 6, 13), b"bb;2.0\n");
        assert_eq!(through(input, 13, 14), b"c;3.0");
        assert_eq!(through(input, 0, 100), input);
        let mut reader = BufReader::with_capacity(2, &input[..]);
        assert_eq!(skip_line(&mut reader, 0, 6).unwrap(), Some(6));
        assert_eq!(skip_line(&mut reader, 6, 12).unwrap(), None);
    }
}

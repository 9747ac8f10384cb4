//! Reading a stream (standard input, a pipe, a decompressor) into blocks
//! of whole lines, in bounded memory.
//!
//! The dispatching thread reads: it fills blocks from a bounded pool of
//! reusable buffers, carries the partial last line of each block over to
//! the next, and sends blocks of whole lines to the workers. Memory is the
//! pool (`threads + 2` blocks of the chunk size) plus the tables, whatever
//! the length of the stream, and the pool serves every stream of a run.
//!
//! A partial line is carried only while it could still be valid: one
//! longer than any valid line is malformed, and the reader judges it itself
//! from its head ([`LineHead`]), reading on only until the verdict is known,
//! so that a stream with no `\n` at all costs no more than any other.
//!
//! A stream cannot be read twice, so what bytes in memory have done after
//! the fact, on the error path, is done on each block while it is in hand:
//! counting its lines ([`Counted`]; a fault's line number is the count
//! before it).

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::Receiver;

use crate::engine::Options;
use crate::error::Fault;
use crate::parse::{LineHead, MAX_ROW_LEN};

/// A block of whole lines in a buffer from the pool. The buffer is
/// initialized to its full length once, when allocated; only `..len` is
/// this block's, starting `offset` bytes into its stream.
pub(super) struct Block {
    pub(super) buf: Vec<u8>,
    pub(super) len: usize,
    pub(super) offset: usize,
}

/// The reading side: the pool's buffers, and their way back.
pub(super) struct Reading {
    block_size: usize,
    /// How many buffers may exist: one per worker, one being filled, one
    /// waiting, so the workers never wait for the reader when it keeps up.
    pool: usize,
    allocated: usize,
    free: Receiver<Vec<u8>>,
    /// Buffers back in the reader's hands without going out (the last,
    /// empty one of a stream), for the next stream of the run.
    spare: Vec<Vec<u8>>,
}

impl Reading {
    /// A pool for `threads` workers and blocks of `options.chunk_size`,
    /// whose buffers come back through `free`.
    pub(super) fn new(options: &Options, threads: usize, free: Receiver<Vec<u8>>) -> Reading {
        Reading {
            block_size: options.chunk_size.max(1),
            pool: threads + 2,
            allocated: 0,
            free,
            spare: Vec::new(),
        }
    }

    /// Reads `reader` into blocks for `send`, until its end, a read error,
    /// a failure ranked at or below `bound` (the rest cannot hold an
    /// earlier one), or `send` failing. Returns how far it read (the
    /// stream's length, at its end), and the read error, if any, or the
    /// fault of a line too long to be sent in a block, which the reader
    /// judges itself; offsets count from the stream's start.
    pub(super) fn run(
        &mut self,
        reader: impl Read,
        send: &mut dyn FnMut(Block) -> bool,
        bound: &AtomicUsize,
    ) -> (usize, io::Result<Option<Fault>>) {
        let mut offset = 0;
        let read = self.blocks(reader, send, bound, &mut offset);
        (offset, read)
    }

    fn blocks(
        &mut self,
        mut reader: impl Read,
        send: &mut dyn FnMut(Block) -> bool,
        bound: &AtomicUsize,
        offset: &mut usize,
    ) -> io::Result<Option<Fault>> {
        let mut carry = Vec::new();
        loop {
            if bound.load(Ordering::Relaxed) != usize::MAX {
                return Ok(None);
            }
            let Some(mut buf) = self.buffer()? else {
                return Ok(None);
            };
            if buf.len() > self.block_size && carry.len() < self.block_size {
                // Grown for a line longer than a block earlier: back to the
                // budget.
                buf.truncate(self.block_size);
                buf.shrink_to_fit();
            }
            let mut filled = carry.len();
            if buf.len() <= filled {
                buf.resize(filled * 2, 0);
            }
            buf[..filled].copy_from_slice(&carry);
            // Set at the end of the input or on a read error.
            let mut stop = None;
            let len = loop {
                while filled < buf.len() {
                    match reader.read(&mut buf[filled..]) {
                        Ok(0) => {
                            stop = Some(Ok(()));
                            break;
                        }
                        Ok(n) => filled += n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => {
                            stop = Some(Err(e));
                            break;
                        }
                    }
                }
                match (&stop, memchr::memrchr(b'\n', &buf[..filled])) {
                    // The last line needs no `\n`.
                    (Some(Ok(())), _) => break filled,
                    (_, Some(i)) => break i + 1,
                    // Nothing whole before a read error, or a line that is
                    // malformed however it goes on (judged below).
                    (Some(Err(_)), None) => break 0,
                    (None, None) if filled > MAX_ROW_LEN => break 0,
                    // A block smaller than a line that may still be valid:
                    // the buffer grows to hold it.
                    (None, None) => buf.resize(buf.len() * 2, 0),
                }
            };
            let partial = &buf[len..filled];
            if partial.len() > MAX_ROW_LEN {
                let mut line = LineHead::default();
                line.extend(partial);
                let at = *offset;
                let buf = if len == 0 {
                    buf
                } else {
                    // The lines before it go out whole: an earlier fault
                    // among them wins. Reading on needs another buffer.
                    *offset += len;
                    if !send(Block {
                        buf,
                        len,
                        offset: at,
                    }) {
                        return Ok(None);
                    }
                    match self.buffer()? {
                        Some(buf) => buf,
                        None => return Ok(None),
                    }
                };
                let error = stop.and_then(Result::err);
                let mut buf = buf;
                let judged = self.judge(&mut reader, line, at + len, &mut buf, error, bound);
                self.spare.push(buf);
                return judged;
            }
            carry.clear();
            carry.extend_from_slice(partial);
            // The whole lines before a read error still go out: a malformed
            // one among them is reported first.
            let at = *offset;
            *offset += len;
            if len == 0 {
                self.spare.push(buf);
            } else if !send(Block {
                buf,
                len,
                offset: at,
            }) {
                return Ok(None);
            }
            if let Some(stop) = stop {
                return stop.map(|()| None);
            }
        }
    }

    /// A buffer from the pool, allocated while fewer than `pool` exist;
    /// `None` only if every worker is gone (panicked: the join reports it).
    /// A pool larger than memory is an error, not an abort.
    fn buffer(&mut self) -> io::Result<Option<Vec<u8>>> {
        if let Some(buf) = self.spare.pop() {
            return Ok(Some(buf));
        }
        match self.free.try_recv() {
            Ok(buf) => Ok(Some(buf)),
            Err(_) if self.allocated < self.pool => {
                self.allocated += 1;
                let mut buf = Vec::new();
                buf.try_reserve_exact(self.block_size).map_err(|_| {
                    io::Error::new(
                        io::ErrorKind::OutOfMemory,
                        format!(
                            "cannot allocate {} blocks of {} bytes to read it (lower --chunk-size or --threads)",
                            self.pool, self.block_size
                        ),
                    )
                })?;
                buf.resize(self.block_size, 0);
                Ok(Some(buf))
            }
            Err(_) => Ok(self.free.recv().ok()),
        }
    }

    /// Reads on through a line too long to be valid, starting at `start`,
    /// of which `line` holds the head, into `buf` and no further than its
    /// verdict needs: to its end, or until it is
    /// [decided](LineHead::decided). `error` is a read error met before,
    /// reported unless the bytes before it decided the verdict (as a read
    /// error after a whole malformed line is). Returns the line's fault, or
    /// `None` if a fault was found earlier in the input (which wins).
    fn judge(
        &self,
        reader: &mut impl Read,
        mut line: LineHead,
        start: usize,
        buf: &mut [u8],
        error: Option<io::Error>,
        bound: &AtomicUsize,
    ) -> io::Result<Option<Fault>> {
        let judged = |line: LineHead| {
            let kind = line.parse().expect_err("a line this long is malformed");
            Ok(Some(Fault {
                offset: start,
                kind,
            }))
        };
        if let Some(e) = error {
            return if line.decided() { judged(line) } else { Err(e) };
        }
        loop {
            if line.decided() {
                return judged(line);
            }
            if bound.load(Ordering::Relaxed) != usize::MAX {
                return Ok(None);
            }
            match reader.read(buf) {
                // The line ends the input.
                Ok(0) => return judged(line),
                Ok(n) => {
                    if line.extend(&buf[..n]).is_some() {
                        return judged(line);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// The `\n` count of the input's longest prefix of blocks fed whole, plus
/// the blocks fed out of order beyond it (at most one per buffer in the
/// pool, so this stays small however long the input).
#[derive(Default)]
pub(super) struct Counted {
    through: usize,
    newlines: u64,
    ahead: BTreeMap<usize, (usize, u64)>,
}

impl Counted {
    /// Counts a block of `len` bytes at `offset` holding `newlines`.
    pub(super) fn add(&mut self, offset: usize, len: usize, newlines: u64) {
        self.ahead.insert(offset, (len, newlines));
        while let Some((len, newlines)) = self.ahead.remove(&self.through) {
            self.through += len;
            self.newlines += newlines;
        }
    }

    /// How far from the stream's start every block was fed whole, and
    /// the `\n` in those bytes.
    pub(super) fn through(&self) -> (usize, u64) {
        (self.through, self.newlines)
    }
}

/// The number of `\n` in `bytes`.
pub(super) fn count_newlines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use std::sync::atomic::AtomicU64;

    use super::*;
    use crate::aggregate;
    use crate::driver::Content;
    use crate::engine::chunked::Chunked;
    use crate::engine::fast::{Fast, SwarEngine};
    use crate::engine::Accumulator;
    use crate::engine::Engine;
    use crate::error::{DataError, Error, ErrorKind};
    use crate::summary::Summary;

    /// Aggregates `reader` as a run's one input.
    fn run<A: Accumulator>(reader: impl Read + Send, options: &Options) -> Result<Summary, Error> {
        let contents = std::iter::once((0, Ok(Content::Stream(Box::new(reader)))));
        let consumed = AtomicU64::new(0);
        super::super::run::<A>(contents, options, &consumed).map_err(|failed| failed.error)
    }

    #[test]
    fn a_pool_larger_than_memory_is_an_error_not_an_abort() {
        let options = Options {
            threads: 2,
            chunk_size: usize::MAX / 2,
        };
        let err = run::<Fast>(&b"a;1.0\n"[..], &options).unwrap_err();
        match err {
            Error::Io(e) => {
                assert_eq!(e.kind(), io::ErrorKind::OutOfMemory);
                assert!(e.to_string().contains("--chunk-size"), "{e}");
            }
            other => panic!("{other:?}"),
        }
    }

    /// A reader handing out its bytes in pieces of the given sizes, in turn,
    /// as a pipe does, then failing if `fail` is set.
    struct Pieces<'a> {
        data: &'a [u8],
        sizes: Vec<usize>,
        turn: usize,
        fail: bool,
    }

    impl Read for Pieces<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.data.is_empty() && self.fail {
                return Err(io::Error::other("the pipe broke"));
            }
            let size = self.sizes[self.turn % self.sizes.len()];
            self.turn += 1;
            let n = size.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    fn stream(
        data: &[u8],
        sizes: Vec<usize>,
        fail: bool,
        options: &Options,
    ) -> Result<Summary, Error> {
        stream_with::<Chunked>(data, sizes, fail, options)
    }

    fn stream_with<A: Accumulator>(
        data: &[u8],
        sizes: Vec<usize>,
        fail: bool,
        options: &Options,
    ) -> Result<Summary, Error> {
        let reader = Pieces {
            data,
            sizes,
            turn: 0,
            fail,
        };
        run::<A>(reader, options)
    }

    /// Lines from a few names, multi-byte ones among them, so that reads and
    /// blocks of any size split some of them.
    fn lines(rows: &[(usize, i16)], last_newline: bool) -> Vec<u8> {
        const NAMES: [&str; 5] = ["a", "Zürich", "東京", "São Paulo", "x y"];
        let mut out = Vec::new();
        for (name, tenths) in rows {
            let sign = if *tenths < 0 { "-" } else { "" };
            let t = tenths.unsigned_abs();
            let line = format!("{};{sign}{}.{}\n", NAMES[name % 5], t / 10, t % 10);
            out.extend_from_slice(line.as_bytes());
        }
        if !last_newline {
            out.pop();
        }
        out
    }

    /// Malformed lines, the last ones longer than any valid line, so that
    /// blocks of up to 64 bytes leave them to the reader.
    fn bad_lines() -> Vec<Vec<u8>> {
        let mut bad: Vec<Vec<u8>> = [
            &b""[..],
            b"no semicolon",
            b";1.0",
            b"a;1.00",
            b"\xff;1.0",
            b"Z\xc3;1.0",
            b"a;\xe6\x9d\xb1",
        ]
        .map(<[u8]>::to_vec)
        .into();
        let x = |n| "x".repeat(n);
        for long in [
            x(300),
            format!("{};1.0", x(200)),
            format!("a;{}", x(200)),
            format!("{};{}", x(100), x(200)),
        ] {
            bad.push(long.into_bytes());
        }
        bad
    }

    fn rows() -> impl Strategy<Value = Vec<(usize, i16)>> {
        prop::collection::vec((0..5usize, -999..=999i16), 0..200)
    }

    proptest! {
        #[test]
        fn streams_agree_with_the_file_path(
            rows in rows(),
            last_newline in any::<bool>(),
            sizes in prop::collection::vec(1..40usize, 1..5),
            block in 1..64usize,
            threads in 1..4usize,
        ) {
            let input = lines(&rows, last_newline);
            let options = Options { threads, chunk_size: block };
            let expected = aggregate(&input, Engine::Chunked, &options).unwrap();
            let got = stream(&input, sizes, false, &options).unwrap();
            prop_assert_eq!(got, expected);
        }

        #[test]
        fn stream_errors_agree_with_the_file_path(
            rows in rows(),
            bad in 0..bad_lines().len(),
            at in any::<prop::sample::Index>(),
            sizes in prop::collection::vec(1..40usize, 1..5),
            block in 1..64usize,
            threads in 1..4usize,
        ) {
            let mut input = lines(&rows, true);
            let starts: Vec<usize> = std::iter::once(0)
                .chain(input.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i + 1))
                .collect();
            let start = starts[at.index(starts.len())];
            input.splice(start..start, [&bad_lines()[bad][..], b"\n"].concat());
            let options = Options { threads, chunk_size: block };
            let expected = aggregate(&input, Engine::Chunked, &options).unwrap_err();
            // The fast engines check names' UTF-8 themselves, so the
            // stream skips its own check for them: both ways must agree.
            for got in [
                stream_with::<Chunked>(&input, sizes.clone(), false, &options),
                stream_with::<Fast>(&input, sizes.clone(), false, &options),
                stream_with::<SwarEngine>(&input, sizes.clone(), false, &options),
            ] {
                match got {
                    Err(Error::Data(got)) => prop_assert_eq!(got, expected.clone()),
                    other => prop_assert!(false, "expected {expected:?}, got {other:?}"),
                }
            }
        }
    }

    /// The data error `stream` gives on `input` read in pieces of `sizes`.
    fn stream_error(input: &[u8], sizes: Vec<usize>, fail: bool, options: &Options) -> DataError {
        match stream(input, sizes, fail, options) {
            Err(Error::Data(e)) => e,
            other => panic!("expected a data error, got {other:?}"),
        }
    }

    #[test]
    fn a_line_longer_than_a_block_is_judged_as_on_the_file_path() {
        let long = "n".repeat(300);
        let input = format!("a;1.0\n{long};2.0\n{long}{long};3.0\n");
        let options = Options {
            threads: 2,
            chunk_size: 16,
        };
        let expected = aggregate(input.as_bytes(), Engine::Chunked, &options).unwrap_err();
        assert_eq!(expected.line, 2);
        assert_eq!(
            stream_error(input.as_bytes(), vec![7], false, &options),
            expected
        );
    }

    #[test]
    fn an_overlong_line_is_judged_across_many_blocks() {
        let options = Options {
            threads: 2,
            chunk_size: 64,
        };
        let x = |n| "x".repeat(n);
        let head = "a;1.0\nb;2.0\n";
        let quoted = |s: String| s.as_bytes()[..41].to_vec();
        for (line, kind) in [
            // No `;`: read to the end of the line, `\n` or end of input.
            (
                x(5000),
                ErrorKind::MissingSemicolon {
                    line: quoted(x(41)),
                },
            ),
            // A `;` far on: a name too long, however long.
            (
                format!("{};1.0", x(5000)),
                ErrorKind::NameTooLong { len: 5000 },
            ),
            // A `;` in the head: decided there.
            (
                format!("{};{}", x(100), x(5000)),
                ErrorKind::InvalidValue {
                    value: quoted(x(41)),
                },
            ),
            (format!(";{}", x(5000)), ErrorKind::EmptyName),
        ] {
            let expected = DataError {
                line: 3,
                offset: head.len() as u64,
                kind,
            };
            for (tail, sizes) in [
                ("\n", vec![1, 64, 7]),
                ("\nc;3.0\n", vec![4096]),
                // A fault after it does not count.
                ("\n;;\n", vec![13]),
                // The last line, without `\n`.
                ("", vec![100]),
            ] {
                let input = format!("{head}{line}{tail}");
                let got = stream_error(input.as_bytes(), sizes, false, &options);
                assert_eq!(got, expected, "{tail:?}");
                let file = aggregate(input.as_bytes(), Engine::Chunked, &options);
                assert_eq!(file.unwrap_err(), expected);
            }
        }
    }

    #[test]
    fn a_fault_before_an_overlong_line_wins() {
        let options = Options {
            threads: 3,
            chunk_size: 32,
        };
        let input = format!("a;1.0\n{}b;x\n{}\n", "c;2.0\n".repeat(20), "y".repeat(1000));
        let got = stream_error(input.as_bytes(), vec![5, 64], false, &options);
        assert_eq!(
            (got.line, got.kind),
            (
                22,
                ErrorKind::InvalidValue {
                    value: b"x".to_vec()
                }
            )
        );
    }

    #[test]
    fn a_read_error_inside_an_overlong_line_is_reported_unless_its_head_decided() {
        // Blocks of 64 bytes meet the error while reading on through the
        // line, blocks of 1K while filling the block that holds all of it.
        for chunk_size in [64, 1024] {
            let options = Options {
                threads: 2,
                chunk_size,
            };
            // No `;` yet: it might still become a name too long.
            match stream(&[b'x'; 500], vec![64], true, &options) {
                Err(Error::Io(e)) => assert_eq!(e.to_string(), "the pipe broke"),
                other => panic!("expected a read error, got {other:?}"),
            }
            // `a;` and 140 more bytes decide it, whatever comes next.
            let input = [&b"a;"[..], &[b'7'; 500]].concat();
            let got = stream_error(&input, vec![64], true, &options);
            assert_eq!((got.line, got.offset), (1, 0));
        }
    }

    #[test]
    fn reading_stops_once_an_overlong_line_is_decided() {
        let options = Options {
            threads: 2,
            chunk_size: 1024,
        };
        // `a;1.0`, then `b;` and 64 MiB of `7`.
        let len = 64 << 20;
        let mut input = io::Cursor::new(b"a;1.0\nb;".to_vec())
            .chain(io::repeat(b'7'))
            .take(len);
        match run::<Chunked>(&mut input, &options) {
            Err(Error::Data(e)) => assert_eq!((e.line, e.offset), (2, 6)),
            other => panic!("expected a data error, got {other:?}"),
        }
        // A block or so, not the stream.
        let read = len - input.limit();
        assert!(read <= 4 << 10, "read {read} bytes");
    }

    #[test]
    fn read_errors_are_reported_after_earlier_malformed_lines() {
        let options = Options {
            threads: 2,
            chunk_size: 8,
        };
        let good = lines(&[(0, 10), (1, -5), (2, 999)], true);
        match stream(&good, vec![5], true, &options) {
            Err(Error::Io(e)) => assert_eq!(e.to_string(), "the pipe broke"),
            other => panic!("expected a read error, got {other:?}"),
        }
        let bad = [&good[..], b"oops\n"].concat();
        match stream(&bad, vec![5], true, &options) {
            Err(Error::Data(e)) => assert_eq!(e.line, 4),
            other => panic!("expected a data error, got {other:?}"),
        }
    }

    #[test]
    fn counted_folds_blocks_in_input_order() {
        let mut counted = Counted::default();
        counted.add(10, 5, 2);
        assert_eq!((counted.through, counted.newlines), (0, 0));
        counted.add(0, 10, 3);
        assert_eq!((counted.through, counted.newlines), (15, 5));
        assert!(counted.ahead.is_empty());
    }
}

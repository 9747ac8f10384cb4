//! Cutting an input's bytes into line-aligned chunks, in input order.

use std::ops::Range;

use crate::parse::MAX_ROW_LEN;
use crate::tuning::{CHUNK_GROW, CHUNK_TAIL};

/// The chunks of the lines of `bytes` that start in a window, each chunk
/// starting at a line start and ending after a `\n` or at the end of
/// `bytes`, about `size` bytes long and [`CHUNK_GROW`] times as big except
/// for the last [`CHUNK_TAIL`] per thread of the whole run: the kernel's
/// work to take back a done chunk's pages is then done less often, while
/// the last chunks still balance the threads' loads (docs/PERFORMANCE.md,
/// *Memory*).
///
/// Lines start at `lo` (the input's start) and after every `\n`. The first
/// chunk starts at the first line start in the window, found by looking at
/// the byte before the window's start and, unless that is a `\n`, on to the
/// next one: the line it finds the end of starts before the window and
/// belongs to whoever reads the window before. The last chunk ends after
/// the line holding the window's last byte. So windows that tile an input
/// hand out every line exactly once, and reading one costs its bytes and
/// the end of its last line.
///
/// Each boundary inside the window is the first line start at or after a
/// nominal offset, looked for no further than a valid line reaches: past
/// that, the line in the way is malformed, the chunk before the boundary
/// takes the rest of `bytes` (feeding it stops at that line), and no
/// chunk comes after. So a file that is one huge line costs a few short
/// searches, not one search to its end per chunk.
pub(super) struct Chunks<'a> {
    bytes: &'a [u8],
    /// Where the next chunk starts; `None` once all are handed out.
    next: Option<usize>,
    /// The window's end, at most `bytes.len()`.
    end: usize,
    size: usize,
    /// How many chunks of `CHUNK_GROW * size` are still to come first.
    big: usize,
}

impl<'a> Chunks<'a> {
    /// The chunks of the lines of `bytes` starting in `window`, lines
    /// starting at `lo`, for `threads` threads; `rest` is the number of
    /// bytes the run reads after these (its other inputs), so that only
    /// the run's last chunks are of the nominal size `size` (at least 1).
    /// Looking for the first line start reads on through a line of any
    /// length; `release` is called with each 4 MiB so read.
    pub(super) fn new(
        bytes: &'a [u8],
        lo: usize,
        window: Range<usize>,
        size: usize,
        threads: usize,
        rest: u64,
        release: &dyn Fn(Range<usize>),
    ) -> Chunks<'a> {
        let size = size.max(1);
        let end = window.end.min(bytes.len());
        let start = first_line_start(bytes, lo, window.start, end, release);
        let len = start.map_or(0, |s| end - s);
        let tail = size.saturating_mul(CHUNK_TAIL * threads.max(1));
        let rest = usize::try_from(rest).unwrap_or(usize::MAX);
        let big = len
            .saturating_add(rest)
            .saturating_sub(tail)
            .min(len)
            .checked_div(size.saturating_mul(CHUNK_GROW))
            .unwrap_or(0);
        Chunks {
            bytes,
            next: start,
            end,
            size,
            big,
        }
    }

    /// The first line start at or after `pos`, or `None` if the line
    /// holding `pos - 1` is longer than any valid line, and so malformed.
    fn align(&self, pos: usize) -> Option<usize> {
        let len = self.bytes.len();
        if pos >= len {
            return Some(len);
        }
        // The line holding `pos - 1` ends within `MAX_ROW_LEN + 1` bytes
        // from there if it is valid.
        let stop = len.min(pos + MAX_ROW_LEN);
        match memchr::memchr(b'\n', &self.bytes[pos - 1..stop]) {
            Some(i) => Some(pos + i),
            // It is the last line.
            None if stop == len => Some(len),
            None => None,
        }
    }
}

impl<'a> Iterator for Chunks<'a> {
    /// A chunk's start in `bytes`, and its bytes.
    type Item = (usize, &'a [u8]);

    fn next(&mut self) -> Option<(usize, &'a [u8])> {
        // Every chunk starts before the window's end.
        let start = self.next?;
        let step = match self.big {
            0 => self.size,
            _ => {
                self.big -= 1;
                self.size.saturating_mul(CHUNK_GROW)
            }
        };
        let stop = start.saturating_add(step).min(self.end);
        // `None`: a malformed line reaches past the nominal end; this chunk
        // holds its start, and takes the rest.
        let end = self.align(stop).unwrap_or(self.bytes.len());
        self.next = (end < self.end).then_some(end);
        Some((start, &self.bytes[start..end]))
    }
}

/// The first line start at or after `pos` and before `end`, lines starting
/// at `lo` and after every `\n` of `bytes`; `None` if there is none.
/// Unlike a boundary inside a window, this looks through a line of any
/// length (the line it skips is not this window's to judge), calling
/// `release` with each window of [`SCAN`] bytes read through.
fn first_line_start(
    bytes: &[u8],
    lo: usize,
    pos: usize,
    end: usize,
    release: &dyn Fn(Range<usize>),
) -> Option<usize> {
    if pos <= lo {
        return (lo < end).then_some(lo);
    }
    if pos >= end {
        return None;
    }
    // The line holding `pos - 1` ends at its first `\n` from there; the
    // line after it must start before `end`.
    let mut from = pos - 1;
    while from < end - 1 {
        let stop = (end - 1).min(from + SCAN);
        if let Some(i) = memchr::memchr(b'\n', &bytes[from..stop]) {
            return Some(from + i + 1);
        }
        release(from..stop);
        from = stop;
    }
    None
}

/// How much [`first_line_start`] reads between releases.
const SCAN: usize = 4 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8], size: usize) -> Vec<(usize, &[u8])> {
        Chunks::new(input, 0, 0..usize::MAX, size, 1, 0, &|_| {}).collect()
    }

    #[test]
    fn chunks_cover_the_input_at_line_starts() {
        let input = b"a;1.0\nbb;2.0\nccc;3.0\nd;4.0";
        for size in 1..=input.len() + 1 {
            let chunks = all(input, size);
            let mut pos = 0;
            for (offset, chunk) in chunks {
                assert_eq!(offset, pos, "size {size}");
                assert!(offset == 0 || input[offset - 1] == b'\n');
                pos += chunk.len();
            }
            assert_eq!(pos, input.len(), "size {size}");
        }
        assert!(all(b"", 4).is_empty());
    }

    #[test]
    fn chunks_are_bigger_but_for_the_last_few_per_thread_of_the_run() {
        // 6,000 bytes of 6-byte lines, nominal size 60, 2 threads: the last
        // 960 bytes (8 chunks per thread) in chunks of 60, the 5,040 before
        // in chunks of 240.
        let input = b"a;1.0\n".repeat(1000);
        let sizes = |rest| -> Vec<usize> {
            let chunks = Chunks::new(&input, 0, 0..input.len(), 60, 2, rest, &|_| {});
            chunks.map(|c| c.1.len()).collect()
        };
        assert_eq!(sizes(0), [[240; 21].as_slice(), &[60; 16]].concat());
        // With 600 bytes of other inputs after it, the last 360 bytes are
        // the tail's (and 120 the big chunks leave); with 960 or more, none.
        assert_eq!(sizes(600), [[240; 23].as_slice(), &[60; 8]].concat());
        assert_eq!(sizes(960), [240; 25]);
        for threads in 1..=4 {
            for size in [1, 7, 60, 5000, 7000, usize::MAX / 2, usize::MAX] {
                let chunks = Chunks::new(&input, 0, 0..usize::MAX, size, threads, 0, &|_| {});
                let total: usize = chunks.map(|c| c.1.len()).sum();
                assert_eq!(total, input.len(), "size {size}, {threads} threads");
            }
        }
    }

    #[test]
    fn a_line_longer_than_any_valid_line_ends_the_chunks() {
        let head = b"a;1.0\nbb;2.0\n".repeat(20);
        let long = vec![b'x'; 10 * MAX_ROW_LEN];
        let input = [&head[..], &long, b"\nc;3.0\n"].concat();
        for size in 1..=head.len() + 2 * MAX_ROW_LEN {
            let chunks = all(&input, size);
            // In order, at line starts, up to the chunk holding the long
            // line's start, which takes the rest of the input.
            let mut pos = 0;
            for &(offset, chunk) in &chunks {
                assert_eq!(offset, pos, "size {size}");
                pos += chunk.len();
            }
            let &(last, _) = chunks.last().unwrap();
            assert!(last <= head.len(), "size {size}");
            assert_eq!(pos, input.len(), "size {size}");
        }
    }

    /// The lines `Chunks` hands out for `window`, as (start, line) pairs.
    fn lines_in(input: &[u8], lo: usize, window: Range<usize>, size: usize) -> Vec<usize> {
        let chunks = Chunks::new(input, lo, window, size, 1, 0, &|_| {});
        let mut starts = Vec::new();
        for (offset, chunk) in chunks {
            assert!(offset == lo || input[offset - 1] == b'\n');
            let ends = memchr::memchr_iter(b'\n', chunk).map(|i| offset + i + 1);
            starts.push(offset);
            starts.extend(ends.filter(|&e| e < offset + chunk.len()));
        }
        starts
    }

    #[test]
    fn windows_that_tile_an_input_hand_out_each_line_once() {
        // Lines start at 3 (after a byte-order mark), 9 (an empty line),
        // 10, 17, and the last one, without `\n`, at 23.
        let input = b"\xef\xbb\xbfa;1.0\n\nbb;2.0\nc;3.0\nd;4.0";
        let all_lines = [3, 9, 10, 17, 23];
        for cut_a in 0..=input.len() {
            for cut_b in cut_a..=input.len() {
                for size in [1, 4, 100] {
                    let mut got = lines_in(input, 3, 0..cut_a, size);
                    got.extend(lines_in(input, 3, cut_a..cut_b, size));
                    got.extend(lines_in(input, 3, cut_b..usize::MAX, size));
                    assert_eq!(got, all_lines, "cuts {cut_a}, {cut_b}, size {size}");
                }
                // Each line goes to the window holding its first byte.
                let mine: Vec<usize> = (all_lines.iter().copied())
                    .filter(|&s| (cut_a..cut_b).contains(&s))
                    .collect();
                assert_eq!(lines_in(input, 3, cut_a..cut_b, 5), mine);
            }
        }
    }

    #[test]
    fn a_window_inside_a_long_line_is_empty_and_reads_on_only_to_its_end() {
        let input = [&b"a;1.0\n"[..], &[b'x'; 1000], b"\nb;2.0\n"].concat();
        assert!(lines_in(&input, 0, 10..500, 64).is_empty());
        // The window holding the long line's start ends after it.
        let chunks: Vec<_> = Chunks::new(&input, 0, 0..10, 64, 1, 0, &|_| {}).collect();
        let end = chunks.last().map(|(o, c)| o + c.len());
        assert_eq!(end, Some(input.len()));
        assert_eq!(lines_in(&input, 0, 500..input.len(), 64), [1007]);
    }
}

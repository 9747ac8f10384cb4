//! Splitting an input into line-aligned chunks that threads claim in order.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::parse::MAX_LINE_LEN;
use crate::tuning::{CHUNK_GROW, CHUNK_TAIL};

/// An input cut into chunks of about `size` bytes, each starting at a line
/// start and ending after a `\n` (or at the end of the input), and
/// [`CHUNK_GROW`] times as big except for the last [`CHUNK_TAIL`] per
/// thread: the kernel's work to take back a done chunk's pages is then
/// done less often, while the last chunks still balance the threads'
/// loads (docs/PERFORMANCE.md, *Memory*).
///
/// Threads call [`claim`](Chunks::claim) until it returns `None`; chunks are
/// handed out in input order, so a thread that is done early takes more
/// (work stealing without queues). Each boundary is computed from the
/// nominal offset alone, so neighbouring chunks agree on it without talking.
///
/// A boundary is looked for no further than a valid line reaches: past
/// that, the line in the way is malformed, the chunk before the boundary
/// takes the rest of the input (feeding it stops at that line), and later
/// claims hand out nothing. So a file that is one huge line costs a few
/// short searches, not one search to its end per chunk, and pages in no
/// more than the start of that line. (A claim racing past on another
/// thread may still get a later chunk, overlapping the rest so taken; all
/// it holds comes after that malformed line, so none of it shows.)
pub(super) struct Chunks<'a> {
    input: &'a [u8],
    size: usize,
    /// How many chunks of `CHUNK_GROW * size` come first.
    big: usize,
    next: AtomicUsize,
    /// A fault is known at or before this offset: chunks starting after it
    /// cannot hold an earlier one, so they are not handed out.
    fault_bound: AtomicUsize,
}

impl<'a> Chunks<'a> {
    /// Chunks of `input` for `threads` threads: of nominal size `size` (at
    /// least 1) for the last `CHUNK_TAIL * threads` of them, and `CHUNK_GROW` times
    /// that before.
    pub(super) fn new(input: &'a [u8], size: usize, threads: usize) -> Chunks<'a> {
        let size = size.max(1);
        let tail = size.saturating_mul(CHUNK_TAIL * threads.max(1));
        let big = input.len().saturating_sub(tail) / size.saturating_mul(CHUNK_GROW);
        Chunks {
            input,
            size,
            big,
            next: AtomicUsize::new(0),
            fault_bound: AtomicUsize::new(usize::MAX),
        }
    }

    /// Where chunk `i` nominally starts, `None` past `usize::MAX`.
    fn nominal(&self, i: usize) -> Option<usize> {
        let big = self.size.saturating_mul(CHUNK_GROW);
        if i <= self.big {
            return Some(i * big);
        }
        ((i - self.big).checked_mul(self.size))?.checked_add(self.big * big)
    }

    /// Records that a malformed line starts at or before `offset`: no chunk
    /// starting after it is handed out any more.
    pub(super) fn fault_at(&self, offset: usize) {
        self.fault_bound.fetch_min(offset, Ordering::Relaxed);
    }

    fn past_fault(&self, offset: usize) -> bool {
        offset > self.fault_bound.load(Ordering::Relaxed)
    }

    /// The first line start at or after `pos`, or `None` if the line
    /// holding `pos - 1` is longer than any valid line, and so malformed.
    fn align(&self, pos: usize) -> Option<usize> {
        if pos == 0 || pos >= self.input.len() {
            return Some(pos.min(self.input.len()));
        }
        // The line holding `pos - 1` ends within `MAX_LINE_LEN + 1` bytes
        // from there if it is valid.
        let end = self.input.len().min(pos + MAX_LINE_LEN);
        match memchr::memchr(b'\n', &self.input[pos - 1..end]) {
            Some(i) => Some(pos + i),
            // It is the last line.
            None if end == self.input.len() => Some(end),
            None => {
                self.fault_at(pos - 1);
                None
            }
        }
    }

    /// Claims the next non-empty chunk: its offset in the input and its
    /// bytes. `None` once the input is handed out, or the chunks left start
    /// after a fault (see [`fault_at`](Chunks::fault_at)).
    pub(super) fn claim(&self) -> Option<(usize, &'a [u8])> {
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            let nominal = self.nominal(i)?;
            if nominal >= self.input.len() || self.past_fault(nominal) {
                return None;
            }
            // `None`: the line holding `nominal - 1` is malformed, and an
            // earlier chunk holds its start.
            let start = self.align(nominal)?;
            if self.past_fault(start) {
                return None;
            }
            // `None`: a malformed line reaches past this chunk's nominal
            // end; this chunk holds its start, or is empty.
            let end = self
                .align(self.nominal(i + 1).unwrap_or(usize::MAX))
                .unwrap_or(self.input.len());
            if start < end {
                return Some((start, &self.input[start..end]));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8], size: usize) -> Vec<(usize, &[u8])> {
        let chunks = Chunks::new(input, size, 1);
        std::iter::from_fn(|| chunks.claim()).collect()
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
    fn chunks_are_bigger_but_for_the_last_few_per_thread() {
        // 6,000 bytes of 6-byte lines, nominal size 60, 2 threads: the last
        // 960 bytes (8 chunks per thread) in chunks of 60, the 5,040 before
        // in chunks of 240.
        let input = b"a;1.0\n".repeat(1000);
        let chunks = Chunks::new(&input, 60, 2);
        let sizes: Vec<usize> = std::iter::from_fn(|| chunks.claim().map(|c| c.1.len())).collect();
        assert_eq!(sizes, [[240; 21].as_slice(), &[60; 16]].concat());
        for threads in 1..=4 {
            for size in [1, 7, 60, 5000, 7000, usize::MAX / 2, usize::MAX] {
                let chunks = Chunks::new(&input, size, threads);
                let total: usize = std::iter::from_fn(|| chunks.claim().map(|c| c.1.len())).sum();
                assert_eq!(total, input.len(), "size {size}, {threads} threads");
            }
        }
    }

    #[test]
    fn a_line_longer_than_any_valid_line_ends_the_chunks() {
        let head = b"a;1.0\nbb;2.0\n".repeat(20);
        let long = vec![b'x'; 10 * MAX_LINE_LEN];
        let input = [&head[..], &long, b"\nc;3.0\n"].concat();
        for size in 1..=head.len() + 2 * MAX_LINE_LEN {
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

    #[test]
    fn no_chunk_is_handed_out_past_a_fault() {
        let input = b"a;1.0\n".repeat(100);
        let chunks = Chunks::new(&input, 60, 1);
        assert_eq!(chunks.claim().map(|c| c.0), Some(0));
        chunks.fault_at(61);
        assert_eq!(chunks.claim().map(|c| c.0), Some(60));
        assert_eq!(chunks.claim(), None);
    }
}

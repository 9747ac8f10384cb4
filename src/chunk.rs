//! Splitting an input into line-aligned chunks that threads claim in order.

use std::sync::atomic::{AtomicUsize, Ordering};

/// An input cut into chunks of about `size` bytes, each starting at a line
/// start and ending after a `\n` (or at the end of the input).
///
/// Threads call [`claim`](Chunks::claim) until it returns `None`; chunks are
/// handed out in input order, so a thread that is done early takes more
/// (work stealing without queues). Each boundary is computed from the
/// nominal offset alone, so neighbouring chunks agree on it without talking.
pub struct Chunks<'a> {
    input: &'a [u8],
    size: usize,
    next: AtomicUsize,
}

impl<'a> Chunks<'a> {
    /// Chunks of `input` of nominal size `size` (at least 1).
    pub fn new(input: &'a [u8], size: usize) -> Chunks<'a> {
        Chunks {
            input,
            size: size.max(1),
            next: AtomicUsize::new(0),
        }
    }

    /// The first line start at or after `pos`.
    fn align(&self, pos: usize) -> usize {
        if pos == 0 || pos >= self.input.len() {
            return pos.min(self.input.len());
        }
        match memchr::memchr(b'\n', &self.input[pos - 1..]) {
            Some(i) => pos + i,
            None => self.input.len(),
        }
    }

    /// Claims the next non-empty chunk: its offset in the input and its bytes.
    pub fn claim(&self) -> Option<(usize, &'a [u8])> {
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            let nominal = i.checked_mul(self.size)?;
            if nominal >= self.input.len() {
                return None;
            }
            let start = self.align(nominal);
            let end = self.align(nominal.saturating_add(self.size));
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
        let chunks = Chunks::new(input, size);
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
}

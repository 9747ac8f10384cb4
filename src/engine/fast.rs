//! The `fast` and `swar` engines: the hand-written scanner and table.
//!
//! Each chunk is parsed in place by [`crate::scan`] except for its
//! last [`PAD`] bytes, which are copied into a zero-padded buffer so the
//! scanner's wide reads never leave the chunk. Any line the scanner does
//! not accept goes to the strict parser: it is either valid after all
//! (added like any other) or the chunk's first fault.

use crate::engine::Partial;
use crate::error::Fault;
use crate::parse;
use crate::scan::{self, Kernels, PAD};
use crate::stats::Stats;
use crate::table::{key_words, Table};

/// One thread's stations; `PORTABLE` forces the SWAR kernel.
#[derive(Clone, Default)]
pub struct Fast<const PORTABLE: bool> {
    table: Table,
}

impl<const PORTABLE: bool> Fast<PORTABLE> {
    const KERNELS: Kernels = if PORTABLE {
        Kernels::Portable
    } else {
        Kernels::Best
    };

    /// Parses the line at `p` with the strict parser; returns where the
    /// next line starts.
    #[cold]
    fn strict_line(&mut self, chunk: &[u8], p: usize, offset: usize) -> Result<usize, Fault> {
        let (line, end) = parse::line_at(chunk, p);
        let (name, value) = parse::parse_line(line).map_err(|kind| Fault {
            offset: offset + p,
            kind,
        })?;
        let (a, b) = key_words(name);
        self.table.add(a, b, name, value, offset + p);
        Ok(end)
    }
}

impl<const PORTABLE: bool> Partial for Fast<PORTABLE> {
    fn feed(&mut self, chunk: &[u8], offset: usize) -> Result<(), Fault> {
        let mut p = 0;
        // The body: every line starting at least PAD bytes before the end.
        if let Some(limit) = chunk.len().checked_sub(PAD) {
            loop {
                match scan::scan(Self::KERNELS, &mut self.table, chunk, p, limit, offset) {
                    Ok(end) => {
                        p = end;
                        break;
                    }
                    Err(bad) => p = self.strict_line(chunk, bad, offset)?,
                }
            }
        }
        // The tail, at most PAD bytes, in a zero-padded copy. A chunk that
        // does not end in `\n` ends the input, whose last line may lack it.
        let rest = &chunk[p..];
        let mut buf = [0u8; 2 * PAD + 1];
        buf[..rest.len()].copy_from_slice(rest);
        let mut r = rest.len();
        if rest.last().is_some_and(|&c| c != b'\n') {
            buf[r] = b'\n';
            r += 1;
        }
        if let Err(bad) = scan::scan(Self::KERNELS, &mut self.table, &buf, 0, r, offset + p) {
            // Rare: finish the tail line by line with the strict parser.
            let mut q = p + bad;
            while q < chunk.len() {
                q = self.strict_line(chunk, q, offset)?;
            }
        }
        Ok(())
    }

    fn merge(&mut self, other: Self) {
        self.table.merge(&other.table);
    }

    fn into_entries(self) -> Vec<(Vec<u8>, Stats, usize)> {
        self.table.entries().collect()
    }
}

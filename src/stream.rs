//! Aggregating a stream (standard input, a pipe, a decompressor) in bounded
//! memory, with any parallel engine.
//!
//! The calling thread reads: it fills blocks from a bounded pool of reusable
//! buffers, carries the partial last line of each block over to the next,
//! and hands blocks of whole lines to worker threads through a channel. Each
//! worker feeds its own [`Partial`], as on a mapped file, and the partials
//! are merged at the end. Memory is the pool (`threads + 2` blocks of the
//! chunk size) plus the tables, whatever the length of the stream.
//!
//! A stream cannot be read twice, so two things the file path does after the
//! fact are done on each block while it is in hand: counting its lines (a
//! fault's line number is the count before it) and checking its UTF-8 (the
//! file path checks each distinct name once, at the end, and then counts the
//! lines up to the first bad one; by then a stream's bytes are gone).

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Mutex, PoisonError};

use crate::engine::{Options, Partial, Summary};
use crate::error::{Error, ErrorKind, Fault};
use crate::parse;

/// Aggregates everything `reader` yields with the engine whose per-thread
/// state is `P`, using `options.threads` workers and blocks of
/// `options.chunk_size` bytes. Gives the same summary, and the same error
/// with the same line number, as the file path on the same bytes; a read
/// error is reported unless the bytes before it hold a malformed line.
pub fn run<P: Partial>(reader: impl Read, options: &Options) -> Result<Summary, Error> {
    let threads = options.threads.max(1);
    let (full_tx, full_rx) = mpsc::channel();
    let full_rx = Mutex::new(full_rx);
    let (free_tx, free_rx) = mpsc::channel();
    let shared = Shared {
        fault_bound: AtomicUsize::new(usize::MAX),
        counted: Mutex::new(Counted::default()),
    };
    let reading = Reading {
        block_size: options.chunk_size.max(1),
        pool: threads + 2,
        full: full_tx,
        free: free_rx,
    };
    let (read, results) = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let free = free_tx.clone();
                let (full, shared) = (&full_rx, &shared);
                s.spawn(move || work::<P>(full, free, shared))
            })
            .collect();
        drop(free_tx);
        // Returning drops the sender, which lets the workers finish.
        let read = reading.run(reader, &shared.fault_bound);
        let results: Vec<(P, Option<Located>)> = workers
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect();
        (read, results)
    });
    let mut merged = P::default();
    let mut fault: Option<Located> = None;
    for (partial, found) in results {
        merged.merge(partial);
        fault = match (fault, found) {
            (Some(a), Some(b)) => Some(if b.fault.offset < a.fault.offset {
                b
            } else {
                a
            }),
            (a, b) => a.or(b),
        };
    }
    // A malformed line was read before any read error, so it comes first.
    if let Some(found) = fault {
        let counted = shared
            .counted
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        // Every block before the fault's was fed whole, none after it counts.
        debug_assert_eq!(counted.through, found.block);
        let newlines = counted.newlines + found.newlines_before;
        return Err(found.fault.after_newlines(newlines).into());
    }
    read?;
    // Every name's UTF-8 was checked with its block, so this cannot fail.
    Summary::from_entries(merged.into_entries(), None)
        .map_err(|f| unreachable!("a bad name passed the block checks: {f:?}"))
}

/// A block of whole lines in a buffer from the pool. The buffer is
/// initialized to its full length once, when allocated; only `..len` is
/// this block's.
struct Block {
    buf: Vec<u8>,
    len: usize,
    offset: usize,
}

/// The reading side: the channel blocks go out on, and the pool's buffers
/// coming back.
struct Reading {
    block_size: usize,
    /// How many buffers may exist: one per worker, one being filled, one
    /// waiting, so the workers never wait for the reader when it keeps up.
    pool: usize,
    full: Sender<Block>,
    free: Receiver<Vec<u8>>,
}

impl Reading {
    /// Reads blocks until the end of the input, a read error, or a fault
    /// (the rest of the input cannot hold an earlier one).
    fn run(self, mut reader: impl Read, fault_bound: &AtomicUsize) -> io::Result<()> {
        let mut allocated = 0;
        let mut carry = Vec::new();
        let mut offset = 0;
        loop {
            if fault_bound.load(Ordering::Relaxed) != usize::MAX {
                return Ok(());
            }
            let mut buf = match self.free.try_recv() {
                Ok(buf) => buf,
                Err(_) if allocated < self.pool => {
                    allocated += 1;
                    vec![0; self.block_size]
                }
                // Only fails if every worker is gone, i.e. panicked; the
                // join reports that.
                Err(_) => match self.free.recv() {
                    Ok(buf) => buf,
                    Err(_) => return Ok(()),
                },
            };
            if buf.len() > self.block_size && carry.len() < self.block_size {
                // Grown for an overlong line earlier: back to the budget.
                buf.truncate(self.block_size);
                buf.shrink_to_fit();
            }
            let mut filled = carry.len();
            if buf.len() <= filled {
                buf.resize(filled * 2, 0);
            }
            buf[..filled].copy_from_slice(&carry);
            let mut eof = false;
            let len = loop {
                while filled < buf.len() {
                    match reader.read(&mut buf[filled..]) {
                        Ok(0) => {
                            eof = true;
                            break;
                        }
                        Ok(n) => filled += n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e),
                    }
                }
                if eof {
                    break filled;
                }
                match memchr::memrchr(b'\n', &buf[..filled]) {
                    Some(i) => break i + 1,
                    // A line longer than the buffer: it is malformed, but
                    // is held whole so that its error reads as on the file
                    // path.
                    None => buf.resize(buf.len() * 2, 0),
                }
            };
            carry.clear();
            carry.extend_from_slice(&buf[len..filled]);
            if len == 0 {
                return Ok(());
            }
            if self.full.send(Block { buf, len, offset }).is_err() {
                return Ok(());
            }
            offset += len;
            if eof {
                return Ok(());
            }
        }
    }
}

/// What the workers share.
struct Shared {
    /// Offset of the first fault found so far: blocks starting after it
    /// cannot hold an earlier fault, so they are skipped and no more are
    /// read.
    fault_bound: AtomicUsize,
    /// The newlines of the blocks fed whole so far.
    counted: Mutex<Counted>,
}

/// The `\n` count of the input's longest prefix of blocks fed whole, plus
/// the blocks fed out of order beyond it (at most one per buffer in the
/// pool, so this stays small however long the input).
#[derive(Default)]
struct Counted {
    through: usize,
    newlines: u64,
    ahead: BTreeMap<usize, (usize, u64)>,
}

impl Counted {
    fn add(&mut self, offset: usize, len: usize, newlines: u64) {
        self.ahead.insert(offset, (len, newlines));
        while let Some((len, newlines)) = self.ahead.remove(&self.through) {
            self.through += len;
            self.newlines += newlines;
        }
    }
}

/// A fault found in a block, with what is needed to give its line number.
struct Located {
    fault: Fault,
    /// Offset of the block it was found in.
    block: usize,
    /// `\n` in that block before the fault.
    newlines_before: u64,
}

/// A worker: feeds blocks into its own `P` until the reader is done, and
/// returns every buffer to the pool.
fn work<P: Partial>(
    full: &Mutex<Receiver<Block>>,
    free: Sender<Vec<u8>>,
    shared: &Shared,
) -> (P, Option<Located>) {
    let mut partial = P::default();
    let mut found = None;
    loop {
        let block = full.lock().unwrap_or_else(PoisonError::into_inner).recv();
        let Ok(block) = block else {
            return (partial, found);
        };
        if block.offset <= shared.fault_bound.load(Ordering::Relaxed) {
            let bytes = &block.buf[..block.len];
            match check(&mut partial, bytes, block.offset) {
                Ok(()) => {
                    let newlines = count_newlines(bytes);
                    shared
                        .counted
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .add(block.offset, block.len, newlines);
                }
                Err(fault) => {
                    shared
                        .fault_bound
                        .fetch_min(fault.offset, Ordering::Relaxed);
                    // Blocks come in input order, and later ones are now
                    // skipped, so this is the worker's first fault.
                    found = Some(Located {
                        newlines_before: count_newlines(&bytes[..fault.offset - block.offset]),
                        block: block.offset,
                        fault,
                    });
                }
            }
        }
        // The reader may have stopped, dropping the pool; then so be it.
        let _ = free.send(block.buf);
    }
}

/// Feeds a block and checks the UTF-8 of its lines before the first parse
/// fault: the first fault in the block, as the file path would report it.
fn check<P: Partial>(partial: &mut P, block: &[u8], offset: usize) -> Result<(), Fault> {
    let parsed = partial.feed(block, offset);
    let checked = match &parsed {
        Ok(()) => block.len(),
        Err(f) => f.offset - offset,
    };
    let Err(e) = std::str::from_utf8(&block[..checked]) else {
        return parsed;
    };
    // The line holding the first invalid byte; ASCII `;` and `\n` never
    // occur inside a multi-byte character, so lines are checked on their
    // own.
    let bad = e.valid_up_to();
    let start = memchr::memrchr(b'\n', &block[..bad]).map_or(0, |i| i + 1);
    let line = &block[start..parse::line_end(block, start)];
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let kind = match parse::parse_line(line) {
        Err(kind) => kind,
        // The line parses, so the invalid byte is in its name.
        Ok((name, _)) => ErrorKind::InvalidUtf8 {
            name: name.to_vec(),
        },
    };
    Err(Fault {
        offset: offset + start,
        kind,
    })
}

fn count_newlines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

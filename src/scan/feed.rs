//! The two ways [`STREAMS`] stretches are fed to the table side by side:
//! each row as soon as it is parsed ([`lockstep`]), or a batch of rows
//! behind, their slots prefetched ([`batched`]).

use super::kernel::Kernel;
use super::line::{line, short_value};
use super::Log;
use crate::bits::prefetch;
use crate::parse::MAX_ROW_LEN;
use crate::table::{ChunkAdder, SHORT};
use crate::tuning::{AHEAD, BATCH, STREAMS};

/// How [`super::scan_lockstep`] feeds rows to the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Feed {
    /// Each row as soon as it is parsed ([`lockstep`]).
    Plain,
    /// A batch of rows behind, their slots prefetched ([`batched`]).
    Batched,
}

/// Parses [`STREAMS`] stretches of `adder`'s chunk in lockstep, one line of
/// each in turn: stream `k` from `ps[k]` while its lines start before
/// `ends[k]`.
/// Each line's start depends on the line before it, a chain of loads and
/// bit tricks the CPU cannot shorten; independent streams give it other
/// work while it waits (docs/PERFORMANCE.md, *The scanner*). Returns as soon as any
/// stream is done or meets a line the scanner does not accept, with every
/// `ps[k]` at the first line of stream `k` not yet added.
///
/// # Safety
/// Every `ends[k] + PAD` is at most the chunk's length, and the kernel's
/// CPU features are present.
#[inline(always)]
pub(super) unsafe fn lockstep<K: Kernel, L: Log>(
    adder: &mut ChunkAdder,
    log: &mut L,
    ps: &mut [usize; STREAMS],
    ends: &[usize; STREAMS],
) {
    let buf = adder.chunk();
    // Written out three times below rather than looped over an array, and
    // as pointers rather than offsets, so that the compiler keeps each
    // stream's position in a register and needs none for the buffer's
    // start.
    let at = |i: usize| buf.as_ptr().wrapping_add(i);
    let [mut a, mut b, mut c] = ps.map(at);
    let [ea, eb, ec] = ends.map(at);
    'scan: while a < ea && b < eb && c < ec {
        // A round moves each stream at most `LINE_SPAN` bytes, so these
        // rounds all start below every stream's end: one counter to test
        // per round, not three ends (docs/PERFORMANCE.md, *The scanner*).
        let left = |p: *const u8, end: *const u8| end as usize - p as usize;
        let rounds = left(a, ea).min(left(b, eb)).min(left(c, ec));
        for _ in 0..rounds.div_ceil(LINE_SPAN) {
            // SAFETY: each position is below its stream's end (see
            // `rounds`), so `PAD` bytes from it lie in `buf`; CPU features
            // forwarded from the caller.
            let go = unsafe {
                step::<K, L>(adder, log, &mut a)
                    && step::<K, L>(adder, log, &mut b)
                    && step::<K, L>(adder, log, &mut c)
            };
            if !go {
                break 'scan;
            }
        }
    }
    *ps = [a, b, c].map(|p| p as usize - buf.as_ptr() as usize);
}

/// The most bytes a line the scanner takes spans, its `\n` included: the
/// longest name, its `;` and `-99.9\n`.
const LINE_SPAN: usize = MAX_ROW_LEN + 1;

/// Starts loading the input [`AHEAD`] bytes after `p`, which need not be
/// in the buffer (a prefetch never faults): a window that reached into a
/// cache line not yet in L1 waited for it, on the chain from one line's
/// start to the next. The 413 set, bound by its instructions rather than
/// its waits, neither gains nor loses (docs/PERFORMANCE.md, *The
/// scanner*).
#[inline(always)]
fn prefetch_ahead(p: *const u8) {
    prefetch::<true, _>(p.wrapping_add(AHEAD));
}

/// A short row parsed ahead of its table update, its slot prefetched
/// ([`batched`]).
#[derive(Clone, Copy, Default)]
struct Pending {
    /// Where its line starts.
    at: usize,
    hash: u64,
    a: u64,
    b: u64,
    value: i64,
}

/// One line of a stream in [`lockstep`]; `false` if the scanner does not
/// take it, with `*p` left at it.
///
/// # Safety
/// As for [`line()`] at `*p`.
#[inline(always)]
unsafe fn step<K: Kernel, L: Log>(adder: &mut ChunkAdder, log: &mut L, p: &mut *const u8) -> bool {
    prefetch_ahead(*p);
    // SAFETY: forwarded from the caller.
    match unsafe { line::<K, L>(adder, log, *p) } {
        Some(len) => {
            // SAFETY: the line lies in the buffer the caller's bound holds.
            *p = unsafe { p.add(len) };
            true
        }
        None => false,
    }
}

/// Parses the short line at `*p` into `rows[*n]` and prefetches its slot,
/// or adds any other line the scanner takes (a long name, a value the
/// window does not parse) at once, ahead of the batch's rows; `false`, with
/// `*p` unchanged, if the stream is at its end or the scanner does not take
/// the line.
///
/// Adding a row ahead of rows before it changes no sum; and if the table
/// then refuses one of those, the input has a fault there, reported in
/// the end however the rows after it were counted (see
/// [`settle_streams`](super::settle_streams)).
///
/// # Safety
/// `buf` is `adder`'s chunk, `*p + PAD <= buf.len()` when `*p < end`, and
/// the kernel's CPU features are present.
#[inline(always)]
unsafe fn parse_ahead<K: Kernel, L: Log>(
    adder: &mut ChunkAdder,
    log: &mut L,
    buf: &[u8],
    p: &mut usize,
    end: usize,
    rows: &mut [Pending; BATCH],
    n: &mut usize,
) -> bool {
    if *p >= end {
        return false;
    }
    // SAFETY: `*p + PAD <= buf.len()`, forwarded from the caller.
    let at = unsafe { buf.as_ptr().add(*p) };
    prefetch_ahead(at);
    // SAFETY: `32 <= PAD` readable bytes at `at`.
    let win = unsafe { K::window(at) };
    // SAFETY: forwarded from the caller; `win` is the window at `at`.
    let short = (win.len <= SHORT)
        .then(|| unsafe { short_value::<K>(at, win) })
        .flatten();
    let Some((value, next)) = short else {
        // SAFETY: forwarded from the caller.
        return match unsafe { line::<K, L>(adder, log, at) } {
            Some(len) => {
                *p += len;
                true
            }
            None => false,
        };
    };
    let hash = adder.hash(win.a, win.b);
    adder.prefetch(hash);
    // `*n < BATCH` (the caller stops there); `%` spares a bounds check.
    rows[*n % BATCH] = Pending {
        at: *p,
        hash,
        a: win.a,
        b: win.b,
        value,
    };
    *n += 1;
    *p += next;
    true
}

/// Adds a stream's parsed rows in order. If the table refuses one, moves
/// the stream back to its line and returns `false`; the rows after it are
/// dropped, to be parsed again from there.
#[inline(always)]
fn add_rows<L: Log>(adder: &mut ChunkAdder, log: &mut L, p: &mut usize, rows: &[Pending]) -> bool {
    for row in rows {
        match adder.add_short_hashed::<L>(row.hash, row.a, row.b, row.value) {
            Some(id) => log.row(id, row.value),
            None => {
                *p = row.at;
                return false;
            }
        }
    }
    true
}

/// [`lockstep`] for a big table: parses up to [`BATCH`] short rows of
/// each stream, prefetching each row's slot, and only then adds them, so
/// that up to `BATCH * STREAMS` slot misses are in flight at once. Other
/// rows are added as they come ([`parse_ahead`]).
///
/// # Safety
/// As for [`lockstep`].
#[inline(always)]
pub(super) unsafe fn batched<K: Kernel, L: Log>(
    adder: &mut ChunkAdder,
    log: &mut L,
    ps: &mut [usize; STREAMS],
    ends: &[usize; STREAMS],
) {
    let buf = adder.chunk();
    let [mut a, mut b, mut c] = *ps;
    let [ea, eb, ec] = *ends;
    let mut rows = [[Pending::default(); BATCH]; STREAMS];
    loop {
        let [ra, rb, rc] = &mut rows;
        let (mut na, mut nb, mut nc) = (0, 0, 0);
        let mut flowing = true;
        // A row added at once leaves its stream's count behind the others'.
        while flowing && na.max(nb).max(nc) < BATCH {
            // SAFETY: `buf` is the chunk; `parse_ahead` reads only below
            // each stream's end; bounds and CPU features forwarded from the
            // caller.
            flowing = unsafe {
                parse_ahead::<K, L>(adder, log, buf, &mut a, ea, ra, &mut na)
                    && parse_ahead::<K, L>(adder, log, buf, &mut b, eb, rb, &mut nb)
                    && parse_ahead::<K, L>(adder, log, buf, &mut c, ec, rc, &mut nc)
            };
        }
        // Every stream's rows come before its position; `&`, not `&&`, so
        // that each stream adds what it parsed.
        let added = add_rows(adder, log, &mut a, &ra[..na])
            & add_rows(adder, log, &mut b, &rb[..nb])
            & add_rows(adder, log, &mut c, &rc[..nc]);
        // A stream that stopped is at its end or at a line the scanner
        // does not take: the plain path finishes the streams from there.
        if !added || !flowing {
            break;
        }
    }
    *ps = [a, b, c];
}

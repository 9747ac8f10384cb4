//! Decoding one line: its name found by the kernel's window, its value
//! parsed from one word, and the row added to the table.

use super::kernel::{Kernel, Window};
use super::value::{parse_value, parse_value_as, signature};
use super::Log;
use crate::bits::load;
use crate::table::{ChunkAdder, SHORT};

/// The value of the line at `p`, whose window `win` found a short name,
/// and how far after `p` the next line starts; `None` if the value is not
/// valid.
///
/// # Safety
/// `p` valid for reads of [`PAD`](super::PAD) bytes, and `win.len <= SHORT`.
#[inline(always)]
pub(super) unsafe fn short_value<K: Kernel>(p: *const u8, win: Window) -> Option<(i64, usize)> {
    // SAFETY: `len <= 15`, so `len + 9 <= PAD`.
    let w = unsafe { load(p.add(win.len + 1)) };
    // The value's signature from the window: it does not wait for `w`.
    let sig = if K::VECTOR {
        (win.bit4 >> win.len) as usize
    } else {
        signature(w)
    };
    let (value, used) = parse_value_as(w, sig)?;
    // With the kernel's `\n`, the next line's start does not wait for the
    // value's loads and bit tricks. The value ends in the first `\n` after
    // the `;`, so the two agree unless the name holds a `\n`: then the key
    // holds it too, and the table refuses it.
    let next = if K::VECTOR {
        win.newlines.trailing_zeros() as usize + 1
    } else {
        win.len + 1 + used
    };
    Some((value, next))
}

/// Parses the line at `p` into the table, and a short name's row into
/// `log`; returns its length, `\n` included, or `None` if the scanner
/// does not accept the line (the caller hands it to the strict parser), as
/// it does a long name's where `log` leaves those to the caller.
///
/// # Safety
/// `p` points into `adder`'s chunk, with [`PAD`](super::PAD) bytes of it
/// from `p`, and the kernel's CPU features are present.
#[inline(always)]
pub(super) unsafe fn line<K: Kernel, L: Log>(
    adder: &mut ChunkAdder,
    log: &mut L,
    p: *const u8,
) -> Option<usize> {
    // Bounds of every unchecked access below: `PAD` bytes at `p`. The
    // window read touches `p..p + 32`, the value read
    // `p + len + 1..p + len + 9` with `len <= MAX_NAME_LEN` (`long_name`
    // looks no further), and `p + 100 + 9 < p + PAD`.
    // SAFETY: `32 <= PAD` readable bytes at `p`.
    let win = unsafe { K::window(p) };
    if win.len <= SHORT {
        // SAFETY: forwarded from the caller; `win` is the window at `p`.
        let (value, next) = unsafe { short_value::<K>(p, win) }?;
        log.row(adder.add_short_numbered::<L>(win.a, win.b, value)?, value);
        Some(next)
    } else {
        // SAFETY: forwarded from the caller; `win` is the window at `p`.
        unsafe { K::long_line::<L>(adder, p, win.len) }
    }
}

/// [`line()`] for the line at `p` whose window found its first `;` at
/// `win_len > SHORT` (the window's size if none); returns the line's
/// length, `\n` included. Kernels call it through [`Kernel::long_line`].
///
/// # Safety
/// `p` points into `adder`'s chunk, with [`PAD`](super::PAD) bytes of it
/// from `p`, and the kernel's CPU features are present.
#[inline(always)]
pub(super) unsafe fn long<K: Kernel, L: Log>(
    adder: &mut ChunkAdder,
    p: *const u8,
    win_len: usize,
) -> Option<usize> {
    if K::VECTOR && win_len < K::WINDOW {
        // A name the window holds whole needs no search and one vector for
        // its key (see `table::long`).
        // SAFETY: PAD bytes of the chunk at `p`, the first `;` at `p +
        // len` (the window's first), `SHORT < len < 32`.
        unsafe { long_row::<K, L, true>(adder, p, win_len) }
    } else {
        // SAFETY: PAD bytes of the chunk at `p`; `win_len` is the window's.
        unsafe { long_line::<K, L>(adder, p, win_len) }
    }
}

/// [`line()`] for the line at `p` whose window found its first `;` at
/// `win_len > SHORT` (the window's size if none); returns the line's
/// length, `\n` included.
///
/// # Safety
/// `p` points into `adder`'s chunk, with [`PAD`](super::PAD) bytes of it
/// from `p`, and the kernel's CPU features are present.
#[inline(always)]
unsafe fn long_line<K: Kernel, L: Log>(
    adder: &mut ChunkAdder,
    p: *const u8,
    win_len: usize,
) -> Option<usize> {
    // SAFETY: `p` is valid for PAD bytes.
    let len = unsafe { K::long_name(p, win_len) }?;
    // SAFETY: PAD bytes of the chunk at `p`, the first `;` at `p + len`
    // (`long_name`), and `SHORT < len <= 100`.
    unsafe { long_row::<K, L, false>(adder, p, len) }
}

/// The rest of a line whose name of `len > SHORT` bytes is found: parses
/// its value and adds the row to the long names' table, with
/// [`Kernel::add_head`] if `HEAD` (only for `len < 32`), else
/// [`Kernel::add_long`]. Returns the line's length, `\n` included.
///
/// # Safety
/// `p` points into `adder`'s chunk, with [`PAD`](super::PAD) bytes of it
/// from `p`, its first `;` at `p + len` with `SHORT < len <= MAX_NAME_LEN`
/// (`len < 32` if `HEAD`), and the kernel's CPU features are present.
#[inline(always)]
unsafe fn long_row<K: Kernel, L: Log, const HEAD: bool>(
    adder: &mut ChunkAdder,
    p: *const u8,
    len: usize,
) -> Option<usize> {
    // SAFETY: `len <= 100`, so `len + 9 <= PAD`.
    let w = unsafe { load(p.add(len + 1)) };
    let (value, used) = parse_value(w)?;
    // Cut once for the long table's calls, which take an `i16` (their
    // rows are few).
    let value = value as i16;
    // SAFETY: forwarded from the caller.
    let added = unsafe {
        if HEAD {
            K::add_head::<L>(adder, p, len, value)
        } else {
            K::add_long::<L>(adder, p, len, value)
        }
    };
    added.then_some(len + 1 + used)
}

/// Parses lines of `adder`'s chunk starting at `start` while they start
/// before `limit`, adding each to the table (and `log`, see [`line()`]).
///
/// Returns `Ok(p)`, the first line start at or after `limit`, or `Err(p)`,
/// the start of a line the scanner does not accept; the caller hands that
/// line to the strict parser and resumes after it.
///
/// # Safety
/// `limit + PAD` is at most the chunk's length, and the kernel's CPU
/// features are present.
#[inline(always)]
pub(super) unsafe fn lines<K: Kernel, L: Log>(
    adder: &mut ChunkAdder,
    log: &mut L,
    start: usize,
    limit: usize,
) -> Result<usize, usize> {
    let buf = adder.chunk();
    let mut p = start;
    while p < limit {
        // SAFETY: `p < limit`, so `p + PAD <= buf.len()`; CPU features
        // forwarded from the caller.
        p += unsafe { line::<K, L>(adder, log, buf.as_ptr().add(p)) }.ok_or(p)?;
    }
    Ok(p)
}

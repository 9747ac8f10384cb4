//! The interface of a kernel: how a line's first bytes are read, at the
//! lowest level. The portable kernel is [`super::swar`]; on x86-64 with
//! AVX2, [`super::x86_64`] has a vector one.

use super::Log;
use crate::table::ChunkAdder;

/// What a kernel sees in the first bytes of a line.
#[derive(Clone, Copy)]
pub(super) struct Window {
    /// Index of the first `;` among them; `WINDOW` if there is none.
    pub(super) len: usize,
    /// A bit for each `\n` among them (vector kernels only).
    pub(super) newlines: u32,
    /// Bit `k` set if byte `k` among them has bit 4 set, as digits and `;`
    /// do: shifted right by `len`, the
    /// [`signature`](super::value::signature) of a short name's value,
    /// with the `;`'s bit below it (vector kernels only).
    pub(super) bit4: u32,
    /// For `len <= SHORT`, the name and its `;`, zero-padded: the short
    /// table's key. Unused otherwise.
    pub(super) a: u64,
    pub(super) b: u64,
}

/// How a line's first bytes are read, at its lowest level.
pub(super) trait Kernel {
    /// Bytes the first read covers.
    const WINDOW: usize;
    /// Whether the window is one vector that also finds
    /// [`Window::newlines`] and [`Window::bit4`] (in which case every valid
    /// line with a short name ends within it).
    const VECTOR: bool;

    /// Reads the first `WINDOW` bytes of the line at `p`.
    ///
    /// # Safety
    /// `p` must be valid for reads of 32 bytes.
    unsafe fn window(p: *const u8) -> Window;

    /// The length of the name of the line at `p`, whose window found its
    /// first `;` at `win_len` (the window's size if none, as always for a
    /// vector kernel, which takes a name its window holds by
    /// [`Kernel::add_head`]), more than [`SHORT`](crate::table::SHORT), if it is at most
    /// [`MAX_NAME_LEN`](crate::parse::MAX_NAME_LEN).
    ///
    /// # Safety
    /// `p` must be valid for reads of [`PAD`](super::PAD) bytes.
    unsafe fn long_name(p: *const u8, win_len: usize) -> Option<usize>;

    /// Adds the row of the name of `len` bytes at `p` to the long names'
    /// table; `false` if the table refuses the name. The AVX2 kernel adds
    /// it a row late ([`ChunkAdder::add_long_deferred_avx2`]): its `false`
    /// says that the row deferred before was refused, and its scans end by
    /// [`ChunkAdder::settle`], which finds that row.
    ///
    /// # Safety
    /// `p` must point into `adder`'s chunk, with [`PAD`](super::PAD) bytes
    /// of it from `p`, its first `;` at `p + len`, `SHORT < len <=
    /// MAX_NAME_LEN`.
    unsafe fn add_long<L: Log>(
        adder: &mut ChunkAdder,
        p: *const u8,
        len: usize,
        value: i16,
    ) -> bool;

    /// [`line()`](super::line::line) for a line whose window found its
    /// first `;` at `win_len > SHORT` (the window's size if none): returns
    /// the line's length, `\n` included, or `None` if the scanner does not
    /// take it. The AVX2 kernel keeps it out of the scanner's loop
    /// (docs/PERFORMANCE.md, *The scanner*).
    ///
    /// # Safety
    /// `p` points into `adder`'s chunk, with [`PAD`](super::PAD) bytes of
    /// it from `p`, and the kernel's CPU features are present.
    unsafe fn long_line<L: Log>(
        adder: &mut ChunkAdder,
        p: *const u8,
        win_len: usize,
    ) -> Option<usize>;

    /// [`Kernel::add_long`] for a name whose `;` is in the window, which a
    /// vector kernel cuts, hashes and compares as one vector
    /// ([`ChunkAdder::add_long_head_avx2`]). Only vector kernels call it.
    ///
    /// # Safety
    /// As for [`Kernel::add_long`], and `len < 32`.
    unsafe fn add_head<L: Log>(
        adder: &mut ChunkAdder,
        p: *const u8,
        len: usize,
        value: i16,
    ) -> bool;
}

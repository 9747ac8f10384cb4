//! The portable kernel: two 8-byte SWAR steps find a short name's `;`,
//! and `memchr` a long one's.

use super::kernel::{Kernel, Window};
use super::Log;
use crate::bits::{load, matches};
use crate::parse::MAX_NAME_LEN;
use crate::table::{ChunkAdder, SHORT};

/// Portable kernel: two 8-byte SWAR steps.
pub(super) struct Swar;

impl Kernel for Swar {
    const WINDOW: usize = 16;
    const VECTOR: bool = false;

    #[inline(always)]
    unsafe fn long_name(p: *const u8, win_len: usize) -> Option<usize> {
        if win_len < Self::WINDOW {
            return Some(win_len);
        }
        // SAFETY: the caller guarantees PAD > MAX_NAME_LEN readable bytes.
        let rest = unsafe { std::slice::from_raw_parts(p, MAX_NAME_LEN + 1) };
        memchr::memchr(b';', &rest[Self::WINDOW..]).map(|i| Self::WINDOW + i)
    }

    #[inline(always)]
    unsafe fn long_line<L: Log>(
        adder: &mut ChunkAdder,
        p: *const u8,
        win_len: usize,
    ) -> Option<usize> {
        // SAFETY: forwarded from the caller.
        unsafe { super::line::long::<Self, L>(adder, p, win_len) }
    }

    #[inline(always)]
    unsafe fn add_long<L: Log>(
        adder: &mut ChunkAdder,
        p: *const u8,
        len: usize,
        value: i16,
    ) -> bool {
        // SAFETY: the caller guarantees `len < PAD` readable bytes.
        adder.add_long(unsafe { std::slice::from_raw_parts(p, len) }, value)
    }

    #[inline(always)]
    unsafe fn add_head<L: Log>(
        adder: &mut ChunkAdder,
        p: *const u8,
        len: usize,
        value: i16,
    ) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { Self::add_long::<L>(adder, p, len, value) }
    }

    #[inline(always)]
    unsafe fn window(p: *const u8) -> Window {
        // SAFETY: the caller guarantees 32 readable bytes at `p`.
        let (w0, w1) = unsafe { (load(p), load(p.add(8))) };
        // `m ^ (m - 1)` keeps the bytes up to and including the lowest
        // match, the one `matches` gets exactly right.
        let m0 = matches(w0, b';');
        if m0 != 0 {
            let len = (m0.trailing_zeros() / 8) as usize;
            return Window {
                len,
                newlines: 0,
                bit4: 0,
                a: w0 & (m0 ^ (m0 - 1)),
                b: 0,
            };
        }
        let m1 = matches(w1, b';');
        let len = if m1 != 0 {
            8 + (m1.trailing_zeros() / 8) as usize
        } else {
            Self::WINDOW
        };
        let b = if len <= SHORT {
            w1 & (m1 ^ (m1 - 1))
        } else {
            w1
        };
        Window {
            len,
            newlines: 0,
            bit4: 0,
            a: w0,
            b,
        }
    }
}

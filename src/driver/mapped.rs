//! Bytes in memory, a caller's slice or a mapped file: cut into
//! line-aligned chunks for the workers ([`cut`]), and, for a mapped file,
//! its pages handed back to the kernel once read, and a file that shrinks
//! meanwhile noticed ([`shrink`]).
//!
//! A mapped file's pages go back to the kernel once their chunk is fed, so
//! a file of any size costs only the chunks in flight; a malformed line of
//! any length costs no more: it is read a window at a time, each window
//! released ([`judge_whole`](super::judge::judge_whole)).

use std::io;
use std::ops::Range;
use std::sync::Arc;

use memmap2::{Mmap, UncheckedAdvice};

use super::chunks::Chunks;
use super::{Bytes, Held, Place, State, Work};
use crate::engine::Options;
use crate::shrink;

/// Bytes in memory as the chunks of one input share them.
#[derive(Clone)]
pub(super) enum SharedBytes<'a> {
    Slice(&'a [u8]),
    Map(Arc<Map>),
}

/// A mapped file, guarded against shrinking while it is mapped.
pub(super) struct Map {
    // Declared first, so dropped first: the guard covers the mapping's
    // addresses only while it is there.
    guard: shrink::Guard,
    map: Mmap,
}

impl SharedBytes<'_> {
    fn new(held: Held<'_>) -> SharedBytes<'_> {
        match held {
            Held::Slice(slice) => SharedBytes::Slice(slice),
            Held::Map(map) => {
                let start = map.as_ptr() as usize;
                let guard = shrink::Guard::new(start..start + map.len());
                SharedBytes::Map(Arc::new(Map { guard, map }))
            }
        }
    }

    pub(super) fn bytes(&self) -> &[u8] {
        match self {
            SharedBytes::Slice(slice) => slice,
            SharedBytes::Map(map) => &map.map,
        }
    }

    /// Whether the file was read past its end since it was mapped: it
    /// shrank, and what was read there was zeros.
    pub(super) fn shrank(&self) -> bool {
        matches!(self, SharedBytes::Map(map) if map.guard.shrank())
    }

    /// Returns the pages of `range` to the kernel, if mapped.
    pub(super) fn release(&self, range: Range<usize>) {
        if let SharedBytes::Map(map) = self {
            release(&map.map, range);
        }
    }

    /// The number of `\n` in `range`, releasing the pages of a map as it
    /// goes (an error at the end of a huge file must not map it all back
    /// in).
    pub(super) fn count_newlines(&self, range: Range<usize>) -> u64 {
        const WINDOW: usize = 4 << 20;
        let mut newlines = 0;
        let Range { mut start, end } = range;
        while start < end {
            let stop = end.min(start + WINDOW);
            newlines += memchr::memchr_iter(b'\n', &self.bytes()[start..stop]).count() as u64;
            self.release(start..stop);
            start = stop;
        }
        newlines
    }
}

/// Cuts the lines of `bytes`' window into chunks ([`Chunks`]) and hands
/// each to `send` as work at `place`, no further than a known failure.
/// Returns the input's length from its first line start (for the rank of
/// the next input); `None` if `send` failed (the workers are gone); the
/// error [`shrink::shrank`] if the file shrank under the cutting.
pub(super) fn cut<'a>(
    bytes: Bytes<'a>,
    place: Place,
    options: &Options,
    state: &State,
    send: &mut dyn FnMut(Work<'a>) -> bool,
) -> io::Result<Option<usize>> {
    let Bytes {
        held,
        lo,
        window,
        rest,
    } = bytes;
    let shared = SharedBytes::new(held);
    let all = shared.bytes();
    let threads = options.threads.max(1);
    let size = options.chunk_size;
    let release = |range| shared.release(range);
    for (start, chunk) in Chunks::new(all, lo, window, size, threads, rest, &release) {
        if state.past_failure(place.base + (start - lo)) {
            break;
        }
        let range = start..start + chunk.len();
        let (bytes, lo) = (shared.clone(), lo);
        if !send(Work::Chunk {
            bytes,
            lo,
            range,
            place,
        }) {
            return Ok(None);
        }
    }
    if shared.shrank() {
        return Err(shrink::shrank());
    }
    Ok(Some(all.len() - lo))
}

/// The granularity of [`release`]: the largest block of pages the kernel
/// maps at once for one fault (a 2 MiB page-cache folio, on x86-64 and on
/// arm64 with 4 KiB pages), and so a multiple of every page size.
const RELEASE_ALIGN: usize = 2 << 20;

/// More than any valid line: how far before a chunk the search for its
/// start may read.
const LINE_MARGIN: usize = 64 << 10;

/// Returns the pages of `range` of the map to the kernel, so that the
/// process does not keep them resident; reading them again refaults them
/// from the page cache.
///
/// A fault maps a whole folio, which may reach into the neighbouring
/// chunks, and cutting a chunk reads from just before its start (the end
/// of the line before); a neighbour may also be fed after this chunk. So
/// the release takes in the aligned blocks around `range`, and each chunk
/// releases everything its own cutting and feed mapped. A neighbour still
/// reading a released block just refaults it.
pub(crate) fn release(map: &Mmap, range: Range<usize>) {
    let start = range.start.saturating_sub(LINE_MARGIN) / RELEASE_ALIGN * RELEASE_ALIGN;
    let end = range.end.div_ceil(RELEASE_ALIGN) * RELEASE_ALIGN;
    let end = end.min(map.len());
    if start < end {
        // `MADV_DONTNEED` on a shared, read-only file mapping only drops
        // this process's page table entries: the next access to a page, by
        // any thread, maps the same page-cache page again, holding the same
        // file bytes (the file is not modified while mapped, the contract
        // of `Input::from_file`). So no reference into the map, even one
        // being read right now by another thread, ever observes a change.
        // SAFETY: contents unchanged (above); the range is inside the map.
        let _ =
            unsafe { map.unchecked_advise_range(UncheckedAdvice::DontNeed, start, end - start) };
    }
}

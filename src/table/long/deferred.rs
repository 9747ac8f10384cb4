//! The AVX2 path's long rows added a row late: a long row's name is cut
//! and hashed and its bucket fetched, and the row is added when the next
//! long row comes, its bucket at hand by then ([`Deferred`]); or at once,
//! where the bucket is at hand already ([`Long::add_head_if_home`]).
//!
//! A row kept back is read again from the input when it is added: the
//! [`Deferred`] that keeps it borrows the chunk of input the scanner reads,
//! so that no row outlives its bytes, as the borrow checker sees.

use super::{avx2, Long, KEY_SPAN};
use crate::bits::prefetch;
use crate::table::Numbering;

/// A row added a row late ([`Deferred`]): its line's first [`KEY_SPAN`]
/// bytes, as [`avx2::Cut::load`] reads them, borrowed from the chunk of
/// input; its name's length, hash and value.
struct Row<'c> {
    line: &'c [u8; KEY_SPAN],
    len: usize,
    hash: u64,
    value: i16,
}

/// The long rows the AVX2 path keeps back while it scans a chunk of input
/// borrowed for `'c`, one for each way a key is cut, and the first line
/// whose name the table refused since they were last settled
/// ([`Deferred::settle`]).
#[derive(Default)]
pub(in crate::table) struct Deferred<'c> {
    /// The row [`Deferred::add_by_blocks`] keeps back until the next.
    blocks: Option<Row<'c>>,
    /// The row [`Deferred::add_by_head`] keeps back until the next.
    head: Option<Row<'c>>,
    /// The first line of a deferred row whose name was refused.
    refused: Option<&'c [u8; KEY_SPAN]>,
}

impl<'c> Deferred<'c> {
    /// Adds the row of the name of `len` bytes at `p` to `long` a row late:
    /// cuts and hashes the name as four AVX2 vectors read from `p` and
    /// starts fetching its bucket, then adds the row deferred before it
    /// (whose bucket has had the time to come) and keeps this one in its
    /// place. If the table refused the row before, remembers its line for
    /// [`Deferred::settle`] and returns `false` without taking this row:
    /// the caller stops there. (Returning a verdict, rather than none,
    /// also keeps the scanner's loop in its registers, which takes
    /// instructions off every short row.) `N` says whether `long` numbers
    /// its names, and so keeps its rows ([`Long::add_kept`]).
    ///
    /// Why a row late: a long row's bucket is 128 bytes at a hashed place,
    /// and its address waits for the name to be found, cut and hashed;
    /// added at once, the row held the CPU while its bucket came
    /// (docs/PERFORMANCE.md, *The tables*).
    ///
    /// # Safety
    /// `p` must point into a chunk of input borrowed for `'c`, with
    /// [`KEY_SPAN`] bytes of it from `p`; its first `;` at `p + len` with
    /// `len <= MAX_NAME_LEN`; and the CPU must have AVX2.
    #[inline(always)]
    pub(in crate::table) unsafe fn add_by_blocks<N: Numbering>(
        &mut self,
        long: &mut Long,
        p: *const u8,
        len: usize,
        value: i16,
    ) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.defer::<avx2::Blocks, N>(long, p, len, value) }
    }

    /// [`Deferred::add_by_blocks`] for a name of `len < 32` bytes, whose
    /// `;` is in the first 32 bytes: the name is cut, hashed and compared
    /// as one AVX2 vector ([`avx2::Head`]), and its rows are deferred
    /// among themselves.
    ///
    /// # Safety
    /// As for [`Deferred::add_by_blocks`], with `len < 32`.
    #[inline(always)]
    pub(in crate::table) unsafe fn add_by_head<N: Numbering>(
        &mut self,
        long: &mut Long,
        p: *const u8,
        len: usize,
        value: i16,
    ) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.defer::<avx2::Head, N>(long, p, len, value) }
    }

    /// The body of [`Deferred::add_by_blocks`] and [`Deferred::add_by_head`],
    /// whose keys are cut as `C`, each with its own deferred row.
    ///
    /// # Safety
    /// As for [`Deferred::add_by_blocks`], and `C::load`'s.
    #[inline(always)]
    unsafe fn defer<C: avx2::Cut, N: Numbering>(
        &mut self,
        long: &mut Long,
        p: *const u8,
        len: usize,
        value: i16,
    ) -> bool {
        // SAFETY: forwarded from the caller.
        let hash = unsafe { C::load(p, len) }.hash();
        long.prefetch(hash);
        if let Some(before) = self.queue::<C>().take() {
            // SAFETY: the CPU has AVX2 (forwarded from the caller).
            unsafe { self.add_row::<C>(long, before, N::NUMBERED) };
        }
        if self.refused.is_some() {
            return false;
        }
        // SAFETY: `KEY_SPAN` bytes from `p` lie in a chunk borrowed for
        // `'c` (forwarded from the caller), and a byte array needs no
        // alignment.
        let line = unsafe { &*p.cast::<[u8; KEY_SPAN]>() };
        *self.queue::<C>() = Some(Row {
            line,
            len,
            hash,
            value,
        });
        true
    }

    /// Where rows whose keys are cut as `C` wait.
    #[inline(always)]
    fn queue<C: avx2::Cut>(&mut self) -> &mut Option<Row<'c>> {
        if C::HEAD {
            &mut self.head
        } else {
            &mut self.blocks
        }
    }

    /// Adds the rows deferred last to `long`, if any (one in each queue),
    /// and returns the line of the first name the table refused since the
    /// last call, if any (only in faulty input).
    pub(in crate::table) fn settle(&mut self, long: &mut Long) -> Option<&'c [u8; KEY_SPAN]> {
        if self.blocks.is_some() || self.head.is_some() {
            // SAFETY: only `defer` keeps rows back, whose callers guarantee
            // that the CPU has AVX2.
            unsafe { self.settle_avx2(long) };
        }
        self.refused.take()
    }

    /// [`Deferred::settle`]'s adds, compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn settle_avx2(&mut self, long: &mut Long) {
        if let Some(row) = self.blocks.take() {
            // SAFETY: forwarded from the caller.
            unsafe { self.add_row::<avx2::Blocks>(long, row, long.named.is_some()) };
        }
        if let Some(row) = self.head.take() {
            // SAFETY: forwarded from the caller.
            unsafe { self.add_row::<avx2::Head>(long, row, long.named.is_some()) };
        }
    }

    /// Adds a deferred row to `long`, remembering its line if the name is
    /// refused; `numbered` says whether `long` numbers its names, a
    /// constant where the scan's rows are added.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[inline(always)]
    unsafe fn add_row<C: avx2::Cut>(&mut self, long: &mut Long, row: Row<'c>, numbered: bool) {
        let Row {
            line,
            len,
            hash,
            value,
        } = row;
        // SAFETY: `line` holds `KEY_SPAN` bytes, still borrowed; `defer`
        // cut this very key from them, so its `;` is at `len` within the
        // cut's limit; AVX2 forwarded from the caller.
        let key = unsafe { C::load(line.as_ptr(), len) };
        // By `move`: a closure that borrowed the row kept it in memory.
        let past_home = move |t: &mut Long, key: &C, home, value| {
            // SAFETY: a `C` exists only on a CPU with AVX2 (`Cut::load`).
            unsafe { t.add_past_home_avx2(key, line, len, home, value) }
        };
        debug_assert_eq!(numbered, long.named.is_some());
        let added = if numbered {
            // SAFETY: as above.
            unsafe { long.add_numbered_avx2(&key, hash, line, len, value) }
        } else {
            long.add_probe(&key, hash, value, true, |_| true, past_home)
        };
        if !added {
            // The first in the input is the one reported: the two queues'
            // refusals may come in either order.
            let first = match self.refused {
                Some(at) if at.as_ptr() < line.as_ptr() => at,
                _ => line,
            };
            self.refused = Some(first);
        }
    }
}

impl Long {
    /// [`Deferred::add_by_head`]'s row counted at once, not a row late, if
    /// its name's home bucket holds it, giving the name's number (the row
    /// is not kept in [`Long::rows`]: the caller logs it); `None`, adding
    /// nothing, if not (the name is further on, new, or the table
    /// flooded), for the caller to add it as usual. For a loop whose long
    /// names are few, their buckets at hand in L1: there the row-late add
    /// and its call cost a 16–31-byte row more than its lookup
    /// (docs/PERFORMANCE.md, *Registers across calls*). Not counted in
    /// the bucket where `N` says the table numbers its names.
    ///
    /// # Safety
    /// `p` valid for reads of 32 bytes, its first `;` at `p + len` with
    /// `len < 32`, and the CPU has AVX2.
    #[inline(always)]
    pub(crate) unsafe fn add_head_if_home<N: Numbering>(
        &mut self,
        p: *const u8,
        len: usize,
        value: i16,
    ) -> Option<u32> {
        // SAFETY: forwarded from the caller.
        let key = unsafe { <avx2::Head as avx2::Cut>::load(p, len) };
        let hash = avx2::Cut::hash(&key);
        let count = !N::NUMBERED;
        self.add_probe(&key, hash, value, count, |s| Some(s.id), |_, _, _, _| None)
    }

    /// [`Deferred::add_row`]'s add in a table that numbers its names
    /// ([`Long::add_kept`]), out of line: inlined beside the plain run's
    /// add, it changed how the compiler laid out that one.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    #[inline(never)]
    unsafe fn add_numbered_avx2<C: avx2::Cut>(
        &mut self,
        key: &C,
        hash: u64,
        line: &[u8; KEY_SPAN],
        len: usize,
        value: i16,
    ) -> bool {
        let past_home =
            |t: &mut Long, key: &C, home, value| t.add_past_home(key, &line[..len], home, value);
        self.add_kept(key, hash, value, past_home).is_some()
    }

    /// [`Long::add_past_home`] compiled for AVX2, out of line, for the
    /// name of the first `len` bytes of `line`. Marked cold too:
    /// `inline(never)` alone, the compiler inlined it all the same.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    #[cold]
    #[inline(never)]
    unsafe fn add_past_home_avx2<C: avx2::Cut>(
        &mut self,
        key: &C,
        line: &[u8; KEY_SPAN],
        len: usize,
        home: usize,
        value: i16,
    ) -> bool {
        self.add_past_home(key, &line[..len], home, value).is_some()
    }

    /// Starts loading the home bucket of a name whose hash is `hash`, both
    /// its lines, without waiting for them.
    #[inline(always)]
    fn prefetch(&self, hash: u64) {
        let bucket = self
            .buckets
            .as_ptr()
            .wrapping_add((hash >> self.shift) as usize);
        prefetch::<true, _>(bucket);
        prefetch::<true, _>(bucket.cast::<u8>().wrapping_add(64));
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::names;
    use super::super::{Key, Probe};
    use super::avx2::Cut;
    use super::*;
    use crate::parse::MAX_NAME_LEN;

    /// Adds one row with AVX2, as the scanner does (by its head if the
    /// name is under 32 bytes), and settles it at once: `false` if refused.
    ///
    /// # Safety
    /// The first `;` of `line` at `len`, and the CPU has AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn add_avx2(t: &mut Long, line: &[u8], len: usize, value: i16) -> bool {
        let mut deferred = Deferred::default();
        // SAFETY: forwarded from the caller.
        unsafe { add_line_avx2(&mut deferred, t, line, len, value) };
        deferred.settle(t).is_none()
    }

    /// Adds one row with AVX2 a row late, by its head if the name is under
    /// 32 bytes, as the scanner does.
    ///
    /// # Safety
    /// The first `;` of `line` at `len`, and the CPU has AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn add_line_avx2<'c>(
        deferred: &mut Deferred<'c>,
        t: &mut Long,
        line: &'c [u8],
        len: usize,
        value: i16,
    ) -> bool {
        assert!(line.len() >= KEY_SPAN && len <= MAX_NAME_LEN);
        // SAFETY: `KEY_SPAN` bytes of `line`, borrowed for `'c`; the rest
        // forwarded from the caller.
        unsafe {
            if len < 32 {
                deferred.add_by_head::<()>(t, line.as_ptr(), len, value)
            } else {
                deferred.add_by_blocks::<()>(t, line.as_ptr(), len, value)
            }
        }
    }

    /// Adds the lines of `text` with AVX2, each a row late, until one is
    /// not taken, then settles; returns where it stopped and the refused
    /// line, as offsets.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn add_lines_avx2(t: &mut Long, text: &[u8]) -> (usize, Option<usize>) {
        let mut buf = text.to_vec();
        buf.extend_from_slice(&[0; KEY_SPAN]);
        let mut deferred = Deferred::default();
        let mut p = 0;
        while p < text.len() {
            let len = buf[p..].iter().position(|&c| c == b';').unwrap();
            let end = p + buf[p..].iter().position(|&c| c == b'\n').unwrap();
            let value = std::str::from_utf8(&buf[p + len + 1..end]).unwrap();
            let value = (value.parse::<f64>().unwrap() * 10.0).round() as i16;
            // SAFETY: `KEY_SPAN` zeros follow the text; the first `;` at
            // `p + len`; AVX2 as the caller guarantees.
            if !unsafe { add_line_avx2(&mut deferred, t, &buf[p..], len, value) } {
                break;
            }
            p = end + 1;
        }
        let refused = deferred.settle(t);
        (
            p,
            refused.map(|at| at.as_ptr() as usize - buf.as_ptr() as usize),
        )
    }

    #[test]
    fn a_refused_deferred_row_stops_the_next_add_and_is_reported() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        // Names of under 32 bytes and of more wait in queues of their own.
        for (good, bad) in [
            (
                "a station past sixteen bytes;1.5\n",
                &b"a name not UTF-8 \xff\xfe;2.0\n"[..],
            ),
            (
                "a station past thirty-two bytes, by far;1.5\n",
                &b"a name not UTF-8 \xff\xfe, and past 32 bytes;2.0\n"[..],
            ),
        ] {
            refuse_and_report(&good.repeat(3), bad);
        }
    }

    #[test]
    fn the_first_refused_row_of_either_queue_is_reported() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let head = &b"a name not UTF-8 \xff\xfe;2.0\n"[..];
        let long = &b"a name not UTF-8 \xff\xfe, and past 32 bytes;2.0\n"[..];
        let next = "a station past thirty-two bytes, by far;1.5\n";
        for (first, second) in [(head, long), (long, head)] {
            // Each queue holds one refused row; the second queue's is
            // found when the scan settles, after the first's.
            let text = [first, second, next.as_bytes(), next.as_bytes()].concat();
            let mut t = Long::default();
            // SAFETY: AVX2 was detected.
            let (stop, refused) = unsafe { add_lines_avx2(&mut t, &text) };
            assert_eq!(refused, Some(0), "{:?}", String::from_utf8_lossy(first));
            assert!(stop <= first.len() + second.len() + next.len());
        }
    }

    fn refuse_and_report(good: &str, bad: &[u8]) {
        let text = [good.as_bytes(), bad, good.as_bytes(), bad].concat();
        for (text, stop, refused, rows) in [
            // The row after the bad one is not taken: the caller stops at it.
            (&text[..], good.len() + bad.len(), Some(good.len()), 3),
            // A bad row deferred last is refused when settled.
            (
                &text[..good.len() + bad.len()],
                good.len() + bad.len(),
                Some(good.len()),
                3,
            ),
            (good.as_bytes(), good.len(), None, 3),
        ] {
            let mut t = Long::default();
            // SAFETY: AVX2 was detected.
            assert_eq!(unsafe { add_lines_avx2(&mut t, text) }, (stop, refused));
            // Every good row before counts.
            let sorted = t.into_sorted();
            assert_eq!(sorted.len(), 1);
            assert_eq!(
                (sorted[0].stats.count, sorted[0].stats.sum),
                (rows, 15 * rows as i128)
            );
        }
    }

    #[test]
    fn vectors_hash_and_compare_as_words_do() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        // Each name in a buffer followed by its `;` and junk, as a line's
        // value and the next lines follow it in the input.
        let mut t = Long::default();
        let names = names();
        for (round, name) in names.iter().chain(&names).enumerate() {
            let mut line = [name.clone(), b";-12.3\nnext;1.0\n".repeat(9)].concat();
            line.resize(KEY_SPAN.max(line.len()), b'!');
            let words = Key::new(name);
            // SAFETY: the buffer holds `KEY_SPAN` bytes, the first `;` at
            // `name.len()`, and AVX2 was detected.
            let blocks = unsafe { avx2::Blocks::load(line.as_ptr(), name.len()) };
            assert_eq!(blocks.key(), words, "{name:?}");
            assert_eq!(blocks.hash(), words.hash(), "{name:?}");
            if name.len() < 32 {
                // SAFETY: as above, and `name.len() < 32`.
                let head = unsafe { avx2::Head::load(line.as_ptr(), name.len()) };
                assert_eq!(head.key(), words, "{name:?}");
                assert_eq!(head.hash(), words.hash(), "{name:?}");
            }
            // Fed by both paths in turn, each name takes one bucket.
            let value = round as i16;
            let added = if round % 2 == 0 {
                t.add(name, value).is_some()
            } else {
                // SAFETY: as above.
                unsafe { add_avx2(&mut t, &line, name.len(), value) }
            };
            assert_eq!(added, std::str::from_utf8(name).is_ok());
        }
        let sorted = t.into_sorted();
        let valid = names.iter().filter(|n| std::str::from_utf8(n).is_ok());
        let mut want: Vec<&Vec<u8>> = valid.collect();
        want.sort();
        want.dedup();
        assert!(sorted
            .iter()
            .map(|e| &e.name[..])
            .eq(want.iter().map(|n| &n[..])));
        assert!(sorted.iter().all(|e| e.stats.count == 2));
    }
}

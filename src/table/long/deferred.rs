//! The AVX2 path's rows added a row late: a long row's name is cut and
//! hashed and its slot fetched, and the row is added when the next long
//! row comes, its slot at hand by then ([`Long::add_deferred_avx2`]); or
//! at once, where the slot is at hand already ([`Long::tally_head_home`]).

use super::{avx2, Long};
use crate::bits::prefetch;

/// A row added a row late ([`Long::add_deferred_avx2`]): where its line
/// starts (an address), its name's length, hash and value.
#[derive(Clone, Copy)]
struct Row {
    at: usize,
    len: usize,
    hash: u64,
    value: i16,
}

/// The rows kept back, one for each way a key is cut, and the first line
/// whose name the table refused since the rows were last settled.
#[derive(Clone, Default)]
pub(super) struct Queue {
    /// The row [`Long::add_deferred_avx2`] keeps back until the next.
    blocks: Option<Row>,
    /// The row [`Long::add_head_avx2`] keeps back until the next.
    head: Option<Row>,
    /// The first line start of a deferred row whose name was refused.
    refused: Option<usize>,
}

impl Queue {
    /// Whether no row is kept back.
    pub(super) fn is_empty(&self) -> bool {
        self.blocks.is_none() && self.head.is_none()
    }
}

impl Long {
    /// Adds the row of the name of `len` bytes at `p` a row late: cuts and
    /// hashes the name as four AVX2 vectors read from `p` and starts
    /// fetching its slot, then adds the row deferred before it (whose slot
    /// has had the time to come) and keeps this one in its place. If the
    /// table refused the row before, remembers its line for
    /// [`Long::settle_avx2`] and returns `false` without taking this row:
    /// the caller stops there. (Returning a verdict, rather than none,
    /// also keeps the scanner's loop in its registers, which takes
    /// instructions off every short row.)
    ///
    /// Why a row late: a long row's slot is 128 bytes at a hashed place,
    /// and its address waits for the name to be found, cut and hashed;
    /// added at once, the row held the CPU while its slot came
    /// (docs/PERFORMANCE.md, *The tables*).
    ///
    /// A call of its own: inlined into the scanner's loop (with the line's
    /// parsing out of line instead), the 10K set was slower.
    ///
    /// # Safety
    /// `p` must be valid for reads of [`KEY_SPAN`](super::KEY_SPAN) bytes
    /// until the next call of [`Long::settle_avx2`], its first `;` at
    /// `p + len` with `len <= MAX_NAME_LEN`, and the CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn add_deferred_avx2(
        &mut self,
        p: *const u8,
        len: usize,
        value: i16,
    ) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.defer::<avx2::Blocks>(p, len, value) }
    }

    /// [`Long::add_deferred_avx2`] for a name of `len < 32` bytes, whose
    /// `;` is in the first 32 bytes: the name is cut, hashed and compared
    /// as one AVX2 vector ([`avx2::Head`]), and its rows are deferred
    /// among themselves.
    ///
    /// # Safety
    /// As for [`Long::add_deferred_avx2`], with `len < 32`.
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn add_head_avx2(&mut self, p: *const u8, len: usize, value: i16) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.defer::<avx2::Head>(p, len, value) }
    }

    /// [`Long::add_head_avx2`]'s row counted at once, not a row late, if
    /// its name's home slot holds it; `false`, adding nothing, if not (the
    /// name is further on, new, or the table flooded), for the caller to
    /// add it as usual. For a loop whose long names are few, their slots
    /// at hand in L1: there the row-late add and its call cost a
    /// 16–31-byte row more than its lookup (docs/PERFORMANCE.md, *Registers
    /// across calls*).
    ///
    /// # Safety
    /// `p` valid for reads of 32 bytes, its first `;` at `p + len` with
    /// `len < 32`, and the CPU has AVX2.
    #[inline(always)]
    pub(crate) unsafe fn tally_head_home(&mut self, p: *const u8, len: usize, value: i16) -> bool {
        // SAFETY: forwarded from the caller.
        let key = unsafe { <avx2::Head as avx2::Cut>::load(p, len) };
        self.add_probe(&key, avx2::Cut::hash(&key), value, |_, _, _, _| false)
    }

    /// The body of [`Long::add_deferred_avx2`] and [`Long::add_head_avx2`],
    /// whose keys are cut as `C`, each with its own deferred row.
    ///
    /// # Safety
    /// As for [`Long::add_deferred_avx2`], and `C::load`'s.
    #[inline(always)]
    unsafe fn defer<C: avx2::Cut>(&mut self, p: *const u8, len: usize, value: i16) -> bool {
        // SAFETY: forwarded from the caller.
        let hash = unsafe { C::load(p, len) }.hash();
        self.prefetch(hash);
        if let Some(before) = self.queue::<C>().take() {
            // SAFETY: `before` was deferred here, whose caller keeps its
            // bytes valid until `settle_avx2`, not yet called.
            unsafe { self.add_deferred_row::<C>(before) };
        }
        if self.deferred.refused.is_some() {
            return false;
        }
        *self.queue::<C>() = Some(Row {
            at: p as usize,
            len,
            hash,
            value,
        });
        true
    }

    /// Where rows whose keys are cut as `C` wait.
    #[inline(always)]
    fn queue<C: avx2::Cut>(&mut self) -> &mut Option<Row> {
        if C::HEAD {
            &mut self.deferred.head
        } else {
            &mut self.deferred.blocks
        }
    }

    /// Adds the rows deferred last, if any (one in each queue), and returns
    /// where the first line whose name the table refused since the last
    /// call starts, if any (only in faulty input).
    ///
    /// # Safety
    /// The deferred row's bytes must still be valid (see
    /// [`Long::add_deferred_avx2`]), and the CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn settle_avx2(&mut self) -> Option<*const u8> {
        if let Some(row) = self.deferred.blocks.take() {
            // SAFETY: forwarded from the caller.
            unsafe { self.add_deferred_row::<avx2::Blocks>(row) };
        }
        if let Some(row) = self.deferred.head.take() {
            // SAFETY: forwarded from the caller.
            unsafe { self.add_deferred_row::<avx2::Head>(row) };
        }
        self.deferred.refused.take().map(|at| at as *const u8)
    }

    /// Adds a deferred row, remembering its line if the name is refused.
    ///
    /// # Safety
    /// The row's bytes must still be valid, and the CPU must have AVX2.
    #[inline(always)]
    unsafe fn add_deferred_row<C: avx2::Cut>(&mut self, row: Row) {
        // SAFETY: forwarded from the caller; `defer` checked the rest for
        // this row.
        let key = unsafe { C::load(row.at as *const u8, row.len) };
        let past_home = |t: &mut Long, key: &C, home, value| {
            // SAFETY: the row's name is its line's first `len` bytes, still
            // valid (see above); a `C` exists only on a CPU with AVX2
            // (`Cut::load`).
            unsafe {
                let name = std::slice::from_raw_parts(row.at as *const u8, row.len);
                t.add_past_home_avx2(key, name, home, value)
            }
        };
        if !self.add_probe(&key, row.hash, row.value, past_home) {
            // The first in the input is the one reported: the two queues'
            // refusals may come in either order.
            let refused = &mut self.deferred.refused;
            *refused = Some(refused.map_or(row.at, |at| at.min(row.at)));
        }
    }

    /// [`Long::add_past_home`] compiled for AVX2, out of line. Marked cold
    /// too: `inline(never)` alone, the compiler inlined it all the same.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    #[cold]
    #[inline(never)]
    unsafe fn add_past_home_avx2<C: avx2::Cut>(
        &mut self,
        key: &C,
        name: &[u8],
        home: usize,
        value: i16,
    ) -> bool {
        self.add_past_home(key, name, home, value)
    }

    /// Starts loading the home slot of a name whose hash is `hash`, both
    /// its lines, without waiting for them.
    #[inline(always)]
    fn prefetch(&self, hash: u64) {
        let slot = self
            .slots
            .as_ptr()
            .wrapping_add((hash >> self.shift) as usize);
        prefetch::<true, _>(slot);
        prefetch::<true, _>(slot.cast::<u8>().wrapping_add(64));
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::names;
    use super::super::{Key, Probe, KEY_SPAN};
    use super::avx2::Cut;
    use super::*;

    /// Adds one row with AVX2, as the scanner does (by its head if the
    /// name is under 32 bytes), and settles it at once: `false` if refused.
    ///
    /// # Safety
    /// As for [`Long::add_deferred_avx2`].
    #[target_feature(enable = "avx2")]
    unsafe fn add_avx2(t: &mut Long, p: *const u8, len: usize, value: i16) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe {
            add_line_avx2(t, p, len, value);
            t.settle_avx2().is_none()
        }
    }

    /// Adds one row with AVX2 a row late, by its head if the name is under
    /// 32 bytes, as the scanner does.
    ///
    /// # Safety
    /// As for [`Long::add_deferred_avx2`].
    #[target_feature(enable = "avx2")]
    unsafe fn add_line_avx2(t: &mut Long, p: *const u8, len: usize, value: i16) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe {
            if len < 32 {
                t.add_head_avx2(p, len, value)
            } else {
                t.add_deferred_avx2(p, len, value)
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
        let mut p = 0;
        while p < text.len() {
            let len = buf[p..].iter().position(|&c| c == b';').unwrap();
            let end = p + buf[p..].iter().position(|&c| c == b'\n').unwrap();
            let value = std::str::from_utf8(&buf[p + len + 1..end]).unwrap();
            let value = (value.parse::<f64>().unwrap() * 10.0).round() as i16;
            // SAFETY: `KEY_SPAN` zeros follow the text; the first `;` at
            // `p + len`; AVX2 as the caller guarantees.
            if !unsafe { add_line_avx2(t, buf.as_ptr().add(p), len, value) } {
                break;
            }
            p = end + 1;
        }
        // SAFETY: `buf` is still alive.
        let refused = unsafe { t.settle_avx2() };
        (p, refused.map(|at| at as usize - buf.as_ptr() as usize))
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
            // Nothing is left to settle, and every good row before counts.
            // SAFETY: as above; nothing deferred.
            assert!(unsafe { t.settle_avx2() }.is_none());
            let sorted = t.into_sorted();
            assert_eq!(sorted.len(), 1);
            assert_eq!(
                (sorted[0].stats.count, sorted[0].stats.sum),
                (rows, 15 * rows as i64)
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
            // Fed by both paths in turn, each name takes one slot.
            let value = round as i16;
            let added = if round % 2 == 0 {
                t.add(name, value)
            } else {
                // SAFETY: as above.
                unsafe { add_avx2(&mut t, line.as_ptr(), name.len(), value) }
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

//! Dense counts per value for a thread's busiest numbered names
//! ([`Rows`]): a row of 16-bit counts of every text value for each, so
//! that counting a logged row is an index and an increment, where a
//! [`Tally`](crate::engine::keeping::Tally)'s counts took a dozen branches
//! and loads more.

use crate::bits::prefetch;
use crate::detail::Counts;

/// The values a row counts: from `-MID` on, every text value (-99.9 to
/// 99.9, in tenths) and some room, a power of two.
const SPAN: usize = 2048;

/// `value + MID` is the bin of `value` in its row.
const MID: i64 = 1024;

/// Rows a thread gives at most, 64 MiB of them: more than the 10K set's
/// names. Their room is reserved whole with the first, so that rows never
/// move; the system backs only the pages of rows given.
const ROWS: usize = 1 << 14;

/// The bin of `value` in the row of name `id`, given each name's middle
/// bin, if it has a row and the value lies in its span.
#[inline(always)]
fn bin(of: &[u32], id: u32, value: i64) -> Option<usize> {
    let middle = *of.get(id as usize)? as usize;
    let at = value.wrapping_add(MID) as usize;
    (middle != 0 && at < SPAN).then(|| middle - MID as usize + at)
}

/// Where a logged row that no row counts goes: a name's tally, by its
/// number, or the keeping loop's stations.
pub(super) trait Elsewhere {
    /// Adds the row of `value` logged as `id`, given the rows, so that a
    /// name may be given one ([`Rows::give`]).
    fn add(&mut self, rows: &mut Rows, id: u32, value: i64);

    /// Starts loading what [`Elsewhere::add`] of the row would touch.
    fn prefetch(&self, id: u32, value: i64);
}

/// The rows of a thread's numbered names, each once its first values are
/// in its tally.
#[derive(Default)]
pub(super) struct Rows {
    /// The bins, the value `v` of the row whose middle is at `m` at
    /// `m + v`.
    bins: Vec<u16>,
    /// The middle bin of each numbered name's row, by number; 0 for none
    /// (no middle is: a row's is at least `MID`).
    of: Vec<u32>,
    /// Where a count wrapped past 2^16: the name's number and the value,
    /// once each time.
    wraps: Vec<(u32, i32)>,
}

impl Rows {
    /// Notes a newly numbered name, with no row.
    pub(super) fn name(&mut self) {
        self.of.push(0);
    }

    /// Gives name `id` a row, if it has none and rows are left; whether it
    /// has one.
    pub(super) fn give(&mut self, id: u32) -> bool {
        let has = &mut self.of[id as usize];
        let used = self.bins.len() / SPAN;
        if *has == 0 && used < ROWS {
            if used == 0 {
                self.bins.reserve_exact(ROWS * SPAN);
            }
            *has = (used * SPAN) as u32 + MID as u32;
            self.bins.resize(self.bins.len() + SPAN, 0);
        }
        *has != 0
    }

    /// Counts `value` in the row of `id`: `false`, counting nothing, if it
    /// has none or the value is past its span.
    pub(super) fn count(&mut self, id: u32, value: i64) -> bool {
        let Some(count) = bin(&self.of, id, value).and_then(|at| self.bins.get_mut(at)) else {
            return false;
        };
        tick(count, &mut self.wraps, id, value);
        true
    }

    /// Counts each row of `log` in its name's row, handing the others to
    /// `elsewhere`, and prefetching each row's bin [`AHEAD`] rows before.
    pub(super) fn settle(&mut self, log: &[(u32, i32)], elsewhere: &mut impl Elsewhere) {
        /// How many rows ahead of its count a row's bin is prefetched.
        const AHEAD: usize = 16;
        let mut k = 0;
        while k < log.len() {
            let Rows { bins, of, wraps } = &mut *self;
            while let Some(&(id, value)) = log.get(k) {
                if let Some(&(id, value)) = log.get(k + AHEAD) {
                    match bin(of, id, value.into()) {
                        Some(at) => prefetch::<true, _>(bins.as_ptr().wrapping_add(at)),
                        None => elsewhere.prefetch(id, value.into()),
                    }
                }
                let Some(count) = bin(of, id, value.into()).and_then(|at| bins.get_mut(at)) else {
                    break;
                };
                tick(count, wraps, id, value.into());
                k += 1;
            }
            if let Some(&(id, value)) = log.get(k) {
                elsewhere.add(self, id, value.into());
                k += 1;
            }
        }
    }

    /// Each row's counts, with the name's number, forgetting every name:
    /// the next numbered is number 0 again.
    pub(super) fn take(&mut self) -> Vec<(u32, Counts)> {
        let bins = std::mem::take(&mut self.bins);
        self.wraps.sort_unstable();
        let mut wraps = self.wraps.drain(..).peekable();
        let mut taken = Vec::new();
        for (id, &middle) in self.of.iter().enumerate() {
            if middle == 0 {
                continue;
            }
            let start = middle as usize - MID as usize;
            let mut counts = Counts::window(-MID, &bins[start..start + SPAN]);
            while let Some((_, v)) = wraps.next_if(|&(w, _)| w as usize == id) {
                counts.add(v.into(), 1 << 16);
            }
            taken.push((id as u32, counts));
        }
        self.of.clear();
        taken
    }
}

/// Adds one to the count of `value` in the row of name `id`, noting in
/// `wraps` a count that wraps past 2^16.
#[inline(always)]
fn tick(count: &mut u16, wraps: &mut Vec<(u32, i32)>, id: u32, value: i64) {
    *count = count.wrapping_add(1);
    if *count == 0 {
        // A text value fits 16 bits, let alone 32.
        wraps.push((id, value as i32));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Collects what `settle` hands elsewhere.
    #[derive(Default)]
    struct Left(Vec<(u32, i64)>);

    impl Elsewhere for Left {
        fn add(&mut self, _: &mut Rows, id: u32, value: i64) {
            self.0.push((id, value));
        }

        fn prefetch(&self, _: u32, _: i64) {}
    }

    #[test]
    fn rows_count_every_text_value_past_16_bits_and_leave_the_rest_elsewhere() {
        let mut rows = Rows::default();
        for _ in 0..3 {
            rows.name();
        }
        assert!(rows.give(0) && rows.give(2) && rows.give(2));
        let mut log = vec![(0, 999), (0, -999), (2, 5), (1, 5), (0, 2000), (0, -1025)];
        log.extend(std::iter::repeat_n((2, -7), (1 << 16) + 3));
        let mut left = Left::default();
        rows.settle(&log, &mut left);
        assert_eq!(left.0, [(1, 5), (0, 2000), (0, -1025)]);
        assert!(!rows.count(1, 5) && !rows.count(0, 1024) && rows.count(0, -1024));
        let taken = rows.take();
        let want = |pairs: &[(i64, u64)]| {
            let mut counts = Counts::default();
            pairs.iter().for_each(|&(v, n)| counts.add(v, n));
            counts
        };
        assert_eq!(taken.len(), 2);
        assert_eq!(taken[0], (0, want(&[(-1024, 1), (-999, 1), (999, 1)])));
        assert_eq!(taken[1], (2, want(&[(-7, (1 << 16) + 3), (5, 1)])));
        // The names are forgotten with their rows.
        rows.name();
        assert!(rows.give(0));
        assert_eq!(rows.take().len(), 1);
    }
}

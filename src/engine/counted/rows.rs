//! Dense counts per value for a thread's first numbered names ([`Rows`]):
//! a row of 16-bit counts of every text value for each, so that counting a
//! logged row is an index and an increment, where a
//! [`Tally`](crate::engine::keeping::Tally) took a dozen branches and
//! loads more.

use crate::bits::prefetch;
use crate::detail::{Counts, RAW};

/// The values a row counts: from `-MID` on, every text value (-99.9 to
/// 99.9, in tenths) and some room, a power of two.
const SPAN: usize = 2048;

/// `value + MID` is the bin of `value` in its row.
const MID: i64 = 1024;

/// Names with a row, numbers `0..ROWS`: more than the 10K set's names.
/// Their 64 MiB are allocated zeroed at once, so that the system backs
/// only the pages of rows that count something.
pub(super) const ROWS: usize = 1 << 14;

/// Where a logged row that no row counts goes: a name numbered from
/// [`ROWS`] on.
pub(super) trait Elsewhere {
    /// Adds the row of `value` of the name numbered `id`.
    fn add(&mut self, id: u32, value: i64);

    /// Starts loading what [`Elsewhere::add`] of the row would touch.
    fn prefetch(&self, id: u32, value: i64);
}

/// The rows of a thread's names numbered below [`ROWS`].
#[derive(Default)]
pub(super) struct Rows {
    /// The bins: the value `v` of name `id` at `id * SPAN + MID + v`;
    /// empty until the first row is counted.
    bins: Vec<u16>,
    /// The bins whose count wrapped past 2^16, once each time.
    wraps: Vec<u32>,
}

/// How many rows ahead of its count a logged row's bin is prefetched.
const AHEAD: usize = 16;

/// The names a log can hold: [`place`] fits 32 bits below them.
pub(super) const PLACED_NAMES: usize = 1 << 21;

/// What the log keeps of the row of text value `value` (-999 to 999
/// tenths) of the name numbered `id` (below [`PLACED_NAMES`]): its bin's
/// place, where the name has a row, so that counting it is one index.
/// Each name's places are a span of their own, so [`unplace`] gives back
/// the others' numbers and values.
#[inline(always)]
pub(super) fn place(id: u32, value: i64) -> u32 {
    debug_assert!((id as usize) < PLACED_NAMES && value.abs() < MID);
    (id << SPAN.trailing_zeros()) + (MID + value) as u32
}

/// The name's number and the value [`place`] made `at` of.
fn unplace(at: u32) -> (u32, i64) {
    let bin = i64::from(at % SPAN as u32);
    (at >> SPAN.trailing_zeros(), bin - MID)
}

impl Rows {
    /// Counts the rows at the places `log` holds ([`place`]) in their
    /// rows, or hands them to `elsewhere`, prefetching what each row
    /// touches [`AHEAD`] rows before.
    pub(super) fn settle(&mut self, log: &[u32], elsewhere: &mut impl Elsewhere) {
        /// The places of the names with a row.
        const COUNTED: u32 = (ROWS * SPAN) as u32;
        if self.bins.is_empty() && !log.is_empty() {
            self.bins = vec![0; ROWS * SPAN];
        }
        let Rows { bins, wraps } = self;
        for (k, &at) in log.iter().enumerate() {
            match log.get(k + AHEAD) {
                Some(&next) if next < COUNTED => {
                    prefetch::<true, _>(bins.as_ptr().wrapping_add(next as usize));
                }
                Some(&next) => {
                    let (id, value) = unplace(next);
                    elsewhere.prefetch(id, value);
                }
                None => {}
            }
            let Some(count) = bins.get_mut(at as usize) else {
                let (id, value) = unplace(at);
                elsewhere.add(id, value);
                continue;
            };
            *count = count.wrapping_add(1);
            if *count == 0 {
                wraps.push(at);
            }
        }
    }

    /// The counts of names `0..names` (at most [`ROWS`]), leaving none:
    /// their values as they came where they are few, as a
    /// [`Tally`](crate::engine::keeping::Tally) keeps them.
    pub(super) fn take(&mut self, names: usize) -> Vec<Counts> {
        let bins = std::mem::take(&mut self.bins);
        self.wraps.sort_unstable();
        let mut wraps = self.wraps.drain(..).peekable();
        let names = names.min(ROWS);
        let mut taken = Vec::with_capacity(names);
        for id in 0..names {
            let row = bins.get(id * SPAN..(id + 1) * SPAN).unwrap_or_default();
            let mut counts = match row.iter().map(|&n| usize::from(n)).sum::<usize>() {
                n if n <= RAW => {
                    let mut counts = Counts::default();
                    (-MID..)
                        .zip(row)
                        .filter(|&(_, &n)| n > 0)
                        .for_each(|(v, &n)| counts.add(v, n.into()));
                    counts
                }
                _ => Counts::window(-MID, row),
            };
            while let Some(at) = wraps.next_if(|&at| at as usize / SPAN == id) {
                counts.add((at as usize % SPAN) as i64 - MID, 1 << 16);
            }
            taken.push(counts);
        }
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Collects what `settle` hands elsewhere.
    #[derive(Default)]
    struct Left(Vec<(u32, i64)>);

    impl Elsewhere for Left {
        fn add(&mut self, id: u32, value: i64) {
            self.0.push((id, value));
        }

        fn prefetch(&self, _: u32, _: i64) {}
    }

    /// The counts `pairs` of values and counts make.
    fn counts(pairs: &[(i64, u64)]) -> Counts {
        let mut counts = Counts::default();
        pairs.iter().for_each(|&(v, n)| counts.add(v, n));
        counts
    }

    /// Settles `rows` as a log of (number, value) rows would be written.
    fn settle(rows: &mut Rows, logged: &[(u32, i64)], left: &mut Left) {
        let log: Vec<u32> = logged.iter().map(|&(id, v)| place(id, v)).collect();
        rows.settle(&log, left);
    }

    #[test]
    fn rows_count_every_text_value_past_16_bits_and_leave_the_rest_elsewhere() {
        let mut rows = Rows::default();
        let last = ROWS as u32 - 1;
        let far = PLACED_NAMES as u32 - 1;
        let mut log = vec![(0, 999), (0, -999), (2, 5), (last, 5)];
        log.extend([(ROWS as u32, 999), (far, -999), (far, 0)]);
        log.extend(std::iter::repeat_n((2, -7), (1 << 16) + 3));
        log.extend((0..=RAW as i64).map(|v| (3, v)));
        let mut left = Left::default();
        settle(&mut rows, &log, &mut left);
        assert_eq!(left.0, [(ROWS as u32, 999), (far, -999), (far, 0)]);
        let taken = rows.take(4);
        let many: Vec<(i64, u64)> = (0..=RAW as i64).map(|v| (v, 1)).collect();
        let want = [
            counts(&[(-999, 1), (999, 1)]),
            Counts::default(),
            counts(&[(-7, (1 << 16) + 3), (5, 1)]),
            counts(&many),
        ];
        assert_eq!(taken, want);
        // Taken, the rows count anew.
        settle(&mut rows, &[(1, 0)], &mut left);
        assert_eq!(
            rows.take(ROWS + 5)[..2],
            [Counts::default(), counts(&[(0, 1)])]
        );
    }
}

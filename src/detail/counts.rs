//! How many times each distinct value of a key occurs ([`Counts`]), for
//! the median and percentiles: in one of four kinds of form, chosen as a
//! key's values arrive. The values themselves, as they came (a key seen up to
//! [`RAW`] times, as most of a million keys are), in 16 bits while they
//! fit (the challenge's tenths always do); dense 16-bit counts over a
//! window of values (the challenge's tenths: an add is an index and an
//! increment), widened to 32 bits when a count passes 16; or a hash map
//! (values spread thinly over a wide domain, or a count past 32 bits).
//! Every form takes at most 24 bytes beside its tag, boxing what would
//! take more, so that a key's counts take 32.
//! A text run's keys end with their first values in a thread's pool
//! ([`super::pool`]), which their counts share until one is changed.

use std::collections::HashMap;
use std::sync::Arc;

use super::pool::{Chain, Pool};

/// Values kept as they came before a key's counts take another form: a
/// key seen up to this many times, as most of a million keys are, keeps 2
/// bytes a row (4 past 16 bits), where pairs of a value and its count took
/// 16 for each distinct value and a map more.
pub const RAW: usize = 128;

/// The widest window of dense counts, in values: 8 KiB of counts, the
/// challenge's 1,999 tenths twice over.
const WINDOW: i64 = 4096;

/// How many times each distinct value of a key occurs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts(Form);

// A key's counts take 32 bytes (see the module's documentation).
const _: () = assert!(std::mem::size_of::<Counts>() <= 32);

impl Counts {
    /// The counts of the values `chain` holds in `pool`.
    pub(crate) fn pooled(pool: Arc<Pool>, chain: Chain) -> Counts {
        Counts(Form::Pooled { pool, chain })
    }

    /// The counts `bins` hold, `bins[i]` of the value `lo + i`: a window
    /// of those from the first counted to the last. At most [`WINDOW`]
    /// bins, the widest window.
    pub(crate) fn window(lo: i64, bins: &[u16]) -> Counts {
        debug_assert!(bins.len() as i64 <= WINDOW);
        let Some(first) = bins.iter().position(|&n| n > 0) else {
            return Counts::default();
        };
        let last = bins.iter().rposition(|&n| n > 0).unwrap_or(first);
        Counts(Form::Window {
            lo: lo + first as i64,
            bins: bins[first..=last].into(),
        })
    }

    /// Adds `n` occurrences of `value`.
    #[inline]
    pub fn add(&mut self, value: i64, n: u64) {
        self.0.add(value, n)
    }

    /// Where [`Counts::add`] would count `value` if the counts are a
    /// window: its bin's address, for a prefetch (it need not lie in the
    /// window, as a prefetch never faults); `None` in other forms.
    #[inline(always)]
    pub fn bin(&self, value: i64) -> Option<*const u8> {
        let at = |lo: i64| value.wrapping_sub(lo) as usize;
        match &self.0 {
            Form::Window { lo, bins } => Some(bins.as_ptr().wrapping_add(at(*lo)).cast()),
            Form::Wide { lo, bins } => Some(bins.as_ptr().wrapping_add(at(*lo)).cast()),
            _ => None,
        }
    }

    /// Folds another key's counts in.
    pub fn merge(&mut self, other: &Counts) {
        self.0.merge(&other.0)
    }

    /// The distinct values with their counts, in increasing order.
    pub fn sorted(&self) -> Vec<(i64, u64)> {
        self.0.sorted()
    }

    /// The `rank`-th smallest value counted (from 1), or `None` past the
    /// last: a quantile, found without sorting the values of the forms
    /// that hold them in order or few ([`Counts::sorted`] sorted them for
    /// each quantile of each key).
    pub fn at_rank(&self, rank: u128) -> Option<i64> {
        if rank == 0 {
            return None;
        }
        match &self.0 {
            Form::Raw16(values) => raw_at_rank(values, rank),
            Form::Raw32(values) => raw_at_rank(values, rank),
            Form::Pooled { pool, chain } => raw_at_rank(&chain_values(pool, chain), rank),
            Form::Window { lo, bins } => bin_at_rank(*lo, bins, rank),
            Form::Wide { lo, bins } => bin_at_rank(*lo, bins, rank),
            Form::Map(_) => {
                let mut seen = 0u128;
                let (value, _) = self.sorted().into_iter().find(|&(_, c)| {
                    seen += u128::from(c);
                    seen >= rank
                })?;
                Some(value)
            }
        }
    }

    /// Calls `f` with each value and its count, in no order; a value may
    /// come more than once.
    pub fn visit(&self, f: impl FnMut(i64, u64)) {
        self.0.visit(f)
    }
}

/// Where `value` is in a window from `lo`: past any window (`usize::MAX`)
/// where it is below `lo` or beyond what an index holds.
#[inline(always)]
fn window_index(lo: i64, value: i64) -> usize {
    usize::try_from(value.wrapping_sub(lo) as u64).unwrap_or(usize::MAX)
}

/// The value of the `rank`-th count (from 1) of a window's `bins` from
/// `lo`.
fn bin_at_rank<T: Copy + Into<u64>>(lo: i64, bins: &[T], rank: u128) -> Option<i64> {
    let mut left = u64::try_from(rank).ok()?;
    let i = bins.iter().position(|&n| match n.into() {
        n if n >= left => true,
        n => {
            left -= n;
            false
        }
    })?;
    Some(lo + i as i64)
}

/// The values `chain` holds in `pool`, each within 11 bits.
fn chain_values(pool: &Pool, chain: &Chain) -> Vec<i16> {
    let mut values = Vec::with_capacity(chain.len() as usize);
    chain.visit(pool, |v| values.push(v as i16));
    values
}

/// The `rank`-th smallest (from 1) of `values`, selected from a copy.
fn raw_at_rank<T: Copy + Ord + Into<i64>>(values: &[T], rank: u128) -> Option<i64> {
    let k = usize::try_from(rank - 1).ok()?;
    let mut values = values.to_vec();
    (k < values.len()).then(|| (*values.select_nth_unstable(k).1).into())
}

/// Pushes `n` occurrences of `value` onto a key's raw values if it fits
/// `T` and the [`RAW`] values' room, growing them by half rather than
/// twice over: a million keys' values are most of a run's memory.
fn push_raw<T: Copy + TryFrom<i64>>(values: &mut Vec<T>, value: i64, n: u64) -> bool {
    let room = RAW - values.len();
    let Ok(v) = T::try_from(value) else {
        return false;
    };
    if n > room as u64 {
        return false;
    }
    let n = n as usize;
    if values.capacity() - values.len() < n {
        values.reserve_exact((values.len() / 2 + 4).max(n).min(room));
    }
    values.extend(std::iter::repeat_n(v, n));
    true
}

/// The distinct values of `values` with their counts, in increasing order.
fn raw_sorted<T: Copy + Ord + Into<i64>>(values: &[T]) -> Vec<(i64, u64)> {
    let mut values = values.to_vec();
    values.sort_unstable();
    let mut pairs: Vec<(i64, u64)> = Vec::new();
    for v in values.into_iter().map(Into::into) {
        match pairs.last_mut() {
            Some(last) if last.0 == v => last.1 += 1,
            _ => pairs.push((v, 1)),
        }
    }
    pairs
}

/// The form counts take (see the module's documentation).
#[derive(Clone, Debug)]
enum Form {
    /// Up to [`RAW`] values, each within 16 bits, as they came, repeats
    /// and all.
    Raw16(Vec<i16>),
    /// The same, once a value needs 32 bits.
    Raw32(Vec<i32>),
    /// Dense counts of the values from `lo` on, each below 2^16 (half the
    /// memory of 32 bits, and so fewer of a busy table's rows miss the
    /// cache). A boxed slice, not a vector: it never grows in place, and a
    /// key's counts take less room.
    Window { lo: i64, bins: Box<[u16]> },
    /// The same, once a count passes 16 bits.
    Wide { lo: i64, bins: Box<[u32]> },
    /// Counts of values spread too thinly for a window, or of more than
    /// 2^32 of one value. Boxed: a map's own 32 bytes would make every
    /// key's counts larger.
    #[allow(clippy::box_collection)]
    Map(Box<HashMap<i64, u64, foldhash::fast::FixedState>>),
    /// Values as they came, in a pool that other keys' counts share:
    /// read there, and copied out to another form when added to.
    Pooled { pool: Arc<Pool>, chain: Chain },
}

impl Default for Form {
    fn default() -> Form {
        Form::Raw16(Vec::new())
    }
}

impl PartialEq for Form {
    /// Counts are equal when they count the same values, whatever form
    /// each has.
    fn eq(&self, other: &Form) -> bool {
        self.sorted() == other.sorted()
    }
}

impl Eq for Form {}

impl Form {
    /// Adds `n` occurrences of `value`: inline where it lands in a
    /// window, as nearly every row of a busy key does.
    #[inline]
    fn add(&mut self, value: i64, n: u64) {
        if let Form::Window { lo, bins } = self {
            if let Some(bin) = bins.get_mut(window_index(*lo, value)) {
                if let Some(sum) = u16::try_from(n).ok().and_then(|n| bin.checked_add(n)) {
                    *bin = sum;
                    return;
                }
            }
        }
        self.add_elsewhere(value, n);
    }

    /// [`Form::add`] past a window: to a few pairs or a map, to a window
    /// widened, or once the counts have taken a new form.
    #[inline(never)]
    fn add_elsewhere(&mut self, value: i64, n: u64) {
        match self {
            Form::Window { lo, bins } => {
                if window_index(*lo, value) >= bins.len() {
                    return self.reshape_and_add(value, n);
                }
                let bins = bins.iter().map(|&b| b.into()).collect();
                *self = Form::Wide { lo: *lo, bins };
                return self.add_elsewhere(value, n);
            }
            Form::Wide { lo, bins } => {
                let Some(bin) = bins.get_mut(window_index(*lo, value)) else {
                    return self.reshape_and_add(value, n);
                };
                if let Some(sum) = u32::try_from(n).ok().and_then(|n| bin.checked_add(n)) {
                    *bin = sum;
                    return;
                }
                *self = Form::Map(Box::new(self.sorted().into_iter().collect()));
                return self.add_elsewhere(value, n);
            }
            Form::Pooled { pool, chain } => {
                let mut owned = Form::default();
                chain.visit(pool, |v| owned.add(v, 1));
                *self = owned;
                return self.add(value, n);
            }
            Form::Raw16(values) => {
                if push_raw(values, value, n) {
                    return;
                }
                let mut wide: Vec<i32> = values.iter().map(|&v| v.into()).collect();
                if i16::try_from(value).is_err() && push_raw(&mut wide, value, n) {
                    *self = Form::Raw32(wide);
                    return;
                }
            }
            Form::Raw32(values) => {
                if push_raw(values, value, n) {
                    return;
                }
            }
            Form::Map(map) => {
                *map.entry(value).or_insert(0) += n;
                if map.len().is_power_of_two() {
                    self.reshape();
                }
                return;
            }
        }
        self.reshape_and_add(value, n);
    }

    /// Adds `n` occurrences of `value` once the counts take the form that
    /// suits them with it: out of line, so that [`Form::add`] is not
    /// recursive and inlines where rows are added.
    #[cold]
    #[inline(never)]
    fn reshape_and_add(&mut self, value: i64, n: u64) {
        self.reshape_for(value);
        self.add(value, n);
    }

    /// Moves the counts to the form that suits them once `value` is added:
    /// a window when their span, `value` in it, is narrow enough and
    /// dense enough, else a map.
    #[cold]
    fn reshape_for(&mut self, value: i64) {
        let pairs = self.sorted();
        let lo = pairs.first().map_or(value, |p| p.0).min(value);
        let hi = pairs.last().map_or(value, |p| p.0).max(value);
        let span = hi.saturating_sub(lo).saturating_add(1);
        // Dense enough: the window's 4 bytes a value take no more than the
        // map's 16 a pair take, twice over.
        let dense = span <= 8 * (pairs.len() as i64 + 1);
        let window = matches!(self, Form::Window { .. } | Form::Wide { .. });
        *self = if span <= WINDOW && (dense || window) {
            // Room to grow on both sides, within the widest window.
            let room = (WINDOW - span).min(span / 2);
            let lo = lo.saturating_sub(room / 2);
            let mut window = Form::Window {
                lo,
                bins: vec![0; (span + room) as usize].into(),
            };
            for (v, n) in pairs {
                window.add(v, n);
            }
            window
        } else {
            Form::Map(Box::new(pairs.into_iter().collect()))
        };
    }

    /// A map dense enough in a narrow span, whose counts fit 32 bits,
    /// becomes a window.
    #[cold]
    fn reshape(&mut self) {
        if let Form::Map(map) = self {
            let lo = map.keys().min().copied().unwrap_or(0);
            let hi = map.keys().max().copied().unwrap_or(0);
            let span = hi.saturating_sub(lo).saturating_add(1);
            let narrow = span <= WINDOW && span <= 8 * map.len() as i64;
            // A count past 32 bits stays in the map.
            if narrow && map.values().all(|&n| n <= u64::from(u32::MAX)) {
                self.reshape_for(lo);
            }
        }
    }

    /// Folds another key's counts in.
    fn merge(&mut self, other: &Form) {
        // Room for the other's raw values at once, rather than grown by
        // half again and again past what they need.
        let extra = match other {
            Form::Raw16(v) => v.len(),
            Form::Raw32(v) => v.len(),
            Form::Pooled { chain, .. } => chain.len() as usize,
            _ => 0,
        };
        match self {
            Form::Raw16(v) if v.len() + extra <= RAW => v.reserve_exact(extra),
            Form::Raw32(v) if v.len() + extra <= RAW => v.reserve_exact(extra),
            _ => {}
        }
        other.visit(|v, n| self.add(v, n));
    }

    /// Calls `f` with each value and its count, in no order.
    fn visit(&self, mut f: impl FnMut(i64, u64)) {
        match self {
            Form::Raw16(values) => values.iter().for_each(|&v| f(v.into(), 1)),
            Form::Raw32(values) => values.iter().for_each(|&v| f(v.into(), 1)),
            Form::Pooled { pool, chain } => chain.visit(pool, |v| f(v, 1)),
            Form::Map(map) => map.iter().for_each(|(&v, &n)| f(v, n)),
            Form::Window { lo, bins } => visit_bins(*lo, bins, f),
            Form::Wide { lo, bins } => visit_bins(*lo, bins, f),
        }
    }

    /// The distinct values with their counts, in increasing order.
    fn sorted(&self) -> Vec<(i64, u64)> {
        let mut pairs: Vec<(i64, u64)> = match self {
            Form::Raw16(values) => return raw_sorted(values),
            Form::Raw32(values) => return raw_sorted(values),
            Form::Pooled { pool, chain } => return raw_sorted(&chain_values(pool, chain)),
            Form::Map(map) => map.iter().map(|(&v, &n)| (v, n)).collect(),
            Form::Window { .. } | Form::Wide { .. } => {
                let mut pairs = Vec::new();
                self.visit(|v, n| pairs.push((v, n)));
                return pairs;
            }
        };
        pairs.sort_unstable();
        pairs
    }
}

/// Calls `f` with each value of a window's `bins` from `lo` that is
/// counted, and its count, in increasing order.
fn visit_bins<T: Copy + Into<u64>>(lo: i64, bins: &[T], mut f: impl FnMut(i64, u64)) {
    for (v, &n) in (lo..).zip(bins) {
        let n = n.into();
        if n > 0 {
            f(v, n);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    proptest::proptest! {
        /// Values within 16 bits, 32, 64 or all three, added one by one or many at a
        /// time and merged in two halves: counted as a map counts them.
        #[test]
        fn counts_count_as_a_map_does(
            values in proptest::collection::vec(
                (proptest::prop_oneof![-999i64..=999, -30i64..30, -(1i64 << 20)..(1 << 20), -(1i64 << 50)..(1 << 50)], 1u64..4),
                0..300,
            ),
            split in 0usize..300,
        ) {
            let mut want = BTreeMap::new();
            let (mut one, mut a, mut b) = (Counts::default(), Counts::default(), Counts::default());
            for (i, &(v, n)) in values.iter().enumerate() {
                *want.entry(v).or_insert(0) += n;
                one.add(v, n);
                if i < split { a.add(v, n) } else { b.add(v, n) }
            }
            a.merge(&b);
            let want: Vec<(i64, u64)> = want.into_iter().collect();
            proptest::prop_assert_eq!(one.sorted(), want.clone());
            proptest::prop_assert_eq!(a.sorted(), want);
        }

        /// Every rank's value, in every form, as the values sorted give
        /// it; none at rank 0 or past the last.
        #[test]
        fn a_rank_is_the_sorted_values_element(
            values in proptest::collection::vec(
                (proptest::prop_oneof![-999i64..=999, -30i64..30, -(1i64 << 20)..(1 << 20), -(1i64 << 50)..(1 << 50)], 1u64..4),
                0..300,
            ),
        ) {
            let mut counts = Counts::default();
            let mut sorted = Vec::new();
            for &(v, n) in &values {
                counts.add(v, n);
                sorted.extend(std::iter::repeat_n(v, n as usize));
            }
            sorted.sort_unstable();
            for rank in 0..=sorted.len() + 1 {
                let want = rank.checked_sub(1).and_then(|k| sorted.get(k).copied());
                proptest::prop_assert_eq!(counts.at_rank(rank as u128), want, "rank {}", rank);
            }
        }
    }

    proptest::proptest! {
        /// Counts in a pool count as a map does, rank as the sorted values
        /// do, and merge and take more values once copied out of it.
        #[test]
        fn pooled_counts_count_as_a_map_does(
            values in proptest::collection::vec(-1024i64..1024, 1..300),
            more in proptest::collection::vec(proptest::prop_oneof![-999i64..=999, -(1i64 << 40)..(1 << 40)], 0..200),
        ) {
            let mut pool = Pool::default();
            let mut chain = Chain::default();
            for &v in &values {
                proptest::prop_assert!(chain.push(&mut pool, v));
            }
            let pool = Arc::new(pool);
            let counts = Counts::pooled(pool.clone(), chain);
            let mut sorted = values.clone();
            sorted.sort_unstable();
            for rank in 0..=sorted.len() + 1 {
                let want = rank.checked_sub(1).and_then(|k| sorted.get(k).copied());
                proptest::prop_assert_eq!(counts.at_rank(rank as u128), want);
            }
            let mut want = Counts::default();
            values.iter().for_each(|&v| want.add(v, 1));
            proptest::prop_assert_eq!(&counts, &want);
            let (mut added, mut merged, mut other) = (counts.clone(), Counts::default(), Counts::default());
            merged.merge(&counts);
            for &v in &more {
                added.add(v, 1);
                other.add(v, 1);
                want.add(v, 1);
            }
            merged.merge(&other);
            proptest::prop_assert_eq!(added.sorted(), want.sorted());
            proptest::prop_assert_eq!(merged.sorted(), want.sorted());
            proptest::prop_assert_eq!(Counts::pooled(pool, chain).sorted(), {
                let mut w = Counts::default();
                values.iter().for_each(|&v| w.add(v, 1));
                w.sorted()
            });
        }
    }

    #[test]
    fn a_window_widens_past_16_bits_and_becomes_a_map_past_32() {
        let mut c = Counts::default();
        assert!(matches!(c.0, Form::Raw16(_)));
        for v in 0..200 {
            c.add(v, 1);
        }
        assert!(matches!(c.0, Form::Window { .. }));
        for _ in 0..70_000 {
            c.add(7, 1);
        }
        assert!(matches!(c.0, Form::Wide { .. }));
        assert_eq!(c.at_rank(8), Some(7));
        assert_eq!(c.at_rank(70_008), Some(7));
        assert_eq!(c.at_rank(70_009), Some(8));
        c.add(3, u64::from(u32::MAX));
        assert!(matches!(c.0, Form::Map(_)));
        c.add(3, 5);
        c.add(4, 3 << 32);
        // Dense enough for a window again, but a count past 32 bits keeps
        // the map.
        for v in 200..300 {
            c.add(v, 1);
        }
        assert!(matches!(c.0, Form::Map(_)));
        let sorted = c.sorted();
        assert_eq!(c.at_rank(u64::from(u32::MAX) as u128 + 9), Some(3));
        assert_eq!(sorted[7], (7, 70_001));
        assert_eq!(sorted[3], (3, (1 << 32) + 5));
        assert_eq!(sorted[4], (4, (3 << 32) + 1));
        assert_eq!(
            sorted.iter().map(|p| p.1).sum::<u64>(),
            298 + (4 << 32) + 6 + 70_000
        );
    }
}

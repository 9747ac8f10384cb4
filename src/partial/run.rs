//! A sorted run of distinct stations with their merged totals, the unit
//! the [`Merger`](super::Merger) stacks and merges, and the totals wide
//! enough that the order of merging never decides an overflow.

use compact_str::CompactString;

use super::OverflowError;
use crate::detail::{Detail, Kept};
use crate::stats::{Stats, MAX_UNITS};
use crate::summary::Summary;

/// One station's merged stats, with totals wide enough that no number of
/// partials a machine can read overflows them (each adds at most 2^64 to
/// the count and 2^63 to the sum): whether the final totals fit in 64 bits
/// is checked once, so it does not depend on the merge order.
#[derive(Clone, Debug)]
pub(super) struct Total {
    pub(super) min: i64,
    pub(super) max: i64,
    /// The sum, unless `over`.
    pub(super) sum: i128,
    /// Whether the sum went past 128 bits.
    pub(super) over: bool,
    pub(super) count: u128,
    pub(super) missing: u128,
    /// The sum of squares and counts per value, when kept.
    pub(super) detail: Option<Box<Detail>>,
}

impl Total {
    pub(super) fn add(&mut self, other: Total) {
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        match self.sum.checked_add(other.sum) {
            Some(sum) => self.sum = sum,
            None => self.over = true,
        }
        self.over |= other.over;
        self.count += other.count;
        self.missing += other.missing;
        crate::detail::both(&mut self.detail, other.detail.as_ref(), |a, b| a.merge(b));
    }

    /// The total as [`Stats`], if it fits them; else the total as it is.
    pub(super) fn narrow(self) -> Result<Stats, Total> {
        let (Ok(count), Ok(missing), false) = (
            u64::try_from(self.count),
            u64::try_from(self.missing),
            self.over,
        ) else {
            return Err(self);
        };
        let mut stats = Stats::of(self.min, self.max, self.sum, count);
        stats.missing = missing;
        stats.detail = self.detail;
        Ok(stats)
    }
}

impl From<Stats> for Total {
    fn from(s: Stats) -> Total {
        Total {
            min: s.min,
            max: s.max,
            sum: s.sum,
            over: false,
            count: u128::from(s.count),
            missing: u128::from(s.missing),
            detail: s.detail,
        }
    }
}

/// `stats` at values `factor` times finer, if its min and max still fit
/// 18 digits.
pub(super) fn finer(mut stats: Stats, factor: i64) -> Option<Stats> {
    if stats.count > 0 {
        let up = |v: i64| v.checked_mul(factor).filter(|v| v.abs() <= MAX_UNITS);
        stats.min = up(stats.min)?;
        stats.max = up(stats.max)?;
        stats.sum = stats.sum.checked_mul(factor.into())?;
    }
    if let Some(d) = &mut stats.detail {
        d.rescale(factor.ilog10());
    }
    Some(stats)
}

/// What a run's rows are: the scale of their values, whether they count
/// missing values, and what each station keeps, as in a [`Summary`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Kind {
    pub(super) scale: u32,
    pub(super) missing: bool,
    pub(super) kept: Kept,
}

impl Default for Kind {
    /// Tenths, no missing values, the basic stats: `v1`'s rows.
    fn default() -> Kind {
        Kind {
            scale: 1,
            missing: false,
            kept: Kept::Basic,
        }
    }
}

impl Kind {
    /// The kind of the merge of runs of these two kinds: the finer scale,
    /// missing values counted if either counts them, and what both keep.
    pub(super) fn with(self, other: Kind) -> Kind {
        Kind {
            scale: self.scale.max(other.scale),
            missing: self.missing || other.missing,
            kept: self.kept.min(other.kept),
        }
    }

    /// The kind of `summary`.
    pub(super) fn of(summary: &Summary) -> Kind {
        Kind {
            scale: summary.scale(),
            missing: summary.counts_missing(),
            kept: summary.kept(),
        }
    }
}

/// A sorted run of distinct stations with their totals. A total that fits
/// in 64 bits, as nearly all do, is kept as [`Stats`], so that a run takes
/// the memory of a [`Summary`] and the last run becomes one as it is;
/// the others wait in `wide`, by their index in `stations` (whose stats
/// then hold only min and max).
#[derive(Debug, Default)]
pub(super) struct Run {
    pub(super) stations: Vec<(CompactString, Stats)>,
    /// Ascending indices into `stations`, with their totals.
    pub(super) wide: Vec<(usize, Total)>,
    /// What its rows are.
    pub(super) kind: Kind,
}

impl Run {
    pub(super) fn len(&self) -> usize {
        self.stations.len()
    }

    /// The run of a partial's rows, of `kind`.
    pub(super) fn of(stations: Vec<(CompactString, Stats)>, kind: Kind) -> Run {
        Run {
            stations,
            wide: Vec::new(),
            kind,
        }
    }

    /// The run with its values at `scale`, at least its own; `Err` with a
    /// station whose min or max then exceeds 64 bits.
    pub(super) fn at_scale(mut self, scale: u32) -> Result<Run, OverflowError> {
        let factor = 10i64.pow(scale - self.kind.scale);
        if factor == 1 {
            return Ok(self);
        }
        let refused = |name: &CompactString| OverflowError::Scale {
            station: name.to_string(),
            scale,
        };
        let mut wide = self.wide.iter_mut().peekable();
        for (i, (name, stats)) in self.stations.iter_mut().enumerate() {
            if let Some((_, total)) = wide.next_if(|(at, _)| *at == i) {
                let scaled = finer(Stats::of(total.min, total.max, 0, 1), factor);
                let scaled = scaled.ok_or_else(|| refused(name))?;
                (total.min, total.max) = (scaled.min, scaled.max);
                if let Some(d) = &mut total.detail {
                    d.rescale(factor.ilog10());
                }
                match total.sum.checked_mul(factor.into()) {
                    Some(sum) => total.sum = sum,
                    None => total.over = true,
                }
                continue;
            }
            *stats = finer(std::mem::take(stats), factor).ok_or_else(|| refused(name))?;
        }
        self.kind.scale = scale;
        Ok(self)
    }

    /// The run's stations with their totals, in order.
    pub(super) fn into_totals(self) -> impl Iterator<Item = (CompactString, Total)> {
        let mut wide = self.wide.into_iter().peekable();
        (self.stations.into_iter().enumerate()).map(move |(i, (name, stats))| {
            match wide.next_if(|&(at, _)| at == i) {
                Some((_, total)) => (name, total),
                None => (name, Total::from(stats)),
            }
        })
    }
}

impl From<Summary> for Run {
    fn from(summary: Summary) -> Run {
        let kind = Kind::of(&summary);
        Run::of(summary.into_stations(), kind)
    }
}

/// Builds a [`Run`] from stations given in order, adding up those given
/// one after the other under one name.
#[derive(Default)]
pub(super) struct RunBuilder {
    pub(super) run: Run,
    pub(super) last: Option<(CompactString, Total)>,
}

impl RunBuilder {
    pub(super) fn with_capacity(n: usize, kind: Kind) -> RunBuilder {
        RunBuilder {
            run: Run::of(Vec::with_capacity(n), kind),
            last: None,
        }
    }

    pub(super) fn push(&mut self, name: CompactString, total: Total) {
        match &mut self.last {
            Some((last, t)) if *last == name => t.add(total),
            last => {
                if let Some((name, total)) = last.replace((name, total)) {
                    self.keep(name, total);
                }
            }
        }
    }

    pub(super) fn keep(&mut self, name: CompactString, total: Total) {
        let stats = total.narrow().unwrap_or_else(|total| {
            let (min, max) = (total.min, total.max);
            self.run.wide.push((self.run.stations.len(), total));
            Stats::of(min, max, 0, 0)
        });
        self.run.stations.push((name, stats));
    }

    pub(super) fn finish(mut self) -> Run {
        if let Some((name, total)) = self.last.take() {
            self.keep(name, total);
        }
        self.run
    }
}

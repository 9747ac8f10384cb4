//! What the engines hand over: distinct raw names with their stats
//! ([`Entry`]), runs of them sorted by name and merged into one
//! ([`merge_runs`]), and the [`Summary`] built from that run, where each
//! distinct name's UTF-8 is checked once.

use compact_str::CompactString;
use smallvec::SmallVec;

use crate::detail::Kept;
use crate::error::{quoted, ErrorKind, Fault};
use crate::statistic::{Statistics, StatisticsError};
use crate::stats::Stats;

/// A name's raw bytes, not yet checked. Names of up to 16 bytes (every
/// short-table name) are held inline, in the 24 bytes a `Vec` takes: with
/// a heap block per name, a million names cost two million allocations
/// and frees across the threads' runs and the summary (docs/PERFORMANCE.md,
/// *Memory*).
pub type RawName = SmallVec<[u8; 16]>;

/// A distinct raw name, its stats, and where [`Summary::from_entries`]
/// reports the name if it refuses it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The name's bytes, as the input holds them.
    pub name: RawName,
    /// Every row of the name, folded.
    pub stats: Stats,
    /// The offset of the first line the name appeared on. An engine that
    /// refuses a bad name in its feed, at its first line, keeps no
    /// offsets and gives 0.
    pub first: usize,
}

/// The result: every station with its stats, sorted by the bytes of its
/// name, each name once.
///
/// ```
/// use brc::{Stats, Summary};
///
/// let summary: Summary = [("Oslo", Stats::new(25)), ("Lima", Stats::new(201))]
///     .into_iter()
///     .collect();
/// let names: Vec<&str> = summary.iter().map(|(name, _)| name).collect();
/// assert_eq!(names, ["Lima", "Oslo"]);
/// assert_eq!(summary.get("Oslo"), Some(&Stats::new(25)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// `(name, stats)` pairs sorted by name, each name once: every way of
    /// building a summary keeps that so. A [`CompactString`] holds names of
    /// up to 24 bytes inline (see [`RawName`]).
    stations: Vec<(CompactString, Stats)>,
    /// The stats' values are in units of 10^-`scale`.
    scale: u32,
    /// The decimals the values are shown with: `scale`, unless
    /// [`with_decimals`](Summary::with_decimals) says otherwise.
    shown: u32,
    /// Whether the input could lack values (a delimited file's empty
    /// cells), so that the output says how many each key lacked.
    missing: bool,
    /// Bad rows skipped (a delimited file's, when asked), and where the
    /// first few were: the input's index and the line.
    skipped: (u64, Vec<(usize, u64)>),
    /// What every station keeps: the least any keeps, or what the run
    /// that made the summary kept (an empty run's too).
    kept: Kept,
    /// The statistics the output shows, when asked
    /// ([`with_statistics`](Summary::with_statistics)); else min, mean
    /// and max, with the count in CSV and JSON.
    statistics: Option<Statistics>,
}

impl Default for Summary {
    fn default() -> Summary {
        Summary::from_sorted(Vec::new())
    }
}

/// Values that do not fit `i64` at the decimals asked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{name}: {value} does not fit 18 digits with {decimals} decimals")]
pub struct DecimalsError {
    /// The key.
    pub name: String,
    /// Its min or max, at the summary's scale.
    pub value: String,
    /// The decimals asked.
    pub decimals: u32,
}

impl Summary {
    /// The scale of the stats' values: each is a number of 10^-scale
    /// units (1 for the challenge's tenths).
    pub fn scale(&self) -> u32 {
        self.scale
    }

    /// Whether the input could lack values, as a delimited file's cells
    /// may: the keys' [`Stats::missing`] counts are then shown.
    pub fn counts_missing(&self) -> bool {
        self.missing
    }

    /// The summary, saying whether its input could lack values.
    pub(crate) fn counting_missing(mut self, missing: bool) -> Summary {
        self.missing = missing;
        self
    }

    /// How many bad rows were skipped (`Dialect::skip_bad_rows`), and
    /// where the first few were: each an input's index among the run's
    /// inputs and a 1-based line.
    pub fn skipped(&self) -> (u64, &[(usize, u64)]) {
        (self.skipped.0, &self.skipped.1)
    }

    /// The summary, with the bad rows its run skipped.
    pub(crate) fn skipping(mut self, count: u64, first: Vec<(usize, u64)>) -> Summary {
        self.skipped = (count, first);
        self
    }

    /// What every station keeps beyond its basic stats, and so which
    /// statistics the summary can show ([`Statistics::kept`]).
    pub fn kept(&self) -> Kept {
        self.kept
    }

    /// The summary of a run whose keys kept what `kept` says.
    pub(crate) fn keeping(mut self, kept: Kept) -> Summary {
        debug_assert!(self.stations.iter().all(|(_, s)| s.kept() >= kept));
        self.kept = kept;
        self
    }

    /// The statistics the output shows, if asked; else min, mean and max.
    pub fn statistics(&self) -> Option<&Statistics> {
        self.statistics.as_ref()
    }

    /// The summary, shown with `statistics`; an error if its stations do
    /// not keep what one of them needs (a median of a run that kept no
    /// counts per value).
    pub fn with_statistics(mut self, statistics: Statistics) -> Result<Summary, StatisticsError> {
        if let Some(s) = statistics.needing(self.kept) {
            return Err(StatisticsError::NotKept {
                statistic: s.to_string(),
                kept: s.kept(),
            });
        }
        self.statistics = Some(statistics);
        Ok(self)
    }

    /// The number of decimals values are shown with.
    pub fn decimals(&self) -> u32 {
        self.shown
    }

    /// The summary with its values shown with `decimals` decimals: padded
    /// with zeros when more than its scale, rounded half toward +∞ when
    /// fewer; an error if a value does not fit in 18 digits so.
    pub fn with_decimals(mut self, decimals: u32) -> Result<Summary, DecimalsError> {
        for (name, s) in &self.stations {
            for v in [s.min, s.max] {
                if s.count > 0 && crate::stats::rescale(v, self.scale, decimals).is_none() {
                    return Err(DecimalsError {
                        name: name.to_string(),
                        value: crate::stats::Units(v.into(), self.scale).to_string(),
                        decimals,
                    });
                }
            }
        }
        self.shown = decimals;
        Ok(self)
    }

    /// The summary with its values in units of 10^-`scale`, which must
    /// be at least its scale: exact; an error where a min or max does not
    /// fit `i64` (or a sum `i128`) so.
    pub(crate) fn rescaled(mut self, scale: u32) -> Result<Summary, DecimalsError> {
        let up = scale - self.scale;
        if up == 0 {
            return Ok(self);
        }
        let factor = 10i64.pow(up);
        for (name, s) in &mut self.stations {
            if s.count == 0 {
                continue;
            }
            let up = |v: i64| {
                v.checked_mul(factor)
                    .filter(|v| v.abs() <= crate::stats::MAX_UNITS)
            };
            let scaled = (up(s.min))
                .zip(up(s.max))
                .zip(s.sum.checked_mul(factor.into()));
            let Some(((min, max), sum)) = scaled else {
                let value = if s.min.unsigned_abs() > s.max.unsigned_abs() {
                    s.min
                } else {
                    s.max
                };
                return Err(DecimalsError {
                    name: name.to_string(),
                    value: crate::stats::Units(value.into(), self.scale).to_string(),
                    decimals: scale,
                });
            };
            (s.min, s.max, s.sum) = (min, max, sum);
        }
        self.scale = scale;
        self.shown = self.shown.max(scale);
        Ok(self)
    }

    /// The summary at `scale`: its stations as they are, in units of
    /// 10^-`scale`.
    pub(crate) fn at_scale(mut self, scale: u32) -> Summary {
        self.scale = scale;
        self.shown = scale;
        self
    }

    /// The number of stations.
    pub fn len(&self) -> usize {
        self.stations.len()
    }

    /// Whether there are no stations.
    pub fn is_empty(&self) -> bool {
        self.stations.is_empty()
    }

    /// The stations with their stats, sorted by the bytes of their names.
    pub fn iter(
        &self,
    ) -> impl ExactSizeIterator<Item = (&str, &Stats)> + DoubleEndedIterator + Clone + '_ {
        self.stations
            .iter()
            .map(|(name, stats)| (name.as_str(), stats))
    }

    /// The stats of the station `name`, if the input held it.
    pub fn get(&self, name: &str) -> Option<&Stats> {
        let at = self
            .stations
            .binary_search_by(|(n, _)| n.as_str().cmp(name));
        at.ok().map(|i| &self.stations[i].1)
    }

    /// The stations, sorted: a slice, so that the output can cut it into
    /// parts and render them side by side.
    pub(crate) fn stations(&self) -> &[(CompactString, Stats)] {
        &self.stations
    }

    /// The stations, sorted, for a merge to take over.
    pub(crate) fn into_stations(self) -> Vec<(CompactString, Stats)> {
        self.stations
    }

    /// The summary of `stations`, which must be sorted by name with each
    /// name once, as a merge of sorted runs gives them (checked in debug
    /// builds only: checking would cost a pass over millions of names).
    pub(crate) fn from_sorted(stations: Vec<(CompactString, Stats)>) -> Summary {
        debug_assert!(stations.is_sorted_by(|a, b| a.0 < b.0));
        let kept = stations.iter().map(|(_, s)| s.kept()).min();
        Summary {
            stations,
            scale: 1,
            shown: 1,
            missing: false,
            skipped: (0, Vec::new()),
            kept: kept.unwrap_or_default(),
            statistics: None,
        }
    }

    /// Builds a summary from distinct raw names sorted by their bytes (as
    /// [`merge_runs`] gives them), each with its stats and the offset of the
    /// line it first appeared on. Checks each distinct name
    /// once (valid UTF-8, no `\n`) instead of every row; returns the first
    /// fault in the input, counting `fault` (the first parse fault an engine
    /// met, if any).
    pub(crate) fn from_entries(
        entries: Vec<Entry>,
        fault: Option<Fault>,
    ) -> Result<Summary, Fault> {
        let mut fault = fault;
        let mut refuse =
            |offset, kind| fault = Fault::first(fault.take(), Some(Fault { offset, kind }));
        // One `filter_map` over the vector's own iterator, so that the
        // stations are collected into the entries' allocation: a fresh
        // vector for a million names took its own page faults.
        let stations: Vec<(CompactString, Stats)> = (entries.into_iter())
            .filter_map(|Entry { name, stats, first }| {
                if let Some(nl) = memchr::memchr(b'\n', &name) {
                    // A scanner that looks only for `;` read two lines as
                    // one; the first of them has no `;`, as `parse_line`
                    // would say.
                    refuse(
                        first,
                        match nl {
                            0 => ErrorKind::EmptyLine,
                            _ => ErrorKind::MissingSemicolon {
                                line: quoted(&name[..nl]),
                            },
                        },
                    );
                    return None;
                }
                match CompactString::from_utf8(&name) {
                    Ok(name) => Some((name, stats)),
                    Err(_) => {
                        let name = name.into_vec();
                        refuse(first, ErrorKind::InvalidUtf8 { name });
                        None
                    }
                }
            })
            .collect();
        if let Some(fault) = fault {
            return Err(fault);
        }
        // `str`s order as their bytes do, so the stations are sorted too.
        Ok(Summary::from_sorted(stations))
    }
}

impl<N: AsRef<str>> FromIterator<(N, Stats)> for Summary {
    /// The summary of stations given in any order; the stats of a name
    /// given more than once are merged.
    fn from_iter<I: IntoIterator<Item = (N, Stats)>>(stations: I) -> Summary {
        let mut stations: Vec<(CompactString, Stats)> = (stations.into_iter())
            .map(|(name, stats)| (CompactString::from(name.as_ref()), stats))
            .collect();
        stations.sort_by(|a, b| a.0.cmp(&b.0));
        stations.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                kept.1.merge(&later.1);
            }
            same
        });
        Summary::from_sorted(stations)
    }
}

/// Merges runs of entries, each sorted by name with no name twice, into
/// one such run, folding the stats of a name found in several runs and
/// keeping its earliest offset.
pub fn merge_runs(mut runs: Vec<Vec<Entry>>) -> Vec<Entry> {
    // Pairwise, so that each entry is moved about log2(runs) times.
    while runs.len() > 1 {
        let mut paired = Vec::with_capacity(runs.len().div_ceil(2));
        let mut rest = runs.into_iter();
        while let Some(x) = rest.next() {
            paired.push(match rest.next() {
                Some(y) => merge_two(x, y),
                None => x,
            });
        }
        runs = paired;
    }
    runs.pop().unwrap_or_default()
}

fn merge_two(mut x: Vec<Entry>, y: Vec<Entry>) -> Vec<Entry> {
    // A table's long names are often none at all.
    if x.is_empty() || y.is_empty() {
        return if x.is_empty() { y } else { x };
    }
    // The names of `y` that `x` holds are folded into `x` where they lie;
    // only the others are set aside, then merged in from the back within
    // `x`'s own allocation, grown by their number. When the threads met
    // the same names, as a million names each met by both threads, next
    // to none are set aside and the merge writes to no new memory, where a
    // new vector for the merged run took tens of megabytes of fresh pages
    // (docs/PERFORMANCE.md, *Memory*).
    let mut rest = Vec::new();
    let mut i = 0;
    for b in y {
        while x.get(i).is_some_and(|a| a.name < b.name) {
            i += 1;
        }
        match x.get_mut(i) {
            Some(a) if a.name == b.name => {
                a.stats.merge(&b.stats);
                a.first = a.first.min(b.first);
                i += 1;
            }
            _ => rest.push(b),
        }
    }
    // From the top down: `x[..i]` and `rest` are still to place, and every
    // slot above the one being filled is final.
    let mut i = x.len();
    x.reserve_exact(rest.len());
    x.resize_with(i + rest.len(), || Entry {
        name: RawName::new(),
        stats: Stats::new(0),
        first: 0,
    });
    for k in (0..x.len()).rev() {
        let Some(b) = rest.last() else { break };
        if i > 0 && x[i - 1].name > b.name {
            i -= 1;
            x.swap(i, k);
        } else {
            x[k] = rest.pop().expect("looked at");
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn entry(name: &[u8], value: i16, first: usize) -> Entry {
        let name = RawName::from(name);
        let stats = Stats::new(value);
        Entry { name, stats, first }
    }

    #[test]
    fn merged_runs_sum_and_keep_the_earliest_offset() {
        let runs = vec![
            vec![entry(b"a", 10, 50)],
            vec![entry(b"a", -10, 20), entry(b"b", 5, 30)],
            vec![],
            vec![entry(b"a", 0, 70), entry(b"c", 1, 10)],
        ];
        let mut a = Stats::new(10);
        a.add(-10);
        a.add(0);
        assert_eq!(
            merge_runs(runs),
            vec![
                Entry {
                    stats: a,
                    ..entry(b"a", 0, 20)
                },
                entry(b"b", 5, 30),
                entry(b"c", 1, 10)
            ]
        );
        assert_eq!(merge_runs(Vec::new()), Vec::new());
    }

    proptest::proptest! {
        /// Two runs of names (short and long, so that some live on the
        /// heap), sharing some: merged as a map would fold them.
        #[test]
        fn two_runs_merge_as_a_map_folds_them(
            x in proptest::collection::btree_map("[a-c]{1,3}|[a-c]{17,20}", (-999i16..=999, 0usize..9), 0..40),
            y in proptest::collection::btree_map("[a-c]{1,3}|[a-c]{17,20}", (-999i16..=999, 0usize..9), 0..40),
        ) {
            let run = |m: &BTreeMap<String, (i16, usize)>| -> Vec<Entry> {
                m.iter().map(|(n, &(v, o))| entry(n.as_bytes(), v, o)).collect()
            };
            let mut want = BTreeMap::new();
            for (n, &(v, o)) in x.iter().chain(&y) {
                want.entry(n.clone())
                    .and_modify(|e: &mut (Stats, usize)| { e.0.add(v); e.1 = e.1.min(o); })
                    .or_insert((Stats::new(v), o));
            }
            let want: Vec<Entry> = want.into_iter()
                .map(|(n, (stats, first))| Entry { stats, ..entry(n.as_bytes(), 0, first) })
                .collect();
            proptest::prop_assert_eq!(merge_two(run(&x), run(&y)), want);
        }
    }

    #[test]
    fn a_summary_collected_in_any_order_is_sorted_with_each_name_once() {
        let mut b = Stats::new(5);
        b.merge(&Stats::new(-7));
        let summary: Summary = [
            ("b", Stats::new(5)),
            ("a", Stats::new(1)),
            ("b", Stats::new(-7)),
        ]
        .into_iter()
        .collect();
        let got: Vec<(&str, &Stats)> = summary.iter().collect();
        assert_eq!(got, [("a", &Stats::new(1)), ("b", &b)]);
        assert_eq!((summary.len(), summary.is_empty()), (2, false));
        assert_eq!(summary.get("b"), Some(&b));
        assert_eq!(summary.get("c"), None);
        assert!(Summary::default().is_empty());
    }

    #[test]
    fn a_name_holding_a_newline_or_bad_utf8_is_refused_at_its_first_line() {
        let entries = vec![
            entry(b"\nb", 1, 40),
            entry(b"a\nb", 1, 30),
            entry(b"ok", 1, 0),
            entry(b"z\xff", 1, 20),
        ];
        let fault = Summary::from_entries(entries.clone(), None).unwrap_err();
        let want = ErrorKind::InvalidUtf8 {
            name: b"z\xff".to_vec(),
        };
        assert_eq!((fault.offset, fault.kind), (20, want));
        // A fault the engine met earlier in the input wins.
        let earlier = Fault {
            offset: 5,
            kind: ErrorKind::EmptyName,
        };
        let fault = Summary::from_entries(entries, Some(earlier.clone()));
        assert_eq!(fault, Err(earlier));
        // A name holding a `\n` is two lines read as one, the first of
        // them empty or without its `;`.
        let missing = ErrorKind::MissingSemicolon {
            line: b"a".to_vec(),
        };
        for (name, kind) in [(&b"\nb"[..], ErrorKind::EmptyLine), (b"a\nb", missing)] {
            let fault = Summary::from_entries(vec![entry(name, 1, 9)], None);
            assert_eq!(fault, Err(Fault { offset: 9, kind }));
        }
        let ok = Summary::from_entries(vec![entry(b"ok", 3, 0)], None).unwrap();
        assert_eq!(ok.stations, vec![("ok".into(), Stats::new(3))]);
    }
}

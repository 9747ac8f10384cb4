//! Partial results: the exact, mergeable state of an aggregation.
//!
//! A [`Partial`] holds, per station, its count, its sum in integer tenths,
//! its minimum and its maximum, and what statistics beyond them need (its
//! sum of squares and counts per value, when kept): everything a final
//! [`Summary`] is made of, before anything is rounded. Partials of any pieces of the input merge
//! into the partial of the whole, exactly, whatever the order or grouping,
//! so separate runs (processes, machines) can each aggregate a piece and a
//! last step merges them.
//!
//! Partials travel as text in the `brc-partial` format (`v1` for tenths,
//! `v2` for a delimited file's values at any scale, `v3` with sums of
//! squares and counts per value), specified in
//! docs/PARTIAL-FORMAT.md: a first line naming the format, its version and
//! the number of stations, then CSV (`station,count,sum,min,max`). Both
//! sides of the format live here: the writer ([`Partial::to_bytes`], and
//! the output's `partial` format through it), and the reader
//! ([`Partial::parse`], [`Merger::read`]; its lines and fields in
//! `fields`), which is strict, so that a
//! truncated or corrupted partial is an error with its line
//! ([`LineError`]), never a wrong answer.
//!
//! [`Merger`] does the merging: it folds any number of partials, in memory
//! or read from the format, into one, and reports a total that does not
//! fit in 64 bits as an [`OverflowError`].

mod fields;
mod line;
mod read;
mod run;
pub(crate) mod write;

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, Read, Write};

use compact_str::CompactString;

use self::run::{finer, Kind, Run, RunBuilder, Total};
use crate::error::Shown;
use crate::stats::Stats;
use crate::summary::Summary;

pub use line::{LineError, MAX_LINE_LEN};
pub use write::{COLUMNS, FORMAT, VERSION};

/// The exact per-station state of an aggregation, sorted by the bytes of
/// the station names; see the [module documentation](self).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Partial {
    summary: Summary,
}

impl From<Summary> for Partial {
    /// The partial of an aggregation's result. `summary` must be as the
    /// engines give it: sorted by name bytes, each name once, each count at
    /// least 1 and every value in -999..=999 tenths.
    fn from(summary: Summary) -> Partial {
        // The bad rows a run skipped belong to its report, not to the
        // state that merges: a partial's bytes do not hold them.
        Partial {
            summary: summary.skipping(0, Vec::new()),
        }
    }
}

impl Partial {
    /// The number of stations.
    pub fn len(&self) -> usize {
        self.summary.len()
    }

    /// Whether there are no stations.
    pub fn is_empty(&self) -> bool {
        self.summary.is_empty()
    }

    /// The stations with their stats, sorted by the bytes of their names.
    pub fn iter(
        &self,
    ) -> impl ExactSizeIterator<Item = (&str, &Stats)> + DoubleEndedIterator + Clone + '_ {
        self.summary.iter()
    }

    /// The final result: the same summary a single run over all the input
    /// gives.
    pub fn finish(self) -> Summary {
        self.summary
    }

    /// Merges two partials into the partial of both inputs.
    pub fn merge(self, other: Partial) -> Result<Partial, OverflowError> {
        Partial::merge_all([self, other])
    }

    /// Merges any number of partials (none gives the empty partial). The
    /// result, or the error, depends only on the partials, not on their
    /// order: totals are checked once, at the end.
    pub fn merge_all(
        partials: impl IntoIterator<Item = Partial>,
    ) -> Result<Partial, OverflowError> {
        let mut merger = Merger::new();
        partials.into_iter().for_each(|p| merger.add(p));
        merger.finish()
    }

    /// The partial in the `brc-partial` format (`v3` when its stations keep
    /// more than the basic stats, else `v1` for tenths and `v2` for others).
    pub fn to_bytes(&self) -> Vec<u8> {
        write::render(&self.summary)
    }

    /// Writes the partial in the `brc-partial` format ([`Partial::to_bytes`]).
    pub fn write_to(&self, mut w: impl Write) -> io::Result<()> {
        w.write_all(&self.to_bytes())?;
        w.flush()
    }

    /// Parses the `brc-partial` format (`v1` to `v3`): one partial, or several one
    /// after the other, merged.
    pub fn parse(bytes: &[u8]) -> Result<Partial, PartialError> {
        Partial::read_from(bytes)
    }

    /// Reads the `brc-partial` format (`v1` to `v3`) from `reader` to its end: one
    /// partial, or several one after the other, merged.
    pub fn read_from(reader: impl Read) -> Result<Partial, PartialError> {
        let mut merger = Merger::new();
        merger.read(reader)?;
        Ok(merger.finish()?)
    }
}

/// Why a partial-format input was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PartialError {
    /// A malformed line.
    #[error("line {line}: {kind}")]
    Line {
        /// 1-based line number, counted from the start of the input.
        line: u64,
        /// What is wrong with the line.
        kind: LineError,
    },
    /// The partials one input holds merge into totals beyond 64 bits.
    #[error(transparent)]
    Overflow(#[from] OverflowError),
    /// Reading the input failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// A merged station whose count or sum does not fit the format's integers
/// (`u64` and `i64`): an error, never a wrapped-around answer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OverflowError {
    /// The total count is beyond `u64`.
    #[error(
        "station {}: expected a total count of at most {}, found {total}",
        Shown(.station.as_bytes()),
        u64::MAX
    )]
    Count {
        /// The station.
        station: String,
        /// Its total count.
        total: u128,
    },
    /// A station whose min or max does not fit 64 bits at the scale of
    /// another partial's values.
    #[error("station {}: its values do not fit 18 digits with {scale} decimals", Shown(.station.as_bytes()))]
    Scale {
        /// The station.
        station: String,
        /// The scale.
        scale: u32,
    },
    /// A total sum beyond 128 bits.
    #[error("station {}: expected a total sum within 128 bits", Shown(.station.as_bytes()))]
    WideSum {
        /// The station.
        station: String,
    },
    /// A total count of missing values beyond `u64`.
    #[error("station {}: expected a total count of missing values of at most {}", Shown(.station.as_bytes()), u64::MAX)]
    Missing {
        /// The station.
        station: String,
    },
    /// The total sum is beyond `i64`.
    #[error(
        "station {}: expected a total sum in {}..={} tenths, found {total}",
        Shown(.station.as_bytes()),
        i64::MIN,
        i64::MAX
    )]
    Sum {
        /// The station.
        station: String,
        /// Its total sum, in tenths.
        total: i128,
    },
}

/// How many inputs [`Merger::read_all`] reads side by side, a row of each
/// at a time: enough for any usual merge to take one pass, few enough to
/// stay far below the open files a process may have.
const MERGE_FAN: usize = 64;

/// Merges partials, in memory ([`add`](Merger::add)) or read from the
/// format ([`read`](Merger::read), [`read_all`](Merger::read_all)), into
/// one ([`finish`](Merger::finish)).
///
/// It keeps a stack of sorted runs, merging the last two while the older
/// one is at most twice as long as the newer, as merge sort does: merging
/// k partials of n stations costs O(n log k), not O(n k), and memory stays
/// within a few times the merged result.
#[derive(Debug, Default)]
pub struct Merger {
    runs: Vec<Run>,
    /// The kind of the runs' merge ([`Kind::with`]), to whose scale
    /// every run is brought (none before the first run).
    kind: Option<Kind>,
    /// A run that could not be brought to that scale.
    failed: Option<OverflowError>,
}

impl Merger {
    /// A merger holding nothing yet.
    pub fn new() -> Merger {
        Merger::default()
    }

    /// Merges in a partial.
    pub fn add(&mut self, partial: Partial) {
        self.push(partial.summary.into());
    }

    /// Reads the format from `reader` to its end and merges in every
    /// partial it holds. On error, the partials before the malformed one
    /// stay merged in.
    pub fn read(&mut self, reader: impl Read) -> Result<(), PartialError> {
        read::read(reader, |stations, kind| self.push(Run::of(stations, kind)))
    }

    /// Reads the format from each of `inputs` (each opened as it is
    /// reached, at most 64 open at once) to its end and merges in every
    /// partial they hold. The first partials of up to 64 inputs are merged
    /// as they are read, a row of each held at a time, so that merging
    /// partials takes about the memory of their merged result.
    ///
    /// On error: the first input, in order, that cannot be opened or holds
    /// a malformed partial, with its error (the inputs before it were read
    /// to their end), and nothing merged in.
    pub fn read_all<R: Read>(
        &mut self,
        inputs: impl IntoIterator<Item = io::Result<R>>,
    ) -> Result<(), (usize, PartialError)> {
        let mut inputs = inputs.into_iter().enumerate().peekable();
        let mut merged = Merger::new();
        while inputs.peek().is_some() {
            let group = inputs.by_ref().take(MERGE_FAN);
            let readers: Vec<_> = group.map(|(k, r)| (k, r.map(read::Reader::new))).collect();
            merged.merge_group(readers)?;
        }
        if let Some(failed) = merged.failed {
            self.failed.get_or_insert(failed);
        }
        for run in merged.runs {
            self.push(run);
        }
        Ok(())
    }

    /// [`Merger::read_all`] for one group of inputs, numbered.
    fn merge_group<R: Read>(
        &mut self,
        inputs: Vec<(usize, io::Result<read::Reader<R>>)>,
    ) -> Result<(), (usize, PartialError)> {
        let mut readers = Vec::with_capacity(inputs.len());
        // The first failure, by input; the inputs before it are read on,
        // for a failure of their own, before it is reported.
        let mut failed: Option<(usize, PartialError)> = None;
        for (k, opened) in inputs {
            match opened {
                Ok(reader) => readers.push((k, reader)),
                Err(e) => {
                    failed = Some((k, e.into()));
                    break;
                }
            }
        }
        if failed.is_none() {
            match kway(&mut readers) {
                Ok(run) => self.push(run),
                Err(e) => failed = Some(e),
            }
        }
        // Partials after the first of an input, one at a time; or, after a
        // failure, the inputs before it, read for an earlier failure.
        for (k, reader) in &mut readers {
            if failed.as_ref().is_some_and(|(at, _)| *at <= *k) {
                break;
            }
            let ok = failed.is_none();
            if let Err(e) = reader.read_on(|rows, kind| {
                if ok {
                    self.push(Run::of(rows, kind));
                }
            }) {
                failed = Some((*k, e));
            }
        }
        failed.map_or(Ok(()), Err)
    }

    /// The merged partial, or the first station (by name) whose total
    /// count or sum does not fit in 64 bits.
    pub fn finish(mut self) -> Result<Partial, OverflowError> {
        if let Some(failed) = self.failed {
            return Err(failed);
        }
        let kind = self.kind.unwrap_or_default();
        let mut merged = self.runs.pop().unwrap_or(Run::of(Vec::new(), kind));
        while let Some(run) = self.runs.pop() {
            merged = merge_two(run, merged);
        }
        if let Some((at, t)) = merged.wide.first() {
            let at = *at;
            let station = merged.stations.swap_remove(at).0.into_string();
            return Err(match (u64::try_from(t.count), t.over) {
                (Err(_), _) => OverflowError::Count {
                    station,
                    total: t.count,
                },
                (Ok(_), true) => OverflowError::WideSum { station },
                (Ok(_), false) => OverflowError::Missing { station },
            });
        }
        let Kind {
            scale,
            missing,
            kept,
        } = kind;
        if write::version(scale, missing, kept) == write::VERSION {
            // The tenths of `v1` sum to 64 bits.
            let beyond = (merged.stations.iter()).find(|(_, s)| i64::try_from(s.sum).is_err());
            if let Some((name, s)) = beyond {
                return Err(OverflowError::Sum {
                    station: name.to_string(),
                    total: s.sum,
                });
            }
        }
        let summary = Summary::from_sorted(merged.stations);
        let summary = summary.at_scale(scale).counting_missing(missing);
        Ok(Partial::from(summary.keeping(kept)))
    }

    fn push(&mut self, run: Run) {
        let run = match self.bring(run) {
            Some(run) => run,
            None => return,
        };
        self.runs.push(run);
        while let [.., older, newer] = &self.runs[..] {
            if older.len() > 2 * newer.len() {
                break;
            }
            let newer = self.runs.pop().unwrap_or_default();
            let older = self.runs.pop().unwrap_or_default();
            self.runs.push(merge_two(older, newer));
        }
    }
}

impl Merger {
    /// `run` at the merger's scale, or the merger's runs at the run's if it
    /// is finer; `None` once a run could not be brought to it.
    fn bring(&mut self, run: Run) -> Option<Run> {
        if self.failed.is_some() {
            return None;
        }
        let kind = self.kind.unwrap_or(run.kind).with(run.kind);
        let scale = kind.scale;
        self.kind = Some(kind);
        let runs = std::mem::take(&mut self.runs);
        let brought = (runs.into_iter())
            .map(|r| r.at_scale(scale))
            .collect::<Result<Vec<Run>, _>>()
            .and_then(|runs| Ok((runs, run.at_scale(scale)?)));
        match brought {
            Ok((runs, mut run)) => {
                self.runs = runs;
                for r in &mut self.runs {
                    r.kind = kind;
                }
                run.kind = kind;
                Some(run)
            }
            Err(e) => {
                self.failed = Some(e);
                None
            }
        }
    }
}

/// Merges the first partial of each of `readers` as they are read, a row
/// of each held at a time; on error, the reader's number and its error.
fn kway<R: Read>(readers: &mut [(usize, read::Reader<R>)]) -> Result<Run, (usize, PartialError)> {
    let failed = |k: usize| move |e| (k, e);
    // The next row's name of each reader, smallest first (ties by reader),
    // and its stats.
    let mut heads = BinaryHeap::with_capacity(readers.len());
    let mut stats = vec![Stats::new(0); readers.len()];
    for (k, reader) in readers.iter_mut() {
        // An input holding no partial fails here, with the reader's message.
        reader.next_partial().map_err(failed(*k))?;
    }
    // Every row is brought to the finest scale among the partials.
    let kinds: Vec<Kind> = readers.iter().map(|(_, r)| r.kind()).collect();
    let kind = (kinds.iter().copied().reduce(Kind::with)).unwrap_or_default();
    let scale = kind.scale;
    let finer_row = |i: usize, k: usize, name: &CompactString, s: Stats| {
        finer(s, 10i64.pow(scale - kinds[i].scale)).ok_or_else(|| {
            let station = name.to_string();
            (
                k,
                PartialError::Overflow(OverflowError::Scale { station, scale }),
            )
        })
    };
    for (i, (k, reader)) in readers.iter_mut().enumerate() {
        if let Some((name, s)) = reader.next_row().map_err(failed(*k))? {
            stats[i] = finer_row(i, *k, &name, s)?;
            heads.push(Reverse((name, i)));
        }
    }
    // The merged run holds at most as many stations as the partials
    // announce together: room for those at once, where doubling would
    // leave up to half the run's memory unused. Pages never written take
    // no memory, so the room is only address space; where there is not
    // that much (a damaged partial may announce any count), room for the
    // longest partial, which the run holds at least.
    let mut run = RunBuilder::with_capacity(0, kind);
    let counts = readers.iter().map(|(_, r)| r.stations());
    let mut room = |n: u64| -> bool {
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        run.run.stations.try_reserve_exact(n).is_ok()
    };
    let _ = room(counts.clone().fold(0, u64::saturating_add)) || room(counts.max().unwrap_or(0));
    while let Some(Reverse((name, i))) = heads.pop() {
        run.push(name, Total::from(std::mem::take(&mut stats[i])));
        let (k, reader) = &mut readers[i];
        if let Some((name, s)) = reader.next_row().map_err(failed(*k))? {
            stats[i] = finer_row(i, *k, &name, s)?;
            heads.push(Reverse((name, i)));
        }
    }
    Ok(run.finish())
}

/// Merges two sorted runs of distinct names into one, adding up the
/// stations both hold.
fn merge_two(a: Run, b: Run) -> Run {
    debug_assert_eq!(a.kind, b.kind);
    let mut out = RunBuilder::with_capacity(a.len().max(b.len()), a.kind);
    let (mut a, mut b) = (a.into_totals().peekable(), b.into_totals().peekable());
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) if x.0 <= y.0 => a.next(),
            (Some(_), Some(_)) | (None, _) => b.next(),
            (Some(_), None) => a.next(),
        };
        match next {
            Some((name, total)) => out.push(name, total),
            None => return out.finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(min: i64, max: i64, sum: i64, count: u64) -> Stats {
        Stats::of(min, max, sum.into(), count)
    }

    fn partial(stations: &[(&str, Stats)]) -> Partial {
        let stations = stations
            .iter()
            .map(|(n, s)| ((*n).into(), s.clone()))
            .collect();
        Partial::from(Summary::from_sorted(stations))
    }

    #[test]
    fn merging_adds_up_common_stations_and_keeps_the_others_in_order() {
        let a = partial(&[("b", stats(-5, 10, 5, 2)), ("d", stats(1, 1, 1, 1))]);
        let b = partial(&[
            ("a", stats(0, 0, 0, 1)),
            ("b", stats(-7, 3, -4, 2)),
            ("c", stats(2, 2, 2, 1)),
        ]);
        let expected = partial(&[
            ("a", stats(0, 0, 0, 1)),
            ("b", stats(-7, 10, 1, 4)),
            ("c", stats(2, 2, 2, 1)),
            ("d", stats(1, 1, 1, 1)),
        ]);
        assert_eq!(a.clone().merge(b.clone()).unwrap(), expected);
        assert_eq!(b.clone().merge(a.clone()).unwrap(), expected);
        assert_eq!(Partial::merge_all([a.clone()]).unwrap(), a);
        assert_eq!(Partial::merge_all([]).unwrap(), Partial::default());
        assert!(expected.clone().finish().iter().eq(expected.iter()));
    }

    #[test]
    fn many_partials_merge_through_the_run_stack() {
        // Disjoint, overlapping and growing runs, in two orders.
        let parts: Vec<Partial> = (0..200u64)
            .map(|k| {
                let names: Vec<String> = (k..k + 1 + k % 7).map(|i| format!("s{i:04}")).collect();
                let mut names: Vec<&str> = names.iter().map(String::as_str).collect();
                names.sort();
                let stations: Vec<_> = names.iter().map(|&n| (n, Stats::new(k as i16))).collect();
                partial(&stations)
            })
            .collect();
        let merged = Partial::merge_all(parts.clone()).unwrap();
        let reversed = Partial::merge_all(parts.iter().rev().cloned()).unwrap();
        assert_eq!(merged, reversed);
        // Against a plain fold.
        let mut folded = std::collections::BTreeMap::<&str, Stats>::new();
        for p in &parts {
            for (name, s) in p.iter() {
                folded
                    .entry(name)
                    .and_modify(|t| t.merge(s))
                    .or_insert(s.clone());
            }
        }
        let folded: Vec<_> = folded.into_iter().collect();
        let merged: Vec<_> = merged.iter().map(|(n, s)| (n, s.clone())).collect();
        assert_eq!(merged, folded);
    }

    #[test]
    fn totals_beyond_64_bits_are_errors_whatever_the_order() {
        // The largest count of 99.9s whose sum fits in an i64.
        let n = (i64::MAX / 999) as u64;
        let big = partial(&[("a", stats(999, 999, 999 * n as i64, n))]);
        let up = partial(&[("a", Stats::new(999))]);
        let down = partial(&[("a", Stats::new(-999))]);
        let sum = i128::from(999 * n as i64) + 999;
        let overflow = OverflowError::Sum {
            station: "a".into(),
            total: sum,
        };
        assert_eq!(big.clone().merge(up.clone()), Err(overflow));
        // Up and down together fit, in any order: totals are checked at
        // the end only.
        let orders = [
            [big.clone(), up.clone(), down.clone()],
            [up.clone(), big.clone(), down.clone()],
            [up.clone(), down.clone(), big.clone()],
        ];
        for order in orders {
            let merged = Partial::merge_all(order).unwrap();
            let expected = stats(-999, 999, 999 * n as i64, n + 2);
            assert!(merged.iter().eq([("a", &expected)]));
        }
        let full = partial(&[("b", stats(0, 0, 0, u64::MAX))]);
        let one = partial(&[("b", stats(0, 0, 0, 1))]);
        let total = u128::from(u64::MAX) + 1;
        let station = "b".into();
        let overflow = OverflowError::Count { station, total };
        assert_eq!(one.merge(full), Err(overflow.clone()));
        assert_eq!(
            overflow.to_string(),
            "station `b`: expected a total count of at most 18446744073709551615, \
             found 18446744073709551616"
        );
    }

    #[test]
    fn the_format_reads_back_what_it_writes() {
        let p = partial(&[
            (" lead and trail ", stats(-999, 999, 0, 2)),
            ("\"quoted\"", stats(5, 5, 5, 1)),
            ("Zürich", stats(-999, -999, -999 * 1_000_000, 1_000_000)),
            ("a,b", stats(-3, 7, 4, 2)),
            ("tab\there\r", stats(0, 0, 0, 3)),
            ("中文😀", stats(1, 9, 10, 2)),
        ]);
        let bytes = p.to_bytes();
        let mut written = Vec::new();
        p.write_to(&mut written).unwrap();
        assert_eq!(written, bytes);
        assert_eq!(
            String::from_utf8(bytes.clone()).unwrap(),
            "brc-partial v1 stations=6\nstation,count,sum,min,max\n \
             lead and trail ,2,0,-999,999\n\"\"\"quoted\"\"\",1,5,5,5\n\
             Zürich,1000000,-999000000,-999,-999\n\"a,b\",2,4,-3,7\n\
             \"tab\there\r\",3,0,0,0\n中文😀,2,10,1,9\n"
        );
        assert_eq!(Partial::parse(&bytes).unwrap(), p);
        assert_eq!(Partial::read_from(&bytes[..]).unwrap(), p);
        let empty = Partial::default().to_bytes();
        assert_eq!(
            empty,
            b"brc-partial v1 stations=0\nstation,count,sum,min,max\n"
        );
        assert_eq!(Partial::parse(&empty).unwrap(), Partial::default());
    }

    #[test]
    fn a_reader_error_names_its_line_and_keeps_what_was_merged() {
        let good = partial(&[("a", Stats::new(5))]);
        let mut merger = Merger::new();
        merger.read(&good.to_bytes()[..]).unwrap();
        let mut bad = good.to_bytes();
        bad.pop();
        let e = merger.read(&bad[..]).unwrap_err();
        assert!(
            matches!(
                e,
                PartialError::Line {
                    line: 3,
                    kind: LineError::MissingNewline
                }
            ),
            "{e:?}"
        );
        assert_eq!(merger.finish().unwrap(), good);
    }

    /// `read_all` over the partials' bytes, each input read from memory.
    fn read_all(inputs: &[Vec<u8>]) -> Result<Partial, (usize, PartialError)> {
        let mut merger = Merger::new();
        merger.read_all(inputs.iter().map(|bytes| Ok(&bytes[..])))?;
        Ok(merger.finish().unwrap())
    }

    #[test]
    fn inputs_read_side_by_side_merge_as_partials_one_by_one() {
        // More inputs than are read side by side, some holding two
        // partials one after the other, and one an empty partial.
        let parts: Vec<Partial> = (0..150u64)
            .map(|k| {
                let mut names: Vec<String> =
                    (k % 13..k % 13 + k % 9).map(|i| format!("s{i}")).collect();
                names.sort();
                let stations: Vec<_> = names
                    .iter()
                    .map(|n| (n.as_str(), Stats::new(k as i16)))
                    .collect();
                partial(&stations)
            })
            .collect();
        let inputs: Vec<Vec<u8>> = (parts.chunks(2).enumerate())
            .flat_map(|(k, pair)| match k % 3 {
                0 => vec![[pair[0].to_bytes(), pair[1].to_bytes()].concat()],
                _ => pair.iter().map(Partial::to_bytes).collect(),
            })
            .collect();
        assert!(inputs.len() > MERGE_FAN);
        let want = Partial::merge_all(parts).unwrap();
        assert_eq!(read_all(&inputs).unwrap(), want);
        // Totals beyond 64 bits on the way, back within them at the end.
        let n = (i64::MAX / 999) as u64;
        let big = partial(&[("a", stats(999, 999, 999 * n as i64, n))]);
        let (up, down) = (
            partial(&[("a", Stats::new(999))]),
            partial(&[("a", Stats::new(-999))]),
        );
        let inputs = [
            up.to_bytes(),
            big.to_bytes(),
            up.to_bytes(),
            down.to_bytes(),
            down.to_bytes(),
        ];
        let merged = read_all(&inputs).unwrap();
        let expected = stats(-999, 999, 999 * n as i64, n + 4);
        assert!(merged.iter().eq([("a", &expected)]));
        let mut merger = Merger::new();
        merger
            .read_all(inputs[..3].iter().map(|b| Ok(&b[..])))
            .unwrap();
        assert!(matches!(merger.finish(), Err(OverflowError::Sum { .. })));
    }

    #[test]
    fn the_first_input_with_a_fault_is_reported_whichever_is_read_first() {
        let rows = |n: usize| -> Vec<(String, Stats)> {
            (0..n)
                .map(|i| (format!("s{i:04}"), Stats::new(1)))
                .collect()
        };
        let bytes = |rows: &[(String, Stats)]| {
            let stations: Vec<_> = rows.iter().map(|(n, s)| (n.as_str(), s.clone())).collect();
            partial(&stations).to_bytes()
        };
        // A fault on the given line of a partial of `n` rows: a count of 0.
        let faulty = |n: usize, line: usize| {
            let text = String::from_utf8(bytes(&rows(n))).unwrap();
            let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
            lines[line - 1] = lines[line - 1].replace(",1,1,1,1", ",0,1,1,1");
            (lines.join("\n") + "\n").into_bytes()
        };
        let line_of = |e: &PartialError| match e {
            PartialError::Line { line, .. } => *line,
            other => panic!("{other:?}"),
        };
        let good = bytes(&rows(50));
        // The second input's fault comes first in the merged order, the
        // first input's later in its own.
        let inputs = [faulty(50, 40), faulty(50, 4), good.clone()];
        let (k, e) = read_all(&inputs).unwrap_err();
        assert_eq!((k, line_of(&e)), (0, 40));
        // A fault in the first input's second partial.
        let inputs = [[good.clone(), faulty(50, 30)].concat(), faulty(50, 3)];
        let (k, e) = read_all(&inputs).unwrap_err();
        assert_eq!((k, line_of(&e)), (0, 52 + 30));
        // An input that cannot be opened, after a faulty one and before one.
        let opened: Vec<io::Result<&[u8]>> = vec![
            Ok(&good[..]),
            Err(io::Error::other("cannot open")),
            Ok(&inputs[1][..]),
        ];
        let (k, e) = Merger::new().read_all(opened).unwrap_err();
        assert!(k == 1 && matches!(e, PartialError::Io(_)), "{k} {e:?}");
        let opened: Vec<io::Result<&[u8]>> = vec![Ok(&inputs[1][..]), Err(io::Error::other("x"))];
        let (k, e) = Merger::new().read_all(opened).unwrap_err();
        assert_eq!((k, line_of(&e)), (0, 3));
        // Nothing is merged in from inputs that fail.
        let mut merger = Merger::new();
        merger.read(&good[..]).unwrap();
        assert!(merger.read_all([Ok(&inputs[1][..])]).is_err());
        assert_eq!(merger.finish().unwrap(), Partial::parse(&good).unwrap());
    }
}

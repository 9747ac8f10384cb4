//! Partials on random inputs: the partials of any pieces of an input,
//! written, read back and merged in any order or merge tree, are the
//! partial of the whole, and finish into what `naive` gives on the whole;
//! any valid partial reads back as itself; a cut partial is refused.

use std::collections::BTreeMap;
use std::io::Read;

use brc::partial::{Merger, PartialError};
use brc::{aggregate, Engine, Options, Partial, Stats, Summary};
use proptest::prelude::*;
use proptest::sample::Index;
use support::{merge_tree, name, rows, text};

mod support;

/// A reader that hands out at most a few bytes per call, so that lines
/// straddle every buffer boundary.
struct Trickle<'a>(&'a [u8], usize);

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.len().min(buf.len()).min(self.1);
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

proptest! {
    /// Rows dealt into random pieces, each aggregated by a random engine,
    /// written and read back; merged as a random tree, in a shuffled
    /// order, and concatenated into one input.
    #[test]
    fn the_merge_of_the_pieces_partials_is_the_wholes_partial(
        rows in rows(),
        pieces in 1usize..=6,
        deal in prop::collection::vec(any::<Index>(), 120),
        engines in prop::collection::vec(prop::sample::select(Engine::ALL.to_vec()), 6),
        threads in 1usize..=3,
        chunk_size in prop::sample::select(vec![1usize, 16, 4 << 20]),
        final_newline in any::<bool>(),
        picks in prop::collection::vec((any::<Index>(), any::<Index>()), 1..=6),
        order in Just((0..6).collect::<Vec<usize>>()).prop_shuffle(),
    ) {
        let options = Options { threads, chunk_size };
        let mut groups = vec![Vec::new(); pieces];
        for (row, i) in rows.iter().zip(&deal) {
            groups[i.index(pieces)].push(row);
        }
        let written: Vec<Vec<u8>> = (groups.iter().zip(&engines))
            .map(|(group, &engine)| {
                let summary = aggregate(&text(group.iter().copied(), final_newline), engine, &options);
                Partial::from(summary.unwrap()).to_bytes()
            })
            .collect();
        let read: Vec<Partial> = written.iter().map(|w| Partial::parse(w).unwrap()).collect();

        let all = text(&rows, final_newline);
        let naive = aggregate(&all, Engine::Naive, &options).unwrap();
        let whole = Partial::from(naive.clone());
        prop_assert_eq!(&merge_tree(read.clone(), &picks), &whole);
        let shuffled = order.iter().filter_map(|&i| read.get(i).cloned());
        prop_assert_eq!(&Partial::merge_all(shuffled).unwrap(), &whole);
        prop_assert_eq!(&Partial::parse(&written.concat()).unwrap(), &whole);
        let counted: u64 = whole.iter().map(|(_, s)| s.count).sum();
        prop_assert_eq!(counted, rows.len() as u64);
        prop_assert_eq!(whole.finish(), naive);
    }
}

/// A consistent row: `count` values between `min` and `max`, both among
/// them, adding up to `sum`; counts small and huge.
fn stats() -> impl Strategy<Value = Stats> {
    let count = prop_oneof![1u64..=5, 1u64..=u64::MAX, Just(u64::MAX)];
    // Text values, and the wider ones Parquet brings.
    let value = || prop_oneof![-999i64..=999, -brc::VALUE_LIMIT..=brc::VALUE_LIMIT];
    (value(), value(), count, any::<u64>()).prop_filter_map(
        "no sum of these values fits in an i64",
        |(a, b, count, pick)| {
            let (min, max) = (a.min(b), a.max(b));
            let (min, max) = if count == 1 { (min, min) } else { (min, max) };
            let c = i128::from(count);
            let lo = (i128::from(max) + (c - 1) * i128::from(min)).max(i64::MIN.into());
            let hi = (i128::from(min) + (c - 1) * i128::from(max)).min(i64::MAX.into());
            let sum = lo + i128::from(pick) % (hi - lo + 1).max(1);
            let sum = i64::try_from(sum).ok().filter(|_| lo <= hi)?;
            Some(Stats::of(min, max, sum.into(), count))
        },
    )
}

proptest! {
    /// Any valid partial reads back as itself, however its reader hands
    /// out the bytes; and a cut anywhere but at its end is refused, alone
    /// or followed by another partial.
    #[test]
    fn partials_read_back_and_cuts_are_refused(
        stations in prop::collection::btree_map(name(), stats(), 0..=12),
        trickle in 1usize..=9,
        cut in any::<Index>(),
    ) {
        let stations: BTreeMap<String, Stats> = stations;
        let partial = Partial::from(stations.into_iter().collect::<Summary>());
        let bytes = partial.to_bytes();
        prop_assert_eq!(&Partial::parse(&bytes).unwrap(), &partial);
        let mut merger = Merger::new();
        merger.read(Trickle(&bytes, trickle)).unwrap();
        prop_assert_eq!(&merger.finish().unwrap(), &partial);

        let cut = cut.index(bytes.len());
        let cut_alone = Partial::parse(&bytes[..cut]);
        prop_assert!(matches!(cut_alone, Err(PartialError::Line { .. })), "{:?}", cut_alone);
        if cut > 0 {
            let glued = [&bytes[..cut], &bytes[..]].concat();
            let glued = Partial::parse(&glued);
            prop_assert!(matches!(glued, Err(PartialError::Line { .. })), "{:?}", glued);
        }
    }
}

/// A text partial's station name may hold `\r`, which a delimited file's
/// key never does: merged with a delimited partial, it is written as a
/// `v2` key, and must read back.
#[test]
fn a_station_name_with_a_carriage_return_reads_back_from_v2() {
    let text = "brc-partial v1 stations=1\nstation,count,sum,min,max\n\"a\rb\",1,5,5,5\n";
    let delimited = "brc-partial v2 keys=1 scale=1\nkey,count,sum,min,max,missing\nz,1,7,7,7,0\n";
    let merged = Partial::parse(text.as_bytes())
        .unwrap()
        .merge(Partial::parse(delimited.as_bytes()).unwrap())
        .unwrap();
    let bytes = merged.to_bytes();
    assert!(bytes.starts_with(b"brc-partial v2"));
    assert_eq!(Partial::parse(&bytes).unwrap(), merged);
}

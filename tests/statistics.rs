//! Statistics on random inputs: every engine, asked for every statistic,
//! prints what a model computes from each station's sorted values; and
//! the partials of any pieces of the input, each keeping what the
//! statistics need, merge in any order or tree into the partial of the
//! whole, which prints the same bytes.

use std::collections::BTreeMap;
use std::io::Write;

use brc::output::{self, Format};
use brc::{Engine, Inputs, Kept, Options, Partial, Source, Statistics, Summary};
use proptest::prelude::*;
use proptest::sample::Index;
use support::{merge_tree, rows, text};

mod support;

/// Every statistic, and percentiles at the ends and between.
const ALL: &str = "count,sum,min,max,mean,stddev,stddev_pop,median,p0.1,p1,p25,p90,p99,p99.9";

/// Aggregates `bytes` as a file, with `engine`, keeping `kept`.
fn aggregate(bytes: &[u8], engine: Engine, options: &Options, kept: Kept) -> Summary {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(bytes).unwrap();
    let inputs = Inputs::new([Source::File(file.path().into())]).keeping(kept);
    inputs.aggregate(engine, options).unwrap()
}

/// Tenths as the output writes them.
fn tenths(t: i128) -> String {
    let sign = if t < 0 { "-" } else { "" };
    format!("{sign}{}.{}", t.unsigned_abs() / 10, t.unsigned_abs() % 10)
}

/// The square root of `num / den` rounded half up, found from the float
/// root and checked by its definition: `(2r − 1)²·den ≤ 4·num < (2r +
/// 1)²·den`.
fn root(num: u128, den: u128) -> u128 {
    let guess = ((num as f64 / den as f64).sqrt()).round() as u128;
    let fits = |r: u128| {
        let lo = r.checked_sub(1).map_or(0, |_| (2 * r - 1).pow(2) * den);
        lo <= 4 * num && 4 * num < (2 * r + 1).pow(2) * den
    };
    (guess.saturating_sub(2)..guess + 3)
        .find(|&r| fits(r))
        .expect("a root near the float's")
}

/// The official line of every statistic in [`ALL`], from each station's
/// sorted values.
fn model(rows: &[(String, i16)]) -> String {
    let mut values: BTreeMap<&str, Vec<i128>> = BTreeMap::new();
    for (name, t) in rows {
        values.entry(name).or_default().push((*t).into());
    }
    let stations: Vec<String> = (values.iter_mut())
        .map(|(name, v)| {
            v.sort_unstable();
            let n = v.len() as i128;
            let sum: i128 = v.iter().sum();
            let squares: i128 = v.iter().map(|t| t * t).sum();
            let x = (sum as f64 / 10.0) / n as f64 * 10.0;
            let mean = if x - x.floor() >= 0.5 {
                x.floor() + 1.0
            } else {
                x.floor()
            };
            let spread = (n * squares - sum * sum) as u128;
            let sample = match n {
                1 => "-".to_string(),
                _ => tenths(root(spread, (n * (n - 1)) as u128) as i128),
            };
            let population = tenths(root(spread, (n * n) as u128) as i128);
            // The element ceil(q·n), q = per / 1000.
            let at = |per: i128| tenths(v[((per * n + 999) / 1000 - 1) as usize]);
            let quantiles: Vec<String> = [500, 1, 10, 250, 900, 990, 999].map(at).into();
            format!(
                "{name}={n}/{}/{}/{}/{}/{sample}/{population}/{}",
                tenths(sum),
                tenths(v[0]),
                tenths(v[v.len() - 1]),
                tenths(mean as i128),
                quantiles.join("/")
            )
        })
        .collect();
    format!("{{{}}}\n", stations.join(", "))
}

/// The official line of `summary` with every statistic.
fn shown(summary: Summary) -> String {
    let summary = summary.with_statistics(Statistics::parse(ALL).unwrap());
    String::from_utf8(output::render(&summary.unwrap(), Format::Official)).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every engine, at any threads and chunk size, as the model says.
    #[test]
    fn every_engine_shows_what_a_model_of_sorted_values_gives(
        rows in rows(),
        engine in prop::sample::select(Engine::ALL.to_vec()),
        threads in 1usize..=3,
        chunk_size in prop::sample::select(vec![1usize, 16, 4 << 20]),
        final_newline in any::<bool>(),
    ) {
        let options = Options { threads, chunk_size };
        let summary = aggregate(&text(&rows, final_newline), engine, &options, Kept::Counts);
        prop_assert_eq!(summary.kept(), Kept::Counts);
        prop_assert_eq!(shown(summary), model(&rows));
    }

    /// Rows dealt into pieces, each aggregated by a random engine keeping
    /// everything, written and read back, merged as a random tree and in a
    /// shuffled order: the partial of the whole, and the same statistics.
    #[test]
    fn the_pieces_partials_merge_into_the_wholes_statistics(
        rows in rows(),
        pieces in 1usize..=5,
        deal in prop::collection::vec(any::<Index>(), 120),
        engines in prop::collection::vec(prop::sample::select(Engine::ALL.to_vec()), 5),
        picks in prop::collection::vec((any::<Index>(), any::<Index>()), 1..=5),
        order in Just((0..5).collect::<Vec<usize>>()).prop_shuffle(),
    ) {
        let options = Options { threads: 2, chunk_size: 16 };
        let mut groups = vec![Vec::new(); pieces];
        for (row, i) in rows.iter().zip(&deal) {
            groups[i.index(pieces)].push(row.clone());
        }
        let written: Vec<Vec<u8>> = (groups.iter().zip(&engines))
            .map(|(group, &engine)| {
                let summary = aggregate(&text(group, true), engine, &options, Kept::Counts);
                Partial::from(summary).to_bytes()
            })
            .collect();
        let read: Vec<Partial> = written.iter().map(|w| Partial::parse(w).unwrap()).collect();
        let whole = Partial::from(aggregate(&text(&rows, true), Engine::Naive, &options, Kept::Counts));
        prop_assert_eq!(&merge_tree(read.clone(), &picks), &whole);
        let shuffled = order.iter().filter_map(|&i| read.get(i).cloned());
        prop_assert_eq!(&Partial::merge_all(shuffled).unwrap(), &whole);
        prop_assert_eq!(&Partial::parse(&written.concat()).unwrap(), &whole);
        prop_assert_eq!(Partial::parse(&whole.to_bytes()).unwrap().to_bytes(), whole.to_bytes());
        prop_assert_eq!(shown(whole.finish()), model(&rows));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Stations of hundreds of rows each, whose counts become windows of
    /// bins, which the keeping engine adds to some rows behind their
    /// lookup: every engine, any threads and chunk size, as the model
    /// says; and a faulty line after them, or among them, reported where
    /// `naive` reports it.
    #[test]
    fn stations_counted_in_windows_show_what_the_model_gives(
        names in prop::collection::vec("[a-z]{1,20}", 1..=4),
        picks in prop::collection::vec((any::<Index>(), -120i16..=120), 300..=1500),
        threads in 1usize..=3,
        chunk_size in prop::sample::select(vec![16usize, 4096, 4 << 20]),
        bad_at in any::<Index>(),
    ) {
        let rows: Vec<(String, i16)> = (picks.iter())
            .map(|(i, t)| (names[i.index(names.len())].clone(), *t))
            .collect();
        let options = Options { threads, chunk_size };
        let bytes = text(&rows, true);
        for engine in Engine::ALL {
            let summary = aggregate(&bytes, engine, &options, Kept::Counts);
            prop_assert_eq!(shown(summary), model(&rows), "{:?}", engine);
        }
        // A line without its `;` at the end, or inside, twice: there the
        // scanners read it and the next line as one row, whose name holds
        // a `\n`.
        let inside = |at: usize| {
            let lines: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').collect();
            let at = at.min(lines.len());
            [&lines[..at].concat()[..], b"bad line\n", &lines[at..].concat(), b"bad line\n"].concat()
        };
        for faulty in [[&bytes[..], b"bad line\n"].concat(), inside(bad_at.index(rows.len()))] {
            let want = brc::aggregate_keeping(&faulty, Kept::Counts, Engine::Naive, &options);
            prop_assert!(want.is_err());
            for engine in Engine::ALL {
                let got = brc::aggregate_keeping(&faulty, Kept::Counts, engine, &options);
                prop_assert_eq!(&got, &want, "{:?}", engine);
            }
        }
    }
}

#[test]
fn partials_keeping_less_merge_into_what_both_keep() {
    let options = Options::default();
    let rows = b"a;1.0\na;2.0\nb;-3.5\n";
    let keeping = |kept| Partial::from(aggregate(rows, Engine::Fast, &options, kept));
    let counts = keeping(Kept::Counts);
    let squares = keeping(Kept::Squares);
    let basic = keeping(Kept::Basic);
    let merged = counts.clone().merge(squares.clone()).unwrap();
    assert_eq!(merged.clone().finish().kept(), Kept::Squares);
    let stddev = merged
        .finish()
        .with_statistics(Statistics::parse("stddev").unwrap());
    let line = output::render(&stddev.unwrap(), Format::Official);
    assert_eq!(String::from_utf8(line).unwrap(), "{a=0.6, b=0.0}\n");
    let summary = counts.merge(basic).unwrap().finish();
    assert_eq!(summary.kept(), Kept::Basic);
    let refused = summary.with_statistics(Statistics::parse("min,median").unwrap());
    let message = refused.unwrap_err().to_string();
    assert!(
        message.starts_with("median needs each key's counts per value"),
        "{message}"
    );
    let v3 = String::from_utf8(squares.to_bytes()).unwrap();
    assert_eq!(
        v3,
        "brc-partial v3 keys=2 scale=1\nkey,count,sum,min,max,squares\na,2,30,10,20,500\nb,1,-35,-35,-35,1225\n"
    );
}

/// The stats of `values` (units) keeping counts: what a run must give.
fn kept_stats(values: &[i64]) -> brc::Stats {
    let mut s = brc::Stats::keeping(Kept::Counts, values[0]);
    values[1..].iter().for_each(|&v| s.add(v));
    s
}

/// Groups `(key, units)` pairs by key.
fn by_key(rows: &[(String, i64)]) -> BTreeMap<String, Vec<i64>> {
    let mut keys: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for (k, v) in rows {
        keys.entry(k.clone()).or_default().push(*v);
    }
    keys
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// A CSV file whose values have 0 to 3 decimals (so that the table's
    /// scale, and every kept count, moves as finer values arrive) keeps
    /// each key's values exactly at the finest scale.
    #[test]
    fn a_delimited_run_keeps_every_value_at_the_finest_scale(
        rows in prop::collection::vec(
            (prop::sample::select(vec!["a", "b", "c"]), -99_999i64..=99_999, 0u32..=3),
            1..150,
        ),
        threads in 1usize..=3,
        chunk_size in prop::sample::select(vec![1usize, 64, 4 << 20]),
    ) {
        let mut csv = String::from("k,v\n");
        for (k, v, scale) in &rows {
            let p = 10i64.pow(*scale);
            let sign = if *v < 0 { "-" } else { "" };
            match scale {
                0 => csv.push_str(&format!("{k},{v}\n")),
                _ => csv.push_str(&format!("{k},{sign}{}.{:0w$}\n", v.abs() / p, v.abs() % p, w = *scale as usize)),
            }
        }
        let finest = rows.iter().map(|r| r.2).max().unwrap();
        let units: Vec<(String, i64)> = (rows.iter())
            .map(|(k, v, s)| (k.to_string(), v * 10i64.pow(finest - s)))
            .collect();
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(csv.as_bytes()).unwrap();
        let dialect = brc::Dialect::csv(vec![brc::Column::parse("k")], brc::Column::parse("v"));
        let inputs = Inputs::new([Source::File(file.path().into())])
            .delimited(dialect)
            .keeping(Kept::Counts);
        let summary = inputs.aggregate(Engine::Fast, &Options { threads, chunk_size }).unwrap();
        prop_assert_eq!(summary.scale(), finest);
        prop_assert_eq!(summary.kept(), Kept::Counts);
        for (key, values) in by_key(&units) {
            prop_assert_eq!(summary.get(&key), Some(&kept_stats(&values)));
        }
    }

    /// A Parquet file, dictionary-encoded or not, keeps each station's
    /// values (the dictionary path gives basic stats only, so the plain
    /// path reads it).
    #[test]
    fn a_parquet_run_keeps_every_value(
        rows in prop::collection::vec(
            (prop::sample::select(vec!["x", "y", "São Paulo"]), -999_999i64..=999_999),
            1..300,
        ),
        dictionary in any::<bool>(),
        threads in 1usize..=3,
    ) {
        let layout = brc::parquet::write::Layout {
            group_rows: 64,
            page_rows: 16,
            dictionary,
            ..Default::default()
        };
        let mut bytes = Vec::new();
        let values = rows.iter().map(|(k, t)| (k.as_bytes(), *t as f64 / 10.0));
        brc::parquet::write::write(&mut bytes, values, &layout).unwrap();
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(&bytes).unwrap();
        let inputs = Inputs::new([Source::File(file.path().into())]).keeping(Kept::Counts);
        let summary = inputs.aggregate(Engine::Fast, &Options { threads, chunk_size: 1 << 20 }).unwrap();
        prop_assert_eq!(summary.kept(), Kept::Counts);
        let units: Vec<(String, i64)> = rows.iter().map(|(k, t)| (k.to_string(), *t)).collect();
        for (key, values) in by_key(&units) {
            prop_assert_eq!(summary.get(&key), Some(&kept_stats(&values)));
        }
    }
}

/// The line and error of a partial that `Partial::parse` refuses.
fn refused(partial: &str) -> (u64, brc::partial::LineError) {
    match Partial::parse(partial.as_bytes()) {
        Err(brc::partial::PartialError::Line { line, kind }) => (line, kind),
        other => panic!("{other:?}"),
    }
}

#[test]
fn v3_rows_are_checked_against_what_values_give() {
    use brc::partial::LineError;
    let counts = |rows: &str| {
        let n = rows.lines().count();
        format!("brc-partial v3 keys={n} scale=1\nkey,count,sum,min,max,squares,counts\n{rows}")
    };
    let squares = |rows: &str| {
        let n = rows.lines().count();
        format!("brc-partial v3 keys={n} scale=1\nkey,count,sum,min,max,squares\n{rows}")
    };
    let ok = counts("a,3,30,0,20,500,0:1 10:1 20:1\nb,1,-5,-5,-5,25,-5:1\n");
    let partial = Partial::parse(ok.as_bytes()).unwrap();
    assert_eq!(String::from_utf8(partial.to_bytes()).unwrap(), ok);
    assert!(Partial::parse(squares("a,3,30,0,20,500\n").as_bytes()).is_ok());
    let detail = |what: &str| LineError::Detail { what: what.into() };
    let pairs = |found: &str| LineError::Counts {
        found: found.as_bytes().to_vec(),
    };
    for (rows, line, kind) in [
        // Counts that do not add up to the row, or are out of order.
        (
            "a,3,30,0,20,500,0:1 10:2\n",
            3,
            detail("counts per value of 3 values adding up to 20, not 3 adding up to 30"),
        ),
        ("a,3,30,0,20,500,0:1 20:1 10:1\n", 3, pairs("10:1")),
        ("a,3,30,0,20,500,0:1 10:1 10:1\n", 3, pairs("10:1")),
        ("a,2,10,0,10,100,0:0 10:2\n", 3, pairs("0:0")),
        ("a,2,10,0,10,100,0:1 x:1\n", 3, pairs("x:1")),
        ("a,2,10,0,10,100,0:1  10:1\n", 3, pairs("")),
        (
            "a,2,20,5,15,250,0:1 20:1\n",
            3,
            detail("counts per value from 0 to 20, not from min 5 to max 15"),
        ),
        (
            "a,2,10,0,10,101,0:1 10:1\n",
            3,
            detail("a sum of squares 101, where the counts per value give 100"),
        ),
        (
            "a,2,10,0,10,0100,0:1 10:1\n",
            3,
            LineError::NotInteger {
                field: "squares",
                found: b"0100".to_vec(),
            },
        ),
    ] {
        assert_eq!(refused(&counts(rows)), (line, kind), "{rows}");
    }
    // Without counts: bounds any values meet.
    let impossible = "a sum of squares 49 that no 2 values from 0 to 10 adding up to 10 give";
    assert_eq!(
        refused(&squares("a,2,10,0,10,49\n")),
        (3, detail(impossible))
    );
    let impossible = "a sum of squares 201 that no 2 values from 0 to 10 adding up to 10 give";
    assert_eq!(
        refused(&squares("a,2,10,0,10,201\n")),
        (3, detail(impossible))
    );
    let one = "a sum of squares 26 that no 1 values from -5 to -5 adding up to -5 give";
    assert_eq!(refused(&squares("a,1,-5,-5,-5,26\n")), (3, detail(one)));
    // Columns of no kind, and a row with fields missing.
    let (line, kind) = refused("brc-partial v3 keys=0 scale=1\nkey,count,sum,min,max,counts\n");
    assert_eq!(line, 2);
    assert!(matches!(kind, LineError::Columns { .. }), "{kind:?}");
    let (line, kind) = refused(&counts("a,2,10,0,10,100\n"));
    assert_eq!(
        (line, kind),
        (
            3,
            LineError::Fields {
                expected: 7,
                found: 6
            }
        )
    );
    // A key whose every value was missing keeps nothing but its count.
    let missing = "brc-partial v3 keys=1 scale=2\nkey,count,sum,min,max,missing,squares,counts\nk,0,0,,,4,0,\n";
    let partial = Partial::parse(missing.as_bytes()).unwrap();
    assert_eq!(String::from_utf8(partial.to_bytes()).unwrap(), missing);
    let (line, kind) = refused(&missing.replace(",4,0,", ",4,1,"));
    assert_eq!(line, 3);
    assert!(matches!(kind, LineError::Detail { .. }), "{kind:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Bytes from the grammar's alphabet, valid or not (two lines read as
    /// one, a name without its `;`, a value cut short): every engine
    /// keeping a sum of squares or counts per value gives `naive`'s
    /// summary or error.
    #[test]
    fn keeping_engines_agree_with_naive_on_any_bytes(
        tokens in prop::collection::vec(prop::sample::select(vec![
            "a", "bc", "\u{e9}", "0123456789abcdef", ";", ";", "\n", "\n", "1.0\n", "-9.9\n",
            "99.9\n", "1.", "\u{0}", "a;1.0\n", "b;-0.5\n",
        ]), 0..60),
        threads in 1usize..=3,
        chunk_size in prop::sample::select(vec![1usize, 7, 64, 4 << 20]),
        kept in prop::sample::select(vec![Kept::Squares, Kept::Counts]),
    ) {
        let options = Options { threads, chunk_size };
        let bytes = tokens.concat().into_bytes();
        let want = brc::aggregate_keeping(&bytes, kept, Engine::Naive, &options);
        for engine in Engine::ALL {
            let got = brc::aggregate_keeping(&bytes, kept, engine, &options);
            prop_assert_eq!(&got, &want, "{:?}", engine);
        }
    }
}

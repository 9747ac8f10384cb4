//! The delimited reader against a model: random files with every quoting
//! case, read through bytes in memory and streams, with every mask
//! builder, thread count and chunk size, give the model's stats; bad
//! files give their first fault's line and column (`faults`).

use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;

use super::masks::Masks;
use super::run::aggregate_with;
use super::{CellError, Column, DelimitedError, Dialect};
use crate::detail::Kept;
use crate::driver::{Bytes, Content, Held, RunError};
use crate::engine::Options;
use crate::error::Error;
use crate::stats::Stats;
use crate::summary::Summary;

mod faults;

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn masks() -> Vec<Masks> {
    Masks::all()
}

/// Quotes `cell` as RFC 4180 does, always or when it must.
fn quoted(cell: &str, always: bool) -> String {
    if always || cell.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", cell.replace('"', "\"\""))
    } else {
        cell.to_string()
    }
}

/// A random file of `rows` rows (`note,site,reading`) and the model's
/// summary of it: every value at the file's largest scale.
fn file(seed: u64, rows: usize) -> (Vec<u8>, Summary) {
    let mut rng = Rng(seed | 1);
    let sites = ["Oslo", "Kraków, PL", "say \"hi\"", "a|b", "é", "x y"];
    let mut text = String::from("note,site,reading");
    let crlf = rng.below(2) == 0;
    let eol = if crlf { "\r\n" } else { "\n" };
    text.push_str(eol);
    let mut values: Vec<(usize, Option<(i64, u32)>)> = Vec::new();
    for _ in 0..rows {
        let site = rng.below(sites.len() as u64) as usize;
        let note = match rng.below(4) {
            0 => "two\nlines, \"quoted\"".to_string(),
            1 => String::new(),
            _ => format!("n{}", rng.below(1000)),
        };
        let (cell, value) = match rng.below(12) {
            0 => ("".to_string(), None),
            1 => ("NA".to_string(), None),
            _ => {
                let scale = rng.below(4) as u32;
                let units = rng.below(2_000_001) as i64 - 1_000_000;
                let p = 10i64.pow(scale);
                let sign = if units < 0 { "-" } else { "" };
                let (whole, frac) = (units.abs() / p, units.abs() % p);
                let cell = match scale {
                    0 => format!("{sign}{whole}"),
                    s => format!("{sign}{whole}.{frac:0w$}", w = s as usize),
                };
                (cell, Some((units, scale)))
            }
        };
        let always = rng.below(3) == 0;
        let row = [
            quoted(&note, always),
            quoted(sites[site], always),
            quoted(&cell, always && rng.below(2) == 0),
        ];
        text.push_str(&row.join(","));
        text.push_str(eol);
        values.push((site, value));
    }
    if rng.below(2) == 0 {
        text.truncate(text.len() - eol.len());
    }
    let scale = values
        .iter()
        .filter_map(|v| v.1.map(|v| v.1))
        .max()
        .unwrap_or(0);
    let mut model: BTreeMap<&str, Stats> = BTreeMap::new();
    for (site, value) in values {
        let s = match value {
            None => Stats::missing(),
            Some((units, s)) => Stats::new(units * 10i64.pow(scale - s)),
        };
        model
            .entry(sites[site])
            .and_modify(|m| m.merge(&s))
            .or_insert(s);
    }
    let summary: Summary = model.into_iter().collect();
    (
        text.into_bytes(),
        summary.at_scale(scale).counting_missing(true),
    )
}

fn dialect() -> Dialect {
    Dialect::csv(vec![Column::Position(2)], Column::Position(3))
}

fn read(bytes: &[u8], stream: bool, options: &Options, masks: Masks) -> Result<Summary, RunError> {
    read_as(bytes, &dialect(), stream, options, masks)
}

/// The stats of `contents` in `dialect`, keeping the basic stats.
fn aggregate<'a>(
    contents: impl Iterator<Item = (usize, std::io::Result<Content<'a>>)>,
    dialect: &Dialect,
    options: &Options,
    masks: Masks,
) -> Result<Summary, RunError> {
    aggregate_with(
        contents,
        dialect,
        options,
        &AtomicU64::new(0),
        Kept::Basic,
        masks,
    )
}

/// [`read`] in `dialect`.
fn read_as(
    bytes: &[u8],
    dialect: &Dialect,
    stream: bool,
    options: &Options,
    masks: Masks,
) -> Result<Summary, RunError> {
    let content = match stream {
        true => Content::Stream(Box::new(bytes)),
        false => Content::Bytes(Bytes {
            held: Held::Slice(bytes),
            lo: 0,
            window: 0..usize::MAX,
            rest: 0,
        }),
    };
    let contents = std::iter::once((0, Ok(content)));
    aggregate(contents, dialect, options, masks)
}

#[test]
fn random_files_read_as_the_model_says_however_they_are_cut() {
    for seed in 1..40 {
        let (bytes, want) = file(seed, 1 + seed as usize * 7);
        for masks in masks() {
            for (threads, chunk_size) in [(1, 1 << 20), (2, 1), (3, 17), (2, 64), (4, 200)] {
                let options = Options {
                    threads,
                    chunk_size,
                };
                for stream in [false, true] {
                    let got = read(&bytes, stream, &options, masks).unwrap();
                    assert_eq!(
                        got, want,
                        "seed {seed} {masks:?} {options:?} stream {stream}"
                    );
                }
            }
        }
    }
}

/// A null that reads as a number (`--null -9.99`) is a missing value, not
/// a value, and a value with spaces or a tab around it is read trimmed,
/// on every path; without that null, `-9.99` is a value.
#[test]
fn numeric_nulls_are_missing_and_values_are_trimmed() {
    // All at one scale, so that none is left to the general path for
    // its scale alone.
    let cells = ["-9.99", " 2.50", "3.00 \t", "1.25", "\t-4.50 "];
    let units = [-999, 250, 300, 125, -450];
    let mut text = String::from("site,reading\n");
    for i in 0..300 {
        text.push_str(&format!("{},{}\n", ["a", "b"][i % 2], cells[i % 5]));
    }
    for numeric in [true, false] {
        let mut model: BTreeMap<&str, Stats> = BTreeMap::new();
        for i in 0..300 {
            let s = match (numeric, i % 5) {
                (true, 0) => Stats::missing(),
                (_, c) => Stats::new(units[c]),
            };
            let site = ["a", "b"][i % 2];
            model.entry(site).and_modify(|m| m.merge(&s)).or_insert(s);
        }
        let want = (model.into_iter().collect::<Summary>())
            .at_scale(2)
            .counting_missing(true);
        let mut dialect = Dialect::csv(vec![Column::Position(1)], Column::Position(2));
        if numeric {
            dialect.nulls.push("-9.99".into());
        }
        for masks in masks() {
            for (threads, chunk_size) in [(1, 1 << 20), (2, 64)] {
                let options = Options {
                    threads,
                    chunk_size,
                };
                for stream in [false, true] {
                    let got = read_as(text.as_bytes(), &dialect, stream, &options, masks);
                    assert_eq!(
                        got.unwrap(),
                        want,
                        "{numeric} {masks:?} {options:?} {stream}"
                    );
                }
            }
        }
    }
}

/// A column that is both the value and the key, or the key's first part,
/// is read as each; the rows are many, so that most take the window path.
#[test]
fn a_column_both_key_and_value_is_read_as_each() {
    let rows = [
        ("x", "1.5", 150),
        ("y", "1.5", 150),
        ("x", "-2.25", -225),
        ("z", "7", 700),
    ];
    let mut text = String::from("label,reading\n");
    for (label, reading, _) in rows.iter().cycle().take(200) {
        text.push_str(&format!("{label},{reading}\n"));
    }
    let both = [Column::Position(2), Column::Position(1)];
    for parts in [1, 2] {
        let mut model: BTreeMap<String, Stats> = BTreeMap::new();
        for (label, reading, units) in rows.iter().cycle().take(200) {
            let key = match parts {
                1 => reading.to_string(),
                _ => format!("{reading}|{label}"),
            };
            let s = Stats::new(*units);
            model.entry(key).and_modify(|m| m.merge(&s)).or_insert(s);
        }
        let want: Summary = model.into_iter().collect();
        let want = want.at_scale(2).counting_missing(true);
        let dialect = Dialect::csv(both[..parts].to_vec(), Column::Position(2));
        for masks in masks() {
            for stream in [false, true] {
                let got = read_as(
                    text.as_bytes(),
                    &dialect,
                    stream,
                    &Options::default(),
                    masks,
                );
                assert_eq!(got.unwrap(), want, "{parts} {masks:?} {stream}");
            }
        }
    }
}

#[test]
fn headers_must_name_the_columns_and_agree_across_files() {
    let options = Options::default();
    let named = Dialect::csv(vec![Column::Name("site".into())], Column::Position(2));
    let failed = read_as(b"a,b\n1,2\n", &named, false, &options, Masks::best());
    let failed = failed.unwrap_err();
    let Error::Delimited(e) = failed.error else {
        panic!()
    };
    assert_eq!(
        e.kind,
        CellError::MissingColumn {
            column: "`site`".into(),
            found: vec!["a".into(), "b".into()],
        }
    );
    assert_eq!(
        e.to_string(),
        "line 1: expected a column `site`, found columns a, b"
    );
    let two = [&b"n,site,v\n1,a,2\n"[..], b"n,site,w\n1,a,2\n"];
    let contents = two.iter().enumerate().map(|(i, b)| {
        let bytes = Bytes {
            held: Held::Slice(b),
            lo: 0,
            window: 0..usize::MAX,
            rest: 0,
        };
        (i, Ok(Content::Bytes(bytes)))
    });
    let failed = aggregate(contents, &dialect(), &options, Masks::best());
    let failed = failed.unwrap_err();
    assert_eq!(failed.input, 1);
    assert_eq!(
        failed.error.to_string(),
        "line 1: expected the header of the first file, found another one"
    );
}

#[test]
fn a_column_twice_in_the_key_is_refused() {
    let options = Options::default();
    let twice = [
        vec![Column::Name("site".into()), Column::Name("site".into())],
        vec![Column::Name("site".into()), Column::Position(2)],
        vec![
            Column::Position(1),
            Column::Name("site".into()),
            Column::Position(2),
        ],
    ];
    for key in twice {
        let dialect = Dialect::csv(key, Column::Position(3));
        let bytes = b"n,site,v\n1,a,2\n";
        let failed = read_as(bytes, &dialect, false, &options, Masks::best()).unwrap_err();
        assert_eq!(
            failed.error.to_string(),
            "line 1: expected each key column once, found column 2 (`site`) twice"
        );
    }
}

#[test]
fn windows_read_each_row_once_between_them() {
    let (bytes, want) = file(7, 300);
    for cuts in [2usize, 3, 7] {
        let step = bytes.len().div_ceil(cuts);
        let mut merged: BTreeMap<String, Stats> = BTreeMap::new();
        let mut scale = 0;
        for k in 0..cuts {
            let window = k * step..((k + 1) * step).min(bytes.len());
            let content = Content::Bytes(Bytes {
                held: Held::Slice(&bytes),
                lo: 0,
                window: if k + 1 == cuts {
                    window.start..usize::MAX
                } else {
                    window
                },
                rest: 0,
            });
            let options = Options {
                threads: 2,
                chunk_size: 50,
            };
            let contents = std::iter::once((0, Ok(content)));
            let got = aggregate(contents, &dialect(), &options, Masks::best());
            let got = got.unwrap().rescaled(want.scale()).unwrap();
            scale = got.scale();
            for (name, s) in got.iter() {
                merged
                    .entry(name.into())
                    .and_modify(|m| m.merge(s))
                    .or_insert(s.clone());
            }
        }
        let merged: Summary = merged.into_iter().collect();
        assert_eq!(
            merged.at_scale(scale).counting_missing(true),
            want,
            "{cuts} cuts"
        );
    }
}

#[test]
fn a_header_only_stream_ends_after_its_first_row_whatever_the_reads() {
    use std::io::Read;
    // A line feed inside quotes ends no row; reads of one byte up to all.
    let text = b"\"a\nb\",\"c\"\"\"\nx,1\ny,2\n";
    let header = b"\"a\nb\",\"c\"\"\"\n";
    for step in [1, 2, 5, text.len()] {
        let mut reader = super::run::HeaderOnly::new(&text[..]);
        let mut got = Vec::new();
        let mut buf = vec![0; step];
        loop {
            let n = reader.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(got, header, "{step}");
    }
    // A stream of one row without its line feed is all header.
    let mut got = Vec::new();
    super::run::HeaderOnly::new(&b"a,b"[..])
        .read_to_end(&mut got)
        .unwrap();
    assert_eq!(got, b"a,b");
}

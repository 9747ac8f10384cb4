//! The delimited reader against a model: random files with every quoting
//! case, read through bytes in memory and streams, with every mask
//! builder, thread count and chunk size, give the model's stats; bad
//! files give their first fault's line and column.

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
    aggregate_with(
        contents,
        dialect,
        options,
        &AtomicU64::new(0),
        Kept::Basic,
        masks,
    )
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

#[test]
fn a_bad_cell_is_named_by_line_and_column_however_the_file_is_cut() {
    let row = "\"a\nb\",x,1.5\n";
    for (bad, line, column, kind) in [
        ("1,x,1.2.3\n", 4, Some(3), "expected a decimal number"),
        (
            "1,x\n",
            4,
            None,
            "expected 3 cells as in the header, found 2",
        ),
        (
            "1,x,2,3\n",
            4,
            None,
            "expected 3 cells as in the header, found 4",
        ),
        ("1,,2\n", 4, Some(2), "expected a key, found an empty cell"),
        (
            "1,x\"y,2\n",
            4,
            Some(2),
            "expected `\"` only around a quoted cell",
        ),
        (
            "1,\"x\"y,2\n",
            4,
            Some(2),
            "expected a delimiter or the line's end",
        ),
        // The quote closes at the next row's first quote.
        (
            "1,x,\"2\n",
            4,
            Some(3),
            "expected a delimiter or the line's end",
        ),
        (
            "1,x,1234567890123456789\n",
            4,
            Some(3),
            "at most 18 significant digits",
        ),
        (
            "1,x,0.0000000001\n",
            4,
            Some(3),
            "at most 9 digits after the point",
        ),
        (
            "1,x,999999999999999999\n",
            4,
            Some(3),
            "at most 18 digits with 1 decimals",
        ),
    ] {
        let text = format!("t,k,v\n{row}{bad}{row}");
        for masks in masks() {
            for (threads, chunk_size) in [(1, 1 << 20), (2, 3), (3, 16)] {
                let options = Options {
                    threads,
                    chunk_size,
                };
                for stream in [false, true] {
                    let failed = read(text.as_bytes(), stream, &options, masks).unwrap_err();
                    let Error::Delimited(e) = failed.error else {
                        panic!("{:?}", failed.error)
                    };
                    assert_eq!((e.line, e.column), (line, column), "{bad:?} {options:?}");
                    assert!(e.to_string().contains(kind), "{e} {bad:?}");
                }
            }
        }
    }
}

/// A value of 17 digits, then one with 2 decimals: the second brings the
/// scale to 2, at which the first takes 19 digits; or 9 decimals, then 18
/// digits, then a short row; or the 18 digits beside a bad key. Read in
/// chunks, the values land in tables that cannot merge, the short row in
/// a chunk of its own, the bad key in a table at a coarser scale; the
/// error is still the row and cell a reading in order fails at.
#[test]
fn values_of_no_common_scale_fail_at_the_row_an_ordered_read_fails_at() {
    for (text, line, column, found) in [
        (
            "t,k,v\n1,a,99999999999999999\n1,b,1\n1,b,2\n1,c,0.52\n1,b,3\n",
            5,
            3,
            "found `0.52`",
        ),
        (
            "t,k,v\n1,a,0.000000001\n1,b,1\n1,b,258888888888888882\n1,c\n1,b,2\n",
            4,
            3,
            "found `258888888888888882`",
        ),
        (
            "t,k,v\n1,a,0.000000001\n1,b,1\n1,\"x\ry\",258888888888888882\n1,b,2\n",
            4,
            2,
            "expected a key",
        ),
        // A chunk's table, which has not seen line 2, refuses line 6 at
        // 5 decimals; read in order, line 6 is refused at 8.
        (
            "t,k,v\n1,a,0.12345678\n1,b,1\n1,b,2\n1,d,0.12345\n1,c,99999999999999\n",
            6,
            3,
            "with 8 decimals, found `99999999999999`",
        ),
    ] {
        values_of_no_common_scale(text, line, column, found);
    }
}

#[test]
fn rows_skipped_for_want_of_a_common_scale_are_those_an_ordered_read_skips() {
    let mut skipping = dialect();
    skipping.skip_bad_rows = true;
    // A value that a chunk's table, which has not seen line 2, takes at
    // its scale, but that a read in order refuses (and so skips) at line
    // 2's; hundreds of rows between them, so that some thread's table
    // holds the one and not the other.
    let between = "1,b,1\n".repeat(300);
    let texts = [
        format!("t,k,v\n1,a,0.12345678\n{between}1,d,0.12345\n1,c,999999999999\n1,b,7\n"),
        format!("t,k,v\n1,a,99999999999999999\n{between}1,c,0.52\n1,b,3\n"),
    ];
    for text in &texts {
        let one = Options {
            threads: 1,
            chunk_size: 1 << 20,
        };
        let want = read_as(text.as_bytes(), &skipping, false, &one, Masks::best()).unwrap();
        assert_eq!(want.skipped().0, 1);
        for masks in masks() {
            for (threads, chunk_size) in [(2, 16), (3, 64), (2, 200)] {
                let options = Options {
                    threads,
                    chunk_size,
                };
                for stream in [false, true] {
                    for _ in 0..8 {
                        let got = read_as(text.as_bytes(), &skipping, stream, &options, masks);
                        let got = got.unwrap();
                        assert_eq!(got.skipped(), want.skipped(), "{options:?} {stream}");
                        assert_eq!(got, want, "{options:?} {stream}");
                    }
                }
            }
        }
    }
}

fn values_of_no_common_scale(text: &str, line: u64, column: usize, found: &str) {
    for masks in masks() {
        for (threads, chunk_size) in [(1, 1 << 20), (2, 3), (2, 12), (3, 16)] {
            let options = Options {
                threads,
                chunk_size,
            };
            for stream in [false, true] {
                // Each run seeds its tables' hashes anew, which orders
                // their keys.
                for _ in 0..8 {
                    let failed = read(text.as_bytes(), stream, &options, masks).unwrap_err();
                    let Error::Delimited(e) = failed.error else {
                        panic!("{:?}", failed.error)
                    };
                    let at = (e.line, e.column);
                    assert_eq!(at, (line, Some(column)), "{options:?} {stream} {text:?}");
                    assert!(e.to_string().contains(found), "{e}");
                }
            }
        }
    }
}

#[test]
fn a_quote_never_closed_is_named_by_the_line_it_opens_on() {
    let text = b"t,k,v\n1,x,2\n1,x,\"2\n3,y,4\n";
    for masks in masks() {
        for stream in [false, true] {
            let options = Options {
                threads: 2,
                chunk_size: 4,
            };
            let failed = read(text, stream, &options, masks).unwrap_err();
            assert_eq!(
                failed.error.to_string(),
                "line 3, column 3: expected a `\"` closing the quoted cell, found the end of the input"
            );
        }
    }
}

#[test]
fn headers_must_name_the_columns_and_agree_across_files() {
    let options = Options::default();
    let named = Dialect::csv(vec![Column::Name("site".into())], Column::Position(2));
    let content = Content::Bytes(Bytes {
        held: Held::Slice(b"a,b\n1,2\n"),
        lo: 0,
        window: 0..usize::MAX,
        rest: 0,
    });
    let contents = std::iter::once((0, Ok(content)));
    let failed = aggregate_with(
        contents,
        &named,
        &options,
        &AtomicU64::new(0),
        Kept::Basic,
        Masks::best(),
    );
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
    let failed = aggregate_with(
        contents,
        &dialect(),
        &options,
        &AtomicU64::new(0),
        Kept::Basic,
        Masks::best(),
    );
    let failed = failed.unwrap_err();
    assert_eq!(failed.input, 1);
    assert_eq!(
        failed.error.to_string(),
        "line 1: expected the header of the first file, found another one"
    );
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
            let got = aggregate_with(
                contents,
                &dialect(),
                &options,
                &AtomicU64::new(0),
                Kept::Basic,
                Masks::best(),
            );
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
fn bad_rows_skipped_are_counted_and_named_however_the_file_is_cut() {
    let (good, want) = file(11, 200);
    let mut text = String::from_utf8(good).unwrap();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    // Bad rows: no number, too few cells, too many, an empty key.
    let bad = [
        "x,Oslo,abc\n",
        "x,Oslo\n",
        "x,Oslo,1,2\n",
        "x,,1\n",
        "x,é,1.2.3\n",
        "x,é,--1\n",
    ];
    let lines_before = text.matches('\n').count() as u64;
    for b in bad {
        text.push_str(b);
    }
    let mut skipping = dialect();
    skipping.skip_bad_rows = true;
    for masks in masks() {
        for (threads, chunk_size) in [(1, 1 << 20), (2, 7), (3, 100)] {
            let options = Options {
                threads,
                chunk_size,
            };
            for stream in [false, true] {
                let got = read_as(text.as_bytes(), &skipping, stream, &options, masks).unwrap();
                let (count, first) = got.skipped();
                assert_eq!(count, 6, "{options:?} {stream}");
                let lines: Vec<u64> = (1..=5).map(|k| lines_before + k).collect();
                assert_eq!(first, lines.iter().map(|&l| (0, l)).collect::<Vec<_>>());
                assert_eq!(got.skipping(0, Vec::new()), want);
            }
        }
    }
}

#[test]
fn a_fault_of_no_one_row_names_no_line() {
    let kind = CellError::Sum { key: b"a".to_vec() };
    let at = |line, column| {
        DelimitedError {
            line,
            column,
            kind: kind.clone(),
        }
        .to_string()
    };
    assert_eq!(
        at(0, None),
        "the sum of the values of key `a` exceeds 128 bits"
    );
    assert_eq!(
        at(3, None),
        "line 3: the sum of the values of key `a` exceeds 128 bits"
    );
    assert_eq!(
        at(3, Some(2)),
        "line 3, column 2: the sum of the values of key `a` exceeds 128 bits"
    );
}

/// A stream that fails after its bytes.
struct Broken<'a>(&'a [u8]);

impl std::io::Read for Broken<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.0.is_empty() {
            return Err(std::io::Error::other("the stream broke"));
        }
        let n = buf.len().min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

#[test]
fn a_stream_that_breaks_fails_after_the_rows_read_whole_before_it() {
    for (text, line) in [
        // A bad row before the break is the first fault.
        ("a,b,c\nx,y,1\nx,y,z\nx,y,2\n", Some(3)),
        // A row cut by the break is not judged.
        ("a,b,c\nx,y,1\nx,y,z", None),
        ("a,b,c\nx,y,1\n", None),
    ] {
        let contents = std::iter::once((0, Ok(Content::Stream(Box::new(Broken(text.as_bytes()))))));
        let got = aggregate_with(
            contents,
            &dialect(),
            &Options::default(),
            &AtomicU64::new(0),
            Kept::Basic,
            Masks::best(),
        );
        match (got.map(|_| ()).unwrap_err().error, line) {
            (Error::Delimited(e), Some(line)) => assert_eq!(e.line, line, "{text:?}"),
            (Error::Io(e), None) => assert_eq!(e.to_string(), "the stream broke", "{text:?}"),
            (other, _) => panic!("{text:?}: {other:?}"),
        }
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

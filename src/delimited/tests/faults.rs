//! Bad files against a reading in order: a bad cell, a quote never
//! closed, values of no common scale, a sum past 128 bits and a stream
//! that breaks give the line and column a reading in order fails at, and
//! rows skipped with `--on-error skip` are those it skips, however the
//! threads cut the file.

use super::*;

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
        let got = aggregate(contents, &dialect(), &Options::default(), Masks::best());
        match (got.map(|_| ()).unwrap_err().error, line) {
            (Error::Delimited(e), Some(line)) => assert_eq!(e.line, line, "{text:?}"),
            (Error::Io(e), None) => assert_eq!(e.to_string(), "the stream broke", "{text:?}"),
            (other, _) => panic!("{text:?}: {other:?}"),
        }
    }
}

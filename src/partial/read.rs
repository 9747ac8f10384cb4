//! The reader of the `brc-partial` format, versions 1 to 3
//! (docs/PARTIAL-FORMAT.md).
//!
//! It takes nothing on trust: every line is checked against the
//! specification, and every row against what a real input can give (a
//! count of at least 1, values in -999..=999, a sum that count, min and max
//! allow, names sorted and distinct), so that a truncated, corrupted or
//! hand-edited partial is refused with its line instead of merged into a
//! wrong answer.

use std::borrow::Cow;
use std::io::{BufReader, Read};
use std::ops::RangeInclusive;

use compact_str::CompactString;
use num_bigint::BigUint;

use super::fields::{at, fields, integer, Lines};
use super::line::{LineError, MAX_COUNTS_LINE_LEN, MAX_LINE_LEN};
use super::run::Kind;
use super::write::{columns_3, COLUMNS_2, VERSION_2, VERSION_3};
use super::{PartialError, COLUMNS, FORMAT, VERSION};
use crate::detail::{Detail, Kept, Squares};
use crate::error::quoted;
use crate::parse::MAX_NAME_LEN;
use crate::stats::{Stats, MAX_DIGITS, MAX_KEY_LEN, MAX_SCALE, VALUE_LIMIT};

/// Reads partials from `reader` to its end, handing each one's rows to
/// `each`, in order.
pub(super) fn read(
    reader: impl Read,
    each: impl FnMut(Vec<(CompactString, Stats)>, Kind),
) -> Result<(), PartialError> {
    Reader::new(reader).read_on(each)
}

/// The partials of an input, read a row at a time: each partial's first
/// lines by [`Reader::next_partial`], then its rows by
/// [`Reader::next_row`], so that a merge can hold one row of each input
/// instead of whole partials.
pub(super) struct Reader<R> {
    lines: Lines<BufReader<R>>,
    /// Rows the partial being read announced, if one was started.
    stations: Option<u64>,
    /// Its version, scale and columns.
    version: Version,
    /// Its rows not read yet.
    left: u64,
    /// The name of its last row read, to check the order of the next.
    previous: Option<Vec<u8>>,
}

impl<R: Read> Reader<R> {
    pub(super) fn new(reader: R) -> Reader<R> {
        Reader {
            lines: Lines::new(BufReader::with_capacity(64 << 10, reader)),
            stations: None,
            version: Version::V1,
            left: 0,
            previous: None,
        }
    }

    /// Reads the first lines of the next partial: `false` at the end of an
    /// input that held at least one. The rows of the partial before must
    /// all have been read.
    pub(super) fn next_partial(&mut self) -> Result<bool, PartialError> {
        debug_assert_eq!(self.left, 0);
        let (n, line) = self.lines.next()?;
        let (stations, mut version) = match (line, self.stations) {
            (None, Some(_)) => return Ok(false),
            (line, after) => first_line(line, after).map_err(at(n))?,
        };
        let (n, line) = self.lines.next()?;
        let expected = match version {
            Version::V1 => COLUMNS,
            Version::V2 { .. } => COLUMNS_2,
            Version::V3 { scale, .. } => {
                // The columns say whether missing values are counted and
                // what each key keeps.
                let columns = [(false, Kept::Squares), (true, Kept::Squares)]
                    .into_iter()
                    .chain([(false, Kept::Counts), (true, Kept::Counts)]);
                let found = columns
                    .clone()
                    .find(|&(missing, kept)| line == Some(columns_3(missing, kept).as_bytes()));
                if let Some((missing, kept)) = found {
                    version = Version::V3 {
                        scale,
                        missing,
                        kept,
                    };
                }
                let (missing, kept) = found.unwrap_or((true, Kept::Counts));
                columns_3(missing, kept)
            }
        };
        if line != Some(expected.as_bytes()) {
            let found = line.map(quoted);
            return Err(at(n)(LineError::Columns { expected, found }));
        }
        self.version = version;
        (self.stations, self.left, self.previous) = (Some(stations), stations, None);
        Ok(true)
    }

    /// What the rows of the partial being read are.
    pub(super) fn kind(&self) -> Kind {
        match self.version {
            Version::V1 => Kind::default(),
            Version::V2 { scale } => Kind {
                scale,
                missing: true,
                kept: Kept::Basic,
            },
            Version::V3 {
                scale,
                missing,
                kept,
            } => Kind {
                scale,
                missing,
                kept,
            },
        }
    }

    /// How many rows the partial being read announced (0 before the first).
    pub(super) fn stations(&self) -> u64 {
        self.stations.unwrap_or(0)
    }

    /// Reads the input to its end: the rest of the partial being read,
    /// checked and dropped, then each further partial's rows, handed to
    /// `each`.
    pub(super) fn read_on(
        &mut self,
        mut each: impl FnMut(Vec<(CompactString, Stats)>, Kind),
    ) -> Result<(), PartialError> {
        while self.next_row()?.is_some() {}
        while self.next_partial()? {
            let mut rows = Vec::new();
            while let Some(row) = self.next_row()? {
                rows.push(row);
            }
            each(rows, self.kind());
        }
        Ok(())
    }

    /// The next row of the partial being read, checked and in order;
    /// `None` after its last.
    pub(super) fn next_row(&mut self) -> Result<Option<(CompactString, Stats)>, PartialError> {
        let (Some(stations), 1..) = (self.stations, self.left) else {
            return Ok(None);
        };
        let limit = match self.version {
            Version::V3 {
                kept: Kept::Counts, ..
            } => MAX_COUNTS_LINE_LEN,
            _ => MAX_LINE_LEN,
        };
        let (n, line) = self.lines.next_within(limit)?;
        let Some(line) = line else {
            let missing = self.left;
            return Err(at(n)(LineError::MissingRows { missing, stations }));
        };
        let (name, stats) = row(line, self.version).map_err(at(n))?;
        if let Some(previous) = &mut self.previous {
            let name = name.as_bytes();
            if previous[..] >= *name {
                return Err(at(n)(if previous == name {
                    LineError::Duplicate { name: quoted(name) }
                } else {
                    let (name, previous) = (quoted(name), quoted(previous));
                    LineError::Unsorted { name, previous }
                }));
            }
            previous.clear();
            previous.extend_from_slice(name);
        } else {
            self.previous = Some(name.as_bytes().to_vec());
        }
        self.left -= 1;
        Ok(Some((name, stats)))
    }
}

/// A partial's version: `v1` holds tenths; `v2` values at a scale, and
/// missing values; `v3` what the stats beyond the basic ones need, its
/// columns saying whether missing values are counted and what is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Version {
    V1,
    V2 {
        scale: u32,
    },
    V3 {
        scale: u32,
        missing: bool,
        kept: Kept,
    },
}

/// The station count and version of a first line (a `v3` as if it kept
/// counts and counted missing values, until its columns say); `after` is
/// the row count of the partial before it, if any.
fn first_line(line: Option<&[u8]>, after: Option<u64>) -> Result<(u64, Version), LineError> {
    let words = line.and_then(|line| line.strip_prefix(FORMAT.as_bytes())?.strip_prefix(b" "));
    let Some(words) = words else {
        return Err(match (line, after) {
            (Some(line), Some(stations)) => LineError::AfterRows {
                stations,
                found: quoted(line),
            },
            (line, _) => LineError::FirstLine {
                found: line.map(quoted),
            },
        });
    };
    let (version, rest) = words.split_at(memchr::memchr(b' ', words).unwrap_or(words.len()));
    let refused = || LineError::StationCount {
        found: quoted(rest),
    };
    if version == VERSION_2.as_bytes() || version == VERSION_3.as_bytes() {
        let rest = rest.strip_prefix(b" keys=").ok_or_else(refused)?;
        let (count, scale) = rest.split_at(memchr::memchr(b' ', rest).unwrap_or(rest.len()));
        let scale = scale.strip_prefix(b" scale=").ok_or_else(refused)?;
        let count = integer(count, "keys", 0..=u64::MAX.into()).map_err(|_| refused())?;
        let scale = integer(scale, "scale", 0..=i128::from(MAX_SCALE)).map_err(|_| refused())?;
        let scale = scale as u32;
        return Ok((
            count as u64,
            match version == VERSION_2.as_bytes() {
                true => Version::V2 { scale },
                false => Version::V3 {
                    scale,
                    missing: true,
                    kept: Kept::Counts,
                },
            },
        ));
    }
    if version != VERSION.as_bytes() {
        return Err(LineError::Version {
            found: quoted(version),
        });
    }
    let count = rest.strip_prefix(b" stations=");
    let count = count.and_then(|count| integer(count, "stations", 0..=u64::MAX.into()).ok());
    count
        .map(|count| (count as u64, Version::V1))
        .ok_or_else(refused)
}

/// A row's station and stats, checked.
fn row(line: &[u8], version: Version) -> Result<(CompactString, Stats), LineError> {
    let fields = fields(line)?;
    let found = if line.is_empty() { 0 } else { fields.len() };
    let (counted, kept) = match version {
        Version::V1 => (false, Kept::Basic),
        Version::V2 { .. } => (true, Kept::Basic),
        Version::V3 { missing, kept, .. } => (missing, kept),
    };
    let expected = 5 + usize::from(counted) + kept as usize;
    let [name, count, sum, min, max, rest @ ..] = &fields[..] else {
        return Err(LineError::Fields { expected, found });
    };
    if found != expected {
        return Err(LineError::Fields { expected, found });
    }
    let (missing, rest) = rest.split_at(usize::from(counted));
    // Names of the challenge's text and Parquet (no missing values
    // counted) are station names; a delimited file's, keys.
    let name = match counted {
        false => station(name)?,
        true => key(name)?,
    };
    let (name, mut stats) = match (version, missing) {
        (Version::V1, _) => stats(
            name,
            count,
            sum,
            min,
            max,
            i64::MIN.into()..=i64::MAX.into(),
            VALUE_LIMIT.into(),
        )?,
        (_, [missing]) => {
            let missing = integer(missing, "missing", 0..=u64::MAX.into())? as u64;
            let (name, mut stats) = match count[..] == *b"0" {
                true => (name, lacking(sum, min, max)?),
                false => wide(name, count, sum, min, max)?,
            };
            stats.missing = missing;
            (name, stats)
        }
        _ => wide(name, count, sum, min, max)?,
    };
    if let [squares, counts @ ..] = rest {
        stats.detail = Some(detail(squares, counts.first(), &stats)?);
    }
    Ok((name, stats))
}

/// The stats of a key whose every value was missing: no sum, no min, no
/// max.
fn lacking(sum: &[u8], min: &[u8], max: &[u8]) -> Result<Stats, LineError> {
    let _ = integer(sum, "sum", 0..=0)?;
    for (field, found) in [("min", min), ("max", max)] {
        if !found.is_empty() {
            return Err(LineError::Range {
                field,
                min: 0,
                max: 0,
                found: quoted(found),
            });
        }
    }
    Ok(Stats::missing())
}

/// A `v2` or `v3` row's stats: sums of 128 bits, values of 18 digits.
fn wide(
    name: CompactString,
    count: &[u8],
    sum: &[u8],
    min: &[u8],
    max: &[u8],
) -> Result<(CompactString, Stats), LineError> {
    let limit = 10i128.pow(MAX_DIGITS) - 1;
    stats(name, count, sum, min, max, i128::MIN..=i128::MAX, limit)
}

/// A `v3` row's detail: its sum of squares and, when given, its counts
/// per value, each checked against the row's stats `s`.
fn detail(
    squares: &[u8],
    counts: Option<&Cow<'_, [u8]>>,
    s: &Stats,
) -> Result<Box<Detail>, LineError> {
    let canonical = match squares {
        [b'0'] => true,
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    let big = (std::str::from_utf8(squares).ok())
        .filter(|_| canonical)
        .and_then(|digits| digits.parse::<BigUint>().ok());
    let refused = || LineError::NotInteger {
        field: "squares",
        found: quoted(squares),
    };
    let big = big.ok_or_else(refused)?;
    let sum_of_squares = Squares::from_big(&big).ok_or_else(refused)?;
    let differ = |what: String| LineError::Detail { what };
    let Some(counts) = counts else {
        // Without the values, what any values give: n·Σv² ≥ (Σv)², and
        // Σv² ≤ n·m² with m the largest magnitude (Σv² = min² for one).
        let n = BigUint::from(s.count);
        let m = BigUint::from(s.min.unsigned_abs().max(s.max.unsigned_abs()));
        let total = BigUint::from(s.sum.unsigned_abs());
        let fits = match s.count {
            0 => big == BigUint::ZERO,
            1 => big == &m * &m,
            _ => &n * &big >= &total * &total && big <= &n * &m * &m,
        };
        if !fits {
            return Err(differ(format!(
                "a sum of squares {big} that no {} values from {} to {} adding up to {} give",
                s.count, s.min, s.max, s.sum
            )));
        }
        let mut detail = Detail::empty(Kept::Squares).expect("squares are kept");
        detail.squares = sum_of_squares;
        return Ok(detail);
    };
    let mut detail = Detail::empty(Kept::Counts).expect("counts are kept");
    let limit = 10i128.pow(MAX_DIGITS) - 1;
    let (mut n, mut sum, mut first, mut last) = (0u128, 0i128, None, None::<i64>);
    for pair in counts.split(|&b| b == b' ').filter(|_| !counts.is_empty()) {
        let bad = || LineError::Counts {
            found: quoted(pair),
        };
        let at = memchr::memchr(b':', pair).ok_or_else(bad)?;
        let value = integer(&pair[..at], "value", -limit..=limit).map_err(|_| bad())? as i64;
        let times = integer(&pair[at + 1..], "count", 1..=u64::MAX.into()).map_err(|_| bad())?;
        if last.is_some_and(|last| last >= value) {
            return Err(bad());
        }
        (first, last) = (first.or(Some(value)), Some(value));
        n += times as u128;
        sum = sum.saturating_add(i128::from(value).saturating_mul(times));
        detail.add_n(value, times as u64);
    }
    if n != u128::from(s.count) || sum != s.sum {
        return Err(differ(format!(
            "counts per value of {n} values adding up to {sum}, not {} adding up to {}",
            s.count, s.sum
        )));
    }
    if s.count > 0 && (first != Some(s.min) || last != Some(s.max)) {
        return Err(differ(format!(
            "counts per value from {} to {}, not from min {} to max {}",
            first.unwrap_or_default(),
            last.unwrap_or_default(),
            s.min,
            s.max
        )));
    }
    if detail.squares != sum_of_squares {
        return Err(differ(format!(
            "a sum of squares {big}, where the counts per value give {}",
            detail.squares.to_big()
        )));
    }
    Ok(detail)
}

/// A key of a `v2` or `v3` partial counting missing values: 1 to
/// [`MAX_KEY_LEN`] bytes of UTF-8 without `\n`.
fn key(name: &[u8]) -> Result<CompactString, LineError> {
    if name.is_empty() {
        return Err(LineError::EmptyName);
    }
    if name.len() > MAX_KEY_LEN {
        return Err(LineError::NameTooLong { len: name.len() });
    }
    let key = CompactString::from_utf8(name).map_err(|_| LineError::InvalidUtf8 {
        name: name.to_vec(),
    })?;
    // A delimited file's keys hold no line break, but a merge with text
    // partials brings station names, which may hold `\r`.
    if key.contains('\n') {
        return Err(LineError::InvalidUtf8 {
            name: name.to_vec(),
        });
    }
    Ok(key)
}

/// A row's stats from its fields, checked: a count of at least 1, sums in
/// `sums`, min and max within ±`limit`, and consistent.
fn stats(
    name: CompactString,
    count: &[u8],
    sum: &[u8],
    min: &[u8],
    max: &[u8],
    sums: RangeInclusive<i128>,
    limit: i128,
) -> Result<(CompactString, Stats), LineError> {
    let count = integer(count, "count", 1..=u64::MAX.into())?;
    let sum = integer(sum, "sum", sums)?;
    let range = -limit..=limit;
    let min = integer(min, "min", range.clone())?;
    let max = integer(max, "max", range)?;
    let stats = Stats::of(min as i64, max as i64, sum, count as u64);
    if min > max {
        return Err(LineError::MinAboveMax {
            min: stats.min,
            max: stats.max,
        });
    }
    if count == 1 && min != max {
        return Err(LineError::SingleValue {
            min: stats.min,
            max: stats.max,
        });
    }
    // One value is min, one is max (the same one if count is 1), and the
    // others anything in between.
    let (lo, hi) = (max + (count - 1) * min, min + (count - 1) * max);
    if !(lo..=hi).contains(&sum) {
        let Stats {
            min,
            max,
            sum,
            count,
            ..
        } = stats;
        return Err(LineError::Sum {
            lo,
            hi,
            count,
            min,
            max,
            sum,
        });
    }
    Ok((name, stats))
}

/// A station name: 1 to [`MAX_NAME_LEN`] bytes of UTF-8 without `;`, as
/// in a measurements file (a `\n` cannot get past [`Lines`]).
fn station(name: &[u8]) -> Result<CompactString, LineError> {
    if name.is_empty() {
        return Err(LineError::EmptyName);
    }
    if name.len() > MAX_NAME_LEN {
        return Err(LineError::NameTooLong { len: name.len() });
    }
    if name.contains(&b';') {
        return Err(LineError::Semicolon { name: quoted(name) });
    }
    CompactString::from_utf8(name).map_err(|_| LineError::InvalidUtf8 {
        name: name.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Partial;

    /// A partial whose first line announces as many stations as `rows`
    /// has lines.
    fn partial(rows: &str) -> String {
        let stations = rows.lines().count();
        format!("{FORMAT} {VERSION} stations={stations}\n{COLUMNS}\n{rows}")
    }

    /// The line and kind of the error `input` gets.
    fn error(input: impl AsRef<[u8]>) -> (u64, LineError) {
        match Partial::parse(input.as_ref()) {
            Err(PartialError::Line { line, kind }) => (line, kind),
            other => panic!("{other:?}"),
        }
    }

    fn found(s: &str) -> Option<Vec<u8>> {
        Some(s.as_bytes().to_vec())
    }

    #[test]
    fn first_line_errors() {
        use LineError::*;
        assert_eq!(error(""), (1, FirstLine { found: None }));
        assert_eq!(error("\n"), (1, FirstLine { found: found("") }));
        let csv = "station,count,sum,min,max\na,1,5,5,5\n";
        let first = "station,count,sum,min,max";
        assert_eq!(
            error(csv),
            (
                1,
                FirstLine {
                    found: found(first)
                }
            )
        );
        let v4 = partial("a,1,5,5,5\n").replace("v1", "v4");
        assert_eq!(
            error(v4),
            (
                1,
                Version {
                    found: b"v4".to_vec()
                }
            )
        );
        let v2 = partial("a,1,5,5,5\n").replace("v1", "v2");
        assert_eq!(
            error(v2),
            (
                1,
                StationCount {
                    found: b" stations=1".to_vec()
                }
            )
        );
        let v10 = "brc-partial v10 stations=0\nstation,count,sum,min,max\n";
        assert_eq!(
            error(v10),
            (
                1,
                Version {
                    found: b"v10".to_vec()
                }
            )
        );
        for (rest, line) in [
            ("", "brc-partial v1"),
            (" stations=", "brc-partial v1 stations="),
            (" stations=01", "brc-partial v1 stations=01"),
            (" stations=-1", "brc-partial v1 stations=-1"),
            (" stations=2 rows=5", "brc-partial v1 stations=2 rows=5"),
            (
                " stations=18446744073709551616",
                "brc-partial v1 stations=18446744073709551616",
            ),
        ] {
            let found = rest.as_bytes().to_vec();
            assert_eq!(error(format!("{line}\n")), (1, StationCount { found }));
        }
    }

    #[test]
    fn column_names_must_follow() {
        use LineError::*;
        let head = "brc-partial v1 stations=0\n";
        assert_eq!(
            error(head),
            (
                2,
                Columns {
                    expected: COLUMNS,
                    found: None
                }
            )
        );
        let renamed = format!("{head}station,count,sum,lo,hi\n");
        let found = found("station,count,sum,lo,hi");
        assert_eq!(
            error(renamed),
            (
                2,
                Columns {
                    expected: COLUMNS,
                    found
                }
            )
        );
    }

    #[test]
    fn cuts_are_found() {
        use LineError::*;
        let whole = partial("a,1,5,5,5\nb,2,10,5,5\nc,1,-5,-5,-5\n");
        // Cut at the end of a row: rows are missing.
        let cut = &whole[..whole.find("c,").unwrap()];
        let missing = MissingRows {
            missing: 1,
            stations: 3,
        };
        assert_eq!(error(cut), (5, missing));
        // Cut inside a row, or before its line break: no line break.
        for end in [whole.len() - 1, whole.len() - 4] {
            assert_eq!(error(&whole[..end]), (5, MissingNewline));
        }
        assert_eq!(error(&whole[..10]), (1, MissingNewline));
        // A cut partial followed by another: the other's first line is
        // where a row should be.
        let glued = format!("{cut}{whole}");
        assert!(matches!(
            error(glued),
            (
                5,
                Fields {
                    expected: 5,
                    found: 1
                }
            )
        ));
        // More rows than announced.
        let extra = whole.replace("stations=3", "stations=2");
        let found = b"c,1,-5,-5,-5".to_vec();
        assert_eq!(error(extra), (5, AfterRows { stations: 2, found }));
    }

    #[test]
    fn lines_are_bounded() {
        let long = format!("\"{}\",1,5,5,5\n", "x".repeat(MAX_LINE_LEN));
        assert_eq!(
            error(partial(&long)),
            (
                3,
                LineError::TooLong {
                    limit: MAX_LINE_LEN
                }
            )
        );
        // Without a line break anywhere.
        let endless = vec![b'x'; 10 * MAX_LINE_LEN];
        assert_eq!(
            error(endless),
            (
                1,
                LineError::TooLong {
                    limit: MAX_LINE_LEN
                }
            )
        );
        // Up to the limit, a line is read (and judged on its content); one
        // byte more, it is not.
        let name = "x".repeat(MAX_LINE_LEN - 8);
        let full = format!("{name},1,5,5,5");
        assert_eq!(full.len(), MAX_LINE_LEN);
        let len = name.len();
        let kind = LineError::NameTooLong { len };
        assert_eq!(error(partial(&format!("{full}\r\n"))), (3, kind));
        let over = format!("x{full}\n");
        assert_eq!(
            error(partial(&over)),
            (
                3,
                LineError::TooLong {
                    limit: MAX_LINE_LEN
                }
            )
        );
    }

    #[test]
    fn fields_and_quotes() {
        use LineError::*;
        for (row, kind) in [
            (
                "a,1,5,5\n",
                Fields {
                    expected: 5,
                    found: 4,
                },
            ),
            (
                "a,1,5,5,5,\n",
                Fields {
                    expected: 5,
                    found: 6,
                },
            ),
            (
                "\n",
                Fields {
                    expected: 5,
                    found: 0,
                },
            ),
            (
                "a;1.0\n",
                Fields {
                    expected: 5,
                    found: 1,
                },
            ),
            ("\"a,1,5,5,5\n", Unclosed),
            ("\"a\"\"\",1,5,5,\"5\n", Unclosed),
            (
                "\"a\"b,1,5,5,5\n",
                AfterQuote {
                    found: b"b,1,5,5,5".to_vec(),
                },
            ),
            (
                "a\"b,1,5,5,5\n",
                StrayQuote {
                    found: b"a\"b".to_vec(),
                },
            ),
        ] {
            assert_eq!(error(partial(row)), (3, kind), "{row:?}");
        }
    }

    #[test]
    fn numbers() {
        use LineError::*;
        let not_integer = |field, found: &str| NotInteger {
            field,
            found: found.as_bytes().to_vec(),
        };
        let range = |field, min: i128, max: i128, found: &str| Range {
            field,
            min,
            max,
            found: found.as_bytes().to_vec(),
        };
        let (u64_max, i64_min, i64_max) = (u64::MAX.into(), i64::MIN.into(), i64::MAX.into());
        for (row, kind) in [
            ("a,1.5,5,5,5", not_integer("count", "1.5")),
            ("a,01,5,5,5", not_integer("count", "01")),
            ("a,+1,5,5,5", not_integer("count", "+1")),
            ("a, 1,5,5,5", not_integer("count", " 1")),
            ("a,1,,5,5", not_integer("sum", "")),
            ("a,1,-0,0,0", not_integer("sum", "-0")),
            ("a,1,5,5.0,5", not_integer("min", "5.0")),
            ("a,1,5,5,5e0", not_integer("max", "5e0")),
            ("a,0,5,5,5", range("count", 1, u64_max, "0")),
            ("a,-1,5,5,5", range("count", 1, u64_max, "-1")),
            (
                "a,18446744073709551616,5,5,5",
                range("count", 1, u64_max, "18446744073709551616"),
            ),
            (
                "a,2,-9223372036854775809,5,5",
                range("sum", i64_min, i64_max, "-9223372036854775809"),
            ),
            (
                "a,1,1000000000,1000000000,1000000000",
                range("min", -999_999_999, 999_999_999, "1000000000"),
            ),
            (
                "a,1,-999,-999,-1000000000",
                range("max", -999_999_999, 999_999_999, "-1000000000"),
            ),
            ("a,2,15,10,5", MinAboveMax { min: 10, max: 5 }),
            ("a,1,5,0,5", SingleValue { min: 0, max: 5 }),
            (
                "a,2,100,-10,50",
                Sum {
                    lo: 40,
                    hi: 40,
                    count: 2,
                    min: -10,
                    max: 50,
                    sum: 100,
                },
            ),
            (
                "a,3,0,0,10",
                Sum {
                    lo: 10,
                    hi: 20,
                    count: 3,
                    min: 0,
                    max: 10,
                    sum: 0,
                },
            ),
            (
                "a,18446744073709551615,9223372036854775807,999,999",
                Sum {
                    lo: 999 * i128::from(u64::MAX),
                    hi: 999 * i128::from(u64::MAX),
                    count: u64::MAX,
                    min: 999,
                    max: 999,
                    sum: i64::MAX.into(),
                },
            ),
        ] {
            assert_eq!(error(partial(&format!("{row}\n"))), (3, kind), "{row:?}");
        }
    }

    #[test]
    fn names() {
        use LineError::*;
        let long = "é".repeat(50) + "x";
        for (row, kind) in [
            (",1,5,5,5".to_string(), EmptyName),
            ("\"\",1,5,5,5".to_string(), EmptyName),
            (format!("{long},1,5,5,5"), NameTooLong { len: 101 }),
            (
                "a;b,1,5,5,5".to_string(),
                Semicolon {
                    name: b"a;b".to_vec(),
                },
            ),
        ] {
            assert_eq!(error(partial(&format!("{row}\n"))), (3, kind), "{row:?}");
        }
        let mut bad = partial("a,1,5,5,5\n").into_bytes();
        let at = bad.len() - 10;
        bad.insert(at, 0xff);
        let name = b"\xffa".to_vec();
        assert_eq!(error(bad), (3, InvalidUtf8 { name }));
    }

    #[test]
    fn stations_are_sorted_and_distinct() {
        use LineError::*;
        let (name, previous) = (b"B".to_vec(), b"b".to_vec());
        let unsorted = partial("a,1,5,5,5\nb,1,5,5,5\nB,1,5,5,5\n");
        assert_eq!(error(unsorted), (5, Unsorted { name, previous }));
        let twice = partial("a,1,5,5,5\nb,1,5,5,5\n\"b\",1,6,6,6\n");
        assert_eq!(
            error(twice),
            (
                5,
                Duplicate {
                    name: b"b".to_vec()
                }
            )
        );
        // By bytes: `é` (0xc3 0xa9) after `z`.
        Partial::parse(partial("a,1,5,5,5\nz,1,5,5,5\né,1,5,5,5\n").as_bytes()).unwrap();
    }

    #[test]
    fn concatenated_partials_merge_and_count_lines_on() {
        let p1 = partial("a,1,5,5,5\nc,2,-10,-10,0\n");
        let p2 = partial("a,2,10,0,10\nb,1,7,7,7\n");
        let both = Partial::parse(format!("{p1}{p2}").as_bytes()).unwrap();
        let apart = Partial::parse(p1.as_bytes()).unwrap();
        let apart = apart.merge(Partial::parse(p2.as_bytes()).unwrap()).unwrap();
        assert_eq!(both, apart);
        let s = |min, max, sum: i64, count| Stats::of(min, max, sum.into(), count);
        let expected = [
            ("a", s(0, 10, 15, 3)),
            ("b", s(7, 7, 7, 1)),
            ("c", s(-10, 0, -10, 2)),
        ];
        let stations: Vec<_> = both.iter().map(|(n, s)| (n, s.clone())).collect();
        assert_eq!(stations, expected);
        // An empty partial between them, and an error in the third.
        let empty = partial("");
        let bad = partial("a,1,5,5,6\n");
        let input = format!("{p1}{empty}{p2}{bad}");
        let kind = LineError::SingleValue { min: 5, max: 6 };
        assert_eq!(error(input), (13, kind));
    }

    #[test]
    fn crlf_line_breaks_and_quoted_fields_are_read() {
        let plain = partial("a,1,5,5,5\n\"b,\"\"c\"\"\",2,-3,-4,1\n");
        let crlf = plain.replace('\n', "\r\n");
        let quoted = partial("\"a\",\"1\",\"5\",\"5\",\"5\"\n\"b,\"\"c\"\"\",2,-3,\"-4\",1\n");
        let plain = Partial::parse(plain.as_bytes()).unwrap();
        assert_eq!(plain.iter().nth(1).unwrap().0, "b,\"c\"");
        assert_eq!(Partial::parse(crlf.as_bytes()).unwrap(), plain);
        assert_eq!(Partial::parse(quoted.as_bytes()).unwrap(), plain);
        // A `\r` inside a quoted name stays in the name.
        let cr = Partial::parse(partial("\"a\r\",1,5,5,5\r\n").as_bytes()).unwrap();
        assert_eq!(cr.iter().next().unwrap().0, "a\r");
    }

    #[test]
    fn messages_say_what_was_expected_and_found() {
        let e = Partial::parse(b"brc-partial v4 stations=1\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 1: expected format version `v1`, `v2` or `v3`, found `v4`"
        );
        let e = Partial::parse(b"").unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 1: expected a first line `brc-partial v1 stations=<N>` or `brc-partial v2 \
             keys=<N> scale=<S>` (`v3` likewise), found the end of the input"
        );
        let e = Partial::parse(partial("\n").as_bytes()).unwrap_err();
        assert_eq!(e.to_string(), "line 3: expected 5 fields, found 0");
        let (_, kind) = error(partial("a,2,100,-10,50\n"));
        assert_eq!(
            kind.to_string(),
            "expected a sum in 40..=40 for count 2, min -10 and max 50, found 100"
        );
    }

    #[test]
    fn the_longest_key_of_quotes_reads_back_from_v2() {
        let key = "\"".repeat(MAX_KEY_LEN);
        let summary: crate::Summary = [(key.as_str(), Stats::new(-5))].into_iter().collect();
        let summary = summary.at_scale(3).counting_missing(true);
        let bytes = Partial::from(summary.clone()).to_bytes();
        assert!(bytes.len() > 2 * MAX_KEY_LEN);
        assert_eq!(Partial::parse(&bytes).unwrap().finish(), summary);
    }
}

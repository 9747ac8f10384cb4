//! What is wrong with a line of a partial: the errors the reader
//! ([`super::read`]) gives, each saying what was expected and what was
//! found.

use std::fmt;

use super::write::{VERSION_2, VERSION_3};
use super::{FORMAT, VERSION};
use crate::error::Shown;
use crate::parse::MAX_NAME_LEN;

/// The longest line the reader takes, without its line break. A valid line
/// is under 2,300 bytes (a `v2` key of 1,024 `"`, doubled and quoted, and
/// five numbers of at most 40 digits), so a longer one is malformed; the
/// reader never holds more of it than this.
pub const MAX_LINE_LEN: usize = 4096;

/// The longest row of a `v3` partial that holds counts per value, without
/// its line break: a key's counts take a few bytes per distinct value
/// (16 MiB: a million distinct values of 18 digits, each counted up to
/// 2^64 times, take 39 MB, ten million of the challenge's tenths 100 MB),
/// so the bound is 256 MiB.
pub const MAX_COUNTS_LINE_LEN: usize = 256 << 20;

/// What is wrong with a line of a partial.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LineError {
    /// The input's first line, or the line after a partial's rows, is not
    /// a `brc-partial` first line.
    #[error(
        "expected a first line `{FORMAT} {VERSION} stations=<N>` or `{FORMAT} {VERSION_2} \
         keys=<N> scale=<S>` (`{VERSION_3}` likewise), found {}",
        Found(.found)
    )]
    FirstLine {
        /// The line (`None`: the input ended).
        found: Option<Vec<u8>>,
    },
    /// A line after all the rows the first line announced that does not
    /// start another partial.
    #[error(
        "expected the end of the input or another partial's first line after {stations} \
         station rows, found {}",
        Shown(.found)
    )]
    AfterRows {
        /// How many rows the partial announced.
        stations: u64,
        /// The line.
        found: Vec<u8>,
    },
    /// A `brc-partial` first line of another version.
    #[error("expected format version `{VERSION}`, `{VERSION_2}` or `{VERSION_3}`, found {}", Shown(.found))]
    Version {
        /// The version field.
        found: Vec<u8>,
    },
    /// A first line without a valid station count (`v2`: key count and
    /// scale).
    #[error("expected ` stations=<N>` after `{VERSION}`, ` keys=<N> scale=<S>` after `{VERSION_2}` or `{VERSION_3}`, found {}", Shown(.found))]
    StationCount {
        /// What follows the version.
        found: Vec<u8>,
    },
    /// The second line is not the CSV header.
    #[error("expected the column names `{expected}`, found {}", Found(.found))]
    Columns {
        /// The version's header.
        expected: &'static str,
        /// The line (`None`: the input ended).
        found: Option<Vec<u8>>,
    },
    /// The input ended before all the rows the first line announced.
    #[error(
        "expected {missing} more station rows of the {stations} the first line announces, \
         found the end of the input"
    )]
    MissingRows {
        /// Rows still missing.
        missing: u64,
        /// Rows announced.
        stations: u64,
    },
    /// The last line has no line break: the input was cut.
    #[error("expected a line break at the end of the line, found the end of the input")]
    MissingNewline,
    /// A line longer than [`MAX_LINE_LEN`].
    #[error("expected a line of at most {limit} bytes, found a longer one")]
    TooLong {
        /// The longest line the partial's version takes here.
        limit: usize,
    },
    /// A `v3` row's counts field that is not `value:count` pairs.
    #[error(
        "expected counts per value as `value:count` pairs separated by spaces, values \
         increasing, counts of at least 1, found {}",
        Shown(.found)
    )]
    Counts {
        /// The part of the field where it went wrong.
        found: Vec<u8>,
    },
    /// A `v3` row whose sum of squares or counts per value no values give
    /// with its count, sum, min and max.
    #[error("expected a row some values give, found {what}")]
    Detail {
        /// What does not agree.
        what: String,
    },
    /// A row without exactly five fields (`v2`: six).
    #[error("expected {expected} fields, found {found}")]
    Fields {
        /// How many the version's rows have.
        expected: usize,
        /// How many fields the row has (0 for an empty line).
        found: usize,
    },
    /// A quoted field without its closing quote.
    #[error("expected a `\"` closing the quoted field, found the end of the line")]
    Unclosed,
    /// Something other than `,` after a quoted field's closing quote.
    #[error("expected `,` or the end of the line after a closing `\"`, found {}", Shown(.found))]
    AfterQuote {
        /// What follows the closing quote.
        found: Vec<u8>,
    },
    /// A `"` in a field that is not quoted.
    #[error("expected `\"` only in a quoted field, found {}", Shown(.found))]
    StrayQuote {
        /// The field.
        found: Vec<u8>,
    },
    /// A number field that is not an integer in canonical form.
    #[error("expected {field} as an integer (an optional `-`, digits, no leading zero), found {}", Shown(.found))]
    NotInteger {
        /// The column.
        field: &'static str,
        /// The field.
        found: Vec<u8>,
    },
    /// An integer outside its column's range.
    #[error("expected {field} in {min}..={max}, found {}", Shown(.found))]
    Range {
        /// The column.
        field: &'static str,
        /// The smallest valid value.
        min: i128,
        /// The largest valid value.
        max: i128,
        /// The field.
        found: Vec<u8>,
    },
    /// A minimum above the maximum.
    #[error("expected min <= max, found min {min} and max {max}")]
    MinAboveMax {
        /// The minimum.
        min: i64,
        /// The maximum.
        max: i64,
    },
    /// One value, but a minimum and a maximum that differ.
    #[error("expected min = max for a count of 1, found min {min} and max {max}")]
    SingleValue {
        /// The minimum.
        min: i64,
        /// The maximum.
        max: i64,
    },
    /// A sum that no `count` values between `min` and `max` (both present)
    /// add up to.
    #[error(
        "expected a sum in {lo}..={hi} for count {count}, min {min} and max {max}, found {sum}"
    )]
    Sum {
        /// The smallest possible sum.
        lo: i128,
        /// The largest possible sum.
        hi: i128,
        /// The count.
        count: u64,
        /// The minimum.
        min: i64,
        /// The maximum.
        max: i64,
        /// The sum found.
        sum: i128,
    },
    /// An empty station name.
    #[error("expected a station name of 1 to {MAX_NAME_LEN} bytes, found an empty one")]
    EmptyName,
    /// A station name longer than [`MAX_NAME_LEN`].
    #[error("expected a station name of 1 to {MAX_NAME_LEN} bytes, found one of {len} bytes")]
    NameTooLong {
        /// The name's length in bytes.
        len: usize,
    },
    /// A station name holding `;`, which no measurements file can hold.
    #[error("expected a station name without `;`, found {}", Shown(.name))]
    Semicolon {
        /// The name.
        name: Vec<u8>,
    },
    /// A station name that is not valid UTF-8.
    #[error("expected a UTF-8 station name, found invalid UTF-8 in {}", Shown(.name))]
    InvalidUtf8 {
        /// The name.
        name: Vec<u8>,
    },
    /// A station whose name sorts before the previous row's.
    #[error("expected stations sorted by name bytes, found {} after {}", Shown(.name), Shown(.previous))]
    Unsorted {
        /// The name.
        name: Vec<u8>,
        /// The previous row's name.
        previous: Vec<u8>,
    },
    /// A station twice in one partial.
    #[error("expected each station once in a partial, found {} again", Shown(.name))]
    Duplicate {
        /// The name.
        name: Vec<u8>,
    },
}

/// Shows a line, or says the input ended there.
struct Found<'a>(&'a Option<Vec<u8>>);

impl fmt::Display for Found<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => f.write_str("the end of the input"),
            Some(line) if line.is_empty() => f.write_str("an empty line"),
            Some(line) => Shown(line).fmt(f),
        }
    }
}

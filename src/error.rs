//! Typed errors for malformed input.
//!
//! Engines find a fault as a byte offset (the start of the offending line);
//! the 1-based line number is counted only then, on the error path, so the
//! hot loops never count lines (as ripgrep does).

use std::{fmt, io};

use crate::stats::{MAX_DIGITS, MAX_KEY_LEN};

/// What is wrong with a line: what was expected, and what was found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A line with no bytes at all (two `\n` in a row, or a leading `\n`).
    #[error("expected `<name>;<value>`, found an empty line")]
    EmptyLine,
    /// A line without any `;`.
    #[error("expected `;` between name and value, found none in {}", Shown(.line))]
    MissingSemicolon {
        /// The start of the line (see [`quoted`]).
        line: Vec<u8>,
    },
    /// A line starting with `;`.
    #[error("expected a station name before `;`, found an empty name")]
    EmptyName,
    /// A name longer than [`MAX_NAME_LEN`](crate::parse::MAX_NAME_LEN).
    #[error("expected a station name of at most 100 bytes, found one of {len} bytes")]
    NameTooLong {
        /// The name's length in bytes.
        len: usize,
    },
    /// A name that is not valid UTF-8.
    #[error("expected a UTF-8 station name, found invalid UTF-8 in {}", Shown(.name))]
    InvalidUtf8 {
        /// The offending name.
        name: Vec<u8>,
    },
    /// A value that does not match `-?\d{1,2}\.\d`.
    #[error("expected a value like `-12.3` (-?d{{1,2}}.d), found {}", Shown(.value))]
    InvalidValue {
        /// The start of everything after the first `;` (see [`quoted`]).
        value: Vec<u8>,
    },
}

/// A malformed line: where it is and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {kind}")]
pub struct DataError {
    /// 1-based line number of the offending line.
    pub line: u64,
    /// Byte offset of the start of the offending line.
    pub offset: u64,
    /// What is wrong.
    pub kind: ErrorKind,
}

/// A fault found by an engine, before its line number is known.
///
/// Engines report the first fault of each piece of work they do; the fault
/// with the smallest offset is the first one in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// Byte offset of the start of the offending line.
    pub offset: usize,
    /// What is wrong.
    pub kind: ErrorKind,
}

impl Fault {
    /// Turns the fault into a [`DataError`] by counting the lines of
    /// `input` before it; `input` must be the whole input the offset is
    /// relative to.
    pub fn locate(self, input: &[u8]) -> DataError {
        let newlines = memchr::memchr_iter(b'\n', &input[..self.offset]).count();
        self.after_newlines(newlines as u64)
    }

    /// Turns the fault into a [`DataError`], given the number of `\n` in
    /// the input before it, for callers that no longer hold that input.
    pub fn after_newlines(self, newlines: u64) -> DataError {
        DataError {
            line: newlines + 1,
            offset: self.offset as u64,
            kind: self.kind,
        }
    }

    /// Keeps whichever of two optional faults comes first in the input.
    pub fn first(a: Option<Fault>, b: Option<Fault>) -> Option<Fault> {
        match (a, b) {
            (Some(a), Some(b)) => Some(if b.offset < a.offset { b } else { a }),
            (a, b) => a.or(b),
        }
    }
}

/// Why an input could not be aggregated: it was malformed, or reading it
/// failed (including a corrupt compressed stream).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A malformed line.
    #[error(transparent)]
    Data(#[from] DataError),
    /// Reading or decompressing the input failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// A Parquet file brc cannot read, or a row of it brc refuses.
    #[error(transparent)]
    Parquet(#[from] ParquetError),
    /// A row or cell of a delimited file brc refuses.
    #[error(transparent)]
    Delimited(#[from] DelimitedError),
}

/// What is wrong with a row or cell of a delimited file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CellError {
    /// A file without a header line.
    #[error("expected a header line, found an empty file")]
    NoHeader,
    /// A column asked for that the header does not have.
    #[error("expected a column {column}, found columns {}", .found.join(", "))]
    MissingColumn {
        /// The column asked for: a name in backquotes, or a position.
        column: String,
        /// The header's cells.
        found: Vec<String>,
    },
    /// A column named more than once in the key, by name or position.
    #[error("expected each key column once, found column {position} (`{name}`) twice")]
    RepeatedKey {
        /// The column's position, from 1.
        position: usize,
        /// Its header cell.
        name: String,
    },
    /// A header unlike the first file's.
    #[error("expected the header of the first file, found another one")]
    Header,
    /// A row with another number of cells than the header.
    #[error("expected {expected} cells as in the header, found {found}")]
    Cells {
        /// The header's.
        expected: usize,
        /// The row's.
        found: usize,
    },
    /// A quote inside a cell that does not start with one.
    #[error("expected `\"` only around a quoted cell, found one inside an unquoted cell")]
    StrayQuote,
    /// Something after a closing quote.
    #[error("expected a delimiter or the line's end after a closing `\"`")]
    AfterQuote,
    /// A quoted cell never closed.
    #[error("expected a `\"` closing the quoted cell, found the end of the input")]
    Unclosed,
    /// A value cell that is no value.
    #[error("expected {expected}, found {}", Shown(.found))]
    Value {
        /// What a value is.
        expected: String,
        /// The cell.
        found: Vec<u8>,
    },
    /// A value beyond 18 digits at the scale of the file's values.
    #[error("expected at most {MAX_DIGITS} digits with {scale} decimals, found {}", Shown(.found))]
    Range {
        /// The scale.
        scale: u32,
        /// The cell.
        found: Vec<u8>,
    },
    /// An empty key.
    #[error("expected a key, found an empty cell")]
    EmptyKey,
    /// A key longer than [`MAX_KEY_LEN`].
    #[error("expected a key of at most {MAX_KEY_LEN} bytes, found one of {len}")]
    KeyTooLong {
        /// Its length.
        len: usize,
    },
    /// A key that is not UTF-8 or holds a line break.
    #[error("expected a key of UTF-8 without line breaks, found {}", Shown(.found))]
    Key {
        /// The key.
        found: Vec<u8>,
    },
    /// A key's sum beyond 128 bits.
    #[error("the sum of the values of key {} exceeds 128 bits", Shown(.key))]
    Sum {
        /// The key.
        key: Vec<u8>,
    },
}

/// A refused row or cell of a delimited file, where it is.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{kind}", where_(*.line, *.column))]
pub struct DelimitedError {
    /// The 1-based line the row starts on; 0 for a fault of no one row (a
    /// key's sum past 128 bits found when files' stats are merged).
    pub line: u64,
    /// The 1-based column of the cell, if one is at fault.
    pub column: Option<usize>,
    /// What is wrong.
    pub kind: CellError,
}

/// Where a [`DelimitedError`] is, as its message says it: `line 3,
/// column 2: `, or nothing for a fault of no one row.
fn where_(line: u64, column: Option<usize>) -> String {
    match (line, column) {
        (0, _) => String::new(),
        (line, None) => format!("line {line}: "),
        (line, Some(c)) => format!("line {line}, column {c}: "),
    }
}

/// Why a Parquet file could not be aggregated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParquetError {
    /// The file is not Parquet brc can read: its footer, a page or an
    /// encoding is malformed or cut short.
    #[error("malformed Parquet: {0}")]
    Malformed(String),
    /// A column asked for (`brc::Columns`) is not in the file.
    #[error("expected a column named `{name}`, found columns {}", Listed(.found))]
    MissingColumn {
        /// The column asked for.
        name: String,
        /// The file's columns.
        found: Vec<String>,
    },
    /// A column of a type brc does not read as names or as values.
    #[error("column `{name}` is {found}; expected {expected}")]
    ColumnType {
        /// The column.
        name: String,
        /// Its type.
        found: String,
        /// What brc reads there.
        expected: &'static str,
    },
    /// A row brc refuses.
    #[error("row group {row_group}, row {row}: {kind}")]
    Row {
        /// The row group, counted from 0.
        row_group: usize,
        /// The row within its group, counted from 0.
        row: u64,
        /// What is wrong with it.
        kind: RowError,
    },
    /// A station's sum of tenths beyond 64 bits.
    #[error("the sum of the values of station `{station}` exceeds 64 bits")]
    Overflow {
        /// The station.
        station: String,
    },
}

/// What is wrong with a row of a Parquet file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RowError {
    /// A null name or value.
    #[error("expected a value in column `{column}`, found null")]
    Null {
        /// The column.
        column: String,
    },
    /// A value that is not a whole number of tenths within the range.
    #[error("expected a number of tenths within ±99999999.9 in column `{column}`, found {found}")]
    Value {
        /// The column.
        column: String,
        /// The value as stored.
        found: String,
    },
    /// A name text files could not hold.
    #[error(
        "expected a station name of 1 to 100 bytes of UTF-8 without `;` or a line break, found {}",
        Shown(.name)
    )]
    Name {
        /// The name's first bytes (see [`quoted`]).
        name: Vec<u8>,
    },
}

/// A list of column names for a message.
struct Listed<'a>(&'a [String]);

impl fmt::Display for Listed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, name) in self.0.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}`{name}`")?;
        }
        Ok(())
    }
}

impl From<parquet::errors::ParquetError> for ParquetError {
    fn from(e: parquet::errors::ParquetError) -> ParquetError {
        ParquetError::Malformed(e.to_string())
    }
}

/// Displays a piece of a malformed line for a person: quoted, with control
/// characters escaped, invalid UTF-8 shown as `\xNN`, cut after 40 bytes.
pub(crate) struct Shown<'a>(pub(crate) &'a [u8]);

/// Bytes of a malformed line a message shows.
const LIMIT: usize = 40;

/// How many bytes [`quoted`] keeps.
pub(crate) const QUOTED_LEN: usize = LIMIT + 1;

/// What an [`ErrorKind`] keeps of the bytes it quotes: what the message
/// shows, and one byte more so it still knows to print `…`. A malformed
/// line may be gigabytes long; the error must not copy it.
pub fn quoted(bytes: &[u8]) -> Vec<u8> {
    bytes[..bytes.len().min(QUOTED_LEN)].to_vec()
}

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("nothing");
        }
        let cut = self.0.len() > LIMIT;
        let bytes = &self.0[..self.0.len().min(LIMIT)];
        f.write_str("`")?;
        for chunk in bytes.utf8_chunks() {
            for c in chunk.valid().chars() {
                if c == '`' {
                    f.write_str("\\`")?;
                } else {
                    write!(f, "{}", c.escape_debug())?;
                }
            }
            for b in chunk.invalid() {
                write!(f, "\\x{b:02x}")?;
            }
        }
        f.write_str(if cut { "…`" } else { "`" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_counts_lines_before_the_offset() {
        let input = b"a;1.0\nb;2.0\nbad\n";
        let e = Fault {
            offset: 12,
            kind: ErrorKind::EmptyLine,
        }
        .locate(input);
        assert_eq!(e.line, 3);
        assert_eq!(e.offset, 12);
    }

    #[test]
    fn long_lines_are_quoted_not_copied() {
        let line = vec![b'x'; 1 << 20];
        let kind = ErrorKind::MissingSemicolon {
            line: quoted(&line),
        };
        let ErrorKind::MissingSemicolon { line: kept } = &kind else {
            unreachable!()
        };
        assert_eq!(kept.len(), QUOTED_LEN);
        assert!(kind
            .to_string()
            .ends_with(&format!("`{}…`", "x".repeat(LIMIT))));
    }

    #[test]
    fn messages_show_what_was_found() {
        let e = ErrorKind::InvalidValue {
            value: b"12.34".to_vec(),
        };
        assert_eq!(
            e.to_string(),
            "expected a value like `-12.3` (-?d{1,2}.d), found `12.34`"
        );
        let e = ErrorKind::InvalidUtf8 {
            name: b"ab\xffc\t".to_vec(),
        };
        assert!(e.to_string().ends_with("`ab\\xffc\\t`"), "{e}");
        let e = ErrorKind::InvalidValue { value: vec![] };
        assert!(e.to_string().ends_with("found nothing"), "{e}");
    }
}

//! Delimited text: CSV, TSV or any one-byte delimiter, with a header, a
//! key of one or more columns and a value column of exact decimals.
//!
//! A [`Dialect`] says how to read the files; each file's header resolves
//! it into a [`Layout`] (which cells are the key and the value). The
//! [`scan`] module finds rows and cells with RFC 4180 quoting, the
//! [`decimal`] module parses values, [`key`] holds a key as a table looks
//! it up, the [`table`] module keeps each key's [`Stats`](crate::Stats) at
//! one scale, [`feed`] adds a stretch of rows to a table, and [`run`]
//! spreads a file's rows over threads.

pub(crate) mod decimal;
mod feed;
mod key;
pub(crate) mod masks;
pub(crate) mod run;
pub(crate) mod scan;
pub(crate) mod table;

pub use crate::error::{CellError, DelimitedError};

/// A column, by its header name or its 1-based position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Column {
    /// The column whose header cell is this name.
    Name(String),
    /// The column at this 1-based position.
    Position(usize),
}

impl Column {
    /// A column as the command line writes it: a 1-based position for a
    /// number (`3`), else a header name.
    pub fn parse(s: &str) -> Column {
        match s.parse::<usize>() {
            Ok(n) if n >= 1 && !s.starts_with(['+', '0']) => Column::Position(n),
            _ => Column::Name(s.to_string()),
        }
    }
}

impl std::fmt::Display for Column {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Column::Name(name) => write!(f, "`{name}`"),
            Column::Position(n) => write!(f, "{n}"),
        }
    }
}

/// How delimited files are read: their delimiter, the key and value
/// columns, and which cells stand for a missing value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dialect {
    /// The byte between cells: `,` for CSV, a tab for TSV.
    pub delimiter: u8,
    /// The key's columns: one, or several joined (see [`KEY_JOIN`]).
    pub key: Vec<Column>,
    /// The value's column.
    pub value: Column,
    /// Value cells that stand for a missing value, compared after quotes
    /// are removed and spaces trimmed.
    pub nulls: Vec<String>,
    /// Whether a bad row (a value that is no number, a key that is no key,
    /// another number of cells than the header's) is skipped and counted
    /// instead of failing the run. Quoting faults always fail it.
    pub skip_bad_rows: bool,
}

/// What joins the cells of a composite key: `site|sensor`. A `|` or `\`
/// inside a cell is escaped with a `\`, so distinct keys stay distinct.
pub const KEY_JOIN: char = '|';

/// The value cells that stand for a missing value unless told otherwise.
pub const NULLS: [&str; 4] = ["", "NA", "NaN", "null"];

impl Dialect {
    /// CSV with the key in `key` and the value in `value`.
    pub fn csv(key: Vec<Column>, value: Column) -> Dialect {
        Dialect {
            delimiter: b',',
            key,
            value,
            nulls: NULLS.iter().map(|s| s.to_string()).collect(),
            skip_bad_rows: false,
        }
    }

    /// The same, with another delimiter.
    pub fn delimiter(mut self, delimiter: u8) -> Dialect {
        self.delimiter = delimiter;
        self
    }

    /// Resolves the columns against a file's `header` cells.
    pub(crate) fn layout(&self, header: &[Vec<u8>]) -> Result<Layout, CellError> {
        let find = |c: &Column| -> Result<usize, CellError> {
            match c {
                Column::Name(name) => (header.iter().position(|h| h == name.as_bytes()))
                    .ok_or_else(|| CellError::MissingColumn {
                        column: c.to_string(),
                        found: shown(header),
                    }),
                Column::Position(n) if *n <= header.len() => Ok(n - 1),
                Column::Position(_) => Err(CellError::MissingColumn {
                    column: c.to_string(),
                    found: shown(header),
                }),
            }
        };
        let key = self.key.iter().map(find).collect::<Result<Vec<_>, _>>()?;
        // One slot per column: a column twice in the key would keep only
        // its last part, and join a key with a part missing.
        if let Some(k) = (1..key.len()).find(|&k| key[..k].contains(&key[k])) {
            return Err(CellError::RepeatedKey {
                position: key[k] + 1,
                name: shown(&header[key[k]..=key[k]]).remove(0),
            });
        }
        let value = find(&self.value)?;
        let mut slots = vec![Slot::None; header.len()];
        for (k, &at) in key.iter().enumerate() {
            slots[at] = Slot::Key(k);
        }
        if let Slot::Key(k) = slots[value] {
            slots[value] = Slot::Both(k);
        } else {
            slots[value] = Slot::Value;
        }
        let nulls: Vec<Vec<u8>> = self.nulls.iter().map(|s| s.as_bytes().to_vec()).collect();
        Ok(Layout {
            null_len: nulls.iter().map(Vec::len).max().unwrap_or(0),
            columns: header.len(),
            keys: key.len(),
            slots,
            nulls,
            delimiter: self.delimiter,
            skip: self.skip_bad_rows,
        })
    }
}

/// A header's cells as an error lists them: line breaks and other
/// control characters escaped, so the message stays on one line.
fn shown(header: &[Vec<u8>]) -> Vec<String> {
    (header.iter())
        .map(|h| String::from_utf8_lossy(h).escape_debug().to_string())
        .collect()
}

/// What a column's cells are to the aggregation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    None,
    /// The key's `k`-th part.
    Key(usize),
    Value,
    /// Both the key's `k`-th part and the value.
    Both(usize),
}

/// A dialect resolved against a header.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    /// The header's cells: every row has as many (empty ones past them
    /// aside).
    pub(crate) columns: usize,
    /// The key's parts.
    pub(crate) keys: usize,
    pub(crate) slots: Vec<Slot>,
    pub(crate) nulls: Vec<Vec<u8>>,
    /// The longest of `nulls`: longer cells are compared with none.
    pub(crate) null_len: usize,
    pub(crate) delimiter: u8,
    /// Whether bad rows are skipped ([`Dialect::skip_bad_rows`]).
    pub(crate) skip: bool,
}

impl Layout {
    /// Whether a value cell (quotes removed, spaces trimmed) stands for a
    /// missing value.
    #[inline]
    pub(crate) fn is_null(&self, cell: &[u8]) -> bool {
        cell.len() <= self.null_len && self.nulls.iter().any(|n| n[..] == *cell)
    }
}

/// A fault before its line is known: the offset of its row's start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CellFault {
    pub(crate) offset: usize,
    pub(crate) column: Option<usize>,
    pub(crate) kind: CellError,
}

impl CellFault {
    /// The fault, its line counted in `bytes` from `start`, a line start.
    pub(crate) fn locate(self, bytes: &[u8], start: usize, lines_before: u64) -> DelimitedError {
        let end = self.offset.min(bytes.len()).max(start);
        let line = lines_before + 1 + memchr::memchr_iter(b'\n', &bytes[start..end]).count() as u64;
        DelimitedError {
            line,
            column: self.column,
            kind: self.kind,
        }
    }
}

#[cfg(test)]
mod tests;

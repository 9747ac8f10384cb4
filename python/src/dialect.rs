//! A delimited file's dialect as the pure-Python half hands it over:
//! `brc._dialect` checks the caller's options (`csv=`, `tsv=`,
//! `delimiter=`, `key=`, `value=`, `nulls=`, `on_error=`) and gives either
//! `None` (the challenge's text) or `(delimiter, key columns, value column,
//! nulls, skip bad rows)`, each column a 1-based position (an `int`) or a
//! header name (a `str`).

use brc::{Column, Dialect};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// A column as handed over: a position, or a name.
#[derive(FromPyObject)]
pub enum ColumnArg {
    Position(usize),
    Name(String),
}

/// A dialect as handed over: `(delimiter, key columns, value column,
/// nulls, skip bad rows)`.
pub type DialectArg = (String, Vec<ColumnArg>, ColumnArg, Vec<String>, bool);

/// The dialect `arg` stands for: `None` for the challenge's text.
pub fn dialect(arg: Option<DialectArg>) -> PyResult<Option<Dialect>> {
    let Some((delimiter, key, value, nulls, skip)) = arg else {
        return Ok(None);
    };
    let column = |c: ColumnArg| match c {
        ColumnArg::Position(0) => None,
        ColumnArg::Position(n) => Some(Column::Position(n)),
        ColumnArg::Name(name) => Some(Column::Name(name)),
    };
    // As the command line's `--delimiter` takes one.
    let delimiter = match delimiter.as_bytes() {
        [c] if c.is_ascii() && !matches!(c, b'"' | b'\n' | b'\r') => Some(*c),
        _ => None,
    };
    let key: Option<Vec<Column>> = key.into_iter().map(column).collect();
    match (delimiter, key.filter(|k| !k.is_empty()), column(value)) {
        (Some(delimiter), Some(key), Some(value)) => {
            let mut dialect = Dialect::csv(key, value).delimiter(delimiter);
            dialect.nulls = nulls;
            dialect.skip_bad_rows = skip;
            Ok(Some(dialect))
        }
        _ => Err(PyTypeError::new_err(
            "expected a dialect as brc._dialect() gives it: (delimiter, key columns, value \
             column, nulls, skip bad rows)",
        )),
    }
}

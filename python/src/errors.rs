//! The library's errors as Python exceptions: `brc.DataError` for
//! malformed input (a text line, a delimited file's row or cell, a Parquet
//! file or row of one, a partial), `OSError` (and its subclasses, by
//! errno) for I/O, an `OverflowError` for merged totals beyond their
//! format's integers and for values that do not fit the decimals asked,
//! a `ValueError` for statistics that cannot be shown,
//! and a `RuntimeError` rather than pyo3's `PanicException` should the
//! library ever panic.
//! Each is built in one function here; the pure-Python half builds its
//! `DataError`s through [`data_error`] too.

use std::any::Any;
use std::fmt::Display;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use pyo3::exceptions::{PyOSError, PyOverflowError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;

pyo3::create_exception!(
    brc,
    DataError,
    PyValueError,
    "Malformed input: its message is the one the `brc` command prints after \
     `brc: `; `.path`, and `.line` (1-based) and `.offset` (of the line's \
     first byte) in text, `.line` and `.column` (1-based both) in a \
     delimited file, or `.row_group` and `.row` (0-based) in Parquet, say \
     where (`None` where they do not apply), `.reason` what is wrong."
);

/// Why a call failed, before it is turned into a Python exception (which
/// needs the GIL, not held while the library runs).
#[derive(Debug)]
pub enum Failure {
    /// Reading or parsing the input named `path` failed.
    At { path: String, error: brc::Error },
    /// Merged totals beyond their format's integers.
    Overflow(brc::partial::OverflowError),
    /// Values that do not fit 18 digits with the decimals asked.
    Decimals(brc::DecimalsError),
    /// Statistics the summary's keys do not keep what they need for.
    Statistics(brc::StatisticsError),
    /// The library panicked: a bug, reported as such.
    Panic(String),
}

impl Failure {
    /// `error`, met while reading the input at `path`.
    pub fn at(path: &Path, error: brc::Error) -> Failure {
        Failure::At {
            path: path.display().to_string(),
            error,
        }
    }
}

impl From<brc::input::InputError> for Failure {
    fn from(e: brc::input::InputError) -> Failure {
        Failure::At {
            path: e.input.to_string(),
            error: e.error,
        }
    }
}

impl From<Failure> for PyErr {
    fn from(failure: Failure) -> PyErr {
        match failure {
            Failure::At {
                path,
                error: brc::Error::Data(e),
            } => line_error(&path, &e),
            Failure::At {
                path,
                error: brc::Error::Io(e),
            } => io_error(&path, &e),
            Failure::At {
                path,
                error: brc::Error::Parquet(e),
            } => parquet_error(&path, &e),
            Failure::At {
                path,
                error: brc::Error::Delimited(e),
            } => delimited_error(&path, &e),
            Failure::At { path, error } => other_error(&path, &error),
            Failure::Overflow(e) => PyOverflowError::new_err(e.to_string()),
            Failure::Decimals(e) => PyOverflowError::new_err(e.to_string()),
            Failure::Statistics(e) => statistics_error(&e),
            Failure::Panic(message) => {
                PyRuntimeError::new_err(format!("brc: internal error: {message}"))
            }
        }
    }
}

/// A `RuntimeError` for a failure of a kind the library added after this
/// module (its error enums are `#[non_exhaustive]`), with the command
/// line's message.
pub fn other_error(path: &str, e: &dyn Display) -> PyErr {
    PyRuntimeError::new_err(format!("{path}: {e}"))
}

/// The `ValueError` for statistics that cannot be shown, as `why` says:
/// a name that is no statistic, none at all, one named twice, or one that
/// needs what the summary's keys do not keep (a median of a summary made
/// without it asked).
pub fn statistics_error(why: &dyn Display) -> PyErr {
    PyValueError::new_err(why.to_string())
}

/// The `TypeError` for `found`, given as statistics and not of a type
/// they take, as `what` says (`stats names are str`).
pub fn statistics_type_error(what: &str, found: &Bound<'_, PyAny>) -> PyErr {
    let shown = found
        .repr()
        .map_or_else(|_| "?".to_string(), |r| r.to_string());
    PyTypeError::new_err(format!("{what}, found {shown}"))
}

/// The exception for a partial in the `brc-partial` format that could not
/// be read: a `brc.DataError` naming its line, an `OverflowError` for
/// totals beyond 64 bits, an `OSError` for I/O.
pub fn partial_error(e: brc::partial::PartialError) -> PyErr {
    use brc::partial::PartialError;
    const PARTIAL: &str = "<partial>";
    match e {
        PartialError::Line { line, kind } => {
            let place = Place::Line { line, offset: None };
            new_data_error(PARTIAL, place, &kind.to_string())
        }
        PartialError::Overflow(e) => Failure::Overflow(e).into(),
        PartialError::Io(e) => Failure::at(PARTIAL.as_ref(), e.into()).into(),
        e => other_error(PARTIAL, &e),
    }
}

/// A `brc.DataError` for `e` in the input at `path`.
fn line_error(path: &str, e: &brc::DataError) -> PyErr {
    let place = Place::Line {
        line: e.line,
        offset: Some(e.offset),
    };
    new_data_error(path, place, &e.kind.to_string())
}

/// A `brc.DataError` for a refused row or cell of the delimited file at
/// `path`: its line, and its column when a cell is at fault; the file for
/// a fault of no one row (line 0).
fn delimited_error(path: &str, e: &brc::DelimitedError) -> PyErr {
    let place = match e.line {
        0 => Place::File,
        line => Place::Cell {
            line,
            column: e.column.map(|c| c as u64),
        },
    };
    new_data_error(path, place, &e.kind.to_string())
}

/// A `brc.DataError` for the Parquet file at `path`: a refused row names
/// its row group and row; anything else (a missing column, a column of
/// the wrong type, a malformed file, a sum beyond 64 bits) the file.
fn parquet_error(path: &str, e: &brc::ParquetError) -> PyErr {
    match e {
        brc::ParquetError::Row {
            row_group,
            row,
            kind,
        } => {
            let place = Place::Row {
                row_group: *row_group as u64,
                row: *row,
            };
            new_data_error(path, place, &kind.to_string())
        }
        e => new_data_error(path, Place::File, &e.to_string()),
    }
}

/// Where in its input a `brc.DataError` is.
#[derive(Clone, Copy)]
enum Place {
    /// Line `line` (1-based) of text, starting at byte `offset` when known.
    Line { line: u64, offset: Option<u64> },
    /// The row of a delimited file starting on line `line`, at its cell in
    /// column `column` if one is at fault (1-based both).
    Cell { line: u64, column: Option<u64> },
    /// Row `row` of row group `row_group` of a Parquet file (0-based both).
    Row { row_group: u64, row: u64 },
    /// The input as a whole.
    File,
}

/// The one place a `brc.DataError` is built: for the input at `path`, at
/// `place`, malformed as `reason` says. Its message is the command line's:
/// `<path>: line <N>: <reason>`, `<path>: line <N>, column <C>: <reason>`,
/// `<path>: row group <G>, row <R>: <reason>`, or `<path>: <reason>`; its
/// attributes say the same, `None` where they do not apply.
fn new_data_error(path: &str, place: Place, reason: &str) -> PyErr {
    let (mut line, mut offset, mut column) = (None, None, None);
    let (mut row_group, mut row) = (None, None);
    let message = match place {
        Place::Line {
            line: n,
            offset: at,
        } => {
            (line, offset) = (Some(n), at);
            format!("{path}: line {n}: {reason}")
        }
        Place::Cell {
            line: n,
            column: None,
        } => {
            line = Some(n);
            format!("{path}: line {n}: {reason}")
        }
        Place::Cell {
            line: n,
            column: Some(c),
        } => {
            (line, column) = (Some(n), Some(c));
            format!("{path}: line {n}, column {c}: {reason}")
        }
        Place::Row {
            row_group: g,
            row: r,
        } => {
            (row_group, row) = (Some(g), Some(r));
            format!("{path}: row group {g}, row {r}: {reason}")
        }
        Place::File => format!("{path}: {reason}"),
    };
    let err = DataError::new_err(message);
    Python::attach(|py| {
        let value = err.value(py);
        let set = || -> PyResult<()> {
            value.setattr("path", path)?;
            value.setattr("line", line)?;
            value.setattr("offset", offset)?;
            value.setattr("column", column)?;
            value.setattr("row_group", row_group)?;
            value.setattr("row", row)?;
            value.setattr("reason", reason)
        };
        set().err().unwrap_or(err)
    })
}

/// `brc._brc.data_error`: the `brc.DataError` (not raised) for the input
/// at `path`, at line `line` (starting at byte `offset`, if known, or at
/// the cell in column `column` of a delimited file's row), at row `row` of
/// row group `row_group`, or neither, as the library's errors are: for the
/// pure-Python half, which names an error's input as its caller spelt it
/// (`brc.dask`).
#[pyfunction]
#[pyo3(signature = (path, reason, *, line = None, offset = None, column = None, row_group = None, row = None))]
#[allow(clippy::too_many_arguments)]
pub fn data_error(
    py: Python<'_>,
    path: &str,
    reason: &str,
    line: Option<u64>,
    offset: Option<u64>,
    column: Option<u64>,
    row_group: Option<u64>,
    row: Option<u64>,
) -> PyResult<Py<PyAny>> {
    let place =
        match (line, offset, column, row_group, row) {
            (Some(line), offset, None, None, None) => Place::Line { line, offset },
            (Some(line), None, Some(column), None, None) => Place::Cell {
                line,
                column: Some(column),
            },
            (None, None, None, Some(row_group), Some(row)) => Place::Row { row_group, row },
            (None, None, None, None, None) => Place::File,
            _ => return Err(PyValueError::new_err(
                "expected a line (and an offset or a column), a row group and a row, or neither",
            )),
        };
    Ok(new_data_error(path, place, reason)
        .into_value(py)
        .into_any())
}

/// An `OSError` for `e` on the input at `path`, built as
/// `OSError(errno, strerror, filename)` is: the errno when the system gave
/// one (so that Python picks `FileNotFoundError` and the like); else, for
/// an object store's missing bucket or key or refused credentials, the
/// errno a missing or forbidden file has (`FileNotFoundError`,
/// `PermissionError`, so that a caller handles both alike); else `None` (a
/// corrupt gzip stream, a file that shrank while read, a server that
/// cannot be reached). `strerror` is the reason the command line prints
/// either way, so that `str(error)` says what went wrong.
fn io_error(path: &str, e: &std::io::Error) -> PyErr {
    // ENOENT and EACCES: the same numbers on every system Python runs on
    // (POSIX systems and Windows' C runtime alike).
    const ENOENT: i32 = 2;
    const EACCES: i32 = 13;
    let (code, strerror) = match e.raw_os_error() {
        // The system's message without the " (os error N)" Rust appends,
        // as Python's own `OSError`s word it.
        Some(code) => {
            let text = std::io::Error::from_raw_os_error(code).to_string();
            let text = text.split(" (os error").next().unwrap_or(&text).to_string();
            (Some(code), text)
        }
        None => {
            let code = match e.kind() {
                std::io::ErrorKind::NotFound => Some(ENOENT),
                std::io::ErrorKind::PermissionDenied => Some(EACCES),
                _ => None,
            };
            (code, e.to_string())
        }
    };
    PyOSError::new_err((code, strerror, path.to_string()))
}

/// Runs `f`, turning a panic into [`Failure::Panic`].
pub fn guarded<T>(f: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| Err(Failure::Panic(text(&payload))))
}

/// A panic's message.
fn text(payload: &Box<dyn Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_string()
    }
}

/// As in the `brc` binary: an engine that saw a mapped file's bytes turn to
/// zeros under it may panic, and the library turns that into an error
/// ("the file shrank"), so the panic's message is not printed meanwhile.
pub fn install_panic_hook() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !brc::shrink::seen() && !brc::parquet::reading() {
            default_hook(info);
        }
    }));
}

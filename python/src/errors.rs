//! The library's errors as Python exceptions: `brc.DataError` for
//! malformed input, `OSError` (and its subclasses, by errno) for I/O, and a
//! `OverflowError` for merged totals beyond 64 bits, and a `RuntimeError`
//! rather than pyo3's `PanicException` should the library ever panic.

use std::any::Any;
use std::fmt::Display;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use pyo3::exceptions::{PyOSError, PyOverflowError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

pyo3::create_exception!(
    brc,
    DataError,
    PyValueError,
    "Malformed input: its message is the one the `brc` command prints after \
     `brc: `; `.path`, `.line` (1-based) and `.offset` (of the line's first \
     byte) say where, `.reason` what is wrong."
);

/// Why a call failed, before it is turned into a Python exception (which
/// needs the GIL, not held while the library runs).
#[derive(Debug)]
pub enum Failure {
    /// Reading or parsing the input named `path` failed.
    At { path: String, error: brc::Error },
    /// Merged totals beyond 64 bits.
    Overflow(brc::partial::OverflowError),
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
            } => data_error(&path, &e),
            Failure::At {
                path,
                error: brc::Error::Io(e),
            } => io_error(&path, &e),
            Failure::At { path, error } => other_error(&path, &error),
            Failure::Overflow(e) => PyOverflowError::new_err(e.to_string()),
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

/// The exception for a partial in the `brc-partial` format that could not
/// be read: a `brc.DataError` naming its line, an `OverflowError` for
/// totals beyond 64 bits, an `OSError` for I/O.
pub fn partial_error(e: brc::partial::PartialError) -> PyErr {
    use brc::partial::PartialError;
    const PARTIAL: &str = "<partial>";
    match e {
        PartialError::Line { line, kind } => line_error(PARTIAL, line, None, &kind),
        PartialError::Overflow(e) => Failure::Overflow(e).into(),
        PartialError::Io(e) => Failure::at(PARTIAL.as_ref(), e.into()).into(),
        e => other_error(PARTIAL, &e),
    }
}

/// A `brc.DataError` for `e` in the input at `path`.
fn data_error(path: &str, e: &brc::DataError) -> PyErr {
    line_error(path, e.line, Some(e.offset), &e.kind)
}

/// A `brc.DataError` for line `line` of the input at `path` (starting at
/// byte `offset`, when known), malformed as `reason` says. Its message is
/// the command line's, `<path>: line <N>: <reason>`.
fn line_error(path: &str, line: u64, offset: Option<u64>, reason: &dyn Display) -> PyErr {
    let reason = reason.to_string();
    let err = DataError::new_err(format!("{path}: line {line}: {reason}"));
    Python::attach(|py| {
        let value = err.value(py);
        let set = || -> PyResult<()> {
            value.setattr("path", path)?;
            value.setattr("line", line)?;
            value.setattr("offset", offset)?;
            value.setattr("reason", &reason)
        };
        set().err().unwrap_or(err)
    })
}

/// An `OSError` for `e` on the input at `path`, built as
/// `OSError(errno, strerror, filename)` is: the errno when the system gave
/// one (so that Python picks `FileNotFoundError` and the like), else
/// `None` (a corrupt gzip stream, a file that shrank while read), and the
/// reason the command line prints as `strerror` either way, so that
/// `str(error)` says what went wrong.
fn io_error(path: &str, e: &std::io::Error) -> PyErr {
    let code = e.raw_os_error();
    let strerror = match code {
        // The system's message without the " (os error N)" Rust appends,
        // as Python's own `OSError`s word it.
        Some(code) => {
            let text = std::io::Error::from_raw_os_error(code).to_string();
            text.split(" (os error").next().unwrap_or(&text).to_string()
        }
        None => e.to_string(),
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

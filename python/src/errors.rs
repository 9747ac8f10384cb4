//! The library's errors as Python exceptions: `brc.DataError` for
//! malformed input, `OSError` (and its subclasses, by errno) for I/O, and a
//! `OverflowError` for merged totals beyond 64 bits, and a `RuntimeError`
//! rather than pyo3's `PanicException` should the library ever panic.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use pyo3::exceptions::{PyOSError, PyOverflowError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

pyo3::create_exception!(
    brc,
    DataError,
    PyValueError,
    "Malformed input: its message is the one the `brc` command prints after \
     `brc: `, and `.path`, `.line` (1-based) and `.offset` (of the line's \
     first byte) say where."
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

impl From<Failure> for PyErr {
    fn from(failure: Failure) -> PyErr {
        Python::attach(|py| match failure {
            Failure::At {
                path,
                error: brc::Error::Data(e),
            } => data_error(py, &path, &e),
            Failure::At {
                path,
                error: brc::Error::Io(e),
            } => io_error(py, &path, &e),
            Failure::Overflow(e) => PyOverflowError::new_err(e.to_string()),
            Failure::Panic(message) => {
                PyRuntimeError::new_err(format!("brc: internal error: {message}"))
            }
        })
    }
}

/// A `brc.DataError` for `e` in the input at `path`.
fn data_error(py: Python<'_>, path: &str, e: &brc::DataError) -> PyErr {
    let err = DataError::new_err(format!("{path}: {e}"));
    let value = err.value(py);
    let set = || -> PyResult<()> {
        value.setattr("path", path)?;
        value.setattr("line", e.line)?;
        value.setattr("offset", e.offset)
    };
    set().err().unwrap_or(err)
}

/// An `OSError` for `e` on the input at `path`: with the errno when the
/// system gave one (so that Python picks `FileNotFoundError` and the
/// like), with the library's message otherwise (a corrupt gzip stream, a
/// file that shrank while read).
fn io_error(py: Python<'_>, path: &str, e: &std::io::Error) -> PyErr {
    let err = match e.raw_os_error() {
        Some(code) => {
            let text = std::io::Error::from_raw_os_error(code).to_string();
            let strerror = text.split(" (os error").next().unwrap_or(&text).to_string();
            PyOSError::new_err((code, strerror, path.to_string()))
        }
        None => PyOSError::new_err(format!("{path}: {e}")),
    };
    // Set again for the errno-less form, which takes no filename argument.
    match err.value(py).setattr("filename", path) {
        Ok(()) => err,
        Err(e) => e,
    }
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
        if !brc::shrink::seen() {
            default_hook(info);
        }
    }));
}

//! `brc._brc`: the native half of the `brc` Python package, a thin layer
//! over the `brc` library. The pure-Python half (`brc/__init__.py`) holds
//! what needs no Rust: argument normalisation, pyarrow/polars/pandas glue,
//! and the Dask integration.

mod arrow;
mod errors;
mod partial;
mod summary;

use std::path::PathBuf;

use brc::{Columns, Engine, Inputs, Options, Source, MAX_THREADS};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyInt;

use crate::errors::{guarded, Failure};
use crate::summary::Summary;

/// Big blocks on huge pages, as in the `brc` binary: see `brc::alloc`.
#[global_allocator]
static ALLOC: brc::alloc::HugeBlocks = brc::alloc::HugeBlocks;

/// The engine named `name`, or a `ValueError` listing the names.
fn engine(name: &str) -> PyResult<Engine> {
    let found = Engine::ALL.into_iter().find(|e| e.name() == name);
    found.ok_or_else(|| {
        let names: Vec<_> = Engine::ALL.iter().map(|e| e.name()).collect();
        PyValueError::new_err(format!(
            "unknown engine {name:?}: expected one of {}",
            names.join(", ")
        ))
    })
}

/// The options of a run on `threads` threads (`None`: every core), checked
/// before any thread is spawned.
pub(crate) fn options(threads: Option<&Bound<'_, PyInt>>) -> PyResult<Options> {
    let mut options = Options::default();
    if let Some(n) = threads {
        let allowed = n.extract::<usize>().ok();
        options.threads = (allowed.filter(|t| (1..=MAX_THREADS).contains(t))).ok_or_else(|| {
            PyValueError::new_err(format!(
                "threads must be at least 1 and at most {MAX_THREADS}, found {n}"
            ))
        })?;
    }
    Ok(options)
}

/// The Parquet columns `(key, value)`: the names', the values'.
pub(crate) fn columns((key, value): (String, String)) -> Columns {
    Columns { key, value }
}

/// The files at `paths` (a directory stands for the regular files in it),
/// as the command line lists them, Parquet files' names and values read
/// from `columns`.
pub(crate) fn inputs(paths: Vec<PathBuf>, columns: Columns) -> Inputs {
    Inputs::new(paths.into_iter().map(Source::from_path)).columns(columns)
}

/// Aggregates the files at `paths` (a directory stands for the regular
/// files in it; text or Parquet) into one summary, as the command line
/// reads them, without the GIL.
#[pyfunction]
#[pyo3(signature = (paths, threads, engine_name, columns))]
fn aggregate(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    threads: Option<Bound<'_, PyInt>>,
    engine_name: &str,
    columns: (String, String),
) -> PyResult<Summary> {
    let engine = engine(engine_name)?;
    let options = options(threads.as_ref())?;
    let columns = self::columns(columns);
    let summary = py.detach(|| {
        guarded(|| {
            let inputs = self::inputs(paths, columns);
            inputs.aggregate(engine, &options).map_err(Failure::from)
        })
    })?;
    Ok(Summary::new(summary))
}

#[pymodule]
fn _brc(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::install_panic_hook();
    m.add_function(wrap_pyfunction!(aggregate, m)?)?;
    m.add_class::<Summary>()?;
    m.add_class::<partial::Partial>()?;
    m.add_function(wrap_pyfunction!(partial::partial_file, m)?)?;
    m.add_function(wrap_pyfunction!(partial::partial_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(partial::merge, m)?)?;
    m.add_function(wrap_pyfunction!(errors::data_error, m)?)?;
    m.add("DataError", m.py().get_type::<errors::DataError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add(
        "ENGINES",
        Engine::ALL.iter().map(|e| e.name()).collect::<Vec<_>>(),
    )?;
    Ok(())
}

//! `brc._brc`: the native half of the `brc` Python package, a thin layer
//! over the `brc` library. The pure-Python half (`brc/__init__.py`) holds
//! what needs no Rust: argument normalisation, pyarrow/polars/pandas glue,
//! and the Dask integration.

mod arrow;
mod dialect;
mod errors;
mod partial;
mod statistics;
mod summary;

use std::path::PathBuf;

use brc::{Columns, Dialect, Engine, Inputs, Kept, Options, Source, MAX_SCALE, MAX_THREADS};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyInt;

use crate::dialect::DialectArg;
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

/// The decimals a summary is shown with, `decimals` (`None`: its scale's),
/// checked: at most [`MAX_SCALE`], as the command line's `--decimals`.
pub(crate) fn decimals(decimals: Option<&Bound<'_, PyInt>>) -> PyResult<Option<u32>> {
    let Some(n) = decimals else {
        return Ok(None);
    };
    let allowed = n.extract::<u32>().ok().filter(|d| *d <= MAX_SCALE);
    allowed.map(Some).ok_or_else(|| {
        PyValueError::new_err(format!(
            "decimals must be at least 0 and at most {MAX_SCALE}, found {n}"
        ))
    })
}

/// `brc._brc.check_decimals`: `decimals` if [`decimals`] takes it, for a
/// caller that checks before a long run (`brc.dask`).
#[pyfunction]
fn check_decimals(decimals: Bound<'_, PyInt>) -> PyResult<u32> {
    Ok(self::decimals(Some(&decimals))?.unwrap_or_default())
}

/// The Parquet columns `(key, value)`: the names', the values'.
pub(crate) fn columns((key, value): (String, String)) -> Columns {
    Columns { key, value }
}

/// The files at `paths` (a directory stands for the regular files in it),
/// as the command line lists them, Parquet files' names and values read
/// from `columns`, text files read as `dialect` says if given, each key
/// keeping what `kept` says (what the statistics asked need).
pub(crate) fn inputs(
    paths: Vec<PathBuf>,
    columns: Columns,
    dialect: Option<Dialect>,
    kept: Kept,
) -> Inputs {
    let inputs = Inputs::new(paths.into_iter().map(Source::from_path))
        .columns(columns)
        .keeping(kept);
    match dialect {
        Some(dialect) => inputs.delimited(dialect),
        None => inputs,
    }
}

/// Aggregates the files at `paths` (a directory stands for the regular
/// files in it; text, delimited text as `dialect` says, or Parquet) into
/// one summary shown with `decimals` and the statistics `stats` (each key
/// keeping what they need), as the command line reads them, without the
/// GIL; with the bad rows skipped, if `dialect` says to skip them, named
/// by their inputs' paths.
#[pyfunction]
#[pyo3(signature = (paths, threads, engine_name, columns, dialect = None, decimals = None, stats = None))]
#[allow(clippy::too_many_arguments)]
fn aggregate(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    threads: Option<Bound<'_, PyInt>>,
    engine_name: &str,
    columns: (String, String),
    dialect: Option<DialectArg>,
    decimals: Option<Bound<'_, PyInt>>,
    stats: Option<Bound<'_, PyAny>>,
) -> PyResult<Summary> {
    let engine = engine(engine_name)?;
    let options = options(threads.as_ref())?;
    let columns = self::columns(columns);
    let dialect = dialect::dialect(dialect)?;
    let decimals = self::decimals(decimals.as_ref())?;
    let statistics = statistics::statistics(stats.as_ref())?;
    let kept = statistics.as_ref().map_or(Kept::Basic, |s| s.kept());
    let (summary, skipped) = py.detach(|| {
        guarded(|| {
            let inputs = self::inputs(paths, columns, dialect, kept);
            let sources = self::sources(&inputs);
            let summary = inputs.aggregate(engine, &options)?;
            let skipped = summary::skipped(&summary, &sources);
            let summary = match decimals {
                Some(n) => summary.with_decimals(n).map_err(Failure::Decimals)?,
                None => summary,
            };
            let summary = match statistics {
                Some(s) => summary.with_statistics(s).map_err(Failure::Statistics)?,
                None => summary,
            };
            Ok((summary, skipped))
        })
    })?;
    Ok(Summary::skipping(summary, skipped))
}

/// The paths of `inputs`, directories expanded, in the run's order: as an
/// error names its input, so that a skipped row's input is named alike.
pub(crate) fn sources(inputs: &Inputs) -> Vec<String> {
    inputs.sources().map(|s| s.to_string()).collect()
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
    m.add_function(wrap_pyfunction!(check_decimals, m)?)?;
    m.add_function(wrap_pyfunction!(statistics::check_statistics, m)?)?;
    m.add("DataError", m.py().get_type::<errors::DataError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add(
        "NULLS",
        pyo3::types::PyTuple::new(m.py(), brc::delimited::NULLS)?,
    )?;
    m.add("MAX_DECIMALS", MAX_SCALE)?;
    m.add(
        "ENGINES",
        Engine::ALL.iter().map(|e| e.name()).collect::<Vec<_>>(),
    )?;
    Ok(())
}

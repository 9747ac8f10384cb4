//! `brc.Partial` and the functions that make and merge partials: the
//! library's `brc::Partial`, whose bytes are the documented `brc-partial`
//! format (docs/PARTIAL-FORMAT.md).

use std::borrow::Cow;
use std::io::{Cursor, Write};
use std::path::PathBuf;

use brc::input::Input;
use brc::{Dialect, Engine, Kept};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyTuple};

use crate::dialect::DialectArg;
use crate::errors::{guarded, Failure};
use crate::summary::{Skipped, Summary};

/// The exact, mergeable state of an aggregation: per station its count,
/// sum, min and max in integer units (tenths for the challenge's text and
/// Parquet), its count of missing values for a delimited file's, and what
/// the statistics asked of its run need (the sum of squares, the counts
/// per value).
#[pyclass(module = "brc", name = "Partial", frozen)]
pub struct Partial {
    inner: brc::Partial,
}

#[pymethods]
impl Partial {
    /// Parses the `brc-partial` format (one partial, or several one after
    /// the other, merged).
    #[staticmethod]
    pub fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Partial> {
        let parsed = py.detach(|| guarded(|| Ok(brc::Partial::parse(data))))?;
        let inner = parsed.map_err(crate::errors::partial_error)?;
        Ok(Partial { inner })
    }

    /// The partial in the `brc-partial` format.
    fn __bytes__<'py>(&self, py: Python<'py>) -> Cow<'py, [u8]> {
        Cow::Owned(py.detach(|| self.inner.to_bytes()))
    }

    /// The final result: the summary of everything merged into this partial.
    pub fn finish(&self, py: Python<'_>) -> Summary {
        Summary::new(py.detach(|| self.inner.clone().finish()))
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Partial>()
            .is_ok_and(|o| o.get().inner == self.inner)
    }

    fn __repr__(&self) -> String {
        format!("<brc.Partial of {} stations>", self.inner.len())
    }

    /// Pickled as its bytes, the documented format.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let bytes = pyo3::types::PyBytes::new(py, &slf.get().inner.to_bytes());
        let parse = py.get_type::<Partial>().getattr("from_bytes")?;
        PyTuple::new(
            py,
            [parse.into_any(), PyTuple::new(py, [bytes])?.into_any()],
        )
    }
}

/// The partial of the lines of the file at `path` whose first byte lies in
/// `start..end` (any input the command line reads: mapped, or
/// decompressed, which only the range holding byte 0 reads; the rows of a
/// delimited file read as `dialect` says, its quotes counted from its
/// start), or of the row groups whose first byte does (a Parquet file, its
/// names and values read from `columns`), each key keeping what the
/// statistics `stats` need, without the GIL; and the bad rows skipped, if
/// `dialect` says to skip them (a partial holds none), named by the path.
#[pyfunction]
#[pyo3(signature = (path, start, end, threads, columns, dialect = None, stats = None))]
#[allow(clippy::too_many_arguments)]
pub fn partial_file(
    py: Python<'_>,
    path: PathBuf,
    start: u64,
    end: u64,
    threads: Option<Bound<'_, PyInt>>,
    columns: (String, String),
    dialect: Option<DialectArg>,
    stats: Option<Bound<'_, PyAny>>,
) -> PyResult<(Partial, Skipped)> {
    let options = crate::options(threads.as_ref())?;
    let columns = crate::columns(columns);
    let dialect = crate::dialect::dialect(dialect)?;
    let kept = kept(stats)?;
    let (inner, skipped) = py.detach(|| {
        guarded(|| {
            let inputs = crate::inputs(vec![path], columns, dialect, kept).within(start..end);
            let sources = crate::sources(&inputs);
            let summary = inputs.aggregate(Engine::Fast, &options)?;
            let skipped = crate::summary::skipped(&summary, &sources);
            Ok((brc::Partial::from(summary), skipped))
        })
    })?;
    Ok((Partial { inner }, skipped))
}

/// The partial of bytes the caller holds: read as a file is when
/// `first_line_is_whole` (decompressed if gzip or zstd, a byte-order mark
/// at the start skipped; a whole Parquet file, its names and values read
/// from `columns`; a whole delimited file, read as `dialect` says), else
/// from the first line start after a `\n` on (the line before belongs to
/// the bytes before), which a delimited file's bytes cannot be: its rows
/// are told apart from its start on. Each key keeps what the statistics
/// `stats` need. With the bad rows skipped, if `dialect` says to skip
/// them, named `<bytes>`.
#[pyfunction]
#[pyo3(signature = (data, first_line_is_whole, threads, columns, dialect = None, stats = None))]
pub fn partial_bytes(
    py: Python<'_>,
    data: &[u8],
    first_line_is_whole: bool,
    threads: Option<Bound<'_, PyInt>>,
    columns: (String, String),
    dialect: Option<DialectArg>,
    stats: Option<Bound<'_, PyAny>>,
) -> PyResult<(Partial, Skipped)> {
    let options = crate::options(threads.as_ref())?;
    let columns = crate::columns(columns);
    let dialect = crate::dialect::dialect(dialect)?;
    let kept = kept(stats)?;
    if dialect.is_some() && !first_line_is_whole {
        return Err(PyValueError::new_err(
            "a delimited file's bytes are read whole, from its header on: \
             first_line_is_whole must be true",
        ));
    }
    const NAME: &str = "<bytes>";
    let name = NAME.as_ref();
    let (inner, skipped) = py.detach(|| {
        guarded(|| {
            // The library reads a whole input held in memory (a stream:
            // decompressed, a byte-order mark skipped) keeping the basic
            // stats only: keeping more, such bytes are read as a file.
            let detailed = kept > Kept::Basic;
            let summary =
                if first_line_is_whole && (is_parquet(data) || dialect.is_some() || detailed) {
                    file_bytes(data, columns, dialect, kept, &options)
                } else if first_line_is_whole {
                    let input = Input::from_reader(Cursor::new(data.to_vec()))
                        .map_err(|e| Failure::at(name, e.into()))?;
                    input.aggregate(Engine::Fast, &options)
                } else {
                    let skip = memchr::memchr(b'\n', data).map_or(data.len(), |nl| nl + 1);
                    let lines = &data[skip..];
                    brc::aggregate_keeping(lines, kept, Engine::Fast, &options).map_err(|mut e| {
                        // Where the line is in `data`.
                        e.offset += skip as u64;
                        e.line += u64::from(skip > 0);
                        e.into()
                    })
                };
            let summary = summary.map_err(|e| Failure::at(name, e))?;
            let skipped = crate::summary::skipped(&summary, &[NAME.to_string()]);
            Ok((brc::Partial::from(summary), skipped))
        })
    })?;
    Ok((Partial { inner }, skipped))
}

/// Whether `data` is a Parquet file: Parquet's magic bytes at both ends
/// (as the library tells a Parquet file).
fn is_parquet(data: &[u8]) -> bool {
    const MAGIC: &[u8] = b"PAR1";
    data.len() >= 12 && data.starts_with(MAGIC) && data.ends_with(MAGIC)
}

/// Aggregates `data`, a Parquet file (its names and values read from
/// `columns`), a delimited file (read as `dialect` says) or text, each
/// key keeping what `kept` says, which the library reads from a file
/// only: from a temporary file, removed after.
fn file_bytes(
    data: &[u8],
    columns: brc::Columns,
    dialect: Option<Dialect>,
    kept: Kept,
    options: &brc::Options,
) -> Result<brc::Summary, brc::Error> {
    let mut file = tempfile::Builder::new().prefix("brc-bytes-").tempfile()?;
    file.write_all(data)?;
    file.flush()?;
    let inputs = crate::inputs(vec![file.path().to_path_buf()], columns, dialect, kept);
    inputs.aggregate(Engine::Fast, options).map_err(|e| e.error)
}

/// What each key keeps for the statistics `stats` (`None`: none asked),
/// checked as `brc.aggregate` checks them.
fn kept(stats: Option<Bound<'_, PyAny>>) -> PyResult<Kept> {
    let statistics = crate::statistics::statistics(stats.as_ref())?;
    Ok(statistics.map_or(Kept::Basic, |s| s.kept()))
}

/// Merges partials into the partial of all their inputs.
#[pyfunction]
pub fn merge(py: Python<'_>, partials: Vec<PyRef<'_, Partial>>) -> PyResult<Partial> {
    let parts: Vec<brc::Partial> = partials.iter().map(|p| p.inner.clone()).collect();
    let inner =
        py.detach(|| guarded(|| brc::Partial::merge_all(parts).map_err(Failure::Overflow)))?;
    Ok(Partial { inner })
}

//! `brc.Summary`: a finished aggregation, printed as the command line
//! prints it or handed to Arrow.

use std::sync::Arc;

use brc::output::{self, Format};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyInt, PyTuple};

use crate::errors::{guarded, Failure};

/// The result of an aggregation: every station's min, mean and max (or
/// the statistics asked), sorted by the bytes of its name, at the
/// decimals it is shown with, and the bad rows its run skipped. Shared,
/// never copied, by its Arrow exports.
#[pyclass(module = "brc", name = "Summary", frozen)]
pub struct Summary {
    inner: Arc<brc::Summary>,
    skipped: Skipped,
}

/// Bad rows skipped (a delimited file's, with `on_error="skip"`): how many,
/// and where the first few were, each its input's path as the caller gave
/// it and the 1-based line its row starts on.
pub type Skipped = (u64, Vec<(String, u64)>);

/// The bad rows `summary`'s run skipped, its inputs' indices turned into
/// `sources`, the inputs' paths in the run's order (as errors name them).
pub fn skipped(summary: &brc::Summary, sources: &[String]) -> Skipped {
    let (count, first) = summary.skipped();
    let named = first.iter().map(|&(input, line)| {
        let path = sources.get(input).map_or("<input>", String::as_str);
        (path.to_string(), line)
    });
    (count, named.collect())
}

impl Summary {
    /// `summary`, no bad rows skipped.
    pub fn new(summary: brc::Summary) -> Summary {
        Summary::skipping(summary, (0, Vec::new()))
    }

    /// `summary`, whose run skipped the bad rows `skipped`.
    pub fn skipping(summary: brc::Summary, skipped: Skipped) -> Summary {
        Summary {
            inner: Arc::new(summary),
            skipped,
        }
    }
}

impl Summary {
    /// The summary shown with `decimals` decimals, if given: an
    /// `OverflowError` if a value does not fit so.
    fn shown_with(self, py: Python<'_>, decimals: Option<u32>) -> PyResult<Summary> {
        let Some(n) = decimals.filter(|n| *n != self.inner.decimals()) else {
            return Ok(self);
        };
        let summary = Arc::unwrap_or_clone(self.inner);
        let shown = py.detach(|| summary.with_decimals(n).map_err(Failure::Decimals))?;
        Ok(Summary::skipping(shown, self.skipped))
    }

    /// The summary shown with the statistics `stats`, if given: a
    /// `ValueError` for a name that is no statistic, or one its keys do
    /// not keep what it needs for.
    fn showing(self, py: Python<'_>, stats: Option<Bound<'_, PyAny>>) -> PyResult<Summary> {
        let Some(statistics) = crate::statistics::statistics(stats.as_ref())? else {
            return Ok(self);
        };
        let summary = Arc::unwrap_or_clone(self.inner);
        let shown = py.detach(|| {
            summary
                .with_statistics(statistics)
                .map_err(Failure::Statistics)
        })?;
        Ok(Summary::skipping(shown, self.skipped))
    }

    /// A summary sharing this one's stations and bad rows skipped.
    fn shared(&self) -> Summary {
        Summary {
            inner: Arc::clone(&self.inner),
            skipped: self.skipped.clone(),
        }
    }
}

/// The output format named `name`, or a `ValueError` listing the names.
fn format_named(name: &str) -> PyResult<Format> {
    let found = Format::ALL.iter().find(|(n, _)| *n == name);
    found.map(|&(_, f)| f).ok_or_else(|| {
        let names: Vec<_> = Format::ALL.iter().map(|(n, _)| *n).collect();
        PyValueError::new_err(format!(
            "unknown format {name:?}: expected one of {}",
            names.join(", ")
        ))
    })
}

/// `summary` rendered in `format`, final newline included, without the GIL
/// (a million stations take a while).
fn render(py: Python<'_>, summary: &brc::Summary, format: Format) -> String {
    let bytes = py.detach(|| output::render(summary, format));
    String::from_utf8(bytes).expect("names are UTF-8 and so is every format")
}

#[pymethods]
impl Summary {
    /// The official one-line result, `{A=min/mean/max, ...}`, without the
    /// final newline.
    fn __str__(&self, py: Python<'_>) -> String {
        let mut line = render(py, &self.inner, Format::Official);
        line.pop();
        line
    }

    fn __repr__(&self) -> String {
        format!("<brc.Summary of {} stations>", self.inner.len())
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// Equal stations, scale, decimals, counting of missing values,
    /// statistics shown and bad rows skipped (named by path, so that a run
    /// of `brc.dask` and one of `brc.aggregate` over the same files
    /// compare equal).
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Summary>().is_ok_and(|o| {
            let (a, b) = (&*self.inner, &*o.get().inner);
            a.scale() == b.scale()
                && a.decimals() == b.decimals()
                && a.counts_missing() == b.counts_missing()
                && a.statistics() == b.statistics()
                && a.iter().eq(b.iter())
                && self.skipped == o.get().skipped
        })
    }

    /// The text the command line writes with `--format <format>`, final
    /// newline included.
    fn format(&self, py: Python<'_>, format: &str) -> PyResult<String> {
        Ok(render(py, &self.inner, format_named(format)?))
    }

    /// Pickled as its partial (the `brc-partial` format), which holds every
    /// station's exact state and what its statistics need, with its
    /// decimals, the statistics it shows and the bad rows skipped, so that
    /// a summary crosses processes (Dask tasks) whole.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let this = slf.get();
        let text = render(py, &this.inner, Format::Partial);
        let restore = py.get_type::<Summary>().getattr("_restore")?;
        let bytes = PyBytes::new(py, text.as_bytes()).into_any();
        let decimals = this.inner.decimals().into_pyobject(py)?.into_any();
        let skipped = this.skipped.clone().into_pyobject(py)?.into_any();
        let names = this.inner.statistics().map(crate::statistics::names);
        let stats = names.into_pyobject(py)?.into_any();
        let args = PyTuple::new(py, [bytes, decimals, skipped, stats])?;
        PyTuple::new(py, [restore, args.into_any()])
    }

    /// The summary pickled by `__reduce__`.
    #[staticmethod]
    #[pyo3(signature = (data, decimals, skipped, stats = None))]
    fn _restore(
        py: Python<'_>,
        data: &[u8],
        decimals: Bound<'_, PyInt>,
        skipped: Skipped,
        stats: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Summary> {
        let summary = Summary::from_partial_bytes(py, data, Some(decimals), stats)?;
        Ok(Summary::skipping(
            Arc::unwrap_or_clone(summary.inner),
            skipped,
        ))
    }

    /// The same summary, its run having skipped the bad rows `skipped`:
    /// for the pure-Python half (`brc.dask`), whose tasks count them.
    fn _skipping(&self, skipped: Skipped) -> Summary {
        Summary {
            inner: Arc::clone(&self.inner),
            skipped,
        }
    }

    /// The bad rows its run skipped (a delimited file's, with
    /// `on_error="skip"`): `(count, [(path, line), ...])`, the first five
    /// by input and line, each input's path as the caller gave it.
    #[getter]
    fn skipped(&self) -> Skipped {
        self.skipped.clone()
    }

    /// The summary of a partial in the `brc-partial` format, shown with
    /// `decimals` (default: its scale's) and the statistics `stats` (as
    /// `brc merge --stats LIST` shows them).
    #[staticmethod]
    #[pyo3(signature = (data, decimals = None, stats = None))]
    fn from_partial_bytes(
        py: Python<'_>,
        data: &[u8],
        decimals: Option<Bound<'_, PyInt>>,
        stats: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Summary> {
        let decimals = crate::decimals(decimals.as_ref())?;
        let parsed = py.detach(|| guarded(|| Ok(brc::Partial::parse(data))))?;
        let partial = parsed.map_err(crate::errors::partial_error)?;
        let summary = py.detach(|| partial.finish());
        Summary::new(summary)
            .shown_with(py, decimals)?
            .showing(py, stats)
    }

    /// The number of decimals of the units its values are held in: the
    /// most any value of its input had (1 for the challenge's tenths).
    #[getter]
    fn scale(&self) -> u32 {
        self.inner.scale()
    }

    /// The number of decimals its values are shown with: its scale, unless
    /// `with_decimals` said otherwise.
    #[getter]
    fn decimals(&self) -> u32 {
        self.inner.decimals()
    }

    /// Whether it counts missing values (a delimited file's empty or null
    /// cells): then its formats and its Arrow columns say how many each
    /// station had.
    #[getter]
    fn counts_missing(&self) -> bool {
        self.inner.counts_missing()
    }

    /// The same summary shown with `decimals` decimals (0 to 9), as the
    /// command line's `--decimals`: padded with zeros, or rounded half
    /// toward +inf.
    fn with_decimals(&self, py: Python<'_>, decimals: Bound<'_, PyInt>) -> PyResult<Summary> {
        let decimals = crate::decimals(Some(&decimals))?;
        self.shared().shown_with(py, decimals)
    }

    /// The statistics it shows, by name, in order (`None`: min, mean and
    /// max, the official ones, with the count beside them in tables).
    #[getter]
    fn statistics(&self) -> Option<Vec<String>> {
        self.inner.statistics().map(crate::statistics::names)
    }

    /// The same summary shown with the statistics `stats`, as the command
    /// line's `--stats`: a `ValueError` for a name that is no statistic,
    /// or one that needs what its keys did not keep.
    fn with_statistics(&self, py: Python<'_>, stats: Bound<'_, PyAny>) -> PyResult<Summary> {
        self.shared().showing(py, Some(stats))
    }

    /// The stations as a `pyarrow.Table` (see `__arrow_c_stream__`).
    fn to_arrow<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        table(slf, "arrow")
    }

    /// The stations as a `polars.DataFrame`, its columns Arrow's.
    fn to_polars<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let polars = import_for(slf.py(), "polars", "polars")?;
        polars
            .getattr("from_arrow")?
            .call1((table(slf, "polars")?,))
    }

    /// The stations as a `pandas.DataFrame` whose columns keep their Arrow
    /// types (`pandas.ArrowDtype`): exact decimals, no copy to objects.
    fn to_pandas<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let kwargs = pyo3::types::PyDict::new(py);
        let pandas = import_for(py, "pandas", "pandas")?;
        kwargs.set_item("types_mapper", pandas.getattr("ArrowDtype")?)?;
        table(slf, "pandas")?.call_method("to_pandas", (), Some(&kwargs))
    }

    /// The stations as an Arrow stream (the Arrow PyCapsule interface), so
    /// that `pyarrow.table(summary)` and `polars.DataFrame(summary)` read
    /// its columns without copying them through Python objects.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyCapsule>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        // A consumer's requested schema is a wish the producer may not
        // grant; this one has its single schema.
        let _ = requested_schema;
        crate::arrow::stream(py, &self.inner)
    }
}

/// The stations of `summary` as a `pyarrow.Table`, for a method whose
/// modules the package's extra `extra` installs.
fn table<'py>(summary: &Bound<'py, Summary>, extra: &str) -> PyResult<Bound<'py, PyAny>> {
    let pyarrow = import_for(summary.py(), extra, "pyarrow")?;
    pyarrow.getattr("table")?.call1((summary,))
}

/// The module `name`, or an `ImportError` naming the extra `extra` that
/// installs it (`brc._errors.import_for`).
fn import_for<'py>(py: Python<'py>, extra: &str, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let import = py.import("brc._errors")?.getattr("import_for")?;
    import.call1((extra, name))
}

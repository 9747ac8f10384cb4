//! The statistics a summary shows (`stats=`, the command line's
//! `--stats`) as callers give them: a comma-separated list
//! (`"min,median,p99,max"`, taken as `--stats` takes it), or an iterable
//! of names, one statistic each (`["min", "median"]`).

use brc::{Statistic, Statistics, StatisticsError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString};

use crate::errors;

/// The statistics `stats` names, in order (`None`: none asked); a
/// `ValueError` for a name that is no statistic, for none at all, and for
/// one named twice (each names a column of the summary's table), a
/// `TypeError` for `stats` neither a `str` nor an iterable of them.
pub fn statistics(stats: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Statistics>> {
    let Some(stats) = stats.filter(|s| !s.is_none()) else {
        return Ok(None);
    };
    let parsed = match stats.cast::<PyString>() {
        Ok(list) => Statistics::parse(list.to_str()?),
        Err(_) => named(&names_of(stats)?),
    };
    parsed.map(Some).map_err(|e| errors::statistics_error(&e))
}

/// The names in `stats`, an iterable of `str` other than bytes.
fn names_of(stats: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    let bytes = stats.is_instance_of::<PyBytes>() || stats.is_instance_of::<PyByteArray>();
    let items = match bytes {
        true => None,
        false => stats.try_iter().ok(),
    };
    let Some(items) = items else {
        return Err(errors::statistics_type_error(
            "stats must be a comma-separated str or an iterable of names",
            stats,
        ));
    };
    items
        .map(|item| {
            let item = item?;
            item.extract::<String>()
                .map_err(|_| errors::statistics_type_error("stats names are str", &item))
        })
        .collect()
}

/// The statistics of `names`, one each: a name holding a comma (or
/// blanks) is no statistic, as a list of names is no `--stats` list.
fn named(names: &[String]) -> Result<Statistics, StatisticsError> {
    if let Some(bad) = names.iter().find(|n| Statistic::parse(n).is_none()) {
        return Err(StatisticsError::Unknown { name: bad.clone() });
    }
    Statistics::parse(&names.join(","))
}

/// The statistics' names, as the command line names its columns
/// (`p99.9`, `median`).
pub fn names(statistics: &Statistics) -> Vec<String> {
    statistics.iter().map(|s| s.to_string()).collect()
}

/// `brc._brc.check_statistics`: the names of the statistics `stats`
/// names (`None` for none asked), checked as [`statistics`] checks them:
/// for a caller that checks before a long run and hands them on
/// (`brc.dask`).
#[pyfunction]
#[pyo3(signature = (stats = None))]
pub fn check_statistics(stats: Option<Bound<'_, PyAny>>) -> PyResult<Option<Vec<String>>> {
    Ok(statistics(stats.as_ref())?.as_ref().map(names))
}

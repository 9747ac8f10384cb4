//! The statistics a summary shows (`stats=`, the command line's
//! `--stats`) as the pure-Python half hands them over: `brc._statistics`
//! checks their types and gives either a comma-separated list
//! (`"min,median,p99,max"`, taken as `--stats` takes it) or a list of
//! names, one statistic each.

use brc::{Statistic, Statistics, StatisticsError};
use pyo3::prelude::*;

use crate::errors;

/// Statistics as handed over: a comma-separated list, or names.
#[derive(FromPyObject)]
pub enum StatisticsArg {
    List(String),
    Names(Vec<String>),
}

/// The statistics `arg` names, in order (`None`: none asked); a
/// `ValueError` for a name that is no statistic, for none at all, and for
/// one named twice (each names a column of the summary's table).
pub fn statistics(arg: Option<StatisticsArg>) -> PyResult<Option<Statistics>> {
    let parsed = match arg {
        None => return Ok(None),
        Some(StatisticsArg::List(list)) => Statistics::parse(&list),
        Some(StatisticsArg::Names(names)) => named(&names),
    };
    let statistics = parsed.map_err(|e| errors::statistics_error(&e))?;
    let names = self::names(&statistics);
    for (i, name) in names.iter().enumerate() {
        if names[..i].contains(name) {
            return Err(errors::statistics_error(&format!(
                "statistic {name} asked twice: each is a column of the summary"
            )));
        }
    }
    Ok(Some(statistics))
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
pub fn check_statistics(stats: Option<StatisticsArg>) -> PyResult<Option<Vec<String>>> {
    Ok(statistics(stats)?.as_ref().map(names))
}

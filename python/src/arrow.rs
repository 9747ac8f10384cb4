//! A summary as an Arrow record batch, exported through the Arrow C stream
//! interface: the consumer (pyarrow, polars) takes the buffers as they are.
//!
//! Columns: `station` (string), `min`, `mean`, `max` as decimals of the
//! scale the summary shows (`Summary::decimals`: the exact values the
//! command line prints, the mean rounded as it rounds), `count` (int64),
//! and `missing` (int64) for a summary that counts missing values (a
//! delimited file's).
//!
//! The challenge's tenths, shown as tenths, are decimal128(3, 1), or
//! decimal128(9, 1) when a value lies beyond ±99.9 (as Parquet values
//! may), none of the columns nullable. Every other summary's values are
//! decimal128(18, S), S its decimals, as SQL's `DECIMAL(18, S)` holds a
//! delimited file's values, and nullable: a key whose every value was
//! missing has a count of 0 and null min, mean and max.
//!
//! A summary shown with statistics (`stats=`) has, after `station`, one
//! column per statistic, in order, named as the command line names it:
//! `count` uint64; `sum` decimal128(38, S); every other decimal128(18, S)
//! (38 digits for a sample standard deviation that needs them: it may
//! reach √2 times half the range), each null where a key has no such
//! value (no values; one, for `stddev`), so nullable where a key may lack
//! one; then `missing` as above.

use std::sync::Arc;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{
    ArrayRef, Decimal128Array, Int64Array, RecordBatch, RecordBatchIterator, StringArray,
    UInt64Array,
};
use arrow_schema::{ArrowError, DataType, Field, Schema};
use brc::{Shown, Statistic, Statistics};
use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

/// The decimal precision of the text's values, ±99.9.
const TEXT_PRECISION: u8 = 3;

/// The decimal precision of every value of tenths a summary may hold,
/// ±[`brc::VALUE_LIMIT`] tenths (Parquet's): its digits.
const TENTHS_PRECISION: u8 = brc::VALUE_LIMIT.ilog10() as u8 + 1;

/// The decimal precision of a delimited file's values: `DECIMAL(18, S)`.
const PRECISION: u8 = brc::MAX_DIGITS as u8;

/// The widest decimal precision, Arrow's decimal128's: a sum's.
const WIDE_PRECISION: u8 = 38;

/// How a summary's values go to Arrow.
#[derive(Clone, Copy)]
struct Shape {
    precision: u8,
    /// The decimals shown, the columns' scale.
    scale: u32,
    /// Whether min, mean and max may be null (a key without values).
    nullable: bool,
    /// Whether the batch has a `missing` column.
    missing: bool,
}

/// The schema of a summary's batch.
fn schema(shape: Shape) -> Arc<Schema> {
    let decimal = || DataType::Decimal128(shape.precision, shape.scale as i8);
    let mut fields = vec![
        Field::new("station", DataType::Utf8, false),
        Field::new("min", decimal(), shape.nullable),
        Field::new("mean", decimal(), shape.nullable),
        Field::new("max", decimal(), shape.nullable),
        Field::new("count", DataType::Int64, false),
    ];
    if shape.missing {
        fields.push(Field::new("missing", DataType::Int64, false));
    }
    Arc::new(Schema::new(fields))
}

/// Each key's min, mean and max in shown units, `None` for a key without
/// values; an error for one that does not fit 18 digits so.
type Values = Vec<Option<[i64; 3]>>;

/// The min, mean and max of every key of `summary`, at its decimals.
fn values(summary: &brc::Summary) -> Result<Values, ArrowError> {
    let (scale, shown) = (summary.scale(), summary.decimals());
    (summary.iter())
        .map(|(name, s)| {
            if s.count == 0 {
                return Ok(None);
            }
            match s.shown(scale, shown) {
                Some(values) => Ok(Some(values)),
                None => Err(ArrowError::ComputeError(format!(
                    "the values of {name} do not fit 18 digits with {shown} decimals"
                ))),
            }
        })
        .collect()
}

/// The shape of `summary`'s batch: the challenge's tenths keep the
/// text's precision unless a value lies beyond it (a Parquet file's),
/// which valid Arrow data must not hold; any other summary's values have
/// 18 digits.
fn shape(summary: &brc::Summary, values: &Values) -> Shape {
    let shown = summary.decimals();
    let missing = summary.counts_missing();
    let fits = |digits: u8| {
        let limit = 10i128.pow(u32::from(digits)) - 1;
        (values.iter().flatten().flatten()).all(|&v| i128::from(v).abs() <= limit)
    };
    let tenths = !missing && summary.scale() == 1 && shown == 1;
    // `Stats::shown` keeps every value within 18 digits.
    let precision = match (tenths, fits(TEXT_PRECISION)) {
        (true, true) => TEXT_PRECISION,
        (true, false) => TENTHS_PRECISION,
        (false, _) => PRECISION,
    };
    Shape {
        precision,
        scale: shown,
        nullable: !tenths,
        missing,
    }
}

/// The stations' names as a string column.
fn names(summary: &brc::Summary) -> Result<ArrayRef, ArrowError> {
    let name_bytes: usize = summary.iter().map(|(n, _)| n.len()).sum();
    if i32::try_from(name_bytes).is_err() {
        return Err(ArrowError::ComputeError(format!(
            "{name_bytes} bytes of station names do not fit an Arrow string column (2 GiB)"
        )));
    }
    Ok(Arc::new(StringArray::from_iter_values(
        summary.iter().map(|(n, _)| n),
    )))
}

/// The summary's columns as one record batch.
fn batch(summary: &brc::Summary) -> Result<RecordBatch, ArrowError> {
    if let Some(list) = summary.statistics() {
        return asked(summary, list);
    }
    let names = names(summary)?;
    let values = values(summary)?;
    let shape = shape(summary, &values);
    let column = |k: usize| -> Result<ArrayRef, ArrowError> {
        let column = values.iter().map(|v| v.map(|v| i128::from(v[k])));
        Ok(Arc::new(
            Decimal128Array::from_iter(column)
                .with_precision_and_scale(shape.precision, shape.scale as i8)?,
        ))
    };
    let int64 = |what: &str, f: fn(&brc::Stats) -> u64| -> Result<ArrayRef, ArrowError> {
        let column = (summary.iter())
            .map(|(name, s)| {
                i64::try_from(f(s)).map_err(|_| {
                    ArrowError::ComputeError(format!("the {what} of {name} does not fit an int64"))
                })
            })
            .collect::<Result<Int64Array, _>>()?;
        Ok(Arc::new(column))
    };
    let mut columns = vec![
        names,
        column(0)?,
        column(1)?,
        column(2)?,
        int64("count", |s| s.count)?,
    ];
    if shape.missing {
        columns.push(int64("count of missing values", |s| s.missing)?);
    }
    RecordBatch::try_new(schema(shape), columns)
}

/// The columns of `summary` shown with the statistics `list`: `station`,
/// one per statistic, `missing` if it counts missing values.
fn asked(summary: &brc::Summary, list: &Statistics) -> Result<RecordBatch, ArrowError> {
    let mut fields = vec![Field::new("station", DataType::Utf8, false)];
    let mut columns = vec![names(summary)?];
    for stat in list.iter() {
        let (field, column) = statistic(summary, stat)?;
        fields.push(field);
        columns.push(column);
    }
    if summary.counts_missing() {
        fields.push(Field::new("missing", DataType::Int64, false));
        let missing = (summary.iter())
            .map(|(name, s)| {
                i64::try_from(s.missing).map_err(|_| {
                    ArrowError::ComputeError(format!(
                        "the count of missing values of {name} does not fit an int64"
                    ))
                })
            })
            .collect::<Result<Int64Array, _>>()?;
        columns.push(Arc::new(missing));
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
}

/// The column of the statistic `stat` of every station of `summary`, and
/// its field: counts as uint64, any other statistic as decimals of the
/// decimals shown, null where a station has none.
fn statistic(summary: &brc::Summary, stat: Statistic) -> Result<(Field, ArrayRef), ArrowError> {
    let name = stat.to_string();
    let (scale, shown) = (summary.scale(), summary.decimals());
    if stat == Statistic::Count {
        let counts = UInt64Array::from_iter_values(summary.iter().map(|(_, s)| s.count));
        return Ok((Field::new(name, DataType::UInt64, false), Arc::new(counts)));
    }
    let values = (summary.iter())
        .map(|(key, s)| match stat.of(s, scale, shown) {
            Some(Shown::Units(v)) => Ok(Some(v)),
            // A key without values, or with one for a sample deviation.
            None if s.count == 0 || (stat == Statistic::Stddev && s.count < 2) => Ok(None),
            _ => Err(beyond(&name, key, WIDE_PRECISION, shown)),
        })
        .collect::<Result<Vec<Option<i128>>, _>>()?;
    let limit = |digits: u8| 10u128.pow(u32::from(digits)) - 1;
    let fits = |digits: u8| (values.iter().flatten()).all(|v| v.unsigned_abs() <= limit(digits));
    let precision = match stat {
        Statistic::Sum => WIDE_PRECISION,
        _ if fits(PRECISION) => PRECISION,
        _ => WIDE_PRECISION,
    };
    if !fits(precision) {
        let at =
            (values.iter()).position(|v| v.is_some_and(|v| v.unsigned_abs() > limit(precision)));
        let key = at
            .and_then(|i| summary.iter().nth(i))
            .map_or("", |(k, _)| k);
        return Err(beyond(&name, key, precision, shown));
    }
    // Every statistic but the count may be absent where a key has no
    // values (a delimited file's), a sample deviation where it has one.
    let nullable =
        summary.counts_missing() || stat == Statistic::Stddev || values.iter().any(Option::is_none);
    let column =
        Decimal128Array::from_iter(values).with_precision_and_scale(precision, shown as i8)?;
    let field = Field::new(name, DataType::Decimal128(precision, shown as i8), nullable);
    Ok((field, Arc::new(column)))
}

/// The error for the statistic `stat` of `key`, which does not fit
/// `digits` digits with `shown` decimals.
fn beyond(stat: &str, key: &str, digits: u8, shown: u32) -> ArrowError {
    ArrowError::ComputeError(format!(
        "the {stat} of {key} does not fit {digits} digits with {shown} decimals"
    ))
}

/// The summary as an `arrow_array_stream` capsule holding one batch. The
/// capsule owns the stream; a consumer moves it out, and one that never
/// does leaves it to be released with the capsule.
pub fn stream<'py>(py: Python<'py>, summary: &brc::Summary) -> PyResult<Bound<'py, PyCapsule>> {
    let batch = py
        .detach(|| batch(summary))
        .map_err(|e| PyOverflowError::new_err(e.to_string()))?;
    let schema = batch.schema();
    let reader = RecordBatchIterator::new([Ok(batch)], schema);
    let stream = FFI_ArrowArrayStream::new(Box::new(reader));
    PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
}

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

use std::sync::Arc;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{
    ArrayRef, Decimal128Array, Int64Array, RecordBatch, RecordBatchIterator, StringArray,
};
use arrow_schema::{ArrowError, DataType, Field, Schema};
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

/// The summary's columns as one record batch.
fn batch(summary: &brc::Summary) -> Result<RecordBatch, ArrowError> {
    let name_bytes: usize = summary.iter().map(|(n, _)| n.len()).sum();
    if i32::try_from(name_bytes).is_err() {
        return Err(ArrowError::ComputeError(format!(
            "{name_bytes} bytes of station names do not fit an Arrow string column (2 GiB)"
        )));
    }
    let names = StringArray::from_iter_values(summary.iter().map(|(n, _)| n));
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
        Arc::new(names) as ArrayRef,
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

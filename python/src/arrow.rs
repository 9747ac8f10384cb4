//! A summary as an Arrow record batch, exported through the Arrow C stream
//! interface: the consumer (pyarrow, polars) takes the buffers as they are.
//!
//! Columns: `station` (string), `min`, `mean`, `max` (decimal128(3, 1):
//! the exact one-decimal values the command line prints, the mean rounded
//! as it rounds; decimal128(9, 1) when a value lies beyond ±99.9, as
//! Parquet values may), `count` (int64). None is nullable.

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

/// The decimal precision of every value a summary may hold,
/// ±[`brc::VALUE_LIMIT`] tenths (Parquet's): its digits.
const PRECISION: u8 = brc::VALUE_LIMIT.ilog10() as u8 + 1;

/// The schema of a summary's batch, whose values have `precision` digits.
fn schema(precision: u8) -> Arc<Schema> {
    let tenths = || DataType::Decimal128(precision, 1);
    Arc::new(Schema::new(vec![
        Field::new("station", DataType::Utf8, false),
        Field::new("min", tenths(), false),
        Field::new("mean", tenths(), false),
        Field::new("max", tenths(), false),
        Field::new("count", DataType::Int64, false),
    ]))
}

/// The precision of `summary`'s values: the text's, unless a value lies
/// beyond it (a Parquet file's), which valid Arrow data must not hold. The
/// mean lies between the min and the max.
fn precision(summary: &brc::Summary) -> u8 {
    let text_limit = 10i64.pow(u32::from(TEXT_PRECISION)) - 1;
    let fits = |s: &brc::Stats| -text_limit <= s.min && s.max <= text_limit;
    match summary.iter().all(|(_, s)| fits(s)) {
        true => TEXT_PRECISION,
        false => PRECISION,
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
    let precision = precision(summary);
    let tenths = |f: fn(&brc::Stats) -> i64| -> Result<ArrayRef, ArrowError> {
        let values = summary.iter().map(|(_, s)| i128::from(f(s)));
        Ok(Arc::new(
            Decimal128Array::from_iter_values(values).with_precision_and_scale(precision, 1)?,
        ))
    };
    let counts = (summary.iter())
        .map(|(name, s)| {
            i64::try_from(s.count).map_err(|_| {
                ArrowError::ComputeError(format!("the count of {name} does not fit an int64"))
            })
        })
        .collect::<Result<Int64Array, _>>()?;
    RecordBatch::try_new(
        schema(precision),
        vec![
            Arc::new(names),
            tenths(|s| s.min)?,
            tenths(brc::Stats::mean_tenths)?,
            tenths(|s| s.max)?,
            Arc::new(counts),
        ],
    )
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

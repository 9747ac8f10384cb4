//! A row group read row by row through the `parquet` crate's column
//! readers: any encoding the crate reads, at its speed. Rows are checked in
//! order, so the first row brc refuses is the one named.

use parquet::column::reader::{ColumnReader, ColumnReaderImpl};
use parquet::data_type::{ByteArray, DataType, FixedLenByteArray};
use parquet::file::reader::RowGroupReader;

use super::pages::column_reader;
use super::value::{Kind, Raw};
use super::{valid_name, File, ParquetError, Refused, RowError, Stations};

/// Rows read at a time from each column.
const BATCH: usize = 4096;

/// Aggregates a row group into `into`, row by row.
pub(super) fn aggregate(
    group: &dyn RowGroupReader,
    file: &File,
    into: &mut Stations,
) -> Result<(), Refused> {
    let ColumnReader::ByteArrayColumnReader(mut keys) = column_reader(group, file.key)? else {
        return Err(Refused::File(ParquetError::Malformed(
            "the names' column changed type".into(),
        )));
    };
    let mut values = Values::new(column_reader(group, file.value)?, file.kind);
    let (mut key_levels, mut value_levels) = (Vec::new(), Vec::new());
    let mut names = Vec::new();
    let mut raws = Vec::new();
    let mut row = 0u64;
    let footer = u64::try_from(group.metadata().num_rows()).ok();
    loop {
        key_levels.clear();
        names.clear();
        let (rows, _, _) = keys.read_records(BATCH, Some(&mut key_levels), None, &mut names)?;
        let value_rows = values.read(rows, &mut value_levels, &mut raws)?;
        if value_rows != rows {
            return Err(Refused::File(ParquetError::Malformed(
                "the names' and values' columns hold different numbers of rows".into(),
            )));
        }
        if rows == 0 {
            // Values past the names' last row, or rows other than the
            // footer counts, are no file's rows: the dictionary path and
            // other readers refuse them too.
            let past = values.read(1, &mut value_levels, &mut raws)?;
            if past != 0 || Some(row) != footer {
                return Err(Refused::File(ParquetError::Malformed(
                    "a column holds other rows than its row group".into(),
                )));
            }
            return Ok(());
        }
        let (mut name, mut value) = (names.iter(), raws.iter());
        for j in 0..rows {
            let at = |kind| Refused::Row {
                row: row + j as u64,
                kind,
            };
            let null = |levels: &[i16], column: &str| {
                // Levels are given only for an optional column.
                match levels.get(j) {
                    Some(0) => Err(at(RowError::Null {
                        column: column.into(),
                    })),
                    _ => Ok(()),
                }
            };
            null(&key_levels, &file.columns.key)?;
            null(&value_levels, &file.columns.value)?;
            let (Some(n), Some(&v)) = (name.next(), value.next()) else {
                return Err(Refused::File(ParquetError::Malformed(
                    "a page holds fewer values than its levels say".into(),
                )));
            };
            let Some(t) = v.tenths(file.kind) else {
                return Err(at(RowError::Value {
                    column: file.columns.value.clone(),
                    found: v.show(file.kind),
                }));
            };
            let n = n.data();
            if !into.contains(n) && !valid_name(n) {
                return Err(at(RowError::Name {
                    name: crate::error::quoted(n),
                }));
            }
            into.add_value(n, t)?;
        }
        row += rows as u64;
    }
}

/// A value column's reader, of whichever physical type it has.
enum Values {
    Double(ColumnReaderImpl<parquet::data_type::DoubleType>, Vec<f64>),
    Float(ColumnReaderImpl<parquet::data_type::FloatType>, Vec<f32>),
    Int32(
        ColumnReaderImpl<parquet::data_type::Int32Type>,
        Vec<i32>,
        bool,
    ),
    Int64(
        ColumnReaderImpl<parquet::data_type::Int64Type>,
        Vec<i64>,
        bool,
    ),
    Bytes(
        ColumnReaderImpl<parquet::data_type::ByteArrayType>,
        Vec<ByteArray>,
    ),
    Fixed(
        ColumnReaderImpl<parquet::data_type::FixedLenByteArrayType>,
        Vec<FixedLenByteArray>,
    ),
    /// A type [`Kind::of`] accepted but no reader here reads.
    Other,
}

impl Values {
    fn new(reader: ColumnReader, kind: Kind) -> Values {
        let unsigned = matches!(kind, Kind::Int { unsigned: true, .. });
        match reader {
            ColumnReader::DoubleColumnReader(r) => Values::Double(r, Vec::new()),
            ColumnReader::FloatColumnReader(r) => Values::Float(r, Vec::new()),
            ColumnReader::Int32ColumnReader(r) => Values::Int32(r, Vec::new(), unsigned),
            ColumnReader::Int64ColumnReader(r) => Values::Int64(r, Vec::new(), unsigned),
            ColumnReader::ByteArrayColumnReader(r) => Values::Bytes(r, Vec::new()),
            ColumnReader::FixedLenByteArrayColumnReader(r) => Values::Fixed(r, Vec::new()),
            _ => Values::Other,
        }
    }

    /// Reads `rows` rows' levels into `levels` and their non-null values
    /// into `out`, as [`Raw`]s; returns the rows read.
    fn read(
        &mut self,
        rows: usize,
        levels: &mut Vec<i16>,
        out: &mut Vec<Raw>,
    ) -> Result<usize, ParquetError> {
        levels.clear();
        out.clear();
        fn read<T: DataType>(
            r: &mut ColumnReaderImpl<T>,
            buf: &mut Vec<T::T>,
            rows: usize,
            levels: &mut Vec<i16>,
        ) -> Result<usize, ParquetError> {
            buf.clear();
            Ok(r.read_records(rows, Some(levels), None, buf)?.0)
        }
        let n = match self {
            Values::Double(r, buf) => {
                let n = read(r, buf, rows, levels)?;
                out.extend(buf.iter().map(|&x| Raw::Float(x)));
                n
            }
            Values::Float(r, buf) => {
                let n = read(r, buf, rows, levels)?;
                out.extend(buf.iter().map(|&x| Raw::Float(f64::from(x))));
                n
            }
            Values::Int32(r, buf, unsigned) => {
                let n = read(r, buf, rows, levels)?;
                out.extend(buf.iter().map(|&v| Raw::int32(v, *unsigned)));
                n
            }
            Values::Int64(r, buf, unsigned) => {
                let n = read(r, buf, rows, levels)?;
                out.extend(buf.iter().map(|&v| Raw::int64(v, *unsigned)));
                n
            }
            Values::Bytes(r, buf) => {
                let n = read(r, buf, rows, levels)?;
                out.extend(buf.iter().map(|b| Raw::decimal(b.data())));
                n
            }
            Values::Fixed(r, buf) => {
                let n = read(r, buf, rows, levels)?;
                out.extend(buf.iter().map(|b| Raw::decimal(b.data())));
                n
            }
            Values::Other => {
                return Err(ParquetError::Malformed(
                    "the values' column changed type".into(),
                ))
            }
        };
        Ok(n)
    }
}

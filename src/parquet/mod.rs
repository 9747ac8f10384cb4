//! Parquet input: a file's footer, its key and value columns, aggregated a
//! row group at a time into the same [`Stats`] as text; and [`write`](mod@write),
//! which writes such files.
//!
//! A row group is the unit of work: workers take row groups of all the
//! run's Parquet files from one counter ([`run`]). Where both columns of a
//! row group are dictionary-encoded, as writers such as pyarrow do by
//! default, its rows are counted per (name index, value index) before any
//! name or value is decoded ([`dictionary`]), and each distinct name is
//! looked up once per row group; any other encoding is read through the
//! `parquet` crate's column readers ([`plain`]). Values become exact
//! tenths by the rules of [`value`], or the file is refused.

mod dictionary;
mod hybrid;
mod plain;
pub(crate) mod run;
mod value;
pub mod write;

use std::cell::Cell;
use std::collections::HashMap;
use std::panic::{self, AssertUnwindSafe};

use bytes::Bytes;
use parquet::basic::Type as Physical;
use parquet::file::reader::{FileReader, SerializedFileReader};

pub use crate::error::{ParquetError, RowError};
use crate::parse::MAX_NAME_LEN;
use crate::stats::Stats;

pub(crate) use self::value::Kind;

/// The first and last four bytes of every Parquet file.
const MAGIC: &[u8; 4] = b"PAR1";

/// Whether `bytes` are Parquet's magic bytes, which a Parquet file starts
/// and ends with.
pub(crate) fn is_magic(bytes: &[u8; 4]) -> bool {
    bytes == MAGIC
}

thread_local! {
    /// Whether this thread is in [`caught`].
    static CAUGHT: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread is reading Parquet through the `parquet` crate,
/// which panics on some malformed files: brc catches such a panic and
/// reports the file as malformed, so a panic hook need print nothing then
/// (the `brc` binary's and the Python module's do not).
pub fn reading() -> bool {
    CAUGHT.with(Cell::get)
}

/// Runs `f`, a panic in it an error.
fn caught<T>(f: impl FnOnce() -> Result<T, ParquetError>) -> Result<T, ParquetError> {
    CAUGHT.with(|c| c.set(true));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    CAUGHT.with(|c| c.set(false));
    result.unwrap_or_else(|panic| {
        let message = (panic.downcast_ref::<&str>().copied())
            .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("a panic");
        Err(ParquetError::Malformed(format!(
            "the reader failed: {message}"
        )))
    })
}

/// Which columns hold the names and the values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Columns {
    /// The names' column (default `station`).
    pub key: String,
    /// The values' column (default `measure`).
    pub value: String,
}

impl Default for Columns {
    fn default() -> Columns {
        Columns {
            key: "station".into(),
            value: "measure".into(),
        }
    }
}

impl From<hybrid::Malformed> for ParquetError {
    fn from(_: hybrid::Malformed) -> ParquetError {
        ParquetError::Malformed("a run of dictionary indices or levels is cut short".into())
    }
}

/// Whether `name` is a name text input could hold: 1 to
/// [`MAX_NAME_LEN`] bytes of UTF-8 without `;` or `\n`.
fn valid_name(name: &[u8]) -> bool {
    (1..=MAX_NAME_LEN).contains(&name.len())
        && memchr::memchr2(b';', b'\n', name).is_none()
        && simdutf8::basic::from_utf8(name).is_ok()
}

/// A worker's stations: each name and its stats, from every row group it
/// aggregated.
#[derive(Default)]
pub(crate) struct Stations {
    map: HashMap<Box<[u8]>, Stats, foldhash::fast::RandomState>,
}

impl Stations {
    /// Folds `stats` into `name`'s.
    fn add(&mut self, name: &[u8], stats: Stats) -> Result<(), ParquetError> {
        match self.map.get_mut(name) {
            Some(s) => {
                s.sum = s
                    .sum
                    .checked_add(stats.sum)
                    .ok_or_else(|| ParquetError::Overflow {
                        station: String::from_utf8_lossy(name).into_owned(),
                    })?;
                s.count += stats.count;
                s.min = s.min.min(stats.min);
                s.max = s.max.max(stats.max);
            }
            None => {
                self.map.insert(name.into(), stats);
            }
        }
        Ok(())
    }

    /// Whether `name` has been added.
    fn contains(&self, name: &[u8]) -> bool {
        self.map.contains_key(name)
    }

    /// Every station, in no order.
    pub(crate) fn into_iter(self) -> impl Iterator<Item = (Box<[u8]>, Stats)> {
        self.map.into_iter()
    }
}

/// An open Parquet file: its footer read, its columns found and checked.
pub(crate) struct File {
    reader: SerializedFileReader<Bytes>,
    key: usize,
    value: usize,
    kind: Kind,
    columns: Columns,
}

impl File {
    /// Reads the footer of the Parquet file `bytes` and finds `columns`.
    pub(crate) fn open(bytes: Bytes, columns: &Columns) -> Result<File, ParquetError> {
        caught(|| File::open_uncaught(bytes, columns))
    }

    /// [`File::open`], panics and all.
    fn open_uncaught(bytes: Bytes, columns: &Columns) -> Result<File, ParquetError> {
        let reader = SerializedFileReader::new(bytes)?;
        let schema = reader.metadata().file_metadata().schema_descr_ptr();
        let find = |name: &str| {
            let found = schema
                .columns()
                .iter()
                .position(|c| c.path().string() == name);
            found.ok_or_else(|| ParquetError::MissingColumn {
                name: name.into(),
                found: schema.columns().iter().map(|c| c.path().string()).collect(),
            })
        };
        let (key, value) = (find(&columns.key)?, find(&columns.value)?);
        let flat = |i: usize, expected| {
            let c = schema.column(i);
            match c.max_rep_level() {
                0 => Ok(()),
                _ => Err(ParquetError::ColumnType {
                    name: c.path().string(),
                    found: "a repeated column".into(),
                    expected,
                }),
            }
        };
        let key_column = schema.column(key);
        if key_column.physical_type() != Physical::BYTE_ARRAY {
            return Err(ParquetError::ColumnType {
                name: columns.key.clone(),
                found: key_column.physical_type().to_string(),
                expected: "strings (BYTE_ARRAY)",
            });
        }
        const NUMBERS: &str = "numbers (DOUBLE, FLOAT, integers or decimals)";
        flat(key, "strings (BYTE_ARRAY)")?;
        flat(value, NUMBERS)?;
        let kind = Kind::of(&schema.column(value)).map_err(|found| ParquetError::ColumnType {
            name: columns.value.clone(),
            found,
            expected: NUMBERS,
        })?;
        Ok(File {
            reader,
            key,
            value,
            kind,
            columns: columns.clone(),
        })
    }

    /// How many row groups the file has.
    pub(crate) fn row_groups(&self) -> usize {
        self.reader.num_row_groups()
    }

    /// Where row group `i`'s first column chunk starts in the file.
    pub(crate) fn group_start(&self, i: usize) -> u64 {
        let group = self.reader.metadata().row_group(i);
        let starts = group.columns().iter().map(|c| c.byte_range().0);
        starts.min().unwrap_or(0)
    }

    /// Row group `i`'s size in the file.
    pub(crate) fn group_size(&self, i: usize) -> u64 {
        u64::try_from(self.reader.metadata().row_group(i).compressed_size()).unwrap_or(0)
    }

    /// Adds row group `i`'s rows to `into`.
    pub(crate) fn aggregate(&self, i: usize, into: &mut Stations) -> Result<(), ParquetError> {
        caught(|| self.aggregate_uncaught(i, into))
    }

    /// [`File::aggregate`], panics and all.
    fn aggregate_uncaught(&self, i: usize, into: &mut Stations) -> Result<(), ParquetError> {
        let group = self.reader.get_row_group(i)?;
        let at = |row, kind| ParquetError::Row {
            row_group: i,
            row,
            kind,
        };
        let rows = dictionary::aggregate(&*group, self, into)
            .transpose()
            .unwrap_or_else(|| plain::aggregate(&*group, self, into));
        rows.map_err(|e| match e {
            Refused::Row { row, kind } => at(row, kind),
            Refused::File(e) => e,
        })
    }
}

/// Why a row group was refused, before the row group's number is added.
enum Refused {
    /// A row.
    Row { row: u64, kind: RowError },
    /// The file.
    File(ParquetError),
}

impl<E: Into<ParquetError>> From<E> for Refused {
    fn from(e: E) -> Refused {
        Refused::File(e.into())
    }
}

#[cfg(test)]
mod tests;

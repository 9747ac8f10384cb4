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
mod fetched;
mod hybrid;
mod pages;
mod plain;
pub(crate) mod run;
mod unpack;
mod value;
pub mod write;

use std::cell::Cell;
use std::collections::HashMap;
#[cfg(feature = "remote")]
use std::ops::Range;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;

use bytes::Bytes;
use parquet::basic::Type as Physical;
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};
use parquet::file::properties::{ReaderProperties, ReaderPropertiesPtr};
use parquet::file::serialized_reader::SerializedRowGroupReader;

use crate::detail::Kept;
use crate::error::Error;
pub use crate::error::{ParquetError, RowError};
#[cfg(feature = "remote")]
use crate::object::Object;
use crate::parse::MAX_NAME_LEN;
use crate::stats::Stats;

use self::fetched::Fetched;

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

/// A column's name from a file, for a message of one line: control
/// characters escaped.
fn shown(name: &str) -> String {
    name.chars()
        .map(|c| match c.is_control() {
            true => c.escape_default().to_string(),
            false => c.to_string(),
        })
        .collect()
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
/// aggregated, each keeping what `kept` says.
#[derive(Default)]
pub(crate) struct Stations {
    map: HashMap<Box<[u8]>, Stats, foldhash::fast::RandomState>,
    kept: Kept,
}

impl Stations {
    /// No stations yet, each to keep what `kept` says.
    pub(crate) fn keeping(kept: Kept) -> Stations {
        Stations {
            kept,
            ..Stations::default()
        }
    }

    /// Folds `stats` into `name`'s.
    fn add(&mut self, name: &[u8], stats: Stats) -> Result<(), ParquetError> {
        match self.map.get_mut(name) {
            Some(s) => {
                within_64_bits(s, stats.sum, name)?;
                s.merge(&stats);
            }
            None => {
                self.map.insert(name.into(), stats);
            }
        }
        Ok(())
    }

    /// Adds a row of `name` holding `t` tenths.
    fn add_value(&mut self, name: &[u8], t: i64) -> Result<(), ParquetError> {
        match self.map.get_mut(name) {
            Some(s) => {
                within_64_bits(s, t.into(), name)?;
                s.add(t);
            }
            None => {
                self.map.insert(name.into(), Stats::keeping(self.kept, t));
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

/// `Ok` if `sum` added to `s`'s sum fits 64 bits, as tenths of a partial
/// (`v1`) must.
fn within_64_bits(s: &Stats, sum: i128, name: &[u8]) -> Result<(), ParquetError> {
    match s.sum.checked_add(sum).map(i64::try_from) {
        Some(Ok(_)) => Ok(()),
        _ => Err(ParquetError::Overflow {
            station: String::from_utf8_lossy(name).into_owned(),
        }),
    }
}

/// Where a Parquet file's bytes are.
pub(crate) enum Stored {
    /// In memory (a mapped file).
    Bytes(Bytes),
    /// In an object, fetched a row group's columns at a time.
    #[cfg(feature = "remote")]
    Object(Arc<Object>),
}

/// An open Parquet file: its footer read, its columns found and checked.
pub(crate) struct File {
    metadata: ParquetMetaData,
    stored: Stored,
    properties: ReaderPropertiesPtr,
    key: usize,
    value: usize,
    kind: Kind,
    columns: Columns,
}

impl File {
    /// Reads the footer of the Parquet file `bytes` and finds `columns`.
    pub(crate) fn open(bytes: Bytes, columns: &Columns) -> Result<File, ParquetError> {
        let metadata = caught(|| footer(&bytes))?;
        caught(|| File::check(metadata, Stored::Bytes(bytes), columns))
    }

    /// Reads the footer of the Parquet object `object` and finds
    /// `columns`.
    #[cfg(feature = "remote")]
    pub(crate) fn open_object(object: Arc<Object>, columns: &Columns) -> Result<File, Error> {
        let tail = fetch_footer(&object)?;
        let metadata = caught(|| footer(&tail))?;
        Ok(caught(|| {
            File::check(metadata, Stored::Object(object), columns)
        })?)
    }

    /// Finds `columns` in the file whose footer is `metadata`.
    fn check(
        metadata: ParquetMetaData,
        stored: Stored,
        columns: &Columns,
    ) -> Result<File, ParquetError> {
        let schema = metadata.file_metadata().schema_descr_ptr();
        let find = |name: &str| {
            let found = schema
                .columns()
                .iter()
                .position(|c| c.path().string() == name);
            found.ok_or_else(|| ParquetError::MissingColumn {
                name: name.into(),
                found: schema
                    .columns()
                    .iter()
                    .map(|c| shown(&c.path().string()))
                    .collect(),
            })
        };
        // Which row groups a run reads is decided by where their chunks
        // start (`group_start`), outside the guard against the crate's
        // panics, which a negative start or length would raise.
        for (i, group) in metadata.row_groups().iter().enumerate() {
            let negative = group.columns().iter().any(|c| {
                let start = c.dictionary_page_offset().unwrap_or(c.data_page_offset());
                start < 0 || c.compressed_size() < 0
            });
            if negative {
                return Err(ParquetError::Malformed(format!(
                    "row group {i}: a column chunk's start or length is negative"
                )));
            }
        }
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
            metadata,
            stored,
            properties: Arc::new(ReaderProperties::builder().build()),
            key,
            value,
            kind,
            columns: columns.clone(),
        })
    }

    /// How many row groups the file has.
    pub(crate) fn row_groups(&self) -> usize {
        self.metadata.num_row_groups()
    }

    /// Where row group `i`'s first column chunk starts in the file.
    pub(crate) fn group_start(&self, i: usize) -> u64 {
        let group = self.metadata.row_group(i);
        let starts = group.columns().iter().map(|c| c.byte_range().0);
        starts.min().unwrap_or(0)
    }

    /// Row group `i`'s size in the file.
    pub(crate) fn group_size(&self, i: usize) -> u64 {
        u64::try_from(self.metadata.row_group(i).compressed_size()).unwrap_or(0)
    }

    /// The bytes row group `i`'s columns need: fetched now from an object,
    /// at hand in memory.
    #[cfg_attr(not(feature = "remote"), allow(unused_variables))]
    pub(crate) fn fetch(&self, i: usize) -> Result<Fetched, Error> {
        match &self.stored {
            Stored::Bytes(bytes) => Ok(Fetched::whole(bytes.clone())),
            #[cfg(feature = "remote")]
            Stored::Object(object) => {
                let ranges = caught(|| self.chunk_ranges(i, object.size()))?;
                let bytes = object.ranges(&ranges)?;
                let starts = ranges.iter().map(|r| r.start);
                Ok(Fetched::parts(object.size(), starts.zip(bytes).collect()))
            }
        }
    }

    /// The byte ranges of row group `i`'s key and value column chunks, in
    /// a file of `size` bytes.
    #[cfg(feature = "remote")]
    fn chunk_ranges(&self, i: usize, size: u64) -> Result<Vec<Range<u64>>, ParquetError> {
        let group = self.metadata.row_group(i);
        let range = |column: usize| {
            let (start, len) = group.column(column).byte_range();
            let end = start.checked_add(len).filter(|&end| end <= size);
            let bad = || {
                ParquetError::Malformed(format!(
                    "a column chunk lies past the end of the file ({size} bytes)"
                ))
            };
            end.map(|end| start..end).ok_or_else(bad)
        };
        Ok(vec![range(self.key)?, range(self.value)?])
    }

    /// Row group `i`, whose bytes are `fetched`, for the crate's readers.
    fn group(
        &self,
        i: usize,
        fetched: Fetched,
    ) -> Result<SerializedRowGroupReader<'_, Fetched>, ParquetError> {
        Ok(SerializedRowGroupReader::new(
            Arc::new(fetched),
            self.metadata.row_group(i),
            self.metadata.page_index_for_row_group(i),
            Arc::clone(&self.properties),
        )?)
    }

    /// Adds row group `i`'s rows, whose bytes are `fetched`, to `into`.
    pub(crate) fn aggregate(
        &self,
        i: usize,
        fetched: Fetched,
        into: &mut Stations,
    ) -> Result<(), ParquetError> {
        caught(|| self.aggregate_uncaught(i, fetched, into))
    }

    /// [`File::aggregate`], panics and all.
    fn aggregate_uncaught(
        &self,
        i: usize,
        fetched: Fetched,
        into: &mut Stations,
    ) -> Result<(), ParquetError> {
        let group = self.group(i, fetched)?;
        let at = |row, kind| ParquetError::Row {
            row_group: i,
            row,
            kind,
        };
        // Dictionary indices give each station's basic stats only.
        let by_index = match into.kept {
            Kept::Basic => dictionary::aggregate(&group, self, into).transpose(),
            _ => None,
        };
        let rows = by_index.unwrap_or_else(|| plain::aggregate(&group, self, into));
        rows.map_err(|e| match e {
            Refused::Row { row, kind } => at(row, kind),
            Refused::File(e) => e,
        })
    }
}

/// The footer of the file `bytes` holds, or whose last bytes it holds.
fn footer<R: parquet::file::reader::ChunkReader>(
    bytes: &R,
) -> Result<ParquetMetaData, ParquetError> {
    Ok(ParquetMetaDataReader::new().parse_and_finish(bytes)?)
}

/// How many of an object's last bytes are fetched first for its footer:
/// most footers fit, and the rest are fetched in a second request.
#[cfg(feature = "remote")]
const FOOTER_GUESS: u64 = 64 << 10;

/// An object's last bytes, its footer among them.
#[cfg(feature = "remote")]
fn fetch_footer(object: &Object) -> Result<Fetched, Error> {
    let size = object.size();
    let mut from = size.saturating_sub(FOOTER_GUESS);
    let mut tail = object.range(from..size)?;
    if let Some(len) = tail.len().checked_sub(8).map(|at| &tail[at..at + 4]) {
        let needed = u64::from(u32::from_le_bytes(len.try_into().unwrap())) + 8;
        if needed > size - from && needed <= size {
            from = size - needed;
            tail = object.range(from..size)?;
        }
    }
    Ok(Fetched::parts(size, vec![(from, tail)]))
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

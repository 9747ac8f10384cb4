//! brc: exact, fast aggregation of `<name>;<value>` measurement files.
//!
//! The library holds everything; the `brc` binary is a thin command line
//! over it: it lists its [`input`]s ([`Inputs`]: files, directories,
//! standard input, a shard of them), aggregates them with an [`Engine`]
//! into one [`Summary`], and prints that in one of the [`output`] formats.
//!
//! The modules, from the bottom layer up; each uses only modules listed
//! before it, and no two submodules of one module import each other, as
//! `tests/layers.rs` checks (test modules aside):
//!
//! - `detail`: what a key keeps beyond min, max, sum and count when a statistic needs
//!   it: the sum of squares and the counts per distinct value.
//! - `stats`: the exact per-station accumulator and the official rounding rule.
//! - `statistic`: the statistics an output shows (`--stats`), what each needs kept,
//!   and the exact rule for each.
//! - `error`: the typed errors, carrying byte offsets and line numbers.
//! - `parse`: the strict line grammar and the value parser (integer tenths).
//! - `summary`: raw names with their stats, the merge of sorted runs, the [`Summary`].
//! - `bits`: finding a byte in a word, unaligned loads, prefetches, the huge-page size,
//!   the inverse of an odd multiplier, giving free heap pages back.
//! - `tuning`: every tuning constant and every override a fuzzing build makes.
//! - `table`: the hand-written per-thread hash table of the fast engines.
//! - `scan`: the fast engines' parser, a word or a vector at a time.
//! - `engine`: the engines, each a per-thread accumulator, and their names.
//! - [`timings`]: `brc --timings`, where a run's time went, phase by phase.
//! - [`shrink`]: a mapped file that shrinks while it is read: an error, not a crash.
//! - `object`: objects in S3 and over HTTP(S), listed, sized, read by byte
//!   ranges or as a stream (the `remote` feature).
//! - `driver`: feeding the accumulators from one queue of work: chunks of
//!   bytes in memory and blocks of streams, input after input.
//! - [`delimited`]: CSV, TSV and other delimited files: RFC 4180 rows found
//!   64 bytes at a time, exact decimals, keys of one or more columns.
//! - [`parquet`]: Parquet files, row group by row group, dictionary-encoded
//!   columns by index; and writing such files.
//! - `slice`: aggregating bytes the caller holds in memory, whole
//!   ([`aggregate`]) or a range of an input.
//! - [`input`]: many inputs as one, a range or shard of them; opening files
//!   and standard input, mapped or streamed, decompressed.
//! - [`partial`]: the exact, mergeable state of an aggregation, its text format
//!   (the writer and the reader), merging.
//! - [`output`]: the output formats (official one-line, lines, JSON, CSV, and
//!   partial, whose rows [`partial`] writes).
//! - [`generate`]: the reproducible, parallel generator of measurement files.
//! - [`alloc`]: the binary's global allocator, which puts big blocks on huge pages.
//!
//! One row's path, for the default engine: [`Inputs::aggregate`] opens
//! each input (mapped, or a stream) and hands them to `driver::run`,
//! whose dispatcher cuts them into chunks at line starts for the worker
//! threads; each worker feeds its chunks to its engine's accumulator
//! (`engine::Accumulator::feed`, `engine::fast` for the default), which
//! runs the scanner over them (`scan::scan_lanes`: four lines side by
//! side, the `;` found and the value parsed into integer tenths), and the
//! scanner adds each row to the thread's hash table through a
//! `table::Adder`. At the end the threads' tables fold into one, whose
//! names are sorted (the short ones by a radix sort) and merged into a
//! [`Summary`] (`summary`), and [`output`] prints it, each mean rounded by
//! the rule in `stats`. A Parquet file takes another path from
//! [`Inputs::aggregate`]: `parquet::run` shares its row groups out among
//! the threads, each adds a row group's rows by their dictionary indices
//! (`parquet::dictionary`), and their stations merge with the text's.

pub mod alloc;
mod bits;
pub mod delimited;
mod detail;
mod driver;
mod engine;
mod error;
pub mod generate;
pub mod input;
#[cfg(feature = "remote")]
mod object;
pub mod output;
pub mod parquet;
mod parse;
pub mod partial;
mod scan;
pub mod shrink;
mod slice;
mod statistic;
mod stats;
mod summary;
mod table;
pub mod timings;
mod tuning;

pub use delimited::{Column, Dialect};
pub use detail::{Counts, Detail, Kept, Squares};
pub use engine::{Engine, Options, MAX_THREADS};
pub use error::{CellError, DataError, DelimitedError, Error, ErrorKind, ParquetError, RowError};
pub use input::{InputError, Inputs, Shard, Source};
pub use parquet::Columns;
pub use partial::Partial;
pub use slice::{aggregate, aggregate_keeping};
pub use statistic::{Shown, Statistic, Statistics, StatisticsError};
pub use stats::{Stats, MAX_DIGITS, MAX_KEY_LEN, MAX_SCALE, VALUE_LIMIT};
pub use summary::{DecimalsError, Summary};

/// The internals that the benches, the integration tests and the flood
/// example reach (the fuzz target needs only the public interface).
///
/// Not a stable interface: hidden from the documentation, it follows the
/// internals wherever they go, and any release may change it.
#[doc(hidden)]
pub mod internals {
    pub use crate::engine::chunked::Chunked;
    pub use crate::engine::fast::{Fast, SwarEngine};
    pub use crate::engine::Accumulator;
    pub use crate::error::{quoted, Fault};
    pub use crate::summary::{merge_runs, Entry, RawName};
    #[cfg(feature = "lab")]
    pub use crate::table::flood;
    pub use crate::table::{Adder, Table};
    pub use crate::tuning::{set_hand_off_names, DEFAULT_CHUNK_SIZE};

    /// The strict line grammar.
    pub mod parse {
        pub use crate::parse::{line_at, lines, parse_line, parse_value, MAX_NAME_LEN};
    }

    /// The scanner's value parser, one word at a time.
    pub mod scan {
        pub use crate::scan::parse_value;
    }
}

//! brc: exact, fast aggregation of `<name>;<value>` measurement files.
//!
//! The library holds everything; the `brc` binary is a thin command line
//! over it. The pieces, in the order data flows through them:
//!
//! - [`input`]: opening files and standard input, mapped or streamed,
//!   decompressed if need be; aggregating them in bounded memory.
//! - [`stream`]: the streaming driver for pipes and decompressors.
//! - [`parse`]: the strict line grammar and the value parser (integer tenths).
//! - [`stats`]: the exact per-station accumulator and the official rounding rule.
//! - [`engine`]: the interchangeable engines that turn bytes into a
//!   [`Summary`]; `naive` is the oracle every other engine is
//!   tested against.
//! - [`output`]: the output formats (official one-line, lines, JSON, CSV,
//!   partial).
//! - [`partial`]: the exact, mergeable state of an aggregation
//!   ([`Partial`]), its text format, and merging.
//! - [`error`]: the typed errors, carrying byte offsets and line numbers.
//!
//! And on the side, [`generate`]: the reproducible, parallel generator of
//! measurement files (`brc generate`); and [`alloc`], the binary's global
//! allocator, which puts big blocks on huge pages.

pub mod alloc;
mod bits;
pub mod driver;
pub mod engine;
pub mod entry;
pub mod error;
pub mod generate;
pub mod input;
pub mod output;
pub mod parse;
pub mod partial;
pub mod scan;
pub mod shrink;
pub mod stats;
pub mod stream;
pub mod table;
pub mod timings;
mod tuning;

pub use driver::aggregate;
pub use engine::{Engine, Options};
pub use entry::Summary;
pub use error::{DataError, Error, ErrorKind};
pub use partial::Partial;
pub use stats::Stats;

//! The writer of the `brc-partial v1` format (docs/PARTIAL-FORMAT.md): its
//! name, version and column names, a partial's first lines, and its rows,
//! for [`Partial::to_bytes`](super::Partial::to_bytes) and for the output's
//! [`Format::Partial`](crate::output::Format::Partial), which renders them
//! a part at a time.

use std::io::Write;

use crate::stats::Stats;
use crate::summary::Summary;

/// The format's name: the first word of a partial's first line.
pub const FORMAT: &str = "brc-partial";

/// The format's version: the second word of a partial's first line.
pub const VERSION: &str = "v1";

/// The second line of a partial: the CSV header.
pub const COLUMNS: &str = "station,count,sum,min,max";

/// Writes a partial's first line, for `stations` stations, and its CSV
/// header.
pub(crate) fn head(out: &mut Vec<u8>, stations: usize) {
    let _ = writeln!(out, "{FORMAT} {VERSION} stations={stations}\n{COLUMNS}");
}

/// Writes the row of the station `name`.
pub(crate) fn row(out: &mut Vec<u8>, name: &str, stats: &Stats) {
    csv_field(out, name);
    let Stats {
        min,
        max,
        sum,
        count,
    } = stats;
    let _ = writeln!(out, ",{count},{sum},{min},{max}");
}

/// Writes `s` as a CSV field, quoted as RFC 4180 says when it holds a
/// `,`, a `"` or a line break: a partial's station names are, and so are
/// the output's CSV format's.
pub(crate) fn csv_field(out: &mut Vec<u8>, s: &str) {
    if s.contains([',', '"', '\r', '\n']) {
        out.push(b'"');
        out.extend_from_slice(s.replace('"', "\"\"").as_bytes());
        out.push(b'"');
    } else {
        out.extend_from_slice(s.as_bytes());
    }
}

/// The partial of `summary`, whole.
pub(super) fn render(summary: &Summary) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + summary.len() * 32);
    head(&mut out, summary.len());
    for (name, stats) in summary.iter() {
        row(&mut out, name, stats);
    }
    out
}

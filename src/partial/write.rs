//! The writer of the `brc-partial v1` format (docs/PARTIAL-FORMAT.md): its
//! name, version and column names, a partial's first lines, and its rows,
//! for [`Partial::to_bytes`](super::Partial::to_bytes) and for the output's
//! [`Format::Partial`](crate::output::Format::Partial), which renders them
//! a part at a time.

use std::io::Write;

use crate::detail::Kept;
use crate::stats::Stats;
use crate::summary::Summary;

/// The format's name: the first word of a partial's first line.
pub const FORMAT: &str = "brc-partial";

/// The format's version for tenths: the second word of a partial's first
/// line.
pub const VERSION: &str = "v1";

/// The second line of a `v1` partial: the CSV header.
pub const COLUMNS: &str = "station,count,sum,min,max";

/// The format's version for values of any scale, and keys that may lack
/// values.
pub const VERSION_2: &str = "v2";

/// The second line of a `v2` partial.
pub const COLUMNS_2: &str = "key,count,sum,min,max,missing";

/// Whether a summary of values at `scale`, counting missing values or
/// not, is written as `v2`: `v1` holds tenths alone.
pub(crate) fn is_v2(scale: u32, missing: bool) -> bool {
    scale != 1 || missing
}

/// Writes a partial's first line, for `stations` stations, and its CSV
/// header.
pub(crate) fn head(out: &mut Vec<u8>, scale: u32, missing: bool, kept: Kept, stations: usize) {
    let _ = kept;
    let _ = match is_v2(scale, missing) {
        false => writeln!(out, "{FORMAT} {VERSION} stations={stations}\n{COLUMNS}"),
        true => writeln!(
            out,
            "{FORMAT} {VERSION_2} keys={stations} scale={scale}\n{COLUMNS_2}"
        ),
    };
}

/// Writes the row of the station `name`.
pub(crate) fn row(
    out: &mut Vec<u8>,
    name: &str,
    stats: &Stats,
    scale: u32,
    missing: bool,
    kept: Kept,
) {
    let _ = kept;
    csv_field(out, name);
    let Stats {
        min,
        max,
        sum,
        count,
        missing: lacking,
        ..
    } = stats;
    let _ = match (is_v2(scale, missing), count) {
        (false, _) => writeln!(out, ",{count},{sum},{min},{max}"),
        (true, 0) => writeln!(out, ",0,0,,,{lacking}"),
        (true, _) => writeln!(out, ",{count},{sum},{min},{max},{lacking}"),
    };
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
    let (scale, missing) = (summary.scale(), summary.counts_missing());
    head(&mut out, scale, missing, summary.kept(), summary.len());
    for (name, stats) in summary.iter() {
        row(&mut out, name, stats, scale, missing, summary.kept());
    }
    out
}

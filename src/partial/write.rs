//! The writer of the `brc-partial` format (docs/PARTIAL-FORMAT.md): its
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

/// The format's version for the stats beyond the basic ones: each key's
/// sum of squares and, when kept, its counts per value.
pub const VERSION_3: &str = "v3";

/// The version a summary of values at `scale`, counting missing values
/// or not, keeping `kept`, is written in: `v1` holds tenths alone, `v2`
/// values at any scale, `v3` what the stats beyond the basic ones need.
pub(crate) fn version(scale: u32, missing: bool, kept: Kept) -> &'static str {
    match (kept, scale != 1 || missing) {
        (Kept::Squares | Kept::Counts, _) => VERSION_3,
        (Kept::Basic, true) => VERSION_2,
        (Kept::Basic, false) => VERSION,
    }
}

/// The second line of a `v3` partial counting missing values or not and
/// keeping `kept` (more than the basic stats).
pub(crate) fn columns_3(missing: bool, kept: Kept) -> &'static str {
    match (missing, kept) {
        (false, Kept::Counts) => "key,count,sum,min,max,squares,counts",
        (true, Kept::Counts) => "key,count,sum,min,max,missing,squares,counts",
        (false, _) => "key,count,sum,min,max,squares",
        (true, _) => "key,count,sum,min,max,missing,squares",
    }
}

/// Writes a partial's first line, for `stations` stations, and its CSV
/// header.
pub(crate) fn head(out: &mut Vec<u8>, scale: u32, missing: bool, kept: Kept, stations: usize) {
    let _ = match version(scale, missing, kept) {
        VERSION => writeln!(out, "{FORMAT} {VERSION} stations={stations}\n{COLUMNS}"),
        VERSION_2 => writeln!(
            out,
            "{FORMAT} {VERSION_2} keys={stations} scale={scale}\n{COLUMNS_2}"
        ),
        _ => writeln!(
            out,
            "{FORMAT} {VERSION_3} keys={stations} scale={scale}\n{}",
            columns_3(missing, kept)
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
    csv_field(out, name);
    let Stats {
        min,
        max,
        sum,
        count,
        missing: lacking,
        ref detail,
    } = *stats;
    let _ = match (version(scale, missing, kept), count) {
        (VERSION, _) => write!(out, ",{count},{sum},{min},{max}"),
        (_, 0) => write!(out, ",0,0,,"),
        (_, _) => write!(out, ",{count},{sum},{min},{max}"),
    };
    if missing {
        let _ = write!(out, ",{lacking}");
    }
    if kept > Kept::Basic {
        // Every station of a summary keeping `kept` keeps it.
        let detail = detail
            .as_deref()
            .expect("a station keeps what its summary does");
        let _ = write!(out, ",{}", detail.squares.to_big());
        if kept == Kept::Counts {
            out.push(b',');
            let counts = detail.counts.as_ref().expect("a station keeps its counts");
            for (i, (v, n)) in counts.sorted().into_iter().enumerate() {
                let _ = write!(out, "{}{v}:{n}", if i > 0 { " " } else { "" });
            }
        }
    }
    out.push(b'\n');
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
    let (scale, missing, kept) = (summary.scale(), summary.counts_missing(), summary.kept());
    head(&mut out, scale, missing, kept, summary.len());
    for (name, stats) in summary.iter() {
        row(&mut out, name, stats, scale, missing, kept);
    }
    out
}

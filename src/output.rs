//! Output formats: the official one-liner, three friendlier ones, and the
//! exact partial result.
//!
//! Every format but `partial` prints min, mean and max with one decimal
//! from exact tenths; the mean uses [`Stats::mean_tenths`], the official
//! rounding. A summary shown with other statistics
//! ([`Summary::with_statistics`]) prints those, in their order, each by
//! its rule ([`Statistic::of`]). `partial` prints the exact state instead,
//! in the format [`crate::partial`] writes and reads.

use std::io::{self, Write};

use compact_str::CompactString;

use crate::partial::write::{self as partial, csv_field};
use crate::statistic::{Shown, Statistic, Statistics};
use crate::stats::{Stats, Units};
use crate::summary::Summary;

/// How a summary is printed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// `{A=min/mean/max, B=min/mean/max}` on one line: the official output.
    #[default]
    Official,
    /// `{`, then one indented `name=min/mean/max` line per station, then `}`.
    Lines,
    /// A JSON array of `{"station","min","mean","max","count"}` objects.
    Json,
    /// CSV with header `station,min,mean,max,count` (RFC 4180 quoting).
    Csv,
    /// The exact, mergeable state: `brc-partial v1` (docs/PARTIAL-FORMAT.md).
    Partial,
}

impl Format {
    /// Every format, by its command-line name.
    pub const ALL: [(&'static str, Format); 5] = [
        ("official", Format::Official),
        ("lines", Format::Lines),
        ("json", Format::Json),
        ("csv", Format::Csv),
        ("partial", Format::Partial),
    ];

    /// What the format prints, in a line (the command line's help).
    pub fn summary(self) -> &'static str {
        match self {
            Format::Official => "{A=min/mean/max, ...} on one line",
            Format::Lines => "one `name=min/mean/max` per line inside { }",
            Format::Json => "array of {station, min, mean, max, count}",
            Format::Csv => "header station,min,mean,max,count; RFC 4180 quoting",
            Format::Partial => "exact state for `brc merge` (docs/PARTIAL-FORMAT.md)",
        }
    }
}

/// Every magnitude below 1000 tenths (every value and every mean) as
/// `d.d` or `dd.d`, padded to 4 bytes, and its length: one table row copied
/// per number instead of a division and a push per byte (`cargo bench --
/// output`; docs/PERFORMANCE.md, *How data flows*).
const SMALL: [([u8; 4], u8); 1000] = {
    let mut table = [([0u8; 4], 0u8); 1000];
    let mut a = 0;
    while a < 1000 {
        let (whole, frac) = ((a / 10) as u8, (a % 10) as u8);
        table[a] = if whole >= 10 {
            ([b'0' + whole / 10, b'0' + whole % 10, b'.', b'0' + frac], 4)
        } else {
            ([b'0' + whole, b'.', b'0' + frac, 0], 3)
        };
        a += 1;
    }
    table
};

/// Writes `t` tenths, `|t| < 1000`, at `buf[n..]`, which must hold 5 bytes;
/// returns where it ends. Zero is `0.0`, never `-0.0`.
fn small(buf: &mut [u8], n: usize, t: i64) -> usize {
    let (digits, len) = SMALL[t.unsigned_abs() as usize];
    buf[n] = b'-';
    let n = n + usize::from(t < 0);
    buf[n..n + 4].copy_from_slice(&digits);
    n + usize::from(len)
}

/// Writes `tenths` as a decimal with one digit after the point; zero is
/// always `0.0`, never `-0.0`.
fn tenths(out: &mut Vec<u8>, t: i64) {
    if t.unsigned_abs() < 1000 {
        let mut buf = [0u8; 5];
        let n = small(&mut buf, 0, t);
        out.extend_from_slice(&buf[..n]);
        return;
    }
    if t < 0 {
        out.push(b'-');
    }
    // Digits of the whole part, last first, without allocating.
    let a = t.unsigned_abs();
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut whole = a / 10;
    loop {
        i -= 1;
        digits[i] = b'0' + (whole % 10) as u8;
        whole /= 10;
        if whole == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
    out.push(b'.');
    out.push(b'0' + (a % 10) as u8);
}

/// Writes `v` units of 10^-`scale` as a decimal ([`Units`]).
fn units(out: &mut Vec<u8>, v: i64, scale: u32) {
    if scale == 1 {
        return tenths(out, v);
    }
    let _ = write!(out, "{}", Units(v.into(), scale));
}

/// How a summary's values are shown: in units of 10^-`scale`, with
/// `shown` decimals.
#[derive(Clone, Copy, Debug)]
struct View<'s> {
    scale: u32,
    shown: u32,
    /// Whether each key's count of missing values is shown.
    missing: bool,
    /// The statistics shown, if asked; else min, mean and max.
    statistics: Option<&'s Statistics>,
    /// What the stations keep, which a partial carries.
    kept: crate::detail::Kept,
}

impl View<'_> {
    fn of(summary: &Summary) -> View<'_> {
        View {
            scale: summary.scale(),
            shown: summary.decimals(),
            missing: summary.counts_missing(),
            statistics: summary.statistics(),
            kept: summary.kept(),
        }
    }

    /// The min, mean and max of `s` in shown units, if it has values.
    /// [`Summary::with_decimals`] checked that each min and max fits.
    fn min_mean_max(self, s: &Stats) -> Option<[i64; 3]> {
        s.shown(self.scale, self.shown)
    }

    /// Writes shown units.
    fn write(self, out: &mut Vec<u8>, v: i64) {
        units(out, v, self.shown)
    }
}

/// Writes the statistics `list` of `s`, separated by `sep`, `blank` for
/// each that `s` has none of.
fn statistics(out: &mut Vec<u8>, s: &Stats, list: &Statistics, sep: u8, blank: &[u8], view: View) {
    for (i, stat) in list.iter().enumerate() {
        if i > 0 {
            out.push(sep);
        }
        statistic(out, s, stat, blank, view);
    }
}

/// Writes the statistic `stat` of `s`, or `blank` if `s` has none.
fn statistic(out: &mut Vec<u8>, s: &Stats, stat: Statistic, blank: &[u8], view: View) {
    match stat.of(s, view.scale, view.shown) {
        Some(Shown::Count(n)) => {
            let _ = write!(out, "{n}");
        }
        Some(Shown::Units(v)) => match i64::try_from(v) {
            Ok(v) => units(out, v, view.shown),
            Err(_) => {
                let _ = write!(out, "{}", Units(v, view.shown));
            }
        },
        None => out.extend_from_slice(blank),
    }
}

/// The header of the CSV format for `list`.
fn csv_header(out: &mut Vec<u8>, list: &Statistics, missing: bool) {
    out.extend_from_slice(b"station");
    for stat in list.iter() {
        let _ = write!(out, ",{stat}");
    }
    if missing {
        out.extend_from_slice(b",missing");
    }
    out.push(b'\n');
}

fn min_mean_max(out: &mut Vec<u8>, s: &Stats, sep: u8, view: View) {
    let Some([min, mean, max]) = view.min_mean_max(s) else {
        // A key whose every value was missing.
        let blank: &[u8] = if sep == b'/' { b"-" } else { b"" };
        for (i, part) in [blank, blank, blank].into_iter().enumerate() {
            if i > 0 {
                out.push(sep);
            }
            out.extend_from_slice(part);
        }
        return;
    };
    if view.shown != 1 {
        for (i, v) in [min, mean, max].into_iter().enumerate() {
            if i > 0 {
                out.push(sep);
            }
            view.write(out, v);
        }
        return;
    }
    if [min, mean, max].iter().all(|t| t.unsigned_abs() < 1000) {
        // At most `-99.9` three times and two separators, copied out once.
        let mut buf = [0u8; 17];
        let mut n = small(&mut buf, 0, min);
        buf[n] = sep;
        n = small(&mut buf, n + 1, mean);
        buf[n] = sep;
        n = small(&mut buf, n + 1, max);
        out.extend_from_slice(&buf[..n]);
        return;
    }
    tenths(out, min);
    out.push(sep);
    tenths(out, mean);
    out.push(sep);
    tenths(out, max);
}

fn json_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            c if (c as u32) < 0x20 => {
                out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes())
            }
            c => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    out.push(b'"');
}

/// Renders a summary in the given format, final newline included.
pub fn render(summary: &Summary, format: Format) -> Vec<u8> {
    let stations = summary.stations();
    render_part(format, View::of(summary), stations, 0, stations.len())
}

/// Summaries with fewer stations than this render on one thread: a
/// thread's start costs more than a part this small takes to render.
const PARALLEL_STATIONS: usize = 1 << 16;

/// Stations [`write_parts`] renders at a time: the text of one round is
/// all the output held in memory, where millions of stations' whole text
/// beside the summary was a large part of a run's peak memory
/// (docs/PERFORMANCE.md, *Memory*).
const ROUND_STATIONS: usize = 1 << 17;

/// [`render`] cut into up to `threads` parts rendered side by side, to be
/// written one after the other: a million stations rendered on one
/// thread kept the others idle once the aggregation had finished
/// (docs/PERFORMANCE.md, *How data flows*).
pub fn render_parts(summary: &Summary, format: Format, threads: usize) -> Vec<Vec<u8>> {
    render_range(summary, format, threads, 0..summary.len())
}

/// [`render_parts`] of the stations `range` alone, each part with the
/// separators, head and tail its place in the whole calls for.
fn render_range(
    summary: &Summary,
    format: Format,
    threads: usize,
    range: std::ops::Range<usize>,
) -> Vec<Vec<u8>> {
    let total = summary.len();
    let view = View::of(summary);
    let stations = &summary.stations()[range.clone()];
    if threads <= 1 || stations.len() < PARALLEL_STATIONS {
        return vec![render_part(format, view, stations, range.start, total)];
    }
    let per = stations.len().div_ceil(threads);
    std::thread::scope(|s| {
        let parts: Vec<_> = (stations.chunks(per).enumerate())
            .map(|(k, part)| {
                s.spawn(move || render_part(format, view, part, range.start + k * per, total))
            })
            .collect();
        (parts.into_iter())
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// Writes `summary` as [`render_parts`] renders it, with up to `threads`
/// threads, at most [`ROUND_STATIONS`] stations at a time.
pub fn write_parts(
    summary: &Summary,
    format: Format,
    threads: usize,
    w: impl Write,
) -> io::Result<()> {
    write_rounds(summary, format, threads, ROUND_STATIONS, w)
}

/// [`write_parts`] in rounds of `round` stations.
fn write_rounds(
    summary: &Summary,
    format: Format,
    threads: usize,
    round: usize,
    mut w: impl Write,
) -> io::Result<()> {
    let total = summary.len();
    let mut from = 0;
    loop {
        let to = total.min(from + round);
        for part in render_range(summary, format, threads, from..to) {
            w.write_all(&part)?;
        }
        if to == total {
            return w.flush();
        }
        from = to;
    }
}

/// Renders `stations`, the ones from index `first` on of `total`, with
/// the head before the first station and the tail after the last.
fn render_part(
    format: Format,
    view: View,
    stations: &[(CompactString, Stats)],
    first: usize,
    total: usize,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + stations.len() * 48);
    if first == 0 {
        head(&mut out, format, view, total);
    }
    render_stations(&mut out, format, view, stations, first, total);
    if first + stations.len() == total {
        out.extend_from_slice(tail(format, total));
    }
    out
}

/// Writes what comes before the first of `total` stations.
fn head(out: &mut Vec<u8>, format: Format, view: View, total: usize) {
    match format {
        Format::Official => out.extend_from_slice(b"{"),
        Format::Lines => out.extend_from_slice(b"{\n"),
        Format::Json => out.extend_from_slice(b"["),
        Format::Csv if view.statistics.is_some() => {
            csv_header(out, view.statistics.expect("matched"), view.missing)
        }
        Format::Csv if view.missing => {
            out.extend_from_slice(b"station,min,mean,max,count,missing\n")
        }
        Format::Csv => out.extend_from_slice(b"station,min,mean,max,count\n"),
        Format::Partial => partial::head(out, view.scale, view.missing, view.kept, total),
    }
}

/// What comes after the last of `total` stations.
fn tail(format: Format, total: usize) -> &'static [u8] {
    match format {
        Format::Official | Format::Lines => b"}\n",
        Format::Json if total == 0 => b"]\n",
        Format::Json => b"\n]\n",
        Format::Csv | Format::Partial => b"",
    }
}

/// Renders `stations`, the ones from index `first` on of `total`: the
/// separators depend on where a station stands.
fn render_stations(
    out: &mut Vec<u8>,
    format: Format,
    view: View,
    stations: &[(CompactString, Stats)],
    first: usize,
    total: usize,
) {
    for (i, (name, s)) in (first..).zip(stations) {
        if let (Some(list), false) = (view.statistics, format == Format::Partial) {
            render_asked(out, format, view, list, (name, s), i, total);
            continue;
        }
        match format {
            Format::Official => {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                out.extend_from_slice(name.as_bytes());
                out.push(b'=');
                min_mean_max(out, s, b'/', view);
            }
            Format::Lines => {
                out.extend_from_slice(b"    ");
                out.extend_from_slice(name.as_bytes());
                out.push(b'=');
                min_mean_max(out, s, b'/', view);
                out.extend_from_slice(if i + 1 < total { b",\n" } else { b"\n" });
            }
            Format::Json => {
                out.extend_from_slice(if i > 0 { b",\n" } else { b"\n" });
                out.extend_from_slice(b"  {\"station\":");
                json_string(out, name);
                let values = view.min_mean_max(s);
                for (k, key) in ["min", "mean", "max"].into_iter().enumerate() {
                    out.extend_from_slice(format!(",\"{key}\":").as_bytes());
                    match values {
                        Some(values) => view.write(out, values[k]),
                        None => out.extend_from_slice(b"null"),
                    }
                }
                out.extend_from_slice(format!(",\"count\":{}", s.count).as_bytes());
                if view.missing {
                    out.extend_from_slice(format!(",\"missing\":{}", s.missing).as_bytes());
                }
                out.push(b'}');
            }
            Format::Csv => {
                csv_field(out, name);
                out.push(b',');
                min_mean_max(out, s, b',', view);
                out.extend_from_slice(format!(",{}", s.count).as_bytes());
                if view.missing {
                    out.extend_from_slice(format!(",{}", s.missing).as_bytes());
                }
                out.push(b'\n');
            }
            Format::Partial => partial::row(out, name, s, view.scale, view.missing, view.kept),
        }
    }
}

/// Renders the station `i` of `total` with the statistics `list`.
fn render_asked(
    out: &mut Vec<u8>,
    format: Format,
    view: View,
    list: &Statistics,
    (name, s): (&str, &Stats),
    i: usize,
    total: usize,
) {
    match format {
        Format::Official | Format::Lines => {
            match format {
                Format::Official if i > 0 => out.extend_from_slice(b", "),
                Format::Lines => out.extend_from_slice(b"    "),
                _ => {}
            }
            out.extend_from_slice(name.as_bytes());
            out.push(b'=');
            statistics(out, s, list, b'/', b"-", view);
            if format == Format::Lines {
                out.extend_from_slice(if i + 1 < total { b",\n" } else { b"\n" });
            }
        }
        Format::Json => {
            out.extend_from_slice(if i > 0 { b",\n" } else { b"\n" });
            out.extend_from_slice(b"  {\"station\":");
            json_string(out, name);
            for stat in list.iter() {
                let _ = write!(out, ",\"{stat}\":");
                statistic(out, s, stat, b"null", view);
            }
            if view.missing {
                let _ = write!(out, ",\"missing\":{}", s.missing);
            }
            out.push(b'}');
        }
        Format::Csv => {
            csv_field(out, name);
            out.push(b',');
            statistics(out, s, list, b',', b"", view);
            if view.missing {
                let _ = write!(out, ",{}", s.missing);
            }
            out.push(b'\n');
        }
        Format::Partial => unreachable!("a partial shows the state, not statistics"),
    }
}

/// Renders a summary and writes it in one call.
pub fn write(summary: &Summary, format: Format, mut w: impl Write) -> io::Result<()> {
    w.write_all(&render(summary, format))?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_value;

    fn summary() -> Summary {
        let mut a = Stats::new(-5);
        a.add(-0);
        let b = Stats::new(123);
        Summary::from_sorted(vec![("a,\"q\"".into(), a), ("b".into(), b)])
    }

    fn text(format: Format) -> String {
        String::from_utf8(render(&summary(), format)).unwrap()
    }

    /// Every number the table writes, and a few past it, against the
    /// digits formatted another way; and three at a time as a station's
    /// min, mean and max are.
    #[test]
    fn small_numbers_print_as_their_digits() {
        let digits = |t: i64| {
            let a = t.unsigned_abs();
            format!("{}{}.{}", if t < 0 { "-" } else { "" }, a / 10, a % 10)
        };
        for t in -1100..=1100 {
            let mut out = Vec::new();
            tenths(&mut out, t);
            assert_eq!(String::from_utf8(out).unwrap(), digits(t));
        }
        for (min, max) in [
            (-999, 999),
            (-999, -999),
            (0, 0),
            (-5, 12),
            (999, 999),
            (-1, 1),
        ] {
            let mut s = Stats::new(min);
            s.add(max);
            let mut out = Vec::new();
            let empty = Summary::default();
            let view = View::of(&empty);
            min_mean_max(&mut out, &s, b'/', view);
            let want = format!(
                "{}/{}/{}",
                digits(min.into()),
                digits(s.mean_tenths()),
                digits(max.into())
            );
            assert_eq!(String::from_utf8(out).unwrap(), want);
        }
    }

    #[test]
    fn tenths_print_every_magnitude_without_minus_zero() {
        for (t, want) in [
            (0, "0.0"),
            (-5, "-0.5"),
            (7, "0.7"),
            (999, "99.9"),
            (-999, "-99.9"),
            (100, "10.0"),
            (123_456_789, "12345678.9"),
            (i64::MIN, "-922337203685477580.8"),
        ] {
            let mut out = Vec::new();
            tenths(&mut out, t);
            assert_eq!(String::from_utf8(out).unwrap(), want);
        }
        // Both sides of the short path's bound, against plain formatting.
        for t in -1100i64..1100 {
            let a = t.unsigned_abs();
            let sign = if t < 0 { "-" } else { "" };
            let mut out = Vec::new();
            tenths(&mut out, t);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                format!("{sign}{}.{}", a / 10, a % 10)
            );
        }
    }

    #[test]
    fn official() {
        // Mean -0.25 rounds to -0.2; -0.0 never appears.
        assert_eq!(
            text(Format::Official),
            "{a,\"q\"=-0.5/-0.2/0.0, b=12.3/12.3/12.3}\n"
        );
        assert_eq!(render(&Summary::default(), Format::Official), b"{}\n");
    }

    #[test]
    fn lines() {
        assert_eq!(
            text(Format::Lines),
            "{\n    a,\"q\"=-0.5/-0.2/0.0,\n    b=12.3/12.3/12.3\n}\n"
        );
    }

    #[test]
    fn json() {
        assert_eq!(
            text(Format::Json),
            "[\n  {\"station\":\"a,\\\"q\\\"\",\"min\":-0.5,\"mean\":-0.2,\"max\":0.0,\"count\":2},\n  \
             {\"station\":\"b\",\"min\":12.3,\"mean\":12.3,\"max\":12.3,\"count\":1}\n]\n"
        );
        assert_eq!(render(&Summary::default(), Format::Json), b"[]\n");
    }

    #[test]
    fn csv() {
        assert_eq!(
            text(Format::Csv),
            "station,min,mean,max,count\n\"a,\"\"q\"\"\",-0.5,-0.2,0.0,2\nb,12.3,12.3,12.3,1\n"
        );
    }

    #[test]
    fn partial() {
        assert_eq!(
            text(Format::Partial),
            "brc-partial v1 stations=2\nstation,count,sum,min,max\n\"a,\"\"q\"\"\",2,-5,-5,0\n\
             b,1,123,123,123\n"
        );
        assert_eq!(
            render(&Summary::default(), Format::Partial),
            b"brc-partial v1 stations=0\nstation,count,sum,min,max\n"
        );
    }

    #[test]
    fn rounding_cases_print_as_the_reference_does() {
        let station = |values: &[&str]| {
            let mut tenths = values.iter().map(|v| parse_value(v.as_bytes()).unwrap());
            let mut s = Stats::new(tenths.next().unwrap());
            tenths.for_each(|t| s.add(t));
            s
        };
        let summary = Summary::from_sorted(vec![
            ("a".into(), station(&["-1.2", "-1.3"])), // -1.25 → -1.2
            ("b".into(), station(&["1.2", "1.3"])),   // 1.25 → 1.3
            ("c".into(), station(&["-0.1", "0.0"])),  // -0.05 → 0.0
            ("d".into(), station(&["-0.0"])),         // -0.0 → 0.0
            // -2973 tenths over 6 rows: exactly -49.55, but -49.6 in the
            // reference's f64 steps.
            (
                "e".into(),
                station(&["-50.0", "-50.0", "-50.0", "-50.0", "-50.0", "-47.3"]),
            ),
        ]);
        assert_eq!(
            String::from_utf8(render(&summary, Format::Official)).unwrap(),
            "{a=-1.3/-1.2/-1.2, b=1.2/1.3/1.3, c=-0.1/0.0/0.0, d=0.0/0.0/0.0, \
             e=-50.0/-49.6/-47.3}\n"
        );
    }

    #[test]
    fn rounds_written_one_after_another_make_the_whole() {
        // Rounds of 3 and 70,000 stations (the last rendered in parts side
        // by side), and none at all.
        let big = Summary::from_sorted(
            (0..150_000i64)
                .map(|k| {
                    (
                        format!("s{k:06}").into(),
                        Stats::new((k % 1999 - 999) as i16),
                    )
                })
                .collect(),
        );
        for summary in [summary(), big, Summary::default()] {
            for (_, format) in Format::ALL {
                let whole = render(&summary, format);
                for (threads, round) in [(1, 3), (3, 3), (2, 70_000), (4, 1 << 20)] {
                    let mut out = Vec::new();
                    write_rounds(&summary, format, threads, round, &mut out).unwrap();
                    assert!(
                        out == whole,
                        "{format:?}, {threads} threads, rounds of {round}"
                    );
                }
            }
        }
    }

    #[test]
    fn parts_rendered_side_by_side_join_into_the_whole() {
        let summary = Summary::from_sorted(
            (0..PARALLEL_STATIONS + 5)
                .map(|i| {
                    let tenths = (i % 1999) as i16 - 999;
                    (format!("s{i:05}").into(), Stats::new(tenths))
                })
                .collect(),
        );
        for (_, format) in Format::ALL {
            let whole = render(&summary, format);
            for threads in [1, 2, 3, 7] {
                let parts = render_parts(&summary, format, threads);
                assert_eq!(parts.len(), threads);
                assert_eq!(parts.concat(), whole, "{format:?}, {threads} threads");
            }
        }
    }

    #[test]
    fn tenths_never_print_negative_zero() {
        let mut out = Vec::new();
        tenths(&mut out, 0);
        tenths(&mut out, -1);
        tenths(&mut out, -999);
        assert_eq!(out, b"0.0-0.1-99.9");
    }
}

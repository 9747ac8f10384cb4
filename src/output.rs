//! Output formats: the official one-liner and three friendlier ones.
//!
//! Every format prints min, mean and max with one decimal from exact
//! tenths; the mean uses [`Stats::mean_tenths`], the official rounding.

use std::io::{self, Write};

use crate::engine::Summary;
use crate::stats::Stats;

/// How a summary is printed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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
}

impl Format {
    /// Every format, by its command-line name.
    pub const ALL: [(&'static str, Format); 4] = [
        ("official", Format::Official),
        ("lines", Format::Lines),
        ("json", Format::Json),
        ("csv", Format::Csv),
    ];
}

/// Writes `tenths` as a decimal with one digit after the point; zero is
/// always `0.0`, never `-0.0`.
fn tenths(out: &mut Vec<u8>, t: i64) {
    if t < 0 {
        out.push(b'-');
    }
    let a = t.unsigned_abs();
    if a < 1000 {
        // Every value and mean is within ±99.9: at most two whole digits,
        // written without the loop below or a copy of variable length.
        let (whole, frac) = ((a / 10) as u8, (a % 10) as u8);
        if whole >= 10 {
            out.push(b'0' + whole / 10);
        }
        out.extend_from_slice(&[b'0' + whole % 10, b'.', b'0' + frac]);
        return;
    }
    // Digits of the whole part, last first, without allocating: a million
    // stations print three numbers each.
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

fn min_mean_max(out: &mut Vec<u8>, s: &Stats, sep: u8) {
    tenths(out, i64::from(s.min));
    out.push(sep);
    tenths(out, s.mean_tenths());
    out.push(sep);
    tenths(out, i64::from(s.max));
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

fn csv_field(out: &mut Vec<u8>, s: &str) {
    if s.contains([',', '"', '\r', '\n']) {
        out.push(b'"');
        out.extend_from_slice(s.replace('"', "\"\"").as_bytes());
        out.push(b'"');
    } else {
        out.extend_from_slice(s.as_bytes());
    }
}

/// Renders a summary in the given format, final newline included.
pub fn render(summary: &Summary, format: Format) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + summary.stations.len() * 48);
    let stations = &summary.stations;
    match format {
        Format::Official => {
            out.push(b'{');
            for (i, (name, s)) in stations.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                out.extend_from_slice(name.as_bytes());
                out.push(b'=');
                min_mean_max(&mut out, s, b'/');
            }
            out.extend_from_slice(b"}\n");
        }
        Format::Lines => {
            out.extend_from_slice(b"{\n");
            for (i, (name, s)) in stations.iter().enumerate() {
                out.extend_from_slice(b"    ");
                out.extend_from_slice(name.as_bytes());
                out.push(b'=');
                min_mean_max(&mut out, s, b'/');
                out.extend_from_slice(if i + 1 < stations.len() {
                    b",\n"
                } else {
                    b"\n"
                });
            }
            out.extend_from_slice(b"}\n");
        }
        Format::Json => {
            out.push(b'[');
            for (i, (name, s)) in stations.iter().enumerate() {
                out.extend_from_slice(if i > 0 { b",\n" } else { b"\n" });
                out.extend_from_slice(b"  {\"station\":");
                json_string(&mut out, name);
                for (key, t) in [
                    ("min", i64::from(s.min)),
                    ("mean", s.mean_tenths()),
                    ("max", i64::from(s.max)),
                ] {
                    out.extend_from_slice(format!(",\"{key}\":").as_bytes());
                    tenths(&mut out, t);
                }
                out.extend_from_slice(format!(",\"count\":{}}}", s.count).as_bytes());
            }
            out.extend_from_slice(if stations.is_empty() {
                b"]\n"
            } else {
                b"\n]\n"
            });
        }
        Format::Csv => {
            out.extend_from_slice(b"station,min,mean,max,count\n");
            for (name, s) in stations {
                csv_field(&mut out, name);
                out.push(b',');
                min_mean_max(&mut out, s, b',');
                out.extend_from_slice(format!(",{}\n", s.count).as_bytes());
            }
        }
    }
    out
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
        Summary {
            stations: vec![("a,\"q\"".into(), a), ("b".into(), b)],
        }
    }

    fn text(format: Format) -> String {
        String::from_utf8(render(&summary(), format)).unwrap()
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
    fn rounding_cases_print_as_the_reference_does() {
        let station = |values: &[&str]| {
            let mut tenths = values.iter().map(|v| parse_value(v.as_bytes()).unwrap());
            let mut s = Stats::new(tenths.next().unwrap());
            tenths.for_each(|t| s.add(t));
            s
        };
        let summary = Summary {
            stations: vec![
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
            ],
        };
        assert_eq!(
            String::from_utf8(render(&summary, Format::Official)).unwrap(),
            "{a=-1.3/-1.2/-1.2, b=1.2/1.3/1.3, c=-0.1/0.0/0.0, d=0.0/0.0/0.0, \
             e=-50.0/-49.6/-47.3}\n"
        );
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

//! CSV measurement files, as exported by a data logger: a header, then
//! `time,site,sensor,reading,unit` rows.
//!
//! Row `r` takes the station and the value in tenths of row `r` of the text
//! format ([`Generator::row`]) and adds, from a second stream of the seed
//! (one number a row, so any block of rows is still generated on its own):
//! the thousandths within the tenth's rounding interval, a sensor, and
//! whether the reading is missing. So the readings are the text format's
//! normal values with three decimals, and the same seed makes both files
//! from the same draws.
//!
//! - `time`: `2024-01-01T00:00:00Z` plus `r` seconds (ISO 8601, UTC),
//!   starting over from 2024 past the end of year 9999, so it is always 20
//!   bytes;
//! - `site`: the station's name, with `, <country code>` appended to every
//!   fifth station (indexes 4, 9, 14, …) whose name stays within
//!   [`MAX_NAME_LEN`] bytes, so that quoted names with commas occur in any
//!   station set; a name with a comma, a quote, a line break or a leading
//!   or trailing space is quoted as RFC 4180 says (quotes doubled);
//! - `sensor`: `t1` to `t4`;
//! - `reading`: the value with exactly three decimals (`-12.345`, `0.050`,
//!   `7.000`), uniform within the rounding interval of the text format's
//!   tenth (`[t - 0.05, t + 0.05)`), clamped to ±999.999; empty in one row
//!   out of a hundred;
//! - `unit`: `C`.
//!
//! Lines end with `\n`.

use std::borrow::Cow;
use std::io::{self, Write};

use super::rng::{below, Stream};
use super::{write_blocks, Generator, Progress};
use crate::parse::MAX_NAME_LEN;

/// The header line.
pub const CSV_HEADER: &str = "time,site,sensor,reading,unit\n";

/// The first row's time: 2024-01-01T00:00:00Z, in days since 1970-01-01.
const FIRST_DAY: i64 = 19_723;
/// Seconds from the first row's time to 10000-01-01T00:00:00Z: the time
/// starts over after that many rows.
const SPAN_SECONDS: u64 = (2_932_897 - FIRST_DAY as u64) * 86_400;

/// Every this many stations, the last gets a country code appended.
const SUFFIX_EVERY: usize = 5;
/// The country codes appended, in turn.
const COUNTRIES: [&str; 20] = [
    "US", "DE", "FR", "BR", "IN", "JP", "CN", "NG", "AU", "CA", "MX", "ZA", "AR", "EG", "ID", "NO",
    "TR", "IT", "ES", "KE",
];

/// Sensors per site.
const SENSORS: u32 = 4;
/// One reading in this many is missing (an empty cell).
const MISSING_ONE_IN: u32 = 100;
/// The largest reading, in thousandths.
const MAX_THOUSANDTHS: i32 = 999_999;

/// Mixed into the seed for the second stream (the CSV columns' own draws).
const CSV_SALT: u64 = 0x6373_765f_636f_6c73;

/// One CSV row, as [`Generator::csv_row`] describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CsvRow {
    /// Seconds since 1970-01-01T00:00:00Z.
    pub time: i64,
    /// The station's index in [`Generator::stations`]; its `site` is
    /// [`Generator::csv_site`].
    pub station: usize,
    /// The sensor, 1 to 4 (`t1` to `t4`).
    pub sensor: u8,
    /// The reading in thousandths, or `None` for an empty cell.
    pub reading: Option<i32>,
}

impl Generator {
    /// The `site` of station `index` (of [`stations`](Generator::stations))
    /// in CSV files, unquoted: its name, `, <country code>` appended to
    /// every fifth station whose name stays within 100 bytes.
    pub fn csv_site(&self, index: usize) -> Cow<'_, str> {
        let name = self.stations[index].name();
        let country = COUNTRIES[(index / SUFFIX_EVERY) % COUNTRIES.len()];
        if index % SUFFIX_EVERY == SUFFIX_EVERY - 1
            && name.len() + 2 + country.len() <= MAX_NAME_LEN
        {
            Cow::Owned(format!("{name}, {country}"))
        } else {
            Cow::Borrowed(name)
        }
    }

    /// Row `index` of the CSV output.
    pub fn csv_row(&self, index: u64) -> CsvRow {
        let (station, tenths) = self.row(index);
        let extra = Stream::at(self.seed ^ CSV_SALT, index).next_u64();
        let (thousandths, sensor, missing) = extras(tenths, extra);
        CsvRow {
            time: (FIRST_DAY * 86_400) + (index % SPAN_SECONDS) as i64,
            station,
            sensor: sensor as u8 + 1,
            reading: (!missing).then_some(thousandths),
        }
    }

    /// Writes the header and `rows` CSV rows to `out` using `threads`
    /// threads, calling `progress` after each block (in output order). The
    /// bytes are the same for any `threads`, and the first `n` rows of a
    /// longer file are the `n`-row file. Stops at the first write error.
    pub fn write_csv<W: Write + Send>(
        &self,
        rows: u64,
        threads: usize,
        out: W,
        progress: &(dyn Fn(Progress) + Sync),
    ) -> io::Result<Progress> {
        let sites = Sites::new(self);
        write_blocks(
            rows,
            threads,
            out,
            CSV_HEADER.as_bytes(),
            progress,
            |first, count, buf| self.format_csv(&sites, first, count, buf),
        )
    }

    /// Formats CSV rows `first..first + count` into `buf`, returning their
    /// length in bytes.
    fn format_csv(&self, sites: &Sites, first: u64, count: usize, buf: &mut Vec<u8>) -> usize {
        buf.clear();
        let mut stream = Stream::at(self.seed, 2 * first);
        let mut extra = Stream::at(self.seed ^ CSV_SALT, first);
        let mut clock = Clock::at(first);
        for _ in 0..count {
            let (station, tenths) = self.draw(&mut stream);
            let (thousandths, sensor, missing) = extras(tenths, extra.next_u64());
            clock.push(buf);
            buf.push(b',');
            buf.extend_from_slice(sites.field(station));
            buf.extend_from_slice(b",t");
            buf.push(b'1' + sensor as u8);
            buf.push(b',');
            if !missing {
                push_thousandths(buf, thousandths);
            }
            buf.extend_from_slice(b",C\n");
            clock.tick();
        }
        buf.len()
    }
}

/// The reading in thousandths, the sensor (0-based) and whether the reading
/// is missing, from a row's value in tenths and its extra random number:
/// one uniform draw among 100 × 4 × 100 outcomes, so the three are
/// independent.
#[inline(always)]
fn extras(tenths: i32, bits: u64) -> (i32, u32, bool) {
    const JITTER: u32 = 100;
    let outcome = below(bits, JITTER * SENSORS * MISSING_ONE_IN);
    let jitter = (outcome % JITTER) as i32 - 50;
    let sensor = outcome / JITTER % SENSORS;
    let missing = outcome / (JITTER * SENSORS) == 0;
    let thousandths = (tenths * 100 + jitter).clamp(-MAX_THOUSANDTHS, MAX_THOUSANDTHS);
    (thousandths, sensor, missing)
}

/// Appends thousandths as a decimal with three fractional digits.
fn push_thousandths(buf: &mut Vec<u8>, thousandths: i32) {
    if thousandths < 0 {
        buf.push(b'-');
    }
    let abs = thousandths.unsigned_abs();
    let whole = abs / 1000;
    if whole >= 100 {
        buf.push(b'0' + (whole / 100) as u8);
    }
    if whole >= 10 {
        buf.push(b'0' + (whole / 10 % 10) as u8);
    }
    let frac = abs % 1000;
    buf.extend_from_slice(&[
        b'0' + (whole % 10) as u8,
        b'.',
        b'0' + (frac / 100) as u8,
        b'0' + (frac / 10 % 10) as u8,
        b'0' + (frac % 10) as u8,
    ]);
}

/// Appends `name` as a CSV field: quoted, quotes doubled, when it holds a
/// comma, a quote or a line break, or starts or ends with a space.
fn push_field(buf: &mut Vec<u8>, name: &str) {
    let quote =
        name.contains([',', '"', '\n', '\r']) || name.starts_with(' ') || name.ends_with(' ');
    if !quote {
        buf.extend_from_slice(name.as_bytes());
        return;
    }
    buf.push(b'"');
    for &b in name.as_bytes() {
        if b == b'"' {
            buf.push(b'"');
        }
        buf.push(b);
    }
    buf.push(b'"');
}

/// Every station's `site` field, quoted where needed, end to end.
struct Sites {
    bytes: Vec<u8>,
    /// Field `i` is `bytes[ends[i - 1]..ends[i]]` (from 0 for the first).
    ends: Vec<usize>,
}

impl Sites {
    fn new(generator: &Generator) -> Sites {
        let count = generator.stations().len();
        let mut bytes = Vec::new();
        let mut ends = Vec::with_capacity(count);
        for i in 0..count {
            push_field(&mut bytes, &generator.csv_site(i));
            ends.push(bytes.len());
        }
        Sites { bytes, ends }
    }

    #[inline(always)]
    fn field(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }
}

/// The `time` of consecutive rows: the date's text, redone once a day, and
/// the seconds into the day.
struct Clock {
    /// Days since the first row's day.
    day: u64,
    second: u32,
    date: [u8; 10],
}

impl Clock {
    /// The clock at row `row`.
    fn at(row: u64) -> Clock {
        let seconds = row % SPAN_SECONDS;
        let day = seconds / 86_400;
        Clock {
            day,
            second: (seconds % 86_400) as u32,
            date: date_text(FIRST_DAY + day as i64),
        }
    }

    /// Appends the time, `YYYY-MM-DDTHH:MM:SSZ`.
    #[inline(always)]
    fn push(&self, buf: &mut Vec<u8>) {
        let (h, m, s) = (self.second / 3600, self.second / 60 % 60, self.second % 60);
        buf.extend_from_slice(&self.date);
        buf.extend_from_slice(&[
            b'T',
            b'0' + (h / 10) as u8,
            b'0' + (h % 10) as u8,
            b':',
            b'0' + (m / 10) as u8,
            b'0' + (m % 10) as u8,
            b':',
            b'0' + (s / 10) as u8,
            b'0' + (s % 10) as u8,
            b'Z',
        ]);
    }

    /// Moves to the next row's time, a second later.
    #[inline(always)]
    fn tick(&mut self) {
        self.second += 1;
        if self.second == 86_400 {
            self.second = 0;
            self.day += 1;
            if self.day * 86_400 == SPAN_SECONDS {
                self.day = 0;
            }
            self.date = date_text(FIRST_DAY + self.day as i64);
        }
    }
}

/// `YYYY-MM-DD` of a day counted from 1970-01-01 (years 1970 to 9999).
fn date_text(days: i64) -> [u8; 10] {
    let (y, m, d) = civil_from_days(days);
    let mut text = *b"0000-00-00";
    for (i, digit) in [
        y / 1000,
        y / 100 % 10,
        y / 10 % 10,
        y % 10,
        0,
        m / 10,
        m % 10,
        0,
        d / 10,
        d % 10,
    ]
    .into_iter()
    .enumerate()
    {
        if i != 4 && i != 7 {
            text[i] = b'0' + digit as u8;
        }
    }
    text
}

/// The proleptic Gregorian date of a day counted from 1970-01-01 (Howard
/// Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::Keys;

    fn thousandths(t: i32) -> String {
        let mut buf = Vec::new();
        push_thousandths(&mut buf, t);
        String::from_utf8(buf).unwrap()
    }

    fn field(name: &str) -> String {
        let mut buf = Vec::new();
        push_field(&mut buf, name);
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn readings_have_three_decimals() {
        assert_eq!(thousandths(0), "0.000");
        assert_eq!(thousandths(-1), "-0.001");
        assert_eq!(thousandths(50), "0.050");
        assert_eq!(thousandths(7000), "7.000");
        assert_eq!(thousandths(-12_345), "-12.345");
        assert_eq!(thousandths(99_999), "99.999");
        assert_eq!(thousandths(-MAX_THOUSANDTHS), "-999.999");
        assert_eq!(thousandths(100_000), "100.000");
    }

    #[test]
    fn fields_are_quoted_as_rfc_4180_says() {
        assert_eq!(field("Hamburg"), "Hamburg");
        assert_eq!(field("Washington, D.C."), "\"Washington, D.C.\"");
        assert_eq!(field("The \"Rock\""), "\"The \"\"Rock\"\"\"");
        assert_eq!(field(" lead"), "\" lead\"");
        assert_eq!(field("trail "), "\"trail \"");
        assert_eq!(field("in ner"), "in ner");
        assert_eq!(field("a\nb"), "\"a\nb\"");
        assert_eq!(field("O'Hare"), "O'Hare");
    }

    #[test]
    fn dates_follow_the_calendar() {
        assert_eq!(&date_text(0), b"1970-01-01");
        assert_eq!(&date_text(FIRST_DAY), b"2024-01-01");
        assert_eq!(&date_text(FIRST_DAY + 59), b"2024-02-29");
        assert_eq!(&date_text(FIRST_DAY + 60), b"2024-03-01");
        assert_eq!(&date_text(FIRST_DAY + 366), b"2025-01-01");
        let end = FIRST_DAY + (SPAN_SECONDS / 86_400) as i64;
        assert_eq!(&date_text(end - 1), b"9999-12-31");
        assert_eq!(civil_from_days(end), (10_000, 1, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }

    #[test]
    fn the_clock_ticks_a_second_a_row_and_starts_over_after_9999() {
        let text = |row: u64| {
            let mut buf = Vec::new();
            Clock::at(row).push(&mut buf);
            String::from_utf8(buf).unwrap()
        };
        assert_eq!(text(0), "2024-01-01T00:00:00Z");
        assert_eq!(text(3_661), "2024-01-01T01:01:01Z");
        assert_eq!(text(86_399), "2024-01-01T23:59:59Z");
        assert_eq!(text(SPAN_SECONDS - 1), "9999-12-31T23:59:59Z");
        assert_eq!(text(SPAN_SECONDS), "2024-01-01T00:00:00Z");
        // Ticking gives what starting at the row gives.
        for start in [0, 86_390, SPAN_SECONDS - 5] {
            let mut clock = Clock::at(start);
            for row in start..start + 20 {
                let mut buf = Vec::new();
                clock.push(&mut buf);
                assert_eq!(String::from_utf8(buf).unwrap(), text(row), "row {row}");
                clock.tick();
            }
        }
    }

    #[test]
    fn blocks_format_the_rows_they_stand_for() {
        let g = Generator::new(Keys::Official, 9).unwrap();
        let sites = Sites::new(&g);
        let mut buf = Vec::new();
        let len = g.format_csv(&sites, 86_000, 1_000, &mut buf);
        let text = std::str::from_utf8(&buf[..len]).unwrap();
        assert_eq!(text.lines().count(), 1_000);
        for (i, line) in text.lines().enumerate() {
            let row = g.csv_row(86_000 + i as u64);
            let mut want = Vec::new();
            Clock::at(86_000 + i as u64).push(&mut want);
            want.push(b',');
            push_field(&mut want, &g.csv_site(row.station));
            want.extend_from_slice(format!(",t{},", row.sensor).as_bytes());
            if let Some(t) = row.reading {
                push_thousandths(&mut want, t);
            }
            want.extend_from_slice(b",C");
            assert_eq!(line.as_bytes(), &want[..], "row {}", 86_000 + i);
        }
    }

    #[test]
    fn readings_are_the_text_values_with_thousandths() {
        let g = Generator::new(Keys::Official, 2).unwrap();
        let (mut missing, mut sensors) = (0, [0; 4]);
        let n = 200_000;
        for r in 0..n {
            let (station, tenths) = g.row(r);
            let row = g.csv_row(r);
            assert_eq!(row.station, station);
            sensors[usize::from(row.sensor - 1)] += 1;
            match row.reading {
                None => missing += 1,
                Some(t) => assert!(
                    (tenths * 100 - 50..tenths * 100 + 50).contains(&t),
                    "{t} {tenths}"
                ),
            }
        }
        // 2,000 expected, standard deviation 44.
        assert!((1_800..=2_200).contains(&missing), "{missing}");
        // 50,000 expected each, standard deviation 194.
        assert!(
            sensors.iter().all(|&s| (49_000..=51_000).contains(&s)),
            "{sensors:?}"
        );
    }

    #[test]
    fn every_fifth_site_gets_a_country() {
        let g = Generator::new(Keys::Official, 0).unwrap();
        let names: Vec<String> = (0..413).map(|i| g.csv_site(i).into_owned()).collect();
        assert_eq!(names[0], g.stations()[0].name());
        assert_eq!(names[4], format!("{}, US", g.stations()[4].name()));
        assert_eq!(names[9], format!("{}, DE", g.stations()[9].name()));
        let unique: std::collections::HashSet<&String> = names.iter().collect();
        assert_eq!(unique.len(), 413);
    }
}

//! The station sets rows are drawn from: the official 413 stations, or `K`
//! names built from world city names, each with its mean temperature.
//!
//! Both data files are embedded in the binary (see `data/NOTICE.md` for
//! their sources and licenses), so generating works from any directory.

use std::collections::HashSet;

use crate::generate::rng::{below, Stream};
use crate::parse::MAX_NAME_LEN;

/// The official stations with their mean temperatures, `name;mean` lines.
const OFFICIAL: &str = include_str!("../../data/stations-413.csv");
/// World cities with their latitudes, `name;latitude` lines after `#`
/// comment lines.
const CITIES: &str = include_str!("../../data/weather_stations.csv");

/// The most names a station set built from city names may have: ten times
/// the official 10,000. Beyond that the city names run out of distinct
/// short pieces, so the length distribution would drift and building would
/// slow down; the names after these are drawn at random ([`random_name`]).
pub const CITY_KEYS: usize = 100_000;

/// The most names a built station set may have: enough for the
/// many-names measurements of docs/PERFORMANCE.md, *Memory*.
pub const MAX_KEYS: usize = 10_000_000;

/// Characters the random names are drawn from: ASCII letters and digits,
/// and some of two, three and four bytes, so that names hold multi-byte
/// UTF-8 and are cut at character boundaries.
const RANDOM_CHARS: &str =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.éüñøçÅÖß東京가🌍";

/// The stream position names are built from: the same for every seed, so a
/// key count names one fixed set of stations, like the official 413.
const NAMES_SEED: u64 = 0x6e61_6d65_7331_304b;

/// After this many failed attempts to find an unused name of a length, the
/// length grows by a byte, so building always ends even when the short
/// names run out.
const SLIDES_PER_LENGTH: u32 = 64;

/// A station: its name and the mean of its values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Station {
    name: String,
    mean_hundredths: i32,
}

impl Station {
    /// The station's name: 1..=100 bytes of UTF-8 without `;` or `\n`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The mean of the station's values, in degrees.
    pub fn mean(&self) -> f64 {
        f64::from(self.mean_hundredths) / 100.0
    }

    /// The mean in hundredths of a degree (exact: the means have at most
    /// two decimals).
    pub(crate) fn mean_hundredths(&self) -> i32 {
        self.mean_hundredths
    }
}

/// The official 413 stations of the One Billion Row Challenge.
pub(crate) fn official() -> Vec<Station> {
    OFFICIAL
        .lines()
        .map(|line| {
            let (name, mean) = line.split_once(';').expect("embedded `name;mean`");
            Station {
                name: name.to_string(),
                mean_hundredths: parse_hundredths(mean).expect("embedded mean"),
            }
        })
        .collect()
}

/// `count` distinct station names (`1..=MAX_KEYS`). The first
/// [`CITY_KEYS`] are built the way the official 10K-key generator builds
/// them: all city names are concatenated
/// into one text, and each station takes the next piece of it, with a
/// length drawn from a 7th-order curve (mostly 2..6 bytes, a long tail up to
/// 100). Pieces are cut at character boundaries and never start or end with
/// a space; a piece already taken slides forward a character at a time.
/// The others are random names of 1 to 100 bytes ([`random_name`]). The
/// mean of station `i` is `30 cos(latitude of city i) - 10`, to a tenth.
pub(super) fn built(count: usize) -> Vec<Station> {
    let cities: Vec<(&str, f64)> = CITIES
        .lines()
        .filter(|line| !line.starts_with('#'))
        .map(|line| {
            let (name, latitude) = line.split_once(';').expect("embedded `name;latitude`");
            (name, latitude.parse().expect("embedded latitude"))
        })
        .collect();
    let text: String = cities.iter().map(|&(name, _)| name).collect();
    let mut stream = Stream::at(NAMES_SEED, 0);
    let mut taken = HashSet::with_capacity(count);
    let mut cursor = 0;
    let mut stations = Vec::with_capacity(count);
    let chars: Vec<char> = RANDOM_CHARS.chars().collect();
    let mut random = Stream::at(NAMES_SEED, 1 << 40);
    let mut drawn = HashSet::new();
    for i in 0..count {
        let mean = |latitude: f64| (30.0 * latitude.to_radians().cos() - 10.0) * 10.0;
        if i >= CITY_KEYS {
            let name = loop {
                let name = random_name(&mut random, &chars);
                if !taken.contains(name.as_str()) && drawn.insert(name.clone()) {
                    break name;
                }
            };
            stations.push(Station {
                name,
                mean_hundredths: mean(cities[i % cities.len()].1).round() as i32 * 10,
            });
            continue;
        }
        let mut len = name_len(stream.next_f64());
        let mut start = cursor;
        let mut slides = 0;
        let name = loop {
            start = piece_start(&text, start);
            let name = piece(&text[start..], len);
            if !name.is_empty() && taken.insert(name) {
                break name;
            }
            start += text[start..].chars().next().map_or(1, char::len_utf8);
            slides += 1;
            if slides % SLIDES_PER_LENGTH == 0 && len < MAX_NAME_LEN {
                len += 1;
            }
        };
        cursor = start + name.len();
        stations.push(Station {
            name: name.to_string(),
            mean_hundredths: mean(cities[i % cities.len()].1).round() as i32 * 10,
        });
    }
    stations
}

/// A random name: a length of 1 to 100 bytes, then characters from
/// `chars` while they fit, ASCII letters once a multi-byte one would not.
fn random_name(stream: &mut Stream, chars: &[char]) -> String {
    let mut name = String::new();
    let len = 1 + below(stream.next_u64(), MAX_NAME_LEN as u32) as usize;
    while name.len() < len {
        let mut c = chars[below(stream.next_u64(), chars.len() as u32) as usize];
        if name.len() + c.len_utf8() > len {
            c = chars[below(stream.next_u64(), 26) as usize];
        }
        name.push(c);
    }
    name
}

/// A name length in bytes from a uniform `u` in `[0, 1)`: the official
/// generator's curve `4 + 2500 (u - 0.372)^7`, truncated, within 1..=100.
fn name_len(u: f64) -> usize {
    let len = 4.0 + 2500.0 * (u - 0.372).powi(7);
    (len as usize).clamp(1, MAX_NAME_LEN)
}

/// Moves `start` past spaces, back to the beginning of the text when too
/// little of it is left for the longest name.
fn piece_start(text: &str, mut start: usize) -> usize {
    loop {
        if text.len() - start < MAX_NAME_LEN {
            start = 0;
        }
        match text.as_bytes()[start] {
            b' ' => start += 1,
            _ => return start,
        }
    }
}

/// The longest prefix of `text` of whole characters within `len` bytes,
/// without trailing spaces.
fn piece(text: &str, len: usize) -> &str {
    let end = text
        .char_indices()
        .map(|(i, c)| i + c.len_utf8())
        .take_while(|&end| end <= len)
        .last()
        .unwrap_or(0);
    text[..end].trim_end_matches(' ')
}

/// Parses `-?\d+(\.\d{1,2})?` into hundredths.
fn parse_hundredths(text: &str) -> Option<i32> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty() || fraction.len() > 2 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let fraction = format!("{fraction:0<2}").parse::<i32>().ok()?;
    let value = whole.parse::<u16>().ok()? as i32 * 100 + fraction;
    Some(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_official_set_has_413_distinct_stations() {
        let stations = official();
        assert_eq!(stations.len(), 413);
        let names: HashSet<&str> = stations.iter().map(Station::name).collect();
        assert_eq!(names.len(), 413);
        let baghdad = stations.iter().find(|s| s.name() == "Baghdad").unwrap();
        assert_eq!(baghdad.mean_hundredths(), 2277);
        let dikson = stations.iter().find(|s| s.name() == "Dikson").unwrap();
        assert_eq!(dikson.mean(), -11.1);
    }

    #[test]
    fn hundredths_parse_exactly() {
        assert_eq!(parse_hundredths("22.77"), Some(2277));
        assert_eq!(parse_hundredths("-11.1"), Some(-1110));
        assert_eq!(parse_hundredths("-0.5"), Some(-50));
        assert_eq!(parse_hundredths("30"), Some(3000));
        for bad in ["", "-", "1.234", "a.1", "1.a", ".5", "1.-5"] {
            assert_eq!(parse_hundredths(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn pieces_are_cut_at_characters_and_trimmed() {
        assert_eq!(piece("Abéché", 3), "Ab");
        assert_eq!(piece("Abéché", 4), "Abé");
        assert_eq!(piece("San José", 4), "San");
        assert_eq!(piece("é", 1), "");
        assert_eq!(piece("ab", 100), "ab");
    }

    #[test]
    fn name_lengths_are_mostly_short_with_a_long_tail() {
        assert_eq!(name_len(0.0), 1);
        assert_eq!(name_len(0.372), 4);
        assert_eq!(name_len(0.999_999), 100);
        let mut stream = Stream::at(3, 0);
        let lens: Vec<usize> = (0..10_000).map(|_| name_len(stream.next_f64())).collect();
        // P(len <= 8) = 0.78, P(len > 60) = 0.047.
        let short = lens.iter().filter(|&&l| l <= 8).count();
        assert!((7_600..=8_050).contains(&short), "{short}");
        let long = lens.iter().filter(|&&l| l > 60).count();
        assert!((370..=570).contains(&long), "{long}");
    }

    #[test]
    fn built_names_are_distinct_valid_and_trimmed() {
        let stations = built(10_000);
        assert_eq!(stations.len(), 10_000);
        let names: HashSet<&str> = stations.iter().map(Station::name).collect();
        assert_eq!(names.len(), 10_000);
        for s in &stations {
            let name = s.name();
            assert!((1..=MAX_NAME_LEN).contains(&name.len()), "{name:?}");
            assert!(!name.starts_with(' ') && !name.ends_with(' '), "{name:?}");
            assert!(!name.contains([';', '\n']), "{name:?}");
            assert!((-10.0..=20.0).contains(&s.mean()), "{}", s.mean());
            assert_eq!(s.mean_hundredths() % 10, 0);
        }
        let longest = stations.iter().map(|s| s.name().len()).max();
        assert!(longest > Some(80), "{longest:?}");
        // The set is fixed: a smaller count is a prefix of a larger one.
        assert_eq!(built(100)[..], stations[..100]);
    }
}

//! The line grammar, parsed strictly and simply.
//!
//! A line is `<name>;<value>`: the name is 1..=100 bytes of UTF-8 without
//! `;` or `\n`, the value matches `-?\d{1,2}\.\d` and is kept as integer
//! tenths. This module is the readable definition of the grammar: the naive
//! engine uses it for every line, and the fast engines use it to diagnose a
//! line their own parser rejected, so every engine reports the same error.

use crate::error::{quoted, ErrorKind};

/// The longest name the grammar allows, in bytes.
pub const MAX_NAME_LEN: usize = 100;

/// Parses a value matching `-?\d{1,2}\.\d` into tenths; `None` otherwise.
pub fn parse_value(bytes: &[u8]) -> Option<i16> {
    let (negative, digits) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, bytes),
    };
    let digit = |b: u8| b.is_ascii_digit().then(|| i16::from(b - b'0'));
    let tenths = match *digits {
        [a, b'.', c] => digit(a)? * 10 + digit(c)?,
        [a, b, b'.', c] => digit(a)? * 100 + digit(b)? * 10 + digit(c)?,
        _ => return None,
    };
    Some(if negative { -tenths } else { tenths })
}

/// Parses one line (without its `\n`) into its name and its value in tenths.
///
/// The name is checked for length and `;` but not for UTF-8: engines check
/// each distinct name once instead of every row (see [`check_name`]).
pub fn parse_line(line: &[u8]) -> Result<(&[u8], i16), ErrorKind> {
    if line.is_empty() {
        return Err(ErrorKind::EmptyLine);
    }
    let Some(semi) = memchr::memchr(b';', line) else {
        return Err(ErrorKind::MissingSemicolon { line: quoted(line) });
    };
    let (name, value) = (&line[..semi], &line[semi + 1..]);
    if name.is_empty() {
        return Err(ErrorKind::EmptyName);
    }
    if name.len() > MAX_NAME_LEN {
        return Err(ErrorKind::NameTooLong { len: name.len() });
    }
    match parse_value(value) {
        Some(tenths) => Ok((name, tenths)),
        None => Err(ErrorKind::InvalidValue {
            value: quoted(value),
        }),
    }
}

/// Checks that a name is valid UTF-8, returning it as a `&str`.
pub fn check_name(name: &[u8]) -> Result<&str, ErrorKind> {
    std::str::from_utf8(name).map_err(|_| ErrorKind::InvalidUtf8 {
        name: name.to_vec(),
    })
}

/// The lines of an input with the offset each starts at. A final line
/// without `\n` is a line; a final `\n` does not start an empty one.
pub fn lines(input: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= input.len() {
            return None;
        }
        let end = memchr::memchr(b'\n', &input[start..]).map_or(input.len(), |i| start + i);
        let line = (start, &input[start..end]);
        start = end + 1;
        Some(line)
    })
}

/// The offset just past the end of the line starting at `start`: after its
/// `\n`, or the end of the input.
pub fn line_end(input: &[u8], start: usize) -> usize {
    memchr::memchr(b'\n', &input[start..]).map_or(input.len(), |i| start + i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_to_tenths() {
        for (text, tenths) in [
            ("0.0", 0),
            ("-0.0", 0),
            ("1.5", 15),
            ("-1.5", -15),
            ("12.3", 123),
            ("-12.3", -123),
            ("99.9", 999),
            ("-99.9", -999),
            ("05.0", 50),
        ] {
            assert_eq!(parse_value(text.as_bytes()), Some(tenths), "{text}");
        }
    }

    #[test]
    fn malformed_values_are_rejected() {
        for text in [
            "", "-", ".", "1", "1.", ".5", "-.5", "12.34", "100.0", "1.0 ", " 1.0", "+1.0", "a.0",
            "1.a", "1,0", "--1.0", "1.0\r", "-100.0", "1..0",
        ] {
            assert_eq!(parse_value(text.as_bytes()), None, "{text:?}");
        }
    }

    #[test]
    fn lines_split_at_newlines() {
        let got: Vec<_> = lines(b"a;1.0\nb;2.0").collect();
        assert_eq!(got, vec![(0, &b"a;1.0"[..]), (6, &b"b;2.0"[..])]);
        let got: Vec<_> = lines(b"a;1.0\n\n").collect();
        assert_eq!(got, vec![(0, &b"a;1.0"[..]), (6, &b""[..])]);
        assert_eq!(lines(b"").count(), 0);
    }

    #[test]
    fn line_faults_are_named() {
        assert_eq!(parse_line(b""), Err(ErrorKind::EmptyLine));
        assert_eq!(parse_line(b";1.0"), Err(ErrorKind::EmptyName));
        assert!(matches!(
            parse_line(b"abc"),
            Err(ErrorKind::MissingSemicolon { .. })
        ));
        assert_eq!(
            parse_line(&[b"x".repeat(101), b";1.0".to_vec()].concat()),
            Err(ErrorKind::NameTooLong { len: 101 })
        );
        assert!(matches!(
            parse_line(b"a;1.0;2.0"),
            Err(ErrorKind::InvalidValue { .. })
        ));
        // Names may hold anything but `;` and `\n`.
        assert_eq!(
            parse_line(b"a=b, {\"c\"}\t;-0.1"),
            Ok((&b"a=b, {\"c\"}\t"[..], -1))
        );
        assert_eq!(
            check_name(b"\xff"),
            Err(ErrorKind::InvalidUtf8 { name: vec![0xff] })
        );
    }
}

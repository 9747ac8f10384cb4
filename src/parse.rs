//! The line grammar, parsed strictly and simply.
//!
//! A line is `<name>;<value>`: the name is 1..=100 bytes of UTF-8 without
//! `;` or `\n`, the value matches `-?\d{1,2}\.\d` and is kept as integer
//! tenths. This module is the readable definition of the grammar: the naive
//! engine uses it for every line, and the fast engines use it to diagnose a
//! line their own parser rejected, so every engine reports the same error.
//!
//! It also says how much of a line that verdict needs ([`LineHead`]): a
//! malformed line may be gigabytes long without a `\n`, and no reader may
//! hold it whole.

use crate::error::{quoted, ErrorKind, Fault, QUOTED_LEN};

/// The longest name the grammar allows, in bytes.
pub const MAX_NAME_LEN: usize = 100;

/// The longest valid measurement line (a row) without its `\n`, in
/// bytes: a name of [`MAX_NAME_LEN`] bytes, `;` and `-99.9`. A longer line
/// is malformed whatever it holds. (A partial's lines have their own
/// bound, `partial::MAX_LINE_LEN`.)
pub(crate) const MAX_ROW_LEN: usize = MAX_NAME_LEN + 1 + 5;

/// How much of a line's start decides [`parse_line`]'s verdict on it: a
/// name of at most [`MAX_NAME_LEN`] bytes, its `;`, and as much of the value
/// as an error quotes ([`QUOTED_LEN`]). On a line longer than this, the
/// verdict on these bytes alone is the verdict on the whole line, except
/// when they hold no `;`: then it depends on whether one comes later (a
/// name too long) or not (no `;`). [`LineHead`] keeps exactly that.
pub(crate) const HEAD_LEN: usize = MAX_NAME_LEN + 1 + QUOTED_LEN;

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

/// A line read in pieces, keeping only what [`parse_line`]'s verdict on it
/// depends on: its first [`HEAD_LEN`] bytes and, if they hold no `;`, where
/// the first `;` after them is. A line of any length is judged in bounded
/// memory, exactly as `parse_line` judges it whole; a line that fits in the
/// head costs one search for its `\n`, like reading it whole.
#[derive(Clone, Debug, Default)]
pub(crate) struct LineHead {
    head: Vec<u8>,
    len: usize,
    /// The first `;` after the head, when the head holds none.
    far_semi: Option<usize>,
}

impl LineHead {
    /// Forgets the line, to read another.
    pub(crate) fn clear(&mut self) {
        self.head.clear();
        self.len = 0;
        self.far_semi = None;
    }

    /// Reads the line on through `bytes`, which continue what was read of
    /// it so far: up to its `\n`, whose index in `bytes` is returned, or
    /// through all of `bytes` (`None`) if the line goes on after them.
    pub(crate) fn extend(&mut self, bytes: &[u8]) -> Option<usize> {
        let end = memchr::memchr(b'\n', bytes);
        let line = &bytes[..end.unwrap_or(bytes.len())];
        let (kept, beyond) = line.split_at(line.len().min(HEAD_LEN - self.head.len()));
        self.head.extend_from_slice(kept);
        if !beyond.is_empty() && self.far_semi.is_none() && !self.head.contains(&b';') {
            let after = self.len + kept.len();
            self.far_semi = memchr::memchr(b';', beyond).map(|i| after + i);
        }
        self.len += line.len();
        end
    }

    /// Whether the rest of the line, whatever it holds, can no longer
    /// change the verdict: the head is full and a `;` has been seen.
    pub(crate) fn decided(&self) -> bool {
        self.head.len() == HEAD_LEN && (self.far_semi.is_some() || self.head.contains(&b';'))
    }

    /// [`parse_line`]'s verdict on the line read so far (on the whole line,
    /// once its end or [`decided`](LineHead::decided)).
    pub(crate) fn parse(&self) -> Result<(&[u8], i16), ErrorKind> {
        match self.far_semi {
            // Only the name's length is left to say.
            Some(semi) => Err(ErrorKind::NameTooLong { len: semi }),
            None => parse_line(&self.head),
        }
    }
}

/// Checks that a name is valid UTF-8, returning it as a `&str`.
pub(crate) fn check_name(name: &[u8]) -> Result<&str, ErrorKind> {
    std::str::from_utf8(name).map_err(|_| ErrorKind::InvalidUtf8 {
        name: name.to_vec(),
    })
}

/// `parsed`, what feeding `lines` (whole lines, the first at rank
/// `offset` of the input) gave, unless a line before where it stopped is
/// not UTF-8: then that line's fault, its own parse fault if it has one,
/// else its name's. For a feed that does not check names itself.
pub(crate) fn with_utf8_checked(
    lines: &[u8],
    offset: usize,
    parsed: Result<(), Fault>,
) -> Result<(), Fault> {
    let checked = match &parsed {
        Ok(()) => lines.len(),
        Err(f) => f.offset - offset,
    };
    // simdutf8 validates at memory speed with AVX2 where std's check
    // showed in the pipe path's profile (docs/PERFORMANCE.md, *How data
    // flows*); std finds the bad byte, rarely.
    if simdutf8::basic::from_utf8(&lines[..checked]).is_ok() {
        return parsed;
    }
    let Err(e) = std::str::from_utf8(&lines[..checked]) else {
        return parsed;
    };
    // The line holding the first invalid byte; ASCII `;` and `\n` never
    // occur inside a multi-byte character, so lines are checked on their
    // own.
    let bad = e.valid_up_to();
    let start = memchr::memrchr(b'\n', &lines[..bad]).map_or(0, |i| i + 1);
    let (line, _) = line_at(lines, start);
    let kind = match parse_line(line) {
        Err(kind) => kind,
        // The line parses, so the invalid byte is in its name.
        Ok((name, _)) => ErrorKind::InvalidUtf8 {
            name: name.to_vec(),
        },
    };
    Err(Fault {
        offset: offset + start,
        kind,
    })
}

/// The lines of an input with the offset each starts at, as
/// [`line_at`] gives them: a final line without `\n` is a line, a final
/// `\n` does not start an empty one, and a line longer than [`HEAD_LEN`]
/// is cut there and ends the iteration.
pub fn lines(input: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= input.len() {
            return None;
        }
        let (line, next) = line_at(input, start);
        let item = (start, line);
        start = next;
        Some(item)
    })
}

/// The line starting at `start`, without its `\n`, and where the next one
/// starts: after the `\n`, or at the end of the input.
///
/// A line longer than [`HEAD_LEN`] bytes is cut to them, and the next line
/// is said to start at the end of the input. Such a line is malformed,
/// nothing after it counts, and its head gives [`parse_line`]'s verdict on
/// it unless the head holds no `;` (see [`HEAD_LEN`]); reading no further
/// keeps the engines from scanning, and a mapped file from paging in, a
/// line of any length.
pub fn line_at(input: &[u8], start: usize) -> (&[u8], usize) {
    let rest = &input[start..];
    let window = &rest[..rest.len().min(HEAD_LEN + 1)];
    match memchr::memchr(b'\n', window) {
        Some(i) => (&rest[..i], start + i + 1),
        None => (&rest[..rest.len().min(HEAD_LEN)], input.len()),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

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
    fn a_line_longer_than_its_head_is_cut_and_ends_the_lines() {
        let long = [&b"a;1.0\n"[..], &[b'x'; HEAD_LEN + 1], b"\nb;2.0\n"].concat();
        let got: Vec<_> = lines(&long).collect();
        assert_eq!(got, vec![(0, &b"a;1.0"[..]), (6, &long[6..6 + HEAD_LEN])]);
        assert_eq!(line_at(&long, 6), (&long[6..6 + HEAD_LEN], long.len()));
        // A line of exactly HEAD_LEN bytes is whole.
        let exact = [&[b'x'; HEAD_LEN][..], b"\nb;2.0"].concat();
        assert_eq!(line_at(&exact, 0), (&exact[..HEAD_LEN], HEAD_LEN + 1));
        assert_eq!(
            line_at(&exact[..HEAD_LEN], 0),
            (&exact[..HEAD_LEN], HEAD_LEN)
        );
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

    /// `line` (no `\n`) read in pieces of `sizes`, in turn, with a `\n`
    /// and more after it: the bytes taken, and whether the end was found.
    fn read_in_pieces(line: &[u8], sizes: &[usize]) -> (LineHead, usize, bool) {
        let input = [line, b"\nnext;1.0\n"].concat();
        let mut head = LineHead::default();
        let (mut pos, mut turn) = (0, 0);
        while pos < input.len() {
            let end = input
                .len()
                .min(pos.saturating_add(sizes[turn % sizes.len()]));
            turn += 1;
            if let Some(i) = head.extend(&input[pos..end]) {
                return (head, pos + i, true);
            }
            pos = end;
        }
        (head, pos, false)
    }

    #[test]
    fn a_head_judges_long_lines_as_the_whole_line_is_judged() {
        let long = |n: usize| "x".repeat(n);
        for line in [
            format!("{};1.0", long(100)),
            format!("{};1.0", long(101)),
            format!("{};1.0", long(HEAD_LEN + 1)),
            format!("{};1.0", long(1 << 20)),
            long(1 << 20),
            format!(";{}", long(1 << 20)),
            format!("a;{}", long(1 << 20)),
            format!("{};{}", long(100), long(1 << 20)),
            format!("{};{}", long(99), long(HEAD_LEN)),
            format!("{}{}", "é".repeat(200), ";1.0"),
        ] {
            let whole = parse_line(line.as_bytes());
            for sizes in [&[1][..], &[7, 1], &[HEAD_LEN], &[1 << 16], &[usize::MAX]] {
                let (head, end, ended) = read_in_pieces(line.as_bytes(), sizes);
                assert!(ended);
                assert_eq!(end, line.len());
                assert_eq!(head.parse(), whole, "{sizes:?}");
            }
        }
    }

    #[test]
    fn a_head_is_decided_once_full_with_a_semicolon_seen() {
        let mut head = LineHead::default();
        assert_eq!(head.extend(&b"x".repeat(HEAD_LEN)), None);
        assert!(!head.decided(), "a `;` may still come");
        assert_eq!(head.extend(b"xx;"), None);
        assert!(head.decided());
        let len = HEAD_LEN + 2;
        assert_eq!(head.parse(), Err(ErrorKind::NameTooLong { len }));
        // A short line is judged when its `\n` comes, and may be valid.
        head.clear();
        assert_eq!(head.extend(b"a;1.0\nb"), Some(5));
        assert!(!head.decided());
        assert_eq!(head.parse(), Ok((&b"a"[..], 10)));
        // An empty line, and the end of the input with nothing read.
        head.clear();
        assert_eq!(head.extend(b"\n"), Some(0));
        assert_eq!(head.parse(), Err(ErrorKind::EmptyLine));
    }

    proptest! {
        /// Lines of up to 400 bytes with up to three `;` anywhere, so that
        /// the first one falls inside the head, just after it, or far on.
        #[test]
        fn a_head_agrees_with_parse_line(
            mut line in prop::collection::vec(
                prop::sample::select(&b"x9.-\xc3\xa9"[..]),
                0..400,
            ),
            semis in prop::collection::vec(any::<prop::sample::Index>(), 0..4),
            sizes in prop::collection::vec(1..200usize, 1..4),
        ) {
            for at in semis {
                let at = at.index(line.len() + 1);
                line.insert(at, b';');
            }
            let (head, end, ended) = read_in_pieces(&line, &sizes);
            prop_assert!(ended);
            prop_assert_eq!(end, line.len());
            prop_assert_eq!(head.parse(), parse_line(&line));
        }
    }
}

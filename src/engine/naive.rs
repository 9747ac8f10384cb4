//! The reference engine: the simplest code that is obviously right.
//!
//! One thread reading line by line from any buffered reader (a byte slice,
//! a file, a pipe), the strict parser of [`crate::parse`] on every line,
//! UTF-8 checked on every line, a `HashMap<String, Stats>`, and the line
//! number counted as it goes. It is the oracle all other engines are tested
//! against, so it stays this plain. Lines are read through a
//! [`LineHead`], so that a malformed line of any length is judged without
//! being held whole.

use std::collections::HashMap;
use std::io::{self, BufRead};

use crate::detail::Kept;
use crate::error::{DataError, Error};
use crate::parse::{self, LineHead};
use crate::stats::Stats;
use crate::summary::Summary;

/// Aggregates `input` line by line, each key keeping what `kept` says.
pub(crate) fn aggregate(mut input: impl BufRead, kept: Kept) -> Result<Summary, Error> {
    let mut map: HashMap<String, Stats> = HashMap::new();
    let mut line = LineHead::default();
    let (mut number, mut offset) = (0, 0);
    loop {
        let len = read_line(&mut input, &mut line)?;
        if len == 0 {
            break;
        }
        number += 1;
        let fault = |kind| DataError {
            line: number,
            offset,
            kind,
        };
        let (name, value) = line.parse().map_err(fault)?;
        let name = parse::check_name(name).map_err(fault)?;
        match map.get_mut(name) {
            Some(stats) => stats.add(value),
            None => {
                map.insert(name.to_string(), Stats::keeping(kept, value.into()));
            }
        }
        offset += len as u64;
    }
    let summary: Summary = map.into_iter().collect();
    Ok(summary.keeping(kept))
}

/// Reads the next line into `line` and returns the bytes it took, `\n`
/// included (0 at the end of the input). Stops inside a line too long to be
/// valid once its verdict is known: nothing after a malformed line counts.
fn read_line(input: &mut impl BufRead, line: &mut LineHead) -> io::Result<usize> {
    line.clear();
    let mut taken = 0;
    loop {
        let bytes = match input.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if bytes.is_empty() {
            return Ok(taken);
        }
        let (used, ended) = match line.extend(bytes) {
            Some(i) => (i + 1, true),
            None => (bytes.len(), false),
        };
        input.consume(used);
        taken += used;
        if ended || line.decided() {
            return Ok(taken);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;
    use crate::error::ErrorKind;

    /// A reader of `len` bytes of `byte`, then `tail`, never holding more
    /// than one small buffer: a line far longer than anything kept.
    fn long_line(byte: u8, len: usize, tail: &'static [u8]) -> impl BufRead {
        io::BufReader::with_capacity(4096, io::repeat(byte).take(len as u64).chain(tail))
    }

    #[test]
    fn a_line_of_any_length_is_judged_as_parse_line_judges_it() {
        let len = 1 << 20;
        let cases: [(u8, &[u8], ErrorKind); 3] = [
            (
                b'x',
                b"",
                ErrorKind::MissingSemicolon {
                    line: vec![b'x'; 41],
                },
            ),
            (b'x', b";1.0\n", ErrorKind::NameTooLong { len }),
            (b';', b"\n", ErrorKind::EmptyName),
        ];
        for (byte, tail, kind) in cases {
            match aggregate(long_line(byte, len, tail), Kept::Basic) {
                Err(Error::Data(e)) => assert_eq!((e.line, e.kind), (1, kind)),
                other => panic!("expected {kind:?}, got {other:?}"),
            }
        }
    }

    #[test]
    fn a_long_line_is_read_only_until_its_verdict_is_known() {
        // Its first HEAD_LEN bytes, `;` among them, decide it: the endless
        // rest is never read.
        let mut input = io::BufReader::with_capacity(
            64,
            io::Cursor::new(b"a;1.0\na;".to_vec()).chain(io::repeat(b'7')),
        );
        let mut line = LineHead::default();
        assert_eq!(read_line(&mut input, &mut line).unwrap(), 6);
        let taken = read_line(&mut input, &mut line).unwrap();
        assert!(line.decided());
        assert!((parse::HEAD_LEN..parse::HEAD_LEN + 64).contains(&taken));
    }
}

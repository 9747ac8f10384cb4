//! A partial's lines and their fields: the lines read one at a time, at
//! most a version's longest of each; each row's fields unquoted as RFC 4180
//! says; the integers in them in their one canonical form.

use std::borrow::Cow;
use std::io::{BufRead, Read};
use std::ops::RangeInclusive;

use super::line::{LineError, MAX_LINE_LEN};
use super::PartialError;
use crate::error::quoted;

/// Makes a line's [`LineError`] a [`PartialError`] at line `n`.
pub(super) fn at(n: u64) -> impl Fn(LineError) -> PartialError {
    move |kind| PartialError::Line { line: n, kind }
}

/// An input's lines, read one at a time and at most [`MAX_LINE_LEN`]
/// bytes of each.
pub(super) struct Lines<R> {
    reader: R,
    line: Vec<u8>,
    number: u64,
}

impl<R: BufRead> Lines<R> {
    /// The lines of `reader`, none read yet.
    pub(super) fn new(reader: R) -> Lines<R> {
        Lines {
            reader,
            line: Vec::new(),
            number: 0,
        }
    }

    /// The next line's number and the line without its line break (`\n`
    /// or `\r\n`), or `None` at the end of the input.
    pub(super) fn next(&mut self) -> Result<(u64, Option<&[u8]>), PartialError> {
        self.next_within(MAX_LINE_LEN)
    }

    /// [`Lines::next`], for a line of at most `max` bytes.
    pub(super) fn next_within(&mut self, max: usize) -> Result<(u64, Option<&[u8]>), PartialError> {
        self.number += 1;
        self.line.clear();
        // The longest line, `\r` and `\n`.
        let limit = max as u64 + 2;
        let read = (&mut self.reader)
            .take(limit)
            .read_until(b'\n', &mut self.line)?;
        if read == 0 {
            return Ok((self.number, None));
        }
        if self.line.pop() != Some(b'\n') {
            let kind = match read as u64 {
                n if n == limit => LineError::TooLong { limit: max },
                _ => LineError::MissingNewline,
            };
            return Err(at(self.number)(kind));
        }
        if self.line.last() == Some(&b'\r') {
            self.line.pop();
        }
        if self.line.len() > max {
            return Err(at(self.number)(LineError::TooLong { limit: max }));
        }
        Ok((self.number, Some(&self.line)))
    }
}

/// A row's fields, unquoted as RFC 4180 says.
pub(super) fn fields(line: &[u8]) -> Result<Vec<Cow<'_, [u8]>>, LineError> {
    let mut fields = Vec::with_capacity(5);
    let mut rest = line;
    loop {
        let (field, after) = match rest.strip_prefix(b"\"") {
            Some(inside) => {
                let mut field = Vec::new();
                let mut i = 0;
                loop {
                    let Some(q) = memchr::memchr(b'"', &inside[i..]) else {
                        return Err(LineError::Unclosed);
                    };
                    field.extend_from_slice(&inside[i..i + q]);
                    i += q + 1;
                    if inside.get(i) != Some(&b'"') {
                        break;
                    }
                    field.push(b'"');
                    i += 1;
                }
                let after = &inside[i..];
                if after.first().is_some_and(|&b| b != b',') {
                    return Err(LineError::AfterQuote {
                        found: quoted(after),
                    });
                }
                (Cow::Owned(field), after)
            }
            None => {
                let end = memchr::memchr(b',', rest).unwrap_or(rest.len());
                let field = &rest[..end];
                if field.contains(&b'"') {
                    return Err(LineError::StrayQuote {
                        found: quoted(field),
                    });
                }
                (Cow::Borrowed(field), &rest[end..])
            }
        };
        fields.push(field);
        match after.split_first() {
            Some((_comma, next)) => rest = next,
            None => return Ok(fields),
        }
    }
}

/// An integer field in canonical form (`0`, or an optional `-` and digits
/// without a leading zero) within `range`.
pub(super) fn integer(
    field: &[u8],
    name: &'static str,
    range: RangeInclusive<i128>,
) -> Result<i128, LineError> {
    let digits = field.strip_prefix(b"-").unwrap_or(field);
    let canonical = match digits {
        [b'0'] => digits.len() == field.len(),
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if !canonical {
        return Err(LineError::NotInteger {
            field: name,
            found: quoted(field),
        });
    }
    // ASCII digits, at most MAX_LINE_LEN of them: parsing fails only if
    // the value is beyond i128, and then it is beyond every range too.
    let value = std::str::from_utf8(field).ok().and_then(|s| s.parse().ok());
    value
        .filter(|v| range.contains(v))
        .ok_or_else(|| LineError::Range {
            field: name,
            min: *range.start(),
            max: *range.end(),
            found: quoted(field),
        })
}

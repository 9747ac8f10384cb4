//! A delimited file's value cell as an exact decimal: digits, a scale, and
//! the grammar brc accepts.
//!
//! Accepted: an optional sign, digits with at most one `.` (`23.456`,
//! `-0.5`, `+7`, `.5`, `1.`), and an optional exponent (`1.5e3`,
//! `25E-2`), which only moves the point, so every value is an exact
//! decimal. At most 18 significant digits and 9 digits after the point
//! once the exponent is applied: the range of a `DECIMAL(18, s)`.

use crate::stats::{MAX_DIGITS, MAX_SCALE};

/// A value: `units` × 10^-`scale`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decimal {
    /// The digits, signed.
    pub units: i64,
    /// Digits after the point, 0..=[`MAX_SCALE`].
    pub scale: u32,
}

/// Why a cell is not a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Not a decimal number at all.
    Syntax,
    /// More than [`MAX_DIGITS`] significant digits.
    Digits,
    /// More than [`MAX_SCALE`] digits after the point.
    Scale,
}

impl Refusal {
    /// What was expected, for an error message.
    pub fn expected(self) -> String {
        match self {
            Refusal::Syntax => "a decimal number like `-12.345`".into(),
            Refusal::Digits => format!("a number of at most {MAX_DIGITS} significant digits"),
            Refusal::Scale => format!("a number of at most {MAX_SCALE} digits after the point"),
        }
    }
}

/// Parses `cell`, quotes removed and the spaces and tabs around it
/// trimmed, as a decimal.
#[inline(always)]
pub(super) fn parse(cell: &[u8]) -> Result<Decimal, Refusal> {
    quick(cell).map_or_else(|| general(cell), Ok)
}

/// The usual value, `-?digits[.digits]` with at most 18 digits: up to 8
/// bytes after the sign by word operations ([`eight`]), more in one pass
/// with one test a byte ([`digits`]); `None` for anything else, which
/// [`general`] then reads or refuses.
#[inline(always)]
pub(super) fn quick(cell: &[u8]) -> Option<Decimal> {
    let (negative, rest) = match cell.first() {
        Some(b'-') => (true, &cell[1..]),
        _ => (false, cell),
    };
    if rest.is_empty() || rest.len() > MAX_DIGITS as usize {
        return None;
    }
    // A lone `.` has no digit.
    if rest == b"." {
        return None;
    }
    let (digits, scale) = if rest.len() <= 8 {
        eight(rest)?
    } else {
        digits(rest)?
    };
    let units = digits as i64;
    Some(Decimal {
        units: if negative { -units } else { units },
        scale,
    })
}

/// Eight `0` bytes.
const ZEROS: u64 = u64::from_le_bytes([b'0'; 8]);

/// `rest` (1 to 8 bytes), digits with at most one `.`, as its digits and
/// their scale: the bytes right-aligned in a word over `0`s, the `.`
/// taken out by moving the bytes before it up one, every byte checked to
/// be a digit at once, and the eight digits combined in three multiplies.
/// A cell of the usual values takes no branch per byte.
#[inline(always)]
fn eight(rest: &[u8]) -> Option<(u64, u32)> {
    let mut w = over_zeros(rest);
    let mut scale = 0;
    let dot = crate::bits::matches(w, b'.');
    if dot != 0 {
        // The lowest `.` (a second one stays, and fails the digit check),
        // as its byte's high bit: the bytes below and above it follow
        // without a shift by its place.
        let low = dot & dot.wrapping_neg();
        scale = 7 - dot.trailing_zeros() / 8;
        let below = (low >> 7) - 1;
        let above = !(low << 1).wrapping_sub(1);
        w = (w & below) << 8 | (w & above) | u64::from(b'0');
    }
    // Every byte 0x30..=0x39: its high half 3, and adding 6 leaves it so.
    const HIGH: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    let six = 0x0606_0606_0606_0606;
    if w & HIGH != ZEROS & HIGH || w.wrapping_add(six) & HIGH != ZEROS & HIGH {
        return None;
    }
    // Byte 0 is the most significant digit: pairs, then fours, then all.
    let d = w - ZEROS;
    let d = (d.wrapping_mul(10) + (d >> 8)) & 0x00FF_00FF_00FF_00FF;
    let d = (d.wrapping_mul(100) + (d >> 16)) & 0x0000_FFFF_0000_FFFF;
    let d = (d.wrapping_mul(10_000) + (d >> 32)) & 0xFFFF_FFFF;
    Some((d, scale))
}

/// `rest` (1 to 8 bytes) as a little-endian word, its bytes at the top
/// over `0`s: read by two overlapping loads (three byte loads below 4
/// bytes) put in place by one shift each, the `0`s below from a table,
/// where copying it into a buffer of `0`s and reading that back stalled
/// on the store's forwarding.
#[inline(always)]
fn over_zeros(rest: &[u8]) -> u64 {
    let n = rest.len();
    let bytes = match n {
        4.. => {
            let half =
                |i: usize| u64::from(u32::from_le_bytes(rest[i..i + 4].try_into().expect("4")));
            // The last four bytes at the top; the first four below them,
            // overlapping them where `n` is under 8.
            half(n - 4) << 32 | half(0) << (8 * (8 - n))
        }
        _ => {
            let byte = |i: usize| u64::from(rest[i]) << (8 * (8 - n + i));
            byte(0) | byte(n / 2) | byte(n - 1)
        }
    };
    bytes | BELOW[n]
}

/// For each length up to 8, `0`s in the bytes of a word below a value of
/// that many bytes at its top.
const BELOW: [u64; 9] = {
    let mut below = [0; 9];
    let mut n = 0;
    while n < 8 {
        below[n] = ZEROS >> (8 * n);
        n += 1;
    }
    below
};

/// `rest`, digits with at most one `.` and at most 18 digits, as its
/// digits and their scale, in one pass with one test a byte; `None` past
/// 9 decimals, which [`general`] refuses and says so.
fn digits(rest: &[u8]) -> Option<(u64, u32)> {
    let mut digits: u64 = 0;
    let mut dot = None;
    for (i, &b) in rest.iter().enumerate() {
        let d = b.wrapping_sub(b'0');
        if d < 10 {
            digits = digits * 10 + u64::from(d);
        } else if b == b'.' && dot.is_none() {
            dot = Some(i);
        } else {
            return None;
        }
    }
    let scale = dot.map_or(0, |i| rest.len() - i - 1) as u32;
    (scale <= MAX_SCALE).then_some((digits, scale))
}

/// Every accepted form, and the reason for refusing the others.
fn general(cell: &[u8]) -> Result<Decimal, Refusal> {
    let (negative, rest) = match cell.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, cell),
    };
    let mut digits: u64 = 0;
    let mut significant = 0u32;
    let mut seen = false;
    let mut fraction: Option<u32> = None;
    let mut i = 0;
    while i < rest.len() {
        match rest[i] {
            d @ b'0'..=b'9' => {
                seen = true;
                if let Some(f) = &mut fraction {
                    *f += 1;
                }
                if significant > 0 || d != b'0' {
                    significant += 1;
                    if significant > MAX_DIGITS {
                        return Err(Refusal::Digits);
                    }
                }
                digits = digits * 10 + u64::from(d - b'0');
            }
            b'.' if fraction.is_none() => fraction = Some(0),
            b'e' | b'E' => break,
            _ => return Err(Refusal::Syntax),
        }
        i += 1;
    }
    if !seen {
        return Err(Refusal::Syntax);
    }
    let exponent = match rest.get(i) {
        None => 0,
        Some(_) => exponent(&rest[i + 1..]).ok_or(Refusal::Syntax)?,
    };
    // The digits' scale once the exponent has moved the point.
    let scale = i64::from(fraction.unwrap_or(0)) - exponent;
    let (digits, scale) = if scale < 0 {
        // Zeros appended: they count as significant digits.
        let grown = 10u64
            .checked_pow(u32::try_from(-scale).map_err(|_| Refusal::Digits)?)
            .and_then(|p| digits.checked_mul(p))
            .filter(|&d| d < 10u64.pow(MAX_DIGITS));
        (grown.ok_or(Refusal::Digits)?, 0)
    } else {
        (digits, scale)
    };
    if scale > i64::from(MAX_SCALE) {
        return Err(Refusal::Scale);
    }
    let units = digits as i64;
    Ok(Decimal {
        units: if negative { -units } else { units },
        scale: scale as u32,
    })
}

/// An exponent's digits, with an optional sign: at most 4 digits.
fn exponent(s: &[u8]) -> Option<i64> {
    let (negative, digits) = match s.split_first()? {
        (b'-', rest) => (true, rest),
        (b'+', rest) => (false, rest),
        _ => (false, s),
    };
    if digits.is_empty() || digits.len() > 4 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let e = digits
        .iter()
        .fold(0i64, |e, d| e * 10 + i64::from(d - b'0'));
    Some(if negative { -e } else { e })
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Cells of digits, points, signs and exponents: what the quick
        /// path reads, the general grammar reads the same; the usual
        /// values, up to 18 digits, all take the quick path.
        #[test]
        fn the_quick_path_reads_as_the_general_grammar(
            cell in "[-+]?[0-9.eE]{0,20}",
            usual in "-?[0-9]{1,9}(\\.[0-9]{0,8})?",
        ) {
            if let Some(q) = quick(cell.as_bytes()) {
                proptest::prop_assert_eq!(Ok(q), general(cell.as_bytes()), "{}", cell);
            }
            proptest::prop_assert!(quick(usual.as_bytes()).is_some(), "{}", usual);
            proptest::prop_assert_eq!(
                quick(usual.as_bytes()).ok_or(Refusal::Syntax),
                general(usual.as_bytes()),
                "{}", usual
            );
        }
    }

    fn d(units: i64, scale: u32) -> Result<Decimal, Refusal> {
        Ok(Decimal { units, scale })
    }

    #[test]
    fn the_accepted_forms_are_exact() {
        for (cell, want) in [
            ("23.456", d(23456, 3)),
            ("-0.5", d(-5, 1)),
            ("+7", d(7, 0)),
            (".5", d(5, 1)),
            ("1.", d(1, 0)),
            ("-.25", d(-25, 2)),
            (" 12.0 ", d(120, 1)),
            ("1.5e3", d(1500, 0)),
            ("25E-2", d(25, 2)),
            ("1e+2", d(100, 0)),
            ("0.000000001", d(1, 9)),
            ("999999999999999999", d(999_999_999_999_999_999, 0)),
            ("0000000000000000000001.5", d(15, 1)),
            ("-0", d(0, 0)),
        ] {
            assert_eq!(parse(cell.as_bytes().trim_ascii()), want, "{cell}");
        }
    }

    #[test]
    fn everything_else_is_refused_with_its_reason() {
        for (cell, want) in [
            ("", Refusal::Syntax),
            ("-", Refusal::Syntax),
            (".", Refusal::Syntax),
            ("1.2.3", Refusal::Syntax),
            ("1e", Refusal::Syntax),
            ("e5", Refusal::Syntax),
            ("0x10", Refusal::Syntax),
            ("inf", Refusal::Syntax),
            ("1 2", Refusal::Syntax),
            ("--1", Refusal::Syntax),
            ("1e99999", Refusal::Syntax),
            ("1234567890123456789", Refusal::Digits),
            ("1e18", Refusal::Digits),
            ("0.0000000001", Refusal::Scale),
            ("1e-10", Refusal::Scale),
        ] {
            assert_eq!(parse(cell.as_bytes()), Err(want), "{cell}");
        }
    }
}

//! A value column's numbers as exact tenths: which physical and logical
//! types brc reads, and the rule that turns each into tenths or refuses it.

use parquet::basic::{LogicalType, Type as Physical};
use parquet::schema::types::ColumnDescriptor;

use crate::stats::VALUE_LIMIT;

/// How a value column stores its numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `DOUBLE`: each must be the double nearest to a number of tenths.
    Double,
    /// `FLOAT`: each must be the float nearest to a number of tenths.
    Float,
    /// `INT32` or `INT64`, plain or a decimal: the integer is the value
    /// times 10^`scale`.
    Int { scale: u32, unsigned: bool },
    /// A decimal as big-endian two's complement bytes (`FIXED_LEN_BYTE_ARRAY`
    /// or `BYTE_ARRAY`), the value times 10^`scale`.
    Bytes { scale: u32 },
}

impl Kind {
    /// The kind of `column`, or what it is if brc cannot read it as values.
    pub(crate) fn of(column: &ColumnDescriptor) -> Result<Kind, String> {
        let logical = column.logical_type_ref();
        let scale = match logical {
            Some(LogicalType::Decimal(d)) => Some(d.scale),
            _ => None,
        };
        let unsigned = matches!(logical, Some(LogicalType::Integer(i)) if !i.is_signed);
        let plain = matches!(logical, None | Some(LogicalType::Integer { .. }));
        let kind = match (column.physical_type(), scale) {
            (Physical::DOUBLE, None) if logical.is_none() => Kind::Double,
            (Physical::FLOAT, None) if logical.is_none() => Kind::Float,
            (Physical::INT32 | Physical::INT64, None) if plain => Kind::Int { scale: 0, unsigned },
            (Physical::INT32 | Physical::INT64, Some(s)) if s >= 0 => Kind::Int {
                scale: s as u32,
                unsigned: false,
            },
            (Physical::FIXED_LEN_BYTE_ARRAY | Physical::BYTE_ARRAY, Some(s)) if s >= 0 => {
                Kind::Bytes { scale: s as u32 }
            }
            (physical, _) => {
                return Err(match logical {
                    Some(l) => format!("{physical} ({l:?})"),
                    None => physical.to_string(),
                })
            }
        };
        Ok(kind)
    }
}

/// A double or float as tenths, if it is the one nearest to a number of
/// tenths within [`VALUE_LIMIT`] (NaN and infinities are not).
///
/// `t / 10` computed in `f64` is the double nearest to the exact tenths
/// (one correctly rounded division of exact operands), so comparing the
/// value with it decides exactly. A float is compared with that double
/// rounded to `f32`: `t / 10` is never a dyadic number unless `t` is a
/// multiple of 10 (then the double is exact), so the double lies far
/// closer to it than to any halfway point between floats and rounding
/// twice gives the nearest float.
pub(crate) fn tenths_of_float(x: f64, float: bool) -> Option<i64> {
    let t = (x * 10.0).round();
    if t.is_nan() || t.abs() > VALUE_LIMIT as f64 {
        return None;
    }
    let t = t as i64;
    let nearest = t as f64 / 10.0;
    let exact = if float {
        nearest as f32 == x as f32
    } else {
        nearest == x
    };
    exact.then_some(t)
}

/// An integer that is the value times 10^`scale` as tenths, if it is a
/// whole number of tenths within [`VALUE_LIMIT`].
pub(crate) fn tenths_of_scaled(v: i128, scale: u32) -> Option<i64> {
    let t = match scale {
        0 => v.checked_mul(10)?,
        1 => v,
        s => {
            let d = 10i128.checked_pow(s - 1)?;
            if v % d != 0 {
                return None;
            }
            v / d
        }
    };
    (t.abs() <= i128::from(VALUE_LIMIT)).then_some(t as i64)
}

/// A big-endian two's complement integer of up to 16 bytes.
pub(crate) fn be_integer(bytes: &[u8]) -> Option<i128> {
    if bytes.is_empty() || bytes.len() > 16 {
        return None;
    }
    let fill = if bytes[0] & 0x80 != 0 { 0xff } else { 0 };
    let mut b = [fill; 16];
    b[16 - bytes.len()..].copy_from_slice(bytes);
    Some(i128::from_be_bytes(b))
}

/// A scaled integer written as the decimal it stands for, for messages.
pub(crate) fn show_scaled(v: i128, scale: u32) -> String {
    if scale == 0 {
        return v.to_string();
    }
    let digits = v.unsigned_abs().to_string();
    let s = scale as usize;
    let digits = format!("{digits:0>width$}", width = s + 1);
    let (int, frac) = digits.split_at(digits.len() - s);
    format!("{}{int}.{frac}", if v < 0 { "-" } else { "" })
}

/// A value as a page stores it, before the rule of its [`Kind`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Raw {
    /// A `DOUBLE`, or a `FLOAT` widened.
    Float(f64),
    /// An integer or a decimal's unscaled integer.
    Int(i128),
}

impl Raw {
    /// A 32-bit integer, as stored (`unsigned`: its bits are a `u32`'s).
    pub(crate) fn int32(v: i32, unsigned: bool) -> Raw {
        Raw::Int(if unsigned {
            i128::from(v as u32)
        } else {
            i128::from(v)
        })
    }

    /// A 64-bit integer, as stored (`unsigned`: its bits are a `u64`'s).
    pub(crate) fn int64(v: i64, unsigned: bool) -> Raw {
        Raw::Int(if unsigned {
            i128::from(v as u64)
        } else {
            i128::from(v)
        })
    }

    /// A decimal's unscaled integer as big-endian bytes; one of more than
    /// 16 bytes stands as a value beyond any range.
    pub(crate) fn decimal(bytes: &[u8]) -> Raw {
        Raw::Int(be_integer(bytes).unwrap_or(i128::MAX))
    }

    /// The value in tenths, if `kind`'s rule accepts it.
    pub(crate) fn tenths(self, kind: Kind) -> Option<i64> {
        match (self, kind) {
            (Raw::Float(x), Kind::Double) => tenths_of_float(x, false),
            (Raw::Float(x), Kind::Float) => tenths_of_float(x, true),
            (Raw::Int(v), Kind::Int { scale, .. } | Kind::Bytes { scale }) => {
                tenths_of_scaled(v, scale)
            }
            _ => None,
        }
    }

    /// The value as a message shows it.
    pub(crate) fn show(self, kind: Kind) -> String {
        match (self, kind) {
            (Raw::Float(x), Kind::Float) => (x as f32).to_string(),
            (Raw::Float(x), _) => x.to_string(),
            (Raw::Int(v), Kind::Int { scale, .. } | Kind::Bytes { scale }) => show_scaled(v, scale),
            (Raw::Int(v), _) => v.to_string(),
        }
    }
}

/// Decodes `n` values of a `PLAIN`-encoded page of `physical` values (of
/// `type_length` bytes if fixed-length), as [`Raw`]s of `kind`.
pub(crate) fn plain(
    buf: &[u8],
    n: usize,
    physical: Physical,
    type_length: usize,
    kind: Kind,
) -> Option<Vec<Raw>> {
    let unsigned = matches!(kind, Kind::Int { unsigned: true, .. });
    let fixed = |size: usize, f: &dyn Fn(&[u8]) -> Raw| -> Option<Vec<Raw>> {
        let bytes = buf.get(..n.checked_mul(size)?)?;
        Some(bytes.chunks_exact(size.max(1)).take(n).map(f).collect())
    };
    match physical {
        Physical::DOUBLE => fixed(8, &|b| {
            Raw::Float(f64::from_le_bytes(b.try_into().unwrap()))
        }),
        Physical::FLOAT => fixed(4, &|b| {
            Raw::Float(f64::from(f32::from_le_bytes(b.try_into().unwrap())))
        }),
        Physical::INT32 => fixed(4, &|b| {
            Raw::int32(i32::from_le_bytes(b.try_into().unwrap()), unsigned)
        }),
        Physical::INT64 => fixed(8, &|b| {
            Raw::int64(i64::from_le_bytes(b.try_into().unwrap()), unsigned)
        }),
        Physical::FIXED_LEN_BYTE_ARRAY if type_length > 0 => fixed(type_length, &Raw::decimal),
        Physical::BYTE_ARRAY => {
            let mut out = Vec::with_capacity(n.min(buf.len() / 4));
            for range in byte_arrays(buf, n)? {
                out.push(Raw::decimal(&buf[range]));
            }
            Some(out)
        }
        _ => None,
    }
}

/// The ranges of `n` `PLAIN`-encoded byte arrays (a little-endian `u32`
/// length, then the bytes) in `buf`.
pub(crate) fn byte_arrays(buf: &[u8], n: usize) -> Option<Vec<std::ops::Range<usize>>> {
    let mut out = Vec::with_capacity(n.min(buf.len() / 4));
    let mut at = 0usize;
    for _ in 0..n {
        let len = u32::from_le_bytes(buf.get(at..at + 4)?.try_into().ok()?) as usize;
        let end = (at + 4).checked_add(len)?;
        if end > buf.len() {
            return None;
        }
        out.push(at + 4..end);
        at = end;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_are_tenths_only_when_nearest_to_one() {
        assert_eq!(tenths_of_float(12.3, false), Some(123));
        assert_eq!(tenths_of_float(-0.1, false), Some(-1));
        assert_eq!(tenths_of_float(-0.0, false), Some(0));
        assert_eq!(tenths_of_float(99_999_999.9, false), Some(VALUE_LIMIT));
        assert_eq!(tenths_of_float(100_000_000.0, false), None);
        assert_eq!(tenths_of_float(12.34, false), None);
        // The double next to 12.3 is not 12.3's nearest.
        assert_eq!(
            tenths_of_float(f64::from_bits(12.3f64.to_bits() + 1), false),
            None
        );
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(tenths_of_float(x, false), None);
        }
        // Every tenth in a wide stretch round-trips.
        for t in (-2_000_000..2_000_000).step_by(7) {
            assert_eq!(tenths_of_float(t as f64 / 10.0, false), Some(t));
        }
    }

    #[test]
    fn floats_are_tenths_only_when_nearest_to_one() {
        for t in (-200_000..200_000).step_by(3) {
            let x = (t as f64 / 10.0) as f32;
            assert_eq!(tenths_of_float(f64::from(x), true), Some(t));
        }
        assert_eq!(tenths_of_float(f64::from(12.34f32), true), None);
        // As a double, 12.3f32 is not 12.3's nearest double: a float column
        // is judged as floats.
        assert_eq!(tenths_of_float(f64::from(12.3f32), false), None);
    }

    #[test]
    fn scaled_integers_are_tenths_when_whole_tenths() {
        assert_eq!(tenths_of_scaled(-123, 1), Some(-123));
        assert_eq!(tenths_of_scaled(7, 0), Some(70));
        assert_eq!(tenths_of_scaled(-12_300, 3), Some(-123));
        assert_eq!(tenths_of_scaled(12_345, 3), None);
        assert_eq!(tenths_of_scaled(100_000_000, 0), None);
        assert_eq!(tenths_of_scaled(i128::MAX, 0), None);
        assert_eq!(tenths_of_scaled(1, 60), None);
    }

    #[test]
    fn big_endian_decimals_and_their_display() {
        assert_eq!(be_integer(&[0xff, 0x85]), Some(-123));
        assert_eq!(be_integer(&[0x00, 0x7b]), Some(123));
        assert_eq!(be_integer(&[]), None);
        assert_eq!(show_scaled(-5, 2), "-0.05");
        assert_eq!(show_scaled(12_345, 3), "12.345");
        assert_eq!(show_scaled(7, 0), "7");
    }
}

//! Parsing a value from the 8 bytes after its `;`, in one word, with no
//! data-dependent branch but the verdict.

/// One of the four forms a value can take, and how to read it.
struct Form {
    /// `w ^ want` is zero in the `-`, `.` and `\n` and the digit's value in
    /// each digit byte of a value of this form.
    want: u64,
    /// With `t = w ^ want`, the bytes match the form exactly when
    /// `(t | t + six) & check == 0`: `check` is `0xff` for each byte that
    /// must be exact and `0xf0` for each digit, whose `t` must be at most 9
    /// (`t + 6` keeps its high nibble 0). Only a byte whose `t` is at least
    /// `0xfa` carries into the next, and it fails its own check.
    six: u64,
    check: u64,
    /// The digits' low nibbles, and the multiplier that weighs them 100,
    /// 10 and 1 into the top 10 bits of the product: the other partial
    /// products fall below them or wrap out of the word (the one that
    /// would land on bit 62 is a multiple of 100 · 2^62, so 0), and no
    /// mask is needed after the shift.
    digits: u64,
    weights: u64,
    /// 1, or -1 for a negative value: one multiply, where flipping the
    /// bits and subtracting took three instructions.
    sign: i64,
    /// Bytes the value takes, `\n` included.
    used: u64,
}

/// The form of `pattern`, where `d` stands for any ASCII digit.
const fn form(pattern: &[u8]) -> Form {
    let mut f = NONE;
    f.want = 0;
    f.six = 0;
    f.check = 0;
    f.sign = 1;
    f.used = pattern.len() as u64;
    // Digit positions, most significant first, weigh 100, 10, 1 (tenths)
    // when there are three, 10 and 1 when there are two.
    let mut weight = if pattern.len() == 6 || (pattern.len() == 5 && pattern[0] != b'-') {
        100
    } else {
        10
    };
    let mut i = 0;
    while i < pattern.len() {
        let at = 8 * i as u32;
        if pattern[i] == b'd' {
            f.want |= 0x30 << at;
            f.six |= 0x06 << at;
            f.check |= 0xf0 << at;
            f.digits |= 0x0f << at;
            f.weights = f.weights.wrapping_add(weight << (VALUE_AT - at));
            weight /= 10;
        } else {
            f.want |= (pattern[i] as u64) << at;
            f.check |= 0xff << at;
        }
        i += 1;
    }
    if pattern[0] == b'-' {
        f.sign = -1;
    }
    f
}

/// Where the weighted digits' sum lands in the product: its top 10 bits.
const VALUE_AT: u32 = 54;

/// Matches nothing: `t | t + 1` is odd whatever `t` is.
const NONE: Form = Form {
    want: 0,
    six: 1,
    check: 1,
    digits: 0,
    weights: 0,
    sign: 0,
    used: 0,
};

/// Every [`Form`] field for each signature (see [`parse_value`]), one
/// array per field, so that the signature times 8 is the offset in each
/// (an address mode, no instruction).
#[repr(C, align(64))]
struct Forms {
    want: [u64; 32],
    six: [u64; 32],
    check: [u64; 32],
    digits: [u64; 32],
    weights: [u64; 32],
    sign: [i64; 32],
    used: [u64; 32],
}

/// The forms by signature: bit `k + 1` set means byte `k` may be a digit;
/// bit 0 is the `;`'s (set) in the AVX2 kernel's signatures, 0 in
/// [`signature`]'s, so each form is there twice. A `-` can only be byte 0,
/// and the `.` is the first byte after it that cannot be a digit.
static FORMS: Forms = {
    let mut t = Forms {
        want: [NONE.want; 32],
        six: [NONE.six; 32],
        check: [NONE.check; 32],
        digits: [NONE.digits; 32],
        weights: [NONE.weights; 32],
        sign: [NONE.sign; 32],
        used: [NONE.used; 32],
    };
    let mut sig = 0;
    while sig < 32 {
        let other = !(sig >> 1);
        let dot = (other & !1usize).trailing_zeros();
        let f = match (other & 1, dot) {
            (0, 1) => form(b"d.d\n"),
            (0, 2) => form(b"dd.d\n"),
            (1, 2) => form(b"-d.d\n"),
            (1, 3) => form(b"-dd.d\n"),
            _ => NONE,
        };
        t.want[sig] = f.want;
        t.six[sig] = f.six;
        t.check[sig] = f.check;
        t.digits[sig] = f.digits;
        t.weights[sig] = f.weights;
        t.sign[sig] = f.sign;
        t.used[sig] = f.used;
        sig += 1;
    }
    t
};

/// Parses the value at the start of `w` (the 8 bytes after `;`, little
/// endian), which must be `-?\d{1,2}\.\d\n`. Returns the value in tenths and
/// the number of bytes it took, `\n` included; `None` if the bytes do not
/// match exactly.
///
/// The value is an `i64`, although it fits an `i16`: the sign is applied
/// to the whole word, and the table adds it to an `i64` sum. Cut to `i16`
/// here, it was sign-extended again for the sum, one instruction more per
/// row (docs/PERFORMANCE.md, *The scanner*).
///
/// No data-dependent branch but the verdict: bit 4 is set in every ASCII
/// digit and clear in `.` and `-`, so that bit of bytes 0..=3, gathered by
/// one multiply, says which of the four forms the bytes can be. A table then gives that form's bytes, checked in one compare, the
/// multiplier that combines its digits (the trick of Quan Anh Mai's
/// 1BRC entry, with one multiplier per form so that no shift is needed) and
/// its sign.
#[inline(always)]
pub fn parse_value(w: u64) -> Option<(i64, usize)> {
    parse_value_as(w, signature(w))
}

/// Bit 4 of bytes 0..=3 of `w`, as bits 1..=4: the [`FORMS`] index.
#[inline(always)]
pub(super) fn signature(w: u64) -> usize {
    // Bits 4, 12, 20 and 28 land on bits 28..=31 of the 32-bit product
    // (no two partial products meet, so nothing carries), and none on 27.
    ((w as u32 & 0x1010_1010).wrapping_mul(0x0102_0408) >> 27) as usize
}

/// [`parse_value`] given `sig`, the [`signature`] of `w`, which the AVX2
/// kernel finds in its window before `w` is loaded.
#[inline(always)]
pub(super) fn parse_value_as(w: u64, sig: usize) -> Option<(i64, usize)> {
    let f = &FORMS;
    let sig = sig & 31;
    let t = w ^ f.want[sig];
    if (t | t.wrapping_add(f.six[sig])) & f.check[sig] != 0 {
        return None;
    }
    let abs = (w & f.digits[sig]).wrapping_mul(f.weights[sig]) >> VALUE_AT;
    Some(((abs as i64) * f.sign[sig], f.used[sig] as usize))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    fn word(s: &[u8]) -> u64 {
        let mut b = [0u8; 8];
        b[..s.len().min(8)].copy_from_slice(&s[..s.len().min(8)]);
        u64::from_le_bytes(b)
    }

    /// Every token of up to 5 bytes over an alphabet that holds every
    /// byte class a value parser distinguishes, followed by `\n` and junk,
    /// as the 8-byte word after a `;`, with what the strict parser makes
    /// of it: the value and the bytes it takes, `\n` included. `*` and
    /// `\xca` are a digit's byte minus 6 and a digit's byte with its high
    /// nibble flipped, at the edges of the form checks.
    pub(in crate::scan) fn every_short_token() -> Vec<(u64, Option<(i64, usize)>)> {
        let alphabet = b"-.09\n;a5/:+ \x00\xff*\xca";
        let mut tokens = vec![Vec::new()];
        for _ in 0..5 {
            let next: Vec<Vec<u8>> = tokens
                .iter()
                .filter(|t| t.len() < 5)
                .flat_map(|t| alphabet.iter().map(move |&c| [t.clone(), vec![c]].concat()))
                .collect();
            tokens.extend(next);
        }
        tokens.sort();
        tokens.dedup();
        let mut words = Vec::new();
        for t in &tokens {
            for tail in [&b"\n"[..], b"\nx;1.0", b"\n\n\n", b"1\n", b"\n\xff\xff"] {
                let bytes = [t.as_slice(), tail].concat();
                let nl = bytes.iter().position(|&c| c == b'\n').unwrap();
                let want = crate::parse::parse_value(&bytes[..nl]).map(|v| (i64::from(v), nl + 1));
                words.push((word(&bytes), want));
            }
        }
        words
    }

    #[test]
    fn parse_value_agrees_with_the_strict_parser_on_every_short_token() {
        for (w, want) in every_short_token() {
            assert_eq!(parse_value(w), want, "{:?}", w.to_le_bytes());
        }
    }

    #[test]
    fn parse_value_reads_every_value_in_every_form() {
        // Every value, with and without a leading zero where the grammar
        // allows one (`-0.5`, `0.5`), followed by any next-line bytes.
        for tenths in -999i16..=999 {
            let text = format!(
                "{}{}.{}\n",
                if tenths < 0 { "-" } else { "" },
                tenths.abs() / 10,
                tenths.abs() % 10
            );
            for tail in [&b""[..], b"\xff\xff\xff", b"9;", b"\x00"] {
                let bytes = [text.as_bytes(), tail].concat();
                assert_eq!(
                    parse_value(word(&bytes)),
                    Some((i64::from(tenths), text.len())),
                    "{text:?}"
                );
            }
        }
    }
}

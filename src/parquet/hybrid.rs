//! Parquet's RLE/bit-packed hybrid encoding, as dictionary indices and
//! definition levels are stored: runs of one repeated value, and runs of
//! values packed `width` bits each, least significant bit first.
//!
//! Hand-written because the `parquet` crate decodes dictionary indices only
//! on its way to the values they stand for; aggregating by index, before
//! any name is looked at, is what makes dictionary-encoded files fast
//! (docs/PERFORMANCE.md, *Parquet*). Tested against the crate's decoding.

use bytes::Bytes;

use super::unpack::{self, Tier};

/// Why an encoded run could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Malformed;

/// A decoder of one hybrid-encoded stream of values of `width` bits.
pub(crate) struct Hybrid {
    data: Bytes,
    /// Where the next run's header starts.
    next: usize,
    width: u32,
    /// Values left in the current run.
    left: usize,
    /// The current run's value, if it is a repeated run.
    repeated: Option<u32>,
    /// The current packed run's next value's bit offset into `data`.
    bit: usize,
    /// Where the current packed run starts, in bits into `data`.
    run_start: usize,
    /// How whole groups of packed values are unpacked.
    tier: Tier,
}

impl Hybrid {
    /// A decoder of the values in `data`, each `width` bits (at most 32).
    pub(crate) fn new(data: Bytes, width: u32) -> Result<Hybrid, Malformed> {
        if width > 32 {
            return Err(Malformed);
        }
        Ok(Hybrid {
            data,
            next: 0,
            width,
            left: 0,
            repeated: None,
            bit: 0,
            run_start: 0,
            tier: Tier::best(),
        })
    }

    /// Fills `out` with the next values; fewer than `out.len()` (maybe
    /// none) only where the stream ends.
    pub(crate) fn read(&mut self, out: &mut [u32]) -> Result<usize, Malformed> {
        let mut done = 0;
        while done < out.len() {
            if self.left == 0 && !self.start_run()? {
                break;
            }
            let n = self.left.min(out.len() - done);
            let into = &mut out[done..done + n];
            match self.repeated {
                Some(v) => into.fill(v),
                None => self.unpack(into),
            }
            self.left -= n;
            done += n;
        }
        Ok(done)
    }

    /// Whether the next `n` values all equal `value`, reading past them (or
    /// past the first that does not); repeated runs are skipped whole, as a
    /// page's definition levels, one run of ones, mostly are.
    pub(crate) fn all_equal(&mut self, mut n: usize, value: u32) -> Result<bool, Malformed> {
        let mut buf = [0u32; 64];
        while n > 0 {
            if self.left == 0 && !self.start_run()? {
                return Err(Malformed);
            }
            let take = match self.repeated {
                Some(v) if v != value => return Ok(false),
                Some(_) => self.left.min(n),
                None => {
                    let take = self.left.min(n).min(buf.len());
                    self.unpack(&mut buf[..take]);
                    if buf[..take].iter().any(|&v| v != value) {
                        return Ok(false);
                    }
                    take
                }
            };
            self.left -= take;
            n -= take;
        }
        Ok(true)
    }

    /// Reads run headers up to the next run with values; `false` at the end
    /// of the stream.
    fn start_run(&mut self) -> Result<bool, Malformed> {
        while self.left == 0 {
            if self.next >= self.data.len() {
                return Ok(false);
            }
            self.read_header()?;
        }
        Ok(true)
    }

    /// Reads one run's header.
    fn read_header(&mut self) -> Result<(), Malformed> {
        let header = self.leb128()?;
        // A run of no values ends the stream, as the `parquet` crate and
        // Arrow C++ read it (fastparquet pads pages with zeros): values
        // after it are not the page's.
        if header == 0 {
            self.next = self.data.len();
            return Ok(());
        }
        let bytes = (self.width as usize).div_ceil(8);
        if header & 1 == 1 {
            // `header >> 1` groups of 8 values, `width` bytes a group; the
            // last run may end in padding, which the caller does not ask for.
            let groups = (header >> 1) as usize;
            let len = groups.checked_mul(self.width as usize).ok_or(Malformed)?;
            let end = self.next.checked_add(len).ok_or(Malformed)?;
            // A cut last run keeps the values it holds whole.
            let end = end.min(self.data.len());
            let whole = (end - self.next) * 8 / (self.width.max(1) as usize);
            self.left = if self.width == 0 {
                groups * 8
            } else {
                whole.min(groups * 8)
            };
            self.repeated = None;
            self.bit = self.next * 8;
            self.run_start = self.bit;
            self.next = end;
        } else {
            let end = self.next.checked_add(bytes).ok_or(Malformed)?;
            let raw = self.data.get(self.next..end).ok_or(Malformed)?;
            let mut v = 0u32;
            for (i, b) in raw.iter().enumerate() {
                v |= u32::from(*b) << (8 * i);
            }
            if self.width < 32 && v >> self.width != 0 {
                return Err(Malformed);
            }
            self.left = (header >> 1) as usize;
            self.repeated = Some(v);
            self.next = end;
        }
        Ok(())
    }

    /// Unpacks the current packed run's next `out.len()` values: one at a
    /// time up to a group of 8 values' start, then whole groups, then the
    /// rest one at a time.
    fn unpack(&mut self, out: &mut [u32]) {
        let w = self.width as usize;
        if w == 0 {
            out.fill(0);
            return;
        }
        // A run's groups of 8 values start at its start, `w` bytes apart.
        let in_group = (self.bit - self.run_start) / w % 8;
        let lead = ((8 - in_group) % 8).min(out.len());
        let (head, rest) = out.split_at_mut(lead);
        self.unpack_each(head);
        let groups = rest.len() / 8;
        let (whole, tail) = rest.split_at_mut(groups * 8);
        let at = self.bit / 8;
        let bytes = &self.data[at..(at + groups * w).min(self.data.len())];
        if bytes.len() == groups * w && groups > 0 {
            unpack::groups(bytes, w, whole, self.tier);
            self.bit += groups * 8 * w;
        } else {
            self.unpack_each(whole);
        }
        self.unpack_each(tail);
    }

    /// Unpacks the next `out.len()` values of a packed run one at a time.
    fn unpack_each(&mut self, out: &mut [u32]) {
        let w = self.width as usize;
        let mask = (1u64 << w) - 1;
        let data = &self.data[..];
        let mut bit = self.bit;
        for o in out.iter_mut() {
            // The value's bytes, at most five, as far as the data goes (a
            // packed run is cut short only at the data's end).
            let at = bit / 8;
            let mut b = [0u8; 8];
            let end = (at + 8).min(data.len());
            b[..end - at].copy_from_slice(&data[at..end]);
            *o = ((u64::from_le_bytes(b) >> (bit % 8)) & mask) as u32;
            bit += w;
        }
        self.bit = bit;
    }

    /// Reads an unsigned LEB128 number of at most 32 bits.
    fn leb128(&mut self) -> Result<u64, Malformed> {
        let mut v = 0u64;
        for shift in (0..35).step_by(7) {
            let b = *self.data.get(self.next).ok_or(Malformed)?;
            self.next += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(Malformed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parquet::tests::leb128;

    /// Encodes `values` as alternating packed and repeated runs, the way
    /// writers mix them.
    fn encode(values: &[u32], width: u32) -> Vec<u8> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < values.len() {
            let same = values[i..].iter().take_while(|&&v| v == values[i]).count();
            if same >= 8 {
                leb128(&mut out, (same as u64) << 1);
                let bytes = (width as usize).div_ceil(8);
                out.extend_from_slice(&values[i].to_le_bytes()[..bytes]);
                i += same;
            } else {
                let n = (values.len() - i).min(16);
                let groups = n.div_ceil(8);
                leb128(&mut out, ((groups as u64) << 1) | 1);
                let mut bits = vec![0u8; groups * width as usize];
                for (j, &v) in values[i..i + n].iter().enumerate() {
                    for b in 0..width as usize {
                        if v >> b & 1 == 1 {
                            let at = j * width as usize + b;
                            bits[at / 8] |= 1 << (at % 8);
                        }
                    }
                }
                out.extend_from_slice(&bits);
                i += n;
            }
        }
        out
    }

    fn decode(data: Vec<u8>, width: u32, n: usize, batch: usize) -> Vec<u32> {
        let mut d = Hybrid::new(Bytes::from(data), width).unwrap();
        let mut out = Vec::new();
        let mut buf = vec![0; batch];
        while out.len() < n {
            let got = d.read(&mut buf).unwrap();
            assert!(got > 0, "ended after {} of {n}", out.len());
            out.extend_from_slice(&buf[..got]);
        }
        out.truncate(n);
        out
    }

    #[test]
    fn mixed_runs_decode_in_any_batch_size() {
        for width in (1..=17).chain([32]) {
            let max = if width == 32 {
                u32::MAX
            } else {
                (1 << width) - 1
            };
            let values: Vec<u32> = (0..1000u32)
                .map(|i| match i % 97 {
                    0..=30 => 5 & max,
                    _ => i.wrapping_mul(2654435761) & max,
                })
                .collect();
            for batch in [1, 7, 64, 1000] {
                assert_eq!(
                    decode(encode(&values, width), width, values.len(), batch),
                    values
                );
            }
        }
    }

    #[test]
    fn all_equal_reads_runs_whole_and_packed_runs_value_by_value() {
        let ones = vec![1u32; 300];
        let mut mixed = ones.clone();
        mixed[250] = 0;
        for (values, expected) in [(&ones, true), (&mixed, false)] {
            let mut d = Hybrid::new(Bytes::from(encode(values, 1)), 1).unwrap();
            assert_eq!(d.all_equal(300, 1), Ok(expected));
        }
        let mut d = Hybrid::new(Bytes::from(encode(&ones, 1)), 1).unwrap();
        assert_eq!(d.all_equal(301, 1), Err(Malformed));
    }

    #[test]
    fn width_zero_is_all_zeros() {
        let data = vec![(2 << 1) | 1];
        assert_eq!(decode(data, 0, 16, 5), vec![0; 16]);
    }

    #[test]
    fn malformed_streams_are_errors_not_panics() {
        // A repeated run's value cut off, a value wider than its width, a
        // varint that never ends, a width too large.
        for (data, width) in [(vec![8u8 << 1], 16), (vec![4, 0xff], 3), (vec![0x80; 9], 4)] {
            let mut d = Hybrid::new(Bytes::from(data), width).unwrap();
            assert_eq!(d.read(&mut [0; 8]), Err(Malformed));
        }
        assert!(Hybrid::new(Bytes::new(), 33).is_err());
        // A packed run cut short yields the values it holds whole.
        let mut d = Hybrid::new(Bytes::from(vec![3, 0xff]), 4).unwrap();
        assert_eq!(d.read(&mut [0; 8]), Ok(2));
    }
}

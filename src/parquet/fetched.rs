//! Parts of a Parquet file in memory, read by the `parquet` crate as if
//! they were the file: a whole mapped file, or the byte ranges of an
//! object that a row group needs (its two column chunks) or its footer.
//!
//! The crate's page readers ask for the bytes at any offset; brc fetches
//! the ranges a row group's columns span before aggregating it, in one
//! request each, rather than let the readers ask for pages one at a time.

use bytes::{Buf, Bytes};
use parquet::errors::ParquetError as CrateError;
use parquet::file::reader::{ChunkReader, Length};

/// Byte ranges of a file of `len` bytes, each held from its start.
pub(crate) struct Fetched {
    len: u64,
    parts: Vec<(u64, Bytes)>,
}

impl Fetched {
    /// The whole file, `bytes`.
    pub(crate) fn whole(bytes: Bytes) -> Fetched {
        Fetched {
            len: bytes.len() as u64,
            parts: vec![(0, bytes)],
        }
    }

    /// Parts of a file of `len` bytes: each the bytes fetched from a
    /// position on.
    #[cfg(any(feature = "remote", test))]
    pub(crate) fn parts(len: u64, parts: Vec<(u64, Bytes)>) -> Fetched {
        Fetched { len, parts }
    }

    /// The part holding bytes `start..start + length`, from `start` on:
    /// of two that do (one ending where the next starts, asked for no
    /// bytes there), the one holding more.
    fn holding(&self, start: u64, length: u64) -> Result<Bytes, CrateError> {
        let end = start.checked_add(length).filter(|&e| e <= self.len);
        let found = end.and_then(|end| {
            (self.parts.iter())
                .filter(|(at, bytes)| *at <= start && end <= at + bytes.len() as u64)
                .map(|(at, bytes)| bytes.slice((start - at) as usize..))
                .max_by_key(Bytes::len)
        });
        found.ok_or_else(|| {
            CrateError::EOF(format!(
                "expected {length} bytes at byte {start}, outside the bytes read of the file's {}",
                self.len
            ))
        })
    }
}

impl Length for Fetched {
    fn len(&self) -> u64 {
        self.len
    }
}

impl ChunkReader for Fetched {
    type T = bytes::buf::Reader<Bytes>;

    fn get_read(&self, start: u64) -> Result<Self::T, CrateError> {
        Ok(self.holding(start, 0)?.reader())
    }

    fn get_bytes(&self, start: u64, length: usize) -> Result<Bytes, CrateError> {
        let bytes = self.holding(start, length as u64)?;
        Ok(bytes.slice(..length))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// A file of 100 bytes, each its own offset, of which two ranges that
    /// touch are held.
    fn touching() -> Fetched {
        let file: Vec<u8> = (0..100).collect();
        let part = |r: std::ops::Range<usize>| (r.start as u64, Bytes::copy_from_slice(&file[r]));
        Fetched::parts(100, vec![part(10..40), part(40..60)])
    }

    #[test]
    fn bytes_come_from_the_part_holding_them() {
        let fetched = touching();
        assert_eq!(fetched.len(), 100);
        assert_eq!(&fetched.get_bytes(12, 3).unwrap()[..], &[12, 13, 14]);
        assert_eq!(
            &fetched.get_bytes(40, 20).unwrap()[..],
            &(40..60).collect::<Vec<u8>>()[..]
        );
        assert_eq!(fetched.get_bytes(30, 10).unwrap().len(), 10);
    }

    #[test]
    fn a_reader_at_the_end_of_one_part_reads_the_next() {
        let mut read = Vec::new();
        touching()
            .get_read(40)
            .unwrap()
            .read_to_end(&mut read)
            .unwrap();
        assert_eq!(read, (40..60).collect::<Vec<u8>>());
    }

    #[test]
    fn bytes_outside_every_part_or_across_two_are_an_error() {
        let fetched = touching();
        for (start, len) in [(0, 1), (35, 10), (59, 2), (61, 0), (99, 2), (u64::MAX, 1)] {
            let e = fetched.get_bytes(start, len).unwrap_err().to_string();
            assert!(e.contains("outside the bytes read"), "{start} {len}: {e}");
        }
    }

    #[test]
    fn a_whole_file_is_one_part() {
        let fetched = Fetched::whole(Bytes::from_static(b"PAR1...PAR1"));
        assert_eq!(fetched.len(), 11);
        assert_eq!(&fetched.get_bytes(7, 4).unwrap()[..], b"PAR1");
    }
}

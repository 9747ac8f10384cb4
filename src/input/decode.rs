//! What a stream's bytes pass through before an engine reads them: the
//! decompressor its first bytes call for (gzip members read as `gzip -d`
//! reads them, or zstd), asked for pieces of one size, a byte-order mark
//! dropped from its start, and a count of the bytes read, for progress.

use std::io::{self, BufRead, BufReader, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The UTF-8 byte-order mark, which spreadsheet exports put before the
/// first line.
pub(super) const BOM: &[u8] = b"\xef\xbb\xbf";

/// How an input's bytes are compressed, told by their first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    /// The longest magic number looked for.
    pub(super) const MAGIC_LEN: usize = 4;

    pub(super) fn detect(start: &[u8]) -> Compression {
        if start.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if start.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else {
            Compression::None
        }
    }

    /// Wraps `reader` in the matching decompressor, read in [`Pieces`].
    pub(super) fn decode(
        self,
        reader: impl Read + Send + 'static,
    ) -> io::Result<Box<dyn Read + Send>> {
        Ok(match self {
            Compression::None => Box::new(reader),
            Compression::Gzip => Box::new(Pieces::new(GzipMembers::new(BufReader::new(reader)))),
            Compression::Zstd => Box::new(Pieces::new(zstd::stream::read::Decoder::new(reader)?)),
        })
    }
}

/// How many bytes a decompressor is asked for at a time.
const PIECE: usize = 64 << 10;

/// A decompressor asked for [`PIECE`] bytes at a time, whatever its
/// reader asks for. What a corrupt stream yields before its decompressor
/// notices depends on how much it is asked for at a time (zstd's does);
/// asked alike in every run, it yields the same bytes and then the same
/// error however the run cuts its blocks (`--chunk-size`), so the run
/// fails alike.
struct Pieces<R> {
    inner: R,
    piece: Box<[u8]>,
    /// The piece's bytes not yet handed on.
    at: usize,
    end: usize,
}

impl<R: Read> Pieces<R> {
    fn new(inner: R) -> Pieces<R> {
        Pieces {
            inner,
            piece: vec![0; PIECE].into(),
            at: 0,
            end: 0,
        }
    }
}

impl<R: Read> Read for Pieces<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at == self.end {
            self.end = self.inner.read(&mut self.piece)?;
            self.at = 0;
        }
        let n = buf.len().min(self.end - self.at);
        buf[..n].copy_from_slice(&self.piece[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// gzip data as `gzip -d` reads it: members one after another (as `gzip`
/// writes concatenated files), and zero bytes after the last member ignored
/// (tape and block devices pad with them).
struct GzipMembers<R> {
    /// The member being read; `None` at the end of the data.
    member: Option<flate2::bufread::GzDecoder<R>>,
}

impl<R: BufRead> GzipMembers<R> {
    fn new(reader: R) -> GzipMembers<R> {
        GzipMembers {
            member: Some(flate2::bufread::GzDecoder::new(reader)),
        }
    }
}

impl<R: BufRead> Read for GzipMembers<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(member) = &mut self.member else {
                return Ok(0);
            };
            let n = member.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            let mut rest = self.member.take().expect("just read").into_inner();
            let mut zeros = false;
            loop {
                let next = rest.fill_buf()?;
                if next.is_empty() {
                    return Ok(0);
                }
                let lead = next.iter().take_while(|&&b| b == 0).count();
                if lead == next.len() {
                    zeros = true;
                    rest.consume(lead);
                    continue;
                }
                if zeros || lead > 0 {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "gzip data followed by zero bytes, then other bytes",
                    ));
                }
                break;
            }
            self.member = Some(flate2::bufread::GzDecoder::new(rest));
        }
    }
}

/// A reader that drops a UTF-8 byte-order mark at the start of `inner`.
pub(super) struct SkipBom<R> {
    inner: R,
    /// The first bytes, read ahead to look for the mark, and how many of
    /// them are still to be handed out (from the back of `head[..len]`).
    head: [u8; 3],
    len: usize,
    given: usize,
    looked: bool,
}

impl<R: Read> SkipBom<R> {
    pub(super) fn new(inner: R) -> SkipBom<R> {
        SkipBom {
            inner,
            head: [0; 3],
            len: 0,
            given: 0,
            looked: false,
        }
    }
}

impl<R: Read> Read for SkipBom<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !self.looked {
            while self.len < self.head.len() {
                match self.inner.read(&mut self.head[self.len..]) {
                    Ok(0) => break,
                    Ok(n) => self.len += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            self.looked = true;
            if self.head[..self.len] == *BOM {
                self.given = self.len;
            }
        }
        if self.given < self.len {
            let n = buf.len().min(self.len - self.given);
            buf[..n].copy_from_slice(&self.head[self.given..self.given + n]);
            self.given += n;
            return Ok(n);
        }
        self.inner.read(buf)
    }
}

/// A reader that counts the bytes read through it, for progress.
pub(super) struct Counting<R> {
    pub(super) inner: R,
    pub(super) consumed: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zstd frame cut short by the delimited fuzz target, whose
    /// decompressor yields more or fewer bytes before it fails as it is
    /// asked for more or fewer at a time.
    const CORRUPT: &[u8] = &[
        0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x3a, 0x32, 0x3b, 0x0a, 0x1f, 0x3a, 0x3b, 0x0a, 0x32, 0x0a,
        0x0a, 0x0a, 0x0a, 0x14, 0x14, 0x41, 0x0a, 0x3b, 0x0a, 0x3b, 0x3b, 0x63, 0x19, 0x2c, 0x5e,
    ];

    /// The bytes read from `bytes` decoded, taken `size` at a time into a
    /// buffer made for that many, as a delimited stream's blocks are, until
    /// the first error, and the error.
    fn read_in(bytes: &'static [u8], size: usize) -> (Vec<u8>, Option<String>) {
        let mut reader = Compression::detect(bytes).decode(bytes).unwrap();
        let mut buf = Vec::with_capacity(size);
        loop {
            match (&mut reader).take(size as u64).read_to_end(&mut buf) {
                Ok(0) => return (buf, None),
                Ok(_) => {}
                Err(e) => return (buf, Some(e.to_string())),
            }
        }
    }

    #[test]
    fn a_corrupt_stream_yields_the_same_bytes_and_error_however_it_is_read() {
        assert_eq!(Compression::detect(CORRUPT), Compression::Zstd);
        let want = read_in(CORRUPT, 1 << 16);
        assert!(want.1.is_some(), "the frame is corrupt");
        for size in [1, 1000, 1 << 16, (1 << 16) + 1, 4 << 20] {
            assert_eq!(read_in(CORRUPT, size), want, "{size}");
        }
    }

    #[test]
    fn a_whole_stream_reads_whole_in_pieces() {
        let text: Vec<u8> = (0..300_000u32)
            .flat_map(|i| format!("s{};{}.{}\n", i % 97, i % 100, i % 10).into_bytes())
            .collect();
        let packed: &'static [u8] = zstd::encode_all(&text[..], 1).unwrap().leak();
        for size in [1, 4096, 1 << 20] {
            assert_eq!(read_in(packed, size), (text.clone(), None), "{size}");
        }
    }
}

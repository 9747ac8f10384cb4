//! Inputs: where the bytes come from, and which driver aggregates them, in
//! memory bounded by the threads and the chunk size.
//!
//! A plain regular file is mapped into memory and handed out in chunks,
//! whose pages go back to the kernel once fed. Everything else is a stream
//! read into a bounded pool of buffers: pipes, FIFOs, devices, and gzip or
//! zstd data (recognised by their magic bytes, not the file name),
//! decompressed while read. Standard input is a file or a stream by the
//! same rules, so `brc < file` maps the file; a file opened past its start
//! (`{ read -r header; brc -; } < file`) is read from where it stands, as a
//! stream would be. A file that cannot be mapped (`/proc`) is read as a
//! stream. A UTF-8 byte-order mark at the very start of the input is
//! skipped, and a file that shrinks while mapped is an error, not a crash
//! ([`crate::shrink`]).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use memmap2::Mmap;

use crate::driver;
use crate::engine::{naive, Accumulator, Engine, Job, Options};
use crate::entry::Summary;
use crate::error::Error;
use crate::shrink;

/// The UTF-8 byte-order mark, which spreadsheet exports put before the
/// first line.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// An input, ready to be aggregated once.
pub struct Input {
    source: Source,
    size: Option<u64>,
    consumed: Arc<AtomicU64>,
}

enum Source {
    /// A mapped file, whose input starts at byte `start` of the map (past
    /// what standard input's owner had read, and past a byte-order mark).
    Mapped {
        file: File,
        map: Mmap,
        start: usize,
    },
    Stream(Box<dyn Read + Send>),
}

/// How an input's bytes are compressed, told by their first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    /// The longest magic number looked for.
    const MAGIC_LEN: usize = 4;

    fn detect(start: &[u8]) -> Compression {
        if start.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if start.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else {
            Compression::None
        }
    }

    /// Wraps `reader` in the matching decompressor.
    fn decode(self, reader: impl Read + Send + 'static) -> io::Result<Box<dyn Read + Send>> {
        Ok(match self {
            Compression::None => Box::new(reader),
            Compression::Gzip => Box::new(GzipMembers::new(BufReader::new(reader))),
            Compression::Zstd => Box::new(zstd::stream::read::Decoder::new(reader)?),
        })
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

impl Input {
    /// Opens a file: mapped if it is a plain regular file, a stream
    /// otherwise.
    pub fn open(path: &Path) -> io::Result<Input> {
        Input::from_file(File::open(path)?, 0)
    }

    /// Standard input: mapped if it is redirected from a plain regular file,
    /// a stream otherwise.
    pub fn stdin() -> io::Result<Input> {
        let fd = io::stdin().as_fd().try_clone_to_owned()?;
        grow_pipe(&fd);
        let mut file = File::from(fd);
        // Where the shell (or whoever ran brc) left the file: the input
        // starts there. A pipe has no position.
        let at = file.stream_position().unwrap_or(0);
        Input::from_file(file, at)
    }

    /// A stream, decompressed if it starts with gzip or zstd magic bytes.
    pub fn from_reader(reader: impl Read + Send + 'static) -> io::Result<Input> {
        let consumed = Arc::new(AtomicU64::new(0));
        let mut reader = Counting {
            inner: reader,
            consumed: Arc::clone(&consumed),
        };
        let mut start = Vec::with_capacity(Compression::MAGIC_LEN);
        reader
            .by_ref()
            .take(Compression::MAGIC_LEN as u64)
            .read_to_end(&mut start)?;
        let compression = Compression::detect(&start);
        let reader = io::Cursor::new(start).chain(reader);
        Ok(Input {
            source: Source::stream(compression, reader)?,
            size: None,
            consumed,
        })
    }

    /// `file`, whose input starts at byte `at` (its current position).
    fn from_file(file: File, at: u64) -> io::Result<Input> {
        let meta = file.metadata()?;
        if meta.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "is a directory",
            ));
        }
        if !meta.is_file() {
            return Input::from_reader(file);
        }
        let mut head = [0; Compression::MAGIC_LEN];
        let len = read_head(&file, at, &mut head)?;
        let head = &head[..len];
        let consumed = Arc::new(AtomicU64::new(0));
        let compression = Compression::detect(head);
        let mut size = Some(meta.len().saturating_sub(at));
        let mapped = match compression {
            Compression::None if !head.is_empty() => map(&file).ok(),
            _ => None,
        };
        let source = if let Some(map) = mapped {
            let mut start = usize::try_from(at).map_or(map.len(), |at| at.min(map.len()));
            if map[start..].starts_with(BOM) {
                start += BOM.len();
            }
            size = Some((map.len() - start) as u64);
            Source::Mapped { file, map, start }
        } else {
            if compression == Compression::None && !head.is_empty() {
                // Not mappable (a `/proc` file, whose size says 0): its
                // size tells nothing either.
                size = None;
            }
            let reader = Counting {
                inner: file,
                consumed: Arc::clone(&consumed),
            };
            Source::stream(compression, reader)?
        };
        Ok(Input {
            source,
            size,
            consumed,
        })
    }

    /// The input's size in bytes as stored (compressed, if it is), when
    /// known before reading it: for regular files.
    pub fn size(&self) -> Option<u64> {
        self.size
    }

    /// A counter of the bytes consumed so far, as stored: for showing
    /// progress from another thread while [`aggregate`](Input::aggregate)
    /// runs.
    pub fn consumed(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.consumed)
    }

    /// Aggregates the input with `engine`, in memory bounded by the
    /// threads and the chunk size, not by the input's size.
    pub fn aggregate(self, engine: Engine, options: &Options) -> Result<Summary, Error> {
        match self.source {
            Source::Mapped { file, map, start } => engine.run(MappedJob {
                file,
                map,
                start,
                consumed: self.consumed,
                options,
            }),
            Source::Stream(reader) => engine.run(StreamJob { reader, options }),
        }
    }
}

impl Source {
    /// A stream of `reader`'s bytes, decompressed, without a leading
    /// byte-order mark.
    fn stream(compression: Compression, reader: impl Read + Send + 'static) -> io::Result<Source> {
        Ok(Source::Stream(Box::new(SkipBom::new(
            compression.decode(reader)?,
        ))))
    }
}

/// Maps `file` for reading, advised for how brc reads it.
fn map(file: &File) -> io::Result<Mmap> {
    // The map is read-only and private to this process. Another process
    // truncating the file while we run removes pages under us: reading
    // them raises SIGBUS, which `shrink::Guard` turns into an error while
    // the map is read. Rewriting the file in place changes the bytes read,
    // as it would for any reader.
    // SAFETY: read-only, no `&mut` aliasing; truncation is guarded (above).
    let map = unsafe { Mmap::map(file)? };
    // Lines are consumed front to back, so ask for aggressive read-ahead.
    let _ = map.advise(memmap2::Advice::Sequential);
    // Pages of the file not yet cached are then read into the page cache
    // as 2 MiB folios (where the kernel allows transparent huge pages), and
    // every later run maps them a folio at a time instead of a few pages
    // at a time (docs/PERFORMANCE.md, *Memory*). Pages already cached stay
    // as they are.
    let _ = map.advise(memmap2::Advice::HugePage);
    Ok(map)
}

/// A reader that drops a UTF-8 byte-order mark at the start of `inner`.
struct SkipBom<R> {
    inner: R,
    /// The first bytes, read ahead to look for the mark, and how many of
    /// them are still to be handed out (from the back of `head[..len]`).
    head: [u8; 3],
    len: usize,
    given: usize,
    looked: bool,
}

impl<R: Read> SkipBom<R> {
    fn new(inner: R) -> SkipBom<R> {
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

/// The buffer size for the naive engine's line reader.
const NAIVE_BUFFER: usize = 1 << 20;

struct MappedJob<'a> {
    file: File,
    map: Mmap,
    /// Where the input starts in the map.
    start: usize,
    consumed: Arc<AtomicU64>,
    options: &'a Options,
}

impl Job for MappedJob<'_> {
    type Output = Result<Summary, Error>;

    /// Reads the file rather than the map: the oracle stays plain, and the
    /// file's pages never enter this process.
    fn naive(mut self) -> Self::Output {
        self.file.seek(SeekFrom::Start(self.start as u64))?;
        let reader = Counting {
            inner: &self.file,
            consumed: self.consumed,
        };
        let result = naive::aggregate(BufReader::with_capacity(NAIVE_BUFFER, reader));
        // Read through the file, a cut shows as a short last line or none.
        if self.file.metadata()?.len() < self.map.len() as u64 {
            return Err(shrink::shrank().into());
        }
        result
    }

    fn parallel<A: Accumulator>(self) -> Self::Output {
        driver::mapped::run::<A>(&self.map, self.start, self.options, &self.consumed)
    }
}

struct StreamJob<'a> {
    reader: Box<dyn Read + Send>,
    options: &'a Options,
}

impl Job for StreamJob<'_> {
    type Output = Result<Summary, Error>;

    fn naive(self) -> Self::Output {
        naive::aggregate(BufReader::with_capacity(NAIVE_BUFFER, self.reader))
    }

    fn parallel<A: Accumulator>(self) -> Self::Output {
        driver::stream::run::<A>(self.reader, self.options)
    }
}

/// Reads up to `buf.len()` bytes from byte `at` of `file` without moving
/// its position; returns how many (fewer only at the end of the file).
fn read_head(file: &File, at: u64, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read_at(&mut buf[filled..], at + filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// A reader that counts the bytes read through it, for progress.
struct Counting<R> {
    inner: R,
    consumed: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Asks for a 1 MiB pipe buffer when `fd` is a pipe: with the default
/// 64 KiB the writer and brc's reader wake each other every 64 KiB.
fn grow_pipe(fd: &std::os::fd::OwnedFd) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: F_SETPIPE_SZ takes an int and only resizes the kernel's
        // buffer of a pipe we hold open; on anything else it fails with
        // EBADF or EINVAL, which is ignored (the default size still works).
        unsafe {
            libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, 1 << 20);
        }
    }
    let _ = fd;
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The flags of the mapping of `path` in this process, as
    /// `/proc/self/smaps` lists them.
    fn vm_flags(path: &Path) -> String {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let path = path.to_str().unwrap();
        let mut lines = smaps.lines().skip_while(|l| !l.ends_with(path));
        assert!(lines.next().is_some(), "{path} is not mapped");
        let flags = lines.find(|l| l.starts_with("VmFlags:")).unwrap();
        flags.to_string()
    }

    #[test]
    fn a_file_that_shrinks_once_mapped_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.txt");
        let rows = b"Hamburg;12.0\nBulawayo;8.9\n".repeat(200_000);
        for engine in Engine::ALL {
            std::fs::write(&path, &rows).unwrap();
            let input = Input::open(&path).unwrap();
            File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_len(4096)
                .unwrap();
            let options = Options {
                threads: 2,
                chunk_size: 64 << 10,
            };
            match input.aggregate(engine, &options) {
                Err(Error::Io(e)) => {
                    assert_eq!(e.to_string(), "the file shrank while it was being read")
                }
                other => panic!("{engine:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_mapped_file_is_advised_sequential_and_huge_pages() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.txt");
        std::fs::write(&path, b"a;1.0\n".repeat(100_000)).unwrap();
        let input = Input::open(&path).unwrap();
        assert!(matches!(input.source, Source::Mapped { .. }));
        let flags = vm_flags(&path);
        // `sr`: sequential read-ahead. `hg`: huge pages advised, which a
        // kernel built without transparent huge pages refuses.
        assert!(flags.contains(" sr"), "{flags}");
        if Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
            assert!(flags.contains(" hg"), "{flags}");
        }
    }
}

//! Inputs: where the bytes come from, and aggregating them in bounded
//! memory.
//!
//! A plain regular file is mapped into memory and handed out in chunks; the
//! pages of each chunk go back to the kernel once it is fed, so a file of
//! any size costs only the chunks in flight. A malformed line of any length
//! costs no more: it is read a window at a time, each window released. Everything else is a stream
//! read into a bounded pool of buffers ([`crate::stream`]): pipes, FIFOs,
//! devices, and gzip or zstd data (recognised by their magic bytes, not the
//! file name), decompressed while read. Standard input is a file or a
//! stream by the same rules, so `brc < file` maps the file.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::ops::Range;
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use memmap2::{Mmap, UncheckedAdvice};

use crate::engine::{self, naive, Engine, Job, Options, Partial, Summary};
use crate::error::Error;
use crate::stream;

/// An input, ready to be aggregated once.
pub struct Input {
    source: Source,
    size: Option<u64>,
    consumed: Arc<AtomicU64>,
}

enum Source {
    Mapped { file: File, map: Mmap },
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
            // Multi-member, as `gzip` writes when files are concatenated.
            Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(reader)),
            Compression::Zstd => Box::new(zstd::stream::read::Decoder::new(reader)?),
        })
    }
}

impl Input {
    /// Opens a file: mapped if it is a plain regular file, a stream
    /// otherwise.
    pub fn open(path: &Path) -> io::Result<Input> {
        Input::from_file(File::open(path)?)
    }

    /// Standard input: mapped if it is redirected from a plain regular file,
    /// a stream otherwise.
    pub fn stdin() -> io::Result<Input> {
        let fd = io::stdin().as_fd().try_clone_to_owned()?;
        grow_pipe(&fd);
        Input::from_file(File::from(fd))
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
            source: Source::Stream(compression.decode(reader)?),
            size: None,
            consumed,
        })
    }

    fn from_file(file: File) -> io::Result<Input> {
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
        let mut start = [0; Compression::MAGIC_LEN];
        let len = read_at_start(&file, &mut start)?;
        let start = &start[..len];
        let consumed = Arc::new(AtomicU64::new(0));
        let compression = Compression::detect(start);
        let source = if compression == Compression::None && !start.is_empty() {
            // The map is read-only and private to this process. Another
            // process truncating or rewriting the file while we run could
            // change or remove pages under us (SIGBUS); that is the
            // documented contract of every mmap-based reader (ripgrep's
            // included), and brc's inputs are files at rest.
            // SAFETY: read-only, file at rest (above); no `&mut` aliasing.
            let map = unsafe { Mmap::map(&file)? };
            // Lines are consumed front to back, so ask for aggressive
            // read-ahead.
            let _ = map.advise(memmap2::Advice::Sequential);
            // Pages of the file not yet cached are then read into the page
            // cache as 2 MiB folios (where the kernel allows transparent
            // huge pages), and every later run maps them a folio at a time
            // instead of a few pages at a time: 0.94 times the CPU time on
            // the 413 set's 10^8 rows read cold first, the system time 0.07
            // s → 0.01 s (docs/PERFORMANCE.md, step 35). Pages already
            // cached stay as they are.
            let _ = map.advise(memmap2::Advice::HugePage);
            Source::Mapped { file, map }
        } else {
            let reader = Counting {
                inner: file,
                consumed: Arc::clone(&consumed),
            };
            Source::Stream(compression.decode(reader)?)
        };
        Ok(Input {
            source,
            size: Some(meta.len()),
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
            Source::Mapped { file, map } => engine.run(MappedJob {
                file,
                map,
                consumed: self.consumed,
                options,
            }),
            Source::Stream(reader) => engine.run(StreamJob { reader, options }),
        }
    }
}

/// The buffer size for the naive engine's line reader.
const NAIVE_BUFFER: usize = 1 << 20;

struct MappedJob<'a> {
    file: File,
    map: Mmap,
    consumed: Arc<AtomicU64>,
    options: &'a Options,
}

impl Job for MappedJob<'_> {
    type Output = Result<Summary, Error>;

    /// Reads the file rather than the map: the oracle stays plain, and the
    /// file's pages never enter this process.
    fn naive(self) -> Self::Output {
        let reader = Counting {
            inner: &self.file,
            consumed: self.consumed,
        };
        naive::aggregate(BufReader::with_capacity(NAIVE_BUFFER, reader))
    }

    fn parallel<P: Partial>(self) -> Self::Output {
        let done = |range: Range<usize>| {
            self.consumed
                .fetch_add(range.len() as u64, Ordering::Relaxed);
            release(&self.map, range);
        };
        let skipped = |range| release(&self.map, range);
        engine::run_parallel_with::<P>(&self.map, self.options, &done, &skipped).map_err(|fault| {
            let newlines = count_newlines_releasing(&self.map, fault.offset);
            fault.after_newlines(newlines).into()
        })
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

    fn parallel<P: Partial>(self) -> Self::Output {
        stream::run::<P>(self.reader, self.options)
    }
}

/// The granularity of [`release`]: the largest block of pages the kernel
/// maps at once for one fault (a 2 MiB page-cache folio, on x86-64 and on
/// arm64 with 4 KiB pages), and so a multiple of every page size.
const RELEASE_ALIGN: usize = 2 << 20;

/// More than any valid line: how far before a chunk its claim may read.
const LINE_MARGIN: usize = 64 << 10;

/// Returns the pages of `range` of the map to the kernel, so that the
/// process does not keep them resident; reading them again refaults them
/// from the page cache.
///
/// A fault maps a whole folio, which may reach into the neighbouring
/// chunks, and claiming a chunk reads from just before its nominal start (a
/// line or so before its actual start); a neighbour may also be fed after
/// this chunk. So the release takes in the aligned blocks around `range`,
/// and each chunk releases everything its own claim and feed mapped. A
/// neighbour still reading a released block just refaults it.
fn release(map: &Mmap, range: Range<usize>) {
    let start = range.start.saturating_sub(LINE_MARGIN) / RELEASE_ALIGN * RELEASE_ALIGN;
    let end = range.end.div_ceil(RELEASE_ALIGN) * RELEASE_ALIGN;
    let end = end.min(map.len());
    if start < end {
        // `MADV_DONTNEED` on a shared, read-only file mapping only drops
        // this process's page table entries: the next access to a page, by
        // any thread, maps the same page-cache page again, holding the same
        // file bytes (the file is not modified while mapped, the contract
        // of `Input::from_file`). So no reference into the map, even one
        // being read right now by another thread, ever observes a change.
        // SAFETY: contents unchanged (above); the range is inside the map.
        let _ =
            unsafe { map.unchecked_advise_range(UncheckedAdvice::DontNeed, start, end - start) };
    }
}

/// The number of `\n` in `map[..end]`, releasing the pages as it goes (an
/// error at the end of a huge file must not map it all back in).
fn count_newlines_releasing(map: &Mmap, end: usize) -> u64 {
    const WINDOW: usize = 4 << 20;
    let mut newlines = 0;
    let mut start = 0;
    while start < end {
        let stop = end.min(start + WINDOW);
        newlines += memchr::memchr_iter(b'\n', &map[start..stop]).count() as u64;
        release(map, start..stop);
        start = stop;
    }
    newlines
}

/// Reads up to `buf.len()` bytes from the start of `file` without moving
/// its position; returns how many (fewer only at the end of the file).
fn read_at_start(file: &File, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read_at(&mut buf[filled..], filled as u64) {
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

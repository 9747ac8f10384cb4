//! Inputs: where the bytes come from, and which driver path reads them,
//! in memory bounded by the threads and the chunk size.
//!
//! A run reads any number of inputs as one ([`Inputs`]): files,
//! directories (the regular files directly inside, by name) and standard
//! input, each opened only when its turn comes, all aggregated into one
//! summary. A plain regular file is mapped into memory and handed out in
//! chunks, whose pages go back to the kernel once fed. Everything else is
//! a stream read into a bounded pool of buffers: pipes, FIFOs, devices,
//! and gzip or zstd data (recognised by their magic bytes, not the file
//! name), decompressed while read. Standard input is a file or a stream by
//! the same rules, so `brc < file` maps the file; a file opened past its
//! start (`{ read -r header; brc -; } < file`) is read from where it
//! stands, as a stream would be. A file that cannot be mapped (`/proc`) is
//! read as a stream. A UTF-8 byte-order mark at the very start of an input
//! is skipped, and a file that shrinks while mapped is an error, not a
//! crash ([`crate::shrink`]). Each input's last line ends with it, `\n` or
//! not: inputs are never glued together.
//!
//! A run can also read only a part of its inputs ([`Inputs::within`],
//! [`Inputs::shard`]): the lines whose first byte lies in a range of the
//! inputs' bytes as stored, one input after the other. A mapped file is
//! cut there; a stream cannot be, and is read whole by the range that
//! holds its first byte.

mod decode;
mod list;
mod window;

use std::fs::File;
use std::io::{self, BufReader, Read, Seek};
use std::ops::Range;
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use memmap2::Mmap;

pub use self::list::{
    aggregate_file_range, aggregate_paths, InputError, Inputs, Shard, ShardError, Source,
};
use crate::driver::{self, RunError};
use crate::engine::{naive, Accumulator, Engine, Job, Options};
use crate::entry::{merge_runs, Entry, RawName, Summary};
use crate::error::{DataError, Error};
use crate::shrink;

use self::decode::{Compression, Counting, SkipBom, BOM};

/// One input, opened, ready to be aggregated once.
pub struct Input {
    opened: Opened,
    size: Option<u64>,
    consumed: Arc<AtomicU64>,
}

enum Opened {
    /// A mapped file, whose input starts at byte `origin` of the map (past
    /// what standard input's owner had read), its first line at `start`
    /// (past a byte-order mark).
    Mapped {
        file: File,
        map: Mmap,
        origin: usize,
        start: usize,
    },
    Stream(Box<dyn Read + Send>),
}

impl Input {
    /// Opens a file: mapped if it is a plain regular file, a stream
    /// otherwise.
    pub fn open(path: &Path) -> io::Result<Input> {
        Input::open_counted(path, Arc::default())
    }

    /// [`Input::open`], counting the bytes read into `consumed`.
    fn open_counted(path: &Path, consumed: Arc<AtomicU64>) -> io::Result<Input> {
        Input::from_file(File::open(path)?, 0, consumed)
    }

    /// Standard input: mapped if it is redirected from a plain regular file,
    /// a stream otherwise.
    pub fn stdin() -> io::Result<Input> {
        Input::stdin_counted(Arc::default())
    }

    /// [`Input::stdin`], counting the bytes read into `consumed`.
    fn stdin_counted(consumed: Arc<AtomicU64>) -> io::Result<Input> {
        let fd = io::stdin().as_fd().try_clone_to_owned()?;
        grow_pipe(&fd);
        let mut file = File::from(fd);
        // Where the shell (or whoever ran brc) left the file: the input
        // starts there. A pipe has no position.
        let at = file.stream_position().unwrap_or(0);
        Input::from_file(file, at, consumed)
    }

    /// A stream, decompressed if it starts with gzip or zstd magic bytes.
    pub fn from_reader(reader: impl Read + Send + 'static) -> io::Result<Input> {
        Input::from_reader_counted(reader, Arc::default())
    }

    /// [`Input::from_reader`], counting the bytes read into `consumed`.
    fn from_reader_counted(
        reader: impl Read + Send + 'static,
        consumed: Arc<AtomicU64>,
    ) -> io::Result<Input> {
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
            opened: Opened::stream(compression, reader)?,
            size: None,
            consumed,
        })
    }

    /// `file`, whose input starts at byte `at` (its current position),
    /// counting the bytes read into `consumed`.
    fn from_file(file: File, at: u64, consumed: Arc<AtomicU64>) -> io::Result<Input> {
        let meta = file.metadata()?;
        if meta.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "is a directory",
            ));
        }
        if !meta.is_file() {
            return Input::from_reader_counted(file, consumed);
        }
        // The head is read through the map when there is one: read by
        // `pread` first, the file's start would enter the page cache through
        // the read path's readahead, in small folios, where the map's fault
        // reads 2 MiB folios (docs/PERFORMANCE.md, *Memory*).
        let mut mapped = (meta.len() > at).then(|| map(&file).ok()).flatten();
        let mut head = [0; Compression::MAGIC_LEN];
        let len = match &mapped {
            Some(map) => map_head(map, at, &mut head)?,
            None => read_head(&file, at, &mut head)?,
        };
        let head = &head[..len];
        let compression = Compression::detect(head);
        if compression != Compression::None || head.is_empty() {
            mapped = None;
        }
        let mut size = Some(meta.len().saturating_sub(at));
        let opened = if let Some(map) = mapped {
            let origin = usize::try_from(at).map_or(map.len(), |at| at.min(map.len()));
            let bom = if head.starts_with(BOM) { BOM.len() } else { 0 };
            let start = (origin + bom).min(map.len());
            size = Some((map.len() - start) as u64);
            Opened::Mapped {
                file,
                map,
                origin,
                start,
            }
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
            Opened::stream(compression, reader)?
        };
        Ok(Input {
            opened,
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
        let part = Part {
            opened: self.opened,
            window: 0..u64::MAX,
            rest: 0,
        };
        let parts = std::iter::once((0, Ok(part)));
        let consumed = &self.consumed;
        let run = engine.run(PartsJob {
            parts,
            options,
            consumed,
        });
        run.map_err(|failed| failed.error)
    }
}

impl Opened {
    /// A stream of `reader`'s bytes, decompressed, without a leading
    /// byte-order mark.
    fn stream(compression: Compression, reader: impl Read + Send + 'static) -> io::Result<Opened> {
        Ok(Opened::Stream(Box::new(SkipBom::new(
            compression.decode(reader)?,
        ))))
    }
}

/// An opened input and what of it a run reads.
struct Part {
    opened: Opened,
    /// A mapped file's lines read: those whose first byte lies in this
    /// range of its bytes, counted from its origin (all of them:
    /// `0..u64::MAX`). A stream is read whole.
    window: Range<u64>,
    /// Bytes the run reads after this input, as far as known.
    rest: u64,
}

impl Part {
    /// The input as the parallel driver reads it.
    fn into_content(self) -> driver::Content<'static> {
        match self.opened {
            Opened::Mapped {
                map, origin, start, ..
            } => {
                let at =
                    |n: u64| usize::try_from(n).map_or(usize::MAX, |n| origin.saturating_add(n));
                driver::Content::Bytes(driver::Bytes {
                    held: driver::Held::Map(map),
                    lo: start,
                    window: at(self.window.start)..at(self.window.end),
                    rest: self.rest,
                })
            }
            Opened::Stream(reader) => driver::Content::Stream(reader),
        }
    }

    /// Aggregates the part with the naive engine: line by line from the
    /// file (not the map: the oracle stays plain, and the file's pages never
    /// enter this process) or the stream.
    fn naive(self, consumed: &Arc<AtomicU64>) -> Result<Summary, Error> {
        let Opened::Mapped {
            file,
            map,
            origin,
            start,
        } = self.opened
        else {
            let Opened::Stream(reader) = self.opened else {
                unreachable!("matched above")
            };
            return naive::aggregate(BufReader::with_capacity(NAIVE_BUFFER, reader));
        };
        let len = map.len() as u64;
        let at = |n: u64| (origin as u64).saturating_add(n).min(len);
        let window = at(self.window.start)..at(self.window.end);
        let result = window::naive(&file, start as u64, window, len, consumed);
        // Read through the file, a cut shows as a short last line or none.
        if file.metadata()?.len() < len {
            return Err(shrink::shrank().into());
        }
        result
    }
}

/// The buffer size for the naive engine's line reader.
const NAIVE_BUFFER: usize = 1 << 20;

/// A run over opened parts, in order: `(index, part)` pairs, the index
/// naming the input in a failure.
struct PartsJob<'o, I> {
    parts: I,
    options: &'o Options,
    consumed: &'o Arc<AtomicU64>,
}

impl<I: Iterator<Item = (usize, io::Result<Part>)>> Job for PartsJob<'_, I> {
    type Output = Result<Summary, RunError>;

    /// One part after the other, each one's summary merged into the
    /// others'.
    fn naive(self) -> Self::Output {
        let mut merged = Vec::new();
        for (input, part) in self.parts {
            let summary = part
                .map_err(Error::from)
                .and_then(|p| p.naive(self.consumed));
            let summary = summary.map_err(|error| RunError { input, error })?;
            merged = merge_runs(vec![merged, entries(summary)]);
        }
        let summary = Summary::from_entries(merged, None);
        Ok(summary.unwrap_or_else(|f| unreachable!("a summary's name is bad: {f:?}")))
    }

    fn parallel<A: Accumulator>(self) -> Self::Output {
        let contents = self
            .parts
            .map(|(i, part)| (i, part.map(Part::into_content)));
        driver::run::<A>(contents, self.options, self.consumed)
    }
}

/// A summary's stations as entries, to merge.
fn entries(summary: Summary) -> Vec<Entry> {
    (summary.into_stations().into_iter())
        .map(|(name, stats)| Entry {
            name: RawName::from_slice(name.as_bytes()),
            stats,
            first: 0,
        })
        .collect()
}

/// Aggregates `input` with `engine`: the lines of a whole input held in
/// memory. Like every `aggregate*` function, it takes what to read first,
/// then the engine and its options.
///
/// ```
/// use brc::output::{render, Format};
/// use brc::{aggregate, Engine, Options};
///
/// let input = b"Oslo;-3.5\nLima;20.1\nOslo;2.5\n";
/// let summary = aggregate(input, Engine::Fast, &Options::default())?;
/// let official = render(&summary, Format::Official);
/// assert_eq!(official, b"{Lima=20.1/20.1/20.1, Oslo=-3.5/-0.5/2.5}\n");
/// # Ok::<(), brc::DataError>(())
/// ```
pub fn aggregate(input: &[u8], engine: Engine, options: &Options) -> Result<Summary, DataError> {
    aggregate_slice(input, true, engine, options)
}

/// Aggregates the lines of `bytes`, a range of some input that the caller
/// holds, with `engine`: for reading one input in pieces, each piece by
/// its own call (and process, or machine), the pieces' summaries merged
/// ([`Partial`](crate::Partial)).
///
/// The contract: the lines aggregated are those whose first byte lies in
/// `bytes`. If `first_line_is_whole` is `false`, `bytes` starts inside a
/// line (or just after its `\n`: the caller looks at the byte before
/// the range, as [`Inputs::within`] does), which the piece before owns:
/// everything up to and including the first `\n` is skipped. A line that
/// starts in `bytes` must end in it: the caller extends its range through
/// the end of its last line (past the range's end, up to and including
/// the next `\n`, or to the end of the input), and the last line of
/// `bytes` ends with it, `\n` or not. A byte-order mark is not skipped.
///
/// In an error, `offset` counts from `bytes[0]` and `line` is one more
/// than the `\n` in `bytes` before the faulty line (the skipped partial
/// line is line 1): the caller, who knows where `bytes` lie, can turn
/// both into the input's.
pub fn aggregate_slice(
    bytes: &[u8],
    first_line_is_whole: bool,
    engine: Engine,
    options: &Options,
) -> Result<Summary, DataError> {
    engine.run(SliceJob {
        bytes,
        first_line_is_whole,
        options,
    })
}

struct SliceJob<'a> {
    bytes: &'a [u8],
    first_line_is_whole: bool,
    options: &'a Options,
}

impl Job for SliceJob<'_> {
    type Output = Result<Summary, DataError>;

    fn naive(self) -> Self::Output {
        let skip = match self.first_line_is_whole {
            true => 0,
            false => memchr::memchr(b'\n', self.bytes).map_or(self.bytes.len(), |i| i + 1),
        };
        match naive::aggregate(&self.bytes[skip..]) {
            Ok(summary) => Ok(summary),
            Err(Error::Data(e)) => Err(DataError {
                line: e.line + u64::from(skip > 0),
                offset: e.offset + skip as u64,
                ..e
            }),
            Err(Error::Io(e)) => unreachable!("reading a byte slice failed: {e}"),
        }
    }

    fn parallel<A: Accumulator>(self) -> Self::Output {
        // The first line start at or after byte 1 is after the first `\n`.
        let start = usize::from(!self.first_line_is_whole);
        let bytes = driver::Bytes {
            held: driver::Held::Slice(self.bytes),
            lo: 0,
            window: start..usize::MAX,
            rest: 0,
        };
        let contents = std::iter::once((0, Ok(driver::Content::Bytes(bytes))));
        let run = driver::run::<A>(contents, self.options, &AtomicU64::new(0));
        run.map_err(|failed| match failed.error {
            Error::Data(e) => e,
            Error::Io(e) => unreachable!("reading a byte slice failed: {e}"),
        })
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

/// Copies up to `buf.len()` bytes from byte `at` of `map` into `buf`;
/// returns how many (fewer only at its end). A file cut short meanwhile is
/// an error ([`shrink`]).
fn map_head(map: &Mmap, at: u64, buf: &mut [u8]) -> io::Result<usize> {
    let from = usize::try_from(at).map_or(map.len(), |at| at.min(map.len()));
    let n = buf.len().min(map.len() - from);
    let start = map.as_ptr() as usize;
    let guard = shrink::Guard::new(start..start + map.len());
    buf[..n].copy_from_slice(&map[from..from + n]);
    match guard.shrank() {
        true => Err(shrink::shrank()),
        false => Ok(n),
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
        assert!(matches!(input.opened, Opened::Mapped { .. }));
        let flags = vm_flags(&path);
        // `sr`: sequential read-ahead. `hg`: huge pages advised, which a
        // kernel built without transparent huge pages refuses.
        assert!(flags.contains(" sr"), "{flags}");
        if Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
            assert!(flags.contains(" hg"), "{flags}");
        }
    }
}

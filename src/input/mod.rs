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
//! cut there, and so is a text object, by ranged requests (`ranged`); a
//! stream cannot be, and is read whole by the range that holds its first
//! byte.
//!
//! Opening an input is done here; listing the inputs, and the part of
//! them a range reads, in `list` (a shard's range in `shard`); opening
//! them in turn with the part of each read, in `parts`; aggregating them,
//! a job the engine does, in `job`.

mod decode;
mod job;
mod list;
mod parts;
#[cfg(feature = "remote")]
mod ranged;
mod shard;
mod window;

use std::fs::File;
use std::io::{self, Read, Seek};
use std::ops::Range;
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use memmap2::Mmap;

pub use self::job::{aggregate_file_range, aggregate_paths};
pub use self::list::{InputError, Inputs, Source};
pub use self::shard::{Shard, ShardError};
use crate::shrink;
pub use crate::slice::{aggregate, aggregate_slice};

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
        if <&[u8; 4]>::try_from(&start[..]).is_ok_and(crate::parquet::is_magic) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "Parquet on a stream: its footer, at its end, is read first; give the file or its URL",
            ));
        }
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
    /// `0..u64::MAX`; none, `0..0`, for a delimited file outside a run's
    /// range, read for its header). A stream is read whole, or up to its
    /// header where it is delimited and another run reads its rows.
    window: Range<u64>,
    /// Bytes the run reads after this input, as far as known.
    rest: u64,
}

/// The buffer size for the naive engine's line reader.
const NAIVE_BUFFER: usize = 1 << 20;

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
    use crate::engine::{Engine, Options};
    use crate::error::Error;

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
    fn a_delimited_stream_counts_its_bytes_once() {
        // A stream counts the bytes it reads as stored, for the progress
        // bar and `--timings`; a delimited run adds none of its own.
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.csv.gz");
        let mut gz = flate2::write::GzEncoder::new(
            File::create(&path).unwrap(),
            flate2::Compression::default(),
        );
        gz.write_all(b"site,reading\n").unwrap();
        gz.write_all(&b"Oslo,1.5\nLima,-2\n".repeat(50_000))
            .unwrap();
        gz.finish().unwrap();
        let csv = crate::delimited::Dialect::csv(
            vec![crate::delimited::Column::Position(1)],
            crate::delimited::Column::Position(2),
        );
        let inputs = Inputs::new([Source::File(path.clone())]).delimited(csv);
        let consumed = inputs.consumed();
        let summary = inputs.aggregate(Engine::Fast, &Options::default()).unwrap();
        assert_eq!(summary.len(), 2);
        let size = std::fs::metadata(&path).unwrap().len();
        assert_eq!(consumed.load(std::sync::atomic::Ordering::Relaxed), size);
    }

    #[test]
    fn a_mapped_delimited_file_counts_every_byte_once() {
        // Its header's bytes too, on any number of threads and in any
        // shard: the progress bar ends at the file's size.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.csv");
        let mut text = b"site,reading\n".to_vec();
        text.extend(b"Oslo,1.5\nLima,-2\n".repeat(50_000));
        std::fs::write(&path, &text).unwrap();
        let csv = crate::delimited::Dialect::csv(
            vec![crate::delimited::Column::Position(1)],
            crate::delimited::Column::Position(2),
        );
        for (threads, shards) in [(1, 1), (2, 1), (2, 3)] {
            let options = Options {
                threads,
                chunk_size: 64 << 10,
            };
            let mut counted = 0;
            for k in 1..=shards {
                let inputs = Inputs::new([Source::File(path.clone())])
                    .delimited(csv.clone())
                    .shard(Shard::new(k, shards).unwrap());
                let consumed = inputs.consumed();
                inputs.aggregate(Engine::Fast, &options).unwrap();
                counted += consumed.load(std::sync::atomic::Ordering::Relaxed);
            }
            assert_eq!(
                counted,
                text.len() as u64,
                "{threads} threads, {shards} shards"
            );
        }
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

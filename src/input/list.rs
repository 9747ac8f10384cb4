//! Many inputs read as one: files, directories, objects (`s3://`,
//! `http(s)://`) and standard input, listed with their sizes, each opened
//! only when its turn comes (`parts`); and the part of their bytes a range
//! or a shard reads.

use std::ffi::OsStr;
use std::fmt;
use std::fs;
use std::io;
use std::ops::Range;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use super::Shard;
use crate::error::Error;
#[cfg(feature = "remote")]
use crate::object::{self, Object};
use crate::parquet::{self, Columns};

/// Where an input comes from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Source {
    /// Standard input, named `<stdin>` in messages.
    Stdin,
    /// A file (a directory stands for the regular files directly inside
    /// it: see [`Inputs::new`]).
    File(PathBuf),
    /// An object in object storage: `s3://bucket/key`, or
    /// `http(s)://host/path`; `s3://bucket/prefix/` (ending in `/`) stands
    /// for the objects under the prefix (see [`Inputs::new`]).
    Url(String),
}

impl Source {
    /// A command-line argument: `-` is standard input, a URL starting
    /// with `s3://`, `http://` or `https://` an object, anything else a
    /// file.
    pub fn from_arg(arg: impl Into<PathBuf>) -> Source {
        let path = arg.into();
        match path.as_os_str() == "-" {
            true => Source::Stdin,
            false => Source::from_path(path),
        }
    }

    /// A path that may be a URL: one starting with `s3://`, `http://` or
    /// `https://` is an object, anything else a file (`-` too).
    pub fn from_path(path: impl Into<PathBuf>) -> Source {
        let path = path.into();
        match path.to_str().filter(|s| is_url(s)) {
            Some(url) => Source::Url(url.to_string()),
            None => Source::File(path),
        }
    }
}

/// Whether `arg` names an object rather than a file: it starts with
/// `s3://`, `http://` or `https://` (in any case).
fn is_url(arg: &str) -> bool {
    let starts = |scheme: &str| {
        arg.len() > scheme.len()
            && arg
                .get(..scheme.len())
                .is_some_and(|s| s.eq_ignore_ascii_case(scheme))
    };
    ["s3://", "http://", "https://"].into_iter().any(starts)
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Stdin => f.write_str("<stdin>"),
            Source::File(path) => write!(f, "{}", path.display()),
            Source::Url(url) => f.write_str(url),
        }
    }
}

/// Why a run over [`Inputs`] failed: the input, and what went wrong in it
/// (a malformed line with its number, or an I/O error).
#[derive(Debug, thiserror::Error)]
#[error("{input}: {error}")]
pub struct InputError {
    /// The input that failed: the first in order that did.
    pub input: Source,
    /// What went wrong.
    pub error: Error,
}

/// The inputs of one run, in order, and the range of their bytes it reads
/// (all of them unless [`within`](Inputs::within) or
/// [`shard`](Inputs::shard) says otherwise).
///
/// Aggregating them gives one summary, as if their lines were one input
/// but for three things: each input's last line ends with it, `\n` or not;
/// each input's byte-order mark is skipped; and an error names its input,
/// with the line number within it. Inputs are opened one at a time, when
/// their turn comes, and the first failure in their order wins: a missing
/// file after a malformed line is not reported, one before it is.
pub struct Inputs {
    pub(super) listed: Vec<Listed>,
    pub(super) window: Range<u64>,
    pub(super) consumed: Arc<AtomicU64>,
    pub(super) columns: Columns,
    /// How text inputs are read when they are delimited files.
    pub(super) dialect: Option<crate::delimited::Dialect>,
    /// What each key keeps beyond its basic stats.
    pub(super) kept: crate::detail::Kept,
}

/// An input as listed: its size as stored when listed, or why it could not
/// be listed (reported in its turn).
pub(super) struct Listed {
    pub(super) source: Source,
    /// The bytes of a regular file from where it is read; 0 for anything
    /// else.
    pub(super) size: u64,
    regular: bool,
    /// A regular file or an object that is Parquet, by its magic bytes.
    pub(super) parquet: bool,
    pub(super) error: Option<io::Error>,
    /// The object, for a URL.
    #[cfg(feature = "remote")]
    pub(super) object: Option<Arc<Object>>,
}

impl Listed {
    /// Whether every run over a part of the inputs can open this one
    /// apart, as a named regular file or an object can: not standard input
    /// or a pipe, whose bytes go to one reader only.
    pub(super) fn opens_apart(&self) -> bool {
        #[cfg(feature = "remote")]
        if self.object.is_some() {
            return true;
        }
        self.regular && matches!(self.source, Source::File(_))
    }

    fn failed(source: Source, error: io::Error) -> Listed {
        Listed {
            source,
            size: 0,
            regular: false,
            parquet: false,
            error: Some(error),
            #[cfg(feature = "remote")]
            object: None,
        }
    }

    /// The regular file at `path`, of `size` bytes.
    fn file(path: PathBuf, size: u64) -> Listed {
        let parquet = is_parquet(&path, size);
        Listed {
            source: Source::File(path),
            size,
            regular: true,
            parquet,
            error: None,
            #[cfg(feature = "remote")]
            object: None,
        }
    }
}

/// Whether the regular file at `path`, of `size` bytes, is Parquet (see
/// [`is_parquet_file`]). A file that cannot be read now is left to fail
/// when it is opened.
fn is_parquet(path: &Path, size: u64) -> bool {
    fs::File::open(path).is_ok_and(|f| is_parquet_file(&f, size))
}

/// Whether `file`, a regular file of `size` bytes, is Parquet: it starts
/// and ends with Parquet's magic bytes. (A text file cannot end so: its
/// last line would hold no `;`.)
fn is_parquet_file(file: &fs::File, size: u64) -> bool {
    use std::os::unix::fs::FileExt;
    if size < 12 {
        return false;
    }
    let (mut head, mut tail) = ([0; 4], [0; 4]);
    file.read_exact_at(&mut head, 0).is_ok()
        && file.read_exact_at(&mut tail, size - 4).is_ok()
        && parquet::is_magic(&head)
        && parquet::is_magic(&tail)
}

impl Inputs {
    /// The inputs `sources`, in order. A directory stands for the regular
    /// files directly inside it (symbolic links followed; subdirectories
    /// and other files left out), in the byte order of their names,
    /// hidden ones (names starting with `.`) skipped. Standard input may
    /// come once: again, it is an error in its turn. Each input's size is
    /// looked up now, for [`shard`](Inputs::shard); an input that cannot
    /// be (a missing file) fails in its turn.
    pub fn new(sources: impl IntoIterator<Item = Source>) -> Inputs {
        let mut listed = Vec::new();
        let mut stdin = false;
        for source in sources {
            match source {
                Source::Stdin if stdin => {
                    let e = io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "standard input may be read only once",
                    );
                    listed.push(Listed::failed(Source::Stdin, e));
                }
                Source::Stdin => {
                    stdin = true;
                    listed.push(list_stdin());
                }
                Source::File(path) => list_path(path, &mut listed),
                Source::Url(url) => list_url(url, &mut listed),
            }
        }
        Inputs {
            listed,
            window: 0..u64::MAX,
            consumed: Arc::default(),
            columns: Columns::default(),
            dialect: None,
            kept: crate::detail::Kept::Basic,
        }
    }

    /// Reads the text inputs as delimited files (CSV, TSV), as `dialect`
    /// says, instead of the challenge's `name;value` lines.
    pub fn delimited(mut self, dialect: crate::delimited::Dialect) -> Inputs {
        self.dialect = Some(dialect);
        self
    }

    /// Keeps, for each key, what `kept` says beyond its basic stats: what
    /// the statistics to show need ([`Statistics::kept`](crate::Statistics::kept)).
    pub fn keeping(mut self, kept: crate::detail::Kept) -> Inputs {
        self.kept = kept;
        self
    }

    /// Reads Parquet files' names and values from `columns` (by default
    /// `station` and `measure`).
    pub fn columns(mut self, columns: Columns) -> Inputs {
        self.columns = columns;
        self
    }

    /// The inputs, directories expanded, in the order they are read.
    pub fn sources(&self) -> impl Iterator<Item = &Source> {
        self.listed.iter().map(|l| &l.source)
    }

    /// The inputs' total size as stored (compressed, if they are): the sum
    /// of the regular files' sizes, from where standard input stands if it
    /// is one; anything else counts 0.
    pub fn total_size(&self) -> u64 {
        self.listed.iter().map(|l| l.size).sum()
    }

    /// Reads only the lines whose first byte lies in `range` of the
    /// inputs' bytes as stored, one input after the other (byte 0 of each
    /// input comes right after the last of the one before; see
    /// [`total_size`](Inputs::total_size)). Ranges that tile
    /// `0..u64::MAX` read every line once between them, and reading one
    /// costs its bytes and the end of its last line: a range starting
    /// inside a file looks at the byte before it, and on to the next
    /// `\n`, for its first line start, not at the file's start.
    ///
    /// A stream or compressed input cannot be cut: it is read whole by the
    /// range that holds its first byte. A text object is cut as a file is,
    /// by ranged requests (a delimited one is not: its header is at its
    /// start, and a line feed may lie inside quotes). An input of size 0
    /// (a pipe, an empty file) sits at the byte where the next input
    /// starts, and so does anything past the end of all the inputs. An
    /// error's line number is still counted from its input's first line,
    /// on the error path.
    ///
    /// Delimited inputs that lie outside the range are read up to their
    /// header, which must agree with the others' as in a run over all of
    /// them: named regular files and objects; not standard input or a
    /// pipe, which only the run that reads it can read.
    pub fn within(mut self, range: Range<u64>) -> Inputs {
        self.window = range;
        self
    }

    /// Reads only `shard`'s part of the inputs: [`within`](Inputs::within)
    /// its [`range`](Shard::range) of their [`total_size`](Inputs::total_size).
    pub fn shard(self, shard: Shard) -> Inputs {
        let range = shard.range(self.total_size());
        self.within(range)
    }

    /// The bytes this run reads, as stored: their total if every input it
    /// reads has a size (a regular file), `None` otherwise.
    pub fn size(&self) -> Option<u64> {
        let mut size = 0;
        for (at, listed) in self.starts() {
            if !reads(&self.window, at, listed.size) {
                continue;
            }
            if !listed.regular {
                return None;
            }
            size += clip(at, listed.size, &self.window);
        }
        Some(size)
    }

    /// A counter of the bytes read so far, as stored: for showing progress
    /// from another thread while [`aggregate`](Inputs::aggregate) runs.
    pub fn consumed(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.consumed)
    }

    /// The Parquet files this run reads, each with the part of its bytes
    /// whose row groups it reads.
    pub(super) fn parquet(&self) -> Vec<parquet::run::Queued> {
        let window = self.window.clone();
        (self.starts().enumerate())
            .filter(|(_, (at, l))| l.parquet && reads(&window, *at, l.size))
            .map(|(input, (at, l))| parquet::run::Queued {
                input,
                place: match &l.source {
                    Source::File(path) => parquet::run::Place::Path(path.clone()),
                    // Opened anew, as the same file, by the name the
                    // system gives standard input.
                    Source::Stdin => parquet::run::Place::Path("/dev/stdin".into()),
                    #[cfg(feature = "remote")]
                    Source::Url(_) if l.object.is_some() => {
                        parquet::run::Place::Object(Arc::clone(l.object.as_ref().unwrap()))
                    }
                    Source::Url(_) => unreachable!("a URL listed as Parquet has its object"),
                },
                window: cut(&window, at, l.size),
            })
            .collect()
    }

    /// Each input with the byte where it starts among all of them.
    pub(super) fn starts(&self) -> impl Iterator<Item = (u64, &Listed)> {
        let mut at = 0u64;
        self.listed.iter().map(move |listed| {
            let start = at;
            at = at.saturating_add(listed.size);
            (start, listed)
        })
    }
}

/// Whether an input starting at byte `at` of all of them, of `size` bytes,
/// may have a line or its first byte in `window`.
pub(super) fn reads(window: &Range<u64>, at: u64, size: u64) -> bool {
    match size {
        0 => window.contains(&at),
        _ => at < window.end && at.saturating_add(size) > window.start,
    }
}

/// How many of the `size` bytes of an input starting at byte `at` lie in
/// `window`.
pub(super) fn clip(at: u64, size: u64, window: &Range<u64>) -> u64 {
    let end = at.saturating_add(size).min(window.end);
    end.saturating_sub(at.max(window.start))
}

/// The part of `window` in an input starting at byte `at`, of `size` bytes,
/// in the input's own bytes: open-ended if `window` reaches its end (the
/// input may have grown since listed).
pub(super) fn cut(window: &Range<u64>, at: u64, size: u64) -> Range<u64> {
    let end = match window.end >= at.saturating_add(size) {
        true => u64::MAX,
        false => window.end - at,
    };
    window.start.saturating_sub(at)..end
}

/// Standard input as listed: its size if it is a regular file, from where
/// it stands; Parquet if it is a whole Parquet file.
fn list_stdin() -> Listed {
    let size = io::stdin().as_fd().try_clone_to_owned().and_then(|fd| {
        let mut file = fs::File::from(fd);
        let meta = file.metadata()?;
        let at = io::Seek::stream_position(&mut file).unwrap_or(0);
        let parquet = meta.is_file() && at == 0 && is_parquet_file(&file, meta.len());
        Ok((meta.is_file(), meta.len().saturating_sub(at), parquet))
    });
    match size {
        Ok((regular, size, parquet)) => Listed {
            source: Source::Stdin,
            size: if regular { size } else { 0 },
            regular,
            parquet,
            error: None,
            #[cfg(feature = "remote")]
            object: None,
        },
        Err(e) => Listed::failed(Source::Stdin, e),
    }
}

/// Lists `path`: a file, or a directory's regular files.
fn list_path(path: PathBuf, listed: &mut Vec<Listed>) {
    let meta = match fs::metadata(&path) {
        Ok(meta) => meta,
        Err(e) => return listed.push(Listed::failed(Source::File(path), e)),
    };
    if meta.is_file() {
        return listed.push(Listed::file(path, meta.len()));
    }
    if !meta.is_dir() {
        return listed.push(Listed {
            source: Source::File(path),
            size: 0,
            regular: false,
            parquet: false,
            error: None,
            #[cfg(feature = "remote")]
            object: None,
        });
    }
    match list_dir(&path) {
        Ok(files) => listed.extend(files),
        Err(e) => listed.push(Listed::failed(Source::File(path), e)),
    }
}

/// Lists `url`: an object, or the objects under a prefix (a URL ending in
/// `/`), each told Parquet or not by its first and last bytes. An object
/// is not a regular file, but its size places it among the inputs for
/// [`Inputs::shard`]: a range of a text object is read by ranged requests,
/// and a compressed object whole by the range that holds its first byte.
#[cfg(feature = "remote")]
fn list_url(url: String, listed: &mut Vec<Listed>) {
    let objects = match object::list(&url, 4) {
        Ok(objects) => objects,
        Err(e) => return listed.push(Listed::failed(Source::Url(url), e)),
    };
    for (object, (head, tail)) in objects {
        let magic = |b: &[u8]| <&[u8; 4]>::try_from(b).is_ok_and(parquet::is_magic);
        listed.push(Listed {
            source: Source::Url(object.url().to_string()),
            size: object.size(),
            regular: false,
            parquet: object.size() >= 12 && magic(&head) && magic(&tail),
            error: None,
            object: Some(Arc::new(object)),
        });
    }
}

/// A URL, in a build without object storage: an error in its turn.
#[cfg(not(feature = "remote"))]
fn list_url(url: String, listed: &mut Vec<Listed>) {
    let e = io::Error::new(
        io::ErrorKind::Unsupported,
        "this brc was built without object storage: build it with `--features remote`",
    );
    listed.push(Listed::failed(Source::Url(url), e));
}

/// The regular files directly inside `dir`, not hidden, by name.
fn list_dir(dir: &Path) -> io::Result<Vec<Listed>> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir)? {
        let name = entry?.file_name();
        if name.as_bytes().starts_with(b".") {
            continue;
        }
        let path = dir.join(&name);
        // Following a symbolic link, as opening the file will; a dangling
        // one, or a file gone since, is no regular file.
        let meta = match fs::metadata(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            meta => meta?,
        };
        if meta.is_file() {
            files.push((name, path, meta.len()));
        }
    }
    files.sort_unstable_by(|a, b| OsStr::as_bytes(&a.0).cmp(OsStr::as_bytes(&b.0)));
    Ok((files.into_iter())
        .map(|(_, path, size)| Listed::file(path, size))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_name_standard_input_objects_or_files() {
        assert_eq!(Source::from_arg("-"), Source::Stdin);
        assert_eq!(Source::from_path("-"), Source::File("-".into()));
        for url in ["s3://b/k", "S3://b/", "http://h/x", "HTTPS://h:8/x.parquet"] {
            assert_eq!(Source::from_arg(url), Source::Url(url.into()));
        }
        for path in [
            "s3:/b",
            "s3://",
            "data/s3://x",
            "http",
            "file:///x",
            "ftp://h/x",
        ] {
            assert_eq!(Source::from_arg(path), Source::File(path.into()));
        }
    }

    #[cfg(not(feature = "remote"))]
    #[test]
    fn a_url_without_object_storage_is_an_error_in_its_turn() {
        let inputs = Inputs::new([Source::Url("s3://b/k".into())]);
        let e = inputs.listed[0].error.as_ref().unwrap();
        assert!(e.to_string().contains("without object storage"), "{e}");
    }
}

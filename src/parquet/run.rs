//! A run's Parquet files, row group by row group, on worker threads.
//!
//! The files are opened in order, each when the row groups before it are
//! all taken, so a run holds a few files open whatever their number. The
//! first failure in the files' order wins: once a row group fails, the
//! workers take no row group after it, and finish those before it, which
//! may fail first.

use std::fs;
use std::ops::Range;
use std::panic;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use memmap2::Mmap;

#[cfg(feature = "remote")]
use super::Object;
use super::{Columns, File, Stations};
use crate::detail::Kept;
use crate::driver::RunError;
use crate::error::Error;
use crate::shrink;
use crate::summary::{merge_runs, Entry, RawName};

/// A Parquet file a run reads, queued for its row groups.
pub(crate) struct Queued {
    /// The file's index among the run's inputs, which a failure names.
    pub(crate) input: usize,
    pub(crate) place: Place,
    /// The row groups read: those whose first byte lies in this range of
    /// the file's bytes (all of them: `0..u64::MAX`).
    pub(crate) window: Range<u64>,
}

/// Where a queued file is.
pub(crate) enum Place {
    /// A file, mapped to be read.
    Path(PathBuf),
    /// An object in object storage.
    #[cfg(feature = "remote")]
    Object(Arc<Object>),
}

/// A file open for its row groups.
struct Open {
    /// A mapped file's `SIGBUS` guard (see [`shrink`]); declared first,
    /// so dropped before the map it guards is unmapped.
    guard: Option<shrink::Guard>,
    /// Its index in the run's list.
    at: usize,
    file: File,
    /// The row groups read, in order.
    groups: Vec<usize>,
}

/// The next file to open, and the open file whose row groups are being
/// handed out with the next one's position in its `groups`.
type Next = (usize, Option<Task>);

/// What the workers share.
struct Shared<'a> {
    files: &'a [Queued],
    columns: &'a Columns,
    next: Mutex<Next>,
    /// The position of the first failed task (file, row group position),
    /// flattened: no task at or after it is started.
    bound: AtomicUsize,
    failed: Mutex<Option<((usize, usize), RunError)>>,
    /// What each station keeps beyond its basic stats.
    kept: Kept,
    consumed: &'a AtomicU64,
}

/// A task: a file and the position of one of its row groups.
type Task = (Arc<Open>, usize);

/// Aggregates the row groups of `files` with `threads` workers into sorted
/// entries, counting the bytes of row groups read into `consumed`.
pub(crate) fn aggregate(
    files: &[Queued],
    columns: &Columns,
    threads: usize,
    kept: Kept,
    consumed: &AtomicU64,
) -> Result<Vec<Entry>, RunError> {
    if files.is_empty() {
        return Ok(Vec::new());
    }
    let shared = Shared {
        files,
        columns,
        next: Mutex::new((0, None)),
        bound: AtomicUsize::new(usize::MAX),
        failed: Mutex::new(None),
        kept,
        consumed,
    };
    let runs: Vec<Vec<Entry>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| s.spawn(|| work(&shared)))
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|e| panic::resume_unwind(e)))
            .collect()
    });
    if let Some((_, failed)) = shared.failed.into_inner().unwrap() {
        return Err(failed);
    }
    Ok(merge_runs(runs))
}

/// A worker: takes row groups until none is left, then hands over its
/// stations sorted.
fn work(shared: &Shared) -> Vec<Entry> {
    let mut stations = Stations::keeping(shared.kept);
    while let Some((open, position)) = take(shared) {
        let task = (open.at, position);
        if flat(task) >= shared.bound.load(Ordering::Acquire) {
            continue;
        }
        let group = open.groups[position];
        let file = &open.file;
        let read = (file.fetch(group))
            .and_then(|fetched| Ok(file.aggregate(group, fetched, &mut stations)?));
        // Zeros read where a shrunk file was are no malformed file.
        let error = if open.guard.as_ref().is_some_and(shrink::Guard::shrank) {
            Some(Error::Io(shrink::shrank()))
        } else {
            match read {
                Ok(()) => {
                    let size = file.group_size(group);
                    shared.consumed.fetch_add(size, Ordering::Relaxed);
                    None
                }
                Err(e) => Some(e),
            }
        };
        if let Some(error) = error {
            fail(shared, task, shared.files[open.at].input, error);
        }
    }
    let mut entries: Vec<Entry> = stations
        .into_iter()
        .map(|(name, stats)| Entry {
            name: RawName::from_slice(&name),
            stats,
            first: 0,
        })
        .collect();
    entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
    entries
}

/// A task's place in the order of all of them (a file's row groups are
/// numbered by a 32-bit integer in its footer).
fn flat((file, position): (usize, usize)) -> usize {
    (file << 32) | position
}

/// Records a failure of `task` if it is the first in order so far.
fn fail(shared: &Shared, task: (usize, usize), input: usize, error: Error) {
    let mut failed = shared.failed.lock().unwrap();
    if failed.as_ref().is_none_or(|(at, _)| task < *at) {
        *failed = Some((task, RunError { input, error }));
        shared.bound.fetch_min(flat(task), Ordering::AcqRel);
    }
}

/// The next task, opening the next file when the open one has none left;
/// `None` when every file is done or the rest lie past a failure.
fn take(shared: &Shared) -> Option<Task> {
    let mut next = shared.next.lock().unwrap();
    loop {
        if let Some((open, position)) = &mut next.1 {
            if *position < open.groups.len() {
                let task = (Arc::clone(open), *position);
                *position += 1;
                return Some(task);
            }
        }
        let at = next.0;
        if at >= shared.files.len() || flat((at, 0)) >= shared.bound.load(Ordering::Acquire) {
            return None;
        }
        next.0 += 1;
        next.1 = None;
        match open(&shared.files[at], at, shared.columns) {
            Ok(open) => next.1 = Some((Arc::new(open), 0)),
            Err(error) => {
                drop(next);
                fail(shared, (at, 0), shared.files[at].input, error);
                next = shared.next.lock().unwrap();
            }
        }
    }
}

/// Opens a queued file: maps it (or finds its object), reads its footer,
/// picks its row groups.
fn open(queued: &Queued, at: usize, columns: &Columns) -> Result<Open, Error> {
    let (guard, file) = match &queued.place {
        Place::Path(path) => {
            let handle = fs::File::open(path)?;
            // SAFETY: the map is read only, and a file cut short under it
            // raises `SIGBUS`, which the guard below turns into an error.
            let map = unsafe { Mmap::map(&handle) }?;
            let range = map.as_ptr() as usize..map.as_ptr() as usize + map.len();
            let guard = shrink::Guard::new(range);
            let opened = File::open(Bytes::from_owner(map), columns);
            if guard.shrank() {
                return Err(Error::Io(shrink::shrank()));
            }
            (Some(guard), opened?)
        }
        #[cfg(feature = "remote")]
        Place::Object(object) => (None, File::open_object(Arc::clone(object), columns)?),
    };
    let groups = (0..file.row_groups())
        .filter(|&g| queued.window.contains(&file.group_start(g)))
        .collect();
    Ok(Open {
        guard,
        at,
        file,
        groups,
    })
}

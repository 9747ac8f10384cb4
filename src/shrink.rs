//! A mapped file that shrinks while it is read: an error, not a crash.
//!
//! Reading a page of a file mapping that lies past the file's end raises
//! `SIGBUS`, which kills the process with no message. That happens when
//! another process truncates a file brc is reading (a log rotated in
//! place, a file rewritten by its producer). While a mapping is
//! [guarded](Guard), a `SIGBUS` handler puts a page of zeros over the
//! faulting page of that mapping and notes the fault, so the read goes on;
//! the driver then reports the file as having shrunk instead of using any
//! result computed from those zeros ([`Guard::shrank`]). A `SIGBUS` at any
//! other address goes to the handler that was there before (by default,
//! the process dies as it would have).
//!
//! The tables keep names as references into the map, so bytes that turn
//! to zeros under them can break an engine's own invariants (a name whose
//! `;` is gone) and make it panic; never memory-unsafe, since the map keeps
//! its length. The driver catches such a panic and reports the shrink; a
//! program that wants no panic message printed meanwhile asks [`seen`] in
//! its panic hook, as the `brc` binary does.

use std::io;
use std::ops::Range;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// How many mappings one [`WatchBlock`] guards; more guards chain more blocks.
const WATCHES: usize = 64;

/// One guarded address range, or none: `end == 0` means the watch is
/// free.
struct Watch {
    taken: AtomicBool,
    start: AtomicUsize,
    end: AtomicUsize,
    hit: AtomicBool,
}

/// A block of watches and the next block: a list that only grows, so the
/// handler can walk it with atomic loads alone while guards come and go.
/// Blocks are never freed; the list is as long as the most mappings
/// guarded at once ever needed, a block per [`WATCHES`] of them.
struct WatchBlock {
    watches: [Watch; WATCHES],
    next: AtomicPtr<WatchBlock>,
}

impl WatchBlock {
    const fn new() -> WatchBlock {
        WatchBlock {
            watches: [const {
                Watch {
                    taken: AtomicBool::new(false),
                    start: AtomicUsize::new(0),
                    end: AtomicUsize::new(0),
                    hit: AtomicBool::new(false),
                }
            }; WATCHES],
            next: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// The next block, if one has been chained.
    fn next(&self) -> Option<&'static WatchBlock> {
        // SAFETY: `next` is null or a pointer from `Box::leak` (`WatchBlock::
        // chain`), published with `Release` after the block was built and
        // never freed, so it is valid for `'static`.
        unsafe { self.next.load(Ordering::Acquire).as_ref() }
    }

    /// Every block of the list, from `FIRST` on.
    fn all() -> impl Iterator<Item = &'static WatchBlock> {
        std::iter::successors(Some(&FIRST), |b| b.next())
    }

    /// Chains a new block after the list's last, or after whichever block
    /// another thread chained first; returns the block now after `self`.
    fn chain(&'static self) -> &'static WatchBlock {
        let new: &'static WatchBlock = Box::leak(Box::new(WatchBlock::new()));
        let mut last = self;
        loop {
            match last.next.compare_exchange(
                ptr::null_mut(),
                ptr::from_ref(new).cast_mut(),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return new,
                // SAFETY: as in `next`: a non-null `next` is a leaked block.
                Err(other) => last = unsafe { &*other },
            }
        }
    }
}

/// Whether any guarded mapping has shrunk in this process.
static SEEN: AtomicBool = AtomicBool::new(false);

/// Whether any guarded mapping of this process has been read past its
/// file's end: from then on a panic may be one the driver turns into a
/// "shrank" error.
pub fn seen() -> bool {
    SEEN.load(Ordering::Acquire)
}

/// The first block of guarded ranges; the rest are chained to it.
static FIRST: WatchBlock = WatchBlock::new();

/// The page size and the `SIGBUS` action found before ours, set once when
/// the handler is installed (`None` if it could not be).
static INSTALLED: OnceLock<Option<(usize, libc::sigaction)>> = OnceLock::new();

/// The error of a mapped file cut short while it was read.
pub(crate) fn shrank() -> io::Error {
    io::Error::other("the file shrank while it was being read")
}

/// A guard over a mapped address range; unguards it when dropped.
pub(crate) struct Guard {
    watch: Option<&'static Watch>,
}

impl Guard {
    /// Guards `range`, the addresses of a read-only file mapping that lives
    /// at least as long as the guard. Any number of ranges can be guarded
    /// at once: when every watch is taken, a new block of them is chained.
    pub(crate) fn new(range: Range<usize>) -> Guard {
        if range.is_empty() || install().is_none() {
            return Guard { watch: None };
        }
        let take = |s: &Watch| {
            s.taken
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        };
        let mut block = &FIRST;
        let watch = loop {
            if let Some(watch) = block.watches.iter().find(|s| take(s)) {
                break watch;
            }
            block = block.next().unwrap_or_else(|| block.chain());
        };
        watch.hit.store(false, Ordering::Relaxed);
        watch.start.store(range.start, Ordering::Relaxed);
        watch.end.store(range.end, Ordering::Release);
        Guard { watch: Some(watch) }
    }

    /// Whether a page of the range was read past the file's end: the file
    /// shrank while mapped, and what was read there was zeros.
    pub(crate) fn shrank(&self) -> bool {
        self.watch.is_some_and(|s| s.hit.load(Ordering::Acquire))
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(watch) = self.watch {
            watch.end.store(0, Ordering::Release);
            watch.taken.store(false, Ordering::Release);
        }
    }
}

/// Installs the handler once; `None` if the system refused.
fn install() -> Option<usize> {
    let installed = INSTALLED.get_or_init(|| {
        // SAFETY: `sysconf` has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        let page = usize::try_from(page).ok().filter(|p| p.is_power_of_two())?;
        // SAFETY: an all-zero `sigaction` is a valid value of the C struct
        // (no handler, empty mask, no flags); both are filled in below.
        let (mut ours, mut before): (libc::sigaction, libc::sigaction) =
            unsafe { (std::mem::zeroed(), std::mem::zeroed()) };
        ours.sa_sigaction = on_sigbus as extern "C" fn(_, _, _) as usize;
        ours.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        // SAFETY: `sa_mask` is a valid `sigset_t` to empty; `sigaction`
        // reads `ours` and writes `before`, both valid for the call, and
        // `on_sigbus` has the signature `SA_SIGINFO` asks for.
        let ok = unsafe {
            libc::sigemptyset(&mut ours.sa_mask);
            libc::sigaction(libc::SIGBUS, &ours, &mut before) == 0
        };
        ok.then_some((page, before))
    });
    installed.map(|(page, _)| page)
}

/// The `SIGBUS` handler. It only reads atomics (the block list among
/// them, which is never freed) and the settled [`INSTALLED`], and calls
/// `mmap` and `sigaction`, which are plain system calls: nothing that
/// allocates or locks.
extern "C" fn on_sigbus(_: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    let Some(Some((page, before))) = INSTALLED.get() else {
        return;
    };
    // SAFETY: the kernel passes a valid `siginfo_t` to a `SA_SIGINFO`
    // handler; for `SIGBUS` `si_addr` is the faulting address.
    let addr = unsafe { (*info).si_addr() } as usize;
    let ours = WatchBlock::all().flat_map(|b| &b.watches).find(|s| {
        let end = s.end.load(Ordering::Acquire);
        s.start.load(Ordering::Relaxed) <= addr && addr < end
    });
    if let Some(watch) = ours {
        let at = addr & !(page - 1);
        // `at` is page-aligned and its page lies inside a guarded range: a
        // read-only private file mapping that outlives its guard
        // (`Guard::new`). Replacing that one page with a private page of
        // zeros touches no other mapping, and nothing holds a `&mut` into it.
        // SAFETY: as above, so no reference observes anything but bytes.
        let zeros = unsafe {
            libc::mmap(
                at as *mut libc::c_void,
                *page,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if zeros != libc::MAP_FAILED {
            SEEN.store(true, Ordering::Release);
            watch.hit.store(true, Ordering::Release);
            return;
        }
    }
    // Not ours (or not mendable): the handler from before takes over when
    // the faulting access runs again, as if ours had never been installed.
    // SAFETY: `before` is the action `sigaction` returned at install time.
    unsafe {
        libc::sigaction(libc::SIGBUS, before, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::io::Write;

    use super::*;

    #[test]
    fn a_guarded_mapping_reads_zeros_past_a_cut_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.txt");
        let mut file = File::create(&path).unwrap();
        file.write_all(&vec![b'x'; 1 << 20]).unwrap();
        let file = File::open(&path).unwrap();
        // SAFETY: the test owns the file; its truncation below is the point.
        let map = unsafe { memmap2::Mmap::map(&file).unwrap() };
        let start = map.as_ptr() as usize;
        let guard = Guard::new(start..start + map.len());
        assert_eq!(map[100], b'x');
        assert!(!guard.shrank());
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(4096)
            .unwrap();
        assert_eq!(map[100], b'x');
        assert_eq!(map[map.len() - 1], 0);
        assert!(guard.shrank());
        drop(guard);
        let other = Guard::new(start..start + map.len());
        assert!(!other.shrank(), "a new guard starts clean");
    }

    #[test]
    fn every_one_of_many_guarded_mappings_reads_zeros_past_a_cut() {
        let dir = tempfile::tempdir().unwrap();
        let n = 3 * WATCHES + 5;
        let maps: Vec<_> = (0..n)
            .map(|i| {
                let path = dir.path().join(format!("{i}.txt"));
                std::fs::write(&path, vec![b'x'; 3 * 4096]).unwrap();
                let file = File::open(&path).unwrap();
                // SAFETY: the test owns the file; its truncation below is the point.
                let map = unsafe { memmap2::Mmap::map(&file).unwrap() };
                (path, map)
            })
            .collect();
        let guards: Vec<_> = maps
            .iter()
            .map(|(_, map)| {
                let start = map.as_ptr() as usize;
                Guard::new(start..start + map.len())
            })
            .collect();
        for (path, _) in &maps {
            File::options()
                .write(true)
                .open(path)
                .unwrap()
                .set_len(10)
                .unwrap();
        }
        for ((_, map), guard) in maps.iter().zip(&guards) {
            assert_eq!(map[map.len() - 1], 0);
            assert!(guard.shrank());
        }
    }
}

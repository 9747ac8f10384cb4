//! The `brc` binary's global allocator: the system's, with every block of
//! [`BIG`] bytes or more advised onto transparent huge pages.
//!
//! Why: a million stations end a run with two big fresh blocks, the
//! sorted entries (56 bytes a name) and then the summary's printed text
//! (24 bytes a name), about 80 MB that the kernel faulted in 4 KiB at a
//! time: tens of thousands of page faults, the largest piece of the run's
//! system time on a machine whose host backs each fresh page on first
//! touch. Advised, the same blocks take one fault per 2 MiB
//! (docs/PERFORMANCE.md, *Memory*). Small blocks, the common case, cost
//! one compare more.
//!
//! The advice is only that: a kernel without transparent huge pages, or
//! out of them, gives small pages, and the blocks' contents and layout
//! are the system allocator's.

use std::alloc::{GlobalAlloc, Layout, System};

use crate::bits::HUGE_PAGE;

/// The system allocator, advising big blocks onto huge pages.
pub struct HugeBlocks;

/// The smallest block advised: one that surely holds a whole aligned huge
/// page, whatever its start.
pub const BIG: usize = 2 * HUGE_PAGE;

/// Advises the huge pages wholly inside the block at `p` of `size` bytes.
fn advise(p: *mut u8, size: usize) {
    if size < BIG || p.is_null() {
        return;
    }
    let start = (p as usize).next_multiple_of(HUGE_PAGE);
    let end = (p as usize + size) / HUGE_PAGE * HUGE_PAGE;
    #[cfg(target_os = "linux")]
    // SAFETY: `start..end` lies inside the block just allocated and is
    // page-aligned; `MADV_HUGEPAGE` changes no byte of it, only how the
    // kernel backs the pages not yet touched. A failure leaves small pages.
    unsafe {
        libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, end);
}

// SAFETY: every call is forwarded to `System` with the caller's own
// arguments, so the blocks and their layouts are `System`'s; `advise`
// only gives the kernel advice on pages inside a block it returned.
unsafe impl GlobalAlloc for HugeBlocks {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded from the caller.
        let p = unsafe { System.alloc(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded from the caller.
        let p = unsafe { System.alloc_zeroed(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        // SAFETY: forwarded from the caller.
        unsafe { System.dealloc(p, layout) }
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded from the caller.
        let q = unsafe { System.realloc(p, layout, new_size) };
        advise(q, new_size);
        q
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The `VmFlags` line of the mapping in `/proc/self/smaps` that holds
    /// `addr`.
    fn vm_flags(addr: usize) -> String {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut inside = false;
        for line in smaps.lines() {
            let range = line.split_once(' ').and_then(|(r, _)| r.split_once('-'));
            if let Some((lo, hi)) = range {
                if let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                {
                    inside = (lo..hi).contains(&addr);
                    continue;
                }
            }
            if inside && line.starts_with("VmFlags:") {
                return line.to_string();
            }
        }
        panic!("no mapping holds {addr:#x}");
    }

    /// Whether the mapping holding `addr` is advised onto huge pages
    /// (`hg`), or the kernel has no transparent huge pages to advise.
    fn advised(addr: usize) -> bool {
        let thp = std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists();
        !thp || vm_flags(addr).split_whitespace().any(|f| f == "hg")
    }

    #[test]
    fn big_blocks_are_advised_and_keep_their_bytes() {
        let big = Layout::from_size_align(3 * HUGE_PAGE, 8).unwrap();
        // SAFETY: a non-zero size; freed below with the same layout.
        let p = unsafe { HugeBlocks.alloc(big) };
        assert!(!p.is_null());
        assert!(advised((p as usize).next_multiple_of(HUGE_PAGE)));
        // The block is the caller's to write, end to end.
        // SAFETY: `p` holds `big.size()` bytes.
        unsafe {
            p.write_bytes(7, big.size());
            assert_eq!(*p.add(big.size() - 1), 7);
        }
        // SAFETY: grown from the block allocated above, with its layout.
        let q = unsafe { HugeBlocks.realloc(p, big, 5 * HUGE_PAGE) };
        assert!(!q.is_null());
        // SAFETY: the first `big.size()` bytes were kept.
        assert_eq!(unsafe { *q.add(big.size() - 1) }, 7);
        // A huge page wholly inside the grown block, past its first 3.
        assert!(advised(
            (q as usize + 4 * HUGE_PAGE) / HUGE_PAGE * HUGE_PAGE
        ));
        let grown = Layout::from_size_align(5 * HUGE_PAGE, 8).unwrap();
        // SAFETY: allocated above with this layout.
        unsafe { HugeBlocks.dealloc(q, grown) };
    }
}

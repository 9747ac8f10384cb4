//! The short table's slot array, in an anonymous mapping.

use memmap2::MmapMut;
#[cfg(target_os = "linux")]
use memmap2::RemapOptions;

use super::Slot;
use crate::bits::HUGE_PAGE;

/// The slot array: an anonymous mapping rather than a `Vec`, so that it
/// grows where it is: the kernel moves its pages (`mremap`), so that
/// growing faults in only the new part. A new array faulted in and filled
/// both halves, which was most of what inserting a million names cost
/// (docs/PERFORMANCE.md, *Memory*).
///
/// Fresh pages are written with zeros (empty slots) as soon as they are
/// mapped, although they read as zeros already: a page first read maps
/// the kernel's shared zero page, and replacing it at the first write
/// flushes the other threads' TLBs, which cost more than the writes.
pub(in crate::table) struct Slots(MmapMut);

impl Slots {
    /// `n` empty slots, every page written.
    pub(super) fn empty(n: usize) -> Slots {
        let bytes = n * std::mem::size_of::<Slot>();
        let mut slots = Slots::map(bytes);
        slots.0.fill(0);
        slots
    }

    /// `bytes` of fresh mapping, not yet written.
    fn map(bytes: usize) -> Slots {
        let slots = Slots(MmapMut::map_anon(bytes).expect("memory for a table's slots"));
        slots.huge();
        slots
    }

    /// Makes the array `times` as long; the new slots are empty.
    pub(super) fn lengthen(&mut self, times: usize) {
        let old = self.0.len();
        let bytes = old * times;
        #[cfg(target_os = "linux")]
        // SAFETY: `remap` may move the mapping, leaving references into it
        // dangling; `&mut self` proves there are none (the scanner's raw
        // pointer is taken anew after every insert, the only way here).
        unsafe { self.0.remap(bytes, RemapOptions::new().may_move(true)) }
            .expect("memory for a table's slots");
        #[cfg(not(target_os = "linux"))]
        {
            let mut grown = Slots::map(bytes);
            grown.0[..old].copy_from_slice(&self.0);
            *self = grown;
        }
        self.huge();
        self.0[old..].fill(0);
    }

    /// Asks the kernel for huge pages (`MADV_HUGEPAGE`), which it uses for
    /// the pages not yet written: a million names' 64 MiB of slots then
    /// take one page fault per 2 MiB instead of 512, which saves nearly all
    /// the time the kernel spent on them (docs/PERFORMANCE.md, *Memory*).
    /// Advice only: a kernel without transparent huge pages, or out of
    /// them, gives small pages.
    fn huge(&self) {
        #[cfg(target_os = "linux")]
        if self.0.len() >= HUGE_PAGE {
            let _ = self.0.advise(memmap2::Advice::HugePage);
        }
    }
}

impl Clone for Slots {
    fn clone(&self) -> Slots {
        let mut copy = Slots::map(self.0.len());
        copy.0.copy_from_slice(&self.0);
        copy
    }
}

impl std::ops::Deref for Slots {
    type Target = [Slot];

    fn deref(&self) -> &[Slot] {
        bytemuck::cast_slice(&self.0)
    }
}

impl std::ops::DerefMut for Slots {
    fn deref_mut(&mut self) -> &mut [Slot] {
        bytemuck::cast_slice_mut(&mut self.0)
    }
}

#!/usr/bin/env python3
"""Usage: scripts/folios.py FILE [BYTES]

How the page cache holds FILE (its first BYTES, default all): the sizes of
the folios its pages sit in, and the share of the pages in each size.

Why it matters: brc maps its input, and the kernel's work to map a cached
file grows with the number of folios it sits in. Read once from disk, a
file is held in folios of up to 2 MiB, mapped by a few page-table entries
each; read back by a reader that maps it without readahead, it is held in
4 KiB pages, and every run then pays for each page (docs/PERFORMANCE.md,
*Memory*). Same bytes, same program, different times.

Maps FILE (touching every page, so any page not cached is read in, in
whatever folios the kernel then picks), finds each page's frame in
/proc/self/pagemap and its flags in /proc/kpageflags, and counts the runs
of compound pages. Needs root: without CAP_SYS_ADMIN the kernel hides page
frame numbers.
"""

import collections
import mmap
import os
import struct
import sys

PAGE = os.sysconf("SC_PAGE_SIZE")
# /proc/kpageflags bits (Documentation/admin-guide/mm/pagemap.rst).
COMPOUND_HEAD = 1 << 15
COMPOUND_TAIL = 1 << 16
PRESENT = 1 << 63
PFN_MASK = (1 << 55) - 1


def folio_sizes(path, limit=None):
    """Counter of folio sizes in pages, over the mapped pages of path."""
    size = os.path.getsize(path)
    if limit is not None:
        size = min(size, limit)
    size -= size % PAGE
    if size == 0:
        return collections.Counter()
    with open(path, "rb") as f, mmap.mmap(f.fileno(), size, prot=mmap.PROT_READ) as m:
        for off in range(0, size, PAGE):
            m[off]
        # The mapping's address is not exposed by mmap; find it in maps.
        real = os.path.realpath(path)
        base = None
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split()
                if len(fields) >= 6 and fields[5] == real:
                    start, end = (int(x, 16) for x in fields[0].split("-"))
                    if end - start == size:
                        base = start
        if base is None:
            sys.exit(f"folios.py: {path}: mapping not found in /proc/self/maps")
        pages = size // PAGE
        with open("/proc/self/pagemap", "rb") as pagemap:
            pagemap.seek(base // PAGE * 8)
            entries = struct.unpack(f"<{pages}Q", pagemap.read(pages * 8))
        sizes = collections.Counter()
        run = 0
        with open("/proc/kpageflags", "rb") as kpageflags:
            for entry in entries:
                pfn = entry & PFN_MASK
                if not entry & PRESENT or pfn == 0:
                    sys.exit(f"folios.py: {path}: page frames hidden (run as root)")
                kpageflags.seek(pfn * 8)
                (flags,) = struct.unpack("<Q", kpageflags.read(8))
                if flags & COMPOUND_TAIL and run:
                    run += 1
                    continue
                if run:
                    sizes[run] += 1
                run = 1
        if run:
            sizes[run] += 1
        return sizes


def main(argv):
    if len(argv) not in (2, 3) or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) == 2 and argv[1] in ("-h", "--help") else 2
    limit = int(float(argv[2])) if len(argv) == 3 else None
    sizes = folio_sizes(argv[1], limit)
    total = sum(k * v for k, v in sizes.items()) or 1
    for pages in sorted(sizes):
        share = 100 * pages * sizes[pages] / total
        print(f"{pages * PAGE // 1024:>6} KiB folios: {sizes[pages]:>8}  ({share:5.1f}% of pages)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

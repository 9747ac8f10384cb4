#!/usr/bin/env python3
"""Reads standard input to its end and prints the byte count: the floor under
`cat FILE | brc -`. It moves bytes through the pipe exactly as brc's reader
does (a 1 MiB pipe buffer, reads of up to 4 MiB) and does nothing with them,
so `cat FILE | scripts/drain.py` is the time the pipe alone takes on this
machine (docs/PERFORMANCE.md, *Memory*)."""

import fcntl
import os
import sys

F_SETPIPE_SZ = 1031  # from <fcntl.h>; Linux only, as brc's own request

try:
    fcntl.fcntl(0, F_SETPIPE_SZ, 1 << 20)
except OSError:
    pass  # not a pipe: nothing to grow, as in brc
buf = memoryview(bytearray(4 << 20))
total = 0
while n := os.readv(0, [buf]):
    total += n
print(total)
sys.exit(0)

"""Files cut short while brc reads them (mapped): an OSError that says so,
never a crash, however many are read at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import brc

#: The library's reason, as the command line prints it after the path.
SHRANK = "the file shrank while it was being read"

ROWS = b"Hamburg;12.0\nBulawayo;8.9\n"


def rows(size: int) -> bytes:
    """Valid rows of about ``size`` bytes."""
    return ROWS * (size // len(ROWS))


def third(data: bytes) -> int:
    """The length of the first third of ``data``, cut at a line's end: a
    read that starts after the cut sees a whole, smaller file."""
    return len(data) // 3 // len(ROWS) * len(ROWS)


def test_a_file_cut_short_while_read_raises_why(tmp_path):
    """A thread truncates the file while `brc.aggregate` reads it in
    another: the cut must land while the file is mapped and read, not
    before it is opened or after it is done, so it is tried at delays
    spread over a read's time, a bounded number of times."""
    path = tmp_path / "big.txt"
    data = rows(48 << 20)
    path.write_bytes(data)
    started = time.perf_counter()
    whole = brc.aggregate(path, threads=1)
    took = time.perf_counter() - started
    seen = []
    for attempt in range(40):
        path.write_bytes(data)
        outcome = {}

        def read():
            try:
                outcome["summary"] = brc.aggregate(path, threads=1)
            except OSError as e:
                outcome["error"] = e

        reader = threading.Thread(target=read)
        reader.start()
        time.sleep(took * (attempt % 8 + 1) / 10)
        os.truncate(path, third(data))
        reader.join()
        error = outcome.get("error")
        if error is not None and error.strerror == SHRANK:
            assert (type(error), error.errno, error.filename) == (OSError, None, str(path))
            assert str(error) == f"[Errno None] {SHRANK}: {str(path)!r}"
            return
        seen.append(repr(error) if error is not None else outcome["summary"] == whole)
    pytest.fail(f"no read was cut short in {len(seen)} tries: {seen}")


# A process that reads each file in a thread of its own, all starting at
# once, and cuts each file to a third as soon as its reader starts; it
# prints what each read gave. The reference engine, the slowest, keeps
# every file mapped while the others start and are cut.
MANY = """
import json, os, queue, sys, threading
import brc

paths, cut = sys.argv[1:-1], int(sys.argv[-1])
outcomes = [None] * len(paths)
start = threading.Barrier(len(paths))
reading = queue.SimpleQueue()

def read(k):
    start.wait()
    reading.put(k)
    try:
        outcomes[k] = brc.aggregate(paths[k], threads=1, engine="naive").format("csv")
    except Exception as e:
        outcomes[k] = [type(e).__name__, getattr(e, "strerror", None) or str(e)]

readers = [threading.Thread(target=read, args=(k,)) for k in range(len(paths))]
for reader in readers:
    reader.start()
for _ in readers:
    os.truncate(paths[reading.get()], cut)
for reader in readers:
    reader.join()
print(json.dumps(outcomes))
"""


def test_many_files_cut_short_at_once_never_crash(tmp_path):
    """100 files read at once, each mapped by a thread of its own and cut
    to a third meanwhile: the process lives, and each read gives the whole
    file's summary, the third's, or the shrink's OSError. (Reading a page
    cut from a mapping is a SIGBUS, which would kill the process unless
    brc guards every mapping at once.)"""
    data = rows(6 << 20)
    cut = third(data)
    expected = [
        brc.aggregate(write(tmp_path / "third.txt", data[:cut])).format("csv"),
        brc.aggregate(write(tmp_path / "whole.txt", data)).format("csv"),
        ["OSError", SHRANK],
    ]
    paths = [str(write(tmp_path / f"{k}.txt", data)) for k in range(100)]
    done = subprocess.run(
        [sys.executable, "-c", MANY, *paths, str(cut)],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stderr == ""
    outcomes = json.loads(done.stdout)
    unexpected = [o for o in outcomes if o not in expected]
    assert not unexpected, unexpected


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path

"""Runs a shell command and waits for every process it starts, even those
it leaves running when it exits; reports their time and peak memory.

Usage: reap.py OUT.json COMMAND

Some programs return before their work is done: austindonisan/1brc and
lehuyduc/1brc-simd exit while worker processes they forked still unmap the
file. Their parent's exit is what a shell (and hyperfine) waits for, and
`/usr/bin/time` counts only the processes it waits for, so neither sees
those workers' CPU time or memory. This script makes itself the workers'
reaper (Linux's PR_SET_CHILD_SUBREAPER: orphaned descendants are handed to
it instead of to init), waits for all of them, and writes

    {"exit_wall_s": ..., "wall_s": ..., "user_s": ..., "sys_s": ..., "max_rss_kib": ...}

exit_wall_s: until COMMAND exited; wall_s: until its last process did;
user_s and sys_s: CPU time of all of them; max_rss_kib: the largest peak
resident set of any one of them. The command's stdout is discarded. Exits
with the command's status (1 if it was killed by a signal).
"""

import ctypes
import json
import os
import resource
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def become_reaper():
    """Makes this process the reaper of its orphaned descendants (Linux);
    raises OSError if the kernel refuses."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def reap_all():
    """Waits until no child is left, orphans handed to this reaper too."""
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[3], file=sys.stderr)
        return 2
    try:
        become_reaper()
    except OSError as e:
        print(f"reap.py: {e}", file=sys.stderr)
        return 1
    start = time.perf_counter()
    status = subprocess.run(argv[2], shell=True, stdout=subprocess.DEVNULL).returncode
    exited = time.perf_counter()
    reap_all()
    done = time.perf_counter()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(argv[1], "w", encoding="utf-8") as f:
        json.dump(
            {
                "exit_wall_s": exited - start,
                "wall_s": done - start,
                "user_s": usage.ru_utime,
                "sys_s": usage.ru_stime,
                "max_rss_kib": usage.ru_maxrss,
            },
            f,
        )
    return status if status >= 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))

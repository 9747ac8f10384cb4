#!/usr/bin/env python3
"""Usage: scripts/ab.py [--pairs N] [--warmup N] COMMAND_A COMMAND_B

Times two shell commands side by side: A B A B ..., N pairs (default 21)
after WARMUP runs of each (default 1), and prints the median of the
per-pair ratios B/A of CPU time (user + system, the command and every
process it starts) and of wall time, with the range of the CPU ratios.

Wall time runs until the command exits; CPU time also counts processes
it leaves running, which each run waits for before the next starts (on
Linux this script is their reaper, as scripts/compare/reap.py is): some
1BRC programs exit while forked workers still unmap the file.

On a machine shared with other work, whole runs drift with the hour;
alternating the two commands exposes both to the same drift, and the
median of the pairs' ratios shrugs off a disturbed pair: the method behind
the ratios in docs/PERFORMANCE.md ("How to measure"). Each
command runs through /bin/sh with its stdout discarded; a command that
fails stops the comparison.

Example, a build against the one before it on the 10K set:
  scripts/ab.py 'old/brc bench/data/measurements-10k-1e8.txt' \\
                'target/release/brc bench/data/measurements-10k-1e8.txt'
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "compare"))
from reap import become_reaper, reap_all  # noqa: E402


def run(command):
    """Runs `command`; returns its (wall, CPU) seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, shell=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    reap_all()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"ab.py: `{command}` exited with status {done.returncode}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main():
    parser = argparse.ArgumentParser(
        usage=__doc__.splitlines()[0][len("Usage: ") :],
        description=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("a", metavar="COMMAND_A", help="the baseline")
    parser.add_argument("b", metavar="COMMAND_B", help="the candidate")
    parser.add_argument("--pairs", type=int, default=21, help="alternated pairs (default 21)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs of each first (default 1)")
    args = parser.parse_args()
    if args.pairs < 1 or args.warmup < 0:
        parser.error("--pairs must be at least 1 and --warmup at least 0")
    if sys.platform.startswith("linux"):
        become_reaper()

    for _ in range(args.warmup):
        run(args.a)
        run(args.b)
    pairs = [(run(args.a), run(args.b)) for _ in range(args.pairs)]

    cpu = [b[1] / a[1] for a, b in pairs if a[1] > 0]
    wall = [b[0] / a[0] for a, b in pairs]
    for name, k in (("A", 0), ("B", 1)):
        runs = [p[k] for p in pairs]
        print(
            f"{name}: median wall {statistics.median(r[0] for r in runs):.3f} s, "
            f"CPU {statistics.median(r[1] for r in runs):.3f} s"
        )
    if cpu:
        print(
            f"B/A over {args.pairs} pairs: CPU {statistics.median(cpu):.3f}x "
            f"(pairs {min(cpu):.2f}-{max(cpu):.2f}x), wall {statistics.median(wall):.3f}x"
        )
    else:
        print(f"B/A over {args.pairs} pairs: wall {statistics.median(wall):.3f}x (no CPU time measured)")


if __name__ == "__main__":
    main()

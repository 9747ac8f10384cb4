#!/usr/bin/env python3
"""Usage: scripts/ab.py [--pairs N] [--warmup N] [--pause S] [--json FILE] COMMAND_A COMMAND_B

Times two shell commands side by side: A B A B ..., N pairs (default 21)
after WARMUP runs of each (default 1), and prints the median of the
per-pair ratios B/A of CPU time (user + system, the command and every
process it starts) and of wall time, with the range of the CPU ratios.

Wall time runs until the command exits; CPU time also counts processes
it leaves running, which each run waits for before the next starts (on
Linux this script is their reaper, as scripts/compare/reap.py is): some
1BRC programs exit while forked workers still unmap the file. With
--pause, each run is followed by S seconds of quiet, so that whatever
a run leaves to the kernel (unmapping, freeing its pages) is done before
the next starts.

On a machine shared with other work, whole runs drift with the hour;
alternating the two commands exposes both to the same drift, and the
median of the pairs' ratios shrugs off a disturbed pair: the method behind
the ratios in docs/PERFORMANCE.md ("How to measure"). Each
command runs through /bin/sh with its stdout discarded; a command that
fails stops the comparison. With --json, the runs and the ratios also go
to FILE (scripts/compare.sh uses it for the side-by-side tables of
docs/benchmarks.md).

Example, a build against the one before it on the 10K set:
  scripts/ab.py 'old/brc bench/data/measurements-10k-1e8.txt' \\
                'target/release/brc bench/data/measurements-10k-1e8.txt'
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "compare"))
from reap import become_reaper, reap_all  # noqa: E402


def run(command, pause=0.0):
    """Runs `command`, then waits `pause` seconds; returns its (wall, CPU)
    seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, shell=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    reap_all()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"ab.py: `{command}` exited with status {done.returncode}")
    time.sleep(pause)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def summary(a, b, pairs, pause=0.0):
    """The medians of `pairs`, each ((wall, CPU) of A, (wall, CPU) of B):
    each command's own, and of the pairs' ratios B/A, with their range;
    `pause`, the quiet after each run."""
    cpu = [rb[1] / ra[1] for ra, rb in pairs if ra[1] > 0]
    wall = [rb[0] / ra[0] for ra, rb in pairs]

    def own(k, command):
        return {
            "command": command,
            "wall_s": statistics.median(p[k][0] for p in pairs),
            "cpu_s": statistics.median(p[k][1] for p in pairs),
        }

    return {
        "pairs": len(pairs),
        "pause_s": pause,
        "a": own(0, a),
        "b": own(1, b),
        "wall_ratio": statistics.median(wall),
        "wall_ratio_range": [min(wall), max(wall)],
        "cpu_ratio": statistics.median(cpu) if cpu else None,
        "cpu_ratio_range": [min(cpu), max(cpu)] if cpu else None,
        "runs": [[ra[0], ra[1], rb[0], rb[1]] for ra, rb in pairs],
    }


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
    parser.add_argument("--pause", type=float, default=0.0, metavar="S", help="seconds of quiet after each run (default 0)")
    parser.add_argument("--json", metavar="FILE", help="also write the runs and ratios to FILE")
    args = parser.parse_args()
    if args.pairs < 1 or args.warmup < 0 or args.pause < 0:
        parser.error("--pairs must be at least 1, --warmup and --pause at least 0")
    if sys.platform.startswith("linux"):
        become_reaper()

    for _ in range(args.warmup):
        run(args.a, args.pause)
        run(args.b, args.pause)
    pairs = [(run(args.a, args.pause), run(args.b, args.pause)) for _ in range(args.pairs)]

    result = summary(args.a, args.b, pairs, args.pause)
    for name in ("a", "b"):
        print(
            f"{name.upper()}: median wall {result[name]['wall_s']:.3f} s, "
            f"CPU {result[name]['cpu_s']:.3f} s"
        )
    wall = result["wall_ratio"]
    if result["cpu_ratio"] is not None:
        low, high = result["cpu_ratio_range"]
        print(
            f"B/A over {args.pairs} pairs: CPU {result['cpu_ratio']:.3f}x "
            f"(pairs {low:.2f}-{high:.2f}x), wall {wall:.3f}x"
        )
    else:
        print(f"B/A over {args.pairs} pairs: wall {wall:.3f}x (no CPU time measured)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Wall time of the Python package against the `brc` command, in alternated
runs (A B A B ...), medians and ratios: the figures of docs/DISTRIBUTED.md.

Two comparisons on one file (generated if missing, with `brc generate`):

1. `brc.aggregate(file)` against `brc file`: A is the call inside a Python
   process (and, apart, the whole `python -c` process, start-up and import
   included); B the command's whole process.
2. `brc.dask.aggregate(file)` on a running `distributed.LocalCluster` of
   WORKERS single-threaded worker processes against `brc --threads WORKERS
   file`.

Each run's output is checked against the command's, so a fast wrong answer
is an error, not a figure. Run it with the venv of scripts/test.sh (it
needs the package installed: `pip install ./python`):

    .venv/bin/python scripts/measure_python.py --rows 1e8 --pairs 7
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BRC = ROOT / "target" / "release" / "brc"


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Figures are wall times in seconds; the machine may be shared, "
        "so compare medians of alternated pairs, never single runs.",
    )
    p.add_argument("--rows", default="1e8", help="rows of the generated file (default 1e8)")
    p.add_argument("--file", type=Path, help="the measurements file (default /tmp/m<ROWS>.txt)")
    p.add_argument("--pairs", type=int, default=5, help="alternated A/B pairs per comparison")
    p.add_argument("--workers", type=int, default=2, help="Dask worker processes (1 thread each)")
    p.add_argument("--split-bytes", default="256MiB", help="brc.dask.aggregate's split_bytes")
    p.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    return p.parse_args()


def timed(f) -> tuple[float, object]:
    t = time.perf_counter()
    out = f()
    return time.perf_counter() - t, out


def cli(*args: str) -> tuple[float, str]:
    t, done = timed(lambda: subprocess.run([str(BRC), *args], capture_output=True, check=True))
    return t, done.stdout.decode()


def median_ratio(a: list[float], b: list[float]) -> dict:
    return {
        "a": a, "b": b,
        "median_a": statistics.median(a), "median_b": statistics.median(b),
        "ratio": statistics.median(a) / statistics.median(b),
        # Each pair's ratio: their spread shows the machine's noise.
        "pair_ratios": [x / y for x, y in zip(a, b)],
    }


def main() -> int:
    args = parse_args()
    import brc
    import brc.dask
    from distributed import Client, LocalCluster

    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    path = args.file or Path(f"/tmp/m{args.rows}.txt")
    if not path.exists():
        subprocess.run([str(BRC), "generate", "--rows", args.rows, "-o", str(path)], check=True)
    print(f"{path}: {path.stat().st_size / 1e9:.2f} GB", file=sys.stderr)
    file = str(path)
    _, want = cli(file)  # warm the page cache
    results = {"file": file, "bytes": path.stat().st_size, "cpus": os.cpu_count()}

    # 1. brc.aggregate against the command, every core.
    call, whole, command = [], [], []
    script = "import brc, sys; sys.stdout.write(brc.aggregate(sys.argv[1]).format('official'))"
    for _ in range(args.pairs):
        t, summary = timed(lambda: brc.aggregate(file).format("official"))
        assert summary == want
        call.append(t)
        t, done = timed(lambda: subprocess.run(
            [sys.executable, "-c", script, file], capture_output=True, check=True))
        assert done.stdout.decode() == want
        whole.append(t)
        t, out = cli(file)
        assert out == want
        command.append(t)
    results["aggregate_call_vs_cli"] = median_ratio(call, command)
    results["aggregate_process_vs_cli"] = median_ratio(whole, command)

    # 2. brc.dask.aggregate on a running cluster against --threads WORKERS.
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        brc.dask.aggregate(file, split_bytes=args.split_bytes, client=client)  # warm-up
        dask, threads = [], []
        for _ in range(args.pairs):
            t, summary = timed(lambda: brc.dask.aggregate(
                file, split_bytes=args.split_bytes, client=client).format("official"))
            assert summary == want
            dask.append(t)
            t, out = cli("--threads", str(args.workers), file)
            assert out == want
            threads.append(t)
    results["dask_vs_cli_threads"] = median_ratio(dask, threads)

    for name in ("aggregate_call_vs_cli", "aggregate_process_vs_cli", "dask_vs_cli_threads"):
        r = results[name]
        spread = ", ".join(f"{x:.3f}" for x in r["pair_ratios"])
        print(f"{name}: A {r['median_a']:.3f} s, B {r['median_b']:.3f} s, "
              f"A/B {r['ratio']:.3f} (pairs: {spread})")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Collects one comparison run into bench/results/<date>-<host>.json.

scripts/compare.sh calls it four ways:

    results.py begin  --out META ...           settings, machine, versions
    results.py add    --entries JSONL ...      one tool on one data set
    results.py pair   --pairs JSONL ...        brc and a peer, alternated
    results.py finish --meta META --entries JSONL [--pairs JSONL]
                      --reference LABEL --out JSON

`add` reads the tool's hyperfine `--export-json` file and either its
`/usr/bin/time -v` report or, for a peer (a program from another
repository), the report of scripts/compare/reap.py, which also counts the
processes it leaves running after it exits; `finish` derives the figures the renderer
shows (extrapolation to the full row count, rows/s, ns/row/core, ratio to
brc's default engine) so that scripts/render_benchmarks.py only formats.
"""

import argparse
import datetime
import json
import os
import platform
import re
import socket

SCHEMA = 1


def machine(load_at_start):
    """What the figures were measured on; `load_at_start` is the load
    average before the calling script began its own work."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            info = f.read()
        names = re.findall(r"^model name\s*:\s*(.+)$", info, re.M)
        if names:
            cpu = names[0].strip()
        # Virtual machines often name only the vendor's line ("AMD EPYC"):
        # the family and model tell its generations apart.
        family = re.search(r"^cpu family\s*:\s*(\d+)$", info, re.M)
        model = re.search(r"^model\s*:\s*(\d+)$", info, re.M)
        if family and model:
            cpu += f", family {family.group(1)} model {model.group(1)}"
    except OSError:
        pass
    memory_gib = None
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            kib = int(re.search(r"^MemTotal:\s*(\d+)", f.read(), re.M).group(1))
        memory_gib = round(kib / 2**20, 1)
    except (OSError, AttributeError):
        pass
    return {
        "host": socket.gethostname(),
        "cpu": cpu,
        "logical_cores": os.cpu_count(),
        "memory_gib": memory_gib,
        "os": f"{platform.system()} {platform.release()}",
        # Other work on the machine inflates wall times; the renderer warns.
        "load_average_at_start": round(load_at_start, 2),
    }


def begin(args):
    versions = dict(v.split("=", 1) for v in args.version)
    meta = {
        "schema": SCHEMA,
        "date": datetime.date.today().isoformat(),
        "command": args.command,
        "machine": machine(args.load_at_start),
        "versions": versions,
        "settings": {
            "rows": args.rows,
            "small_rows": args.small_rows,
            "warmup": args.warmup,
            "runs": args.runs,
            "threads": args.threads,
        },
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2)


def time_v(path):
    """The fields of a `/usr/bin/time -v` report that the results keep."""
    with open(path, encoding="utf-8") as f:
        text = f.read()

    def field(label):
        m = re.search(r"^\s*" + re.escape(label) + r":\s*(\S+)\s*$", text, re.M)
        return m.group(1) if m else None

    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)")
    seconds = 0.0
    for part in wall.split(":"):
        seconds = seconds * 60 + float(part)
    return {
        "wall_s": seconds,
        "user_s": float(field("User time (seconds)")),
        "sys_s": float(field("System time (seconds)")),
        "max_rss_kib": int(field("Maximum resident set size (kbytes)")),
    }


def add(args):
    entry = {
        "dataset": args.dataset,
        "tool": args.tool,
        "group": args.group,
        "threads": args.threads,
        "command": args.command,
        "file": args.file,
        "file_bytes": os.path.getsize(args.file),
        "rows_measured": args.rows_measured,
        "rows_full": args.rows_full,
        "status": args.status,
        "check": args.check,
    }
    if args.status == "ok":
        with open(args.hyperfine, encoding="utf-8") as f:
            run = json.load(f)["results"][0]
        entry["wall_s"] = {k: run[k] for k in ("median", "mean", "stddev", "min", "max")}
        entry["wall_s"]["runs"] = run["times"]
        if args.reaped:
            # hyperfine's CPU time misses the processes left running.
            with open(args.reaped, encoding="utf-8") as f:
                entry["reaped"] = json.load(f)
            entry["cpu_s"] = entry["reaped"]["user_s"] + entry["reaped"]["sys_s"]
        else:
            entry["cpu_s"] = run["user"] + run["system"]
            entry["time_v"] = time_v(args.timev)
    with open(args.entries, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


def pair(args):
    """Records scripts/ab.py's report of a peer (A) and brc (B) run
    alternately on one data set with the same thread count."""
    with open(args.ab, encoding="utf-8") as f:
        ab = json.load(f)
    entry = {
        "dataset": args.dataset,
        "peer": args.peer,
        "brc": args.brc,
        "threads": args.threads,
        "pairs": ab["pairs"],
        "pause_s": ab["pause_s"],
        # brc's time over the peer's: under 1 where brc is faster.
        "wall_ratio": ab["wall_ratio"],
        "wall_ratio_range": ab["wall_ratio_range"],
        "cpu_ratio": ab["cpu_ratio"],
        "cpu_ratio_range": ab["cpu_ratio_range"],
        "peer_wall_s": ab["a"]["wall_s"],
        "brc_wall_s": ab["b"]["wall_s"],
        "runs": ab["runs"],
    }
    with open(args.pairs, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


def finish(args):
    with open(args.meta, encoding="utf-8") as f:
        out = json.load(f)
    with open(args.entries, encoding="utf-8") as f:
        entries = [json.loads(line) for line in f if line.strip()]
    references = {
        e["dataset"]: e for e in entries if e["tool"] == args.reference and e["status"] == "ok"
    }
    for e in entries:
        if e["status"] != "ok":
            continue
        # Tools too slow for the full file ran on a smaller one from the same
        # generator; their time is scaled linearly to the full row count.
        scale = e["rows_full"] / e["rows_measured"]
        e["extrapolated"] = scale != 1
        e["wall_full_s"] = e["wall_s"]["median"] * scale
        e["cpu_full_s"] = e["cpu_s"] * scale
        e["rows_per_s"] = e["rows_measured"] / e["wall_s"]["median"]
        e["ns_per_row_core"] = e["cpu_s"] / e["rows_measured"] * 1e9
    for e in entries:
        if e["status"] == "ok":
            ref = references.get(e["dataset"])
            e["ratio"] = e["wall_full_s"] / ref["wall_full_s"] if ref else None
    out["machine"]["load_average_at_end"] = round(os.getloadavg()[0], 2)
    out["reference"] = args.reference
    out["results"] = entries
    out["side_by_side"] = []
    if args.pairs and os.path.exists(args.pairs):
        with open(args.pairs, encoding="utf-8") as f:
            out["side_by_side"] = [json.loads(line) for line in f if line.strip()]
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=2)
        f.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)

    p = sub.add_parser("begin")
    p.add_argument("--out", required=True)
    p.add_argument("--command", required=True)
    p.add_argument("--rows", type=int, required=True)
    p.add_argument("--small-rows", type=int, required=True)
    p.add_argument("--warmup", type=int, required=True)
    p.add_argument("--runs", type=int, required=True)
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--load-at-start", type=float, required=True)
    p.add_argument("--version", action="append", default=[], metavar="TOOL=VERSION")
    p.set_defaults(run=begin)

    p = sub.add_parser("add")
    p.add_argument("--entries", required=True)
    p.add_argument("--dataset", required=True)
    p.add_argument("--tool", required=True)
    p.add_argument("--group", choices=["brc", "other", "peer"], required=True)
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--command", required=True)
    p.add_argument("--file", required=True)
    p.add_argument("--rows-measured", type=int, required=True)
    p.add_argument("--rows-full", type=int, required=True)
    p.add_argument("--status", choices=["ok", "failed"], required=True)
    p.add_argument("--check", required=True)
    p.add_argument("--hyperfine")
    p.add_argument("--timev")
    p.add_argument("--reaped", help="reap.py's report, instead of --timev")
    p.set_defaults(run=add)

    p = sub.add_parser("pair")
    p.add_argument("--pairs", required=True)
    p.add_argument("--dataset", required=True)
    p.add_argument("--peer", required=True, help="the peer's label (command A)")
    p.add_argument("--brc", required=True, help="brc's label (command B)")
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--ab", required=True, help="scripts/ab.py's --json report")
    p.set_defaults(run=pair)

    p = sub.add_parser("finish")
    p.add_argument("--meta", required=True)
    p.add_argument("--entries", required=True)
    p.add_argument("--pairs", help="the side-by-side runs recorded by `pair`, if any")
    p.add_argument("--reference", required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(run=finish)

    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()

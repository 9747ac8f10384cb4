"""Renders a comparison run into docs/benchmarks.md and docs/benchmarks.svg.

Usage: render_benchmarks.py [RESULTS.json] [--also RESULTS.json]... [--parquet RESULTS.txt]
                            [--csv RESULTS.txt] [--stats RESULTS.txt] [--md PATH] [--svg PATH]

RESULTS.json is one file written by scripts/compare.sh; without it, the
newest in bench/results/ (by the date inside, then by name). Each --also
is another such run, from another CPU or of another row count, shown in a
section of its own after the main run's tables (the chart is the main
run's). The page's
Parquet set comes from RESULTS.txt, the output of scripts/parquet.sh;
without it, the newest bench/results/*-parquet.txt (by name, which starts
with its date), if any; the CSV set likewise from scripts/csv.sh's output
(--csv, or the newest *-csv.txt) and the statistics set from the table
scripts/stats.sh writes (--stats, or the newest *-stats.txt). Only the
standard library is used: the chart is SVG written by this code, so that a
figure can always be traced back to the numbers in the results.
"""

import argparse
import glob
import json
import math
import os
import re
from xml.sax.saxutils import escape

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXTRAPOLATED = "†"
# Marks a peer: a program from another repository, built from a checkout the
# user provided (scripts/compare.sh, PEERS).
PEER = "‡"
# A load average above this share of the cores when the script started (before
# its own build and data generation) means the figures were measured on a busy
# machine.
BUSY = 0.5

KEYSET_NAMES = {"413": "413 stations (official set)", "10k": "10,000 stations"}

# The page is read on other machines, so it names no path of the one the
# figures were measured on (a peer's checkout, a brc binary outside the
# repository): such a path is shown cut to this and what follows it that
# every clone has.
ELIDED = "…/"
# A shell word, as far as paths go: split at blanks, `=` and operators,
# quoted strings and backslash-escaped characters (printf %q) kept whole.
WORD = re.compile(r"""(?:\\.|"[^"]*"|'[^']*'|[^\s=;&|()<>`"'])+""")


# --- numbers as people read them ---------------------------------------------


def seconds(s):
    if s < 1:
        return f"{s * 1000:.3g} ms"
    return f"{s:.3g} s" if s < 100 else f"{s:.0f} s"


def count(n):
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.3g}"


def rows_label(n):
    """1e8 for 100000000: the form the data files and commands use."""
    exponent = 0
    while n % 10 == 0 and n > 0:
        n //= 10
        exponent += 1
    return f"{n}e{exponent}" if exponent else str(n)


def mib(kib):
    return f"{kib / 1024:,.0f} MiB"


def size(nbytes):
    if nbytes < 2**30:
        return f"{nbytes / 2**20:,.0f} MiB"
    return f"{nbytes / 2**30:.2f} GiB"


def keyset_name(keys):
    return KEYSET_NAMES.get(keys, f"{keys} stations")


def machine_path(word):
    """Whether a word names a place outside the repository: an absolute
    path, one from a home directory or one that climbs with `..`."""
    path = word.replace('"', "").replace("'", "")
    return path.startswith(("/", "~")) or ".." in path.split("/")


def public(text, files=()):
    """`text` with each machine path cut to `…/` and, of what follows in
    it, a file of the repository named in `files` (relative to the
    repository's root) that it ends with, or else its last part."""

    def shorten(path):
        path = path.replace('"', "").replace("'", "")
        for f in files:
            if path.endswith("/" + f):
                return ELIDED + f
        name = os.path.basename(path.rstrip("/"))
        return ELIDED + name if name.strip(".") else ELIDED.rstrip("/")

    def cut(m):
        word = m.group(0)
        quote = word[0]
        if len(word) > 1 and quote in "\"'" and word.endswith(quote) and quote not in word[1:-1]:
            # A quoted string: one path (with blanks, maybe), or words
            # such as PEERS's NAME=CHECKOUT list.
            inner = word[1:-1]
            return quote + (shorten(inner) if machine_path(inner) else public(inner, files)) + quote
        return shorten(word) if machine_path(word) else word

    return WORD.sub(cut, text)


def repository_files(run):
    """The data files a run read, relative to the repository's root."""
    return sorted({r["file"] for r in run["results"] if not machine_path(r["file"])}, key=len, reverse=True)


# --- results -----------------------------------------------------------------


def newest_results():
    paths = glob.glob(os.path.join(ROOT, "bench", "results", "*.json"))
    if not paths:
        raise SystemExit("render_benchmarks.py: no bench/results/*.json; run scripts/compare.sh first")

    def key(path):
        with open(path, encoding="utf-8") as f:
            return (json.load(f).get("date", ""), os.path.basename(path))

    return max(paths, key=key)


def newest_lab_run(suffix):
    """The newest bench/results/*-SUFFIX.txt, by name (which starts with
    its date), if any."""
    paths = glob.glob(os.path.join(ROOT, "bench", "results", f"*-{suffix}.txt"))
    return max(paths, key=os.path.basename) if paths else None


def newest_parquet():
    return newest_lab_run("parquet")


PARQUET_TOOLS = {"duck": "DuckDB", "polars": "Polars"}
PARQUET_HEADER = re.compile(
    r"# (?P<command>.+?) \((?P<notes>.*)\)\n"
    r"# (?P<date>\d{4}-\d{2}-\d{2}), Model name: (?P<cpu>.+); load average before: (?P<load>[\d.]+)\n"
    r"# (?P<data>.+)\n"
)
PARQUET_PAIR = re.compile(
    r"^== (?P<tool>\w+) over brc\n"
    r"A: median wall (?P<brc_wall>[\d.]+) s, CPU [\d.]+ s\n"
    r"B: median wall (?P<wall>[\d.]+) s, CPU [\d.]+ s\n"
    r"B/A over (?P<pairs>\d+) pairs: CPU (?P<cpu_ratio>[\d.]+)x "
    r"\(pairs (?P<low>[\d.]+)-(?P<high>[\d.]+)x\), wall (?P<wall_ratio>[\d.]+)x$",
    re.M,
)


def lab_run(text, source, script, tools):
    """The figures of a run of `script` (scripts/parquet.sh or csv.sh), from
    its output: the header it starts with, a block per tool (of `tools`)
    from scripts/ab.py, brc's peak memory and, last, the tools' versions."""
    header = PARQUET_HEADER.match(text)
    pairs = [m.groupdict() for m in PARQUET_PAIR.finditer(text)]
    memory = re.search(r"^brc peak memory: (\d+) KiB", text, re.M)
    outputs = re.search(r"^outputs: (.+)$", text, re.M)
    blocks = re.findall(r"^== ", text, re.M)
    whole = pairs and len(pairs) == len(blocks) and all(p["tool"] in tools for p in pairs)
    if not (header and whole and memory and outputs):
        raise SystemExit(f"render_benchmarks.py: {source} is not the output of {script}")
    versions = text.rstrip("\n").split("\n")[-1]
    return {
        **header.groupdict(),
        "pairs": pairs,
        "memory_kib": int(memory.group(1)),
        "outputs": outputs.group(1),
        "versions": versions,
    }


def parquet_run(text, source):
    """The figures of a scripts/parquet.sh run, from its output."""
    return lab_run(text, source, "scripts/parquet.sh", PARQUET_TOOLS)


CSV_TOOLS = {
    "duck": "DuckDB",
    "polars": "Polars",
    "datamash": "GNU datamash",
    "miller": "Miller",
    "text": "brc on a text file",
}


def csv_run(text, source):
    """The figures of a scripts/csv.sh run, from its output."""
    return lab_run(text, source, "scripts/csv.sh", CSV_TOOLS)


def csv_section(run, source):
    """The CSV set: brc against each tool, run alternately."""
    lines = [
        "## CSV: a data logger's export",
        "",
        f"Measured by `{public(run['command'])}` ({public(run['notes'])}) on {run['date']}, "
        f"kept in `{public(source)}`.",
        # A line of its own, so that no line of the page runs past 300
        # characters; the paragraph reads the same.
        f"Machine: {run['cpu']}; load average {run['load']} before the run.",
        "",
        f"Data: {public(run['data'])}.",
        "",
        f"Checked before timing: {run['outputs']} (min, max and count as read, the mean "
        "from the sum, rounded half toward +∞ at 3 decimals).",
        "",
        "Each tool runs alternately with brc (tool, brc, tool, brc, …), `scripts/ab.py`; "
        "*÷ brc* is the median of the pairs' ratios: over 1 where brc is faster. "
        "*brc on a text file* is brc reading the challenge's format, about as many bytes: "
        "under 1 where CSV costs brc more than text.",
        "",
        "| Tool | Pairs | Its wall | brc's wall | ÷ brc, wall | ÷ brc, CPU (range) |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for p in run["pairs"]:
        lines.append(
            f"| {CSV_TOOLS[p['tool']]} | {p['pairs']} | {seconds(float(p['wall']))} "
            f"| {seconds(float(p['brc_wall']))} "
            f"| **{float(p['wall_ratio']):.2f}×** "
            f"| {float(p['cpu_ratio']):.2f}× ({float(p['low']):.2f}–{float(p['high']):.2f}×) |"
        )
    lines += ["", f"brc's peak memory: {mib(run['memory_kib'])}. Versions: {run['versions']}.", ""]
    return lines


# scripts/stats.sh's table: the header of scripts/parquet.sh's runs and a
# line of how the pairs ran, then a time table and a peak-RSS table, each
# headed by a line of its own and ended by a blank line; every row's
# columns are separated by blanks, a label (set and tool) first, the
# target (with "met" or "NOT met") last. See the script's timing().
STATS_HEADER = re.compile(PARQUET_HEADER.pattern + r"# (?P<runs>.+)\n")
STATS_NOTES = re.compile(r"BRC=(?P<brc>.+?) at (?P<commit>\w+)")
STATS_TIME_HEAD = re.compile(r"^time, medians of the pairs +wall s +CPU s +wall ratio +CPU ratio +target$", re.M)
STATS_TIME_ROW = re.compile(
    r"^(?P<set>\S+) (?P<tool>\S.*?) +(?P<wall>\d+\.\d+) +(?P<cpu>\d+\.\d+)"
    r"(?: +(?P<wall_ratio>\d+(?:\.\d+)?)x +(?P<cpu_ratio>\d+(?:\.\d+)?)x)?(?:  +(?P<target>\S.*))?$"
)
STATS_MEMORY_HEAD = re.compile(r"^peak RSS, MiB \(one run each\) +brc +(?P<stats>--stats \S+) +ratio +target$", re.M)
STATS_MEMORY_ROW = re.compile(
    r"^(?P<set>\S+) +(?P<plain>\d+\.\d+) +(?P<stats>\d+\.\d+) +(?P<ratio>\d+\.\d+)x(?:  +(?P<target>\S.*))?$"
)


def stats_table(text, head, row):
    """The rows `row` matches in the block `head` starts (up to a blank
    line), or None where a line of the block does not match."""
    m = head.search(text)
    if not m:
        return None, None
    block = text[m.end():].lstrip("\n").split("\n\n", 1)[0]
    rows = [row.match(line) for line in block.split("\n") if line]
    if not rows or not all(rows):
        return m, None
    return m, [r.groupdict() for r in rows]


def stats_run(text, source):
    """The figures of a scripts/stats.sh run, from the table it writes to
    bench/results/DATE-CPU-stats.txt."""
    header = STATS_HEADER.match(text)
    notes = header and STATS_NOTES.search(header.group("notes"))
    _, times = stats_table(text, STATS_TIME_HEAD, STATS_TIME_ROW)
    memory_head, memory = stats_table(text, STATS_MEMORY_HEAD, STATS_MEMORY_ROW)
    if not (header and notes and times and memory):
        raise SystemExit(f"render_benchmarks.py: {source} is not the table of scripts/stats.sh")
    tail = [line for line in text.rstrip("\n").split("\n\n")[-1].split("\n") if line]
    note = next((line for line in tail if line.startswith("Ratios are")), None)
    versions = tail[-1] if tail and tail[-1] != note else None
    return {
        **header.groupdict(),
        **notes.groupdict(),
        "times": times,
        "memory_stats": memory_head.group("stats"),
        "memory": memory,
        "note": note,
        "versions": versions,
    }


def times_sign(text):
    """A ratio as the table prints it (5.97x), with a times sign."""
    return f"{text}×" if text else ""


def stats_section(run, source):
    """The statistics set: brc --stats against a plain run and DuckDB."""
    lines = [
        "## Statistics: `--stats` against a plain run and DuckDB",
        "",
        f"Measured by `{public(run['command'])}` with `{public(run['brc'])}` built at commit "
        f"{run['commit']}, on {run['date']}, kept in `{public(source)}`. Machine: {run['cpu']}; "
        f"load average {run['load']} before the run.",
        "",
        f"Data: {public(run['data'])}. Runs: {run['runs']}.",
        "",
        "| Set | Tool | Wall (median) | CPU (median) | Ratio, wall | Ratio, CPU | Target |",
        "|---|---|--:|--:|--:|--:|---|",
    ]
    for r in run["times"]:
        lines.append(
            f"| {r['set']} | {r['tool']} | {seconds(float(r['wall']))} | {seconds(float(r['cpu']))} "
            f"| {times_sign(r['wall_ratio'])} | {times_sign(r['cpu_ratio'])} | {r['target'] or ''} |"
        )
    lines += [
        "",
        f"Peak RSS, one run each: plain `brc` against `brc {run['memory_stats']}`.",
        "",
        f"| Set | Plain, MiB | `{run['memory_stats']}`, MiB | Ratio | Target |",
        "|---|--:|--:|--:|---|",
    ]
    for r in run["memory"]:
        lines.append(
            f"| {r['set']} | {r['plain']} | {r['stats']} | {times_sign(r['ratio'])} | {r['target'] or ''} |"
        )
    lines.append("")
    after = " ".join(x for x in (run["note"], run["versions"] and f"Versions: {run['versions']}.") if x)
    if after:
        lines += [after, ""]
    return lines


def parquet_section(run, source):
    """The Parquet set: brc against each tool, run alternately."""
    lines = [
        "## Parquet: the One Trillion Row Challenge's files",
        "",
        f"Measured by `{public(run['command'])}` ({public(run['notes'])}) on {run['date']}, "
        f"kept in `{public(source)}`.",
        # A line of its own, so that no line of the page runs past 300
        # characters; the paragraph reads the same.
        f"Machine: {run['cpu']}; load average {run['load']} before the run.",
        "",
        f"Data: {run['data']}. brc, DuckDB and Polars print the same bytes (checked before timing).",
        "",
        f"Each tool runs alternately with brc (tool, brc, tool, brc, …), {run['pairs'][0]['pairs']} "
        "pairs (`scripts/ab.py`); *÷ brc* is the median of the pairs' ratios: over 1 where "
        "brc is faster.",
        "",
        "| Tool | Its wall | brc's wall | ÷ brc, wall | ÷ brc, CPU (range) |",
        "|---|--:|--:|--:|--:|",
    ]
    for p in run["pairs"]:
        lines.append(
            f"| {PARQUET_TOOLS[p['tool']]} | {seconds(float(p['wall']))} | {seconds(float(p['brc_wall']))} "
            f"| **{float(p['wall_ratio']):.2f}×** "
            f"| {float(p['cpu_ratio']):.2f}× ({float(p['low']):.2f}–{float(p['high']):.2f}×) |"
        )
    lines += ["", f"brc's peak memory: {mib(run['memory_kib'])}. Versions: {run['versions']}.", ""]
    return lines


def by_dataset(run):
    """{dataset: [results, fastest first, failed last]} in run order."""
    groups = {}
    for r in run["results"]:
        groups.setdefault(r["dataset"], []).append(r)
    for rs in groups.values():
        rs.sort(key=lambda r: (r["status"] != "ok", r.get("wall_full_s") or 0))
    return groups


def peak_rss_kib(r):
    """From `/usr/bin/time -v`, or from scripts/compare/reap.py for a peer."""
    return (r.get("time_v") or r["reaped"])["max_rss_kib"]


def marks(r):
    """The footnote marks after a result's tool name and figures."""
    mark = f" {PEER}" if r["group"] == "peer" else ""
    if r["status"] == "ok" and r["extrapolated"]:
        mark += f" {EXTRAPOLATED}"
    return mark


def full_file(rs):
    """The full data file of a data set, with its size."""
    for r in rs:
        if r["rows_measured"] == r["rows_full"]:
            return r["file"], r["file_bytes"]
    return None, None


# --- markdown ----------------------------------------------------------------


def markdown(run, source, svg_name, readme="../scripts/README.md", parquet=None, csv=None, stats=None, also=()):
    """The page; `readme` is scripts/README.md relative to it; `parquet`,
    `csv` and `stats`, the Parquet, CSV and statistics sets' runs and where
    they are kept, if any; `also`, more compare.sh runs and where they are
    kept (other CPUs, other row counts), each a section of its own."""
    files = repository_files(run)
    command = public(run["command"])
    source = public(source)
    intro = [
        f"Generated by `{command}` on {run['date']}, rendered by",
        f"`python3 scripts/render_benchmarks.py {source}"
        + "".join(f" --also {public(where)}" for _, where in also)
        + (f" --parquet {public(parquet[1])}" if parquet else "")
        + (f" --csv {public(csv[1])}" if csv else "")
        + (f" --stats {public(stats[1])}" if stats else "")
        + "`. Do not edit by hand:",
        # Without --publish, compare.sh writes a page of its own elsewhere.
        f"rerun the command{'' if '--publish' in command else ' with `--publish`'} instead "
        + ("and render again as above, which adds the other runs " if also else "")
        + f"(see [scripts/README.md]({readme})).",
    ]
    lines = [f"![Rows per second of each tool, higher is better]({svg_name})", ""]
    lines += machine_lines(run) + dataset_tables(run, files)
    for other, where in also:
        lines += also_section(other, where)
    if parquet:
        lines += parquet_section(*parquet)
    if csv:
        lines += csv_section(*csv)
    if stats:
        lines += stats_section(*stats)
    lines += method(run, files)
    if any(ELIDED in line for line in intro + lines):
        intro.append(f"`{ELIDED}` marks a path of the machine the figures were measured on, cut short.")
    return "\n".join(["# Benchmarks", "", *intro, "", *lines])


def machine_lines(run):
    """What a run's machine was, and whether it was busy."""
    m = run["machine"]
    lines = [
        f"Machine: {m['cpu']}, {m['logical_cores']} logical cores, "
        f"{m['memory_gib']} GiB memory, {m['os']}; load average "
        f"{m['load_average_at_start']} when the script started (before building and "
        f"generating), {m['load_average_at_end']} at its end.",
        "",
    ]
    if m["load_average_at_start"] > BUSY * m["logical_cores"]:
        lines += [
            f"**The machine was busy before this run started (load average "
            f"{m['load_average_at_start']} on {m['logical_cores']} cores): other work "
            "competed for the cores, so these times are noisy and slower than they "
            "should be.**",
            "",
        ]
    return lines


def also_section(run, source):
    """Another compare.sh run (another CPU, another row count): its
    machine, tables and versions, the method being the page's."""
    files = repository_files(run)
    rows = run["settings"]["rows"]
    lines = [
        f"## {run['machine']['cpu']}, {rows_label(rows)} rows, {run['date']}",
        "",
        f"Generated by `{public(run['command'])}`, kept in `{public(source)}`.",
        f"Wall: medians of {run['settings']['runs']} hyperfine runs after "
        f"{run['settings']['warmup']} warm-up; otherwise measured as above (*How these figures are made*).",
        "",
    ]
    lines += machine_lines(run) + dataset_tables(run, files, "###")
    lines += ["Versions:", ""]
    lines += [f"- {tool}: {public(version)}" for tool, version in run["versions"].items()]
    return lines + [""]


def dataset_tables(run, files, level="##"):
    """Each data set's table of tools and its side-by-side table, under
    headings of `level`."""
    rows, small = run["settings"]["rows"], run["settings"]["small_rows"]
    lines = []
    for dataset, rs in by_dataset(run).items():
        path, nbytes = full_file(rs)
        lines += [
            f"{level} {keyset_name(dataset)}, {rows:,} rows",
            "",
            f"Data: `brc generate --rows {rows_label(rows)} --keys {dataset} --seed 1`"
            + (f" → `{public(path, files)}` ({size(nbytes)})." if path else "."),
            "",
            "| Tool | Wall (median) | CPU | Peak RSS | Rows/s | ns/row/core | vs brc |",
            "|---|--:|--:|--:|--:|--:|--:|",
        ]
        failed = []
        for r in rs:
            if r["status"] != "ok":
                failed.append(r)
                continue
            mark = f" {EXTRAPOLATED}" if r["extrapolated"] else ""
            ratio = f"{r['ratio']:.2f}×" if r["ratio"] is not None else "–"
            lines.append(
                f"| {r['tool']}{marks(r)} "
                f"| {seconds(r['wall_full_s'])}{mark} "
                f"| {seconds(r['cpu_full_s'])}{mark} "
                f"| {mib(peak_rss_kib(r))}{mark} "
                f"| {count(r['rows_per_s'])} "
                f"| {r['ns_per_row_core']:.1f} "
                f"| {ratio}{mark} |"
            )
        lines.append("")
        if any(r["status"] == "ok" and r["extrapolated"] for r in rs):
            lines += [
                f"{EXTRAPOLATED} Too slow for the full file, so run on a smaller one "
                f"(`brc generate --rows {rows_label(small)} --keys {dataset} --seed 1`); "
                f"wall and CPU time are scaled ×{rows / small:g} "
                "to the full row count (linear: optimistic for a tool that sorts), "
                "peak RSS is as measured on the smaller file.",
                "",
            ]
        if any(r["group"] == "peer" for r in rs):
            lines += [
                f"{PEER} Not in this repository: another author's program, built from a "
                "checkout of its repository with its own documented command (commit and "
                "compiler under *Versions* below).",
                "",
            ]
        for r in failed:
            lines += [f"**{r['tool']}{marks(r)}: not reported**: {public(r['check'], files)}.", ""]
        lines += side_by_side(run, dataset)
    return lines


def side_by_side(run, dataset):
    """The table of brc against each peer run alternately with it."""
    pairs = [p for p in run.get("side_by_side", []) if p["dataset"] == dataset]
    if not pairs:
        return []
    lines = [
        f"Side by side with the peers: each run alternately with brc (peer, brc, …), "
        f"{pairs[0]['pairs']} pairs, the same number of threads"
        + (f", {pause:g} s of quiet after each run" if (pause := pairs[0].get("pause_s")) else "")
        + ", so that the machine's drift hits both alike (`scripts/ab.py`). "
        "*brc ÷ peer* is the median of the pairs' ratios: under 1 where brc is faster.",
        "",
        "| Peer | Threads | brc ÷ peer, wall | brc ÷ peer, CPU (range) | Peer's wall | brc's wall |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for p in pairs:
        cpu = "–"
        if p["cpu_ratio"] is not None:
            low, high = p["cpu_ratio_range"]
            cpu = f"{p['cpu_ratio']:.3f}× ({low:.2f}–{high:.2f}×)"
        lines.append(
            f"| {p['peer']} {PEER} | {p['threads']} | **{p['wall_ratio']:.3f}×** | {cpu} "
            f"| {seconds(p['peer_wall_s'])} | {seconds(p['brc_wall_s'])} |"
        )
    return lines + [""]


def method(run, files):
    settings = run["settings"]
    ref = run["reference"]
    lines = [
        "## How these figures are made",
        "",
        f"- Every tool's result is first cross-checked with `{ref}`'s: the same "
        "stations, the same min and max, the mean within 0.1 "
        "(`scripts/compare/check.py`). A tool that disagrees is not timed.",
        f"- **Wall**: median of {settings['runs']} hyperfine runs after "
        f"{settings['warmup']} warm-up run, so the file is in the page cache; "
        "the full-file figure (see †).",
        "- **CPU**: user + system time, mean over the same runs.",
        "- **Peak RSS**: maximum resident set size of one extra run under "
        "`/usr/bin/time -v` (the largest single process for a pipeline); for a "
        "tool that maps the file into memory, as brc does, it counts the file's "
        "pages it touched, which belong to the shared page cache.",
        "- **Rows/s**: rows of the file the tool ran on ÷ median wall time.",
        "- **ns/row/core**: CPU time ÷ rows: the core time one row costs, "
        "whatever the number of threads.",
        f"- **vs brc**: wall time ÷ wall time of `{ref}` on the same data.",
        "- DuckDB and Polars run from a short Python script, so their times "
        "include starting Python and importing the library (a fraction of a "
        "second); datamash and awk run with `LC_ALL=C`.",
    ]
    if any(r["group"] == "peer" for r in run["results"]):
        lines.append(
            f"- Peers ({PEER}) may exit while their workers still unmap the file "
            "(austindonisan's default build does; its `UNMAP true` build waits): their "
            "wall time is until they exit, as a shell sees it, their CPU time and peak RSS "
            "from one more run under `scripts/compare/reap.py`, which waits for every process."
        )
    if run.get("side_by_side"):
        lines.append(
            "- **Side by side**: `scripts/ab.py` runs each peer and brc's default engine "
            "alternately, page cache warm, pausing after each run where the table says so "
            "(`PAUSE`); ratios are "
            "medians over the pairs (a peer's CPU time counts the processes it "
            "leaves running), wall times each program's median."
        )
    lines += [
        "",
        "Commands (as hyperfine ran them, from the repository root):",
        "",
    ]
    seen = set()
    for r in run["results"]:
        if r["tool"] not in seen:
            seen.add(r["tool"])
            lines.append(f"- {r['tool']}: `{public(r['command'], files)}`")
    lines += ["", "Versions:", ""]
    lines += [f"- {tool}: {public(version)}" for tool, version in run["versions"].items()]
    lines.append("")
    return lines


# --- chart -------------------------------------------------------------------

WIDTH = 900
LABEL_W = 230
# Room per character of a bar's label at 13 px, for labels longer than
# LABEL_W holds (a peer's repository name and its thread count).
CHAR_W = 7.4
BAR_W = 430
ROW_H = 26
BAR_H = 16
COLORS = {"brc": "#d9480f", "other": "#1c7ed6", "peer": "#7048e8"}


def nice_step(top, ticks=5):
    """A 1, 2 or 5 times a power of ten step giving about `ticks` gridlines."""
    raw = top / ticks
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * power >= raw:
            return m * power
    return 10 * power


def text(x, y, s, size=13, anchor="start", weight="normal", fill="#212529"):
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
        f'font-weight="{weight}" fill="{fill}">{escape(s)}</text>'
    )


def svg(run):
    settings, m = run["settings"], run["machine"]
    groups = by_dataset(run)
    body = []
    y = 34
    body.append(
        text(
            WIDTH / 2,
            y,
            f"Rows per second, higher is better: {settings['rows']:,} rows per file",
            size=17,
            anchor="middle",
            weight="bold",
        )
    )
    y += 20
    # The command on a line of its own: with PEERS it is long.
    for line in (f"{m['cpu']}, {m['logical_cores']} cores · {run['date']}", public(run["command"])):
        body.append(text(WIDTH / 2, y, line, size=12, anchor="middle", fill="#495057"))
        y += 17
    body.append(
        text(
            WIDTH / 2,
            y,
            f"Bar labels: rows/s · wall time for the full file · that time ÷ {run['reference']}'s",
            size=12,
            anchor="middle",
            fill="#495057",
        )
    )
    y += 20
    any_extrapolated = False
    label_w = max([LABEL_W] + [16 + CHAR_W * len(r["tool"] + marks(r)) for r in run["results"]])
    for dataset, rs in groups.items():
        ok = [r for r in rs if r["status"] == "ok"]
        top = max((r["rows_per_s"] for r in ok), default=1)
        step = nice_step(top)
        top = math.ceil(top / step) * step
        y += 24
        body.append(text(16, y, keyset_name(dataset), size=15, weight="bold"))
        y += 10
        panel_top = y
        panel_h = len(rs) * ROW_H
        x0 = label_w
        tick = 0.0
        while tick <= top + step / 2:
            x = x0 + BAR_W * tick / top
            body.append(
                f'<line x1="{x:.1f}" y1="{panel_top}" x2="{x:.1f}" '
                f'y2="{panel_top + panel_h}" stroke="#dee2e6"/>'
            )
            body.append(
                text(x, panel_top + panel_h + 15, count(tick) if tick else "0", 11, "middle", fill="#495057")
            )
            tick += step
        for i, r in enumerate(rs):
            cy = panel_top + i * ROW_H + ROW_H / 2
            mark = f" {EXTRAPOLATED}" if r["status"] == "ok" and r["extrapolated"] else ""
            body.append(text(x0 - 8, cy + 4.5, r["tool"] + marks(r), anchor="end"))
            if r["status"] != "ok":
                body.append(text(x0 + 6, cy + 4.5, "failed: no time reported (see benchmarks.md)", fill="#c92a2a"))
                continue
            w = max(1.0, BAR_W * r["rows_per_s"] / top)
            opacity = "0.45" if mark else "1"
            any_extrapolated |= bool(mark)
            body.append(
                f'<rect x="{x0}" y="{cy - BAR_H / 2:.1f}" width="{w:.1f}" height="{BAR_H}" '
                f'fill="{COLORS[r["group"]]}" fill-opacity="{opacity}" rx="2"/>'
            )
            ratio = f" · {r['ratio']:.2f}× brc" if r["ratio"] is not None else ""
            body.append(
                text(
                    x0 + w + 6,
                    cy + 4.5,
                    f"{count(r['rows_per_s'])}/s · {seconds(r['wall_full_s'])}{mark}{ratio}",
                    size=12,
                    fill="#343a40",
                )
            )
        y = panel_top + panel_h + 22
    y += 14
    names = {"brc": ("brc", 60), "other": ("other tools", 100), "peer": (f"{PEER} not in this repository", 180)}
    shown = {r["group"] for r in run["results"]}
    legend = [(COLORS[g], *names[g]) for g in names if g in shown]
    x = 16
    for color, label, width in legend:
        body.append(f'<rect x="{x}" y="{y - 10}" width="12" height="12" fill="{color}"/>')
        body.append(text(x + 18, y, label, 12))
        x += width
    if any_extrapolated:
        body.append(
            text(
                x,
                y,
                f"{EXTRAPOLATED} pale: run on {settings['small_rows']:,} rows, time scaled to the full file",
                12,
            )
        )
    y += 16
    height = y
    return "\n".join(
        [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}" font-family="Helvetica, Arial, sans-serif">',
            f"<title>brc and other tools, rows per second on {settings['rows']:,} rows</title>",
            f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>',
            *body,
            "</svg>",
            "",
        ]
    )


def lab_set(path, parse):
    """A lab set's run, parsed by `parse` from the file at `path`, and where
    it is kept (relative to the repository); None without a file."""
    if not path:
        return None
    source = os.path.relpath(os.path.abspath(path), ROOT)
    with open(path, encoding="utf-8") as f:
        return (parse(f.read(), source), source)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="?", help="default: the newest bench/results/*.json")
    parser.add_argument(
        "--also", action="append", default=[], metavar="RESULTS.json",
        help="another compare.sh run (another CPU, another row count), a section of its own; repeatable",
    )
    parser.add_argument("--parquet", help="default: the newest bench/results/*-parquet.txt, if any")
    parser.add_argument("--csv", help="default: the newest bench/results/*-csv.txt, if any")
    parser.add_argument("--stats", help="default: the newest bench/results/*-stats.txt, if any")
    parser.add_argument("--md", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    parser.add_argument("--svg", default=os.path.join(ROOT, "docs", "benchmarks.svg"))
    args = parser.parse_args()
    path = args.results or newest_results()
    with open(path, encoding="utf-8") as f:
        run = json.load(f)
    source = os.path.relpath(os.path.abspath(path), ROOT)
    also = [lab_set(other, lambda text, _: json.loads(text)) for other in args.also]
    parquet = lab_set(args.parquet or newest_parquet(), parquet_run)
    csv = lab_set(args.csv or newest_lab_run("csv"), csv_run)
    stats = lab_set(args.stats or newest_lab_run("stats"), stats_run)
    os.makedirs(os.path.dirname(os.path.abspath(args.md)), exist_ok=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.svg)), exist_ok=True)
    md_dir = os.path.dirname(os.path.abspath(args.md))
    svg_name = os.path.relpath(os.path.abspath(args.svg), md_dir)
    readme = os.path.relpath(os.path.join(ROOT, "scripts", "README.md"), md_dir)
    with open(args.md, "w", encoding="utf-8") as f:
        f.write(markdown(run, source, svg_name, readme, parquet, csv, stats, also))
    with open(args.svg, "w", encoding="utf-8") as f:
        f.write(svg(run))


if __name__ == "__main__":
    main()

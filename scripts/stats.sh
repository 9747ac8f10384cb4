#!/usr/bin/env bash
# Usage: scripts/stats.sh [--check] [--rows ROWS] [PAIRS]
#
# The statistics set: what `brc --stats` costs, against a plain run and
# against DuckDB's quantile_disc, and whether its answers are exact.
#
# Timing (the default), 2 threads each, on files of `brc generate --rows
# ROWS --keys KEYS --seed 1` (default 1e8 rows) kept as
# bench/data/measurements-KEYS-ROWS.txt (made if missing, as
# scripts/compare.sh makes them; 1e8 rows are 1.4 GB for the 413 stations,
# 1.7 GB for the 10K set and 5.3 GB for 10^6 names):
#
#   plain    brc -q -t 2 FILE
#   stats    brc -q -t 2 --stats min,median,p99,max FILE
#   DuckDB   SELECT station, min(v), quantile_disc(v, 0.5),
#            quantile_disc(v, 0.99), max(v) FROM read_csv(FILE, delim=';',
#            header=false, quote='', escape='', columns={'station':
#            'VARCHAR', 'v': 'DECIMAL(4,1)'}) GROUP BY station, on 2 threads
#
# On the 413-station and the 10K sets: first DuckDB's answer is checked
# against `brc --stats min,median,p99,max` (every cell), then plain against
# stats (PAIRS alternated pairs, default 11) and stats against DuckDB
# (SLOW_PAIRS, default 3), each pair A then B, a pause of PAUSE seconds
# (default 2) after every run, after WARMUP runs of each (default 1); wall
# and CPU time as scripts/ab.py measures them. Then peak memory
# (/usr/bin/time -v, one run each) of plain against `--stats median,p99` on
# both sets and on 10^6 names (`--keys 1M`, ROWS_1M rows, default ROWS).
# Prints a table of medians and ratios with the targets, each met or not
# (stats at most 1.5x plain's wall time on the 413 set and 2x on the 10K
# set, DuckDB at least 20x stats', at most 256 MiB with --stats median,p99
# on the 10K set and 3x plain's peak on 10^6 names), after a header naming
# the command, date and machine. The table is also written to
# bench/results/<date>-<cpu>-stats.txt and the raw runs, data only, to
# bench/results/<date>-<cpu>-stats-runs.txt, <cpu> naming the vendor,
# family and model (amd-f25m1); -stats-ROWS for another row count than
# 1e8.
#
# Options:
#   --check   no timing: small files in a temporary directory (one row,
#             all-equal values, only -99.9 and 99.9, the 10K names,
#             multi-byte names, random rows with ties of every kind, the
#             413 stations), each key's count, sum, min, max, mean, stddev,
#             stddev_pop, median, p1, p90, p99 and p99.9 from
#             `brc --stats ... -f csv` against an exact Python model
#             (integers and fractions) and DuckDB, every cell; then
#             `brc merge --stats` of `--shard k/3 --format partial` pieces
#             against the one run's bytes
#   --rows N  rows, as brc generate takes them (1e8, 5000000); with
#             --check, of the random and 413-station files (default 5000)
# Environment: BRC=path, a brc binary to use instead of building one;
# PYTHON, a Python with duckdb (default: bench/venv/bin/python, made with
# pip if missing); SLOW_PAIRS=3, PAUSE=2 (seconds), WARMUP=1, ROWS_1M.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The command as given, environment knobs first, for the results' header.
command=
for var in SLOW_PAIRS PAUSE WARMUP ROWS_1M; do
    [ -z "${!var+x}" ] || command+="$var=${!var} "
done
command+="scripts/stats.sh"
[ $# -eq 0 ] || command+=" $*"
check=no
rows=
pairs=
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help)
        usage
        exit 0
        ;;
    --check) check=yes ;;
    --rows)
        [ $# -ge 2 ] || die "--rows needs a count; see --help"
        rows=$2
        shift
        ;;
    --rows=*) rows=${1#--rows=} ;;
    -*) die "unknown option '$1'; see --help" ;;
    *)
        [ -z "$pairs" ] || die "expected at most one PAIRS, found '$pairs' and '$1'; see --help"
        pairs=$1
        ;;
    esac
    shift
done
check_pairs
pause=${PAUSE:-2}
[[ $pause =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "PAUSE: expected seconds, found '$pause'"
warmup=${WARMUP:-1}
[[ $warmup =~ ^[0-9]+$ ]] || die "WARMUP: expected a number of runs, found '$warmup'"
if [ "$check" = yes ]; then
    rows=${rows:-5000}
else
    rows=${rows:-1e8}
fi
count_re='^[0-9][0-9_]*([eE][0-9]+)?$'
[[ $rows =~ $count_re ]] || die "expected a row count like 1e8, found '$rows'"
rows_1m=${ROWS_1M:-$rows}
[[ $rows_1m =~ $count_re ]] || die "ROWS_1M: expected a row count like 1e8, found '$rows_1m'"
# The load before this script's own build and data.
load=$(cut -d ' ' -f 1 /proc/loadavg)

enter_repo

if [ -n "${PYTHON:-}" ]; then
    python=$PYTHON
else
    python=bench/venv/bin/python
    if ! "$python" -c 'import duckdb' 2>/dev/null; then
        echo "== installing duckdb into bench/venv" >&2
        python3 -m venv bench/venv
        "$python" -m pip install --quiet --upgrade pip >&2
        "$python" -m pip install --quiet duckdb >&2
    fi
fi
"$python" -c 'import duckdb' || die "$python cannot import duckdb; set PYTHON to one that can"

build_brc >&2
[[ $BRC != "$root"/* ]] || BRC=${BRC#"$root"/}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The Python half: the exact model, DuckDB's queries, the alternated runs
# and the table. Written out so that its errors name a line.
cat >"$work/stats_lab.py" <<'PY'
import csv
import difflib
import io
import math
import os
import random
import re
import subprocess
import sys
import time
from decimal import Decimal, getcontext
from fractions import Fraction

getcontext().prec = 60

#: Every stat, in brc's order, for --check.
CHECK_STATS = "count,sum,min,max,mean,stddev,stddev_pop,median,p1,p90,p99,p99.9".split(",")


def die(message):
    print(f"stats.sh: {message}", file=sys.stderr)
    sys.exit(1)


def tenths(t):
    """Integer tenths as brc prints them: one decimal, never -0.0."""
    sign = "-" if t < 0 else ""
    return f"{sign}{abs(t) // 10}.{abs(t) % 10}"


def java_round(x):
    """Java's Math.round: the nearest integer, ties toward +infinity."""
    f = math.floor(x)
    return int(f) + (1 if x - f >= 0.5 else 0)


def half_up_root(num, den):
    """sqrt(num / den) rounded half up to an integer, exactly: the largest
    k with k - 1/2 <= sqrt(num / den), i.e. the largest odd j = 2k - 1 with
    j * j <= 4 num / den."""
    j = math.isqrt(4 * num // den)
    if j % 2 == 0:
        j -= 1
    return (j + 1) // 2


def quantile_q(stat):
    """The fraction a quantile stat stands for (median: 1/2), or None."""
    if stat == "median":
        return Fraction(1, 2)
    if re.fullmatch(r"p[0-9]+(\.[0-9]+)?", stat):
        return Fraction(Decimal(stat[1:])) / 100
    return None


def model_cells(values, stats):
    """A key's cells, exactly: `values` in integer tenths."""
    n = len(values)
    s = sum(values)
    q = sum(v * v for v in values)
    ordered = sorted(values)
    spread = n * q - s * s  # n^2 times the population variance, in tenths^2
    cells = []
    for stat in stats:
        if stat == "count":
            cells.append(str(n))
        elif stat == "sum":
            cells.append(tenths(s))
        elif stat == "min":
            cells.append(tenths(ordered[0]))
        elif stat == "max":
            cells.append(tenths(ordered[-1]))
        elif stat == "mean":
            # The reference's rounding, in doubles: Math.round((S/10.0)/n*10.0).
            cells.append(tenths(java_round(s / 10.0 / n * 10.0)))
        elif stat == "stddev":
            cells.append(tenths(half_up_root(spread, n * (n - 1))) if n > 1 else "")
        elif stat == "stddev_pop":
            cells.append(tenths(half_up_root(spread, n * n)))
        else:
            # quantile_disc: the ceil(q n)-th smallest value, 1-based.
            k = max(1, math.ceil(quantile_q(stat) * n))
            cells.append(tenths(ordered[k - 1]))
    return cells


def exact_sd(values, sample):
    """The unrounded standard deviation, in degrees, as a Decimal."""
    n = len(values)
    s = sum(values)
    spread = n * sum(v * v for v in values) - s * s
    den = n * (n - 1) if sample else n * n
    return (Decimal(spread) / Decimal(den)).sqrt() / 10


def read_measurements(path):
    """{name: [tenths]} of a measurements file."""
    keys = {}
    with open(path, "rb") as f:
        data = f.read()
    for line in data.split(b"\n"):
        if not line:
            continue
        name, value = line.rsplit(b";", 1)
        keys.setdefault(name, []).append(int(value.replace(b".", b"")))
    return keys


def model_table(path, stats):
    keys = read_measurements(path)
    return [[name.decode("utf-8"), *model_cells(keys[name], stats)] for name in sorted(keys)]


def parse_csv(text):
    return list(csv.reader(io.StringIO(text, newline="")))


def run(args, what):
    done = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True)
    if done.returncode != 0:
        die(f"{what} failed (exit {done.returncode}): {done.stderr.decode(errors='replace').strip()}")
    return done.stdout.decode("utf-8")


def brc_table(brc, path, stats, threads=None):
    args = [brc, "-q", "--stats", ",".join(stats), "-f", "csv", path]
    if threads:
        args[1:1] = ["-t", str(threads)]
    text = run(args, f"brc --stats on {path}")
    rows = parse_csv(text)
    return text, rows


def sql_literal(q):
    return str(Decimal(q.numerator) / Decimal(q.denominator))


def duckdb_query(path_param, stats):
    """DuckDB's SELECT of `stats` per station (mean left out: it is the
    reference's own rounding, which DuckDB does not do)."""
    parts = []
    for stat in stats:
        q = quantile_q(stat)
        parts.append(
            {
                "count": "count(*)",
                "sum": "sum(v)",
                "min": "min(v)",
                "max": "max(v)",
                "mean": "NULL",
                "stddev": "stddev_samp(v)",
                "stddev_pop": "stddev_pop(v)",
            }.get(stat)
            or f"quantile_disc(v, {sql_literal(q)})"
        )
    return (
        f"SELECT station, {', '.join(parts)}\n"
        f"FROM read_csv({path_param}, delim=';', header=false, quote='', escape='',\n"
        "              columns={'station': 'VARCHAR', 'v': 'DECIMAL(4,1)'})\n"
        "GROUP BY station"
    )


def duckdb_rows(path, stats, threads=None):
    import duckdb

    db = duckdb.connect()
    if threads:
        db.execute(f"SET threads = {int(threads)}")
    rows = db.execute(duckdb_query("?", stats), [path]).fetchall()
    return sorted(rows, key=lambda r: r[0].encode("utf-8"))


def decimal_tenths(d):
    t = d * 10
    if t != t.to_integral_value():
        die(f"DuckDB gave {d}, not a number of tenths")
    return tenths(int(t))


def show_diff(label_a, a_rows, label_b, b_rows, header):
    """Prints where two tables differ: the first cells, then a diff."""
    cells = []
    for ra, rb in zip(a_rows, b_rows):
        if ra != rb:
            for col, (x, y) in enumerate(zip(ra, rb)):
                if x != y:
                    cells.append(f"  {ra[0]!r} {header[col]}: {label_a} {x!r}, {label_b} {y!r}")
    for line in cells[:10]:
        print(line, file=sys.stderr)
    if len(cells) > 10:
        print(f"  ... {len(cells) - 10} more cells", file=sys.stderr)
    lines_a = [",".join(r) for r in a_rows]
    lines_b = [",".join(r) for r in b_rows]
    diff = list(difflib.unified_diff(lines_a, lines_b, label_a, label_b, n=1, lineterm=""))
    for line in diff[:40]:
        print(line, file=sys.stderr)
    if len(diff) > 40:
        print(f"... {len(diff) - 40} more diff lines", file=sys.stderr)


# --- check -----------------------------------------------------------------------


def value_text(t, rng):
    """A value as a file may spell it: sometimes 05.0 or -0.0."""
    if t == 0 and rng.random() < 0.3:
        return "-0.0"
    if -100 < t < 100 and rng.random() < 0.1:
        return ("-" if t < 0 else "") + "0" + tenths(abs(t))
    return tenths(t)


def write_rows(path, rows, final_newline=True):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(f"{n};{v}" for n, v in rows))
        if final_newline:
            f.write("\n")


def multibyte_name(rng, length):
    """A name of exactly `length` bytes of UTF-8 from characters of 1 to 4
    bytes, with a space, a comma and a quote now and then."""
    pool = ["a", "Z", "é", "ß", "日", "가", "€", "😀", "🌍", " ", ",", '"', "-", "x"]
    out, size = [], 0
    while size < length:
        fits = [c for c in pool if size + len(c.encode()) <= length]
        c = rng.choice(fits)
        out.append(c)
        size += len(c.encode())
    return "".join(out)


def make_check_files(brc, work, rows):
    rng = random.Random(20261129)
    files = []

    path = os.path.join(work, "one-row.txt")
    write_rows(path, [("Solo", "-12.3")], final_newline=False)
    files.append(("one row", path))

    path = os.path.join(work, "all-equal.txt")
    data = [("Equal", "7.7")] * 1000 + [("Zero", "0.0")] * 37 + [("Zero", "-0.0")] * 13
    data += [("Low", "-99.9")] * 10 + [("High", "99.9")] * 3 + [("Pair", "5.5")] * 2 + [("Once", "0.1")]
    rng.shuffle(data)
    write_rows(path, data)
    files.append(("all-equal values", path))

    path = os.path.join(work, "extremes.txt")
    data = [("Both", "-99.9"), ("Both", "99.9"), ("LowHighHigh", "-99.9")]
    data += [("LowHighHigh", "99.9")] * 2 + [("AllLow", "-99.9")] * 1000 + [("AllHigh", "99.9")] * 999
    for k in range(40):
        p = rng.random()
        data += [(f"x{k}", "99.9" if rng.random() < p else "-99.9") for _ in range(rng.randint(1, 400))]
    rng.shuffle(data)
    write_rows(path, data)
    files.append(("only -99.9 and 99.9", path))

    path = os.path.join(work, "10k.txt")
    run([brc, "generate", "--rows", "50000", "--keys", "10k", "--seed", "11", "-q", "-o", path], "brc generate")
    files.append(("the 10K names (50000 rows)", path))

    path = os.path.join(work, "multibyte.txt")
    names = {multibyte_name(rng, n) for n in [1, 2, 3, 4, 99, 100, 100, 100] + [rng.randint(1, 100) for _ in range(400)]}
    names = sorted(names)
    data = [(rng.choice(names), tenths(rng.randint(-999, 999))) for _ in range(6000)]
    data += [(n, "1.0") for n in names]  # every name at least once
    rng.shuffle(data)
    write_rows(path, data)
    files.append((f"{len(names)} multi-byte names", path))

    path = os.path.join(work, "random.txt")
    data = []
    nrows = int(float(rows.replace("_", "")))
    for i in range(nrows):
        kind = i % 4
        if kind == 0:  # uniform over the whole range
            data.append((f"uniform{rng.randrange(20)}", rng.randint(-999, 999)))
        elif kind == 1:  # a few distinct values: quantiles among ties
            data.append((f"narrow{rng.randrange(10)}", 100 + rng.randrange(5)))
        elif kind == 2:  # the official shape: sd 10, rounded, clamped
            t = round(rng.gauss(rng.choice([-150, 0, 250]), 100))
            data.append((f"gauss{rng.randrange(20)}", max(-999, min(999, t))))
        else:
            data.append((f"tiny{rng.randrange(300)}", rng.randint(-50, 50)))
    # Standard deviations exactly halfway between two tenths, at offsets
    # where doubles land either side: sample {b, b, b, b + m} and
    # population {b, b + m} and {b, b, b + m, b + m}, m odd.
    for k in range(40):
        m = rng.choice([1, 1, 3, 5, 7, 9, 11])
        b = rng.randint(-999, 999 - m)
        shape = [(b, b, b, b + m), (b, b + m), (b, b, b + m, b + m)][k % 3]
        data += [(f"tie{k}", t) for t in shape]
    rng.shuffle(data)
    write_rows(path, [(n, value_text(t, rng)) for n, t in data])
    files.append((f"{nrows} random rows and exact ties", path))

    path = os.path.join(work, "413.txt")
    run([brc, "generate", "--rows", rows, "--keys", "413", "--seed", "5", "-q", "-o", path], "brc generate")
    files.append((f"{rows} rows of the 413 stations", path))
    return files


def near_tie(exact):
    """Whether 10 x exact lies within 1e-9 (relative) of a half."""
    x = exact * 10
    return abs(x - (x.to_integral_value(rounding="ROUND_FLOOR") + Decimal("0.5"))) <= Decimal("1e-9") * max(x, Decimal(1))


def check_file(brc, label, path, stats):
    header = ["station", *stats]
    text, got = brc_table(brc, path, stats)
    if not got or got[0] != header:
        die(f"{label}: brc's header is {got[0] if got else 'missing'}, expected {header}")
    want = model_table(path, stats)
    if got[1:] != want:
        show_diff("brc", got[1:], "model", want, header)
        die(f"{label}: brc --stats differs from the exact model (cells and diff above)")

    # DuckDB, every cell but the mean, against the model.
    values = read_measurements(path)
    duck = duckdb_rows(path, stats)
    duck_names = [r[0] for r in duck]
    if duck_names != [r[0] for r in want]:
        die(f"{label}: DuckDB's stations differ from the file's ({len(duck_names)} against {len(want)})")
    mismatches, ties, exact_ties = [], 0, 0
    shown = []
    for wrow, drow in zip(want, duck):
        name = drow[0]
        vals = values[name.encode("utf-8")]
        shown_row = [name]
        for col, stat in enumerate(stats, start=1):
            d, w = drow[col], wrow[col]
            if stat == "count":
                cell = str(d)
            elif stat == "mean":
                cell = w  # not DuckDB's to say
            elif stat in ("stddev", "stddev_pop"):
                if d is None:
                    cell = ""
                else:
                    exact = exact_sd(vals, stat == "stddev")
                    err = abs(Decimal(d) - exact)
                    if err > Decimal("1e-9") * exact and err > Decimal("1e-12"):
                        mismatches.append(f"  {name!r} {stat}: DuckDB {d!r}, exact {exact:.15f}")
                    # DuckDB's double, rounded half up at one decimal.
                    cell = tenths(int((Decimal(d) * 10 + Decimal("0.5")).to_integral_value(rounding="ROUND_FLOOR")))
                    if cell != w and near_tie(exact):
                        ties += 1
                        exact_ties += (exact * 20) % 2 == 1
                        cell = w  # a double a hair from the tie: the exact value decides
            else:
                cell = decimal_tenths(d) if d is not None else ""
            shown_row.append(cell)
        shown.append(shown_row)
    for line in mismatches[:10]:
        print(line, file=sys.stderr)
    if mismatches:
        die(f"{label}: DuckDB's standard deviations are more than 1e-9 (relative) from the exact values")
    if shown != want:
        show_diff("DuckDB", shown, "model", want, header)
        die(f"{label}: DuckDB differs from the exact model (cells and diff above)")
    return text, len(want), sum(len(v) for v in values.values()), ties, exact_ties


def check_merge(brc, label, path, stats, one_run, work, shards=3):
    """brc merge --stats of --shard k/N partials: the one run's bytes."""
    parts = []
    for k in range(1, shards + 1):
        part = os.path.join(work, f"part-{k}")
        with open(part, "w", encoding="utf-8") as f:
            f.write(run([brc, "-q", "--shard", f"{k}/{shards}", "--stats", ",".join(stats), "--format", "partial", path],
                        f"{label}: brc --shard {k}/{shards} --format partial"))
        parts.append(part)
    order = parts[-1:] + parts[:-1]
    done = subprocess.run([brc, "merge", "--stats", ",".join(stats), "-f", "csv", *order],
                          stdin=subprocess.DEVNULL, capture_output=True)
    if done.returncode != 0:
        with open(parts[0], encoding="utf-8") as f:
            first = f.readline().strip()
        die(f"{label}: brc merge --stats of {shards} shards' partials failed (exit {done.returncode}; "
            f"the partials begin `{first}`): {done.stderr.decode(errors='replace').strip()}")
    merged = done.stdout.decode("utf-8")
    if merged != one_run:
        header = ["station", *stats]
        show_diff("one run", parse_csv(one_run)[1:], "merged", parse_csv(merged)[1:], header)
        die(f"{label}: brc merge --stats of {shards} shards' partials differs from the one run (above)")


def check(brc, work, rows):
    files = make_check_files(brc, work, rows)
    stats = CHECK_STATS
    outputs = []
    total_ties = total_exact = 0
    for label, path in files:
        text, keys, nrows, ties, exact_ties = check_file(brc, label, path, stats)
        total_ties += ties
        total_exact += exact_ties
        outputs.append((label, path, text))
        print(f"stats.sh --check: {label}: {keys} keys, {nrows} rows: brc = the exact model = DuckDB")
    print(f"stats.sh --check: every cell of {','.join(stats)} agrees; DuckDB's double, rounded half up, "
          f"falls the other way at {total_ties} standard deviations ({total_exact} exact ties x.x5, the others "
          "within 1e-9 of one), where the exact value decides")
    for label, path, text in outputs:
        check_merge(brc, label, path, stats, text, work)
    print("stats.sh --check: brc merge --stats of 3 shards' partials (--shard k/3 --format partial) "
          "prints the one run's bytes, for every file")


# --- time ------------------------------------------------------------------------


def timing(config):
    sys.path.insert(0, config["scripts"])
    sys.path.insert(0, os.path.join(config["scripts"], "compare"))
    from ab import run as ab_run, summary  # noqa: E402
    from reap import become_reaper  # noqa: E402

    if sys.platform.startswith("linux"):
        become_reaper()
    brc, threads, pause = config["brc"], config["threads"], float(config["pause"])
    work = config["work"]
    quantiles = ["min", "median", "p99", "max"]
    duck_py = os.path.join(work, "duckdb_quantiles.py")
    with open(duck_py, "w", encoding="utf-8") as f:
        f.write(
            "import sys, duckdb\n"
            "db = duckdb.connect()\n"
            "db.execute(f'SET threads = {int(sys.argv[2])}')\n"
            f"rows = db.execute({duckdb_query('?', quantiles)!r}, [sys.argv[1]]).fetchall()\n"
            "for r in rows:\n"
            "    print(';'.join(str(x) for x in r))\n"
        )
    q = lambda s: "'" + s.replace("'", "'\\''") + "'"  # noqa: E731
    runs_out = []

    def timed(command):
        result = ab_run(command)
        time.sleep(pause)
        return result

    def pairs_of(name_a, a, name_b, b, n, set_name):
        for _ in range(config["warmup"]):
            timed(a)
            timed(b)
        pairs = [(timed(a), timed(b)) for _ in range(n)]
        for i, (ra, rb) in enumerate(pairs, start=1):
            runs_out.append(f"{set_name}\ttime\t{name_a}\t{i}\t{ra[0]:.6f}\t{ra[1]:.6f}")
            runs_out.append(f"{set_name}\ttime\t{name_b}\t{i}\t{rb[0]:.6f}\t{rb[1]:.6f}")
        return summary(a, b, pairs)

    table = []
    for set_name, path in config["time_sets"]:
        plain = f"{q(brc)} -q -t {threads} {q(path)}"
        stats = f"{q(brc)} -q -t {threads} --stats {','.join(quantiles)} {q(path)}"
        duck = f"{q(config['python'])} {q(duck_py)} {q(path)} {threads}"
        # DuckDB's answer, every cell, against brc's, before any timing.
        _, got = brc_table(brc, path, quantiles, threads)
        theirs = run([config["python"], duck_py, path, str(threads)], "DuckDB's quantile_disc query")
        theirs = sorted((line.split(";") for line in theirs.splitlines()), key=lambda r: r[0].encode("utf-8"))
        if [r[:1] + [decimal_tenths(Decimal(x)) for x in r[1:]] for r in theirs] != got[1:]:
            show_diff("brc", got[1:], "DuckDB", [r[:1] + [decimal_tenths(Decimal(x)) for x in r[1:]] for r in theirs],
                      ["station", *quantiles])
            die(f"{path}: DuckDB's quantile_disc differs from brc --stats {','.join(quantiles)}")
        print(f"== {set_name}: DuckDB and brc agree on {len(theirs)} stations; plain against stats", file=sys.stderr)
        s = pairs_of("plain", plain, "stats", stats, config["pairs"], set_name)
        print(f"== {set_name}: stats against DuckDB", file=sys.stderr)
        d = pairs_of("stats", stats, "duckdb", duck, config["slow_pairs"], set_name)
        table.append((set_name, s, d))

    memory = []
    for set_name, path in config["memory_sets"]:
        rss = {}
        for name, extra in (("plain", []), ("stats", ["--stats", "median,p99"])):
            done = subprocess.run(["/usr/bin/time", "-v", brc, "-q", "-t", str(threads), *extra, path],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if done.returncode != 0:
                die(f"/usr/bin/time -v brc {' '.join(extra)} {path} failed: {done.stderr.strip()[-300:]}")
            kib = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))
            rss[name] = kib
            runs_out.append(f"{set_name}\tpeak_rss_kib\t{name}\t1\t{kib}")
            time.sleep(pause)
        memory.append((set_name, rss))

    def verdict(ok):
        return "met" if ok else "NOT met"

    out = list(config["header"])
    out.append("")
    out.append(f"time, medians of the pairs   {'wall s':>8} {'CPU s':>8} {'wall ratio':>11} {'CPU ratio':>10}  target")
    for set_name, s, d in table:
        limit = {"413": 1.5, "10k": 2.0}.get(set_name)
        rows = [
            (f"{set_name} brc", s["a"], "", "", ""),
            (f"{set_name} brc --stats min,median,p99,max", s["b"], f"{s['wall_ratio']:.2f}x", f"{s['cpu_ratio']:.2f}x",
             f"<= {limit}x plain: {verdict(s['wall_ratio'] <= limit)}" if limit else ""),
            (f"{set_name} DuckDB quantile_disc", d["b"], f"{d['wall_ratio']:.1f}x", f"{d['cpu_ratio']:.1f}x",
             f">= 20x stats: {verdict(d['wall_ratio'] >= 20)}"),
        ]
        for label, own, wr, cr, target in rows:
            out.append(f"{label:<38} {own['wall_s']:>8.3f} {own['cpu_s']:>8.3f} {wr:>11} {cr:>10}  {target}".rstrip())
    out.append("")
    out.append(f"peak RSS, MiB (one run each)  {'brc':>8} {'--stats median,p99':>19} {'ratio':>7}  target")
    for set_name, rss in memory:
        plain_mib, stats_mib = rss["plain"] / 1024, rss["stats"] / 1024
        ratio = rss["stats"] / rss["plain"]
        target = ""
        if set_name == "10k":
            target = f"<= 256 MiB: {verdict(stats_mib <= 256)}"
        elif set_name == "1M":
            target = f"<= 3x plain: {verdict(ratio <= 3)}"
        out.append(f"{set_name:<29} {plain_mib:>8.1f} {stats_mib:>19.1f} {ratio:>6.2f}x  {target}".rstrip())
    out.append("")
    out.append(
        "Ratios are medians of the pairs' ratios: stats over plain, DuckDB over stats (its own pairs, "
        "whose stats runs are not the ones shown); the targets are judged on wall time."
    )
    out.append(config["versions"])
    text = "\n".join(out) + "\n"
    sys.stdout.write(text)
    with open(config["table_file"], "w", encoding="utf-8") as f:
        f.write(text)
    with open(config["runs_file"], "w", encoding="utf-8") as f:
        f.write("\n".join(config["header"]) + "\n")
        f.write("# set\tmeasure\tcommand\trun\twall_s or KiB\tcpu_s\n")
        f.write("\n".join(runs_out) + "\n")
    print(f"== table in {config['table_file']}, runs in {config['runs_file']}", file=sys.stderr)


if __name__ == "__main__":
    if sys.argv[1] == "check":
        check(*sys.argv[2:5])
    else:
        config = {"header": [], "time_sets": [], "memory_sets": []}
        for word in sys.argv[2:]:
            key, value = word.split("=", 1)
            if key == "header":
                config["header"].append(value)
            elif key in ("time_set", "memory_set"):
                config[key + "s"].append(value.split("=", 1))
            elif key in ("threads", "warmup", "pairs", "slow_pairs"):
                config[key] = int(value)
            else:
                config[key] = value
        timing(config)
PY

if [ "$check" = yes ]; then
    "$python" "$work/stats_lab.py" check "$BRC" "$work" "$rows"
    exit 0
fi

# --- data --------------------------------------------------------------------

mkdir -p bench/data bench/results
declare -A files
for set in 413 10k 1M; do
    n=$rows
    [ "$set" != 1M ] || n=$rows_1m
    file=bench/data/measurements-$set-$n.txt
    if [ ! -s "$file" ]; then
        echo "== generating $file" >&2
        # Written to FILE.tmp and renamed when done: no partial file is reused.
        "$BRC" generate --rows "$n" --keys "$set" --seed 1 -q -o "$file"
    fi
    files[$set]=$file
done
# A fresh page cache, as scripts/compare.sh reads its files: each dropped
# and read once, so that every run starts from the same state.
for f in "${files[@]}"; do
    sync "$f"
    dd if="$f" iflag=nocache count=0 status=none ||
        echo "warning: could not drop $f from the page cache; timing it as cached" >&2
    cat "$f" >/dev/null
done

# --- time --------------------------------------------------------------------

cpu() { lscpu | sed -n "s/^$1: *//p" | head -n 1; }
date=$(date +%F)
# The CPU in the file names, so that runs on two machines on one date do
# not overwrite each other: vendor, family and model (amd-f25m1).
vendor=$(cpu 'Vendor ID' | sed 's/AuthenticAMD/amd/; s/GenuineIntel/intel/' | tr -cd 'a-zA-Z0-9')
tag=${vendor:-cpu}-f$(cpu 'CPU family')m$(cpu Model)
suffix=
[ "$rows" = 1e8 ] || suffix=-$rows
size() { numfmt --to=iec-i --suffix=B --format=%.1f "$(stat -c %s "$1")"; }
# Settings as KEY=VALUE words (header= and *_set= repeated), so that no
# path or name needs quoting.
"$python" "$work/stats_lab.py" time \
    scripts=scripts brc="$BRC" python="$python" work="$work" threads=2 \
    pause="$pause" warmup="$warmup" pairs="$pairs" slow_pairs="$slow_pairs" \
    time_set="413=${files[413]}" time_set="10k=${files[10k]}" \
    memory_set="413=${files[413]}" memory_set="10k=${files[10k]}" memory_set="1M=${files[1M]}" \
    header="# $command (BRC=$BRC at $(git rev-parse --short HEAD 2>/dev/null || echo unknown), PYTHON=$python)" \
    header="# $date, Model name: $(cpu 'Model name'), family $(cpu 'CPU family') model $(cpu Model), $(nproc) vCPUs; load average before: $load" \
    header="# \`brc generate --rows N --keys K --seed 1\`: 413 and 10k $rows rows ($(size "${files[413]}"), $(size "${files[10k]}")), 1M $rows_1m rows ($(size "${files[1M]}")); 2 threads each" \
    header="# $pairs pairs plain/stats, $slow_pairs stats/DuckDB, each after $warmup warm-up run(s) of both, a $pause s pause after every run" \
    versions="$("$BRC" --version), duckdb $("$python" -c 'import duckdb; print(duckdb.__version__)')" \
    table_file="bench/results/$date-$tag-stats$suffix.txt" runs_file="bench/results/$date-$tag-stats$suffix-runs.txt"

#!/usr/bin/env bash
# Usage: scripts/parquet.sh [PAIRS]
#
# The Parquet set: brc against DuckDB and Polars on 10 files of 10^7 rows
# made by the One Trillion Row Challenge's recipe (10^8 rows, about 240 MB;
# made once into bench/data/1trc/ by scripts/compare/parquet_tools.py, which
# needs numpy, pandas and pyarrow), 2 threads each.
#
# First checks that the three print the same bytes (DuckDB and Polars sum
# integer tenths and round the mean as the reference does), then times brc
# against each, alternated pairs (scripts/ab.py, PAIRS pairs, default 11),
# and prints each ratio (theirs over brc's), brc's peak memory and the
# tools' versions, after a header naming the command, date and machine: the
# Parquet set of the comparison. Kept as bench/results/<date>-parquet.txt,
# it is rendered into docs/benchmarks.md (scripts/render_benchmarks.py):
#   scripts/parquet.sh 11 > bench/results/$(date +%F)-parquet.txt
# Environment: BRC=path, a brc binary to use instead of building one;
# PYTHON, a Python with duckdb, polars, numpy, pandas and pyarrow (default
# python3).
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

help_if_asked "$@"
[ $# -le 1 ] || die "expected at most one argument (PAIRS), found $#; see --help"
pairs=${1:-11}
[[ $pairs =~ ^[1-9][0-9]*$ ]] || die "expected a number of pairs, found '$pairs'"
python=${PYTHON:-python3}
# The load before this script's own build and data.
load=$(cut -d ' ' -f 1 /proc/loadavg)

enter_repo
build_brc
dir=bench/data/1trc
tools=scripts/compare/parquet_tools.py
if [ ! -f "$dir/measurements-9.parquet" ]; then
    echo "making $dir (10 files of 10^7 rows)" >&2
    "$python" "$tools" make "$dir" 10 10000000
fi

brc_cmd="$BRC -t 2 $dir"
duck_cmd="$python $tools duckdb '$dir/*.parquet' 2"
polars_cmd="$python $tools polars '$dir/*.parquet' 2"

cpu() { lscpu | sed -n "s/^$1: *//p" | head -n 1; }
echo "# scripts/parquet.sh $pairs (BRC=$BRC at $(git rev-parse --short HEAD), PYTHON=$python)"
echo "# $(date +%F), Model name: $(cpu 'Model name'), family $(cpu 'CPU family') model $(cpu Model), $(nproc) vCPUs; load average before: $load"
echo "# 10 files of 10^7 rows by the 1TRC recipe ($tools make), 2 threads each"
expected=$($brc_cmd)
for tool in duck polars; do
    cmd=${tool}_cmd
    [ "$(sh -c "${!cmd}")" = "$expected" ] || die "$tool's output differs from brc's"
done
echo "outputs: brc, DuckDB and Polars print the same bytes"

for tool in duck polars; do
    cmd=${tool}_cmd
    echo "== $tool over brc"
    "$python" scripts/ab.py --pairs "$pairs" "$brc_cmd" "${!cmd}"
done
# time(1) reports on stderr; the line belongs with the figures on stdout.
/usr/bin/time -f "brc peak memory: %M KiB, %e s" $brc_cmd 2>&1 >/dev/null | tail -n 1
"$python" -c 'import duckdb, polars; print("duckdb", duckdb.__version__, "polars", polars.__version__)'

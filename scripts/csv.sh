#!/usr/bin/env bash
# Usage: scripts/csv.sh [--check] [--model] [--install] [--rows ROWS] [PAIRS]
#
# The CSV set: brc against DuckDB, Polars, GNU datamash and Miller on a file
# made by `brc generate --format csv --rows ROWS --keys KEYS --seed 1`
# (default 1e8 rows, about 4.3 GB: a timestamp, quoted site names with
# commas, a sensor, readings with 3 decimals, 1% empty), into
# bench/data/csv-KEYS-ROWS.csv if missing, 2 threads each:
#
#   brc       brc -t 2 --csv --key site --value reading FILE
#   DuckDB    SELECT site, min(reading), sum(reading), max(reading),
#             count(reading) FROM read_csv(FILE, types={'reading':
#             'DECIMAL(18,3)'}) GROUP BY site  (scripts/compare/csv_tools.py)
#   Polars    scan_csv, reading as Decimal(18,3), group_by, streaming engine
#   datamash  datamash --narm -g 2 min 4 max 4 sum 4 count 4, one thread, on
#             a copy made beforehand (not timed): datamash splits at every
#             delimiter and knows no quotes, so the copy is TSV without the
#             header, sorted by site, empty readings written NA (datamash
#             refuses an empty number; --narm skips NA)
#   Miller    mlr --icsv --ojson stats1 -a min,max,sum,count -f reading
#             -g site FILE, GOMAXPROCS=2
#   text      brc -t 2 on a text file (`brc generate`, same keys and seed)
#             of about the CSV file's size: the CSV reader's cost per byte
#             against the challenge format's
#
# First checks that every tool prints brc's bytes: min, max and count as
# they are, the mean from the sum rounded half toward +infinity at 3
# decimals (exact sums for DuckDB and Polars; datamash's long double and
# Miller's double sums rounded to 3 decimals). Then times brc against each,
# alternated pairs (scripts/ab.py): PAIRS pairs (default 11) for DuckDB,
# Polars and text, SLOW_PAIRS (default 3) for datamash and Miller, and
# prints each ratio (theirs over brc's), brc's peak memory and the tools'
# versions after a header naming the command, date and machine. Kept as
# bench/results/<date>-csv.txt, it is rendered into docs/benchmarks.md
# (scripts/render_benchmarks.py --csv):
#   scripts/csv.sh 11 > bench/results/$(date +%F)-csv.txt
#
# Options:
#   --check     check only, no timing: on a file of ROWS rows (default 2e4)
#               in a temporary directory, brc against the Python model
#               (`csv_tools.py model`: csv and decimal), DuckDB and Polars,
#               and brc's --format csv (with its missing column) against
#               the model's; datamash and Miller too when TOOLS names them
#   --model     the Python model stands in for brc (whose CSV reader it
#               describes), to try the script before brc reads CSV
#   --install   install datamash and Miller with apt-get when missing
#   --rows N    rows, as brc generate takes them (1e8, 2e4, 5000000)
# Environment: BRC=path, a brc binary to use instead of building one;
# PYTHON, a Python with duckdb and polars (default: bench/venv/bin/python,
# made with pip if missing); KEYS=413 (or 10k, or a count);
# TOOLS="duckdb polars datamash miller text" (--check: "duckdb polars");
# SLOW_PAIRS=3.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The command as given, environment knobs first, for the results' header.
command=
for var in KEYS TOOLS SLOW_PAIRS; do
    if [[ ${!var+x} && ${!var} == *[[:space:]]* ]]; then
        command+="$var=\"${!var}\" "
    elif [ -n "${!var+x}" ]; then
        command+="$var=${!var} "
    fi
done
command+="scripts/csv.sh"
[ $# -eq 0 ] || command+=" $*"
check=no
model=no
install=no
rows=
pairs=
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help)
        usage
        exit 0
        ;;
    --check) check=yes ;;
    --model) model=yes ;;
    --install) install=yes ;;
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
if [ "$check" = yes ]; then
    rows=${rows:-2e4}
    tools=" ${TOOLS:-duckdb polars} "
else
    rows=${rows:-1e8}
    tools=" ${TOOLS:-duckdb polars datamash miller text} "
fi
[[ $rows =~ ^[0-9][0-9_]*([eE][0-9]+)?$ ]] || die "expected a row count like 1e8, found '$rows'"
keys=${KEYS:-413}
[[ $keys =~ ^[0-9A-Za-z_.]+$ ]] || die "KEYS: expected 413, 10k or a count, found '$keys'"
for tool in $tools; do
    case $tool in
    duckdb | polars | datamash | miller | text) ;;
    *) die "TOOLS: unknown tool '$tool' (known: duckdb polars datamash miller text)" ;;
    esac
done
wants() { [[ $tools == *" $1 "* ]]; }
# The load before this script's own build and data.
load=$(cut -d ' ' -f 1 /proc/loadavg)

enter_repo

# --- tools -------------------------------------------------------------------

missing=()
! wants datamash || command -v datamash >/dev/null || missing+=(datamash)
! wants miller || command -v mlr >/dev/null || missing+=(miller)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$install" = no ]; then
        how="apt-get install ${missing[*]}"
        [ "$(id -u)" -eq 0 ] || how="sudo $how"
        die "missing ${missing[*]}: install with \`$how\`, or rerun with --install"
    fi
    echo "== installing ${missing[*]}" >&2
    as_root apt-get update -q >&2
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2
fi

if [ -n "${PYTHON:-}" ]; then
    python=$PYTHON
else
    python=bench/venv/bin/python
    if ! "$python" -c 'import duckdb, polars' 2>/dev/null; then
        echo "== installing duckdb and polars into bench/venv" >&2
        python3 -m venv bench/venv
        "$python" -m pip install --quiet --upgrade pip >&2
        "$python" -m pip install --quiet duckdb polars >&2
    fi
fi
if wants duckdb || wants polars; then
    "$python" -c 'import duckdb, polars' ||
        die "$python cannot import duckdb and polars; set PYTHON to one that can"
fi

# brc generates the data, whatever stands in its place.
build_brc >&2
[[ $BRC != "$root"/* ]] || BRC=${BRC#"$root"/}
tools_py=scripts/compare/csv_tools.py

# --- data --------------------------------------------------------------------

work=$(mktemp -d)
if [ "$check" = yes ]; then
    data=$work/data
    mkdir "$data"
else
    data=bench/data
    mkdir -p "$data"
fi
trap 'rm -rf "$work"' EXIT
file=$data/csv-$keys-$rows.csv
sorted_tsv=$data/csv-$keys-$rows.sorted.tsv

if [ ! -s "$file" ]; then
    echo "== generating $file" >&2
    # Written to FILE.tmp and renamed when done: no partial file is reused.
    "$BRC" generate --format csv --rows "$rows" --keys "$keys" --seed 1 -q -o "$file"
fi
if wants datamash && [ ! -s "$sorted_tsv" ]; then
    echo "== $sorted_tsv: datamash's copy (TSV, no header, NA for empty, sorted by site)" >&2
    "$python" "$tools_py" tsv "$file" "$sorted_tsv.tmp"
    LC_ALL=C sort -t "$(printf '\t')" -k2,2 -s -S 25% -T "$data" "$sorted_tsv.tmp" >"$sorted_tsv.tmp2"
    rm "$sorted_tsv.tmp"
    mv "$sorted_tsv.tmp2" "$sorted_tsv"
fi
text_file=
if wants text && [ "$check" = no ]; then
    # Rows of the text format that make about the CSV file's bytes, from
    # the bytes of 10^5 of its rows.
    sample=$("$BRC" generate --rows 100000 --keys "$keys" --seed 1 -q | wc -c)
    text_rows=$(($(stat -c %s "$file") * 100000 / sample))
    text_file=$data/measurements-$keys-$text_rows.txt
    if [ ! -s "$text_file" ]; then
        echo "== generating $text_file (about the CSV file's size)" >&2
        "$BRC" generate --rows "$text_rows" --keys "$keys" --seed 1 -q -o "$text_file"
    fi
fi

# --- commands ----------------------------------------------------------------

q() { printf '%q' "$1"; }
if [ "$model" = yes ]; then
    brc_cmd="$(q "$python") $tools_py model $(q "$file")"
    brc_name="the Python model (standing in for brc)"
else
    brc_cmd="$(q "$BRC") -t 2 --csv --key site --value reading $(q "$file")"
    brc_name=brc
fi
model_cmd="$(q "$python") $tools_py model $(q "$file")"
duck_cmd="$(q "$python") $tools_py duckdb $(q "$file") 2"
polars_cmd="$(q "$python") $tools_py polars $(q "$file") 2"
datamash_cmd="LC_ALL=C datamash --narm -g 2 min 4 max 4 sum 4 count 4 < $(q "$sorted_tsv")"
miller_cmd="GOMAXPROCS=2 mlr --icsv --ojson stats1 -a min,max,sum,count -f reading -g site $(q "$file")"
text_cmd="$(q "$BRC") -t 2 $(q "$text_file")"
# What each tool prints, as brc's official line.
duck_result=$duck_cmd
polars_result=$polars_cmd
datamash_result="$datamash_cmd | $(q "$python") $tools_py datamash"
miller_result="$miller_cmd | $(q "$python") $tools_py miller"
label() {
    case $1 in
    model) echo "the Python model" ;;
    duck) echo DuckDB ;;
    polars) echo Polars ;;
    datamash) echo datamash ;;
    miller) echo Miller ;;
    esac
}

# --- check -------------------------------------------------------------------

# Compares $work/$1.out with brc's, showing where they part.
same_as_brc() {
    if ! cmp -s "$work/brc.out" "$work/$1.out"; then
        local at
        at=$(cmp "$work/brc.out" "$work/$1.out" 2>&1 | sed -n 's/.*differ: \(byte\|char\) \([0-9]*\),.*/\2/p' || true)
        at=${at:-1}
        echo "$brc_name: ...$(tail -c +"$((at > 60 ? at - 60 : 1))" "$work/brc.out" | head -c 160)..." >&2
        echo "$(label "$1"): ...$(tail -c +"$((at > 60 ? at - 60 : 1))" "$work/$1.out" | head -c 160)..." >&2
        die "$(label "$1")'s output differs from $brc_name's (at byte $at; outputs above)"
    fi
}

sh -c "$brc_cmd" >"$work/brc.out" ||
    die "\`$brc_cmd\` failed (until brc reads CSV, --model stands in for it)"
[ -s "$work/brc.out" ] || die "$brc_name printed nothing"
checked=("$brc_name")
if [[ $check == yes && $model == no ]]; then
    sh -c "$model_cmd" >"$work/model.out"
    same_as_brc model
    checked+=("the Python model")
    # brc's CSV format, with the count of missing cells, against the model's.
    sh -c "$(q "$BRC") -t 2 --csv --key site --value reading --format csv $(q "$file")" >"$work/brc-csv.out"
    sh -c "$model_cmd --format csv" >"$work/model-csv.out"
    cmp -s "$work/brc-csv.out" "$work/model-csv.out" ||
        die "brc --format csv differs from the model's: $(diff "$work/brc-csv.out" "$work/model-csv.out" | head -n 4 | tr '\n' ' ')"
fi
for tool in duck polars datamash miller; do
    want=$tool
    [ "$tool" != duck ] || want=duckdb
    wants "$want" || continue
    result=${tool}_result
    sh -c "${!result}" >"$work/$tool.out"
    same_as_brc "$tool"
    checked+=("$(label "$tool")")
done
list=${checked[*]}
if [ ${#checked[@]} -gt 1 ]; then
    last=${checked[${#checked[@]} - 1]}
    list=$(
        IFS=,
        echo "${checked[*]:0:${#checked[@]}-1}" | sed 's/,/, /g'
    )" and $last"
fi
if [ "$check" = yes ]; then
    echo "csv.sh --check: $rows rows (--keys $keys): $list print the same bytes"
    [ "$model" = yes ] || echo "csv.sh --check: brc --format csv prints the model's CSV, missing counts included"
    exit 0
fi

# --- time --------------------------------------------------------------------

# A fresh page cache, as scripts/compare.sh reads its files: each dropped
# and read once, so that every run starts from the same state.
for f in "$file" ${text_file:+"$text_file"}; do
    sync "$f"
    dd if="$f" iflag=nocache count=0 status=none ||
        echo "warning: could not drop $f from the page cache; timing it as cached" >&2
    cat "$f" >/dev/null
done

cpu() { lscpu | sed -n "s/^$1: *//p" | head -n 1; }
size=$(numfmt --to=si --suffix=B --format=%.1f "$(stat -c %s "$file")")
notes="BRC=$BRC at $(git rev-parse --short HEAD 2>/dev/null || echo unknown), PYTHON=$python"
[ "$model" = no ] || notes+=", MODEL: the Python model times in brc's place"
echo "# $command ($notes)"
echo "# $(date +%F), Model name: $(cpu 'Model name'), family $(cpu 'CPU family') model $(cpu Model), $(nproc) vCPUs; load average before: $load"
data_line="$rows rows of \`brc generate --format csv --keys $keys --seed 1\` ($size; 3 decimals, quoted names, 1% empty)"
! wants datamash || data_line+=", datamash on a sorted TSV copy"
! wants text || data_line+=", text: $text_rows rows of \`brc generate --keys $keys --seed 1\` ($(numfmt --to=si --suffix=B --format=%.1f "$(stat -c %s "$text_file")"))"
echo "# $data_line; 2 threads each (datamash 1)"
echo "outputs: $list print the same bytes"

for tool in duck polars datamash miller text; do
    want=$tool
    [ "$tool" != duck ] || want=duckdb
    wants "$want" || continue
    n=$pairs
    [[ $tool != datamash && $tool != miller ]] || n=$slow_pairs
    cmd=${tool}_cmd
    echo "== $tool over brc"
    # brc says on stderr how many cells were missing: not in the results.
    "$python" scripts/ab.py --pairs "$n" "$brc_cmd 2>/dev/null" "${!cmd}"
done
/usr/bin/time -f "brc peak memory: %M KiB, %e s" sh -c "$brc_cmd" 2>&1 >/dev/null | tail -n 1
versions=$("$python" -c 'import duckdb, polars; print("duckdb", duckdb.__version__, "polars", polars.__version__)')
! wants datamash || versions+=" datamash $(datamash --version | head -n 1 | sed 's/.* //')"
! wants miller || versions+=" miller $(mlr --version | sed 's/^mlr //')"
echo "$versions"

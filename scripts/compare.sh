#!/usr/bin/env bash
# Usage: scripts/compare.sh [--publish | --out DIR] [--install] [--dry-run] [ROWS]
#
# brc side by side with DuckDB, Polars, GNU datamash, awk and, from checkouts
# you provide, other authors' 1BRC programs ("peers"), end to end, on files
# made by `brc generate` (the official 413 stations and the 10K-key set),
# from a fresh clone:
#
#   1. checks that the tools it needs are installed: hyperfine, time and,
#      as TOOLS and PEERS ask, datamash, awk, Miller and each peer's compiler; it
#      stops, naming what is missing, unless --install lets it install them
#      (apt-get, through sudo when not root); duckdb and polars go into a
#      venv at bench/venv (pip); builds each peer with its own documented
#      command (see PEERS below);
#   2. builds brc in release mode and generates bench/data/measurements-<KEYS>-<ROWS>.txt
#      (reused when present), plus a file with SMALL_ROWS rows for the tools
#      too slow for the full one, and reads each file into the page cache
#      afresh (dropped, then read once), so that every run starts from the
#      same state;
#   3. runs every tool once and cross-checks its result with brc's (same
#      stations, same min and max, mean within 0.1): a tool that disagrees is
#      marked failed and not timed;
#   4. times each tool with hyperfine (warm-up runs first, so the page cache
#      is warm) and measures its peak RSS with one `/usr/bin/time -v` run;
#      then runs each peer and brc alternately (PAIRS below), so that the
#      machine's drift hits both alike;
#   5. writes the results, <date>-<host>.json (-<ROWS> appended for a row
#      count other than 1e8), and renders from them a page, benchmarks.md,
#      and a chart, benchmarks.svg (scripts/render_benchmarks.py), into
#      bench/work/<time stamp>/ beside the run's details, and says where.
#
# The Parquet set, brc against DuckDB and Polars on the One Trillion Row
# Challenge's files, is scripts/parquet.sh, run apart; the page shows its
# newest results kept in bench/results/ (*-parquet.txt) beside these.
# The CSV set (`csv` in TOOLS) is scripts/csv.sh, run after the text sets
# with ROWS rows: brc against DuckDB, Polars, datamash and Miller on a file
# of `brc generate --format csv`, alternated pairs; its output, <date>-csv.txt
# (-csv-<ROWS>.txt for a row count other than 1e8), goes beside the results
# and onto the page.
#
# Options:
#   --publish    write the results to bench/results/ and render the published
#                docs/benchmarks.md and docs/benchmarks.svg instead: for the
#                figures the repository shows, not for a quick try
#   --out DIR    write the results, page and chart to DIR instead
#   --install    install missing system packages with apt-get (never done
#                without it)
#   --dry-run    check the tools and print where the outputs would go, then
#                stop: nothing is installed, built, generated or timed
#
# ROWS is a count like 1e8 (the default), 1e6 (a quick run) or 2500000.
# Environment knobs (the defaults are what the published figures use):
#   RUNS=5 WARMUP=1        hyperfine runs and warm-up runs per tool
#   THREADS=$(nproc)       threads for brc's parallel engines, DuckDB and Polars
#   SMALL_ROWS=ROWS/10     rows for the slow tools (brc naive, datamash, awk);
#                          their times are extrapolated linearly and marked so
#   KEYS="413 10k"         data sets, as `brc generate --keys` takes them
#   TOOLS="brc duckdb polars datamash awk csv"
#   CSV_PAIRS=11 CSV_KEYS=413  the CSV set's pairs (SLOW_PAIRS=3 for datamash
#                          and Miller) and station set (scripts/csv.sh)
#   BRC=path               a brc binary to use instead of building one
#   PEERS="NAME=CHECKOUT ..." peers to include, each a clone you made of its
#                          repository; NAME picks its adapter in
#                          scripts/compare/peers/NAME.sh, which knows its build
#                          and run commands:
#                            austindonisan=DIR  github.com/austindonisan/1brc (clang)
#                            austindonisan-unmap=DIR  the same, built to wait
#                                               for its workers (UNMAP true)
#                            lehuyduc=DIR       github.com/lehuyduc/1brc-simd (g++)
#                          Each is built from DIR into bench/work/peers/NAME,
#                          run with THREADS threads and with 1 on the full
#                          files, cross-checked and timed like brc, and marked
#                          "not in this repository" on the page. E.g.
#                            PEERS="austindonisan=$HOME/src/1brc" TOOLS=brc scripts/compare.sh
#   PAIRS=21               then each peer and brc's default engine run alternately,
#                          this many pairs per data set and thread count
#                          (scripts/ab.py), for the side-by-side tables; 0: none
#   PAUSE=0.3              seconds of quiet after each of those runs, so that
#                          what a run leaves to the kernel (unmapping, freeing
#                          its pages) is done before the next starts
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

publish=no
install=no
dry_run=no
out_dir=
rows_arg=
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help)
        usage
        exit 0
        ;;
    --publish) publish=yes ;;
    --install) install=yes ;;
    --dry-run) dry_run=yes ;;
    --out)
        [ $# -ge 2 ] || die "--out needs a directory; see --help"
        out_dir=$2
        shift
        ;;
    --out=*) out_dir=${1#--out=} ;;
    -*) die "unknown option '$1'; see --help" ;;
    *)
        [ -z "$rows_arg" ] || die "expected at most one ROWS, found '$rows_arg' and '$1'; see --help"
        rows_arg=$1
        ;;
    esac
    shift
done
[[ $publish == no || -z $out_dir ]] ||
    die "--publish writes to docs/ and bench/results/; it takes no --out"
# Made absolute before enter_repo moves to the repository root.
[ -z "$out_dir" ] || out_dir=$(realpath -m -s -- "$out_dir")

# What was set by hand goes into the results, so the run can be repeated.
overrides=""
for var in RUNS WARMUP THREADS SMALL_ROWS KEYS TOOLS BRC PEERS PAIRS PAUSE CSV_PAIRS CSV_KEYS SLOW_PAIRS; do
    if [[ ${!var+x} && ${!var} == *[[:space:]]* ]]; then
        overrides+="$var=\"${!var}\" "
    elif [ -n "${!var+x}" ]; then
        overrides+="$var=${!var} "
    fi
done

# Peers as NAME=CHECKOUT words; checkouts made absolute before enter_repo
# moves to the repository root.
peer_names=()
peer_dirs=()
for word in ${PEERS:-}; do
    [[ $word =~ ^([A-Za-z0-9_-]+)=(.+)$ ]] || die "PEERS: expected NAME=CHECKOUT, found '$word'"
    name=${BASH_REMATCH[1]}
    dir=${BASH_REMATCH[2]}
    [ -f "$(dirname "${BASH_SOURCE[0]}")/compare/peers/$name.sh" ] ||
        die "PEERS: no adapter for '$name' (known: $(cd "$(dirname "${BASH_SOURCE[0]}")/compare/peers" && ls | sed 's/\.sh$//' | paste -sd ' '))"
    [ -d "$dir" ] || die "PEERS: $name's checkout $dir is not a directory"
    peer_names+=("$name")
    peer_dirs+=("$(cd "$dir" && pwd)")
done

enter_repo

# The machine's load before this script's own work (building brc,
# generating data, warming the page cache), which would otherwise count
# as other tenants' work: a run that generated its data started "busy".
load_at_start=$(cut -d ' ' -f 1 /proc/loadavg)

# Reads a row count written as digits with an optional exponent (1e8).
rows_of() {
    [[ $1 =~ ^([0-9]{1,13})([eE]([0-9]{1,2}))?$ ]] || die "expected a row count like 1e8 or 5000000, found '$1'"
    local digits=$((10#${BASH_REMATCH[1]})) exponent=$((10#${BASH_REMATCH[3]:-0}))
    # Bash arithmetic wraps silently past 2^63; no data set needs 1e13 rows.
    [[ $exponent -le 12 && $digits -le 1000000000000 ]] || die "the row count '$1' is too large"
    local n=$((digits * 10 ** exponent))
    [[ $n -gt 0 && $n -le 1000000000000 ]] || die "expected a row count from 1 to 1e12, found '$1'"
    echo "$n"
}

# Names a row count the short way for file names: 100000000 -> 1e8.
label_of() {
    local m=$1 e=0
    while [ $((m % 10)) -eq 0 ]; do
        m=$((m / 10))
        e=$((e + 1))
    done
    if [ "$e" -eq 0 ]; then echo "$m"; else echo "${m}e$e"; fi
}

rows=$(rows_of "${rows_arg:-1e8}")
rows_label=$(label_of "$rows")
small_rows=$(rows_of "${SMALL_ROWS:-$(((rows + 9) / 10))}")
runs=${RUNS:-5}
warmup=${WARMUP:-1}
threads=${THREADS:-$(nproc)}
pairs=${PAIRS:-21}
[[ $pairs =~ ^[0-9]{1,4}$ ]] || die "PAIRS: expected a number of pairs, found '$pairs'"
pause=${PAUSE:-0.3}
[[ $pause =~ ^[0-9]{1,2}(\.[0-9]{1,3})?$ ]] || die "PAUSE: expected seconds such as 0.3, found '$pause'"
keysets=${KEYS:-"413 10k"}
tools=" ${TOOLS:-brc duckdb polars datamash awk csv} "
csv_pairs=${CSV_PAIRS:-11}
[[ $csv_pairs =~ ^[1-9][0-9]{0,3}$ ]] || die "CSV_PAIRS: expected a number of pairs, found '$csv_pairs'"
csv_keys=${CSV_KEYS:-413}
[ "$small_rows" -le "$rows" ] || die "SMALL_ROWS ($small_rows) is larger than ROWS ($rows)"
wants() { [[ $tools == *" $1 "* ]]; }

# Where the outputs go. A run writes into bench/work/ (ignored by git)
# unless --publish asks for the published files: a quick try must not
# overwrite the figures the repository shows.
stamp=$(date +%Y%m%d-%H%M%S)
work=bench/work/$stamp
host=$(uname -n)
host=${host%%.*}
date_=$(date +%Y-%m-%d)
results_name=$date_-$host.json
[ "$rows_label" = 1e8 ] || results_name=$date_-$host-$rows_label.json
csv_name=$date_-csv.txt
[ "$rows_label" = 1e8 ] || csv_name=$date_-csv-$rows_label.txt
if [ "$publish" = yes ]; then
    results=bench/results/$results_name
    csv_results=bench/results/$csv_name
    page=docs/benchmarks.md
    chart=docs/benchmarks.svg
else
    out_at=${out_dir:-$work}
    # Shown relative to the repository when inside it.
    [[ $out_at != "$root"/* ]] || out_at=${out_at#"$root"/}
    results=$out_at/$results_name
    csv_results=$out_at/$csv_name
    page=$out_at/benchmarks.md
    chart=$out_at/benchmarks.svg
fi

# --- 1. tools -------------------------------------------------------------

# Fills `missing` with the apt packages of the tools this run needs and
# does not find.
find_missing() {
    missing=()
    command -v hyperfine >/dev/null || missing+=(hyperfine)
    # Every tool but the peers gets its peak RSS from `/usr/bin/time -v`.
    if [[ -n ${tools// /} ]] && ! [ -x /usr/bin/time ]; then missing+=(time); fi
    if wants datamash || wants csv; then command -v datamash >/dev/null || missing+=(datamash); fi
    ! wants csv || command -v mlr >/dev/null || missing+=(miller)
    ! wants awk || command -v awk >/dev/null || missing+=(mawk)
    # Each peer's adapter names the compiler it needs, as apt calls it.
    local name
    for name in ${peer_names[@]+"${peer_names[@]}"}; do
        . "scripts/compare/peers/$name.sh"
        command -v "$peer_needs" >/dev/null || missing+=("$peer_needs")
    done
    if ! command -v python3 >/dev/null; then
        missing+=(python3)
    elif [[ $need_venv == yes ]] && ! python3 -c 'import ensurepip' 2>/dev/null; then
        # Debian splits venv's pip bootstrap into its own package.
        missing+=(python3-venv)
    fi
}

venv=bench/venv
venv_py=$venv/bin/python
# The lab's own scripts need only the standard library.
py=python3
need_venv=no
if wants duckdb || wants polars || wants csv; then
    "$venv_py" -c 'import duckdb, polars' 2>/dev/null || need_venv=yes
fi

if [ "$dry_run" = yes ]; then
    echo "results: $results"
    ! wants csv || echo "csv set: $csv_results"
    echo "page:    $page"
    echo "chart:   $chart"
    [ "$need_venv" = no ] || echo "a run would first install duckdb and polars into $venv (pip)"
fi

find_missing
if [ ${#missing[@]} -gt 0 ]; then
    if [[ $install == no || $dry_run == yes ]]; then
        how="apt-get install ${missing[*]}"
        [ "$(id -u)" -eq 0 ] || how="sudo $how"
        command -v apt-get >/dev/null || how="your package manager"
        die "missing ${missing[*]}: install with \`$how\`, or rerun with --install"
    fi
    command -v apt-get >/dev/null || die "missing ${missing[*]} and no apt-get to install them"
    echo "== installing ${missing[*]}"
    as_root apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
    find_missing
    [ ${#missing[@]} -eq 0 ] || die "still missing ${missing[*]} after apt-get install"
fi

if [ "$dry_run" = yes ]; then
    echo "the tools are installed; a dry run stops here, before building, generating or timing"
    exit 0
fi

echo "== this run writes $results, $page and $chart"

if [ "$need_venv" = yes ]; then
    echo "== installing duckdb and polars into $venv"
    python3 -m venv "$venv"
    "$venv_py" -m pip install --quiet --upgrade pip
    "$venv_py" -m pip install --quiet duckdb polars
fi

build_brc
# Commands are recorded as run from the repository root, without the
# machine's path to it.
[[ $BRC != "$root"/* ]] || BRC=${BRC#"$root"/}

# The engines and the default come from `brc --help`, so a new engine is
# compared without touching this script.
engine_help=$("$BRC" --help | sed -n '/--engine/,/\[default:/p')
engines=$(sed -n 's/^ *- \([A-Za-z0-9_-]*\):.*/\1/p' <<<"$engine_help")
default_engine=$(sed -n 's/.*\[default: \([A-Za-z0-9_-]*\)\].*/\1/p' <<<"$engine_help")
[[ -n $engines && -n $default_engine ]] ||
    die "could not read the engines from \`$BRC --help\`"
# Engines that run on one thread and slowly get the small file.
slow_engines=" naive "

awk_version=$(awk -W version 2>/dev/null | head -n 1 || true)
case "$awk_version" in
mawk*) awk_name=mawk ;;
*)
    awk_version=$(awk --version 2>/dev/null | head -n 1 || true)
    awk_name=$(case "$awk_version" in GNU*) echo gawk ;; *) echo awk ;; esac)
    ;;
esac

# Peers are built afresh on each run, for each thread count they run with.
peer_threads=$threads
[ "$threads" -eq 1 ] || peer_threads+=" 1"
peer_labels=()
peer_versions=()
peer_built=()
for i in "${!peer_names[@]}"; do
    name=${peer_names[$i]}
    # An adapter may name a build of its own (peer_label); else the
    # repository names it.
    unset peer_label
    . "scripts/compare/peers/$name.sh"
    peer_labels+=("${peer_label:-${peer_url#https://github.com/}}")
    bin=bench/work/peers/$name
    rm -rf "$bin"
    mkdir -p "$bin"
    bin=$(cd "$bin" && pwd)
    echo "== building ${peer_labels[$i]} from ${peer_dirs[$i]}"
    built=yes
    for n in $peer_threads; do
        if ! peer_build "${peer_dirs[$i]}" "$bin" "$n" >"$bin/build.log" 2>&1; then
            built="its build failed: $(grep -m 1 . "$bin/build.log" | head -c 200)"
            echo "   $built"
            break
        fi
    done
    peer_built+=("$built")
    commit=$(git -C "${peer_dirs[$i]}" rev-parse --short HEAD 2>/dev/null || echo "unknown commit")
    git -C "${peer_dirs[$i]}" diff --quiet HEAD 2>/dev/null || commit+=", modified"
    peer_versions+=(--version "${peer_labels[$i]}=$commit of $peer_url; $(peer_build_note)")
done

# --- 2. data --------------------------------------------------------------

mkdir -p bench/data
data_file() { echo "bench/data/measurements-$1-$(label_of "$2").txt"; }

ensure_data() {
    local file
    file=$(data_file "$1" "$2")
    if [ ! -s "$file" ]; then
        echo "== generating $file"
        # brc generate writes FILE.tmp and renames it when done, so an
        # interrupted run never leaves a partial file to be reused.
        "$BRC" generate --rows "$2" --keys "$1" --seed 1 -o "$file"
    fi
}

for keys in $keysets; do
    ensure_data "$keys" "$rows"
    ensure_data "$keys" "$small_rows"
done

# Every run starts from the same page-cache state: each file dropped from
# the cache and read once from disk. How the kernel caches a file depends
# on how it got there: read once, it is held in 2 MiB folios (as `cp` or
# `cat` leave it); read back by a reader that maps it without readahead,
# in 4 KiB pages, and then every mapped read pays the kernel for each page
# (brc 1.08x the CPU time on the 10K set's 10^8 rows; DuckDB and Polars,
# which copy with read(), 1.01x and 0.98x; docs/PERFORMANCE.md, *Memory*).
# Which of the two a reused file was in depended on the machine's history.
echo "== reading the data files into the page cache, fresh"
for keys in $keysets; do
    for n in "$rows" "$small_rows"; do
        file=$(data_file "$keys" "$n")
        # Written back first: the kernel drops clean pages only.
        sync "$file"
        dd if="$file" iflag=nocache count=0 status=none ||
            echo "warning: could not drop $file from the page cache; timing it as cached" >&2
        cat "$file" >/dev/null
    done
done

# --- 3 and 4. check, then time, each tool ---------------------------------

mkdir -p "$work"
entries=$work/entries.jsonl
side_by_side=$work/pairs.jsonl

# Versions of the tools this run uses.
tool_versions=()
! wants duckdb || tool_versions+=(--version "duckdb=$("$venv_py" -c 'import duckdb; print(duckdb.__version__)')")
! wants polars || tool_versions+=(--version "polars=$("$venv_py" -c 'import polars; print(polars.__version__)')")
if wants datamash || wants csv; then tool_versions+=(--version "datamash=$(datamash --version | head -n 1)"); fi
! wants csv || tool_versions+=(--version "miller=$(mlr --version)")
! wants awk || tool_versions+=(--version "awk=$awk_version")
published=
[ "$publish" = no ] || published="--publish "

"$py" scripts/compare/results.py begin --out "$work/meta.json" \
    --command "${overrides}scripts/compare.sh $published$rows_label" \
    --rows "$rows" --small-rows "$small_rows" \
    --warmup "$warmup" --runs "$runs" --threads "$threads" \
    --load-at-start "$load_at_start" \
    --version "brc=$("$BRC" --version) ($(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- src Cargo.toml Cargo.lock 2>/dev/null || echo ', modified'))" \
    --version "rustc=$(rustc --version 2>/dev/null || echo unknown)" \
    ${tool_versions[@]+"${tool_versions[@]}"} \
    --version "hyperfine=$(hyperfine --version)" \
    ${peer_versions[@]+"${peer_versions[@]}"}

# run_tool DATASET LABEL GROUP THREADS FILE REFERENCE CHECK_CMD TIMED_CMD [FAILURE]
#
# CHECK_CMD prints the tool's result for the cross-check; TIMED_CMD is what
# hyperfine times (the same, except that brc is timed in its default format).
# A FAILURE message records the tool as failed without running it. A peer's
# CPU time and peak RSS come from scripts/compare/reap.py, which waits for
# the processes it leaves running, instead of `/usr/bin/time -v`.
run_tool() {
    local dataset=$1 label=$2 group=$3 nthreads=$4 file=$5 reference=$6 check_cmd=$7 timed_cmd=$8
    local slug out status msg measured
    slug=$dataset-$(tr -c 'A-Za-z0-9\n' '-' <<<"$label" | tr -s '-' | sed 's/-$//')
    out=$work/$slug
    measured=$rows
    [ "$file" = "$(data_file "$dataset" "$rows")" ] || measured=$small_rows
    echo
    echo "== $dataset: $label on $file"
    status=ok
    if [ -n "${9:-}" ]; then
        status=failed
        msg=$9
    elif ! sh -c "$check_cmd" >"$out.result" 2>"$out.stderr"; then
        status=failed
        msg="exited with an error: $(head -c 300 "$out.stderr" | head -n 1)"
    elif ! msg=$("$py" scripts/compare/check.py "$reference" "$out.result"); then
        status=failed
    fi
    echo "   $msg"
    if [ "$status" = ok ]; then
        if ! hyperfine --warmup "$warmup" --runs "$runs" --export-json "$out.hyperfine.json" \
            --command-name "$label" "$timed_cmd"; then
            status=failed
            msg="failed while timed"
        elif [ "$group" = peer ]; then
            if ! "$py" scripts/compare/reap.py "$out.reaped.json" "$timed_cmd"; then
                status=failed
                msg="failed under scripts/compare/reap.py"
            fi
        elif ! /usr/bin/time -v -o "$out.timev" sh -c "$timed_cmd" >/dev/null; then
            status=failed
            msg="failed under /usr/bin/time -v"
        fi
    fi
    tool_status=$status
    local extra=(--timev "$out.timev")
    [ "$group" != peer ] || extra=(--reaped "$out.reaped.json")
    "$py" scripts/compare/results.py add --entries "$entries" \
        --dataset "$dataset" --tool "$label" --group "$group" --threads "$nthreads" \
        --command "$timed_cmd" --file "$file" \
        --rows-measured "$measured" --rows-full "$rows" \
        --status "$status" --check "$msg" \
        --hyperfine "$out.hyperfine.json" "${extra[@]}"
}

q() { printf '%q' "$1"; }
plural() { if [ "$1" -eq 1 ]; then echo "1 thread"; else echo "$1 threads"; fi; }
reference_label="brc $default_engine ($(plural "$threads"))"

for keys in $keysets; do
    full=$(data_file "$keys" "$rows")
    small=$(data_file "$keys" "$small_rows")
    # brc's default engine is the reference every other result must match.
    ref_full=$work/$keys-reference-full.csv
    ref_small=$work/$keys-reference-small.csv
    "$BRC" --engine "$default_engine" --threads "$threads" --format csv "$full" >"$ref_full"
    "$BRC" --engine "$default_engine" --threads "$threads" --format csv "$small" >"$ref_small"

    if [[ $tools == *" brc "* ]]; then
        for engine in $engines; do
            if [[ $slow_engines == *" $engine "* ]]; then
                file=$small ref=$ref_small n=1
            else
                file=$full ref=$ref_full n=$threads
            fi
            cmd="$(q "$BRC") --engine $engine --threads $n $(q "$file")"
            run_tool "$keys" "brc $engine ($(plural "$n"))" brc "$n" "$file" "$ref" \
                "$cmd --format csv" "$cmd"
        done
        if [ "$threads" -ne 1 ]; then
            cmd="$(q "$BRC") --engine $default_engine --threads 1 $(q "$full")"
            run_tool "$keys" "brc $default_engine (1 thread)" brc 1 "$full" "$ref_full" \
                "$cmd --format csv" "$cmd"
        fi
    fi
    if [[ $tools == *" duckdb "* ]]; then
        cmd="$(q "$venv_py") scripts/compare/duckdb_query.py $(q "$full") $threads"
        run_tool "$keys" "DuckDB ($(plural "$threads"))" other "$threads" "$full" "$ref_full" "$cmd" "$cmd"
    fi
    if [[ $tools == *" polars "* ]]; then
        cmd="POLARS_MAX_THREADS=$threads $(q "$venv_py") scripts/compare/polars_query.py $(q "$full")"
        run_tool "$keys" "Polars ($(plural "$threads"))" other "$threads" "$full" "$ref_full" "$cmd" "$cmd"
    fi
    if [[ $tools == *" datamash "* ]]; then
        cmd="LC_ALL=C datamash -t';' -s -g1 min 2 mean 2 max 2 < $(q "$small")"
        run_tool "$keys" "GNU datamash (1 thread)" other 1 "$small" "$ref_small" "$cmd" "$cmd"
    fi
    if [[ $tools == *" awk "* ]]; then
        cmd="LC_ALL=C awk -f scripts/compare/aggregate.awk $(q "$small")"
        run_tool "$keys" "$awk_name (1 thread)" other 1 "$small" "$ref_small" "$cmd" "$cmd"
    fi
    for i in "${!peer_names[@]}"; do
        . "scripts/compare/peers/${peer_names[$i]}.sh"
        bin=bench/work/peers/${peer_names[$i]}
        failure=
        [ "${peer_built[$i]}" = yes ] || failure=${peer_built[$i]}
        for n in $peer_threads; do
            peer_cmd=$(peer_command "$bin" "$full" "$n")
            run_tool "$keys" "${peer_labels[$i]} ($(plural "$n"))" peer "$n" "$full" "$ref_full" \
                "$(peer_result "$bin" "$full" "$n")" "$peer_cmd" "$failure"
            # Sequential medians drift with the machine's other work; run
            # alternately, the peer and brc share it.
            if [ "$tool_status" = ok ] && [ "$pairs" -gt 0 ]; then
                out=$work/$keys-${peer_names[$i]}-$n-pairs.json
                brc_cmd="$(q "$BRC") --engine $default_engine --threads $n $(q "$full")"
                echo "== $keys: ${peer_labels[$i]} and brc, $pairs alternated pairs, $(plural "$n")"
                "$py" scripts/ab.py --pairs "$pairs" --pause "$pause" --json "$out" "$peer_cmd" "$brc_cmd"
                "$py" scripts/compare/results.py pair --pairs "$side_by_side" --dataset "$keys" \
                    --peer "${peer_labels[$i]}" --brc "brc $default_engine" --threads "$n" --ab "$out"
            fi
        done
    done
done

# --- 4b. the CSV set --------------------------------------------------------

# scripts/csv.sh checks and times it (its own data, tools and pairs); a
# failure is reported and the page rendered without it.
csv_render=()
csv_failed=no
if wants csv; then
    echo
    echo "== the CSV set: scripts/csv.sh --rows $rows_label $csv_pairs (KEYS=$csv_keys)"
    mkdir -p "$(dirname "$csv_results")"
    if env -u TOOLS KEYS="$csv_keys" BRC="$BRC" PYTHON="$venv_py" \
        scripts/csv.sh --rows "$rows_label" "$csv_pairs" >"$work/csv.txt"; then
        cp "$work/csv.txt" "$csv_results"
        csv_render=(--csv "$csv_results")
    else
        csv_failed=yes
        echo "   the CSV set failed (its output so far: $work/csv.txt); the page goes without it" >&2
    fi
fi

# --- 5. results, page and chart --------------------------------------------

mkdir -p "$(dirname "$results")" "$(dirname "$page")" "$(dirname "$chart")"
"$py" scripts/compare/results.py finish --meta "$work/meta.json" --entries "$entries" \
    --pairs "$side_by_side" --reference "$reference_label" --out "$results"
"$py" scripts/render_benchmarks.py "$results" --md "$page" --svg "$chart" ${csv_render[@]+"${csv_render[@]}"}
echo
echo "== wrote $results, $page and $chart (details in $work)"
[ ${#csv_render[@]} -eq 0 ] || echo "== wrote the CSV set's $csv_results"
[ "$publish" = yes ] || echo "   (a try: only --publish writes docs/benchmarks.md, docs/benchmarks.svg and bench/results/)"
if grep -q '"status": "failed"' "$results"; then
    echo "compare.sh: some tools disagreed with brc or failed; see $page" >&2
    exit 1
fi
if [ "$csv_failed" = yes ]; then
    echo "compare.sh: the CSV set failed (scripts/csv.sh); see $work/csv.txt" >&2
    exit 1
fi

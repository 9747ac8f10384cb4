#!/usr/bin/env bash
# Usage: scripts/profile.sh FILE [ENGINE] [OUT.svg]
#
# A flamegraph of one `brc` run on FILE with ENGINE (default: brc's default
# engine), written to OUT.svg (default: docs/flamegraphs/<ENGINE>.svg).
#
#   1. installs what is missing: perf (apt package linux-perf) and inferno
#      (`cargo install inferno`, from crates.io);
#   2. builds brc in release mode; Cargo.toml's release profile keeps debug
#      line tables (`debug = 1`), so frames have names and source lines;
#   3. `perf record -e cpu-clock -F FREQ --call-graph dwarf` of
#      `brc --engine ENGINE FILE` (stdout discarded);
#   4. `perf script | inferno-collapse-perf | inferno-flamegraph > OUT.svg`,
#      and checks that brc's own functions appear in it. A function keeps
#      its colour from graph to graph (--deterministic), so the graphs of
#      two engines compare at a glance.
#
# DWARF call graphs copy 8 KiB of stack per sample, so perf.data grows by
# about 8 KiB x FREQ x the run's CPU seconds: with the default FREQ=999,
# a 1e7-row file (`brc generate --rows 1e7`) gives a few hundred samples
# and a few MB even for the slow engines, and perf script stays quick.
# Use a larger file for a smoother graph of a fast engine.
#
# Environment: FREQ=999 (samples per second per thread), THREADS (passed as
# --threads), BRC=path (profile this binary instead of building one).
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

case "${1:-}" in
"" | -h | --help)
    usage
    [ -n "${1:-}" ] && exit 0
    exit 2
    ;;
esac
[ $# -le 3 ] || die "expected FILE [ENGINE] [OUT.svg], found $# arguments"
file=$1
[ -r "$file" ] || die "cannot read $file"
file=$(cd "$(dirname "$file")" && pwd)/$(basename "$file")

enter_repo
freq=${FREQ:-999}

if ! command -v perf >/dev/null; then
    echo "== installing perf (linux-perf)"
    as_root apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q linux-perf
fi
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
if ! command -v inferno-flamegraph >/dev/null || ! command -v inferno-collapse-perf >/dev/null; then
    echo "== installing inferno (cargo install inferno)"
    cargo install --locked inferno
fi

build_brc

engine=${2:-$("$BRC" --help | sed -n '/--engine/,/\[default:/p' |
    sed -n 's/.*\[default: \([A-Za-z0-9_-]*\)\].*/\1/p')}
[ -n "$engine" ] || die "could not read the default engine from \`$BRC --help\`"
out=${3:-docs/flamegraphs/$engine.svg}
mkdir -p "$(dirname "$out")"

args=(--engine "$engine")
[ -z "${THREADS:-}" ] || args+=(--threads "$THREADS")
args+=("$file")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== perf record: brc ${args[*]}"
if ! perf record -e cpu-clock -F "$freq" --call-graph dwarf -o "$tmp/perf.data" \
    -- "$BRC" "${args[@]}" >/dev/null 2>"$tmp/record.log"; then
    cat "$tmp/record.log" >&2
    die "perf record failed (as non-root, try: sysctl kernel.perf_event_paranoid=1)"
fi

echo "== perf script | inferno-collapse-perf | inferno-flamegraph > $out"
# Without the period field each sample weighs 1, so the graph counts samples
# (not nanoseconds of cpu-clock period, which inferno would otherwise sum).
perf script -F comm,pid,tid,time,event,ip,sym,dso -i "$tmp/perf.data" 2>/dev/null |
    inferno-collapse-perf >"$tmp/collapsed.txt"
[ -s "$tmp/collapsed.txt" ] || die "perf recorded no samples; try a larger file or a higher FREQ"
inferno-flamegraph --deterministic \
    --title "brc ${args[*]/#$root\//}" \
    --subtitle "perf record -e cpu-clock -F $freq --call-graph dwarf; $(date +%Y-%m-%d)" \
    <"$tmp/collapsed.txt" >"$out"

# A graph without brc's own frames means symbols or unwinding went wrong.
grep -q 'brc::' "$out" || die "$out has no brc:: frames: were the symbols stripped?"
echo "== wrote $out ($(grep -o '[0-9]* samples' "$tmp/record.log" || echo 'unknown number of samples'))"

#!/usr/bin/env bash
# Usage: scripts/flood.sh [PAIRS]
#
# Times brc on inputs built to defeat its tables against the same number of
# random names of the same length, every pair alternated (scripts/ab.py,
# PAIRS pairs, default 15), with one thread and with two. Each shape is
# about 200 MB, made by `cargo run --release --example flood` (see
# examples/flood.rs) into bench/data/flood/ if missing:
#
#   coll15      4,096 names of 15 bytes sharing their whole hash (short table)
#   clusterK    1,024 clusters of K 15-byte names sharing the top 20 bits of
#               their hash, K = 3, 5, 7, 9, 11: walks past home slots on
#               most rows, short of a flood or just past one
#   mixed3      cluster3's names and 1,200 random ones: a row in four walks
#   coll40      4,096 names of 40 bytes sharing their whole hash (long table)
#   cluster9x40 1,024 clusters of 9 40-byte names sharing the top 20 bits
#
# Prints, per shape and thread count, ab.py's median ratio of wall and CPU
# time, flood over random (docs/PERFORMANCE.md, *The tables*).
# Environment: BRC=path, a brc binary to use instead of building one.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

help_if_asked "$@"
[ $# -le 1 ] || die "expected at most one argument (PAIRS), found $#; see --help"
pairs=${1:-15}
[[ $pairs =~ ^[1-9][0-9]*$ ]] || die "expected a number of pairs, found '$pairs'"

enter_repo
build_brc
cargo build --release --quiet --example flood
dir=bench/data/flood
mkdir -p "$dir"

# name, shape, length, names
shapes=(
    "coll15 colliding 15 4096"
    "cluster3 clusters:3:20 15 3072"
    "cluster5 clusters:5:20 15 5120"
    "cluster7 clusters:7:20 15 7168"
    "cluster9 clusters:9:20 15 9216"
    "cluster11 clusters:11:20 15 11264"
    "mixed3 clusters:3:20:1200 15 3072"
    "coll40 colliding 40 4096"
    "cluster9x40 clusters:9:20 40 9216"
)
for entry in "${shapes[@]}"; do
    read -r name shape len count <<<"$entry"
    if [ ! -s "$dir/$name.random" ]; then
        echo "== making $dir/$name and $dir/$name.random"
        target/release/examples/flood "$shape" "$len" "$count" 200M "$dir/$name"
    fi
done

cpu="$(lscpu | sed -n 's/^Model name: *//p'), family $(lscpu | sed -n 's/^CPU family: *//p') model $(lscpu | sed -n 's/^Model: *//p')"
echo "== $cpu, $(nproc) CPUs, brc at $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src || echo ' (modified)')"
for threads in 1 2; do
    for entry in "${shapes[@]}"; do
        read -r name _ <<<"$entry"
        printf '%-12s %s thread(s): ' "$name" "$threads"
        scripts/ab.py --pairs "$pairs" \
            "$BRC -t $threads $dir/$name.random" "$BRC -t $threads $dir/$name" | tail -n 1
    done
done

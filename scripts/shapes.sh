#!/usr/bin/env bash
# Usage: scripts/shapes.sh [ROWS]
#
# Makes the data shapes docs/PERFORMANCE.md quotes beside the two official
# sets, from the 10K-key set's first ROWS rows (default 1e7), values kept:
#
#   bench/data/measurements-10k-ROWS.txt   the 10K-key set itself, made by
#       `brc generate --rows ROWS --keys 10k --seed 1` if missing (the file
#       scripts/compare.sh makes for its slow tools);
#   bench/data/long-names-ROWS.txt         every name padded to 60-100 bytes;
#   bench/data/keys-1m-ROWS.txt            names `st<N>`, N = row * 7919 mod
#       1000003: about a million distinct names, each met every 10^6 rows;
#   bench/data/names100-ROWS.txt           the same N in names of 100 bytes,
#       starting with 8 hex digits of a hash of N (the many-names memory
#       figures: ROWS 1e6 makes 10^6 names);
#   bench/data/names100-shared-ROWS.txt    the same, every name starting
#       `station <N> `: 16 bytes shared up to N's digits.
#
# Each file is then dropped from the page cache and read once, as
# scripts/compare.sh does, so that runs start from the same state. Compare
# them with scripts/ab.py, e.g. the million keys' CPU time per row against
# the 10K set's (same row count, so the ratio of CPU times):
#
#   scripts/ab.py 'target/release/brc bench/data/measurements-10k-1e7.txt' \
#                 'target/release/brc bench/data/keys-1m-1e7.txt'
#
# ROWS is written as brc generate takes it (1e7, 5000000); it names the files.
# Environment: BRC=path, a brc binary to use instead of building one.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

help_if_asked "$@"
[ $# -le 1 ] || die "expected at most one argument (ROWS), found $#; see --help"
rows=${1:-1e7}
[[ $rows =~ ^[0-9][0-9_]*([eE][0-9]+)?$ ]] || die "expected a row count like 1e7, found '$rows'"

enter_repo
build_brc

mkdir -p bench/data
base=bench/data/measurements-10k-$rows.txt
long=bench/data/long-names-$rows.txt
keys=bench/data/keys-1m-$rows.txt
names=bench/data/names100-$rows.txt
shared=bench/data/names100-shared-$rows.txt

if [ ! -s "$base" ]; then
    echo "== generating $base"
    "$BRC" generate --rows "$rows" --keys 10k --seed 1 -o "$base"
fi

# Written to a temporary name first, so that an interrupted run leaves no
# partial file to be reused.
echo "== $long"
LC_ALL=C awk -F';' '
    BEGIN { pad = "-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789ABCDEF" }
    { n = $1; L = 60 + (length(n) * 13) % 41; if (length(n) < L) n = n substr(pad, 1, L - length(n)); print n ";" $2 }
' "$base" >"$long.tmp"
mv "$long.tmp" "$long"

echo "== $keys"
LC_ALL=C awk -F';' '{ print "st" ((NR * 7919) % 1000003) ";" $2 }' "$base" >"$keys.tmp"
mv "$keys.tmp" "$keys"

# 100-byte names: a head (hashed, or shared), N, padding.
hundred() {
    LC_ALL=C awk -F';' -v shared="$1" '
        BEGIN { pad = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789ABCDEF" }
        {
            k = (NR * 7919) % 1000003
            head = shared ? sprintf("station %07d ", k) : sprintf("%08x %07d ", (k * 2654435761) % 4294967296, k)
            print head substr(pad, 1 + k % 13, 100 - length(head)) ";" $2
        }
    ' "$base"
}
echo "== $names"
hundred 0 >"$names.tmp"
mv "$names.tmp" "$names"
echo "== $shared"
hundred 1 >"$shared.tmp"
mv "$shared.tmp" "$shared"

echo "== reading the files into the page cache, fresh"
for file in "$base" "$long" "$keys" "$names" "$shared"; do
    sync "$file"
    dd if="$file" iflag=nocache count=0 status=none ||
        echo "warning: could not drop $file from the page cache" >&2
    cat "$file" >/dev/null
done
ls -l "$base" "$long" "$keys" "$names" "$shared"

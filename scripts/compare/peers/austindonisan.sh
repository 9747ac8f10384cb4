# Adapter for austindonisan/1brc (C, AVX2), sourced by scripts/compare.sh
# when PEERS names `austindonisan=CHECKOUT`. See scripts/README.md, *Peers*.
#
# Its README documents the build and the run:
#   clang-17 1brc.c -std=c17 -march=native -mtune=native -Ofast -o 1brc
#   ./1brc measurements.txt n        (n worker processes)
# It prints the official `{A=min/mean/max, ...}` line on stdout and reads
# nothing but the file it is given.

peer_url=https://github.com/austindonisan/1brc
# A command the build needs; apt installs it under the same name.
peer_needs=clang

peer_compiler() {
    if command -v clang-17 >/dev/null; then echo clang-17; else echo clang; fi
}

# peer_build CHECKOUT OUT_DIR THREADS: the README's command, run in the
# checkout, writing the binary to OUT_DIR (one binary for any THREADS).
peer_build() {
    [ -f "$1/1brc.c" ] || {
        echo "no 1brc.c in $1" >&2
        return 1
    }
    [ -x "$2/1brc" ] && return 0
    (cd "$1" && "$(peer_compiler)" 1brc.c -std=c17 -march=native -mtune=native -Ofast -o "$2/1brc")
}

# peer_build_note: how it was built, for the results' versions.
peer_build_note() {
    echo "$("$(peer_compiler)" --version | head -n 1); 1brc.c -std=c17 -march=native -mtune=native -Ofast"
}

# peer_command OUT_DIR FILE THREADS: the command hyperfine times.
peer_command() {
    echo "$(q "$1/1brc") $(q "$2") $3"
}

# peer_result OUT_DIR FILE THREADS: a command that prints its result.
peer_result() {
    peer_command "$@"
}

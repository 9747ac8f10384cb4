# Adapter for lehuyduc/1brc-simd (C++, AVX2), sourced by scripts/compare.sh
# when PEERS names `lehuyduc=CHECKOUT`. See scripts/README.md, *Peers*.
#
# Its run.sh documents the build and the run: the thread count is a
# compile-time constant, so each thread count is its own binary, and the
# result goes to result.txt in the working directory, not to stdout:
#   g++ -o main main.cpp -O3 -std=c++17 -march=native -m64 -lpthread \
#       -DN_THREADS_PARAM=$num_threads -DN_CORES_PARAM=$num_cores -g
#   ./main measurements.txt
# N_CORES_PARAM is given the thread count too, so that it uses exactly that
# many threads (run.sh's `./run.sh N N`). It reads nothing but its file.

peer_url=https://github.com/lehuyduc/1brc-simd
# A command the build needs; apt installs it under the same name.
peer_needs=g++

# peer_build CHECKOUT OUT_DIR THREADS: run.sh's command, run in the
# checkout, writing OUT_DIR/main-tTHREADS.
peer_build() {
    [ -f "$1/main.cpp" ] || {
        echo "no main.cpp in $1" >&2
        return 1
    }
    [ -x "$2/main-t$3" ] && return 0
    (cd "$1" && g++ -o "$2/main-t$3" main.cpp -O3 -std=c++17 -march=native -m64 -lpthread \
        -DN_THREADS_PARAM="$3" -DN_CORES_PARAM="$3" -g)
}

peer_build_note() {
    echo "$(g++ --version | head -n 1); main.cpp -O3 -std=c++17 -march=native -m64 -lpthread -DN_THREADS_PARAM=T -DN_CORES_PARAM=T -g"
}

# peer_command OUT_DIR FILE THREADS: the command hyperfine times; it runs
# in OUT_DIR, where result.txt lands. A relative FILE is named from where
# the command starts, the repository root, which `cd` leaves in $OLDPWD:
# a path relative to OUT_DIR, worked out by realpath, went through the
# symbolic links on the way (bench/ shared between clones) and named a
# place on the machine outside the repository.
peer_command() {
    local file
    case $2 in
    /*) file=$(q "$2") ;;
    *) file="\"\$OLDPWD\"/$(q "$2")" ;;
    esac
    echo "cd $(q "$1") && ./main-t$3 $file"
}

# peer_result OUT_DIR FILE THREADS: a command that prints its result.
peer_result() {
    echo "$(peer_command "$@") && cat result.txt"
}

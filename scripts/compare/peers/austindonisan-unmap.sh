# Adapter for austindonisan/1brc built to wait for its workers, sourced by
# scripts/compare.sh when PEERS names `austindonisan-unmap=CHECKOUT` (the
# same checkout as `austindonisan`). See scripts/README.md, *Peers*.
#
# Its source's default, `#define UNMAP false` ("cheat by returning
# immediately, leaving orphan processes for the OS to reap"), exits while
# its worker processes still unmap the file, so their teardown lands in
# whatever runs next. With `#define UNMAP true` it waits for them, and is
# timed from start to exit as brc is. Built and run otherwise as the
# `austindonisan` adapter does.

. "$(dirname "${BASH_SOURCE[0]}")/austindonisan.sh"

peer_label="austindonisan/1brc, UNMAP true"

# peer_source CHECKOUT OUT_DIR: the checkout's 1brc.c with UNMAP true,
# written to OUT_DIR; the checkout is left as it is.
peer_source() {
    grep -q '^#define UNMAP false$' "$1/1brc.c" || {
        echo "no '#define UNMAP false' line in $1/1brc.c" >&2
        return 1
    }
    sed 's/^#define UNMAP false$/#define UNMAP true/' "$1/1brc.c" >"$2/1brc.c"
}

# peer_build CHECKOUT OUT_DIR THREADS: the README's command on that copy.
peer_build() {
    [ -x "$2/1brc" ] && return 0
    peer_source "$1" "$2" &&
        (cd "$2" && "$(peer_compiler)" 1brc.c -std=c17 -march=native -mtune=native -Ofast -o 1brc)
}

peer_build_note() {
    echo "$("$(peer_compiler)" --version | head -n 1); 1brc.c with '#define UNMAP true', -std=c17 -march=native -mtune=native -Ofast"
}

# Shared by the lab scripts: `. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"`.
# Defines die, usage, help_if_asked, check_pairs, as_root, enter_repo and
# build_brc; sets `root`.

die() {
    echo "$(basename "$0"): $*" >&2
    exit 1
}

# Prints the running script's usage: its header comment, up to `set -euo`.
usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
}

# Prints the usage and exits when the first argument asks for help.
help_if_asked() {
    case "${1:-}" in
    -h | --help)
        usage
        exit 0
        ;;
    esac
}

# A timing script's PAIRS (`pairs`, default 11) and SLOW_PAIRS (`slow_pairs`,
# default 3), checked and set; with --check (`check=yes`) no PAIRS is taken.
check_pairs() {
    [[ $check == no || -z $pairs ]] || die "--check times nothing; it takes no PAIRS"
    pairs=${pairs:-11}
    [[ $pairs =~ ^[1-9][0-9]*$ ]] || die "expected a number of pairs, found '$pairs'"
    slow_pairs=${SLOW_PAIRS:-3}
    [[ $slow_pairs =~ ^[1-9][0-9]*$ ]] || die "SLOW_PAIRS: expected a number of pairs, found '$slow_pairs'"
}

# Runs a command as root: directly, or through sudo.
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null; then
        sudo "$@"
    else
        die "not root and no sudo: cannot run $*"
    fi
}

# Makes a BRC given relative to the caller's directory absolute, then moves
# to the repository root (and sets `root` to it).
enter_repo() {
    if [ -n "${BRC:-}" ]; then
        local brc
        brc=$(command -v "$BRC") || die "BRC=$BRC is not an executable"
        [[ $brc == /* ]] || brc=$PWD/$brc
        BRC=$brc
    fi
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    cd "$root"
}

# Builds brc in release mode (debug line tables on) unless BRC names one.
build_brc() {
    if [ -z "${BRC:-}" ]; then
        echo "== building brc (release)"
        cargo build --release --quiet
        BRC=target/release/brc
    fi
}

#!/usr/bin/env python3
"""Usage: scripts/instructions.py [--keys "413 10k"] [--rows N] [--base N] [--out FILE] COMMAND...

Counts the instructions each COMMAND executes per row of input, with
valgrind's callgrind: its count on a file of ROWS rows (default 1e6) minus
its count on the first BASE rows of the same data (default 1e5), over
ROWS - BASE. Start-up, table set-up and output cost the same on both files
and cancel out, leaving what a row costs. Instruction counts are exact, so
one run of each says what a timed comparison needs many alternated pairs
to see on a shared machine; they do not say how fast the instructions run
(docs/PERFORMANCE.md, "How to measure").

COMMAND is a shell command in which {file} stands for the data file, e.g.
'target/release/brc -t 1 {file}'. It runs under --trace-children=yes, so a
program that forks its workers is counted whole. The data are the files
scripts/compare.sh uses, bench/data/measurements-KEYS-ROWS.txt, made with
`brc generate --rows ROWS --keys KEYS --seed 1` if missing (BRC=path picks
the brc binary, target/release/brc by default, built if missing). valgrind
is installed with apt-get if missing.

valgrind 3.19 does not know AVX-512: count a peer built for
-march=x86-64-v3, not the -march=native build scripts/compare.sh makes
(scripts/README.md gives the command). Example, brc against
austindonisan's program so built, one thread each:
  scripts/instructions.py 'target/release/brc -t 1 {file}' \\
      'bench/work/peers/austindonisan-v3/1brc {file} 1'
"""

import argparse
import datetime
import os
import re
import shutil
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def collected(stderr):
    """The instructions of every process callgrind traced, from its
    `==PID== Collected : N` lines."""
    counts = re.findall(r"^==\d+== Collected : (\d+)$", stderr, re.MULTILINE)
    if not counts:
        raise ValueError("no 'Collected' line in valgrind's output:\n" + stderr[-2000:])
    return sum(int(n) for n in counts)


def instructions(command, path):
    """Instructions that `command`, {file} replaced by `path`, executes."""
    shell = command.replace("{file}", path)
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--trace-children=yes", "--callgrind-out-file=/dev/null",
         "/bin/sh", "-c", shell],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(f"instructions.py: `{shell}` under valgrind exited with status {done.returncode}:\n"
                 + done.stderr[-2000:])
    return collected(done.stderr)


def per_row(big, base, rows, base_rows):
    """Instructions per row from the counts on `rows` and `base_rows` rows."""
    if rows <= base_rows:
        raise ValueError("ROWS must be more than BASE")
    return (big - base) / (rows - base_rows)


def rows_arg(text):
    """A row count as brc generate takes it: 1e6, 1000000 or 1_000_000."""
    if not re.fullmatch(r"[0-9][0-9_]*([eE][0-9]+)?", text):
        raise argparse.ArgumentTypeError(f"expected a row count like 1e6, found {text!r}")
    mantissa, _, exponent = text.replace("_", "").lower().partition("e")
    return int(mantissa) * 10 ** int(exponent or 0)


def data(keys, rows_text):
    """bench/data/measurements-KEYS-ROWS.txt, generated if missing."""
    path = os.path.join(REPO, "bench", "data", f"measurements-{keys}-{rows_text}.txt")
    if not os.path.exists(path):
        brc = os.environ.get("BRC") or os.path.join(REPO, "target", "release", "brc")
        if not os.environ.get("BRC") and not os.path.exists(brc):
            subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        subprocess.run([brc, "generate", "--rows", rows_text, "--keys", keys, "--seed", "1", "-o", path],
                       check=True)
    return path


def ensure_valgrind():
    if shutil.which("valgrind"):
        return
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "valgrind"], check=True)


def main():
    parser = argparse.ArgumentParser(
        usage=__doc__.splitlines()[0][len("Usage: "):],
        description=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("commands", metavar="COMMAND", nargs="+", help="a shell command with {file}")
    parser.add_argument("--keys", default="413 10k", help='data sets, as brc generate --keys takes them')
    parser.add_argument("--rows", default="1e6", help="rows of the bigger file (default 1e6)")
    parser.add_argument("--base", default="1e5", help="rows of the smaller file (default 1e5)")
    parser.add_argument("--out", help="also write the report, with the raw counts, to this file")
    args = parser.parse_args()
    try:
        rows, base_rows = rows_arg(args.rows), rows_arg(args.base)
    except argparse.ArgumentTypeError as e:
        parser.error(str(e))
    if rows <= base_rows:
        parser.error("--rows must be more than --base")
    if not all("{file}" in c for c in args.commands):
        parser.error("every COMMAND needs {file}, where the data file goes")
    ensure_valgrind()

    version = subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout.strip()
    lines = [f"# scripts/instructions.py, {datetime.date.today()}, {version}, "
             f"rows {args.rows} minus {args.base}",
             "# keys\tinstructions/row\tcount(rows)\tcount(base)\tcommand"]
    for keys in args.keys.split():
        big_file, base_file = data(keys, args.rows), data(keys, args.base)
        for command in args.commands:
            big, base = instructions(command, big_file), instructions(command, base_file)
            line = f"{keys}\t{per_row(big, base, rows, base_rows):.1f}\t{big}\t{base}\t{command}"
            print(line, flush=True)
            lines.append(line)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

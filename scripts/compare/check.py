"""Cross-checks one tool's result against brc's before its time is reported.

Usage: check.py REFERENCE CANDIDATE

Each file is brc's `--format csv` output (recognised by its header
`station,min,mean,max,count`), the official `{A=min/mean/max, B=...}`
line that brc and the peers print (recognised by its `{`), or the
`name;min;mean;max` lines that the other tools' wrappers print, in any
order and with any number formatting.
They agree when they hold the same stations with the same min and max (to
the tenth) and means within 0.1 of each other: brc rounds the mean to a
tenth the official way while the other tools print it unrounded.

Prints one line saying why they agree or not; exits 0 if they agree, 1 if
they do not, 2 on a usage error.
"""

import csv
import re
import sys

CSV_HEADER = "station,min,mean,max,count"
# One `name=min/mean/max` of the official line and the `, ` or end after it.
# The name is the shortest run of bytes that lets the rest parse, so a name
# holding `=` or `, ` is read whole as long as it does not itself end in
# what looks like a result.
OFFICIAL_ENTRY = re.compile(r"(.+?)=(-?\d+(?:\.\d+)?)/(-?\d+(?:\.\d+)?)/(-?\d+(?:\.\d+)?)(?:, (?=.)|$)", re.S)
MEAN_TOLERANCE = 0.1
SHOWN = 3


def read_result(path):
    """Returns {station: (min_tenths, mean, max_tenths)} from either form."""
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    if text.startswith(CSV_HEADER + "\n"):
        rows = list(csv.reader(text.splitlines()[1:]))
        rows = [(r[0], r[1], r[2], r[3]) for r in rows]
    elif text.startswith("{"):
        rows = official_rows(path, text)
    else:
        # A name never holds `;`, so the last three fields are the numbers.
        rows = [line.rsplit(";", 3) for line in text.splitlines() if line]
    result = {}
    for station, lo, mean, hi in rows:
        if station in result:
            raise ValueError(f"{path}: station {station!r} appears twice")
        result[station] = (round(float(lo) * 10), float(mean), round(float(hi) * 10))
    return result


def official_rows(path, text):
    """The (name, min, mean, max) strings of an official `{...}` line."""
    if not text.endswith("}\n") or text.count("\n") != 1:
        raise ValueError(f"{path}: not one `{{...}}` line ending in a newline")
    inner, pos, rows = text[1:-2], 0, []
    while pos < len(inner):
        m = OFFICIAL_ENTRY.match(inner, pos)
        if not m:
            raise ValueError(f"{path}: cannot read a `name=min/mean/max` at {inner[pos:pos + 40]!r}")
        rows.append(m.group(1, 2, 3, 4))
        pos = m.end()
    return rows


def disagreements(ref, cand):
    """Yields one human-readable line per difference, stations first."""
    missing = sorted(ref.keys() - cand.keys())
    extra = sorted(cand.keys() - ref.keys())
    if missing:
        yield f"{len(missing)} stations missing, e.g. {missing[:SHOWN]}"
    if extra:
        yield f"{len(extra)} unexpected stations, e.g. {extra[:SHOWN]}"
    for station in sorted(ref.keys() & cand.keys()):
        (rlo, rmean, rhi), (clo, cmean, chi) = ref[station], cand[station]
        if rlo != clo or rhi != chi:
            yield (
                f"{station!r}: min/max {clo / 10}/{chi / 10}, "
                f"brc says {rlo / 10}/{rhi / 10}"
            )
        elif abs(rmean - cmean) > MEAN_TOLERANCE + 1e-9:
            yield f"{station!r}: mean {cmean}, brc says {rmean}"


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    ref, cand = read_result(argv[1]), read_result(argv[2])
    problems = list(disagreements(ref, cand))
    if problems:
        more = f" (and {len(problems) - SHOWN} more)" if len(problems) > SHOWN else ""
        print("disagrees with brc: " + "; ".join(problems[:SHOWN]) + more)
        return 1
    print(f"agrees with brc on all {len(ref)} stations")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""The CSV set of the lab: exact answers over a delimited file from a Python
model, DuckDB, Polars, GNU datamash and Miller, each printed as brc prints
its result, so that scripts/csv.sh compares them all byte for byte.

Usage:
  csv_tools.py model FILE [--key COL] [--value COL] [--format official|csv]
  csv_tools.py duckdb FILE THREADS          SQL over read_csv, the value as DECIMAL(18,3)
  csv_tools.py polars FILE THREADS          scan_csv + group_by, the value as Decimal(18,3)
  csv_tools.py tsv CSV TSV                  datamash's input: TSV, no header, empty cells NA
  csv_tools.py datamash < OUTPUT            datamash's `-g 2 min 4 max 4 sum 4 count 4` lines
  csv_tools.py miller < OUTPUT              mlr's `stats1 -a min,max,sum,count` JSON

`model` reads FILE with Python's csv module (RFC 4180; the first row is the
header, the key and value columns named in it, by default `site` and
`reading`) and decimal: a value is exact, a missing one (an empty cell, NA,
NaN or null) is skipped and counted. It prints brc's official line, `{name=
min/mean/max, ...}`, names sorted by their UTF-8 bytes, every number at the
output scale: the most fractional digits of any value. The mean is the exact
sum over the count rounded half toward +infinity, floor((2S + n) / 2n) in
units of the scale, never `-0.000`. `--format csv` prints brc's CSV instead:
`station,min,mean,max,count,missing`, a name quoted as RFC 4180 says.
A name with no value at all (every cell missing) is left out.

The tools print the same line from their own aggregates, at the lab's scale
(SCALE, 3 decimals, as `brc generate --format csv` writes): min, max and
count as they give them, the mean from their sum, exact for DuckDB and
Polars (decimal sums) and rounded to the scale for datamash (long double)
and Miller (double), whose error on the lab's files stays orders of
magnitude below half a unit (a larger one would show as a difference).
THREADS caps DuckDB's and Polars' threads.
"""

import csv
import decimal
import json
import os
import sys
from decimal import Decimal

#: The lab's output scale: the generator writes three decimals.
SCALE = 3
#: Cells that stand for a missing value, as brc reads them by default.
MISSING = {"", "NA", "NaN", "null"}

decimal.getcontext().prec = 80


def text(units: int, scale: int) -> str:
    """`units` of 10^-scale as a decimal with `scale` fractional digits."""
    sign = "-" if units < 0 else ""
    whole, frac = divmod(abs(units), 10**scale)
    return f"{sign}{whole}.{frac:0{scale}d}" if scale else f"{sign}{whole}"


def mean(total: int, count: int) -> int:
    """The mean of `count` values summing to `total`, in the same units,
    rounded half toward +infinity."""
    return (2 * total + count) // (2 * count)


def to_units(value, scale: int = SCALE) -> int:
    """An exact decimal (or its text) at `scale`; refuses anything finer."""
    d = Decimal(str(value)).scaleb(scale)
    units = d.to_integral_value()
    if units != d:
        raise ValueError(f"{value} has more than {scale} decimals")
    return int(units)


def rounded_units(value, scale: int = SCALE) -> int:
    """A binary floating-point total printed as text, rounded to `scale`."""
    return int(Decimal(str(value)).scaleb(scale).to_integral_value(decimal.ROUND_HALF_EVEN))


def official(rows, scale: int = SCALE) -> str:
    """brc's official line from (name, min, sum, max, count) rows in units."""
    rows = sorted((r for r in rows if r[4]), key=lambda r: r[0].encode())
    cells = (
        f"{name}={text(lo, scale)}/{text(mean(total, n), scale)}/{text(hi, scale)}"
        for name, lo, total, hi, n in rows
    )
    return "{" + ", ".join(cells) + "}"


def csv_field(name: str) -> str:
    if any(c in name for c in ',"\n\r'):
        return '"' + name.replace('"', '""') + '"'
    return name


def csv_output(rows, scale: int) -> str:
    """brc's `--format csv` from (name, min, sum, max, count, missing) rows."""
    lines = ["station,min,mean,max,count,missing"]
    for name, lo, total, hi, n, missing in sorted(rows, key=lambda r: r[0].encode()):
        if n:
            cells = (text(lo, scale), text(mean(total, n), scale), text(hi, scale))
            lines.append(f"{csv_field(name)},{','.join(cells)},{n},{missing}")
    return "\n".join(lines)


def model_rows(path: str, key: str, value: str):
    """(name, min, sum, max, count, missing) per key in units of the output
    scale, and the scale: Python's csv and decimal, nothing else."""
    stats = {}
    scale = 0
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.reader(f, strict=True)
        header = next(reader)
        k, v = header.index(key), header.index(value)
        for line in reader:
            name, cell = line[k], line[v]
            s = stats.setdefault(name, [None, Decimal(0), None, 0, 0])
            if cell in MISSING:
                s[4] += 1
                continue
            d = Decimal(cell)
            if not d.is_finite():
                raise ValueError(f"line {reader.line_num}: {cell!r} is not a decimal number")
            scale = max(scale, -d.as_tuple().exponent)
            s[0] = d if s[0] is None or d < s[0] else s[0]
            s[2] = d if s[2] is None or d > s[2] else s[2]
            s[1] += d
            s[3] += 1
    rows = []
    for name, (lo, total, hi, n, missing) in stats.items():
        if n:
            rows.append((name, to_units(lo, scale), to_units(total, scale), to_units(hi, scale), n, missing))
        else:
            rows.append((name, 0, 0, 0, 0, missing))
    return rows, scale


def duckdb_rows(path: str, threads: int):
    import duckdb

    db = duckdb.connect()
    db.execute(f"SET threads = {threads}")
    query = """
        SELECT site, min(reading), sum(reading), max(reading), count(reading)
        FROM read_csv(?, types = {'reading': 'DECIMAL(18,3)'})
        GROUP BY site
    """
    rows = db.execute(query, [path]).fetchall()
    return [(s, to_units(lo), to_units(t), to_units(hi), n) for s, lo, t, hi, n in rows if n]


def polars_rows(path: str, threads: int):
    os.environ["POLARS_MAX_THREADS"] = str(threads)
    import polars as pl

    schema = {
        "time": pl.String,
        "site": pl.String,
        "sensor": pl.String,
        "reading": pl.Decimal(18, 3),
        "unit": pl.String,
    }
    v = pl.col("reading")
    frame = (
        pl.scan_csv(path, schema=schema)
        .group_by("site")
        .agg(v.min().alias("lo"), v.sum().alias("t"), v.max().alias("hi"), v.count().alias("n"))
        .collect(engine="streaming")
    )
    return [(s, to_units(lo), to_units(t), to_units(hi), n) for s, lo, t, hi, n in frame.rows() if n]


def tsv(source: str, target: str) -> None:
    """datamash reads fields split at every delimiter, with no quoting: the
    file as TSV (no name holds a tab), without its header, an empty reading
    written NA (which `--narm` skips; datamash refuses an empty number)."""
    with open(source, newline="", encoding="utf-8") as f, open(target, "w", encoding="utf-8") as out:
        reader = csv.reader(f, strict=True)
        next(reader)
        for row in reader:
            if any("\t" in c or "\n" in c for c in row):
                raise SystemExit(f"csv_tools.py: line {reader.line_num} has a tab or line break in a field")
            row[3] = row[3] or "NA"
            out.write("\t".join(row) + "\n")


def datamash_rows(lines):
    rows = []
    for line in lines:
        site, lo, hi, total, n = line.rstrip("\n").split("\t")
        rows.append((site, to_units(lo), rounded_units(total), to_units(hi), int(Decimal(n))))
    return rows


def miller_rows(text_: str):
    # Numbers kept as their text: Miller prints values read from data as
    # they were written, so min and max come back exact.
    records = json.loads(text_, parse_float=str, parse_int=str) if text_.strip() else []
    rows = []
    for r in records:
        if "reading_count" not in r:
            continue
        rows.append(
            (
                str(r["site"]),
                to_units(r["reading_min"]),
                rounded_units(r["reading_sum"]),
                to_units(r["reading_max"]),
                int(r["reading_count"]),
            )
        )
    return rows


def main() -> None:
    command, *args = sys.argv[1:] or [""]
    if command == "model":
        import argparse

        parser = argparse.ArgumentParser(prog="csv_tools.py model")
        parser.add_argument("file")
        parser.add_argument("--key", default="site")
        parser.add_argument("--value", default="reading")
        parser.add_argument("--format", choices=("official", "csv"), default="official")
        a = parser.parse_args(args)
        rows, scale = model_rows(a.file, a.key, a.value)
        if a.format == "csv":
            print(csv_output(rows, scale))
        else:
            print(official([r[:5] for r in rows], scale))
    elif command in ("duckdb", "polars"):
        rows = (duckdb_rows if command == "duckdb" else polars_rows)(args[0], int(args[1]))
        print(official(rows))
    elif command == "tsv":
        tsv(args[0], args[1])
    elif command == "datamash":
        print(official(datamash_rows(sys.stdin)))
    elif command == "miller":
        print(official(miller_rows(sys.stdin.read())))
    else:
        sys.exit(f"csv_tools.py: unknown command {command!r}; see the module's docstring")


if __name__ == "__main__":
    main()

"""The Parquet set of the lab: files made by the One Trillion Row Challenge's
recipe, and DuckDB's and Polars' exact answers over them.

Usage:
  parquet_tools.py make DIR FILES ROWS   write DIR/measurements-K.parquet
  parquet_tools.py duckdb GLOB THREADS   print the official line, from DuckDB
  parquet_tools.py polars GLOB THREADS   print the official line, from Polars

`make` follows github.com/coiled/1trc's generate_data.py: file K draws with
numpy's default_rng(K) a station index per row among data/stations-413.csv's
stations (but the last, as its `integers(0, len - 1)` does) and normal(0, 10)
noise around the station's mean, rounds to one decimal and writes the frame
with pandas' to_parquet (pyarrow's defaults: snappy, dictionary-encoded
columns, row groups of 1,048,576 rows).

`duckdb` and `polars` aggregate integer tenths (round(measure * 10) as a
64-bit integer: exact, as the check the 1TRC issue asks for) and print the
result as brc's official line, the mean rounded by the reference's rule, so
that the lab compares the three byte for byte; THREADS caps each engine's
threads, so that the timings compare like with like.
"""

import math
import os
import sys


def make(out: str, files: int, rows: int) -> None:
    import numpy as np
    import pandas as pd

    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    lookup = pd.read_csv(
        os.path.join(root, "data", "stations-413.csv"),
        sep=";",
        header=None,
        names=["station", "mean"],
    )
    os.makedirs(out, exist_ok=True)
    for k in range(files):
        rng = np.random.default_rng(k)
        ids = rng.integers(0, len(lookup) - 1, rows)
        noise = rng.normal(0, 10, rows)
        frame = pd.DataFrame(
            {
                "station": lookup.station.values[ids],
                "measure": lookup["mean"].values[ids] + noise,
            }
        )
        frame["measure"] = frame.measure.round(decimals=1)
        frame.to_parquet(os.path.join(out, f"measurements-{k}.parquet"))


def tenths(t: int) -> str:
    sign = "-" if t < 0 else ""
    return f"{sign}{abs(t) // 10}.{abs(t) % 10}"


def mean(total: int, count: int) -> int:
    # The reference's rule: a double, then Java's Math.round.
    x = (total / 10.0) / count * 10.0
    f = math.floor(x)
    return int(f + 1 if x - f >= 0.5 else f)


def official(rows) -> str:
    rows = sorted(rows, key=lambda r: r[0].encode())
    cells = (f"{s}={tenths(lo)}/{tenths(mean(t, n))}/{tenths(hi)}" for s, lo, t, hi, n in rows)
    return "{" + ", ".join(cells) + "}"


def duckdb_rows(glob: str, threads: int):
    import duckdb

    db = duckdb.connect()
    db.execute(f"SET threads = {threads}")
    query = """
        SELECT station, min(t), sum(t), max(t), count(*)
        FROM (SELECT station, CAST(round(measure * 10) AS BIGINT) AS t
              FROM read_parquet(?))
        GROUP BY station
    """
    return db.execute(query, [glob]).fetchall()


def polars_rows(glob: str, threads: int):
    os.environ["POLARS_MAX_THREADS"] = str(threads)
    import polars as pl

    t = (pl.col("measure") * 10).round().cast(pl.Int64)
    frame = (
        pl.scan_parquet(glob)
        .group_by("station")
        .agg(t.min().alias("lo"), t.sum().alias("t"), t.max().alias("hi"), pl.len().alias("n"))
        .collect()
    )
    return frame.rows()


def main() -> None:
    command, *args = sys.argv[1:]
    if command == "make":
        make(args[0], int(args[1]), int(args[2]))
    elif command in ("duckdb", "polars"):
        rows = (duckdb_rows if command == "duckdb" else polars_rows)(args[0], int(args[1]))
        print(official(rows))
    else:
        sys.exit(f"parquet_tools.py: unknown command {command!r}; see the module's docstring")


if __name__ == "__main__":
    main()

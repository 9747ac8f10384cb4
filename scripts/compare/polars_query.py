"""Per-station min/mean/max of a measurements file with Polars.

Usage: polars_query.py FILE

A lazy `scan_csv` + `group_by` collected by the streaming engine with all
of Polars' threads; prints `name;min;mean;max` lines, the form every tool
in scripts/compare.sh prints so that scripts/compare/check.py can compare
it with brc. `quote_char=None` because a station name may hold a literal
`"`; the schema is given so that nothing is inferred.
"""

import sys

import polars as pl


def main() -> None:
    frame = (
        pl.scan_csv(
            sys.argv[1],
            separator=";",
            has_header=False,
            quote_char=None,
            schema={"station": pl.String, "v": pl.Float64},
        )
        .group_by("station")
        .agg(
            pl.col("v").min().alias("min"),
            pl.col("v").mean().alias("mean"),
            pl.col("v").max().alias("max"),
        )
        .sort("station")
        .collect(engine="streaming")
    )
    out = sys.stdout
    for station, lo, mean, hi in frame.iter_rows():
        out.write(f"{station};{lo!r};{mean!r};{hi!r}\n")


if __name__ == "__main__":
    main()

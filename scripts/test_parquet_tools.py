"""The lab's Parquet set, small: files made by the 1TRC recipe
(scripts/compare/parquet_tools.py make), aggregated by brc, must print what
DuckDB and Polars print summing integer tenths, byte for byte.

Usage: BRC=target/debug/brc python3 scripts/test_parquet_tools.py
(a Python with duckdb, polars, numpy, pandas and pyarrow).
"""

import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "compare"))
import parquet_tools  # noqa: E402


def main() -> None:
    brc = os.environ.get("BRC", os.path.join(HERE, "..", "target", "debug", "brc"))
    # The reference's rounding: ties toward +infinity, decided in doubles.
    assert parquet_tools.mean(-25, 2) == -12 and parquet_tools.mean(25, 2) == 13
    assert parquet_tools.mean(-2973, 6) == -496
    assert parquet_tools.tenths(-5) == "-0.5" and parquet_tools.tenths(0) == "0.0"
    with tempfile.TemporaryDirectory() as tmp:
        parquet_tools.make(tmp, 3, 30_000)
        out = subprocess.run([brc, "-t", "2", tmp], check=True, capture_output=True, text=True)
        glob = os.path.join(tmp, "*.parquet")
        for engine in (parquet_tools.duckdb_rows, parquet_tools.polars_rows):
            expected = parquet_tools.official(engine(glob, 2)) + "\n"
            assert out.stdout == expected, (engine.__name__, out.stdout[:200], expected[:200])
    print("test_parquet_tools: 3 files of the 1TRC recipe: brc = DuckDB = Polars")


if __name__ == "__main__":
    main()

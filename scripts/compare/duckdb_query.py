"""Per-station min/mean/max of a measurements file with DuckDB.

Usage: duckdb_query.py FILE [THREADS]

One SQL query over `read_csv` on THREADS threads (default: all cores);
prints `name;min;mean;max` lines, the form every tool in scripts/compare.sh
prints so that scripts/compare/check.py can compare it with brc.
Quoting is off (`quote=''`, `escape=''`) because a station name may hold
a literal `"`; the column types are given so that nothing is sniffed.
"""

import sys

import duckdb

QUERY = """
SELECT station, min(v), avg(v), max(v)
FROM read_csv(?, delim=';', header=false, quote='', escape='',
              columns={'station': 'VARCHAR', 'v': 'DOUBLE'})
GROUP BY station
ORDER BY station
"""


def main() -> None:
    db = duckdb.connect()
    if len(sys.argv) > 2:
        db.execute(f"SET threads = {int(sys.argv[2])}")
    rows = db.execute(QUERY, [sys.argv[1]]).fetchall()
    out = sys.stdout
    for station, lo, mean, hi in rows:
        out.write(f"{station};{lo!r};{mean!r};{hi!r}\n")


if __name__ == "__main__":
    main()

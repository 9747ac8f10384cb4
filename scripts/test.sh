#!/usr/bin/env bash
# The one test command: the Rust suite (`cargo test`), the scripts' own
# tests, the partial format's DuckDB check, then the Python package's
# (pytest), in a venv at .venv that this script creates or reuses
# and fills from PyPI. Usage: scripts/test.sh [PYTEST ARGS...]
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

# With object storage (the `remote` feature), which the Python tests'
# command line reads from a local S3 server; and the library without it.
cargo test --features remote
cargo test --lib --no-default-features input::list
# The command line `cargo test` built, wherever cargo puts its builds.
brc="${CARGO_TARGET_DIR:-$PWD/target}/debug/brc"

venv="${BRC_VENV:-.venv}"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
# The package (built by maturin, its PEP 517 backend, from python/) and
# what its tests use: the Arrow, Polars and pandas glue, Dask, fsspec with
# its HTTP client, zstandard, a Range-capable HTTP server, and moto's S3
# server with boto3 and s3fs: the package's `test` dependency group, which
# pip reads from 25.1 on.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade 'pip>=25.1'
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check maturin duckdb ./python \
    --group python/pyproject.toml:test

# The performance lab's own checks: the comparison's checker, results and
# renderer, the page-cache tool and the instruction counter.
"$venv/bin/python" scripts/test_compare.py
"$venv/bin/python" scripts/test_folios.py
"$venv/bin/python" scripts/test_instructions.py
# The partial format's DuckDB query, as docs/PARTIAL-FORMAT.md gives it,
# against `brc merge` (built by `cargo test` above).
BRC="$brc" "$venv/bin/python" scripts/test_partial_duckdb.py
# The lab's Parquet set, small: brc against DuckDB and Polars on files made
# by the One Trillion Row Challenge's recipe.
BRC="$brc" "$venv/bin/python" scripts/test_parquet_tools.py
# The lab's CSV set, small: `scripts/csv.sh --check` on 20,000 generated
# rows, brc against the Python model, DuckDB and Polars (the model in brc's
# place until brc reads CSV), and the script's timing path with a stand-in.
BRC="$brc" "$venv/bin/python" scripts/test_csv.py
# The lab's statistics set, small: `scripts/stats.sh --check`, brc --stats
# against an exact model and DuckDB and merged shards against one run.
BRC="$brc" "$venv/bin/python" scripts/test_stats.py

# The tests compare with the command line that `cargo test` just built.
BRC_BIN="$brc" "$venv/bin/python" -m pytest python/tests "$@"

"""Delimited files (CSV, TSV) through the Python package: random files
against a pure-Python model (`csv` + `decimal`, exact sums), against
DuckDB reading the value column as DECIMAL(18, s), and against the
command line; the Arrow, Polars and pandas columns; errors as the command
line words them; partials of byte ranges; and brc.dask on a real
LocalCluster, byte for byte a single run's."""

from __future__ import annotations

import csv
import gzip
import io
import math
import pickle
import random
import warnings
from decimal import Decimal
from pathlib import Path
from typing import Optional, Union

import pyarrow as pa
import pytest

import brc
import brc.dask

BOM = "\ufeff"

HEADER = ["time", "site", "sensor", "reading", "unit", "note"]

# Keys that need quoting (a comma, doubled quotes), multi-byte UTF-8, and
# the characters a composite key escapes (`|`, `\`).
SITES = ["Abha", "Kraków, PL", 'say "hi"', "東京", "São Paulo", "x", "a|b", "back\\slash", "Zürich"]
SENSORS = ["t1", "t2", "t,3"]
# Cells of a column brc does not read: a line break and a delimiter inside
# quotes, so that ranges may start inside a quoted cell.
NOTES = ["", "ok", "two\nlines", "with, comma", 'q "x"', "a\nb\nc"]


def quoted(text: str, delimiter: str, rng: random.Random) -> str:
    """`text` as a cell: quoted when it must be, or at random."""
    if any(c in text for c in (delimiter, '"', "\n", "\r")) or (text and rng.random() < 0.1):
        return '"' + text.replace('"', '""') + '"'
    return text


def value_text(rng: random.Random, max_decimals: int, forms: bool) -> str:
    """A random decimal of 0 to `max_decimals` decimals; with `forms`, the
    other spellings brc takes too (`+7`, `.5`, `1.`, `1.5e3`)."""
    d = rng.randint(0, max_decimals)
    units = rng.randint(-(10 ** (d + 3)), 10 ** (d + 3))
    sign = "-" if units < 0 else ""
    whole, frac = divmod(abs(units), 10**d)
    text = f"{sign}{whole}" + (f".{frac:0{d}d}" if d else "")
    if forms and rng.random() < 0.15:
        text = rng.choice([f"+{abs(units)}", f".{rng.randint(0, 9)}", f"{rng.randint(0, 99)}.",
                           f"{rng.randint(1, 9)}.{rng.randint(0, 9)}e{rng.randint(-2, 2)}",
                           f" {text} "])
    return text


def write_csv(path: Path, seed: int, rows: int, *, delimiter: str = ",", crlf: bool = False,
              bom: bool = False, final_newline: bool = True, max_decimals: int = 4,
              missing: float = 0.1, forms: bool = False) -> Path:
    """A random delimited file of `rows` rows, reproducible by `seed`."""
    rng = random.Random(seed)
    lines = [delimiter.join(quoted(h, delimiter, rng) for h in HEADER)]
    nulls = ["", "NA", "NaN", "null"]
    for i in range(rows):
        r = rng.random()
        reading = rng.choice(nulls) if r < missing else value_text(rng, max_decimals, forms)
        cells = {
            "time": f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z",
            "site": rng.choice(SITES),
            "sensor": rng.choice(SENSORS),
            "reading": reading,
            "unit": "C",
            "note": rng.choice(NOTES),
        }
        lines.append(delimiter.join(quoted(cells[h], delimiter, rng) for h in HEADER))
    eol = "\r\n" if crlf else "\n"
    text = eol.join(lines) + (eol if final_newline else "")
    path.write_bytes(((BOM if bom else "") + text).encode())
    return path


# --- The model: Python's csv and decimal ---------------------------------

NULLS = ("", "NA", "NaN", "null")


def composite(cells: list[str]) -> str:
    """A key of several cells as brc joins them: `|` between, a `|` or `\\`
    inside a cell escaped by `\\`; one cell as it is."""
    if len(cells) == 1:
        return cells[0]
    return "|".join(c.replace("\\", "\\\\").replace("|", "\\|") for c in cells)


def half_up(num: int, den: int) -> int:
    """`num / den` rounded half toward +inf (den > 0)."""
    return (2 * num + den) // (2 * den)


def mean_units(total: int, n: int, scale: int, shown: int) -> int:
    """The mean of `n` values adding up to `total` units of 10^-scale, in
    units of 10^-shown: the reference's rule for tenths, else exact."""
    if scale == 1 and shown == 1:
        x = (total / 10.0) / n * 10.0
        f = math.floor(x)
        return f + 1 if x - f >= 0.5 else f
    if shown >= scale:
        return half_up(total * 10 ** (shown - scale), n)
    return half_up(total, n * 10 ** (scale - shown))


def rescale(units: int, scale: int, shown: int) -> int:
    return units * 10 ** (shown - scale) if shown >= scale else half_up(units, 10 ** (scale - shown))


def read_rows(path: Path, delimiter: str) -> tuple[list[str], list[list[str]]]:
    data = path.read_bytes()
    if data.startswith(b"\x1f\x8b"):
        data = gzip.decompress(data)
    text = data.decode("utf-8-sig")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    rows = list(reader)
    return rows[0], [r for r in rows[1:] if r]


def model(paths: list[Path], key: list[Union[str, int]], value: Union[str, int], *,
          delimiter: str = ",", nulls=NULLS, decimals: Optional[int] = None) -> list[dict]:
    """Each key's row as brc's Arrow table gives it, from the files' rows
    read by Python's csv module and summed as exact decimals."""
    stats: dict[str, list] = {}
    scale = 0
    for path in paths:
        header, rows = read_rows(path, delimiter)
        at = lambda c: header.index(c) if isinstance(c, str) else c - 1  # noqa: E731
        keys, v = [at(c) for c in key], at(value)
        for row in rows:
            k = composite([row[i] for i in keys])
            s = stats.setdefault(k, [[], 0])
            cell = row[v].strip(" \t")
            if cell in nulls:
                s[1] += 1
                continue
            d = Decimal(cell)
            scale = max(scale, -d.as_tuple().exponent)
            s[0].append(d)
    shown = scale if decimals is None else decimals
    out = []
    for k in sorted(stats, key=str.encode):
        values, missing = stats[k]
        row = {"station": k, "min": None, "mean": None, "max": None,
               "count": len(values), "missing": missing}
        if values:
            units = [int(x.scaleb(scale)) for x in values]
            assert all(Decimal(u).scaleb(-scale) == x for u, x in zip(units, values))
            as_shown = lambda u: Decimal(u).scaleb(-shown)  # noqa: E731
            row["min"] = as_shown(rescale(min(units), scale, shown))
            row["max"] = as_shown(rescale(max(units), scale, shown))
            row["mean"] = as_shown(mean_units(sum(units), len(units), scale, shown))
        out.append(row)
    return out


def rows_of(summary: brc.Summary) -> list[dict]:
    return summary.to_arrow().to_pylist()


def longest_row(paths: list[Path]) -> int:
    """The bytes of the longest row of the files (a line break inside quotes
    belongs to its row). Ranges longer than that each hold a row start: a
    range within one row trips an overflow in the library's delimited
    reader (`Run::chunks`, `until - first`), a panic in debug builds."""
    most = 0
    for path in paths:
        data = path.read_bytes()
        start, quotes = 0, 0
        for i, b in enumerate(data):
            if b == 0x22:
                quotes += 1
            elif b == 0x0A and quotes % 2 == 0:
                most = max(most, i + 1 - start)
                start = i + 1
        most = max(most, len(data) - start)
    return most


CSV_ARGS = ("--csv", "--key", "site", "--value", "reading")


# --- Against the model and the command line --------------------------------

@pytest.mark.parametrize("seed", range(12))
def test_random_files_equal_the_model_and_the_cli(tmp_path, cli, seed):
    rng = random.Random(seed)
    path = write_csv(tmp_path / "r.csv", seed, rng.choice([0, 1, 50, 800]),
                     crlf=rng.random() < 0.5, bom=rng.random() < 0.5,
                     final_newline=rng.random() < 0.7, max_decimals=rng.randint(0, 4),
                     forms=seed % 2 == 1)
    summary = brc.aggregate(path, csv=True, key="site", value="reading", threads=2)
    assert rows_of(summary) == model([path], ["site"], "reading")
    assert summary.counts_missing
    assert summary.format("csv") == cli.output(*CSV_ARGS, path, "--format", "csv")
    assert str(summary) + "\n" == cli.output(*CSV_ARGS, path, "--format", "official")
    assert summary.format("json") == cli.output(*CSV_ARGS, path, "--format", "json")


def test_tenths_keep_the_reference_rounding(tmp_path):
    # Every value with one decimal: the mean follows the reference's float
    # steps, which some exact ties decide otherwise than half up.
    rows = ["k,v"] + [f"a,{v}" for v in ("-1.2", "-1.3")] + [f"b,{v}" for v in ("0.1", "0.2")]
    rows += [f"c,{(-1) ** i * (i % 7) / 10:.1f}" for i in range(1000)]
    path = tmp_path / "t.csv"
    path.write_text("\n".join(rows) + "\n")
    summary = brc.aggregate(path, csv=True)
    assert summary.scale == summary.decimals == 1
    assert rows_of(summary) == model([path], [1], 2)
    assert [r["mean"] for r in rows_of(summary)][:2] == [Decimal("-1.2"), Decimal("0.2")]


def test_composite_keys_positions_tsv_and_other_delimiters(tmp_path, cli):
    path = write_csv(tmp_path / "r.csv", 7, 600, crlf=True)
    want = model([path], ["site", "sensor"], "reading")
    by_names = brc.aggregate(path, csv=True, key=["site", "sensor"], value="reading")
    by_positions = brc.aggregate(path, csv=True, key=(2, 3), value=4)
    mixed = brc.aggregate(path, delimiter=",", key=["site", 3], value=4)
    assert rows_of(by_names) == rows_of(by_positions) == rows_of(mixed) == want
    assert by_names.format("csv") == cli.output(
        "--csv", "--key", "site,sensor", "--value", "reading", "--format", "csv", path)
    for sep, option in (("\t", {"tsv": True}), (";", {"delimiter": ";"}),
                        ("\t", {"delimiter": "\\t"})):
        other = write_csv(tmp_path / "r.txt", 7, 600, crlf=True, delimiter=sep)
        got = brc.aggregate(other, key=["site", "sensor"], value="reading", **option)
        assert rows_of(got) == model([other], ["site", "sensor"], "reading", delimiter=sep)


def test_the_key_may_be_the_value_column(tmp_path):
    path = tmp_path / "same.csv"
    path.write_text("v,w\n1.5,x\n1.5,y\n2,z\n")
    got = rows_of(brc.aggregate(path, csv=True, key="v", value="v"))
    assert [(r["station"], r["count"], r["mean"]) for r in got] == [
        ("1.5", 2, Decimal("1.5")), ("2", 1, Decimal("2.0"))]


def test_nulls_are_configurable(tmp_path, cli):
    path = tmp_path / "n.csv"
    path.write_text("k,v\na,-\na,1.25\nb,\nb,NA\n")
    got = brc.aggregate(path, csv=True, nulls=["-", "", "NA"])
    assert rows_of(got) == model([path], [1], 2, nulls=("-", "", "NA"))
    assert [r["missing"] for r in rows_of(got)] == [1, 2]
    assert got.format("csv") == cli.output("--csv", "--null=-,,NA", "--format", "csv", path)
    # Without `-` among them, it is no number.
    for nulls in ([], "NA", ("", "NA")):
        with pytest.raises(brc.DataError) as e:
            brc.aggregate(path, csv=True, nulls=nulls)
        assert str(e.value) == cli_error(cli, "--csv", "--null", "NA", path)


def cli_error(cli, *args) -> str:
    """The command line's one-line error, without `brc: `."""
    done = cli.run(*args)
    assert done.returncode == 1 and not done.stdout, done
    line = done.stderr.decode().rstrip("\n")
    assert line.startswith("brc: ") and "\n" not in line, line
    return line[len("brc: "):]


@pytest.mark.parametrize("decimals", [0, 1, 2, 5, 9])
def test_decimals_pad_or_round_half_up(tmp_path, cli, decimals):
    path = write_csv(tmp_path / "r.csv", 3, 400, max_decimals=3)
    summary = brc.aggregate(path, csv=True, key="site", value="reading", decimals=decimals)
    assert summary.scale == 3 and summary.decimals == decimals
    assert rows_of(summary) == model([path], ["site"], "reading", decimals=decimals)
    assert summary.to_arrow().schema.field("mean").type == pa.decimal128(18, decimals)
    assert summary.format("csv") == cli.output(
        *CSV_ARGS, "--decimals", decimals, "--format", "csv", path)
    later = brc.aggregate(path, csv=True, key="site", value="reading").with_decimals(decimals)
    assert later == summary
    # Pickled with its decimals.
    assert pickle.loads(pickle.dumps(summary)) == summary
    assert pickle.loads(pickle.dumps(summary)).decimals == decimals


def test_decimals_apply_to_the_challenge_s_text_too(tmp_path, cli):
    path = tmp_path / "m.txt"
    path.write_text("a;1.2\na;1.3\nb;-0.5\n")
    summary = brc.aggregate(path, decimals=2)
    assert summary.format("csv") == cli.output("--decimals", "2", "--format", "csv", path)
    assert summary.to_arrow().schema.field("min").type == pa.decimal128(18, 2)
    assert brc.aggregate(path).to_arrow().schema.field("min").type == pa.decimal128(3, 1)


def test_many_files_a_directory_gzip_bom_and_crlf(tmp_path, cli):
    d = tmp_path / "d"
    d.mkdir()
    a = write_csv(d / "a.csv", 1, 300, bom=True)
    b = write_csv(d / "b.csv", 2, 300, crlf=True, final_newline=False)
    c = d / "c.csv.gz"
    c.write_bytes(gzip.compress(write_csv(tmp_path / "c.csv", 3, 300, max_decimals=2).read_bytes()))
    want = model([a, b, c], ["site"], "reading")
    assert rows_of(brc.aggregate([a, b, c], csv=True, key="site", value="reading")) == want
    assert rows_of(brc.aggregate(d, csv=True, key="site", value="reading")) == want
    assert brc.aggregate(d, csv=True, key="site", value="reading").format("csv") == cli.output(
        *CSV_ARGS, "--format", "csv", d)


# --- Against DuckDB ----------------------------------------------------------

def duckdb_rows(paths: list[Path], key: list[str], scale: int, delimiter: str = ",") -> list[dict]:
    """Each key's exact count, sum, min and max as DuckDB gives them,
    reading the value column as DECIMAL(18, scale), and the mean rounded
    from its exact sum by the stated rule."""
    import duckdb
    types = {c: "VARCHAR" for c in HEADER}
    types["reading"] = f"DECIMAL(18,{scale})"
    keys = ", ".join(key)
    query = f"""
        SELECT {keys}, count(reading) AS n, sum(reading) AS s, min(reading) AS lo,
               max(reading) AS hi, count(*) - count(reading) AS missing
        FROM read_csv($paths, header = true, delim = $delim, quote = '"', escape = '"',
                      nullstr = ['', 'NA', 'NaN', 'null'], types = $types)
        GROUP BY ALL
    """
    con = duckdb.connect()
    got = con.execute(query, {"paths": [str(p) for p in paths], "delim": delimiter,
                              "types": types}).fetchall()
    out = []
    for *cells, n, s, lo, hi, missing in got:
        mean = None
        if n:
            units = int(s.scaleb(scale))
            mean = Decimal(mean_units(units, n, scale, scale)).scaleb(-scale)
        out.append({"station": composite(cells), "min": lo, "mean": mean, "max": hi,
                    "count": n, "missing": missing})
    return sorted(out, key=lambda r: r["station"].encode())


@pytest.mark.parametrize("seed", range(6))
def test_random_files_equal_duckdb_reading_decimal_18_s(tmp_path, seed):
    rng = random.Random(100 + seed)
    paths = [write_csv(tmp_path / f"r{i}.csv", 100 * seed + i, rng.choice([1, 200, 1500]),
                       crlf=rng.random() < 0.5, bom=rng.random() < 0.5,
                       max_decimals=rng.randint(0, 4)) for i in range(rng.randint(1, 3))]
    key = ["site"] if seed % 2 else ["site", "sensor"]
    summary = brc.aggregate(paths, csv=True, key=key, value="reading")
    got = rows_of(summary)
    assert got == duckdb_rows(paths, key, summary.scale)
    assert got == model(paths, key, "reading")


# --- Arrow, Polars, pandas ---------------------------------------------------

def test_arrow_columns_carry_the_scale_nulls_and_missing_counts(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text('site,reading\n"Kraków, PL",23.456\nOslo,-0.5\nOslo,\nLima,NA\nLima,\n')
    summary = brc.aggregate(path, csv=True)
    table = summary.to_arrow()
    decimal = pa.decimal128(18, 3)
    assert table.schema == pa.schema([
        pa.field("station", pa.string(), nullable=False),
        pa.field("min", decimal), pa.field("mean", decimal), pa.field("max", decimal),
        pa.field("count", pa.int64(), nullable=False),
        pa.field("missing", pa.int64(), nullable=False),
    ])
    assert table.to_pylist() == [
        {"station": "Kraków, PL", "min": Decimal("23.456"), "mean": Decimal("23.456"),
         "max": Decimal("23.456"), "count": 1, "missing": 0},
        {"station": "Lima", "min": None, "mean": None, "max": None, "count": 0, "missing": 2},
        {"station": "Oslo", "min": Decimal("-0.5"), "mean": Decimal("-0.5"),
         "max": Decimal("-0.5"), "count": 1, "missing": 1},
    ]
    assert pa.table(summary) == table


def test_polars_and_pandas_follow_from_arrow(tmp_path):
    import polars as pl
    import pandas as pd
    path = write_csv(tmp_path / "r.csv", 5, 300, max_decimals=2)
    summary = brc.aggregate(path, csv=True, key="site", value="reading")
    want = model([path], ["site"], "reading")
    frame = summary.to_polars()
    assert frame.schema["mean"] == pl.Decimal(18, 2)
    assert frame.schema["missing"] == pl.Int64
    assert frame.to_dicts() == want
    pandas = summary.to_pandas()
    assert str(pandas["mean"].dtype) == "decimal128(18, 2)[pyarrow]"
    assert pandas["missing"].tolist() == [r["missing"] for r in want]
    assert [None if pd.isna(x) else x for x in pandas["min"]] == [r["min"] for r in want]


def test_a_key_without_values_is_null_in_polars_and_pandas(tmp_path):
    import polars as pl
    import pandas  # noqa: F401
    path = tmp_path / "m.csv"
    path.write_text("k,v\na,NA\nb,1.5\n")
    summary = brc.aggregate(path, csv=True)
    assert summary.to_polars()["mean"].to_list() == [None, Decimal("1.5")]
    assert summary.to_polars()["count"].dtype == pl.Int64
    assert summary.to_pandas()["mean"].isna().tolist() == [True, False]


def test_an_empty_delimited_input_gives_an_empty_table_with_missing(tmp_path):
    for text in ("", "k,v\n", BOM):
        path = tmp_path / "e.csv"
        path.write_text(text)
        table = brc.aggregate(path, csv=True).to_arrow()
        assert table.num_rows == 0
        assert table.column_names == ["station", "min", "mean", "max", "count", "missing"]


# --- Errors ----------------------------------------------------------------

BAD = {
    "value": "k,v\na,1.5\nb,x\n",
    "fewer cells": "k,v\na,1\nb\n",
    "more cells": "k,v\na,1,2\n",
    "unclosed": 'k,v\na,1\n"b,2\n',
    "stray quote": 'k,v\na"b,2\n',
    "after quote": 'k,v\n"a"b,2\n',
    "empty key": "k,v\n,2\n",
    "digits": "k,v\na,1234567890123456789\n",
    "scale": "k,v\na,1.1234567891\n",
    "exponent": "k,v\na,1e30\n",
    "header quote": 'k",v\na,1\n',
    "18 digits at the file's scale": "k,v\na,123456789012345678\nb,0.5\n",
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_rows_are_data_errors_with_the_cli_message(tmp_path, cli, name):
    path = tmp_path / "bad.csv"
    path.write_text(BAD[name])
    message = cli_error(cli, "--csv", path)
    with pytest.raises(brc.DataError) as e:
        brc.aggregate(path, csv=True)
    assert str(e.value) == message
    assert e.value.path == str(path)
    where = message[len(str(path)) + 2:].split(":")[0]
    assert where == (f"line {e.value.line}" if e.value.column is None
                     else f"line {e.value.line}, column {e.value.column}")
    assert e.value.offset is None and e.value.row_group is None
    assert message.endswith(e.value.reason)


def test_invalid_utf8_in_a_key_is_a_data_error(tmp_path, cli):
    path = tmp_path / "bad.csv"
    path.write_bytes(b"k,v\na,1\n\xff,2\n")
    with pytest.raises(brc.DataError) as e:
        brc.aggregate(path, csv=True)
    assert str(e.value) == cli_error(cli, "--csv", path)
    assert (e.value.line, e.value.column) == (3, 1)


def test_header_errors_name_the_file_and_line_1(tmp_path, cli):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("site,reading\nx,1\n")
    b.write_text("site,value\nx,2\n")
    with pytest.raises(brc.DataError) as e:
        brc.aggregate([a, b], csv=True)
    assert str(e.value) == cli_error(cli, "--csv", a, b)
    assert (e.value.path, e.value.line, e.value.column) == (str(b), 1, None)
    with pytest.raises(brc.DataError) as e:
        brc.aggregate(a, csv=True, key="station")
    assert str(e.value) == cli_error(cli, "--csv", "--key", "station", a)
    with pytest.raises(brc.DataError) as e:
        brc.aggregate(a, csv=True, value=3)
    assert str(e.value) == cli_error(cli, "--csv", "--value", "3", a)
    with pytest.raises(brc.DataError, match=r"found column 1 \(`site`\) twice") as e:
        brc.aggregate(a, csv=True, key=["site", 1], value="reading")
    assert str(e.value) == cli_error(cli, "--csv", "--key", "site,1", "--value", "reading", a)
    # The same cells, quoted and with CRLF, are the same header.
    b.write_bytes(b'"site","reading"\r\ny,3\r\n')
    assert brc.aggregate([a, b], csv=True).format("csv") == cli.output("--csv", "-f", "csv", a, b)


def test_values_past_18_digits_with_the_decimals_asked_are_overflow_errors(tmp_path, cli):
    path = tmp_path / "big.csv"
    path.write_text("k,v\nwide,999999999999999999\n")
    message = cli_error(cli, "--csv", "--decimals", "1", path)
    with pytest.raises(OverflowError) as e:
        brc.aggregate(path, csv=True, decimals=1)
    assert str(e.value) == message
    with pytest.raises(OverflowError) as e:
        brc.aggregate(path, csv=True).with_decimals(1)
    assert str(e.value) == message


@pytest.mark.parametrize("kwargs, error, words", [
    ({"csv": True, "tsv": True}, ValueError, "csv and tsv cannot be given together"),
    ({"tsv": True, "delimiter": ";"}, ValueError, "tsv and delimiter"),
    ({"key": "site"}, ValueError, "key= is for delimited files"),
    ({"value": 2}, ValueError, "value= is for delimited files"),
    ({"nulls": ["NA"]}, ValueError, "nulls= is for delimited files"),
    ({"on_error": "skip"}, ValueError, "on_error= is for delimited files"),
    ({"on_error": "fail"}, ValueError, "on_error= is for delimited files"),
    ({"csv": True, "on_error": "ignore"}, ValueError, "on_error must be 'fail' or 'skip'"),
    ({"csv": True, "on_error": True}, ValueError, "on_error must be 'fail' or 'skip'"),
    ({"delimiter": ";;"}, ValueError, "expected one ASCII character"),
    ({"delimiter": "é"}, ValueError, "expected one ASCII character"),
    ({"delimiter": '"'}, ValueError, "cannot be a delimiter"),
    ({"delimiter": "\n"}, ValueError, "cannot be a delimiter"),
    ({"delimiter": 44}, TypeError, "delimiter must be a str"),
    ({"csv": True, "key": 0}, ValueError, "key column positions count from 1, found 0"),
    ({"csv": True, "value": -1}, ValueError, "value column positions count from 1"),
    ({"csv": True, "key": []}, ValueError, "key must name at least one column"),
    ({"csv": True, "key": [True]}, TypeError, "header names (str) or 1-based positions"),
    ({"csv": True, "value": 1.5}, TypeError, "header names (str) or 1-based positions"),
    ({"csv": True, "nulls": [None]}, TypeError, "nulls must be strings"),
    ({"csv": True, "decimals": 10}, ValueError, "decimals must be at least 0 and at most 9"),
    ({"csv": True, "decimals": -1}, ValueError, "decimals must be at least 0 and at most 9"),
])
def test_bad_options_are_value_or_type_errors(tmp_path, kwargs, error, words):
    path = tmp_path / "a.csv"
    path.write_text("k,v\na,1\n")
    calls = [lambda: brc.aggregate(path, **kwargs)]
    if "decimals" not in kwargs:
        calls.append(lambda: brc.partial(path, **kwargs))
        calls.append(lambda: brc.partial_bytes(b"k,v\na,1\n", **kwargs))
        calls.append(lambda: brc.dask.aggregate(path, **kwargs))
    for call in calls:
        with pytest.raises(error) as e:
            call()
        assert words in str(e.value)


def test_decimals_and_nulls_outside_aggregate(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("k,v\na,1\n")
    with pytest.raises(ValueError, match="decimals must be at least 0 and at most 9"):
        brc.aggregate(path, csv=True).with_decimals(10)
    assert brc.NULLS == ("", "NA", "NaN", "null")
    assert brc.MAX_DECIMALS == 9


# --- Bad rows skipped ------------------------------------------------------

# Bad rows of each kind, as rows of HEADER's six columns keyed by `site`: a
# value that is no number, an empty key, fewer cells, more cells.
BAD_ROWS = [
    "2026-01-01T01:00:00Z,Abha,t1,abc,C,ok",
    '2026-01-01T01:00:00Z,"",t2,1.5,C,ok',
    "2026-01-01T01:00:00Z,Oslo,t1",
    "2026-01-01T01:00:00Z,Oslo,t1,2.5,C,ok,extra",
    "2026-01-01T01:00:00Z,Lima,t3,1.2.3,C,ok",
]
SKIP_ARGS = dict(csv=True, key="site", value="reading")


def records(data: bytes) -> list[bytes]:
    """The rows of a delimited file's bytes, each with its line break (a
    line break inside quotes belongs to its row)."""
    rows, start, quotes = [], 0, 0
    for i, b in enumerate(data):
        if b == 0x22:
            quotes += 1
        elif b == 0x0A and quotes % 2 == 0:
            rows.append(data[start:i + 1])
            start = i + 1
    if start < len(data):
        rows.append(data[start:])
    return rows


def with_bad_rows(good: Path, bad: Path, seed: int, n: int) -> list[int]:
    """Writes to `bad` the rows of `good` with `n` bad rows (each kind in
    turn) among them at random: the lines they start on."""
    rng = random.Random(seed)
    rows = records(good.read_bytes())
    eol = b"\r\n" if rows[0].endswith(b"\r\n") else b"\n"
    if not rows[-1].endswith(b"\n"):
        rows[-1] += eol
    for i in range(n):
        at = rng.randint(1, len(rows))
        rows.insert(at, BAD_ROWS[i % len(BAD_ROWS)].encode() + eol)
    bad.write_bytes(b"".join(rows))
    lines, line = [], 1
    for row in rows:
        if row.rstrip(b"\r\n").decode() in BAD_ROWS:
            lines.append(line)
        line += row.count(b"\n")
    return lines


def skipped_line(count: int, first: list[tuple[str, int]]) -> str:
    """The command line's stderr line for skipped rows, without `brc: `."""
    return f"{count} bad rows skipped, the first at " + "; ".join(
        f"{path}: line {line}" for path, line in first)


@pytest.mark.parametrize("seed", range(4))
def test_bad_rows_skipped_give_the_good_rows_result_count_and_lines(tmp_path, cli, seed):
    rng = random.Random(seed)
    good = write_csv(tmp_path / "good.csv", 60 + seed, rng.choice([1, 40, 500]),
                     crlf=seed % 2 == 1, bom=seed == 2, max_decimals=3)
    bad = tmp_path / "bad.csv"
    lines = with_bad_rows(good, bad, seed, rng.choice([1, 4, 5, 9]))
    want = model([good], ["site"], "reading")
    for threads in (1, 4):
        with pytest.warns(brc.SkippedRowsWarning) as caught:
            got = brc.aggregate(bad, threads=threads, on_error="skip", **SKIP_ARGS)
        assert rows_of(got) == want
        assert got.format("csv") == brc.aggregate(good, **SKIP_ARGS).format("csv")
        first = [(str(bad), line) for line in lines[:5]]
        assert got.skipped == (len(lines), first)
        [warning] = caught
        assert warning.message.count == len(lines) and warning.message.first == first
        assert str(warning.message) == skipped_line(len(lines), first)
        assert warning.filename == __file__
    done = cli.run(*CSV_ARGS, "--on-error", "skip", "--format", "csv", bad)
    assert done.returncode == 0 and done.stdout.decode() == got.format("csv")
    assert f"brc: {skipped_line(len(lines), first)}\n" in done.stderr.decode()
    # Pickled whole, with its skipped rows; shown with other decimals too.
    assert pickle.loads(pickle.dumps(got)) == got
    assert pickle.loads(pickle.dumps(got)).skipped == got.skipped
    assert got.with_decimals(1).skipped == got.skipped
    with pytest.warns(brc.SkippedRowsWarning):
        assert brc.aggregate(bad, on_error="skip", decimals=1, **SKIP_ARGS) == got.with_decimals(1)
    # Failing is the default, and "fail" says so.
    for fail in ({}, {"on_error": "fail"}):
        with pytest.raises(brc.DataError) as e:
            brc.aggregate(bad, **SKIP_ARGS, **fail)
        assert (e.value.path, e.value.line) == (str(bad), lines[0])


def test_skipped_rows_are_named_by_input_and_line_as_given(tmp_path, cli):
    d = tmp_path / "dir"
    d.mkdir()
    a, b = d / "a.csv", tmp_path / "b.csv"
    a.write_text("k,v\nx,1\nx,bad\ny\n,2\n")
    b.write_text("k,v\nz,1,2\nz,3\nz,q\nz,4\nz,x\n")
    with pytest.warns(brc.SkippedRowsWarning):
        got = brc.aggregate([str(b), f"{tmp_path}/dir"], csv=True, on_error="skip")
    # Inputs in the order read; the first five by input, then line.
    first = [(str(b), 2), (str(b), 4), (str(b), 6), (f"{tmp_path}/dir/a.csv", 3),
             (f"{tmp_path}/dir/a.csv", 4)]
    assert got.skipped == (6, first)
    assert str(got) == "{x=1/1/1, z=3/4/4}"
    done = cli.run("--csv", "--on-error", "skip", b, f"{tmp_path}/dir")
    assert done.stdout.decode() == str(got) + "\n"
    assert f"brc: {skipped_line(6, first)}\n" in done.stderr.decode()
    # Nothing skipped: no warning.
    c = tmp_path / "c.csv"
    c.write_text("k,v\nx,1\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clean = brc.aggregate(c, csv=True, on_error="skip")
    assert clean.skipped == (0, []) and clean == brc.aggregate(c, csv=True)


def test_partials_skip_bad_rows_and_warn(tmp_path):
    good = write_csv(tmp_path / "good.csv", 71, 300, max_decimals=2)
    bad = tmp_path / "bad.csv"
    lines = with_bad_rows(good, bad, 71, 8)
    whole = brc.partial(good, **SKIP_ARGS)
    with pytest.warns(brc.SkippedRowsWarning) as caught:
        assert brc.partial(bad, on_error="skip", **SKIP_ARGS) == whole
    [warning] = caught
    assert (warning.message.count, warning.message.first) == (
        8, [(str(bad), line) for line in lines[:5]])
    # Ranges: each names its own rows, by their lines in the file.
    size = bad.stat().st_size
    split = longest_row([bad]) + 1
    bounds = list(range(0, size, split)) + [size]
    parts, count, first = [], 0, []
    for lo, hi in zip(bounds, bounds[1:]):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            parts.append(brc.partial(bad, start=lo, end=hi, on_error="skip", **SKIP_ARGS))
        for w in caught:
            assert issubclass(w.category, brc.SkippedRowsWarning)
            count += w.message.count
            first += w.message.first
    assert brc.merge(parts) == whole
    assert count == 8 and sorted(line for _, line in first) == lines
    with pytest.warns(brc.SkippedRowsWarning) as caught:
        assert brc.partial_bytes(bad.read_bytes(), on_error="skip", **SKIP_ARGS) == whole
    assert caught[0].message.first == [("<bytes>", line) for line in lines[:5]]
    with pytest.raises(brc.DataError):
        brc.partial(bad, **SKIP_ARGS)
    with pytest.raises(brc.DataError):
        brc.partial_bytes(bad.read_bytes(), on_error="fail", **SKIP_ARGS)


# --- Partials --------------------------------------------------------------

def test_ranges_of_a_file_merge_into_the_whole(tmp_path, cli):
    path = write_csv(tmp_path / "r.csv", 11, 500, bom=True, crlf=True)
    size = path.stat().st_size
    whole = brc.partial(path, csv=True, key="site", value="reading")
    assert bytes(whole) == cli.output(*CSV_ARGS, "--format", "partial", path).encode()
    assert bytes(whole).startswith(b"brc-partial v2 ")
    split = longest_row([path]) + 1
    bounds = list(range(0, size, split)) + [size]
    parts = [brc.partial(path, start=a, end=b, csv=True, key="site", value="reading")
             for a, b in zip(bounds, bounds[1:])]
    assert brc.merge(parts) == whole
    assert brc.merge(parts[::-1]).finish() == brc.aggregate(
        path, csv=True, key="site", value="reading")
    assert brc.partial_bytes(path.read_bytes(), csv=True, key="site", value="reading") == whole


def test_partial_bytes_of_a_delimited_file_are_read_whole(tmp_path):
    with pytest.raises(ValueError, match="first_line_is_whole must be true"):
        brc.partial_bytes(b"k,v\na,1\n", first_line_is_whole=False, csv=True)
    with pytest.raises(brc.DataError) as e:
        brc.partial_bytes(b"k,v\na,1\nb,x\n", csv=True)
    assert str(e.value).startswith("<bytes>: line 3, column 2: ")
    packed = gzip.compress(b"k,v\na,1.25\n")
    assert brc.partial_bytes(packed, csv=True).finish().format("csv") == (
        "station,min,mean,max,count,missing\na,1.25,1.25,1.25,1,0\n")


# --- Dask ------------------------------------------------------------------

def dask_files(tmp_path: Path) -> list[Path]:
    d = tmp_path / "dask"
    d.mkdir()
    files = [
        write_csv(d / "a.csv", 21, 400, bom=True, max_decimals=2),
        write_csv(d / "b.csv", 22, 300, crlf=True, final_newline=False, max_decimals=4),
        write_csv(d / "c.csv", 23, 1, max_decimals=0),
    ]
    packed = d / "d.csv.gz"
    packed.write_bytes(gzip.compress(write_csv(tmp_path / "d.csv", 24, 200).read_bytes()))
    return files + [packed]


def test_dask_equals_a_single_run_byte_for_byte(client, tmp_path, cli):
    files = dask_files(tmp_path)
    split = longest_row(files[:3]) + 1
    for key in ("site", ["site", "sensor"]):
        single = brc.aggregate(files, csv=True, key=key, value="reading")
        for split_bytes in (split, 3 * split, "256MiB"):
            got = brc.dask.aggregate([str(f) for f in files], split_bytes=split_bytes,
                                     client=client, csv=True, key=key, value="reading")
            assert got == single
            assert got.to_arrow().equals(single.to_arrow())
            assert got.format("partial") == single.format("partial")
    assert got.format("csv") == cli.output(
        "--csv", "--key", "site,sensor", "--value", "reading", "--format", "csv", *files)


def test_dask_decimals_nulls_positions_and_tsv(client, tmp_path):
    path = write_csv(tmp_path / "r.tsv", 31, 500, delimiter="\t", max_decimals=3)
    split = longest_row([path]) + 1
    options = dict(tsv=True, key=[2, "sensor"], value=4, nulls=["null", "NaN", "NA", "", "-"],
                   decimals=1)
    single = brc.aggregate(path, **options)
    got = brc.dask.aggregate(path, split_bytes=split, client=client, **options)
    assert got == single and got.decimals == 1
    assert got.to_arrow().equals(single.to_arrow())


def test_dask_of_parquet_and_csv_or_nothing_equals_a_single_run(client, tmp_path):
    import pyarrow.parquet as pq
    table = pa.table({"station": ["a", "b", "a"], "measure": [1.5, -2.0, 3.1]})
    parquet = tmp_path / "p.parquet"
    pq.write_table(table, parquet, row_group_size=1)
    path = write_csv(tmp_path / "r.csv", 41, 100, max_decimals=2)
    empty = tmp_path / "empty"
    empty.mkdir()
    for inputs in ([parquet, path], [parquet], [empty]):
        single = brc.aggregate(inputs, csv=True, key="site", value="reading")
        got = brc.dask.aggregate([str(p) for p in inputs], client=client, split_bytes=1000,
                                 csv=True, key="site", value="reading")
        assert got == single
        assert got.to_arrow().equals(single.to_arrow())


@pytest.mark.parametrize("name", ["value", "unclosed", "stray quote", "empty key",
                                  "18 digits at the file's scale"])
def test_dask_errors_are_the_single_run_s(client, tmp_path, name):
    rng = random.Random(51)
    good = tmp_path / "good.csv"
    rows = (f"{quoted(rng.choice(SITES), ',', rng)},{value_text(rng, 3, False)}\n"
            for _ in range(200))
    good.write_text("k,v\n" + "".join(rows))
    path = tmp_path / "bad.csv"
    # The bad rows after many good ones, so that a later task holds them.
    body = BAD[name].split("\n", 1)[1]
    path.write_text("k,v\n" + "x,1\n" * 300 + body)
    files = [str(good), str(path)]
    options = dict(csv=True, key="k", value="v")
    with pytest.raises(brc.DataError) as single:
        brc.aggregate(files, **options)
    with pytest.raises(brc.DataError) as got:
        brc.dask.aggregate(files, split_bytes=50, client=client, **options)
    assert str(got.value) == str(single.value)
    assert (got.value.line, got.value.column) == (single.value.line, single.value.column)


def test_dask_checks_every_header_against_the_first(client, tmp_path, cli):
    a, b, c = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    a.write_text("site,reading\nx,1\n")
    b.write_bytes(b'\xef\xbb\xbf"site",reading\r\ny,2\r\n')
    c.write_text("site,value\nz,3\n" + "z,x\n" * 10)
    assert brc.dask.aggregate([a, b], client=client, csv=True) == brc.aggregate(
        [a, b], csv=True)
    with pytest.raises(brc.DataError) as e:
        brc.dask.aggregate([str(a), str(b), str(c)], client=client, csv=True, split_bytes=20)
    assert str(e.value) == cli_error(cli, "--csv", a, b, c)
    assert (e.value.path, e.value.line, e.value.column) == (str(c), 1, None)
    # An error in a file before the unlike header comes first.
    b.write_text("site,reading\ny,bad\n")
    with pytest.raises(brc.DataError) as e:
        brc.dask.aggregate([a, b, c], client=client, csv=True)
    assert str(e.value) == cli_error(cli, "--csv", a, b, c)


def test_dask_checks_decimals_before_any_task(tmp_path):
    with pytest.raises(ValueError, match="decimals must be"):
        brc.dask.aggregate(tmp_path / "nothing-*.csv", csv=True, decimals=12)


def test_dask_reads_remote_delimited_files_whole(client, tmp_path):
    from rangeserver import RangeServer

    served = tmp_path / "served"
    served.mkdir()
    files = [write_csv(served / "a.csv", 61, 300, bom=True),
             write_csv(served / "b.csv", 62, 200, crlf=True, max_decimals=1)]
    single = brc.aggregate(files, csv=True, key="site", value="reading")
    with RangeServer(served) as server:
        urls = [f"{server.url}/a.csv", f"{server.url}/b.csv"]
        # Read by brc (whole, as a stream), then by fsspec (whole, handed
        # to partial_bytes), however small the split.
        for storage_options in (None, {"headers": {"X-Test": "1"}}):
            got = brc.dask.aggregate(urls, split_bytes=100, client=client, csv=True,
                                     key="site", value="reading",
                                     storage_options=storage_options)
            assert got == single
        (served / "b.csv").write_text("site,value\nx,1\n")
        with pytest.raises(brc.DataError) as e:
            brc.dask.aggregate(urls, client=client, csv=True, key="site", value="reading")
    assert str(e.value) == (
        f"{urls[1]}: line 1: expected the header of the first file, found another one")


def test_dask_skips_bad_rows_as_a_single_run(client, tmp_path):
    files = []
    for i, n in enumerate((6, 0, 3)):
        good = write_csv(tmp_path / f"good-{i}.csv", 80 + i, 300, crlf=i == 2, max_decimals=2)
        bad = tmp_path / f"bad-{i}.csv"
        with_bad_rows(good, bad, 80 + i, n)
        files.append(bad)
    packed = tmp_path / "bad-3.csv.gz"
    plain = tmp_path / "bad-3.csv"
    with_bad_rows(write_csv(tmp_path / "good-3.csv", 83, 100), plain, 83, 2)
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    files.append(packed)
    with pytest.warns(brc.SkippedRowsWarning) as caught:
        single = brc.aggregate(files, on_error="skip", **SKIP_ARGS)
    assert single.skipped[0] == 11
    split = longest_row(files[:3]) + 1
    for split_bytes in (split, 7 * split, "256MiB"):
        with pytest.warns(brc.SkippedRowsWarning) as caught:
            got = brc.dask.aggregate([str(f) for f in files], split_bytes=split_bytes,
                                     client=client, on_error="skip", **SKIP_ARGS)
        assert got == single and got.skipped == single.skipped
        assert got.format("partial") == single.format("partial")
        [warning] = caught
        assert str(warning.message) == skipped_line(*single.skipped)
        assert warning.filename == __file__
    good = [tmp_path / f"good-{i}.csv" for i in range(4)]
    assert rows_of(got) == model(good, ["site"], "reading")
    with pytest.warns(brc.SkippedRowsWarning):
        shown = brc.dask.aggregate(files, client=client, split_bytes=split, decimals=1,
                                   on_error="skip", **SKIP_ARGS)
    assert shown == single.with_decimals(1)
    with pytest.raises(brc.DataError) as e:
        brc.dask.aggregate(files, client=client, split_bytes=split, on_error="fail", **SKIP_ARGS)
    assert (e.value.path, e.value.line) == (str(files[0]), single.skipped[1][0][1])

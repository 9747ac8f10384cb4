"""Statistics beyond min/mean/max (`stats=`, the command line's
`--stats`) through the Python package: every statistic of random text,
CSV and Parquet files against an exact model (Python's integers and
fractions: `isqrt` for the standard deviations, the sorted values for the
discrete quantiles) and against DuckDB (`count`, `sum`, `min`, `max`,
`avg`, `stddev_samp`, `stddev_pop`, `quantile_disc`), whose doubles must
agree with the exact values before rounding; the command line's output;
the Arrow, Polars and pandas columns; partials; errors; and
brc.dask.aggregate on a real LocalCluster, equal to a single run."""

from __future__ import annotations

import csv
import io
import json
import math
import pickle
import random
from decimal import Decimal, localcontext
from fractions import Fraction
from pathlib import Path
from typing import Optional

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import brc
import brc.dask
from conftest import NAMES
from rangeserver import RangeServer

# Every statistic, the quantiles from the smallest N to the largest.
ALL = [
    "count", "sum", "min", "max", "mean", "stddev", "stddev_pop", "median",
    "p0.001", "p1", "p25", "p75", "p90", "p99", "p99.9", "p99.999999",
]

# A key's values, in units of 10^-scale (`None`: a missing value).
Groups = dict[str, list[Optional[int]]]


# --- The exact model ----------------------------------------------------------

def half_up(x: Fraction) -> int:
    """`x` rounded half toward +inf."""
    return math.floor(x + Fraction(1, 2))


def root_half_up(x: Fraction) -> int:
    """`sqrt(x)` (x >= 0) rounded half up, in integers only: the root of the
    floor, plus one if `sqrt(x) >= m + 1/2`, that is `4x >= (2m + 1)^2`."""
    m = math.isqrt(math.floor(x))
    return m + 1 if 4 * x >= (2 * m + 1) ** 2 else m


def quantile_q(name: str) -> Fraction:
    """The quantile `median` or `pN` stands for."""
    return Fraction(1, 2) if name == "median" else Fraction(name[1:]) / 100


def variance(units: list[int], sample: bool) -> Optional[Fraction]:
    """The exact variance of `units` (sample: over n - 1), in units squared."""
    n = len(units)
    if n < 1 + sample:
        return None
    spread = n * sum(u * u for u in units) - sum(units) ** 2
    return Fraction(spread, n * (n - 1 if sample else n))


def exact(units: list[int], stat: str, scale: int):
    """The exact value of `stat` of `units` (in units of 10^-scale) before
    any rounding: an int (count), a Fraction of natural units, the
    variance (a Fraction) for the standard deviations, or None."""
    n = len(units)
    if stat == "count":
        return n
    if not n:
        return None
    unit = Fraction(1, 10**scale)
    if stat == "sum":
        return sum(units) * unit
    if stat == "min":
        return min(units) * unit
    if stat == "max":
        return max(units) * unit
    if stat == "mean":
        return Fraction(sum(units), n) * unit
    if stat in ("stddev", "stddev_pop"):
        v = variance(units, stat == "stddev")
        return None if v is None else v * unit * unit
    # The sorted values' element ceil(q * n), counted from 1.
    rank = math.ceil(quantile_q(stat) * n)
    return sorted(units)[rank - 1] * unit


def shown(units: list[int], stat: str, scale: int, decimals: int):
    """`stat` of `units` as brc shows it with `decimals` decimals: by the
    stated rules, from the exact value."""
    value = exact(units, stat, scale)
    if value is None or stat == "count":
        return value
    step = 10**decimals
    if stat in ("stddev", "stddev_pop"):
        return Decimal(root_half_up(value * step * step)).scaleb(-decimals)
    if stat == "mean" and scale == 1 and decimals == 1:
        # The official reference's f64 steps: Math.round((sum / 10.0) / n * 10.0).
        x = (sum(units) / 10.0) / len(units) * 10.0
        f = math.floor(x)
        return Decimal(f + 1 if x - f >= 0.5 else f).scaleb(-1)
    return Decimal(half_up(value * step)).scaleb(-decimals)


def model(groups: Groups, stats: list[str], scale: int, decimals: int,
          missing: bool = False) -> list[dict]:
    """Each key's row of brc's Arrow table, by the model."""
    rows = []
    for name in sorted(groups, key=str.encode):
        units = [u for u in groups[name] if u is not None]
        row = {"station": name}
        row.update((stat, shown(units, stat, scale, decimals)) for stat in stats)
        if missing:
            row["missing"] = len(groups[name]) - len(units)
        rows.append(row)
    return rows


# --- DuckDB -------------------------------------------------------------------

def duckdb_stats(groups: Groups, stats: list[str], scale: int) -> dict[str, dict]:
    """Each key's statistics as DuckDB computes them from the same values,
    read as DECIMAL(18, scale): exact decimals for count, sum, min, max and
    the discrete quantiles (q as a decimal literal, computed exactly),
    doubles for avg and the standard deviations."""
    names, values = [], []
    for name, vs in groups.items():
        for v in vs:
            names.append(name)
            values.append(None if v is None else Decimal(v).scaleb(-scale))
    table = pa.table({"station": pa.array(names, pa.string()),
                      "v": pa.array(values, pa.decimal128(18, scale))})
    sql = {"count": "count(v)", "sum": "sum(v)", "min": "min(v)", "max": "max(v)",
           "mean": "avg(v)", "stddev": "stddev_samp(v)", "stddev_pop": "stddev_pop(v)"}
    q = lambda s: Decimal(quantile_q(s).numerator) / quantile_q(s).denominator  # noqa: E731
    columns = [sql.get(s) or f"quantile_disc(v, {q(s)})" for s in stats]
    con = duckdb.connect()
    con.register("t", table)
    got = con.execute(f"SELECT station, {', '.join(columns)} FROM t GROUP BY station").fetchall()
    return {name: dict(zip(stats, values)) for name, *values in got}


def precise_root(x: Fraction) -> Decimal:
    """`sqrt(x)` to 40 digits."""
    with localcontext() as ctx:
        ctx.prec = 40
        return (Decimal(x.numerator) / Decimal(x.denominator)).sqrt()


def check_duckdb(groups: Groups, stats: list[str], scale: int, decimals: int,
                 got: list[dict]) -> None:
    """DuckDB agrees with the model's exact values: equal where it is exact,
    within 1e-9 of the value (relatively) for its doubles, which round
    (half up, at the decimals shown) to brc's but near a tie."""
    duck = duckdb_stats(groups, stats, scale)
    assert set(duck) == {row["station"] for row in got}
    half = Decimal(5).scaleb(-decimals - 1)
    for row in got:
        units = [u for u in groups[row["station"]] if u is not None]
        theirs = duck[row["station"]]
        for stat in stats:
            value, d = exact(units, stat, scale), theirs[stat]
            if value is None:
                assert d is None, (row["station"], stat, d)
                continue
            if stat == "count":
                assert d == value
                continue
            if stat in ("stddev", "stddev_pop"):
                true = precise_root(value)
            else:
                true = Decimal(value.numerator) / Decimal(value.denominator)
            if isinstance(d, Decimal):
                # Exact in DuckDB too.
                assert Fraction(d) == value, (row["station"], stat, d, value)
                continue
            off = abs(Decimal(d) - true)
            assert off <= Decimal("1e-9") * max(abs(true), Decimal(1)), (row["station"], stat, d)
            # brc's rounded value lies within half a shown unit of DuckDB's.
            mine = row[stat]
            assert abs(mine - Decimal(d)) <= half + off + Decimal("1e-12"), (stat, mine, d)


# --- Files ----------------------------------------------------------------------

def tenths(value: int) -> str:
    """A value in tenths as the challenge writes it: `-12.3`, `0.5`."""
    sign = "-" if value < 0 else ""
    return f"{sign}{abs(value) // 10}.{abs(value) % 10}"


def write_text(path: Path, groups: Groups, seed: int) -> Path:
    """The values as `name;value` lines, in a random order."""
    lines = [f"{name};{tenths(v)}\n" for name, vs in groups.items() for v in vs]
    random.Random(seed).shuffle(lines)
    path.write_text("".join(lines), encoding="utf-8")
    return path


def write_parquet(path: Path, groups: Groups, seed: int) -> Path:
    """The values as the One Trillion Row Challenge writes them: doubles
    of tenths, in small row groups."""
    rows = [(name, v / 10) for name, vs in groups.items() for v in vs]
    random.Random(seed).shuffle(rows)
    table = pa.table({"station": [r[0] for r in rows], "measure": [r[1] for r in rows]})
    pq.write_table(table, path, row_group_size=max(1, len(rows) // 7))
    return path


def decimal_text(units: int, scale: int) -> str:
    return str(Decimal(units).scaleb(-scale)) if scale else str(units)


def write_csv(path: Path, groups: Groups, seed: int, scale: int) -> Path:
    """The values as a CSV file (`site,sensor,reading`), each value with
    as many decimals as it needs of `scale` (at least one with all of
    them), a missing one as `NA` or an empty cell."""
    rng = random.Random(seed)
    rows = [(name, v) for name, vs in groups.items() for v in vs]
    rng.shuffle(rows)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["site", "sensor", "reading"])
    for name, v in rows:
        cell = rng.choice(["NA", ""]) if v is None else decimal_text(v, scale)
        writer.writerow([name, rng.choice(["t1", "t,2"]), cell])
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def random_name(rng: random.Random, multibyte: bool) -> str:
    letters = "abcxyzéöüßΩжд東京🌡️" if multibyte else "abcdefghijklmnopqrstuvwxyz"
    return "".join(rng.choice(letters) for _ in range(rng.randint(1, 16)))


def groups_of(case: str, seed: int = 0) -> Groups:
    """The values of a test case, in tenths (text and Parquet)."""
    rng = random.Random(seed)
    value = lambda: rng.randint(-999, 999)  # noqa: E731
    if case == "one row":
        return {"Zürich": [123]}
    if case == "all equal":
        return {"a": [555] * 1000, "東京": [-999] * 7, "b": [0] * 2}
    if case == "extremes":
        names = NAMES + [f"s{i}" for i in range(9)]
        groups: Groups = {name: [] for name in names}
        for _ in range(5000):
            groups[rng.choice(names)].append(rng.choice([-999, 999]))
        return groups
    if case == "10K names":
        names = sorted({random_name(rng, rng.random() < 0.3) for _ in range(11_000)})[:10_000]
        groups = {name: [value()] for name in names}
        for _ in range(30_000):
            groups[rng.choice(names)].append(value())
        return groups
    if case == "multi-byte names":
        names = NAMES + [random_name(rng, True) for _ in range(30)]
        groups = {name: [] for name in names}
        for _ in range(4000):
            groups[rng.choice(names)].append(value())
        return {k: v for k, v in groups.items() if v}
    if case == "ties":
        # Two values k apart, k odd: a population deviation of exactly
        # k/2 units, half a shown unit past a shown value; and the sample
        # deviations' neighbours.
        groups = {f"k{k}": [v, v + k] for k, v in ((1, 0), (3, -5), (5, 990), (7, -999))}
        groups["spread"] = [-999, -998, 998, 999]
        groups["bimodal"] = [-999] * 50 + [999] * 50
        return groups
    raise AssertionError(case)


TEXT_CASES = ["one row", "all equal", "extremes", "10K names", "multi-byte names", "ties"]


def rows_of(summary: brc.Summary) -> list[dict]:
    return summary.to_arrow().to_pylist()


# --- Text, Parquet and CSV against the model and DuckDB -----------------------

@pytest.mark.parametrize("case", TEXT_CASES)
def test_text_files_equal_the_model_and_duckdb(tmp_path, cli, case):
    groups = groups_of(case, seed=len(case))
    path = write_text(tmp_path / "m.txt", groups, seed=1)
    summary = brc.aggregate(path, stats=ALL, threads=2)
    assert summary.statistics == ALL
    got = rows_of(summary)
    assert got == model(groups, ALL, 1, 1)
    check_duckdb(groups, ALL, 1, 1, got)
    for form in ("csv", "json", "official", "lines"):
        assert summary.format(form) == cli.output("--stats", ",".join(ALL), "-f", form, path)
    assert str(summary) + "\n" == cli.output("--stats", ",".join(ALL), path)


@pytest.mark.parametrize("engine", brc.ENGINES)
def test_every_engine_gives_the_same_statistics(tmp_path, engine):
    groups = groups_of("multi-byte names", seed=7)
    path = write_text(tmp_path / "m.txt", groups, seed=2)
    summary = brc.aggregate(path, stats=ALL, engine=engine, threads=2)
    assert rows_of(summary) == model(groups, ALL, 1, 1)


@pytest.mark.parametrize("decimals", [0, 3])
def test_fewer_or_more_decimals_round_half_up_or_pad(tmp_path, cli, decimals):
    groups = groups_of("ties") | groups_of("multi-byte names", seed=3)
    path = write_text(tmp_path / "m.txt", groups, seed=3)
    summary = brc.aggregate(path, stats=ALL, decimals=decimals)
    got = rows_of(summary)
    assert got == model(groups, ALL, 1, decimals)
    check_duckdb(groups, ALL, 1, decimals, got)
    assert summary.format("csv") == cli.output(
        "--stats", ",".join(ALL), "--decimals", decimals, "-f", "csv", path)
    # The same, shown with other decimals afterwards: the statistics stay.
    later = brc.aggregate(path, stats=ALL).with_decimals(decimals)
    assert later.statistics == ALL and rows_of(later) == got


@pytest.mark.parametrize("case", ["one row", "extremes", "multi-byte names", "ties"])
def test_parquet_files_equal_the_model_and_duckdb(tmp_path, cli, case):
    groups = groups_of(case, seed=11)
    path = write_parquet(tmp_path / "m.parquet", groups, seed=4)
    summary = brc.aggregate(path, stats=ALL, threads=2)
    got = rows_of(summary)
    assert got == model(groups, ALL, 1, 1)
    check_duckdb(groups, ALL, 1, 1, got)
    assert summary.format("csv") == cli.output("--stats", ",".join(ALL), "-f", "csv", path)
    # Parquet and text, one summary.
    text = write_text(tmp_path / "m.txt", groups, seed=5)
    both = brc.aggregate([path, text], stats=ALL)
    doubled = {k: v + v for k, v in groups.items()}
    assert rows_of(both) == model(doubled, ALL, 1, 1)


def csv_groups(seed: int, scale: int, names: int, rows: int) -> Groups:
    """A CSV case's values in units of 10^-scale, some missing, and a key
    with no value at all."""
    rng = random.Random(seed)
    keys = NAMES + [random_name(rng, rng.random() < 0.5) for _ in range(names)]
    groups: Groups = {k: [] for k in keys}
    limit = 10 ** (scale + 3)
    for _ in range(rows):
        v = None if rng.random() < 0.1 else rng.randint(-limit, limit)
        groups[rng.choice(keys)].append(v)
    groups["Ωnly missing"] = [None, None]
    groups["one"] = [limit]
    # At least one value has every decimal: the file's scale is `scale`.
    groups["fine"] = [1, -1, 3]
    return {k: v for k, v in groups.items() if v}


@pytest.mark.parametrize("scale,decimals", [(3, None), (3, 1), (2, 5), (0, None)])
def test_csv_files_equal_the_model_and_duckdb(tmp_path, cli, scale, decimals):
    groups = csv_groups(scale + 10 * (decimals or 0), scale, 60, 6000)
    path = write_csv(tmp_path / "r.csv", groups, seed=6, scale=scale)
    summary = brc.aggregate(path, csv=True, key="site", value="reading", stats=ALL,
                            decimals=decimals)
    shown_decimals = scale if decimals is None else decimals
    assert (summary.scale, summary.decimals) == (scale, shown_decimals)
    got = rows_of(summary)
    assert got == model(groups, ALL, scale, shown_decimals, missing=True)
    check_duckdb(groups, ALL, scale, shown_decimals, got)
    assert got[[r["station"] for r in got].index("Ωnly missing")] == {
        "station": "Ωnly missing", **{s: None for s in ALL}, "count": 0, "missing": 2}
    args = ["--csv", "--key", "site", "--value", "reading", "--stats", ",".join(ALL)]
    if decimals is not None:
        args += ["--decimals", decimals]
    for form in ("csv", "json"):
        assert summary.format(form) == cli.output(*args, "-f", form, path)


# --- Columns: Arrow, Polars, pandas ---------------------------------------------

def test_columns_are_named_and_typed_in_the_order_asked(tmp_path):
    path = write_text(tmp_path / "m.txt", {"a": [1, 2, 3], "b": [-5]}, seed=0)
    asked = ["p99", "count", "stddev", "sum", "median", "mean", "stddev_pop", "max", "min"]
    table = brc.aggregate(path, stats=asked).to_arrow()
    d18, d38 = pa.decimal128(18, 1), pa.decimal128(38, 1)
    assert table.schema == pa.schema([
        pa.field("station", pa.string(), nullable=False),
        pa.field("p99", d18, nullable=False),
        pa.field("count", pa.uint64(), nullable=False),
        pa.field("stddev", d18, nullable=True),
        pa.field("sum", d38, nullable=False),
        pa.field("median", d18, nullable=False),
        pa.field("mean", d18, nullable=False),
        pa.field("stddev_pop", d18, nullable=False),
        pa.field("max", d18, nullable=False),
        pa.field("min", d18, nullable=False),
    ])
    # One value: no sample standard deviation.
    assert table.column("stddev").to_pylist() == [Decimal("0.1"), None]
    assert table.column("sum").to_pylist() == [Decimal("0.6"), Decimal("-0.5")]


def test_a_delimited_summary_s_statistics_are_nullable_with_missing_last(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("site,reading\nOslo,1.25\nOslo,NA\nLima,\nOslo,-2\n")
    summary = brc.aggregate(path, csv=True, stats="count,median,sum")
    table = summary.to_arrow()
    assert table.schema == pa.schema([
        pa.field("station", pa.string(), nullable=False),
        pa.field("count", pa.uint64(), nullable=False),
        pa.field("median", pa.decimal128(18, 2), nullable=True),
        pa.field("sum", pa.decimal128(38, 2), nullable=True),
        pa.field("missing", pa.int64(), nullable=False),
    ])
    assert table.to_pylist() == [
        {"station": "Lima", "count": 0, "median": None, "sum": None, "missing": 1},
        {"station": "Oslo", "count": 2, "median": Decimal("-2.00"), "sum": Decimal("-0.75"),
         "missing": 1},
    ]


def test_polars_and_pandas_keep_the_types(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("site,reading\nOslo,1.25\nOslo,NA\nLima,\nOslo,-2\nOslo,7\n")
    summary = brc.aggregate(path, csv=True, stats=["count", "sum", "stddev", "p90"])
    frame = summary.to_polars()
    assert frame.columns == ["station", "count", "sum", "stddev", "p90", "missing"]
    assert frame.dtypes == [pl.String, pl.UInt64, pl.Decimal(38, 2), pl.Decimal(18, 2),
                            pl.Decimal(18, 2), pl.Int64]
    assert frame.row(1) == ("Oslo", 3, Decimal("6.25"), Decimal("4.56"), Decimal("7.00"), 1)
    assert frame.row(0) == ("Lima", 0, None, None, None, 1)
    pandas = summary.to_pandas()
    assert list(pandas.columns) == frame.columns
    assert pandas["sum"].dtype == pd.ArrowDtype(pa.decimal128(38, 2))
    assert pandas["count"].dtype == pd.ArrowDtype(pa.uint64())
    assert pandas["stddev"].tolist()[1] == Decimal("4.56")
    assert pl.DataFrame(summary).equals(frame)


def test_without_stats_the_columns_are_as_they_were(tmp_path, cli):
    path = write_text(tmp_path / "m.txt", groups_of("multi-byte names"), seed=0)
    summary = brc.aggregate(path)
    assert summary.statistics is None
    assert summary.to_arrow().column_names == ["station", "min", "mean", "max", "count"]
    assert summary.to_arrow().schema.field("min").type == pa.decimal128(3, 1)
    assert summary.format("csv") == cli.output("-f", "csv", path)


def test_a_sum_takes_38_digits(tmp_path):
    # 17 digits each: 30 of them add up to 19 digits, past DECIMAL(18, 0).
    big = 10**17 - 1
    path = tmp_path / "a.csv"
    path.write_text("k,v\n" + f"a,{big}\n" * 30 + "b,-1\n")
    summary = brc.aggregate(path, csv=True, stats="sum,mean,stddev_pop")
    assert rows_of(summary)[0] == {"station": "a", "sum": Decimal(30 * big), "mean": Decimal(big),
                                   "stddev_pop": Decimal(0), "missing": 0}
    # 18 digits at 9 decimals: 20 of them add up to 20 digits.
    path.write_text("k,v\n" + "a,999999999.999999999\n" * 20)
    summary = brc.aggregate(path, csv=True, stats=["sum", "max"])
    assert rows_of(summary)[0]["sum"] == Decimal("19999999999.999999980")
    assert summary.to_arrow().schema.field("sum").type == pa.decimal128(38, 9)


def test_a_sample_deviation_past_18_digits_widens_its_column(tmp_path):
    # Two values of 18 digits, ±(10^18 - 1): a sample deviation of
    # |a - b| / sqrt(2), about 1.41·10^18, past 18 digits; the population
    # deviation, half the range, fits.
    a, b = 10**18 - 1, -(10**18 - 1)
    path = tmp_path / "a.csv"
    path.write_text(f"k,v\nx,{a}\nx,{b}\ny,1\n")
    summary = brc.aggregate(path, csv=True, stats="stddev,stddev_pop,min,max")
    table = summary.to_arrow()
    assert table.schema.field("stddev").type == pa.decimal128(38, 0)
    assert table.schema.field("stddev_pop").type == pa.decimal128(18, 0)
    want = root_half_up(Fraction((a - b) ** 2, 2))
    assert want > 10**18
    assert table.column("stddev").to_pylist() == [Decimal(want), None]
    assert table.column("stddev_pop").to_pylist() == [Decimal(a), Decimal(0)]


# --- The argument, the names ------------------------------------------------------

def test_a_list_a_string_and_a_tuple_name_the_same_statistics(tmp_path):
    path = write_text(tmp_path / "m.txt", groups_of("extremes"), seed=0)
    by_list = brc.aggregate(path, stats=["min", "median", "p99", "max"])
    assert brc.aggregate(path, stats="min,median,p99,max") == by_list
    assert brc.aggregate(path, stats=" min, median ,p99,max") == by_list
    assert brc.aggregate(path, stats=("min", "median", "p99", "max")) == by_list
    assert by_list.statistics == ["min", "median", "p99", "max"]
    # Named as the command line names them.
    assert brc.aggregate(path, stats="p05,p99.90,p50").statistics == ["p5", "p99.90", "p50"]


@pytest.mark.parametrize("stats,error,words", [
    ("p100", ValueError, 'unknown statistic "p100"'),
    (["min", "avg"], ValueError, 'unknown statistic "avg"'),
    (["min,max"], ValueError, 'unknown statistic "min,max"'),
    ([" min"], ValueError, 'unknown statistic " min"'),
    ([""], ValueError, 'unknown statistic ""'),
    ([], ValueError, "no statistic asked"),
    ("", ValueError, "no statistic asked"),
    ("min,max,min", ValueError, 'statistic "min" asked twice'),
    (["median", "p50", "median"], ValueError, 'statistic "median" asked twice'),
    (["p0"], ValueError, 'unknown statistic "p0"'),
    (["p1.1234567"], ValueError, "unknown statistic"),
    ([1], TypeError, "stats names are str"),
    (5, TypeError, "stats must be"),
    (b"min", TypeError, "stats must be"),
])
def test_bad_statistics_are_value_or_type_errors(tmp_path, stats, error, words):
    path = write_text(tmp_path / "m.txt", {"a": [1]}, seed=0)
    for call in (
        lambda: brc.aggregate(path, stats=stats),
        lambda: brc.partial(path, stats=stats),
        lambda: brc.partial_bytes(b"a;1.0\n", stats=stats),
        lambda: brc.aggregate(path, stats="min").with_statistics(stats),
        lambda: brc.dask.aggregate(str(tmp_path / "nothing-*.txt"), stats=stats),
    ):
        with pytest.raises(error, match=words.replace(".", r"\.")) as raised:
            call()
        assert not isinstance(raised.value, brc.DataError)


def test_the_cli_s_message_for_an_unknown_statistic(tmp_path, cli):
    done = cli.run("--stats", "p100", tmp_path)
    message = done.stderr.decode()
    with pytest.raises(ValueError) as raised:
        brc.aggregate(tmp_path, stats="p100")
    assert str(raised.value) in message


def test_statistics_a_summary_did_not_keep_are_value_errors(tmp_path):
    path = write_text(tmp_path / "m.txt", {"a": [1, 2, 3]}, seed=0)
    plain = brc.aggregate(path)
    assert plain.with_statistics("count,sum,min,max,mean").statistics == [
        "count", "sum", "min", "max", "mean"]
    with pytest.raises(ValueError, match="stddev needs .*sum of squares"):
        plain.with_statistics("min,stddev")
    squares = brc.aggregate(path, stats="stddev")
    assert rows_of(squares.with_statistics("stddev_pop,sum")) == [
        {"station": "a", "stddev_pop": Decimal("0.1"), "sum": Decimal("0.6")}]
    with pytest.raises(ValueError, match="median needs .*counts per value"):
        squares.with_statistics("median")
    counts = brc.aggregate(path, stats="p90")
    assert rows_of(counts.with_statistics("median,stddev")) == [
        {"station": "a", "median": Decimal("0.2"), "stddev": Decimal("0.1")}]


def test_summaries_with_other_statistics_differ(tmp_path):
    path = write_text(tmp_path / "m.txt", {"a": [1, 2, 3]}, seed=0)
    median = brc.aggregate(path, stats="median")
    assert median == brc.aggregate(path, stats=["median"])
    # The same value, another statistic: another column.
    assert median != median.with_statistics("p50")
    # Min, mean and max asked are not the default columns (no count).
    plain = brc.aggregate(path)
    assert plain != plain.with_statistics("min,mean,max")
    assert plain.with_statistics("min,mean,max").to_arrow().column_names == [
        "station", "min", "mean", "max"]
    # What the keys keep counts too: they are other states.
    assert plain.with_statistics("min") != brc.aggregate(path, stats="median").with_statistics("min")


def test_an_empty_input_has_the_statistics_columns(tmp_path, cli):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    summary = brc.aggregate(empty, stats="median,stddev,count")
    assert len(summary) == 0 and summary.statistics == ["median", "stddev", "count"]
    assert summary.to_arrow().column_names == ["station", "median", "stddev", "count"]
    assert summary.format("csv") == cli.output("--stats", "median,stddev,count", "-f", "csv", empty)


# --- Partials ----------------------------------------------------------------------

def test_ranges_merge_into_the_whole_file_s_statistics(tmp_path):
    groups = groups_of("multi-byte names", seed=9)
    path = write_text(tmp_path / "m.txt", groups, seed=9)
    size = path.stat().st_size
    cuts = [0, 1, 777, size // 3, size // 2, size - 5, 2**64 - 1]
    parts = [brc.partial(path, start=a, end=b, stats="median") for a, b in zip(cuts, cuts[1:])]
    whole = brc.aggregate(path, stats=ALL)
    assert brc.merge(parts).finish().with_statistics(ALL) == whole
    # The bytes of each range, from the byte before it, to its last line's end.
    data = path.read_bytes()
    pieces = []
    for a, b in zip(cuts, cuts[1:]):
        lo = max(a - 1, 0)
        end = data.find(b"\n", min(b, size) - 1) + 1 if b < size else size
        end = size if end == 0 else end
        if a >= size:
            continue
        pieces.append(brc.partial_bytes(data[lo:end], first_line_is_whole=a == 0, stats=ALL))
    assert brc.merge(pieces).finish().with_statistics(ALL) == whole


def test_partials_without_stats_give_no_quantiles(tmp_path):
    path = write_text(tmp_path / "m.txt", {"a": [1, 2, 3]}, seed=0)
    with pytest.raises(ValueError, match="median needs .*counts per value"):
        brc.merge([brc.partial(path)]).finish().with_statistics("median")
    # The deviations keep their sum of squares, not the counts.
    with pytest.raises(ValueError, match="p99 needs .*counts per value"):
        brc.partial(path, stats="stddev").finish().with_statistics("p99")


def test_partial_bytes_with_stats_report_errors_where_they_are(tmp_path):
    data = b"a;1.0\nb;2.0\nc;x\n"
    for stats in (None, "median"):
        with pytest.raises(brc.DataError) as raised:
            brc.partial_bytes(data[3:], first_line_is_whole=False, stats=stats)
        assert (raised.value.path, raised.value.line, raised.value.offset) == ("<bytes>", 3, 9)
        with pytest.raises(brc.DataError) as raised:
            brc.partial_bytes(data, stats=stats)
        assert (raised.value.line, raised.value.offset) == (3, 12)
    # A gzip stream and a delimited file's bytes keep their statistics too.
    import gzip
    text = b"a;1.0\na;3.0\na;2.0\n"
    got = brc.partial_bytes(gzip.compress(text), stats="median").finish()
    assert rows_of(got.with_statistics("median")) == [{"station": "a", "median": Decimal("2.0")}]
    got = brc.partial_bytes(b"k,v\na,1\na,5\n", csv=True, stats="p90").finish()
    assert rows_of(got.with_statistics("p90")) == [{"station": "a", "p90": Decimal(5),
                                                    "missing": 0}]
    groups = groups_of("extremes", seed=8)
    parquet = write_parquet(tmp_path / "m.parquet", groups, seed=8)
    got = brc.partial_bytes(parquet.read_bytes(), stats=ALL).finish().with_statistics(ALL)
    assert got == brc.aggregate(parquet, stats=ALL)


def test_a_partial_s_bytes_show_the_statistics_as_brc_merge_does(tmp_path, cli):
    groups = groups_of("extremes", seed=4)
    path = write_text(tmp_path / "m.txt", groups, seed=4)
    data = cli.run("--stats", "median,stddev", "-f", "partial", path).stdout
    (tmp_path / "p").write_bytes(data)
    summary = brc.Summary.from_partial_bytes(data, stats="median,stddev")
    assert summary.format("csv") == cli.output(
        "merge", "--stats", "median,stddev", "-f", "csv", tmp_path / "p")
    assert rows_of(summary) == model(groups, ["median", "stddev"], 1, 1)
    summary = brc.Summary.from_partial_bytes(data, stats="median,stddev", decimals=2)
    assert rows_of(summary) == model(groups, ["median", "stddev"], 1, 2)
    # A run asking for a standard deviation keeps the squares, not the
    # counts per value: no quantile.
    with pytest.raises(ValueError, match="p99 needs .*counts per value"):
        brc.Summary.from_partial_bytes(cli.run("--stats", "stddev", "-f", "partial", path).stdout,
                                       stats="p99")
    # The package's partial is the command line's, byte for byte.
    assert bytes(brc.partial(path, stats="median,stddev")) == data


def test_summaries_pickle_with_their_statistics(tmp_path):
    path = write_text(tmp_path / "m.txt", groups_of("multi-byte names", seed=5), seed=5)
    for stats in ("median,p99", "stddev,count", "sum,max"):
        summary = brc.aggregate(path, stats=stats)
        back = pickle.loads(pickle.dumps(summary))
        assert back == summary and back.statistics == summary.statistics
        assert back.to_arrow().equals(summary.to_arrow())
    delimited = tmp_path / "a.csv"
    delimited.write_text("k,v\na,1.5\na,NA\nb,\na,-2\n")
    summary = brc.aggregate(delimited, csv=True, stats="median,stddev", decimals=3)
    assert pickle.loads(pickle.dumps(summary)) == summary


# --- Dask ------------------------------------------------------------------------

DASK_STATS = ["count", "median", "p99", "stddev", "stddev_pop", "p0.001", "sum"]


def test_dask_statistics_equal_a_single_run(client, tmp_path, cli):
    groups = groups_of("multi-byte names", seed=12)
    path = write_text(tmp_path / "m.txt", groups, seed=12)
    single = brc.aggregate(path, stats=DASK_STATS)
    for split in (500, 4000, "1MiB"):
        got = brc.dask.aggregate(str(path), split_bytes=split, client=client, stats=DASK_STATS)
        assert got == single
        assert got.statistics == DASK_STATS
        assert got.to_arrow().equals(single.to_arrow())
    assert got.format("csv") == cli.output("--stats", ",".join(DASK_STATS), "-f", "csv", path)
    assert rows_of(got) == model(groups, DASK_STATS, 1, 1)


def test_dask_statistics_of_csv_and_parquet_equal_a_single_run(client, tmp_path):
    groups = csv_groups(21, 2, 20, 3000)
    path = write_csv(tmp_path / "r.csv", groups, seed=21, scale=2)
    options = dict(csv=True, key="site", value="reading", stats="median,stddev,p90,count")
    for decimals in (None, 1):
        single = brc.aggregate(path, decimals=decimals, **options)
        got = brc.dask.aggregate(str(path), split_bytes=2000, client=client, decimals=decimals,
                                 **options)
        assert got == single and got.to_arrow().equals(single.to_arrow())
    parquet = write_parquet(tmp_path / "m.parquet", groups_of("extremes", seed=2), seed=2)
    single = brc.aggregate(parquet, stats=DASK_STATS)
    got = brc.dask.aggregate(str(parquet), split_bytes=1000, client=client, stats=DASK_STATS)
    assert got == single and got.to_arrow().equals(single.to_arrow())


def test_dask_statistics_of_ranges_fsspec_reads(client, tmp_path):
    groups = groups_of("multi-byte names", seed=13)
    path = write_text(tmp_path / "m.txt", groups, seed=13)
    single = brc.aggregate(path, stats=DASK_STATS)
    with RangeServer(tmp_path) as served:
        served.token = "secret"
        # Given storage options, fsspec reads each range: brc.partial_bytes.
        got = brc.dask.aggregate(f"{served.url}/m.txt", split_bytes=3000, client=client,
                                 stats=DASK_STATS,
                                 storage_options={"headers": {"Authorization": "Bearer secret"}})
    assert got == single


def test_dask_statistics_on_the_local_scheduler(tmp_path):
    groups = groups_of("extremes", seed=14)
    path = write_text(tmp_path / "m.txt", groups, seed=14)
    got = brc.dask.aggregate(str(path), split_bytes=997, stats=DASK_STATS)
    assert got == brc.aggregate(path, stats=DASK_STATS)
    assert rows_of(got) == model(groups, DASK_STATS, 1, 1)


def test_dask_statistics_of_an_empty_input(client, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    got = brc.dask.aggregate(str(empty), client=client, stats="median,stddev")
    assert got == brc.aggregate(empty, stats="median,stddev")
    assert got.to_arrow().column_names == ["station", "median", "stddev"]

"""Parquet files from Python: written by pyarrow as the One Trillion Row
Challenge writes them (`pandas.DataFrame({"station": ..., "measure":
...}).to_parquet(path)`, values rounded to one decimal), aggregated by
brc.aggregate, brc.partial, brc.partial_bytes and brc.dask.aggregate, and
compared with the same rows as `name;value` text lines; their errors as
brc.DataError, against the command line's."""

from __future__ import annotations

import glob
import pickle
import random
import shutil
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import brc
import brc.dask
from conftest import NAMES
from rangeserver import RangeServer


def rows(count: int, seed: int, *, stations: int = 40) -> tuple[list[str], list[float]]:
    """`count` random rows over about `stations` names (the awkward ones of
    conftest first), values rounded to one decimal within the text's ±99.9,
    reproducible by `seed`."""
    rng = random.Random(seed)
    names = NAMES + [
        "".join(rng.choice("abcdefghéöü東") for _ in range(rng.randint(1, 12)))
        for _ in range(max(0, stations - len(NAMES)))
    ]
    chosen = [rng.choice(names) for _ in range(count)]
    values = [round(rng.uniform(-99.9, 99.9), 1) + 0.0 for _ in range(count)]
    return chosen, values


def write_text(path: Path, names: list[str], values: list[float]) -> Path:
    """The rows as `name;value` lines."""
    path.write_text("".join(f"{n};{v:.1f}\n" for n, v in zip(names, values)), encoding="utf-8")
    return path


def write_parquet(path: Path, names: list, values: list, **kwargs) -> Path:
    """The rows as the One Trillion Row Challenge writes them (pyarrow, its
    defaults: dictionary-encoded, snappy-compressed), `kwargs` to pyarrow
    (`row_group_size`)."""
    pd.DataFrame({"station": names, "measure": values}).to_parquet(path, **kwargs)
    return path


def pair(tmp_path: Path, count: int, seed: int, **kwargs) -> tuple[Path, Path]:
    """The same random rows as a text file and as a Parquet file."""
    names, values = rows(count, seed)
    text = write_text(tmp_path / f"rows-{seed}.txt", names, values)
    parquet = write_parquet(tmp_path / f"rows-{seed}.parquet", names, values, **kwargs)
    return text, parquet


def cli_message(cli, *args) -> str:
    """What the command line prints for `args`, which it refuses, after
    `brc: `."""
    done = cli.run(*args)
    assert done.returncode == 1, done.stdout
    stderr = done.stderr.decode()
    assert stderr.startswith("brc: ") and stderr.endswith("\n")
    return stderr.removeprefix("brc: ").removesuffix("\n")


@pytest.mark.parametrize("engine", brc.ENGINES)
@pytest.mark.parametrize("threads", [1, 2, None])
def test_a_parquet_file_gives_what_its_rows_as_text_give(tmp_path, cli, engine, threads):
    # Several row groups, and rows of each name in many of them.
    text, parquet = pair(tmp_path, 20_000, seed=threads or 3, row_group_size=3000)
    assert pq.ParquetFile(parquet).num_row_groups == 7
    got = brc.aggregate(parquet, threads=threads, engine=engine)
    want = brc.aggregate(text, threads=threads, engine=engine)
    assert got == want
    assert got.to_arrow() == want.to_arrow()
    assert got.to_arrow().to_pylist() == want.to_arrow().to_pylist()
    for fmt in ("official", "json", "csv", "partial"):
        assert got.format(fmt) == want.format(fmt) == cli.output("--format", fmt, parquet), fmt


def test_the_file_s_name_does_not_matter_nor_its_writer_s_layout(tmp_path):
    names, values = rows(5000, seed=11)
    want = brc.aggregate(write_text(tmp_path / "rows.txt", names, values))
    table = pa.table({"station": names, "measure": values})
    layouts = {
        "plain.bin": {"use_dictionary": False, "compression": "none"},
        "zstd.txt": {"compression": "zstd", "row_group_size": 777},
        "v1-gzip": {"data_page_version": "1.0", "compression": "gzip"},
    }
    for name, options in layouts.items():
        pq.write_table(table, tmp_path / name, **options)
        assert brc.aggregate(tmp_path / name) == want, name


def test_parquet_and_text_files_mix_in_any_order_and_in_directories(tmp_path, cli):
    text_a, parquet_a = pair(tmp_path, 3000, seed=21)
    text_b, parquet_b = pair(tmp_path, 4000, seed=22, row_group_size=1000)
    want = brc.aggregate([text_a, text_b])
    assert want != brc.aggregate(text_a)
    for paths in ([text_a, parquet_b], [parquet_a, text_b], [parquet_b, text_a],
                  [parquet_a, parquet_b]):
        got = brc.aggregate(paths, threads=2)
        assert got == want, paths
        assert got.format("official") == cli.output(*paths)
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    shutil.copy(text_a, mixed / "a.txt")
    shutil.copy(parquet_b, mixed / "b.parquet")
    assert brc.aggregate(mixed) == want


def test_the_columns_keyword_picks_the_name_and_value_columns(tmp_path, cli):
    names, values = rows(3000, seed=31)
    want = brc.aggregate(write_text(tmp_path / "rows.txt", names, values))
    path = tmp_path / "renamed.parquet"
    # Other columns beside them, and a `station` column that is not the names.
    pd.DataFrame({
        "id": range(len(names)), "station": ["x"] * len(names), "city": names, "temp": values,
    }).to_parquet(path)
    got = brc.aggregate(path, columns=("city", "temp"))
    assert got == want
    assert got.format("official") == cli.output("--columns", "city,temp", path)
    assert brc.aggregate([path], columns=["city", "temp"]) == want
    # A text file's lines are the same whatever the columns.
    text = tmp_path / "rows.txt"
    assert brc.aggregate([path, text], columns=("city", "temp")) == brc.aggregate([text, text])
    with pytest.raises(brc.DataError, match="expected a column named `measure`"):
        brc.aggregate(path)
    assert brc.partial(path, columns=("city", "temp")).finish() == want
    assert brc.partial_bytes(path.read_bytes(), columns=("city", "temp")).finish() == want


@pytest.mark.parametrize(
    "columns", ["city,temp", ("city",), ("city", "temp", "x"), ("city", 1), ("", "temp"),
                None, {"city": "temp"}],
)
def test_columns_other_than_two_names_are_value_errors(tmp_path, columns):
    _, parquet = pair(tmp_path, 10, seed=1)
    for call in (
        lambda: brc.aggregate(parquet, columns=columns),
        lambda: brc.partial(parquet, columns=columns),
        lambda: brc.partial_bytes(parquet.read_bytes(), columns=columns),
        lambda: brc.dask.aggregate(parquet, columns=columns),
    ):
        with pytest.raises(ValueError, match="columns must be two column names") as caught:
            call()
        assert not isinstance(caught.value, brc.DataError)


def test_values_beyond_the_text_s_range_are_exact_and_valid_arrow(tmp_path, cli):
    path = write_parquet(tmp_path / "wide.parquet", ["a", "b", "a", "b"],
                         [12345.6, -99999999.9, 99999999.9, 0.1])
    summary = brc.aggregate(path)
    assert str(summary) + "\n" == cli.output(path)
    assert str(summary) == "{a=12345.6/50006172.8/99999999.9, b=-99999999.9/-49999999.9/0.1}"
    table = summary.to_arrow()
    table.validate(full=True)
    assert table.schema.field("max").type == pa.decimal128(9, 1)
    assert table.column("max").to_pylist() == [Decimal("99999999.9"), Decimal("0.1")]
    assert summary.to_pandas()["mean"].tolist() == [Decimal("50006172.8"), Decimal("-49999999.9")]
    # The text's values keep the text's schema.
    text = brc.aggregate(write_text(tmp_path / "narrow.txt", ["a"], [-99.9]))
    assert text.to_arrow().schema.field("min").type == pa.decimal128(3, 1)


def test_a_value_that_is_no_number_of_tenths_is_a_data_error_naming_its_row(tmp_path, cli):
    names, values = rows(2500, seed=41)
    values[1000 + 7] = 12.34
    values[2200] = 45.67
    path = write_parquet(tmp_path / "bad.parquet", names, values, row_group_size=1000)
    with pytest.raises(brc.DataError) as caught:
        brc.aggregate(path, threads=2)
    error = caught.value
    assert isinstance(error, ValueError)
    assert str(error) == cli_message(cli, path) == (
        f"{path}: row group 1, row 7: expected a number of tenths within ±99999999.9"
        " in column `measure`, found 12.34")
    assert (error.path, error.row_group, error.row, error.line, error.offset) == (
        str(path), 1, 7, None, None)
    assert error.reason == ("expected a number of tenths within ±99999999.9 in column"
                            " `measure`, found 12.34")
    # It crosses process boundaries (Dask) whole.
    again = pickle.loads(pickle.dumps(error))
    assert (type(again), str(again), again.__dict__) == (type(error), str(error), error.__dict__)
    # Among text files, the first failure in the paths' order wins.
    good = write_text(tmp_path / "good.txt", names[:10], values[:10])
    bad_text = tmp_path / "bad.txt"
    bad_text.write_text("a;1.0\nb;12.34\n")
    with pytest.raises(brc.DataError) as caught:
        brc.aggregate([good, path, bad_text])
    assert caught.value.row_group == 1
    with pytest.raises(brc.DataError) as caught:
        brc.aggregate([bad_text, path])
    assert (caught.value.line, caught.value.row_group) == (2, None)
    # The same from bytes, named as bytes are.
    with pytest.raises(brc.DataError) as caught:
        brc.partial_bytes(path.read_bytes())
    assert str(caught.value) == f"<bytes>: row group 1, row 7: {error.reason}"
    assert (caught.value.path, caught.value.row_group, caught.value.row) == ("<bytes>", 1, 7)


@pytest.mark.parametrize("column", ["station", "measure"])
def test_a_null_is_a_data_error_naming_its_row(tmp_path, cli, column):
    names, values = rows(100, seed=51)
    cells = {"station": list(names), "measure": list(values)}
    cells[column][42] = None
    path = tmp_path / "null.parquet"
    pd.DataFrame(cells).to_parquet(path)
    with pytest.raises(brc.DataError) as caught:
        brc.aggregate(path)
    error = caught.value
    assert str(error) == cli_message(cli, path) == (
        f"{path}: row group 0, row 42: expected a value in column `{column}`, found null")
    assert (error.row_group, error.row, error.line) == (0, 42, None)


def test_file_errors_are_data_errors_without_a_row(tmp_path, cli):
    missing = tmp_path / "missing-column.parquet"
    pd.DataFrame({"city": ["a"], "temp": [1.0], "id": [7]}).to_parquet(missing)
    typed = tmp_path / "typed.parquet"
    pd.DataFrame({"station": ["a"], "measure": [True]}).to_parquet(typed)
    damaged = tmp_path / "damaged.parquet"
    damaged.write_bytes(b"PAR1" + b"\0" * 20 + b"PAR1")
    reasons = {
        missing: "expected a column named `station`, found columns `city`, `temp`, `id`",
        typed: "column `measure` is ",
        damaged: "malformed Parquet: ",
    }
    for path, reason in reasons.items():
        with pytest.raises(brc.DataError) as caught:
            brc.aggregate(path)
        error = caught.value
        assert str(error) == cli_message(cli, path) == f"{path}: {error.reason}"
        assert error.reason.startswith(reason), error.reason
        assert (error.path, error.line, error.offset, error.row_group, error.row) == (
            str(path), None, None, None, None)
        with pytest.raises(brc.DataError) as caught:
            brc.partial(path)
        assert str(caught.value) == str(error)


def test_ranges_of_a_parquet_file_merge_into_the_whole(tmp_path, cli):
    text, parquet = pair(tmp_path, 10_000, seed=61, row_group_size=900)
    size = parquet.stat().st_size
    whole = brc.partial(parquet)
    assert whole == brc.partial(text)
    assert bytes(whole) == cli.output("--format", "partial", parquet).encode()
    for n in (2, 5, 40, size):
        cuts = [k * size // n for k in range(n + 1)]
        parts = [brc.partial(parquet, start=a, end=b) for a, b in zip(cuts, cuts[1:])]
        # Each row group is read by one range only.
        assert sum(1 for p in parts if len(p)) <= 12
        assert brc.merge(parts) == whole, n
    assert brc.partial_bytes(parquet.read_bytes(), threads=2) == whole



def test_dask_over_a_glob_of_parquet_files_equals_one_process(client, tmp_path, cli):
    data = tmp_path / "data"
    data.mkdir()
    texts = []
    for k in range(3):
        text, _ = pair(data, 6000 + 1000 * k, seed=70 + k, row_group_size=2000)
        texts.append(text)
    files = sorted(glob.glob(str(data / "*.parquet")))
    assert len(files) == 3
    want = brc.aggregate(files)
    assert want == brc.aggregate(texts)
    for split in ("256MiB", 5000, 1000):
        got = brc.dask.aggregate(str(data / "*.parquet"), split_bytes=split, client=client)
        assert got == want, split
        assert got.format("official") == cli.output(*files)
    with client.as_current():
        # A directory of text and Parquet files, on the current client.
        assert brc.dask.aggregate(data, split_bytes=3000) == brc.aggregate(texts + texts)
    # Dask's local scheduler, without a client.
    assert brc.dask.aggregate([texts[0], files[1]], split_bytes=777) == brc.aggregate(
        [texts[0], texts[1]])


def test_dask_columns_and_errors_name_the_file_as_given(client, tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    names, values = rows(4000, seed=81)

    def write(k: int) -> None:
        pd.DataFrame({"city": names, "temp": values}).to_parquet(
            tmp_path / "data" / f"part-{k}.parquet", row_group_size=700)

    for k in range(3):
        write(k)
    want = brc.aggregate(sorted(glob.glob("data/*.parquet")), columns=("city", "temp"))
    got = brc.dask.aggregate("data/*.parquet", columns=("city", "temp"), client=client,
                             split_bytes=4000)
    assert got == want
    # Without the columns: the first file's error, named as a shell names it.
    with pytest.raises(brc.DataError) as caught:
        brc.dask.aggregate("data/*.parquet", client=client, split_bytes=4000)
    error = caught.value
    assert str(error) == cli_message(cli, *sorted(glob.glob("data/*.parquet")))
    assert (error.path, error.row_group, error.line) == ("data/part-0.parquet", None, None)

    # The first refused row, in argument order, then in the file: row
    # groups 2 and 4 of the second file, in tasks of their own.
    values[2 * 700 + 5] = 0.05
    values[4 * 700 + 1] = float("nan")
    write(1)
    args = sorted(glob.glob("data/*.parquet"))
    message = cli_message(cli, "--columns", "city,temp", *args)
    for split in (1500, "256MiB"):
        with pytest.raises(brc.DataError) as caught:
            brc.dask.aggregate("./data/*.parquet", columns=("city", "temp"), client=client,
                               split_bytes=split)
        error = caught.value
        assert str(error) == "./" + message, split
        assert (error.path, error.row_group, error.row, error.line, error.offset) == (
            "./data/part-1.parquet", 2, 5, None, None)


def test_dask_reads_parquet_files_over_http(client, tmp_path):
    text, parquet = pair(tmp_path, 8000, seed=91, row_group_size=1000)
    names, values = rows(50, seed=92)
    values[3] = 1.23
    write_parquet(tmp_path / "bad.parquet", names, values)
    with RangeServer(tmp_path) as served:
        urls = [f"{served.url}/{text.name}", f"{served.url}/{parquet.name}"]
        for split in (3000, "256MiB"):
            got = brc.dask.aggregate(urls, split_bytes=split, client=client)
            assert got == brc.aggregate([text, text]), split
        bad = f"{served.url}/bad.parquet"
        with pytest.raises(brc.DataError) as caught:
            brc.dask.aggregate([urls[1], bad], client=client)
    error = caught.value
    assert (error.path, error.row_group, error.row) == (bad, 0, 3)
    assert str(error) == (f"{bad}: row group 0, row 3: expected a number of tenths within"
                          " ±99999999.9 in column `measure`, found 1.23")

"""brc.aggregate and brc.Summary against the command line and the official
samples."""

from __future__ import annotations

import faulthandler
import gzip
import os
import pickle
import threading
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

import brc
from conftest import COMPRESSED, SAMPLES

OFFICIAL = sorted(SAMPLES.glob("*.txt"))


@pytest.mark.parametrize("sample", OFFICIAL, ids=lambda p: p.stem)
def test_official_samples(sample: Path):
    expected = sample.with_suffix(".out").read_text(encoding="utf-8")
    summary = brc.aggregate(sample)
    assert str(summary) + "\n" == expected
    assert summary.format("official") == expected


@pytest.mark.parametrize("engine", brc.ENGINES)
@pytest.mark.parametrize("threads", [1, 2, None])
def test_random_files_equal_the_cli_in_every_format(random_file, cli, engine, threads):
    path = random_file(5000, seed=threads or 0, final_newline=threads != 2)
    summary = brc.aggregate(str(path), threads=threads, engine=engine)
    for fmt in ("official", "lines", "json", "csv", "partial"):
        assert summary.format(fmt) == cli.output("--format", fmt, path), fmt


def test_many_paths_and_a_directory_equal_the_files_glued(tmp_path, random_file, cli):
    files = [random_file(700, seed=s, final_newline=False) for s in range(3)]
    glued = tmp_path / "glued.txt"
    glued.write_bytes(b"\n".join(f.read_bytes() for f in files) + b"\n")
    want = cli.output(glued)
    assert brc.aggregate(files).format("official") == want
    inside = tmp_path / "dir"
    inside.mkdir()
    for f in files:
        os.rename(f, inside / f.name)
    (inside / ".hidden").write_text("not;a line\n")
    (inside / "sub").mkdir()
    assert brc.aggregate(inside).format("official") == want
    assert brc.aggregate([inside, glued]) != brc.aggregate(glued)


def test_compressed_files_equal_their_plain_sample():
    for packed in sorted(COMPRESSED.glob("*.txt.*")):
        plain = SAMPLES / ("measurements-" + packed.name.split(".txt")[0] + ".txt")
        assert brc.aggregate(packed) == brc.aggregate(plain), packed.name


def test_summary_is_sized_and_compared():
    a = brc.aggregate(SAMPLES / "measurements-10.txt")
    assert len(a) == 10
    assert a == brc.aggregate(SAMPLES / "measurements-10.txt", engine="naive")
    assert a != brc.aggregate(SAMPLES / "measurements-20.txt")
    assert a != "something else"
    assert repr(a) == "<brc.Summary of 10 stations>"
    assert str(brc.aggregate(SAMPLES / "measurements-1.txt")) == "{Kunming=19.8/19.8/19.8}"


def test_summaries_pickle_whole(random_file, cli):
    path = random_file(2000, seed=8)
    summary = brc.aggregate(path)
    again = pickle.loads(pickle.dumps(summary))
    assert again == summary
    assert again.format("partial") == cli.output("--format", "partial", path)


def test_arrow_schema_and_values_equal_the_cli_csv(random_file, cli):
    path = random_file(3000, seed=7)
    table = brc.aggregate(path).to_arrow()
    tenths = pa.decimal128(3, 1)
    assert table.schema == pa.schema(
        [
            pa.field("station", pa.string(), nullable=False),
            pa.field("min", tenths, nullable=False),
            pa.field("mean", tenths, nullable=False),
            pa.field("max", tenths, nullable=False),
            pa.field("count", pa.int64(), nullable=False),
        ]
    )
    import csv
    import io

    rows = list(csv.reader(io.StringIO(cli.output("--format", "csv", path))))
    assert rows[0] == table.column_names
    want = [
        {"station": r[0], "min": Decimal(r[1]), "mean": Decimal(r[2]),
         "max": Decimal(r[3]), "count": int(r[4])}
        for r in rows[1:]
    ]
    assert table.to_pylist() == want


def test_polars_and_pandas_hold_the_arrow_columns():
    summary = brc.aggregate(SAMPLES / "measurements-rounding.txt")
    table = summary.to_arrow()
    frame = summary.to_polars()
    assert frame.to_arrow().cast(table.schema) == table
    pandas = summary.to_pandas()
    assert list(pandas.columns) == table.column_names
    assert str(pandas["mean"].dtype) == "decimal128(3, 1)[pyarrow]"
    assert pa.Table.from_pandas(pandas, preserve_index=False).cast(table.schema) == table


def test_an_empty_input_gives_an_empty_table(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    summary = brc.aggregate(empty)
    assert str(summary) == "{}"
    assert summary.to_arrow().num_rows == 0


BAD = [
    b"a;1.0\nb;x\n",
    b"a;1.0\n\nb;2.0\n",
    b"a;1.0\n;2.0\n",
    b"ok;1.0\nno semicolon here\n",
    b"a;1.0\n" + b"n" * 101 + b";1.0\n",
    b"a;1.0\nb\xff;1.0\n",
]


@pytest.mark.parametrize("engine", brc.ENGINES)
@pytest.mark.parametrize("content", BAD, ids=range(len(BAD)))
def test_errors_carry_path_line_and_the_cli_message(tmp_path, cli, engine, content):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"x;1.0\n" * 1000 + content)
    done = cli.run("--engine", engine, path)
    assert done.returncode == 1
    with pytest.raises(brc.DataError) as caught:
        brc.aggregate(path, engine=engine, threads=2)
    error = caught.value
    assert isinstance(error, ValueError)
    assert done.stderr.decode() == f"brc: {error}\n"
    assert error.path == str(path)
    data = path.read_bytes()
    assert data[error.offset - 1] == ord("\n")
    assert error.line == data[: error.offset].count(b"\n") + 1 > 1000
    # It crosses process boundaries (Dask) whole.
    again = pickle.loads(pickle.dumps(error))
    assert (type(again), str(again), again.path, again.line) == (
        brc.DataError, str(error), error.path, error.line)


def test_io_errors_are_oserrors(tmp_path):
    with pytest.raises(FileNotFoundError) as caught:
        brc.aggregate(tmp_path / "missing.txt")
    assert caught.value.filename == str(tmp_path / "missing.txt")
    corrupt = tmp_path / "corrupt.gz"
    corrupt.write_bytes(gzip.compress(b"a;1.0\n" * 1000)[:-30])
    with pytest.raises(OSError) as caught:
        brc.aggregate(corrupt)
    assert caught.value.filename == str(corrupt)
    assert not isinstance(caught.value, brc.DataError)


def test_an_io_error_without_errno_says_why_as_the_cli(tmp_path, cli):
    corrupt = tmp_path / "corrupt.gz"
    corrupt.write_bytes(gzip.compress(b"a;1.0\n" * 1000)[:-30])
    done = cli.run(corrupt)
    assert done.returncode == 1
    with pytest.raises(OSError) as caught:
        brc.aggregate(corrupt)
    error = caught.value
    assert (error.errno, error.filename) == (None, str(corrupt))
    # The reason the command line prints after the path.
    assert done.stderr.decode() == f"brc: {corrupt}: {error.strerror}\n"
    assert str(error) == f"[Errno None] {error.strerror}: {str(corrupt)!r}"
    again = pickle.loads(pickle.dumps(error))
    assert (type(again), str(again)) == (OSError, str(error))


def test_bad_arguments_are_value_errors(tmp_path):
    path = SAMPLES / "measurements-1.txt"
    with pytest.raises(ValueError, match="unknown engine"):
        brc.aggregate(path, engine="warp")
    with pytest.raises(ValueError, match="at least 1"):
        brc.aggregate(path, threads=0)
    with pytest.raises(ValueError, match="unknown format"):
        brc.aggregate(path).format("xml")


def test_thread_counts_past_the_cli_limit_are_value_errors(cli, capfd):
    """The command line's `--threads` bound (1..=1024) holds for every
    function that takes `threads`, checked before any thread is spawned:
    a million would be spawned until the system refused, a panic printed."""
    path = SAMPLES / "measurements-1.txt"
    assert "1..=1024" in cli.run("--threads", "1025", path).stderr.decode()
    assert str(brc.aggregate(path, threads=1024)) == "{Kunming=19.8/19.8/19.8}"
    message = "threads must be at least 1 and at most 1024, found {}"
    # 1025 first: were it allowed, so would be the rest, at worst a million.
    for threads in (1025, 10**6, 2**64, -1):
        for call in (
            lambda: brc.aggregate(path, threads=threads),
            lambda: brc.partial(path, threads=threads),
            lambda: brc.partial_bytes(b"a;1.0\n", threads=threads),
        ):
            with pytest.raises(ValueError) as caught:
                call()
            assert str(caught.value) == message.format(threads)
    assert capfd.readouterr().err == ""


def test_the_gil_is_released_while_aggregating(tmp_path):
    """brc.aggregate reads a FIFO that only this (main) Python thread
    writes: it can finish only if it lets this thread run meanwhile. Were
    the GIL held, both threads would wait for ever: faulthandler's watchdog,
    a C thread that needs no GIL, then ends the test run with a failure and
    the threads' stacks."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    faulthandler.dump_traceback_later(120, exit=True)
    try:
        result = {}
        reader = threading.Thread(
            target=lambda: result.setdefault("summary", brc.aggregate(fifo, threads=1))
        )
        reader.start()
        with open(fifo, "wb") as w:
            for _ in range(100):
                w.write(b"python;2.5\n" * 1000)
        reader.join()
    finally:
        faulthandler.cancel_dump_traceback_later()
    assert str(result["summary"]) == "{python=2.5/2.5/2.5}"
    assert result["summary"].to_arrow()["count"].to_pylist() == [100_000]

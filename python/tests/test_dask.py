"""brc.dask.aggregate on a real distributed.LocalCluster (2 worker
processes) and a real HTTP server with Range support, against the command
line, byte for byte."""

from __future__ import annotations

import glob
import gzip
import os
import shutil
import signal
import threading

import pytest
import zstandard

import brc
import brc.dask
from conftest import SAMPLES, write_random
from rangeserver import RangeServer



@pytest.fixture
def served(tmp_path):
    with RangeServer(tmp_path) as server:
        yield server


def glued(tmp_path, files, cli) -> str:
    """What the command line prints for `files` read one after the other."""
    whole = tmp_path / "glued.all"
    with open(whole, "wb") as out:
        for f in files:
            data = gzip.decompress(f.read_bytes()) if f.suffix == ".gz" else (
                zstandard.ZstdDecompressor().decompressobj().decompress(f.read_bytes())
                if f.suffix == ".zst" else f.read_bytes())
            out.write(data if data.endswith(b"\n") or not data else data + b"\n")
    return cli.output(whole)


@pytest.mark.parametrize("split", [1, 5, 64, 1000, "1MiB"])
def test_every_split_size_equals_the_cli(client, random_file, cli, split):
    # Tasks of a byte or a few: a short file keeps their number a few hundred.
    rows = {1: 25, 5: 100, 64: 1500}.get(split, 5000)
    path = random_file(rows, seed=len(str(split)) + rows)
    summary = brc.dask.aggregate(str(path), split_bytes=split, client=client)
    assert summary.format("official") == cli.output(path)


def test_splits_inside_multibyte_names_equal_the_cli(client, tmp_path, cli):
    path = tmp_path / "utf8.txt"
    path.write_text("東京;1.0\n🌡️ probe;-2.5\nZürich;3.3\n" * 40, encoding="utf-8")
    data = path.read_bytes()
    size, split = len(data), 7
    n = -(-size // split)
    starts = [k * size // n for k in range(1, n)]
    # Some ranges start inside a character (a UTF-8 continuation byte).
    assert any(0x80 <= data[s] < 0xC0 for s in starts)
    summary = brc.dask.aggregate(path, split_bytes=split, client=client)
    assert summary.format("official") == cli.output(path)


def test_plain_gzip_and_zstd_files_mix(client, tmp_path, cli):
    plain = write_random(tmp_path / "a.txt", 3000, seed=1, final_newline=False)
    packed_gz = tmp_path / "b.txt.gz"
    packed_gz.write_bytes(gzip.compress(write_random(tmp_path / "b", 2000, seed=2).read_bytes()))
    packed_zst = tmp_path / "c.txt.zst"
    packed_zst.write_bytes(
        zstandard.ZstdCompressor().compress(write_random(tmp_path / "c", 2500, seed=3).read_bytes()))
    files = [plain, packed_gz, packed_zst]
    want = glued(tmp_path, files, cli)
    for split in (100, "256MiB"):
        summary = brc.dask.aggregate(files, split_bytes=split, client=client)
        assert summary.format("official") == want


def test_globs_directories_and_the_current_client(client, tmp_path, cli):
    data = tmp_path / "data"
    data.mkdir()
    files = [write_random(data / f"part-{k}.txt", 800, seed=10 + k) for k in range(3)]
    (data / ".hidden.txt").write_text("not a line\n")
    want = glued(tmp_path, files, cli)
    with client.as_current():
        assert brc.dask.aggregate(str(data / "part-*.txt"), split_bytes=500).format("official") == want
        assert brc.dask.aggregate(data, split_bytes=2000).format("official") == want
        assert brc.dask.aggregate("file://" + str(data), split_bytes=2000).format("official") == want


def test_the_local_scheduler_without_a_client(random_file, cli):
    path = random_file(4000, seed=5)
    assert brc.dask.aggregate(path, split_bytes=999).format("official") == cli.output(path)


def test_official_samples_over_http(client, served, tmp_path):
    names = [p.name for p in sorted(SAMPLES.glob("*.txt"))]
    for name in names:
        shutil.copy(SAMPLES / name, tmp_path / name)
    for name in names:
        want = (SAMPLES / name).with_suffix(".out").read_text(encoding="utf-8")
        # Down to 3 bytes, in at most about 50 tasks.
        for split in (max(3, (SAMPLES / name).stat().st_size // 50), "1MiB"):
            summary = brc.dask.aggregate(f"{served.url}/{name}", split_bytes=split, client=client)
            assert summary.format("official") == want, (name, split)


def test_random_and_compressed_files_over_http(client, served, tmp_path, cli):
    plain = write_random(tmp_path / "a.txt", 4000, seed=21, final_newline=False)
    packed = tmp_path / "b.txt.gz"
    packed.write_bytes(gzip.compress(write_random(tmp_path / "b", 1500, seed=22).read_bytes()))
    want = glued(tmp_path, [plain, packed], cli)
    urls = [f"{served.url}/a.txt", f"{served.url}/b.txt.gz"]
    for split in (1, 333, "1MiB"):
        if split == 1:
            # One task per byte: a smaller file keeps it short.
            small = write_random(tmp_path / "s.txt", 25, seed=23)
            got = brc.dask.aggregate(f"{served.url}/s.txt", split_bytes=1, client=client)
            assert got.format("official") == cli.output(small)
            continue
        got = brc.dask.aggregate(urls, split_bytes=split, client=client)
        assert got.format("official") == want


def test_storage_options_reach_the_filesystem(client, served, tmp_path, cli):
    path = write_random(tmp_path / "a.txt", 1000, seed=51)
    served.token = "secret"
    url = f"{served.url}/a.txt"
    # fsspec's own error for the refusal passes through.
    with pytest.raises(Exception, match="403"):
        brc.dask.aggregate(url, split_bytes=3000, client=client)
    got = brc.dask.aggregate(url, split_bytes=3000, client=client,
                             storage_options={"headers": {"Authorization": "Bearer secret"}})
    assert got.format("official") == cli.output(path)


def test_errors_name_the_file_and_line_as_the_cli(client, served, tmp_path, cli):
    good = write_random(tmp_path / "a.txt", 500, seed=31)
    bad = tmp_path / "b.txt"
    bad.write_bytes(write_random(tmp_path / "b0", 700, seed=32).read_bytes()
                    + b"Oslo;1.0\nOslo;12.34\n" + b"Oslo;1.0\nRiga\n" * 50)
    done = cli.run(bad)
    assert done.returncode == 1
    for urls in ([good, bad], [f"{served.url}/a.txt", f"{served.url}/b.txt"]):
        for split in (97, "1MiB"):
            with pytest.raises(brc.DataError) as caught:
                brc.dask.aggregate(urls, split_bytes=split, client=client)
            error = caught.value
            assert error.line == 702
            message = done.stderr.decode().removeprefix(f"brc: {bad}: ")
            assert str(error) == f"{error.path}: {message}".rstrip("\n")
            assert error.path.endswith("b.txt")
    with pytest.raises(FileNotFoundError):
        brc.dask.aggregate([good, tmp_path / "missing.txt"], client=client)


def test_a_glob_that_matches_nothing_is_a_missing_file_as_for_the_cli(
        tmp_path, cli, monkeypatch):
    """A shell hands the command line a pattern that matches nothing as it
    is, and brc finds no such file; brc.aggregate, which takes no globs,
    says the same of it."""
    monkeypatch.chdir(tmp_path)
    good = write_random(tmp_path / "good.txt", 100, seed=61)
    for pattern in (str(tmp_path / "missing*.txt"), "missing*.txt", "nowhere/*.txt",
                    "good.tx[!t]"):
        with pytest.raises(FileNotFoundError) as caught:
            brc.aggregate(pattern)
        error = caught.value
        assert cli.run(pattern).stderr.decode() == (
            f"brc: {pattern}: {error.strerror} (os error {error.errno})\n")
        for urlpaths in (pattern, [good, pattern], [pattern, good]):
            with pytest.raises(FileNotFoundError) as caught:
                brc.dask.aggregate(urlpaths)
            assert (str(caught.value), caught.value.filename) == (str(error), pattern)


def test_an_empty_directory_is_an_empty_input_as_for_the_cli(tmp_path, cli):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / ".hidden.txt").write_text("a;1.0\n")
    assert str(brc.dask.aggregate(empty)) + "\n" == cli.output(empty) == "{}\n"


def test_errors_name_paths_as_given_as_the_cli(client, tmp_path, cli, monkeypatch):
    """Local paths are handed to the workers absolute, but errors name them
    as the caller wrote them, as the command line does: a glob's matches
    as a shell spells them, a directory's files after its spelling."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    write_random(tmp_path / "data" / "a.txt", 300, seed=71)
    (tmp_path / "data" / "b.txt").write_bytes(
        write_random(tmp_path / "b0", 400, seed=72).read_bytes() + b"Oslo;12.34\n")
    # What a shell hands the command line for each.
    cases = [
        (["data/b.txt"], ["data/b.txt"]),
        (["data/a.txt", "./data/b.txt"], ["data/a.txt", "./data/b.txt"]),
        (["data/*.txt"], sorted(glob.glob("data/*.txt"))),
        (["./d*/[ab].txt"], sorted(glob.glob("./d*/[ab].txt"))),
        (["data"], ["data"]),
        (["./data/"], ["./data/"]),
        ([str(tmp_path / "data")], [str(tmp_path / "data")]),
    ]
    for urlpaths, args in cases:
        done = cli.run(*args)
        assert done.returncode == 1
        for split in (97, "1MiB"):
            with pytest.raises(brc.DataError) as caught:
                brc.dask.aggregate(urlpaths, split_bytes=split, client=client)
            assert f"brc: {caught.value}\n" == done.stderr.decode(), (urlpaths, split)
            assert str(caught.value).startswith(f"{caught.value.path}: line 401: ")

    (tmp_path / "packed").mkdir()
    packed = tmp_path / "packed" / "c.txt.gz"
    packed.write_bytes(gzip.compress(b"a;1.0\n" * 1000)[:-30])
    for path in ("packed/c.txt.gz", "data/missing.txt"):
        with pytest.raises(OSError) as caught:
            brc.aggregate(path)
        want = caught.value
        assert cli.run(path).stderr.decode().startswith(f"brc: {path}: {want.strerror}")
        with pytest.raises(OSError) as caught:
            brc.dask.aggregate(["data/a.txt", path], client=client)
        error = caught.value
        assert (type(error), str(error), error.filename) == (type(want), str(want), path)


def test_a_worker_killed_mid_job_still_gives_the_exact_answer(client, served, tmp_path, cli):
    path = write_random(tmp_path / "big.txt", 20_000, seed=41)
    served.gate.clear()
    result = {}

    def run():
        try:
            result["summary"] = brc.dask.aggregate(
                f"{served.url}/big.txt", split_bytes=20_000, client=client)
        except BaseException as e:  # reported below
            result["error"] = e

    runner = threading.Thread(target=run)
    runner.start()
    try:
        # Both workers are inside a task, each holding a range request.
        for _ in range(2):
            assert served.waiting.acquire(timeout=120)
        pids = client.run(os.getpid)
        victim = sorted(pids)[0]
        os.kill(pids[victim], signal.SIGKILL)
    finally:
        served.gate.set()
        runner.join(timeout=300)
    assert "error" not in result, result.get("error")
    assert result["summary"].format("official") == cli.output(path)
    # One worker did die (its nanny started another in its place).
    client.wait_for_workers(2, timeout=120)
    assert pids[victim] not in client.run(os.getpid).values()

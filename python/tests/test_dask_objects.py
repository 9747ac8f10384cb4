"""brc.dask.aggregate over `s3://` on a real distributed.LocalCluster (2
worker processes) reading from moto's S3 server: Parquet objects in the One
Trillion Row Challenge's layout, read by brc itself in the tasks (the
workers' AWS_* environment) or through fsspec (`storage_options`), against
brc.aggregate of the same files on local disk."""

from __future__ import annotations

import gzip
import os

import fsspec
import pytest
from distributed import Client, LocalCluster

import brc
import brc.dask
from conftest import write_random
from objectstores import MotoServer, free_port
from test_objects import write_1trc

BUCKET = "brc-dask"


@pytest.fixture(scope="module")
def local(moto: MotoServer, tmp_path_factory):
    """The files, on local disk and at the same keys in the bucket: four
    1TRC-layout Parquet files under `1trc/` (a hidden one too), text
    beside them under `mixed/`."""
    root = tmp_path_factory.mktemp("dask-objects")
    (root / "1trc" / ".staging").mkdir(parents=True)
    (root / "mixed").mkdir()
    for k in range(4):
        write_1trc(root / "1trc" / f"measurements-{k}.parquet", 5000 + 1000 * k, seed=100 + k,
                   row_group_size=1200)
    # Hidden: not a measurements file at all, so that reading it fails.
    (root / "1trc" / ".staging" / "measurements-9.parquet").write_bytes(b"PAR1 partial PAR1")
    write_random(root / "mixed" / "a.txt", 3000, seed=110)
    (root / "mixed" / "b.txt.gz").write_bytes(
        gzip.compress(write_random(root / "b", 2000, seed=111).read_bytes()))
    (root / "mixed" / "c.parquet").write_bytes(
        (root / "1trc" / "measurements-1.parquet").read_bytes())
    moto.upload(BUCKET, {p.relative_to(root).as_posix(): p
                         for p in sorted(root.rglob("*")) if p.is_file() and p.parent != root})
    return root


@pytest.fixture(scope="module")
def client(moto: MotoServer):
    # The workers' own environment carries the store's settings, as a
    # cluster's machines would (their role, or variables set for them).
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, env=moto.env()) as cluster, \
            Client(cluster, set_as_default=False) as client:
        yield client


@pytest.fixture
def client_env(moto: MotoServer, monkeypatch):
    """The client's environment, for fsspec's listing (s3fs reads the same
    variables)."""
    for name in [n for n in os.environ if n.startswith("AWS_")]:
        monkeypatch.delenv(name)
    for name, value in moto.env().items():
        monkeypatch.setenv(name, value)


def parquet_files(local) -> list:
    return sorted((local / "1trc").glob("*.parquet"))


def test_a_glob_and_a_prefix_of_parquet_objects_equal_local_reads(client, local, client_env):
    want = brc.aggregate(parquet_files(local))
    for split in ("256MiB", 20_000, 5_000):
        got = brc.dask.aggregate(f"s3://{BUCKET}/1trc/*.parquet", split_bytes=split,
                                 client=client)
        assert got == want, split
        assert got.format("official") == want.format("official")
    # A prefix: every object under it, the hidden one skipped, as for the
    # command line.
    assert brc.dask.aggregate(f"s3://{BUCKET}/1trc/", split_bytes=8_000, client=client) == want


def test_brc_reads_parquet_objects_by_row_groups_in_the_tasks(local, client_env):
    """The tasks for Parquet objects name the object for brc, a range each,
    as for a local file: not a whole-object fetch through fsspec."""
    fs, _, paths = fsspec.get_fs_token_paths([f"s3://{BUCKET}/1trc/measurements-0.parquet"])
    files = brc.dask._expand(fs, [f"s3://{BUCKET}/1trc/measurements-0.parquet"], paths)
    pieces = list(brc.dask._pieces(fs, files, 4_000, brc_reads_objects=True))
    size = (local / "1trc" / "measurements-0.parquet").stat().st_size
    assert len(pieces) == -(-size // 4_000) > 1
    assert {p.url for p in pieces} == {f"s3://{BUCKET}/1trc/measurements-0.parquet"}
    parts = [brc.partial(p.url, start=p.start, end=p.end) for p in pieces]
    assert sum(1 for p in parts if len(p)) > 1
    assert brc.merge(parts) == brc.partial(local / "1trc" / "measurements-0.parquet")
    # With fsspec's options (which brc cannot be handed), fsspec reads.
    fetched = list(brc.dask._pieces(fs, files, 4_000, brc_reads_objects=False))
    assert [(p.url, p.end) for p in fetched] == [(None, None)]


def test_brc_reads_text_objects_by_ranges_in_the_tasks(local, client_env):
    """The tasks for an uncompressed text object name the object for brc, a
    range each, which reads the lines a local file's range reads."""
    key = f"s3://{BUCKET}/mixed/a.txt"
    fs, _, paths = fsspec.get_fs_token_paths([key])
    files = brc.dask._expand(fs, [key], paths)
    pieces = list(brc.dask._pieces(fs, files, 4_000, brc_reads_objects=True))
    path = local / "mixed" / "a.txt"
    assert len(pieces) == -(-path.stat().st_size // 4_000) > 1
    assert {p.url for p in pieces} == {key}
    parts = [brc.partial(p.url, start=p.start, end=p.end) for p in pieces]
    assert parts == [brc.partial(path, start=p.start, end=p.end) for p in pieces]
    assert brc.merge(parts) == brc.partial(path)


def test_text_compressed_and_parquet_objects_mix(client, local, client_env):
    names = ["a.txt", "b.txt.gz", "c.parquet"]
    want = brc.aggregate([local / "mixed" / n for n in names])
    for split in (1_000, "256MiB"):
        got = brc.dask.aggregate(f"s3://{BUCKET}/mixed/", split_bytes=split, client=client)
        assert got == want, split
        got = brc.dask.aggregate([f"s3://{BUCKET}/mixed/{n}" for n in names],
                                 split_bytes=split, client=client)
        assert got == want, split


def test_keys_that_are_no_url_paths_are_read_as_listed(client, local, moto, client_env):
    """s3fs names keys as they are; brc reads URLs, whose paths are
    percent-decoded and end at `#` or `?`: the tasks hand brc each key
    escaped."""
    parquet = local / "1trc" / "measurements-2.parquet"
    keys = ["odd/a b#1?.parquet", "odd/100%25 of it.parquet", "odd/東京.parquet"]
    moto.upload("brc-dask-odd", {k: parquet for k in keys})
    got = brc.dask.aggregate("s3://brc-dask-odd/odd/", split_bytes=8_000, client=client)
    assert got == brc.aggregate([parquet] * 3)


def test_storage_options_have_fsspec_read_the_objects(client, local, moto, monkeypatch):
    """Given storage_options (here the only place the store's settings
    are, for the client), fsspec lists and reads; the workers' environment
    is not needed for Parquet objects then."""
    for name in [n for n in os.environ if n.startswith("AWS_")]:
        monkeypatch.delenv(name)
    options = {"key": moto.keys[0], "secret": moto.keys[1],
               "endpoint_url": moto.endpoint, "client_kwargs": {"region_name": "us-east-1"},
               # Not the instance the client's environment made.
               "skip_instance_cache": True}
    got = brc.dask.aggregate(f"s3://{BUCKET}/1trc/*.parquet", split_bytes=8_000,
                             client=client, storage_options=options)
    assert got == brc.aggregate(parquet_files(local))


def test_errors_name_the_object_as_given(client, local, moto, client_env):
    missing = f"s3://{BUCKET}/1trc/missing-*.parquet"
    with pytest.raises(FileNotFoundError):
        brc.dask.aggregate(missing, client=client)
    # The hidden object, named: brc in a task refuses it, and the error
    # names it as the caller did.
    hidden = f"s3://{BUCKET}/1trc/.staging/measurements-9.parquet"
    with pytest.raises(brc.DataError) as caught:
        brc.dask.aggregate([f"s3://{BUCKET}/1trc/measurements-0.parquet", hidden],
                           client=client)
    with pytest.raises(brc.DataError) as direct:
        brc.aggregate(hidden)
    assert (caught.value.path, str(caught.value)) == (hidden, str(direct.value))
    # A worker whose environment names no usable store: the task's error,
    # brc's one line, as brc.aggregate raises it in such a process.
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=":0",
                      env=moto.env(AWS_ENDPOINT_URL=f"http://127.0.0.1:{free_port()}")
                      ) as cluster, \
            Client(cluster, set_as_default=False) as elsewhere:
        with pytest.raises(OSError) as caught:
            brc.dask.aggregate(f"s3://{BUCKET}/1trc/measurements-0.parquet", client=elsewhere)
    error = caught.value
    assert error.filename == f"s3://{BUCKET}/1trc/measurements-0.parquet"
    assert "Connection refused" in error.strerror and "\n" not in str(error)

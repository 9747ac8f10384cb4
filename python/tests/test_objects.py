"""Objects as inputs: `s3://` URLs against moto's S3 server and `http://`
URLs against a Range-honouring server, both real servers on 127.0.0.1,
read by the command line and by brc.aggregate and brc.partial, compared
byte for byte with the same files read locally; and their errors, each one
line."""

from __future__ import annotations

import gzip
import os
import random
import re
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

import brc
from conftest import NAMES, aws_env, write_random
from objectstores import CutShort, MotoServer, free_port
from rangeserver import RangeServer

BUCKET = "brc-objects"

BOM = b"\xef\xbb\xbf"

#: The malformed line of `big/bad.txt`, counted from 1.
BAD_LINE = 24001


def write_1trc(path: Path, count: int, seed: int, *, row_group_size: int,
               columns: tuple[str, str] = ("station", "measure")) -> Path:
    """`count` random rows as the One Trillion Row Challenge writes them
    (pandas' `to_parquet`, pyarrow's defaults), in row groups of
    `row_group_size` rows."""
    rng = random.Random(seed)
    names = [rng.choice(NAMES) for _ in range(count)]
    values = [round(rng.uniform(-99.9, 99.9), 1) + 0.0 for _ in range(count)]
    pd.DataFrame({columns[0]: names, columns[1]: values}).to_parquet(
        path, row_group_size=row_group_size)
    return path


@dataclass(frozen=True)
class Stored:
    """Files kept both in a local directory and in the bucket, at the same
    relative path and key."""

    root: Path
    #: The keys under `data/` brc lists, in key order; the hidden ones
    #: are stored too but not listed.
    listed: list[str]

    def local(self, *keys: str) -> list[Path]:
        return [self.root / k for k in keys]


@pytest.fixture(scope="module")
def stored(moto: MotoServer, tmp_path_factory, cli_binary) -> Stored:
    root = tmp_path_factory.mktemp("objects")
    data = root / "data"
    (data / "sub" / ".cache").mkdir(parents=True)
    write_random(data / "a.txt", 3000, seed=1, final_newline=False)
    (data / "b.txt.gz").write_bytes(
        gzip.compress(write_random(root / "b.txt", 2000, seed=2).read_bytes()))
    # Several row groups, for shards and ranges to cut between.
    write_1trc(data / "c.parquet", 6000, seed=3, row_group_size=1500)
    done = cli_binary.run("generate", "-n", "20000", "-f", "parquet", "-q", "-s", "4",
                          "-o", data / "d.parquet")
    assert done.returncode == 0, done.stderr.decode()
    write_random(data / "sub" / "e.txt", 1000, seed=5)
    # Hidden: malformed, so that reading them would fail the run.
    (data / ".hidden.txt").write_text("not a line\n")
    (data / "sub" / ".cache" / "f.txt").write_text("not a line either\n")
    (root / "bad").mkdir()
    (root / "bad" / "x.txt").write_bytes(b"Oslo;1.0\n" * 10 + b"Oslo;12.34\n")
    write_1trc(root / "bad" / "city.parquet", 500, seed=6, row_group_size=100,
               columns=("city", "temp"))
    # Text objects large enough to cut into many shards: one without a final
    # newline, one after a byte-order mark, one with a malformed line far
    # from its start (after a mark too, so its offset counts from past it).
    big = root / "big"
    big.mkdir()
    write_random(big / "plain.txt", 30000, seed=7, final_newline=False)
    (big / "marked.txt").write_bytes(
        BOM + write_random(root / "marked.txt", 20000, seed=8).read_bytes())
    lines = write_random(root / "bad.txt", 30000, seed=9).read_bytes().split(b"\n")
    lines[BAD_LINE - 1] = b"Oslo;12.34"
    (big / "bad.txt").write_bytes(BOM + b"\n".join(lines))
    files = {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*")) if p.is_file()}
    moto.upload(BUCKET, files)
    listed = ["data/a.txt", "data/b.txt.gz", "data/c.parquet", "data/d.parquet", "data/sub/e.txt"]
    return Stored(root, listed)


@pytest.fixture(scope="module")
def cli_binary():
    from conftest import Cli, brc_binary

    return Cli(brc_binary())


@pytest.fixture
def s3_env(moto, monkeypatch) -> dict[str, str]:
    """The AWS_* variables for moto, in this process's environment too (for
    brc.aggregate), and returned for the command line's."""
    for name in [n for n in os.environ if n.startswith("AWS_")]:
        monkeypatch.delenv(name)
    for name, value in moto.env().items():
        monkeypatch.setenv(name, value)
    return aws_env(**moto.env())


def url(key: str) -> str:
    return f"s3://{BUCKET}/{key}"


def refused(done) -> str:
    """The one line a refused run prints, checked: exit status 1, nothing
    on standard output, one line on standard error after `brc: `."""
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    assert done.stdout == b""
    stderr = done.stderr.decode()
    assert stderr.startswith("brc: ") and stderr.endswith("\n") and stderr.count("\n") == 1, stderr
    return stderr.removeprefix("brc: ").removesuffix("\n")


# The command line.

def test_each_object_reads_as_its_local_file(cli, stored, s3_env):
    for key in stored.listed:
        local = stored.local(key)
        for fmt in ("official", "json", "partial"):
            got = cli.output("--format", fmt, url(key), env=s3_env)
            assert got == cli.output("--format", fmt, *local), (key, fmt)


def test_a_prefix_lists_its_objects_in_key_order_hidden_ones_skipped(cli, stored, s3_env):
    want = cli.output(*stored.local(*stored.listed))
    assert cli.output(url("data/"), env=s3_env) == want
    # Among local files and other objects, in one run.
    mixed = [stored.local("data/a.txt")[0], url("data/sub/"), url("data/c.parquet")]
    assert cli.output(*mixed, env=s3_env) == cli.output(
        *stored.local("data/a.txt", "data/sub/e.txt", "data/c.parquet"))
    # The hidden objects are malformed: read, they would fail the run.
    assert refused(cli.run(url("data/.hidden.txt"), env=s3_env)).startswith(
        f"{url('data/.hidden.txt')}: line 1: ")


def test_shards_of_objects_merge_into_the_whole(cli, stored, s3_env, tmp_path):
    want = cli.output(*stored.local(*stored.listed))
    for n in (1, 2, 3, 7):
        parts = []
        for k in range(1, n + 1):
            part = tmp_path / f"part-{n}-{k}"
            part.write_bytes(cli.run("--shard", f"{k}/{n}", "--format", "partial", url("data/"),
                                     env=s3_env).stdout)
            parts.append(part)
        assert cli.output("merge", *parts) == want, n
    # A Parquet object's row groups are cut between shards, as a file's.
    parquet = url("data/c.parquet")
    shards = [cli.output("--shard", f"{k}/4", "--format", "partial", parquet, env=s3_env)
              for k in range(1, 5)]
    assert sum(1 for s in shards if "stations=0" not in s) >= 2
    local = stored.local("data/c.parquet")[0]
    assert shards == [cli.output("--shard", f"{k}/4", "--format", "partial", local)
                      for k in range(1, 5)]


@pytest.mark.parametrize("key", ["big/plain.txt", "big/marked.txt", "data/a.txt"])
def test_a_text_object_s_shards_are_its_local_file_s(cli, stored, s3_env, tmp_path, key):
    # Each shard reads by ranged requests the lines a local file's shard
    # reads, so the shards merge into the whole.
    local = stored.local(key)[0]
    want = cli.output(local)
    for n, engine in ((2, "fast"), (5, "naive"), (16, "fast")):
        parts = []
        for k in range(1, n + 1):
            args = ("--shard", f"{k}/{n}", "--format", "partial", "--engine", engine)
            got = cli.output(*args, url(key), env=s3_env)
            assert got == cli.output(*args, local), (n, k)
            assert "stations=0" not in got
            parts.append(tmp_path / f"part-{n}-{k}")
            parts[-1].write_text(got)
        assert cli.output("merge", *parts) == want, n


def test_a_text_object_s_shard_asks_for_about_its_own_bytes(cli, stored):
    # Over HTTP, where the server counts what it sends: a shard's requests
    # are its range, from the byte before it, and the end of its last line
    # (at most a line's worth past it), besides the listing's look at the
    # object's first and last 4 bytes.
    key = "big/plain.txt"
    size = stored.local(key)[0].stat().st_size
    n = 8
    with RangeServer(stored.root) as served:
        total = 0
        for k in range(1, n + 1):
            served.served.clear()
            cli.output("--shard", f"{k}/{n}", "--format", "partial", f"{served.url}/{key}")
            sent = sum(end - start for _, start, end in served.served)
            lo, hi = (k - 1) * size // n, k * size // n
            own = hi - max(lo - 1, 0)
            assert own + 8 <= sent <= own + 8 + 107, (k, sent, own, served.served)
            total += sent
        assert total <= size + n * (1 + 8 + 107)


def test_an_error_in_a_later_shard_names_its_line_from_the_object_s_start(cli, stored,
                                                                           s3_env):
    key = "big/bad.txt"
    local = stored.local(key)[0]

    def named(done) -> str:
        return refused(done).replace(str(local), url(key), 1)

    whole = refused(cli.run(url(key), env=s3_env))
    assert whole.startswith(f"{url(key)}: line {BAD_LINE}: ")
    assert whole == named(cli.run(local))
    for n, engine in ((3, "fast"), (8, "naive"), (8, "swar")):
        failed = []
        for k in range(1, n + 1):
            args = ("--shard", f"{k}/{n}", "--format", "partial", "--engine", engine)
            s3, here = cli.run(*args, url(key), env=s3_env), cli.run(*args, local)
            if here.returncode == 0:
                assert (s3.returncode, s3.stdout) == (0, here.stdout), (n, k)
            else:
                assert refused(s3) == whole == named(here), (n, k)
                failed.append(k)
        # Exactly one shard holds the line, and not the first.
        assert len(failed) == 1 and failed[0] > 1, failed
    # Through the library: the same line and offset as the local file's.
    size = local.stat().st_size
    cuts = [k * size // 6 for k in range(7)]
    raised = 0
    for a, b in zip(cuts, cuts[1:]):
        try:
            want = brc.partial(local, start=a, end=b)
        except brc.DataError as e:
            with pytest.raises(brc.DataError) as caught:
                brc.partial(url(key), start=a, end=b)
            got = caught.value
            assert (got.path, got.line, got.offset, got.reason) == (
                url(key), e.line, e.offset, e.reason)
            assert got.line == BAD_LINE
            raised += 1
        else:
            assert brc.partial(url(key), start=a, end=b) == want
    assert raised == 1


def test_a_delimited_object_is_read_whole_by_the_shard_holding_its_first_byte(
        cli, moto, s3_env, tmp_path):
    # Its header is at its start, and a line feed inside quotes ends no row:
    # a shard could not find its first row by the byte before it.
    local = tmp_path / "readings.csv"
    rows = [f'{i},"Site, {i % 7}","note\n{i % 3}",{i % 100}.25' for i in range(3000)]
    local.write_text("time,site,note,reading\n" + "\n".join(rows) + "\n")
    moto.upload("brc-csv", {"readings.csv": local})
    keyed = ("--csv", "--key", "site", "--value", "reading")
    args = (*keyed, "--format", "partial", "-q")
    want = cli.output(*args, local)
    assert cli.output(*args, "s3://brc-csv/readings.csv", env=s3_env) == want
    parts = []
    for k in range(1, 5):
        got = cli.output(*args, "--shard", f"{k}/4", "s3://brc-csv/readings.csv", env=s3_env)
        assert (got == want) if k == 1 else (" keys=0 " in got.splitlines()[0]), (k, got)
        parts.append(tmp_path / f"part-{k}")
        parts[-1].write_text(got)
    assert cli.output("merge", *parts) == cli.output(*keyed, local)


def test_every_shard_of_delimited_objects_checks_every_header(cli, moto, s3_env, tmp_path):
    # A shard that reads no row of an object still reads its header, as a
    # whole run checks every input's against the first's.
    body = "".join(f"s{i % 5},{i}.5\n" for i in range(2000))
    first, other = tmp_path / "a.csv", tmp_path / "b.csv"
    first.write_text("site,reading\n" + body)
    other.write_text("site,temp\n" + body)
    moto.upload("brc-headers", {"a.csv": first, "b.csv": other})
    urls = ("s3://brc-headers/a.csv", "s3://brc-headers/b.csv")
    keyed = ("--csv", "--key", "site", "--value", "2")
    want = ("s3://brc-headers/b.csv: line 1: expected the header of the first file,"
            " found another one")
    assert refused(cli.run(*keyed, *urls, env=s3_env)) == want
    for k in range(1, 5):
        assert refused(cli.run(*keyed, "--shard", f"{k}/4", *urls, env=s3_env)) == want, k


def test_objects_over_http_read_as_local_files(cli, stored):
    with RangeServer(stored.root) as served:
        for key in ("data/a.txt", "data/b.txt.gz", "data/c.parquet", "data/d.parquet"):
            got = cli.output(f"{served.url}/{key}")
            assert got == cli.output(*stored.local(key)), key


def test_listing_an_object_asks_for_its_ends_only(cli, stored):
    # Its first and last 4 bytes tell its format; the read is the object's
    # one whole request.
    key = "data/a.txt"
    size = stored.local(key)[0].stat().st_size
    with RangeServer(stored.root) as served:
        cli.output(f"{served.url}/{key}")
        path = f"/{key}"
        assert sorted(served.served) == [(path, 0, 4), (path, 0, size), (path, size - 4, size)]


def test_a_missing_key_or_bucket_is_one_line(cli, stored, moto, s3_env):
    key = url("data/nope.txt")
    assert refused(cli.run(stored.local("data/a.txt")[0], key, env=s3_env)) == (
        f"{key}: no such bucket or key (HEAD {moto.endpoint}/{BUCKET}/data/nope.txt:"
        " 404 Not Found)")
    assert refused(cli.run("s3://no-such-bucket/a.txt", env=s3_env)) == (
        "s3://no-such-bucket/a.txt: no such bucket or key"
        f" (HEAD {moto.endpoint}/no-such-bucket/a.txt: 404 Not Found)")
    # A listing's reply has a body: the server's code and message.
    message = refused(cli.run("s3://no-such-bucket/data/", env=s3_env))
    assert message.startswith(
        "s3://no-such-bucket/data/: no such bucket or key"
        f" (GET {moto.endpoint}/no-such-bucket?list-type=2")
    assert "404 Not Found, NoSuchBucket: " in message


def test_refused_credentials_are_one_line(cli, moto_auth, tmp_path):
    (tmp_path / "a.txt").write_text("Oslo;1.0\n")
    moto_auth.upload("brc-auth", {"a.txt": tmp_path / "a.txt"})
    # The server checks signatures: the right keys read the object.
    assert cli.output("s3://brc-auth/a.txt", env=aws_env(**moto_auth.env())) == (
        "{Oslo=1.0/1.0/1.0}\n")
    for wrong in ({"AWS_ACCESS_KEY_ID": "AKIAUNKNOWNKEY000000"},
                  {"AWS_SECRET_ACCESS_KEY": "not-the-secret"}):
        env = aws_env(**moto_auth.env(**wrong))
        assert refused(cli.run("s3://brc-auth/a.txt", env=env)) == (
            "s3://brc-auth/a.txt: access refused"
            f" (HEAD {moto_auth.endpoint}/brc-auth/a.txt: 403 Forbidden);"
            " check the AWS_* credentials")
        message = refused(cli.run("s3://brc-auth/", env=env))
        assert message.startswith(
            f"s3://brc-auth/: access refused (GET {moto_auth.endpoint}/brc-auth?list-type=2:"
            " 403 Forbidden"), message
        assert message.endswith("); check the AWS_* credentials")


def test_a_server_that_cannot_be_reached_is_one_line_within_seconds(cli):
    port = free_port()
    env = aws_env(AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}", AWS_REGION="us-east-1",
                  AWS_ACCESS_KEY_ID="k", AWS_SECRET_ACCESS_KEY="s")
    for arg, request in (("s3://bkt/a.txt", f"HEAD http://127.0.0.1:{port}/bkt/a.txt"),
                         (f"http://127.0.0.1:{port}/a.txt", f"HEAD http://127.0.0.1:{port}/a.txt")):
        started = time.monotonic()
        message = refused(cli.run(arg, env=env))
        assert time.monotonic() - started < 20
        assert re.fullmatch(
            re.escape(f"{arg}: {request}: Connection refused") + r".*, after 3 retries",
            message), message


def test_an_http_url_ending_in_a_slash_is_one_line(cli, stored):
    with RangeServer(stored.root) as served:
        arg = f"{served.url}/data/"
        assert refused(cli.run(arg)) == (
            f"{arg}: an http(s) URL names one object: only s3:// URLs ending in `/` are listed")


@pytest.mark.parametrize("key", ["data/a.txt", "data/c.parquet", "data/d.parquet"])
def test_an_object_cut_short_is_one_line(cli, stored, key):
    # The server announces the whole reply and closes after 100 bytes of it.
    # And a shard of it, read by ranged requests.
    for shard in ([], ["--shard", "2/2"]):
        with CutShort(stored.local(key)[0].read_bytes(), sent=100) as server:
            arg = server.url(key)
            message = refused(cli.run(*shard, arg))
        assert message.startswith(f"{arg}: ")
        # The transport's words, or brc's own for a reply shorter than asked.
        assert "message length" in message or "cut short" in message, (shard, message)


# The Python package: the same objects, through the library.

def test_brc_aggregate_and_partial_read_objects(stored, s3_env, cli):
    want = brc.aggregate(stored.local(*stored.listed))
    assert brc.aggregate(url("data/")) == want
    assert brc.aggregate([url(k) for k in stored.listed], threads=2) == want
    for key in stored.listed:
        local = stored.local(key)[0]
        assert bytes(brc.partial(url(key))) == bytes(brc.partial(local)), key
    # A Parquet object's byte ranges read its row groups, as a file's.
    size = stored.local("data/c.parquet")[0].stat().st_size
    cuts = [k * size // 5 for k in range(6)]
    parts = [brc.partial(url("data/c.parquet"), start=a, end=b) for a, b in zip(cuts, cuts[1:])]
    assert sum(1 for p in parts if len(p)) >= 2
    assert brc.merge(parts) == brc.partial(stored.local("data/c.parquet")[0])
    # A text object's byte ranges read its lines as a local file's do.
    local = stored.local("data/a.txt")[0]
    size = local.stat().st_size
    for cuts in ([0, 1, size], [k * size // 7 for k in range(8)]):
        for a, b in zip(cuts, cuts[1:]):
            assert brc.partial(url("data/a.txt"), start=a, end=b) == brc.partial(
                local, start=a, end=b), (a, b)
    # A compressed one cannot be cut: the range holding its first byte reads
    # it whole.
    whole = brc.partial(stored.local("data/b.txt.gz")[0])
    assert brc.partial(url("data/b.txt.gz"), start=0, end=1) == whole
    assert len(brc.partial(url("data/b.txt.gz"), start=1)) == 0


def test_brc_partial_reads_the_columns_asked_for(stored, s3_env):
    city = url("bad/city.parquet")
    local = stored.local("bad/city.parquet")[0]
    got = brc.partial(city, columns=("city", "temp"))
    assert len(got) > 0 and got == brc.partial(local, columns=("city", "temp"))
    with pytest.raises(brc.DataError) as caught:
        brc.partial(city)
    with pytest.raises(brc.DataError) as local_caught:
        brc.partial(local)
    error = caught.value
    assert (error.path, error.line, error.row_group) == (city, None, None)
    assert error.reason == local_caught.value.reason
    assert str(error) == f"{city}: {error.reason}" and "\n" not in str(error)


def test_a_malformed_object_is_a_data_error_as_a_file(stored, s3_env, cli):
    bad = url("bad/x.txt")
    with pytest.raises(brc.DataError) as caught:
        brc.aggregate([url("data/a.txt"), bad])
    error = caught.value
    assert (error.path, error.line, error.offset) == (bad, 11, 90)
    assert f"brc: {error}\n" == cli.run(bad, env=s3_env).stderr.decode()


def test_python_errors_are_the_package_s_with_one_line_messages(stored, moto, moto_auth,
                                                                  monkeypatch, s3_env, cli):
    missing = url("data/nope.txt")
    with pytest.raises(FileNotFoundError) as caught:
        brc.aggregate(missing)
    error = caught.value
    assert (error.filename, error.strerror) == (missing, refused(
        cli.run(missing, env=s3_env)).removeprefix(f"{missing}: "))
    assert "\n" not in str(error)
    with pytest.raises(FileNotFoundError):
        brc.partial("s3://no-such-bucket/")

    for name, value in moto_auth.env(AWS_ACCESS_KEY_ID="AKIAUNKNOWNKEY000000").items():
        monkeypatch.setenv(name, value)
    with pytest.raises(PermissionError) as caught:
        brc.aggregate("s3://brc-any/a.txt")
    assert caught.value.strerror.startswith("access refused (HEAD ")
    assert caught.value.strerror.endswith("check the AWS_* credentials")

    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{free_port()}")
    with pytest.raises(OSError) as caught:
        brc.partial("s3://brc-any/a.txt")
    error = caught.value
    assert type(error) is OSError and error.errno is None
    assert "Connection refused" in error.strerror and "\n" not in str(error)

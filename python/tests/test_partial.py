"""brc.partial, brc.partial_bytes, brc.merge and brc.Partial: exact,
mergeable states in the documented brc-partial format."""

from __future__ import annotations

import gzip
import pickle
import random

import pytest

import brc
from conftest import SAMPLES


def ranges(size: int, n: int) -> list[tuple[int, int]]:
    return [(k * size // n, (k + 1) * size // n) for k in range(n)]


def test_a_whole_file_partial_is_the_cli_partial_and_finishes_to_its_summary(random_file, cli):
    path = random_file(3000, seed=1)
    partial = brc.partial(path)
    assert bytes(partial) == cli.output("--format", "partial", path).encode()
    assert partial.finish() == brc.aggregate(path)
    assert brc.aggregate(path).format("partial") == bytes(partial).decode()


@pytest.mark.parametrize("n", [1, 2, 3, 7, 50, 400])
def test_ranges_of_a_file_merge_into_the_whole(random_file, n):
    path = random_file(200, seed=n, final_newline=n % 2 == 0)
    size = path.stat().st_size
    parts = [brc.partial(path, start=s, end=e) for s, e in ranges(size, n)]
    random.Random(n).shuffle(parts)
    merged = brc.merge(parts)
    assert merged == brc.partial(path)
    assert sum(map(len, parts)) >= len(merged)
    assert merged.finish().format("official") == brc.aggregate(path).format("official")


def test_byte_ranges_held_by_the_caller_merge_into_the_whole(random_file):
    path = random_file(300, seed=9)
    data = path.read_bytes()
    parts = []
    for s, e in ranges(len(data), 37):
        # As a remote reader does: from the byte before the range, to the
        # end of the line holding the range's last byte.
        lo = max(s - 1, 0)
        hi = data.find(b"\n", e - 1) + 1 or len(data)
        parts.append(brc.partial_bytes(data[lo:hi], first_line_is_whole=s == 0))
    assert brc.merge(parts) == brc.partial(path)


def test_whole_bytes_are_read_as_a_file_is(random_file):
    path = random_file(500, seed=4)
    data = path.read_bytes()
    assert brc.partial_bytes(data) == brc.partial(path)
    assert brc.partial_bytes(gzip.compress(data)) == brc.partial(path)
    assert brc.partial_bytes(b"\xef\xbb\xbf" + data) == brc.partial(path)
    assert brc.partial_bytes(b"") == brc.merge([])


def test_a_compressed_file_belongs_to_the_range_that_holds_its_start(tmp_path):
    plain = SAMPLES / "measurements-20.txt"
    packed = tmp_path / "m.txt.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    size = packed.stat().st_size
    parts = [brc.partial(packed, start=s, end=e) for s, e in ranges(size, 4)]
    assert [len(p) for p in parts[1:]] == [0, 0, 0]
    assert brc.merge(parts) == brc.partial(plain)


def test_partials_pickle_as_their_bytes_and_parse_back(random_file):
    partial = brc.partial(random_file(400, seed=3))
    text = bytes(partial)
    assert text.startswith(b"brc-partial v1 stations=")
    again = pickle.loads(pickle.dumps(partial))
    assert again == partial and bytes(again) == text
    assert brc.Partial.from_bytes(text) == partial
    assert brc.Partial.from_bytes(text + text) == brc.merge([partial, partial])


def test_a_corrupted_partial_is_a_data_error():
    partial = brc.partial(SAMPLES / "measurements-10.txt")
    text = bytes(partial)
    with pytest.raises(brc.DataError) as caught:
        brc.Partial.from_bytes(text[:-5])
    assert caught.value.line == 12
    with pytest.raises(brc.DataError):
        brc.Partial.from_bytes(text.replace(b"v1", b"v9", 1))


def test_range_errors_carry_the_file_offset(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"a;1.0\n" * 100 + b"b;oops\n" + b"a;1.0\n" * 100)
    errors = []
    for s, e in ranges(path.stat().st_size, 9):
        try:
            brc.partial(path, start=s, end=e)
        except brc.DataError as error:
            errors.append(error)
    assert [(e.offset, e.line) for e in errors] == [(600, 101)]
    assert str(errors[0]).startswith(f"{path}: line 101: expected a value")
    with pytest.raises(brc.DataError) as caught:
        brc.partial(path)
    assert caught.value.line == 101


def test_bad_ranges_are_value_errors(tmp_path):
    path = SAMPLES / "measurements-1.txt"
    with pytest.raises(ValueError):
        brc.partial(path, start=5, end=2)
    with pytest.raises(ValueError):
        brc.partial(path, start=-1, end=2)

"""brc on a Dask cluster: files cut into byte ranges, one task per range,
the exact partial results tree-reduced on the workers. Text, delimited
text (CSV, TSV) and Parquet files alike: a Parquet file's range reads the
row groups whose first byte lies in it, local or an object that brc reads
itself (``s3://``, ``http(s)://``); a local delimited file's range reads
the rows that start in it, telling them apart by counting quotes from the
file's start.

Only partials travel between workers and to the client (a few dozen bytes
per station, in the ``brc-partial`` format when pickled, and what the
statistics asked need: a sum of squares, counts per distinct value),
never rows. Every
line is counted once, by the range that holds its first byte, so the result
is the command line's, byte for byte, for any ``split_bytes``; a task that
Dask runs again (a worker lost mid-job) computes the same partial again,
and only one of the two is ever merged.
"""

from __future__ import annotations

import os
import posixpath
import re
import tempfile
import uuid
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Union

import brc
from brc._errors import import_for, not_found

__all__ = ["aggregate"]

#: Merge tasks take this many partials each: the tree's fan-in.
FAN_IN = 8

# The bad rows skipped a result names, as the command line names them: the
# first five, by input and line.
_SKIPPED_SHOWN = 5

# The characters that make a path a glob, as fsspec (after Python's `glob`)
# reads them.
_MAGIC = re.compile(r"[*?[]")

# A UTF-8 byte-order mark, which brc skips at an input's start.
_BOM = b"\xef\xbb\xbf"

# What a header task reads at a time, and at most: brc's own bound on a
# streamed row.
_HEADER_BLOCK = 64 << 10
_MAX_HEADER = 64 << 20


@dataclass(frozen=True)
class _File:
    """A file to read: ``path`` as fsspec names it (absolute, for a local
    file), ``shown`` as the caller gave it, the name its errors carry."""

    path: str
    shown: str


@dataclass(frozen=True)
class _Piece:
    """One task's input: bytes ``start..end`` of the ``order``-th file (of
    ``size`` bytes), or the whole file (``end is None``); read by brc at
    ``url`` when set (an object brc reads itself), else through fsspec."""

    order: int
    path: str
    size: Optional[int]
    start: int
    end: Optional[int]
    url: Optional[str] = None


@dataclass(frozen=True)
class _Failed:
    """A task's error, kept as a value so that the merge tree can pick the
    one the command line would report: the first in argument order, then in
    the file. ``at`` is where in the file: the byte offset of a malformed
    line (``offset``), with ``line`` unknown (``None``) when the task read
    only a range; the line a refused delimited row starts on (``(0,)`` for
    a header unlike the first file's, checked before its rows); the row
    group and row of a refused Parquet row; ``(-1,)`` for anything else,
    which concerns the file as a whole."""

    order: int
    at: tuple[int, ...]
    line: Optional[int]
    error: BaseException
    offset: Optional[int] = None


@dataclass(frozen=True)
class _Part:
    """A task's partial, and the bad rows its input's delimited rows
    skipped (``on_error="skip"``), which a partial does not hold: how many,
    and the first :data:`_SKIPPED_SHOWN` of them as ``(order, line)``, the
    file's place among the inputs and the line its row starts on. Merge
    tasks add the counts up and keep the first ones by ``(order, line)``,
    so that the result names the rows the command line names."""

    partial: brc.Partial
    skipped: int = 0
    first: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class _Header:
    """A delimited file's header row as stored (its line break and a
    byte-order mark left out), ``None`` for a file without a row or a
    Parquet file; ``known`` is false when it could not be read here (a
    zstd file without :mod:`zstandard`, an unreadable file, whose pieces
    report why)."""

    row: Optional[bytes]
    known: bool = True


def aggregate(
    urlpaths: Union[str, os.PathLike, Iterable[Union[str, os.PathLike]]],
    *,
    split_bytes: Union[int, str] = "256MiB",
    client: Any = None,
    storage_options: Optional[dict] = None,
    columns: tuple[str, str] = brc.COLUMNS,
    csv: bool = False,
    tsv: bool = False,
    delimiter: Optional[str] = None,
    key: Union[brc.ColumnRef, Iterable[brc.ColumnRef], None] = None,
    value: Optional[brc.ColumnRef] = None,
    nulls: Union[str, Iterable[str], None] = None,
    on_error: Optional[str] = None,
    decimals: Optional[int] = None,
    stats: Optional[brc.Stats] = None,
) -> brc.Summary:
    """Aggregates the files at ``urlpaths`` on Dask into one summary.

    ``urlpaths`` is a path, a glob, a list of them, or any fsspec URL
    (``s3://``, ``gs://``, ``http://``, ``file://``); a directory stands for
    the regular files directly inside it, hidden ones skipped, and an S3
    prefix ending in ``/`` (``s3://bucket/1trc/``) for every object under
    it, as for the command line (keys with a part starting with ``.``
    skipped). Uncompressed files are cut into tasks of about
    ``split_bytes`` bytes (an int, or a string such as ``"64MiB"``); gzip
    and zstd files are one task each.
    Parquet files (told by their bytes, as :func:`brc.aggregate` tells them,
    names and values read from ``columns``) are cut too, each task reading
    the row groups that start in its bytes.

    ``csv``, ``tsv``, ``delimiter``, ``key``, ``value``, ``nulls``,
    ``on_error`` and ``decimals`` read delimited files as :func:`brc.aggregate` does: a
    local one is cut too, each task reading the rows that start in its
    bytes (quotes counted from the file's start, so a task reads the bytes
    before its range once more, and tasks late in a big file read more);
    a remote one is one task, read whole. The tasks' partials hold their
    own rows' scale and merge at the finest, so the result is a single
    run's; every file's header is checked against the first one's, as
    the command line checks them. With ``on_error="skip"`` bad rows are
    skipped and counted as :func:`brc.aggregate` counts them: each task
    returns, beside its partial (which holds no skipped rows), how many it
    skipped and the first five as (file, line); merge tasks add the counts
    up and keep the first five by file (in argument order) and line, so
    that :attr:`brc.Summary.skipped` and the :class:`brc.SkippedRowsWarning`
    (warned on the client) are a single run's.

    ``stats`` picks the statistics the summary shows, as for
    :func:`brc.aggregate` (checked before any task runs): each task's
    partial keeps what they need (a sum of squares for the standard
    deviations, a count per distinct value for the median and
    percentiles), which merges exactly, so the result is a single run's,
    quantiles and standard deviations too.

    Tasks run on ``client``, else on the current ``distributed.Client`` if
    there is one, else on Dask's local threaded scheduler. Local files are
    read by brc itself (:func:`brc.partial`). So are ``s3://`` and
    ``http(s)://`` objects, when no ``storage_options`` are given: a task
    asks for its range of a text object, or for its row groups' column
    chunks, by byte ranges (a compressed object is streamed), with the
    settings of the *worker's* environment, as the command line takes them
    (``AWS_ENDPOINT_URL``, ``AWS_REGION``, ``AWS_ACCESS_KEY_ID``,
    ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``,
    ``AWS_SKIP_SIGNATURE=true``; an instance's role otherwise). Other files
    (every remote file when ``storage_options`` are given, and those of
    stores brc cannot read) are read through fsspec ranged reads
    (:func:`brc.partial_bytes`), reading past a range only to finish its
    last line. The client lists and globs
    through fsspec (``s3://`` needs :mod:`s3fs`), with ``storage_options``
    (credentials, endpoint) or its own environment; since brc cannot be
    handed fsspec's options, giving them means that fsspec reads
    everything remote, Parquet objects one fetch per task. The partials
    are merged on the workers, a tree of merges of :data:`FAN_IN` partials
    each.

    Raises :class:`brc.DataError` for the first malformed line or Parquet
    row (in argument order, then in its file) or Parquet file brc cannot
    read, :class:`OSError` for an unreadable file,
    :class:`FileNotFoundError` for a glob that matches nothing (an empty
    directory is an empty input), as the command line does; each names the
    file as the caller spelt it (a match of ``data/*.txt`` as
    ``data/a.txt``). Needs the ``brc[dask]`` extra (:mod:`fsspec`, Dask).
    """
    fsspec = import_for("dask", "fsspec")
    parse_bytes = import_for("dask", "dask.utils").parse_bytes

    split = parse_bytes(split_bytes) if isinstance(split_bytes, str) else int(split_bytes)
    if split < 1:
        raise ValueError(f"split_bytes must be at least 1 byte, found {split_bytes!r}")
    columns = brc._columns(columns)
    dialect = brc._dialect(csv, tsv, delimiter, key, value, nulls, on_error)
    if decimals is not None:
        brc._check_decimals(decimals)
    stats = brc._check_statistics(stats)
    if isinstance(urlpaths, (str, os.PathLike)):
        urlpaths = [urlpaths]
    urlpaths = [os.fspath(u) for u in urlpaths]
    # Unexpanded: each path, as fsspec names it, beside the caller's own.
    fs, _, paths = fsspec.get_fs_token_paths(
        urlpaths, storage_options=storage_options, expand=False
    )
    files = _expand(fs, urlpaths, paths)
    pieces = list(
        _pieces(
            fs, files, split, brc_reads_objects=not storage_options, delimited=dialect is not None
        )
    )

    # Keys of this call only: a cluster shares results between graphs that
    # name the same keys, and another call's pieces are other bytes.
    token = uuid.uuid4().hex
    graph: dict = {}
    keys = []
    for i, piece in enumerate(pieces):
        task = (f"brc-piece-{token}", i)
        graph[task] = (_run_piece, fs, piece, columns, dialect, stats)
        keys.append(task)
    headers = []
    if dialect is not None:
        # The empty delimited partial, so that the result is a delimited
        # run's (its missing values counted) even without a text row.
        empty = (f"brc-empty-{token}",)
        graph[empty] = (_empty, columns, dialect, stats)
        keys.append(empty)
        if len(files) > 1:
            for order, file in enumerate(files):
                task = (f"brc-header-{token}", order)
                graph[task] = (_header, fs, file.path)
                headers.append(task)
    level = 0
    while len(keys) > 1 or level == 0:
        merged = []
        for j in range(0, max(len(keys), 1), FAN_IN):
            key = (f"brc-merge-{token}", level, j // FAN_IN)
            graph[key] = (_merge, list(keys[j : j + FAN_IN]))
            merged.append(key)
        keys, level = merged, level + 1
    result_key = (f"brc-result-{token}",)
    graph[result_key] = (_finish, fs, files, keys[0], headers, dialect)

    if client is None:
        client = _current_client()
    if client is not None:
        result = client.get(graph, result_key)
    else:
        result = import_for("dask", "dask.threaded").get(graph, result_key)
    summary = result.partial.finish()
    if result.skipped:
        first = [(files[order].shown, line) for order, line in result.first]
        summary = summary._skipping((result.skipped, first))
        brc._warn_skipped(summary.skipped, stacklevel=2)
    if decimals is not None:
        summary = summary.with_decimals(decimals)
    return summary if stats is None else summary.with_statistics(stats)


def _current_client() -> Any:
    """The current ``distributed.Client``, if distributed is installed and
    there is one."""
    try:
        from distributed import default_client
    except ImportError:
        return None
    try:
        return default_client()
    except ValueError:
        return None


def _expand(fs: Any, urlpaths: list[str], paths: list[str]) -> list[_File]:
    """The files that ``urlpaths`` (``paths`` as fsspec names them) stand
    for: a glob for the paths it matches, in byte order, a directory for
    the regular files directly inside it, in byte order of their names,
    hidden ones skipped.

    A glob that matches nothing is a :class:`FileNotFoundError`: the
    command line is given the pattern itself when a shell's glob matches
    nothing, and finds no such file.
    """
    files = []
    for given, path in zip(urlpaths, paths):
        magic = _MAGIC.search(given)
        if magic is None:
            found = [_File(path, given)]
        else:
            matched = sorted(fs.glob(path), key=str.encode)
            if not matched:
                raise not_found(given)
            # The directory the glob starts from, as the caller and as
            # fsspec spell it: what comes after it is spelt alike.
            start = given[: given.rfind("/", 0, magic.start()) + 1]
            under = (start, path.removesuffix(given[len(start) :]))
            found = [_found(fs, *under, match) for match in matched]
        for file in found:
            if fs.isdir(file.path):
                files.extend(_inside(fs, file))
            else:
                files.append(file)
    return files


def _inside(fs: Any, directory: _File) -> list[_File]:
    """The regular files directly inside ``directory``, in byte order of
    their names, hidden ones skipped; for an S3 prefix given with its
    final ``/``, every object under it, in byte order of their keys, those
    with a hidden part skipped, as the command line lists
    ``s3://bucket/prefix/``."""
    start = directory.path.rstrip("/") + "/"
    if directory.shown.endswith("/") and _is_s3(fs):
        inside = [
            name
            for name, entry in fs.find(directory.path, detail=True).items()
            if entry["type"] == "file"
            and name.startswith(start)
            and not any(part.startswith(".") for part in name[len(start):].split("/"))
        ]
    else:
        inside = [
            entry["name"]
            for entry in fs.ls(directory.path, detail=True)
            if entry["type"] == "file"
            and not posixpath.basename(entry["name"].rstrip("/")).startswith(".")
        ]
    under = (directory.shown.rstrip("/") + "/", start)
    return [_found(fs, *under, name) for name in sorted(inside, key=str.encode)]


def _found(fs: Any, given_dir: str, fs_dir: str, name: str) -> _File:
    """The file ``name`` (as fsspec names it) found under the directory
    ``fs_dir``, which the caller spelt ``given_dir`` (both ending in ``/``
    or empty): shown as a shell names what its glob finds, after the
    caller's spelling of the directory."""
    if not name.startswith(fs_dir):
        # Listed elsewhere (a filesystem's own listing rules): shown as
        # fsspec names it.
        return _File(name, fs.unstrip_protocol(name))
    return _File(name, given_dir + name[len(fs_dir) :])


def _pieces(
    fs: Any, files: list[_File], split: int, *, brc_reads_objects: bool, delimited: bool = False
) -> Iterable[_Piece]:
    """The tasks' inputs: each uncompressed file cut into nearly equal
    ranges of at most ``split`` bytes, each compressed one whole. An object
    of a store brc reads itself is read by brc if ``brc_reads_objects``,
    by fsspec otherwise. A Parquet file is cut when brc reads it (a range
    reads its row groups), fetched whole by fsspec otherwise. A
    ``delimited`` file is cut when local (brc counts its quotes from its
    start), else read whole."""
    local = _is_local(fs)
    for order, file in enumerate(files):
        path = file.path
        try:
            size = fs.size(path)
            head = fs.cat_file(path, start=0, end=4) if size else b""
            parquet = not local and _is_parquet(fs, path, size, head)
        except OSError as e:
            _name_as_given(e, file)
            raise
        compressed = head.startswith(brc._MAGIC)
        url = _object_url(fs, path) if brc_reads_objects else None
        whole = compressed or (delimited and not parquet)
        if url is not None and size is not None:
            # brc reads the object: a compressed or delimited one whole, as
            # a stream; text and Parquet by ranges, as a local file.
            n = 1 if whole else max(1, -(-size // split))
            for k in range(n):
                end = None if whole else (k + 1) * size // n
                yield _Piece(order, path, size, k * size // n, end, url)
            continue
        if size is None or compressed or parquet or (delimited and not local):
            yield _Piece(order, path, size, 0, None)
            continue
        n = max(1, -(-size // split))
        for k in range(n):
            yield _Piece(order, path, size, k * size // n, (k + 1) * size // n)


def _object_url(fs: Any, path: str) -> Optional[str]:
    """The URL by which brc reads the object ``path`` of ``fs`` (as fsspec
    names it), if brc reads that store itself: S3 (s3fs names an object
    ``bucket/key``) or HTTP(S) (named by its URL)."""
    if _is_s3(fs):
        # brc takes an S3 key as written, as s3fs lists it.
        return "s3://" + path
    if path.startswith(("http://", "https://")) and {"http", "https"} & _protocols(fs):
        return path
    return None


def _protocols(fs: Any) -> set[str]:
    """The protocols ``fs`` serves (fsspec gives one or a tuple)."""
    return {fs.protocol} if isinstance(fs.protocol, str) else set(fs.protocol)


def _is_s3(fs: Any) -> bool:
    return "s3" in _protocols(fs)


def _is_parquet(fs: Any, path: str, size: Optional[int], head: bytes) -> bool:
    """Whether the file at ``path``, of ``size`` bytes, starting with
    ``head``, is Parquet: as brc tells one, by the magic bytes at both
    ends."""
    if size is None or size < 12 or head != brc._PARQUET_MAGIC:
        return False
    return fs.cat_file(path, start=size - 4, end=size) == brc._PARQUET_MAGIC


def _name_as_given(error: OSError, file: _File) -> None:
    """Makes ``error``, if about ``file``, name it as the caller did."""
    if error.filename == file.path:
        error.filename = file.shown


def _is_local(fs: Any) -> bool:
    from fsspec.implementations.local import LocalFileSystem

    return isinstance(fs, LocalFileSystem)


def _run_piece(
    fs: Any,
    piece: _Piece,
    columns: tuple[str, str],
    dialect: Optional[brc._Dialect],
    stats: Optional[list[str]] = None,
) -> Union[_Part, _Failed]:
    """A task: the partial of ``piece`` (Parquet files' names and values
    read from ``columns``, text files as ``dialect`` says, each key keeping
    what the statistics ``stats`` need) and the bad rows it skipped, or its
    error as a value."""
    base = 0
    local = _is_local(fs)
    everything = 2**64 - 1
    try:
        if local or piece.url is not None:
            where = piece.path if local else piece.url
            end = everything if piece.end is None else piece.end
            done = brc._partial_file(where, piece.start, end, 1, columns, dialect, stats)
            return _part(piece, *done)
        if piece.end is None:
            data = fs.cat_file(piece.path)
            done = brc._partial_bytes(data, True, 1, columns, dialect, stats)
            return _part(piece, *done)
        base = max(piece.start - 1, 0)
        read = lambda at, stop: fs.cat_file(piece.path, start=at, end=stop)  # noqa: E731
        data = brc._range_bytes(read, piece.size, base, piece.end)
        first = piece.start == 0
        return _Part(brc.partial_bytes(data, first_line_is_whole=first, stats=stats))
    except brc.DataError as e:
        if e.line is None:
            # A Parquet file's: at a row, or the whole file's.
            at = (-1,) if e.row_group is None else (e.row_group, e.row)
            return _Failed(piece.order, at, None, e)
        if e.offset is None:
            # A delimited file's, read from its start: its line is known.
            return _Failed(piece.order, (e.line,), e.line, e)
        # A remote range's lines are numbered from its start: the line in
        # the file is counted only for the error reported (`_finish`).
        whole = local or piece.url is not None or piece.end is None
        line = e.line if whole else None
        offset = base + e.offset
        return _Failed(piece.order, (offset,), line, e, offset)
    except OSError as e:
        if piece.url is not None and e.filename == piece.url:
            # Named as fsspec names it, as other errors are, for `_finish`
            # to name it as the caller did.
            e.filename = piece.path
        return _Failed(piece.order, (-1,), None, e)


def _part(
    piece: _Piece, partial: brc.Partial, skipped: tuple[int, list[tuple[str, int]]]
) -> _Part:
    """The outcome of ``piece``: its ``partial``, and the bad rows it
    skipped as brc names them, ``(count, [(path, line), ...])``."""
    count, first = skipped
    return _Part(partial, count, tuple((piece.order, line) for _, line in first))


def _merge(outcomes: list) -> Union[_Part, _Failed]:
    """A merge task: the merged partial and bad rows skipped, or the first
    error."""
    failed = [o for o in outcomes if isinstance(o, _Failed)]
    if failed:
        return min(failed, key=lambda f: (f.order, f.at))
    first = sorted(row for o in outcomes for row in o.first)[:_SKIPPED_SHOWN]
    skipped = sum(o.skipped for o in outcomes)
    return _Part(brc.merge([o.partial for o in outcomes]), skipped, tuple(first))


def _empty(
    columns: tuple[str, str], dialect: brc._Dialect, stats: Optional[list[str]] = None
) -> _Part:
    """A task: the partial of an empty delimited file (keeping what the
    statistics ``stats`` need)."""
    partial, _ = brc._partial_bytes(b"", True, 1, columns, dialect, stats)
    return _Part(partial)


def _header(fs: Any, path: str) -> _Header:
    """A task: the header row of the delimited file at ``path`` as stored,
    decompressed (see :class:`_Header`): up to its first line break
    outside quotes."""
    try:
        with fs.open(path, "rb") as f:
            head = f.read(4)
            if head == brc._PARQUET_MAGIC:
                size = fs.size(path)
                if size >= 12 and fs.cat_file(path, start=size - 4, end=size) == head:
                    return _Header(None)
            f.seek(0)
            if head.startswith(brc._MAGIC[0]):
                import gzip

                return _header_row(gzip.GzipFile(fileobj=f, mode="rb"))
            if head.startswith(brc._MAGIC[1]):
                try:
                    import zstandard
                except ImportError:
                    return _Header(None, known=False)
                return _header_row(zstandard.ZstdDecompressor().stream_reader(f))
            return _header_row(f)
    except (OSError, EOFError, ValueError):
        # Its pieces say why, as the command line would.
        return _Header(None, known=False)


def _header_row(f: Any) -> _Header:
    """The first row of the stream ``f``: its bytes up to the first line
    feed after an even number of quotes, a byte-order mark left out."""
    data = b""
    quotes = 0
    scanned = 0
    bom = None
    while len(data) < _MAX_HEADER:
        block = f.read(_HEADER_BLOCK)
        data += block
        if bom is None and (len(data) >= len(_BOM) or not block):
            bom = data.startswith(_BOM)
            data = data[len(_BOM) :] if bom else data
        if bom is None:
            continue
        while True:
            nl = data.find(b"\n", scanned)
            if nl < 0:
                quotes += data.count(b'"', scanned)
                scanned = len(data)
                break
            quotes += data.count(b'"', scanned, nl)
            scanned = nl + 1
            if quotes % 2 == 0:
                return _Header(data[:nl])
        if not block:
            return _Header(data if data else None)
    return _Header(None, known=False)


def _header_failure(
    files: list[_File], headers: list[_Header], dialect: brc._Dialect
) -> Optional[_Failed]:
    """The failure of the first file whose header is unlike the first
    file's (the first with a row), as the command line reports it, if
    any."""
    first = None
    for order, header in enumerate(headers):
        if not header.known:
            if first is None:
                # The first header is unknown: nothing to compare with.
                return None
            continue
        if header.row is None:
            continue
        if first is None:
            first = header.row
            continue
        if header.row == first:
            continue
        reason = _unlike(first, header.row, dialect[0])
        if reason is not None:
            error = brc._data_error(files[order].path, reason, line=1)
            return _Failed(order, (0,), 1, error)
    return None


def _unlike(first: bytes, row: bytes, delimiter: str) -> Optional[str]:
    """Why brc refuses a file whose header row is ``row`` after one whose
    header row is ``first`` (``None`` if it takes it): brc reads the two
    rows, each as a file, so that their cells are compared as it compares
    them (quotes removed, a final ``\\r`` dropped)."""
    with tempfile.TemporaryDirectory(prefix="brc-headers-") as tmp:
        paths = [os.path.join(tmp, "first"), os.path.join(tmp, "other")]
        for path, header in zip(paths, (first, row)):
            with open(path, "wb") as f:
                f.write(header + b"\n")
        try:
            brc._aggregate(paths, 1, "fast", brc.COLUMNS, (delimiter, [1], 1, [], False), None)
        except brc.DataError as e:
            if e.path == paths[1] and e.line == 1 and e.column is None:
                return e.reason
    return None


def _finish(
    fs: Any,
    files: list[_File],
    outcome: Union[_Part, _Failed],
    headers: list[_Header],
    dialect: Optional[brc._Dialect],
) -> _Part:
    """The last task: the merged partial and bad rows skipped, or the
    first error raised (a delimited file's header unlike the first file's
    among them), named by its file as the caller gave it and by its line
    (counted here, once, for the error reported) or Parquet row."""
    if headers and dialect is not None:
        unlike = _header_failure(files, headers, dialect)
        if unlike is not None and (
            not isinstance(outcome, _Failed)
            or (unlike.order, unlike.at) < (outcome.order, outcome.at)
        ):
            outcome = unlike
    if not isinstance(outcome, _Failed):
        return outcome
    error = outcome.error
    file = files[outcome.order]
    if not isinstance(error, brc.DataError):
        if isinstance(error, OSError):
            _name_as_given(error, file)
        raise error
    if error.line is None:
        # A Parquet file's: nothing to count.
        raise brc._data_error(
            file.shown, error.reason, row_group=error.row_group, row=error.row
        )
    line = outcome.line
    offset = outcome.offset
    if line is None:
        with fs.open(file.path, "rb") as f:
            line = brc._newlines_before(f, offset) + 1
    raise brc._data_error(
        file.shown, error.reason, line=line, offset=offset, column=error.column
    )

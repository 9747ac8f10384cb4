"""brc: exact, fast aggregation of ``<station>;<value>`` measurement files,
of delimited files (CSV, TSV) with a key and a value column, and of
Parquet files of stations and measures.

The engine is the ``brc`` Rust library (the same as the ``brc`` command);
this package is a thin layer over it:

- :func:`aggregate` aggregates files into a :class:`Summary`, without
  holding the GIL;
- :class:`Summary` prints as the command line does (``str(summary)``,
  :meth:`Summary.format`) and hands its columns to Arrow, Polars and pandas
  through the Arrow C stream interface: min, mean and max, or the
  statistics asked with ``stats=`` (count, sum, min, max, mean, stddev,
  stddev_pop, median, pN), each exact;
- :func:`partial`, :func:`partial_bytes` and :func:`merge` make and merge
  :class:`Partial` results (the exact, mergeable state, whose bytes are the
  documented ``brc-partial`` format), of whole files or byte ranges;
- :mod:`brc.dask` runs the aggregation on a Dask cluster.

Malformed input raises :class:`DataError` (a :class:`ValueError`) with the
command line's message, ``.path`` and ``.line`` (text; ``.column`` too in a
delimited file) or ``.row_group`` and ``.row`` (Parquet); I/O errors raise
:class:`OSError`. A delimited file's bad rows skipped with
``on_error="skip"`` are counted (:attr:`Summary.skipped`) and reported
with a :class:`SkippedRowsWarning`.

The glue needs optional extras: ``brc[arrow]`` (pyarrow), ``brc[polars]``,
``brc[pandas]``, ``brc[dask]``; without its extra, a method raises an
``ImportError`` that names it. ``__version__`` is the package's version.
"""

from __future__ import annotations

import os
from typing import BinaryIO, Callable, Iterable, Optional, Sequence, Union

from ._brc import ENGINES, MAX_DECIMALS, NULLS, DataError, Partial, Summary, __version__, merge
from ._brc import aggregate as _aggregate
from ._brc import check_decimals as _check_decimals
from ._brc import check_statistics as _check_statistics
# The one builder of DataErrors, the native half's, for the pure-Python
# half's own (brc.dask names an error's input as its caller spelt it).
from ._brc import data_error as _data_error
from ._brc import partial_bytes as _partial_bytes
from ._brc import partial_file as _partial_file
from ._errors import SkippedRowsWarning
from ._errors import warn_skipped as _warn_skipped

__all__ = [
    "COLUMNS", "ENGINES", "MAX_DECIMALS", "NULLS", "DataError", "Partial", "SkippedRowsWarning",
    "Summary", "aggregate", "merge", "partial", "partial_bytes",
]

# The magic bytes of the compressed formats brc reads (gzip, zstd): such an
# input cannot be cut, and belongs whole to the range holding its first byte.
_MAGIC = (b"\x1f\x8b", b"\x28\xb5\x2f\xfd")

# The bytes a Parquet file starts and ends with, by which brc tells one.
_PARQUET_MAGIC = b"PAR1"

# What a range's reader asks for past the range's end at a time, to finish
# its last line (a valid line is at most 107 bytes).
_TAIL_BLOCK = 4096

StrPath = Union[str, "os.PathLike[str]"]

#: A delimited file's column: a header name (``str``), or a 1-based
#: position (``int``).
ColumnRef = Union[str, int]

#: Statistics as ``stats=`` takes them: a comma-separated list, as the
#: command line's ``--stats`` (``"min,median,p99,max"``), or an iterable
#: of names (``["min", "median", "p99", "max"]``).
Stats = Union[str, Iterable[str]]

#: A dialect as the native half takes it: the delimiter, the key's
#: columns, the value's column, the cells that stand for a missing value,
#: whether bad rows are skipped.
_Dialect = tuple[str, list[ColumnRef], ColumnRef, list[str], bool]

# What a bad row of a delimited file does: fail the call, or be skipped
# and counted (the command line's ``--on-error``).
_ON_ERROR = ("fail", "skip")

#: The Parquet columns read by default: the names', the values' (those of
#: the One Trillion Row Challenge's files, and the command line's
#: ``--columns station,measure``).
COLUMNS = ("station", "measure")


def _paths(paths: Union[StrPath, Iterable[StrPath]]) -> list[str]:
    """``paths`` as a list of path strings: one path, or an iterable."""
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    return [os.fspath(p) for p in paths]


def _columns(columns: tuple[str, str]) -> tuple[str, str]:
    """``columns`` checked: two non-empty column names, else a
    :class:`ValueError` (as the command line's ``--columns NAME,VALUE``)."""
    if (
        isinstance(columns, (tuple, list))
        and len(columns) == 2
        and all(isinstance(c, str) and c for c in columns)
    ):
        return (columns[0], columns[1])
    raise ValueError(
        f"columns must be two column names as (name, value), such as {COLUMNS!r},"
        f" found {columns!r}"
    )


def _column(option: str, column: object) -> ColumnRef:
    """``column`` checked: a header name (a ``str``, taken as it is) or a
    1-based position (an ``int``)."""
    if isinstance(column, bool) or not isinstance(column, (str, int)):
        raise TypeError(
            f"{option} columns are header names (str) or 1-based positions (int),"
            f" found {column!r}"
        )
    if isinstance(column, int) and column < 1:
        raise ValueError(f"{option} column positions count from 1, found {column}")
    return column


def _delimiter(delimiter: object) -> str:
    """``delimiter`` checked as the command line's ``--delimiter``: one
    ASCII character, not a quote or a line break (``"\\t"`` for a tab)."""
    if delimiter == "\\t":
        return "\t"
    if not isinstance(delimiter, str):
        raise TypeError(f"delimiter must be a str of one character, found {delimiter!r}")
    if delimiter in ('"', "\n", "\r"):
        raise ValueError(f"{delimiter!r} cannot be a delimiter")
    if len(delimiter) != 1 or not delimiter.isascii():
        raise ValueError(f"expected one ASCII character (or \\t) as delimiter, found {delimiter!r}")
    return delimiter


def _dialect(
    csv: bool,
    tsv: bool,
    delimiter: Optional[str],
    key: Union[ColumnRef, Sequence[ColumnRef], None],
    value: Optional[ColumnRef],
    nulls: Union[str, Iterable[str], None],
    on_error: Optional[str] = None,
) -> Optional[_Dialect]:
    """The delimited-file options checked, as the command line's
    ``--csv``, ``--tsv``, ``--delimiter``, ``--key``, ``--value``,
    ``--null`` and ``--on-error``: ``None`` when none of ``csv``, ``tsv``
    and ``delimiter`` is given (the challenge's text), else what the
    native half takes."""
    if on_error is not None and on_error not in _ON_ERROR:
        raise ValueError(f"on_error must be 'fail' or 'skip', found {on_error!r}")
    chosen = [
        name
        for name, given in (("csv", csv), ("tsv", tsv), ("delimiter", delimiter is not None))
        if given
    ]
    if len(chosen) > 1:
        raise ValueError(f"{' and '.join(chosen)} cannot be given together: give one of them")
    if not chosen:
        for name, given in (
            ("key", key), ("value", value), ("nulls", nulls), ("on_error", on_error)
        ):
            if given is not None:
                raise ValueError(
                    f"{name}= is for delimited files: give csv=True, tsv=True or delimiter= too"
                )
        return None
    sep = "," if csv else "\t" if tsv else _delimiter(delimiter)
    if key is None:
        keys = [1]
    elif isinstance(key, (str, int)):
        keys = [_column("key", key)]
    else:
        keys = [_column("key", k) for k in key]
        if not keys:
            raise ValueError("key must name at least one column")
    value = 2 if value is None else _column("value", value)
    if nulls is None:
        missing = list(NULLS)
    elif isinstance(nulls, str):
        missing = [nulls]
    else:
        missing = list(nulls)
        for cell in missing:
            if not isinstance(cell, str):
                raise TypeError(f"nulls must be strings, found {cell!r}")
    return (sep, keys, value, missing, on_error == "skip")


def aggregate(
    paths: Union[StrPath, Iterable[StrPath]],
    *,
    threads: Optional[int] = None,
    engine: str = "fast",
    columns: tuple[str, str] = COLUMNS,
    csv: bool = False,
    tsv: bool = False,
    delimiter: Optional[str] = None,
    key: Union[ColumnRef, Sequence[ColumnRef], None] = None,
    value: Optional[ColumnRef] = None,
    nulls: Union[str, Iterable[str], None] = None,
    on_error: Optional[str] = None,
    decimals: Optional[int] = None,
    stats: Optional[Stats] = None,
) -> Summary:
    """Aggregates the measurements files at ``paths`` into one summary.

    ``paths`` is a path (``str`` or ``os.PathLike``) or a list of them; a
    directory stands for the regular files directly inside it, in byte order
    of their names, hidden files skipped, as on the command line. Files may
    be gzip or zstd compressed (told by their first bytes).

    A path may be an object's URL, as on the command line: ``s3://bucket/key``,
    ``s3://bucket/prefix/`` (every object under the prefix, in key order,
    those with a part of the key starting with ``.`` skipped) or
    ``http(s)://host/path`` (one object). S3 settings come from this
    process's ``AWS_*`` environment variables (``AWS_ENDPOINT_URL``,
    ``AWS_REGION``, ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
    ``AWS_SKIP_SIGNATURE=true``, ...). Text objects are streamed, Parquet
    ones read by byte ranges.

    A file that starts and ends with Parquet's magic bytes (``PAR1``) is
    read as Parquet, whatever its name, alone or among text files: names
    from the column ``columns[0]``, values from ``columns[1]`` (default
    :data:`COLUMNS`, ``("station", "measure")``, as the One Trillion Row
    Challenge writes them). Names are strings; values are numbers that are
    each exactly a number of tenths within ±99999999.9 (doubles nearest to
    one, such as ``12.3``, integers, decimals), never rounded.

    With ``csv=True``, ``tsv=True`` or ``delimiter=`` (one ASCII
    character), text files are read as delimited files with a header line,
    as the command line's ``--csv``, ``--tsv`` and ``--delimiter`` read
    them (RFC 4180 quoting, CRLF or LF, a byte-order mark; every file with
    the same header): the station (the key) from the column ``key``, the
    value from the column ``value``. A column is a header name (a ``str``,
    taken as it is, even ``"2"``) or a 1-based position (an ``int``);
    ``key`` may list several columns, whose cells are joined by ``|`` (a
    ``|`` or ``\\`` inside a cell escaped by ``\\``). By default the key is
    column 1 and the value column 2. Values are decimals of up to 18
    significant digits and 9 decimals, kept exact; cells equal to one of
    ``nulls`` (default :data:`NULLS`: empty, ``NA``, ``NaN``, ``null``) are
    missing values, counted per station and left out of its stats (a
    station with no value at all has a count of 0, and no min, mean or
    max). The summary holds the values at the scale of the most precise
    one (:attr:`Summary.scale`) and shows them with as many decimals, or
    ``decimals`` (0 to 9, the command line's ``--decimals``; for any
    input): padded, or rounded half toward +inf. Parquet files among the
    inputs are read as without a delimiter.

    A bad row of a delimited file (a value that is no number, an empty
    key, another number of cells than the header) fails the call, unless
    ``on_error="skip"`` (default ``"fail"``; the command line's
    ``--on-error``): then it is left out and counted, and the summary's
    :attr:`Summary.skipped` says how many and where the first five were
    (``(count, [(path, line), ...])``, by input and line), as does a
    :class:`SkippedRowsWarning` (``"4 bad rows skipped, the first at
    s.csv: line 3; ..."``, the command line's stderr line). A quoting
    fault, or a header unlike the first file's or without a column asked
    for, still fails.

    ``stats`` picks the statistics the summary shows, as the command
    line's ``--stats`` does (default: min, mean and max): a
    comma-separated list (``"count,min,median,p99,max"``) or an iterable
    of names, each one of ``count``, ``sum``, ``min``, ``max``, ``mean``,
    ``stddev``, ``stddev_pop``, ``median`` and ``pN`` for N in (0, 100)
    with up to 6 decimals (``p1``, ``p99.9``), in the order given, once
    each. Every one is exact: ``count`` and ``sum`` as integers (the sum
    rounded half toward +inf if fewer decimals are shown), ``min``,
    ``max`` and ``mean`` as without ``stats``;
    ``stddev`` (the sample standard deviation, over n - 1, SQL's
    ``stddev_samp``) and ``stddev_pop`` (over n) computed from the exact
    sums of the values and of their squares and rounded half up at the
    decimals shown, never through a float; ``median`` and ``pN`` are
    discrete quantiles (SQL's ``PERCENTILE_DISC``, DuckDB's
    ``quantile_disc``): the sorted values' element ``ceil(q * n)``,
    counted from 1, a value that occurs (``median`` is ``p50``, the lower
    middle value of an even count). A station lacking one (no values; one
    value, for ``stddev``) has ``None`` (null) for it. Each key keeps what
    the statistics need: the standard deviations a sum of squares, the
    quantiles a count per distinct value (memory grows with those, never
    with the rows). :attr:`Summary.statistics` names them; the
    :class:`Summary` says which columns its tables then have.

    ``threads`` is the number of worker threads (default: every core);
    ``engine`` one of :data:`ENGINES` (``"fast"`` by default, ``"naive"`` the
    reference; delimited files have one reader, whichever is named). The
    GIL is released while the files are read, so other Python threads run
    meanwhile.

    Raises :class:`DataError` for a malformed line (with ``.path`` and
    ``.line``), delimited row or cell (a value that is no number, a row of
    another number of cells than the header, a header without a column
    asked for or unlike the first file's: with ``.line``, the line the row
    starts on, and ``.column``, the cell's, or ``None``) or Parquet row (a
    null, a value such as ``12.34``: with ``.row_group`` and ``.row``, from
    0) and for a Parquet file brc cannot read (a missing column, named with
    the file's columns; a column of another type; a damaged file),
    :class:`OSError` when a file or object cannot be read
    (:class:`FileNotFoundError` for a missing file, bucket or key,
    :class:`PermissionError` for refused credentials, each with the command
    line's one-line message as ``strerror``), :class:`OverflowError` when a
    value does not fit 18 digits with ``decimals`` decimals, and
    :class:`ValueError` (or :class:`TypeError`, for an argument of the
    wrong type) for a bad ``threads`` (from 1 to 1024, as the command
    line's ``--threads``), ``engine``, ``columns``, ``decimals``, ``stats``
    (a name that is no statistic, none, or one named twice), or
    delimited-file options (more than one of ``csv``, ``tsv`` and
    ``delimiter``; ``key``, ``value``, ``nulls`` or ``on_error`` without
    them; ``on_error`` other than ``"fail"`` or ``"skip"``).
    """
    dialect = _dialect(csv, tsv, delimiter, key, value, nulls, on_error)
    summary = _aggregate(
        _paths(paths), threads, engine, _columns(columns), dialect, decimals, stats
    )
    _warn_skipped(summary.skipped, stacklevel=2)
    return summary


def partial(
    path: StrPath,
    *,
    start: Optional[int] = None,
    end: Optional[int] = None,
    threads: int = 1,
    columns: tuple[str, str] = COLUMNS,
    csv: bool = False,
    tsv: bool = False,
    delimiter: Optional[str] = None,
    key: Union[ColumnRef, Sequence[ColumnRef], None] = None,
    value: Optional[ColumnRef] = None,
    nulls: Union[str, Iterable[str], None] = None,
    on_error: Optional[str] = None,
    stats: Optional[Stats] = None,
) -> Partial:
    """The exact partial state of the file at ``path``, or of its byte range
    ``start..end``: the lines whose first byte lies in the range (the line
    that holds ``start`` belongs to the range before, unless it starts
    there), read to the end of the last one. Ranges that cover a file, each
    counted once, merge into the whole file's partial. A gzip or zstd file
    cannot be cut: it belongs whole to the range that holds its first byte.
    A Parquet file (read from ``columns``, as :func:`aggregate` reads it)
    is cut between row groups: a range reads the row groups whose first
    byte lies in it. ``path`` may be an object's URL, as for
    :func:`aggregate`: a Parquet object's range fetches only its row
    groups' column chunks, a text object's range only its bytes, from the
    one before, and the end of its last line; a compressed or delimited
    object belongs whole to the range that holds its first byte, as a
    compressed file does.

    The delimited-file options (``csv``, ``tsv``, ``delimiter``, ``key``,
    ``value``, ``nulls``, ``on_error``) are :func:`aggregate`'s: a range
    of a delimited file reads the rows that start in it, told apart by
    counting quotes from the file's start (a line break inside quotes
    belongs to its row), and its partial holds the values at the scale of
    the range's most precise one; partials of different scales merge
    exactly. There is no
    ``decimals``: a partial holds exact units (``partial.finish()`` gives a
    :class:`Summary`, and :meth:`Summary.with_decimals` shows it). A
    partial holds no count of bad rows skipped (``on_error="skip"``): they
    are reported by a :class:`SkippedRowsWarning` (its ``.count`` and
    ``.first``), each row by its line in the file.

    ``stats`` (:func:`aggregate`'s) makes each key keep what those
    statistics need (a sum of squares, counts per value), so that the
    partials' merge shows them: ``brc.merge(parts).finish()`` then
    :meth:`Summary.with_statistics`.

    Errors are those of :func:`aggregate`; a malformed line or row in a
    range is reported with its line number in the file. The GIL is
    released.
    """
    path = os.fspath(path)
    start = 0 if start is None else start
    end = 2**64 - 1 if end is None else end
    if not 0 <= start <= end:
        raise ValueError(f"expected 0 <= start <= end, found {start}..{end}")
    dialect = _dialect(csv, tsv, delimiter, key, value, nulls, on_error)
    partial, skipped = _partial_file(
        path, start, end, threads, _columns(columns), dialect, stats
    )
    _warn_skipped(skipped, stacklevel=2)
    return partial


def partial_bytes(
    data: bytes,
    *,
    first_line_is_whole: bool = True,
    threads: int = 1,
    columns: tuple[str, str] = COLUMNS,
    csv: bool = False,
    tsv: bool = False,
    delimiter: Optional[str] = None,
    key: Union[ColumnRef, Sequence[ColumnRef], None] = None,
    value: Optional[ColumnRef] = None,
    nulls: Union[str, Iterable[str], None] = None,
    on_error: Optional[str] = None,
    stats: Optional[Stats] = None,
) -> Partial:
    """The exact partial state of bytes the caller holds (a remote read).

    With ``first_line_is_whole`` the bytes are read as a file is (gzip or
    zstd data decompressed, a byte-order mark at the start skipped; a whole
    Parquet file read from ``columns``, as :func:`aggregate` reads one);
    without, everything up to the first ``\\n`` belongs to the bytes before
    and is skipped: read a range from the byte before its start, so that a
    line starting right at the range's start is kept. The bytes must end
    at a line's end (or the input's). A malformed line raises
    :class:`DataError` with ``.path`` ``"<bytes>"`` and its line and offset in
    ``data`` (a Parquet row: its row group and row).

    With the delimited-file options of :func:`aggregate` the bytes are a
    whole delimited file, header first (its rows are told apart from its
    start on): ``first_line_is_whole=False`` is then a
    :class:`ValueError`. A refused row raises :class:`DataError` with its
    line and column in ``data``; with ``on_error="skip"`` bad rows are
    skipped instead and reported by a :class:`SkippedRowsWarning`, each
    row by its line in ``data``, its path ``"<bytes>"``.

    ``stats`` makes each key keep what those statistics need, as for
    :func:`partial`.
    """
    dialect = _dialect(csv, tsv, delimiter, key, value, nulls, on_error)
    partial, skipped = _partial_bytes(
        data, first_line_is_whole, threads, _columns(columns), dialect, stats
    )
    _warn_skipped(skipped, stacklevel=2)
    return partial


def _range_bytes(read: Callable[[int, int], bytes], size: int, lo: int, end: int) -> bytes:
    """Bytes ``lo..end`` of an input of ``size`` bytes (``read(a, b)`` gives
    bytes ``a..b``), and then those up to the end of the last line: small
    reads until a ``\\n`` or the end of the input."""
    data = last = read(lo, end)
    tail = []
    at = end
    while not last.endswith(b"\n") and at < size:
        block = read(at, min(at + _TAIL_BLOCK, size))
        cut = block.find(b"\n")
        last = block if cut < 0 else block[: cut + 1]
        tail.append(last)
        at += len(block)
        if cut >= 0 or not block:
            break
    return data + b"".join(tail)


def _newlines_before(f: BinaryIO, offset: int) -> int:
    """The number of ``\\n`` in the next ``offset`` bytes of ``f``."""
    count = 0
    while offset > 0:
        block = f.read(min(offset, 16 << 20))
        if not block:
            break
        count += block.count(b"\n")
        offset -= len(block)
    return count

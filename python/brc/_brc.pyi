"""The native half of :mod:`brc`, a thin layer over the ``brc`` Rust library."""

from typing import Any, Optional, Sequence

__version__: str
"""The package's version (its Cargo crate's)."""

ENGINES: list[str]
"""The engines' names, from the reference (``"naive"``) to the default (``"fast"``)."""

class DataError(ValueError):
    """Malformed input.

    ``str(error)`` is the message the ``brc`` command prints after ``brc: ``:
    ``<path>: line <N>: expected ..., found ...`` for a text line,
    ``<path>: row group <G>, row <R>: expected ..., found ...`` for a
    Parquet row, ``<path>: <reason>`` for a Parquet file brc cannot read (a
    missing column, a column of another type, a damaged file, a sum beyond
    64 bits).
    """

    path: str
    """The input the malformed line or row is in."""
    line: Optional[int]
    """The line's 1-based number (``None`` in Parquet)."""
    offset: Optional[int]
    """The byte offset of the line's first byte (``None`` in a partial or
    in Parquet)."""
    row_group: Optional[int]
    """The Parquet row group the refused row is in, from 0 (``None`` in
    text, and for an error of the whole file)."""
    row: Optional[int]
    """The refused row's number within its row group, from 0 (``None`` as
    ``row_group`` is)."""
    reason: str
    """What is wrong: ``expected ..., found ...``."""

class Summary:
    """The result of an aggregation: each station's min, mean and max.

    Stations are sorted by the bytes of their names. ``str(summary)`` is the
    official one-line result the ``brc`` command prints (without its final
    newline); ``len(summary)`` the number of stations. Summaries compare
    equal when every station's stats are equal.

    It implements the Arrow PyCapsule interface (``__arrow_c_stream__``):
    ``pyarrow.table(summary)``, ``polars.DataFrame(summary)`` and other
    Arrow consumers read its columns without a copy through Python objects.
    Columns: ``station`` (string), ``min``, ``mean``, ``max``
    (decimal128(3, 1): the exact one-decimal values printed, the mean rounded
    as the official result rounds it; decimal128(9, 1) when a value lies
    beyond ±99.9, as Parquet values may) and ``count`` (int64).
    """

    def __len__(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...
    @staticmethod
    def from_partial_bytes(data: bytes) -> "Summary":
        """The summary of a partial in the ``brc-partial`` format; summaries
        pickle as their partial, which holds every station's exact state."""
    def format(self, format: str) -> str:
        """The text ``brc --format <format>`` writes, final newline included.

        ``format`` is ``"official"``, ``"lines"``, ``"json"``, ``"csv"`` or
        ``"partial"`` (the ``brc-partial`` format, as ``bytes(Partial)``).
        """
    def to_arrow(self) -> Any:
        """The stations as a ``pyarrow.Table`` (needs pyarrow: ``brc[arrow]``;
        without it, an ``ImportError`` that says so)."""
    def to_polars(self) -> Any:
        """The stations as a ``polars.DataFrame`` (needs polars and pyarrow:
        ``brc[polars]``)."""
    def to_pandas(self) -> Any:
        """The stations as a ``pandas.DataFrame`` with Arrow-backed columns
        (``pandas.ArrowDtype``: exact decimals; needs pandas and pyarrow:
        ``brc[pandas]``)."""
    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object:
        """An ``arrow_array_stream`` PyCapsule of the stations (one batch)."""

class Partial:
    """The exact, mergeable state of an aggregation: per station its count,
    sum, min and max in integer tenths, sorted by name bytes.

    Partials of any pieces of an input merge (:func:`brc.merge`) into the
    partial of the whole, exactly, in any order. ``bytes(partial)`` is the
    documented ``brc-partial v1`` text format (docs/PARTIAL-FORMAT.md), which
    ``brc merge`` reads; partials pickle as those bytes.
    """

    @staticmethod
    def from_bytes(data: bytes) -> "Partial":
        """Parses the ``brc-partial`` format (several partials one after the
        other are merged). A malformed or cut partial raises
        :class:`DataError` with its line."""
    def finish(self) -> Summary:
        """The final result: the summary of everything merged in."""
    def __bytes__(self) -> bytes: ...
    def __len__(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...

def merge(partials: Sequence[Partial]) -> Partial:
    """Merges partials into the partial of all their inputs (none: the empty
    partial). Raises ``OverflowError`` if a total leaves 64 bits."""

def partial_file(
    path: str, start: int, end: int, threads: Optional[int], columns: tuple[str, str]
) -> Partial:
    """See :func:`brc.partial`: the partial of a byte range of a file."""

def partial_bytes(
    data: bytes, first_line_is_whole: bool, threads: Optional[int], columns: tuple[str, str]
) -> Partial:
    """See :func:`brc.partial_bytes`."""

def aggregate(
    paths: Sequence[str], threads: Optional[int], engine_name: str, columns: tuple[str, str]
) -> Summary:
    """See :func:`brc.aggregate`, which normalises the arguments."""

def data_error(
    path: str,
    reason: str,
    *,
    line: Optional[int] = None,
    offset: Optional[int] = None,
    row_group: Optional[int] = None,
    row: Optional[int] = None,
) -> DataError:
    """The :class:`DataError` (not raised) for ``path`` at line ``line``
    (starting at byte ``offset``, if known), at row ``row`` of row group
    ``row_group``, or neither, with the command line's message; a
    ``ValueError`` for any other mix."""

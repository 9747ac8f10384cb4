"""The native half of :mod:`brc`, a thin layer over the ``brc`` Rust library."""

from typing import Any, Iterable, Optional, Sequence, Union

__version__: str
"""The package's version (its Cargo crate's)."""

ENGINES: list[str]
"""The engines' names, from the reference (``"naive"``) to the default (``"fast"``)."""

NULLS: tuple[str, ...]
"""The value cells of a delimited file that stand for a missing value unless
told otherwise: ``("", "NA", "NaN", "null")`` (the command line's ``--null``)."""

MAX_DECIMALS: int
"""The most decimals a value may have and a summary may be shown with: 9."""

class DataError(ValueError):
    """Malformed input.

    ``str(error)`` is the message the ``brc`` command prints after ``brc: ``:
    ``<path>: line <N>: expected ..., found ...`` for a text line,
    ``<path>: line <N>, column <C>: expected ..., found ...`` for a cell of
    a delimited file (``<path>: line <N>: ...`` for a whole row or its
    header), ``<path>: row group <G>, row <R>: expected ..., found ...``
    for a Parquet row, ``<path>: <reason>`` for a Parquet file brc cannot
    read (a missing column, a column of another type, a damaged file, a sum
    beyond 64 bits).
    """

    path: str
    """The input the malformed line or row is in."""
    line: Optional[int]
    """The line's 1-based number; in a delimited file, the line its row
    starts on (``None`` in Parquet)."""
    offset: Optional[int]
    """The byte offset of the line's first byte (``None`` in a partial, in
    a delimited file or in Parquet)."""
    column: Optional[int]
    """The 1-based column of the delimited file's cell at fault (``None``
    for a whole row, and in other inputs)."""
    row_group: Optional[int]
    """The Parquet row group the refused row is in, from 0 (``None`` in
    text, and for an error of the whole file)."""
    row: Optional[int]
    """The refused row's number within its row group, from 0 (``None`` as
    ``row_group`` is)."""
    reason: str
    """What is wrong: ``expected ..., found ...``."""

class Summary:
    """The result of an aggregation: each station's min, mean and max, or
    the statistics asked (:attr:`statistics`).

    Stations (a delimited file's keys) are sorted by the bytes of their
    names. ``str(summary)`` is the official one-line result the ``brc``
    command prints (without its final newline); ``len(summary)`` the number
    of stations. Summaries compare equal when every station's stats (with
    what they keep for the statistics: a sum of squares, counts per
    value), the scale, the decimals shown, whether missing values are
    counted, the statistics shown and the bad rows skipped
    (:attr:`skipped`) are equal.

    It implements the Arrow PyCapsule interface (``__arrow_c_stream__``):
    ``pyarrow.table(summary)``, ``polars.DataFrame(summary)`` and other
    Arrow consumers read its columns without a copy through Python objects.
    Columns: ``station`` (string), ``min``, ``mean``, ``max`` (decimals: the
    exact values printed, the mean rounded as the command line rounds it),
    ``count`` (int64), and ``missing`` (int64) when the summary counts
    missing values (:attr:`counts_missing`, a delimited file's). The
    challenge's tenths are decimal128(3, 1), or decimal128(9, 1) when a
    value lies beyond ±99.9 (as Parquet values may); any other summary's
    values are decimal128(18, :attr:`decimals`), SQL's ``DECIMAL(18, S)``
    (38 digits where ``with_decimals`` padded one past 18), nullable: a
    station with no value at all (count 0) has a null min, mean and max.

    A summary shown with statistics (``stats=``, :meth:`with_statistics`)
    has, after ``station``, one column per statistic, in the order asked,
    named as the command line names it (``count``, ``sum``, ``min``,
    ``max``, ``mean``, ``stddev``, ``stddev_pop``, ``median``, ``p99.9``):
    ``count`` uint64; ``sum`` decimal128(38, S); each other
    decimal128(18, S) (38 digits for a sample standard deviation that
    needs more: it may reach √2 times half the range), S the decimals
    shown, each the exact value printed; then ``missing`` (int64) when the
    summary counts missing values. A station lacking a statistic (no
    values; one value, for ``stddev``) has a null, so ``stddev`` is always
    nullable, and every statistic but ``count`` is for a summary that
    counts missing values. ``str(summary)`` and :meth:`format` show the
    statistics as the command line's ``--stats`` does (``-`` for one
    lacking, an empty CSV cell, JSON's ``null``).
    """

    def __len__(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...
    @staticmethod
    def from_partial_bytes(
        data: bytes, decimals: Optional[int] = None, stats: Optional[Stats] = None
    ) -> "Summary":
        """The summary of a partial in the ``brc-partial`` format, shown with
        ``decimals`` (default: its scale) and the statistics ``stats``
        (default: min, mean and max), as ``brc merge --stats LIST`` shows
        them: a ``ValueError`` for a statistic that needs what the
        partial's keys did not keep. Summaries pickle as their partial,
        which holds every station's exact state, with their decimals, their
        statistics and the bad rows skipped."""
    @staticmethod
    def _restore(
        data: bytes, decimals: int, skipped: "Skipped", stats: Optional[list[str]] = None
    ) -> "Summary":
        """A pickled summary: see ``__reduce__``."""
    def _skipping(self, skipped: "Skipped") -> "Summary":
        """The same summary, its run having skipped the bad rows
        ``skipped`` (for :mod:`brc.dask`, whose tasks count them)."""
    @property
    def skipped(self) -> "Skipped":
        """The bad rows its run skipped (a delimited file's, with
        ``on_error="skip"``): ``(count, [(path, line), ...])``, the first
        five by input (in the order read) and line, each input's path as
        the caller gave it (a file in a directory given as ``dir/name``)
        and the 1-based line its row starts on; ``(0, [])`` when none
        was."""
    @property
    def scale(self) -> int:
        """The decimals of the units its values are held in: the most any
        value had (1 for the challenge's tenths)."""
    @property
    def decimals(self) -> int:
        """The decimals its values are shown with: :attr:`scale`, unless
        :meth:`with_decimals` (or ``decimals=``) said otherwise."""
    @property
    def counts_missing(self) -> bool:
        """Whether it counts missing values (a delimited file's empty or
        null cells): its ``csv`` and ``json`` formats and its Arrow columns
        then say how many each station had."""
    def with_decimals(self, decimals: int) -> "Summary":
        """The same summary shown with ``decimals`` decimals (0 to 9, the
        command line's ``--decimals``): padded with zeros, or rounded half
        toward +inf, the statistics it shows kept. Raises ``OverflowError``
        if a value does not fit 18 digits so, ``ValueError`` for
        ``decimals`` out of range."""
    @property
    def statistics(self) -> Optional[list[str]]:
        """The statistics it shows, by name, in order, as the command line
        names them (``["count", "median", "p99.9"]``; ``p05`` is named
        ``p5``); ``None`` for min, mean and max, the default (whose tables
        have a ``count`` column too)."""
    def with_statistics(self, stats: Stats) -> "Summary":
        """The same summary shown with the statistics ``stats`` (see
        :func:`brc.aggregate`), as the command line's ``--stats``. Raises
        ``ValueError`` for a name that is no statistic, none, one named
        twice, or one that needs what its stations did not keep (a
        median of a summary aggregated without a quantile asked); a
        ``TypeError`` for ``stats`` of the wrong type."""
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
    sum, min and max in integer units (tenths for the challenge's text and
    Parquet; a delimited file's at the scale of its most precise value),
    its count of missing values (a delimited file's), and what the
    statistics asked of its run (``stats=``) need: the sum of squares,
    the count of each distinct value; sorted by name bytes.

    Partials of any pieces of an input merge (:func:`brc.merge`) into the
    partial of the whole, exactly, in any order (values of different
    scales brought to the finest). ``bytes(partial)`` is the documented
    ``brc-partial`` text format (docs/PARTIAL-FORMAT.md: ``v1`` for tenths,
    ``v2`` for a delimited file's, ``v3`` for keys keeping a sum of
    squares or counts per value), which ``brc merge`` reads; partials
    pickle as those bytes. A merge keeps what all its partials keep.
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
    partial). Raises ``OverflowError`` if a total leaves the format's
    integers (64 bits for tenths' sums, 128 for a delimited file's) or a
    value 64 bits at the finest scale."""

Dialect = tuple[str, list[Union[str, int]], Union[str, int], list[str], bool]
"""A delimited file's dialect as :func:`brc._dialect` checks and gives it:
the delimiter, the key's columns, the value's column (names or 1-based
positions), the cells that stand for a missing value, whether bad rows are
skipped (``on_error="skip"``)."""

Skipped = tuple[int, list[tuple[str, int]]]
"""Bad rows skipped: how many, and the first five as ``(path, line)``."""

Stats = Union[str, Iterable[str]]
"""Statistics as ``stats=`` takes them: a comma-separated list (the
command line's ``--stats``), or an iterable of names; a ``TypeError``
for anything else."""

def partial_file(
    path: str,
    start: int,
    end: int,
    threads: Optional[int],
    columns: tuple[str, str],
    dialect: Optional[Dialect] = None,
    stats: Optional[Stats] = None,
) -> tuple[Partial, Skipped]:
    """See :func:`brc.partial`: the partial of a byte range of a file, each
    key keeping what ``stats`` need, and the bad rows it skipped (which a
    partial does not hold)."""

def partial_bytes(
    data: bytes,
    first_line_is_whole: bool,
    threads: Optional[int],
    columns: tuple[str, str],
    dialect: Optional[Dialect] = None,
    stats: Optional[Stats] = None,
) -> tuple[Partial, Skipped]:
    """See :func:`brc.partial_bytes`: the partial, each key keeping what
    ``stats`` need, and the bad rows skipped (which a partial does not
    hold), named ``<bytes>``."""

def aggregate(
    paths: Sequence[str],
    threads: Optional[int],
    engine_name: str,
    columns: tuple[str, str],
    dialect: Optional[Dialect] = None,
    decimals: Optional[int] = None,
    stats: Optional[Stats] = None,
) -> Summary:
    """See :func:`brc.aggregate`, which normalises the arguments."""

def check_decimals(decimals: int) -> int:
    """``decimals`` if a summary can be shown with it (0 to 9), else a
    ``ValueError``: for a caller that checks before a long run."""

def check_statistics(stats: Optional[Stats] = None) -> Optional[list[str]]:
    """The names of the statistics ``stats`` names, as
    :attr:`Summary.statistics` gives them (``None`` for ``None``), else a
    ``ValueError``: for a caller that checks before a long run and hands
    them on (:mod:`brc.dask`)."""

def data_error(
    path: str,
    reason: str,
    *,
    line: Optional[int] = None,
    offset: Optional[int] = None,
    column: Optional[int] = None,
    row_group: Optional[int] = None,
    row: Optional[int] = None,
) -> DataError:
    """The :class:`DataError` (not raised) for ``path`` at line ``line``
    (starting at byte ``offset``, if known, or at the cell in column
    ``column`` of a delimited file's row), at row ``row`` of row group
    ``row_group``, or neither, with the command line's message; a
    ``ValueError`` for any other mix."""

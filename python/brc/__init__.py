"""brc: exact, fast aggregation of ``<station>;<value>`` measurement files.

The engine is the ``brc`` Rust library (the same as the ``brc`` command);
this package is a thin layer over it:

- :func:`aggregate` aggregates files into a :class:`Summary`, without
  holding the GIL;
- :class:`Summary` prints as the command line does (``str(summary)``,
  :meth:`Summary.format`) and hands its columns to Arrow, Polars and pandas
  through the Arrow C stream interface;
- :mod:`brc.dask` runs the aggregation on a Dask cluster.

Malformed input raises :class:`DataError` (a :class:`ValueError`) with the
command line's message, ``.path`` and ``.line``; I/O errors raise
:class:`OSError`.
"""

from __future__ import annotations

import os
from typing import Iterable, Optional, Union

from ._brc import ENGINES, DataError, Summary
from ._brc import aggregate as _aggregate

__all__ = ["ENGINES", "DataError", "Summary", "aggregate"]

StrPath = Union[str, "os.PathLike[str]"]


def _paths(paths: Union[StrPath, Iterable[StrPath]]) -> list[str]:
    """``paths`` as a list of path strings: one path, or an iterable."""
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    return [os.fspath(p) for p in paths]


def aggregate(
    paths: Union[StrPath, Iterable[StrPath]],
    *,
    threads: Optional[int] = None,
    engine: str = "fast",
) -> Summary:
    """Aggregates the measurements files at ``paths`` into one summary.

    ``paths`` is a path (``str`` or ``os.PathLike``) or a list of them; a
    directory stands for the regular files directly inside it, in byte order
    of their names, hidden files skipped, as on the command line. Files may
    be gzip or zstd compressed (told by their first bytes).

    ``threads`` is the number of worker threads (default: every core);
    ``engine`` one of :data:`ENGINES` (``"fast"`` by default, ``"naive"`` the
    reference). The GIL is released while the files are read, so other
    Python threads run meanwhile.

    Raises :class:`DataError` for a malformed line (with ``.path`` and
    ``.line``), :class:`OSError` when a file cannot be read, and
    :class:`ValueError` for a bad ``threads`` or ``engine``.
    """
    return _aggregate(_paths(paths), threads, engine)

"""The errors the pure-Python half raises itself, each built in one place:
a path that names no file, and a module that an optional extra installs;
and the warning for bad rows skipped."""

from __future__ import annotations

import errno
import importlib
import os
import warnings
from types import ModuleType
from typing import Sequence


def not_found(path: str) -> FileNotFoundError:
    """The error for ``path`` (as the caller gave it) naming no file: the
    command line's, and what :func:`brc.aggregate` raises for a missing
    file."""
    return FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)


def import_for(extra: str, name: str) -> ModuleType:
    """The module ``name``, which the package's extra ``extra`` installs.

    The glue modules (pyarrow, polars, pandas, Dask, fsspec) are optional:
    a plain ``pip install`` leaves them out, so a missing one is reported
    with the extra that brings it (as a ``ModuleNotFoundError``, an
    ``ImportError``). The native half's Arrow methods of
    :class:`brc.Summary` import through it too.
    """
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        missing = e.name or name
        raise ModuleNotFoundError(
            f"no module named {missing!r}, which brc[{extra}] installs:"
            f" pip install 'brc[{extra}]' (from the source tree: './python[{extra}]')",
            name=missing,
        ) from e


class SkippedRowsWarning(UserWarning):
    """Bad rows of a delimited file were skipped (``on_error="skip"``).

    Its message is the line the command line prints on stderr after
    ``brc: ``: ``4 bad rows skipped, the first at s.csv: line 3; ...``.
    ``.count`` is how many were skipped, ``.first`` where the first five
    were: ``[(path, line), ...]``, each input's path as the caller gave it
    and the 1-based line its row starts on.
    """

    def __init__(self, count: int, first: Sequence[tuple[str, int]]) -> None:
        places = "; ".join(f"{path}: line {line}" for path, line in first)
        super().__init__(f"{count} bad rows skipped, the first at {places}")
        self.count = count
        self.first = list(first)


def warn_skipped(skipped: tuple[int, Sequence[tuple[str, int]]], stacklevel: int) -> None:
    """Warns with a :class:`SkippedRowsWarning` if ``skipped``, ``(count,
    first)``, counts any row, on behalf of the caller ``stacklevel`` frames
    up from the function that calls this one."""
    count, first = skipped
    if count:
        warnings.warn(SkippedRowsWarning(count, first), stacklevel=stacklevel + 1)

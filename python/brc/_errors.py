"""The errors the pure-Python half raises itself, each built in one place:
a path that names no file, and a module that an optional extra installs."""

from __future__ import annotations

import errno
import importlib
import os
from types import ModuleType


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

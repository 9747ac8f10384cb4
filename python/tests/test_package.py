"""The package as installed: its version, and the optional extras that a
plain `pip install` leaves out."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys

import pytest

import brc
from conftest import SAMPLES


def test_the_version_is_the_installed_distribution_s():
    assert brc.__version__ == importlib.metadata.version("brc")


# Runs CALL in a fresh interpreter in which MODULES are not installed: a
# finder ahead of the others says so of them and their submodules, as the
# import system does when no finder finds a module. Prints what it raised.
WITHOUT = """
import json, sys

class Uninstalled:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in json.loads(sys.argv[1]):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, Uninstalled())
import brc, brc.dask
summary = brc.aggregate(sys.argv[2])
try:
    CALL
except ImportError as e:
    print(json.dumps([type(e).__name__, str(e), e.name]))
"""


@pytest.mark.parametrize(
    "missing, call, extra",
    [
        (["pyarrow"], "summary.to_arrow()", "arrow"),
        (["polars"], "summary.to_polars()", "polars"),
        (["pyarrow"], "summary.to_polars()", "polars"),
        (["pandas"], "summary.to_pandas()", "pandas"),
        (["pyarrow"], "summary.to_pandas()", "pandas"),
        (["fsspec"], "brc.dask.aggregate(sys.argv[2])", "dask"),
        (["dask"], "brc.dask.aggregate(sys.argv[2])", "dask"),
    ],
)
def test_a_missing_extra_is_named(missing, call, extra):
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT.replace("CALL", call), json.dumps(missing),
         str(SAMPLES / "measurements-1.txt")],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    kind, message, name = json.loads(done.stdout)
    assert (kind, name) == ("ModuleNotFoundError", missing[0])
    assert message == (
        f"no module named {missing[0]!r}, which brc[{extra}] installs:"
        f" pip install 'brc[{extra}]' (from the source tree: './python[{extra}]')"
    )

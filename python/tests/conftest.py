"""Shared fixtures: the `brc` command line to compare with, random
measurements files, and object stores (moto's S3 server)."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path
from typing import Optional

import pytest
from distributed import Client, LocalCluster

from objectstores import MotoServer

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "tests" / "data" / "1brc"
COMPRESSED = ROOT / "tests" / "data" / "compressed"


def brc_binary() -> str:
    """The `brc` command: $BRC_BIN, else the repository's build, else PATH."""
    if os.environ.get("BRC_BIN"):
        return os.environ["BRC_BIN"]
    for profile in ("release", "debug"):
        built = ROOT / "target" / profile / "brc"
        if built.exists():
            return str(built)
    found = shutil.which("brc")
    if found is None:
        pytest.fail("no brc binary: run `cargo build` or set BRC_BIN")
    return found


class Cli:
    """Runs the `brc` command line."""

    def __init__(self, binary: str):
        self.binary = binary

    def run(self, *args: str, env: Optional[dict[str, str]] = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [self.binary, *map(str, args)], capture_output=True, check=False, env=env
        )

    def output(self, *args: str, env: Optional[dict[str, str]] = None) -> str:
        done = self.run(*args, env=env)
        assert done.returncode == 0, done.stderr.decode()
        return done.stdout.decode()


@pytest.fixture
def cli() -> Cli:
    return Cli(brc_binary())


# Names that stress every layer: multi-byte UTF-8 (2, 3 and 4 bytes), CSV
# and JSON specials, one of 100 bytes.
NAMES = [
    "Abha", "Zürich", "Kraków, PL", 'say "hi"', "東京", "🌡️ probe",
    "x", "São Paulo", "a\\b", "é" * 50, "Ω" * 33 + "z",
]


def write_random(path: Path, rows: int, seed: int, *, stations: int = 40,
                 final_newline: bool = True) -> Path:
    """A random measurements file of `rows` rows over about `stations`
    names (some fixed awkward ones, the rest random), reproducible by
    `seed`."""
    rng = random.Random(seed)
    names = NAMES + [
        "".join(rng.choice("abcdefghéöü東") for _ in range(rng.randint(1, 12)))
        for _ in range(max(0, stations - len(NAMES)))
    ]
    lines = [
        f"{rng.choice(names)};{rng.randint(-999, 999) / 10:.1f}" for _ in range(rows)
    ]
    text = "\n".join(lines) + ("\n" if final_newline and lines else "")
    path.write_bytes(text.encode())
    return path


@pytest.fixture
def random_file(tmp_path):
    """Makes random measurements files in the test's directory."""
    counter = iter(range(1_000_000))

    def make(rows: int, seed: int, **kwargs) -> Path:
        return write_random(tmp_path / f"random-{next(counter)}.txt", rows, seed, **kwargs)

    return make


# Object stores: moto's S3 server, one for the whole run (each test module
# uses buckets of its own), and one that checks credentials.

@pytest.fixture(scope="session")
def moto() -> MotoServer:
    with MotoServer() as server:
        yield server


@pytest.fixture(scope="session")
def moto_auth() -> MotoServer:
    with MotoServer(auth=True) as server:
        yield server


def aws_env(**variables: str) -> dict[str, str]:
    """This process's environment, without its AWS_* variables (a
    developer's own credentials or profile), with ``variables``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(variables)
    return env


@pytest.fixture(scope="module")
def client():
    """A real two-process Dask cluster, shared by a module's tests."""
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, Client(cluster, set_as_default=False) as client:
        yield client

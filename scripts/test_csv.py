"""Tests of the lab's CSV set: the Python model and the tools' adapters
(scripts/compare/csv_tools.py) on small inputs written out here, then
scripts/csv.sh itself on a small generated file: `--check` (brc against the
model, DuckDB and Polars; datamash and Miller too when installed), a brc
that disagrees caught, and the timing path with a stand-in for
scripts/ab.py, whose output the renderer must read. Nothing is timed.

Usage: BRC=target/debug/brc python3 scripts/test_csv.py
(a Python with duckdb and polars). Until brc reads CSV (`--csv` in its
help), the model stands in for it (`csv.sh --model`) and a stand-in brc
built on the model plays its part where its answers are compared.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "compare"))
sys.path.insert(0, HERE)

import csv_tools  # noqa: E402
import render_benchmarks  # noqa: E402

BRC = os.path.abspath(os.environ.get("BRC", os.path.join(HERE, "..", "target", "debug", "brc")))


def brc_reads_csv():
    done = subprocess.run([BRC, "--help"], capture_output=True, text=True)
    return "--csv" in done.stdout


#: A file with what real exports hold: a BOM, CRLF, quoted names with
#: commas, doubled quotes and a line break, the missing spellings, values
#: of 0 to 3 decimals in every spelling brc accepts, and a name whose every
#: value is missing.
SMALL = (
    "\ufeffsite,reading,unit\r\n"
    '"Oslo, NO",1.5,C\r\n'
    '"Oslo, NO",-2.25,C\r\n'
    '"Oslo, NO",,C\r\n'
    'Bergen,+7,C\r\n'
    'Bergen,.5,C\r\n'
    'Bergen,NA,C\r\n'
    '"The ""Rock""",1.,C\r\n'
    '"The ""Rock""",-0.001,C\r\n'
    '"two\nlines",0.125,C\r\n'
    'Zed,null,C\r\n'
    'Zed,NaN,C\r\n'
    'zed,-1.0005e1,C\r\n'
)


class Model(unittest.TestCase):
    def test_rounding_is_half_toward_plus_infinity(self):
        self.assertEqual(csv_tools.mean(25, 2), 13)
        self.assertEqual(csv_tools.mean(-25, 2), -12)
        self.assertEqual(csv_tools.mean(-1, 3), 0)
        self.assertEqual(csv_tools.mean(-2, 3), -1)
        self.assertEqual(csv_tools.mean(7, 7), 1)
        self.assertEqual(csv_tools.text(0, 3), "0.000")
        self.assertEqual(csv_tools.text(-5, 3), "-0.005")
        self.assertEqual(csv_tools.text(-12_345, 3), "-12.345")
        self.assertEqual(csv_tools.text(7, 0), "7")
        self.assertEqual(csv_tools.to_units("1.5"), 1500)
        self.assertEqual(csv_tools.rounded_units("123.45600000001"), 123_456)
        with self.assertRaises(ValueError):
            csv_tools.to_units("1.2345")

    def test_the_model_reads_rfc_4180_and_decimals_exactly(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "small.csv")
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(SMALL)
            rows, scale = csv_tools.model_rows(path, "site", "reading")
            # -1.0005e1 is -10.005: 3 decimals, the most of any value.
            self.assertEqual(scale, 3)
            line = csv_tools.official([r[:5] for r in rows], scale)
            # Sorted by UTF-8 bytes (upper case first); Zed, with no value,
            # left out; means: 3.75 / 2, -0.75 / 2, 0.999 / 2.
            self.assertEqual(
                line,
                "{Bergen=0.500/3.750/7.000, Oslo, NO=-2.250/-0.375/1.500, "
                'The "Rock"=-0.001/0.500/1.000, two\nlines=0.125/0.125/0.125, '
                "zed=-10.005/-10.005/-10.005}",
            )
            self.assertEqual(
                csv_tools.csv_output(rows, scale),
                "station,min,mean,max,count,missing\n"
                "Bergen,0.500,3.750,7.000,2,1\n"
                '"Oslo, NO",-2.250,-0.375,1.500,2,1\n'
                '"The ""Rock""",-0.001,0.500,1.000,2,0\n'
                '"two\nlines",0.125,0.125,0.125,1,0\n'
                "zed,-10.005,-10.005,-10.005,1,0",
            )

    def test_datamash_and_miller_outputs_are_read_exactly(self):
        datamash = ["Oslo, NO\t-2.25\t1.5\t-0.75\t2\n", "b\t7\t7\t7.0000000000001\t1\n"]
        self.assertEqual(
            csv_tools.official(csv_tools.datamash_rows(datamash)),
            "{Oslo, NO=-2.250/-0.375/1.500, b=7.000/7.000/7.000}",
        )
        miller = textwrap.dedent(
            """\
            [
            {
              "site": "Oslo, NO",
              "reading_min": -2.250,
              "reading_max": 1.500,
              "reading_sum": -0.75,
              "reading_count": 2
            },
            {
              "site": 1.50,
              "reading_min": 0.125,
              "reading_max": 0.125,
              "reading_sum": 0.12499999999999999,
              "reading_count": 1
            }
            ]
            """
        )
        # A site Miller took for a number keeps its text.
        self.assertEqual(
            csv_tools.official(csv_tools.miller_rows(miller)),
            "{1.50=0.125/0.125/0.125, Oslo, NO=-2.250/-0.375/1.500}",
        )


#: A brc for `csv.sh --check` built on the model: `generate` is the real
#: brc's, an aggregation the model's answer, spoiled when BREAK is set.
FAKE_BRC = """\
#!/bin/sh
if [ "$1" = generate ]; then exec "$REAL_BRC" "$@"; fi
for a in "$@"; do file=$a; done
case " $* " in
*" --format csv "*) exec "$PYTHON" "$TOOLS_PY" model "$file" --format csv ;;
esac
if [ -n "${BREAK:-}" ]; then
    "$PYTHON" "$TOOLS_PY" model "$file" | sed 's/=/=1/'
else
    exec "$PYTHON" "$TOOLS_PY" model "$file"
fi
"""

#: scripts/ab.py's stand-in: runs each command once, as the real one would
#: (so a command that fails still fails), and prints fixed figures.
FAKE_AB = """\
import subprocess, sys
args = sys.argv[1:]
pairs = args[args.index("--pairs") + 1]
a, b = args[-2:]
for command in (a, b):
    subprocess.run(command, shell=True, check=True, stdout=subprocess.DEVNULL)
print("A: median wall 0.100 s, CPU 0.200 s")
print("B: median wall 1.000 s, CPU 1.900 s")
print(f"B/A over {pairs} pairs: CPU 9.500x (pairs 9.00-10.00x), wall 10.000x")
"""


def slow_tools():
    """datamash and Miller, where installed."""
    return [t for t, command in (("datamash", "datamash"), ("miller", "mlr")) if shutil.which(command)]


class CsvSh(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def run_csv_sh(self, *args, scripts=HERE, **env):
        base = dict(os.environ)
        base.update(BRC=BRC, PYTHON=sys.executable)
        base.update(env)
        return subprocess.run(
            ["bash", os.path.join(scripts, "csv.sh"), *args],
            env=base, capture_output=True, text=True, timeout=600,
        )

    def fake_brc(self):
        path = os.path.join(self.dir.name, "brc")
        with open(path, "w", encoding="utf-8") as f:
            f.write(FAKE_BRC)
        os.chmod(path, 0o755)
        return dict(BRC=path, REAL_BRC=BRC, TOOLS_PY=os.path.join(HERE, "compare", "csv_tools.py"))

    def test_check_on_a_small_file(self):
        tools = " ".join(["duckdb", "polars", *slow_tools()])
        args = ["--check", "--rows", "2e4"]
        if not brc_reads_csv():
            # Until then the model stands in for brc.
            args.append("--model")
        done = self.run_csv_sh(*args, TOOLS=tools)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertRegex(done.stdout, r"^csv\.sh --check: 2e4 rows \(--keys 413\): .*DuckDB.* and \w+ print the same bytes\n")
        print(f"\n  {done.stdout.strip()}", file=sys.stderr)

    def test_a_brc_that_disagrees_is_caught(self):
        env = self.fake_brc()
        # A brc that agrees with the model passes, its CSV format too.
        done = self.run_csv_sh("--check", "--rows", "3000", **env)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("brc --format csv prints the model's CSV", done.stdout)
        # One that does not stops the check, saying who differs and where.
        done = self.run_csv_sh("--check", "--rows", "3000", BREAK="1", **env)
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertIn("the Python model's output differs from brc's (at byte ", done.stderr)
        self.assertEqual(done.stdout, "")

    def test_the_timing_path_prints_what_the_renderer_reads(self):
        # In a copy of scripts/, with ab.py a stand-in: nothing is timed.
        repo = os.path.join(self.dir.name, "repo")
        scripts = os.path.join(repo, "scripts")
        shutil.copytree(HERE, scripts, ignore=shutil.ignore_patterns("__pycache__"))
        with open(os.path.join(scripts, "ab.py"), "w", encoding="utf-8") as f:
            f.write(FAKE_AB)
        tools = ["duckdb", "polars", *slow_tools(), "text"]
        done = self.run_csv_sh("--model", "--rows", "4000", "3", scripts=scripts, TOOLS=" ".join(tools), SLOW_PAIRS="2")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        out = done.stdout
        self.assertTrue(out.startswith(f'# TOOLS="{" ".join(tools)}" SLOW_PAIRS=2 scripts/csv.sh --model --rows 4000 3 ('), out)
        self.assertIn("MODEL: the Python model times in brc's place", out)
        run = render_benchmarks.csv_run(out, "bench/results/x-csv.txt")
        names = {"duckdb": "duck"}
        self.assertEqual([p["tool"] for p in run["pairs"]], [names.get(t, t) for t in tools])
        for p in run["pairs"]:
            self.assertEqual(p["pairs"], "2" if p["tool"] in ("datamash", "miller") else "3")
        self.assertIn("4000 rows of `brc generate --format csv --keys 413 --seed 1`", run["data"])
        self.assertIn("duckdb ", run["versions"])
        # The data stays in bench/data, for the next run.
        data = sorted(os.listdir(os.path.join(repo, "bench", "data")))
        self.assertIn("csv-413-4000.csv", data)
        self.assertEqual(len(data), 3 if "datamash" in tools else 2, data)

    def test_bad_arguments_stop_it_in_one_line(self):
        for args, env, message in (
            (["--check", "5"], {}, "takes no PAIRS"),
            (["--rows", "many"], {}, "expected a row count"),
            (["0"], {}, "expected a number of pairs"),
            (["--check"], {"TOOLS": "duckdb awk"}, "unknown tool 'awk'"),
            (["--frobnicate"], {}, "unknown option"),
        ):
            done = self.run_csv_sh(*args, **env)
            self.assertEqual(done.returncode, 1, args)
            self.assertEqual(done.stderr.count("\n"), 1, done.stderr)
            self.assertIn(message, done.stderr)


if __name__ == "__main__":
    unittest.main()

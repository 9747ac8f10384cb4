"""Tests of the lab's statistics set, scripts/stats.sh: its exact model
(the Python half of the script, read out of it) on cases worked by hand;
`stats.sh --check` itself, brc against the model and DuckDB on its small
files and `brc merge --stats` of shards' partials against the one run; a
stand-in brc that disagrees caught, in one run and in a merge; and the
timing path on tiny files, with no pause. Nothing is measured.

Usage: BRC=target/debug/brc python3 scripts/test_stats.py
(a Python with duckdb).
"""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "stats.sh")
BRC = os.path.abspath(os.environ.get("BRC", os.path.join(HERE, "..", "target", "debug", "brc")))


def load_lab():
    """The Python half of stats.sh, between `<<'PY'` and `PY`, as a module."""
    with open(SCRIPT, encoding="utf-8") as f:
        text = f.read()
    source = re.search(r"<<'PY'\n(.*?)\nPY\n", text, re.S).group(1)
    spec = importlib.util.spec_from_loader("stats_lab", loader=None)
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, SCRIPT + " (stats_lab.py)", "exec"), module.__dict__)
    return module


lab = load_lab()


class Model(unittest.TestCase):
    def test_standard_deviations_round_half_up_exactly(self):
        # {0.0, 0.1}: population 0.05, a tie, up to 0.1; sample 0.0707.
        self.assertEqual(lab.model_cells([0, 1], ["stddev", "stddev_pop"]), ["0.1", "0.1"])
        # {0.0, 0.0, 0.0, 0.1}: sample sqrt(0.0025) = 0.05, a tie: 0.1;
        # population sqrt(0.001875) = 0.0433: 0.0.
        self.assertEqual(lab.model_cells([0, 0, 0, 1], ["stddev", "stddev_pop"]), ["0.1", "0.0"])
        # Shifted far from zero, where doubles lose the tie: still exact.
        self.assertEqual(lab.model_cells([873, 873, 873, 874], ["stddev"]), ["0.1"])
        # One value: no sample deviation, a population one of 0.
        self.assertEqual(lab.model_cells([-123], ["stddev", "stddev_pop"]), ["", "0.0"])
        self.assertEqual(lab.model_cells([-999, 999], ["stddev", "stddev_pop"]), ["141.3", "99.9"])
        for num in range(0, 400):
            for den in (1, 2, 3, 12, 16):
                # Against the definition: the largest k with k - 1/2 <= sqrt(num/den).
                k = lab.half_up_root(num, den)
                if k > 0:
                    self.assertLessEqual(Fraction(2 * k - 1, 2) ** 2, Fraction(num, den))
                self.assertGreater(Fraction(2 * k + 1, 2) ** 2, Fraction(num, den))

    def test_mean_is_the_references_double_rounding(self):
        self.assertEqual(lab.java_round(1.5), 2)
        self.assertEqual(lab.java_round(-1.5), -1)
        self.assertEqual(lab.java_round(0.49999999999999994), 0)
        self.assertEqual(lab.model_cells([12, 13], ["mean"]), ["1.3"])
        self.assertEqual(lab.model_cells([-12, -13], ["mean"]), ["-1.2"])
        self.assertEqual(lab.model_cells([-1, 0], ["mean"]), ["0.0"])

    def test_quantiles_are_discrete_the_lower_middle(self):
        values = [40, 10, 30, 20]
        self.assertEqual(lab.model_cells(values, ["median", "p1", "p25", "p25.000001", "p99.9", "min", "max"]),
                         ["2.0", "1.0", "1.0", "2.0", "4.0", "1.0", "4.0"])
        self.assertEqual(lab.model_cells([5], ["median", "p1", "p99"]), ["0.5", "0.5", "0.5"])
        self.assertEqual(lab.quantile_q("p99.9"), Fraction(999, 1000))
        self.assertEqual(lab.sql_literal(lab.quantile_q("p1")), "0.01")
        self.assertEqual(lab.sql_literal(lab.quantile_q("median")), "0.5")

    def test_count_and_sum_are_exact_tenths(self):
        self.assertEqual(lab.model_cells([-999] * 1000, ["count", "sum"]), ["1000", "-99900.0"])
        self.assertEqual(lab.model_cells([1, -1], ["sum"]), ["0.0"])
        self.assertEqual(lab.tenths(-5), "-0.5")


#: A brc for `stats.sh --check` built on the real one: a partial is the
#: input's path, a merge the real one-run answer for it. BREAK spoils the
#: last cell of the one run (`cell`) or of the merge (`merge`).
FAKE_BRC = """\
import os, subprocess, sys
real = os.environ["REAL_BRC"]
spoil_in = os.environ.get("BREAK", "")
args = sys.argv[1:]


def spoil(text):
    last = text[-2]
    return text[:-2] + ("1" if last != "1" else "2") + "\\n"


if args[0] == "generate":
    os.execv(real, [real, *args])
if args[0] == "merge":
    stats = args[args.index("--stats") + 1]
    with open(args[-1], encoding="utf-8") as f:
        path = f.read().split("\\n")[1]
    out = subprocess.run([real, "-q", "--stats", stats, "-f", "csv", path], capture_output=True, text=True, check=True).stdout
    sys.stdout.write(spoil(out) if spoil_in == "merge" else out)
elif "partial" in args:
    print("fake-partial")
    print(args[-1])
else:
    out = subprocess.run([real, *args], capture_output=True, text=True, check=True).stdout
    sys.stdout.write(spoil(out) if spoil_in == "cell" else out)
"""


class StatsSh(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def run_stats_sh(self, *args, script=SCRIPT, **env):
        base = dict(os.environ)
        base.update(BRC=BRC, PYTHON=sys.executable)
        base.update(env)
        return subprocess.run(["bash", script, *args], env=base, capture_output=True, text=True, timeout=600)

    def fake_brc(self):
        path = os.path.join(self.dir.name, "brc")
        with open(path, "w", encoding="utf-8") as f:
            f.write(f"#!{sys.executable}\n{FAKE_BRC}")
        os.chmod(path, 0o755)
        return dict(BRC=path, REAL_BRC=BRC)

    def test_check(self):
        # brc against the model and DuckDB, then merges of shards' partials.
        done = self.run_stats_sh("--check")
        print(f"\n  {done.stdout.strip()}".replace("\n", "\n  "), file=sys.stderr)
        self.assertIn("every cell of count,sum,min,max,mean,stddev,stddev_pop,median,p1,p90,p99,p99.9 agrees",
                      done.stdout, done.stderr)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("prints the one run's bytes, for every file", done.stdout)

    def test_a_brc_that_disagrees_is_caught(self):
        env = self.fake_brc()
        # The stand-in agrees: one run and merge pass.
        done = self.run_stats_sh("--check", "--rows", "2000", **env)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("prints the one run's bytes, for every file", done.stdout)
        # A cell off in one run: the model's diff, before any merge.
        done = self.run_stats_sh("--check", "--rows", "2000", BREAK="cell", **env)
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertIn("one row: brc --stats differs from the exact model", done.stderr)
        self.assertIn("'Solo' p99.9: brc '-12.1', model '-12.3'", done.stderr)
        self.assertIn("+++ model", done.stderr)
        # A merge off: caught against the one run.
        done = self.run_stats_sh("--check", "--rows", "2000", BREAK="merge", **env)
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertIn("one row: brc merge --stats of 3 shards' partials differs from the one run", done.stderr)

    def test_the_timing_path_on_tiny_files(self):
        # In a copy of scripts/, so that its data and results stay there.
        repo = os.path.join(self.dir.name, "repo")
        shutil.copytree(HERE, os.path.join(repo, "scripts"), ignore=shutil.ignore_patterns("__pycache__"))
        script = os.path.join(repo, "scripts", "stats.sh")
        done = self.run_stats_sh("--rows", "3000", "1", script=script, SLOW_PAIRS="1", PAUSE="0", WARMUP="0")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        out = done.stdout
        self.assertTrue(out.startswith("# SLOW_PAIRS=1 PAUSE=0 WARMUP=0 scripts/stats.sh --rows 3000 1 ("), out)
        self.assertRegex(out, r"\n# \d{4}-\d\d-\d\d, Model name: .*, family \S+ model \S+, \d+ vCPUs")
        for line in ("413 brc --stats min,median,p99,max", "10k DuckDB quantile_disc", "<= 1.5x plain: ",
                     "<= 2.0x plain: ", ">= 20x stats: ", "<= 256 MiB: ", "<= 3x plain: "):
            self.assertIn(line, out)
        results = sorted(os.listdir(os.path.join(repo, "bench", "results")))
        # Named by date and CPU, so that two machines' runs of a day are both kept.
        self.assertEqual([re.sub(r"^\d{4}-\d\d-\d\d-[a-z0-9]+-f\d+m\d+-", "DATE-CPU-", r) for r in results],
                         ["DATE-CPU-stats-3000-runs.txt", "DATE-CPU-stats-3000.txt"])
        with open(os.path.join(repo, "bench", "results", results[1]), encoding="utf-8") as f:
            self.assertEqual(f.read(), out)
        with open(os.path.join(repo, "bench", "results", results[0]), encoding="utf-8") as f:
            runs = [line.split("\t") for line in f if not line.startswith("#")]
        self.assertEqual(sum(r[1] == "time" for r in runs), 8)
        self.assertEqual([r[0] for r in runs if r[1] == "peak_rss_kib"], ["413", "413", "10k", "10k", "1M", "1M"])
        self.assertEqual(sorted(os.listdir(os.path.join(repo, "bench", "data"))),
                         ["measurements-10k-3000.txt", "measurements-1M-3000.txt", "measurements-413-3000.txt"])

    def test_bad_arguments_stop_it_in_one_line(self):
        for args, env, message in (
            (["--check", "5"], {}, "takes no PAIRS"),
            (["--rows", "many"], {}, "expected a row count"),
            (["0"], {}, "expected a number of pairs"),
            (["--frobnicate"], {}, "unknown option"),
            ([], {"PAUSE": "soon"}, "PAUSE: expected seconds"),
        ):
            done = self.run_stats_sh(*args, **env)
            self.assertEqual(done.returncode, 1, args)
            self.assertEqual(done.stderr.count("\n"), 1, done.stderr)
            self.assertIn(message, done.stderr)


if __name__ == "__main__":
    unittest.main()

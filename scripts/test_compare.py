"""Tests of the comparison: the cross-check, the results collector, the
renderer, scripts/ab.py and compare.sh's choices (where its outputs go,
what it does about missing tools), the last in a copy of scripts/ with
stand-ins for brc, hyperfine and apt-get. Standard library only; nothing
is installed, built or timed.

Usage: python3 scripts/test_compare.py
"""

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "compare"))
sys.path.insert(0, HERE)

import ab  # noqa: E402
import check  # noqa: E402
import render_benchmarks  # noqa: E402
import results  # noqa: E402

BRC_CSV = (
    "station,min,mean,max,count\n"
    '"A,B",-1.5,0.3,2.0,3\n'
    '"""Quoted"" Town",10.0,10.0,10.0,1\n'
    "Zürich,-99.9,0.0,99.9,2\n"
)

TIME_V = """\
\tCommand being timed: "sh -c brc x"
\tUser time (seconds): 1.25
\tSystem time (seconds): 0.05
\tElapsed (wall clock) time (h:mm:ss or m:ss): 1:02.50
\tMaximum resident set size (kbytes): 20480
\tExit status: 0
"""



#: scripts/parquet.sh's output for one run, as bench/results keeps it.
PARQUET_RUN = """\
# scripts/parquet.sh 11 (BRC=target/release/brc at 800dee4, PYTHON with duckdb 1.x, polars, pyarrow)
# 2026-11-28, Model name: Intel(R) Xeon(R) Processor, family 6 model 207, 2 vCPUs; load average before: 1.18
# 10 files of 10^7 rows by the 1TRC recipe (scripts/compare/parquet_tools.py make), 2 threads each
outputs: brc, DuckDB and Polars print the same bytes
== duck over brc
A: median wall 0.249 s, CPU 0.450 s
B: median wall 1.298 s, CPU 2.197 s
B/A over 11 pairs: CPU 4.731x (pairs 4.13-5.92x), wall 5.151x
== polars over brc
A: median wall 0.309 s, CPU 0.442 s
B: median wall 2.618 s, CPU 4.586 s
B/A over 11 pairs: CPU 9.911x (pairs 9.23-11.07x), wall 8.989x
brc peak memory: 33828 KiB, 0.27 s
duckdb 2.0.1 polars 2.1.0
"""

#: scripts/csv.sh's output, in the shape bench/results keeps it; the
#: figures are made up for the test, so that measuring changes no test.
CSV_RUN = """\
# scripts/csv.sh 11 (BRC=target/release/brc at 0123abc, PYTHON=bench/venv/bin/python)
# 2026-11-29, Model name: Intel(R) Xeon(R) Processor, family 6 model 207, 2 vCPUs; load average before: 0.52
# 1e8 rows of `brc generate --format csv --keys 413 --seed 1` (4.3GB; 3 decimals, quoted names, 1% empty), datamash on a sorted TSV copy, text: 311241012 rows of `brc generate --keys 413 --seed 1` (4.3GB); 2 threads each (datamash 1)
outputs: brc, DuckDB, Polars, datamash and Miller print the same bytes
== duck over brc
A: median wall 1.500 s, CPU 2.900 s
B: median wall 9.000 s, CPU 17.100 s
B/A over 11 pairs: CPU 5.897x (pairs 5.50-6.20x), wall 6.000x
== polars over brc
A: median wall 1.520 s, CPU 2.950 s
B: median wall 12.160 s, CPU 23.000 s
B/A over 11 pairs: CPU 7.797x (pairs 7.10-8.40x), wall 8.000x
== datamash over brc
A: median wall 1.510 s, CPU 2.920 s
B: median wall 60.400 s, CPU 60.100 s
B/A over 3 pairs: CPU 20.582x (pairs 20.10-21.00x), wall 40.000x
== miller over brc
A: median wall 1.490 s, CPU 2.900 s
B: median wall 149.000 s, CPU 290.000 s
B/A over 3 pairs: CPU 100.000x (pairs 98.00-102.00x), wall 100.000x
== text over brc
A: median wall 1.500 s, CPU 2.900 s
B: median wall 1.250 s, CPU 2.400 s
B/A over 11 pairs: CPU 0.828x (pairs 0.80-0.85x), wall 0.833x
brc peak memory: 40960 KiB, 1.50 s
duckdb 2.0.1 polars 2.1.0 datamash 1.7 miller 6.6.0
"""


#: scripts/stats.sh's table, as it writes it to bench/results/DATE-CPU-stats.txt.
STATS_RUN = """\
# scripts/stats.sh (BRC=target/release/brc at 7f1c779, PYTHON=/tmp/venv/bin/python)
# 2026-11-29, Model name: Intel(R) Xeon(R) Processor, family 6 model 207, 2 vCPUs; load average before: 1.00
# `brc generate --rows N --keys K --seed 1`: 413 and 10k 1e8 rows (1.3GiB, 1.6GiB), 1M 1e8 rows (5.0GiB); 2 threads each
# 11 pairs plain/stats, 3 stats/DuckDB, each after 1 warm-up run(s) of both, a 2 s pause after every run

time, medians of the pairs     wall s    CPU s  wall ratio  CPU ratio  target
413 brc                                   0.294    0.583
413 brc --stats min,median,p99,max        1.845    3.659       5.97x      5.99x  <= 1.5x plain: NOT met
413 DuckDB quantile_disc                 13.325   25.629        6.0x       5.9x  >= 20x stats: NOT met
10k brc                                   0.890    1.758
10k brc --stats min,median,p99,max        1.512    3.001       1.70x      1.71x  <= 2.0x plain: met
10k DuckDB quantile_disc                 36.151   71.744       23.9x      23.9x  >= 20x stats: met

peak RSS, MiB (one run each)       brc  --stats median,p99   ratio  target
413                               46.6                49.6   1.06x
10k                               50.5               109.7   2.17x  <= 256 MiB: met
1M                               169.9              5104.6  30.04x  <= 3x plain: NOT met

Ratios are medians of the pairs' ratios: stats over plain, DuckDB over stats (its own pairs, whose stats runs are not the ones shown); the targets are judged on wall time.
brc 0.1.0, duckdb 2.0.1
"""


class Files(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def write(self, name, text):
        path = os.path.join(self.dir.name, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path


class Check(Files):
    def check(self, candidate):
        ref = check.read_result(self.write("ref.csv", BRC_CSV))
        cand = check.read_result(self.write("cand.txt", candidate))
        return list(check.disagreements(ref, cand))

    def test_reads_quoted_csv_names(self):
        ref = check.read_result(self.write("ref.csv", BRC_CSV))
        self.assertEqual(ref['"Quoted" Town'], (100, 10.0, 100))
        self.assertEqual(ref["A,B"], (-15, 0.3, 20))

    def test_agrees_in_any_order_and_number_format(self):
        cand = 'Zürich;-99.9;0;99.9\n"Quoted" Town;10;10.04;10.0\nA,B;-1.50;0.2666;2\n'
        self.assertEqual(self.check(cand), [])

    def test_missing_and_extra_stations(self):
        cand = 'Zürich;-99.9;0;99.9\n"Quoted" Town;10;10;10\nA;-1.5;0.3;2\n'
        problems = self.check(cand)
        self.assertEqual(len(problems), 2)
        self.assertIn("1 stations missing", problems[0])
        self.assertIn("1 unexpected stations", problems[1])

    def test_min_off_by_a_tenth(self):
        cand = 'Zürich;-99.8;0;99.9\n"Quoted" Town;10;10;10\nA,B;-1.5;0.3;2\n'
        self.assertEqual(len(self.check(cand)), 1)

    def test_mean_tolerance(self):
        inside = 'Zürich;-99.9;0.1;99.9\n"Quoted" Town;10;10;10\nA,B;-1.5;0.3;2\n'
        outside = 'Zürich;-99.9;0.11;99.9\n"Quoted" Town;10;10;10\nA,B;-1.5;0.3;2\n'
        self.assertEqual(self.check(inside), [])
        self.assertEqual(len(self.check(outside)), 1)

    def test_reads_the_official_line(self):
        line = "{A,B=-1.5/0.3/2.0, \"Quoted\" Town=10.0/10.0/10.0, Zürich=-99.9/-0.0/99.9}\n"
        self.assertEqual(self.check(line), [])
        cand = check.read_result(self.write("official.txt", line))
        self.assertEqual(cand["A,B"], (-15, 0.3, 20))
        self.assertEqual(cand["Zürich"], (-999, -0.0, 999))

    def test_official_line_with_a_wrong_max(self):
        line = "{A,B=-1.5/0.3/2.1, \"Quoted\" Town=10.0/10.0/10.0, Zürich=-99.9/0.0/99.9}\n"
        self.assertEqual(self.check(line), ["'A,B': min/max -1.5/2.1, brc says -1.5/2.0"])

    def test_names_holding_equals_signs_and_commas(self):
        cand = check.read_result(self.write("eq.txt", "{a=b=1.0/1.0/1.0, x, y=-2.0/2.0/2.0}\n"))
        self.assertEqual(cand, {"a=b": (10, 1.0, 10), "x, y": (-20, 2.0, 20)})

    def test_empty_and_malformed_official_lines(self):
        self.assertEqual(check.read_result(self.write("empty.txt", "{}\n")), {})
        for bad in ("{A=1.0/1.0/1.0\n", "{A=1.0/1.0}\n", "{A=1.0/1.0/1.0, }\n", "{}\n{}\n"):
            with self.assertRaises(ValueError, msg=bad):
                check.read_result(self.write("bad.txt", bad))

    def test_duplicate_station_is_an_error(self):
        with self.assertRaises(ValueError):
            check.read_result(self.write("dup.txt", "A;1;1;1\nA;1;1;1\n"))

    def test_exit_status(self):
        ref = self.write("ref.csv", BRC_CSV)
        bad = self.write("bad.txt", "A,B;-1.5;0.3;2\n")
        with contextlib.redirect_stdout(io.StringIO()) as out:
            self.assertEqual(check.main(["check.py", ref, ref]), 0)
            self.assertEqual(check.main(["check.py", ref, bad]), 1)
        self.assertEqual(
            out.getvalue().splitlines(),
            [
                "agrees with brc on all 3 stations",
                "disagrees with brc: 2 stations missing, e.g. ['\"Quoted\" Town', 'Zürich']",
            ],
        )


class Run(Files):
    """Makes a finished run of made-up tools through results.py."""

    def entry(self, entries, tool, median, rows_measured, status="ok", group=None, reaped=None):
        hyperfine = self.write(
            tool.replace("/", "-") + ".json",
            json.dumps(
                {
                    "results": [
                        {
                            "median": median,
                            "mean": median,
                            "stddev": 0.0,
                            "min": median,
                            "max": median,
                            "times": [median] * 3,
                            "user": median / 2,
                            "system": 0.0,
                        }
                    ]
                }
            ),
        )
        data = self.write("data.txt", "A;1.0\n")
        args = type("Args", (), {})()
        args.__dict__.update(
            entries=entries,
            dataset="413",
            tool=tool,
            group=group or ("brc" if tool.startswith("brc") else "other"),
            threads=2,
            command=tool + " data.txt",
            file=data,
            rows_measured=rows_measured,
            rows_full=1000,
            status=status,
            check="agrees with brc on all 1 stations" if status == "ok" else "disagrees",
            hyperfine=hyperfine,
            timev=self.write("t.txt", TIME_V),
            reaped=reaped and self.write("reaped.json", json.dumps(reaped)),
        )
        results.add(args)

    def finished_run(self, peers=False, side_by_side=False):
        entries = os.path.join(self.dir.name, "entries.jsonl")
        pairs = None
        if side_by_side:
            # The peer took 0.4 s and 0.5 s; brc 0.36 s and 0.5 s.
            pairs = os.path.join(self.dir.name, "pairs.jsonl")
            report = {
                "pairs": 2,
                "pause_s": 0.3,
                "a": {"command": "peer", "wall_s": 0.45, "cpu_s": 0.45},
                "b": {"command": "brc", "wall_s": 0.43, "cpu_s": 0.43},
                "wall_ratio": 0.95,
                "wall_ratio_range": [0.9, 1.0],
                "cpu_ratio": 0.95,
                "cpu_ratio_range": [0.9, 1.0],
                "runs": [[0.4, 0.4, 0.36, 0.36], [0.5, 0.5, 0.5, 0.5]],
            }
            args = type("Args", (), {})()
            args.__dict__.update(
                pairs=pairs,
                dataset="413",
                peer="peer/a",
                brc="brc fast",
                threads=1,
                ab=self.write("ab.json", json.dumps(report)),
            )
            results.pair(args)
        self.entry(entries, "slowpoke", 3.0, 100)  # before its reference: order must not matter
        self.entry(entries, "brc fast (2 threads)", 2.0, 1000)
        self.entry(entries, "wrong", 1.0, 1000, status="failed")
        if peers:
            # hyperfine saw 0.5 s of CPU; the reaped run 0.75 s and 30 MiB.
            reaped = {"exit_wall_s": 1.0, "wall_s": 1.1, "user_s": 0.5, "sys_s": 0.25, "max_rss_kib": 30720}
            self.entry(entries, "peer/a (2 threads)", 1.0, 1000, group="peer", reaped=reaped)
            self.entry(entries, "peer/b (2 threads)", 1.0, 1000, status="failed", group="peer")
        meta = os.path.join(self.dir.name, "meta.json")
        begin = type("Args", (), {})()
        begin.__dict__.update(
            out=meta,
            command="scripts/compare.sh 1000",
            rows=1000,
            small_rows=100,
            warmup=1,
            runs=3,
            threads=2,
            load_at_start=0.25,
            version=["brc=brc 0.1.0"],
        )
        results.begin(begin)
        out = os.path.join(self.dir.name, "run.json")
        finish = type("Args", (), {})()
        finish.__dict__.update(
            meta=meta, entries=entries, pairs=pairs, reference="brc fast (2 threads)", out=out
        )
        results.finish(finish)
        with open(out, encoding="utf-8") as f:
            return json.load(f), out


class Results(Run):
    def test_time_v(self):
        t = results.time_v(self.write("t.txt", TIME_V))
        self.assertEqual(t, {"wall_s": 62.5, "user_s": 1.25, "sys_s": 0.05, "max_rss_kib": 20480})

    def test_finish_extrapolates_and_compares(self):
        run, _ = self.finished_run()
        by_tool = {r["tool"]: r for r in run["results"]}
        slow = by_tool["slowpoke"]
        self.assertTrue(slow["extrapolated"])
        self.assertAlmostEqual(slow["wall_full_s"], 30.0)
        self.assertAlmostEqual(slow["ratio"], 15.0)
        self.assertAlmostEqual(slow["ns_per_row_core"], 1.5 / 100 * 1e9)
        self.assertAlmostEqual(slow["rows_per_s"], 100 / 3.0)
        self.assertEqual(by_tool["brc fast (2 threads)"]["ratio"], 1.0)
        self.assertNotIn("ratio", by_tool["wrong"])
        # The load the script saw before its own work, not the load then.
        self.assertEqual(run["machine"]["load_average_at_start"], 0.25)

    def test_render(self):
        run, path = self.finished_run()
        md = render_benchmarks.markdown(run, "bench/results/run.json", "benchmarks.svg")
        self.assertIn("`scripts/compare.sh 1000`", md)
        self.assertIn("rerun the command with `--publish` instead", md)
        self.assertIn("| slowpoke † | 30 s † |", md)
        self.assertIn("| brc fast (2 threads) | 2 s |", md)
        self.assertIn("**wrong: not reported**: disagrees.", md)
        self.assertNotIn(render_benchmarks.PEER, md)
        for load, busy in ((0.0, False), (run["machine"]["logical_cores"], True)):
            run["machine"]["load_average_at_start"] = load
            md = render_benchmarks.markdown(run, "bench/results/run.json", "benchmarks.svg")
            self.assertEqual("machine was busy" in md, busy)
        svg = ET.fromstring(render_benchmarks.svg(run))
        texts = [e.text for e in svg.iter("{http://www.w3.org/2000/svg}text")]
        self.assertIn("other tools", texts)
        self.assertNotIn("‡ not in this repository", texts)
        bars = [e for e in svg.iter("{http://www.w3.org/2000/svg}rect") if e.get("rx")]
        self.assertEqual(len(bars), 2)
        widths = sorted(float(b.get("width")) for b in bars)
        # Bar lengths are proportional to rows/s (SVG keeps a tenth of a pixel).
        self.assertAlmostEqual(widths[1] / widths[0], (1000 / 2.0) / (100 / 3.0), delta=0.1)

    def test_peers_are_marked_and_counted_whole(self):
        run, _ = self.finished_run(peers=True)
        peer = {r["tool"]: r for r in run["results"]}["peer/a (2 threads)"]
        self.assertAlmostEqual(peer["cpu_s"], 0.75)
        self.assertAlmostEqual(peer["ratio"], 0.5)
        self.assertNotIn("time_v", peer)
        md = render_benchmarks.markdown(run, "bench/results/run.json", "benchmarks.svg")
        self.assertIn("| peer/a (2 threads) ‡ | 1 s | 750 ms | 30 MiB | 1 k | 750000.0 | 0.50× |", md)
        self.assertIn("‡ Not in this repository", md)
        self.assertIn("**peer/b (2 threads) ‡: not reported**: disagrees.", md)
        self.assertIn("scripts/compare/reap.py", md)
        svg = ET.fromstring(render_benchmarks.svg(run))
        texts = [e.text for e in svg.iter("{http://www.w3.org/2000/svg}text")]
        self.assertIn("peer/a (2 threads) ‡", texts)
        self.assertIn("‡ not in this repository", texts)
        fills = [e.get("fill") for e in svg.iter("{http://www.w3.org/2000/svg}rect") if e.get("rx")]
        self.assertEqual(fills.count(render_benchmarks.COLORS["peer"]), 1)


    def test_side_by_side(self):
        run, _ = self.finished_run(peers=True, side_by_side=True)
        [pair] = run["side_by_side"]
        self.assertEqual((pair["peer"], pair["threads"], pair["wall_ratio"]), ("peer/a", 1, 0.95))
        md = render_benchmarks.markdown(run, "bench/results/run.json", "benchmarks.svg")
        self.assertIn("| peer/a ‡ | 1 | **0.950×** | 0.950× (0.90–1.00×) | 450 ms | 430 ms |", md)
        self.assertIn("2 pairs, the same number of threads, 0.3 s of quiet after each run, so that", md)
        self.assertIn("**Side by side**", md)
        # A run from before pauses were recorded says nothing of one.
        del run["side_by_side"][0]["pause_s"]
        md = render_benchmarks.markdown(run, "bench/results/run.json", "benchmarks.svg")
        self.assertIn("2 pairs, the same number of threads, so that", md)
        # Without pairs, neither the table nor its explanation.
        run, _ = self.finished_run(peers=True)
        self.assertEqual(run["side_by_side"], [])
        md = render_benchmarks.markdown(run, "bench/results/run.json", "benchmarks.svg")
        self.assertNotIn("Side by side", md)

    def test_another_cpu_has_a_section_of_its_own(self):
        run, _ = self.finished_run(peers=True, side_by_side=True)
        other = json.loads(json.dumps(run))
        other["machine"]["cpu"] = "Other CPU, family 25 model 1"
        other["date"] = "2026-11-30"
        other["command"] = "scripts/compare.sh 1e9"
        other["settings"]["rows"] = 10**9
        for r in other["results"]:
            if r["tool"] == "brc fast (2 threads)":
                r["wall_full_s"] = 7.0
        also = [(other, "bench/results/other.json")]
        md = render_benchmarks.markdown(run, "bench/results/run.json", "benchmarks.svg", also=also)
        self.assertIn("render_benchmarks.py bench/results/run.json --also bench/results/other.json`", md)
        heading = "## Other CPU, family 25 model 1, 1e9 rows, 2026-11-30"
        self.assertIn(heading, md)
        section = md[md.index(heading):md.index("## How these figures are made")]
        self.assertIn("Generated by `scripts/compare.sh 1e9`, kept in `bench/results/other.json`", section)
        other["settings"]["runs"] = 2
        md = render_benchmarks.markdown(run, "bench/results/run.json", "benchmarks.svg", also=also)
        section = md[md.index(heading):md.index("## How these figures are made")]
        self.assertIn("Wall: medians of 2 hyperfine runs after 1 warm-up;", section)
        self.assertIn("and render again as above, which adds the other runs", md)
        self.assertIn("Machine: Other CPU, family 25 model 1,", section)
        # Its own tables, one heading deeper, with its own figures and pairs.
        self.assertIn("### 413 stations (official set), 1,000,000,000 rows", section)
        self.assertIn("| brc fast (2 threads) | 7 s |", section)
        self.assertIn("| peer/a ‡ | 1 | **0.950×** |", section)
        self.assertIn("- brc: brc 0.1.0", section)
        # The main run's tables come first and keep theirs.
        self.assertLess(md.index("| brc fast (2 threads) | 2 s |"), md.index(heading))
        self.assertNotIn("7 s", md[:md.index(heading)])

    def test_the_machine_names_the_cpu_family_and_model(self):
        cpu = results.machine(0.0)["cpu"]
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            info = f.read()
        family = re.search(r"^cpu family\s*:\s*(\d+)$", info, re.M)
        model = re.search(r"^model\s*:\s*(\d+)$", info, re.M)
        if family and model:
            self.assertTrue(cpu.endswith(f", family {family.group(1)} model {model.group(1)}"), cpu)
        else:  # a CPU that /proc/cpuinfo gives no x86 family for
            self.assertNotIn(", family ", cpu)

    def test_parquet_set(self):
        # A run as scripts/parquet.sh prints it (a published one, kept
        # here so that measuring again changes no test).
        source = "bench/results/2026-11-28-parquet.txt"
        text = PARQUET_RUN
        parquet = render_benchmarks.parquet_run(text, source)
        self.assertEqual((parquet["date"], parquet["memory_kib"]), ("2026-11-28", 33828))
        self.assertEqual(parquet["cpu"], "Intel(R) Xeon(R) Processor, family 6 model 207, 2 vCPUs")
        run, _ = self.finished_run()
        md = render_benchmarks.markdown(run, "bench/results/run.json", "benchmarks.svg", parquet=(parquet, source))
        self.assertIn(f"render_benchmarks.py bench/results/run.json --parquet {source}`", md)
        self.assertIn("Measured by `scripts/parquet.sh 11` (", md)
        self.assertIn("| DuckDB | 1.3 s | 249 ms | **5.15×** | 4.73× (4.13–5.92×) |", md)
        self.assertIn("| Polars | 2.62 s | 309 ms | **8.99×** | 9.91× (9.23–11.07×) |", md)
        self.assertIn("brc's peak memory: 33 MiB. Versions: duckdb 2.0.1 polars 2.1.0.", md)
        # The section comes before the method, which is the text sets'.
        self.assertLess(md.index("## Parquet"), md.index("## How these figures are made"))
        # Without a Parquet run, no section and no --parquet.
        md = render_benchmarks.markdown(run, "bench/results/run.json", "benchmarks.svg")
        self.assertNotIn("Parquet", md)
        # A file that is not the script's output is refused, not half read.
        for bad in (text.replace("== duck over", "== duck under"), text.replace("brc peak memory", "peak")):
            with self.assertRaises(SystemExit):
                render_benchmarks.parquet_run(bad, source)

    def test_csv_set(self):
        source = "bench/results/2026-11-29-csv.txt"
        csv = render_benchmarks.csv_run(CSV_RUN, source)
        self.assertEqual((csv["date"], csv["memory_kib"]), ("2026-11-29", 40960))
        self.assertEqual([p["tool"] for p in csv["pairs"]], ["duck", "polars", "datamash", "miller", "text"])
        parquet = render_benchmarks.parquet_run(PARQUET_RUN, "bench/results/2026-11-28-parquet.txt")
        run, _ = self.finished_run()
        md = render_benchmarks.markdown(
            run, "bench/results/run.json", "benchmarks.svg",
            parquet=(parquet, "bench/results/2026-11-28-parquet.txt"), csv=(csv, source),
        )
        self.assertIn(
            "render_benchmarks.py bench/results/run.json --parquet bench/results/2026-11-28-parquet.txt "
            f"--csv {source}`", md)
        self.assertIn("Measured by `scripts/csv.sh 11` (", md)
        self.assertIn("Checked before timing: brc, DuckDB, Polars, datamash and Miller print the same bytes", md)
        self.assertIn("| DuckDB | 11 | 9 s | 1.5 s | **6.00×** | 5.90× (5.50–6.20×) |", md)
        self.assertIn("| GNU datamash | 3 | 60.4 s | 1.51 s | **40.00×** | 20.58× (20.10–21.00×) |", md)
        self.assertIn("| Miller | 3 | 149 s | 1.49 s | **100.00×** |", md)
        self.assertIn("| brc on a text file | 11 | 1.25 s | 1.5 s | **0.83×** |", md)
        self.assertIn("brc's peak memory: 40 MiB. Versions: duckdb 2.0.1 polars 2.1.0 datamash 1.7 miller 6.6.0.", md)
        # After the Parquet set, before the method.
        self.assertLess(md.index("## Parquet"), md.index("## CSV"))
        self.assertLess(md.index("## CSV"), md.index("## How these figures are made"))
        md = render_benchmarks.markdown(run, "bench/results/run.json", "benchmarks.svg")
        self.assertNotIn("## CSV", md)
        self.assertNotIn("--csv", md)
        # Not the script's output: refused, not half read; nor is a
        # Parquet run taken for a CSV one.
        for bad in (CSV_RUN.replace("== miller over", "== mlr over"), CSV_RUN.replace("outputs:", "output:")):
            with self.assertRaises(SystemExit):
                render_benchmarks.csv_run(bad, source)
        with self.assertRaises(SystemExit):
            render_benchmarks.parquet_run(CSV_RUN, source)


    def test_stats_set(self):
        # The real table's shape; the 10k figures changed so that both
        # verdicts show.
        source = "bench/results/2026-11-29-stats.txt"
        stats = render_benchmarks.stats_run(STATS_RUN, source)
        self.assertEqual((stats["date"], stats["commit"], stats["load"]), ("2026-11-29", "7f1c779", "1.00"))
        self.assertEqual([r["set"] for r in stats["times"]], ["413"] * 3 + ["10k"] * 3)
        self.assertEqual([r["set"] for r in stats["memory"]], ["413", "10k", "1M"])
        self.assertEqual(stats["memory_stats"], "--stats median,p99")
        self.assertEqual(stats["versions"], "brc 0.1.0, duckdb 2.0.1")
        csv = render_benchmarks.csv_run(CSV_RUN, "bench/results/2026-11-29-csv.txt")
        run, _ = self.finished_run()
        md = render_benchmarks.markdown(
            run, "bench/results/run.json", "benchmarks.svg",
            csv=(csv, "bench/results/2026-11-29-csv.txt"), stats=(stats, source),
        )
        self.assertIn(
            "render_benchmarks.py bench/results/run.json --csv bench/results/2026-11-29-csv.txt "
            f"--stats {source}`", md)
        self.assertIn("## Statistics: `--stats` against a plain run and DuckDB", md)
        self.assertIn(
            "Measured by `scripts/stats.sh` with `target/release/brc` built at commit 7f1c779, on 2026-11-29, "
            f"kept in `{source}`. Machine: Intel(R) Xeon(R) Processor, family 6 model 207, 2 vCPUs; "
            "load average 1.00 before the run.", md)
        self.assertIn("Data: `brc generate --rows N --keys K --seed 1`: 413 and 10k 1e8 rows", md)
        self.assertIn("Runs: 11 pairs plain/stats, 3 stats/DuckDB,", md)
        self.assertIn("| 413 | brc | 294 ms | 583 ms |  |  |  |", md)
        self.assertIn(
            "| 413 | brc --stats min,median,p99,max | 1.84 s | 3.66 s | 5.97× | 5.99× | <= 1.5x plain: NOT met |", md)
        self.assertIn("| 413 | DuckDB quantile_disc | 13.3 s | 25.6 s | 6.0× | 5.9× | >= 20x stats: NOT met |", md)
        self.assertIn("| 10k | brc --stats min,median,p99,max | 1.51 s | 3 s | 1.70× | 1.71× | <= 2.0x plain: met |", md)
        self.assertIn("| 10k | DuckDB quantile_disc | 36.2 s | 71.7 s | 23.9× | 23.9× | >= 20x stats: met |", md)
        self.assertIn("| Set | Plain, MiB | `--stats median,p99`, MiB | Ratio | Target |", md)
        self.assertIn("| 413 | 46.6 | 49.6 | 1.06× |  |", md)
        self.assertIn("| 10k | 50.5 | 109.7 | 2.17× | <= 256 MiB: met |", md)
        self.assertIn("| 1M | 169.9 | 5104.6 | 30.04× | <= 3x plain: NOT met |", md)
        self.assertIn("the targets are judged on wall time. Versions: brc 0.1.0, duckdb 2.0.1.", md)
        # No machine path: PYTHON's is not shown.
        self.assertNotIn("/tmp/venv", md)
        # After the CSV set, before the method.
        self.assertLess(md.index("## CSV"), md.index("## Statistics"))
        self.assertLess(md.index("## Statistics"), md.index("## How these figures are made"))
        # Only when given: without it, neither the section nor --stats.
        md = render_benchmarks.markdown(
            run, "bench/results/run.json", "benchmarks.svg", csv=(csv, "bench/results/2026-11-29-csv.txt"))
        self.assertNotIn("## Statistics", md)
        self.assertNotIn("--stats", md)

    def test_stats_set_refuses_what_stats_sh_does_not_write(self):
        source = "bench/results/2026-11-29-stats.txt"
        for bad in (
            STATS_RUN.replace("peak RSS, MiB", "peak memory, MiB"),  # no memory table
            STATS_RUN.replace("time, medians", "times, medians"),  # no time table
            STATS_RUN.replace("    13.325   25.629", "    13.325"),  # a row cut short
            STATS_RUN.replace(" at 7f1c779", ""),  # no commit
            STATS_RUN.split("\n", 1)[1],  # no header
            CSV_RUN,
        ):
            with self.assertRaises(SystemExit):
                render_benchmarks.stats_run(bad, source)
        with self.assertRaises(SystemExit):
            render_benchmarks.csv_run(STATS_RUN, source)


# An absolute path in a page: after a blank, a quote, `=` or `(`. The
# method text names one, /usr/bin/time, the same on every machine.
ABSOLUTE = re.compile(r"""(?:^|[\s`"'=(])(/(?!usr/bin/time\b)[^\s`"')]*)""", re.M)


def machine_paths(text):
    """The absolute paths and the `../` in a page, but for its link to
    scripts/README.md from docs/ and a path under `"$OLDPWD"/` (the
    repository's root, where a peer's command starts in its own
    directory)."""
    text = text.replace('"$OLDPWD"/', "")
    found = ABSOLUTE.findall(text)
    rest = text.replace("](../scripts/README.md)", "")
    found += re.findall(r"\S*\.\./\S*", rest)
    return found


class MachinePaths(Run):
    """A page is read on other machines: it shows none of the paths of
    the one where the figures were measured."""

    DATA = "bench/data/measurements-413-1000.txt"

    def run_with_paths(self):
        run, _ = self.finished_run(peers=True, side_by_side=True)
        run["command"] = (
            'BRC=/opt/old/brc PEERS="austindonisan=/home/alice/src/1brc '
            'lehuyduc=/tmp/peers/lehuyduc" scripts/compare.sh 1e8'
        )
        run["versions"]["peer/a"] = "139e416 of https://github.com/peer/a; built in /home/alice/src/1brc"
        for r in run["results"]:
            r["file"] = self.DATA
            if r["tool"] == "brc fast (2 threads)":
                r["command"] = f"/opt/old/brc --engine fast --threads 2 {self.DATA}"
            elif r["tool"] == "peer/a (2 threads)":
                # What realpath --relative-to made of a bench/ that is a
                # symbolic link to a directory shared between clones.
                r["command"] = f"cd bench/work/peers/a && ./main-t2 ../../../../../wt/peers/{self.DATA}"
            elif r["tool"] == "peer/b (2 threads)":
                r["check"] = "its build failed: /tmp/peers/lehuyduc/main.cpp:1: error"
        return run

    def test_page_and_chart_show_no_machine_path(self):
        run = self.run_with_paths()
        md = render_benchmarks.markdown(run, "../../tmp/lab/run.json", "benchmarks.svg")
        self.assertEqual(machine_paths(md), [])
        for path in ("/opt/old", "/home/alice", "/tmp/peers", "wt/peers", "/tmp/lab"):
            self.assertNotIn(path, md)
        # Peers by name, their commits under Versions, data by its path in
        # the repository.
        self.assertIn('PEERS="austindonisan=…/1brc lehuyduc=…/lehuyduc"', md)
        self.assertIn("`cd bench/work/peers/a && ./main-t2 …/bench/data/measurements-413-1000.txt`", md)
        self.assertIn("`…/brc --engine fast --threads 2 bench/data/measurements-413-1000.txt`", md)
        self.assertIn("its build failed: …/main.cpp:1: error", md)
        self.assertIn("- peer/a: 139e416 of https://github.com/peer/a; built in …/1brc", md)
        self.assertIn("`…/` marks a path of the machine", md)
        svg = ET.fromstring(render_benchmarks.svg(run))
        texts = "\n".join(e.text for e in svg.iter("{http://www.w3.org/2000/svg}text"))
        self.assertEqual(machine_paths(texts), [])
        self.assertIn('PEERS="austindonisan=…/1brc', texts)

    def test_paths_in_the_repository_are_kept(self):
        run, _ = self.finished_run()
        for r in run["results"]:
            r["file"] = self.DATA
        md = render_benchmarks.markdown(run, "bench/results/run.json", "benchmarks.svg")
        self.assertNotIn("…/", md)
        public = render_benchmarks.public
        for kept in (
            f'cd bench/work/peers/a && ./main-t2 "$OLDPWD"/{self.DATA}',
            "POLARS_MAX_THREADS=2 bench/venv/bin/python scripts/compare/polars_query.py x.txt",
            "139e416 of https://github.com/austindonisan/1brc; clang 14",
        ):
            self.assertEqual(public(kept), kept)
        self.assertEqual(public(r"/tmp/a\ b/brc -t 1 '/tmp/c d/x.txt'"), "…/brc -t 1 '…/x.txt'")
        self.assertEqual(public('PEERS="a=/tmp/x/a b=~/src/b" TOOLS="brc awk"'), 'PEERS="a=…/a b=…/b" TOOLS="brc awk"')

    def test_the_published_page_shows_no_machine_path(self):
        for name in ("benchmarks.md", "benchmarks.svg"):
            with open(os.path.join(ROOT, "docs", name), encoding="utf-8") as f:
                text = f.read()
            if name.endswith(".svg"):
                svg = ET.fromstring(text)
                text = "\n".join(e.text for e in svg.iter("{http://www.w3.org/2000/svg}text"))
            self.assertEqual(machine_paths(text), [], name)


class Ab(Files):
    AB = os.path.join(HERE, "ab.py")

    def test_json_report(self):
        out = os.path.join(self.dir.name, "ab.json")
        # B sleeps a tenth of a second longer than A, every pair.
        done = subprocess.run(
            [sys.executable, self.AB, "--pairs", "3", "--warmup", "0", "--json", out,
             "sleep 0.01", "sleep 0.11"],
            capture_output=True,
            text=True,
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("B/A over 3 pairs", done.stdout)
        with open(out, encoding="utf-8") as f:
            report = json.load(f)
        self.assertEqual((report["pairs"], report["pause_s"]), (3, 0.0))
        self.assertEqual(len(report["runs"]), 3)
        self.assertEqual((report["a"]["command"], report["b"]["command"]), ("sleep 0.01", "sleep 0.11"))
        self.assertGreater(report["b"]["wall_s"] - report["a"]["wall_s"], 0.08)
        low, high = report["wall_ratio_range"]
        self.assertTrue(1 < low <= report["wall_ratio"] <= high)

    def test_a_pause_follows_each_run_outside_its_time(self):
        out = os.path.join(self.dir.name, "ab.json")
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, self.AB, "--pairs", "2", "--warmup", "1", "--pause", "0.2", "--json", out,
             "true", "true"],
            capture_output=True,
            text=True,
        )
        elapsed = time.perf_counter() - start
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(out, encoding="utf-8") as f:
            self.assertEqual(json.load(f)["pause_s"], 0.2)
        # Six runs, each followed by 0.2 s of quiet that no run's time holds.
        self.assertGreater(elapsed, 6 * 0.2)
        with open(out, encoding="utf-8") as f:
            report = json.load(f)
        self.assertLess(max(max(run[0], run[2]) for run in report["runs"]), 0.15)

    def test_a_negative_pause_is_refused(self):
        done = subprocess.run(
            [sys.executable, self.AB, "--pause", "-1", "true", "true"], capture_output=True, text=True
        )
        self.assertEqual(done.returncode, 2)
        self.assertIn("--pause", done.stderr)

    def test_summary_takes_medians_of_the_pairs(self):
        pairs = [((1.0, 2.0), (2.0, 2.0)), ((1.0, 1.0), (0.5, 1.5)), ((2.0, 0.0), (3.0, 1.0))]
        report = ab.summary("a", "b", pairs)
        self.assertEqual(report["wall_ratio"], 1.5)
        self.assertEqual(report["wall_ratio_range"], [0.5, 2.0])
        # A pair whose A took no CPU time has no CPU ratio.
        self.assertEqual(report["cpu_ratio"], 1.25)
        self.assertEqual(report["cpu_ratio_range"], [1.0, 1.5])
        self.assertEqual(report["a"]["wall_s"], 1.0)
        self.assertEqual(report["b"]["cpu_s"], 1.5)


@unittest.skipUnless(sys.platform.startswith("linux"), "PR_SET_CHILD_SUBREAPER is Linux's")
class Reap(Files):
    REAP = os.path.join(HERE, "compare", "reap.py")

    def test_waits_for_what_the_command_leaves_running(self):
        # The command exits at once; the process it leaves behind burns a
        # fifth of a second of CPU, then writes a file.
        done = os.path.join(self.dir.name, "done")
        burn = (
            "import sys, time\n"
            "t = time.process_time()\n"
            "while time.process_time() - t < 0.2: pass\n"
            "open(sys.argv[1], 'w').close()\n"
        )
        script = self.write("burn.py", burn)
        out = os.path.join(self.dir.name, "out.json")
        command = f"{sys.executable} {script} {done} > /dev/null 2>&1 & exit 0"
        status = subprocess.run([sys.executable, self.REAP, out, command]).returncode
        self.assertEqual(status, 0)
        self.assertTrue(os.path.exists(done))
        with open(out, encoding="utf-8") as f:
            report = json.load(f)
        self.assertGreaterEqual(report["user_s"] + report["sys_s"], 0.2)
        self.assertGreaterEqual(report["wall_s"], report["exit_wall_s"])
        self.assertGreater(report["max_rss_kib"], 0)

    def test_passes_on_the_exit_status(self):
        out = os.path.join(self.dir.name, "out.json")
        self.assertEqual(subprocess.run([sys.executable, self.REAP, out, "exit 3"]).returncode, 3)


FAKE_BRC = r"""#!/bin/sh
# Stands in for brc: its --help's engine list, a tiny generated file and
# that file's aggregate, whatever the rows asked for.
case "$1" in
--help)
    printf '  -e, --engine <NAME>\n          - fast: the one engine\n          [default: fast]\n'
    ;;
--version) echo "brc 0.0.0" ;;
generate)
    while [ "$1" != -o ]; do shift; done
    printf 'A;1.0\nB;-2.5\nA;3.0\n' >"$2"
    ;;
*) printf 'station,min,mean,max,count\nA,1.0,2.0,3.0,2\nB,-2.5,-2.5,-2.5,1\n' ;;
esac
"""

# Stands in for hyperfine: writes the report it is asked for, times made up.
FAKE_HYPERFINE = r"""#!/bin/sh
[ "$1" = --version ] && { echo "hyperfine 0.0.0"; exit 0; }
while [ $# -gt 0 ]; do
    [ "$1" = --export-json ] && out=$2
    shift
done
echo '{"results": [{"median": 0.5, "mean": 0.5, "stddev": 0, "min": 0.5, "max": 0.5,
  "times": [0.5], "user": 0.25, "system": 0.0}]}' >"$out"
"""

# Stand in for apt-get and sudo: they record how they were called; the
# apt-get installs nothing and fails, as with no network.
FAKE_APT_GET = r"""#!/bin/sh
echo "apt-get $*" >>"$FAKE_LOG"
[ "$1" != install ]
"""
FAKE_SUDO = r"""#!/bin/sh
echo "sudo $*" >>"$FAKE_LOG"
exec "$@"
"""

# Commands a test hides: the ones compare.sh may find missing, and the
# real installers.
HIDDEN = {"hyperfine", "datamash", "mlr", "apt-get", "sudo", "clang", "clang-17", "g++"}

# Stand in for the CSV set's tools, which compare.sh only asks for their
# versions, and for scripts/csv.sh, which records how it was called and
# prints a run, or fails when CSV_FAIL is set.
FAKE_DATAMASH = "#!/bin/sh\necho 'datamash (GNU datamash) 1.7'\n"
FAKE_MLR = "#!/bin/sh\necho 'mlr 6.6.0'\n"
FAKE_VENV_PYTHON = "#!/bin/sh\necho 1.0\n"
FAKE_CSV_SH = r"""#!/bin/sh
echo "$* TOOLS=${TOOLS-unset} KEYS=$KEYS PYTHON=$PYTHON BRC=$BRC" >>"$FAKE_LOG"
[ -z "${CSV_FAIL:-}" ] || { echo "# half a run"; exit 1; }
cat <<'RUN'
""" + CSV_RUN + """RUN
"""


class CompareSh(unittest.TestCase):
    """compare.sh in a copy of scripts/, so that whatever it writes lands
    in a temporary directory, with a PATH of every command on this one but
    those in HIDDEN, and stand-ins."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.system = os.path.join(cls.tmp.name, "system")
        os.mkdir(cls.system)
        for d in os.environ.get("PATH", "").split(os.pathsep):
            if not os.path.isdir(d):
                continue
            for name in os.listdir(d):
                path = os.path.join(d, name)
                link = os.path.join(cls.system, name)
                if name in HIDDEN or os.path.lexists(link) or not os.access(path, os.X_OK):
                    continue
                if os.path.isfile(path):
                    os.symlink(os.path.realpath(path), link)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        self.repo = os.path.join(self.dir.name, "repo")
        shutil.copytree(HERE, os.path.join(self.repo, "scripts"), ignore=shutil.ignore_patterns("__pycache__"))
        os.mkdir(os.path.join(self.repo, "docs"))
        self.published = {}
        for name in ("benchmarks.md", "benchmarks.svg"):
            path = os.path.join(self.repo, "docs", name)
            with open(path, "w", encoding="utf-8") as f:
                f.write(f"the published {name}\n")
            self.published[path] = f"the published {name}\n"
        self.fake = os.path.join(self.repo, "fake")
        os.mkdir(self.fake)
        self.log = os.path.join(self.dir.name, "installers.log")
        self.make("brc", FAKE_BRC)
        self.make("apt-get", FAKE_APT_GET)
        self.make("sudo", FAKE_SUDO)

    def make(self, name, script):
        path = os.path.join(self.fake, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(script)
        os.chmod(path, 0o755)

    def compare(self, *args, **env):
        base = {k: v for k, v in os.environ.items() if k in ("HOME", "LANG", "TMPDIR")}
        base.update(PATH=self.fake + os.pathsep + self.system, FAKE_LOG=self.log, BRC="fake/brc", KEYS="413")
        base.update(env)
        return subprocess.run(
            ["bash", os.path.join(self.repo, "scripts", "compare.sh"), *args],
            cwd=self.repo, env=base, capture_output=True, text=True, timeout=120,
        )

    def installers(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log, encoding="utf-8") as f:
            return f.read().splitlines()

    def assert_published_untouched(self):
        for path, text in self.published.items():
            with open(path, encoding="utf-8") as f:
                self.assertEqual(f.read(), text, path)
        self.assertFalse(os.path.exists(os.path.join(self.repo, "bench", "results")))

    def test_help_names_the_options(self):
        done = self.compare("--help")
        self.assertEqual(done.returncode, 0, done.stderr)
        for option in ("--publish", "--out DIR", "--install", "--dry-run"):
            self.assertIn(option, done.stdout)

    def test_outputs_go_to_a_scratch_folder_unless_published(self):
        self.make("hyperfine", FAKE_HYPERFINE)
        done = self.compare("--dry-run", "1e6", TOOLS="brc")
        self.assertEqual(done.returncode, 0, done.stderr)
        where = dict(line.split(":", 1) for line in done.stdout.splitlines() if line[:1].islower() and ":" in line)
        where = {k: v.strip() for k, v in where.items() if k in ("results", "page", "chart")}
        self.assertRegex(where["results"], r"^bench/work/\d{8}-\d{6}/\d{4}-\d\d-\d\d-[^/]+-1e6\.json$")
        folder = os.path.dirname(where["results"])
        self.assertEqual(where["page"], folder + "/benchmarks.md")
        self.assertEqual(where["chart"], folder + "/benchmarks.svg")
        # A dry run writes nothing.
        self.assertFalse(os.path.exists(os.path.join(self.repo, "bench")))

        done = self.compare("--publish", "--dry-run", "1e6", TOOLS="brc")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertRegex(done.stdout, r"(?m)^results: bench/results/\d{4}-\d\d-\d\d-[^/]+-1e6\.json$")
        self.assertIn("page:    docs/benchmarks.md\n", done.stdout)
        self.assertIn("chart:   docs/benchmarks.svg\n", done.stdout)

        out = os.path.join(self.dir.name, "elsewhere")
        done = self.compare("--out", out, "--dry-run", TOOLS="brc")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn(f"page:    {out}/benchmarks.md\n", done.stdout)

        done = self.compare("--publish", "--out", out, "--dry-run", TOOLS="brc")
        self.assertEqual(done.returncode, 1)
        self.assertIn("takes no --out", done.stderr)
        self.assert_published_untouched()

    def test_a_missing_tool_stops_the_run_in_one_line(self):
        for args in (["--dry-run", "1e6"], ["1e6"]):
            done = self.compare(*args, TOOLS="brc datamash")
            self.assertEqual(done.returncode, 1, args)
            [line] = done.stderr.splitlines()
            self.assertIn("missing hyperfine datamash", line)
            self.assertIn("apt-get install hyperfine datamash", line)
            self.assertIn("--install", line)
            self.assertEqual(self.installers(), [], args)
            self.assertFalse(os.path.exists(os.path.join(self.repo, "bench")))

    def test_install_asks_apt_get_for_what_is_missing(self):
        done = self.compare("--install", "1e6", TOOLS="brc")
        # The stand-in fails, and so does the run.
        self.assertNotEqual(done.returncode, 0)
        self.assertFalse(os.path.exists(os.path.join(self.repo, "bench")))
        calls = [c.removeprefix("sudo ") for c in self.installers() if c.startswith("apt-get")]
        self.assertEqual(len(calls), 2, self.installers())
        self.assertEqual(calls[0], "apt-get update -q")
        self.assertTrue(calls[1].startswith("apt-get install") and calls[1].endswith(" hyperfine"), calls[1])

    def test_a_default_run_leaves_the_published_files_alone(self):
        # compare.sh measures memory with GNU time; .ci/run installs it.
        self.assertTrue(os.access("/usr/bin/time", os.X_OK), "compare.sh needs /usr/bin/time")
        self.make("hyperfine", FAKE_HYPERFINE)
        done = self.compare("100", TOOLS="brc awk", RUNS="1", WARMUP="0", THREADS="1", PAIRS="0")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assert_published_untouched()
        m = re.search(r"^== wrote (\S+), (\S+) and (\S+) \(details in (\S+)\)$", done.stdout, re.M)
        self.assertIsNotNone(m, done.stdout)
        results_path, page, chart, work = m.groups()
        self.assertTrue(results_path.startswith(work + "/") and work.startswith("bench/work/"), m.group(0))
        self.assertEqual((page, chart), (work + "/benchmarks.md", work + "/benchmarks.svg"))
        with open(os.path.join(self.repo, page), encoding="utf-8") as f:
            md = f.read()
        self.assertRegex(md, r"\| \w*awk \(1 thread\) ")
        # The brc stand-in, inside the repository, named from its root.
        self.assertIn("- brc fast (1 thread): `fake/brc --engine fast --threads 1 bench/data/measurements-413-1e2.txt`", md)
        self.assertNotIn(self.dir.name, md)
        self.assertTrue(os.path.exists(os.path.join(self.repo, chart)))

    def test_the_csv_set_goes_beside_the_results_and_onto_the_page(self):
        for name, script in (("hyperfine", FAKE_HYPERFINE), ("datamash", FAKE_DATAMASH), ("mlr", FAKE_MLR)):
            self.make(name, script)
        venv = os.path.join(self.repo, "bench", "venv", "bin")
        os.makedirs(venv)
        with open(os.path.join(venv, "python"), "w", encoding="utf-8") as f:
            f.write(FAKE_VENV_PYTHON)
        os.chmod(os.path.join(venv, "python"), 0o755)
        with open(os.path.join(self.repo, "scripts", "csv.sh"), "w", encoding="utf-8") as f:
            f.write(FAKE_CSV_SH)
        knobs = dict(TOOLS="brc csv", RUNS="1", WARMUP="0", THREADS="1", PAIRS="0", CSV_PAIRS="2")
        done = self.compare("100", **knobs)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assert_published_untouched()
        # csv.sh gets the rows, its pairs, its own keys and no TOOLS of compare.sh's.
        [call] = self.installers()
        self.assertEqual(call, "--rows 1e2 2 TOOLS=unset KEYS=413 PYTHON=bench/venv/bin/python BRC=fake/brc")
        m = re.search(r"^== wrote the CSV set's (bench/work/\d{8}-\d{6}/\d{4}-\d\d-\d\d-csv-1e2\.txt)$", done.stdout, re.M)
        self.assertIsNotNone(m, done.stdout)
        with open(os.path.join(self.repo, m.group(1)), encoding="utf-8") as f:
            self.assertEqual(f.read(), CSV_RUN)
        work = os.path.dirname(m.group(1))
        with open(os.path.join(self.repo, work, "benchmarks.md"), encoding="utf-8") as f:
            md = f.read()
        self.assertIn(f"--csv {m.group(1)}`", md)
        self.assertIn("## CSV: a data logger's export", md)
        self.assertIn("- miller: mlr 6.6.0", md)
        # A failed CSV set: said, the page rendered without it, exit 1.
        os.remove(self.log)
        done = self.compare("100", CSV_FAIL="1", **knobs)
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertIn("the CSV set failed", done.stderr)
        m = re.search(r"^== wrote \S+, (\S+) and ", done.stdout, re.M)
        with open(os.path.join(self.repo, m.group(1)), encoding="utf-8") as f:
            self.assertNotIn("## CSV", f.read())


class AustindonisanUnmapAdapter(unittest.TestCase):
    ADAPTER = os.path.join(HERE, "compare", "peers", "austindonisan-unmap.sh")

    def source(self, text):
        """peer_source over a checkout whose 1brc.c is `text`: its exit
        status, the copy it wrote (or None) and the checkout's file after."""
        with tempfile.TemporaryDirectory() as tmp:
            checkout, out = os.path.join(tmp, "checkout"), os.path.join(tmp, "out")
            os.makedirs(checkout)
            os.makedirs(out)
            with open(os.path.join(checkout, "1brc.c"), "w", encoding="utf-8") as f:
                f.write(text)
            done = subprocess.run(
                ["bash", "-c", '. "$0"; peer_source "$1" "$2"', self.ADAPTER, checkout, out],
                capture_output=True,
                text=True,
            )
            copy = os.path.join(out, "1brc.c")
            written = open(copy, encoding="utf-8").read() if os.path.exists(copy) else None
            with open(os.path.join(checkout, "1brc.c"), encoding="utf-8") as f:
                return done, written, f.read()

    def test_the_copy_waits_for_the_workers_and_the_checkout_is_untouched(self):
        text = "#include <stdio.h>\n#define UNMAP false\n#define PIN_CPU true\nint x = UNMAP;\n"
        done, written, left = self.source(text)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(written, text.replace("#define UNMAP false", "#define UNMAP true"))
        self.assertEqual(left, text)

    def test_a_source_without_the_switch_is_a_failed_build(self):
        # A later version that renames or drops the switch must not be
        # timed as if it waited for its workers.
        done, written, _ = self.source("#define UNMAP  false\n")
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("no '#define UNMAP false' line", done.stderr)
        self.assertIsNone(written)

    def test_it_is_labelled_apart_from_the_default_build(self):
        done = subprocess.run(
            ["bash", "-c", '. "$0"; echo "$peer_label"; peer_build_note', self.ADAPTER],
            capture_output=True,
            text=True,
        )
        label, note = done.stdout.splitlines()[:2]
        self.assertEqual(label, "austindonisan/1brc, UNMAP true")
        self.assertIn("'#define UNMAP true'", note)


class LehuyducAdapter(unittest.TestCase):
    def test_the_data_file_is_named_from_the_repository(self):
        # bench/data a symbolic link, as when clones share their data.
        with tempfile.TemporaryDirectory() as tmp:
            repo, shared = os.path.join(tmp, "repo"), os.path.join(tmp, "shared", "data")
            os.makedirs(shared)
            os.makedirs(os.path.join(repo, "bench", "work", "peers", "lehuyduc"))
            os.symlink(shared, os.path.join(repo, "bench", "data"))
            with open(os.path.join(shared, "m.txt"), "w", encoding="utf-8") as f:
                f.write("A;1.0\n")
            main = os.path.join(repo, "bench", "work", "peers", "lehuyduc", "main-t2")
            with open(main, "w", encoding="utf-8") as f:
                f.write('#!/bin/sh\ncat "$1" >result.txt\n')
            os.chmod(main, 0o755)
            adapter = os.path.join(HERE, "compare", "peers", "lehuyduc.sh")
            script = f'q() {{ printf %q "$1"; }}; . {adapter}; peer_result bench/work/peers/lehuyduc bench/data/m.txt 2'
            command = subprocess.run(["bash", "-c", script], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()
            self.assertNotIn("..", command)
            self.assertNotIn(tmp, command)
            done = subprocess.run(["sh", "-c", command], cwd=repo, capture_output=True, text=True)
            self.assertEqual((done.returncode, done.stdout), (0, "A;1.0\n"), done.stderr)


if __name__ == "__main__":
    unittest.main()

"""Tests of scripts/instructions.py. The runs under valgrind are skipped
where valgrind is not installed.

Usage: python3 scripts/test_instructions.py
"""

import argparse
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import instructions  # noqa: E402

STDERR = """==10== Callgrind, a call-graph generating cache profiler
==10== Events    : Ir
==10== Collected : 1200
==10==
==11== Collected : 34
==11== I   refs:      34
"""


class Arithmetic(unittest.TestCase):
    def test_every_traced_process_is_counted(self):
        self.assertEqual(instructions.collected(STDERR), 1234)

    def test_output_without_counts_is_an_error(self):
        with self.assertRaises(ValueError):
            instructions.collected("==10== valgrind: Unrecognised instruction\n")

    def test_a_row_costs_the_difference_over_the_extra_rows(self):
        self.assertEqual(instructions.per_row(5_000, 500, 1_000, 100), 5.0)
        with self.assertRaises(ValueError):
            instructions.per_row(5_000, 500, 100, 100)

    def test_row_counts_are_read_as_brc_generate_reads_them(self):
        self.assertEqual(instructions.rows_arg("1e6"), 1_000_000)
        self.assertEqual(instructions.rows_arg("2_000"), 2_000)
        with self.assertRaises(argparse.ArgumentTypeError):
            instructions.rows_arg("1.5e6")


@unittest.skipUnless(shutil.which("valgrind"), "valgrind is not installed")
class UnderValgrind(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.files = {}
        for rows in (100, 1_000):
            path = os.path.join(self.dir.name, f"{rows}.txt")
            with open(path, "w") as f:
                f.write("Hamburg;12.0\n" * rows)
            self.files[rows] = path

    def tearDown(self):
        self.dir.cleanup()

    def test_more_rows_cost_more_instructions(self):
        small = instructions.instructions("wc -l {file}", self.files[100])
        big = instructions.instructions("wc -l {file}", self.files[1_000])
        self.assertGreater(instructions.per_row(big, small, 1_000, 100), 0)

    def test_the_processes_a_command_starts_are_counted(self):
        path = self.files[100]
        one = instructions.instructions("wc -l {file}", path)
        two = instructions.instructions("wc -l {file} && wc -l {file}", path)
        self.assertGreater(two, one + one // 2)


if __name__ == "__main__":
    unittest.main()

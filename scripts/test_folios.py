"""Tests of scripts/folios.py. The kernel shows page frames to root only,
so without root they are skipped.

Usage: python3 scripts/test_folios.py
"""

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import folios  # noqa: E402


@unittest.skipUnless(os.geteuid() == 0, "page frames are shown to root only")
class FolioSizes(unittest.TestCase):
    def test_every_page_is_counted_once(self):
        with tempfile.NamedTemporaryFile() as f:
            f.write(b"x" * (3 * folios.PAGE + 100))
            f.flush()
            sizes = folios.folio_sizes(f.name)
            # The partial last page is left out; the rest sum to 3 pages.
            self.assertEqual(sum(k * v for k, v in sizes.items()), 3)

    def test_a_limit_counts_only_the_first_pages(self):
        with tempfile.NamedTemporaryFile() as f:
            f.write(b"x" * (8 * folios.PAGE))
            f.flush()
            sizes = folios.folio_sizes(f.name, 2 * folios.PAGE)
            self.assertEqual(sum(k * v for k, v in sizes.items()), 2)

    def test_an_empty_file_has_no_folios(self):
        with tempfile.NamedTemporaryFile() as f:
            self.assertEqual(folios.folio_sizes(f.name), {})


if __name__ == "__main__":
    unittest.main()

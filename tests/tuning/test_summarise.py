#!/usr/bin/env python3
"""test_summarise.py E2E_DIR - tuning/e2e/summarise.py's separation of two types' repetitions on known
numbers (the column that says whether a criterion's verdict stands outside the run-to-run spread).
Exits 1 on a wrong result."""
import sys

sys.path.insert(0, sys.argv[1])
import summarise  # noqa: E402
from checks import expect, finish  # noqa: E402 (beside this file)


# base min, base max, matxtract min, matxtract max (seconds)
expect(summarise.separation(0.10, 0.12, 0.08, 0.09) == "matxtract faster", "every matxtract run below every base run")
expect(summarise.separation(0.08, 0.09, 0.10, 0.12) == "matxtract slower", "every matxtract run above every base run")
expect(summarise.separation(0.089, 0.118, 0.091, 0.118) == "within the spread", "overlapping ranges (kron20, 100 its)")
expect(summarise.separation(0.10, 0.12, 0.09, 0.10) == "within the spread", "touching ranges are not apart")
finish()

"""checks.py - the tuning script tests' shared reporting: expect() prints each result, finish() prints
the count and exits 1 if any failed."""
import sys

FAILED = []


def expect(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        FAILED.append(what)


def finish():
    print("%d failed" % len(FAILED))
    sys.exit(1 if FAILED else 0)

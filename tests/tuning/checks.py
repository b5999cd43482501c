"""checks.py - the tuning script tests' shared reporting: expect() prints each result, finish() prints
the count and exits 1 if any failed, skip() ends a test whose GPU part cannot run: exit status 77
(ctest's SKIP_RETURN_CODE), or 1 when a check before it failed (a host check is never hidden by a skip);
needs() skips (77) a test whose python3 lacks a module it needs (tests/deps.sh installs them)."""
import importlib.util
import sys

FAILED = []


def expect(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        FAILED.append(what)


def finish():
    print("%d failed" % len(FAILED))
    sys.exit(1 if FAILED else 0)


def skip(why):
    if FAILED:
        finish()
    print(why + ": skipped")
    sys.exit(77)


def needs(*modules):
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        skip("%s has no %s (tests/deps.sh installs %s)" % (sys.executable, ", ".join(missing), "them" if missing[1:] else "it"))

"""hcheck.py - the tally every hardening script keeps: check() records one
expectation, finish() prints "N passed, M failed" (the line CI reads) and
gives the exit status."""
import sys

_counts = {"passed": 0, "failed": 0}


def check(cond, what):
    """Counts one expectation; prints what was expected when it does not hold."""
    if cond:
        _counts["passed"] += 1
    else:
        _counts["failed"] += 1
        print("FAIL:", what)
    return bool(cond)


def finish():
    print("%d passed, %d failed" % (_counts["passed"], _counts["failed"]))
    sys.exit(1 if _counts["failed"] else 0)

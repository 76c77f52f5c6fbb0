"""What the CLI tests beside it (quickstart.py, progress.py) share: a
check() that records results, and run() that gives a test body a
temporary folder and turns the results into the exit status."""
import shutil
import sys
import tempfile

FAILURES = []


def check(what, ok, detail=""):
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    if not ok:
        FAILURES.append(what)
        print("    %s" % str(detail)[:2000])


def run(body, prefix):
    """body(tmp) returns None, or an exit status of its own (77: skipped)."""
    tmp = tempfile.mkdtemp(prefix=prefix)
    try:
        rc = body(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failure(s)" % len(FAILURES))
    sys.exit(rc if rc is not None and not FAILURES else 1 if FAILURES else 0)

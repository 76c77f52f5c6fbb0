"""ok/FAIL lines and the closing 'N passed, N failed' for the synth test scripts."""
PASSED, FAILED = [], []


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)[:500]))
    (PASSED if cond else FAILED).append(name)


def summary():
    print("%d passed, %d failed" % (len(PASSED), len(FAILED)))
    return 1 if FAILED else 0

#!/usr/bin/python3
"""Pins `chakra compare SIM.json REPLAY.json [-o PLOT.svg]` (docs/compare.md):
the rows pair per-rank finish and exposed communication and per-type
collective time summed over ranks, the error is (predicted - measured) /
measured, the SVG has one pair of bars per row, and mismatched or broken
reports are one clear error with status 2. Needs no MPI: the "measured"
report is written here in the replay report's schema.

usage: compare_reports.py CHAKRA_BINARY SOURCE_DIR"""
import json
import os
import re
import subprocess
import sys
import tempfile

CHAKRA, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def main():
    d = tempfile.mkdtemp(prefix="compare-test-")
    prefix, sim = os.path.join(d, "ar"), os.path.join(d, "sim.json")
    subprocess.run([CHAKRA, "gen", "microbench", "--coll", "all_reduce", "--npus", "8", "--size", "1M", "-o", prefix], check=True)
    subprocess.run([CHAKRA, "sim", "-q", "--workload-configuration=" + prefix,
                    "--system-configuration=" + os.path.join(SOURCE, "examples", "system.json"),
                    "--network-configuration=" + os.path.join(SOURCE, "examples", "ring8.yml"), "--report=" + sim],
                   check=True, capture_output=True)
    r = json.load(open(sim))
    for k in r["ranks"]:  # measured: twice as long, comm and finish alike
        k["finish_ns"] *= 2
        k["exposed_comm_ns"] *= 2
        k["collectives"]["ALL_REDUCE"]["time_ns"] *= 2
    meas = os.path.join(d, "replay.json")
    json.dump(r, open(meas, "w"))
    svg = os.path.join(d, "cmp.svg")
    p = subprocess.run([CHAKRA, "compare", sim, meas, "-o", svg], capture_output=True, text=True)
    check(p.returncode == 0, "compare: exit %d %s" % (p.returncode, p.stderr))
    rows = [l for l in p.stdout.splitlines()[1:] if l.strip()]
    check(len(rows) == 17, "compare: %d rows, expected 8 x 2 + 1" % len(rows))
    check(re.match(r"rank 0 finish\s+64\.440\s+128\.880\s+-50\.0%", rows[0] if rows else ""), "compare: row 0 %r" % rows[:1])
    check(rows and re.match(r"ALL_REDUCE time\s+515\.520\s+1031\.040\s+-50\.0%", rows[-1]), "compare: last row %r" % rows[-1:])
    s = open(svg).read() if os.path.exists(svg) else ""
    check("<svg" in s and s.count("class=\"bar\"") == 34, "compare: SVG with %d bars" % s.count("class=\"bar\""))
    one = dict(r, npus=4, ranks=r["ranks"][:4])
    json.dump(one, open(meas, "w"))
    p = subprocess.run([CHAKRA, "compare", sim, meas], capture_output=True, text=True)
    check(p.returncode == 2 and "has 8 ranks but" in p.stderr, "compare: rank mismatch: %d %s" % (p.returncode, p.stderr))
    open(meas, "w").write("{not json")
    p = subprocess.run([CHAKRA, "compare", sim, meas], capture_output=True, text=True)
    check(p.returncode == 2 and "invalid JSON" in p.stderr, "compare: bad JSON: %s" % p.stderr)
    names_are_text_and_distinct(d, sim, r)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


def names_are_text_and_distinct(d, sim, r):
    """A report's collectives are named by CollectiveCommType: a name that
    is none (here one with ESC [2J, which cleared the screen when names were
    printed as found, and a long one that once merged with another into one row) is
    refused in one line naming the file and the member, the name escaped as
    every message escapes names, nothing printed on standard output."""
    evil = "x\x1b[2J\x07bell\nnext\tcol"
    long_a = "L" * 70 + "_alpha"
    for name, shown in ((evil, "x\\x1b[2J\\x07bell\\nnext\\tcol"), (long_a, "L" * 60)):
        rep = json.loads(json.dumps(r))
        for k in rep["ranks"]:
            k["collectives"][name] = {"count": 1, "bytes": 8, "time_ns": 1000}
        both = os.path.join(d, "names.json")
        json.dump(rep, open(both, "w"))
        svg = os.path.join(d, "names.svg")
        p = subprocess.run([CHAKRA, "compare", sim, both, "-o", svg], capture_output=True, text=True)
        err = p.stderr
        check(p.returncode == 2 and p.stdout == "" and not os.path.exists(svg),
              "compare of an unknown collective: exit %d, %r" % (p.returncode, p.stdout[-200:]))
        check(err.count("\n") == 1 and not any(ord(c) < 0x20 and c != "\n" for c in err),
              "compare: one line, no control character: %r" % err)
        check("names.json" in err and "ranks[0].collectives" in err and shown in err
              and "not a collective type" in err, "compare: names the file, member and name: %r" % err)


if __name__ == "__main__":
    sys.exit(main())

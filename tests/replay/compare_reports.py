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
    check(s.startswith("<svg") and s.count("<rect") == 34, "compare: SVG with %d bars" % s.count("<rect"))
    one = dict(r, ranks=r["ranks"][:4])
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
    """Collective names from a report reach the terminal escaped as every
    one-line message escapes them (a name with ESC [2J cleared the screen),
    and two long names sharing their first 64 bytes are two rows (they were
    cut to 64 bytes and merged into one)."""
    evil = "x\x1b[2J\x07bell\nnext\tcol"
    long_a, long_b = "L" * 70 + "_alpha", "L" * 70 + "_beta"
    rep = json.loads(json.dumps(r))
    for k in rep["ranks"]:
        t = k["collectives"]["ALL_REDUCE"]["time_ns"]
        k["collectives"] = {evil: {"time_ns": 1000}, long_a: {"time_ns": t}, long_b: {"time_ns": 3 * t}}
    both = os.path.join(d, "names.json")
    json.dump(rep, open(both, "w"))
    svg = os.path.join(d, "names.svg")
    p = subprocess.run([CHAKRA, "compare", both, both, "-o", svg], capture_output=True, text=True)
    out = p.stdout
    check(p.returncode == 0, "compare of odd names: exit %d %s" % (p.returncode, p.stderr))
    check(not any(ord(c) < 0x20 and c != "\n" for c in out) and "\x7f" not in out,
          "compare: no control character reaches the terminal: %r" % out[-400:])
    check("x\\x1b[2J\\x07bell\\nnext\\tcol time" in out, "compare: the name escaped as in messages: %r" % out[-400:])
    check(out.count("\n") == 1 + 16 + 3, "compare: one line per row (16 rank rows and 3 collectives): %d lines"
          % out.count("\n"))
    rows = {l.split()[0]: l for l in out.splitlines() if l.startswith("L")}
    check(sorted(rows) == [long_a, long_b], "compare: the two long names are two rows, whole: %s" % sorted(rows))
    per = {name: float(line.split()[2]) for name, line in rows.items()}
    check(per.get(long_b) == 3 * per.get(long_a, -1), "compare: each long name keeps its own time: %s" % per)
    s = open(svg).read() if os.path.exists(svg) else ""
    check(long_a in s and long_b in s and "\x1b" not in s, "compare: the SVG labels are the same text")


if __name__ == "__main__":
    sys.exit(main())

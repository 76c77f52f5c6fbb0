#!/usr/bin/python3
"""limits.py - tiny inputs must not take unbounded memory (issue: hardening,
"limits for inflated inputs").

A 100 KB gzip file that inflates to 10^8 empty nodes (each a zero length
byte) once made `validate` use 5 GB. Every reader now refuses gzip data that
expands more than 100:1 once 1 MiB has been inflated, with one line that
names the file and the compressed offset; validate and stats stop at once
and stay small. An ordinary gzip trace still reads.

Usage: limits.py CHAKRA
"""
import gzip
import os
import resource
import subprocess
import sys
import tempfile

from hcheck import check, finish

CHAKRA = sys.argv[1]


def child_peak_mb():
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


with tempfile.TemporaryDirectory() as d:
    bomb = os.path.join(d, "bomb.et.gz")
    with gzip.open(bomb, "wb", 9) as f:
        f.write(bytes([7, 0x0A, 5]) + b"0.0.4")
        zeros = bytes(1 << 20)
        for _ in range(100):
            f.write(zeros)
    for cmd in ("validate", "stats", "jsonize"):
        r = subprocess.run([CHAKRA, cmd, bomb], capture_output=True, text=True)
        out = r.stdout + r.stderr
        check(r.returncode == 2, "%s of the bomb exits 2 (got %d)" % (cmd, r.returncode))
        check("decompression bomb" in out and "bomb.et.gz" in out and "compressed offset" in out,
              "%s names the file, the offset and the reason: %r" % (cmd, out[-300:]))
    check(child_peak_mb() < 400, "peak memory of the refusals %.0f MB < 400 MB" % child_peak_mb())

    prefix = os.path.join(d, "ok")
    subprocess.run([CHAKRA, "gen", "microbench", "--coll", "all_reduce", "--npus", "2", "--size", "1M",
                    "-o", prefix], check=True)
    plain = prefix + ".0.et"
    with open(plain, "rb") as f, gzip.open(prefix + ".gz.et", "wb") as g:
        g.write(f.read())
    r = subprocess.run([CHAKRA, "jsonize", prefix + ".gz.et"], capture_output=True, text=True)
    check(r.returncode == 0 and "all_reduce" in r.stdout, "an ordinary gzip trace still reads")

finish()

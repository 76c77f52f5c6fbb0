#!/usr/bin/python3
"""corners.py - inputs that used to cost quadratic time finish in linear time
(issue: hardening, "no quadratic corners").

  * `sim` with "preferred-dataset-splits": 100000 (a 1 GiB all-reduce on 8
    ranks in 10^5 chunks): every chunk's stream was appended by walking the
    queue (20,000 splits took 2.9 s, 100,000 about 70 s); now about 2 s.
    The bound here is 30 s, generous for the sanitizer build.
(`pack` of one huge string is pinned in outputs.py.)

Usage: corners.py CHAKRA SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

from hcheck import check, finish
import time

CHAKRA, SOURCE = sys.argv[1], sys.argv[2]


with tempfile.TemporaryDirectory() as d:
    prefix = os.path.join(d, "ar8")
    subprocess.run([CHAKRA, "gen", "microbench", "--coll", "all_reduce", "--npus", "8", "--size", "1G",
                    "-o", prefix], check=True)
    system = json.load(open(os.path.join(SOURCE, "examples", "system.json")))
    system["preferred-dataset-splits"] = 100000
    sys_path = os.path.join(d, "sys.json")
    json.dump(system, open(sys_path, "w"))
    net = os.path.join(SOURCE, "examples", "ring8.yml")
    t0 = time.time()
    r = subprocess.run([CHAKRA, "sim", "--workload-configuration=" + prefix, "--system-configuration=" + sys_path,
                        "--network-configuration=" + net], capture_output=True, text=True, timeout=120)
    took = time.time() - t0
    check(r.returncode == 0 and r.stdout.count("finished") == 8, "sim with 10^5 splits finishes: %r" % r.stderr[-300:])
    check(took < 30, "sim with 10^5 splits takes %.1f s (< 30 s)" % took)

finish()

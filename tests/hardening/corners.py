#!/usr/bin/python3
"""corners.py - inputs that used to cost quadratic time finish in linear time
(issue: hardening, "no quadratic corners").

  * `sim` with "preferred-dataset-splits": 100000 (a 1 GiB all-reduce on 8
    ranks in 10^5 chunks): every chunk's stream was appended by walking the
    queue (20,000 splits took 2.9 s, 100,000 about 70 s); now about 2 s.
    Checked as growth, not as a time: the CPU time (not wall time, which
    load on the machine inflates) of 10^5 splits over that of 10^4 splits
    must stay below 30 (linear: ~10; the old quadratic queue: ~100).
(`pack` of one huge string is pinned in outputs.py.)

Usage: corners.py CHAKRA SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

from hcheck import check, finish
import resource

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

    def run(splits):
        system["preferred-dataset-splits"] = splits
        json.dump(system, open(sys_path, "w"))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = subprocess.run([CHAKRA, "sim", "--workload-configuration=" + prefix, "--system-configuration=" + sys_path,
                            "--network-configuration=" + net], capture_output=True, text=True, timeout=600)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        check(r.returncode == 0 and r.stdout.count("finished") == 8,
              "sim with %d splits finishes: %r" % (splits, r.stderr[-300:]))
        return max(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 0.01)

    small, large = run(10000), run(100000)
    print("splits 10^4: %.2f s CPU, 10^5: %.2f s CPU" % (small, large))
    check(large / small < 30, "10x the splits costs %.1fx the CPU time (%.2f s -> %.2f s; linear ~10x)"
          % (large / small, small, large))

finish()

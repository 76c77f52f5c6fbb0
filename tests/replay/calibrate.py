#!/usr/bin/python3
"""Pins `mpirun -np N chakra replay --calibrate -o NET.yml --system SYS.json`
(docs/replay.md, "Calibrating"): on 2 and 3 processes it measures, fits and
writes an ASTRA-sim network YAML whose npus_count is the job size and whose
bandwidth and latency are positive (latency >= 0) finite numbers, which
`chakra sim` reads and simulates a microbenchmark of that size with; it
reports every measured point; bad use fails with one line and writes
nothing. Skips when chakra was built without MPI or mpirun is missing.

usage: calibrate.py CHAKRA_BINARY SOURCE_DIR"""
import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mpitest import SKIP, SOURCE, check, have_mpi, run, run_tests  # noqa: E402


def yaml_list(text, key):
    m = re.search(r"^%s:\s*\[\s*([^\]]*)\]" % key, text, re.M)
    return [v.strip() for v in m.group(1).split(",")] if m else []


def test_calibrated_network_loads_in_sim(work):
    system = os.path.join(SOURCE, "examples", "system.json")
    for n in (2, 3):
        out = os.path.join(work, "net%d.yml" % n)
        p = run("replay", "--calibrate", "--system", system, "-o", out, "--min-size", "16K", "--max-size", "1M",
                "--fit-from", "16K", "--iterations", 2, "--warmup", 1, mpi=n)
        check(p.returncode == 0, "%d processes: calibration ran: %s" % (n, p.stderr))
        if p.returncode:
            continue
        text = open(out).read()
        check(yaml_list(text, "npus_count") == [str(n)], "%d processes: npus_count [%d]: %s" % (n, n, text))
        bw, lat = [float(v) for v in yaml_list(text, "bandwidth")], [float(v) for v in yaml_list(text, "latency")]
        check(len(bw) == 1 and math.isfinite(bw[0]) and bw[0] > 0, "bandwidth positive and finite: %s" % bw)
        check(len(lat) == 1 and math.isfinite(lat[0]) and lat[0] >= 0, "latency finite, >= 0: %s" % lat)
        rows = [l for l in p.stdout.splitlines() if re.match(r"(all_\w+|reduce_scatter|point-to-point) +\d", l)]
        # 16K, 64K, 256K, 1M: point-to-point and four collectives each
        check(len(rows) == 20, "%d processes: 20 measured points reported, got %d" % (n, len(rows)))
        for r in rows:
            f = r.split()
            check(float(f[2]) > 0 and float(f[3]) > 0, "measured and predicted times > 0: " + r)
        prefix = os.path.join(work, "ar%d" % n)
        run("gen", "microbench", "--coll", "all_reduce", "--npus", n, "--size", "1M", "-o", prefix)
        s = run("sim", "-q", "--workload-configuration=" + prefix, "--system-configuration=" + system,
                "--network-configuration=" + out)
        check(s.returncode == 0 and s.stdout.count("finished,") == n,
              "%d processes: chakra sim reads the calibrated network: %s" % (n, s.stderr))
        left = [f for f in os.listdir(work) if f.startswith("chakra-calibrate.")]
        check(not left, "the microbenchmark folders are removed: %s" % left)


def test_system_output_fits_implementations_and_reduction_bandwidth(work):
    import json
    system = os.path.join(SOURCE, "examples", "system.json")
    net, sysout = os.path.join(work, "fit.yml"), os.path.join(work, "fit.json")
    p = run("replay", "--calibrate", "--system", system, "-o", net, "--system-output", sysout, "--min-size", "64K",
            "--max-size", "1M", "--fit-from", "64K", "--iterations", 2, "--warmup", 1, mpi=2)
    check(p.returncode == 0, "calibration with --system-output ran: " + p.stderr)
    if p.returncode:
        return
    given, fitted = json.load(open(system)), json.load(open(sysout))
    impls = {"all-reduce-implementation": ("ring", "direct", "halvingDoubling", "doubleBinaryTree"),
             "all-gather-implementation": ("ring", "direct", "halvingDoubling"),
             "reduce-scatter-implementation": ("ring", "direct", "halvingDoubling"),
             "all-to-all-implementation": ("ring", "direct")}
    for key, allowed in impls.items():
        v = fitted.get(key)
        check(isinstance(v, list) and len(v) == 1 and v[0] in allowed, "%s is one of %s: %s" % (key, allowed, v))
    mem = fitted.get("local-mem-bw")
    check(isinstance(mem, (int, float)) and math.isfinite(mem) and mem > 0, "local-mem-bw fitted, > 0: %s" % mem)
    kept = {k: v for k, v in given.items() if k not in impls and k != "local-mem-bw"}
    check(all(fitted.get(k) == v for k, v in kept.items()), "the other keys are kept: %s" % fitted)
    line = [l for l in p.stdout.splitlines() if l.startswith("system: local-mem-bw")]
    check(len(line) == 1 and sysout in line[0], "the fitted system is printed: " + p.stdout[:400])
    # The table's predictions are what chakra sim gives with the two files.
    names = {"all_reduce": "all_reduce", "all_gather": "all_gather", "reduce_scatter": "reduce_scatter",
             "all_to_all": "all_to_all"}
    rows = [l.split() for l in p.stdout.splitlines() if re.match(r"(all_\w+|reduce_scatter) +1048576 ", l)]
    check(len(rows) == 4, "four collectives reported at 1 MiB: %d" % len(rows))
    for row in rows:
        prefix = os.path.join(work, "mb_" + row[0])
        run("gen", "microbench", "--coll", names[row[0]], "--npus", 2, "--size", "1M", "-o", prefix)
        s = run("sim", "-q", "--workload-configuration=" + prefix, "--system-configuration=" + sysout,
                "--network-configuration=" + net)
        cycles = [int(m) for m in re.findall(r"finished, (\d+) cycles", s.stdout)]
        check(s.returncode == 0 and cycles and abs(max(cycles) / 1000 - float(row[3])) < 0.002,
              "%s 1 MiB: sim with the written files gives the reported %s us: %s" % (row[0], row[3], cycles))


def test_bad_use_fails_with_one_line(work):
    system = os.path.join(SOURCE, "examples", "system.json")
    out = os.path.join(work, "bad.yml")
    p = run("replay", "--calibrate", "-o", out)
    check(p.returncode == 2 and "--system" in p.stderr and not os.path.exists(out), "no --system: " + p.stderr)
    p = run("replay", "--calibrate", "--system", system, "-o", out, mpi=1)
    check(p.returncode != 0 and "at least 2 processes" in p.stderr and not os.path.exists(out),
          "one process: " + p.stderr)
    p = run("replay", "--calibrate", "--system", os.path.join(work, "missing.json"), "-o", out, "--min-size", "1M",
            "--max-size", "1M", mpi=2)
    check(p.returncode != 0 and p.stderr.count("missing.json") == 1 and not os.path.exists(out),
          "a missing system file: one line: " + p.stderr)


if __name__ == "__main__":
    if not have_mpi():
        print("SKIP: chakra built without MPI or mpirun missing")
        sys.exit(SKIP)
    run_tests(globals(), "calibrate")

#!/usr/bin/env python3
"""chakra synth --stage-compat writes, for STAGE's own command line, the files
STAGE wrote: every shared configuration in ../shared/data/traces/stage/*/
(CMD.txt holds the exact STAGE command line) is run as given, with STAGE's
underscore options and --output_dir/--output_name, plus --stage-compat and
--stage-tag-base set to the first pipeline tag found in STAGE's files (STAGE
draws it at random). Every rank file and the comm-group JSON must be byte
for byte STAGE's. With --sim, `chakra sim` of our files must also give the
same per-rank times as of STAGE's. Exits 77 (skipped) when the shared data
is absent.

usage: stage_conformance.py CHAKRA SOURCE_DIR [--sim] [CASE ...]"""
import glob
import json
import os
import shlex
import subprocess
import sys
import tempfile

RING = "topology: [ Ring ]\nnpus_count: [ %d ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n"
SYSTEM = {"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
          "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring"],
          "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
          "all-to-all-implementation": ["direct"], "collective-optimization": "localBWAware",
          "local-mem-bw": 1600, "boost-mode": 0, "roofline-enabled": 1, "peak-perf": 900}


def ranks_of(folder, name):
    return len(glob.glob(os.path.join(folder, name + ".*.et")))


def first_tag(chakra, folder, name, n):
    tags = []
    for r in range(n):
        out = subprocess.run([chakra, "jsonize", os.path.join(folder, "%s.%d.et" % (name, r))],
                             check=True, capture_output=True, text=True).stdout
        for line in out.splitlines()[1:]:
            for a in json.loads(line).get("attr", []):
                if a["name"] == "comm_tag":
                    tags.append(int(a["int32_val"]))
    return min(tags) if tags else 0


def stage_args(cmd, out_dir):
    """STAGE's argv after main.py, with OUT replaced."""
    argv = shlex.split(cmd)
    argv = argv[argv.index("main.py") + 1:]
    return [out_dir if a == "OUT" else a for a in argv]


def simulate(chakra, prefix, n, tmp):
    net = os.path.join(tmp, "net.yml")
    sysf = os.path.join(tmp, "sys.json")
    with open(net, "w") as f:
        f.write(RING % n)
    with open(sysf, "w") as f:
        json.dump(SYSTEM, f)
    p = subprocess.run([chakra, "sim", "--workload-configuration=" + prefix,
                        "--comm-group-configuration=" + prefix + ".json", "--system-configuration=" + sysf,
                        "--network-configuration=" + net], capture_output=True, text=True)
    if p.returncode != 0:
        return "sim failed: " + p.stderr.strip()
    return sorted(l for l in p.stdout.splitlines() if l.startswith("sys["))


def main():
    chakra, source = sys.argv[1], sys.argv[2]
    rest = sys.argv[3:]
    sim = "--sim" in rest
    only = [a for a in rest if a != "--sim"]
    shared = os.environ.get("CHAKRA_SHARED", os.path.join(source, "..", "shared"))
    cases = sorted(glob.glob(os.path.join(shared, "data", "traces", "stage", "*", "CMD.txt")))
    if not cases:
        print("skipped: no STAGE configuration with CMD.txt under %s (set CHAKRA_SHARED)" % shared)
        return 77
    failed = passed = 0
    for cmdfile in cases:
        folder = os.path.dirname(cmdfile)
        name = os.path.basename(folder)
        if only and name not in only:
            continue
        with open(cmdfile) as f:
            cmd = f.read().strip()
        n = ranks_of(folder, name)
        with tempfile.TemporaryDirectory() as tmp:
            args = stage_args(cmd, tmp)
            tag = first_tag(chakra, folder, name, n)
            p = subprocess.run([chakra, "synth"] + args + ["--stage-compat", "--stage-tag-base", str(tag), "-q"],
                               capture_output=True, text=True)
            bad = []
            if p.returncode != 0:
                bad.append("synth failed: " + p.stderr.strip())
            else:
                for f in [name + ".json"] + ["%s.%d.et" % (name, r) for r in range(n)]:
                    mine, ref = os.path.join(tmp, f), os.path.join(folder, f)
                    if not os.path.exists(mine) or open(mine, "rb").read() != open(ref, "rb").read():
                        bad.append(f)
                if len(os.listdir(tmp)) != n + 1:
                    bad.append("%d files written, STAGE wrote %d" % (len(os.listdir(tmp)), n + 1))
            if not bad and sim:
                a = simulate(chakra, os.path.join(tmp, name), n, tmp)
                b = simulate(chakra, os.path.join(folder, name), n, tmp)
                if a != b or isinstance(a, str):
                    bad.append("chakra sim differs: %s vs %s" % (a[:2], b[:2]))
                else:
                    print("     %s: chakra sim equal on %d ranks (%s)" % (name, n, a[0]))
        if bad:
            failed += 1
            print("FAIL %s: %s" % (name, "; ".join(bad[:4]) + (" ..." if len(bad) > 4 else "")))
        else:
            passed += 1
            print("ok   %s: %d rank files and the groups byte-identical (tag base %d)" % (name, n, tag))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

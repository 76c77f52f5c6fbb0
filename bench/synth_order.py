#!/usr/bin/python3
"""Node ids are the simulator's issue priority: what the numbering alone does
to the simulated time, on every shared STAGE configuration
(../shared/data/traces/stage/*/CMD.txt).

For each configuration, `chakra sim` (8-or-16-NPU ring, 50 GB/s, 500 ns,
roofline compute at 900 TFLOP/s; the last rank's finish, in cycles = ns):
  stage        STAGE's files as written (= chakra synth --stage-compat)
  stage-topo   the same files, ids renumbered in topological order (ties by
               STAGE's id): the same graph with our default numbering
  ours         chakra synth on the same command line (default mode: bytes,
               FLOPs, one dp reduction per iteration), for each --schedule
               (none, 1f1b) and --order (schedule, stage)

usage: bench/synth_order.py [BUILD_DIR=build]  (prints a Markdown table)
STAGE_CASES=GLOB selects other folders of STAGE output with a CMD.txt."""
import glob
import heapq
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHAKRA = os.path.join(ROOT, sys.argv[1] if len(sys.argv) > 1 else "build", "bin", "chakra")
SHARED = os.environ.get("CHAKRA_SHARED", os.path.join(ROOT, "..", "shared"))
SYSTEM = {"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
          "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring"],
          "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
          "all-to-all-implementation": ["ring"], "collective-optimization": "localBWAware",
          "local-mem-bw": 1600, "roofline-enabled": 1, "peak-perf": 900}
LINE = re.compile(r"^sys\[(\d+)\] finished, (\d+) cycles")


def run(*args):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if p.returncode:
        raise SystemExit("%s: %s" % (" ".join(map(str, args[:3])), p.stderr.strip()))
    return p.stdout


def sim(prefix, n, tmp):
    net, sysf = os.path.join(tmp, "net.yml"), os.path.join(tmp, "sys.json")
    with open(net, "w") as f:
        f.write("topology: [ Ring ]\nnpus_count: [ %d ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n" % n)
    with open(sysf, "w") as f:
        json.dump(SYSTEM, f)
    p = subprocess.run([CHAKRA, "sim", "-q", "--workload-configuration=" + prefix,
                        "--comm-group-configuration=" + prefix + ".json", "--system-configuration=" + sysf,
                        "--network-configuration=" + net], capture_output=True, text=True)
    times = [int(m.group(2)) for m in map(LINE.match, p.stdout.splitlines()) if m]
    return max(times) if len(times) == n else "%d of %d ranks finish" % (len(times), n)


def renumber_topologically(src, dst):
    """STAGE's file with ids 0.. in topological order, ties by its id."""
    lines = run(CHAKRA, "jsonize", src).splitlines()
    nodes = [json.loads(l) for l in lines[1:]]
    byid = {int(n.get("id", "0")): n for n in nodes}
    indeg = {i: 0 for i in byid}
    kids = {i: [] for i in byid}
    for i, n in byid.items():
        for d in set(int(x) for x in n.get("data_deps", [])):
            indeg[i] += 1
            kids[d].append(i)
    heap = [i for i, k in indeg.items() if k == 0]
    heapq.heapify(heap)
    new = {}
    while heap:
        i = heapq.heappop(heap)
        new[i] = len(new)
        for k in kids[i]:
            indeg[k] -= 1
            if indeg[k] == 0:
                heapq.heappush(heap, k)
    out = [lines[0]]
    for i in sorted(byid, key=new.get):
        n = dict(byid[i])
        n["id"] = str(new[i])
        if "data_deps" in n:
            n["data_deps"] = [str(new[int(d)]) for d in n["data_deps"]]
        out.append(json.dumps(n))
    tmp = dst + ".jsonl"
    with open(tmp, "w") as f:
        f.write("\n".join(out) + "\n")
    run(CHAKRA, "pack", tmp, "-o", dst)
    os.remove(tmp)


def ours(args, tmp, tag, extra):
    """Our default mode on STAGE's command line; None when it refuses it."""
    d = os.path.join(tmp, tag)
    os.makedirs(d)
    argv = list(args)
    i = argv.index("--output_dir")
    argv[i + 1] = d
    p = subprocess.run([CHAKRA, "synth", "-q"] + argv + extra, capture_output=True, text=True)
    if p.returncode:
        return None
    name = argv[argv.index("--output_name") + 1].replace(".%d.et", "")
    return os.path.join(d, name)


def main():
    pattern = os.environ.get("STAGE_CASES", os.path.join(SHARED, "data", "traces", "stage", "*", "CMD.txt"))
    cases = sorted(glob.glob(pattern))
    if not cases:
        raise SystemExit("no STAGE configuration under %s" % SHARED)
    print("| configuration | ranks | STAGE's ids | STAGE's graph, topological ids | ours, --schedule none, --order schedule "
          "| ours, none, --order stage | ours, 1f1b (default), --order schedule (default) | ours, 1f1b, --order stage |")
    print("|---|---|---|---|---|---|---|---|")
    for cmdfile in cases:
        folder = os.path.dirname(cmdfile)
        args = shlex.split(open(cmdfile).read())
        args = args[args.index("main.py") + 1:]
        name = args[args.index("--output_name") + 1].replace(".%d.et", "")
        n = len(glob.glob(os.path.join(folder, name + ".*.et")))
        with tempfile.TemporaryDirectory() as tmp:
            row = [sim(os.path.join(folder, name), n, tmp)]
            topo = os.path.join(tmp, "topo")
            os.makedirs(topo)
            for r in range(n):
                renumber_topologically(os.path.join(folder, "%s.%d.et" % (name, r)), os.path.join(topo, "%s.%d.et" % (name, r)))
            with open(os.path.join(folder, name + ".json")) as a, open(os.path.join(topo, name + ".json"), "w") as b:
                b.write(a.read())
            row.append(sim(os.path.join(topo, name), n, tmp))
            for sched in ("none", "1f1b"):
                for order in ("schedule", "stage"):
                    p = ours(args, tmp, sched + order, ["--schedule", sched, "--order", order])
                    row.append(sim(p, n, tmp) if p else "refused")
        cells = [t if isinstance(t, str) else "{:,}".format(t) if t is not None else "unfinished" for t in row]
        print("| %s | %d | %s |" % (name, n, " | ".join(cells)))


if __name__ == "__main__":
    main()

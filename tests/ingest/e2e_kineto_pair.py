#!/usr/bin/python3
"""End to end on the shared Kineto pair (spec pytorch-ingest.md section 2):
link the 1.0.1 host ET with its Kineto trace, convert, validate, simulate.

What is pinned, and why it is meaningful:
  * link: all 36 host ops match by name (the trace has no Record function
    id), the 4 kernels of stream 7 hang under the host ops that launched
    them, the 5 cudaDeviceSynchronize calls give sync deps;
  * convert: each kernel depends on its launcher and on the previous kernel
    of stream 7; the host ops form one chain; validate finds no error;
  * sim (1 NPU, the profiled job had one rank): the finish time equals the
    longest path of the DAG computed here independently from the jsonized
    trace, and lies within 0.01 % of the traced span of the profiled region
    (the host ops' exclusive times partition that span; the DAG adds only
    the few microseconds of kernels the host waited for).
Exits 77 (skipped) when ../shared is absent."""
import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


def jsonl(chakra, et):
    out = run([chakra, "jsonize", et, "-o", "-"]).stdout.splitlines()
    meta = json.loads(out[0])
    return meta, [json.loads(l) for l in out[1:]]


def attrs(node):
    r = {}
    for a in node.get("attr", []):
        for k, v in a.items():
            if k != "name":
                r[a["name"]] = v
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chakra", required=True)
    ap.add_argument("--repo", required=True)
    a = ap.parse_args()
    shared = os.environ.get("CHAKRA_SHARED") or os.path.join(a.repo, "..", "shared")
    host = os.path.join(shared, "data/traces/kineto-pair/simple_add.host_et.json.gz")
    kineto = os.path.join(shared, "data/traces/kineto-pair/simple_add.kineto.json.gz")
    system = os.path.join(shared, "data/configs/system/Ring_4chunks.json")
    if not os.path.exists(host) or not os.path.exists(system):
        print("skipped: the shared folder is absent (set CHAKRA_SHARED or put it at ../shared)")
        return 77
    tmp = tempfile.mkdtemp(prefix="chakra-e2e-pair.")
    try:
        linked = os.path.join(tmp, "linked.json.gz")
        p = run([a.chakra, "link", "--host", host, "--device", kineto, "--rank", "0", "-o", linked])
        assert "36 of 36 host ops matched (by name, per thread)" in p.stdout, p.stdout
        assert "4 of 4 device ops attached; 2 sync deps" in p.stdout, p.stdout
        # the output is gzip (by its name) and reads back as the nested layout
        with gzip.open(linked, "rt") as f:
            L = json.load(f)
        assert L["schema"] == "1.0.2-chakra.0.0.4" and L["source_schema"] == "1.0.1"
        kernels = [n for n in L["nodes"] if n.get("cat") == "kernel"]
        assert len(kernels) == 4 and all(k["stream"] == 7 for k in kernels)
        byid = {n["id"]: n for n in L["nodes"]}
        launchers = sorted(byid[k["ctrl_deps"]]["name"] for k in kernels)
        assert launchers == ["aten::add", "aten::add", "aten::uniform_", "aten::uniform_"], launchers
        assert sum(len(n.get("sync_dep", [])) for n in L["nodes"]) == 2

        et = os.path.join(tmp, "pair.0.et")
        run([a.chakra, "convert", "pytorch", linked, "-o", et, "-q"])
        v = run([a.chakra, "validate", et])
        assert " 0 error(s)" in v.stdout, v.stdout

        meta, nodes = jsonl(a.chakra, et)
        ids = {int(n.get("id", 0)): n for n in nodes}
        data_deps = {i: [int(d) for d in n.get("data_deps", [])] for i, n in ids.items()}
        deps = {i: data_deps[i] + [int(d) for d in n.get("ctrl_deps", [])] for i, n in ids.items()}
        gpu = [i for i, n in ids.items() if attrs(n).get("is_cpu_op") is False]
        assert len(gpu) == 4
        gpu.sort()
        for prev, k in zip(gpu, gpu[1:]):
            assert prev in deps[k], f"kernel {k} does not follow kernel {prev} of stream 7"
        for k in gpu:
            # the launcher is the kernel's parent (ctrl dep) and must also be a data dep
            launcher = int(ids[k]["ctrl_deps"][0])
            assert launcher in data_deps[k], f"kernel {k}: launcher {launcher} not in data deps {data_deps[k]}"
        # the host ops, in start order, form one chain: each has a data dep on the previous one
        host_ops = sorted((i for i, n in ids.items() if attrs(n).get("is_cpu_op") is True),
                          key=lambda i: (int(ids[i].get("start_time_micros", 0)), i))
        assert len(host_ops) == len(ids) - 4, host_ops
        for prev, h in zip(host_ops, host_ops[1:]):
            assert prev in data_deps[h], f"host op {h} does not follow host op {prev}: data deps {data_deps[h]}"

        # the longest path, nodes weighted as the simulator replays them
        # (duration_micros * 1000 ns, 0 -> 1 ns)
        finish = {}
        order = sorted(ids)
        pending = set(order)
        while pending:
            progressed = False
            for i in list(pending):
                if all(d in finish or d not in ids for d in deps[i]):
                    start = max([finish[d] for d in deps[i] if d in finish], default=0)
                    dur = int(ids[i].get("duration_micros", 0)) * 1000
                    finish[i] = start + (dur if dur else 1)
                    pending.discard(i)
                    progressed = True
            assert progressed, "cycle"
        longest = max(finish.values())

        net = os.path.join(tmp, "net1.yml")
        with open(net, "w") as f:
            f.write("topology: [ Ring ]\nnpus_count: [ 1 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n")
        s = run([a.chakra, "sim", "--workload-configuration=" + os.path.join(tmp, "pair"),
                 "--system-configuration=" + system, "--network-configuration=" + net])
        m = re.search(r"sys\[0\] finished, (\d+) cycles", s.stdout)
        assert m, s.stdout
        simulated = int(m.group(1))
        assert simulated == longest, f"simulated {simulated} ns, longest path {longest} ns"
        # GPU time: the four kernels (5 + 5 + 3 + 3 us)
        assert re.search(r"sys\[0\], GPU time: 16000\b", s.stdout), s.stdout

        with gzip.open(kineto, "rt") as f:
            K = json.load(f)
        host_ev = [e for e in K["traceEvents"] if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation")]
        span = max(e["ts"] + e["dur"] for e in host_ev) - min(e["ts"] for e in host_ev)
        rel = abs(simulated / 1000.0 - span) / span
        assert rel < 1e-4, f"simulated {simulated / 1000.0} us vs traced span {span} us"
        print(f"ok: linked 36/36, 4 kernels; simulated {simulated} ns = longest path; traced span {span} us "
              f"(difference {rel * 100:.5f} %)")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

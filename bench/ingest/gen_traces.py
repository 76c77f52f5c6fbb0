#!/usr/bin/python3
"""Benchmark inputs for chakra convert pytorch (spec pytorch-ingest.md 4.5).

Replicates the shared host ET k times with fresh ids (the thread root and
the process root stay single, as in the reference's measurements: k x 261
+ 2 nodes), in the file's own layout (one node per line). With --linked,
the result is a linked trace: host ops get ts / inclusive_dur /
exclusive_dur, and each replica gains 40 device ops: a copy kernel under
each of its 30 aten::copy_ and an NCCL all-gather kernel under each of its
10 nccl:all_gather (k x 301 + 2 nodes).

  gen_traces.py --source HOST.json --scale K [--linked] -o OUT.json
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--scale", type=int, required=True)
    ap.add_argument("--linked", action="store_true")
    ap.add_argument("-o", required=True)
    a = ap.parse_args()
    with open(a.source) as f:
        src = json.load(f)
    nodes = src["nodes"]
    thread = [n for n in nodes if n["id"] == 2]
    proc = [n for n in nodes if n["id"] == 1]
    body = [n for n in nodes if n["id"] not in (1, 2)]
    if len(thread) != 1 or len(proc) != 1:
        sys.exit("gen_traces.py: expected the thread root id 2 and the process root id 1")
    maxid = max(n["id"] for n in nodes)
    stride = 2 * maxid  # room for the device ops of a replica
    gpu_base = maxid  # device ops of replica r: r * stride + maxid + 1 ...
    count = 2
    with open(a.o, "w") as out:
        out.write('{\n  "schema": "%s", "pid": %d, "time": "%s", "start_ts": %d,\n  "nodes": [\n'
                  % (src["schema"], src["pid"], src["time"], src["start_ts"]))
        first = [True]

        def emit(n):
            if not first[0]:
                out.write(",\n")
            first[0] = False
            out.write("    " + json.dumps(n, separators=(", ", ": ")))

        emit(thread[0])
        for r in range(a.scale):
            off = r * stride
            gpu_id = off + gpu_base + 1
            for n in body:
                m = dict(n)
                m["id"] = n["id"] + off
                if n["ctrl_deps"] > 2:
                    m["ctrl_deps"] = n["ctrl_deps"] + off
                if a.linked:
                    ts = 1_000_000 + m["id"] * 10.0
                    m["ts"], m["inclusive_dur"], m["exclusive_dur"] = ts, 8.5, 3.25
                    m["inter_thread_dep"] = None
                emit(m)
                count += 1
                if a.linked and n["name"] in ("aten::copy_", "nccl:all_gather"):
                    g = dict(m)
                    nccl = n["name"] == "nccl:all_gather"
                    g.update({"id": gpu_id, "ctrl_deps": m["id"],
                              "name": "ncclDevKernel_AllGather_RING_LL" if nccl
                              else "void at::native::unrolled_elementwise_kernel<copy>",
                              "cat": "kernel", "ph": "X", "ts": m["ts"] + 2.0,
                              "inclusive_dur": 40.5 if nccl else 1.5, "exclusive_dur": 40.5 if nccl else 1.5,
                              "stream": 20 if nccl else 7, "device": 0})
                    g.pop("inter_thread_dep", None)
                    gpu_id += 1
                    emit(g)
                    count += 1
        emit(proc[0])
        out.write('\n  ],\n  "finish_ts": %d\n}\n' % src["finish_ts"])
    print(f"{a.o}: {count} nodes")


if __name__ == "__main__":
    main()

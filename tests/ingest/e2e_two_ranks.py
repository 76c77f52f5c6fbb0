#!/usr/bin/python3
"""End to end on a synthetic two-rank PyTorch job with NCCL: host ETs and
Kineto traces written here (the shared data has no multi-rank pair), then
link -> convert -> validate (both ranks together) -> sim (2 NPUs).

Each rank runs, on its main thread: a process-group init (groups "0" = all
ranks, backend 500, and "1" = [0, 1], backend 600), a matmul (its kernel
found only through the ac2g flow arrow: no runtime call), an all-reduce of
4 KiB, two point-to-point transfers of 4 KiB (rank 0 sends, rank 1
receives; the peer is the rank argument of record_param_comms), an add and
a host op that calls cudaStreamSynchronize on stream 7; a second thread
starts 2.3 ms later. The Kineto traces carry "Record function id".

Pinned: matching by record function id; every kernel attached; comm_type,
comm_size, pg_name; comm_dst/comm_src and tags that match across ranks
(validate's cross-rank check); stream order; the sync dep; the
inter-thread dep; the comm-group file; the simulation finishing on both
ranks with the collective and the transfers costing time."""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

T4K = [[101, 102, 0, 1024, 4, "cuda:0"]]
RPC_TYPES = ["GenericList[Tensor(float)]", "Int", "Int", "Int", "String", "GenericList[]", "GenericList[]", "Int"]


def attrs(rf, tid, extra=()):
    a = [{"name": "rf_id", "type": "uint64", "value": rf}, {"name": "fw_parent", "type": "uint64", "value": 0},
         {"name": "seq_id", "type": "int64", "value": -1}, {"name": "scope", "type": "uint64", "value": 0},
         {"name": "tid", "type": "uint64", "value": tid}, {"name": "fw_tid", "type": "uint64", "value": 0},
         {"name": "op_schema", "type": "string", "value": ""}]
    return a + list(extra)


def make_rank(r):
    """Returns (host ET dict, Kineto dict) of rank r."""
    peer = 1 - r
    p2p = "send" if r == 0 else "recv"
    p2p_name = f"nccl:send {r}->{peer}" if r == 0 else f"nccl:recv {r}<-{peer}"
    pg_json = json.dumps([{"pg_name": "0", "backend_id": 500, "backend_config": "cuda:nccl", "ranks": [],
                           "group_size": 2, "group_count": 2},
                          {"pg_name": "1", "backend_id": 600, "backend_config": "cuda:nccl", "ranks": [0, 1],
                           "group_size": 2, "group_count": 2}])
    # id, name, parent, tid, values, types, kineto (ts, dur) or None, extra attrs
    ops = [
        (3, "## process_group:init ##", 2, 1, [pg_json], ["String"], (100, 10), ()),
        (4, "aten::mm", 2, 1, T4K, ["Tensor(float)"], (200, 50), ()),
        (5, "c10d::allreduce_", 2, 1, [T4K], ["GenericList[Tensor(float)]"], (300, 60), ()),
        (6, "record_param_comms", 5, 1, [T4K, 1, 500, r, "allreduce", [], [], 2], RPC_TYPES, (305, 50), ()),
        (7, "nccl:all_reduce", 6, 1, T4K, ["Tensor(float)"], (310, 40), ()),
        (8, f"c10d::{p2p}", 2, 1, [T4K], ["GenericList[Tensor(float)]"], (400, 30), ()),
        (9, "record_param_comms", 8, 1, [T4K, 2, 600, peer, p2p, [], [], 2], RPC_TYPES, (402, 25),
         ({"name": "pg_name", "type": "string", "value": "1"},)),
        (10, p2p_name, 9, 1, T4K, ["Tensor(float)"], (405, 20), ()),
        (11, f"c10d::{p2p}", 2, 1, [T4K], ["GenericList[Tensor(float)]"], (440, 30), ()),
        (12, "record_param_comms", 11, 1, [T4K, 3, 600, peer, p2p, [], [], 2], RPC_TYPES, (442, 25),
         ({"name": "pg_name", "type": "string", "value": "1"},)),
        (13, p2p_name, 12, 1, T4K, ["Tensor(float)"], (445, 20), ()),
        (14, "aten::add", 2, 1, T4K, ["Tensor(float)"], (500, 20), ()),
        (15, "aten::item", 2, 1, T4K, ["Tensor(float)"], (600, 100), ()),
        (17, "autograd::engine::evaluate_function", 16, 2, [], [], (3000, 100), ()),
        (18, "aten::mul", 17, 2, T4K, ["Tensor(float)"], (3010, 50), ()),
    ]
    nodes = []
    for i, name, parent, tid, values, types, _, extra in ops:
        nodes.append({"id": i, "name": name, "ctrl_deps": parent,
                      "inputs": {"values": values, "shapes": [[1024]] * len(values), "types": types},
                      "outputs": {"values": [], "shapes": [], "types": []}, "attrs": attrs(i - 2, tid, extra)})
    roots = [{"id": 2, "name": "[pytorch|profiler|execution_trace|thread]", "ctrl_deps": 1, "tid": 1},
             {"id": 16, "name": "[pytorch|profiler|execution_trace|thread]", "ctrl_deps": 1, "tid": 2},
             {"id": 1, "name": "[pytorch|profiler|execution_trace|process]", "ctrl_deps": 1, "tid": 0}]
    for x in roots:
        nodes.append({"id": x["id"], "name": x["name"], "ctrl_deps": x["ctrl_deps"],
                      "inputs": {"values": [], "shapes": [], "types": []},
                      "outputs": {"values": [], "shapes": [], "types": []}, "attrs": attrs(0, x["tid"])})
    # the file order of PyTorch: a thread root when created, every op after
    # its children (post-order), the process root last
    byid = {n["id"]: n for n in nodes}
    kids = {}
    for n in nodes:
        if n["id"] != 1:
            kids.setdefault(n["ctrl_deps"], []).append(n["id"])

    def post(i):
        out = []
        for c in sorted(kids.get(i, [])):
            out += post(c) + [c]
        return out
    order = [2, 16] + post(2) + post(16) + [1]
    nodes = [byid[i] for i in order]
    host = {"schema": "1.1.1-chakra.0.0.4", "pid": 4242 + r, "time": "2025-01-01 00:00:00", "start_ts": 1,
            "nodes": nodes, "finish_ts": 2}

    os_tid = {1: 9000 + r, 2: 9500 + r}
    ev = []
    for i, name, parent, tid, _, _, k, _ in ops:
        ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 4242 + r, "tid": os_tid[tid], "ts": k[0],
                   "dur": k[1], "args": {"External id": 7000 + i, "Record function id": i - 2}})
    kernels = [  # correlation, launching op id, launch ts, kernel name, ts, dur, stream, runtime call?
        (1, 4, 210, "ampere_sgemm_128x64_nn", 260, 100, 7, False),
        (2, 7, 320, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 400, 500, 20, True),
        (3, 10, 410, "ncclDevKernel_SendRecv", 950, 50, 20, True),
        (4, 13, 450, "ncclDevKernel_SendRecv", 1010, 50, 20, True),
        (5, 14, 505, "void at::native::vectorized_elementwise_kernel<add>", 510, 30, 7, True),
        (6, 18, 3020, "void at::native::vectorized_elementwise_kernel<mul>", 3030, 10, 7, True),
    ]
    for corr, launcher, lts, kname, kts, kdur, stream, runtime in kernels:
        tid = os_tid[2] if launcher == 18 else os_tid[1]
        if runtime:
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 4242 + r, "tid": tid,
                       "ts": lts, "dur": 4, "args": {"External id": 7000 + launcher, "cbid": 211, "correlation": corr}})
        ev.append({"ph": "s", "id": corr, "pid": 4242 + r, "tid": tid, "ts": lts, "cat": "ac2g", "name": "ac2g"})
        ev.append({"ph": "X", "cat": "kernel", "name": kname, "pid": r, "tid": stream, "ts": kts, "dur": kdur,
                   "args": {"External id": 7000 + launcher, "device": r, "stream": stream, "correlation": corr}})
        ev.append({"ph": "f", "id": corr, "pid": r, "tid": stream, "ts": kts, "cat": "ac2g", "name": "ac2g",
                   "bp": "e"})
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 4242 + r,
               "tid": os_tid[1], "ts": 610, "dur": 80, "args": {"cbid": 131, "correlation": 99, "stream": 7}})
    ev.append({"name": "process_name", "ph": "M", "ts": 0, "pid": 4242 + r, "tid": 0, "args": {"name": "python"}})
    kineto = {"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": r, "world_size": 2},
              "traceEvents": ev, "traceName": f"rank{r}"}
    return host, kineto


def run(cmd, ok=True):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if ok and p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


def nodes_of(chakra, et):
    out = run([chakra, "jsonize", et, "-o", "-"]).stdout.splitlines()
    res = {}
    for l in out[1:]:
        n = json.loads(l)
        a = {}
        for x in n.get("attr", []):
            for k, v in x.items():
                if k != "name":
                    a[x["name"]] = int(v) if isinstance(v, str) and k.endswith("64_val") else v
        n["a"] = a
        n["deps"] = [int(d) for d in n.get("data_deps", [])]
        res[n["name"] + "#" + n.get("id", "0")] = n
    return res


def find(nodes, name):
    return sorted((n for n in nodes.values() if n["name"] == name), key=lambda n: int(n.get("id", 0)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chakra", required=True)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="chakra-e2e-2r.")
    try:
        # an ASTRA-sim system configuration: ring collectives, 4 chunks
        system = os.path.join(tmp, "system.json")
        with open(system, "w") as f:
            json.dump({"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
                       "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring"],
                       "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
                       "all-to-all-implementation": ["ring"], "collective-optimization": "localBWAware",
                       "local-mem-bw": 1600, "boost-mode": 0, "roofline-enabled": 0, "peak-perf": 900}, f)
        for r in range(2):
            host, kin = make_rank(r)
            hp, kp = os.path.join(tmp, f"host{r}.json"), os.path.join(tmp, f"kineto{r}.json")
            with open(hp, "w") as f:
                json.dump(host, f)
            with open(kp, "w") as f:
                json.dump(kin, f)
            lp = os.path.join(tmp, f"linked{r}.json")
            p = run([a.chakra, "link", "--host", hp, "--device", kp, "--rank", str(r), "-o", lp])
            assert "15 of 15 host ops matched (by record function id)" in p.stdout, p.stdout
            assert "6 of 6 device ops attached; 1 sync deps, 2 inter-thread deps" in p.stdout, p.stdout
            groups = os.path.join(tmp, "groups.json")
            run([a.chakra, "convert", "pytorch", lp, "-o", os.path.join(tmp, f"job.{r}.et"), "--comm-groups", groups])
        with open(groups) as f:
            assert json.load(f) == {"1": [0, 1]}

        v = run([a.chakra, "validate", os.path.join(tmp, "job.0.et"), os.path.join(tmp, "job.1.et")])
        assert "2 file(s)" in v.stdout and " 0 error(s)" in v.stdout, v.stdout

        for r in range(2):
            N = nodes_of(a.chakra, os.path.join(tmp, f"job.{r}.et"))
            ar = find(N, "ncclDevKernel_AllReduce_Sum_f32_RING_LL")
            assert len(ar) == 1 and ar[0]["type"] == "COMM_COLL_NODE"
            assert ar[0]["a"]["comm_type"] == 0 and ar[0]["a"]["comm_size"] == 4096, ar[0]["a"]
            assert ar[0]["a"]["pg_name"] == "0" and ar[0]["a"]["is_cpu_op"] is False
            sr = find(N, "ncclDevKernel_SendRecv")
            assert [n["type"] for n in sr] == (["COMM_SEND_NODE"] * 2 if r == 0 else ["COMM_RECV_NODE"] * 2)
            key = "comm_dst" if r == 0 else "comm_src"
            assert [n["a"][key] for n in sr] == [1 - r, 1 - r]
            assert [n["a"]["comm_tag"] for n in sr] == [0, 1]
            assert all(n["a"]["pg_name"] == "1" and n["a"]["comm_size"] == 4096 for n in sr)
            # stream 20: all-reduce, then the two transfers, in order
            assert int(ar[0]["id"]) in sr[0]["deps"] and int(sr[0]["id"]) in sr[1]["deps"]
            # the sgemm kernel was found through its flow arrow, under aten::mm
            mm = find(N, "aten::mm")[0]
            gemm = find(N, "ampere_sgemm_128x64_nn")[0]
            assert int(mm["id"]) in gemm["deps"]
            add_k = find(N, "void at::native::vectorized_elementwise_kernel<add>")[0]
            assert int(gemm["id"]) in add_k["deps"], "stream 7 order"
            item = find(N, "aten::item")[0]
            assert int(add_k["id"]) in item["deps"], "cudaStreamSynchronize: aten::item waits for the add kernel"
            ag = find(N, "autograd::engine::evaluate_function")[0]
            assert int(item["id"]) in ag["deps"], "inter-thread dependency"

        net = os.path.join(tmp, "net2.yml")
        with open(net, "w") as f:
            f.write("topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n")
        s = run([a.chakra, "sim", "--workload-configuration=" + os.path.join(tmp, "job"),
                 "--system-configuration=" + system, "--network-configuration=" + net,
                 "--comm-group-configuration=" + groups])
        fin = {int(m.group(1)): int(m.group(2)) for m in re.finditer(r"sys\[(\d+)\] finished, (\d+) cycles", s.stdout)}
        assert sorted(fin) == [0, 1], s.stdout
        comm = {int(m.group(1)): int(m.group(2)) for m in re.finditer(r"sys\[(\d+)\], Comm time: (\d+)", s.stdout)}
        assert all(comm.get(r, 0) > 0 for r in (0, 1)), s.stdout
        print(f"ok: 2 ranks linked by record function id, validated together, simulated: {fin}")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""validate_vs_sim.py - `chakra validate` and `chakra sim` agree on whether a
workload can run (issue: hardening, "validate agrees with sim").

A corpus of small two-rank workloads, written as JSON Lines and packed with
`chakra pack`, each run through both tools: validate must exit 1 exactly when
the simulator cannot finish every rank (exit non-zero), and 0 when it can.
Broken on purpose:
  recv_before_send   each rank receives before it sends (the untimed
                     execution finds the cycle through the two ranks)
  coll_holds_slot    rank 0's all-reduce holds its communication slot, so its
                     send never goes out; rank 1's all-reduce waits for it
  unmatched_send     a send nobody receives
  coll_size_differs  the ranks disagree on an all-reduce's size
Sound:
  send_before_recv   sends finish when their message arrives, whoever waits
  allreduce_pair     one all-reduce on both ranks

Usage: validate_vs_sim.py CHAKRA SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

CHAKRA, SOURCE = sys.argv[1], sys.argv[2]
SYSTEM = os.path.join(SOURCE, "examples", "system.json")
S, R, K = "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE"


def node(i, t, deps=(), **attrs):
    a = [{"name": "is_cpu_op", "bool_val": False}]
    for k, v in attrs.items():
        a.append({"name": k, "string_val": v} if isinstance(v, str) else {"name": k, "int64_val": str(v)})
    return {"id": i, "name": "n%d" % i, "type": t, "data_deps": list(deps), "attr": a}


def send(i, dst, deps=(), size=64):
    return node(i, S, deps, comm_dst=dst, comm_size=size, comm_tag=3)


def recv(i, src, deps=(), size=64):
    return node(i, R, deps, comm_src=src, comm_size=size, comm_tag=3)


def allreduce(i, deps=(), size=1024):
    return node(i, K, deps, comm_type=0, comm_size=size)


CASES = {
    "recv_before_send": (False, [[recv(1, 1), send(2, 1, [1])], [recv(1, 0), send(2, 0, [1])]]),
    "coll_holds_slot": (False, [[allreduce(1), send(2, 1)], [recv(1, 0), allreduce(2, [1])]]),
    "unmatched_send": (False, [[send(1, 1)], [allreduce(1)]]),
    "coll_size_differs": (False, [[allreduce(1, size=1024)], [allreduce(1, size=2048)]]),
    "send_before_recv": (True, [[send(1, 1), recv(2, 1, [1])], [send(1, 0), recv(2, 0, [1])]]),
    "allreduce_pair": (True, [[allreduce(1)], [allreduce(1)]]),
}


def write(d, name, ranks):
    prefix = os.path.join(d, name)
    for r, nodes in enumerate(ranks):
        src = "%s.%d.jsonl" % (prefix, r)
        with open(src, "w") as f:
            f.write(json.dumps({"version": "0.0.4"}) + "\n")
            f.writelines(json.dumps(n) + "\n" for n in nodes)
        subprocess.run([CHAKRA, "pack", src, "-o", "%s.%d.et" % (prefix, r)], check=True)
    return prefix


def main():
    passed = failed = 0
    with tempfile.TemporaryDirectory() as d:
        net = os.path.join(d, "ring2.yml")
        with open(net, "w") as f:
            f.write("topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n")
        for name, (sound, ranks) in CASES.items():
            prefix = write(d, name, ranks)
            v = subprocess.run([CHAKRA, "validate", prefix], capture_output=True, text=True)
            s = subprocess.run([CHAKRA, "sim", "--workload-configuration=" + prefix,
                                "--system-configuration=" + SYSTEM, "--network-configuration=" + net],
                               capture_output=True, text=True)
            want_v = 0 if sound else 1
            ok = v.returncode == want_v and (s.returncode == 0) == sound
            if ok:
                passed += 1
            else:
                failed += 1
                print("FAIL: %s: validate exit %d (want %d), sim exit %d (want %s)\n%s%s" %
                      (name, v.returncode, want_v, s.returncode, "0" if sound else "non-zero",
                       v.stdout, s.stderr[-1500:]))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""arithmetic.py - simulated time and statistics never wrap silently (issue:
hardening, "checked arithmetic"), and traces that cannot be timed say why.

  * configuration values that cannot fit the 64-bit nanosecond time base are
    refused when read, naming the file and the key or line: a latency of
    1e20 ns, a bandwidth of 1e-15 GB/s, an endpoint-delay of 1e300 ns, an
    --injection-scale of 1e300 (these gave finish times of a few thousand
    cycles or 0);
  * a compute node of 2^63 us is refused naming the node; two of 9.3e15 us
    in a chain (each fits, their sum does not) stop the run with an error
    instead of wrapping;
  * `stats` sums saturate at 2^64 - 1 with a warning instead of wrapping;
  * compute nodes with num_ops but no duration: `sim` (roofline off) and
    `stats` each say that roofline-enabled exists.

Usage: arithmetic.py CHAKRA SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

from hcheck import check, finish

CHAKRA, SOURCE = sys.argv[1], sys.argv[2]


def pack(d, name, nodes):
    src = os.path.join(d, name + ".0.jsonl")
    with open(src, "w") as f:
        f.write('{"version":"0.0.4"}\n')
        for n in nodes:
            f.write(json.dumps(n) + "\n")
    subprocess.run([CHAKRA, "pack", src, "-o", os.path.join(d, name + ".0.et")], check=True)
    return os.path.join(d, name)


def comp(i, dur, deps=(), num_ops=None):
    attrs = [{"name": "is_cpu_op", "bool_val": False}]
    if num_ops is not None:
        attrs += [{"name": "num_ops", "int64_val": str(num_ops)}, {"name": "tensor_size", "int64_val": "1024"}]
    return {"id": i, "name": "c%d" % i, "type": "COMP_NODE", "duration_micros": str(dur),
            "data_deps": list(deps), "attr": attrs}


def sim(d, prefix, system=None, net=None, extra=()):
    sys_path = os.path.join(d, "sys.json")
    json.dump(system or json.load(open(os.path.join(SOURCE, "examples", "system.json"))), open(sys_path, "w"))
    net_path = os.path.join(d, "net.yml")
    open(net_path, "w").write(net or "topology: [ Ring ]\nnpus_count: [ 1 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n")
    return subprocess.run([CHAKRA, "sim", "--workload-configuration=" + prefix, "--system-configuration=" + sys_path,
                           "--network-configuration=" + net_path] + list(extra), capture_output=True, text=True)


with tempfile.TemporaryDirectory() as d:
    ok = pack(d, "ok", [comp(1, 5)])
    r = sim(d, ok)
    check(r.returncode == 0 and "5000 cycles" in r.stdout, "a sound run still works: %r" % (r.stdout + r.stderr))
    for what, net in (("latency 1e20", "topology: [ Ring ]\nnpus_count: [ 1 ]\nbandwidth: [ 50.0 ]\nlatency: [ 1e20 ]\n"),
                      ("bandwidth 1e-15", "topology: [ Ring ]\nnpus_count: [ 1 ]\nbandwidth: [ 1e-15 ]\nlatency: [ 500 ]\n")):
        r = sim(d, ok, net=net)
        check(r.returncode == 2 and "net.yml: line" in r.stderr and what.split()[0] in r.stderr,
              "%s is refused naming file, line and key: %r" % (what, r.stderr))
    system = json.load(open(os.path.join(SOURCE, "examples", "system.json")))
    system["endpoint-delay"] = 1e300
    r = sim(d, ok, system=system)
    check(r.returncode == 2 and "endpoint-delay" in r.stderr, "endpoint-delay 1e300 is refused: %r" % r.stderr)
    r = sim(d, ok, extra=["--injection-scale=1e300"])
    check(r.returncode == 2 and "injection scale" in r.stderr, "--injection-scale 1e300 is refused: %r" % r.stderr)

    huge = pack(d, "huge", [comp(1, 2 ** 63)])
    r = sim(d, huge)
    check(r.returncode == 2 and "node 1" in r.stderr and "duration_micros" in r.stderr,
          "a 2^63 us compute node is refused naming it: %r" % r.stderr)
    chain = pack(d, "chain", [comp(1, 9300000000000000), comp(2, 9300000000000000, [1])])
    r = sim(d, chain)
    check(r.returncode == 2 and "2^64 ns" in r.stderr and "cycles" not in r.stdout,
          "two 9.3e15 us computes stop with an error, no wrapped finish time: %r" % (r.stdout + r.stderr))

    two = pack(d, "two", [comp(1, 2 ** 63), comp(2, 2 ** 63)])
    r = subprocess.run([CHAKRA, "stats", "--json", two], capture_output=True, text=True)
    total = json.loads(r.stdout)["total"] if r.returncode == 0 else {}
    check(r.returncode == 0 and "2^64 - 1" in r.stderr, "stats warns that a sum saturated: %r" % r.stderr)
    check("18446744073709551615" in r.stdout and '"gpu_us": 0' not in r.stdout.replace(" ", ""),
          "stats shows the saturated sum, not a wrapped one: %r" % r.stdout[:400])

    stage_like = pack(d, "untimed", [comp(1, 0, num_ops=10 ** 9), comp(2, 0, [1], num_ops=10 ** 9)])
    r = sim(d, stage_like)
    check(r.returncode == 0 and "roofline-enabled" in r.stderr and "2 GPU compute node(s)" in r.stderr,
          "sim hints at roofline-enabled for compute without durations: %r" % r.stderr)
    r = subprocess.run([CHAKRA, "stats", stage_like], capture_output=True, text=True)
    check(r.returncode == 0 and "roofline-enabled" in r.stderr, "stats explains its 0 critical path: %r" % r.stderr)

finish()

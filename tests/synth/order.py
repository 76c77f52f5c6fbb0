#!/usr/bin/env python3
"""chakra synth --order: node ids are the simulator's issue priority.
--order schedule (default) numbers topologically along the pipeline
schedule; --order stage numbers as STAGE does (tensor by tensor in STAGE's
graph order: a module's backward before the next module's forward; pipeline
pairs last, receives of earlier stages first). Both describe the same graph:
same nodes, dependencies and attributes by name; only ids and file order
differ. --stage-compat refuses --order schedule. Prints ok/FAIL lines and
'N passed, N failed'."""
import json
import os
import subprocess
import sys
import tempfile

from checks import check, summary

CHAKRA = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
SMALL = ["--dmodel", "1024", "--dff", "4096", "--head", "16", "--kvhead", "16", "--seq", "512", "--dvocal", "32000",
         "--num-stacks", "4"]


def synth(out, *args):
    return subprocess.run([CHAKRA, "synth", "-q", "-o", out] + SMALL + list(args), capture_output=True, text=True)


def ids(path):
    out = subprocess.run([CHAKRA, "jsonize", path], check=True, capture_output=True, text=True).stdout
    nodes = [json.loads(l) for l in out.splitlines()[1:]]
    return {n["name"]: int(n.get("id", "0")) for n in nodes}, [int(n.get("id", "0")) for n in nodes]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
        cfg = ["--dp", "1", "--tp", "4", "--pp", "2", "--batch", "8", "--micro-batch", "2"]
        pa, pb = synth(a, *cfg), synth(b, *(cfg + ["--order", "stage"]))
        check("both orders write", pa.returncode == 0 and pb.returncode == 0, pa.stderr + pb.stderr)
        same = subprocess.run([sys.executable, os.path.join(HERE, "compare_et.py"), "--chakra", CHAKRA, a, b, "8"],
                              capture_output=True, text=True)
        check("--order stage and schedule: the same nodes, attributes and dependencies by name", same.returncode == 0,
              same.stdout)
        sa, la = ids(a + ".0.et")
        sb, lb = ids(b + ".0.et")
        dy, qkv = "mb0.transformer.0.input_norm.dy@0_COMP", "mb0.transformer.0.mha.qkv@0_COMP"
        check("schedule: topological, the forward qkv before the input norm's backward", sa[qkv] < sa[dy], (sa[qkv], sa[dy]))
        check("stage: STAGE's tensor order, the input norm's backward before the attention's forward",
              sb[dy] < sb[qkv], (sb[dy], sb[qkv]))
        m0, m1 = "mb0.transformer.1.mha.qkv@0_COMP", "mb1.transformer.0.mha.qkv@0_COMP"
        check("stage: micro-batch by micro-batch (mb0's last block before mb1's first)", sb[m0] < sb[m1], (sb[m0], sb[m1]))
        comm = [k for k in sb if k.endswith("_Y_SEND") or k.endswith("_Y_RECV")]
        last = max(v for k, v in sb.items() if k not in comm)
        recv = [sb[k] for k in comm if k.endswith("_Y_RECV")]
        send = [sb[k] for k in comm if k.endswith("_Y_SEND")]
        check("stage: pipeline pairs numbered last, stage 0's receives before its sends",
              min(sb[k] for k in comm) > last and max(recv) < min(send), (last, recv, send))
        check("stage: the file is in id order, ids 0..n-1", lb == sorted(lb) == list(range(len(lb))), lb[:10])
        v = subprocess.run([CHAKRA, "validate", b, "--comm-group-configuration", b + ".json"], capture_output=True,
                           text=True)
        check("chakra validate accepts --order stage output", v.returncode == 0, v.stdout + v.stderr)
        p = synth(os.path.join(tmp, "c"), "--stage-compat", "--order", "schedule")
        check("--stage-compat --order schedule is refused (exit 2, one line)",
              p.returncode == 2 and p.stderr.count("\n") == 1 and "--order" in p.stderr, p.stderr)
        p = synth(os.path.join(tmp, "m"), "--model-type", "moe", "--ep", "2", "--experts", "4", "--tp", "2",
                  "--batch", "4", "--micro-batch", "2", "--order", "stage")
        check("moe --order stage (no STAGE graph): creation order, writes", p.returncode == 0, p.stderr)
    return summary()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""chakra synth followed by chakra sim, checked against hand calculations.

1. Pipeline (pp 2, 4 micro-batches, cheap embeddings so the stages balance):
   with negligible transfer time a stage's makespan is
   (M + P - 1) * (t_fwd + t_bwd) + t_update, where the per-micro-batch
   forward/backward and update times are the sums of the COMP durations of
   stage 0's trace. 1F1B and GPipe must land within 2% of it; the simulator
   issues ready nodes lowest id first, which already runs independent
   micro-batches (--schedule none) earliest-first, so none must not beat it.
2. Data parallelism (weak scaling, dp 2 -> 4 with the batch doubled): the
   per-rank compute is unchanged and the ring all-reduce of the same bytes
   takes 2(n-1)/n * bytes / bandwidth: 1.5 times longer on 4 ranks than on 2.
3. Strong scaling (dp 2 -> 4, same batch): per-rank activation compute halves."""
import json
import os
import subprocess
import sys
import tempfile

MODEL = ["--dmodel", "1024", "--dff", "4096", "--head", "16", "--seq", "512", "--dvocal", "64",
         "--num-stacks", "4", "--peak-tflops", "100", "--mem-bw", "1000"]


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr))
    return p.stdout


def sim(chakra, source, tmp, prefix, npus, bw, lat):
    net = os.path.join(tmp, "ring%d.yml" % npus)
    with open(net, "w") as f:
        f.write("topology: [ Ring ]\nnpus_count: [ %d ]\nbandwidth: [ %s ]\nlatency: [ %s ]\n" % (npus, bw, lat))
    rep = prefix + ".report.json"
    run([chakra, "sim", "-q", "--workload-configuration=" + prefix,
         "--system-configuration=" + os.path.join(source, "examples", "system.json"),
         "--network-configuration=" + net, "--comm-group-configuration=" + prefix + ".json", "--report=" + rep])
    return json.load(open(rep))


def unit_times(chakra, path):
    """(forward us, backward us) of micro-batch 0, update us, from the trace."""
    f = b = u = 0
    for line in run([chakra, "jsonize", path]).splitlines()[1:]:
        n = json.loads(line)
        if n["type"] != "COMP_NODE":
            continue
        d = int(n.get("duration_micros", 0))
        name = n["name"]
        if not name.startswith("mb"):
            u += d
        elif name.startswith("mb0."):
            # backward tensors are named d*: dy, dx, dw, dattn, dq, dkv, ...
            if name.split("@")[0].rsplit(".", 1)[-1].startswith("d"):
                b += d
            else:
                f += d
    return f, b, u


def main():
    chakra, source = sys.argv[1], sys.argv[2]
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        finish = {}
        for s in ("none", "gpipe", "1f1b"):
            p = os.path.join(tmp, s)
            run([chakra, "synth", "-q", "--pp", "2", "--batch", "4", "--micro-batch", "1", "--schedule", s, "-o", p]
                + MODEL)
            r = sim(chakra, source, tmp, p, 2, "1000.0", "1.0")
            finish[s] = r["max_finish_ns"]
        tf, tb, tu = unit_times(chakra, os.path.join(tmp, "1f1b.0.et"))
        hand = ((4 + 2 - 1) * (tf + tb) + tu) * 1000
        for s in ("gpipe", "1f1b"):
            ok = abs(finish[s] - hand) <= 0.02 * hand
            print("pipeline %s: %d ns, hand (M+P-1)(tf+tb)+upd = %d ns: %s" % (s, finish[s], hand, "ok" if ok else "WRONG"))
            bad += not ok
        ok = finish["none"] >= finish["1f1b"] * 0.999
        print("pipeline none: %d ns, not faster than 1f1b: %s" % (finish["none"], "ok" if ok else "WRONG"))
        bad += not ok

        rep = {}
        for dp in (2, 4):
            p = os.path.join(tmp, "w%d" % dp)
            run([chakra, "synth", "-q", "--dp", str(dp), "--batch", str(dp), "-o", p] + MODEL)
            rep[dp] = sim(chakra, source, tmp, p, dp, "50.0", "500.0")["ranks"][0]
        ar2, ar4 = rep[2]["collectives"]["ALL_REDUCE"], rep[4]["collectives"]["ALL_REDUCE"]
        bw = 50 * 2 ** 30 / 1e9  # bytes per ns
        hand2, hand4 = ar2["bytes"] / bw, 1.5 * ar4["bytes"] / bw
        ratio = ar4["time_ns"] / ar2["time_ns"]
        ok = (rep[2]["gpu_ns"] == rep[4]["gpu_ns"] and ar2["bytes"] == ar4["bytes"] and 1.45 <= ratio <= 1.6
              and abs(ar2["time_ns"] - hand2) <= 0.1 * hand2 and abs(ar4["time_ns"] - hand4) <= 0.1 * hand4)
        print("weak scaling dp 2->4: gpu %d / %d ns, all-reduce %d / %d ns (x%.3f; hand %d / %d): %s" % (
            rep[2]["gpu_ns"], rep[4]["gpu_ns"], ar2["time_ns"], ar4["time_ns"], ratio, hand2, hand4,
            "ok" if ok else "WRONG"))
        bad += not ok

        act = {}
        for dp in (2, 4):
            p = os.path.join(tmp, "s%d" % dp)
            run([chakra, "synth", "-q", "--dp", str(dp), "--batch", "8", "-o", p] + MODEL)
            f, b, _ = unit_times(chakra, p + ".0.et")
            act[dp] = f + b
        ok = abs(2 * act[4] - act[2]) <= 0.01 * act[2]
        print("strong scaling dp 2->4 at batch 8: activation compute %d -> %d us: %s" % (
            act[2], act[4], "ok" if ok else "WRONG"))
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

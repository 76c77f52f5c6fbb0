#!/usr/bin/env python3
"""chakra synth's own decisions (spec section 7), each checked on real output:
deterministic files, --ranks writes a subset identical to the full run,
sizes in bytes (--dtype-bytes), FLOPs = 2 x MACs, one data-parallel gradient
reduction per block per iteration, ids from 0 in topological order, tags
from --seed, roofline durations, the attention-score term, and no files
at all when writing fails."""
import filecmp
import json
import os
import subprocess
import sys
import tempfile

MODEL = ["--dmodel", "1024", "--dff", "4096", "--head", "16", "--seq", "512", "--dvocal", "32000",
         "--num-stacks", "4", "--dp", "2", "--tp", "2", "--pp", "2", "--batch", "8", "--micro-batch", "2"]


def nodes(chakra, path):
    out = subprocess.run([chakra, "jsonize", path], check=True, capture_output=True, text=True).stdout
    res = []
    for line in out.splitlines()[1:]:
        n = json.loads(line)
        n["a"] = {a["name"]: [v for k, v in a.items() if k != "name"][0] if len(a) > 1 else None for a in n.get("attr", [])}
        res.append(n)
    return res


def synth(chakra, prefix, *extra):
    subprocess.run([chakra, "synth", "-q", "-o", prefix] + MODEL + list(extra), check=True)


def check(name, ok, bad):
    print("%s: %s" % (name, "ok" if ok else "WRONG"))
    bad.append(not ok)


def main():
    chakra = sys.argv[1]
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        a, b, c = (os.path.join(tmp, x) for x in "abc")
        synth(chakra, a)
        synth(chakra, b)
        check("two runs write identical files",
              all(filecmp.cmp("%s.%d.et" % (a, r), "%s.%d.et" % (b, r), shallow=False) for r in range(8)), bad)
        u = os.path.join(tmp, "u")
        stage = ["--" + x[2:].replace("-", "_") if x.startswith("--") else x for x in MODEL]
        subprocess.run([chakra, "synth", "-q", "--output=" + u, "--dtype_bytes=2", "--tag_base", "0"] + stage,
                       check=True)
        check("STAGE's underscore spellings and --k=v give the same files",
              all(filecmp.cmp("%s.%d.et" % (a, r), "%s.%d.et" % (u, r), shallow=False) for r in range(8)), bad)
        p = subprocess.run([chakra, "synth", "-o", u, "--micro_batch", "x"], capture_output=True, text=True)
        check("bad --micro_batch: exit 2, one line naming micro-batch", p.returncode == 2 and
              p.stderr.startswith("chakra synth: --micro-batch: ") and len(p.stderr.strip().splitlines()) == 1, bad)
        sub = os.path.join(tmp, "sub")
        os.mkdir(sub)
        synth(chakra, os.path.join(sub, "s"), "--ranks", "0,5-6")
        files = sorted(os.listdir(sub))
        check("--ranks 0,5-6 writes those ranks and the groups, same bytes",
              files == ["s.0.et", "s.5.et", "s.6.et", "s.json"] and all(
                  filecmp.cmp("%s/s.%d.et" % (sub, r), "%s.%d.et" % (a, r), shallow=False) for r in (0, 5, 6)), bad)

        ours, compat = nodes(chakra, a + ".0.et"), None
        synth(chakra, c, "--stage-compat")
        compat_list = nodes(chakra, c + ".0.et")
        compat = {n["name"]: n for n in compat_list}
        pos = {n.get("id", "0"): i for i, n in enumerate(ours)}
        topo = all(str(i) == n.get("id", "0") for i, n in enumerate(ours)) and all(
            int(d) < i for i, n in enumerate(ours) for d in n.get("data_deps", []) + n.get("ctrl_deps", []))
        check("ids 0..n-1 in topological order", topo, bad)

        ag = [n for n in ours if n["name"] == "mb0.transformer.0.mha.qkv@0_X1COMM"][0]
        agc = compat["mb0.transformer.0.mha.qkv@0_X1COMM"]
        check("comm_size in bytes (2 per element by default)", int(ag["a"]["comm_size"]) == 2 * int(agc["a"]["comm_size"]), bad)
        synth(chakra, b, "--dtype-bytes", "4")
        ag4 = [n for n in nodes(chakra, b + ".0.et") if n["name"] == ag["name"]][0]
        check("--dtype-bytes 4 doubles it", int(ag4["a"]["comm_size"]) == 2 * int(ag["a"]["comm_size"]), bad)

        m = [n for n in ours if n["name"] == "mb0.transformer.0.ffn.xgate@0_COMP"][0]
        mc = compat["mb0.transformer.0.ffn.xgate@0_COMP"]
        check("einsum num_ops are FLOPs = 2 x STAGE's MACs", int(m["a"]["num_ops"]) == 2 * int(mc["a"]["num_ops"]), bad)
        at = [n for n in ours if n["name"] == "mb0.transformer.0.mha.attn_kernel.qkv@0_COMP"][0]
        atc = compat["mb0.transformer.0.mha.attn_kernel.qkv@0_COMP"]
        # b = 2/2 sequences per rank... micro-batch 2 over dp 2 -> 1; s = 512; score term 2*b*s*Seq*D/tp MACs.
        score = 2 * 1 * 512 * 512 * 1024 // 2
        check("attention-score term added (2 x (STAGE's count + 2*b*s*Seq*D/tp))",
              int(at["a"]["num_ops"]) == 2 * (int(atc["a"]["num_ops"]) + score), bad)

        groups = json.load(open(a + ".json"))
        dp_groups = {k for k, v in groups.items() if v in ([0, 1], [2, 3], [4, 5], [6, 7])}
        dp_ar = [n for n in ours if n["type"] == "COMM_COLL_NODE" and n["a"].get("pg_name") in dp_groups]
        dp_arc = [n for n in compat_list if n["type"] == "COMM_COLL_NODE" and n["a"].get("pg_name") in dp_groups]
        # stage 0: 2 blocks + the input embedding; STAGE: once per block per micro-batch (4) + embedding
        check("one dp gradient reduction per block per iteration (%d; STAGE %d)" % (len(dp_ar), len(dp_arc)),
              len(dp_ar) == 3 and len(dp_arc) == 2 * 4 + 1, bad)

        sends = [n for n in ours if n["type"] in ("COMM_SEND_NODE", "COMM_RECV_NODE")]
        synth(chakra, b, "--seed", "1000")
        sends2 = [n for n in nodes(chakra, b + ".0.et") if n["type"] in ("COMM_SEND_NODE", "COMM_RECV_NODE")]
        tags = sorted(int(n["a"]["comm_tag"]) for n in sends)
        check("tags are pair indices from 0, --seed shifts them",
              tags[0] == 0 and sorted(int(n["a"]["comm_tag"]) - 1000 for n in sends2) == tags, bad)

        synth(chakra, b, "--peak-tflops", "100", "--mem-bw", "1000")
        x = [n for n in nodes(chakra, b + ".0.et") if n["name"] == m["name"]][0]
        flops, size = int(x["a"]["num_ops"]), int(x["a"]["tensor_size"])
        want = flops / min(1000e9 * flops / size, 100e12) * 1e6
        check("duration_micros from the roofline (%s vs %.1f)" % (x.get("duration_micros"), want),
              abs(int(x.get("duration_micros", 0)) - want) <= 1, bad)

        for i, extra in enumerate((["--sp", "2", "--weight-sharded", "1", "--activation-recompute", "1"],
                                   ["--tpsp", "0", "--schedule", "gpipe"], ["--model-type", "llama", "--kvhead", "4"])):
            v = os.path.join(tmp, "v%d" % i)
            subprocess.run([chakra, "synth", "-q", "-o", v] + MODEL[:-6] + ["--dp", "2", "--tp", "2", "--batch", "8",
                           "--micro-batch", "4", "--pp", "2"] + extra, check=True)
            # with the groups synth writes, as chakra sim would be given them
            p = subprocess.run([chakra, "validate", "--strict", "-q", v, "--comm-group-configuration", v + ".json"],
                               capture_output=True, text=True)
            check("validate --strict: %s (%s)" % (" ".join(extra), p.stdout.strip()), p.returncode == 0, bad)
        # A directory where rank 5's file must go: the last rename fails, and
        # every other rank file and the groups must be gone again.
        d = os.path.join(tmp, "fail")
        os.makedirs(os.path.join(d, "new.5.et", "x"))
        p = subprocess.run([chakra, "synth", "-q", "-o", os.path.join(d, "new")] + MODEL, capture_output=True, text=True)
        left = sorted(os.listdir(d))
        check("failed write: error, nothing left (%s)" % p.stderr.strip()[:100],
              p.returncode != 0 and left == ["new.5.et"], bad)
    return 1 if any(bad) else 0


if __name__ == "__main__":
    sys.exit(main())

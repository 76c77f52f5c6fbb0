#!/usr/bin/env python3
"""chakra synth --model-type moe with expert parallelism, checked on real output:

1. ranks and groups as STAGE numbers them with ep (spec 4.1, 4.2): the groups
   file equals an independent enumeration (the groups of one rank only with
   --singleton-groups, ids the same), every ALL_TO_ALL names the rank's
   ep group, pipeline peers keep (dp, tp, cp, ep);
2. the router, Experts/ep local experts per block and the expert-sum chain
   (only its last add does work); 4 ALL_TO_ALLs (dispatch and combine,
   forward and backward) per block and micro-batch, 6 with recompute;
3. the experts' token share: ours process every token dispatched to the
   rank, --stage-compat STAGE's 1/ep of it; expert FFN FLOPs by hand;
4. the output validates (chakra validate) in every mode, and simulates to
   completion on every rank of a 16-rank dp2 tp2 ep2 pp2 configuration."""
import collections
import itertools
import json
import os
import subprocess
import sys
import tempfile

SMALL = ["--model-type", "moe", "--dmodel", "256", "--dff", "512", "--head", "8", "--kvhead", "4", "--seq", "64",
         "--dvocal", "1000", "--num-stacks", "2"]


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit("failed (%d): %s\n%s%s" % (p.returncode, " ".join(cmd), p.stdout, p.stderr))
    return p.stdout


def nodes(chakra, path):
    res = []
    for line in run([chakra, "jsonize", path]).splitlines()[1:]:
        n = json.loads(line)
        n["a"] = {a["name"]: [v for k, v in a.items() if k != "name"][0] if len(a) > 1 else None
                  for a in n.get("attr", [])}
        res.append(n)
    return res


def check(name, ok, bad):
    print("%s: %s" % (name, "ok" if ok else "WRONG"))
    bad.append(not ok)


def stage_groups(deg):
    """STAGE's groups: per spatial dim (dp, tp, cp, ep), one group per
    combination of the others with pp outermost; ranks enumerate pp, ep, cp,
    tp, dp from slowest to fastest."""
    def rank(c):
        return ((((c["pp"] * deg["ep"] + c["ep"]) * deg["cp"] + c["cp"]) * deg["tp"] + c["tp"]) * deg["dp"]
                + c["dp"])
    groups, gid = {}, 1
    spatial = ["dp", "tp", "cp", "ep"]
    for d in spatial:
        others = ["pp"] + [o for o in spatial if o != d]
        for combo in itertools.product(*[range(deg[o]) for o in others]):
            c = dict(zip(others, combo))
            groups[str(gid)] = [rank(dict(c, **{d: k})) for k in range(deg[d])]
            gid += 1
    return groups, rank


def main():
    chakra = sys.argv[1]
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        # 1. ranks and groups: dp2 tp2 ep2 pp2, 4 experts (2 per rank)
        cfg = ["--dp", "2", "--tp", "2", "--ep", "2", "--pp", "2", "--experts", "4", "--kexperts", "2",
               "--batch", "4", "--micro-batch", "2"]
        p = os.path.join(tmp, "g")
        out = run([chakra, "synth", "-o", p] + SMALL + cfg)
        check("16 ranks written: %s" % out.strip(), out.startswith("wrote 16 of 16 ranks"), bad)
        deg = {"pp": 2, "dp": 2, "tp": 2, "cp": 1, "ep": 2}
        want, rank_of = stage_groups(deg)
        got = json.load(open(p + ".json"))
        check("groups file = STAGE's enumeration with ep, without the groups of one rank (cp), the others' ids "
              "kept (%d groups)" % len(want), got == {g: m for g, m in want.items() if len(m) > 1}, bad)
        run([chakra, "synth", "-o", p + "s", "--singleton-groups"] + SMALL + cfg)
        check("--singleton-groups: groups file = STAGE's enumeration with ep (%d groups)" % len(want),
              json.load(open(p + "s.json")) == want, bad)
        ep_first = 1 + sum(16 // deg[d] for d in ("dp", "tp", "cp"))
        for r in (0, 5, 14):
            ns = nodes(chakra, "%s.%d.et" % (p, r))
            a2a = [n for n in ns if n["type"] == "COMM_COLL_NODE" and int(n["a"]["comm_type"]) == 6]
            pgs = {n["a"]["pg_name"] for n in a2a}
            mine = [g for g in range(ep_first, len(want) + 1) if r in want[str(g)]]
            # stage 0 holds block 0 and stage 1 block 1: 4 per block and micro-batch
            check("rank %d: %d ALL_TO_ALLs, all on its ep group %s (got %s)" % (r, len(a2a), mine, sorted(pgs)),
                  len(a2a) == 4 * 1 * 2 and pgs == {str(g) for g in mine}, bad)
            peers = {int(n["a"].get("comm_dst", n["a"].get("comm_src", -1))) for n in ns
                     if n["type"] in ("COMM_SEND_NODE", "COMM_RECV_NODE")}
            stage = r // 8
            c = {"dp": r % 2, "tp": r // 2 % 2, "cp": 0, "ep": r // 4 % 2, "pp": 1 - stage}
            check("rank %d: pipeline peer %s keeps (dp, tp, cp, ep)" % (r, sorted(peers)), peers == {rank_of(c)}, bad)

        # 2. structure: router, local experts, the chain; recompute repeats the forward dispatch/combine
        for experts, chain in ((6, "yrouted_r2"), (2, None)):
            p = os.path.join(tmp, "s%d" % experts)
            run([chakra, "synth", "-q", "-o", p] + SMALL + ["--dp", "2", "--tp", "2", "--ep", "2", "--experts",
                                                            str(experts), "--kexperts", "2" if experts == 2 else "3", "--batch", "2"])
            names = [n["name"] for n in nodes(chakra, p + ".0.et")]
            local = {x.split(".moe.")[1].split(".")[0] for x in names if ".moe." in x and ".ldis." in x}
            adds = [x for x in names if "routed_r" in x]
            want_adds = ["mb0.transformer.%d.moe.%s@0_COMP" % (b, c) for b in (0, 1)
                         for c in ((chain, chain.replace("yrouted", "dxrouted")) if chain else ())]
            check("experts %d on ep 2: local experts %s, chain adds %s" % (experts, sorted(local), adds),
                  local == {str(e) for e in range(experts // 2)} and sorted(adds) == sorted(want_adds)
                  and any(".moe.yrouter@0_COMP" in x for x in names) and any(".moe.dwrouter@0" in x for x in names),
                  bad)
        p = os.path.join(tmp, "rc")
        run([chakra, "synth", "-q", "-o", p, "--activation-recompute", "1"] + SMALL + cfg)
        a2a = [n for n in nodes(chakra, p + ".0.et") if n["type"] == "COMM_COLL_NODE" and int(n["a"]["comm_type"]) == 6]
        check("recompute: %d ALL_TO_ALLs on rank 0 (dispatch and combine again before backward)" % len(a2a),
              len(a2a) == 6 * 2, bad)

        # 3. token share and FLOPs: b = 1, Seq 64, K 2, tp 2, ep 2, Experts 4, D 256, Dff 512
        for mode, extra, share in (("ours", [], 1), ("--stage-compat", ["--stage-compat"], 2)):
            p = os.path.join(tmp, "t" + mode[-4:])
            run([chakra, "synth", "-q", "-o", p] + SMALL + extra + ["--dp", "2", "--tp", "2", "--ep", "2",
                                                                    "--experts", "4", "--batch", "2"])
            ns = nodes(chakra, p + ".0.et")
            pre = "mb0.transformer.0."
            xr = [int(n["a"]["comm_size"]) for n in ns if n["name"] == pre + "moe.xrouted@0_X1COMM"]
            xe = sum(int(n["a"]["tensor_size"]) for n in ns
                     if n["name"].startswith(pre + "moe.") and n["name"].endswith("ldis.x_expert@0_COMP"))
            check("%s: local experts take %d of the %s dispatched bytes/elements (1/%d)" % (mode, xe, xr, share),
                  len(xr) == 1 and xe * share == xr[0], bad)
            if mode == "ours":
                fl = sum(int(n["a"]["num_ops"]) for n in ns
                         if n["name"].startswith(pre + "moe.") and n["name"].endswith("ffn.xgate@0_COMP"))
                hand = 2 * 1 * 64 * 2 // 2 * 256 * 512 // 2  # 2 b (Seq K / ep) D (Dff / tp)
                check("ours: expert up-projection %d FLOPs, by hand %d" % (fl, hand), fl == hand, bad)

        # 4. validate in every mode; simulate 16 ranks to completion
        for extra in ([], ["--stage-compat"], ["--activation-recompute", "1"], ["--weight-sharded", "1"],
                      ["--sp", "2", "--pp", "1"], ["--schedule", "gpipe"]):
            p = os.path.join(tmp, "v")
            run([chakra, "synth", "-q", "-o", p] + SMALL + cfg + extra)
            r = subprocess.run([chakra, "validate", p], capture_output=True, text=True)
            check("validate %s: %s" % (" ".join(extra) or "(defaults)", r.stdout.strip().splitlines()[-1]),
                  r.returncode == 0, bad)
        p = os.path.join(tmp, "sim")
        run([chakra, "synth", "-q", "-o", p, "--peak-tflops", "100", "--mem-bw", "1000"] + SMALL + cfg)
        net = os.path.join(tmp, "ring16.yml")
        with open(net, "w") as f:
            f.write("topology: [ Ring ]\nnpus_count: [ 16 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n")
        rep = os.path.join(tmp, "rep.json")
        source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        run([chakra, "sim", "-q", "--workload-configuration=" + p, "--comm-group-configuration=" + p + ".json",
             "--system-configuration=" + os.path.join(source, "examples", "system.json"),
             "--network-configuration=" + net, "--report=" + rep])
        ranks = json.load(open(rep))["ranks"]
        done = [r for r in ranks if r["finished"] and r["nodes_done"] == r["nodes"] > 0 and r["finish_ns"] > 0]
        a2a = [r["collectives"].get("ALL_TO_ALL", {}).get("count", 0) for r in ranks]
        check("sim: %d of 16 ranks finished, ALL_TO_ALLs per rank %s" % (len(done), sorted(set(a2a))),
              len(ranks) == 16 and len(done) == 16 and set(a2a) == {8}, bad)
    return 1 if any(bad) else 0


if __name__ == "__main__":
    sys.exit(main())

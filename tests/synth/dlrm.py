#!/usr/bin/env python3
"""chakra gen dlrm (a DLRM-like training step), checked on real output:

1. every node of every rank against the formulas of docs/gen.md, computed
   here independently (4 ranks, 6 tables: ranks 0-1 hold 2, ranks 2-3 one;
   3 lookups; rows fewer than the lookups so the update is bounded by them);
2. structure: the all-to-all of pooled embeddings forward and of their
   gradients backward, the same size on every rank (padded to the largest
   shard), one all-reduce per MLP layer, dependencies as the model runs;
3. bad options: one line naming the option, exit 2, no files;
4. chakra validate clean and chakra sim to completion on every rank, also
   with ranks that hold no table;
5. determinism: two runs, --threads 1 and 4 give the same bytes; the
   default configuration's SHA-256 is pinned."""
import filecmp
import glob
import hashlib
import json
import os
import sys
import tempfile

from checks import check, nodes, run, summary




def expected(npus, rank, batch, tables, rows, dim, lookups, dense, bottom, top, s):
    """{name: (kind, work, bytes, deps)} of one rank, from docs/gen.md."""
    b, B, T, D, L = batch // npus, batch, tables, dim, lookups
    tr = tables // npus + (rank < tables % npus)
    tmax = -(-tables // npus)
    pairs = T * (T + 1) // 2
    top_in = D + pairs
    touched = min(B * L, rows)
    want = {}
    if tr:
        want["emb.lookup"] = ("C", B * tr * L * D, (B * tr * L * D + B * tr * D) * s, [])
    want["emb.all_to_all"] = ("A2A", B * tmax * D * s, None, ["emb.lookup"] if tr else [])
    bl = [(i, o) for i, o in zip([dense] + bottom[:-1], bottom)]
    tl = [(i, o) for i, o in zip([top_in] + top[:-1], top)]
    prev = None
    for k, (i, o) in enumerate(bl):
        want["bottom_mlp.%d" % k] = ("C", 2 * b * o * (i + 1), (b * i + i * o + o + b * o) * s, [prev] if prev else [])
        prev = "bottom_mlp.%d" % k
    want["interaction"] = ("C", 2 * b * D * pairs, (b * (T + 1) * D + b * top_in) * s, [prev, "emb.all_to_all"])
    prev = "interaction"
    for k, (i, o) in enumerate(tl):
        want["top_mlp.%d" % k] = ("C", 2 * b * o * (i + 1), (b * i + i * o + o + b * o) * s, [prev])
        prev = "top_mlp.%d" % k

    def backward(name, layers, g, first_needs_dgrad):
        for k in reversed(range(len(layers))):
            i, o = layers[k]
            n = "%s.%d" % (name, k)
            if k or first_needs_dgrad:
                want[n + ".dgrad"] = ("C", 2 * b * i * o + b * o, (b * o + i * o + b * i) * s, [g])
            want[n + ".wgrad"] = ("C", 2 * b * i * o + b * o, (b * o + b * i + i * o + o) * s, [g])
            want[n + ".all_reduce"] = ("AR", (i * o + o) * s, None, [n + ".wgrad"])
            want[n + ".update"] = ("C", 2 * (i * o + o), 3 * (i * o + o) * s, [n + ".all_reduce"])
            g = n + ".dgrad"
        return g

    g = backward("top_mlp", tl, prev, True)
    want["interaction.bwd"] = ("C", 4 * b * D * pairs, (b * top_in + 2 * b * (T + 1) * D) * s, [g])
    want["emb.all_to_all.bwd"] = ("A2A", B * tmax * D * s, None, ["interaction.bwd"])
    if tr:
        want["emb.update"] = ("C", tr * D * (B * L + 2 * touched), (B * tr * D + 2 * tr * touched * D) * s,
                              ["emb.all_to_all.bwd"])
    backward("bottom_mlp", bl, "interaction.bwd", False)
    return want


def got(ns):
    byid = {n.get("id", "0"): n["name"] for n in ns}
    res = {}
    for n in ns:
        deps = [byid[d] for d in n.get("data_deps", [])]
        if n["type"] == "COMM_COLL_NODE":
            kind = {"6": "A2A", "0": "AR"}.get(str(n["a"]["comm_type"]), "?")
            res[n["name"]] = (kind, int(n["a"]["comm_size"]), None, deps)
        else:
            res[n["name"]] = ("C", int(n["a"]["num_ops"]), int(n["a"]["tensor_size"]), deps)
    return res


def digest(prefix, n):
    h = hashlib.sha256()
    for r in range(n):
        h.update(open("%s.%d.et" % (prefix, r), "rb").read())
    return h.hexdigest()


def main():
    chakra, source = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        # 1-2. every node by hand
        cfg = dict(npus=4, batch=64, tables=6, rows=100, dim=8, lookups=3, dense=5, bottom=[16, 8], top=[32, 1])
        for s in (4, 2):
            p = os.path.join(tmp, "h%d" % s)
            out = run([chakra, "gen", "dlrm", "-o", p, "--npus", "4", "--batch", "64", "--tables", "6", "--rows",
                       "100", "--emb-dim", "8", "--lookups", "3", "--dense-features", "5", "--bottom-mlp", "16-8",
                       "--top-mlp", "32-1", "--dtype-bytes", str(s)]).stdout
            for r in range(4):
                ns = nodes(chakra, "%s.%d.et" % (p, r))
                w, g = expected(rank=r, s=s, **cfg), got(ns)
                diff = sorted(k for k in set(w) | set(g) if w.get(k) != g.get(k))
                check("--dtype-bytes %d rank %d (%d tables): %d nodes, each as docs/gen.md computes it%s"
                      % (s, r, 2 if r < 2 else 1, len(ns), "" if not diff else " (differ: %s: %s vs %s)"
                         % (diff[0], w.get(diff[0]), g.get(diff[0]))),
                      not diff and [n.get("id", "0") for n in ns] == [str(i) for i in range(len(ns))])
            check("summary line: %s" % out.strip(), out.startswith("wrote 4 ranks (") and "at most 2 per rank, %d bytes"
                  % (2 * 100 * 8 * s) in out)

        # 3. bad options
        base = [chakra, "gen", "dlrm", "-o", os.path.join(tmp, "bad")]
        for args, want in ((["--batch", "10", "--npus", "4"], "chakra gen dlrm: --batch 10 is not divisible by --npus 4"),
                           (["--bottom-mlp", "64-32"], "chakra gen dlrm: --bottom-mlp: its last width 32 must be "
                                                      "--emb-dim 128"),
                           (["--top-mlp", "512--1"], "chakra gen dlrm: --top-mlp: expected 1 to 64 layer widths"),
                           (["--top-mlp", "0"], "chakra gen dlrm: --top-mlp: expected"),
                           (["--peak-tflops", "900"], "chakra gen dlrm: --peak-tflops and --mem-bw go together"),
                           (["--tables", "0"], "chakra gen dlrm: --tables: '0' is out of range"),
                           (["--batch", "9223372036854775800", "--npus", "8"], "chakra gen dlrm: node "),
                           (["--frobnicate"], "chakra gen dlrm: --frobnicate")):
            r = run(base + args, ok=2)
            check("refused %s: %s" % (" ".join(args), r.stderr.strip()),
                  r.stderr.startswith(want) and len(r.stderr.strip().splitlines()) == 1
                  and not glob.glob(os.path.join(tmp, "bad*")))

        # 4. validate, simulate
        net = os.path.join(tmp, "ring.yml")
        for name, args, n in (("default", [], 8), ("no tables on ranks 3-15", ["--npus", "16", "--tables", "3",
                                                                             "--batch", "4096"], 16)):
            p = os.path.join(tmp, "v%d" % n)
            run([chakra, "gen", "dlrm", "-q", "-o", p, "--peak-tflops", "900", "--mem-bw", "3000"] + args)
            v = run([chakra, "validate", p])
            with open(net, "w") as f:
                f.write("topology: [ Ring ]\nnpus_count: [ %d ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n" % n)
            rep = p + ".report.json"
            run([chakra, "sim", "-q", "--workload-configuration=" + p, "--report=" + rep,
                 "--system-configuration=" + os.path.join(source, "examples", "system.json"),
                 "--network-configuration=" + net])
            ranks = json.load(open(rep))["ranks"]
            done = [r for r in ranks if r["finished"] and r["nodes_done"] == r["nodes"] > 0]
            a2a = {r["collectives"].get("ALL_TO_ALL", {}).get("count", 0) for r in ranks}
            ar = {r["collectives"].get("ALL_REDUCE", {}).get("count", 0) for r in ranks}
            check("%s: validate '%s'; sim: %d of %d ranks finish, all-to-alls per rank %s, all-reduces %s"
                  % (name, v.stdout.strip().splitlines()[-1], len(done), n, sorted(a2a), sorted(ar)),
                  "0 error(s), 0 warning(s)" in v.stdout and len(done) == n == len(ranks) and a2a == {2}
                  and ar == {8})

        # 5. determinism
        outs = []
        for k, extra in enumerate((["--threads", "1"], ["--threads", "4"], [])):
            q = os.path.join(tmp, "d%d" % k)
            run([chakra, "gen", "dlrm", "-q", "-o", q, "--npus", "16", "--batch", "1024"] + extra)
            outs.append(q)
        check("--threads 1, 4 and the default write the same bytes (16 ranks)",
              all(filecmp.cmp("%s.%d.et" % (outs[0], r), "%s.%d.et" % (o, r), shallow=False)
                  for o in outs[1:] for r in range(16)))
        q = os.path.join(tmp, "pin")
        run([chakra, "gen", "dlrm", "-q", "-o", q])
        sha = digest(q, 8)
        check("the default configuration's 8 files: SHA-256 %s... as pinned" % sha[:12],
              sha == "0095f2c8054ebe3d8831fc3f27e6622db12af0ba99fb3f015b59398401121b53")
    return summary()


if __name__ == "__main__":
    sys.exit(main())

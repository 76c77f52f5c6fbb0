#!/usr/bin/env python3
"""chakra synth --phase prefill|decode (an inference step), checked on real output:

1. FLOPs by hand, per decoder block on one rank, gpt and llama (GQA), TP+SP and
   TP only: matmuls 2 x tokens x the rank's block parameters, attention
   4 x tokens x ctx x Dmodel/tp plus STAGE's linear count, slices, norms and
   residual adds; decode has one token per sequence and ctx = --seq;
2. the KV cache: a decode step's attention reads 2 x b x ctx x (Dmodel/Head)
   x (KV heads/tp) elements (its tensor_size, with Q and the output), so the
   roofline times it by its bytes (memory bound); prefill's K and V slices
   write the prompt's cache;
3. structure: no backward, loss, gradient reduction or update; the forward's
   tensor-parallel collectives (TP+SP: 2 all-gathers and 2 reduce-scatters
   per block and micro-batch; TP only: 2 all-reduces, the embedding's and the
   logits'), pipeline sends forward only, MoE's dispatch and combine;
4. refused combinations, one line each, exit 2 (--stage-compat, recompute,
   decode with --sp, tokens tp does not divide);
5. chakra validate clean and chakra sim to completion on every rank (gpt,
   llama, moe; prefill and decode; dp, tp, pp, ep);
6. determinism: two runs and --threads 1 / 4 give the same bytes; --phase
   train (the default) writes today's bytes (SHA-256 pinned before --phase
   existed)."""
import filecmp
import glob
import hashlib
import json
import os
import sys
import tempfile

from checks import check, nodes, run, summary

D, F, H, KVH, SEQ, V = 256, 1024, 8, 4, 128, 1000
SMALL = ["--num-stacks", "2", "--dmodel", str(D), "--dff", str(F), "--head", str(H), "--kvhead", str(KVH),
         "--seq", str(SEQ), "--dvocal", str(V)]




def block_flops(model, tokens, tokens_sp, ctx, tp):
    """A decoder block's FLOPs on one rank, by hand: tokens through the
    matmuls and attention, tokens_sp (tokens/tp under TP+SP) through the
    norms and residual adds."""
    if model == "gpt":
        params = (4 * D * D + 2 * D * F) // tp            # wqkv 3D^2, wo D^2, wgate and wdown D*F each
        slices = 3 * tokens * D // tp                     # q, k, v copies
        ffn_elementwise = 0
    else:
        params = (D * (D // H) * (H + 2 * KVH) + D * D + 3 * D * F) // tp  # GQA qkv, wo, SwiGLU's three
        slices = tokens * (D // H) * (H + 2 * KVH) // tp
        ffn_elementwise = 5 * tokens * F // tp            # SiLU (4 per element) and the product
    matmuls = 2 * tokens * params
    attention = 4 * tokens * ctx * D // tp + 6 * tokens * D // tp  # QK^T and PV; STAGE's 3 MACs per element
    norms_adds = 2 * 5 * tokens_sp * D + 2 * tokens_sp * D
    return matmuls + attention + slices + ffn_elementwise + norms_adds, matmuls, attention


def block0(ns):
    return [n for n in ns if n["name"].startswith("mb0.transformer.0.") and n["type"] == "COMP_NODE"]


def is_backward(name):
    base = name.split("@")[0]
    return base.rsplit(".", 1)[-1].startswith("d") or "_sharded_grad" in base or "@1" in name or "loss.loss" in name


def sim_all_finish(chakra, source, tmp, prefix, npus):
    net = os.path.join(tmp, "ring%d.yml" % npus)
    with open(net, "w") as f:
        f.write("topology: [ Ring ]\nnpus_count: [ %d ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n" % npus)
    rep = prefix + ".report.json"
    run([chakra, "sim", "-q", "--workload-configuration=" + prefix, "--comm-group-configuration=" + prefix + ".json",
         "--system-configuration=" + os.path.join(source, "examples", "system.json"),
         "--network-configuration=" + net, "--report=" + rep])
    ranks = json.load(open(rep))["ranks"]
    done = [r for r in ranks if r["finished"] and r["nodes_done"] == r["nodes"] > 0 and r["finish_ns"] > 0]
    return len(done), len(ranks), max(r["finish_ns"] for r in ranks)


def digest(prefix):
    files = sorted(glob.glob(prefix + ".*.et"), key=lambda f: int(f.split(".")[-2])) + [prefix + ".json"]
    h = hashlib.sha256()
    for f in files:
        h.update(open(f, "rb").read())
    return len(files), h.hexdigest()


def main():
    chakra, source = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "x")
        # 1. FLOPs by hand: dp 2, tp 2, micro-batch 8 -> b = 4 sequences per rank
        for model, tpsp in (("gpt", "1"), ("gpt", "0"), ("llama", "1")):
            for phase in ("decode", "prefill"):
                run([chakra, "synth", "-q", "-o", p] + SMALL + ["--model-type", model, "--tpsp", tpsp,
                                                                 "--phase", phase, "--dp", "2", "--tp", "2",
                                                                 "--batch", "8"])
                b, tp = 4, 2
                tokens = b * (1 if phase == "decode" else SEQ)
                want, mm, att = block_flops(model, tokens, tokens // tp if tpsp == "1" else tokens, SEQ, tp)
                got = sum(int(n["a"]["num_ops"]) for n in block0(nodes(chakra, p + ".0.et")))
                check("%s %s --tpsp %s: block FLOPs on rank 0 %d, by hand %d (matmuls 2 x %d tokens x params "
                      "= %d, attention %d)" % (phase, model, tpsp, got, want, tokens, mm, att), got == want)

        # 2. the KV cache: decode reads it (memory bound under the roofline), prefill writes it
        big = ["--num-stacks", "1", "--dmodel", "1024", "--head", "16", "--kvhead", "4", "--dff", "2048",
               "--seq", "4096", "--dvocal", "1000", "--model-type", "llama", "--tp", "2", "--batch", "8"]
        peak, bw = 900.0, 3000.0
        for dtype in (2, 4):
            run([chakra, "synth", "-q", "-o", p, "--phase", "decode", "--dtype-bytes", str(dtype),
                 "--peak-tflops", str(peak), "--mem-bw", str(bw)] + big)
            att = [n for n in nodes(chakra, p + ".0.et") if n["name"] == "mb0.transformer.0.mha.attn_kernel.qkv@0_COMP"]
            kv = 2 * 8 * 4096 * (1024 // 16) * (4 // 2)  # 2 x b x ctx x head dim x KV heads per rank
            q = 8 * 1024 // 2                               # Q and the output: b x Dmodel/tp each
            size, flops = int(att[0]["a"]["tensor_size"]), int(att[0]["a"]["num_ops"])
            oi = flops / size
            ns = int(flops / min(bw * 1e9 * oi, peak * 1e12) * 1e9)
            check("decode attention, --dtype-bytes %d: tensor_size %d = (KV cache %d + Q and output %d) x %d, "
                  "%d FLOPs, %.2f FLOP/byte: memory bound, %d us = bytes / bandwidth"
                  % (dtype, size, kv, 2 * q, dtype, flops, oi, int(att[0].get("duration_micros", 0))),
                  size == (kv + 2 * q) * dtype and flops == 4 * 8 * 4096 * 1024 // 2 + 6 * 8 * 1024 // 2
                  and bw * 1e9 * oi < peak * 1e12
                  and int(att[0].get("duration_micros", 0)) == max(1, (ns + 500) // 1000)
                  and abs(ns - size / bw) < 2)
        run([chakra, "synth", "-q", "-o", p, "--phase", "prefill", "--seq", "512"] + big[:10] + big[12:])
        ns = nodes(chakra, p + ".0.et")
        kvw = sum(int(n["a"]["tensor_size"]) // 2 for n in ns
                  if n["name"] in ("mb0.transformer.0.mha.k@0_COMP", "mb0.transformer.0.mha.v@0_COMP"))
        check("prefill writes the prompt's KV cache: K and V slices %d bytes = 2 x 8 x 512 x 64 x 2 x 2"
              % kvw, kvw == 2 * 8 * 512 * 64 * 2 * 2)

        # 3. structure: forward only, tensor-parallel collectives, sends forward
        for model, tpsp, extra in (("gpt", "1", []), ("gpt", "0", []), ("llama", "1", []),
                                   ("moe", "1", ["--ep", "2", "--experts", "4", "--kexperts", "2"])):
            for phase in ("prefill", "decode"):
                p = os.path.join(tmp, "s_%s%s_%s" % (model, tpsp, phase))
                run([chakra, "synth", "-q", "-o", p] + SMALL + extra +
                    ["--model-type", model, "--tpsp", tpsp, "--phase", phase, "--dp", "2", "--tp", "2",
                     "--pp", "2", "--batch", "16", "--micro-batch", "8"])
                ranks = 16 if model == "moe" else 8
                dp_groups = {str(g) for g in range(1, ranks // 2 + 1)}
                first, last = nodes(chakra, p + ".0.et"), nodes(chakra, "%s.%d.et" % (p, ranks - 1))
                both = first + last
                coll = lambda ns, t: sum(1 for n in ns if n["type"] == "COMM_COLL_NODE" and int(n["a"]["comm_type"]) == t)
                kinds = lambda ns, t: sum(1 for n in ns if n["type"] == t)
                per = 2 * 1  # micro-batches x blocks per stage
                if tpsp == "1":
                    # attention: gather the QKV input, scatter the out-projection; dense FFN: the same
                    # again; MoE: per local expert (2) the FFN's pair over tp, and over ep the router
                    # weight and the combined output gathered
                    rs_want, ag_want = (3, 5) if model == "moe" else (2, 2)
                    tp_ok = coll(first, 7) == per * rs_want and coll(first, 2) == per * ag_want
                else:
                    tp_ok = coll(first, 0) == per * 2 + 2 and coll(last, 0) == per * 2 + 2
                a2a = coll(first, 6)
                check("%s %s --tpsp %s: no backward/loss/update nodes, no dp collective, tp collectives as the "
                      "forward's, %d all-to-alls, sends %d/%d receives %d/%d"
                      % (phase, model, tpsp, a2a, kinds(first, "COMM_SEND_NODE"), kinds(last, "COMM_SEND_NODE"),
                         kinds(first, "COMM_RECV_NODE"), kinds(last, "COMM_RECV_NODE")),
                      not any(is_backward(n["name"]) for n in both)
                      and not any(n["a"].get("pg_name") in dp_groups for n in both if n["type"] == "COMM_COLL_NODE")
                      and tp_ok and a2a == (per * 2 if model == "moe" else 0)
                      and kinds(first, "COMM_SEND_NODE") == 2 and kinds(first, "COMM_RECV_NODE") == 0
                      and kinds(last, "COMM_RECV_NODE") == 2 and kinds(last, "COMM_SEND_NODE") == 0)

        # 4. refused, one line, exit 2
        for args, want in (
                (["--phase", "prefill", "--stage-compat"], "chakra synth: --phase prefill: --stage-compat"),
                (["--phase", "decode", "--activation-recompute", "1"], "chakra synth: --activation-recompute: "),
                (["--phase", "decode", "--sp", "2"], "chakra synth: --sp 2: --phase decode"),
                (["--phase", "decode", "--tp", "4", "--batch", "2"], "chakra synth: --micro-batch/--dp 2 is not "
                                                                     "divisible by --tp 4"),
                (["--phase", "infer"], "chakra synth: --phase")):
            r = run([chakra, "synth", "-o", os.path.join(tmp, "refused")] + SMALL + args, ok=2)
            check("refused %s: %s" % (" ".join(args), r.stderr.strip()),
                  r.stderr.startswith(want) and len(r.stderr.strip().splitlines()) == 1
                  and not glob.glob(os.path.join(tmp, "refused*")))
        r = run([chakra, "synth", "-o", p, "--phase", "train", "--stage-compat"] + SMALL + ["--tp", "2"])
        check("--phase train --stage-compat is STAGE's training, accepted: %s" % r.stdout.strip(),
              r.stdout.startswith("wrote 2 of 2 ranks") and any(n["a"].get("outputs") is not None
                                                                for n in nodes(chakra, p + ".0.et")))

        # 5. validate and simulate every model in both phases
        for model, extra in (("gpt", []), ("llama", []), ("moe", ["--ep", "2", "--experts", "4"])):
            for phase in ("prefill", "decode"):
                cfg = SMALL + extra + ["--model-type", model, "--phase", phase, "--dp", "2", "--tp", "2", "--pp", "2",
                                       "--batch", "16", "--micro-batch", "8", "--peak-tflops", "900", "--mem-bw",
                                       "3000"]
                q = os.path.join(tmp, "v_%s_%s" % (model, phase))
                run([chakra, "synth", "-q", "-o", q] + cfg)
                v = run([chakra, "validate", q, "--comm-group-configuration=" + q + ".json"])
                done, n, finish = sim_all_finish(chakra, source, tmp, q, 16 if model == "moe" else 8)
                check("%s %s: validate '%s', sim: %d of %d ranks finish (last at %d ns)"
                      % (phase, model, v.stdout.strip().splitlines()[-1], done, n, finish),
                      "0 error(s), 0 warning(s)" in v.stdout and done == n)

        # 6. determinism; train unchanged
        cfg = SMALL + ["--model-type", "llama", "--phase", "decode", "--dp", "2", "--tp", "2", "--pp", "2",
                       "--batch", "16", "--micro-batch", "4", "--peak-tflops", "900", "--mem-bw", "3000"]
        outs = []
        for k, threads in enumerate((["--threads", "1"], ["--threads", "4"], [])):
            q = os.path.join(tmp, "det%d" % k)
            run([chakra, "synth", "-q", "-o", q] + cfg + threads)
            outs.append(q)
        same = all(filecmp.cmp("%s.%d.et" % (outs[0], r), "%s.%d.et" % (o, r), shallow=False)
                   for o in outs[1:] for r in range(8)) and all(
                       filecmp.cmp(outs[0] + ".json", o + ".json", shallow=False) for o in outs[1:])
        check("decode: --threads 1, --threads 4 and the default write the same bytes", same)
        s3 = ["--num-stacks", "3", "--dmodel", "256", "--dff", "512", "--head", "8", "--kvhead", "4", "--seq", "64",
              "--dvocal", "1000"]
        pinned = (  # made by chakra synth before --phase existed
            (["--dp", "2", "--tp", "2", "--pp", "2", "--batch", "8", "--micro-batch", "2"],
             9, "f714ef6c266b85e1c598957da9abeaf976264634762b89aac224116a81a611ab"),
            (["--model-type", "llama", "--dp", "2", "--tp", "2", "--pp", "3", "--batch", "8", "--micro-batch", "2",
              "--peak-tflops", "900", "--mem-bw", "3000"],
             13, "9329eb17928cda930732373ed664cc301f649efc8e4d743111cf21fb3b00cce2"),
            (["--model-type", "moe", "--dp", "2", "--tp", "2", "--ep", "2", "--pp", "2", "--experts", "4",
              "--batch", "4", "--micro-batch", "2"],
             17, "97c6d2c82875e4ced1f01098a33bf6ef73753a4e6f01f6af5ce0a4c4cba3a1bd"),
            (["--tpsp", "0", "--dp", "2", "--tp", "2", "--batch", "4"],
             5, "2e6928f718e38b575afd9e7269726fa644cb5f4f7228293a8386e5365458730c"))
        # the groups file then listed the groups of one rank too: --singleton-groups
        for k, (args, nfiles, sha) in enumerate(pinned):
            for phase in ([], ["--phase", "train"]):
                q = os.path.join(tmp, "train%d%s" % (k, "p" if phase else ""))
                run([chakra, "synth", "-q", "--singleton-groups", "-o", q] + s3 + args + phase)
                got = digest(q)
                check("train %s%s: %d files, SHA-256 %s... as pinned" % (" ".join(args), " --phase train" if phase
                                                                         else "", got[0], got[1][:12]),
                      got == (nfiles, sha))
            # without it: the same ranks, the same groups but those of one rank, under the same ids
            d = os.path.join(tmp, "train%dd" % k)
            run([chakra, "synth", "-q", "-o", d] + s3 + args)
            same = all(filecmp.cmp("%s.%d.et" % (d, r), "%s.%d.et" % (q, r), shallow=False) for r in range(nfiles - 1))
            full = json.load(open(q + ".json"))
            check("train %s: without --singleton-groups the same ranks, and the groups of 2+ ranks under their ids"
                  % " ".join(args), same and json.load(open(d + ".json")) == {g: m for g, m in full.items() if len(m) > 1})
    return summary()


if __name__ == "__main__":
    sys.exit(main())

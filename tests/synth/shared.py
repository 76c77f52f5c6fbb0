#!/usr/bin/python3
"""shared.py - chakra synth --shared, chakra unshare and chakra share.

At every shape (dense dp/tp/pp under 1f1b, gpipe and none; TP only; TP+SP;
FSDP; context parallelism; MoE with expert parallelism; --stage-compat
dense, MoE and STAGE's debug model; --order stage; llama; inference
prefill and decode) the shared form written by synth --shared, once
unshared, is byte for byte the per-rank files and groups file synth
writes, and the shared output holds one template per pipeline stage and
nothing per rank. chakra share of the per-rank files finds one class per
stage; unsharing it gives the files back, byte for byte. Then: what each
refuses (--ranks with --shared, a shared output over rank files, rank files
over a shared set, a set in both forms), and a set whose ranks cannot be
classed (a rank encoded otherwise) keeps that rank as a class of its own.

usage: shared.py CHAKRA"""
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile

from checks import check, run, summary

CHAKRA = sys.argv[1]
SMALL = ["--num-stacks", "4", "--dmodel", "64", "--dff", "128", "--head", "4", "--kvhead", "2", "--seq", "32",
         "--dvocal", "64", "--batch", "8"]
SHAPES = {
    "dense_dp2_tp2_pp2_1f1b": SMALL + ["--dp", "2", "--tp", "2", "--pp", "2"],
    "dense_dp2_pp4_gpipe": SMALL + ["--dp", "2", "--pp", "4", "--schedule", "gpipe"],
    "dense_tp2_pp2_none": SMALL + ["--tp", "2", "--pp", "2", "--schedule", "none"],
    "tp_only_dp2_tp2_pp2": SMALL + ["--dp", "2", "--tp", "2", "--pp", "2", "--tpsp", "0"],
    "tpsp_dp2_tp4": SMALL + ["--dp", "2", "--tp", "4"],
    "fsdp_dp4_pp2": SMALL + ["--dp", "4", "--pp", "2", "--weight-sharded", "1"],
    "sp2_tp2_pp2": SMALL + ["--sp", "2", "--tp", "2", "--pp", "2"],
    "moe_dp2_tp2_ep2_pp2": SMALL + ["--model-type", "moe", "--experts", "4", "--kexperts", "2", "--dp", "2", "--tp",
                                    "2", "--ep", "2", "--pp", "2"],
    "llama_dp2_tp2_pp2_order_stage": SMALL + ["--model-type", "llama", "--dp", "2", "--tp", "2", "--pp", "2",
                                              "--order", "stage"],
    "stage_compat_dp2_tp2_pp2": SMALL + ["--dp", "2", "--tp", "2", "--pp", "2", "--stage-compat"],
    "stage_compat_moe_ep2": SMALL + ["--model-type", "moe", "--experts", "4", "--dp", "2", "--tp", "2", "--ep", "2",
                                     "--pp", "2", "--stage-compat"],
    "stage_compat_debug_ep2": ["--model-type", "debug", "--dp", "2", "--tp", "2", "--ep", "2", "--stage-compat"],
    "prefill_dp2_tp2_pp2": SMALL + ["--phase", "prefill", "--dp", "2", "--tp", "2", "--pp", "2"],
    "decode_dp2_tp2_pp2": SMALL + ["--phase", "decode", "--dp", "2", "--tp", "2", "--pp", "2"],
    "tp_first_dp2_tp4_pp2": SMALL + ["--dp", "2", "--tp", "4", "--pp", "2", "--rank-order", "tp-first"],
    "tp_first_moe_dp2_tp2_ep2_pp2": SMALL + ["--model-type", "moe", "--experts", "4", "--kexperts", "2", "--dp", "2",
                                             "--tp", "2", "--ep", "2", "--pp", "2", "--rank-order", "tp-first"],
    "recompute_dp2_pp2_dtype4": SMALL + ["--dp", "2", "--pp", "2", "--activation-recompute", "1", "--dtype-bytes",
                                         "4", "--peak-tflops", "900", "--mem-bw", "3000"],
}


def files(prefix):
    d, base = os.path.split(prefix)
    return sorted(f for f in os.listdir(d) if f.startswith(base + "."))


def same_files(a, b):
    """Every file of prefix a has a byte-identical twin under prefix b and back."""
    fa, fb = files(a), files(b)
    ba, bb = os.path.basename(a), os.path.basename(b)
    names_a = [f[len(ba):] for f in fa]
    names_b = [f[len(bb):] for f in fb]
    if names_a != names_b:
        return False, "files %s vs %s" % (names_a[:6], names_b[:6])
    for n in names_a:
        if not filecmp.cmp(a + n, b + n, shallow=False):
            return False, "%s%s differs" % (a, n)
    return True, ""


def main():
    tmp = tempfile.mkdtemp(prefix="chakra-shared-")
    try:
        for name, args in SHAPES.items():
            d = os.path.join(tmp, name)
            os.mkdir(d)
            per, shared, back = d + "/per", d + "/sh", d + "/back"
            run([CHAKRA, "synth", "-q", "-o", per] + args)
            out = run([CHAKRA, "synth", "-o", shared, "--shared"] + args).stdout
            man = json.load(open(shared + ".set.json"))
            nranks = len([f for f in files(per) if f.endswith(".et")])
            pp = [a["size"] for a in man["layout"]["axes"] if a["name"] == "pp"][0]
            check(name + ": the shared form is a manifest and one template per pipeline stage",
                  files(shared) == sorted(["sh.set.json"] + ["sh.class%d.et" % k for k in range(pp)])
                  and man["ranks"] == nranks and man["layout"]["kind"] == "grid"
                  and man["layout"]["class_axes"] == ["pp"] and "class template" in out, (files(shared), out))
            run([CHAKRA, "unshare", "-q", shared, "-o", back])
            ok, why = same_files(per, back)
            check(name + ": unshare of synth --shared is synth's per-rank files and groups, byte for byte", ok, why)
            again, back2 = d + "/again", d + "/back2"
            run([CHAKRA, "share", "-q", per, "-o", again])
            man2 = json.load(open(again + ".set.json"))
            check(name + ": share finds one class per pipeline stage",
                  len(man2["classes"]) == pp and man2["layout"]["kind"] == "table", len(man2["classes"]))
            run([CHAKRA, "unshare", "-q", again, "-o", back2])
            ok, why = same_files(per, back2)
            check(name + ": unshare of share gives the files back, byte for byte", ok, why)
        refusals(tmp)
        odd_rank(tmp)
        tp_first(tmp)
        world_group(tmp)
        double_peer(tmp)
    finally:
        shutil.rmtree(tmp)
    return summary()


def tp_first(tmp):
    """--rank-order tp-first numbers tp fastest (a tp group on consecutive
    ranks), then sp, ep, dp, the stage slowest; the group ids stay STAGE's."""
    d = os.path.join(tmp, "tpfirst")
    os.mkdir(d)
    base = SMALL + ["--dp", "2", "--tp", "4", "--pp", "2"]
    run([CHAKRA, "synth", "-q", "-o", d + "/tp", "--rank-order", "tp-first"] + base)
    run([CHAKRA, "synth", "-q", "-o", d + "/dp"] + base)
    tp, dp = json.load(open(d + "/tp.json")), json.load(open(d + "/dp.json"))
    check("tp-first: tp groups are consecutive ranks, dp groups 4 apart, ids as dp-first's",
          tp["9"] == [0, 1, 2, 3] and tp["12"] == [12, 13, 14, 15] and tp["1"] == [0, 4] and tp["8"] == [11, 15]
          and dp["9"] == [0, 2, 4, 6] and dp["1"] == [0, 1] and sorted(tp) == sorted(dp), (tp, dp))
    p = run([CHAKRA, "synth", "-o", d + "/x", "--rank-order", "tp-first", "--stage-compat"] + base, ok=2)
    check("tp-first with --stage-compat refused in one line",
          p.stderr.count("\n") == 1 and "STAGE does (dp first)" in p.stderr, p.stderr)


def refusals(tmp):
    d = os.path.join(tmp, "refuse")
    os.mkdir(d)
    base = SMALL + ["--dp", "2", "--pp", "2"]
    p = run([CHAKRA, "synth", "--shared", "--ranks", "0-1", "-o", d + "/x"] + base, ok=2)
    check("--shared with --ranks refused in one line",
          p.stderr.count("\n") == 1 and "--ranks: the shared form describes every rank" in p.stderr, p.stderr)
    run([CHAKRA, "synth", "-q", "-o", d + "/per"] + base)
    p = run([CHAKRA, "synth", "--shared", "-o", d + "/per"] + base, ok=2)
    check("synth --shared over rank files refused before writing",
          "per.0.et: rank files are there; writing the shared form" in p.stderr and not os.path.exists(d + "/per.set.json"),
          p.stderr)
    p = run([CHAKRA, "share", d + "/per", "-o", d + "/per"], ok=2)
    check("share onto its own input refused", "would destroy the input" in p.stderr or "rank files are there" in p.stderr,
          p.stderr)
    run([CHAKRA, "synth", "-q", "--shared", "-o", d + "/sh"] + base)
    run([CHAKRA, "synth", "-q", "--shared", "-o", d + "/other"] + base)
    p = run([CHAKRA, "unshare", d + "/sh", "-o", d + "/other"], ok=2)
    check("unshare beside a shared set refused", "other.set.json: a shared trace set is there" in p.stderr
          and not os.path.exists(d + "/other.0.et"), p.stderr)
    p = run([CHAKRA, "unshare", d + "/sh", "-o", d + "/sh"], ok=2)
    check("unshare onto its own input refused", "would destroy the input" in p.stderr, p.stderr)
    shutil.copy(d + "/per.0.et", d + "/sh.0.et")
    p = run([CHAKRA, "validate", d + "/sh"], ok=2)
    check("a set in both forms refused in one line",
          p.stderr.count("\n") == 1 and "both a shared trace set" in p.stderr, p.stderr)
    os.remove(d + "/sh.0.et")
    with open(d + "/sh.set.json") as f:
        text = f.read()
    with open(d + "/sh.set.json", "w") as f:
        f.write(text.replace('"chakra_trace_set": 1', '"chakra_trace_set": 7'))
    p = run([CHAKRA, "validate", d + "/sh"], ok=2)
    check("an unknown manifest version refused in one line, exit 2",
          p.stderr.count("\n") == 1 and "sh.set.json: line 1: chakra_trace_set: version 7 is not one this chakra reads"
          in p.stderr, p.stderr)


def odd_rank(tmp):
    """A rank whose bytes its class's template cannot reproduce (a varint
    written with a redundant byte) is kept as a class of its own, and
    unsharing still gives every file back."""
    d = os.path.join(tmp, "odd")
    os.mkdir(d)
    run([CHAKRA, "synth", "-q", "-o", d + "/per"] + SMALL + ["--dp", "2", "--tp", "2"])
    path = d + "/per.3.et"
    data = bytearray(open(path, "rb").read())
    # the first node's id (field 1, varint 0): 0x08 0x00 -> 0x08 0x80 0x00, its length prefix one more
    meta_len = data[0]
    at = 1 + meta_len
    node_len = data[at]
    assert node_len < 127 and data[at + 1:at + 3] == b"\x08\x00", data[at:at + 4]
    data[at:at + 3] = bytes([node_len + 1, 0x08, 0x80, 0x00])
    open(path, "wb").write(bytes(data))
    run([CHAKRA, "validate", d + "/per"])
    run([CHAKRA, "share", "-q", d + "/per", "-o", d + "/sh"])
    man = json.load(open(d + "/sh.set.json"))
    check("a rank its class cannot reproduce is a class of its own",
          len(man["classes"]) == 2 and man["classes"][1]["rep"] == 3 and man["layout"]["ranks"][3][0] == 1,
          man["classes"])
    run([CHAKRA, "unshare", "-q", d + "/sh", "-o", d + "/back"])
    ok, why = same_files(d + "/per", d + "/back")
    check("and unsharing gives every file back, byte for byte", ok, why)


def world_group(tmp):
    """A collective on the world group (pg_name "", and "0", its other
    name) on every rank: share keeps it as written (not a role, so the
    manifest never holds an empty name, which its reader refuses), and the
    shared set reads back."""
    d = os.path.join(tmp, "world")
    os.mkdir(d)
    run([CHAKRA, "gen", "microbench", "-q", "--coll", "all_reduce", "--npus", "4", "--size", "1M", "-o", d + "/m"])
    text = run([CHAKRA, "jsonize", d + "/m.0.et"]).stdout
    size = '{"name":"comm_size","int64_val":"1048576"}'
    assert size in text, text
    for pg, tag in (("", ""), ("0", " (pg_name \"0\")")):
        w = os.path.join(d, "zero" if pg else "empty")
        os.mkdir(w)
        with open(w + "/w.jsonl", "w") as f:
            f.write(text.replace(size, size + ',{"name":"pg_name","string_val":"%s"}' % pg))
        for r in range(4):
            run([CHAKRA, "pack", "-q", "-o", "%s/per.%d.et" % (w, r), w + "/w.jsonl"])
        run([CHAKRA, "share", "-q", w + "/per", "-o", w + "/sh"])
        man = json.load(open(w + "/sh.set.json"))
        p = subprocess.run([CHAKRA, "validate", w + "/sh"], capture_output=True, text=True)
        check("the world group is not a role: one class, no group roles, the set reads back" + tag,
              len(man["classes"]) == 1 and man["classes"][0]["groups"] == [] and p.returncode == 0,
              (man["classes"], p.stderr))
        run([CHAKRA, "unshare", "-q", w + "/sh", "-o", w + "/back"])
        ok, why = same_files(w + "/per", w + "/back")
        check("and unsharing gives the files back, byte for byte" + tag, ok, why)


def double_peer(tmp):
    """A template whose peers are written as double_val (the readers take
    an integral double as a peer): the binding cannot write another rank's
    peer there, so reading such a rank is an error naming it, by validate
    (even where it would check by class) and unshare, instead of that rank
    silently keeping its representative's peers."""
    d = os.path.join(tmp, "double")
    os.mkdir(d)
    run([CHAKRA, "synth", "-q", "--shared", "-o", d + "/s"] + SMALL + ["--dp", "2", "--pp", "2"])
    text = run([CHAKRA, "jsonize", d + "/s.class1.et"]).stdout
    doubled = text.replace('"comm_src","int32_val":0', '"comm_src","double_val":0')
    assert doubled != text, text[:400]
    with open(d + "/c1.jsonl", "w") as f:
        f.write(doubled)
    run([CHAKRA, "pack", "-q", "-o", d + "/s.class1.et", d + "/c1.jsonl"])
    want = "s.class1.et (rank 3): error: offset 44: message 1: binding the class template to the rank: comm_src in a " \
        "double_val cannot hold the bound peer 1"
    p = subprocess.run([CHAKRA, "validate", d + "/s"], capture_output=True, text=True)
    check("validate names the rank whose peer a double cannot hold, exit 2", p.returncode == 2 and want in p.stdout,
          (p.returncode, p.stdout[-600:], p.stderr))
    p = subprocess.run([CHAKRA, "unshare", d + "/s", "-o", d + "/u"], capture_output=True, text=True)
    check("unshare refuses it in one line and writes nothing", p.returncode == 2 and p.stderr.count("\n") == 1
          and "comm_src in a double_val cannot hold the bound peer 1" in p.stderr
          and not os.path.exists(d + "/u.0.et"), (p.returncode, p.stderr))


if __name__ == "__main__":
    sys.exit(main())

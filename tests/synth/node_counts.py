#!/usr/bin/env python3
"""Per-rank node counts of chakra synth --stage-compat against the table of
STAGE outputs in the synthesis spec (section 8), and impossible
configurations: one line naming the option, exit 2, no files."""
import collections
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

SMALL = ["--dmodel", "1024", "--dff", "4096", "--head", "16", "--kvhead", "16", "--seq", "512",
         "--dvocal", "32000", "--num-stacks", "4"]
COLL = {0: "AR", 2: "AG", 6: "A2A", 7: "RS"}

# (name, options, {rank: expected breakdown or total})
CASES = [
    ("gpt small dp2 tp2 pp2, 4 micro-batches", SMALL + ["--dp", "2", "--tp", "2", "--pp", "2", "--batch", "8",
                                                      "--micro-batch", "2"],
     {0: {"total": 348, "COMP": 250, "AG": 48, "RS": 32, "AR": 10, "SEND": 4, "RECV": 4}, 7: {"total": 356}}),
    ("gpt small fsdp dp4 tp2", SMALL + ["--dp", "4", "--tp", "2", "--weight-sharded", "1", "--batch", "8",
                                       "--micro-batch", "4"],
     {0: {"total": 368, "AG": 64, "RS": 40, "AR": 4}}),
    ("gpt small dp2 tp2 sp2", SMALL + ["--dp", "2", "--tp", "2", "--sp", "2", "--batch", "8", "--micro-batch", "4"],
     {0: {"total": 394, "AG": 64, "RS": 48, "AR": 22}}),
    ("gpt small TP-only dp2 tp4", SMALL + ["--dp", "2", "--tp", "4", "--tpsp", "0", "--batch", "4",
                                         "--micro-batch", "4"],
     {0: {"total": 161, "COMP": 136, "AR": 24, "AG": 1}}),
    # The spec gives only totals for llama; batch 8, micro-batch 4 (2 micro-batches).
    # batch 8, micro-batch 4 (2 micro-batches: 4 ALL_TO_ALLs per block and
    # micro-batch). Groups: dp 1-4, tp 5-8, cp 9-16, ep 17-20; rank 0's ep
    # group is 17 ([0, 4]), rank 7's is 20 ([3, 7]).
    ("moe small dp2 tp2 ep2 (4 experts, k 2)", SMALL + ["--model-type", "moe", "--dp", "2", "--tp", "2", "--ep", "2",
                                                      "--experts", "4", "--kexperts", "2", "--batch", "8",
                                                      "--micro-batch", "4"],
     {0: {"total": 712, "COMP": 524, "A2A": 32, "AG": 96, "RS": 48, "AR": 12, "A2A@17": 32, "AG@17": 24},
      7: {"total": 712, "A2A@20": 32}}),
    ("llama mixed precision dp2 tp2 pp2 kvhead 4", ["--model-type", "llama", "--mixed-precision", "1", "--dmodel",
     "1024", "--dff", "4096", "--head", "16", "--kvhead", "4", "--seq", "512", "--dvocal", "32000", "--num-stacks",
     "4", "--dp", "2", "--tp", "2", "--pp", "2", "--batch", "8", "--micro-batch", "4"],
     {0: {"total": 214}, 7: {"total": 218}}),
]
LARGE = ("gpt large 16 layers dp4 tp4 pp4", ["--num-stacks", "16", "--dp", "4", "--tp", "4", "--pp", "4",
                                             "--batch", "64", "--micro-batch", "8"], 1320, 1348, 85120)

BAD = [
    (["--model-type", "bert"], "--model-type"),
    (["--model-type", "llama", "--kvhead", "3"], "--kvhead"),
    (["--ep", "2"], "--ep"),
    (["--model-type", "llama", "--ep", "2"], "--ep"),
    (["--model-type", "moe", "--experts", "4", "--ep", "3"], "--experts"),
    (["--model-type", "moe", "--experts", "8", "--kexperts", "9"], "--kexperts"),
    (["--model-type", "moe", "--experts", "0"], "--experts"),
    (["--model-type", "moe", "--experts", "2048", "--ep", "2048"], "--dmodel"),
    (["--model-type", "moe", "--experts", "64", "--kexperts", "1", "--seq", "32", "--tp", "1"], "--kexperts"),
    (["--model-type", "moe", "--tpsp", "0"], "--tpsp"),
    (["--batch", "6", "--micro-batch", "4"], "--batch"),
    (["--dp", "3", "--batch", "8", "--micro-batch", "4"], "--dp"),
    (["--tp", "3"], "--tp"),
    (["--head", "12", "--tp", "8"], "--head"),
    (["--sp", "3"], "--sp"),
    (["--pp", "8", "--num-stacks", "4"], "--pp"),
    (["--ranks", "99"], "--ranks"),
    (["--ranks", "0,0"], "--ranks"),
    (["--dtype-bytes", "0"], "--dtype-bytes"),
    (["--schedule", "zigzag"], "--schedule"),
    (["--peak-tflops", "900"], "--peak-tflops"),
]

# Values past an option's limit (issue 20 item 4, issue 26 item 9): they
# were cast to 32 bits or multiplied without a check, and gave wrapped
# workloads or internal template messages. Each must give one line naming
# the option with its value and the exact limit.
BIG = ["--dp", "16777216", "--tp", "16777216", "--sp", "65536", "--seq", "1099511627776", "--head", "16777216",
       "--kvhead", "16777216", "--dmodel", "16777216", "--dff", "16777216", "--dvocal", "16777216",
       "--batch", "16777216"]
LIMITS = [
    (["--num-stacks", "4294967297"], ["--num-stacks 4294967297: at most 4194304"]),
    (["--num-stacks", "4294967296"], ["--num-stacks 4294967296: at most 4194304"]),
    (["--num-stacks", "4194305"], ["--num-stacks 4194305: at most 4194304"]),
    (["--batch", "4294967296", "--micro-batch", "1"], ["--batch 4294967296 / --micro-batch 1 = 4294967296 "
                                                       "micro-batches: at most 4194304"]),
    (["--batch", "4294967297", "--micro-batch", "1"], ["4294967297 micro-batches: at most 4194304"]),
    (["--batch", "4194304", "--micro-batch", "1", "--num-stacks", "2"],
     ["--num-stacks 2 x 4194304 micro-batches", "at most 4194304"]),
    (BIG, ["--dp 16777216 x --tp 16777216 x --sp 65536 x --pp 1 is more than 16777216 ranks"]),
    (["--seq", "4611686018427387904"], ["--seq 4611686018427387904", "at most 9223372036854775807"]),
    (["--batch", "4294967297", "--seq", "1099511627776"], ["--batch 4294967297", "--seq 1099511627776",
                                                           "at most 9223372036854775807"]),
    (["--dmodel", "4611686018427387904", "--head", "1"], ["--dmodel 4611686018427387904",
                                                          "at most 9223372036854775807"]),
    (["--dtype-bytes", "16777216", "--dmodel", "1099511627776", "--head", "1"],
     ["--dtype-bytes 16777216", "at most 9223372036854775807"]),
    (["--dvocal", "18446744073709551615"], ["--dvocal 18446744073709551615: at most 9223372036854775807"]),
    (["--dff", "9223372036854775808"], ["--dff 9223372036854775808: at most 9223372036854775807"]),
    (["--seed", "18446744073709551615"], ["--seed 18446744073709551615: at most 2147483647"]),
    (["--seed", "2147483647", "--pp", "2", "--batch", "2"], ["--seed 2147483647", "at most 2147483646"]),
    # STAGE's files (--stage-compat) take the same limits; its ranks count --ep always.
    (["--stage-compat", "--dp", "16777216", "--tp", "16777216", "--ep", "16777216"],
     ["--dp 16777216 x --tp 16777216 x --sp 1 x --pp 1 x --ep 16777216 is more than 16777216 ranks"]),
    (["--stage-compat", "--num-stacks", "4194304", "--batch", "4398046511104", "--micro-batch", "1"],
     ["--num-stacks x micro-batches is too large"]),
    (["--stage-compat", "--stage-tag-base", "2147483647", "--pp", "2", "--batch", "2"],
     ["--stage-tag-base 2147483647", "at most 2147483646"]),
    (["--stage-compat", "--seed", "18446744073709551615"], ["--seed 18446744073709551615: at most 2147483647"]),
    # A decode step's --seq is the cached context (Ctx): still named.
    (["--phase", "decode", "--seq", "4611686018427387904"], ["--seq 4611686018427387904",
                                                              "at most 9223372036854775807"]),
]


def check_limits(chakra, tmp):
    bad = 0
    for opts, wants in LIMITS:
        d = tempfile.mkdtemp(dir=tmp)
        p = subprocess.run([chakra, "synth", "-o", os.path.join(d, "x")] + SMALL + opts, capture_output=True,
                           text=True, timeout=120)
        lines = p.stderr.strip().splitlines()
        ok = p.returncode == 2 and len(lines) == 1 and all(w in lines[0] for w in wants) and "template" not in lines[0] \
            and not os.listdir(d)
        print("%s: exit %d, %r%s" % (" ".join(opts), p.returncode, p.stderr.strip()[:200], "" if ok else "  <-- wrong"))
        bad += not ok
    # At the limit: the last tags are 2147483646 and 2147483647, not wrapped.
    prefix = os.path.join(tmp, "tags")
    subprocess.run([chakra, "synth", "-q", "-o", prefix, "--seed", "2147483646", "--pp", "2", "--batch", "2"] + SMALL,
                   check=True)
    out = subprocess.run([chakra, "jsonize", prefix + ".0.et"], check=True, capture_output=True, text=True).stdout
    tags = sorted({int(a["int32_val"]) for line in out.splitlines()[1:] for a in json.loads(line).get("attr", [])
                   if a["name"] == "comm_tag"})
    ok = tags and tags[0] >= 2147483646 and tags[-1] == 2147483647
    print("--seed 2147483646: tags %s%s" % (tags, "" if ok else "  <-- wrong"))
    return bad + (not ok)


def breakdown(chakra, path):
    out = subprocess.run([chakra, "jsonize", path], check=True, capture_output=True, text=True).stdout
    c = collections.Counter()
    for line in out.splitlines()[1:]:
        n = json.loads(line)
        t = n["type"]
        if t == "COMM_COLL_NODE":
            ct = [int(a.get("int64_val", 0)) for a in n["attr"] if a["name"] == "comm_type"][0]
            pg = [a.get("string_val") for a in n["attr"] if a["name"] == "pg_name"][0]
            c[COLL[ct]] += 1
            c["%s@%s" % (COLL[ct], pg)] += 1
        else:
            c[{"COMP_NODE": "COMP", "COMM_SEND_NODE": "SEND", "COMM_RECV_NODE": "RECV"}[t]] += 1
        c["total"] += 1
    return c


def main():
    chakra = sys.argv[1]
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, opts, want in CASES:
            prefix = os.path.join(tmp, "c")
            subprocess.run([chakra, "synth", "--stage-compat", "-q", "-o", prefix] + opts, check=True)
            for rank, exp in want.items():
                got = breakdown(chakra, "%s.%d.et" % (prefix, rank))
                diff = {k: (v, got.get(k, 0)) for k, v in exp.items() if got.get(k, 0) != v}
                print("%s, rank %d: %s" % (name, rank, "ok" if not diff else "expected/got %s" % diff))
                bad += bool(diff)
        name, opts, lo, hi, total = LARGE
        prefix = os.path.join(tmp, "large")
        out = subprocess.run([chakra, "synth", "--stage-compat", "-o", prefix] + opts, check=True,
                             capture_output=True, text=True).stdout
        per = [int(x) for x in re.search(r"nodes per rank ([\d/]+)", out).group(1).split("/")]
        nodes = int(re.search(r"(\d+) nodes,", out).group(1))
        ok = min(per) == lo and max(per) == hi and nodes == total
        print("%s: per rank %s, total %d: %s" % (name, per, nodes, "ok" if ok else "expected %d-%d, %d" % (lo, hi, total)))
        bad += not ok
        for opts, option in BAD:
            d = tempfile.mkdtemp(dir=tmp)
            p = subprocess.run([chakra, "synth", "-o", os.path.join(d, "x")] + SMALL + opts, capture_output=True,
                               text=True)
            lines = p.stderr.strip().splitlines()
            ok = p.returncode == 2 and len(lines) == 1 and option in lines[0] and not os.listdir(d)
            print("%s: exit %d, %r%s" % (" ".join(opts), p.returncode, p.stderr.strip()[:150], "" if ok else "  <-- wrong"))
            bad += not ok
        bad += check_limits(chakra, tmp)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

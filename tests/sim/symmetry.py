#!/usr/bin/python3
"""chakra sim --symmetry=auto against --symmetry=off: every rank's figures
(finish, exposed communication, busy times, collectives, sends, nodes) must
be identical, whether the run was reduced to one NPU per rank class or fell
back to every NPU, and each case must take the way it is expected to
(reduced, or every NPU with the reason named).

The cases: chakra synth jobs (dense, FSDP, sequence parallel, MoE, llama,
1F1B, GPipe, no schedule, recompute), DLRM, microbenchmarks, on 1-, 2- and
3-D networks of Ring, FullyConnected and Switch dimensions, with ring,
direct and halving-doubling, localBWAware and baseline, several chunks and
queues, the rendezvous protocol, the roofline, custom collectives (chakra
coll gen), shared trace sets (synth --shared: the set's own classes, and
its unshared per-rank files, whose classes are found while loading, give
the same figures), collectives replaced by chakra coll expand (ring, hd,
direct) in the shared form, and configurations that must not be reduced
(a group ring that crosses a slower dimension, a mesh, the aware model, a
double binary tree, shared remote memory, an expanded ring whose members
meet at one instant in another order).

usage: symmetry.py CHAKRA_BINARY [--large] [--only SUBSTRING] [--verbose]
  --large: the large cases (up to 8,192 ranks) instead of the quick ones;
  with CHAKRA_SANITIZED=1 in the environment (the sanitizer build) only
  those of at most 2,048 ranks."""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

CHAKRA = os.path.abspath(sys.argv[1])
LARGE = "--large" in sys.argv
VERBOSE = "--verbose" in sys.argv
ONLY = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
BASE = None

SMALL = ["--dmodel", "256", "--dff", "1024", "--head", "8", "--kvhead", "8", "--seq", "128", "--dvocal", "512",
         "--peak-tflops", "100", "--mem-bw", "1000"]
SYSTEM = {"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
          "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring"],
          "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
          "all-to-all-implementation": ["ring"], "collective-optimization": "localBWAware", "local-mem-bw": 1600}


def run(cmd, cwd=None):
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if p.returncode not in (0, 1):
        raise RuntimeError("exit %d: %s\n%s" % (p.returncode, " ".join(cmd), p.stderr[-2000:]))
    return p


def network(d, kinds, sizes, bw=None, lat=None):
    path = os.path.join(d, "net.yml")
    bw = bw or [100.0 * (i + 1) for i in range(len(sizes))]
    lat = lat or [500.0 / (i + 1) for i in range(len(sizes))]
    with open(path, "w") as f:
        f.write("topology: [ %s ]\nnpus_count: [ %s ]\nbandwidth: [ %s ]\nlatency: [ %s ]\n" % (
            ", ".join(kinds), ", ".join(map(str, sizes)), ", ".join(map(str, bw)), ", ".join(map(str, lat))))
    return path


def system(d, dims, **over):
    s = dict(SYSTEM)
    algo = over.pop("algo", "ring")
    for k in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all"):
        a = algo if not (algo == "halvingDoubling" and k == "all-to-all") else "ring"
        s[k + "-implementation"] = [a] * dims
    s.update(over)
    path = os.path.join(d, "sys.json")
    with open(path, "w") as f:
        json.dump(s, f)
    return path


def synth(d, args):
    prefix = os.path.join(d, "w")
    run([CHAKRA, "synth", "-q", "-o", prefix] + args)
    return prefix


class Case:
    """A configuration: ranks is its rank count, the product of its
    network's dimension sizes (npus_count)."""
    def __init__(self, name, expect, make, sizes):
        self.name, self.expect, self.make = name, expect, make
        self.ranks = math.prod(sizes)


def sim(prefix, sysf, net, mode, extra, d):
    rep = os.path.join(d, "report.%s.json" % mode)
    cmd = [CHAKRA, "sim", "-q", "--summary", "--symmetry=" + mode, "--workload-configuration=" + prefix,
           "--system-configuration=" + sysf, "--network-configuration=" + net, "--report=" + rep]
    cmd += extra if any(e.startswith("--network-model") for e in extra) else extra + ["--network-model=unaware"]
    p = run(cmd)
    m = re.search(r"symmetry: (.*)", p.stdout)
    return json.load(open(rep)), (m.group(1) if m else ""), p


def same_ranks(off, auto, what, problems):
    if off["npus"] != auto["npus"]:
        problems.append("%snpus %d vs %d" % (what, off["npus"], auto["npus"]))
    for a, b in zip(off["ranks"], auto["ranks"]):
        if a != b:
            diff = sorted(k for k in a if a.get(k) != b.get(k))
            problems.append("%srank %d differs in %s: off %s, auto %s" % (what, a["rank"], ", ".join(diff),
                                                                          {k: a[k] for k in diff[:3]},
                                                                          {k: b[k] for k in diff[:3]}))
            break


def check(case):
    d = tempfile.mkdtemp(prefix="sym-", dir=BASE)
    made = case.make(d)
    prefix, sysf, net, extra = made[:4]
    off, why_off, p_off = sim(prefix, sysf, net, "off", extra, d)
    auto, why, p_auto = sim(prefix, sysf, net, "auto", extra, d)
    problems = []
    same_ranks(off, auto, "", problems)
    for other in made[4:]:
        # the same set as per-rank files: classes found while loading
        per_rank, why_pr, _ = sim(other, sysf, net, "auto", extra, d)
        same_ranks(off, per_rank, "per-rank files: ", problems)
        # a synth job's classes are its stages either way; an expansion's
        # templates may be finer than the classes found (per place)
        alike = why_pr.split(":")[0] == why.split(":")[0] and per_rank["classes"] == auto["classes"]
        if not alike and not getattr(case, "expanded", False):
            problems.append("per-rank files: %d classes, %s; the shared form: %d classes, %s" % (
                per_rank["classes"], why_pr, auto["classes"], why))
    if off["stuck"] != auto["stuck"] or p_off.returncode != p_auto.returncode:
        problems.append("stuck or exit status differ")
    if not all(r["finished"] for r in off["ranks"]):
        problems.append("not every rank finished")
    if not why_off.startswith("every NPU simulated: --symmetry=off"):
        problems.append("--symmetry=off says: " + why_off)
    if case.expect == "reduced":
        if not why.startswith("reduced:"):
            problems.append("expected a reduced run, got: " + why)
        elif auto["simulated_npus"] != auto["classes"] or auto["classes"] >= auto["npus"]:
            problems.append("reduced, but %d NPUs simulated for %d classes of %d ranks" % (
                auto["simulated_npus"], auto["classes"], auto["npus"]))
    elif not (why.startswith("every NPU simulated:") and case.expect in why):
        problems.append("expected every NPU simulated because '%s', got: %s" % (case.expect, why))
    shutil.rmtree(d)
    return problems, why, auto["npus"], auto["classes"]


def synth_case(name, expect, args, kinds, sizes, dims=None, extra=(), bw=None, lat=None, memory=None, **sysover):
    def make(d):
        prefix = synth(d, args)
        more = list(extra)
        if memory:
            mem = os.path.join(d, "mem.json")
            with open(mem, "w") as f:
                json.dump(memory, f)
            more.append("--remote-memory-configuration=" + mem)
        return prefix, system(d, dims or len(sizes), **sysover), network(d, kinds, sizes, bw, lat), more
    return Case(name, expect, make, sizes)


def job(dp, tp, pp, *more, schedule="1f1b", batch=None, stacks=None):
    mb = max(dp, 1) * 2
    return SMALL + ["--num-stacks", str(stacks or max(2, pp)), "--dp", str(dp), "--tp", str(tp), "--pp", str(pp),
                    "--schedule", schedule, "--batch", str(batch or 2 * mb), "--micro-batch", str(mb)] + list(more)


def shared_case(name, expect, args, kinds, sizes, expand=(), per_rank=True, **sysover):
    """A chakra synth --shared job, its collectives replaced by coll expand
    --algo EXPAND... (per class, the shared form again) when given; with
    per_rank, its chakra unshare per-rank files are simulated too."""
    def make(d):
        prefix = os.path.join(d, "w")
        run([CHAKRA, "synth", "-q", "--shared", "-o", prefix] + args)
        sysf = system(d, len(sizes), **sysover)
        if expand:
            x = os.path.join(d, "x")
            cmd = [CHAKRA, "coll", "expand", prefix, "-o", x, "--system-configuration", sysf]
            for a in expand:
                cmd += ["--algo", a]
            run(cmd)
            prefix = x
        if not os.path.exists(prefix + ".set.json"):
            raise RuntimeError("%s: not written in the shared form" % prefix)
        out = [prefix, sysf, network(d, kinds, sizes), []]
        if per_rank:
            u = os.path.join(d, "u")
            run([CHAKRA, "unshare", prefix, "-o", u])
            out.append(u)
        return out
    c = Case(name, expect, make, sizes)
    c.expanded = bool(expand)
    return c


def custom_case(name, expect, coll, algo, group, npus, args, kinds, sizes):
    """A synth job whose collectives of one type run a custom algorithm
    (chakra coll gen) made for the group size."""
    def make(d):
        prefix = synth(d, args)
        alg = os.path.join(d, "alg")
        run([CHAKRA, "coll", "gen", "--coll", coll.replace("-", ""), "--algo", algo, "--ranks", str(group),
             "--size", "1M", "-o", alg])
        sysf = system(d, len(sizes), **{coll + "-implementation-custom": [alg]})
        return prefix, sysf, network(d, kinds, sizes), []
    return Case(name, expect, make, sizes)


def micro_case(name, expect, coll, npus, kinds, sizes, **sysover):
    def make(d):
        prefix = os.path.join(d, "m")
        run([CHAKRA, "gen", "microbench", "--coll", coll, "--npus", str(npus), "--size", "1M", "-o", prefix])
        return prefix, system(d, len(sizes), **sysover), network(d, kinds, sizes), []
    return Case(name, expect, make, sizes)


def dlrm_case(name, expect, npus, kinds, sizes):
    def make(d):
        prefix = os.path.join(d, "dlrm")
        run([CHAKRA, "gen", "dlrm", "--npus", str(npus), "--batch", str(4 * npus), "-o", prefix])
        return prefix, system(d, len(sizes)), network(d, kinds, sizes), []
    return Case(name, expect, make, sizes)


def pack_case(name, expect, npus, make, kinds, sizes, bw=None, lat=None, extra=(), **sysover):
    """Ranks written as JSON Lines (make(r) -> nodes) and packed."""
    def build(d):
        for r in range(npus):
            jl = os.path.join(d, "t.%d.jsonl" % r)
            with open(jl, "w") as f:
                f.write(json.dumps({"version": "1.0.0"}) + "\n")
                for n in make(r):
                    f.write(json.dumps(n) + "\n")
            run([CHAKRA, "pack", jl, "-o", os.path.join(d, "t.%d.et" % r)])
        return os.path.join(d, "t"), system(d, len(sizes), **sysover), network(d, kinds, sizes, bw, lat), list(extra)
    return Case(name, expect, build, sizes)


def comp(i, us, deps=(), cpu=False):
    return {"id": str(i), "name": "c%d" % i, "type": "COMP_NODE", "duration_micros": str(us), "data_deps": list(map(str, deps)),
            "attr": [{"name": "is_cpu_op", "bool_val": cpu}]}


def p2p(i, kind, me, peer, size, tag=1, deps=(), peer_kind="int64_val"):
    send = kind == "send"
    attrs = [{"name": "is_cpu_op", "bool_val": False}, {"name": "comm_size", "int64_val": str(size)},
             {"name": "comm_tag", "int64_val": str(tag)},
             {"name": "comm_src", "int64_val": str(me if send else peer)} if send else
             {"name": "comm_src", peer_kind: peer if peer_kind == "double_val" else str(peer)},
             {"name": "comm_dst", peer_kind: peer if peer_kind == "double_val" else str(peer)} if send else
             {"name": "comm_dst", "int64_val": str(me)}]
    return {"id": str(i), "name": "%s%d" % (kind, i), "type": "COMM_SEND_NODE" if send else "COMM_RECV_NODE",
            "data_deps": list(map(str, deps)), "attr": attrs}


def ring_exchange(r, n=4, size=0, odd=None):
    """Send to the next rank and receive from the previous one at t = 0,
    while a 10 us GPU compute runs. The receipt readies a 3 us CPU node (id
    4) with a 1 us GPU node after it, the compute a 7 us CPU node (id 5):
    when both happen at one instant, whichever the simulator takes first
    gets the CPU, and the ranks of the class differ (their neighbours' ids
    order the instant's events differently)."""
    kind = "double_val" if odd is not None and r == odd else "int64_val"
    return [comp(1, 10), p2p(2, "send", r, (r + 1) % n, size, peer_kind=kind), p2p(3, "recv", r, (r - 1) % n, size),
            comp(4, 3, [3], cpu=True), comp(5, 7, [1], cpu=True), comp(6, 1, [4])]


# Rank numbering of chakra synth: dp fastest, then tp, sp, pp (and ep), so a
# network [dp, tp, pp] puts each group on one dimension.
QUICK = [
    synth_case("dense 1f1b dp4 tp2 pp2, 3-D ring/FC/switch", "reduced", job(4, 2, 2),
               ["Ring", "FullyConnected", "Switch"], [4, 2, 2]),
    synth_case("dense gpipe dp4 tp2 pp4, 3-D", "reduced", job(4, 2, 4, schedule="gpipe"),
               ["Switch", "Ring", "Ring"], [4, 2, 4]),
    synth_case("dense no schedule dp2 tp2 pp2", "reduced", job(2, 2, 2, schedule="none"),
               ["Ring", "Ring", "Ring"], [2, 2, 2]),
    synth_case("fsdp dp4 tp2 pp2", "reduced", job(4, 2, 2, "--weight-sharded", "1"),
               ["Ring", "FullyConnected", "Switch"], [4, 2, 2]),
    synth_case("sequence parallel dp2 tp2 sp2 pp2, 2-D", "reduced", job(2, 2, 2, "--sp", "2"),
               ["Ring", "Switch"], [8, 2]),
    synth_case("moe dp2 tp2 ep2 pp2", "reduced",
               job(2, 2, 2, "--model-type", "moe", "--ep", "2", "--experts", "4", "--kexperts", "2"),
               ["Ring", "Ring", "Switch"], [4, 2, 2]),
    synth_case("llama mixed precision kvhead 4 dp2 tp2 pp2", "reduced",
               job(2, 2, 2, "--model-type", "llama", "--mixed-precision", "1", "--kvhead", "4"),
               ["FullyConnected", "FullyConnected", "Ring"], [2, 2, 2]),
    synth_case("tp only (tpsp 0) with recompute dp4 tp2 pp2", "reduced",
               job(4, 2, 2, "--tpsp", "0", "--activation-recompute", "1"), ["Ring", "Switch", "Switch"], [4, 2, 2]),
    synth_case("2-D: dp x tp on one Switch, pp on a Ring", "reduced", job(4, 2, 4), ["Switch", "Ring"], [8, 4]),
    synth_case("1-D switch dp8", "reduced", job(8, 1, 1), ["Switch"], [8]),
    synth_case("direct algorithm dp4 tp4 pp2", "reduced", job(4, 4, 2), ["Ring", "FullyConnected", "Switch"],
               [4, 4, 2], algo="direct"),
    synth_case("halving-doubling dp4 tp2 pp2", "reduced", job(4, 2, 2), ["Switch", "Switch", "Ring"], [4, 2, 2],
               algo="halvingDoubling"),
    synth_case("baseline (not localBWAware), 2 chunks active", "reduced", job(4, 2, 2),
               ["Ring", "FullyConnected", "Switch"], [4, 2, 2], **{"collective-optimization": "baseline",
                                                                   "active-chunks-per-dimension": 2}),
    synth_case("2 queues per dimension, 8 splits", "reduced", job(4, 2, 2), ["Ring", "Ring", "Switch"], [4, 2, 2],
               extra=["--num-queues-per-dim=2"], **{"preferred-dataset-splits": 8}),
    synth_case("rendezvous protocol", "reduced", job(4, 2, 2), ["Ring", "FullyConnected", "Switch"], [4, 2, 2],
               extra=["--rendezvous-protocol=true"]),
    synth_case("multidim-p2p full", "reduced", job(4, 2, 2), ["Ring", "FullyConnected", "Switch"], [4, 2, 2],
               extra=["--multidim-p2p=full"]),
    synth_case("roofline-enabled", "reduced", job(4, 2, 2), ["Ring", "FullyConnected", "Switch"], [4, 2, 2],
               **{"roofline-enabled": 1, "peak-perf": 900}),
    synth_case("replay-only", "reduced", job(4, 2, 2), ["Ring", "Ring", "Ring"], [4, 2, 2], **{"replay-only": 1}),
    synth_case("pp8 on a ring (stage neighbours 1 hop)", "reduced", job(2, 1, 8), ["Switch", "Ring"], [2, 8]),
    custom_case("custom ring all-reduce on the dp and tp groups", "reduced", "all-reduce", "ring", 4, 32,
                job(4, 4, 2), ["Ring", "FullyConnected", "Switch"], [4, 4, 2]),
    custom_case("custom direct all-gather (not one ET but for peers): every NPU", "two positions talk",
                "all-gather", "direct", 4, 16, job(2, 4, 2), ["Switch", "Switch", "Ring"], [2, 4, 2]),
    custom_case("custom hd reduce-scatter", "reduced", "reduce-scatter", "hd", 4, 16, job(4, 4, 1),
                ["Switch", "Switch"], [4, 4]),
    micro_case("microbenchmark all-reduce 64 NPUs, 3-D localBWAware", "every rank is a class of its own",
               "all_reduce", 64, ["Ring", "Ring", "Ring"], [4, 4, 4]),
    dlrm_case("dlrm 8 ranks: global all-to-all over two classes", "different classes", 8, ["Switch"], [8]),
    # tp-first placement (Megatron's) on 4-GPU switch nodes, the suite's kind
    # of system (localBWAware, 4 splits, 2 chunks active, roofline)
    synth_case("tp-first dp4 tp4 pp2 on switch nodes, 4 splits x 2 chunks", "reduced",
               job(4, 4, 2, "--rank-order", "tp-first"), ["Switch", "Switch"], [4, 8], bw=[400.0, 50.0],
               lat=[936.25, 3000.0], **{"active-chunks-per-dimension": 2, "preferred-dataset-splits": 4,
                                       "roofline-enabled": 1, "peak-perf": 989}),
    shared_case("shared form, tp-first moe dp2 tp2 ep2 pp2", "reduced",
                job(2, 2, 2, "--model-type", "moe", "--ep", "2", "--experts", "4", "--kexperts", "2",
                    "--rank-order", "tp-first"), ["Switch", "Switch"], [4, 4]),
    # must fall back, still exact
    synth_case("dp ring crossing a slower dimension", "do not all take the same time", job(4, 1, 2),
               ["Ring", "Ring"], [2, 4], bw=[100.0, 10.0], lat=[100.0, 1000.0]),
    synth_case("mesh dimension under a group ring", "do not all take the same time", job(4, 2, 2),
               ["Mesh", "Switch", "Switch"], [4, 2, 2]),
    synth_case("aware model", "congestion-aware", job(4, 2, 2), ["Ring", "FullyConnected", "Switch"], [4, 2, 2],
               extra=["--network-model=aware"]),
    synth_case("double binary tree on the groups", "double binary tree", job(4, 1, 2), ["Switch", "Switch"], [4, 2],
               **{"all-reduce-implementation": ["doubleBinaryTree"]}),
    synth_case("shared remote memory pool", "remote memory", job(4, 2, 2), ["Ring", "Ring", "Ring"], [4, 2, 2],
               memory={"memory-type": "MEMORY_POOL", "remote-mem-latency": 100, "remote-mem-bw": 50}),
    synth_case("3-D 4x4x2 rings", "reduced", job(4, 4, 2), ["Ring", "Ring", "Ring"], [4, 4, 2]),
    # hand-built: a ring exchange on a 4-NPU ring
    pack_case("ring exchange, messages arriving as computes end later", "reduced", 4, ring_exchange, ["Ring"], [4],
              bw=[1.0], lat=[3000.0]),
    # the message lands at 10,000 ns as the 10 us compute ends: two events
    # of that instant each ready a GPU node, whose order decides which runs
    pack_case("ring exchange, arrival and compute end at one instant", "competed for a hardware slot", 4,
              ring_exchange, ["Ring"], [4], bw=[1000.0], lat=[10000.0]),
    pack_case("a rank whose peer is written as a double: a class of its own, so no symmetry", "is not in the class", 4,
              lambda r: ring_exchange(r, odd=3), ["Ring"], [4], bw=[1.0], lat=[3000.0]),
    # shared trace sets: the set's classes, and its per-rank files' found while loading
    shared_case("shared form: dense 1f1b dp4 tp2 pp2, 3-D", "reduced", job(4, 2, 2),
                ["Ring", "FullyConnected", "Switch"], [4, 2, 2]),
    shared_case("shared form: moe dp2 tp2 ep2 pp2", "reduced",
                job(2, 2, 2, "--model-type", "moe", "--ep", "2", "--experts", "4", "--kexperts", "2"),
                ["Ring", "Ring", "Switch"], [4, 2, 2]),
    shared_case("shared form: gpipe dp2 tp2 sp2 pp2, 2-D", "reduced", job(2, 2, 2, "--sp", "2", schedule="gpipe"),
                ["Ring", "Switch"], [8, 2]),
    # collectives expanded into sends and receives (coll expand, per class)
    shared_case("coll expand ring, tp2 pp2 (shared form)", "reduced", job(1, 2, 2), ["Switch", "Ring"], [2, 2],
                expand=["ring"]),
    # (its per-rank files' classes found while loading are the 2 stages, not
    # a symmetry: every NPU, the same figures)
    shared_case("coll expand direct, dp4 tp2 pp2: classes per place", "reduced", job(4, 2, 2),
                ["Switch", "FullyConnected", "Ring"], [4, 2, 2], expand=["direct"]),
    # the ring's last member meets its own send's end and its receipt at one
    # instant in the other order (rank 11 of 16 finishes 140 ns earlier in
    # the full run): must fall back
    shared_case("coll expand ring, dp4 tp2 pp2", "competed for a hardware slot", job(4, 2, 2),
                ["Switch", "FullyConnected", "Ring"], [4, 2, 2], expand=["ring"]),
    shared_case("coll expand hd then ring, dp4 tp2 pp2", "competed for a hardware slot", job(4, 2, 2),
                ["Switch", "FullyConnected", "Ring"], [4, 2, 2], expand=["hd", "ring"], per_rank=False),
]

LARGE_CASES = [
    synth_case("dense 1f1b dp64 tp8 pp16 (8,192 ranks)", "reduced",
               job(64, 8, 16, batch=256),
               ["Ring", "FullyConnected", "Switch"], [64, 8, 16]),
    synth_case("moe dp16 tp4 ep4 pp8 (2,048 ranks)", "reduced",
               job(16, 4, 8, "--model-type", "moe", "--ep", "4", "--experts", "8", "--kexperts", "2"),
               ["Ring", "Switch", "Switch"], [16, 16, 8]),
    synth_case("fsdp dp256 tp4 pp4 (4,096 ranks), direct", "reduced", job(256, 4, 4, "--weight-sharded", "1"),
               ["Switch", "FullyConnected", "Ring"], [256, 4, 4], algo="direct"),
    synth_case("gpipe dp32 tp8 pp32 (8,192 ranks), 2-D", "reduced", job(32, 8, 32, schedule="gpipe"),
               ["Switch", "Ring"], [256, 32]),
    shared_case("shared form: dense 1f1b dp64 tp8 pp16 (8,192 ranks)", "reduced", job(64, 8, 16, batch=256),
                ["Switch", "FullyConnected", "Ring"], [64, 8, 16], per_rank=False),
    shared_case("coll expand ring, tp8 pp16 (128 ranks): falls back", "competed for a hardware slot", job(1, 8, 16),
                ["FullyConnected", "Ring"], [8, 16], expand=["ring"], per_rank=False),
    shared_case("shared form: tp-first dp32 tp8 pp16 (4,096 ranks) on 8-GPU switch nodes", "reduced",
                job(32, 8, 16, "--rank-order", "tp-first", batch=128), ["Switch", "Switch"], [8, 512], per_rank=False,
                **{"active-chunks-per-dimension": 2, "preferred-dataset-splits": 4}),
]


def commands_take_symmetry():
    """chakra sweep --symmetry and --vary symmetry=..., chakra validate
    --symmetry: the same figures either way (sweep's events and messages
    are the run's own)."""
    d = tempfile.mkdtemp(prefix="sym-", dir=BASE)
    problems = []
    w = os.path.join(d, "w")
    run([CHAKRA, "synth", "-q", "--shared", "-o", w] + job(4, 2, 2))
    sysf, net = system(d, 3), network(d, ["Ring", "FullyConnected", "Switch"], [4, 2, 2])

    def sweep(*more):
        out = os.path.join(d, "t.json")
        p = run([CHAKRA, "sweep", "-q", "--workload", w, "--system", sysf, "--network", net, "--vary",
                 "bandwidth=50,100", "--vary", "network-model=unaware", "-o", out] + list(more))
        if p.returncode:
            raise RuntimeError("sweep %s: %s" % (" ".join(more), p.stderr))
        rows = json.load(open(out))
        rows = rows["rows"] if isinstance(rows, dict) else rows
        return [{k: v for k, v in r.items() if not re.search("events|messages|wall|seconds|config", k)} for r in rows]

    off, auto = sweep("--symmetry", "off"), sweep("--symmetry", "auto")
    if off != auto or len(off) != 2:
        problems.append("sweep --symmetry off and auto differ: %s / %s" % (off, auto))
    both = sweep("--vary", "symmetry=auto,off")
    if len(both) != 4 or both[0:4:2] != [r for r in both[1:4:2]]:
        problems.append("sweep --vary symmetry=auto,off: the rows differ: %s" % both)
    p = subprocess.run([CHAKRA, "sweep", "-q", "--workload", w, "--system", sysf, "--network", net, "--symmetry", "off",
                        "--vary", "symmetry=auto"], capture_output=True, text=True)
    if p.returncode != 2 or "symmetry" not in p.stderr:
        problems.append("sweep --symmetry off --vary symmetry=auto: exit %d, %s" % (p.returncode, p.stderr))
    val = [run([CHAKRA, "validate", w, "--system-configuration", sysf, "--network-configuration", net,
                "--network-model", "unaware", "--symmetry", m]) for m in ("off", "auto")]
    if val[0].stdout != val[1].stdout or val[0].returncode != val[1].returncode or val[0].returncode:
        problems.append("validate --symmetry off and auto differ: %r / %r" % (val[0].stdout, val[1].stdout))
    shutil.rmtree(d)
    return problems


def main():
    global BASE
    BASE = tempfile.mkdtemp(prefix="chakra-symmetry.")
    bad = done = 0
    cases = LARGE_CASES if LARGE else QUICK
    if LARGE and os.environ.get("CHAKRA_SANITIZED") == "1":
        cases = [c for c in LARGE_CASES if c.ranks <= 2048]
        print("sanitizer build (CHAKRA_SANITIZED=1): only the %d large cases of at most 2,048 ranks" % len(cases))
    try:
        for c in cases:
            if ONLY and ONLY not in c.name:
                continue
            try:
                problems, why, npus, classes = check(c)
            except RuntimeError as e:
                problems, why, npus, classes = [str(e)], "-", 0, 0
            ok = not problems
            bad += not ok
            done += 1
            print("%s: %s (%d ranks, %d classes): %s" % ("ok" if ok else "FAIL", c.name, npus, classes, why))
            for p in problems:
                print("    " + p)
        if not LARGE and not ONLY:
            problems = commands_take_symmetry()
            bad += bool(problems)
            done += 1
            print("%s: sweep and validate take --symmetry" % ("FAIL" if problems else "ok"))
            for p in problems:
                print("    " + p)
    finally:
        shutil.rmtree(BASE)
    print("%d of %d cases failed" % (bad, done) if bad else "%d cases passed" % done)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""chakra coll expand on shared workloads (issue 23 item 3), through the CLI:

  * a shared workload (synth --shared: a grid) expands into the shared form,
    and that output unshared is byte for byte the expansion of the per-rank
    workload, at several shapes: dense dp x tp x pp, dp 3 (ring blocks of
    unequal size), hd, direct and tree (algorithms that depend on the rank's
    place in its group), --overlap, MoE, sp, FSDP, a rule naming a group, and
    algorithm ETs (a ring and a halving-doubling);
  * the output keeps the input's classes where every rank runs its
    representative's DAG rotated (a ring of equal blocks), and makes an axis a
    class axis, saying so, where the algorithm depends on the place;
  * a table-layout set (chakra share) is expanded into per-rank files, the
    same bytes again;
  * tags: groups that share two ranks get disjoint tags, groups that share
    none may use the same ones (ranks of one class then write the same);
  * an interrupted shared expand leaves nothing behind.

usage: expand_shared.py CHAKRA_BINARY"""
import filecmp
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

CHAKRA = os.path.abspath(sys.argv[1])
SMALL = ["--num-stacks", "2", "--dmodel", "64", "--dff", "128", "--head", "4", "--kvhead", "2", "--seq", "16",
         "--dvocal", "100"]
FAILED = []


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)[-600:]))
    if not cond:
        FAILED.append(name)


def run(args, cwd):
    return subprocess.run([CHAKRA] + [str(a) for a in args], capture_output=True, text=True, cwd=cwd)


def ranks_of(d, prefix):
    return len(glob.glob(os.path.join(d, prefix + ".*.et"))) - len(glob.glob(os.path.join(d, prefix + ".class*.et")))


# (name, algo rules, synth options, classes expected in the output, axes made class axes)
SHAPES = [
    ("dense ring", ["ring"], ["--dp", "4", "--tp", "2", "--pp", "2", "--batch", "8", "--micro-batch", "4"], 2, []),
    ("dp 3: ring blocks of unequal size", ["ring"],
     ["--dp", "3", "--tp", "2", "--pp", "2", "--batch", "6", "--micro-batch", "3"], 6, ["dp"]),
    ("hd", ["hd"], ["--dp", "4", "--tp", "2", "--pp", "2", "--batch", "8", "--micro-batch", "4"], 8, ["dp"]),
    ("direct", ["direct"], ["--dp", "4", "--tp", "2", "--pp", "2", "--batch", "8", "--micro-batch", "4"], 8, ["dp"]),
    ("tree all-reduce", ["allreduce=tree", "ring"],
     ["--dp", "4", "--tp", "2", "--pp", "2", "--batch", "8", "--micro-batch", "4"], 16, ["dp", "tp"]),
    ("ring --overlap", ["ring", "--overlap"],
     ["--dp", "4", "--tp", "2", "--pp", "2", "--batch", "8", "--micro-batch", "4"], 2, []),
    ("MoE", ["ring"], ["--model-type", "moe", "--experts", "4", "--dp", "2", "--tp", "2", "--ep", "2", "--pp", "2",
                       "--batch", "4", "--micro-batch", "2"], 2, []),
    ("sp", ["ring"], ["--dp", "2", "--tp", "2", "--sp", "2", "--pp", "2", "--batch", "4", "--micro-batch", "2"], 2, []),
    ("FSDP", ["ring"], ["--dp", "4", "--tp", "2", "--weight-sharded", "1", "--batch", "8", "--micro-batch", "4"], 1,
     []),
    ("a rule naming group 5", ["@5=direct", "ring"],
     ["--dp", "4", "--tp", "2", "--pp", "2", "--batch", "8", "--micro-batch", "4"], 16, None),
    ("algorithm ETs: ring", ["LIB:ring", "ring"],
     ["--dp", "4", "--tp", "2", "--pp", "2", "--batch", "8", "--micro-batch", "4"], 2, []),
    ("algorithm ETs: hd", ["LIB:hd", "ring"],
     ["--dp", "4", "--tp", "2", "--pp", "2", "--batch", "8", "--micro-batch", "4"], 8, ["dp"]),
]


def algo_args(rules, d):
    out = []
    for r in rules:
        if r == "--overlap":
            out.append(r)
            continue
        if r.startswith("LIB:"):
            algo = r[4:]
            lib = os.path.join(d, "lib" + algo)
            p = run(["coll", "gen", "--coll", "allreduce", "--algo", algo, "--ranks", "4", "--size", "1M", "-o", lib], d)
            assert p.returncode == 0, p.stderr
            r = lib
        out += ["--algo", r]
    return out


def test_shapes():
    for name, rules, opts, classes, promoted in SHAPES:
        with tempfile.TemporaryDirectory() as d:
            algo = algo_args(rules, d)
            for args in (["-o", "s", "--shared"], ["-o", "p"]):
                p = run(["synth", "-q"] + SMALL + opts + args, d)
                assert p.returncode == 0, p.stderr
            xs = run(["coll", "expand"] + algo + ["-o", "xs", "s"], d)
            xp = run(["coll", "expand"] + algo + ["-o", "xp", "p"], d)
            check("%s: both expand" % name, xs.returncode == 0 and xp.returncode == 0, xs.stderr + xp.stderr)
            if xs.returncode or xp.returncode:
                continue
            man = json.load(open(os.path.join(d, "xs.set.json")))
            n = ranks_of(d, "p")
            check("%s: the output is the shared form, %d classes for %d ranks (got %d)" % (name, classes, n,
                                                                                        len(man["classes"])),
                  len(man["classes"]) == classes and ranks_of(d, "xs") == 0 and man["ranks"] == n)
            if promoted is not None:
                class_axes = set(man["layout"]["class_axes"]) - {"pp"}
                said = {a for a in ("dp", "tp") if "note: axis %s becomes a class axis" % a in xs.stderr}
                check("%s: class axes %s beside pp, each said once" % (name, promoted),
                      class_axes == set(promoted) == said, (man["layout"]["class_axes"], xs.stderr))
            u = run(["unshare", "xs", "-o", "xu"], d)
            same = u.returncode == 0 and all(
                filecmp.cmp(os.path.join(d, "xu.%d.et" % r), os.path.join(d, "xp.%d.et" % r), shallow=False)
                for r in range(n))
            check("%s: unshared, byte for byte the per-rank expansion (%d ranks)" % (name, n), same, u.stderr)
            if name == "dense ring":
                s = run(["share", "p", "-o", "t"], d)  # a table layout
                x = run(["coll", "expand"] + algo + ["-o", "xt", "t"], d)
                same = s.returncode == 0 and x.returncode == 0 and all(
                    filecmp.cmp(os.path.join(d, "xt.%d.et" % r), os.path.join(d, "xp.%d.et" % r), shallow=False)
                    for r in range(n))
                check("table layout: expanded into per-rank files, the same bytes, said so",
                      same and "table layout is expanded rank by rank" in x.stderr, s.stderr + x.stderr)


def coll_node(i, size, pg):
    return {"id": str(i), "name": "ar%d" % i, "type": "COMM_COLL_NODE",
            "attr": [{"name": "is_cpu_op", "bool_val": False}, {"name": "comm_type", "int64_val": "0"},
                     {"name": "comm_size", "int64_val": str(size)}, {"name": "pg_name", "string_val": pg}]}


def test_tags_by_shared_pairs():
    with tempfile.TemporaryDirectory() as d:
        groups = {"1": [0, 1], "3": [2, 3], "2": [0, 1, 2, 3]}
        json.dump(groups, open(os.path.join(d, "w.json"), "w"))
        for r in range(4):
            pair = "1" if r < 2 else "3"
            jl = os.path.join(d, "w.%d.jsonl" % r)
            with open(jl, "w") as f:
                f.write(json.dumps({"version": "0.0.4"}) + "\n")
                n0 = coll_node(0, 4096, pair)
                n1 = coll_node(1, 4096, "2")
                n1["data_deps"] = ["0"]
                f.write(json.dumps(n0) + "\n" + json.dumps(n1) + "\n")
            p = run(["pack", jl, "-o", "w.%d.et" % r], d)
            assert p.returncode == 0, p.stderr
        p = run(["coll", "expand", "--algo", "ring", "-o", "x", "w"], d)
        check("tags: expands", p.returncode == 0, p.stderr)
        tags = {}
        for r in range(4):
            j = run(["jsonize", "x.%d.et" % r], d)
            for line in j.stdout.splitlines()[1:]:
                n = json.loads(line)
                a = {x["name"]: x for x in n.get("attr", [])}
                if "comm_tag" in a:
                    on = n["name"].split("/")[0]
                    tags.setdefault((r, on), set()).add(int(a["comm_tag"]["int32_val"]))
        check("tags: the pair group and the world (sharing ranks 0 and 1) have disjoint tags",
              not tags[(0, "coll0")] & tags[(0, "coll1")], tags)
        check("tags: the two pair groups (sharing no rank) use the same tags",
              tags[(0, "coll0")] == tags[(2, "coll0")], tags)
        v = run(["validate", "--comm-group-configuration", "w.json", "x"], d)
        check("tags: the expansion validates (every message pairs up)", v.returncode == 0, v.stdout + v.stderr)


def hidden_or_partial(d):
    return sorted(f for f in os.listdir(d) if f.startswith(".") or f.startswith("x."))


def test_interrupted_shared_expand_leaves_nothing():
    with tempfile.TemporaryDirectory() as d:
        p = run(["synth", "-q", "--shared", "--num-stacks", "8", "--dmodel", "1024", "--dff", "4096", "--head", "16",
                 "--kvhead", "8", "--seq", "512", "--dvocal", "1000", "--dp", "512", "--tp", "2", "--pp", "8",
                 "--batch", "4096", "--micro-batch", "512", "-o", "s"], d)
        assert p.returncode == 0, p.stderr
        before = sorted(os.listdir(d))
        for sig in (signal.SIGINT, signal.SIGTERM):
            proc = subprocess.Popen([CHAKRA, "coll", "expand", "--algo", "ring", "--threads", "2", "-o", "x", "s"],
                                    cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.time() + 60
            while proc.poll() is None and time.time() < deadline and not any(
                    f.startswith(".x.") for f in os.listdir(d)):
                time.sleep(0.005)
            proc.send_signal(sig)
            rc = proc.wait()
            check("interrupted shared expand (signal %d): died of it, nothing left (%s)" % (sig, hidden_or_partial(d)),
                  rc == -sig and sorted(os.listdir(d)) == before, rc)


def main():
    test_shapes()
    test_tags_by_shared_pairs()
    test_interrupted_shared_expand_leaves_nothing()
    print("%d failed" % len(FAILED))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""validate_by_class.py - `chakra validate` checks a shared grid set
(`chakra synth --shared`) by class and `--per-rank` checks every rank: on
several synth shapes (dense, MoE with --ep, pp 1 and more, sp 2) both pass
with the same rank and node counts and the summary says which was used; on
templates broken through jsonize and pack (a receive dropped, a send's size
or tag changed, a dependency cycle) both refuse the set (exit 1, errors
counted); an unshared copy is checked per rank. test_vclass (unit) pins the
finer verdicts: translated peers, groups across classes, deadlocks.

Usage: validate_by_class.py CHAKRA SOURCE_DIR
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hcheck import check, finish  # noqa: E402

CHAKRA = sys.argv[1]
SMALL = ["--num-stacks", "3", "--dmodel", "256", "--dff", "512", "--head", "4", "--kvhead", "2", "--seq", "64",
         "--dvocal", "1000"]
SHAPES = {
    "dense": ["--dp", "4", "--tp", "2", "--pp", "2", "--batch", "16", "--micro-batch", "8", "--schedule", "1f1b"],
    "moe": ["--model-type", "moe", "--dp", "2", "--tp", "2", "--pp", "2", "--ep", "2", "--batch", "8",
            "--micro-batch", "4", "--schedule", "1f1b"],
    "pp1": ["--dp", "4", "--tp", "2", "--batch", "8"],
    "sp": ["--dp", "2", "--tp", "2", "--sp", "2", "--pp", "2", "--batch", "8", "--micro-batch", "4",
           "--schedule", "gpipe"],
    "pp3": ["--dp", "3", "--pp", "3", "--batch", "12", "--micro-batch", "6", "--schedule", "1f1b"],
}
BY_CLASS = re.compile(r"^(\d+) rank\(s\) in (\d+) class\(es\), checked by class: (\d+) node\(s\): (\d+) error\(s\)")
PER_RANK = re.compile(r"^(\d+) file\(s\), (\d+) node\(s\): (\d+) error\(s\)")


def run(*args):
    return subprocess.run([CHAKRA] + list(args), capture_output=True, text=True)


def validate(prefix):
    """Both ways: (exit, ranks, classes, nodes, errors) by class, then per rank."""
    c, r = run("validate", "-q", prefix), run("validate", "-q", "--per-rank", prefix)
    mc, mr = BY_CLASS.match(c.stdout.strip()), PER_RANK.match(r.stdout.strip())
    check(mc and mr, "%s: summaries %r and %r" % (prefix, c.stdout + c.stderr, r.stdout + r.stderr))
    if not (mc and mr):
        return None, None
    return ((c.returncode, int(mc[1]), int(mc[2]), int(mc[3]), int(mc[4])),
            (r.returncode, int(mr[1]), 0, int(mr[2]), int(mr[3])))


def template(prefix, cls):
    """Class cls's template as a list of JSON documents."""
    p = run("jsonize", "%s.class%d.et" % (prefix, cls))
    check(p.returncode == 0, "jsonize: " + p.stderr)
    return [json.loads(line) for line in p.stdout.splitlines()]


def write_template(d, prefix, cls, docs):
    src = os.path.join(d, "edit.jsonl")
    with open(src, "w") as f:
        f.write("".join(json.dumps(x) + "\n" for x in docs))
    p = run("pack", "-q", "-o", "%s.class%d.et" % (prefix, cls), src)
    check(p.returncode == 0, "pack: " + p.stderr)


def attr(node, name):
    return next(a for a in node["attr"] if a["name"] == name)


def first(docs, kind):
    return next(x for x in docs[1:] if x.get("type") == kind)


def drop_recv(docs):
    gone = first(docs, "COMM_RECV_NODE").get("id", "0")
    out = [x for x in docs if x.get("type") != "COMM_RECV_NODE" or x.get("id", "0") != gone]
    for x in out[1:]:
        for deps in ("data_deps", "ctrl_deps"):
            if gone in x.get(deps, []):
                x[deps] = [d for d in x[deps] if d != gone]
    return out


def bigger_send(docs):
    a = attr(first(docs, "COMM_SEND_NODE"), "comm_size")
    a["int64_val"] = str(int(a["int64_val"]) * 2)
    return docs


def other_tag(docs):
    attr(first(docs, "COMM_SEND_NODE"), "comm_tag")["int32_val"] += 1000
    return docs


def cycle(docs):
    """The first node with a parent also becomes its parent's parent."""
    child = next(x for x in docs[1:] if x.get("data_deps"))
    parent = next(x for x in docs[1:] if x.get("id", "0") == child["data_deps"][0])
    parent.setdefault("data_deps", []).append(child["id"])
    return docs


with tempfile.TemporaryDirectory() as d:
    for name, shape in SHAPES.items():
        prefix = os.path.join(d, name)
        p = run("synth", "-q", *SMALL, *shape, "--shared", "-o", prefix)
        if not check(p.returncode == 0, "synth %s: %s" % (name, p.stderr)):
            continue
        c, r = validate(prefix)
        if c is None:
            continue
        classes = len(json.load(open(prefix + ".set.json"))["classes"])
        check(c[0] == 0 and c[4] == 0 and c[2] == classes, "%s: by class %r" % (name, c))
        check(r[0] == 0 and r[4] == 0, "%s: per rank %r" % (name, r))
        check(c[1] == r[1] and c[3] == r[3], "%s: the same ranks and nodes both ways: %r %r" % (name, c, r))

    base = os.path.join(d, "dense")
    for what, cls, edit in (("a receive dropped", 1, drop_recv), ("a send twice the size", 0, bigger_send),
                            ("a send's tag changed", 1, other_tag), ("a dependency cycle", 0, cycle)):
        broken = os.path.join(d, "broken")
        p = run("synth", "-q", *SMALL, *SHAPES["dense"], "--shared", "-o", broken)
        write_template(d, broken, cls, edit(template(broken, cls)))
        c, r = validate(broken)
        if c is None:
            continue
        check(c[0] == 1 and c[4] > 0 and r[0] == 1 and r[4] > 0 and c[4] <= r[4],
              "%s: both ways refuse it: by class %r, per rank %r" % (what, c, r))

    flat = os.path.join(d, "flat")
    p = run("unshare", "-q", "-o", flat, base)
    check(p.returncode == 0, "unshare: " + p.stderr)
    f = run("validate", "-q", flat)
    check(f.returncode == 0 and PER_RANK.match(f.stdout.strip()), "per-rank files are checked per rank: " + f.stdout)

finish()

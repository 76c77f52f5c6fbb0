#!/usr/bin/python3
"""Pins `chakra stats` and `chakra stats --json` against a two-rank workload
whose figures are counted by hand below, and the cyclic-control-deps case.

usage: stats_cli.py --chakra BIN --source-dir REPO --protoc PROTOC"""
import gzip
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import etbuild  # noqa: E402

# Rank 0, in file order (node 8 is written before node 6: one forward dep).
#   id type          dur  deps (data / ctrl)     attributes
#   1  COMP gpu      10   -                      num_ops 1000, tensor_size 64
#   2  COMP cpu       3   1
#   3  ALL_REDUCE     5   1                      1024 bytes, group ""
#   4  ALL_GATHER     2   3 / ctrl 2             256 bytes, group "tp"
#   5  SEND to 1      0   2                      100 bytes, tag 7
#   8  ALL_REDUCE     0   6 (forward)            2048 bytes
#   6  COMP gpu      20   4, 5 / ctrl 99 (absent: ignored)
#   7  MEM_LOAD       0   6                      tensor_size 32
RANK0 = [
    dict(id=1, type="COMP_NODE", dur=10, num_ops=1000, tensor_size=64),
    dict(id=2, type="COMP_NODE", dur=3, cpu=True, data=[1]),
    dict(id=3, type="COMM_COLL_NODE", dur=5, data=[1], comm_type=0, comm_size=1024),
    dict(id=4, type="COMM_COLL_NODE", dur=2, data=[3], ctrl=[2], comm_type=2, comm_size=256, pg_name="tp"),
    dict(id=5, type="COMM_SEND_NODE", data=[2], comm_dst=1, comm_size=100, comm_tag=7),
    dict(id=8, type="COMM_COLL_NODE", data=[6], comm_type=0, comm_size=2048),
    dict(id=6, type="COMP_NODE", dur=20, data=[4, 5], ctrl=[99]),
    dict(id=7, type="MEM_LOAD_NODE", data=[6], tensor_size=32),
]
# Longest chains: 1 (10) -> 3 (15) -> 4 (17) -> 6 (37); 7 and 8 add 0 and
# tie at 37, so the path ends at 6, the first node in order to reach it.
# Children: 1->{2,3} 2->{4,5} 3->{4} 4->{6} 5->{6} 6->{7,8}: leaves 7, 8.
# Edges: 8 data + ctrl 4->2 = 9; 99 is absent.
RANK0_WANT = {
    "version": "1.0.0", "schema": "1.0.2-chakra.0.0.4", "nodes": 8,
    "nodes_by_type": {"COMP_NODE": 3, "COMM_COLL_NODE": 3, "COMM_SEND_NODE": 1, "MEM_LOAD_NODE": 1},
    "collectives": {"ALL_REDUCE": {"ops": 2, "bytes": 3072}, "ALL_GATHER": {"ops": 1, "bytes": 256}},
    "send_ops": 1, "send_bytes": 100, "recv_ops": 0, "recv_bytes": 0,
    "remote_mem_ops": 1, "remote_mem_bytes": 32,
    "groups": {"": {"ops": 3, "bytes": 3172}, "tp": {"ops": 1, "bytes": 256}},
    "gpu_compute_nodes": 2, "gpu_compute_us": 30, "cpu_compute_nodes": 1, "cpu_compute_us": 3,
    "num_ops": 1000, "tensor_bytes": 64,
    "data_deps": 8, "ctrl_deps": 2, "edges": 9, "forward_deps": 1,
    "missing_ctrl_deps": 1, "self_ctrl_deps": 0, "duplicate_deps": 0, "max_deps_per_node": 2,
    "roots": 1, "leaves": 2, "critical_path_us": 37, "nodes_on_cycles": 0,
}

# Rank 1 (no schema attribute):
#   1  RECV from 0    0   -                      100 bytes, tag 7
#   2  ALL_REDUCE     4   1                      1024 bytes
#   3  ALL_GATHER     0   2                      256 bytes, group "tp"
#   4  COMP gpu      50   3, 3 (duplicate) / ctrl 4 (itself: ignored)
#   5  ALL_REDUCE     0   4                      2048 bytes
#   6  MEM_STORE      0   -                      tensor_size 8
# Chain 1 -> 2 (4) -> 3 (4) -> 4 (54) -> 5 (54): 54, ending at 4.
RANK1 = [
    dict(id=1, type="COMM_RECV_NODE", comm_src=0, comm_size=100, comm_tag=7),
    dict(id=2, type="COMM_COLL_NODE", dur=4, data=[1], comm_type=0, comm_size=1024),
    dict(id=3, type="COMM_COLL_NODE", data=[2], comm_type=2, comm_size=256, pg_name="tp"),
    dict(id=4, type="COMP_NODE", dur=50, data=[3, 3], ctrl=[4]),
    dict(id=5, type="COMM_COLL_NODE", data=[4], comm_type=0, comm_size=2048),
    dict(id=6, type="MEM_STORE_NODE", tensor_size=8),
]
RANK1_WANT = {
    "version": "1.0.0", "schema": "", "nodes": 6,
    "nodes_by_type": {"COMP_NODE": 1, "COMM_COLL_NODE": 3, "COMM_RECV_NODE": 1, "MEM_STORE_NODE": 1},
    "collectives": {"ALL_REDUCE": {"ops": 2, "bytes": 3072}, "ALL_GATHER": {"ops": 1, "bytes": 256}},
    "send_ops": 0, "send_bytes": 0, "recv_ops": 1, "recv_bytes": 100,
    "remote_mem_ops": 1, "remote_mem_bytes": 8,
    "groups": {"": {"ops": 2, "bytes": 3072}, "tp": {"ops": 1, "bytes": 256}},
    "gpu_compute_nodes": 1, "gpu_compute_us": 50, "cpu_compute_nodes": 0, "cpu_compute_us": 0,
    "num_ops": 0, "tensor_bytes": 0,
    "data_deps": 5, "ctrl_deps": 1, "edges": 4, "forward_deps": 0,
    "missing_ctrl_deps": 0, "self_ctrl_deps": 1, "duplicate_deps": 1, "max_deps_per_node": 1,
    "roots": 2, "leaves": 2, "critical_path_us": 54, "nodes_on_cycles": 0,
}
# Totals: counts summed, max_deps and critical path the larger rank's;
# receive bytes are not group traffic (counted once, at the sender).
TOTAL_WANT = {
    "ranks": 2, "nodes": 14,
    "nodes_by_type": {"MEM_LOAD_NODE": 1, "MEM_STORE_NODE": 1, "COMP_NODE": 4, "COMM_SEND_NODE": 1,
                      "COMM_RECV_NODE": 1, "COMM_COLL_NODE": 6},
    "collectives": {"ALL_REDUCE": {"ops": 4, "bytes": 6144}, "ALL_GATHER": {"ops": 2, "bytes": 512}},
    "send_ops": 1, "send_bytes": 100, "recv_ops": 1, "recv_bytes": 100,
    "remote_mem_ops": 2, "remote_mem_bytes": 40,
    "groups": {"": {"ops": 5, "bytes": 6244}, "tp": {"ops": 2, "bytes": 512}},
    "gpu_compute_nodes": 3, "gpu_compute_us": 80, "cpu_compute_nodes": 1, "cpu_compute_us": 3,
    "num_ops": 1000, "tensor_bytes": 64,
    "data_deps": 13, "ctrl_deps": 3, "edges": 13, "forward_deps": 1,
    "missing_ctrl_deps": 1, "self_ctrl_deps": 1, "duplicate_deps": 1, "max_deps_per_node": 2,
    "roots": 3, "leaves": 4, "critical_path_us": 54, "nodes_on_cycles": 0,
}

# 1 and 2 depend on each other (2 on 1 by data, 1 on 2 by control).
CYCLIC = [dict(id=1, type="COMP_NODE", dur=5, ctrl=[2]), dict(id=2, type="COMP_NODE", dur=7, data=[1])]


def run(chakra, *args):
    return subprocess.run([chakra, "stats"] + list(args), capture_output=True, text=True)


def compare(c, name, got, want):
    for k, v in want.items():
        c.check("%s: %s = %r" % (name, k, v), got.get(k) == v, "got %r" % (got.get(k),))
    extra = set(got) - set(want) - {"file"}
    c.check("%s: no unexpected keys" % name, not extra, sorted(extra))


# What validate finds, stats reports as warnings (issue: hardening 5): a
# duplicate id, a data dep on an absent id, a comm_size of -1; then one
# problem per node past the cap of 20 lines.
FLAWED = [
    dict(id=1, type="COMP_NODE", dur=4),
    dict(id=1, type="COMP_NODE", dur=6),
    dict(id=2, type="COMP_NODE", dur=1, data=[42]),
    dict(id=3, type="COMM_COLL_NODE", comm_type=0, comm_size=-1),
]
MANY = [dict(id=i, type="INVALID_NODE") for i in range(1, 31)]


def check_warnings(c, a, pb, tmp):
    bad = os.path.join(tmp, "flawed.et")
    etbuild.write(pb, bad, FLAWED)
    p, quiet = run(a.chakra, bad), run(a.chakra, "--no-checks", bad)
    v = subprocess.run([a.chakra, "validate", bad], capture_output=True, text=True)
    lines = p.stderr.splitlines()
    c.check("flawed: exit 0, statistics unchanged by the checks",
            p.returncode == 0 and p.stdout == quiet.stdout and not quiet.stderr, (p.returncode, quiet.stderr))
    for words in [("node 1", "duplicate"), ("node 2", "42"), ("node 3", "comm_size")]:
        c.check("flawed: a warning line names %s and says %s" % words,
                any(l.startswith("chakra stats: warning: " + bad) and all(w in l for w in words) for l in lines),
                p.stderr)
    problems = [l for l in v.stdout.splitlines() if ": error: " in l or ": warning: " in l]
    c.check("flawed: one warning line per problem validate reports (%d)" % len(problems),
            len([l for l in lines if l.startswith("chakra stats: warning: " + bad)]) == len(problems) > 0,
            (p.stderr, v.stdout))
    many = os.path.join(tmp, "many.et")
    etbuild.write(pb, many, MANY)
    p = run(a.chakra, many)
    lines = p.stderr.splitlines()
    c.check("30 problems: 20 lines and a count of the other 10",
            len(lines) == 21 and lines[-1] == "chakra stats: warning: 10 more problem(s) not shown; "
            "chakra validate lists them all", p.stderr)


def layout(v, depth=0):
    """The text `stats --json` has always printed for v (yajl's beautified
    layout): four-space indents, one member per line, an empty object as
    "{", an empty line, "}"."""
    ind = "    "
    if isinstance(v, dict):
        items = [ind * (depth + 1) + json.dumps(k) + ": " + layout(x, depth + 1) for k, x in v.items()]
        return "{\n" + ",\n".join(items) + "\n" + ind * depth + "}"
    if isinstance(v, list):
        items = [ind * (depth + 1) + layout(x, depth + 1) for x in v]
        return "[\n" + ",\n".join(items) + "\n" + ind * depth + "]"
    return json.dumps(v)


def main():
    a = etbuild.parse_args()
    c = etbuild.Checks()
    with tempfile.TemporaryDirectory(prefix="chakra-stats-") as tmp:
        pb = etbuild.load(a.protoc, a.source_dir, tmp)
        prefix = os.path.join(tmp, "w")
        etbuild.write(pb, prefix + ".0.et", RANK0, schema="1.0.2-chakra.0.0.4")
        etbuild.write(pb, prefix + ".1.et", RANK1)

        p = run(a.chakra, "--json", prefix)
        c.check("stats --json PREFIX exits 0", p.returncode == 0, p.stderr)
        doc = json.loads(p.stdout) if p.returncode == 0 else {"ranks": [{}, {}], "total": {}}
        c.check("two ranks from the prefix", len(doc["ranks"]) == 2, len(doc["ranks"]))
        c.check("rank files in order", [r.get("file") for r in doc["ranks"]] ==
                [prefix + ".0.et", prefix + ".1.et"], [r.get("file") for r in doc["ranks"]])
        compare(c, "rank 0", doc["ranks"][0], RANK0_WANT)
        compare(c, "rank 1", doc["ranks"][1], RANK1_WANT)
        compare(c, "total", doc["total"], TOTAL_WANT)
        c.check("stats --json: the document's layout is unchanged (four-space indents, one member a line)",
                p.stdout == layout(doc) + "\n", p.stdout)

        # The same files named one by one are the same ranks.
        p2 = run(a.chakra, "--json", prefix + ".0.et", prefix + ".1.et")
        c.check("files one by one give the same figures", p2.returncode == 0 and json.loads(p2.stdout) == doc,
                p2.stderr)

        # A gzip-compressed rank gives the same figures (the reader inflates it).
        gz = os.path.join(tmp, "g.et.gz")
        with open(prefix + ".0.et", "rb") as f, gzip.open(gz, "wb") as g:
            g.write(f.read())
        p3 = run(a.chakra, "--json", gz)
        r = json.loads(p3.stdout)["ranks"][0] if p3.returncode == 0 else {}
        r.pop("file", None)
        c.check("gzip rank 0 gives rank 0's figures", r == {k: v for k, v in doc["ranks"][0].items() if k != "file"},
                (p3.returncode, p3.stderr))

        p = run(a.chakra, prefix)
        out = p.stdout
        c.check("stats PREFIX (text) exits 0", p.returncode == 0, p.stderr)
        for line in ["rank 0: %s.0.et" % prefix, "rank 1: %s.1.et" % prefix, "total",
                     "version 1.0.0, schema 1.0.2-chakra.0.0.4", "version 1.0.0, schema (unset)",
                     "nodes           8: MEM_LOAD_NODE 1 COMP_NODE 3 COMM_SEND_NODE 1 COMM_COLL_NODE 3",
                     "collective      ALL_REDUCE           2 ops, 3072 bytes",
                     "collective      ALL_GATHER           1 ops, 256 bytes",
                     "collective      ALL_REDUCE           4 ops, 6144 bytes",
                     "point-to-point  send 1 ops, 100 bytes; recv 0 ops, 0 bytes",
                     "point-to-point  send 1 ops, 100 bytes; recv 1 ops, 100 bytes",
                     "remote memory   1 ops, 32 bytes", "remote memory   2 ops, 40 bytes",
                     "group (all)     3 ops, 3172 bytes sent", "group tp        2 ops, 512 bytes sent",
                     "compute         GPU 2 nodes, 30 us; CPU 1 nodes, 3 us; 1000 ops, 64 tensor bytes",
                     "dependencies    8 data, 2 ctrl as written; 9 edges used (1 forward); max 2 on a node; "
                     "1 roots, 2 leaves",
                     "ignored deps    1 ctrl on absent ids, 0 ctrl on self, 0 duplicates",
                     "ignored deps    0 ctrl on absent ids, 1 ctrl on self, 1 duplicates",
                     "critical path   37 us (ends at node 6)", "critical path   54 us (ends at node 4)",
                     "critical path   54 us (longest rank)"]:
            c.check("text has: " + line, line in out, out)
        one = run(a.chakra, prefix + ".1.et").stdout
        c.check("one file: no total section", "total" not in one and "rank 0: " in one, one)

        cyc = os.path.join(tmp, "cyc.et")
        etbuild.write(pb, cyc, CYCLIC)
        p = run(a.chakra, "--json", cyc)
        r = json.loads(p.stdout)["ranks"][0] if p.returncode == 0 else {}
        c.check("stats --json: empty objects keep their layout ({, empty line, })", p.returncode == 0 and
                p.stdout == layout(json.loads(p.stdout)) + "\n" and '"collectives": {\n\n' in p.stdout, p.stdout)
        c.check("cycle: exit 0, critical path null, 2 nodes on cycles",
                p.returncode == 0 and r.get("critical_path_us", 0) is None and r.get("nodes_on_cycles") == 2,
                (p.returncode, p.stderr, r))
        p = run(a.chakra, cyc)
        c.check("cycle: text says undefined and suggests --ignore-ctrl-deps",
                "critical path   undefined: 2 nodes are on dependency cycles (try --ignore-ctrl-deps)" in p.stdout,
                p.stdout)
        p = run(a.chakra, "--json", "--ignore-ctrl-deps", cyc)
        r = json.loads(p.stdout)["ranks"][0] if p.returncode == 0 else {}
        c.check("cycle with --ignore-ctrl-deps: 5 + 7 = 12 us, ctrl dep not an edge",
                r.get("critical_path_us") == 12 and r.get("nodes_on_cycles") == 0 and r.get("edges") == 1
                and r.get("ctrl_deps") == 1, r)
        p = run(a.chakra, "--ignore-ctrl-deps", cyc)
        c.check("cycle with --ignore-ctrl-deps: text names the end node",
                "critical path   12 us (ends at node 2)" in p.stdout, p.stdout)

        p = run(a.chakra, os.path.join(tmp, "absent.et"))
        c.check("missing file: exit 2, message names it",
                p.returncode == 2 and "absent.et" in p.stderr and not p.stdout, (p.returncode, p.stderr))
        bad = os.path.join(tmp, "trunc.et")
        with open(prefix + ".0.et", "rb") as f:
            data = f.read()
        with open(bad, "wb") as f:
            f.write(data[:-3])
        p = run(a.chakra, bad)
        c.check("truncated file: exit 2, message names it", p.returncode == 2 and "trunc.et" in p.stderr,
                (p.returncode, p.stderr))
        check_warnings(c, a, pb, tmp)
        p = run(a.chakra)
        c.check("no input: exit 2, saying what is expected",
                p.returncode == 2 and "expected FILE.et" in p.stderr, p.stderr)
    return c.status()


if __name__ == "__main__":
    sys.exit(main())

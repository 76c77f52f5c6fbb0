#!/usr/bin/python3
"""Pins `chakra validate`'s per-node requirements (attributes each node
type needs, is_cpu_op on communication, types outside the schema) and its
cross-rank checks: every send has exactly one
receive with the same (src, dst, tag, size), peers are ranks of the
workload, and the collectives of each group agree in order, type and size
on every member. Each failing case checks the exit status (1) and that a
problem line names the file, the node id and the problem; the passing
cases exit 0.

usage: validate_cli.py --chakra BIN --source-dir REPO --protoc PROTOC"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import etbuild  # noqa: E402


def comp(i, **kw):
    return dict(id=i, type="COMP_NODE", dur=1, **kw)


def send(i, dst, size, tag=1, **kw):
    return dict(id=i, type="COMM_SEND_NODE", comm_dst=dst, comm_size=size, comm_tag=tag, **kw)


def recv(i, src, size, tag=1, **kw):
    return dict(id=i, type="COMM_RECV_NODE", comm_src=src, comm_size=size, comm_tag=tag, **kw)


def coll(i, ctype, size, **kw):
    return dict(id=i, type="COMM_COLL_NODE", comm_type=ctype, comm_size=size, **kw)


AR, AG = 0, 2


class Case:
    def __init__(self, c, pb, base, chakra, name, ranks):
        self.c, self.name = c, name
        self.prefix = os.path.join(base, name.replace(" ", "_"))
        for r, nodes in enumerate(ranks):
            etbuild.write(pb, "%s.%d.et" % (self.prefix, r), nodes)
        p = subprocess.run([chakra, "validate", "--max-errors", "0", self.prefix], capture_output=True, text=True)
        self.rc, self.out, self.err = p.returncode, p.stdout, p.stderr
        self.lines = [l for l in self.out.splitlines() if ": error: " in l or ": warning: " in l]

    def file(self, r):
        return "%s.%d.et" % (self.prefix, r)

    def passes(self):
        self.c.check(self.name + ": exit 0, no errors", self.rc == 0 and " 0 error(s)" in self.out,
                     (self.rc, self.out, self.err))

    def fails(self, rank, node, *words, count=None):
        """Exit 1 and one error line naming rank's file and node and every word."""
        self.c.check(self.name + ": exit 1", self.rc == 1, (self.rc, self.out, self.err))
        head = "%s: node %d " % (self.file(rank), node)
        hit = [l for l in self.lines if l.startswith(head) and ": error: " in l and all(w in l for w in words)]
        self.c.check("%s: error names %s, node %d and %s" % (self.name, os.path.basename(self.file(rank)), node,
                                                               words), len(hit) == 1, self.out)
        if count is not None:
            n = sum(1 for l in self.lines if ": error: " in l)
            self.c.check("%s: %d error(s) in all" % (self.name, count), n == count, self.out)


def main():
    a = etbuild.parse_args()
    c = etbuild.Checks()
    with tempfile.TemporaryDirectory(prefix="chakra-validate-") as tmp:
        pb = etbuild.load(a.protoc, a.source_dir, tmp)

        def case(name, *ranks):
            return Case(c, pb, tmp, a.chakra, name, ranks)

        # Passing: a matched exchange both ways, then agreeing collectives.
        case("matched p2p and collectives",
             [send(1, 1, 100, tag=3), recv(2, 1, 50, tag=4), coll(3, AR, 1024, data=[1, 2]), coll(4, AG, 64, data=[3])],
             [recv(1, 0, 100, tag=3), send(2, 0, 50, tag=4), coll(3, AR, 1024, data=[1, 2]), coll(4, AG, 64, data=[3])]
             ).passes()
        # No point-to-point nodes at all (empty send and receive lists).
        case("collectives only", [coll(1, AR, 8)], [coll(1, AR, 8)], [coll(1, AR, 8)]).passes()
        case("compute only", [comp(1)], [comp(1)]).passes()
        # Two sends with the same (src, dst, tag, size) need two receives.
        case("repeated identical messages",
             [send(1, 1, 10), send(2, 1, 10, data=[1])], [recv(5, 0, 10), recv(6, 0, 10, data=[5])]).passes()
        # A group's collectives are compared only between its members.
        case("sub-group on two of three ranks",
             [coll(1, AR, 8, pg_name="tp"), coll(2, AR, 16, data=[1])],
             [coll(1, AR, 8, pg_name="tp"), coll(2, AR, 16, data=[1])],
             [coll(2, AR, 16)]).passes()
        # "" and "0" both mean all ranks.
        case("group 0 is all ranks", [coll(1, AR, 8, pg_name="0")], [coll(1, AR, 8)]).passes()

        case("unmatched send", [comp(1), send(2, 1, 100, tag=9, data=[1])], [comp(1)]
             ).fails(0, 2, "send to rank 1", "tag 9", "100 bytes", "no matching receive", count=1)
        case("unmatched receive", [comp(1)], [comp(1), recv(7, 0, 64, tag=2)]
             ).fails(1, 7, "receive from rank 0", "tag 2", "64 bytes", "no matching send", count=1)
        sz = case("size mismatch", [send(4, 1, 100)], [recv(5, 0, 200)])
        sz.fails(0, 4, "100 bytes", "no matching receive", count=2)
        sz.fails(1, 5, "200 bytes", "no matching send")
        tg = case("tag mismatch", [send(4, 1, 100, tag=1)], [recv(5, 0, 100, tag=2)])
        tg.fails(0, 4, "tag 1", "no matching receive", count=2)
        tg.fails(1, 5, "tag 2", "no matching send")
        case("one receive for two sends", [send(1, 1, 10), send(2, 1, 10, data=[1])], [recv(5, 0, 10)]
             ).fails(0, 2, "no matching receive", count=1)
        case("send to a rank outside the workload", [send(3, 5, 10)], [comp(1)]
             ).fails(0, 3, "comm_dst 5 is not a rank of this workload (0..1)")
        case("receive from a negative rank", [comp(1)], [recv(3, -1, 10)]
             ).fails(1, 3, "comm_src -1 is not a rank of this workload")
        case("send naming another rank as its source", [send(3, 1, 10, comm_src=1)], [recv(4, 0, 10)]
             ).fails(0, 3, "comm_src is 1 but this file is rank 0", count=1)

        case("collective type disagrees", [coll(1, AR, 1024)], [coll(8, AG, 1024)]
             ).fails(1, 8, "group (all ranks)", "collective #0 is ALL_GATHER of 1024 bytes",
                     "rank 0 has ALL_REDUCE of 1024 bytes (node 1)", count=1)
        case("collective size disagrees", [coll(1, AR, 1024)], [comp(1), coll(2, AR, 2048, data=[1])]
             ).fails(1, 2, "collective #0 is ALL_REDUCE of 2048 bytes", "rank 0 has ALL_REDUCE of 1024 bytes",
                     count=1)
        case("collective order disagrees",
             [coll(1, AR, 64), coll(2, AG, 64, data=[1])], [coll(1, AG, 64), coll(2, AR, 64, data=[1])]
             ).fails(1, 1, "collective #0 is ALL_GATHER", "rank 0 has ALL_REDUCE", count=1)
        # Order is dependency order, not file order: rank 1 writes them backwards.
        case("order follows the dependencies, not the file",
             [coll(1, AR, 64), coll(2, AG, 64, data=[1])], [coll(2, AG, 64, data=[1]), coll(1, AR, 64)]).passes()
        fw = Case(c, pb, tmp, a.chakra, "fewer collectives on rank 1",
                  [[coll(1, AR, 64), coll(2, AR, 64, data=[1])], [coll(1, AR, 64)],
                   [coll(1, AR, 64), coll(2, AR, 64, data=[1])]])
        c.check("fewer: exit 1", fw.rc == 1, fw.out)
        c.check("fewer: the line names rank 1's file and says fewer, at collective #1",
                any(l.startswith(fw.file(1) + ": error: ") and "group (all ranks): this rank has fewer collectives "
                    "than rank 0 (first difference at collective #1: rank 0's node 2, ALL_REDUCE of 64 bytes" in l for l in fw.lines), fw.out)
        case("more collectives on rank 1", [coll(1, AR, 64)], [coll(1, AR, 64), coll(2, AG, 32, data=[1])]
             ).fails(1, 2, "this rank has more collectives than rank 0", "collective #1", count=1)
        case("sub-group disagrees", [coll(1, AR, 8, pg_name="tp")], [coll(1, AR, 16, pg_name="tp")], [comp(1)]
             ).fails(1, 1, "group tp: collective #0 is ALL_REDUCE of 16 bytes", "rank 0 has ALL_REDUCE of 8 bytes",
                     count=1)
        # A rank with none of an all-ranks collective is still compared.
        ms = Case(c, pb, tmp, a.chakra, "all-ranks collective missing on a rank", [[coll(1, AR, 8)], [comp(1)]])
        c.check("missing all-ranks collective: exit 1 and rank 1 has fewer",
                ms.rc == 1 and any(l.startswith(ms.file(1)) and "fewer collectives than rank 0" in l
                                   for l in ms.lines), ms.out)

        # ---- one rank: what each node type needs ----
        case("collective without comm_type", [dict(id=3, type="COMM_COLL_NODE", comm_size=8)]
             ).fails(0, 3, "COMM_COLL_NODE: required attribute 'comm_type' is missing", count=1)
        case("collective without comm_size", [dict(id=3, type="COMM_COLL_NODE", comm_type=AR)]
             ).fails(0, 3, "required attribute 'comm_size' is missing", count=1)
        case("comm_type outside the enum", [coll(4, 12, 8)]
             ).fails(0, 4, "comm_type is not a CollectiveCommType value (0..9)", count=1)
        case("send without comm_dst", [dict(id=2, type="COMM_SEND_NODE", comm_size=8, comm_tag=1)]
             ).fails(0, 2, "COMM_SEND_NODE: required attribute 'comm_dst' is missing", count=1)
        case("receive without comm_size", [dict(id=2, type="COMM_RECV_NODE", comm_src=0, comm_tag=1)]
             ).fails(0, 2, "COMM_RECV_NODE: required attribute 'comm_size' is missing", count=1)
        case("memory load without tensor_size", [dict(id=6, type="MEM_LOAD_NODE")]
             ).fails(0, 6, "MEM_LOAD_NODE: required attribute 'tensor_size' is missing", count=1)
        case("collective on the CPU", [coll(5, AR, 8, cpu=True)]
             ).fails(0, 5, "communication node with is_cpu_op = true", count=1)
        # The simulator and replay refuse a type outside the schema, so
        # validate does too (it was a warning before the node vocabulary).
        case("node type outside the schema", [dict(id=9, type=9)]
             ).fails(0, 9, "node type 9 is not in the schema", count=1)
        # Warnings: exit 0, or 1 with --strict.
        for name, nodes, words in [
                ("send without comm_tag", [dict(id=2, type="COMM_SEND_NODE", comm_dst=0, comm_size=8)],
                 "required attribute 'comm_tag' is missing"),
                ("num_ops without tensor_size", [comp(7, num_ops=10)], "num_ops without tensor_size"),
                ("INVALID_NODE", [dict(id=8, type="INVALID_NODE")], "INVALID_NODE (runs as a no-op)")]:
            w = case(name, nodes)
            node = nodes[0]["id"]
            c.check(name + ": a warning naming the file and node, exit 0",
                    w.rc == 0 and any(l.startswith("%s: node %d " % (w.file(0), node)) and ": warning: " in l
                                      and words in l for l in w.lines), w.out)
            p = subprocess.run([a.chakra, "validate", "--strict", w.prefix], capture_output=True, text=True)
            c.check(name + ": --strict exits 1", p.returncode == 1, p.stdout)

        many = case("many problems", [dict(id=i, type="MEM_LOAD_NODE") for i in range(1, 6)])
        p = subprocess.run([a.chakra, "validate", "--max-errors", "2", many.prefix], capture_output=True, text=True)
        out = p.stdout.splitlines()
        c.check("--max-errors 2: two lines, then how many were not shown, then the summary",
                p.returncode == 1 and len(out) == 4 and "3 more problem line(s) not shown" in out[2]
                and out[3] == "1 file(s), 5 node(s): 5 error(s), 0 warning(s)", p.stdout)

        p = subprocess.run([a.chakra, "validate", "-q", os.path.join(tmp, "tag_mismatch")], capture_output=True,
                           text=True)
        c.check("-q: only the summary, still exit 1",
                p.returncode == 1 and p.stdout.strip().splitlines() == ["2 file(s), 2 node(s): 2 error(s), 0 warning(s)"],
                p.stdout)
    return c.status()


if __name__ == "__main__":
    sys.exit(main())

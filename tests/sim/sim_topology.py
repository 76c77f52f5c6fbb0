#!/usr/bin/python3
"""Pins `chakra sim` on the topologies of docs/topology.md beyond
ASTRA-sim's (Mesh dimensions, link-list files, inline descriptions) with
hand-computed times in both network models, and its one-line errors for bad
link-list files. Traces are built from JSON Lines with `chakra pack` (the
helpers of sim_behaviour.py), so no shared data is needed.

Units: a link of G GB/s moves G x 2^30 / 10^9 bytes per ns (50 GB/s:
53.6870912 B/ns, so 1 MiB takes 19,531.25 ns and 512 KiB 9,765.625 ns;
25 GB/s: 39,062.5 and 19,531.25 ns; 10 GB/s: 1 MiB in 97,656.25 ns).

usage: sim_topology.py CHAKRA_BINARY"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sim_behaviour as sb  # noqa: E402
from sim_behaviour import SYSTEM, Case, attr_int, check, comp  # noqa: E402

MIB = 1048576
LINE3 = "# a line of three NPUs\nnpus 3\n0 <-> 1 50 500\n1 <-> 2 50 500\n"


def send(i, dst, size, tag, deps=()):
    n = {"id": str(i), "name": "send%d" % i, "type": "COMM_SEND_NODE",
         "attr": [attr_int("comm_dst", dst, "int32_val"), attr_int("comm_size", size), attr_int("comm_tag", tag, "int32_val")]}
    if deps:
        n["data_deps"] = [str(d) for d in deps]
    return n


def recv(i, src, size, tag):
    return {"id": str(i), "name": "recv%d" % i, "type": "COMM_RECV_NODE",
            "attr": [attr_int("comm_src", src, "int32_val"), attr_int("comm_size", size), attr_int("comm_tag", tag, "int32_val")]}


def p2p_case(npus, msgs):
    """msgs: (src, dst, bytes, start_us): src computes start_us first (if > 0),
    then sends; dst posts the receive at t = 0. Ranks with nothing to do
    compute 0 us (1 ns)."""
    def make(r):
        nodes, i = [], 1
        for k, (src, dst, size, start) in enumerate(msgs):
            if src == r:
                deps = ()
                if start:
                    nodes.append(comp(i, start))
                    deps, i = (i,), i + 1
                nodes.append(send(i, dst, size, k, deps))
                i += 1
            if dst == r:
                nodes.append(recv(i, src, size, k))
                i += 1
        return nodes or [comp(1, 0)]
    c = Case(npus)
    c.ranks(make)
    return c


def finish(got):
    return {r: f for r, (f, _) in got.items()}


def both(c, network, want_unaware, want_aware, name, netname="net.txt", extra=()):
    for model, want in (("unaware", want_unaware), ("aware", want_aware)):
        p, got = c.run(*extra, network=network, netname=netname, model=model)
        check("%s (%s)" % (name, model), p.returncode == 0 and finish(got) == want,
              "%d %s != %s %s" % (p.returncode, finish(got), want, p.stderr))


# ---- a 2x2 mesh from network YAML ------------------------------------------

MESH22 = "topology: [ Mesh, Mesh ]\nnpus_count: [ 2, 2 ]\nbandwidth: [ 50.0, 25.0 ]\nlatency: [ 500.0, 700.0 ]\n"


def test_mesh_2x2_point_to_point():
    # 0 -> 3 differs in both dimensions (coordinates (0,0) -> (1,1)).
    # unaware, ASTRA-sim's rule, lowest differing dimension only:
    #   floor(500 + 19,531.25) = 20,031
    # unaware --multidim-p2p=full: floor(500 + 700 + 1 MiB / 26.8435456) =
    #   floor(1,200 + 39,062.5) = 40,262
    # aware, dimension order: 0 -> 1 on dimension 0 floor(500 + 19,531.25) =
    #   20,031, then 1 -> 3 on dimension 1 floor(700 + 39,062.5) = 39,762:
    #   59,793 (store and forward)
    c = p2p_case(4, [(0, 3, MIB, 0)])
    idle = {1: 1, 2: 1}
    both(c, MESH22, {**idle, 0: 20031, 3: 20031}, {**idle, 0: 59793, 3: 59793},
         "2x2 mesh YAML: 1 MiB 0 -> 3", netname="net.yml")
    p, got = c.run("--multidim-p2p=full", network=MESH22)
    check("2x2 mesh YAML: 1 MiB 0 -> 3, --multidim-p2p=full (unaware)", finish(got) == {**idle, 0: 40262, 3: 40262},
          "%s %s" % (got, p.stderr))


def test_mesh_2x2_native_all_reduce():
    # 1 MiB all-reduce, one chunk (splits 1), baseline: a ring all-reduce of
    # two NPUs in dimension 0, then one in dimension 1. Per phase
    # (simulator spec 6.7.1, n = 2): ep + (D + ep + R) + (D + ep), messages
    # of c/2 = 512 KiB, ep = 10, R = 3 x floor(524,288 / 1,600) = 981.
    #   dimension 0: D = floor(500 + 9,765.625) = 10,265 -> 21,541
    #   dimension 1: D = floor(700 + 19,531.25) = 20,231 -> 41,473
    # total 63,014. Aware is the same: each NPU's partner is one link away
    # and the two directions are separate links.
    system = dict(SYSTEM, **{"preferred-dataset-splits": 1, "collective-optimization": "baseline",
                             "all-reduce-implementation": ["ring", "ring"]})
    c = Case(4, system)
    c.ranks(lambda r: [{"id": "1", "name": "ar", "type": "COMM_COLL_NODE",
                        "attr": [{"name": "is_cpu_op", "bool_val": False}, attr_int("comm_type", 0), attr_int("comm_size", MIB)]}])
    want = {r: 63014 for r in range(4)}
    both(c, MESH22, want, want, "2x2 mesh YAML: native ring all-reduce, 1 MiB", netname="net.yml")


def test_inline_mesh_is_accepted():
    # mesh:2x2@50,500 is the YAML above with 50 GB/s and 500 ns in both
    # dimensions: aware 0 -> 3 = 2 x floor(500 + 19,531.25) = 40,062.
    c = p2p_case(4, [(0, 3, MIB, 0)])
    p, got = c.run(network="mesh:2x2@50,500", netname=None, model="aware")
    check("inline mesh:2x2@50,500 as --network-configuration (aware)", p.returncode == 0
          and finish(got) == {0: 40062, 1: 1, 2: 1, 3: 40062}, "%s %s" % (got, p.stderr))
    p, got = c.run(network="mesh:2x2", netname=None)
    check("inline mesh:2x2 without @BW,LAT: one-line error asking for them", p.returncode == 2
          and p.stderr.count("\n") == 1 and "mesh:2x2@" in p.stderr and not got, p.stderr)


# ---- a line of three NPUs from a link-list file -----------------------------

def test_line_store_and_forward():
    # 1 MiB 0 -> 2 goes through 1.
    # aware: each hop floor(500 + 19,531.25) = 20,031, store and forward: 40,062
    # unaware: the route's latencies plus the slowest link's serialisation,
    #   one truncation: floor(500 + 500 + 19,531.25) = 20,531
    c = p2p_case(3, [(0, 2, MIB, 0)])
    both(c, LINE3, {0: 20531, 1: 1, 2: 20531}, {0: 40062, 1: 1, 2: 40062}, "3-NPU line: 1 MiB 0 -> 2 through 1")


def test_line_contention_on_one_link():
    # 0 -> 2 at t = 0 and 1 -> 2 at t = 10,000 (after 10 us of compute), 1 MiB
    # each; both need link 1 -> 2 (busy floor(19,531.25) = 19,531 per message).
    # aware: rank 1's message takes link 1 -> 2 at 10,000 (busy to 29,531),
    #   arrives at 10,000 + 20,031 = 30,031; rank 0's reaches NPU 1 at 20,031,
    #   waits for the link until 29,531 and arrives at 29,531 + 20,031 = 49,562.
    # unaware (no link state): rank 0's arrives at 20,531, rank 1's at
    #   10,000 + floor(500 + 19,531.25) = 30,031.
    c = p2p_case(3, [(0, 2, MIB, 0), (1, 2, MIB, 10)])
    both(c, LINE3, {0: 20531, 1: 30031, 2: 30031}, {0: 49562, 1: 30031, 2: 49562},
         "3-NPU line: two messages contend for link 1 -> 2")


def coll_node(comm_type):
    return {"id": "1", "name": "coll", "type": "COMM_COLL_NODE",
            "attr": [{"name": "is_cpu_op", "bool_val": False}, attr_int("comm_type", comm_type), attr_int("comm_size", MIB)]}


def test_line_custom_all_gather():
    # `chakra coll gen` ring all-gather of 3 ranks, 1 MiB per rank, as a custom
    # implementation: ring 0 -> 1 -> 2 -> 0; 2 -> 0 is two hops (2 -> 1 -> 0),
    # the others one, and no two of them share a directed link. Step 2 of
    # each rank sends as its step-1 message arrives.
    # aware: one hop 20,031, two hops 40,062. Step 1 arrivals: 1 and 2 at
    #   20,031, 0 at 40,062. Step 2: 1 -> 2 arrives 40,062, 2 -> 0 at
    #   20,031 + 40,062 = 60,093, 0 -> 1 at 40,062 + 20,031 = 60,093: all 60,093.
    # unaware: one hop 20,031, two hops floor(1,000 + 19,531.25) = 20,531.
    #   Step 2: 1 -> 2 at 40,062, 2 -> 0 at 20,031 + 20,531 = 40,562, 0 -> 1 at
    #   20,531 + 20,031 = 40,562: all 40,562.
    algo = tempfile.mkdtemp(prefix="algo-", dir=sb.BASE)
    g = subprocess.run([sb.CHAKRA, "coll", "gen", "--coll", "allgather", "--algo", "ring", "--ranks", "3",
                        "--size", str(MIB), "-o", os.path.join(algo, "ag")], capture_output=True, text=True)
    if g.returncode:
        check("chakra coll gen ring all-gather", False, g.stderr)
        return
    c = Case(3, dict(SYSTEM, **{"all-gather-implementation-custom": [os.path.join(algo, "ag")]}))
    c.ranks(lambda r: [coll_node(2)])
    both(c, LINE3, {r: 40562 for r in range(3)}, {r: 60093 for r in range(3)},
         "3-NPU line: custom ring all-gather from chakra coll gen")


# ---- heterogeneous links -----------------------------------------------------

HETERO = """npus 3
0 -> 1 100 100
1 -> 0 50 500
1 -> 2 25 1000
2 -> 1 25 1000
0 -> 2 10 2000   # direct, slow
"""


def test_heterogeneous_links():
    # 0 -> 2 takes the direct link (one hop is the shortest route):
    #   both models floor(2,000 + 97,656.25) = 99,656
    c = p2p_case(3, [(0, 2, MIB, 0)])
    both(c, HETERO, {0: 99656, 1: 1, 2: 99656}, {0: 99656, 1: 1, 2: 99656}, "heterogeneous links: 1 MiB 0 -> 2 direct")
    # 2 -> 0 has no direct link: 2 -> 1 (25 GB/s, 1,000 ns) then 1 -> 0
    # (50 GB/s, 500 ns).
    #   aware: floor(1,000 + 39,062.5) + floor(500 + 19,531.25) = 40,062 + 20,031 = 60,093
    #   unaware: floor(1,000 + 500 + 39,062.5) = 40,562 (the slower link's serialisation)
    c = p2p_case(3, [(2, 0, MIB, 0)])
    both(c, HETERO, {0: 40562, 1: 1, 2: 40562}, {0: 60093, 1: 1, 2: 60093}, "heterogeneous links: 1 MiB 2 -> 1 -> 0")
    # 0 -> 1 on the 100 GB/s, 100 ns link: floor(100 + 9,765.625) = 9,865
    c = p2p_case(3, [(0, 1, MIB, 0)])
    both(c, HETERO, {0: 9865, 1: 9865, 2: 1}, {0: 9865, 1: 9865, 2: 1}, "heterogeneous links: 1 MiB 0 -> 1 at 100 GB/s")


def test_heterogeneous_pair_native_all_reduce():
    # Two NPUs, 0 -> 1 at 50 GB/s / 500 ns, 1 -> 0 at 25 GB/s / 700 ns; a
    # 1 MiB ring all-reduce in one chunk: messages of 512 KiB,
    #   D(0 -> 1) = floor(500 + 9,765.625) = 10,265, D(1 -> 0) = floor(700 + 19,531.25) = 20,231,
    #   ep = 10, R = 981 (as in the mesh test).
    # Both send at ep = 10. NPU 1 gets its message at 10,275, reduces until
    # 10,275 + 10 + 981 = 11,266 and sends the second, which reaches NPU 0
    # at 11,266 + 20,231 = 31,497. NPU 0 gets the first at 10 + 20,231 =
    # 20,241, sends at 20,241 + 991 = 21,232, arriving at 31,497. Each ends
    # ep after its last arrival: 31,507.
    # aware: NPU 1's second message finds link 1 -> 0 still busy with its
    # first until 10 + floor(19,531.25) = 19,541, so it arrives at 19,541 +
    # 20,231 = 39,772 and NPU 0 ends at 39,782; NPU 1 as unaware, 31,507.
    system = dict(SYSTEM, **{"preferred-dataset-splits": 1})
    c = Case(2, system)
    c.ranks(lambda r: [coll_node(0)])
    pair = "npus 2\n0 -> 1 50 500\n1 -> 0 25 700\n"
    both(c, pair, {0: 31507, 1: 31507}, {0: 39782, 1: 31507}, "heterogeneous pair: native ring all-reduce")


# ---- bad link-list files -------------------------------------------------------

def test_bad_link_list_files():
    c = p2p_case(3, [(0, 2, 1024, 0)])
    cases = (
        ("link to a missing NPU", "npus 3\n0 <-> 1 50 500\n1 <-> 7 50 500\n", "line 3", "'7' is not a device"),
        ("disconnected NPU", "npus 3\n0 <-> 1 50 500\n", "line 1", "NPU 2 is disconnected"),
        ("zero bandwidth", "npus 3\n0 <-> 1 50 500\n1 <-> 2 0 500\n", "line 3", "bandwidth 0 GB/s"),
        ("negative bandwidth", "npus 3\n0 <-> 1 -50 500\n1 <-> 2 50 500\n", "line 2", "bandwidth -50 GB/s"),
        ("duplicate link", "npus 3\n0 <-> 1 50 500\n1 <-> 2 50 500\n# again\n1 -> 2 25 100\n", "line 5",
         "duplicate link 1 -> 2 (first on line 3)"),
        ("negative latency", "npus 3\n0 <-> 1 50 -1\n1 <-> 2 50 500\n", "line 2", "latency -1 ns"),
        ("not a link", "npus 3\n0 <-> 1 fast 500\n", "line 2", "expected 'SRC DST BANDWIDTH_GBPS LATENCY_NS'"),
    )
    for name, text, line, what in cases:
        for model in ("unaware", "aware"):
            p, got = c.run(network=text, netname="bad.links", model=model)
            path = os.path.join(c.dir, "bad.links")
            check("bad link list, %s (%s): exit 2, one line naming the file and %s" % (name, model, line),
                  p.returncode == 2 and p.stderr.count("\n") == 1 and (path + ": " + line + ": ") in p.stderr
                  and what in p.stderr and not got, p.stderr)


def test_yaml_mesh_and_link_list_agree():
    # The same line written as a Mesh YAML and as a link list: identical
    # results in both models (the YAML's Mesh dimension is a line).
    c = p2p_case(3, [(0, 2, MIB, 0), (1, 2, MIB, 10), (2, 0, 4096, 3)])
    yml = "topology: [ Mesh ]\nnpus_count: [ 3 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n"
    for model in ("unaware", "aware"):
        a = c.run(network=yml, netname="line.yml", model=model)
        b = c.run(network=LINE3, netname="line.txt", model=model)
        check("Mesh YAML line and link-list line agree (%s)" % model, a[0].returncode == 0 and a[1] == b[1]
              and len(a[1]) == 3, "%s %s %s" % (a[1], b[1], a[0].stderr + b[0].stderr))


def mesh_link_list(nx, ny, gbps, ns):
    """A nx x ny mesh as a link list, NPU id = y * nx + x, every x link
    listed before every y link: the first shortest-path link at each
    device is then the x one while x differs, i.e. dimension order."""
    lines = ["npus %d" % (nx * ny)]
    lines += ["%d <-> %d %g %g" % (y * nx + x, y * nx + x + 1, gbps, ns) for y in range(ny) for x in range(nx - 1)]
    lines += ["%d <-> %d %g %g" % (y * nx + x, (y + 1) * nx + x, gbps, ns) for y in range(ny - 1) for x in range(nx)]
    return "\n".join(lines) + "\n"


def test_mesh_as_yaml_inline_and_link_list_agree():
    # A direct all-gather (chakra coll gen, 12 ranks, 64 KiB each) as a custom
    # collective on a 4x3 mesh written three ways. Aware: the same links and
    # dimension-order routes, so the same times per rank. Unaware: a link
    # list charges every link of the route, as --multidim-p2p=full does on
    # the YAML (ASTRA-sim's default charges only the lowest dimension).
    algo = tempfile.mkdtemp(prefix="algo-", dir=sb.BASE)
    g = subprocess.run([sb.CHAKRA, "coll", "gen", "--coll", "allgather", "--algo", "direct", "--ranks", "12",
                        "--size", "65536", "-o", os.path.join(algo, "ag")], capture_output=True, text=True)
    c = Case(12, dict(SYSTEM, **{"all-gather-implementation-custom": [os.path.join(algo, "ag")]}))
    c.ranks(lambda r: [coll_node(2)])
    yml = "topology: [ Mesh, Mesh ]\nnpus_count: [ 4, 3 ]\nbandwidth: [ 50.0, 50.0 ]\nlatency: [ 500.0, 500.0 ]\n"
    a = c.run(network=yml, netname="m.yml", model="aware")
    b = c.run(network=mesh_link_list(4, 3, 50, 500), netname="m.txt", model="aware")
    i = c.run(network="mesh:4x3@50,500", netname=None, model="aware")
    check("4x3 mesh: YAML, link list and inline give the same aware times", g.returncode == 0 and len(a[1]) == 12
          and a[1] == b[1] == i[1], "%s %s %s %s" % (a[1], b[1], i[1], g.stderr + a[0].stderr + b[0].stderr))
    u = c.run("--multidim-p2p=full", network=yml, netname="m.yml")
    v = c.run(network=mesh_link_list(4, 3, 50, 500), netname="m.txt")
    w = c.run(network=yml, netname="m.yml")
    check("4x3 mesh: link list unaware = YAML with --multidim-p2p=full (and not the lowest-dimension default)",
          len(u[1]) == 12 and u[1] == v[1] and w[1] != v[1], "%s %s %s" % (u[1], v[1], w[1]))


def test_sweep_on_a_link_list():
    # The line of three: network-model varies (the times of the store-and-
    # forward test); bandwidth cannot, a link list has no per-dimension value.
    c = p2p_case(3, [(0, 2, MIB, 0)])
    c.run(network=LINE3, netname="line.txt")  # writes sys.json and the network
    base = [sb.CHAKRA, "sweep", "--workload", os.path.join(c.dir, "t"), "--system", os.path.join(c.dir, "sys.json"),
            "--network", os.path.join(c.dir, "line.txt"), "-q"]
    p = subprocess.run(base + ["--vary", "network-model=aware,unaware"], capture_output=True, text=True)
    rows = [l.split(",") for l in p.stdout.splitlines()]
    col = rows[0].index("max_finish_ns") if rows else 0
    check("chakra sweep on a link list: network-model varies (40,062 aware, 20,531 unaware)",
          p.returncode == 0 and [r[col] for r in rows[1:]] == ["40062", "20531"], p.stdout + p.stderr)
    p = subprocess.run(base + ["--vary", "bandwidth=25,50"], capture_output=True, text=True)
    check("chakra sweep on a link list: --vary bandwidth refused in one line naming the file",
          p.returncode == 2 and p.stderr.count("\n") == 1 and "line.txt: a link list" in p.stderr, p.stderr)


def test_3d_mesh_native_collectives_finish():
    # Issue 20 item 1: a dimension queue runs one stream at a time, first
    # come first served; on a mesh, whose edge and middle NPUs differ in
    # timing, the members of a middle dimension's ring once started
    # different streams first (localBWAware all-reduce's reduce-scatter of
    # one chunk, all-gather of another) and waited for each other forever.
    # Every implementation, optimisation and model on three 3-D shapes must
    # finish every rank, no faster than the torus of the same shape and at
    # most 3 times slower (a ring's wrap-around message crosses 3 links of a
    # 4-long mesh line instead of 1).
    d = tempfile.mkdtemp(prefix="mesh3d-", dir=sb.BASE)
    colls = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")
    for coll in colls:
        for n in (32, 64):
            subprocess.run([sb.CHAKRA, "gen", "microbench", "--coll", coll, "--npus", str(n), "--size", "1M",
                            "-o", os.path.join(d, "%s%d" % (coll, n))], check=True, capture_output=True)

    def sim(work, system, net, model, extra=()):
        p = subprocess.run([sb.CHAKRA, "sim", "-q", "--workload-configuration=" + work, "--system-configuration=" + system,
                            "--network-configuration=" + net, "--network-model=" + model] + list(extra),
                           capture_output=True, text=True)
        times = [int(m.group(2)) for m in map(sb.LINE.match, p.stdout.splitlines()) if m]
        return p, times

    bad, runs = [], 0
    for impl in ("ring", "direct", "halvingDoubling", "doubleBinaryTree"):
        for opt in ("baseline", "localBWAware"):
            system = dict(SYSTEM, **{"collective-optimization": opt})
            for k in [k for k in system if k.endswith("-implementation")]:
                system[k] = [impl] * 3
            spath = os.path.join(d, "%s_%s.json" % (impl, opt))
            with open(spath, "w") as f:
                json.dump(system, f)
            for shape, n in (("2x4x4", 32), ("4x4x2", 32), ("4x4x4", 64)):
                for model in ("aware", "unaware"):
                    for coll in colls:
                        if (impl == "doubleBinaryTree" and coll != "all_reduce") or \
                                (impl == "halvingDoubling" and coll == "all_to_all"):
                            continue  # refused by design (docs/sim.md)
                        work = os.path.join(d, "%s%d" % (coll, n))
                        runs += 1
                        p, mesh = sim(work, spath, "mesh:%s@50,500" % shape, model)
                        _, torus = sim(work, spath, "torus:%s@50,500" % shape, model)
                        if p.returncode or len(mesh) != n or len(torus) != n or \
                                not max(torus) <= max(mesh) <= 3 * max(torus):
                            bad.append("%s %s %s %s %s: exit %d, mesh %s, torus %s %s" % (
                                shape, impl, opt, model, coll, p.returncode, max(mesh, default=None),
                                max(torus, default=None), p.stderr[-200:]))
    check("3-D meshes: %d runs (4 implementations, baseline and localBWAware, both models, 2x4x4 / 4x4x2 / 4x4x4, "
          "4 collectives) finish, torus <= mesh <= 3 x torus" % runs, runs == 144 and not bad, "; ".join(bad[:5]))
    # Several streams per queue, several queues: the same must hold (direct,
    # 2 active chunks, 1 queue, unaware once stalled too).
    bad = []
    for impl in ("ring", "direct"):
        with open(os.path.join(d, "%s_localBWAware.json" % impl)) as f:
            system = dict(json.load(f), **{"active-chunks-per-dimension": 2})
        spath2 = os.path.join(d, "%s_2chunks.json" % impl)
        with open(spath2, "w") as f:
            json.dump(system, f)
        for model in ("aware", "unaware"):
            for queues in ("1", "2", "3"):
                for coll in colls:
                    p, mesh = sim(os.path.join(d, "%s32" % coll), spath2, "mesh:4x4x2@50,500", model,
                                  ["--num-queues-per-dim=" + queues])
                    if p.returncode or len(mesh) != 32:
                        bad.append("%s %s %s queues %s: exit %d %s" % (impl, model, coll, queues, p.returncode,
                                                                        p.stderr[-200:]))
    check("3-D mesh 4x4x2, 2 active chunks, 1-3 queues per dimension: every collective finishes", not bad,
          "; ".join(bad))
    spath = os.path.join(d, "ring_localBWAware.json")
    # The repro, and validate given the configuration (it simulates)
    # no longer blames the workload.
    v = subprocess.run([sb.CHAKRA, "validate", os.path.join(d, "all_reduce32"), "--system-configuration", spath,
                        "--network-configuration", "mesh:4x4x2@50,500"], capture_output=True, text=True)
    check("validate with the 4x4x2 mesh configuration accepts the 32-rank all-reduce",
          v.returncode == 0 and " 0 error(s)" in v.stdout, v.stdout[-500:] + v.stderr[-500:])


if __name__ == "__main__":
    sb.BASE = tempfile.mkdtemp(prefix="chakra-simtopo-test-")
    try:
        for name, fn in sorted(globals().items()):
            if name.startswith("test_"):
                fn()
    finally:
        shutil.rmtree(sb.BASE, ignore_errors=True)
    print("%d passed, %d failed" % (len(sb.PASSED), len(sb.FAILED)))
    sys.exit(1 if sb.FAILED else 0)

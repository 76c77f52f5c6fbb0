#!/usr/bin/python3
"""Pins `chakra coll`: the generators (node counts, the conformance anchor and
simulated times of every algorithm), check, from-msccl and expand. Builds
everything it needs itself; the comparisons against ../shared data skip,
saying so, when that data is absent.

usage: coll_cli.py CHAKRA_BINARY [GROUP ...]   (groups: gen check msccl expand)"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

CHAKRA = os.path.abspath(sys.argv[1])
GROUPS = sys.argv[2:] or ["gen", "check", "msccl", "expand"]
SHARED = os.environ.get("CHAKRA_SHARED") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared")
LINE = re.compile(r"^sys\[(\d+)\] finished, (\d+) cycles, exposed communication (\d+) cycles\.$")
RING8 = "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n"
FC8 = "topology: [ FullyConnected ]\nnpus_count: [ 8 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n"
SYS_KEY = {"allreduce": "all-reduce", "allgather": "all-gather", "reducescatter": "reduce-scatter",
           "alltoall": "all-to-all"}
MB_NAME = {"allreduce": "all_reduce", "allgather": "all_gather", "reducescatter": "reduce_scatter",
           "alltoall": "all_to_all"}

FAILED, PASSED, SKIPPED = [], [], []
BASE = tempfile.mkdtemp(prefix="coll-test-")


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)))
    (PASSED if cond else FAILED).append(name)


def skip(name, why):
    print("SKIP %s: %s" % (name, why))
    SKIPPED.append(name)


def run(*args, cwd=None):
    return subprocess.run([CHAKRA] + [str(a) for a in args], capture_output=True, text=True, cwd=cwd)


def tmpdir(tag):
    return tempfile.mkdtemp(prefix=tag + "-", dir=BASE)


def jsonl(path):
    p = run("jsonize", path)
    assert p.returncode == 0, p.stderr
    lines = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
    return lines[0], lines[1:]


def count_types(nodes):
    c = {}
    for n in nodes:
        c[n["type"]] = c.get(n["type"], 0) + 1
    return c


def attr(n, name):
    for a in n.get("attr", []):
        if a["name"] == name:
            for k, v in a.items():
                if k.endswith("_val"):
                    return int(v) if k.startswith(("int", "uint")) else v
    return None


def sim(workload, system, network, model="unaware", groups=None):
    d = os.path.dirname(workload)
    with open(os.path.join(d, "sys.json"), "w") as f:
        json.dump(system, f)
    with open(os.path.join(d, "net.yml"), "w") as f:
        f.write(network)
    cmd = ["sim", "-q", "--workload-configuration=" + workload,
           "--system-configuration=" + os.path.join(d, "sys.json"),
           "--network-configuration=" + os.path.join(d, "net.yml"), "--network-model=" + model]
    if groups:
        cmd.append("--comm-group-configuration=" + groups)
    p = run(*cmd)
    got = {}
    for line in p.stdout.splitlines():
        m = LINE.match(line)
        if m:
            got[int(m.group(1))] = int(m.group(2))
    return p, got


def custom_system(coll, prefix):
    return {"scheduling-policy": "FIFO", "preferred-dataset-splits": 1, "local-mem-bw": 50,
            "collective-optimization": "baseline", SYS_KEY[coll] + "-implementation-custom": [prefix]}


def microbench(d, coll, npus, size):
    p = run("gen", "microbench", "--coll", MB_NAME[coll], "--npus", npus, "--size", size, "-o",
            os.path.join(d, "mb"))
    assert p.returncode == 0, p.stderr
    return os.path.join(d, "mb")


def gen(d, coll, algo, ranks, size, *extra, name="alg"):
    prefix = os.path.join(d, name)
    p = run("coll", "gen", "--coll", coll, "--algo", algo, "--ranks", ranks, "--size", size, "-o", prefix, *extra)
    return p, prefix


# ---- gen ---------------------------------------------------------------------

def test_gen_conformance_anchor_ring_allreduce_8_ranks_1mib_90174ns_both_models():
    d = tmpdir("anchor")
    p, prefix = gen(d, "allreduce", "ring", 8, 1048576, "--reduce-bw", 50)
    check("anchor: gen exits 0", p.returncode == 0, p.stderr)
    mb = microbench(d, "allreduce", 8, "1M")
    for model in ("unaware", "aware"):
        p, got = sim(mb, custom_system("allreduce", prefix), RING8, model)
        check("anchor: ring all-reduce 8 x 1 MiB = 90,174 ns on every rank (%s)" % model,
              p.returncode == 0 and got == {r: 90174 for r in range(8)}, (p.returncode, got, p.stderr[-300:]))


def test_gen_ring_allreduce_rank0_counts_and_attributes():
    d = tmpdir("counts")
    p, prefix = gen(d, "allreduce", "ring", 8, 1048576)
    meta, nodes = jsonl(prefix + ".0.et")
    c = count_types(nodes)
    check("ring AR n8 rank 0: 14 send, 14 recv, 7 comp (collectives.md 4.4)",
          c == {"COMM_SEND_NODE": 14, "COMM_RECV_NODE": 14, "COMP_NODE": 7}, c)
    comp = [n for n in nodes if n["type"] == "COMP_NODE"][0]
    check("reduction COMP: 7,863 ns exact, 7 us truncated",
          attr(comp, "duration_ns") == 7863 and comp.get("duration_micros") == "7", comp)
    recvs = [n for n in nodes if n["type"] == "COMM_RECV_NODE"]
    check("receives have no dependencies (posted at once)", all("data_deps" not in n for n in recvs))
    keys = {(attr(n, "comm_dst"), attr(n, "comm_tag")) for n in nodes if n["type"] == "COMM_SEND_NODE"}
    check("every (dst, tag) of a rank's sends is unique", len(keys) == 14, keys)
    m = {a["name"]: a for a in meta["attr"]}
    check("metadata: collective, algorithm, npus, size",
          m["collective"]["string_val"] == "allreduce" and m["algorithm"]["string_val"] == "ring" and
          m["npus"]["int64_val"] == "8" and m["size"]["int64_val"] == "1048576", meta)


def test_gen_every_algorithm_completes_with_its_expected_time():
    # unaware 8-ring, 1 MiB; the hd all-reduce equals the reference's RDH
    # custom-collective cases (94,176 ns)
    expected = {
        ("allreduce", "ring"): {90174}, ("allreduce", "hd"): {94176}, ("allreduce", "dbt"): {220590},
        ("allgather", "ring"): {140217}, ("allgather", "direct"): {21531}, ("allgather", "hd"): {140218},
        ("reducescatter", "ring"): {69587}, ("reducescatter", "hd"): {73588},
        ("alltoall", "direct"): {4441}, ("allreduce", "direct"): {56882, 57382, 57882},
        ("reducescatter", "direct"): {51941, 52441, 52941, 53441},
        ("allreduce", "tree"): {393624, 414155, 434186},
    }
    for (coll, algo), want in sorted(expected.items()):
        d = tmpdir("all")
        p, prefix = gen(d, coll, algo, 8, 1048576)
        mb = microbench(d, coll, 8, "1M")
        p2, got = sim(mb, custom_system(coll, prefix), RING8)
        check("%s %s 8 ranks completes in %s ns" % (algo, coll, sorted(want)),
              p.returncode == 0 and p2.returncode == 0 and set(got.values()) == want and len(got) == 8,
              (p.stderr, p2.stderr[-300:], got))


def test_gen_custom_collective_of_more_than_16_ranks_runs_in_sim():
    # The simulator kept its loaded algorithms in an array that grew past
    # 16 ranks while running collectives pointed into it (a crash at 17+).
    for n in (17, 24, 64):
        d = tmpdir("big%d" % n)
        p, prefix = gen(d, "allgather", "ring", n, 1048576)
        mb = microbench(d, "allgather", n, "1M")
        net = "topology: [ Ring ]\nnpus_count: [ %d ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n" % n
        for model in ("unaware", "aware"):
            p2, got = sim(mb, custom_system("allgather", prefix), net, model)
            want = (n - 1) * 20031  # a step: floor(500 + 1,048,576 / 53.687) ns
            check("ring all-gather %d ranks as a custom collective (%s): %d ns on every rank" % (n, model, want),
                  p.returncode == 0 and p2.returncode == 0 and set(got.values()) == {want} and len(got) == n,
                  (p2.returncode, p2.stderr[-300:], sorted(set(got.values()))))


def test_gen_hd_allreduce_matches_reference_rdh_on_fully_connected_aware():
    d = tmpdir("hdfc")
    p, prefix = gen(d, "allreduce", "hd", 8, 1048576)
    mb = microbench(d, "allreduce", 8, "1M")
    p2, got = sim(mb, custom_system("allreduce", prefix), FC8, "aware")
    check("hd all-reduce on FullyConnected 8 (aware) = 90,176 ns (reference case custom_rdh_ar_fc8_aware)",
          got == {r: 90176 for r in range(8)}, (got, p2.stderr[-200:]))


def test_gen_non_power_of_two_and_chunks_and_no_reduction():
    d = tmpdir("odd")
    for algo, coll in (("ring", "allreduce"), ("direct", "allreduce"), ("ring", "allgather"), ("direct", "alltoall")):
        p, prefix = gen(d, coll, algo, 6, 1000003, "--chunks", 3, name="o_%s_%s" % (algo, coll))
        mb_d = tmpdir("oddmb")
        mb = microbench(mb_d, coll, 6, 1000003)
        net = RING8.replace("[ 8 ]", "[ 6 ]")
        p2, got = sim(mb, custom_system(coll, prefix), net)
        check("%s %s: 6 ranks, 3 pipelines, odd size completes" % (algo, coll),
              p.returncode == 0 and p2.returncode == 0 and len(got) == 6, (p.stderr, p2.stderr[-300:]))
    meta, nodes = jsonl(os.path.join(d, "o_ring_allreduce.5.et"))
    check("pipelines carry tags offset by chunk * 65536",
          max(attr(n, "comm_tag") for n in nodes if "comm_tag" in str(n)) >= 2 * 65536)
    p, prefix = gen(d, "allreduce", "ring", 8, 1048576, "--reduce-bw", 0, name="nored")
    _, nodes = jsonl(prefix + ".0.et")
    check("--reduce-bw 0 writes no COMP nodes", "COMP_NODE" not in count_types(nodes))


def test_gen_refuses_what_the_algorithm_cannot_do():
    d = tmpdir("bad")
    for args, what in (((("allreduce", "hd", 6, 1024)), "power-of-two"),
                       ((("allgather", "tree", 8, 1024)), "allreduce only"),
                       ((("alltoall", "ring", 8, 1024)), "direct"),
                       ((("allreduce", "ring", 8, 4)), "byte per rank")):
        p, prefix = gen(d, *args)
        check("gen %s %s %d ranks refused: %s" % (args[1], args[0], args[2], what),
              p.returncode == 2 and what in p.stderr and len(p.stderr.strip().splitlines()) == 1
              and not os.listdir(d), (p.returncode, p.stderr))
    p = run("coll", "gen", "--coll", "allreduce", "--algo", "ring", "--ranks", 4, "--size", 64, "-o",
            "/nonexistent-dir/x")
    check("unwritable output: exit non-zero, one line", p.returncode != 0 and len(p.stderr.strip().splitlines()) == 1,
          p.stderr)


# ---- check -------------------------------------------------------------------

def msg(i, kind, peer, size, tag, deps=()):
    n = {"id": str(i), "name": "%s%d" % (kind, i), "type": "COMM_%s_NODE" % kind.upper(),
         "attr": [{"name": "comm_dst" if kind == "send" else "comm_src", "int32_val": peer},
                  {"name": "comm_size", "int64_val": str(size)}, {"name": "comm_tag", "int32_val": tag}]}
    if deps:
        n["data_deps"] = [str(x) for x in deps]
    return n


def pack_set(d, name, ranks):
    for r, nodes in enumerate(ranks):
        jl = os.path.join(d, "%s.%d.jsonl" % (name, r))
        with open(jl, "w") as f:
            f.write(json.dumps({"version": "1.0.0"}) + "\n")
            for n in nodes:
                f.write(json.dumps(n) + "\n")
        p = run("pack", jl, "-o", os.path.join(d, "%s.%d.et" % (name, r)))
        assert p.returncode == 0, p.stderr
    return os.path.join(d, name)


def test_check_generated_and_shipped_sets_are_sound():
    d = tmpdir("chk")
    for coll, algo, n in (("allreduce", "ring", 8), ("allreduce", "dbt", 16), ("alltoall", "direct", 5),
                          ("reducescatter", "hd", 8), ("allgather", "ring", 7), ("allreduce", "tree", 4)):
        p, prefix = gen(d, coll, algo, n, 1 << 20, "--chunks", 2, name="%s_%s" % (coll, algo))
        c = run("coll", "check", prefix)
        check("check: generated %s %s (%d ranks, 2 pipelines) is sound" % (algo, coll, n),
              c.returncode == 0 and "sound" in c.stdout, c.stdout + c.stderr)
    shipped = os.path.join(SHARED, "data", "traces", "custom-collective", "custom_allreduce")
    if os.path.exists(shipped + ".0.et"):
        c = run("coll", "check", shipped)
        check("check: ASTRA-sim's shipped custom_allreduce is sound", c.returncode == 0, c.stdout)
    else:
        skip("check: shipped custom_allreduce", "shared data absent")


def test_check_names_file_node_and_key_of_each_problem():
    d = tmpdir("chkbad")
    # rank 1 receives tag 1 but rank 0 sends tag 0
    pre = pack_set(d, "tag", [[msg(0, "send", 1, 64, 0)], [msg(0, "recv", 0, 64, 1)]])
    c = run("coll", "check", pre)
    lines = c.stdout.strip().splitlines()
    check("check: unmatched send and receive, one line each naming file, node and key",
          c.returncode == 1 and any("tag.0.et" in l and "node 0" in l and "tag 0" in l and "no matching receive" in l
                                    for l in lines)
          and any("tag.1.et" in l and "tag 1" in l and "no matching send" in l for l in lines), c.stdout)
    pre = pack_set(d, "size", [[msg(0, "send", 1, 64, 0)], [msg(0, "recv", 0, 65, 0)]])
    c = run("coll", "check", pre)
    check("check: sizes must agree byte for byte", c.returncode == 1 and "64 B" in c.stdout and "65 B" in c.stdout, c.stdout)
    pre = pack_set(d, "peer", [[msg(0, "send", 2, 64, 0), msg(1, "send", 0, 64, 0)], [msg(0, "recv", 0, 64, 0)]])
    c = run("coll", "check", pre)
    check("check: peers outside the set and the own rank are refused",
          c.returncode == 1 and "comm_dst 2" in c.stdout and "comm_dst 0" in c.stdout, c.stdout)
    pre = pack_set(d, "dead", [[msg(0, "recv", 1, 64, 0), msg(1, "send", 1, 64, 0, deps=[0])],
                               [msg(0, "recv", 0, 64, 0), msg(1, "send", 0, 64, 0, deps=[0])]])
    c = run("coll", "check", pre)
    check("check: a cross-rank deadlock names the waiting receives",
          c.returncode == 1 and c.stdout.count("deadlock") == 2 and "dead.1.et" in c.stdout, c.stdout)
    pre = pack_set(d, "cyc", [[msg(0, "send", 1, 64, 0, deps=[1]), msg(1, "recv", 1, 64, 0, deps=[0])],
                              [msg(0, "send", 0, 64, 0), msg(1, "recv", 0, 64, 0)]])
    c = run("coll", "check", pre)
    check("check: a dependency cycle is named", c.returncode == 1 and "cycle" in c.stdout, c.stdout)


def test_check_applies_validates_graph_checks():
    """issue 26 item 6: coll check called these sets sound; validate flags each."""
    d = tmpdir("chkgraph")
    recv = [msg(0, "recv", 0, 64, 0)]
    comp = {"id": "0", "name": "c", "type": "COMP_NODE"}
    cases = [("self", [msg(0, "send", 1, 64, 0, deps=[0])], "data dep on itself", 1),
             ("missing", [msg(0, "send", 1, 64, 0, deps=[7])], "data dep 7 not found", 1),
             ("dupid", [msg(0, "send", 1, 64, 0), comp], "duplicate node id", 1),
             ("selfctrl", [dict(msg(0, "send", 1, 64, 0), ctrl_deps=["0"])], "warning: 1 control deps of nodes on themselves", 0),
             ("absentctrl", [dict(msg(0, "send", 1, 64, 0), ctrl_deps=["9"])], "warning: 1 control deps on absent ids", 0)]
    for name, rank0, what, status in cases:
        pre = pack_set(d, name, [rank0, recv])
        c, v = run("coll", "check", pre), run("validate", pre)
        check("check %s: the line validate gives (%r), exit %d" % (name, what, status),
              c.returncode == status and name + ".0.et: " in c.stdout and what in c.stdout
              and what.replace("warning: ", "") in v.stdout, (c.returncode, c.stdout, v.stdout))
        check("check %s: %s" % (name, "not called sound" if status else "still sound, with the warning"),
              ("sound" in c.stdout) == (status == 0), c.stdout)


# ---- from-msccl --------------------------------------------------------------

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import msccl_xml  # noqa: E402


def from_msccl(xml, prefix, *extra):
    return run("coll", "from-msccl", xml, "--size", 1048576, "-o", prefix, *extra)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def test_msccl_compat_reproduces_the_reference_converter_byte_for_byte():
    d = tmpdir("compat")
    sets = [("custom-collective", "custom_allreduce")] + [
        ("msccl/" + a, a) for a in ("allgather_ring_nofusion_n8", "allgather_allpairs_n8", "alltoall_allpairs_n8")]
    for sub, name in sets:
        src = os.path.join(SHARED, "data", "traces", sub)
        if not os.path.exists(os.path.join(src, name + ".xml")):
            skip("compat " + name, "shared data absent")
            continue
        p = from_msccl(os.path.join(src, name + ".xml"), os.path.join(d, name), "--compat")
        same = p.returncode == 0 and all(
            open(os.path.join(d, "%s.%d.et" % (name, r)), "rb").read() ==
            open(os.path.join(src, "%s.%d.et" % (name, r)), "rb").read() for r in range(8))
        check("--compat: %s, all 8 ranks identical to the 2025-04 reference's bytes" % name, same, p.stderr)


# SHA-256 (first 16 hex digits) of the files collectiveapi's 2025-04
# converter (046d961, --coll_size 1048576) writes for the two fixtures,
# which msccl-tools' recursive-doubling all-gather and halving-doubling
# all-reduce examples produced (8 GPUs, 1 instance, instruction fusion off).
NOP_REFERENCE = {
    "allgather_recursive_doubling_n8": ("allgather", "14ee5dbd673f32bc e98785619fd7a2cd 5e288fecb6adb394 "
                                        "df9047a6ad5b7f6b 192716b02862d221 b268daa26e292b01 342d38911298595f "
                                        "05ba954095c697d9"),
    "allreduce_halving_doubling_n8": ("allreduce", "218878de5712ef0d 1451d482b02ce11d 4ed5097a57b623b7 "
                                      "f2a3ff7de38443f1 bf1c487dbc5c7ca7 18145aa92955a9b5 04e6fa3ab3e09503 "
                                      "f6e6344b12590cfc"),
}


def reference_ids(xml_path):
    """The ids the reference gives, per gpu: one per step in XML order, nops
    included (which write no node), two for rrc (receive, reduce)."""
    import xml.etree.ElementTree as ET
    ids = {}
    for g in ET.parse(xml_path).getroot().findall("gpu"):
        nxt, out = 0, []
        for tb in g.findall("tb"):
            for st in tb.findall("step"):
                t = st.get("type")
                if t in ("s", "r"):
                    out.append(nxt)
                elif t == "rrc":
                    out += [nxt, nxt + 1]
                    nxt += 1
                nxt += 1
        ids[int(g.get("id"))] = out
    return ids


def test_msccl_compat_spends_ids_on_nop_steps_as_the_reference():
    d = tmpdir("compatnop")
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    for name, (coll, digests) in sorted(NOP_REFERENCE.items()):
        xml = os.path.join(here, name + ".xml")
        p = from_msccl(xml, os.path.join(d, name), "--compat")
        want = reference_ids(xml)
        got = {r: [int(n.get("id", "0")) for n in jsonl(os.path.join(d, "%s.%d.et" % (name, r)))[1]]
               for r in range(8)} if p.returncode == 0 else {}
        check("--compat %s: every rank's ids skip one per nop step, as the reference allocates" % name,
              got == want and any(len(v) != v[-1] + 1 for v in want.values()), (p.stderr, got, want))
        sums = " ".join(hashlib.sha256(open(os.path.join(d, "%s.%d.et" % (name, r)), "rb").read()).hexdigest()[:16]
                        for r in range(8)) if p.returncode == 0 else ""
        check("--compat %s: all 8 ranks byte-identical to the reference's (pinned digests)" % name,
              sums == digests, sums)
    ag, ar = (reference_ids(os.path.join(here, n + ".xml")) for n in sorted(NOP_REFERENCE))
    check("the skipped ids pinned: all-gather rank 0 skips 4, rank 5 skips 0; all-reduce rank 0 skips 13, rank 5 skips 3",
          ag[0] == [0, 1, 2, 3, 5, 6] and ag[5] == [1, 2, 3, 4, 5, 6] and
          ar[0] == list(range(13)) + [14, 15] and ar[5] == [0, 1, 2] + list(range(4, 16)), (ag, ar))


def test_msccl_ring_nofusion_and_fused_simulate_like_the_anchor():
    d = tmpdir("ring")
    mb = microbench(d, "allreduce", 8, "1M")
    for fused in (False, True):
        xml = write(os.path.join(d, "r%d.xml" % fused), msccl_xml.ring_allreduce(8, fused))
        pre = os.path.join(d, "r%d" % fused)
        p = from_msccl(xml, pre)
        c = run("coll", "check", pre)
        _, nodes = jsonl(pre + ".0.et")
        cnt = count_types(nodes)
        p2, got = sim(mb, custom_system("allreduce", pre), RING8)
        what = "fused (s, rrs, rrcs, rcs, r)" if fused else "without fusion (s, rrc, r)"
        check("from-msccl ring all-reduce %s: sound, 14/14/7 nodes on rank 0, 90,174 ns" % what,
              p.returncode == 0 and c.returncode == 0 and
              cnt == {"COMM_SEND_NODE": 14, "COMM_RECV_NODE": 14, "COMP_NODE": 7} and
              got == {r: 90174 for r in range(8)}, (p.stderr, c.stdout, cnt, got))
        sends = [(attr(n, "comm_dst"), attr(n, "comm_tag")) for n in nodes if n["type"] == "COMM_SEND_NODE"]
        check("deterministic tags: message k on a connection has tag k (%s)" % what,
              [t for _, t in sends] == list(range(14)), sends)


def test_msccl_metadata_has_name_and_digest_not_the_text():
    d = tmpdir("meta")
    xml = write(os.path.join(d, "r.xml"), msccl_xml.ring_allreduce(4))
    p = from_msccl(xml, os.path.join(d, "a"))
    meta, _ = jsonl(os.path.join(d, "a.0.et"))
    m = {a["name"]: list(v for k, v in a.items() if k.endswith("_val"))[0] for a in meta["attr"]}
    digest = hashlib.sha256(open(xml, "rb").read()).hexdigest()
    check("metadata: input_file is the name, input_sha256 the digest, size and npus set",
          m.get("input_file") == "r.xml" and m.get("input_sha256") == digest and m.get("size") == "1048576"
          and m.get("npus") == "4" and m.get("algorithm") == "allreduce_ring_nofusion", m)
    p = from_msccl(xml, os.path.join(d, "b"), "--embed-xml")
    meta, _ = jsonl(os.path.join(d, "b.0.et"))
    m = {a["name"]: list(v for k, v in a.items() if k.endswith("_val"))[0] for a in meta["attr"]}
    check("--embed-xml stores the whole XML, as the reference", m.get("input_file") == open(xml).read(), p.stderr)
    xml = write(os.path.join(d, "r128.xml"), msccl_xml.ring_allreduce(128))
    p = from_msccl(xml, os.path.join(d, "big"))
    total = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d) if f.startswith("big."))
    check("128-rank ring all-reduce: %d bytes in total (floor 10 MB; reference ~950 MB)" % total,
          p.returncode == 0 and total <= 10 * 1000 * 1000, p.stderr)


HANDMADE = """<algo name="hand" proto="Simple" nchannels="2" nchunksperloop="4" ngpus="2" coll="allreduce" inplace="1">
  <gpu id="0" i_chunks="4" o_chunks="0" s_chunks="0">
    <tb id="0" send="-1" recv="1" chan="0">
      <step s="0" type="r" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="2" depid="-1" deps="-1" hasdep="1"/>
    </tb>
    <tb id="1" send="-1" recv="1" chan="1">
      <step s="0" type="r" srcbuf="i" srcoff="2" dstbuf="i" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="1"/>
    </tb>
    <tb id="2" send="1" recv="-1" chan="0">
      <step s="0" type="nop" srcbuf="i" srcoff="-1" dstbuf="i" dstoff="-1" cnt="0" depid="0" deps="0" hasdep="0"/>
      <step s="1" type="re" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="1" deps="0" hasdep="0"/>
      <step s="2" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="3" type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="3" cnt="2" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="4" o_chunks="0" s_chunks="0">
    <tb id="0" send="0" recv="0" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="2" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="r" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
    <tb id="1" send="0" recv="-1" chan="1">
      <step s="0" type="s" srcbuf="i" srcoff="2" dstbuf="i" dstoff="2" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>
"""


def test_msccl_nops_cross_tb_deps_copies_and_channels():
    d = tmpdir("hand")
    xml = write(os.path.join(d, "h.xml"), HANDMADE)
    p = from_msccl(xml, os.path.join(d, "h"), "--reduce-bw", 1)
    check("hand-made program converts", p.returncode == 0, p.stderr)
    if p.returncode:
        return
    _, nodes = jsonl(os.path.join(d, "h.0.et"))
    by = {n["name"]: n for n in nodes}
    re_ = by.get("COMP_NODE_tb2_step1", {})
    snd = by.get("COMM_SEND_NODE_tb2_step2", {})
    cpy = by.get("COMP_NODE_tb2_step3", {})
    check("a nop carries its cross-tb dependency to the next step; re waits on both receives",
          sorted(re_.get("data_deps", [])) == ["0", "1"], re_)
    check("re is a reduction COMP (3 x bytes / bw), cpy a copy (2 x bytes / bw)",
          attr(re_, "duration_ns") == 3 * 262144 and attr(cpy, "duration_ns") == 2 * 524288, (re_, cpy))
    check("the send after them depends on the reduction", snd.get("data_deps") == [re_.get("id", "0")], snd)
    tags = sorted(attr(n, "comm_tag") for n in nodes if n["type"] == "COMM_RECV_NODE")
    check("tags are channel << 16 | message index", tags == [0, 65536], tags)
    c = run("coll", "check", os.path.join(d, "h"))
    check("hand-made program is sound", c.returncode == 0, c.stdout)


def test_msccl_bad_xml_one_line_naming_file_gpu_tb_step_and_no_output():
    d = tmpdir("badxml")
    cases = [
        ('type="re" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="1" deps="0"',
         'type="xx" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="1" deps="0"',
         "gpu 0 tb 2 step 1", "unknown step type"),
        ('type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1"',
         'type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="1" depid="-1" deps="-1"',
         "gpu 0 tb 2 step 2", "without attribute cnt"),
        ('depid="1" deps="0"', 'depid="1" deps="7"', "gpu 0 tb 2 step 1", "does not exist"),
        ('<step s="1" type="r" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>\n',
         '', "gpu 0 tb 2 step 2", "no matching receive"),
        ('<tb id="1" send="0" recv="-1" chan="1">', '<tb id="1" send="5" recv="-1" chan="1">',
         "gpu 1 tb 1 step 0", "not another GPU"),
        ('cnt="2" depid="-1" deps="-1" hasdep="1"/>', 'cnt="2" depid="2" deps="2" hasdep="1"/>',
         "gpu 0 tb", "cycle"),
    ]
    for old, new, where, what in cases:
        assert old in HANDMADE, old
        xml = write(os.path.join(d, "bad.xml"), HANDMADE.replace(old, new, 1))
        p = from_msccl(xml, os.path.join(d, "out"))
        lines = p.stderr.strip().splitlines()
        check("bad XML (%s): exit non-zero, one line naming file and %s, no output" % (what, where),
              p.returncode != 0 and len(lines) == 1 and "bad.xml" in lines[0] and where in lines[0]
              and what in lines[0] and not [f for f in os.listdir(d) if f.startswith("out")], p.stderr)
    xml = write(os.path.join(d, "bad.xml"), HANDMADE[:300])
    p = from_msccl(xml, os.path.join(d, "out"))
    check("truncated XML: one line with the line number", p.returncode != 0 and "line" in p.stderr
          and len(p.stderr.strip().splitlines()) == 1, p.stderr)
    p = from_msccl(os.path.join(d, "missing.xml"), os.path.join(d, "out"))
    check("missing file: one line", p.returncode != 0 and "missing.xml" in p.stderr, p.stderr)
    p = from_msccl(write(os.path.join(d, "f.xml"), msccl_xml.ring_allreduce(4, True)), os.path.join(d, "out"),
                   "--compat")
    check("--compat refuses fused steps the reference cannot convert",
          p.returncode != 0 and "fused" in p.stderr and not os.path.exists(os.path.join(d, "out.0.et")), p.stderr)


def test_msccl_parts_never_change_the_outcome():
    """Issue 20: with --threads > 1 a file of 1 MiB or more is cut into parts;
    an '<algo' in a comment before the root, or a lone quote, was taken for
    the root's start tag, and the parts repeated gpus ('gpu 0: defined
    twice') where one thread converted."""
    d = tmpdir("parts")
    ring = msccl_xml.ring_allreduce(64)
    lines = ring.split("\n")
    at = next(i for i, l in enumerate(lines) if '<gpu id="3"' in l)
    mid = "\n".join(lines[:at] + ["  <!-- the next gpu's ring -->"] + lines[at:])
    variants = {
        "plain": ring,
        "algo and a quote in a comment before the root": "<!-- see <algo's notes -->\n" + mid,
        "algo tag in a comment after the declaration": '<?xml version="1.0"?>\n<!-- old: <algo name="x"> -->\n' + ring,
        "a doctype with an internal subset": '<?xml version="1.0"?>\n<!DOCTYPE algo [ <!ENTITY q "it\'s"> '
                                             '<!-- <algo> --> ]>\n' + mid,
        "a processing instruction naming algo": "<?note <algo x='1'?>\n" + mid,
        "a gpu tag in a comment between gpus": ring.replace('  <gpu id="5"', '  <!-- <gpu id="9"/> -->\n  <gpu id="5"'),
    }
    for what, text in variants.items():
        xml = write(os.path.join(d, "in.xml"), text)
        check("parts (%s): the file is large enough to be cut" % what, os.path.getsize(xml) >= 1 << 20)
        one, four = os.path.join(d, "one"), os.path.join(d, "four")
        p1 = from_msccl(xml, one, "--threads", 1)
        p4 = from_msccl(xml, four, "--threads", 4)
        check("parts (%s): one thread and four agree" % what,
              p1.returncode == 0 and p4.returncode == 0 and same_files(one, four, 64) is None,
              (p1.returncode, p1.stderr, p4.returncode, p4.stderr))


def test_msccl_reads_are_bounded_and_failures_exit_2():
    """Issue 26: /dev/zero grew memory until the limit; issue 20: a missing
    file, a folder, a failed write exited 1; the size limit was given as
    2^64 - 1 where 2^63 - 1 is the real one."""
    d = tmpdir("bounded")
    t = time.time()
    p = from_msccl("/dev/zero", os.path.join(d, "z"))
    check("/dev/zero: refused at once, one line, exit 2",
          p.returncode == 2 and time.time() - t < 10 and len(p.stderr.strip().splitlines()) == 1
          and "/dev/zero: line 1: XML error" in p.stderr, p.stderr)
    big = os.path.join(d, "big.xml")
    with open(big, "wb") as f:
        f.truncate((1 << 30) + 1)
    p = from_msccl(big, os.path.join(d, "z"))
    check("an XML over 1 GiB: refused naming the limit", p.returncode == 2 and
          p.stderr.strip() == "chakra coll from-msccl: %s: more than 1073741824 bytes of XML (from-msccl's limit)"
          % big, p.stderr)
    os.remove(big)
    for what, path in (("missing file", os.path.join(d, "missing.xml")), ("folder", d)):
        p = from_msccl(path, os.path.join(d, "z"))
        check("%s: exit 2, one line" % what, p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr)
    xml = write(os.path.join(d, "r.xml"), msccl_xml.ring_allreduce(4))
    p = subprocess.run("cat %s | %s coll from-msccl /dev/stdin --size 1M -o %s" % (xml, CHAKRA, os.path.join(d, "s")),
                       shell=True, capture_output=True, text=True)
    check("a pipe converts", p.returncode == 0 and os.path.exists(os.path.join(d, "s.3.et")), p.stderr)
    for cmd in (["coll", "from-msccl", xml], ["coll", "gen", "--algo", "ring", "--coll", "allreduce", "--ranks", "4"]):
        p = run(*cmd, "--size", "9223372036854775808", "-o", os.path.join(d, "g"))
        check("%s --size 2^63: the limit is 9223372036854775807" % cmd[1],
              p.returncode == 2 and "expected 0 to 9223372036854775807" in p.stderr, p.stderr)
        p = run(*cmd, "--size", "9223372036854775804", "-o", os.path.join(d, "g"))
        check("%s --size 2^63 - 4 converts" % cmd[1], p.returncode == 0, p.stderr)


# ---- expand -------------------------------------------------------------------

def coll_node(i, ctype, size, deps=(), pg=None):
    n = {"id": str(i), "name": "coll%d" % i, "type": "COMM_COLL_NODE",
         "attr": [{"name": "is_cpu_op", "bool_val": False}, {"name": "comm_type", "int64_val": str(ctype)},
                  {"name": "comm_size", "int64_val": str(size)}]}
    if pg is not None:
        n["attr"].append({"name": "pg_name", "string_val": pg})
    if deps:
        n["data_deps"] = [str(x) for x in deps]
    return n


def comp_node(i, us, deps=(), ops=800, tensor=8000):
    n = {"id": str(i), "name": "matmul%d" % i, "type": "COMP_NODE", "duration_micros": str(us),
         "attr": [{"name": "is_cpu_op", "bool_val": False}, {"name": "num_ops", "int64_val": str(ops)},
                  {"name": "tensor_size", "uint64_val": str(tensor)}]}
    if deps:
        n["data_deps"] = [str(x) for x in deps]
    return n


PLAIN = {"scheduling-policy": "FIFO", "preferred-dataset-splits": 1, "local-mem-bw": 50,
         "collective-optimization": "baseline", "endpoint-delay": 0, "all-reduce-implementation": ["ring"],
         "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
         "all-to-all-implementation": ["direct"]}


def test_expand_microbench_allreduce_equals_the_custom_collective():
    d = tmpdir("xmb")
    mb = microbench(d, "allreduce", 8, "1M")
    out = os.path.join(d, "x")
    p = run("coll", "expand", mb, "-o", out, "--algo", "ring")
    v = run("validate", out)
    check("expand: microbench all-reduce expanded with ring; validate accepts it across ranks",
          p.returncode == 0 and v.returncode == 0, p.stderr + v.stdout[-300:])
    _, prefix = gen(d, "allreduce", "ring", 8, 1048576)
    for model in ("unaware", "aware"):
        p1, custom = sim(mb, custom_system("allreduce", prefix), RING8, model)
        p2, expanded = sim(out, PLAIN, RING8, model)
        check("expanded ring all-reduce = the same algorithm as *-implementation-custom = 90,174 ns (%s)" % model,
              custom == expanded == {r: 90174 for r in range(8)}, (custom, expanded, p2.stderr[-300:]))
    out = os.path.join(d, "hd")
    p = run("coll", "expand", mb, "-o", out, "--algo", "hd")
    _, prefix = gen(d, "allreduce", "hd", 8, 1048576, name="ghd")
    p1, custom = sim(mb, custom_system("allreduce", prefix), RING8)
    p2, expanded = sim(out, PLAIN, RING8)
    check("expanded hd all-reduce = custom = 94,176 ns", custom == expanded == {r: 94176 for r in range(8)},
          (custom, expanded))
    # The double binary tree runs two trees at once: in a workload a send holds
    # the rank's one communication slot until it arrives (simulator.md), in a
    # custom collective it does not, so the expanded form is slower
    # (docs/coll.md, "Simulating expanded collectives").
    out = os.path.join(d, "dbt")
    p = run("coll", "expand", mb, "-o", out, "--algo", "dbt")
    _, prefix = gen(d, "allreduce", "dbt", 8, 1048576, name="gdbt")
    p1, custom = sim(mb, custom_system("allreduce", prefix), RING8)
    p2, expanded = sim(out, PLAIN, RING8)
    check("expanded dbt: custom 220,590 ns on every rank; expanded, with sends serialised per rank, "
          "220,590 to 241,620 ns", custom == {r: 220590 for r in range(8)} and
          expanded == {0: 220590, 1: 230855, 2: 230855, 3: 230855, 4: 231355, 5: 241620, 6: 241620, 7: 241620},
          (custom, expanded))


def test_expand_overlap_allgather_feeding_a_matmul_hand_computed_times():
    # 8-ring, 50 GB/s, 500 ns, 1 MiB per rank: a ring all-gather step is
    # floor(500 + 1048576 / 53.6870912) = 20,031 ns, 7 steps = 140,217 ns;
    # the 80 us matmul after it ends at 220,217 ns. With --overlap it runs in
    # eight 10 us pieces: the local one at once, piece k when step k's receive
    # lands (every 20,031 ns, longer than a piece), the last ends at
    # 140,217 + 10,000, and the join costs 1 ns (a 0 us node): 150,218 ns.
    d = tmpdir("xov")
    w = pack_set(d, "w", [[coll_node(0, 2, 1048576), comp_node(1, 80, deps=[0])] for _ in range(8)])
    p0, orig = sim(w, PLAIN, RING8)
    check("overlap: original workload (native ring all-gather) = 220,217 ns", orig == {r: 220217 for r in range(8)},
          (orig, p0.stderr[-300:]))
    x = os.path.join(d, "x")
    run("coll", "expand", w, "-o", x, "--algo", "allgather=ring")
    p1, exp = sim(x, PLAIN, RING8)
    check("overlap: expanded without --overlap = 220,217 ns", exp == {r: 220217 for r in range(8)}, exp)
    o = os.path.join(d, "o")
    p = run("coll", "expand", w, "-o", o, "--algo", "allgather=ring", "--overlap")
    p2, ov = sim(o, PLAIN, RING8)
    check("overlap: expanded with --overlap = 150,218 ns, 69,999 ns sooner", ov == {r: 150218 for r in range(8)},
          (ov, p.stderr, p2.stderr[-300:]))
    _, nodes = jsonl(o + ".3.et")
    pieces = [n for n in nodes if n["name"].startswith("matmul1/chunk")]
    join = [n for n in nodes if n["name"] == "matmul1"][0]
    check("overlap: 8 pieces of 10 us, 100 ops, 1000 B; the join keeps the id and costs nothing",
          len(pieces) == 8 and all(n["duration_micros"] == "10" and attr(n, "num_ops") == 100 and
                                   attr(n, "tensor_size") == 1000 for n in pieces)
          and join["id"] == "1" and "duration_micros" not in join and len(join["data_deps"]) == 8, pieces)
    v = run("validate", o)
    check("overlap: validate accepts the output", v.returncode == 0, v.stdout[-300:])


def test_expand_overlap_allreduce_and_reducescatter_hand_computed_times():
    # 8-ring, 50 GB/s, 500 ns, an 8 MiB all-reduce expanded with ring and no
    # reduction nodes: 1 MiB blocks, a step is floor(500 + 1048576 / 53.6870912)
    # = 20,031 ns; 7 reduce-scatter steps end at 140,217 ns (the own block is
    # then final), the 7 gather steps at 280,434 ns; the 80 us matmul after it
    # ends at 360,434 ns. With --overlap it runs in eight 10 us pieces (1 MiB
    # of 8 each): the own block's at 140,217, piece k when gather step k's
    # receive lands (every 20,031 ns, longer than a piece); the last ends at
    # 280,434 + 10,000 and the join costs 1 ns: 290,435 ns, 69,999 sooner.
    d = tmpdir("xovar")
    w = pack_set(d, "w", [[coll_node(0, 0, 8 << 20), comp_node(1, 80, deps=[0])] for _ in range(8)])
    times = {}
    for ov in ("", "--overlap"):
        out = os.path.join(d, "x" + ov.strip("-"))
        p = run("coll", "expand", w, "-o", out, "--algo", "allreduce=ring", "--reduce-bw", 0, *([ov] if ov else []))
        p1, times[ov] = sim(out, PLAIN, RING8)
        assert p.returncode == 0, p.stderr
    check("overlap all-reduce: expanded 360,434 ns, with --overlap 290,435 ns",
          times[""] == {r: 360434 for r in range(8)} and times["--overlap"] == {r: 290435 for r in range(8)}, times)
    _, nodes = jsonl(os.path.join(d, "xoverlap.5.et"))
    by_id = {n["id"]: n for n in nodes}
    pieces = [n for n in nodes if n["name"].startswith("matmul1/chunk")]
    local = [n for n in pieces if n["name"] == "matmul1/chunk0"][0]
    own = by_id[local["data_deps"][0]]
    gathers = [by_id[n["data_deps"][0]] for n in pieces if n is not local]
    check("overlap all-reduce: the own piece waits for the last reduce-scatter receive (tag 6), each other piece "
          "for one gather receive (tags 7..13); 8 pieces of 10 us, 100 ops",
          len(local["data_deps"]) == 1 and own["type"] == "COMM_RECV_NODE" and attr(own, "comm_tag") % 65536 == 6
          and sorted(attr(g, "comm_tag") % 65536 for g in gathers) == list(range(7, 14))
          and all(g["type"] == "COMM_RECV_NODE" for g in gathers)
          and all(n["duration_micros"] == "10" and attr(n, "num_ops") == 100 for n in pieces), pieces)
    v = run("validate", os.path.join(d, "xoverlap"))
    check("overlap all-reduce: validate accepts the output", v.returncode == 0, v.stdout[-300:])
    # A reduce-scatter delivers only the own block: its consumer is not split,
    # it waits for the block's last reduction instead of the whole collective.
    w = pack_set(d, "rs", [[coll_node(0, 7, 8 << 20), comp_node(1, 80, deps=[0])] for _ in range(8)])
    out = os.path.join(d, "rso")
    p = run("coll", "expand", w, "-o", out, "--algo", "reducescatter=ring", "--overlap")
    _, nodes = jsonl(out + ".2.et")
    by_id = {n["id"]: n for n in nodes}
    mm = [n for n in nodes if n["name"].startswith("matmul")]
    dep = by_id.get(mm[0].get("data_deps", ["?"])[0]) if len(mm) == 1 else None
    check("overlap reduce-scatter: the consumer stays whole and waits only for the last reduction",
          p.returncode == 0 and dep is not None and len(mm[0]["data_deps"]) == 1 and dep["type"] == "COMP_NODE"
          and dep["name"].startswith("coll0/reduce.") and mm[0]["duration_micros"] == "80", (p.stderr, mm))
    p1, t = sim(out, PLAIN, RING8)
    check("overlap reduce-scatter: it simulates", p1.returncode == 0 and len(t) == 8, p1.stderr[-300:])


def test_expand_costs_reductions_at_the_system_files_local_mem_bw():
    """Issue 20: expand costed reductions at 50 GB/s whatever the system file
    the workload is simulated with said. With --system-configuration, its
    local-mem-bw; --reduce-bw still wins; no local-mem-bw = no cost, as the
    simulator charges."""
    d = tmpdir("xmem")
    mb = microbench(d, "allreduce", 8, "1M")

    def expand(name, *extra):
        out = os.path.join(d, name)
        p = run("coll", "expand", mb, "-o", out, "--algo", "ring", *extra)
        return p, out

    def system(name, **keys):
        conf = dict(PLAIN)
        conf.pop("local-mem-bw", None)
        conf.update(keys)
        return write(os.path.join(d, name), json.dumps(conf))

    fast = system("fast.json", **{"local-mem-bw": 400})
    none = system("none.json")
    p_sys, by_sys = expand("sys", "--system-configuration", fast)
    p_bw, by_bw = expand("bw", "--reduce-bw", "400")
    p_def, by_def = expand("def")
    check("expand --system-configuration (local-mem-bw 400) = --reduce-bw 400, not the default 50",
          p_sys.returncode == 0 and p_bw.returncode == 0 and same_files(by_sys, by_bw, 8) is None
          and same_files(by_sys, by_def, 8) is not None, p_sys.stderr)
    p, both = expand("both", "--system", fast, "--reduce-bw", "50")
    check("--reduce-bw given wins over the system file", p.returncode == 0 and same_files(both, by_def, 8) is None,
          p.stderr)
    p, nobw = expand("nobw", "--system-configuration", none)
    p0, zero = expand("zero", "--reduce-bw", "0")
    check("a system file without local-mem-bw: reductions cost nothing, as in sim",
          p.returncode == 0 and same_files(nobw, zero, 8) is None, p.stderr)
    _, prefix = gen(d, "allreduce", "ring", 8, 1048576, "--reduce-bw", "400", name="g400")
    custom = custom_system("allreduce", prefix)
    custom["local-mem-bw"] = 400
    for model in ("unaware", "aware"):
        _, expanded = sim(by_sys, json.loads(open(fast).read()), RING8, model)
        _, as_custom = sim(mb, custom, RING8, model)
        _, at_50 = sim(by_def, json.loads(open(fast).read()), RING8, model)
        check("expanded with the system file = the ring as a custom collective at 400 GB/s, not at 50 (%s)" % model,
              expanded and expanded == as_custom and expanded != at_50, (expanded, as_custom, at_50))
    bad = write(os.path.join(d, "bad.json"), '{"local-mem-bw": "fast"}')
    p, _ = expand("bad", "--system-configuration", bad)
    check("a bad system file: one line naming it, exit 2",
          p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "bad.json" in p.stderr, p.stderr)


def test_expand_rules_by_size_and_communicator_in_a_multi_group_workload():
    stage = os.path.join(SHARED, "data", "traces", "stage", "gpt_small_tponly_dp2tp4")
    if not os.path.exists(os.path.join(stage, "gpt_small_tponly_dp2tp4.0.et")):
        skip("expand STAGE", "shared data absent")
        return
    d = tmpdir("xst")
    w = os.path.join(stage, "gpt_small_tponly_dp2tp4")
    groups = w + ".json"
    out = os.path.join(d, "x")
    p = run("coll", "expand", w, "-o", out, "--comm-group-configuration", groups,
            "--algo", "allreduce@5=ring", "--algo", "allreduce@6=ring", "--algo", "direct")
    v, c = run("validate", out), run("coll", "check", out)
    s0, got = sim(out, PLAIN, RING8, groups=groups)
    check("STAGE dp2tp4: ring inside [0,2,4,6]/[1,3,5,7], direct elsewhere; validates, checks sound, simulates",
          p.returncode == 0 and v.returncode == 0 and c.returncode == 0 and s0.returncode == 0 and len(got) == 8,
          (p.stderr, v.stdout[-200:], c.stdout[-200:], s0.stderr[-200:]))
    _, orig = jsonl(w + ".0.et")
    ar5 = {n["id"] for n in orig if n["type"] == "COMM_COLL_NODE" and attr(n, "comm_type") == 0
           and attr(n, "pg_name") == "5"}
    _, nodes = jsonl(out + ".0.et")
    ring_peers = {attr(n, "comm_dst") for n in nodes if n["type"] == "COMM_SEND_NODE"
                  and n["name"].split("/")[0][4:] in ar5}
    check("rank 0's all-reduces in group 5 (%d) send only to its ring neighbour 2" % len(ar5),
          ar5 and ring_peers == {2}, ring_peers)
    check("no COMM_COLL node is left", all(n["type"] != "COMM_COLL_NODE" for n in nodes))
    d2 = tmpdir("xsz")
    w = pack_set(d2, "w", [[coll_node(0, 0, 65536), coll_node(1, 0, 1 << 20, deps=[0])] for _ in range(4)])
    p = run("coll", "expand", w, "-o", os.path.join(d2, "x"), "--algo", "allreduce:0-64K=direct", "--algo", "ring")
    _, nodes = jsonl(os.path.join(d2, "x.0.et"))
    small = {attr(n, "comm_dst") for n in nodes if n["name"].startswith("coll0/send")}
    big = {attr(n, "comm_dst") for n in nodes if n["name"].startswith("coll1/send")}
    tags0 = {attr(n, "comm_tag") for n in nodes if n["name"].startswith("coll0/") and n["type"] != "COMP_NODE"}
    tags1 = {attr(n, "comm_tag") for n in nodes if n["name"].startswith("coll1/") and n["type"] != "COMP_NODE"}
    roots = [n for n in nodes if n["name"].startswith("coll1/") and n["type"] == "COMM_SEND_NODE" and
             n["name"].endswith(".0")]
    check("size ranges pick direct for 64 KiB and ring for 1 MiB; tags of the two instances are disjoint",
          p.returncode == 0 and small == {1, 2, 3} and big == {1} and not (tags0 & tags1), (p.stderr, small, big))
    check("the second collective's roots wait on the first one's sinks",
          roots and all(n.get("data_deps") for n in roots), roots)
    p2, got = sim(os.path.join(d2, "x"), PLAIN, RING8.replace("[ 8 ]", "[ 4 ]"))
    check("two expanded collectives in a chain simulate", p2.returncode == 0 and len(got) == 4, p2.stderr[-300:])


def test_expand_algorithm_ets_from_msccl_as_a_prefix():
    d = tmpdir("xpre")
    xml = write(os.path.join(d, "r.xml"), msccl_xml.ring_allreduce(8, True))
    run("coll", "from-msccl", xml, "--size", 4096, "-o", os.path.join(d, "alg"))
    mb = microbench(d, "allreduce", 8, "1M")
    out = os.path.join(d, "x")
    p = run("coll", "expand", mb, "-o", out, "--algo", "allreduce=" + os.path.join(d, "alg"))
    p2, got = sim(out, PLAIN, RING8)
    check("a prefix of algorithm ETs made for 4 KiB is scaled to the collective's 1 MiB: 90,174 ns",
          p.returncode == 0 and got == {r: 90174 for r in range(8)}, (p.stderr, got, p2.stderr[-200:]))


def test_expand_custom_collective_scaling_scale_and_as_is_with_warnings():
    # Issue 20 item 3: ETs made for one size expanding a collective of
    # another, and of another type, are said so once per (ETs, collective,
    # size); scale (the default) scales their messages, as-is keeps them.
    d = tmpdir("xscale")
    _, alg = gen(d, "allgather", "ring", 8, "1M")
    mb = microbench(d, "allgather", 8, "64K")
    head = "chakra coll expand: warning: allgather of 65536 bytes (node 0 of rank 0) expanded with the algorithm %s, " \
           "made for allgather of 1048576 bytes: " % alg
    times = {}
    for mode, bytes_, tail in (("scale", 65536, "it runs scaled by 65536/1048576 (--custom-collective-scaling=scale)"),
                               ("as-is", 1048576, "it runs as made, at 1048576 bytes (--custom-collective-scaling=as-is)")):
        out = os.path.join(d, "x_" + mode)
        p = run("coll", "expand", mb, "-o", out, "--algo", "allgather=" + alg, "--custom-collective-scaling", mode)
        sizes = p.returncode or {attr(n, "comm_size") for n in jsonl(out + ".3.et")[1] if n["type"] == "COMM_SEND_NODE"}
        _, got = sim(out, PLAIN, RING8)
        times[mode] = got
        check("expand --custom-collective-scaling=%s: sends of %d bytes, one warning line" % (mode, bytes_),
              p.returncode == 0 and sizes == {bytes_} and p.stderr == head + tail + "\n", (p.stderr, sizes))
    # 7 ring steps of floor(500 + bytes / 53.687) ns
    check("expanded 64 KiB all-gather: 12,040 ns scaled, 140,217 ns as made",
          times["scale"] == {r: 12040 for r in range(8)} and times["as-is"] == {r: 140217 for r in range(8)}, times)
    _, a2a = gen(d, "alltoall", "direct", 8, "1M", name="a2a")
    ar = microbench(tmpdir("xscale_ar"), "allreduce", 8, "1M")
    p = run("coll", "expand", ar, "-o", os.path.join(d, "x_a2a"), "--algo", "allreduce=" + a2a)
    check("an all-reduce expanded with an all-to-all algorithm: warned, same size, runs as made",
          p.returncode == 0 and p.stderr == "chakra coll expand: warning: allreduce of 1048576 bytes (node 0 of rank 0) "
          "expanded with the algorithm %s, made for alltoall of 1048576 bytes: another collective; it runs as made\n"
          % a2a, p.stderr)
    # ETs that record no size (the reference converter's, from-msccl
    # --compat) are copied as made; two sizes cannot both be theirs
    xml = write(os.path.join(d, "r.xml"), msccl_xml.ring_allreduce(8))
    compat = os.path.join(d, "compat")
    p = run("coll", "from-msccl", xml, "--size", "1M", "--compat", "-o", compat)
    assert p.returncode == 0, p.stderr
    two = pack_set(d, "two", [[coll_node(1, 0, 1048576), coll_node(2, 0, 65536, [1])]] * 8)
    p = run("coll", "expand", two, "-o", os.path.join(d, "x_two"), "--algo", compat)
    sizes = p.returncode or sorted({attr(n, "comm_size") for n in jsonl(os.path.join(d, "x_two.0.et"))[1]
                                    if n["type"] == "COMM_SEND_NODE"})
    check("ETs without a size: expanded as made for both all-reduces, the second size warned about",
          p.returncode == 0 and sizes == [131072] and p.stderr == "chakra coll expand: warning: allreduce of 65536 "
          "bytes (node 2 of rank 0) expanded with the algorithm %s, made for allreduce of a size it does not record "
          "(no \"size\" metadata), and it also runs 1048576 bytes: it runs as made\n" % compat, (p.stderr, sizes))


def test_expand_refuses_bad_rules_and_disagreeing_ranks():
    d = tmpdir("xbad")
    mb = microbench(d, "allreduce", 8, "1M")
    for rule, what in (("allsum=ring", "allsum"), ("allreduce=nosuchprefix", "nosuchprefix"),
                       ("allreduce=tree", None)):
        p = run("coll", "expand", mb, "-o", os.path.join(d, "x"), "--algo", rule)
        ok = p.returncode == 0 if what is None else (p.returncode == 2 and what in p.stderr)
        check("expand --algo %s: %s" % (rule, "accepted" if what is None else "refused, one line"),
              ok and len(p.stderr.strip().splitlines()) <= 1, p.stderr)
    w = pack_set(d, "w", [[coll_node(0, 0, 1024 if r else 2048)] for r in range(4)])
    p = run("coll", "expand", w, "-o", os.path.join(d, "y"), "--algo", "ring")
    check("ranks whose collectives disagree: refused naming file and node, nothing written",
          p.returncode == 2 and "w.1.et" in p.stderr and "node 0" in p.stderr
          and not os.path.exists(os.path.join(d, "y.0.et")), p.stderr)


def test_expand_reads_through_the_trace_set_source():
    """coll expand opens its workload and algorithm prefixes as every command
    does (the trace-set source): a workload with a gap in its ranks is
    refused (it used to expand the ranks before the gap and stop), and the
    workload's groups file beside it is used and named."""
    d = tmpdir("xset")
    mb = microbench(d, "allreduce", 8, "1M")
    os.remove(mb + ".5.et")
    p = run("coll", "expand", mb, "-o", os.path.join(d, "x"), "--algo", "ring")
    check("a workload with a gap: refused naming the missing rank, nothing written",
          p.returncode == 2 and "mb.5.et is missing but 2 later rank file(s) exist" in p.stderr
          and not os.path.exists(os.path.join(d, "x.0.et")), p.stderr)
    alg = gen(d, "allreduce", "ring", "8", "1M")[1]
    os.remove(alg + ".3.et")
    mb2 = microbench(tmpdir("xset2"), "allreduce", 8, "1M")
    p = run("coll", "expand", mb2, "-o", os.path.join(d, "y"), "--algo", "allreduce=" + alg)
    check("algorithm ETs with a gap: refused", p.returncode == 2 and "alg.3.et is missing" in p.stderr, p.stderr)
    w = pack_set(d, "g", [[coll_node(0, 0, 1024, pg="7")] if r < 2 else [] for r in range(4)])
    with open(w + ".json", "w") as f:
        f.write('{"7": [0, 1]}')
    p = run("coll", "expand", w, "-o", os.path.join(d, "z"), "--algo", "ring")
    check("groups beside the workload: used, and named",
          p.returncode == 0 and os.path.exists(os.path.join(d, "z.3.et")) and "communicator groups from %s.json" % w
          in p.stderr, p.stderr)


def test_gen_options_take_both_spellings_aliases_and_give_one_line_errors():
    d = tmpdir("opts")
    p = run("coll", "gen", "--coll=allreduce", "--algo=ring", "--npus=4", "--size=1K", "--chunks=2",
            "--reduce-bw=10", "--out=" + os.path.join(d, "a"))
    check("gen: --k=v spellings and the aliases --npus, --out", p.returncode == 0 and
          os.path.exists(os.path.join(d, "a.3.et")), p.stderr)
    p = run("coll", "gen", "--help")
    check("gen --help is generated from the option table",
          p.returncode == 0 and "--chunks C" in p.stdout and "also --npus" in p.stdout, p.stdout)
    for args, want in ((["--size", "1X"], "chakra coll gen: --size: expected a byte count"),
                       (["--chunks", "0"], "chakra coll gen: --chunks: '0' is out of range"),
                       (["--coll", "allsum"], "chakra coll gen: --coll: expected allreduce"),
                       (["--bogus"], "chakra coll gen: --bogus: unknown option")):
        base = {"--coll": "allreduce", "--algo": "ring", "--ranks": "4", "--size": "1K", "--chunks": "1"}
        base.update(dict(zip(args[::2], args[1::2])) if len(args) == 2 else {})
        argv = [x for kv in base.items() for x in kv] + (args if len(args) == 1 else [])
        p = run("coll", "gen", *argv, "-o", os.path.join(d, "b"))
        check("gen %s: exit 2, one line '%s'" % (" ".join(args), want),
              p.returncode == 2 and p.stderr.startswith(want) and len(p.stderr.strip().splitlines()) == 1, p.stderr)
    p = run("coll", "expand", os.path.join(d, "a"), "-o", os.path.join(d, "x"))
    check("expand without --algo: one line naming it",
          p.returncode == 2 and p.stderr.startswith("chakra coll expand: --algo: required"), p.stderr)


# ---- threads: the files never depend on how many made them -------------------

def same_files(a, b, n):
    for r in range(n):
        with open("%s.%d.et" % (a, r), "rb") as f, open("%s.%d.et" % (b, r), "rb") as g:
            if f.read() != g.read():
                return r
    return None


def test_gen_threads_write_the_same_bytes():
    d = tmpdir("gthr")
    for algo, ranks in (("ring", 96), ("hd", 64), ("direct", 33)):
        outs = [gen(d, "allreduce", algo, ranks, "1M", "--chunks", "3", "--threads", t, name="%s%d" % (algo, t))
                for t in (1, 5)]
        diff = same_files(outs[0][1], outs[1][1], ranks)
        check("gen %s %d ranks: --threads 1 and 5 give identical files" % (algo, ranks),
              all(p.returncode == 0 for p, _ in outs) and diff is None, (outs[0][0].stderr, diff))


def test_msccl_threads_write_the_same_bytes():
    d = tmpdir("mthr")
    xml = write(os.path.join(d, "r.xml"), msccl_xml.ring_allreduce(16, False, 2))
    outs = []
    for t in (1, 5):
        outs.append(os.path.join(d, "t%d" % t))
        p = from_msccl(xml, outs[-1], "--threads", t)
        assert p.returncode == 0, p.stderr
    check("from-msccl 16 ranks, 2 channels: --threads 1 and 5 give identical files", same_files(outs[0], outs[1], 16) is None)


def test_msccl_large_file_parsed_in_parts_gives_the_same_files_and_errors():
    # Files of 1 MiB and more are parsed in parts, one per thread, cut
    # before top-level <gpu> tags; a cut inside a comment or an error in any
    # part falls back to one parse, so files and messages never depend on it.
    d = tmpdir("mparts")
    text = msccl_xml.ring_allreduce(64, False)
    assert len(text) > (1 << 20), len(text)
    mid = text.index('<gpu id="40"')
    # The comment starts on the line holding the middle byte and its
    # "<gpu" lies past the new middle, so the 2-part cut falls inside it.
    at = text.rindex("\n", 0, len(text) // 2) + 1
    pad = " " * (2 * (len(text) // 2 - at) + 64)
    variants = {
        "plain": text,
        "comment": text[:at] + "<!--" + pad + '<gpu id="7"> -->\n' + text[at:],
    }
    outs = {}
    for name, body in variants.items():
        xml = write(os.path.join(d, name + ".xml"), body)
        for t in (1, 2, 8):
            out = os.path.join(d, "%s_t%d" % (name, t))
            p = from_msccl(xml, out, "--threads", t)
            assert p.returncode == 0, p.stderr
            outs[name, t] = out
    for name in variants:
        for t in (2, 8):
            check("from-msccl 64 ranks (%s): --threads %d gives the files of --threads 1" % (name, t),
                  same_files(outs[name, 1], outs[name, t], 64) is None)
    last = text.rindex('type="rrc"')
    bad = write(os.path.join(d, "bad.xml"), text[:last] + 'type="zz"' + text[last + len('type="rrc"'):])
    errs = [from_msccl(bad, os.path.join(d, "bad_t%d" % t), "--threads", t) for t in (1, 2)]
    check("an error in the last part: the same one line (gpu 63, its line) whatever the threads",
          errs[0].returncode == 2 and errs[1].returncode == 2 and errs[0].stderr == errs[1].stderr
          and "gpu 63" in errs[0].stderr, errs[0].stderr + errs[1].stderr)
    broken = write(os.path.join(d, "broken.xml"), text[:mid + 5] + text[mid + 40:])
    errs = [from_msccl(broken, os.path.join(d, "broken_t%d" % t), "--threads", t) for t in (1, 2)]
    line = text[:mid].count("\n") + 1
    check("malformed XML at a cut: the whole-file message with line %d" % line,
          errs[0].returncode == 2 and errs[0].stderr == errs[1].stderr and "line %d" % line in errs[0].stderr,
          errs[0].stderr + errs[1].stderr)


def test_expand_threads_write_the_same_bytes():
    d = tmpdir("xthr")
    mb = microbench(d, "allreduce", 48, "1M")
    outs = []
    for t in (1, 5):
        outs.append(os.path.join(d, "t%d" % t))
        p = run("coll", "expand", mb, "-o", outs[-1], "--algo", "ring", "--threads", t)
        assert p.returncode == 0, p.stderr
    check("expand 48 ranks: --threads 1 and 5 give identical files", same_files(outs[0], outs[1], 48) is None)


def main():
    tests = [(n, f) for n, f in sorted(globals().items()) if n.startswith("test_") and callable(f)]
    for name, f in tests:
        group = name.split("_")[1]
        if group in GROUPS:
            f()
    shutil.rmtree(BASE, ignore_errors=True)
    print("%d passed, %d failed, %d skipped" % (len(PASSED), len(FAILED), len(SKIPPED)))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
